"""ros2_control's topic-based hardware interface re-stated for the tests, and a simulator adapter
the convention tests drive any simulator through (transmission_sim today, mujoco_sim next).

The interface is ``joint_state_topic_hardware_interface/JointStateTopicSystem`` 1.1.0 (kilted),
github.com/ros-controls/topic_based_hardware_interfaces,
``joint_state_topic_hardware_interface/src/joint_state_topic_hardware_interface.cpp`` at commit
``d115f23614d7180e54027e8cb7f2df5a9d719d2d`` (= tag 1.1.0 for this file; the effort-only
publishing is #118, ``babecd8``). Re-stated, not run (no controller_manager here):

* :func:`interface_command` is the message ``write()`` publishes on ``joint_commands_topic``:
  ``name`` = every joint of the ``<ros2_control>`` tag in tag order; per joint, per command
  interface in its order, the command appended to ``position``, ``velocity`` or ``effort``;
  ``header.stamp`` the node's time; a command interface no controller wrote holds NaN;
* :func:`interface_sends` is ``write()``'s send rule (Σ|state − command| over the command
  interfaces above ``trigger_joint_command_threshold``, default 1e-5; NaN always sent);
* :func:`interface_read` is what ``read()`` takes from a ``joint_states_topic`` message: joints
  by name, a field only when non-empty, an entry only when finite;
* :data:`COMMAND_QOS` / :data:`STATE_QOS` are its publisher's ``rclcpp::QoS(1)`` and its
  subscription's ``rclcpp::SensorDataQoS()``.

A simulator under test is a node with ``topics`` (:class:`fric_nodes.sim_topics.SimTopics`),
``step_once()``, ``joint_names`` and ``diagnostic_status()``; :class:`Sim` wraps it, with the
state publishers replaced by recorders.
"""

from __future__ import annotations

import math

import numpy as np
from rclpy.qos import (HistoryPolicy, QoSProfile, ReliabilityPolicy, DurabilityPolicy,
                       qos_profile_sensor_data)
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from fric_interfaces.conversions import ns_to_stamp

__all__ = ["COMMAND_QOS", "STATE_QOS", "interface_command", "interface_sends", "interface_read",
           "Sim"]

#: the interface's command publisher: rclcpp::QoS(1): keep last 1, reliable, volatile
COMMAND_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1,
                         reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.VOLATILE)
#: the interface's state subscription: rclcpp::SensorDataQoS (best effort, keep last 5)
STATE_QOS = qos_profile_sensor_data


def interface_command(joints, commands: dict, interfaces: dict | None = None,
                      stamp_ns: int = 0) -> JointState:
    """The JointState ``write()`` publishes.

    ``joints``: the tag's joints in order; ``interfaces``: joint -> its command interfaces in
    order (default: ``("effort",)`` each); ``commands``: joint -> value, or joint ->
    {interface: value}; an interface without a value holds NaN (nothing written yet)."""
    msg = JointState()
    msg.header.stamp = ns_to_stamp(stamp_ns)
    fields = {"position": [], "velocity": [], "effort": []}
    for j in joints:
        msg.name.append(j)
        for itf in (interfaces or {}).get(j, ("effort",)):
            c = commands.get(j, math.nan)
            value = c.get(itf, math.nan) if isinstance(c, dict) else c
            fields[itf].append(float(value))
    msg.position, msg.velocity, msg.effort = (fields[f] for f in ("position", "velocity",
                                                                  "effort"))
    return msg


def interface_sends(command, state, threshold: float = 1e-5) -> bool:
    """``write()`` publishes unless Σ|state − command| ≤ ``threshold`` (NaN compares false)."""
    diff = float(np.sum(np.abs(np.asarray(state, float) - np.asarray(command, float))))
    return not diff <= threshold


def interface_read(msg: JointState, joints) -> dict:
    """{joint: {field: value}} as ``read()`` sets the state interfaces from ``msg``."""
    out = {j: {} for j in joints}
    for i, name in enumerate(msg.name):
        if name not in out:
            continue
        for field in ("position", "velocity", "effort"):
            vals = getattr(msg, field)
            if len(vals) and math.isfinite(vals[i]):
                out[name][field] = vals[i]
    return out


class _Recorder:
    """Stands in for a state publisher: a copy of every message, with the topic's name."""

    def __init__(self, topic_name: str):
        self.topic_name = topic_name
        self.messages = []

    def publish(self, msg: JointState) -> None:
        m = JointState()
        m.header.stamp = msg.header.stamp
        m.header.frame_id = msg.header.frame_id
        m.name = list(msg.name)
        m.position, m.velocity, m.effort = (list(msg.position), list(msg.velocity),
                                            list(msg.effort))
        self.messages.append(m)


class Sim:
    """A simulator node driven by the convention tests: commands in through its
    :class:`~fric_nodes.sim_topics.SimTopics` callbacks, steps, states recorded per topic."""

    def __init__(self, node):
        self.node = node
        topics = node.topics
        self.recorders = [_Recorder(p.topic_name) for p in topics.publishers]
        topics.publishers = self.recorders
        self.joints = list(topics.joint_names)

    def command(self, msg: JointState) -> None:
        """A message on robot_joint_commands_topic."""
        self.node.topics.on_joint_commands(msg)

    def command_array(self, values) -> None:
        """A message on effort_commands_topic."""
        self.node.topics.on_effort_commands(Float64MultiArray(data=[float(v) for v in values]))

    def step(self, n: int = 1) -> None:
        for _ in range(n):
            self.node.step_once()

    def last(self, topic_index: int = 0) -> JointState:
        return self.recorders[topic_index].messages[-1]

    def effort(self) -> list[float]:
        """The effort the last step applied, as published."""
        return list(self.last().effort)

    def diag(self) -> dict:
        return {kv.key: kv.value for kv in self.node.diagnostic_status().values}
