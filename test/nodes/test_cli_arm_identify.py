"""`fric identify RECORDING --urdf URDF --out DIR` and `fric excite` (issue 15).

Identify end to end as a subprocess on a simulated MCAP bag and a CSV of the planar 2-link arm with
known friction — joint_friction.yaml (valid, the friction recovered), the compensator's and the
simulator's parameter files (ROS accepts them, they name the friction file by its absolute path),
the report (held-out RMS at the residual level) — and every bad input as one line naming the
problem, exit status 2, no traceback. Excite: the files, the trajectory within the limits."""

import os
import re
import subprocess
import sys

import numpy as np
import pytest
import yaml

from fric_core.arm_identification.joint_friction import JointFriction, read_joint_friction
from fric_core.arm_identification.recording import ArmRecording, write_arm_bag, write_arm_csv
from fric_core.arm_identification.report import ARM_REPORT_FILES
from fric_core.arm_identification.synthetic import multisine_trajectory, simulate_arm_recording
from fric_core.transmission.urdf_dynamics import UrdfDynamics
from fric_nodes.tools.arm_identify import HOLDOUT_FRACTION, _holdout_split
from fric_nodes.tools.cli import main
from fric_nodes.tools.user_errors import params_file_problem

TRUE = {"joint1": JointFriction(0.5, 0.4, 0.2, 0.3, eta_f=0.8, eta_b=0.7),
        "joint2": JointFriction(0.3, 0.35, 0.1, 0.15, eta_f=0.85, eta_b=0.6)}
NOISE = 0.03  # N·m torque-sensor noise of the simulated efforts
ENV = dict(os.environ, ROS_DOMAIN_ID="73", ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")


def _sim(gear: bool, seed: int = 2) -> ArmRecording:
    """20 s at 200 Hz of the planar 2-link arm on a multi-sine, 17-bit encoders, effort noise."""
    dyn = UrdfDynamics("planar_2link")
    t, q, v, a = multisine_trajectory(dyn, duration=20.0, rate=200.0, seed=1)
    friction = TRUE if gear else {n: JointFriction(jf.Cp, jf.Cn, jf.bp, jf.bn)
                                  for n, jf in TRUE.items()}
    s = simulate_arm_recording(dyn, t, q, v, a, friction, armature=[0.5, 0.3],
                               torque_noise_std=NOISE, seed=seed)
    return ArmRecording(t=s.t, joint_names=dyn.joint_names, q=s.q, v=None, effort=s.tau,
                        source="simulated planar_2link")


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    d = tmp_path_factory.mktemp("arm")
    rec = _sim(gear=False)
    write_arm_csv(d / "arm.csv", rec)
    write_arm_bag(d / "bag", rec)
    write_arm_csv(d / "gear.csv", _sim(gear=True))
    return d, rec


def _run(*args, cwd):
    cmd = [sys.executable, "-m", "fric_nodes.tools.cli", "identify", *map(str, args)]
    return subprocess.run(cmd, cwd=cwd, env=ENV, capture_output=True, text=True, timeout=120)


def _ros_params(path, node):
    from rclpy.parameter import parameter_dict_from_yaml_file, parameter_value_to_python

    assert params_file_problem(path) is None
    return {k: parameter_value_to_python(v.value) for k, v in
            parameter_dict_from_yaml_file(str(path), target_nodes=[node]).items()}


def _within(est, true, rel, floor):
    return abs(est - true) <= max(rel * abs(true), floor)


def test_bag_end_to_end(data, tmp_path):
    d, rec = data
    out = tmp_path / "out"
    r = _run(d / "bag", "--urdf", "planar_2link", "--out", out, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    # progress of the long steps on stderr
    for step in ("fric identify: reading", "fric identify: read 4000 samples of 2 joints",
                 "fric identify: effort lag 0 ms: estimate ", "fric identify: fitting",
                 "fric identify: writing"):
        assert step in r.stderr, r.stderr
    fs = read_joint_friction(out / "joint_friction.yaml")
    assert fs.names == ["joint1", "joint2"]
    # --model auto (the default): the line or the curve per joint, by held-out error;
    # --dynamics auto (the default): the recording was simulated with this URDF's rigid body, so
    # its friction values agree with the identified rigid body's and the URDF's is kept
    assert fs.model in ("asymmetric", "curve") and (fs.dynamics, fs.method) == ("urdf", "eiv")
    sel = fs.extra["dynamics_selection"]
    assert sel["chosen"] == "urdf" and sel["difference_in_std"] <= 4.0, sel
    assert "Rigid body: the URDF's (`--dynamics auto`)" in (out / "report.md").read_text(
        encoding="utf-8")
    assert "rigid_body" in fs.extra  # the identified one, for gravity: identified
    # the simulated effort is the torque at its stamp (a torque sensor): --effort-lag auto (the
    # default) finds no lag, and the file says so
    assert fs.extra["effort_lag"] == 0.0
    assert 0.0 <= fs.extra["effort_lag_estimate"] < 3 * fs.extra["effort_lag_std"]
    for name, jf in fs.joints.items():  # the tolerances, each with its std
        t = TRUE[name]
        for k in ("Cp", "Cn"):
            assert _within(getattr(jf, k), getattr(t, k), 0.05, 0.02), (name, k, jf)
        for k in ("bp", "bn"):
            assert _within(getattr(jf, k), getattr(t, k), 0.10, 0.01), (name, k, jf)
        assert all(jf.std[k] > 0 for k in ("Cp", "Cn", "bp", "bn"))
    # ready-to-use parameter files: rclpy reads them, they point at the friction file
    friction_file = str((out / "joint_friction.yaml").resolve())
    comp = _ros_params(out / "friction_compensator.yaml", "friction_compensator")
    assert comp["joints"] == ["joint1", "joint2"] and comp["joint_friction"] == friction_file
    assert comp["dt"] == pytest.approx(0.005)  # the recording's joint_states period
    sim = _ros_params(out / "transmission_sim.yaml", "transmission_sim")
    assert sim["joint_names"] == ["joint1", "joint2"]
    assert sim["joint_friction"] == friction_file and os.path.isabs(sim["urdf"])
    assert list(UrdfDynamics(sim["urdf"]).joint_names) == ["joint1", "joint2"]
    # ... and the simulator runs on it as written (a real process, half a simulated second)
    proc = subprocess.run([sys.executable, "-m", "fric_nodes.transmission_sim", "--ros-args",
                           "--params-file", str(out / "transmission_sim.yaml"),
                           "-p", "duration:=0.5", "-p", "sync:=as_fast_as_possible"],
                          cwd=tmp_path, env=ENV, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    # the simulator names each joint's law (asymmetric levels or the curve's knots)
    assert re.search(rf"joint friction from {re.escape(str(friction_file))}.*: joint1 "
                     r"(asymmetric Cp|curve)", proc.stderr + proc.stdout)
    # the report: the model predicts the held-out fifth (never fitted) to the residual level of
    # the fitted part — a model missing physics (e.g. the rotor inertia) would not
    for name in ARM_REPORT_FILES:
        assert (out / name).is_file(), name
    text = (out / "report.md").read_text(encoding="utf-8")
    assert "Effort lag 0, estimated from the data (`--effort-lag auto`: " in text
    rows = [ln for ln in text.splitlines() if ln.startswith("| joint") and "|" in ln[8:]]
    rms = {ln.split("|")[1].strip(): (float(ln.split("|")[2]), float(ln.split("|")[3]))
           for ln in rows if ln.split("|")[2].strip()[:1].isdigit()}
    assert set(rms) == {"joint1", "joint2"}
    for name, (held_out, fitted) in rms.items():
        assert held_out == pytest.approx(fitted, rel=0.25), (name, held_out, fitted)
    # ... and that level is the measurement noise alone: the effort noise plus the noise of the
    # acceleration differentiated from 17-bit encoder positions, through the inertia
    # (M(q) + rotor) σ_a; nothing left for a missing term to hide in
    from fric_core.arm_identification.signals import prepare

    prep = prepare(rec.t, rec.q, rec.effort, min_rows=200)
    dyn = UrdfDynamics("planar_2link")
    inertia = np.mean([(dyn.mass_matrix(q) + np.diag([0.5, 0.3])) ** 2
                       for q in prep.q[::20]], axis=0)
    expected = np.sqrt(NOISE ** 2 + inertia @ prep.var_a)
    for j, name in enumerate(("joint1", "joint2")):
        assert rms[name][0] == pytest.approx(expected[j], rel=0.15), (name, rms[name], expected)
    # the summary on stdout, with the held-out RMS
    assert "| joint | law | Cp | Cn | bp | bn | held-out RMS [N·m] |" in r.stdout


def test_csv_gear_model_prints_no_undetermined_efficiency(data, tmp_path):
    # rigid body identified: only η_f·η_b is determined (a scale s of the rigid body is undone
    # by η_f·s, η_b/s); the file holds null for η_f, η_b and the product within 0.03
    d, _ = data
    out = tmp_path / "gear"
    r = _run(d / "gear.csv", "--urdf", "planar_2link", "--out", out, "--model", "gear",
             "--method", "ols", "--joints", "joint1,joint2", "--dynamics", "identify",
             cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    fs = read_joint_friction(out / "joint_friction.yaml")
    assert fs.model == "gear" and fs.method == "ols" and fs.dynamics == "identify"
    for name, jf in fs.joints.items():
        t = TRUE[name]
        assert jf.eta_f is None and jf.eta_b is None
        assert abs(jf.eta_product - t.eta_f * t.eta_b) <= 0.03, (name, jf.eta_product)
    assert "not determined" in r.stdout
    # the rotor inertias the gear fit separates from the link inertias drive the simulator
    sim = _ros_params(out / "transmission_sim.yaml", "transmission_sim")
    assert sim["rotor_inertia"] == pytest.approx([0.5, 0.3], abs=0.03)
    text = (out / "report.md").read_text(encoding="utf-8")
    assert "| eta_f |  | not determined | not determined |" in text
    assert "Only the product η_f·η_b is determined" in text


def test_csv_gear_model_default_dynamics_separates_the_efficiencies(data, tmp_path):
    # --dynamics auto (the default) with the gear law: the gear fit is repeated with the URDF's
    # rigid body (the recording's own), whose friction agrees with the identified one, so the
    # URDF's is kept and η_f, η_b are determined apart (the test above: with the rigid body
    # identified only their product is)
    d, _ = data
    out = tmp_path / "gear"
    r = _run(d / "gear.csv", "--urdf", "planar_2link", "--out", out, "--model", "gear",
             "--method", "ols", "--joints", "joint1,joint2", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    fs = read_joint_friction(out / "joint_friction.yaml")
    assert fs.dynamics == "urdf" and fs.extra["dynamics_selection"]["chosen"] == "urdf"
    for name, jf in fs.joints.items():
        t = TRUE[name]
        for k in ("eta_f", "eta_b"):
            assert abs(getattr(jf, k) - getattr(t, k)) <= max(0.03, 3 * jf.std[k]), (name, k, jf)
    # the rotor inertias drive the simulator as fitted with the URDF's rigid body
    sim = _ros_params(out / "transmission_sim.yaml", "transmission_sim")
    assert sim["rotor_inertia"] == pytest.approx([0.5, 0.3], abs=0.03)
    assert "Only the product η_f·η_b is determined" not in (out / "report.md").read_text(
        encoding="utf-8")


PROGRESS = ("fric identify: reading ", "fric identify: read ", "fric identify: fitting ")


def _one_line_error(rc, err, *fragments):
    """Exit 2 and one error line (after any progress lines), no traceback."""
    assert rc == 2, err
    lines = [ln for ln in err.splitlines() if not ln.startswith(PROGRESS)]
    assert len(lines) == 1 and lines[0].startswith("fric identify: error: "), err
    assert "Traceback" not in err
    for f in fragments:
        assert f in lines[0], (f, lines[0])


def test_bad_input_one_line_exit_2(data, tmp_path, capsys):
    d, rec = data
    out = str(tmp_path / "o")

    def run(src, *extra, out=out):
        rc = main(["identify", str(src), "--urdf", "planar_2link", "--out", str(out), *extra])
        return rc, capsys.readouterr().err

    # a bag without the topic: names it and lists what the bag has
    _one_line_error(*run(d / "bag", "--topic", "/arm/joint_states"), "/arm/joint_states",
                    "/joint_states")
    # a bag without efforts
    no_effort = ArmRecording(t=rec.t, joint_names=rec.joint_names, q=rec.q, v=None,
                             effort=rec.effort)
    no_effort.effort = np.zeros((len(rec), 0))
    write_arm_bag(tmp_path / "no_effort", no_effort, storage="sqlite3")
    _one_line_error(*run(tmp_path / "no_effort"), "no effort")
    # joints missing from the URDF: the recording's, and asked for with --joints
    renamed = ArmRecording(t=rec.t, joint_names=("joint1", "wrist"), q=rec.q, v=None,
                           effort=rec.effort)
    write_arm_csv(tmp_path / "wrist.csv", renamed)
    _one_line_error(*run(tmp_path / "wrist.csv"), "wrist", "not in the URDF", "joint1, joint2")
    _one_line_error(*run(tmp_path / "wrist.csv", "--joints", "wrist"), "wrist",
                    "not in the URDF")
    _one_line_error(*run(d / "arm.csv", "--joints", "joint2,elbow"), "--joints", "elbow",
                    "not in the recording", "joint1, joint2")
    # every row NaN
    nan = ArmRecording(t=rec.t, joint_names=rec.joint_names, q=rec.q, v=None,
                       effort=np.full_like(rec.effort, np.nan))
    write_arm_csv(tmp_path / "nan.csv", nan)
    _one_line_error(*run(tmp_path / "nan.csv"), "every row")
    # too short: 1 s
    short = ArmRecording(t=rec.t[:200], joint_names=rec.joint_names, q=rec.q[:200], v=None,
                         effort=rec.effort[:200])
    write_arm_csv(tmp_path / "short.csv", short)
    _one_line_error(*run(tmp_path / "short.csv"), "too short")
    # joint2 moves one way only (a ramp): not excited
    q = rec.q.copy()
    q[:, 1] = 0.3 * rec.t
    ramp = ArmRecording(t=rec.t, joint_names=rec.joint_names, q=q, v=None, effort=rec.effort)
    write_arm_csv(tmp_path / "ramp.csv", ramp)
    _one_line_error(*run(tmp_path / "ramp.csv"), "joint2", "one direction only", "fric excite")
    # a URDF that does not exist
    rc = main(["identify", str(d / "arm.csv"), "--urdf", str(tmp_path / "arm.urdf"), "--out",
               out])
    _one_line_error(rc, capsys.readouterr().err, "arm.urdf")
    # stage-only options, a missing --out, --out a file
    assert main(["identify", str(d / "arm.csv"), "--urdf", "planar_2link", "--out", out,
                 "--K", "100", "--mass", "1"]) == 2
    assert "--K, --mass apply only to the 1-DOF stage" in capsys.readouterr().err
    assert main(["identify", str(d / "arm.csv"), "--urdf", "planar_2link"]) == 2
    assert "--out DIR is required with --urdf" in capsys.readouterr().err
    (tmp_path / "file").write_text("x")
    _one_line_error(*run(d / "arm.csv", out=tmp_path / "file"), "is an existing file")
    # arm-only options without --urdf
    assert main(["identify", str(d / "arm.csv"), "--model", "gear", "--out", out]) == 2
    assert "--model applies only to an arm" in capsys.readouterr().err
    assert main(["identify", str(d / "arm.csv"), "--effort-lag", "0", "--out", out]) == 2
    assert "--effort-lag applies only to an arm" in capsys.readouterr().err
    # --effort-lag: auto or seconds; longer than the filter's edge trim is refused by name
    with pytest.raises(SystemExit) as exc:
        main(["identify", str(d / "arm.csv"), "--urdf", "planar_2link", "--out", out,
              "--effort-lag", "soon"])
    assert exc.value.code == 2
    assert "--effort-lag: expected auto or a lag in seconds" in capsys.readouterr().err
    _one_line_error(*run(d / "arm.csv", "--effort-lag", "1"), "--effort-lag: 1 s is longer than")
    assert not os.path.exists(out)  # nothing written by any of these


def test_nan_rows_dropped_with_a_warning(data, tmp_path):
    """A few NaN cells: those rows dropped (a warning says how many), the rest identified; and
    the real command line exits 2 with one line for a bad recording."""
    d, rec = data
    eff = rec.effort.copy()
    eff[[500, 1500, 1501], 1] = np.nan
    holes = ArmRecording(t=rec.t, joint_names=rec.joint_names, q=rec.q, v=None, effort=eff)
    write_arm_csv(tmp_path / "holes.csv", holes)
    out = tmp_path / "holes"
    r = _run(tmp_path / "holes.csv", "--urdf", "planar_2link", "--out", out, "--dynamics",
             "urdf", "--method", "ols", "--effort-lag", "0.0005", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "effort lag 0.5 ms" in r.stdout  # a given lag: used as given, said so
    extra = read_joint_friction(out / "joint_friction.yaml").extra
    assert extra["effort_lag"] == 0.0005 and set(extra) <= {"effort_lag", "model_selection"}
    assert ("Effort lag 0.5 ms (0.10 samples of 5 ms), given (`--effort-lag`)"
            in (out / "report.md").read_text(encoding="utf-8"))
    assert "fric identify: warning: 3 of 4000 rows with a missing (NaN) value dropped" in r.stderr
    assert "3 of 4000 rows" in (out / "report.md").read_text(encoding="utf-8")
    fs = read_joint_friction(out / "joint_friction.yaml")
    assert fs.dynamics == "urdf"
    for name, jf in fs.joints.items():
        assert _within(jf.Cp, TRUE[name].Cp, 0.05, 0.02)
    r = _run(tmp_path / "absent.mcap", "--urdf", "planar_2link", "--out", out, cwd=tmp_path)
    _one_line_error(r.returncode, r.stderr, "absent.mcap")


def test_excite_writes_a_trajectory_within_the_limits(tmp_path):
    """`fric excite`: the CSV, the JointTrajectory YAML and bag; the trajectory stays inside the
    URDF's limits less the margin and the speed limit, starts and ends at rest, and its band is
    harmonics × base frequency."""
    from fric_core.arm_identification.excitation import read_excitation_csv

    out = tmp_path / "ex"
    cmd = [sys.executable, "-m", "fric_nodes.tools.cli", "excite", "--urdf", "planar_2link",
           "--out", str(out), "--duration", "12", "--base-frequency", "0.2", "--harmonics", "4",
           "--max-velocity", "0.8", "--time-budget", "0.5"]
    r = subprocess.run(cmd, cwd=tmp_path, env=ENV, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "fric excite: optimising" in r.stderr and "condition number" in r.stdout
    traj = read_excitation_csv(out / "excitation.csv")
    assert traj.period == pytest.approx(5.0) and traj.harmonics == 4
    assert traj.t[-1] == pytest.approx(15.0)  # 12 s rounded up to 3 whole periods
    dyn = UrdfDynamics("planar_2link")
    lo, hi = np.asarray(dyn.lower), np.asarray(dyn.upper)
    fin = np.isfinite(lo) & np.isfinite(hi)
    assert np.all(traj.q[:, fin] >= lo[fin] + 0.1 - 1e-9)
    assert np.all(traj.q[:, fin] <= hi[fin] - 0.1 + 1e-9)
    assert np.abs(traj.v).max() <= 0.8 + 1e-9
    assert np.all(traj.v[[0, -1]] == 0.0) and np.all(traj.a[[0, -1]] == 0.0)
    msg = yaml.safe_load((out / "excitation_trajectory.yaml").read_text())
    assert msg["joint_names"] == ["joint1", "joint2"] and len(msg["points"]) > 100
    assert (out / "excitation_bag" / "metadata.yaml").is_file()
    # bad input: one line, exit 2 (the bag exists now; an unknown joint)
    for extra, fragment in ((["--out", str(out)], "excitation_bag exists"),
                            (["--out", str(tmp_path / "e2"), "--joints", "joint9"], "joint9")):
        r = subprocess.run([sys.executable, "-m", "fric_nodes.tools.cli", "excite", "--urdf",
                            "planar_2link", *extra], cwd=tmp_path, env=ENV, capture_output=True,
                           text=True, timeout=60)
        assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
        assert r.stderr.startswith("fric excite: error: ") and fragment in r.stderr


def test_holdout_is_the_last_fifth_or_whole_segments():
    assert HOLDOUT_FRACTION == 0.2
    assert _holdout_split(1000, [slice(0, 1000)], 0.2) == 800
    # a gap near 80 %: the held-out part is the whole last segment
    assert _holdout_split(1000, [slice(0, 760), slice(760, 1000)], 0.2) == 760
    # a gap far from it: the last segment is split
    assert _holdout_split(1000, [slice(0, 500), slice(500, 1000)], 0.2) == 800
    assert _holdout_split(1000, [slice(0, 1000)], 0.0) == 1000
