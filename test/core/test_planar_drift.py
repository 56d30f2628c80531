"""Drift under oscillating sub-slip loads (paper 002, Sec. VI-B, Figs. 6, 23–25): plain planar
LuGre creeps, the planar Elasto-Plastic extension (15)–(18), (34) does not.

A 1 kg disc on a 50 mm contact patch (the authors' set-up: weight 9.81 N, μ_C = 1, so 1 N is
≈ slip/10 and 0.03 N·m ≈ torque-to-slip/6) is loaded by :func:`fric_core.planar.drift_loads`.
Creep is the change of the pose averaged over one full period of the 3 Hz oscillation, between
a period after the oscillation started and the last period, so the oscillation itself cancels
and only the accumulated displacement remains.
"""

import numpy as np

import fric_core.planar as P

DT = 1e-4          # semi-implicit body + exact bristles: stable below 2 m/(σ1 f_N) = 2.5e-4 s
MASS, RADIUS = 1.0, 0.05
INERTIA = 0.5 * MASS * RADIUS ** 2


def _run(model, kind, duration):
    t = np.arange(0.0, duration, DT)
    w, fn = P.drift_loads(t, kind)
    poses, _, _ = P.simulate_body(model, w, fn, MASS, INERTIA)
    return t, poses


def _stick_bounds(surface, force, torque, fn_min):
    """Largest stick displacement and rotation of the body for loads up to ``force`` [N] and
    ``torque`` [N m] at a normal load ≥ ``fn_min``, plus 10 %.

    With β = 0 (every bristle below z_ba) the Elasto-Plastic bristles are pure springs that move
    with the body, z_cell = x + θ × ρ, so the friction is σ0 f_N Σ z p_n A = σ0 f_N x (Σ ρ p_n A
    = 0 at the CoP) and σ0 f_N u θ in torque (u = Σ ‖ρ‖² p_n A, (29)). The loads vary at 3 Hz,
    far below the body–bristle resonance √(σ0 f_N/m)/2π ≈ 500 Hz, and the bristle damping
    σ1 f_N is above critical (ζ ≈ 1.25), so the quasi-static deflection F/(σ0 f_N) is not
    exceeded (dynamic amplification 1 + 4e-5); measured max|x| and max|θ| equal it to 1e-4.
    10 % leaves room for that and stays below plain LuGre, which creeps past it (measured
    1.37× in 2 s under the oscillating normal load)."""
    sigma0 = P.TABLE_I[1].sigma0
    return (1.1 * force / (sigma0 * fn_min),
            1.1 * torque / (sigma0 * fn_min * surface.viscous_torque_scale))


def _creep(t, poses, start, end):
    """Mean pose over the period ending at ``end`` minus the mean over the one from ``start``."""
    period = 1.0 / 3.0
    first = (t >= start) & (t < start + period)
    last = (t >= end - period) & (t < end)
    return poses[last].mean(axis=0) - poses[first].mean(axis=0)


def _skip_two_periods(t):
    """Time in the Fig. 23 load profile with two of the pure-tangential periods (2.0–2.67 s)
    skipped: f_x oscillates from 1 s, τ ramps at 2.13–2.33 s and oscillates from 2.33 s; the
    3 Hz oscillation continues in phase (the full 5 s profile, shortened by 0.67 s)."""
    return np.where(t < 2.0, t, t + 2.0 / 3.0)


def test_distributed_lugre_drifts_and_elasto_plastic_stays_bounded_tangential_and_torque():
    # Figs. 6, 23 on the distributed model: f_x = 1 + 0.4 sin(6πt) N from 1 s, then also
    # τ = 0.03 + 0.01 sin(6πt) N m
    s = P.circle(11, RADIUS, normal_force=9.81)
    end = 2.0 + 4.0 / 3.0
    t = np.arange(0.0, end, DT)
    w, fn = P.drift_loads(_skip_two_periods(t), "tangential")
    creep_f, creep_tau, peak = {}, {}, {}
    for ep in (False, True):
        m = P.DistributedLuGre(s, P.TABLE_I[1], dt=DT, elasto_plastic=ep)
        x, _, _ = P.simulate_body(m, w, fn, MASS, INERTIA)
        creep_f[ep] = _creep(t, x, 1.0, 2.0)[0]             # f_x only (three periods)
        creep_tau[ep] = _creep(t, x, end - 1.0, end)        # with the torque (three periods)
        peak[ep] = np.abs(x).max(axis=0)
    # LuGre creeps forward under f_x alone (Fig. 6: steady drift in x; measured 3e-8 m over two
    # periods), and in x and θ once the torque oscillates (measured 7.0e-8 m, 6.7e-6 rad over 1 s)
    assert creep_f[False] > 1e-8
    assert creep_tau[False][0] > 2e-8 and creep_tau[False][2] > 2e-6
    # Elasto-Plastic: at 1/10 of slip every bristle stays below z_ba = 0.9 z_max, β = 0, a pure
    # spring: no creep beyond the integration round-off (< 1e-3 of LuGre's under f_x, measured
    # 4e-5 of it; < 1 % with the torque, measured 3e-6)
    assert abs(creep_f[True]) < 1e-3 * creep_f[False]
    assert abs(creep_tau[True][0]) < 0.01 * creep_tau[False][0]
    assert abs(creep_tau[True][2]) < 0.01 * creep_tau[False][2]
    # ... and the displacement stays within the stick deflection of the largest load (measured
    # 1.0000× the unpadded bound in x and θ); plain LuGre creeps past it (measured 2.0× in x,
    # 1.6× in θ)
    bx, bth = _stick_bounds(s, 1.4, 0.04, 9.81)
    assert peak[True][0] <= bx and peak[True][2] <= bth, (peak[True], bx, bth)
    assert peak[False][0] > bx and peak[False][2] > bth


def test_distributed_elasto_plastic_stays_bounded_under_oscillating_normal_load():
    # Figs. 24–25 on the distributed model: f_x = 1 N, τ = 0.03 N m, f_N = 9.81 + sin(6πt) N
    s = P.circle(11, RADIUS, normal_force=9.81)
    creep, peak = {}, {}
    for ep in (False, True):
        t, x = _run(P.DistributedLuGre(s, P.TABLE_I[1], dt=DT, elasto_plastic=ep), "normal", 2.0)
        creep[ep] = _creep(t, x, 1.0, 2.0)
        peak[ep] = np.abs(x).max(axis=0)
    # LuGre: each unloading lets the bristles relax by slipping (measured 2.0e-8 m, 2.0e-6 rad
    # over 1 s)
    assert creep[False][0] > 5e-9 and creep[False][2] > 5e-7
    # Elasto-Plastic: the deflection follows F/(σ0 f_N(t)) (Figs. 24–25) without accumulating
    # (< 1 % of LuGre; measured 2e-5 of it) and never exceeds it at the lowest f_N = 8.81 N
    assert abs(creep[True][0]) < 0.01 * creep[False][0]
    assert abs(creep[True][2]) < 0.01 * creep[False][2]
    bx, bth = _stick_bounds(s, 1.0, 0.03, 8.81)
    assert peak[True][0] <= bx and peak[True][2] <= bth, (peak[True], bx, bth)
    # plain LuGre creeps past it (measured 1.37× in x, 1.33× in θ of the unpadded bound)
    assert peak[False][0] > bx and peak[False][2] > bth


def test_reduced_lugre_drifts_and_elasto_plastic_does_not_with_torque():
    s = P.circle(21, RADIUS, normal_force=9.81)
    tab = P.LimitSurfaceTable.compute(s, 20)
    creep = {}
    for ep in (False, True):
        m = P.ReducedLuGre(tab, P.TABLE_I[1], dt=DT, normal_force=9.81, elasto_plastic=ep)
        t, x = _run(m, "tangential", 5.0)
        creep[ep] = _creep(t, x, 3.0, 5.0)                  # with the oscillating torque
    # Fig. 23: plain reduced LuGre drifts in x and θ once the torque oscillates (measured
    # 1.8e-7 m and 1.6e-5 rad over 2 s)
    assert creep[False][0] > 5e-8 and creep[False][2] > 5e-6
    # Elasto-Plastic: no accumulation; the bristles stay elastic (< 1 % of LuGre; measured 1e-6)
    assert abs(creep[True][0]) < 0.01 * creep[False][0]
    assert abs(creep[True][2]) < 0.01 * creep[False][2]


def test_oscillating_normal_load_drift_is_removed_by_elasto_plastic():
    # Figs. 24–25: constant f_x = 1 N, τ = 0.03 N·m, f_N = 9.81 + sin(6πt) N
    s = P.circle(21, RADIUS, normal_force=9.81)
    tab = P.LimitSurfaceTable.compute(s, 20)
    creep = {}
    for ep in (False, True):
        m = P.ReducedLuGre(tab, P.TABLE_I[1], dt=DT, normal_force=9.81, elasto_plastic=ep)
        t, x = _run(m, "normal", 3.0)
        creep[ep] = _creep(t, x, 1.0, 3.0)
    # LuGre: the bristle deflection needed for a constant load changes with f_N, and each
    # unloading lets the bristles relax by slipping (measured 5e-8 m, 4e-6 rad over 2 s)
    assert creep[False][0] > 2e-8 and creep[False][2] > 2e-6
    # Elasto-Plastic: the deflection oscillates with f_N (Figs. 24–25) but does not accumulate
    # (< 1 % of LuGre; measured 1e-5)
    assert abs(creep[True][0]) < 0.01 * creep[False][0]
    assert abs(creep[True][2]) < 0.01 * creep[False][2]
