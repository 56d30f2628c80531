"""Managed (lifecycle) nodes: ``friction_renderer``, ``haptic_stage`` and ``friction_compensator``
as real processes over loopback DDS, driven through their states by the ``lifecycle_msgs``
services from an rclpy client (what ``ros2 lifecycle set/get`` calls), the effort observed on
the command topic (renderer, compensator) or in the stage's physics (motor off: the carriage
decelerates at its friction).

What is asserted (docs/friction_renderer.md, docs/haptic_stage.md, "Lifecycle"):
* ``autostart: false`` — unconfigured and inactive nodes command nothing (renderer: no effort
  message at all; stage: no state published before configure, the motor off while inactive);
* deactivate — one message, exactly 0.0, published before the transition's answer (so within
  one input period of it), then nothing while inputs keep coming; activate — rendering resumes
  (the Coulomb level, −F while sliding forward);
* cleanup → unconfigured, shutdown → finalized and the process exits 0;
* ``autostart`` true (default) — active at once, today's behaviour (efforts without any call);
* the compensator: the compensation Cp + bp·v only while active, the same exact zero.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
import rclpy
from diagnostic_msgs.msg import DiagnosticArray
from lifecycle_msgs.msg import Transition
from lifecycle_msgs.srv import ChangeState, GetState
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import Float64MultiArray

from ros_support import interrupt_all

ROOT = Path(__file__).resolve().parents[2]
RELIABLE = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)
F = 4.0  # the renderer's default Coulomb level [N] (law coulomb, joint stage_joint)
P = 0.01  # input period of the tests [s] (renderer dt, stage rate 100 Hz)


def _start(module: str, ns: str, *params: str) -> subprocess.Popen:
    args = [sys.executable, "-m", f"fric_nodes.{module}", "--ros-args", "-r", f"__ns:={ns}"]
    for p in params:
        args += ["-p", p]
    return subprocess.Popen(args, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)


class Client:
    """A test node: the lifecycle services of one managed node, and spinning helpers."""

    def __init__(self, name: str, target: str):
        self.node = rclpy.create_node(name)
        self.ex = SingleThreadedExecutor()
        self.ex.add_node(self.node)
        self.change = self.node.create_client(ChangeState, f"{target}/change_state")
        self.get = self.node.create_client(GetState, f"{target}/get_state")
        self.diags = []
        self.node.create_subscription(DiagnosticArray, "/diagnostics", self._on_diag, RELIABLE)

    def _on_diag(self, msg: DiagnosticArray) -> None:
        for st in msg.status:
            if st.name.startswith(self._target_fqn()):
                self.diags.append({kv.key: kv.value for kv in st.values} | {"": st.message})

    def _target_fqn(self) -> str:
        return self.change.srv_name.rpartition("/change_state")[0]

    def spin_for(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.ex.spin_once(timeout_sec=0.005)

    def spin_until(self, cond, timeout: float = 10.0) -> bool:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if cond():
                return True
            self.ex.spin_once(timeout_sec=0.005)
        return cond()

    def call(self, client, request):
        assert client.wait_for_service(timeout_sec=15.0), client.srv_name
        fut = client.call_async(request)
        assert self.spin_until(fut.done, timeout=10.0), f"no answer from {client.srv_name}"
        return fut.result()

    def state(self) -> str:
        return self.call(self.get, GetState.Request()).current_state.label

    def set(self, label: str) -> tuple[bool, float]:
        """``ros2 lifecycle set <node> <label>``: (success, monotonic time of the answer)."""
        req = ChangeState.Request(transition=Transition(label=label))
        ok = self.call(self.change, req).success
        return ok, time.monotonic()

    def destroy(self) -> None:
        self.ex.remove_node(self.node)
        self.node.destroy_node()


@pytest.fixture
def procs():
    started: list[subprocess.Popen] = []
    yield started
    interrupt_all(started)


def _wait_exit(proc: subprocess.Popen, client: Client, timeout: float = 10.0) -> int:
    end = time.monotonic() + timeout
    while proc.poll() is None and time.monotonic() < end:
        client.spin_for(0.05)
    assert proc.poll() is not None, "the process did not end after shutdown"
    return proc.returncode


# ------------------------------------------------------------------ renderer
def test_renderer_lifecycle_deactivate_zeroes_effort_within_one_period(ros, procs):
    ns = "/lc_renderer"
    proc = _start("friction_renderer", ns, "autostart:=false", f"dt:={P}",
                  "watchdog_timeout:=0.2", "diagnostics_period:=0.1")
    procs.append(proc)
    c = Client("lc_renderer_test", f"{ns}/friction_renderer")
    efforts: list[tuple[float, float]] = []  # (monotonic receive time, effort)
    c.node.create_subscription(Float64MultiArray, f"{ns}/effort_controller/commands",
                               lambda m: efforts.append((time.monotonic(), m.data[0])), RELIABLE)
    js_pub = c.node.create_publisher(JointState, f"{ns}/joint_states", RELIABLE)
    v = 0.05  # sliding forward: the renderer answers −F once out of presliding
    k = [0]

    def feed():
        k[0] += 1
        m = JointState(name=["stage_joint"], position=[v * P * k[0]], velocity=[v],
                       effort=[0.0])
        m.header.stamp = c.node.get_clock().now().to_msg()
        js_pub.publish(m)

    c.node.create_timer(P, feed)
    try:
        assert c.state() == "unconfigured"
        c.spin_for(0.3)
        assert k[0] > 10 and efforts == [], "an unconfigured renderer commanded"
        assert c.set("configure")[0] and c.state() == "inactive"
        c.spin_for(0.3)
        assert efforts == [], "an inactive renderer commanded"
        assert c.spin_until(lambda: c.diags and c.diags[-1].get("lifecycle state") == "inactive")
        assert c.diags[-1]["output"].startswith("disabled (lifecycle state inactive")

        for cycle in range(2):  # activate → render → deactivate, twice
            assert c.set("activate")[0] and c.state() == "active"
            n0 = len(efforts)
            assert c.spin_until(lambda: len(efforts) > n0 + 20), "no effort after activate"
            assert efforts[-1][1] == pytest.approx(-F, abs=1e-9)  # sliding: exactly −F
            ok, t_answer = c.set("deactivate")
            assert ok
            n1 = len(efforts)
            c.spin_for(0.5)  # inputs keep coming (50 of them): the renderer stays silent
            after = efforts[n1:]
            # the zero is published inside the transition, before the answer: it is the last
            # message, exactly 0.0, received no later than one input period after the answer
            last_nonzero = next(i for i in range(len(efforts) - 1, -1, -1) if efforts[i][1] != 0.0)
            tail = efforts[last_nonzero + 1:]
            assert [e for _, e in tail] == [0.0], (cycle, tail, after)
            assert tail[0][0] <= t_answer + P, (tail[0][0] - t_answer)
            assert len(after) <= 1
            assert c.state() == "inactive"
        assert c.spin_until(lambda: c.diags[-1].get("lifecycle state") == "inactive")

        assert c.set("cleanup")[0] and c.state() == "unconfigured"
        assert not c.set("activate")[0]  # no such transition from unconfigured
        n2 = len(efforts)
        assert c.set("shutdown")[0]
        assert _wait_exit(proc, c) == 0
        assert len(efforts) == n2  # nothing on the way out
    finally:
        c.destroy()


def test_renderer_autostart_default_is_active_at_once(ros, procs):
    """No parameter, no lifecycle call: the renderer renders at once (today's launch files),
    can be deactivated (zero), and Ctrl-C still exits 0 without a further command."""
    ns = "/lc_auto"
    proc = _start("friction_renderer", ns, f"dt:={P}")
    procs.append(proc)
    c = Client("lc_auto_test", f"{ns}/friction_renderer")
    efforts: list[float] = []
    c.node.create_subscription(Float64MultiArray, f"{ns}/effort_controller/commands",
                               lambda m: efforts.append(m.data[0]), RELIABLE)
    js_pub = c.node.create_publisher(JointState, f"{ns}/joint_states", RELIABLE)
    k = [0]

    def feed():
        k[0] += 1
        m = JointState(name=["stage_joint"], position=[-0.05 * P * k[0]], velocity=[-0.05])
        m.header.stamp = c.node.get_clock().now().to_msg()
        js_pub.publish(m)

    c.node.create_timer(P, feed)
    try:
        assert c.spin_until(lambda: len(efforts) > 20, timeout=15.0), "no effort at start"
        assert efforts[-1] == pytest.approx(F, abs=1e-9)  # sliding backwards: +F
        assert c.state() == "active"
        assert c.set("deactivate")[0]
        c.spin_for(0.3)
        assert efforts[-1] == 0.0
        n = len(efforts)
        interrupt_all([proc])
        assert proc.returncode == 0
        c.spin_for(0.1)
        assert len(efforts) == n  # inactive: no final command either
    finally:
        c.destroy()


# ------------------------------------------------------------------ stage
def test_stage_lifecycle_motor_off_on_deactivate(ros, procs):
    """The sim stage at 100 Hz, noise off. A 2 N push (above the carriage's static friction)
    moves the carriage only while active; on deactivate the motor is off from the next cycle:
    the carriage decelerates (friction alone) and stops. Unconfigured: no state at all."""
    ns = "/lc_stage"
    proc = _start("haptic_stage", ns, "autostart:=false", "rate:=100.0", "force_noise:=0.0",
                  "accel_noise:=0.0", "command_timeout:=0.2")
    procs.append(proc)
    c = Client("lc_stage_test", f"{ns}/haptic_stage")
    states: list[tuple[float, float, float, float]] = []  # (stamp s, x, v, wall receive s)
    accel: list[tuple[float, float]] = []  # (stamp s, acceleration)

    def on_state(m: JointState) -> None:
        st = m.header.stamp
        states.append((st.sec + st.nanosec * 1e-9, m.position[0], m.velocity[0], time.time()))

    def on_imu(m: Imu) -> None:
        st = m.header.stamp
        accel.append((st.sec + st.nanosec * 1e-9, m.linear_acceleration.x))

    c.node.create_subscription(JointState, f"{ns}/joint_states", on_state, RELIABLE)
    c.node.create_subscription(Imu, f"{ns}/accelerometer", on_imu, RELIABLE)
    cmd_pub = c.node.create_publisher(Float64MultiArray, f"{ns}/effort_controller/commands",
                                      RELIABLE)
    push = [2.0]
    c.node.create_timer(P, lambda: cmd_pub.publish(Float64MultiArray(data=[push[0]])))
    try:
        assert c.state() == "unconfigured"
        c.spin_for(0.3)
        assert states == [], "an unconfigured stage published states"
        assert c.set("configure")[0] and c.state() == "inactive"
        assert c.spin_until(lambda: len(states) > 30), "no states when inactive"
        assert max(abs(x) for _, x, _, _ in states) == 0.0  # pushed, but the motor is off
        assert c.spin_until(lambda: c.diags and c.diags[-1].get("lifecycle state") == "inactive")
        assert c.diags[-1][""].startswith("inactive: motor off")
        assert int(c.diags[-1]["commands ignored (lifecycle not active)"]) > 0

        assert c.set("activate")[0]
        assert c.spin_until(lambda: states[-1][2] > 0.03), "the push did not move the carriage"
        # accelerating under the push: a = (2 N − friction) / m > 0
        assert accel[-1][1] > 0.5
        t_req = time.time()
        ok, _ = c.set("deactivate")
        t_ans = time.time()
        assert ok
        assert c.spin_until(lambda: states[-1][2] == 0.0 and states[-1][0] > t_ans + 0.05,
                            timeout=5.0), "the carriage did not stop with the motor off"
        # every cycle stamped one period after the answer or later runs with the motor off:
        # the carriage decelerates while it slides (its friction only: about −1.2 m/s²), then
        # sticks (0); the push (+1.5 m/s² when applied) never again
        off = [a for t, a in accel if t > t_ans + P]
        assert max(off) <= 0.0 and min(off) < -0.5, off[:10]
        # and the cycles before the request were still pushed (the push was real)
        assert any(a > 0.5 for t, a in accel if t < t_req)
        x_stop = states[-1][1]
        c.spin_for(0.3)
        assert states[-1][1] == x_stop and states[-1][2] == 0.0  # stays: motor off

        push[0] = -2.0  # activate again: the push (now backwards) is applied
        assert c.set("activate")[0]
        assert c.spin_until(lambda: states[-1][2] < -0.02), "no motion after re-activate"
        assert c.set("deactivate")[0] and c.set("cleanup")[0]
        assert c.state() == "unconfigured"
        c.spin_for(0.1)
        n = len(states)
        c.spin_for(0.3)
        assert len(states) == n, "states published after cleanup"
        assert c.set("shutdown")[0]
        assert _wait_exit(proc, c) == 0
    finally:
        c.destroy()


# ------------------------------------------------------------------ compensator
def test_compensator_lifecycle_deactivate_zeroes_effort(ros, procs, tmp_path):
    """The compensator of one joint (Cp 1.0 N·m, bp 0.2 N·m·s/rad) moving forward at 0.5 rad/s,
    outputs on each joint_states: nothing before activate, the compensation Cp + bp·v while
    active, one exact zero at deactivate (before the answer) and nothing after."""
    path = tmp_path / "joint_friction.yaml"
    path.write_text("model: asymmetric\njoints:\n  a: {Cp: 1.0, Cn: 0.8, bp: 0.2, bn: 0.3}\n")
    ns = "/lc_comp"
    proc = _start("friction_compensator", ns, "autostart:=false", "joints:=[a]",
                  f"joint_friction:={path}", f"dt:={P}", "publish_on:=joint_states",
                  "watchdog_timeout:=0.5",
                  "require_command:=false")  # no controller here: hand guiding
    procs.append(proc)
    c = Client("lc_comp_test", f"{ns}/friction_compensator")
    efforts: list[tuple[float, float]] = []
    c.node.create_subscription(Float64MultiArray, f"{ns}/effort_controller/commands",
                               lambda m: efforts.append((time.monotonic(), m.data[0])), RELIABLE)
    js_pub = c.node.create_publisher(JointState, f"{ns}/joint_states", RELIABLE)
    v = 0.5
    k = [0]

    def feed():
        k[0] += 1
        m = JointState(name=["a"], position=[v * P * k[0]])
        m.header.stamp = c.node.get_clock().now().to_msg()
        js_pub.publish(m)

    c.node.create_timer(P, feed)
    try:
        assert c.state() == "unconfigured"
        assert c.set("configure")[0] and c.state() == "inactive"
        c.spin_for(0.3)
        assert k[0] > 10 and efforts == [], "an inactive compensator commanded"
        assert c.set("activate")[0]
        assert c.spin_until(lambda: len(efforts) > 30), "no compensation after activate"
        # sliding forward: the estimate is the identified kinetic friction Cp + bp·v = 1.1
        assert efforts[-1][1] == pytest.approx(1.0 + 0.2 * v, rel=0.05)
        ok, t_answer = c.set("deactivate")
        assert ok
        n1 = len(efforts)
        c.spin_for(0.4)
        last_nonzero = next(i for i in range(len(efforts) - 1, -1, -1) if efforts[i][1] != 0.0)
        tail = efforts[last_nonzero + 1:]
        assert [e for _, e in tail] == [0.0] and tail[0][0] <= t_answer + P, tail
        assert len(efforts) - n1 <= 1
        assert c.set("shutdown")[0]
        assert _wait_exit(proc, c) == 0
    finally:
        c.destroy()


# ------------------------------------------------------------------ stage, serial backend
def _until(cond, timeout: float) -> bool:
    end = time.monotonic() + timeout
    while not cond() and time.monotonic() < end:
        time.sleep(0.002)
    return cond()


def test_stage_serial_lifecycle_port_and_idle(ros, tmp_path):
    """The serial backend (in-process node, the device emulator on a pty, its own command timeout
    5 s so it never goes safe by itself here): the port opens only at configure, a force command
    reaches the device only while active, deactivate makes the device IDLE (an IDLE frame sent
    in the transition: the device applies it in its next 10 ms cycle), cleanup closes the port
    with the motor IDLE."""
    from rclpy.parameter import Parameter

    from fric_nodes.haptic_stage import HapticStage
    from fric_nodes.hardware.stage_emulator import StageEmulator
    from fric_nodes.hardware.stage_protocol import Mode

    link = tmp_path / "stage"
    emu = StageEmulator(rate_hz=100.0, command_timeout=5.0, link=str(link), seed=1,
                        force_noise=0.0, accel_noise=0.0).start()
    params = dict(backend="serial", port=str(link), rate=100.0, reconnect_period=0.05,
                  command_timeout=5.0, autostart=False)
    node = HapticStage(namespace="/lc_serial",
                       parameter_overrides=[Parameter(k, value=v) for k, v in params.items()])
    link_ = node._link
    push = Float64MultiArray(data=[1.5])
    try:
        time.sleep(0.2)
        assert node.lifecycle_state == "unconfigured" and link_.opens == 0
        assert str(node.trigger_configure()).endswith("SUCCESS")
        assert _until(lambda: node._stats.published > 10, 5.0), "no state frames"
        node._on_effort(push)  # inactive: ignored, the device stays idle
        time.sleep(0.1)
        assert emu.mode == Mode.IDLE and node._ignored == 1
        assert str(node.trigger_activate()).endswith("SUCCESS")
        node._on_effort(push)
        assert _until(lambda: emu.mode == Mode.FORCE and emu.value == pytest.approx(1.5), 2.0)
        assert str(node.trigger_deactivate()).endswith("SUCCESS")
        # one device cycle is 10 ms; 0.2 s of slack for a loaded machine's thread scheduling
        assert _until(lambda: emu.mode == Mode.IDLE, 0.2), emu.mode
        for _ in range(5):  # commands while inactive: counted, never sent
            node._on_effort(push)
        time.sleep(0.1)
        assert emu.mode == Mode.IDLE and node._ignored == 6
        assert str(node.trigger_cleanup()).endswith("SUCCESS")
        assert not link_.connected
        n = node._stats.published
        time.sleep(0.1)
        assert node._stats.published == n, "states published after cleanup"
        assert str(node.trigger_configure()).endswith("SUCCESS")  # the port opens again
        assert _until(lambda: node._stats.published > n + 5, 5.0)
        assert link_.opens == 2
    finally:
        node.destroy_node()
        emu.stop()


# ------------------------------------------------------------------ failures in a transition
def test_transition_failures_leave_the_renderer_safe(ros):
    """A ValueError in a hook fails the transition (the state stays); any other exception goes
    through rcl's error processing: the safe output, cleanup, back to unconfigured (silent)."""
    from rclpy.parameter import Parameter

    from fric_nodes.friction_renderer import FrictionRenderer

    node = FrictionRenderer(namespace="/lc_fail",
                            parameter_overrides=[Parameter("autostart", value=False)])
    try:
        assert node.lifecycle_state == "unconfigured" and not node.output_enabled
        assert str(node.trigger_configure()).endswith("SUCCESS")

        def refuse():
            raise ValueError("not now")

        node._lc_activate = refuse
        assert str(node.trigger_activate()).endswith("FAILURE")
        assert node.lifecycle_state == "inactive" and not node.output_enabled

        def broken():
            raise RuntimeError("bug")

        node._lc_activate = broken
        assert str(node.trigger_activate()).endswith("ERROR")
        assert node.lifecycle_state == "unconfigured" and not node.output_enabled
        del node._lc_activate  # the class's own again
        assert str(node.trigger_configure()).endswith("SUCCESS")
        assert str(node.trigger_activate()).endswith("SUCCESS") and node.output_enabled
    finally:
        node.destroy_node()


def test_stage_lockstep_steps_on_commands_with_the_motor_off_while_inactive(ros):
    """Lockstep: the stage is the controller's clock, so a command still steps it while inactive
    (the loop keeps its pace), with the motor off; only an active stage applies it."""
    from rclpy.parameter import Parameter

    from fric_nodes.haptic_stage import FORCE, IDLE, HapticStage

    params = dict(sync="lockstep", rate=100.0, lockstep_wait=0.0, lockstep_timeout=3600.0,
                  autostart=False)
    node = HapticStage(namespace="/lc_lockstep",
                       parameter_overrides=[Parameter(k, value=v) for k, v in params.items()])
    ex = SingleThreadedExecutor()
    ex.add_node(node)
    push = Float64MultiArray(data=[2.0])

    def spin(seconds):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            ex.spin_once(timeout_sec=0.005)

    try:
        spin(0.2)
        assert node._stats.published == 0  # unconfigured: no state 0 either
        assert str(node.trigger_configure()).endswith("SUCCESS")
        spin(0.2)
        assert node._stats.published == 1 and node._ls.waiting  # state 0, waiting
        node._on_effort(push)  # inactive: one step, motor off
        assert node._k == 1 and node._cmd.applied == IDLE and node._last.velocity == 0.0
        assert str(node.trigger_activate()).endswith("SUCCESS")
        for k in (2, 3, 4):
            node._on_effort(push)
            assert node._k == k and node._cmd.applied == FORCE
        assert node._last.velocity > 0.0  # 2 N beats the carriage's static friction
        assert str(node.trigger_deactivate()).endswith("SUCCESS")
        node._on_effort(push)
        assert node._k == 5 and node._cmd.applied == IDLE
    finally:
        ex.remove_node(node)
        node.destroy_node()
