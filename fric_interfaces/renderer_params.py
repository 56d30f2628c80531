"""Parameters of the ``friction_renderer`` node, and the pure helpers that turn parameter values
into the friction elements it renders (no node needed: testable on plain dicts).

Parameters (``ros__parameters``; per-joint ones are nested under the joint name in YAML)::

    joints               string[]  the joints to render, matched by NAME in joint_states (read-only)
    mode                 string    impedance | admittance (read-only)
    element              string    auto | massless_impedance (C) | inertial_impedance (B)
                                   | rigid_admittance (A) | compliant_admittance (D) (read-only);
                                   auto = C for impedance, A for admittance (paper 000, Sec. IV-D)
    dt                   double    element step = expected input period [s] (read-only)
    max_effort           double    output saturation [N or N·m] (> 0)
    max_velocity         double    impedance: |velocity| above this is an implausible input,
                                   rejected like NaN (default 10 m/s or rad/s)
    max_position         double    |position| above this is an implausible input (default 1000)
    max_force            double    admittance: |force| above this is an implausible input,
                                   rejected like NaN (default 1000 N or N·m)
    watchdog_timeout     double    silence/invalid input longer than this -> safe output [s]
    admittance_input     string    wrench | joint_effort (read-only)
    wrench_axis          string    x | y | z: WrenchStamped force axis of a 1-DOF stage (read-only)
    design_check         string    reject | warn: what a failed design check does
    output_enabled       bool      publish commands (default true; live): the hand-over switch
    thread_priority      int       SCHED_FIFO priority 1-99 of the process, 0 = normal (read-only)
    cpu_affinity         int[]     CPUs the process runs on, empty = all (read-only)
    marker_frame, marker_scale, marker_rate, diagnostics_period   display
    <joint>.law          string    coulomb | coulomb_viscous | stribeck | asymmetric
    <joint>.F .D .Fc .Fs .vs .delta .Cp .Cn .bp .bn .Dp .Dn .dv   law parameters (fric_core.laws)
    <joint>.K .B .M      double    element parameters (presliding stiffness, damping, virtual mass)
    <joint>.mass         double    moving mass of the device at this joint, 0 = unknown; with model
                                   C it enables the static-friction stability check, eq. (63)
    planar.*                       a planar contact on three of the joints (x, y, yaw of a planar
                                   end effector): :mod:`fric_interfaces.planar_params`; those
                                   joints have no per-joint law

``output_enabled`` (live) hands the device over to another controller and back, e.g. to
``friction_identifier`` while it drives the stage, so two controllers never command one device:

* ``false`` — nothing is published on the command topic (no safe output, no watchdog output, no
  final command at shutdown); inputs are still read, checked and counted, the watchdog and the
  diagnostics keep running (message "output disabled"); the element is reset and not stepped.
* ``true`` again — rendering resumes from rest: impedance from the next valid input; admittance
  from the measured position, like after a watchdog trip.

It can be set together with new law parameters in one ``set_parameters_atomically`` call (the
new law is then rendered from the first command on).

Only the parameters of the selected law and element are used; all are declared so that
``ros2 param list`` shows them and a live change of ``<joint>.law`` finds its parameters.

Elements: :func:`build_bank` validates every joint by building its law and element (a
``ValueError`` names the parameter, e.g. ``stage_joint.vs: must be > 0``) and runs the paper's
design checks (:func:`design_problems`). The joints are then carried by an :class:`ElementBank`:
one scalar element per joint, or, for large groups of joints sharing a law, one per-joint
vectorised element per law. The choice is by measurement (timeit on this 2-core machine, one
model-C step of all n joints; model A is within 10 %)::

    law          scalar elements, n joints     vectorised element (flat in n)
    coulomb      0.4 us * n  (+0.2)            10 us    -> crossover n ~ 28
    stribeck     0.6 us * n                    14 us    -> crossover n ~ 22
    asymmetric   0.5 us * n                    36 us    -> crossover n ~ 70

so a law group is vectorised only from :data:`VECTOR_MIN_JOINTS` joints on: every real haptic
device and robot arm runs on plain-float scalar elements, 18-50x cheaper than numpy for n = 1.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from fric_core.design import (FrictionDesignWarning, law_validity, static_advice,
                               static_convergence)
from fric_core.elements import (CompliantAdmittance, InertialImpedance, MasslessImpedance,
                                RigidAdmittance)
from fric_core.laws import AsymmetricFriction, Coulomb, CoulombViscous, FrictionLaw, Stribeck

from .parameters import SCHEDULING_SPECS, ParamSpec

__all__ = ["MODES", "ELEMENTS", "IMPEDANCE_ELEMENTS", "ADMITTANCE_ELEMENTS", "LAWS",
           "LAW_PARAMS", "ELEMENT_PARAMS", "VECTOR_MIN_JOINTS", "GLOBAL_SPECS", "ELEMENT_KEYS",
           "global_specs", "joint_specs", "resolve_element", "JointConfig", "joint_config",
           "build_law", "build_element", "design_problems", "ElementBank", "build_bank",
           "validate_globals"]

MODES = ("impedance", "admittance")
IMPEDANCE_ELEMENTS = ("massless_impedance", "inertial_impedance")
ADMITTANCE_ELEMENTS = ("rigid_admittance", "compliant_admittance")
ELEMENTS = IMPEDANCE_ELEMENTS + ADMITTANCE_ELEMENTS
DEFAULT_ELEMENT = {"impedance": "massless_impedance", "admittance": "rigid_admittance"}

#: law name -> (class, its parameters in constructor order)
LAWS = {
    "coulomb": (Coulomb, ("F",)),
    "coulomb_viscous": (CoulombViscous, ("F", "D")),
    "stribeck": (Stribeck, ("Fc", "Fs", "vs", "D", "delta")),
    "asymmetric": (AsymmetricFriction, ("Cp", "Cn", "bp", "bn", "Dp", "Dn", "dv")),
}
LAW_PARAMS = {name: params for name, (_, params) in LAWS.items()}
#: element name -> (class, its parameters in constructor order, before the law)
_ELEMENT_CLASSES = {
    "massless_impedance": (MasslessImpedance, ("K", "B")),
    "inertial_impedance": (InertialImpedance, ("M", "K", "B")),
    "rigid_admittance": (RigidAdmittance, ("M",)),
    "compliant_admittance": (CompliantAdmittance, ("M", "K", "B")),
}
ELEMENT_PARAMS = {name: params for name, (_, params) in _ELEMENT_CLASSES.items()}

#: smallest law group carried by one vectorised element (measured crossovers, module docstring)
VECTOR_MIN_JOINTS = {"coulomb": 28, "coulomb_viscous": 28, "stribeck": 22, "asymmetric": 70}

_FORCE = "N, or N·m for a revolute joint"
_DAMP = "N·s/m, or N·m·s/rad"

GLOBAL_SPECS = (
    ParamSpec("joints", ["stage_joint"], "joints to render, matched by name in joint_states; "
              "effort/position commands have one entry per joint in this order",
              read_only=True, list_of=str),
    ParamSpec("mode", "impedance", "impedance: velocity in, effort out (backdrivable devices); "
              "admittance: force in, position setpoint out (stiff force-sensed devices)",
              read_only=True, choices=MODES),
    ParamSpec("element", "auto", "friction element: auto picks massless_impedance (model C) in "
              "impedance mode, rigid_admittance (model A) in admittance mode",
              read_only=True, choices=("auto",) + ELEMENTS),
    ParamSpec("dt", 0.001, "element time step = the expected input period", unit="s",
              min=1e-6, max=1.0, read_only=True),
    ParamSpec("max_effort", 10.0, "saturation of the commanded effort (impedance) or of the "
              "measured force fed to the element (admittance)", unit=_FORCE, min=1e-6),
    ParamSpec("max_velocity", 10.0, "plausibility limit of the joint velocities read in "
              "impedance mode: a joint_states message with |velocity| above it is rejected like "
              "NaN (diagnostics, the safe output) and never reaches the element; far above any "
              "haptic stage (< 1 m/s) or robot joint (a few rad/s)", unit="m/s, or rad/s",
              min=1e-6, max=1e6),
    ParamSpec("max_position", 1000.0, "plausibility limit of the joint positions read: a "
              "joint_states message with |position| above it is rejected like NaN (it would start "
              "an admittance setpoint or a planar contact's yaw there); far beyond any stage's "
              "travel (m) or joint's range (rad)", unit="m, or rad", min=1e-6, max=1e9),
    ParamSpec("max_force", 1000.0, "plausibility limit of the measured force in admittance "
              "mode (wrench, or the joint_states effort): above it the message is rejected like "
              "NaN; forces between max_effort and max_force are saturated at max_effort",
              unit=_FORCE, min=1e-6, max=1e9),
    ParamSpec("watchdog_timeout", 0.1, "no valid input for this long: zero effort (impedance) "
              "or hold the position (admittance), element reset", unit="s", min=0.002, max=60.0),
    ParamSpec("admittance_input", "wrench", "admittance force source: the wrench topic "
              "(1 joint) or the effort field of joint_states", read_only=True,
              choices=("wrench", "joint_effort")),
    ParamSpec("wrench_axis", "x", "force axis of the WrenchStamped along the joint's positive "
              "direction (admittance_input: wrench)", read_only=True, choices=("x", "y", "z")),
    ParamSpec("design_check", "reject", "a failed design check (paper conditions (15), (48), "
              "(63)): reject the parameter set, or only warn", choices=("reject", "warn")),
    ParamSpec("output_enabled", True, "publish commands; false: publish nothing (another "
              "controller has the device), inputs and diagnostics go on, the element is reset; "
              "true again: resume from rest (admittance: from the measured position)"),
    ParamSpec("marker_frame", "world", "frame of the ~/markers arrows"),
    ParamSpec("marker_scale", 0.01, "arrow length per unit of friction force",
              unit="m/N", min=0.0),
    ParamSpec("marker_rate", 30.0, "~/markers publication rate", unit="Hz", min=0.1, max=100.0,
              read_only=True),
    ParamSpec("diagnostics_period", 1.0, "/diagnostics publication period", unit="s",
              min=0.1, max=60.0, read_only=True),
) + SCHEDULING_SPECS

#: (suffix, default, description, unit, min) of the per-joint double parameters
_JOINT_DOUBLES = (
    ("F", 4.0, "Coulomb level (coulomb, coulomb_viscous)", _FORCE, 0.0),
    ("D", 0.0, "viscous coefficient (coulomb_viscous, stribeck)", _DAMP, 0.0),
    ("Fc", 4.0, "Coulomb level (stribeck)", _FORCE, 0.0),
    ("Fs", 4.5, "static level (stribeck)", _FORCE, 0.0),
    ("vs", 0.5, "Stribeck velocity (stribeck)", "m/s, or rad/s", 0.0),
    ("delta", 2.0, "Stribeck exponent (stribeck)", "", 0.0),
    ("Cp", 4.0, "kinetic level for v > 0 (asymmetric)", _FORCE, 0.0),
    ("Cn", 4.0, "kinetic level magnitude for v < 0 (asymmetric)", _FORCE, 0.0),
    ("bp", 0.0, "viscous coefficient for v > 0 (asymmetric)", _DAMP, 0.0),
    ("bn", 0.0, "viscous coefficient for v < 0 (asymmetric)", _DAMP, 0.0),
    ("Dp", 5.0, "static level for positive forces (asymmetric)", _FORCE, 0.0),
    ("Dn", -5.0, "static level for negative forces, < 0 (asymmetric)", _FORCE, None),
    ("dv", 0.1, "stiction transition width (asymmetric)", "m/s, or rad/s", 0.0),
    ("K", 6000.0, "presliding stiffness (models B, C, D)", "N/m, or N·m/rad", 0.0),
    ("B", 10.0, "presliding damping (models B, C, D)", _DAMP, 0.0),
    ("M", 2.0, "virtual mass (models A, B, D)", "kg, or kg·m²", 0.0),
    ("mass", 0.0, "moving mass of the device, 0 = unknown; model C uses it for the "
     "static-friction stability check, eq. (63)", "kg, or kg·m²", 0.0),
)
#: per-joint parameter suffixes that feed the element (a change rebuilds it)
ELEMENT_KEYS = ("law",) + tuple(s[0] for s in _JOINT_DOUBLES)


def global_specs() -> tuple[ParamSpec, ...]:
    return GLOBAL_SPECS


def joint_specs(joint: str) -> tuple[ParamSpec, ...]:
    """The per-joint parameters ``<joint>.law``, ``<joint>.F``, … (template instantiated)."""
    specs = [ParamSpec(f"{joint}.law", "coulomb", f"friction law of joint {joint}",
                       choices=tuple(LAWS))]
    for suffix, default, text, unit, lo in _JOINT_DOUBLES:
        specs.append(ParamSpec(f"{joint}.{suffix}", default, text, unit=unit, min=lo))
    return tuple(specs)


def resolve_element(mode: str, element: str) -> str:
    """The element name for ``mode``; ``ValueError`` if it does not fit the mode."""
    if mode not in MODES:
        raise ValueError(f"mode: {mode!r} is not one of {list(MODES)}")
    if element == "auto":
        return DEFAULT_ELEMENT[mode]
    allowed = IMPEDANCE_ELEMENTS if mode == "impedance" else ADMITTANCE_ELEMENTS
    if element not in allowed:
        raise ValueError(f"element: {element!r} does not fit mode {mode!r} (use one of "
                         f"{list(allowed)}): impedance elements take a velocity, admittance "
                         "elements a force")
    return element


def validate_globals(values: Mapping[str, Any]) -> None:
    """Cross-parameter checks the descriptors cannot express; ``ValueError`` on failure."""
    joints = list(values["joints"])
    if not joints:
        raise ValueError("joints: at least one joint is needed")
    if len(set(joints)) != len(joints):
        raise ValueError(f"joints: duplicate names in {joints}")
    for j in joints:
        if not j or any(c in j for c in " ./~{}"):
            raise ValueError(f"joints: {j!r} cannot prefix parameter names (no spaces, dots, "
                             "slashes)")
    resolve_element(values["mode"], values["element"])
    if (values["mode"] == "admittance" and values["admittance_input"] == "wrench"
            and len(joints) != 1):
        raise ValueError(f"admittance_input: 'wrench' drives exactly one joint (a 1-DOF stage), "
                         f"got {len(joints)} joints; use 'joint_effort'")


@dataclass(frozen=True)
class JointConfig:
    """One joint's law and element parameters, read from the flat parameter values."""

    joint: str
    law: str
    law_params: dict
    element_params: dict
    mass: float


def joint_config(values: Mapping[str, Any], joint: str, element: str) -> JointConfig:
    """Pick ``joint``'s parameters for ``element`` out of ``values`` (name -> value)."""
    law = values[f"{joint}.law"]
    if law not in LAWS:
        raise ValueError(f"{joint}.law: {law!r} is not one of {list(LAWS)}")
    lp = {k: float(values[f"{joint}.{k}"]) for k in LAW_PARAMS[law]}
    ep = {k: float(values[f"{joint}.{k}"]) for k in ELEMENT_PARAMS[element]}
    return JointConfig(joint, law, lp, ep, float(values[f"{joint}.mass"]))


def build_law(name: str, params: Mapping[str, Any]) -> FrictionLaw:
    """The law ``name`` from its parameters (floats, or per-joint arrays)."""
    cls, keys = LAWS[name]
    return cls(*(params[k] for k in keys))


def build_element(element: str, params: Mapping[str, Any], law: FrictionLaw, dt: float):
    """The element from its parameters, with the core's design warnings silenced (the renderer
    reports them through :func:`design_problems`)."""
    cls, keys = _ELEMENT_CLASSES[element]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FrictionDesignWarning)
        return cls(*(params[k] for k in keys), law, dt)


def design_problems(element: str, el, law: FrictionLaw, mass: float = 0.0,
                    dt: float | None = None) -> tuple[list[str], list[str]]:
    """(problems, notes) of a built element: problems fail the design check, notes are advice.

    Problems: Theorem 1's condition (15) and the validity condition (48) of the law at the
    element's Z (``fric_core.design.law_validity``); for model C with a known device ``mass``,
    static friction that diverges by eq. (63). Oscillatory but converging static friction is
    only a note: the paper's own Sec. V-B settings (K = 6000, B = 10) are underdamped for any
    device heavier than B²/(4K) = 4 g, and the user's hand supplies the damping.
    """
    problems = law_validity(law, el.Z).problems(law)
    notes = []
    if element == "massless_impedance" and mass > 0.0:
        sc = static_convergence(mass, el.K, el.B, el.dt if dt is None else dt)
        if not sc.converges:
            problems.append(f"static friction on the device mass {mass:g} diverges ({sc}); "
                            "lower K or raise B (Sec. IV-C: with B² = 4KM keep dt² < M/(4K))")
        elif not sc.non_oscillatory:
            dt_ = el.dt if dt is None else dt
            notes.append(f"static friction on the device mass {mass:g} settles with "
                         f"oscillation (eq. (63) with K = {el.K:g}, B = {el.B:g}, dt = {dt_:g}: "
                         f"complex eigenvalues); to settle without oscillation "
                         + static_advice(mass, el.K, el.B, dt_) + " (advice only: "
                         "the operator's hand damps the device too)")
    return problems, notes


class ElementBank:
    """All joints' elements behind one ``step``: scalar elements, and vectorised elements for
    law groups of at least :data:`VECTOR_MIN_JOINTS` joints (``vectorize`` True/False forces it).

    ``step(x)`` takes the inputs of all joints (finite float array of shape (n,), in joint
    order) and returns the outputs in a preallocated array (overwritten by the next step).
    """

    def __init__(self, element: str, dt: float, configs: Sequence[JointConfig],
                 vectorize: bool | None = None, *, joints: Sequence[str] | None = None,
                 planar=None):
        self.element = element
        self.dt = float(dt)
        self.joints = tuple(joints) if joints is not None else tuple(c.joint for c in configs)
        self.n = n = len(self.joints)
        self.planar = planar  # PlanarContact on three of the joints, or None
        self.out = np.zeros(n)
        at = {j: i for i, j in enumerate(self.joints)}
        groups: dict[str, list[JointConfig]] = {}
        for c in configs:
            groups.setdefault(c.law, []).append(c)
        scalar, vector = [], []
        for law_name, cs in groups.items():
            vec = vectorize if vectorize is not None else len(cs) >= VECTOR_MIN_JOINTS[law_name]
            if vec:
                lp = {k: np.array([c.law_params[k] for c in cs]) for k in LAW_PARAMS[law_name]}
                ep = {k: np.array([c.element_params[k] for c in cs])
                      for k in ELEMENT_PARAMS[element]}
                el = build_element(element, ep, build_law(law_name, lp), dt)
                vector.append((np.array([at[c.joint] for c in cs], dtype=np.intp), el))
            else:
                for c in cs:
                    el = build_element(element, c.element_params,
                                       build_law(c.law, c.law_params), dt)
                    scalar.append((at[c.joint], el))
        scalar.sort(key=lambda p: p[0])
        self._scalar = tuple(scalar)
        self._scalar_steps = tuple((i, el.step) for i, el in scalar)
        self._vector = tuple(vector)
        self._in_order = [i for i, _ in scalar] == list(range(n))
        self._steps = tuple(el.step for _, el in scalar)

    @property
    def layout(self) -> str:
        """e.g. ``"3 scalar"`` or ``"1 scalar + vector[coulomb x30]"``."""
        parts = []
        if self.planar is not None:
            parts.append("planar[reduced LuGre x1]")
        if self._scalar:
            parts.append(f"{len(self._scalar)} scalar")
        for idx, el in self._vector:
            parts.append(f"vector[{type(el.law).__name__} x{idx.size}]")
        return " + ".join(parts)

    def step(self, x: np.ndarray, position: np.ndarray | None = None) -> np.ndarray:
        """``x``: the joints' inputs; ``position``: their positions (used by a planar contact
        for its yaw; zeros when not given)."""
        out = self.out
        if self._in_order:  # all scalar (the usual case): plain floats, no numpy in the step
            xl = x.tolist()
            i = 0
            for st in self._steps:
                out[i] = st(xl[i])
                i += 1
            return out
        if self._scalar_steps:
            xl = x.tolist()
            for i, st in self._scalar_steps:
                out[i] = st(xl[i])
        for idx, el in self._vector:
            out[idx] = el.step(x[idx])
        pl = self.planar
        if pl is not None:
            idx = pl.index
            f = pl.step(x[idx], position[idx] if position is not None else np.zeros(3))
            out[idx] = -f  # f: the force on the device; out: the sliding-direction friction
        return out

    def reset(self) -> None:
        for _, el in self._scalar:
            el.reset()
        for _, el in self._vector:
            el.reset()
        if self.planar is not None:
            self.planar.reset()
        self.out[:] = 0.0

    def _per_joint(self, attr: str, dtype) -> np.ndarray:
        res = np.zeros(self.n, dtype=dtype)
        for i, el in self._scalar:
            res[i] = getattr(el.state, attr)
        for idx, el in self._vector:
            res[idx] = getattr(el.state, attr)
        return res

    def _planar_into(self, res: np.ndarray, value) -> np.ndarray:
        if self.planar is not None:
            res[self.planar.index] = value
        return res

    def stuck(self) -> np.ndarray:
        """Per joint: static friction in the last step (bool array)."""
        return self._planar_into(self._per_joint("stuck", bool),
                                 self.planar.stuck if self.planar is not None else False)

    def friction(self) -> np.ndarray:
        """Per joint: the friction force f of the last step (``state.f``, the sign of the
        sliding velocity; the force on the device or virtual mass is −f)."""
        return self._planar_into(self._per_joint("f", float),
                                 -self.planar._out if self.planar is not None else 0.0)


def build_bank(element: str, dt: float, joints: Sequence[str], values: Mapping[str, Any], *,
               design_check: str = "reject", vectorize: bool | None = None
               ) -> tuple[ElementBank, list[str]]:
    """Validate every joint and build the bank; returns (bank, warnings to report).

    Raises ``ValueError`` with a reason naming the parameter for a bad value, and, with
    ``design_check="reject"``, for a failed design check (the returned warnings then hold only
    notes). Every joint is first built as a scalar element, so problems name their joint.
    """
    if element not in _ELEMENT_CLASSES:
        raise ValueError(f"element: {element!r} is not one of {list(_ELEMENT_CLASSES)}")
    configs, problems, notes = [], [], []
    planar = None
    if values.get("planar.joints"):
        from .planar_params import build_planar  # scipy/limit-surface work only when used
        planar, p = build_planar(values, joints, dt, impedance=element in IMPEDANCE_ELEMENTS)
        problems += p
    planar_joints = set(values.get("planar.joints") or ())
    for j in joints:
        if j in planar_joints:
            continue
        c = joint_config(values, j, element)
        try:
            law = build_law(c.law, c.law_params)
        except ValueError as e:
            raise ValueError(f"{j}.{e}") from None  # core messages start with the field
        try:
            el = build_element(element, c.element_params, law, dt)
        except ValueError as e:
            raise ValueError(f"{j}.{e}") from None
        p, n = design_problems(element, el, law, c.mass, dt)
        problems += [f"{j}: {m}" for m in p]
        notes += [f"{j}: {m}" for m in n]
        configs.append(c)
    if problems and design_check == "reject":
        raise ValueError("design check failed (set design_check: warn to accept): "
                         + "; ".join(problems))
    return ElementBank(element, dt, configs, vectorize, joints=joints, planar=planar), \
        problems + notes
