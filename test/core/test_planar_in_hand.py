"""In-hand slip-stick (paper 002, Sec. VI-C): a 0.2 kg object between two finger pads whose grip
force oscillates, f_N = 1.73 + 0.91 sin(4πt) N; it sticks while 2 μ f_N exceeds its weight
(1.96 N, i.e. f_N > 0.98 N for μ_C = 1) and slips around the minima (t ≈ 0.375 s, 0.875 s)."""

import math

import pytest

import fric_core.planar as P

DT = 5e-5     # semi-implicit Euler: 2m/(2 σ1 f_N,max) = 0.4/(1600·2.64) ≈ 9.5e-5 s


@pytest.fixture(scope="module")
def runs():
    s = P.circle(11, 0.02)
    out = {}
    for name, model in (
            ("distributed", P.DistributedLuGre(s, P.TABLE_I[1], dt=DT, elasto_plastic=True)),
            ("reduced", P.ReducedLuGre(P.LimitSurfaceTable.compute(s, 20), P.TABLE_I[1], dt=DT,
                                       elasto_plastic=True))):
        t, x, f = P.simulate_in_hand(model, 0.85)         # the checks end at 0.8 s
        out[name] = (t, x, f)
    return out


def _at(t, x, when):
    return x[int(round(when / DT)) - 1]


@pytest.mark.parametrize("name", ["distributed", "reduced"])
def test_object_sticks_slips_at_low_grip_and_sticks_again(runs, name):
    t, x, f = runs[name]
    # stick: bristle-scale displacement only (σ0 = 1e6/m: µm at most)
    assert abs(_at(t, x, 0.3)[1]) < 1e-5
    # slip during the first grip minimum (measured 5.3–5.5 mm)
    slip = _at(t, x, 0.5)[1] - _at(t, x, 0.3)[1]
    assert slip < -1e-3
    # stick again while the grip is high: < 1 % of the slip
    assert abs(_at(t, x, 0.8)[1] - _at(t, x, 0.5)[1]) < 0.01 * abs(slip)
    # impulse balance over the first stick phase (at rest at both ends): the pads carry the
    # weight on average. (Instantaneously f_y deviates by ~6 %: with the amended LuGre force
    # σ0 z f_N a changing grip force moves the object until z re-balances.) 1 % covers the
    # residual speed at 0.3 s (m v/0.3 s with v ≲ 1e-4 m/s).
    k = int(round(0.3 / DT))
    assert f[:k, 1].mean() == pytest.approx(0.2 * 9.81, rel=0.01)


def test_reduced_model_reproduces_the_distributed_slip(runs):
    # Paper: "the reduced model results in similar simulation outcomes" (Figs. 27–29); we require
    # the slipped distance and rotation after the first slip within 10 % (measured 3–4 %)
    _, xd, _ = runs["distributed"]
    t, xr, _ = runs["reduced"]
    d, r = _at(t, xd, 0.6), _at(t, xr, 0.6)
    assert r[1] == pytest.approx(d[1], rel=0.1)
    assert r[2] == pytest.approx(d[2], rel=0.1)


def test_unstable_body_step_is_rejected_by_name():
    # The semi-implicit Euler update of the object is stable only for
    # dt < 2/(σ1 n f_N (1/m + d²/I)). Case 1 of Sec. VI-C (CoM 25 mm from the pads) pivots and
    # slips down to d ≈ 55 mm by t ≈ 0.55 s, where the bound falls below 5e-5 s (≈ 4.9e-5 s):
    # the run used to chatter silently there (pad force 18–21× the friction limit); it must
    # stop with a ValueError naming dt. (At 3e-5 s the same run completes: measured.)
    s = P.circle(11, 0.02)
    tab = P.LimitSurfaceTable.compute(s, 10)
    m = P.ReducedLuGre(tab, P.TABLE_I[1], dt=5e-5, elasto_plastic=True)
    with pytest.raises(ValueError, match=r"dt: 5e-05 s exceeds the stability bound"):
        P.simulate_in_hand(m, 1.0, com_offset=(0.025, 0.0))
    # at the first grip update already, for a step far above 2m/(σ1 n f_N) ≈ 1.4e-4 s
    m = P.ReducedLuGre(tab, P.TABLE_I[1], dt=1e-3, elasto_plastic=True)
    with pytest.raises(ValueError, match=r"dt: .* at t = 0.000 s"):
        P.simulate_in_hand(m, 0.1)


def test_case_1_object_pivots_until_its_com_hangs_below_the_pads():
    # Sec. VI-C case 1 (CoM 25 mm from the pad centre): the gravity moment m g 25 mm = 0.049 N m
    # exceeds the pads' torque capacity 2·(2/3)·10 mm·μ_S f_N ≤ 0.042 N m, so the object pivots
    # about the contact until its CoM hangs below it, θ → −90°, by the second grip minimum
    # (distributed and reduced −91.0° / −91.1° at 2 s, examples/planar_in_hand.py). 5° allows for
    # the friction torque holding it slightly off the vertical (m g 25 mm sin 5° ≈ 4e-3 N m).
    # Reduced model (the distributed one is compared in the example's full run); dt = 2.5e-5 s
    # is within the stability bound at the d ≈ 65 mm the object reaches.
    s = P.circle(11, 0.02)
    m = P.ReducedLuGre(P.LimitSurfaceTable.compute(s, 20), P.TABLE_I[1], dt=2.5e-5,
                       elasto_plastic=True)
    t, x, _ = P.simulate_in_hand(m, 1.0, com_offset=(0.025, 0.0))
    assert abs(math.degrees(x[-1, 2]) + 90.0) < 5.0
    # ... and hangs below the contact: ≥ 25 mm below it plus the slip down the pads, and
    # under it to within 5 mm (measured x = +0.4 mm, y = −58.7 mm, θ = −91.0°)
    assert x[-1, 1] < -0.025 and abs(x[-1, 0]) < 0.005
