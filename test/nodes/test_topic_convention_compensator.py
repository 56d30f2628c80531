"""friction_compensator on the command path of ros2_control's topic-based hardware interface
(``command_type: JointState``, issue 25 item 3): the interface's JointState commands in (every
joint of its tag by name, effort filled, NaN until a controller writes; test/topic_convention.py
re-states its messages), the same names out. In-process, callbacks called directly, outputs
recorded."""

import math
import time
from types import SimpleNamespace

import numpy as np
import pytest
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from fric_interfaces.conversions import joint_state_msg
from fric_nodes.friction_compensator import FrictionCompensatorNode
from topic_convention import interface_command

T0 = 1_700_000_000_000_000_000  # joint_states stamps [ns], 1 ms apart
DT_NS = 1_000_000
#: two joints with distinct levels (the compensation of each is recognisable)
FILE = ("joints:\n  a: {Cp: 1.0, Cn: 0.8, bp: 0.2, bn: 0.3}\n"
        "  b: {Cp: 0.5, Cn: 0.6, bp: 0.0, bn: 0.1}\n")
#: the interface's tag: a gripper the compensator does not know, then the arm's joints in an
#: order that is not the compensator's
TAG = ["gripper", "b", "a"]


class _Outputs:
    """Stands in for the output publisher: a copy of every message."""

    def __init__(self):
        self.sent = []

    def publish(self, msg):
        if isinstance(msg, Float64MultiArray):
            self.sent.append(list(msg.data))
            return
        st = msg.header.stamp
        self.sent.append(SimpleNamespace(
            stamp_ns=st.sec * 10**9 + st.nanosec, name=list(msg.name),
            position=list(msg.position), velocity=list(msg.velocity), effort=list(msg.effort)))

    def wait_for_all_acked(self, _d):
        return True


@pytest.fixture
def make(ros, tmp_path):
    nodes = []

    def _make(**params):
        path = tmp_path / "joint_friction.yaml"
        path.write_text(FILE)
        params = {"joint_friction": str(path), "joints": ["a", "b"], **params}
        if params.get("command_type") == "JointState":  # one topic has one type in a process
            params.setdefault("command_topic", "/interface/joint_commands")
        node = FrictionCompensatorNode(parameter_overrides=[
            Parameter(k, value=v) for k, v in params.items()])
        node._out = _Outputs()
        nodes.append(node)
        return node

    yield _make
    for n in nodes:
        n.destroy_node()


def _state(node, k, v=(0.3, -0.2)):
    """joint_states number k: a at v[0], b at v[1] rad/s from 0 (1 ms apart)."""
    node._on_joint_state(joint_state_msg(["a", "b"], [v[0] * k * 1e-3, v[1] * k * 1e-3],
                                         stamp_ns=T0 + k * DT_NS))


def _diag(node):
    return {kv.key: kv.value for kv in node.diagnostic_status().values}


def test_by_name_in_and_out_the_same_compensation_as_the_array_path(make):
    """Both joints sliding (a forward, b backward), the same commands: the JointState output
    carries, by name, exactly the array path's values; the gripper's entry passes unchanged;
    names, order and stamp are the input's; position and velocity stay empty (effort-only)."""
    array, named = make(), make(command_type="JointState")
    assert named._out is not array._out
    for k in range(300):
        cmd = {"a": 2.0, "b": -1.0 + k * 1e-3, "gripper": 7.0}
        _state(array, k)
        _state(named, k)
        array._on_command(Float64MultiArray(data=[cmd["a"], cmd["b"]]))
        named._on_joint_command(interface_command(TAG, cmd, stamp_ns=T0 + k * DT_NS))
        out, msg = array._out.sent[-1], named._out.sent[-1]
        assert msg.name == TAG
        assert msg.effort == [7.0, out[1], out[0]]
        assert msg.position == [] and msg.velocity == []
        assert msg.stamp_ns == T0 + k * DT_NS
    assert len(named._out.sent) == len(array._out.sent) == 300
    # sliding: command + Cp + bp v on a, command − Cn + bn v on b (the law, to the element)
    assert out[0] == pytest.approx(2.0 + 1.0 + 0.2 * 0.3, rel=1e-6)
    assert out[1] == pytest.approx(-1.0 + 0.299 - 0.6 + 0.1 * -0.2, rel=1e-6)


def test_nan_no_command_yet_is_passed_on_with_require_command(make):
    """require_command (the default): a joint the interface sends as NaN (no controller wrote
    it) stays NaN on the output — the receiver holds zero effort, as it would without the
    compensator — while the commanded joint is compensated; the NaN counts as no bad output."""
    node, array = make(command_type="JointState"), make()
    for k in range(100):
        _state(node, k)
        _state(array, k)
        node._on_joint_command(interface_command(TAG, {"b": 1.0}))  # a and the gripper: NaN
        array._on_command(Float64MultiArray(data=[0.0, 1.0]))
    msg = node._out.sent[-1]
    assert math.isnan(msg.effort[0]) and math.isnan(msg.effort[2])  # gripper, a
    assert msg.effort[1] == array._out.sent[-1][1]  # b: 1.0 + its compensation, exactly
    # every joint NaN (no controller at all yet): the output says the same, nothing invented
    node._on_joint_command(interface_command(TAG, {}))
    assert all(math.isnan(e) for e in node._out.sent[-1].effort)
    assert _diag(node)["non-finite outputs (replaced by 0)"] == "0"


def test_nan_gets_the_compensation_alone_when_hand_guiding(make):
    """require_command false (hand guiding): a NaN joint gets the compensation alone, the value
    the array path gives for a zero command."""
    node = make(command_type="JointState", require_command=False)
    array = make(require_command=False)
    for k in range(100):
        _state(node, k)
        _state(array, k)
        node._on_joint_command(interface_command(TAG, {"b": 1.0, "gripper": 0.0}))
        array._on_command(Float64MultiArray(data=[0.0, 1.0]))
    msg, out = node._out.sent[-1], array._out.sent[-1]
    assert msg.effort == [0.0, out[1], out[0]]
    assert out[0] == pytest.approx(1.0 + 0.2 * 0.3, rel=1e-6)  # a sliding: Cp + bp v alone


@pytest.mark.parametrize("kind, msg", [
    ("length_mismatch", interface_command(TAG, {"a": 1.0, "b": 1.0, "gripper": 0.0},
                                          {"gripper": ("position",)})),
    ("no_effort", interface_command(["a", "b"], {"a": 0.1, "b": 0.2},
                                    {"a": ("position",), "b": ("position",)})),
    ("duplicate_joint_name", interface_command(["a", "b", "a"], {"a": 1.0, "b": 1.0})),
    ("non_finite", interface_command(TAG, {"a": math.inf, "b": 1.0})),
    ("implausible", interface_command(TAG, {"a": 2e4, "b": 1.0})),  # > max_command 1e4
    ("no_joints", interface_command([], {})),
])
def test_bad_commands_rejected_counted_by_reason_never_forwarded(make, kind, msg):
    node = make(command_type="JointState")
    _state(node, 0)
    node._on_joint_command(interface_command(TAG, {"a": 1.0, "b": 1.0, "gripper": 0.0}))
    sent = len(node._out.sent)
    node._on_joint_command(msg)
    assert len(node._out.sent) == sent  # nothing published for it
    kv = _diag(node)
    assert kv[f"rejected commands {kind}"] == "1"
    assert sum(int(v) for k, v in kv.items()
               if k.startswith("rejected commands ") and not k.endswith(" last")) == 1
    _state(node, 1)  # the command before stays the compensator's command
    node._on_joint_command(interface_command(TAG, {"a": 1.0, "b": 1.0, "gripper": 0.0}))
    assert len(node._out.sent) == sent + 1


def test_a_gripper_only_message_passes_through_and_commands_nothing_here(make):
    """Names the compensator does not compensate are not its business: passed unchanged; its
    own joints keep their commands."""
    node = make(command_type="JointState")
    _state(node, 0)
    node._on_joint_command(interface_command(["gripper"], {"gripper": 0.3}))
    assert node._out.sent[-1].name == ["gripper"] and node._out.sent[-1].effort == [0.3]


def test_dead_command_stream_zero_once_on_every_joint_of_the_tag(make):
    """require_command: the interface's commands stop for watchdog_timeout: zero effort once,
    as a JointState of the last command's names (the gripper too), then nothing."""
    node = make(command_type="JointState", watchdog_timeout=0.002)
    _state(node, 0)
    node._on_joint_command(interface_command(TAG, {"a": 2.0, "b": 1.0, "gripper": 0.5}))
    n = len(node._out.sent)
    time.sleep(0.01)
    for k in range(1, 5):
        _state(node, k)
    after = node._out.sent[n:]
    assert len(after) == 1
    assert after[0].name == TAG and after[0].effort == [0.0, 0.0, 0.0]
    assert _diag(node)["watchdog trips (commands)"] == "1"


def test_output_topic_and_type_follow_command_type(make):
    node = make(command_type="JointState")
    # the node's own publishers (not the graph: an earlier test's node of the same name can
    # still be in it, and a lookup by node name then answers for that one)
    pubs = {p.topic_name: p.msg_type for p in node.publishers}
    assert pubs["/robot_joint_commands"] is JointState
    assert "/effort_controller/commands" not in pubs
    # the command subscription is made once the chain is connected (output matched, a
    # joint_states received): its type and topic are set now
    assert node._command_args[0] is JointState
    assert node._command_topic == "/interface/joint_commands"
    assert np.isfinite(node.compensator.K).all()
