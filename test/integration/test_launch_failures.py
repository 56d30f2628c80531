"""The launch files fail the way users expect, under ``fric launch`` (issue 16; the same checks
under the real ``ros2 launch`` are in test/conformance/test_ros2_tools.py, which runs when a
``ros2`` command is available).

* A failing identification (``amplitude:=0.05``: the stroke leaves the probe stage's +-15 mm
  travel, so the identifier refuses the run and exits 1, ``exit_on_failure``) ends
  ``identify_and_render.launch.xml`` with status 1 within seconds, every node stopped. Under
  ``ros2 launch`` the include of ``launch/fail_on_node_death.launch.py`` gives the same status
  (measured: 1 after 2.2 s; without it the display stage waited forever, status 0).
* ``rviz:=true`` without rviz2: status 2 and no node started (the rviz2 node comes first in each
  file, so ``ros2 launch`` too fails on it, status 1, before starting any other node).
* An invalid ``<choice>``: status 2 here, 1 under ``ros2 launch``; nothing started.
* Ctrl-C (SIGINT to ``fric launch``'s process group, twice, as an impatient user does): status
  0, every node stopped with exit code 0.
"""
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from fric_nodes.tools import pipeline

ROOT = Path(__file__).resolve().parents[2]
FAIL_WITHIN = 30.0   # s: generous for a loaded 2-core machine (measured 1.9 s when idle)
RVIZ_FILES = [p.name for p in sorted((ROOT / "launch").glob("*.launch.xml"))
              if 'name="rviz"' in p.read_text()]


def _env(tmp_path: Path, path_without_rviz2: bool = False) -> dict:
    domain = pipeline.free_domain_id(exclude={int(os.environ.get("ROS_DOMAIN_ID", "0"))})
    env = pipeline.loopback_env(domain)
    env["ROS_LOG_DIR"] = str(tmp_path / "ros_log")
    if path_without_rviz2:
        env["PATH"] = os.pathsep.join(d for d in env.get("PATH", "").split(os.pathsep)
                                      if d and not os.path.exists(os.path.join(d, "rviz2")))
    return env


def _started_pids(text: str) -> list[int]:
    return [int(p) for p in re.findall(r"\[fric launch\] \S+: started, pid (\d+)", text)]


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_failing_identification_ends_the_launch_with_status_1(tmp_path):
    cmd = pipeline.launch_command({"amplitude": "0.05", "record": "false",
                                   "out_dir": tmp_path / "ir"}, "identify_and_render.launch.xml",
                                  sigterm_timeout=10.0)
    t0 = time.monotonic()
    proc = subprocess.run(cmd, env=_env(tmp_path), cwd=tmp_path, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=90)
    wall = time.monotonic() - t0
    text = proc.stdout
    assert proc.returncode == 1, text[-3000:]
    assert wall < FAIL_WITHIN, f"{wall:.1f} s\n{text[-3000:]}"
    assert "refused: amplitude" in text
    assert re.search(r"friction_identifier-\d \(pid \d+\) died with exit code 1", text), text
    pids = _started_pids(text)
    assert len(pids) == 4 and not any(_alive(p) for p in pids), text[-3000:]


@pytest.mark.parametrize("launch_file", RVIZ_FILES)
def test_rviz_without_rviz2_starts_nothing(tmp_path, launch_file):
    env = _env(tmp_path, path_without_rviz2=True)
    if shutil.which("rviz2", path=env["PATH"]):
        pytest.skip("rviz2 is installed")
    proc = subprocess.run(pipeline.launch_command({"rviz": "true"}, launch_file), env=env,
                          cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, timeout=60)
    assert proc.returncode == 2, proc.stdout
    assert "executable 'rviz2' not found" in proc.stdout
    assert not _started_pids(proc.stdout)


def test_invalid_choice_is_refused_with_status_2(tmp_path):
    proc = subprocess.run(pipeline.launch_command({"sync": "bogus"}), env=_env(tmp_path),
                          cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, timeout=60)
    assert proc.returncode == 2, proc.stdout
    assert "launch argument 'sync' is 'bogus', not one of realtime, lockstep" in proc.stdout
    assert not _started_pids(proc.stdout)


def test_ctrl_c_twice_stops_every_node_cleanly(tmp_path):
    log = tmp_path / "launch.log"
    cmd = pipeline.launch_command({"duration": "0.0", "record": "false"})
    with open(log, "w") as out:
        proc = subprocess.Popen(cmd, env=_env(tmp_path), cwd=tmp_path, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)
    try:
        end = time.monotonic() + 60.0
        while time.monotonic() < end and proc.poll() is None:
            text = log.read_text()
            if "realtime at" in text and "impedance mode" in text:   # stage and renderer up
                break
            time.sleep(0.1)
        assert proc.poll() is None, log.read_text()[-3000:]
        os.killpg(proc.pid, signal.SIGINT)
        time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGINT)
        code = proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    text = log.read_text()
    assert code == 0, text[-3000:]
    assert "received SIGINT again: shutdown already in progress" in text
    pids = _started_pids(text)
    assert len(pids) == 2 and not any(_alive(p) for p in pids)
    assert len(re.findall(r"stopped, exit code 0", text)) == 2, text[-3000:]
    assert "terminate called" not in text and "Traceback" not in text


def test_ctrl_c_during_the_identification_is_a_clean_stop(tmp_path):
    """SIGINT while the identifier's start-up run is in progress: the run is aborted ("node
    shutting down", the stage at rest) and that is no failed identification: status 0 (before,
    exit_on_failure made the identifier exit 1, and both runners ended with 1)."""
    log = tmp_path / "launch.log"
    cmd = pipeline.launch_command({"record": "false", "out_dir": tmp_path / "ir"},
                                  "identify_and_render.launch.xml")
    with open(log, "w") as out:
        proc = subprocess.Popen(cmd, env=_env(tmp_path), cwd=tmp_path, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)
    try:
        end = time.monotonic() + 60.0
        while time.monotonic() < end and proc.poll() is None \
                and "hands over to /display/friction_renderer" not in log.read_text():
            time.sleep(0.1)
        time.sleep(1.5)   # the run is under way (warmup 4 s of excitation)
        os.killpg(proc.pid, signal.SIGINT)
        code = proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    text = log.read_text()
    assert "node shutting down" in text, text[-3000:]
    assert code == 0, text[-3000:]
    assert re.search(r"friction_identifier-\d \(pid \d+\) stopped, exit code 0", text)
