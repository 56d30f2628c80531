"""fric_core.transmission: the 1-DOF gear transmission of paper 004 (DAI 14, algorithm 44), its
statics (23)-(27), and the geometry of Sec. 3.2-3.4 (fric_core.transmission.gear_geometry)."""

import math
import warnings

import numpy as np
import pytest

from fric_core.transmission import gear_geometry
from fric_core.transmission import (IllPosedWarning, Transmission, asymmetry_from_efficiencies,
                                    efficiencies, friction_phi, internal_force, internal_force_s)

H = 1e-3


def _random_well_posed(rng, gu=(-0.5, 1.5), gv=(-0.5, 2.5)):
    while True:
        t = Transmission(rng.uniform(*gu), rng.uniform(*gv), rng.uniform(0.05, 3.0),
                         rng.uniform(0.05, 3.0), ill_posed="allow")
        if t.well_posed:
            return t


def test_lambda_solves_lemma_1_and_phi_is_monotone():
    # Lemma 1: λ(ϕ, ρ) of (31) solves λ − ρ|λ| = ϕ; Lemma 2: Φ(s) of (34) is monotone in s.
    rng = np.random.default_rng(1)
    for _ in range(200):
        phi, rho = rng.normal() * 10, rng.uniform(-0.99, 0.99)
        lam = internal_force(phi, rho)
        assert lam - rho * abs(lam) == pytest.approx(phi, rel=1e-14, abs=1e-14)
        s = np.linspace(-1, 1, 41)
        vals = [friction_phi(x, phi, rho) for x in s]
        assert np.all(np.diff(vals) >= -1e-12 * abs(phi))
    with pytest.raises(ValueError, match="rho"):
        internal_force(1.0, 1.5)
    # (35): the infinite branch where (31) is empty
    assert internal_force_s(1.0, 1.0) == math.inf and internal_force_s(-1.0, -2.0) == -math.inf
    assert internal_force_s(-1.0, 2.0) == pytest.approx(-1.0 / 3.0)


def test_static_equilibrium_23_holds_exactly_in_the_stuck_state():
    # From rest, a step sticks (v == 0.0 exactly) iff |f_u − f_v| <= |γ_u f_u + γ_v f_v| (23);
    # stuck, the internal force is λ = γ_u f_u + γ_v f_v ((14b) with v̇ = 0) and the friction
    # force balances the net force. Round-off: λ and the friction carry ~1e-16 relative error,
    # so 1e-12 relative is a strict check; force pairs within 1e-9 of the boundary are skipped.
    rng = np.random.default_rng(2)
    n_stuck = n_moving = 0
    for _ in range(300):
        t = _random_well_posed(rng)
        for _ in range(20):
            f_u, f_v = rng.normal(size=2) * 10.0 ** rng.uniform(-2, 3)
            margin = abs(t.gamma_u * f_u + t.gamma_v * f_v) - abs(f_u - f_v)
            if abs(margin) <= 1e-9 * (abs(f_u) + abs(f_v)):
                continue
            t.reset()
            v = t.step(f_u, f_v, H)
            st = t.state
            if margin > 0:
                n_stuck += 1
                assert v == 0.0 and st.stuck
                lam23 = t.gamma_u * f_u + t.gamma_v * f_v
                assert st.lam == pytest.approx(lam23, rel=1e-12, abs=1e-12 * abs(f_u - f_v))
                assert st.friction == pytest.approx(f_u - f_v, rel=1e-12)
                assert abs(st.friction) <= abs(st.lam) * (1 + 1e-12)
            else:
                n_moving += 1
                # friction never reverses the motion: v has the sign of the net force
                assert v != 0.0 and not st.stuck and np.sign(v) == np.sign(f_u - f_v)
    assert n_stuck > 500 and n_moving > 500


def test_marginal_thresholds_match_efficiencies_26():
    # Forward: with f_u = 1, the output moves iff f_v < η_f; backward: with f_v = 1 it is driven
    # back iff f_u < η_b (26). 1e-9 relative from the threshold moves the net force far above
    # round-off (the step's velocity ~1e-13 vs ~1e-19 error).
    rng = np.random.default_rng(3)
    for _ in range(200):
        gu, gv = rng.uniform(-0.3, 0.95, size=2)
        if gu + gv < 0:
            continue
        t = Transmission(gu, gv, rng.uniform(0.1, 2), rng.uniform(0.1, 2))
        ef, eb = t.eta_f, t.eta_b
        assert (ef, eb) == efficiencies(gu, gv)
        assert asymmetry_from_efficiencies(ef, eb) == pytest.approx((gu, gv), abs=1e-12)
        for f_v, moves in ((ef * (1 - 1e-9), True), (ef * (1 + 1e-9), False)):
            t.reset()
            v = t.step(1.0, f_v, H)
            assert (v > 0.0) if moves else (v == 0.0)
        for f_u, moves in ((eb * (1 - 1e-9), True), (eb * (1 + 1e-9), False)):
            t.reset()
            v = t.step(f_u, 1.0, H)
            assert (v < 0.0) if moves else (v == 0.0)
        t2 = Transmission.from_efficiencies(ef, eb, t.m, t.M)
        assert t2.gamma_u == pytest.approx(gu, abs=1e-12)
        assert t2.gamma_v == pytest.approx(gv, abs=1e-12)


@pytest.mark.parametrize("gamma_v", [1.0, 1.05, 1.5, 3.0])
def test_self_locking_holds_any_load_but_is_forward_drivable(gamma_v):
    # |γ_v| >= 1: no output load moves it with zero input (Sec. 4.1), from rest or from 12 orders
    # of magnitude of loads; a moving self-locking gear only slows down with f_u = 0 (its
    # friction |λ| >= |f_v|, derived from (31) with γ_v >= 1). |γ_u| < 1 still drives it.
    gu, M = 0.2, 1.0
    m = 2.0 * M * gamma_v / (1 + gu)  # keeps |ρ̂| < 1
    t = Transmission(gu, gamma_v, m, M)
    assert t.well_posed and not t.backdrivable and t.forward_drivable
    for f_v in np.r_[-np.logspace(-6, 6, 13), np.logspace(-6, 6, 13)]:
        t.reset(v0=0.0)
        for _ in range(50):
            assert t.step(0.0, float(f_v), H) == 0.0
        t.reset(v0=0.5)
        v_prev = 0.5
        for _ in range(200):
            v = t.step(0.0, float(f_v), H)
            assert abs(v) <= abs(v_prev) * (1 + 1e-15) and v * 0.5 >= 0.0
            v_prev = v
    t.reset(v0=0.0)
    assert t.step(10.0, 0.0, H) > 0.0
    t.reset()
    assert t.step(10.0, 0.9 * t.eta_f * 10.0, H) > 0.0  # below the forward threshold: moves


def test_driving_dynamics_match_apparent_inertias_38():
    # While sliding, (44) is the classical switched model (38): forward driving
    # (η_f m + M) v̇ = η_f f_u − f_v, back-driving (m/η_b + M) v̇ = f_u/η_b − f_v (exact up to
    # round-off: 1e-10 relative on an acceleration built from ~1e-16-accurate terms).
    t = Transmission(0.2, 0.5, 1.3, 0.7)
    ef, eb = t.eta_f, t.eta_b
    t.reset(v0=1.0)
    v = t.step(10.0, 2.0, H)  # forward: input drives against a light load
    assert (v - 1.0) / H == pytest.approx((ef * 10.0 - 2.0) / (ef * t.m + t.M), rel=1e-10)
    assert t.forward_inertia() == pytest.approx(ef * t.m + t.M)
    t.reset(v0=-1.0)
    v = t.step(1.0, 20.0, H)  # back-driving: the load pushes the output back against the input
    assert (v + 1.0) / H == pytest.approx((1.0 / eb - 20.0) / (t.m / eb + t.M), rel=1e-10)


def test_energy_is_not_created():
    # Discrete energy balance of (44): (m+M)(v_k − v_{k−1}) = h (f_u − f_v − f) with f v_k >= 0,
    # so E_k − E_{k−1} <= h (f_u − f_v) v_k: the kinetic energy grows by at most the work of the
    # external forces; friction only dissipates. Round-off allowance 1e-12 of the step's energy.
    rng = np.random.default_rng(4)
    for _ in range(20):
        t = _random_well_posed(rng)
        mass = t.m + t.M
        v = 0.0
        for k in range(500):
            f_u, f_v = rng.normal(size=2) * 20.0
            v_new = t.step(f_u, f_v, H)
            st = t.state
            assert st.friction * v_new >= 0.0
            dE = 0.5 * mass * (v_new ** 2 - v ** 2)
            work = H * (f_u - f_v) * v_new
            assert dE <= work + 1e-12 * (abs(work) + 0.5 * mass * v * v + 1e-300)
            v = v_new


def test_ill_posed_uses_lambda_s_and_never_nan():
    # γ_v = 3 with a light input (m = 0.1): ρ̂ = −2.7, (31) can be empty (dynamic jamming).
    with pytest.warns(IllPosedWarning, match="rho_hat"):
        t = Transmission(0.2, 3.0, 0.1, 1.0)
    assert not t.well_posed
    with pytest.raises(ValueError, match="gamma_v"):
        Transmission(0.2, 3.0, 0.1, 1.0, ill_posed="raise")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        t = Transmission(0.2, 3.0, 0.1, 1.0, ill_posed="allow")
    rng = np.random.default_rng(5)
    for _ in range(2000):
        v = t.step(*(rng.normal(size=2) * 10.0 ** rng.uniform(-3, 6)), H)
        assert math.isfinite(v) and math.isfinite(t.state.lam)
    lo, hi = t.friction_bounds(0.0, -1.0)  # ϕ > 0 with ρ̂ <= −1 on one side: infinite bound
    assert math.isinf(lo) or math.isinf(hi)


@pytest.mark.parametrize("kwargs,field", [
    (dict(gamma_u=float("nan"), gamma_v=0.1, m=1, M=1), "gamma_u"),
    (dict(gamma_u=0.1, gamma_v="x", m=1, M=1), "gamma_v"),
    (dict(gamma_u=0.1, gamma_v=0.1, m=0.0, M=1), "m"),
    (dict(gamma_u=0.1, gamma_v=0.1, m=1, M=-1), "M"),
    (dict(gamma_u=0.1, gamma_v=0.1, m=1, M=1, ill_posed="maybe"), "ill_posed"),
])
def test_bad_parameters_name_the_field(kwargs, field):
    with pytest.raises(ValueError, match=field):
        Transmission(**kwargs)


def test_bad_step_input_names_the_field_and_keeps_the_state():
    t = Transmission(0.1, 0.3, 1.0, 1.0, v0=0.2)
    for args, field in (((float("nan"), 0.0, H), "f_u"), ((0.0, float("inf"), H), "f_v"),
                        ((0.0, 0.0, 0.0), "h"), ((0.0, 0.0, -H), "h"), (("a", 0.0, H), "f_u")):
        with pytest.raises(ValueError, match=field):
            t.step(*args)
        assert t.v == 0.2
    for (ef, eb), field in (((1.2, 0.5), "eta_f"), ((0.5, 1.1), "eta_b"),
                            ((-2.0, -1.0), "eta_b")):
        with pytest.raises(ValueError, match=field):
            asymmetry_from_efficiencies(ef, eb)
    assert asymmetry_from_efficiencies(1.0, 1.0) == (0.0, 0.0)


def test_sign_flip_invariance_and_normalisation():
    # (14) is invariant to flipping both γ's (Sec. 3.1): same trajectory; stored with γu+γv >= 0.
    a = Transmission(0.3, 0.6, 1.0, 2.0)
    b = Transmission(-0.3, -0.6, 1.0, 2.0)
    assert (b.gamma_u, b.gamma_v) == (0.3, 0.6)
    rng = np.random.default_rng(6)
    for _ in range(300):
        f = rng.normal(size=2) * 10
        assert a.step(*f, H) == b.step(*f, H)


def test_leadscrew_matches_textbook_efficiencies():
    # Square-thread screw, lead angle θ, friction angle φ = atan μ: η_f = tan θ / tan(θ + φ),
    # η_b = tan(θ − φ)/tan θ (e.g. Shigley, power screws); self-locking iff tan θ <= μ.
    for th_deg, mu in ((5, 0.1), (10, 0.15), (20, 0.05), (3, 0.2)):
        th, ph = math.radians(th_deg), math.atan(mu)
        t = Transmission.leadscrew(th, 0.005, mu, 2e-6, 3.0)
        assert t.eta_f == pytest.approx(math.tan(th) / math.tan(th + ph), rel=1e-12)
        assert t.eta_b == pytest.approx(math.tan(th - ph) / math.tan(th), rel=1e-12)
        assert t.backdrivable == (math.tan(th) > mu)
        # ratio: the nut advances r tan θ per radian; inertia and torque referred to the nut
        assert t.ratio == pytest.approx(1.0 / (0.005 * math.tan(th)))
        assert t.m == pytest.approx(2e-6 * t.ratio ** 2)
        assert t.input_force(1.0) == pytest.approx(t.ratio)


def test_worm_gear_matches_textbook_efficiency():
    # Worm drive with normal pressure angle φ_n and lead angle λ:
    # η_f = (cos φ_n − μ tan λ)/(cos φ_n + μ cot λ) (Shigley); self-locking iff μ >= tan λ cos φ_n.
    for lam_deg, mu in ((5, 0.05), (15, 0.05), (4, 0.1), (25, 0.03)):
        lam, pn = math.radians(lam_deg), math.radians(20)
        t = Transmission.worm_gear(0.01, 0.05, lam, mu, 1e-5, 0.02)
        ref = (math.cos(pn) - mu * math.tan(lam)) / (math.cos(pn) + mu / math.tan(lam))
        assert t.eta_f == pytest.approx(ref, rel=1e-12)
        assert t.backdrivable == (mu < math.tan(lam) * math.cos(pn))
        assert t.ratio == pytest.approx(0.05 / (0.01 * math.tan(lam)))


def _spur_statics(xi, mu, ru, rv, al, forward=True):
    """Efficiency of one spur contact from the contact forces themselves (no γ's): friction at
    the Coulomb limit against the sliding of the output tooth over the input tooth, torques by
    cross products about the gear centres, input torque referred to the output (× κ)."""
    def cross(a, b):
        return a[0] * b[1] - a[1] * b[0]
    ou, ov = np.array([-ru, 0.0]), np.array([rv, 0.0])
    n = np.array([math.sin(al), math.cos(al)])
    tng = np.array([math.cos(al), -math.sin(al)])
    c = xi * n
    u, v = 1.0, ru / rv  # input clockwise, output counter-clockwise, rolling at the pitch point
    def spin(w, r):
        return w * np.array([-r[1], r[0]])
    slide = (spin(v, c - ov) - spin(-u, c - ou)) @ tng
    ln = -1.0 if forward else 1.0  # forward: the input pushes the output along −n
    force = ln * n - mu * abs(ln) * math.copysign(1.0, slide) * tng  # on the output
    f_v = cross(c - ov, force)  # torque the output passes to its load (statics)
    f_u = (rv / ru) * cross(c - ou, -force)  # input torque (clockwise) referred to the output
    return f_v / f_u if forward else f_u / f_v


def test_spur_contact_21_reproduces_contact_statics():
    ru, rv, al = 0.02, 0.05, math.radians(20)
    for xi in (-0.004, -0.001, 0.0005, 0.003):
        for mu in (0.05, 0.2):
            g = gear_geometry.spur_contact(xi, mu, ru, rv, al)
            ef, eb = efficiencies(g.gamma_u, g.gamma_v)
            assert ef == pytest.approx(_spur_statics(xi, mu, ru, rv, al), rel=1e-12)
            assert eb == pytest.approx(_spur_statics(xi, mu, ru, rv, al, False), rel=1e-12)
            assert g.gamma_u + g.gamma_v >= 0.0
    # pure rolling at the pitch point: lossless
    g = gear_geometry.spur_contact(0.0, 0.3, ru, rv, al)
    assert efficiencies(g.gamma_u, g.gamma_v) == (1.0, 1.0)


@pytest.mark.parametrize("z_in,z_out", [(20, 40), (17, 60), (30, 30), (25, 100)])
def test_spur_mesh_average_matches_niemann_loss_factor(z_in, z_out):
    # To first order in μ the mesh-cycle average's forward loss 1 − η_f is Niemann's
    # μ π (1/z1 + 1/z2)(1 − ε + ε1² + ε2²); with μ = 0.01 the second-order terms are ~γ ~ 1e-3
    # of it, so 1% relative is a tight check that still allows them.
    mu = 0.01
    mesh = gear_geometry.spur_gear(z_in, z_out, 0.002, mu)
    e1, e2 = mesh.recess / mesh.base_pitch, mesh.approach / mesh.base_pitch
    hv = math.pi * (1 / z_in + 1 / z_out) * (1 - mesh.contact_ratio + e1 ** 2 + e2 ** 2)
    t = Transmission.spur_gear(z_in, z_out, 0.002, mu, 1e-5, 1e-3)
    assert 1.2 < mesh.contact_ratio < 2.0
    assert 1.0 - t.eta_f == pytest.approx(mu * hv, rel=0.01)
    assert t.ratio == pytest.approx(z_out / z_in)
    with pytest.raises(ValueError, match="addendum"):
        gear_geometry.spur_gear(8, 8, 0.002, mu, addendum=1.6)
