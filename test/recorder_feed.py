"""A haptic run's messages, serialized as the stage and renderer publish them, fed into a
``fric_recorder`` node through its own drain path (``node._batch`` + ``node.drain()``, what its
timer does with the messages it takes from the DDS queues), faster than real time.

The run: ``rate`` Hz of joint_states (joint ``stage_joint``), effort commands, wrench (frame
``load_cell``) and the simulated hand force, stamps from 0, the default hand script of
``launch/haptic_render.launch.xml`` (rest, a push below breakaway, one above, release), then the
stage at rest with the hand off. Used by test/nodes/test_recorder_shutdown.py and
bench/recorder_shutdown.py (on ``sys.path``)."""

from __future__ import annotations

import time

import numpy as np

from fric_core.arm_identification.joint_state_bag import encode_joint_states

HAND_SCRIPT = "2:0, 10.5:2:0.5, 0.2:5.3:0.05, 1.5:0"
#: when the stage slides at 0.02 m/s: from the hand's ramp above 4 N to its release
SLIDE = (12.53, 12.70)
#: serialized templates (rclpy's bytes for frame "load_cell", one command entry, one float64)
#: and the byte offsets of the values written into them
WRENCH = bytes.fromhex("00010000" "00000000" "00000000" "0a000000" "6c6f61645f63656c6c00" "0000"
                       + "00" * 48)
WRENCH_SEC, WRENCH_FORCE_X = 4, 28
COMMAND = bytes.fromhex("00010000" "00000000" "00000000" "01000000" "00000000" + "00" * 8)
COMMAND_VALUE = 20
HAND = bytes.fromhex("00010000" + "00" * 8)
HAND_VALUE = 4


def _filled(template: bytes, n: int, values: dict) -> list[bytes]:
    """``n`` copies of ``template`` with ``values`` (offset -> (n,) array of a fixed-size
    little-endian dtype) written in."""
    L = len(template)
    buf = np.tile(np.frombuffer(template, dtype=np.uint8), (n, 1))
    for off, arr in values.items():
        arr = np.ascontiguousarray(arr)
        buf[:, off:off + arr.itemsize] = arr.view(np.uint8).reshape(n, arr.itemsize)
    data = buf.tobytes()
    return [data[i:i + L] for i in range(0, n * L, L)]


def block(t: np.ndarray, rx0_ns: int) -> list[tuple[int, int, bytes]]:
    """The messages of the stage times ``t`` [s]: ``(receive ns, recorder topic index, bytes)``
    (topic indices of ``fric_nodes.recorder._TOPICS``: 0 joint_states, 1 effort, 3 wrench,
    4 hand), the four of a cycle received 1 µs apart."""
    from fric_core.haptics.stage import OperatorHand

    hand_law = OperatorHand.parse(HAND_SCRIPT)
    hand = np.array([hand_law.force(float(x)) for x in t]) if t[0] < hand_law.duration \
        else np.zeros(t.size)
    sliding = (t >= SLIDE[0]) & (t < SLIDE[1])  # the push above breakaway (4 N rendered)
    v = np.where(sliding, 0.02, 0.0)
    x = 0.02 * np.clip(t - SLIDE[0], 0.0, SLIDE[1] - SLIDE[0])
    effort = np.where(sliding, -4.0, -np.clip(hand, -4.0, 4.0))
    stamps = np.round(t * 1e9).astype(np.int64)
    js = encode_joint_states(stamps, ["stage_joint"], x[:, None], v[:, None], hand[:, None])
    sec = (stamps // 1_000_000_000).astype("<i4")
    nsec = (stamps % 1_000_000_000).astype("<u4")
    wrench = _filled(WRENCH, t.size, {WRENCH_SEC: sec, WRENCH_SEC + 4: nsec,
                                      WRENCH_FORCE_X: hand.astype("<f8")})
    cmd = _filled(COMMAND, t.size, {COMMAND_VALUE: effort.astype("<f8")})
    hnd = _filled(HAND, t.size, {HAND_VALUE: hand.astype("<f8")})
    rx = rx0_ns + stamps
    out = []
    for k in range(t.size):
        r = int(rx[k])
        out += [(r, 0, js[k]), (r + 1000, 3, wrench[k]), (r + 2000, 4, hnd[k]),
                (r + 3000, 1, cmd[k])]
    return out


def feed(node, seconds: float, rate: float = 1000.0, chunk: float = 1.0) -> int:
    """Feed ``seconds`` of the run at ``rate`` into the recorder ``node`` (its bag, and whatever
    its drain does with each batch), ``chunk`` seconds per drain. Returns the messages fed."""
    rx0 = time.time_ns() - int(seconds * 1e9)
    n_total = int(round(seconds * rate))
    per = max(1, int(round(chunk * rate)))
    fed = 0
    for i0 in range(0, n_total, per):
        t = np.arange(i0, min(i0 + per, n_total)) / rate
        msgs = block(t, rx0)
        node._batch.extend(msgs)
        node.drain()
        fed += len(msgs)
    return fed
