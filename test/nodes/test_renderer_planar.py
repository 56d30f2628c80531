"""friction_renderer's planar contact (paper 002's reduced model on the x, y, yaw joints of a
planar end effector): the physics in closed loop with a simulated end effector at 1 kHz (no ROS),
then the node: efforts by joint name, frames, parameters, live normal force."""

import math

import numpy as np
import pytest
from rclpy.parameter import Parameter

from fric_interfaces.conversions import joint_state_msg
from fric_core.planar.contact import PlanarContact
from fric_interfaces.planar_params import PLANAR_SPECS
from fric_nodes.builders import build_planar
from fric_interfaces.renderer_params import GLOBAL_SPECS, joint_specs
from fric_nodes.builders import build_bank
from fric_nodes.friction_renderer import FrictionRenderer

DT = 1e-3
M, I_YAW = 1.0, 1e-4  # end-effector mass [kg] and yaw inertia [kg m^2]
JOINTS = ["x", "y", "yaw"]


def _values(**over):
    v = {s.name: s.default for s in PLANAR_SPECS}
    v["planar.joints"] = list(JOINTS)
    v.update(over)
    return v


def _contact(**over) -> PlanarContact:
    contact, problems = build_planar(_values(**over), JOINTS, DT)
    assert not problems
    return contact


def _device(contact, force, seconds, twist0=(0.0, 0.0, 0.0), yaw0=0.0, drive=None):
    """The end effector (mass M, yaw inertia I_YAW) under an external wrench ``force(t)`` and the
    rendered friction, applied one cycle late as on a device (semi-implicit Euler at DT).
    ``drive``: joints whose velocity is imposed (index -> velocity) instead of integrated.
    Returns positions and velocities per step, (n, 3) each."""
    q = np.array([0.0, 0.0, yaw0])
    v = np.array(twist0, dtype=float)
    f = np.zeros(3)
    inertia = np.array([M, M, I_YAW])
    qs, vs = [], []
    for k in range(int(round(seconds / DT))):
        v = v + DT * (np.asarray(force(k * DT), float) + f) / inertia
        if drive:
            for i, vel in drive.items():
                v[i] = vel
        q = q + DT * v
        f = contact.step(v, q).copy()
        qs.append(q.copy())
        vs.append(v.copy())
    return np.array(qs), np.array(vs)


def test_stuck_patch_holds_a_force_below_breakaway_without_drift():
    # 3 N against mu_c f_N = 5 N: the Elasto-Plastic bristles take the presliding deflection
    # F / (sigma0 f_N) = 3 / 4000 = 0.75 mm and then hold: over the last second the end
    # effector moves less than 1 um (LuGre without the elasto-plastic form creeps; the paper's
    # Fig. 6).
    c = _contact()
    q, _ = _device(c, lambda t: (3.0, 0.0, 0.0), 2.0)
    assert abs(q[-1, 0] - 3.0 / 4000.0) < 0.15 * 3.0 / 4000.0
    assert abs(q[-1, 0] - q[-1000, 0]) < 1e-6
    assert c.stuck


def test_oscillating_sub_breakaway_force_does_not_walk_the_end_effector():
    # 4 N +- 0.8 N at 5 Hz (peak 4.8 N < mu_c f_N = 5 N): plain LuGre accumulates a drift
    # every cycle, Elasto-Plastic holds the mean position (compare the same phase 1 s apart).
    def push(t):
        return (4.0 + 0.8 * math.sin(2 * math.pi * 5 * t), 0.0, 0.0)

    q_ep, _ = _device(_contact(), push, 3.0)
    q_lg, _ = _device(_contact(**{"planar.elasto_plastic": False}), push, 3.0)
    drift_ep = abs(q_ep[-1, 0] - q_ep[-1001, 0])
    drift_lg = abs(q_lg[-1, 0] - q_lg[-1001, 0])
    assert drift_ep < 1e-6
    assert drift_lg > 20 * max(drift_ep, 1e-9)


def test_sliding_force_is_the_kinetic_level_along_the_motion():
    # pushed with 8 N > mu_s f_N = 6 N the end effector slides; after the Stribeck transition
    # the friction is mu_c f_N = 5 N against the motion: acceleration (8 - 5) / M = 3 m/s^2
    # (to 1 %: the Stribeck term exp(-(v/v_s)^2) is < 1e-10 beyond 5 v_s).
    c = _contact()
    q, v = _device(c, lambda t: (8.0, 0.0, 0.0), 0.5)
    a = (v[-1, 0] - v[-101, 0]) / (100 * DT)
    assert a == pytest.approx(3.0, rel=0.01)
    assert abs(q[-1, 1]) < 1e-12 and abs(q[-1, 2]) < 1e-12  # no sideways force or torque


def test_sliding_patch_turns_under_a_torque_it_holds_at_rest():
    # The limit surface couples force and torque: a torque of 0.6 of the pure-rotation limit
    # mu_c f_N r is held at rest (the yaw moves only by its presliding twist, < 0.1 rad), but
    # while the patch slides along x at 0.1 m/s (rim speed << 0.1 m/s) the friction is almost
    # all spent on the sliding and the same torque spins it up.
    c = _contact()
    tau = 0.6 * 5.0 * c.radius
    q_rest, _ = _device(c, lambda t: (0.0, 0.0, tau), 1.0)
    c.reset()
    q_slide, v_slide = _device(c, lambda t: (0.0, 0.0, tau), 1.0, drive={0: 0.1})
    assert abs(q_rest[-1, 2]) < 0.1 and abs(q_rest[-1, 2] - q_rest[-500, 2]) < 1e-4
    assert q_slide[-1, 2] > 10.0 * abs(q_rest[-1, 2]) and v_slide[-1, 2] > 1.0


def test_frames_the_patch_turns_with_the_yaw_joint():
    # a square patch at yaw pi/2 sliding along world x: its force is along -world x exactly as
    # for yaw 0 (turning the twist into the patch frame and the wrench back is consistent)
    c = _contact(**{"planar.surface": "square"})
    for _ in range(500):
        f0 = c.step(np.array([0.05, 0.0, 0.0]), np.array([0.0, 0.0, 0.0])).copy()
    c.reset()
    for _ in range(500):
        f1 = c.step(np.array([0.05, 0.0, 0.0]), np.array([0.0, 0.0, math.pi / 2])).copy()
    assert f0 == pytest.approx([-5.0, 0.0, 0.0], abs=1e-9)
    np.testing.assert_allclose(f1, f0, atol=1e-9)


def test_zero_normal_force_renders_zero_friction():
    c = _contact(**{"planar.normal_force": 0.0})
    f = c.step(np.array([0.1, -0.2, 3.0]), np.zeros(3))
    assert np.all(f == 0.0)


@pytest.mark.parametrize("over, field", [
    ({"planar.joints": ["x", "y"]}, "planar.joints"),
    ({"planar.joints": ["x", "y", "z"]}, "planar.joints"),
    ({"planar.mu_s": 0.4}, "planar.mu_s"),
    ({"planar.sigma0": 1e6, "planar.mass": 1.0}, "planar.sigma0"),
])
def test_bad_planar_parameters_name_the_field(over, field):
    vals = {s.name: s.default for s in GLOBAL_SPECS}
    vals.update(_values(**over))
    vals["joints"] = list(JOINTS)
    with pytest.raises(ValueError, match=field.replace(".", r"\.")):
        build_bank("massless_impedance", DT, JOINTS, vals)
    with pytest.raises(ValueError, match="planar.joints"):
        build_bank("rigid_admittance", DT, JOINTS, dict(vals, **{"planar.joints": JOINTS,
                                                                "planar.mass": 0.0,
                                                                "planar.sigma0": 400.0,
                                                                "planar.mu_s": 0.6}))


# ------------------------------------------------------------------ the node
@pytest.fixture
def node(ros):
    params = {"joints": ["gripper", "x", "y", "yaw"], "planar.joints": JOINTS,
              "planar.mass": M, "planar.inertia": I_YAW}
    n = FrictionRenderer(parameter_overrides=[Parameter(k, value=v) for k, v in params.items()])
    yield n
    n.destroy_node()


def test_node_renders_the_planar_contact_on_its_joints_by_name(node):
    ref = _contact(**{"planar.mass": M, "planar.inertia": I_YAW})
    sent = []
    node._out.publish = lambda msg: sent.append(list(msg.data))
    vel = {"gripper": 0.01, "x": 0.05, "y": -0.02, "yaw": 1.0}
    pos = {"gripper": 0.0, "x": 0.0, "y": 0.0, "yaw": 0.4}
    order = ["yaw", "gripper", "y", "x"]  # joint_states in another order: matched by name
    for k in range(50):
        msg = joint_state_msg(order, [pos[j] for j in order], [vel[j] for j in order],
                              stamp_ns=10**9 + k * 10**6)
        node._on_joint_state(msg)
        expected = ref.step(np.array([vel["x"], vel["y"], vel["yaw"]]),
                            np.array([0.0, 0.0, 0.4])).copy()
    assert sent[-1][1:] == pytest.approx(list(expected), abs=1e-12)
    assert sent[-1][0] < 0.0  # the gripper joint keeps its own (Coulomb) law
    assert "planar" in node.diagnostic_status().values[1].value


def test_node_normal_force_live_and_checked(node):
    ok = node.set_parameters([Parameter("planar.normal_force", value=2.0)])[0]
    assert ok.successful and node._bank.planar.model.normal_force == 2.0
    # 10x the stiffness on the 1 kg end effector diverges at 1 kHz: rejected with the reason
    bad = node.set_parameters([Parameter("planar.normal_force", value=5000.0)])[0]
    assert not bad.successful and "planar.sigma0" in bad.reason
    assert node._bank.planar.model.normal_force == 2.0


def test_node_retunes_the_friction_without_recomputing_the_limit_surface(node):
    """A coefficient change rebuilds the contact (staged, swapped in at rest) on the SAME
    pre-computed limit surface: the table is work of 0.02 s to seconds that must not run in the
    1 kHz loop's parameter callback. The geometry that fixes the table is read-only."""
    table = node._bank.planar.table
    ok = node.set_parameters([Parameter("planar.mu_c", value=0.4)])[0]
    assert ok.successful
    assert node._new_bank.planar.table is table
    assert node._new_bank.planar.model.params.mu_c == 0.4
    for name, value in (("planar.cells", 31), ("planar.ls_resolution", 30),
                        ("planar.surface", "square"), ("planar.size", 0.05)):
        res = node.set_parameters([Parameter(name, value=value)])[0]
        assert not res.successful and name in res.reason, (name, res.reason)
    assert node.get_parameter("planar.cells").value == 21


def test_example_config_loads_and_passes_the_design_check():
    import yaml
    from pathlib import Path

    cfg = yaml.safe_load((Path(__file__).resolve().parents[2] / "config" / "renderer_planar.yaml")
                         .read_text())["friction_renderer"]["ros__parameters"]
    vals = {s.name: s.default for s in GLOBAL_SPECS + PLANAR_SPECS}
    vals.update({s.name: s.default for s in joint_specs("gripper")})
    flat = {k: v for k, v in cfg.items() if not isinstance(v, dict)}
    for group in ("planar", "gripper"):
        flat.update({f"{group}.{k}": v for k, v in cfg[group].items()})
    vals.update(flat)
    bank, problems = build_bank("massless_impedance", cfg["dt"], cfg["joints"], vals)
    assert bank.planar is not None and list(bank.planar.index) == [0, 1, 2]
    assert not [p for p in problems if "diverges" in p]


def test_node_draws_the_patch_at_the_end_effector(node):
    node._marker_pub.get_subscription_count = lambda: 1
    sent = []
    node._marker_pub.publish = sent.append
    node._out.publish = lambda msg: None
    names_ = ["gripper", "x", "y", "yaw"]
    for k in range(100):  # sliding along +x at 5 cm/s from (0.1, 0.2)
        node._on_joint_state(joint_state_msg(names_, [0.0, 0.1 + 5e-5 * k, 0.2, 0.0],
                                             [0.0, 0.05, 0.0, 0.0], stamp_ns=10**9 + k * 10**6))
    node._on_markers()
    ms = {m.ns: m for m in sent[-1].markers}
    disc, arrow = ms["planar_patch"], ms["planar_force"]
    assert (disc.pose.position.x, disc.pose.position.y) == pytest.approx((0.1 + 5e-5 * 99, 0.2))
    assert arrow.points[1].x < arrow.points[0].x  # friction against the motion
    assert "slip" in ms["planar_label"].text and disc.color.a == pytest.approx(0.6)
