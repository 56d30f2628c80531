"""Reduced planar LuGre model (paper 002, (24)–(34)), single and batched."""

import numpy as np
import pytest

import fric_core.planar as P

L = 0.02
DT = 2e-3          # exact per-step update: the normalised RMSEs at 2e-3, 5e-4 and 1e-4 s agree
#                    to 2–3 digits (e.g. gradient line 0.0166/0.0206 at 2e-3, 0.0170/0.0209 at 5e-4)
T5 = np.arange(0.0, P.FIG5_DURATION, DT)
TW5 = P.fig5_twist(T5)
SURFACES = [P.circle, P.square, P.line, P.gradient_line, P.non_convex_1, P.non_convex_2]


@pytest.fixture(scope="module")
def fig5_runs():
    out = {}
    for factory in SURFACES:
        s = factory(21, L)
        dist = P.simulate(P.DistributedLuGre(s, P.TABLE_I[1], dt=DT).step, TW5)
        tab = P.LimitSurfaceTable.compute(s, 20)
        red = P.simulate(P.ReducedLuGre(tab, P.TABLE_I[1], dt=DT).step, TW5)
        ell = P.simulate(P.ReducedLuGre(P.EllipsoidLimitSurface.from_surface(s), P.TABLE_I[1],
                                        dt=DT).step, TW5)
        out[factory.__name__] = (dist, red, ell)
    return out


@pytest.mark.parametrize("name", [f.__name__ for f in SURFACES])
def test_limit_surface_correction_matches_the_distributed_model_on_fig5(fig5_runs, name):
    dist, red, ell = fig5_runs[name]
    e_red = P.normalized_rmse(dist, red)
    e_ell = P.normalized_rmse(dist, ell)
    # Paper (Figs. 17, 19–22, 36): the corrected reduced model follows the distributed one with
    # normalised RMSE of a few 1e-2 at most (largest for the gradient line, which the paper
    # blames on the distributed model's steps). With the authors' profile and grids we measure
    # 0.1–2.1 % (gradient line 1.7 %/2.1 %, the largest as in the paper's Fig. 22): require < 3 %
    # for every surface, and the ellipsoid (Fig. 13, 22) clearly worse: its worst component ≥ 5×
    # the corrected model's worst (measured max(e_ell)/max(e_red) = 6.8–24.4×; the same 5× as
    # examples/planar_velocity_profile.py), every component ≥ 3× worse (measured
    # e_ell/e_red per component 4.0–48×, smallest for the line's f_t) and above 3 % somewhere.
    assert max(e_red) < 0.03, e_red
    assert max(e_ell) > 5.0 * max(e_red), (e_ell, e_red)
    assert np.all(np.asarray(e_ell) > 3.0 * np.asarray(e_red)), (e_ell, e_red)
    assert max(e_ell) > 0.03


def test_fig5_reduced_converges_with_limit_surface_resolution():
    # Fig. 37: RMSE against a fine table falls with N_ls (gradient line converges slowest)
    s = P.gradient_line(21, L)
    ref = P.simulate(P.ReducedLuGre(P.LimitSurfaceTable.compute(s, 80), dt=DT).step, TW5)
    errs = [max(P.normalized_rmse(ref, P.simulate(
        P.ReducedLuGre(P.LimitSurfaceTable.compute(s, n), dt=DT).step, TW5))) for n in (5, 10, 20)]
    assert errs[0] > errs[1] > errs[2]
    assert errs[2] < 0.02


def test_batch_equals_independent_single_contacts():
    tab = P.LimitSurfaceTable.compute(P.non_convex_1(15, L), 10)
    rng = np.random.default_rng(2)
    m = 40
    tw = rng.normal(size=(150, m, 3)) * [0.01, 0.01, 1.0]
    fn = rng.uniform(0.0, 2.0, m)
    fn[3] = 0.0
    for ep in (False, True):
        batch = P.ReducedLuGre(tab, dt=1e-3, normal_force=fn, n_contacts=m, elasto_plastic=ep)
        singles = [P.ReducedLuGre(tab, dt=1e-3, normal_force=fn[i], elasto_plastic=ep)
                   for i in range(m)]
        for k in range(tw.shape[0]):
            fb = batch.step(tw[k])
            fs = np.array([singles[i].step(tw[k, i]) for i in range(m)])
            # same arithmetic, different evaluation order (numpy vs math): round-off only
            np.testing.assert_allclose(fb, fs, rtol=1e-9, atol=1e-12)
        assert np.all(fb[3] == 0.0)                        # the unloaded contact
        np.testing.assert_allclose(batch.z, np.array([c.z[0] for c in singles]), rtol=1e-9,
                                   atol=1e-18)


def test_coulomb_steady_state_is_the_scaled_limit_surface():
    s = P.square(21, L, normal_force=2.0)
    tab = P.LimitSurfaceTable.compute(s, 20)
    m = P.ReducedLuGre(tab, P.PlanarFrictionParams.coulomb(0.6), dt=1.0, normal_force=2.0)
    for tw in ([0.01, 0.0, 0.0], [0.002, 0.001, 1.0], [0.0, 0.0, -1.0], [-0.01, 0.02, 0.3]):
        m.reset()
        for _ in range(5):                        # exact 1 s steps: transient e^{−a·5} ≈ 0
            f = m.step(tw)
        # (32): σ0 z* = −g S h ⇒ f = μ f_N S h: the limit surface of the table, scaled
        expect = 0.6 * 2.0 * tab.h(tw) * [1.0, 1.0, tab.radius]
        np.testing.assert_allclose(f, expect, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(m.steady_state(tw), expect, rtol=1e-9, atol=1e-12)
        # and within the table's interpolation error of the distributed limit surface (7)–(8)
        direct = P.steady_state_wrench(s, tw, P.PlanarFrictionParams.coulomb(0.6), 2.0)
        # (table RMS error ~0.1 %, worst case ~1 % of μ f_N near the CoR-in-contact kinks)
        np.testing.assert_allclose(f[:2], direct[:2], atol=0.01 * 0.6 * 2.0)
        np.testing.assert_allclose(f[2], direct[2], atol=0.01 * 0.6 * 2.0 * tab.radius)


def test_derivative_matches_the_exact_step():
    tab = P.LimitSurfaceTable.compute(P.circle(11, L), 10)
    for ep in (False, True):
        m = P.ReducedLuGre(tab, dt=1e-9, n_contacts=3, elasto_plastic=ep)
        m.state = np.random.default_rng(1).normal(scale=5e-7, size=9) * np.tile([1, 1, 0.005], 3)
        tw = np.array([[0.004, -0.003, 0.7], [0.0, 0.0, 1.0], [0.01, 0.0, 0.0]])
        z0 = m.state
        dz = m.derivative(z0, tw)
        m.step(tw)
        # a 1 ns exact step equals ż·h to relative O(a h) ≤ 1e6·0.01·1e-9/g = 1e-5
        np.testing.assert_allclose((m.state - z0) / 1e-9, dz, rtol=1e-4, atol=1e-12)
        # the wrench returned by a step is (28) at the new state: wrench(state, twist)
        f = m.step(tw)
        np.testing.assert_allclose(m.wrench(m.state, tw), f, rtol=1e-12, atol=1e-15)


def test_zero_normal_force_gives_zero_friction_and_bad_input_is_rejected():
    tab = P.LimitSurfaceTable.compute(P.circle(7, L), 5)
    m = P.ReducedLuGre(tab, normal_force=0.0)
    f = m.step([0.01, 0.0, 1.0])
    assert np.all(f == 0.0) and np.all(np.isfinite(m.state))
    assert np.all(m.step([0.0, 0.0, 0.0]) == 0.0)
    for bad in (-1.0, np.nan, np.inf):
        with pytest.raises(ValueError, match="normal_force"):
            m.set_normal_force(bad)
    with pytest.raises(ValueError, match="twist"):
        m.step([np.nan, 0.0, 0.0])
    b = P.ReducedLuGre(tab, n_contacts=4)
    with pytest.raises(ValueError, match="twist"):
        b.step(np.zeros((3, 3)))
    with pytest.raises(ValueError, match="twist"):
        b.step(np.full((4, 3), np.nan))
    with pytest.raises(ValueError, match="normal_force"):
        b.set_normal_force([1.0, 1.0])
    with pytest.raises(ValueError, match="normal_force"):
        b.set_normal_force([1.0, -1.0, 1.0, 1.0])
    for tw in ([0.1, 0.2], None, ["a", "b", "c"]):
        with pytest.raises(ValueError, match="twist"):
            m.step(tw)
        with pytest.raises(ValueError, match="twist"):
            b.step(tw)
    # the ODE entry points check the state: size 3 m and finite (no reshape error, no NaN out)
    for model in (m, b):
        for st in (np.zeros(3 * model.n_contacts + 1), np.full(3 * model.n_contacts, np.nan)):
            for call in (model.derivative, model.wrench):
                with pytest.raises(ValueError, match="state"):
                    call(st, np.zeros((model.n_contacts, 3)))
            with pytest.raises(ValueError, match="state"):
                model.state = st
    with pytest.raises(ValueError, match="n_contacts"):
        P.ReducedLuGre(tab, n_contacts=0)
    with pytest.raises(ValueError, match="limit_surface"):
        P.ReducedLuGre(P.circle(7, L))


def test_elasto_plastic_long_steps_do_not_overshoot_at_break_away():
    # Stick → slip on the Fig. 5 profile (0–1.6 s). With β held at max(β(z_k), β(z_pred)) a
    # 1 ms step (10× the bristle time constant at 1 cm/s) must not carry bristles elastically
    # past z_max: the peak wrench stays within 3 % of the 0.1 ms run and never exceeds it by
    # more than 1 % (with β frozen at β(z_k) the reduced torque overshot by 6 %).
    s = P.circle(21, L)
    tab = P.LimitSurfaceTable.compute(s, 20)
    peaks = {}
    for dt in (1e-4, 1e-3):
        tw = P.fig5_twist(np.arange(0.0, 1.6, dt))
        d = P.DistributedLuGre(s, P.TABLE_I[1], dt=dt, elasto_plastic=True)
        r = P.ReducedLuGre(tab, P.TABLE_I[1], dt=dt, elasto_plastic=True)
        peaks[dt] = (np.abs(P.simulate(d.step, tw)).max(axis=0),
                     np.abs(P.simulate(r.step, tw)).max(axis=0))
    for fine, coarse in zip(peaks[1e-4], peaks[1e-3]):
        for j in (0, 2):
            assert coarse[j] == pytest.approx(fine[j], rel=0.03)
            assert coarse[j] <= 1.01 * fine[j]


def test_fig5_reduced_converges_with_precomputation_cells():
    # Fig. 36: the reduced model's error against a fine distributed model (41×41 square) falls
    # as the grid used to pre-compute the limit surface is refined (r, u and h all converge).
    tw = P.fig5_twist(np.arange(0.0, P.FIG5_DURATION, 1e-3))
    ref = P.simulate(P.DistributedLuGre(P.square(41, L), P.TABLE_I[1], dt=1e-3).step, tw)
    errs = []
    for n in (5, 11, 21):
        red = P.ReducedLuGre(P.LimitSurfaceTable.compute(P.square(n, L), 20), dt=1e-3)
        errs.append(max(P.normalized_rmse(ref, P.simulate(red.step, tw))))
    assert errs[0] > errs[1] > errs[2]
    assert errs[2] < 0.03           # comparable to the distributed model's own error (Fig. 9)


def test_ellipsoid_model_steady_state_is_the_ellipsoid_24():
    # (24): f_e = −μ f_N S v_S/‖v_S‖ (friction opposing the twist) with S = diag(1, 1, r)
    ell = P.EllipsoidLimitSurface(radius=0.006)
    m = P.ReducedLuGre(ell, P.PlanarFrictionParams.coulomb(0.8), dt=1.0, normal_force=1.5,
                       n_contacts=4)
    tw = np.array([[0.01, 0.0, 0.0], [0.0, 0.0, 1.0], [0.003, -0.004, 0.5], [-0.002, 0.0, -2.0]])
    for _ in range(5):
        f = m.step(tw)
    vs = tw * [1.0, 1.0, 0.006]
    expect = -0.8 * 1.5 * vs / np.linalg.norm(vs, axis=1)[:, None] * [1.0, 1.0, 0.006]
    np.testing.assert_allclose(f, expect, rtol=1e-9, atol=1e-15)
    np.testing.assert_allclose(m.steady_state(tw), expect, rtol=1e-9, atol=1e-15)
    assert np.all(m.steady_state(np.zeros((4, 3))) == 0.0)      # undefined at rest: zero


@pytest.mark.parametrize("elasto_plastic", [False, True])
def test_a_twist_that_overflows_the_step_is_refused_by_name_and_the_state_kept(elasto_plastic):
    """Finite but absurd twists (‖v_S‖² beyond the float range): the batched path and the
    one-contact path refuse them naming ``twist`` instead of returning NaN and leaving NaN in the
    bristle state; the next sane step goes on from the state before."""
    prm = P.PlanarFrictionParams(sigma0=1e5, sigma1=20.0, sigma2=0.2, mu_c=1.0, mu_s=1.2,
                                 gamma=2.0, v_s=1e-3, s_ba=0.9)
    ls = P.LimitSurfaceTable.compute(P.square(11, 0.05), 10)
    for n, bad in ((2, np.array([[0.1, -0.05, 1.0], [1e200, 0.0, 0.0]])),
                   (1, np.array([1e308, 1e308, 0.0]))):
        m = P.ReducedLuGre(ls, prm, dt=1e-4, n_contacts=n, elasto_plastic=elasto_plastic)
        sane = np.tile([0.01, 0.0, 0.5], (n, 1)) if n > 1 else np.array([0.01, 0.0, 0.5])
        for _ in range(20):
            m.step(sane)
        ref = m.state.copy()
        with pytest.raises(ValueError, match=r"^twist: too large for the step"):
            m.step(bad)
        np.testing.assert_array_equal(m.state, ref)
        f = m.step(sane)
        assert np.all(np.isfinite(f)) and np.all(np.isfinite(m.state))
        # the ODE entry points (an outside integrator) refuse them by name too, never NaN
        for call in (lambda: m.derivative(ref, bad), lambda: m.wrench(ref, bad),
                     lambda: m.steady_state(bad)):
            with pytest.raises(ValueError, match=r"^twist: too large") as err:
                call()
            assert "(contact" in str(err.value)
