"""The recorder's topics decoded from their serialized bytes into fixed records, a batch of
messages at a time (issue 24 item 9). Pure numpy, no ROS.

Why: after a long run ``fric_recorder`` used to read its whole bag back at shutdown, one message
at a time through rosbags' deserializer (15.4 s for 540 s of a 1 kHz haptic run, 2.16 M
messages), and the launch's shutdown budget ran out (ros2 launch: SIGTERM 5 s after SIGINT,
SIGKILL 5 s later). Now the recorder decodes each batch it writes to the bag with these
decoders and appends the records to a :class:`Spool` beside the bag; at shutdown it reads the
spool back (milliseconds) instead of the bag. :func:`fric_nodes.tools.run_report.read_bag` (and
so ``fric report``) decodes a bag with the same decoders, so both give the same arrays.

Records (one per message, numpy structured arrays, :data:`RECORDS`): ``rx`` (receive time, ns),
``ok`` (1; 0: skipped, a joint_states without the joint or its position or velocity, a command
without entry ``command_index``; :data:`MALFORMED`: bytes that are not the type), and per topic
``stamp`` (header stamp, ns), the joint's ``position``, ``velocity``, ``effort`` (NaN when the
message has none) and ``layout`` (the message's layout, an index into the decoder's
``layouts``: its joint names), or the ``value`` (command entry, wrench ``force.x``, hand force).

Decoding: plain CDR (XCDR1), as rmw and rosbags write it, either byte order. A message's
*layout* is what fixes where its values sit: the representation, the frame_id, the joint names
and array lengths (a JointState), the dimensions and length of a command. Each message of a
batch is matched against the known layouts with ``bytes.startswith`` on those bytes (the last
layout first); every message of one layout is then read by one numpy view of their joined bytes.
A message of a new layout is parsed once (:data:`MAX_LAYOUTS` at most: beyond, and for bytes
that are not the type, the message counts as malformed and is skipped).
"""

from __future__ import annotations

import abc
import shutil
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple, Sequence

import numpy as np

__all__ = ["RECORDS", "MALFORMED", "MAX_LAYOUTS", "Decoder", "JointStates", "Commands", "Wrench",
           "Float64", "decoder_for", "MemoryStore", "Spool", "Columns", "window_start"]

_LE, _BE = b"\x00\x01", b"\x00\x00"
#: ``ok`` of a message whose bytes are not the type
MALFORMED = 2
#: most layouts one decoder keeps (a stream whose every message has new joint names: malformed)
MAX_LAYOUTS = 1024

_JS = np.dtype([("rx", "<i8"), ("stamp", "<i8"), ("position", "<f8"), ("velocity", "<f8"),
                ("effort", "<f8"), ("layout", "<i4"), ("ok", "u1")])
_VALUE = np.dtype([("rx", "<i8"), ("value", "<f8"), ("ok", "u1")])
_STAMPED = np.dtype([("rx", "<i8"), ("stamp", "<i8"), ("value", "<f8"), ("ok", "u1")])
#: the record of each recorded topic (run_report's keys)
RECORDS = {"joint_states": _JS, "effort": _VALUE, "setpoint": _VALUE, "wrench": _STAMPED,
           "hand": _VALUE}


class _Malformed(Exception):
    """Bytes that are not the message type; the text says where they broke."""


class _JointStateInfo(NamedTuple):
    names: tuple
    counts: tuple  # position, velocity, effort lengths


def _align(pos: int, size: int) -> int:
    """``pos`` aligned to ``size`` counted from the end of the 4-byte encapsulation header."""
    return pos + (-(pos - 4) % size)


@dataclass(frozen=True)
class _Layout:
    """A message layout: its length, the bytes that fix it (``(offset, bytes)`` pairs), the
    numpy dtype that views one message, and what the decoder needs of it (``info``)."""

    length: int
    sig: tuple
    dtype: np.dtype
    info: object = None

    def matches(self, raw: bytes) -> bool:
        """``raw`` has this layout."""
        if len(raw) != self.length:
            return False
        for at, part in self.sig:
            if not raw.startswith(part, at):
                return False
        return True


class _Reader:
    """Bounds-checked reading of one message's CDR (raises :class:`_Malformed`)."""

    def __init__(self, raw: bytes):
        self.raw, self.n = raw, len(raw)
        rep = bytes(raw[:2])
        if self.n < 4 or rep not in (_LE, _BE):
            raise _Malformed(f"representation {rep.hex()} is not plain CDR (XCDR1)")
        self.e = "<" if rep == _LE else ">"
        self.u32 = struct.Struct(self.e + "I")

    def count(self, pos: int, what: str) -> tuple[int, int]:
        pos = _align(pos, 4)
        if pos + 4 > self.n:
            raise _Malformed(f"{what}: the message ends (byte {self.n}) before its length")
        return self.u32.unpack_from(self.raw, pos)[0], pos + 4

    def skip_string(self, pos: int, what: str) -> int:
        size, pos = self.count(pos, what)
        if pos + size > self.n:
            raise _Malformed(f"{what}: a string of {size} bytes runs past the end")
        return pos + size

    def string(self, pos: int, what: str) -> tuple[str, int]:
        end = self.skip_string(pos, what)
        start = _align(pos, 4) + 4
        text = self.raw[start:end]
        if text and text[-1] == 0:
            text = text[:-1]
        try:
            return bytes(text).decode("utf-8"), end
        except UnicodeDecodeError:
            raise _Malformed(f"{what}: not UTF-8") from None

    def doubles_at(self, pos: int, count: int, what: str) -> int:
        pos = _align(pos, 8)
        if pos + 8 * count > self.n:
            raise _Malformed(f"{what}: {count} doubles run past the end ({self.n} bytes)")
        return pos


def _dtype(length: int, fields: dict) -> np.dtype:
    return np.dtype({"names": list(fields), "formats": [f[0] for f in fields.values()],
                     "offsets": [f[1] for f in fields.values()], "itemsize": length})


class Decoder(abc.ABC):
    """Serialized messages of one topic → records (:meth:`decode`); subclasses parse a layout
    (``_parse``) and fill the records of one layout's messages (``_fill``)."""

    record: np.dtype = _VALUE

    def __init__(self):
        self.layouts: list[_Layout] = []
        self._last = -1
        self.malformed = 0
        self.first_problem = ""

    def decode(self, rx: Sequence[int], raws: Sequence[bytes]) -> np.ndarray:
        """The records of ``raws`` (received at ``rx``, ns; bytes, or buffers such as rosbags'
        ``serialize_cdr`` memoryviews), in their order."""
        raws = [r if type(r) is bytes else bytes(r) for r in raws]
        out = np.zeros(len(raws), self.record)
        out["rx"] = rx
        groups: dict[int, list[int]] = {}
        last = self._last
        lay = self.layouts[last] if last >= 0 else None
        for k, raw in enumerate(raws):
            if lay is not None and lay.matches(raw):
                lid = last
            else:
                lid = self._find(raw, k)
                if lid >= 0:
                    last, lay = lid, self.layouts[lid]
            group = groups.get(lid)
            if group is None:
                groups[lid] = [k]
            else:
                group.append(k)
        self._last = last
        for lid, idx in groups.items():
            at = np.asarray(idx, dtype=np.intp)
            if lid < 0:
                self._skip(out, at)
                out["ok"][at] = MALFORMED
                continue
            lay = self.layouts[lid]
            rec = np.frombuffer(b"".join([raws[i] for i in idx]), dtype=lay.dtype)
            self._fill(out, at, lid, lay, rec)
        return out

    def _find(self, raw: bytes, k: int) -> int:
        for i, lay in enumerate(self.layouts):
            if lay.matches(raw):
                return i
        try:
            if len(self.layouts) >= MAX_LAYOUTS:
                raise _Malformed(f"more than {MAX_LAYOUTS} message layouts")
            lay = self._parse(raw)
        except _Malformed as e:
            self.malformed += 1
            self.first_problem = self.first_problem or str(e)
            return -1
        self.layouts.append(lay)
        return len(self.layouts) - 1

    def _skip(self, out: np.ndarray, at: np.ndarray) -> None:
        for name in out.dtype.names:
            if out.dtype[name].kind == "f":
                out[name][at] = np.nan
        out["ok"][at] = 0

    @abc.abstractmethod
    def _parse(self, raw: bytes) -> _Layout:
        """The layout of message ``raw`` (its field offsets); ``_Malformed`` naming the field
        a message of this type cannot have."""

    @abc.abstractmethod
    def _fill(self, out, at, lid, lay, rec) -> None:
        """Write the records ``rec`` of layout ``lid`` (``lay``) into ``out`` at rows ``at``."""


class JointStates(Decoder):
    """sensor_msgs/JointState: ``stamp``, ``layout``, and with ``joint`` that joint's
    ``position``, ``velocity``, ``effort`` (``ok`` 0 when the message lacks the joint, its
    position or its velocity; effort NaN when missing). Without ``joint`` (an arm recording)
    every well-formed message is ``ok`` and the values are NaN: the layout (``names(lid)``,
    ``counts(lid)``) says what it carried."""

    record = _JS

    def __init__(self, joint: str | None = None):
        super().__init__()
        self.joint = joint

    def names(self, lid: int) -> tuple:
        """The joint names of layout ``lid``."""
        return self.layouts[lid].info.names

    def counts(self, lid: int) -> tuple:
        """The (position, velocity, effort) lengths of layout ``lid``."""
        return self.layouts[lid].info.counts

    def _parse(self, raw: bytes) -> _Layout:
        r = _Reader(raw)
        if r.n < 16:
            raise _Malformed(f"{r.n} bytes, fewer than the smallest JointState (16)")
        fields = {"sec": (r.e + "i4", 4), "nanosec": (r.e + "u4", 8)}
        pos = r.skip_string(12, "header.frame_id")
        k, pos = r.count(pos, "name")
        if 4 * k > r.n - pos:
            raise _Malformed(f"name: {k} strings cannot fit in the {r.n - pos} bytes left")
        names = []
        for i in range(k):
            name, pos = r.string(pos, f"name[{i}]")
            names.append(name)
        sig = [(0, bytes(raw[:4])), (12, bytes(raw[12:pos]))]
        counts = []
        for field in ("position", "velocity", "effort"):
            count, pos = r.count(pos, field)
            sig.append((pos - 4, bytes(raw[pos - 4:pos])))
            if count:
                pos = r.doubles_at(pos, count, field)
                fields[field] = ((r.e + "f8", (count,)), pos)
                pos += 8 * count
            counts.append(count)
        return _Layout(r.n, tuple(sig), _dtype(r.n, fields),
                       _JointStateInfo(tuple(names), tuple(counts)))

    def _fill(self, out, at, lid, lay, rec) -> None:
        js = lay.info
        out["layout"][at] = lid
        out["stamp"][at] = rec["sec"].astype(np.int64) * 1_000_000_000 + rec["nanosec"]
        if self.joint is None:
            out["ok"][at] = 1
            for name in ("position", "velocity", "effort"):
                out[name][at] = np.nan
            return
        ji = js.names.index(self.joint) if self.joint in js.names else -1
        n_pos, n_vel, n_eff = js.counts
        if ji < 0 or n_pos <= ji or n_vel <= ji:
            self._skip(out, at)
            return
        out["position"][at] = rec["position"][:, ji]
        out["velocity"][at] = rec["velocity"][:, ji]
        out["effort"][at] = rec["effort"][:, ji] if n_eff > ji else np.nan
        out["ok"][at] = 1


class Commands(Decoder):
    """std_msgs/Float64MultiArray: entry ``index`` of ``data`` (``ok`` 0 when it is shorter)."""

    def __init__(self, index: int = 0):
        super().__init__()
        self.index = int(index)

    def _parse(self, raw: bytes) -> _Layout:
        r = _Reader(raw)
        dims, pos = r.count(4, "layout.dim")
        if 12 * dims > r.n - pos:
            raise _Malformed(f"layout.dim: {dims} entries cannot fit in the message")
        for i in range(dims):
            pos = r.skip_string(pos, f"layout.dim[{i}].label")
            _, pos = r.count(pos, f"layout.dim[{i}].size")
            _, pos = r.count(pos, f"layout.dim[{i}].stride")
        _, pos = r.count(pos, "layout.data_offset")
        count, end = r.count(pos, "data")
        fields = {}
        if count:
            data_at = r.doubles_at(end, count, "data")
            fields["data"] = ((r.e + "f8", (count,)), data_at)
        return _Layout(r.n, ((0, bytes(raw[:end])),), _dtype(r.n, fields), count)

    def _fill(self, out, at, lid, lay, rec) -> None:
        if lay.info <= self.index:
            self._skip(out, at)
            return
        out["value"][at] = rec["data"][:, self.index]
        out["ok"][at] = 1


class Wrench(Decoder):
    """geometry_msgs/WrenchStamped: ``stamp`` and ``force.x`` (the load cell's axis)."""

    record = _STAMPED

    def _parse(self, raw: bytes) -> _Layout:
        r = _Reader(raw)
        if r.n < 16:
            raise _Malformed(f"{r.n} bytes, fewer than a header")
        frame_end = r.skip_string(12, "header.frame_id")
        fx = r.doubles_at(frame_end, 6, "wrench")
        fields = {"sec": (r.e + "i4", 4), "nanosec": (r.e + "u4", 8), "fx": (r.e + "f8", fx)}
        return _Layout(r.n, ((0, bytes(raw[:4])), (12, bytes(raw[12:frame_end]))),
                       _dtype(r.n, fields))

    def _fill(self, out, at, lid, lay, rec) -> None:
        out["stamp"][at] = rec["sec"].astype(np.int64) * 1_000_000_000 + rec["nanosec"]
        out["value"][at] = rec["fx"]
        out["ok"][at] = 1


class Float64(Decoder):
    """std_msgs/Float64: ``data``."""

    def _parse(self, raw: bytes) -> _Layout:
        r = _Reader(raw)
        at = r.doubles_at(4, 1, "data")
        return _Layout(r.n, ((0, bytes(raw[:4])),), _dtype(r.n, {"v": (r.e + "f8", at)}))

    def _fill(self, out, at, lid, lay, rec) -> None:
        out["value"][at] = rec["v"]
        out["ok"][at] = 1


def decoder_for(key: str, joint: str | None = "stage_joint", command_index: int = 0) -> Decoder:
    """The decoder of a recorded topic (run_report's key): ``joint_states`` (of ``joint``; None:
    every joint, an arm recording), ``effort`` and ``setpoint`` (entry ``command_index``),
    ``wrench``, ``hand``."""
    if key == "joint_states":
        return JointStates(joint)
    if key in ("effort", "setpoint"):
        return Commands(command_index)
    if key == "wrench":
        return Wrench()
    if key == "hand":
        return Float64()
    raise ValueError(f"no decoder for {key!r}")


class MemoryStore:
    """Records kept in memory (a bag read back: the reader already chose the window)."""

    def __init__(self):
        self._parts: dict[str, list[np.ndarray]] = {}

    def append(self, key: str, records: np.ndarray) -> None:
        """Keep ``records`` of topic ``key``."""
        if records.size:
            self._parts.setdefault(key, []).append(records)

    def records(self, key: str, start_ns: int | None = None) -> np.ndarray:
        """Every record of ``key`` received at or after ``start_ns``, in order."""
        parts = self._parts.get(key)
        rec = np.concatenate(parts) if parts else np.zeros(0, RECORDS[key])
        return rec if start_ns is None else rec[rec["rx"] >= start_ns]


class Spool:
    """Records appended to files in ``path`` as the recorder writes the bag, in segments of
    ``segment_ns`` of receive time; with ``keep_ns`` > 0 a segment ending more than
    ``keep_ns`` before the newest record is deleted (the disk used stays bounded by the
    analysis window: 45 bytes a joint_states, 25 a wrench, 17 a command or hand force). A spool
    at ``path`` (left by a recorder that was killed) is replaced; anything else there is a
    ``ValueError``."""

    def __init__(self, path: str | Path, keep_ns: int = 0, segment_ns: int = 60 * 10**9):
        self.path = Path(path)
        if self.path.exists():
            ours = self.path.is_dir() and all(
                d.is_dir() and len(d.name) == 6 and d.name.isdigit()
                and all(f.suffix == ".bin" for f in d.iterdir()) for d in self.path.iterdir())
            if not ours:
                raise ValueError(f"{self.path} exists and is not a spool of fric_recorder; move "
                                 f"it or choose another out_dir")
            shutil.rmtree(self.path)
        self.path.mkdir(parents=True)
        self.keep_ns, self.segment_ns = int(keep_ns), int(segment_ns)
        self._segments: list[list] = []  # [directory, first rx, last rx, {key: open file}]
        self._made = 0  # segments made (their names)

    def append(self, key: str, records: np.ndarray) -> None:
        """Append ``records`` (of topic ``key``, in receive order) to the current segment."""
        if not records.size:
            return
        first, last = int(records["rx"][0]), int(records["rx"][-1])
        seg = self._segments[-1] if self._segments else None
        if seg is None or first - seg[1] >= self.segment_ns:
            self._rotate(first)
            seg = self._segments[-1]
        seg[2] = max(seg[2], last)
        fh = seg[3].get(key)
        if fh is None:
            fh = seg[3][key] = open(seg[0] / f"{key}.bin", "ab")
        fh.write(records.tobytes())

    def _rotate(self, first: int) -> None:
        for seg in self._segments[-1:]:
            for fh in seg[3].values():
                fh.close()
            seg[3] = {}
        d = self.path / f"{self._made:06d}"
        d.mkdir()
        self._made += 1
        self._segments.append([d, first, first, {}])
        if self.keep_ns > 0:
            newest = max(s[2] for s in self._segments)
            while len(self._segments) > 1 and self._segments[0][2] < newest - self.keep_ns:
                shutil.rmtree(self._segments.pop(0)[0])

    def records(self, key: str, start_ns: int | None = None) -> np.ndarray:
        """Every record of ``key`` received at or after ``start_ns``, in order."""
        parts = []
        for d, _, last, files in self._segments:
            if start_ns is not None and last < start_ns:
                continue
            fh = files.get(key)
            if fh is not None:
                fh.flush()
            p = d / f"{key}.bin"
            if p.exists():
                parts.append(np.fromfile(p, dtype=RECORDS[key]))
        rec = np.concatenate(parts) if parts else np.zeros(0, RECORDS[key])
        return rec if start_ns is None else rec[rec["rx"] >= start_ns]

    def remove(self) -> None:
        """Close and delete the spool."""
        for seg in self._segments:
            for fh in seg[3].values():
                fh.close()
        self._segments = []
        shutil.rmtree(self.path, ignore_errors=True)


class Columns:
    """The decoders of a recording's topics and the store of their records: :meth:`push` one
    serialized message (two list appends: the recorder's drain calls it per message),
    :meth:`flush` decodes what was pushed, a batch per topic, into the store (by itself once
    ``batch`` messages wait). ``first_ns``/``last_ns``: the earliest and latest receive time
    flushed (None before any)."""

    def __init__(self, decoders: dict[str, Decoder], store, batch: int = 2048):
        self.decoders, self.store, self.batch = decoders, store, int(batch)
        self._rx: dict[str, list] = {k: [] for k in decoders}
        self._raw: dict[str, list] = {k: [] for k in decoders}
        self._pending = 0
        self.first_ns: int | None = None
        self.last_ns: int | None = None

    def push(self, key: str, rx_ns: int, raw: bytes) -> None:
        """One message of topic ``key`` received at ``rx_ns``."""
        self._rx[key].append(rx_ns)
        self._raw[key].append(raw)
        self._pending += 1
        if self._pending >= self.batch:
            self.flush()

    def flush(self) -> None:
        """Decode every pushed message into the store."""
        for key, raws in self._raw.items():
            if not raws:
                continue
            rec = self.decoders[key].decode(self._rx[key], raws)
            self._rx[key], self._raw[key] = [], []
            lo, hi = int(rec["rx"].min()), int(rec["rx"].max())
            self.first_ns = lo if self.first_ns is None else min(self.first_ns, lo)
            self.last_ns = hi if self.last_ns is None else max(self.last_ns, hi)
            self.store.append(key, rec)
        self._pending = 0

    def records(self, key: str, start_ns: int | None = None) -> np.ndarray:
        """The records of ``key`` received at or after ``start_ns`` (:meth:`flush` first)."""
        self.flush()
        return self.store.records(key, start_ns)


def window_start(start_ns: int, end_ns: int, window: float) -> tuple[int | None, dict | None]:
    """Where the last ``window`` seconds of a recording from ``start_ns`` to ``end_ns`` (ns, the
    end just after its last message, as rosbags' ``end_time``) begin, and the ``window`` entry
    its summary carries: ``(None, None)`` when the recording is not longer (or ``window`` is
    0)."""
    recorded = (end_ns - start_ns) * 1e-9
    if window > 0.0 and recorded > window:
        return end_ns - int(window * 1e9), {"analysed_s": window, "recorded_s": recorded}
    return None, None
