"""``fric_recorder``: records a haptic run (``kind: haptic``, the default) or an arm's joint states
(``kind: arm``) to a ROS 2 bag as it goes, then writes a summary (and for a haptic run plots and
``run.npz``) from the bag.

Arm recordings (``kind: arm``): every joint of ``joint_states_topic`` (e.g. a ros2_control arm's
``/joint_states`` from ``joint_state_broadcaster``) and, unless set to ``""``, ``effort_topic``
(an effort forward_command_controller's commands), into ``out_dir/run_bag`` (MCAP), the bag
``fric identify BAG --urdf URDF`` reads. ``joint_name``, ``command_index``, ``plots`` and the
haptic analysis parameters do not apply; ``position_topic``, ``wrench_topic`` and
``hand_force_topic`` are not recorded (a start-up warning names one set to a non-default
topic). At the end it writes ``summary.json`` and prints what was recorded: the joints, the
messages, their duration and rate (header stamps), lost states, entries missing for
identification, the bag's path (:mod:`fric_nodes.tools.arm_run_report`, from the spooled
records as below); exit status 1 if no joint_states message was recorded. In a venv::

    .venv/bin/fric run fric_recorder --ros-args -p kind:=arm -p out_dir:=arm_rec \
        -p joint_states_topic:=/joint_states        # until Ctrl-C; or -p duration:=60.0

Haptic runs (``kind: haptic``):

Subscribes (topic names are parameters; an empty name switches a topic off)

* ``joint_states`` (sensor_msgs/JointState): position, velocity, effort (the stage's load cell)
  of ``joint_name``, with the header stamp (the time base of the analysis) and the receive time;
* ``effort_controller/commands`` and ``position_controller/commands``
  (std_msgs/Float64MultiArray): entry ``command_index`` (the joint's place in the renderer's
  ``joints``), with the receive time;
* ``wrench`` (geometry_msgs/WrenchStamped): force x (the load cell axis), stamp and receive time;
* ``/haptic_stage/hand_force`` (std_msgs/Float64): the simulated operator's hand force.

Every message goes to disk as it arrives, serialized as received (no deserialization in the
callback): ``out_dir/run_bag/`` is a rosbag2 bag (MCAP storage, zstd-compressed chunks; the
receive time is the bag's timestamp, wall clock in ns), readable by ``ros2 bag``, rosbags,
Foxglove and ``fric identify``. Memory stays bounded however long the run: the MCAP writer holds
one chunk (1 MiB of messages) before it goes to the file, plus one ~100-byte index entry per
chunk written (about 30 kB per hour at 1 kHz). The recorder's parameters are in the bag's
``custom_data`` (``fric_recorder``).

It records for ``duration`` seconds of wall time (0: until SIGINT/SIGTERM, e.g. from the launch
shutting down when the stage's run ends), closes the bag, and writes to ``out_dir``:
``summary.json``, ``timeseries.png`` (position, velocity, rendered and hand force vs time),
``force_velocity.png`` (rendered force vs velocity) and ``run.npz`` (the analysed single-joint
arrays, uncompressed, :mod:`fric_nodes.tools.run_report`), over the last ``analysis_window``
seconds of a longer run; it prints where they are and a short summary
(:func:`fric_nodes.tools.run_report.format_summary`), and exits 0 (1 if not a single
``joint_states`` message with the joint arrived, or writing the bag failed).

The shutdown is short and bounded, within a launch's budget (ros2 launch: SIGTERM 5 s after
SIGINT, SIGKILL 5 s later): the bag is not read back. Each batch written to the bag is also
decoded (:mod:`fric_nodes.tools.run_columns`, one numpy view per message layout) into small
records spooled to ``out_dir/.run_spool`` (the last ``analysis_window`` seconds kept: ~104 bytes
a 1 kHz cycle, 62 MB for 600 s), and at the end those are read back (what
:func:`~fric_nodes.tools.run_report.read_bag` makes of the bag, the same arrays) and the spool
deleted. SIGINT after 540 s of a 1 kHz run to exit: 1.6 s (16.5 s when it read its bag back:
bench/recorder_shutdown.py). ``fric report out_dir/run_bag`` writes the same files from the bag
alone (a recorder that was stopped before it wrote them, another window).

Subscriptions are BEST_EFFORT with a deep queue (``queue_depth``): like every fric reader they
never slow the publishers down. They live on a second node of this process (``<name>_reader``,
subscriptions only, never spun): a timer drains every queue each ``drain_period`` (5 ms) with
``take_message`` and writes the batch in the order the messages arrived (their DDS reception
timestamps are the bag's timestamps), instead of one executor callback per message. Measured on
this 2-core machine with both cores busy (5 topics at 3 kHz, a lockstep run's rate): one
callback per message lost 17–20 % of the messages and cost 12 µs each; the drain lost none at
8 µs each. Gaps would show as ``lost_states`` in the summary (from the stamps).
"""

from __future__ import annotations

import json
import shutil
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
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64, Float64MultiArray

from fric_interfaces import names
from fric_interfaces.parameters import ParamSpec

from .tools import run_report
from .tools.run_columns import Columns, JointStates, Spool, window_start
from ._node_util import declare_params, init_ros, known_signature, stop_signals
from .tools.user_errors import make_out_dir

__all__ = ["Recorder", "main", "PARAMS", "BAG_NAME", "SPOOL_NAME"]

NODE_NAME = "fric_recorder"

PARAMS = (
    ParamSpec("kind", "haptic", "what is recorded and summarised: haptic (the stage's joint "
              "joint_name, the commands, wrench and hand force; the haptic run's summary, plots "
              "and run.npz) or arm (every joint of joint_states_topic and effort_topic; a "
              "summary of the joints, messages, duration and rate)",
              choices=("haptic", "arm"), read_only=True),
    ParamSpec("joint_name", "stage_joint", "haptic: the joint to record from joint_states",
              read_only=True),
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
    ParamSpec("joint_states_topic", names.JOINT_STATES, "sensor_msgs/JointState topic",
              read_only=True),
    ParamSpec("effort_topic", names.EFFORT_COMMANDS, "effort commands "
              "(std_msgs/Float64MultiArray); '' = not recorded", read_only=True),
    ParamSpec("position_topic", names.POSITION_COMMANDS, "haptic: position commands; '' = not "
              "recorded", read_only=True),
    ParamSpec("wrench_topic", names.WRENCH, "haptic: the load cell's WrenchStamped; '' = not "
              "recorded", read_only=True),
    ParamSpec("hand_force_topic", "/haptic_stage/hand_force", "haptic: the simulated "
              "operator's hand force; '' = not recorded", read_only=True),
    ParamSpec("queue_depth", 2000, "subscription queue depth", min=1, read_only=True),
    ParamSpec("drain_period", 0.005, "the queues are drained into the bag this often (the deep "
              "queues hold queue_depth messages per topic in between)", unit="s", min=0.0005,
              max=0.5, read_only=True),
    ParamSpec("bag_compression", "zstd", "compression of the bag's MCAP chunks",
              choices=("zstd", "none"), read_only=True),
    ParamSpec("analysis_window", 600.0, "the summary and plots cover the last this many "
              "seconds of the recording (bounds the memory and time of the analysis at the end; "
              "the bag has the whole run); 0 = all of it", unit="s", min=0.0, read_only=True),
)

#: the bag's directory in out_dir (the MCAP file inside it is run_bag/run_bag.mcap)
BAG_NAME = "run_bag"
#: the decoded records of the analysis window, spooled while recording (deleted at the end)
SPOOL_NAME = ".run_spool"

#: the topics an arm recording (``kind: arm``) records
_ARM_TOPICS = ("joint_states_topic", "effort_topic")

#: (parameter, message class, ROS type name, run_report key) of the recorded topics
_TOPICS = (("joint_states_topic", JointState, "sensor_msgs/msg/JointState", "joint_states"),
           ("effort_topic", Float64MultiArray, "std_msgs/msg/Float64MultiArray", "effort"),
           ("position_topic", Float64MultiArray, "std_msgs/msg/Float64MultiArray", "setpoint"),
           ("wrench_topic", WrenchStamped, "geometry_msgs/msg/WrenchStamped", "wrench"),
           ("hand_force_topic", Float64, "std_msgs/msg/Float64", "hand"))


def _never_called(_msg) -> None:  # the reader node is never spun: drain() takes the messages
    raise AssertionError("fric_recorder: the reader node was spun")


def _by_reception(item: tuple) -> int:
    return item[0]


def _fresh_bag_dir(path: Path) -> None:
    """Make room for a new bag at ``path``: a previous run's bag there (a directory holding
    only metadata.yaml and the storage file) is replaced; anything else is an error."""
    if not path.exists():
        return
    ours = {"metadata.yaml", f"{path.name}.mcap", f"{path.name}.db3"}
    if path.is_dir() and {p.name for p in path.iterdir()} <= ours:
        shutil.rmtree(path)
        return
    raise ValueError(f"out_dir: {path} exists and is not a bag written by {NODE_NAME}; "
                     f"move it or choose another out_dir")


class Recorder(Node):
    """The recording node: streams the subscribed topics into the bag; :meth:`close_bag` ends
    it and :meth:`run_data` reads it back."""

    def __init__(self, node_name: str = NODE_NAME, **kwargs):
        super().__init__(node_name, **kwargs)
        self._writer = None
        try:
            self.p = declare_params(self, PARAMS)
            self._open_bag()
            self._open_columns()
        except Exception:
            self.close_bag()
            self.destroy_node()
            raise
        p = self.p
        self.t_start = time.monotonic()
        self.write_error: str | None = None
        depth = int(p["queue_depth"])
        q = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=depth,
                       reliability=ReliabilityPolicy.BEST_EFFORT,
                       durability=DurabilityPolicy.VOLATILE)
        # the subscriptions on a node no executor spins (drained by the timer below); no global
        # arguments (a __node remap would give it this node's name), topics already resolved
        self._reader = rclpy.create_node(f"{self.get_name()}_reader",
                                         namespace=self.get_namespace(), context=self.context,
                                         use_global_arguments=False,
                                         start_parameter_services=False)
        self._queues = []  # (topic index, subscription handle, message class)
        for i, (key, typ, _, rk) in enumerate(_TOPICS):
            if self._conns[i] is not None:
                sub = self._reader.create_subscription(typ, self.topics[rk], _never_called, q,
                                                       raw=True)
                self._queues.append((i, sub.handle, typ))
        self._batch: list[tuple[int, int, bytes]] = []
        self.create_timer(float(p["drain_period"]), known_signature(self.drain))
        what = ("every joint" if p["kind"] == "arm" else f"joint {p['joint_name']!r}")
        self.get_logger().info(
            f"recording {what} from {', '.join(self.topics.values())}"
            + (f" for {p['duration']:g} s" if p["duration"] > 0 else " until shutdown")
            + f"; bag {self.bag_path.resolve()}")

    def _open_bag(self) -> None:
        from rosbags.rosbag2 import CompressionFormat, CompressionMode, StoragePlugin, Writer
        from rosbags.typesys import Stores, get_typestore

        p = self.p
        out = make_out_dir(p["out_dir"], "out_dir")  # ValueError: bad parameters, at start-up
        self.bag_path = out / BAG_NAME
        _fresh_bag_dir(self.bag_path)
        store = get_typestore(Stores.ROS2_KILTED)
        w = Writer(self.bag_path, version=Writer.VERSION_LATEST,
                   storage_plugin=StoragePlugin.MCAP)
        if p["bag_compression"] == "zstd":
            w.set_compression(CompressionMode.STORAGE, CompressionFormat.ZSTD)
        w.open()
        self._writer = w
        self._conns: list = []
        self.topics: dict[str, str] = {}  # run_report key -> resolved topic name
        arm = p["kind"] == "arm"
        if arm and not p["joint_states_topic"]:
            raise ValueError("joint_states_topic: '' records nothing; an arm recording (kind "
                             "arm) needs the JointState topic, e.g. /joint_states")
        defaults = {s.name: s.default for s in PARAMS}
        for key, _, msgtype, rk in _TOPICS:
            if arm and key not in _ARM_TOPICS:
                if p[key] and p[key] != defaults[key]:
                    self.get_logger().warning(
                        f"{key} {p[key]!r} is not recorded: an arm recording (kind arm) "
                        f"records {' and '.join(_ARM_TOPICS)}")
                self._conns.append(None)
                continue
            if not p[key]:
                self._conns.append(None)
                continue
            topic = self.resolve_topic_name(p[key])
            self._conns.append(w.add_connection(topic, msgtype, typestore=store))
            self.topics[rk] = topic
        self.counts = [0] * len(_TOPICS)

    def _open_columns(self) -> None:
        """The records the summary is made of, decoded from each batch written to the bag and
        spooled to ``out_dir/.run_spool`` (the last ``analysis_window`` seconds kept): at the end
        they are read back in milliseconds, not the whole bag (:mod:`.tools.run_columns`)."""
        p = self.p
        self.columns: Columns | None = None
        self.columns_error: str | None = None
        self._column_keys: list = [None] * len(_TOPICS)
        keep = int(float(p["analysis_window"]) * 1e9)
        try:
            spool = Spool(self.bag_path.parent / SPOOL_NAME, keep_ns=keep,
                          segment_ns=max(keep // 4, 10**9) if keep else 60 * 10**9)
        except ValueError as e:  # something else of the user's there: refused at start-up
            raise ValueError(f"out_dir: {e}") from None
        except OSError as e:
            self._columns_failed(e)
            return
        if p["kind"] == "arm":
            self.columns = Columns({"joint_states": JointStates(None)}, spool)
        else:
            self.columns = run_report.columns_for(p, spool)
        self._column_keys = [rk if rk in self.columns.decoders else None
                             for _, _, _, rk in _TOPICS]

    def _columns_failed(self, e: Exception) -> None:
        self.columns_error = (f"the summary's records could not be spooled to "
                              f"{self.bag_path.parent / SPOOL_NAME}: {e}")
        self.get_logger().warning(self.columns_error + f"; recording goes on (`fric report "
                                  f"{self.bag_path}` makes the summary from the bag afterwards)")
        self.columns = None

    def drain(self) -> int:
        """Take every queued message of every topic and write them to the bag in the order they
        arrived (their reception timestamps: the bag's timestamps); the serialized bytes as
        received, no deserialization. Returns how many were written."""
        if self.write_error is not None or self._writer is None:
            return 0
        batch = self._batch
        for i, handle, typ in self._queues:
            take = handle.take_message
            while True:
                got = take(typ, True)
                if got is None:
                    break
                data, info = got
                batch.append((info["received_timestamp"] or time.time_ns(), i, data))
        if not batch:
            return 0
        if len(self._queues) > 1:
            batch.sort(key=_by_reception)
        conns, write, counts = self._conns, self._writer.write, self.counts
        n = 0
        try:
            for rx, i, data in batch:
                write(conns[i], rx, data)
                counts[i] += 1
                n += 1
        except (OSError, ValueError) as e:  # disk full, ...: stop recording, say why
            self.write_error = f"writing {self.bag_path} failed: {e}"
            self.get_logger().error(self.write_error + "; recording stopped")
        if self.columns is not None:
            keys, push = self._column_keys, self.columns.push
            try:
                for rx, i, data in batch[:n]:  # what the bag holds
                    if keys[i] is not None:
                        push(keys[i], rx, data)
            except OSError as e:
                self._columns_failed(e)
        batch.clear()
        return n

    def destroy_node(self) -> None:
        reader, self._reader = getattr(self, "_reader", None), None
        if reader is not None:
            reader.destroy_node()
        super().destroy_node()

    def close_bag(self) -> None:
        """Finish the bag on disk (idempotent): metadata.yaml, the MCAP summary, the
        recorder's parameters in ``custom_data``."""
        if self._writer is not None and getattr(self, "_queues", None):
            self.drain()  # what arrived since the last tick
        w, self._writer = self._writer, None
        if w is None:
            return
        self.closed_meta = self.meta()
        try:
            w.set_custom_data(NODE_NAME, json.dumps(self.closed_meta))
            w.close()
        except Exception as e:  # noqa: BLE001 - reported, the rest of the bag stays on disk
            self.write_error = self.write_error or f"closing {self.bag_path} failed: {e}"

    def meta(self) -> dict:
        p = self.p
        meta = {k: p[k] for k in ("kind", "joint_name", "command_index", "mode",
                                  "virtual_mass", "max_effort", "encoder_resolution", "v_slide",
                                  "hand_script", "hand_location", "hand_t0", "title",
                                  "analysis_window")}
        meta["topics"] = {k: p[k] for k in ("joint_states_topic", "effort_topic",
                                            "position_topic", "wrench_topic",
                                            "hand_force_topic")}
        meta["bag_topics"] = dict(getattr(self, "topics", {}))
        meta["wall_time"] = time.monotonic() - getattr(self, "t_start", time.monotonic())
        return meta

    def message_counts(self) -> dict[str, int]:
        """Messages written to the bag per topic (run_report keys)."""
        return {rk: self.counts[i] for i, (_, _, _, rk) in enumerate(_TOPICS)
                if self._conns[i] is not None}

    def _window(self) -> tuple[int | None, dict | None]:
        cols = self.columns
        cols.flush()
        if cols.first_ns is None:
            return None, None
        # the bag's span as rosbags gives it: from the first message to just after the last
        return window_start(cols.first_ns, cols.last_ns + 1, float(self.p["analysis_window"]))

    def run_data(self) -> run_report.RunData:
        """Close the bag; the run (its last ``analysis_window`` seconds) from the spooled
        records: what :func:`~.tools.run_report.read_bag` makes of the bag. ``ValueError``
        when the records could not be spooled (``columns_error``)."""
        self.close_bag()
        if self.columns is None:
            raise ValueError(self.columns_error or "no records")
        start, info = self._window()
        meta = dict(self.closed_meta)
        if info:
            meta["window"] = info
        return run_report.run_data(self.columns, meta, self.bag_path, start)

    def arm_summary(self) -> dict:
        """Close the bag; the arm recording's summary from the spooled records: what
        :func:`~.tools.arm_run_report.summarize_bag` makes of the bag. ``ValueError`` when the
        records could not be spooled."""
        from .tools import arm_run_report

        self.close_bag()
        if self.columns is None:
            raise ValueError(self.columns_error or "no records")
        start, info = self._window()
        topics = {self.topics[rk]: self.counts[i] for i, (_, _, _, rk) in enumerate(_TOPICS)
                  if self._conns[i] is not None}
        return arm_run_report.summarize_records(
            self.columns.records("joint_states", start), self.columns.decoders["joint_states"],
            self.bag_path, self.topics["joint_states"], topics, info)


def finish(data: run_report.RunData, out_dir: str, plots: bool = True,
           log=print, extra: dict | None = None) -> tuple[int, list[Path]]:
    """Write run.npz, summary.json (with ``extra`` added, e.g. the bag's path) and the plots;
    print where they are and the summary (:func:`.tools.run_report.write_files`). Returns
    (exit status, written paths)."""
    return run_report.write_files(data, out_dir, plots, log, extra, prog=NODE_NAME)


def finish_arm(summary: dict, out_dir: str, stopped: str = "", log=print) -> int:
    """An arm recording's end: write its ``summary`` to ``out_dir/summary.json`` and print it
    (:func:`.tools.arm_run_report.write_summary`). Returns the exit status: 0, or 1 when no
    joint_states message was recorded."""
    from .tools import arm_run_report

    return arm_run_report.write_summary(summary, out_dir, stopped, log, prog=NODE_NAME)


def main(args=None) -> int:
    argv = list(sys.argv[1:] if args is None else args)
    if not init_ros(NODE_NAME, argv):
        return 1
    stop: list[int] = []
    # any number of SIGINT/SIGTERM only mark the stop (ros2 launch sends two on Ctrl-C)
    with stop_signals(stop, restore=args is not None):
        node = spool = None
        try:
            try:
                node = Recorder()
            except ValueError as e:  # bad parameters, an out_dir that cannot be written
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
            spool = node.columns.store if node.columns is not None else None
            executor.add_node(node)
            duration = float(node.p["duration"])
            end = node.t_start + duration if duration > 0 else float("inf")
            while (not stop and rclpy.ok() and time.monotonic() < end
                   and node.write_error is None):
                executor.spin_once(timeout_sec=0.05)
            executor.remove_node(node)
            node.drain()  # what arrived since the last tick, before counting
            why = (f"signal {signal.Signals(stop[0]).name}" if stop else
                   "duration reached" if time.monotonic() >= end else
                   "bag write failed" if node.write_error else "ROS shut down")
            counts = node.message_counts()
            if stop and not any(counts.values()):
                node.close_bag()
                print(f"{NODE_NAME}: stopped by signal {signal.Signals(stop[0]).name} before "
                      "any message arrived: nothing recorded", flush=True)
                return 0
            node.close_bag()  # the whole run is safe on disk before the analysis starts
            wall = node.meta()["wall_time"]
            print(f"{NODE_NAME}: stopped ({why}) after {wall:.1f} s; "
                  + ", ".join(f"{n} {k}" for k, n in counts.items())
                  + f" messages in {node.bag_path.resolve()}", flush=True)
            if node.write_error:
                print(f"{NODE_NAME}: {node.write_error}", file=sys.stderr, flush=True)
            out_dir, plots, write_error = node.p["out_dir"], node.p["plots"], node.write_error
            bag, kind = node.bag_path, node.p["kind"]
            # the summary's records from the spool (bounded by analysis_window; the bag is not
            # read back): a launch's shutdown budget is seconds (ros2 launch: SIGTERM after 5 s)
            try:
                result = node.arm_summary() if kind == "arm" else node.run_data()
            except ValueError as e:
                result = None
                print(f"{NODE_NAME}: no summary: {e}; make it from the bag with `fric report "
                      f"{bag.resolve()}`", file=sys.stderr, flush=True)
            node.destroy_node()
            node = None
            rclpy.try_shutdown()
            if result is None:
                return 1
            if kind == "arm":
                status = finish_arm(result, out_dir, why)
            else:
                status, _ = finish(result, out_dir, plots, extra={"bag": str(bag.resolve()),
                                                                  "bag_messages": counts})
            sys.stdout.flush()
            return 1 if write_error else status
        finally:
            if node is not None:
                node.close_bag()
                node.destroy_node()
            if spool is not None:
                spool.remove()
            rclpy.try_shutdown()

if __name__ == "__main__":
    sys.exit(main())
