"""``friction_compensator``: adds the identified joint friction (and optionally the gravity
torque: the URDF's, or the one identified with the friction) to a controller's effort commands,
in a ros2_control topic chain (issue 15; docs/friction_compensator.md)::

    joint_state_broadcaster --joint_states--> friction_compensator <--command_topic-- controller
    friction_compensator --effort_controller/commands--> forward_command_controller (effort)

or, with ``command_type: JointState``, on the command path of ros2_control's topic-based
hardware interface: its JointState commands in (by name, NaN = no command yet), the same names
out on ``/robot_joint_commands`` (:mod:`fric_nodes.joint_command_path`).

Per valid ``joint_states`` message (the 1 kHz loop) one step of
:class:`fric_core.compensation.FrictionCompensator` (paper 000's model C driven by the measured
position, relaxed at rest); ``commands + enable·scale·f̂ (+ g(q))`` saturated at ``max_effort``
(``gravity``: ``none``; ``urdf``: ``pin.rnea`` gravity of the URDF's inertias; ``identified``: the
rigid body ``fric identify --dynamics identify`` fitted, the ``rigid_body:`` section of the
``joint_friction`` file, ``g(q) = Y(q, 0, 0) β`` — a real URDF's inertias are wrong, the
identified ones reproduce the torques the arm measured),
is published on each controller command (``publish_on: command``, the default: a controller that
answers the same joint_states is forwarded without a cycle of delay), or on each joint_states
(``publish_on: joint_states``, with the latest command). Bad messages (missing joint, NaN,
wrong length, implausible, a header stamp not after the last accepted one: out of order, a
duplicate, another publisher's older stream; :class:`~fric_nodes.stamp_gate.StampGate`) are
rejected, counted and never forwarded; two publishers of the compensated joints are reported.
Watchdog: no valid joint_states for ``watchdog_timeout`` → zero effort once, element reset;
commands older than that (the controller died) → zero effort once and nothing until they resume
(``require_command: true``, the default), or the compensation alone (``require_command:
false``: hand guiding, no controller). Never a non-finite value: one would be replaced by 0,
counted and logged. At shutdown: zero effort.
"""

from __future__ import annotations

import sys
import time

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray, KeyValue
from rcl_interfaces.msg import SetParametersResult
from rclpy.clock import Clock, ClockType
from rclpy.duration import Duration as RclDuration
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from fric_core.arm_identification.joint_friction import read_joint_friction
from fric_core.compensation import FrictionCompensator
from fric_interfaces import names, qos
from fric_interfaces.conversions import (CommandReader, Float64ArrayWriter, InputError,
                                         JointStateReader)
from fric_interfaces.parameters import LIFECYCLE_SPECS, SCHEDULING_SPECS, ParamSpec
from fric_nodes._lifecycle import ManagedNode, lifecycle_done
from fric_nodes.own_arm import ARM_SETUP_SPEC, arm_setup_overrides
from fric_nodes._node_util import (FricNode, Housekeeping, RejectLog, declare_params,
                                   friction_laws_text, rejected_change, run_node, sleep_ok,
                                   unused_overrides, wall_clock_ns)
from fric_nodes.joint_command_path import JointCommandPath
from fric_nodes.compensator_diagnostics import (CompensatorStats, compensator_status,
                                                joint_uses, same_joints_problem, uses_text)
from fric_nodes.renderer_diagnostics import LazyRejectLog
from fric_nodes.stamp_gate import StampGate

__all__ = ["SPECS", "LIVE", "FrictionCompensatorNode", "main"]

_NM = "N·m (N for a prismatic joint)"
_IMPLAUSIBLE = "{}: {} {:.6g} of joint {!r} is beyond {} {:g}"

SPECS = (
    ParamSpec("joints", ["joint1"], "joints to compensate, matched by name in joint_states; "
              "the command input and the output have one entry per joint in this order "
              "(command_type JointState: by name)",
              read_only=True, list_of=str),
    ParamSpec("joint_friction", "", "path to joint_friction.yaml (the output of fric identify): "
              "Cp, Cn, bp, bn (and eta_f, eta_b) per joint; relative in a parameter file: to that "
              "file", read_only=True, path=True),
    ParamSpec("command_topic", names.COMPENSATOR_EFFORT_IN, "the controller's effort commands "
              "(command_type: std_msgs/Float64MultiArray, one entry per joint in `joints` order; "
              "or sensor_msgs/JointState by name)", read_only=True),
    ParamSpec("command_type", "Float64MultiArray", "Float64MultiArray: a controller's commands "
              "in, effort_controller/commands out (forward_command_controller); JointState: the "
              "topic-based hardware interface's commands in (by name, NaN = no command yet: "
              "passed on as NaN with require_command, else the compensation alone), the same "
              "names out on /robot_joint_commands", read_only=True,
              choices=("Float64MultiArray", "JointState")),
    ParamSpec("publish_on", "command", "command: while commands are fresh, publish on each "
              "command (with the compensation of the latest joint_states: the controller's "
              "command goes out without waiting a cycle), otherwise on each joint_states; "
              "joint_states: always on each joint_states (the latest command)", read_only=True,
              choices=("command", "joint_states")),
    ParamSpec("require_command", True, "true (the safe default): without fresh commands (none "
              "for watchdog_timeout: the controller died) publish zero effort once and then "
              "nothing until they resume; false: hand guiding without a controller, publish the "
              "compensation (and gravity) alone"),
    ParamSpec("enable", [True], "compensate this joint (one value for all joints, or one per "
              "joint)", list_of=bool),
    ParamSpec("scale", [1.0], "fraction of the friction estimate added (one value, or one per "
              "joint)", min=0.0, max=1.5, list_of=float),
    ParamSpec("max_effort", 50.0, "output saturation per joint (counted in diagnostics)",
              unit=_NM, min=1e-6),
    ParamSpec("max_command", 1e4, "plausibility limit of the controller's commands: a "
              "message with |command| above it is rejected (never forwarded); between "
              "max_effort and max_command the output saturates", unit=_NM, min=1e-6),
    ParamSpec("max_position", 1000.0, "plausibility limit of the joint positions: a "
              "joint_states message beyond it is rejected", unit="rad, or m", min=1e-6),
    ParamSpec("watchdog_timeout", 0.1, "no valid joint_states (or commands) this long: zero "
              "effort once (commands: see require_command); also the largest stamp jump "
              "accepted", unit="s", min=0.002, max=60.0),
    ParamSpec("dt", 0.001, "element step = the joint_states period", unit="s", min=1e-5,
              max=0.1, read_only=True),
    ParamSpec("gravity", "none", "add a gravity torque g(q): none; urdf (the URDF's inertias); "
              "identified (the rigid body fric identify --dynamics identify fitted: the "
              "rigid_body section of the joint_friction file, with the URDF's kinematics)",
              read_only=True, choices=("none", "urdf", "identified")),
    ParamSpec("urdf", "", "URDF file or bundled name (planar_2link, arm7) for gravity/gear_load "
              "(gravity: identified uses only its kinematics; `joints` must then be the "
              "identified arm's joints)", read_only=True, path=True),
    ParamSpec("gear_load", "command", "gear model files (eta_f, eta_b): the load torque of "
              "the load-dependent friction: command (the controller's command, the torque it "
              "wants at the joint, plus g(q) with gravity: urdf), gravity (the URDF gravity "
              "torque: quasi-static) or none (Coulomb/viscous only)", read_only=True,
              choices=("command", "gravity", "none")),
    ParamSpec("encoder_resolution", [1e-4], "position resolution, one value or one per joint: "
              "sets the default K and the deadband", unit="rad, or m", min=1e-12,
              read_only=True, list_of=float),
    ParamSpec("presliding_counts", 5.0, "encoder counts in the presliding distance max(Cp, Cn)/K "
              "of the default K", min=0.5, max=1e6, read_only=True),
    ParamSpec("K", [], "element stiffness per joint (empty: from encoder_resolution and "
              "presliding_counts)", unit="N·m/rad", min=1e-9, read_only=True, list_of=float),
    ParamSpec("B", [0.0], "element damping, one value or one per joint (0 recommended: it is "
              "negative damping on the joint within the presliding band)", unit="N·m·s/rad",
              min=0.0, read_only=True, list_of=float),
    ParamSpec("deadband", [], "play width on the position input, one value or one per joint "
              "(empty: 2 encoder counts)", unit="rad, or m", min=0.0, read_only=True,
              list_of=float),
    ParamSpec("relax_time", 0.01, "time constant of the compensation's decay at rest",
              unit="s", min=1e-4, max=1e6, read_only=True),
    ParamSpec("diagnostics_period", 1.0, "/diagnostics period", unit="s", min=0.1, max=60.0,
              read_only=True),
    ARM_SETUP_SPEC,
) + SCHEDULING_SPECS + LIFECYCLE_SPECS

#: parameters that may change while running
LIVE = ("require_command", "enable", "scale", "max_effort", "max_command", "max_position",
        "watchdog_timeout")


def _per_joint(name: str, values, n: int) -> list:
    """One value for all joints, or one per joint (ValueError otherwise)."""
    values = list(values)
    if len(values) == 1:
        return values * n
    if len(values) != n:
        raise ValueError(f"{name}: expected 1 value or {n} (one per joint), got {len(values)}")
    return values


class FrictionCompensatorNode(ManagedNode, FricNode):
    """The friction compensator node (module docstring); kwargs go to ``Node``."""

    default_name = names.FRICTION_COMPENSATOR

    def _setup(self) -> None:
        derived = arm_setup_overrides(self, "friction_compensator")
        v = declare_params(self, SPECS)
        self._specs = {s.name: s for s in SPECS}
        for line in derived:
            self.get_logger().info(line)
        joints = self._joints = tuple(v["joints"])
        if not joints or len(set(joints)) != len(joints):
            raise ValueError(f"joints: expected distinct joint names, got {list(joints)}")
        n = self._n = len(joints)
        if not v["joint_friction"]:
            raise ValueError("joint_friction: the path to joint_friction.yaml is required "
                             "(the output of `fric identify`)")
        try:
            fset = read_joint_friction(v["joint_friction"])  # names the file and the field
        except ValueError as e:
            raise ValueError(f"joint_friction: {e}") from None
        friction = fset.for_joints(joints, where=f"joint_friction: {v['joint_friction']}")
        self._dyn = None
        gear = [j for j, jf in zip(joints, friction) if jf.has_gear]
        self._gear_load = v["gear_load"] if gear else "none"
        self._gravity = None  # g(q) -> τ_g of the gravity parameter (None: none)
        if v["gravity"] != "none" or self._gear_load == "gravity":
            if not v["urdf"]:
                need = [f"gravity: {v['gravity']}"] if v["gravity"] != "none" else []
                need += ["gear_load: gravity"] if self._gear_load == "gravity" else []
                raise ValueError(f"urdf: needed for {' and '.join(need)}"
                                 + (" (the arm's kinematics for the identified rigid body)"
                                    if v["gravity"] == "identified" else ""))
            from fric_core.transmission.urdf_dynamics import UrdfDynamics
            try:
                self._dyn = UrdfDynamics(v["urdf"], joint_names=list(joints))
            except Exception as e:  # UrdfError (one line naming the file), Pinocchio's errors
                msg = str(e)
                raise ValueError(msg if msg.startswith("urdf: ") else f"urdf: {msg}") from None
            if v["gravity"] == "identified":
                try:  # names the file and the field, or says the file has no rigid body
                    ig = fset.identified_gravity(self._dyn, v["joint_friction"])
                except ValueError as e:
                    raise ValueError(f"gravity: identified: {e}") from None
                buf = np.zeros(n)
                self._gravity = lambda q: ig.torque(q, out=buf)  # no allocation per step
            else:
                self._gravity = self._dyn.gravity_torque
        self._uses = joint_uses(joints, friction, self._gear_load)
        K = list(v["K"])
        kw = dict(resolution=_per_joint("encoder_resolution", v["encoder_resolution"], n),
                  K=_per_joint("K", K, n) if K else None,
                  B=_per_joint("B", v["B"], n),
                  presliding_counts=float(v["presliding_counts"]),
                  deadband=_per_joint("deadband", v["deadband"], n) if v["deadband"] else None,
                  relax_time=float(v["relax_time"]),
                  gravity=self._gravity if v["gravity"] != "none" else None)
        self._comp = FrictionCompensator(friction, float(v["dt"]), **kw)
        self._values = v
        self._apply_live(v)
        unused = unused_overrides(self, self._specs)
        if unused:
            self.get_logger().warning(f"ignoring unknown parameters {unused}")

        self._reader = JointStateReader(joints, ("position",))
        self._cmd_reader = CommandReader(n)
        self._cmd = np.zeros(n)
        self._abs = np.zeros(n)  # |positions| or |commands| for the plausibility checks
        self._zero = np.zeros(n)
        self._load = np.zeros(n)
        self._finite = np.zeros(n, dtype=bool)
        self._writer = Float64ArrayWriter()
        # command_type JointState: the topic-based interface's commands by name (None: arrays)
        self._path = JointCommandPath(joints) if v["command_type"] == "JointState" else None
        self._stats = CompensatorStats()
        # joint_states at up to 1 kHz: a rejection costs no more than a step (LazyRejectLog)
        self._states_rej = LazyRejectLog(self.get_logger(), "joint_state",
                                         key_prefix="joint_states")
        self._cmds_rej = RejectLog(self.get_logger(), "command", key_prefix="commands")
        # header stamps: out of order, duplicates, wrong jumps. No stale-after-trip rule (the
        # renderer's): after a stall longer than watchdog_timeout a resumed stream continues its
        # stamps and is compensated at once (a leftover of a dead one steps the element from
        # rest: zero compensation)
        self._stamps = StampGate(float(v["dt"]) * 1e9, stale_after_trip=False)
        self._now_ns = wall_clock_ns(self)
        self._said_non_finite = False
        self._said_same_joints = False
        self._sat_last = np.zeros(n, dtype=np.int64)
        self._last_state = None  # monotonic ns of the last valid joint_states
        self._last_cmd = None  # monotonic ns of the last valid command
        self._tripped = False
        self._cmd_tripped = False
        self._active = False  # lifecycle state active: publishing
        out_type, out_topic, on_command = (
            (JointState, names.ROBOT_JOINT_COMMANDS, self._on_joint_command) if self._path else
            (Float64MultiArray, names.EFFORT_COMMANDS, self._on_command))
        self._out = self.create_publisher(out_type, out_topic, qos.CONTROL_PUB)
        self._state_sub = self.create_subscription(JointState, names.JOINT_STATES,
                                                   self._on_joint_state, qos.CONTROL_SUB)
        # The command subscription is made once the node can deliver what it receives: its
        # output matched by a subscriber (the arm's command interface) and a joint_states
        # received. A controller that starts once its command topic has a subscriber (as
        # trajectory_tracker does) then does not start while its commands would go nowhere: a
        # CI run's output reached the arm 2.8 s after the tracker's clock had started, and
        # the compensated run tracked 22x worse than the uncompensated one.
        self._command_args = (out_type, v["command_topic"], on_command, qos.CONTROL_SUB)
        self._command_sub = None
        self._command_topic = self.resolve_topic_name(v["command_topic"])
        self._ready_since = time.monotonic()
        self._said_wait = False
        self._ready_timer = self.create_timer(0.02, self._subscribe_when_ready,
                                              clock=Clock(clock_type=ClockType.STEADY_TIME))
        self._diag_pub = self.create_publisher(DiagnosticArray, names.DIAGNOSTICS, qos.INFO)
        self._steady = Clock(clock_type=ClockType.STEADY_TIME)
        self._watchdog_timer = None
        self._make_watchdog_timer()
        self._housekeeping = Housekeeping()
        self.create_timer(v["diagnostics_period"],
                          self._housekeeping.timer(self.publish_diagnostics), clock=self._steady)
        self.add_on_set_parameters_callback(self._on_set_parameters)
        self.add_post_set_parameters_callback(self._on_parameters_set)
        c = self._comp
        self._layout = (f"model C, K={_fmt(c.K)} N·m/rad, B={_fmt(c.B)}, deadband="
                        f"{_fmt(c.deadband)} rad, relax_time={_fmt(c.relax_time)} s")
        self.get_logger().info(
            f"compensating {list(joints)} from {v['joint_friction']} ({self._layout}); "
            f"{v['command_type']} commands from {self._command_topic}, output "
            f"{self._out.topic_name}"
            + {"none": "", "urdf": ", gravity from the URDF",
               "identified": ", the identified gravity (rigid_body of the joint_friction file)"}[
                v["gravity"]]
            + ("" if self._gear_load == "none" else f", gear load: {self._gear_load}")
            + ("; without fresh commands: zero effort (require_command)" if self._require else
               "; without fresh commands: the compensation alone (require_command false: hand "
               "guiding)"))
        # one line: what is rendered of the file and what is left out (a warning if anything is)
        laws = ("friction laws (each joint's total curve, offset included): "
                + friction_laws_text(joints, friction, offset=True) + " | "
                + uses_text(self._uses))
        if any(u.gear_dropped or u.undetermined for u in self._uses):
            self.get_logger().warning(laws)
        else:
            self.get_logger().info(laws)

    def _apply_live(self, v: dict) -> None:
        n = self._n
        enable = _per_joint("enable", v["enable"], n)
        scale = _per_joint("scale", v["scale"], n)
        self._comp.set_gain(np.array(enable, dtype=bool), np.array(scale, dtype=float))
        self._comp.set_max_effort(float(v["max_effort"]))
        self._max_effort = float(v["max_effort"])
        self._max_command = float(v["max_command"])
        self._max_position = float(v["max_position"])
        self._require = bool(v["require_command"])
        self._on_cmd = v["publish_on"] == "command"
        self._timeout_ns = int(float(v["watchdog_timeout"]) * 1e9)

    def _subscribe_when_ready(self) -> None:
        """Subscribe to the commands once the output has a subscriber and joint_states came."""
        out_ok = self._out.get_subscription_count() > 0
        if out_ok and self._last_state is not None:
            self._command_sub = self.create_subscription(*self._command_args)
            self.destroy_timer(self._ready_timer)
            self._ready_timer = None
            self.get_logger().info(
                f"chain connected (output {self._out.topic_name} has "
                f"{self._out.get_subscription_count()} subscriber(s), joint_states received): "
                f"taking commands on {self._command_topic}")
        elif time.monotonic() - self._ready_since > 5.0 and not self._said_wait:
            self._said_wait = True
            missing = ([f"a subscriber on {self._out.topic_name}"] if not out_ok else []) + \
                (["joint_states"] if self._last_state is None else [])
            self.get_logger().warning(f"not taking commands yet: waiting for "
                                      f"{' and '.join(missing)}")

    def _make_watchdog_timer(self) -> None:
        if self._watchdog_timer is not None:
            self.destroy_timer(self._watchdog_timer)
        period = min(max(self._timeout_ns * 1e-9 / 4.0, 0.001), 0.05)
        self._watchdog_timer = self.create_timer(period, self._on_watchdog, clock=self._steady)

    # ------------------------------------------------------------------ hot path
    def _on_command(self, msg: Float64MultiArray) -> None:
        try:
            vals = self._cmd_reader.read(msg)
        except InputError as e:
            self._cmds_rej.add(e.kind, f"{self._command_topic}: {e}")
            return
        if np.abs(vals, out=self._abs).max() > self._max_command:  # no list per message
            i = int(np.abs(vals).argmax())
            self._cmds_rej.add("implausible", f"{self._command_topic}: command {vals[i]:.6g} of "
                               f"joint {self._joints[i]!r} is beyond max_command "
                               f"{self._max_command:g}")
            return
        self._take_command(vals)

    def _on_joint_command(self, msg: JointState) -> None:
        """command_type JointState: the topic-based interface's commands by name."""
        try:
            self._path.read(msg, self._max_command, "max_command")
        except InputError as e:
            self._cmds_rej.add(e.kind, f"{self._command_topic}: {e}")
            return
        self._take_command(self._path.reader.values)

    def _take_command(self, vals: np.ndarray) -> None:
        """A valid command (0 for a joint without one: NaN in a JointState command)."""
        self._cmd[:] = vals
        self._last_cmd = time.monotonic_ns()
        self._stats.commands += 1
        self._stats.commands_period += 1
        if self._cmd_tripped:
            self._cmd_tripped = False
            self.get_logger().info("commands resumed")
        if self._on_cmd and self._last_state is not None and not self._tripped and \
                self._active:
            self._send(self._comp.with_command(self._cmd))

    def _command_fresh(self, now: int) -> bool:
        return self._last_cmd is not None and now - self._last_cmd <= self._timeout_ns

    def _on_joint_state(self, msg: JointState) -> None:
        st = self._stats
        try:
            self._reader.read(msg)
        except InputError as e:
            if e.kind == "missing_joint":
                st.foreign_period += 1  # another device's joints (a gripper), or ours missing
            self._states_rej.add(e.kind, "joint_states: {}", e)
            return
        p = self._reader.position
        if np.abs(p, out=self._abs).max() > self._max_position:
            i = int(np.abs(p).argmax())
            self._states_rej.add("implausible", _IMPLAUSIBLE, "joint_states", "position",
                                 float(p[i]), self._joints[i], "max_position",
                                 self._max_position)
            return
        now = time.monotonic_ns()
        gate = self._stamps
        rejected = gate.check(msg.header.stamp, self._now_ns(), now, self._timeout_ns)
        if rejected is not None:  # out of order, duplicate, another publisher's older stream
            reason, text, args = rejected
            st.stamp_rejected_period += 1
            self._states_rej.add(reason, text, "joint_states", *args)
            return
        lost = gate.accept()
        if gate.anchored:  # the first input of this run was the odd one
            st.reanchors += 1
            self.get_logger().warning(
                f"joint_states: stamps re-anchored at {gate.t} ns (the first input after the "
                f"start or a watchdog trip was stamped {gate.anchor_shift_ns * 1e-9:+.6g} s "
                "away from the stream)", throttle_duration_sec=1.0)
        st.lost += lost
        self._last_state = now
        st.accepted += 1
        st.accepted_period += 1
        if not self._active:
            return  # lifecycle: inputs counted, the element not stepped, nothing published
        if self._tripped:
            self._tripped = False
            self.get_logger().info("joint_states resumed: compensating from rest")
        fresh = self._command_fresh(now)
        load = self._gear_load_torque(p, fresh)
        out = self._comp.step(p, self._cmd if fresh else None, load)
        if not fresh and self._require:
            self._command_watchdog(now)
            return  # the element keeps tracking the joint; nothing is forwarded
        if fresh and self._on_cmd:
            return  # the next command goes out with this step's compensation
        self._send(out)

    def _send(self, out: np.ndarray) -> None:
        """Publish an output. A non-finite entry (none is expected: every law the file may hold
        gives finite output) is replaced by 0 on its joint, counted, logged once, and that
        joint's element restarts from rest."""
        if not np.isfinite(out, out=self._finite).all():
            self._non_finite(out)
        path = self._path
        self._out.publish(path.fill(out, self._require) if path else self._writer.fill(out))
        self._stats.published += 1
        self._housekeeping.after_output()

    def _non_finite(self, out: np.ndarray) -> None:
        bad = ~self._finite
        st = self._stats
        st.non_finite += 1
        st.non_finite_period += 1
        if not self._said_non_finite:
            self._said_non_finite = True
            self.get_logger().error(
                f"output not finite on joints {[j for j, b in zip(self._joints, bad) if b]} "
                f"({out[bad].tolist()}): 0 published on them instead and their element reset "
                "(counted in /diagnostics: non-finite outputs; logged once)")
        out[bad] = 0.0
        self._comp.reset(bad)

    def _gear_load_torque(self, p: np.ndarray, fresh: bool):
        """τ_load of the gear model's levels: the torque wanted at the joint (the command, plus
        g(q) when gravity is added), or g(q) alone; None without gear."""
        mode = self._gear_load
        if mode == "none":
            return None
        if mode == "gravity":
            return self._gravity(p)
        ld = self._load
        if fresh:
            ld[:] = self._cmd
        else:
            ld[:] = 0.0
        if self._comp.gravity is not None:
            ld += self._gravity(p)
        return ld

    # ------------------------------------------------------------------ safety
    def _command_watchdog(self, now: int) -> None:
        """require_command and commands stale (after at least one, or after outputs without
        any: require_command switched on live during hand guiding): zero effort once."""
        if (self._last_cmd is not None or self._stats.published) and not self._cmd_tripped:
            self._cmd_tripped = True
            self._stats.command_trips += 1
            self._out.publish(self._zero_output())
            self.get_logger().warning(
                f"watchdog: no valid command on {self._command_topic} for "
                f"{self._timeout_ns * 1e-9:g} s (require_command): zero effort published, "
                "nothing until commands resume")

    def _on_watchdog(self) -> None:
        if not self._active:
            return
        now = time.monotonic_ns()
        if self._require and not self._tripped and not self._command_fresh(now):
            self._command_watchdog(now)
        if self._last_state is None or self._tripped:
            return
        if now - self._last_state > self._timeout_ns:
            self._tripped = True
            self._stats.state_trips += 1
            self._stamps.trip()
            self._comp.reset()
            self._out.publish(self._zero_output())
            self.get_logger().warning(
                f"watchdog: no valid joint_states for {self._timeout_ns * 1e-9:g} s: zero effort "
                "published, element reset")

    def publish_stop(self) -> bool:
        """The final command at shutdown: zero effort (nothing when the lifecycle state is not
        active: the deactivation published it). True if published."""
        if not self._active:
            return False
        self._out.publish(self._zero_output())
        return True

    def _zero_output(self):
        """Zero effort: every compensated joint (command_type JointState: every joint of the
        latest command's names)."""
        return self._path.zero() if self._path else self._writer.fill(self._zero)

    # ------------------------------------------------------------------ lifecycle
    def _lc_activate(self) -> None:
        """inactive → active: compensating from rest from the next joint_states."""
        self._comp.reset()
        self._tripped = self._cmd_tripped = False
        self._active = True

    def _lc_deactivate(self) -> None:
        """active → inactive: zero effort published at once, then nothing (inputs still read,
        subscriptions kept)."""
        self.publish_stop()
        self._active = False

    def _lc_cleanup(self) -> None:
        """inactive → unconfigured: element at rest, no input or command remembered."""
        self._active = False
        self._comp.reset()
        self._cmd[:] = 0.0
        self._last_state = self._last_cmd = None
        self._stamps.reset()
        self._tripped = self._cmd_tripped = False

    @property
    def compensator(self) -> FrictionCompensator:
        return self._comp

    def _say_same_joints(self, publishers: int) -> None:
        """Log once (again after it cleared) that two publishers carry the compensated joints:
        two devices or a leftover process in one ROS domain; their states would be mixed."""
        same = same_joints_problem(self._stats, publishers)
        if same and not self._said_same_joints:
            self.get_logger().error(
                f"{publishers} publishers on {self._state_sub.topic_name} carry the compensated "
                f"joints {list(self._joints)}: two devices (or a leftover process) in one ROS "
                "domain? Messages whose stamps are not after the last accepted one are rejected; "
                "the others are mixed (see /diagnostics)")
        self._said_same_joints = same

    @property
    def watchdog_tripped(self) -> bool:
        return self._tripped

    # ------------------------------------------------------------------ parameters
    def _on_set_parameters(self, params) -> SetParametersResult:
        new = dict(self._values)
        for p in params:
            reason = rejected_change(self._specs, LIVE, p)
            if reason:
                return SetParametersResult(successful=False, reason=reason)
            if p.name in self._specs:
                new[p.name] = p.value
        for name in ("enable", "scale"):
            try:
                _per_joint(name, new[name], self._n)
            except ValueError as e:
                return SetParametersResult(successful=False, reason=str(e))
        self._staged = new
        return SetParametersResult(successful=True)

    def _on_parameters_set(self, params) -> None:
        new, self._staged = getattr(self, "_staged", None), None
        if new is None:
            return
        old_timeout = self._timeout_ns
        self._values = new
        self._apply_live(new)
        if self._timeout_ns != old_timeout:
            self._make_watchdog_timer()
        self.get_logger().info(f"parameters changed: {[p.name for p in params]}")

    # ------------------------------------------------------------------ diagnostics
    def diagnostic_status(self):
        now = time.monotonic_ns()
        c = self._comp
        sat_period = c.saturated - self._sat_last
        self._sat_last[:] = c.saturated
        cmd_state = ("absent" if self._last_cmd is None else
                     "fresh" if self._command_fresh(now) else "stale")
        publishers = self._state_sub.get_publisher_count()  # once per period: a graph query
        self._say_same_joints(publishers)
        st = compensator_status(
            self._stats, self._states_rej, self._cmds_rej,
            name=f"{self.get_fully_qualified_name()}: friction compensation",
            joints=self._joints, friction_file=self._values["joint_friction"],
            layout=self._layout, dt=c.dt, waiting=self._last_state is None,
            tripped=self._tripped, command_state=cmd_state, require_command=self._require,
            timeout_s=self._timeout_ns * 1e-9, max_effort=self._max_effort, gain=c.gain,
            estimate=c.estimate, saturated=c.saturated, saturated_steps=c.saturated_steps,
            sat_period=sat_period, command_topic=self._command_topic,
            gravity=self._values["gravity"], uses=self._uses,
            state_topic=self._state_sub.topic_name, publishers=publishers)
        state = self.lifecycle_state
        st.values.append(KeyValue(key="lifecycle state", value=state))
        if not self._active:
            st.message = f"{state}: publishing nothing; {st.message}"
        return st


def _fmt(a) -> str:
    a = np.asarray(a)
    return f"{a[0]:g}" if np.all(a == a[0]) else "[" + ", ".join(f"{x:g}" for x in a) + "]"


def shutdown(node: FrictionCompensatorNode, context_ok: bool) -> None:
    """Zero effort as the last command."""
    published = False
    if context_ok:
        published = node.publish_stop()
        if published:
            node._out.wait_for_all_acked(RclDuration(seconds=1.0))
            sleep_ok(0.01)
    node.get_logger().info("stopped: final zero effort published" if published else
                           "stopped" + ("" if node.lifecycle_active else
                                        f" ({node.lifecycle_state}: nothing published)"))


def main(args=None) -> int:
    """Run the node until Ctrl-C/SIGTERM, then command zero effort and exit (1 on bad
    parameters or an unreadable joint_friction file: one line on stderr)."""
    return run_node(FrictionCompensatorNode, names.FRICTION_COMPENSATOR, args,
                    done=lifecycle_done, on_stop=shutdown)


if __name__ == "__main__":
    sys.exit(main())
