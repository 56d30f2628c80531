"""friction_identifier's Trigger service keeps answering (issue 13, item 5).

Found: after refused ``identify`` calls, the next run completed but was never answered, nor was
any later call — the one log line of a run's outcome switched between ``.info`` and ``.error``
at the same call site, rclpy raised ``ValueError: Logger severity cannot be changed between
calls`` and the service thread ended silently. And a call during a run was answered only after
the run, with a second full identification, instead of "busy" at once.

Real processes over loopback DDS in a domain of their own (``pipeline.free_domain_id``): a
lockstep ``haptic_stage`` with the brass block and a ``friction_identifier``; the test is the
service's client. Plus, in-process, a fault injected into the service callback: the service
thread logs it, reports it on /diagnostics at ERROR level and keeps serving.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import rclpy
from diagnostic_msgs.msg import DiagnosticStatus
from rclpy.parameter import Parameter
from std_srvs.srv import Trigger

from fric_nodes.tools import pipeline
from ros_support import interrupt_all

ROOT = Path(__file__).resolve().parents[2]
PY = sys.executable

STAGE = dict(sync="lockstep", seed=0, lockstep_timeout=2.0, command_timeout=0.5,
             diagnostics_period=0.2, sample="brass")
#: a short excitation (1 s warm-up, 2 cycles recorded), no files
IDENT = dict(warmup=1.0, cycles=2.0, stage_timeout=30.0, data_timeout=3.0, output_dir="''")


def _node(cmd, params, env, log):
    args = [PY, "-m", f"fric_nodes.{cmd}", "--ros-args", "-r", "__ns:=/s"]
    for k, v in params.items():
        args += ["-p", f"{k}:={v}"]
    return subprocess.Popen(args, env=env, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)


class _Client:
    """The test's node in its own context: Trigger calls (several may be pending at once),
    parameter writes."""

    def __init__(self, domain: int):
        from rclpy.context import Context
        from rclpy.executors import SingleThreadedExecutor

        self.ctx = Context()
        rclpy.init(context=self.ctx, domain_id=domain)
        self.node = rclpy.create_node("identifier_service_test", context=self.ctx)
        self.ex = SingleThreadedExecutor(context=self.ctx)
        self.ex.add_node(self.node)
        self.trigger = self.node.create_client(Trigger, "/s/friction_identifier/identify")

    def spin_until(self, cond, timeout):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            self.ex.spin_once(timeout_sec=0.01)
            if cond():
                return True
        return False

    def identify_async(self):
        assert self.spin_until(self.trigger.service_is_ready, 30.0), "no identify service"
        return self.trigger.call_async(Trigger.Request())

    def identify(self, timeout=90.0):
        fut = self.identify_async()
        assert self.spin_until(fut.done, timeout), f"identify: no answer within {timeout} s"
        return fut.result().success, fut.result().message

    def set(self, **values):
        from rcl_interfaces.srv import SetParameters
        cli = self.node.create_client(SetParameters, "/s/friction_identifier/set_parameters")
        try:
            assert self.spin_until(cli.service_is_ready, 30.0)
            fut = cli.call_async(SetParameters.Request(parameters=[
                Parameter(k, value=v).to_parameter_msg() for k, v in values.items()]))
            assert self.spin_until(fut.done, 30.0)
            return [(r.successful, r.reason) for r in fut.result().results]
        finally:
            self.node.destroy_client(cli)

    def close(self):
        self.ex.shutdown()
        self.node.destroy_node()
        rclpy.shutdown(context=self.ctx)


def test_refused_calls_then_runs_are_answered_and_a_call_during_a_run_is_busy(tmp_path):
    own = int(os.environ.get("ROS_DOMAIN_ID", "0"))
    env = pipeline.loopback_env(pipeline.free_domain_id(exclude={own}))
    log = open(tmp_path / "processes.log", "w")
    procs = [_node("haptic_stage", STAGE, env, log),
             _node("friction_identifier", IDENT, env, log)]
    client = _Client(int(env["ROS_DOMAIN_ID"]))
    try:
        # two refused calls: the excitation leaves the travel (the stage is never moved)
        assert client.set(amplitude=0.02) == [(True, "")]
        for _ in range(2):
            ok, text = client.identify(timeout=30.0)
            assert not ok and text.startswith("refused: amplitude: the stroke"), text
        # a run that succeeds is answered (the old node logged its outcome at another severity
        # from the same line, and its service thread died: no answer, ever)
        assert client.set(amplitude=0.005) == [(True, "")]
        ok, text = client.identify(timeout=90.0)
        assert ok and text.startswith("identified: eiv"), text
        # the next run: a second call 0.3 s into it is answered "busy" while the run goes on
        # (the old node queued it behind the run and then ran a second identification)
        first = client.identify_async()
        client.spin_until(lambda: False, 0.3)
        assert not first.done()
        t0 = time.monotonic()
        second = client.identify_async()
        assert client.spin_until(second.done, 10.0), "the call during a run got no answer"
        waited = time.monotonic() - t0
        assert not first.done(), "answered only after the run"
        assert not second.result().success
        assert second.result().message.startswith("busy: a run is in progress"), \
            second.result().message
        print(f"\nbusy answered after {waited * 1e3:.0f} ms, the run still going")
        # "at once": the answer needs no run, only a round trip (a loaded machine: 2 s)
        assert waited < 2.0, waited
        assert client.spin_until(first.done, 90.0), "the run during the busy call: no answer"
        assert first.result().success, first.result().message
        # and it keeps serving
        assert client.set(amplitude=0.02) == [(True, "")]
        ok, text = client.identify(timeout=30.0)
        assert not ok and text.startswith("refused: amplitude"), text
    finally:
        client.close()
        interrupt_all(procs)
        log.close()
    out = (tmp_path / "processes.log").read_text()
    assert "Logger severity" not in out and "Traceback" not in out, out[-3000:]
    assert all(p.returncode == 0 for p in procs), out[-3000:]


# ------------------------------------------------------------------ a fault in the service thread
@pytest.fixture
def in_process(ros):
    """A FrictionIdentifier in this process (its service thread spins its helper node) and a
    client node in the same context."""
    from rclpy.executors import SingleThreadedExecutor

    from fric_nodes.friction_identifier import FrictionIdentifier

    node = FrictionIdentifier(parameter_overrides=[Parameter("stage_timeout", value=0.05),
                                                   Parameter("output_dir", value="")])
    client_node = rclpy.create_node("fault_client")
    ex = SingleThreadedExecutor()
    ex.add_node(client_node)
    cli = client_node.create_client(Trigger, f"{node.get_fully_qualified_name()}/identify")

    def call(timeout=10.0):
        end = time.monotonic() + 10.0
        while not cli.service_is_ready() and time.monotonic() < end:
            ex.spin_once(timeout_sec=0.01)
        fut = cli.call_async(Trigger.Request())
        end = time.monotonic() + timeout
        while not fut.done() and time.monotonic() < end:
            ex.spin_once(timeout_sec=0.01)
        return fut.result() if fut.done() else None

    yield node, call
    ex.shutdown()
    client_node.destroy_node()
    node.destroy_node()


def test_an_unexpected_exception_is_logged_reported_and_the_service_keeps_serving(in_process):
    node, call = in_process
    r = call()
    assert r is not None and r.message.startswith("refused: no valid joint_states"), r
    # a fault inside the run: the caller gets an answer naming it, the error is on diagnostics
    real = node._identify
    node._identify = lambda v, n: 1 / 0
    r = call()
    assert r is not None and not r.success
    assert r.message.startswith("failed: internal error ZeroDivisionError"), r.message
    st = node.diagnostic_status()
    assert st.level == DiagnosticStatus.ERROR and "ZeroDivisionError" in st.message
    # a fault in the service callback itself: still answered, reported
    node._identify = real

    def broken(request, response):
        raise RuntimeError("injected fault")

    node._on_identify, good = broken, node._on_identify
    r = call()
    assert r is not None and r.message == "failed: internal error RuntimeError: injected fault"
    node._on_identify = good
    # a fault of the executor in the service thread (outside any callback): logged, reported,
    # the thread goes on serving
    ex = node._service.executor
    real_spin = ex.spin_once
    faults = []

    def spin_once_failing(timeout_sec=None):
        if not faults:
            faults.append(1)
            raise RuntimeError("injected executor fault")
        return real_spin(timeout_sec=timeout_sec)

    ex.spin_once = spin_once_failing
    end = time.monotonic() + 5.0
    while node._errors.count < 3 and time.monotonic() < end:
        time.sleep(0.01)
    st = node.diagnostic_status()
    kv = {k.key: k.value for k in st.values}
    assert st.level == DiagnosticStatus.ERROR
    assert kv["internal errors"] == "3", kv
    assert kv["internal errors last"] == "service thread: RuntimeError: injected executor fault"
    r = call()
    assert r is not None and r.message.startswith("refused: no valid joint_states"), r
    assert node._service.thread.is_alive()
    assert node.diagnostic_status().level != DiagnosticStatus.ERROR  # reported once, recovered


def test_an_exception_in_the_control_path_aborts_the_run_to_rest_and_the_node_goes_on(ros):
    """The joint_states callback as the executor calls it: an unexpected exception in the state
    machine mid-run is logged and reported, the run ends at rest (one zero effort) with the
    reason, and the next states are handled as before."""
    from fric_interfaces.conversions import joint_state_msg
    from fric_nodes.friction_identifier import FrictionIdentifier

    node = FrictionIdentifier(parameter_overrides=[Parameter("warmup", value=1.0),
                                                   Parameter("cycles", value=1.0),
                                                   Parameter("output_dir", value="")])
    try:
        sub = next(s for s in node.subscriptions if s.topic_name.endswith("joint_states"))

        class Sink:
            def __init__(self):
                self.sent = []

            def publish(self, msg):
                self.sent.append(msg.data[0])

        node._pos_pub, node._eff_pub = Sink(), Sink()

        def state(k, x=0.0):
            sub.callback(joint_state_msg(["stage_joint"], [x], [0.0], [0.0], stamp_ns=k * 10**6))

        state(1)
        out = {}
        import threading
        t = threading.Thread(target=lambda: out.update(zip(("ok", "text"), node.identify())))
        t.start()
        end = time.monotonic() + 10.0
        while node._run is None and time.monotonic() < end:
            time.sleep(0.001)
        for k in range(2, 300):
            state(k)
        real_step = node._step
        node._step = lambda *a: 1 / 0
        state(300)
        node._step = real_step
        t.join(timeout=10.0)
        assert not out["ok"]
        assert "internal error in the joint_states callback: ZeroDivisionError" in out["text"]
        assert node._eff_pub.sent == [0.0]
        st = node.diagnostic_status()
        assert st.level == DiagnosticStatus.ERROR
        kv = {v.key: v.value for v in st.values}
        assert kv["internal errors last"].startswith("joint_states callback: ZeroDivisionError")
        before = node._accepted
        state(301)
        assert node._accepted == before + 1
    finally:
        node.destroy_node()
