"""Limit surfaces: direct integration (7)–(8), pre-computed table (35)–(44), ellipsoid (24),
rescaling (Sec. VI-D)."""

import math

import numpy as np
import pytest

import fric_core.planar as P

L = 0.02
RNG = np.random.default_rng(0)
TW = RNG.normal(size=(1500, 3)) * [0.01, 0.01, 1.0]       # CoR anywhere, mostly near the contact


def _table_error(surface, n_ls):
    tab = P.LimitSurfaceTable.compute(surface, n_ls)
    ref = P.steady_state_wrench(surface, TW)                # the values the table samples
    est = tab.h(TW)
    est[:, 2] *= tab.tau_max
    err = est - ref
    return np.sqrt(np.mean(err[:, :2] ** 2)), np.sqrt(np.mean(err[:, 2] ** 2)) / tab.tau_max


@pytest.mark.parametrize("factory, max_slope, max_err20", [
    (P.circle, -1.5, 3e-3), (P.square, -1.5, 3e-3), (P.gradient_line, -1.5, 3e-3),
    (P.line, -1.35, 4e-3)])
def test_table_converges_to_the_limit_surface_as_resolution_grows(factory, max_slope, max_err20):
    s = factory(21, L)
    n_ls = np.array([10, 20, 40])
    errs = np.array([_table_error(s, n) for n in n_ls])          # (3, 2): RMS of f_t and τ
    # Convergence order = least-squares slope of log RMS error over log N_ls. Bilinear
    # interpolation of a smooth surface gives slope −2; where h is only C⁰ (the CoR crossing
    # the contact edge and the CoR-cell edges of (23)) the error is O(1/N_ls) on an O(1/N_ls)
    # fraction of the sphere, so RMS → O(N_ls^−1.5) asymptotically. Measured slopes (f_t, τ):
    # circle (−1.82, −1.83), square (−1.89, −1.80), gradient line (−1.87, −1.92) (the authors'
    # grids): require < −1.5. The one-cell-wide line is kink-dominated, measured (−1.71, −1.59):
    # require < −1.35. A nearest-node look-up (slope −1) or a wrong cell index (no convergence)
    # fails.
    for j in range(2):
        slope = np.polyfit(np.log(n_ls), np.log(errs[:, j]), 1)[0]
        assert slope < max_slope, (j, slope, errs[:, j])
    # at the paper's N_ls = 20 (Table III) the RMS error is ~0.1 % of μ f_N: measured
    # 0.10–0.24 % (circle, square, gradient line; bound 0.3 %), 0.23 % for the line (bound 0.4 %)
    assert max(errs[1]) < max_err20


def test_table_matches_the_analytic_points():
    s = P.circle(21, L)
    tab = P.LimitSurfaceTable.compute(s, 20)
    # pure translation: h = −v̂ (every cell slides alike), exact on a θ node; between nodes the
    # linear interpolation of unit vectors 2π/(4·20) apart sags by ≤ 1 − cos(π/80) = 7.7e-4
    np.testing.assert_allclose(tab.h([0.005, 0.0, 0.0]), [-1.0, 0.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(tab.h([0.003, -0.004, 0.0]), [-0.6, 0.8, 0.0], atol=7.7e-4)
    # pure rotation: h = (0, 0, ∓1)
    np.testing.assert_allclose(tab.h([0.0, 0.0, 2.0]), [0.0, 0.0, -1.0], atol=1e-12)
    np.testing.assert_allclose(tab.h([0.0, 0.0, -2.0]), [0.0, 0.0, 1.0], atol=1e-12)
    # the normalisation (31): every component within [−1, 1]
    assert np.all(np.abs(tab.h(TW)) <= 1 + 1e-12)
    # odd symmetry of the limit surface: h(−v) = −h(v). For ω ≠ 0 the look-up (37), (44) makes
    # it exact by construction (−v maps to the same cell, sign flipped): round-off only.
    np.testing.assert_allclose(tab.h(-TW), -tab.h(TW), atol=1e-12)
    # At ω = 0 (the ϕ = π/2 seam) there is no sign flip: −v is looked up at θ + π, i.e. in the
    # other half of the table, so the sampled nodes themselves must be odd there (measured
    # deviation ~2e-15: only cos(π/2) ≠ 0 and cos(θ + π) ≠ −cos θ in floating point).
    n = tab.n_ls
    seam = tab.nodes[:, n, :]                                   # ϕ = π/2, θ = i π/(2 N_ls)
    np.testing.assert_allclose(np.roll(seam, -2 * n, axis=0), -seam, atol=1e-12)
    flat = TW.copy()
    flat[:, 2] = 0.0
    np.testing.assert_allclose(tab.h(-flat), -tab.h(flat), atol=1e-12)


def test_gradient_line_table_keeps_the_tangential_force_of_pure_rotation():
    # Fig. 16 in the table: rotation about the CoP of a gradient line gives |h_t| = 1/9 (Coulomb,
    # see test_planar_distributed); the ellipsoid (24) always gives 0 there.
    # The authors' gradient line runs along y with its heavy end at +y: a positive rotation
    # about the CoP moves the heavier (+y) side towards −x, so the net force is along +x.
    s = P.gradient_line(101, L)
    tab = P.LimitSurfaceTable.compute(s, 20)
    assert tab.h([0.0, 0.0, 1.0])[0] == pytest.approx(1 / 9, rel=2e-2)
    ell = P.EllipsoidLimitSurface.from_surface(s)
    assert np.all(ell.h([0.0, 0.0, 1.0])[:2] == 0.0)


def test_zero_twist_has_no_sliding_direction():
    # h (31) is undefined at v = 0; like the ellipsoid (24) the table returns 0 there (array,
    # batch and scalar look-up alike), and stays a unit-size wrench for any non-zero twist
    tab = P.LimitSurfaceTable.compute(P.circle(11, L), 8)
    assert np.all(tab.h([0.0, 0.0, 0.0]) == 0.0)
    assert np.all(tab.h(np.zeros((4, 3))) == 0.0)
    assert tab.h_scalar(0.0, 0.0, 0.0) == (0.0, 0.0, 0.0)
    ell = P.EllipsoidLimitSurface.from_surface(P.circle(11, L))
    np.testing.assert_array_equal(tab.h(np.zeros((2, 3))), ell.h(np.zeros((2, 3))))
    mixed = np.array([[0.0, 0.0, 0.0], [1e-9, 0.0, 0.0], [0.0, 0.0, -1e-9]])
    np.testing.assert_allclose(tab.h(mixed), [[0, 0, 0], [-1, 0, 0], [0, 0, 1]], atol=1e-12)
    for tw in mixed:
        np.testing.assert_allclose(tab.h_scalar(*tw), tab.h(tw), atol=1e-15)


def test_rescaling_reproduces_the_table_of_the_scaled_surface():
    # Sec. VI-D: a surface scaled by s has h_s(v, ω) = h(v, s ω); only r changes, no recomputation
    s = P.gradient_line(21, L)
    tab = P.LimitSurfaceTable.compute(s, 12)
    big = P.LimitSurfaceTable.compute(s.scaled(2.5), 12)
    resc = tab.rescaled(2.5)
    assert resc.radius == pytest.approx(big.radius, rel=1e-12)
    assert resc.viscous_torque_scale == pytest.approx(big.viscous_torque_scale, rel=1e-12)
    np.testing.assert_allclose(resc.h(TW), big.h(TW), atol=1e-12)
    # ... and the scalar look-up of the rescaled table agrees (it shares the coefficients)
    for tw in TW[:20]:
        np.testing.assert_allclose(resc.h_scalar(*tw), big.h(tw), atol=1e-12)
    np.testing.assert_allclose(tab.h(TW), P.LimitSurfaceTable.compute(s, 12).h(TW), atol=0)


def test_hertz_surface_with_constant_k_needs_no_new_table():
    t1 = P.LimitSurfaceTable.compute(P.hertz_like(21, 1.0), 12)
    t8 = P.LimitSurfaceTable.compute(P.hertz_like(21, 8.0), 12)
    resc = t1.rescaled(float(P.hertz_radius(8.0) / P.hertz_radius(1.0)))
    np.testing.assert_allclose(resc.h(TW), t8.h(TW), atol=1e-12)


def test_ellipsoid_is_the_unit_sphere_in_scaled_velocity():
    ell = P.EllipsoidLimitSurface(radius=0.004, viscous_torque_scale=2e-5)
    h = ell.h(TW)
    np.testing.assert_allclose(np.linalg.norm(h, axis=1), 1.0, rtol=1e-12)   # (24) normalised
    vs = TW * [1, 1, 0.004]
    np.testing.assert_allclose(h, -vs / np.linalg.norm(vs, axis=1)[:, None], rtol=1e-12)
    assert np.all(ell.h([0.0, 0.0, 0.0]) == 0.0)                             # zero twist: no NaN
    r = P.circle(21, L).rim_radius
    assert P.EllipsoidLimitSurface.from_surface(P.circle(21, L)).radius == pytest.approx(r)


def test_limit_surface_direct_integration_of_a_square_in_pure_rotation():
    # τ = μ f_N × mean distance of the square to its centre = μ f_N L (√2 + asinh 1)/6; midpoint
    # rule at N = 41 is within 1e-3 (O(1/N²), see test_planar_surfaces)
    tau = P.limit_surface_wrench(P.square(41, L, 2.0), [0.0, 0.0, 3.0], mu=0.5)[2]
    assert tau == pytest.approx(-0.5 * 2.0 * L * (math.sqrt(2) + math.asinh(1)) / 6, rel=1e-3)


@pytest.mark.parametrize("n_ls", [1, 0, 2.5, "x"])
def test_bad_resolution_is_rejected(n_ls):
    with pytest.raises(ValueError, match="n_ls"):
        P.LimitSurfaceTable.compute(P.circle(5, L), n_ls)


def test_nan_twists_are_rejected():
    tab = P.LimitSurfaceTable.compute(P.circle(5, L), 4)
    with pytest.raises(ValueError, match="twist"):
        tab.h([0.0, np.nan, 1.0])
    with pytest.raises(ValueError, match="twist"):
        P.limit_surface_wrench(P.circle(5, L), [[0.0, 1.0]])
    with pytest.raises(ValueError, match="mu"):
        P.limit_surface_wrench(P.circle(5, L), [0.0, 1.0, 0.0], mu=0.0)
