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


def _creep(t, poses, start, end):
    """Mean pose over the period ending at ``end`` minus the mean over the one from ``start``."""
    period = 1.0 / 3.0
    first = (t >= start) & (t < start + period)
    last = (t >= end - period) & (t < end)
    return poses[last].mean(axis=0) - poses[first].mean(axis=0)


def test_distributed_lugre_drifts_and_elasto_plastic_does_not_tangential():
    s = P.circle(11, RADIUS, normal_force=9.81)
    creep = {}
    for ep in (False, True):
        t, x = _run(P.DistributedLuGre(s, P.TABLE_I[1], dt=DT, elasto_plastic=ep),
                    "tangential", 2.0)
        creep[ep] = _creep(t, x, 1.0, 2.0)[0]
    # LuGre creeps forward (Fig. 6: steady drift in x): measured 3e-8 m over two periods
    assert creep[False] > 1e-8
    # Elasto-Plastic: at 1/10 of slip every bristle stays below z_ba = 0.9 z_max, β = 0, a pure
    # spring: no creep beyond the integration round-off (< 1e-3 of LuGre's; measured 4e-5 of it)
    assert abs(creep[True]) < 1e-3 * creep[False]


def test_reduced_lugre_drifts_and_elasto_plastic_does_not_with_torque():
    s = P.circle(21, RADIUS, normal_force=9.81)
    tab = P.LimitSurfaceTable.compute(s, 20)
    creep = {}
    for ep in (False, True):
        m = P.ReducedLuGre(tab, P.TABLE_I[1], dt=DT, normal_force=9.81, elasto_plastic=ep)
        t, x = _run(m, "tangential", 5.0)
        creep[ep] = _creep(t, x, 3.0, 5.0)                  # with the oscillating torque
    # Fig. 23: plain reduced LuGre drifts in x and θ once the torque oscillates (measured
    # 1.7e-7 m and 1.4e-5 rad over 2 s)
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
