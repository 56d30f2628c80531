"""The implicit-Euler elements, models A–D (Kikuuwe et al. 2006, eqs. 26, 36, 38, 45).

Physical facts asserted: exact zero velocity in stiction (model A), reversal with acceleration
(|h| − F)/M, discrete passivity of every element (energy never increases through friction,
Sec. III-A), exact sticking (no drift) of models B and C under sub-breakaway input, rotation
invariance of the n-D elements, and clear errors for bad parameters and inputs.
"""

import math
import warnings

import numpy as np
import pytest

from fric_core.design import FrictionDesignWarning
from fric_core.elements import (CompliantAdmittance, InertialImpedance, MasslessImpedance,
                                RigidAdmittance)
from fric_core.laws import AsymmetricFriction, Coulomb, CoulombViscous, Stribeck

RNG = np.random.default_rng(38)


# --- model A: zero-velocity reaching and reversal (Figs. 6, 7) -------------------------------
@pytest.mark.parametrize("dt", [1e-3, 4e-3])
def test_model_a_stops_exactly_and_stays(dt):
    M, F = 1.0, 8.0
    for _ in range(300):
        v0 = float(RNG.uniform(-2.0, 2.0))
        h = float(RNG.uniform(-0.95, 0.95) * F)
        el = RigidAdmittance(M, Coulomb(F), dt, v0=v0)
        t_stop = M * abs(v0) / (F - h * math.copysign(1.0, v0))  # analytic stop time
        n = int(t_stop / dt) + 2000
        v = np.array([el.step(h) for _ in range(n)])
        k = int(np.argmax(v == 0.0))  # first step with exactly zero velocity
        assert v[k] == 0.0
        assert np.all(v[k:] == 0.0)  # exactly zero afterwards: no drift, no chattering
        assert abs((k + 1) * dt - t_stop) <= dt  # discrete stop within one step
        assert np.all(v[:k] * v0 > 0.0)  # decelerates monotonically, never crosses zero
        # while sliding, dv/dt = (h − F sgn v)/M exactly (Coulomb force is constant)
        if k > 1:
            acc = np.diff(np.concatenate([[v0], v[:k]])) / dt
            np.testing.assert_allclose(acc, (h - F * math.copysign(1.0, v0)) / M, rtol=1e-9)


@pytest.mark.parametrize("dt", [1e-3, 4e-3])
def test_model_a_holds_under_any_sub_breakaway_force(dt):
    el = RigidAdmittance(2.0, CoulombViscous(5.0, 3.0), dt)
    for h in RNG.uniform(-5.0, 5.0, size=5000):
        assert el.step(float(h)) == 0.0
        assert el.state.stuck
        assert el.state.f == pytest.approx(h, rel=1e-15)  # friction balances h exactly


@pytest.mark.parametrize("dt", [1e-3, 4e-3])
def test_model_a_reverses_with_acceleration_h_minus_f(dt):
    M, F, h, v0 = 1.0, 8.0, -10.0, 1.3  # Fig. 7
    el = RigidAdmittance(M, Coulomb(F), dt, v0=v0)
    v = np.array([el.step(h) for _ in range(int(1.0 / dt))])
    acc = np.diff(np.concatenate([[v0], v])) / dt
    pos, neg = v > 0.0, v < 0.0
    np.testing.assert_allclose(acc[pos], (h - F) / M, rtol=1e-9)  # −18 m/s² before reversal
    # after reversal, (|h| − F)/M = 2 m/s² towards h (skip the one step that crosses zero)
    after = np.flatnonzero(neg)[1:]
    np.testing.assert_allclose(acc[after], (h + F) / M, rtol=1e-9)
    t_rev = M * v0 / (F - h)
    assert abs((np.argmax(v <= 0.0) + 1) * dt - t_rev) <= dt


# --- passivity: energy never increases through the friction (Sec. III-A) ----------------------
def _laws_for(n):
    if n is None:
        return [Coulomb(3.0), CoulombViscous(2.0, 1.5), Stribeck(1.0, 2.0, 0.05, D=0.5),
                AsymmetricFriction(1.0, 1.5, 0.3, 0.2, 1.4, -2.0, 0.02)]
    return [Coulomb(3.0), CoulombViscous(2.0, 1.5), Stribeck(1.0, 2.0, 0.05, D=0.5)]


def _random_input(n, steps, scale):
    shape = (steps,) if n is None else (steps, n)
    # piecewise-constant random input with random amplitude: covers stick, slip and reversals
    seg = RNG.normal(size=(steps // 50 + 1,) + shape[1:]) * scale
    return np.repeat(seg, 50, axis=0)[:steps]


def _as(x, n):
    return float(x) if n is None else np.asarray(x)


@pytest.mark.filterwarnings("ignore::fric_core.design.FrictionDesignWarning")  # random params
@pytest.mark.parametrize("n", [None, 3])
def test_passivity_all_elements(n):
    """Discrete energy balance of implicit Euler: E_k − E_0 ≤ Σ T·input·velocity (the friction
    and the damper only remove energy). Slack 1e-9·(energy scale) covers float rounding."""
    T = 1e-3
    for trial in range(12):
        for law in _laws_for(n):
            M = float(RNG.uniform(0.2, 3.0))
            K = float(10.0 ** RNG.uniform(2, 5))
            B = float(RNG.uniform(0.0, 2.0) * math.sqrt(K * M))
            dot = (lambda a, b: a * b) if n is None else (lambda a, b: float(a @ b))
            # A: input force h, E = ½ M v²
            a = RigidAdmittance(M, law, T)
            E0, work = 0.0, 0.0
            for h in _random_input(n, 600, 4.0):
                v = a.step(_as(h, n))
                work += T * dot(h, v)
                E = 0.5 * M * dot(v, v)
                assert E - E0 <= work + 1e-9 * max(1.0, abs(work))
            # C: input velocity u, power f·u, stored ½ K e²
            c = MasslessImpedance(K, B, law, T)
            work = 0.0
            for u in _random_input(n, 600, 0.05):
                f = c.step(_as(u, n))
                work += T * dot(f, u)
                e = c.state.e
                assert 0.5 * K * dot(e, e) <= work + 1e-9 * max(1.0, abs(work))
            # B: input velocity u, power h·u, stored ½ M v² + ½ K e²
            b = InertialImpedance(M, K, B, law, T)
            work = 0.0
            for u in _random_input(n, 600, 0.05):
                h = b.step(_as(u, n))
                work += T * dot(h, u)
                s = b.state
                E = 0.5 * M * dot(s.v, s.v) + 0.5 * K * dot(s.e, s.e)
                assert E <= work + 1e-9 * max(1.0, abs(work))
            # D: input force h, stored ½ M u² + ½ K e²
            d = CompliantAdmittance(M, K, B, law, T)
            work = 0.0
            for h in _random_input(n, 600, 4.0):
                u = d.step(_as(h, n))
                work += T * dot(h, u)
                s = d.state
                E = 0.5 * M * dot(s.u, s.u) + 0.5 * K * dot(s.e, s.e)
                assert E <= work + 1e-9 * max(1.0, abs(work))


def test_model_a_friction_opposes_motion():
    el = RigidAdmittance(1.0, Stribeck(1.0, 2.0, 0.05, D=0.5), 1e-3, v0=0.5)
    for h in _random_input(None, 3000, 4.0):
        v = el.step(float(h))
        s = el.state
        assert s.f * v >= 0.0 and abs(v) <= abs(s.v_star)  # (26c): |v_k| ≤ |v*_k|


# --- no drift: models B and C stick exactly under sub-breakaway input -------------------------
def test_model_c_sticks_without_drift_under_oscillating_velocity():
    """u = 1 mm/s · sin(2π t) into a contact with K = 6000, B = 10, F = 4 N (paper Sec. V-B):
    the peak force K·(1 mm/s)/(2π) + B·1 mm/s ≈ 0.96 N + 0.01 N < F, so the contact must stay
    stuck; e then equals ∫u exactly (37a): after every full period it is back to its start."""
    T, K, B = 1e-3, 6000.0, 10.0
    el = MasslessImpedance(K, B, Coulomb(4.0), T)
    t = np.arange(1, 20001) * T
    u = 1e-3 * np.sin(2 * np.pi * t)
    e = np.empty_like(t)
    for k, uk in enumerate(u):
        el.step(float(uk))
        assert el.state.stuck
        e[k] = el.state.e
    per_period = e[999::1000]  # e after each full 1 s period
    assert np.max(np.abs(per_period - per_period[0])) <= 1e-15  # nothing accumulates
    assert np.max(np.abs(e)) <= 1e-3 / np.pi + 1e-12  # bounded by the input's own excursion


def test_model_c_static_force_holds_without_creep():
    el = MasslessImpedance(3e4, 300.0, Coulomb(5.0), 1e-3)
    for _ in range(100):
        el.step(1e-3)  # load the contact to ≈ 3 N, below F
    f0, e0 = el.state.f, el.state.e
    assert el.state.stuck and 0.0 < f0 < 5.0
    for _ in range(10000):
        f = el.step(0.0)  # device held still
    assert el.state.e == e0 and f == pytest.approx(3e4 * e0, rel=1e-15)  # no relaxation


def test_model_b_mass_stays_stuck_and_acts_as_spring_37():
    """Sub-breakaway oscillating input velocity: the virtual mass never moves (v ≡ 0) and the
    element is exactly the spring-damper (37): h = K e + B (e − e_prev)/T, e = e_prev + T u."""
    T, M, K, B, F = 1e-3, 1.0, 1e4, 200.0, 10.0
    el = InertialImpedance(M, K, B, Coulomb(F), T)
    e_prev = 0.0
    for k in range(1, 10001):
        u = 2e-3 * math.sin(2 * math.pi * k * T)
        h = el.step(u)
        s = el.state
        assert s.v == 0.0 and s.stuck
        assert s.e == e_prev + T * u
        assert h == pytest.approx(K * s.e + B * (s.e - e_prev) / T, rel=1e-12, abs=1e-15)
        e_prev = s.e


def test_model_b_slides_and_pulls_with_kinetic_force():
    """Ramp u = 0.1 t (Fig. 13): once the mass slides at steady speed the spring force equals
    the Coulomb level (acceleration → 0): h → F within the transient ≤ 1e-6 N after 2 s."""
    T, M, K, F = 1e-3, 1.0, 8.3e4, 10.0
    el = InertialImpedance(M, K, 2 * math.sqrt(K * M), Coulomb(F), T)
    for k in range(1, 3001):
        h = el.step(0.1 * k * T)
    s = el.state
    # u keeps accelerating at 0.1 m/s², so h = F + M·0.1 at steady state
    assert h == pytest.approx(F + M * 0.1, abs=1e-6)
    assert s.v > 0 and not s.stuck


def test_model_d_tends_to_model_a_for_stiff_contact():
    """Eq. (45) → (26) as K → ∞: with K = 1e9 (and critical B) velocities agree to O(1/(T K))."""
    T, M, F = 1e-3, 1.0, 8.0
    a = RigidAdmittance(M, Coulomb(F), T, v0=1.3)
    d = CompliantAdmittance(M, 1e9, 2 * math.sqrt(1e9 * M), Coulomb(F), T, u0=1.3)
    for k in range(1000):
        h = -10.0 if k < 500 else -3.0
        assert d.step(h) == pytest.approx(a.step(h), abs=1e-3)


# --- n-D: rotation invariance and per-joint vectorisation -------------------------------------
@pytest.mark.filterwarnings("ignore::fric_core.design.FrictionDesignWarning")
@pytest.mark.parametrize("cls", ["A", "B", "C", "D"])
def test_nd_elements_rotation_invariant(cls):
    T = 1e-3
    for trial in range(6):
        q, _ = np.linalg.qr(RNG.normal(size=(3, 3)))
        law = [Coulomb(3.0), CoulombViscous(2.0, 1.0), Stribeck(1.0, 2.0, 0.05)][trial % 3]
        make = {
            "A": lambda: RigidAdmittance(1.5, law, T),
            "B": lambda: InertialImpedance(1.5, 1e4, 100.0, law, T),
            "C": lambda: MasslessImpedance(6000.0, 10.0, law, T),
            "D": lambda: CompliantAdmittance(1.5, 1e4, 100.0, law, T),
        }[cls]
        e1, e2 = make(), make()
        scale = 0.05 if cls in "BC" else 4.0
        for x in _random_input(3, 800, scale):
            y1, y2 = e1.step(q @ x), e2.step(x)
            np.testing.assert_allclose(y1, q @ y2, rtol=1e-9, atol=1e-11 * scale)


@pytest.mark.filterwarnings("ignore::fric_core.design.FrictionDesignWarning")
@pytest.mark.parametrize("cls", ["A", "B", "C", "D"])
def test_per_joint_vector_equals_scalar_elements(cls):
    n, T = 7, 1e-3
    M = RNG.uniform(0.5, 2.0, n)
    K = RNG.uniform(1e3, 1e4, n)
    B = RNG.uniform(5.0, 50.0, n)
    law = AsymmetricFriction(RNG.uniform(1, 2, n), RNG.uniform(1, 2, n), RNG.uniform(0, 1, n),
                             RNG.uniform(0, 1, n), RNG.uniform(2, 3, n), -RNG.uniform(2, 3, n),
                             RNG.uniform(0.05, 0.1, n))

    def make(i=None):
        pick = (lambda p: p) if i is None else (lambda p: float(p[i]))
        lw = law if i is None else AsymmetricFriction(*(pick(getattr(law, k)) for k in
                                                        ("Cp", "Cn", "bp", "bn", "Dp", "Dn",
                                                         "dv")))
        return {"A": lambda: RigidAdmittance(pick(M), lw, T),
                "B": lambda: InertialImpedance(pick(M), pick(K), pick(B), lw, T),
                "C": lambda: MasslessImpedance(pick(K), pick(B), lw, T),
                "D": lambda: CompliantAdmittance(pick(M), pick(K), pick(B), lw, T)}[cls]()

    vec = make()
    assert vec.per_joint and vec.shape == (n,)
    scal = [make(i) for i in range(n)]
    scale = 0.05 if cls in "BC" else 4.0
    for x in _random_input(n, 500, scale):
        y = vec.step(x)
        ref = [s.step(float(xi)) for s, xi in zip(scal, x)]
        np.testing.assert_allclose(y, ref, rtol=1e-12, atol=1e-14)


def test_isotropic_contact_sticks_as_a_whole_and_slides_along_velocity():
    el = MasslessImpedance(6000.0, 10.0, Coulomb(4.0), 1e-3)
    f = el.step(np.array([1e-4, -1e-4]))
    assert el.state.stuck is True
    for _ in range(200):
        f = el.step(np.array([0.3, 0.4]))
    assert np.linalg.norm(f) == pytest.approx(4.0, rel=1e-12)  # kinetic force magnitude F
    assert f @ np.array([0.3, 0.4]) == pytest.approx(4.0 * 0.5, rel=1e-9)  # along the motion


def test_shape_is_taken_from_first_input_and_kept():
    el = MasslessImpedance(6000.0, 10.0, Coulomb(4.0), 1e-3)
    assert el.shape == ()
    el.step(np.zeros(2))
    assert el.shape == (2,)
    with pytest.raises(ValueError, match=r"^u: expected shape \(2,\)"):
        el.step(np.zeros(3))
    with pytest.raises(ValueError, match="^u:"):
        el.step(0.1)
    el.reset()
    assert el.step(0.1) == pytest.approx(1.6)  # reset frees the shape; (B + TK) u = 16·0.1


# --- errors --------------------------------------------------------------------------------
@pytest.mark.parametrize("make, field", [
    (lambda: RigidAdmittance(0.0, Coulomb(1.0), 1e-3), "M"),
    (lambda: RigidAdmittance(-1.0, Coulomb(1.0), 1e-3), "M"),
    (lambda: RigidAdmittance(float("nan"), Coulomb(1.0), 1e-3), "M"),
    (lambda: RigidAdmittance(1.0, Coulomb(1.0), 0.0), "dt"),
    (lambda: RigidAdmittance(1.0, Coulomb(1.0), -1e-3), "dt"),
    (lambda: RigidAdmittance(1.0, Coulomb(1.0), 1e-3, v0=float("inf")), "v0"),
    (lambda: RigidAdmittance(1.0, 3.0, 1e-3), "law"),
    (lambda: RigidAdmittance(np.ones((2, 2)), Coulomb(1.0), 1e-3), "M"),
    (lambda: InertialImpedance(1.0, -1.0, 1.0, Coulomb(1.0), 1e-3), "K"),
    (lambda: InertialImpedance(1.0, 1.0, -1.0, Coulomb(1.0), 1e-3), "B"),
    (lambda: MasslessImpedance(-5.0, 1.0, Coulomb(1.0), 1e-3), "K"),
    (lambda: MasslessImpedance(0.0, 0.0, Coulomb(1.0), 1e-3), "B"),
    (lambda: MasslessImpedance(np.ones(3), np.ones(2), Coulomb(1.0), 1e-3), "B"),
    (lambda: MasslessImpedance(np.ones(3), 1.0, Coulomb(np.ones(2)), 1e-3), "law"),
    (lambda: MasslessImpedance(np.ones(3), 1.0, Coulomb(1.0), 1e-3, per_joint=False), "per_joint"),
    (lambda: CompliantAdmittance(1.0, 1.0, 1.0, Coulomb(1.0), float("nan")), "dt"),
    (lambda: CompliantAdmittance(1.0, 1.0, 1.0, Coulomb(1.0), 1e-3, u0=[1.0, np.nan]), "u0"),
])
def test_invalid_parameters_name_the_field(make, field):
    with pytest.raises(ValueError, match=rf"^{field}:"):
        make()


@pytest.mark.parametrize("make", [
    lambda: RigidAdmittance(1.0, Coulomb(2.0), 1e-3, v0=0.3),
    lambda: InertialImpedance(1.0, 1e4, 100.0, Coulomb(2.0), 1e-3),
    lambda: MasslessImpedance(6000.0, 10.0, Coulomb(2.0), 1e-3),
    lambda: CompliantAdmittance(1.0, 1e4, 100.0, Coulomb(2.0), 1e-3, u0=0.3),
])
@pytest.mark.parametrize("vector", [False, True])
def test_non_finite_input_rejected_and_state_unchanged(make, vector):
    el = make()
    good = np.array([0.01, 0.02]) if vector else 0.01
    for _ in range(10):
        el.step(good)
    before = [np.copy(v) for v in el.state]
    for bad in ([float("nan"), float("inf"), -float("inf"), np.float64("nan")] if not vector else
                [np.array([0.1, np.nan]), np.array([np.inf, 0.0]), np.ones((2, 2)), "x"]):
        with pytest.raises(ValueError, match=f"^{el._input_name}:"):
            el.step(bad)
        after = list(el.state)
        assert all(np.array_equal(a, b) for a, b in zip(before, after))
    el.step(good)  # still usable


# --- design warnings (Sec. III-E, IV-C) -----------------------------------------------------
def test_design_warnings_at_construction_only():
    with pytest.warns(FrictionDesignWarning, match=r"\(63\)"):
        # critical damping, T² = (2e-3)² > M/(4K) = 2.5e-6: oscillates (Fig. 14 right)
        el = MasslessImpedance(1e5, 2 * math.sqrt(1e5), Coulomb(7.0), 2e-3, mass=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(100):
            el.step(0.1)  # never warns per step
        MasslessImpedance(1e4, 2 * math.sqrt(1e4), Coulomb(7.0), 1e-3, mass=1.0)  # fine
    with pytest.warns(FrictionDesignWarning) as rec:
        RigidAdmittance(0.01, Stribeck(1.0, 3.0, 0.001), 1e-3)  # Z = 0.1, min Φ' ≈ −1716
    msgs = [str(w.message) for w in rec]
    assert any("(15)" in m for m in msgs) and any("(48)" in m for m in msgs)
    with pytest.warns(FrictionDesignWarning, match=r"\(15\).*dv"):
        MasslessImpedance(6000.0, 10.0,
                          AsymmetricFriction(1.7714, 1.729, 0.457, 0.6196, 2.1302, -1.8623,
                                             0.007), 1e-3)


# --- literal transcriptions of the paper's procedures ----------------------------------------
def test_models_match_literal_transcription_of_the_paper():
    """The elements against straight transcriptions of (36), (38), (45) with Coulomb Φ_Z (23).
    Model B keeps (e, v) instead of (e_{k−1}, e_{k−2}, u_{k−1}); this shows it is the same
    scheme. Agreement to 1e-9 relative: only the order of float operations differs."""
    T, M, K, B, F = 1e-3, 1.3, 2e4, 150.0, 6.0

    def phiz(x, Z):  # (23)
        return F * math.copysign(1.0, x) if abs(x) > Z * F else x / Z

    C = M + T * B + T * T * K  # (35)
    e1 = e2 = u1 = 0.0
    b = InertialImpedance(M, K, B, Coulomb(F), T)
    ec = 0.0
    c = MasslessImpedance(K, B, Coulomb(F), T)
    A = (T * T * K + T * B + M) / (M * (B + T * K))  # (44)
    ud, ed = 0.0, 0.0
    d = CompliantAdmittance(M, K, B, Coulomb(F), T)
    for k in range(1, 4001):
        u = 0.3 * math.sin(3.0 * k * T) + 0.05 * math.sin(40.0 * k * T)
        h_in = 9.0 * math.sin(2.0 * k * T)
        # model B, (36a)-(36d)
        vs = u + T * K / C * e1 - M / C * (u - u1 + (e1 - e2) / T)
        f = phiz(vs, T / C)
        e = e1 + T * u - T * (vs - T * f / C)
        h = K * e + B * (e - e1) / T
        assert b.step(u) == pytest.approx(h, rel=1e-9, abs=1e-9)
        e2, e1, u1 = e1, e, u
        # model C, (38a)-(38c)
        vs = u + K * ec / (B + T * K)
        f = phiz(vs, 1.0 / (B + T * K))
        ec = (B * ec + T * f) / (B + T * K)
        assert c.step(u) == pytest.approx(f, rel=1e-9, abs=1e-9)
        # model D, (45a)-(45d)
        vs = ud + T * h_in / M + K * ed / (B + T * K)
        f = phiz(vs, A)
        ed = (B * ed + T * f) / (B + T * K)
        ud = ud + T * (h_in - f) / M
        assert d.step(h_in) == pytest.approx(ud, rel=1e-9, abs=1e-12)
