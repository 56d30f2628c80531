"""The planar contact of ``friction_renderer``: a device with a planar end effector (joints x, y
and yaw) slides on a virtual surface with the reduced planar LuGre / Elasto-Plastic model of
paper 002 (Waltersson & Karayiannidis, Sec. V: three bristles coupled through the pre-computed
limit surface (31)–(44)), so force and torque are coupled as on a real contact patch: a patch
that slides sideways resists turning less than one at rest (the limit surface), and a stuck
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
joint origin at the grid's centre. The twist is turned into the patch frame and moved to the
CoP (:func:`fric_core.planar.twist_to_cop`), the model's wrench is moved back to the origin and
turned to world axes: the efforts on the x, y, yaw joints.

Table I's σ0 = 10⁶ 1/m is a stiffness of σ0 f_N = 10⁷ N/m at 10 N: right for simulating a real
contact, far beyond what a haptic device renders stably at 1 kHz. The defaults here are a
rendering design (σ0 f_N = 4000 N/m at the default 10 N, critically damped on a 1 kg end
effector) and the design check rejects unstable settings like the per-joint elements'.
"""

from __future__ import annotations

import functools
import math
from typing import Any, Mapping, Sequence

import numpy as np

from fric_core.design import static_convergence
from fric_core.planar import (LimitSurfaceTable, PlanarFrictionParams, ReducedLuGre, circle,
                              gradient_line, line, non_convex_1, non_convex_2, square,
                              twist_to_cop, wrench_from_cop)

from .parameters import ParamSpec, check

__all__ = ["PLANAR_SPECS", "SURFACES", "PlanarContact", "build_planar", "planar_problems",
           "planar_values"]

#: surface name -> constructor ``f(n_cells, size, normal_force)`` of fric_core.planar
SURFACES = {"circle": circle, "square": square, "line": line, "gradient_line": gradient_line,
            "non_convex_1": non_convex_1, "non_convex_2": non_convex_2}

PLANAR_SPECS = (
    ParamSpec("planar.joints", [], "x, y and yaw joints of a planar end effector rendered as one "
              "planar contact (paper 002 reduced model); [] = none", read_only=True,
              list_of=str),
    ParamSpec("planar.surface", "circle", "pressure distribution of the contact patch",
              choices=tuple(SURFACES), read_only=True),
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
    caller of :func:`build_planar` gets as the node's parameter declarations give. ``ValueError``
    naming the parameter (and the accepted names for an unknown name)."""
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


def patch_geometry(surface: str, cells: int, size: float, ls_resolution: int):
    """The unit-load contact surface and its pre-computed limit surface (35)–(44) for a patch
    geometry, computed once per geometry: retuning the friction coefficients or the per-joint
    elements rebuilds the contact without recomputing the table (both are only read).
    ``ValueError`` naming ``planar.surface`` and the accepted names for an unknown surface."""
    if not isinstance(surface, str) or surface not in SURFACES:
        raise ValueError(f"planar.surface: {surface!r} is not one of {list(SURFACES)}")
    return _patch_geometry(surface, int(cells), float(size), int(ls_resolution))


@functools.lru_cache(maxsize=4)
def _patch_geometry(surface: str, cells: int, size: float, ls_resolution: int):
    try:
        patch = SURFACES[surface](cells, size, 1.0)
    except ValueError as e:
        raise ValueError(f"planar.{e}") from None
    return patch, LimitSurfaceTable.compute(patch, n_ls=ls_resolution)


def _friction_params(values: Mapping[str, Any]) -> PlanarFrictionParams:
    try:
        return PlanarFrictionParams(
            sigma0=values["planar.sigma0"], sigma1=values["planar.sigma1"],
            sigma2=values["planar.sigma2"], mu_c=values["planar.mu_c"],
            mu_s=values["planar.mu_s"], gamma=values["planar.gamma"], v_s=values["planar.v_s"],
            s_ba=values["planar.s_ba"])
    except ValueError as e:
        raise ValueError(f"planar.{e}") from None


def planar_problems(values: Mapping[str, Any], dt: float, radius: float) -> list[str]:
    """Why the rendered bristles would not settle on the end effector at ``dt`` (eq. (63) of
    paper 000 on the translational and the yaw channel), for a known mass / inertia."""
    fn = float(values["planar.normal_force"])
    k = float(values["planar.sigma0"]) * fn
    b = (float(values["planar.sigma1"]) + float(values["planar.sigma2"])) * fn
    problems = []
    for what, m, scale in (("mass", values["planar.mass"], 1.0),
                           ("inertia", values["planar.inertia"], radius * radius)):
        if m > 0.0 and k > 0.0:
            sc = static_convergence(float(m), k * scale, b * scale, dt)
            if not sc.converges:
                problems.append(
                    f"planar.sigma0: the bristle stiffness sigma0*f_N = {k:g} on the end "
                    f"effector's {what} {m:g} diverges at dt = {dt:g} ({sc}); lower sigma0 or "
                    "normal_force, or raise sigma1")
    return problems


class PlanarContact:
    """One planar contact on three joints (x, y, yaw): ``step(v, q) -> f``.

    ``v``, ``q``: the three joints' velocities and positions (only the yaw position is used);
    returns the friction on the device as efforts (f_x, f_y, τ) in world axes, in a buffer
    reused by the next call. ``stuck``: the last step's patch speed at the CoP (the rim speed
    included) was below 10⁻³ of v_s (the bristles hold).
    """

    def __init__(self, values: Mapping[str, Any], joint_index: Sequence[int], dt: float):
        self.index = np.asarray(joint_index, dtype=np.intp)
        params = _friction_params(values)
        surface, self.table = patch_geometry(
            values["planar.surface"], int(values["planar.cells"]), float(values["planar.size"]),
            int(values["planar.ls_resolution"]))
        self.surface = surface
        self.model = ReducedLuGre(self.table, params, dt=dt,
                                  normal_force=float(values["planar.normal_force"]),
                                  elasto_plastic=bool(values["planar.elasto_plastic"]))
        cop = np.asarray(surface.cop, dtype=float)[:2]
        self._offset = bool(np.abs(cop).max() > 1e-9 * surface.size)  # CoP off the origin
        self.cop = cop if self._offset else np.zeros(2)
        self._v_stuck = 1e-3 * params.v_s
        self._out = np.zeros(3)
        self._twist = np.zeros(3)
        self.stuck = True

    @property
    def radius(self) -> float:
        return float(self.table.radius)

    def set_normal_force(self, normal_force: float) -> None:
        self.model.set_normal_force(normal_force)

    def reset(self) -> None:
        self.model.reset()
        self._out[:] = 0.0
        self.stuck = True

    def step(self, v: np.ndarray, q: np.ndarray) -> np.ndarray:
        c, s = math.cos(q[2]), math.sin(q[2])
        vx, vy, w = float(v[0]), float(v[1]), float(v[2])
        t = self._twist
        t[0], t[1], t[2] = c * vx + s * vy, -s * vx + c * vy, w       # world -> patch axes
        if self._offset:
            t = twist_to_cop(t, np.zeros(2), self.cop)
        r = self.radius
        self.stuck = math.sqrt(t[0] * t[0] + t[1] * t[1] + (r * t[2]) ** 2) < self._v_stuck
        f = self.model.step(t)
        if self._offset:
            f = wrench_from_cop(f, self.cop, np.zeros(2))
        out = self._out
        out[0], out[1], out[2] = c * f[0] - s * f[1], s * f[0] + c * f[1], f[2]  # patch -> world
        return out


def build_planar(values: Mapping[str, Any], joints: Sequence[str], dt: float, *,
                 impedance: bool = True) -> tuple[PlanarContact | None, list[str]]:
    """The planar contact of the parameter values (None when ``planar.joints`` is empty) and its
    design problems; ``ValueError`` naming the parameter for bad values (wrong type, out of
    range, an unknown surface or parameter name: :func:`planar_values`)."""
    values = planar_values(values)
    pj = list(values["planar.joints"])
    if not pj:
        return None, []
    if not impedance:
        raise ValueError("planar.joints: a planar contact is rendered in impedance mode only "
                         "(velocities in, efforts out)")
    if len(pj) != 3 or len(set(pj)) != 3:
        raise ValueError(f"planar.joints: expected three different joints [x, y, yaw], got {pj}")
    missing = [j for j in pj if j not in joints]
    if missing:
        raise ValueError(f"planar.joints: {missing} not in joints {list(joints)}")
    if values["planar.mu_s"] < values["planar.mu_c"]:
        raise ValueError("planar.mu_s: must be >= planar.mu_c")
    contact = PlanarContact(values, [list(joints).index(j) for j in pj], dt)
    return contact, planar_problems(values, dt, contact.radius)
