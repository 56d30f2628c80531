"""``haptic_loop``: the stage and the renderer composed in one process (fric_nodes.haptic_loop).

Run as a real process in lockstep (deterministic at any load), watched over loopback DDS by a peer:
the operator's hand holds 2 N on the handle, below the rendered Coulomb level F = 4 N, so the
handle must not move; the composed renderer answers with the friction force; the process ends at
the stage's duration with exit 0.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from fric_interfaces import names

ROOT = Path(__file__).resolve().parents[2]
COUNT = 2.57e-6  # one encoder count of the simulated stage [m] (fric_core.haptics.stage default)


@pytest.fixture
def ros():
    rclpy.init()
    yield
    rclpy.shutdown()


def _loop(*overrides: str) -> list[str]:
    cmd = [sys.executable, "-m", "fric_nodes.haptic_loop", "--ros-args", "--params-file",
           str(ROOT / "config/haptic_render.yaml")]
    for o in overrides:
        cmd += ["-p", o]
    return cmd


def test_composed_loop_holds_below_breakaway_then_exits(ros):
    peer = rclpy.create_node("haptic_loop_peer")
    reliable = QoSProfile(depth=5000, reliability=ReliabilityPolicy.RELIABLE)
    states, cmds = [], []
    peer.create_subscription(JointState, names.JOINT_STATES,
                             lambda m: states.append((m.header.stamp.sec + 1e-9
                                                      * m.header.stamp.nanosec,
                                                      m.position[0], m.velocity[0])), reliable)
    peer.create_subscription(Float64MultiArray, names.EFFORT_COMMANDS,
                             lambda m: cmds.append(m.data[0]), reliable)
    ex = SingleThreadedExecutor()
    ex.add_node(peer)
    proc = subprocess.Popen(_loop("haptic_stage:sync:=lockstep", "haptic_stage:duration:=3.0",
                                  "haptic_stage:hand_script:='0.3:0, 2.7:2:0.2'",
                                  "haptic_stage:lockstep_wait:=20.0",
                                  "friction_renderer:stage_joint.B:=60.0"),
                            cwd=ROOT, env=dict(os.environ), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    try:
        end = time.monotonic() + 90.0
        while proc.poll() is None and time.monotonic() < end:
            ex.spin_once(timeout_sec=0.01)
        for _ in range(50):
            ex.spin_once(timeout_sec=0.01)
        assert proc.poll() == 0, proc.communicate(timeout=5)[0][-3000:] if proc.poll() \
            is not None else "haptic_loop did not end"
    finally:
        if proc.poll() is None:
            proc.kill()
        out = proc.communicate(timeout=10)[0]
        peer.destroy_node()
    assert "duration 3 s of stage time reached" in out
    assert "stopped: final zero effort published" in out
    s = np.array(states)
    c = np.array(cmds)
    assert s.shape[0] > 1000 and c.size > 1000  # both nodes ran the loop (3000 cycles)
    # Stage time from the last state's stamp (the run ends at 3.0 s): the peer may have matched
    # the stage's publisher only after the fast lockstep run had begun, missing its first states.
    t0 = s[-1, 0] - 3.0
    hold = s[(s[:, 0] - t0) > 1.5]  # the hand at 2 N for > 1 s (ramp 0.2 s): settled
    assert hold.shape[0] > 1000, (hold.shape, s[0, 0] - t0)  # the last 1.5 s, ~1500 states
    # Stuck below breakaway: no motion beyond one encoder count, velocity exactly 0.
    assert np.ptp(hold[:, 1]) <= COUNT + 1e-12, np.ptp(hold[:, 1])
    assert np.all(hold[:, 2] == 0.0)
    # The renderer holds the hand's push (minus what the carriage's own friction takes):
    # a command against +x, never beyond the Coulomb level F = 4 N.
    assert c.min() < -0.5 and np.all(np.abs(c) <= 4.0 + 1e-9), (c.min(), c.max())


def test_bad_parameters_of_either_node_exit_one():
    r = subprocess.run(_loop("friction_renderer:mode:=telepathy"), cwd=ROOT,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and "haptic_loop: bad parameters: mode: 'telepathy'" in r.stderr
    r = subprocess.run(_loop("haptic_stage:sync:=sometimes"), cwd=ROOT, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 1 and "haptic_loop: bad parameters: sync:" in r.stderr
