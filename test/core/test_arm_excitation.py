"""Excitation trajectories (fric_core.arm_identification.excitation): within the limits for the
continuous trajectory, periodic and at rest at the ends, a better-conditioned design than the
random start, and files that round-trip (CSV, JointTrajectory YAML and MCAP bag)."""

import math

import numpy as np
import pytest

from fric_core.arm_identification.excitation import (MAX_ARG_BYTES, design_condition,
                                                     generate_excitation, read_excitation_csv,
                                                     trajectory_message, write_excitation_csv,
                                                     write_trajectory_bag, write_trajectory_yaml)
from fric_core.transmission.urdf_dynamics import UrdfDynamics

ARMS = {"planar_2link": 300, "arm7": 60}  # evaluation budgets (≈ 0.3 s each)


@pytest.fixture(scope="module")
def dyns():
    return {name: UrdfDynamics(name) for name in ARMS}


@pytest.fixture(scope="module")
def trajs(dyns):
    return {name: generate_excitation(dyns[name], iterations=it, seed=1)
            for name, it in ARMS.items()}


@pytest.mark.parametrize("arm", list(ARMS))
def test_limits_hold_for_the_continuous_trajectory(dyns, trajs, arm):
    traj = trajs[arm]
    dyn = dyns[arm]
    # the series evaluated 1e6 times per period, far finer than any grid it was scaled on
    q, v, a = traj.at(np.linspace(0.0, traj.period, 1_000_001))
    lim = traj.limits
    np.testing.assert_allclose(lim["lower"], dyn.lower + 0.1)  # the default margin, 0.1 rad
    np.testing.assert_allclose(lim["upper"], dyn.upper - 0.1)
    tol = 1e-12  # rounding only: the scale is 1e-9 inside the binding limit
    assert np.all(q >= np.array(lim["lower"]) - tol) and np.all(q <= np.array(lim["upper"]) + tol)
    assert np.all(np.abs(v) <= np.array(lim["max_velocity"]) + tol)
    assert np.all(np.abs(a) <= np.array(lim["max_acceleration"]) + tol)
    # and one limit binds per joint: the whole feasible range is used
    use = np.max([(q.max(0) - q.min(0)) / (np.array(lim["upper"]) - lim["lower"]),
                  np.abs(v).max(0) / lim["max_velocity"],
                  np.abs(a).max(0) / lim["max_acceleration"]], axis=0)
    np.testing.assert_allclose(use, 1.0, atol=1e-6)
    # the written samples are the series
    qs, vs, as_ = traj.at(traj.t)
    np.testing.assert_allclose(traj.q, qs, atol=1e-12)


def test_tighter_limits_and_margin_are_obeyed(dyns):
    traj = generate_excitation(dyns["arm7"], max_velocity=[3.0] * 7, max_acceleration=40.0,
                               margin=0.5, iterations=10, rigid_body=False)
    q, v, a = traj.at(np.linspace(0.0, traj.period, 200_001))
    assert np.all(q <= dyns["arm7"].upper - 0.5 + 1e-12)
    assert np.all(q >= dyns["arm7"].lower + 0.5 - 1e-12)
    # the URDF's own velocity limits (1.71 rad/s on joint_a1) win over a looser request
    assert np.abs(v[:, 0]).max() <= 1.71 + 1e-12
    assert np.all(np.abs(v).max(0) <= np.minimum(3.0, [1.71, 1.71, 1.75, 2.27, 2.44, 3.14, 3.14])
                  + 1e-12)


@pytest.mark.parametrize("arm", list(ARMS))
def test_periodic_and_at_rest_at_the_ends(trajs, arm):
    traj = trajs[arm]
    q, v, a = traj.at(np.array([0.0, traj.period, 2 * traj.period]))
    np.testing.assert_allclose(v, 0.0, atol=1e-12)
    np.testing.assert_allclose(a, 0.0, atol=1e-12)
    np.testing.assert_allclose(q[1], q[0], atol=1e-12)
    assert traj.t[0] == 0.0 and traj.t[-1] == pytest.approx(traj.period)
    assert np.all(traj.v[[0, -1]] == 0.0) and np.all(traj.a[[0, -1]] == 0.0)
    np.testing.assert_allclose(traj.q[-1], traj.q[0], atol=1e-12)
    # band-limited: K = 5 harmonics of 0.1 Hz
    assert traj.harmonics == 5 and traj.bandwidth_hz == pytest.approx(0.5)


@pytest.mark.parametrize("arm", list(ARMS))
def test_optimised_cond_beats_the_random_start(dyns, trajs, arm):
    traj = trajs[arm]
    assert traj.cond < 0.8 * traj.cond_initial
    # cond is what design_condition says of the trajectory (on its own samples, here finer)
    again = design_condition(dyns[arm], traj.q[::10], traj.v[::10], traj.a[::10])
    assert again == pytest.approx(traj.cond, rel=0.2)


def test_a_joint_moving_one_way_only_has_no_friction_information(dyns):
    dyn = dyns["planar_2link"]
    t = np.linspace(0.0, 1.0, 200)
    q = np.column_stack([np.sin(2 * np.pi * t), t])
    v = np.column_stack([np.cos(2 * np.pi * t), np.ones_like(t)])  # joint2 never moves back
    a = np.column_stack([-np.sin(2 * np.pi * t), np.zeros_like(t)])
    assert math.isinf(design_condition(dyn, q, v, a))


def test_csv_round_trip(tmp_path, trajs):
    traj = trajs["arm7"]
    write_excitation_csv(tmp_path / "x.csv", traj)
    back = read_excitation_csv(tmp_path / "x.csv")
    assert back.joint_names == traj.joint_names
    for name in ("t", "q", "v", "a"):
        assert np.array_equal(getattr(back, name), getattr(traj, name)), name
    assert back.cond == traj.cond and back.period == traj.period
    tt = np.linspace(0, 20, 7)
    for x, y in zip(back.at(tt), traj.at(tt)):
        np.testing.assert_array_equal(x, y)
    # the trajectory tracker reads the same file
    from fric_core.trajectory import read_trajectory_csv
    played = read_trajectory_csv(tmp_path / "x.csv")
    assert list(played.joint_names) == list(traj.joint_names)


def test_joint_trajectory_yaml_and_bag(tmp_path, trajs):
    import yaml

    traj = trajs["arm7"]
    size = write_trajectory_yaml(tmp_path / "t.yaml", traj)
    assert size < MAX_ARG_BYTES  # passes as one shell argument to `ros2 topic pub`
    msg = yaml.safe_load((tmp_path / "t.yaml").read_text())
    assert msg == yaml.safe_load(yaml.safe_dump(trajectory_message(traj)))
    assert msg["joint_names"] == list(traj.joint_names)
    pts = msg["points"]
    assert len(pts) == 201  # 10 s at 20 Hz, both ends
    times = [p["time_from_start"]["sec"] + 1e-9 * p["time_from_start"]["nanosec"] for p in pts]
    np.testing.assert_allclose(times, 3.0 + np.arange(201) / 20.0, atol=1e-9)  # after the lead-in
    q, v, a = traj.at(np.arange(201) / 20.0)
    np.testing.assert_allclose([p["positions"] for p in pts], q, rtol=1e-8, atol=1e-9)
    np.testing.assert_allclose([p["accelerations"] for p in pts], a, rtol=1e-8, atol=1e-9)
    # the ROS message type accepts every field (what `ros2 topic pub` does with the YAML)
    msgs = pytest.importorskip("trajectory_msgs.msg")
    jt = msgs.JointTrajectory()
    jt.joint_names = msg["joint_names"]
    for p in pts:
        point = msgs.JointTrajectoryPoint()
        for key in ("positions", "velocities", "accelerations", "effort"):
            setattr(point, key, p[key])
        point.time_from_start.sec = p["time_from_start"]["sec"]
        point.time_from_start.nanosec = p["time_from_start"]["nanosec"]
        jt.points.append(point)
    assert len(jt.points) == 201

    bag = write_trajectory_bag(tmp_path / "bag", traj)
    from rosbags.highlevel import AnyReader
    from rosbags.typesys import Stores, get_typestore
    with AnyReader([bag], default_typestore=get_typestore(Stores.ROS2_KILTED)) as reader:
        (conn,) = reader.connections
        assert conn.topic == "/joint_trajectory_controller/joint_trajectory"
        (m,) = [reader.deserialize(raw, c.msgtype) for c, _, raw in reader.messages()]
    assert list(m.joint_names) == list(traj.joint_names) and len(m.points) == 201
    np.testing.assert_allclose(m.points[100].velocities, pts[100]["velocities"])


def test_bad_arguments_name_the_problem(dyns):
    dyn = dyns["planar_2link"]
    with pytest.raises(ValueError, match="harmonics"):
        generate_excitation(dyn, harmonics=1)
    with pytest.raises(ValueError, match="max_velocity"):
        generate_excitation(dyn, max_velocity=[1.0, -1.0])
    with pytest.raises(ValueError, match=r"margin: joint\(s\) \['joint1', 'joint2'\]"):
        generate_excitation(dyn, margin=4.0)
    with pytest.raises(ValueError, match="rate_hz"):
        generate_excitation(dyn, harmonics=50, period=1.0, rate_hz=60.0)


def test_the_optimised_trajectory_identifies_the_rigid_body_better(dyns):
    """The point of optimising: the fit on a simulated recording of the optimised trajectory
    has a smaller condition number (the fit's own, on its weighted design) and base parameters
    with smaller standard deviations than on the random start (planar_2link, same limits,
    2 periods at 500 Hz, same noise)."""
    from fric_core.arm_identification.fit import fit_arm_friction
    from fric_core.arm_identification.joint_friction import JointFriction
    from fric_core.arm_identification.signals import prepare
    from fric_core.arm_identification.synthetic import simulate_arm_recording

    dyn = dyns["planar_2link"]
    true = {n: JointFriction(Cp=0.8, Cn=0.6, bp=0.3, bn=0.4) for n in dyn.joint_names}
    out = {}
    for it in (1, 400):  # 1 evaluation: the random start itself
        traj = generate_excitation(dyn, rate_hz=500.0, periods=2, iterations=it, seed=0)
        sim = simulate_arm_recording(dyn, traj.t, traj.q, traj.v, traj.a, true, seed=2)
        p = prepare(sim.t, sim.q, sim.tau)
        fit = fit_arm_friction(p.q, p.v, p.a, p.effort, dyn, method="ols", dv=0.02)
        out[it] = (traj.cond, fit.cond, float(np.sqrt(np.mean(fit.beta_std ** 2))))
        assert fit.cond == pytest.approx(traj.cond, rel=0.3)  # design_condition is the fit's
    assert out[400][1] < 0.7 * out[1][1]
    assert out[400][2] < 0.8 * out[1][2]
