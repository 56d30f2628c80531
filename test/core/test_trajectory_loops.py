"""fric_core.looped_trajectory: what trajectory_tracker's ``loops`` plays (issue 24, item 8).
The return segment against its boundary conditions (exact polynomial identities), continuity of
position, velocity and acceleration across both seams (one-sided limits), the return's speed and
acceleration against the trajectory's own peaks, and the time base of waypoints that do not
start at 0."""

import numpy as np
import pytest

from fric_core.looped_trajectory import LoopedTrajectory, quintic_coefficients
from fric_core.trajectory import SampledTrajectory, SineTrajectory


def _at(traj, t):
    out = [np.zeros(traj.n) for _ in range(3)]
    traj.sample(t, *out)
    return np.array(out)


def test_quintic_meets_position_velocity_and_acceleration_at_both_ends():
    begin = np.array([[0.0, 1.0], [1.0, -2.0], [3.0, 0.5]])
    end = np.array([[2.0, 0.0], [0.5, 1.0], [-1.0, 2.0]])
    c = quintic_coefficients(begin, end, 1.7)
    for j in range(2):
        p = np.poly1d(c[:, j])
        for x, state in ((0.0, begin), (1.7, end)):
            assert [p(x), p.deriv()(x), p.deriv(2)(x)] == pytest.approx(state[:, j], abs=1e-12)


def test_sinusoid_over_one_and_a_half_periods_returns_smoothly_within_its_peaks():
    sine = SineTrajectory([0.5], [0.5], [0.15], 10.0)
    looped = LoopedTrajectory(sine, 3)
    T, R = 10.0, looped.return_time
    assert not looped.continuous and looped.matches_acceleration
    assert looped.duration == pytest.approx(3 * T + 2 * R)
    vpk, apk = sine.peaks()
    assert vpk == pytest.approx(0.5 * 2 * np.pi * 0.15) and apk == pytest.approx(
        0.5 * (2 * np.pi * 0.15) ** 2)
    eps = 1e-7  # one-sided limits: the seam's jump is below (v, a, jerk) x eps
    for seam in (T, T + R, 2 * T + R, 2 * T + 2 * R):
        left, right = _at(looped, seam - eps), _at(looped, seam + eps)
        assert np.abs(left - right).max() < 1e-5, (seam, left, right)
    ts = np.linspace(T, T + R, 2001)
    states = np.array([_at(looped, t) for t in ts])
    assert np.abs(states[:, 1]).max() <= vpk[0] * (1 + 1e-6)
    assert np.abs(states[:, 2]).max() <= apk[0] * (1 + 1e-6)
    assert states[0, 0] == pytest.approx([1.0]) and states[-1, 0] == pytest.approx([0.0])
    # after the last play: its end, held at rest
    assert _at(looped, looped.duration + 1.0)[:, 0] == pytest.approx([1.0, 0.0, 0.0])


def test_waypoints_starting_later_than_zero_play_from_their_first_point():
    # a JointTrajectory whose first point has time_from_start 1 s: the plays start at that
    # point (the tracker approached it), they do not hold it for a second
    t = np.array([1.0, 2.0, 3.0])
    traj = SampledTrajectory(t, [[0.0], [1.0], [0.0]], [[0.0], [0.0], [0.0]])
    looped = LoopedTrajectory(traj, 2)
    assert looped.continuous and looped.duration == pytest.approx(4.0)
    assert _at(looped, 1.0)[0] == pytest.approx([1.0])      # the middle waypoint
    assert _at(looped, 3.0)[0] == pytest.approx([1.0])      # the second play's
    assert _at(looped, 0.5)[0] == pytest.approx(_at(traj, 1.5)[0])
