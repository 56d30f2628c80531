"""The stage device emulator (fric_nodes.hardware.stage_emulator) driven by a host over pyserial.

Asserted, with the host opening the emulator's pseudo-terminal like a serial port: state frames
arrive at the device's rate with contiguous sequence numbers and device time; force and position
commands take effect and are acknowledged; without commands the device goes safe (zero force) after
its timeout; garbage, corrupted and dropped frames (both directions) are survived and counted;
pausing the link makes the host's reads time out; unplugging makes them fail, and a replugged port
works again; the command-line emulator serves through a --link symlink.

Most tests run the device at 200 Hz (5 physics steps of 1 ms per frame) so that timing bounds hold
on a loaded 2-core machine; one checks the default 1 kHz with a loose bound.
"""

import math
import os
import subprocess
import sys
import time

import pytest
import serial

from fric_nodes.hardware.stage_emulator import StageEmulator
from fric_nodes.hardware.stage_protocol import (TYPE_STATE, Mode, StreamDecoder, encode_command)

RATE = 200.0


class Host:
    """A minimal host: pyserial port, state-frame decoder, command sender."""

    def __init__(self, port, timeout=0.05):
        self.ser = serial.Serial(port, timeout=timeout)
        self.ser.reset_input_buffer()  # drop what the device sent before we opened the port
        self.dec = StreamDecoder(accept=(TYPE_STATE,))
        self.seq = 0

    def read(self, duration=None, n=None, until=None, limit=3.0):
        """Frames received for ``duration`` s, or until n frames or ``until(frame)`` (or limit)."""
        out = []
        t_end = time.monotonic() + (duration if duration is not None else limit)
        while time.monotonic() < t_end:
            data = self.ser.read(self.ser.in_waiting or 1)
            for f in self.dec.feed(data):
                out.append(f)
                if until is not None and until(f):
                    return out
            if n is not None and len(out) >= n:
                return out
        if duration is None:
            raise AssertionError(f"timed out after {limit} s with {len(out)} frames")
        return out

    def send(self, mode, value=0.0):
        self.ser.write(encode_command(self.seq, mode, value))
        self.seq += 1
        return self.seq - 1

    def close(self):
        self.ser.close()


@pytest.fixture
def emu():
    e = StageEmulator(rate_hz=RATE, command_timeout=0.1, seed=1).start()
    yield e
    e.stop()


@pytest.fixture
def host(emu):
    h = Host(emu.port)
    yield h
    h.close()


def test_state_frames_at_the_device_rate(emu, host):
    host.read(n=3)  # in step
    t0 = time.monotonic()
    frames = host.read(duration=1.0)
    elapsed = time.monotonic() - t0
    assert 0.75 * RATE * elapsed <= len(frames) <= 1.1 * RATE * elapsed + 2
    seqs = [f.seq for f in frames]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))  # none lost
    dt = [b.time - a.time for a, b in zip(frames, frames[1:])]
    assert all(d == pytest.approx(1.0 / RATE, abs=1e-9) for d in dt)  # device time: 5 ms each
    f = frames[-1]
    assert f.timeout and f.mode == Mode.IDLE and f.motor_force == 0.0  # no command yet: safe
    assert f.position == 0.0 and f.velocity == 0.0
    assert abs(f.force) < 0.5  # load-cell noise only (nothing attached)
    assert host.dec.stats.errors == 0 and host.dec.stats.lost_frames == 0


def test_default_rate_is_1khz():
    with StageEmulator(seed=2) as e:
        h = Host(e.port)
        try:
            h.read(n=5)
            t0 = time.monotonic()
            frames = h.read(duration=1.0)
            n = len(frames)
            elapsed = time.monotonic() - t0
        finally:
            h.close()
        assert n >= 0.6 * 1000.0 * elapsed  # loose: the machine may be busy
        assert frames[-1].time - frames[0].time == pytest.approx((n - 1) * 1e-3, abs=1e-6) or \
            h.dec.stats.lost_frames > 0
        tm = e.timing()
        assert 900.0 < tm["rate_hz"] < 1100.0


def test_force_and_position_commands_take_effect(emu, host):
    # force mode: 4 N forward, repeated every frame (keep-alive)
    def push(mode, value, seconds):
        frames = []
        t_end = time.monotonic() + seconds
        while time.monotonic() < t_end:
            last = host.send(mode, value)
            frames += host.read(n=1, limit=1.0)
        return frames, last

    frames, last = push(Mode.FORCE, 4.0, 0.4)
    f = frames[-1]
    assert f.mode == Mode.FORCE and not f.timeout and f.motor_force == pytest.approx(4.0)
    assert last - 3 <= f.ack <= last  # acknowledged, within a few frames
    assert f.position > 0.005  # it moved forward (4 N vs 1.04 N static friction)
    assert emu.last_reading.true_position > 0.005
    # saturation is reported
    frames, _ = push(Mode.FORCE, 20.0, 0.05)
    assert frames[-1].saturated and frames[-1].motor_force == pytest.approx(9.48)
    # position mode: back to -5 mm
    frames, _ = push(Mode.POSITION, -0.005, 1.0)
    f = frames[-1]
    assert f.mode == Mode.POSITION and not f.saturated
    assert abs(f.position + 0.005) < 1.04 / emu.sim.kp + 1e-5  # PD static error: friction / kp
    assert emu.stats.commands >= 100


def test_command_timeout_makes_the_device_safe(emu, host):
    seq = host.send(Mode.FORCE, 2.0)
    applied = host.read(until=lambda f: f.ack == seq and f.mode == Mode.FORCE)[-1]
    assert applied.motor_force == pytest.approx(2.0) and not applied.timeout
    safe = host.read(until=lambda f: f.timeout, limit=2.0)[-1]
    assert safe.mode == Mode.IDLE and safe.motor_force == 0.0
    # it went safe after the timeout (0.1 s of device time), give or take one frame
    assert 0.1 - 1e-9 <= safe.time - applied.time + 1.0 / RATE <= 0.1 + 2.0 / RATE
    assert emu.stats.timeouts == 1
    later = host.read(duration=0.2)
    assert all(f.timeout and f.motor_force == 0.0 for f in later)
    # a new command brings it back
    seq = host.send(Mode.FORCE, 1.5)
    f = host.read(until=lambda f: f.ack == seq)[-1]
    assert not f.timeout and f.motor_force == pytest.approx(1.5)


def test_garbage_corruption_and_drops_are_survived(emu, host):
    host.read(n=5)
    emu.inject_garbage(b"\xa5\x5a\x23" + os.urandom(50) + b"\xa5")  # a false start, then noise
    emu.corrupt_frames(3)
    emu.drop_frames(2)
    frames = host.read(duration=0.5)
    s = host.dec.stats
    assert s.crc_errors >= 3 and s.garbage_bytes >= 54
    assert s.lost_frames == 5 and s.seq_gaps >= 1  # 3 corrupted + 2 dropped, seen as gaps
    assert len(frames) >= 0.5 * RATE * 0.5
    seqs = [f.seq for f in frames[-20:]]
    assert seqs == list(range(seqs[0], seqs[0] + 20))  # flowing again
    # host -> device: garbage and a corrupted command are rejected, counted, and flagged
    bad = bytearray(encode_command(99, Mode.FORCE, 9.0))
    bad[9] ^= 0x10
    host.ser.write(os.urandom(40) + bytes(bad))
    f = host.read(until=lambda f: f.rx_error)[-1]
    assert f.mode == Mode.IDLE and f.motor_force == 0.0  # the corrupted 9 N was not applied
    assert emu.decoder.stats.crc_errors + emu.decoder.stats.length_errors >= 1
    seq = host.send(Mode.FORCE, 1.0)  # and the next good command works
    f = host.read(until=lambda f: f.ack == seq)[-1]
    assert f.motor_force == pytest.approx(1.0) and not f.rx_error


def test_override_frames_sends_crc_valid_frames_with_the_given_values(emu, host):
    # the fault a host's plausibility check is for (issue 13, 6c): frames whose checksum is
    # right and whose values are not. A host without limits takes 3e38 m (only NaN/inf are
    # refused by the protocol itself); the sequence stays contiguous (no frame is lost).
    host.read(n=3)
    emu.override_frames(2, position=3e38, velocity=-7.5)
    frames = host.read(until=lambda f: f.position > 1e38)
    frames += host.read(n=5)
    bad = [f for f in frames if f.position > 1e38]
    assert len(bad) == 2 and all(f.velocity == -7.5 for f in bad)
    assert frames[-1].position == 0.0  # back to the device's true values
    emu.override_frames(1, force=math.nan)
    host.read(until=lambda f: host.dec.stats.value_errors == 1)
    s = host.dec.stats
    assert s.crc_errors == 0 and s.lost_frames == 0 and s.value_errors == 1
    with pytest.raises(ValueError, match="unknown field"):
        emu.override_frames(1, pos=1.0)


def test_pause_makes_the_host_time_out_and_the_device_go_safe(emu, host):
    seq = host.send(Mode.FORCE, 2.0)
    host.read(until=lambda f: f.ack == seq)
    emu.pause(0.35)
    time.sleep(0.02)
    host.ser.reset_input_buffer()
    t0 = time.monotonic()
    got = host.ser.read(1)  # read timeout 0.05 s: nothing comes
    assert got == b"" and time.monotonic() - t0 >= 0.04
    frames = host.read(n=3, limit=2.0)
    assert frames[0].lost >= 0.25 * RATE  # the frames of the pause are missing
    assert frames[-1].timeout and frames[-1].motor_force == 0.0  # no commands read: safe


def test_unplug_fails_the_host_read_and_replug_serves_again(emu, host):
    host.read(n=3)
    emu.unplug()
    with pytest.raises(serial.SerialException):
        t_end = time.monotonic() + 2.0
        while time.monotonic() < t_end:  # a read error, not an endless stream of empty reads
            host.ser.read(64)
    assert emu.running  # the device itself keeps running
    host.close()
    time.sleep(0.05)  # unplugged for a while: the frames of that time are lost
    port = emu.replug()
    h2 = Host(port)
    try:
        frames = h2.read(n=5)
        assert frames[-1].seq > 5 and h2.dec.stats.errors == 0
        seq = h2.send(Mode.FORCE, 1.0)
        assert h2.read(until=lambda f: f.ack == seq)[-1].motor_force == pytest.approx(1.0)
    finally:
        h2.close()
    assert emu.stats.frames_dropped > 0


def test_command_line_emulator_serves_on_a_link(tmp_path):
    link = str(tmp_path / "stage")
    proc = subprocess.Popen(
        [sys.executable, "-m", "fric_nodes.hardware.stage_emulator", "--link", link,
         "--rate", "200", "--sample", "brass", "--hand", "0.2:0, 5:1.0:0.1",
         "--param", "force_noise=0", "--duration", "20"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert line.startswith("port: /dev/"), (line, proc.stderr.read() if proc.poll() else "")
        port = line.split(":", 1)[1].strip()
        assert os.path.realpath(link) == os.path.realpath(port)
        h = Host(link)
        try:
            frames = h.read(n=40, limit=5.0)
        finally:
            h.close()
        assert frames[-1].seq - frames[0].seq == len(frames) - 1
        assert math.isfinite(frames[-1].force)
        proc.terminate()
        out, err = proc.communicate(timeout=5.0)
        assert proc.returncode == 0, err
        assert "stage_emulator:" in out and not os.path.lexists(link)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_bad_emulator_settings_are_rejected():
    with pytest.raises(ValueError, match="rate_hz"):
        StageEmulator(rate_hz=300.0)  # 3.33 physics steps per frame
    with pytest.raises(ValueError, match="command_timeout"):
        StageEmulator(command_timeout=0.0)
    r = subprocess.run([sys.executable, "-m", "fric_nodes.hardware.stage_emulator", "--rate", "300",
                        "--duration", "0.1"], capture_output=True, text=True, timeout=20)
    assert r.returncode == 2 and "rate_hz" in r.stderr


def test_hand_start_first_command_waits_for_a_controller():
    """--hand-start first_command: the operator hand (here 1 N on the tool side after 0.1 s of
    rest) stays off while the host only sends idle keep-alives, and its script clock starts at
    the first force command the device applies (to one frame)."""
    from fric_core.haptics.stage import OperatorHand
    hand = OperatorHand.parse("0.1:0, 5:1.0", location="tool")
    e = StageEmulator(rate_hz=RATE, command_timeout=1.0, seed=1, handle=True, hand=hand,
                      force_noise=0.0, hand_start="first_command").start()
    h = Host(e.port)
    try:
        h.send(Mode.IDLE)
        idle = h.read(duration=0.4)
        assert e.sim.hand is None and len(idle) > 40
        assert max(abs(f.force) for f in idle) < 1e-9  # no hand on the load cell
        h.send(Mode.FORCE, 0.0)
        acked = h.read(until=lambda f: f.ack == h.seq - 1 and f.mode == Mode.FORCE)
        t_cmd = acked[-1].time
        frames = h.read(until=lambda f: f.time > t_cmd + 0.5)
        assert e.sim.hand is not None
        assert e.sim.hand.start == pytest.approx(t_cmd, abs=1.5 / RATE)
        pushed = [f.force for f in frames if f.time > e.sim.hand.start + 0.15]
        # the carriage's static friction (1.04 N forward) holds 1 N: the load cell reads the
        # hand (the device's sign: the force on the tool; the node publishes its negative),
        # the handle at rest adds no inertial force
        assert len(pushed) > 20
        assert min(pushed) == pytest.approx(-1.0, abs=1e-6)
        assert max(pushed) == pytest.approx(-1.0, abs=1e-6)
        before = [f.force for f in frames if f.time < e.sim.hand.start + 0.1]
        assert max(abs(x) for x in before) < 1e-9
    finally:
        h.close()
        e.stop()
    with pytest.raises(ValueError, match="hand_start"):
        StageEmulator(hand_start="later")
