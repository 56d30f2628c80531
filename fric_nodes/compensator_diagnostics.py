"""The ``friction_compensator`` node's counters (:class:`CompensatorStats`) and its /diagnostics
status (:func:`compensator_status`). No node: plain data in, a DiagnosticStatus out
(docs/friction_compensator.md)."""

from __future__ import annotations

import dataclasses
import time

from diagnostic_msgs.msg import DiagnosticStatus

from ._node_util import RejectLog, status

__all__ = ["CompensatorStats", "compensator_status"]

OK, WARN, ERROR = DiagnosticStatus.OK, DiagnosticStatus.WARN, DiagnosticStatus.ERROR


@dataclasses.dataclass
class CompensatorStats:
    """What the compensator counts: accepted joint_states and commands (total, this period),
    watchdog trips (joint_states, commands), published outputs."""

    accepted: int = 0
    accepted_period: int = 0
    commands: int = 0
    commands_period: int = 0
    published: int = 0
    state_trips: int = 0
    command_trips: int = 0
    period_start: float = dataclasses.field(default_factory=time.monotonic)

    def new_period(self) -> None:
        self.accepted_period = self.commands_period = 0


def compensator_status(stats: CompensatorStats, states: RejectLog, commands: RejectLog, *,
                       name: str, joints, friction_file: str, layout: str, dt: float,
                       waiting: bool, tripped: bool, command_state: str,
                       require_command: bool, timeout_s: float, max_effort: float,
                       gain, estimate, saturated, saturated_steps: int, sat_period,
                       command_topic: str, gravity: str = "none") -> DiagnosticStatus:
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
          ("watchdog timeout [s]", f"{timeout_s:g}"), ("max_effort", f"{max_effort:g}")]
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
                            "compensation alone")
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
