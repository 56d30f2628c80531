"""fric_interfaces: conversions with input checks, QoS compatibility choices, parameter schemas."""

import math

import numpy as np
import pytest
import rclpy
from rclpy.exceptions import ParameterNotDeclaredException
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from fric_interfaces import names, qos
from fric_interfaces.conversions import (CommandReader, Float64ArrayWriter, InputError,
                                         JointStateReader, joint_state_msg, ns_to_stamp,
                                         stamp_to_ns, wrench_msg, wrench_to_arrays)
from fric_interfaces.parameters import ParamSpec, check, declare


def _js(names_, pos=None, vel=None, eff=None):
    return joint_state_msg(names_, pos, vel, eff, stamp_ns=5)


def test_joint_state_reader_matches_by_name_and_ignores_other_joints():
    r = JointStateReader(["b", "a"])
    r.read(_js(["a", "x", "b"], pos=[1.0, 9.0, 2.0], vel=[0.1, 9.0, 0.2]))
    np.testing.assert_array_equal(r.position, [2.0, 1.0])
    np.testing.assert_array_equal(r.velocity, [0.2, 0.1])
    r.read(_js(["b", "a"], pos=[3.0, 4.0], vel=[0.3, 0.4]))  # order change re-maps
    np.testing.assert_array_equal(r.position, [3.0, 4.0])


@pytest.mark.parametrize("msg, field", [
    (lambda: _js(["a"], pos=[1.0], vel=[1.0]), "name"),  # joint b missing
    (lambda: _js(["a", "a", "b"], pos=[1, 2, 3], vel=[1, 2, 3]), "name"),
    (lambda: _js(["a", "b"], pos=[1.0, 2.0]), "velocity"),  # empty velocity
    (lambda: _js(["a", "b"], pos=[1.0, float("nan")], vel=[0.0, 0.0]), "position"),
    (lambda: _js(["a", "b"], pos=[1.0, 2.0], vel=[0.0, float("inf")]), "velocity"),
])
def test_joint_state_reader_rejects_bad_messages_and_keeps_buffers(msg, field):
    r = JointStateReader(["a", "b"])
    r.read(_js(["a", "b"], pos=[7.0, 8.0], vel=[0.7, 0.8]))
    with pytest.raises(InputError) as err:
        r.read(msg())
    assert err.value.field == field
    np.testing.assert_array_equal(r.position, [7.0, 8.0])
    np.testing.assert_array_equal(r.velocity, [0.7, 0.8])


def test_joint_state_reader_length_mismatch():
    m = JointState()
    m.name = ["a", "b"]
    m.position = [1.0, 2.0]
    m.velocity = [1.0]
    with pytest.raises(InputError, match="^velocity: has 1 entries for 2 names"):
        JointStateReader(["a", "b"]).read(m)


def test_joint_state_reader_bad_configuration():
    with pytest.raises(ValueError, match="^joint_names"):
        JointStateReader([])
    with pytest.raises(ValueError, match="^joint_names"):
        JointStateReader(["a", "a"])
    with pytest.raises(ValueError, match="^fields"):
        JointStateReader(["a"], fields=("speed",))


def test_command_reader_and_writer_round_trip():
    w = Float64ArrayWriter()
    msg = w.fill(np.array([1.5, -2.5, 0.0]))
    r = CommandReader(3)
    np.testing.assert_array_equal(r.read(msg), [1.5, -2.5, 0.0])
    with pytest.raises(InputError, match="^data: has 2 entries, expected 3"):
        r.read(Float64MultiArray(data=[1.0, 2.0]))
    with pytest.raises(InputError, match="^data: non-finite entry at index 1"):
        r.read(Float64MultiArray(data=[1.0, math.nan, 2.0]))
    np.testing.assert_array_equal(r.values, [1.5, -2.5, 0.0])


def test_wrench_and_stamps():
    m = wrench_msg([1.0, 2.0, 3.0], [4.0, 5.0, 6.0], frame_id="load_cell", stamp_ns=1_500_000_001)
    f, t = wrench_to_arrays(m)
    np.testing.assert_array_equal(f, [1, 2, 3])
    np.testing.assert_array_equal(t, [4, 5, 6])
    assert stamp_to_ns(m.header.stamp) == 1_500_000_001
    assert stamp_to_ns(ns_to_stamp(123)) == 123
    m.wrench.force.y = math.nan
    with pytest.raises(InputError, match="^wrench.force.y"):
        wrench_to_arrays(m)


def test_names_are_relative_except_diagnostics():
    for topic in (names.JOINT_STATES, names.EFFORT_COMMANDS, names.POSITION_COMMANDS,
                  names.WRENCH):
        assert not topic.startswith("/")
    assert names.DIAGNOSTICS == "/diagnostics"
    assert names.MARKERS.startswith("~/")


def test_qos_choices():
    from rclpy.qos import ReliabilityPolicy
    assert qos.CONTROL_PUB.reliability == ReliabilityPolicy.RELIABLE  # matched by any reader
    assert qos.CONTROL_SUB.reliability == ReliabilityPolicy.BEST_EFFORT  # matches any writer
    assert qos.CONTROL_SUB.depth == 1


SPECS = [
    ParamSpec("rate", 1000.0, "servo rate", unit="Hz", min=1.0, max=10000.0, read_only=True),
    ParamSpec("max_effort", 10.0, "effort bound", unit="N", min=0.0),
    ParamSpec("mode", "impedance", "rendering mode", choices=("impedance", "admittance")),
    ParamSpec("joints", ["j1"], "joint names", list_of=str),
    ParamSpec("gains", [], "per-joint gains", list_of=float),
]


@pytest.fixture
def node():
    rclpy.init()
    n = rclpy.create_node("param_test")
    yield n
    n.destroy_node()
    rclpy.shutdown()


def test_declare_with_descriptors_and_ros_enforcement(node):
    values = declare(node, SPECS)
    assert values == {"rate": 1000.0, "max_effort": 10.0, "mode": "impedance",
                      "joints": ["j1"], "gains": []}
    d = node.describe_parameter("max_effort")
    assert d.floating_point_range[0].from_value == 0.0 and "[N]" in d.description
    # rclpy enforces ranges and read-only on later changes, with a reason
    r = node.set_parameters([Parameter("max_effort", value=-1.0)])[0]
    assert not r.successful and r.reason
    r = node.set_parameters([Parameter("rate", value=500.0)])[0]
    assert not r.successful and "read-only" in r.reason.lower()
    assert node.set_parameters([Parameter("max_effort", value=5.0)])[0].successful


def test_live_rejections_are_worded(node):
    """Issue 13 item 6: rclpy's own reasons were "Wrong parameter type, expected '3' got '4'"
    and "Invalid access to undeclared parameter(s): []"."""
    declare(node, SPECS)

    def reason(*params):
        r = node.set_parameters_atomically(list(params))
        assert not r.successful
        return r.reason

    assert reason(Parameter("max_effort", value="x")) == \
        "max_effort: expected a double, got a string ('x')"
    assert reason(Parameter("max_effort", value=4)) == \
        "max_effort: expected a double (write 4.0), got an integer (4)"
    assert reason(Parameter("max_effort", Parameter.Type.BOOL_ARRAY, [])) == \
        "max_effort: expected a double, got an empty list"
    assert reason(Parameter("joints", value=[1, 2])) == \
        "joints: expected a list of strings, got a list of integers ([1, 2])"
    assert reason(Parameter("max_effort", value=-1.0)) == \
        "max_effort: -1.0 is below the minimum 0"
    assert reason(Parameter("rate", value=500.0)).startswith("rate: read-only: it is set at")
    assert reason(Parameter("max_effort", Parameter.Type.NOT_SET)).startswith(
        "max_effort: cannot be unset")
    with pytest.raises(ParameterNotDeclaredException) as e:
        node.set_parameters_atomically([Parameter("max_efort", value=1.0),
                                        Parameter("nope", value=1.0)])
    assert str(e.value) == ("max_efort (did you mean max_effort?), nope: no such parameter on "
                            "/param_test (list them with: fric param list /param_test)")
    # "[]" carries no element type (ros2 param set sends a bool array): the declared list type
    r = node.set_parameters([Parameter("gains", Parameter.Type.BOOL_ARRAY, [])])[0]
    assert r.successful, r.reason
    p = node.get_parameter("gains")
    assert p.type_ == Parameter.Type.DOUBLE_ARRAY and list(p.value) == []
    assert node.set_parameters([Parameter("max_effort", value=5.0)])[0].successful


def test_declare_wrong_type_at_startup_is_worded():
    rclpy.init()
    try:
        n = rclpy.create_node("param_test3", parameter_overrides=[
            Parameter("max_effort", value=4)])
        with pytest.raises(ValueError) as e:
            declare(n, SPECS)
        assert str(e.value) == "max_effort: expected a double (write 4.0), got an integer (4)"
        n.destroy_node()
        n = rclpy.create_node("param_test4", parameter_overrides=[
            Parameter("rate", value=0.5)])
        with pytest.raises(ValueError) as e:
            declare(n, SPECS)
        assert str(e.value) == "rate: 0.5 is below the minimum 1"
        n.destroy_node()
    finally:
        rclpy.shutdown()


def test_declare_rejects_bad_startup_value():
    rclpy.init()
    try:
        n = rclpy.create_node("param_test2",
                              parameter_overrides=[Parameter("mode", value="telepathy")])
        with pytest.raises(ValueError, match="^mode: 'telepathy' is not one of"):
            declare(n, SPECS)
        n.destroy_node()
    finally:
        rclpy.shutdown()


def test_check():
    assert check(SPECS[1], 3.0) is None
    assert "below the minimum" in check(SPECS[1], -3.0)
    assert "not finite" in check(SPECS[1], math.inf)
    assert "not one of" in check(SPECS[2], "x")


@pytest.mark.parametrize("frame, words", [
    ("", "an empty frame id"),
    ("/world", "starts with '/'"),
    ("my world", "contains ' '"),
    ("base:link", "contains ':'"),
])
def test_marker_frame_that_rviz_refuses_is_named_at_start_up_and_live(frame, words):
    """A frame id tf2/RViz refuse (RViz drops markers with "" or "/world" without a word on the
    node's side) is refused by name, at start-up for every marker-publishing node's spec and on a
    live change of the renderer's (its only live one)."""
    from fric_interfaces import renderer_params, stage_params, transmission_params
    from fric_interfaces.parameters import frame_id_problem

    for mod in (renderer_params, stage_params, transmission_params):
        specs = {s.name: s for s in _specs_of(mod)}
        spec = specs["marker_frame"]
        assert check(spec, "world") is None and check(spec, "base_link/tool0") is None
        assert words in check(spec, frame), (mod.__name__, check(spec, frame))
    assert frame_id_problem("tool0") is None
    rclpy.init()
    try:
        n = rclpy.create_node("frame_test", parameter_overrides=[
            Parameter("marker_frame", value=frame)])
        with pytest.raises(ValueError) as e:
            declare(n, [s for s in _specs_of(renderer_params) if s.name == "marker_frame"])
        assert str(e.value).startswith("marker_frame: ") and words in str(e.value)
        n.destroy_node()
    finally:
        rclpy.shutdown()


@pytest.mark.parametrize("value, words", [
    ([0.0, 0.1], "has 2 elements, needs 3"),
    ([0.0, 0.1, 0.0, 0.0], "has 4 elements, needs 3"),
    ([0.0, 1e9, 0.0], "above the maximum"),
    ([0.0, math.nan, 0.0], "not finite"),
])
def test_list_parameter_of_fixed_length_is_refused_by_name(value, words):
    """``marker_offset`` (the stage's [x, y, z]): a wrong length or a bad element is named at
    start-up, from a YAML or -p override, where rclpy gives an ``array.array``."""
    from fric_interfaces import stage_params

    spec = {s.name: s for s in _specs_of(stage_params)}["marker_offset"]
    assert check(spec, [0.0, 0.1, 0.0]) is None
    rclpy.init()
    try:
        n = rclpy.create_node("offset_test", parameter_overrides=[
            Parameter("marker_offset", value=value)])
        with pytest.raises(ValueError) as e:
            declare(n, [spec])
        assert str(e.value).startswith("marker_offset: ") and words in str(e.value), str(e.value)
        n.destroy_node()
    finally:
        rclpy.shutdown()


def _specs_of(mod):
    """Every ParamSpec a params module defines (tuples of specs at module level)."""
    out = []
    for v in vars(mod).values():
        if isinstance(v, (tuple, list)) and v and all(isinstance(s, ParamSpec) for s in v):
            out += list(v)
    return out
