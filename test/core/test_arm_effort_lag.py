"""The effort's lag behind the states (signals.prepare(effort_lag=), estimate_effort_lag).

Physical facts checked:

* ``prepare(effort_lag=τ)`` gives the states at ``t − τ`` (a sinusoid's q, v, a to the filter's
  own accuracy), keeps every row and leaves the effort untouched;
* an effort held over the step that ends at its stamp (a zero-order-held command, as
  ros2_control's commanded effort and fric's transmission_sim publish it) lags the states by half
  a step: fitted at lag 0 it makes the viscous terms of the heavily loaded joint too high by many
  stds (≈ M·ω²·dt/2); the lag search finds dt/2 and the corrected fit puts them back within 3 std;
* an effort sampled with the state (a torque sensor) gives an estimate indistinguishable from 0:
  ``auto`` uses 0, and even the raw estimate applied moves no viscous term by more than its std.

The held effort is simulated analytically: the torque of the exact motion at the middle of the
step ``t_k − dt/2`` is published at ``t_k``. That is what holding a command over the step means
to second order: the held torque produces the step's mean acceleration
``(v_k − v_{k−1})/dt = q̈(t_k − dt/2) + O(dt²)``.
"""

import math

import numpy as np
import pytest

from fric_core.arm_identification.fit import fit_arm_friction
from fric_core.arm_identification.joint_friction import JointFriction
from fric_core.arm_identification.signals import (LAG_SIGNIFICANCE, MAX_AUTO_LAG_SAMPLES,
                                                  estimate_effort_lag, lagged_states, prepare)
from fric_core.arm_identification.synthetic import multisine_trajectory, simulate_arm_recording
from fric_core.transmission.urdf_dynamics import UrdfDynamics

RATE = 500.0  # Hz, the simulated chain's rate (transmission_sim, docs/arm_workflow.md)
DT = 1.0 / RATE
TRUE = {"joint1": JointFriction(0.5, 0.4, 0.2, 0.3, eta_f=0.8, eta_b=0.7),
        "joint2": JointFriction(0.3, 0.35, 0.1, 0.15, eta_f=0.85, eta_b=0.6)}
ARMATURE = [0.5, 0.3]
DV = 0.01  # rad/s, the Δv band (what fric identify chooses on these recordings)


def _recording(held: bool, seed: int = 2, rate: float = RATE):
    """20 s of the gear planar arm at ``rate`` on a multi-sine (17-bit encoders, 0.03 N·m
    noise); ``held``: the effort published at t_k is the torque at t_k − dt/2 (module
    docstring)."""
    dyn = UrdfDynamics("planar_2link")
    t2, q2, v2, a2 = multisine_trajectory(dyn, duration=20.0, rate=2 * rate, seed=1)
    at = simulate_arm_recording(dyn, t2[::2], q2[::2], v2[::2], a2[::2], TRUE,
                                armature=ARMATURE, seed=seed)
    if not held:
        return dyn, at.t, at.q, at.tau
    mid = simulate_arm_recording(dyn, t2[1::2], q2[1::2], v2[1::2], a2[1::2], TRUE,
                                 armature=ARMATURE, seed=seed)  # at t_k + dt/2
    return dyn, at.t[1:], at.q[1:], mid.tau[:-1]


def _residual(dyn):
    """What fric identify's search fits: least squares (paper 003 eq. (5)), the gear law; its
    residual sum of squares outside the Δv band."""
    def residual(q, v, a, effort):
        f = fit_arm_friction(q, v, a, effort, dyn, dynamics="urdf", method="ols", dv=DV,
                             law="gear")
        return (sum(f.residual_std[n] ** 2 * f.n_used[n] for n in f.n_used),
                sum(f.n_used.values()))
    return residual


def _viscous(dyn, prep):
    """The identification's fit (EIV, eq. (6)): {joint: {bp, bn: (value, std)}}."""
    f = fit_arm_friction(prep.q, prep.v, prep.a, prep.effort, dyn, dynamics="urdf",
                         method="eiv", dv=DV, law="gear",
                         noise={"var_v": prep.var_v, "var_a": prep.var_a})
    fs = f.to_joint_friction_set()
    return {n: {k: (getattr(jf, k), jf.std[k]) for k in ("bp", "bn")}
            for n, jf in fs.joints.items()}


def _sigmas(vis):
    """Per joint and term, (identified − true) / std."""
    return {n: {k: (val - getattr(TRUE[n], k)) / sd for k, (val, sd) in terms.items()}
            for n, terms in vis.items()}


def test_prepare_takes_the_states_at_t_minus_the_lag():
    t = np.arange(6000) * 1e-3
    w = 2 * np.pi * 1.3
    q = np.column_stack([np.sin(w * t), 0.5 * np.cos(2.1 * w * t)])
    effort = np.column_stack([np.cos(w * t), np.sin(w * t)])
    lag = 0.6e-3  # 0.6 sample: between two stamps
    p0 = prepare(t, q, effort)
    p = prepare(t, q, effort, effort_lag=lag)
    assert np.array_equal(p.rows, p0.rows)  # no row lost: the shift reaches into the trimmed edge
    assert np.array_equal(p.effort, effort[p.rows])  # the effort stays the raw sample at t
    assert p.effort_lag == lag and any("effort lag" in n for n in p.notes)
    tl = p.t - lag
    exact_q = np.column_stack([np.sin(w * tl), 0.5 * np.cos(2.1 * w * tl)])
    exact_v = np.column_stack([w * np.cos(w * tl), -0.5 * 2.1 * w * np.sin(2.1 * w * tl)])
    exact_a = np.column_stack([-w ** 2 * np.sin(w * tl),
                               -0.5 * (2.1 * w) ** 2 * np.cos(2.1 * w * tl)])
    t0 = p0.t
    zero_q = np.column_stack([np.sin(w * t0), 0.5 * np.cos(2.1 * w * t0)])
    zero_v = np.column_stack([w * np.cos(w * t0), -0.5 * 2.1 * w * np.sin(2.1 * w * t0)])
    zero_a = np.column_stack([-w ** 2 * np.sin(w * t0),
                              -0.5 * (2.1 * w) ** 2 * np.cos(2.1 * w * t0)])
    # the shift adds next to nothing to the derivatives' own error (filter droop and edge
    # transient, central differences: ≤ 2e-3 relative here): the states at t − lag are as
    # exact as those at t (the first kept row now reads 0.6 sample nearer the segment's end,
    # where the edge transient is a little larger: hence 1.1, not 1)
    for got, exact, ref, ref_exact in ((p.q, exact_q, p0.q, zero_q), (p.v, exact_v, p0.v, zero_v),
                                       (p.a, exact_a, p0.a, zero_a)):
        scale = np.max(np.abs(exact))
        own = np.max(np.abs(ref - ref_exact))
        assert np.max(np.abs(got - exact)) < 1.1 * own + 1e-7 * scale
        assert own < 2.5e-3 * scale  # signals.EDGE_TOLERANCE: a within ~2e-3 at the edge
        # and the lag is really there: it moved the states by ~ω·lag of their amplitude
        assert np.max(np.abs(got - ref)) > 0.5 * w * lag * scale
    # lagged_states re-evaluates a prepared recording at another lag: the same states
    q2, v2, a2 = lagged_states(p0, lag)
    # (but at the first row, extrapolated 0.6 sample from the trimmed data: 8e-8 relative)
    for got, ref in ((q2, p.q), (v2, p.v), (a2, p.a)):
        assert np.max(np.abs(got - ref)) < 2e-7 * np.max(np.abs(ref))
        assert np.max(np.abs(got[1:] - ref[1:])) < 2e-8 * np.max(np.abs(ref))


@pytest.mark.parametrize("bad, match", [(math.nan, "effort_lag: expected a finite"),
                                        ("0.001", "effort_lag: expected a finite"),
                                        (1.0, "effort_lag: 1 s is longer than")])
def test_prepare_rejects_a_bad_lag_by_name(bad, match):
    t = np.arange(3000) * 1e-3
    q = np.sin(t)[:, None]
    with pytest.raises(ValueError, match=match):
        prepare(t, q, q, effort_lag=bad)


def test_held_effort_half_step_lag_found_and_viscous_bias_removed():
    dyn, t, q, tau = _recording(held=True)
    p0 = prepare(t, q, tau)
    before = _sigmas(_viscous(dyn, p0))
    # the bias at lag 0: every joint carries M·ω²·dt/2 of apparent viscosity (5 ms of 2 ms
    # here): each viscous term > 3 of its stds too high, 5.5 on average (seed 2: 3.7 to 7.1)
    sig = [s for terms in before.values() for s in terms.values()]
    # (batch-means stds of admissible.py carry part of the misfit the lag leaves: 2.0 to
    # 4.8 here, 3.5 on average)
    assert min(sig) > 1.5 and np.mean(sig) > 3.0, before
    est = estimate_effort_lag(p0, _residual(dyn), dv=DV)
    # half a step, to within 3 of the estimate's std (≈ 0.025 sample: ±0.075, not loose)
    assert abs(est.estimate - DT / 2) < 3 * est.std, (est.estimate / DT, est.std / DT)
    assert est.std < 0.04 * DT
    assert est.significant and est.lag == est.estimate
    after = _sigmas(_viscous(dyn, prepare(t, q, tau, effort_lag=est.lag)))
    worst = max(abs(s) for terms in after.values() for s in terms.values())
    assert worst < 3.0, after


@pytest.mark.parametrize("rate", [RATE, 200.0])
def test_instantaneous_effort_auto_picks_zero_and_changes_nothing(rate):
    # 200 Hz: the gear's drive/back-drive switches make the effort jump by a larger share of a
    # step; a fit seeing other samples at each lag, or a parabola through the whole grid, took
    # that for a lag of 0.2 sample, many stds (signals.LAG_GRID, estimate_effort_lag's dv)
    dyn, t, q, tau = _recording(held=False, rate=rate)
    p0 = prepare(t, q, tau)
    est = estimate_effort_lag(p0, _residual(dyn), dv=DV)
    assert 0.0 <= est.estimate <= MAX_AUTO_LAG_SAMPLES / rate
    assert est.estimate < LAG_SIGNIFICANCE * est.std  # indistinguishable from 0 ...
    assert est.lag == 0.0 and not est.significant  # ... so auto uses 0: the fit is unchanged
    # the least-squares curve has its minimum at the grid's 0: a recording without lag
    assert int(np.argmin(est.rss)) == 0
    # even the raw estimate, applied, moves no viscous term by as much as its std
    base = _viscous(dyn, p0)
    moved = _viscous(dyn, prepare(t, q, tau, effort_lag=est.estimate))
    for n, terms in base.items():
        for k, (val, sd) in terms.items():
            assert abs(moved[n][k][0] - val) < sd, (n, k, val, moved[n][k][0], sd)
    assert max(abs(s) for terms in _sigmas(base).values() for s in terms.values()) < 3.0


def test_a_lag_that_changes_within_the_recording_is_not_determined():
    # the first half's effort a held command (half a step late), the second half's a torque at
    # its stamp: no single lag explains the recording. Each half alone is clear (0.5 and 0
    # sample, a few % std each), so they disagree by many stds: auto uses 0 rather than their
    # meaningless average (the same check catches effort the model does not describe, whose
    # residual minimum wanders: the simulated chain, docs/arm_workflow.md)
    dyn, t, q, held = _recording(held=True)
    _, _, _, instant = _recording(held=False)
    half = t.size // 2
    effort = np.vstack([held[:half], instant[1:][half:]])
    est = estimate_effort_lag(prepare(t, q, effort), _residual(dyn), dv=DV)
    (e1, s1), (e2, s2) = est.halves
    assert abs(e1 - DT / 2) < 3 * s1 and abs(e2) < 3 * s2, (e1 / DT, e2 / DT)
    assert not est.consistent and est.lag == 0.0
