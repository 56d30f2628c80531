"""``mujoco_sim``'s parameters → a MuJoCo model and data (:func:`build_mujoco_arm`). This module and
:mod:`fric_core.mujoco` are the only ones of fric that import ``mujoco`` (the extra
``[mujoco]``); ``mujoco_sim`` imports this module only once it knows ``mujoco`` is installed.

The model:

* an MJCF file (``mjcf``), or the URDF (``urdf`` / ``robot_description``) compiled by MuJoCo,
  after fric's own URDF checks (:class:`~fric_core.transmission.urdf_dynamics.UrdfDynamics`,
  which also gives the URDF's effort and speed limits and continuous joints: the same bounds as
  ``transmission_sim``). For a URDF, fixed links stay bodies (``fusestatic`` off: the end
  effector's frame remains) and rotational inertias below 1e-9 kg m² are raised to it (MuJoCo's
  ``boundinertia``: it refuses the zero inertia of a point mass, which Pinocchio takes);
* the simulated joints ``joint_names`` (every hinge and slide joint when empty); the model's
  other hinge and slide joints are deleted, so their bodies are welded where the model puts
  them at 0 (as ``transmission_sim`` locks them at 0), with the equality constraints (URDF
  ``<mimic>``) that name them;
* one motor per simulated joint (``fric_effort_<joint>``, gear 1: ``ctrl`` is the joint torque,
  in ``qfrc_actuator``, where :class:`~fric_core.mujoco.FrictionStepper` takes the input torque
  of a gear); actuators of the file stay at ``ctrl`` 0;
* ``rate`` → ``opt.timestep``, ``integrator``, ``gravity``; ``enforce_joint_limits`` false turns
  the simulated joints' limits off; ``rotor_inertia`` / ``damping`` (when given) → the joints'
  ``armature`` / ``damping``.

The MJCF's effort limits are its joints' ``actuatorfrcrange`` (where limited); an MJCF has no
speed limits or continuous joints (``default_velocity_limit`` bounds every joint).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import mujoco
import numpy as np

from fric_core.transmission.geared_arm import per_joint
from fric_core.transmission.joint_bounds import JointBounds
from fric_core.transmission.urdf_dynamics import UrdfDynamics, select_joints

__all__ = ["MujocoArm", "build_mujoco_arm", "ACTUATOR_PREFIX", "MIN_URDF_INERTIA"]

#: the name of the motor added to each simulated joint: ACTUATOR_PREFIX + joint name
ACTUATOR_PREFIX = "fric_effort_"
#: a URDF body's rotational inertias are raised to at least this [kg m²] (MuJoCo's boundinertia)
MIN_URDF_INERTIA = 1e-9

_HINGE_SLIDE = (mujoco.mjtJoint.mjJNT_HINGE, mujoco.mjtJoint.mjJNT_SLIDE)
_INTEGRATORS = {"euler": mujoco.mjtIntegrator.mjINT_EULER,
                "implicitfast": mujoco.mjtIntegrator.mjINT_IMPLICITFAST}


@dataclass
class MujocoArm:
    """A compiled arm and what ``mujoco_sim`` needs to drive it.

    Attributes
    ----------
    model, data
        The ``mujoco.MjModel`` and its ``mujoco.MjData`` at the initial positions.
    joint_names : tuple of str
        The simulated joints, in command order.
    qpos, dofs, ctrl : (n,) int arrays
        Their ``qpos`` and ``qvel`` addresses and their motors' ``ctrl`` indices.
    joint_ids : (n,) int array
        Their MuJoCo joint ids.
    lower, upper : (n,) arrays
        Their position limits (±inf where none).
    bounds : JointBounds
        Their effort and speed limits and continuous joints.
    ee_body : int
        The end effector's body id.
    source : str
        ``mjcf: PATH``, ``urdf: PATH`` or ``robot_description``.
    welded : tuple of str
        The model's hinge and slide joints not simulated (welded).
    """

    model: Any
    data: Any
    joint_names: tuple
    qpos: np.ndarray
    dofs: np.ndarray
    ctrl: np.ndarray
    joint_ids: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    bounds: JointBounds
    ee_body: int
    source: str
    welded: tuple


def _first_line(e: Exception) -> str:
    return " ".join(str(e).split("\n")[:2]).strip()


def _spec(values: Mapping[str, Any], wanted: list):
    """The MjSpec of the parameters, the URDF's dynamics (None for an MJCF), the parameter that
    named the source and its text for messages."""
    if values["mjcf"]:
        try:
            return mujoco.MjSpec.from_file(values["mjcf"]), None, "mjcf", values["mjcf"]
        except ValueError as e:
            raise ValueError(f"mjcf: MuJoCo cannot read {values['mjcf']}: {_first_line(e)}") \
                from None
    text = values["robot_description"]
    kw = dict(joint_names=wanted or None, gravity=list(values["gravity"]))
    try:
        if text.strip():
            dyn, param, where = UrdfDynamics.from_xml(text, **kw), "robot_description", "the text"
        else:
            dyn = UrdfDynamics(values["urdf"], **kw)
            param, where = "urdf", dyn.source
    except ValueError as e:
        msg = str(e)
        if msg.startswith("urdf:") and text.strip():
            msg = "robot_description:" + msg[len("urdf:"):]
        raise ValueError(msg) from None
    try:
        spec = (mujoco.MjSpec.from_string(text) if text.strip()
                else mujoco.MjSpec.from_file(dyn.source))
    except ValueError as e:
        raise ValueError(f"{param}: MuJoCo cannot read {where}: {_first_line(e)}") from None
    spec.compiler.fusestatic = False
    spec.compiler.boundinertia = max(spec.compiler.boundinertia, MIN_URDF_INERTIA)
    return spec, dyn, param, where


def _choose_joints(spec, wanted: list, dyn, where: str) -> tuple[list, list]:
    """The simulated joints and the model's other hinge and slide joints."""
    movable = [j.name for j in spec.joints if j.type in _HINGE_SLIDE]
    if not movable:
        raise ValueError(f"joint_names: {where} has no hinge or slide joint to simulate")
    if dyn is not None and not wanted:
        wanted = list(dyn.joint_names)
    names = select_joints(wanted or None, movable, where)
    return names, [j for j in movable if j not in names]


def _weld(spec, joints: list) -> None:
    """Delete ``joints`` (their bodies welded at joint value 0) and the equalities naming them."""
    gone = set(joints)
    for eq in list(spec.equalities):
        if eq.type == mujoco.mjtEq.mjEQ_JOINT and ({eq.name1, eq.name2} & gone):
            spec.delete(eq)
    for name in joints:
        spec.delete(spec.joint(name))


def build_mujoco_arm(values: Mapping[str, Any]) -> MujocoArm:
    """The MuJoCo arm of ``mujoco_sim``'s parameter values (module docstring).

    Parameters
    ----------
    values
        The node's parameters (:data:`fric_interfaces.mujoco_params.SPECS`).

    Returns
    -------
    MujocoArm
        The model, its data at ``initial_positions`` (``mj_forward`` done) and the joints'
        addresses and bounds.

    Raises
    ------
    ValueError
        Naming the parameter: a file MuJoCo cannot read or compile, unknown joints or
        ``ee_frame``, per-joint values of the wrong length or below 0, initial positions
        outside enforced limits.
    """
    wanted = list(values["joint_names"])
    spec, dyn, param, where = _spec(values, wanted)
    names, welded = _choose_joints(spec, wanted, dyn, where)
    _weld(spec, welded)
    spec.option.timestep = 1.0 / float(values["rate"])
    spec.option.integrator = _INTEGRATORS[values["integrator"]]
    spec.option.gravity = np.asarray(values["gravity"], dtype=float)
    for j in names:
        if not values["enforce_joint_limits"]:
            spec.joint(j).limited = mujoco.mjtLimited.mjLIMITED_FALSE
        spec.add_actuator(name=ACTUATOR_PREFIX + j, target=j, trntype=mujoco.mjtTrn.mjTRN_JOINT)
    try:
        model = spec.compile()
    except ValueError as e:
        raise ValueError(f"{param}: MuJoCo cannot compile {where}: {_first_line(e)}") from None
    ids = np.array([mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, j) for j in names],
                   dtype=np.intp)
    dofs = model.jnt_dofadr[ids].astype(np.intp)
    for p, field in (("rotor_inertia", model.dof_armature), ("damping", model.dof_damping)):
        given = list(values[p])
        if given:
            field[dofs] = per_joint(p, given[0] if len(given) == 1 else given, names,
                                    minimum=0.0)
    limited = model.jnt_limited[ids].astype(bool)
    lower = np.where(limited, model.jnt_range[ids, 0], -np.inf)
    upper = np.where(limited, model.jnt_range[ids, 1], np.inf)
    data = mujoco.MjData(model)
    qadr = model.jnt_qposadr[ids].astype(np.intp)
    q0 = list(values["initial_positions"])
    if q0:
        q0 = per_joint("initial_positions", q0, names)
        out = [j for j, x, lo, hi in zip(names, q0, lower, upper) if not lo <= x <= hi]
        if out:
            raise ValueError(f"initial_positions: joint(s) {out} start outside their limits "
                             "(enforce_joint_limits is true)")
        data.qpos[qadr] = q0
    mujoco.mj_forward(model, data)
    defaults = dict(default_effort=values["default_effort_limit"],
                    default_velocity=values["default_velocity_limit"])
    if dyn is not None:
        bounds = JointBounds.from_dynamics(dyn, **defaults)
    else:
        frc = np.where(model.jnt_actfrclimited[ids].astype(bool),
                       np.abs(model.jnt_actfrcrange[ids]).max(axis=1), np.inf)
        bounds = JointBounds(names, frc, np.full(len(names), np.inf),
                             np.zeros(len(names), bool), **defaults)
    ee = values["ee_frame"]
    if ee:
        ee_body = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, ee)
        if ee_body < 0:
            raise ValueError(f"ee_frame: no body {ee!r} in the model")
    else:
        ee_body = model.nbody - 1
    ctrl = np.array([mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_ACTUATOR, ACTUATOR_PREFIX + j)
                     for j in names], dtype=np.intp)
    source = "robot_description" if param == "robot_description" else f"{param}: {where}"
    return MujocoArm(model, data, tuple(names), qadr, dofs, ctrl, ids, lower, upper, bounds,
                     int(ee_body), source, tuple(welded))
