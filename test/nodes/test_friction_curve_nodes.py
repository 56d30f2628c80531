"""friction_compensator and transmission_sim read every joint_friction.yaml the reader accepts
(issue 23): a ``law: curve`` joint, a level below 0 (an offset left in the levels) and an effort
``offset``; each logs one line naming every joint's law. In-process, callbacks called directly.

The compensator renders the total curve τ_f + offset (checked against fric_core's compensator
and the analytic total(v)); the simulator renders τ_f without the offset: the planar 2-link arm
(horizontal: no gravity) held at rest by commands inside each joint's static interval.
"""

import numpy as np
import pytest
from rclpy.parameter import Parameter
from std_msgs.msg import Float64MultiArray

from fric_core.compensation import FrictionCompensator
from fric_core.joint_friction import read_joint_friction
from fric_interfaces.conversions import joint_state_msg
from fric_nodes.friction_compensator import FrictionCompensatorNode
from fric_nodes.transmission_sim import TransmissionSim

FILE = """model: curve
joints:
  joint1: {Cp: 0.3, Cn: 0.25, bp: 0.2, bn: 0.2, offset: 0.2, law: curve,
           curve: {positive: {v: [0.0, 0.1, 0.5, 1.5], f: [0.3, 0.5, 0.6, 0.65]},
                   negative: {v: [0.0, 0.2, 1.0], f: [0.25, 0.45, 0.7]}}}
  joint2: {Cp: -0.1, Cn: 0.5, bp: 0.25, bn: 0.2}
"""


class _Log:
    """Records what a node logs."""

    def __init__(self):
        self.infos, self.warnings = [], []

    def info(self, msg, **_):
        self.infos.append(msg)

    def warning(self, msg, **_):
        self.warnings.append(msg)

    def error(self, msg, **_):
        raise AssertionError(msg)

    def debug(self, msg, **_):
        pass


@pytest.fixture
def friction_file(tmp_path):
    p = tmp_path / "joint_friction.yaml"
    p.write_text(FILE)
    return str(p)


def _make(cls, monkeypatch, **params):
    log = _Log()
    monkeypatch.setattr(cls, "get_logger", lambda self: log)
    node = cls(parameter_overrides=[Parameter(k, value=v) for k, v in params.items()])
    return node, log


def _laws_line(log, start):
    lines = [m for m in log.infos if m.startswith(start)]
    assert len(lines) == 1, log.infos
    return lines[0]


def test_compensator_reads_curve_negative_level_and_offset_and_renders_the_total(
        ros, monkeypatch, friction_file):
    node, log = _make(FrictionCompensatorNode, monkeypatch, joints=["joint1", "joint2"],
                      joint_friction=friction_file, publish_on="joint_states",
                      watchdog_timeout=30.0, require_command=False)  # no controller here
    try:
        line = _laws_line(log, "friction laws")
        assert "joint1 curve 4+3 knots, at 0 Cp 0.3 Cn 0.25 + offset 0.2 N m" in line
        assert "joint2 asymmetric Cp -0.1 Cn 0.5 bp 0.25 bn 0.2 [a level below 0" in line
        sent = []
        node._out = type("Sink", (), {"publish": lambda self, m: sent.append(list(m.data)),
                                      "wait_for_all_acked": lambda self, d: True})()
        jf = read_joint_friction(friction_file).for_joints(["joint1", "joint2"])
        ref = FrictionCompensator(jf, 0.001, resolution=1e-4, max_effort=50.0)
        v = np.array([0.3, -0.6])
        for k in range(400):
            p = v * (k * 1e-3)
            node._on_joint_state(joint_state_msg(["joint1", "joint2"], list(p)))
            assert sent[-1] == pytest.approx(list(ref.step(p)), rel=1e-12, abs=1e-12)
        assert sent[-1] == pytest.approx([0.55 + 0.2, -0.5 - 0.2 * 0.6], rel=1e-9)
    finally:
        node.destroy_node()


def test_transmission_sim_reads_the_same_file_without_the_offset(ros, monkeypatch,
                                                                 friction_file):
    node, log = _make(TransmissionSim, monkeypatch, joint_friction=friction_file,
                      sync="as_fast_as_possible", gravity=[0.0, 0.0, 0.0])
    try:
        line = _laws_line(log, "joint friction from")
        assert "joint1 curve 4+3 knots, at 0 Cp 0.3 Cn 0.25, offset 0.2 N m not simulated" in line
        assert "joint2 asymmetric Cp -0.1 Cn 0.5" in line
        arm = node.arm
        assert arm.curves[0] is not None and arm.Cp.tolist() == [0.3, -0.1]
        # inside both static intervals ([−0.25, 0.3] and [−0.5, −0.1]; with the offset joint1's
        # would be [−0.05, 0.5]: 0.4 would hold there, here it breaks away)
        for k in range(500):
            if k % 50 == 0:  # fresh commands (the command timeout is in simulated time)
                node._on_command(Float64MultiArray(data=[0.29, -0.3]))
            node.step_once()
        assert list(node._js.position) == [0.0, 0.0]
        for k in range(300):
            if k % 50 == 0:
                node._on_command(Float64MultiArray(data=[0.4, -0.3]))
            node.step_once()
        assert node._js.velocity[0] > 1e-3  # (0.4 − 0.3) N m on ~5 kg m²: 0.006 rad/s
    finally:
        node.destroy_node()
