"""`fric identify --effort-scale JOINT=K,...` (issue 23 item 5): efforts recorded as motor
currents, multiplied per joint by K = motor constant × reduction before anything else.

A planar 2-link recording whose efforts were divided by K (the currents a drive would log)
identifies, with the scale given, to the same friction as the torque recording: the scaled column
is the torque again up to one rounding (relative 1e-16), so the fits agree to 1e-9 relative (the
fit's own arithmetic on inputs equal to ~1e-16). Without joint1's scale, its held-out error is
most of its torque (a fact that could fail if the option were ignored). Bad specs are one line
naming the entry, exit 2, nothing written."""

import os

import numpy as np
import pytest

from fric_core.arm_identification.joint_friction import JointFriction, read_joint_friction
from fric_core.arm_identification.recording import ArmRecording, write_arm_csv
from fric_core.arm_identification.synthetic import multisine_trajectory, simulate_arm_recording
from fric_core.transmission.urdf_dynamics import UrdfDynamics
from fric_nodes.tools.arm_identify import ArmIdentifyError, identify_arm, parse_effort_scale
from fric_nodes.tools.cli import main

TRUE = {"joint1": JointFriction(0.5, 0.4, 0.2, 0.3), "joint2": JointFriction(0.3, 0.35, 0.1,
                                                                               0.15)}
K = {"joint1": 8.0, "joint2": 2.5}  # N·m/A


@pytest.fixture(scope="module")
def recordings(tmp_path_factory):
    d = tmp_path_factory.mktemp("scale")
    dyn = UrdfDynamics("planar_2link")
    t, q, v, a = multisine_trajectory(dyn, duration=20.0, rate=200.0, seed=1)
    s = simulate_arm_recording(dyn, t, q, v, a, TRUE, armature=[0.5, 0.3], seed=2)
    torque = ArmRecording(t=s.t, joint_names=dyn.joint_names, q=s.q, v=None, effort=s.tau)
    current = ArmRecording(t=s.t, joint_names=dyn.joint_names, q=s.q, v=None,
                           effort=s.tau / np.array([K[n] for n in dyn.joint_names]))
    write_arm_csv(d / "torque.csv", torque)
    write_arm_csv(d / "current.csv", current)
    return d


def _fit(src, out, **kw):
    return identify_arm(src, "planar_2link", out, dynamics="urdf", method="ols", effort_lag=0.0,
                        model="asymmetric", offset="none", **kw)


def test_scaled_currents_identify_as_the_torques(recordings, tmp_path):
    d = recordings
    ref = _fit(d / "torque.csv", tmp_path / "ref")
    lines = []
    got = _fit(d / "current.csv", tmp_path / "cur", effort_scale="joint1=8,joint2=2.5",
               progress=lines.append)
    assert any("efforts scaled (--effort-scale): joint1 × 8, joint2 × 2.5" in m for m in lines)
    for name in TRUE:
        for key in ("Cp", "Cn", "bp", "bn"):
            r, g = getattr(ref.friction.joints[name], key), getattr(got.friction.joints[name], key)
            assert g == pytest.approx(r, rel=1e-9, abs=1e-12), (name, key)
    # only joint2 scaled: joint1 stays in amperes, 1/8 of its torque, while the URDF's rigid body
    # predicts the whole torque: its held-out error is most of that torque (N·m), not the
    # 0.03 N·m noise of the torque fit
    half = _fit(d / "current.csv", tmp_path / "half", effort_scale={"joint2": 2.5})
    assert half.friction.joints["joint2"].Cp == pytest.approx(ref.friction.joints["joint2"].Cp,
                                                               rel=1e-9)
    assert half.holdout_rms["joint1"] > 10 * ref.holdout_rms["joint1"]
    assert half.holdout_rms["joint2"] == pytest.approx(ref.holdout_rms["joint2"], rel=1e-6)


@pytest.mark.parametrize("spec, words", [
    ("joint1", "expected JOINT=K"),
    ("joint1=abc", "joint1=abc: 'abc' is not a number"),
    ("joint1=0", "joint1=0.0: expected a finite, non-zero factor"),
    ("joint1=nan", "joint1=nan"),
    ("joint1=2,joint1=3", "joint joint1 given twice"),
    ("=2", "expected JOINT=K"),
])
def test_bad_spec_is_one_line_naming_it(spec, words):
    with pytest.raises(ArmIdentifyError, match="^--effort-scale: ") as e:
        parse_effort_scale(spec)
    assert words in str(e.value) and "\n" not in str(e.value)


def test_cli_bad_spec_and_unknown_joint(recordings, tmp_path, capsys):
    d = recordings
    out = tmp_path / "o"
    with pytest.raises(SystemExit) as e:
        main(["identify", str(d / "current.csv"), "--urdf", "planar_2link", "--out", str(out),
              "--effort-scale", "joint1=fast"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "--effort-scale: joint1=fast: 'fast' is not a number" in err
    assert "Traceback" not in err
    rc = main(["identify", str(d / "current.csv"), "--urdf", "planar_2link", "--out", str(out),
               "--effort-scale", "elbow=3"])
    err = capsys.readouterr().err
    assert rc == 2
    errors = [ln for ln in err.splitlines() if ln.startswith("fric identify: error:")]
    assert errors == ["fric identify: error: --effort-scale: joint(s) elbow not in the recording "
                      f"{d / 'current.csv'} (it has joint1, joint2)"], err
    assert "Traceback" not in err
    assert main(["identify", str(d / "current.csv"), "--effort-scale", "joint1=3",
                 "--out", str(out)]) == 2
    assert "--effort-scale applies only to an arm" in capsys.readouterr().err
    assert not os.path.exists(out)


def test_friction_file_of_the_scaled_run_reads_back(recordings, tmp_path):
    d = recordings
    res = _fit(d / "current.csv", tmp_path / "o", effort_scale="joint1=8,joint2=2.5")
    fs = read_joint_friction(res.files["joint_friction.yaml"])
    # the truth within the planar arm's usual OLS scatter (0.03 N·m noise, 20 s): 0.05 N·m
    for name, jf in fs.joints.items():
        assert abs(jf.Cp - TRUE[name].Cp) < 0.05 and abs(jf.Cn - TRUE[name].Cn) < 0.05
