"""Parameters of the ``haptic_stage`` node, and the pure helpers that turn parameter values into
the simulated stage (no node needed: testable on plain dicts).

Parameters (``ros__parameters``; see config/haptic_stage.yaml for a documented example)::

    backend            string  sim | serial (read-only)
    joint_name         string  name of the joint in joint_states (read-only)
    rate               double  servo cycle rate = joint_states rate [Hz] (read-only)
    sync               string  realtime | lockstep (read-only; lockstep: sim only)
    lockstep_timeout   double  lockstep: no command this long after a state -> step anyway [s]
    lockstep_wait      double  lockstep: wait this long at start for a controller [s] (read-only)
    lockstep_listeners int     lockstep: also wait for this many other joint_states subscribers
    duration           double  stage time after which the node exits 0; 0 = forever [s] (read-only)
    command_timeout    double  no valid command this long -> zero force [s]
    marker_frame, marker_rate, marker_offset, diagnostics_period    display
    publish_accelerometer  bool  publish the accelerometer on ``accelerometer`` (read-only)
    hand_start     string  immediately | first_command: the hand script (sim) and the
                           duration count start at the first valid command (read-only)
    sim backend:   seed, sample, handle, hand_script, hand_location,
                   carriage_friction, sim_dt, carriage_mass, max_force, x_min, x_max,
                   force_noise, accel_noise, kp, kd
    serial backend: port, baud, read_timeout, reconnect_period,
                   plausible_position_margin, plausible_velocity, plausible_force,
                   plausible_acceleration (a CRC-valid state frame beyond them is rejected;
                   position: [x_min - margin, x_max + margin])
    scheduling:    thread_priority (SCHED_FIFO 1-99, 0 off), cpu_affinity (read-only)
    autostart      bool    managed node: configure and activate at start-up (default true);
                           false: wait unconfigured for ``ros2 lifecycle set`` (read-only)

The sim figures default to :class:`fric_core.haptics.stage.HapticStageSim`'s own defaults (paper
003's apparatus; test_contract_layout checks that they agree); the stage is built by
:func:`fric_nodes.builders.build_sim`.
"""

from __future__ import annotations

from typing import Any, Mapping

from .parameters import LIFECYCLE_SPECS, SCHEDULING_SPECS, ParamSpec

__all__ = ["BACKENDS", "SYNCS", "SAMPLE_CHOICES", "HAND_LOCATIONS", "HAND_STARTS", "SIM_FIGURES",
           "SIM_DEFAULTS", "SPECS", "specs", "validate", "cycle_steps"]

BACKENDS = ("sim", "serial")
SYNCS = ("realtime", "lockstep")
#: "none", then the sample blocks of fric_core.haptics.stage.SAMPLES (paper 003's Table 2)
SAMPLE_CHOICES = ("none", "brass", "rubber", "teflon")
HAND_LOCATIONS = ("carriage", "tool")
#: when the scripted hand's clock starts: at stage time 0, or at the first valid command
HAND_STARTS = ("immediately", "first_command")

#: HapticStageSim's defaults of the parameters below (paper 003's apparatus)
SIM_DEFAULTS = {"dt": 0.001, "carriage_mass": 0.692, "max_force": 9.48, "x_min": -0.016,
                "x_max": 0.016, "force_noise": 0.062, "accel_noise": 0.2379, "kp": 8000.0,
                "kd": 100.0}
_SIM_DEFAULTS = SIM_DEFAULTS

#: HapticStageSim figures exposed as parameters: (name, description, unit, min)
SIM_FIGURES = (
    ("carriage_mass", "carriage (motor, slide, transmission) equivalent mass", "kg", 1e-6),
    ("max_force", "motor force limit (commands beyond it are clipped and flagged)", "N", 1e-6),
    ("x_min", "lower end stop (carriage travel; both backends: position setpoints outside "
     "[x_min, x_max] are rejected, serial state frames are checked against it)", "m", None),
    ("x_max", "upper end stop (carriage travel; see x_min)", "m", None),
    ("force_noise", "load-cell noise (std)", "N", 0.0),
    ("accel_noise", "accelerometer noise (std)", "m/s^2", 0.0),
    ("kp", "position servo stiffness", "N/m", 0.0),
    ("kd", "position servo damping", "N·s/m", 0.0),
)

SPECS = (
    ParamSpec("backend", "sim", "sim: the simulated stage (fric_core.haptics.stage); serial: a "
              "device on a serial port (docs/serial_protocol.md)", read_only=True,
              choices=BACKENDS),
    ParamSpec("joint_name", "stage_joint", "joint name in joint_states", read_only=True),
    ParamSpec("rate", 1000.0, "servo cycle rate: one joint_states/wrench message per cycle; "
              "sim: a whole number of sim_dt steps per cycle; serial: the device's frame rate "
              "(for diagnostics)", unit="Hz", min=1.0, max=20000.0, read_only=True),
    ParamSpec("sync", "realtime", "realtime: cycles on a wall-clock timer; lockstep (sim only): "
              "publish a state, wait for the next command, step with it, publish the next",
              read_only=True, choices=SYNCS),
    ParamSpec("lockstep_timeout", 0.5, "lockstep: no command this long after a state -> step "
              "with the last command anyway (counted)", unit="s", min=1e-3, max=3600.0),
    ParamSpec("lockstep_wait", 10.0, "lockstep: at start, wait this long for a controller (a "
              "joint_states subscriber and a command publisher) before starting without one",
              unit="s", min=0.0, max=3600.0, read_only=True),
    ParamSpec("lockstep_listeners", 0, "lockstep: at start, also wait (up to lockstep_wait) until "
              "this many nodes besides the controller subscribe to joint_states (a recorder: 1), "
              "so the run's first states are not lost to a slow-starting listener", min=0,
              max=100, read_only=True),
    ParamSpec("duration", 0.0, "stage time after which the node publishes a last state and exits "
              "0; 0 = run until shut down", unit="s", min=0.0, read_only=True),
    ParamSpec("command_timeout", 0.1, "a command older than this is dropped: zero motor force "
              "(lockstep: measured in stage time)", unit="s", min=1e-4, max=3600.0),
    ParamSpec("marker_frame", "world", "frame of the ~/markers", read_only=True,
              frame_id=True),
    ParamSpec("marker_rate", 20.0, "~/markers publication rate", unit="Hz", min=0.1, max=100.0,
              read_only=True),
    ParamSpec("marker_offset", [0.0, 0.0, 0.0], "[x, y, z] where the stage is drawn in "
              "marker_frame (added to every marker): two stages side by side in one RViz view",
              unit="m", min=-100.0, max=100.0, read_only=True, length=3),
    ParamSpec("diagnostics_period", 1.0, "/diagnostics publication period", unit="s", min=0.05,
              max=60.0, read_only=True),
    ParamSpec("publish_accelerometer", True, "publish the accelerometer every cycle on "
              "accelerometer (sensor_msgs/Imu, linear_acceleration.x along +x, the stamp of "
              "joint_states)", read_only=True),
    # -- sim backend
    ParamSpec("seed", 0, "sensor noise seed (sim)", min=0, read_only=True),
    ParamSpec("sample", "none", "sample block beyond the load cell, sliding with paper 003's "
              "Table 2 friction (sim)", read_only=True, choices=SAMPLE_CHOICES),
    ParamSpec("handle", False, "a frictionless handle beyond the load cell (sim; implied by "
              "hand_location tool)", read_only=True),
    ParamSpec("hand_script", "", "operator hand force profile 'duration:force[:ramp], ...' "
              "(N, s; OperatorHand.parse); empty = no hand (sim)", read_only=True),
    ParamSpec("hand_location", "carriage", "where the hand pushes: the carriage, or the tool "
              "side beyond the load cell (then the load cell measures it) (sim)",
              read_only=True, choices=HAND_LOCATIONS),
    ParamSpec("hand_start", "immediately", "when the hand script's clock starts: immediately "
              "(stage time 0), or first_command: at the first valid command the stage receives, "
              "so the operator only pushes once a controller renders; a duration > 0 then "
              "counts from that moment too (serial: the duration only; the device runs its "
              "own hand)", read_only=True, choices=HAND_STARTS),
    ParamSpec("carriage_friction", True, "the carriage's own friction (paper 003 Table 3); "
              "false: frictionless carriage (sim)", read_only=True),
    ParamSpec("sim_dt", float(_SIM_DEFAULTS["dt"]), "physics step (sim): 1/rate must be a whole "
              "number of steps, so a slower rate keeps the same physics", unit="s", min=1e-6,
              max=0.1, read_only=True),
) + tuple(ParamSpec(name, float(_SIM_DEFAULTS[name]),
                    text if name in ("x_min", "x_max") else f"{text} (sim)", unit=unit, min=lo,
                    read_only=True) for name, text, unit, lo in SIM_FIGURES) + (
    # -- serial backend
    ParamSpec("port", "/tmp/fric_stage", "serial device (serial backend), e.g. /dev/ttyACM0 or "
              "the emulator's --link", read_only=True),
    ParamSpec("baud", 921600, "baud rate (serial; >= 400000 for 1 kHz state frames)", min=1,
              read_only=True),
    ParamSpec("read_timeout", 0.02, "no valid state frame this long: link down (serial)",
              unit="s", min=1e-3, max=10.0, read_only=True),
    ParamSpec("reconnect_period", 0.5, "retry period for opening a missing/failed port (serial)",
              unit="s", min=0.01, max=60.0, read_only=True),
    # plausibility of CRC-valid state frames (serial): beyond these a frame is rejected as a
    # value error (counted, logged, diagnostics), never published
    ParamSpec("plausible_position_margin", 0.005, "a state frame's position must lie within "
              "[x_min - margin, x_max + margin] (the end stops' bumpers give way by micrometres) "
              "(serial)", unit="m", min=0.0, max=1.0, read_only=True),
    ParamSpec("plausible_velocity", 5.0, "bound on a state frame's |velocity| (max_force over "
              "the 3.2 cm travel reaches < 1 m/s) (serial)", unit="m/s", min=1e-3, max=1e3,
              read_only=True),
    ParamSpec("plausible_force", 100.0, "bound on a state frame's |force| and |motor_force| "
              "(the 44.8 N load cell, the 9.48 N motor) (serial)", unit="N", min=1e-3, max=1e6,
              read_only=True),
    ParamSpec("plausible_acceleration", 1000.0, "bound on a state frame's |acceleration| (the "
              "±50 g accelerometer reads up to 490 m/s^2) (serial)", unit="m/s^2", min=1e-3,
              max=1e6, read_only=True),
) + SCHEDULING_SPECS + LIFECYCLE_SPECS


def specs() -> tuple[ParamSpec, ...]:
    return SPECS


def cycle_steps(rate: float, sim_dt: float) -> int:
    """Physics steps per servo cycle; ``ValueError`` unless 1/rate is a whole number of them."""
    n = round(1.0 / (rate * sim_dt))
    if n < 1 or abs(n * sim_dt * rate - 1.0) > 1e-9:
        raise ValueError(f"rate: 1/rate must be a whole number of sim_dt={sim_dt:g} s physics "
                         f"steps, got rate {rate:g} Hz")
    return n


def validate(values: Mapping[str, Any]) -> None:
    """Cross-parameter checks the descriptors cannot express; ``ValueError`` on failure."""
    if values["sync"] == "lockstep" and values["backend"] != "sim":
        raise ValueError("sync: lockstep needs backend sim (a serial device runs on its own "
                         "clock)")
    j = values["joint_name"]
    if not j or j != j.strip():
        raise ValueError(f"joint_name: {j!r} is not a usable joint name")
    if not values["x_min"] < values["x_max"]:
        raise ValueError(f"x_min: must be < x_max, got {values['x_min']!r} >= "
                         f"{values['x_max']!r}")
    if values["backend"] == "sim":
        cycle_steps(values["rate"], values["sim_dt"])
        _check_hand(values)
    elif not values["port"]:
        raise ValueError("port: a serial device path is needed with backend serial")


def _check_hand(values: Mapping[str, Any]) -> None:
    """``ValueError`` naming ``hand_script`` unless the script parses (the grammar is the core's
    :meth:`fric_core.haptics.stage.OperatorHand.parse`, imported only here)."""
    script = values["hand_script"].strip()
    if script:
        from fric_core.haptics.stage import OperatorHand
        try:
            OperatorHand.parse(script, location=values["hand_location"])
        except ValueError as e:
            raise ValueError(f"hand_script: {e}") from None
