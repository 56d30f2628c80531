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

__all__ = ["summarize_bag", "summarize_records", "write_summary", "format_summary",
           "JOINT_STATE"]

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
    or lacking a joint of ``joints``), ``messages`` (every topic's count), and ``malformed``
    (messages whose bytes are not a JointState, skipped) when there are any. The messages are
    decoded a batch at a time (:mod:`fric_nodes.tools.run_columns`, as the recorder does while
    recording). ``ValueError`` for a path that is not a readable bag."""
    from rosbags.highlevel import AnyReader, AnyReaderError
    from rosbags.typesys import Stores, get_typestore

    from .run_columns import Columns, JointStates, MemoryStore, window_start

    path = Path(path)
    try:
        reader = AnyReader([path], default_typestore=get_typestore(Stores.ROS2_KILTED))
        reader.open()
    except (AnyReaderError, OSError) as e:
        raise ValueError(f"{path}: cannot open the bag: {e}") from None
    cols = Columns({"joint_states": JointStates(None)}, MemoryStore(), batch=1 << 16)
    info = None
    try:
        messages = {c.topic: int(c.msgcount) for c in reader.connections}
        conns = [c for c in reader.connections if c.topic == topic and c.msgtype == JOINT_STATE]
        if conns:  # (connections=[] would read every topic's messages)
            start, info = window_start(reader.start_time, reader.end_time, window)
            push = cols.push
            for _, log_ns, raw in reader.messages(connections=conns, start=start):
                push("joint_states", log_ns, raw)
    finally:
        reader.close()
    return summarize_records(cols.records("joint_states"), cols.decoders["joint_states"], path,
                             topic, messages, info)


def summarize_records(records: np.ndarray, decoder, bag: str | os.PathLike, topic: str,
                      messages: Mapping[str, int], window: Mapping | None = None
                      ) -> dict[str, Any]:
    """:func:`summarize_bag`'s summary of decoded JointState records (``records``, in the order
    received, of :class:`~fric_nodes.tools.run_columns.JointStates` ``decoder`` without a
    joint; the recorder's own, or a bag's), with every topic's message count ``messages`` and
    the ``window`` entry (None: the whole recording was read)."""
    from .run_columns import MALFORMED

    out: dict[str, Any] = {"kind": "arm", "bag": str(Path(bag).resolve()), "topic": topic,
                           "messages": dict(messages)}
    if window:
        out["window"] = dict(window)
    bad = records["ok"] == MALFORMED
    if bad.any():
        out["malformed"] = int(bad.sum())
        records = records[~bad]
    lid = records["layout"]
    # the layouts in the order first seen, and the joints each adds to those known
    used, first = np.unique(lid, return_index=True)
    order = np.argsort(first)
    used, first = used[order], first[order]
    joints: list[str] = []
    known: set[str] = set()
    known_after = np.zeros(used.size, dtype=np.int64)  # joints known once a layout is seen
    for i, layout in enumerate(used):
        for name in decoder.names(int(layout)):
            if name not in known:
                known.add(name)
                joints.append(name)
        known_after[i] = len(joints)
    missing = {"position": 0, "velocity": 0, "effort": 0, "joint": 0}
    if lid.size:
        n_names = np.array([len(decoder.names(int(k))) for k in used])
        place = np.zeros(int(used.max()) + 1, dtype=np.intp)
        place[used] = np.arange(used.size)
        slot = place[lid]  # each message's layout's place in ``used``
        per_layout = np.bincount(slot, minlength=used.size)
        for i, layout in enumerate(used):
            counts = decoder.counts(int(layout))
            n = n_names[i]
            for field, c in zip(("position", "velocity", "effort"), counts):
                if c < n or n == 0:
                    missing[field] += int(per_layout[i])
        # joints known at each message: those of every layout first seen at or before it
        seen_at = np.searchsorted(first, np.arange(lid.size), side="right") - 1
        missing["joint"] = int(np.count_nonzero(n_names[slot] < known_after[seen_at]))
    out["joints"] = joints
    out["joint_states"] = int(lid.size)
    out["missing"] = missing
    ns = records["stamp"].astype(np.int64)
    out["time_base"] = "header stamps"
    if ns.size and not ns.any():
        ns = records["rx"].astype(np.int64)
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


def write_summary(summary: dict, out_dir: str | os.PathLike, stopped: str = "", log=print,
                  prog: str = "fric_recorder") -> int:
    """Write ``summary`` (with ``stopped``, why the recording ended, when given) to
    ``out_dir/summary.json`` and ``log`` it (:func:`format_summary`, then ``prog: wrote
    PATH``). Returns the exit status: 0, or 1 when no joint_states message was recorded."""
    import json

    if stopped:
        summary["stopped"] = stopped
    path = Path(out_dir) / "summary.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(summary, indent=1) + "\n")
    log(format_summary(summary))
    log(f"{prog}: wrote {path.resolve()}")
    return 0 if summary["joint_states"] else 1


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
