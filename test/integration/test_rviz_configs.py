"""RViz without RViz (issue 16, item 4): every ``config/*.rviz`` against the graph of the launch
file that opens it.

rviz2 cannot run here, so the test checks what RViz would depend on:

* static: each config parses, names only display classes whose topic and message type are known
  (``fric_interfaces.rviz_check.DISPLAY_TOPICS``), has a fixed frame, and is opened by a launch
  file with an ``rviz`` switch (default false);
* live: the launch file runs with ``rviz:=true`` and a fake ``rviz2`` on PATH that records its
  command line (so the config the launch file really opens is the one checked, at a path that
  exists); over loopback DDS in a free domain, every display's topic is in the graph with the
  type RViz subscribes with, a publisher offers QoS the display's requested QoS matches, the
  graph publishes no TF (so each marker's frame must be the fixed frame, which tf2 maps to itself
  without a transform: the fixed frame "exists" as the markers' frame), and every MarkerArray
  received carries only markers RViz draws (``rviz_check.marker_problems``: frame, finite pose,
  unit quaternion, lifetime, action and type codes, colour alpha, scales, points; no (ns, id)
  twice) whose lifetime outlasts the interval between two arrays (no flicker);
* offline: the marker classes of the stage and the renderer in every configuration (tool, hand
  location, planar patch), and the checker itself: each defect it claims to catch is caught.

Display classes, topics and types (what the fric configs use and the checker knows):

| display class (rviz_default_plugins/) | property | message type |
|---|---|---|
| MarkerArray | Topic | visualization_msgs/msg/MarkerArray |
| Marker | Topic | visualization_msgs/msg/Marker |
| RobotModel | Description Topic (Description Source: Topic) | std_msgs/msg/String |
| TF | /tf, /tf_static | tf2_msgs/msg/TFMessage |
| Wrench | Topic | geometry_msgs/msg/WrenchStamped |
| Effort | Topic | sensor_msgs/msg/JointState |
| Grid, Axes, rviz_common/Group | none (a group's displays are walked) | |

(JointState has no display of its own: RobotModel draws joints from TF.)
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from statistics import median

import pytest

from fric_interfaces import rviz_check
from fric_interfaces.rviz_check import (FIXED_FRAME, display_topics, fixed_frame, load_rviz,
                                        marker_array_problems, marker_problems, qos_problems,
                                        reference_frames, rviz_configs_opened)

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = sorted((ROOT / "config").glob("*.rviz"))
OPENED = rviz_configs_opened(ROOT / "launch")
#: arguments that keep a launch short and free of side effects (the test SIGINTs it once the
#: markers came; a launch must not end by itself before: duration 0.0 = until Ctrl-C)
SHORT_ARGS = {
    "haptic_render.launch.xml": {"record": "false", "duration": "0.0"},
    "arm_transmission.launch.xml": {"duration": "0.0"},
    # the display stage runs until Ctrl-C; a short identification (1 s warm-up, 2 periods) on
    # the probe stage, Ctrl-C during it being a clean stop (status 0)
    "identify_and_render.launch.xml": {"record": "false", "duration": "0.0", "warmup": "1.0",
                                       "cycles": "2.0"},
    # the params file's sinusoid: the tracker ends the launch ~14 s after the chain connects
    # (2 s start delay, 1.5 s approach, 10 s sine, 0.5 s hold), long after the markers came
    "arm_friction.launch.xml": {"record": "false"},
}

FAKE_RVIZ2 = '''#!{python}
import json, os, signal, sys, time
stop = []
signal.signal(signal.SIGINT, lambda *a: stop.append(1))
signal.signal(signal.SIGTERM, lambda *a: stop.append(1))
with open(os.environ["FAKE_RVIZ2_ARGV"] + ".tmp", "w") as f:
    json.dump(sys.argv[1:], f)
os.rename(os.environ["FAKE_RVIZ2_ARGV"] + ".tmp", os.environ["FAKE_RVIZ2_ARGV"])
while not stop:
    time.sleep(0.05)
'''


# -- static ---------------------------------------------------------------------------------------
def test_every_rviz_config_is_opened_by_a_launch_file_with_an_rviz_switch():
    assert CONFIGS, "no config/*.rviz"
    opened = {c for cs in OPENED.values() for c in cs}
    assert {c.name for c in CONFIGS} <= opened, f"opened by no launch file: {OPENED}"
    assert opened <= {c.name for c in CONFIGS}, f"a launch file opens a missing config: {OPENED}"
    for launch_file in OPENED:
        assert launch_file.endswith(".xml"), f"{launch_file}: read its rviz switch here"
        root = ET.parse(ROOT / "launch" / launch_file).getroot()
        args = {a.get("name"): a.get("default") for a in root.iter("arg")}
        assert args.get("rviz") == "false", f"{launch_file}: rviz arg {args.get('rviz')!r}"
        assert launch_file in SHORT_ARGS, f"{launch_file}: add its short-run args to SHORT_ARGS"


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_config_names_known_displays_and_a_fixed_frame(path):
    doc = load_rviz(path)
    topics = display_topics(doc)  # ValueError for an unknown class or a missing topic
    assert topics, f"{path.name}: no display subscribes to anything"
    frame = fixed_frame(doc)
    assert frame and not frame.startswith("/"), f"{path.name}: Fixed Frame {frame!r}"
    for where, ref in reference_frames(doc):
        assert ref in (FIXED_FRAME, frame), f"{path.name}: {where} frame {ref!r}"


def test_display_walk_recurses_into_groups_and_rejects_what_it_does_not_know(tmp_path):
    doc = {"Visualization Manager": {"Global Options": {"Fixed Frame": "world"}, "Displays": [
        {"Class": "rviz_common/Group", "Name": "Arm", "Enabled": True, "Displays": [
            {"Class": "rviz_default_plugins/MarkerArray", "Name": "Links", "Enabled": True,
             "Topic": {"Value": "/a/markers", "Reliability Policy": "Best Effort"}},
            {"Class": "rviz_common/Group", "Name": "Off", "Enabled": False, "Displays": [
                {"Class": "rviz_default_plugins/Marker", "Name": "X", "Topic": "/x"}]}]},
        {"Class": "rviz_default_plugins/TF", "Name": "TF", "Enabled": True},
        {"Class": "rviz_default_plugins/RobotModel", "Name": "Robot", "Enabled": True,
         "Description Source": "Topic",
         "Description Topic": {"Value": "/robot_description", "Durability Policy":
                               "Transient Local"}}]}}
    got = [(d.path, d.topic, d.msg_type) for d in display_topics(doc)]
    assert got == [("Arm/Links", "/a/markers", "visualization_msgs/msg/MarkerArray"),
                   ("TF", "/tf", "tf2_msgs/msg/TFMessage"),
                   ("TF", "/tf_static", "tf2_msgs/msg/TFMessage"),
                   ("Robot", "/robot_description", "std_msgs/msg/String")]
    assert len(display_topics(doc, enabled_only=False)) == 5
    robot = display_topics(doc)[-1]
    assert qos_problems(robot, [("rsp", "RELIABLE", "VOLATILE")])  # latched topic not latched
    assert not qos_problems(robot, [("rsp", "RELIABLE", "TRANSIENT_LOCAL")])
    links = display_topics(doc)[0]
    assert not qos_problems(links, [("n", "BEST_EFFORT", "VOLATILE")])
    assert qos_problems(links, [])  # nobody publishes
    doc["Visualization Manager"]["Displays"].append(
        {"Class": "rviz_default_plugins/Unknown", "Name": "U", "Topic": {"Value": "/u"}})
    with pytest.raises(ValueError, match="'U'.*not known"):
        display_topics(doc)
    doc["Visualization Manager"]["Displays"][-1] = {
        "Class": "rviz_default_plugins/Marker", "Name": "R", "Topic": {"Value": "rel"}}
    with pytest.raises(ValueError, match="relative"):
        display_topics(doc)
    bad = tmp_path / "bad.rviz"
    bad.write_text("Panels: []\n")
    with pytest.raises(ValueError, match="bad.rviz.*Visualization Manager"):
        load_rviz(bad)


# -- the marker checker and the marker classes, offline ----------------------------------------
def test_marker_codes_are_those_of_visualization_msgs():
    from visualization_msgs.msg import Marker

    for name, code in {**rviz_check.MARKER_TYPES, **rviz_check.MARKER_ACTIONS}.items():
        assert getattr(Marker, name) == code, name


def _good_marker():
    from geometry_msgs.msg import Point
    from visualization_msgs.msg import Marker

    m = Marker(ns="t", id=0, type=Marker.ARROW, action=Marker.ADD)
    m.header.frame_id = "world"
    m.pose.orientation.w = 1.0
    m.points = [Point(), Point(x=0.1)]
    m.scale.x, m.scale.y = 0.01, 0.02
    m.color.a = 1.0
    m.lifetime.nanosec = 500_000_000
    return m


def _defect(field):
    from geometry_msgs.msg import Point
    from visualization_msgs.msg import Marker

    m = _good_marker()
    if field == "frame_id":
        m.header.frame_id = ""
    elif field == "unknown frame":
        m.header.frame_id = "base_link"
    elif field == "leading slash":
        m.header.frame_id = "/world"
    elif field == "pose":
        m.pose.position.x = float("nan")
    elif field == "orientation":
        m.pose.orientation.w = 0.0
    elif field == "scale":
        m.scale.x = 0.0
    elif field == "scale nan":
        m.scale.y = float("inf")
    elif field == "color":
        m.color.a = 0.0
    elif field == "points":
        m.points = [Point()]
    elif field == "point nan":
        m.points[1].y = float("nan")
    elif field == "lifetime":
        m.lifetime.sec = -1
    elif field == "action":
        m.action = 7
    elif field == "type":
        m.type = 42
    elif field == "text":
        m.type, m.points, m.scale.z = Marker.TEXT_VIEW_FACING, [], 0.02
    elif field == "line_list":
        m.type, m.points = Marker.LINE_LIST, [Point(), Point(), Point()]
    return m


@pytest.mark.parametrize("field", ["frame_id", "unknown frame", "leading slash", "pose",
                                   "orientation", "scale", "scale nan", "color", "points",
                                   "point nan", "lifetime", "action", "type", "text",
                                   "line_list"])
def test_marker_checker_catches_each_defect(field):
    assert marker_problems(_good_marker(), {"world"}) == []
    problems = marker_problems(_defect(field), {"world"})
    assert len(problems) == 1, problems
    assert problems[0].startswith("marker t/0"), problems


def test_marker_checker_catches_a_repeated_id():
    a, b = _good_marker(), _good_marker()
    assert marker_array_problems([a, b]) == ["marker t/0: (ns, id) twice in one MarkerArray"]
    b.id = 1
    assert marker_array_problems([a, b], {"world"}) == []


class _Reading:
    def __init__(self, x, v, force, hand, tool):
        self.position, self.velocity, self.force = x, v, force
        self.hand_force, self.tool_position = hand, tool


@pytest.mark.parametrize("hand,tool", [("tool", True), ("carriage", True), (None, False),
                                       ("carriage", False)])
def test_stage_markers_are_valid_in_every_configuration(hand, tool):
    from builtin_interfaces.msg import Time

    from fric_nodes.stage_markers import StageMarkers

    mk = StageMarkers(-0.016, 0.016, hand, tool)
    for reading in (_Reading(0.0, 0.0, 0.0, 0.0, 0.0), _Reading(0.012, -0.3, 4.1, 5.3, 0.013)):
        mk.update(Time(sec=3), "world", "stage_joint", reading)
        assert marker_array_problems(mk.array.markers, {"world"}) == []


@pytest.mark.parametrize("hand,tool", [("tool", True), (None, False)])
def test_stage_markers_with_an_offset_are_the_same_markers_moved(hand, tool):
    """``marker_offset`` (two stages side by side in one view, identify_and_render): every
    marker's pose moves by the offset, its shape (scale, points relative to the pose) stays."""
    from builtin_interfaces.msg import Time

    from fric_nodes.stage_markers import StageMarkers

    off = (0.25, 0.1, -0.02)
    a = StageMarkers(-0.016, 0.016, hand, tool)
    b = StageMarkers(-0.016, 0.016, hand, tool, offset=off)
    reading = _Reading(0.012, -0.3, 4.1, 5.3, 0.013)
    for mk in (a, b):
        mk.update(Time(sec=3), "world", "stage_joint", reading)
    assert marker_array_problems(b.array.markers, {"world"}) == []
    assert len(a.array.markers) == len(b.array.markers)
    for ma, mb in zip(a.array.markers, b.array.markers):
        pa, pb = ma.pose.position, mb.pose.position
        assert (pb.x - pa.x, pb.y - pa.y, pb.z - pa.z) == pytest.approx(off, abs=1e-15), ma.ns
        assert [(p.x, p.y, p.z) for p in ma.points] == [(p.x, p.y, p.z) for p in mb.points]
        assert (ma.scale.x, ma.scale.y, ma.scale.z) == (mb.scale.x, mb.scale.y, mb.scale.z)


@pytest.mark.parametrize("planar", [False, True])
def test_renderer_markers_are_valid_stuck_and_slipping(planar):
    from builtin_interfaces.msg import Time

    from fric_nodes.renderer_markers import RendererMarkers

    joints = ["x", "y", "yaw", "gripper"] if planar else ["stage_joint"]
    mk = RendererMarkers(joints, planar)
    n = len(joints)
    for stuck, force in ((True, 0.0), (False, -3.5)):
        mk.update(Time(sec=1), "world", 0.01, [0.01] * n, [force] * n, [stuck] * n)
        if planar:
            mk.update_planar(Time(sec=1), "world", 0.01, 0.02, -0.01, [force, 1.0, 0.01],
                             stuck, 0.04)
        assert marker_array_problems(mk.array.markers, {"world"}) == []


# -- live: the launched graph -------------------------------------------------------------------
CASES = [(lf, c) for lf, cs in sorted(OPENED.items()) for c in cs]
STARTUP_TIMEOUT = 20.0  # s: until the fake rviz2 runs and every display topic is in the graph
ARRAYS = 4  # MarkerArrays per topic


def _stop(proc) -> int | None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGINT)  # fric launch stops its nodes
    try:
        return proc.wait(timeout=25)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        return None


class _Viewer:
    """What RViz would see: the graph's topics and the marker arrays of the displays (a private
    rclpy context in the launch's domain)."""

    def __init__(self, domain: int):
        import rclpy
        from rclpy.context import Context

        self.ctx = Context()
        rclpy.init(context=self.ctx, domain_id=domain)
        self.node = rclpy.create_node("rviz_config_check", context=self.ctx)
        from rclpy.executors import SingleThreadedExecutor

        self.ex = SingleThreadedExecutor(context=self.ctx)
        self.ex.add_node(self.node)
        self.arrays: dict[str, list] = {}

    def topics(self) -> dict[str, list[str]]:
        return dict(self.node.get_topic_names_and_types())

    def published_types(self, topic: str) -> set[str]:
        """The types the topic's publishers publish (the viewer itself only subscribes)."""
        return {i.topic_type for i in self.node.get_publishers_info_by_topic(topic)}

    def publishers(self, topic: str) -> list[tuple[str, str, str]]:
        return [(i.node_name, i.qos_profile.reliability.name, i.qos_profile.durability.name)
                for i in self.node.get_publishers_info_by_topic(topic)]

    def subscribe(self, display) -> None:
        from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
        from visualization_msgs.msg import Marker, MarkerArray

        q = display.qos
        profile = QoSProfile(
            history=HistoryPolicy.KEEP_LAST, depth=int(q.get("Depth", 10)),
            reliability=getattr(ReliabilityPolicy, str(q.get("Reliability Policy", "Reliable"))
                                .replace(" ", "_").upper()),
            durability=getattr(DurabilityPolicy, str(q.get("Durability Policy", "Volatile"))
                               .replace(" ", "_").upper()))
        arrays = self.arrays.setdefault(display.topic, [])
        if display.msg_type.endswith("/MarkerArray"):
            self.node.create_subscription(MarkerArray, display.topic, lambda m: arrays.append(
                (time.monotonic(), list(m.markers))), profile)
        else:
            self.node.create_subscription(Marker, display.topic, lambda m: arrays.append(
                (time.monotonic(), [m])), profile)

    def spin_until(self, done, timeout: float) -> bool:
        end = time.monotonic() + timeout
        while not done() and time.monotonic() < end:
            self.ex.spin_once(timeout_sec=0.05)
        return done()

    def close(self) -> None:
        import rclpy

        self.ex.remove_node(self.node)
        self.node.destroy_node()
        rclpy.shutdown(context=self.ctx)


def _stamp(marker) -> float:
    return marker.header.stamp.sec + 1e-9 * marker.header.stamp.nanosec


@pytest.mark.parametrize("launch_file,config", CASES)
def test_launched_graph_publishes_what_the_config_displays(launch_file, config, tmp_path):
    from fric_nodes.tools import pipeline

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "rviz2"
    fake.write_text(FAKE_RVIZ2.format(python=sys.executable))
    fake.chmod(0o755)
    argv_file = tmp_path / "rviz2_argv.json"
    domain = pipeline.free_domain_id(exclude={int(os.environ.get("ROS_DOMAIN_ID", "0"))})
    env = pipeline.loopback_env(domain)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
    env["FAKE_RVIZ2_ARGV"] = str(argv_file)
    doc = load_rviz(ROOT / "config" / config)
    frame = fixed_frame(doc)
    displays = display_topics(doc)
    log = tmp_path / "launch.log"
    cmd = pipeline.launch_command({**SHORT_ARGS[launch_file], "rviz": "true"}, launch_file)
    with open(log, "w") as out:
        proc = subprocess.Popen(cmd, env=env, cwd=tmp_path, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
    viewer = None
    try:
        def tail():
            return log.read_text()[-3000:]

        end = time.monotonic() + STARTUP_TIMEOUT
        while not argv_file.exists() and proc.poll() is None and time.monotonic() < end:
            time.sleep(0.05)
        assert argv_file.exists(), f"rviz2 not started by {launch_file} rviz:=true\n{tail()}"
        argv = json.loads(argv_file.read_text())
        assert "-d" in argv, argv
        opened = Path(argv[argv.index("-d") + 1])
        assert opened.is_file() and opened.resolve() == (ROOT / "config" / config).resolve(), \
            argv

        viewer = _Viewer(domain)
        for d in displays:
            viewer.subscribe(d) if d.msg_type.startswith("visualization_msgs/") else None

        def present():  # a publisher of the type RViz subscribes with, on every topic
            return all(d.msg_type in viewer.published_types(d.topic) for d in displays)

        if not viewer.spin_until(present, max(1.0, end - time.monotonic())):
            missing = [f"{d.path}: {d.topic} [{d.msg_type}] (published: "
                       f"{sorted(viewer.published_types(d.topic))})"
                       for d in displays if d.msg_type not in viewer.published_types(d.topic)]
            pytest.fail(f"{config} with {launch_file}: not published: {missing}\n"
                        f"topics: {sorted(viewer.topics().items())}\n{tail()}")
        topics = viewer.topics()
        # no TF in this graph: every marker must be in the fixed frame (tf2's identity)
        assert not {"/tf", "/tf_static"} & set(topics), \
            "the graph publishes TF: extend this test to read the frame tree"
        for d in displays:
            assert qos_problems(d, viewer.publishers(d.topic)) == [], d

        marker_displays = [d for d in displays if d.topic in viewer.arrays]
        assert viewer.spin_until(lambda: all(len(viewer.arrays[d.topic]) >= ARRAYS
                                             for d in marker_displays), 15.0), \
            ({d.topic: len(viewer.arrays[d.topic]) for d in marker_displays}, tail())
        frames_used = set()
        for d in marker_displays:
            arrays = viewer.arrays[d.topic]
            # the publication period, from the arrays' stamps (the node's clock when it
            # published): the test's executor only spins now and then, so arrival times bunch
            # (a backlog of arrays handled in one spin is 0 s apart), while RViz spins
            # continuously and sees the arrays as far apart as they were published
            stamps = [_stamp(markers[0]) for _, markers in arrays if markers]
            gap = median(b - a for a, b in zip(stamps, stamps[1:]))
            for _, markers in arrays:
                assert markers, f"{d.topic}: an empty MarkerArray"
                problems = marker_array_problems(markers, {frame})
                assert problems == [], f"{config}: {d.path} ({d.topic}): {problems}"
                frames_used |= {m.header.frame_id for m in markers}
                for m in markers:
                    life = m.lifetime.sec + 1e-9 * m.lifetime.nanosec
                    assert life == 0.0 or life > gap, \
                        f"{d.topic}: {m.ns}/{m.id} lives {life} s, arrays {gap:.3f} s apart"
            print(f"{config} {d.path}: {d.topic} {len(arrays)} arrays, median gap {gap:.3f} s, "
                  f"{len(arrays[-1][1])} markers")
        assert frame in frames_used, (frame, frames_used)
    finally:
        if viewer is not None:
            viewer.close()
        rc = _stop(proc)
    assert rc == 0, f"fric launch exit status {rc}\n{log.read_text()[-3000:]}"


# -- marker lifetime against the publication rate ------------------------------------------------
def test_marker_lifetime_outlives_the_publication_period():
    assert rviz_check.marker_lifetime(1.0 / 20.0) == (0, 500_000_000)  # the default rates
    assert rviz_check.marker_lifetime(1.0 / 30.0) == (0, 500_000_000)
    assert rviz_check.marker_lifetime(10.0) == (30, 0)  # marker_rate 0.1 Hz, the slowest
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="marker period"):
            rviz_check.marker_lifetime(bad)


@pytest.mark.parametrize("node", ["haptic_stage", "friction_renderer"])
def test_nodes_markers_live_three_periods_at_a_low_marker_rate(ros, node):
    """Regression: the lifetime was a fixed 0.5 s while ``marker_rate`` may be as low as
    0.1 Hz: at 0.5 Hz the markers showed 0.5 s in every 2 s."""
    from rclpy.parameter import Parameter

    if node == "haptic_stage":
        from fric_nodes.haptic_stage import HapticStage as cls
    else:
        from fric_nodes.friction_renderer import FrictionRenderer as cls
    n = cls(parameter_overrides=[Parameter("marker_rate", value=0.5)])
    try:
        lives = {(m.lifetime.sec, m.lifetime.nanosec) for m in n._markers.array.markers}
    finally:
        n.destroy_node()
    assert lives == {(6, 0)}, lives  # 3 periods of 2 s
