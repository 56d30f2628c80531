"""The user's paths to a URDF (issue 22, item 5): the transmission_sim, mujoco_sim,
trajectory_tracker and friction_compensator nodes' ``urdf`` parameter and ``fric excite
--urdf`` stop with one stderr line naming the file, the line and the joint for a URDF without
``<limit>``, a malformed one and a missing one; nothing of urdfdom's C++ output ("at line 243
in model.cpp") is shown."""

import subprocess
import sys
from pathlib import Path

import pytest

from fric_core.transmission.urdf_dynamics import bundled_urdf

ROOT = Path(__file__).resolve().parents[2]
FRICTION = ROOT / "config" / "planar_2link_true_friction.yaml"
LIMIT = '<limit lower="-3.1416" upper="3.1416" effort="1000" velocity="10"/>'
NODES = {
    "transmission_sim": [],
    "mujoco_sim": [],
    "trajectory_tracker": ["-p", "joints:=[joint1, joint2]", "-p", "kp:=[1.0]", "-p",
                           "kd:=[1.0]", "-p", "feed_forward:=gravity"],
    "friction_compensator": ["-p", "gravity:=urdf", "-p", f"joint_friction:={FRICTION}"],
}


@pytest.fixture(scope="module")
def urdfs(tmp_path_factory):
    d = tmp_path_factory.mktemp("urdf")
    good = bundled_urdf("planar_2link").read_text()
    (d / "nolimit.urdf").write_text(good.replace(LIMIT, "", 1))
    (d / "bad.urdf").write_text(good.replace("</joint>", "", 1))
    return d


def _one_line(stderr: str) -> str:
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, stderr
    assert ".cpp" not in stderr and "Traceback" not in stderr and "Error:" not in stderr
    return lines[0]


@pytest.mark.parametrize("node", sorted(NODES))
@pytest.mark.parametrize("name, what", [
    ("nolimit.urdf", ":9: joint 'joint1' (revolute) has no <limit>"),
    ("bad.urdf", ":32: not well-formed XML: mismatched tag"),  # found at </robot>
    ("absent.urdf", None),
])
def test_node_urdf_parameter_one_line(urdfs, node, name, what):
    path = urdfs / name
    r = subprocess.run([sys.executable, "-m", f"fric_nodes.{node}", "--ros-args",
                        "-p", f"urdf:={path}", *NODES[node]], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 1, r.stderr
    line = _one_line(r.stderr)
    want = f"no such file: '{path}'" if what is None else f"{path}{what}"
    assert line.startswith(f"{node}: bad parameters: urdf: {want}"), line


def test_fric_excite_urdf_without_limit_one_line(urdfs, tmp_path):
    path = urdfs / "nolimit.urdf"
    r = subprocess.run([sys.executable, "-m", "fric_nodes.tools.cli", "excite", "--urdf",
                        str(path), "--out", str(tmp_path / "out")], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 2, r.stderr
    line = _one_line(r.stderr)
    assert f"{path}:9: joint 'joint1' (revolute) has no <limit>" in line, line
    assert not (tmp_path / "out").exists()
