"""The paper's running example as the authors define it (paper 002, Waltersson & Karayiannidis;
their code github.com/Gabrieleenx/FrictionModelling): the Fig. 5 velocity profile
(``tests/velocity_profiles.py: vel_num_cells``) and the contact grids of Fig. 8
(``frictionModelsCPP/utils.cpp: shape_function``, ``surfaces/surfaces.py``).

The reference values are written out here from the authors' definitions, never taken from our
own output (issue 13, items 10 and 11).
"""

import numpy as np
import pytest

import fric_core.planar as P

# --- Fig. 5: the authors' vel_num_cells --------------------------------------------------------
# cor_max = 0.015 m/s; breakpoints t1 … t11 = 0.6, 0.8, 1.4, 1.6, 2.2, 2.4, 2.7, 3.4, 4.0, 4.3,
# 4.6 s. v_x: 0 → cor_max over t2–t3, held to t4, → 0 over t4–t5. v_y: 0 → 0.4 cor_max = 0.006
# m/s over t6–t7, held to t10, → 0 over t10–t11. ω ("tau" in their dict): 0 → 1 rad/s over
# 0–t1, held to t8, → 0 over t8–t9. Everything zero from t11.
FIG5_POINTS = [
    # t [s]  v_x [m/s]  v_y [m/s]  ω [rad/s]
    (0.0, 0.0, 0.0, 0.0),
    (0.3, 0.0, 0.0, 0.5),
    (0.6, 0.0, 0.0, 1.0),
    (0.8, 0.0, 0.0, 1.0),
    (1.1, 0.0075, 0.0, 1.0),
    (1.4, 0.015, 0.0, 1.0),
    (1.6, 0.015, 0.0, 1.0),
    (1.9, 0.0075, 0.0, 1.0),
    (2.2, 0.0, 0.0, 1.0),
    (2.4, 0.0, 0.0, 1.0),
    (2.55, 0.0, 0.003, 1.0),
    (2.7, 0.0, 0.006, 1.0),
    (3.0, 0.0, 0.006, 1.0),
    (3.4, 0.0, 0.006, 1.0),
    (3.7, 0.0, 0.006, 0.5),
    (4.0, 0.0, 0.006, 0.0),
    (4.3, 0.0, 0.006, 0.0),
    (4.45, 0.0, 0.003, 0.0),
    (4.6, 0.0, 0.0, 0.0),
    (4.99, 0.0, 0.0, 0.0),
]


def _authors_vel_num_cells(t):
    """The authors' profile, transcribed segment by segment (their if/elif chain)."""
    cor_max = 0.015
    t1, t2, t3, t4, t5, t6, t7, t8, t9, t10, t11 = (0.6, 0.8, 1.4, 1.6, 2.2, 2.4, 2.7, 3.4, 4.0,
                                                    4.3, 4.6)
    if t < t1:
        return 0.0, 0.0, t / t1
    if t < t2:
        return 0.0, 0.0, 1.0
    if t < t3:
        return cor_max * (t - t2) / (t3 - t2), 0.0, 1.0
    if t < t4:
        return cor_max, 0.0, 1.0
    if t < t5:
        return cor_max * (t5 - t) / (t5 - t4), 0.0, 1.0
    if t < t6:
        return 0.0, 0.0, 1.0
    if t < t7:
        return 0.0, 0.4 * cor_max * (t - t6) / (t7 - t6), 1.0
    if t < t8:
        return 0.0, 0.4 * cor_max, 1.0
    if t < t9:
        return 0.0, 0.4 * cor_max, (t9 - t) / (t9 - t8)
    if t < t10:
        return 0.0, 0.4 * cor_max, 0.0
    if t < t11:
        return 0.0, 0.4 * cor_max * (t11 - t) / (t11 - t10), 0.0
    return 0.0, 0.0, 0.0


def test_fig5_profile_passes_through_the_authors_breakpoints():
    t = np.array([p[0] for p in FIG5_POINTS])
    expect = np.array([p[1:] for p in FIG5_POINTS])
    # piecewise linear: exact at knots and mid-ramp up to round-off
    np.testing.assert_allclose(P.fig5_twist(t), expect, rtol=0, atol=1e-12)
    assert P.FIG5_DURATION == 5.0


def test_fig5_profile_equals_the_authors_profile_at_every_step():
    # the whole 5 s at the paper's Δt = 1e-5 s would be 5e5 samples; every 1e-4 s (plus all the
    # breakpoints above) covers each segment with ≥ 3000 samples
    t = np.concatenate([np.arange(0.0, 5.0, 1e-4), [p[0] for p in FIG5_POINTS]])
    ours = P.fig5_twist(t)
    ref = np.array([_authors_vel_num_cells(tk) for tk in t])
    assert np.max(np.abs(ours - ref)) < 1e-12
    # peak values of the figure: v_x 15 mm/s, v_y 6 mm/s, ω 1 rad/s
    assert ours[:, 0].max() == pytest.approx(0.015, abs=1e-15)
    assert ours[:, 1].max() == pytest.approx(0.006, abs=1e-15)
    assert ours[:, 2].max() == pytest.approx(1.0, abs=1e-15)
    assert ours.min() >= 0.0


# --- Fig. 8: the authors' grids ---------------------------------------------------------------
def _authors_circle_mask(n):
    """``create_circular_mask(n, n)`` / C++ ``"Circle"``: centre cell int(n/2), radius the
    smallest distance from it to the grid walls, cells with centre distance ≤ radius."""
    c = int(n / 2)
    radius = min(c, c, n - c, n - c)
    iy, ix = np.ogrid[:n, :n]
    return np.sqrt((ix - c) ** 2 + (iy - c) ** 2) <= radius


@pytest.mark.parametrize("n, loaded", [(21, 317), (5, 13), (11, 81), (101, 7845)])
def test_circle_loads_the_authors_cells(n, loaded):
    # the 21×21 running example of Figs. 5, 8: 317 loaded cells (radius 10 cells around the
    # centre cell; the disc of diameter L would load 349)
    s = P.circle(n, 0.02)
    assert s.n_loaded == loaded
    np.testing.assert_array_equal(s.normalized_shape() > 0, _authors_circle_mask(n))
    # uniform pressure on the loaded cells, centred
    w = s.normalized_shape()[s.normalized_shape() > 0]
    np.testing.assert_allclose(w, 1.0 / loaded, rtol=1e-12)
    assert np.all(np.abs(s.cop) < 1e-15)
    # the paper's "radius 10 mm" with 0.02/21 m cells: the outermost loaded cells touch the edge
    assert np.max(np.hypot(s.x, s.y)) == pytest.approx(10 * 0.02 / 21 if n == 21
                                                       else (n - 1) / 2 * 0.02 / n)


def test_the_previous_circle_is_kept_as_circle_inscribed():
    assert P.circle_inscribed(21, 0.02).n_loaded == 349


def test_gradient_line_is_the_authors_line_grad():
    # C++ "LineGrad", N = 21 (odd): the centre column ix = 10 (x = 0) carries p = 1 − iy/N for
    # iy = 0 … N − 1, where iy = 0 is the +y end (y = −(iy + 0.5 − N/2)·cell): 21/21, 20/21, …,
    # 1/21 from +y down to −y. So the ratio of the largest to the smallest cell load is N = 21, the
    # loads are in steps of 1/Σk = 1/231, and the CoP lies (N − 1)/6 cells = 10/3 cells towards +y.
    n, size = 21, 0.02
    cell = size / n
    s = P.gradient_line(n, size)
    shape = s.normalized_shape()
    assert s.n_loaded == 21
    assert np.count_nonzero(shape[10, :]) == 21                     # the column x = 0
    # loads along +y (second index j; y_j = (j + 0.5 − N/2)·cell): 1/231, 2/231, …, 21/231
    np.testing.assert_allclose(shape[10, :], np.arange(1, 22) / 231.0, rtol=1e-12)
    assert s.cop[0] == 0.0
    assert s.cop[1] == pytest.approx(10.0 / 3.0 * cell, rel=1e-12)    # 3.1746 mm
    # "LineGradX" (in-hand, Fig. 31): along x at y = 0, largest at −x, smallest at +x
    sx = P.gradient_line(n, size, axis="x", reverse=True)
    np.testing.assert_allclose(sx.normalized_shape()[:, 10], np.arange(21, 0, -1) / 231.0,
                               rtol=1e-12)
    assert sx.cop[0] == pytest.approx(-10.0 / 3.0 * cell, rel=1e-12)


def test_even_gradient_line_uses_the_two_centre_columns():
    # N even: the authors put the ramp on both centre columns (ix = N/2 − 1, N/2), halved
    n = 20
    s = P.gradient_line(n, 0.02)
    shape = s.normalized_shape()
    assert s.n_loaded == 40
    np.testing.assert_allclose(shape[9, :], shape[10, :], rtol=0)
    np.testing.assert_allclose(shape[9, :], np.arange(1, 21) / (2 * 210.0), rtol=1e-12)
    assert s.cop[0] == 0.0
