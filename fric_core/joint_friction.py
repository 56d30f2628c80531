"""Identified joint friction of an arm: ``joint_friction.yaml`` (issue 15).

The one file that carries the numbers from identification (``fric identify``) to the compensator
(``friction_compensator``), the simulator (``transmission_sim``) and the report. Per joint, paper
003's asymmetric Coulomb + viscous law

    τ_f(v) = Cp + bp·v (v > 0),  −Cn + bn·v (v < 0);  Cp, Cn ≥ 0 [N·m], bp, bn [N·m·s/rad]

and, for the gear model (paper 004, efficiencies (27)), the load-dependent part: the motor torque
referred to the joint is

    τ_m = m·q̈ + G(τ_load, v) + τ_f(v),   G = τ_load/η_f  (τ_load·v > 0: the motor drives the load)
                                             G = η_b·τ_load  (τ_load·v < 0: the load back-drives)

with τ_load = M(q)q̈ + h(q, q̇) the arm's rigid-body torque at the joint and m the rotor inertia
referred to the joint. ``eta_f`` ∈ (0, 1]; ``eta_b`` ≤ 1 (≤ 0: self-locking). When the data
cannot tell η_f and η_b apart (rigid body identified jointly: a scale s of the rigid body is undone
by η_f·s, η_b/s) the file holds ``eta_f: null``, ``eta_b: null`` and ``eta_product`` (η_f·η_b).

File layout (YAML)::

    model: asymmetric            # or gear
    dynamics: identify           # how the rigid body was treated (identify | urdf)
    method: eiv                  # eiv | ols
    dv: 0.01                     # [rad/s] band around v = 0 left out of the fit
    joints:
      joint1: {Cp: 0.5, Cn: 0.4, bp: 0.2, bn: 0.3,
               std: {Cp: 0.004, Cn: 0.004, bp: 0.003, bn: 0.01}}
      joint2: {Cp: ..., eta_f: 0.8, eta_b: 0.6, eta_product: 0.48, std: {...}}

Only ``joints`` is required; each joint needs ``Cp, Cn, bp, bn``. Other top-level keys are kept
in :attr:`JointFrictionSet.extra` and written back; ``fric identify --dynamics identify`` (the
asymmetric model) adds the identified rigid body, ``rigid_body: {joints, gravity,
regressor_columns, armature, index, names, beta, beta_std}`` (:mod:`.rigid_body`), from which
:meth:`JointFrictionSet.identified_gravity` gives the arm's identified gravity torque g(q).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Mapping, Optional

import numpy as np

__all__ = ["JointFriction", "JointFrictionSet", "read_joint_friction", "write_joint_friction",
           "parse_joint_friction"]

_LAW = ("Cp", "Cn", "bp", "bn")
_GEAR = ("eta_f", "eta_b", "eta_product")


@dataclass(frozen=True)
class JointFriction:
    """One joint's identified friction (see the module docstring for the laws)."""

    Cp: float
    Cn: float
    bp: float
    bn: float
    eta_f: Optional[float] = None
    eta_b: Optional[float] = None
    eta_product: Optional[float] = None
    std: Dict[str, float] = field(default_factory=dict)

    @property
    def has_gear(self) -> bool:
        """True when both efficiencies are known (the gear model with trusted dynamics)."""
        return self.eta_f is not None and self.eta_b is not None

    def kinetic(self, v):
        """τ_f(v) of paper 003's asymmetric law (0 at v = 0), scalar or array."""
        v = np.asarray(v, dtype=float)
        out = np.where(v > 0, self.Cp + self.bp * v,
                       np.where(v < 0, -self.Cn + self.bn * v, 0.0))
        return float(out) if out.ndim == 0 else out

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
        (:func:`~.rigid_body.identified_gravity`: ``.torque(q)``; ``dyn`` the arm's
        :class:`UrdfDynamics` or URDF, only its kinematics used); ValueError naming the field, or
        saying the file has no such section."""
        from .rigid_body import identified_gravity

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
    if model not in ("asymmetric", "gear"):
        raise ValueError(f"{source}: model: expected 'asymmetric' or 'gear', got {model!r}")
    out = {}
    for name, entry in joints.items():
        where = f"{source}: joints.{name}"
        if not isinstance(entry, Mapping):
            raise ValueError(f"{where}: expected a mapping {{Cp, Cn, bp, bn}}, got {entry!r}")
        missing = [k for k in _LAW if k not in entry]
        if missing:
            raise ValueError(f"{where}: missing {', '.join(missing)}")
        law = {k: _number(f"{where}.{k}", entry[k], lo=0.0) for k in _LAW}
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
        out[str(name)] = JointFriction(**law, **gear, std=std)
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


def write_joint_friction(path, friction: JointFrictionSet, header: str = "") -> Path:
    """Write ``joint_friction.yaml`` (round-trips through :func:`read_joint_friction`).

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
    joints = {}
    for name, jf in friction.joints.items():
        entry = {k: float(getattr(jf, k)) for k in _LAW}
        if friction.model == "gear":
            for k in _GEAR:
                val = getattr(jf, k)
                entry[k] = None if val is None else float(val)
        if jf.std:
            entry["std"] = {k: float(v) for k, v in jf.std.items()}
        joints[name] = entry
    doc["joints"] = joints
    doc.update(friction.extra)  # after the joints: long sections (rigid_body) don't bury them
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "".join(f"# {line}\n" for line in header.splitlines())
    path.write_text(text + yaml.safe_dump(doc, sort_keys=False, default_flow_style=None))
    return path
