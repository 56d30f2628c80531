"""``fric_recorder``: records a haptic run and writes ``run.npz``, plots and a summary.

Subscribes (topic names are parameters; an empty name switches a topic off)

* ``joint_states`` (sensor_msgs/JointState): position, velocity, effort (the stage's load cell)
  of ``joint_name``, with the header stamp (the time base of the analysis) and the receive time;
* ``effort_controller/commands`` and ``position_controller/commands``
  (std_msgs/Float64MultiArray): entry ``command_index`` (the joint's place in the renderer's
  ``joints``), with the receive time;
* ``wrench`` (geometry_msgs/WrenchStamped): force x (the load cell axis), stamp and receive time;
* ``/haptic_stage/hand_force`` (std_msgs/Float64): the simulated operator's hand force.

It records for ``duration`` seconds of wall time (0: until SIGINT/SIGTERM, e.g. from the launch
shutting down when the stage's run ends), then writes to ``out_dir``: ``run.npz`` (the raw arrays,
:mod:`fric_nodes.run_report`), ``summary.json``, ``timeseries.png`` (position, velocity, rendered
and hand force vs time) and ``force_velocity.png`` (rendered force vs velocity); it prints where
they are and a short summary (:func:`fric_nodes.run_report.format_summary`), and exits 0 (1 if
not a single ``joint_states`` message arrived).

Subscriptions are BEST_EFFORT with a deep queue (``queue_depth``): like every fric reader they
never slow the publishers down, and on loopback the deep queue loses nothing while the recorder
keeps up. Gaps would show as ``lost_states`` in the summary (from the stamps).
"""

from __future__ import annotations

import array
import signal
import sys
import time
from pathlib import Path

import rclpy
from geometry_msgs.msg import WrenchStamped
from rclpy.executors import SingleThreadedExecutor
from rclpy.experimental import EventsExecutor
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from rclpy.signals import SignalHandlerOptions
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64, Float64MultiArray

from fric_interfaces import names
from fric_interfaces.parameters import ParamSpec, declare

from . import run_report

__all__ = ["Recorder", "main", "PARAMS"]

NODE_NAME = "fric_recorder"

PARAMS = (
    ParamSpec("joint_name", "stage_joint", "the joint to record from joint_states", read_only=True),
    ParamSpec("command_index", 0, "index of the joint in the renderer's command arrays",
              min=0, read_only=True),
    ParamSpec("duration", 0.0, "wall time to record; 0 = until shutdown", unit="s", min=0.0,
              read_only=True),
    ParamSpec("out_dir", "out/haptic", "where run.npz, summary.json and the PNGs go",
              read_only=True),
    ParamSpec("plots", True, "write the PNG plots", read_only=True),
    ParamSpec("title", "", "plot title (default: 'fric haptic run (<mode>)')", read_only=True),
    ParamSpec("mode", "impedance", "the renderer's mode, for the analysis: impedance (rendered "
              "force = effort command) or admittance (rendered force from the setpoints)",
              choices=("impedance", "admittance"), read_only=True),
    ParamSpec("virtual_mass", 0.0, "admittance: the renderer's virtual mass M (to recover the "
              "rendered friction from the setpoints); 0 = unknown", unit="kg", min=0.0,
              read_only=True),
    ParamSpec("max_effort", 0.0, "admittance: the renderer's max_effort (the force clip); 0 = none",
              unit="N", min=0.0, read_only=True),
    ParamSpec("encoder_resolution", 2.57e-6, "one encoder count, for drift in counts", unit="m",
              min=1e-12, read_only=True),
    ParamSpec("v_slide", 0.01, "a hold counts as sliding once |v| reaches this", unit="m/s",
              min=0.0, read_only=True),
    ParamSpec("hand_script", "", "the operator's hand script (OperatorHand.parse format); used "
              "when no hand_force topic is recorded (e.g. the serial backend's emulated hand)",
              read_only=True),
    ParamSpec("hand_location", "carriage", "where that hand pushes",
              choices=("carriage", "tool"), read_only=True),
    ParamSpec("hand_t0", 0.0, "header stamp (s) at which hand_script starts; 0 = find it by "
              "aligning the script with the measured force (hand on the tool side)", unit="s",
              read_only=True),
    ParamSpec("joint_states_topic", names.JOINT_STATES, "", read_only=True),
    ParamSpec("effort_topic", names.EFFORT_COMMANDS, "", read_only=True),
    ParamSpec("position_topic", names.POSITION_COMMANDS, "", read_only=True),
    ParamSpec("wrench_topic", names.WRENCH, "", read_only=True),
    ParamSpec("hand_force_topic", "/haptic_stage/hand_force", "", read_only=True),
    ParamSpec("queue_depth", 2000, "subscription queue depth", min=1, read_only=True),
)


class Recorder(Node):
    """The recording node; :meth:`finish` writes the outputs."""

    def __init__(self, node_name: str = NODE_NAME, **kwargs):
        super().__init__(node_name, **kwargs)
        try:
            self.p = declare(self, PARAMS)
        except Exception:
            self.destroy_node()
            raise
        p = self.p
        self.t_start = time.monotonic()
        self._joint = p["joint_name"]
        self._ci = int(p["command_index"])
        self._names = None
        self._ji = -1
        self._base_ns = None  # the first header stamp: stamps are stored relative to it
        d = lambda: array.array("d")  # noqa: E731
        self.arr = {k: d() for k in run_report.ARRAY_KEYS}
        self.skipped = {"joint_states_without_joint": 0, "short_commands": 0}
        depth = int(p["queue_depth"])
        q = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=depth,
                       reliability=ReliabilityPolicy.BEST_EFFORT,
                       durability=DurabilityPolicy.VOLATILE)
        topics = []
        for key, typ, cb in (("joint_states_topic", JointState, self._on_js),
                             ("effort_topic", Float64MultiArray, self._on_effort),
                             ("position_topic", Float64MultiArray, self._on_setpoint),
                             ("wrench_topic", WrenchStamped, self._on_wrench),
                             ("hand_force_topic", Float64, self._on_hand)):
            if p[key]:
                self.create_subscription(typ, p[key], cb, q)
                topics.append(self.resolve_topic_name(p[key]))
        self.get_logger().info(
            f"recording joint {self._joint!r} from {', '.join(topics)}"
            + (f" for {p['duration']:g} s" if p["duration"] > 0 else " until shutdown")
            + f"; output to {Path(p['out_dir']).resolve()}")

    # -- callbacks (one per message: append, nothing else) ------------------------------------
    def _on_js(self, msg: JointState) -> None:
        rx = time.monotonic()
        nm = msg.name
        if nm != self._names:
            self._names = list(nm)
            self._ji = self._names.index(self._joint) if self._joint in self._names else -1
        i = self._ji
        if i < 0 or len(msg.position) <= i or len(msg.velocity) <= i:
            self.skipped["joint_states_without_joint"] += 1
            return
        a = self.arr
        a["js_stamp"].append(self._stamp(msg.header.stamp))
        a["js_rx"].append(rx)
        a["js_position"].append(msg.position[i])
        a["js_velocity"].append(msg.velocity[i])
        a["js_effort"].append(msg.effort[i] if len(msg.effort) > i else float("nan"))

    def _stamp(self, st) -> float:
        """Seconds since the first stamp recorded (float64 keeps ns resolution that way)."""
        ns = st.sec * 1_000_000_000 + st.nanosec
        if self._base_ns is None:
            self._base_ns = ns
        return (ns - self._base_ns) * 1e-9

    def _command(self, msg: Float64MultiArray, key: str) -> None:
        rx = time.monotonic()
        if len(msg.data) <= self._ci:
            self.skipped["short_commands"] += 1
            return
        self.arr[key + "_rx"].append(rx)
        self.arr[key].append(msg.data[self._ci])

    def _on_effort(self, msg: Float64MultiArray) -> None:
        self._command(msg, "effort")

    def _on_setpoint(self, msg: Float64MultiArray) -> None:
        self._command(msg, "setpoint")

    def _on_wrench(self, msg: WrenchStamped) -> None:
        rx = time.monotonic()
        a = self.arr
        a["wrench_stamp"].append(self._stamp(msg.header.stamp))
        a["wrench_rx"].append(rx)
        a["wrench"].append(msg.wrench.force.x)

    def _on_hand(self, msg: Float64) -> None:
        self.arr["hand_rx"].append(time.monotonic())
        self.arr["hand"].append(msg.data)

    # -- output --------------------------------------------------------------------------------
    def run_data(self) -> run_report.RunData:
        p = self.p
        meta = {k: p[k] for k in ("joint_name", "mode", "virtual_mass", "max_effort",
                                  "encoder_resolution", "v_slide", "hand_script",
                                  "hand_location", "hand_t0", "title")}
        meta["topics"] = {k: p[k] for k in ("joint_states_topic", "effort_topic",
                                            "position_topic", "wrench_topic",
                                            "hand_force_topic")}
        meta["stamp_base_ns"] = self._base_ns
        meta["skipped"] = dict(self.skipped)
        meta["wall_time"] = time.monotonic() - self.t_start
        return run_report.RunData({k: v for k, v in self.arr.items()}, meta)


def finish(data: run_report.RunData, out_dir: str, plots: bool = True,
           log=print) -> tuple[int, list[Path]]:
    """Write run.npz, summary.json and the plots; print where they are and the summary.
    Returns (exit status, written paths)."""
    import json
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = [run_report.save_run(out / "run.npz", data)]
    if data.n_states == 0:
        log(f"{NODE_NAME}: no joint_states with joint {data.meta.get('joint_name')!r} received; "
            f"wrote the empty record {written[0].resolve()}")
        return 1, written
    summary = run_report.analyze(data)
    p = out / "summary.json"
    p.write_text(json.dumps(summary, indent=1) + "\n")
    written.append(p)
    if plots:
        written += run_report.plot_run(data, out, summary)
    log(f"{NODE_NAME}: wrote " + ", ".join(str(w.resolve()) for w in written))
    log(run_report.format_summary(summary))
    return 0, written


def main(args=None) -> int:
    argv = list(sys.argv[1:] if args is None else args)
    rclpy.init(args=["prog"] + argv, signal_handler_options=SignalHandlerOptions.NO)
    stop: list[int] = []
    old = {s: signal.signal(s, lambda n, _f: stop.append(n))
           for s in (signal.SIGINT, signal.SIGTERM)}
    node = None
    try:
        try:
            node = Recorder()
        except Exception as e:  # bad parameters
            print(f"{NODE_NAME}: bad parameters: {e}", file=sys.stderr)
            return 1
        # matplotlib's import takes a while: pay it now, not while the launch waits for us
        if node.p["plots"]:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot  # noqa: F401
        try:
            executor = EventsExecutor()
        except Exception:  # pragma: no cover - rclpy without the events executor
            executor = SingleThreadedExecutor()
        executor.add_node(node)
        duration = float(node.p["duration"])
        end = node.t_start + duration if duration > 0 else float("inf")
        while not stop and rclpy.ok() and time.monotonic() < end:
            executor.spin_once(timeout_sec=0.05)
        executor.remove_node(node)
        why = (f"signal {signal.Signals(stop[0]).name}" if stop else
               "duration reached" if time.monotonic() >= end else "ROS shut down")
        data = node.run_data()
        out_dir, plots = node.p["out_dir"], node.p["plots"]
        node.destroy_node()
        node = None
        rclpy.try_shutdown()
        print(f"{NODE_NAME}: stopped ({why}) after {data.meta['wall_time']:.1f} s; "
              f"{data.n_states} joint_states, {data.effort.size} effort and "
              f"{data.setpoint.size} position commands, {data.wrench.size} wrenches, "
              f"{data.hand.size} hand forces", flush=True)
        status, _ = finish(data, out_dir, plots)
        sys.stdout.flush()
        return status
    finally:
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
        for s, h in old.items():
            signal.signal(s, h)


if __name__ == "__main__":
    sys.exit(main())
