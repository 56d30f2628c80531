"""``friction_compensator`` on the command path of ros2_control's topic-based hardware interface
(``command_type: JointState``; :mod:`fric_interfaces.topic_based`)::

    controller_manager (joint_state_topic_hardware_interface) --joint_commands_topic-->
        friction_compensator --/robot_joint_commands--> simulator or robot

The input is the interface's JointState: every joint of its ``<ros2_control>`` tag by name,
``effort`` filled, NaN for a joint no controller commands yet. The output keeps the input's
header, names and order; the compensated joints' efforts become command + compensation (+ g(q)),
the other joints' pass unchanged. A compensated joint whose command is NaN stays NaN with
``require_command`` (no command yet, passed on: the receiver holds zero effort, as it does when
the interface sends NaN itself), and gets the compensation alone without it (hand guiding).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
from sensor_msgs.msg import JointState
from std_msgs.msg import Header

from fric_interfaces.topic_based import EffortCommandReader, EffortCommandWriter

__all__ = ["JointCommandPath"]


class JointCommandPath:
    """The compensator's JointState input and output.

    Parameters
    ----------
    joints
        The compensated joints, in the compensator's order.

    Notes
    -----
    :meth:`read` takes a command message (raises
    :class:`~fric_interfaces.topic_based.CommandMessageError`); ``reader.values`` then holds each
    compensated joint's command (0 where NaN: none yet) and ``reader.commanded`` which have one.
    The output layout (header, names, the other joints' entries) is that of the latest accepted
    message; before any, the compensated joints in order with a zero header stamp.
    """

    def __init__(self, joints: Sequence[str]):
        self.reader = EffortCommandReader(joints, unknown_joints="pass")
        n = len(self.reader.joint_names)
        self._writer = EffortCommandWriter()
        self._header = Header()
        self._names = list(self.reader.joint_names)
        self._effort = np.zeros(n)  # the latest input's efforts (the layout's pass-through)
        self._out = np.zeros(n)
        self._positions = np.arange(n, dtype=np.intp)
        self._joints = np.arange(n, dtype=np.intp)

    def read(self, msg: JointState, max_abs: float = np.inf, limit_name: str = "") -> None:
        """Take a command message; its layout becomes the output's (see the class notes)."""
        r = self.reader
        r.read(msg, max_abs, limit_name)
        self._header = msg.header
        self._names = msg.name
        if self._effort.shape != r.effort.shape:
            self._effort = np.empty_like(r.effort)
            self._out = np.empty_like(r.effort)
        np.copyto(self._effort, r.effort)
        self._positions, self._joints = r.positions, r.joints

    def fill(self, out: np.ndarray, keep_nan: bool) -> JointState:
        """The output message for the compensated joints' efforts ``out`` (joint order):
        ``keep_nan`` (require_command) leaves NaN on the joints without a command."""
        o = self._out
        np.copyto(o, self._effort)
        vals = out[self._joints]
        if keep_nan:
            vals[~self.reader.commanded[self._joints]] = np.nan
        o[self._positions] = vals
        return self._writer.fill(self._header, self._names, o)

    def zero(self) -> JointState:
        """Zero effort on every joint of the layout (the compensator's safe stop)."""
        self._out[:] = 0.0
        return self._writer.fill(self._header, self._names, self._out)
