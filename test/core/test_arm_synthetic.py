"""Issue 15: the simulated arm recordings (fric_core.arm_identification.synthetic).

The recording must be what the gear convention of joint_friction.py says (paper 004): the effort
is m·q̈ + G(τ_load, q̇) + τ_f(q̇) plus white noise of the given std; positions sit on the encoder's
grid within half a count of the truth; the trajectory stays inside the joint limits; seeds fix it.
"""

import numpy as np
import pytest

from fric_core.arm_identification.joint_friction import JointFriction
from fric_core.arm_identification.synthetic import multisine_trajectory, simulate_arm_recording
from fric_core.transmission.urdf_dynamics import UrdfDynamics


@pytest.fixture(scope="module")
def dyn():
    return UrdfDynamics("arm7")


def _friction(dyn, gear=False):
    return {n: JointFriction(0.5, 0.4, 0.2, 0.3, eta_f=0.8 if gear else None,
                             eta_b=0.7 if gear else None) for n in dyn.joint_names}


def test_trajectory_inside_limits_with_analytic_derivatives(dyn):
    t, q, v, a = multisine_trajectory(dyn, duration=10.0, rate=500.0, amplitude=2.5, seed=3)
    assert np.all(q >= dyn.lower + 0.2 - 1e-12) and np.all(q <= dyn.upper - 0.2 + 1e-12)
    dt = t[1] - t[0]
    # central differences agree with the analytic derivatives to O(dt²·ω³)
    assert np.allclose(np.gradient(q, dt, axis=0)[1:-1], v[1:-1], atol=1e-3)
    assert np.allclose(np.gradient(v, dt, axis=0)[1:-1], a[1:-1], atol=1e-3)
    assert np.all(v.max(axis=0) > 0.2) and np.all(v.min(axis=0) < -0.2)


def test_effort_follows_the_gear_convention(dyn):
    t, q, v, a = multisine_trajectory(dyn, duration=4.0, rate=200.0, seed=1)
    m = np.linspace(0.1, 0.7, dyn.n)
    fr = _friction(dyn, gear=True)
    rec = simulate_arm_recording(dyn, t, q, v, a, fr, armature=m, torque_noise_std=0.05, seed=2)
    tl = np.array([dyn.mass_matrix(q[k]) @ a[k] + dyn.bias(q[k], v[k]) for k in range(t.size)])
    assert np.allclose(rec.tau_load, tl, atol=1e-9)
    drive = tl * v > 0
    G = np.where(drive, tl / 0.8, 0.7 * tl)
    f = np.where(v > 0, 0.5 + 0.2 * v, -0.4 + 0.3 * v)
    assert np.allclose(rec.tau_true, m * a + G + f, atol=1e-9)
    noise = rec.tau - rec.tau_true
    assert abs(noise.std() - 0.05) < 0.05 * 0.05  # 5600 samples: the std's own spread is ~1 %
    assert abs(noise.mean()) < 4 * 0.05 / np.sqrt(noise.size)


def test_encoder_quantisation_and_seeds(dyn):
    t, q, v, a = multisine_trajectory(dyn, duration=2.0, rate=200.0, seed=1)
    rec = simulate_arm_recording(dyn, t, q, v, a, _friction(dyn), seed=4)
    res = 2 * np.pi / 2 ** 17
    assert rec.encoder_resolution == pytest.approx(res)
    assert np.all(np.abs(rec.q - q) <= 0.5 * res + 1e-15)
    assert np.allclose(np.round(rec.q / res), rec.q / res, atol=1e-6)
    again = simulate_arm_recording(dyn, t, q, v, a, _friction(dyn), seed=4)
    assert np.array_equal(rec.tau, again.tau)
    other = simulate_arm_recording(dyn, t, q, v, a, _friction(dyn), seed=5)
    assert not np.array_equal(rec.tau, other.tau)
    # no efficiencies: G = τ_load
    assert np.allclose(rec.tau_true - rec.tau_load,
                       np.where(v > 0, 0.5 + 0.2 * v, -0.4 + 0.3 * v), atol=1e-9)


def test_bad_input_is_named(dyn):
    t, q, v, a = multisine_trajectory(dyn, duration=1.0, rate=100.0)
    fr = _friction(dyn)
    with pytest.raises(ValueError, match="friction: no entry for joint"):
        simulate_arm_recording(dyn, t, q, v, a, {"joint_a1": fr["joint_a1"]})
    with pytest.raises(ValueError, match="armature: expected 7"):
        simulate_arm_recording(dyn, t, q, v, a, fr, armature=[1.0, 2.0])
    with pytest.raises(ValueError, match="encoder_counts_per_rev"):
        simulate_arm_recording(dyn, t, q, v, a, fr, encoder_counts_per_rev=0)
