"""``transmission_sim``: an arm from a URDF with a gear transmission at every joint (paper 004,
algorithm (69), :class:`fric_core.transmission.geared_arm.GearedArm`), behaving like a
ros2_control-driven robot.

* subscribes ``effort_controller/commands`` (Float64MultiArray: actuator torques τ_u referred to
  the joint outputs, one per joint in ``joint_names`` order; dropped after ``command_timeout``),
  ``/robot_joint_commands`` (JointState: the same torques by joint name from ros2_control's
  topic-based hardware interface, NaN = no command yet: zero torque, held until the next;
  :mod:`fric_nodes.sim_topics`) and ``wrench`` (WrenchStamped: the
  external wrench acting on the end effector, at the ``ee_frame`` origin, in the axes of
  ``header.frame_id``: ``world_frame`` or ``ee_frame``; an empty frame_id means
  ``wrench_frame``). The latest valid wrench stays applied until the next one; an ``ee_frame``
  wrench turns with the end effector (it is rotated to world axes at every step);
* publishes ``joint_states`` and ``/robot_joint_states`` (position, velocity, effort = the
  commanded τ_u applied; each topic a parameter, "" = off) after every
  internal step h = 1/``rate``, stamped with the simulated time (the wall-clock time at start
  plus steps × h: the stamps are exactly h apart in both sync modes); ``~/markers`` (the arm as
  a line through its joints to the end effector, the end-effector force as an arrow, each joint
  a sphere: red stuck in static friction (velocity exactly 0), green slipping) and
  ``/diagnostics`` (well-posedness σ_max(P) (57) and per-joint ρ̂ (29) at the current pose,
  stuck joints, joints in their end stops, rejected inputs, solver failures).

Inputs that cannot be used (wrong length, non-finite entries, an unknown wrench frame) are
rejected with a count, a log line and a diagnostics WARN, and change nothing. A torque beyond the
joint's URDF effort limit (``<limit effort=...>``; where it is 0, absent or not finite:
``default_effort_limit``, 1000 N m, with a warning at start naming the joints) is clipped to it,
as the actuator saturates: a throttled log line, the clipped commands counted in diagnostics
(WARN in the period they came) and the clipped torque on ``joint_states.effort``. Likewise every
joint has a speed limit (``<limit velocity=...>``, else ``default_velocity_limit``, 10 rad/s): a
step ending faster is cut back to it, position included (counted, WARN); continuous joints'
angles are kept in (−π, π] (:mod:`fric_core.transmission.joint_bounds`). So any finite input
gives finite, bounded joint_states (a torque of 1e300 included). A step the core
cannot take (singular inertia at the current q, a non-finite result) holds the arm at rest where
it is and is reported as ERROR: joint_states never carry NaN. σ_max(P) ≥ 1 (ill-posed, (57))
is an ERROR in diagnostics; the step still runs (the projection's best effort). Bad parameters
(URDF errors, unknown joint names, bad γ/η) → ``main`` prints the parameter and exits 1.

Sync: ``realtime`` — a wall-clock timer at ``rate`` runs the steps due (50 ms catch-up at most);
``as_fast_as_possible`` — steps back to back (batches of ``_BATCH`` per callback), simulated time
only. Command age (``command_timeout``) is measured in simulated time. ``duration`` > 0: exit 0
when the simulated time reaches it.

Joint friction: ``joint_friction`` (a path to a ``joint_friction.yaml``, the layout
``fric identify`` writes; empty = none) gives every joint the identified (or "true") friction —
asymmetric Coulomb + viscous, or a ``law: curve`` piecewise-linear curve (semi-implicit: the
segment of the step's start velocity), levels below 0 as given (Cp + Cn ≥ 0), the file's effort
``offset`` left out (a measurement artefact, not a torque) — on the motor side of its gear and,
where the file has
``eta_f``/``eta_b`` (the gear model), the gear's efficiencies, replacing ``gamma_u``/``gamma_v``
(or ``eta_f``/``eta_b``) for those joints
(:meth:`fric_core.transmission.geared_arm.GearedArm.from_joint_friction`: the motor torque then
obeys ``τ_u = m q̈ + G(τ_load, v) + τ_f(v)``, the model the identifier fits). Joints are matched
by name; a joint missing from the file or a bad field stops the node with one line naming it. A
file with only ``eta_product`` (efficiencies undetermined) gives the Coulomb and viscous part
only, with a WARN.

Joint limits: with ``enforce_joint_limits`` (default) the URDF's position limits are hard end stops,
unilateral constraints solved in the implicit step
(:class:`fric_core.transmission.geared_arm.GearedArm`'s ``lower``/``upper``: the stop's impulse
makes a joint land exactly on its limit, an inelastic impact, and holds it there; a joint never
passes its limit for any finite input); otherwise they are only reported.
"""

from __future__ import annotations

import sys

import numpy as np
from diagnostic_msgs.msg import DiagnosticStatus
from geometry_msgs.msg import WrenchStamped
from visualization_msgs.msg import MarkerArray

from fric_core.joint_friction import read_joint_friction
from fric_core.transmission.joint_bounds import JointBounds
from fric_interfaces import names, qos
from fric_interfaces.transmission_params import SPECS
from fric_nodes.arm_markers import arm_markers
from fric_nodes.arm_sim import ArmSimNode, stop_sim
from fric_nodes.builders import build_arm, well_posedness
from fric_nodes.own_arm import declare_arm_node_params

from ._node_util import friction_laws_text, run_node, status

__all__ = ["TransmissionSim", "main"]


class TransmissionSim(ArmSimNode):
    """The node; :meth:`step_once` is one internal step (callable directly in tests)."""

    default_name = names.TRANSMISSION_SIM

    def _setup(self) -> None:
        v = self.values = declare_arm_node_params(self, "transmission_sim", SPECS)
        self.arm = build_arm(v)
        if v["joint_friction"]:
            self._load_joint_friction(v["joint_friction"])
        dyn = self.arm.dynamics
        self.ee_frame = dyn.ee_frame
        self._wrench = None  # (6,) world axes, applied in the step
        self._wrench_ee = None  # (6,) in ee_frame axes when the latest wrench came in that frame
        self._enforce = bool(v["enforce_joint_limits"])
        self._wrench_frame_default = v["wrench_frame"]
        self._smax0, self._rho0 = well_posedness(self.arm, self.arm.q)
        if self._smax0 >= 1.0:
            self.get_logger().error(
                f"sigma_max(P) = {self._smax0:.4g} >= 1 at the start: the transmissions are "
                "ill-posed (57); raise rotor_inertia or lower |gamma_v|")
        # actuator saturation and speed limits: the URDF's, or the stated defaults where it has
        # none (0, absent or non-finite); continuous joints wrap into (-pi, pi]
        bounds = JointBounds.from_dynamics(dyn, default_effort=v["default_effort_limit"],
                                           default_velocity=v["default_velocity_limit"])
        self._start_sim(self.arm.joint_names, 1.0 / v["rate"], bounds,
                        f"{dyn!r}: gamma_u {self.arm.gamma_u.tolist()}, gamma_v "
                        f"{self.arm.gamma_v.tolist()}, sigma_max(P) {self._smax0:.4g}")
        self.create_subscription(WrenchStamped, names.WRENCH, self._on_wrench, qos.CONTROL_SUB)

    def _load_joint_friction(self, path: str) -> None:
        """The arm with the joint friction (and efficiencies) of ``path``; ValueError naming
        the parameter, the file and the field."""
        try:
            fset = read_joint_friction(path)
            self.arm = self.arm.with_joint_friction(fset)
        except ValueError as e:
            raise ValueError(f"joint_friction: {e}") from None
        log = self.get_logger()
        und = self.arm.efficiencies_undetermined
        if und:
            log.warning(f"joint_friction: {path}: the gear efficiencies of {list(und)} are "
                        "undetermined (only eta_product: the rigid body was identified jointly); "
                        "simulating their Coulomb + viscous friction only, gears from "
                        "gamma_u/gamma_v")
        joints = self.arm.joint_names
        log.info("joint friction from " + path + " (the friction, without an effort offset): "
                 + friction_laws_text(joints, fset.for_joints(joints), offset=False))

    # -- inputs -------------------------------------------------------------------------------
    def _on_wrench(self, msg: WrenchStamped) -> None:
        f, t = msg.wrench.force, msg.wrench.torque
        w = np.array([f.x, f.y, f.z, t.x, t.y, t.z])
        if not np.isfinite(w).all():
            self._rejects.add("wrench non_finite", "wrench: non-finite entry")
            return
        frame = msg.header.frame_id or self._wrench_frame_default
        if frame == self.values["world_frame"]:
            self._wrench, self._wrench_ee = w, None
        elif frame == self.ee_frame:
            self._wrench_ee = w  # turned to world axes at every step (_world_wrench)
            self._wrench = self._world_wrench()
        else:
            self._rejects.add("wrench frame", f"wrench: header.frame_id {frame!r} is neither "
                         f"{self.values['world_frame']!r} nor {self.ee_frame!r}")

    def _world_wrench(self) -> np.ndarray:
        """The latest ee_frame wrench in world axes at the current pose."""
        _, R = self.arm.dynamics.ee_pose(self.arm.q)
        w = self._wrench_ee
        return np.concatenate([R @ w[:3], R @ w[3:]])

    # -- the physics (ArmSimNode's hooks) ----------------------------------------------------
    def _advance(self, tau: np.ndarray) -> None:
        """One step of (69) with the torques ``tau`` and the current wrench."""
        if self._wrench_ee is not None:
            self._wrench = self._world_wrench()
        self.arm.step(tau, self.h, wrench=self._wrench)

    def _state(self) -> tuple[np.ndarray, np.ndarray]:
        return self.arm.q.copy(), self.arm.v.copy()

    def _set_state(self, q: np.ndarray, v: np.ndarray) -> None:
        self.arm.set_state(q, v)

    # -- housekeeping -------------------------------------------------------------------------
    def markers(self) -> MarkerArray:
        """The arm, the end-effector force and the joints' stuck/slipping state for RViz."""
        dyn, q = self.arm.dynamics, self.arm.q
        p, _ = dyn.ee_pose(q)
        joints = [dyn.data.oMi[dyn.model.getJointId(j)].translation for j in self.joint_names]
        return arm_markers(self.values["marker_frame"], self.get_clock().now().to_msg(),
                           1.0 / self.values["marker_rate"], self.joint_names, joints, p,
                           np.zeros(3) if self._wrench is None else self._wrench[:3],
                           self.arm.state.stuck)

    def diagnostic_status(self) -> DiagnosticStatus:
        """The node's status: well-posedness, stuck joints, rejected inputs, step failures."""
        st = self.arm.state
        level, problems = DiagnosticStatus.OK, []

        def worse(lvl, text):
            nonlocal level
            level = max(level, lvl)
            problems.append(text)

        q = self.arm.q
        smax, rho = well_posedness(self.arm, q)  # at the current pose: P depends on q (52)
        well = smax < 1.0
        if not well:
            worse(DiagnosticStatus.ERROR, f"ill-posed: sigma_max(P) = {smax:.4g} >= 1 (57)")
        elif self.arm.ill_posed_steps:
            worse(DiagnosticStatus.WARN, f"sigma_max(P) >= 1 (57) in {self.arm.ill_posed_steps} "
                  "steps so far (well posed now)")
        bad_rho = [j for j, r in zip(self.joint_names, rho) if abs(r) >= 1.0]
        if bad_rho:
            worse(DiagnosticStatus.ERROR, f"|rho_hat| >= 1 (29) at joint(s) {bad_rho}")
        if self.arm.unconverged_steps:
            worse(DiagnosticStatus.WARN, f"{self.arm.unconverged_steps} steps where axproj did "
                  "not converge")
        self._sim_problems(worse, q, self.arm.dynamics.lower, self.arm.dynamics.upper,
                           self._enforce)
        eta_f, eta_b = self.arm.efficiencies
        kv = self._sim_key_values() + [
            ("sigma_max(P)", f"{smax:.6g}"), ("sigma_max(P) at start", f"{self._smax0:.6g}"),
            ("well posed", str(bool(well))),
            ("ill-posed steps", str(self.arm.ill_posed_steps)),
            ("unconverged steps", str(self.arm.unconverged_steps)),
            ("end-stop steps", str(self.arm.stop_steps)),
            ("end-stop steps by impact projection", str(self.arm.stop_unconverged))]
        if self.arm.joint_friction:
            kv.append(("joint friction", self.values["joint_friction"]))
            und = self.arm.efficiencies_undetermined
            if und:
                kv.append(("efficiencies undetermined", ",".join(und)))
        for i, j in enumerate(self.joint_names):
            kv += [(f"{j} gamma_u", f"{self.arm.gamma_u[i]:.6g}"),
                   (f"{j} gamma_v", f"{self.arm.gamma_v[i]:.6g}"),
                   (f"{j} eta_f", f"{eta_f[i]:.6g}"), (f"{j} eta_b", f"{eta_b[i]:.6g}"),
                   (f"{j} rho_hat", f"{rho[i]:.6g}"),
                   (f"{j} Cp, Cn [N m]", f"{self.arm.Cp[i]:.6g}, {self.arm.Cn[i]:.6g}"),
                   (f"{j} bp, bn [N m s/rad]", f"{self.arm.bp[i]:.6g}, {self.arm.bn[i]:.6g}"),
                   (f"{j} backdrivable", str(bool(self.arm.backdrivable[i]))),
                   (f"{j} stuck", str(bool(st.stuck[i])))]
            kv += self._joint_key_values(i, q[i])
        return status(f"{self.get_fully_qualified_name()}: arm", ",".join(self.joint_names),
                      level, problems, "ok", kv)


def main(args=None) -> int:
    """Run the simulated arm until Ctrl-C/SIGTERM or ``duration``; exit 0 (1 on bad
    parameters, with a message naming the parameter)."""
    return run_node(TransmissionSim, names.TRANSMISSION_SIM, args, done=lambda n: n.finished,
                    on_stop=stop_sim)


if __name__ == "__main__":
    sys.exit(main())
