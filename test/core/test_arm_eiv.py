"""Issue 15: the errors-in-variables estimator for arms (paper 003 eq. (6)).

Velocities and accelerations of a real recording are differentiated encoder positions: they carry
noise. Paper 003 (after eq. (5)): least squares then "will contain a bias" — the classic
attenuation: a regressor's noise inflates its column's spread, so the coefficient of every column
linear in the noisy signal (the inertial parameters: the rigid-body regressor is linear in q̈; the
rotor inertias) shrinks towards zero, and through the inertial torque it no longer explains, the
friction estimates move too. Eq. (6) subtracts the noise moments from the normal matrix and
removes the bias. Here white noise of known variance is added to the exact q̇, q̈ of a simulated
arm (fixed seeds) and the estimates are compared with the truth in units of their reported
standard deviations: OLS lands many standard deviations off (a bias), EIV within 4 (what an
unbiased estimator with honest standard deviations gives, 28 values: P(any |z| > 4) ≈ 0.2 %).
"""

import numpy as np
import pytest

from fric_core.arm_identification.fit import fit_arm_friction
from fric_core.arm_identification.joint_friction import JointFriction
from fric_core.arm_identification.synthetic import multisine_trajectory, simulate_arm_recording
from fric_core.transmission.urdf_dynamics import UrdfDynamics

SIGMA_A = 2.0    # rad/s², acceleration noise (an encoder differentiated twice, lightly filtered)
SIGMA_V = 0.03   # rad/s
DV = 0.15        # 5 σ_v: no row's velocity sign is flipped by the noise


def _case(name, seed=4):
    dyn = UrdfDynamics(name)
    n = dyn.n
    fr = {nm: JointFriction(0.5 + 0.1 * i, 0.4 + 0.05 * i, 0.2 + 0.05 * i, 0.3 - 0.02 * i)
          for i, nm in enumerate(dyn.joint_names)}
    arm = np.linspace(0.3, 0.05, n)
    t, q, v, a = multisine_trajectory(dyn, duration=20.0, rate=250.0, amplitude=1.0, seed=seed)
    rec = simulate_arm_recording(dyn, t, q, v, a, fr, armature=arm, seed=seed + 1)
    rng = np.random.default_rng(seed + 2)
    vn = v + SIGMA_V * rng.standard_normal(v.shape)
    an = a + SIGMA_A * rng.standard_normal(a.shape)
    noise = {"var_v": np.full(n, SIGMA_V ** 2), "var_a": np.full(n, SIGMA_A ** 2)}
    return dyn, fr, arm, rec, vn, an, noise


@pytest.fixture(scope="module")
def arm7():
    return _case("arm7")


def _friction_z(fit, fr):
    return np.array([(fit.joints[nm][k] - getattr(p, k)) / fit.std[nm][k]
                     for nm, p in fr.items() for k in ("Cp", "Cn", "bp", "bn")])


def test_eiv_removes_the_ols_bias_of_the_identified_arm(arm7):
    dyn, fr, arm, rec, vn, an, noise = arm7
    pi = np.concatenate([dyn.model.inertias[i].toDynamicParameters()
                         for i in range(1, dyn.model.njoints)])
    fits = {m: fit_arm_friction(rec.q, vn, an, rec.tau, dyn, method=m, dv=DV, noise=noise)
            for m in ("ols", "eiv")}
    beta = fits["ols"].base.beta(pi, arm)
    z_beta = {m: (f.beta - beta) / f.beta_std for m, f in fits.items()}
    z_fric = {m: _friction_z(f, fr) for m, f in fits.items()}
    # OLS: the inertial parameters shrink (attenuation) far beyond their spread, the friction
    # follows; EIV: every estimate within 4 of its standard deviations
    big = np.abs(beta) > 0.05 * np.abs(beta).max()
    assert np.median(fits["ols"].beta[big] / beta[big]) < 0.9
    assert np.max(np.abs(z_beta["ols"])) > 20
    # (the friction follows, but its stds now carry the time-correlated misfit the
    # attenuation leaves: the batch-means covariance of admissible.py covers much of it)
    assert np.max(np.abs(z_fric["ols"])) > np.max(np.abs(z_fric["eiv"]))
    assert np.max(np.abs(z_beta["eiv"])) < 4
    assert np.max(np.abs(z_fric["eiv"])) < 4
    assert fits["eiv"].method == "eiv" and fits["eiv"].noise["var_a"][0] == SIGMA_A ** 2


def test_eiv_removes_the_attenuation_of_the_rotor_inertias():
    """dynamics="urdf": the rotor-inertia columns (q̈_j) are the noisy regressors, the noisy
    rnea(q, q̇, q̈) sits in the response (its error correlates with theirs: S_Ay ≠ 0)."""
    dyn, fr, arm, rec, vn, an, noise = _case("planar_2link", seed=7)
    z = {}
    for m in ("ols", "eiv"):
        fit = fit_arm_friction(rec.q, vn, an, rec.tau, dyn, dynamics="urdf", method=m, dv=DV,
                               noise=noise)
        got = np.array(list(fit.armature.values()))
        z[m] = (got - arm) / np.array(list(fit.armature_std.values()))
        zf = _friction_z(fit, fr)
        if m == "eiv":
            assert np.all(np.abs(zf) < 4)
    assert np.all(z["ols"] < -6)  # shrunk towards zero
    assert np.all(np.abs(z["eiv"]) < 4)


def test_eiv_without_noise_is_ols(arm7):
    dyn, fr, arm, rec, vn, an, noise = arm7
    zero = {"var_v": np.zeros(dyn.n), "var_a": np.zeros(dyn.n)}
    ols = fit_arm_friction(rec.q, rec.v, rec.a, rec.tau, dyn, dynamics="urdf", dv=0.02)
    eiv = fit_arm_friction(rec.q, rec.v, rec.a, rec.tau, dyn, dynamics="urdf", method="eiv",
                           dv=0.02, noise=zero)
    for nm in fr:
        for k, val in ols.joints[nm].items():
            assert eiv.joints[nm][k] == pytest.approx(val, abs=1e-10)
            assert eiv.std[nm][k] == pytest.approx(ols.std[nm][k], rel=1e-6)


def test_eiv_needs_the_noise_variances(arm7):
    dyn, fr, arm, rec, vn, an, noise = arm7
    with pytest.raises(ValueError, match="noise: method='eiv' needs"):
        fit_arm_friction(rec.q, vn, an, rec.tau, dyn, method="eiv")
    with pytest.raises(ValueError, match="noise: var_a must be 7 finite variances"):
        fit_arm_friction(rec.q, vn, an, rec.tau, dyn, method="eiv",
                         noise={"var_v": noise["var_v"], "var_a": [-1.0] * 7})


def test_noise_larger_than_the_signal_is_named(arm7):
    """Variances so large that the corrected normal matrix of eq. (6) is not positive definite:
    a message naming noise=, not a wrong estimate."""
    dyn, fr, arm, rec, vn, an, noise = arm7
    huge = {"var_v": noise["var_v"], "var_a": np.full(dyn.n, 1e4)}
    with pytest.raises(ValueError, match="noise: the given velocity/acceleration noise variances "
                                         "exceed the regressors' spread"):
        fit_arm_friction(rec.q, vn, an, rec.tau, dyn, method="eiv", dv=DV, noise=huge)


def test_eiv_removes_the_ols_bias_of_the_efficiencies():
    """Gear law, URDF trusted: the drive/back-drive columns are τ_load = rnea(q, q̇, q̈) computed
    from the noisy q̈ (∂τ_load/∂q̈ = M(q)), so OLS attenuates 1/η_f and η_b like any inertial
    coefficient; EIV's correction of those columns removes it."""
    dyn = UrdfDynamics("arm7")
    n = dyn.n
    fr = {nm: JointFriction(0.5, 0.4, 0.2, 0.3, eta_f=0.85 - 0.02 * i, eta_b=0.75 - 0.03 * i)
          for i, nm in enumerate(dyn.joint_names)}
    t, q, v, a = multisine_trajectory(dyn, duration=20.0, rate=250.0, amplitude=1.0, seed=4)
    rec = simulate_arm_recording(dyn, t, q, v, a, fr, armature=np.linspace(0.3, 0.05, n), seed=5)
    rng = np.random.default_rng(6)
    sa, sv = 0.5, 0.003
    vn, an = v + sv * rng.standard_normal(v.shape), a + sa * rng.standard_normal(a.shape)
    noise = {"var_v": np.full(n, sv ** 2), "var_a": np.full(n, sa ** 2)}
    z = {}
    for m in ("ols", "eiv"):
        fit = fit_arm_friction(rec.q, vn, an, rec.tau, dyn, dynamics="urdf", law="gear",
                               method=m, dv=0.02, noise=noise)
        z[m] = np.array([(fit.joints[nm][k] - getattr(p, k)) / fit.std[nm][k]
                         for nm, p in fr.items() for k in ("eta_f", "eta_b")
                         if fit.determined[nm]["eta_f"] and fit.determined[nm]["eta_b"]])
        assert z[m].size >= 10  # joints a1…a5 or a6 at least
    assert np.max(np.abs(z["ols"])) > 5  # (batch-means stds, admissible.py: 5.4 here)
    assert np.max(np.abs(z["eiv"])) < 4
