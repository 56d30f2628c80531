"""GearedArm with friction curves and negative levels (issue 23 item 3): every joint_friction.yaml
the reader accepts drives the simulator, which renders the friction τ_f (not the effort offset).

Facts asserted: at constant torque the joint reaches the speed where the curve balances it (on
several segments, both directions, through a gear: the convention τ_u = G(τ_load, v) + τ_f(v));
below the breakaway level it does not move at all (q bit-equal for 10 s); every step obeys the
documented semi-implicit law exactly (the start velocity's segment, implicit within the step);
a level below 0 (Cp + Cn ≥ 0) is simulated as given; the file's offset is left out.
"""

import numpy as np
import pytest

from fric_core.joint_friction import (FrictionCurve, JointFriction, JointFrictionSet,
                                      write_joint_friction)
from fric_core.transmission.dai import asymmetry_from_efficiencies
from fric_core.transmission.geared_arm import ConstantInertia, GearedArm

H = 1e-3
M1, ROTOR1 = 0.02, 0.01  # small inertias: the slowest approach M/s = 0.03/0.05 s is 0.6 s
CURVE = FrictionCurve.make([0.0, 0.1, 0.5, 1.5], [0.3, 0.5, 0.6, 0.65],
                           [0.0, 0.2, 1.0], [0.25, 0.45, 0.7])
#: (torque, the speed where the curve balances it: v_k + (τ − f_k)/s_k on its segment)
BALANCE = [(0.4, 0.05), (0.55, 0.3), (0.62, 0.9), (0.7, 2.5), (-0.35, -0.1), (-0.8, -1.32)]


def _arm(curve=CURVE, v0=0.0, gu=0.0, gv=0.0, **kw):
    return GearedArm(ConstantInertia([[M1]]), gu, gv, ROTOR1, curves=[curve], v0=[v0], **kw)


@pytest.mark.parametrize("tau, v_exp", BALANCE)
def test_constant_torque_reaches_the_speed_where_the_curve_balances_it(tau, v_exp):
    """From rest, 30 s (50 time constants (M + m)/s = 0.6 s of the flattest segments, slope
    0.05: the transient is down to e^-50): the velocity is the analytic balance speed to 1e-9
    relative; a wrong segment would be off by ≥ 1e-2."""
    arm = _arm()
    for _ in range(30000):
        arm.step([tau], H)
    assert arm.v[0] == pytest.approx(v_exp, rel=1e-9)
    assert CURVE.kinetic(arm.v[0]) == pytest.approx(tau, rel=1e-9)
    assert arm.state.friction[0] == pytest.approx(tau, rel=1e-9)


@pytest.mark.parametrize("tau", [0.29, -0.24, 0.0, 0.1])
def test_below_breakaway_the_joint_does_not_drift(tau):
    """τ inside the levels at 0, [−0.25, 0.3]: v exactly 0 and q bit-equal for 10 s."""
    arm = _arm()
    q0 = arm.q.copy()
    for _ in range(10000):
        arm.step([tau], H)
        assert arm.v[0] == 0.0
    assert np.array_equal(arm.q, q0) and arm.state.stuck[0]


def test_every_step_obeys_the_semi_implicit_law():
    """1-DOF, lossless gear: (M + m)(v⁺ − v)/h = τ − τ_step(v⁺) with τ_step the line
    c_k + s_k v⁺ of the segment k of the start velocity v (module docstring), to round-off,
    over an acceleration through every segment and a reversal."""
    arm = _arm()
    taus = np.concatenate([np.full(3000, 0.7), np.full(4000, -0.8), np.full(500, 0.0)])
    checked = 0
    for tau in taus:
        v = arm.v[0]
        v_new = arm.step([tau], H)[0]
        if v == 0.0 or v_new == 0.0 or np.sign(v) != np.sign(v_new):
            continue
        side = 1 if v > 0 else -1
        kv, f, s = CURVE.segments(side)
        s = np.append(s, s[-1])
        k = int(np.searchsorted(kv, abs(v), side="right") - 1)
        c = f[k] - s[k] * kv[k]
        law = side * c + s[k] * v_new
        assert (M1 + ROTOR1) * (v_new - v) / H == pytest.approx(tau - law, abs=1e-9)
        checked += 1
    assert checked > 6000


def test_through_a_gear_the_convention_holds_on_the_curve():
    """η_f = 0.8, η_b = 0.6, load torque 1 N m: driving forwards needs τ_u = 1/η_f + f(v);
    started at v with that torque the joint keeps v (1e-12: round-off) for 1 s."""
    gu, gv = asymmetry_from_efficiencies(0.8, 0.6)
    for v0, load in ((0.3, 1.0), (2.0, 1.0), (-0.6, -1.0), (0.3, -1.0)):
        arm = _arm(v0=v0, gu=gu, gv=gv)
        g = load / 0.8 if load * v0 > 0 else 0.6 * load
        tau = g + CURVE.kinetic(v0)
        for _ in range(1000):
            arm.step([tau], H, tau_load=[load])
        assert abs(arm.v[0] - v0) < 1e-12


def test_negative_level_is_simulated_as_given():
    """Cp = −0.1, Cn = 0.5 (an offset left in the levels): accepted; τ = −0.3 lies in the static
    interval [−0.5, −0.1] and holds; τ = 0 does not — the joint runs to −0.1 + bp v = 0."""
    arm = GearedArm(ConstantInertia([[M1]]), 0.0, 0.0, ROTOR1, Cp=-0.1, Cn=0.5, bp=0.25, bn=0.2)
    for _ in range(3000):
        arm.step([-0.3], H)
    assert arm.v[0] == 0.0 and arm.q[0] == 0.0
    for _ in range(5000):
        arm.step([0.0], H)
    assert arm.v[0] == pytest.approx(0.1 / 0.25, rel=1e-9)
    with pytest.raises(ValueError, match="Cp"):
        GearedArm(ConstantInertia([[M1]]), 0.0, 0.0, ROTOR1, Cp=-0.6, Cn=0.5)


def test_reference_path_matches_the_fast_path_with_curves():
    convex = FrictionCurve.make([0.0, 0.5, 1.0], [0.1, 0.15, 1.2], [0.0, 1.0], [0.1, 0.3])
    dyn = ConstantInertia([[0.3, 0.05], [0.05, 0.2]])
    gu, gv = asymmetry_from_efficiencies(0.85, 0.7)
    rng = np.random.default_rng(3)
    taus = rng.normal(0.0, 2.0, (2000, 2))
    runs = []
    for ref in (False, True):
        arm = GearedArm(dyn, gu, gv, [0.05, 0.05], curves=[CURVE, convex])
        arm.reference = ref
        runs.append(np.array([arm.step(t, H) for t in taus]))
    np.testing.assert_allclose(runs[0], runs[1], rtol=1e-9, atol=1e-12)
    assert np.all(np.isfinite(runs[0]))
    # the convex curve's steep segment has an intercept below −f⁻_0 (1.2 − 2.1 = −0.9): the
    # step's law is kept monotone (the other level lifted), no error, the energy stays bounded
    assert np.max(np.abs(runs[0])) < 50.0


def test_from_joint_friction_reads_curves_negative_levels_and_leaves_the_offset_out(tmp_path):
    fs = JointFrictionSet(model="curve", joints={
        "joint1": JointFriction(0.3, 0.25, 0.2, 0.2, law="curve", curve=CURVE, offset=0.2),
        "joint2": JointFriction(-0.1, 0.5, 0.25, 0.2),
        "joint3": JointFriction(0.0, 0.0, 0.5, 0.5, offset=-0.3)})
    path = write_joint_friction(tmp_path / "joint_friction.yaml", fs)
    dyn = ConstantInertia(np.diag([M1, M1, M1]))
    arm = GearedArm.from_joint_friction(dyn, path, ROTOR1)
    assert arm.curves[0] == CURVE and arm.curves[1] is None
    assert arm.Cp.tolist() == [0.3, -0.1, 0.0] and arm.Cn.tolist() == [0.25, 0.5, 0.0]
    assert arm.bp[0] == pytest.approx(2.0)  # the curve's first slope
    for _ in range(8000):
        arm.step([0.55, -0.3, 0.25], H)
    # joint1 at τ_f = 0.55 (not τ_f + 0.2 = 0.55), joint2 held, joint3 at 0.5 v = 0.25
    np.testing.assert_allclose(arm.v, [0.3, 0.0, 0.5], rtol=1e-9, atol=0.0)
    with pytest.raises(ValueError, match="curves"):
        GearedArm.from_joint_friction(dyn, path, ROTOR1, curves=[None] * 3)


@pytest.mark.parametrize("kwargs, field", [
    (dict(curves=["not a curve"]), "curves"),
    (dict(curves={"nope": CURVE}), "curves"),
    (dict(curves=[CURVE, CURVE]), "curves"),
    (dict(curves=[CURVE], gamma_u=1.5, gamma_v=0.0), "Cp"),
])
def test_bad_curve_arguments_name_the_field(kwargs, field):
    args = dict(gamma_u=0.0, gamma_v=0.0)
    args.update(kwargs)
    with pytest.raises(ValueError, match=field):
        GearedArm(ConstantInertia([[M1]]), args.pop("gamma_u"), args.pop("gamma_v"), ROTOR1,
                  **args)
