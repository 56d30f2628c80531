"""fric_core.transmission.geared_arm (algorithm 69 of paper 004) and urdf_dynamics (Pinocchio):
reduction to the 1-DOF algorithm (44), energy, static holding of self-locking joints, URDF
dynamics against closed forms, bad inputs; the Fig. 9 and Figs. 11-12 reproductions run."""

import importlib
import math
import sys
import warnings
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from fric_core.transmission.geared_arm import ConstantInertia, GearedArm
from fric_core.transmission.urdf_dynamics import UrdfDynamics, UrdfError, bundled_urdf
from fric_core.transmission.projection import AxprojSolver
from fric_core.transmission import IllPosedWarning, Transmission

H = 1e-3
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
ROTORS7 = [2.0, 2.0, 1.5, 1.5, 0.8, 0.8, 0.5]


def test_one_joint_arm_reduces_to_algorithm_44():
    # n = 1: M̂ = m + M, P = ρ̂ (29), ϕ and v* of (69) are those of (44); the load torque plays
    # f_v. Same velocities to round-off (1e-12 relative) and the same stuck steps, over random
    # forces that alternate stick and slip, for a back-drivable and a self-locking gear.
    rng = np.random.default_rng(20)
    for gu, gv, m, M in ((0.2, 0.5, 1.0, 1.0), (0.2, 1.05, 1.0, 1.0), (0.1, 0.3, 0.4, 2.0)):
        tr = Transmission(gu, gv, m, M)
        arm = GearedArm(ConstantInertia([[M]]), gu, gv, m)
        solver = AxprojSolver(1)
        n_stuck = 0
        for _ in range(600):
            f_u, f_v = rng.normal(size=2) * 30.0
            v_prev = tr.v
            v1 = tr.step(f_u, f_v, H)
            v2 = arm.step([f_u], H, tau_load=[f_v])[0]
            assert v2 == pytest.approx(v1, rel=1e-12, abs=1e-15)
            assert arm.state.stuck[0] == tr.state.stuck
            n_stuck += tr.state.stuck
            # the general Newton solver on the same n = 1 problem of (69)
            v_star = v_prev + H * (f_u - f_v) / (m + M)
            phi = gu * f_u + gv * f_v - tr.rho_hat * (f_u - f_v)
            r = solver.solve(np.array([v_star]), np.array([[H / (m + M)]]), np.array([phi]),
                             np.array([[tr.rho_hat]]))
            assert v_star - r.y[0] == pytest.approx(v1, rel=1e-10, abs=1e-14)
        assert 10 <= n_stuck <= 590  # both stick and slip were exercised


def test_decoupled_arm_is_a_set_of_independent_transmissions():
    # A diagonal inertia decouples the joints: each is the 1-DOF DAI (14) with M = M_ii.
    rng = np.random.default_rng(21)
    Mii, gu, gv, m = [0.5, 1.0, 2.0], [0.1, 0.2, 0.3], [0.4, 1.2, 0.8], [1.0, 0.5, 2.0]
    arm = GearedArm(ConstantInertia(np.diag(Mii)), gu, gv, m)
    trs = [Transmission(*p) for p in zip(gu, gv, m, Mii)]
    for _ in range(1000):
        f_u, f_v = rng.normal(size=(2, 3)) * 20.0
        v = arm.step(f_u, H, tau_load=f_v)
        for i, tr in enumerate(trs):
            assert v[i] == pytest.approx(tr.step(f_u[i], f_v[i], H), rel=1e-10, abs=1e-14)
            assert arm.state.stuck[i] == tr.state.stuck


def test_energy_is_not_created_with_coupled_inertia():
    # M̂ (v_k − v_{k−1}) = h (τ_α − f) with f_i v_k,i >= 0, so with constant M̂
    # ½ v_kᵀM̂v_k − ½ v_{k−1}ᵀM̂v_{k−1} <= h τ_α·v_k: no energy from the transmissions.
    # Allowance: 1e-10 of the step's kinetic energy scale (round-off of the linear solves).
    rng = np.random.default_rng(22)
    for _ in range(5):
        n = 4
        X = rng.normal(size=(n, n))
        Mh = X @ X.T * 0.3 + 0.1 * np.eye(n)
        m = rng.uniform(0.3, 1.0, n)
        arm = GearedArm(ConstantInertia(Mh), rng.uniform(0, 0.4, n), rng.uniform(0, 1.2, n), m,
                        on_ill_posed="ignore")
        Mhat = Mh + np.diag(m)
        v = arm.v
        for _ in range(400):
            tau_u, load = rng.normal(size=(2, n)) * 10.0
            v_new = arm.step(tau_u, H, tau_load=load)
            st = arm.state
            assert st.converged
            assert np.all(st.friction * v_new >= -1e-12 * np.abs(st.friction).max())
            dE = 0.5 * (v_new @ Mhat @ v_new - v @ Mhat @ v)
            work = H * (tau_u - st.tau_v) @ v_new
            assert dE <= work + 1e-10 * (0.5 * v @ Mhat @ v + abs(work) + 1e-12)
            v = v_new


def test_pinocchio_arm_energy_passive():
    # Passive planar 2-link, no gravity: frictionless, the semi-implicit step (explicit Coriolis)
    # keeps T = ½ q̇ᵀM̂q̇ within 0.1% over 1 s (an O(h) drift); with self-locking joints T never
    # grows; with γ_v = 0.3 it falls below 90% in 1 s (the friction dissipates; 85% observed).
    dyn = UrdfDynamics("planar_2link", gravity=(0.0, 0.0, 0.0))

    def energy(arm):
        M, _, _ = dyn.terms(arm.q, arm.v)
        return 0.5 * arm.v @ (M + np.eye(2)) @ arm.v

    for gu, gv in ((0.0, 0.0), (0.1, 0.3), (0.1, 1.1)):
        arm = GearedArm(dyn, gu, gv, 1.0, q0=[0.3, 1.0], v0=[2.0, -3.0])
        e0, es = energy(arm), []
        for _ in range(1000):
            arm.step([0.0, 0.0], H)
            es.append(energy(arm))
        es = np.array(es)
        if gv == 0.0:
            assert np.max(np.abs(es / e0 - 1)) < 1e-3
        elif gv > 1:
            assert np.all(np.diff(np.r_[e0, es]) <= 1e-12 * e0)
        else:
            assert es[-1] < 0.9 * e0


def _arm7(gamma_v, **kw):
    return GearedArm(UrdfDynamics("arm7"), 0.1, gamma_v, ROTORS7, **kw)


def test_self_locking_arm_holds_its_pose_under_gravity_and_a_wrench():
    # γ_v = 1.2 at every joint: motors off (τ_u = 0), gravity on, a 50 N push: the arm stays
    # exactly still (v == 0.0, q unchanged), and the stuck state is (48) with q̈ = 0:
    # λ = [γ_u]τ_u + [γ_v]τ_v and friction = τ_u − τ_v with |friction_i| <= |λ_i|.
    q0 = [0.2, 0.6, -0.3, -1.1, 0.4, 0.9, 0.1]
    arm = _arm7(1.2, q0=q0)
    assert not arm.backdrivable.any() and arm.forward_drivable.all()
    assert np.allclose(arm.efficiencies[1], (1 - 1.2) / 1.1)
    wrench = np.array([30.0, -20.0, -50.0, 1.0, 0.0, 2.0])
    for k in range(300):
        v = arm.step(np.zeros(7), H, wrench=wrench if k >= 150 else None)
        st = arm.state
        assert np.all(v == 0.0) and np.all(st.stuck) and st.well_posed
        lam23 = 1.2 * st.tau_v  # γ_u τ_u = 0
        assert np.allclose(st.lam, lam23, rtol=1e-9, atol=1e-9 * np.abs(lam23).max())
        assert np.allclose(st.friction, -st.tau_v, rtol=1e-9, atol=1e-9 * np.abs(lam23).max())
        # joint 7 carries round-off-level torques (~1e-19 N m): an absolute allowance of 1e-9
        # of the largest internal force covers them
        assert np.all(np.abs(st.friction) <= np.abs(st.lam) + 1e-9 * np.abs(st.lam).max())
    assert np.array_equal(arm.q, np.array(q0))
    # the same arm with back-drivable gears falls under gravity
    soft = _arm7(0.3, q0=q0)
    for _ in range(300):
        soft.step(np.zeros(7), H)
    assert np.max(np.abs(soft.q - q0)) > 1e-3
    # forward-drivable: the self-locking arm follows an actuator torque on joint 1
    tau = np.zeros(7)
    tau[0] = 30.0
    for _ in range(100):
        arm.step(tau, H)
    assert arm.q[0] > q0[0] + 1e-4 and np.all(arm.q[1:] == np.array(q0[1:]))


def test_from_transmissions_worm_gear_joints():
    # a self-locking worm (γ_v ≈ 1.5) with a motor of 2e-3 kg m² on the worm shaft: referred to
    # the joint (κ ≈ 72) the rotor inertia m ≈ 10 kg m² dominates and (57) holds
    worm = Transmission.worm_gear(0.01, 0.05, math.radians(4), 0.1, 2e-3, 0.05)
    assert not worm.backdrivable
    dyn = UrdfDynamics("planar_2link")  # gravity along −z: no torque on the planar joints
    arm = GearedArm.from_transmissions(dyn, {"joint1": worm, "joint2": worm}, q0=[0.1, 0.2])
    assert np.allclose(arm.m, worm.m) and np.allclose(arm.m_v, worm.M)
    for _ in range(100):
        assert np.all(arm.step([0.0, 0.0], H, wrench=[0.0, 80.0, 0.0, 0.0, 0.0, 0.0]) == 0.0)
        assert arm.state.well_posed
    with pytest.raises(ValueError, match="joint3"):
        GearedArm.from_transmissions(dyn, {"joint1": worm, "joint3": worm})


def test_planar_2link_dynamics_match_closed_forms():
    # Point masses m1 = m2 = 1 kg at the link ends, l1 = l2 = 1 m (Sec. 6.2):
    # M = [[3 + 2c2, 1 + c2], [1 + c2, 1]], h = [−s2 (2q̇1q̇2 + q̇2²), s2 q̇1²],
    # J_x = [−s1 − s12, −s12], J_y = [c1 + c12, c12]; gravity along −z acts on no joint.
    dyn = UrdfDynamics(bundled_urdf("planar_2link"))
    rng = np.random.default_rng(23)
    for _ in range(20):
        q, v = rng.uniform(-3, 3, 2), rng.normal(size=2)
        M, h, J = dyn.terms(q, v, True)
        c2, s2 = math.cos(q[1]), math.sin(q[1])
        s1, c1, s12, c12 = math.sin(q[0]), math.cos(q[0]), math.sin(q.sum()), math.cos(q.sum())
        assert np.allclose(M, [[3 + 2 * c2, 1 + c2], [1 + c2, 1]], atol=1e-12)
        assert np.allclose(h, [-s2 * (2 * v[0] * v[1] + v[1] ** 2), s2 * v[0] ** 2], atol=1e-12)
        assert np.allclose(J[:2], [[-s1 - s12, -s12], [c1 + c12, c12]], atol=1e-12)
        assert np.allclose(dyn.ee_position(q)[:2], [c1 + c12, s1 + s12], atol=1e-12)


def _arm7_chain():
    """(masses, COM heights above joint 2 when upright) read from the URDF text itself."""
    root = ET.parse(bundled_urdf("arm7")).getroot()
    z = {"base_link": 0.0}
    for j in root.findall("joint"):
        z[j.find("child").get("link")] = z[j.find("parent").get("link")] + float(
            j.find("origin").get("xyz").split()[2])
    out = []
    for link in root.findall("link"):
        inertial = link.find("inertial")
        if inertial is None or link.get("name") in ("base_link", "link1"):
            continue
        com = z[link.get("name")] + float(inertial.find("origin").get("xyz").split()[2])
        out.append((float(inertial.find("mass").get("value")), com - z["link2"]))
    return out


def test_arm7_gravity_torque_is_the_moment_of_the_link_weights():
    # Upright (q = 0) every COM is on the z axis: no gravity torque anywhere. With joint 2 at
    # +π/2 the arm is horizontal along +x and joint 2 carries the moment of all the weights
    # beyond it: g(q)_2 = −9.81 Σ m_i d_i (negative: gravity turns q_2 further positive).
    dyn = UrdfDynamics("arm7")
    assert np.allclose(dyn.gravity_torque(np.zeros(7)), 0.0, atol=1e-12)
    q = np.zeros(7)
    q[1] = math.pi / 2
    moment = sum(m * d for m, d in _arm7_chain())
    assert dyn.gravity_torque(q)[1] == pytest.approx(-9.81 * moment, rel=1e-12)
    M = dyn.mass_matrix(np.full(7, 0.3))
    assert np.allclose(M, M.T) and np.all(np.linalg.eigvalsh(M) > 0)


def test_locked_and_reordered_joints_give_the_sub_inertia():
    full = UrdfDynamics("arm7")
    sub = UrdfDynamics("arm7", joint_names=["joint_a4", "joint_a2"],
                       locked_positions={"joint_a1": 0.3})
    q = np.array([0.3, 0.5, 0.0, -1.0, 0.0, 0.0, 0.0])
    M = full.mass_matrix(q)
    assert np.allclose(sub.mass_matrix([-1.0, 0.5]), M[np.ix_([3, 1], [3, 1])], atol=1e-12)
    xml = bundled_urdf("planar_2link").read_text()
    assert np.allclose(UrdfDynamics.from_xml(xml).mass_matrix([0.1, 0.2]),
                       UrdfDynamics("planar_2link").mass_matrix([0.1, 0.2]))


def test_urdf_errors_are_clear(tmp_path):
    with pytest.raises(UrdfError, match="no such file"):
        UrdfDynamics(tmp_path / "missing.urdf")
    bad = tmp_path / "bad.urdf"
    bad.write_text("<robot name='x'><link name='a'></robot>")
    with pytest.raises(UrdfError, match="bad.urdf:1: not well-formed XML"):
        UrdfDynamics(bad)
    text = bundled_urdf("planar_2link").read_text().replace('type="revolute"', 'type="floating"',
                                                              1)
    with pytest.raises(UrdfError, match="joint1"):
        UrdfDynamics.from_xml(text)
    with pytest.raises(UrdfError, match="joint_names.*elbow"):
        UrdfDynamics("planar_2link", joint_names=["joint1", "elbow"])
    with pytest.raises(UrdfError, match="ee_frame"):
        UrdfDynamics("planar_2link", ee_frame="gripper")
    with pytest.raises(UrdfError, match="bundled"):
        bundled_urdf("no_such_robot")


def test_bad_arm_inputs_name_the_field_and_keep_the_state():
    dyn = UrdfDynamics("planar_2link")
    with pytest.raises(ValueError, match="gamma_v.*wrist"):
        GearedArm(dyn, 0.1, {"joint1": 0.2, "wrist": 0.3}, 1.0)
    with pytest.raises(ValueError, match="gamma_v.*joint2"):
        GearedArm(dyn, 0.1, {"joint1": 0.2}, 1.0)
    with pytest.raises(ValueError, match="m.*joint2"):
        GearedArm(dyn, 0.1, 0.2, [1.0, -1.0])
    arm = GearedArm(dyn, 0.1, 0.2, 1.0, q0=[0.1, 0.2], v0=[0.3, 0.0])
    q, v = arm.q, arm.v
    for args, kw, field in ((([np.nan, 0.0], H), {}, "tau_u.*joint1"),
                            (([0.0, 0.0, 0.0], H), {}, "tau_u"),
                            (([0.0, 0.0], 0.0), {}, "h"),
                            (([0.0, 0.0], H), {"wrench": [0.0] * 5}, "wrench"),
                            (([0.0, 0.0], H), {"wrench": [np.inf] + [0.0] * 5}, "wrench"),
                            (([0.0, 0.0], H), {"tau_load": [0.0, np.nan]}, "tau_load")):
        with pytest.raises(ValueError, match=field):
            arm.step(*args, **kw)
        assert np.array_equal(arm.q, q) and np.array_equal(arm.v, v)
    with pytest.raises(ValueError, match="singular"):
        GearedArm(ConstantInertia([[1.0, 1.0], [1.0, 1.0]]), 0.1, 0.2, 0.0)


def test_ill_posed_arm_is_reported_never_nan():
    # Tiny rotor inertias and γ_v = 1.5: P ≈ −[γ_v], σ_max(P) > 1 (57).
    dyn = UrdfDynamics("planar_2link", gravity=(0.0, 0.0, 0.0))
    arm = GearedArm(dyn, 0.1, 1.5, 1e-3, q0=[0.2, 1.0], v0=[0.5, -0.5])
    rng = np.random.default_rng(24)
    with pytest.warns(IllPosedWarning, match="sigma_max"):
        for _ in range(300):
            v = arm.step(rng.normal(size=2) * 20.0, H)
            assert np.all(np.isfinite(v)) and np.all(np.isfinite(arm.q))
    assert arm.ill_posed_steps > 0 and not arm.state.well_posed
    strict = GearedArm(dyn, 0.1, 1.5, 1e-3, q0=[0.2, 1.0], on_ill_posed="raise")
    with pytest.raises(ValueError, match="gamma_v.*57"):
        strict.step([1.0, 1.0], H)
    assert strict.steps == 0 and np.array_equal(strict.q, [0.2, 1.0])


@pytest.mark.parametrize("name,pngs", [
    ("fig09_transmission_rod", ["fig09_transmission_rod.png"]),
    ("fig11_12_transmission_arm", ["fig11_transmission_arm.png", "fig12_transmission_arm.png"]),
])
def test_paper_004_examples_pass_and_write_pngs(name, pngs, tmp_path, capsys):
    sys.path.insert(0, str(EXAMPLES))
    try:
        mod = importlib.import_module(name)
        with warnings.catch_warnings():
            warnings.simplefilter("error", IllPosedWarning)
            rc = mod.main(["--out", str(tmp_path)])
    finally:
        sys.path.remove(str(EXAMPLES))
    out = capsys.readouterr().out
    assert rc == 0 and "FAIL" not in out, out
    for png in pngs:
        assert (tmp_path / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_end_stops_push_back_only_beyond_the_limits():
    from fric_core.transmission.geared_arm import EndStops
    # omega = 0.1 / 0.01 = 10 rad/s, zeta = 0.5: on m_e = 1, K = 100, B = 10
    stops = EndStops([-1.0, -np.inf], [1.0, np.inf], 0.01, ["a", "b"], omega_h=0.1, zeta=0.5)
    m_e = np.ones(2)
    np.testing.assert_array_equal(stops.torque(np.array([0.5, 5.0]), np.array([3.0, 3.0]),
                                               m_e), 0.0)
    # 0.01 rad beyond the upper limit, moving in: K pen + B v = 1 + 10 = 11 N m pushing back
    assert stops.torque(np.array([1.01, 0.0]), np.array([1.0, 0.0]), m_e)[0] == \
        pytest.approx(11.0)
    # leaving fast: the damper would pull; a stop only pushes (0, not -9)
    assert stops.torque(np.array([1.01, 0.0]), np.array([-1.0, 0.0]), m_e)[0] == 0.0
    assert stops.torque(np.array([-1.01, 0.0]), np.array([-1.0, 0.0]), m_e)[0] == \
        pytest.approx(-11.0)
    with pytest.raises(ValueError, match="lower"):
        EndStops([1.0], [0.0], 0.01, ["a"])
    with pytest.raises(ValueError, match="omega_h"):
        EndStops([0.0], [1.0], 0.01, ["a"], omega_h=0.9)


@pytest.mark.parametrize("inertia", [1.0, 0.25])
def test_end_stop_is_a_damped_bumper(inertia):
    # The stop is tuned on the effective inertia (omega h = 0.3, zeta = 1), whatever it is. A
    # frictionless joint thrown at 1 rad/s into it: a critically damped one-sided spring-damper
    # x = v t exp(-omega t) lets go when its force vanishes (omega t = 2) with the rebound speed
    # v exp(-2) = 0.135 v; the discretisation shifts that a little, so the rebound must stay
    # below 0.25 v (kinetic energy < 6 %), and the overshoot below v / omega.
    from fric_core.transmission.geared_arm import EndStops
    h = 1e-3
    stops = EndStops([-10.0], [0.0], h, ["j"])
    arm = GearedArm(ConstantInertia([[inertia]]), 0.0, 0.0, 0.0, v0=[1.0])
    peak = 0.0
    for _ in range(100):
        arm.step([0.0], h, tau_load=stops.torque(arm.q, arm.v, arm.effective_inertia))
        peak = max(peak, arm.q[0])
    assert arm.effective_inertia[0] == pytest.approx(inertia)
    assert 0.0 < peak < 1.0 / stops.omega
    assert -0.25 < arm.v[0] < 0.0 and arm.q[0] < 0.0  # left the stop, slower


def test_set_state_keeps_the_counters():
    arm = GearedArm(ConstantInertia([[1.0]]), 0.0, 1.5, 0.01, on_ill_posed="ignore")
    arm.step([0.0], 1e-3, tau_load=[1.0])
    assert arm.ill_posed_steps == 1
    arm.set_state([0.2], [0.0])
    assert arm.ill_posed_steps == 1 and arm.q[0] == 0.2 and arm.v[0] == 0.0
    with pytest.raises(ValueError, match="q"):
        arm.set_state([np.nan], [0.0])


@pytest.mark.parametrize("v2", [-1.0, 0.0])
def test_hard_end_stop_is_an_inelastic_impact_on_one_joint(v2):
    # Issue 13 (item 4). A frictionless 2-joint arm (gamma 0: no transmission friction) with a
    # coupled constant inertia, joint1 thrown at its upper stop. A stop acts on joint1 alone, so
    # the impulse changes only joint1's generalised momentum: (M^ v)_2 is the same before and
    # after the impact (nothing else acts), joint1 ends exactly on its limit at rest relative to
    # it, and the kinetic energy does not grow (inelastic). With v2 = 0 joint2 is at rest before
    # the impact (its velocity exactly 0, reported "stuck" by (69f) though nothing holds it):
    # it must take the reaction like a moving one.
    M = np.array([[2.0, 0.7], [0.7, 1.0]])
    m = 0.5
    h = 1e-3
    arm = GearedArm(ConstantInertia(M), 0.0, 0.0, m, lower=[-1.0, -10.0], upper=[0.1, 10.0],
                    q0=[0.0, 0.0], v0=[3.0, v2])
    Mhat = M + m * np.eye(2)
    before = None
    for _ in range(100):
        p_before, e_before = Mhat @ arm.v, 0.5 * arm.v @ Mhat @ arm.v
        arm.step([0.0, 0.0], h)
        if arm.state.at_stop is not None and arm.state.at_stop[0]:
            before = (p_before, e_before)
            break
    assert before is not None, arm.q
    assert arm.q[0] == 0.1  # exactly on the limit, never past it
    # the step lands it: v1 = (limit - q1_prev) / h; the next step it rests (v1 = 0)
    p_after = Mhat @ arm.v
    assert p_after[1] == pytest.approx(before[0][1], rel=1e-12)
    assert 0.5 * arm.v @ Mhat @ arm.v <= before[1]
    assert arm.state.stop_impulse[0] < 0.0 and arm.state.stop_impulse[1] == 0.0
    arm.step([0.0, 0.0], h)
    assert arm.q[0] == 0.1 and arm.v[0] == 0.0
    assert (Mhat @ arm.v)[1] == pytest.approx(before[0][1], rel=1e-12)


@pytest.mark.parametrize("tau", [[1e300, -1e300], [1e6, 1e6], [-1e200, 1e200]])
def test_hard_end_stops_hold_for_any_finite_torque(tau):
    # gears with friction (joint1 self-locking), coupled inertia: never past a limit, finite
    arm = GearedArm(ConstantInertia([[2.0, 0.7], [0.7, 1.0]]), [0.1, 0.0], [1.2, 0.3], 1.0,
                    lower=[-1.0, -2.0], upper=[1.5, 0.5], on_ill_posed="ignore")
    for k in range(300):
        arm.step(tau if k < 200 else [0.0, 0.0], 1e-3)
        q = arm.q
        assert np.all(q >= arm.lower) and np.all(q <= arm.upper), q
        assert np.isfinite(arm.v).all()
    assert np.all((q == arm.lower) | (q == arm.upper)), q  # both driven into a stop, held
    with pytest.raises(ValueError, match="lower"):
        GearedArm(ConstantInertia([[1.0]]), 0.0, 0.0, 1.0, lower=[1.0], upper=[0.0])
