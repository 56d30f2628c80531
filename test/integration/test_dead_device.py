"""A dead device always ends in zero effort, as seen from outside (issue 13, item 8).

Found as: kill -9 of ``haptic_stage`` while the renderer renders (config/haptic_render.yaml, the
hand pushing ±6 N on the carriage): in 1 of 3 runs an outside subscriber on
``effort_controller/commands`` received no zero within 1 s of the kill, although the renderer
logged its watchdog zero; in the other runs the zero came 114-122 ms after the kill.

Why: the renderer's zero reached every DDS reader 90-130 ms after the kill in 60+ runs here
(old and new code), with one device in the domain. Two ways to see no zero within 1 s were
found. (1) A second stage publishing the same joint in the same ROS domain (a stage of an
earlier run, another session; it happened here when two experiments overlapped): after the
kill the renderer rendered the other stage's states, 485-1003 non-zero commands in the next
second, no watchdog trip, and its log held a watchdog line from the start-up only. The renderer
cannot tell the devices apart (the EventsExecutor delivers no publisher id), so it now reports
it: ERROR on /diagnostics and in the log (``test_two_devices...`` below). (2) The subscriber's own
queue. A reliable subscription with a
deep history (KEEP_LAST 1000, as the pipeline's kill probe uses) whose process handles fewer than
1000 messages/s (a loaded 2-core machine) falls behind the 1 kHz command stream and reads
commands up to its depth old: with a callback of 0.9 ms it saw no zero within 1 s of the kill in
3 of 3 runs, while a subscriber with a one-sample queue and a 1.3 ms callback saw it after
102-118 ms. Observers of the 1 kHz topics need a shallow queue (``fric_interfaces.qos.CONTROL_SUB``
or KEEP_LAST 1) or must keep up.

Here, as there: the stage and the renderer are separate processes (the launch file's command
lines, wall-clock servo, the hand on the carriage), three outside subscribers on their own DDS
participant (a reliable one, as ros2_control's controllers and ``ros2 topic echo`` subscribe, a
best-effort one, and a reliable one-sample queue whose callback is slower than the stream, 1.3 ms
per message), the stage SIGKILLed mid-render. Asserted for each subscriber: a zero
within 0.5 s of the kill (watchdog_timeout 0.1 s + a watchdog tick of 25 ms + scheduling on a
loaded 2-core machine), and nothing but zeros from then on for 1 s (a message of the dead
stream handled after the trip must not render an effort again). Then the renderer is stopped
with SIGINT, as ``fric launch`` does when a node dies: every subscriber's newest command is zero.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from fric_nodes.tools import pipeline
from fric_nodes.tools.launch_runner import parse_launch

ROOT = Path(__file__).resolve().parents[2]
RUNS = 2  # kill cycles per test run (checked 20+ times by hand: see the issue note)
HAND = "0.5:0, " + ", ".join(["0.3:6:0.05, 0.3:-6:0.05"] * 100)  # ±6 N on the carriage


@pytest.fixture(scope="module")
def domain():
    return pipeline.free_domain_id(exclude={int(os.environ.get("ROS_DOMAIN_ID", "0"))})


def _stop(proc, sig=signal.SIGINT, timeout=10.0):
    if proc.poll() is None:
        proc.send_signal(sig)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_killing_the_stage_ends_in_zero_effort_for_every_subscriber(domain, tmp_path):
    import rclpy
    from rclpy.context import Context
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from std_msgs.msg import Float64MultiArray

    from fric_interfaces import qos

    env = pipeline.loopback_env(domain)
    desc = parse_launch("haptic_render.launch.xml", {
        "record": "false", "sync": "realtime", "duration": "0.0", "hand_script": HAND,
        "hand_location": "carriage", "hand_start": "immediately"})
    renderer, stage = desc.node("friction_renderer"), desc.node("haptic_stage")

    ctx = Context()
    rclpy.init(context=ctx, domain_id=domain)
    node = rclpy.create_node("dead_device_probe", context=ctx)
    ex = SingleThreadedExecutor(context=ctx)
    ex.add_node(node)
    rx = {"reliable": [], "best_effort": [], "slow_shallow": []}
    node.create_subscription(Float64MultiArray, "effort_controller/commands",
                             lambda m: rx["reliable"].append((time.monotonic(), m.data[0])),
                             QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE))
    node.create_subscription(Float64MultiArray, "effort_controller/commands",
                             lambda m: rx["best_effort"].append((time.monotonic(), m.data[0])),
                             qos.CONTROL_SUB)

    def slow(m):
        rx["slow_shallow"].append((time.monotonic(), m.data[0]))
        time.sleep(0.0013)  # slower than the 1 kHz stream: only its newest sample matters

    node.create_subscription(Float64MultiArray, "effort_controller/commands", slow,
                             QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE))

    def spin_until(cond, timeout):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            ex.spin_once(timeout_sec=0.005)
            if cond():
                return True
        return False

    report = []
    logf = open(tmp_path / "dead_device.log", "w")
    try:
        for run in range(RUNS):
            for v in rx.values():
                v.clear()
            pr = subprocess.Popen(renderer.cmd, env={**env, **renderer.env}, cwd=ROOT,
                                  stdout=logf, stderr=subprocess.STDOUT, start_new_session=True)
            ps = subprocess.Popen(stage.cmd, env={**env, **stage.env}, cwd=ROOT, stdout=logf,
                                  stderr=subprocess.STDOUT, start_new_session=True)
            try:
                # rendering: both subscribers see the renderer's commands, the hand pushes
                assert spin_until(lambda: all(len(v) > 300 for v in rx.values())
                                  and any(abs(e) > 1.0 for _, e in rx["reliable"][-300:]),
                                  60.0), (run, {k: v[-3:] for k, v in rx.items()})
                spin_until(lambda: False, 0.2 + 0.37 * run)  # a different phase of the hand
                os.kill(ps.pid, signal.SIGKILL)
                t_kill = time.monotonic()
                n0 = {k: len(v) for k, v in rx.items()}
                spin_until(lambda: False, 1.0)
                ps.wait()
                for k, v in rx.items():
                    after = v[n0[k]:]
                    i0 = next((i for i, (_, e) in enumerate(after) if e == 0.0), None)
                    assert i0 is not None, (run, k, after[-5:])
                    t0 = after[i0][0] - t_kill
                    report.append(f"{k} {t0 * 1e3:.0f} ms")
                    assert t0 < 0.5, (run, k, t0)
                    assert all(e == 0.0 for _, e in after[i0:]), (run, k, after[i0:][:20])
                    assert len(after) - i0 >= 10  # repeated on every watchdog tick (25 ms)
                # as fric launch does when a node dies: SIGINT; every subscriber still spinning
                # holds zero as its newest command (the final zero, or a watchdog zero before it)
                n1 = {k: len(v) for k, v in rx.items()}
                pr.send_signal(signal.SIGINT)
                assert spin_until(lambda: pr.poll() is not None, 10.0), "renderer did not stop"
                spin_until(lambda: False, 0.1)
                assert pr.returncode == 0
                for k, v in rx.items():
                    assert v and v[-1][1] == 0.0, (run, k, v[-5:])
                    assert all(e == 0.0 for _, e in v[n1[k]:]), (run, k, v[n1[k]:][:20])
            finally:
                _stop(ps, signal.SIGKILL)
                _stop(pr)
    finally:
        logf.close()
        ex.shutdown()
        node.destroy_node()
        rclpy.shutdown(context=ctx)
    log = (tmp_path / "dead_device.log").read_text()
    assert log.count("final zero effort published") == RUNS, log[-3000:]
    # the renderer waits 1 s for reliable readers to acknowledge its final zero; on a loaded
    # 2-core machine that wait can lapse (seen once in CI, 1 of ~40 stops) although the readers
    # above hold zero: reported, not asserted
    acked = "not acknowledged" not in log
    print("\nfirst zero after the kill: " + ", ".join(report)
          + ("" if acked else "; a final zero was not acknowledged within 1 s"))


def test_two_devices_with_the_same_joint_are_an_error_on_diagnostics(ros):
    """Found while reproducing item 8: with a second stage publishing the same joint in the same
    ROS domain (a stage of an earlier run, another session), killing one stage gave no zero at
    all (485 non-zero commands in the second after the kill: the renderer rendered the other
    stage's states, and its log held a watchdog line from the start-up only). The renderer
    cannot tell the devices apart (rclpy's EventsExecutor has no publisher id per message), so
    it says so: ERROR on /diagnostics while more than one publisher sends the configured joints;
    a second publisher of other joints only (a gripper driver) is no problem."""
    import rclpy
    from diagnostic_msgs.msg import DiagnosticStatus
    from rclpy.parameter import Parameter
    from sensor_msgs.msg import JointState

    from fric_interfaces import names, qos
    from fric_interfaces.conversions import joint_state_msg
    from fric_nodes.friction_renderer import FrictionRenderer

    node = FrictionRenderer(parameter_overrides=[Parameter("watchdog_timeout", value=30.0)])
    peers = [rclpy.create_node(f"dead_device_peer{i}") for i in range(2)]
    try:
        _pubs = [p.create_publisher(JointState, names.JOINT_STATES, qos.CONTROL_PUB)
                for p in peers]
        end = time.monotonic() + 10.0
        while node.count_publishers(names.JOINT_STATES) < 2 and time.monotonic() < end:
            time.sleep(0.01)
        assert node.count_publishers(names.JOINT_STATES) == 2
        node.diagnostic_status()  # start a fresh period

        def states(k0, foreign):
            for k in range(k0, k0 + 20):  # the node's callbacks, in process: exact and quick
                node._on_joint_state(joint_state_msg(["stage_joint"], [0.0], [0.01], None,
                                                     stamp_ns=10**9 + k * 10**6))
                if foreign:
                    node._on_joint_state(joint_state_msg(["gripper"], [0.0], [0.0], None,
                                                         stamp_ns=10**9 + k * 10**6))

        states(0, foreign=True)  # the second publisher sends other joints: fine
        st = node.diagnostic_status()
        d = {kv.key: kv.value for kv in st.values}
        assert d["/joint_states publishers"] == "2"
        assert "two devices" not in st.message and st.level < DiagnosticStatus.ERROR
        states(20, foreign=False)  # both carry stage_joint
        st = node.diagnostic_status()
        assert st.level == DiagnosticStatus.ERROR and "two devices" in st.message, st.message
    finally:
        for p in peers:
            p.destroy_node()
        node.destroy_node()
