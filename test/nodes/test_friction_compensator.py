"""friction_compensator: the node's output against fric_core's compensator (in-process, callbacks
called directly), bad inputs rejected and never forwarded, the command and joint_states watchdogs,
live parameters, and ``main`` as a real process over loopback DDS (commands + friction for a
moving joint, zero effort after the watchdog, NaN joint_states rejected, a bad file: one line and
exit 1). The closed-loop 5x / no-drift checks with transmission_sim are in test/integration."""

import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import rclpy
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from fric_core.arm_identification.joint_friction import JointFriction
from fric_core.compensation import FrictionCompensator
from fric_interfaces import names, qos
from fric_interfaces.conversions import joint_state_msg
from fric_nodes.friction_compensator import FrictionCompensatorNode
from ros_support import diag, interrupt_all, made_nodes

ROOT = Path(__file__).resolve().parents[2]
FRICTION = """model: asymmetric
joints:
  a: {Cp: 1.0, Cn: 0.8, bp: 0.2, bn: 0.3}
  b: {Cp: 0.5, Cn: 0.6, bp: 0.0, bn: 0.1}
"""
JF = [JointFriction(1.0, 0.8, 0.2, 0.3), JointFriction(0.5, 0.6, 0.0, 0.1)]


@pytest.fixture
def friction_file(tmp_path):
    p = tmp_path / "joint_friction.yaml"
    p.write_text(FRICTION)
    return str(p)


@pytest.fixture
def make(ros, friction_file):
    gen = made_nodes(FrictionCompensatorNode)
    mk = next(gen)

    def _make(**params):
        params.setdefault("joints", ["a", "b"])
        params.setdefault("joint_friction", friction_file)
        params.setdefault("watchdog_timeout", 30.0)
        params.setdefault("publish_on", "joint_states")  # one output per state: exact checks
        node = mk(**params)
        node._out = _Sink()
        return node

    yield _make
    next(gen, None)


class _Sink:
    """Stands in for the command publisher: a copy of every command published."""

    def __init__(self):
        self.sent = []

    def publish(self, msg):
        self.sent.append(list(msg.data))

    def wait_for_all_acked(self, _d):
        return True


def _cmd(*vals):
    m = Float64MultiArray()
    m.data = [float(v) for v in vals]
    return m


def test_output_is_command_plus_core_compensation_joints_by_name(make):
    node = make(scale=[1.0, 0.5])
    ref = FrictionCompensator(JF, 0.001, resolution=1e-4, scale=[1.0, 0.5], max_effort=50.0)
    node._on_command(_cmd(2.0, -1.0))
    for k in range(200):  # a at +0.3 rad/s, b at -0.2 rad/s; extra joint, shuffled order
        pa, pb = 0.3 * k * 1e-3, -0.2 * k * 1e-3
        node._on_joint_state(joint_state_msg(["b", "x", "a"], [pb, 9.0, pa]))
        expected = ref.step(np.array([pa, pb]), command=np.array([2.0, -1.0]))
        assert node._out.sent[-1] == pytest.approx(list(expected), rel=1e-12, abs=1e-12)
    assert node._out.sent[-1] == pytest.approx([2.0 + 1.0 + 0.2 * 0.3,
                                                -1.0 - 0.5 * (0.6 + 0.1 * 0.2)], rel=1e-6)


def test_publish_on_command_forwards_each_command_with_the_latest_step(make):
    """publish_on: command (the default): a joint_states message steps the element and publishes
    nothing while commands are fresh; each command goes out at once with that step's
    compensation; a command before any joint_states is not forwarded (nothing to add yet)."""
    node = make(publish_on="command")
    ref = FrictionCompensator(JF, 0.001, resolution=1e-4, max_effort=50.0)
    node._on_command(_cmd(9.0, 9.0))
    assert node._out.sent == []
    for k in range(100):
        p = np.array([0.3 * k * 1e-3, -0.1 * k * 1e-3])
        node._on_joint_state(joint_state_msg(["a", "b"], list(p)))
        n0 = len(node._out.sent)
        c = np.array([0.01 * k, -0.02 * k])
        node._on_command(_cmd(*c))
        assert len(node._out.sent) == n0 + 1
        ref.step(p)
        assert node._out.sent[-1] == pytest.approx(list(ref.compensation + c), rel=1e-12,
                                                   abs=1e-12)
    assert len(node._out.sent) == 100


def test_gear_model_command_as_load_inverts_the_efficiency(ros, tmp_path):
    """Gear file, gear_load: command: moving at +0.2 rad/s with a command of +4 N·m (the motor
    drives the load) the output is 4/eta_f + Cp + bp v; with -4 N·m (the load back-drives)
    eta_b·(-4) + Cp + bp v."""
    f = tmp_path / "jf.yaml"
    f.write_text("model: gear\njoints:\n  a: {Cp: 1.0, Cn: 0.8, bp: 0.2, bn: 0.3, "
                 "eta_f: 0.8, eta_b: 0.6}\n")
    gen = made_nodes(FrictionCompensatorNode)
    mk = next(gen)
    node = mk(joints=["a"], joint_friction=str(f), publish_on="joint_states",
              watchdog_timeout=30.0)
    node._out = _Sink()
    try:
        for cmd, expected in ((4.0, 4.0 / 0.8 + 1.0 + 0.2 * 0.2),
                              (-4.0, -4.0 * 0.6 + 1.0 + 0.2 * 0.2)):
            node._on_command(_cmd(cmd))
            for k in range(300):
                node._on_joint_state(joint_state_msg(["a"], [0.2 * k * 1e-3]))
            assert node._out.sent[-1] == pytest.approx([expected], rel=1e-6)
    finally:
        next(gen, None)


def _identified_file(tmp_path, rigid_body=True):
    """A planar_2link joint_friction.yaml whose rigid_body section holds the base parameters of
    the URDF's inertias scaled by 0.8 (an identified arm 20 % lighter than its URDF): g is linear
    in the inertial parameters, so its identified gravity is exactly 0.8 × the URDF's. The arm
    stood with its plane vertical (gravity along −y; the bundled URDF's default −z is normal to
    the plane): the section's gravity vector, not the URDF model's, is used."""
    from fric_core.arm_identification import (JointFrictionSet, base_parameters,
                                              write_joint_friction)
    from fric_core.arm_identification.rigid_body import rigid_body_from_fit
    from fric_core.transmission.urdf_dynamics import UrdfDynamics
    dyn = UrdfDynamics("planar_2link", gravity=(0.0, -9.81, 0.0))
    base = base_parameters(dyn, armature=True)
    pi = np.concatenate([dyn.model.inertias[i].toDynamicParameters()
                         for i in range(1, dyn.model.njoints)])
    beta = base.beta(0.8 * pi, armature=[0.3, 0.1])
    extra = {"rigid_body": rigid_body_from_fit(dyn, base, beta, 0.01 * np.abs(beta)).to_dict()}
    fs = JointFrictionSet(joints=dict(zip(dyn.joint_names, JF)), dynamics="identify",
                          extra=extra if rigid_body else {})
    return str(write_joint_friction(tmp_path / "jf.yaml", fs)), dyn


def test_identified_gravity_is_added(ros, tmp_path):
    """gravity: identified: at rest the output is the command plus the identified g(q) (0.8 ×
    the URDF's here, not the URDF's); moving, the friction estimate on top of it."""
    path, dyn = _identified_file(tmp_path)
    gen = made_nodes(FrictionCompensatorNode)
    mk = next(gen)
    node = mk(joints=["joint2", "joint1"], joint_friction=path, gravity="identified",
              urdf="planar_2link", publish_on="joint_states", watchdog_timeout=30.0)
    node._out = _Sink()
    try:
        assert diag(node)[2]["gravity"] == "identified"
        node._on_command(_cmd(1.0, -2.0))
        for q in ([0.3, -0.4], [1.2, 0.5], [-0.7, 2.0]):  # (joint1, joint2), held at rest
            for _ in range(200):  # 20 relax_time: the compensation of the jump has decayed
                node._on_joint_state(joint_state_msg(["joint1", "joint2"], q))
            g = 0.8 * dyn.gravity_torque(np.array(q))
            assert abs(g).max() > 1.0
            # (the jump's tension, ≤ Cp, decays by 1.1**-200 ≈ 5e-9 over the 200 steps)
            assert node._out.sent[-1] == pytest.approx([1.0 + g[1], -2.0 + g[0]], rel=0,
                                                       abs=1e-7)
        for k in range(300):  # joint2 (JF[1]: Cp 0.5, bp 0) at +0.3 rad/s
            q = np.array([-0.7, 2.0 + 0.3 * k * 1e-3])
            node._on_joint_state(joint_state_msg(["joint1", "joint2"], list(q)))
        g = 0.8 * dyn.gravity_torque(q)
        assert node._out.sent[-1] == pytest.approx([1.0 + g[1] + 0.5, -2.0 + g[0]], rel=1e-6)
    finally:
        next(gen, None)


def test_identified_gravity_needs_the_section(ros, tmp_path):
    path, _ = _identified_file(tmp_path, rigid_body=False)
    params = dict(joints=["joint1", "joint2"], joint_friction=path, gravity="identified")
    for extra, text in (({"urdf": "planar_2link"}, "gravity: identified: " + path
                         + ": no 'rigid_body:' section"),
                        ({}, "urdf: needed for gravity: identified")):
        with pytest.raises(ValueError) as e:
            FrictionCompensatorNode(parameter_overrides=[
                Parameter(k, value=v) for k, v in {**params, **extra}.items()])
        assert text in str(e.value)
    path, _ = _identified_file(tmp_path)  # the section, but only one of its joints compensated
    with pytest.raises(ValueError) as e:
        FrictionCompensatorNode(parameter_overrides=[
            Parameter(k, value=v) for k, v in {**params, "joints": ["joint2"],
                                               "urdf": "planar_2link"}.items()])
    assert "gravity: identified:" in str(e.value) and "rigid_body.joints" in str(e.value)


@pytest.mark.parametrize("msg, reason", [
    (joint_state_msg(["a", "b"], [float("nan"), 0.0]), "rejected joint_states non_finite"),
    (joint_state_msg(["a"], [0.0]), "rejected joint_states missing_joint"),
    (joint_state_msg(["a", "b"], [0.0, 5000.0]), "rejected joint_states implausible"),
])
def test_bad_joint_states_rejected_counted_never_forwarded(make, msg, reason):
    node = make()
    node._on_joint_state(joint_state_msg(["a", "b"], [0.0, 0.0]))
    n0 = len(node._out.sent)
    node._on_joint_state(msg)
    assert len(node._out.sent) == n0
    level, message, kv = diag(node)
    assert level == DiagnosticStatus.WARN and kv[reason] == "1" and "rejected" in message


@pytest.mark.parametrize("data, reason", [([1.0], "rejected commands length_mismatch"),
                                          ([1.0, float("nan")], "rejected commands non_finite"),
                                          ([1.0, 1e5], "rejected commands implausible")])
def test_bad_commands_rejected_the_last_valid_one_stays(make, data, reason):
    node = make()
    node._on_command(_cmd(1.0, 2.0))
    node._on_command(_cmd(*data))
    node._on_joint_state(joint_state_msg(["a", "b"], [0.0, 0.0]))
    assert node._out.sent[-1] == [1.0, 2.0]  # at rest: no compensation, the valid command
    kv = diag(node)[2]
    assert kv[reason] == "1"


def test_saturation_is_counted(make):
    node = make(max_effort=1.5)
    node._on_command(_cmd(1.0, -3.0))
    for k in range(50):
        node._on_joint_state(joint_state_msg(["a", "b"], [0.3 * k * 1e-3, 0.0]))
    assert node._out.sent[-1] == pytest.approx([1.5, -1.5])
    level, message, kv = diag(node)
    # a: the first step has no motion, the second is in the presliding ramp (1 + 0.4 < 1.5)
    assert kv["a saturated steps"] == "48" and kv["b saturated steps"] == "50"
    assert level == DiagnosticStatus.WARN and "saturated" in message


def test_require_command_zero_once_then_nothing(make):
    node = make(require_command=True, watchdog_timeout=0.05)
    node._on_joint_state(joint_state_msg(["a", "b"], [0.0, 0.0]))
    assert node._out.sent == []  # no command yet: nothing
    node._on_command(_cmd(1.0, 1.0))
    node._on_joint_state(joint_state_msg(["a", "b"], [0.0, 0.0]))
    assert node._out.sent == [[1.0, 1.0]]
    time.sleep(0.08)
    for _ in range(3):
        node._on_joint_state(joint_state_msg(["a", "b"], [0.0, 0.0]))
    assert node._out.sent == [[1.0, 1.0], [0.0, 0.0]]
    level, message, kv = diag(node)
    assert level == DiagnosticStatus.ERROR and "commands stale" in message
    assert kv["watchdog trips (commands)"] == "1"


def test_without_commands_the_compensation_alone(make):
    """require_command: false (hand guiding, set explicitly): the compensation alone."""
    node = make(watchdog_timeout=0.05, require_command=False)
    node._on_command(_cmd(5.0, 5.0))
    time.sleep(0.08)
    for k in range(100):
        node._on_joint_state(joint_state_msg(["a", "b"], [0.3 * k * 1e-3, 0.0]))
    assert node._out.sent[-1] == pytest.approx([1.0 + 0.2 * 0.3, 0.0])
    assert "publishing the compensation alone" in diag(node)[1]


def test_live_enable_scale_and_readable_rejections(make):
    node = make()
    res = node.set_parameters([Parameter("enable", value=[True, False])])
    assert res[0].successful
    res = node.set_parameters([Parameter("scale", value=[2.0])])
    assert not res[0].successful and "scale" in res[0].reason
    res = node.set_parameters([Parameter("scale", value=[1.0, 1.0, 1.0])])
    assert not res[0].successful and "expected 1 value or 2" in res[0].reason
    res = node.set_parameters([Parameter("relax_time", value=0.5)])
    assert not res[0].successful and "read-only" in res[0].reason
    np.testing.assert_array_equal(node.compensator.gain, [1.0, 0.0])


@pytest.mark.parametrize("params, text", [
    ({"joint_friction": "/nonexistent/jf.yaml"}, "cannot read"),
    ({"joints": ["a", "zz"]}, "no friction for joint(s) ['zz']"),
    ({"enable": [True, False, True]}, "enable: expected 1 value or 2"),
    ({"gravity": "urdf"}, "urdf: needed"),
])
def test_startup_errors_name_the_problem(ros, friction_file, params, text):
    params = {"joints": ["a", "b"], "joint_friction": friction_file, **params}
    with pytest.raises(ValueError) as e:
        FrictionCompensatorNode(parameter_overrides=[Parameter(k, value=v)
                                                     for k, v in params.items()])
    assert text in str(e.value)


# ------------------------------------------------------------------ real process over DDS
def _spin_until(ex, cond, timeout=5.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        ex.spin_once(timeout_sec=0.01)
    return cond()


def test_main_process_chain_watchdog_and_rejections(ros, friction_file):
    """The node as a process: commands + friction for a moving joint_states stream; NaN
    joint_states are rejected (no output for them, counted in diagnostics); silence → one zero
    effort command (watchdog); SIGINT → exit 0."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "fric_nodes.friction_compensator", "--ros-args",
         "-p", "joints:=[a, b]", "-p", f"joint_friction:={friction_file}",
         "-p", "watchdog_timeout:=1.0", "-p", "diagnostics_period:=0.2"],
        cwd=ROOT, env=dict(os.environ), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True)
    peer = rclpy.create_node("compensator_test_peer")
    try:
        reliable = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
        outs, diags = [], []
        peer.create_subscription(Float64MultiArray, names.EFFORT_COMMANDS, outs.append,
                                 reliable)
        peer.create_subscription(DiagnosticArray, names.DIAGNOSTICS, diags.append, reliable)
        js_pub = peer.create_publisher(JointState, names.JOINT_STATES, qos.CONTROL_PUB)
        cmd_pub = peer.create_publisher(Float64MultiArray, names.COMPENSATOR_EFFORT_IN,
                                        qos.CONTROL_PUB)
        ex = SingleThreadedExecutor()
        ex.add_node(peer)
        assert _spin_until(ex, lambda: js_pub.get_subscription_count() > 0
                           and peer.count_publishers(names.EFFORT_COMMANDS) > 0,
                           timeout=15.0), proc.poll()
        # the compensator takes commands once its output has a subscriber (this peer) and a
        # joint_states came: until then its command topic has no subscriber

        def states_until_commands_taken():
            js_pub.publish(joint_state_msg(["a", "b"], [0.0, 0.0]))
            return cmd_pub.get_subscription_count() > 0

        assert cmd_pub.get_subscription_count() == 0
        assert _spin_until(ex, states_until_commands_taken, timeout=15.0), proc.poll()
        k = 0
        expected = [2.0 + 1.0 + 0.2 * 0.3, -1.0 + 0.5]  # a at +0.3 rad/s, b at +0.1 rad/s
        end = time.monotonic() + 10.0
        while not (outs and outs[-1].data == pytest.approx(expected, rel=1e-6)):
            assert time.monotonic() < end, (outs[-1].data if outs else None)
            cmd_pub.publish(_cmd(2.0, -1.0))
            js_pub.publish(joint_state_msg(["a", "b"], [0.3 * k * 1e-3, 0.1 * k * 1e-3]))
            k += 1
            ex.spin_once(timeout_sec=0.002)
        t_valid = time.monotonic()
        # the stream's last outputs may still be in flight: wait until none has come for 0.2 s
        n0 = -1
        while len(outs) != n0:
            assert time.monotonic() - t_valid < 0.8
            n0 = len(outs)
            _spin_until(ex, lambda: False, timeout=0.2)
        # NaN joint_states: rejected, nothing forwarded, counted
        for _ in range(5):
            js_pub.publish(joint_state_msg(["a", "b"], [float("nan"), 0.0]))
            ex.spin_once(timeout_sec=0.01)
        assert _spin_until(ex, lambda: any(
            kv.key == "rejected joint_states non_finite" and int(kv.value) >= 1
            for d in diags for kv in d.status[0].values), timeout=5.0)
        # silence: the watchdog publishes one zero effort command
        assert _spin_until(ex, lambda: len(outs) > n0 and list(outs[-1].data) == [0.0, 0.0],
                           timeout=5.0)
        assert all(list(o.data) == [0.0, 0.0] for o in outs[n0:])  # nothing but the zero
        assert time.monotonic() - t_valid > 0.9  # the watchdog, not a rejection, zeroed it
        assert _spin_until(ex, lambda: any("watchdog tripped" in d.status[0].message
                                           for d in diags[-3:]), timeout=5.0)
    finally:
        interrupt_all([proc])
        out = proc.stdout.read()
        peer.destroy_node()
    assert proc.returncode == 0, out
    assert "final zero effort" in out


def test_main_bad_file_one_line_exit_1(tmp_path):
    bad = tmp_path / "jf.yaml"
    bad.write_text("joints:\n  a: {Cp: -1.0, Cn: 0.8, bp: 0.2, bn: 0.3}\n")  # Cp + Cn < 0
    r = subprocess.run([sys.executable, "-m", "fric_nodes.friction_compensator", "--ros-args",
                        "-p", "joints:=[a]", "-p", f"joint_friction:={bad}"],
                       cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert r.returncode == 1
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "joints.a: Cp + Cn" in lines[0] and "Traceback" not in r.stderr
