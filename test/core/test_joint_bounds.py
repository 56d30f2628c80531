"""fric_core.transmission.joint_bounds (issue 24, item 10): the bounds transmission_sim keeps for
any finite input. The angle wrap against its definition, the defaults where a URDF gives no
limit, and a step cut back to the speed limit by the implicit-Euler position update."""

import math

import numpy as np
import pytest

from fric_core.transmission.joint_bounds import JointBounds, wrap_angle


def test_wrap_angle_maps_into_minus_pi_exclusive_to_pi_inclusive():
    q = np.array([math.pi, -math.pi, 1.5 * math.pi, -1.5 * math.pi, 0.3, 7 * math.pi + 0.1])
    w = wrap_angle(q)
    assert w == pytest.approx([math.pi, math.pi, -0.5 * math.pi, 0.5 * math.pi, 0.3,
                               -math.pi + 0.1])
    assert np.all(np.isclose(np.cos(w), np.cos(q)) & np.isclose(np.sin(w), np.sin(q)))


def test_missing_limits_take_the_defaults_and_say_which():
    b = JointBounds(["a", "b", "c"], [50.0, 0.0, np.inf], [np.nan, 2.0, -1.0],
                    [False, True, False], default_effort=7.0, default_velocity=3.0)
    assert b.effort.tolist() == [50.0, 7.0, 7.0] and b.effort_defaulted == ("b", "c")
    assert b.velocity.tolist() == [3.0, 2.0, 3.0] and b.velocity_defaulted == ("a", "c")
    with pytest.raises(ValueError, match="default_velocity_limit"):
        JointBounds(["a"], [1.0], [1.0], [False], default_velocity=math.inf)


def test_a_step_beyond_the_speed_limit_is_cut_back_position_included():
    b = JointBounds(["a", "b"], [1.0, 1.0], [2.0, 2.0], [False, True])
    h = 0.001
    q_prev = np.array([0.5, 3.1412])
    v = np.array([-1e200, 1.0])          # joint a far too fast, b within its limit
    q = q_prev + h * v
    assert b.bound_state(q_prev, q, v, h)
    assert v.tolist() == [-2.0, 1.0] and b.speed_limited.tolist() == [True, False]
    # a: q = q_prev + h v with the limited v; b: 3.1422 passes pi, wrapped
    assert q == pytest.approx([0.5 - 2.0 * h, 3.1422 - 2 * math.pi])
    q2, v2 = np.array([0.1, 0.2]), np.array([1.0, -1.0])
    assert not b.bound_state(q2.copy(), q2, v2, h)  # inside every bound: untouched
