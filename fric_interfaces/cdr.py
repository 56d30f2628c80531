"""Hand-written CDR for the 1 kHz loop's two messages: ``sensor_msgs/JointState`` in,
``std_msgs/Float64MultiArray`` out, as the serialized bytes that a raw rclpy subscription
(``create_subscription(..., raw=True)``) delivers and ``Publisher.publish(bytes)`` sends.

Why: an rclpy node that answers each JointState spends much of its CPU per message turning the
bytes into a Python ``JointState`` (one Python object per field, each through its checked
setter) and its answer back into bytes, and numpy calls on one-element arrays are far dearer in
a 1 kHz process than in a tight loop (cold caches between messages): ``bench/loop_latency.py``.
Here a message whose frame_id, joint names and array lengths repeat those of the previous one is
read by one ``struct`` call into plain floats, and the answer's doubles are packed into a
prepared message.

Encoding: the plain CDR of DDS-XTypes 1.3 Sec. 7.4.3 (XCDR version 1), which rmw_fastrtps
writes: a 4-byte encapsulation header (representation ``00 01`` little-endian / ``00 00``
big-endian, then two option bytes), then the fields in declaration order, each primitive aligned
to its size (8 for a double) counted from the end of the header; a string is a uint32 length that
includes the terminating NUL, then its UTF-8 bytes; a sequence is a uint32 count, then its
elements (aligned only when there is one). Padding bytes carry no value and are not checked.
Another representation (XCDR2, parameter lists) is handed to rclpy's ``deserialize_message``.

Bytes that do not form a JointState (truncated, counts beyond the message, a name that is not
UTF-8, a representation rclpy cannot read either) raise :class:`MalformedCdr`, an
:class:`~fric_interfaces.conversions.InputError` with field ``message`` (``kind``
``bad_message``) saying where they broke; nothing else is raised.
"""

from __future__ import annotations

import math
import struct
from operator import itemgetter

import numpy as np

from .conversions import InputError, JointStateReader

__all__ = ["JointStateView", "JointStateDecoder", "MalformedCdr", "Float64MultiArrayEncoder",
           "SerializedFloat64MultiArray"]

_LE, _BE = b"\x00\x01", b"\x00\x00"  # PLAIN_CDR representation identifiers (XCDR1)
_HEADER = 4  # encapsulation header; alignment counts from its end
_U32 = {True: struct.Struct("<I"), False: struct.Struct(">I")}
_STAMP = {True: struct.Struct("<iI"), False: struct.Struct(">iI")}
_F8 = {True: np.dtype("<f8"), False: np.dtype(">f8")}
_FIELDS = ("position", "velocity", "effort")
_EMPTY = np.zeros(0)
_EMPTY.flags.writeable = False


class _Stamp:
    __slots__ = ("sec", "nanosec")

    def __init__(self):
        self.sec = 0
        self.nanosec = 0


class _Header:
    __slots__ = ("stamp", "frame_id")

    def __init__(self):
        self.stamp = _Stamp()
        self.frame_id = ""


class JointStateView:
    """A decoded ``sensor_msgs/JointState`` under the message's own field names:
    ``header.stamp.sec``, ``header.stamp.nanosec``, ``header.frame_id``, ``name`` (a list of
    str; the decoder hands out the same list while the names do not change: do not modify it),
    ``position``, ``velocity``, ``effort`` (float64 arrays, read-only views of the received
    bytes, made when first read). :class:`JointStateDecoder` reuses one view for every message:
    copy what must outlive the next one (``JointStateReader`` does)."""

    __slots__ = ("header", "name", "picked", "_data", "_seqs", "_arrays")

    def __init__(self):
        self.header = _Header()
        self.name: list = []
        self.picked: tuple | None = None  # the decoder's reader's values, when read in one go
        self._data = b""
        self._seqs: tuple = ((0, 0), (0, 0), (0, 0))  # (count, offset) per array field
        self._arrays: list = [None, None, None]

    def _array(self, i: int) -> np.ndarray:
        a = self._arrays[i]
        if a is None:
            count, off = self._seqs[i]
            data = self._data
            a = np.frombuffer(data, _F8[data[:2] == _LE], count, off) if count else _EMPTY
            self._arrays[i] = a
        return a

    position = property(lambda self: self._array(0))
    velocity = property(lambda self: self._array(1))
    effort = property(lambda self: self._array(2))


class MalformedCdr(InputError):
    """Bytes that are not a JointState: an :class:`InputError` of field ``message`` (``kind``
    ``bad_message``) whose text is formatted when read (a stream of malformed messages costs
    no more than a stream of good ones)."""

    kind = "bad_message"  # what InputError.kind says for field "message" and these texts

    def __init__(self, template: str, *args):
        Exception.__init__(self)
        self.field = "message"
        self._text = (template, args)

    @property
    def reason(self) -> str:
        template, args = self._text
        return "malformed CDR JointState: " + template.format(*args)

    def __str__(self) -> str:
        return f"message: {self.reason}"


_malformed = MalformedCdr


class _Layout:
    """One message layout (frame_id, names and array lengths fixed) read by one struct call."""

    __slots__ = ("blob", "frame", "names", "end", "struct", "counts", "expected", "pick")

    def __init__(self, blob: bytes, frame: str, names: list, seqs,
                 reader: JointStateReader | None):
        self.blob, self.frame, self.names = blob, frame, names
        fmt = ["<iI", f"{len(blob)}x"]  # stamp, then frame_id and names skipped
        pos = 12 + len(blob)
        items = 2
        self.counts = []
        starts = []
        for count, off in seqs:
            count_at = _count_offset(pos)
            fmt.append(f"{count_at - pos}xI")
            self.counts.append(items)
            items += 1
            pos = count_at + 4
            if count:
                fmt.append(f"{off - pos}x{count}d")
                pos = off + 8 * count
            starts.append(items)
            items += count
        self.end = pos
        self.struct = struct.Struct("".join(fmt))
        self.expected = tuple(c for c, _ in seqs)
        self.pick = None
        if reader is not None:
            index = {nm: i for i, nm in enumerate(names)}
            if len(index) == len(names) and all(j in index for j in reader.joint_names) and all(
                    seqs[_FIELDS.index(f)][0] == len(names) for f in reader.fields):
                idx = [starts[_FIELDS.index(f)] + index[j]
                       for f in reader.fields for j in reader.joint_names]
                self.pick = itemgetter(*idx) if len(idx) > 1 else (lambda t, i=idx[0]: (t[i],))


def _count_offset(pos: int) -> int:
    return pos + (-pos % 4)  # (pos - _HEADER) % 4 == pos % 4


class JointStateDecoder:
    """``decode(data)`` → :class:`JointStateView` of serialized ``sensor_msgs/JointState``
    bytes (or, for a representation other than plain CDR, the ``JointState`` rclpy's
    ``deserialize_message`` makes of them). Raises ``InputError`` (field ``message``) for bytes
    that are not a JointState.

    With ``reader`` (a :class:`~fric_interfaces.conversions.JointStateReader`), :meth:`read`
    is ``reader.read`` of a decoded message: the same values in the reader's arrays, the same
    errors. A little-endian message with the layout of the previous one (the same bytes for
    frame_id and names, the same array lengths) is decoded by one struct call, which also
    picks the reader's joints as plain floats (``view.picked``); anything else takes the
    general path (names decoded, arrays as views of the bytes), and ``reader.read`` of the view
    checks it.
    """

    def __init__(self, reader: JointStateReader | None = None):
        self.reader = reader
        self.view = JointStateView()
        self._layout: _Layout | None = None
        self._blob: bytes | None = None  # frame_id + names as last decoded (their bytes)
        self._blob_le = True
        self._frame = ""
        self._names: list = []

    def decode(self, data: bytes):
        n = len(data)
        view = self.view
        lay = self._layout
        if lay is not None and n >= lay.end and data.startswith(lay.blob, 12) \
                and data[:2] == _LE:
            t = lay.struct.unpack_from(data, 4)
            c = lay.counts
            if (t[c[0]], t[c[1]], t[c[2]]) == lay.expected:
                stamp = view.header.stamp
                stamp.sec = t[0]
                stamp.nanosec = t[1]
                view.header.frame_id = lay.frame
                view.name = lay.names
                view._data = data
                view._arrays = [None, None, None]
                view.picked = lay.pick(t) if lay.pick is not None else None
                return view
        if n < 16:  # header, stamp, the frame_id's length
            raise _malformed("{} bytes, shorter than the smallest JointState (16)", n)
        rep = data[:2]
        if rep == _LE:
            le = True
        elif rep == _BE:
            le = False
        else:
            return _fallback(data)
        stamp = view.header.stamp
        stamp.sec, stamp.nanosec = _STAMP[le].unpack_from(data, 4)
        blob = self._blob
        if blob is not None and le == self._blob_le and data.startswith(blob, 12):
            off = 12 + len(blob)
        else:
            off = self._decode_names(data, le)
        u32 = _U32[le]
        seqs = []
        for field in _FIELDS:
            count, off = _count(data, off, u32, field)
            if count:
                off += -(off - _HEADER) % 8
                end = off + 8 * count
                if end > n:
                    raise _malformed("{}: {} doubles at byte {} run past the end ({} bytes)",
                                     field, count, off, n)
                seqs.append((count, off))
                off = end
            else:
                seqs.append((0, off))
        view.header.frame_id = self._frame
        view.name = self._names
        view.picked = None
        view._data = data
        view._seqs = tuple(seqs)
        view._arrays = [None, None, None]
        self._layout = (_Layout(self._blob, self._frame, self._names, seqs, self.reader)
                        if le else None)
        return view

    def read(self, msg) -> None:
        """``reader.read(msg)``: from the values picked by :meth:`decode` when they are there
        and finite, else by the reader itself (which raises what it raises)."""
        reader = self.reader
        vals = msg.picked if msg is self.view else None
        if vals is None or not math.isfinite(sum(vals)):  # NaN, inf (or an overflow): check
            reader.read(msg)
            return
        n = len(reader.joint_names)
        k = 0
        for field in reader.fields:
            arr = getattr(reader, field)
            for i in range(n):
                arr[i] = vals[k]
                k += 1

    def _decode_names(self, data: bytes, le: bool) -> int:
        """Decode frame_id and name from byte 12; cache them and their bytes; the end offset."""
        u32 = _U32[le]
        frame, off = _string(data, 12, u32, "header.frame_id")
        count, off = _count(data, off, u32, "name")
        if count * 4 > len(data) - off:  # every string takes at least its 4-byte length
            raise _malformed("name: {} strings cannot fit in the {} bytes left", count,
                             len(data) - off)
        names = []
        for i in range(count):
            s, off = _string(data, off, u32, f"name[{i}]")
            names.append(s)
        self._blob, self._blob_le = bytes(data[12:off]), le
        self._frame, self._names = frame, names
        return off


def _count(data: bytes, off: int, u32: struct.Struct, field: str) -> tuple[int, int]:
    off = _count_offset(off)
    if off + 4 > len(data):
        raise _malformed("{}: the message ends at byte {}, before its length", field,
                         len(data))
    return u32.unpack_from(data, off)[0], off + 4


def _string(data: bytes, off: int, u32: struct.Struct, field: str) -> tuple[str, int]:
    length, off = _count(data, off, u32, field)
    end = off + length
    if end > len(data):
        raise _malformed("{}: a string of {} bytes at byte {} runs past the end ({} bytes)",
                         field, length, off, len(data))
    raw = data[off:end - 1] if length and data[end - 1] == 0 else data[off:end]
    try:
        return raw.decode("utf-8"), end
    except UnicodeDecodeError as e:
        raise _malformed("{}: not UTF-8 ({} at byte {})", field, e.reason,
                         off + e.start) from None


def _fallback(data: bytes):
    """A representation this module does not decode: rclpy's own deserializer, if it can."""
    from rclpy.serialization import deserialize_message
    from sensor_msgs.msg import JointState

    try:
        return deserialize_message(data, JointState)
    except Exception as e:  # noqa: BLE001 - whatever the rmw says: a rejected input, named
        raise _malformed("representation {} not decoded here, and rclpy's deserializer "
                         "failed: {}", data[:2].hex(), e) from None


class SerializedFloat64MultiArray(bytes):
    """The CDR bytes of a ``std_msgs/Float64MultiArray`` (what ``Publisher.publish`` sends as
    is), whose ``data`` reads the values back (a list of float), as the message's field would."""

    __slots__ = ()

    @property
    def data(self) -> list[float]:
        n = struct.unpack_from("<I", self, 12)[0]
        return list(struct.unpack_from(f"<{n}d", self, 20)) if n else []


class Float64MultiArrayEncoder:
    """``fill(values)`` → the CDR of ``std_msgs/Float64MultiArray(data=values)`` (empty
    layout), little-endian: a prepared message of ``n`` doubles whose values are packed in
    place; a :class:`SerializedFloat64MultiArray` for ``Publisher.publish``. Another length
    than ``n`` prepares a new template first (not on the hot path)."""

    def __init__(self, n: int = 0):
        self._prepare(n)

    def _prepare(self, n: int) -> None:
        # header | layout.dim count 0 | layout.data_offset 0 | data count | pad to 8 | doubles
        buf = bytearray(16 + (4 + 8 * n if n else 0))
        buf[0:4] = _LE + b"\x00\x00"
        struct.pack_into("<I", buf, 12, n)
        self.n = n
        self._buf = buf
        self._pack = struct.Struct(f"<{n}d").pack_into if n else lambda *_: None

    def fill(self, values) -> SerializedFloat64MultiArray:
        if isinstance(values, np.ndarray):
            values = values.tolist()  # plain floats pack faster than numpy scalars
        if len(values) != self.n:
            self._prepare(len(values))
        self._pack(self._buf, 20, *values)
        return SerializedFloat64MultiArray(self._buf)
