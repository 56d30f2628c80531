"""Contact surfaces of fric_core.planar (paper 002, Figs. 4, 8, 33; (25), (29), (45)–(46))."""

import math

import numpy as np
import pytest

import fric_core.planar as P

L = 0.02


@pytest.mark.parametrize("factory", [P.circle, P.square, P.line, P.gradient_line,
                                     P.non_convex_1, P.non_convex_2])
def test_pressure_integrates_to_the_normal_force(factory):
    s = factory(21, L, normal_force=3.5)
    # Σ p A = f_N by construction (the normalisation is exact up to round-off)
    assert np.sum(s.pressure) * s.cell_area == pytest.approx(3.5, rel=1e-12)
    assert s.weights.sum() == pytest.approx(1.0, rel=1e-12)
    assert np.all(s.pressure >= 0)


@pytest.mark.parametrize("factory", [P.circle, P.square, P.line])
def test_symmetric_surfaces_have_their_cop_at_the_centre(factory):
    s = factory(21, L)
    assert np.all(np.abs(s.cop) < 1e-15)     # exact symmetry; round-off only


def test_gradient_line_midpoint_cop_is_at_a_sixth_of_the_length():
    # p ∝ s + L/2 on [−L/2, L/2]: CoP = ∫s(s + L/2) / ∫(s + L/2) = (L³/12)/(L²/2) = L/6. The grid
    # samples cell centres (midpoint rule), whose error for ∫s² is L³/(12 N²): with N = 21 the
    # CoP is within L/(2N²) of L/6.
    n = 21
    s = P.gradient_line_midpoint(n, L, axis="x")
    assert s.cop[0] == pytest.approx(L / 6, abs=L / (2 * n * n))
    assert s.cop[1] == 0.0
    rev = P.gradient_line_midpoint(n, L, axis="x", reverse=True)
    assert rev.cop[0] == pytest.approx(-s.cop[0], abs=1e-15)


def test_square_r_and_u_converge_to_the_continuous_integrals():
    # Square of side L, uniform: u (29) = ∫‖ρ‖² p_n dA = L²/6 and r (25) = mean distance to the
    # centre = L(√2 + asinh 1)/6. Midpoint-rule errors fall as 1/N² (u is exactly L²/6·(1 − 1/N²)).
    r_exact = L * (math.sqrt(2) + math.asinh(1.0)) / 6
    errs = []
    for n in (5, 11, 21, 41):
        s = P.square(n, L)
        assert s.viscous_torque_scale == pytest.approx(L * L / 6 * (1 - 1 / n ** 2), rel=1e-12)
        errs.append(abs(s.rim_radius - r_exact) / r_exact)
    assert all(b < a for a, b in zip(errs, errs[1:]))      # monotone convergence
    assert errs[-1] < 1e-3                                 # O(1/N²) at N = 41


def test_hertz_like_surface_scales_with_the_cube_root_of_the_load():
    s1 = P.hertz_like(21, normal_force=1.0)
    s8 = P.hertz_like(21, normal_force=8.0)
    # (45): a = 6 mm f_N^(1/3): 8 N doubles the radius; the grid spans the contact disc
    assert s1.size == pytest.approx(2 * 6e-3)
    assert s8.size == pytest.approx(2 * s1.size)
    # constant k: the normalised shape is identical, only the size changes (Sec. VI-D)
    np.testing.assert_allclose(s8.normalized_shape(), s1.normalized_shape(), rtol=0, atol=1e-15)
    assert s8.rim_radius == pytest.approx(2 * s1.rim_radius, rel=1e-12)
    # k = 2 f_N changes the distribution: flatter (more load at the rim) at higher load
    assert P.hertz_like(21, 2.0, k=4.0).rim_radius / 2 ** (1 / 3) > s1.rim_radius


def test_twist_and_wrench_transforms_preserve_power():
    rng = np.random.default_rng(1)
    tw = rng.normal(size=(5, 3))
    wr = rng.normal(size=(5, 3))
    p, c = np.array([0.01, -0.02]), np.array([-0.003, 0.004])
    tw_c = P.twist_to_cop(tw, p, c)
    wr_p = P.wrench_from_cop(wr, c, p)
    # the power of a wrench on a twist does not depend on the point both are expressed at
    np.testing.assert_allclose(np.sum(wr_p * tw, axis=1), np.sum(wr * tw_c, axis=1), rtol=1e-12)
    np.testing.assert_allclose(P.twist_to_cop(tw_c, c, p), tw, rtol=1e-12, atol=1e-15)


# --- bad input ------------------------------------------------------------------------------
@pytest.mark.parametrize("pressure, field", [
    (np.zeros((0, 0)), "pressure"), ([[1.0, -1.0], [1.0, 1.0]], "pressure"),
    (np.zeros((3, 3)), "pressure"), (np.ones((2, 3)), "pressure"),
    ([[np.nan, 1], [1, 1]], "pressure"),
    (np.ones((1, 1)), "n_cells"),
])
def test_bad_pressure_grids_are_rejected(pressure, field):
    with pytest.raises(ValueError, match=field):
        P.ContactSurface(pressure, L)


@pytest.mark.parametrize("fn", [0.0, -1.0, float("nan")])
def test_surface_needs_a_positive_normal_force(fn):
    with pytest.raises(ValueError, match="normal_force"):
        P.circle(21, L, normal_force=fn)
    with pytest.raises(ValueError, match="normal_force"):
        P.hertz_like(21, normal_force=fn)


def test_hertz_like_takes_one_load():
    # one surface has one normal force: an array is a clear error, not a TypeError from float()
    with pytest.raises(ValueError, match="normal_force"):
        P.hertz_like(21, normal_force=np.array([1.0, 2.0]))


@pytest.mark.parametrize("n", [1, 0, -3, 2.5])
def test_resolution_below_two_is_rejected(n):
    with pytest.raises(ValueError, match="n_cells"):
        P.square(n, L)


def test_bad_size_is_rejected():
    with pytest.raises(ValueError, match="size"):
        P.square(5, 0.0)
