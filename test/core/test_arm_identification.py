"""Issue 15, step 1: joint friction of a URDF arm (fric_core.arm_identification).

A simulated planar 2-link arm (the shipped ``planar_2link`` URDF) follows a smooth multi-sine
trajectory (q, q̇, q̈ analytic); its torques are ``rnea(q, q̇, q̈)`` plus paper 003's asymmetric
friction plus white torque noise (fixed seeds). The fit must recover the friction within the
issue's tolerances with the URDF trusted and with the rigid body identified, also when the URDF's
inertias are 20 % off.
"""

import numpy as np
import pinocchio as pin
import pytest

from fric_core.arm_identification import base_parameters, fit_arm_friction, friction_columns
from fric_core.transmission.urdf_dynamics import UrdfDynamics

TRUE = {"joint1": dict(Cp=0.50, Cn=0.40, bp=0.20, bn=0.30),
        "joint2": dict(Cp=0.30, Cn=0.35, bp=0.10, bn=0.15)}
NOISE = 0.02  # N·m, torque sensor noise (white)


def _trajectory(n, T=20.0, rate=200.0, seed=0):
    """Multi-sine q(t) per joint with analytic velocity and acceleration."""
    rng = np.random.default_rng(seed)
    t = np.arange(0.0, T, 1.0 / rate)
    w = 2 * np.pi * np.array([0.1, 0.23, 0.37, 0.51])
    q, v, a = (np.zeros((t.size, n)) for _ in range(3))
    for j in range(n):
        amp = rng.uniform(0.2, 0.5, w.size)
        ph = rng.uniform(0, 2 * np.pi, w.size)
        arg = np.outer(t, w) + ph
        q[:, j] = np.sin(arg) @ amp
        v[:, j] = np.cos(arg) @ (amp * w)
        a[:, j] = -np.sin(arg) @ (amp * w * w)
    return q, v, a


def _friction(v, names, true=TRUE):
    f = np.zeros_like(v)
    for j, name in enumerate(names):
        p = true[name]
        f[:, j] = np.where(v[:, j] > 0, p["Cp"] + p["bp"] * v[:, j],
                           np.where(v[:, j] < 0, -p["Cn"] + p["bn"] * v[:, j], 0.0))
    return f


def _simulate(dyn, seed=0):
    q, v, a = _trajectory(dyn.n, seed=seed)
    tau = np.array([pin.rnea(dyn.model, dyn.data, q[k], v[k], a[k]) for k in range(q.shape[0])])
    tau += _friction(v, dyn.joint_names)
    tau += np.random.default_rng(seed + 100).normal(0.0, NOISE, tau.shape)
    return q, v, a, tau


@pytest.fixture(scope="module")
def dyn():
    return UrdfDynamics("planar_2link")


@pytest.fixture(scope="module")
def wrong_dyn():
    """The same arm with every inertia (mass, first and second moments) scaled by 1.2."""
    d = UrdfDynamics("planar_2link")
    for i in range(1, d.model.njoints):
        d.model.inertias[i] = pin.Inertia.FromDynamicParameters(
            1.2 * d.model.inertias[i].toDynamicParameters())
    d.data = d.model.createData()
    return d


@pytest.fixture(scope="module")
def data(dyn):
    return _simulate(dyn, seed=0)


def _assert_recovered(fit):
    for name, p in TRUE.items():
        got = fit.joints[name]
        for k in ("Cp", "Cn"):
            assert abs(got[k] - p[k]) <= max(0.05 * p[k], 0.02), (name, k, got[k], p[k])
        for k in ("bp", "bn"):
            assert abs(got[k] - p[k]) <= max(0.10 * p[k], 0.01), (name, k, got[k], p[k])


@pytest.mark.parametrize("dynamics", ["urdf", "identify"])
def test_recovers_asymmetric_friction(dyn, data, dynamics):
    fit = fit_arm_friction(*data, dyn, dynamics=dynamics, dv=0.02)
    _assert_recovered(fit)
    assert fit.cond < 1e3
    assert all(abs(fit.residual_std[n] - NOISE) < 0.1 * NOISE for n in TRUE)
    if dynamics == "identify":
        pi = np.concatenate([dyn.model.inertias[i].toDynamicParameters()
                             for i in range(1, dyn.model.njoints)])
        assert np.allclose(fit.beta, fit.base.beta(pi), atol=4 * fit.beta_std.max() + 1e-9)
    else:
        assert fit.beta is None


def test_identify_does_not_depend_on_the_urdf_inertias(dyn, wrong_dyn, data):
    good = fit_arm_friction(*data, dyn, dynamics="identify", dv=0.02)
    wrong = fit_arm_friction(*data, wrong_dyn, dynamics="identify", dv=0.02)
    _assert_recovered(wrong)
    for name in TRUE:
        for k, val in good.joints[name].items():
            assert wrong.joints[name][k] == pytest.approx(val, abs=1e-9)
    # trusting the wrong URDF biases the fit: the identified rigid body is what saves it
    biased = fit_arm_friction(*data, wrong_dyn, dynamics="urdf", dv=0.02)
    assert any(abs(biased.joints[n][k] - TRUE[n][k]) > 0.10 * TRUE[n][k]
               for n in TRUE for k in ("bp", "bn", "Cp", "Cn"))


@pytest.mark.parametrize("dynamics", ["urdf", "identify"])
def test_standard_deviations_are_consistent(dyn, dynamics):
    worst = 0.0
    for seed in (1, 2, 3):
        fit = fit_arm_friction(*_simulate(dyn, seed=seed), dyn, dynamics=dynamics, dv=0.02)
        for name, p in TRUE.items():
            for k, val in p.items():
                s = fit.std[name][k]
                assert 0 < s < 0.05 * val
                worst = max(worst, abs(fit.joints[name][k] - val) / s)
    assert worst < 4.0


def test_band_rows_are_left_out():
    v = np.array([[0.5, -0.005], [-0.3, 0.2]])
    F, keep = friction_columns(v, dv=0.01)
    assert keep.tolist() == [True, False, True, True]
    assert F[0, :4].tolist() == [1.0, 0.5, 0.0, 0.0]
    assert F[2, :4].tolist() == [0.0, 0.0, -1.0, -0.3]
    assert F[3, 4:].tolist() == [1.0, 0.2, 0.0, 0.0]
    assert not F[1].any()


def test_base_set_of_the_planar_arm(dyn):
    b = base_parameters(dyn)
    assert len(b.index) == 4  # ZZ1R, MX2, MY2, ZZ2 of a planar 2R arm
    assert b.map.shape == (4, 20)


# -- bad input -------------------------------------------------------------------------------------
def test_nan_rows_are_named(dyn, data):
    q, v, a, tau = (x.copy() for x in data)
    tau[7, 1] = np.nan
    with pytest.raises(ValueError, match=r"tau: contains NaN or inf \(1 rows, first at row 7\)"):
        fit_arm_friction(q, v, a, tau, dyn)


def test_shape_mismatch_is_named(dyn, data):
    q, v, a, tau = data
    with pytest.raises(ValueError, match=r"a: expected shape \(N, n\) = \(4000, 2\)"):
        fit_arm_friction(q, v, a[:-1], tau, dyn)
    with pytest.raises(ValueError, match=r"tau: expected shape"):
        fit_arm_friction(q, v, a, tau[:, :1], dyn)


def test_one_direction_only_is_named(dyn, data):
    q, v, a, tau = (x.copy() for x in data)
    v[:, 1] = np.abs(v[:, 1])
    with pytest.raises(ValueError,
                       match=r"joint joint2: no samples with v < -dv \(one direction only\)"):
        fit_arm_friction(q, v, a, tau, dyn)


def test_bad_options_are_named(dyn, data):
    with pytest.raises(ValueError, match="dynamics: expected"):
        fit_arm_friction(*data, dyn, dynamics="guess")
    with pytest.raises(ValueError, match="noise: method='eiv' needs"):
        fit_arm_friction(*data, dyn, method="eiv")
    with pytest.raises(ValueError, match="method: expected"):
        fit_arm_friction(*data, dyn, method="tls")
    with pytest.raises(ValueError, match="law: expected"):
        fit_arm_friction(*data, dyn, law="lugre")
    with pytest.raises(ValueError, match="noise: missing 'var_a'"):
        fit_arm_friction(*data, dyn, method="eiv", noise={"var_v": [0.0, 0.0]})
    with pytest.raises(ValueError, match="armature: expected True, False or 2"):
        fit_arm_friction(*data, dyn, armature=[0.1])
    with pytest.raises(ValueError, match="dv: expected"):
        fit_arm_friction(*data, dyn, dv=-1.0)


def test_seven_joint_arm_with_inertias_20_percent_off():
    """The shipped 7-DOF arm (gravity acting): identify recovers every joint's friction with a
    URDF whose inertias are all 20 % high, as well as with the true one; trusting it does not."""
    true_dyn, wrong = UrdfDynamics("arm7"), UrdfDynamics("arm7")
    for i in range(1, wrong.model.njoints):
        wrong.model.inertias[i] = pin.Inertia.FromDynamicParameters(
            1.2 * wrong.model.inertias[i].toDynamicParameters())
    wrong.data = wrong.model.createData()
    true = {n: dict(Cp=0.5 + 0.1 * i, Cn=0.4 + 0.05 * i, bp=0.2 + 0.05 * i, bn=0.3 - 0.02 * i)
            for i, n in enumerate(true_dyn.joint_names)}
    q, v, a = _trajectory(true_dyn.n, seed=4)
    tau = np.array([pin.rnea(true_dyn.model, true_dyn.data, q[k], v[k], a[k])
                    for k in range(q.shape[0])])
    tau += _friction(v, true_dyn.joint_names, true)
    tau += np.random.default_rng(5).normal(0.0, NOISE, tau.shape)
    fit = fit_arm_friction(q, v, a, tau, wrong, dynamics="identify", dv=0.02)
    assert fit.cond < 1e3
    for n, p in true.items():
        for k, val in p.items():
            tol = max(0.05 * val, 0.02) if k in ("Cp", "Cn") else max(0.10 * val, 0.01)
            assert abs(fit.joints[n][k] - val) <= tol, (n, k, fit.joints[n][k], val)
            assert abs(fit.joints[n][k] - val) < 4 * fit.std[n][k], (n, k)
    biased = fit_arm_friction(q, v, a, tau, wrong, dynamics="urdf", dv=0.02)
    assert any(abs(biased.joints[n][k] - p[k]) > 0.10 * p[k] for n, p in true.items() for k in p)


# -- realistic recordings: encoders, rotor inertias, two arms, a URDF 20 % off ---------------------
@pytest.mark.parametrize("arm", ["planar_2link", "arm7"])
def test_recorded_arm_with_encoders_and_rotor_inertias(arm):
    """17-bit joint encoders, 0.03 N·m torque noise, rotor inertias (not in any URDF): the
    default fit (rigid body and rotor inertias identified) with a URDF 20 % off, and the URDF
    trusted when it is right, both recover the friction within the issue's tolerances, each
    error within 4 of its reported standard deviations, and the data determine every value."""
    from fric_core.arm_identification.synthetic import (multisine_trajectory,
                                                        simulate_arm_recording)
    from fric_core.arm_identification.joint_friction import JointFriction
    dyn = UrdfDynamics(arm)
    wrong = UrdfDynamics(arm)
    for i in range(1, wrong.model.njoints):
        wrong.model.inertias[i] = pin.Inertia.FromDynamicParameters(
            1.2 * wrong.model.inertias[i].toDynamicParameters())
    wrong.data = wrong.model.createData()
    fr = {n: JointFriction(0.6 - 0.05 * i, 0.45 + 0.05 * i, 0.25 + 0.03 * i, 0.2 + 0.04 * i)
          for i, n in enumerate(dyn.joint_names)}
    t, q, v, a = multisine_trajectory(dyn, duration=20.0, rate=250.0, amplitude=1.0, seed=8)
    rec = simulate_arm_recording(dyn, t, q, v, a, fr, armature=np.linspace(0.4, 0.05, dyn.n),
                                 seed=9)
    for model, dynamics in ((wrong, "identify"), (dyn, "urdf")):
        fit = fit_arm_friction(rec.q, rec.v, rec.a, rec.tau, model, dynamics=dynamics, dv=0.02)
        assert fit.warnings == [] and fit.cond < 1e3
        for n, p in fr.items():
            for k in ("Cp", "Cn", "bp", "bn"):
                val, err = getattr(p, k), abs(fit.joints[n][k] - getattr(p, k))
                tol = max(0.05 * val, 0.02) if k in ("Cp", "Cn") else max(0.10 * val, 0.01)
                assert err <= tol, (dynamics, n, k, fit.joints[n][k], val)
                assert err < 4 * fit.std[n][k], (dynamics, n, k)
                assert fit.determined[n][k]
        if dynamics == "urdf":  # the rotor inertias themselves, within 4 std
            got = np.array([fit.armature[n] for n in dyn.joint_names])
            sd = np.array([fit.armature_std[n] for n in dyn.joint_names])
            assert np.all(np.abs(got - rec.armature) < 4 * sd)
        fs = fit.to_joint_friction_set()
        assert fs.model == "asymmetric" and fs.joints[dyn.joint_names[0]].std["Cp"] > 0


def test_rotor_inertia_merges_with_the_first_links_inertia():
    """Joint 1 of both arms turns about a fixed axis: its rotor inertia and the first link's
    inertia about that axis multiply q̈_1 alone, so the base set holds only their sum."""
    from fric_core.arm_identification.regressor import separable_armature
    for arm, nb in (("planar_2link", 4), ("arm7", 43)):
        d = UrdfDynamics(arm)
        sep = separable_armature(d)
        assert not sep[0]
        assert len(base_parameters(d, armature=True).index) == nb + int(sep.sum())


def test_warnings_name_what_the_data_lack(dyn):
    """A joint that barely moves one way, or over a narrow speed range, is named."""
    q, v, a = _trajectory(dyn.n, seed=0)
    # joint2 moves at nearly one speed on its negative side: |v| within 0.30 … 0.35 rad/s
    v2 = v.copy()
    neg = v2[:, 1] < 0
    v2[neg, 1] = -0.3 - 0.05 * v2[neg, 1] / v2[neg, 1].min()
    tau = np.array([pin.rnea(dyn.model, dyn.data, q[k], v2[k], a[k]) for k in range(q.shape[0])])
    tau += _friction(v2, dyn.joint_names)
    tau += np.random.default_rng(3).normal(0.0, NOISE, tau.shape)
    fit = fit_arm_friction(q, v2, a, tau, dyn, dynamics="urdf", dv=0.02)
    assert not fit.determined["joint2"]["bn"]
    assert any("joint joint2" in w and "viscous bn undetermined" in w for w in fit.warnings)
    assert fit.determined["joint1"]["bn"]
    # a handful of samples on one side
    v3 = v.copy()
    neg = np.flatnonzero(v3[:, 0] < -0.02)
    v3[neg[50:], 0] = 0.0
    fit = fit_arm_friction(q, v3, a, tau, dyn, dynamics="urdf", dv=0.02)
    assert any("joint joint1: only 50 samples with v < -dv" in w for w in fit.warnings)


@pytest.mark.parametrize("law", ["asymmetric", "gear"])
def test_prediction_on_a_held_out_part(law):
    """Fitted on the first 15 s, the model predicts the last 5 s of the recording to within the
    torque noise (0.03 N·m) outside the Δv band: RMS error < 1.25 × noise on every joint."""
    from fric_core.arm_identification.joint_friction import JointFriction
    from fric_core.arm_identification.synthetic import (multisine_trajectory,
                                                        simulate_arm_recording)
    dyn = UrdfDynamics("arm7")
    g = law == "gear"
    fr = {n: JointFriction(0.5, 0.4, 0.2, 0.3, eta_f=0.8 if g else None, eta_b=0.7 if g else None)
          for n in dyn.joint_names}
    t, q, v, a = multisine_trajectory(dyn, duration=20.0, rate=250.0, seed=2)
    rec = simulate_arm_recording(dyn, t, q, v, a, fr, armature=np.full(dyn.n, 0.1), seed=3)
    k = int(0.75 * t.size)
    fit = fit_arm_friction(rec.q[:k], v[:k], a[:k], rec.tau[:k], dyn, dv=0.02, law=law)
    pred = fit.predict(rec.q[k:], v[k:], a[k:])
    moving = np.abs(v[k:]) > 0.02
    err = np.where(moving, pred - rec.tau[k:], 0.0)
    rms = np.sqrt((err ** 2).sum(axis=0) / moving.sum(axis=0))
    assert np.all(rms < 1.25 * rec.torque_noise_std), rms


def test_poorly_conditioned_regressor_is_named(dyn):
    """Joint 2 moving ±0.01 rad: its link's parameters are barely excited (condition number above
    COND_WARN), and its viscous terms, over a 0.03 rad/s speed range, are not determined."""
    from fric_core.arm_identification.fit import COND_WARN
    q, v, a = _trajectory(dyn.n, seed=0)
    for x in (q, v, a):
        x[:, 1] *= 0.02
    tau = np.array([pin.rnea(dyn.model, dyn.data, q[k], v[k], a[k]) for k in range(q.shape[0])])
    tau += _friction(v, dyn.joint_names)
    tau += np.random.default_rng(3).normal(0.0, NOISE, tau.shape)
    fit = fit_arm_friction(q, v, a, tau, dyn, dv=0.002)
    assert fit.cond > COND_WARN
    assert any(w.startswith("poorly conditioned regressor: condition number") for w in fit.warnings)
    assert not fit.determined["joint2"]["bp"] and not fit.determined["joint2"]["bn"]
    assert fit.determined["joint1"]["Cp"]
