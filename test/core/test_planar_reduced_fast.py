"""The single-contact kernel of the reduced planar model (fric_core.planar.reduced_fast) against
the reference steps: the scalar ``_step_one`` (bit for bit) and the numpy batched path (round-off),
over random states and twists: sticking, sliding, transitions, zero and tiny velocities."""

import copy
import pickle

import numpy as np
import pytest

import fric_core.planar as P

L = 0.02


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


@pytest.mark.parametrize("ls", sorted(LS))
@pytest.mark.parametrize("ep", [False, True])
@pytest.mark.parametrize("params", [P.TABLE_I[0], P.TABLE_I[1],
                                    P.PlanarFrictionParams(gamma=1.5, s_ba=0.0, sigma1=0.0)])
def test_kernel_equals_the_reference_steps(ls, ep, params):
    rng = np.random.default_rng(17)
    tw = _twists(rng, 1500)
    for dt in (1e-4, 2e-3):
        fast = P.ReducedLuGre(LS[ls], params, dt=dt, normal_force=1.7, elasto_plastic=ep)
        ref = P.ReducedLuGre(LS[ls], params, dt=dt, normal_force=1.7, elasto_plastic=ep)
        vec = P.ReducedLuGre(LS[ls], params, dt=dt, normal_force=1.7, elasto_plastic=ep)
        for k in range(tw.shape[0]):
            if k % 300 == 0:          # random states, inside and beyond the elastic range
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
