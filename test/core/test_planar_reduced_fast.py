"""The single-contact kernels of the reduced planar model (fric_core.planar.reduced_fast) against
the reference steps: the compiled kernel against the pure-Python kernel (bit for bit), both against
the scalar ``_step_one`` (bit for bit) and the numpy batched path (round-off), over random states
and twists: sticking, sliding, transitions, zero, tiny and huge velocities.

The compiled kernel (``_reduced_kernel.c``) must be built (``make venv`` / ``pip install -e .``):
without it these tests FAIL, unless ``FRIC_NO_COMPILED=1`` is set (the explicit opt-out, which
also makes the model use the Python kernel), when the compiled-only tests skip."""

import copy
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest

import fric_core.planar as P
from fric_core.planar import reduced_fast as RF

L = 0.02
OPTED_OUT = os.environ.get("FRIC_NO_COMPILED", "").strip() not in ("", "0")


def _need_compiled():
    if OPTED_OUT:
        pytest.skip("FRIC_NO_COMPILED is set: the compiled kernel is opted out")
    assert RF.COMPILED, ("fric_core.planar._reduced_kernel is not built: run `make venv` (or"
                         " `pip install -e .`) with a C compiler, or set FRIC_NO_COMPILED=1")


def _model(ls, params, kernel, **kw):
    """A one-contact model stepping with the ``kernel`` ("compiled" or "python")."""
    m = P.ReducedLuGre(ls, params, **kw)
    m._kern = RF.make_kernel(m, compiled=kernel == "compiled")
    return m


def _surfaces():
    s = P.gradient_line(15, L)
    return {"table": P.LimitSurfaceTable.compute(s, 10),
            "ellipsoid": P.EllipsoidLimitSurface.from_surface(s)}


LS = _surfaces()


def _twists(rng, k):
    """Twists mixing sliding, near-stick (rim speed ~ v_s/1000), exact zeros, pure rotations
    and pure translations, both signs of ω (and −0.0)."""
    tw = rng.normal(size=(k, 3)) * [0.005, 0.005, 0.8]
    kind = rng.integers(0, 7, k)
    tw[kind == 1] *= 1e-6
    tw[kind == 2] = 0.0
    tw[kind == 3, :2] = 0.0
    tw[kind == 4, 2] = 0.0
    tw[kind == 5, 2] = -0.0
    tw[kind == 6] *= 1e-3
    return tw


def test_compiled_kernel_is_built_and_used():
    _need_compiled()
    m = P.ReducedLuGre(LS["table"])
    m.step([0.001, 0.0, 0.1])
    assert type(m._kern).__name__ == "Kernel"          # the model steps through the C kernel


@pytest.mark.parametrize("kernel", ["compiled", "python"])
@pytest.mark.parametrize("ls", sorted(LS))
@pytest.mark.parametrize("ep", [False, True])
@pytest.mark.parametrize("params", [P.TABLE_I[0], P.TABLE_I[1],
                                    P.PlanarFrictionParams(gamma=1.5, s_ba=0.0, sigma1=0.0)])
def test_kernel_equals_the_reference_steps(kernel, ls, ep, params):
    if kernel == "compiled":
        _need_compiled()
    rng = np.random.default_rng(17)
    tw = _twists(rng, 800)
    for dt in (1e-4, 2e-3):
        fast = _model(LS[ls], params, kernel, dt=dt, normal_force=1.7, elasto_plastic=ep)
        ref = P.ReducedLuGre(LS[ls], params, dt=dt, normal_force=1.7, elasto_plastic=ep)
        vec = P.ReducedLuGre(LS[ls], params, dt=dt, normal_force=1.7, elasto_plastic=ep)
        for k in range(tw.shape[0]):
            if k % 160 == 0:          # random states, inside and beyond the elastic range
                z = rng.normal(scale=1.2e-6, size=3) * [1.0, 1.0, 0.005]
                fast.state = ref.state = vec.state = z
            f = fast.step(tw[k])
            g = ref._step_one(*tw[k].tolist())
            h = vec._step_numpy(tw[k])
            assert np.array_equal(f, g), (k, f, g)                   # same arithmetic
            assert np.array_equal(fast.state, ref.state)
            np.testing.assert_allclose(f, h, rtol=1e-12, atol=1e-12)  # the numpy reference
            np.testing.assert_allclose(fast.state, vec.state, rtol=1e-12, atol=1e-18)


def test_kernel_follows_reconfiguration_and_copies():
    tab = LS["table"]
    m = P.ReducedLuGre(tab, dt=1e-4)
    tw = np.array([0.004, -0.002, 0.6])
    m.step(tw)
    for change in (lambda x: x.set_normal_force(0.3), lambda x: setattr(x, "dt", 3e-4),
                   lambda x: setattr(x, "elasto_plastic", True),
                   lambda x: x.set_limit_surface(tab.rescaled(1.5)),
                   lambda x: setattr(x, "params", P.TABLE_I[0])):
        change(m)
        ref = copy.deepcopy(m)
        c = copy.deepcopy(m)
        z = m.state
        f = m.step(tw)
        assert np.array_equal(f, ref._step_one(*tw.tolist()))
        assert np.array_equal(m.state, ref.state)
        fm = m.state
        assert np.array_equal(c.step(tw), f)                  # the copy has its own state
        assert np.array_equal(c.state, fm) and np.array_equal(m.state, fm)
        assert not np.array_equal(z, fm)
    p = pickle.loads(pickle.dumps(m))
    assert np.array_equal(p.step(tw), m.step(tw))
    assert np.array_equal(p.state, m.state)
    q = copy.deepcopy(m)
    m.z[0] = [1e-7, 0.0, 0.0]                   # writes through the state view reach the kernel
    q.state = [1e-7, 0.0, 0.0]
    assert np.array_equal(m.step(tw), q._step_one(*tw.tolist()))
    m.reset()
    q.reset()
    assert np.array_equal(m.step(tw), q._step_one(*tw.tolist()))


def test_inputs_of_the_single_contact_step():
    m = P.ReducedLuGre(LS["table"], dt=1e-4)
    r = P.ReducedLuGre(LS["table"], dt=1e-4)
    tw = [0.004, -0.002, 0.6]
    for t in (tw, tuple(tw), np.array(tw), np.array(tw, dtype=np.float32).astype(float),
              np.array([tw])):
        f = m.step(t)
        g = r._step_one(*np.ravel(np.asarray(t, float)).tolist())
        assert np.array_equal(np.ravel(f), g) and np.shape(f) == np.shape(t)
    for bad in (np.array([np.nan, 0.0, 0.0]), np.array([[np.inf, 0.0, 0.0]]), [0.0, np.inf, 1.0]):
        z = m.state
        with pytest.raises(ValueError, match="twist"):
            m.step(bad)
        assert np.array_equal(m.state, z)
    assert np.all(P.ReducedLuGre(LS["table"], normal_force=0.0).step(np.array(tw)) == 0.0)


def _random_params(rng):
    mu_c = float(rng.uniform(0.2, 1.5))
    return P.PlanarFrictionParams(
        sigma0=float(10 ** rng.uniform(3, 6)),
        sigma1=float(rng.choice([0.0, 10 ** rng.uniform(-1, 2)])),
        sigma2=float(rng.choice([0.0, rng.uniform(0, 1)])), mu_c=mu_c,
        mu_s=float(rng.choice([mu_c, mu_c * rng.uniform(1.0, 1.6)])),
        gamma=float(rng.choice([2.0, rng.uniform(0.5, 4.0)])), v_s=float(10 ** rng.uniform(-4, -2)),
        s_ba=float(rng.choice([0.0, rng.uniform(0, 0.99)])))


@pytest.mark.parametrize("surface,n_ls", [("circle", 2), ("square", 5), ("line", 20),
                                          ("non_convex_1", 7), (None, 0)])
def test_compiled_kernel_equals_the_python_kernel(surface, n_ls):
    """Bit for bit over random configurations (tables of several resolutions and shapes, rescaled
    ones, the ellipsoid; random Table-I-like parameters, LuGre and Elasto-Plastic, steps, loads
    including 0), states inside and beyond the elastic range and twists from zero to 1e150."""
    _need_compiled()
    rng = np.random.default_rng(n_ls)
    s = getattr(P, surface or "gradient_line")(11, L)
    base = (P.LimitSurfaceTable.compute(s, n_ls) if surface
            else P.EllipsoidLimitSurface.from_surface(s))
    for case in range(6):
        ls = base.rescaled(float(rng.uniform(0.5, 2.0))) if (surface and case % 2) else base
        kw = dict(dt=float(10 ** rng.uniform(-5, -2)), normal_force=[0.0, 0.4, 3.0][case % 3],
                  elasto_plastic=bool(case // 3))
        prm = _random_params(rng)
        c, p = _model(ls, prm, "compiled", **kw), _model(ls, prm, "python", **kw)
        tw = _twists(rng, 400)
        tw[::37] *= 10.0 ** rng.uniform(3, 150, size=(tw[::37].shape[0], 1))   # huge, finite
        for k in range(tw.shape[0]):
            if k % 50 == 0:
                c.state = p.state = rng.normal(scale=1e-5, size=3) * [1.0, 1.0, 0.01]
            f, g = c.step(tw[k]), p.step(tw[k])
            assert np.array_equal(f, g), (case, k, tw[k], f, g)
            assert np.array_equal(c.state, p.state), (case, k)
            assert np.all(np.isfinite(f)) and np.all(np.isfinite(c.state)), (case, k, tw[k])
            # the bristles stay within their steady-state reach |z| <= z_max(g = mu_s) (+ the
            # random initial state), whatever the twist
            assert np.abs(c.state[:2]).max() <= max(prm.mu_s / prm.sigma0, 1e-4) * 1.01
            lst = tw[k].tolist()
            f2, g2 = c.step(lst), p.step(lst)                    # list twists, same arithmetic
            assert np.array_equal(f2, g2) and np.array_equal(c.state, p.state)


def test_compiled_kernel_returns_fresh_arrays_and_declines_other_twists():
    _need_compiled()
    m = P.ReducedLuGre(LS["table"], dt=1e-4)
    r = P.ReducedLuGre(LS["table"], dt=1e-4)
    m.step([0.001, 0.0, 0.1])
    r.step([0.001, 0.0, 0.1])
    kern = m._kern
    tw = np.array([0.004, -0.002, 0.6])
    f1 = m.step(tw)
    f2 = m.step(tw)
    assert f1 is not f2 and f1.base is None and f1.flags.writeable and f1.flags.owndata
    assert f1.dtype == np.float64 and f1.shape == (3,)
    f1[:] = 7.0                                 # the caller owns it: the next step is unaffected
    assert np.array_equal(m.step(tw), (r.step(tw), r.step(tw), r.step(tw))[2])
    # twists the kernel does not take: None, state untouched (the model's checked path runs)
    row = m.step(tw[None, :])                                # (1, 3) in, (1, 3) out
    assert row.shape == (1, 3) and row.flags.owndata and np.array_equal(row[0], r.step(tw))
    for t in (np.zeros((3, 1)), np.zeros((1, 1, 3)), tw.astype(np.float32), tw.astype(">f8"),
              [1, 2, 3], [0.1, 0.2], [0.1, 0.2, np.inf], np.array([1e308, 1e308, 0.0]), "abc",
              3.0, None):
        z = m.state
        assert kern(t) is None
        assert np.array_equal(m.state, z)
    strided = np.repeat(tw, 2)[::2]                          # a non-contiguous (3,) view
    assert np.array_equal(m.step(strided), r.step(tw))
    assert np.array_equal(m.step((np.float64(0.004), -0.002, 0.6)), r.step(tw))
    with pytest.raises(TypeError):
        kern()
    with pytest.raises(TypeError):
        kern.step3(1.0, 2.0)
    with pytest.raises(TypeError):
        kern.step3(1.0, 2.0, "x")


def test_no_compiled_environment_variable_forces_the_python_kernel():
    """FRIC_NO_COMPILED=1 (the documented opt-out) makes the model step with the Python kernel,
    with the same results."""
    code = ("import numpy as np, fric_core.planar as P\n"
            "from fric_core.planar import reduced_fast as RF\n"
            "m = P.ReducedLuGre(P.LimitSurfaceTable.compute(P.circle(7, 0.02), 4))\n"
            "for k in range(3): f = m.step([0.004, -0.002, 0.6])\n"
            "print(RF.COMPILED, type(m._kern).__name__, f.tolist())\n")
    env = dict(os.environ, FRIC_NO_COMPILED="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout.split(" ", 2)
    assert out[:2] == ["False", "function"]
    m = _model(P.LimitSurfaceTable.compute(P.circle(7, L), 4), P.TABLE_I[1], "python")
    for _ in range(3):
        f = m.step([0.004, -0.002, 0.6])
    assert eval(out[2]) == f.tolist()


@pytest.mark.parametrize("kernel", ["compiled", "python"])
def test_overflowing_twists_are_refused_with_the_state_kept(kernel):
    """‖v_S‖² overflows beyond ~1.3e154: the step would return NaN and poison the bristle state
    for good. Such (finite, unphysical) twists are refused with a ValueError naming ``twist``;
    the state is unchanged and the next ordinary step is the reference step."""
    if kernel == "compiled":
        _need_compiled()
    for ls in LS.values():
        for ep in (False, True):
            m = _model(ls, P.TABLE_I[1], kernel, elasto_plastic=ep)
            ref = P.ReducedLuGre(ls, P.TABLE_I[1], elasto_plastic=ep)
            tw = [0.004, -0.002, 0.6]
            m.step(tw)
            ref.step(tw)
            z = m.state
            for big in ([2e154, 0.0, 0.0], np.array([0.0, 0.0, 1e300]), (1e160, 1.0, 1.0),
                        np.array([[1e155, -1e155, 1e155]]), [1.7e308, 0.0, 0.0]):
                with pytest.raises(ValueError, match="twist: too large"):
                    m.step(big)
                assert np.array_equal(m.state, z)
            assert np.array_equal(m.step(tw), ref._step_one(*tw))
