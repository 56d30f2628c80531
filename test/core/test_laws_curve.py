"""PiecewiseLinearFriction (issue 23): the exact Φ_Z of Theorem 1 for a monotone piecewise-linear
law, against a numeric root solve, against AsymmetricFriction's closed form, and in the elements.

Tolerances: Φ_Z is a handful of float operations on O(1..10) numbers, brentq is run to 1e-15
absolute; 1e-12 relative to max(1, |y|) leaves ~1e3 ulp of margin and still catches any wrong
segment (a wrong segment is off by O(1e-3 .. 1): the curves' slopes differ by ≥ 0.05 and the
tested x reach well into each segment).
"""

import math

import numpy as np
import pytest
from scipy.optimize import brentq

from fric_core.elements import MasslessImpedance, RigidAdmittance
from fric_core.joint_friction import FrictionCurve, JointFriction
from fric_core.laws import AsymmetricFriction, PiecewiseLinearFriction

RNG = np.random.default_rng(23)
#: a saturating curve (what real joints show) with a negative-side level that is flat at first
CURVE = FrictionCurve.make([0.0, 0.1, 0.5, 1.5], [0.3, 0.5, 0.6, 0.65],
                           [0.0, 0.2, 1.0], [0.2, 0.2, 0.7])


def _random_law(rng):
    """A random monotone curve: 2–6 knots a side, flat segments included, levels at 0 of either
    sign with a non-negative jump."""
    sides = []
    for _ in range(2):
        k = int(rng.integers(2, 7))
        v = np.concatenate([[0.0], np.cumsum(rng.uniform(0.02, 1.0, k - 1))])
        df = rng.uniform(0.0, 1.0, k - 1) * (rng.uniform(size=k - 1) > 0.2)
        sides.append((v, df))
    fp0 = rng.uniform(-0.5, 1.5)
    fn0 = -fp0 + rng.uniform(0.0, 1.5)
    (vp, dp), (vn, dn) = sides
    return PiecewiseLinearFriction(vp, fp0 + np.concatenate([[0.0], np.cumsum(dp)]),
                                   vn, fn0 + np.concatenate([[0.0], np.cumsum(dn)]))


def _reference(law, x, Z):
    """Φ_Z(x) by brentq on y − Φ(x − Z y) = 0, Φ at w = 0 taken as the one-sided limit of the
    branch (the static case is decided by the static set, eq. 16)."""
    lo, hi = law.static_bounds()
    s = x / Z
    if lo <= s <= hi:
        return s
    if s > hi:
        def h(y):
            w = x - Z * y
            return y - (law.phi(w) if w > 0.0 else hi)
        return brentq(h, hi, s, xtol=1e-15, rtol=4 * np.finfo(float).eps, maxiter=500)

    def h(y):
        w = x - Z * y
        return y - (law.phi(w) if w < 0.0 else lo)
    return brentq(h, s, lo, xtol=1e-15, rtol=4 * np.finfo(float).eps, maxiter=500)


def test_phi_z_equals_a_numeric_root_over_many_curves_x_and_z():
    checked = 0
    for _ in range(40):
        law = _random_law(RNG)
        lo, hi = law.static_bounds()
        for Z in (1e-3, 0.05, 0.7, 3.0, 40.0):
            xs = np.concatenate([RNG.uniform(-6.0, 6.0, 40),
                                 Z * np.array([lo, hi]) + np.array([-1e-9, 1e-9])])
            ys = law.phi_z(xs, Z)  # per-joint path, all joints sharing the law
            for x, y_each in zip(xs, ys):
                y = law.phi_z(float(x), Z)  # scalar path
                ref = _reference(law, float(x), Z)
                assert abs(y - ref) <= 1e-12 * max(1.0, abs(ref)), (law, x, Z)
                assert abs(y_each - y) <= 1e-12 * max(1.0, abs(y))
                checked += 1
    assert checked == 40 * 5 * 42


def test_static_branch_is_exactly_x_over_z_and_covers_the_levels_at_0():
    law = PiecewiseLinearFriction.from_curve(CURVE)
    Z = 0.4
    for x in np.linspace(-0.2 * Z, 0.3 * Z, 101)[1:-1]:  # the ends may round to either side
        assert law.phi_z(float(x), Z) == float(x) / Z  # bit-exact: elements detect sticking
    assert law.phi_z(0.3 * Z * (1 + 1e-12), Z) != 0.3 * Z * (1 + 1e-12) / Z  # just beyond: slides
    assert law.static_bounds() == (-0.2, 0.3)
    assert law.slope_bounds() == pytest.approx((0.0, 2.0))  # flat first negative segment
    assert law.is_unique(1e9)  # monotone: (15) for every Z


def test_per_joint_curves_and_kinetic_law():
    other = FrictionCurve.make([0.0, 1.0], [0.5, 0.7], [0.0, 1.0], [0.4, 0.5])
    law = PiecewiseLinearFriction.from_curves([CURVE, other])
    assert law.size == 2
    x = np.array([0.3, -2.0])
    want = np.array([CURVE.kinetic(0.3), other.kinetic(-2.0)])
    assert np.allclose(law.phi(x), want, rtol=1e-14, atol=0)
    lo, hi = law.static_bounds()
    assert lo.tolist() == [-0.2, -0.4] and hi.tolist() == [0.3, 0.5]
    Z = np.array([0.1, 2.0])
    y = law.phi_z(x, Z)
    for i, c in enumerate((CURVE, other)):
        single = PiecewiseLinearFriction.from_curve(c)
        assert y[i] == pytest.approx(single.phi_z(float(x[i]), float(Z[i])), rel=1e-14)
    # the law is the curve: kinetic values equal FrictionCurve.kinetic on every segment
    single = PiecewiseLinearFriction.from_curve(CURVE)
    vs = np.linspace(-3.0, 3.0, 601)
    vs = vs[vs != 0.0]
    assert np.allclose(single.phi(vs), CURVE.kinetic(vs), rtol=1e-14, atol=1e-15)
    assert all(single.phi(float(v)) == pytest.approx(CURVE.kinetic(float(v)), rel=1e-14)
               for v in vs)


@pytest.mark.parametrize("dv", [1e-3, 0.05, 0.7])
def test_two_knot_curve_is_the_asymmetric_law_and_its_phi_z(dv):
    """With Dp = Cp, Dn = −Cn AsymmetricFriction's transition segment is the kinetic line itself
    (slope (Cp + bp dv − Cp)/dv = bp), for any dv: the law is the two-knot curve; so are their
    Φ_Z. A static level below the kinetic one (Dp < Cp: friction still rises) is a 3-knot curve
    [0, dv, 1]."""
    Cp, Cn, bp, bn = 1.2, 0.7, 0.4, 0.9
    asym = AsymmetricFriction(Cp, Cn, bp, bn, Cp, -Cn, dv)
    curve = PiecewiseLinearFriction.from_curve(JointFriction(Cp, Cn, bp, bn).total_curve())
    rising = AsymmetricFriction(Cp, Cn, bp, bn, 0.9, -0.5, dv)
    curve3 = PiecewiseLinearFriction([0, dv, 1], [0.9, Cp + bp * dv, Cp + bp],
                                     [0, dv, 1], [0.5, Cn + bn * dv, Cn + bn])
    for Z in (1e-3, 0.1, 2.0, 30.0):
        xs = np.linspace(-5.0, 5.0, 2001) * max(1.0, Z)
        for a, c in ((asym, curve), (rising, curve3)):
            ya, yc = a.phi_z(xs, Z), c.phi_z(xs, Z)
            assert np.allclose(yc, ya, rtol=1e-12, atol=1e-12)
            assert all(c.phi_z(float(x), Z) == pytest.approx(a.phi_z(float(x), Z), rel=1e-12,
                                                             abs=1e-12) for x in xs[::50])
            # same static branch, bit for bit
            assert np.array_equal(yc == xs / Z, ya == xs / Z)


def test_negative_level_left_by_an_offset():
    """f_pos[0] = −0.1 (an offset of −0.2 left in the levels 0.1 / 0.3): the static set
    [−0.3, −0.1] excludes 0, Φ_Z is still unique, continuous and solves the implicit equation."""
    law = PiecewiseLinearFriction([0, 1], [-0.1, 0.4], [0, 1], [0.3, 0.8])
    Z = 0.5
    xs = np.linspace(-2, 2, 40001)
    ys = law.phi_z(xs, Z)
    assert np.max(np.abs(np.diff(ys))) <= (xs[1] - xs[0]) / Z * (1 + 1e-9)  # Lipschitz 1/Z
    assert law.phi_z(0.0, Z) == pytest.approx(-0.1 / (1 + 0.5 * Z))  # slides forwards at x = 0
    with pytest.raises(ValueError, match="f_pos"):
        PiecewiseLinearFriction([0, 1], [-0.4, 0.4], [0, 1], [0.3, 0.8])  # levels cross


@pytest.mark.parametrize("args, field", [
    (([0, 1], [0.5, 0.4], [0, 1], [0.5, 0.6]), "f_pos"),  # decreasing: not monotone
    (([0.1, 1], [0.5, 0.6], [0, 1], [0.5, 0.6]), "v_pos"),  # does not start at 0
    (([0, 1, 1], [0.5, 0.6, 0.7], [0, 1], [0.5, 0.6]), "v_pos"),  # not increasing
    (([0, 1], [0.5, 0.6], [0], [0.5]), "v_neg"),  # one knot
    (([0, 1], [0.5, 0.6], [0, 1], [0.5]), "f_neg"),  # lengths differ
    (([0, 1], [0.5, math.nan], [0, 1], [0.5, 0.6]), "f_pos"),
    (([0, 1], ["0.5", 0.6], [0, 1], [0.5, 0.6]), "f_pos"),
    (([0, 1e-300], [0.0, 1e10], [0, 1], [0.5, 0.6]), "v_pos"),  # slope beyond the float range
    (([[0, 1]], [[0.5, 0.6]], [0, 1], [0.5, 0.6]), "v_pos"),  # per joint and one law mixed
    (([[0, 1], [0, 2]], [[0.5, 0.6]], [[0, 1], [0, 1]], [[0.5, 0.6], [0.5, 0.6]]), "f_pos"),
])
def test_bad_parameters_name_the_field(args, field):
    with pytest.raises(ValueError, match=field):
        PiecewiseLinearFriction(*args)


def test_total_for_huge_inputs_and_parameters():
    law = PiecewiseLinearFriction([0, 1e-3, 1], [1e3, 1e150, 1e300], [0, 1], [0.0, 1e-300])
    for x in (1e308, -1e308, 1e-308, 3.0, -3.0):
        for Z in (1e-300, 1e-3, 1.0, 1e300):
            y = law.phi_z(x, Z)
            assert math.isfinite(y)
            assert np.all(np.isfinite(law.phi_z(np.array([x, -x]), Z)))
        assert math.isfinite(law.phi(x))


def test_rigid_admittance_holds_stiction_exactly_and_slides_to_the_curve_speed():
    """Model A (26) with the curve: a load inside the static set [−0.2, 0.3] holds the mass at
    v = 0.0 exactly for 10 s (no drift); a load above it accelerates the mass to the speed
    where the curve balances it, on the segment it falls in (analytic: v_k + (h − f_k)/s_k)."""
    law = PiecewiseLinearFriction.from_curve(CURVE)
    dt = 1e-3
    for h in (0.29, -0.19, 0.0):
        el = RigidAdmittance(0.05, law, dt)
        vs = [el.step(h) for _ in range(10000)]
        assert all(v == 0.0 for v in vs) and el.state.stuck
    # slowest approach: M/s = 0.05/0.05 = 1 s on the last segment; 40 s leave e^-40
    for h, v_exp in ((0.4, 0.05), (0.55, 0.3), (0.7, 2.5), (-0.45, -0.6)):
        el = RigidAdmittance(0.05, law, dt)
        for _ in range(40000):
            v = el.step(h)
        assert v == pytest.approx(v_exp, rel=1e-9)
        assert law.phi(v) == pytest.approx(h, rel=1e-9)


def test_massless_impedance_renders_the_curve_and_sticks_without_drift():
    """Model C (38) driven at constant speed u renders Φ(u) once the spring has settled; after
    a short push below the level at 0 and u = 0 the contact sticks: its force stays bit-equal."""
    law = PiecewiseLinearFriction.from_curve(CURVE)
    dt = 1e-3
    for u in (0.05, 0.3, 2.0, -0.1, -1.5):
        el = MasslessImpedance(2000.0, 1.0, law, dt)
        for _ in range(3000):
            f = el.step(u)
        assert f == pytest.approx(CURVE.kinetic(u), rel=1e-9)
        assert not el.state.stuck
    el = MasslessImpedance(2000.0, 1.0, law, dt)
    for _ in range(5):
        el.step(0.01)  # 5e-5 rad of presliding: K e = 0.1 < 0.3
    f0 = el.step(0.0)
    held = [el.step(0.0) for _ in range(5000)]
    assert el.state.stuck and all(f == f0 for f in held) and 0.0 < f0 < 0.3
