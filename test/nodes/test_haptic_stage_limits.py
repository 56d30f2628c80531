"""haptic_stage (issue 13, item 3): a finite but absurd setpoint or force never kills the node nor
moves the carriage, found with a real node process over loopback DDS.

Before the fix, one ``position_controller/commands`` ``[±1.7976931348623157e308]`` killed the node
(kp × setpoint overflowed to inf, inf − inf = NaN, ``math.floor(NaN)`` raised in
fric_core/haptics/stage.py), and ``[1e300]`` sent the carriage into its end stop for 1.22 s (the
setpoint filter had to decay from 1e300 m). Now a setpoint outside the travel ``[x_min, x_max]`` is
rejected (counted, logged, diagnostics naming the field and the value) and changes nothing; an
effort command beyond ``max_force`` saturates the motor (logged, counted, saturated cycles
reported).
"""

import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import rclpy
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from fric_core.haptics.stage import HapticStageSim
from fric_interfaces import names, qos
from ros_support import terminate_output

ROOT = Path(__file__).resolve().parents[2]
RES = 2.57e-6  # encoder count (m)
RELIABLE = QoSProfile(depth=5000, reliability=ReliabilityPolicy.RELIABLE)
DBL_MAX = 1.7976931348623157e308


def test_core_stage_is_total_for_any_finite_command():
    """fric_core.haptics.stage: every finite force or setpoint gives a finite state within the
    travel and the stops' bumper: the carriage, accelerated by at most max_force over the 32 mm
    travel, hits a stop at v <= sqrt(2 F L / m) and sinks in by at most v sqrt(m / K) + F / K."""
    s = HapticStageSim()
    v_hit = (2 * s.max_force * (s.x_max - s.x_min) / s.carriage_mass) ** 0.5
    pen = v_hit * (s.carriage_mass / s.stop_stiffness) ** 0.5 + s.max_force / s.stop_stiffness
    for cmd in (DBL_MAX, -DBL_MAX, 1e300, -1e300, 1e155):
        s = HapticStageSim(force_noise=0.0, accel_noise=0.0)
        for force, setpoint in ((None, cmd), (cmd, None), (cmd, cmd), (-cmd, cmd), (cmd, -cmd)):
            for _ in range(50):
                r = s.step(force, setpoint)
                assert all(np.isfinite(r[1:8])) and all(np.isfinite(r[9:17])), (cmd, r)
                assert s.x_min - pen <= r.true_position <= s.x_max + pen
                assert abs(r.motor_force) <= s.max_force
    # an absurd setpoint is forgotten within the setpoint filter's time constant (1.6 ms): the
    # servo is back at 4 mm and at rest 0.2 s later, stuck within its static-friction band
    # (1.04 N / kp = 0.13 mm) of the setpoint (before: 1.22 s in the end stop)
    s = HapticStageSim(force_noise=0.0, accel_noise=0.0)
    s.run(300, None, 0.004)
    s.step(None, 1e300)
    r = s.run(200, None, 0.004)[-1]
    assert abs(r.true_position - 0.004) < 1.04 / s.kp + 3 * RES and r.true_velocity == 0.0
    with pytest.raises(ValueError, match="kp"):
        HapticStageSim(kp=1e305)


class _Peer:
    def __init__(self):
        self.node = n = rclpy.create_node("stage_limits_peer")
        self.states, self.diags = [], []
        n.create_subscription(JointState, names.JOINT_STATES,
                              lambda m: self.states.append(m.position[0]), RELIABLE)
        n.create_subscription(DiagnosticArray, names.DIAGNOSTICS, self.diags.append, RELIABLE)
        self.pub = {t: n.create_publisher(Float64MultiArray, topic, qos.CONTROL_PUB)
                    for t, topic in (("position", names.POSITION_COMMANDS),
                                     ("effort", names.EFFORT_COMMANDS))}
        self.ex = SingleThreadedExecutor()
        self.ex.add_node(n)

    def send(self, topic, value):
        self.pub[topic].publish(Float64MultiArray(data=[float(value)]))

    def run(self, seconds, topic=None, value=None, period=0.01):
        """Spin for ``seconds``, sending ``value`` on ``topic`` every ``period``."""
        end = time.monotonic() + seconds
        nxt = 0.0
        while time.monotonic() < end:
            if topic is not None and time.monotonic() >= nxt:
                self.send(topic, value)
                nxt = time.monotonic() + period
            self.ex.spin_once(timeout_sec=0.002)

    def diag(self):
        for d in reversed(self.diags):
            for st in d.status:
                if st.name.endswith(": stage"):
                    return st.level, st.message, {kv.key: kv.value for kv in st.values}
        return None

    def close(self):
        self.ex.remove_node(self.node)
        self.node.destroy_node()


def test_absurd_setpoints_rejected_and_forces_saturated_over_dds(ros):
    proc = subprocess.Popen(
        [sys.executable, "-m", "fric_nodes.haptic_stage", "--ros-args", "-p", "rate:=200.0",
         "-p", "force_noise:=0.0", "-p", "accel_noise:=0.0",
         "-p", "diagnostics_period:=0.2", "-p", "command_timeout:=0.5"],
        cwd=ROOT, env=dict(os.environ), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True)
    peer = _Peer()
    try:
        end = time.monotonic() + 20.0
        while not peer.states and time.monotonic() < end and proc.poll() is None:
            peer.run(0.1)
        assert peer.states, "no joint_states from the node"
        # track 4 mm: the PD servo brings the carriage to rest, held by its static friction
        # (Table 3: 1.04 N forward) within 1.04 N / kp = 0.13 mm of the setpoint
        target, band = 0.004, 1.04 / 8000.0 + 3 * RES
        end = time.monotonic() + 10.0
        while time.monotonic() < end:
            peer.run(0.1, "position", target)
            if len(set(peer.states[-20:])) == 1 and abs(peer.states[-1] - target) <= band:
                break
        x_rest = peer.states[-1]
        assert len(set(peer.states[-20:])) == 1 and abs(x_rest - target) <= band, \
            peer.states[-20:]
        # absurd setpoints between good ones: each rejected, changing nothing: the carriage
        # stays exactly where it rests (before the fix: the node died, or with 1e300 the
        # carriage sat in the end stop for 1.22 s)
        n0 = len(peer.states)
        for bad in (DBL_MAX, -DBL_MAX, 1e300, 0.0161):
            peer.send("position", bad)
            peer.run(0.05)  # depth-1 control QoS: no good command right behind to replace it
            peer.run(0.1, "position", target)
        peer.run(0.4, "position", target)
        assert proc.poll() is None, proc.communicate()[0][-3000:]
        after = np.array(peer.states[n0:])
        assert len(after) > 40, len(after)
        assert np.all(after == x_rest), (x_rest, after.min(), after.max())
        _, _, d = peer.diag()
        assert d["rejected out_of_travel"] == "4", d
        last = d["rejected out_of_travel last"]
        assert "position_controller/commands" in last and "0.0161" in last and "x_min" in last
        # the effort path: 1e308 N saturates the motor at max_force (9.48 N): the carriage goes
        # to the upper stop and rests in it (bumper: max_force / stop_stiffness = 9.5 um), its
        # impact within the bound of the core test, nothing overflows
        s = HapticStageSim()
        v_hit = (2 * s.max_force * (s.x_max - s.x_min) / s.carriage_mass) ** 0.5
        pen = v_hit * (s.carriage_mass / s.stop_stiffness) ** 0.5 + s.max_force / s.stop_stiffness
        n1 = len(peer.states)
        peer.run(0.5, "effort", 1e308)
        assert proc.poll() is None
        x = np.array(peer.states[n1:])
        assert np.all(np.isfinite(x)) and x.max() <= 0.016 + pen, x.max()
        assert 0.016 <= x[-1] <= 0.016 + s.max_force / s.stop_stiffness + RES, x[-5:]
        peer.run(0.3)  # diagnostics of the saturated period
        level, msg, d = peer.diag()
        assert int(d["effort commands beyond max_force"]) >= 10, d
        assert int(d["saturated cycles"]) >= 20, d  # every cycle at 200 Hz: 100 unloaded
        # and back to tracking (the PD servo: ~0.3 s from the stop; more on a loaded machine)
        end = time.monotonic() + 5.0
        while time.monotonic() < end:
            peer.run(0.1, "position", target)
            if abs(peer.states[-1] - target) <= band:
                break
        assert abs(peer.states[-1] - target) <= band, peer.states[-5:]
    finally:
        peer.close()
        out = terminate_output(proc)
    assert "Traceback" not in out, out[-3000:]
    assert "data[0] = 1.7976931348623157e+308 m is outside the travel" in out, out[-3000:]
    assert "beyond max_force 9.48 N" in out, out[-3000:]
