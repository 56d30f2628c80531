"""``haptic_stage``: the hardware node of a 1-DOF linear haptic stage (paper 003, Richard, Cutkosky
& MacLean: motor-driven carriage, encoder, load cell, accelerometer).

Every servo cycle it publishes

* ``joint_states`` — one joint ``joint_name``: position (encoder, m), velocity (encoder-edge
  estimate, m/s), effort = the load-cell force (N, sign below);
* ``wrench`` — WrenchStamped in frame ``load_cell``: the same load-cell force on ``force.x``;
* ``accelerometer`` — sensor_msgs/Imu (the message of ros2_control's imu_sensor_broadcaster),
  frame ``load_cell``, the stamp of the cycle's joint_states: ``linear_acceleration.x`` is the
  accelerometer (m/s², the acceleration of the object beyond the load cell, or of the carriage
  when there is none, along +x: the sim's ``StageReading.acceleration``, the serial frames'
  ``acceleration``); ``linear_acceleration_covariance[0]`` its noise variance when known (sim:
  ``accel_noise``²) else 0 (unknown); orientation and angular velocity are not provided
  (their covariance[0] = -1). Published just *before* the cycle's joint_states, so a controller
  woken by joint_states already has it. Off with ``publish_accelerometer: false``;
* ``~/hand_force`` — std_msgs/Float64, sim backend only: the scripted operator hand's force (N,
  +x forward), for recording and plots (what the operator pushed). No header: pair it with the
  joint_states of the same cycle (published just before it, same cycle, same order);

and it takes ``effort_controller/commands`` (motor force, N) and ``position_controller/commands``
(setpoint, m, tracked by the stage's PD servo with its setpoint low-pass), one entry each
(Float64MultiArray, as forward_command_controller publishes them). ``~/markers`` (frame
``marker_frame``, default ``world``) and ``/diagnostics`` complete it.

Force sign (ROS side). The simulation and the wire protocol report the load cell as the force the
carriage applies to the object beyond it (paper 003's F_applied). This node publishes the opposite,
the **force the object/operator applies to the stage at the load cell**, positive along +x: the
force sensor's reading as a robot's F/T sensor reports it (the external wrench), and the input an
admittance renderer needs (paper 000 Sec. IV-D: the operator pushes +x → positive force → the
rendered body moves +x). With ``hand_location: tool`` the effort is then the hand's push (less
the handle's inertia); with the hand on the carriage the load cell does not see the hand.

Commands. The latest valid command wins, whichever topic it came on (effort → force mode,
position → position mode). A command with a wrong number of entries (≠ 1) or a non-finite entry,
and a position setpoint outside the travel ``[x_min, x_max]`` (``out_of_travel``), is rejected
(counted per reason, logged, shown in diagnostics) and changes nothing: the next good setpoint is
tracked as if the bad one never came. An effort command beyond ``max_force`` is accepted and
(sim) the motor saturates at ±``max_force`` (logged, counted as "effort commands beyond max_force",
and the saturated cycles are reported in diagnostics). A command older
than ``command_timeout`` is dropped: zero motor force (device idle) until a new one arrives —
the node's own safety, reported in diagnostics. In lockstep the age is stage time (cycles since
the command was first used); in realtime it is wall time since receipt.

Backends:

* ``sim`` — :class:`fric_core.stage.HapticStageSim` from the parameters (stage_params). One cycle
  is ``round(1/(rate·sim_dt))`` physics steps with the cycle's command (a slower ``rate`` keeps the
  physics of ``sim_dt``, exactly like the device emulator at the same rate).
* ``serial`` — a device speaking docs/serial_protocol.md on ``port``; the device's state frames
  pace the node (no timer): every state frame is published at once (the newest, when several
  arrived together). Each valid ROS command is sent to the device the moment it arrives, so a
  controller answering state k within the device period is applied in device cycle k+1, as in
  lockstep; a cycle in which nothing was commanded gets a keep-alive frame (the current command,
  or IDLE after ``command_timeout``): at least one command frame per cycle. On a port that
  cannot be opened or fails: diagnostics ERROR, nothing published, a retry every
  ``reconnect_period``; no valid frame for ``read_timeout``: link down (ERROR), nothing published
  and nothing sent, so the device goes safe by its own timeout. A CRC-valid state frame with a
  NaN/inf or an implausible value — position outside ``[x_min, x_max]`` widened by
  ``plausible_position_margin``, |velocity|, |force|, |motor_force| or |acceleration| beyond
  ``plausible_velocity``, ``plausible_force``, ``plausible_acceleration`` — is rejected like a
  corrupted one: counted as a value error, logged, WARN in diagnostics naming the field and value,
  never published (docs/serial_protocol.md).

Sync (``sim``):

* ``realtime`` — a steady-clock timer at ``rate``. The simulated time follows the wall clock:
  a late tick runs the missed cycles (physics with the current command, only the newest state
  published; counted as overruns/missed cycles); more than 50 ms behind, the simulation skips
  ahead instead (counted as a re-anchor). Stamps are the start wall time + k/rate, so the
  stage time maps to the wall clock and the stamps are regular.
* ``lockstep`` — deterministic, for functional tests on a loaded machine. At start the node waits
  (up to ``lockstep_wait``) until a controller is there: one node that subscribes to
  ``joint_states`` or ``wrench`` and publishes on a command topic, then 0.25 s for discovery to
  settle (the controller must also have matched the stage's publisher). Then: state 0 (the stage at
  rest, t = 0) is published with stamp ``start_time`` (wall time at that moment); after publishing
  state k, the **first valid command received after that publish** steps the stage one cycle with
  it and state k+1 is published, stamp ``start_time + (k+1)/rate``; if no valid command arrives
  within ``lockstep_timeout`` (s, wall time), the stage steps with the last command (subject to
  ``command_timeout`` in stage time) and the step is counted as a lockstep timeout. Commands
  received before state 0 only set the command; rejected commands do not release a step; a
  second command after one state releases the next step (a controller should answer each state
  once). k commands after state 0 → exactly states 1..k.

``duration`` > 0: when the stage time reaches it, the node publishes that last state, logs, and
``main`` exits 0 (launch files use ``on_exit="shutdown"`` for fixed-length runs).

``hand_start``: ``immediately`` — the hand script runs from stage time 0;
``first_command`` — the hand script's clock starts at the first valid command the stage
receives (the hand stays off until then), and so does the ``duration`` count: the scripted
operator only pushes once a controller drives the stage (e.g. a renderer that waits for an
identified law), however long that takes. Serial: the device runs its own hand (the emulator's
``--hand-start first_command`` is the same rule on the device side); here only the ``duration``
count waits for the first command.

Serial stamps: device time mapped to the wall clock with the smallest observed receive latency
(re-estimated every 1000 frames, so device clock drift is followed); stamps never go backwards,
also across reconnects.
"""

from __future__ import annotations

import dataclasses
import math
import sys
import time

from builtin_interfaces.msg import Duration
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from geometry_msgs.msg import Point, WrenchStamped
from rcl_interfaces.msg import SetParametersResult
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rclpy.parameter import Parameter
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import ColorRGBA, Float64, Float64MultiArray
from visualization_msgs.msg import Marker, MarkerArray

from fric_core.haptics.stage import StageReading
from fric_interfaces import names, qos
from fric_interfaces.conversions import CommandReader, InputError
from fric_interfaces.parameters import check
from fric_interfaces.stage_params import SPECS, cycle_steps, validate
from fric_nodes.builders import build_sim

from ._node_util import (Housekeeping, Ring, declare_params, run_node, sleep_ok, status,
                         unused_overrides)
from .hardware.serial_link import SerialLink, state_limits
from .hardware.stage_protocol import Mode

__all__ = ["HapticStage", "SerialLink", "state_limits", "shutdown", "main"]

IDLE, FORCE, POSITION = int(Mode.IDLE), int(Mode.FORCE), int(Mode.POSITION)
_MODE_NAMES = {IDLE: "idle", FORCE: "force", POSITION: "position"}
_MAX_LAG_S = 0.05  # realtime sim: further behind than this, skip ahead instead of catching up
_SETTLE_S = 0.25  # lockstep start: discovery settling after the controller is seen
_EPOCH_WINDOW = 1000  # serial: frames per re-estimate of the device-to-wall offset
_LIVE = ("command_timeout", "lockstep_timeout")


def _reason_of(err: InputError) -> str:
    return "non_finite" if "non-finite" in err.reason else "wrong_length"


# ==================================================================================== node
class HapticStage(Node):
    """The haptic stage hardware node (see the module docstring). ``kwargs`` go to ``Node``
    (e.g. ``parameter_overrides``, ``namespace``)."""

    def __init__(self, node_name: str = names.HAPTIC_STAGE, **kwargs):
        super().__init__(node_name, **kwargs)
        self._link: SerialLink | None = None
        try:
            self._setup()
        except Exception:
            self.destroy_node()
            raise

    # ------------------------------------------------------------------ set-up
    def _setup(self) -> None:
        self._specs = {s.name: s for s in SPECS}
        values = declare_params(self, SPECS)
        validate(values)
        self._values = values
        unused = unused_overrides(self, self._specs)
        if unused:
            self.get_logger().warning(f"ignoring unknown parameters {unused}")
        self._backend = values["backend"]
        self._sim_backend = self._backend == "sim"
        self._lockstep = values["sync"] == "lockstep"
        self._joint = values["joint_name"]
        self._rate = float(values["rate"])
        self._period_ns = int(round(1e9 / self._rate))
        self._duration_ns = int(round(values["duration"] * 1e9))
        self._x_min, self._x_max = float(values["x_min"]), float(values["x_max"])
        self._max_force = float(values["max_force"])
        self._over_limit = 0  # effort commands beyond max_force (accepted, saturated)
        self._apply_live(values)

        use_sim = bool(self.get_parameter("use_sim_time").value)
        self._wall_ns = (lambda: self.get_clock().now().nanoseconds) if use_sim else time.time_ns
        self._steady = Clock(clock_type=ClockType.STEADY_TIME)

        # state
        self.finished = False  # duration reached: main exits
        self._k = 0  # cycles run (sim), published states (serial)
        self._stage_ns = 0  # stage time of the last published state
        self._epoch_ns = None  # stamp = epoch + k * period (sim)
        self._last_stamp = -1
        self._published = 0
        self._published_period = 0
        self._cmd = (IDLE, 0.0, 0)  # (mode, value, time: monotonic ns or cycle index)
        self._cmd_seen = False
        self._cmd_timed_out = False
        self._cmd_timeouts = 0
        self._accepted = 0
        self._rejected: dict[str, int] = {}
        self._rejected_last: dict[str, str] = {}
        self._rejected_period = 0
        self._rejected_latest = ""
        self._rejected_states = 0  # non-finite states not published (never expected)
        self._sat_total = self._sat_period = 0
        self._lim_total = self._lim_period = 0
        self._last = None  # last published reading (StageReading, or StateFrame)
        self._last_mode = IDLE
        self._diag_mono = time.monotonic()
        self._run_base_ns = 0  # stage time the duration counts from (hand_start)
        # realtime sim
        self._t0 = None
        self._overruns = self._missed = self._reanchors = 0
        self._overruns_period = 0
        self._cycle_time = Ring(4096)
        self._max_catchup = max(1, int(_MAX_LAG_S * self._rate))
        # lockstep
        self._ls_started = False
        self._ls_waiting = False
        self._ls_pub_mono = 0
        self._ls_seen_mono = None
        self._ls_wait_start = time.monotonic()
        self._ls_timeouts = 0
        self._ls_steps = 0
        # serial
        self._conn_id = -1
        self._dev_base_ns = 0  # stage time at the first frame of the current connection
        self._dev_t0_ns = None  # device time of that frame
        self._off_ns = None  # wall - device time offset
        self._off_win = None
        self._off_count = 0
        self._skipped = 0
        self._late = 0
        self._late_first = None  # stage time of the first late cycle
        self._prev_seq = None
        self._dev_timeouts = self._dev_rx_errors = self._dev_faults = 0
        self._dev_flags = 0
        self._value_errors_seen = 0  # diagnostics: value errors up to the previous period
        self._thread_errors_seen = 0  # diagnostics: serial thread errors up to the last period

        # messages (reused every cycle)
        js = self._js = JointState()
        js.name = [self._joint]
        js.position, js.velocity, js.effort = [0.0], [0.0], [0.0]
        self._jpos, self._jvel, self._jeff = js.position, js.velocity, js.effort
        w = self._wrench = WrenchStamped()
        w.header.frame_id = "load_cell"
        self._wforce = w.wrench.force
        self._hand_msg = Float64()
        imu = self._imu = Imu()
        imu.header.frame_id = "load_cell"
        imu.orientation_covariance[0] = -1.0  # not provided
        imu.angular_velocity_covariance[0] = -1.0  # not provided
        self._imu_acc = imu.linear_acceleration

        # backend
        self._sim = None
        if self._sim_backend:
            self._sim, notes = build_sim(values)
            for m in notes:
                self.get_logger().warning(f"design: {m}")
            self._spc = cycle_steps(self._rate, values["sim_dt"])
            self._hand = self._sim.hand
            self._has_tool = self._sim.has_tool
            # accelerometer noise variance (sim: known)
            imu.linear_acceleration_covariance[0] = float(values["accel_noise"]) ** 2
        # hand_start first_command: the hand (and the duration count) wait for a command
        self._hand_pending = None
        if values["hand_start"] == "first_command":
            self._run_base_ns = None
            if self._sim_backend:
                self._hand_pending, self._sim.hand = self._sim.hand, None

        # topics
        self._js_pub = self.create_publisher(JointState, names.JOINT_STATES, qos.CONTROL_PUB)
        self._w_pub = self.create_publisher(WrenchStamped, names.WRENCH, qos.CONTROL_PUB)
        self._imu_pub = (self.create_publisher(Imu, names.ACCELEROMETER, qos.CONTROL_PUB)
                         if values["publish_accelerometer"] else None)
        self._hand_pub = (self.create_publisher(Float64, "~/hand_force", qos.CONTROL_PUB)
                          if self._sim_backend else None)
        self._marker_pub = self.create_publisher(MarkerArray, names.MARKERS, qos.INFO)
        self._diag_pub = self.create_publisher(DiagnosticArray, names.DIAGNOSTICS, qos.INFO)
        self._reader = CommandReader(1)
        self._eff_sub = self.create_subscription(Float64MultiArray, names.EFFORT_COMMANDS,
                                                 self._on_effort, qos.CONTROL_SUB)
        self._pos_sub = self.create_subscription(Float64MultiArray, names.POSITION_COMMANDS,
                                                 self._on_position, qos.CONTROL_SUB)
        self._markers = self._make_markers()
        # markers/diagnostics run in the slack after a command arrived (see Housekeeping)
        self._housekeeping = Housekeeping()
        self.create_timer(1.0 / values["marker_rate"],
                          self._housekeeping.timer(self._on_markers), clock=self._steady)
        self._diag_timer = self.create_timer(values["diagnostics_period"],
                                             self._housekeeping.timer(self._on_diagnostics),
                                             clock=self._steady)
        self._tick_timer = None
        if self._sim_backend and not self._lockstep:
            self._tick_timer = self.create_timer(1.0 / self._rate, self._on_tick,
                                                 clock=self._steady)
        elif self._lockstep:
            self._make_lockstep_timer()
        else:
            self._link = SerialLink(values["port"], values["baud"], values["read_timeout"],
                                    values["reconnect_period"], self._on_frames,
                                    self.get_logger(), self._wall_ns,
                                    limits=state_limits(values), rtt=Ring(4096))
        self.add_on_set_parameters_callback(self._on_set_parameters)
        self.add_post_set_parameters_callback(self._on_parameters_set)
        desc = (f"sim ({self._sim!r}, {self._spc} x {values['sim_dt']:g} s per cycle, hand "
                f"{values['hand_script'] or 'none'!r} on the {values['hand_location']}"
                + (", starting at the first command" if self._run_base_ns is None else "") + ")"
                if self._sim_backend else f"serial ({values['port']}, {values['baud']} baud"
                + (", duration from the first command" if self._run_base_ns is None else "")
                + ")")
        self.get_logger().info(f"{values['sync']} at {self._rate:g} Hz, joint "
                               f"{self._joint!r}, backend {desc}"
                               + (f", duration {values['duration']:g} s"
                                  if self._duration_ns else ""))
        if self._link is not None:
            self._link.start()

    def _make_lockstep_timer(self) -> None:
        """The lockstep check (start-up wait, timeout): a fifth of the timeout, at most 50 ms."""
        if self._tick_timer is not None:
            self.destroy_timer(self._tick_timer)
        self._tick_timer = self.create_timer(min(0.05, self._ls_timeout_ns * 0.2e-9),
                                             self._on_lockstep_check, clock=self._steady)

    def _apply_live(self, values: dict) -> None:
        self._cmd_timeout_ns = int(round(values["command_timeout"] * 1e9))
        # lockstep: command age in cycles beyond which it is dropped
        self._cmd_timeout_cycles = int(values["command_timeout"] * self._rate + 1e-9)
        self._ls_timeout_ns = int(round(values["lockstep_timeout"] * 1e9))

    def _on_set_parameters(self, params: list[Parameter]) -> SetParametersResult:
        for p in params:
            spec = self._specs.get(p.name)
            if spec is None:
                continue
            if p.name not in _LIVE:
                return SetParametersResult(successful=False, reason=f"{p.name}: read-only")
            reason = check(spec, p.value)
            if reason:
                return SetParametersResult(successful=False, reason=f"{p.name}: {reason}")
        return SetParametersResult(successful=True)

    def _on_parameters_set(self, params: list[Parameter]) -> None:
        changed = [p for p in params if p.name in _LIVE]
        if changed:
            for p in changed:
                self._values[p.name] = p.value
            self._apply_live(self._values)
            if self._lockstep and not self.finished and \
                    any(p.name == "lockstep_timeout" for p in changed):
                self._make_lockstep_timer()
            self.get_logger().info(f"set {', '.join(f'{p.name}={p.value:g}' for p in changed)}")

    # ------------------------------------------------------------------ commands
    def _on_effort(self, msg: Float64MultiArray) -> None:
        self._command(msg, FORCE, "effort_controller/commands")

    def _on_position(self, msg: Float64MultiArray) -> None:
        self._command(msg, POSITION, "position_controller/commands")

    def _command(self, msg: Float64MultiArray, mode: int, topic: str) -> None:
        try:
            value = float(self._reader.read(msg)[0])
        except InputError as e:
            self._reject(_reason_of(e), f"{topic}: {e}")
            return
        if mode == POSITION:
            if not self._x_min <= value <= self._x_max:
                self._reject("out_of_travel", f"{topic}: data[0] = {value!r} m is outside the "
                             f"travel [x_min, x_max] = [{self._x_min:g}, {self._x_max:g}] m")
                return
        elif self._sim_backend and not -self._max_force <= value <= self._max_force:
            self._over_limit += 1
            self.get_logger().warning(
                f"{topic}: data[0] = {value!r} N is beyond max_force {self._max_force:g} N: "
                "the motor saturates at the limit", throttle_duration_sec=1.0)
        self._accepted += 1
        self._cmd_seen = True
        self._cmd_timed_out = False
        if self._run_base_ns is None:
            self._start_run_clock()
        if self._lockstep:
            self._cmd = (mode, value, self._k)
            if self._ls_waiting:
                self._lockstep_step(timeout=False)
        else:
            self._cmd = (mode, value, time.monotonic_ns())
            link = self._link
            if link is not None and not self.finished and not link.quiet:
                link.send(mode, value)  # at once: the device applies it in its next cycle
                self._last_mode = mode
        self._housekeeping.after_output()

    def _start_run_clock(self) -> None:
        """hand_start first_command: the hand script (sim) and the duration start now."""
        sim = self._sim
        if sim is None:  # serial: the device runs its own hand; the duration counts from here
            self._run_base_ns = self._stage_ns
            self.get_logger().info(f"first command at stage time {self._stage_ns * 1e-9:.3f} s"
                                   + (f": duration {self._duration_ns * 1e-9:g} s from now"
                                      if self._duration_ns else ""))
            return
        self._run_base_ns = self._k * self._period_ns
        pending, self._hand_pending = self._hand_pending, None
        if pending is not None:
            sim.hand = dataclasses.replace(pending, start=pending.start + sim.t)
        self.get_logger().info(f"first command at stage time {sim.t:.3f} s: "
                               + ("the operator hand script starts" if pending is not None
                                  else "the run starts")
                               + (f", duration {self._duration_ns * 1e-9:g} s from now"
                                  if self._duration_ns else ""))

    def _duration_reached(self, stage_ns: int) -> bool:
        base = self._run_base_ns
        return bool(self._duration_ns) and base is not None and \
            stage_ns - base >= self._duration_ns

    def _reject(self, reason: str, text: str) -> None:
        self._rejected[reason] = self._rejected.get(reason, 0) + 1
        self._rejected_last[reason] = text
        self._rejected_latest = text
        self._rejected_period += 1
        self.get_logger().warning(f"rejected command: {text}", throttle_duration_sec=1.0)

    def _current(self, age: int, limit: int) -> tuple[int, float]:
        """The command to apply: (mode, value); zero force when older than the timeout."""
        mode, value, _ = self._cmd
        if mode == IDLE:
            return IDLE, 0.0
        if age > limit:
            if not self._cmd_timed_out:
                self._cmd_timed_out = True
                self._cmd_timeouts += 1
                self.get_logger().warning(
                    f"command timeout: no valid command for {self._values['command_timeout']:g}"
                    " s: zero motor force")
            return IDLE, 0.0
        return mode, value

    @property
    def command(self) -> tuple[str, float, bool]:
        """(mode name, value, timed out) of the stored command."""
        return _MODE_NAMES[self._cmd[0]], self._cmd[1], self._cmd_timed_out

    # ------------------------------------------------------------------ sim cycles
    def _sim_cycle(self, mode: int, value: float) -> StageReading:
        """One servo cycle: ``_spc`` physics steps with one command; flags OR-ed over them."""
        step = self._sim.step
        sat = lim = False
        for _ in range(self._spc):
            if mode == FORCE:
                r = step(value)
            elif mode == POSITION:
                r = step(None, value)
            else:
                r = step()
            sat |= r.saturated
            lim |= r.at_limit
        if sat != r.saturated or lim != r.at_limit:
            r = r._replace(saturated=sat, at_limit=lim)
        self._k += 1
        self._last_mode = mode
        return r

    def _rest_reading(self) -> StageReading:
        """State 0 of lockstep: the stage at rest at t = 0 (encoder at x0, no motion)."""
        s = self._sim
        x0 = s.x0
        q = math.floor(x0 * s.counts_per_metre + 0.5)
        hand = s.hand  # None while hand_start waits for the first command
        fh = hand.force(0.0) if hand is not None else 0.0
        return StageReading(0.0, q / s.counts_per_metre, 0.0, 0.0, 0.0, 0.0, 0.0, False,
                            x0 <= s.x_min or x0 >= s.x_max, x0, 0.0, 0.0, 0.0, x0, 0.0, fh,
                            0.0, True, s.tool_friction is not None)

    def _publish(self, stamp_ns: int, position: float, velocity: float, force: float,
                 accel: float, hand: float | None, sat: bool, lim: bool) -> bool:
        """accelerometer, joint_states, wrench (and hand force); False (nothing published) if
        non-finite."""
        if not (math.isfinite(position) and math.isfinite(velocity) and math.isfinite(force)
                and math.isfinite(accel)):
            self._reject_state(position, velocity, force, accel)
            return False
        if stamp_ns <= self._last_stamp:
            stamp_ns = self._last_stamp + 1
        self._last_stamp = stamp_ns
        sec, nsec = divmod(stamp_ns, 1_000_000_000)
        if self._imu_pub is not None:
            imu = self._imu
            ist = imu.header.stamp
            ist.sec, ist.nanosec = sec, nsec
            self._imu_acc.x = accel
            self._imu_pub.publish(imu)
        js = self._js
        st = js.header.stamp
        st.sec, st.nanosec = sec, nsec
        self._jpos[0] = position
        self._jvel[0] = velocity
        self._jeff[0] = force
        self._js_pub.publish(js)
        w = self._wrench
        ws = w.header.stamp
        ws.sec, ws.nanosec = sec, nsec
        self._wforce.x = force
        self._w_pub.publish(w)
        if hand is not None:
            self._hand_msg.data = hand
            self._hand_pub.publish(self._hand_msg)
        self._published += 1
        self._published_period += 1
        if sat:
            self._sat_total += 1
            self._sat_period += 1
        if lim:
            self._lim_total += 1
            self._lim_period += 1
        return True

    def _reject_state(self, *vals) -> None:
        self._rejected_states += 1
        self.get_logger().error(f"non-finite state {vals}: not published",
                                throttle_duration_sec=1.0)

    def _publish_reading(self, r: StageReading) -> None:
        self._last = r
        self._stage_ns = self._k * self._period_ns
        self._publish(self._epoch_ns + self._stage_ns, r.position, r.velocity, -r.force,
                      r.acceleration, r.hand_force, r.saturated, r.at_limit)
        if self._duration_reached(self._stage_ns):
            self._finish()

    def _finish(self) -> None:
        if self.finished:
            return
        self.finished = True
        if self._tick_timer is not None:
            self._tick_timer.cancel()
        self.get_logger().info(f"duration {self._duration_ns * 1e-9:g} s of stage time reached "
                               f"({self._published} states published): stopping")

    # realtime
    def _on_tick(self) -> None:
        if self.finished:
            return
        start = time.monotonic_ns()
        P = self._period_ns
        if self._t0 is None:
            self._t0 = start - P
            self._epoch_ns = self._wall_ns() - P
            n = 1
        else:
            n = (start - self._t0 + P // 2) // P - self._k
            if n < 1:
                n = 1
            elif n > 1:
                if n > self._max_catchup:
                    skip = n - 1
                    self._t0 += skip * P
                    self._epoch_ns += skip * P
                    self._reanchors += 1
                    self.get_logger().warning(
                        f"servo loop {skip * P * 1e-6:.1f} ms behind: simulation skips ahead",
                        throttle_duration_sec=1.0)
                    n = 1
                else:
                    self._overruns += 1
                    self._overruns_period += 1
                    self._missed += n - 1
        mode, value, t = self._cmd
        r = None
        for _ in range(n):
            if mode != IDLE:
                mode, value = self._current(start - t, self._cmd_timeout_ns)
            r = self._sim_cycle(mode, value)
            if self._duration_reached(self._k * P):
                break
        self._publish_reading(r)
        self._cycle_time.add((time.monotonic_ns() - start) * 1e-9)

    # lockstep
    def _lockstep_begin(self) -> None:
        self._ls_started = True
        self._epoch_ns = self._wall_ns()
        r = self._rest_reading()
        self._publish_reading(r)
        self._ls_waiting = True
        self._ls_pub_mono = time.monotonic_ns()
        self.get_logger().info("lockstep: state 0 published, stepping on commands")

    def _lockstep_step(self, timeout: bool) -> None:
        self._ls_waiting = False
        mode, value, k_cmd = self._cmd
        if mode != IDLE:
            mode, value = self._current(self._k - k_cmd, self._cmd_timeout_cycles)
        if timeout:
            self._ls_timeouts += 1
        self._ls_steps += 1
        r = self._sim_cycle(mode, value)
        self._publish_reading(r)
        if not self.finished:
            self._ls_waiting = True
            self._ls_pub_mono = time.monotonic_ns()

    def _controller_present(self) -> bool:
        """A controller is there: one node both publishes on a command topic and subscribes to
        ``joint_states`` or ``wrench`` (the states it answers). A listener in one node and a
        commander in another is not one: a recorder's subscription must not start the run before
        the renderer's is there."""
        if self._eff_sub.get_publisher_count() + self._pos_sub.get_publisher_count() == 0 or \
                self._js_pub.get_subscription_count() + self._w_pub.get_subscription_count() == 0:
            return False  # cheap counts first; the graph queries below only when both are there
        commanders = {(i.node_namespace, i.node_name)
                      for sub in (self._eff_sub, self._pos_sub)
                      for i in self.get_publishers_info_by_topic(sub.topic_name)}
        return any((i.node_namespace, i.node_name) in commanders
                   for pub in (self._js_pub, self._w_pub)
                   for i in self.get_subscriptions_info_by_topic(pub.topic_name))

    def _on_lockstep_check(self) -> None:
        if self.finished:
            return
        now = time.monotonic()
        if not self._ls_started:
            ready = self._controller_present()
            if ready and self._ls_seen_mono is None:
                self._ls_seen_mono = now
            if ((ready and now - self._ls_seen_mono >= _SETTLE_S)
                    or now - self._ls_wait_start >= self._values["lockstep_wait"]):
                if not ready:
                    self.get_logger().warning(
                        f"lockstep: no controller after {self._values['lockstep_wait']:g} s; "
                        "starting without one (steps every lockstep_timeout)")
                self._lockstep_begin()
            return
        if self._ls_waiting and time.monotonic_ns() - self._ls_pub_mono > self._ls_timeout_ns:
            self.get_logger().warning(
                f"lockstep: no command within {self._ls_timeout_ns * 1e-9:g} s: stepping with "
                "the last command", throttle_duration_sec=1.0)
            self._lockstep_step(timeout=True)

    # ------------------------------------------------------------------ serial frames
    def _on_frames(self, frames, rx_mono: int, rx_wall: int, answer: int | None):
        """Link thread: publish the newest state frame of a batch; return the command to send
        as keep-alive if none was sent this cycle."""
        if self.finished:
            return IDLE, 0.0
        link = self._link
        f = frames[-1]
        self._skipped += len(frames) - 1
        t_dev = round(f.time * 1e6) * 1000
        if link.opens != self._conn_id:  # first frame of a (re)connection
            self._conn_id = link.opens
            self._dev_base_ns = (self._stage_ns + self._period_ns) if self._published else 0
            self._dev_t0_ns = t_dev
            self._off_ns = None
            self._prev_seq = None
        stage_ns = self._dev_base_ns + t_dev - self._dev_t0_ns
        # device time -> wall clock: smallest receive latency, re-estimated per window
        off = rx_wall - t_dev
        if self._off_ns is None:
            self._off_ns = self._off_win = off
            self._off_count = 0
        else:
            if off < self._off_ns:
                self._off_ns = off
            if off < self._off_win:
                self._off_win = off
            self._off_count += 1
            if self._off_count >= _EPOCH_WINDOW:
                self._off_ns, self._off_win, self._off_count = self._off_win, off, 0
        # Late cycles, while commanding: device cycles that did not apply the controller's
        # answer to the state just before them. The answer to the previously published state
        # should be applied in the next cycle; frames the controller never saw (skipped in a
        # backlog, or lost) had no answer, so each of them makes one more late cycle.
        if self._prev_seq is not None and self._cmd[0] != IDLE and not self._cmd_timed_out:
            gap = (f.seq - self._prev_seq) & 0xFFFFFFFF
            if 0 < gap < 0x80000000:
                late = gap - 1
                if answer is None or 0 < ((answer - f.ack) & 0xFFFFFFFF) < 0x80000000:
                    late += 1
                if late:
                    self._late += late
                    if self._late_first is None:
                        self._late_first = stage_ns
        link.ack_rtt(f.ack, rx_mono)
        self._prev_seq = f.seq
        st = f.status
        if f.timeout:
            self._dev_timeouts += 1
        if f.rx_error:
            self._dev_rx_errors += 1
        if f.fault:
            self._dev_faults += 1
        self._dev_flags = st
        self._last = f
        self._stage_ns = stage_ns
        self._k += 1
        self._publish(self._off_ns + t_dev, f.position, f.velocity, -f.force, f.acceleration,
                      None, f.saturated, f.at_limit)
        if self._duration_reached(stage_ns):
            self._finish()
            return IDLE, 0.0
        mode, value, t = self._cmd
        if mode != IDLE:
            mode, value = self._current(rx_mono - t, self._cmd_timeout_ns)
        self._last_mode = mode
        return mode, value

    # ------------------------------------------------------------------ shutdown
    def summary(self) -> str:
        """One line for the log: states published and the loop's timing counters."""
        text = (f"{self._published} states in {self._stage_ns * 1e-9:.3f} s of stage time, "
                f"{self._accepted} commands accepted, "
                f"{sum(self._rejected.values())} rejected, {self._cmd_timeouts} command timeouts")
        if self._sim_backend and self._lockstep:
            text += f", {self._ls_timeouts} lockstep timeouts"
        elif self._sim_backend:
            text += (f", {self._overruns} overruns ({self._missed} cycles caught up), "
                     f"{self._reanchors} re-anchors")
        elif self._link is not None:
            ds = self._link.decoder.stats
            text += (f", frames {ds.frames}, lost {ds.lost_frames}, crc errors {ds.crc_errors}, "
                     f"resyncs {self._link.resyncs}, reconnects {self._link.reconnects}, "
                     f"late cycles {self._late}")
        return text

    def stop(self) -> None:
        """Final actions before destruction: a last diagnostics message; serial → an IDLE
        command (motor off) and the port closed."""
        try:
            self._on_diagnostics()
        except Exception:  # noqa: BLE001 - the context may be gone at shutdown
            pass
        if self._link is not None:
            self._link.stop(idle=True)

    @property
    def fatal_error(self) -> str | None:
        """Set when the serial link thread stopped for good (``run_node`` then ends the node
        with exit status 1 after the final safe output)."""
        return self._link.fatal_error if self._link is not None else None

    def destroy_node(self):
        if self._link is not None:
            self._link.stop(idle=True)  # idempotent
        return super().destroy_node()

    # ------------------------------------------------------------------ markers
    def _make_markers(self) -> MarkerArray:
        arr = MarkerArray()
        life = Duration(sec=0, nanosec=500_000_000)

        def mk(ns, i, typ, rgba, scale):
            m = Marker(ns=ns, id=i, type=typ, action=Marker.ADD)
            m.pose.orientation.w = 1.0
            m.scale.x, m.scale.y, m.scale.z = scale
            m.color = ColorRGBA(r=rgba[0], g=rgba[1], b=rgba[2], a=rgba[3])
            m.lifetime = life
            return m

        self._m_carriage = mk("carriage", 0, Marker.CUBE, (0.6, 0.6, 0.65, 1.0),
                              (0.02, 0.03, 0.02))
        self._m_block = mk("sample", 0, Marker.CUBE, (0.8, 0.5, 0.2, 1.0), (0.02, 0.025, 0.015))
        self._m_arrow = mk("force", 0, Marker.ARROW, (0.1, 0.8, 0.2, 1.0), (0.004, 0.008, 0.008))
        self._m_arrow.points = [Point(), Point()]
        limits = mk("travel_limits", 0, Marker.LINE_LIST, (0.9, 0.1, 0.1, 1.0),
                    (0.001, 0.0, 0.0))
        limits.points = [Point(x=x, y=y) for x in (self._x_min, self._x_max)
                         for y in (-0.03, 0.03)]
        self._m_text = mk("label", 0, Marker.TEXT_VIEW_FACING, (1.0, 1.0, 1.0, 1.0),
                          (0.0, 0.0, 0.008))
        self._m_text.pose.position.z = 0.03
        arr.markers = [self._m_carriage, self._m_arrow, limits, self._m_text]
        if self._sim_backend and self._has_tool:
            arr.markers.insert(1, self._m_block)
        return arr

    def _on_markers(self) -> None:
        if self._marker_pub.get_subscription_count() == 0 or self._last is None:
            return
        last = self._last
        frame = self._values["marker_frame"]
        stamp = self.get_clock().now().to_msg()
        for m in self._markers.markers:
            m.header.frame_id = frame
            m.header.stamp = stamp
        x = float(last.position)
        lc = -float(last.force)  # force of the object/operator on the stage
        self._m_carriage.pose.position.x = x
        a = self._m_arrow
        if self._sim_backend and self._hand is not None:
            # the hand's force, drawn where it pushes (carriage, or the tool side)
            h = float(last.hand_force)
            at = float(last.tool_position) if self._hand.location == "tool" else x
            a.points[0].x, a.points[1].x = at - 0.002 * h, at
            a.ns = "hand_force"
            label = f"hand {h:+.2f} N"
        else:
            a.points[0].x, a.points[1].x = x, x + 0.002 * lc
            a.ns = "load_cell_force"
            label = f"load cell {lc:+.2f} N"
        if self._sim_backend and self._has_tool:
            self._m_block.pose.position.x = float(last.tool_position) + 0.02
        self._m_text.pose.position.x = x
        self._m_text.text = f"{self._joint}: x {x * 1e3:+.2f} mm, v {last.velocity:+.3f} m/s, " \
                            f"{label}"
        self._marker_pub.publish(self._markers)

    # ------------------------------------------------------------------ diagnostics
    def diagnostic_status(self) -> DiagnosticStatus:
        """The stage's status (published on /diagnostics); resets the per-period counters."""
        now = time.monotonic()
        elapsed = max(now - self._diag_mono, 1e-9)
        self._diag_mono = now
        rate = self._published_period / elapsed
        v = self._values
        kv = [("backend", self._backend), ("sync", v["sync"]), ("joint", self._joint),
              ("rate [Hz]", f"{rate:.1f}"), ("expected rate [Hz]", f"{self._rate:g}"),
              ("states published", str(self._published)),
              ("stage time [s]", f"{self._stage_ns * 1e-9:.3f}")]
        problems: list[str] = []
        level = DiagnosticStatus.OK
        ok_msg = "running"

        def worse(lvl, text):
            nonlocal level
            level = max(level, lvl)
            problems.append(text)

        # backend-specific
        if self._sim_backend:
            s = self._sim
            kv += [("sample", v["sample"]), ("hand", v["hand_script"] or "none"),
                   ("hand location", v["hand_location"]),
                   ("hand start", v["hand_start"] if self._run_base_ns is not None
                    else "waiting for the first command"),
                   ("carriage friction", str(v["carriage_friction"])),
                   ("physics steps per cycle", f"{self._spc} x {v['sim_dt']:g} s"),
                   ("solver unconverged steps", str(s.solver_unconverged))]
            if self._lockstep:
                kv += [("lockstep steps", str(self._ls_steps)),
                       ("lockstep timeouts", str(self._ls_timeouts)),
                       ("lockstep timeout [s]", f"{self._ls_timeout_ns * 1e-9:g}")]
                if not self._ls_started:
                    worse(DiagnosticStatus.WARN, "lockstep: waiting for a controller "
                          "(joint_states subscriber and command publisher)")
                ok_msg = "lockstep"
            else:
                ct = self._cycle_time.percentiles()
                kv += [("cycle overruns", str(self._overruns)),
                       ("cycle overruns this period", str(self._overruns_period)),
                       ("missed cycles (caught up)", str(self._missed)),
                       ("re-anchors (fell > 50 ms behind)", str(self._reanchors))]
                if ct:
                    kv += [("cycle time p50 [ms]", f"{ct[0] * 1e3:.3f}"),
                           ("cycle time p99 [ms]", f"{ct[1] * 1e3:.3f}"),
                           ("cycle time max [ms]", f"{ct[2] * 1e3:.3f}")]
                self._cycle_time.clear()
                if self._overruns_period:
                    worse(DiagnosticStatus.WARN, f"{self._overruns_period} cycle overruns")
                if (self._published_period >= 10 and not self.finished
                        and abs(rate / self._rate - 1.0) > 0.1):
                    worse(DiagnosticStatus.WARN, f"rate {rate:.0f} Hz below {self._rate:g} Hz")
                ok_msg = "realtime"
            ok_msg = f"sim, {ok_msg}"
        else:
            link = self._link
            ds = link.decoder.stats if link is not None else None
            if link is not None:
                rtt = link.rtt.percentiles()
                kv += [("port", link.port), ("link", link.state),
                       ("connected", str(link.connected)), ("last error", link.error or "none"),
                       ("frames", str(ds.frames)), ("lost frames", str(ds.lost_frames)),
                       ("sequence gaps", str(ds.seq_gaps)), ("crc errors", str(ds.crc_errors)),
                       ("length errors", str(ds.length_errors)),
                       ("type errors", str(ds.type_errors)),
                       ("value errors", str(ds.value_errors)),
                       ("last value error", link.decoder.last_value_error or "none"),
                       ("garbage bytes", str(ds.garbage_bytes)), ("resyncs", str(link.resyncs)),
                       ("duplicates", str(ds.duplicates)),
                       ("sequence resets", str(ds.seq_resets)),
                       ("reconnects", str(link.reconnects)),
                       ("open failures", str(link.open_failures)),
                       ("disconnects", str(link.disconnects)),
                       ("link silences", str(link.silences)),
                       ("frames skipped (backlog)", str(self._skipped)),
                       ("commands sent", str(link.commands_sent)),
                       ("command write errors", str(link.write_errors)),
                       ("serial thread errors", str(link.thread_errors)),
                       ("late cycles", str(self._late)),
                       ("first late cycle, stage time [s]",
                        "none" if self._late_first is None else f"{self._late_first * 1e-9:.3f}"),
                       ("keep-alive commands", str(link.keepalives)),
                       ("device timeout frames", str(self._dev_timeouts)),
                       ("device rx error frames", str(self._dev_rx_errors)),
                       ("device fault frames", str(self._dev_faults))]
                if rtt:
                    kv += [("command round trip p50 [ms]", f"{rtt[0] * 1e3:.3f}"),
                           ("command round trip p99 [ms]", f"{rtt[1] * 1e3:.3f}")]
                link.rtt.clear()
                new_values = ds.value_errors - self._value_errors_seen
                self._value_errors_seen = ds.value_errors
                if new_values:
                    worse(DiagnosticStatus.WARN, f"{new_values} state frames with unusable "
                          f"values rejected, last: {link.decoder.last_value_error}")
                if link.thread_errors != self._thread_errors_seen:
                    self._thread_errors_seen = link.thread_errors
                    worse(DiagnosticStatus.ERROR, link.error)
                if not link.connected:
                    worse(DiagnosticStatus.ERROR, link.error or "serial port not open")
                elif link.quiet:
                    worse(DiagnosticStatus.ERROR, f"{link.port}: {link.state}")
                elif self._dev_flags & 0x0040:
                    worse(DiagnosticStatus.ERROR, "device FAULT (motor off)")
                ok_msg = f"serial {link.port}, streaming"
        # flags and commands (both backends)
        kv.append(("accelerometer", names.ACCELEROMETER if self._imu_pub is not None
                   else "not published"))
        kv += [("saturated cycles", str(self._sat_total)),
               ("saturated cycles this period", str(self._sat_period)),
               ("end-stop cycles", str(self._lim_total)),
               ("end-stop cycles this period", str(self._lim_period))]
        if self._last is not None:
            kv += [("saturated", str(bool(self._last.saturated))),
                   ("at end stop", str(bool(self._last.at_limit))),
                   ("position [m]", f"{self._last.position:+.6f}"),
                   ("velocity [m/s]", f"{self._last.velocity:+.5f}"),
                   ("load cell force on stage [N]", f"{-self._last.force:+.4f}")]
            if self._sim_backend:
                kv.append(("hand force [N]", f"{self._last.hand_force:+.4f}"))
        if self._sat_period:
            worse(DiagnosticStatus.WARN, f"motor force saturated ({self._sat_period} cycles, "
                  f"max_force {v['max_force']:g} N)")
        if self._lim_period:
            worse(DiagnosticStatus.WARN, f"at an end stop ({self._lim_period} cycles)")
        mode, value, _ = self._cmd
        if not self._cmd_seen:
            cstate = "none yet (idle)"
        elif self._cmd_timed_out:
            cstate = "timed out: zero force"
            worse(DiagnosticStatus.WARN, f"command timeout ({v['command_timeout']:g} s): "
                  "zero motor force")
        else:
            cstate = "ok"
        kv += [("command", cstate), ("command mode", _MODE_NAMES[mode]),
               ("command value", f"{value:+.6g}"), ("applied mode", _MODE_NAMES[self._last_mode]),
               ("command timeout [s]", f"{v['command_timeout']:g}"),
               ("command timeouts", str(self._cmd_timeouts)),
               ("accepted commands", str(self._accepted)),
               ("effort commands beyond max_force", str(self._over_limit)),
               ("rejected commands", str(sum(self._rejected.values())))]
        for reason in sorted(self._rejected):
            kv += [(f"rejected {reason}", str(self._rejected[reason])),
                   (f"rejected {reason} last", self._rejected_last[reason])]
        if self._rejected_period:
            worse(DiagnosticStatus.WARN, f"{self._rejected_period} rejected commands, last: "
                  f"{self._rejected_latest}")
        if self._rejected_states:
            kv.append(("non-finite states dropped", str(self._rejected_states)))
        if self.finished:
            problems.insert(0, "finished (duration reached)")
        self._published_period = self._overruns_period = self._rejected_period = 0
        self._sat_period = self._lim_period = 0
        return status(f"{self.get_fully_qualified_name()}: stage", self._joint, level, problems,
                      ok_msg, kv)

    def _on_diagnostics(self) -> None:
        msg = DiagnosticArray()
        msg.header.stamp = self.get_clock().now().to_msg()
        msg.status = [self.diagnostic_status()]
        self._diag_pub.publish(msg)


def shutdown(node: HapticStage, context_ok: bool) -> None:
    """The stage's last act before the process ends: stop (safe motor state) and log."""
    node.stop()
    if context_ok:
        sleep_ok(0.05)  # let the reliable writers hand the last state over
    node.get_logger().info("stopped" + (" (duration reached)" if node.finished else "")
                           + f": {node.summary()}")


def main(args=None) -> int:
    """Run the stage until Ctrl-C/SIGTERM or ``duration``; exit 0 (1 on bad parameters).

    Non-ROS option ``--executor events|single`` (default events, driven by spin_once)."""
    return run_node(HapticStage, names.HAPTIC_STAGE, args, done=lambda n: n.finished,
                    on_stop=shutdown)


if __name__ == "__main__":
    sys.exit(main())
