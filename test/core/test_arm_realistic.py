"""The realistic recording generator (fric_core.arm_identification.realistic, issue 23 item 8):
each effect is what was asked, checked by an independent route where one exists.

Tolerances: exact effects (current scale, offsets, counts of repeated rows and skipped ticks,
rounding) to floating-point precision; the velocity lag through
:func:`~fric_core.arm_identification.signals.estimate_velocity_lag` (sub-sample; half a sample
allowed, its error was < 0.15 sample in trials); the first-order filter through its ODE
``T·dv_r/dt + v_r = v`` with central differences (truncation error ~(ω·dt)²/6 ≈ 1e-5 of the
signal at 0.5 Hz and 500 Hz: 1e-3 allowed); jitter statistics from ~3000 stamps: the sample
mean and std of an exponential latency have relative standard errors 1.8 % and 2.6 %, of a
Gaussian 1.3 %: 10 % allowed (≥ 3.8 standard errors).
"""

import math

import numpy as np
import pytest

from fric_core.arm_identification.realistic import (LIFT_FRICTION, PANDA_FRICTION,
                                                    SERVICE_ROBOT_RATE, SigmoidFriction,
                                                    default_friction, realistic_recording,
                                                    round_significant, write_realistic)
from fric_core.arm_identification.recording import read_arm_recording
from fric_core.arm_identification.signals import estimate_velocity_lag
from fric_core.transmission.urdf_dynamics import UrdfDynamics

#: every effect off: the reference the tests switch one effect on against
CLEAN = dict(offsets=False, current=False, velocity=True, velocity_time_constant=0.0,
             velocity_noise_std=0.0, effort_noise_std=0.0, jitter=0.0, repeat_fraction=0.0,
             skip_fraction=0.0, digits=None, stamp_resolution=None,
             encoder_counts_per_rev=None, linear_resolution=None)
G = 9.81


@pytest.fixture(scope="module")
def lift_arm():
    return UrdfDynamics("arm7_lift")


def test_sigmoid_is_gaz_et_al_form():
    law = PANDA_FRICTION[1]  # Panda joint 2: φ1 0.87224 N·m, φ2 9.0657 s/rad, φ3 0.025882 rad/s
    v = np.array([-1.0, -0.05, 0.0, 0.01, 0.3, 2.0])
    phi1, phi2, phi3 = 0.87224, 9.0657, 0.025882
    direct = phi1 / (1 + np.exp(-phi2 * (v + phi3))) - phi1 / (1 + np.exp(-phi2 * phi3))
    np.testing.assert_allclose(law.kinetic(v), direct, rtol=1e-12, atol=1e-15)
    assert law.kinetic(0.0) == 0.0
    s0 = 1 / (1 + math.exp(-phi2 * phi3))
    assert law.forward_level == pytest.approx(phi1 * (1 - s0), rel=1e-12)
    assert law.backward_level == pytest.approx(-phi1 * s0, rel=1e-12)
    assert law.kinetic(50.0) == pytest.approx(law.forward_level, rel=1e-12)
    assert law.forward_level != -law.backward_level  # asymmetric (φ3 ≠ 0)
    np.testing.assert_array_equal(law.gear(np.array([3.0, -2.0]), np.array([1.0, 1.0])),
                                  [3.0, -2.0])
    lin = SigmoidFriction(10.0, 100.0, 0.0, viscous=5.0)
    assert lin.kinetic(2.0) == pytest.approx(5.0 + 10.0 + 0.5 * 0.0 - 0.0, rel=1e-9)


def test_default_friction_assigns_panda_joints_in_order_and_the_lift(lift_arm):
    law = default_friction(lift_arm)
    assert law["torso_lift"] is LIFT_FRICTION
    assert [law[f"joint_a{i}"] for i in range(1, 8)] == list(PANDA_FRICTION)


def test_prismatic_effort_is_mass_times_acceleration_plus_gravity():
    dyn = UrdfDynamics("arm7_lift", joint_names=["torso_lift"])  # the arm held at 0
    zero = {"torso_lift": SigmoidFriction(0.0, 1.0, 0.0)}
    r = realistic_recording(dyn, duration=10.0, rate=200.0, friction=zero, **CLEAN)
    tr = r.truth
    mass = 8.0 + 4.0 + 4.0 + 3.0 + 2.7 + 1.7 + 1.8 + 0.3  # carriage + arm7's links [kg]
    np.testing.assert_allclose(r.recording.effort[:, 0], mass * (tr.a[:, 0] + G), rtol=1e-9)
    assert tr.units["torso_lift"]["effort"] == "N" and tr.units["torso_lift"]["position"] == "m"
    # metres inside the stroke (0–0.35 m less 0.02 m), speed within 0.8 × 0.15 m/s
    q = r.recording.q[:, 0]
    assert 0.02 - 1e-12 <= q.min() and q.max() <= 0.33 + 1e-12 and np.ptp(q) > 0.1
    assert np.abs(tr.v[:, 0]).max() <= 0.8 * 0.15 + 1e-9


def test_current_scale_and_offsets(lift_arm):
    on = dict(CLEAN, offsets=True, current=True)
    r = realistic_recording(lift_arm, duration=4.0, rate=250.0, seed=5, **on)
    tr = r.truth
    K = np.array([tr.effort_scale[n] for n in tr.joint_names])
    np.testing.assert_allclose(K, lift_arm.effort / 20.0)  # 20 A drives: 50 N/A, 16 N·m/A, ...
    off = np.array([tr.offsets[n] for n in tr.joint_names])
    np.testing.assert_allclose(r.recording.effort * K, tr.tau + off, rtol=1e-12, atol=1e-12)
    lin = np.array([k == "prismatic" for k in lift_arm.joint_kinds])
    assert np.all((np.abs(off[lin]) >= 2.0) & (np.abs(off[lin]) <= 10.0))
    assert np.all((np.abs(off[~lin]) >= 0.1) & (np.abs(off[~lin]) <= 0.5))
    assert (off > 0).any() and (off < 0).any()
    # given per joint: K for one joint, the rest the default; offsets given, others 0
    r = realistic_recording(lift_arm, duration=4.0, rate=250.0,
                            **dict(CLEAN, current={"joint_a1": 12.5},
                                   offsets={"joint_a2": -0.3}))
    assert r.truth.effort_scale["joint_a1"] == 12.5 and r.truth.effort_scale["joint_a7"] == 2.0
    assert r.truth.offsets == {n: (-0.3 if n == "joint_a2" else 0.0) for n in
                               lift_arm.joint_names}


@pytest.mark.parametrize("delay", [0.1, 0.3])
def test_velocity_delay_is_what_was_asked(lift_arm, delay):
    r = realistic_recording(lift_arm, duration=30.0, rate=200.0, seed=1,
                            **dict(CLEAN, velocity_delay=delay, velocity_noise_std=None,
                                   encoder_counts_per_rev=2 ** 17, linear_resolution=1e-6))
    rec = r.recording
    est = estimate_velocity_lag(rec.t, rec.q, rec.v)
    assert np.all(np.abs(est.lag - delay) < 0.5 * est.step), est.lag
    assert r.truth.velocity_delay == delay


def test_velocity_first_order_filter_obeys_its_ode(lift_arm):
    T = 0.2
    r = realistic_recording(lift_arm, duration=10.0, rate=500.0, seed=2,
                            **dict(CLEAN, velocity_time_constant=T))
    t, vr, v = r.recording.t, r.truth.v_recorded_clean, r.truth.v
    dvr = (vr[2:] - vr[:-2]) / (t[2:] - t[:-2])[:, None]
    resid = T * dvr + vr[1:-1] - v[1:-1]
    assert np.all(np.sqrt(np.mean(resid ** 2, axis=0)) < 1e-3 * np.sqrt(np.mean(v ** 2, axis=0)))
    # and it lags: the recorded column is not the true one
    assert np.all(np.abs(vr - v).max(axis=0) > 0.1 * np.abs(v).max(axis=0))


def test_loop_jitter_statistics_at_service_robot_rate(lift_arm):
    jit = 0.7e-3
    r = realistic_recording(lift_arm, duration=30.0, rate=SERVICE_ROBOT_RATE, seed=4,
                            **dict(CLEAN, jitter=jit, jitter_mode="loop"))
    t, tr = r.recording.t, r.truth
    late = t - (0.1 + tr.tick / SERVICE_ROBOT_RATE)  # start 0.1 s, 10 ms ticks
    assert late.size == 3000 and np.all(late >= 0)
    assert np.mean(late) == pytest.approx(jit, rel=0.1)
    assert np.std(late) == pytest.approx(jit, rel=0.1)
    assert np.all(np.diff(t) > 0)
    np.testing.assert_array_equal(t, tr.t_sample)  # values at their stamps
    assert np.median(np.diff(t)) == pytest.approx(0.01, abs=jit)


def test_stamp_jitter_statistics(lift_arm):
    jit = 8.8e-3
    r = realistic_recording(lift_arm, duration=30.0, rate=SERVICE_ROBOT_RATE, seed=4,
                            **dict(CLEAN, jitter=jit, jitter_mode="stamp"))
    err = r.recording.t - r.truth.t_sample
    assert np.std(err) == pytest.approx(jit, rel=0.1)
    assert abs(np.mean(err)) < 4 * jit / math.sqrt(err.size)
    assert np.abs(err).max() <= 3.05 * jit  # cut at ±3 std of the normal before rescaling
    np.testing.assert_allclose(r.truth.t_sample, 0.1 + r.truth.tick / 100.0, rtol=0, atol=1e-12)
    assert np.any(np.diff(r.recording.t) < 0)  # 8.8 ms at 10 ms ticks: some stamps go back


def test_repeated_rows_skipped_ticks_and_digits(lift_arm):
    r = realistic_recording(lift_arm, duration=20.0, rate=500.0, seed=7)
    rec, tr = r.recording, r.truth
    n_ticks = 10000 - round(0.017 * 10000)
    assert tr.skipped.size == 170
    assert np.unique(tr.tick).size == n_ticks
    assert not np.isin(tr.skipped, tr.tick).any()
    assert tr.repeated.size == round(0.055 * n_ticks) and len(rec) == n_ticks + tr.repeated.size
    k = tr.repeated
    assert np.array_equal(rec.t[k], rec.t[k - 1]) and np.array_equal(rec.q[k], rec.q[k - 1])
    assert np.array_equal(rec.effort[k], rec.effort[k - 1])
    for x in (rec.q, rec.v, rec.effort):
        assert np.array_equal(round_significant(x, 6), x)
    assert np.abs(rec.t * 1e6 - np.round(rec.t * 1e6)).max() < 1e-6  # whole microseconds
    # 6 digits: within half a unit of the 6th digit of the unrounded value
    unrounded = realistic_recording(lift_arm, duration=20.0, rate=500.0, seed=7, digits=None)
    rel = np.abs(rec.effort - unrounded.recording.effort) / np.abs(unrounded.recording.effort)
    assert np.nanmax(rel) <= 5e-6
    # stale repeats: new stamps, the row before's values
    s = realistic_recording(lift_arm, duration=20.0, rate=500.0, seed=7, repeat_mode="stale")
    k = s.truth.repeated
    assert len(s.recording) == n_ticks and np.all(s.recording.t[k] > s.recording.t[k - 1])
    assert np.array_equal(s.recording.q[k], s.recording.q[k - 1])


def test_deterministic_from_the_seed(lift_arm):
    a = realistic_recording(lift_arm, duration=3.0, rate=200.0, seed=11)
    b = realistic_recording(lift_arm, duration=3.0, rate=200.0, seed=11)
    c = realistic_recording(lift_arm, duration=3.0, rate=200.0, seed=12)
    for name in ("t", "q", "v", "effort"):
        assert np.array_equal(getattr(a.recording, name), getattr(b.recording, name))
    assert a.truth.offsets == b.truth.offsets != c.truth.offsets
    assert not np.array_equal(a.recording.effort[:50], c.recording.effort[:50])


def test_written_csv_and_bag_read_back(lift_arm, tmp_path):
    r = realistic_recording(lift_arm, duration=3.0, rate=200.0, seed=3)
    rec = r.recording
    write_realistic(tmp_path / "log.csv", r)
    back = read_arm_recording(tmp_path / "log.csv")
    # the reader keeps the later of two rows with one stamp (the CSV as the bag): duplicates gone
    keep = np.append(rec.t[1:] != rec.t[:-1], True)
    assert back.joint_names == rec.joint_names and len(back) == int(keep.sum())
    np.testing.assert_array_equal(back.effort, rec.effort[keep])
    np.testing.assert_allclose(back.t, (rec.t - rec.t[0])[keep], rtol=0, atol=1e-12)
    bag = write_realistic(tmp_path / "bag", r)
    back = read_arm_recording(bag)
    # the bag reader merges rows with the same stamp: the duplicates are gone
    assert len(back) == len(rec) - r.truth.repeated.size
    np.testing.assert_allclose(back.q, np.delete(rec.q, r.truth.repeated, axis=0), rtol=0,
                               atol=0)


@pytest.mark.parametrize("kwargs, words", [
    ({"jitter_mode": "wobble"}, "jitter_mode: expected one of"),
    ({"repeat_fraction": 0.7}, "repeat_fraction: expected a fraction"),
    ({"friction": {"joint_a1": PANDA_FRICTION[0]}}, "friction: no law for joint(s)"),
    ({"current": {"joint_a1": -2.0}}, "current: K must be > 0"),
    ({"offsets": {"elbow": 0.2}}, "offsets: joint(s) ['elbow'] not in the arm"),
    ({"velocity_delay": -0.1}, "velocity_delay: expected a finite number of seconds >= 0"),
    ({"digits": 0}, "digits: expected an integer 1..17"),
])
def test_bad_arguments_name_the_field(lift_arm, kwargs, words):
    with pytest.raises(ValueError) as e:
        realistic_recording(lift_arm, duration=1.0, rate=100.0, **kwargs)
    assert words in str(e.value) and "\n" not in str(e.value)
