"""Haptic loop latency: the stage publishes at 1 kHz, the friction renderer answers each state.

Measured at the stage, in one run, for each configuration:
* round trip: from the stage publishing state k to the first command arriving before state k+1
  (p50 / p99 / max);
* lost cycles: states that got no command before the next state was published;
* achieved rate: states published per second of wall time, and the stage's own overruns.

A lost cycle means the stage stepped with a stale command. The first command after a publish is
credited to that state, so an answer to state k that arrives after state k+1 is counted as
k+1's (the round-trip figures cover answered cycles; lost ones are counted apart).
Real-time scheduling (``chrt -f 50 .venv/bin/python bench/loop_latency.py``) is what a haptic
deployment would use; children inherit it.

Configurations: the renderer as a separate process (the stage runs in this process), and both
nodes composed in one process on one executor (events and single-threaded executors). The stage
is the real ``HapticStage`` (sim backend, realtime 1 kHz, an operator hand pushing through stick
and slip), instrumented by a subclass that timestamps its publish and its command callback.

Targets for this 2-core machine: 1 kHz sustained, 0 lost cycles, p99 < 1 ms. Nothing asserts.
Run: ``make bench`` or ``.venv/bin/python bench/loop_latency.py [--duration S] [--quick]``.
"""

from __future__ import annotations

import argparse
import gc
import os
import signal
import subprocess
import sys
import time

os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"  # loopback only, before rclpy.init
os.environ.setdefault("ROS_DOMAIN_ID", str(os.getpid() % 100 + 1))

import numpy as np  # noqa: E402
import rclpy  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from rclpy.experimental import EventsExecutor  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402

from fric_interfaces import names  # noqa: E402
from fric_nodes.friction_renderer import FrictionRenderer  # noqa: E402
from fric_nodes.haptic_stage import HapticStage  # noqa: E402
from fric_nodes.launch_runner import die_with_parent  # noqa: E402

HAND = "0.2:0, 1:2:0.1, 1:6:0.1, 1:0:0.1, 1:-6:0.1, 1:0:0.1"  # stick, slip, release, reverse


class InstrumentedStage(HapticStage):
    """HapticStage that records, per published state, when the first answer arrived."""

    def __init__(self, **kwargs):
        self.t_pub = 0
        self.answered = True
        self.rtt_ns: list[int] = []
        self.published = 0
        self.lost = 0
        self.measuring = False
        super().__init__(**kwargs)

    def _publish(self, *args, **kwargs):
        ok = super()._publish(*args, **kwargs)
        if ok and self.measuring:
            if not self.answered:
                self.lost += 1
            self.published += 1
            self.t_pub = time.monotonic_ns()
            self.answered = False
        return ok

    def _command(self, msg, mode, topic):
        if self.measuring and not self.answered:
            self.rtt_ns.append(time.monotonic_ns() - self.t_pub)
            self.answered = True
        super()._command(msg, mode, topic)


def _stage(rate: float) -> InstrumentedStage:
    return InstrumentedStage(parameter_overrides=[
        Parameter("rate", value=float(rate)), Parameter("hand_script", value=HAND),
        Parameter("carriage_friction", value=False), Parameter("command_timeout", value=0.5)])


def _measure(executor, stage: InstrumentedStage, duration: float, warmup: float) -> dict:
    gc.collect()
    gc.freeze()  # as the nodes' run_node does: set-up objects out of the collector's way
    t_end = time.monotonic() + warmup
    while time.monotonic() < t_end:  # discovery and matching, first messages
        executor.spin_once(timeout_sec=0.005)
    overruns0 = getattr(stage, "_overruns", 0)
    stage.measuring = True
    t0 = time.monotonic()
    while time.monotonic() - t0 < duration:
        executor.spin_once(timeout_sec=0.005)
    stage.measuring = False
    wall = time.monotonic() - t0
    rtt = np.array(stage.rtt_ns, dtype=float) * 1e-6
    return {
        "states": stage.published, "rate": stage.published / wall, "lost": stage.lost,
        "answered": len(rtt), "overruns": getattr(stage, "_overruns", 0) - overruns0,
        "p50": float(np.percentile(rtt, 50)) if rtt.size else float("nan"),
        "p99": float(np.percentile(rtt, 99)) if rtt.size else float("nan"),
        "max": float(rtt.max()) if rtt.size else float("nan"),
    }


def separate(duration: float, rate: float) -> dict:
    """Stage here, renderer in its own process (the renderer's own main and executor)."""
    exe = [sys.executable, "-m", "fric_nodes.friction_renderer", "--ros-args",
           "-p", "watchdog_timeout:=0.5", "--log-level", "warn"]
    proc = subprocess.Popen(exe, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            preexec_fn=die_with_parent)
    rclpy.init()
    stage = _stage(rate)
    ex = EventsExecutor()
    ex.add_node(stage)
    try:
        t_end = time.monotonic() + 15.0  # wait until the renderer subscribes to our states
        while stage.count_subscribers(names.JOINT_STATES) == 0 and time.monotonic() < t_end:
            ex.spin_once(timeout_sec=0.05)
        return _measure(ex, stage, duration, warmup=1.0)
    finally:
        ex.remove_node(stage)
        stage.destroy_node()
        rclpy.try_shutdown()
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


def composed(duration: float, rate: float, executor: str) -> dict:
    """Stage and renderer in this process, one executor."""
    rclpy.init()
    stage = _stage(rate)
    renderer = FrictionRenderer(parameter_overrides=[Parameter("watchdog_timeout", value=0.5)])
    ex = EventsExecutor() if executor == "events" else SingleThreadedExecutor()
    ex.add_node(stage)
    ex.add_node(renderer)
    try:
        return _measure(ex, stage, duration, warmup=1.0)
    finally:
        for n in (stage, renderer):
            ex.remove_node(n)
            n.destroy_node()
        rclpy.try_shutdown()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--duration", type=float, default=60.0, help="seconds per configuration")
    ap.add_argument("--rate", type=float, default=1000.0, help="stage rate [Hz]")
    ap.add_argument("--quick", action="store_true", help="1 s per configuration (smoke run)")
    args = ap.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # run the finally: clauses
    dur = 1.0 if args.quick else args.duration
    print(f"fric bench/loop_latency.py — stage at {args.rate:g} Hz, {dur:g} s per configuration, "
          f"{os.cpu_count()} CPUs, ROS_DOMAIN_ID={os.environ['ROS_DOMAIN_ID']}")
    rows = [("separate processes (events executors)", separate(dur, args.rate)),
            ("composed, one EventsExecutor", composed(dur, args.rate, "events")),
            ("composed, one SingleThreadedExecutor", composed(dur, args.rate, "single"))]
    print(f"  {'configuration':40s} {'rate Hz':>8s} {'lost':>6s} {'overrun':>7s} "
          f"{'p50 ms':>7s} {'p99 ms':>7s} {'max ms':>7s}")
    for name, r in rows:
        print(f"  {name:40s} {r['rate']:8.1f} {r['lost']:6d} {r['overruns']:7d} "
              f"{r['p50']:7.3f} {r['p99']:7.3f} {r['max']:7.2f}")
    for name, r in rows:
        ok = r["rate"] >= 0.99 * args.rate and r["lost"] == 0 and r["p99"] < 1.0
        print(f"  target (>= {0.99 * args.rate:g} Hz, 0 lost, p99 < 1 ms) {name}: "
              f"[{'PASS' if ok else 'FAIL'}]")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
