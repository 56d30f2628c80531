"""Parameters of the ``friction_identifier`` node, and the pure helpers that check them (no node
needed: testable on plain dicts).

Parameters (``ros__parameters``; see config/identify_and_render.yaml for a documented example)::

    joint              string  the stage joint, matched by name in joint_states (read-only)
    stage_node         string  the stage's node name (its /diagnostics status), relative names
                               resolve in this node's namespace (read-only)
    amplitude, frequency, warmup, duration, cycles
                       double  the excitation of paper 003 (fric_core.haptics.identification
                               .excitation): A sin(2 pi f t), amplitude ramped up over its
                               first 0.5 s, run `warmup` s, then recorded for `duration` s
                               (0: `cycles` periods)
    center_on_start    bool    centre the excitation on the position where the run starts;
                               false: on `center` (setting `center` alone at start-up implies
                               false)
    center             double  excitation centre [m] when center_on_start is false
    x_min, x_max       double  the stage travel [m]; the run keeps within it shrunk by
    travel_margin      double  this margin [m] (checked before the run and at every state)
    tracking_limit     double  |measured - commanded position| beyond this aborts; 0 = off [m]
    max_saturation     double  fraction of saturated motor cycles between two stage
                               diagnostics reports that aborts (any end-stop cycle aborts)
    move_speed         double  speed of the gentle move to the excitation centre [m/s]
    method             string  eiv | ols: the fit pushed and exported (both are always fitted)
    dv                 double  the band |v| <= dv binned out; 0 = automatic [m/s]
    accel_variance     double  accelerometer noise variance; 0 = the Imu covariance, else
                               estimated from the data [(m/s^2)^2]
    vel_variance       double  velocity noise variance; 0 = estimated from the data [(m/s)^2]
    identify_on_start  bool    run once at start-up (read-only)
    exit_when_done     bool    after that run, exit: 0 on success, 1 on failure (read-only)
    exit_on_failure    bool    exit 1 when that run fails (read-only)
    output_dir         string  report, renderer YAML and recorded CSV go here ("" = no files)
    push_to_renderer   bool    hand the stage over: disable the renderer before the run, push
                               the identified law and output_enabled: true after it
    renderer_node      string  the renderer (relative: in this node's namespace)
    renderer_timeout   double  wait this long for the renderer's parameter service [s]
    render_K, render_B, render_dt, render_mass
                       double  model C's K, B, step and the display's moving mass (0: unknown)
                               for renderer_parameters / the exported YAML
    stage_timeout      double  refuse to start without joint_states within this [s]
    data_timeout       double  abort when no valid joint_states came for this long [s]
    diagnostics_period double  /diagnostics period [s] (read-only)

Read-only to users, written by the node after each fit: ``result.<p>`` and ``result.<p>_std``
for p in m, Cp, bp, Cn, bn, Dp, Dn; ``result.dv``, ``result.method``, ``result.success``,
``result.summary`` (:data:`RESULT_SPECS`).

The excitation figures default to :func:`fric_core.haptics.identification.excitation`'s own
defaults (the paper's 1 cm, 2 Hz; test_contract_layout checks that they agree). The run's
excitation is built by :func:`fric_nodes.builders.check_excitation`.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

from .parameters import ParamSpec

__all__ = ["METHODS", "SPECS", "RESULT_SPECS", "RESULT_PARAMS", "LIVE", "EXCITATION_DEFAULTS",
           "specs", "validate", "travel_band"]

METHODS = ("eiv", "ols")
#: fitted quantities exposed as result.<name> and result.<name>_std
RESULT_PARAMS = ("m", "Cp", "bp", "Cn", "bn", "Dp", "Dn")

#: the defaults of fric_core.haptics.identification.excitation that the parameters take
EXCITATION_DEFAULTS = {"amplitude": 0.01, "frequency": 2.0, "warmup": 10.0}
_EXC = EXCITATION_DEFAULTS

SPECS = (
    ParamSpec("joint", "stage_joint", "the stage joint, matched by name in joint_states",
              read_only=True),
    ParamSpec("stage_node", "haptic_stage", "the stage node whose /diagnostics status (end "
              "stop, saturation) aborts a run; relative names resolve in this node's namespace",
              read_only=True),
    # -- excitation (read at the start of each run)
    ParamSpec("amplitude", float(_EXC["amplitude"]), "excitation amplitude", unit="m",
              min=1e-6, max=1.0),
    ParamSpec("frequency", float(_EXC["frequency"]), "excitation frequency", unit="Hz",
              min=1e-3, max=100.0),
    ParamSpec("warmup", float(_EXC["warmup"]), "excitation run before recording (amplitude "
              "ramped up over its first 0.5 s)", unit="s", min=0.0, max=3600.0),
    ParamSpec("duration", 0.0, "recording length; 0 = `cycles` periods", unit="s", min=0.0,
              max=3600.0),
    ParamSpec("cycles", 4.0, "recorded periods when duration is 0 (paper 003: four cycles at "
              "2 Hz)", min=0.0, max=1e5),
    ParamSpec("center_on_start", True, "centre the excitation on the position where the run "
              "starts; false: on `center`"),
    ParamSpec("center", 0.0, "excitation centre when center_on_start is false", unit="m"),
    ParamSpec("x_min", -0.016, "lower end of the stage travel (paper 003 Table 3: 3.2 cm)",
              unit="m"),
    ParamSpec("x_max", 0.016, "upper end of the stage travel", unit="m"),
    ParamSpec("travel_margin", 0.001, "the run keeps this far inside [x_min, x_max]", unit="m",
              min=0.0),
    ParamSpec("tracking_limit", 0.0, "abort when the measured position is this far from the "
              "last command (a jam); 0 = off. The stage's servo lags a 1 cm, 2 Hz sinusoid by "
              "~2 mm; in realtime a stalled command path (a loaded machine) adds the stall "
              "times the speed (0.1 s: 13 mm), so it suits lockstep and dedicated machines",
              unit="m", min=0.0),
    ParamSpec("max_saturation", 0.1, "abort when the stage's /diagnostics report the motor "
              "saturated in more than this fraction of the cycles between two reports (an "
              "excitation needing more force than the motor has saturates at every peak); a "
              "realtime stage saturates for single cycles when a command comes late (the next "
              "setpoint steps twice as far)", min=0.0, max=1.0),
    ParamSpec("move_speed", 0.01, "speed of the move to the excitation centre", unit="m/s",
              min=1e-4, max=1.0),
    # -- fit
    ParamSpec("method", "eiv", "the fit pushed to the renderer and exported (both eiv, paper "
              "003 eq. 6, and ols, eq. 5, are fitted and reported)", choices=METHODS),
    ParamSpec("dv", 0.0, "the band |v| <= dv binned out of the regression; 0 = automatic",
              unit="m/s", min=0.0),
    ParamSpec("accel_variance", 0.0, "accelerometer noise variance for the EIV correction; 0 = "
              "the accelerometer's Imu covariance, else estimated from the data",
              unit="(m/s^2)^2", min=0.0),
    ParamSpec("vel_variance", 0.0, "velocity noise variance for the EIV correction; 0 = "
              "estimated from the data", unit="(m/s)^2", min=0.0),
    # -- runs and outputs
    ParamSpec("identify_on_start", False, "run an identification at start-up", read_only=True),
    ParamSpec("exit_when_done", False, "exit after the identify_on_start run: status 0 when it "
              "succeeded, 1 when not", read_only=True),
    ParamSpec("exit_on_failure", False, "exit with status 1 when the identify_on_start run "
              "fails (a launch then ends instead of waiting)", read_only=True),
    ParamSpec("output_dir", "out/friction_identifier", "report, renderer YAML and recorded CSV "
              "of each run (overwritten); empty: no files"),
    ParamSpec("push_to_renderer", False, "hand the stage over: output_enabled false on the "
              "renderer before the run, the identified law and output_enabled true after it"),
    ParamSpec("renderer_node", "friction_renderer", "the renderer to hand over to; relative "
              "names resolve in this node's namespace"),
    ParamSpec("renderer_timeout", 2.0, "wait this long for the renderer's parameter service",
              unit="s", min=0.01, max=600.0),
    ParamSpec("render_K", 6000.0, "presliding stiffness pushed with the law (model C)",
              unit="N/m", min=0.0),
    ParamSpec("render_B", 10.0, "presliding damping pushed with the law (model C)",
              unit="N·s/m", min=0.0),
    ParamSpec("render_dt", 0.001, "the renderer's step (its dt), for the exported dv",
              unit="s", min=1e-6, max=1.0),
    ParamSpec("render_mass", 0.0, "moving mass of the display device for the renderer's eq. "
              "(63) check; 0 = unknown (not pushed)", unit="kg", min=0.0),
    ParamSpec("stage_timeout", 2.0, "refuse to start when no joint_states came within this",
              unit="s", min=0.01, max=600.0),
    ParamSpec("data_timeout", 0.5, "abort a run when no valid joint_states came for this long",
              unit="s", min=0.01, max=600.0),
    ParamSpec("diagnostics_period", 1.0, "/diagnostics publication period", unit="s",
              min=0.05, max=60.0, read_only=True),
)

#: the node's outputs: read-only to users (the node rejects outside changes), written after fits
RESULT_SPECS = tuple(
    ParamSpec(f"result.{p}{suffix}", math.nan, f"{what} of the last fit", unit=unit)
    for p, unit in (("m", "kg"), ("Cp", "N"), ("bp", "N·s/m"), ("Cn", "N"), ("bn", "N·s/m"),
                    ("Dp", "N"), ("Dn", "N"))
    for suffix, what in (("", f"identified {p}"), ("_std", f"standard deviation of {p}"))
) + (
    ParamSpec("result.dv", math.nan, "the band |v| <= dv of the last fit", unit="m/s"),
    ParamSpec("result.method", "", "method of the result.* values (eiv | ols)"),
    ParamSpec("result.success", False, "the last run succeeded"),
    ParamSpec("result.summary", "", "one-line outcome of the last run"),
)

#: parameters that may change between runs (read at the start of each run)
LIVE = tuple(s.name for s in SPECS if not s.read_only)


def specs() -> tuple[ParamSpec, ...]:
    return SPECS


def validate(values: Mapping[str, Any]) -> None:
    """Cross-parameter checks the descriptors cannot express; ``ValueError`` naming the field."""
    j = values["joint"]
    if not j or j != j.strip():
        raise ValueError(f"joint: {j!r} is not a usable joint name")
    if not values["stage_node"]:
        raise ValueError("stage_node: empty")
    travel_band(values)
    if values["duration"] == 0.0 and values["cycles"] <= 0.0:
        raise ValueError("cycles: must be > 0 when duration is 0")
    if values["push_to_renderer"] and not values["renderer_node"]:
        raise ValueError("renderer_node: empty, but push_to_renderer is true")
    if not values["render_B"] + values["render_dt"] * values["render_K"] > 0.0:
        raise ValueError("render_B: render_B + render_dt*render_K must be > 0")


def travel_band(values: Mapping[str, Any]) -> tuple[float, float]:
    """``[x_min + travel_margin, x_max − travel_margin]``; ``ValueError`` if empty."""
    lo, hi, margin = values["x_min"], values["x_max"], values["travel_margin"]
    if not lo < hi:
        raise ValueError(f"x_min: must be < x_max, got {lo!r} >= {hi!r}")
    if not lo + margin < hi - margin:
        raise ValueError(f"travel_margin: {margin!r} m leaves no travel in [{lo!r}, {hi!r}] m")
    return lo + margin, hi - margin
