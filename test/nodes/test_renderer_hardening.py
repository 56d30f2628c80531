"""friction_renderer against wild inputs (issue 13, items 1, 2 and 6a), the way they were found.

* Item 1: the renderer process died (``OverflowError`` in ``Stribeck._phi_scalar``) on one
  JointState with velocity 1e155, and on the accepted set ``law stribeck, Fs 4.0, Fc 4.0,
  delta 1e6`` at the first |v| > 0.5 m/s.
* Item 2: with ``coulomb_viscous`` (model C) or model B, ONE message with v = 1e300 between good
  ones left the output at −max_effort for the next second (until a watchdog trip).
* Item 6a: one JointState stamped 1e6 s in the future made ``lost cycles`` jump by 1 000 000 024
  and the good stamps after it were rejected as "not increasing" until the watchdog tripped.

The process tests run ``python -m fric_nodes.friction_renderer`` over loopback DDS in lockstep
with a peer node: one state published, its one command awaited (a rejected input is answered
with the safe output, the last command again, so every state gets exactly one command).
Exactness: the renderer's output is compared with a fric_core element fed the same accepted
inputs, bit for bit (same float operations); the rejected ones never reach it.
"""

import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import rclpy
from diagnostic_msgs.msg import DiagnosticStatus
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from fric_core.elements import InertialImpedance, MasslessImpedance
from fric_core.laws import Coulomb, CoulombViscous, Stribeck
from fric_interfaces import names, qos
from fric_interfaces.conversions import joint_state_msg
from fric_nodes.friction_renderer import FrictionRenderer
from ros_support import diag, made_nodes

ROOT = Path(__file__).resolve().parents[2]
T0 = 1_000_000_000
DT_NS = 1_000_000
K, B, DT = 6000.0, 10.0, 0.001


def js(vel, k, pos=0.0, stamp_ns=None):
    return joint_state_msg(["stage_joint"], [pos], [vel], None,
                           stamp_ns=T0 + k * DT_NS if stamp_ns is None else stamp_ns)


@pytest.fixture
def make(ros):
    yield from made_nodes(FrictionRenderer)


# ------------------------------------------------------------------ in-process, exact
@pytest.mark.parametrize("element", ["massless_impedance", "inertial_impedance"])
def test_one_wild_sample_is_rejected_and_never_reaches_the_element(make, element):
    """Item 2: v = 1e300 once between good samples. The output after it is exactly that of an
    element that never saw it (before: −max_effort for ~1700 messages with B = 10)."""
    law = CoulombViscous(4.0, 2.0)
    node = make(element=element, watchdog_timeout=30.0, **{"stage_joint.law": "coulomb_viscous",
                                                            "stage_joint.D": 2.0})
    ref = (MasslessImpedance(K, B, law, DT) if element == "massless_impedance"
           else InertialImpedance(2.0, K, B, law, DT))
    for k in range(300):
        node._on_joint_state(js(0.05, k))
        assert node.last_command[0] == max(-10.0, min(10.0, -ref.step(0.05)))
    held = node.last_command.copy()
    node._on_joint_state(js(1e300, 300))
    np.testing.assert_array_equal(node.last_command, held)  # the safe output: last command
    level, message, d = diag(node)
    assert level == DiagnosticStatus.WARN and d["rejected implausible"] == "1"
    assert "velocity 1e+300" in d["rejected implausible last"]
    assert "max_velocity 10" in d["rejected implausible last"]
    for k in range(301, 1300):
        node._on_joint_state(js(0.05, k))
        assert node.last_command[0] == max(-10.0, min(10.0, -ref.step(0.05))), k
    assert abs(node.last_command[0]) < 5.0  # the rendered kinetic friction, not -max_effort


def test_plausibility_limit_is_a_live_parameter_with_a_range(make):
    node = make(watchdog_timeout=30.0)
    assert node.set_parameters([Parameter("max_velocity", value=0.5)])[0].successful
    node._on_joint_state(js(0.6, 0))
    assert diag(node)[2]["rejected implausible"] == "1"
    node._on_joint_state(js(0.4, 1))
    assert node.last_command[0] != 0.0  # accepted and rendered
    r = node.set_parameters([Parameter("max_velocity", value=0.0)])[0]
    assert not r.successful and "max_velocity" in r.reason


def test_admittance_force_beyond_max_force_is_rejected_not_saturated(make):
    node = make(mode="admittance", admittance_input="joint_effort", watchdog_timeout=30.0,
                max_force=100.0)
    node._on_effort_state(joint_state_msg(["stage_joint"], [0.2], [0.0], [1.0],
                                          stamp_ns=T0))
    sp = node.last_command.copy()
    node._on_effort_state(joint_state_msg(["stage_joint"], [0.2], [0.0], [1e300],
                                          stamp_ns=T0 + DT_NS))
    np.testing.assert_array_equal(node.last_command, sp)  # held setpoint
    assert "effort 1e+300" in diag(node)[2]["rejected implausible last"]
    node._on_effort_state(joint_state_msg(["stage_joint"], [0.2], [0.0], [50.0],
                                          stamp_ns=T0 + 2 * DT_NS))
    d = diag(node)[2]
    assert d["saturated cycles total"] == "1"  # 50 N > max_effort 10 N: saturated, reported


def test_admittance_setpoint_never_starts_from_an_implausible_position(make):
    """A wild measured position (1e300 m) would start the admittance setpoint there and be
    published as a position command: it is rejected (max_position) and the setpoint starts from
    the next good one. Both admittance inputs: joint_effort, and wrench + joint_states."""
    node = make(mode="admittance", admittance_input="joint_effort", watchdog_timeout=30.0)
    node._on_effort_state(joint_state_msg(["stage_joint"], [1e300], [0.0], [1.0],
                                          stamp_ns=T0))
    assert np.isfinite(node.last_command).all() and abs(node.last_command[0]) < 1.0
    assert "position 1e+300" in diag(node)[2]["rejected implausible last"]
    node._on_effort_state(joint_state_msg(["stage_joint"], [0.002], [0.0], [1.0],
                                          stamp_ns=T0 + DT_NS))
    assert abs(node.last_command[0] - 0.002) < 1e-6  # started from the good position
    wnode = make(mode="admittance", admittance_input="wrench", watchdog_timeout=30.0,
                 max_position=0.5)
    wnode._on_position(joint_state_msg(["stage_joint"], [0.7], [0.0], None, stamp_ns=T0))
    d = diag(wnode)[2]
    assert "position 0.7" in d["rejected implausible last"] and "max_position 0.5" in \
        d["rejected implausible last"]
    assert wnode._pos_mono is None  # no setpoint may start from it


def test_stribeck_steep_accepted_set_renders_kinetic_level(make):
    """Item 1, second form: the accepted set Fs = Fc = 4, delta = 1e6 at |v| > 0.5."""
    node = make(watchdog_timeout=30.0, **{"stage_joint.law": "stribeck", "stage_joint.Fs": 4.0,
                                          "stage_joint.Fc": 4.0, "stage_joint.delta": 1e6})
    ref = MasslessImpedance(K, B, Stribeck(4.0, 4.0, 0.5, 0.0, 1e6), DT)
    for k in range(200):
        node._on_joint_state(js(0.6, k))
        assert node.last_command[0] == -ref.step(0.6)
    assert node.last_command[0] == -4.0


def test_huge_viscous_force_is_clamped_to_max_effort_and_reported(make):
    """Item 1: CoulombViscous with D > 0 is unbounded in v by nature: the element's output is
    finite and the command is clamped to max_effort, with the saturation on diagnostics."""
    node = make(max_velocity=1e6, watchdog_timeout=30.0,
                **{"stage_joint.law": "coulomb_viscous", "stage_joint.D": 1e4})
    node._on_joint_state(js(9e5, 0))
    assert node.last_command[0] == -10.0
    level, message, d = diag(node)
    assert d["saturation"] == "active" and "saturated at max_effort 10" in message


def test_future_stamp_is_one_rejected_input_not_a_billion_lost_cycles(make):
    """Item 6a: one stamp 1e6 s ahead: one rejection (stamp_jump), lost cycles unchanged, and the
    good stamps after it are accepted at once (no watchdog trip needed)."""
    node = make(watchdog_timeout=0.1)
    ref = MasslessImpedance(K, B, Coulomb(4.0), DT)
    for k in range(100):
        node._on_joint_state(js(0.05, k))
        ref.step(0.05)
    node._on_joint_state(js(0.05, 100, stamp_ns=T0 + 100 * DT_NS + 10 ** 15))
    for k in range(101, 200):
        node._on_joint_state(js(-0.05, k))
        assert node.last_command[0] == -ref.step(-0.05), k
    level, message, d = diag(node)
    assert d["lost cycles"] == "1"  # cycle 100 (the rejected one)
    assert d["rejected stamp_jump"] == "1" and "1e+06 s" in d["rejected stamp_jump last"]
    assert d["accepted inputs"] == "199" and not node.watchdog_tripped


def test_future_stamp_on_the_first_input_re_anchors(make):
    """The first input after a start (or a trip) has no history: if it carries the wild stamp,
    the next input re-anchors the stream instead of being rejected until the watchdog trips."""
    node = make(watchdog_timeout=30.0)
    node._on_joint_state(js(0.05, 0, stamp_ns=T0 + 10 ** 15))
    for k in range(1, 50):
        node._on_joint_state(js(0.05, k))
    d = diag(node)[2]
    assert d["accepted inputs"] == "50" and d["stamp re-anchors"] == "1"
    assert d["lost cycles"] == "0" and "rejected inputs" in d and d["rejected inputs"] == "0"


def test_past_stamp_far_back_is_rejected_and_stream_continues(make):
    node = make(watchdog_timeout=30.0)
    for k in range(10):
        node._on_joint_state(js(0.05, k))
    node._on_joint_state(js(0.05, 10, stamp_ns=5))
    for k in range(11, 20):
        node._on_joint_state(js(0.05, k))
    d = diag(node)[2]
    assert d["accepted inputs"] == "19" and d["rejected stamp_not_increasing"] == "1"


# ------------------------------------------------------------------ the renderer process
class _Lockstep:
    """A renderer process and a peer publishing one state and awaiting its one command."""

    def __init__(self, *params: str):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "fric_nodes.friction_renderer", "--ros-args",
             "--params-file", str(ROOT / "config/renderer_example.yaml"),
             "-p", "watchdog_timeout:=10.0", "-p", "diagnostics_period:=0.2",
             *[a for p in params for a in ("-p", p)]],
            cwd=ROOT, env=dict(os.environ), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True)
        self.peer = rclpy.create_node("renderer_hardening_peer")
        self.cmds, self.diags = [], []
        rel = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
        self.peer.create_subscription(Float64MultiArray, names.EFFORT_COMMANDS,
                                      self.cmds.append, rel)
        from diagnostic_msgs.msg import DiagnosticArray
        self.peer.create_subscription(DiagnosticArray, names.DIAGNOSTICS, self.diags.append, rel)
        self.pub = self.peer.create_publisher(JointState, names.JOINT_STATES, qos.CONTROL_PUB)
        self.ex = SingleThreadedExecutor()
        self.ex.add_node(self.peer)

    def spin_until(self, cond, timeout):
        end = time.monotonic() + timeout
        while not cond() and time.monotonic() < end:
            self.ex.spin_once(timeout_sec=0.005)
        return cond()

    def connect(self) -> int:
        """Send rest states until answered (discovery); returns the next cycle index."""
        assert self.spin_until(lambda: self.pub.get_subscription_count() > 0
                               and self.peer.count_publishers(names.EFFORT_COMMANDS) > 0, 20.0), \
            self.output()
        k = 0
        while not self.cmds:
            assert k < 400 and self.proc.poll() is None, self.output()
            self.pub.publish(js(0.0, k))
            self.spin_until(lambda: bool(self.cmds), 0.05)
            k += 1
        return k

    def step(self, msg) -> float:
        n0 = len(self.cmds)
        self.pub.publish(msg)
        assert self.spin_until(lambda: len(self.cmds) > n0, 5.0), self.output()
        return self.cmds[-1].data[0]

    def diag(self) -> dict:
        n0 = len(self.diags)
        assert self.spin_until(lambda: len(self.diags) > n0 + 1, 5.0)
        return {kv.key: kv.value for kv in self.diags[-1].status[0].values}

    def output(self) -> str:
        if self.proc.poll() is None:
            return "(renderer running)"
        return self.proc.communicate(timeout=5)[0][-3000:]

    def close(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.ex.shutdown()
        self.peer.destroy_node()


def test_process_survives_wild_velocity_and_future_stamp_coulomb_viscous(ros):
    """Items 1, 2, 6a over DDS: coulomb_viscous (D = 2) on model C; one v = 1e300, later one
    stamp 1e6 s ahead, then the direction reverses. The renderer answers every state, its
    output after each wild message is the element's without it, and lost cycles stay 0."""
    ls = _Lockstep("stage_joint.law:=coulomb_viscous", "stage_joint.D:=2.0")
    try:
        k = ls.connect()
        ref = MasslessImpedance(K, B, CoulombViscous(4.0, 2.0), DT)
        for _ in range(k):
            ref.step(0.0)
        for i in range(150):
            assert ls.step(js(0.05, k)) == -ref.step(0.05)
            k += 1
        e_slide = ls.cmds[-1].data[0]
        assert e_slide == pytest.approx(-(4.0 + 2.0 * 0.05), abs=0.01)
        assert ls.step(js(1e300, k)) == e_slide  # rejected: the last command again
        k += 1
        for i in range(50):  # before the fix: -max_effort for ~1700 messages
            assert ls.step(js(0.05, k)) == -ref.step(0.05)
            k += 1
        assert ls.step(js(0.05, k, stamp_ns=T0 + k * DT_NS + 10 ** 15)) == e_slide
        k += 1
        for i in range(100):  # accepted at once: no wait for a watchdog trip
            assert ls.step(js(-0.05, k)) == -ref.step(-0.05)
            k += 1
        assert ls.cmds[-1].data[0] == pytest.approx(4.1, abs=0.01)
        d = ls.diag()
        # the two rejected cycles (and a state overwritten while connecting, at most a few);
        # before the fix the stamp 1e6 s ahead counted 1e9 lost cycles
        assert int(d["lost cycles"]) < 100, d
        assert d["rejected implausible"] == "1" and d["rejected stamp_jump"] == "1", d
        assert d["watchdog trips"] == "0"
        assert ls.proc.poll() is None
    finally:
        ls.close()


def test_process_survives_stribeck_overflow(ros):
    """Item 1 as found: law stribeck, v = 1e155 (the process died with OverflowError), and the
    accepted set Fs = Fc = 4, delta = 1e6 at |v| > 0.5 (died at the first such state)."""
    ls = _Lockstep("stage_joint.law:=stribeck", "stage_joint.Fs:=4.0", "stage_joint.Fc:=4.0",
                   "stage_joint.delta:=1000000.0", "max_velocity:=1000000.0")
    try:
        k = ls.connect()
        for i in range(100):
            e = ls.step(js(0.6, k))
            k += 1
        assert e == -4.0
        assert ls.step(js(-1e155, k)) == -4.0  # beyond max_velocity 1e6: rejected, held
        k += 1
        for i in range(100):
            e = ls.step(js(-0.7, k))
            k += 1
        assert e == 4.0 and ls.proc.poll() is None
    finally:
        ls.close()


def test_leftover_of_the_dead_stream_after_a_trip_renders_no_effort(make):
    """Item 8: a state of the stream that stopped, handled only after the watchdog trip (it
    waited in the queue on a loaded machine), used to be accepted (any stamp is accepted after
    a trip) and rendered an effort from rest for another watchdog period: the dead device's last
    command was not zero. It is stale (within watchdog_timeout of the last stamp before the
    trip) and rejected; a resumed stream (stamps later than that) is rendered again."""
    node = make(watchdog_timeout=0.05)
    for k in range(80):
        node._on_joint_state(js(0.05, k))
    assert node.last_command[0] == -4.0
    time.sleep(0.08)
    node._on_watchdog()
    assert node.watchdog_tripped and node.last_command[0] == 0.0
    node._on_joint_state(js(0.05, 80))  # the leftover
    assert node.last_command[0] == 0.0 and node.watchdog_tripped
    d = diag(node)[2]
    assert d["rejected stamp_stale"] == "1"
    ref = MasslessImpedance(K, B, Coulomb(4.0), DT)
    for k in range(300, 310):  # the stream resumes 0.22 s later: rendered from rest
        node._on_joint_state(js(0.05, k))
        assert node.last_command[0] == -ref.step(0.05)
    assert not node.watchdog_tripped


# ------------------------------------------------------------------ the rejection path's cost
def test_lazy_reject_log_reads_and_logs_what_the_eager_one_does():
    """Issue 17: a rejection keeps its template and arguments and the warning's throttle is
    checked before rclpy's logger (which looks up the caller's source file on every call). The
    diagnostics read, and the log shows, the texts RejectLog shows when given them formatted."""
    from fric_nodes._node_util import RejectLog
    from fric_nodes.renderer_diagnostics import LazyRejectLog

    class Log:
        def __init__(self):
            self.lines = []

        def warning(self, text, **_):
            self.lines.append(text)

    lazy, eager = LazyRejectLog(Log()), RejectLog(Log())
    buf = np.array([0.5])
    for k in range(50):
        buf[0] = 1.5 * k
        args = ("joint_states", "velocity", float(buf[0]), "j", "max_velocity", 10.0)
        tmpl = "{}: {} {:.6g} of joint {!r} is beyond {} {:g}"
        for log in (lazy, eager):
            log.add("implausible", tmpl.format(*args)) if log is eager else \
                log.add("implausible", tmpl, *args)
            log.add("no_position", "wrench: no recent joint_states")
        if k == 20:
            assert lazy.period_problem() == eager.period_problem()
    buf[0] = -1.0  # the buffer reused: the texts kept their values
    assert lazy.key_values() == eager.key_values()
    problem = lazy.period_problem()
    assert problem == eager.period_problem() and problem.startswith("58 rejected inputs, last: ")
    assert lazy.latest == eager.latest
    assert lazy.last["implausible"].endswith("73.5 of joint 'j' is beyond max_velocity 10")
    assert lazy.period_problem() is eager.period_problem() is None
    assert lazy._log.lines == ["rejected input: joint_states: velocity 0 of joint 'j' is beyond "
                               "max_velocity 10"]  # one per second, the first


def test_repeated_foreign_joint_names_raise_the_same_error_without_a_growing_traceback():
    """Issue 17: a stream without our joints is rejected from a cached error; same text."""
    from fric_interfaces.conversions import InputError, JointStateReader
    r = JointStateReader(["stage_joint"])
    errors, depth = [], []
    for k in range(4):
        with pytest.raises(InputError) as e:
            r.read(joint_state_msg(["gripper"], [0.0], [0.0], None))
        errors.append(e.value)
        depth.append(len(list(_frames(e.value.__traceback__))))
    assert depth[1] == depth[2] == depth[3] < depth[0]  # without _map's frame, not growing
    assert str(errors[2]) == str(errors[0]) == \
        "name: joint(s) ['stage_joint'] missing (message has ['gripper'])"
    r.read(js(0.25, 0))
    assert r.velocity[0] == 0.25


def _frames(tb):
    while tb is not None:
        yield tb
        tb = tb.tb_next
