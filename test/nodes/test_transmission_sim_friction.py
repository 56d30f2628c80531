"""transmission_sim with a joint_friction.yaml (issue 15, item 4): a real node process over
loopback DDS loads config/planar_2link_true_friction.yaml; commands below breakaway leave the
arm exactly where it is, above breakaway the joint moves; bad files stop the node with one line.

The planar 2-link arm moves in the horizontal plane (gravity along −z: no gravity torque), so at
rest a joint's load is 0 and its breakaway torques are the Coulomb pair itself: it stays at rest
exactly while the command lies in [−Cn, Cp] (joint1: [−1.2, 1.5] N m, joint2: [−1.0, 0.8] N m).
"""

import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import yaml

from ros_support import ArmPeer, terminate_output

ROOT = Path(__file__).resolve().parents[2]
TRUE = ROOT / "config" / "planar_2link_true_friction.yaml"
SIM = [sys.executable, "-m", "fric_nodes.transmission_sim", "--ros-args",
       "-p", "rotor_inertia:=[0.5, 0.2]", "-p", "damping:=[0.0]"]


def _Peer():
    return ArmPeer("transmission_friction_peer")


def test_sub_breakaway_command_holds_exactly_above_breakaway_moves_over_dds(ros):
    true = yaml.safe_load(TRUE.read_text())["joints"]
    c1, c2 = true["joint1"], true["joint2"]
    proc = subprocess.Popen(SIM + ["-p", f"joint_friction:={TRUE}", "-p", "command_timeout:=0.5"],
                            cwd=ROOT, env=dict(os.environ), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    peer = _Peer()
    try:
        end = time.monotonic() + 20.0
        while not peer.q and time.monotonic() < end and proc.poll() is None:
            peer.run(0.1)
        assert peer.q, "no joint_states from the node"
        # 90 % of the breakaway torque, joint1 forwards, joint2 backwards: held exactly
        held = [0.9 * c1["Cp"], -0.9 * c2["Cn"]]
        n0 = len(peer.q)
        peer.run(1.0, held)
        q = np.array(peer.q[n0:])
        assert len(q) > 100 and q.tolist() == [[0.0, 0.0]] * len(q)
        assert held in peer.effort[n0:]  # effort = the applied motor torque
        # joint2 0.4 N m past its breakaway Cp: it moves forwards; joint1 (still at 90 %, its
        # load from joint2's acceleration ~0.5 N m keeps it inside its widened interval) stays
        n1 = len(peer.q)
        peer.run(1.0, [held[0], c2["Cp"] + 0.4])
        q = np.array(peer.q[n1:])
        assert proc.poll() is None
        assert q[-1, 1] > 1e-2 and np.all(np.diff(q[:, 1]) >= 0.0), q[-1]
        assert np.all(q[:, 0] == 0.0)
    finally:
        peer.close()
        out = terminate_output(proc)
    assert "Traceback" not in out, out[-3000:]
    assert "joint friction from" in out and "Cp 1.5 Cn 1.2" in out, out[-3000:]


@pytest.mark.parametrize("text, field", [
    ("joints: {joint1: {Cp: 1, Cn: -1.5, bp: 0, bn: 0}, joint2: {Cp: 1, Cn: 1, bp: 0, bn: 0}}",
     "joints.joint1: Cp + Cn = -0.5 < 0"),
    ("joints: {joint1: {Cp: 1, Cn: 1, bp: 0, bn: 0}}", "no friction for joint(s) ['joint2']"),
    ("joints: {joint1: {Cp: 1, Cn: 1, bp: 0}, joint2: {Cp: 1, Cn: 1, bp: 0, bn: 0}}",
     "joints.joint1: missing bn"),
    ("model: gear\njoints: {joint1: {Cp: 1, Cn: 1, bp: 0, bn: 0, eta_f: 1.4, eta_b: 0.5}, "
     "joint2: {Cp: 1, Cn: 1, bp: 0, bn: 0}}", "joints.joint1.eta_f: 1.4 is outside"),
    ("joints: [1, 2", "not valid YAML"),
    (None, "cannot read"),
])
def test_bad_joint_friction_file_one_line_exit_1(tmp_path, text, field):
    path = tmp_path / "joint_friction.yaml"
    if text is not None:
        path.write_text(text)
    r = subprocess.run(SIM + ["-p", f"joint_friction:={path}"], capture_output=True, text=True,
                       timeout=30)
    assert r.returncode == 1, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("transmission_sim: bad parameters: joint_friction: ")
    assert field in lines[0] and "Traceback" not in r.stderr


def test_undetermined_efficiencies_warn_and_run_the_asymmetric_part(tmp_path):
    path = tmp_path / "joint_friction.yaml"
    path.write_text("model: gear\ndynamics: identify\njoints:\n"
                    "  joint1: {Cp: 1.5, Cn: 1.2, bp: 0.8, bn: 1.0, eta_f: null, eta_b: null, "
                    "eta_product: 0.45}\n"
                    "  joint2: {Cp: 0.8, Cn: 1.0, bp: 0.5, bn: 0.4, eta_f: 0.7, eta_b: 0.5}\n")
    r = subprocess.run(SIM + ["-p", f"joint_friction:={path}", "-p", "sync:=as_fast_as_possible",
                              "-p", "duration:=0.1"], capture_output=True, text=True, timeout=30)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    assert "WARN" in out and "efficiencies of ['joint1'] are undetermined" in out, out
    assert "stopped after 100 steps" in out
