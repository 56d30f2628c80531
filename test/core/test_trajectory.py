"""fric_core.trajectory: what trajectory_tracker plays. Interpolation is checked against a known
smooth motion (exact polynomial order where the scheme is exact), the sinusoid and the
minimum-jerk move against their closed forms, and the CSV reader's errors name line and column."""

import math

import numpy as np
import pytest

from fric_core.trajectory import (SampledTrajectory, SineTrajectory, minimum_jerk,
                                  read_trajectory_csv, trajectory_from_points)

W = 2 * math.pi * 0.5  # 0.5 Hz


def _motion(t):
    q = np.stack([np.sin(W * t), 1 - np.cos(W * t)], -1)
    v = np.stack([W * np.cos(W * t), W * np.sin(W * t)], -1)
    a = np.stack([-W * W * np.sin(W * t), W * W * np.cos(W * t)], -1)
    return q, v, a


def _errors(traj, ts):
    out = [np.zeros(2) for _ in range(3)]
    worst = np.zeros(3)
    for t in ts:
        traj.sample(t, *out)
        exact = _motion(t)
        worst = np.maximum(worst, [np.abs(o - e).max() for o, e in zip(out, exact)])
    return worst


def test_quintic_hermite_is_exact_at_waypoints_and_close_between():
    t = np.linspace(0.0, 2.0, 101)  # 20 ms spacing
    traj = SampledTrajectory(t, *_motion(t))
    assert np.all(_errors(traj, t[1:-1]) < 1e-9)  # the waypoints themselves
    # between: quintic Hermite error ~ h^6 q^(6)/... : at h = 20 ms, |q^(6)| = W^6 = 961,
    # the bound h^6/46080 * 961 is 1.3e-12 on q; derivatives lose one order each
    worst = _errors(traj, np.linspace(0.013, 1.987, 777))
    assert worst[0] < 1e-10 and worst[1] < 1e-8 and worst[2] < 1e-5


def test_cubic_hermite_with_velocities_and_spline_with_positions_only():
    t = np.linspace(0.0, 2.0, 101)
    q, v, _ = _motion(t)
    ts = np.linspace(0.013, 1.987, 777)
    # cubic Hermite: error <= h^4/384 |q''''| = 1.6e-7 * 97.4 / ... -> 5e-8 on q
    worst = _errors(SampledTrajectory(t, q, v), ts)
    assert worst[0] < 1e-7 and worst[1] < 2e-5
    # not-a-knot cubic spline: O(h^4) on q everywhere, O(h^2) on the acceleration
    worst = _errors(SampledTrajectory(t, q), ts)
    assert worst[0] < 1e-6 and worst[2] < 0.05


def test_outside_the_waypoints_the_ends_are_held_at_rest():
    t = np.array([1.0, 2.0, 3.0])
    traj = SampledTrajectory(t, [[0.0], [1.0], [4.0]])
    q, v, a = np.zeros(1), np.zeros(1), np.zeros(1)
    traj.sample(0.0, q, v, a)
    assert (q[0], v[0], a[0]) == (0.0, 0.0, 0.0)
    traj.sample(9.0, q, v, a)
    assert (q[0], v[0], a[0]) == (4.0, 0.0, 0.0)
    traj.sample(2.0, q, v, a)
    assert q[0] == pytest.approx(1.0, abs=1e-12)
    assert traj.duration == 2.0


def test_sine_starts_at_rest_and_reverses_every_half_period():
    s = SineTrajectory([0.1, -0.2], [0.5, 0.3], [0.5, 1.0], 4.0)
    q, v, a = np.zeros(2), np.zeros(2), np.zeros(2)
    s.sample(0.0, q, v, a)
    assert np.allclose(q, [-0.4, -0.5]) and np.all(v == 0.0)
    for t in (0.3, 1.1, 2.7):
        s.sample(t, q, v, a)
        w = 2 * np.pi * np.array([0.5, 1.0])
        assert np.allclose(q, [0.1, -0.2] - np.array([0.5, 0.3]) * np.cos(w * t))
        assert np.allclose(v, np.array([0.5, 0.3]) * w * np.sin(w * t))
        assert np.allclose(a, np.array([0.5, 0.3]) * w * w * np.cos(w * t))
    s.sample(1.0, q, v, a)  # half a period of joint 1, a whole one of joint 2: reversal
    assert abs(v[0]) < 1e-12 and abs(v[1]) < 1e-12
    with pytest.raises(ValueError, match="frequency"):
        SineTrajectory([0.0], [0.1], [0.0], 1.0)


def test_minimum_jerk_rests_at_both_ends_and_peaks_at_15_8_of_the_mean_speed():
    q, v, a = np.zeros(1), np.zeros(1), np.zeros(1)
    minimum_jerk(np.array([1.0]), np.array([3.0]), 2.0, 0.0, q, v, a)
    assert (q[0], v[0], a[0]) == (1.0, 0.0, 0.0)
    minimum_jerk(np.array([1.0]), np.array([3.0]), 2.0, 1.0, q, v, a)
    assert q[0] == pytest.approx(2.0) and v[0] == pytest.approx(15 / 8 * 1.0) and a[0] == 0.0
    minimum_jerk(np.array([1.0]), np.array([3.0]), 2.0, 5.0, q, v, a)
    assert (q[0], v[0], a[0]) == (3.0, 0.0, 0.0)


def test_points_like_a_joint_trajectory_message():
    traj = trajectory_from_points(["a", "b"], [0.0, 1.0, 2.0],
                                  [[0, 0], [1, 2], [2, 4]], [[], [], []], None)
    q, v, a = np.zeros(2), np.zeros(2), np.zeros(2)
    traj.sample(1.0, q, v, a)
    assert np.allclose(q, [1.0, 2.0])
    with pytest.raises(ValueError, match=r"points\[1\]\.positions: 1 values for 2 joints"):
        trajectory_from_points(["a", "b"], [0.0, 1.0], [[0, 0], [1]])
    with pytest.raises(ValueError, match="t: times must increase"):
        trajectory_from_points(["a"], [0.0, 0.0], [[0], [1]])


def test_csv_reader_columns_and_errors(tmp_path):
    f = tmp_path / "x.csv"
    f.write_text("# fric excite\nt,j1,j2,j1.velocity,j2.velocity\n0,0,0,0,0\n1,1,2,0,0\n"
                 "2,0,0,0,0\n")
    traj = read_trajectory_csv(f)
    assert traj.joint_names == ["j1", "j2"]
    q, v, a = np.zeros(2), np.zeros(2), np.zeros(2)
    traj.sample(1.0, q, v, a)
    assert np.allclose(q, [1.0, 2.0]) and np.allclose(v, 0.0, atol=1e-12)
    assert read_trajectory_csv(f, ["j2"]).joint_names == ["j2"]
    with pytest.raises(ValueError, match=r"x\.csv:2: no position column for joint 'j3'"):
        read_trajectory_csv(f, ["j3"])
    f.write_text("t,j1\n0,0\n1,nan\n")
    with pytest.raises(ValueError, match=r"x\.csv:3: column 'j1': 'nan' is not finite"):
        read_trajectory_csv(f)
    f.write_text("t,j1\n0,0\n0,1\n")
    with pytest.raises(ValueError, match=r"x\.csv:3: time 0 does not increase"):
        read_trajectory_csv(f)
    f.write_text("time_s,j1\n0,0\n")
    with pytest.raises(ValueError, match="no time column"):
        read_trajectory_csv(f)
    with pytest.raises(ValueError, match="cannot read"):
        read_trajectory_csv(tmp_path / "missing.csv")
