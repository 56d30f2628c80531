"""Conventional friction models (fric_core.baselines) next to the implicit elements A–D.

The drift comparison: a 1 kg mass under an oscillating force below breakaway, 20 s at T = 1 ms.
The implicit models A–D hold it (A exactly still; B, C, D elastically, without accumulation), the
elasto-plastic model holds it, while Dahl and LuGre let it creep (Kikuuwe et al. 2006, Sec. II-B;
Waltersson & Karayiannidis, Sec. III-C). Karnopp/Quinn/viscosity: behaviour set by the
threshold ε (Sec. II-A).
"""

import math

import numpy as np
import pytest

from fric_core.baselines import (Dahl, ElastoPlastic, KarnoppAdmittance, LuGre, QuinnAdmittance,
                                 ViscousRegularisedAdmittance, ViscousRegularisedImpedance)
from fric_core.coupling import simulate_admittance, simulate_mass_on_impedance
from fric_core.design import static_convergence
from fric_core.elements import (CompliantAdmittance, InertialImpedance, MasslessImpedance,
                                RigidAdmittance)
from fric_core.laws import AsymmetricFriction, Coulomb, CoulombViscous, EllipticCoulomb, Stribeck

# ---------------------------------------------------------------------------------------------
# The drift scenario
# ---------------------------------------------------------------------------------------------
F = 10.0  # breakaway (static) friction level, N
M = 1.0  # kg
T = 1e-3  # s
N = 20_000  # 20 s
PERIOD = 500  # samples per period of the 2 Hz load
t = np.arange(1, N + 1) * T
# h = 0.5 F + 0.3 F sin(2π·2 t): between 0.2 F and 0.8 F, 20 % below breakaway at its peak. The
# amplitude is 0.3 F rather than 0.4 F so that the elasto-plastic bristle, whose breakaway
# deflection is s_ba = 0.9 (paper 002 Table I) of z_max = g(v)/σ0, stays in its elastic zone
# with margin even though g(v) dips below μ_S while the bristle moves (0.9·g ≥ 8.9 N > 8 N).
H = 0.5 * F + 0.3 * F * np.sin(2.0 * np.pi * 2.0 * t)
# Contact stiffness for model C/D and the bristle models, with critical damping B² = 4KM.
K = 3e4
B = 2.0 * math.sqrt(K * M)
# LuGre/elasto-plastic: μ_C = 0.8 F, μ_S = F (breakaway F), Stribeck velocity 10 mm/s (the
# presliding velocities here are ≤ 2 mm/s, so g(v) stays near μ_S), γ = 2, σ2 = 0; f_N = 1 N so
# the coefficients read as forces.
LUGRE = dict(sigma0=K, sigma1=B, sigma2=0.0, mu_C=0.8 * F, mu_S=F, v_s=0.01, dt=T)
# The largest elastic deflection any of these contacts can hold: the steady-state bristle
# deflection at breakaway μ_S/σ0 (= F/K for model C/D too). A displacement beyond it is sliding.
Z_BREAK = F / K


def test_scenario_is_a_non_oscillatory_static_design():
    # eq. (63) for the explicit mass + model-C composite: real eigenvalues in [0, 1) (T² < M/4K).
    sc = static_convergence(M, K, B, T)
    assert sc.non_oscillatory
    assert H.max() < 0.81 * F and H.min() > 0.19 * F


def cycle_means(x):
    """Mean position over each 0.5 s period of the load (removes the oscillation)."""
    return x.reshape(-1, PERIOD).mean(axis=1)


@pytest.fixture(scope="module")
def runs():
    out = {}
    out["A"] = simulate_admittance(RigidAdmittance(M, Coulomb(F), T), H)
    x, v, _ = simulate_mass_on_impedance(MasslessImpedance(K, B, Coulomb(F), T, mass=M), M, H, T)
    out["C"] = (x, v)
    out["D"] = simulate_admittance(CompliantAdmittance(M, K, B, Coulomb(F), T), H)
    for name, el in (("Dahl", Dahl(K, F, T)), ("LuGre", LuGre(**LUGRE)),
                     ("EP", ElastoPlastic(**LUGRE))):
        x, v, _ = simulate_mass_on_impedance(el, M, H, T)
        out[name] = (x, v)
    return out


def period_to_period(x):
    """max |x(t + 10 s) − x(t)| for t in [5 s, 10 s): 0 for a non-accumulating response.

    10 s is exactly 20 periods of the load; by t = 5 s the start-up transient has decayed
    (eigenvalues of (63) are 0.89 and 0.74 per step, so 0.89^5000 ≈ 1e-253).
    """
    return np.max(np.abs(x[15_000:20_000] - x[5_000:10_000]))


def test_model_A_does_not_move_at_all(runs):
    x, v = runs["A"]
    assert np.all(v == 0.0)  # exactly: the implicit static branch sets v = 0
    assert np.all(x == 0.0)


@pytest.mark.parametrize("model", ["C", "D", "EP"])
def test_compliant_models_deflect_but_do_not_accumulate(runs, model):
    x, _ = runs[model]
    # Bounded: the elastic deflection follows the load (≈ h/K, peak 0.27 mm) and stays below
    # the breakaway deflection F/K = 0.33 mm.
    assert 0.5 * F / K < np.max(np.abs(x)) < Z_BREAK
    # Non-accumulating: once stuck the response is that of a stable linear system, hence
    # periodic. Measured ≈ 1e-17 m (C, EP) and 1e-16 m (D) — rounding of x ~ 3e-4 m summed over
    # 2e4 steps. 1e-12 m (1 pm) leaves 4 orders of magnitude for platform rounding differences
    # and is 9 orders below the LuGre/Dahl drift over the same 10 s.
    assert period_to_period(x) < 1e-12
    m = cycle_means(x)
    assert abs(m[-1] - m[19]) < 1e-12


def test_model_B_mass_stays_stuck_under_small_oscillating_velocity():
    # Input velocity 1 mm/s at 2 Hz: spring extension ≤ U/(2π) = 0.16 mm, so the spring-damper
    # force K e + B u ≤ 4.8 + 0.35 N < F: static friction throughout.
    el = InertialImpedance(M, K, B, Coulomb(F), T)
    u = 1e-3 * np.sin(2.0 * np.pi * 2.0 * t)
    v_mass, h_out = [], []
    for uk in u.tolist():
        h_out.append(el.step(uk))
        st = el.state
        assert st.stuck
        v_mass.append(st.v)
    assert all(v == 0.0 for v in v_mass)  # the virtual mass never moves: no drift, exactly
    assert 1.0 < max(abs(h) for h in h_out) < F  # while the spring does transmit force


@pytest.mark.parametrize("model", ["Dahl", "LuGre"])
def test_dahl_and_lugre_drift(runs, model):
    x, _ = runs[model]
    m = cycle_means(x)  # 40 period means, centred at 0.25, 0.75, ..., 19.75 s
    tc = (np.arange(m.size) + 0.5) * PERIOD * T
    drift_last_10s = m[-1] - m[19]
    # Measured: 6.98 mm (Dahl), 6.92 mm (LuGre) = 21 × the breakaway deflection F/σ0 = 0.33 mm.
    # 10 × F/σ0 cannot be elastic deflection: it is gross sliding at 80 % of breakaway.
    assert drift_last_10s > 10.0 * Z_BREAK
    # and it is 1e9 × the bound the implicit/elasto-plastic models meet (1e-12 m).
    assert drift_last_10s > 1e9 * 1e-12
    # Grows with time: the mean position at 20 s is 1.85× (Dahl) / 1.98× (LuGre) the one at
    # 10 s (a bounded response would give ≈ 1×; linear drift from 0 gives 2×).
    assert m[-1] > 1.5 * m[19]
    # Steady creep: a line through the period means after the start-up (t > 5 s) has slope
    # ≈ 0.70 / 0.69 mm/s; 0.3 mm/s keeps a factor 2 to spare. The fit is near-perfect
    # (residual < 1e-8 m, measured 2.6e-9 Dahl, 5e-17 LuGre), i.e. drift linear in time.
    slope, icpt = np.polyfit(tc[10:], m[10:], 1)
    assert slope > 0.3e-3
    assert np.max(np.abs(m[10:] - (slope * tc[10:] + icpt))) < 1e-8


def test_elasto_plastic_stays_elastic_in_the_drift_scenario():
    el = ElastoPlastic(**LUGRE)
    v = 0.0
    for hk in H.tolist():
        f = el.step(v)
        v += T * (hk - f) / M
        assert el.state.alpha == 0.0  # purely elastic every step (why it cannot drift)
        assert abs(el.state.z) < el.state.z_ba


def test_bristle_models_slide_above_breakaway():
    # Sanity: the same LuGre/elasto-plastic contacts do slide under 1.2 F, and settle on the
    # steady-state friction g(v) f_N (= μ_C at v ≫ v_s) — they are not simply springs.
    hh = np.full(3000, 1.2 * F)
    for el in (LuGre(**LUGRE), ElastoPlastic(**LUGRE)):
        x, v, f = simulate_mass_on_impedance(el, M, hh, T)
        assert v[-1] > 10.0  # accelerating at (1.2 F − 0.8 F)/M = 4 m/s², 3 s
        assert f[-1] == pytest.approx(el.g(v[-1]), rel=1e-9)  # exact steady state of (1)/(4)
    el = Dahl(K, F, T)
    for _ in range(200):
        f = el.step(0.5)
    assert f == pytest.approx(F, rel=1e-12)  # Dahl's steady state is F sgn(v)


# ---------------------------------------------------------------------------------------------
# Karnopp, Quinn, viscosity: the threshold ε decides
# ---------------------------------------------------------------------------------------------
H_CONST = 0.5 * F  # constant push, half the breakaway force
V0 = 0.1234  # initial sliding velocity; friction net of the push decelerates at 5 m/s²,
DV = T * (F - H_CONST) / M  # i.e. by 5 mm/s per step


def test_model_A_stops_exactly_under_constant_force():
    x, v = simulate_admittance(RigidAdmittance(M, Coulomb(F), T, v0=V0), np.full(N, H_CONST))
    k = int(np.argmax(v == 0.0))
    assert 0 < k < 30  # stops after V0/DV ≈ 25 steps
    assert np.all(v[k:] == 0.0)
    assert np.all(x[k:] == x[k])  # and never moves again


@pytest.mark.parametrize("eps, v_res", [
    # v_{k} = V0 − k·DV until |v| ≤ ε; the residual is whatever value lands in the band:
    (2e-3, V0 - 25 * DV),  # −1.6 mm/s: the mass creeps BACKWARDS, against the push
    (5e-3, V0 - 24 * DV),  # +3.4 mm/s
    (1e-2, V0 - 23 * DV),  # +8.4 mm/s
    (2e-2, V0 - 21 * DV),  # +18.4 mm/s
])
def test_karnopp_keeps_a_residual_velocity_set_by_eps(eps, v_res):
    el = KarnoppAdmittance(M, Coulomb(F), T, eps, v0=V0)
    x, v = simulate_admittance(el, np.full(N, H_CONST))
    # In the band f = h exactly (eq. 3), so the velocity it entered with is kept for ever
    # (rel 1e-12: v_res is computed in a different order of roundings than the 25 updates).
    assert el.state.band and el.state.f == H_CONST
    assert v[-1] == pytest.approx(v_res, rel=1e-12)
    assert np.all(v[100:] == v[-1])  # constant: no chattering with this ε
    assert 0.0 < abs(v[-1]) <= eps
    # ... so the position drifts linearly: 10 s × v_res (16 mm to 184 mm), where model A is
    # exactly still. rel 1e-9: cumulative-sum rounding over 1e4 steps.
    assert x[-1] - x[N // 2 - 1] == pytest.approx(10.0 * v_res, rel=1e-9)


def test_karnopp_chatters_when_eps_is_smaller_than_one_step():
    # ε = 1 mm/s: the band (2 mm/s wide) is narrower than the 5 mm/s change per step, so the
    # mass jumps over it, the force switches between +F and −F and the velocity enters a limit
    # cycle (13.4, 8.4, 3.4, −1.6 mm/s) — chattering, and drift at its mean 5.9 mm/s.
    el = KarnoppAdmittance(M, Coulomb(F), T, 1e-3, v0=V0)
    fs, vs = [], []
    for _ in range(2000):
        vs.append(el.step(H_CONST))
        fs.append(el.state.f)
    fs, vs = np.array(fs[-1000:]), np.array(vs[-1000:])
    flips = np.count_nonzero(np.diff(np.sign(fs)) != 0)
    assert flips > 400  # every 4-step cycle flips twice: 500 flips in 1000 steps (measured)
    assert fs.min() == -F and fs.max() == F  # friction pulling the same way as the push
    assert vs.mean() > 5e-3  # net creep forward (exactly 5.9 mm/s)


def test_viscosity_approximation_creeps_at_eps_h_over_F():
    for eps in (1e-2, 1e-1):
        el = ViscousRegularisedAdmittance(M, Coulomb(F), T, eps, v0=V0)
        x, v = simulate_admittance(el, np.full(N, H_CONST))
        # eq. (5) does not balance h at v = 0: steady creep v = ε h/F (T F/(εM) ≤ 1: no
        # overshoot, converges geometrically; after 2e4 steps exact to rounding).
        assert v[-1] == pytest.approx(eps * H_CONST / F, rel=1e-12)


def test_quinn_holds_at_rest_but_its_stop_depends_on_eps():
    # From rest under the sub-breakaway oscillating load, (4) gives f = h up to rounding: the
    # mass stays (measured |x| ≤ 5e-18 m; 1e-15 m allows for rounding creep).
    for eps in (1e-2, 1e-1):
        x, _ = simulate_admittance(QuinnAdmittance(M, Coulomb(F), T, eps), H)
        assert np.max(np.abs(x)) < 1e-15
    # After sliding, the band is a damper F/ε: with T F/(εM) = 0.1 the velocity decays by 0.9 per
    # step and the mass creeps on by ≈ v_entry εM/F beyond where model A stops (0.23 mm here).
    xa, _ = simulate_admittance(RigidAdmittance(M, Coulomb(F), T, v0=V0), np.full(2000, H_CONST))
    xq, vq = simulate_admittance(QuinnAdmittance(M, Coulomb(F), T, 0.1, v0=V0),
                                 np.full(2000, H_CONST))
    assert xq[-1] - xa[-1] > 1e-4
    assert vq[-1] > 0.0  # after 2000 steps still not exactly at rest (0.9^1975 ≈ 1e-90)
    # With T F/(εM) = 10 > 2 the band is unstable: chattering, and drift from rest.
    x, _ = simulate_admittance(QuinnAdmittance(M, Coulomb(F), T, 1e-3), H)
    assert x[-1] > 10.0 * Z_BREAK


def test_viscous_impedance_is_eq5():
    el = ViscousRegularisedImpedance(Coulomb(F), T, 0.01)
    assert el.step(0.005) == pytest.approx(F * 0.5)
    assert el.step(-0.02) == -F
    assert el.step(0.0) == 0.0
    el = ViscousRegularisedImpedance(CoulombViscous(F, 2.0), T, 0.01)
    # continuous at ±ε: Φ(ε) = F + 2ε
    assert el.step(0.01) == pytest.approx(F + 0.02)
    assert el.step(0.0100001) == pytest.approx(F + 0.0200002)


# ---------------------------------------------------------------------------------------------
# Scalar and vector paths
# ---------------------------------------------------------------------------------------------
def _law_pair(kind):
    if kind == "coulomb":
        return [Coulomb(f) for f in (5.0, 10.0, 2.0)], Coulomb(np.array([5.0, 10.0, 2.0]))
    if kind == "viscous":
        Fs, Ds = (5.0, 10.0, 2.0), (0.0, 1.5, 3.0)
        return ([CoulombViscous(a, b) for a, b in zip(Fs, Ds)],
                CoulombViscous(np.array(Fs), np.array(Ds)))
    raise AssertionError(kind)


ADMITTANCES = [KarnoppAdmittance, QuinnAdmittance, ViscousRegularisedAdmittance]


@pytest.mark.parametrize("cls", ADMITTANCES)
@pytest.mark.parametrize("kind", ["coulomb", "viscous"])
def test_admittance_scalar_and_vector_paths_agree(cls, kind):
    laws, vlaw = _law_pair(kind)
    Ms, epss, v0s = (1.0, 2.0, 0.5), (1e-3, 1e-2, 5e-2), (0.3, -0.1, 0.0)
    singles = [cls(m, law, T, e, v0=v) for m, law, e, v in zip(Ms, laws, epss, v0s)]
    vec = cls(np.array(Ms), vlaw, T, np.array(epss), v0=np.array(v0s))
    rng = np.random.default_rng(1)
    for hk in rng.uniform(-15.0, 15.0, size=(600, 3)):
        out = vec.step(hk)
        ref = [s.step(float(h)) for s, h in zip(singles, hk)]
        # Same arithmetic in the same order (no transcendental functions): bit-identical.
        assert np.array_equal(out, ref)
        for field, val in zip(type(vec.state)._fields, vec.state):
            assert np.array_equal(val, [getattr(s.state, field) for s in singles]), field


def _impedance_pairs():
    yield (lambda **p: Dahl(p["s0"], p["F"], T),
           dict(s0=(3e4, 1e4, 5e3), F=(10.0, 5.0, 1.0)))
    yield (lambda **p: LuGre(p["s0"], p["s1"], p["s2"], p["mc"], p["ms"], p["vs"], T,
                             gamma=p["g"], f_N=p["fn"]),
           dict(s0=(3e4, 1e4, 5e3), s1=(300.0, 0.0, 50.0), s2=(0.0, 0.5, 1.0),
                mc=(8.0, 1.0, 0.5), ms=(10.0, 1.0, 0.8), vs=(0.01, 1e-3, 0.1),
                g=(2.0, 1.0, 0.7), fn=(1.0, 2.0, 0.5)))
    yield (lambda **p: ElastoPlastic(p["s0"], p["s1"], p["s2"], p["mc"], p["ms"], p["vs"], T,
                                     gamma=p["g"], s_ba=p["sba"], f_N=p["fn"]),
           dict(s0=(3e4, 1e4, 5e3), s1=(300.0, 0.0, 50.0), s2=(0.0, 0.5, 1.0),
                mc=(8.0, 1.0, 0.5), ms=(10.0, 1.0, 0.8), vs=(0.01, 1e-3, 0.1),
                g=(2.0, 1.0, 0.7), sba=(0.9, 0.0, 0.5), fn=(1.0, 2.0, 0.5)))
    yield (lambda **p: ViscousRegularisedImpedance(Stribeck(p["fc"], p["fs"], p["vs"]), T,
                                                   p["eps"]),
           dict(fc=(8.0, 1.0, 0.5), fs=(10.0, 1.0, 0.8), vs=(0.01, 1e-3, 0.1),
                eps=(1e-3, 1e-2, 1e-4)))


@pytest.mark.parametrize("make, params", list(_impedance_pairs()))
def test_impedance_scalar_and_vector_paths_agree(make, params):
    singles = [make(**{k: v[i] for k, v in params.items()}) for i in range(3)]
    vec = make(**{k: np.array(v) for k, v in params.items()})
    rng = np.random.default_rng(2)
    # slow presliding motion and fast sliding, both signs, and exact zeros
    u = np.concatenate([rng.normal(0.0, 2e-3, size=(400, 3)), rng.normal(0.0, 0.5, size=(200, 3)),
                        np.zeros((5, 3))])
    for uk in u:
        out = vec.step(uk)
        ref = [s.step(float(x)) for s, x in zip(singles, uk)]
        # math.exp/expm1/sin vs numpy's may differ in the last bit; the updates are contractive
        # (|e^{-a}| ≤ 1), so such differences do not grow: 1e-12 relative is generous.
        np.testing.assert_allclose(out, ref, rtol=1e-12, atol=1e-12)
        for field, val in zip(type(vec.state)._fields, vec.state):
            np.testing.assert_allclose(val, [getattr(s.state, field) for s in singles],
                                       rtol=1e-12, atol=1e-15, err_msg=field)


def test_scalar_parameters_take_the_shape_of_the_first_input():
    el = LuGre(**LUGRE)
    f = el.step(np.array([1e-3, -1e-3]))
    assert f.shape == (2,) and f[0] == -f[1]
    with pytest.raises(ValueError, match="^u:"):
        el.step(1e-3)  # now a 2-joint element
    el.reset()
    assert isinstance(el.step(1e-3), float)  # reset frees the shape again
    ka = KarnoppAdmittance(M, Coulomb(F), T, 1e-3)
    assert ka.step([1.0, 20.0, -20.0]).shape == (3,)


def test_n_d_contacts_are_rejected():
    with pytest.raises(ValueError, match="^per_joint:"):
        KarnoppAdmittance(M, Coulomb(F), T, 1e-3, per_joint=False)
    with pytest.raises(ValueError, match="^per_joint:"):
        LuGre(**LUGRE, per_joint=False)
    with pytest.raises(ValueError, match="^per_joint:"):
        QuinnAdmittance(M, EllipticCoulomb(np.array([1.0, 2.0])), T, 1e-3)


def test_asymmetric_law_in_karnopp_and_quinn():
    law = AsymmetricFriction(Cp=4.0, Cn=3.0, bp=0.0, bn=0.0, Dp=5.0, Dn=-6.0, dv=0.01)
    ka = KarnoppAdmittance(M, law, T, 1e-3)
    assert ka.step(5.5) == pytest.approx(T * 0.5)  # saturates at Φ(+0) = 5
    ka.reset()
    assert ka.step(-5.5) == 0.0  # inside [Φ(−0), Φ(+0)] = [−6, 5]: f = h
    qa = QuinnAdmittance(M, law, T, 1e-2)
    # q = ε h/6, f = 6 q/ε = h up to one rounding (1 ulp of 5.5 ≈ 9e-16 N → v ≈ 9e-19 m/s)
    assert qa.step(-5.5) == pytest.approx(0.0, abs=1e-17)


# ---------------------------------------------------------------------------------------------
# Validation
# ---------------------------------------------------------------------------------------------
def _karnopp(**kw):
    p = dict(M=M, law=Coulomb(F), dt=T, eps=1e-3)
    p.update(kw)
    return KarnoppAdmittance(**p)


def _quinn(**kw):
    p = dict(M=M, law=Coulomb(F), dt=T, eps=1e-3)
    p.update(kw)
    return QuinnAdmittance(**p)


def _visc(**kw):
    p = dict(M=M, law=Coulomb(F), dt=T, eps=1e-3)
    p.update(kw)
    return ViscousRegularisedAdmittance(**p)


def _visc_imp(**kw):
    p = dict(law=Coulomb(F), dt=T, eps=1e-3)
    p.update(kw)
    return ViscousRegularisedImpedance(**p)


def _dahl(**kw):
    p = dict(sigma0=K, F=F, dt=T)
    p.update(kw)
    return Dahl(**p)


def _lugre(**kw):
    p = dict(LUGRE)
    p.update(kw)
    return LuGre(**p)


def _ep(**kw):
    p = dict(LUGRE)
    p.update(kw)
    return ElastoPlastic(**p)


BAD = [
    (_karnopp, dict(M=0.0), "M"), (_karnopp, dict(M=float("nan")), "M"),
    (_karnopp, dict(dt=-1e-3), "dt"), (_karnopp, dict(dt=[1e-3, 1e-3]), "dt"),
    (_karnopp, dict(eps=0.0), "eps"), (_karnopp, dict(eps=[[1e-3]]), "eps"),
    (_karnopp, dict(v0=math.inf), "v0"), (_karnopp, dict(law="coulomb"), "law"),
    (_karnopp, dict(M=np.ones(2), law=Coulomb(np.ones(3))), "law"),
    (_karnopp, dict(M=np.ones(2), eps=np.full(3, 1e-3)), "eps"),
    (_quinn, dict(M=-1.0), "M"), (_quinn, dict(eps=float("nan")), "eps"),
    (_quinn, dict(law=Coulomb(0.0)), "law"), (_quinn, dict(dt=0.0), "dt"),
    (_visc, dict(eps=-1.0), "eps"), (_visc, dict(M=np.array([])), "M"),
    (_visc_imp, dict(eps=0.0), "eps"), (_visc_imp, dict(law=None), "law"),
    (_visc_imp, dict(dt=float("inf")), "dt"),
    (_dahl, dict(sigma0=0.0), "sigma0"), (_dahl, dict(F=0.0), "F"),
    (_dahl, dict(F=float("nan")), "F"), (_dahl, dict(dt=0.0), "dt"),
    (_dahl, dict(sigma0=np.ones(2), F=np.ones(3)), "F"),
    (_lugre, dict(sigma0=-1.0), "sigma0"), (_lugre, dict(sigma1=-1.0), "sigma1"),
    (_lugre, dict(sigma2=float("nan")), "sigma2"), (_lugre, dict(mu_C=0.0), "mu_C"),
    (_lugre, dict(mu_S=0.0), "mu_S"), (_lugre, dict(v_s=0.0), "v_s"),
    (_lugre, dict(gamma=0.0), "gamma"), (_lugre, dict(f_N=-1.0), "f_N"),
    (_lugre, dict(sigma0=np.full(2, K), mu_S=np.full(3, F)), "mu_S"),
    (_ep, dict(s_ba=1.0), "s_ba"), (_ep, dict(s_ba=-0.1), "s_ba"),
    (_ep, dict(s_ba=np.array([0.5, 0.9]), sigma0=np.full(3, K)), "s_ba"),
    (_ep, dict(v_s=-1.0), "v_s"),
]


@pytest.mark.parametrize("make, kw, name", BAD,
                         ids=[f"{m.__name__}-{n}-{i}" for i, (m, _, n) in enumerate(BAD)])
def test_invalid_parameters_name_the_field(make, kw, name):
    with pytest.raises(ValueError, match=f"^{name}:"):
        make(**kw)


ALL_FACTORIES = [_karnopp, _quinn, _visc, _visc_imp, _dahl, _lugre, _ep]


def _snapshot(el):
    return [np.array(x, copy=True) for x in el.state]


@pytest.mark.parametrize("make", ALL_FACTORIES)
@pytest.mark.parametrize("vector", [False, True])
def test_non_finite_input_is_rejected_and_state_kept(make, vector):
    el = make()
    good = [np.array([3.0, -2e-3]), np.array([1e-3, 0.2])] if vector else [3.0, 1e-3]
    for x in good:
        el.step(x)
    before = _snapshot(el)
    bads = ([np.array([np.nan, 0.0]), np.array([0.0, np.inf]), np.array([1.0, 2.0, 3.0]),
             np.ones((2, 2)), 1.0] if vector else
            [float("nan"), math.inf, -math.inf, np.float64("nan"), np.array([1.0, 2.0]), "x"])
    for bad in bads:
        with pytest.raises(ValueError, match=f"^{el._input_name}:"):
            el.step(bad)
        after = _snapshot(el)
        assert all(np.array_equal(a, b) for a, b in zip(before, after))
    el.step(good[0])  # still usable


@pytest.mark.parametrize("make", ALL_FACTORIES)
def test_reset_restores_the_initial_state(make):
    el = make()
    first = el.step(1e-3)
    start = _snapshot(el)
    for x in (5.0, -0.3, 2e-3):
        el.step(x)
    el.reset()
    assert el.step(1e-3) == first
    assert all(np.array_equal(a, b) for a, b in zip(start, _snapshot(el)))


# ---------------------------------------------------------------------------------------------
# Coupling helpers
# ---------------------------------------------------------------------------------------------
def test_coupling_vector_equals_scalar_runs():
    hh = np.stack([H[:2000], 0.3 * H[:2000]], axis=1)
    Ms = np.array([1.0, 0.5])
    x2, v2, f2 = simulate_mass_on_impedance(LuGre(**LUGRE), Ms, hh, T, v0=np.array([0.0, 1e-3]))
    for j, v0 in enumerate((0.0, 1e-3)):
        x1, v1, f1 = simulate_mass_on_impedance(LuGre(**LUGRE), Ms[j], hh[:, j], T, v0=v0)
        # scalar vs numpy transcendental functions: last-bit differences only (see above)
        np.testing.assert_allclose(v2[:, j], v1, rtol=1e-9, atol=1e-15)
        np.testing.assert_allclose(x2[:, j], x1, rtol=1e-9, atol=1e-15)
        np.testing.assert_allclose(f2[:, j], f1, rtol=1e-9, atol=1e-12)
    xa, va = simulate_admittance(RigidAdmittance(M, Coulomb(F), T), hh)
    assert xa.shape == va.shape == hh.shape


def test_coupling_matches_eq_60_by_hand():
    el, ref = MasslessImpedance(K, B, Coulomb(F), T), MasslessImpedance(K, B, Coulomb(F), T)
    x, v, f = simulate_mass_on_impedance(el, M, H[:300], T)
    vk, xk = 0.0, 0.0
    for k in range(300):
        fk = ref.step(vk)
        vk = vk + T * (H[k] - fk) / M
        xk = xk + T * vk
        assert f[k] == fk and v[k] == vk
        assert x[k] == pytest.approx(xk, rel=1e-12, abs=1e-18)  # cumsum vs running sum


def test_coupling_validation():
    with pytest.raises(ValueError, match="^dt:"):
        simulate_mass_on_impedance(Dahl(K, F, T), M, H[:10], 2 * T)
    with pytest.raises(ValueError, match="^h:"):
        simulate_mass_on_impedance(Dahl(K, F, T), M, [1.0, float("nan")], T)
    with pytest.raises(ValueError, match="^h:"):
        simulate_admittance(RigidAdmittance(M, Coulomb(F), T), np.ones((2, 2, 2)))
    with pytest.raises(ValueError, match="^M:"):
        simulate_mass_on_impedance(Dahl(K, F, T), 0.0, H[:10], T)
    with pytest.raises(ValueError, match="^M:"):
        simulate_mass_on_impedance(Dahl(K, F, T), np.ones(2), H[:10], T)
