"""What a new user trips over (issue 13 items 6, 13, 14), tried the way it was found: real node
processes over loopback DDS and the ``fric`` command as a subprocess.

* item 13: the README's ``ros2 service call`` / ``ros2 param set`` / ``ros2 run`` next steps have
  a working ``fric`` form in a pip install without ``ros2``: ``fric call``, ``fric param``,
  ``fric run``; bounded waits and one clear line when the node is not there.
* item 6: a parameter rejection says what is wrong in words, live (through the node's
  rcl_interfaces set_parameters service) and at start-up (a YAML value of the wrong type), never
  rclpy's ``expected '3' got '4'`` or ``undeclared parameter(s): []``.
* item 14: a parameter file with a YAML error, ``--out`` pointing at a file, a relative
  ``params:=config/...``: one clear line, no traceback.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cli_support import one_error_line as _one_line, run_fric as _fric  # test/ (conftest.py)

ROOT = Path(__file__).resolve().parents[2]
PY = sys.executable


@pytest.fixture(scope="module")
def nodes(tmp_path_factory):
    """A friction_renderer and a friction_identifier process (no stage)."""
    logs = tmp_path_factory.mktemp("nodes")
    procs = []
    for exe in ("friction_renderer", "friction_identifier"):
        log = open(logs / f"{exe}.log", "w")
        procs.append((subprocess.Popen([PY, "-m", f"fric_nodes.{exe}"], cwd=ROOT, stdout=log,
                                       stderr=subprocess.STDOUT), log))
    try:
        end = time.monotonic() + 60.0
        while time.monotonic() < end:  # both up: the renderer answers a parameter query
            r = _fric("param", "get", "/friction_renderer", "max_effort", "--wait", "2")
            if r.returncode == 0:
                break
        else:
            pytest.fail("the renderer never answered:\n" + (logs / "friction_renderer.log")
                        .read_text())
        yield logs
    finally:
        for p, log in procs:
            p.send_signal(2)
        for p, log in procs:
            try:
                p.wait(20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
            log.close()


@pytest.mark.parametrize("name, value, reason", [
    ("stage_joint.F", "abc", "stage_joint.F: expected a double, got a string ('abc')"),
    ("stage_joint.F", "4", "stage_joint.F: expected a double (write 4.0), got an integer (4)"),
    ("stage_joint.F", "[]", "stage_joint.F: expected a double, got an empty list"),
    ("stage_joint.law", "[1.0, 2.0]",
     "stage_joint.law: expected a string, got a list of doubles ([1.0, 2.0])"),
    ("max_effort", "-1.0", "max_effort: -1.0 is below the minimum"),
    ("dt", "0.002", "dt: read-only: it is set at start-up"),
    ("stage_joint.Fx", "1.0", "stage_joint.Fx (did you mean stage_joint.F"),
])
def test_param_set_rejection_says_what_is_wrong(nodes, name, value, reason):
    r = _fric("param", "set", "/friction_renderer", name, value)
    assert r.returncode == 1
    line = _one_line(r)
    assert line.startswith(f"fric param set: /friction_renderer refused {name} = {value}: ")
    said = line.split(f"= {value}: ", 1)[1]  # the node's reason
    assert reason in said, line
    assert "expected '" not in said and "[]" not in said, line


def test_set_parameters_service_answers_in_words(nodes):
    """The rcl_interfaces services directly (what ros2 param set and rqt use): several unknown
    names at once are named (rclpy said "undeclared parameter(s): []"), and the identifier (its
    own on-set callback behind the shared descriptor check) words a type error the same way."""
    import rclpy
    from rcl_interfaces.srv import SetParameters, SetParametersAtomically
    from rclpy.context import Context
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.parameter import Parameter

    ctx = Context()
    rclpy.init(context=ctx)
    node = rclpy.create_node("param_words_test", context=ctx)
    ex = SingleThreadedExecutor(context=ctx)
    ex.add_node(node)
    try:
        def call(srv, name, req):
            cli = node.create_client(srv, name)
            assert cli.wait_for_service(timeout_sec=20.0), name
            fut = cli.call_async(req)
            end = time.monotonic() + 20.0
            while not fut.done() and time.monotonic() < end:
                ex.spin_once(timeout_sec=0.05)
            assert fut.done(), f"{name}: no answer"
            return fut.result()

        r = call(SetParametersAtomically, "/friction_renderer/set_parameters_atomically",
                 SetParametersAtomically.Request(parameters=[
                     Parameter("nope", value=1.0).to_parameter_msg(),
                     Parameter("nada", value=2.0).to_parameter_msg()]))
        assert not r.result.successful
        assert r.result.reason.startswith("nope, nada: no such parameter on /friction_renderer")
        r = call(SetParameters, "/friction_identifier/set_parameters", SetParameters.Request(
            parameters=[Parameter("amplitude", value="big").to_parameter_msg()]))
        assert r.results[0].reason == ("amplitude: expected a double, got a string ('big')"), \
            r.results[0].reason
    finally:
        ex.shutdown()
        node.destroy_node()
        rclpy.shutdown(context=ctx)


def test_param_set_get_list_live(nodes):
    r = _fric("param", "set", "/friction_renderer", "stage_joint.F", "2.5")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "/friction_renderer: stage_joint.F = 2.5"
    r = _fric("param", "get", "friction_renderer", "stage_joint.F", "joints")
    assert r.returncode == 0 and r.stdout.splitlines() == ["stage_joint.F: 2.5",
                                                           "joints: [stage_joint]"], r.stdout
    r = _fric("param", "list", "/friction_renderer")
    assert r.returncode == 0, r.stderr
    lines = {ln.split(":", 1)[0]: ln for ln in r.stdout.splitlines()}
    assert "(read-only)" in lines["dt"] and "(read-only)" not in lines["stage_joint.F"]
    assert lines["cpu_affinity"].startswith("cpu_affinity: (not set)")
    r = _fric("param", "get", "/friction_renderer", "nope")
    assert r.returncode == 1
    assert "nope: no such parameter on /friction_renderer" in _one_line(r)


def test_call_identify_answers(nodes):
    """fric call on the identifier's std_srvs/Trigger service: its answer printed (with no
    stage running it refuses, after its stage_timeout), exit 1 for a refusal."""
    t0 = time.monotonic()
    r = _fric("call", "friction_identifier/identify")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "Traceback" not in r.stdout + r.stderr
    assert "success: false" in r.stdout
    assert "message: refused: no valid joint_states" in r.stdout, r.stdout
    assert time.monotonic() - t0 < 40.0


def test_not_there_is_one_line_within_the_wait():
    dom = os.environ["ROS_DOMAIN_ID"]
    for args, what in ((("param", "get", "/no_such_node", "x"), "node /no_such_node not found"),
                       (("call", "/no_such/identify"), "service /no_such/identify not found")):
        t0 = time.monotonic()
        r = _fric(*args, "--wait", "1")
        took = time.monotonic() - t0
        assert r.returncode == 1
        line = _one_line(r)
        assert what in line and f"ROS_DOMAIN_ID={dom}" in line, line
        assert took < 20.0  # 1 s wait + interpreter and rclpy start-up on a loaded machine


def test_fric_run(tmp_path):
    r = _fric("run", "no_such_exe")
    assert r.returncode == 1 and "executable 'no_such_exe' not found" in _one_line(r)
    # fric run passes the arguments on: here a parameter file with a YAML error (item 14)
    bad = tmp_path / "bad.yaml"
    bad.write_text("friction_renderer:\n  ros__parameters:\n    F: [1.0, 2\n    K: 3.0\n")
    r = _fric("run", "friction_renderer", "--ros-args", "--params-file", bad)
    assert r.returncode == 1
    line = _one_line(r)
    assert line.startswith(f"friction_renderer: {bad}:4:6: YAML syntax error"), line


# -- start-up: parameter files ------------------------------------------------------------------
@pytest.mark.parametrize("exe", ["friction_renderer", "recorder", "haptic_stage"])
def test_params_file_with_a_yaml_error_is_one_line(tmp_path, exe):
    bad = tmp_path / "bad.yaml"
    bad.write_text("/**:\n  ros__parameters:\n    duration: 1.0\n   max_effort: 2.0\n")
    r = subprocess.run([PY, "-m", f"fric_nodes.{exe}", "--ros-args", "--params-file", str(bad)],
                       cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert r.returncode == 1
    line = _one_line(r)
    assert f"{bad}:4:4: YAML syntax error" in line, line


def test_params_file_list_rcl_refuses_is_one_line(tmp_path):
    """PyYAML reads [1.0, 2] but rcl does not (one type per list): named with its line."""
    bad = tmp_path / "mixed.yaml"
    bad.write_text("/**:\n  ros__parameters:\n    cpu_affinity: [1, 2.0]\n")
    r = subprocess.run([PY, "-m", "fric_nodes.friction_renderer", "--ros-args",
                        "--params-file", str(bad)], cwd=ROOT, capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 1
    line = _one_line(r)
    assert f"{bad}:3:23: a parameter list holds one type: this entry is a double, the first " \
        "is an integer (write every entry of a list of doubles with a decimal point" in line, line


def test_params_file_value_of_the_wrong_type_is_one_line_in_words(tmp_path):
    """An integer where a double is declared (item 6): what to write."""
    f = tmp_path / "int.yaml"
    f.write_text("/**:\n  ros__parameters:\n    max_effort: 4\n")
    r = subprocess.run([PY, "-m", "fric_nodes.friction_renderer", "--ros-args",
                        "--params-file", str(f)], cwd=ROOT, capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 1
    assert _one_line(r) == ("friction_renderer: bad parameters: max_effort: expected a double "
                            "(write 4.0), got an integer (4)")


def test_launch_params_with_a_yaml_error_is_one_line(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("friction_renderer:\n  ros__parameters:\n    law: coulomb\n    F: [1.0, 2\n")
    r = _fric("launch", "haptic_render.launch.xml", f"params:={bad}")
    assert r.returncode == 2
    line = _one_line(r)
    assert line.startswith("fric launch: error: ") and f"{bad}:5:1: YAML syntax error" in line, \
        line
    assert "started" not in r.stdout + r.stderr  # nothing ran


def test_launch_relative_params_hint_is_the_right_path():
    r = _fric("launch", "haptic_render.launch.xml", "params:=config/haptic_render.yaml",
              "--print")
    assert r.returncode == 2
    line = _one_line(r)
    assert "$(find-pkg-share fric)/config/haptic_render.yaml" in line, line
    assert "config/config" not in line
    assert str(ROOT / "config" / "haptic_render.yaml") in line  # it exists from here


# -- --out / out_dir pointing at a file --------------------------------------------------------
def test_identify_out_is_a_file(tmp_path):
    f = tmp_path / "taken"
    f.write_text("x")
    csv = tmp_path / "r.csv"
    csv.write_text("t,x,v,force\n0,0,0,0\n")
    r = _fric("identify", csv, "--out", f)
    assert r.returncode == 2
    assert _one_line(r) == (f"fric identify: error: --out {f}: is an existing file, not a "
                            f"directory (give a directory; it is created if missing)")
    r = _fric("identify", csv, "--out", f / "sub")
    assert r.returncode == 2 and f"{f} is an existing file" in _one_line(r)


def test_demo_out_is_a_file(tmp_path):
    f = tmp_path / "taken"
    f.write_text("x")
    r = subprocess.run([PY, "examples/haptic_demo.py", "--out", str(f)], cwd=ROOT,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    assert "Traceback" not in r.stdout + r.stderr
    assert r.stderr.splitlines()[-1] == (f"haptic_demo.py: error: --out {f}: is an existing "
                                         f"file, not a directory (give a directory; it is "
                                         f"created if missing)")


def test_launch_out_dir_is_a_file(tmp_path):
    """The launch's out_dir (the recorder's): refused by the recorder at start-up, by name, and
    the launch ends (was a raw [Errno 17] traceback from the recorder after the whole run)."""
    f = tmp_path / "taken"
    f.write_text("x")
    r = _fric("launch", "--sigterm-timeout", "20", "haptic_render.launch.xml", f"out_dir:={f}",
              "sync:=lockstep", timeout=120)
    assert r.returncode == 1
    rec = [ln for ln in (r.stdout + r.stderr).splitlines() if ln.startswith("[fric_recorder-1]")]
    assert rec == [f"[fric_recorder-1] fric_recorder: bad parameters: out_dir {f}: is an "
                   f"existing file, not a directory (give a directory; it is created if "
                   f"missing)"], rec


def test_lifecycle_get_list_set_on_the_renderer(nodes):
    """`fric lifecycle` (ros2 lifecycle for PyPI installs) drives the renderer's standard
    lifecycle services: active → inactive → active, a transition that does not exist from the
    current state refused in one line naming the available ones, and an unmanaged node named."""
    r = _fric("lifecycle", "nodes")
    assert r.returncode == 0 and "/friction_renderer" in r.stdout.split(), r.stdout + r.stderr
    assert "/friction_identifier" not in r.stdout.split()
    r = _fric("lifecycle", "get", "friction_renderer")
    assert r.returncode == 0 and r.stdout.strip() == "active [3]", r.stdout + r.stderr
    r = _fric("lifecycle", "list", "/friction_renderer")
    assert r.returncode == 0 and "- deactivate [4]: active -> deactivating" in r.stdout, r.stdout
    try:
        r = _fric("lifecycle", "set", "/friction_renderer", "deactivate")
        assert r.returncode == 0, r.stdout + r.stderr
        assert r.stdout.strip() == "/friction_renderer: deactivate: now inactive [2]"
        r = _fric("lifecycle", "set", "/friction_renderer", "deactivate")
        assert r.returncode == 1
        line = _one_line(r)
        assert "is inactive [2]: no transition 'deactivate'" in line and "activate" in line, line
    finally:
        r = _fric("lifecycle", "set", "/friction_renderer", "activate")
    assert r.returncode == 0 and r.stdout.strip().endswith("now active [3]"), r.stdout + r.stderr
    r = _fric("lifecycle", "get", "/friction_identifier", "--wait", "10")
    assert r.returncode == 1
    assert "is running but is not a managed (lifecycle) node" in _one_line(r)
