"""GearedArm with joint friction (issue 15, item 4): the input-side asymmetric Coulomb + viscous
friction of joint_friction.yaml on top of paper 004's gears (algorithm (69)).

The physical facts asserted: the simulated arm obeys the gear convention the identifier fits,
``τ_u = m q̈ + G(τ_load, v) + τ_f(v)`` (fric_core.arm_identification.joint_friction), in steady
sliding in all four quadrants (1-DOF, the planar 2-link and the 7-DOF arm with gravity), its
static friction holds exactly the interval ``[G(τ_load, v<0) − Cn, G(τ_load, v>0) + Cp]`` (no
creep: q bit-equal over 10 s), above breakaway it accelerates per the formula, it creates no
energy, and its implicit viscosity is stable for any b h / m."""

from pathlib import Path

import numpy as np
import pytest

from fric_core.arm_identification.joint_friction import (JointFriction, JointFrictionSet,
                                                         write_joint_friction)
from fric_core.transmission.dai import asymmetry_from_efficiencies
from fric_core.transmission.geared_arm import (ConstantInertia, CoulombAxproj, GearedArm,
                                               _coulomb_diagonal)
from fric_core.transmission.urdf_dynamics import UrdfDynamics

H = 1e-3
JF = JointFriction(Cp=1.2, Cn=0.8, bp=0.4, bn=0.6, eta_f=0.75, eta_b=0.55)
M1, ROTOR1 = 1.5, 0.6  # 1-DOF: output inertia M, rotor inertia m [kg m^2]
ROTORS7 = [2.0, 2.0, 1.5, 1.5, 0.8, 0.8, 0.5]


def _one_dof(jf=JF, v0=0.0):
    gu, gv = asymmetry_from_efficiencies(jf.eta_f, jf.eta_b)
    return GearedArm(ConstantInertia([[M1]]), gu, gv, ROTOR1, Cp=jf.Cp, Cn=jf.Cn, bp=jf.bp,
                     bn=jf.bn, v0=[v0])


def _friction_set(names, rng):
    """Realistic asymmetric friction and backdrivable gears, per joint (fixed seed)."""
    return JointFrictionSet(model="gear", joints={
        j: JointFriction(Cp=rng.uniform(0.5, 3.0), Cn=rng.uniform(0.5, 3.0),
                         bp=rng.uniform(0.1, 1.0), bn=rng.uniform(0.1, 1.0),
                         eta_f=rng.uniform(0.6, 0.9), eta_b=rng.uniform(0.5, 0.8))
        for j in names})


def _convention(fs, names, load, v):
    """The motor torque of the gear convention at q̈ = 0: G(τ_load, v) + τ_f(v) per joint."""
    return np.array([fs.joints[j].gear(load[i], v[i]) + fs.joints[j].kinetic(v[i])
                     for i, j in enumerate(names)])


def _hold_interval(jf, load):
    """[G(τ_load, v<0) − Cn, G(τ_load, v>0) + Cp]: the actuator torques that keep a joint at
    rest, by the convention (the limits of sliding either way as v → 0)."""
    return jf.gear(load, -1.0) - jf.Cn, jf.gear(load, 1.0) + jf.Cp


@pytest.mark.parametrize("load", [-5.0, 0.0, 5.0])
def test_static_friction_holds_exactly_the_convention_interval(load):
    # From rest, one step: the joint stays at v = 0 exactly iff tau_u lies in the interval.
    # The boundary found by bisection (50 halvings of 200 N m: 2e-13 N m) agrees with the
    # formula to 1e-9 N m (round-off of the closed-form bounds ~1e-15 relative).
    def stuck(tau):
        arm = _one_dof()
        arm.step([tau], H, tau_load=[load])
        return bool(arm.state.stuck[0]) and arm.v[0] == 0.0

    def boundary(inside, outside):
        for _ in range(50):
            mid = 0.5 * (inside + outside)
            inside, outside = (mid, outside) if stuck(mid) else (inside, mid)
        return inside

    lo, hi = _hold_interval(JF, load)
    assert boundary(load, load + 100.0) == pytest.approx(hi, abs=1e-9)
    assert boundary(load, load - 100.0) == pytest.approx(lo, abs=1e-9)
    if load == 0.0:  # no load, no gear friction: the Coulomb pair itself
        assert (lo, hi) == pytest.approx((-JF.Cn, JF.Cp))


@pytest.mark.parametrize("load, v0", [(5.0, 0.7), (-5.0, -0.7), (5.0, -0.7), (-5.0, 0.7)])
def test_one_dof_steady_sliding_obeys_the_gear_convention(load, v0):
    # drive (load * v > 0: tau_load / eta_f) and back-drive (eta_b * tau_load), both directions.
    # Starting at v0 with the convention's torque, the velocity must stay v0 for 1 s: to 1e-12
    # (round-off). Sensitivity: a torque error of 1e-6 N m accelerates the joint by at least
    # 1e-6 / (m + M / eta_b) = 3e-7 rad/s^2, changing v by 3e-7 rad/s in 1 s, 1e5 x the tolerance;
    # a Coulomb level added to the gear's bound instead of before it would be off by
    # |gamma_u| C / (1 -+ gamma_u) ~ 0.2 N m.
    arm = _one_dof(v0=v0)
    tau = _convention(JointFrictionSet({"joint1": JF}), ["joint1"], [load], [v0])
    for _ in range(1000):
        arm.step(tau, H, tau_load=[load])
    assert abs(arm.v[0] - v0) < 1e-12
    off = _one_dof(v0=v0)
    for _ in range(1000):
        off.step(tau + 1e-6, H, tau_load=[load])
    assert off.v[0] - v0 > 2e-7


@pytest.mark.parametrize("name, rotors, steps", [("planar_2link", [1.0, 0.5], 1000),
                                                 ("arm7", ROTORS7, 300)])
def test_arm_steady_sliding_obeys_the_gear_convention_per_joint(name, rotors, steps):
    # Constant joint velocities (q̈ = 0): tau_load = h(q, v) + an external load torque per joint
    # (Pinocchio's bias: Coriolis, centrifugal and, for arm7, gravity), evaluated at each step's
    # q. The convention's torque keeps every joint at its velocity to 1e-12 rad/s over the run,
    # in both quadrants (asserted: loads with tau_load * v of both signs occur).
    rng = np.random.default_rng(15)
    dyn = UrdfDynamics(name)
    fs = _friction_set(dyn.joint_names, rng)
    quadrants = set()
    for sign in (1.0, -1.0):
        v = sign * rng.uniform(0.2, 0.6, dyn.n) * rng.choice([-1.0, 1.0], dyn.n)
        ext = rng.normal(size=dyn.n) * 5.0
        arm = GearedArm.from_joint_friction(dyn, fs, rotors, q0=rng.uniform(-0.5, 0.5, dyn.n),
                                            v0=v, on_ill_posed="raise")
        worst = 0.0
        for _ in range(steps):
            load = dyn.bias(arm.q, v) + ext
            quadrants |= set(np.sign(load * v).tolist())
            arm.step(_convention(fs, dyn.joint_names, load, v), H, tau_load=ext)
            worst = max(worst, float(np.abs(arm.v - v).max()))
        assert worst < 1e-12, worst
    assert {-1.0, 1.0} <= quadrants


def _held_command(fs, names, load, frac, direction):
    """frac of the way from the load to the breakaway torque, up (+1) or down (−1) per joint."""
    out = []
    for i, j in enumerate(names):
        lo, hi = _hold_interval(fs.joints[j], load[i])
        out.append(load[i] + frac * ((hi if direction[i] > 0 else lo) - load[i]))
    return np.array(out)


def test_sub_breakaway_load_holds_the_arm_bit_equal_for_10_s():
    # planar 2-link pushed by a 10 N end-effector force (J^T f = (20, 10) N m at q = 0), the
    # actuators at 90 % of the way to breakaway, joint1 upwards, joint2 downwards: 10 s at 1 kHz,
    # positions bit-equal, velocities exactly 0 (static friction of the implicit step, no creep).
    rng = np.random.default_rng(16)
    dyn = UrdfDynamics("planar_2link", gravity=(0.0, 0.0, 0.0))
    fs = _friction_set(dyn.joint_names, rng)
    arm = GearedArm.from_joint_friction(dyn, fs, [1.0, 0.5], on_ill_posed="raise")
    wrench = np.array([0.0, 10.0, 0.0, 0.0, 0.0, 0.0])
    load = -dyn.jacobian(arm.q).T @ wrench
    tau = _held_command(fs, dyn.joint_names, load, 0.9, [1, -1])
    q0 = arm.q
    for _ in range(10_000):
        arm.step(tau, H, wrench=wrench)
        assert arm.v.tolist() == [0.0, 0.0]
    assert arm.q.tolist() == q0.tolist() and arm.state.stuck.all()


def test_arm7_held_against_gravity_does_not_creep():
    # arm7 in a bent pose, gravity acting: every actuator at 95 % of the way to breakaway
    # (alternating up/down): 2 s, positions bit-equal.
    rng = np.random.default_rng(17)
    dyn = UrdfDynamics("arm7")
    fs = _friction_set(dyn.joint_names, rng)
    q0 = np.array([0.3, 0.8, -0.4, -1.2, 0.5, 0.9, -0.2])
    arm = GearedArm.from_joint_friction(dyn, fs, ROTORS7, q0=q0, on_ill_posed="raise")
    g = dyn.gravity_torque(q0)
    assert np.abs(g[1]) > 10.0  # a real load on the shoulder
    tau = _held_command(fs, dyn.joint_names, g, 0.95, [1, -1, 1, -1, 1, -1, 1])
    for _ in range(2000):
        arm.step(tau, H)
    assert arm.q.tolist() == q0.tolist() and arm.v.tolist() == [0.0] * 7


@pytest.mark.parametrize("load, direction", [(5.0, 1), (-5.0, 1), (5.0, -1), (-5.0, -1)])
def test_above_breakaway_the_joint_accelerates_per_the_formula(load, direction):
    # 0.5 N m beyond breakaway. Per the convention with q̈ ≠ 0, tau_load = M q̈ + load:
    #   drive (load v > 0):      tau = m a + (M a + load)/eta_f + tau_f(v)
    #   back-drive (load v < 0): tau = m a + eta_b (M a + load) + tau_f(v)
    # so a = (tau − G(load) − tau_f(v)) / (m + M/eta_f or m + eta_b M). The implicit step gives
    # it exactly with v the step's end velocity: checked to 1e-9 relative from the 2nd step on
    # (the 1st step leaves rest with the mean of bp, bn).
    lo, hi = _hold_interval(JF, load)
    tau = (hi + 0.5) if direction > 0 else (lo - 0.5)
    arm = _one_dof()
    v = [0.0]
    for _ in range(200):
        v.append(arm.step([tau], H, tau_load=[load])[0])
    v = np.array(v)
    assert np.all(np.sign(v[1:]) == direction)
    drive = load * direction > 0
    inertia = ROTOR1 + (M1 / JF.eta_f if drive else JF.eta_b * M1)
    acc = np.diff(v) / H
    want = (tau - JF.gear(load, direction) - JF.kinetic(v[1:])) / inertia
    np.testing.assert_allclose(acc[1:], want[1:], rtol=1e-9)


def test_one_joint_breaks_away_while_the_other_stays_held():
    # planar 2-link, no external load: joint1 at 90 % of breakaway stays bit-equal while joint2,
    # driven 0.3 N m past its breakaway, accelerates as a 1-DOF joint with its own inertia M_22
    # (joint1 does not move, so q̈_1 = 0 and tau_load,2 = M_22 q̈_2 + h_2, h_2 = 0 here: no
    # load, q̇_1 = 0): a = (tau − Cp − bp v)/(m_2 + M_22/eta_f) — the drive branch, since
    # tau_load,2 = M_22 a > 0 — to 1e-9 relative.
    rng = np.random.default_rng(18)
    dyn = UrdfDynamics("planar_2link", gravity=(0.0, 0.0, 0.0))
    fs = _friction_set(dyn.joint_names, rng)
    arm = GearedArm.from_joint_friction(dyn, fs, [1.0, 0.5], on_ill_posed="raise")
    j1, j2 = (fs.joints[j] for j in dyn.joint_names)
    tau = np.array([0.9 * j1.Cp, j2.Cp + 0.3])
    v2 = [0.0]
    for _ in range(300):
        v2.append(arm.step(tau, H)[1])
        assert arm.q[0] == 0.0
    M22 = dyn.mass_matrix(arm.q)[1, 1]  # constant: M_22 = I_2 (no dependence on q_2)
    acc = np.diff(v2) / H
    want = (tau[1] - j2.Cp - j2.bp * np.array(v2[1:])) / (0.5 + M22 / j2.eta_f)
    np.testing.assert_allclose(acc[1:], want[1:], rtol=1e-9)


def test_friction_creates_no_energy_on_a_coupled_arm():
    # Coupled constant inertia, zero actuator torque and load, random start velocities: the
    # kinetic energy ½ vᵀ M̂ v never grows (friction and the implicit step only dissipate;
    # M̂ constant, so the discrete energy is exact up to round-off 1e-12 relative).
    rng = np.random.default_rng(19)
    M = np.array([[2.0, 0.6, 0.2], [0.6, 1.5, 0.3], [0.2, 0.3, 1.0]])
    fs = _friction_set(["a", "b", "c"], rng)
    m = np.array([0.8, 0.8, 0.8])
    arm = GearedArm.from_joint_friction(ConstantInertia(M, joint_names=["a", "b", "c"]), fs, m,
                                        v0=[1.0, -2.0, 1.5], on_ill_posed="raise")
    Mhat = M + np.diag(m)
    energy = [0.5 * arm.v @ Mhat @ arm.v]
    for _ in range(3000):
        v = arm.step(np.zeros(3), H)
        energy.append(0.5 * v @ Mhat @ v)
    assert np.all(np.diff(energy) <= 1e-12 * energy[0])
    assert arm.v.tolist() == [0.0, 0.0, 0.0]  # Coulomb friction stops it in finite time


def test_implicit_viscosity_is_stable_for_any_b_h_over_m():
    # b h / m = 1000 x 1e-3 / 0.02 = 50 (explicit Euler diverges beyond 2): the velocity decays
    # monotonically to 0 without changing sign.
    jf = JointFriction(Cp=0.0, Cn=0.0, bp=1000.0, bn=1000.0)
    arm = GearedArm(ConstantInertia([[0.01]]), 0.0, 0.0, 0.01, bp=jf.bp, bn=jf.bn, v0=[2.0])
    v = [2.0] + [arm.step([0.0], H)[0] for _ in range(50)]
    assert np.all(np.diff(v) < 0.0) and np.all(np.array(v) >= 0.0)
    assert v[-1] < 1e-50


def test_coulomb_solver_matches_the_closed_form_and_its_complementarity():
    # The Newton solver on diagonal problems equals the closed form (70); on coupled problems
    # its solution satisfies the complementarity conditions (velocity > 0: friction at the upper
    # bound C + |ψ − γ_u C|, < 0: at the lower, 0: between), ψ = ϕ + P f.
    rng = np.random.default_rng(20)
    n = 4
    solver = CoulombAxproj(n)
    n_stuck = n_slide = 0
    for k in range(300):
        C = rng.uniform(0.0, 2.0, n)
        g = rng.uniform(-0.3, 0.3, n) * C
        phi = rng.normal(size=n) * 5.0
        v = rng.normal(size=n) * 0.01
        if k % 2 == 0:
            a = rng.uniform(1e-4, 1e-3, n)
            p = rng.uniform(-0.5, 0.5, n)
            y, f, stuck, *_ = solver.solve(v, np.diag(a), phi, np.diag(p), C, g)
            y2, f2, stuck2 = _coulomb_diagonal(v, a, phi, p, C, g)
            np.testing.assert_allclose(y, y2, rtol=1e-9, atol=1e-15)
            assert stuck.tolist() == stuck2.tolist()
            continue
        L = rng.normal(size=(n, n)) * 0.3 + np.eye(n)
        A = 1e-3 * np.linalg.inv(L @ L.T + 0.5 * np.eye(n))
        P = rng.normal(size=(n, n)) * 0.1
        y, f, stuck, it, conv, res = solver.solve(v, A, phi, P, C, g)
        assert conv
        w = v - y
        psi = phi + P @ f
        hi, lo = C + np.abs(psi - g), -C - np.abs(psi + g)
        scale = 1e-9 * (np.abs(f).max() + 1.0)
        assert np.all(w[stuck] == 0.0)
        assert np.all((f[stuck] <= hi[stuck] + scale) & (f[stuck] >= lo[stuck] - scale))
        up, dn = w > 0, w < 0
        np.testing.assert_allclose(f[up], hi[up], atol=scale)
        np.testing.assert_allclose(f[dn], lo[dn], atol=scale)
        n_stuck += stuck.sum()
        n_slide += (~stuck).sum()
    assert n_stuck > 50 and n_slide > 50


def test_from_joint_friction_reads_the_file_and_names_problems(tmp_path):
    dyn = UrdfDynamics("planar_2link")
    fs = JointFrictionSet(model="gear", joints={
        "joint2": JointFriction(Cp=0.3, Cn=0.2, bp=0.1, bn=0.05, eta_f=0.8, eta_b=0.6),
        "joint1": JointFriction(Cp=0.5, Cn=0.4, bp=0.2, bn=0.3, eta_product=0.5),
        "extra": JointFriction(Cp=0.1, Cn=0.1, bp=0.0, bn=0.0)})
    path = write_joint_friction(tmp_path / "joint_friction.yaml", fs)
    arm = GearedArm.from_joint_friction(dyn, path, 1.0, gamma_u=0.1, gamma_v=0.2)
    # matched by name (file order differs), the extra joint ignored
    assert arm.Cp.tolist() == [0.5, 0.3] and arm.bn.tolist() == [0.3, 0.05]
    gu, gv = asymmetry_from_efficiencies(0.8, 0.6)
    assert arm.gamma_u.tolist() == [0.1, gu] and arm.gamma_v.tolist() == [0.2, gv]
    assert arm.efficiencies_undetermined == ("joint1",)
    eta_f, eta_b = arm.efficiencies
    assert (eta_f[1], eta_b[1]) == pytest.approx((0.8, 0.6))
    again = GearedArm(dyn, 0.0, 0.0, 1.0, damping=0.5, q0=[0.1, 0.2]).with_joint_friction(fs)
    assert again.q.tolist() == [0.1, 0.2] and again.damping.tolist() == [0.5, 0.5]
    assert again.joint_friction and again.Cn.tolist() == [0.4, 0.2]
    with pytest.raises(ValueError, match=r"joint_names: no friction for joint\(s\) \['joint2'\]"):
        GearedArm.from_joint_friction(dyn, JointFrictionSet({"joint1": fs.joints["joint1"]}), 1.0)
    with pytest.raises(ValueError, match="joints.joint1.bn"):
        (tmp_path / "bad.yaml").write_text("joints: {joint1: {Cp: 1, Cn: 1, bp: 0, bn: -0.1}}")
        GearedArm.from_joint_friction(dyn, tmp_path / "bad.yaml", 1.0)
    with pytest.raises(ValueError, match=r"joints.joint1: Cp \+ Cn = -0.5 < 0"):
        (tmp_path / "bad.yaml").write_text("joints: {joint1: {Cp: 1, Cn: -1.5, bp: 0, bn: 0}}")
        GearedArm.from_joint_friction(dyn, tmp_path / "bad.yaml", 1.0)
    with pytest.raises(ValueError, match="Cp: joint joint1: .*gamma_u"):
        GearedArm(dyn, [1.5, 0.0], 0.0, 1.0, Cp=0.5)
    with pytest.raises(ValueError, match="bn: must be >= 0"):
        GearedArm(dyn, 0.0, 0.0, 1.0, bn=-0.1)


def test_hard_end_stop_with_joint_friction_lands_exactly_and_holds():
    # joint2 driven by 20 N m into its URDF limit with the demo's true friction: it lands exactly
    # on the limit (never past it), rests there at v = 0, and stays when the command ends.
    dyn = UrdfDynamics("planar_2link", gravity=(0.0, 0.0, 0.0))
    arm = GearedArm(dyn, 0.0, 0.0, [0.5, 0.2], lower=dyn.lower, upper=dyn.upper,
                    q0=[0.0, 3.0]).with_joint_friction(
        Path(__file__).resolve().parents[2] / "config" / "planar_2link_true_friction.yaml")
    q2 = []
    for _ in range(1500):
        arm.step([0.0, 20.0], H)
        q2.append(arm.q[1])
    assert max(q2) == dyn.upper[1] and q2[-1] == dyn.upper[1] and arm.stop_unconverged == 0
    for _ in range(300):
        arm.step([0.0, 0.0], H)
    assert arm.q.tolist() == [0.0, dyn.upper[1]] and arm.v.tolist() == [0.0, 0.0]


@pytest.mark.parametrize("name, rotors", [("arm7", [0.4, 0.4, 0.2, 0.2, 0.1, 0.05, 0.05]),
                                          ("planar_2link", [0.5, 0.2])])
def test_true_friction_configs_are_asymmetric_backdrivable_and_well_posed(name, rotors):
    # config/<arm>_true_friction.yaml with the rotor inertias of config/arm_friction_<arm>.yaml:
    # every joint asymmetric (Cp != Cn, bp != bn), efficiencies in the demo's ranges, every gear
    # back-drivable (|gamma_v| < 1), and sigma_max(P) < 1 (57) over 200 random poses.
    from fric_core.arm_identification.joint_friction import read_joint_friction
    from fric_nodes.builders import well_posedness

    root = Path(__file__).resolve().parents[2] / "config"
    fs = read_joint_friction(root / f"{name}_true_friction.yaml")
    params = root / f"arm_friction_{name}.yaml"
    if params.exists():
        import yaml
        sim = yaml.safe_load(params.read_text())["transmission_sim"]["ros__parameters"]
        rotors = sim.get("rotor_inertia", rotors)
    dyn = UrdfDynamics(name)
    arm = GearedArm.from_joint_friction(dyn, fs, rotors)
    for j, e in zip(dyn.joint_names, fs.for_joints(dyn.joint_names)):
        assert e.Cp != e.Cn and e.bp != e.bn, j
        assert 0.6 <= e.eta_f <= 0.9 and 0.4 <= e.eta_b <= 0.8, j
        assert e.eta_product == pytest.approx(e.eta_f * e.eta_b), j
    assert arm.backdrivable.all() and arm.forward_drivable.all()
    rng = np.random.default_rng(21)
    worst = max(well_posedness(arm, rng.uniform(dyn.lower, dyn.upper))[0] for _ in range(200))
    assert worst < 0.8
