"""Issue 15: the gear law (paper 004) identified from arm recordings.

Simulated recordings (fric_core.arm_identification.synthetic): 17-bit joint encoders, 0.03 N·m
white torque-sensor noise, rotor inertias, every joint's motor supplying τ_load/η_f when it
drives its load and η_b·τ_load when the load back-drives it, plus asymmetric Coulomb + viscous
friction (the convention of joint_friction.py). What the issue asks, on the planar 2-link arm and
the shipped 7-DOF arm:

* correct URDF (``dynamics="urdf"``): η_f, η_b within 0.03; Coulomb within 5 % (or 0.02 N·m),
  viscous within 10 % (or 0.01 N·m·s/rad); every error within 4 reported standard deviations;
* a URDF whose inertias are all 20 % high (``dynamics="identify"``): a rigid-body scale s is
  undone by η_f·s, η_b/s, so η_f and η_b are reported as undetermined (None) and only their
  product is given — within 0.03 — beside the Coulomb/viscous terms.

Joint a7 of the 7-DOF arm turns a 0.3 kg flange about its own axis: its load torque is a few
mN·m, so no recording of it can tell η_f from η_b; the fit must say so (``determined`` False, a
warning) rather than print a number.
"""

import numpy as np
import pinocchio as pin
import pytest

from fric_core.arm_identification.fit import fit_arm_friction
from fric_core.arm_identification.joint_friction import (JointFriction, read_joint_friction,
                                                         write_joint_friction)
from fric_core.arm_identification.synthetic import multisine_trajectory, simulate_arm_recording
from fric_core.transmission.urdf_dynamics import UrdfDynamics

TOL = {"Cp": (0.05, 0.02), "Cn": (0.05, 0.02), "bp": (0.10, 0.01), "bn": (0.10, 0.01)}


def _wrong(name):
    d = UrdfDynamics(name)
    for i in range(1, d.model.njoints):
        d.model.inertias[i] = pin.Inertia.FromDynamicParameters(
            1.2 * d.model.inertias[i].toDynamicParameters())
    d.data = d.model.createData()
    return d


def _case(name, seed):
    dyn = UrdfDynamics(name)
    n = dyn.n
    fr = {nm: JointFriction(Cp=0.5 + 0.1 * i, Cn=0.4 + 0.05 * i, bp=0.2 + 0.05 * i,
                            bn=0.3 - 0.02 * i, eta_f=0.85 - 0.02 * i, eta_b=0.75 - 0.03 * i)
          for i, nm in enumerate(dyn.joint_names)}
    t, q, v, a = multisine_trajectory(dyn, duration=20.0, rate=250.0, amplitude=1.0, seed=seed)
    rec = simulate_arm_recording(dyn, t, q, v, a, fr, armature=np.linspace(0.3, 0.05, n),
                                 torque_noise_std=0.03, seed=seed + 1)
    return dyn, fr, rec


@pytest.fixture(scope="module", params=["planar_2link", "arm7"])
def case(request):
    return _case(request.param, seed=4)


def _assert_law(fit, fr):
    for nm, p in fr.items():
        for k, (rel, ab) in TOL.items():
            err = abs(fit.joints[nm][k] - getattr(p, k))
            assert err <= max(rel * getattr(p, k), ab), (nm, k, fit.joints[nm][k])
            assert err < 4 * fit.std[nm][k], (nm, k)
            assert fit.determined[nm][k]


def test_efficiencies_with_the_correct_urdf(case):
    dyn, fr, rec = case
    fit = fit_arm_friction(rec.q, rec.v, rec.a, rec.tau, dyn, dynamics="urdf", law="gear",
                           dv=0.02)
    assert fit.law == "gear"
    _assert_law(fit, fr)
    undetermined = {"joint_a7"} if dyn.n == 7 else set()
    for nm, p in fr.items():
        if nm in undetermined:
            assert not fit.determined[nm]["eta_f"] or not fit.determined[nm]["eta_b"]
            assert any(nm in w and "eta_" in w for w in fit.warnings)
            continue
        for k in ("eta_f", "eta_b"):
            err = abs(fit.joints[nm][k] - getattr(p, k))
            assert err <= 0.03, (nm, k, fit.joints[nm][k])
            assert err < 4 * fit.std[nm][k], (nm, k, err, fit.std[nm][k])
            assert fit.determined[nm][k]
        assert abs(fit.joints[nm]["eta_product"] - p.eta_f * p.eta_b) <= 0.03
    # ignoring the gear (G = τ_load) leaves the load-dependent loss in the friction terms
    plain = fit_arm_friction(rec.q, rec.v, rec.a, rec.tau, dyn, dynamics="urdf", dv=0.02)
    assert any(abs(plain.joints[nm][k] - getattr(p, k)) > max(TOL[k][0] * getattr(p, k),
                                                               TOL[k][1])
               for nm, p in fr.items() for k in TOL)


def test_only_the_product_with_a_wrong_urdf(case):
    dyn, fr, rec = case
    wrong = _wrong(dyn.source)
    fit = fit_arm_friction(rec.q, rec.v, rec.a, rec.tau, wrong, dynamics="identify",
                           law="gear", dv=0.02)
    _assert_law(fit, fr)
    for nm, p in fr.items():
        assert fit.joints[nm]["eta_f"] is None and fit.joints[nm]["eta_b"] is None
        assert fit.std[nm]["eta_f"] is None
        assert not fit.determined[nm]["eta_f"] and not fit.determined[nm]["eta_b"]
        prod, sd = fit.joints[nm]["eta_product"], fit.std[nm]["eta_product"]
        if nm == "joint_a7":
            assert not fit.determined[nm]["eta_product"]
            continue
        assert fit.determined[nm]["eta_product"]
        assert abs(prod - p.eta_f * p.eta_b) <= 0.03, (nm, prod)
        assert abs(prod - p.eta_f * p.eta_b) < 4 * sd, (nm, prod, sd)
    # the yaml carries the product only
    fs = fit.to_joint_friction_set()
    assert fs.model == "gear" and fs.dynamics == "identify"
    assert all(jf.eta_f is None and jf.eta_b is None for jf in fs.joints.values())


def test_written_file_round_trips(tmp_path):
    dyn, fr, rec = _case("planar_2link", seed=11)
    fit = fit_arm_friction(rec.q, rec.v, rec.a, rec.tau, dyn, dynamics="urdf", law="gear",
                           dv=0.02)
    path = write_joint_friction(tmp_path / "joint_friction.yaml", fit.to_joint_friction_set())
    back = read_joint_friction(path)
    assert back.model == "gear" and back.dynamics == "urdf" and back.method == "ols"
    for nm, jf in back.joints.items():
        assert jf.has_gear
        assert jf.eta_f == pytest.approx(fit.joints[nm]["eta_f"])
        assert jf.Cp == pytest.approx(fit.joints[nm]["Cp"])
        assert jf.std["eta_b"] == pytest.approx(fit.std[nm]["eta_b"])


def test_no_gear_loss_leaves_the_first_rotor_inertia_merged():
    """η_f = η_b = 1: G = τ_load, so nothing separates joint 1's rotor inertia from the first
    link's inertia about the same axis. The fit says so and holds it merged (None), the product
    comes out 1 and the friction terms stay within tolerance."""
    dyn = UrdfDynamics("planar_2link")
    fr = {nm: JointFriction(0.5, 0.4, 0.2, 0.3, eta_f=1.0, eta_b=1.0) for nm in dyn.joint_names}
    t, q, v, a = multisine_trajectory(dyn, duration=20.0, rate=250.0, seed=4)
    rec = simulate_arm_recording(dyn, t, q, v, a, fr, armature=[0.3, 0.1], seed=5)
    fit = fit_arm_friction(rec.q, v, a, rec.tau, dyn, law="gear", dv=0.02)
    assert fit.armature["joint1"] is None and fit.armature_std["joint1"] is None
    assert abs(fit.armature["joint2"] - 0.1) < 4 * fit.armature_std["joint2"]
    assert any("rotor inertia of joint1 not separable" in w for w in fit.warnings)
    _assert_law(fit, fr)
    for nm in fr:
        assert abs(fit.joints[nm]["eta_product"] - 1.0) <= 0.03


def test_lossless_drive_stays_inside_the_physical_range(tmp_path):
    """η_f = 1 (a drive without loss one way): the fitted η_f scatters around 1; a value above 1
    by less than 3 std is reported as 1 (with a warning), so the written file stays valid."""
    dyn = UrdfDynamics("planar_2link")
    fr = {nm: JointFriction(0.5, 0.4, 0.2, 0.3, eta_f=1.0, eta_b=0.8) for nm in dyn.joint_names}
    for seed in (4, 5, 6):
        t, q, v, a = multisine_trajectory(dyn, duration=10.0, rate=250.0, seed=seed)
        rec = simulate_arm_recording(dyn, t, q, v, a, fr, seed=seed + 1)
        fit = fit_arm_friction(rec.q, v, a, rec.tau, dyn, dynamics="urdf", law="gear", dv=0.02)
        for nm in fr:
            assert fit.joints[nm]["eta_f"] <= 1.0
            assert abs(fit.joints[nm]["eta_f"] - 1.0) <= 0.03
            assert fit.joints[nm]["eta_product"] == pytest.approx(
                fit.joints[nm]["eta_f"] * fit.joints[nm]["eta_b"])
        back = read_joint_friction(write_joint_friction(tmp_path / f"{seed}.yaml",
                                                        fit.to_joint_friction_set()))
        assert all(jf.has_gear for jf in back.joints.values())
