"""Identified joint friction of an arm: ``joint_friction.yaml`` (issues 15, 23).

The one file that carries the numbers from identification (``fric identify``) to the compensator
(``friction_compensator``), the simulator (``transmission_sim``) and the report. It lives below
all of them (``fric_core.arm_identification.joint_friction`` re-exports it).

Laws per joint (``law``):

* ``asymmetric`` (paper 003): ``τ_f(v) = Cp + bp·v (v > 0),  −Cn + bn·v (v < 0)`` [N·m; N·m·s/rad];
* ``curve`` (issue 23): a monotone piecewise-linear friction curve per direction,
  :class:`FrictionCurve`: knots ``0 = v_0 < v_1 < … < v_K`` (magnitudes [rad/s]) and levels
  ``f_0 ≤ f_1 ≤ … ≤ f_K`` [N·m] on each side, ``τ_f(v) = f(|v|)`` for v > 0 and ``−f(|v|)`` for
  v < 0, linear between knots and continued with the last segment's slope beyond the last knot.
  Real joints' friction saturates (a sigmoid in v, not a line); the curve follows it. The
  asymmetric levels (``Cp, Cn, bp, bn``) stay in the file beside it (the straight-line fit of the
  same data), for readers that need only the levels.

Both laws are monotone non-decreasing in v with a jump at 0 of ``τ_f(0+) − τ_f(0−) = Cp + Cn``
(curve: ``f_pos[0] + f_neg[0]``) ≥ 0, which is what the implicit friction elements need (a law
with a closed-form Φ_Z, paper 000 Theorem 1). The individual levels may be negative:

**Effort offset.** A torque sensor or a current loop adds a constant ``o`` per joint to the
measured effort. With the asymmetric law only ``Cp + o`` and ``Cn − o`` are identifiable (the
columns 1[v>0], −1[v<0] and 1 are dependent outside the stiction band): when the offset cannot
be separated it stays in the levels (``offset`` absent or 0, a note in ``reasons``) and one of
them may be below 0; when it can (``fric identify --offset``: a rest segment, or given), it is
``offset`` [N·m] and the levels are the friction's. The measured effort at velocity v is then
``… + τ_f(v) + offset``. What a compensator needs is this **total** curve ``τ_f(v) + offset``
(:meth:`JointFriction.total`), not its split: it is what the identification determines, and what
the drive must add to the command in the units the effort was recorded in.

Gear (paper 004, efficiencies (27)) — the load-dependent part: the motor torque referred to the
joint is

    τ_m = m·q̈ + G(τ_load, v) + τ_f(v),   G = τ_load/η_f  (τ_load·v > 0: the motor drives the load)
                                             G = η_b·τ_load  (τ_load·v < 0: the load back-drives)

with τ_load = M(q)q̈ + h(q, q̇) the arm's rigid-body torque at the joint and m the rotor inertia
referred to the joint. ``eta_f`` ∈ (0, 1]; ``eta_b`` ≤ 1 (≤ 0: self-locking). When the data
cannot tell η_f and η_b apart (rigid body identified jointly: a scale s of the rigid body is undone
by η_f·s, η_b/s) the file holds ``eta_f: null``, ``eta_b: null`` and ``eta_product`` (η_f·η_b).

Physical ranges, enforced on reading and on writing: ``bp, bn ≥ 0``; ``Cp + Cn ≥ 0``; curve
levels non-decreasing, ``f_pos[0] + f_neg[0] ≥ 0``; ``eta_f`` in (0, 1], ``eta_b``, ``eta_product``
≤ 1. Where the data put a value outside, identification fits it at the bound and says so per
value: ``determined: {bn: false}`` with ``reasons: {bn: "…"}``; every such file is readable.

File layout (YAML)::

    model: asymmetric            # asymmetric | curve | gear (the law fitted; per joint: law)
    dynamics: identify           # how the rigid body was treated (identify | urdf)
    method: eiv                  # eiv | ols
    dv: 0.01                     # [rad/s] band around v = 0 left out of the fit
    joints:
      joint1: {Cp: 0.5, Cn: 0.4, bp: 0.2, bn: 0.0, offset: 0.1,
               std: {Cp: 0.004, Cn: 0.004, bp: 0.003, bn: 0.01, offset: 0.01},
               determined: {bn: false}, reasons: {bn: "fitted below 0 (-0.07 ± 0.01) ..."}}
      joint2: {Cp: ..., law: curve,
               curve: {positive: {v: [0.0, 0.1, 0.5, 1.5], f: [0.3, 0.5, 0.6, 0.65]},
                       negative: {v: [0.0, 0.1, 0.5, 1.5], f: [0.3, 0.45, 0.6, 0.7]}},
               std: {...}}
      joint3: {Cp: ..., eta_f: 0.8, eta_b: 0.6, eta_product: 0.48, std: {...}}

Only ``joints`` is required; each joint needs ``Cp, Cn, bp, bn``. Other top-level keys are kept
in :attr:`JointFrictionSet.extra` and written back; ``fric identify --dynamics identify`` (the
asymmetric model) adds the identified rigid body, ``rigid_body: {joints, gravity,
regressor_columns, armature, index, names, beta, beta_std}``
(:mod:`fric_core.arm_identification.rigid_body`), from which
:meth:`JointFrictionSet.identified_gravity` gives the arm's identified gravity torque g(q).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Mapping, Optional, Sequence, Tuple

import numpy as np

__all__ = ["JointFriction", "JointFrictionSet", "FrictionCurve", "read_joint_friction",
           "curve_knots", "write_joint_friction", "parse_joint_friction", "LAWS",
           "KNOT_QUANTILES"]

_LAW = ("Cp", "Cn", "bp", "bn")
_GEAR = ("eta_f", "eta_b", "eta_product")
#: the per-joint laws a file may hold
LAWS = ("asymmetric", "curve")
_MODELS = ("asymmetric", "curve", "gear")
# a level sum below 0 by this much (rounding of a fit at the bound) is still monotone
_TOL = 1e-9


def _side(v, f, where: str) -> Tuple[np.ndarray, np.ndarray]:
    v = np.asarray(v, dtype=float)
    f = np.asarray(f, dtype=float)
    if v.ndim != 1 or v.shape != f.shape or v.size < 2:
        raise ValueError(f"{where}: expected v and f of equal length >= 2, got {v.shape} and "
                         f"{f.shape}")
    if not (np.all(np.isfinite(v)) and np.all(np.isfinite(f))):
        raise ValueError(f"{where}: knots and levels must be finite")
    if v[0] != 0.0 or np.any(np.diff(v) <= 0.0):
        raise ValueError(f"{where}.v: expected increasing speeds starting at 0, got "
                         f"{v.tolist()}")
    d = np.diff(f)
    if np.any(d < -_TOL * max(1.0, float(np.max(np.abs(f))))):
        k = int(np.argmax(d < 0))
        raise ValueError(f"{where}.f: friction must not decrease with speed (a monotone law): "
                         f"f[{k + 1}] = {f[k + 1]:.6g} < f[{k}] = {f[k]:.6g}")
    return v, np.maximum.accumulate(f)


@dataclass(frozen=True)
class FrictionCurve:
    """A monotone piecewise-linear friction law (module docstring): per direction, knots
    ``v`` (magnitudes, ``v[0] = 0``, increasing) and levels ``f`` (non-decreasing, ``f[0]`` the
    level at 0+), the last segment's slope continued beyond the last knot.

    ``τ_f(v) = f_pos(v)`` for v > 0, ``−f_neg(−v)`` for v < 0, 0 at v = 0.
    """

    v_pos: Tuple[float, ...]
    f_pos: Tuple[float, ...]
    v_neg: Tuple[float, ...]
    f_neg: Tuple[float, ...]

    @classmethod
    def make(cls, v_pos, f_pos, v_neg, f_neg, where: str = "curve") -> "FrictionCurve":
        """Checked construction; ValueError naming the side and the field."""
        vp, fp = _side(v_pos, f_pos, f"{where}.positive")
        vn, fn = _side(v_neg, f_neg, f"{where}.negative")
        if fp[0] + fn[0] < -_TOL * max(1.0, abs(fp[0]), abs(fn[0])):
            raise ValueError(f"{where}: the levels at 0 must not cross (f_pos[0] + f_neg[0] = "
                             f"{fp[0] + fn[0]:.6g} < 0: not a monotone law)")
        return cls(tuple(map(float, vp)), tuple(map(float, fp)), tuple(map(float, vn)),
                   tuple(map(float, fn)))

    @staticmethod
    def _eval(v, f, x):
        v, f = np.asarray(v), np.asarray(f)
        slope = (f[-1] - f[-2]) / (v[-1] - v[-2])
        return np.where(x > v[-1], f[-1] + slope * (x - v[-1]), np.interp(x, v, f))

    def kinetic(self, v):
        """τ_f(v) (0 at v = 0), scalar or array."""
        v = np.asarray(v, dtype=float)
        out = np.where(v > 0, self._eval(self.v_pos, self.f_pos, np.abs(v)),
                       np.where(v < 0, -self._eval(self.v_neg, self.f_neg, np.abs(v)), 0.0))
        return float(out) if out.ndim == 0 else out

    def shifted(self, offset: float) -> "FrictionCurve":
        """The curve plus a constant ``offset`` (the positive levels up, the negative
        magnitudes down by it)."""
        return FrictionCurve(self.v_pos, tuple(x + offset for x in self.f_pos), self.v_neg,
                             tuple(x - offset for x in self.f_neg))

    def segments(self, side: int) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(knots, levels, slopes) of one side (``side`` > 0: positive), slopes per segment
        (the last one continued)."""
        v = np.asarray(self.v_pos if side > 0 else self.v_neg)
        f = np.asarray(self.f_pos if side > 0 else self.f_neg)
        return v, f, np.diff(f) / np.diff(v)

    def to_dict(self) -> dict:
        """The ``curve:`` mapping of the file."""
        return {"positive": {"v": list(self.v_pos), "f": list(self.f_pos)},
                "negative": {"v": list(self.v_neg), "f": list(self.f_neg)}}


@dataclass(frozen=True)
class JointFriction:
    """One joint's identified friction (see the module docstring for the laws).

    ``Cp, Cn, bp, bn``: the asymmetric law (always present); ``law``: which law
    :meth:`kinetic` evaluates (``"asymmetric"`` or ``"curve"``, then ``curve`` holds it);
    ``offset``: the effort offset separated from the levels [N·m] (0 when none was);
    efficiencies for the gear law; ``std``: standard deviations by name; ``determined``: the
    values the data did not determine (name → False; absent means determined) and ``reasons``
    (name → why).
    """

    Cp: float
    Cn: float
    bp: float
    bn: float
    eta_f: Optional[float] = None
    eta_b: Optional[float] = None
    eta_product: Optional[float] = None
    std: Dict[str, float] = field(default_factory=dict)
    offset: float = 0.0
    law: str = "asymmetric"
    curve: Optional[FrictionCurve] = None
    determined: Dict[str, bool] = field(default_factory=dict)
    reasons: Dict[str, str] = field(default_factory=dict)

    def __post_init__(self):
        if self.law not in LAWS:
            raise ValueError(f"law: expected one of {', '.join(LAWS)}, got {self.law!r}")
        if self.law == "curve" and self.curve is None:
            raise ValueError("law: 'curve' needs the curve")

    @property
    def has_gear(self) -> bool:
        """True when both efficiencies are known (the gear model with trusted dynamics)."""
        return self.eta_f is not None and self.eta_b is not None

    def kinetic(self, v):
        """τ_f(v) of the joint's law (0 at v = 0; without ``offset``), scalar or array."""
        if self.law == "curve":
            return self.curve.kinetic(v)
        v = np.asarray(v, dtype=float)
        out = np.where(v > 0, self.Cp + self.bp * v,
                       np.where(v < 0, -self.Cn + self.bn * v, 0.0))
        return float(out) if out.ndim == 0 else out

    def total(self, v):
        """``τ_f(v) + offset`` for v ≠ 0 (the effort friction adds, in the recording's units:
        what a compensator renders), 0 at v = 0; scalar or array."""
        out = self.kinetic(v)
        if self.offset:
            out = np.where(np.asarray(v) != 0, out + self.offset, 0.0)
            return float(out) if np.ndim(out) == 0 else out
        return out

    def total_curve(self) -> FrictionCurve:
        """The total law ``τ_f + offset`` as a :class:`FrictionCurve` (the asymmetric law is
        the two-knot curve ``[0, 1]``, levels ``[C, C + b]``)."""
        c = self.curve if self.law == "curve" else FrictionCurve(
            (0.0, 1.0), (self.Cp, self.Cp + self.bp), (0.0, 1.0), (self.Cn, self.Cn + self.bn))
        return c.shifted(self.offset) if self.offset else c

    def levels(self) -> Tuple[float, float]:
        """``(τ_f(0+), −τ_f(0−))`` of the total law: the static bounds' magnitudes (with the
        offset; either may be negative when a large offset stays in the levels)."""
        c = self.total_curve()
        return c.f_pos[0], c.f_neg[0]

    def gear(self, tau_load, v):
        """G(τ_load, v): the motor torque that moves the load τ_load through the gear at v.

        τ_load/η_f where τ_load·v > 0, η_b·τ_load where τ_load·v < 0, τ_load otherwise (and
        without efficiencies).
        """
        tau_load = np.asarray(tau_load, dtype=float)
        if not self.has_gear:
            return float(tau_load) if tau_load.ndim == 0 else tau_load
        p = tau_load * np.asarray(v, dtype=float)
        out = np.where(p > 0, tau_load / self.eta_f, np.where(p < 0, self.eta_b * tau_load,
                                                               tau_load))
        return float(out) if out.ndim == 0 else out


@dataclass(frozen=True)
class JointFrictionSet:
    """``joint_friction.yaml`` in memory: ``joints`` (name → :class:`JointFriction`, file order)
    and the provenance fields."""

    joints: Dict[str, JointFriction]
    model: str = "asymmetric"
    dynamics: Optional[str] = None
    method: Optional[str] = None
    dv: Optional[float] = None
    extra: Dict[str, object] = field(default_factory=dict)

    @property
    def names(self) -> list:
        return list(self.joints)

    def for_joints(self, names, where: str = "joints") -> list:
        """The entries of ``names`` in that order; ValueError naming the missing ones."""
        missing = [n for n in names if n not in self.joints]
        if missing:
            raise ValueError(f"{where}: no friction for joint(s) {missing} in the file (it has "
                             f"{self.names})")
        return [self.joints[n] for n in names]

    def identified_gravity(self, dyn, source: str = "joint_friction"):
        """The identified gravity torque of the ``rigid_body:`` section
        (:func:`~fric_core.arm_identification.rigid_body.identified_gravity`: ``.torque(q)``;
        ``dyn`` the arm's :class:`UrdfDynamics` or URDF, only its kinematics used); ValueError
        naming the field, or saying the file has no such section."""
        from .arm_identification.rigid_body import identified_gravity

        return identified_gravity(self, dyn, source)


def _number(where: str, val, *, lo: float = -math.inf, hi: float = math.inf,
            lo_open: bool = False) -> float:
    if isinstance(val, bool) or not isinstance(val, (int, float)):
        raise ValueError(f"{where}: expected a number, got {val!r}")
    val = float(val)
    if not math.isfinite(val):
        raise ValueError(f"{where}: expected a finite number, got {val!r}")
    if val < lo or (lo_open and val == lo) or val > hi:
        lo_s = "(" if lo_open else "["
        raise ValueError(f"{where}: {val!r} is outside {lo_s}{lo}, {hi}]")
    return val


def _curve(where: str, doc) -> FrictionCurve:
    if not isinstance(doc, Mapping):
        raise ValueError(f"{where}: expected {{positive: {{v, f}}, negative: {{v, f}}}}, got "
                         f"{doc!r}")
    sides = []
    for side in ("positive", "negative"):
        d = doc.get(side)
        if not isinstance(d, Mapping) or "v" not in d or "f" not in d:
            raise ValueError(f"{where}.{side}: expected a mapping {{v: [...], f: [...]}}")
        for k in ("v", "f"):
            if not isinstance(d[k], (list, tuple)):
                raise ValueError(f"{where}.{side}.{k}: expected a list of numbers")
            for i, x in enumerate(d[k]):
                _number(f"{where}.{side}.{k}[{i}]", x)
        sides += [d["v"], d["f"]]
    return FrictionCurve.make(*sides, where=where)


def _flags(where: str, doc, kind) -> dict:
    if doc is None:
        return {}
    if not isinstance(doc, Mapping):
        raise ValueError(f"{where}: expected a mapping, got {doc!r}")
    out = {}
    for k, v in doc.items():
        if not isinstance(v, kind) or (kind is str and not v):
            raise ValueError(f"{where}.{k}: expected {'true/false' if kind is bool else 'text'}"
                             f", got {v!r}")
        out[str(k)] = v
    return out


def parse_joint_friction(doc, source: str = "joint_friction") -> JointFrictionSet:
    """Validate a loaded ``joint_friction.yaml`` document (dict); ValueError naming the field.

    Parameters
    ----------
    doc : mapping
        The YAML document.
    source : str
        Name used in messages (the file path).

    Returns
    -------
    JointFrictionSet
        The joints in file order.
    """
    if not isinstance(doc, Mapping):
        raise ValueError(f"{source}: expected a mapping with a 'joints:' key, got "
                         f"{type(doc).__name__}")
    joints = doc.get("joints")
    if not isinstance(joints, Mapping) or not joints:
        raise ValueError(f"{source}: joints: expected a mapping from joint name to "
                         "{Cp, Cn, bp, bn, ...}")
    model = doc.get("model", "asymmetric")
    if model not in _MODELS:
        raise ValueError(f"{source}: model: expected one of {', '.join(_MODELS)}, got "
                         f"{model!r}")
    out = {}
    for name, entry in joints.items():
        where = f"{source}: joints.{name}"
        if not isinstance(entry, Mapping):
            raise ValueError(f"{where}: expected a mapping {{Cp, Cn, bp, bn}}, got {entry!r}")
        missing = [k for k in _LAW if k not in entry]
        if missing:
            raise ValueError(f"{where}: missing {', '.join(missing)}")
        law = {k: _number(f"{where}.{k}", entry[k], lo=0.0 if k in ("bp", "bn") else -math.inf)
               for k in _LAW}
        if law["Cp"] + law["Cn"] < -_TOL * max(1.0, abs(law["Cp"]), abs(law["Cn"])):
            raise ValueError(f"{where}: Cp + Cn = {law['Cp'] + law['Cn']:.6g} < 0: the "
                             "friction at 0+ would lie below that at 0- (not a monotone law)")
        gear = {}
        for k in _GEAR:
            val = entry.get(k)
            if val is None:
                gear[k] = None
            elif k == "eta_f":
                gear[k] = _number(f"{where}.{k}", val, lo=0.0, hi=1.0, lo_open=True)
            else:
                gear[k] = _number(f"{where}.{k}", val, hi=1.0)
        if (gear["eta_f"] is None) != (gear["eta_b"] is None):
            raise ValueError(f"{where}: eta_f and eta_b go together (give both or neither)")
        std = entry.get("std") or {}
        if not isinstance(std, Mapping):
            raise ValueError(f"{where}.std: expected a mapping, got {std!r}")
        std = {k: _number(f"{where}.std.{k}", v, lo=0.0) for k, v in std.items()
               if v is not None}
        offset = _number(f"{where}.offset", entry.get("offset") or 0.0)
        jlaw = entry.get("law", "asymmetric")
        if jlaw not in LAWS:
            raise ValueError(f"{where}.law: expected one of {', '.join(LAWS)}, got {jlaw!r}")
        curve = None
        if entry.get("curve") is not None:
            curve = _curve(f"{where}.curve", entry["curve"])
        elif jlaw == "curve":
            raise ValueError(f"{where}: law: curve needs a 'curve:' mapping")
        out[str(name)] = JointFriction(
            **law, **gear, std=std, offset=offset, law=jlaw, curve=curve,
            determined=_flags(f"{where}.determined", entry.get("determined"), bool),
            reasons=_flags(f"{where}.reasons", entry.get("reasons"), str))
    dv = doc.get("dv")
    return JointFrictionSet(joints=out, model=model, dynamics=doc.get("dynamics"),
                            method=doc.get("method"),
                            dv=None if dv is None else _number(f"{source}: dv", dv, lo=0.0),
                            extra={k: v for k, v in doc.items()
                                   if k not in ("joints", "model", "dynamics", "method", "dv")})


def read_joint_friction(path) -> JointFrictionSet:
    """Read and validate ``joint_friction.yaml``; ValueError naming the file and field.

    Parameters
    ----------
    path : str or Path
        The file.

    Returns
    -------
    JointFrictionSet
        Its joints in file order.
    """
    import yaml

    path = Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise ValueError(f"{path}: cannot read ({exc.strerror or exc})") from None
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ValueError(f"{path}: not valid YAML ({str(exc).splitlines()[0]})") from None
    return parse_joint_friction(doc, str(path))


def _entry(jf: JointFriction, gear: bool) -> dict:
    entry = {k: float(getattr(jf, k)) for k in _LAW}
    if gear:
        for k in _GEAR:
            val = getattr(jf, k)
            entry[k] = None if val is None else float(val)
    if jf.offset or "offset" in jf.std:
        entry["offset"] = float(jf.offset)
    if jf.law != "asymmetric":
        entry["law"] = jf.law
    if jf.curve is not None:
        entry["curve"] = jf.curve.to_dict()
    if jf.std:
        entry["std"] = {k: float(v) for k, v in jf.std.items()}
    det = {k: bool(v) for k, v in jf.determined.items() if not v}
    if det:
        entry["determined"] = det
    if jf.reasons:
        entry["reasons"] = {k: str(v) for k, v in jf.reasons.items()}
    return entry


def write_joint_friction(path, friction: JointFrictionSet, header: str = "") -> Path:
    """Write ``joint_friction.yaml`` (round-trips through :func:`read_joint_friction`; a set
    the reader would refuse is refused here, before anything is written).

    Parameters
    ----------
    path : str or Path
        The file to write (parent directories are created).
    friction : JointFrictionSet
        What to write; ``None`` efficiencies are written as ``null``.
    header : str
        Comment lines put on top (each prefixed with ``# ``).

    Returns
    -------
    Path
        The written file.
    """
    import yaml

    doc = {"model": friction.model}
    for k in ("dynamics", "method", "dv"):
        if getattr(friction, k) is not None:
            doc[k] = getattr(friction, k)
    doc["joints"] = {name: _entry(jf, friction.model == "gear")
                     for name, jf in friction.joints.items()}
    doc.update(friction.extra)  # after the joints: long sections (rigid_body) don't bury them
    parse_joint_friction(doc, "joint_friction (to be written)")  # never write what we refuse
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "".join(f"# {line}\n" for line in header.splitlines())
    path.write_text(text + yaml.safe_dump(doc, sort_keys=False, default_flow_style=None))
    return path


#: Where :func:`curve_knots` puts the knots beyond 0, as quantiles of the recorded speeds: dense
#: at low speed, where real friction bends (a Stribeck dip, a sigmoid's knee), sparse where it
#: has saturated; the last at the 99th percentile (beyond it the last slope is continued).
KNOT_QUANTILES = (0.02, 0.06, 0.12, 0.245, 0.37, 0.495, 0.62, 0.74, 0.865, 0.99)


def curve_knots(speeds: Sequence[float], count: int = len(KNOT_QUANTILES),
                low: float = 0.0) -> np.ndarray:
    """Knots for a :class:`FrictionCurve` side from the recorded speeds (magnitudes): 0, then
    ``count`` quantiles of the speeds above ``low`` (:data:`KNOT_QUANTILES` when ``count`` is
    their number, else evenly spaced in probability up to the 99th percentile); knots closer
    than 1e-6 relative are merged.

    Parameters
    ----------
    speeds : array_like
        |v| of the rows on that side [rad/s].
    count : int
        Knots beyond 0 (≥ 1).
    low : float
        Speeds at or below this are ignored (the stiction band).

    Returns
    -------
    ndarray
        ``[0, v_1, …, v_count]``, strictly increasing.
    """
    s = np.asarray(speeds, dtype=float)
    s = s[s > low]
    if s.size == 0 or count < 1:
        return np.array([0.0, max(low, 1e-3) * 2.0])
    probs = (KNOT_QUANTILES if count == len(KNOT_QUANTILES)
             else np.linspace(0.0, 0.99, count + 1)[1:])
    qs = np.quantile(s, probs)
    knots = [0.0]
    for x in qs:
        if x > knots[-1] * (1.0 + 1e-6) + 1e-12:
            knots.append(float(x))
    if len(knots) < 2:
        knots.append(float(s.max()) if s.max() > 0 else 1.0)
    return np.array(knots)
