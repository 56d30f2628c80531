"""A launch argument the node would refuse at start-up is refused by ``fric launch`` before any
node starts (issue 22, item 7): ``duration:=5`` for a double parameter is one line naming the
argument, the parameter and ``write 5.0`` (not taken as 5.0: ``ros2 launch`` would pass the
integer and the node would stop), with ``--print`` and for a real run alike."""

import subprocess
import sys
from pathlib import Path

import pytest
from rcl_interfaces.msg import ParameterType as T

from fric_nodes.tools.launch_runner import LaunchError, parse_launch
from fric_nodes.tools.param_schemas import param_spec, yaml_parameter

ROOT = Path(__file__).resolve().parents[2]
FRIC = [sys.executable, "-m", "fric_nodes.tools.cli", "launch"]


def _fric_launch(*args, cwd):
    return subprocess.run(FRIC + list(args), cwd=cwd, capture_output=True, text=True,
                          timeout=120)


def test_print_refuses_an_integer_for_a_double_naming_argument_and_parameter(tmp_path):
    r = _fric_launch("haptic_render.launch.xml", "duration:=5", "--print", cwd=tmp_path)
    assert r.returncode == 2 and r.stdout == "", r.stdout + r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith(f"fric launch: error: {ROOT / 'launch/haptic_render.launch.xml'}:")
    assert lines[0].endswith("launch argument duration:=5 sets haptic_stage's parameter "
                             "duration: expected a double (write 5.0), got an integer (5)"), lines
    r = _fric_launch("haptic_render.launch.xml", "duration:=5.0", "--print", cwd=tmp_path)
    assert r.returncode == 0 and "-p duration:=5.0" in r.stdout, r.stderr


def test_real_run_starts_nothing_for_a_bad_argument_and_runs_with_the_fix(tmp_path):
    base = ("arm_transmission.launch.xml", "sync:=as_fast_as_possible", "render:=false")
    r = _fric_launch(*base, "duration:=1", cwd=tmp_path)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "started" not in r.stderr and r.stdout == "", r.stderr
    assert r.stderr.strip().endswith("launch argument duration:=1 sets transmission_sim's "
                                     "parameter duration: expected a double (write 1.0), got "
                                     "an integer (1)"), r.stderr
    r = _fric_launch(*base, "duration:=0.5", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "stopped after 500 steps" in r.stdout + r.stderr


def test_range_and_per_joint_parameters_are_checked_too(tmp_path):
    with pytest.raises(LaunchError, match=r"launch argument F:=-1\.0 sets friction_renderer's "
                                          r"parameter stage_joint\.F: -1\.0 is below the "
                                          r"minimum 0$"):
        parse_launch("haptic_render.launch.xml", {"F": "-1.0"})
    launch = tmp_path / "x.launch.xml"
    launch.write_text('<launch>\n  <node pkg="fric" exec="friction_renderer">\n'
                      '    <param name="dt" value="1"/>\n  </node>\n</launch>\n')
    with pytest.raises(LaunchError, match=rf"^{launch}:3: <param name='dt'>: friction_renderer's "
                                          r"parameter dt: expected a double \(write 1\.0\), got "
                                          r"an integer \(1\)$"):
        parse_launch(launch)


@pytest.mark.parametrize("name", sorted(p.name for p in (ROOT / "launch").glob("*.xml")))
def test_shipped_launch_files_pass_with_their_defaults(name):
    assert len(parse_launch(name, {})) >= 1


def test_schemas_and_rcl_typing():
    assert param_spec("haptic_loop", "stage_joint.F").name == "stage_joint.F"
    assert isinstance(param_spec("haptic_loop", "duration").default, float)  # the stage's
    assert param_spec("rviz2", "dt") is None and param_spec("haptic_stage", "nope") is None
    assert yaml_parameter("5") == (5, T.PARAMETER_INTEGER)
    assert yaml_parameter("5.0") == (5.0, T.PARAMETER_DOUBLE)
    assert yaml_parameter("'5'") == ("5", T.PARAMETER_STRING)
    assert yaml_parameter("true") == (True, T.PARAMETER_BOOL)
    assert yaml_parameter("[1.0, 2.0]") == ([1.0, 2.0], T.PARAMETER_DOUBLE_ARRAY)
    assert yaml_parameter("[]") is None and yaml_parameter("[1, 2.0]") is None
