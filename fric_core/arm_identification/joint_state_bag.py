"""sensor_msgs/JointState in rosbag2 bags, read and written fast in bounded memory (issue 23).

Reading (:func:`read_joint_state_bag`), in two passes over the topic's serialized messages:

1. **Scan**: per message its header stamp, receive time and *layout* — the frame_id, the joint
   names and the three array lengths, identified by the message's length and its name bytes (a
   message with the layout of the one before costs a length check and one ``bytes.startswith``).
   Nothing else is decoded. Messages are taken **in the order they were written** (MCAP: record
   order; sqlite3: row id), which is the order the recorder received them: a clock that jumps
   back (the robot's stamps, or the recording computer's own clock: then the receive times jump
   with the stamps) cannot interleave two stretches of the recording, as a sort by time would.
2. **Values**: the messages of the rows kept are decoded a batch at a time, every message of one
   layout through one structured-array view of their joined bytes (no per-message objects).
   Small bags keep their bytes from the scan (:data:`KEEP_BYTES`) and are not read twice.

Rows: one per header stamp. Messages with the same stamp within :data:`MERGE_WINDOW` messages of
each other are one row (two publishers of disjoint joints; a message recorded twice); a stamp
that comes back later, farther away, is a new row (a clock that jumped back), which
:func:`.signals.segments` then cuts at. When every stamp is zero the receive times stand in.

Bounded memory: the scan keeps 18 bytes per message (stamp, receive time, layout index: 65 MB
for an hour of 1 kHz messages; turning the stamps into rows takes ~35 more for a moment, none
when they increase in the order written); the values are only decoded for the rows kept —
``max_rows`` of them, in :data:`BLOCKS` evenly spaced blocks of consecutive rows when the topic has
more (each block at the full rate, so the derivative filter and the sampling step are those of
the recording; a ``fric identify`` of an hour uses about ``max_rows`` of its rows).

Damage: a damaged bag is refused, in one line naming it, where the reading broke and why — what
``rosbags`` raises while opening or reading it (its own errors, ``OverflowError``,
``struct.error``, ``KeyError``, ``ValueError``, ``EOFError``, a compression library's error,
sqlite's), fewer messages than the bag lists (a damaged record length can end a scan silently),
or a message whose bytes are not a JointState (a count running past its end, a name that is not
UTF-8, a nanosecond field ≥ 1e9). Why not use the messages before the damage: damage that broke
the file's structure may as well have changed values that still parse — a bag written without
chunk checksums (``rosbags`` writes none) cannot tell —, and a few wrong positions ruin a fit
(their second derivative is a spike; values beyond :data:`.recording.PLAUSIBLE` are the only
ones caught). A truncated MCAP (a recorder killed) does not open in ``rosbags`` at all.

Encoding: the plain little-endian CDR (XCDR1) that rmw and ``rosbags`` write (the 4-byte
encapsulation header, then the fields in order, each aligned to its size counted from the end of
the header; strings as a uint32 length including the NUL; sequences as a uint32 count, their
doubles aligned to 8 when there are any); big-endian messages are read too.
"""

from __future__ import annotations

import array
import struct
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Iterable, Iterator, Sequence

import numpy as np

__all__ = ["BagRows", "JointStateBagWriter", "read_joint_state_bag", "encode_joint_states",
           "row_blocks",
           "JOINT_STATE", "MERGE_WINDOW", "BLOCKS", "KEEP_BYTES", "BATCH"]

JOINT_STATE = "sensor_msgs/msg/JointState"
#: Messages with the same header stamp at most this many messages apart are one row.
MERGE_WINDOW = 64
#: A topic with more rows than ``max_rows`` is read as this many evenly spaced blocks.
BLOCKS = 20
#: A bag whose topic has at most this many bytes of messages is read once (the bytes kept).
KEEP_BYTES = 64 * 2 ** 20
#: Messages decoded per batch in the second pass.
BATCH = 1 << 16
_LE, _BE = b"\x00\x01", b"\x00\x00"
_FIELDS = ("position", "velocity", "effort")


class BagError(ValueError):
    """The bag cannot be read at all (one line naming the bag and the problem)."""


class _Malformed(Exception):
    """Bytes that are not a JointState; the text says where they broke."""


def _damage_types() -> tuple:
    """What reading a damaged bag raises: rosbags' errors, the standard ones its parsers let
    through, the compression libraries' and sqlite's (those that are installed)."""
    import zlib

    from rosbags.highlevel import AnyReaderError
    from rosbags.rosbag2 import ReaderError
    from rosbags.serde import SerdeError

    types = [AnyReaderError, ReaderError, SerdeError, OverflowError, struct.error, KeyError,
             ValueError, IndexError, EOFError, MemoryError, UnicodeDecodeError, AssertionError,
             zlib.error]
    for mod, name in (("apsw", "Error"), ("sqlite3", "Error"), ("lz4.frame", "LZ4FrameError"),
                      ("zstandard", "ZstdError"), ("compression.zstd", "ZstdError"),
                      ("backports.zstd", "ZstdError")):
        try:
            types.append(getattr(__import__(mod, fromlist=[name]), name))
        except (ImportError, AttributeError):
            pass
    return tuple(types)


def _words(e: BaseException) -> str:
    text = " ".join(str(e).split())
    return f"{type(e).__name__}: {text}" if text else type(e).__name__


# -- layouts --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Layout:
    """One message layout: the bytes from 12 up to the end of the names (frame_id and names,
    with their lengths), the array lengths and where they sit; ``dtype`` views one message."""

    rep: bytes
    length: int
    blob: bytes
    names: tuple
    counts: tuple
    count_at: tuple
    data_at: tuple
    dtype: np.dtype

    @property
    def little(self) -> bool:
        """Little-endian."""
        return self.rep == _LE


def _align(pos: int, size: int) -> int:
    """``pos`` aligned to ``size`` counted from the end of the 4-byte header."""
    return pos + (-(pos - 4) % size)


def _layout(rep: bytes, length: int, blob: bytes, names, counts, names_end: int) -> _Layout:
    e = "<" if rep == _LE else ">"
    pos = names_end
    count_at, data_at = [], []
    fields = {"sec": (f"{e}i4", 4), "nanosec": (f"{e}u4", 8)}
    for fld, count in zip(_FIELDS, counts):
        pos = _align(pos, 4)
        count_at.append(pos)
        fields[f"n_{fld}"] = (f"{e}u4", pos)
        pos += 4
        if count:
            pos = _align(pos, 8)
            fields[fld] = ((f"{e}f8", (count,)), pos)
        data_at.append(pos)
        pos += 8 * count
    if pos > length:
        raise _Malformed(f"the arrays end at byte {pos}, after the message's {length} bytes")
    dtype = np.dtype({"names": list(fields), "formats": [f[0] for f in fields.values()],
                      "offsets": [f[1] for f in fields.values()], "itemsize": length})
    return _Layout(rep=rep, length=length, blob=blob, names=tuple(names), counts=tuple(counts),
                   count_at=tuple(count_at), data_at=tuple(data_at), dtype=dtype)


def _parse_layout(raw: bytes) -> _Layout:
    """The layout of one serialized JointState; :class:`_Malformed` when it is not one."""
    n = len(raw)
    if n < 16:
        raise _Malformed(f"{n} bytes, fewer than the smallest JointState (16)")
    rep = bytes(raw[:2])
    if rep not in (_LE, _BE):
        raise _Malformed(f"representation {rep.hex()} is not plain CDR (XCDR1)")
    u32 = struct.Struct("<I" if rep == _LE else ">I")

    def count(pos: int, what: str) -> tuple[int, int]:
        pos = _align(pos, 4)
        if pos + 4 > n:
            raise _Malformed(f"{what}: the message ends (byte {n}) before its length")
        return u32.unpack_from(raw, pos)[0], pos + 4

    def string(pos: int, what: str) -> tuple[str, int]:
        size, pos = count(pos, what)
        if pos + size > n:
            raise _Malformed(f"{what}: a string of {size} bytes runs past the end ({n} bytes)")
        text = raw[pos:pos + size]
        if size and text[-1] == 0:
            text = text[:-1]
        try:
            return bytes(text).decode("utf-8"), pos + size
        except UnicodeDecodeError:
            raise _Malformed(f"{what}: not UTF-8") from None

    _, pos = string(12, "header.frame_id")
    k, pos = count(pos, "name")
    if 4 * k > n - pos:
        raise _Malformed(f"name: {k} strings cannot fit in the {n - pos} bytes left")
    names = []
    for i in range(k):
        s, pos = string(pos, f"name[{i}]")
        names.append(s)
    names_end = pos
    counts = []
    for fld in _FIELDS:
        c, pos = count(pos, fld)
        if c:
            pos = _align(pos, 8)
            if pos + 8 * c > n:
                raise _Malformed(f"{fld}: {c} doubles run past the end ({n} bytes)")
            pos += 8 * c
        counts.append(c)
    return _layout(rep, n, bytes(raw[12:names_end]), names, counts, names_end)


def _template(names: Sequence[str], counts: Sequence[int]) -> tuple[bytes, _Layout]:
    """Little-endian bytes of a JointState with frame_id "" and these names and array lengths
    (stamps and values zero), and its layout."""
    buf = bytearray(_LE + b"\x00\x00" + bytes(8))

    def put_string(s: bytes) -> None:
        buf.extend(bytes(_align(len(buf), 4) - len(buf)))
        buf.extend(struct.pack("<I", len(s) + 1) + s + b"\x00")

    put_string(b"")
    buf.extend(bytes(_align(len(buf), 4) - len(buf)))
    buf.extend(struct.pack("<I", len(names)))
    for s in names:
        put_string(str(s).encode("utf-8"))
    names_end = len(buf)
    for c in counts:
        buf.extend(bytes(_align(len(buf), 4) - len(buf)))
        buf.extend(struct.pack("<I", c))
        if c:
            buf.extend(bytes(_align(len(buf), 8) - len(buf)))
            buf.extend(bytes(8 * c))
    lay = _layout(_LE, len(buf), bytes(buf[12:names_end]), names, counts, names_end)
    return bytes(buf), lay


def encode_joint_states(stamps_ns, names: Sequence[str], position, velocity=None,
                        effort=None) -> list:
    """Serialized sensor_msgs/JointState messages (plain little-endian CDR, frame_id ""), one
    per stamp, bit-identical to what ``rosbags``' ``serialize_cdr`` makes of the same message.

    Parameters
    ----------
    stamps_ns : (M,) array_like of int
        Header stamps [ns] (≥ 0).
    names : sequence of str
        Joint names (the same in every message).
    position, velocity, effort : (M, n) array_like, optional
        The arrays; None (or zero columns) for an empty field.

    Returns
    -------
    list of bytes
        One message per stamp.
    """
    stamps = np.asarray(stamps_ns, dtype=np.int64).ravel()
    m = stamps.size
    cols = []
    for x in (position, velocity, effort):
        x = np.zeros((m, 0)) if x is None else np.asarray(x, dtype=float).reshape(m, -1)
        cols.append(x)
    blob, lay = _template(names, [c.shape[1] for c in cols])
    rec = np.zeros(m, dtype=lay.dtype)
    rec.view(np.uint8).reshape(m, lay.length)[:] = np.frombuffer(blob, dtype=np.uint8)
    rec["sec"], rec["nanosec"] = np.divmod(stamps, 1_000_000_000)
    for fld, x in zip(_FIELDS, cols):
        if x.shape[1]:
            rec[fld] = x
    data = rec.tobytes()
    L = lay.length
    return [data[i:i + L] for i in range(0, m * L, L)]


class JointStateBagWriter:
    """A rosbag2 bag of one sensor_msgs/JointState topic, written a block of samples at a time
    (``with JointStateBagWriter(path, names) as w: w.write(stamps_ns, q, v, effort)``).

    Parameters
    ----------
    path : str or path-like
        The bag directory to create (it must not exist).
    names : sequence of str
        Joint names.
    topic : str
        Topic name (a leading ``/`` is added).
    storage : {"mcap", "sqlite3"}
        The rosbag2 storage plugin.
    """

    def __init__(self, path, names: Sequence[str], topic: str = "joint_states",
                 storage: str = "mcap"):
        from rosbags.rosbag2 import StoragePlugin, Writer
        from rosbags.typesys import Stores, get_typestore

        self.path = Path(path)
        if self.path.exists():
            raise ValueError(f"{self.path}: exists; a bag is written to a new directory")
        plugins = {"mcap": StoragePlugin.MCAP, "sqlite3": StoragePlugin.SQLITE3}
        if storage not in plugins:
            raise ValueError(f"storage: expected 'mcap' or 'sqlite3', got {storage!r}")
        self.names = [str(n) for n in names]
        self._writer = Writer(self.path, version=9, storage_plugin=plugins[storage])
        self._writer.open()
        self._conn = self._writer.add_connection("/" + topic.lstrip("/"), JOINT_STATE,
                                                 typestore=get_typestore(Stores.ROS2_KILTED))

    def write(self, stamps_ns, position, velocity=None, effort=None, receive_ns=None) -> None:
        """Append one message per stamp (``receive_ns``: the bag's receive times [ns], default
        the stamps); arrays as :func:`encode_joint_states`."""
        stamps = np.asarray(stamps_ns, dtype=np.int64).ravel()
        recv = stamps if receive_ns is None else np.asarray(receive_ns, dtype=np.int64).ravel()
        if recv.shape != stamps.shape:
            raise ValueError(f"receive_ns: expected {stamps.size} times, got {recv.size}")
        write, conn = self._writer.write, self._conn
        for ns, raw in zip(recv.tolist(),
                           encode_joint_states(stamps, self.names, position, velocity, effort)):
            write(conn, ns, raw)

    def close(self) -> None:
        """Finish the bag (metadata.yaml, the MCAP summary)."""
        self._writer.close()

    def __enter__(self) -> "JointStateBagWriter":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# -- reading --------------------------------------------------------------------------------------
@dataclass
class BagRows:
    """What :func:`read_joint_state_bag` read.

    ``stamp_ns`` (R,) int64: the rows' header stamps (the receive times when every stamp is
    zero), rows in the order written; ``q``, ``v``, ``effort`` (R, n) in ``joint_names`` order,
    NaN where no message gave the value (``v`` None when the messages lack velocities);
    ``topic``: as found in the bag; ``messages``: messages read; ``rows_total``: rows in the
    topic (more than R when blocks were selected); ``blocks``: the ``(first, stop)`` row ranges
    kept, None when every row was; ``notes``: what was assumed or left missing, in words.
    """

    stamp_ns: np.ndarray
    joint_names: tuple
    q: np.ndarray
    v: np.ndarray | None
    effort: np.ndarray
    topic: str
    messages: int
    rows_total: int
    blocks: list | None = None
    notes: list = field(default_factory=list)


def _topic_match(topic: str, have: dict) -> str | None:
    for cand in (topic, "/" + topic.lstrip("/"), topic.lstrip("/")):
        if cand in have:
            return cand
    return None


def _zstd():
    """The zstd module rosbags uses (Python 3.14's ``compression.zstd`` or ``backports.zstd``),
    or None."""
    for name in ("compression.zstd", "backports.zstd"):
        try:
            return __import__(name, fromlist=["decompress"])
        except ImportError:
            pass
    return None


def _written_order(reader, topic: str) -> tuple[Iterator, bool]:
    """``(receive_ns, raw)`` of ``topic``'s messages in the order written, and whether that
    order could be had (else rosbags' receive-time order). A bag compressed per message
    (rosbag2's ``--compression-mode message``) has each message's data decompressed, as rosbags'
    own reader does."""
    storages = []
    for r in getattr(reader, "readers", []):
        st = getattr(r, "storage", None)
        subs = getattr(st, "storages", None)
        per_message = getattr(getattr(st, "metadata", None), "compression_mode", None) == "message"
        for sub in (list(subs) if subs is not None else ([st] if st is not None else [])):
            storages.append((sub, per_message))
    zstd = _zstd() if any(pm for _, pm in storages) else None
    usable = storages and all(
        (hasattr(st, "messages_scan") or getattr(st, "dbconn", None) is not None)
        and (zstd is not None or not pm) for st, pm in storages)
    if not usable:
        conns = [c for c in reader.connections if c.topic == topic]
        return ((ts, bytes(raw)) for _, ts, raw in reader.messages(connections=conns)), False

    def gen():
        for st, per_message in storages:
            mine = [c for c in st.connections if c.topic == topic and c.msgtype == JOINT_STATE]
            if not mine:
                continue
            if hasattr(st, "messages_scan"):
                stream = ((ts, raw) for _, ts, raw in st.messages_scan(mine))
            else:
                ids = [c.id for c in mine]
                marks = ",".join("?" * len(ids))
                stream = st.dbconn.execute(
                    f"SELECT timestamp, data FROM messages WHERE topic_id IN ({marks}) "
                    "ORDER BY id", ids)
            if per_message:
                stream = ((ts, zstd.decompress(raw)) for ts, raw in stream)
            yield from stream
    return gen(), True


class _Stop:
    """Where a guarded iteration stopped: the message count and the error, in words."""

    def __init__(self):
        self.error: BaseException | None = None
        self.count = 0


def _guarded(it: Iterable, stop: _Stop, damage: tuple) -> Iterator:
    """``it`` until it ends or raises one of ``damage`` (recorded in ``stop``)."""
    it = iter(it)
    while True:
        try:
            item = next(it)
        except StopIteration:
            return
        except damage as e:  # a damaged file: said where, by the caller
            stop.error = e
            return
        stop.count += 1
        yield item


class _Scan:
    """Pass 1: per message the stamp bytes, receive time and layout index (-1: malformed)."""

    def __init__(self, keep_bytes: int):
        self.stamp_bytes = bytearray()
        self.recv = array.array("q")
        self.lid = array.array("h")
        self.layouts: list[_Layout] = []
        self.raws: list | None = []
        self.keep_bytes = keep_bytes
        self.malformed = 0
        self.first_problem = ""

    def run(self, messages: Iterable) -> None:
        """Scan every ``(receive_ns, raw)``."""
        stamps, recv_append, lid_append = self.stamp_bytes, self.recv.append, self.lid.append
        raws = self.raws
        size = 0
        cur, length, blob = -1, -1, b"\x00"
        zeros = bytes(8)
        for recv, raw in messages:
            if len(raw) == length and raw.startswith(blob, 12):
                lid_append(cur)
                stamps += raw[4:12]
            else:
                lid = self._other(raw)
                lid_append(lid)
                if lid >= 0:
                    cur, lay = lid, self.layouts[lid]
                    length, blob = lay.length, lay.blob
                    stamps += raw[4:12]
                else:
                    stamps += zeros
            recv_append(recv)
            if raws is not None:
                raws.append(raw)
                size += len(raw)
                if size > self.keep_bytes:
                    raws = self.raws = None

    def _other(self, raw: bytes) -> int:
        for i, lay in enumerate(self.layouts):
            if len(raw) == lay.length and raw.startswith(lay.blob, 12):
                return i
        try:
            lay = _parse_layout(raw)
        except _Malformed as e:
            self.malformed += 1
            if not self.first_problem:
                self.first_problem = f"message {len(self.lid)}: {e}"
            return -1
        if len(self.layouts) >= 32000:
            raise BagError("more than 32000 different joint-name lists in one topic")
        self.layouts.append(lay)
        return len(self.layouts) - 1


def _stamps(scan: _Scan, n: int) -> np.ndarray:
    """The header stamp [ns] of each message (int64); a nanosecond field ≥ 1e9 counts the
    message as malformed."""
    lid = np.frombuffer(scan.lid, dtype=np.int16, count=n)
    raw = np.frombuffer(scan.stamp_bytes, dtype=np.uint8, count=8 * n).reshape(n, 8)
    sec = raw[:, :4].copy().view("<i4").ravel().astype(np.int64)
    nsec = raw[:, 4:].copy().view("<u4").ravel().astype(np.int64)
    big = [i for i, lay in enumerate(scan.layouts) if not lay.little]
    if big:
        be = np.isin(lid, big)
        sec[be] = raw[be, :4].copy().view(">i4").ravel()
        nsec[be] = raw[be, 4:].copy().view(">u4").ravel()
    bad_ns = (lid >= 0) & (nsec >= 1_000_000_000)
    if bad_ns.any():
        scan.malformed += int(bad_ns.sum())
        if not scan.first_problem:
            scan.first_problem = (f"message {int(np.argmax(bad_ns))}: header.stamp.nanosec "
                                  "is 1e9 or more")
    sec *= 1_000_000_000
    sec += nsec
    return sec


def _rows(stamp: np.ndarray) -> tuple[np.ndarray | None, np.ndarray]:
    """Group messages into rows: equal stamps at most :data:`MERGE_WINDOW` messages apart.

    Returns ``row_of`` (per message its row; None when every message is its own row, the
    usual bag: stamps increasing in the order written) and the rows' stamps, rows in the order
    of their first message."""
    n = stamp.size
    if n < 2 or bool(np.all(stamp[1:] > stamp[:-1])):
        return None, stamp
    idx = np.arange(n)
    order = np.lexsort((idx, stamp))
    ss = stamp[order]
    ii = idx[order]
    del idx, order
    new = np.ones(n, dtype=bool)
    new[1:] = (ss[1:] != ss[:-1]) | (ii[1:] - ii[:-1] > MERGE_WINDOW)
    first = ii[new]  # the group's first message (sorted by index within a stamp)
    rank = np.empty(first.size, dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(first.size)
    row_stamp = np.empty(first.size, dtype=np.int64)
    row_stamp[rank] = ss[new]
    del first, ss
    row_of = np.empty(n, dtype=np.int64)
    row_of[ii] = rank[np.cumsum(new) - 1]
    return row_of, row_stamp


def row_blocks(rows: int, max_rows: int | None) -> list | None:
    """The rows a long recording is read as: evenly spaced blocks of consecutive rows.

    Parameters
    ----------
    rows : int
        Rows in the recording.
    max_rows : int or None
        Most rows to use (None: every row).

    Returns
    -------
    list of (int, int) or None
        :data:`BLOCKS` ``(first, stop)`` row ranges, equally long, the first at row 0 and the
        last ending at the last row, at most ``max_rows`` rows in all; None when every row fits.
    """
    if max_rows is None or rows <= max_rows:
        return None
    k = min(BLOCKS, max_rows)
    size = max_rows // k
    starts = np.linspace(0, rows - size, k).round().astype(int)
    return [(int(a), int(a) + size) for a in starts]


def read_joint_state_bag(bag: Path, topic: str, joints: Sequence[str] | None,
                         max_rows: int | None = None, keep_bytes: int = KEEP_BYTES) -> BagRows:
    """The rows of a bag's sensor_msgs/JointState topic (module docstring).

    Parameters
    ----------
    bag : pathlib.Path
        The rosbag2 directory.
    topic : str
        The topic (with or without the leading ``/``).
    joints : sequence of str, optional
        Joints to keep, in this order; default those of the first message.
    max_rows : int, optional
        Most rows decoded; more are read as :data:`BLOCKS` evenly spaced blocks.
    keep_bytes : int
        A topic with at most this many bytes is read once (:data:`KEEP_BYTES`).

    Returns
    -------
    BagRows
        Stamps, values, counts and notes.

    Raises
    ------
    ValueError
        One line naming the bag and the problem: it cannot be opened, the topic is missing
        (listing the bag's topics and types) or of another type, it is damaged (module
        docstring, "Damage": where and why), the topic has no messages, the requested joints
        are missing (listing the recorded ones), no positions or efforts.
    """
    from rosbags.highlevel import AnyReader
    from rosbags.typesys import Stores, get_typestore

    damage = _damage_types()
    try:
        reader = AnyReader([bag], default_typestore=get_typestore(Stores.ROS2_KILTED))
        reader.open()
    except damage + (OSError,) as e:
        raise BagError(f"{bag}: cannot open the bag ({_words(e)}): the file is damaged, cut "
                       "short, or not a rosbag2 bag") from None
    try:
        have = {c.topic: c.msgtype for c in reader.connections}
        found = _topic_match(topic, have)
        if found is None:
            listing = ", ".join(f"{k} ({v})" for k, v in sorted(have.items())) or "none"
            raise BagError(f"{bag}: topic {topic!r} is not in the bag; it has: {listing}")
        if have[found] != JOINT_STATE:
            raise BagError(f"{bag}: topic {found!r} has type {have[found]}, expected "
                           f"{JOINT_STATE}")
        expected = sum(c.msgcount for c in reader.connections if c.topic == found)
        stop = _Stop()
        scan = _Scan(keep_bytes)
        messages, written = _written_order(reader, found)
        scan.run(_guarded(messages, stop, damage))  # rosbags' errors: stop says where
        n = stop.count
        return _assemble(bag, found, scan, n, expected, stop, written, joints, max_rows,
                         lambda: _guarded(_written_order(reader, found)[0], _Stop(), damage))
    finally:
        try:
            reader.close()
        except damage:  # closing a damaged file: nothing more to read
            pass


def _assemble(bag, topic, scan: _Scan, n: int, expected: int, stop: _Stop, written: bool,
              joints, max_rows, reread) -> BagRows:
    src = f"{bag} {topic}"
    refuse = ("; refused, as values elsewhere in it may be damaged too: repair the file or "
              "record again")
    if stop.error is not None:
        recv = np.frombuffer(scan.recv, dtype=np.int64, count=n)
        at = f", {(recv[-1] - recv[0]) * 1e-9:.4g} s into the recording" if n else ""
        raise BagError(f"{bag}: damaged: reading {topic} stopped at message {n + 1} of "
                       f"{expected}{at} ({_words(stop.error)}){refuse}")
    if n < expected:  # a damaged record length can end a scan silently
        raise BagError(f"{bag}: damaged: only {n} of the {expected} messages of {topic} the bag "
                       f"lists could be read (the others are lost to damage, or the file was cut "
                       f"short){refuse}")
    if n == 0:
        raise BagError(f"{src}: the topic has no messages")
    stamp = _stamps(scan, n)
    if scan.malformed:
        raise BagError(f"{bag}: damaged: {scan.malformed} of the {n} messages of {topic} are not "
                       f"a sensor_msgs/JointState in plain CDR ({scan.first_problem}){refuse}")
    notes = []
    if not written:
        notes.append("messages read in receive-time order (this rosbags version does not give "
                     "the order written)")
    if not stamp.any():
        stamp = np.frombuffer(scan.recv, dtype=np.int64, count=n).copy()
        notes.append("header stamps all zero: the bag's receive times used")
    scan.stamp_bytes = scan.recv = None  # 16 bytes a message, no longer needed
    row_of, row_stamp = _rows(stamp)
    del stamp
    rows_total = row_stamp.size
    blocks = row_blocks(rows_total, max_rows)
    if blocks is None:
        keep_row = None
        msg_row = np.arange(n) if row_of is None else row_of
        R = rows_total
    else:
        keep_row = np.zeros(rows_total, dtype=bool)
        for a, b in blocks:
            keep_row[a:b] = True
        msg_row = np.cumsum(keep_row) - 1  # the output row of each row, -1 when not kept
        msg_row[~keep_row] = -1
        R = int(keep_row.sum())
        if row_of is not None:
            msg_row = msg_row[row_of]
    del row_of
    lid = np.frombuffer(scan.lid, dtype=np.int16, count=n)

    seen: list = []
    for lay in scan.layouts:
        seen += [name for name in lay.names if name not in seen]
    use = list(joints) if joints is not None else list(scan.layouts[lid[0]].names)
    missing = [j for j in use if j not in seen]
    if missing:
        raise BagError(f"{src}: joint(s) {missing} not in the recording; it has {seen}")
    per_layout = np.bincount(lid[msg_row >= 0], minlength=len(scan.layouts))
    counts = {f: sum(int(c) * lay.counts[k] for c, lay in zip(per_layout, scan.layouts))
              for k, f in enumerate(_FIELDS)}
    for fld in ("position", "effort"):
        if not counts[fld]:
            raise BagError(f"{src}: the JointState messages have no {fld} (empty '{fld}' in "
                           f"all {n} messages); identification needs joint positions and "
                           f"efforts (the effort state interface of ros2_control: add it to "
                           f"the joint_state_broadcaster)")
    col = {name: j for j, name in enumerate(use)}
    m = len(use)
    q, v, eff = (np.full((R, m), np.nan) for _ in range(3))
    stats = {"no_vel": 0, "short": 0, "msgs": 0}

    def flush(lay_id: int, idx: list, raws: list) -> None:
        lay = scan.layouts[lay_id]
        rec = np.frombuffer(b"".join(raws), dtype=lay.dtype)
        rows = msg_row[np.asarray(idx, dtype=np.int64)]
        ok = np.ones(rows.size, dtype=bool)
        for k, fld in enumerate(_FIELDS):
            ok &= rec[f"n_{fld}"] == lay.counts[k]
        if not ok.all():  # the same length and names, other array lengths: parse each
            for i in np.flatnonzero(~ok):
                try:
                    other = _parse_layout(raws[i])
                except _Malformed as e:
                    raise BagError(f"{bag}: damaged: message {idx[i]} of {topic} is not a "
                                   f"sensor_msgs/JointState in plain CDR ({e}){refuse}") from None
                _put(other, np.frombuffer(raws[i], dtype=other.dtype), rows[i:i + 1])
            rec, rows = rec[ok], rows[ok]
        _put(lay, rec, rows)

    def _put(lay: _Layout, rec, rows) -> None:
        stats["msgs"] += rows.size
        if lay.counts[1] == 0:
            stats["no_vel"] += rows.size
        for i, name in enumerate(lay.names):
            j = col.get(name)
            if j is None:
                continue
            if i >= lay.counts[0] or i >= lay.counts[2]:
                stats["short"] += rows.size
                continue
            q[rows, j] = rec["position"][:, i]
            eff[rows, j] = rec["effort"][:, i]
            if i < lay.counts[1]:
                v[rows, j] = rec["velocity"][:, i]

    wanted = (msg_row >= 0).view(np.uint8).tobytes()  # indexed per message: plain ints
    lids = scan.lid
    source = (scan.raws if scan.raws is not None else
              (raw for _, raw in islice(reread(), n)))
    batches: dict = {}
    pending = 0
    for k, raw in enumerate(source):
        if not wanted[k]:
            continue
        b = batches.setdefault(lids[k], ([], []))
        b[0].append(k)
        b[1].append(raw)
        pending += 1
        if pending >= BATCH:
            for key, (idx, raws) in batches.items():
                flush(key, idx, raws)
            batches, pending = {}, 0
    for key, (idx, raws) in batches.items():
        flush(key, idx, raws)
    scan.raws = None

    missing_joint = int(np.sum(~np.all(np.isfinite(q), axis=1)))
    if stats["short"]:
        notes.append(f"{stats['short']} joint entries without a position or effort (shorter "
                     f"arrays than names) left missing")
    if missing_joint:
        notes.append(f"{missing_joint} stamps lack a position or effort of some joint of "
                     f"{use} (a message without that joint)")
    if stats["no_vel"] == stats["msgs"]:
        v = None
        notes.append("no velocities in the messages: derived from the positions")
    elif stats["no_vel"] or np.isnan(v).sum() > np.isnan(q).sum():
        v = None
        notes.append(f"{stats['no_vel']} of {stats['msgs']} messages without velocities: "
                     f"velocities derived from the positions for the whole recording")
    kept = row_stamp if keep_row is None else row_stamp[keep_row]
    return BagRows(stamp_ns=kept, joint_names=tuple(use), q=q, v=v, effort=eff, topic=topic,
                   messages=n, rows_total=rows_total, blocks=blocks,
                   notes=notes)
