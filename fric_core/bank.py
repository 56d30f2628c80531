"""The element bank: every joint's friction element behind one ``step`` (paper 000's models A–D,
eqs. (26), (36), (38), (45)), with the law and element registries by name and the design checks
(15), (48), (63) of a built element.

The joints are carried by an :class:`ElementBank`: one scalar element per joint, or, for large
groups of joints sharing a law, one per-joint vectorised element per law. The choice is by
measurement (timeit on this 2-core machine, one model-C step of all n joints; model A is within
10 %)::

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

from .design import FrictionDesignWarning, law_validity, static_advice, static_convergence
from .elements import CompliantAdmittance, InertialImpedance, MasslessImpedance, RigidAdmittance
from .laws import AsymmetricFriction, Coulomb, CoulombViscous, FrictionLaw, Stribeck

__all__ = ["LAWS", "LAW_PARAMS", "ELEMENT_PARAMS", "VECTOR_MIN_JOINTS", "JointConfig",
           "joint_config", "build_law", "build_element", "design_problems", "ElementBank"]

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


@dataclass(frozen=True)
class JointConfig:
    """One joint's law and element parameters, read from the flat parameter values."""

    joint: str
    law: str
    law_params: dict
    element_params: dict
    mass: float


def joint_config(values: Mapping[str, Any], joint: str, element: str) -> JointConfig:
    """Pick ``joint``'s parameters for ``element`` out of ``values``.

    Parameters
    ----------
    values : mapping
        Flat parameter values, ``"<joint>.<name>" -> value`` (``law``, the law's and the
        element's parameters, ``mass``).
    joint : str
        The joint's name (the prefix).
    element : str
        An element name of :data:`ELEMENT_PARAMS`.

    Returns
    -------
    JointConfig
        The law name, its parameters and the element's as floats, and the device mass.
    """
    law = values[f"{joint}.law"]
    if law not in LAWS:
        raise ValueError(f"{joint}.law: {law!r} is not one of {list(LAWS)}")
    lp = {k: float(values[f"{joint}.{k}"]) for k in LAW_PARAMS[law]}
    ep = {k: float(values[f"{joint}.{k}"]) for k in ELEMENT_PARAMS[element]}
    return JointConfig(joint, law, lp, ep, float(values[f"{joint}.mass"]))


def build_law(name: str, params: Mapping[str, Any]) -> FrictionLaw:
    """The law ``name`` from its parameters.

    Parameters
    ----------
    name : str
        A law name of :data:`LAWS`.
    params : mapping
        The law's parameters (:data:`LAW_PARAMS`): floats, or per-joint arrays.

    Returns
    -------
    FrictionLaw
        The law; ``ValueError`` naming the field for a bad value.
    """
    cls, keys = LAWS[name]
    return cls(*(params[k] for k in keys))


def build_element(element: str, params: Mapping[str, Any], law: FrictionLaw, dt: float):
    """The element from its parameters, with the core's design warnings silenced (the renderer
    reports them through :func:`design_problems`).

    Parameters
    ----------
    element : str
        An element name of :data:`ELEMENT_PARAMS`.
    params : mapping
        The element's parameters (``K``, ``B``, ``M`` as it needs): floats or per-joint arrays.
    law : FrictionLaw
        The law the element renders.
    dt : float
        The timestep T [s].

    Returns
    -------
    element
        A :mod:`fric_core.elements` element (models A–D).
    """
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

    Parameters
    ----------
    element : str
        The element's name.
    el : element
        The built element (its ``Z``, ``K``, ``B``, ``dt``).
    law : FrictionLaw
        Its law.
    mass : float
        The device's moving mass [kg], 0 = unknown (no (63) check).
    dt : float or None
        The timestep for (63); None: the element's.

    Returns
    -------
    problems, notes : list of str
        What fails the design check, and advice.
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
