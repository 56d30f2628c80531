"""Single components against closed-form behaviour: Dahl (11), LuGre (12), the n-D friction
element, I_fricKN (23)/(24) in 2-D and with a law, the spring-damper (10), the external force
at the RK4 stage times (21), the penalty joint's helpers."""

import math

import numpy as np
import pytest

from fric_core.laws import CoulombViscous
from fric_core.modular import (BodyFrame, BodyPoint, Coordinates, DahlImpedance, ExternalForce,
                               FixedFrame, FrictionImpedance, LuGreImpedance, ModularSystem,
                               PenaltyFrictionContact, PenaltyJoint, PointMass, RigidBody,
                               SpringDamper, Stack, simulate)
from fric_core.modular._vec import quat_from_axis_angle


def _block(friction, push, M=1.0, n=1):
    s = ModularSystem().add_admittance("m", PointMass(M))
    s.add_impedance("push", ExternalForce(push, n=3), Coordinates("m"))
    s.add_impedance("f", friction, Coordinates("m", list(range(n)) if n > 1 else 0))
    return s.build()


@pytest.mark.parametrize("friction", [DahlImpedance(K=1e3, F=1.0),
                                      LuGreImpedance(K=1e3, B=5.0, Fc=1.0, Fs=1.5, vs=0.05,
                                                     D=0.4)])
def test_conventional_models_slide_at_their_kinetic_level(friction):
    # steady sliding at v: Dahl f → F; LuGre f → g(v) K e_ss + D v = Fc + (Fs−Fc)e^{−(v/vs)²} + D v
    m = _block(friction, lambda t: (3.0, 0.0, 0.0))
    tr = simulate(m, m.initial_state(m=PointMass.state(v=(1.0, 0.0, 0.0))), 1e-4, 30000)
    v = tr.x[-1, 3]
    a = (tr.x[-1, 3] - tr.x[-2, 3]) / 1e-4
    f = m.forces(tr.x[-1], 3.0, 1e-4)["f"][0]
    if isinstance(friction, DahlImpedance):
        assert -f == pytest.approx(1.0, rel=1e-6)
        assert a == pytest.approx(2.0, rel=1e-5)
    else:
        expect = 1.0 + 0.5 * math.exp(-(v / 0.05) ** 2) + 0.4 * v
        assert -f == pytest.approx(expect, rel=1e-6)
        # M v̇ = 3 − 1 − 0.4 v (the Stribeck term is e^{−400} at v ≥ 1): v = 5 − 4 e^{−0.4 t},
        # less the start-up impulse of the bristle damping while the bristles load from e = 0,
        # ≤ B Fs/K = 7.5e-3 N s (decayed by e^{−1.2} by t = 3 s): tolerance 3e-3 m/s
        assert v == pytest.approx(5.0 - 4.0 * math.exp(-0.4 * 3.0), abs=3e-3)


@pytest.mark.parametrize("kind", ["dahl", "lugre", "kikuuwe"])
def test_drift_under_an_oscillating_load_below_breakaway(kind):
    # The load oscillates between 0.1 F and 0.9 F (faded in over 0.5 s, and 20 rad/s is well
    # below the stick resonance √(K/M) = 100 rad/s: no overshoot past F): Dahl and LuGre creep
    # forward every cycle (their deflection rate |v| e K/F never vanishes); I_fricK's massless
    # object stays put.
    friction = {"dahl": DahlImpedance(K=1e4, F=1.0),
                "lugre": LuGreImpedance(K=1e4, B=100.0, Fc=1.0),
                "kikuuwe": FrictionImpedance(K=1e4, B=100.0, F=1.0)}[kind]
    m = _block(friction, lambda t: ((0.5 + 0.4 * math.sin(20.0 * t)) * min(1.0, 2.0 * t),
                                    0.0, 0.0))
    tr = simulate(m, m.initial_state(m=PointMass.state()), 1e-3, 6000, every=10)
    t, p = tr.t, tr.x[:, 0]
    period = 2 * math.pi / 20.0
    means = [p[(t >= s) & (t < s + period)].mean() for s in (1.0, 3.0, 5.0 - period)]
    if kind == "kikuuwe":
        anchor = p - tr.x[:, m.slice("f")][:, 0]
        assert np.ptp(anchor) < 1e-13
        assert np.max(np.abs(p)) <= 0.9 / 1e4 * 1.05
    else:
        assert means[0] < means[1] < means[2]
        assert means[2] - means[1] > 0.3 * (means[1] - means[0])   # not settling
        assert means[2] - means[0] > 10 * 0.8 / 1e4                  # ≫ the elastic swing


def test_isotropic_planar_friction_opposes_the_velocity():
    # n = 2 with a scalar law: gsat on the vector (the paper's multidimensional sgn (18)).
    # A mass sliding diagonally decelerates along its velocity at F/M and stops without
    # veering; pushed by a constant force below F in another direction it holds exactly.
    m = _block(FrictionImpedance(K=1e4, B=50.0, F=2.0, n=2), lambda t: (0.0, 0.0, 0.0), n=2)
    x0 = m.initial_state(m=PointMass.state(v=(3.0, 4.0, 0.0)))
    tr = simulate(m, x0, 1e-3, 3000, every=5)
    v = tr.x[:, 3:5]
    moving = np.linalg.norm(v, axis=1) > 0.1
    cosines = (v[moving] @ np.array([3.0, 4.0])) / (5.0 * np.linalg.norm(v[moving], axis=1))
    assert np.all(cosines > 1.0 - 1e-12)
    t_stop = tr.t[np.argmax(np.linalg.norm(v, axis=1) < 1e-6)]
    assert t_stop == pytest.approx(5.0 / 2.0, abs=0.01)   # |v0| / (F/M)
    held = _block(FrictionImpedance(K=1e4, B=200.0, F=2.0, n=2),   # ζ = 1: no overshoot
                  lambda t: (1.2 * min(1.0, t), -1.5 * math.sin(t), 0.0), n=2)  # |push| < 1.92
    tr = simulate(held, held.initial_state(m=PointMass.state()), 1e-3, 3000)
    anchor = tr.x[:, 0:2] - tr.x[:, held.slice("f")]
    assert np.max(np.ptp(anchor, axis=0)) < 1e-13


def test_contact_with_a_viscous_law_and_2d_sliding_direction():
    # A sphere-less point on the plane: a heavy point mass resting on the contact, sliding
    # along (1, 1)/√2 with a law whose levels are friction coefficients: μ = 0.2 plus viscous
    # 0.1 s/m per unit normal force. Deceleration = g (0.2 + 0.1 |v|) along the velocity.
    M, g, K = 2.0, 9.81, 1e6
    s = ModularSystem().add_admittance("b", RigidBody(M, [0.1, 0.1, 0.1], gravity=(0, 0, -g)))
    s.add_impedance("c", PenaltyFrictionContact(K=K, B=2 * math.sqrt(K * M),
                                                law=CoulombViscous(0.2, 0.1)),
                    BodyPoint("b", (0.0, 0.0, -0.1), frame="world"))
    m = s.build()
    v0 = np.array([1.0, 1.0, 0.0]) / math.sqrt(2.0)
    x0 = m.initial_state(b=RigidBody.state(p=(0, 0, 0.1 - M * g / K), v=2.0 * v0))
    tr = simulate(m, x0, 1e-4, 2000, every=100)
    # angular velocity appears (friction acts below the centre): use the centre's velocity
    # only to check the direction, and the closed form of the point-contact tangential force
    f = m.forces(tr.x[5], tr.t[5], 1e-4)["c"]
    vc = m.impedance_input(tr.x[5], "c")[3:6]
    speed = math.hypot(vc[0], vc[1])
    assert f[2] == pytest.approx(M * g, rel=1e-3)
    ft = f[:2]
    assert np.allclose(ft / np.linalg.norm(ft), -vc[:2] / speed, atol=1e-9)
    assert np.linalg.norm(ft) == pytest.approx(f[2] * (0.2 + 0.1 * speed), rel=2e-3)


def test_external_force_is_evaluated_at_the_stage_times():
    # (21b): stage r evaluates at kT + T_{r−1} with {T_0..T_3} = {0, T/2, T/2, T}: the force
    # f(t) = t on a unit mass from rest then integrates exactly (v = t²/2 is a polynomial of
    # degree 2 ≤ 4), in one step.
    m = ModularSystem().add_admittance("m", PointMass(1.0))
    seen = []

    def push(t):
        seen.append(t)
        return (t, 0.0, 0.0)

    m.add_impedance("push", ExternalForce(push, n=3), Coordinates("m"))
    model = m.build()
    seen.clear()
    x = simulate(model, model.initial_state(m=PointMass.state()), 0.5, 1, t0=1.0).x[-1]
    assert seen == [1.0, 1.25, 1.25, 1.5]
    assert x[3] == pytest.approx(0.5 * (1.5 ** 2 - 1.0), abs=1e-15)
    assert x[0] == pytest.approx((1.5 ** 3 - 1.0) / 6.0 - 0.5 * 1.0 * 0.5, abs=1e-15)


def test_spring_damper_per_coordinate_parameters():
    k = SpringDamper(K=[1.0, 2.0, 3.0], B=0.5, n=3, rest=[0.1, 0.0, -0.1])
    w = np.zeros(3)
    k.evaluate(np.array([1.0, 1.0, 1.0, 2.0, 0.0, -2.0]), np.zeros(0), 0.0, 0.1, w, np.zeros(0))
    assert np.allclose(w, [-(0.9 + 1.0), -2.0, -(3.3 - 1.0)])


def test_penalty_joint_angle_and_reaction_balance():
    j = PenaltyJoint(1e4, 10.0, 10.0, 0.1, K=100.0, B=1.0, F=0.5)
    s = ModularSystem().add_admittance("b", RigidBody(1.0, [0.01, 0.1, 0.1]))
    s.add_impedance("j", j, Stack(FixedFrame(), BodyFrame("b", (-0.5, 0.0, 0.0))))
    m = s.build()
    q = quat_from_axis_angle((0, 0, 1), 0.7)
    x = m.initial_state(b=RigidBody.state(p=(0.5 * math.cos(0.7), 0.5 * math.sin(0.7), 0.0),
                                          q=q, omega=(0.0, 0.3, 2.0)))
    xin = m.impedance_input(x, "j")
    assert j.angle(xin) == pytest.approx(0.7, abs=1e-12)
    w = m.forces(x, 0.0, 1e-3)["j"]
    assert np.allclose(w[:6], -w[6:], atol=0.0)     # equal and opposite wrenches


@pytest.mark.parametrize("which", ["closed", "urdf"])
def test_arm_tip_spring_through_the_jacobian(which):
    # ArmPoint: motion [p(θ), J θ̇], force Jᵀ f (13). A spring from the tip of the planar arm to
    # a fixed point. Without damping the total energy (arm kinetic + spring) is conserved by
    # the exact flow; RK4 at ωT ≈ 0.01 keeps it to 1e-8 relative over 1 s only if the Ψ map
    # is the transpose of the Φ map (any mismatch injects power). With damping the tip comes
    # to rest at the anchor (a reachable point, no other force).
    from fric_core.transmission.urdf_dynamics import UrdfDynamics
    from fric_core.modular import ArmPoint, FixedPoint, PlanarTwoLink, Relative, UrdfArm
    if which == "urdf":
        arm = UrdfArm(UrdfDynamics("planar_2link", gravity=(0.0, 0.0, 0.0)))
    else:
        arm = PlanarTwoLink(masses=(1.0, 1.0), lengths=(1.0, 1.0), com=(1.0, 1.0),
                            inertia=(0.0, 0.0))
    anchor = (1.2, 0.9, 0.0)
    for B, t_end in ((0.0, 1.0), (20.0, 6.0)):
        s = ModularSystem().add_admittance("arm", arm)
        s.add_impedance("spring", SpringDamper(100.0, B, n=3),
                        Relative(ArmPoint("arm"), FixedPoint(anchor)))
        m = s.build()
        x0 = m.initial_state(arm=[0.3, 0.8, 0.0, 0.0])
        tr = simulate(m, x0, 1e-3, int(t_end / 1e-3), every=100)
        if B == 0.0:
            E = [m.energy(x) for x in tr.x]
            assert np.ptp(E) < 1e-8 * E[0]
        else:
            tip, _ = arm.tip_kinematics(tr.x[-1, :2])
            assert np.allclose(tip, anchor, atol=1e-6)


def test_penalty_joint_bending_stiffness_holds_a_rod_against_gravity():
    # A 1 m rod on a z-axis penalty joint at its end, gravity along −z (along the joint axis),
    # pointing along yaw ψ = 0.6 rad (so both horizontal torque components are exercised):
    # only the bending terms −K_rot (a_A × a_B) − B_rot (Δω − (a_A·Δω) a_A) hold it up. Static
    # equilibrium of the continuous model: the joint force is m g (vertical) at the lever
    # c cos θ from the centre of mass, so K_rot sin θ = m g c cos θ, tan θ = m g c / K_rot
    # exactly (the linear spring's sag m g / K_lin moves the rod, not the lever). B_rot is the
    # critical damping 2√(K_rot I_joint) of the bending mode (ω = √(K_rot/I_joint) = 55 rad/s),
    # so after 1 s the transient is ~(1 + ωt) e^{−ωt} ≈ 1e-22: what is left is rounding.
    # Tolerance 1e-9 relative: far above rounding, far below the 8e-6 by which the small-angle
    # m g c / K_rot differs — and a wrong sign of either bending term makes the rod fall over
    # (K_rot) or ring undamped (B_rot), off by O(1).
    from fric_core.modular._vec import quat_matrix
    M, L, c, g, K_rot, K_lin = 1.0, 1.0, 0.5, 9.81, 1e3, 1e6
    rod = RigidBody.rod(M, L, 0.1, gravity=(0.0, 0.0, -g))
    I_joint = rod.inertia[1, 1] + M * c * c
    joint = PenaltyJoint(K_lin, 200.0, K_rot, 2.0 * math.sqrt(K_rot * I_joint),
                         K=5000.0, B=1.0, F=0.5)
    s = ModularSystem().add_admittance("rod", rod)
    s.add_impedance("j", joint, Stack(FixedFrame(), BodyFrame("rod", (-c, 0.0, 0.0))))
    m = s.build()
    # T = 2e-4: the stiffest rates are the rod turning about its centre against K_lin at lever
    # c, √(K_lin c²/I_cm) = 1710 rad/s, ωT = 0.34, and B_rot damping the spin about the rod's
    # own axis (I_axial = 0.005 kg m²), B_rot T / I_axial = 1.5: both inside RK4's ≈ 2.7
    psi = 0.6
    x0 = RigidBody.state(p=(c * math.cos(psi), c * math.sin(psi), 0.0),
                         q=quat_from_axis_angle((0, 0, 1), psi))
    tr = simulate(m, m.initial_state(rod=x0), 2e-4, 5000, every=5000)
    x = tr.x[-1]
    ex = quat_matrix(*x[6:10])[:, 0]                   # the rod's axis in the world
    theta = math.atan2(-ex[2], math.hypot(ex[0], ex[1]))   # > 0: the free end dips
    assert theta == pytest.approx(math.atan(M * g * c / K_rot), rel=1e-9)
    # it stays in its vertical plane (no yaw: nothing drives the joint's free rotation)
    assert abs(ex[0] * math.sin(psi) - ex[1] * math.cos(psi)) < 1e-12
    xin = m.impedance_input(x, "j")
    assert np.allclose(xin[13:16] - xin[0:3], [0.0, 0.0, -M * g / K_lin],
                       rtol=0, atol=1e-9 * M * g / K_lin)


def _gsat(X, x):
    n = float(np.linalg.norm(x))
    return x if n <= X else X * x / n


def test_euler_through_the_contact_is_the_papers_discrete_contact_23():
    # (24) under forward Euler with τ = T, e(k) = e(k−1) + T ė(k), is (23) literally:
    #   f_z = −K p_z − B v_z (p_z < 0), f̂_t = (B + TK) v_t + K e(k−1), f_t = gsat(μ f_z, f̂_t),
    #   e(k) = (B e(k−1) + T f_t) / (B + TK),   and the force on the point is [−f_t, f_z].
    # A random walk of contact motions (penetrating, sliding and sticking, and off the surface:
    # f_z = 0, f_t = 0) in, the same forces and states out to rounding. The walk keeps
    # −K p_z − B v_z ≥ 0 where p_z < 0 (where it is not, the paper's f_z < 0 would make gsat's
    # level negative; the component clips it, tested below).
    K, B, mu, T = 1e4, 30.0, 0.4, 1e-3
    contact = PenaltyFrictionContact(K=K, B=B, mu=mu)
    rng = np.random.default_rng(7)
    y, yd, w = np.zeros(2), np.zeros(2), np.zeros(3)
    e_ref = np.zeros(2)
    n_stick = n_slip = n_off = 0
    for _ in range(600):
        pz = rng.uniform(-2e-3, 5e-4)
        vz = rng.uniform(-0.05, 0.05)
        if pz < 0.0:
            vz = min(vz, -K * pz / B)
        vt = rng.normal(0.0, 0.05, 2)
        contact.evaluate(np.array([0.3, -0.2, pz, vt[0], vt[1], vz]), y, 0.0, T, w, yd)
        y += T * yd
        fz = -K * pz - B * vz if pz < 0.0 else 0.0
        f_hat = (B + T * K) * vt + K * e_ref
        ft = _gsat(mu * fz, f_hat)
        e_ref = (B * e_ref + T * ft) / (B + T * K)
        assert np.allclose(w, [-ft[0], -ft[1], fz], rtol=1e-12, atol=1e-12)
        assert np.allclose(y, e_ref, rtol=1e-12, atol=1e-15)
        if fz == 0.0:
            n_off += 1
        elif np.linalg.norm(f_hat) > mu * fz:
            n_slip += 1
        else:
            n_stick += 1
    assert min(n_stick, n_slip, n_off) > 20      # every branch of (23) was exercised


def test_contact_holds_a_point_mass_under_a_tangential_load_below_mu_m_g():
    # A 2 kg point mass resting on the plane (penetration M g / K), a 2-D tangential load of
    # at most 0.67 μ M g (< μ f_z): it must stick. While the element sticks (24) gives ė = v_t
    # exactly, so the anchor p_t − e does not move: only rounding (1e-19 m measured; 1e-12 m
    # allows 1e-16 per step over 5000 steps on |p| ~ 1e-4 m with margin); √(K/M) T = 0.22. The
    # mass moves only elastically, |p_t| ≤ load/K
    # (quasi-static: 3 rad/s ≪ √(K/M) = 224 rad/s, amplification 1.0002; measured 1.0002 ×
    # max|load|/K with max|load| ≤ 0.67 μMg; 5 % margin for the lightly damped start-up).
    M, g, K, B, mu = 2.0, 9.81, 1e5, 20.0, 0.5
    s = ModularSystem().add_admittance("b", PointMass(M, gravity=(0.0, 0.0, -g)))
    s.add_impedance("c", PenaltyFrictionContact(K=K, B=B, mu=mu), Coordinates("b"))
    s.add_impedance("push", ExternalForce(
        lambda t: (0.6 * mu * M * g * math.sin(3 * t) * min(1.0, t),
                   0.3 * mu * M * g * math.cos(2 * t) * min(1.0, t), 0.0), n=3),
        Coordinates("b"))
    m = s.build()
    x0 = m.initial_state(b=PointMass.state(p=(0.0, 0.0, -M * g / K)))
    tr = simulate(m, x0, 1e-3, 5000)
    anchor = tr.x[:, 0:2] - tr.x[:, m.slice("c")]
    assert np.max(np.ptp(anchor, axis=0)) < 1e-12
    assert np.max(np.linalg.norm(tr.x[:, 0:2], axis=1)) <= (1.05 * math.hypot(0.6, 0.3) * mu
                                                           * M * g / K)


def test_contact_lifting_off_never_pulls_and_friction_stays_in_the_cone():
    # A point mass pressed 2 mm into a stiff, well-damped contact and released while sliding:
    # it springs off. Near the end of the rebound −K p_z − B v_z < 0 while still p_z < 0; a
    # penalty contact cannot pull, so f_z is clipped at 0 there, and the friction must stay in
    # the cone |f_t| ≤ μ f_z (gsat with a negative level would push the point along its
    # sliding direction). Checked at every sample, with τ = T.
    M, K, B, mu, T = 0.5, 1e5, 300.0, 0.3, 1e-5
    s = ModularSystem().add_admittance("b", PointMass(M))
    contact = PenaltyFrictionContact(K=K, B=B, mu=mu)
    s.add_impedance("c", contact, Coordinates("b"))
    m = s.build()
    x0 = m.initial_state(b=PointMass.state(p=(0.0, 0.0, -2e-3), v=(1.0, 0.5, 0.0)))
    tr = simulate(m, x0, T, 1000)
    clipped = 0
    for x in tr.x:
        f = m.forces(x, 0.0, T)["c"]
        assert f[2] >= 0.0
        assert math.hypot(f[0], f[1]) <= mu * f[2] * (1.0 + 1e-12)
        clipped += x[2] < 0.0 and -K * x[2] - B * x[5] < 0.0
    assert clipped > 5
    assert tr.x[-1, 2] > 0.0 and tr.x[-1, 5] > 0.0      # it left the surface
