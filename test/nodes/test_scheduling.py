"""Real-time scheduling of the node processes (fric_nodes.scheduling) and the housekeeping that
keeps diagnostics/markers out of the control path (fric_nodes._node_util.Housekeeping)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from fric_nodes._node_util import Housekeeping
from fric_nodes.scheduling import apply_scheduling

ROOT = Path(__file__).resolve().parents[2]


def test_impossible_settings_name_the_parameter():
    with pytest.raises(ValueError, match="thread_priority: 100"):
        apply_scheduling(100, [])
    with pytest.raises(ValueError, match="thread_priority: -3"):
        apply_scheduling(-3, [])
    missing = max(os.sched_getaffinity(0)) + 1
    with pytest.raises(ValueError, match=rf"cpu_affinity: CPUs \[{missing}\] are not available"):
        apply_scheduling(0, [missing])


def test_every_thread_gets_the_affinity_and_policy():
    """In a child with threads started before the call (as DDS starts its threads before the
    node's parameters are read): all of them end up on the CPU, and under SCHED_FIFO when the
    process may use it (else a problem says why and the policy is untouched)."""
    cpu = min(os.sched_getaffinity(0))
    code = textwrap.dedent(f"""
        import json, os, threading
        from fric_nodes.scheduling import apply_scheduling, process_threads
        ev = threading.Event()
        ts = [threading.Thread(target=ev.wait) for _ in range(3)]
        for t in ts:
            t.start()
        problems = apply_scheduling(7, [{cpu}])
        tids = process_threads()
        out = dict(n=len(tids), problems=problems,
                   aff=sorted({{tuple(sorted(os.sched_getaffinity(t))) for t in tids}}),
                   pol=sorted({{(os.sched_getscheduler(t), os.sched_getparam(t).sched_priority)
                                for t in tids}}))
        ev.set()
        print(json.dumps(out))
    """)
    r = json.loads(subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                                  text=True, timeout=30, check=True).stdout)
    assert r["n"] >= 4
    assert r["aff"] == [[cpu]]
    if r["problems"]:  # no CAP_SYS_NICE here: said, and nothing half-applied
        assert len(r["problems"]) == 1 and "not permitted" in r["problems"][0]
        assert {p for p, _ in r["pol"]} == {os.SCHED_OTHER}
    else:
        assert r["pol"] == [[os.SCHED_FIFO, 7]]


def test_node_rejects_an_unavailable_cpu_at_startup():
    missing = max(os.sched_getaffinity(0)) + 1
    r = subprocess.run([sys.executable, "-m", "fric_nodes.friction_renderer", "--ros-args",
                        "-p", f"cpu_affinity:=[{missing}]"], cwd=ROOT, capture_output=True,
                       text=True, timeout=30)
    assert r.returncode == 1
    assert f"bad parameters: cpu_affinity: CPUs [{missing}] are not available" in r.stderr


def test_housekeeping_waits_for_the_slack_after_an_output():
    ran = []
    hk = Housekeeping(idle_s=0.05)
    diag = hk.timer(lambda: ran.append("diag"))
    markers = hk.timer(lambda: ran.append("markers"))
    diag()  # no control output yet: the loop is idle, nothing to delay
    assert ran == ["diag"]
    hk.after_output()  # the control loop runs
    diag()
    markers()
    diag()  # due twice before the slack came: still once
    assert ran == ["diag"]
    hk.after_output()
    assert ran == ["diag", "diag"]  # one task per output, oldest first
    hk.after_output()
    assert ran == ["diag", "diag", "markers"]
    hk.after_output()
    assert ran == ["diag", "diag", "markers"]
    time.sleep(0.06)  # control loop silent longer than idle_s: the timer runs it itself
    markers()
    assert ran[-1] == "markers" and len(ran) == 4
