"""Recorded arm runs: sensor_msgs/JointState bags and CSV in and out (issue 15).

An :class:`ArmRecording` is what ``fric identify RECORDING`` reads: per sample the time, and per
joint the position, (optionally) the velocity and the effort — the joint torque as ros2_control's
effort state interface reports it (paper 003's force balance, eq. (1), per joint: the torque the
motor applies to the joint). It feeds :func:`.signals.prepare` (:meth:`ArmRecording.prepare`),
which derives what is missing and filters every column alike.

Files (:func:`read_arm_recording` picks by the path):

* ROS 2 bag — a rosbag2 directory (``metadata.yaml``; sqlite3 or MCAP storage), or a
  ``.db3``/``.mcap`` file in one, read with ``rosbags`` (imported only there). The topic's
  sensor_msgs/JointState messages are matched **by joint name** (the order may change from one
  message to the next; messages with the same header stamp are merged, so two publishers of
  disjoint joints make one row). Time: header stamps (the bag's receive times when every stamp
  is zero), sorted, ``t = 0`` at the first.
* CSV (``.csv``; :data:`CSV_FIELDS`) — ``#`` comment lines, then a header row::

      t,<joint>.position,<joint>.velocity,<joint>.effort,...

  ``t`` [s]; per joint ``position`` [rad or m], ``effort`` [N·m or N], optional ``velocity``
  [rad/s or m/s] (all joints or none); joints in the order of their first column; other columns
  ignored (:mod:`.excitation` writes ``<joint>.acceleration`` in the same format). An empty or
  ``nan`` cell is a missing value.

Missing values (a NaN cell, a message lacking a joint's entry): those rows are dropped and counted
in :attr:`ArmRecording.warnings`; the time gap they leave is handled by :func:`.signals.segments`.
A message lacking the velocity makes the recording's velocity derived from the positions. Every
user mistake is a ``ValueError`` naming the problem (missing path, topic not in the bag — with
the bag's topics and types —, no efforts, unknown joints — with the available ones —, too short).
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np

from .signals import PreparedData, prepare

__all__ = ["ArmRecording", "read_arm_recording", "write_arm_bag", "write_arm_csv",
           "read_joint_csv", "CSV_FIELDS", "MIN_ROWS", "JOINT_STATE"]

#: Per-joint CSV fields (column ``<joint>.<field>``), after the ``t`` column.
CSV_FIELDS = ("position", "velocity", "effort", "acceleration")
#: Fewest rows of a recording (after dropping NaN rows); identification needs far more
#: (:func:`.signals.prepare` says how many its filter needs).
MIN_ROWS = 20
JOINT_STATE = "sensor_msgs/msg/JointState"


@dataclass
class ArmRecording:
    """One recorded run of an n-joint arm.

    ``t`` (N,) [s], strictly increasing except where :func:`.signals.segments` cuts; ``q``,
    ``effort`` (N, n) and ``v`` (N, n) or None, columns in ``joint_names`` order; ``source``
    describes the file; ``warnings`` lists what was dropped or assumed, in words.
    """

    t: np.ndarray
    joint_names: tuple
    q: np.ndarray
    v: np.ndarray | None
    effort: np.ndarray
    source: str = ""
    warnings: list = field(default_factory=list)

    def __post_init__(self):
        self.t = np.asarray(self.t, dtype=float)
        self.joint_names = tuple(str(j) for j in self.joint_names)
        n = len(self.joint_names)
        if self.t.ndim != 1:
            raise ValueError(f"t: expected shape (N,), got {self.t.shape}")
        for name in ("q", "v", "effort"):
            x = getattr(self, name)
            if x is None:
                continue
            x = np.asarray(x, dtype=float)
            if x.ndim == 1 and n == 1:
                x = x[:, None]
            if x.shape != (self.t.size, n):
                raise ValueError(f"{name}: expected shape ({self.t.size}, {n}) (samples × "
                                 f"joints {list(self.joint_names)}), got {x.shape}")
            setattr(self, name, x)

    def __len__(self) -> int:
        return int(self.t.size)

    @property
    def n(self) -> int:
        """Number of joints."""
        return len(self.joint_names)

    @property
    def duration(self) -> float:
        """``t[-1] − t[0]`` [s]."""
        return float(self.t[-1] - self.t[0]) if self.t.size else 0.0

    def select(self, joints: Sequence[str]) -> "ArmRecording":
        """The recording restricted to (and ordered as) ``joints``; ValueError naming unknown
        ones."""
        idx = _joint_index(joints, self.joint_names, self.source)
        return ArmRecording(t=self.t, joint_names=tuple(joints), q=self.q[:, idx],
                            v=None if self.v is None else self.v[:, idx],
                            effort=self.effort[:, idx], source=self.source,
                            warnings=list(self.warnings))

    def prepare(self, **options) -> PreparedData:
        """:func:`.signals.prepare` of this recording (its measured ``v`` when it has one);
        ``options``: ``cutoff_hz``, ``order``, ``max_gap``, ``filter_effort``, ``min_rows``,
        ``effort_lag`` (how long [s] the effort lags the states: a command held over the step
        ending at its stamp lags by half a step, a torque sensor by 0; ``fric identify
        --effort-lag auto`` estimates it)."""
        return prepare(self.t, self.q, self.effort, v=self.v, **options)


def _joint_index(joints, available, source) -> list:
    missing = [j for j in joints if j not in available]
    if missing:
        raise ValueError(f"{source + ': ' if source else ''}joint(s) {missing} not in the "
                         f"recording; it has {list(available)}")
    return [list(available).index(j) for j in joints]


def _parse_joints(joints) -> list | None:
    if joints is None:
        return None
    if isinstance(joints, str):
        joints = [j.strip() for j in joints.split(",") if j.strip()]
    joints = [str(j) for j in joints]
    if not joints:
        raise ValueError("joints: empty list (give joint names, or None for all)")
    dup = sorted({j for j in joints if joints.count(j) > 1})
    if dup:
        raise ValueError(f"joints: {dup} listed twice")
    return joints


def read_arm_recording(path, topic: str = "joint_states",
                       joints: Sequence[str] | str | None = None) -> ArmRecording:
    """Read an arm recording from a ROS 2 bag or a CSV file (module docstring).

    Parameters
    ----------
    path : str or path-like
        A rosbag2 directory, a ``.db3``/``.mcap`` file, or a ``.csv`` file.
    topic : str
        The sensor_msgs/JointState topic (with or without the leading ``/``); bags only.
    joints : sequence of str or str, optional
        Joint names to keep, in this order (a comma-separated string is split). Default: every
        joint, in the order of the first message (CSV: of the header).

    Returns
    -------
    ArmRecording
        t [s] from 0, q, v (None when the recording has no velocities), effort; ``warnings``
        says what was dropped (NaN rows, messages without a joint) or assumed.

    Raises
    ------
    ValueError
        Naming the problem: the path does not exist or is neither a bag nor a CSV; the topic is
        not in the bag (listing its topics and types) or has another type; JointState without
        positions or efforts; requested joints missing (listing the available ones); a CSV
        without ``t`` or a joint's position/effort column, or with a cell that is not a number;
        fewer than :data:`MIN_ROWS` rows with every value.
    """
    path = Path(path)
    joints = _parse_joints(joints)
    if not path.exists():
        raise ValueError(f"recording not found: {path}")
    if path.is_file() and path.suffix.lower() == ".csv":
        return _read_csv_recording(path, joints)
    if path.is_dir() or path.suffix in (".db3", ".mcap"):
        return _read_bag(path, topic, joints)
    raise ValueError(f"{path}: not a recording (expected a rosbag2 directory, a .db3/.mcap bag "
                     f"file or a .csv file)")


# -- CSV ------------------------------------------------------------------------------------------
def read_joint_csv(path) -> tuple[np.ndarray, list, dict, list]:
    """The columns of a per-joint CSV (module docstring), without any check of which exist.

    Parameters
    ----------
    path : str or path-like
        The CSV file.

    Returns
    -------
    t : (N,) ndarray
        The ``t`` column [s] (NaN where empty).
    joint_names : list of str
        Joints in the order of their first column.
    columns : dict
        ``(joint, field) → (N,) ndarray`` for every ``<joint>.<field>`` column with a field of
        :data:`CSV_FIELDS` (NaN for empty or ``nan`` cells).
    comments : list of str
        The ``#`` lines before the header, without the ``#``.

    Raises
    ------
    ValueError
        Naming the file and line: no header, no ``t`` column, a line with the wrong number of
        cells, a cell that is not a number.
    """
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"CSV not found: {path}")
    comments: list = []
    with open(path, newline="", encoding="utf-8") as fh:
        rows = enumerate(csv.reader(fh), start=1)
        header = None
        for lineno, row in rows:
            if row and row[0].lstrip().startswith("#"):
                comments.append(",".join(row).lstrip()[1:].strip())
                continue
            if not "".join(row).strip():
                continue
            header = [c.strip() for c in row]
            break
        if header is None:
            raise ValueError(f"{path}: no header row (the file is empty)")
        if "t" not in header:
            raise ValueError(f"{path}: no 't' column (time [s]); the header is {header}")
        wanted = {"t": header.index("t")}
        joint_names: list = []
        for i, name in enumerate(header):
            joint, dot, fld = name.rpartition(".")
            if dot and joint and fld in CSV_FIELDS:
                wanted[(joint, fld)] = i
                if joint not in joint_names:
                    joint_names.append(joint)
        data: dict = {k: [] for k in wanted}
        for lineno, row in rows:
            if not "".join(row).strip() or row[0].lstrip().startswith("#"):
                continue
            if len(row) != len(header):
                raise ValueError(f"{path}: line {lineno} has {len(row)} cells, the header has "
                                 f"{len(header)}")
            for key, i in wanted.items():
                cell = row[i].strip()
                try:
                    val = float(cell) if cell else math.nan
                except ValueError:
                    raise ValueError(f"{path}: line {lineno}, column {header[i]!r}: {cell!r} is "
                                     f"not a number") from None
                data[key].append(val)
    t = np.array(data.pop("t"), dtype=float)
    return t, joint_names, {k: np.array(v, dtype=float) for k, v in data.items()}, comments


def _read_csv_recording(path: Path, joints) -> ArmRecording:
    t, names, cols, _ = read_joint_csv(path)
    if not names:
        raise ValueError(f"{path}: no '<joint>.position' columns (header: t, "
                         f"<joint>.position, <joint>.velocity, <joint>.effort, ...)")
    use = joints if joints is not None else names
    _joint_index(use, names, str(path))
    for fld in ("position", "effort"):
        missing = [j for j in use if (j, fld) not in cols]
        if missing:
            raise ValueError(f"{path}: no '{fld}' column for joint(s) {missing} (expected "
                             f"'{missing[0]}.{fld}')")
    have_v = [j for j in use if (j, "velocity") in cols]
    notes = []
    if have_v and len(have_v) < len(use):
        notes.append(f"velocity columns only for {have_v}: velocities derived from positions "
                     f"for every joint")
    q = np.column_stack([cols[(j, "position")] for j in use])
    eff = np.column_stack([cols[(j, "effort")] for j in use])
    v = (np.column_stack([cols[(j, "velocity")] for j in use])
         if len(have_v) == len(use) else None)
    return _finish(t, use, q, v, eff, str(path), notes)


def _finish(t, names, q, v, eff, source, notes, hint: str = "") -> ArmRecording:
    """Drop NaN rows (counted), check the length, put t = 0 at the first row."""
    parts = [t[:, None], q, eff] + ([v] if v is not None else [])
    ok = np.all(np.isfinite(np.column_stack(parts)), axis=1)
    bad = int(ok.size - ok.sum())
    if bad == ok.size:
        raise ValueError(f"{source}: every row has a missing (NaN) value{hint}")
    if bad:
        first = int(np.argmax(~ok))
        notes.append(f"{bad} of {ok.size} rows with a missing (NaN) value dropped (first at "
                     f"row {first}); the gaps they leave split the data into segments")
    if ok.sum() < MIN_ROWS:
        raise ValueError(f"{source}: recording too short: {int(ok.sum())} complete rows, fewer "
                         f"than {MIN_ROWS}")
    t = t[ok]
    return ArmRecording(t=t - t[0], joint_names=tuple(names), q=q[ok],
                        v=None if v is None else v[ok], effort=eff[ok], source=source,
                        warnings=notes)


def write_arm_csv(path, rec: ArmRecording, header: str = "") -> None:
    """Write ``rec`` as a CSV that :func:`read_arm_recording` reads back bit-identically.

    Parameters
    ----------
    path : str or path-like
        The file to create or overwrite.
    rec : ArmRecording
        The recording (its velocity columns only when it has ``v``).
    header : str
        Extra comment text (one ``#`` line per line of it).

    Returns
    -------
    None
    """
    cols = [("t", rec.t)]
    for j, name in enumerate(rec.joint_names):
        cols.append((f"{name}.position", rec.q[:, j]))
        if rec.v is not None:
            cols.append((f"{name}.velocity", rec.v[:, j]))
        cols.append((f"{name}.effort", rec.effort[:, j]))
    _write_columns(Path(path), cols, ["fric arm recording: t [s]; <joint>.position [rad], "
                                      ".velocity [rad/s], .effort [N m] (ros2_control effort "
                                      "state: the joint torque)"]
                   + ([f"source: {rec.source}"] if rec.source else [])
                   + (header.splitlines() if header else []))


def _write_columns(path: Path, cols, comments) -> None:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        for line in comments:
            fh.write(f"# {line}\n")
        w = csv.writer(fh, lineterminator="\n")
        w.writerow([name for name, _ in cols])
        for row in zip(*(np.asarray(c, dtype=float).tolist() for _, c in cols)):
            w.writerow([repr(x) for x in row])


# -- rosbag2 --------------------------------------------------------------------------------------
def _bag_dir(path: Path) -> Path:
    if path.is_file():
        path = path.parent
    if not (path / "metadata.yaml").is_file():
        raise ValueError(f"{path}: not a rosbag2 bag (no metadata.yaml); give the bag directory "
                         f"that `ros2 bag record` wrote, or a .csv file")
    return path


def _topic_match(topic: str, have: dict) -> str | None:
    for cand in (topic, "/" + topic.lstrip("/"), topic.lstrip("/")):
        if cand in have:
            return cand
    return None


def _read_bag(path: Path, topic: str, joints) -> ArmRecording:
    bag = _bag_dir(path)
    from rosbags.highlevel import AnyReader, AnyReaderError  # lazy: only bag users need it
    from rosbags.typesys import Stores, get_typestore

    try:
        reader = AnyReader([bag], default_typestore=get_typestore(Stores.ROS2_KILTED))
        reader.open()
    except AnyReaderError as e:
        raise ValueError(f"{bag}: cannot open the bag: {e}") from None
    try:
        have = {c.topic: c.msgtype for c in reader.connections}
        found = _topic_match(topic, have)
        if found is None:
            listing = ", ".join(f"{k} ({v})" for k, v in sorted(have.items())) or "none"
            raise ValueError(f"{bag}: topic {topic!r} is not in the bag; it has: {listing}")
        if have[found] != JOINT_STATE:
            raise ValueError(f"{bag}: topic {found!r} has type {have[found]}, expected "
                             f"{JOINT_STATE}")
        conns = [c for c in reader.connections if c.topic == found]
        msgs = []
        for conn, log_ns, raw in reader.messages(connections=conns):
            m = reader.deserialize(raw, conn.msgtype)
            st = m.header.stamp
            msgs.append((st.sec * 1_000_000_000 + st.nanosec, log_ns, list(m.name),
                         np.asarray(m.position, dtype=float), np.asarray(m.velocity, dtype=float),
                         np.asarray(m.effort, dtype=float)))
    finally:
        reader.close()
    return _assemble(bag, found, msgs, joints)


def _assemble(bag, topic, msgs, joints) -> ArmRecording:
    src = f"{bag} {topic}"
    if not msgs:
        raise ValueError(f"{src}: the topic has no messages")
    stamps = np.array([m[0] for m in msgs], dtype=np.int64)
    notes = []
    if not stamps.any():
        stamps = np.array([m[1] for m in msgs], dtype=np.int64)
        notes.append("header stamps all zero: the bag's receive times used")
    seen: list = []
    for m in msgs:
        for name in m[2]:
            if name not in seen:
                seen.append(name)
    use = joints if joints is not None else list(msgs[0][2])
    _joint_index(use, seen, src)
    col = {name: i for i, name in enumerate(use)}
    for fld, k in (("position", 3), ("effort", 5)):
        if not any(len(m[k]) for m in msgs):
            raise ValueError(f"{src}: the JointState messages have no {fld} (empty '{fld}' in "
                             f"all {len(msgs)} messages); identification needs joint "
                             f"positions and efforts (the effort state interface of "
                             f"ros2_control: add it to the joint_state_broadcaster)")
    # rows keyed by stamp: messages with the same stamp (two publishers) merge into one row
    uniq, row_of = np.unique(stamps, return_inverse=True)
    N, n = uniq.size, len(use)
    q, v, eff = (np.full((N, n), np.nan) for _ in range(3))
    no_vel = short = 0
    for r, (_, _, names, pos, vel, ef) in zip(row_of, msgs):
        if vel.size == 0:
            no_vel += 1
        for i, name in enumerate(names):
            j = col.get(name)
            if j is None:
                continue
            if i >= pos.size or i >= ef.size:
                short += 1
                continue
            q[r, j], eff[r, j] = pos[i], ef[i]
            if i < vel.size:
                v[r, j] = vel[i]
    missing_joint = int(np.sum(~np.all(np.isfinite(q), axis=1)))
    if short:
        notes.append(f"{short} joint entries without a position or effort (shorter arrays than "
                     f"names) left missing")
    if missing_joint:
        notes.append(f"{missing_joint} stamps lack a position or effort of some joint of "
                     f"{use} (a message without that joint)")
    if no_vel == len(msgs):
        v = None
        notes.append("no velocities in the messages: derived from the positions")
    elif no_vel or np.isnan(v).sum() > np.isnan(q).sum():
        v = None
        notes.append(f"{no_vel} of {len(msgs)} messages without velocities: velocities derived "
                     f"from the positions for the whole recording")
    have = np.isfinite(q) & np.isfinite(eff)
    hint = ""
    if have.any(axis=0).all() and not have.all(axis=1).any():
        hint = (f": no stamp has all of {use} — they come in separate messages with different "
                f"stamps (two publishers?); record one JointState with every joint, or select "
                f"the joints of one publisher with joints=")
    sec, nsec = divmod(int(uniq[0]), 1_000_000_000)
    return _finish((uniq - uniq[0]).astype(float) * 1e-9, use, q, v, eff,
                   f"{src} (t = 0 at stamp {sec}.{nsec:09d} s)", notes, hint)


def write_arm_bag(path, rec: ArmRecording, topic: str = "joint_states", t0_ns: int = 0,
                  storage: str = "mcap") -> Path:
    """Write ``rec`` as a rosbag2 of sensor_msgs/JointState (what ``ros2 bag record`` makes).

    Parameters
    ----------
    path : str or path-like
        The bag directory to create (it must not exist).
    rec : ArmRecording
        The recording; one message per sample, header stamp ``t0_ns + t`` (integer ns), the
        bag's receive time the same.
    topic : str
        Topic name (a leading ``/`` is added).
    t0_ns : int
        Stamp of ``t = 0`` [ns].
    storage : {"mcap", "sqlite3"}
        The rosbag2 storage plugin.

    Returns
    -------
    pathlib.Path
        The bag directory.

    Raises
    ------
    ValueError
        When ``path`` exists or ``storage`` is unknown.
    """
    from rosbags.rosbag2 import StoragePlugin, Writer
    from rosbags.typesys import Stores, get_typestore

    path = Path(path)
    if path.exists():
        raise ValueError(f"{path}: exists; a bag is written to a new directory")
    plugins = {"mcap": StoragePlugin.MCAP, "sqlite3": StoragePlugin.SQLITE3}
    if storage not in plugins:
        raise ValueError(f"storage: expected 'mcap' or 'sqlite3', got {storage!r}")
    ts = get_typestore(Stores.ROS2_KILTED)
    T = ts.types
    Time, Header, JS = (T["builtin_interfaces/msg/Time"], T["std_msgs/msg/Header"],
                        T[JOINT_STATE])
    names = list(rec.joint_names)
    empty = np.zeros(0)
    stamps = t0_ns + np.rint(np.asarray(rec.t) * 1e9).astype(np.int64)
    with Writer(path, version=9, storage_plugin=plugins[storage]) as w:
        conn = w.add_connection("/" + topic.lstrip("/"), JOINT_STATE, typestore=ts)
        for k, ns in enumerate(stamps.tolist()):
            msg = JS(header=Header(stamp=Time(sec=ns // 1_000_000_000,
                                              nanosec=ns % 1_000_000_000), frame_id=""),
                     name=names, position=rec.q[k].copy(),
                     velocity=empty if rec.v is None else rec.v[k].copy(),
                     effort=rec.effort[k].copy())
            w.write(conn, ns, ts.serialize_cdr(msg, JOINT_STATE))
    return path
