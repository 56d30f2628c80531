"""fric_core.mujoco_kernel: FrictionStepper's compiled step against its numpy step (issue 25).

The compiled step (_mujoco_kernel.c) does the numpy step's operations in the same order, but
writes out the products, the LU inverse and the solves where numpy calls BLAS / LAPACK, whose
summation order and blocking differ: each step's results differ by round-off (~1e-16 relative
on the torques, ε·cond(M̂) on the velocities). Stuck joints end each friction solve at exactly
0 on both paths and the friction is dissipative, so the difference does not grow over a run:
over 1–3 s of sticking, breakaways and sliding the measured differences are ≤ 3e-13 rad/s,
≤ 1e-14 rad and ≤ 1e-11 N m on torques of up to 65 N m. The tests hold them to 1e-12 (velocities,
positions) and 1e-12 × the largest torque, and the stuck pattern to be the same at every step.
Two things would otherwise turn round-off into larger differences, and are excluded by the
physics, not by the tolerance: the law's side at rest (a joint left stuck starts the next step
at rest, not at the sign of MuJoCo's ±1e-17 velocity; test_mujoco_stepper), and MuJoCo's
iterative contact solve stopping at its tolerance (the contact case runs it to convergence).
"""

import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco", reason="the optional extra [mujoco] is not installed")

import fric_core.mujoco_kernel as mujoco_kernel  # noqa: E402
from fric_core.joint_friction import FrictionCurve, JointFriction, JointFrictionSet  # noqa: E402
from fric_core.mujoco import FrictionStepper  # noqa: E402
from fric_core.transmission.dai import IllPosedWarning  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
ARM_URDF = ROOT / "urdf" / "arm7.urdf"
H = 1e-3
ARM_Q0 = np.array([0.3, 0.6, 0.2, -1.2, 0.4, 0.9, 0.1])
ARM_EXTRA = np.array([3.0, 0.0, 2.0, 0.0, 1.5, 0.0, 0.5])
SWEEP = 20.0 * np.linspace(1.0, 0.2, 7)  # sinusoidal torque amplitudes: sliding and sticking
HINGE_XML = """<mujoco><option timestep="0.001"/><worldbody><body>
<joint name="j" type="hinge" axis="0 0 1" damping="0.3" armature="0.05"/>
<geom type="box" size="0.5 0.05 0.05" pos="0.5 0 0" mass="3"/></body></worldbody>{act}</mujoco>"""

needs_kernel = pytest.mark.skipif(not mujoco_kernel.COMPILED,
                                  reason="fric_core._mujoco_kernel is not built")


def arm_spec(integrator="Euler"):
    spec = mujoco.MjSpec.from_file(str(ARM_URDF))
    spec.option.timestep = H
    spec.option.integrator = getattr(mujoco.mjtIntegrator, f"mjINT_{integrator.upper()}")
    return spec


def arm_model(spec, armature=0.0):
    m = spec.compile()
    m.dof_armature[:] = armature
    d = mujoco.MjData(m)
    d.qpos[:] = ARM_Q0
    return m, d


def arm_load():
    m, d = arm_model(arm_spec())
    mujoco.mj_forward(m, d)
    return ARM_EXTRA - d.qfrc_bias


def levels_set(levels, slope, **gear):
    return JointFrictionSet({f"joint_a{i + 1}": JointFriction(Cp=float(c), Cn=float(c), bp=slope,
                                                              bn=slope, **gear)
                             for i, c in enumerate(levels)})


def with_curves(fs):
    """Joints 2 and 4 with a piecewise-linear law (issue 23), the others as given."""
    curve = FrictionCurve.make([0.0, 0.05, 0.5], [4.0, 5.0, 9.0], [0.0, 0.1, 1.0], [3.0, 4.0, 7.0])
    joints = dict(fs.joints)
    for n in ("joint_a2", "joint_a4"):
        joints[n] = JointFriction(Cp=4.0, Cn=3.0, bp=20.0, bn=10.0, law="curve", curve=curve)
    return JointFrictionSet(joints)


def scenario(name):
    """(model, data, friction, drive(k, data)) of one comparison."""
    load = np.abs(arm_load())
    sweep = ARM_EXTRA[None, :] + SWEEP[None, :] * np.sin(2 * np.pi * 2.0 * np.arange(3000) * H)[
        :, None]

    def torques(k, d):
        d.qfrc_applied[:] = sweep[k]

    if name == "arm":
        m, d = arm_model(arm_spec())
        return m, d, levels_set(load / 0.7, 0.3), torques
    if name == "arm_gear":
        m, d = arm_model(arm_spec(), armature=0.05)
        return m, d, levels_set(load / 0.7, 0.3, eta_f=0.8, eta_b=0.7), torques
    if name == "arm_curves":
        m, d = arm_model(arm_spec())
        return m, d, with_curves(levels_set(load / 0.7, 0.3)), torques
    if name == "arm_implicitfast_servos":
        spec = arm_spec("implicitfast")
        for i in range(7):  # position servos (kp, kv) on every joint: kv enters M - h df/dv
            a = spec.add_actuator()
            a.target, a.trntype = f"joint_a{i + 1}", mujoco.mjtTrn.mjTRN_JOINT
            a.gaintype, a.biastype = mujoco.mjtGain.mjGAIN_FIXED, mujoco.mjtBias.mjBIAS_AFFINE
            a.gainprm[0], a.biasprm[:3] = 30.0, [0.0, -30.0, -2.0]
        m, d = arm_model(spec)
        m.dof_damping[:] = 0.4
        d.ctrl[:] = ARM_Q0

        def servo(k, d):
            d.ctrl[:] = ARM_Q0 + 0.3 * np.sin(2 * np.pi * 1.0 * k * H)
        return m, d, levels_set(load / 0.7, 0.3), servo
    if name == "arm_on_table":  # the contact case of test_mujoco_stepper
        spec = arm_spec()
        # MuJoCo's contact solve run to convergence: at its default tolerance (1e-8) it stops
        # at a point that moves with round-off changes of its input, by up to ~1e-8 rad/s
        spec.option.tolerance = 0.0
        ball = spec.body("link7").add_geom()
        ball.type, ball.size[0], ball.pos = mujoco.mjtGeom.mjGEOM_SPHERE, 0.04, [0, 0, 0.1]
        ball.mass = 0.0
        table = spec.worldbody.add_geom()
        table.type, table.size = mujoco.mjtGeom.mjGEOM_BOX, [0.3, 0.3, 0.02]
        table.pos = [0.8, 0, 0.23]
        m, d = arm_model(spec)
        d.qpos[:] = [0.0, 1.2, 0.0, -0.6, 0.0, 0.5, 0.0]
        mujoco.mj_forward(m, d)
        levels = np.full(7, 40.0)
        levels[1] = 0.5 * abs(d.qfrc_bias[1])
        return m, d, levels_set(levels, 0.5), lambda k, d: None
    if name == "hinge":  # one joint: the closed form (70); 101 % of breakaway then 50 %
        m = mujoco.MjModel.from_xml_string(HINGE_XML.format(act=""))
        d = mujoco.MjData(m)

        def push(k, d):
            d.qfrc_applied[0] = 2.02 if k < 500 else 1.0
        return m, d, JointFrictionSet({"j": JointFriction(Cp=2.0, Cn=2.0, bp=0.1, bn=0.1)}), push
    raise AssertionError(name)


def run(name, compiled, steps):
    m, d, fs, drive = scenario(name)
    st = FrictionStepper(m, d, fs, compiled=compiled)
    assert st.compiled is compiled
    out = {"q": [], "v": [], "F": [], "stuck": []}
    for k in range(steps):
        drive(k, d)
        st.step()
        if k == steps // 2:  # a reset of the solver's warm start and predictor midway
            st.reset()
        out["q"].append(d.qpos.copy())
        out["v"].append(d.qvel.copy())
        out["F"].append(st.friction_torque.copy())
        out["stuck"].append(st.stuck.copy())
    out = {k: np.array(v) for k, v in out.items()}
    out["counts"] = (st.steps, st.unconverged_steps, st.ill_posed_steps)
    return out


@needs_kernel
@pytest.mark.parametrize("name, steps", [("arm", 2000), ("arm_gear", 2000), ("arm_curves", 2000),
                                         ("arm_implicitfast_servos", 2000),
                                         ("arm_on_table", 3000), ("hinge", 1000)])
def test_compiled_step_matches_the_numpy_step(name, steps):
    ref = run(name, False, steps)
    got = run(name, True, steps)
    np.testing.assert_array_equal(got["stuck"], ref["stuck"])
    assert got["counts"] == ref["counts"] == (steps, 0, 0)
    np.testing.assert_allclose(got["q"], ref["q"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(got["v"], ref["v"], rtol=0, atol=1e-12)
    scale = max(1.0, float(np.abs(ref["F"]).max()))
    np.testing.assert_allclose(got["F"], ref["F"], rtol=0, atol=1e-12 * scale)
    stuck = ref["stuck"]
    assert stuck.any() and not stuck.all()  # both sticking and sliding were compared
    assert np.isfinite(got["v"]).all()


@needs_kernel
def test_ill_posed_gear_counted_and_warned_once_on_both_paths():
    """A self-locking gear (η_b < 0: γ_v = 1.32) with no rotor inertia: σ_max(P) ≥ 1 (57) at every
    step; both paths count every step and warn once, at the caller's line."""
    fs = levels_set(np.abs(arm_load()) / 0.7, 0.3, eta_f=0.4, eta_b=-0.3)
    for compiled in (False, True):
        m, d = arm_model(arm_spec())
        d.qfrc_applied[:] = ARM_EXTRA
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            st = FrictionStepper(m, d, fs, compiled=compiled)
            for _ in range(20):
                st.step()
        ill = [w for w in rec if issubclass(w.category, IllPosedWarning)]
        assert st.ill_posed_steps == 20
        assert len(ill) == 1 and "sigma_max(P) = 1.32" in str(ill[0].message)
        assert ill[0].filename == __file__  # the warning points at the caller of step()


FALLING_BOXES = "".join(f'<body pos="0 0 {0.1 + 0.21 * i}"><freejoint/>'
                        '<geom type="box" size=".1 .1 .1"/></body>' for i in range(6))


@needs_kernel
@pytest.mark.parametrize("compiled", [False, True])
def test_mujoco_error_inside_the_step_is_raised(compiled, tmp_path, monkeypatch):
    """An mju_error inside the step (MuJoCo's stack overflows in the collision of a 4 KB arena):
    mujoco.FatalError with MuJoCo's message, as mujoco.mj_step raises it; the process goes on."""
    monkeypatch.chdir(tmp_path)  # MuJoCo's default log handler writes MUJOCO_LOG.TXT here
    xml = ('<mujoco><size memory="4K"/><worldbody><geom type="plane" size="5 5 .1"/><body>'
           '<joint name="j" type="hinge" axis="0 0 1"/><geom type="box" size=".5 .05 .05" '
           f'pos=".5 0 .3" mass="3"/></body>{FALLING_BOXES}</worldbody></mujoco>')
    m = mujoco.MjModel.from_xml_string(xml)
    with pytest.raises(mujoco.FatalError) as plain:
        mujoco.mj_step(m, mujoco.MjData(m))
    d = mujoco.MjData(m)
    st = FrictionStepper(m, d, JointFrictionSet({"j": JointFriction(Cp=1.0, Cn=1.0, bp=0.0,
                                                                   bn=0.0)}), compiled=compiled)
    with pytest.raises(mujoco.FatalError) as err:
        st.step()
    assert str(err.value) == str(plain.value)
    assert "mj_stackAlloc: out of memory" in str(err.value)
    assert st.steps == 0


@needs_kernel
@pytest.mark.parametrize("compiled", [False, True])
def test_callback_error_in_mj_step2_restores_qfrc_applied(compiled):
    """A Python actuator callback that raises on its second call (inside mj_step2, after the
    friction was added to qfrc_applied): its exception propagates, qfrc_applied is the user's."""
    act = '<actuator><general joint="j" biastype="user"/></actuator>'
    m = mujoco.MjModel.from_xml_string(HINGE_XML.format(act=act))
    d = mujoco.MjData(m)
    st = FrictionStepper(m, d, JointFrictionSet({"j": JointFriction(Cp=1.0, Cn=1.0, bp=0.0,
                                                                   bn=0.0)}), compiled=compiled)
    calls = []

    def bias(model, data, actuator):
        calls.append(actuator)
        if len(calls) == 2:
            raise RuntimeError("second call")
        return 0.0

    d.qfrc_applied[0] = 0.3
    mujoco.set_mjcb_act_bias(bias)
    try:
        with pytest.raises(RuntimeError, match="second call"):
            st.step()
    finally:
        mujoco.set_mjcb_act_bias(None)
    assert len(calls) == 2
    assert d.qfrc_applied[0] == 0.3
    assert st.steps == 0
    st.step()  # and the stepper goes on
    assert st.steps == 1 and st.stuck[0] and d.qvel[0] == 0.0


# -- which path, and why ----------------------------------------------------------------------
def hinge_stepper(**kw):
    m = mujoco.MjModel.from_xml_string(HINGE_XML.format(act=""))
    fs = JointFrictionSet({"j": JointFriction(Cp=1.0, Cn=1.0, bp=0.0, bn=0.0)})
    return FrictionStepper(m, mujoco.MjData(m), fs, **kw)


@needs_kernel
def test_compiled_by_default_numpy_on_request():
    assert hinge_stepper().compiled and hinge_stepper().fallback_reason == ""
    st = hinge_stepper(compiled=False)
    assert not st.compiled and st.fallback_reason == "compiled=False"


def test_without_the_extension_the_numpy_step_says_why(monkeypatch):
    monkeypatch.setattr(mujoco_kernel, "_ck", None)
    monkeypatch.setattr(mujoco_kernel, "_NOT_BUILT", "No module named 'fric_core._mujoco_kernel'")
    st = hinge_stepper()
    assert not st.compiled
    assert st.fallback_reason.startswith("fric_core._mujoco_kernel is not built")
    with pytest.raises(ValueError, match=r"compiled: the compiled step is not available "
                                         r"\(fric_core._mujoco_kernel is not built"):
        hinge_stepper(compiled=True)
    with pytest.raises(ValueError, match="compiled: expected None, True or False, got 'yes'"):
        hinge_stepper(compiled="yes")


@needs_kernel
def test_model_with_flexes_takes_the_numpy_step(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    xml = ('<mujoco><worldbody><body><joint name="j" type="hinge"/><geom size=".1" mass="1"/>'
           '</body><flexcomp name="f" type="grid" count="3 3 1" spacing=".1 .1 .1" pos="0 0 1" '
           'radius=".01" dim="2" mass="1"><edge equality="true"/></flexcomp></worldbody>'
           '</mujoco>')
    m = mujoco.MjModel.from_xml_string(xml)
    fs = JointFrictionSet({"j": JointFriction(Cp=1.0, Cn=1.0, bp=0.0, bn=0.0)})
    st = FrictionStepper(m, mujoco.MjData(m), fs)
    assert not st.compiled and "flexes" in st.fallback_reason
    st.step()
    assert st.steps == 1
    with pytest.raises(ValueError, match="compiled: .*flexes"):
        FrictionStepper(m, mujoco.MjData(m), fs, compiled=True)


@needs_kernel
def test_fric_no_compiled_selects_the_numpy_step():
    code = ("import mujoco; from fric_core.mujoco import FrictionStepper; "
            "from fric_core.joint_friction import JointFriction, JointFrictionSet; "
            "m = mujoco.MjModel.from_xml_string('<mujoco><worldbody><body><joint name=\"j\"/>"
            "<geom size=\".1\"/></body></worldbody></mujoco>'); "
            "s = FrictionStepper(m, mujoco.MjData(m), JointFrictionSet({'j': JointFriction("
            "Cp=1.0, Cn=1.0, bp=0.0, bn=0.0)})); print(s.compiled, s.fallback_reason)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         env={"FRIC_NO_COMPILED": "1", "PATH": "/usr/bin:/bin"}, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False FRIC_NO_COMPILED is set"
