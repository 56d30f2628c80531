"""transmission_sim: the arm node of paper 004 (algorithm (69)) on the bundled planar_2link URDF
(two 1 m links in the horizontal plane, 1 kg at each link tip, joints about z). Deterministic: the
tests call the node's callbacks and ``step_once`` directly (no timing), and run the executable
only for the exit-status checks."""

import math
import subprocess
import sys

import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticStatus
from geometry_msgs.msg import WrenchStamped
from rclpy.parameter import Parameter
from std_msgs.msg import Float64MultiArray
from visualization_msgs.msg import Marker

from fric_nodes.transmission_sim import TransmissionSim

STEPS = 300  # 0.3 s at 1 kHz: a backdrivable joint under 10 N at 2 m moves by > 1e-2 rad


@pytest.fixture
def make(ros):
    made = []

    def _make(**params):
        params.setdefault("sync", "as_fast_as_possible")
        params.setdefault("gravity", [0.0, 0.0, 0.0])
        node = TransmissionSim(parameter_overrides=[Parameter(k, value=v)
                                                    for k, v in params.items()])
        made.append(node)
        return node

    yield _make
    for n in made:
        n.destroy_node()


def _wrench(fx=0.0, fy=0.0, fz=0.0, frame="world"):
    msg = WrenchStamped()
    msg.header.frame_id = frame
    msg.wrench.force.x, msg.wrench.force.y, msg.wrench.force.z = fx, fy, fz
    return msg


def _run(node, steps=STEPS):
    """Step ``steps`` times; the published joint_states (position, velocity) of every step."""
    pos, vel = [], []
    for _ in range(steps):
        node.step_once()
        pos.append(list(node._js.position))
        vel.append(list(node._js.velocity))
    return np.array(pos), np.array(vel)


def _diag(node):
    st = node.diagnostic_status()
    return st.level, st.message, {kv.key: kv.value for kv in st.values}


def test_self_locking_joint_holds_under_wrench_backdrivable_joint_yields(make):
    # joint1 self-locking (gamma_v = 1.2 >= 1: eta_b < 0), joint2 backdrivable (gamma_v = 0.3).
    # Rotor inertia 5 kg m^2 keeps sigma_max(P) < 1 (checked: the premise of (69)).
    node = make(gamma_u=[0.0], gamma_v=[1.2, 0.3], rotor_inertia=[5.0])
    level, _, kv = _diag(node)
    assert float(kv["sigma_max(P)"]) < 1.0 and level == DiagnosticStatus.OK
    node._on_wrench(_wrench(fy=10.0))  # at q = 0 the EE is at (2, 0): J^T f = (20, 10) N m
    pos, vel = _run(node)
    # static friction of a self-locking joint holds any arm-side load: exactly 0, not small
    assert np.all(vel[:, 0] == 0.0) and np.all(pos[:, 0] == 0.0)
    # the backdrivable joint yields in the direction of its load torque (+10 N m)
    assert np.all(vel[10:, 1] > 0.0) and pos[-1, 1] > 1e-2
    assert _diag(node)[2]["joint1 stuck"] == "True"


def test_backdrivable_arm_moves_like_the_frictionless_one_in_direction(make):
    node = make(gamma_u=[0.0], gamma_v=[0.3], rotor_inertia=[5.0])
    node._on_wrench(_wrench(fy=10.0))
    pos, vel = _run(node)
    assert np.all(pos[-1] > 1e-3) and np.isfinite(pos).all()


def test_ee_frame_wrench_follows_the_end_effector(make):
    # joint1 self-locking (held exactly), joint2 backdrivable: joint2 alone turns link2 (1 kg at
    # 1 m, no gravity) with constant inertia 1 + m and no centrifugal term (q1' = 0). A force F
    # along the EE's y axis stays perpendicular to link2 as it turns (a follower force): joint2's
    # load F * 1 m is constant, so the gear (constant efficiency under a constant load) gives a
    # constant acceleration: the second differences of q2 are equal to rounding. The same force
    # fixed in world axes (R(q0) f) loses its moment arm as cos(q2 - q2(0)).
    params = dict(gamma_u=[0.0], gamma_v=[1.2, 0.3], rotor_inertia=[1.0], ee_frame="ee")
    a, b = make(**params), make(**params)
    for n in (a, b):
        n.arm.reset(q0=[0.4, 0.7])
    _, R = a.arm.dynamics.ee_pose(a.arm.q)
    f_ee = np.array([0.0, 30.0, 0.0])
    a._on_wrench(_wrench(*f_ee, frame="ee"))
    b._on_wrench(_wrench(*(R @ f_ee), frame="world"))
    pa, _ = _run(a, 300)
    pb, _ = _run(b, 300)
    assert np.all(pa[:, 0] == 0.4) and np.all(pb[:, 0] == 0.4)  # self-locking joint1 held
    acc_a = np.diff(pa[:, 1], 2)
    acc_b = np.diff(pb[:, 1], 2)
    turned = pa[-1, 1] - 0.7
    assert turned > 0.3  # link2 turned far enough for the two wrenches to differ clearly
    # follower: constant acceleration (relative spread: rounding of q ~ 1e-16 / (h^2 a) ~ 1e-10)
    assert np.ptp(acc_a) < 1e-6 * acc_a.mean()
    # world-fixed: the moment arm shrinks with the turn; at the end the acceleration is
    # cos(q2 - q2(0)) of the initial one (to the discretisation: q2 moves 1e-3 rad per step)
    np.testing.assert_allclose(acc_b[-1] / acc_b[0], np.cos(pb[-2, 1] - 0.7), rtol=5e-3)
    assert acc_b[-1] < 0.95 * acc_a[-1]


def test_nan_command_and_bad_wrench_rejected_no_nan_in_joint_states(make):
    node = make(gamma_v=[0.3], rotor_inertia=[1.0])
    node._on_command(Float64MultiArray(data=[0.5, -0.5]))
    node._on_command(Float64MultiArray(data=[math.nan, 0.0]))
    node._on_command(Float64MultiArray(data=[1.0]))  # wrong length
    node._on_wrench(_wrench(fx=math.inf))
    node._on_wrench(_wrench(fx=1.0, frame="camera"))
    pos, vel = _run(node, 50)
    assert np.isfinite(pos).all() and np.isfinite(vel).all()
    assert list(node._js.effort) == [0.5, -0.5]  # the last valid command is still applied
    level, msg, kv = _diag(node)
    assert level == DiagnosticStatus.WARN and "rejected" in msg
    assert kv["rejected inputs"] == "4" and kv["rejected command non_finite"] == "1"
    assert kv["rejected wrench frame"] == "1"


def test_ill_posed_transmission_reported_and_states_stay_finite(make):
    # gamma_v = 1.5 with a small rotor inertia: |rho_hat| ~ 1.5 > 1, sigma_max(P) >= 1 (57)
    node = make(gamma_v=[1.5], rotor_inertia=[0.01])
    node._on_wrench(_wrench(fy=10.0))
    pos, vel = _run(node, 50)
    assert np.isfinite(pos).all() and np.isfinite(vel).all()
    level, msg, kv = _diag(node)
    assert level == DiagnosticStatus.ERROR and "sigma_max(P)" in msg and "rho_hat" in msg
    assert float(kv["sigma_max(P)"]) >= 1.0 and kv["well posed"] == "False"


def test_command_timeout_in_simulated_time(make):
    node = make(gamma_v=[0.3], rotor_inertia=[1.0], command_timeout=0.01)
    node._on_command(Float64MultiArray(data=[1.0, 1.0]))
    _run(node, 10)
    assert list(node._js.effort) == [1.0, 1.0]
    _run(node, 5)  # 15 ms > 10 ms after the command: dropped
    assert list(node._js.effort) == [0.0, 0.0]
    assert _diag(node)[2]["command timeouts"] == "1"


@pytest.mark.parametrize("args, field", [
    (["-p", "joint_names:=[joint1, no_such_joint]"], "joint_names"),
    (["-p", "urdf:=/nonexistent/arm.urdf"], "urdf"),
    (["-p", "robot_description:=<robot name='x'><link"], "robot_description"),
    (["-p", "gamma_v:=[0.1, 0.2, 0.3]"], "gamma_v"),
    (["-p", "eta_f:=[0.5]"], "eta_b"),
    (["-p", "ee_frame:=nowhere"], "ee_frame"),
    (["-p", "initial_positions:=[0.0, 4.0]"], "initial_positions"),
    (["-p", "initial_positions:=[0.0]"], "initial_positions"),
])
def test_bad_parameters_exit_1_naming_the_parameter(args, field):
    r = subprocess.run([sys.executable, "-m", "fric_nodes.transmission_sim", "--ros-args",
                        *args], capture_output=True, text=True, timeout=30)
    assert r.returncode == 1, r.stderr
    assert f"bad parameters: {field}:" in r.stderr


def test_main_duration_exits_zero():
    r = subprocess.run([sys.executable, "-m", "fric_nodes.transmission_sim", "--ros-args",
                        "-p", "sync:=as_fast_as_possible", "-p", "duration:=0.2"],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    assert "stopped after 200 steps" in r.stderr + r.stdout


_MASSLESS = ("<robot name='massless'><link name='base'/><link name='tip'/>"
             "<joint name='j' type='revolute'><parent link='base'/><child link='tip'/>"
             "<axis xyz='0 0 1'/><limit lower='-1' upper='1' effort='1' velocity='1'/></joint>"
             "</robot>")


def test_singular_inertia_exit_1_naming_rotor_inertia():
    # a massless link and zero rotor inertia: [m] + M(q) = 0 cannot be inverted (69a)
    r = subprocess.run([sys.executable, "-m", "fric_nodes.transmission_sim", "--ros-args",
                        "-p", f"robot_description:={_MASSLESS}", "-p", "rotor_inertia:=[0.0]"],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 1, r.stderr
    assert "bad parameters: rotor_inertia:" in r.stderr


def test_example_config_is_well_posed_with_joint1_self_locking(make):
    import yaml
    from pathlib import Path

    cfg = yaml.safe_load((Path(__file__).resolve().parents[2] / "config" / "arm_transmission.yaml")
                         .read_text())["transmission_sim"]["ros__parameters"]
    node = make(**{k: v for k, v in cfg.items() if k not in ("sync", "gravity")})
    assert float(_diag(node)[2]["sigma_max(P)"]) < 1.0
    assert node.arm.backdrivable.tolist() == [False, True]


def test_launch_file_runs_sim_and_renderer_to_the_duration(tmp_path):
    # The console script may not be installed in a source tree: a shim on PATH stands in for it
    # (fric launch looks executables up in the ament index, then on PATH).
    import os
    from pathlib import Path

    shim = tmp_path / "transmission_sim"
    shim.write_text(f"#!/bin/sh\nexec {sys.executable} -m fric_nodes.transmission_sim \"$@\"\n")
    shim.chmod(0o755)
    env = dict(os.environ, PATH=f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}")
    launch = Path(__file__).resolve().parents[2] / "launch" / "arm_transmission.launch.xml"
    r = subprocess.run([sys.executable, "-m", "fric_nodes.tools.cli", "launch", str(launch),
                        "duration:=1.0"], capture_output=True, text=True, timeout=60, env=env)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    assert "stopped after 1000 steps" in out and "friction_renderer" in out
    assert "bad parameters" not in out


def test_end_stop_stops_a_driven_joint_at_its_urdf_limit(make):
    # joint2 (backdrivable, gamma_v 0.3) driven by 20 N m from q2 = 3.0 into its URDF limit 3.1416.
    # The stop is a hard unilateral constraint (fric_core.transmission.geared_arm's GearedArm
    # lower/upper): an inelastic impact lands the joint exactly on its limit and holds it there:
    # never past it (zero tolerance), at rest (velocity exactly 0) once there, while the command
    # pushes on.
    node = make(gamma_u=[0.0], gamma_v=[1.2, 0.3], rotor_inertia=[1.0],
                initial_positions=[0.0, 3.0], command_timeout=10.0)
    upper = node.arm.dynamics.upper[1]
    node._on_command(Float64MultiArray(data=[0.0, 20.0]))
    pos, vel = _run(node, 1500)
    assert pos[:, 1].max() == upper  # reached, never passed
    hit = int(np.argmax(pos[:, 1] == upper))
    assert 0 < hit < 1000 and vel[hit - 1, 1] > 0.1  # hit at speed
    assert np.all(pos[hit:, 1] == upper) and np.all(vel[hit + 1:, 1] == 0.0)
    assert np.all(pos[:, 0] == 0.0)  # the self-locking joint1 is not moved by the impact
    assert "end stop" in _diag(node)[1]
    assert node.arm.state.at_stop[1] and node.arm.state.stop_impulse[1] < 0.0  # pushes back


def test_self_locking_joint_stays_jammed_in_its_end_stop(make):
    # joint1 self-locking (gamma_v 1.2 >= 1) but forward-drivable: its actuator drives it into the
    # stop; released, it stays exactly where the stop held it (a self-locking gear holds any load
    # from the arm side; a rigid stop gives nothing back): q1 must not move at all.
    node = make(gamma_u=[0.0], gamma_v=[1.2, 0.3], rotor_inertia=[1.0],
                initial_positions=[3.0, 0.0], command_timeout=0.5)
    upper = node.arm.dynamics.upper[0]
    node._on_command(Float64MultiArray(data=[20.0, 0.0]))
    pos, vel = _run(node, 500)  # 0.5 s of command: reaches the stop (by 0.15 s) and rests
    assert pos[-1, 0] == upper and pos[:, 0].max() == upper
    _run(node, 10)  # the command times out: zero actuator torque
    pos, vel = _run(node, 500)
    assert np.all(vel[:, 0] == 0.0) and np.all(pos[:, 0] == upper)


def test_limits_not_enforced_are_only_reported(make):
    node = make(gamma_u=[0.0], gamma_v=[1.2, 0.3], rotor_inertia=[1.0],
                initial_positions=[0.0, 3.0], command_timeout=10.0, enforce_joint_limits=False)
    node._on_command(Float64MultiArray(data=[0.0, 20.0]))
    pos, _ = _run(node, 1000)
    assert pos[-1, 1] > node.arm.dynamics.upper[1] + 0.1  # passes the limit freely
    assert "not enforced" in _diag(node)[1]


def test_joint_states_stamps_are_simulated_time_exactly_h_apart(make):
    node = make(gamma_v=[0.3], rotor_inertia=[1.0])
    stamps = []
    for _ in range(50):
        node.step_once()
        st = node._js.header.stamp
        stamps.append(st.sec * 1_000_000_000 + st.nanosec)
    assert set(np.diff(stamps).tolist()) == {1_000_000}  # 1 ms to the nanosecond


def test_well_posedness_diagnostics_follow_the_pose(make):
    # P (52) depends on q through M(q): folding the planar arm (q2 from 0 to 2.5 rad) lowers
    # M_11 from 5 to about 1.4 kg m^2, so sigma_max(P) and rho_hat of joint1 change; the
    # diagnostics must report the current pose, not the start.
    node = make(gamma_u=[0.0], gamma_v=[1.2, 0.3], rotor_inertia=[1.0])
    start = _diag(node)[2]
    node.arm.set_state([0.0, 2.5], [0.0, 0.0])
    now = _diag(node)[2]
    from fric_nodes.builders import well_posedness
    smax, rho = well_posedness(node.arm, np.array([0.0, 2.5]))
    assert float(now["sigma_max(P)"]) == pytest.approx(smax, rel=1e-5)
    assert float(now["joint1 rho_hat"]) == pytest.approx(rho[0], rel=1e-5)
    assert abs(float(now["joint1 rho_hat"]) - float(start["joint1 rho_hat"])) > 0.1


def test_markers_draw_the_arm_and_colour_stuck_joints(make):
    node = make(gamma_u=[0.0], gamma_v=[1.2, 0.3], rotor_inertia=[1.0],
                initial_positions=[0.5, 0.5])
    node._on_wrench(_wrench(fy=10.0))
    _run(node, 50)
    ms = {(m.ns, m.id): m for m in node.markers().markers}
    line = ms[("links", 0)].points
    p_ee, _ = node.arm.dynamics.ee_pose(node.arm.q)
    # base, joint1 (origin), joint2 at 1 m along link1, end effector at 1 m along link2
    assert (line[2].x, line[2].y) == pytest.approx((math.cos(0.5), math.sin(0.5)), abs=1e-12)
    assert (line[-1].x, line[-1].y) == pytest.approx(tuple(p_ee[:2]), abs=1e-12)
    assert ms[("joint_stuck", 0)].color.r > 0.5  # self-locking joint1 held: red
    assert ms[("joint_stuck", 1)].color.g > 0.5  # joint2 yields: green
    assert ms[("ee_force", 0)].points[1].y > ms[("ee_force", 0)].points[0].y  # arrow along +y
    assert ms[("ee_force", 0)].action == Marker.ADD
    node._on_wrench(_wrench(fy=0.0))  # no force: the arrow is deleted, not a zero-length one
    _run(node, 5)
    ms = {(m.ns, m.id): m for m in node.markers().markers}
    assert ms[("ee_force", 0)].action == Marker.DELETE


def test_arm_rviz_config_shows_the_sim_markers_in_its_marker_frame():
    import yaml
    from pathlib import Path

    share = Path(__file__).resolve().parents[2]
    cfg = yaml.safe_load((share / "config" / "arm.rviz").read_text())
    vm = cfg["Visualization Manager"]
    topics = [d["Topic"]["Value"] for d in vm["Displays"]
              if d["Class"] == "rviz_default_plugins/MarkerArray"]
    assert topics == ["/transmission_sim/markers"]
    params = yaml.safe_load((share / "config" / "arm_transmission.yaml").read_text())
    assert vm["Global Options"]["Fixed Frame"] == \
        params["transmission_sim"]["ros__parameters"]["marker_frame"]
    launch = (share / "launch" / "arm_transmission.launch.xml").read_text()
    assert "config/arm.rviz" in launch


class _Log:
    """Records the warnings a node logs (the throttle argument ignored)."""

    def __init__(self):
        self.warnings = []

    def warning(self, msg, **_):
        self.warnings.append(msg)

    def info(self, msg, **_):
        pass


def test_clip_warning_names_the_clipped_joint_of_three(make):
    # arm7's joint_a1..a3: effort limits 320, 320, 176 N m; only joint_a3's command is beyond
    node = make(urdf="arm7", joint_names=["joint_a1", "joint_a2", "joint_a3"],
                rotor_inertia=[1.0])
    log = _Log()
    node.get_logger = lambda: log
    node._on_command(Float64MultiArray(data=[10.0, -20.0, -200.0]))
    assert log.warnings == ["effort command beyond the URDF effort limit, clipped: "
                            "joint_a3 -200 N m to -176"]
    assert list(node._tau) == [10.0, -20.0, -176.0]
    assert _diag(node)[2]["effort commands clipped"] == "1"
