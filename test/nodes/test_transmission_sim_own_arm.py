"""transmission_sim on a user's own URDF (issue 24 item 1): ``arm_setup: auto`` derives its joints
and start pose from the URDF (fric_core/arm_setup.py), and ``hold_until_command`` holds the
joints where they start until the first command, as a real arm's brakes do, so an arm starting
where gravity pulls on it does not fall while the rest of the chain starts."""

import sys
from pathlib import Path

import numpy as np
import pytest
from rclpy.parameter import Parameter
from std_msgs.msg import Float64MultiArray

from fric_nodes.transmission_sim import TransmissionSim

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from own_arm_urdf import ARM_NAMES, write_own_arm_urdf  # noqa: E402


@pytest.fixture
def make(ros, tmp_path):
    urdf = write_own_arm_urdf(tmp_path / "own_arm.urdf")
    made = []

    def _make(**params):
        params = {"urdf": str(urdf), "arm_setup": "auto", "sync": "as_fast_as_possible",
                  "rate": 1000.0, **params}
        node = TransmissionSim(parameter_overrides=[Parameter(k, value=v)
                                                    for k, v in params.items()])
        made.append(node)
        return node

    yield _make
    for n in made:
        n.destroy_node()


def _steps(node, n):
    for _ in range(n):
        node.step_once()
    return np.array(node._js.position)


def test_own_urdf_joints_and_start_pose_derived(make):
    node = make()
    assert tuple(node.joint_names) == ARM_NAMES          # the gripper's fingers left out
    q0 = np.array(node._js.position or node.arm.q)
    assert q0[3] == pytest.approx(-1.57) and q0[5] == pytest.approx(1.86625)


@pytest.mark.parametrize("hold", [True, False])
def test_held_until_the_first_command(make, hold):
    node = make(hold_until_command=hold)
    q0 = node.arm.q
    # 0.5 s without a command: gravity pulls the elbow (joint 4 starts at -1.57, the forearm
    # horizontal; no friction): it falls ~0.4 rad in that time
    q = _steps(node, 500)
    if hold:
        assert np.array_equal(q, q0)                    # held exactly, velocity 0
        assert not np.any(node._js.velocity)
    else:
        assert abs(q[3] - q0[3]) > 0.1
    # the first command releases the joints: a zero command lets gravity act
    msg = Float64MultiArray()
    msg.data = [0.0] * 7
    node._on_command(msg)
    q1 = _steps(node, 50)
    assert abs(q1[3] - q[3]) > 1e-3
