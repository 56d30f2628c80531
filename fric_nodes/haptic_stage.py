"""``haptic_stage``: the node of paper 003's 1-DOF haptic stage (Richard, Cutkosky & MacLean:
motor-driven carriage, encoder, load cell, accelerometer); its specification is
docs/haptic_stage.md.

Every cycle it publishes ``accelerometer``, ``joint_states`` and ``wrench`` (the force the
object/operator applies to the stage at the load cell, +x), sim only ``~/hand_force``; it takes
``effort_controller/commands`` and ``position_controller/commands`` (the latest valid command
wins; older than ``command_timeout``: zero force). Backends: ``sim``
(:class:`fric_core.haptics.stage.HapticStageSim`, paced ``realtime`` by a steady timer or in
``lockstep`` with a controller) and ``serial`` (a device speaking docs/serial_protocol.md through
:class:`fric_nodes.hardware.serial_link.SerialLink`, whose frames pace the node). State groups,
counters and /diagnostics: :mod:`fric_nodes.stage_diagnostics`; markers:
:mod:`fric_nodes.stage_markers`.

A managed (lifecycle) node (:mod:`fric_nodes._lifecycle`; ``autostart`` true by default):
configure starts the stage's servo cycles (sim: its clock, serial: the port opened), so states
are published from ``inactive`` on; activate applies the commands; deactivate turns the motor
off at once (serial: an IDLE frame sent; sim: zero motor force from the next cycle) and ignores
the commands (counted; subscriptions stay; lockstep still steps on them, motor off); cleanup
stops the cycles (sim: stage time frozen; serial: IDLE, port closed); shutdown ends the process.
"""

from __future__ import annotations

import dataclasses
import math
import sys
import time

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from geometry_msgs.msg import WrenchStamped
from rcl_interfaces.msg import SetParametersResult
from rclpy.clock import Clock, ClockType
from rclpy.parameter import Parameter
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import Float64, Float64MultiArray
from visualization_msgs.msg import MarkerArray

from fric_core.haptics.stage import StageReading
from fric_interfaces import names, qos
from fric_interfaces.conversions import CommandReader, InputError
from fric_interfaces.stage_params import SPECS, cycle_steps, validate
from fric_nodes.builders import build_sim

from ._lifecycle import ManagedNode, lifecycle_done
from ._node_util import (FricNode, Housekeeping, RejectLog, Ring, declare_params,
                         rejected_change, run_node, sleep_ok, status, unused_overrides,
                         wall_clock_ns)
from .hardware.device_timeline import DeviceTimeline
from .hardware.serial_link import SerialLink, state_limits
from .hardware.stage_protocol import Mode
from .stage_diagnostics import (MODE_NAMES, CommandState, LockstepState, RealtimeState, Stats,
                                stage_status, summary)
from .stage_markers import StageMarkers

__all__ = ["HapticStage", "SerialLink", "state_limits", "shutdown", "main"]

IDLE, FORCE, POSITION = int(Mode.IDLE), int(Mode.FORCE), int(Mode.POSITION)
_MAX_LAG_S = 0.05  # realtime sim: further behind than this, skip ahead instead of catching up
_SETTLE_S = 0.25  # lockstep start: discovery settling after the controller is seen
_EPOCH_WINDOW = 1000  # serial: frames per re-estimate of the device-to-wall offset
_LIVE = ("command_timeout", "lockstep_timeout")


def _reason_of(err: InputError) -> str:
    return "non_finite" if "non-finite" in err.reason else "wrong_length"


class HapticStage(ManagedNode, FricNode):
    """The haptic stage node (docs/haptic_stage.md). ``kwargs`` go to ``Node`` (e.g.
    ``parameter_overrides``, ``namespace``)."""

    default_name = names.HAPTIC_STAGE
    _link: SerialLink | None = None  # the serial backend's link (set in _setup)

    # ------------------------------------------------------------------ set-up
    def _setup(self) -> None:
        self._specs = {s.name: s for s in SPECS}
        values = declare_params(self, SPECS)
        validate(values)
        self._values = values
        unused = unused_overrides(self, self._specs)
        if unused:
            self.get_logger().warning(f"ignoring unknown parameters {unused}")
        self._sim_backend = values["backend"] == "sim"
        self._lockstep = values["sync"] == "lockstep"
        self._joint = values["joint_name"]
        self._rate = float(values["rate"])
        self._period_ns = int(round(1e9 / self._rate))
        self._duration_ns = int(round(values["duration"] * 1e9))
        self._x_min, self._x_max = float(values["x_min"]), float(values["x_max"])
        self._max_force = float(values["max_force"])

        self._wall_ns = wall_clock_ns(self)
        self._steady = Clock(clock_type=ClockType.STEADY_TIME)

        # state (docs/haptic_stage.md; the groups: stage_diagnostics)
        self.finished = False  # duration reached: main exits
        self._k = 0  # cycles run (sim), published states (serial)
        self._epoch_ns = None  # stamp = epoch + k * period (sim)
        self._last_stamp = -1
        self._last = None  # last published reading (StageReading, or StateFrame)
        self._run_base_ns = 0  # stage time the duration counts from (None: hand_start waits)
        self._diag_mono = time.monotonic()
        self._cmd = CommandState()
        self._rejects = RejectLog(self.get_logger(), "command")
        self._stats = Stats()
        self._rt = RealtimeState(max_catchup=max(1, int(_MAX_LAG_S * self._rate)))
        self._ls = LockstepState()
        self._dev = DeviceTimeline(self._period_ns, _EPOCH_WINDOW)
        self._configured = False  # lifecycle: servo cycles run (inactive or active)
        self._active = False  # lifecycle: commands applied
        self._ignored = 0  # valid commands received while not active
        self._apply_live(values)

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
        hand = (self._sim.hand or self._hand_pending) if self._sim_backend else None
        self._markers = StageMarkers(self._x_min, self._x_max,
                                     hand.location if hand is not None else None,
                                     self._sim_backend and self._sim.has_tool,
                                     period=1.0 / values["marker_rate"],
                                     offset=values["marker_offset"])
        # markers/diagnostics run in the slack after a command arrived (see Housekeeping)
        self._housekeeping = Housekeeping()
        self.create_timer(1.0 / values["marker_rate"],
                          self._housekeeping.timer(self._on_markers), clock=self._steady)
        self._diag_timer = self.create_timer(values["diagnostics_period"],
                                             self._housekeeping.timer(self.publish_diagnostics),
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

    def _make_lockstep_timer(self) -> None:
        """The lockstep check (start-up wait, timeout): a fifth of the timeout, at most 50 ms."""
        if self._tick_timer is not None:
            self.destroy_timer(self._tick_timer)
        self._tick_timer = self.create_timer(min(0.05, self._ls.timeout_ns * 0.2e-9),
                                             self._on_lockstep_check, clock=self._steady)

    def _apply_live(self, values: dict) -> None:
        self._cmd.timeout_ns = int(round(values["command_timeout"] * 1e9))
        self._cmd.timeout_cycles = int(values["command_timeout"] * self._rate + 1e-9)
        self._ls.timeout_ns = int(round(values["lockstep_timeout"] * 1e9))

    def _on_set_parameters(self, params: list[Parameter]) -> SetParametersResult:
        for p in params:
            reason = rejected_change(self._specs, _LIVE, p)
            if reason:
                return SetParametersResult(successful=False, reason=reason)
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
            self._rejects.add(_reason_of(e), f"{topic}: {e}")
            return
        cmd = self._cmd
        if not self._active:  # lifecycle: motor off, the command is not stored
            self._ignored += 1
            if self._lockstep and self._ls.waiting and self._configured:
                self._lockstep_step(timeout=False)  # the stage's clock: a step, motor off
            return
        if mode == POSITION:
            if not self._x_min <= value <= self._x_max:
                self._rejects.add("out_of_travel", f"{topic}: data[0] = {value!r} m is outside "
                                  f"the travel [x_min, x_max] = [{self._x_min:g}, "
                                  f"{self._x_max:g}] m")
                return
        elif self._sim_backend and not -self._max_force <= value <= self._max_force:
            cmd.over_limit += 1
            self.get_logger().warning(
                f"{topic}: data[0] = {value!r} N is beyond max_force {self._max_force:g} N: "
                "the motor saturates at the limit", throttle_duration_sec=1.0)
        cmd.accepted += 1
        cmd.seen = True
        cmd.timed_out = False
        if self._run_base_ns is None:
            self._start_run_clock()
        if self._lockstep:
            cmd.latest = (mode, value, self._k)
            if self._ls.waiting:
                self._lockstep_step(timeout=False)
        else:
            cmd.latest = (mode, value, time.monotonic_ns())
            link = self._link
            if link is not None and not self.finished and not link.quiet:
                link.send(mode, value)  # at once: the device applies it in its next cycle
                cmd.applied = mode
        self._housekeeping.after_output()

    def _start_run_clock(self) -> None:
        """hand_start first_command: the hand script (sim) and the duration start now."""
        sim = self._sim
        if sim is None:  # serial: the device runs its own hand; the duration counts from here
            stage_ns = self._stats.stage_ns
            self._run_base_ns = stage_ns
            self.get_logger().info(f"first command at stage time {stage_ns * 1e-9:.3f} s"
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

    def _current(self, age: int, limit: int) -> tuple[int, float]:
        """The command to apply: (mode, value); zero force when older than the timeout."""
        cmd = self._cmd
        mode, value, _ = cmd.latest
        if mode == IDLE:
            return IDLE, 0.0
        if age > limit:
            if not cmd.timed_out:
                cmd.timed_out = True
                cmd.timeouts += 1
                self.get_logger().warning(
                    f"command timeout: no valid command for {self._values['command_timeout']:g}"
                    " s: zero motor force")
            return IDLE, 0.0
        return mode, value

    @property
    def command(self) -> tuple[str, float, bool]:
        """(mode name, value, timed out) of the stored command."""
        cmd = self._cmd
        return MODE_NAMES[cmd.latest[0]], cmd.latest[1], cmd.timed_out

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
        self._cmd.applied = mode
        return r

    def _publish(self, stamp_ns: int, position: float, velocity: float, force: float,
                 accel: float, hand: float | None, sat: bool, lim: bool) -> bool:
        """accelerometer, joint_states, wrench (and hand force); False (nothing published) if
        non-finite."""
        if not (math.isfinite(position) and math.isfinite(velocity) and math.isfinite(force)
                and math.isfinite(accel)):
            self._stats.bad_states += 1
            self.get_logger().error(f"non-finite state {(position, velocity, force, accel)}: "
                                    "not published", throttle_duration_sec=1.0)
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
        self._stats.count(sat, lim)
        return True

    def _publish_reading(self, r: StageReading) -> None:
        self._last = r
        stage_ns = self._stats.stage_ns = self._k * self._period_ns
        self._publish(self._epoch_ns + stage_ns, r.position, r.velocity, -r.force,
                      r.acceleration, r.hand_force, r.saturated, r.at_limit)
        if self._duration_reached(stage_ns):
            self._finish()

    def _finish(self) -> None:
        if self.finished:
            return
        self.finished = True
        if self._tick_timer is not None:
            self._tick_timer.cancel()
        self.get_logger().info(f"duration {self._duration_ns * 1e-9:g} s of stage time reached "
                               f"({self._stats.published} states published): stopping")

    # realtime
    def _on_tick(self) -> None:
        if self.finished or not self._configured:
            return
        start = time.monotonic_ns()
        P = self._period_ns
        rt = self._rt
        if rt.t0 is None:  # the first cycle (k = 0), or the first after a configure (k > 0)
            rt.t0 = start - (self._k + 1) * P
            self._epoch_ns = self._wall_ns() - (self._k + 1) * P
            n = 1
        else:
            n = (start - rt.t0 + P // 2) // P - self._k
            if n < 1:
                n = 1
            elif n > 1:
                if n > rt.max_catchup:
                    skip = n - 1
                    rt.t0 += skip * P
                    self._epoch_ns += skip * P
                    rt.reanchors += 1
                    self.get_logger().warning(
                        f"servo loop {skip * P * 1e-6:.1f} ms behind: simulation skips ahead",
                        throttle_duration_sec=1.0)
                    n = 1
                else:
                    rt.overruns += 1
                    rt.overruns_period += 1
                    rt.missed += n - 1
        mode, value, t = self._cmd.latest
        r = None
        for _ in range(n):
            if mode != IDLE:
                mode, value = self._current(start - t, self._cmd.timeout_ns)
            r = self._sim_cycle(mode, value)
            if self._duration_reached(self._k * P):
                break
        self._publish_reading(r)
        rt.cycle_time.add((time.monotonic_ns() - start) * 1e-9)

    # lockstep
    def _lockstep_begin(self) -> None:
        self._ls.started = True
        self._epoch_ns = self._wall_ns()
        r = self._sim.rest_reading()  # state 0 of lockstep
        self._publish_reading(r)
        self._ls.waiting = True
        self._ls.pub_mono = time.monotonic_ns()
        self.get_logger().info("lockstep: state 0 published, stepping on commands")

    def _lockstep_step(self, timeout: bool) -> None:
        ls = self._ls
        ls.waiting = False
        mode, value, k_cmd = self._cmd.latest
        if mode != IDLE:
            mode, value = self._current(self._k - k_cmd, self._cmd.timeout_cycles)
        if timeout:
            ls.timeouts += 1
        ls.steps += 1
        r = self._sim_cycle(mode, value)
        self._publish_reading(r)
        if not self.finished:
            ls.waiting = True
            ls.pub_mono = time.monotonic_ns()

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

    def _listeners_present(self) -> bool:
        """``lockstep_listeners`` nodes besides a controller subscribe to joint_states (the
        controller counted as one: the start-up wait asks for one more node than that)."""
        want = self._values["lockstep_listeners"]
        if want <= 0:
            return True
        if self._js_pub.get_subscription_count() < want + 1:
            return False
        nodes = {(i.node_namespace, i.node_name)
                 for i in self.get_subscriptions_info_by_topic(self._js_pub.topic_name)}
        return len(nodes) >= want + 1

    def _on_lockstep_check(self) -> None:
        if self.finished or not self._configured:
            return
        ls = self._ls
        now = time.monotonic()
        if not ls.started:
            ready = self._controller_present() and self._listeners_present()
            if ready and ls.seen_mono is None:
                ls.seen_mono = now
            if ((ready and now - ls.seen_mono >= _SETTLE_S)
                    or now - ls.wait_start >= self._values["lockstep_wait"]):
                if not ready:
                    self.get_logger().warning(
                        f"lockstep: no controller (or fewer than lockstep_listeners "
                        f"{self._values['lockstep_listeners']} other joint_states subscribers) "
                        f"after {self._values['lockstep_wait']:g} s; starting anyway (steps "
                        "every lockstep_timeout)")
                self._lockstep_begin()
            return
        if ls.waiting and time.monotonic_ns() - ls.pub_mono > ls.timeout_ns:
            self.get_logger().warning(
                f"lockstep: no command within {ls.timeout_ns * 1e-9:g} s: stepping with "
                "the last command", throttle_duration_sec=1.0)
            self._lockstep_step(timeout=True)

    # ------------------------------------------------------------------ serial frames
    def _on_frames(self, frames, rx_mono: int, rx_wall: int, answer: int | None):
        """Link thread: publish the newest state frame of a batch; return the command to send
        as keep-alive if none was sent this cycle."""
        if self.finished:
            return IDLE, 0.0
        link, cmd, stats = self._link, self._cmd, self._stats
        f, stage_ns, stamp_ns = self._dev.take(
            frames, link.opens, rx_wall, stats.stage_ns, stats.published > 0, answer,
            commanding=cmd.latest[0] != IDLE and not cmd.timed_out)
        link.ack_rtt(f.ack, rx_mono)
        self._last = f
        stats.stage_ns = stage_ns
        self._k += 1
        self._publish(stamp_ns, f.position, f.velocity, -f.force, f.acceleration, None,
                      f.saturated, f.at_limit)
        if self._duration_reached(stage_ns):
            self._finish()
            return IDLE, 0.0
        mode, value, t = cmd.latest
        if mode != IDLE:
            mode, value = self._current(rx_mono - t, cmd.timeout_ns)
        cmd.applied = mode
        return mode, value

    # ------------------------------------------------------------------ lifecycle
    def _lc_configure(self) -> None:
        """unconfigured → inactive: the servo cycles start (sim: its clock resumes from the
        state it had; serial: the port opens), motor off."""
        self._motor_off()
        self._rt.t0 = None  # realtime: re-anchored at the next tick, without catching up
        if self._lockstep and self._ls.started:
            self._ls.waiting = True  # stepping resumes on the next command (or the timeout)
            self._ls.pub_mono = time.monotonic_ns()
        self._configured = True
        if self._link is not None:
            self._link.start()

    def _lc_activate(self) -> None:
        """inactive → active: commands arriving from now on are applied."""
        self._active = True

    def _lc_deactivate(self) -> None:
        """active → inactive: motor off at once (serial: an IDLE frame now), commands ignored."""
        self._active = False
        self._motor_off()
        link = self._link
        if link is not None and self._configured and not self.finished and not link.quiet:
            link.send(IDLE, 0.0)
            self._cmd.applied = IDLE

    def _lc_cleanup(self) -> None:
        """inactive → unconfigured: the cycles stop (serial: IDLE sent, port closed)."""
        self._active = False
        self._configured = False
        self._motor_off()
        if self._link is not None:
            self._link.stop(idle=True)

    def _motor_off(self) -> None:
        """Zero motor force: the stored command becomes IDLE (no timeout is counted)."""
        self._cmd.latest = (IDLE, 0.0, 0)
        self._cmd.timed_out = False

    # ------------------------------------------------------------------ shutdown
    def _groups(self) -> dict:
        """The pacing and backend state for stage_diagnostics (the ones this node runs)."""
        sim = self._sim_backend
        return dict(realtime=self._rt if sim and not self._lockstep else None,
                    lockstep=self._ls if sim and self._lockstep else None,
                    link=self._link, device=self._dev if self._link is not None else None)

    def summary(self) -> str:
        """One line for the log: states published and the loop's timing counters."""
        return summary(self._stats, self._cmd, self._rejects, **self._groups())

    def stop(self) -> None:
        """Final actions before destruction: a last diagnostics message; serial → an IDLE
        command (motor off) and the port closed."""
        try:
            self.publish_diagnostics()
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

    # ------------------------------------------------------------------ markers, diagnostics
    def _on_markers(self) -> None:
        if self._marker_pub.get_subscription_count() == 0 or self._last is None:
            return
        self._markers.update(self.get_clock().now().to_msg(), self._values["marker_frame"],
                             self._joint, self._last)
        self._marker_pub.publish(self._markers.array)

    def diagnostic_status(self) -> DiagnosticStatus:
        """The stage's status (published on /diagnostics); starts the next period."""
        now = time.monotonic()
        elapsed = max(now - self._diag_mono, 1e-9)
        self._diag_mono = now
        level, problems, ok_msg, kv = stage_status(
            self._values, self._stats, self._cmd, self._rejects, elapsed=elapsed,
            last=self._last, finished=self.finished, hand_waiting=self._run_base_ns is None,
            accelerometer=self._imu_pub is not None, sim=self._sim,
            spc=self._spc if self._sim_backend else 0, **self._groups())
        state = self.lifecycle_state
        kv = [*kv, ("lifecycle state", state),
              ("commands ignored (lifecycle not active)", str(self._ignored))]
        if not self._active and not self.finished:
            problems = [f"{state}: motor off" + ("" if self._configured else
                                                 ", no servo cycles"), *problems]
        return status(f"{self.get_fully_qualified_name()}: stage", self._joint, level, problems,
                      ok_msg, kv)


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
    return run_node(HapticStage, names.HAPTIC_STAGE, args,
                    done=lambda n: n.finished or lifecycle_done(n), on_stop=shutdown)


if __name__ == "__main__":
    sys.exit(main())
