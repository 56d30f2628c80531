"""Parameters of the planar contact of ``friction_renderer``: a device with a planar end effector
(joints x, y and yaw) slides on a virtual surface with the reduced planar LuGre / Elasto-Plastic
model of paper 002 (Waltersson & Karayiannidis, Sec. V: three bristles coupled through the
pre-computed limit surface (31)–(44)), so force and torque are coupled as on a real contact patch: a
patch that slides sideways resists turning less than one at rest (the limit surface), and a stuck
patch holds force and torque together.

Parameters (``ros__parameters``, nested under ``planar`` in YAML)::

    planar.joints         string[]  [x, y, yaw] joints of the end effector (all in ``joints``);
                                    [] = no planar contact (read-only)
    planar.surface        string    circle | square | line | gradient_line | non_convex_1 |
                                    non_convex_2: the pressure distribution of the patch
    planar.size           double    side of the square the patch is drawn in [m]
    planar.cells          int       N: the patch is sampled on N x N cells (>= 2)
    planar.ls_resolution  int       resolution of the pre-computed limit surface (>= 2)
                                    (the four geometry parameters are read-only: they fix
                                    the pre-computed limit surface, 0.02 s at 21 cells and
                                    ls 20 but seconds at 101 and 60, work that must not run
                                    inside the 1 kHz loop's parameter callback)
    planar.normal_force   double    f_N pressing the patch on the surface [N] (>= 0; live, no
                                    reset: 0 gives zero friction)
    planar.mu_c, .mu_s, .v_s, .gamma   Coulomb and static coefficients, Stribeck velocity and
                                    exponent of g(v) (2)
    planar.sigma0, .sigma1, .sigma2    bristle stiffness [1/m], damping [s/m] and viscosity
                                    [s/m] per unit normal load (Table I's units)
    planar.s_ba           double    Elasto-Plastic break-away ratio (15)–(18)
    planar.elasto_plastic bool      the Elasto-Plastic form (34) (default): no drift under
                                    sub-breakaway oscillating loads, where plain LuGre creeps
    planar.mass, .inertia double    moving mass [kg] and yaw inertia [kg m²] of the end effector;
                                    > 0 enables the stability check of the rendered bristle
                                    stiffness at dt (eq. (63) of paper 000 with K = σ0 f_N,
                                    B = (σ1 + σ2) f_N; for yaw K and B times r², r the patch's
                                    limit-surface radius (25))

Frames: the joints' velocities are the end effector's twist in the world (ẋ, ẏ, θ̇); the patch
is fixed to the end effector with its grid axes along the end effector's x, y at yaw θ, and the
joint origin at the grid's centre (:class:`fric_core.planar.contact.PlanarContact`, built by
:func:`fric_nodes.builders.build_planar`).

Table I's σ0 = 10⁶ 1/m is a stiffness of σ0 f_N = 10⁷ N/m at 10 N: right for simulating a real
contact, far beyond what a haptic device renders stably at 1 kHz. The defaults here are a
rendering design (σ0 f_N = 4000 N/m at the default 10 N, critically damped on a 1 kg end
effector) and the design check rejects unstable settings like the per-joint elements'.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from .parameters import ParamSpec, check

__all__ = ["PLANAR_SPECS", "SURFACES", "LIVE_KEYS", "planar_values"]

#: the contact surfaces by name (:data:`fric_core.planar.surfaces.SURFACES` builds them)
SURFACES = ("circle", "square", "line", "gradient_line", "non_convex_1", "non_convex_2")

PLANAR_SPECS = (
    ParamSpec("planar.joints", [], "x, y and yaw joints of a planar end effector rendered as one "
              "planar contact (paper 002 reduced model); [] = none", read_only=True,
              list_of=str),
    ParamSpec("planar.surface", "circle", "pressure distribution of the contact patch",
              choices=SURFACES, read_only=True),
    ParamSpec("planar.size", 0.04, "side of the square the patch is drawn in", unit="m",
              min=1e-4, max=10.0, read_only=True),
    ParamSpec("planar.cells", 21, "N: the patch is sampled on N x N cells", min=2, max=101,
              read_only=True),
    ParamSpec("planar.ls_resolution", 20, "resolution of the pre-computed limit surface",
              min=2, max=60, read_only=True),
    ParamSpec("planar.normal_force", 10.0, "normal force on the patch (live, keeps the "
              "bristle state; 0 = no friction)", unit="N", min=0.0),
    ParamSpec("planar.mu_c", 0.5, "Coulomb coefficient", min=1e-6),
    ParamSpec("planar.mu_s", 0.6, "static coefficient (>= mu_c)", min=1e-6),
    ParamSpec("planar.v_s", 0.005, "Stribeck velocity", unit="m/s", min=1e-9),
    ParamSpec("planar.gamma", 2.0, "Stribeck exponent", min=1e-3),
    ParamSpec("planar.sigma0", 400.0, "bristle stiffness per unit normal load", unit="1/m",
              min=1e-9),
    ParamSpec("planar.sigma1", 12.0, "bristle damping per unit normal load", unit="s/m",
              min=0.0),
    ParamSpec("planar.sigma2", 0.0, "viscous coefficient per unit normal load", unit="s/m",
              min=0.0),
    ParamSpec("planar.s_ba", 0.9, "Elasto-Plastic break-away ratio (< 1)", min=0.0, max=0.999),
    ParamSpec("planar.elasto_plastic", True, "Elasto-Plastic form (34): no drift in stiction"),
    ParamSpec("planar.mass", 0.0, "moving mass of the end effector (0 = unknown: no check)",
              unit="kg", min=0.0),
    ParamSpec("planar.inertia", 0.0, "yaw inertia of the end effector (0 = unknown: no check)",
              unit="kg m^2", min=0.0),
)
#: parameters applied live without rebuilding the contact
LIVE_KEYS = ("planar.normal_force",)


_SPECS = {s.name: s for s in PLANAR_SPECS}


def _type_problem(spec: ParamSpec, value: Any) -> str | None:
    """Why ``value`` has the wrong type for ``spec`` (None if it has the right one)."""
    d = spec.default
    if isinstance(d, bool):
        ok, want = isinstance(value, (bool, np.bool_)), "a boolean"
    elif isinstance(d, int):
        ok, want = (isinstance(value, (int, np.integer)) and not isinstance(value, bool)), \
            "an integer"
    elif isinstance(d, float):
        ok, want = (isinstance(value, (int, float, np.integer, np.floating))
                    and not isinstance(value, bool)), "a number"
    elif isinstance(d, str):
        ok, want = isinstance(value, str), "a string"
        if not ok and spec.choices:
            return f"expected a string, one of {list(spec.choices)}; got {value!r}"
    else:                                              # planar.joints: a list of names
        ok, want = (isinstance(value, (list, tuple))
                    and all(isinstance(v, str) for v in value)), "a list of strings"
    return None if ok else f"expected {want}, got {value!r}"


def planar_values(values: Mapping[str, Any]) -> dict[str, Any]:
    """The ``planar.*`` entries of ``values``, each checked against its declaration (type, range,
    accepted names), with the declared default for an omitted one: the same answers a direct
    caller of :func:`fric_nodes.builders.build_planar` gets as the node's parameter declarations
    give. ``ValueError`` naming the parameter (and the accepted names for an unknown name)."""
    unknown = sorted(k for k in values if isinstance(k, str) and k.startswith("planar.")
                     and k not in _SPECS)
    if unknown:
        raise ValueError(f"{unknown[0]}: unknown planar parameter; accepted: {list(_SPECS)}")
    out = {}
    for name, spec in _SPECS.items():
        v = values.get(name, spec.default)
        reason = _type_problem(spec, v) or check(spec, v)
        if reason:
            raise ValueError(f"{name}: {reason}")
        out[name] = v
    return out
