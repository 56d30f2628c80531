"""Friction laws: Theorem 1 (Φ_Z solves y = Φ(x − Z y)), eqs. (15), (23), (25), (46)–(59).

Tolerances: the closed forms are a handful of float operations on O(1..100) numbers, so the
residual of y = Φ(x − Z y) is a few ulp of the largest term; 1e-12 relative to max(1, |y|, |x|/Z)
leaves a margin of ~1e3 ulp and would still catch any wrong formula (errors are O(1)).
"""

import math

import numpy as np
import pytest
from scipy.optimize import brentq

from fric_core.laws import (AsymmetricFriction, Coulomb, CoulombViscous, EllipticCoulomb,
                            Stribeck)

RNG = np.random.default_rng(20061201)

EXACT_LAWS = [
    Coulomb(8.0),
    CoulombViscous(5.0, 2.0),
    AsymmetricFriction(Cp=1.7714, Cn=1.729, bp=0.457, bn=0.6196, Dp=2.1302, Dn=-1.8623,
                       dv=0.007),  # paper 003, Table 2, brass 1
    AsymmetricFriction(Cp=1.0, Cn=2.0, bp=0.5, bn=0.1, Dp=0.8, Dn=-2.5, dv=0.05),  # Dp < Cp
]


def _residual_scalar(law, x, Z, y):
    """|y − Φ(x − Zy)| in the sliding case, or the static-set condition in the stuck case."""
    w = x - Z * y
    lo, hi = law.static_bounds()
    if y == x / Z:  # stuck: w = 0 and y inside the static set (eq. 16, second case)
        assert lo - 1e-12 <= y <= hi + 1e-12
        return 0.0
    assert w != 0.0
    return abs(y - law._phi_scalar(w))


@pytest.mark.parametrize("law", EXACT_LAWS, ids=lambda l: type(l).__name__)
def test_phi_z_solves_implicit_equation_scalar(law):
    for _ in range(4000):
        Z = 10.0 ** RNG.uniform(-5, -1)
        # Φ_Z of the widened law: test_asymmetric_regularised_when_15_fails
        if not law.is_unique(Z):
            continue
        x = RNG.normal() * 10.0 ** RNG.uniform(-6, 1)
        y = law.phi_z(x, Z)
        scale = max(1.0, abs(y), abs(x) / Z)
        assert _residual_scalar(law, x, Z, y) <= 1e-12 * scale, (x, Z, y)
        # the stuck branch is taken exactly when x/Z is in the static set (eq. 16)
        lo, hi = law.static_bounds()
        assert (y == x / Z) == (lo <= x / Z <= hi)


@pytest.mark.parametrize("law", EXACT_LAWS, ids=lambda l: type(l).__name__)
def test_phi_z_per_joint_equals_scalar(law):
    Z = 1e-3
    x = RNG.normal(size=500) * 0.05
    if law.per_joint:
        vec = law.phi_z(x, Z)
    else:
        per_joint = type(law)(**{k: np.full(x.size, getattr(law, k))
                                 for k in ("F", "D") if hasattr(law, k)})
        vec = per_joint.phi_z(x, Z)
    ref = np.array([law._phi_z_scalar(float(xi), Z) for xi in x])
    np.testing.assert_allclose(vec, ref, rtol=1e-15, atol=0.0)


@pytest.mark.parametrize("law", [Coulomb(3.0), CoulombViscous(3.0, 4.0)], ids=repr)
def test_phi_z_nd_solves_implicit_equation(law):
    """n-D eqs. (53), (55): y = Φ(x − Z y) with Φ(w) = F w/‖w‖ + D w, or x/Z inside the ball."""
    D = getattr(law, "D", 0.0)
    for _ in range(2000):
        n = int(RNG.integers(2, 7))
        Z = 10.0 ** RNG.uniform(-4, -1)
        x = RNG.normal(size=n) * 10.0 ** RNG.uniform(-5, 0)
        y = law.phi_z(x, Z)
        if np.array_equal(y, x / Z):
            assert np.linalg.norm(y) <= law.F * (1 + 1e-12)
            continue
        w = x - Z * y
        phi = law.F * w / np.linalg.norm(w) + D * w
        assert np.max(np.abs(y - phi)) <= 1e-12 * max(1.0, np.linalg.norm(x) / Z)


@pytest.mark.parametrize("law", [Coulomb(3.0), CoulombViscous(3.0, 4.0),
                                 Stribeck(2.0, 3.0, 0.01, D=1.0)], ids=repr)
def test_phi_z_nd_rotation_invariant(law):
    for _ in range(200):
        q, _ = np.linalg.qr(RNG.normal(size=(3, 3)))
        x = RNG.normal(size=3) * 10.0 ** RNG.uniform(-4, 0)
        Z = 10.0 ** RNG.uniform(-4, -2)
        np.testing.assert_allclose(law.phi_z(q @ x, Z), q @ law.phi_z(x, Z),
                                   rtol=1e-12, atol=1e-12 * np.linalg.norm(x) / Z)


@pytest.mark.parametrize("law", EXACT_LAWS + [Stribeck(2.0, 3.0, 0.01, D=1.0)], ids=repr)
def test_phi_z_continuous_lipschitz_and_dissipative(law):
    """Φ_Z is continuous with slope ≤ 1/Z (stick: 1/Z; slip: Φ'/(1+ZΦ') < 1/Z), has the sign
    of x, and the resulting sliding velocity x − Z y never exceeds |x| (dissipativity)."""
    Z = 1e-3 if law.exact else 1e-4
    x = np.linspace(-0.2, 0.2, 100001)
    y = np.array([law._phi_z_scalar(float(xi), Z) for xi in x[::1]])
    dx = x[1] - x[0]
    assert np.max(np.abs(np.diff(y))) <= dx / Z * (1 + 1e-9)
    assert np.all(y * x >= 0.0)
    assert np.all(np.abs(x - Z * y) <= np.abs(x) * (1 + 1e-15))


def test_coulomb_closed_form_23():
    law, Z = Coulomb(8.0), 1e-3
    assert law.phi_z(0.5, Z) == 8.0  # |x| > ZF: F sgn(x)
    assert law.phi_z(-0.5, Z) == -8.0
    assert law.phi_z(0.004, Z) == 0.004 / Z  # |x| <= ZF: x/Z


def test_coulomb_viscous_closed_form_25():
    law, Z = CoulombViscous(5.0, 2.0), 0.01
    x = 1.0
    assert law.phi_z(x, Z) == pytest.approx((5.0 + 2.0 * x) / (1 + Z * 2.0), rel=1e-15)


def test_stribeck_approximation_error_bounded_by_47():
    """(46) vs the true Φ_Z (solved by brentq where (15) holds): the error is Z |Φ_Z Φ'| + O(Z²)
    (eq. 47); we allow 2× that first-order bound, the O(Z²) term being ≤ (Z max|Φ'|)² relative."""
    law = Stribeck(Fc=2.0, Fs=3.0, vs=0.05, D=0.5)
    _, hi = law.slope_bounds()

    def true_phi_z(x, Z):  # x > 0; law is odd
        if x / Z <= law.Fs:
            return x / Z
        # sliding velocity w in (0, x) solves (x − w)/Z = Φ(w): positive at 0+, negative at x
        w = brentq(lambda w: (x - w) / Z - law._phi_scalar(w), 1e-300, x, xtol=1e-18,
                   rtol=1e-15)
        return (x - w) / Z

    for Z in (1e-4, 1e-3, 5e-3):
        assert law.is_unique(Z) and law.approximation_valid(Z, margin=0.1)
        for x in np.linspace(1e-6, 0.3, 1201):
            y_true = true_phi_z(float(x), Z)
            for sgn in (1.0, -1.0):
                y_hat = law.phi_z(sgn * float(x), Z)
                bound = 2.0 * Z * abs(y_true) * hi + 1e-12
                assert abs(y_hat - sgn * y_true) <= bound, (Z, x, y_hat, y_true)


def test_theorem1_uniqueness_condition_15():
    """(15) decides uniqueness: count the roots of g(y) = y − Φ(x − Z y) over the admissible y."""
    law = Stribeck(Fc=1.0, Fs=4.0, vs=0.01, delta=2.0)  # steep drop: min Φ' ≈ −257 N·s/m
    lo, _ = law.slope_bounds()
    assert lo == pytest.approx(-3.0 * 2 * math.sqrt(0.5) * math.exp(-0.5) / 0.01, rel=1e-12)
    Z_ok, Z_bad = 0.5 / -lo, 3.0 / -lo
    assert law.is_unique(Z_ok) and not law.is_unique(Z_bad)

    def n_solutions(x, Z):
        # solutions with sliding velocity w = x − Zy > 0, i.e. y < x/Z; plus the stuck one
        w = np.linspace(1e-9, x, 20001)  # steps ≤ 5 µm/s ≪ vs = 10 mm/s
        r = (x - w) / Z - np.array([law._phi_scalar(float(v)) for v in w])  # y(w) − Φ(w)
        roots = int(np.count_nonzero(np.sign(r[1:]) != np.sign(r[:-1])))
        return roots + (1 if x / Z <= 4.0 else 0)

    xs = np.linspace(0.001, 0.1, 100)  # covers x/Z around Fs, where the fold appears
    assert all(n_solutions(x, Z_ok) == 1 for x in xs)
    assert max(n_solutions(x, Z_bad) for x in xs) == 3  # two sliding solutions + the stuck one


def test_asymmetric_law_shape_and_bounds():
    law = EXACT_LAWS[2]
    assert law.static_bounds() == (law.Dn, law.Dp)
    assert law.phi(1e-12) == pytest.approx(law.Dp)
    assert law.phi(-1e-12) == pytest.approx(law.Dn)
    assert law.phi(law.dv) == pytest.approx(law.Cp + law.bp * law.dv, rel=1e-12)
    assert law.phi(0.5) == pytest.approx(law.Cp + law.bp * 0.5, rel=1e-15)
    assert law.phi(-0.5) == pytest.approx(-law.Cn - law.bn * 0.5, rel=1e-15)


def test_asymmetric_regularised_when_15_fails():
    """Brass (Table 2) in a model C with K = 6000, B = 10 at 1 kHz: Z = 1/16 violates (15); Φ_Z
    stays continuous and solves y = Φ_eff(x − Zy) for the widened transition it reports."""
    law = EXACT_LAWS[2]
    Z = 1.0 / (10.0 + 1e-3 * 6000.0)
    assert not law.is_unique(Z)
    wp, wn = law.effective_dv(Z)
    assert wp > law.dv and wn > law.dv
    eff = AsymmetricFriction(law.Cp, law.Cn, law.bp, law.bn, law.Dp, law.Dn, wp)
    assert eff.is_unique(Z)
    for x in np.linspace(0.0, 2.0, 2001)[1:]:
        y = law.phi_z(float(x), Z)
        if y != x / Z:
            assert abs(y - eff._phi_scalar(x - Z * y)) <= 1e-12 * max(1, x / Z)
    xs = np.linspace(-2, 2, 200001)
    ys = law.phi_z(xs, Z)  # per-joint path; agreement with the scalar path is tested above
    assert np.max(np.abs(np.diff(ys))) <= (xs[1] - xs[0]) / Z * (1 + 1e-9)


def test_elliptic_coulomb_59():
    iso = EllipticCoulomb([2.0, 2.0, 2.0])
    ref = Coulomb(2.0)
    for _ in range(100):
        x = RNG.normal(size=3) * 0.01
        np.testing.assert_allclose(iso.phi_z(x, 1e-3), ref.phi_z(x, 1e-3), rtol=1e-13, atol=1e-13)
    ell = EllipticCoulomb([1.0, 3.0])
    for ang in np.linspace(0, 2 * np.pi, 37):
        x = np.array([np.cos(ang), np.sin(ang)])
        f = ell.phi(x)
        assert np.sum((f / ell.F) ** 2) == pytest.approx(1.0, rel=1e-12)  # on the limit ellipse
        assert f @ x > 0  # dissipative
        y = ell.phi_z(x * 10.0, 1e-3)  # far from the stick region (59) ≈ Φ
        assert np.linalg.norm(y - f) <= 1e-3 * 10 * np.linalg.norm(f)
    with pytest.raises(ValueError, match="vector"):
        ell.phi_z(0.1, 1e-3)


@pytest.mark.parametrize("make, field", [
    (lambda: Coulomb(-1.0), "F"),
    (lambda: Coulomb(float("nan")), "F"),
    (lambda: Coulomb(np.ones((2, 2))), "F"),
    (lambda: Coulomb("abc"), "F"),
    (lambda: CoulombViscous(1.0, -0.1), "D"),
    (lambda: Stribeck(1.0, 2.0, 0.0), "vs"),
    (lambda: Stribeck(1.0, 2.0, 0.1, delta=-1.0), "delta"),
    (lambda: Stribeck(np.ones(3), np.ones(2), 0.1), "Fs"),
    (lambda: AsymmetricFriction(1, 1, 0, 0, 2, 0.5, 0.01), "Dn"),
    (lambda: AsymmetricFriction(1, 1, 0, 0, 2, -2, 0.0), "dv"),
    (lambda: AsymmetricFriction(0, 1, 0, 0, 2, -2, 0.01), "Cp"),
    (lambda: EllipticCoulomb([1.0]), "F"),
])
def test_invalid_parameters_name_the_field(make, field):
    with pytest.raises(ValueError, match=rf"^{field}:"):
        make()


def test_invalid_phi_z_arguments():
    law = Coulomb(1.0)
    with pytest.raises(ValueError, match="^Z:"):
        law.phi_z(0.1, 0.0)
    with pytest.raises(ValueError, match="^x:"):
        law.phi_z(float("nan"), 1e-3)
    with pytest.raises(ValueError, match="^x:"):
        Coulomb(np.ones(3)).phi_z(np.ones(2), 1e-3)
