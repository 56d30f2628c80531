"""Zero-phase velocity and acceleration of recorded arm positions (arm_identification.signals).

Physical facts checked: the derived v, a of an encoder-quantised sinusoid are within the error
the filter's design predicts; there is no delay (a causal filter would shift v by its group
delay); a gap in the stamps splits the record and the filter never rings across it; the noise
variances handed to the EIV fit match the derivatives' actual noise (Monte-Carlo).
"""

import math

import numpy as np
import pytest
import scipy.signal

from fric_core.arm_identification.signals import (derivative_filter, differentiate,
                                                  position_noise_variance, prepare, segments)

DT = 1e-3
COUNT = 2 * np.pi / 2 ** 17  # one count of a 17-bit encoder [rad]
F1 = 0.73  # [Hz], not commensurate with the sampling (the quantisation error is then white)


def _quantise(q):
    return COUNT * np.round(q / COUNT)


def _motion(t, phase=0.0):
    w = 2 * np.pi * F1
    q = np.sin(w * t + phase) + 0.3 * np.sin(3.1 * w * t)
    v = w * np.cos(w * t + phase) + 0.3 * 3.1 * w * np.cos(3.1 * w * t)
    a = -w ** 2 * np.sin(w * t + phase) - 0.3 * (3.1 * w) ** 2 * np.sin(3.1 * w * t)
    return q, v, a


def test_derivative_of_a_quantised_sinusoid_within_the_designed_error():
    t = np.arange(8000) * DT
    q, v, a = _motion(t)
    d = differentiate(t, _quantise(q))
    f = d.filters[0]
    inner = slice(d.edge, -d.edge)
    # deterministic error of each harmonic (amplitude A, ω): the pass band's droop
    # 1 − 1/(1 + (f/fc)^(2·order)) ≤ (f/fc)^(2·order), the central differences' ω²dt²/6 (v) and
    # ω²dt²/12 (a); at most 1e-3 × the response to the odd padding's curvature jump left at
    # the trimmed edge (EDGE_TOLERANCE), bounded by 2·|a|max·1e-3 in a, that × the edge time in v
    harmonics = [(1.0, 2 * np.pi * F1), (0.3, 2 * np.pi * 3.1 * F1)]
    droop = [(w / (2 * np.pi * f.cutoff_hz)) ** (2 * f.order) for _, w in harmonics]
    a_max = sum(A * w ** 2 for A, w in harmonics)
    bound_v = sum(A * w * (dr + (w * DT) ** 2 / 6) for (A, w), dr in zip(harmonics, droop))
    bound_a = sum(A * w ** 2 * (dr + (w * DT) ** 2 / 12) for (A, w), dr in zip(harmonics, droop))
    bound_v += 2e-3 * a_max * f.edge * DT + 6 * math.sqrt(d.var_v)  # + 6σ of the noise
    bound_a += 2e-3 * a_max + 6 * math.sqrt(d.var_a)
    err_v = np.abs(d.v[inner] - v[inner])
    err_a = np.abs(d.a[inner] - a[inner])
    assert err_v.max() < bound_v
    assert err_a.max() < bound_a
    # the bound is not loose: the error is the noise, of the predicted size
    assert 0.5 < np.std(d.a[inner] - a[inner]) / math.sqrt(d.var_a) < 1.5
    assert bound_a < 0.05 * a_max  # and small: the 17-bit encoder gives a to a few %


def test_no_phase_lag_where_a_causal_filter_delays():
    t = np.arange(20000) * DT
    w = 2 * np.pi * 0.5
    q = np.sin(w * t)
    d = differentiate(t, q)
    inner = slice(d.edge, d.edge + 18000)  # whole periods (2 s each)

    def delay(v):  # time by which v lags cos(ωt), from its projections on cos and sin
        c = np.sum(v[inner] * np.cos(w * t[inner]))
        s = np.sum(v[inner] * np.sin(w * t[inner]))
        return math.atan2(s, c) / w

    assert abs(delay(d.v)) < 1e-3 * DT
    causal = np.gradient(scipy.signal.sosfilt(d.filters[0].sos, q), DT)
    assert delay(causal) > 10 * DT  # what zero phase avoids: ~ the group delay, tens of ms


def test_a_gap_splits_and_the_filter_does_not_ring_across_it():
    t = np.arange(6000) * DT
    t = np.concatenate([t[:3000], t[3050:]])  # 50 ms lost (the arm moved meanwhile)
    assert [(s.start, s.stop) for s in segments(t)] == [(0, 3000), (3000, 5950)]
    backwards = t.copy()
    backwards[4000] = backwards[3999]  # a repeated stamp also splits
    assert len(segments(backwards)) == 3
    q, v, a = _motion(t)
    qm = _quantise(q)
    effort = 2.0 * a
    p = prepare(t, np.column_stack([qm, qm]), np.column_stack([effort, effort]),
                filter_effort=True)
    assert len(p.segments) == 2 and p.effort_filtered and p.settle_time > 0
    assert not np.any(np.diff(p.rows[p.segments[0]]) != 1)
    assert p.rows[p.segments[0]][-1] < 3000 <= p.rows[p.segments[1]][0]
    # everywhere kept, including next to the gap: v within 6σ + the edge allowance
    err = np.abs(p.v[:, 0] - v[p.rows])
    assert err.max() < 6 * math.sqrt(p.var_v[0]) + 2e-3 * 40.0 * p.settle_time
    # filtered like a: the effort 2a matches 2 × the derived a
    np.testing.assert_allclose(p.effort[:, 0], 2.0 * a[p.rows], atol=2e-3 * 2 * 40.0)
    # without splitting, the filter would run across the jump in q
    whole = differentiate(t, qm, max_gap=1.0)
    assert np.max(np.abs(whole.v[2990:3010] - v[2990:3010])) > 10 * err.max()


def test_jittered_stamps_are_resampled():
    rng = np.random.default_rng(3)
    t = np.arange(6000) * DT + rng.uniform(-0.2, 0.2, 6000) * DT
    q, v, a = _motion(t)
    d = differentiate(t, q)
    inner = slice(d.edge, -d.edge)
    # linear interpolation on a 1 ms grid: error ≤ |a|·dt²/8 in q, far below 1 count
    assert np.max(np.abs(d.v[inner] - v[inner])) < 1e-3 * np.max(np.abs(v))


@pytest.mark.parametrize("noise", ["quantisation", "gaussian"])
def test_noise_variances_match_monte_carlo(noise):
    rng = np.random.default_rng(7)
    t = np.arange(5000) * DT
    sigma = np.array([1e-5, 1e-4])  # two joints, different noise
    dev_v, dev_a, est_v, est_a, true_q = [], [], [], [], []
    for _ in range(40):
        q, _, _ = _motion(t, rng.uniform(0, 2 * np.pi))
        clean = np.column_stack([q, 0.5 * q])
        if noise == "quantisation":
            meas = _quantise(clean)
            true_q.append(np.var(meas - clean, axis=0))
        else:
            meas = clean + sigma * rng.standard_normal(clean.shape)
            true_q.append(sigma ** 2)
        d, d0 = differentiate(t, meas), differentiate(t, clean)
        inner = slice(d.edge, -d.edge)
        dev_v.append(d.v[inner] - d0.v[inner])
        dev_a.append(d.a[inner] - d0.a[inner])
        est_v.append(d.var_v)
        est_a.append(d.var_a)
    ratio_v = np.mean(est_v, axis=0) / np.var(np.concatenate(dev_v), axis=0)
    ratio_a = np.mean(est_a, axis=0) / np.var(np.concatenate(dev_a), axis=0)
    # 40 × 4774 samples correlated over ~25 (the filter's width): the MC variance is good to
    # ~5 %; the estimator to ~2 %: 20 % is a failure of the method, not chance
    np.testing.assert_allclose(ratio_v, 1.0, atol=0.2)
    np.testing.assert_allclose(ratio_a, 1.0, atol=0.2)


def test_measured_velocity_is_filtered_and_its_noise_propagated():
    rng = np.random.default_rng(11)
    t = np.arange(6000) * DT
    q, v, a = _motion(t)
    sigma_v = 2e-3
    vm = v + sigma_v * rng.standard_normal(t.size)
    p = prepare(t, q, 3.0 * a, v=vm)
    assert p.velocity_source == "measured"
    np.testing.assert_allclose(p.var_source, sigma_v ** 2, rtol=0.1)
    f = derivative_filter(DT)
    np.testing.assert_allclose(p.var_a, sigma_v ** 2 * f.gain_v, rtol=0.1)
    assert np.max(np.abs(p.a[:, 0] - a[p.rows])) < 6 * math.sqrt(p.var_a[0]) + 2e-3 * 40


def test_position_noise_is_the_encoder_quantisation():
    t = np.arange(20000) * DT
    q, _, _ = _motion(t)
    # many counts per sample: the rounding error is uniform on ±COUNT/2, variance COUNT²/12
    assert position_noise_variance(t, _quantise(q)) == pytest.approx(COUNT ** 2 / 12, rel=0.1)


def test_settle_time_is_where_a_filtered_coulomb_step_settles():
    f = derivative_filter(DT)
    t = np.arange(4000) * DT
    step = np.where(t < 2.0, -1.0, 1.0)  # Coulomb friction at a reversal, C = 1
    out = f.lowpass(step[:, None])[:, 0]
    k = 2000 + int(round(f.settle_time / DT))
    assert np.max(np.abs(out[k:3000] - 1.0)) <= 0.01 * 2  # within 1 % of the jump
    assert np.max(np.abs(out[2000 + 5:2000 + k // 4] - 1.0)) > 0.02  # and not before


def test_bad_input_names_the_problem():
    t = np.arange(1000) * DT
    q = np.sin(t)
    bad = q.copy()
    bad[10] = np.nan
    with pytest.raises(ValueError, match="q: contains NaN"):
        differentiate(t, bad)
    with pytest.raises(ValueError, match="cutoff_hz"):
        differentiate(t, q, cutoff_hz=450.0)
    with pytest.raises(ValueError, match="recording too short"):
        prepare(t[:200], q[:200, None], q[:200, None])
    with pytest.raises(ValueError, match="effort: 2 columns"):
        prepare(t, q[:, None], np.column_stack([q, q]))


def test_raw_effort_keeps_the_friction_fit_unbiased_and_its_std_honest():
    """Why prepare() leaves the effort raw by default: on a simulated arm7 (multi-sine, 20 s at
    500 Hz, 17-bit encoders, 0.03 N·m torque noise; OLS, Δv = 0.05 rad/s) the raw effort gives
    errors within a few of their std; the effort through the same 20 Hz filter smears the
    Coulomb step that the model's sign(v) keeps sharp, and the estimates land 10–17 std off."""
    from fric_core.arm_identification.fit import fit_arm_friction
    from fric_core.arm_identification.joint_friction import JointFriction
    from fric_core.arm_identification.synthetic import (multisine_trajectory,
                                                        simulate_arm_recording)
    from fric_core.transmission.urdf_dynamics import UrdfDynamics

    dyn = UrdfDynamics("arm7")
    t, q, v, a = multisine_trajectory(dyn, duration=20.0, rate=500.0, seed=1)[:4]
    true = {n: JointFriction(Cp=0.8 + 0.1 * j, Cn=0.6 + 0.1 * j, bp=0.3, bn=0.4)
            for j, n in enumerate(dyn.joint_names)}
    rec = simulate_arm_recording(dyn, t, q, v, a, true, seed=2)
    worst = {}
    for filtered in (False, True):
        p = prepare(rec.t, rec.q, rec.tau, filter_effort=filtered)
        fit = fit_arm_friction(p.q, p.v, p.a, p.effort, dyn, method="ols", dv=0.05)
        worst[filtered] = max(abs(fit.joints[n][k] - getattr(true[n], k)) / fit.std[n][k]
                              for n in dyn.joint_names for k in ("Cp", "Cn", "bp", "bn"))
    assert worst[False] < 4.0  # 28 estimates: |z| < 4 unless biased
    # (5.8 in the batch-means stds of admissible.py, which see part of the filtered noise's
    # colour; 10-17 in the classical ones)
    assert worst[True] > 5.0


@pytest.mark.parametrize("kind", ["central", "backward", "white"])
def test_measured_velocity_noise_whatever_its_origin(kind):
    """ros2_control's velocity is often a difference of the encoder positions (its noise is
    then the positions' quantisation differenced: no power at low frequency, so it must not be
    propagated as white); or a sensor's own white noise. Either way var_v and var_a must match
    the actual noise of the filtered v and its derivative (Monte-Carlo; the noise-free
    reference goes through the same differencing, so the backward difference's half-step lag is
    signal, not noise)."""
    rng = np.random.default_rng(5)
    t = np.arange(6000) * DT

    def measured(q, qd, noise):
        if kind == "central":
            return np.gradient(q, DT)
        if kind == "backward":
            return np.concatenate([[qd[0]], np.diff(q) / DT])
        return qd + noise

    dev_v, dev_a, est = [], [], []
    for _ in range(12):
        q, qd, _ = _motion(t, rng.uniform(0, 2 * np.pi))
        qm = _quantise(q)
        noise = 1e-3 * rng.standard_normal(t.size)
        p = prepare(t, qm, qm, v=measured(qm, qd, noise))
        p0 = prepare(t, q, q, v=measured(q, qd, 0.0))
        dev_v.append(p.v - p0.v)
        dev_a.append(p.a - p0.a)
        est.append((p.var_v[0], p.var_a[0]))
        assert any("difference of the positions" in n for n in p.notes) == (kind != "white")
    ratio = np.mean(est, axis=0) / [np.var(np.concatenate(dev_v)), np.var(np.concatenate(dev_a))]
    np.testing.assert_allclose(ratio, 1.0, atol=0.2)
