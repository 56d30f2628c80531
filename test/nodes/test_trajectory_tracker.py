"""trajectory_tracker: the joint_trajectory_controller stand-in of the arm workflow (issue 15).

In-process (the control step ``on_state`` called with made-up states, deterministic): the PD law
along the phases hold → minimum-jerk approach → trajectory → final hold, the bound, the
inverse-dynamics feed-forward of the planar 2-link arm against its closed-form mass matrix, a
trajectory_msgs/JointTrajectory replacing the one playing, rejected inputs. As a process over
loopback DDS: it answers published joint_states with commands and tracking errors stamped like
the states, ends by itself after the trajectory (exit 0, the RMS line, the result file), and a bad
CSV is one line naming the parameter, file and line (exit 1)."""

import math
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from builtin_interfaces.msg import Duration, Time
from diagnostic_msgs.msg import DiagnosticStatus
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from fric_nodes.trajectory_tracker import TrajectoryTracker
from ros_support import diag, made_nodes

ROOT = Path(__file__).resolve().parents[2]
KP, KD = 100.0, 10.0
SINE = dict(joints=["joint1", "joint2"], sine_center=[0.1, -0.2], sine_amplitude=[0.5, 0.3],
            sine_frequency=[0.5, 1.0], sine_duration=2.0, kp=[KP], kd=[KD], start_delay=0.1,
            approach_time=0.2, hold_time=0.1, max_effort=[1000.0],
            max_state_gap=10.0,  # the tests' states are far apart
            wait_for_subscribers=0)  # in-process: nobody subscribes the commands


@pytest.fixture
def make(ros):
    yield from made_nodes(TrajectoryTracker)


def _state(t, q, v, names=("joint1", "joint2")):
    ns = 1_000_000_000 + round(t * 1e9)  # stamps start at 1 s: the tracker's time is relative
    return JointState(name=list(names), position=list(q), velocity=list(v),
                      header=_header(ns))


def _header(ns):
    from std_msgs.msg import Header
    return Header(stamp=Time(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000))


def test_pd_law_through_the_phases(make):
    node = make(**SINE)
    q, v = np.array([0.3, 0.05]), np.array([0.02, -0.01])
    node.on_state(_state(0.0, q, v))  # hold the first measured position
    assert node.phase == "hold" and np.allclose(node.command, KD * -v)
    node.on_state(_state(0.2, q + 0.01, v))  # halfway through the approach to center - A
    start = np.array([0.1 - 0.5, -0.2 - 0.3])
    mid = (q + start) / 2  # minimum jerk: half the way at half the time, 15/8 x mean speed
    vmid = 15 / 8 * (start - q) / 0.2
    assert node.phase == "approach"
    assert np.allclose(node.command, KP * (mid - q - 0.01) + KD * (vmid - v))
    t = 0.3 + 0.7  # 0.7 s into the sinusoid
    node.on_state(_state(t, q, v))
    w = 2 * np.pi * np.array([0.5, 1.0])
    qd = np.array([0.1, -0.2]) - np.array([0.5, 0.3]) * np.cos(w * 0.7)
    vd = np.array([0.5, 0.3]) * w * np.sin(w * 0.7)
    assert node.phase == "trajectory"
    assert np.allclose(node.command, KP * (qd - q) + KD * (vd - v))
    assert np.allclose(node.rms(), np.abs(qd - q))  # one sample so far
    node.on_state(_state(0.3 + 2.05, q, v))
    assert node.phase == "final hold" and not node.finished
    node.on_state(_state(0.3 + 2.2, q, v))
    assert node.phase == "done" and not node.finished  # exit_when_done is false


def test_commands_are_bounded_by_max_effort(make):
    node = make(**{**SINE, "max_effort": [3.0, 1.0]})
    node.on_state(_state(0.0, [2.0, -2.0], [0.0, 0.0]))
    node.on_state(_state(0.5, [2.0, -2.0], [0.0, 0.0]))  # PD alone would ask ±hundreds of N m
    assert node.command.tolist() == [-3.0, 1.0]
    assert diag(node)[2]["commands clipped"] == "1"


def test_inverse_dynamics_feed_forward_is_the_planar_arms_mass_matrix(make):
    # planar 2-link, 1 kg at each link tip, 1 m links: at q = 0, M = [[5, 2], [2, 1]] kg m^2;
    # moving at q2 = 0 with joint velocity only at joint 1, h = 0 (the centripetal forces
    # point along the links). The sinusoid at t = 0+ has q_d = center - A = 0, v_d = 0,
    # a_d = A w^2.
    a = np.array([0.5, 0.3]) * (2 * np.pi * np.array([0.5, 1.0])) ** 2
    node = make(**{**SINE, "sine_center": [0.5, 0.3], "start_delay": 0.0,
                   "approach_time": 0.001}, feed_forward="inverse_dynamics",
                urdf="planar_2link", rotor_inertia=[0.25, 0.5])
    node.on_state(_state(0.0, [0.0, 0.0], [0.0, 0.0]))
    node.on_state(_state(0.001 + 1e-9, [0.0, 0.0], [0.0, 0.0]))
    assert node.phase == "trajectory" and np.allclose(node.q_d, 0.0, atol=1e-9)
    expected = np.array([[5.0, 2.0], [2.0, 1.0]]) @ a + np.array([0.25, 0.5]) * a
    assert np.allclose(node.command, expected, rtol=1e-6)


def test_a_joint_trajectory_message_replaces_the_trajectory(make):
    node = make(joints=["joint1", "joint2"], kp=[KP], kd=[0.0], start_delay=0.0,
                approach_time=0.1, max_effort=[1000.0], max_state_gap=10.0,
                wait_for_subscribers=0)
    node.on_state(_state(0.0, [0.0, 0.0], [0.0, 0.0]))
    assert node.phase == "waiting for a trajectory" and np.allclose(node.command, 0.0)
    msg = JointTrajectory(joint_names=["joint2", "joint1"])  # another order: mapped by name
    msg.points = [JointTrajectoryPoint(positions=[0.0, 1.0], time_from_start=Duration(sec=0)),
                  JointTrajectoryPoint(positions=[0.4, 2.0], time_from_start=Duration(sec=1))]
    node.on_trajectory(msg)
    node.on_state(_state(0.1 + 1.0, [0.0, 0.0], [0.0, 0.0]))  # approach done, at the end
    assert node.phase == "final hold"
    assert np.allclose(node.command, KP * np.array([2.0, 0.4]))
    bad = JointTrajectory(joint_names=["joint1"], points=msg.points)
    node.on_trajectory(bad)
    _, _, kv = diag(node)
    assert kv["rejected inputs"] == "1" and "['joint2'] missing" in kv["rejected trajectory last"]


def test_a_pause_of_the_state_stream_does_not_advance_the_trajectory(make):
    # a realtime simulator that fell behind skips simulated time: the stamps jump, the arm did
    # not move; the setpoint must not jump either
    node = make(**{**SINE, "max_state_gap": 0.02, "start_delay": 0.0, "approach_time": 0.001})
    for k in range(11):  # 10 ms steps
        node.on_state(_state(0.01 * k, [0.0, 0.0], [0.0, 0.0]))
    assert node.t == pytest.approx(0.1)
    before = node.q_d.copy()
    node.on_state(_state(0.6, [0.0, 0.0], [0.0, 0.0]))  # 0.5 s gap: one regular step of clock
    assert node.t == pytest.approx(0.11)
    # one 10 ms step moves the setpoint by at most A w 0.01 = 0.3 x 2 pi x 0.01 = 0.019 rad
    # (0.5 s of the sinusoid would be ~0.3 rad)
    assert np.abs(node.q_d - before).max() < 0.019
    kv = diag(node)[2]
    assert kv["stream pauses"] == "1" and float(kv["stream pause time [s]"]) == pytest.approx(0.49)
    node.on_state(_state(0.5, [0.0, 0.0], [0.0, 0.0]))  # back in time: rejected
    assert diag(node)[2]["rejected inputs"] == "1" and node.t == pytest.approx(0.11)


def test_watchdog_commands_zero_once_when_the_states_stop(make):
    node = make(**SINE)
    node.on_state(_state(0.0, [0.3, 0.0], [0.0, 0.0]))
    node.on_state(_state(0.5, [0.3, 0.0], [0.0, 0.0]))
    assert np.abs(node.command).max() > 1.0
    node._on_watchdog()  # within watchdog_timeout: nothing
    assert np.abs(node.command).max() > 1.0
    node._last_valid_mono -= int(0.3e9)  # 0.3 s without a valid state (timeout 0.2 s)
    node._on_watchdog()
    assert node.command.tolist() == [0.0, 0.0]
    level, message, kv = diag(node)
    assert level == DiagnosticStatus.WARN and "watchdog" in message
    assert kv["watchdog trips"] == "1"
    node._on_watchdog()  # tripped once, not again until states come back
    assert diag(node)[2]["watchdog trips"] == "1"


def test_gravity_feed_forward_holds_arm7_against_gravity(make):
    # at rest at the setpoint the PD terms vanish: the command is the URDF's g(q), which for the
    # shipped 7-DOF arm bent at the shoulder is a large torque at joint_a2 and exactly 0 at the
    # first joint (its axis is vertical)
    joints = [f"joint_a{i}" for i in range(1, 8)]
    node = make(joints=joints, kp=[100.0], kd=[10.0], feed_forward="gravity", urdf="arm7",
                max_effort=[1000.0], wait_for_subscribers=0, sine_amplitude=[0.0],
                sine_center=[0.0, 0.5, 0.0, -0.5, 0.0, 0.5, 0.0], sine_duration=1.0)
    q = [0.0, 0.5, 0.0, -0.5, 0.0, 0.5, 0.0]
    node.on_state(JointState(name=joints, position=q, velocity=[0.0] * 7,
                             header=_header(1_000_000_000)))
    from fric_core.transmission.urdf_dynamics import UrdfDynamics
    g = UrdfDynamics("arm7").gravity_torque(np.array(q))
    assert np.allclose(node.command, g, atol=1e-9)
    assert abs(g[1]) > 5.0 and g[0] == pytest.approx(0.0, abs=1e-9)


def test_unusable_states_are_rejected_and_answer_nothing(make):
    node = make(**SINE)
    node.on_state(_state(0.0, [0.0], [0.0], names=("joint1",)))
    node.on_state(_state(0.0, [0.0, math.nan], [0.0, 0.0]))
    level, _, kv = diag(node)
    assert kv["rejected inputs"] == "2" and kv["states"] == "0"
    assert level == DiagnosticStatus.WARN


# -- as a process ---------------------------------------------------------------------------------
def _run(args, timeout=30.0, **kw):
    return subprocess.run([sys.executable, "-m", "fric_nodes.trajectory_tracker", "--ros-args",
                           *args], cwd=ROOT, env=dict(os.environ), capture_output=True,
                          text=True, timeout=timeout, **kw)


def test_bad_csv_is_one_line_naming_file_and_line(tmp_path):
    f = tmp_path / "excite.csv"
    f.write_text("t,joint1,joint2\n0,0,0\n0.01,0.1,abc\n")
    r = _run(["-p", f"trajectory_file:={f}"])
    assert r.returncode == 1
    assert r.stderr.strip() == (f"trajectory_tracker: bad parameters: trajectory_file: {f}:3: "
                                "column 'joint2': 'abc' is not a number"), r.stderr
    r = _run(["-p", "trajectory_file:=/nonexistent/x.csv"])
    assert r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1
    assert "trajectory_file: /nonexistent/x.csv: cannot read" in r.stderr


def test_process_answers_states_and_ends_after_the_trajectory(tmp_path):
    import rclpy
    from rclpy.context import Context
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.qos import QoSProfile, ReliabilityPolicy

    csv = tmp_path / "traj.csv"
    tt = np.linspace(0.0, 1.0, 101)
    csv.write_text("t,joint1,joint2\n" + "".join(f"{t:.4f},{0.3 * t * t:.8f},{-t:.8f}\n"
                                                 for t in tt))
    result = tmp_path / "result.npz"
    proc = subprocess.Popen(
        [sys.executable, "-m", "fric_nodes.trajectory_tracker", "--ros-args",
         "-p", f"trajectory_file:={csv}", "-p", "kp:=[50.0]", "-p", "kd:=[0.0]",
         "-p", "start_delay:=0.0", "-p", "approach_time:=0.001", "-p", "hold_time:=0.1",
         "-p", "exit_when_done:=true", "-p", f"result_file:={result}",
         "-p", "wait_for_subscribers:=0"],
        cwd=ROOT, env=dict(os.environ), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True)
    ctx = Context()
    rclpy.init(context=ctx)
    node = rclpy.create_node("tracker_test_peer", context=ctx)
    ex = SingleThreadedExecutor(context=ctx)
    ex.add_node(node)
    errors = []
    try:
        pub = node.create_publisher(JointState, "joint_states",
                                    QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE))
        node.create_subscription(JointState, "/trajectory_tracker/tracking_error",
                                 errors.append, 1000)
        end = time.monotonic() + 20.0
        while (pub.get_subscription_count() == 0 or node.count_publishers(
                "/trajectory_tracker/tracking_error") == 0) and time.monotonic() < end:
            assert proc.poll() is None, proc.stdout.read()
            ex.spin_once(timeout_sec=0.05)
        time.sleep(0.3)
        # the arm stands still at q = 0: the tracking error is the setpoint itself
        k = 0
        while proc.poll() is None and k < 2000:
            t = k * 0.002  # 500 Hz state stamps
            pub.publish(_state(t, [0.0, 0.0], [0.0, 0.0]))
            ex.spin_once(timeout_sec=0.002)
            k += 1
        out = proc.communicate(timeout=15.0)[0]
    finally:
        if proc.poll() is None:
            proc.kill()
        ex.remove_node(node)
        node.destroy_node()
        rclpy.shutdown(context=ctx)
    assert proc.returncode == 0, out
    # trajectory 1.0 s + approach 1 ms + hold 0.1 s: it ended after ~550 states, not 2000
    assert k < 1500, (k, out)
    assert len(errors) > 100
    # In the trajectory (q̇_d = (0.6 t, −1): the not-a-knot spline is exact for a quadratic) the
    # error message gives the tracker's clock t = q̇_d,0/0.6, and the setpoint must be q_d(t).
    # The clock is the state stamps' time minus approach (1 ms), except that a stamp step over
    # max_state_gap (0.02 s: states lost on a starved machine) advances it by one regular step
    # only: its lag behind the stamps is zero until the first such gap and changes only at one.
    played, lag0, gap_seen, prev = 0, None, False, None
    for msg in sorted(errors, key=lambda m: (m.header.stamp.sec, m.header.stamp.nanosec)):
        ts = (msg.header.stamp.sec - 1) + msg.header.stamp.nanosec * 1e-9 - 0.001
        step = None if prev is None else ts - prev
        prev = ts
        if step is not None and step > 0.02 + 1e-9:
            gap_seen = True
        if abs(msg.velocity[1] + 1.0) > 1e-6:       # approach or final hold: v_d,1 = 0
            continue
        t = msg.velocity[0] / 0.6
        assert msg.position[0] == pytest.approx(0.3 * t * t, abs=1e-6)
        assert msg.position[1] == pytest.approx(-t, abs=1e-5)
        assert msg.effort[0] == pytest.approx(50.0 * msg.position[0], abs=1e-9)
        lag = ts - t
        assert lag > -1e-5, (ts, t)
        if not gap_seen:
            assert abs(lag) < 1e-5, (ts, t)
        elif lag0 is not None and step <= 0.02 + 1e-9:
            assert lag == pytest.approx(lag0, abs=1e-5), (ts, t, lag0)
        lag0 = lag
        played += 1
    assert played > 100
    assert "trajectory_tracker: tracking error over" in out and "RMS joint1" in out
    data = np.load(result)
    # RMS over the trajectory of q_d - 0: sqrt(mean((0.3 t^2)^2)) = 0.3/sqrt(5), sqrt(1/3)
    assert data["rms"] == pytest.approx([0.3 / 5 ** 0.5, 3 ** -0.5], rel=0.02)
    assert list(data["joints"]) == ["joint1", "joint2"]


# -- the launch file and its parameter files ---------------------------------------------------
@pytest.mark.parametrize("arm", ["planar_2link", "arm7"])
def test_arm_friction_launch_wires_the_chain_and_its_parameters_are_accepted(arm, ros, tmp_path):
    import yaml
    from rclpy.parameter import Parameter

    from fric_nodes.friction_compensator import FrictionCompensatorNode
    from fric_nodes.tools.launch_runner import parse_launch
    from fric_nodes.transmission_sim import TransmissionSim

    def params_of(spec):
        cmd = spec.cmd
        # each value as the node reads it (rcl parses a -p value as YAML: '...' is a string)
        return {cmd[i + 1].split(":=")[0]: yaml.safe_load(cmd[i + 1].split(":=", 1)[1])
                for i, a in enumerate(cmd) if a == "-p"}

    off = parse_launch("arm_friction.launch.xml", {"arm": arm})
    assert sorted(n.node_name for n in off) == ["/trajectory_tracker", "/transmission_sim"]
    assert params_of(off.node("trajectory_tracker"))["command_topic"] == \
        "effort_controller/commands"
    true_file = str(ROOT / "config" / f"{arm}_true_friction.yaml")
    assert params_of(off.node("transmission_sim"))["joint_friction"] == true_file
    on = parse_launch("arm_friction.launch.xml", {"arm": arm, "compensate": "true",
                                                  "record": "true", "out_dir": str(tmp_path),
                                                  "joint_friction": "/x/joint_friction.yaml"})
    assert sorted(n.node_name for n in on) == ["/fric_recorder", "/friction_compensator",
                                              "/trajectory_tracker", "/transmission_sim"]
    assert params_of(on.node("trajectory_tracker"))["command_topic"] == \
        "friction_compensator/effort_in"
    assert params_of(on.node("friction_compensator"))["joint_friction"] == \
        "/x/joint_friction.yaml"
    assert on.node("trajectory_tracker").on_exit_shutdown
    # every key of the parameter file is a parameter of its node (the sim and the tracker
    # refuse unknown ones), the tracker's and the compensator's joints are the sim's
    doc = yaml.safe_load((ROOT / "config" / f"arm_friction_{arm}.yaml").read_text())
    made = []
    try:
        for cls, key, extra in ((TransmissionSim, "transmission_sim",
                                 {"joint_friction": true_file}),
                                (TrajectoryTracker, "trajectory_tracker", {}),
                                (FrictionCompensatorNode, "friction_compensator",
                                 {"joint_friction": true_file})):
            values = {**doc[key]["ros__parameters"], **extra}
            made.append(cls(parameter_overrides=[Parameter(k, value=v)
                                                 for k, v in values.items()]))
        sim, tracker, comp = made
        assert list(tracker.joints) == list(sim.joint_names)
        assert doc["friction_compensator"]["ros__parameters"]["joints"] == list(sim.joint_names)
        # the compensator's element step is the sim's state period
        assert doc["friction_compensator"]["ros__parameters"]["dt"] == pytest.approx(sim.h)
    finally:
        for n in made:
            n.destroy_node()
