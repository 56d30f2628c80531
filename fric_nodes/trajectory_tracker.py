"""``trajectory_tracker``: plays a joint trajectory on an effort-controlled arm with a PD law — a
stand-in for ros2_controllers' ``joint_trajectory_controller`` with an effort command interface,
so the arm workflow (excite → record → identify → compensate) runs without a ros2_control stack.

* trajectory: a CSV (``trajectory_file``, e.g. from ``fric excite``; read by
  :func:`fric_core.trajectory.read_trajectory_csv`), a built-in sinusoid
  ``q_j = center_j − A_j·cos(2π f_j t)`` (``sine_amplitude`` non-empty), or a
  trajectory_msgs/JointTrajectory on ``~/joint_trajectory`` (replaces the one playing; without
  any of them the node holds the first measured position until a message comes);
* subscribes ``joint_states``; every state gives one command, published on ``command_topic``
  (std_msgs/Float64MultiArray, ``joints`` order; default ``effort_controller/commands`` drives
  ``transmission_sim`` directly; remap it to ``friction_compensator``'s input in the compensated
  chain)::

      τ = τ_ff + Kp·(q_d − q) + Kd·(q̇_d − q̇),   clipped to ±max_effort

  with ``τ_ff`` none, the URDF's gravity g(q_d), or its inverse dynamics
  M(q_d)q̈_d + h(q_d, q̇_d) + m·q̈_d (``feed_forward``; m = ``rotor_inertia``);
* the clock starts once ``command_topic`` has ``wait_for_subscribers`` subscribers (until then
  the first measured position is held); its time base is the joint_states header stamp
  (simulated time from ``transmission_sim``), without the stream's pauses (a stamp step above
  ``max_state_gap`` — a realtime simulator that skipped time it could not keep up with, a lost
  connection — advances the trajectory clock by one regular step, so the setpoint does not jump
  away from an arm that did not move): the tracker holds the first measured position for
  ``start_delay``, moves to the trajectory's first point in ``approach_time`` (minimum jerk, rest
  to rest), plays the trajectory ``loops`` times, holds the last point for ``hold_time``, then
  (``exit_when_done``) exits 0 — with ``on_exit="shutdown"`` in a launch file that ends the run;
* loops (:class:`fric_core.looped_trajectory.LoopedTrajectory`, the same for a CSV, the sinusoid
  and a message): a trajectory whose end meets its start (position within 1e-6 rad, velocity
  within 1e-4 rad/s: a periodic excitation of ``fric excite``) is played back to back; any other
  (e.g. a sinusoid over 1.5 periods) gets a return segment between plays, per joint the quintic
  from its end state to its start state (position, velocity and acceleration continuous at both
  seams), as short as the trajectory's own peak speed and acceleration allow; the start-up log
  line says which and how long;
* publishes ``~/tracking_error`` (sensor_msgs/JointState: position q_d − q, velocity q̇_d − q̇,
  effort the command; stamped like the state), ``/diagnostics`` (phase, RMS error per joint,
  commands clipped, rejected inputs, watchdog trips). At exit it prints the RMS tracking error per
  joint over the played trajectory (after ``rms_after`` s) and, with ``result_file``, writes it
  and the time series (t, q_d, q, v_d, v, command; at most ``log_capacity`` samples) to an
  ``.npz``.

Watchdog: no valid joint_states for ``watchdog_timeout`` (wall clock) → one zero command; the
trajectory pauses until states come again (see ``max_state_gap``). Stop (SIGINT/SIGTERM, or
done): a final zero command. Inputs that cannot be used (missing joints, NaN, a stamp going
back) are rejected with a count, a throttled log line and a diagnostics WARN; bad parameters
(an unreadable CSV, a joint not in it, a URDF problem) → ``main`` prints one line naming the
problem and exits 1.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from rclpy.duration import Duration as RclDuration
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory

from fric_core.looped_trajectory import LoopedTrajectory
from fric_core.trajectory import (SineTrajectory, minimum_jerk,
                                  read_trajectory_csv, trajectory_from_points)
from fric_interfaces import names, qos
from fric_interfaces.conversions import Float64ArrayWriter, InputError, JointStateReader
from fric_interfaces.parameters import ParamSpec
from fric_nodes.own_arm import ARM_SETUP_SPEC, declare_arm_node_params

from ._node_util import FricNode, Housekeeping, RejectLog, run_node, sleep_ok, status

__all__ = ["TrajectoryTracker", "main", "SPECS", "NODE_NAME"]

NODE_NAME = "trajectory_tracker"
FEED_FORWARD = ("none", "gravity", "inverse_dynamics")

SPECS = (
    ParamSpec("joints", [], "the tracked joints, in command order; [] = the trajectory file's "
              "joints", read_only=True, list_of=str),
    ParamSpec("trajectory_file", "", "CSV trajectory (fric excite); '' = the sinusoid below, "
              "or wait for ~/joint_trajectory", read_only=True, path=True),
    ParamSpec("sine_center", [0.0], "sinusoid q = center - A cos(2 pi f t): centre, one or "
              "per joint", unit="rad", read_only=True),
    ParamSpec("sine_amplitude", [], "sinusoid amplitude A, one or per joint; [] = no sinusoid",
              unit="rad", read_only=True, list_of=float),
    ParamSpec("sine_frequency", [0.5], "sinusoid frequency, one or per joint", unit="Hz",
              read_only=True),
    ParamSpec("sine_duration", 10.0, "sinusoid length", unit="s", min=1e-3, read_only=True),
    ParamSpec("kp", [100.0], "position gain, one or per joint", unit="N m/rad", read_only=True),
    ParamSpec("kd", [10.0], "velocity gain, one or per joint", unit="N m s/rad",
              read_only=True),
    ParamSpec("feed_forward", "none", "none, gravity (g(q_d) of the URDF) or inverse_dynamics "
              "(M(q_d) a_d + h(q_d, v_d) + rotor_inertia a_d)", choices=FEED_FORWARD,
              read_only=True),
    ParamSpec("urdf", "", "URDF file or bundled name (planar_2link, arm7) for the "
              "feed-forward", read_only=True, path=True),
    ParamSpec("robot_description", "", "URDF text; non-empty wins over urdf", read_only=True),
    ParamSpec("gravity", [0.0, 0.0, -9.81], "gravity in the world frame (feed-forward)",
              unit="m/s^2", read_only=True),
    ParamSpec("rotor_inertia", [0.0], "rotor inertia referred to the joint, in the "
              "inverse-dynamics feed-forward; one or per joint", unit="kg m^2", read_only=True),
    ParamSpec("max_effort", [50.0], "command bound, one or per joint", unit="N m",
              read_only=True),
    ParamSpec("command_topic", names.EFFORT_COMMANDS, "where the effort commands go",
              read_only=True),
    ParamSpec("wait_for_subscribers", 1, "hold the first measured position (the clock stopped) "
              "until the command topic has this many subscribers (the arm, or the compensator "
              "in front of it)", min=0, read_only=True),
    ParamSpec("start_delay", 1.0, "then hold it this long (state time) before moving, while "
              "the rest of the chain connects", unit="s", min=0.0, read_only=True),
    ParamSpec("approach_time", 2.0, "minimum-jerk move to the trajectory's first point",
              unit="s", min=1e-3, read_only=True),
    ParamSpec("loops", 1, "times the trajectory is played; where its end is not its start, a "
              "smooth return segment (quintic, within the trajectory's own speed and "
              "acceleration peaks) joins the plays", min=1, read_only=True),
    ParamSpec("hold_time", 0.5, "hold the last point this long after the trajectory", unit="s",
              min=0.0, read_only=True),
    ParamSpec("exit_when_done", False, "exit 0 after hold_time", read_only=True),
    ParamSpec("rms_after", 0.0, "the RMS error counts from this time into the trajectory",
              unit="s", min=0.0, read_only=True),
    ParamSpec("result_file", "", "write the RMS and the time series to this .npz at exit",
              read_only=True),
    ParamSpec("log_capacity", 100000, "time-series samples kept for result_file (the first "
              "ones; 100 s at 1 kHz)", min=0,
              read_only=True),
    ParamSpec("max_state_gap", 0.02, "a joint_states stamp step longer than this is a pause of "
              "the stream (a realtime simulator skipping time it could not keep up with, a "
              "lost connection): the trajectory clock advances by one regular step only",
              unit="s", min=1e-4, read_only=True),
    ParamSpec("watchdog_timeout", 0.2, "no valid joint_states this long (wall clock): zero "
              "command, trajectory paused", unit="s", min=1e-3, max=60.0, read_only=True),
    ParamSpec("diagnostics_period", 1.0, "/diagnostics period", unit="s", min=0.05, max=60.0,
              read_only=True),
    ARM_SETUP_SPEC,
)

_HOLD, _APPROACH, _PLAY, _END, _DONE, _WAIT = ("hold", "approach", "trajectory", "final hold",
                                               "done", "waiting for a trajectory")


def _per_joint(name: str, values, n: int) -> np.ndarray:
    arr = np.asarray(list(values), dtype=float)
    if arr.size == 1:
        arr = np.full(n, float(arr[0]))
    if arr.size != n:
        raise ValueError(f"{name}: {arr.size} values for {n} joints (give one, or one per "
                         "joint)")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name}: non-finite value")
    return arr


class TrajectoryTracker(FricNode):
    """The node; :meth:`on_state` is the control step (callable directly in tests)."""

    default_name = NODE_NAME

    def _setup(self) -> None:
        v = self.values = declare_arm_node_params(self, "trajectory_tracker", SPECS)
        joints = list(v["joints"])
        traj = None
        if v["trajectory_file"]:
            try:
                traj = read_trajectory_csv(v["trajectory_file"], joints or None)
            except ValueError as e:
                raise ValueError(f"trajectory_file: {e}") from None
            joints = joints or traj.joint_names
        if not joints:
            raise ValueError("joints: needed (no trajectory_file to take them from)")
        if len(set(joints)) != len(joints):
            raise ValueError(f"joints: duplicate names in {joints}")
        n = self.n = len(joints)
        self.joints = tuple(joints)
        if traj is None and v["sine_amplitude"]:
            try:
                traj = SineTrajectory(_per_joint("sine_center", v["sine_center"], n),
                                      _per_joint("sine_amplitude", v["sine_amplitude"], n),
                                      _per_joint("sine_frequency", v["sine_frequency"], n),
                                      v["sine_duration"], joints)
            except ValueError as e:
                raise ValueError(f"sine_{e}") from None
        self.trajectory = self._looped(traj) if traj is not None else None
        self._kp = _per_joint("kp", v["kp"], n)
        self._kd = _per_joint("kd", v["kd"], n)
        self._max = _per_joint("max_effort", v["max_effort"], n)
        if (self._max <= 0).any():
            raise ValueError("max_effort: must be > 0")
        self._rotor = _per_joint("rotor_inertia", v["rotor_inertia"], n)
        self._dyn = self._feed_forward_model(v) if v["feed_forward"] != "none" else None
        self._ff_mode = v["feed_forward"]
        self._reader = JointStateReader(joints, ("position", "velocity"))
        # hot-path buffers
        self.q_d, self.v_d, self.a_d = np.zeros(n), np.zeros(n), np.zeros(n)
        self.command = np.zeros(n)
        self.error = np.zeros(n)
        self._ff = np.zeros(n)
        self._writer = Float64ArrayWriter()
        self._err_msg = JointState()
        self._err_msg.name = list(joints)
        # timing and phases (state-stamp time)
        self._t0_ns = None  # stamp of the first valid state
        self._last_stamp = 0
        self._step_ns = 0  # the last regular stamp step
        self._clock_ns = 0  # trajectory clock: state time without the stream's pauses
        self._gap_ns = int(v["max_state_gap"] * 1e9)
        self._connected = v["wait_for_subscribers"] == 0
        self._gaps = 0
        self._gap_time = 0.0
        self._q_first = np.zeros(n)
        self._seg_start = 0.0  # state time when the current trajectory's approach starts
        self._approach_from = np.zeros(n)
        self.phase = _HOLD
        self.finished = False
        self.t = 0.0
        # statistics
        self._sq = np.zeros(n)
        self._count = 0
        self._max_err = np.zeros(n)
        self._clipped = 0
        self._clipped_period = 0
        self._trips = 0
        self._tripped = False
        self._last_valid_mono = None
        self._states = 0
        self._trajectories_received = 0
        self._rejects = RejectLog(self.get_logger(), "input")
        cap = int(v["log_capacity"]) if v["result_file"] else 0
        self._log = np.zeros((cap, 1 + 5 * n))
        self._logged = 0
        # topics
        self._cmd_pub = self.create_publisher(Float64MultiArray, v["command_topic"],
                                              qos.CONTROL_PUB)
        self._err_pub = self.create_publisher(JointState, "~/tracking_error", qos.CONTROL_PUB)
        self._diag_pub = self.create_publisher(DiagnosticArray, names.DIAGNOSTICS, qos.INFO)
        self.create_subscription(JointState, names.JOINT_STATES, self.on_state, qos.CONTROL_SUB)
        self.create_subscription(JointTrajectory, "~/joint_trajectory", self.on_trajectory, 10)
        self._house = Housekeeping()
        self.create_timer(v["diagnostics_period"], self._house.timer(self.publish_diagnostics))
        self.create_timer(min(0.05, v["watchdog_timeout"] / 2), self._on_watchdog)
        what = ("no trajectory: waiting for ~/joint_trajectory" if traj is None else
                f"{type(traj).__name__} of {traj.duration:g} s, "
                f"{self.trajectory.describe()}")
        self.get_logger().info(f"tracking {list(joints)}: {what}; kp {self._kp.tolist()}, "
                               f"kd {self._kd.tolist()}, feed-forward {v['feed_forward']}, "
                               f"commands on {self._cmd_pub.topic_name}")

    def _looped(self, traj) -> LoopedTrajectory:
        """``traj`` played ``loops`` times, continuous at the seams (a return segment where its
        end is not its start: :mod:`fric_core.looped_trajectory`)."""
        return LoopedTrajectory(traj, self.values["loops"])

    def _feed_forward_model(self, v):
        from fric_core.transmission.urdf_dynamics import UrdfDynamics

        kw = dict(joint_names=list(self.joints), gravity=list(v["gravity"]))
        text = v["robot_description"].strip()
        try:
            if text:
                return UrdfDynamics.from_xml(v["robot_description"], **kw)
            if not v["urdf"]:
                raise ValueError(f"urdf: needed for feed_forward {v['feed_forward']}")
            return UrdfDynamics(v["urdf"], **kw)
        except ValueError as e:
            msg = str(e)
            if text and msg.startswith("urdf:"):  # the text came from robot_description
                msg = "robot_description:" + msg[len("urdf:"):]
            raise ValueError(msg) from None

    # -- inputs -------------------------------------------------------------------------------
    def on_trajectory(self, msg: JointTrajectory) -> None:
        """A new trajectory: played after an approach from the current setpoint."""
        try:
            if not msg.points:
                raise ValueError("points: empty")
            order = list(msg.joint_names)
            missing = [j for j in self.joints if j not in order]
            if missing:
                raise ValueError(f"joint_names: {missing} missing (message has {order})")
            idx = [order.index(j) for j in self.joints]
            pts = msg.points
            times = [p.time_from_start.sec + 1e-9 * p.time_from_start.nanosec for p in pts]

            def pick(field):
                return [[list(getattr(p, field))[i] for i in idx] if len(getattr(p, field))
                        else [] for p in pts]
            for k, p in enumerate(pts):
                for field in ("positions", "velocities", "accelerations"):
                    m = len(getattr(p, field))
                    if m and m != len(order):
                        raise ValueError(f"points[{k}].{field}: {m} values for {len(order)} "
                                         "joint_names")
            traj = trajectory_from_points(self.joints, times, pick("positions"),
                                          pick("velocities"), pick("accelerations"))
        except ValueError as e:
            self._rejects.add("trajectory", f"~/joint_trajectory {e}")
            return
        self.trajectory = looped = self._looped(traj)
        self._trajectories_received += 1
        if self._t0_ns is not None:
            self._approach_from[:] = self.q_d
            self._seg_start = self.t
            self.phase = _APPROACH
        self.finished = False
        self.get_logger().info(f"new trajectory: {len(msg.points)} points, {traj.duration:g} s, "
                               f"{looped.describe()}")

    def on_state(self, msg: JointState) -> None:
        """One control step: setpoint at the state's stamp, PD (+ feed-forward), publish."""
        try:
            self._reader.read(msg)
        except InputError as e:
            self._rejects.add(f"joint_states {e.kind}", f"joint_states {e}")
            return
        stamp = msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec
        q, v = self._reader.position, self._reader.velocity
        if self._t0_ns is None:
            self._t0_ns = stamp
            self._q_first[:] = q
            self._approach_from[:] = q
            self._seg_start = self.values["start_delay"]
            self._last_stamp = stamp
            self._step_ns = 0
        if not self._connected:
            self._connected = (self._cmd_pub.get_subscription_count()
                               >= self.values["wait_for_subscribers"])
            if self._connected:
                self.get_logger().info(f"{self._cmd_pub.get_subscription_count()} subscriber(s) "
                                       f"on {self._cmd_pub.topic_name}: starting the clock")
            else:
                self._last_stamp = stamp
        dt_ns = stamp - self._last_stamp
        if dt_ns < 0:
            self._rejects.add("joint_states stamp", f"joint_states header.stamp went back by "
                              f"{-dt_ns * 1e-9:.6g} s")
            return
        self._last_valid_mono = time.monotonic_ns()
        self._tripped = False
        self._states += 1
        if dt_ns > self._gap_ns:  # a pause of the stream: the trajectory clock does not run
            self._gaps += 1
            self._gap_time += (dt_ns - self._step_ns) * 1e-9
            dt_ns = self._step_ns
        elif dt_ns:
            self._step_ns = dt_ns
        self._last_stamp = stamp
        self._clock_ns += dt_ns
        self.t = t = self._clock_ns * 1e-9
        played = self._setpoint(t)
        np.subtract(self.q_d, q, out=self.error)
        cmd = self.command
        np.multiply(self._kp, self.error, out=cmd)
        np.subtract(self.v_d, v, out=self._ff)
        self._ff *= self._kd
        cmd += self._ff
        if self._dyn is not None:
            cmd += self._feed_forward()
        if (np.abs(cmd) > self._max).any():
            self._clipped += 1
            self._clipped_period += 1
            np.clip(cmd, -self._max, self._max, out=cmd)
        self._cmd_pub.publish(self._writer.fill(cmd))
        em = self._err_msg
        em.header.stamp = msg.header.stamp
        em.position = self.error.tolist()
        em.velocity = (self.v_d - v).tolist()
        em.effort = cmd.tolist()
        self._err_pub.publish(em)
        if played is not None and played >= self.values["rms_after"]:
            self._sq += self.error * self.error
            np.maximum(self._max_err, np.abs(self.error), out=self._max_err)
            self._count += 1
        if self._logged < self._log.shape[0]:
            row = self._log[self._logged]
            n = self.n
            row[0] = t
            row[1:1 + n] = self.q_d
            row[1 + n:1 + 2 * n] = q
            row[1 + 2 * n:1 + 3 * n] = self.v_d
            row[1 + 3 * n:1 + 4 * n] = v
            row[1 + 4 * n:] = cmd
            self._logged += 1
        self._house.after_output()

    def _setpoint(self, t: float) -> float | None:
        """Fill q_d, v_d, a_d for state time ``t``; returns the time into the played trajectory
        (None outside it)."""
        traj, vals = self.trajectory, self.values
        if traj is None:
            self.phase = _WAIT
            self.q_d[:] = self._approach_from
            self.v_d[:] = 0.0
            self.a_d[:] = 0.0
            return None
        s = t - self._seg_start
        if s < 0.0:
            self.phase = _HOLD
            self.q_d[:] = self._approach_from
            self.v_d[:] = 0.0
            self.a_d[:] = 0.0
            return None
        t_app = vals["approach_time"]
        if s < t_app:
            self.phase = _APPROACH
            minimum_jerk(self._approach_from, traj.start(), t_app, s, self.q_d, self.v_d,
                         self.a_d)
            return None
        s -= t_app
        total = traj.duration  # every loop, and the return segments between them
        if s < total:
            self.phase = _PLAY
            traj.sample(s, self.q_d, self.v_d, self.a_d)
            return s
        self.phase = _END
        traj.sample(total, self.q_d, self.v_d, self.a_d)
        if s >= total + vals["hold_time"]:
            self.phase = _DONE
            if vals["exit_when_done"]:
                self.finished = True
        return None

    def _feed_forward(self) -> np.ndarray:
        dyn, ff = self._dyn, self._ff
        if self._ff_mode == "gravity":
            ff[:] = dyn.terms(self.q_d, np.zeros(self.n))[1]
        else:
            M, h, _ = dyn.terms(self.q_d, self.v_d)
            np.dot(M, self.a_d, out=ff)
            ff += h
            ff += self._rotor * self.a_d
        return ff

    # -- watchdog, results --------------------------------------------------------------------
    def _on_watchdog(self) -> None:
        if self._last_valid_mono is None or self._tripped:
            return
        if time.monotonic_ns() - self._last_valid_mono > self.values["watchdog_timeout"] * 1e9:
            self._tripped = True
            self._trips += 1
            self.command[:] = 0.0
            self._cmd_pub.publish(self._writer.fill(self.command))
            self.get_logger().warning(f"watchdog: no valid joint_states for "
                                      f"{self.values['watchdog_timeout']:g} s: zero command")

    def publish_stop(self) -> None:
        """The final zero command."""
        self.command[:] = 0.0
        self._cmd_pub.publish(self._writer.fill(self.command))

    def rms(self) -> np.ndarray:
        """RMS tracking error per joint over the played trajectory (after rms_after) [rad];
        NaN before any sample."""
        if not self._count:
            return np.full(self.n, np.nan)
        return np.sqrt(self._sq / self._count)

    def summary(self) -> str:
        """One line: the RMS and max tracking error per joint."""
        if not self._count:
            return f"no trajectory played (phase: {self.phase}, {self._states} states)"
        return (f"tracking error over {self._count} states: RMS "
                + ", ".join(f"{j} {r:.4g}" for j, r in zip(self.joints, self.rms()))
                + " rad; max " + ", ".join(f"{j} {m:.4g}" for j, m in
                                          zip(self.joints, self._max_err)) + " rad")

    def write_result(self) -> Path | None:
        """The RMS and the logged time series to ``result_file`` (.npz); None without one."""
        path = self.values["result_file"]
        if not path:
            return None
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        log, n = self._log[:self._logged], self.n
        np.savez(p, joints=np.array(self.joints), rms=self.rms(), max_error=self._max_err,
                 samples=self._count, t=log[:, 0], q_d=log[:, 1:1 + n],
                 q=log[:, 1 + n:1 + 2 * n], v_d=log[:, 1 + 2 * n:1 + 3 * n],
                 v=log[:, 1 + 3 * n:1 + 4 * n], command=log[:, 1 + 4 * n:],
                 clipped=self._clipped, log_full=self._logged == self._log.shape[0])
        return p

    def diagnostic_status(self) -> DiagnosticStatus:
        """Phase, RMS error per joint, clipped commands, rejections, watchdog."""
        level, problems = DiagnosticStatus.OK, []
        rejected = self._rejects.period_problem()
        if rejected:
            level = DiagnosticStatus.WARN
            problems.append(rejected)
        if self._tripped:
            level = DiagnosticStatus.WARN
            problems.append("watchdog: no joint_states, zero command")
        if self._clipped_period:
            level = DiagnosticStatus.WARN
            problems.append(f"{self._clipped_period} commands clipped at max_effort")
        self._clipped_period = 0
        kv = [("phase", self.phase), ("state time [s]", f"{self.t:.3f}"),
              ("states", str(self._states)), ("rms samples", str(self._count)),
              ("commands clipped", str(self._clipped)), ("watchdog trips", str(self._trips)),
              ("trajectories received", str(self._trajectories_received)),
              ("stream pauses", str(self._gaps)),
              ("stream pause time [s]", f"{self._gap_time:.3f}")]
        kv += self._rejects.key_values()
        for j, r, m in zip(self.joints, self.rms(), self._max_err):
            kv += [(f"{j} rms error [rad]", f"{r:.6g}"), (f"{j} max error [rad]", f"{m:.6g}")]
        return status(f"{self.get_fully_qualified_name()}: tracking", ",".join(self.joints),
                      level, problems, self.phase, kv)


def _shutdown(node: TrajectoryTracker, context_ok: bool) -> None:
    if context_ok:
        node.publish_stop()
        node._cmd_pub.wait_for_all_acked(RclDuration(seconds=0.5))
        node.publish_diagnostics()
        sleep_ok(0.05)
    print(f"{NODE_NAME}: {node.summary()}", flush=True)
    path = node.write_result()
    if path is not None:
        print(f"{NODE_NAME}: wrote {path.resolve()}", flush=True)


def main(args=None) -> int:
    """Run the tracker until Ctrl-C/SIGTERM (or the trajectory's end with exit_when_done)."""
    return run_node(TrajectoryTracker, NODE_NAME, args, done=lambda n: n.finished,
                    on_stop=_shutdown)


if __name__ == "__main__":
    sys.exit(main())
