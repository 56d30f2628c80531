"""The haptic stage's serial protocol: small binary frames with a CRC (docs/serial_protocol.md).

Pure Python (struct, binascii); no ROS, no pyserial. Two frame types:

* **state** (device → host), one per servo cycle: sequence number, device time, position,
  velocity, force, acceleration, applied motor force, the sequence number of the last command
  applied, status flags;
* **command** (host → device): sequence number, mode (idle/force/position), value.

Wire format (all multi-byte fields little-endian)::

    0xA5 0x5A | LEN (u8) | TYPE (u8) | PAYLOAD (LEN-1 bytes) | CRC16 (u16)

LEN counts TYPE and PAYLOAD; the CRC is CRC-16/CCITT-FALSE (polynomial 0x1021, initial value 0xFFFF,
no reflection, no final XOR; check value 0x29B1 for b"123456789") over LEN, TYPE and PAYLOAD.

:class:`StreamDecoder` takes arbitrary byte chunks, resynchronises after garbage, rejects bad
lengths, checksums, types and values (counting each kind), and detects sequence gaps.
"""

from __future__ import annotations

import binascii
import math
import struct
from dataclasses import dataclass, fields
from enum import IntEnum, IntFlag
from typing import List, NamedTuple, Union

__all__ = [
    "SYNC", "TYPE_STATE", "TYPE_COMMAND", "STATE_LEN", "COMMAND_LEN", "STATE_FRAME_SIZE",
    "COMMAND_FRAME_SIZE", "Mode", "Status", "StateFrame", "CommandFrame", "DecoderStats",
    "StreamDecoder", "ProtocolError", "crc16", "encode_state", "encode_command", "encode",
    "decode_frame", "DEFAULT_RATE_HZ", "DEFAULT_COMMAND_TIMEOUT_S", "MIN_BAUD_1KHZ",
    "StateLimits", "state_frame_bytes",
]

SYNC = b"\xa5\x5a"
TYPE_STATE = 0x01
TYPE_COMMAND = 0x02

_STATE = struct.Struct("<IIfffffIH")  # seq, time_us, x, v, force, accel, motor, ack, status
_COMMAND = struct.Struct("<IBf")  # seq, mode, value
STATE_LEN = 1 + _STATE.size  # LEN byte of a state frame: 35
COMMAND_LEN = 1 + _COMMAND.size  # LEN byte of a command frame: 10
_OVERHEAD = len(SYNC) + 1 + 2  # sync, LEN, CRC
STATE_FRAME_SIZE = _OVERHEAD + STATE_LEN  # 40 bytes
COMMAND_FRAME_SIZE = _OVERHEAD + COMMAND_LEN  # 15 bytes

#: The device's default servo (and state frame) rate.
DEFAULT_RATE_HZ = 1000.0
#: Without a valid command for this long the device goes safe (zero motor force).
DEFAULT_COMMAND_TIMEOUT_S = 0.05
#: 8N1 UART: 10 bits per byte; a state frame per ms needs this much (use ≥ 921600 or USB CDC).
MIN_BAUD_1KHZ = STATE_FRAME_SIZE * 10 * 1000

_U32 = 0xFFFFFFFF


class Mode(IntEnum):
    """Command/device mode."""

    IDLE = 0  #: motor off (zero force); value ignored; doubles as a keep-alive
    FORCE = 1  #: value = motor force (N)
    POSITION = 2  #: value = position setpoint (m), tracked by the device's PD servo


class Status(IntFlag):
    """Status bits of a state frame (u16). Bits 3–4 hold the current :class:`Mode`."""

    SATURATED = 0x0001  #: the motor force command exceeded the device's limit (clipped)
    AT_LIMIT = 0x0002  #: the carriage is at or in an end stop
    TIMEOUT = 0x0004  #: no valid command within the timeout: the device is safe (zero force)
    MODE_MASK = 0x0018  #: current mode << 3
    RX_ERROR = 0x0020  #: the device rejected received bytes since its previous state frame
    FAULT = 0x0040  #: device fault (e.g. emergency stop): motor off
    # bits 7-15 reserved, sent as 0

    @staticmethod
    def with_mode(flags: int, mode: int) -> int:
        return (int(flags) & ~0x0018) | ((int(mode) & 0x3) << 3)


class ProtocolError(ValueError):
    """A frame that cannot be encoded or decoded."""


class StateFrame(NamedTuple):
    """A device → host state frame. ``lost`` and ``time`` are filled in by :class:`StreamDecoder`
    (not on the wire): frames missing just before this one, and the device time in seconds with the
    32-bit µs counter unwrapped."""

    seq: int
    time_us: int
    position: float  #: m
    velocity: float  #: m/s
    force: float  #: load cell, N
    acceleration: float  #: m/s²
    motor_force: float  #: applied motor force, N
    ack: int  #: sequence number of the last command the device applied
    status: int
    lost: int = 0
    time: float = math.nan

    @property
    def mode(self) -> Mode:
        m = (self.status >> 3) & 0x3
        return Mode(m) if m <= 2 else Mode.IDLE  # 3 is reserved

    @property
    def saturated(self) -> bool:
        return bool(self.status & Status.SATURATED)

    @property
    def at_limit(self) -> bool:
        return bool(self.status & Status.AT_LIMIT)

    @property
    def timeout(self) -> bool:
        return bool(self.status & Status.TIMEOUT)

    @property
    def rx_error(self) -> bool:
        return bool(self.status & Status.RX_ERROR)

    @property
    def fault(self) -> bool:
        return bool(self.status & Status.FAULT)


class CommandFrame(NamedTuple):
    """A host → device command frame; ``lost`` is filled in by :class:`StreamDecoder`."""

    seq: int
    mode: int
    value: float
    lost: int = 0


Frame = Union[StateFrame, CommandFrame]


def crc16(data: bytes, init: int = 0xFFFF) -> int:
    """CRC-16/CCITT-FALSE: polynomial 0x1021, init 0xFFFF, no reflection, no final XOR."""
    return binascii.crc_hqx(data, init)


def _frame(ftype: int, payload: bytes) -> bytes:
    body = bytes((len(payload) + 1, ftype)) + payload
    return SYNC + body + crc16(body).to_bytes(2, "little")


def _f32(name: str, x: float) -> float:
    x = float(x)
    if not math.isfinite(x) or abs(x) > 3.4028234663852886e38:
        raise ProtocolError(f"{name}: must be a finite float32, got {x!r}")
    return x


def encode_state(seq: int, time_us: int, position: float, velocity: float, force: float,
                 acceleration: float, motor_force: float, ack: int, status: int) -> bytes:
    """A state frame (40 bytes). ``seq``, ``time_us`` and ``ack`` are taken modulo 2**32."""
    try:
        payload = _STATE.pack(int(seq) & _U32, int(time_us) & _U32, _f32("position", position),
                              _f32("velocity", velocity), _f32("force", force),
                              _f32("acceleration", acceleration),
                              _f32("motor_force", motor_force), int(ack) & _U32,
                              int(status) & 0xFFFF)
    except struct.error as exc:
        raise ProtocolError(f"state frame: {exc}") from None
    return _frame(TYPE_STATE, payload)


def encode_command(seq: int, mode: int, value: float = 0.0) -> bytes:
    """A command frame (15 bytes). ``seq`` is taken modulo 2**32; ``mode`` a :class:`Mode`."""
    if int(mode) not in (0, 1, 2):
        raise ProtocolError(f"mode: expected 0 (idle), 1 (force) or 2 (position), got {mode!r}")
    return _frame(TYPE_COMMAND, _COMMAND.pack(int(seq) & _U32, int(mode), _f32("value", value)))


def encode(frame: Frame) -> bytes:
    """Encode a :class:`StateFrame` or :class:`CommandFrame` (``lost``/``time`` are not sent)."""
    if isinstance(frame, StateFrame):
        return encode_state(*frame[:9])
    if isinstance(frame, CommandFrame):
        return encode_command(*frame[:3])
    raise ProtocolError(f"expected a StateFrame or CommandFrame, got {frame!r}")


def _check_values(ftype: int, values: tuple) -> str | None:
    """Why a CRC-valid frame is unusable (a non-finite float, an unknown mode), or None."""
    if ftype == TYPE_STATE:
        for i in range(2, 7):
            if not math.isfinite(values[i]):
                return f"non-finite {StateFrame._fields[i]}"
        return None
    if values[1] not in (0, 1, 2):
        return f"unknown mode {values[1]}"
    if not math.isfinite(values[2]):
        return "non-finite value"
    return None


class StateLimits(NamedTuple):
    """Plausibility limits of a host for CRC-valid state frames: a frame whose position is
    outside ``[position_min, position_max]`` or whose |velocity|, |force| (also the motor force)
    or |acceleration| exceeds its bound is as unusable as a NaN (a firmware bug, a unit mix-up,
    a corrupted buffer the CRC was computed over) and is rejected as a value error. The host
    derives them from the stage's configured travel and sensible bounds (haptic_stage
    parameters ``plausible_*``; docs/serial_protocol.md)."""

    position_min: float  #: m
    position_max: float  #: m
    velocity: float  #: m/s, bound on |velocity|
    force: float  #: N, bound on |force| and |motor_force|
    acceleration: float  #: m/s², bound on |acceleration|

    def check(self, position: float, velocity: float, force: float, acceleration: float,
              motor_force: float) -> str | None:
        """Why the (finite) values are implausible, naming the field, or None."""
        if not self.position_min <= position <= self.position_max:
            return (f"position {position:.6g} m outside the plausible "
                    f"[{self.position_min:g}, {self.position_max:g}] m")
        if not -self.velocity <= velocity <= self.velocity:
            return f"velocity {velocity:.6g} m/s beyond the plausible ±{self.velocity:g} m/s"
        if not -self.force <= force <= self.force:
            return f"force {force:.6g} N beyond the plausible ±{self.force:g} N"
        if not -self.acceleration <= acceleration <= self.acceleration:
            return (f"acceleration {acceleration:.6g} m/s² beyond the plausible "
                    f"±{self.acceleration:g} m/s²")
        if not -self.force <= motor_force <= self.force:
            return f"motor_force {motor_force:.6g} N beyond the plausible ±{self.force:g} N"
        return None


def state_frame_bytes(seq: int, time_us: int, position: float, velocity: float, force: float,
                      acceleration: float, motor_force: float, ack: int, status: int) -> bytes:
    """A CRC-valid state frame with any float32 values, NaN and infinities included (no checks;
    :func:`encode_state` refuses those): what a faulty device could send, for tests and the
    emulator's fault injection."""
    payload = _STATE.pack(int(seq) & _U32, int(time_us) & _U32, position, velocity, force,
                          acceleration, motor_force, int(ack) & _U32, int(status) & 0xFFFF)
    return _frame(TYPE_STATE, payload)


def decode_frame(data: bytes) -> Frame:
    """Decode exactly one complete frame; raise :class:`ProtocolError` saying what is wrong."""
    data = bytes(data)
    if len(data) < _OVERHEAD + 1 or data[:2] != SYNC:
        raise ProtocolError("not a frame: missing sync bytes or too short")
    n = data[2]
    if len(data) != _OVERHEAD + n:
        raise ProtocolError(f"length: LEN={n} but {len(data)} bytes")
    if crc16(data[2:-2]) != int.from_bytes(data[-2:], "little"):
        raise ProtocolError("checksum mismatch")
    ftype = data[3]
    spec = _TYPES.get(ftype)
    if spec is None:
        raise ProtocolError(f"unknown frame type 0x{ftype:02x}")
    st, cls = spec
    if n != 1 + st.size:
        raise ProtocolError(f"length: type 0x{ftype:02x} needs LEN={1 + st.size}, got {n}")
    values = st.unpack_from(data, 4)
    why = _check_values(ftype, values)
    if why:
        raise ProtocolError(f"value: {why}")
    if cls is StateFrame:
        return StateFrame(*values, 0, values[1] * 1e-6)
    return CommandFrame(*values)


_TYPES = {TYPE_STATE: (_STATE, StateFrame), TYPE_COMMAND: (_COMMAND, CommandFrame)}
_VALID_LENS = frozenset(1 + st.size for st, _ in _TYPES.values())


@dataclass
class DecoderStats:
    """Counters of a :class:`StreamDecoder` (monotonic; compare snapshots to see new errors)."""

    bytes: int = 0  #: bytes fed
    frames: int = 0  #: valid frames delivered
    garbage_bytes: int = 0  #: bytes discarded outside valid frames (noise, broken frames)
    length_errors: int = 0  #: a LEN byte that no frame type has, or that does not match the type
    crc_errors: int = 0  #: checksum mismatches
    type_errors: int = 0  #: CRC-valid frames of an unknown or unexpected type
    #: CRC-valid frames with a non-finite float, an unknown mode, or state values outside the
    #: decoder's plausibility ``limits``
    value_errors: int = 0
    seq_gaps: int = 0  #: times the sequence number jumped forward (frames lost in between)
    lost_frames: int = 0  #: frames missing in those gaps
    duplicates: int = 0  #: a frame repeating the previous sequence number
    seq_resets: int = 0  #: the sequence number went backwards (device restart or reordering)

    @property
    def errors(self) -> int:
        """Rejected frames of any kind (not counting garbage bytes or sequence events)."""
        return self.length_errors + self.crc_errors + self.type_errors + self.value_errors

    def snapshot(self) -> "DecoderStats":
        return DecoderStats(**{f.name: getattr(self, f.name) for f in fields(self)})


class StreamDecoder:
    """Incremental frame decoder for a byte stream.

    ``feed(chunk) -> list`` of the complete, valid frames in the stream so far (in order); partial
    frames wait for the next chunk. ``accept`` restricts the frame types delivered (default: both;
    a device uses ``(TYPE_COMMAND,)``, a host ``(TYPE_STATE,)``); CRC-valid frames of another type
    count as type errors.

    Resynchronisation: the decoder looks for the sync bytes; a LEN no frame type has is rejected at
    once, otherwise it waits for the whole frame and checks the CRC; on any rejection it discards
    one byte and searches again, so a valid frame that starts inside a broken one is still found.

    Sequence numbers are tracked per type: each delivered frame carries ``lost``, the number of
    frames of its type missing just before it (sequence numbers are u32 and wrap).

    ``limits`` (a :class:`StateLimits`, optional): CRC-valid state frames with implausible values
    are rejected too, counted as value errors; :attr:`last_value_error` says why the latest
    value error was rejected (naming the field and value).
    """

    def __init__(self, accept=(TYPE_STATE, TYPE_COMMAND), max_buffer: int = 65536,
                 limits: StateLimits | None = None):
        if limits is not None and not isinstance(limits, StateLimits):
            raise ValueError(f"limits: expected a StateLimits or None, got {limits!r}")
        self.limits = limits
        self.last_value_error = ""
        accept = tuple(int(a) for a in accept)
        for a in accept:
            if a not in _TYPES:
                raise ValueError(f"accept: unknown frame type {a!r}")
        self.accept = frozenset(accept)
        self.max_buffer = int(max_buffer)
        self.stats = DecoderStats()
        self._buf = bytearray()
        self._last_seq: dict = {}
        self._t_last: int | None = None
        self._t_unwrapped = 0

    def reset(self) -> None:
        """Forget buffered bytes and sequence/time tracking (e.g. after a reconnect); keep stats."""
        self._buf.clear()
        self._last_seq.clear()
        self._t_last = None
        self._t_unwrapped = 0

    @property
    def pending(self) -> int:
        """Bytes buffered, waiting for the rest of a frame."""
        return len(self._buf)

    def _sequence(self, ftype: int, seq: int) -> int:
        last = self._last_seq.get(ftype)
        self._last_seq[ftype] = seq
        if last is None:
            return 0
        d = (seq - last) & _U32
        if d == 1:
            return 0
        st = self.stats
        if d == 0:
            st.duplicates += 1
            return 0
        if d >= 0x80000000:
            st.seq_resets += 1
            return 0
        st.seq_gaps += 1
        st.lost_frames += d - 1
        return d - 1

    def _time(self, t_us: int) -> float:
        last = self._t_last
        if last is None:
            self._t_unwrapped = t_us
        else:
            d = (t_us - last) & _U32
            self._t_unwrapped += d if d < 0x80000000 else d - 0x100000000
        self._t_last = t_us
        return self._t_unwrapped * 1e-6

    def feed(self, data: bytes) -> List[Frame]:
        st = self.stats
        st.bytes += len(data)
        buf = self._buf
        buf += data
        out: List[Frame] = []
        i = 0
        n = len(buf)
        while True:
            j = buf.find(SYNC, i)
            if j < 0:
                keep = 1 if n > i and buf[n - 1] == 0xA5 else 0  # maybe the first sync byte
                st.garbage_bytes += n - i - keep
                i = n - keep
                break
            st.garbage_bytes += j - i
            i = j
            if n - j < 3:
                break
            ln = buf[j + 2]
            if ln not in _VALID_LENS:
                st.length_errors += 1
                st.garbage_bytes += 1
                i = j + 1
                continue
            end = j + 5 + ln
            if n < end:
                break
            if binascii.crc_hqx(buf[j + 2:end - 2], 0xFFFF) != buf[end - 2] | (buf[end - 1] << 8):
                st.crc_errors += 1
                st.garbage_bytes += 1
                i = j + 1
                continue
            ftype = buf[j + 3]
            spec = _TYPES.get(ftype)
            if spec is None or ftype not in self.accept:
                st.type_errors += 1
                st.garbage_bytes += end - j
                i = end
                continue
            s, cls = spec
            if ln != 1 + s.size:
                st.length_errors += 1
                st.garbage_bytes += end - j
                i = end
                continue
            values = s.unpack_from(buf, j + 4)
            i = end
            lost = self._sequence(ftype, values[0])
            why = _check_values(ftype, values)
            if why is None and cls is StateFrame and self.limits is not None:
                why = self.limits.check(values[2], values[3], values[4], values[5], values[6])
            if why is not None:
                st.value_errors += 1
                st.garbage_bytes += end - j
                self.last_value_error = f"state frame seq {values[0]}: {why}" \
                    if cls is StateFrame else f"command frame seq {values[0]}: {why}"
                continue
            st.frames += 1
            if cls is StateFrame:
                out.append(StateFrame(*values, lost, self._time(values[1])))
            else:
                out.append(CommandFrame(*values, lost))
        if i:
            del buf[:i]
        if len(buf) > self.max_buffer:  # cannot happen with valid LENs; a safety net
            st.garbage_bytes += len(buf)
            buf.clear()
        return out
