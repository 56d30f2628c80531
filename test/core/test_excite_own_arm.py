"""`fric excite` on a user's own arm (issue 24 items 2 and 4), the core side.

Item 2: an arm with a gripper (test/own_arm_urdf.py, written by the test: 7 revolute joints, joint
4's range [−3.07, −0.07] rad excluding 0, two prismatic fingers of range [0, 0.04] m, the second a
``<mimic>`` of the first): the mimic joint and the fingers too short for twice the margin are
left out with their reasons, the rest is excited inside the limits, and the joints not moved are
held at 0 or mid-range.

Item 4: ``fric identify``'s condition number is the one ``fric excite`` minimised (the same
function, :mod:`fric_core.arm_identification.conditioning`), and the advice to excite more comes
only when the motion is the cause.
"""

import math

import numpy as np
import pytest

from own_arm_urdf import ARM_NAMES, FINGERS, write_own_arm_urdf  # test/ (conftest.py)

from fric_core.arm_identification.excitation import (excitable_joints, generate_excitation,
                                                     rest_positions)
from fric_core.arm_setup import mimic_masters
from fric_core.transmission.urdf_dynamics import UrdfDynamics


@pytest.fixture(scope="module")
def own_arm(tmp_path_factory):
    path = write_own_arm_urdf(tmp_path_factory.mktemp("own") / "own_arm.urdf")
    return path, UrdfDynamics(path)


def test_mimic_and_too_short_joints_are_left_out_with_their_reasons(own_arm):
    path, full = own_arm
    mimic = mimic_masters(path.read_text())
    assert mimic == {"own_finger2": "own_finger1"}
    names, left_out = excitable_joints(full, 0.1, mimic)
    assert names == list(ARM_NAMES)
    why = dict(left_out)
    assert set(why) == set(FINGERS)
    # 0.04 m of range is not wider than twice the 0.1 margin (in m for a prismatic joint)
    assert why["own_finger1"] == ("its range [0, 0.04] m is not wider than twice the margin "
                                  "0.1 m")
    assert why["own_finger2"].startswith("a <mimic> of own_finger1")  # mimic wins over short
    # a margin the finger fits in: it is excited, its mimic still follows it
    names, left_out = excitable_joints(full, 0.005, mimic)
    assert names == list(ARM_NAMES) + ["own_finger1"]
    assert [n for n, _ in left_out] == ["own_finger2"]


def test_the_own_arm_is_excited_inside_its_limits_from_its_start(own_arm):
    """Every sample, the first one included, lies within [lower + margin, upper − margin]:
    joint 4 (0 outside its range) is centred in its range, never near 0; the fingers, not
    moved, are held mid-range (0 is not inside their range by the margin)."""
    path, full = own_arm
    margin = 0.1
    traj = generate_excitation(str(path), joint_names=ARM_NAMES, iterations=20, seed=1,
                               margin=margin)
    lo = full.lower[:7] + margin
    hi = full.upper[:7] - margin
    q, _, _ = traj.at(np.linspace(0.0, traj.period, 20_001))  # the continuous trajectory
    assert np.all(q >= lo - 1e-12) and np.all(q <= hi + 1e-12)
    assert np.all(traj.q[0] >= lo) and np.all(traj.q[0] <= hi)  # where it starts
    j4 = ARM_NAMES.index("own_joint4")
    assert traj.q[:, j4].max() <= -0.07 - margin + 1e-12
    held = rest_positions(full, FINGERS, margin)
    assert held == {"own_finger1": pytest.approx(0.02), "own_finger2": pytest.approx(0.02)}
    # joint 4 held (not moved) would sit mid-range, −1.57 rad, not at 0 outside its range
    assert rest_positions(full, ["own_joint4", "own_joint1"], margin) == {
        "own_joint4": pytest.approx(-1.57), "own_joint1": 0.0}


def test_a_rigid_body_direction_no_motion_determines_does_not_stop_the_optimisation():
    """arm7 on a vertical lift: the mass the lift carries is a constant force like a friction
    asymmetry, so the design is singular for every trajectory unless that parameter is held, as
    the fit holds it (before: every shape's figure was inf and nothing was optimised)."""
    dyn = UrdfDynamics("arm7_lift")
    traj = generate_excitation(dyn, iterations=30, seed=0)
    assert math.isfinite(traj.cond_initial) and math.isfinite(traj.cond)
    assert traj.cond < traj.cond_initial


def test_identify_reports_the_figure_excite_minimised_and_blames_no_motion():
    """A trajectory from fric excite for arm7, simulated (gear law, η_f = 0.9, η_b = 0.8) with
    effort noise three orders of magnitude apart between the shoulder and the wrist (a
    current-based effort beside a torque sensor) and identified with the gear law: the fit's
    weighted design has a condition number above COND_WARN (the per-joint weights and the
    efficiencies beside the rigid body), which the old warning reported as "excite the joints
    more (fric excite)". The identification design's figure on the recorded motion agrees with
    excite's within 5 % (measured 0.3 %: 2000 samples of the series against 4000 recorded ones
    at 200 Hz with derivatives of 17-bit positions through the zero-phase filter), and no
    warning tells the user to excite more."""
    from fric_core.arm_identification.fit import COND_WARN, fit_arm_friction
    from fric_core.arm_identification.signals import prepare
    from fric_core.arm_identification.synthetic import simulate_arm_recording
    from fric_core.joint_friction import JointFriction

    dyn = UrdfDynamics("arm7")
    traj = generate_excitation(dyn, iterations=80, seed=2, rate_hz=200.0, periods=2)
    true = {n: JointFriction(Cp=2.0 - 0.2 * j, Cn=1.8 - 0.2 * j, bp=0.5, bn=0.4, eta_f=0.9,
                             eta_b=0.8) for j, n in enumerate(dyn.joint_names)}
    sim = simulate_arm_recording(dyn, traj.t, traj.q, traj.v, traj.a, true,
                                 armature=np.full(dyn.n, 0.05), torque_noise_std=0.0)
    noise = np.array([3.0, 3.0, 1.0, 1.0, 0.003, 0.001, 0.001])  # N·m
    tau = sim.tau + np.random.default_rng(1).normal(size=sim.tau.shape) * noise
    p = prepare(sim.t, sim.q, tau)
    fit = fit_arm_friction(p.q, p.v, p.a, p.effort, dyn, law="gear", method="ols")
    assert fit.cond > COND_WARN
    assert fit.design.cond == pytest.approx(traj.cond, rel=0.05)
    assert not any("excite" in w for w in fit.warnings), fit.warnings
    # the asymmetric law's normal equations are the design itself: the same figure, exactly
    line = fit_arm_friction(p.q, p.v, p.a, p.effort, dyn, law="asymmetric", method="ols")
    assert line.design.cond == pytest.approx(fit.design.cond, rel=0.01)


def test_a_barely_moving_joint_is_named_with_the_advice_to_excite_it():
    """The motion is the cause (joint_a2 moves ±0.02 of its excursion): the identification
    design itself is poorly conditioned, and the warning says so, names its least-determined
    parameters and advises fric excite."""
    from fric_core.arm_identification.fit import COND_WARN, fit_arm_friction
    from fric_core.arm_identification.synthetic import simulate_arm_recording
    from fric_core.joint_friction import JointFriction

    dyn = UrdfDynamics("arm7")
    traj = generate_excitation(dyn, iterations=10, seed=2, rate_hz=200.0, periods=2)
    q0 = 0.5 * (dyn.lower[1] + dyn.upper[1])
    q, v, a = traj.q.copy(), traj.v.copy(), traj.a.copy()
    q[:, 1] = q0 + 0.02 * (q[:, 1] - q0)
    v[:, 1] *= 0.02
    a[:, 1] *= 0.02
    true = {n: JointFriction(Cp=1.0, Cn=0.9, bp=0.3, bn=0.4) for n in dyn.joint_names}
    sim = simulate_arm_recording(dyn, traj.t, q, v, a, true, encoder_counts_per_rev=None)
    fit = fit_arm_friction(q, v, a, sim.tau, dyn, dv=0.002, method="ols")
    assert fit.design.cond > COND_WARN
    warn = [w for w in fit.warnings if w.startswith("poorly conditioned regressor")]
    assert len(warn) == 1 and "joint_a2" in warn[0] and "fric excite" in warn[0], fit.warnings
    assert f"{fit.design.cond:.3g}" in warn[0]
