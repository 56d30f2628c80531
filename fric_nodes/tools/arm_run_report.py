"""The summary of an arm recording: ``fric_recorder`` with ``kind: arm`` (every joint of a
sensor_msgs/JointState topic, e.g. a ros2_control arm's ``/joint_states``, into an MCAP bag).

Pure rosbags and numpy, no ROS. :func:`summarize_bag` reads the bag back and says what a user
needs before ``fric identify BAG --urdf URDF``: the joints, how many messages, over how long (the
header stamps; the bag's receive times when every stamp is zero), at what rate, how many states
were lost (stamp steps of several periods), how many messages lack a position, velocity or
effort entry (identification needs position and effort; velocity is derived when missing), and
the other recorded topics' message counts. :func:`format_summary` is its printed form.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Mapping

import numpy as np

__all__ = ["summarize_bag", "format_summary", "JOINT_STATE"]

JOINT_STATE = "sensor_msgs/msg/JointState"


def summarize_bag(path: str | os.PathLike, topic: str = "/joint_states", *,
                  window: float = 0.0) -> dict[str, Any]:
    """The summary (a JSON-serialisable dict) of the JointState ``topic`` in the bag at ``path``.

    ``window`` > 0: the stamps and joints are read from the last ``window`` seconds (by bag
    timestamp) of a longer bag (bounded time and memory); ``messages`` counts the whole bag, and
    ``window`` says what was read. Keys: ``kind`` ("arm"), ``bag`` (absolute path), ``topic``,
    ``joints`` (in the order first seen), ``joint_states`` (messages read), ``duration`` [s],
    ``rate_hz`` (mean over the duration), ``median_period`` [s], ``lost_states``,
    ``non_increasing_stamps``, ``time_base``, ``missing`` (messages lacking an entry per field,
    or lacking a joint of ``joints``), ``messages`` (every topic's count). ``ValueError`` for a
    path that is not a readable bag."""
    from rosbags.highlevel import AnyReader, AnyReaderError
    from rosbags.typesys import Stores, get_typestore

    path = Path(path)
    try:
        reader = AnyReader([path], default_typestore=get_typestore(Stores.ROS2_KILTED))
        reader.open()
    except (AnyReaderError, OSError) as e:
        raise ValueError(f"{path}: cannot open the bag: {e}") from None
    joints: list[str] = []
    known: set[str] = set()
    missing = {"position": 0, "velocity": 0, "effort": 0, "joint": 0}
    stamps, rx = [], []
    out: dict[str, Any] = {"kind": "arm", "bag": str(path.resolve()), "topic": topic}
    try:
        out["messages"] = {c.topic: int(c.msgcount) for c in reader.connections}
        conns = [c for c in reader.connections if c.topic == topic and c.msgtype == JOINT_STATE]
        start = None
        if conns and window > 0.0:
            recorded = (reader.end_time - reader.start_time) * 1e-9
            if recorded > window:
                start = reader.end_time - int(window * 1e9)
                out["window"] = {"analysed_s": window, "recorded_s": recorded}
        last_names = None
        # (connections=[] would read every topic's messages)
        for conn, log_ns, raw in (reader.messages(connections=conns, start=start) if conns
                                  else ()):
            msg = reader.deserialize(raw, conn.msgtype)
            names = list(msg.name)
            if names != last_names:
                last_names = names
                for n in names:
                    if n not in known:
                        known.add(n)
                        joints.append(n)
            n = len(names)
            for field in ("position", "velocity", "effort"):
                if len(getattr(msg, field)) < n or n == 0:
                    missing[field] += 1
            if n < len(joints):
                missing["joint"] += 1
            st = msg.header.stamp
            stamps.append(st.sec * 1_000_000_000 + st.nanosec)
            rx.append(log_ns)
    finally:
        reader.close()
    out["joints"] = joints
    out["joint_states"] = len(stamps)
    out["missing"] = missing
    ns = np.array(stamps, dtype=np.int64)
    out["time_base"] = "header stamps"
    if ns.size and not ns.any():
        ns = np.array(rx, dtype=np.int64)
        out["time_base"] = "receive times (every header stamp is zero)"
    t = (ns - ns[0]) * 1e-9 if ns.size else np.zeros(0)
    out["duration"] = float(t.max()) if t.size else 0.0
    out["rate_hz"] = (t.size - 1) / out["duration"] if out["duration"] > 0 else None
    if t.size > 1:
        d = np.diff(t)
        pos = d[d > 0]
        dt = float(np.median(pos)) if pos.size else 0.0
        out["median_period"] = dt
        out["lost_states"] = int(np.sum(np.maximum(np.round(pos / dt) - 1, 0))) if dt > 0 else 0
        out["non_increasing_stamps"] = int(np.count_nonzero(d <= 0))
    return out


def _joint_list(joints: list[str], most: int = 8) -> str:
    shown = ", ".join(joints[:most])
    return shown + (f", … ({len(joints) - most} more)" if len(joints) > most else "")


def format_summary(summary: Mapping[str, Any]) -> str:
    """A few human-readable lines of :func:`summarize_bag`'s summary (what was recorded, and
    the ``fric identify`` command that reads it)."""
    n = summary["joint_states"]
    topic = summary["topic"]
    if n == 0:
        return (f"arm recording: no {JOINT_STATE} message on {topic} in {summary['bag']} "
                f"(recorded topics: {', '.join(summary['messages']) or 'none'})")
    joints = summary["joints"]
    rate = summary.get("rate_hz")
    line = (f"arm recording: {len(joints)} joint{'s' if len(joints) != 1 else ''} "
            f"({_joint_list(joints)}), {n} {topic} messages over {summary['duration']:.3f} s "
            f"({summary['time_base']})")
    if rate:
        line += (f", {rate:.4g} Hz (median step {summary['median_period'] * 1e3:.4g} ms), "
                 f"{summary['lost_states']} lost")
    lines = [line]
    if "window" in summary:
        w = summary["window"]
        lines.append(f"  (the last {w['analysed_s']:g} s of {w['recorded_s']:.1f} s read; "
                     f"{summary['messages'].get(topic, n)} messages in all)")
    miss = summary["missing"]
    if miss["effort"]:
        lines.append(f"  warning: {miss['effort']} of {n} messages have no effort for every "
                     "joint (fric identify needs the effort)")
    if miss["position"]:
        lines.append(f"  warning: {miss['position']} of {n} messages have no position for every "
                     "joint")
    if miss["velocity"]:
        lines.append(f"  note: {miss['velocity']} of {n} messages have no velocity (fric identify "
                     "then derives it from the positions)")
    if miss["joint"]:
        lines.append(f"  note: {miss['joint']} of {n} messages carry only some of the joints")
    if summary.get("non_increasing_stamps"):
        lines.append(f"  warning: {summary['non_increasing_stamps']} stamps do not increase")
    others = {k: v for k, v in summary["messages"].items() if k != topic}
    if others:
        lines.append("  also recorded: " + ", ".join(f"{k} {v} messages"
                                                     for k, v in others.items()))
    lines.append(f"  bag: {summary['bag']} (MCAP); next: fric identify {summary['bag']} "
                 f"--urdf URDF --out DIR" + (f" --topic {topic}" if topic != "/joint_states"
                                             else ""))
    return "\n".join(lines)
