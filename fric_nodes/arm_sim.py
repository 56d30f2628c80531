"""What the arm simulators share (``transmission_sim``, ``mujoco_sim``): the command inputs of
both ros2_control conventions (:class:`~fric_nodes.sim_topics.SimTopics`), effort limits and
speed limits (:class:`~fric_core.transmission.joint_bounds.JointBounds`), the brakes of
``hold_until_command``, command timeouts, the step with its failure handling, joint_states
stamped with the simulated time, the two pacings (``realtime``, ``as_fast_as_possible``),
``duration``, and the diagnostics counters of all that.

A simulator is an :class:`ArmSimNode` whose ``_setup`` declares its parameters, builds its
physics and calls :meth:`ArmSimNode._start_sim`; it implements three hooks:

* ``_advance(tau)``: one step of length ``self.h`` with the actuator torques ``tau`` (the
  commanded efforts, clipped at the effort limits; zero without a live command); raises
  ``ValueError`` for a step the physics cannot take;
* ``_state()``: copies of the joint positions and velocities, in ``joint_names`` order;
* ``_set_state(q, v)``: put them (after a speed-limit cut, or to hold the arm after a failure;
  ``_hold(q)`` may do more, e.g. restore what a failed step reset);

and its own ``diagnostic_status`` built from :meth:`ArmSimNode._sim_problems`,
:meth:`ArmSimNode._sim_key_values` and :meth:`ArmSimNode._joint_key_values`.
"""

from __future__ import annotations

import time

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from visualization_msgs.msg import MarkerArray

from fric_core.transmission.joint_bounds import JointBounds
from fric_interfaces import names, qos
from fric_nodes.sim_topics import SimTopics

from ._node_util import FricNode, Housekeeping, RejectLog, sleep_ok

__all__ = ["ArmSimNode", "stop_sim"]

_BATCH = 50  # as_fast_as_possible: steps per callback
_MAX_LAG_S = 0.05  # realtime: further behind than this, skip ahead instead of catching up


class ArmSimNode(FricNode, abstract=True):
    """An arm simulator behaving like a ros2_control-driven robot (module docstring);
    :meth:`step_once` is one internal step (callable directly in tests)."""

    #: where the joint limits come from, for messages ("URDF", or "MJCF" for a MuJoCo file)
    limits_from = "URDF"

    def _start_sim(self, joint_names, h: float, bounds: JointBounds, describe: str) -> None:
        """Everything but the physics: call at the end of ``_setup`` with the simulated joints
        (command order), the step ``h`` [s], their bounds and a description of the physics
        for the start-up log line (``self.values`` holds the parameters)."""
        v = self.values
        self.joint_names = tuple(joint_names)
        self.h = h
        n = len(self.joint_names)
        self._tau = np.zeros(n)
        self._zero = np.zeros(n)
        self._cmd_step = None  # step index of the latest valid command
        self._cmd_held = False  # it came as a JointState command: robot_joint_commands_timeout
        self._braked = bool(v["hold_until_command"])  # held until the first valid command
        self._bounds = bounds
        self._effort = bounds.effort
        self._effort_default = {self.joint_names.index(j) for j in bounds.effort_defaulted}
        self._log_default_limits()
        self._speed_limited = 0  # steps that ended faster than a joint's speed limit (cut back)
        self._speed_limited_period = 0
        self._speed_limited_last = ""
        self._clipped = 0  # commands with an entry beyond the effort limit (clipped)
        self._clipped_period = 0
        self._clipped_last = ""
        self._rejects = RejectLog(self.get_logger(), "input")
        self._step_errors = 0
        self._last_error = ""
        self._timeouts = 0
        self._timed_out = False
        self.steps = 0
        self.finished = False
        self._js = JointState()
        self._js.name = list(self.joint_names)
        #: both conventions' command inputs and state outputs (fric_nodes.sim_topics)
        self.topics = SimTopics(self, self.joint_names, v, self._rejects, self._apply_command)
        self._marker_pub = self.create_publisher(MarkerArray, names.MARKERS, qos.INFO)
        self._diag_pub = self.create_publisher(DiagnosticArray, names.DIAGNOSTICS, qos.INFO)
        self._house = Housekeeping()
        self.create_timer(1.0 / v["marker_rate"], self._house.timer(self._publish_markers))
        self.create_timer(v["diagnostics_period"], self._house.timer(self.publish_diagnostics))
        self._start_ns = time.monotonic_ns()
        self._stamp0_ns = time.time_ns()  # joint_states stamp of simulated time 0
        if v["sync"] == "realtime":
            self.create_timer(self.h, self._on_realtime)
        else:
            self.create_timer(1e-4, self._on_fast)
        self.get_logger().info(f"{describe}, {v['sync']} at {v['rate']:g} Hz; "
                               f"{self.topics.describe()}"
                               + ("; joints held until the first command (hold_until_command)"
                                  if self._braked else ""))

    def _log_default_limits(self) -> None:
        """One warning per limit the model does not give, naming the joints and the default."""
        b, v = self._bounds, self.values
        for what, joints, value, unit, param in (
                ("effort", b.effort_defaulted, v["default_effort_limit"], "N m (N",
                 "default_effort_limit"),
                ("velocity", b.velocity_defaulted, v["default_velocity_limit"], "rad/s (m/s",
                 "default_velocity_limit")):
            if joints:
                self.get_logger().warning(
                    f"no {self.limits_from} {what} limit ("
                    + (f"<limit {what}> absent, 0 or not finite" if self.limits_from == "URDF"
                       else "actuatorfrcrange not limited" if what == "effort"
                       else "MuJoCo has none") + ") for "
                    f"{list(joints)}: bounded at {param} = {value:g} {unit} for a prismatic "
                    f"joint); set {param} to change it")
        cont = [self.joint_names[i] for i in b.continuous]
        if cont:
            self.get_logger().info(f"continuous joints {cont}: angles kept in (-pi, pi]")

    # -- inputs -------------------------------------------------------------------------------
    def _on_command(self, msg: Float64MultiArray) -> None:
        """An ``effort_controller/commands`` message (the subscription's callback)."""
        self.topics.on_effort_commands(msg)

    def _apply_command(self, tau: np.ndarray, held: bool, commanded: bool) -> None:
        """A valid command of either input (:class:`~fric_nodes.sim_topics.SimTopics`): clipped
        at the effort limits; ``held``: a JointState command (robot_joint_commands_timeout);
        ``commanded`` False (every entry NaN: no command yet) keeps the brakes on."""
        lim = self._effort
        if (np.abs(tau) > lim).any():
            over = np.abs(tau) > lim
            self._clipped += 1
            self._clipped_period += 1
            which = np.flatnonzero(over)
            self._clipped_last = ", ".join(  # the clipped joints only, each with its name
                f"{self.joint_names[i]} {tau[i]:.6g} N m to {np.copysign(lim[i], tau[i]):g}"
                + (" (default_effort_limit)" if i in self._effort_default else "")
                for i in which)
            source = ("effort limit" if self._effort_default.intersection(which.tolist())
                      else f"{self.limits_from} effort limit")
            self.get_logger().warning(f"effort command beyond the {source}, clipped: "
                                      f"{self._clipped_last}", throttle_duration_sec=1.0)
            np.clip(tau, -lim, lim, out=self._tau)
        else:
            self._tau[:] = tau
        self._cmd_step = self.steps
        self._cmd_held = held
        if self._braked and commanded:
            self._braked = False
            self.get_logger().info(f"first command at {self.steps * self.h:.3f} s: joints "
                                   "released (hold_until_command)")

    def _live_effort(self) -> np.ndarray:
        """The torques of this step: the latest command while it is live, else zero (a timeout
        counted once per lapse)."""
        if self._cmd_held:  # 0: held until the next (the topic-based interface's convention)
            limit = self.values["robot_joint_commands_timeout"] / self.h or np.inf
        else:
            limit = self.values["command_timeout"] / self.h
        live = self._cmd_step is not None and self.steps - self._cmd_step <= limit
        if self._cmd_step is not None and not live and not self._timed_out:
            self._timeouts += 1
        self._timed_out = self._cmd_step is not None and not live
        return self._tau if live else self._zero

    # -- stepping -----------------------------------------------------------------------------
    def _hold(self, q: np.ndarray) -> None:
        """After a failed step: the arm at rest at ``q``."""
        self._set_state(q, np.zeros(len(self.joint_names)))

    def step_once(self) -> None:
        """One step with the current command, bounded, then publish joint_states."""
        tau = self._live_effort()
        q_prev, _ = self._state()
        try:
            if not self._braked:  # else held where they start (at rest) until the first command
                self._advance(tau)
            q, v = self._state()
            ok = bool(np.isfinite(v).all())
            if ok and self._bounds.bound_state(q_prev, q, v, self.h):
                if self._bounds.speed_limited.any():
                    self._speed_limit_reached()
                self._set_state(q, v)
            ok = ok and bool(np.isfinite(q).all())
            if not ok:
                self._last_error = "non-finite step result"
        except ValueError as e:
            ok, self._last_error = False, str(e)
        if not ok:
            self._step_errors += 1
            self.get_logger().error(f"step failed, arm held at rest: {self._last_error}",
                                    throttle_duration_sec=1.0)
            self._hold(q_prev)
            q, v = self._state()
        self.steps += 1
        js = self._js
        ns = self._stamp0_ns + round(self.steps * self.h * 1e9)
        js.header.stamp.sec, js.header.stamp.nanosec = ns // 1_000_000_000, ns % 1_000_000_000
        js.position = q.tolist()
        js.velocity = v.tolist()
        js.effort = tau.tolist()
        self.topics.publish(js)
        end = self.values["duration"]
        if end > 0.0 and self.steps * self.h >= end - 1e-12:
            self.finished = True

    def _speed_limit_reached(self) -> None:
        """Count a step cut back to the speed limits and say which joints (throttled)."""
        self._speed_limited += 1
        self._speed_limited_period += 1
        self._speed_limited_last = ", ".join(
            f"{self.joint_names[i]} {self._bounds.velocity[i]:g}"
            for i in np.flatnonzero(self._bounds.speed_limited))
        self.get_logger().warning(f"joint speed beyond its limit, cut back to it: "
                                  f"{self._speed_limited_last} rad/s",
                                  throttle_duration_sec=1.0)

    def _on_fast(self) -> None:
        for _ in range(_BATCH):
            if self.finished:
                return
            self.step_once()
        self._house.after_output()

    def _on_realtime(self) -> None:
        due = int((time.monotonic_ns() - self._start_ns) * 1e-9 / self.h) + 1
        if (due - self.steps) * self.h > _MAX_LAG_S:
            self.steps = due - 1  # re-anchor: skip the simulated time we cannot catch up
        while self.steps < due and not self.finished:
            self.step_once()
        self._house.after_output()

    def _publish_markers(self) -> None:
        self._marker_pub.publish(self.markers())

    # -- diagnostics ----------------------------------------------------------------------------
    def _sim_problems(self, worse, q: np.ndarray, lower, upper, enforced: bool) -> None:
        """Report the shared problems through ``worse(level, text)``: failed steps, rejected
        inputs, a command timeout, joints in their end stops (``enforced``) or beyond their
        limits, clipped commands and speed-limit cuts of this period."""
        if self._step_errors:
            worse(DiagnosticStatus.ERROR, f"{self._step_errors} failed steps (arm held), last: "
                  f"{self._last_error}")
        rejected = self._rejects.period_problem()
        if rejected:
            worse(DiagnosticStatus.WARN, rejected)
        if self._timed_out:
            worse(DiagnosticStatus.WARN, "command timeout: zero actuator torque")
        j = self.joint_names
        if enforced:
            at = [n for n, a, b, x in zip(j, lower, upper, q) if x <= a or x >= b]
            if at:
                worse(DiagnosticStatus.WARN, f"in the end stop ({self.limits_from} limit): {at}")
        else:
            outside = [n for n, a, b, x in zip(j, lower, upper, q) if not a <= x <= b]
            if outside:
                worse(DiagnosticStatus.WARN, f"beyond the {self.limits_from} limits (not "
                      f"enforced): {outside}")
        if self._clipped_period:
            worse(DiagnosticStatus.WARN, f"{self._clipped_period} effort commands clipped at "
                  f"the {self.limits_from} effort limit, last: {self._clipped_last}")
        if self._speed_limited_period:
            worse(DiagnosticStatus.WARN, f"{self._speed_limited_period} steps cut back to the "
                  f"joint speed limit, last: {self._speed_limited_last} rad/s")
        self._clipped_period = 0
        self._speed_limited_period = 0

    def _sim_key_values(self) -> list[tuple[str, str]]:
        """The shared counters: time and steps, failed steps, timeouts, clipped commands,
        speed-limit cuts, rejected inputs per reason, and where the last command came from."""
        kv = [("simulated time [s]", f"{self.steps * self.h:.4f}"), ("steps", str(self.steps)),
              ("failed steps", str(self._step_errors)),
              ("command timeouts", str(self._timeouts)),
              ("effort commands clipped", str(self._clipped)),
              ("steps at the speed limit", str(self._speed_limited))]
        kv += self._rejects.key_values()
        t = self.topics
        kv.append(("last command from", t.topics[t.source] if t.source else "none yet"))
        if t.source == "robot_joint_commands_topic":
            kv.append(("joints without a command (NaN: zero effort)",
                       ",".join(t.uncommanded()) or "none"))
        return kv

    def _joint_key_values(self, i: int, q: float) -> list[tuple[str, str]]:
        """Joint ``i``'s limits in use and its position."""
        j = self.joint_names[i]
        return [(f"{j} effort limit [N m]", f"{self._effort[i]:g}"
                 + (" (default)" if i in self._effort_default else "")),
                (f"{j} velocity limit [rad/s]", f"{self._bounds.velocity[i]:g}"
                 + (" (default)" if j in self._bounds.velocity_defaulted else "")),
                (f"{j} position [rad]", f"{q:+.6f}")]


def stop_sim(node: ArmSimNode, context_ok: bool) -> None:
    """``run_node``'s ``on_stop`` for a simulator: a last diagnostics report and a log line."""
    if context_ok:
        node.publish_diagnostics()
        sleep_ok(0.05)
    node.get_logger().info(f"stopped after {node.steps} steps ({node.steps * node.h:.3f} s)")
