"""A recorded velocity that lags the positions (issue 23 item 5): :func:`estimate_velocity_lag`
and its use in :func:`prepare`.

Recordings: arm7's multi-sine (0.1–0.51 Hz) at 200 Hz, 17-bit encoder positions, a velocity
column with white noise (0.01 rad/s, about a drive's velocity estimate), taken from the analytic
velocity on a 2 kHz grid ``lag`` earlier (so a lag of 30.5 samples is exact). Tolerances: the
estimator resolves sub-sample lags (parabola through the correlation peak); with this noise its
error was ≤ 0.6 ms in trials, the test allows half a sample (2.5 ms, which is also < 10 % of every
lag tried). A first-order filter of time constant T delays a sine of angular frequency ω by
atan(ωT)/ω, between that at the highest frequency (0.51 Hz) and T itself: the estimate must lie
there. An unlagged velocity and a backward difference Δq/dt (half a sample late) stay below the
one-sample threshold.
"""

import re

import numpy as np
import pytest
import scipy.signal

from fric_core.arm_identification.signals import estimate_velocity_lag, prepare
from fric_core.arm_identification.synthetic import multisine_trajectory
from fric_core.transmission.urdf_dynamics import UrdfDynamics

FINE = 2000.0  # Hz, the grid the lag is taken on
DECIMATE = 10  # → 200 Hz recording
STEP = DECIMATE / FINE
RES = 2 * np.pi / 2 ** 17
NOISE_V = 0.01  # rad/s


@pytest.fixture(scope="module")
def motion():
    dyn = UrdfDynamics("arm7")
    return dyn, *multisine_trajectory(dyn, duration=40.0, rate=FINE, seed=1)


def _recording(motion, lag: float = 0.0, tau: float = 0.0, seed: int = 0, joints=None):
    """(t, q, v_recorded, v_true) at 200 Hz; v delayed by ``lag`` [s] and/or first-order
    filtered with time constant ``tau`` [s], for ``joints`` (default all)."""
    dyn, t, q, v, _ = motion
    shift = int(round(lag * FINE))
    lead = 2000  # 1 s: room for the delay and the filter's start
    idx = np.arange(lead, t.size, DECIMATE)
    vr = v.copy()
    if tau > 0:
        b, a = scipy.signal.bilinear([1.0], [tau, 1.0], fs=FINE)
        vr = scipy.signal.lfilter(b, a, v, axis=0, zi=np.outer(scipy.signal.lfilter_zi(b, a),
                                                               v[0]))[0]
    cols = np.arange(dyn.n) if joints is None else np.asarray(joints)
    out = v[idx].copy()
    out[:, cols] = vr[idx - shift][:, cols]
    rng = np.random.default_rng(seed)
    out += rng.normal(0.0, NOISE_V, out.shape)
    return t[idx] - t[idx[0]], np.round(q[idx] / RES) * RES, out, v[idx]


@pytest.mark.parametrize("lag", [0.1, 0.1525, 0.2, 0.3])
def test_pure_delay_found_to_half_a_sample(motion, lag):
    t, q, v, _ = _recording(motion, lag=lag)
    est = estimate_velocity_lag(t, q, v)
    assert est.step == pytest.approx(STEP)
    assert np.all(np.abs(est.lag - lag) < 0.5 * STEP), est.lag
    assert np.all(np.abs(est.lag - lag) < 0.1 * lag)
    assert est.flagged.all() and not est.at_limit.any()
    assert np.all(est.correlation > 0.99) and np.allclose(est.gain, 1.0, atol=0.02)


def test_first_order_filter_found_between_its_phase_delays(motion):
    tau = 0.2
    t, q, v, _ = _recording(motion, tau=tau)
    est = estimate_velocity_lag(t, q, v)
    w_max = 2 * np.pi * 0.51
    assert np.all(est.lag > np.arctan(w_max * tau) / w_max) and np.all(est.lag < tau), est.lag
    assert est.flagged.all()
    assert np.all(est.gain < 1.0)  # the filter attenuates the motion's band


@pytest.mark.parametrize("kind", ["exact", "backward difference"])
def test_unlagged_velocity_not_flagged(motion, kind):
    t, q, v, _ = _recording(motion)
    if kind == "backward difference":  # ros2_control's Δq/dt: half a sample late
        v = np.vstack([v[:1], np.diff(q, axis=0) / np.diff(t)[:, None]])
    est = estimate_velocity_lag(t, q, v)
    assert not est.flagged.any(), est.samples
    half = 0.5 if kind == "backward difference" else 0.0
    assert np.all(np.abs(est.samples - half) < 0.2), est.samples
    p = prepare(t, q, np.zeros_like(q), v=v, names=motion[0].joint_names)
    assert p.velocity_source == "measured" and p.warnings == []


def test_prepare_replaces_the_lagging_joint_and_says_so(motion):
    dyn = motion[0]
    t, q, v, _ = _recording(motion, lag=0.2, joints=[1])
    eff = np.zeros_like(q)
    p = prepare(t, q, eff, v=v, names=dyn.joint_names)
    assert p.velocity_source == "mixed"
    assert p.velocity_lag.flagged.tolist() == [j == 1 for j in range(dyn.n)]
    assert len(p.warnings) == 1
    w = p.warnings[0]
    ms = p.velocity_lag.lag[1] * 1e3
    assert w.startswith("measured velocity lags the derivative of the positions (a drive's "
                        f"velocity filter or a logging delay): joint_a2 {ms:.3g} ms (")
    assert w.endswith("the positions' derivative is used instead for joint_a2"), w
    assert 195 < ms < 205
    derived = prepare(t, q, eff)
    measured = prepare(t, q, eff, v=v, check_velocity_lag=False)
    np.testing.assert_allclose(p.v[:, 1], derived.v[:, 1], rtol=0, atol=1e-12)
    np.testing.assert_allclose(p.a[:, 1], derived.a[:, 1], rtol=0, atol=1e-9)
    others = [j for j in range(dyn.n) if j != 1]
    np.testing.assert_allclose(p.v[:, others], measured.v[:, others], rtol=0, atol=1e-12)
    assert p.var_v[1] == pytest.approx(derived.var_v[1], rel=1e-12)
    # every joint lagging: all derived, one warning each
    t, q, v, _ = _recording(motion, lag=0.1)
    p = prepare(t, q, eff, v=v)
    assert p.velocity_source == "derived" and len(p.warnings) == 1
    found = re.findall(r"column (\d) ([\d.]+) ms", p.warnings[0])
    assert [int(j) for j, _ in found] == list(range(dyn.n)), p.warnings
    assert all(abs(float(ms) - 100.0) < 0.5 * STEP * 1e3 for _, ms in found), p.warnings
    np.testing.assert_allclose(p.v, derived.v, rtol=0, atol=1e-12)
