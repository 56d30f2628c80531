"""The host side of the stage's serial protocol (docs/serial_protocol.md): :class:`SerialLink`, the
serial I/O thread of the ``haptic_stage`` node, and :func:`state_limits`, its plausibility limits
from the node's parameters. No ROS: it takes any logger with ``info``/``warning``/``error``
(``warning`` also gets ``throttle_duration_sec``)."""

from __future__ import annotations

import errno
import os
import select
import threading
import time
import traceback

from .stage_protocol import (COMMAND_FRAME_SIZE, TYPE_STATE, Mode, StateLimits, StreamDecoder,
                             encode_command)

__all__ = ["SerialLink", "state_limits"]

IDLE = int(Mode.IDLE)
_F32_MAX = 3.0e38
_RTT_RING = 1024  # command send times kept (by seq) for the round-trip latency


def state_limits(values) -> StateLimits:
    """The serial host's plausibility limits for state frames (docs/serial_protocol.md).

    Parameters
    ----------
    values
        The node's parameters: ``x_min``, ``x_max``, ``plausible_position_margin``,
        ``plausible_velocity``, ``plausible_force``, ``plausible_acceleration``.

    Returns
    -------
    StateLimits
        The travel ``[x_min, x_max]`` widened by ``plausible_position_margin``, and the velocity,
        force and acceleration bounds.
    """
    m = float(values["plausible_position_margin"])
    return StateLimits(float(values["x_min"]) - m, float(values["x_max"]) + m,
                       float(values["plausible_velocity"]), float(values["plausible_force"]),
                       float(values["plausible_acceleration"]))


class SerialLink:
    """The host side of the serial protocol in a thread: opens ``port`` (retrying every
    ``reconnect_period``), decodes state frames and calls ``on_frames(frames, rx_mono_ns,
    rx_wall_ns, answer)`` for each batch (from the link thread); ``answer`` is the sequence
    number of the first command frame sent after the previous batch (the controller's answer to
    the previous state), or None if there was none. :meth:`send` sends a command frame at once
    (any thread). After each batch, if no command frame went out since the previous batch, the
    ``(mode, value)`` that ``on_frames`` returns is sent as a keep-alive: at least one command
    frame per cycle.

    Linux/POSIX: the port is opened and configured with pyserial, read with ``select`` +
    ``os.read`` on its file descriptor (pyserial's own read does the same but waits for a full
    count; here a frame is handled the moment it is complete).

    ``rtt``: where the command round trips (s) go, any object with ``add(seconds)`` (the node
    passes a ``_node_util.Ring``); None: not recorded.
    """

    def __init__(self, port: str, baud: int, read_timeout: float, reconnect_period: float,
                 on_frames, logger, wall_ns=time.time_ns, limits: StateLimits | None = None,
                 rtt=None):
        self.port, self.baud = port, int(baud)
        self.read_timeout = float(read_timeout)
        self.reconnect_period = float(reconnect_period)
        self._on_frames = on_frames
        self._log = logger
        self._wall_ns = wall_ns
        self.decoder = StreamDecoder(accept=(TYPE_STATE,), limits=limits)
        self._ser = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._wlock = threading.Lock()
        self._seq = 0
        self._sent = [0] * _RTT_RING
        # status and counters (written by the link thread, read by diagnostics)
        self.connected = False
        self.state = "not started"
        self.error = ""  # last open/read/write failure
        self.opens = 0  # successful opens
        self.open_failures = 0
        self.disconnects = 0  # an open port failed (unplugged, I/O error)
        self.silences = 0  # link went quiet (no valid frame for read_timeout) while open
        self.resyncs = 0  # reads in which the decoder discarded bytes (garbage, broken frames)
        self.commands_sent = 0
        self.keepalives = 0  # cycles in which nothing new was commanded (keep-alive sent)
        self.write_errors = 0
        self.thread_errors = 0  # unexpected exceptions in the link thread (restarted)
        self.fatal_error: str | None = None  # the thread gave up: the node must stop
        self.last_frame_mono = None
        self.quiet = True  # no valid frame for read_timeout (or none yet)
        self.rtt = rtt
        self.last_ack = None
        self.last_sent = None  # seq of the newest command frame on this connection
        self._sent_since = False  # a command frame went out since the previous batch
        self._answer = None  # seq of the first non-keep-alive command since the previous batch

    # -- lifecycle
    def start(self) -> "SerialLink":
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="haptic_stage-serial",
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self, idle: bool = True) -> None:
        """Stop the thread; with ``idle``, send a last IDLE command (motor off) and close."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5.0)
            self._thread = None
        if idle and self._ser is not None:
            self.send(IDLE, 0.0)
        self._close()

    @property
    def reconnects(self) -> int:
        return max(0, self.opens - 1)

    # -- port
    def _open(self) -> bool:
        import serial  # pyserial; imported here so the sim backend does not need it

        try:
            ser = serial.Serial(self.port, self.baud, timeout=0, write_timeout=self.read_timeout)
            ser.reset_input_buffer()  # protocol: flush on (re)connect
        except (serial.SerialException, OSError, ValueError) as e:
            self.open_failures += 1
            msg = f"cannot open {self.port}: {e}"
            if msg != self.error:
                self._log.error(f"{msg}; retrying every {self.reconnect_period:g} s")
            self.error = msg
            self.state = "port not open"
            return False
        self.decoder.reset()
        self.last_sent = None
        self.last_ack = None
        self._sent_since = False
        self._answer = None
        self._ser = ser
        self.opens += 1
        self.connected = True
        self.quiet = True
        self.last_frame_mono = None
        self.state = "open, waiting for state frames"
        self._log.info(f"opened {self.port} at {self.baud} baud"
                       + (f" (reconnect {self.opens - 1})" if self.opens > 1 else ""))
        return True

    def _close(self) -> None:
        ser, self._ser = self._ser, None
        self.connected = False
        if ser is not None:
            try:
                ser.close()
            except Exception:  # noqa: BLE001 - closing a vanished port may fail any way
                pass

    def _fail(self, what: str, err: Exception | str) -> None:
        self.disconnects += 1
        self.error = f"{what} on {self.port} failed: {err}"
        self.state = "port lost"
        self._log.error(f"{self.error}; closing, retrying every {self.reconnect_period:g} s")
        self._close()

    def send(self, mode: int, value: float, keepalive: bool = False) -> None:
        """One command frame (thread-safe); the value is clipped to the float32 range."""
        ser = self._ser
        if ser is None:
            return
        if value > _F32_MAX:
            value = _F32_MAX
        elif value < -_F32_MAX:
            value = -_F32_MAX
        with self._wlock:
            seq = self._seq
            self._seq = (seq + 1) & 0xFFFFFFFF
            frame = encode_command(seq, mode, value)
            self._sent[seq % _RTT_RING] = time.monotonic_ns()
            try:
                n = ser.write(frame)
            except Exception as e:  # noqa: BLE001 - SerialTimeoutException, SerialException
                self.write_errors += 1
                self.error = f"write on {self.port} failed: {e}"
                return
            self.last_sent = seq
            self._sent_since = True
            if not keepalive and self._answer is None:
                self._answer = seq
        if n == COMMAND_FRAME_SIZE:
            self.commands_sent += 1
        else:
            self.write_errors += 1

    def ack_rtt(self, ack: int, now_ns: int) -> None:
        """Record the round trip of a newly acknowledged command."""
        if ack == self.last_ack:
            return
        self.last_ack = ack
        if self.rtt is not None and ((self._seq - ack) & 0xFFFFFFFF) <= _RTT_RING:
            self.rtt.add((now_ns - self._sent[ack % _RTT_RING]) * 1e-9)

    # -- thread
    _MAX_CRASHES = 5  # unexpected errors in a row before the thread gives up (and the node stops)

    def _run(self) -> None:
        """The link thread: :meth:`_serve`, restarted after an unexpected error (logged with its
        traceback, counted, the port closed and reopened); after ``_MAX_CRASHES`` in a row it
        stops and sets ``fatal_error``, which ends the node with exit status 1 (no thread dies
        silently)."""
        crashes = 0
        while not self._stop.is_set():
            try:
                self._serve()
                return
            except Exception as e:  # noqa: BLE001 - a bug or an unexpected device state
                crashes += 1
                self.thread_errors += 1
                self.error = f"serial thread: unexpected {type(e).__name__}: {e}"
                self._log.error(f"{self.error} ({crashes} in a row)\n{traceback.format_exc()}")
                self._close()
                if crashes >= self._MAX_CRASHES:
                    self.state = "serial thread stopped"
                    self.fatal_error = f"{self.error} ({crashes} times in a row)"
                    return
                self._stop.wait(self.reconnect_period)

    def _serve(self) -> None:
        timeout_ns = int(self.read_timeout * 1e9)
        wait = min(self.read_timeout, 0.05)
        while not self._stop.is_set():
            ser = self._ser
            if ser is None:
                if not self._open():
                    self._stop.wait(self.reconnect_period)
                continue
            try:
                fd = ser.fileno()
                ready, _, _ = select.select([fd], [], [], wait)
                data = os.read(fd, 4096) if ready else b""
                if ready and not data:
                    raise OSError(errno.EIO, "end of file (device gone)")
            except (OSError, ValueError, TypeError) as e:
                self._fail("read", e)
                self._stop.wait(self.reconnect_period)
                continue
            now = time.monotonic_ns()
            if data:
                dec = self.decoder
                g0, v0 = dec.stats.garbage_bytes, dec.stats.value_errors
                frames = dec.feed(data)
                if dec.stats.garbage_bytes != g0:
                    self.resyncs += 1
                    if dec.stats.value_errors != v0:
                        self._log.warning(f"{self.port}: rejected {dec.last_value_error}: not "
                                          "published", throttle_duration_sec=1.0)
                if frames:
                    self.last_frame_mono = now
                    if self.quiet:
                        self.quiet = False
                        self.state = "streaming"
                    with self._wlock:  # before publishing: the answer may come at once
                        answer, self._answer = self._answer, None
                        sent_since, self._sent_since = self._sent_since, False
                    cmd = self._on_frames(frames, now, self._wall_ns(), answer)
                    if not sent_since and cmd is not None:
                        self.keepalives += 1  # nothing new was commanded this cycle
                        self.send(*cmd, keepalive=True)
                    continue
            last = self.last_frame_mono
            if not self.quiet and (last is None or now - last > timeout_ns):
                self.quiet = True
                self.silences += 1
                self.state = f"no state frames for {self.read_timeout:g} s"
                self._log.error(f"{self.port}: {self.state}: link down (the device goes safe "
                                "by its own command timeout)")

