"""The generalised RK4 (21)/(22) of Kikuuwe & Yamamoto over components: order of accuracy,
forward Euler through the same interface, equivalence with the implicit-Euler element (14), and
the static-friction hold (no drift) up to the step-size stability limit."""

import math

import numpy as np
import pytest

from fric_core.elements import MasslessImpedance
from fric_core.laws import Coulomb, CoulombViscous
from fric_core.modular import (Coordinates, ExternalForce, FrictionImpedance, ModularSystem,
                               PointMass, Relative, SpringDamper, euler_step, rk4_step,
                               simulate)


def sliding_block(M=1.0, F=1.0, K=1e3, B=5.0):
    """A block pushed by u(t) = 3F + sin(5t) against Coulomb friction F: always sliding (+x)."""
    s = ModularSystem()
    s.add_admittance("block", PointMass(M))
    s.add_impedance("push", ExternalForce(lambda t: (3.0 * F + math.sin(5.0 * t), 0.0, 0.0),
                                          n=3), Coordinates("block"))
    s.add_impedance("friction", FrictionImpedance(K=K, B=B, F=F), Coordinates("block", 0))
    return s.build()


def sliding_exact(t, v0, M=1.0, F=1.0):
    """M v̇ = 2F + sin(5t): v = v0 + (2F t + (1 − cos 5t)/5)/M, p = ∫v."""
    v = v0 + (2.0 * F * t + (1.0 - math.cos(5.0 * t)) / 5.0) / M
    p = v0 * t + (F * t * t + t / 5.0 - math.sin(5.0 * t) / 25.0) / M
    return p, v


@pytest.mark.parametrize("method,order", [("rk4", 4), ("euler", 1)])
def test_order_of_accuracy_on_an_always_sliding_block(method, order):
    # While the block slides, (19) returns exactly F (the saturated branch), so the block obeys a
    # smooth ODE and the error of (p, v) at t = 1 s must fall like T^order: halving T divides it
    # by 2^order (16 for RK4, 2 for Euler). The band 12-20 (1.7-2.3 for Euler) allows the
    # asymptotic ratio to be approached from either side at these T (T ω = 0.5 ... 0.06 for the
    # 5 rad/s forcing); a third-order method would give 8 and fail.
    m = sliding_block()
    errs = []
    for n in (10, 20, 40, 80):
        T = 1.0 / n
        x0 = m.initial_state(block=PointMass.state(v=(1.0, 0.0, 0.0)))
        tr = simulate(m, x0, T, n, method=method, every=n)
        p, v = sliding_exact(1.0, 1.0)
        x = tr.x[-1]
        assert x[1] == 0.0 and x[2] == 0.0  # nothing pushes y, z
        errs.append(math.hypot(x[0] - p, x[3] - v))
    ratios = [a / b for a, b in zip(errs, errs[1:])]
    lo, hi = (12.0, 20.0) if order == 4 else (1.7, 2.3)
    assert all(lo < r < hi for r in ratios), (errs, ratios)


def test_rk4_is_fourth_order_on_two_masses_and_a_spring_damper():
    # The Ψ map of Relative (difference of positions, ±force) on a smooth linear system:
    # two masses joined by (10). Relative coordinate: damped oscillator with the exact solution
    # below; the centre of mass moves uniformly (momentum is conserved to rounding by the ± map).
    M1, M2, K, B = 1.0, 2.0, 400.0, 4.0
    s = ModularSystem()
    s.add_admittance("a", PointMass(M1)).add_admittance("b", PointMass(M2))
    s.add_impedance("spring", SpringDamper(K, B, n=3), Relative(Coordinates("a"), Coordinates("b")))
    m = s.build()
    mu = M1 * M2 / (M1 + M2)
    wn, zeta = math.sqrt(K / mu), B / (2.0 * math.sqrt(K * mu))
    wd = wn * math.sqrt(1.0 - zeta * zeta)
    d0 = 0.1

    def exact(t):
        return d0 * math.exp(-zeta * wn * t) * (math.cos(wd * t)
                                                + zeta * wn / wd * math.sin(wd * t))

    errs = []
    for n in (200, 400, 800):
        x0 = m.initial_state(a=PointMass.state(p=(d0, 0, 0), v=(0.3, 0, 0)),
                             b=PointMass.state(v=(0.3, 0, 0)))
        tr = simulate(m, x0, 1.0 / n, n, every=n)
        x = tr.x[-1]
        errs.append(abs((x[0] - x[6]) - (exact(1.0) + 0.0)))
        momentum = M1 * x[3:6] + M2 * x[9:12]
        assert np.allclose(momentum, [0.3 * (M1 + M2), 0, 0], rtol=0, atol=1e-13)
    assert 12.0 < errs[0] / errs[1] < 20.0 and 12.0 < errs[1] / errs[2] < 20.0, errs


@pytest.mark.parametrize("law", [Coulomb(0.8), CoulombViscous(0.8, 2.0)])
def test_euler_through_the_interface_is_the_implicit_euler_element(law):
    # (20): [f, ė] = I_fricK(v(k), e(k−1); T), e(k) = e(k−1) + T ė is algebraically (14), i.e.
    # model C of paper 000 (MasslessImpedance, whose f has the sign of the sliding velocity).
    # Same velocity sequence in, same force out to rounding.
    K, B, T = 2000.0, 3.0, 1e-3
    imp = FrictionImpedance(K=K, B=B, law=law)
    ref = MasslessImpedance(K, B, law, T)
    rng = np.random.default_rng(1)
    y, yd, w = np.zeros(1), np.zeros(1), np.zeros(1)
    for v in 0.02 * np.cumsum(rng.standard_normal(400)):
        imp.evaluate(np.array([0.0, v]), y, 0.0, T, w, yd)
        y += T * yd
        f_ref = ref.step(float(v))
        assert -w[0] == pytest.approx(f_ref, abs=1e-12)


@pytest.mark.parametrize("law", [Coulomb(0.8), CoulombViscous(0.8, 2.0)])
def test_simulate_euler_on_a_block_is_the_implicit_euler_element(law):
    # The same through the integrator: simulate(..., method="euler") passes τ = T (4), so a
    # block on I_fricK, pushed by 1.5 F sin(2t) (it sticks near the reversals, slides in
    # between), has e(k) of model C (14) fed with the simulated velocities v(k): x(k+1) holds
    # e(k) (= e(k−1) + T ė(k), (20)). Rounding only: 1e-12 of e ~ F/K = 4e-4.
    M, K, B, T = 1.0, 2000.0, 3.0, 1e-3
    s = ModularSystem().add_admittance("block", PointMass(M))
    s.add_impedance("push", ExternalForce(lambda t: (1.2 * math.sin(2.0 * t), 0.0, 0.0), n=3),
                    Coordinates("block"))
    s.add_impedance("friction", FrictionImpedance(K=K, B=B, law=law), Coordinates("block", 0))
    m = s.build()
    tr = simulate(m, m.initial_state(block=PointMass.state()), T, 4000, method="euler")
    v, e = tr.x[:, 3], tr.x[:, m.slice("friction")][:, 0]
    ref = MasslessImpedance(K, B, law, T)
    stuck = []
    for k in range(len(v) - 1):
        ref.step(float(v[k]))
        assert e[k + 1] == pytest.approx(ref.state.e, rel=1e-12, abs=1e-15)
        stuck.append(bool(ref.state.stuck))
    assert 100 < sum(stuck) < len(stuck) - 100           # both phases, many steps each
    assert np.ptp(tr.x[:, 0]) > 100 * 0.8 / K              # it slid far beyond elastic


def _rk4_stick_map(T, M, K, B):
    """RK4 (21) step matrix of the sticking block (state [e, v]; ė = v, Mv̇ = −Ke − (B+τK)v)."""
    def A(tau):
        return np.array([[0.0, 1.0], [-K / M, -(B + tau * K) / M]])
    eye, h = np.eye(2), 0.5 * T
    k1 = A(h)
    k2 = A(h) @ (eye + h * k1)
    k3 = A(T) @ (eye + h * k2)
    k4 = A(T) @ (eye + T * k3)
    return eye + T / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)


def stability_limit(M, K, B):
    """Largest T with spectral radius of the stick map ≤ 1 (scan, then bisection)."""
    def rho(T):
        return max(abs(np.linalg.eigvals(_rk4_stick_map(T, M, K, B))))
    w = math.sqrt(K / M)
    Ts = np.linspace(0.01 / w, 4.0 / w, 4000)
    i = int(np.argmax([rho(T) > 1.0 + 1e-12 for T in Ts]))
    lo, hi = Ts[i - 1], Ts[i]
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if rho(mid) <= 1.0 + 1e-12 else (lo, mid)
    return lo


def held_block(M, K, B, F, amp):
    s = ModularSystem()
    s.add_admittance("block", PointMass(M))
    s.add_impedance("load", ExternalForce(
        lambda t: (0.3 * F + amp * F * math.sin(7.0 * t) * math.cos(1.3 * t), 0.0, 0.0), n=3),
        Coordinates("block"))
    s.add_impedance("friction", FrictionImpedance(K=K, B=B, F=F), Coordinates("block", 0))
    return s.build()


def test_static_hold_without_drift_up_to_the_stability_limit():
    M, K, B, F = 1.0, 1e4, 10.0, 10.0
    T_lim = stability_limit(M, K, B)
    # the RK4 stability interval of an undamped oscillator is ωT < 2√2; the stage-dependent τK
    # damping of (19) moves the limit, so it is computed, not assumed: ωT_lim ≈ 2.3 here.
    assert 2.0 < T_lim * math.sqrt(K / M) < 2.83
    m = held_block(M, K, B, F, amp=0.6)   # load within [−0.3F, 0.9F]: below breakaway
    for T in (1e-3, 0.5 * T_lim, 0.95 * T_lim, 0.999 * T_lim):
        n = int(round(20.0 / T))  # 20 s: ~40 periods of the slow load envelope
        x0 = m.initial_state(block=PointMass.state())
        tr = simulate(m, x0, T, n, every=max(1, n // 2000))
        p, e = tr.x[:, 0], tr.x[:, m.slice("friction")][:, 0]
        # no drift: the massless object of Fig. 1 sits at p − e, which (19) keeps fixed while
        # |(B + τK)v + Ke| ≤ F (ė = v exactly); only rounding of ~1e-16 per step can move it.
        assert np.max(np.abs(p - e)) < 1e-12, T
        # the block moves only elastically: |p| ≤ max|load|/K (+ the start-up transient)
        assert np.max(np.abs(p)) <= 1.2 * 0.9 * F / K, T


def test_hold_is_lost_above_the_stability_limit():
    # The limit is real: 10 % beyond it the linear stick dynamics grow until the element
    # saturates, and the massless object then moves (the "hold" fails).
    M, K, B, F = 1.0, 1e4, 10.0, 10.0
    T = 1.1 * stability_limit(M, K, B)
    m = held_block(M, K, B, F, amp=0.6)
    tr = simulate(m, m.initial_state(block=PointMass.state()), T, int(20.0 / T))
    drift = tr.x[:, 0] - tr.x[:, m.slice("friction")][:, 0]
    assert not np.all(np.isfinite(drift)) or np.max(np.abs(drift)) > 1e-6


def test_step_functions_share_the_interface():
    m = sliding_block()
    x0 = m.initial_state(block=PointMass.state(v=(1.0, 0.0, 0.0)))
    a = rk4_step(m, x0, 0.0, 0.01)
    b = simulate(m, x0, 0.01, 1).x[-1]
    assert np.array_equal(a, b)
    c = euler_step(m, x0, 0.0, 0.01)
    # Euler: v(k+1) = v + T (u(0) − F)/M with u(0) = 3F
    assert c[3] == pytest.approx(1.0 + 0.01 * 2.0, abs=1e-15)
    with pytest.raises(ValueError, match="method"):
        simulate(m, x0, 0.01, 1, method="rk5")
    with pytest.raises(ValueError, match="T"):
        simulate(m, x0, 0.0, 1)
    with pytest.raises(ValueError, match="x0"):
        simulate(m, x0[:3], 0.01, 1)
    with pytest.raises(ValueError, match="n"):
        simulate(m, x0, 0.01, -1)
    for bad in (-1.0, 0.0, math.nan, math.inf):
        for step in (rk4_step, euler_step):
            with pytest.raises(ValueError, match="T: "):
                step(m, x0, 0.0, bad)
    for step in (rk4_step, euler_step):  # a state of the wrong size names x, not numpy's shapes
        with pytest.raises(ValueError, match="x: expected the system state of"):
            step(m, x0[:3], 0.0, 0.01)


def test_timestep_argument_must_be_positive_with_an_undamped_friction_element():
    # B = 0: (19), (24) and the penalty joint's friction divide by B + τK, so τ = 0 (or NaN,
    # inf, < 0) is rejected once per call at the system level with a ValueError naming τ, never
    # a ZeroDivisionError; any τ > 0 gives finite forces.
    from fric_core.modular import (BodyFrame, BodyPoint, FixedFrame, PenaltyFrictionContact,
                                   PenaltyJoint, RigidBody, Stack)
    s = ModularSystem().add_admittance("m", PointMass(1.0))
    s.add_impedance("f", FrictionImpedance(K=1e3, B=0.0, F=1.0, n=2), Coordinates("m", [0, 1]))
    point = s.build()
    s = ModularSystem().add_admittance("b", RigidBody(1.0, [1.0, 1.0, 1.0]))
    s.add_impedance("c", PenaltyFrictionContact(K=1e3, B=0.0, mu=0.5), BodyPoint("b"))
    s.add_impedance("j", PenaltyJoint(1e3, 0.0, 1.0, 0.0, K=1e3, B=0.0, F=1.0),
                    Stack(FixedFrame(), BodyFrame("b", (-0.5, 0.0, 0.0))))
    body = s.build()
    cases = [(point, point.initial_state(m=PointMass.state(v=(0.1, 0.1, 0.0)))),
             (body, body.initial_state(b=RigidBody.state(p=(0.5, 0.0, -0.01), v=(0.1, 0, 0),
                                                         omega=(0.0, 0.0, 0.3))))]
    for model, x in cases:
        for tau in (0.0, -1e-3, math.nan, math.inf):
            with pytest.raises(ValueError, match="tau"):
                model.forces(x, 0.0, tau)
            with pytest.raises(ValueError, match="tau"):
                model.derivative(x, 0.0, tau)
        assert np.all(np.isfinite(model.derivative(x, 0.0, 1e-3)))


def _error_ratios_over_one_second(m) -> list:
    """The block's velocity after 1 s from v = 1 m/s at T = 1/20, 1/40, 1/80 against T = 1/1280:
    the ratios of successive errors (2 for first order, 16 for fourth)."""
    finals = []
    for n in (20, 40, 80, 1280):
        x0 = m.initial_state(block=PointMass.state(v=(1.0, 0.0, 0.0)))
        finals.append(simulate(m, x0, 1.0 / n, n, every=n).x[-1, 3])
    errs = [abs(f - finals[-1]) for f in finals[:-1]]
    return [a / b for a, b in zip(errs, errs[1:])]


def test_rate_dependent_law_makes_the_sliding_block_first_order():
    # A documented property of (19), not of this code: with a viscous term the sliding force
    # Φ_Z(v + ZKe) depends on Z = 1/(B + τK), i.e. on τ = T_r, so the block's trajectory
    # converges only like T (ratio 2 per halving, band 1.7-2.5 as for Euler above) — against
    # ratio 16 for Coulomb's law (test_order_of_accuracy_on_an_always_sliding_block).
    s = ModularSystem()
    s.add_admittance("block", PointMass(1.0))
    s.add_impedance("push", ExternalForce(lambda t: (3.0 + math.sin(5.0 * t), 0.0, 0.0), n=3),
                    Coordinates("block"))
    s.add_impedance("friction", FrictionImpedance(K=1e3, B=5.0, law=CoulombViscous(1.0, 0.5)),
                    Coordinates("block", 0))
    m = s.build()
    ratios = _error_ratios_over_one_second(m)
    assert all(1.7 < r < 2.5 for r in ratios), ratios


def test_timestep_argument_none_restores_fourth_order_and_keeps_the_hold():
    # τ = 0: the continuous element (17) as an ODE (needs B > 0, T K/B < 2.7: here 0.5 at most).
    # The same viscous-law block as above now converges like T⁴ (band 12-20), and a held block
    # still does not drift (ė = v exactly in the static branch).
    def block(push, law):
        s = ModularSystem()
        s.add_admittance("block", PointMass(1.0))
        s.add_impedance("push", ExternalForce(push, n=3), Coordinates("block"))
        s.add_impedance("friction", FrictionImpedance(K=1e3, B=40.0, law=law,
                                                      timestep_argument="none"),
                        Coordinates("block", 0))
        return s.build()

    m = block(lambda t: (3.0 + math.sin(5.0 * t), 0.0, 0.0), CoulombViscous(1.0, 0.5))
    ratios = _error_ratios_over_one_second(m)
    assert all(12.0 < r < 20.0 for r in ratios), ratios
    held = block(lambda t: (0.7 * math.sin(3.0 * t), 0.0, 0.0), Coulomb(1.0))
    tr = simulate(held, held.initial_state(block=PointMass.state()), 1e-2, 2000)
    anchor = tr.x[:, 0] - tr.x[:, held.slice("friction")][:, 0]
    assert np.ptp(anchor) < 1e-13
    with pytest.raises(ValueError, match="B"):
        FrictionImpedance(K=1.0, B=0.0, F=1.0, timestep_argument="none")
    with pytest.raises(ValueError, match="timestep_argument"):
        FrictionImpedance(K=1.0, B=1.0, F=1.0, timestep_argument="T")
