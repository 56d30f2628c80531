"""No thread of a node dies silently (issue 13, item 5's general rule).

* ``run_node`` (every node's ``main``): a callback that raises, or a node whose own thread gave up
  (``fatal_error``), is logged with its traceback, reported as an ERROR status on /diagnostics,
  the node's final safe output (``on_stop``) still runs, and the process exits with status 1.
  Before, the exception left ``spin_once`` through ``run_node`` and skipped ``on_stop``: no
  final zero effort, nothing on /diagnostics.
* ``haptic_stage``'s serial link thread: test_serial_link.py (no rclpy).
"""

import os
import subprocess
import sys
import textwrap
import time

import rclpy
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus


_SCRIPT = textwrap.dedent("""
    import sys
    from rclpy.node import Node
    from fric_nodes._node_util import run_node

    MODE = sys.argv[1]

    class Crashy(Node):
        def __init__(self):
            super().__init__("crashy_node")
            self.fatal_error = None
            self.ticks = 0
            self.create_timer(0.05, self.tick)

        def tick(self):
            self.ticks += 1
            if self.ticks == 30:  # 1.5 s: time for discovery of the listener on a busy machine
                if MODE == "raise":
                    raise RuntimeError("boom in a timer")
                self.fatal_error = "worker thread gave up"

    def on_stop(node, ok):
        print(f"final safe output after {node.ticks} ticks", flush=True)

    sys.exit(run_node(Crashy, "crashy", [], on_stop=on_stop))
""")


def _run_crashy(mode: str, tmp_path):
    """The script as a process while this process listens on /diagnostics."""
    script = tmp_path / "crashy.py"
    script.write_text(_SCRIPT)
    rclpy.init()
    node = rclpy.create_node("crash_listener")
    got = []
    node.create_subscription(DiagnosticArray, "/diagnostics", got.append, 50)
    try:
        proc = subprocess.Popen([sys.executable, str(script), mode], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=dict(os.environ))
        end = time.monotonic() + 30.0
        while proc.poll() is None and time.monotonic() < end:
            rclpy.spin_once(node, timeout_sec=0.05)
        for _ in range(10):  # late deliveries
            rclpy.spin_once(node, timeout_sec=0.02)
        if proc.poll() is None:
            proc.kill()
        out, err = proc.communicate(timeout=10)
    finally:
        node.destroy_node()
        rclpy.shutdown()
    errors = [s for a in got for s in a.status
              if s.level == DiagnosticStatus.ERROR and s.name.startswith("crashy_node")]
    return proc.returncode, out, err, errors


def test_a_callback_that_raises_ends_the_node_reported_safe_and_nonzero(tmp_path):
    rc, out, err, errors = _run_crashy("raise", tmp_path)
    assert rc == 1, (rc, out, err)
    assert "final safe output after 30 ticks" in out, (out, err)  # on_stop ran
    assert "RuntimeError" in err and "boom in a timer" in err and "Traceback" in err, err
    assert "crashy: stopped: unexpected RuntimeError in a callback: boom in a timer" in err
    assert errors and "boom in a timer" in errors[0].message, errors


def test_a_node_whose_thread_gave_up_ends_reported_safe_and_nonzero(tmp_path):
    rc, out, err, errors = _run_crashy("fatal", tmp_path)
    assert rc == 1, (rc, out, err)
    assert "final safe output after 30 ticks" in out, (out, err)
    assert "crashy: stopped: worker thread gave up" in err, err
    assert errors and "worker thread gave up" in errors[0].message, errors


def test_reject_log_counts_per_reason_and_per_period():
    """The shared rejected-input bookkeeping of the nodes (one warning call site)."""
    from fric_nodes._node_util import RejectLog

    warned = []

    class Log:
        def warning(self, text, **kw):
            warned.append((text, kw.get("throttle_duration_sec")))

    r = RejectLog(Log(), "command")
    assert r.period_problem() is None and r.key_values() == [("rejected commands", "0")]
    r.add("non_finite", "data[0] is nan")
    r.add("out_of_travel", "data[0] = 1e308 m is outside the travel")
    r.add("non_finite", "data[0] is inf")
    assert r.total == 3 and r.counts == {"non_finite": 2, "out_of_travel": 1}
    assert dict(r.key_values())["rejected non_finite last"] == "data[0] is inf"
    assert r.period_problem() == "3 rejected commands, last: data[0] is inf"
    assert r.period_problem() is None  # the period was reset
    assert warned[0] == ("rejected command: data[0] is nan", 1.0)


def test_a_fric_node_class_without_its_hooks_is_refused_when_defined():
    import pytest

    from fric_nodes._node_util import FricNode

    with pytest.raises(TypeError, match="does not define diagnostic_status"):
        class Half(FricNode):  # noqa: F841 - defining it is the test
            def _setup(self):
                pass
