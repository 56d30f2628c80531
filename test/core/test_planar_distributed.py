"""Distributed planar LuGre / Elasto-Plastic model (paper 002, (9)–(18), (21)–(23))."""

import math

import numpy as np
import pytest

import fric_core.planar as P

L = 0.02
COULOMB = P.PlanarFrictionParams.coulomb(mu=0.7)
# twists at the CoP: sliding, spinning, and CoR inside / near / outside a 10 mm contact
TWISTS = np.array([[0.01, 0.0, 0.0], [0.0, 0.0, 1.0], [0.003, -0.002, 1.0],
                   [0.004, 0.006, -0.8], [-0.02, 0.01, 0.5], [0.001, 0.0, -2.0]])


def _settle(model, twist, steps=5):
    """Exact update with a 1 s step: every cell with ‖v‖ ≥ 10 µm/s has a·h ≥ σ0·1e-5/μ ≥ 10,
    so five steps leave a relative transient below e^{−50}."""
    f = None
    for _ in range(steps):
        f = model.step(twist)
    return f


@pytest.mark.parametrize("factory", [P.circle, P.square, P.gradient_line, P.non_convex_1])
def test_coulomb_steady_state_lies_on_the_limit_surface(factory):
    s = factory(21, L, normal_force=2.0)
    m = P.DistributedLuGre(s, COULOMB, dt=1.0)
    for tw in TWISTS:
        m.reset()
        f = _settle(m, tw)
        ls = P.limit_surface_wrench(s, tw, mu=0.7)        # direct integration (7)–(8)
        # the exact update reaches z* (11) up to e^{−50}; cells whose speed is below 10 µm/s (the
        # CoR cell only) carry < 1e-3 of the load, so compare to 1e-9 of μ f_N for the forces
        # unless the CoR lies on a loaded cell centre (not the case for these twists)
        np.testing.assert_allclose(f[:2], ls[:2], atol=1e-9 * 1.4)
        np.testing.assert_allclose(f[2], ls[2], atol=1e-9 * 1.4 * L)


def test_coulomb_wrenches_obey_maximum_dissipation():
    # Limit-surface theory: the wrench of a twist maximises the dissipated power −f·v over the
    # limit surface, so −f(v1)·v1 ≥ −f(v2)·v1 for any v2 (exact per cell: −v̂1·v1 ≥ −v̂2·v1).
    s = P.non_convex_2(21, L)
    m = P.DistributedLuGre(s, COULOMB, dt=1.0)
    fs = []
    for tw in TWISTS:
        m.reset()
        fs.append(_settle(m, tw))
    fs = np.array(fs)
    power = -fs @ TWISTS.T               # power[i, j] = −f(v_i)·v_j
    for j in range(len(TWISTS)):
        assert np.all(power[j, j] >= power[:, j] - 1e-12)


def test_pure_translation_gives_mu_fn_and_disc_rotation_gives_two_thirds_mu_fn_r():
    s = P.circle(41, L, normal_force=1.5)
    m = P.DistributedLuGre(s, COULOMB, dt=1.0)
    f = _settle(m, [0.0, 0.02, 0.0])
    assert f == pytest.approx([0.0, -0.7 * 1.5, 0.0], abs=1e-12)   # every cell slides alike
    m.reset()
    tau = _settle(m, [0.0, 0.0, 1.0])[2]
    # ∫ r dA / A over a disc = 2R/3. The authors' N×N circle loads the cells whose centre lies
    # within (N − 1)/2 cells of the centre: a disc of radius R_N = (L/2)(1 − 1/N) (the loaded
    # area ≈ π R_N², Gauss's circle count). At N = 41 the pixelated disc is within 1 % of it (the
    # mask misplaces at most a rim of cells of width L/41 ≈ 2.4 % of R, partly cancelling;
    # measured 0.02 %)
    r_n = (L / 2) * (1 - 1 / 41)
    assert tau == pytest.approx(-0.7 * 1.5 * 2 / 3 * r_n, rel=1e-2)


@pytest.mark.parametrize("factory", [P.circle, P.square, P.line])
def test_pure_rotation_about_cop_gives_no_tangential_force_on_symmetric_surfaces(factory):
    s = factory(21, L)
    m = P.DistributedLuGre(s, P.TABLE_I[1], dt=1.0)
    f = _settle(m, [0.0, 0.0, 2.0])
    assert abs(f[2]) > 0.3 * L / 2                 # it does resist the rotation
    assert np.hypot(f[0], f[1]) < 1e-12            # Fig. 16: cancels by symmetry (round-off)
    assert np.hypot(*m.steady_state([0.0, 0.0, 2.0])[:2]) < 1e-12


def test_pure_rotation_about_cop_gives_tangential_force_on_the_gradient_line():
    # Fig. 16: p ∝ s + L/2 has its CoP at L/6, where 4/9 of the load lies on one side and 5/9 on
    # the other: rotation about the CoP gives |f_t| = μ f_N (5/9 − 4/9) = μ f_N/9 (Coulomb).
    # The authors' discrete ramp (1/N … N/N, CoP at (L − L/N)/6) tends to it as N grows:
    # N = 101 cells on the line (each ≤ 2 % of the load) and the bilinear CoR (23) give 1 %
    # (measured 0.2 %). The line lies along x here (their "LineGradX" turned: heavy end at +x).
    s = P.gradient_line(101, L, axis="x")
    m = P.DistributedLuGre(s, COULOMB, dt=1.0)
    f = _settle(m, [0.0, 0.0, 1.0])
    assert f[1] == pytest.approx(-0.7 / 9, rel=0.1)          # the dynamic model (one CoR cell off)
    ss = m.steady_state([0.0, 0.0, 1.0])
    assert ss[1] == pytest.approx(-0.7 / 9, rel=1e-2)        # steady state with bilinear CoR
    # rotating about p_s = L/√2 − L/2 (equal load on either side) gives zero tangential force
    d = L / math.sqrt(2) - L / 2 - s.cop[0]
    f_ps = m.steady_state([0.0, -1.0 * d, 1.0])
    assert abs(f_ps[1]) < 0.01 * 0.7                          # one cell's load at N = 101


def test_bilinear_steady_state_removes_the_steps_of_fig10():
    # Fig. 10: a line contact with the CoR moving along it. Without (23) the force jumps each
    # time the CoR crosses a cell centre; with it the force is continuous (piecewise smooth):
    # the largest jump between neighbouring CoR positions 1/50 cell apart must shrink ~50 times.
    s = P.line(11, L, axis="x")
    cor = np.linspace(-0.3 * L, 0.3 * L, 1101)
    tw = np.stack([np.zeros_like(cor), -cor, np.ones_like(cor)], axis=1)  # rotation about (cor, 0)
    f_plain = P.steady_state_wrench(s, tw, P.TABLE_I[0], bilinear=False)
    f_bl = P.steady_state_wrench(s, tw, P.TABLE_I[0], bilinear=True)
    jump_plain = np.max(np.abs(np.diff(f_plain[:, 1])))
    jump_bl = np.max(np.abs(np.diff(f_bl[:, 1])))
    assert jump_plain > 0.15                  # a cell holds 1/11 of the load: a 2/11 flip
    assert jump_bl < jump_plain / 20


def test_steady_state_with_stribeck_and_viscosity_matches_the_dynamic_model():
    s = P.square(15, L, normal_force=1.3)
    m = P.DistributedLuGre(s, P.TABLE_I[1], dt=1.0)
    for tw in TWISTS:
        m.reset()
        f = _settle(m, tw)
        # (11)–(12) without the bilinear CoR is what the dynamic cells converge to (same cells)
        np.testing.assert_allclose(f, m.steady_state(tw, bilinear=False), rtol=1e-9, atol=1e-12)


def test_derivative_matches_the_exact_step_and_vanishes_at_steady_state():
    s = P.circle(11, L)
    m = P.DistributedLuGre(s, P.TABLE_I[1], dt=1e-9)
    rng = np.random.default_rng(3)
    m.state = rng.normal(scale=1e-7, size=2 * m.n_cells)
    z0 = m.state
    tw = np.array([0.004, -0.003, 0.7])
    dz = m.derivative(z0, tw)
    m.step(tw)
    # a 1 ns exact step is ż·h up to O(h²ż̈): relative error ≈ a·h/2 ≤ 1e6·0.01·1e-9 = 1e-5
    np.testing.assert_allclose((m.state - z0) / 1e-9, dz, rtol=1e-4, atol=1e-9)
    m.dt = 1.0
    _settle(m, tw)
    dz_ss = m.derivative(m.state, tw)
    assert np.max(np.abs(dz_ss)) < 1e-12 * 0.01     # ż = 0 at z*: round-off of |v| ~ 1e-2 m/s
    np.testing.assert_allclose(m.wrench(m.state, tw), m.steady_state(tw, bilinear=False),
                               rtol=1e-9, atol=1e-12)


def test_fixed_step_results_converge_with_the_step():
    # Fig. 5 profile, 0.5–2.5 s, on a 11×11 circle: the exact per-step solution with the twist
    # held is first order in the twist's change over a step; halving 5e-4 → 1e-4 s must change
    # the wrench by < 1 % of the peak force (Stribeck transients are resolved by neither).
    s = P.circle(11, L)
    errs = []
    ref = None
    for dt in (1e-4, 5e-4, 2e-3):
        t = np.arange(0.5, 2.5, dt)
        m = P.DistributedLuGre(s, P.TABLE_I[1], dt=dt)
        f = P.simulate(m.step, P.fig5_twist(t))
        idx = np.searchsorted(t, np.arange(0.6, 2.5, 0.1) - 1e-9)
        if ref is None:
            ref = f[idx]
        else:
            errs.append(np.max(np.abs(f[idx] - ref)[:, :2]) / np.max(np.abs(ref[:, :2])))
    assert errs[0] < 1e-2
    assert errs[0] < errs[1]


def test_results_converge_as_cells_grow():
    # Fig. 9: normalised RMSE against a fine grid on the Fig. 5 profile falls with N (square:
    # no pixelation of the outline, so the convergence is monotone).
    t = np.arange(0.0, 5.0, 1e-3)
    tw = P.fig5_twist(t)

    def run(n):
        m = P.DistributedLuGre(P.square(n, L), P.TABLE_I[1], dt=1e-3)
        return P.simulate(m.step, tw)
    ref = run(41)
    errs = [max(P.normalized_rmse(ref, run(n))) for n in (5, 11, 21)]
    assert errs[0] > errs[1] > errs[2]
    assert errs[2] < 0.03        # Fig. 9 reports a few percent at 21×21


# --- normal force, bad input ----------------------------------------------------------------
def test_zero_normal_force_gives_zero_friction_not_nan():
    m = P.DistributedLuGre(P.circle(11, L), P.TABLE_I[1])
    m.step([0.01, 0.0, 0.5])
    m.set_normal_force(0.0)
    f = m.step([0.01, 0.0, 0.5])
    assert np.all(f == 0.0)
    assert np.all(np.isfinite(m.state))
    f0 = m.step([0.0, 0.0, 0.0])                    # zero twist as well
    assert np.all(f0 == 0.0)


@pytest.mark.parametrize("fn", [-1.0, float("nan"), float("inf")])
def test_bad_normal_force_is_rejected(fn):
    m = P.DistributedLuGre(P.circle(5, L))
    with pytest.raises(ValueError, match="normal_force"):
        m.set_normal_force(fn)


@pytest.mark.parametrize("tw", [[float("nan"), 0, 0], [0, 0, float("inf")]])
def test_nan_twist_is_rejected(tw):
    m = P.DistributedLuGre(P.circle(5, L))
    with pytest.raises(ValueError, match="twist"):
        m.step(tw)
    with pytest.raises(ValueError, match="twist"):
        m.derivative(m.state, tw)
    with pytest.raises(ValueError, match="twist"):
        m.steady_state(tw)


@pytest.mark.parametrize("tw", [[0.1, 0.2], [0.1, 0.2, 0.0, 0.0], np.zeros((2, 3)), None,
                                ["a", "b", "c"]])
def test_mis_shaped_twist_is_rejected_by_name(tw):
    m = P.DistributedLuGre(P.circle(5, L))
    z = m.state
    for call in (lambda: m.step(tw), lambda: m.derivative(z, tw), lambda: m.wrench(z, tw),
                 lambda: m.jacobian_diagonal(z, tw)):
        with pytest.raises(ValueError, match="twist"):
            call()
    np.testing.assert_array_equal(m.state, z)               # a rejected step leaves the state
    # one twist as a (1, 3) row is the same twist
    np.testing.assert_array_equal(m.step(np.full((1, 3), 1e-3)), m.wrench(m.state, [1e-3] * 3))


@pytest.mark.parametrize("state", [np.zeros(5), np.full(2 * 13, np.nan), "x"])
def test_bad_ode_state_is_rejected_by_name(state):
    m = P.DistributedLuGre(P.circle(5, L))          # 13 loaded cells: 26 states
    assert m.n_cells == 13
    for call in (m.derivative, m.wrench, m.jacobian_diagonal):
        with pytest.raises(ValueError, match="state"):
            call(state, [0.0, 0.0, 1.0])
    with pytest.raises(ValueError, match="state"):
        m.state = state


def test_zero_twist_keeps_the_state_and_gives_the_spring_force():
    m = P.DistributedLuGre(P.square(5, L), P.TABLE_I[1])
    m.step([0.001, 0.0, 0.0])
    z = m.state
    f = m.step([0.0, 0.0, 0.0])
    np.testing.assert_array_equal(m.state, z)
    # at rest ż = 0: f = −σ0 f_N Σ z p_n A
    assert f[0] == pytest.approx(-1e6 * (m.surface.weights @ m.z[0]), rel=1e-12)


def test_bad_constructor_arguments():
    with pytest.raises(ValueError, match="dt"):
        P.DistributedLuGre(P.circle(5, L), dt=0.0)
    with pytest.raises(ValueError, match="surface"):
        P.DistributedLuGre(np.ones((5, 5)))
    with pytest.raises(ValueError, match="sigma0"):
        P.PlanarFrictionParams(sigma0=-1.0)
    with pytest.raises(ValueError, match="mu_s"):
        P.PlanarFrictionParams(mu_c=1.0, mu_s=0.5)


def test_ode_form_with_an_implicit_solver_matches_the_fixed_step():
    # The derivative (10) with its diagonal Jacobian in scipy's BDF reproduces the exact fixed
    # step on a stretch of the Fig. 5 profile where the CoR crosses the contact (0.8–0.9 s).
    # Both are accurate to the solver tolerance (rtol 1e-6) and the step's O(h·v̇) error
    # (h = 1e-5 s, v̇ = 0.025 m/s²): compare to 1e-4 of the peak force.
    import scipy.sparse
    from scipy.integrate import solve_ivp
    s = P.circle(7, L)
    m = P.DistributedLuGre(s, P.TABLE_I[1], dt=1e-5)
    t0, t1 = 0.8, 0.9
    for tk in np.arange(0.0, t0, 1e-4):          # reach a realistic state on the way
        m.step(P.fig5_twist(tk))
    y0 = m.state

    def rhs(t, y):
        return m.derivative(y, P.fig5_twist(t))

    def jac(t, y):
        return scipy.sparse.diags(m.jacobian_diagonal(y, P.fig5_twist(t)))
    sol = solve_ivp(rhs, (t0, t1), y0, method="BDF", jac=jac, rtol=1e-6, atol=1e-12)
    assert sol.success
    f_ode = m.wrench(sol.y[:, -1], P.fig5_twist(t1))
    for tk in np.arange(t0, t1, 1e-5):
        f_step = m.step(P.fig5_twist(tk + 1e-5))
    np.testing.assert_allclose(f_step, f_ode, atol=1e-4 * 1.2)


def test_set_surface_keeps_the_bristles_of_a_growing_hertz_contact():
    # (45)–(46) with constant k: the same cells stay loaded while the contact grows with f_N
    m = P.DistributedLuGre(P.hertz_like(11, 1.0), P.TABLE_I[1], dt=1e-3)
    m.step([0.0, 0.0, 0.5])
    z = m.state
    m.set_surface(P.hertz_like(11, 8.0))
    np.testing.assert_array_equal(m.state, z)
    assert m.normal_force == 8.0
    # the wrench of the same deflections at twice the size and 8× the load: forces ×8, torque ×16
    f8 = m.step([0.0, 0.0, 0.0])
    m.set_surface(P.hertz_like(11, 1.0))
    f1 = m.step([0.0, 0.0, 0.0])
    np.testing.assert_allclose(f8, f1 * [8, 8, 16], rtol=1e-12, atol=1e-15)
    with pytest.raises(ValueError, match="surface"):
        m.set_surface(P.square(11, L))               # 121 loaded cells ≠ the disc's
    m.set_surface(P.square(11, L), keep_state=False)
    assert np.all(m.state == 0.0) and m.n_cells == 121
