"""Header-stamp admission of one input stream (:class:`StampGate`): the rules the
``friction_renderer`` applies to its inputs (issue 13, items 6a and 8), shared with the
``friction_compensator`` (issue 24, item 6).

A control loop acts on the newest sample; a sample whose stamp is not after the last accepted
one is out of order, a duplicate, or from another publisher whose stamps lag (a stale second
``joint_states`` publisher interleaved with the live one): stepped on, it makes a position
element see the joint jump back and forth every cycle. The rules:

* a stamp not after the last accepted one: rejected (``stamp_not_increasing``);
* a stamp that advanced more than ``timeout`` beyond the time that really passed between the two
  receipts (monotonic clock), forwards or backwards: a wrong stamp, rejected (``stamp_jump``,
  or ``stamp_not_increasing`` backwards) — unless the last accepted input was the first of its
  run (after the start or a watchdog trip), which had no history to be checked against: then
  the stream re-anchors on this one, once per run, and not when the first input's stamp was
  within ``timeout`` of its receive time and this one's is not (two interleaved streams, one of
  them stale: the live one keeps the anchor whichever came first; without the once-per-run
  rule they would take it from each other on every message);
* the first input after a watchdog trip with a stamp within ``timeout`` after the last stamp
  before the trip: a leftover of the stream that stopped (``stamp_stale``; optional: a stream
  that resumes after a stall continues its stamps and is rejected the same way until they are
  ``timeout`` past the trip);
* stamp 0 (unstamped publishers): the receive time is used instead.

No ROS: stamps are objects with ``sec`` and ``nanosec`` (``builtin_interfaces/Time``), times
are integer nanoseconds. :meth:`StampGate.check` and :meth:`StampGate.accept` allocate nothing.
"""

from __future__ import annotations

__all__ = ["StampGate", "STAMP_STALE", "STAMP_JUMP", "STAMP_NOT_AFTER"]

# rejection texts (str.format templates; the first field is the topic)
STAMP_STALE = ("{}: header stamp {} ns is within watchdog_timeout of the last input before the "
               "watchdog trip ({} ns): a leftover of the stream that stopped, not a resumed one")
STAMP_JUMP = ("{}: header stamp {} ns jumps {:.6g} s from the last accepted {} ns while {:.3g} s "
              "passed (more than watchdog_timeout apart: a wrong stamp, not a gap)")
STAMP_NOT_AFTER = ("{}: header stamp {} ns is not after the last accepted {} ns (out of order, "
                   "duplicate or clock going backwards)")


class StampGate:
    """The stamp rules of one input stream (module docstring).

    Per input: :meth:`check` (before or after reading the message), then, once every other
    check passed too, :meth:`accept`. The watchdog calls :meth:`trip`; a lifecycle cleanup
    :meth:`reset`.

    Parameters
    ----------
    dt_ns
        The stream's period [ns]: an accepted stamp more than 1.5 periods after the last one
        counts the periods in between as lost (:meth:`accept`).
    stale_after_trip
        Apply the ``stamp_stale`` rule after a :meth:`trip` (the renderer: a dead device's
        leftover must not render an effort from rest).

    Attributes
    ----------
    t, stamped
        The stamp of the input checked last [ns] (the receive time when it was 0) and whether
        it carried one.
    anchored
        The last :meth:`accept` re-anchored the stream (``anchor_shift_ns``: by how much the
        previous stamp was away from it).
    last_mono
        Monotonic receipt time [ns] of the last accepted input (None: none yet).
    """

    def __init__(self, dt_ns: float, stale_after_trip: bool = True):
        self.dt_ns = float(dt_ns)
        self.stale_after_trip = bool(stale_after_trip)
        self.gap_ns = 1.5 * self.dt_ns
        self.t = 0
        self.stamped = False
        self.anchored = False
        self.anchor_shift_ns = 0
        self.last_mono: int | None = None
        self._mono = 0
        self._rx = 0
        self._timeout = 0
        self._anchor = False
        self._last_live = False  # the last accepted stamp was within the timeout of its receipt
        self.reset()

    def reset(self) -> None:
        """Forget the stream: the next input is the first (no history, no trip)."""
        self.last_t = -1  # last accepted stamp [ns]
        self.trip_t = -1  # last accepted stamp before a watchdog trip (stale-input check)
        self.run_accepted = 0  # accepted since the start or the last trip (re-anchoring)
        self.last_mono = None

    def trip(self) -> None:
        """The watchdog tripped: the next input starts a new run; one stamped within the
        timeout after the last accepted stamp is a leftover (``stamp_stale``)."""
        if self.last_t >= 0 and self.stale_after_trip:
            self.trip_t = self.last_t
        self.last_t = -1
        self.run_accepted = 0

    def check(self, stamp, rx_ns: int, mono_ns: int, timeout_ns: int):
        """Check one input's header ``stamp`` received at ``rx_ns`` (the clock stamps are
        compared with: wall clock, or simulated time) and ``mono_ns`` (monotonic).

        Returns
        -------
        None or tuple
            None when the stamp is admissible (remembered for :meth:`accept`); else
            ``(reason, template, args)``: the rejection's reason, its ``str.format`` template
            whose first field is the topic, and the remaining arguments.
        """
        t = stamp.sec * 1_000_000_000 + stamp.nanosec
        self.stamped = stamped = t != 0
        if not stamped:
            t = rx_ns
        self.t = t
        self._mono = mono_ns
        self._rx = rx_ns
        self._timeout = timeout_ns
        self._anchor = False
        last = self.last_t
        if last < 0:
            if self.trip_t >= 0 and self.trip_t < t <= self.trip_t + timeout_ns:
                return "stamp_stale", STAMP_STALE, (t, self.trip_t)
            return None
        # how far the stamp advanced beyond the time that really passed (receive clock)
        passed = mono_ns - self.last_mono
        excess = (t - last) - passed
        if excess > timeout_ns or (t <= last and -excess > timeout_ns):
            if self.run_accepted != 1 or (self._last_live and abs(rx_ns - t) > timeout_ns):
                return ("stamp_jump" if t > last else "stamp_not_increasing", STAMP_JUMP,
                        (t, (t - last) * 1e-9, last, passed * 1e-9))
            self._anchor = True  # the first input of this run was the odd one: re-anchor
        elif t <= last:
            return "stamp_not_increasing", STAMP_NOT_AFTER, (t, last)
        return None

    def accept(self) -> int:
        """Take the input checked last; returns the stream's lost periods before it (0 after a
        re-anchor, then :attr:`anchored` is true)."""
        last = self.last_t
        t = self.t
        lost = 0
        self.anchored = self._anchor
        if self._anchor:
            self.anchor_shift_ns = last - t
            self.run_accepted = 1  # anchored: no second re-anchor in this run
        elif last >= 0 and t - last > self.gap_ns:
            lost = int(round((t - last) / self.dt_ns)) - 1
        self.last_t = t
        self.trip_t = -1
        self.run_accepted += 1
        self.last_mono = self._mono
        self._last_live = abs(self._rx - t) <= self._timeout
        return lost
