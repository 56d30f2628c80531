"""The haptic stage's serial protocol (fric_nodes.hardware.stage_protocol, docs/serial_protocol.md).

Asserted: the byte layout of docs/serial_protocol.md (golden frames, little-endian,
CRC-16/CCITT-FALSE against a bitwise reference), a lossless round trip of every field, decoding
under any chunking, resynchronisation after random garbage, every rejection counted by kind,
sequence-gap detection (with u32 wrap), and device-time unwrapping.
"""

import math
import random
import struct

import numpy as np
import pytest

from fric_nodes.hardware.stage_protocol import (COMMAND_FRAME_SIZE, STATE_FRAME_SIZE, SYNC,
                                                TYPE_COMMAND, TYPE_STATE, CommandFrame, Mode,
                                                ProtocolError, StateFrame, StateLimits, Status,
                                                StreamDecoder, crc16, decode_frame, encode,
                                                encode_command, encode_state, state_frame_bytes)

RNG = random.Random(20)


def crc_ref(data: bytes) -> int:
    """Bitwise CRC-16/CCITT-FALSE, written from the definition (poly 0x1021, init 0xFFFF)."""
    crc = 0xFFFF
    for b in data:
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
            crc &= 0xFFFF
    return crc


def f32(x: float) -> float:
    return struct.unpack("<f", struct.pack("<f", x))[0]


def random_state(seq=None):
    return StateFrame(RNG.getrandbits(32) if seq is None else seq, RNG.getrandbits(32),
                      *(f32(RNG.uniform(-50, 50)) for _ in range(5)), RNG.getrandbits(32),
                      RNG.getrandbits(16))


def random_command(seq=None):
    return CommandFrame(RNG.getrandbits(32) if seq is None else seq, RNG.choice([0, 1, 2]),
                        f32(RNG.uniform(-20, 20)))


def random_frames(n):
    """n frames of both types, each type with consecutive sequence numbers."""
    out, seq = [], {0: 0, 1: 0}
    for _ in range(n):
        kind = int(RNG.random() < 0.3)
        out.append(random_command(seq[kind]) if kind else random_state(seq[kind]))
        seq[kind] += 1
    return out


def strip(frames):
    """Frames without the decoder-filled fields (lost, time)."""
    return [f[:9] if isinstance(f, StateFrame) else f[:3] for f in frames]


# --- layout -------------------------------------------------------------------------------------
def test_crc_is_ccitt_false():
    assert crc16(b"123456789") == 0x29B1 == crc_ref(b"123456789")
    for _ in range(200):
        data = bytes(RNG.getrandbits(8) for _ in range(RNG.randint(0, 60)))
        assert crc16(data) == crc_ref(data)


def test_golden_frames_match_the_documented_layout():
    st = encode_state(0x01020304, 1500000, 0.0125, -0.25, 2.5, -9.80665, 4.0, 0x0A0B0C0D,
                      Status.with_mode(Status.SATURATED | Status.AT_LIMIT, Mode.FORCE))
    assert st.hex(" ") == ("a5 5a 23 01 04 03 02 01 60 e3 16 00 cd cc 4c 3c 00 00 80 be 00 00 20 "
                           "40 0a e8 1c c1 00 00 80 40 0d 0c 0b 0a 0b 00 bc 6f")  # docs example
    assert len(st) == STATE_FRAME_SIZE == 40
    assert st[:2] == SYNC and st[2] == 35 and st[3] == TYPE_STATE
    assert int.from_bytes(st[-2:], "little") == crc_ref(st[2:-2])  # CRC over LEN..payload
    cmd = encode_command(7, Mode.POSITION, -0.005)
    assert cmd.hex(" ") == "a5 5a 0a 02 07 00 00 00 02 0a d7 a3 bb a2 2b"
    assert len(cmd) == COMMAND_FRAME_SIZE == 15 and cmd[2] == 10 and cmd[3] == TYPE_COMMAND
    assert encode_command(9, Mode.IDLE).hex(" ") == "a5 5a 0a 02 09 00 00 00 00 00 00 00 00 64 ca"
    f = decode_frame(st)
    assert f.mode == Mode.FORCE and f.saturated and f.at_limit and not f.timeout
    assert not f.rx_error and not f.fault and f.time == 1.5


# --- round trip ---------------------------------------------------------------------------------
def test_round_trip_every_field():
    edge_u32 = [0, 1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF]
    for i in range(500):
        s = random_state()
        if i < len(edge_u32):
            s = s._replace(seq=edge_u32[i], time_us=edge_u32[-1 - i], ack=edge_u32[i])
        if i < 16:
            s = s._replace(status=1 << i)
        got = decode_frame(encode(s))
        assert isinstance(got, StateFrame) and got[:9] == s[:9]
        c = random_command()
        got = decode_frame(encode(c))
        assert isinstance(got, CommandFrame) and got[:3] == c[:3]
    # float32 resolution: a position in the 3.2 cm travel keeps ~2 nm, far below one count
    p = 0.0159876543
    assert abs(decode_frame(encode_state(0, 0, p, 0, 0, 0, 0, 0, 0)).position - p) < 2e-9
    assert encode_state(2**32 + 5, 2**32 + 6, 0, 0, 0, 0, 0, 2**32 + 7, 0)[4:8] == b"\x05\0\0\0"


def test_encode_rejects_what_cannot_be_sent():
    for bad in (math.nan, math.inf, 1e39):
        with pytest.raises(ProtocolError):
            encode_command(0, Mode.FORCE, bad)
        with pytest.raises(ProtocolError):
            encode_state(0, 0, bad, 0, 0, 0, 0, 0, 0)
    with pytest.raises(ProtocolError, match="mode"):
        encode_command(0, 3, 0.0)
    for broken, msg in [(b"\xa5\x5a", "sync"), (encode_command(1, 1, 1.0)[:-1], "length"),
                        (b"\x00" + encode_command(1, 1, 1.0)[1:], "sync")]:
        with pytest.raises(ProtocolError, match=msg):
            decode_frame(broken)


# --- stream decoding ------------------------------------------------------------------------------
def test_any_chunking_decodes_the_same_frames():
    frames = random_frames(300)
    stream = b"".join(encode(f) for f in frames)
    for trial in range(20):
        dec = StreamDecoder()
        out = []
        i = 0
        while i < len(stream):
            n = RNG.choice([1, 2, 3, RNG.randint(1, 100)])
            out += dec.feed(stream[i:i + n])
            i += n
        assert strip(out) == strip(frames)
        assert dec.pending == 0 and dec.stats.errors == 0 and dec.stats.garbage_bytes == 0
        assert dec.stats.frames == 300 and dec.stats.lost_frames == 0
    assert StreamDecoder().feed(b"") == []


def _garbage(n):
    # random bytes, salted with sync bytes and plausible LEN bytes to exercise false starts
    g = bytearray(RNG.getrandbits(8) for _ in range(n))
    for _ in range(n // 20):
        k = RNG.randrange(max(1, n - 3)) if n > 3 else 0
        g[k:k + 3] = SYNC + bytes([RNG.choice([35, 10, 200])])
    return bytes(g[:n])


def test_resynchronises_after_random_garbage():
    for trial in range(30):
        frames = random_frames(60)
        parts, n_garbage = [], 0
        for f in frames:
            g = _garbage(RNG.choice([0, 0, 1, 2, RNG.randint(0, 120)]))
            n_garbage += len(g)
            parts += [g, encode(f)]
        # a false start in the last garbage may hold the last frame until more bytes come (at
        # most one frame's length): the stream goes on with two more frames
        tail = [random_state(10_000), random_state(10_001)]
        stream = b"".join(parts + [encode(f) for f in tail])
        dec = StreamDecoder()
        out = []
        i = 0
        while i < len(stream):
            n = RNG.randint(1, 64)
            out += dec.feed(stream[i:i + n])
            i += n
        assert strip(out[:len(frames)]) == strip(frames)  # every frame recovered, in order
        assert dec.stats.garbage_bytes == n_garbage  # every other byte discarded, and counted
        assert dec.stats.type_errors == dec.stats.value_errors == 0


def test_each_error_kind_is_counted_and_neighbours_survive():
    good = [encode(random_state(i)) for i in (0, 1, 2, 3, 4, 6)]
    bad_crc = bytearray(encode(random_state(100)))
    bad_crc[10] ^= 0x04  # one bit in the payload
    bad_crc2 = bytearray(encode(random_command(101)))
    bad_crc2[-1] ^= 0x80  # one bit in the CRC
    bad_len = SYNC + bytes([7]) + bytes(9)  # a LEN no frame type has
    body = bytes([10, TYPE_STATE]) + bytes(9)  # LEN of a command, type of a state frame
    wrong_len = SYNC + body + crc16(body).to_bytes(2, "little")
    body = bytes([10, 0x07]) + bytes(9)  # unknown type, valid CRC
    bad_type = SYNC + body + crc16(body).to_bytes(2, "little")
    body = bytes([35, TYPE_STATE]) + struct.pack("<IIfffffIH", 5, 0, math.nan, 0, 0, 0, 0, 0, 0)
    nan_state = SYNC + body + crc16(body).to_bytes(2, "little")
    body = bytes([10, TYPE_COMMAND]) + struct.pack("<IBf", 0, 9, 1.0)
    bad_mode = SYNC + body + crc16(body).to_bytes(2, "little")
    stream = (good[0] + bytes(bad_crc) + good[1] + bad_len + good[2] + wrong_len + good[3]
              + bad_type + good[4] + bytes(bad_crc2) + nan_state + bad_mode + good[5])
    dec = StreamDecoder()
    out = dec.feed(stream)
    assert [f.seq for f in out] == [0, 1, 2, 3, 4, 6]
    s = dec.stats
    assert (s.crc_errors, s.length_errors, s.type_errors, s.value_errors) == (2, 2, 1, 2)
    assert s.errors == 7 and s.frames == 6
    # the NaN frame (seq 5) was received, so rejected but not lost: no sequence gap
    assert s.lost_frames == 0 and s.seq_gaps == 0
    # a host decoder takes state frames only; a command frame is a type error
    host = StreamDecoder(accept=(TYPE_STATE,))
    assert host.feed(encode(random_command(0)) + good[0])[0].seq == 0
    assert host.stats.type_errors == 1
    with pytest.raises(ValueError):
        StreamDecoder(accept=(9,))


def test_sequence_gaps_duplicates_and_resets():
    dec = StreamDecoder()
    seqs = [10, 11, 12, 15, 16, 16, 17, 3, 4, 0xFFFFFFFE, 0xFFFFFFFF, 0, 1, 3]
    out = dec.feed(b"".join(encode(random_state(s)) for s in seqs))
    # 12 -> 15: 2 lost; 16 twice: a duplicate; 17 -> 3: backwards (device restart), no loss;
    # 4 -> 0xFFFFFFFE: more than 2**31 ahead is read as backwards too; the u32 wrap is seamless
    assert [f.lost for f in out] == [0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]
    s = dec.stats
    assert s.duplicates == 1 and s.seq_resets == 2 and s.seq_gaps == 2 and s.lost_frames == 3
    # state and command sequences are tracked separately
    dec = StreamDecoder()
    out = dec.feed(encode(random_state(0)) + encode(random_command(0)) + encode(random_state(1))
                   + encode(random_command(5)))
    assert [f.lost for f in out] == [0, 0, 0, 4]


def test_device_time_is_unwrapped():
    dec = StreamDecoder()
    t0 = 2**32 - 3000  # 3 ms before the 32-bit microsecond counter wraps
    stamps = [(t0 + 1000 * k) & 0xFFFFFFFF for k in range(8)]
    out = dec.feed(b"".join(encode_state(k, t, 0, 0, 0, 0, 0, 0, 0)
                            for k, t in enumerate(stamps)))
    times = np.array([f.time for f in out])
    np.testing.assert_allclose(np.diff(times), 1e-3, rtol=1e-9)
    assert out[-1].time_us == 4000 and out[-1].time == pytest.approx((t0 + 7000) * 1e-6)


def test_reset_forgets_partial_frames_and_sequence():
    dec = StreamDecoder()
    f = encode(random_state(5))
    assert dec.feed(f[:20]) == [] and dec.pending == 20
    dec.reset()
    assert dec.pending == 0
    out = dec.feed(encode(random_state(9)))
    assert out[0].lost == 0  # no gap reported across a reconnect


def test_crc_valid_frames_with_implausible_values_are_rejected_with_limits():
    """Issue 13 (6c): a CRC-valid state frame with position 3e38 m (or an absurd velocity,
    force, acceleration, motor force) is a bad frame for a host with plausibility limits:
    counted as a value error, the reason naming the field, the neighbours delivered."""
    limits = StateLimits(-0.021, 0.021, 5.0, 100.0, 1000.0)
    good = dict(position=0.01, velocity=0.1, force=2.0, acceleration=-9.8, motor_force=4.0)
    bad = [("position", 3e38), ("position", -0.0211), ("velocity", -5.5), ("force", 1e20),
           ("acceleration", 1e4), ("motor_force", -101.0), ("position", math.nan),
           ("velocity", math.inf)]
    stream = b""
    for k, (field, value) in enumerate(bad):
        stream += state_frame_bytes(2 * k, 0, **good, ack=0, status=0)
        stream += state_frame_bytes(2 * k + 1, 0, **dict(good, **{field: value}), ack=0,
                                    status=0)
    dec = StreamDecoder(accept=(TYPE_STATE,), limits=limits)
    out, reasons = [], []
    for i in range(0, len(stream), STATE_FRAME_SIZE):
        n0 = dec.stats.value_errors
        out += dec.feed(stream[i:i + STATE_FRAME_SIZE])
        if dec.stats.value_errors != n0:
            reasons.append(dec.last_value_error)
    assert [f.seq for f in out] == [0, 2, 4, 6, 8, 10, 12, 14]
    assert dec.stats.value_errors == len(bad) and dec.stats.crc_errors == 0
    for (field, value), why in zip(bad, reasons):
        assert why.startswith("state frame seq ") and field in why, (field, why)
    assert "position 3e+38 m outside the plausible [-0.021, 0.021] m" in reasons[0]
    # the limits are inclusive, and without limits only non-finite values are refused
    edge = state_frame_bytes(0, 0, 0.021, -5.0, 100.0, 1000.0, -100.0, 0, 0)
    assert len(StreamDecoder(limits=limits).feed(edge)) == 1
    assert len(StreamDecoder().feed(stream)) == len(bad) * 2 - 2
    with pytest.raises(ValueError, match="limits"):
        StreamDecoder(limits=(0, 1, 2, 3, 4))
