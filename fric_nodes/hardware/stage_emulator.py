"""A device emulator for the haptic stage's serial protocol, on a pseudo-terminal.

It plays the firmware of a real stage: every servo cycle (wall-clock paced, 1 kHz by default) it
reads the command frames the host sent, applies the latest one to the :class:`HapticStageSim`
physics, and sends a state frame. It implements the device side of docs/serial_protocol.md: the
command timeout (no valid command for ``command_timeout`` seconds → idle, zero motor force, TIMEOUT
flag), the status flags and the command acknowledgement. The host opens :attr:`StageEmulator.port`
(the pty's slave, e.g. ``/dev/pts/5``) like any serial port, e.g. ``serial.Serial(port)``.

Run it as a process::

    python -m fric_nodes.hardware.stage_emulator [--link /tmp/fric_stage] [--rate 1000]
        [--sample brass]

It prints ``port: /dev/pts/N`` (and the ``--link`` symlink pointing to it), then serves until
SIGINT/SIGTERM or ``--duration``. Or in-process::

    emu = StageEmulator(rate_hz=200.0, sample="brass").start()
    ser = serial.Serial(emu.port, timeout=0.1)
    frames = StreamDecoder().feed(ser.read(400))  # state frames at the servo rate
    emu.stop()

Fault injection for tests: :meth:`inject_garbage`, :meth:`corrupt_frames` (bad CRC),
:meth:`drop_frames` (sequence gap), :meth:`pause` (link silent for a while), :meth:`unplug`
(close the pty: the host's reads fail) and :meth:`replug` (a new pty; ``port`` and the link change).

The physics runs at ``dt`` (default 1 ms, like the device's servo) with ``round(1/(rate_hz·dt))``
physics steps per frame, so a slower frame rate (e.g. 200 Hz for deterministic tests on a loaded
machine) keeps the same physics. Device time is the simulation time.

``hand_start="first_command"`` (``--hand-start first_command``): the operator hand's script
clock starts at the first force or position command the device applies (idle keep-alives do not
count), the device-side twin of the ``haptic_stage`` node's ``hand_start``: the scripted operator
only pushes once a controller renders, however long the host's nodes take to come up.
"""

from __future__ import annotations

import argparse
import array
import errno
import math
import os
import signal
import sys
import termios
import threading
import time
import tty
from dataclasses import dataclass, fields, replace

from fric_core.haptics.stage import HapticStageSim, OperatorHand
from fric_interfaces.stage_params import HAND_STARTS

from .stage_protocol import (DEFAULT_COMMAND_TIMEOUT_S, DEFAULT_RATE_HZ, TYPE_COMMAND, Mode,
                             Status, StreamDecoder, encode_state, state_frame_bytes)

__all__ = ["StageEmulator", "EmulatorStats", "main"]


@dataclass
class EmulatorStats:
    """Counters of a :class:`StageEmulator`."""

    frames_sent: int = 0  #: state frames written to the pty
    frames_dropped: int = 0  #: state frames not sent (drop_frames, pause, unplugged, tx full)
    tx_overflows: int = 0  #: the host did not read: stale output discarded to send fresh frames
    commands: int = 0  #: valid command frames applied
    timeouts: int = 0  #: transitions to the safe state by command timeout
    overruns: int = 0  #: the loop fell more than ``max_lag`` behind the wall clock (re-anchored)
    ticks: int = 0  #: servo cycles run

    def as_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}


class StageEmulator:
    """The emulated stage device on a pty (see the module docstring).

    ``sim``: the physics (a :class:`HapticStageSim`); by default one is built from ``sim_kwargs``
    (any :class:`HapticStageSim` keyword, e.g. ``sample="brass"``, ``hand=...``, ``seed=1``).
    ``rate_hz``: servo cycles (state frames) per second of wall time; ``command_timeout`` (s): the
    safe-state timeout; ``link``: a symlink path kept pointing at the current pty.
    """

    def __init__(self, sim: HapticStageSim | None = None, *, rate_hz: float = DEFAULT_RATE_HZ,
                 command_timeout: float = DEFAULT_COMMAND_TIMEOUT_S, link: str | None = None,
                 max_lag: float = 0.05, timing_window: int = 20000,
                 hand_start: str = "immediately", **sim_kwargs):
        if sim is not None and sim_kwargs:
            raise ValueError("give either sim or HapticStageSim keywords, not both")
        if hand_start not in HAND_STARTS:
            raise ValueError(f"hand_start: expected one of {HAND_STARTS}, got {hand_start!r}")
        self.sim = sim if sim is not None else HapticStageSim(**sim_kwargs)
        # hand_start first_command: the hand waits (off) for the first force/position command
        self._hand_pending = None
        if hand_start == "first_command":
            self._hand_pending, self.sim.hand = self.sim.hand, None
        self.rate_hz = float(rate_hz)
        if not (math.isfinite(self.rate_hz) and self.rate_hz > 0.0):
            raise ValueError(f"rate_hz: must be > 0, got {rate_hz!r}")
        n = round(1.0 / (self.rate_hz * self.sim.dt))
        if n < 1 or abs(n * self.sim.dt * self.rate_hz - 1.0) > 1e-9:
            raise ValueError(f"rate_hz: 1/rate_hz must be a whole number of physics steps "
                             f"(dt={self.sim.dt!r}), got {rate_hz!r}")
        self.steps_per_frame = n
        self.command_timeout = float(command_timeout)
        if not (math.isfinite(self.command_timeout) and self.command_timeout > 0.0):
            raise ValueError(f"command_timeout: must be > 0, got {command_timeout!r}")
        self.link = link
        self.max_lag = float(max_lag)
        self.stats = EmulatorStats()
        self.decoder = StreamDecoder(accept=(TYPE_COMMAND,))
        self.port: str | None = None
        self.last_reading = None
        # device state
        self.mode = Mode.IDLE
        self.value = 0.0
        self.ack = 0
        self.timed_out = True  # no command yet: safe
        self._t_cmd = -math.inf  # device time of the last valid command
        self._seq = 0
        self._rx_errors_seen = 0
        # faults
        self._lock = threading.Lock()
        self._garbage = bytearray()
        self._corrupt = 0
        self._drop = 0
        self._override_n = 0
        self._override: dict = {}
        self._pause_until = 0.0
        # pty and thread
        self._master: int | None = None
        self._slave: int | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._times = array.array("d", bytes(8 * max(2, int(timing_window))))
        self._nt = 0

    # -- lifecycle ---------------------------------------------------------------------------------
    def start(self) -> "StageEmulator":
        """Open the pty and start serving in a daemon thread; returns self."""
        if self._thread is not None:
            raise RuntimeError("the emulator is already running")
        self._open_pty()
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="stage-emulator", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop the thread and close the pty (idempotent)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5.0)
            self._thread = None
        with self._lock:
            self._close_pty()

    def __enter__(self) -> "StageEmulator":
        return self.start() if self._thread is None else self

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def _open_pty(self) -> None:
        master, slave = os.openpty()
        tty.setraw(slave)  # no echo, no line discipline: bytes pass unchanged both ways
        os.set_blocking(master, False)
        self._master, self._slave = master, slave
        self.port = os.ttyname(slave)
        self.decoder.reset()
        if self.link:
            try:
                if os.path.islink(self.link):
                    os.unlink(self.link)
                os.symlink(self.port, self.link)
            except OSError as exc:
                raise OSError(f"link: cannot create symlink {self.link!r}: {exc}") from None

    def _close_pty(self) -> None:
        for fd in (self._master, self._slave):
            if fd is not None:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self._master = self._slave = None
        if self.link and os.path.islink(self.link):
            try:
                os.unlink(self.link)
            except OSError:
                pass

    # -- fault injection -------------------------------------------------------------------------
    def inject_garbage(self, data: bytes | int = 64) -> None:
        """Send ``data`` (or that many random bytes) before the next state frame."""
        if isinstance(data, int):
            data = os.urandom(data)
        with self._lock:
            self._garbage += bytes(data)

    def corrupt_frames(self, n: int = 1) -> None:
        """Send the next ``n`` state frames with a wrong CRC."""
        with self._lock:
            self._corrupt += int(n)

    _FIELDS = ("position", "velocity", "force", "acceleration", "motor_force")

    def override_frames(self, n: int = 1, **values: float) -> None:
        """Send the next ``n`` state frames with these field values (``position``, ``velocity``,
        ``force``, ``acceleration``, ``motor_force``; any float32, NaN and infinities included)
        and a valid CRC: a faulty device's implausible frames, e.g. ``position=3e38``."""
        bad = [k for k in values if k not in self._FIELDS]
        if bad:
            raise ValueError(f"override_frames: unknown field(s) {bad}; the float fields are "
                             f"{list(self._FIELDS)}")
        with self._lock:
            self._override_n = int(n)
            self._override = {k: float(v) for k, v in values.items()}

    def drop_frames(self, n: int = 1) -> None:
        """Do not send the next ``n`` state frames (their sequence numbers are used: a gap)."""
        with self._lock:
            self._drop += int(n)

    def pause(self, seconds: float) -> None:
        """Silence the link for ``seconds``: nothing sent, nothing read (commands time out); the
        servo and the physics keep running."""
        with self._lock:
            self._pause_until = time.monotonic() + float(seconds)

    def unplug(self) -> None:
        """Close the pty, as if the cable were pulled: the host's reads fail (EIO / no data)."""
        with self._lock:
            self._close_pty()

    def replug(self) -> str:
        """Open a new pty (after :meth:`unplug`); returns the new :attr:`port` (link re-pointed)."""
        with self._lock:
            self._close_pty()
            self._open_pty()
            return self.port

    # -- timing ----------------------------------------------------------------------------------
    def timing(self) -> dict:
        """Achieved frame rate and period jitter over the last ``timing_window`` frames (wall
        clock at each frame write): rate (Hz), period mean/std, and |period − nominal| p50, p99
        and max (s)."""
        with self._lock:
            n = min(self._nt, len(self._times))
            start = self._nt - n
            ts = [self._times[(start + i) % len(self._times)] for i in range(n)]
        if n < 3:
            return {"frames": n}
        per = [b - a for a, b in zip(ts, ts[1:])]
        nominal = 1.0 / self.rate_hz
        dev = sorted(abs(p - nominal) for p in per)
        mean = sum(per) / len(per)
        std = math.sqrt(sum((p - mean) ** 2 for p in per) / len(per))
        return {"frames": n, "rate_hz": 1.0 / mean, "period_mean": mean, "period_std": std,
                "jitter_p50": dev[len(dev) // 2], "jitter_p99": dev[min(len(dev) - 1,
                                                                         int(0.99 * len(dev)))],
                "jitter_max": dev[-1], "period_max": max(per)}

    # -- the servo loop ----------------------------------------------------------------------------
    def _run(self) -> None:
        period = 1.0 / self.rate_hz
        nxt = time.monotonic()
        while not self._stop.is_set():
            now = time.monotonic()
            if now < nxt:
                time.sleep(nxt - now)
                continue
            try:
                self._tick(now)
            except Exception as exc:  # a device never dies silently: report and go safe
                print(f"stage_emulator: error in the servo loop: {exc!r}", file=sys.stderr)
                self.mode, self.value = Mode.IDLE, 0.0
            nxt += period
            if time.monotonic() - nxt > self.max_lag:
                self.stats.overruns += 1
                nxt = time.monotonic()

    def _read_commands(self, t_dev: float) -> None:
        fd = self._master
        while fd is not None:
            try:
                data = os.read(fd, 4096)
            except BlockingIOError:
                return
            except OSError as exc:
                if exc.errno == errno.EIO:  # no host has the port open
                    return
                raise
            if not data:
                return
            for cmd in self.decoder.feed(data):
                self.mode, self.value, self.ack = Mode(cmd.mode), cmd.value, cmd.seq
                self._t_cmd = t_dev
                self.stats.commands += 1
                if self._hand_pending is not None and self.mode != Mode.IDLE:
                    pending, self._hand_pending = self._hand_pending, None
                    self.sim.hand = replace(pending, start=pending.start + self.sim.t)
            if len(data) < 4096:
                return

    def _write(self, frame: bytes) -> bool:
        fd, slave = self._master, self._slave
        if fd is None:
            return False
        for attempt in (0, 1):
            try:
                n = os.write(fd, frame)
                if n < len(frame):  # the pty took part of it: the host gets a broken frame
                    self.stats.tx_overflows += 1
                return True
            except BlockingIOError:
                if attempt == 0 and slave is not None:
                    # the host is not reading: like a UART, stale bytes are lost, not queued
                    termios.tcflush(slave, termios.TCIFLUSH)
                    self.stats.tx_overflows += 1
            except OSError:
                return False
        return False

    def _tick(self, now: float) -> None:
        sim = self.sim
        st = self.stats
        with self._lock:
            paused = now < self._pause_until
            t_dev = sim.t
            if not paused:
                self._read_commands(t_dev)
            # command timeout -> safe
            late = t_dev - self._t_cmd > self.command_timeout
            if late and not self.timed_out:
                st.timeouts += 1
            self.timed_out = late
            if late:
                self.mode, self.value = Mode.IDLE, 0.0
            mode, value = self.mode, self.value
            # servo cycle(s)
            sat = lim = False
            for _ in range(self.steps_per_frame):
                if mode == Mode.FORCE:
                    r = sim.step(value)
                elif mode == Mode.POSITION:
                    r = sim.step(None, value)
                else:
                    r = sim.step()
                sat |= r.saturated
                lim |= r.at_limit
            self.last_reading = r
            st.ticks += 1
            # state frame
            errs = self.decoder.stats.errors
            status = Status.with_mode(
                (Status.SATURATED if sat else 0) | (Status.AT_LIMIT if lim else 0)
                | (Status.TIMEOUT if late else 0)
                | (Status.RX_ERROR if errs != self._rx_errors_seen else 0), mode)
            self._rx_errors_seen = errs
            if self._override_n > 0:
                self._override_n -= 1
                vals = dict(zip(self._FIELDS, (r.position, r.velocity, r.force, r.acceleration,
                                               r.motor_force)), **self._override)
                frame = state_frame_bytes(self._seq, round(r.t * 1e6), *vals.values(),
                                          self.ack, status)
            else:
                frame = encode_state(self._seq, round(r.t * 1e6), r.position, r.velocity,
                                     r.force, r.acceleration, r.motor_force, self.ack, status)
            self._seq += 1
            if self._drop > 0 or paused or self._master is None:
                self._drop = max(0, self._drop - 1)
                st.frames_dropped += 1
                return
            if self._corrupt > 0:
                self._corrupt -= 1
                frame = frame[:-1] + bytes((frame[-1] ^ 0xFF,))
            if self._garbage:
                self._write(bytes(self._garbage))
                self._garbage.clear()
            if self._write(frame):
                st.frames_sent += 1
                self._times[self._nt % len(self._times)] = time.monotonic()
                self._nt += 1
            else:
                st.frames_dropped += 1


# -- command line ----------------------------------------------------------------------------------
def _param(text: str):
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    try:
        return name.strip(), float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{name}: not a number: {value!r}") from None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m fric_nodes.hardware.stage_emulator",
        description="Emulate the haptic stage device on a pseudo-terminal "
                    "(protocol: docs/serial_protocol.md; physics: fric_core.haptics.stage).")
    ap.add_argument("--link", help="create this symlink to the pty (e.g. /tmp/fric_stage)")
    ap.add_argument("--rate", type=float, default=DEFAULT_RATE_HZ,
                    help="servo/state frame rate in Hz (default %(default)s)")
    ap.add_argument("--dt", type=float, default=1e-3, help="physics step in s (default 1e-3)")
    ap.add_argument("--timeout-ms", type=float, default=DEFAULT_COMMAND_TIMEOUT_S * 1e3,
                    help="command timeout in ms before the device goes safe (default %(default)s)")
    ap.add_argument("--seed", type=int, default=0, help="sensor noise seed")
    ap.add_argument("--sample", choices=["brass", "teflon", "rubber"], help="sample block")
    ap.add_argument("--handle", action="store_true", help="attach a handle beyond the load cell")
    ap.add_argument("--hand", help="operator hand script 'duration:force[:ramp],...' (N, s)")
    ap.add_argument("--hand-location", choices=["carriage", "tool"], default="carriage")
    ap.add_argument("--hand-start", choices=HAND_STARTS, default="immediately",
                    help="when the hand script's clock starts: at device start, or at the "
                         "first force/position command (default %(default)s)")
    ap.add_argument("--param", type=_param, action="append", default=[], metavar="NAME=VALUE",
                    help="any numeric HapticStageSim parameter, e.g. carriage_mass=0.7")
    ap.add_argument("--duration", type=float, help="stop after this many seconds")
    ap.add_argument("--stats", type=float, default=0.0, metavar="S",
                    help="print counters and timing every S seconds (0: only at exit)")
    args = ap.parse_args(argv)

    kw = dict(args.param)
    kw.update(dt=args.dt, seed=args.seed, sample=args.sample, handle=args.handle)
    if args.hand:
        kw["hand"] = OperatorHand.parse(args.hand, location=args.hand_location)
    try:
        emu = StageEmulator(rate_hz=args.rate, command_timeout=args.timeout_ms * 1e-3,
                            link=args.link, hand_start=args.hand_start, **kw)
    except (ValueError, TypeError) as exc:
        print(f"stage_emulator: {exc}", file=sys.stderr)
        return 2
    done = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: done.set())
    emu.start()
    print(f"port: {emu.port}", flush=True)
    if args.link:
        print(f"link: {args.link} -> {emu.port}", flush=True)
    t_end = time.monotonic() + args.duration if args.duration else math.inf
    try:
        while not done.is_set() and time.monotonic() < t_end:
            wait = min(args.stats or 0.5, max(0.0, t_end - time.monotonic()))
            done.wait(wait)
            if args.stats and not done.is_set():
                _report(emu)
    finally:
        emu.stop()
    _report(emu)
    return 0


def _report(emu: StageEmulator) -> None:
    tm = emu.timing()
    rate = f"{tm['rate_hz']:.1f} Hz, jitter p99 {tm['jitter_p99'] * 1e6:.0f} us" \
        if "rate_hz" in tm else "no frames"
    print(f"stage_emulator: {rate}; {emu.stats.as_dict()}; rx {emu.decoder.stats}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
