"""mujoco_sim (issue 25 item 3): the arm of a URDF compiled by MuJoCo, or an MJCF, with the
joint friction of a joint_friction.yaml through FrictionStepper.

It simulates the same arm as transmission_sim (same URDF, rotor inertia = MuJoCo's armature,
same friction and gears), the file's friction holds where MuJoCo's own would let the joint move,
joints outside the file keep MuJoCo's own, joints outside joint_names are welded, an MJCF gives
its own effort limits, an unstable MuJoCo step holds the arm and is reported, bad parameters are
one line naming the parameter, and without the mujoco package the node says so in one line
(the convention tests shared with transmission_sim: test_topic_convention_sim.py).
"""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticStatus
from rclpy.parameter import Parameter
from std_msgs.msg import Float64MultiArray

from fric_interfaces.rviz_check import marker_array_problems
from fric_nodes.mujoco_sim import MISSING_EXTRA, MujocoSim, mujoco_missing
from fric_nodes.transmission_sim import TransmissionSim
from ros_support import diag

pytestmark = pytest.mark.skipif(mujoco_missing(), reason="the optional extra [mujoco] is not "
                                "installed")

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "config"
ARM7_ROTOR = [0.4, 0.4, 0.2, 0.2, 0.1, 0.05, 0.05]  # config/arm_friction_arm7.yaml
HINGE_MJCF = """<mujoco><option timestep="0.01"/>
<worldbody><body name="arm"><joint name="hinge" type="hinge" axis="0 0 1" stiffness="{k}"
 actuatorfrcrange="-3 3" actuatorfrclimited="true"/>
<geom type="box" size="0.5 0.05 0.05" pos="0.5 0 0" mass="3"/><body name="tip" pos="1 0 0"/>
</body></worldbody></mujoco>"""


def _node(cls, **params):
    params = {"sync": "as_fast_as_possible", **params}
    return cls(parameter_overrides=[Parameter(k, value=v) for k, v in params.items()])


@pytest.fixture
def make(ros):
    made = []

    def _make(cls=MujocoSim, **params):
        node = _node(cls, **params)
        made.append(node)
        return node

    yield _make
    for n in made:
        n.destroy_node()


def _drive(node, tau) -> None:
    node._on_command(Float64MultiArray(data=[float(x) for x in tau]))
    node.step_once()


@pytest.mark.parametrize("urdf, rotor, amplitude", [
    ("planar_2link", [0.5, 0.2], [5.0, 2.5]),
    ("arm7", ARM7_ROTOR, [6.0, 6.0, 4.0, 4.0, 2.0, 1.0, 1.0]),
])
def test_the_same_arm_as_transmission_sim(make, urdf, rotor, amplitude):
    """Under the same torques (sinusoids through the friction levels: stick-slip on every
    joint) for 1 s at 500 Hz, with config/<urdf>_true_friction.yaml (Coulomb, viscous, gear
    efficiencies) and gravity: MuJoCo's arm (its own rigid-body dynamics of the URDF, the rotor
    inertia as armature, FrictionStepper) and transmission_sim's GearedArm (Pinocchio, algorithm
    (69)) solve the same equations with the same semi-implicit Euler update, so the joints stick
    in the same steps and the positions agree to what the two rigid-body models differ by
    (mass matrices 4e-10 and bias forces 2e-10 apart, relative: MuJoCo's inertia compilation
    and its 1e-9 kg m² floor on the point masses) as the stick-slip events amplify it: measured
    at most 7.4e-11 rad (planar) and 1.3e-8 rad (arm7) with the torques scaled by 0.8-1.2, so
    1e-7 rad. The motions are 0.02-0.6 rad; a missing armature moves the arm by their order
    (8.8e-3 and 0.52 rad), and a slope bp or bn picked by the sign of MuJoCo's round-off
    velocity at a breakaway (FrictionStepper before ab0a3c9) by 1.1e-6 rad."""
    common = dict(urdf=urdf, joint_friction=str(CONFIG / f"{urdf}_true_friction.yaml"),
                  rate=500.0, rotor_inertia=rotor)
    mj, tr = make(**common), make(TransmissionSim, **common)
    n = len(mj.joint_names)
    assert mj.joint_names == tr.joint_names
    q_mj, q_tr = [], []
    for k in range(500):
        tau = np.asarray(amplitude) * np.sin(2 * np.pi * k * 0.002 + np.arange(n))
        for node, out in ((mj, q_mj), (tr, q_tr)):
            _drive(node, tau)
            out.append(list(node._js.position))
    q_mj, q_tr = np.array(q_mj), np.array(q_tr)
    assert np.abs(q_mj - q_tr).max() <= 1e-7
    assert np.ptp(q_mj, axis=0).min() > 0.01  # every joint moved
    held_mj = (np.abs(np.diff(q_mj, axis=0)) < 1e-12).sum(axis=0)
    held_tr = (np.abs(np.diff(q_tr, axis=0)) < 1e-12).sum(axis=0)
    assert list(held_mj) == list(held_tr) and held_mj.min() > 0  # stuck in the same steps
    assert mj._speed_limited == tr._speed_limited == 0
    assert diag(mj)[0] == DiagnosticStatus.OK


def test_the_files_friction_holds_and_other_joints_keep_mujocos_own(make, tmp_path):
    """1.0 N m on joint1 of planar_2link is below its Coulomb level (Cp 1.5 N m): held exactly
    for 1 s with the file, while MuJoCo without it lets the joint turn (1 rad/s² at rest: 0.5
    rad); a file naming joint1 only leaves joint2 (the URDF gives MuJoCo no friction) free to
    turn under 0.5 N m (0.5 rad/s² with joint1 held: 0.25 rad)."""
    only1 = tmp_path / "joint1.yaml"
    only1.write_text("joints:\n  joint1: {Cp: 1.5, Cn: 1.2, bp: 0.8, bn: 1.0}\n")
    held = make(joint_friction=str(CONFIG / "planar_2link_true_friction.yaml"))
    free = make()
    half = make(joint_friction=str(only1))
    for _ in range(1000):
        for node in (held, free):
            _drive(node, [1.0, 0.0])
        _drive(half, [1.0, 0.5])
    assert list(held._js.position) == pytest.approx([0.0, 0.0], abs=1e-12)
    assert free._js.position[0] > 0.4
    assert half._js.position[0] == pytest.approx(0.0, abs=1e-12)
    assert half._js.position[1] > 0.2
    _, _, kv = diag(held)
    assert kv["joint1 stuck"] == "True" and kv["friction joints"] == "joint1,joint2"
    assert float(kv["joint1 friction torque [N m]"]) == pytest.approx(1.0, rel=1e-9)
    assert diag(half)[2]["friction joints"] == "joint1"
    assert marker_array_problems(held.markers().markers, {"world"}) == []


def test_joints_left_out_are_welded_and_the_friction_file_follows(make):
    node = make(joint_names=["joint2"],
                joint_friction=str(CONFIG / "planar_2link_true_friction.yaml"))
    assert node.joint_names == ("joint2",) and node.arm.welded == ("joint1",)
    assert node.model.nv == 1 and node.stepper.joint_names == ("joint2",)
    _drive(node, [0.5])  # below joint2's Coulomb level (Cp 0.8): held
    assert list(node._js.name) == ["joint2"] and list(node._js.position) == [0.0]


def test_an_mjcf_its_effort_limits_and_an_unstable_step(make, tmp_path):
    """The MJCF's actuatorfrcrange is the effort limit (a command clipped at it, counted);
    MuJoCo's own instability (a stiffness of 1e14 N m/rad: a huge acceleration, after which
    MuJoCo resets the data) is a failed step: the arm held where it was, at rest, an ERROR."""
    stable = tmp_path / "hinge.xml"
    stable.write_text(HINGE_MJCF.format(k=0))
    node = make(mjcf=str(stable), integrator="euler")
    assert node.model.opt.timestep == pytest.approx(1e-3)  # rate, not the file's 0.01
    assert node.joint_names == ("hinge",)
    _drive(node, [10.0])
    assert list(node._js.effort) == [3.0]
    assert diag(node)[2]["effort commands clipped"] == "1"
    unstable = tmp_path / "stiff.xml"
    unstable.write_text(HINGE_MJCF.format(k=1e14))
    node = make(mjcf=str(unstable), initial_positions=[0.5])
    for _ in range(3):
        node.step_once()
        assert list(node._js.position) == [0.5] and list(node._js.velocity) == [0.0]
    level, message, kv = diag(node)
    assert level == DiagnosticStatus.ERROR and "mjWARN_BADQACC" in message
    assert kv["failed steps"] == "3"


@pytest.mark.parametrize("params, line", [
    ({"mjcf": "/nonexistent/arm.xml"}, "mjcf: MuJoCo cannot read /nonexistent/arm.xml"),
    ({"joint_names": ["joint1", "elbow"]}, "joint_names: unknown joint(s) ['elbow']"),
    ({"integrator": "RK4"}, "integrator:"),
    ({"ee_frame": "hand"}, "ee_frame: no body 'hand' in the model"),
    ({"joint_friction": str(CONFIG / "arm7_true_friction.yaml")},
     "joint_friction: friction: joint(s) ['joint_a1'"),
    ({"rotor_inertia": [1.0, 2.0, 3.0]}, "rotor_inertia:"),
])
def test_bad_parameters_one_line_naming_the_parameter(params, line):
    args = [a for k, v in params.items()
            for a in ("-p", f"{k}:={v if not isinstance(v, list) else v!r}")]
    r = subprocess.run([sys.executable, "-m", "fric_nodes.mujoco_sim", "--ros-args", *args],
                       capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert r.returncode == 1, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    assert lines[0].startswith(f"mujoco_sim: bad parameters: {line}"), lines[0]


def test_without_the_mujoco_package_one_line_and_nothing_else_imports_it(tmp_path):
    """A ``mujoco`` that cannot be imported (a stand-in package raising ImportError first on
    the path): the installed executable prints the one line and exits 1; every fric module but
    fric_core.mujoco* (FrictionStepper and its kernel) and fric_nodes.mujoco_model imports."""
    fake = tmp_path / "mujoco"
    fake.mkdir()
    (fake / "__init__.py").write_text("raise ImportError(\"No module named 'mujoco'\")\n")
    env = {**__import__("os").environ, "PYTHONPATH": f"{tmp_path}:{ROOT}"}
    exe = Path(sys.executable).parent / "mujoco_sim"
    r = subprocess.run([str(exe) if exe.exists() else sys.executable,
                        *([] if exe.exists() else ["-m", "fric_nodes.mujoco_sim"])],
                       capture_output=True, text=True, timeout=60, env=env, cwd=tmp_path)
    assert r.returncode == 1
    assert r.stderr.strip() == MISSING_EXTRA and not r.stdout.strip()
    script = (
        "import importlib, pkgutil\n"
        "import fric_core, fric_interfaces, fric_nodes\n"
        "skip = ('fric_core.mujoco', 'fric_nodes.mujoco_model')\n"
        "n = 0\n"
        "for pkg in (fric_core, fric_interfaces, fric_nodes):\n"
        "    for m in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + '.'):\n"
        "        if not m.name.startswith(skip):\n"
        "            importlib.import_module(m.name); n += 1\n"
        "print(n)\n")
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                       timeout=120, env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    assert int(r.stdout.split()[-1]) > 80  # the walk found the packages


def test_own_urdf_with_arm_setup_welds_the_mimic_gripper_and_holds_until_command(make,
                                                                                 tmp_path):
    """A URDF the project does not ship (7 joints, a gripper whose second finger is a <mimic>:
    an equality constraint in MuJoCo) with arm_setup auto: the 7 arm joints simulated from
    their derived start pose (joint 4 mid-range, its range excludes 0), the fingers welded with
    their equality, and hold_until_command keeps the arm where it starts under gravity."""
    sys.path.insert(0, str(ROOT / "test"))
    from own_arm_urdf import ARM_NAMES, write_own_arm_urdf

    urdf = write_own_arm_urdf(tmp_path / "own_arm.urdf")
    node = make(urdf=str(urdf), arm_setup="auto", hold_until_command=True)
    assert node.joint_names == ARM_NAMES
    assert set(node.arm.welded) == {"own_finger1", "own_finger2"} and node.model.neq == 0
    q0 = np.array(node.values["initial_positions"])
    assert q0[3] == pytest.approx(-1.57, abs=1e-3)
    for _ in range(200):
        node.step_once()
    assert list(node._js.position) == pytest.approx(list(q0), abs=0.0)
    _drive(node, np.zeros(7))  # the first command releases the brakes: gravity moves the arm
    for _ in range(200):
        node.step_once()
    assert np.abs(np.array(node._js.position) - q0).max() > 1e-3
