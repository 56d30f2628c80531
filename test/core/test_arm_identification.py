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
