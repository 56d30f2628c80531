"""A user's own arm through launch/arm_friction.launch.xml (issue 24 item 1, "Done means"): a
URDF the project does not ship (test/own_arm_urdf.py: 7 revolute joints, joint 4's range
excluding 0, a gripper of two prismatic fingers, one a ``<mimic>``), given as ``urdf:=`` alone
with its true friction: ``transmission_sim`` → ``trajectory_tracker`` → ``friction_compensator``
run with parameters the nodes derive from the URDF (fric_core/arm_setup.py), and ``fric
arm-params`` writes the same parameters to a file."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

from cli_support import one_error_line, run_fric
from fric_core.arm_setup import arm_setup
from fric_nodes.tools import pipeline

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from own_arm_urdf import ARM_NAMES, OWN_FRICTION, write_own_arm_urdf, write_own_friction  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def own(tmp_path_factory):
    d = tmp_path_factory.mktemp("own_arm")
    return write_own_arm_urdf(d / "own_arm.urdf"), write_own_friction(d / "own_friction.yaml")


@pytest.fixture(scope="module")
def env():
    mine = int(os.environ.get("ROS_DOMAIN_ID", "0"))
    return pipeline.loopback_env(pipeline.free_domain_id(exclude={mine}))


def test_the_chain_runs_a_urdf_the_project_does_not_ship(own, env, tmp_path):
    urdf, friction = own
    result = tmp_path / "tracking.npz"
    log = tmp_path / "launch.log"
    cmd = pipeline.launch_command({"urdf": urdf, "true_friction": friction, "compensate": "true",
                                   "result_file": result}, "arm_friction.launch.xml")
    with open(log, "w") as f:
        rc = subprocess.run(cmd, env=env, cwd=ROOT, stdout=f, stderr=subprocess.STDOUT,
                            timeout=120).returncode
    text = log.read_text()
    assert rc == 0, text[-3000:]
    for node in ("transmission_sim", "trajectory_tracker", "friction_compensator"):
        assert f"[{node}]: arm_setup: from {urdf}" in text, node
    assert "left out own_finger2: a <mimic> of own_finger1" in text
    assert "left out own_finger1: its range [0, 0.04] m is not wider than twice the margin" in text
    r = np.load(result)
    assert tuple(r["joints"]) == ARM_NAMES               # the fingers are not driven
    q0 = r["q"][0]
    assert q0[3] == pytest.approx(-1.57, abs=1e-3)       # joint 4 starts mid-range, not at 0
    # Tracking with the compensator: a PD alone stays behind a Coulomb level C by C / kp when
    # the joint moves slowly (joint 1: 2.0 N m / 36.8 N m/rad = 0.054 rad, measured 0.059 RMS
    # with compensate:=false); with the true friction compensated, less than half of that on
    # every joint (measured 0.014 on joint 1), or within what the chain tracks without any
    # friction (measured <= 2.7 mrad RMS per joint with a frictionless arm): a stiff joint's
    # C / kp is below that floor
    s = arm_setup(str(urdf))
    lag = np.array([max(OWN_FRICTION[j][:2]) for j in ARM_NAMES]) / s.kp
    assert np.all(r["rms"] < np.maximum(0.5 * lag, 3e-3)), (r["rms"], lag)
    assert int(np.sum(r["clipped"])) == 0


def test_joints_argument_reaches_every_node_of_the_chain(own):
    urdf, _ = own
    r = run_fric("launch", "arm_friction.launch.xml", f"urdf:={urdf}",
                 "joints:=own_joint2,own_joint4", "compensate:=true", "--print")
    assert r.returncode == 0, r.stderr
    cmds = [ln for ln in r.stdout.splitlines() if not ln.startswith("#")]
    chain = [c for c in cmds if "fric_recorder" not in c]
    assert len(chain) == 3
    for c in chain:
        assert "arm_setup:='\"'\"'own_joint2,own_joint4'\"'\"'" in c, c
        assert "arm_friction_urdf.yaml" in c
    # the bundled arms: no arm_setup, their own parameter files
    r = run_fric("launch", "arm_friction.launch.xml", "arm:=arm7", "--print")
    assert "arm_friction_arm7.yaml" in r.stdout and "arm_setup:='\"'\"''\"'\"''" in r.stdout


def test_fric_arm_params_writes_what_the_nodes_derive(own, tmp_path):
    urdf, _ = own
    out = tmp_path / "my_arm.yaml"
    r = run_fric("arm-params", "--urdf", urdf, "--out", out)
    assert r.returncode == 0, r.stderr
    assert f"params:={out.resolve()}" in r.stdout
    doc = yaml.safe_load(out.read_text())
    tr = doc["trajectory_tracker"]["ros__parameters"]
    s = arm_setup(str(urdf))
    assert tr["joints"] == list(ARM_NAMES)
    assert tr["kp"] == pytest.approx(s.kp, rel=1e-6)
    assert doc["transmission_sim"]["ros__parameters"]["initial_positions"] == pytest.approx(
        s.initial_positions, abs=1e-6)
    line = one_error_line(run_fric("arm-params", "--urdf", urdf, "--joints", "own_finger2"))
    assert "joints: own_finger2 (a <mimic> of own_finger1" in line
    line = one_error_line(run_fric("arm-params", "--urdf", tmp_path / "none.urdf"))
    assert "urdf: no such file" in line
