"""Issue 15: the identified gravity torque (fric_core.arm_identification.rigid_body).

The shipped 7-DOF arm (gravity acting; joints 1 and 7 turn about the vertical in the zero pose, so
their gravity torque is small) records a 20 s multi-sine (17-bit encoders, 0.03 N·m torque
noise, rotor inertias no URDF has); the fit identifies the rigid body with a URDF whose inertias
are all 20 % high. At rest the identified base parameters give g(q) = Y_b(q, 0, 0) β: it must
match the TRUE arm's gravity torque at random configurations all over the joint ranges, where the
wrong URDF's is exactly 20 % off (g is linear in the inertial parameters), and come back
unchanged from joint_friction.yaml.
"""

import numpy as np
import pinocchio as pin
import pytest

from fric_core.arm_identification import (JointFriction, fit_arm_friction, read_joint_friction,
                                          write_joint_friction)
from fric_core.arm_identification.rigid_body import (IdentifiedGravity, identified_gravity,
                                                     parse_rigid_body)
from fric_core.arm_identification.synthetic import multisine_trajectory, simulate_arm_recording
from fric_core.transmission.urdf_dynamics import UrdfDynamics


def _scaled(arm, s):
    d = UrdfDynamics(arm)
    for i in range(1, d.model.njoints):
        d.model.inertias[i] = pin.Inertia.FromDynamicParameters(
            s * d.model.inertias[i].toDynamicParameters())
    d.data = d.model.createData()
    return d


@pytest.fixture(scope="module")
def case():
    true, wrong = UrdfDynamics("arm7"), _scaled("arm7", 1.2)
    fr = {n: JointFriction(0.6 - 0.05 * i, 0.45 + 0.05 * i, 0.25 + 0.03 * i, 0.2 + 0.04 * i)
          for i, n in enumerate(true.joint_names)}
    t, q, v, a = multisine_trajectory(true, duration=20.0, rate=250.0, amplitude=1.0, seed=8)
    rec = simulate_arm_recording(true, t, q, v, a, fr, armature=np.linspace(0.4, 0.05, true.n),
                                 seed=9)
    fit = fit_arm_friction(rec.q, rec.v, rec.a, rec.tau, wrong, dynamics="identify", dv=0.02)
    assert fit.warnings == []
    return true, wrong, fit


def _configurations(dyn, count=100, seed=0):
    """Uniform over the joint ranges (well beyond the recording's ±1 rad: β is global)."""
    return np.random.default_rng(seed).uniform(dyn.lower, dyn.upper, size=(count, dyn.n))


def test_identified_gravity_matches_the_true_arm_not_the_wrong_urdf(case):
    """Per joint, the identified g is within 4 of its standard-deviation bound Σ_i |Y_b,ji| σ_i
    (Cauchy–Schwarz: the std of a linear combination is at most that, whatever β's
    correlations), and that bound is below 1 % of the joint's max |g| (+0.02 N·m, the Coulomb
    floor of the issue); the wrong URDF's g is off by 20 % of it."""
    true, wrong, fit = case
    ig = fit.to_joint_friction_set().identified_gravity(UrdfDynamics("arm7"))
    Q = _configurations(true)
    g_true = np.array([true.gravity_torque(q) for q in Q])
    g_id = np.array([ig.torque(q) for q in Q])
    g_wrong = np.array([wrong.gravity_torque(q) for q in Q])
    scale = np.abs(g_true).max(axis=0)
    assert scale.max() > 40.0  # the shoulder carries the arm: gravity is acting
    np.testing.assert_allclose(g_wrong, 1.2 * g_true, rtol=1e-9, atol=1e-9)
    nr = 10 * (true.model.njoints - 1)
    link = fit.base.index < nr
    for q, err in zip(Q, np.abs(g_id - g_true)):
        Y = pin.computeJointTorqueRegressor(true.model, true.data, q, np.zeros(7), np.zeros(7))
        bound = np.abs(Y[:, fit.base.index[link]]) @ fit.beta_std[link]
        assert np.all(err <= 4 * bound + 1e-9), (err, bound)
        assert np.all(bound <= 0.01 * scale + 0.02 / 4)
    worst = np.abs(g_id - g_true).max(axis=0)
    assert np.all(worst <= 0.01 * scale + 0.02), worst
    off = np.abs(g_wrong - g_true).max(axis=0)
    assert np.all(off[scale > 1.0] >= 0.19 * scale[scale > 1.0])


def test_round_trip_through_the_yaml_file(case, tmp_path):
    true, wrong, fit = case
    fs = fit.to_joint_friction_set()
    sec = fs.extra["rigid_body"]
    assert sec["joints"] == list(true.joint_names) and sec["gravity"] == [0.0, 0.0, -9.81]
    assert sec["armature"] is True and sec["regressor_columns"] == 10 * 7 + 7
    assert sec["beta"] == [float(x) for x in fit.beta] and len(sec["names"]) == len(fit.beta)
    back = read_joint_friction(write_joint_friction(tmp_path / "joint_friction.yaml", fs))
    assert back.extra["rigid_body"] == sec  # floats exactly (YAML writes repr)
    a = fs.identified_gravity("arm7")  # a bundled name / URDF path loads the section's joints
    b = back.identified_gravity(UrdfDynamics("arm7"))
    for q in _configurations(true, 10, seed=1):
        assert np.array_equal(a.torque(q), b.torque(q))


def test_equivalent_inertias_give_the_regressors_gravity(case):
    """The fast path (Pinocchio's gravity on inertias π* with Y(q,0,0) π* = Y(q,0,0) β̄) agrees
    with the regressor itself to rounding (1e-9 of max |g|) at configurations it was not built
    on."""
    true, _, fit = case
    ig = fit.to_joint_friction_set().identified_gravity("arm7")
    assert ig.equivalent_inertias
    Q = _configurations(true, 30, seed=3)
    fast = np.array([ig.torque(q) for q in Q])
    ig.equivalent_inertias = False  # the regressor path (its model's inertias play no part)
    slow = np.array([ig.torque(q) for q in Q])
    nr = 10 * (true.model.njoints - 1)
    link = fit.base.index < nr
    ref = np.array([pin.computeJointTorqueRegressor(true.model, true.data, q, np.zeros(7),
                                                    np.zeros(7))[:, fit.base.index[link]]
                    @ fit.beta[link] for q in Q])
    np.testing.assert_allclose(slow, ref, rtol=0, atol=1e-12 * np.abs(ref).max())
    np.testing.assert_allclose(fast, ref, rtol=0, atol=1e-9 * np.abs(ref).max())


def test_joint_order_of_the_model_is_the_order_of_q(case):
    """A model listing the joints in another order: q and g in that order."""
    true, _, fit = case
    sec = fit.to_joint_friction_set().extra["rigid_body"]
    rev = list(reversed(true.joint_names))
    ig = IdentifiedGravity(UrdfDynamics("arm7"), sec)
    ig_rev = IdentifiedGravity(UrdfDynamics("arm7", joint_names=rev), sec)
    out = np.empty(7)
    for q in _configurations(true, 5, seed=2):
        assert ig_rev.torque(q[::-1], out=out) is out
        np.testing.assert_allclose(out, ig.torque(q)[::-1], rtol=0, atol=1e-12)


def test_no_section_where_the_data_cannot_support_one(case):
    """dynamics urdf: no β; the gear law with the rigid body identified: β only up to a scale
    (undone by the efficiencies), so no gravity either; the accessor says so."""
    true, _, _ = case
    dyn = UrdfDynamics("planar_2link")
    fr = {n: JointFriction(0.5, 0.4, 0.2, 0.3, eta_f=0.8, eta_b=0.6) for n in dyn.joint_names}
    t, q, v, a = multisine_trajectory(dyn, duration=8.0, rate=250.0, seed=2)
    rec = simulate_arm_recording(dyn, t, q, v, a, fr, seed=3)
    for dynamics, law in (("urdf", "asymmetric"), ("identify", "gear")):
        fs = fit_arm_friction(rec.q, v, a, rec.tau, dyn, dynamics=dynamics, law=law,
                              dv=0.02).to_joint_friction_set()
        assert "rigid_body" not in fs.extra
        with pytest.raises(ValueError, match=r"jf.yaml: no 'rigid_body:' section: .*--dynamics "
                                             r"identify"):
            fs.identified_gravity(dyn, "jf.yaml")


# -- bad input -------------------------------------------------------------------------------------
@pytest.mark.parametrize("change, text", [
    (lambda s: s.pop("beta"), r"rigid_body: missing beta"),
    (lambda s: s["beta"].pop(), r"rigid_body.beta: expected \d+ numbers, got \d+ entries"),
    (lambda s: s["beta"].__setitem__(3, float("nan")), r"rigid_body.beta\[3\]: expected a finite"),
    (lambda s: s["beta_std"].__setitem__(0, -1.0), r"rigid_body.beta_std\[0\]: .* >= 0"),
    (lambda s: s["index"].__setitem__(1, 500), r"rigid_body.index\[1\]: expected an integer in"),
    (lambda s: s.__setitem__("gravity", [0.0, -9.81]), r"rigid_body.gravity: expected 3"),
    (lambda s: s.__setitem__("armature", "yes"), r"rigid_body.armature: expected true or false"),
    (lambda s: s.__setitem__("joints", ["a", "a"]), r"rigid_body.joints: expected a list of "
                                                    r"distinct"),
    (lambda s: s["names"].__setitem__(0, "joint_a7.m"), r"rigid_body.names\[0\]: 'joint_a7.m' "
                                                        r"in the file, column \d+ .* not the"),
    (lambda s: s.__setitem__("locked_joints", ["joint_a1"]), r"rigid_body.locked_joints: "
                                                             r"expected a list of joint names not"),
])
def test_bad_sections_name_the_field(case, change, text):
    _, _, fit = case
    sec = fit.to_joint_friction_set().extra["rigid_body"]
    sec = {k: list(v) if isinstance(v, list) else v for k, v in sec.items()}
    change(sec)
    with pytest.raises(ValueError, match=text):
        IdentifiedGravity(UrdfDynamics("arm7"), parse_rigid_body(sec, "jf.yaml"))
    with pytest.raises(ValueError, match=r"^jf.yaml: rigid_body"):
        IdentifiedGravity(UrdfDynamics("arm7"), sec, "jf.yaml")


def test_a_fit_with_locked_joints_gives_no_gravity():
    """fric identify --joints: the other joints locked where they were recorded; the section
    names them and the identified gravity is refused (it holds only with them there)."""
    from fric_core.arm_identification import base_parameters
    from fric_core.arm_identification.rigid_body import rigid_body_from_fit
    sub = UrdfDynamics("arm7", joint_names=["joint_a2", "joint_a4"],
                       locked_positions={"joint_a3": 0.4})
    base = base_parameters(sub)
    beta = base.beta(np.concatenate([sub.model.inertias[i].toDynamicParameters()
                                     for i in range(1, sub.model.njoints)]))
    rb = rigid_body_from_fit(sub, base, beta, np.zeros_like(beta))
    assert rb.locked_joints == ("joint_a1", "joint_a3", "joint_a5", "joint_a6", "joint_a7")
    with pytest.raises(ValueError, match=r"rigid_body.locked_joints: identified with "
                                         r"\['joint_a1', 'joint_a3'.* gravity: urdf"):
        IdentifiedGravity(sub, rb.to_dict())


def test_another_arm_or_other_joints_are_refused(case):
    _, _, fit = case
    fs = fit.to_joint_friction_set()
    with pytest.raises(ValueError, match=r"rigid_body.joints: identified for .* the model has"):
        identified_gravity(fs, UrdfDynamics("arm7", joint_names=["joint_a1", "joint_a2"]))
    with pytest.raises(ValueError, match=r"rigid_body.joints: identified for"):
        identified_gravity(fs, UrdfDynamics("planar_2link"))
    with pytest.raises(ValueError, match=r"urdf: .*no such file"):
        identified_gravity(fs, "/nonexistent/arm.urdf")
    ig = identified_gravity(fs, "arm7")
    with pytest.raises(ValueError, match=r"q: expected shape \(7,\)"):
        ig.torque(np.zeros(6))
    with pytest.raises(ValueError, match=r"q: non-finite value nan at joint index 2"):
        ig.torque([0, 0, np.nan, 0, 0, 0, 0])
