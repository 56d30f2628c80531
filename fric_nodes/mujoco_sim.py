"""``mujoco_sim``: an arm simulated by MuJoCo (an MJCF file, or the URDF compiled by MuJoCo) with
the joint friction of a ``joint_friction.yaml`` solved exactly at every step by
:class:`fric_core.mujoco.FrictionStepper`, behaving like a ros2_control-driven robot: the same
topics, command handling, bounds and diagnostics as ``transmission_sim``
(:mod:`fric_nodes.arm_sim`), and the same parameters where they mean the same
(:mod:`fric_interfaces.mujoco_params`; the model: :mod:`fric_nodes.mujoco_model`).

* subscribes ``effort_controller/commands`` (Float64MultiArray, one torque per joint in
  ``joint_names`` order; dropped after ``command_timeout``) and ``/robot_joint_commands``
  (JointState by name from ros2_control's topic-based hardware interface, NaN = no command yet:
  zero torque, held until the next); the torques drive one motor per joint (``ctrl``);
* publishes ``joint_states`` and ``/robot_joint_states`` (position, velocity, effort = the
  commanded torque applied) after every MuJoCo step (``opt.timestep`` = 1/``rate``), stamped
  with the simulated time; ``~/markers`` (the joints red while held by static friction) and
  ``/diagnostics``.

Friction: ``joint_friction`` (``fric identify``'s ``joint_friction.yaml``) gives the joints it
names their identified friction — asymmetric Coulomb + viscous or the curve, and the gear's
load-dependent friction where it has ``eta_f``/``eta_b`` (the motor torque is the gear's input
torque) — solved exactly on MuJoCo's own mass matrix (a held joint does not creep), their MuJoCo
``frictionloss`` set to 0. Joints the file does not name keep MuJoCo's own joint friction and
damping; the file's joints that are welded (not in ``joint_names``) are left out (logged).
Without a file every joint keeps MuJoCo's own (``mj_step``).

Inputs that cannot be used are rejected and counted; commands beyond the effort limit are
clipped (counted); a step ending faster than a joint's speed limit is cut back; a step MuJoCo
cannot take (its instability warnings: a non-finite acceleration, velocity or position, after
which MuJoCo resets the data) holds the arm at rest where it was, reported as ERROR. MuJoCo's
joint limits are its soft limit constraints (``solreflimit``), not the hard stops of
``transmission_sim``. There is no ``wrench`` input (apply loads in the MJCF).

MuJoCo is the optional extra ``[mujoco]``: without it ``main`` prints one line saying so and
exits 1.
"""

from __future__ import annotations

import dataclasses
import sys

import numpy as np
from diagnostic_msgs.msg import DiagnosticStatus
from visualization_msgs.msg import MarkerArray

from fric_interfaces import names
from fric_interfaces.mujoco_params import SPECS
from fric_nodes.arm_markers import arm_markers
from fric_nodes.arm_sim import ArmSimNode, stop_sim
from fric_nodes.own_arm import declare_arm_node_params

from ._node_util import friction_laws_text, run_node, status

__all__ = ["MujocoSim", "main", "MISSING_EXTRA"]

#: what ``main`` prints when the ``mujoco`` package is not installed
MISSING_EXTRA = "mujoco_sim needs the mujoco extra: pip install 'fric[mujoco]'"
_ARMED = 2  # MuJoCo's instability warning counters before a step (MujocoSim._advance)


def mujoco_missing() -> bool:
    """Whether the ``mujoco`` package cannot be imported."""
    try:
        import mujoco  # noqa: F401
    except ImportError:
        return True
    return False


class MujocoSim(ArmSimNode):
    """The node; :meth:`step_once` is one MuJoCo step (callable directly in tests)."""

    default_name = names.MUJOCO_SIM

    def _setup(self) -> None:
        if mujoco_missing():
            raise ImportError(MISSING_EXTRA)
        import mujoco

        from fric_nodes.mujoco_model import build_mujoco_arm

        self._mj = mujoco
        v = self.values = declare_arm_node_params(self, "mujoco_sim", SPECS)
        arm = self.arm = build_mujoco_arm(v)
        self.limits_from = "MJCF" if v["mjcf"] else "URDF"
        self.model, self.data = arm.model, arm.data
        if arm.welded:
            self.get_logger().info(f"not simulated, welded at 0: {list(arm.welded)}")
        self.stepper = None
        self._friction_index = np.zeros(0, dtype=np.intp)  # mapped joint -> its index here
        if v["joint_friction"]:
            self._load_joint_friction(v["joint_friction"])
        self._warnings = self.data.warning.number  # MuJoCo's warning counters (a view)
        self._unstable = np.array([int(w) for w in (mujoco.mjtWarning.mjWARN_BADQPOS,
                                                    mujoco.mjtWarning.mjWARN_BADQVEL,
                                                    mujoco.mjtWarning.mjWARN_BADQACC)])
        self._qpos_prev = self.data.qpos.copy()  # the whole state before a step (failure hold)
        self._stuck = np.zeros(len(arm.joint_names), bool)
        self._enforce = bool(v["enforce_joint_limits"])
        m = self.model
        self._start_sim(arm.joint_names, m.opt.timestep, arm.bounds,
                        f"MuJoCo {mujoco.__version__}, {arm.source}: {m.nv} dofs, "
                        f"{'Euler' if v['integrator'] == 'euler' else 'implicitfast'}, "
                        + (f"FrictionStepper on {list(self.stepper.joint_names)}"
                           if self.stepper else "MuJoCo's own joint friction"))

    def _load_joint_friction(self, path: str) -> None:
        """FrictionStepper with the friction of ``path`` on the joints the model simulates;
        ValueError naming the parameter, the file and the field."""
        import warnings

        from fric_core.joint_friction import read_joint_friction
        from fric_core.mujoco import FrictionStepper

        log = self.get_logger()
        try:
            fset = read_joint_friction(path)
        except ValueError as e:
            raise ValueError(f"joint_friction: {e}") from None
        left_out = [j for j in fset.names if j in self.arm.welded]
        if left_out:
            log.info(f"joint_friction: {left_out} are welded (not in joint_names): left out")
        fset = dataclasses.replace(fset, joints={j: f for j, f in fset.joints.items()
                                                 if j not in left_out})
        if not fset.joints:
            log.warning(f"joint_friction: {path} names none of the simulated joints: MuJoCo's "
                        "own joint friction only")
            return
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                self.stepper = FrictionStepper(self.model, self.data, fset)
            except ValueError as e:
                raise ValueError(f"joint_friction: {e}") from None
        for w in caught:
            log.warning(str(w.message))
        st = self.stepper
        self._friction_index = np.array([self.arm.joint_names.index(j) for j in st.joint_names],
                                        dtype=np.intp)
        if st.efficiencies_undetermined:
            log.warning(f"joint_friction: {path}: the gear efficiencies of "
                        f"{list(st.efficiencies_undetermined)} are undetermined (only "
                        "eta_product): simulating their Coulomb + viscous friction only")
        others = [j for j in self.arm.joint_names if j not in st.joint_names]
        log.info("joint friction from " + path + " (the friction, without an effort offset): "
                 + friction_laws_text(st.joint_names, fset.for_joints(st.joint_names),
                                      offset=False)
                 + (f"; MuJoCo's own for {others}" if others else ""))

    # -- the physics (ArmSimNode's hooks) ----------------------------------------------------
    def _advance(self, tau: np.ndarray) -> None:
        """One MuJoCo step with the motors at ``tau``; ValueError when MuJoCo warned of an
        unstable step (it then resets the data)."""
        d = self.data
        np.copyto(self._qpos_prev, d.qpos)
        d.ctrl[self.arm.ctrl] = tau
        # MuJoCo's instability checks warn, reset the data (counters included) and count 1: a
        # counter armed at 2 reads 1 after a reset (and MuJoCo prints nothing: it prints a
        # warning only when its counter was 0; the failure is this node's logged error)
        self._warnings[self._unstable] = _ARMED
        if self.stepper is None:
            self._mj.mj_step(self.model, d)
        else:
            self.stepper.step()
        if (self._warnings[self._unstable] != _ARMED).any():
            kinds = ", ".join(self._mj.mjtWarning(int(k)).name for k in self._unstable
                              if self._warnings[k] not in (0, _ARMED)) or "a reset"
            raise ValueError(f"MuJoCo: {kinds} (an unstable step; MuJoCo reset the data)")

    def _state(self) -> tuple[np.ndarray, np.ndarray]:
        return self.data.qpos[self.arm.qpos], self.data.qvel[self.arm.dofs]

    def _set_state(self, q: np.ndarray, v: np.ndarray) -> None:
        self.data.qpos[self.arm.qpos] = q
        self.data.qvel[self.arm.dofs] = v

    def _hold(self, q: np.ndarray) -> None:
        """After a failed step: the whole model back where it was, at rest."""
        d = self.data
        np.copyto(d.qpos, self._qpos_prev)
        d.qvel[:] = 0.0
        d.qacc_warmstart[:] = 0.0
        if self.stepper is not None:
            self.stepper.reset()
        self._mj.mj_forward(self.model, d)

    # -- housekeeping -------------------------------------------------------------------------
    def _stuck_now(self) -> np.ndarray:
        """The joints held by static friction in the last step (FrictionStepper's; the others:
        velocity exactly 0)."""
        stuck = self._stuck
        np.equal(self.data.qvel[self.arm.dofs], 0.0, out=stuck)
        if self.stepper is not None:
            stuck[self._friction_index] = self.stepper.stuck
        return stuck

    def markers(self) -> MarkerArray:
        """The arm, and the joints' stuck/slipping state for RViz."""
        d = self.data
        return arm_markers(self.values["marker_frame"], self.get_clock().now().to_msg(),
                           1.0 / self.values["marker_rate"], self.joint_names,
                           d.xanchor[self.arm.joint_ids], d.xpos[self.arm.ee_body], np.zeros(3),
                           self._stuck_now())

    def diagnostic_status(self) -> DiagnosticStatus:
        """The node's status: friction solves, stuck joints, rejected inputs, step failures."""
        level, problems = DiagnosticStatus.OK, []

        def worse(lvl, text):
            nonlocal level
            level = max(level, lvl)
            problems.append(text)

        st = self.stepper
        q, _ = self._state()
        if st is not None and st.unconverged_steps:
            worse(DiagnosticStatus.WARN, f"{st.unconverged_steps} steps where the friction solve "
                  "did not converge")
        if st is not None and st.ill_posed_steps:
            worse(DiagnosticStatus.WARN, f"sigma_max(P) >= 1 (57) in {st.ill_posed_steps} steps "
                  "(the gear friction's well-posedness)")
        self._sim_problems(worse, q, self.arm.lower, self.arm.upper, self._enforce)
        kv = self._sim_key_values() + [("model", self.arm.source),
                                       ("integrator", self.values["integrator"])]
        if st is not None:
            kv += [("joint friction", self.values["joint_friction"]),
                   ("friction joints", ",".join(st.joint_names)),
                   ("unconverged steps", str(st.unconverged_steps)),
                   ("ill-posed steps", str(st.ill_posed_steps))]
        stuck = self._stuck_now()
        k = {int(i): n for n, i in enumerate(self._friction_index)}
        for i, j in enumerate(self.joint_names):
            kv.append((f"{j} stuck", str(bool(stuck[i]))))
            if i in k:
                kv.append((f"{j} friction torque [N m]", f"{st.friction_torque[k[i]]:.6g}"))
            kv += self._joint_key_values(i, q[i])
        return status(f"{self.get_fully_qualified_name()}: arm", ",".join(self.joint_names),
                      level, problems, "ok", kv)


def main(args=None) -> int:
    """Run the MuJoCo arm until Ctrl-C/SIGTERM or ``duration``; exit 0 (1 on bad parameters,
    with a message naming the parameter, or without the ``mujoco`` package: one line)."""
    if mujoco_missing():
        print(MISSING_EXTRA, file=sys.stderr)
        return 1
    return run_node(MujocoSim, names.MUJOCO_SIM, args, done=lambda n: n.finished,
                    on_stop=stop_sim)


if __name__ == "__main__":
    sys.exit(main())
