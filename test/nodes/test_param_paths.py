"""Paths in a parameter file are relative to that file (issue 22, item 6): the shipped
config/friction_compensator.yaml works from any directory; a value from the command line stays
relative to the current directory; a missing file names the parameter and the path tried."""

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from fric_nodes.param_paths import resolve_path_param, value_origin
from ros_support import terminate_output

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "config" / "friction_compensator.yaml"
TRUE = ROOT / "config" / "planar_2link_true_friction.yaml"


def _params(path: Path, **params) -> Path:
    body = "".join(f"    {k}: {v}\n" for k, v in params.items())
    path.write_text(f"friction_compensator:\n  ros__parameters:\n{body}")
    return path


def test_shipped_compensator_params_work_from_another_directory(tmp_path):
    proc = subprocess.Popen([sys.executable, "-m", "fric_nodes.friction_compensator",
                             "--ros-args", "--params-file", str(CONFIG)], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = []
    try:
        end = time.monotonic() + 30.0
        while time.monotonic() < end and proc.poll() is None:
            line = proc.stdout.readline()
            lines.append(line)
            if "lifecycle: active" in line:
                break
    finally:
        out = "".join(lines) + terminate_output(proc)
    assert f"compensating ['joint1', 'joint2'] from {TRUE} " in out, out
    assert "lifecycle: active" in out and "bad parameters" not in out, out


def test_missing_relative_file_names_the_parameter_and_the_path_tried(tmp_path):
    params = tmp_path / "params"
    params.mkdir()
    shutil.copy(CONFIG, params / "comp.yaml")  # without the friction file next to it
    (tmp_path / "planar_2link_true_friction.yaml").write_text(TRUE.read_text())
    r = subprocess.run([sys.executable, "-m", "fric_nodes.friction_compensator", "--ros-args",
                        "--params-file", str(params / "comp.yaml")], cwd=tmp_path,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 1, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    tried = params / "planar_2link_true_friction.yaml"
    assert lines == [
        f"friction_compensator: bad parameters: joint_friction: {tried} does not exist "
        f"('planar_2link_true_friction.yaml' in the parameter file {params / 'comp.yaml'} is "
        f"relative to that file's directory); {tmp_path / 'planar_2link_true_friction.yaml'} "
        "exists: give its absolute path, or a path relative to the parameter file"], r.stderr


def test_command_line_value_stays_relative_to_the_current_directory(ros, tmp_path,
                                                                     monkeypatch):
    from fric_nodes.friction_compensator import FrictionCompensatorNode

    (tmp_path / "sub").mkdir()
    shutil.copy(TRUE, tmp_path / "sub" / "jf.yaml")
    params = _params(tmp_path / "sub" / "p.yaml", joints="[joint1, joint2]",
                     joint_friction="jf.yaml")
    monkeypatch.chdir(tmp_path)
    # from the file: relative to the file
    node = FrictionCompensatorNode(cli_args=["--ros-args", "--params-file", str(params)])
    try:
        assert node._values["joint_friction"] == str(tmp_path / "sub" / "jf.yaml")
    finally:
        node.destroy_node()
    # a later -p of the same text: relative to the current directory (tmp_path/jf.yaml: none)
    with pytest.raises(ValueError, match=r"^joint_friction: jf\.yaml: "):
        FrictionCompensatorNode(cli_args=["--ros-args", "--params-file", str(params),
                                          "-p", "joint_friction:=jf.yaml"])
    node = FrictionCompensatorNode(cli_args=["--ros-args", "--params-file", str(params),
                                             "-p", "joint_friction:=sub/jf.yaml"])
    try:
        assert node._values["joint_friction"] == "sub/jf.yaml"
    finally:
        node.destroy_node()


def test_value_origin_follows_rcl_order_and_skips_launch_temp_files(tmp_path):
    a = _params(tmp_path / "a.yaml", joint_friction="x.yaml", urdf="planar_2link")
    b = _params(tmp_path / "b.yaml", joint_friction="y.yaml")
    args = ["--ros-args", "--params-file", str(a), "--params-file", str(b)]
    assert value_origin("joint_friction", "x.yaml", [args]) == a
    assert value_origin("joint_friction", "y.yaml", [args]) == b
    assert value_origin("joint_friction", "x.yaml", [args], overridden=True) is None
    assert value_origin("joint_friction", "x.yaml", [args + ["-p", "joint_friction:=x.yaml"]]) \
        is None
    # outside --ros-args: not a ROS argument
    assert value_origin("joint_friction", "x.yaml", [["--params-file", str(a)]]) is None
    # node-local args come after the process's
    process = ["--ros-args", "-p", "joint_friction:=x.yaml"]
    assert value_origin("joint_friction", "x.yaml", [process, args]) == a
    # a bundled name and an absolute path are never touched
    assert resolve_path_param("urdf", "planar_2link", [args]) == "planar_2link"
    assert resolve_path_param("urdf", "/abs/arm.urdf", [args]) == "/abs/arm.urdf"
    # ros2 launch writes inline <param name value> to a temporary launch_params_* file: those
    # values were typed on a command line (the current directory applies)
    with tempfile.NamedTemporaryFile("w", prefix="launch_params_", suffix="",
                                     delete=False) as h:
        h.write("/**:\n  ros__parameters:\n    joint_friction: x.yaml\n")
    try:
        assert value_origin("joint_friction", "x.yaml",
                            [["--ros-args", "--params-file", h.name]]) is None
    finally:
        os.unlink(h.name)
