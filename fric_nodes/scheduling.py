"""Real-time scheduling of a node process: SCHED_FIFO priority and CPU affinity for every thread.

The same two knobs ros2_control's controller_manager has (``thread_priority``, ``cpu_affinity``),
as read-only parameters of ``haptic_stage`` and ``friction_renderer``
(:data:`fric_interfaces.parameters.SCHEDULING_SPECS`). They apply to every thread of the process —
the executor thread and the DDS threads rclpy has already started — so a message is never
handled by a normal-priority thread that the rest of the machine can delay. Threads created
later inherit the policy and affinity of their creator.

Why: on this 2-vCPU machine a plain 1 kHz sleep loop wakes more than 1 ms late ~9 times in
20 s; pinned and SCHED_FIFO, 0–1 times (``bench/loop_latency.py`` prints this baseline).
SCHED_FIFO needs CAP_SYS_NICE (root, or ``rtprio`` in /etc/security/limits.conf); without it the
node keeps running with normal scheduling and says so, as controller_manager does.
"""

from __future__ import annotations

import os
from typing import Sequence

__all__ = ["apply_scheduling", "process_threads"]


def process_threads() -> list[int]:
    """Thread ids of this process (Linux: /proc/self/task)."""
    try:
        return sorted(int(t) for t in os.listdir("/proc/self/task"))
    except OSError:
        return [0]  # not Linux: the calling thread only


def apply_scheduling(priority: int, cpus: Sequence[int]) -> list[str]:
    """Put every thread of this process on ``cpus`` (empty: unchanged) and under SCHED_FIFO at
    ``priority`` (0: unchanged). Returns what could not be applied (empty when all was).

    Raises ``ValueError`` naming the parameter for values that can never work: a priority outside
    1–99, a CPU this process may not run on.
    """
    problems: list[str] = []
    priority = int(priority)
    if priority and not 1 <= priority <= 99:
        raise ValueError(f"thread_priority: {priority} is not 0 (off) or a SCHED_FIFO priority "
                         "1-99")
    allowed = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else set()
    want = sorted({int(c) for c in cpus})
    if want and allowed and not set(want) <= allowed:
        raise ValueError(f"cpu_affinity: CPUs {sorted(set(want) - allowed)} are not available "
                         f"(this process may run on {sorted(allowed)})")
    tids = process_threads()
    if want:
        try:
            for tid in tids:
                os.sched_setaffinity(tid, want)
        except OSError as e:
            problems.append(f"cpu_affinity {want} not applied: {e.strerror}")
    if priority:
        if not hasattr(os, "SCHED_FIFO"):
            problems.append("thread_priority: SCHED_FIFO is not available on this system")
        else:
            param = os.sched_param(priority)
            try:
                for tid in tids:
                    os.sched_setscheduler(tid, os.SCHED_FIFO, param)
            except PermissionError:
                problems.append(f"thread_priority {priority}: SCHED_FIFO not permitted (needs "
                                "CAP_SYS_NICE or an rtprio limit); normal scheduling")
            except OSError as e:
                problems.append(f"thread_priority {priority}: {e.strerror}; normal scheduling")
    return problems
