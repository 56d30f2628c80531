"""Ctrl-C after a long run keeps the results (issue 24 item 9).

Found: after 540 s of ``fric launch haptic_render.launch.xml duration:=0.0``, SIGINT → the
recorder read its whole bag back, message by message, and drew 200 000-point plots: 21.6 s
(16.5 s on a quieter machine, bench/recorder_shutdown.py) against the launch's budget (SIGTERM
5 s after SIGINT, SIGKILL 5 s later, as ros2 launch's defaults), so the runner killed it and only
``run_bag/`` remained. Now the recorder decodes each batch it writes into records spooled beside
the bag and at shutdown reads those (1.6 s for the same 540 s); ``fric report BAG`` makes the
files again from a bag alone.

* A recorder process is fed 240 s of a 1 kHz haptic run (960 000 messages, through its own
  drain, faster than real time: test/recorder_feed.py), then SIGINT: it exits 0 within 5 s
  (ros2 launch's sigterm_timeout; the recorder before the fix took ~7.5 s here, its bag read
  back alone ~6 s), with summary.json, run.npz (every state) and the plots, and no spool left.
* ``fric report`` on a copy of the bag alone writes the same summary (the bag's path aside) and
  the same arrays, and the plots.
* An arm recording (kind:=arm, 7 joints): the recorder's summary and ``fric report``'s agree.
* The spool keeps only the analysis window (bounded disk) and gives what ``read_bag`` gives for
  that window.
* ``fric report`` on what is not a closed bag: one line, exit 2.
* A killed recorder's spool is replaced; a user's directory of its name is refused by name.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from cli_support import one_error_line, run_fric

ROOT = Path(__file__).resolve().parents[2]
FEED = ROOT / "test" / "recorder_feed.py"
#: ros2 launch's sigterm_timeout (and fric launch's): SIGTERM follows SIGINT after it
BUDGET_S = 5.0
SECONDS, RATE = 240.0, 1000.0


def _fed_recorder(out: Path, seconds: float, kind: str = "haptic") -> tuple[float, str, int]:
    """A recorder process fed ``seconds`` of a run, then SIGINT: (seconds from SIGINT to its
    exit, its output, its exit status)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(  # this tree's fric, as `-m` from ROOT
        [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    proc = subprocess.Popen([sys.executable, str(FEED), str(seconds), str(RATE), kind,
                             "--ros-args", "-p", f"out_dir:={out}", "-p", f"kind:={kind}"],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        for line in proc.stderr:
            if line.startswith("FED"):
                break
        else:
            pytest.fail("the recorder was not fed: " + proc.communicate()[0][-2000:])
        time.sleep(0.3)
        t0 = time.monotonic()
        proc.send_signal(signal.SIGINT)
        try:
            stdout, stderr = proc.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            proc.kill()
            stdout, stderr = proc.communicate()
        return time.monotonic() - t0, stdout + stderr, proc.returncode
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="module")
def long_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("long") / "rec"
    took, output, rc = _fed_recorder(out, SECONDS)
    return out, took, output, rc


def test_sigint_after_a_long_recording_exits_within_the_budget(long_run):
    from fric_nodes.tools import run_report

    out, took, output, rc = long_run
    print(f"\nrecorder exit {took:.2f} s after SIGINT, {SECONDS:g} s recorded at {RATE:g} Hz")
    assert rc == 0, output[-3000:]
    assert "Traceback" not in output
    assert took < BUDGET_S, f"{took:.2f} s from SIGINT to exit\n{output[-2000:]}"
    n = int(SECONDS * RATE)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["states"] == n and summary["lost_states"] == 0
    assert summary["bag_messages"] == {"joint_states": n, "effort": n, "setpoint": 0,
                                       "wrench": n, "hand": n}
    # the fed hand script: a push below breakaway (stuck), one above (sliding at 0.02 m/s,
    # the rendered 4 N Coulomb level)
    holds = summary["holds"]
    assert [h["state"] for h in holds] == ["stuck", "sliding"]
    assert holds[1]["kinetic_force"] == pytest.approx(4.0, abs=1e-12)
    data = run_report.load_run(out / "run.npz")
    assert data.n_states == n
    np.testing.assert_allclose(np.diff(data.js_stamp), 1.0 / RATE, atol=1e-9)
    assert (out / "timeseries.png").stat().st_size > 0
    assert (out / "force_velocity.png").stat().st_size > 0
    assert not (out / ".run_spool").exists()


def test_fric_report_rebuilds_the_files_from_the_bag_alone(long_run, tmp_path):
    from fric_nodes.tools import run_report

    out = long_run[0]
    bag = tmp_path / "left" / "run_bag"
    shutil.copytree(out / "run_bag", bag)
    r = run_fric("report", bag, "--out", tmp_path / "again", timeout=120)
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stdout + r.stderr
    again = json.loads((tmp_path / "again" / "summary.json").read_text())
    first = json.loads((out / "summary.json").read_text())
    assert again.pop("bag") == str(bag.resolve())
    assert first.pop("bag") == str((out / "run_bag").resolve())
    assert again == first
    a = run_report.load_run(tmp_path / "again" / "run.npz")
    b = run_report.load_run(out / "run.npz")
    for k in run_report.ARRAY_KEYS:
        np.testing.assert_array_equal(a.a[k], b.a[k], err_msg=k)
    assert a.meta.pop("bag") == str(bag) and b.meta.pop("bag") == str(out / "run_bag")
    assert a.meta == b.meta
    for png in ("timeseries.png", "force_velocity.png"):
        assert (tmp_path / "again" / png).stat().st_size > 0


def test_arm_recording_summary_and_fric_report_agree(tmp_path):
    from recorder_feed import ARM_JOINTS

    out = tmp_path / "arm"
    took, output, rc = _fed_recorder(out, 20.0, kind="arm")
    assert rc == 0, output[-3000:]
    assert took < BUDGET_S, f"{took:.2f} s from SIGINT to exit\n{output[-2000:]}"
    first = json.loads((out / "summary.json").read_text())
    assert first["joints"] == ARM_JOINTS and first["joint_states"] == 20_000
    assert first["rate_hz"] == pytest.approx(RATE, rel=1e-9) and first["lost_states"] == 0
    assert first["messages"] == {"/joint_states": 20_000, "/effort_controller/commands": 20_000}
    assert first.pop("stopped") == "signal SIGINT"
    assert not (out / ".run_spool").exists()
    bag = tmp_path / "left" / "run_bag"
    shutil.copytree(out / "run_bag", bag)
    r = run_fric("report", bag)  # by default next to the bag (the recorder's out_dir)
    assert r.returncode == 0, r.stderr
    assert "arm recording: 7 joints" in r.stdout
    again = json.loads((bag.parent / "summary.json").read_text())
    assert again.pop("bag") == str(bag.resolve())
    assert first.pop("bag") == str((out / "run_bag").resolve())
    assert again == first


def test_spool_keeps_the_analysis_window_and_matches_the_bag(tmp_path):
    """In-process: 60 s fed with analysis_window 20 s; the spool holds at most the window plus
    one segment (5 s: a quarter of it) and its records give what read_bag gives for the last
    20 s of the bag."""
    import rclpy
    from rclpy.context import Context
    from rclpy.parameter import Parameter

    from fric_nodes.recorder import SPOOL_NAME, Recorder
    from fric_nodes.tools import run_report
    from recorder_feed import feed

    ctx = Context()
    rclpy.init(context=ctx)
    try:
        node = Recorder(context=ctx, parameter_overrides=[
            Parameter("out_dir", value=str(tmp_path / "rec")), Parameter("plots", value=False),
            Parameter("analysis_window", value=20.0)])
        try:
            feed(node, 60.0)
            spool = tmp_path / "rec" / SPOOL_NAME
            size = sum(p.stat().st_size for p in spool.rglob("*.bin"))
            data = node.run_data()
        finally:
            node.destroy_node()
    finally:
        rclpy.shutdown(context=ctx)
    per_second = RATE * (45 + 17 + 25 + 17)  # bytes a second: joint_states, effort, wrench, hand
    assert size <= (20.0 + 5.0 + 1.0) * per_second, size
    ref = run_report.read_bag(tmp_path / "rec" / "run_bag", window=20.0)
    assert ref.meta["window"]["analysed_s"] == 20.0
    assert data.n_states == ref.n_states > 19_000
    for k in run_report.ARRAY_KEYS:
        np.testing.assert_array_equal(data.a[k], ref.a[k], err_msg=k)
    assert data.meta == ref.meta


def test_fric_report_refuses_what_is_not_a_closed_bag(tmp_path):
    r = run_fric("report", tmp_path / "absent")
    assert r.returncode == 2
    assert "no such bag directory" in one_error_line(r)
    killed = tmp_path / "run_bag"  # a recorder SIGKILLed while recording: no metadata.yaml
    killed.mkdir()
    (killed / "run_bag.mcap").write_bytes(b"\x89MCAP0\r\n")
    r = run_fric("report", killed)
    assert r.returncode == 2
    line = one_error_line(r)
    assert "no metadata.yaml" in line and "ros2 bag reindex" in line
    r = run_fric("report", killed, "--window", "-1")
    assert r.returncode == 2 and "--window" in one_error_line(r)


def test_a_killed_recorders_spool_is_replaced_and_anything_else_refused(tmp_path):
    """The spool's directory: a previous (killed) recorder's is replaced; a user's directory of
    that name is refused at start-up in one line naming out_dir, and kept."""
    from fric_nodes.recorder import SPOOL_NAME
    from fric_nodes.tools.run_columns import Spool

    left = tmp_path / "killed" / SPOOL_NAME / "000003"
    left.mkdir(parents=True)
    (left / "joint_states.bin").write_bytes(bytes(45))
    spool = Spool(left.parent)
    assert list(left.parent.iterdir()) == []
    spool.remove()
    mine = tmp_path / "rec" / SPOOL_NAME
    mine.mkdir(parents=True)
    (mine / "notes.txt").write_text("mine")
    r = subprocess.run([sys.executable, "-m", "fric_nodes.recorder", "--ros-args",
                        "-p", f"out_dir:={tmp_path / 'rec'}"], cwd=ROOT, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 1
    assert "Traceback" not in r.stdout + r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "bad parameters: out_dir:" in lines[0], r.stderr
    assert "is not a spool of fric_recorder" in lines[0]
    assert (mine / "notes.txt").read_text() == "mine"
