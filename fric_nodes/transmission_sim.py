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
import time

import numpy as np
from builtin_interfaces.msg import Duration
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from geometry_msgs.msg import Point, WrenchStamped
from sensor_msgs.msg import JointState
from std_msgs.msg import ColorRGBA, Float64MultiArray
from visualization_msgs.msg import Marker, MarkerArray

from fric_core.joint_friction import read_joint_friction
from fric_core.transmission.joint_bounds import JointBounds
from fric_interfaces import names, qos
from fric_interfaces.rviz_check import marker_lifetime
from fric_interfaces.transmission_params import SPECS
from fric_nodes.builders import build_arm, well_posedness
from fric_nodes.own_arm import arm_setup_overrides
from fric_nodes.sim_topics import SimTopics

from ._node_util import (FricNode, Housekeeping, RejectLog, declare_params,
                         friction_laws_text, run_node, sleep_ok, status, unused_overrides)

__all__ = ["TransmissionSim", "main"]

_BATCH = 50  # as_fast_as_possible: steps per callback
_MAX_LAG_S = 0.05  # realtime: further behind than this, skip ahead instead of catching up
_FORCE_SCALE = 0.02  # marker arrow length per newton [m/N]
_MIN_ARROW = 1e-3    # a shorter force arrow (< 0.05 N) is not drawn [m]


class TransmissionSim(FricNode):
    """The node; :meth:`step_once` is one internal step (callable directly in tests)."""

    default_name = names.TRANSMISSION_SIM

    def _setup(self) -> None:
        derived = arm_setup_overrides(self, "transmission_sim")
        v = self.values = declare_params(self, SPECS)
        typos = unused_overrides(self, [s.name for s in SPECS])
        if typos:
            raise ValueError(f"{typos[0]}: not a parameter of {names.TRANSMISSION_SIM}")
        for line in derived:
            self.get_logger().info(line)
        self.arm = build_arm(v)
        if v["joint_friction"]:
            self._load_joint_friction(v["joint_friction"])
        dyn = self.arm.dynamics
        self.joint_names = self.arm.joint_names
        self.ee_frame = dyn.ee_frame
        self.h = 1.0 / v["rate"]
        n = self.arm.n
        self._tau = np.zeros(n)
        self._cmd_step = None  # step index of the latest valid command
        self._cmd_held = False  # it came as a JointState command: robot_joint_commands_timeout
        self._wrench = None  # (6,) world axes, applied in the step
        self._wrench_ee = None  # (6,) in ee_frame axes when the latest wrench came in that frame
        self._enforce = bool(v["enforce_joint_limits"])
        self._braked = bool(v["hold_until_command"])  # held until the first valid command
        # actuator saturation and speed limits: the URDF's, or the stated defaults where it has
        # none (0, absent or non-finite); continuous joints wrap into (-pi, pi]
        self._bounds = JointBounds.from_dynamics(dyn, default_effort=v["default_effort_limit"],
                                                 default_velocity=v["default_velocity_limit"])
        self._effort = self._bounds.effort
        self._effort_default = {self.joint_names.index(j) for j in self._bounds.effort_defaulted}
        self._log_default_limits()
        self._speed_limited = 0  # steps that ended faster than a joint's speed limit (cut back)
        self._speed_limited_period = 0
        self._speed_limited_last = ""
        self._clipped = 0  # commands with an entry beyond the effort limit (clipped)
        self._clipped_period = 0
        self._clipped_last = ""
        self._wrench_frame_default = v["wrench_frame"]
        self._rejects = RejectLog(self.get_logger(), "input")
        self._step_errors = 0
        self._last_error = ""
        self._timeouts = 0
        self._timed_out = False
        self.steps = 0
        self.finished = False
        self._smax0, self._rho0 = well_posedness(self.arm, self.arm.q)
        if self._smax0 >= 1.0:
            self.get_logger().error(
                f"sigma_max(P) = {self._smax0:.4g} >= 1 at the start: the transmissions are "
                "ill-posed (57); raise rotor_inertia or lower |gamma_v|")
        self._js = JointState()
        self._js.name = list(self.joint_names)
        #: both conventions' command inputs and state outputs (fric_nodes.sim_topics)
        self.topics = SimTopics(self, self.joint_names, v, self._rejects, self._apply_command)
        self._marker_pub = self.create_publisher(MarkerArray, names.MARKERS, qos.INFO)
        self._diag_pub = self.create_publisher(DiagnosticArray, names.DIAGNOSTICS, qos.INFO)
        self.create_subscription(WrenchStamped, names.WRENCH, self._on_wrench, qos.CONTROL_SUB)
        self._house = Housekeeping()
        self.create_timer(1.0 / v["marker_rate"], self._house.timer(self._publish_markers))
        self.create_timer(v["diagnostics_period"], self._house.timer(self.publish_diagnostics))
        self._start_ns = time.monotonic_ns()
        self._stamp0_ns = time.time_ns()  # joint_states stamp of simulated time 0
        if v["sync"] == "realtime":
            self.create_timer(self.h, self._on_realtime)
        else:
            self.create_timer(1e-4, self._on_fast)
        self.get_logger().info(f"{dyn!r}: gamma_u {self.arm.gamma_u.tolist()}, gamma_v "
                               f"{self.arm.gamma_v.tolist()}, sigma_max(P) {self._smax0:.4g}, "
                               f"{v['sync']} at {v['rate']:g} Hz; {self.topics.describe()}"
                               + ("; joints held until the first command (hold_until_command)"
                                  if self._braked else ""))

    def _log_default_limits(self) -> None:
        """One warning per limit the URDF does not give, naming the joints and the default."""
        b, v = self._bounds, self.values
        for what, joints, value, unit, param in (
                ("effort", b.effort_defaulted, v["default_effort_limit"], "N m (N",
                 "default_effort_limit"),
                ("velocity", b.velocity_defaulted, v["default_velocity_limit"], "rad/s (m/s",
                 "default_velocity_limit")):
            if joints:
                self.get_logger().warning(
                    f"no URDF {what} limit (<limit {what}> absent, 0 or not finite) for "
                    f"{list(joints)}: bounded at {param} = {value:g} {unit} for a prismatic "
                    f"joint); set {param} to change it")
        cont = [self.joint_names[i] for i in b.continuous]
        if cont:
            self.get_logger().info(f"continuous joints {cont}: angles kept in (-pi, pi]")

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
                      else "URDF effort limit")
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

    # -- stepping -----------------------------------------------------------------------------
    def step_once(self) -> None:
        """One step of (69) with the current command and wrench, then publish joint_states."""
        if self._cmd_held:  # 0: held until the next (the topic-based interface's convention)
            limit = self.values["robot_joint_commands_timeout"] / self.h or np.inf
        else:
            limit = self.values["command_timeout"] / self.h
        live = self._cmd_step is not None and self.steps - self._cmd_step <= limit
        if self._cmd_step is not None and not live and not self._timed_out:
            self._timeouts += 1
        self._timed_out = self._cmd_step is not None and not live
        tau = self._tau if live else np.zeros(self.arm.n)
        q_prev = self.arm.q
        if self._wrench_ee is not None:
            self._wrench = self._world_wrench()
        try:
            if not self._braked:  # else held where they start (at rest) until the first command
                self.arm.step(tau, self.h, wrench=self._wrench)
            q, v = self.arm.q, self.arm.v
            ok = bool(np.isfinite(v).all())
            if ok and self._bounds.bound_state(q_prev, q, v, self.h):
                if self._bounds.speed_limited.any():
                    self._speed_limit_reached()
                self.arm.set_state(q, v)
            ok = ok and bool(np.isfinite(q).all())
            if not ok:
                self._last_error = "non-finite step result"
        except ValueError as e:
            ok, self._last_error = False, str(e)
        if not ok:
            self._step_errors += 1
            self.get_logger().error(f"step failed, arm held at rest: {self._last_error}",
                                    throttle_duration_sec=1.0)
            self.arm.set_state(q_prev, np.zeros(self.arm.n))
        self.steps += 1
        js = self._js
        ns = self._stamp0_ns + round(self.steps * self.h * 1e9)
        js.header.stamp.sec, js.header.stamp.nanosec = ns // 1_000_000_000, ns % 1_000_000_000
        js.position = self.arm.q.tolist()
        js.velocity = self.arm.v.tolist()
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

    # -- housekeeping -------------------------------------------------------------------------
    def _publish_markers(self) -> None:
        self._marker_pub.publish(self.markers())

    def markers(self) -> MarkerArray:
        """The arm, the end-effector force and the joints' stuck/slipping state for RViz."""
        dyn, q = self.arm.dynamics, self.arm.q
        stamp = self.get_clock().now().to_msg()
        frame = self.values["marker_frame"]
        sec, nsec = marker_lifetime(1.0 / self.values["marker_rate"])  # outlives the period
        life = Duration(sec=sec, nanosec=nsec)
        out = MarkerArray()
        p, _ = dyn.ee_pose(q)
        f = np.zeros(3) if self._wrench is None else self._wrench[:3]
        # no force on the end effector (no /wrench, or a zero one): the arrow is deleted rather
        # than drawn with zero length (RViz draws a stray head for a degenerate arrow)
        drawn = _FORCE_SCALE * float(np.linalg.norm(f)) >= _MIN_ARROW
        arrow = Marker(type=Marker.ARROW, action=Marker.ADD if drawn else Marker.DELETE,
                       ns="ee_force", id=0, lifetime=life)
        arrow.header.frame_id, arrow.header.stamp = frame, stamp
        arrow.points = [Point(x=float(p[0]), y=float(p[1]), z=float(p[2])),
                        Point(x=float(p[0] + _FORCE_SCALE * f[0]),
                              y=float(p[1] + _FORCE_SCALE * f[1]),
                              z=float(p[2] + _FORCE_SCALE * f[2]))]
        arrow.scale.x, arrow.scale.y, arrow.scale.z = 0.01, 0.02, 0.03
        arrow.color = ColorRGBA(r=1.0, g=0.6, b=0.0, a=1.0)
        arrow.pose.orientation.w = 1.0
        out.markers.append(arrow)
        stuck = self.arm.state.stuck
        links = Marker(type=Marker.LINE_STRIP, action=Marker.ADD, ns="links", id=0,
                       lifetime=life)
        links.header.frame_id, links.header.stamp = frame, stamp
        links.pose.orientation.w = 1.0
        links.scale.x = 0.02
        links.color = ColorRGBA(r=0.7, g=0.7, b=0.75, a=1.0)
        links.points = [Point()]  # the base (world origin)
        for j in self.joint_names:
            o = dyn.data.oMi[dyn.model.getJointId(j)].translation
            links.points.append(Point(x=float(o[0]), y=float(o[1]), z=float(o[2])))
        links.points.append(Point(x=float(p[0]), y=float(p[1]), z=float(p[2])))
        out.markers.append(links)
        for i, j in enumerate(self.joint_names):
            origin = dyn.data.oMi[dyn.model.getJointId(j)].translation
            s = Marker(type=Marker.SPHERE, action=Marker.ADD, ns="joint_stuck", id=i,
                       lifetime=life, text=j)
            s.header.frame_id, s.header.stamp = frame, stamp
            s.pose.position = Point(x=float(origin[0]), y=float(origin[1]), z=float(origin[2]))
            s.pose.orientation.w = 1.0
            s.scale.x = s.scale.y = s.scale.z = 0.05
            s.color = (ColorRGBA(r=0.9, g=0.1, b=0.1, a=0.9) if stuck[i]
                       else ColorRGBA(r=0.1, g=0.8, b=0.1, a=0.9))
            out.markers.append(s)
        return out

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
        if self._step_errors:
            worse(DiagnosticStatus.ERROR, f"{self._step_errors} failed steps (arm held), last: "
                  f"{self._last_error}")
        if self.arm.unconverged_steps:
            worse(DiagnosticStatus.WARN, f"{self.arm.unconverged_steps} steps where axproj did "
                  "not converge")
        rejected = self._rejects.period_problem()
        if rejected:
            worse(DiagnosticStatus.WARN, rejected)
        if self._timed_out:
            worse(DiagnosticStatus.WARN, "command timeout: zero actuator torque")
        lo, hi = self.arm.dynamics.lower, self.arm.dynamics.upper
        if self._enforce:
            at = [j for j, a, b, x in zip(self.joint_names, lo, hi, q) if x <= a or x >= b]
            if at:
                worse(DiagnosticStatus.WARN, f"in the end stop (URDF limit): {at}")
        else:
            outside = [j for j, a, b, x in zip(self.joint_names, lo, hi, q) if not a <= x <= b]
            if outside:
                worse(DiagnosticStatus.WARN, f"beyond the URDF limits (not enforced): {outside}")
        if self._clipped_period:
            worse(DiagnosticStatus.WARN, f"{self._clipped_period} effort commands clipped at "
                  f"the URDF effort limit, last: {self._clipped_last}")
        if self._speed_limited_period:
            worse(DiagnosticStatus.WARN, f"{self._speed_limited_period} steps cut back to the "
                  f"joint speed limit, last: {self._speed_limited_last} rad/s")
        eta_f, eta_b = self.arm.efficiencies
        kv = [("simulated time [s]", f"{self.steps * self.h:.4f}"), ("steps", str(self.steps)),
              ("sigma_max(P)", f"{smax:.6g}"), ("sigma_max(P) at start", f"{self._smax0:.6g}"),
              ("well posed", str(bool(well))),
              ("ill-posed steps", str(self.arm.ill_posed_steps)),
              ("unconverged steps", str(self.arm.unconverged_steps)),
              ("failed steps", str(self._step_errors)),
              ("command timeouts", str(self._timeouts)),
              ("effort commands clipped", str(self._clipped)),
              ("steps at the speed limit", str(self._speed_limited)),
              ("end-stop steps", str(self.arm.stop_steps)),
              ("end-stop steps by impact projection", str(self.arm.stop_unconverged))]
        kv += self._rejects.key_values()
        t = self.topics
        kv.append(("last command from", t.topics[t.source] if t.source else "none yet"))
        if t.source == "robot_joint_commands_topic":
            kv.append(("joints without a command (NaN: zero effort)",
                       ",".join(t.uncommanded()) or "none"))
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
                   (f"{j} stuck", str(bool(st.stuck[i]))),
                   (f"{j} effort limit [N m]", f"{self._effort[i]:g}"
                    + (" (default)" if i in self._effort_default else "")),
                   (f"{j} velocity limit [rad/s]", f"{self._bounds.velocity[i]:g}"
                    + (" (default)" if j in self._bounds.velocity_defaulted else "")),
                   (f"{j} position [rad]", f"{q[i]:+.6f}")]
        self._clipped_period = 0
        self._speed_limited_period = 0
        return status(f"{self.get_fully_qualified_name()}: arm", ",".join(self.joint_names),
                      level, problems, "ok", kv)


def _shutdown(node: TransmissionSim, context_ok: bool) -> None:
    if context_ok:
        node.publish_diagnostics()
        sleep_ok(0.05)
    node.get_logger().info(f"stopped after {node.steps} steps ({node.steps * node.h:.3f} s)")


def main(args=None) -> int:
    """Run the simulated arm until Ctrl-C/SIGTERM or ``duration``; exit 0 (1 on bad
    parameters, with a message naming the parameter)."""
    return run_node(TransmissionSim, names.TRANSMISSION_SIM, args, done=lambda n: n.finished,
                    on_stop=_shutdown)


if __name__ == "__main__":
    sys.exit(main())
