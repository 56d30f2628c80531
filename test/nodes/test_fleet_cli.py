"""``fric fleet``'s inputs (issue 26): the recordings found from folders and globs, each one's
robot, time and topic (bag metadata, naming patterns), and the one-line errors — a bad
argument, no recording, ``--ray`` without Ray — with ray and pyarrow imported by nothing else.
The pipeline itself on a simulated fleet: test/integration/test_fleet.py."""

import ast
import datetime as dt
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cli_support import one_error_line, run_fric
from fric_nodes.tools.fleet_sources import (FleetInputError, describe, find_recordings,
                                            parse_time_text)

ROOT = Path(__file__).resolve().parents[2]
UTC = dt.timezone.utc


def _bag(folder: Path, topics, start_ns=1_793_610_720_000_000_000) -> Path:
    """A bag directory whose metadata.yaml lists ``topics`` (name → type) and starts at
    ``start_ns`` (what fric fleet reads before identifying; no messages)."""
    folder.mkdir(parents=True)
    entries = "".join(f"  - message_count: 1\n    topic_metadata:\n      name: {n}\n"
                      f"      type: {t}\n      serialization_format: cdr\n"
                      for n, t in topics.items())
    (folder / "metadata.yaml").write_text(
        "rosbag2_bagfile_information:\n  version: 9\n  storage_identifier: mcap\n"
        f"  starting_time:\n    nanoseconds_since_epoch: {start_ns}\n"
        f"  topics_with_message_count:\n{entries}")
    (folder / f"{folder.name}.mcap").write_bytes(b"")
    return folder


JS = "sensor_msgs/msg/JointState"


@pytest.mark.parametrize("text, want", [
    ("2026-11-02T09:12:00", dt.datetime(2026, 11, 2, 9, 12, tzinfo=UTC)),
    ("rosbag2_2026_11_02-09_12_00", dt.datetime(2026, 11, 2, 9, 12, tzinfo=UTC)),
    ("r07_20261102T091230.csv", dt.datetime(2026, 11, 2, 9, 12, 30, tzinfo=UTC)),
    ("log_2026-11-02_09-12-00", dt.datetime(2026, 11, 2, 9, 12, tzinfo=UTC)),
    ("2026-11-02T10:12:00+01:00", dt.datetime(2026, 11, 2, 9, 12, tzinfo=UTC)),
    ("day_20261102", dt.datetime(2026, 11, 2, tzinfo=UTC)),
    ("1793610720", dt.datetime(2026, 11, 2, 9, 12, tzinfo=UTC)),
])
def test_times_in_names(text, want):
    assert parse_time_text(text) == want


def test_a_name_without_a_time_is_refused():
    with pytest.raises(ValueError, match="no date-time in 'robot7_day.csv'"):
        parse_time_text("robot7_day.csv")


def test_robot_and_time_from_the_bag(tmp_path):
    """Robot: the JointState topic's namespace, else the folder holding the bag; time: the
    bag's start in its metadata; a relative --topic matches in any namespace."""
    ns = _bag(tmp_path / "fleet" / "any" / "b1", {"/r07/joint_states": JS, "/r07/tf": "x"})
    plain = _bag(tmp_path / "fleet" / "r03" / "b2", {"/joint_states": JS})
    a = describe(ns, "bag")
    assert (a.robot, a.topic, a.problem) == ("r07", "/r07/joint_states", None)
    assert a.time == dt.datetime(2026, 11, 2, 9, 12, tzinfo=UTC)
    b = describe(plain, "bag")
    assert (b.robot, b.topic) == ("r03", "/joint_states")
    c = describe(ns, "bag", robot_from=r"fleet/(\w+)/", time_from="mtime")
    assert c.robot == "any" and abs(c.time.timestamp() - (ns / "b1.mcap").stat().st_mtime) < 1


def test_what_cannot_be_told_is_the_recordings_reason(tmp_path):
    two = _bag(tmp_path / "r1" / "b", {"/a/joint_states": JS, "/b/joint_states": JS})
    none = _bag(tmp_path / "r2" / "b", {"/imu": "sensor_msgs/msg/Imu"})
    assert "several JointState topics named joint_states: /a/joint_states, /b/joint_states" \
        in describe(two, "bag").problem
    assert describe(two, "bag", topic="/b/joint_states").problem is None
    assert "no JointState topic named joint_states" in describe(none, "bag").problem
    csv_file = tmp_path / "r9_plain.csv"
    csv_file.write_text("t\n")
    assert "no match" in describe(csv_file, "csv", robot_from=r"robot_(\d+)").problem
    assert "a CSV has no bag metadata" in describe(csv_file, "csv", time_from="bag").problem


def test_folders_and_globs(tmp_path):
    b1 = _bag(tmp_path / "data" / "r1" / "b1", {"/joint_states": JS})
    b2 = _bag(tmp_path / "data" / "r2" / "b2", {"/joint_states": JS})
    c = tmp_path / "data" / "r3" / "day_20261102.csv"
    c.parent.mkdir()
    c.write_text("t\n")
    out = tmp_path / "data" / "out"
    (out / "x").mkdir(parents=True)
    (out / "fleet.csv").write_text("t\n")  # the output folder is never a recording
    found = find_recordings([str(tmp_path / "data")], skip=out)
    assert found == [(b1.resolve(), "bag"), (b2.resolve(), "bag"), (c.resolve(), "csv")]
    assert find_recordings([str(tmp_path / "data" / "*" / "b*"), str(b1 / "b1.mcap")]) == \
        [(b1.resolve(), "bag"), (b2.resolve(), "bag")]
    with pytest.raises(FleetInputError, match="no file or folder matches"):
        find_recordings([str(tmp_path / "nothing*")])
    with pytest.raises(FleetInputError, match="no such file or folder"):
        find_recordings([str(tmp_path / "missing")])


@pytest.mark.parametrize("args, text", [
    (["nowhere"], "nowhere: no such file or folder"),
    ([".", "--robot-from", "("], "--robot-from '(': not auto, dir nor a valid regular "
                                 "expression"),
    ([".", "--alpha", "2"], "argument --alpha: expected a probability in (0, 1), got '2'"),
    (["urdf"], "no recording found"),
    ([".", "--jobs", "0"], "--jobs: expected a whole number >= 1"),
    ([".", "--levels", "stiction"], "--levels: expected some of coulomb, viscous"),
])
def test_bad_arguments_one_line(tmp_path, args, text):
    full = ["fleet", *args]
    if "--urdf" not in " ".join(args):
        full += ["--urdf", "arm7"]
    r = run_fric(*full, "--out", tmp_path / "o")
    assert r.returncode == 2
    assert text in one_error_line(r)


def test_without_ray_one_line_and_nothing_else_imports_ray_or_pyarrow(tmp_path):
    """A ``ray`` that cannot be imported (a stand-in package first on the path): ``--ray``
    says which extra to install, in one line, before anything is identified. ``fric`` and the
    fleet modules import neither ray nor pyarrow; in the sources only fric fleet's runner
    imports ray and only the table pyarrow (inside the functions that use them)."""
    fake = tmp_path / "fake" / "ray"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError(\"No module named 'ray'\")\n")
    bag = _bag(tmp_path / "r1" / "b", {"/joint_states": JS})
    env = {**os.environ, "PYTHONPATH": f"{fake.parent}:{ROOT}"}
    r = subprocess.run([sys.executable, "-m", "fric_nodes.tools.cli", "fleet", str(bag),
                        "--urdf", "arm7", "--out", str(tmp_path / "o"), "--ray", "local"],
                       capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path)
    assert r.returncode == 2
    assert one_error_line(r) == \
        "fric fleet: error: --ray: Ray is not installed: pip install 'fric[ray]'"
    script = ("import sys\n"
              "import fric_nodes.tools.cli, fric_nodes.tools.fleet, fric_core.fleet.report\n"
              "import fric_nodes.tools.fleet_runner, fric_core.fleet.simulated\n"
              "print(sorted(k for k in sys.modules if k.split('.')[0] in ('ray', 'pyarrow')))\n")
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                       timeout=120, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip() == "[]"
    # in the sources: ray only in the runner, pyarrow only in the table (both inside functions)
    users = {"ray": set(), "pyarrow": set()}
    for pkg in ("fric_core", "fric_interfaces", "fric_nodes"):
        for f in (ROOT / pkg).rglob("*.py"):
            for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
                names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                         else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
                for name in names:
                    if name.split(".")[0] in users:
                        users[name.split(".")[0]].add(str(f.relative_to(ROOT)))
    assert users == {"ray": {"fric_nodes/tools/fleet_runner.py"},
                     "pyarrow": {"fric_core/fleet/table.py"}}
