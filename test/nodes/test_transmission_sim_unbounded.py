"""transmission_sim on a URDF without limits (issue 24, item 10): any finite command gives finite,
bounded joint_states.

The finding: a URDF whose joints have no ``<limit>`` (continuous joints) or a limit of 0 (what
exporters write) left the actuator unbounded: torques of 1e6 N m gave |q| = 1.07e273 rad, 1e300
gave 8.2e296, with no error (the Coriolis terms grow with the square of the speed). Now such a
joint gets the stated defaults (``default_effort_limit`` 1000 N m, ``default_velocity_limit``
10 rad/s, warned about at start, parameters override them), every joint's speed is bounded by
its limit, and continuous joints' angles stay in (−π, π].

The URDF is written here: two links of 1 kg, 1 m apart, about z (no gravity torque); ``j1`` and
``j3`` continuous without ``<limit>``, ``j2`` revolute with ``<limit lower="-1" upper="1"
effort="0" velocity="0"/>`` and its stops not enforced (the worst case: only the speed bounds its
angle). In-process: the node's command callback and ``step_once`` called directly.
"""

import math

import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticStatus
from geometry_msgs.msg import WrenchStamped
from std_msgs.msg import Float64MultiArray

from fric_nodes.transmission_sim import TransmissionSim
from ros_support import diag, made_nodes

_INERTIA = '<inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/>'


def _link(name, mass=True):
    body = (f'<inertial><mass value="1"/><origin xyz="0.5 0 0"/>{_INERTIA}</inertial>'
            if mass else "")
    return f'<link name="{name}">{body}</link>'


def _joint(name, kind, parent, child, x, limit=""):
    return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
            f'<origin xyz="{x} 0 0"/><axis xyz="0 0 1"/>{limit}</joint>')


URDF = ('<robot name="unbounded">' + _link("base", mass=False) + _link("l1") + _link("l2")
        + _link("l3")
        + _joint("j1", "continuous", "base", "l1", 0)
        + _joint("j2", "revolute", "l1", "l2", 1,
                 '<limit lower="-1" upper="1" effort="0" velocity="0"/>')
        + _joint("j3", "continuous", "l2", "l3", 1)
        + "</robot>")
RATE = 1000.0
SECONDS = 1.5


@pytest.fixture
def make(ros):
    yield from made_nodes(TransmissionSim)


def _sim(make, **over):
    return make(robot_description=URDF, sync="as_fast_as_possible", rate=RATE,
                gravity=[0.0, 0.0, 0.0], enforce_joint_limits=False, rotor_inertia=[0.01],
                command_timeout=1.0, **over)


def _drive(node, tau, seconds=SECONDS):
    """Command ``tau`` on every joint at every step; the published position, velocity and
    effort of every step."""
    pos, vel, eff = [], [], []
    cmd = Float64MultiArray(data=[tau, -tau, tau])
    for _ in range(int(seconds * RATE)):
        node._on_command(cmd)
        node.step_once()
        pos.append(list(node._js.position))
        vel.append(list(node._js.velocity))
        eff.append(list(node._js.effort))
    return np.array(pos), np.array(vel), np.array(eff)


@pytest.mark.parametrize("tau", [1e6, 1e300])
def test_any_finite_torque_gives_finite_bounded_joint_states(make, tau):
    node = _sim(make)
    q, v, effort = _drive(node, tau)
    assert np.isfinite(q).all() and np.isfinite(v).all() and np.isfinite(effort).all()
    # the joints reach the default speed limit and stay within it (before: |q| to 1e273 rad),
    # the actuators saturate at the default effort limit
    assert np.abs(v).max() <= 10.0 * (1 + 1e-12), np.abs(q).max()
    assert np.abs(effort).max() == 1000.0
    # continuous joints wrap into (-pi, pi]; they turned many times: 10 rad/s for 1.5 s
    cont = q[:, [0, 2]]
    assert (cont > -math.pi).all() and (cont <= math.pi).all()
    assert np.abs(np.diff(cont, axis=0)).max() > math.pi  # the wraps themselves
    # j2's stops are not enforced: its angle is bounded by its speed alone, |q| <= 10 rad/s x t
    t = np.arange(1, len(q) + 1) / RATE
    assert (np.abs(q[:, 1]) <= 10.0 * t + 1e-9).all()
    level, message, kv = diag(node)
    assert level >= DiagnosticStatus.WARN and "speed limit" in message
    assert int(kv["steps at the speed limit"]) > 0 and kv["failed steps"] == "0"
    for j in ("j1", "j2", "j3"):  # none has a URDF limit: the defaults, said so
        assert kv[f"{j} effort limit [N m]"] == "1000 (default)"
        assert kv[f"{j} velocity limit [rad/s]"] == "10 (default)"


def test_the_defaults_are_parameters(make):
    node = _sim(make, default_effort_limit=50.0, default_velocity_limit=2.0)
    q, v, effort = _drive(node, 1e300, seconds=1.0)
    assert np.abs(effort).max() == 50.0
    assert np.abs(v).max() == pytest.approx(2.0, rel=1e-12)
    assert np.isfinite(q).all()


def test_a_huge_wrench_leaves_joint_states_finite(make):
    node = _sim(make)
    w = WrenchStamped()
    w.header.frame_id = "world"
    w.wrench.force.y = 1e300
    node._on_wrench(w)
    for _ in range(500):
        node.step_once()
        assert np.isfinite(node._js.position).all() and np.isfinite(node._js.velocity).all()
        assert np.abs(node._js.velocity).max() <= 10.0 * (1 + 1e-12)


def test_a_revolute_joint_without_limit_is_refused_naming_it(ros):
    from rclpy.parameter import Parameter

    bare = URDF.replace('<limit lower="-1" upper="1" effort="0" velocity="0"/>', "")
    with pytest.raises(ValueError, match=r"joint 'j2' \(revolute\) has no <limit>"):
        TransmissionSim(parameter_overrides=[Parameter("robot_description", value=bare)])
