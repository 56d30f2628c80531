"""``friction_renderer``: renders fric_core friction elements on a set of joints.

Paper 000 (Kikuuwe et al. 2006), Sec. IV-D and V:

* ``mode: impedance`` (backdrivable devices; model C, or B): per ``joint_states`` message the
  velocities of the configured joints go into the element, ``f = element.step(v)``, and
  ``−f`` saturated to ±``max_effort`` is published on ``effort_controller/commands``.
* ``mode: admittance`` (stiff, force-sensed devices; model A, or D): per force message
  (``wrench``, or the ``effort`` field of ``joint_states``) the measured force, saturated to
  ±``max_effort``, goes into the element, whose velocity is integrated into a position
  setpoint published on ``position_controller/commands``. The setpoint starts at the measured
  position whenever rendering starts or restarts.
* **planar contact** (impedance mode; paper 002): ``planar.joints: [x, y, yaw]`` renders the
  reduced planar LuGre / Elasto-Plastic model with a pre-computed limit surface on the three
  joints of a planar end effector, coupling force and torque like a real contact patch
  (:mod:`fric_interfaces.planar_params`); the other joints keep their per-joint laws.

Design choices (documented here once, referred to below):

* **One element step per accepted message.** The elements are fixed-step (``dt``). A header stamp
  jump above 1.5 dt counts ``round(jump/dt) − 1`` lost cycles (diagnostics), but the element still
  advances exactly one step: stepping it several times on one stale velocity would extrapolate,
  and a variable step would change the element's constants (Z, the presliding spring) per message.
* **Stamps.** A stamp not after the last accepted one (out of order, duplicate, clock going
  backwards) is rejected. A zero stamp (the publisher does not stamp) is replaced by the receive
  time; gap counting is then only as good as the receive-time jitter. After a watchdog trip any
  stamp is accepted again, so a restarted publisher (or a restarted simulated clock) resumes.
  A stamp that advanced more than ``watchdog_timeout`` beyond the time that really passed since
  the last accepted input (measured on the monotonic receive clock) is a *stamp jump*, not a gap:
  it is rejected (``stamp_jump``) and counts no lost cycles, so one message stamped 1e6 s in the
  future is one rejected input and the next good stamps go on being accepted. Only the first
  input after a (re)start has no history to judge it by: when the second input's stamp is that
  far from it (either way), the stream is re-anchored on the second one (``stamp re-anchors``
  in the diagnostics) instead of rejecting everything until the watchdog trips.
* **Implausible input** (impedance: a joint velocity above ``max_velocity``; admittance: a
  measured force above ``max_force``; any mode: a joint position above ``max_position``):
  rejected like NaN (reason ``implausible``) before it can reach the element. The elements are total (any finite input gives a finite output), but one
  1e300 m/s sample is still physics to them: it would wind the presliding spring or the virtual
  mass up for a long time. Inputs within the limits are physics and are rendered.
* **Bad input** (non-finite values, missing joints, unknown-only names, length mismatches,
  duplicate names, backwards or jumping stamps, implausible values): counted per reason with the
  last message, logged
  (throttled), and answered with the safe output: the last command again (impedance: the last
  effort, clipped to the current ``max_effort``, zero after a trip; admittance: the held setpoint).
  The watchdog measures time since the last *valid* input, so a stream of bad messages ends in the
  watchdog's zero effort / held position like silence does.
* **Watchdog** (steady-clock timer): no valid input for ``watchdog_timeout`` → zero effort
  (impedance) or hold the last setpoint (admittance), repeated on every watchdog tick while
  tripped; the element is reset, so rendering resumes from rest when inputs return. A message of
  the stream that died, handled only after the trip (a loaded machine: it waited in the queue
  while the watchdog fired), is stale, not a resumed stream: a stamp after the last accepted one
  but within ``watchdog_timeout`` of it is rejected (``stamp_stale``), so a dead device's last
  command is the zero, never an effort rendered from that leftover. A resumed publisher stamps
  at least ``watchdog_timeout`` later, a restarted clock earlier: both are accepted. (A simulated
  clock that was paused and resumes where it stopped: its first ``watchdog_timeout`` of stamps
  are rejected as stale, then it renders again.)
* **Two devices with the same joint names** in one ROS domain cannot be told apart (the
  EventsExecutor gives no publisher id per message): their states would be mixed, and when one
  dies the other keeps the renderer going (no watchdog zero). The diagnostics count the
  publishers of ``joint_states`` once per period and report an ERROR when more than one is up
  and every message carried the configured joints.
* **Final command** at shutdown: zero effort (or the held setpoint), then the node waits (at most
  1 s) until every reliable subscriber has acknowledged it before the writer goes away; a
  reliable reader that lost an earlier sample delivers later ones only after the repair, which
  a writer that has already exited can no longer send.
* **Live retuning** validates the whole new parameter set (descriptor ranges, choices, building
  every joint's law and element, the design checks of :mod:`fric_interfaces.renderer_params`)
  and, when accepted, swaps in a new element *at rest* before the next input message (the
  velocity/presliding state is not carried over: the new parameters could put it outside the new
  static set). In admittance mode the setpoint is kept, so the position never jumps; in impedance
  mode a stuck contact's spring force restarts from zero and builds up again within F/K of motion.
* **max_effort** bounds the commanded effort (impedance) or the measured force the element sees
  (admittance: a load-cell spike cannot throw the setpoint); active saturation is reported.
* **output_enabled** (live; see :mod:`fric_interfaces.renderer_params`): false publishes nothing
  at all on the command topic (not even the safe output, the watchdog's or the final one) while
  inputs, watchdog and diagnostics go on and the element rests; true resumes from rest
  (admittance: from the measured position). The hand-over to ``friction_identifier``.
"""

from __future__ import annotations

import sys
import time

import numpy as np
from builtin_interfaces.msg import Duration
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from geometry_msgs.msg import Point, WrenchStamped
from rcl_interfaces.msg import SetParametersResult
from rclpy.clock import Clock, ClockType
from rclpy.duration import Duration as RclDuration
from rclpy.node import Node
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState
from std_msgs.msg import ColorRGBA, Float64MultiArray
from visualization_msgs.msg import Marker, MarkerArray

from fric_interfaces import names, qos
from fric_interfaces.conversions import (Float64ArrayWriter, InputError, JointStateReader,
                                         wrench_to_arrays)
from fric_interfaces.parameters import check
from fric_interfaces.planar_params import LIVE_KEYS as PLANAR_LIVE
from fric_interfaces.planar_params import PLANAR_SPECS, planar_problems
from fric_interfaces.renderer_params import (ELEMENT_KEYS, GLOBAL_SPECS, build_bank, joint_specs,
                                             resolve_element, validate_globals)
from fric_nodes._node_util import Housekeeping, declare_params, run_node, sleep_ok

__all__ = ["FrictionRenderer", "shutdown", "main"]

_AXES = {"x": 0, "y": 1, "z": 2}
_STICK = ColorRGBA(r=0.15, g=0.35, b=1.0, a=1.0)  # blue
_SLIP = ColorRGBA(r=1.0, g=0.55, b=0.0, a=1.0)  # orange
_LAT_RING = 4096  # latency samples kept per diagnostics period (power of two)


class FrictionRenderer(Node):
    """The friction renderer node (see the module docstring). ``kwargs`` go to ``Node``
    (e.g. ``parameter_overrides``, ``namespace``)."""

    def __init__(self, node_name: str = names.FRICTION_RENDERER, **kwargs):
        super().__init__(node_name, **kwargs)
        try:
            self._setup()
        except Exception:
            self.destroy_node()
            raise

    # ------------------------------------------------------------------ set-up
    def _declare(self, specs) -> dict:
        specs = tuple(specs)
        self._specs.update({s.name: s for s in specs})
        return declare_params(self, specs)

    def _setup(self) -> None:
        self._specs = {}
        values = self._declare(GLOBAL_SPECS)
        values.update(self._declare(PLANAR_SPECS))
        validate_globals(values)
        self._joints = joints = tuple(values["joints"])
        planar = set(values["planar.joints"])  # a planar contact's joints have no own law
        values.update(self._declare(s for j in joints if j not in planar for s in joint_specs(j)))
        self._values = values
        n = self._n = len(joints)
        self._mode = values["mode"]
        self._element = resolve_element(values["mode"], values["element"])
        self._impedance = self._mode == "impedance"
        self._dt = float(values["dt"])
        self._dt_ns = self._dt * 1e9
        self._gap_ns = 1.5 * self._dt_ns
        self._bank, notes = build_bank(self._element, self._dt, joints, values,
                                       design_check=values["design_check"])
        for m in notes:
            self.get_logger().warning(f"design: {m}")
        self._warn_unused_overrides()

        use_sim = bool(self.get_parameter("use_sim_time").value)
        self._now_ns = (lambda: self.get_clock().now().nanoseconds) if use_sim else time.time_ns
        self._steady = Clock(clock_type=ClockType.STEADY_TIME)

        # hot-path state (preallocated)
        self._cmd = np.zeros(n)  # last published command (effort or position setpoint)
        self._buf = np.zeros(n)  # scratch
        self._writer = Float64ArrayWriter()
        self._new_bank = None  # accepted retune, swapped in before the next input
        self._staged = None  # validated parameter set between the on-set and post-set callbacks
        self._last_t = -1  # last accepted stamp [ns]
        self._run_accepted = 0  # accepted since the start or the last trip (stamp re-anchoring)
        self._trip_t = -1  # last accepted stamp before the watchdog trip (stale-input check)
        self._reanchors = 0
        self._last_valid_mono = None  # monotonic ns of the last valid input; None: waiting
        self._tripped = False
        self._rendering = False  # admittance: setpoint initialised from the measured position
        self._output = bool(values["output_enabled"])  # False: another controller has the device
        self._force = np.zeros(n)  # admittance wrench input
        self._pos_mono = None  # admittance/wrench: receipt of the last valid joint_states
        self._lat = np.zeros(_LAT_RING)
        self._lat_n = 0
        # statistics
        self._accepted = self._accepted_period = 0
        self._lost = self._lost_period = 0
        self._zero_stamps = 0
        self._rejected: dict[str, int] = {}
        self._rejected_last: dict[str, str] = {}
        self._rejected_period = 0
        self._foreign_period = 0  # messages without the configured joints, this period
        self._names_ok = None  # joint names of the last accepted joint_states (a reference)
        self._rejecting = None  # the message being admitted (for _reject's bookkeeping)
        self._rejected_latest = ""
        self._trips = 0
        self._sat = np.zeros(n, dtype=np.int64)  # saturated cycles per joint, this period
        self._sat_total = 0
        self._diag_mono = time.monotonic()
        self._apply_live(values)

        # topics
        if self._impedance:
            self._reader = JointStateReader(joints, ("position", "velocity"))
            self._input_topic = names.JOINT_STATES
            self._out = self.create_publisher(Float64MultiArray, names.EFFORT_COMMANDS,
                                              qos.CONTROL_PUB)
            js_sub = self.create_subscription(JointState, names.JOINT_STATES,
                                              self._on_joint_state, qos.CONTROL_SUB)
        else:
            self._out = self.create_publisher(Float64MultiArray, names.POSITION_COMMANDS,
                                              qos.CONTROL_PUB)
            if values["admittance_input"] == "joint_effort":
                self._reader = JointStateReader(joints, ("position", "effort"))
                self._input_topic = names.JOINT_STATES
                js_sub = self.create_subscription(JointState, names.JOINT_STATES,
                                                  self._on_effort_state, qos.CONTROL_SUB)
            else:
                self._reader = JointStateReader(joints, ("position",))
                self._axis = _AXES[values["wrench_axis"]]
                self._input_topic = names.WRENCH
                self.create_subscription(WrenchStamped, names.WRENCH, self._on_wrench,
                                         qos.CONTROL_SUB)
                js_sub = self.create_subscription(JointState, names.JOINT_STATES,
                                                  self._on_position, qos.CONTROL_SUB)
        self._state_topic = js_sub.topic_name  # resolved and remapped: its publishers counted
        # the plausibility checks' inputs (read in place: no allocation per message); the wrench
        # path checks its positions where it reads them (_on_position)
        self._plaus_pos = (self._reader.position if self._input_topic == names.JOINT_STATES
                           else None)
        if self._impedance:
            self._plaus_x, self._plaus_what = self._reader.velocity, ("velocity", "max_velocity")
        elif values["admittance_input"] == "joint_effort":
            self._plaus_x, self._plaus_what = self._reader.effort, ("effort", "max_force")
        else:
            self._plaus_x, self._plaus_what = self._force, ("force", "max_force")
        self._marker_pub = self.create_publisher(MarkerArray, names.MARKERS, qos.INFO)
        self._diag_pub = self.create_publisher(DiagnosticArray, names.DIAGNOSTICS, qos.INFO)
        self._markers = self._make_markers()
        self._watchdog_timer = None
        self._make_watchdog_timer()
        self._housekeeping = Housekeeping()  # markers/diagnostics run after an output
        self.create_timer(1.0 / values["marker_rate"],
                          self._housekeeping.timer(self._on_markers), clock=self._steady)
        self.create_timer(values["diagnostics_period"],
                          self._housekeeping.timer(self._on_diagnostics), clock=self._steady)

        self.add_on_set_parameters_callback(self._on_set_parameters)
        self.add_post_set_parameters_callback(self._on_parameters_set)
        self.get_logger().info(
            f"{self._mode} mode, {self._element} ({self._bank.layout}) on joints "
            f"{list(joints)}, dt={self._dt:g} s, input {self._input_topic}")

    def _warn_unused_overrides(self) -> None:
        """Log parameters given in YAML/launch that the node does not use (typos)."""
        given = getattr(self, "_parameter_overrides", {}) or {}
        unused = sorted(k for k in given if k not in self._specs and k != "use_sim_time")
        if unused:
            self.get_logger().warning(f"ignoring unknown parameters {unused} (joints are "
                                      f"{list(self._joints)})")

    def _apply_live(self, values: dict) -> None:
        """Take over the parameters that change without rebuilding the element."""
        self._max_effort = float(values["max_effort"])
        self._max_position = float(values["max_position"])
        self._plaus_lim = float(values["max_velocity" if values["mode"] == "impedance"
                                       else "max_force"])
        for bank in (self._bank, self._new_bank):
            if bank is not None and bank.planar is not None:
                bank.planar.set_normal_force(float(values["planar.normal_force"]))
        self._timeout_ns = int(values["watchdog_timeout"] * 1e9)
        self._marker_scale = float(values["marker_scale"])
        self._marker_frame = values["marker_frame"]

    def _make_watchdog_timer(self) -> None:
        if self._watchdog_timer is not None:
            self.destroy_timer(self._watchdog_timer)
        period = min(max(self._timeout_ns * 1e-9 / 4.0, 0.001), 0.05)
        self._watchdog_timer = self.create_timer(period, self._on_watchdog, clock=self._steady)

    # ------------------------------------------------------------------ hot path
    def _foreign(self, msg) -> bool:
        """A joint_states message with other joint names than the last accepted one (only
        looked at for messages rejected by their stamp: e.g. a gripper driver's)."""
        names_ = getattr(msg, "name", None)
        return names_ is not None and self._names_ok is not None and names_ != self._names_ok

    def _admit(self, msg, read, topic: str) -> bool:
        """Stamp checks and message reading; False (after the safe output) if rejected."""
        self._rejecting = msg
        rx = self._now_ns()
        st = msg.header.stamp
        t = st.sec * 1_000_000_000 + st.nanosec
        stamped = t != 0
        if not stamped:
            t = rx
            self._zero_stamps += 1
        last = self._last_t
        mono = time.monotonic_ns()
        anchor = False
        if last < 0 and self._trip_t >= 0:  # first input after a trip
            if self._trip_t < t <= self._trip_t + self._timeout_ns:
                self._reject("stamp_stale",
                             f"{topic}: header stamp {t} ns is within watchdog_timeout of the "
                             f"last input before the watchdog trip ({self._trip_t} ns): a "
                             "leftover of the stream that stopped, not a resumed one")
                return False
        elif last >= 0:
            # how far the stamp advanced beyond the time that really passed (receive clock)
            excess = (t - last) - (mono - self._last_valid_mono)
            if excess > self._timeout_ns or (t <= last and -excess > self._timeout_ns):
                if self._run_accepted != 1:
                    self._reject("stamp_jump" if t > last else "stamp_not_increasing",
                                 f"{topic}: header stamp {t} ns jumps {(t - last) * 1e-9:.6g} s "
                                 f"from the last accepted {last} ns while "
                                 f"{(mono - self._last_valid_mono) * 1e-9:.3g} s passed (more "
                                 f"than watchdog_timeout apart: a wrong stamp, not a gap)")
                    return False
                anchor = True  # the first input of this run was the odd one: re-anchor
            elif t <= last:
                self._reject("stamp_not_increasing",
                             f"{topic}: header stamp {t} ns is not after the last accepted "
                             f"{last} ns (out of order, duplicate or clock going backwards)")
                return False
        try:
            read(msg)
        except InputError as e:
            self._reject(e.kind, f"{topic}: {e}")
            return False
        x = self._plaus_x
        if max(map(abs, x.tolist())) > self._plaus_lim:  # ~0.25 us for one joint (numpy: 1.4)
            i = int(np.abs(x).argmax())
            what, limit = self._plaus_what
            self._reject("implausible", f"{topic}: {what} {x[i]:.6g} of joint "
                         f"{self._joints[i]!r} is beyond {limit} {self._plaus_lim:g} (an "
                         "implausible sample; it never reaches the element)")
            return False
        if self._plaus_pos is not None and not self._position_plausible(topic):
            return False
        if anchor:
            self._reanchors += 1
            self._run_accepted = 0
            self.get_logger().warning(
                f"{topic}: stamps re-anchored at {t} ns (the first input after the start or a "
                f"watchdog trip was stamped {(last - t) * 1e-9:+.6g} s away from the stream)",
                throttle_duration_sec=1.0)
        elif last >= 0 and t - last > self._gap_ns:
            lost = int(round((t - last) / self._dt_ns)) - 1
            self._lost += lost
            self._lost_period += lost
        self._last_t = t
        self._names_ok = getattr(msg, "name", None)
        self._trip_t = -1
        self._run_accepted += 1
        if stamped:
            self._lat[self._lat_n & (_LAT_RING - 1)] = rx - t
            self._lat_n += 1
        self._last_valid_mono = mono
        self._accepted += 1
        self._accepted_period += 1
        if self._new_bank is not None:
            self._bank, self._new_bank = self._new_bank, None
        self._tripped = False
        return True

    def _on_joint_state(self, msg: JointState) -> None:
        """Impedance mode: one element step per joint_states message."""
        if not self._admit(msg, self._reader.read, "joint_states") or not self._output:
            return
        f = self._bank.step(self._reader.velocity, self._reader.position)
        cmd = self._cmd
        m = self._max_effort
        np.negative(f, out=cmd)
        if np.abs(cmd, out=self._buf).max() > m:
            self._sat += self._buf > m
            self._sat_total += 1
            np.clip(cmd, -m, m, out=cmd)
        self._out.publish(self._writer.fill(cmd))
        self._housekeeping.after_output()

    def _on_effort_state(self, msg: JointState) -> None:
        """Admittance mode, joint_effort input: force and position from joint_states."""
        if not self._admit(msg, self._reader.read, "joint_states") or not self._output:
            return
        self._render_admittance(self._reader.effort, self._reader.position)

    def _read_wrench(self, msg: WrenchStamped) -> None:
        force, _ = wrench_to_arrays(msg)
        self._force[0] = force[self._axis]

    def _on_wrench(self, msg: WrenchStamped) -> None:
        """Admittance mode, wrench input (1 joint): one element step per wrench message."""
        if not self._rendering and (self._pos_mono is None or time.monotonic_ns()
                                    - self._pos_mono > self._timeout_ns):
            self._reject("no_position", "wrench: no recent joint_states to start the position "
                         "setpoint from; waiting", publish=False)
            return
        if not self._admit(msg, self._read_wrench, "wrench") or not self._output:
            return
        self._render_admittance(self._force, self._reader.position)

    def _on_position(self, msg: JointState) -> None:
        """Admittance mode, wrench input: the measured position (to start the setpoint)."""
        try:
            self._reader.read(msg)
        except InputError as e:
            self._reject(e.kind, f"joint_states: {e}", publish=False)
            return
        if not self._position_plausible("joint_states", publish=False):
            self._pos_mono = None  # no setpoint starts from it
            return
        self._pos_mono = time.monotonic_ns()

    def _position_plausible(self, topic: str, publish: bool = True) -> bool:
        """|position| <= max_position for every joint, else a rejected input (``implausible``)."""
        p = self._reader.position
        if max(map(abs, p.tolist())) <= self._max_position:
            return True
        i = int(np.abs(p).argmax())
        self._reject("implausible", f"{topic}: position {p[i]:.6g} of joint "
                     f"{self._joints[i]!r} is beyond max_position {self._max_position:g} (an "
                     "implausible sample; it never reaches the element)", publish=publish)
        return False

    def _render_admittance(self, h: np.ndarray, position: np.ndarray) -> None:
        sp = self._cmd
        if not self._rendering:
            sp[:] = position
            self._rendering = True
        m = self._max_effort
        hc = self._buf
        np.abs(h, out=hc)
        if hc.max() > m:
            self._sat += hc > m
            self._sat_total += 1
            np.clip(h, -m, m, out=hc)
        else:
            hc[:] = h
        v = self._bank.step(hc)
        sp += np.multiply(v, self._dt, out=hc)
        self._out.publish(self._writer.fill(sp))
        self._housekeeping.after_output()

    # ------------------------------------------------------------------ safety
    def _reject(self, reason: str, text: str, publish: bool = True) -> None:
        self._rejected[reason] = self._rejected.get(reason, 0) + 1
        self._rejected_last[reason] = text
        self._rejected_latest = text
        self._rejected_period += 1
        if reason == "missing_joint":
            self._foreign_period += 1
        elif reason.startswith("stamp_") and self._foreign(self._rejecting):
            self._foreign_period += 1  # rejected for its stamp, but not one of our messages
        self.get_logger().warning(f"rejected input: {text}", throttle_duration_sec=1.0)
        if publish:
            self._publish_safe()

    def _publish_safe(self) -> None:
        """Impedance: the last effort again, clipped to max_effort (zero before the first valid
        input and after a trip). Admittance: the held setpoint, or nothing before one exists.
        Nothing while output_enabled is false."""
        if not self._output:
            return
        if self._impedance:
            m = self._max_effort
            np.clip(self._cmd, -m, m, out=self._cmd)
        elif not self._rendering and not self._tripped:
            return  # no setpoint yet: no position to hold
        self._out.publish(self._writer.fill(self._cmd))

    def _on_watchdog(self) -> None:
        if self._last_valid_mono is None:
            return  # waiting for the first input
        if self._tripped:
            self._publish_safe()
        elif time.monotonic_ns() - self._last_valid_mono > self._timeout_ns:
            self._trip()

    def _trip(self) -> None:
        self._tripped = True
        self._trips += 1
        if self._new_bank is not None:
            self._bank, self._new_bank = self._new_bank, None
        self._bank.reset()
        if self._last_t >= 0:
            self._trip_t = self._last_t
        self._last_t = -1
        self._run_accepted = 0
        if self._impedance:
            self._cmd[:] = 0.0
        self._rendering = False  # admittance: restart from the measured position
        self._publish_safe()
        self.get_logger().warning(
            f"watchdog: no valid {self._input_topic} for {self._timeout_ns * 1e-9:g} s: "
            + ("output disabled, element reset" if not self._output else
               "commanding zero effort" if self._impedance else "holding the position"))

    def publish_stop(self) -> bool:
        """Final safe command at shutdown: zero effort, or hold the last setpoint (nothing while
        output_enabled is false: another controller has the device). True if published."""
        if not self._output:
            return False
        if self._impedance:
            self._cmd[:] = 0.0
            self._out.publish(self._writer.fill(self._cmd))
        elif self._rendering or self._tripped:
            self._out.publish(self._writer.fill(self._cmd))
        return True

    @property
    def output_enabled(self) -> bool:
        return self._output

    def _set_output(self, enabled: bool) -> None:
        """The hand-over switch: either way the element restarts from rest (a staged retune is
        fresh already); admittance restarts from the measured position."""
        if enabled == self._output:
            return
        self._output = enabled
        if self._new_bank is None:
            self._bank.reset()
        if self._impedance:
            self._cmd[:] = 0.0
        self._rendering = False
        self.get_logger().info("output enabled: rendering from rest" if enabled else
                               "output disabled: publishing nothing (another controller has "
                               "the device)")

    @property
    def last_command(self) -> np.ndarray:
        """A copy of the last command published (effort, or position setpoint)."""
        return self._cmd.copy()

    @property
    def watchdog_tripped(self) -> bool:
        return self._tripped

    # ------------------------------------------------------------------ parameters
    def _on_set_parameters(self, params: list[Parameter]) -> SetParametersResult:
        """Validate the whole new parameter set; stage it for :meth:`_on_parameters_set`."""
        self._staged = None
        new = dict(self._values)
        rebuild = False
        for p in params:
            spec = self._specs.get(p.name)
            if spec is None:
                continue  # not ours (use_sim_time, …)
            if p.type_ == Parameter.Type.NOT_SET:
                return SetParametersResult(successful=False,
                                           reason=f"{p.name}: cannot be undeclared")
            reason = check(spec, p.value)
            if reason:
                return SetParametersResult(successful=False, reason=f"{p.name}: {reason}")
            new[p.name] = p.value
            if p.name.startswith("planar."):
                rebuild |= p.name not in PLANAR_LIVE
            elif p.name == "design_check" or p.name.rpartition(".")[2] in ELEMENT_KEYS:
                rebuild = True
        bank = None
        notes = []
        pl = self._bank.planar
        if not rebuild and pl is not None and new["design_check"] == "reject":
            problems = planar_problems(new, self._dt, pl.radius)  # a live normal force
            if problems:
                return SetParametersResult(successful=False, reason="design check failed: "
                                           + "; ".join(problems))
        if rebuild:
            try:
                bank, notes = build_bank(self._element, self._dt, self._joints, new,
                                         design_check=new["design_check"])
            except ValueError as e:
                return SetParametersResult(successful=False, reason=str(e))
        self._staged = (new, bank, notes)
        return SetParametersResult(successful=True)

    def _on_parameters_set(self, params: list[Parameter]) -> None:
        staged, self._staged = self._staged, None
        if staged is None:
            return
        new, bank, notes = staged
        old_timeout = self._timeout_ns
        self._values = new
        self._apply_live(new)
        if self._timeout_ns != old_timeout:
            self._make_watchdog_timer()
        if bank is not None:
            self._new_bank = bank  # swapped in, at rest, before the next input
            self.get_logger().info(f"retuned: {[p.name for p in params]}; the element "
                                   "restarts from rest")
        self._set_output(bool(new["output_enabled"]))
        for m in notes:
            self.get_logger().warning(f"design: {m}")

    # ------------------------------------------------------------------ markers
    def _make_markers(self) -> MarkerArray:
        arr = MarkerArray()
        for i, j in enumerate(self._joints):
            a = Marker(ns="friction", id=i, type=Marker.ARROW, action=Marker.ADD)
            a.points = [Point(y=0.1 * i), Point(y=0.1 * i)]
            a.scale.x, a.scale.y, a.scale.z = 0.01, 0.02, 0.02
            a.pose.orientation.w = 1.0
            a.lifetime = Duration(sec=0, nanosec=500_000_000)
            t = Marker(ns="friction_label", id=i, type=Marker.TEXT_VIEW_FACING,
                       action=Marker.ADD)
            t.scale.z = 0.02
            t.color = ColorRGBA(r=1.0, g=1.0, b=1.0, a=1.0)
            t.pose.orientation.w = 1.0
            t.lifetime = a.lifetime
            arr.markers += [a, t]
        if self._bank.planar is not None:  # the patch, its force and torque at the end effector
            life = Duration(sec=0, nanosec=500_000_000)
            disc = Marker(ns="planar_patch", id=0, type=Marker.CYLINDER, action=Marker.ADD)
            disc.scale.z = 0.002
            disc.pose.orientation.w = 1.0
            disc.lifetime = life
            arrow = Marker(ns="planar_force", id=0, type=Marker.ARROW, action=Marker.ADD)
            arrow.points = [Point(), Point()]
            arrow.scale.x, arrow.scale.y, arrow.scale.z = 0.005, 0.01, 0.01
            arrow.pose.orientation.w = 1.0
            arrow.lifetime = life
            text = Marker(ns="planar_label", id=0, type=Marker.TEXT_VIEW_FACING,
                          action=Marker.ADD)
            text.scale.z = 0.015
            text.color = ColorRGBA(r=1.0, g=1.0, b=1.0, a=1.0)
            text.pose.orientation.w = 1.0
            text.lifetime = life
            arr.markers += [disc, arrow, text]
        return arr

    def _planar_markers(self, stamp) -> None:
        """The planar patch at the end effector (x, y): a disc coloured stick/slip, the friction
        force as an arrow, the friction torque as text."""
        pl = self._bank.planar
        disc, arrow, text = self._markers.markers[-3:]
        ix, iy, _ = pl.index
        x, y = float(self._reader.position[ix]), float(self._reader.position[iy])
        f = pl._out
        size = float(self._values["planar.size"])
        for m in (disc, arrow, text):
            m.header.frame_id = self._marker_frame
            m.header.stamp = stamp
        disc.pose.position.x, disc.pose.position.y = x, y
        disc.scale.x = disc.scale.y = size
        c = _STICK if pl.stuck else _SLIP
        disc.color = ColorRGBA(r=c.r, g=c.g, b=c.b, a=0.6)
        arrow.points[0].x, arrow.points[0].y = x, y
        arrow.points[1].x = x + self._marker_scale * float(f[0])
        arrow.points[1].y = y + self._marker_scale * float(f[1])
        arrow.color = _STICK if pl.stuck else _SLIP
        text.pose.position.x, text.pose.position.y, text.pose.position.z = x, y, 0.03
        text.text = (f"{'stick' if pl.stuck else 'slip'} f=({f[0]:+.2f}, {f[1]:+.2f}) "
                     f"tau={f[2]:+.3f}")

    def marker_forces(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(position, friction force on the device, stuck) per joint, as the markers show."""
        stuck = self._bank.stuck()
        if self._impedance:
            return self._reader.position.copy(), self._cmd.copy(), stuck
        return self._cmd.copy(), -self._bank.friction(), stuck

    def _on_markers(self) -> None:
        if self._marker_pub.get_subscription_count() == 0:
            return
        pos, force, stuck = self.marker_forces()
        stamp = self.get_clock().now().to_msg()
        ms = self._markers.markers
        for i, j in enumerate(self._joints):
            a, t = ms[2 * i], ms[2 * i + 1]
            x = float(pos[i])
            a.header.frame_id = t.header.frame_id = self._marker_frame
            a.header.stamp = t.header.stamp = stamp
            a.points[0].x = x
            a.points[1].x = x + self._marker_scale * float(force[i])
            a.color = _STICK if stuck[i] else _SLIP
            t.pose.position.x = x
            t.pose.position.y = 0.1 * i
            t.pose.position.z = 0.05
            t.text = f"{j}: {'stick' if stuck[i] else 'slip'} {force[i]:+.2f}"
        if self._bank.planar is not None and self._impedance:
            self._planar_markers(stamp)
        self._marker_pub.publish(self._markers)

    # ------------------------------------------------------------------ diagnostics
    def diagnostic_status(self) -> DiagnosticStatus:
        """The renderer's status (published on /diagnostics); resets the per-period counters."""
        now = time.monotonic()
        elapsed = max(now - self._diag_mono, 1e-9)
        self._diag_mono = now
        rate = self._accepted_period / elapsed
        kv = [("mode", self._mode), ("element", f"{self._element} ({self._bank.layout})"),
              ("joints", ", ".join(self._joints)), ("input topic", self._input_topic),
              ("dt [s]", f"{self._dt:g}"), ("input rate [Hz]", f"{rate:.1f}"),
              ("expected rate [Hz]", f"{1.0 / self._dt:.1f}"),
              ("accepted inputs", str(self._accepted))]
        nlat = min(self._lat_n, _LAT_RING)
        if nlat:
            lat = self._lat[:nlat] * 1e-6
            p50, p99, pmax = np.percentile(lat, (50.0, 99.0, 100.0))
            kv += [("latency mean [ms]", f"{lat.mean():.3f}"),
                   ("latency p50 [ms]", f"{p50:.3f}"), ("latency p99 [ms]", f"{p99:.3f}"),
                   ("latency max [ms]", f"{pmax:.3f}")]
        else:
            kv.append(("latency [ms]", "n/a (no stamped input this period)"))
        kv.append(("zero-stamped inputs (receive time used)", str(self._zero_stamps)))
        kv += [("lost cycles", str(self._lost)), ("lost cycles this period",
                                                  str(self._lost_period)),
               ("stamp re-anchors", str(self._reanchors))]
        if self._last_valid_mono is None:
            wd = "waiting for first input"
        elif self._tripped:
            wd = "tripped: " + ("zero effort" if self._impedance else "holding position")
        else:
            wd = "ok"
        kv.append(("output", "enabled" if self._output else
                   "disabled (output_enabled false: publishing nothing)"))
        kv += [("watchdog", wd), ("watchdog trips", str(self._trips)),
               ("watchdog timeout [s]", f"{self._timeout_ns * 1e-9:g}"),
               ("max_effort", f"{self._max_effort:g}"),
               (self._plaus_what[1], f"{self._plaus_lim:g}")]
        stuck = self._bank.stuck()
        fr = self.marker_forces()[1]
        for i, j in enumerate(self._joints):
            state = "stopped" if self._tripped or self._last_valid_mono is None else (
                "stick" if stuck[i] else "slip")
            kv += [(f"{j} state", state), (f"{j} friction force", f"{fr[i]:+.4g}"),
                   (f"{j} saturated cycles this period", str(int(self._sat[i])))]
        saturated = bool(self._sat.any())
        kv += [("saturation", "active" if saturated else "inactive"),
               ("saturated cycles total", str(self._sat_total))]
        kv.append(("rejected inputs", str(sum(self._rejected.values()))))
        for reason in sorted(self._rejected):
            kv += [(f"rejected {reason}", str(self._rejected[reason])),
                   (f"rejected {reason} last", self._rejected_last[reason])]

        problems = []
        level = DiagnosticStatus.OK
        if self._last_valid_mono is None:
            level = DiagnosticStatus.WARN
            problems.append(f"waiting for {self._input_topic}")
        elif self._tripped:
            level = DiagnosticStatus.ERROR
            problems.append(f"watchdog tripped: no valid {self._input_topic}")
        if self._rejected_period:
            level = max(level, DiagnosticStatus.WARN)
            problems.append(f"{self._rejected_period} rejected inputs, last: "
                            f"{self._rejected_latest}")
        if self._lost_period:
            level = max(level, DiagnosticStatus.WARN)
            problems.append(f"{self._lost_period} lost cycles")
        if saturated:
            level = max(level, DiagnosticStatus.WARN)
            problems.append(f"saturated at max_effort {self._max_effort:g}")
        # Two devices with the same joint names in one ROS domain (a second stage, a previous
        # run's process, another session): their states interleave, the element renders a mix,
        # and when one device dies the other keeps the renderer busy, so the dead one's zero
        # never comes (issue 13, item 8). A graph query once per period, not per message.
        npub = self.count_publishers(self._state_topic)
        kv.append((f"{self._state_topic} publishers", str(npub)))
        if npub > 1 and self._accepted_period and not self._foreign_period:
            level = max(level, DiagnosticStatus.ERROR)
            problems.append(f"{npub} publishers on {self._state_topic} and every message carried "
                            f"the configured joints: two devices with the same joint names in "
                            "one ROS domain? their states are mixed and the commands reach both")
            self.get_logger().error(problems[-1] + " (when one of them dies, the other keeps "
                                    "the renderer rendering: no watchdog zero)")
        if (self._accepted_period >= 10 and not self._tripped
                and abs(rate * self._dt - 1.0) > 0.25):
            level = max(level, DiagnosticStatus.WARN)
            problems.append(f"input rate {rate:.0f} Hz does not match dt ({1 / self._dt:.0f} Hz)")
        self._accepted_period = self._lost_period = self._rejected_period = 0
        self._foreign_period = 0
        self._lat_n = 0
        self._sat[:] = 0
        return DiagnosticStatus(level=level, name=f"{self.get_fully_qualified_name()}: friction",
                                hardware_id=",".join(self._joints),
                                message="; ".join(problems) or (
                                    "rendering" if self._output else "output disabled"),
                                values=[KeyValue(key=k, value=v) for k, v in kv])

    def _on_diagnostics(self) -> None:
        msg = DiagnosticArray()
        msg.header.stamp = self.get_clock().now().to_msg()
        msg.status = [self.diagnostic_status()]
        self._diag_pub.publish(msg)


def shutdown(node: FrictionRenderer, context_ok: bool) -> None:
    """The renderer's last act: zero effort (or hold the setpoint), unless output is disabled."""
    published = False
    acked = True
    if context_ok:
        published = node.publish_stop()
        if published:
            # every reliable subscriber confirms the final command before the writer goes away
            # (bounded: a dead reliable reader never acknowledges)
            acked = node._out.wait_for_all_acked(RclDuration(seconds=1.0))
            sleep_ok(0.01)  # best-effort readers: the transport hands it over meanwhile
    node.get_logger().info(
        ("stopped: final " + ("zero effort" if node._impedance else "position hold")
         + " published" + ("" if acked else " (not acknowledged by every reliable subscriber "
                                            "within 1 s)")) if published else
        "stopped: output disabled, nothing published")


def main(args=None) -> int:
    """Run the node until Ctrl-C/SIGTERM, then command zero effort (or hold) and exit.

    Non-ROS option ``--executor events|single`` (default ``events``). Measured on this 2-core
    machine, one joint_states message in, one command out, spin_once per message: rclpy's
    EventsExecutor ~65 us CPU per message, SingleThreadedExecutor ~200 us (see
    ``fric_nodes._node_util.run_node`` for the loop).
    """
    return run_node(FrictionRenderer, names.FRICTION_RENDERER, args, on_stop=shutdown)


if __name__ == "__main__":
    sys.exit(main())
