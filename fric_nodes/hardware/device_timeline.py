"""The host's account of a device's state frames (docs/serial_protocol.md): device time → stage
time and wall-clock stamps, late cycles, the device's status flags. No ROS, no I/O.

Stamps: device time mapped to the wall clock with the smallest observed receive latency,
re-estimated every ``window`` frames (so device clock drift is followed). Stage time continues
across reconnects: the first frame of a new connection is one period after the last state.
"""

from __future__ import annotations

from .stage_protocol import Status

__all__ = ["DeviceTimeline"]

_HALF = 0x80000000  # sequence numbers are u32: a difference of 2³¹ or more is negative


class DeviceTimeline:
    """Device frames on the stage timeline, with the counters the node reports.

    Parameters
    ----------
    period_ns
        The node's cycle period (ns): the stage-time gap put before the first frame of a
        reconnection.
    window
        Frames per re-estimate of the device-to-wall offset.
    """

    def __init__(self, period_ns: int, window: int = 1000):
        self.period_ns = int(period_ns)
        self.window = int(window)
        self._conn = None  # the connection the last frame came on
        self._base_ns = 0  # stage time at the first frame of the current connection
        self._t0_ns = 0  # device time of that frame
        self._off_ns = None  # wall - device time offset
        self._off_win = 0
        self._off_count = 0
        self._prev_seq = None
        self.skipped = 0  # frames not published (several arrived together: the newest wins)
        self.late = 0  # device cycles that did not apply the answer to the state before them
        self.late_first = None  # stage time of the first late cycle (ns)
        self.timeouts = self.rx_errors = self.faults = 0  # frames with these device flags
        self.flags = 0  # status of the newest frame

    @property
    def fault(self) -> bool:
        """The newest frame says device FAULT (motor off)."""
        return bool(self.flags & Status.FAULT)

    def take(self, frames, connection: int, rx_wall_ns: int, stage_ns: int, published: bool,
             answer: int | None, commanding: bool):
        """Account for one batch of state frames; only the newest is published.

        Parameters
        ----------
        frames
            The batch of ``StateFrame`` objects, oldest first.
        connection
            The link's connection count: a new value starts a new device timeline.
        rx_wall_ns
            Wall time the batch was received (ns).
        stage_ns
            Stage time of the last published state (ns).
        published
            Whether any state has been published yet.
        answer
            Sequence number of the first command sent after the previous batch, or None.
        commanding
            A command is in force (not idle, not timed out): only then do late cycles count.

        Returns
        -------
        tuple
            ``(frame, stage_ns, stamp_ns)``: the newest frame, its stage time and its stamp.
        """
        f = frames[-1]
        self.skipped += len(frames) - 1
        t_dev = round(f.time * 1e6) * 1000
        if connection != self._conn:  # first frame of a (re)connection
            self._conn = connection
            self._base_ns = (stage_ns + self.period_ns) if published else 0
            self._t0_ns = t_dev
            self._off_ns = None
            self._prev_seq = None
        stage_ns = self._base_ns + t_dev - self._t0_ns
        # device time -> wall clock: smallest receive latency, re-estimated per window
        off = rx_wall_ns - t_dev
        if self._off_ns is None:
            self._off_ns = self._off_win = off
            self._off_count = 0
        else:
            if off < self._off_ns:
                self._off_ns = off
            if off < self._off_win:
                self._off_win = off
            self._off_count += 1
            if self._off_count >= self.window:
                self._off_ns, self._off_win, self._off_count = self._off_win, off, 0
        # Late cycles, while commanding: device cycles that did not apply the controller's
        # answer to the state just before them. The answer to the previously published state
        # should be applied in the next cycle; frames the controller never saw (skipped in a
        # backlog, or lost) had no answer, so each of them makes one more late cycle.
        if self._prev_seq is not None and commanding:
            gap = (f.seq - self._prev_seq) & 0xFFFFFFFF
            if 0 < gap < _HALF:
                late = gap - 1
                if answer is None or 0 < ((answer - f.ack) & 0xFFFFFFFF) < _HALF:
                    late += 1
                if late:
                    self.late += late
                    if self.late_first is None:
                        self.late_first = stage_ns
        self._prev_seq = f.seq
        if f.timeout:
            self.timeouts += 1
        if f.rx_error:
            self.rx_errors += 1
        if f.fault:
            self.faults += 1
        self.flags = f.status
        return f, stage_ns, self._off_ns + t_dev
