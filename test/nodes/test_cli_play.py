"""``fric play`` sends ``fric excite``'s trajectory from the venv (issue 22 item 2).

Found: the docs' ``ros2 topic pub --once ... "$(cat excitation_trajectory.yaml)"`` needs a ROS 2
install, and cannot work for a 6–7-joint arm anyway: the file (140–196 kB) is over the 128 kB one
shell argument may hold. ``fric play FILE`` publishes the CSV or the YAML as one
trajectory_msgs/JointTrajectory once a subscriber is there. Here a subscriber in this process
(another rclpy context) receives what a ``fric play`` process sends: every point, the joint
names, the values and times; no subscriber, or a bad file, is one line.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from cli_support import one_error_line as _one_line  # test/ (conftest.py)

ROOT = Path(__file__).resolve().parents[2]
JOINTS = tuple(f"joint_a{i}" for i in range(1, 8))
DURATION, CSV_RATE = 40.0, 100.0


def _excitation():
    """A 7-joint trajectory of fric excite's length, sampled at 100 Hz (a sinusoid per joint)."""
    from fric_core.arm_identification.excitation import ExcitationTrajectory

    t = np.arange(int(DURATION * CSV_RATE) + 1) / CSV_RATE
    w = 2 * np.pi * 0.1 * np.arange(1, 8)
    q = 0.5 * np.sin(np.outer(t, w)) / np.arange(1, 8)
    v = 0.5 * np.cos(np.outer(t, w)) * w / np.arange(1, 8)
    a = -0.5 * np.sin(np.outer(t, w)) * w ** 2 / np.arange(1, 8)
    return ExcitationTrajectory(t=t, q=q, v=v, a=a, joint_names=JOINTS, cond=float("nan"),
                                period=DURATION)


def _play_and_receive(*args, topic="/test_play/joint_trajectory", wait=20.0):
    """Run ``fric play ARGS --topic TOPIC`` while a subscriber in this process listens; returns
    (the process's result, the messages received)."""
    import rclpy
    from rclpy.context import Context
    from rclpy.executors import SingleThreadedExecutor
    from trajectory_msgs.msg import JointTrajectory

    ctx = Context()
    rclpy.init(context=ctx)
    node = rclpy.create_node("play_test_sub", context=ctx)
    got = []
    node.create_subscription(JointTrajectory, topic, got.append, 10)
    ex = SingleThreadedExecutor(context=ctx)
    ex.add_node(node)
    proc = subprocess.Popen([sys.executable, "-m", "fric_nodes.tools.cli", "play",
                             *map(str, args), "--topic", topic, "--wait", str(wait)],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        end = time.monotonic() + 60.0
        while proc.poll() is None and time.monotonic() < end:
            ex.spin_once(timeout_sec=0.05)
        end = time.monotonic() + 2.0  # anything still on its way (it was acknowledged)
        while time.monotonic() < end:
            ex.spin_once(timeout_sec=0.05)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
        ex.shutdown()
        node.destroy_node()
        rclpy.shutdown(context=ctx)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err), got


def test_play_sends_a_7_joint_yaml_over_the_shell_argument_limit(tmp_path):
    import yaml

    from fric_core.arm_identification.excitation import MAX_ARG_BYTES, write_trajectory_yaml

    path = tmp_path / "excitation_trajectory.yaml"
    size = write_trajectory_yaml(path, _excitation())
    assert size > MAX_ARG_BYTES  # what `ros2 topic pub "$(cat ...)"` cannot pass
    doc = yaml.safe_load(path.read_text())
    r, got = _play_and_receive(path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert len(got) == 1, f"{len(got)} messages received\n{r.stdout}{r.stderr}"
    m = got[0]
    assert tuple(m.joint_names) == JOINTS
    assert len(m.points) == len(doc["points"]) == int(DURATION * 20) + 1
    for p, want in zip(m.points, doc["points"]):
        assert list(p.positions) == want["positions"]
        assert list(p.velocities) == want["velocities"]
        assert list(p.accelerations) == want["accelerations"]
        assert (p.time_from_start.sec, p.time_from_start.nanosec) == \
            (want["time_from_start"]["sec"], want["time_from_start"]["nanosec"])
    assert r.stdout.startswith(f"published /test_play/joint_trajectory: 7 joints "
                               f"({', '.join(JOINTS)}), {len(m.points)} points, the last at "
                               f"43.000 s (the first at 3.000 s), to 1 subscriber(s)"), r.stdout


def test_play_samples_a_csv_at_the_rate_given(tmp_path):
    from fric_core.arm_identification.excitation import write_excitation_csv

    traj = _excitation()
    path = tmp_path / "excitation.csv"
    write_excitation_csv(path, traj)
    r, got = _play_and_receive(path, "--rate", "10", "--lead-in", "2.5")
    assert r.returncode == 0, r.stdout + r.stderr
    assert len(got) == 1
    m = got[0]
    assert tuple(m.joint_names) == JOINTS
    assert len(m.points) == int(DURATION * 10) + 1
    rows = np.arange(len(m.points)) * int(CSV_RATE / 10)  # every 10th CSV row
    np.testing.assert_allclose([list(p.positions) for p in m.points], traj.q[rows], rtol=1e-8,
                               atol=1e-9)
    np.testing.assert_allclose([list(p.velocities) for p in m.points], traj.v[rows], rtol=1e-8,
                               atol=1e-9)
    t = [p.time_from_start.sec + p.time_from_start.nanosec * 1e-9 for p in m.points]
    np.testing.assert_allclose(t, 2.5 + rows / CSV_RATE, atol=1e-9)


def test_play_without_a_subscriber_is_one_line(tmp_path):
    from fric_core.arm_identification.excitation import write_excitation_csv

    path = tmp_path / "excitation.csv"
    write_excitation_csv(path, _excitation())
    t0 = time.monotonic()
    r = subprocess.run([sys.executable, "-m", "fric_nodes.tools.cli", "play", str(path),
                        "--wait", "1"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert time.monotonic() - t0 < 30.0
    assert r.returncode == 1
    line = _one_line(r)
    assert line.startswith("fric play: no subscriber on /joint_trajectory_controller/"
                           "joint_trajectory within 1 s (ROS_DOMAIN_ID="
                           f"{os.environ['ROS_DOMAIN_ID']}, "), line


@pytest.mark.parametrize("edit, args, message", [
    (lambda d: d["points"][2]["positions"].pop(), (),
     "points[2].positions: expected 7 numbers (one per joint), got 6"),
    (lambda d: d["points"][3].update(time_from_start={"sec": 0, "nanosec": 0}), (),
     "points[3].time_from_start: must increase from point to point"),
    (lambda d: d.update(joint_names=["a", "a"]), (), "joint_names: named twice: a"),
    (lambda d: None, ("--rate", "5"), "--rate: only for a CSV; a YAML trajectory is sent as "
                                      "written"),
])
def test_play_bad_yaml_names_the_field(tmp_path, edit, args, message):
    import yaml

    doc = {"joint_names": ["j1", "j2", "j3", "j4", "j5", "j6", "j7"],
           "points": [{"positions": [0.0] * 7, "time_from_start": {"sec": k, "nanosec": 0}}
                      for k in range(5)]}
    edit(doc)
    path = tmp_path / "t.yaml"
    path.write_text(yaml.safe_dump(doc))
    r = subprocess.run([sys.executable, "-m", "fric_nodes.tools.cli", "play", str(path), *args],
                       cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    line = _one_line(r)
    assert line.startswith("fric play: error: ") and line.endswith(message), line
