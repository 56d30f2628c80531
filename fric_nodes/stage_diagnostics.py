"""The ``haptic_stage`` node's state in groups (command, realtime pacing, lockstep, published
states) and what it reports from them: the /diagnostics key/values and problems
(:func:`stage_status`) and the shutdown summary (:func:`summary`). No node: plain data in, plain
data out (docs/haptic_stage.md)."""

from __future__ import annotations

import dataclasses
import time

from diagnostic_msgs.msg import DiagnosticStatus

from fric_interfaces import names

from ._node_util import RejectLog, Ring
from .hardware.device_timeline import DeviceTimeline
from .hardware.serial_link import SerialLink
from .hardware.stage_protocol import Mode

__all__ = ["CommandState", "RealtimeState", "LockstepState", "Stats", "MODE_NAMES", "OK", "WARN",
           "ERROR", "stage_status", "summary"]

IDLE = int(Mode.IDLE)
MODE_NAMES = {int(Mode.IDLE): "idle", int(Mode.FORCE): "force", int(Mode.POSITION): "position"}
OK, WARN, ERROR = DiagnosticStatus.OK, DiagnosticStatus.WARN, DiagnosticStatus.ERROR


@dataclasses.dataclass
class CommandState:
    """The stored command (the latest valid one wins) and its counters."""

    #: (mode, value, time: monotonic ns, or the cycle index in lockstep); replaced whole, never
    #: field by field: the serial link thread reads it
    latest: tuple = (IDLE, 0.0, 0)
    seen: bool = False  # a valid command arrived
    timed_out: bool = False  # the stored command is older than command_timeout
    timeouts: int = 0
    accepted: int = 0
    over_limit: int = 0  # effort commands beyond max_force (accepted, saturated)
    applied: int = IDLE  # the mode applied in the last cycle
    timeout_ns: int = 0  # command_timeout
    timeout_cycles: int = 0  # lockstep: command age in cycles beyond which it is dropped


@dataclasses.dataclass
class RealtimeState:
    """The realtime sim's pacing: the steady-clock start and the late-tick counters."""

    max_catchup: int = 1  # missed cycles run on one tick; more: skip ahead (re-anchor)
    t0: int | None = None  # steady time of cycle 0 (ns)
    overruns: int = 0
    overruns_period: int = 0
    missed: int = 0
    reanchors: int = 0
    cycle_time: Ring = dataclasses.field(default_factory=lambda: Ring(4096))


@dataclasses.dataclass
class LockstepState:
    """The lockstep handshake: start-up wait, the state awaiting its command, counters."""

    timeout_ns: int = 0  # lockstep_timeout
    started: bool = False  # state 0 published
    waiting: bool = False  # a state is out, its command not yet in
    pub_mono: int = 0  # steady time the waiting state was published (ns)
    seen_mono: float | None = None  # steady time the controller was first seen (s)
    wait_start: float = dataclasses.field(default_factory=time.monotonic)
    timeouts: int = 0
    steps: int = 0


@dataclasses.dataclass
class Stats:
    """Published states (``*_period``: since the last diagnostics)."""

    stage_ns: int = 0  # stage time of the last published state
    published: int = 0
    published_period: int = 0
    saturated: int = 0
    saturated_period: int = 0
    at_limit: int = 0
    at_limit_period: int = 0
    bad_states: int = 0  # non-finite states not published (never expected)
    value_errors_seen: int = 0  # serial: value errors up to the previous period
    thread_errors_seen: int = 0  # serial: link thread errors up to the previous period

    def count(self, saturated: bool, at_limit: bool) -> None:
        """One state published."""
        self.published += 1
        self.published_period += 1
        if saturated:
            self.saturated += 1
            self.saturated_period += 1
        if at_limit:
            self.at_limit += 1
            self.at_limit_period += 1


def _sim_kv(v, sim, spc, hand_waiting) -> list[tuple[str, str]]:
    return [("sample", v["sample"]), ("hand", v["hand_script"] or "none"),
            ("hand location", v["hand_location"]),
            ("hand start", "waiting for the first command" if hand_waiting else v["hand_start"]),
            ("carriage friction", str(v["carriage_friction"])),
            ("physics steps per cycle", f"{spc} x {v['sim_dt']:g} s"),
            ("solver unconverged steps", str(sim.solver_unconverged))]


def _link_kv(link: SerialLink, dev: DeviceTimeline) -> list[tuple[str, str]]:
    ds = link.decoder.stats
    kv = [("port", link.port), ("link", link.state),
          ("connected", str(link.connected)), ("last error", link.error or "none"),
          ("frames", str(ds.frames)), ("lost frames", str(ds.lost_frames)),
          ("sequence gaps", str(ds.seq_gaps)), ("crc errors", str(ds.crc_errors)),
          ("length errors", str(ds.length_errors)), ("type errors", str(ds.type_errors)),
          ("value errors", str(ds.value_errors)),
          ("last value error", link.decoder.last_value_error or "none"),
          ("garbage bytes", str(ds.garbage_bytes)), ("resyncs", str(link.resyncs)),
          ("duplicates", str(ds.duplicates)), ("sequence resets", str(ds.seq_resets)),
          ("reconnects", str(link.reconnects)), ("open failures", str(link.open_failures)),
          ("disconnects", str(link.disconnects)), ("link silences", str(link.silences)),
          ("frames skipped (backlog)", str(dev.skipped)),
          ("commands sent", str(link.commands_sent)),
          ("command write errors", str(link.write_errors)),
          ("serial thread errors", str(link.thread_errors)),
          ("late cycles", str(dev.late)),
          ("first late cycle, stage time [s]",
           "none" if dev.late_first is None else f"{dev.late_first * 1e-9:.3f}"),
          ("keep-alive commands", str(link.keepalives)),
          ("device timeout frames", str(dev.timeouts)),
          ("device rx error frames", str(dev.rx_errors)),
          ("device fault frames", str(dev.faults))]
    rtt = link.rtt.percentiles()
    if rtt:
        kv += [("command round trip p50 [ms]", f"{rtt[0] * 1e3:.3f}"),
               ("command round trip p99 [ms]", f"{rtt[1] * 1e3:.3f}")]
    link.rtt.clear()
    return kv


def stage_status(v: dict, stats: Stats, cmd: CommandState, rejects: RejectLog, *,
                 elapsed: float, last, finished: bool, hand_waiting: bool, accelerometer: bool,
                 sim=None, spc: int = 0, realtime: RealtimeState | None = None,
                 lockstep: LockstepState | None = None, link: SerialLink | None = None,
                 device: DeviceTimeline | None = None):
    """The stage's diagnostics from its state; then starts the next diagnostics period (resets
    the per-period counts).

    Parameters
    ----------
    v
        The node's parameters.
    stats, cmd, rejects
        Published states, the stored command, rejected commands.
    elapsed
        Seconds since the previous diagnostics (for the measured rate).
    last
        The last published reading (``StageReading`` or ``StateFrame``), or None.
    finished, hand_waiting, accelerometer
        ``duration`` reached; ``hand_start`` still waits for the first command; the
        accelerometer topic is published.
    sim, spc, realtime, lockstep
        Sim backend: the simulation, physics steps per cycle, and the pacing state (one of the
        two).
    link, device
        Serial backend: the link and the device timeline.

    Returns
    -------
    tuple
        ``(level, problems, ok_message, key_values)`` for ``_node_util.status``.
    """
    rate_hz = float(v["rate"])
    rate = stats.published_period / elapsed
    kv = [("backend", v["backend"]), ("sync", v["sync"]), ("joint", v["joint_name"]),
          ("rate [Hz]", f"{rate:.1f}"), ("expected rate [Hz]", f"{rate_hz:g}"),
          ("states published", str(stats.published)),
          ("stage time [s]", f"{stats.stage_ns * 1e-9:.3f}")]
    problems: list[str] = []
    level = OK
    ok_msg = "running"

    def worse(lvl, text):
        nonlocal level
        level = max(level, lvl)
        problems.append(text)

    if sim is not None:
        kv += _sim_kv(v, sim, spc, hand_waiting)
        if lockstep is not None:
            kv += [("lockstep steps", str(lockstep.steps)),
                   ("lockstep timeouts", str(lockstep.timeouts)),
                   ("lockstep timeout [s]", f"{lockstep.timeout_ns * 1e-9:g}")]
            if not lockstep.started:
                worse(WARN, "lockstep: waiting for a controller "
                      "(joint_states subscriber and command publisher)")
            ok_msg = "sim, lockstep"
        else:
            rt = realtime
            ct = rt.cycle_time.percentiles()
            kv += [("cycle overruns", str(rt.overruns)),
                   ("cycle overruns this period", str(rt.overruns_period)),
                   ("missed cycles (caught up)", str(rt.missed)),
                   ("re-anchors (fell > 50 ms behind)", str(rt.reanchors))]
            if ct:
                kv += [("cycle time p50 [ms]", f"{ct[0] * 1e3:.3f}"),
                       ("cycle time p99 [ms]", f"{ct[1] * 1e3:.3f}"),
                       ("cycle time max [ms]", f"{ct[2] * 1e3:.3f}")]
            rt.cycle_time.clear()
            if rt.overruns_period:
                worse(WARN, f"{rt.overruns_period} cycle overruns")
            if (stats.published_period >= 10 and not finished
                    and abs(rate / rate_hz - 1.0) > 0.1):
                worse(WARN, f"rate {rate:.0f} Hz below {rate_hz:g} Hz")
            rt.overruns_period = 0
            ok_msg = "sim, realtime"
    elif link is not None:
        kv += _link_kv(link, device)
        ds = link.decoder.stats
        new_values = ds.value_errors - stats.value_errors_seen
        stats.value_errors_seen = ds.value_errors
        if new_values:
            worse(WARN, f"{new_values} state frames with unusable values rejected, last: "
                  f"{link.decoder.last_value_error}")
        if link.thread_errors != stats.thread_errors_seen:
            stats.thread_errors_seen = link.thread_errors
            worse(ERROR, link.error)
        if not link.connected:
            worse(ERROR, link.error or "serial port not open")
        elif link.quiet:
            worse(ERROR, f"{link.port}: {link.state}")
        elif device.fault:
            worse(ERROR, "device FAULT (motor off)")
        ok_msg = f"serial {link.port}, streaming"
    # flags and commands (both backends)
    kv.append(("accelerometer", names.ACCELEROMETER if accelerometer else "not published"))
    kv += [("saturated cycles", str(stats.saturated)),
           ("saturated cycles this period", str(stats.saturated_period)),
           ("end-stop cycles", str(stats.at_limit)),
           ("end-stop cycles this period", str(stats.at_limit_period))]
    if last is not None:
        kv += [("saturated", str(bool(last.saturated))),
               ("at end stop", str(bool(last.at_limit))),
               ("position [m]", f"{last.position:+.6f}"),
               ("velocity [m/s]", f"{last.velocity:+.5f}"),
               ("load cell force on stage [N]", f"{-last.force:+.4f}")]
        if sim is not None:
            kv.append(("hand force [N]", f"{last.hand_force:+.4f}"))
    if stats.saturated_period:
        worse(WARN, f"motor force saturated ({stats.saturated_period} cycles, "
              f"max_force {v['max_force']:g} N)")
    if stats.at_limit_period:
        worse(WARN, f"at an end stop ({stats.at_limit_period} cycles)")
    mode, value, _ = cmd.latest
    if not cmd.seen:
        cstate = "none yet (idle)"
    elif cmd.timed_out:
        cstate = "timed out: zero force"
        worse(WARN, f"command timeout ({v['command_timeout']:g} s): zero motor force")
    else:
        cstate = "ok"
    kv += [("command", cstate), ("command mode", MODE_NAMES[mode]),
           ("command value", f"{value:+.6g}"), ("applied mode", MODE_NAMES[cmd.applied]),
           ("command timeout [s]", f"{v['command_timeout']:g}"),
           ("command timeouts", str(cmd.timeouts)),
           ("accepted commands", str(cmd.accepted)),
           ("effort commands beyond max_force", str(cmd.over_limit))]
    kv += rejects.key_values()
    rejected = rejects.period_problem()
    if rejected:
        worse(WARN, rejected)
    if stats.bad_states:
        kv.append(("non-finite states dropped", str(stats.bad_states)))
    if finished:
        problems.insert(0, "finished (duration reached)")
    stats.published_period = stats.saturated_period = stats.at_limit_period = 0
    return level, problems, ok_msg, kv


def summary(stats: Stats, cmd: CommandState, rejects: RejectLog, *,
            realtime: RealtimeState | None = None, lockstep: LockstepState | None = None,
            link: SerialLink | None = None, device: DeviceTimeline | None = None) -> str:
    """One line for the log at shutdown: states published and the loop's timing counters."""
    text = (f"{stats.published} states in {stats.stage_ns * 1e-9:.3f} s of stage time, "
            f"{cmd.accepted} commands accepted, "
            f"{rejects.total} rejected, {cmd.timeouts} command timeouts")
    if lockstep is not None:
        text += f", {lockstep.timeouts} lockstep timeouts"
    elif realtime is not None:
        text += (f", {realtime.overruns} overruns ({realtime.missed} cycles caught up), "
                 f"{realtime.reanchors} re-anchors")
    elif link is not None:
        ds = link.decoder.stats
        text += (f", frames {ds.frames}, lost {ds.lost_frames}, crc errors {ds.crc_errors}, "
                 f"resyncs {link.resyncs}, reconnects {link.reconnects}, "
                 f"late cycles {device.late}")
    return text
