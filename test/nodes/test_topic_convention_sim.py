"""The simulators as targets of ros2_control's topic-based hardware interface (issue 25 item 3):
commands as the interface's JointState (by name, effort filled, NaN = no command yet), states on
both names, exactly as the interface's source defines the messages (test/topic_convention.py).

Every test takes a simulator factory (``SIMULATORS``: transmission_sim and mujoco_sim): a node
of two joints at rest, without gravity or external load, whose first step with zero effort
leaves it exactly where it is. The tests call the node's callbacks and ``step_once`` directly,
except the last, which runs the topics through DDS with the interface's own QoS.
"""

import math
import time

import numpy as np
import pytest
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState

from fric_nodes.mujoco_sim import MujocoSim, mujoco_missing
from fric_nodes.transmission_sim import TransmissionSim
from topic_convention import (COMMAND_QOS, STATE_QOS, Sim, interface_command, interface_read,
                              interface_sends)


def _transmission_sim(**params):
    """planar_2link (joint1, joint2 about z; no gravity), backdrivable gears (gamma_v 0.3),
    rotor inertia 1 kg m^2: well posed, at rest at q = 0."""
    params = {"sync": "as_fast_as_possible", "gravity": [0.0, 0.0, 0.0], "gamma_v": [0.3],
              "rotor_inertia": [1.0], **params}
    return TransmissionSim(parameter_overrides=[Parameter(k, value=v)
                                                for k, v in params.items()])


def _mujoco_sim(**params):
    """planar_2link compiled by MuJoCo (no joint friction file: MuJoCo's own, none in the URDF),
    armature 1 kg m^2, no gravity: at rest at q = 0."""
    params = {"sync": "as_fast_as_possible", "gravity": [0.0, 0.0, 0.0],
              "rotor_inertia": [1.0], **params}
    return MujocoSim(parameter_overrides=[Parameter(k, value=v) for k, v in params.items()])


SIMULATORS = [pytest.param(_transmission_sim, id="transmission_sim"),
              pytest.param(_mujoco_sim, id="mujoco_sim", marks=pytest.mark.skipif(
                  mujoco_missing(), reason="the optional extra [mujoco] is not installed"))]


@pytest.fixture(params=SIMULATORS)
def make(request, ros):
    made = []

    def _make(**params):
        node = request.param(**params)
        made.append(node)
        return Sim(node)

    yield _make
    for n in made:
        n.destroy_node()


def test_a_joint_state_command_moves_the_arm_exactly_as_the_array_command(make):
    """The same torques through either convention: the same states, bit for bit (one physics,
    two doors), and the applied torque is reported as the effort state."""
    a, b = make(), make()
    j1, j2 = a.joints
    for _ in range(200):  # a controller's command at every step, through either door
        a.command_array([2.0, -1.5])
        b.command(interface_command([j1, j2], {j1: 2.0, j2: -1.5}))
        a.step()
        b.step()
        ma, mb = a.last(), b.last()
        assert list(ma.position) == list(mb.position)
        assert list(ma.velocity) == list(mb.velocity)
    assert b.effort() == [2.0, -1.5]
    assert abs(b.last().position[0]) > 1e-3  # it did move: the comparison is not of rest


def test_names_in_any_order_and_partial_names_hold_the_others(make):
    sim = make()
    j1, j2 = sim.joints
    sim.command(interface_command([j2], {j2: 3.0}))  # one joint named: the other stays at 0
    sim.step()
    assert sim.effort() == [0.0, 3.0]
    sim.command(interface_command([j1], {j1: -2.0}))  # j2 keeps its 3.0
    sim.step()
    assert sim.effort() == [-2.0, 3.0]
    sim.command(interface_command([j2, j1], {j1: 6.0, j2: 5.0}))  # by name, not by position
    sim.step()
    assert sim.effort() == [6.0, 5.0]


def test_nan_is_no_command_yet_zero_effort(make):
    """The interface sends NaN until a controller writes: zero effort, the arm (at rest, no
    load) stays exactly where it is; a joint still NaN beside a commanded one gets zero."""
    sim = make()
    j1, j2 = sim.joints
    sim.command(interface_command([j1, j2], {}))  # both NaN
    sim.step(20)
    assert sim.effort() == [0.0, 0.0]
    assert list(sim.last().position) == [0.0, 0.0] and list(sim.last().velocity) == [0.0, 0.0]
    assert sim.node.topics.uncommanded() == [j1, j2]
    sim.command(interface_command([j1, j2], {j1: 1.0}))  # j2 still NaN
    sim.step()
    assert sim.effort() == [1.0, 0.0]
    assert sim.node.topics.uncommanded() == [j2]
    sim.command(interface_command([j1, j2], {j2: 4.0}))  # the controller of j1 stopped: NaN
    sim.step()
    assert sim.effort() == [0.0, 4.0]


def _bad_messages(j1, j2):
    """(kind, message): each one the convention cannot take."""
    inf = interface_command([j1, j2], {j1: math.inf, j2: 1.0})
    short = interface_command([j1, j2], {j1: 1.0, j2: 1.0})
    short.effort = [1.0]
    # j2 with a position command interface: the interface's effort has 1 entry for 2 names
    mixed = interface_command([j1, j2], {j1: 1.0, j2: 0.5}, {j2: ("position",)})
    position_only = interface_command([j1, j2], {j1: 0.1, j2: 0.2},
                                      {j1: ("position",), j2: ("position",)})
    return [("length_mismatch", short),
            ("length_mismatch", mixed),
            ("no_effort", position_only),
            ("unknown_joint", interface_command([j1, j2, "gripper"], {j1: 1.0, j2: 1.0,
                                                                      "gripper": 0.0})),
            ("duplicate_joint_name", interface_command([j1, j1], {j1: 1.0})),
            ("non_finite", inf),
            ("non_finite", interface_command([j1, j2], {j1: 0.0, j2: -math.inf})),
            ("no_joints", interface_command([], {}))]


def test_bad_commands_are_rejected_counted_per_reason_and_change_nothing(make):
    sim = make()
    j1, j2 = sim.joints
    sim.command(interface_command([j1, j2], {j1: 1.0, j2: -1.0}))
    bad = _bad_messages(j1, j2)
    for _, msg in bad:
        sim.command(msg)
        sim.step()
        assert sim.effort() == [1.0, -1.0]  # the last valid command, untouched
        assert np.isfinite(sim.last().position).all()
    kv = sim.diag()
    want = {}
    for kind, _ in bad:
        want[kind] = want.get(kind, 0) + 1
    got = {k.removeprefix("rejected joint_state_command "): int(v) for k, v in kv.items()
           if k.startswith("rejected joint_state_command ") and not k.endswith(" last")}
    assert got == want  # one key per reason, each counted
    assert "gripper" in kv["rejected joint_state_command unknown_joint last"]
    assert "effort" in kv["rejected joint_state_command length_mismatch last"]


def test_a_joint_state_command_is_held_the_interface_does_not_resend_it(make):
    """The interface sends a steady effort command once: the effort state echoes it, Σ|state −
    command| = 0 ≤ 1e-5. So a JointState command is held past command_timeout (an array
    command is dropped after it), unless robot_joint_commands_timeout is set."""
    held, dropped = make(command_timeout=0.01), make(command_timeout=0.01,
                                                     robot_joint_commands_timeout=0.01)
    j1, j2 = held.joints
    cmd = interface_command([j1, j2], {j1: 0.5, j2: 0.25})
    for sim in (held, dropped):
        sim.command(cmd)
        sim.step()
    assert not interface_sends(cmd.effort, held.effort())  # nothing more would come
    held.step(50)
    dropped.step(50)
    assert held.effort() == [0.5, 0.25]  # 51 ms > command_timeout: still applied
    assert dropped.effort() == [0.0, 0.0]
    array = make(command_timeout=0.01)
    array.command_array([0.5, 0.25])
    array.step(51)
    assert array.effort() == [0.0, 0.0]


def test_states_go_out_under_both_names_as_the_interface_reads_them(make):
    sim = make()
    j1, j2 = sim.joints
    assert [r.topic_name for r in sim.recorders] == ["/joint_states", "/robot_joint_states"]
    sim.command(interface_command([j1, j2], {j1: 2.0, j2: 1.0}))
    sim.step(30)
    plain, robot = (r.messages for r in sim.recorders)
    assert len(plain) == len(robot) == 30
    for a, b in zip(plain, robot):
        assert (a.name, a.position, a.velocity, a.effort) == (b.name, b.position, b.velocity,
                                                              b.effort)
        assert a.header.stamp == b.header.stamp
    last = robot[-1]
    assert last.name == [j1, j2] and len(last.position) == len(last.velocity) == 2
    states = interface_read(last, [j1, j2])  # every state interface set, by name
    for i, j in enumerate((j1, j2)):
        assert states[j] == {"position": last.position[i], "velocity": last.velocity[i],
                             "effort": last.effort[i]}
    assert states[j1]["velocity"] > 0.0  # moving under +2 N m: a live state, not zeros


@pytest.mark.parametrize("params, topics", [
    ({"joint_states_topic": ""}, ["/robot_joint_states"]),
    ({"robot_joint_states_topic": ""}, ["/joint_states"]),
    ({"robot_joint_states_topic": "/sim/states", "joint_states_topic": "js"},
     ["/js", "/sim/states"]),
])
def test_state_topics_are_parameters_empty_is_off(make, params, topics):
    sim = make(**params)
    assert [r.topic_name for r in sim.recorders] == topics


def test_command_topics_are_parameters_empty_is_off(make):
    sim = make(effort_commands_topic="", robot_joint_commands_topic="/cm/commands")
    subs = {s.topic_name for s in sim.node.subscriptions}
    assert "/cm/commands" in subs
    assert not {"/effort_controller/commands", "/robot_joint_commands"} & subs


@pytest.mark.parametrize("params, message", [
    ({"robot_joint_commands_topic": "joint_states"},  # its own states as commands: a loop
     "joint_states_topic: /joint_states is also robot_joint_commands_topic"),
    ({"robot_joint_states_topic": "/joint_states"},
     "robot_joint_states_topic: /joint_states is also joint_states_topic"),
    ({"robot_joint_commands_topic": "not a topic"},
     "robot_joint_commands_topic: 'not a topic' is not a valid topic name"),
])
def test_a_topic_in_two_roles_or_invalid_is_a_parameter_error(make, params, message):
    with pytest.raises(ValueError, match="^" + message):
        make(**params)


def test_transmission_sim_brakes_stay_on_while_every_command_is_nan(ros):
    """hold_until_command (a real arm's brakes): NaN is no command, the joints stay held under
    a wrench; the first finite entry releases them."""
    from geometry_msgs.msg import WrenchStamped

    node = _transmission_sim(hold_until_command=True)
    try:
        sim = Sim(node)
        j1, j2 = sim.joints
        w = WrenchStamped()
        w.header.frame_id = "world"
        w.wrench.force.y = 10.0  # at q = 0 the end effector at (2, 0): 20 and 10 N m
        node._on_wrench(w)
        sim.command(interface_command([j1, j2], {}))
        sim.step(50)
        assert list(sim.last().position) == [0.0, 0.0]  # held exactly
        sim.command(interface_command([j1, j2], {j1: 0.0}))  # a controller writes 0
        sim.step(50)
        assert sim.last().position[1] > 1e-4  # released: the wrench moves the arm
    finally:
        node.destroy_node()


@pytest.mark.parametrize("factory", SIMULATORS)
def test_through_dds_with_the_interface_qos(ros, factory):
    """The interface's publisher (QoS(1), reliable) reaches the simulator's subscription, and
    the sim's states reach a SensorDataQoS (best effort) subscription on /robot_joint_states,
    whose effort reports the command."""
    sim = factory(sync="realtime", rate=500.0)
    peer = rclpy.create_node("topic_interface_peer")
    ex = SingleThreadedExecutor()
    try:
        got = []
        peer.create_subscription(JointState, "/robot_joint_states", got.append, STATE_QOS)
        pub = peer.create_publisher(JointState, "/robot_joint_commands", COMMAND_QOS)
        ex.add_node(sim)
        ex.add_node(peer)
        j1, j2 = sim.joint_names
        end = time.monotonic() + 5.0
        while time.monotonic() < end and not (got and list(got[-1].effort) == [0.75, -0.5]):
            pub.publish(interface_command([j1, j2], {j1: 0.75, j2: -0.5},
                                          stamp_ns=time.time_ns()))
            ex.spin_once(timeout_sec=0.01)
        assert got, "no /robot_joint_states message with the interface's QoS"
        assert list(got[-1].name) == [j1, j2] and list(got[-1].effort) == [0.75, -0.5]
    finally:
        ex.shutdown()
        peer.destroy_node()
        sim.destroy_node()
