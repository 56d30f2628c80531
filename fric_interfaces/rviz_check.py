"""RViz without RViz: what an ``.rviz`` configuration asks of a running graph, and whether a
``visualization_msgs/Marker`` is one RViz 2 draws (rclpy-free; used by
``test/integration/test_rviz_configs.py``).

A configuration is YAML. Its ``Visualization Manager: Displays`` list (``rviz_common/Group``
displays nest further ``Displays``) names, per display class, the topic it subscribes to and so
the message type the graph must publish there (:data:`DISPLAY_TOPICS`); ``Global Options: Fixed
Frame`` is the frame everything is drawn in. RViz 2 transforms a marker from its
``header.frame_id`` to the fixed frame with tf2, which returns the identity for equal frames
without looking at any transform: a graph that publishes no TF (fric's) must put every marker in
the fixed frame itself. (RViz's Global Status then warns "No tf data. Actual error: Fixed Frame
[world] does not exist" — ``VisualizationManager::updateFrames`` — and draws the markers.)

The marker rules follow RViz 2 (``rviz_default_plugins`` ``marker_common.cpp``,
``markers/*.cpp``): a marker with a NaN or infinite pose, scale, colour or point is dropped with
an error; two markers with the same (ns, id) in one MarkerArray is an error; an unknown action
is an error; a zero scale, a fully transparent colour or an unnormalised quaternion draws nothing
or a warning.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any, Iterable, Iterator, NamedTuple

import yaml

__all__ = ["DISPLAY_TOPICS", "NO_TOPIC", "MARKER_TYPES", "MARKER_ACTIONS", "FIXED_FRAME",
           "DisplayTopic", "load_rviz", "fixed_frame", "display_topics", "reference_frames",
           "rviz_configs_opened", "qos_problems", "marker_problems", "marker_array_problems",
           "MIN_MARKER_LIFETIME", "PERIODS_MARKERS_OUTLIVE", "marker_lifetime"]

#: display class -> (property holding the topic, message type RViz subscribes with). TF reads
#: the fixed topics /tf and /tf_static; RobotModel reads its "Description Topic" only with
#: "Description Source: Topic" (robot_state_publisher's /robot_description, transient local).
DISPLAY_TOPICS: dict[str, tuple[str, str]] = {
    "rviz_default_plugins/MarkerArray": ("Topic", "visualization_msgs/msg/MarkerArray"),
    "rviz_default_plugins/Marker": ("Topic", "visualization_msgs/msg/Marker"),
    "rviz_default_plugins/RobotModel": ("Description Topic", "std_msgs/msg/String"),
    "rviz_default_plugins/TF": ("", "tf2_msgs/msg/TFMessage"),
    "rviz_default_plugins/Wrench": ("Topic", "geometry_msgs/msg/WrenchStamped"),
    "rviz_default_plugins/TwistStamped": ("Topic", "geometry_msgs/msg/TwistStamped"),
    "rviz_default_plugins/AccelStamped": ("Topic", "geometry_msgs/msg/AccelStamped"),
    "rviz_default_plugins/Effort": ("Topic", "sensor_msgs/msg/JointState"),
    "rviz_default_plugins/Pose": ("Topic", "geometry_msgs/msg/PoseStamped"),
    "rviz_default_plugins/PoseArray": ("Topic", "geometry_msgs/msg/PoseArray"),
    "rviz_default_plugins/PointStamped": ("Topic", "geometry_msgs/msg/PointStamped"),
    "rviz_default_plugins/Polygon": ("Topic", "geometry_msgs/msg/PolygonStamped"),
    "rviz_default_plugins/Path": ("Topic", "nav_msgs/msg/Path"),
    "rviz_default_plugins/Odometry": ("Topic", "nav_msgs/msg/Odometry"),
    "rviz_default_plugins/Map": ("Topic", "nav_msgs/msg/OccupancyGrid"),
    "rviz_default_plugins/Imu": ("Topic", "sensor_msgs/msg/Imu"),
    "rviz_default_plugins/Range": ("Topic", "sensor_msgs/msg/Range"),
    "rviz_default_plugins/LaserScan": ("Topic", "sensor_msgs/msg/LaserScan"),
    "rviz_default_plugins/PointCloud2": ("Topic", "sensor_msgs/msg/PointCloud2"),
    "rviz_default_plugins/Image": ("Topic", "sensor_msgs/msg/Image"),
    "rviz_default_plugins/Camera": ("Topic", "sensor_msgs/msg/Image"),
    "rviz_default_plugins/Temperature": ("Topic", "sensor_msgs/msg/Temperature"),
    "rviz_default_plugins/FluidPressure": ("Topic", "sensor_msgs/msg/FluidPressure"),
    "rviz_default_plugins/Illuminance": ("Topic", "sensor_msgs/msg/Illuminance"),
    "rviz_default_plugins/RelativeHumidity": ("Topic", "sensor_msgs/msg/RelativeHumidity"),
}
#: display classes that subscribe to nothing (Group: its children are walked)
NO_TOPIC = frozenset({"rviz_default_plugins/Grid", "rviz_default_plugins/Axes",
                      "rviz_common/Group"})
#: the fixed frame placeholder a display's "Reference Frame" / a view's "Target Frame" may hold
FIXED_FRAME = "<Fixed Frame>"

#: visualization_msgs/Marker type codes RViz 2 draws (ARROW_STRIP since Jazzy)
MARKER_TYPES = {"ARROW": 0, "CUBE": 1, "SPHERE": 2, "CYLINDER": 3, "LINE_STRIP": 4,
                "LINE_LIST": 5, "CUBE_LIST": 6, "SPHERE_LIST": 7, "POINTS": 8,
                "TEXT_VIEW_FACING": 9, "MESH_RESOURCE": 10, "TRIANGLE_LIST": 11,
                "ARROW_STRIP": 12}
#: visualization_msgs/Marker actions (MODIFY is ADD)
MARKER_ACTIONS = {"ADD": 0, "DELETE": 2, "DELETEALL": 3}
_CODE = {v: k for k, v in MARKER_TYPES.items()}
# |q|^2 within this of 1: rviz_common::validateQuaternions (validate_quaternions.hpp)
_QUAT_TOL = 10e-3


#: a periodically republished marker lives this many publication periods (two skipped
#: housekeeping ticks of a loaded node must not blank it) and at least MIN_MARKER_LIFETIME
#: seconds; RViz drops it that long after its node stops publishing
PERIODS_MARKERS_OUTLIVE = 3
MIN_MARKER_LIFETIME = 0.5


def marker_lifetime(period: float) -> tuple[int, int]:
    """The ``lifetime`` (sec, nanosec) of a marker republished every ``period`` seconds:
    ``max(MIN_MARKER_LIFETIME, PERIODS_MARKERS_OUTLIVE * period)``; 0.5 s for the default rates
    (20-30 Hz), 30 s at the slowest allowed (0.1 Hz), where a fixed 0.5 s would show the
    markers half a second in every ten.

    Parameters
    ----------
    period
        The publication period [s], > 0.

    Returns
    -------
    tuple of int
        (sec, nanosec) for ``builtin_interfaces/Duration``.
    """
    if not (math.isfinite(period) and period > 0.0):
        raise ValueError(f"marker period {period!r}: must be a finite number > 0 s")
    ns = round(max(MIN_MARKER_LIFETIME, PERIODS_MARKERS_OUTLIVE * period) * 1e9)
    return ns // 1_000_000_000, ns % 1_000_000_000


class DisplayTopic(NamedTuple):
    """A display of a configuration that subscribes to a topic."""

    path: str  #: the display's place in the tree, e.g. ``"Haptic stage"`` or ``"Arm/Links"``
    display_class: str
    topic: str  #: absolute topic name
    msg_type: str  #: what RViz subscribes with, e.g. ``visualization_msgs/msg/MarkerArray``
    qos: dict[str, Any]  #: the display's "Topic" QoS fields (Reliability Policy, ...), if any


def load_rviz(path: str | Path) -> dict[str, Any]:
    """The configuration at ``path``; ``ValueError`` naming the file if it is not an RViz one.

    Parameters
    ----------
    path
        An ``.rviz`` file.

    Returns
    -------
    dict
        The parsed YAML (top-level keys ``Panels``, ``Visualization Manager``, ...).
    """
    try:
        doc = yaml.safe_load(Path(path).read_text())
    except yaml.YAMLError as e:
        raise ValueError(f"{path}: not YAML: {e}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("Visualization Manager"), dict):
        raise ValueError(f"{path}: no 'Visualization Manager' mapping: not an RViz config")
    displays = doc["Visualization Manager"].get("Displays")
    if not isinstance(displays, list):
        raise ValueError(f"{path}: 'Visualization Manager: Displays' is not a list")
    return doc


def fixed_frame(doc: dict[str, Any]) -> str:
    """``Global Options: Fixed Frame`` of a configuration (``""`` if missing).

    Parameters
    ----------
    doc
        A configuration from :func:`load_rviz`; only its ``Global Options`` are read.

    Returns
    -------
    str
        The fixed frame.
    """
    opts = doc["Visualization Manager"].get("Global Options") or {}
    return str(opts.get("Fixed Frame") or "")


def _walk(displays: list, prefix: str) -> Iterator[tuple[str, dict]]:
    for d in displays or ():
        if not isinstance(d, dict):
            raise ValueError(f"{prefix or 'Displays'}: a display that is not a mapping: {d!r}")
        path = f"{prefix}/{d.get('Name', '?')}" if prefix else str(d.get("Name", "?"))
        yield path, d
        if d.get("Class") == "rviz_common/Group":
            yield from _walk(d.get("Displays") or [], path)


def display_topics(doc: dict[str, Any], *, enabled_only: bool = True) -> list[DisplayTopic]:
    """Every display (groups walked recursively) that subscribes to a topic, with the type.

    Parameters
    ----------
    doc
        A configuration from :func:`load_rviz`.
    enabled_only
        Skip displays (and groups) with ``Enabled: false``.

    Returns
    -------
    list of DisplayTopic
        In the order of the file. ``ValueError`` naming the display for a class not in
        :data:`DISPLAY_TOPICS` or :data:`NO_TOPIC`, or a topic display without a topic.
    """
    out = []
    disabled: list[str] = []
    for path, d in _walk(doc["Visualization Manager"]["Displays"], ""):
        if enabled_only and (d.get("Enabled") is False
                             or any(path.startswith(p + "/") for p in disabled)):
            disabled.append(path)
            continue
        cls = d.get("Class")
        if cls in NO_TOPIC:
            continue
        if cls not in DISPLAY_TOPICS:
            raise ValueError(f"display {path!r}: class {cls!r} is not known to rviz_check "
                             "(add its topic property and message type to DISPLAY_TOPICS)")
        key, msg_type = DISPLAY_TOPICS[cls]
        if cls == "rviz_default_plugins/TF":
            out += [DisplayTopic(path, cls, t, msg_type, {}) for t in ("/tf", "/tf_static")]
            continue
        if cls == "rviz_default_plugins/RobotModel" and d.get("Description Source") == "File":
            continue
        prop = d.get(key)
        qos: dict[str, Any] = {}
        if isinstance(prop, dict):  # Topic: {Value: /x, Depth: 10, Reliability Policy: ...}
            qos = {k: v for k, v in prop.items() if k != "Value"}
            prop = prop.get("Value")
        if not isinstance(prop, str) or not prop.strip():
            raise ValueError(f"display {path!r} ({cls}): no {key!r}")
        topic = prop.strip()
        if not topic.startswith("/"):
            raise ValueError(f"display {path!r}: topic {topic!r} is relative (RViz resolves it "
                             "in its own namespace): write it absolute")
        out.append(DisplayTopic(path, cls, topic, msg_type, qos))
    return out


def reference_frames(doc: dict[str, Any]) -> list[tuple[str, str]]:
    """(where, frame) of every frame a configuration names besides the fixed frame: displays'
    ``Reference Frame`` and the views' ``Target Frame`` (:data:`FIXED_FRAME` included as is).

    Parameters
    ----------
    doc
        A configuration from :func:`load_rviz`; its displays (groups walked) and views are read.

    Returns
    -------
    list of (str, str)
        E.g. ``[("Grid", "<Fixed Frame>"), ("Views/Current View", "<Fixed Frame>")]``.
    """
    vm = doc["Visualization Manager"]
    out = [(p, str(d["Reference Frame"])) for p, d in _walk(vm["Displays"], "")
           if d.get("Reference Frame") not in (None, "")]
    views = vm.get("Views") or {}
    for key in ("Current",):
        v = views.get(key) or {}
        if v.get("Target Frame") not in (None, ""):
            out.append((f"Views/{v.get('Name', key)}", str(v["Target Frame"])))
    return out


_RVIZ_REF = re.compile(r"config/([A-Za-z0-9_.-]+\.rviz)\b")


def rviz_configs_opened(launch_dir: str | Path) -> dict[str, list[str]]:
    """Which ``config/*.rviz`` each launch file in ``launch_dir`` opens (by the text
    ``config/NAME.rviz`` in it, e.g. in ``args="-d $(find-pkg-share fric)/config/NAME.rviz"``).

    Parameters
    ----------
    launch_dir
        The package's ``launch/`` directory.

    Returns
    -------
    dict
        Launch file name -> sorted config file names; files that open none are left out.
    """
    out = {}
    for f in sorted(Path(launch_dir).glob("*.launch.*")):
        names = sorted(set(_RVIZ_REF.findall(f.read_text())))
        if names:
            out[f.name] = names
    return out


def qos_problems(display: DisplayTopic, publishers: Iterable[tuple[str, str, str]]) -> list[str]:
    """Why a display's subscription would not receive from the topic's publishers: a RELIABLE
    reader matches only RELIABLE writers, a TRANSIENT_LOCAL reader only TRANSIENT_LOCAL writers
    (DDS request-vs-offered rules); none is a problem only if no publisher matches at all.

    Parameters
    ----------
    display
        From :func:`display_topics` (its ``qos`` as RViz writes it: ``Reliability Policy:
        Reliable | Best Effort``, ``Durability Policy: Volatile | Transient Local``).
    publishers
        (node name, reliability, durability) per publisher, the policies as rclpy names them
        (``RELIABLE``, ``BEST_EFFORT``, ``VOLATILE``, ``TRANSIENT_LOCAL``).

    Returns
    -------
    list of str
        Empty if at least one publisher matches.
    """
    want_rel = str(display.qos.get("Reliability Policy", "Reliable")).replace(" ", "_").upper()
    want_dur = str(display.qos.get("Durability Policy", "Volatile")).replace(" ", "_").upper()
    pubs = list(publishers)
    if not pubs:
        return [f"{display.topic}: no publisher"]
    bad = []
    for node, rel, dur in pubs:
        why = []
        if want_rel == "RELIABLE" and rel != "RELIABLE":
            why.append(f"offers {rel}, the display requests RELIABLE")
        if want_dur == "TRANSIENT_LOCAL" and dur != "TRANSIENT_LOCAL":
            why.append(f"offers {dur}, the display requests TRANSIENT_LOCAL")
        if not why:
            return []
        bad.append(f"{display.topic}: publisher {node} {'; '.join(why)}")
    return bad


def _finite(*xs: float) -> bool:
    return all(math.isfinite(float(x)) for x in xs)


def marker_problems(m: Any, frames: Iterable[str] | None = None) -> list[str]:
    """What RViz 2 would reject, warn about or not draw in one ``visualization_msgs/Marker``.

    Checks: a known action; for ADD, a known type, a ``header.frame_id`` that is non-empty,
    without a leading ``/`` (tf2 refuses it) and in ``frames``; finite pose, scale, colours and
    points; a quaternion of unit norm (``| |q|^2 - 1 | < 0.01``, RViz's tolerance); a lifetime
    with ``sec >= 0`` and ``0 <= nanosec < 1e9``; colours in [0, 1] with alpha > 0 (per-point
    colours: none or one per point); the scale components the type uses positive (ARROW from
    points: shaft and head diameter x, y > 0, head length z >= 0; ARROW from the pose, shapes,
    lists, meshes, triangles: x, y, z > 0; LINE_STRIP/LINE_LIST: width x > 0; POINTS: x, y > 0;
    TEXT_VIEW_FACING: height z > 0 and a text); the point count the type needs (ARROW 0 or 2,
    LINE_STRIP >= 2, LINE_LIST even and >= 2, lists >= 1, TRIANGLE_LIST a multiple of 3).

    Parameters
    ----------
    m
        A Marker (or anything with its fields).
    frames
        The frames RViz can transform to the fixed frame; None: any non-empty frame.

    Returns
    -------
    list of str
        One line per problem, each naming the marker ``ns/id`` and the field.
    """
    who = f"marker {m.ns}/{m.id}"
    if m.action not in MARKER_ACTIONS.values():
        return [f"{who}: unknown action {m.action}"]
    if m.action != MARKER_ACTIONS["ADD"]:
        return []
    out = []
    if m.type not in _CODE:
        return [f"{who}: unknown type {m.type}"]
    kind = _CODE[m.type]
    who = f"{who} ({kind})"
    frame = m.header.frame_id
    if not frame:
        out.append(f"{who}: empty header.frame_id")
    elif frame.startswith("/"):
        out.append(f"{who}: header.frame_id {frame!r} starts with '/' (tf2 refuses it)")
    elif frames is not None and frame not in set(frames):
        out.append(f"{who}: header.frame_id {frame!r} is not a known frame {sorted(frames)}")
    p, q, s = m.pose.position, m.pose.orientation, m.scale
    if not _finite(p.x, p.y, p.z, q.x, q.y, q.z, q.w):
        out.append(f"{who}: pose not finite")
    elif abs(q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w - 1.0) >= _QUAT_TOL:
        out.append(f"{who}: pose.orientation not normalised (|q| = "
                   f"{math.sqrt(q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w):.4g})")
    if not _finite(s.x, s.y, s.z):
        out.append(f"{who}: scale not finite")
    if not all(_finite(pt.x, pt.y, pt.z) for pt in m.points):
        out.append(f"{who}: a point is not finite")
    life = m.lifetime
    if life.sec < 0 or not 0 <= life.nanosec < 1_000_000_000:
        out.append(f"{who}: invalid lifetime {life.sec} s + {life.nanosec} ns")
    for where, c in [("color", m.color)] + [(f"colors[{i}]", c) for i, c in enumerate(m.colors)]:
        if not _finite(c.r, c.g, c.b, c.a) or not all(0.0 <= v <= 1.0 for v in (c.r, c.g, c.b,
                                                                               c.a)):
            out.append(f"{who}: {where} outside [0, 1]")
        elif c.a <= 0.0 and not (kind == "MESH_RESOURCE" and m.mesh_use_embedded_materials):
            out.append(f"{who}: {where}.a = {c.a}: fully transparent")
    n = len(m.points)
    if m.colors and len(m.colors) != n:
        out.append(f"{who}: {len(m.colors)} colors for {n} points")
    if kind == "ARROW":
        if n not in (0, 2):
            out.append(f"{who}: {n} points (0 or 2)")
        need = ("x", "y", "z") if n == 0 else ("x", "y")
        if n == 2 and not s.z >= 0.0:
            out.append(f"{who}: scale.z (head length) = {s.z} < 0")
    elif kind in ("LINE_STRIP", "LINE_LIST", "ARROW_STRIP"):
        need = ("x",)
        if n < 2 or (kind == "LINE_LIST" and n % 2):
            out.append(f"{who}: {n} points")
    elif kind == "POINTS":
        need = ("x", "y")
    elif kind == "TEXT_VIEW_FACING":
        need = ("z",)
        if not m.text.strip():
            out.append(f"{who}: empty text")
    else:
        need = ("x", "y", "z")
    if kind in ("CUBE_LIST", "SPHERE_LIST", "POINTS", "TRIANGLE_LIST") and n == 0:
        out.append(f"{who}: no points")
    if kind == "TRIANGLE_LIST" and n % 3:
        out.append(f"{who}: {n} points, not a multiple of 3")
    for axis in need:
        v = getattr(s, axis)
        if not v > 0.0:
            out.append(f"{who}: scale.{axis} = {v} (must be > 0)")
    return out


def marker_array_problems(markers: Iterable[Any], frames: Iterable[str] | None = None
                          ) -> list[str]:
    """:func:`marker_problems` of every marker, plus a (ns, id) used twice in the array (RViz 2:
    "Multiple Markers in the same MarkerArray message had the same ns and id").

    Parameters
    ----------
    markers
        The ``markers`` of a MarkerArray.
    frames
        As for :func:`marker_problems`.

    Returns
    -------
    list of str
        One line per problem.
    """
    frames = None if frames is None else set(frames)
    out, seen = [], set()
    for m in markers:
        out += marker_problems(m, frames)
        if m.action == MARKER_ACTIONS["ADD"]:
            if (m.ns, m.id) in seen:
                out.append(f"marker {m.ns}/{m.id}: (ns, id) twice in one MarkerArray")
            seen.add((m.ns, m.id))
    return out
