"""The identified rigid body in ``joint_friction.yaml`` and the gravity torque it gives (issue 15).

With ``dynamics="identify"`` the fit (:func:`~.fit.fit_arm_friction`) estimates the arm's
rigid-body base parameters β jointly with the friction (:func:`~.regressor.base_parameters`:
``Y(q, q̇, q̈) π = Y_b β`` for every motion, Y Pinocchio's joint torque regressor), because a real
URDF's inertias are wrong. At rest (q̇ = q̈ = 0) that identity is the gravity torque

    g(q) = Y(q, 0, 0) π = Y_b(q, 0, 0) β

— the holding torque the data measured, whatever the URDF's inertias say; the rotor-inertia
columns (``q̈_j`` on joint j's rows) vanish at q̈ = 0. β is not a set of per-body inertias (a base
parameter is a body parameter plus a combination of unidentifiable ones; an individual mass can be
zero or negative); g is ``Y(q, 0, 0) β̄`` with β̄ the full-length vector holding β at the base
columns and 0 elsewhere. Yet any full parameter vector π* with ``Y(q, 0, 0) π* = Y(q, 0, 0) β̄``
for every q gives that same g. :class:`IdentifiedGravity` takes the one nearest to the URDF's
inertias (the URDF's π plus the least-norm correction ``Y_s⁺ Y_s (β̄ − π_URDF)``, ``Y_s`` the
gravity regressor stacked over random configurations: masses stay near the URDF's, not zero),
puts it into a copy of the model and evaluates ``pin.computeGeneralizedGravity`` — Pinocchio's
recursion is linear in the dynamic parameters, also for a negative mass — about 1 µs for 7
joints. At construction it checks that against the regressor at other random configurations, and
falls back to the regressor (one ``pin.computeJointTorqueRegressor`` and an (n × 10·n_b) product
per call, ~5 µs) if they differ by more than 1e-9 of |g| (e.g. a body mass so near zero that
Pinocchio's centre of mass ``m·c/m`` loses digits).

``joint_friction.yaml`` carries it as an optional top-level section (written by
:meth:`~.result.ArmFrictionFit.to_joint_friction_set`, read by :func:`parse_rigid_body`)::

    rigid_body:
      joints: [joint1, joint2]     # the regressor's rows: joint order of q
      gravity: [0.0, 0.0, -9.81]   # [m/s²] the gravity vector of the fit's model
      regressor_columns: 22        # 10 per body (+ n rotor-inertia columns when armature)
      armature: true               # the rotor-inertia columns are part of the full regressor
      index: [9, 11, 12, 19, 21]   # base columns in the full regressor
      names: [joint1.Izz, joint2.mcx, joint2.mcy, joint2.Izz, joint2.armature]
      beta: [...]                  # β (SI: kg, kg·m, kg·m²)
      beta_std: [...]              # their standard deviations
      locked_joints: []            # optional: the URDF's movable joints the fit held locked

A fit of some joints only (``fric identify --joints``: the others locked at their recorded
positions) identifies the rigid body of that locked arm: its gravity holds only with those joints
where they were, which a compensator cannot know, so :class:`IdentifiedGravity` refuses such a
section (``locked_joints`` not empty).

It is written only where β is determined in absolute terms: not with ``dynamics="urdf"`` (no β)
and not for the gear law with the rigid body identified (a scale s of β is undone by the
efficiencies η_f·s, η_b/s, so β, hence g, is known only up to that scale; the data cannot support
a gravity torque there).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping

import numpy as np
import pinocchio as pin

__all__ = ["RigidBody", "IdentifiedGravity", "parse_rigid_body", "rigid_body_from_fit",
           "identified_gravity", "RIGID_BODY_KEY"]

#: The top-level key of the section in ``joint_friction.yaml``.
RIGID_BODY_KEY = "rigid_body"

_PI_NAMES = ("m", "mcx", "mcy", "mcz", "Ixx", "Ixy", "Iyy", "Ixz", "Iyz", "Izz")
_KEYS = ("joints", "gravity", "regressor_columns", "armature", "index", "names", "beta",
         "beta_std")


@dataclass(frozen=True)
class RigidBody:
    """The ``rigid_body:`` section (module docstring), validated: ``joints`` (names, the
    regressor's row order), ``gravity`` (3,) [m/s²], ``regressor_columns`` (columns of the full
    regressor), ``armature`` (its rotor-inertia columns included), ``index`` (r,) base columns,
    ``names`` (r), ``beta`` (r,), ``beta_std`` (r,), ``locked_joints`` (the URDF's movable
    joints locked in the fit)."""

    joints: tuple
    gravity: np.ndarray
    regressor_columns: int
    armature: bool
    index: np.ndarray
    names: tuple
    beta: np.ndarray
    beta_std: np.ndarray
    locked_joints: tuple = ()

    def to_dict(self) -> dict:
        """The section as plain YAML types (lists, floats, ints, str) in the file's key order."""
        return {"joints": list(self.joints),
                "gravity": [float(x) for x in self.gravity],
                "regressor_columns": int(self.regressor_columns),
                "armature": bool(self.armature),
                "index": [int(i) for i in self.index],
                "names": list(self.names),
                "beta": [float(x) for x in self.beta],
                "beta_std": [float(x) for x in self.beta_std],
                "locked_joints": list(self.locked_joints)}


def rigid_body_from_fit(dyn, base, beta, beta_std) -> RigidBody:
    """The section of a fit's identified rigid body.

    Parameters
    ----------
    dyn : fric_core.transmission.urdf_dynamics.UrdfDynamics
        The fit's model (its joint order and gravity vector).
    base : BaseParameters
        The fit's base set (``index``, ``names``, ``armature``, ``map``).
    beta, beta_std : (r,) array_like
        The fitted base parameters and their standard deviations.

    Returns
    -------
    RigidBody
        Validated like a read section.
    """
    locked = []
    if getattr(dyn, "source", "<xml>") != "<xml>":  # the URDF's movable joints the fit locked
        full = pin.buildModelFromUrdf(dyn.source)
        locked = [full.names[j] for j in range(1, full.njoints)
                  if full.joints[j].nv == 1 and full.names[j] not in dyn.joint_names]
    section = {"joints": list(dyn.joint_names),
               "gravity": [float(x) for x in dyn.model.gravity.linear],
               "regressor_columns": int(base.map.shape[1]),
               "armature": bool(base.armature),
               "index": [int(i) for i in base.index],
               "names": [str(s) for s in base.names],
               "beta": [float(x) for x in beta],
               "beta_std": [float(x) for x in beta_std],
               "locked_joints": locked}
    return parse_rigid_body(section, "fit")


def _numbers(where: str, val, n: int | None, *, lo: float = -math.inf) -> np.ndarray:
    if not isinstance(val, (list, tuple)) or (n is not None and len(val) != n):
        want = "a list" if n is None else f"{n} numbers"
        got = f"{len(val)} entries" if isinstance(val, (list, tuple)) else repr(val)
        raise ValueError(f"{where}: expected {want}, got {got}")
    for i, x in enumerate(val):
        if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x) \
                or x < lo:
            need = "a finite number" + ("" if lo == -math.inf else f" >= {lo:g}")
            raise ValueError(f"{where}[{i}]: expected {need}, got {x!r}")
    return np.array(val, dtype=float)


def parse_rigid_body(section, source: str = "joint_friction") -> RigidBody:
    """Validate a ``rigid_body:`` section; ValueError naming the field.

    Parameters
    ----------
    section : mapping
        The section as loaded from YAML (or :meth:`RigidBody.to_dict`).
    source : str
        Name used in messages (the file path).

    Returns
    -------
    RigidBody
        The validated section.
    """
    where = f"{source}: {RIGID_BODY_KEY}"
    if not isinstance(section, Mapping):
        raise ValueError(f"{where}: expected a mapping with {', '.join(_KEYS)}, got "
                         f"{type(section).__name__}")
    missing = [k for k in _KEYS if k not in section]
    if missing:
        raise ValueError(f"{where}: missing {', '.join(missing)}")
    joints = section["joints"]
    if not isinstance(joints, (list, tuple)) or not joints \
            or not all(isinstance(j, str) and j for j in joints) or len(set(joints)) != len(joints):
        raise ValueError(f"{where}.joints: expected a list of distinct joint names, got "
                         f"{joints!r}")
    gravity = _numbers(f"{where}.gravity", section["gravity"], 3)
    cols = section["regressor_columns"]
    if isinstance(cols, bool) or not isinstance(cols, int) or cols < 10:
        raise ValueError(f"{where}.regressor_columns: expected an integer >= 10 (10 per body), "
                         f"got {cols!r}")
    armature = section["armature"]
    if not isinstance(armature, bool):
        raise ValueError(f"{where}.armature: expected true or false, got {armature!r}")
    index = section["index"]
    if not isinstance(index, (list, tuple)) or not index:
        raise ValueError(f"{where}.index: expected a non-empty list of column indices, got "
                         f"{index!r}")
    for i, x in enumerate(index):
        if isinstance(x, bool) or not isinstance(x, int) or not 0 <= x < cols:
            raise ValueError(f"{where}.index[{i}]: expected an integer in [0, {cols}) (a column "
                             f"of the full regressor), got {x!r}")
    if len(set(index)) != len(index):
        raise ValueError(f"{where}.index: repeated columns in {index!r}")
    r = len(index)
    names = section["names"]
    if not isinstance(names, (list, tuple)) or len(names) != r \
            or not all(isinstance(s, str) for s in names):
        raise ValueError(f"{where}.names: expected {r} strings (one per index), got {names!r}")
    beta = _numbers(f"{where}.beta", section["beta"], r)
    beta_std = _numbers(f"{where}.beta_std", section["beta_std"], r, lo=0.0)
    locked = section.get("locked_joints") or []
    if not isinstance(locked, (list, tuple)) or not all(isinstance(j, str) for j in locked) \
            or set(locked) & set(joints):
        raise ValueError(f"{where}.locked_joints: expected a list of joint names not in joints, "
                         f"got {locked!r}")
    return RigidBody(joints=tuple(joints), gravity=gravity, regressor_columns=int(cols),
                     armature=armature, index=np.array(index, dtype=int), names=tuple(names),
                     beta=beta, beta_std=beta_std, locked_joints=tuple(locked))


class IdentifiedGravity:
    """The identified gravity torque ``g(q) = Y(q, 0, 0) β̄`` (module docstring).

    Parameters
    ----------
    dyn : UrdfDynamics or str
        The arm's URDF (only its kinematics are used: the identified arm's, with exactly the
        section's joints, any order; ``q`` is in its joint order), or a URDF path / bundled
        name, loaded with the section's joints in the section's order.
    rigid_body : RigidBody or mapping
        The section (a mapping is validated by :func:`parse_rigid_body`).
    source : str
        Name used in messages (the file path).

    Raises
    ------
    ValueError
        Naming the field when the URDF is not the identified arm's: other joints, another
        number of bodies (``regressor_columns``), base columns of other names.
    """

    def __init__(self, dyn, rigid_body, source: str = "joint_friction"):
        from ..transmission.urdf_dynamics import UrdfDynamics

        rb = rigid_body if isinstance(rigid_body, RigidBody) else \
            parse_rigid_body(rigid_body, source)
        where = f"{source}: {RIGID_BODY_KEY}"
        if rb.locked_joints:
            raise ValueError(f"{where}.locked_joints: identified with {list(rb.locked_joints)} "
                             "locked at their recorded positions (fric identify --joints): its "
                             "gravity holds only with them there; identify every joint, or use "
                             "gravity: urdf")
        if not isinstance(dyn, UrdfDynamics):
            try:
                dyn = UrdfDynamics(dyn, joint_names=list(rb.joints))
            except Exception as e:  # UrdfError, Pinocchio's errors: one line
                raise ValueError(f"urdf: {e}") from None
        if set(dyn.joint_names) != set(rb.joints):
            raise ValueError(f"{where}.joints: identified for {list(rb.joints)}, the model has "
                             f"{list(dyn.joint_names)}: the identified gravity needs exactly the "
                             "identified arm's joints (any order)")
        model = dyn.model
        nr = 10 * (model.njoints - 1)
        cols = nr + (dyn.n if rb.armature else 0)
        if cols != rb.regressor_columns:
            raise ValueError(f"{where}.regressor_columns: {rb.regressor_columns} in the file, the "
                             f"URDF {dyn.source} gives {cols} ({model.njoints - 1} bodies"
                             f"{' + rotor inertias' if rb.armature else ''}): not the identified "
                             "arm")
        bodies = [model.names[j] for j in range(1, model.njoints)]
        for k, (i, name) in enumerate(zip(rb.index, rb.names)):
            want = f"{bodies[i // 10]}.{_PI_NAMES[i % 10]}" if i < nr else \
                f"{rb.joints[i - nr]}.armature"  # (in the section's joint order)
            if name != want:
                raise ValueError(f"{where}.names[{k}]: {name!r} in the file, column {i} of the "
                                 f"URDF {dyn.source}'s regressor is {want!r}: not the identified "
                                 "arm")
        self.dyn = dyn
        self.rigid_body = rb
        self.n = dyn.n
        self.joint_names = dyn.joint_names
        # a model of its own: the section's gravity vector, its own data (dyn's stays untouched)
        self._model = pin.Model(model)
        self._model.gravity.linear = rb.gravity
        self._data = self._model.createData()
        link = rb.index < nr  # rotor-inertia columns vanish at q̈ = 0
        self._beta = np.zeros(nr)
        self._beta[rb.index[link]] = rb.beta[link]
        self._zero = np.zeros(model.nv)
        self._g = np.zeros(model.nv)
        self._fin = np.zeros(self.n, dtype=bool)
        #: True: g by ``pin.computeGeneralizedGravity`` on equivalent inertias (module docstring);
        #: False: by the regressor
        self.equivalent_inertias = self._use_equivalent_inertias(dyn, rb, nr)

    def _use_equivalent_inertias(self, dyn, rb: RigidBody, nr: int) -> bool:
        """Put π* (``Y(q, 0, 0) π* = Y(q, 0, 0) β̄``, nearest to the URDF's π) into the model
        copy if its gravity equals the regressor's at random configurations (module
        docstring)."""
        rng = np.random.default_rng(0)
        lo = np.where(np.isfinite(dyn.lower), dyn.lower, -np.pi)
        hi = np.where(np.isfinite(dyn.upper), dyn.upper, np.pi)

        def gravity_regressor(q):
            return pin.computeJointTorqueRegressor(self._model, self._data, dyn._config(q),
                                                   self._zero, self._zero)

        Ys = np.vstack([gravity_regressor(q) for q in rng.uniform(lo, hi, size=(60, dyn.n))])
        pi = np.concatenate([dyn.model.inertias[i].toDynamicParameters()
                             for i in range(1, dyn.model.njoints)])
        pi_star = pi + np.linalg.lstsq(Ys, Ys @ (self._beta - pi), rcond=None)[0]
        model = pin.Model(self._model)
        for i in range(1, model.njoints):
            model.inertias[i] = pin.Inertia.FromDynamicParameters(pi_star[10 * (i - 1):10 * i])
        data = model.createData()
        for q in rng.uniform(lo, hi, size=(20, dyn.n)):
            g = pin.computeGeneralizedGravity(model, data, dyn._config(q))
            ref = gravity_regressor(q) @ self._beta
            if not (np.all(np.isfinite(g))
                    and np.max(np.abs(g - ref)) <= 1e-9 * (1.0 + np.max(np.abs(ref)))):
                return False
        self._model, self._data = model, data
        return True

    def torque(self, q, out=None) -> np.ndarray:
        """g(q) [N·m] at positions ``q`` (the model's joint order).

        Parameters
        ----------
        q : (n,) array_like
            Joint positions.
        out : (n,) ndarray, optional
            Written in place and returned (no allocation).

        Returns
        -------
        (n,) ndarray
            The identified gravity torque per joint (``out`` if given, else a new array).
        """
        q = np.asarray(q, dtype=float)
        if q.shape != (self.n,):
            raise ValueError(f"q: expected shape ({self.n},), got {q.shape}")
        if not math.isfinite(q.dot(q)) and not np.isfinite(q, out=self._fin).all():
            i = int(np.flatnonzero(~self._fin)[0])  # (q·q: one cheap test in the common case)
            raise ValueError(f"q: non-finite value {float(q[i])!r} at joint index {i}")
        dyn = self.dyn
        if self.equivalent_inertias:
            np.copyto(self._g, pin.computeGeneralizedGravity(self._model, self._data,
                                                             dyn._config(q)))
        else:
            Y = pin.computeJointTorqueRegressor(self._model, self._data, dyn._config(q),
                                                self._zero, self._zero)
            np.dot(Y, self._beta, out=self._g)
        if out is None:
            out = np.empty(self.n)
        if dyn._perm is None:
            np.copyto(out, self._g)
        else:
            np.take(self._g, dyn._perm, out=out)
        return out

    __call__ = torque


def identified_gravity(friction_set, dyn, source: str = "joint_friction") -> IdentifiedGravity:
    """The identified gravity of a ``joint_friction.yaml`` (its ``rigid_body:`` section).

    Parameters
    ----------
    friction_set : JointFrictionSet
        The read file (the section is in ``extra``).
    dyn : UrdfDynamics or str
        The arm's URDF, as for :class:`IdentifiedGravity`.
    source : str
        Name used in messages (the file path).

    Returns
    -------
    IdentifiedGravity
        ``.torque(q)``.

    Raises
    ------
    ValueError
        When the file has no ``rigid_body:`` section (saying which identifications write one),
        or the section or the URDF does not fit.
    """
    section = (friction_set.extra or {}).get(RIGID_BODY_KEY)
    if section is None:
        raise ValueError(f"{source}: no '{RIGID_BODY_KEY}:' section: the identified gravity is "
                         "written by `fric identify --dynamics identify` with the asymmetric "
                         "model (with --dynamics urdf the URDF's gravity is trusted: use gravity "
                         "urdf; the gear model identifies the rigid body only up to a scale)")
    return IdentifiedGravity(dyn, section, source)

