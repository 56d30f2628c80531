"""transmission_sim (issue 13, item 4): torques beyond the URDF effort limits are clipped (and
reported), and the URDF position limits hold for every finite input — found with a real node
process over loopback DDS, as here.

Before the fix, ``effort_controller/commands`` ``[1e300, -1e300]`` for 0.5 s left joint_states
finite but at |q| = 1.45e294 rad (limits ±3.1416) for good, and ``[1e6, 1e6]`` pushed a joint
1.7 rad past its end stop: the stops were explicit spring-dampers tuned for modest torques, and
nothing limited the torque.
"""

import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from ros_support import ArmPeer, terminate_output

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 3.1416  # urdf/planar_2link.urdf: both joints, lower = -3.1416, upper = 3.1416
EFFORT = 1000.0  # and effort="1000" [N m]
ROTOR = 5.0  # config/arm_transmission.yaml: rotor_inertia 5 kg m^2 per joint


def _Peer():
    return ArmPeer("transmission_limits_peer")


def _drive_until(peer, tau, q_end, timeout=5.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end and (not peer.q or peer.q[-1] != q_end):
        peer.run(0.05, tau)


def test_effort_clipped_and_end_stops_hold_for_any_finite_torque_over_dds(ros):
    proc = subprocess.Popen(
        [sys.executable, "-m", "fric_nodes.transmission_sim", "--ros-args", "--params-file",
         str(ROOT / "config/arm_transmission.yaml"), "-p", "diagnostics_period:=0.2"],
        cwd=ROOT, env=dict(os.environ), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True)
    peer = _Peer()
    try:
        end = time.monotonic() + 20.0
        while not peer.q and time.monotonic() < end and proc.poll() is None:
            peer.run(0.1)
        assert peer.q, "no joint_states from the node"
        # the finding: [1e300, -1e300] for 0.5 s (longer if a loaded machine makes the
        # realtime sim skip simulated time, until both joints reached their stops), then
        # nothing (the command times out)
        n0 = len(peer.q)
        peer.run(0.5, [1e300, -1e300])
        _drive_until(peer, [1e300, -1e300], [LIMIT, -LIMIT])
        peer.run(0.4)
        assert proc.poll() is None
        q = np.array(peer.q[n0:])
        assert len(q) > 200, len(q)
        # never past a limit (the stop is a constraint of the step: zero tolerance) ...
        assert np.all(np.abs(q) <= LIMIT), np.abs(q).max()
        # ... and both joints driven into their stops, resting there after the command ended
        # (joint1 self-locking holds; joint2 backdrivable, nothing pulls it out: planar arm,
        # gravity along -z)
        assert q[-1].tolist() == [LIMIT, -LIMIT], q[-1]
        # the torque applied is the URDF's effort limit, and joint_states.effort says so
        eff = np.array(peer.effort[n0:])
        assert np.abs(eff).max() == EFFORT and [EFFORT, -EFFORT] in eff.tolist()
        # the second finding: [1e6, 1e6]
        n1 = len(peer.q)
        peer.run(0.5, [1e6, 1e6])
        _drive_until(peer, [1e6, 1e6], [LIMIT, LIMIT])
        peer.run(0.3)
        assert proc.poll() is None
        q = np.array(peer.q[n1:])
        assert np.all(np.abs(q) <= LIMIT), np.abs(q).max()
        assert q[-1].tolist() == [LIMIT, LIMIT], q[-1]
        # velocities bounded by energy: the actuators' work at most 2 x 1000 N m x 6.2832 rad
        # per traversal, the kinetic energy at least 1/2 x 5 kg m^2 x |v|^2 (M^ >= [m]): a joint
        # arriving at its stop has |v| <= sqrt(2 x 12566 / 5) = 71 rad/s (the stops then stop it)
        v = np.array(peer.v[n0:])
        assert np.all(np.isfinite(v)) and np.abs(v).max() <= (2 * 2 * EFFORT * 2 * LIMIT
                                                               / ROTOR) ** 0.5
        msgs = peer.messages()
        assert any("effort commands clipped at the URDF effort limit" in m for m in msgs), msgs
        assert any("in the end stop (URDF limit)" in m for m in msgs), msgs
        last = [kv for d in peer.diags for st in d.status if st.name.endswith(": arm")
                for kv in st.values if kv.key == "effort commands clipped"][-1]
        assert int(last.value) >= 20, last.value  # one per command message (100 Hz, >= 1 s)
    finally:
        peer.close()
        out = terminate_output(proc)
    assert "Traceback" not in out, out[-3000:]
    assert "effort command beyond the URDF effort limit, clipped: joint1 1e+300 N m to 1000" \
        in out, out[-3000:]
