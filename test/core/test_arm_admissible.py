"""Issue 23 items 1 and 2: physically admissible output and effort offsets.

Recordings of the shipped planar 2-link arm (paper 004's, URDF trusted) with known friction,
simulated by synthetic.py; the tolerances are the fits' own standard deviations (3 std).
"""

import numpy as np
import pytest

from fric_core.arm_identification.fit import fit_arm_friction
from fric_core.arm_identification.recording import ArmRecording, write_arm_csv
from fric_core.arm_identification.synthetic import multisine_trajectory, simulate_arm_recording
from fric_core.compensation import FrictionCompensator
from fric_core.joint_friction import JointFriction, read_joint_friction
from fric_core.transmission.urdf_dynamics import UrdfDynamics
from fric_nodes.tools.arm_identify import identify_arm

TRUE = {"joint1": JointFriction(0.5, 0.4, 0.2, 0.3), "joint2": JointFriction(0.3, 0.35, 0.1, 0.15)}


@pytest.fixture(scope="module")
def dyn():
    return UrdfDynamics("planar_2link")


def _recording(dyn, seed, rest=0.0, offsets=(0.0, 0.0), extra=None, duration=30.0):
    """The simulated run, at rest for ``rest`` s first; efforts + ``offsets`` (+ ``extra(v)``)."""
    t, q, v, a = multisine_trajectory(dyn, duration=duration, rate=250.0, seed=seed)
    if rest > 0:
        k = int(rest * 250.0)
        t = np.concatenate([np.arange(k) / 250.0, t + k / 250.0])
        q = np.vstack([np.repeat(q[:1], k, axis=0), q])
        v = np.vstack([np.zeros((k, 2)), v])
        a = np.vstack([np.zeros((k, 2)), a])
    rec = simulate_arm_recording(dyn, t, q, v, a, TRUE, seed=seed + 1, torque_noise_std=0.02)
    tau = rec.tau + np.asarray(offsets)
    if extra is not None:
        tau = tau + extra(v)
    return rec, tau


def test_negative_viscous_is_held_at_zero_with_its_reason_and_the_file_is_usable(dyn, tmp_path):
    # dynamics the law lacks: −0.4·v on joint1's effort (bp, bn 0.2, 0.3 become −0.2, −0.1)
    rec, tau = _recording(dyn, 3, extra=lambda v: np.column_stack([-0.4 * v[:, 0],
                                                                     0 * v[:, 1]]))
    free = fit_arm_friction(rec.q, rec.v, rec.a, tau, dyn, dynamics="urdf", dv=0.02,
                            admissible=False)
    assert free.joints["joint1"]["bp"] < -0.1 and free.joints["joint1"]["bn"] < -0.05
    fit = fit_arm_friction(rec.q, rec.v, rec.a, tau, dyn, dynamics="urdf", dv=0.02)
    for k in ("bp", "bn"):
        assert fit.joints["joint1"][k] == 0.0 and fit.determined["joint1"][k] is False
        assert "held at 0" in fit.reasons["joint1"][k]
    # the other joint is untouched by the bound: its values within 3 std of the truth
    for k in ("Cp", "Cn", "bp", "bn"):
        assert abs(fit.joints["joint2"][k] - getattr(TRUE["joint2"], k)) <= 3 * fit.std["joint2"][k]
    fs = fit.to_joint_friction_set()
    from fric_core.joint_friction import write_joint_friction
    back = read_joint_friction(write_joint_friction(tmp_path / "jf.yaml", fs))
    assert back.joints["joint1"].determined == {"bp": False, "bn": False}
    assert "held at 0" in back.joints["joint1"].reasons["bp"]
    comp = FrictionCompensator(back.for_joints(["joint1", "joint2"]), 0.004)
    out = [comp.step(np.array([0.001 * k, -0.002 * k])).copy() for k in range(200)]
    assert np.all(np.isfinite(out))


def test_an_offset_larger_than_a_level_is_not_clamped(dyn):
    """The levels absorb an offset o as Cp + o, Cn − o (the only identifiable combination): with
    o = −0.6 > Cp, Cp + o is below 0 and stays there (a clamp at 0 would bias Cn)."""
    rec, tau = _recording(dyn, 4, offsets=(-0.6, 0.0))
    fit = fit_arm_friction(rec.q, rec.v, rec.a, tau, dyn, dynamics="urdf", dv=0.02)
    p, s = fit.joints["joint1"], fit.std["joint1"]
    assert p["Cp"] < 0
    assert abs(p["Cp"] - (0.5 - 0.6)) <= 3 * s["Cp"] and abs(p["Cn"] - (0.4 + 0.6)) <= 3 * s["Cn"]
    assert fit.determined["joint1"]["Cp"] and fit.determined["joint1"]["Cn"]


@pytest.mark.parametrize("mode", ["estimate-at-rest", "auto"])
def test_offset_estimated_at_rest_separates_the_levels(dyn, tmp_path, mode):
    offsets = (0.35, -0.2)
    rec, tau = _recording(dyn, 5, rest=2.0, offsets=offsets)
    path = tmp_path / "rec.csv"
    write_arm_csv(path, ArmRecording(rec.t, tuple(dyn.joint_names), rec.q, None, tau))
    res = identify_arm(path, "planar_2link", tmp_path / mode, dynamics="urdf",
                       model="asymmetric", offset=mode, effort_lag=0.0)
    for j, name in enumerate(dyn.joint_names):
        jf = res.friction.joints[name]
        assert abs(jf.offset - offsets[j]) <= 3 * jf.std["offset"], (name, jf.offset)
        for k in ("Cp", "Cn"):
            assert abs(getattr(jf, k) - getattr(TRUE[name], k)) <= 3 * jf.std[k], (name, k)
    back = read_joint_friction(res.files["joint_friction.yaml"])
    assert back.joints["joint1"].offset == pytest.approx(res.friction.joints["joint1"].offset)


def test_offset_none_keeps_it_in_the_levels_and_says_so(dyn, tmp_path):
    rec, tau = _recording(dyn, 6, offsets=(-0.7, 0.0))
    path = tmp_path / "rec.csv"
    write_arm_csv(path, ArmRecording(rec.t, tuple(dyn.joint_names), rec.q, None, tau))
    res = identify_arm(path, "planar_2link", tmp_path / "o", dynamics="urdf",
                       model="asymmetric", offset="none", effort_lag=0.0)
    jf = res.friction.joints["joint1"]
    assert jf.offset == 0.0 and jf.Cp < 0
    assert any("a friction level below 0 at v = ±0 on joint1" in w and "offset" in w
               for w in res.warnings)


def test_gear_law_with_identified_rigid_body_writes_an_admissible_file(dyn, tmp_path):
    """The gear law with the rigid body identified is solved by Gauss–Newton, not the bounded
    solve: a viscous term below 0 is still held at 0 with its reason, and the file reads back."""
    from fric_core.joint_friction import write_joint_friction

    rec, tau = _recording(dyn, 8, extra=lambda v: np.column_stack([-0.4 * v[:, 0],
                                                                     0 * v[:, 1]]),
                          duration=20.0)
    fit = fit_arm_friction(rec.q, rec.v, rec.a, tau, dyn, dynamics="identify", law="gear",
                           dv=0.02)
    assert fit.joints["joint1"]["bp"] == 0.0 and fit.determined["joint1"]["bp"] is False
    assert "held at 0" in fit.reasons["joint1"]["bp"]
    back = read_joint_friction(write_joint_friction(tmp_path / "g.yaml",
                                                    fit.to_joint_friction_set()))
    assert back.joints["joint1"].bp == 0.0 and back.joints["joint1"].determined["bp"] is False


def test_eiv_that_cannot_be_used_falls_back_to_least_squares_with_a_warning(dyn, tmp_path,
                                                                           monkeypatch):
    """Issue 23: the default estimator must not fail on ordinary data. Where EIV's correction
    exceeds the regressors' spread (motor-current logs: the noise estimates are large), fric
    identify uses least squares and says so; the API names stay out of the message."""
    import fric_core.arm_identification.fit as fit_module

    real = fit_module.fit_arm_friction

    def eiv_refuses(*args, **kw):
        if kw.get("method") == "eiv":
            raise ValueError("noise: the given velocity/acceleration noise variances exceed the "
                             "regressors' spread")
        return real(*args, **kw)

    monkeypatch.setattr(fit_module, "fit_arm_friction", eiv_refuses)
    rec, tau = _recording(dyn, 9)
    path = tmp_path / "rec.csv"
    write_arm_csv(path, ArmRecording(rec.t, tuple(dyn.joint_names), rec.q, None, tau))
    res = identify_arm(path, "planar_2link", tmp_path / "o", dynamics="urdf", effort_lag=0.0)
    assert res.friction.method == "ols"
    assert any("errors-in-variables (--method eiv) not possible" in w and "--method ols" in w
               for w in res.warnings)
    for name in dyn.joint_names:
        jf = res.friction.joints[name]
        true = TRUE[name]
        v = np.array([-0.5, 0.5])
        assert np.all(np.abs(jf.total(v) - true.total(v)) < 0.05)
