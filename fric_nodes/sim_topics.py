"""A simulator's command inputs and joint-state outputs in both ros2_control conventions, so the
same simulator serves a ``forward_command_controller`` and ``joint_state_broadcaster`` directly,
or a controller_manager through the topic-based hardware interface
(:mod:`fric_interfaces.topic_based`). ``transmission_sim`` uses it (and ``mujoco_sim``).

Inputs (each topic a parameter of :data:`~fric_interfaces.topic_based.SIM_TOPIC_SPECS`,
"" = off):

* ``effort_commands_topic`` (``effort_controller/commands``, Float64MultiArray): one finite
  entry per joint, in ``joint_names`` order, or rejected. Dropped after the node's
  ``command_timeout``.
* ``robot_joint_commands_topic`` (``/robot_joint_commands``, JointState): efforts by name; a
  message may name some joints only (the others keep what they hold, zero before any), a NaN
  entry is "no command yet" for its joint (zero effort). Held until the next message (the
  interface does not resend a command its effort state already reports) unless
  ``robot_joint_commands_timeout`` > 0. Rejected (counted per reason, the command unchanged):
  duplicate or unknown names, ``effort`` empty or of another length than ``name``, ±inf.

The latest valid message of either input sets every joint's effort. Outputs: the same
JointState on ``joint_states_topic`` and ``robot_joint_states_topic``.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from fric_interfaces import qos
from fric_interfaces.conversions import CommandReader, InputError
from fric_interfaces.topic_based import EffortCommandReader

from ._node_util import RejectLog

__all__ = ["SimTopics", "TOPIC_PARAMS"]

#: the topic parameters: command inputs, then state outputs
TOPIC_PARAMS = ("effort_commands_topic", "robot_joint_commands_topic", "joint_states_topic",
                "robot_joint_states_topic")


class SimTopics:
    """The subscriptions and publishers of a simulator's joint commands and states.

    Parameters
    ----------
    node
        The simulator node (an rclpy ``Node``).
    joint_names
        The simulated joints, in command order.
    values
        The node's parameter values, :data:`~fric_interfaces.topic_based.SIM_TOPIC_SPECS` among
        them.
    rejects
        The node's rejected inputs: reasons ``command <kind>`` (Float64MultiArray) and
        ``joint_state_command <kind>`` (JointState).
    apply
        ``apply(effort, held, commanded)`` with each valid command: ``effort`` the (n,) efforts
        (a buffer reused: copy it), ``held`` True for a JointState command (not dropped after
        ``command_timeout``), ``commanded`` False when no joint has a command yet (all NaN).

    Raises
    ------
    ValueError
        A topic parameter that is not a valid topic name, or two that resolve to one topic.
    """

    def __init__(self, node, joint_names: Sequence[str], values: dict, rejects: RejectLog,
                 apply: Callable[[np.ndarray, bool, bool], None]):
        self._node = node
        self._rejects = rejects
        self._apply = apply
        self.joint_names = tuple(joint_names)
        self.topics = self._resolve(node, values)
        self._array_reader = CommandReader(len(self.joint_names))
        self.joint_reader = EffortCommandReader(self.joint_names)
        t = self.topics
        if t["effort_commands_topic"]:
            node.create_subscription(Float64MultiArray, t["effort_commands_topic"],
                                     self.on_effort_commands, qos.CONTROL_SUB)
        if t["robot_joint_commands_topic"]:
            node.create_subscription(JointState, t["robot_joint_commands_topic"],
                                     self.on_joint_commands, qos.CONTROL_SUB)
        #: the state publishers, one per topic that is on
        self.publishers = [node.create_publisher(JointState, t[p], qos.CONTROL_PUB)
                           for p in TOPIC_PARAMS[2:] if t[p]]
        #: where the latest valid command came from: "", or the parameter of its topic
        self.source = ""

    @staticmethod
    def _resolve(node, values: dict) -> dict:
        """Each topic parameter's resolved name ("" off); ValueError for a bad or shared one."""
        out, seen = {}, {}
        for p in TOPIC_PARAMS:
            name = values[p]
            if not name:
                out[p] = ""
                continue
            try:
                full = node.resolve_topic_name(name)
            except Exception as e:  # rclpy's InvalidTopicNameException and kin
                raise ValueError(f"{p}: {name!r} is not a valid topic name ({e})") from None
            if full in seen:
                raise ValueError(f"{p}: {full} is also {seen[full]} (one topic cannot be two of "
                                 "the inputs and outputs: a loop or a type clash)")
            seen[full] = p
            out[p] = full
        return out

    def on_effort_commands(self, msg: Float64MultiArray) -> None:
        """A ``forward_command_controller`` command: every joint, in order."""
        try:
            effort = self._array_reader.read(msg)
        except InputError as e:
            self._rejects.add(f"command {e.kind}", f"effort command {e}")
            return
        self.source = "effort_commands_topic"
        self._apply(effort, False, True)

    def on_joint_commands(self, msg: JointState) -> None:
        """A topic-based hardware interface command: efforts by name, NaN = none yet."""
        reader = self.joint_reader
        try:
            reader.read(msg)
        except InputError as e:
            self._rejects.add(f"joint_state_command {e.kind}",
                              f"{self.topics['robot_joint_commands_topic']}: {e}")
            return
        self.source = "robot_joint_commands_topic"
        self._apply(reader.values, True, bool(reader.commanded.any()))

    def publish(self, msg: JointState) -> None:
        """``msg`` on every state topic that is on."""
        for pub in self.publishers:
            pub.publish(msg)

    def uncommanded(self) -> list[str]:
        """The joints a JointState command left without a command (NaN, or never named) when it
        is the latest command; else []."""
        if self.source != "robot_joint_commands_topic":
            return []
        return [j for j, c in zip(self.joint_names, self.joint_reader.commanded) if not c]

    def describe(self) -> str:
        """One line: the topics that are on."""
        t = self.topics
        ins = [t[p] for p in TOPIC_PARAMS[:2] if t[p]]
        outs = [t[p] for p in TOPIC_PARAMS[2:] if t[p]]
        return (f"commands from {', '.join(ins) or 'nowhere (every command topic off)'}; "
                f"states on {', '.join(outs) or 'no topic (every state topic off)'}")
