"""A haptic run's messages, serialized as the stage and renderer publish them, fed into a
``fric_recorder`` node through its own drain path (``node._batch`` + ``node.drain()``, what its
timer does with the messages it takes from the DDS queues), faster than real time.

The run: ``rate`` Hz of joint_states (joint ``stage_joint``), effort commands, wrench (frame
``load_cell``) and the simulated hand force, stamps from 0, the default hand script of
``launch/haptic_render.launch.xml`` (rest, a push below breakaway, one above, release), then the
stage at rest with the hand off; or (``kind`` arm) an arm's joint_states (:data:`ARM_JOINTS`,
sinusoids) and effort commands. Used by test/nodes/test_recorder_shutdown.py and
bench/recorder_shutdown.py.

As a script, a recorder process fed that way before it starts recording (then it records until
SIGINT, as ``fric_recorder``; "FED ..." on stderr once fed)::

    python test/recorder_feed.py SECONDS RATE haptic|arm --ros-args -p out_dir:=DIR ...
"""

from __future__ import annotations

import sys
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


#: the joints of the arm recording
ARM_JOINTS = [f"joint_a{i}" for i in range(1, 8)]


def arm_block(t: np.ndarray, rx0_ns: int) -> list[tuple[int, int, bytes]]:
    """An arm's messages at stage times ``t`` [s]: joint_states of :data:`ARM_JOINTS` (position,
    velocity, effort) and the effort commands (7 entries), ``(receive ns, topic index, bytes)``
    (0 joint_states, 1 effort)."""
    f = np.linspace(0.1, 0.4, len(ARM_JOINTS))[None, :]
    q = 0.5 * np.sin(2 * np.pi * f * t[:, None])
    v = np.pi * f * np.cos(2 * np.pi * f * t[:, None])
    effort = 2.0 * np.tanh(v / 0.05)
    stamps = np.round(t * 1e9).astype(np.int64)
    js = encode_joint_states(stamps, ARM_JOINTS, q, v, effort)
    template = bytearray(COMMAND[:16] + bytes(4 + 8 * len(ARM_JOINTS)))
    template[12:16] = len(ARM_JOINTS).to_bytes(4, "little")
    cmd = _filled(bytes(template), t.size, {COMMAND_VALUE + 8 * j: effort[:, j].astype("<f8")
                                            for j in range(len(ARM_JOINTS))})
    rx = rx0_ns + stamps
    out = []
    for k in range(t.size):
        r = int(rx[k])
        out += [(r, 0, js[k]), (r + 2000, 1, cmd[k])]
    return out


def feed(node, seconds: float, rate: float = 1000.0, chunk: float = 1.0,
         kind: str = "haptic") -> int:
    """Feed ``seconds`` of the run (``kind`` haptic or arm) at ``rate`` into the recorder
    ``node`` (its bag, and whatever its drain does with each batch), ``chunk`` seconds per
    drain. Returns the messages fed."""
    make = arm_block if kind == "arm" else block
    rx0 = time.time_ns() - int(seconds * 1e9)
    n_total = int(round(seconds * rate))
    per = max(1, int(round(chunk * rate)))
    fed = 0
    for i0 in range(0, n_total, per):
        t = np.arange(i0, min(i0 + per, n_total)) / rate
        msgs = make(t, rx0)
        node._batch.extend(msgs)
        node.drain()
        fed += len(msgs)
    return fed


def main(argv: list[str]) -> int:
    """``SECONDS RATE KIND RECORDER_ARGS...``: a recorder process fed before it records."""
    from fric_nodes import recorder

    seconds, rate, kind = float(argv[0]), float(argv[1]), argv[2]
    init = recorder.Recorder.__init__

    def fed_init(self, *a, **k):
        init(self, *a, **k)
        t0 = time.monotonic()
        n = feed(self, seconds, rate, kind=kind)
        print(f"FED {n} messages in {time.monotonic() - t0:.1f} s", file=sys.stderr,
              flush=True)

    recorder.Recorder.__init__ = fed_init
    return recorder.main(argv[3:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
