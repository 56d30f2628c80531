"""Parameters of the ``transmission_sim`` node, and the pure helper that turns them into the
simulated arm (:class:`fric_core.arm.GearedArm`, algorithm (69) of paper 004).

Parameters (``ros__parameters``; see config/arm_transmission.yaml)::

    urdf               string    URDF file path or bundled name (planar_2link, arm7) (read-only)
    robot_description  string    URDF text; when non-empty it wins over urdf (read-only)
    joint_names        string[]  simulated joints, in command order; [] = every movable joint
    ee_frame           string    end-effector frame of the external wrench; "" = last frame
    world_frame        string    the URDF's fixed base frame name for wrenches and markers
    wrench_frame       string    frame of a wrench whose header.frame_id is empty
    gamma_u, gamma_v   double[]  asymmetry coefficients (47), one value for all or one per joint
    eta_f, eta_b       double[]  efficiencies (27); when given they replace gamma_u, gamma_v
    rotor_inertia      double[]  m: input-side inertia referred to the joint (49) [kg m²]
    damping            double[]  joint viscosity D [N m s/rad]
    gravity            double[3] [m/s²]
    initial_positions  double[]  joint positions at start, one per joint; [] = all 0 [rad]
    enforce_joint_limits bool    the URDF position limits are hard end stops (else only reported)
    rate               double    internal step rate, 1/h (69) [Hz]
    sync               string    realtime | as_fast_as_possible
    duration, command_timeout, marker_frame, marker_rate, diagnostics_period
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from fric_core.transmission.geared_arm import GearedArm, per_joint
from fric_core.transmission import asymmetry_from_efficiencies

from .parameters import ParamSpec

__all__ = ["SYNCS", "SPECS", "build_arm", "well_posedness"]

SYNCS = ("realtime", "as_fast_as_possible")

SPECS = (
    ParamSpec("urdf", "planar_2link", "URDF file path, or a bundled name (planar_2link, arm7)",
              read_only=True),
    ParamSpec("robot_description", "", "URDF XML text; non-empty wins over urdf",
              read_only=True),
    ParamSpec("joint_names", [], "simulated joints in command order ([] = every movable "
              "joint; the others are locked at 0)", read_only=True, list_of=str),
    ParamSpec("ee_frame", "", "end-effector frame (external wrench, force marker); '' = the "
              "URDF's last frame", read_only=True),
    ParamSpec("world_frame", "world", "name of the arm's fixed base frame (world-axes "
              "wrenches)", read_only=True),
    ParamSpec("wrench_frame", "world", "frame of a WrenchStamped whose header.frame_id is empty "
              "(world_frame or ee_frame)", read_only=True),
    ParamSpec("gamma_u", [0.0], "asymmetry coefficient gamma_u (47): one value, or one per "
              "joint", read_only=True),
    ParamSpec("gamma_v", [0.0], "asymmetry coefficient gamma_v (47): >= 1 is self-locking: one "
              "value, or one per joint", read_only=True),
    ParamSpec("eta_f", [], "forward efficiencies (27); non-empty: replace gamma_u, gamma_v "
              "(with eta_b)", read_only=True, list_of=float),
    ParamSpec("eta_b", [], "backward efficiencies (27); <= 0 is self-locking", read_only=True,
              list_of=float),
    ParamSpec("rotor_inertia", [0.01], "input-side inertia m referred to the joint (49)",
              unit="kg m^2", min=0.0, read_only=True),
    ParamSpec("damping", [0.0], "joint viscosity D", unit="N m s/rad", min=0.0,
              read_only=True),
    ParamSpec("gravity", [0.0, 0.0, -9.81], "gravity in the world frame", unit="m/s^2",
              read_only=True),
    ParamSpec("initial_positions", [], "joint positions at start, one per joint in joint_names "
              "order ([] = all 0)", unit="rad", read_only=True, list_of=float),
    ParamSpec("enforce_joint_limits", True, "the URDF's position limits are hard end stops "
              "(unilateral constraints: a joint never passes its limit); false: only reported",
              read_only=True),
    ParamSpec("rate", 1000.0, "internal step rate 1/h; one joint_states per step", unit="Hz",
              min=1.0, max=20000.0, read_only=True),
    ParamSpec("sync", "realtime", "realtime: steps follow the wall clock; as_fast_as_possible: "
              "steps back to back (simulated time only)", read_only=True, choices=SYNCS),
    ParamSpec("duration", 0.0, "simulated time after which the node exits 0; 0 = forever",
              unit="s", min=0.0, read_only=True),
    ParamSpec("command_timeout", 0.1, "a command older than this (simulated time) is dropped: "
              "zero actuator torque", unit="s", min=1e-4, max=3600.0),
    ParamSpec("marker_frame", "world", "frame of the ~/markers", read_only=True),
    ParamSpec("marker_rate", 20.0, "~/markers rate", unit="Hz", min=0.1, max=100.0,
              read_only=True),
    ParamSpec("diagnostics_period", 1.0, "/diagnostics period", unit="s", min=0.05, max=60.0,
              read_only=True),
)


def _gammas(values: Mapping[str, Any], names: tuple) -> tuple[np.ndarray, np.ndarray]:
    ef, eb = list(values["eta_f"]), list(values["eta_b"])
    if not ef and not eb:
        return (per_joint("gamma_u", _scalar(values["gamma_u"]), names),
                per_joint("gamma_v", _scalar(values["gamma_v"]), names))
    if not ef or not eb:
        raise ValueError(f"{'eta_b' if ef else 'eta_f'}: eta_f and eta_b go together")
    ef = per_joint("eta_f", _scalar(ef), names)
    eb = per_joint("eta_b", _scalar(eb), names)
    pairs = []
    for j, f, b in zip(names, ef, eb):
        try:
            pairs.append(asymmetry_from_efficiencies(float(f), float(b)))
        except ValueError as e:
            raise ValueError(f"{e} (joint {j})") from None
    return np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])


def _scalar(value):
    """A one-element list means 'the same for every joint'."""
    value = list(value)
    return value[0] if len(value) == 1 else value


def build_arm(values: Mapping[str, Any]) -> GearedArm:
    """The simulated arm of the parameter values; ``ValueError`` naming the parameter for a
    bad URDF (:class:`fric_core.arm_dynamics.UrdfError`), unknown joint or frame names, bad
    per-joint values and a singular inertia."""
    from fric_core.transmission.urdf_dynamics import UrdfDynamics

    kw = dict(joint_names=list(values["joint_names"]) or None,
              ee_frame=values["ee_frame"] or None, gravity=list(values["gravity"]))
    text = values["robot_description"]
    try:
        if text.strip():
            dyn = UrdfDynamics.from_xml(text, **kw)
        else:
            dyn = UrdfDynamics(values["urdf"], **kw)
    except ValueError as e:
        msg = str(e)
        if msg.startswith("urdf:") and text.strip():
            msg = "robot_description:" + msg[len("urdf:"):]
        raise ValueError(msg) from None
    names = dyn.joint_names
    if values["wrench_frame"] not in (values["world_frame"], dyn.ee_frame):
        raise ValueError(f"wrench_frame: {values['wrench_frame']!r} is neither world_frame "
                         f"{values['world_frame']!r} nor ee_frame {dyn.ee_frame!r}")
    gu, gv = _gammas(values, names)
    m = per_joint("rotor_inertia", _scalar(values["rotor_inertia"]), names, minimum=0.0)
    d = per_joint("damping", _scalar(values["damping"]), names, minimum=0.0)
    q0 = list(values["initial_positions"])
    q0 = per_joint("initial_positions", q0, names) if q0 else np.zeros(len(names))
    if values["enforce_joint_limits"]:
        out = [j for j, x, lo, hi in zip(names, q0, dyn.lower, dyn.upper) if not lo <= x <= hi]
        if out:
            raise ValueError(f"initial_positions: joint(s) {out} start outside their URDF "
                             "limits (enforce_joint_limits is true)")
    try:
        stops = dict(lower=dyn.lower, upper=dyn.upper) if values["enforce_joint_limits"] else {}
        return GearedArm(dyn, gu, gv, m, damping=d, q0=q0, on_ill_posed="ignore", **stops)
    except ValueError as e:
        msg = str(e)
        if msg.startswith("m:"):
            msg = "rotor_inertia:" + msg[2:]
        raise ValueError(msg) from None


def well_posedness(arm: GearedArm, q: np.ndarray) -> tuple[float, np.ndarray]:
    """σ_max(P) of (69b)/(57) at ``q``, and per joint the 1-DOF ρ̂ (29) with the joint's own
    inertia M_ii(q) as the output side: well posed iff σ_max(P) < 1 (each |ρ̂_i| < 1 is
    necessary for a joint driven alone)."""
    M = arm.dynamics.terms(np.asarray(q, float), np.zeros(arm.n), False)[0] + np.diag(arm.m_v)
    Mhat = M + np.diag(arm.m)
    B = np.diag(arm.gamma_u * arm.m) - arm.gamma_v[:, None] * M
    try:
        P = B @ np.linalg.inv(Mhat)
        smax = float(np.linalg.norm(P, 2))
    except np.linalg.LinAlgError:
        smax = float("inf")
    Mii = np.diag(M)
    rho = (arm.gamma_u * arm.m - arm.gamma_v * Mii) / (arm.m + Mii)
    return smax, rho
