"""The haptic stage's serial link (fric_nodes.hardware.serial_link.SerialLink) without rclpy,
against the device emulator on a pty: no thread dies silently (issue 13). An unexpected exception
in the link thread's loop (here: the frame handler raises) is logged with its traceback, counted,
the port reopened and the thread restarted; after 5 in a row it stops and sets ``fatal_error``
(which ends the node with exit status 1, see test_node_failures.py). Before, the thread died with
Python's "Exception in thread" on stderr while the node went on publishing nothing."""

import time

from fric_nodes.hardware.serial_link import SerialLink
from fric_nodes.hardware.stage_emulator import StageEmulator


class _Log:
    def __init__(self):
        self.errors = []

    def error(self, text, **_):
        self.errors.append(text)

    def info(self, text, **_):
        pass

    warning = debug = info


def test_serial_link_thread_restarts_after_an_error_then_gives_up_loudly(tmp_path):
    link = tmp_path / "stage"
    emu = StageEmulator(rate_hz=200.0, command_timeout=0.5, link=str(link), seed=1,
                        carriage_friction=None, force_noise=0.0, accel_noise=0.0).start()
    calls = []

    def on_frames(frames, *_):
        calls.append(len(frames))
        raise ZeroDivisionError("bug in the frame handler")

    log = _Log()
    ser = SerialLink(str(link), 1_000_000, read_timeout=0.2, reconnect_period=0.02,
                     on_frames=on_frames, logger=log).start()
    try:
        end = time.monotonic() + 10.0
        while ser.fatal_error is None and time.monotonic() < end:
            time.sleep(0.02)
        assert ser.fatal_error is not None, (ser.thread_errors, log.errors[-1:])
        # restarted (port reopened) after each of the first four errors, stopped at the fifth
        assert ser.thread_errors == SerialLink._MAX_CRASHES == len(calls)
        assert ser.opens == SerialLink._MAX_CRASHES
        assert "ZeroDivisionError: bug in the frame handler" in ser.fatal_error
        assert len(log.errors) == 5 and all("Traceback" in e for e in log.errors)
        assert not ser._thread.is_alive()
    finally:
        ser.stop(idle=False)
        emu.stop()
