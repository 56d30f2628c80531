"""Helpers the node tests share (test/nodes, test/integration): in-process nodes with parameter
overrides, a node's diagnostics as a dict, stopping node processes, and a peer that commands an
arm process (transmission_sim) and records what it publishes."""

import signal
import subprocess
import time

import rclpy
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from fric_interfaces import names, qos


def diag(node) -> tuple:
    """(level, message, {key: value}) of ``node.diagnostic_status()``."""
    st = node.diagnostic_status()
    return st.level, st.message, {kv.key: kv.value for kv in st.values}


def made_nodes(cls):
    """Body of a fixture: yields ``make(**params)`` building ``cls`` nodes with those parameter
    overrides, and destroys every node made when the test ends."""
    nodes = []

    def make(**params):
        n = cls(parameter_overrides=[Parameter(k, value=v) for k, v in params.items()])
        nodes.append(n)
        return n

    yield make
    for n in nodes:
        n.destroy_node()


def interrupt_all(procs, timeout: float = 15.0) -> None:
    """SIGINT every process still running (their clean stop), wait, kill what does not end."""
    for p in procs:
        if p.poll() is None:
            p.send_signal(signal.SIGINT)
    for p in procs:
        try:
            p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def terminate_output(proc, timeout: float = 10.0) -> str:
    """SIGTERM ``proc`` and return its output (killed if it does not end within ``timeout``)."""
    proc.terminate()
    try:
        return proc.communicate(timeout=timeout)[0]
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.communicate()[0]


class ArmPeer:
    """A node that publishes effort commands to an arm process and records its joint_states
    (positions, velocities, efforts) and /diagnostics; ``run`` spins it for a while, resending
    ``tau`` every ``period``."""

    RELIABLE = QoSProfile(depth=5000, reliability=ReliabilityPolicy.RELIABLE)

    def __init__(self, name: str = "arm_peer"):
        self.node = n = rclpy.create_node(name)
        self.q, self.v, self.effort, self.diags = [], [], [], []
        n.create_subscription(JointState, names.JOINT_STATES, self._on_state, self.RELIABLE)
        n.create_subscription(DiagnosticArray, names.DIAGNOSTICS, self.diags.append,
                              self.RELIABLE)
        self.pub = n.create_publisher(Float64MultiArray, names.EFFORT_COMMANDS, qos.CONTROL_PUB)
        self.ex = SingleThreadedExecutor()
        self.ex.add_node(n)

    def _on_state(self, m):
        self.q.append(list(m.position))
        self.v.append(list(m.velocity))
        self.effort.append(list(m.effort))

    def run(self, seconds, tau=None, period=0.01):
        end = time.monotonic() + seconds
        nxt = 0.0
        while time.monotonic() < end:
            if tau is not None and time.monotonic() >= nxt:
                self.pub.publish(Float64MultiArray(data=[float(t) for t in tau]))
                nxt = time.monotonic() + period
            self.ex.spin_once(timeout_sec=0.002)

    def messages(self, status_suffix: str = ": arm"):
        """The /diagnostics messages of the statuses whose name ends with ``status_suffix``."""
        return [st.message for d in self.diags for st in d.status
                if st.name.endswith(status_suffix)]

    def close(self):
        self.ex.remove_node(self.node)
        self.node.destroy_node()
