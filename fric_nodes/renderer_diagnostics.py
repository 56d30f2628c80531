"""The ``friction_renderer`` node's counters (:class:`Stats`) and its /diagnostics status built
from them (:func:`renderer_status`). No node: plain data in, a DiagnosticStatus out
(docs/friction_renderer.md)."""

from __future__ import annotations

import dataclasses
import time

import numpy as np
from diagnostic_msgs.msg import DiagnosticStatus

from ._node_util import RejectLog, Ring, status

__all__ = ["Stats", "LazyRejectLog", "renderer_status"]

OK, WARN, ERROR = DiagnosticStatus.OK, DiagnosticStatus.WARN, DiagnosticStatus.ERROR


class LazyRejectLog(RejectLog):
    """:class:`RejectLog` for a 1 kHz input path: a rejection costs no more than rendering one.

    :meth:`add` takes the text as a ``str.format`` template and its arguments, counts, and keeps
    them; the text is formatted when the diagnostics read it (:meth:`key_values`,
    :meth:`period_problem`) or when the warning is logged. The warning's throttle (one per
    ``throttle_s``, per instance) is checked here before rclpy's logger is called: rclpy looks up
    the calling source file on every call, throttled or not (~0.25 ms, ten times an accepted
    input's callback). The texts, counts and log lines are those of :class:`RejectLog`.

    Parameters
    ----------
    logger, what, key_prefix
        As for :class:`RejectLog`.
    throttle_s
        At most one warning per this many seconds.
    """

    def __init__(self, logger, what: str = "input", throttle_s: float = 1.0,
                 key_prefix: str | None = None):
        super().__init__(logger, what, key_prefix)
        self._pending: dict[str, tuple] = {}  # reason -> (template, args), not yet formatted
        self._latest_entry: tuple | None = None
        self._throttle_ns = int(throttle_s * 1e9)
        self._next_log_ns = -1

    def add(self, reason: str, text: str, *args) -> None:
        """Count one rejection for ``reason``; ``text.format(*args)`` (``text`` itself without
        ``args``) says what was wrong. ``args`` must not change afterwards (numbers, strings,
        exceptions: no buffers that are reused)."""
        counts = self.counts
        counts[reason] = counts.get(reason, 0) + 1
        entry = (text, args)
        self._pending[reason] = entry
        self._latest_entry = entry
        self.period += 1
        now = time.monotonic_ns()
        if now >= self._next_log_ns:
            self._next_log_ns = now + self._throttle_ns
            self._log.warning(f"rejected {self._what}: {_format(entry)}")

    def _resolve(self) -> None:
        if self._pending:
            for reason, entry in self._pending.items():
                self.last[reason] = _format(entry)
            self._pending.clear()
        if self._latest_entry is not None:
            self.latest = _format(self._latest_entry)
            self._latest_entry = None

    def key_values(self) -> list[tuple[str, str]]:
        self._resolve()
        return super().key_values()

    def period_problem(self) -> str | None:
        self._resolve()
        return super().period_problem()


def _format(entry: tuple) -> str:
    text, args = entry
    return text.format(*args) if args else text


@dataclasses.dataclass
class Stats:
    """What the renderer counts, since the start and in the current diagnostics period.

    Parameters
    ----------
    n
        Number of joints (the per-joint saturation counts).
    """

    n: int
    accepted: int = 0
    accepted_period: int = 0
    lost: int = 0  # lost cycles: header stamp gaps above 1.5 dt
    lost_period: int = 0
    zero_stamps: int = 0  # inputs stamped 0 (the receive time was used)
    reanchors: int = 0
    trips: int = 0  # watchdog trips
    foreign_period: int = 0  # messages without the configured joints, this period
    sat_total: int = 0  # saturated cycles
    sat: np.ndarray = None  # saturated cycles per joint, this period
    latency: Ring = dataclasses.field(default_factory=lambda: Ring(4096))  # rx - stamp [ns]
    period_start: float = dataclasses.field(default_factory=time.monotonic)

    def __post_init__(self):
        self.sat = np.zeros(self.n, dtype=np.int64)

    def new_period(self) -> None:
        """Zero the per-period counts (the rejections' period is :class:`RejectLog`'s)."""
        self.accepted_period = self.lost_period = self.foreign_period = 0
        self.latency.clear()
        self.sat[:] = 0


def renderer_status(stats: Stats, rejects: RejectLog, *, name: str, mode: str, element: str,
                    joints, input_topic: str, dt: float, output: bool, waiting: bool,
                    tripped: bool, timeout_ns: int, max_effort: float, plausible: tuple[str, float],
                    stuck, force, state_topic: str, publishers: int, logger) -> DiagnosticStatus:
    """The renderer's status; starts the next period (:meth:`Stats.new_period`).

    Parameters
    ----------
    stats, rejects
        The node's counters and rejected inputs.
    name
        The status name (the node's fully qualified name and ``: friction``).
    mode, element, joints, input_topic, dt
        The configuration (``element``: its name and the bank's layout).
    output, waiting, tripped
        ``output_enabled``; no valid input yet; the watchdog tripped.
    timeout_ns, max_effort, plausible
        ``watchdog_timeout`` [ns], ``max_effort``, the plausibility limit as (name, value).
    stuck, force
        Per joint: stuck in static friction, the friction force on the device.
    state_topic, publishers
        The (resolved) joint-state topic and its number of publishers.
    logger
        Logs the two-devices ERROR, with its consequence.

    Returns
    -------
    DiagnosticStatus
        Level OK, WARN or ERROR, the problems as its message, the key/values.
    """
    now = time.monotonic()
    elapsed = max(now - stats.period_start, 1e-9)
    stats.period_start = now
    accepted = stats.accepted_period
    rate = accepted / elapsed
    kv = [("mode", mode), ("element", element), ("joints", ", ".join(joints)),
          ("input topic", input_topic), ("dt [s]", f"{dt:g}"),
          ("input rate [Hz]", f"{rate:.1f}"), ("expected rate [Hz]", f"{1.0 / dt:.1f}"),
          ("accepted inputs", str(stats.accepted))]
    if len(stats.latency):
        lat = stats.latency.samples() * 1e-6
        p50, p99, pmax = np.percentile(lat, (50.0, 99.0, 100.0))
        kv += [("latency mean [ms]", f"{lat.mean():.3f}"),
               ("latency p50 [ms]", f"{p50:.3f}"), ("latency p99 [ms]", f"{p99:.3f}"),
               ("latency max [ms]", f"{pmax:.3f}")]
    else:
        kv.append(("latency [ms]", "n/a (no stamped input this period)"))
    kv += [("zero-stamped inputs (receive time used)", str(stats.zero_stamps)),
           ("lost cycles", str(stats.lost)), ("lost cycles this period", str(stats.lost_period)),
           ("stamp re-anchors", str(stats.reanchors))]
    if waiting:
        wd = "waiting for first input"
    elif tripped:
        wd = "tripped: " + ("zero effort" if mode == "impedance" else "holding position")
    else:
        wd = "ok"
    kv.append(("output", "enabled" if output else
               "disabled (output_enabled false: publishing nothing)"))
    kv += [("watchdog", wd), ("watchdog trips", str(stats.trips)),
           ("watchdog timeout [s]", f"{timeout_ns * 1e-9:g}"),
           ("max_effort", f"{max_effort:g}"), (plausible[0], f"{plausible[1]:g}")]
    for i, j in enumerate(joints):
        state = "stopped" if tripped or waiting else ("stick" if stuck[i] else "slip")
        kv += [(f"{j} state", state), (f"{j} friction force", f"{force[i]:+.4g}"),
               (f"{j} saturated cycles this period", str(int(stats.sat[i])))]
    saturated = bool(stats.sat.any())
    kv += [("saturation", "active" if saturated else "inactive"),
           ("saturated cycles total", str(stats.sat_total))]
    kv += rejects.key_values()

    problems = []
    level = OK
    if waiting:
        level = WARN
        problems.append(f"waiting for {input_topic}")
    elif tripped:
        level = ERROR
        problems.append(f"watchdog tripped: no valid {input_topic}")
    rejected = rejects.period_problem()
    if rejected:
        level = max(level, WARN)
        problems.append(rejected)
    if stats.lost_period:
        level = max(level, WARN)
        problems.append(f"{stats.lost_period} lost cycles")
    if saturated:
        level = max(level, WARN)
        problems.append(f"saturated at max_effort {max_effort:g}")
    # Two devices with the same joint names in one ROS domain (a second stage, a previous
    # run's process, another session): their states interleave, the element renders a mix,
    # and when one device dies the other keeps the renderer busy, so the dead one's zero
    # never comes (issue 13, item 8). The node queries the graph once per period.
    kv.append((f"{state_topic} publishers", str(publishers)))
    if publishers > 1 and accepted and not stats.foreign_period:
        level = max(level, ERROR)
        problems.append(f"{publishers} publishers on {state_topic} and every message carried "
                        f"the configured joints: two devices with the same joint names in "
                        "one ROS domain? their states are mixed and the commands reach both")
        logger.error(problems[-1] + " (when one of them dies, the other keeps "
                     "the renderer rendering: no watchdog zero)")
    if accepted >= 10 and not tripped and abs(rate * dt - 1.0) > 0.25:
        level = max(level, WARN)
        problems.append(f"input rate {rate:.0f} Hz does not match dt ({1 / dt:.0f} Hz)")
    stats.new_period()
    return status(name, ",".join(joints), level, problems,
                  "rendering" if output else "output disabled", kv)
