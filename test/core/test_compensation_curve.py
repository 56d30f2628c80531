"""fric_core.compensation with any joint's total curve (issue 23): the piecewise-linear law, the
effort offset, negative levels and zero levels, against the analytic values they must render.

Tolerances: at steady speed the element's state converges geometrically (pole ≤ 1/2 on every
segment: the stiffness floor K ≥ s_max/T), so after 300 steps only the rounding of the ramp's
position increments is left (positions ≤ 2 rad, ulp 4e-16, increments ≥ 5e-5 rad: ~1e-11
relative); 1e-9 relative leaves a margin and still catches a wrong segment (≥ 1e-3 off).
"""

import math
import tracemalloc

import numpy as np
import pytest

from fric_core.compensation import (FrictionCompensator, SignCompensator, default_stiffness,
                                    sign_changes)
from fric_core.joint_friction import FrictionCurve, JointFriction

T = 1e-3
RES = 1e-4
CURVE = FrictionCurve.make([0.0, 0.1, 0.5, 1.5], [0.3, 0.5, 0.6, 0.65],
                           [0.0, 0.2, 1.0], [0.25, 0.45, 0.7])
CURVE_JF = JointFriction(0.3, 0.25, 0.2, 0.2, law="curve", curve=CURVE)
OFFSET_JF = JointFriction(0.3, 0.25, 0.2, 0.2, law="curve", curve=CURVE, offset=0.08)
#: the offset left in the levels (not separable): Cp = −0.1, Cn = 0.5 — a jump of 0.4
NEG_JF = JointFriction(-0.1, 0.5, 0.3, 0.2)
#: 12 speeds on every segment of both sides, the last segment's continuation included
SPEEDS = [0.05, 0.1, 0.3, 0.5, 1.0, 2.0, -0.05, -0.2, -0.6, -1.0, -1.8, 0.02]


def _steady(comp, v, steps=300):
    """The output after ``steps`` steps of a ramp at speed v (per joint), from rest."""
    comp.reset()
    v = np.asarray(v, dtype=float)
    for k in range(steps):
        out = comp.step(v * (k * T))
    return out.copy()


@pytest.mark.parametrize("jf", [CURVE_JF, OFFSET_JF, NEG_JF], ids=["curve", "offset", "neg"])
def test_steady_speed_renders_the_total_curve_on_every_segment(jf):
    comp = FrictionCompensator([jf] * len(SPEEDS), T, resolution=RES)
    out = _steady(comp, SPEEDS)
    np.testing.assert_allclose(out, jf.total(np.array(SPEEDS)), rtol=1e-9, atol=1e-12)
    assert not comp.stuck.any()
    # the offset is in it: the friction alone is off by exactly the offset
    if jf.offset:
        np.testing.assert_allclose(out - jf.kinetic(np.array(SPEEDS)), jf.offset, rtol=1e-8)
    # the sign baseline renders the same total curve at the finite-difference velocity
    base = SignCompensator([jf] * len(SPEEDS), T)
    for k in range(3):
        b = base.step(np.array(SPEEDS) * (k * T))
    np.testing.assert_allclose(b, jf.total(np.array(SPEEDS)), rtol=1e-9, atol=1e-12)


def test_zero_levels_give_the_viscous_law_not_nan():
    """Cp = Cn = 0 (identification can write it): K was 0, Z = 1/(T K) = inf and the outputs NaN.
    Now K = b/T (the floor), every output is finite and steady motion gives b·v exactly."""
    jf = JointFriction(0.0, 0.0, 0.5, 0.5)
    comp = FrictionCompensator([jf], 0.001)
    assert comp.K[0] == pytest.approx(0.5 / T, rel=1e-12) and math.isfinite(comp.Z[0])
    rng = np.random.default_rng(5)
    outs = [comp.step(rng.normal(0.0, 0.01, 1))[0] for _ in range(593)]
    assert np.all(np.isfinite(outs))
    for v in (0.3, -1.2):
        assert _steady(comp, [v])[0] == pytest.approx(0.5 * v, rel=1e-9)
    # no friction at all: nothing to render, a finite K, the output exactly 0
    none = FrictionCompensator([JointFriction(0.0, 0.0, 0.0, 0.0)], T)
    assert math.isfinite(none.K[0]) and none.K[0] > 0
    assert all(none.step(np.array([0.2 * k * T]))[0] == 0.0 for k in range(100))


def test_default_stiffness_levels_jump_and_floor():
    """ℓ: max(Cp, Cn) for levels ≥ 0; the jump Cp + Cn (the band's width, all of it travelled
    from the rest point) with a level below 0; the offset shifts the levels it is in; the floor
    s_max·counts·q/T; a joint without friction: a 1 N·m level."""
    K = default_stiffness([JointFriction(1.0, 0.6, 0.2, 0.1),
                           NEG_JF,
                           JointFriction(1.0, 0.6, 0.2, 0.1, offset=0.3),
                           JointFriction(0.05, 0.0, 2.0, 0.0),
                           JointFriction(0.0, 0.0, 0.0, 0.0),
                           CURVE_JF], RES, 5.0, T)
    floor_curve = 2.0 * 5.0 * RES / T  # CURVE's steepest segment: 0.2/0.1 = 2 N·m·s/rad
    np.testing.assert_allclose(K, np.array([1.0, 0.4, 1.3, 2.0 * 5 * RES / T, 1.0,
                                            max(0.3, floor_curve)]) / (5.0 * RES), rtol=1e-12)
    with pytest.raises(ValueError, match="dt"):
        default_stiffness([CURVE_JF], RES, 5.0, 0.0)


def test_one_sign_change_per_reversal_with_a_curve():
    """7 reversals of an encoder-quantised, noisy position (0.3 counts of noise): the curve's
    compensation changes sign once per reversal (sign(v) of the same curve: dozens)."""
    rng = np.random.default_rng(7)
    t = np.arange(8000) * T
    q = 0.2 * np.cos(math.pi * t)  # reversals at 1, 2, ..., 7 s
    comp = FrictionCompensator([CURVE_JF], T, resolution=RES)
    base = SignCompensator([CURVE_JF], T)
    f_imp, f_sign = np.zeros(t.size), np.zeros(t.size)
    p = np.zeros(1)
    for k in range(t.size):
        p[0] = RES * round((q[k] + rng.normal(0.0, 0.3 * RES)) / RES)
        f_imp[k] = comp.step(p)[0]
        f_sign[k] = base.step(p)[0]
    assert sign_changes(f_imp[100:]) == 7
    assert sign_changes(f_sign[100:]) > 20


def test_negative_level_rests_at_the_band_point_nearest_zero():
    """Cp = −0.1, Cn = 0.5: the static band [−0.5, −0.1] excludes 0. After motion forwards the
    output of the joint at rest is the band's edge −0.1 (= r) for good: stuck, constant, no
    chatter between the band and the kinetic branch; after motion backwards it relaxes from
    −0.5 to −0.1 (time constant τ_r) and stays."""
    comp = FrictionCompensator([NEG_JF], T, resolution=RES)
    for v in (0.2, -0.2):
        comp.reset()
        for k in range(200):
            comp.step(np.array([v * k * T]))
        assert comp.estimate[0] == pytest.approx(NEG_JF.total(v), rel=1e-9)
        p = np.array([v * 199 * T])
        rest, stuck = np.zeros(1000), np.zeros(1000, dtype=bool)
        for k in range(1000):
            rest[k] = comp.step(p)[0]
            stuck[k] = comp.stuck[0]
        # forwards: the viscous part leaves (kinetic) down to −0.1; backwards: down to −0.5,
        # then the tension relaxes up to −0.1 — monotone either way, never past r
        assert np.all(np.diff(rest) * np.sign(-v) >= -1e-12)
        assert np.all(np.abs(rest[300:] + 0.1) <= 1e-9) and np.ptp(rest[500:]) <= 1e-12
        assert stuck[300:].all()
    # a level ≥ 0 still relaxes to exactly 0 (the bit-exact asymmetric behaviour)
    pos = FrictionCompensator([JointFriction(0.2, 0.5, 0.3, 0.2)], T, resolution=RES)
    for k in range(200):
        pos.step(np.array([0.2 * k * T]))
    for _ in range(3000):
        out = pos.step(np.array([0.2 * 199 * T]))[0]
    assert 0.0 <= out < 1e-12


def test_gear_shifts_every_level_of_a_curve_side():
    """Gear model with a curve: a load τ_l > 0 adds τ_l (1/η_f − 1) to every forwards level and
    |τ_l|... (1 − η_b) to every backwards one; at steady speed the output is total(v) + that."""
    jf = JointFriction(0.3, 0.25, 0.2, 0.2, law="curve", curve=CURVE, offset=0.05,
                       eta_f=0.8, eta_b=0.6)
    speeds = np.array([0.05, 0.3, 1.0, -0.1, -0.6, -1.5])
    comp = FrictionCompensator([jf] * speeds.size, T, resolution=RES)
    load = np.full(speeds.size, 2.0)
    for k in range(400):
        out = comp.step(speeds * (k * T), load=load)
    extra = np.where(speeds > 0, 2.0 * (1 / 0.8 - 1), -2.0 * (1 - 0.6))
    np.testing.assert_allclose(out, jf.total(speeds) + extra, rtol=1e-9)


def test_finite_bounded_output_for_huge_inputs_with_curves():
    rng = np.random.default_rng(11)
    jfs = [CURVE_JF, OFFSET_JF, NEG_JF, JointFriction(0.0, 0.0, 0.5, 0.5),
           JointFriction(0.2, 0.3, 0.1, 0.1, law="curve", curve=CURVE, eta_f=0.7, eta_b=-0.2)]
    comp = FrictionCompensator(jfs, T, resolution=RES, max_effort=50.0)
    base = SignCompensator(jfs, T)
    for _ in range(2000):
        scale = 10.0 ** rng.uniform(-6, 300)
        p = rng.normal(0.0, 1.0, len(jfs)) * scale
        out = comp.step(p, command=rng.normal(0, 1, len(jfs)), load=p)
        assert np.all(np.isfinite(out)) and np.all(np.abs(out) <= 50.0)
        assert np.all(np.isfinite(comp.e))
        assert np.all(np.isfinite(base.step(p)))


def _allocation(comp, positions, cmd):
    """(bytes still held after the steps, the largest transient allocation of one step)."""
    for p in positions[:100]:
        comp.step(p, cmd)
    tracemalloc.start()
    start = tracemalloc.get_traced_memory()[0]
    worst = 0
    for p in positions[100:]:
        cur = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        comp.step(p, cmd)
        worst = max(worst, tracemalloc.get_traced_memory()[1] - cur)
    held = tracemalloc.get_traced_memory()[0] - start
    tracemalloc.stop()
    return held, worst


def test_a_curve_step_allocates_like_the_asymmetric_one():
    """Nothing is kept from step to step, and one step of 8 curve/offset/negative-level joints
    allocates transiently no more than 1 kB beyond the asymmetric law's step (numpy's scalar
    and view objects of the segment search; the buffers are preallocated)."""
    jfs = [CURVE_JF, OFFSET_JF, NEG_JF, JointFriction(1.0, 0.8, 0.2, 0.3)] * 2
    positions = [np.full(len(jfs), 0.3 * np.sin(k * 0.01)) for k in range(600)]
    cmd = np.zeros(len(jfs))
    held, worst = _allocation(FrictionCompensator(jfs, T, resolution=RES), positions, cmd)
    _, worst_asym = _allocation(
        FrictionCompensator([JointFriction(1.0, 0.8, 0.2, 0.3)] * len(jfs), T, resolution=RES),
        positions, cmd)
    assert held < 1000 and worst <= worst_asym + 1000, (held, worst, worst_asym)


def test_bad_friction_names_the_joint():
    bad = JointFriction(0.3, 0.25, 0.2, 0.2, law="curve",
                        curve=FrictionCurve((0.0, 1.0), (0.5, 0.4), (0.0, 1.0), (0.2, 0.3)))
    with pytest.raises(ValueError, match=r"friction\[1\]"):
        FrictionCompensator([CURVE_JF, bad], T)
    with pytest.raises(ValueError, match=r"friction\[0\]"):
        SignCompensator([bad], T)
