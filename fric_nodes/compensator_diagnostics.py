"""The ``friction_compensator`` node's counters (:class:`CompensatorStats`), what it renders of
each joint's file entry (:class:`JointUse`, :func:`joint_uses`: the law, the offset, the gear
efficiencies used or left out and why, the values the data did not determine) and its
/diagnostics status (:func:`compensator_status`). No node: plain data in, a DiagnosticStatus
and log text out (docs/friction_compensator.md)."""

from __future__ import annotations

import dataclasses
import time

from diagnostic_msgs.msg import DiagnosticStatus

from ._node_util import RejectLog, status

__all__ = ["CompensatorStats", "JointUse", "joint_uses", "uses_text", "compensator_status"]

OK, WARN, ERROR = DiagnosticStatus.OK, DiagnosticStatus.WARN, DiagnosticStatus.ERROR


@dataclasses.dataclass
class CompensatorStats:
    """What the compensator counts: accepted joint_states and commands (total, this period),
    watchdog trips (joint_states, commands), published outputs, joint_states periods lost (from
    the stamps) and stamp re-anchors, joint_states rejected for their stamp and without the
    compensated joints (this period: another publisher's messages), outputs that were not
    finite (replaced by 0; total, this period)."""

    accepted: int = 0
    accepted_period: int = 0
    commands: int = 0
    commands_period: int = 0
    published: int = 0
    state_trips: int = 0
    command_trips: int = 0
    lost: int = 0
    reanchors: int = 0
    stamp_rejected_period: int = 0
    foreign_period: int = 0
    non_finite: int = 0
    non_finite_period: int = 0
    period_start: float = dataclasses.field(default_factory=time.monotonic)

    def new_period(self) -> None:
        self.accepted_period = self.commands_period = 0
        self.stamp_rejected_period = self.foreign_period = self.non_finite_period = 0


@dataclasses.dataclass(frozen=True)
class JointUse:
    """What the compensator renders of one joint's ``joint_friction.yaml`` entry.

    Attributes
    ----------
    joint, law, offset
        The joint, its law (``asymmetric`` or ``curve``: its total curve is rendered) and its
        effort offset [N·m] (rendered with it).
    gear
        The gear efficiencies: ``used: …``, ``left out: …`` (and why) or ``none in the file``.
    gear_used
        The load-dependent gear part is compensated.
    gear_dropped
        The file has gear efficiencies (or their product) that are not compensated.
    undetermined
        The values the data did not determine (``determined: false``), used as written.
    reasons
        Their reasons from the file, ``name: reason`` (empty where the file gives none).
    """

    joint: str
    law: str
    offset: float
    gear: str
    gear_used: bool
    gear_dropped: bool
    undetermined: tuple
    reasons: tuple


def _gear_text(jf, gear_load: str) -> tuple[str, bool, bool]:
    if jf.has_gear:
        eff = f"eta_f {jf.eta_f:g}, eta_b {jf.eta_b:g}"
        if gear_load == "none":
            return (f"left out (gear_load: none): {eff} in the file, only the Coulomb/viscous "
                    "part is compensated", False, True)
        return f"used: {eff}, load torque from gear_load: {gear_load}", True, False
    if jf.eta_product is not None:
        return (f"left out: the file has only eta_product {jf.eta_product:g} (fric identify "
                "--model gear --dynamics identify: a rigid-body scale s is undone by eta_f*s, "
                "eta_b/s, so eta_f and eta_b are not separable); only the Coulomb/viscous part "
                "is compensated; identify with --dynamics urdf (or a known payload) for the gear "
                "part", False, True)
    return "none in the file", False, False


def joint_uses(joints, friction, gear_load: str) -> list[JointUse]:
    """Per joint what the compensator renders of its file entry.

    Parameters
    ----------
    joints
        The compensated joints' names.
    friction
        Their :class:`~fric_core.joint_friction.JointFriction` (same order).
    gear_load
        The node's ``gear_load`` (``command``, ``gravity`` or ``none``).

    Returns
    -------
    list of JointUse
        One per joint, in order.
    """
    out = []
    for name, jf in zip(joints, friction):
        gear, used, dropped = _gear_text(jf, gear_load)
        und = tuple(sorted(k for k, ok in jf.determined.items() if not ok))
        reasons = tuple(f"{k}: {jf.reasons[k]}" for k in und if k in jf.reasons)
        out.append(JointUse(name, jf.law, float(jf.offset), gear, used, dropped, und, reasons))
    return out


def uses_text(uses) -> str:
    """The start-up log's account of the gear efficiencies and the undetermined values, one
    line: ``gear efficiencies: …; not determined by the data (used as written): …``."""
    groups: dict[str, list[str]] = {}
    for u in uses:
        groups.setdefault(u.gear, []).append(u.joint)
    gear = "; ".join(f"{', '.join(js)}: {text}" for text, js in groups.items())
    und = [f"{u.joint} {', '.join(u.undetermined)}" for u in uses if u.undetermined]
    return (f"gear efficiencies: {gear}; values the data did not determine (used as written, "
            f"at their bound): {'; '.join(und) if und else 'none'}")


def _use_keys(uses) -> list[tuple[str, str]]:
    kv = []
    for u in uses:
        kv += [(f"{u.joint} law", u.law), (f"{u.joint} offset [N m]", f"{u.offset:g}"),
               (f"{u.joint} gear efficiencies", u.gear),
               (f"{u.joint} undetermined values",
                ", ".join(u.undetermined) + (f" ({'; '.join(u.reasons)})" if u.reasons else "")
                if u.undetermined else "none")]
    return kv


def compensator_status(stats: CompensatorStats, states: RejectLog, commands: RejectLog, *,
                       name: str, joints, friction_file: str, layout: str, dt: float,
                       waiting: bool, tripped: bool, command_state: str,
                       require_command: bool, timeout_s: float, max_effort: float,
                       gain, estimate, saturated, saturated_steps: int, sat_period,
                       command_topic: str, gravity: str = "none", uses=(),
                       state_topic: str = "joint_states",
                       publishers: int = 1) -> DiagnosticStatus:
    """The compensator's status; starts the next period.

    Parameters
    ----------
    stats, states, commands
        The node's counters and its rejected joint_states and commands.
    name, joints, friction_file, layout, dt
        Status name and the configuration (``layout``: K, B, deadband, relax_time in words).
    waiting, tripped
        No valid joint_states yet; the joint_states watchdog tripped.
    command_state
        ``"fresh"``, ``"stale"`` or ``"absent"``.
    require_command, timeout_s, max_effort
        The parameters.
    gain, estimate
        Per joint: enable·scale, the friction estimate of the last step.
    saturated, saturated_steps, sat_period
        Per joint saturated steps since the start, steps with any saturation, and per joint
        saturated steps this period.
    command_topic
        The resolved command input topic.
    gravity
        The gravity torque added: ``none``, ``urdf`` or ``identified``.
    uses
        Per joint :class:`JointUse` (what is rendered of the file).
    state_topic, publishers
        The (resolved) joint_states topic and its number of publishers.

    Returns
    -------
    DiagnosticStatus
        Level OK, WARN or ERROR with the problems as its message.
    """
    now = time.monotonic()
    elapsed = max(now - stats.period_start, 1e-9)
    stats.period_start = now
    rate = stats.accepted_period / elapsed
    kv = [("joints", ", ".join(joints)), ("joint_friction", friction_file),
          ("element", layout), ("gravity", gravity), ("dt [s]", f"{dt:g}"),
          ("joint_states rate [Hz]", f"{rate:.1f}"),
          ("command rate [Hz]", f"{stats.commands_period / elapsed:.1f}"),
          ("accepted joint_states", str(stats.accepted)),
          ("accepted commands", str(stats.commands)), ("published", str(stats.published)),
          ("command topic", command_topic), ("commands", command_state),
          ("require_command", str(require_command)),
          ("watchdog", "waiting for joint_states" if waiting else
           "tripped: zero effort published" if tripped else "ok"),
          ("watchdog trips (joint_states)", str(stats.state_trips)),
          ("watchdog trips (commands)", str(stats.command_trips)),
          ("watchdog timeout [s]", f"{timeout_s:g}"), ("max_effort", f"{max_effort:g}"),
          ("lost joint_states (stamps)", str(stats.lost)),
          ("stamp re-anchors", str(stats.reanchors)),
          (f"{state_topic} publishers", str(publishers)),
          ("non-finite outputs (replaced by 0)", str(stats.non_finite))]
    kv += _use_keys(uses)
    for i, j in enumerate(joints):
        kv += [(f"{j} gain", f"{gain[i]:g}"), (f"{j} friction estimate", f"{estimate[i]:+.4g}"),
               (f"{j} saturated steps", str(int(saturated[i]))),
               (f"{j} saturated steps this period", str(int(sat_period[i])))]
    kv.append(("saturated steps total", str(saturated_steps)))
    kv += states.key_values() + commands.key_values()
    problems = []
    level = OK
    if waiting:
        level = WARN
        problems.append("waiting for joint_states")
    elif tripped:
        level = ERROR
        problems.append("watchdog tripped: no valid joint_states; zero effort published")
    if command_state != "fresh":
        if require_command:
            level = max(level, ERROR if command_state == "stale" else WARN)
            problems.append(f"commands {command_state} on {command_topic} (require_command: "
                            + ("zero effort published, nothing until they resume)"
                               if command_state == "stale" else "publishing nothing)"))
        else:
            problems.append(f"commands {command_state} on {command_topic}: publishing the "
                            "compensation alone (require_command false: hand guiding)")
    if stats.non_finite_period:
        level = ERROR
        problems.append(f"{stats.non_finite_period} outputs not finite: 0 published instead")
    if same_joints_problem(stats, publishers):
        level = max(level, ERROR)
        problems.append(f"{publishers} publishers on {state_topic} carry the compensated "
                        "joints" + (" with interleaved stamps" if stats.stamp_rejected_period
                                    else "") + ": two sources of the same joints?")
    for log in (states, commands):
        p = log.period_problem()
        if p:
            level = max(level, WARN)
            problems.append(p)
    if any(sat_period):
        level = max(level, WARN)
        problems.append(f"saturated at max_effort {max_effort:g}")
    stats.new_period()
    return status(name, ",".join(joints), level, problems, "compensating", kv)


def same_joints_problem(stats: CompensatorStats, publishers: int) -> bool:
    """More than one publisher on joint_states and this period's accepted messages carried the
    compensated joints, with no message of other joints (a gripper's) or with messages rejected
    for their stamps (interleaved streams): two sources of the same joints."""
    return publishers > 1 and stats.accepted_period > 0 and (
        stats.foreign_period == 0 or stats.stamp_rejected_period > 0)
