"""ros2_control's topic-based hardware interface: its topic names, its command messages read by
joint name, and the parameters a simulator takes to serve it.

The convention is that of ``joint_state_topic_hardware_interface/JointStateTopicSystem``
(package ``joint_state_topic_hardware_interface`` 1.1.0, released for kilted;
github.com/ros-controls/topic_based_hardware_interfaces, file
``joint_state_topic_hardware_interface/src/joint_state_topic_hardware_interface.cpp`` at commit
``d115f23614d7180e54027e8cb7f2df5a9d719d2d``, unchanged since tag 1.1.0 = ``d30e9ab``; the
effort-only send rule came with #118, commit ``babecd8``: 1.0.0 summed |state − command| over
position commands only, so it sent effort-only commands only with a threshold of -1):

* ``on_init``: the hardware parameters ``joint_commands_topic`` (default
  ``/robot_joint_commands``, publisher QoS keep-last 1, reliable) and ``joint_states_topic``
  (default ``/robot_joint_states``, subscription ``SensorDataQoS``: best effort), both
  ``sensor_msgs/JointState``; ``trigger_joint_command_threshold`` (default 1e-5) and
  ``sum_wrapped_joint_states``. (The package README says ``/robot_joint_command``; the source's
  ``/robot_joint_commands`` is what runs.)
* ``write``: one message per controller_manager cycle, ``header.stamp`` = the node's clock,
  ``name`` = every joint of the ``<ros2_control>`` tag in its order, and for each joint, for each
  of its command interfaces in order, the command appended to ``position``, ``velocity`` or
  ``effort``. With only effort command interfaces: ``effort`` has one entry per name, in name
  order, ``position`` and ``velocity`` are empty. A command interface holds NaN until a
  controller writes it (ros2_control kilted ``hardware_interface/handle.hpp``, commit
  ``cbe7d2c``: a ``Handle`` without ``initial_value`` starts at NaN; ros2_controllers kilted
  ``forward_command_controller/src/forward_controllers_base.cpp``, commit ``0f8eb14``: nothing is
  written while its command buffer is all NaN, before the first message), so the interface
  sends NaN for a joint no controller commands yet. Nothing is sent when Σ|state − command| over the
  command interfaces is at most ``trigger_joint_command_threshold``: a steady effort command that
  the simulator reports back as its effort state is sent once, not every cycle (set the threshold
  to -1 to send every cycle; NaN compares false and is always sent).
* ``read``: the latest ``joint_states_topic`` message; joints matched by name (others ignored), a
  field used only when it is non-empty, each entry only when finite.

A mixed message (some joints with position, others with effort command interfaces) has an
``effort`` shorter than ``name`` whose entries cannot be assigned to joints:
:class:`EffortCommandReader` rejects it. What a simulator does with the messages:
:mod:`fric_nodes.sim_topics`.
"""

from __future__ import annotations

import array
from typing import Sequence

import numpy as np
from sensor_msgs.msg import JointState

from . import names
from .conversions import InputError
from .parameters import ParamSpec

__all__ = ["JOINT_COMMANDS", "JOINT_STATES", "TRIGGER_JOINT_COMMAND_THRESHOLD",
           "CommandMessageError", "EffortCommandReader", "EffortCommandWriter", "SIM_TOPIC_SPECS"]

#: the interface's default ``joint_commands_topic``: it publishes, a simulator subscribes
JOINT_COMMANDS = names.ROBOT_JOINT_COMMANDS
#: the interface's default ``joint_states_topic``: a simulator publishes, it subscribes
JOINT_STATES = names.ROBOT_JOINT_STATES
#: the interface's default ``trigger_joint_command_threshold``
TRIGGER_JOINT_COMMAND_THRESHOLD = 1e-5


class CommandMessageError(InputError):
    """A JointState command that cannot be used. ``kind`` is one of ``duplicate_joint_name``,
    ``unknown_joint``, ``no_joints``, ``no_effort`` (position/velocity commands only),
    ``length_mismatch``, ``non_finite`` (±inf; NaN is the convention's "no command yet") or
    ``implausible`` (beyond the reader's ``max_abs``)."""

    def __init__(self, field: str, reason: str, kind: str):
        super().__init__(field, reason)
        self._kind = kind

    @property
    def kind(self) -> str:
        return self._kind


class EffortCommandReader:
    """Effort commands by joint name out of the interface's ``sensor_msgs/JointState``.

    Parameters
    ----------
    joint_names
        The commanded joints; :attr:`values` and :attr:`commanded` are in this order.
    unknown_joints
        ``"reject"`` (a simulator: a name it does not simulate rejects the message) or
        ``"pass"`` (a node in the chain: other joints are not its business, :attr:`positions`
        says where its own are).

    Notes
    -----
    A message may name some of the joints only: the others keep what they held. A NaN entry is
    "no command yet" for its joint: its :attr:`values` entry becomes 0 (hold zero effort) and its
    :attr:`commanded` entry False. Rejected, with :class:`CommandMessageError` and nothing
    changed: duplicate names, an unknown name (``"reject"``), no names, ``effort`` empty
    (position or velocity commands) or of another length than ``name``, an infinite entry.
    The name-to-index map is cached: a message with the previous message's names costs a list
    comparison, a ``take`` and two checks.
    """

    def __init__(self, joint_names: Sequence[str], unknown_joints: str = "reject"):
        joints = tuple(joint_names)
        if not joints or len(set(joints)) != len(joints):
            raise ValueError(f"joint_names: expected distinct joint names, got {list(joints)}")
        if unknown_joints not in ("reject", "pass"):
            raise ValueError(f"unknown_joints: 'reject' or 'pass', got {unknown_joints!r}")
        self.joint_names = joints
        self._index_of = {j: i for i, j in enumerate(joints)}
        self._strict = unknown_joints == "reject"
        n = len(joints)
        #: the held command per joint [N·m or N]: finite, 0 where none yet (NaN received)
        self.values = np.zeros(n)
        #: a finite command is held for the joint (False: none yet, or NaN last received)
        self.commanded = np.zeros(n, dtype=bool)
        #: indices into the last accepted message of the joints it names, and those joints'
        #: indices in ``joint_names`` (same length)
        self.positions = np.zeros(0, dtype=np.intp)
        self.joints = np.zeros(0, dtype=np.intp)
        #: the last accepted message's effort entries (a view; NaN kept)
        self.effort = np.zeros(0)
        self._names: list | None = None
        self._bad_names: list | None = None
        self._bad: CommandMessageError | None = None

    def _map(self, names: list) -> tuple[np.ndarray, np.ndarray]:
        if not names:
            raise CommandMessageError("name", "empty: the message commands no joint",
                                      "no_joints")
        seen = set()
        pos, idx = [], []
        for k, nm in enumerate(names):
            if nm in seen:
                raise CommandMessageError("name", f"duplicate joint name {nm!r}",
                                          "duplicate_joint_name")
            seen.add(nm)
            i = self._index_of.get(nm)
            if i is None:
                if self._strict:
                    raise CommandMessageError(
                        "name", f"unknown joint {nm!r} (commanded joints: "
                        f"{list(self.joint_names)})", "unknown_joint")
                continue
            pos.append(k)
            idx.append(i)
        return np.array(pos, dtype=np.intp), np.array(idx, dtype=np.intp)

    def read(self, msg: JointState, max_abs: float = np.inf, limit_name: str = "") -> None:
        """Take the effort commands of ``msg``; raises :class:`CommandMessageError` (also for an
        entry of one of the joints beyond ``max_abs``, the limit ``limit_name``)."""
        names = msg.name
        if names != self._names:
            if names == self._bad_names:  # the same unusable names again
                raise self._bad.with_traceback(None)
            try:
                mapped = self._map(list(names))
            except CommandMessageError as e:
                self._bad_names, self._bad = list(names), e
                raise
            self._names = list(names)
            self.positions, self.joints = mapped
        raw = msg.effort
        n_names = len(names)
        if len(raw) != n_names:
            if len(raw) == 0:
                sent = [f for f in ("position", "velocity") if len(getattr(msg, f))]
                raise CommandMessageError(
                    "effort", "empty" + (f" ({' and '.join(sent)} sent: only effort command "
                                         "interfaces are simulated)" if sent else ""),
                    "no_effort")
            raise CommandMessageError("effort", f"has {len(raw)} entries for {n_names} names "
                                      "(a joint without an effort command interface?)",
                                      "length_mismatch")
        effort = np.frombuffer(raw, dtype=float) if isinstance(raw, array.array) \
            else np.asarray(raw, dtype=float)
        mine = effort[self.positions]
        if np.isinf(mine).any():
            k = int(np.flatnonzero(np.isinf(mine))[0])
            raise CommandMessageError(
                "effort", f"infinite value {mine[k]} for joint "
                f"{self.joint_names[self.joints[k]]!r} (NaN = no command yet)", "non_finite")
        if max_abs < np.inf and (np.abs(mine) > max_abs).any():  # NaN compares False
            k = int(np.flatnonzero(np.abs(mine) > max_abs)[0])
            raise CommandMessageError(
                "effort", f"command {mine[k]:.6g} of joint "
                f"{self.joint_names[self.joints[k]]!r} is beyond {limit_name or 'max_abs'} "
                f"{max_abs:g}", "implausible")
        given = ~np.isnan(mine)
        self.commanded[self.joints] = given
        mine[~given] = 0.0
        self.values[self.joints] = mine
        self.effort = effort


class EffortCommandWriter:
    """A reusable ``sensor_msgs/JointState`` in the interface's effort-only layout.

    :meth:`fill` sets the header, names and efforts; position and velocity stay empty (what the
    interface sends when every joint has an effort command interface).
    """

    def __init__(self):
        self.msg = JointState()

    def fill(self, header, names: Sequence[str], effort) -> JointState:
        """The message with ``header`` (copied), ``names`` and ``effort`` (as doubles)."""
        m = self.msg
        m.header = header
        m.name = names
        buf = array.array("d")
        buf.frombytes(np.ascontiguousarray(effort, dtype=float).tobytes())
        m.effort = buf
        return m


#: A simulator's topics, both conventions: ros2_control's controllers
#: (``effort_controller/commands``, ``joint_states``) and the topic-based hardware interface.
#: "" turns a topic off.
SIM_TOPIC_SPECS = (
    ParamSpec("effort_commands_topic", names.EFFORT_COMMANDS, "effort commands as "
              "forward_command_controller takes them (std_msgs/Float64MultiArray, one entry per "
              "joint in joint_names order); '' = not subscribed", read_only=True),
    ParamSpec("joint_states_topic", names.JOINT_STATES, "the joint states as "
              "joint_state_broadcaster publishes them (sensor_msgs/JointState); '' = not "
              "published (e.g. when "
              "joint_state_broadcaster publishes joint_states from robot_joint_states_topic)",
              read_only=True),
    ParamSpec("robot_joint_commands_topic", JOINT_COMMANDS, "effort commands from ros2_control's "
              "topic-based hardware interface (sensor_msgs/JointState by name, effort filled, "
              "NaN = no command yet: zero effort; its joint_commands_topic); '' = not "
              "subscribed", read_only=True),
    ParamSpec("robot_joint_states_topic", JOINT_STATES, "the joint states for the topic-based "
              "hardware interface (its joint_states_topic; sensor_msgs/JointState); '' = not "
              "published", read_only=True),
    ParamSpec("robot_joint_commands_timeout", 0.0, "a command on robot_joint_commands_topic "
              "older than this (simulated time) is dropped (zero effort); 0 = held until the "
              "next: the interface does not resend a command equal to the effort state within "
              "trigger_joint_command_threshold", unit="s", min=0.0, max=3600.0, read_only=True),
)
