"""``friction_renderer``: renders fric_core friction elements on a set of joints (paper 000,
Kikuuwe et al. 2006, Sec. IV-D and V). The specification: docs/friction_renderer.md.

* ``mode: impedance`` (model C, or B): per ``joint_states`` message ``f = element.step(v)``;
  ``−f`` saturated to ±``max_effort`` is published on ``effort_controller/commands``.
* ``mode: admittance`` (model A, or D): per force message (``wrench``, or ``joint_states``
  ``effort``) the saturated force goes into the element, whose velocity is integrated into a
  position setpoint on ``position_controller/commands``, started at the measured position.
* ``planar.joints: [x, y, yaw]`` (impedance; paper 002): the reduced planar LuGre /
  Elasto-Plastic contact on three joints (:mod:`fric_interfaces.planar_params`).

One element step per accepted message; bad, stale or implausible inputs are rejected and
answered with the safe output (joint_states is read as CDR bytes, :mod:`fric_interfaces.cdr`:
bytes that are not a JointState are a rejected input too, ``bad_message``); a watchdog
zeroes the effort (or holds the setpoint); a live retune swaps in a new element at rest;
``output_enabled`` false publishes nothing (the hand-over).

A managed (lifecycle) node (:mod:`fric_nodes._lifecycle`; ``autostart`` true by default):
configure builds the element from the current parameters; activate renders from rest;
deactivate publishes zero effort (admittance: the held setpoint) at once and then nothing;
cleanup resets the element and the input bookkeeping; shutdown ends the process.
"""

from __future__ import annotations

import sys
import time

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from geometry_msgs.msg import WrenchStamped
from rcl_interfaces.msg import SetParametersResult
from rclpy.clock import Clock, ClockType
from rclpy.duration import Duration as RclDuration
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from visualization_msgs.msg import MarkerArray

from fric_interfaces import names, qos
from fric_interfaces.cdr import Float64MultiArrayEncoder, JointStateDecoder
from fric_interfaces.conversions import InputError, JointStateReader, wrench_to_arrays
from fric_interfaces.parameters import check
from fric_interfaces.planar_params import LIVE_KEYS as PLANAR_LIVE
from fric_interfaces.planar_params import PLANAR_SPECS
from fric_nodes.builders import planar_problems
from fric_interfaces.renderer_params import (ELEMENT_KEYS, GLOBAL_SPECS, joint_specs,
                                             resolve_element, validate_globals)
from fric_nodes.builders import build_bank
from fric_nodes._lifecycle import ManagedNode, lifecycle_done
from fric_nodes._node_util import (FricNode, Housekeeping, declare_params, run_node, sleep_ok,
                                   unused_overrides, wall_clock_ns)
from fric_nodes.renderer_diagnostics import LazyRejectLog, Stats, renderer_status
from fric_nodes.renderer_markers import RendererMarkers
from fric_nodes.stamp_gate import StampGate

__all__ = ["FrictionRenderer", "shutdown", "main"]

_AXES = {"x": 0, "y": 1, "z": 2}

# rejection texts (str.format templates, formatted only when read: LazyRejectLog; the stamp
# rejections' are fric_nodes.stamp_gate's)
_IMPLAUSIBLE = ("{}: {} {:.6g} of joint {!r} is beyond {} {:g} (an implausible sample; it never "
                "reaches the element)")


class FrictionRenderer(ManagedNode, FricNode):
    """The friction renderer node (see the module docstring); ``FrictionRenderer(node_name=None,
    **kwargs)``, ``kwargs`` go to ``Node`` (e.g. ``parameter_overrides``, ``namespace``)."""

    default_name = names.FRICTION_RENDERER

    # ------------------------------------------------------------------ set-up
    def _setup(self) -> None:
        values = declare_params(self, GLOBAL_SPECS)
        values.update(declare_params(self, PLANAR_SPECS))
        validate_globals(values)
        self._joints = joints = tuple(values["joints"])
        planar = set(values["planar.joints"])  # a planar contact's joints have no own law
        jspecs = tuple(s for j in joints if j not in planar for s in joint_specs(j))
        values.update(declare_params(self, jspecs))
        self._specs = {s.name: s for s in (*GLOBAL_SPECS, *PLANAR_SPECS, *jspecs)}
        self._values = values
        n = self._n = len(joints)
        self._mode = values["mode"]
        self._element = resolve_element(values["mode"], values["element"])
        self._impedance = self._mode == "impedance"
        self._dt = float(values["dt"])
        self._dt_ns = self._dt * 1e9
        self._bank, notes = build_bank(self._element, self._dt, joints, values,
                                       design_check=values["design_check"])
        self._said_notes = None
        self._say_design(notes)
        unused = unused_overrides(self, self._specs)  # typos: logged, not fatal
        if unused:
            self.get_logger().warning(f"ignoring unknown parameters {unused} (joints are "
                                      f"{list(joints)})")
        self._now_ns = wall_clock_ns(self)
        self._steady = Clock(clock_type=ClockType.STEADY_TIME)

        # hot-path state (preallocated)
        self._cmd = np.zeros(n)  # last published command (effort or position setpoint)
        self._buf = np.zeros(n)  # scratch
        self._writer = Float64MultiArrayEncoder(n)  # the command's CDR, doubles patched in
        self._new_bank = None  # accepted retune, swapped in before the next input
        self._staged = None  # validated parameter set between the on-set and post-set callbacks
        self._stamps = StampGate(self._dt_ns)  # header-stamp rules of the input stream
        self._last_valid_mono = None  # monotonic ns of the last valid input; None: waiting
        self._tripped = False
        self._rendering = False  # admittance: setpoint initialised from the measured position
        self._output_param = bool(values["output_enabled"])  # False: another controller has it
        self._active = False  # lifecycle state active (set by the transitions)
        self._output = False  # publishing commands: output_enabled and active
        self._force = np.zeros(n)  # admittance wrench input
        self._pos_mono = None  # admittance/wrench: receipt of the last valid joint_states
        self._stats = Stats(n)
        self._rejects = LazyRejectLog(self.get_logger(), "input")
        self._names_ok = None  # joint names of the last accepted joint_states (a reference)
        self._rejecting = None  # the message being admitted (for _reject's bookkeeping)
        self._apply_live(values)

        # topics
        if self._impedance:
            self._reader = JointStateReader(joints, ("position", "velocity"))
            self._input_topic = names.JOINT_STATES
            self._out = self.create_publisher(Float64MultiArray, names.EFFORT_COMMANDS,
                                              qos.CONTROL_PUB)
            js_sub = self.create_subscription(JointState, names.JOINT_STATES,
                                              self._raw(self._on_joint_state), qos.CONTROL_SUB,
                                              raw=True)
        else:
            self._out = self.create_publisher(Float64MultiArray, names.POSITION_COMMANDS,
                                              qos.CONTROL_PUB)
            if values["admittance_input"] == "joint_effort":
                self._reader = JointStateReader(joints, ("position", "effort"))
                self._input_topic = names.JOINT_STATES
                js_sub = self.create_subscription(JointState, names.JOINT_STATES,
                                                  self._raw(self._on_effort_state),
                                                  qos.CONTROL_SUB, raw=True)
            else:
                self._reader = JointStateReader(joints, ("position",))
                self._axis = _AXES[values["wrench_axis"]]
                self._input_topic = names.WRENCH
                self.create_subscription(WrenchStamped, names.WRENCH, self._on_wrench,
                                         qos.CONTROL_SUB)
                js_sub = self.create_subscription(JointState, names.JOINT_STATES,
                                                  self._raw(self._on_position, publish=False),
                                                  qos.CONTROL_SUB, raw=True)
        self._state_topic = js_sub.topic_name  # resolved and remapped: its publishers counted
        # joint_states arrive as CDR bytes (raw subscription); _read is the reader's read, in
        # one struct call while the message layout repeats
        self._decoder = JointStateDecoder(self._reader)
        self._read = self._decoder.read
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
        self._markers = RendererMarkers(joints, self._bank.planar is not None,
                                        period=1.0 / values["marker_rate"])
        self._watchdog_timer = None
        self._make_watchdog_timer()
        self._housekeeping = Housekeeping()  # markers/diagnostics run after an output
        self.create_timer(1.0 / values["marker_rate"],
                          self._housekeeping.timer(self._on_markers),
                          clock=self._steady)
        self.create_timer(values["diagnostics_period"],
                          self._housekeeping.timer(self.publish_diagnostics),
                          clock=self._steady)

        self.add_on_set_parameters_callback(self._on_set_parameters)
        self.add_post_set_parameters_callback(self._on_parameters_set)
        self.get_logger().info(
            f"{self._mode} mode, {self._element} ({self._bank.layout}) on joints "
            f"{list(joints)}, dt={self._dt:g} s, input {self._input_topic}")

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
        self._watchdog_timer = self.create_timer(period, self._on_watchdog,
                                                 clock=self._steady)

    # ------------------------------------------------------------------ hot path
    def _raw(self, handler, publish: bool = True):
        """The joint_states subscription's callback: the serialized message (``raw=True``)
        decoded (:class:`~fric_interfaces.cdr.JointStateDecoder`: no Python JointState) and
        handed to ``handler`` like a message. Bytes that are not a JointState are a rejected
        input (``bad_message``), answered with the safe output as any other (``publish``: the
        handler's rejections are)."""

        def on_cdr(data: bytes) -> None:
            try:
                msg = self._decoder.decode(data)
            except InputError as e:
                self._reject(e.kind, "joint_states: {}", e, publish=publish)
                return
            handler(msg)

        return on_cdr

    def _foreign(self, msg) -> bool:
        """A joint_states message with other joint names than the last accepted one (only
        looked at for messages rejected by their stamp: e.g. a gripper driver's)."""
        names_ = getattr(msg, "name", None)
        return names_ is not None and self._names_ok is not None and names_ != self._names_ok

    def _admit(self, msg, read, topic: str) -> bool:
        """Stamp checks (:class:`~fric_nodes.stamp_gate.StampGate`) and message reading; False
        (after the safe output) if rejected."""
        self._rejecting = msg
        rx = self._now_ns()
        gate = self._stamps
        rejected = gate.check(msg.header.stamp, rx, time.monotonic_ns(), self._timeout_ns)
        st = self._stats
        if not gate.stamped:
            st.zero_stamps += 1
        if rejected is not None:
            reason, text, args = rejected
            self._reject(reason, text, topic, *args)
            return False
        try:
            read(msg)
        except InputError as e:
            self._reject(e.kind, "{}: {}", topic, e)
            return False
        xl = self._plaus_x.tolist()
        if max(map(abs, xl)) > self._plaus_lim:  # ~0.25 us for one joint (numpy: 1.4)
            ax = [abs(v) for v in xl]
            i = ax.index(max(ax))  # the first largest, as np.abs(x).argmax()
            what, limit = self._plaus_what
            self._reject("implausible", _IMPLAUSIBLE, topic, what, xl[i], self._joints[i],
                         limit, self._plaus_lim)
            return False
        if self._plaus_pos is not None and not self._position_plausible(topic):
            return False
        lost = gate.accept()
        if gate.anchored:
            st.reanchors += 1
            self.get_logger().warning(
                f"{topic}: stamps re-anchored at {gate.t} ns (the first input after the start or "
                f"a watchdog trip was stamped {gate.anchor_shift_ns * 1e-9:+.6g} s away from the "
                "stream)", throttle_duration_sec=1.0)
        elif lost:
            st.lost += lost
            st.lost_period += lost
        self._names_ok = getattr(msg, "name", None)
        if gate.stamped:
            st.latency.add(rx - gate.t)
        self._last_valid_mono = gate.last_mono
        st.accepted += 1
        st.accepted_period += 1
        if self._new_bank is not None:
            self._bank, self._new_bank = self._new_bank, None
        self._tripped = False
        return True

    def _on_joint_state(self, msg: JointState) -> None:
        """Impedance mode: one element step per joint_states message."""
        if not self._admit(msg, self._read, "joint_states") or not self._output:
            return
        # plain floats: numpy calls on a few joints cost more than the arithmetic here
        out = [-f for f in self._bank.step(self._reader.velocity, self._reader.position).tolist()]
        cmd = self._cmd
        m = self._max_effort
        if max(map(abs, out)) > m:  # saturated (rare): count per joint, clip
            cmd[:] = out
            self._stats.sat += np.abs(cmd, out=self._buf) > m
            self._stats.sat_total += 1
            np.clip(cmd, -m, m, out=cmd)
            out = cmd.tolist()
        else:
            for i, f in enumerate(out):
                cmd[i] = f
        self._out.publish(self._writer.fill(out))
        self._housekeeping.after_output()

    def _on_effort_state(self, msg: JointState) -> None:
        """Admittance mode, joint_effort input: force and position from joint_states."""
        if not self._admit(msg, self._read, "joint_states") or not self._output:
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
            self._read(msg)
        except InputError as e:
            self._reject(e.kind, "joint_states: {}", e, publish=False)
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
        self._reject("implausible", _IMPLAUSIBLE, topic, "position", float(p[i]),
                     self._joints[i], "max_position", self._max_position, publish=publish)
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
            self._stats.sat += hc > m
            self._stats.sat_total += 1
            np.clip(h, -m, m, out=hc)
        else:
            hc[:] = h
        v = self._bank.step(hc)
        sp += np.multiply(v, self._dt, out=hc)
        self._out.publish(self._writer.fill(sp))
        self._housekeeping.after_output()

    # ------------------------------------------------------------------ safety
    def _reject(self, reason: str, text: str, *args, publish: bool = True) -> None:
        """Count and log a rejected input (and foreign messages: other joints); the safe output.
        The text is ``text.format(*args)``, formatted only when read or logged
        (:class:`~fric_nodes.renderer_diagnostics.LazyRejectLog`)."""
        if reason == "missing_joint":
            self._stats.foreign_period += 1
        elif reason.startswith("stamp_") and self._foreign(self._rejecting):
            self._stats.foreign_period += 1  # rejected for its stamp, but not one of our messages
        self._rejects.add(reason, text, *args)
        if publish:
            self._publish_safe()

    def _publish_safe(self) -> None:
        """Impedance: the last effort again, clipped to max_effort (zero before the first valid
        input and after a trip). Admittance: the held setpoint, or nothing before one exists.
        Nothing while output_enabled is false."""
        if not self._output:
            return
        cmd = self._cmd
        out = cmd.tolist()
        if self._impedance:
            m = self._max_effort
            if max(map(abs, out)) > m:  # only after max_effort was lowered
                np.clip(cmd, -m, m, out=cmd)
                out = cmd.tolist()
        elif not self._rendering and not self._tripped:
            return  # no setpoint yet: no position to hold
        self._out.publish(self._writer.fill(out))

    def _on_watchdog(self) -> None:
        if self._last_valid_mono is None:
            return  # waiting for the first input
        if self._tripped:
            self._publish_safe()
        elif time.monotonic_ns() - self._last_valid_mono > self._timeout_ns:
            self._trip()

    def _trip(self) -> None:
        self._tripped = True
        self._stats.trips += 1
        if self._new_bank is not None:
            self._bank, self._new_bank = self._new_bank, None
        self._bank.reset()
        self._stamps.trip()
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

    def _update_output(self) -> None:
        """Output on when ``output_enabled`` and the lifecycle state is active (the hand-over
        switch and the lifecycle): either way the element restarts from rest (a staged retune is
        fresh already); admittance restarts from the measured position."""
        enabled = self._output_param and self._active
        if enabled == self._output:
            return
        self._output = enabled
        if self._new_bank is None:
            self._bank.reset()
        if self._impedance:
            self._cmd[:] = 0.0
        self._rendering = False
        if self._lc_quiet:
            return  # autostart
        self.get_logger().info("output enabled: rendering from rest" if enabled else
                               "output disabled: publishing nothing (another controller has "
                               "the device)" if not self._output_param else
                               "lifecycle not active: publishing nothing")

    # ------------------------------------------------------------------ lifecycle
    def _lc_configure(self) -> None:
        """unconfigured → inactive: the element built anew, at rest, from the current
        parameters (a design-check failure fails the transition)."""
        self._bank, notes = build_bank(self._element, self._dt, self._joints, self._values,
                                       design_check=self._values["design_check"])
        self._new_bank = None
        self._say_design(notes)

    def _lc_activate(self) -> None:
        """inactive → active: commands from the next valid input, the element from rest."""
        self._active = True
        self._update_output()

    def _lc_deactivate(self) -> None:
        """active → inactive: zero effort (admittance: the held setpoint) published at once,
        then nothing (inputs are still read and counted; subscriptions stay)."""
        self.publish_stop()
        self._active = False
        self._update_output()

    def _lc_cleanup(self) -> None:
        """inactive → unconfigured: element at rest, waiting for a first input again."""
        self._said_notes = None  # the next configure says the design advice again
        self._active = False
        self._update_output()
        self._bank.reset()
        self._new_bank = None
        self._cmd[:] = 0.0
        self._stamps.reset()
        self._last_valid_mono = None
        self._tripped = self._rendering = False

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
        self._output_param = bool(new["output_enabled"])
        self._update_output()
        self._say_design(notes)

    def _say_design(self, notes) -> None:
        """Log the design check's advice when it differs from what was said last (the autostart
        configure, or a retune of other fields, rebuilds the same design: said once)."""
        notes = tuple(notes)
        if notes != self._said_notes:
            for m in notes:
                self.get_logger().warning(f"design: {m}")
        self._said_notes = notes

    # ------------------------------------------------------------------ markers
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
        mk, frame, scale = self._markers, self._marker_frame, self._marker_scale
        mk.update(stamp, frame, scale, pos, force, stuck)
        pl = self._bank.planar
        if pl is not None and self._impedance:  # the patch at the end effector (x, y)
            ix, iy, _ = pl.index
            mk.update_planar(stamp, frame, scale, float(self._reader.position[ix]),
                             float(self._reader.position[iy]), pl._out, pl.stuck,
                             float(self._values["planar.size"]))
        self._marker_pub.publish(mk.array)

    # ------------------------------------------------------------------ diagnostics
    def diagnostic_status(self) -> DiagnosticStatus:
        """The renderer's status (published on /diagnostics); resets the per-period counters."""
        st = renderer_status(
            self._stats, self._rejects, name=f"{self.get_fully_qualified_name()}: friction",
            mode=self._mode, element=f"{self._element} ({self._bank.layout})",
            joints=self._joints, input_topic=self._input_topic, dt=self._dt,
            output=self._output, waiting=self._last_valid_mono is None, tripped=self._tripped,
            timeout_ns=self._timeout_ns, max_effort=self._max_effort,
            plausible=(self._plaus_what[1], self._plaus_lim), stuck=self._bank.stuck(),
            force=self.marker_forces()[1], state_topic=self._state_topic,
            publishers=self.count_publishers(self._state_topic), logger=self.get_logger())
        state = self.lifecycle_state
        st.values.append(KeyValue(key="lifecycle state", value=state))
        if not self._active:  # the lifecycle, not output_enabled, silences the output
            for kv in st.values:
                if kv.key == "output":
                    kv.value = f"disabled (lifecycle state {state}: publishing nothing)"
            if st.message == "output disabled":
                st.message = state
        return st


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
        ("stopped: output disabled, nothing published" if node.lifecycle_active else
         f"stopped ({node.lifecycle_state}): nothing published"))


def main(args=None) -> int:
    """Run the node until Ctrl-C/SIGTERM, then command zero effort (or hold) and exit.

    Non-ROS option ``--executor events|single`` (default ``events``). Measured on this 2-core
    machine, one joint_states message in, one command out, spin_once per message: rclpy's
    EventsExecutor ~65 us CPU per message, SingleThreadedExecutor ~200 us (see
    ``fric_nodes._node_util.run_node`` for the loop).
    """
    return run_node(FrictionRenderer, names.FRICTION_RENDERER, args, done=lifecycle_done,
                    on_stop=shutdown)


if __name__ == "__main__":
    sys.exit(main())
