"""What a newcomer trips on with the ``fric`` command (issue 22), tried as a new user would: the
command as a subprocess, over loopback DDS in the domain test/conftest.py gives this process.

* item 3: ``fric run`` without an executable, or with a wrong one, lists every node executable
  setup.py declares (it listed 6 of the 8: no friction_compensator, no trajectory_tracker);
* item 4: ``fric lifecycle nodes`` with no managed node running printed nothing and exited 0;
  now one line says none was found, in which domain, what was seen, and the status is 1.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from cli_support import one_error_line as _one_line, run_fric as _fric  # test/ (conftest.py)

ROOT = Path(__file__).resolve().parents[2]


def _setup_py_executables() -> list[str]:
    """The node executables setup.py declares (console_scripts other than ``fric``)."""
    text = (ROOT / "setup.py").read_text(encoding="utf-8")
    block = text[text.index('"console_scripts"'):]
    block = block[:block.index("]")]
    names = re.findall(r'"(\w+) = fric_nodes\.[\w.]+:main"', block)
    assert len(names) >= 9, block  # fric + the 8 nodes: the pattern still reads setup.py
    return sorted(n for n in names if n != "fric")


def test_run_lists_every_executable_of_setup_py():
    expected = _setup_py_executables()
    assert {"friction_compensator", "trajectory_tracker"} <= set(expected)
    for args, status, head in ((("run",), 2, "fric run: give the executable"),
                               (("run", "no_such_exe"), 1,
                                "fric run: executable 'no_such_exe' not found")):
        r = _fric(*args)
        assert r.returncode == status, r.stdout + r.stderr
        line = _one_line(r)
        assert line.startswith(head), line
        listed = line[line.index("fric's executables: ") + len("fric's executables: "):]
        assert sorted(listed.rstrip(")").split(", ")) == expected, line


def test_lifecycle_nodes_with_none_running_says_so():
    import rclpy
    from rclpy.context import Context

    dom = os.environ["ROS_DOMAIN_ID"]
    ctx = Context()
    rclpy.init(context=ctx)
    node = rclpy.create_node("plain_node_not_managed", context=ctx)  # a node, not a managed one
    try:
        r = _fric("lifecycle", "nodes", "--wait", "3")
    finally:
        node.destroy_node()
        rclpy.shutdown(context=ctx)
    assert r.returncode == 1, r.stdout + r.stderr
    assert r.stdout == ""
    line = _one_line(r)
    assert line.startswith("fric lifecycle nodes: no managed (lifecycle) node found within 3 s "
                           f"(ROS_DOMAIN_ID={dom}, "), line
    assert "/plain_node_not_managed" in line, line
