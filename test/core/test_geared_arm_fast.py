"""Issue 17: the fast path of :meth:`GearedArm.step` (buffers, one matrix-vector product for
P x and A x, LAPACK without numpy's wrappers, :meth:`AxprojSolver.solve_velocity`'s one linear
solve when no joint changes its piece) reproduces the reference implementation
(``arm.reference = True``) to round-off: over ≥ 1000-step trajectories with stick/slip
transitions, a self-locking wrist, end-effector wrenches, hard end stops and joint friction,
positions and velocities agree to 1e-12 (relative to their scale) and the stuck joints, the
stops and the well-posedness flags are the same in every step.
"""

from __future__ import annotations

import numpy as np
import pytest

from fric_core.transmission.geared_arm import ConstantInertia, GearedArm
from fric_core.transmission.projection import AxprojSolver

pin = pytest.importorskip("pinocchio")
from fric_core.transmission.urdf_dynamics import UrdfDynamics  # noqa: E402

H = 1e-3
Q7 = np.array([0.0, 0.5, 0.0, -1.2, 0.0, 0.8, 0.0])
GV7 = [0.3, 0.3, 0.5, 0.5, 0.7, 1.1, 1.1]
M7 = [0.6, 0.6, 0.4, 0.4, 0.2, 0.2, 0.1]
TOL = 1e-12


def _arm7_inputs(dyn, k, q, v, amp=0.4, push=40.0):
    """The bench's scenario: PD to a sine for 1 s, hold for 1 s; a pulsing downward push."""
    kp = np.array([300, 300, 150, 150, 60, 20, 20.0])
    kd = np.array([20, 20, 10, 10, 4, 1, 1.0])
    t = k * H
    t_ref = min(t % 2.0, 1.0) + 2.0 * (t // 2.0)
    q_ref = Q7 + amp * np.sin(np.pi * t_ref + np.arange(7))
    tau = dyn.gravity_torque(q) + kp * (q_ref - q) - kd * v
    wrench = np.array([0.0, 0.0, -push * max(np.sin(2 * np.pi * 0.7 * t), 0.0), 0, 0, 0])
    return tau, wrench


def _compare(make, inputs, steps):
    """Step a fast and a reference arm side by side, each fed from its own state; returns the
    largest relative deviation of (q, v) and counts of the interesting events."""
    fast, ref = make(), make()
    ref.reference = True
    dev, stuck_changes, stops, prev = 0.0, 0, 0, None
    for k in range(steps):
        outs = []
        for arm in (fast, ref):
            tau, wrench, load = inputs(arm, k)
            arm.step(tau, H, wrench=wrench, tau_load=load)
            outs.append(arm.state)
        a, b = outs
        scale_q = 1.0 + np.abs(b.q).max()
        scale_v = 1.0 + np.abs(b.v).max()
        dev = max(dev, np.abs(a.q - b.q).max() / scale_q, np.abs(a.v - b.v).max() / scale_v)
        assert np.array_equal(a.stuck, b.stuck), k
        assert a.well_posed == b.well_posed and a.converged == b.converged
        assert (a.at_stop is None) == (b.at_stop is None)
        if a.at_stop is not None:
            assert np.array_equal(a.at_stop, b.at_stop)
            stops += 1
        scale_f = 1.0 + np.abs(b.friction).max()
        assert np.abs(a.friction - b.friction).max() <= 1e-9 * scale_f
        assert np.abs(a.lam - b.lam).max() <= 1e-9 * (1.0 + np.abs(b.lam).max())
        if prev is not None:
            stuck_changes += int((b.stuck != prev).sum())
        prev = b.stuck
    return dev, stuck_changes, stops, fast, ref


def test_arm7_bench_scenario_matches_the_reference():
    dyn = UrdfDynamics("arm7")

    def make():
        return GearedArm(dyn, 0.1, GV7, M7, damping=2.0, q0=Q7)

    def inputs(arm, k):
        tau, wrench = _arm7_inputs(dyn, k, arm.q, arm.v)
        return tau, wrench, None

    dev, changes, _, fast, ref = _compare(make, inputs, 2500)
    assert dev <= TOL
    assert changes >= 20  # stick/slip transitions happened
    assert 0 < fast.state.stuck.size
    assert fast.steps == ref.steps == 2500


def test_arm7_with_end_stops_joint_friction_and_loads_matches_the_reference():
    dyn = UrdfDynamics("arm7")
    lower = Q7 - np.array([0.2, 0.3, np.inf, 0.25, np.inf, 0.3, 0.2])
    upper = Q7 + np.array([0.25, 0.2, 0.3, np.inf, 0.2, 0.3, np.inf])

    def make():
        return GearedArm(dyn, [0.1, 0.1, 0.2, 0.2, 0.05, 0.0, 0.1], GV7, M7, m_v=0.05,
                         damping=1.0, q0=Q7, lower=lower, upper=upper,
                         Cp=[1.0, 0.8, 0.5, 0.5, 0.3, 0.2, 0.1],
                         Cn=[0.7, 0.9, 0.4, 0.6, 0.2, 0.2, 0.15],
                         bp=0.3, bn=[0.2, 0.3, 0.1, 0.1, 0.05, 0.05, 0.05])

    def inputs(arm, k):
        tau, wrench = _arm7_inputs(dyn, k, arm.q, arm.v, amp=0.6, push=25.0)
        load = 0.5 * np.sin(0.003 * k + np.arange(7))
        return tau, wrench, load

    dev, changes, stops, fast, ref = _compare(make, inputs, 1500)
    assert dev <= TOL
    assert changes >= 10 and stops >= 10
    assert fast.stop_steps == ref.stop_steps


def test_constant_inertia_arms_match_the_reference():
    rng = np.random.default_rng(17)
    X = rng.standard_normal((4, 4))
    M = X @ X.T + 0.5 * np.eye(4)
    for friction in (False, True):
        extra = dict(Cp=0.4, Cn=0.3, bp=0.1, bn=0.2) if friction else {}

        def make():
            return GearedArm(ConstantInertia(M, gravity_torque=[0.5, -1.0, 0.2, 0.0]),
                             [0.2, -0.1, 0.3, 0.0], [0.4, 1.2, 0.6, 0.2], [3.0, 6.0, 3.0, 2.0],
                             m_v=[0.0, 0.1, 0.0, 0.05], damping=0.5, **extra)

        def inputs(arm, k):
            return 3.0 * np.sin(0.004 * k * np.array([1.0, 1.7, 2.3, 0.6])), None, None

        dev, changes, _, _, _ = _compare(make, inputs, 1200)
        assert dev <= TOL
        assert changes >= 4


def test_one_joint_matches_the_reference():
    def make():
        return GearedArm(ConstantInertia([[0.3]]), 0.2, 0.5, 0.1, damping=0.1)

    def inputs(arm, k):
        return [2.0 * np.sin(0.01 * k)], None, None

    dev, changes, _, _, _ = _compare(make, inputs, 1000)
    assert dev == 0.0 and changes >= 2


def test_solve_velocity_is_solve_on_random_problems():
    """Warm-started sequences of random problems (slowly drifting, so that the pieces mostly
    persist): solve_velocity gives solve's velocities to round-off, and stuck joints at 0."""
    rng = np.random.default_rng(4)
    n = 6
    X = rng.standard_normal((n, n))
    Mh = X @ X.T + n * np.eye(n)
    fast, ref = AxprojSolver(n), AxprojSolver(n)
    reused = 0
    for k in range(600):
        Mk = Mh + 0.3 * np.sin(0.01 * k) * np.eye(n)
        Minv = np.linalg.inv(Mk + 8.0 * np.eye(n))
        B = np.diag(np.full(n, 0.2 * 8.0)) - np.diag([0.3, 0.5, 0.8, 1.1, 0.2, 0.4]) @ Mk
        P = B @ Minv
        assert np.linalg.norm(P, 2) < 1.0  # well-posed (57): the solution is unique
        A = 1e-3 * Minv
        v = 0.05 * np.sin(0.02 * k + np.arange(n))
        phi = 2.0 * np.cos(0.015 * k + 2.0 * np.arange(n))
        PA = np.vstack([P, A])
        w, f, lam, stuck, it, conv, res = fast.solve_velocity(v, A, phi, P, PA)
        r = ref.solve(v, A, phi, P)
        assert conv and r.converged
        np.testing.assert_allclose(w, np.where(r.stuck, 0.0, v - r.y), rtol=0, atol=1e-12)
        np.testing.assert_allclose(f, r.friction, rtol=1e-9, atol=1e-12)
        assert np.array_equal(stuck, r.stuck)
        assert (w[stuck] == 0.0).all()
        reused += it == 1
    assert reused > 400  # the one-solve path is the common case


def test_reset_and_errors_are_the_references():
    dyn = ConstantInertia([[1.0, 0.2], [0.2, 0.5]])
    arm = GearedArm(dyn, 0.1, 0.3, 0.2)
    arm.step([1.0, -1.0], H)
    arm.reset()
    assert arm._solver._last is None and not arm._solver.warm
    for bad in ([np.nan, 0.0], [1.0]):
        with pytest.raises(ValueError, match="tau_u"):
            arm.step(bad, H)
    with pytest.raises(ValueError, match="wrench"):
        GearedArm(ConstantInertia(np.eye(2), jacobian=np.ones((6, 2))), 0.1, 0.3, 0.2).step(
            [0.0, 0.0], H, wrench=[np.inf, 0, 0, 0, 0, 0])
    dyn = ConstantInertia(np.eye(2))
    singular = GearedArm(dyn, 0.1, 0.3, 0.0)
    dyn._M[:] = 0.0  # massless links, no rotor inertia: [m] + M singular in the step
    with pytest.raises(ValueError, match="singular"):
        singular.step([0.0, 0.0], H)
    assert singular.steps == 0
