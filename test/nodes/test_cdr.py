"""fric_interfaces.cdr against rclpy's own serializer: every JointState decodes to what
``deserialize_message`` makes of the same bytes (names in any script, empty and odd-length
arrays, every alignment), the decoder's ``read`` puts the same values in a JointStateReader and
raises the same errors as the reader on the message, malformed bytes (every truncation, wrong
counts, random corruption) are one ``InputError`` naming the message, never another exception,
and the encoder's Float64MultiArray is rclpy's byte for byte (padding aside). Last, the
renderer answers the same bytes with the same commands as the same messages, and rejects a
malformed one with a counted reason and the safe output."""

import random
import struct

import numpy as np
import pytest
from rclpy.parameter import Parameter
from rclpy.serialization import deserialize_message, serialize_message
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from fric_interfaces.cdr import Float64MultiArrayEncoder, JointStateDecoder
from fric_interfaces.conversions import InputError, JointStateReader, joint_state_msg

NAMES = ["j", "joint_2", "wrist", "ab", "abc", "", "ŝulder", "肘", "x" * 17, "😀z", "e\u0301"]
SPECIAL = [0.0, -0.0, 1.5, -2.25, 1e308, -1e-310, 5e-324, float("inf"), float("-inf"),
           float("nan")]


def _random_msg(rng: random.Random, finite: bool = False, names=None) -> JointState:
    msg = JointState()
    msg.header.stamp.sec = rng.choice([0, 1, -1, 2**31 - 1, -2**31, rng.randrange(-10**9, 10**9)])
    msg.header.stamp.nanosec = rng.choice([0, 999_999_999, rng.randrange(10**9)])
    msg.header.frame_id = rng.choice(["", "a", "ab", "abc", "base_link", "ŝ", "frame" * 3])
    n = rng.randrange(0, 7)
    msg.name = list(names) if names is not None else [rng.choice(NAMES) for _ in range(n)]
    n = len(msg.name)
    for field in ("position", "velocity", "effort"):
        count = rng.choice([n, n, n, 0, rng.randrange(0, 9)])
        vals = [rng.choice(SPECIAL) if rng.random() < 0.3 else rng.uniform(-5.0, 5.0)
                for _ in range(count)]
        if finite:
            vals = [v if np.isfinite(v) else 0.5 for v in vals]
        setattr(msg, field, vals)
    return msg


def _same_array(a, b) -> bool:
    """Bit-identical doubles (NaN payloads, -0.0 included)."""
    return np.asarray(a, "<f8").tobytes() == np.asarray(b, "<f8").tobytes()


def _assert_same(view, ref: JointState) -> None:
    assert (view.header.stamp.sec, view.header.stamp.nanosec) == (ref.header.stamp.sec,
                                                                  ref.header.stamp.nanosec)
    assert view.header.frame_id == ref.header.frame_id
    assert list(view.name) == list(ref.name)
    for field in ("position", "velocity", "effort"):
        assert _same_array(getattr(view, field), getattr(ref, field)), field


def test_decodes_what_rclpy_deserializes_for_many_messages():
    rng = random.Random(17)
    dec = JointStateDecoder()
    for _ in range(3000):
        data = serialize_message(_random_msg(rng))
        _assert_same(dec.decode(data), deserialize_message(data, JointState))


def test_repeated_layout_decodes_the_same_as_a_fresh_decoder():
    """The one-struct path (same frame_id, names, lengths as the previous message) against a
    fresh decoder's general path, over streams that keep or change their layout."""
    rng = random.Random(3)
    for _ in range(200):
        dec = JointStateDecoder(JointStateReader(["j", "wrist"]))
        names = [rng.choice(NAMES) for _ in range(rng.randrange(0, 5))]
        base = _random_msg(rng, names=names)
        for _ in range(20):
            msg = _random_msg(rng, names=names) if rng.random() < 0.2 else base
            if rng.random() < 0.7:  # same layout, new stamp and values
                msg.header.stamp.sec = rng.randrange(10**6)
                for field in ("position", "velocity", "effort"):
                    setattr(msg, field, [rng.uniform(-9, 9) for _ in getattr(msg, field)])
            data = serialize_message(msg)
            _assert_same(dec.decode(data), deserialize_message(data, JointState))


def _read_outcome(read, msg, reader: JointStateReader):
    try:
        read(msg)
    except InputError as e:
        return ("error", e.field, e.reason)
    return ("ok", reader.position.tobytes(), reader.velocity.tobytes(), reader.effort.tobytes())


@pytest.mark.parametrize("fields", [("position", "velocity"), ("position", "effort"),
                                    ("position",)])
def test_read_gives_the_readers_values_and_errors(fields):
    """decoder.read(decoder.decode(bytes)) against JointStateReader.read(message), message by
    message over streams with repeated layouts, missing and duplicate joints, NaN, empty and
    short arrays: the same buffers after each, the same error (field and text) when rejected."""
    rng = random.Random(hash(fields) % 1000)
    joints = ["wrist", "j"]
    for _ in range(150):
        ours, ref = JointStateReader(joints, fields), JointStateReader(joints, fields)
        dec = JointStateDecoder(ours)
        names = rng.choice([["j", "wrist"], ["wrist", "x", "j"], ["j"], ["j", "j", "wrist"]])
        base = _random_msg(rng, finite=rng.random() < 0.8, names=names)
        for _ in range(15):
            msg = base if rng.random() < 0.7 else _random_msg(
                rng, finite=rng.random() < 0.5, names=rng.choice([names, names, ["wrist", "j"]]))
            data = serialize_message(msg)
            got = _read_outcome(dec.read, dec.decode(data), ours)
            want = _read_outcome(ref.read, deserialize_message(data, JointState), ref)
            assert got == want


def test_read_of_a_plain_message_is_the_readers():
    reader = JointStateReader(["a"])
    dec = JointStateDecoder(reader)
    dec.read(joint_state_msg(["a"], [1.0], [2.0]))
    assert reader.position.tolist() == [1.0] and reader.velocity.tolist() == [2.0]


def _big_endian(msg: JointState) -> bytes:
    """Plain CDR, big-endian, written by hand from the rules (rclpy writes little-endian)."""
    out = bytearray(b"\x00\x00\x00\x00")

    def align(k):
        out.extend(b"\x00" * (-(len(out) - 4) % k))

    def string(s):
        b = s.encode() + b"\x00"
        align(4)
        out.extend(struct.pack(">I", len(b)) + b)

    out += struct.pack(">iI", msg.header.stamp.sec, msg.header.stamp.nanosec)
    string(msg.header.frame_id)
    align(4)
    out += struct.pack(">I", len(msg.name))
    for nm in msg.name:
        string(nm)
    for field in ("position", "velocity", "effort"):
        vals = list(getattr(msg, field))
        align(4)
        out += struct.pack(">I", len(vals))
        if vals:
            align(8)
            out += struct.pack(f">{len(vals)}d", *vals)
    return bytes(out)


def test_big_endian_plain_cdr_is_decoded():
    rng = random.Random(8)
    dec = JointStateDecoder(JointStateReader(["j"]))
    for _ in range(300):
        msg = _random_msg(rng)
        view = dec.decode(_big_endian(msg))
        _assert_same(view, msg)
    # the writer's rules, checked on rclpy's little-endian bytes of the same message
    le = serialize_message(msg)
    be = _big_endian(msg)
    assert len(le) >= len(be) and le[4:12] == struct.pack("<iI", *struct.unpack(">iI", be[4:12]))


def _rejected(dec: JointStateDecoder, data: bytes) -> InputError | None:
    try:
        view = dec.decode(data)
    except InputError as e:
        assert e.field == "message" and e.kind == "bad_message"
        assert "malformed CDR JointState" in str(e) and str(e) == f"message: {e.reason}"
        assert InputError(e.field, e.reason).kind == e.kind  # as the reader's errors say it
        return e
    if dec.reader is not None:
        try:
            dec.read(view)
        except InputError:
            pass  # a decodable message the reader refuses: its own errors
    return None


def test_every_truncation_is_rejected_or_still_the_whole_message():
    rng = random.Random(5)
    for _ in range(60):
        msg = _random_msg(rng)
        data = serialize_message(msg)
        full = deserialize_message(data, JointState)
        dec = JointStateDecoder(JointStateReader(["j"]))
        for cut in range(len(data)):
            dec.decode(data)  # the cached layout must not accept a shorter message
            if _rejected(dec, data[:cut]) is None:  # only trailing padding was cut
                _assert_same(dec.decode(data[:cut]), full)


@pytest.mark.parametrize("patch, where", [
    (lambda d: d[:20] + struct.pack("<I", 0xFFFFFFFF) + d[24:], "name: 4294967295 strings"),
    (lambda d: d[:24] + struct.pack("<I", 10**6) + d[28:], "name[0]: a string of 1000000"),
    (lambda d: d[:12] + struct.pack("<I", 999) + d[16:], "header.frame_id"),
    (lambda d: d[:28] + b"\xff\xfe" + d[30:], "name[0]: not UTF-8"),
    (lambda d: d[:32] + struct.pack("<I", 2**30) + d[36:], "position: 1073741824 doubles"),
    (lambda d: b"\x00\x02" + d[2:], "representation 0002"),
    (lambda d: b"\x00\x01\x00", "3 bytes"),
])
def test_malformed_bytes_name_where_they_broke(patch, where):
    data = serialize_message(joint_state_msg(["jo"], [1.0], [2.0], [3.0], frame_id="ab"))
    # header 4 | stamp 8 | frame_id 12: len, "ab\0", pad | name count 20 | len 24, "jo\0", pad
    # | position count 32, doubles 36 (8-aligned from byte 4) ...
    assert struct.unpack_from("<I", data, 20)[0] == 1 and data[28:30] == b"jo"
    for dec in (JointStateDecoder(), JointStateDecoder(JointStateReader(["jo"]))):
        dec.decode(data)  # a cached layout first
        err = _rejected(dec, patch(data))
        assert err is not None and where in str(err), err


def test_random_corruption_never_raises_anything_else():
    rng = random.Random(11)
    for _ in range(400):
        data = bytearray(serialize_message(_random_msg(rng)))
        dec = JointStateDecoder(JointStateReader(["j", "ab"]))
        dec.decode(bytes(data))
        for _ in range(rng.randrange(1, 6)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        _rejected(dec, bytes(data))


@pytest.mark.parametrize("n", range(10))
def test_encoder_writes_what_rclpy_writes(n):
    rng = random.Random(n)
    enc = Float64MultiArrayEncoder(n)
    for _ in range(20):
        vals = [rng.choice(SPECIAL) if rng.random() < 0.3 else rng.uniform(-9, 9)
                for _ in range(n)]
        ours = enc.fill(vals)
        assert _same_array(deserialize_message(ours, Float64MultiArray).data, vals)
        assert _same_array(ours.data, vals)
        ref = serialize_message(Float64MultiArray(data=vals))
        assert len(ref) >= len(ours)
        pad = slice(16, 20) if n else slice(0, 0)  # the 4 padding bytes before the doubles
        mask = lambda b: b[:pad.start] + b[pad.stop:len(ours)] if n else b[:len(ours)]  # noqa: E731
        assert mask(bytes(ours)) == mask(ref)
    assert enc.fill(np.arange(n + 1.0)).data == list(np.arange(n + 1.0))  # a new length


# ------------------------------------------------------------------ the renderer on bytes
def _renderer(**params):
    from fric_nodes.friction_renderer import FrictionRenderer

    return FrictionRenderer(parameter_overrides=[
        Parameter(k, value=v) for k, v in {"watchdog_timeout": 60.0, **params}.items()])


class _Sink:
    def __init__(self):
        self.sent = []

    def publish(self, msg):
        self.sent.append(bytes(serialize_message(msg)) if isinstance(msg, Float64MultiArray)
                         else list(msg.data))


def _cdr_callback(node):
    return next(s.callback for s in node.subscriptions if s.topic_name == node._state_topic)


@pytest.mark.parametrize("params, feed", [
    ({"joints": ["a", "b"], "a.F": 3.0, "max_effort": 3.5}, "_on_joint_state"),
    ({"joints": ["b"], "mode": "admittance", "admittance_input": "joint_effort"},
     "_on_effort_state"),
])
def test_renderer_answers_bytes_as_it_answers_messages(ros, params, feed):
    """The same stream (stick, slip, saturation, NaN, a missing joint, stale stamps, a joint
    order change) as CDR bytes to the subscription callback and as messages to the handler:
    the same commands, bit for bit, and the same counters."""
    rng = random.Random(1)
    a, b = _renderer(**params), _renderer(**params)
    try:
        a._out, b._out = _Sink(), _Sink()
        cb = _cdr_callback(a)
        t = 10**9
        for k in range(600):
            names = ["a", "b"] if k < 300 else ["b", "x", "a"]
            if k % 97 == 5:
                names = ["a"]
            v = [0.02 * np.sin(0.01 * k) + rng.uniform(-1e-3, 1e-3) for _ in names]
            if k % 53 == 7:
                v[0] = float("nan")
            t += 1_000_000 if k % 71 else -5_000_000
            msg = joint_state_msg(names, [0.01 * k] * len(names), v,
                                  [rng.uniform(-9, 9) for _ in names], stamp_ns=t)
            cb(serialize_message(msg))
            getattr(b, feed)(msg)
        assert a._out.sent == b._out.sent and len(a._out.sent) > 500
        assert a._rejects.counts == b._rejects.counts and a._rejects.counts
        assert a._stats.accepted == b._stats.accepted
    finally:
        a.destroy_node()
        b.destroy_node()


def test_renderer_rejects_malformed_bytes_with_a_counted_reason(ros):
    node = _renderer(joints=["stage_joint"])
    try:
        node._out = _Sink()
        cb = _cdr_callback(node)
        good = [serialize_message(joint_state_msg(["stage_joint"], [0.0], [0.05], [0.0],
                                                  stamp_ns=10**9 + k * 10**6)) for k in range(30)]
        for data in good[:20]:
            cb(data)
        last = node._out.sent[-1]
        assert last[0] < 0.0  # sliding forward: friction against it
        cb(good[20][:45])  # truncated in the position's double
        cb(b"")
        st = node.diagnostic_status()
        kv = {x.key: x.value for x in st.values}
        assert kv["rejected bad_message"] == "2"
        assert "malformed CDR JointState" in kv["rejected bad_message last"]
        assert node._out.sent[-2:] == [last, last]  # the safe output: the last effort again
        assert kv["accepted inputs"] == "20"
        for data in good[20:]:
            cb(data)
        assert node._stats.accepted == 30
    finally:
        node.destroy_node()
