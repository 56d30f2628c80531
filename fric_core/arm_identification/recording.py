"""Recorded arm runs: sensor_msgs/JointState bags and CSV in and out (issue 15).

An :class:`ArmRecording` is what ``fric identify RECORDING`` reads: per sample the time, and per
joint the position, (optionally) the velocity and the effort — the joint torque as ros2_control's
effort state interface reports it (paper 003's force balance, eq. (1), per joint: the torque the
motor applies to the joint). It feeds :func:`.signals.prepare` (:meth:`ArmRecording.prepare`),
which derives what is missing and filters every column alike.

Files (:func:`read_arm_recording` picks by the path):

* ROS 2 bag — a rosbag2 directory (``metadata.yaml``; sqlite3 or MCAP storage), or a
  ``.db3``/``.mcap`` file in one, read with ``rosbags`` (imported only there) by
  :mod:`.joint_state_bag`: the topic's sensor_msgs/JointState messages in the order they were
  written, decoded straight from their CDR bytes, matched **by joint name** (the order may change
  from one message to the next; messages with the same header stamp close together are merged,
  so two publishers of disjoint joints make one row). Time: header stamps (the bag's receive
  times when every stamp is zero), rows in the order written, ``t = 0`` at the first.
* CSV (``.csv``; :data:`CSV_FIELDS`) — ``#`` comment lines, then a header row::

      t,<joint>.position,<joint>.velocity,<joint>.effort,...

  ``t`` [s]; per joint ``position`` [rad or m], ``effort`` [N·m or N], optional ``velocity``
  [rad/s or m/s] (all joints or none); joints in the order of their first column; other columns
  ignored (:mod:`.excitation` writes ``<joint>.acceleration`` in the same format). An empty or
  ``nan`` cell is a missing value.

Cleaning (every dropped row is counted in :attr:`ArmRecording.warnings`, one line per kind; the
time gap a dropped row leaves is handled by :func:`.signals.segments`):

* missing values (a NaN or infinite cell, a message lacking a joint's entry): the row is dropped.
  A message lacking the velocity makes the recording's velocity derived from the positions;
* implausible magnitudes (:data:`PLAUSIBLE`): a row with |position| > 1e6 rad or m, |velocity| >
  1e4 rad/s or m/s, |effort| > 1e7 N·m or N, or |t| > 1e10 s is refused like a missing value.
  The bounds are far beyond any arm: 1e6 rad is 160 000 turns (a continuous joint at 10 rad/s
  for 27 h); 1e4 rad/s is 95 000 rpm at the joint; the largest industrial arms carry ~1e5 N·m;
  1e10 s is 317 years (Unix-epoch seconds pass, nanoseconds given as seconds do not). A value
  beyond them is a corrupted cell or message (1e308: a flipped exponent bit), and left in it
  overflows the filters and the fit (NaN results and numpy overflow warnings);
* a row with the stamp of the row before (a sample recorded twice): the earlier one is dropped;
* a row that repeats every value of the row before at a later stamp: a stale sample (a logger
  that polled the state again before it was updated), its values belong to the earlier stamp;
  dropped. Left in, a stale row's positions are off by v·Δt (5 mrad at 1 rad/s and 5 ms), which the
  second derivative turns into a spike of ~|Δq|·(2π·f_c)² (80 rad/s² at 20 Hz): on a simulated
  2-link log with 5.5 % such rows the Coulomb stds grew from 0.005 to 0.6 N·m. A resting arm
  whose every value repeats exactly loses those rows too; they carry no friction information
  (inside the Δv band), and the gaps they leave become segment boundaries;
* stamps that go back (a clock reset or step): kept as stamped, and named in a warning — where
  and by how much; :func:`.signals.segments` cuts the recording there, so no filter or derivative
  spans the jump, and each stretch is identified with its own times.

Damaged bags are refused, in one line naming the bag, where the reading broke and why
(:mod:`.joint_state_bag`, "Damage": values elsewhere in a bag whose structure is damaged may be
damaged too, and nothing tells which).

Long recordings: at most ``max_rows`` rows (:data:`MAX_ROWS`) are used; a longer recording is
read as :data:`.joint_state_bag.BLOCKS` evenly spaced blocks of consecutive rows, so memory stays
bounded however long it is (a bag is scanned without decoding the rows it does not use). Each
block keeps the recorded rate — the derivative filter, the effort lag and the sampling step are
the recording's —, the blocks span the whole run, and a warning says how many rows were used.

Every user mistake is a ``ValueError`` naming the problem (missing path, topic not in the bag —
with the bag's topics and types —, no efforts, unknown joints — with the available ones —, too
short, a damaged bag).
"""

from __future__ import annotations

import array
import csv
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np

from .joint_state_bag import row_blocks
from .signals import PreparedData, prepare

__all__ = ["ArmRecording", "read_arm_recording", "write_arm_bag", "write_arm_csv",
           "read_joint_csv", "CSV_FIELDS", "MIN_ROWS", "JOINT_STATE", "PLAUSIBLE", "MAX_ROWS"]

#: Per-joint CSV fields (column ``<joint>.<field>``), after the ``t`` column.
CSV_FIELDS = ("position", "velocity", "effort", "acceleration")
#: Fewest rows of a recording (after dropping NaN rows); identification needs far more
#: (:func:`.signals.prepare` says how many its filter needs).
MIN_ROWS = 20
JOINT_STATE = "sensor_msgs/msg/JointState"
#: Largest plausible magnitudes (module docstring, "Cleaning"): a row with a value beyond one is
#: refused, like a row with a missing value. ``t`` [s]; per joint ``position`` [rad or m],
#: ``velocity`` [rad/s or m/s], ``effort`` [N·m or N].
PLAUSIBLE = {"t": 1e10, "position": 1e6, "velocity": 1e4, "effort": 1e7}
#: Default ``max_rows`` of :func:`read_arm_recording`: more rows are read as evenly spaced blocks
#: of consecutive rows (:data:`.joint_state_bag.BLOCKS`; module docstring, "Long recordings").
#: 100 s at 1 kHz: a 60 s recording is read whole; ``fric identify`` of an hour of arm7 at 1 kHz
#: then peaks at 369 MiB with ``--model asymmetric`` (bench/arm_identify_pipeline.py); the
#: stds of 100 000 rows are already ~0.001 N·m on the simulated arm.
MAX_ROWS = 100_000


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
        """The time the rows cover [s]: the sum of the positive steps between consecutive
        stamps (``t[-1] − t[0]`` when the stamps only increase; a jump back adds nothing)."""
        steps = np.diff(self.t)
        return float(np.sum(steps[steps > 0.0]))

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
                       joints: Sequence[str] | str | None = None,
                       max_rows: int | None = MAX_ROWS) -> ArmRecording:
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
    max_rows : int or None
        Most rows used (:data:`MAX_ROWS`); a longer recording is read as evenly spaced blocks
        of consecutive rows (module docstring, "Long recordings"). None: every row.

    Returns
    -------
    ArmRecording
        t [s] from 0, q, v (None when the recording has no velocities), effort; ``warnings``
        says what was dropped (NaN, implausible and stale rows, messages without a joint) or
        assumed, and where the stamps go back.

    Raises
    ------
    ValueError
        Naming the problem: the path does not exist or is neither a bag nor a CSV; the topic is
        not in the bag (listing its topics and types) or has another type; JointState without
        positions or efforts; requested joints missing (listing the available ones); a CSV
        without ``t`` or a joint's position/effort column, or with a cell that is not a number;
        fewer than :data:`MIN_ROWS` rows with every value; a bag that cannot be opened or is
        damaged.
    """
    if max_rows is not None and not (isinstance(max_rows, (int, np.integer))
                                     and not isinstance(max_rows, bool) and max_rows >= MIN_ROWS):
        raise ValueError(f"max_rows: expected an integer >= {MIN_ROWS} or None, got "
                         f"{max_rows!r}")
    path = Path(path)
    joints = _parse_joints(joints)
    if not path.exists():
        raise ValueError(f"recording not found: {path}")
    if path.is_file() and path.suffix.lower() == ".csv":
        return _read_csv_recording(path, joints, max_rows)
    if path.is_dir() or path.suffix in (".db3", ".mcap"):
        return _read_bag(path, topic, joints, max_rows)
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
    return _read_csv(Path(path), None)


def _count_csv_rows(path: Path) -> int:
    """Data rows of a per-joint CSV: the lines after the header that are neither blank nor
    ``#`` comments (numbers only: no quoted cell spans lines)."""
    count, header = 0, False
    with open(path, "rb") as fh:
        for line in fh:
            text = line.strip()
            if not text or text.startswith(b"#") or not text.replace(b",", b"").strip():
                continue
            if header:
                count += 1
            header = True
    return count


def _read_csv(path: Path, keep) -> tuple[np.ndarray, list, dict, list]:
    """:func:`read_joint_csv`, parsing only the data rows ``keep`` (a sorted array of data-row
    indices; None: every row)."""
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
        data: dict = {k: array.array("d") for k in wanted}
        appends = [(data[key].append, i) for key, i in wanted.items()]
        wanted_rows = None if keep is None else set(np.asarray(keep).tolist())
        k = -1
        for lineno, row in rows:
            if not "".join(row).strip() or row[0].lstrip().startswith("#"):
                continue
            k += 1
            if wanted_rows is not None and k not in wanted_rows:
                continue
            if len(row) != len(header):
                raise ValueError(f"{path}: line {lineno} has {len(row)} cells, the header has "
                                 f"{len(header)}")
            for append, i in appends:
                cell = row[i].strip()
                try:
                    append(float(cell) if cell else math.nan)
                except ValueError:
                    raise ValueError(f"{path}: line {lineno}, column {header[i]!r}: {cell!r} is "
                                     f"not a number") from None
    t = np.frombuffer(data.pop("t"), dtype=float).copy()
    return t, joint_names, {k: np.frombuffer(v, dtype=float).copy() for k, v in data.items()}, \
        comments


def _read_csv_recording(path: Path, joints, max_rows: int | None) -> ArmRecording:
    total = _count_csv_rows(path) if max_rows is not None else 0
    blocks = row_blocks(total, max_rows)
    keep = None if blocks is None else np.concatenate([np.arange(a, b) for a, b in blocks])
    t, names, cols, _ = _read_csv(path, keep)
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
    if blocks is not None:
        size = blocks[0][1] - blocks[0][0]
        notes.append(f"long recording: {total} rows; {t.size} of them used, in {len(blocks)} "
                     f"evenly spaced blocks of {size} consecutive rows (max_rows = {max_rows}: "
                     f"bounded memory; every block at the recorded rate; the others not parsed)")
    return _finish(t, use, q, v, eff, str(path), notes)



def _rows_ok(x, bound: float) -> tuple[np.ndarray, np.ndarray]:
    """(finite, within) per row of ``x`` (N,) or (N, n): every value finite / every finite
    value at most ``bound`` in magnitude."""
    if x.ndim == 1:
        x = x[:, None]
    finite = np.isfinite(x)
    within = ~finite | (np.abs(np.where(finite, x, 0.0)) <= bound)
    return finite.all(axis=1), within.all(axis=1)


def _power(x: float) -> str:
    """``1e6`` rather than ``1e+06``."""
    mant, exp = f"{x:.0e}".split("e")
    return f"{mant}e{int(exp)}"


def _first_implausible(t, names, cols, row: int) -> str:
    """``joint.field = value`` of the first implausible value in ``row``."""
    if abs(t[row]) > PLAUSIBLE["t"]:
        return f"t = {t[row]:.3g} s"
    for fld, x in cols:
        if x is None:
            continue
        for j, name in enumerate(names):
            val = x[row, j]
            if math.isfinite(val) and abs(val) > PLAUSIBLE[fld]:
                return f"{name}.{fld} = {val:.3g}"
    return "?"


def _stamp_order_note(t: np.ndarray, rows: np.ndarray) -> str | None:
    """The stamps' backward steps (where and by how much) in words, None when there are none;
    ``rows``: the row numbers (of the file) of ``t``'s entries."""
    steps = np.diff(t)
    back = np.flatnonzero(steps < 0)
    if not back.size:
        return None
    where = "; ".join(f"row {int(rows[k + 1])} (t = {t[k + 1] - t[0]:.6g} s) by "
                      f"{-steps[k]:.6g} s" for k in back[:3])
    more = f"; {back.size - 3} more" if back.size > 3 else ""
    return (f"stamps go back {back.size} time(s): at {where}{more}; the recording is cut into "
            "segments there (each filtered on its own, no derivative across a jump; the times "
            "are kept as stamped)")


def _finish(t, names, q, v, eff, source, notes, hint: str = "") -> ArmRecording:
    """Clean and check the rows (module docstring, "Cleaning"), put t = 0 at the first row."""
    t = np.asarray(t, dtype=float)
    N = t.size
    cols = [("position", q), ("effort", eff), ("velocity", v)]
    finite, within = _rows_ok(t, PLAUSIBLE["t"])
    infinite = ~np.isnan(t) & ~np.isfinite(t)
    for fld, x in cols:
        if x is not None:
            f, w = _rows_ok(x, PLAUSIBLE[fld])
            finite &= f
            within &= w
            infinite |= np.any(np.isinf(x), axis=1)
    missing = ~finite
    implausible = finite & ~within
    ok = finite & within
    b = {k: _power(x) for k, x in PLAUSIBLE.items()}
    bounds = (f"|position| > {b['position']} rad or m, |velocity| > {b['velocity']} rad/s or "
              f"m/s, |effort| > {b['effort']} N·m or N, |t| > {b['t']} s")
    if not ok.any():
        what = ("a missing (NaN) value" if not implausible.any() else
                f"a missing (NaN) value or one beyond any plausible magnitude ({bounds})")
        raise ValueError(f"{source}: every row has {what}{hint}")
    if missing.any():
        kind = "missing (NaN) or infinite" if infinite.any() else "missing (NaN)"
        notes.append(f"{int(missing.sum())} of {N} rows with a {kind} value dropped (first at "
                     f"row {int(np.argmax(missing))}); the gaps they leave split the data into "
                     f"segments")
    if implausible.any():
        first = int(np.argmax(implausible))
        notes.append(f"{int(implausible.sum())} of {N} rows refused: a value beyond any "
                     f"plausible magnitude ({bounds}; first at row {first}: "
                     f"{_first_implausible(t, names, cols, first)}); dropped like missing values")
    rows = np.flatnonzero(ok)
    # a row with the stamp of the row before: one sample recorded twice; the later one is kept
    same = np.flatnonzero(np.diff(t[rows]) == 0.0)
    if same.size:
        notes.append(f"{same.size} row(s) with the stamp of the row before (first at row "
                     f"{int(rows[same[0] + 1])}): the earlier of each pair dropped")
        keep = np.ones(rows.size, dtype=bool)
        keep[same] = False
        rows = rows[keep]
    # a row repeating every value of the row before at a later stamp: a logger that read a
    # state again before it was updated (a stale sample, stamped late)
    stale = np.ones(rows.size - 1, dtype=bool) if rows.size > 1 else np.zeros(0, dtype=bool)
    for x in (q, eff, v):
        if x is not None and stale.any():
            xr = x[rows]
            stale &= np.all(xr[1:] == xr[:-1], axis=1)
    if stale.any():
        first = int(rows[int(np.argmax(stale)) + 1])
        notes.append(f"{int(stale.sum())} of {N} rows repeat every value of the row before at a "
                     f"later stamp (first at row {first}): a stale sample (the logger read the "
                     f"state again before it was updated), dropped")
        keep = np.ones(rows.size, dtype=bool)
        keep[1:][stale] = False
        rows = rows[keep]
    note = _stamp_order_note(t[rows], rows)
    if note:
        notes.append(note)
    if rows.size < MIN_ROWS:
        raise ValueError(f"{source}: recording too short: {rows.size} complete rows, fewer "
                         f"than {MIN_ROWS}")
    if rows.size == N:
        tt, qq, vv, ee = t, q, v, eff
    else:
        tt, qq, ee = t[rows], q[rows], eff[rows]
        vv = None if v is None else v[rows]
    return ArmRecording(t=tt - tt[0], joint_names=tuple(names), q=qq, v=vv, effort=ee,
                        source=source, warnings=notes)


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


def _read_bag(path: Path, topic: str, joints, max_rows) -> ArmRecording:
    from .joint_state_bag import read_joint_state_bag  # lazy: rosbags only for bag users

    bag = _bag_dir(path)
    r = read_joint_state_bag(bag, topic, joints, max_rows=max_rows)
    src = f"{bag} {r.topic}"
    notes = list(r.notes)
    if r.blocks:
        size = r.blocks[0][1] - r.blocks[0][0]
        notes.append(f"long recording: {r.rows_total} rows; {len(r.stamp_ns)} of them used, in "
                     f"{len(r.blocks)} evenly spaced blocks of {size} consecutive rows "
                     f"(max_rows = {max_rows}: bounded memory; every block at the recorded rate)")
    use = list(r.joint_names)
    have = np.isfinite(r.q) & np.isfinite(r.effort)
    hint = ""
    if have.any(axis=0).all() and not have.all(axis=1).any():
        hint = (f": no stamp has all of {use} — they come in separate messages with different "
                f"stamps (two publishers?); record one JointState with every joint, or select "
                f"the joints of one publisher with joints=")
    sec, nsec = divmod(int(r.stamp_ns[0]), 1_000_000_000)
    t = (r.stamp_ns - r.stamp_ns[0]).astype(float) * 1e-9
    return _finish(t, use, r.q, r.v, r.effort, f"{src} (t = 0 at stamp {sec}.{nsec:09d} s)",
                   notes, hint)


def write_arm_bag(path, rec: ArmRecording, topic: str = "joint_states", t0_ns: int = 0,
                  storage: str = "mcap", receive_ns=None) -> Path:
    """Write ``rec`` as a rosbag2 of sensor_msgs/JointState (what ``ros2 bag record`` makes).

    Parameters
    ----------
    path : str or path-like
        The bag directory to create (it must not exist).
    rec : ArmRecording
        The recording; one message per sample, header stamp ``t0_ns + t`` (integer ns), in the
        order of its rows.
    topic : str
        Topic name (a leading ``/`` is added).
    t0_ns : int
        Stamp of ``t = 0`` [ns].
    storage : {"mcap", "sqlite3"}
        The rosbag2 storage plugin.
    receive_ns : (N,) array_like of int, optional
        The bag's receive time of each message [ns]; default its header stamp.

    Returns
    -------
    pathlib.Path
        The bag directory.

    Raises
    ------
    ValueError
        When ``path`` exists or ``storage`` is unknown.
    """
    from .joint_state_bag import JointStateBagWriter

    stamps = t0_ns + np.rint(np.asarray(rec.t) * 1e9).astype(np.int64)
    with JointStateBagWriter(path, rec.joint_names, topic=topic, storage=storage) as w:
        w.write(stamps, rec.q, rec.v, rec.effort, receive_ns=receive_ns)
    return w.path
