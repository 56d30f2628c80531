"""fric_core.mujoco.FrictionStepper: exact joint friction inside MuJoCo (issue 25).

Held joints stay put to round-off for 10 s at 50 % and 90 % of breakaway (MuJoCo's frictionloss
creeps), break away at 101 % with the acceleration (τ − C)/I, a link resting on a table stays at
rest, the effective mass is MuJoCo's own (implicitfast), and the stepper follows fric's own
GearedArm on the same arm and friction.
"""

from pathlib import Path

import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco", reason="the optional extra [mujoco] is not installed")

import fric_core.mujoco as fric_mujoco  # noqa: E402
from fric_core.joint_friction import JointFriction, JointFrictionSet  # noqa: E402
from fric_core.mujoco import FrictionLossWarning, FrictionStepper  # noqa: E402
from fric_core.mujoco_kernel import COMPILED  # noqa: E402

ARM_URDF = Path(__file__).resolve().parents[2] / "urdf" / "arm7.urdf"
H = 1e-3
HOLD_STEPS = 10_000  # 10 s at 1 kHz
#: a pose where gravity loads the shoulder, elbow and wrist, and torques on the other joints
ARM_Q0 = np.array([0.3, 0.6, 0.2, -1.2, 0.4, 0.9, 0.1])
ARM_EXTRA = np.array([3.0, 0.0, 2.0, 0.0, 1.5, 0.0, 0.5])

HINGE_XML = """<mujoco><compiler angle="radian"/><option timestep="{h}" integrator="{integ}"/>
<worldbody><body><joint name="j" type="hinge" axis="0 0 1" damping="{damp}" armature="0.05"/>
<geom type="box" size="0.5 0.05 0.05" pos="0.5 0 0" mass="3"/></body></worldbody>
{act}</mujoco>"""


@pytest.fixture(autouse=True, params=["compiled", "numpy"])
def step_path(request, monkeypatch):
    """Every test runs with both implementations of FrictionStepper.step: the compiled kernel
    (fric_core.mujoco_kernel; skipped where it is not built) and the numpy step."""
    if request.param == "numpy":
        monkeypatch.setattr(fric_mujoco, "make_kernel", lambda stepper: (None, "numpy under test"))
    elif not COMPILED:
        pytest.skip("fric_core._mujoco_kernel is not built")
    else:
        build = fric_mujoco.make_kernel

        def compiled_only(stepper):
            kernel, reason = build(stepper)
            assert kernel is not None, reason
            return kernel, reason
        monkeypatch.setattr(fric_mujoco, "make_kernel", compiled_only)
    return request.param


def hinge(integ="Euler", damp=0.0, act=""):
    m = mujoco.MjModel.from_xml_string(HINGE_XML.format(h=H, integ=integ, damp=damp, act=act))
    return m, mujoco.MjData(m)


def friction(levels, slope=0.0, names=None, **gear):
    names = names or [f"joint_a{i + 1}" for i in range(len(levels))]
    return JointFrictionSet({n: JointFriction(Cp=float(c), Cn=float(c), bp=slope, bn=slope,
                                              **gear) for n, c in zip(names, levels)})


def arm(integrator=None, armature=0.0):
    spec = mujoco.MjSpec.from_file(str(ARM_URDF))
    spec.option.timestep = H
    if integrator is not None:
        spec.option.integrator = integrator
    m = spec.compile()
    m.dof_armature[:] = armature
    d = mujoco.MjData(m)
    d.qpos[:] = ARM_Q0
    return m, d


def arm_load():
    """The net static torque on each joint at ARM_Q0 (gravity plus ARM_EXTRA applied) and the
    joint-space inertia there."""
    m, d = arm()
    mujoco.mj_forward(m, d)
    M = np.zeros((m.nv, m.nv))
    mujoco.mj_fullM(m, d, M)
    return ARM_EXTRA - d.qfrc_bias, M


def full_mass(m, d):
    M = np.zeros((m.nv, m.nv))
    mujoco.mj_fullM(m, d, M)
    return M


# -- held below breakaway -------------------------------------------------------------------
@pytest.mark.parametrize("ratio", [0.5, 0.9])
@pytest.mark.parametrize("integ", ["Euler", "implicitfast"])
def test_hinge_held_below_breakaway_for_10_s(ratio, integ):
    C = 2.0
    m, d = hinge(integ, damp=0.3)
    st = FrictionStepper(m, d, friction([C], 0.1, ["j"]))
    d.qfrc_applied[0] = ratio * C
    for _ in range(HOLD_STEPS):
        st.step()
    # exact stiction: the velocity MuJoCo integrates is the solved 0 to round-off (~1e-16 per
    # step), so 10 s move the joint by far less than 1e-9 rad
    assert abs(d.qpos[0]) <= 1e-9
    assert st.stuck.all()
    assert d.time == pytest.approx(10.0)
    assert d.qfrc_applied[0] == ratio * C  # the user's applied torque is left as it was


def test_hinge_frictionloss_creeps():
    """MuJoCo's own frictionloss at the same level: the soft constraint creeps (shown, not
    held to a figure: ~1e-2 rad in 10 s at 50 % with the default solref/solimp)."""
    C = 2.0
    m, d = hinge()
    m.dof_frictionloss[0] = C
    d.qfrc_applied[0] = 0.5 * C
    for _ in range(HOLD_STEPS):
        mujoco.mj_step(m, d)
    assert abs(d.qpos[0]) > 1e-4


@pytest.mark.parametrize("integ", ["Euler", "implicitfast"])
def test_hinge_breaks_away_at_101_percent(integ):
    C, tau = 2.0, 2.02
    m, d = hinge(integ)
    st = FrictionStepper(m, d, friction([C], 0.0, ["j"]))
    d.qfrc_applied[0] = tau
    st.step()
    inertia = full_mass(m, d)[0, 0]  # the link's inertia about the axis plus the armature
    expected = (tau - C) / inertia
    assert d.qvel[0] / H == pytest.approx(expected, rel=0.01)
    for _ in range(99):
        st.step()
    # constant acceleration: v(0.1 s) = 0.1 (τ − C)/I (semi-implicit Euler is exact for it)
    assert d.qvel[0] == pytest.approx(0.1 * expected, rel=1e-9)
    assert not st.stuck[0]


@pytest.mark.parametrize("ratio", [0.5, 0.9])
def test_arm_held_below_breakaway_for_10_s(ratio):
    load, _ = arm_load()
    m, d = arm()
    d.qfrc_applied[:] = ARM_EXTRA
    st = FrictionStepper(m, d, friction(np.abs(load) / ratio, 0.2))
    for _ in range(HOLD_STEPS):
        st.step()
    assert np.abs(d.qpos - ARM_Q0).max() <= 1e-9
    assert st.stuck.all()
    # the friction holds exactly the static load (gravity plus the applied torques)
    np.testing.assert_allclose(st.friction_torque, load, rtol=1e-9, atol=1e-9)


def test_arm_frictionloss_creeps():
    load, _ = arm_load()
    m, d = arm()
    d.qfrc_applied[:] = ARM_EXTRA
    m.dof_frictionloss[:] = np.abs(load) / 0.5
    for _ in range(2000):
        mujoco.mj_step(m, d)
    assert np.abs(d.qpos - ARM_Q0).max() > 1e-4


@pytest.mark.parametrize("joint", [1, 3])
def test_arm_joint_breaks_away_at_101_percent(joint):
    """One joint at 101 % of its breakaway, the others at 50 %: it slides with the others held,
    so its acceleration is (τ − C)/M_jj (the inertia with the other joints locked)."""
    load, M = arm_load()
    C = np.abs(load) / 0.5
    C[joint] = abs(load[joint]) / 1.01
    m, d = arm()
    d.qfrc_applied[:] = ARM_EXTRA
    st = FrictionStepper(m, d, friction(C))
    st.step()
    expected = (load[joint] - np.sign(load[joint]) * C[joint]) / M[joint, joint]
    assert d.qvel[joint] / H == pytest.approx(expected, rel=0.01)
    others = np.arange(7) != joint
    assert st.stuck[others].all() and not st.stuck[joint]
    assert np.abs(d.qvel[others]).max() <= 1e-12  # 0 to MuJoCo's round-off


# -- contact ----------------------------------------------------------------------------------
@pytest.mark.parametrize("integ", ["Euler", "implicitfast"])
def test_arm_resting_a_link_on_a_table(integ):
    """The shoulder's friction holds half its gravity load: the arm sags onto a table under
    the flange and rests there (contact solved by MuJoCo after the friction, with the last
    step's constraint forces as the friction's load): no drift, no explosion."""
    spec = mujoco.MjSpec.from_file(str(ARM_URDF))
    spec.option.timestep = H
    spec.option.integrator = getattr(mujoco.mjtIntegrator, f"mjINT_{integ.upper()}")
    ball = spec.body("link7").add_geom()
    ball.type, ball.size[0], ball.pos = mujoco.mjtGeom.mjGEOM_SPHERE, 0.04, [0, 0, 0.1]
    ball.mass = 0.0
    table = spec.worldbody.add_geom()
    table.type, table.size, table.pos = mujoco.mjtGeom.mjGEOM_BOX, [0.3, 0.3, 0.02], [0.8, 0, 0.23]
    m = spec.compile()
    d = mujoco.MjData(m)
    d.qpos[:] = [0.0, 1.2, 0.0, -0.6, 0.0, 0.5, 0.0]
    mujoco.mj_forward(m, d)
    levels = np.full(7, 40.0)
    levels[1] = 0.5 * abs(d.qfrc_bias[1])
    st = FrictionStepper(m, d, friction(levels, 0.5))
    q = []
    for _ in range(HOLD_STEPS):
        st.step()
        q.append(d.qpos.copy())
    q = np.array(q)
    assert np.isfinite(q).all()
    assert d.ncon >= 1  # resting on the table
    assert q[-1, 1] - 1.2 > 1e-3  # the shoulder sagged until the table stopped it
    assert np.abs(q[-1] - q[HOLD_STEPS // 2]).max() <= 1e-9  # and then no drift
    assert np.abs(d.qvel).max() <= 1e-8


# -- MuJoCo's own effective mass -------------------------------------------------------------
def test_implicitfast_effective_mass_is_mujocos():
    """With damping, actuator damping and position / velocity servos (velocity terms kv and a
    velocity gain on ctrl), the matrix the friction is solved on is M − h·qDeriv of MuJoCo's own
    implicitfast step (read from the step that used it)."""
    act = """<actuator><position joint="j" kp="50" kv="3"/><velocity joint="j" kv="2"/>
    <general joint="j" gaintype="affine" gainprm="1 0 -4" damping="0.7"/></actuator>"""
    m, d = hinge("implicitfast", damp=0.4, act=act)
    st = FrictionStepper(m, d, friction([1.0], 0.1, ["j"]))
    d.ctrl[:] = [0.2, 0.1, 0.5]
    d.qvel[0] = 0.3
    for _ in range(5):
        st.step()
    mujoco.mj_step1(m, d)
    mujoco.mj_fwdActuation(m, d)
    mine = st.effective_mass(np.zeros((1, 1)))
    mujoco.mj_step2(m, d)  # implicitfast leaves the derivative it used in qDeriv
    expected = full_mass(m, d)[0, 0] - H * d.qDeriv[0]
    # −(0.4 + 0.7 + 3 + 2 + 4·0.5): the damping, the actuator damping, both kv and the gain
    assert d.qDeriv[0] == pytest.approx(-8.1, rel=1e-12)
    assert mine[0, 0] == pytest.approx(expected, rel=1e-14)


def test_joint_arriving_at_rest_stops_in_one_step_implicitfast():
    """A slowly moving joint whose friction can stop it within one step ends that step at
    exactly 0: only when the stopping torque is computed on MuJoCo's effective mass."""
    act = '<actuator><position joint="j" kp="0" kv="5"/></actuator>'
    m, d = hinge("implicitfast", damp=0.5, act=act)
    st = FrictionStepper(m, d, friction([3.0], 0.1, ["j"]))
    d.qvel[0] = 1e-3
    st.step()
    assert d.qvel[0] == pytest.approx(0.0, abs=1e-17)
    assert st.stuck[0]


@pytest.mark.parametrize("flag", ["mjDSBL_EULERDAMP", "mjDSBL_DAMPER"])
def test_joint_arriving_at_rest_stops_in_one_step_euler_without_implicit_damping(flag):
    """With eulerdamp or damper disabled MuJoCo's Euler step inverts M alone (the damping
    explicit or off): the friction is solved on that matrix, so the joint stops at exactly 0
    (on M + h·damping it kept ~5e-7 rad/s)."""
    m, d = hinge("Euler", damp=0.5)
    m.opt.disableflags |= int(getattr(mujoco.mjtDisableBit, flag))
    st = FrictionStepper(m, d, friction([3.0], 0.1, ["j"]))
    d.qvel[0] = 1e-3
    st.step()
    assert d.qvel[0] == pytest.approx(0.0, abs=1e-17)
    assert st.stuck[0]


# -- the same physics as GearedArm ------------------------------------------------------------
def test_matches_geared_arm_on_the_same_arm():
    """FrictionStepper (MuJoCo's arm7 with armature = the rotor inertia) and GearedArm (Pinocchio's
    arm7, the same friction file with gear efficiencies) under the same joint torques: the
    same trajectory (both are (69) with semi-implicit Euler; the dynamics agree to round-off)."""
    from fric_core.transmission.geared_arm import GearedArm
    from fric_core.transmission.urdf_dynamics import UrdfDynamics

    load, _ = arm_load()
    fs = friction(np.abs(load) / 0.7, 0.3, eta_f=0.8, eta_b=0.7)
    rotor = 0.05
    m, d = arm(armature=rotor)
    m.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_LIMIT)  # GearedArm has no stops here
    st = FrictionStepper(m, d, fs)
    ga = GearedArm.from_joint_friction(UrdfDynamics(str(ARM_URDF)), fs, rotor, q0=ARM_Q0)
    assert ga.joint_names == st.joint_names
    t = np.arange(400) * H
    tau = ARM_EXTRA[None, :] + 20.0 * np.sin(2 * np.pi * 2.0 * t)[:, None] * np.linspace(
        1.0, 0.2, 7)[None, :]
    stuck_any = 0
    for k in range(t.size):
        d.qfrc_applied[:] = tau[k]  # MuJoCo: an applied torque is a load (τ_v), as in GearedArm
        st.step()
        ga.step(np.zeros(7), H, tau_load=-tau[k])
        np.testing.assert_array_equal(st.stuck, ga.state.stuck)
        stuck_any += int(st.stuck.sum())
    # M and the bias forces of MuJoCo and Pinocchio agree to ~1e-14: so do the trajectories
    np.testing.assert_allclose(d.qpos, ga.q, rtol=0, atol=1e-12)
    np.testing.assert_allclose(d.qvel, ga.v, rtol=0, atol=1e-11)
    assert 0 < stuck_any < 7 * t.size  # both sticking and sliding happened


def test_matches_geared_arm_with_asymmetric_slopes_and_curves():
    """As above with bp != bn and two curve joints (slopes 20 / 10 from rest): a joint the last
    step left stuck starts the next step at rest (GearedArm's velocity there is exactly 0, the
    mean slope; MuJoCo's is its round-off of 0, whose sign must not pick the slope): the same
    trajectory through sticking, breakaways and sliding."""
    from fric_core.joint_friction import FrictionCurve
    from fric_core.transmission.geared_arm import GearedArm
    from fric_core.transmission.urdf_dynamics import UrdfDynamics

    load, _ = arm_load()
    curve = FrictionCurve.make([0.0, 0.05, 0.5], [4.0, 5.0, 9.0], [0.0, 0.1, 1.0], [3.0, 4.0, 7.0])
    joints = {f"joint_a{i + 1}": JointFriction(Cp=float(c), Cn=float(c), bp=0.5, bn=0.1)
              for i, c in enumerate(np.abs(load) / 0.7)}
    for n in ("joint_a2", "joint_a4"):
        joints[n] = JointFriction(Cp=4.0, Cn=3.0, bp=20.0, bn=10.0, law="curve", curve=curve)
    fs = JointFrictionSet(joints)
    m, d = arm(armature=0.05)
    m.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_LIMIT)
    st = FrictionStepper(m, d, fs)
    ga = GearedArm.from_joint_friction(UrdfDynamics(str(ARM_URDF)), fs, 0.05, q0=ARM_Q0)
    t = np.arange(600) * H
    tau = ARM_EXTRA[None, :] + 20.0 * np.sin(2 * np.pi * 2.0 * t)[:, None] * np.linspace(
        1.0, 0.2, 7)[None, :]
    for k in range(t.size):
        d.qfrc_applied[:] = tau[k]
        st.step()
        ga.step(np.zeros(7), H, tau_load=-tau[k])
        np.testing.assert_array_equal(st.stuck, ga.state.stuck)
    np.testing.assert_allclose(d.qpos, ga.q, rtol=0, atol=1e-12)
    np.testing.assert_allclose(d.qvel, ga.v, rtol=0, atol=1e-11)


# -- bad input ------------------------------------------------------------------------------------
def test_unknown_and_wrong_joints_are_named():
    m, d = hinge()
    with pytest.raises(ValueError, match=r"\['elbow'\] not in the MuJoCo model"):
        FrictionStepper(m, d, friction([1.0, 1.0], names=["j", "elbow"]))
    m = mujoco.MjModel.from_xml_string(
        '<mujoco><worldbody><body><joint name="b" type="ball"/><geom size=".1"/></body>'
        '</worldbody></mujoco>')
    with pytest.raises(ValueError, match=r"\['b'\] are not hinge or slide"):
        FrictionStepper(m, mujoco.MjData(m), friction([1.0], names=["b"]))


def test_unsupported_integrator_is_refused():
    m, d = hinge("RK4")
    with pytest.raises(ValueError, match="integrator: RK4 is not supported"):
        FrictionStepper(m, d, friction([1.0], names=["j"]))
    m, d = hinge("implicitfast")
    m.opt.density = 1.2
    with pytest.raises(ValueError, match="fluid forces"):
        FrictionStepper(m, d, friction([1.0], names=["j"]))


def test_sleep_is_refused():
    m, d = hinge()
    m.opt.enableflags |= int(mujoco.mjtEnableBit.mjENBL_SLEEP)
    with pytest.raises(ValueError, match="model.opt.enableflags: sleep is not supported"):
        FrictionStepper(m, d, friction([1.0], names=["j"]))


def test_frictionloss_of_mapped_joints_is_replaced():
    m, d = hinge()
    m.dof_frictionloss[0] = 0.7
    with pytest.warns(FrictionLossWarning, match="'j': 0.7"):
        FrictionStepper(m, d, friction([1.0], names=["j"]))
    assert m.dof_frictionloss[0] == 0.0


def test_curve_law_slides_at_the_speed_where_the_curve_balances_the_torque():
    """law: curve (issue 23): under a constant torque above breakaway the hinge settles at the
    speed where the piecewise-linear friction equals the torque (the step's segment law is exact
    in steady sliding): f(v) = 1.5 + (4/3)(v − 0.5) = 1.6 at v = 0.575 rad/s."""
    from fric_core.joint_friction import FrictionCurve

    curve = FrictionCurve.make([0.0, 0.5, 2.0], [1.0, 1.5, 3.5], [0.0, 0.5, 2.0], [1.0, 1.5, 3.5])
    fs = JointFrictionSet({"j": JointFriction(Cp=1.0, Cn=1.0, bp=1.0, bn=1.0, law="curve",
                                              curve=curve)})
    m, d = hinge()
    st = FrictionStepper(m, d, fs)
    d.qfrc_applied[0] = 1.6
    for _ in range(2 * HOLD_STEPS):  # time constant I / slope ≈ 0.8 s: 20 s settle to e^-25
        st.step()
    assert d.qvel[0] == pytest.approx(0.575, rel=1e-9)
    assert st.friction_torque[0] == pytest.approx(1.6, rel=1e-9)
