"""``fric play``: publish an excitation as one trajectory_msgs/JointTrajectory, e.g. to
ros2_control's ``joint_trajectory_controller``: the venv form of ``ros2 topic pub --once TOPIC
trajectory_msgs/msg/JointTrajectory "$(cat excitation_trajectory.yaml)"``, which cannot pass the
file of a 6–7-joint arm (140–196 kB: more than the 128 kB one shell argument may hold).

    fric play EXCITATION [--topic T] [--rate HZ] [--lead-in S] [--wait S] [--timeout S]

``EXCITATION`` is what ``fric excite`` writes: ``excitation.csv`` (``t``, ``<joint>.position``
[, ``.velocity``, ``.acceleration``]; sent as points every 1/``--rate`` s, the first at
``--lead-in`` s, as ``fric excite`` makes its YAML) or ``excitation_trajectory.yaml`` (the
message itself, sent as written). The publisher is reliable; the command waits (``--wait``,
bounded) for a subscriber on the topic, publishes once, and waits (``--timeout``) until every
subscriber has acknowledged the message, so it has arrived when the command returns. When no
subscriber comes it says so in one line: the topic, the ROS_DOMAIN_ID and the topics of that type
it saw. Exit status: 0 sent, 1 no subscriber / not acknowledged / ROS cannot start, 2 a bad file
or option (one line naming the field).
"""
from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Any

from .cli_ros import _Fail, _run, _Session, _where

__all__ = ["add_subcommand", "load_trajectory", "to_message", "DEFAULT_TOPIC"]

#: joint_trajectory_controller's command topic (its default controller name)
DEFAULT_TOPIC = "/joint_trajectory_controller/joint_trajectory"
_TYPE = "trajectory_msgs/msg/JointTrajectory"
#: --rate and --lead-in of a CSV when not given: those of fric excite's YAML
_RATE, _LEAD_IN = 20.0, 3.0


def _numbers(value: Any, where: str, n: int, optional: bool) -> list[float]:
    if value is None and optional:
        return []
    if not isinstance(value, list) or any(isinstance(x, bool) or not isinstance(x, (int, float))
                                          for x in value):
        raise ValueError(f"{where}: expected a list of numbers, got {value!r:.60}")
    if optional and not value:
        return []
    if len(value) != n:
        raise ValueError(f"{where}: expected {n} numbers (one per joint), got {len(value)}")
    if not all(math.isfinite(x) for x in value):
        raise ValueError(f"{where}: a value is not finite")
    return [float(x) for x in value]


def _duration_ns(value: Any, where: str) -> int:
    if not isinstance(value, dict) or set(value) - {"sec", "nanosec"}:
        raise ValueError(f"{where}: expected {{sec: S, nanosec: NS}}, got {value!r:.60}")
    sec, nsec = value.get("sec", 0), value.get("nanosec", 0)
    if any(isinstance(x, bool) or not isinstance(x, int) for x in (sec, nsec)) \
            or not 0 <= nsec < 1_000_000_000 or sec < 0:
        raise ValueError(f"{where}: expected whole sec >= 0 and 0 <= nanosec < 1e9, got "
                         f"{value!r:.60}")
    return sec * 1_000_000_000 + nsec


def _check_message(doc: Any, source: str) -> dict:
    """A JointTrajectory mapping (``fric excite``'s YAML) checked field by field; ValueError
    naming ``source`` and the field."""
    if not isinstance(doc, dict):
        raise ValueError(f"{source}: expected a trajectory_msgs/JointTrajectory mapping "
                         f"(joint_names, points), got {type(doc).__name__}")
    unknown = sorted(set(doc) - {"header", "joint_names", "points"})
    if unknown:
        raise ValueError(f"{source}: {', '.join(map(str, unknown))}: not a JointTrajectory "
                         "field (header, joint_names, points)")
    names = doc.get("joint_names")
    if not isinstance(names, list) or not names or not all(isinstance(x, str) and x
                                                           for x in names):
        raise ValueError(f"{source}: joint_names: expected a non-empty list of joint names, "
                         f"got {names!r:.60}")
    dup = sorted({x for x in names if names.count(x) > 1})
    if dup:
        raise ValueError(f"{source}: joint_names: named twice: {', '.join(dup)}")
    points = doc.get("points")
    if not isinstance(points, list) or not points:
        raise ValueError(f"{source}: points: expected a non-empty list of points")
    n, out, last = len(names), [], -1
    for i, p in enumerate(points):
        where = f"{source}: points[{i}]"
        if not isinstance(p, dict):
            raise ValueError(f"{where}: expected a mapping, got {p!r:.60}")
        extra = sorted(set(p) - {"positions", "velocities", "accelerations", "effort",
                                 "time_from_start"})
        if extra:
            raise ValueError(f"{where}: {', '.join(map(str, extra))}: not a "
                             "JointTrajectoryPoint field")
        if "time_from_start" not in p:
            raise ValueError(f"{where}.time_from_start: missing")
        ns = _duration_ns(p["time_from_start"], f"{where}.time_from_start")
        if ns <= last:
            raise ValueError(f"{where}.time_from_start: must increase from point to point")
        last = ns
        out.append({"positions": _numbers(p.get("positions"), f"{where}.positions", n, False),
                    **{k: _numbers(p.get(k), f"{where}.{k}", n, True)
                       for k in ("velocities", "accelerations", "effort")},
                    "time_from_start": ns})
    return {"joint_names": list(names), "points": out}


def load_trajectory(path: str | Path, rate: float | None = None,
                    lead_in: float | None = None) -> dict:
    """The trajectory to send, from ``fric excite``'s CSV or trajectory YAML.

    A CSV is sampled every 1/``rate`` s (default 20 Hz; 0: its own rows), its first point at
    ``lead_in`` s (default 3). A YAML is the message as written (``rate`` and ``lead_in`` must
    be None). Returns ``{"joint_names": [...], "points": [{"positions", "velocities",
    "accelerations", "effort": [float], "time_from_start": ns}]}``; ValueError naming the file
    and the field for anything else."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".yaml", ".yml"):
        raise ValueError(f"{path}: expected fric excite's excitation.csv or "
                         "excitation_trajectory.yaml (a .csv or .yaml file)")
    if not path.is_file():
        raise ValueError(f"{path}: no such file")
    if suffix == ".csv":
        from fric_core.arm_identification.excitation import (read_excitation_csv,
                                                             trajectory_message)
        rate = _RATE if rate is None else rate
        lead_in = _LEAD_IN if lead_in is None else lead_in
        if not (math.isfinite(rate) and rate >= 0.0):
            raise ValueError(f"--rate: expected >= 0 [Hz] (0: every row), got {rate:g}")
        if not (math.isfinite(lead_in) and lead_in >= 0.0):
            raise ValueError(f"--lead-in: expected >= 0 [s], got {lead_in:g}")
        msg = trajectory_message(read_excitation_csv(path), rate or None, lead_in)
        return _check_message(msg, str(path))
    given = [flag for flag, v in (("--rate", rate), ("--lead-in", lead_in)) if v is not None]
    if given:
        raise ValueError(f"{', '.join(given)}: only for a CSV; a YAML trajectory is sent as "
                         "written")
    import yaml
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        at = f":{mark.line + 1}:{mark.column + 1}" if mark is not None else ""
        raise ValueError(f"{path}{at}: YAML syntax error: {getattr(e, 'problem', e)}") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ValueError(f"{path}: cannot read: {e}") from None
    return _check_message(doc, str(path))


def to_message(traj: dict):
    """The trajectory_msgs/JointTrajectory of :func:`load_trajectory`'s dict (zero header stamp:
    the controller starts it on receipt)."""
    from builtin_interfaces.msg import Duration
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    msg = JointTrajectory(joint_names=traj["joint_names"])
    for p in traj["points"]:
        ns = p["time_from_start"]
        msg.points.append(JointTrajectoryPoint(
            positions=p["positions"], velocities=p["velocities"],
            accelerations=p["accelerations"], effort=p["effort"],
            time_from_start=Duration(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)))
    return msg


def _play(session: _Session, ns: argparse.Namespace) -> int:
    from rclpy.duration import Duration
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from trajectory_msgs.msg import JointTrajectory

    traj, topic = ns.trajectory, ns.resolved_topic
    qos = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.VOLATILE)
    pub = session.node.create_publisher(JointTrajectory, topic, qos)
    if not session.wait_for(lambda: pub.get_subscription_count() > 0, ns.wait):
        types = dict(session.node.get_topic_names_and_types())
        other = ", ".join(t for t in types.get(topic, []) if t != _TYPE)
        seen = sorted(t for t, ty in types.items() if _TYPE in ty and t != topic)
        raise _Fail(f"no subscriber on {topic} within {ns.wait:g} s ({_where()})"
                    + (f"; {topic} carries {other}, not {_TYPE}" if other else "")
                    + f"; other {_TYPE} topics: {', '.join(seen) or 'none'} (is the "
                    f"controller active, in this ROS_DOMAIN_ID? --topic names another)")
    msg = to_message(traj)
    pub.publish(msg)
    if not pub.wait_for_all_acked(Duration(seconds=ns.timeout)):
        raise _Fail(f"{topic}: the trajectory was published but not acknowledged by every "
                    f"subscriber within {ns.timeout:g} s (raise --timeout)")
    pts = traj["points"]
    span = pts[-1]["time_from_start"] * 1e-9
    print(f"published {topic}: {len(traj['joint_names'])} joints "
          f"({', '.join(traj['joint_names'])}), {len(pts)} points, the last at {span:.3f} s "
          f"(the first at {pts[0]['time_from_start'] * 1e-9:.3f} s), to "
          f"{pub.get_subscription_count()} subscriber(s)")
    return 0


def _main(ns: argparse.Namespace) -> int:
    try:
        ns.trajectory = load_trajectory(ns.file, ns.rate, ns.lead_in)
    except ValueError as e:
        print(f"fric play: error: {' '.join(str(e).split())}", file=sys.stderr)
        return 2
    for flag, v in (("--wait", ns.wait), ("--timeout", ns.timeout)):
        if not (math.isfinite(v) and v > 0.0):
            print(f"fric play: error: {flag}: expected > 0 [s], got {v:g}", file=sys.stderr)
            return 2
    ns.resolved_topic = "/" + ns.topic.lstrip("/")
    return _run("fric play", _play, ns)


def add_subcommand(subparsers: argparse._SubParsersAction) -> None:
    """Register ``play`` on the ``fric`` parser."""
    p = subparsers.add_parser(
        "play", help="publish an excitation (fric excite) as one JointTrajectory",
        description="Publish fric excite's excitation.csv or excitation_trajectory.yaml as one "
                    "trajectory_msgs/JointTrajectory on a topic (default: "
                    "joint_trajectory_controller's), once a subscriber is there; returns when "
                    "every subscriber has acknowledged it. The venv form of `ros2 topic pub "
                    "--once TOPIC trajectory_msgs/msg/JointTrajectory \"$(cat FILE)\"` (which "
                    "cannot pass a 6-7-joint arm's file: over the shell's 128 kB argument "
                    "limit). Exit status: 0 sent, 1 no subscriber or not acknowledged, 2 bad "
                    "file or option.")
    p.add_argument("file", metavar="EXCITATION",
                   help="fric excite's excitation.csv or excitation_trajectory.yaml")
    p.add_argument("--topic", default=DEFAULT_TOPIC, metavar="T",
                   help=f"the trajectory topic (default {DEFAULT_TOPIC}; fric's "
                        "trajectory_tracker: /trajectory_tracker/joint_trajectory)")
    p.add_argument("--rate", type=float, default=None, metavar="HZ",
                   help=f"CSV: points per second (default {_RATE:g}, as fric excite's YAML; 0: "
                        "every row)")
    p.add_argument("--lead-in", type=float, default=None, metavar="S",
                   help=f"CSV: time_from_start of the first point, for the controller to reach "
                        f"it from where the arm is (default {_LEAD_IN:g})")
    p.add_argument("--wait", type=float, default=10.0, metavar="S",
                   help="how long to wait for a subscriber (default 10)")
    p.add_argument("--timeout", type=float, default=10.0, metavar="S",
                   help="how long to wait for every subscriber's acknowledgement (default 10)")
    p.set_defaults(func=_main)
