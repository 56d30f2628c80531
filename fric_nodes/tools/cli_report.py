"""``fric report BAG [--out DIR] [--window S] [--no-plots]``: the files ``fric_recorder`` writes
at the end of a run, made again from the bag it recorded (issue 24 item 9).

For a recorder stopped before it wrote them (killed by a launch, a crash, a full disk), or to
summarise another window of a long run. The recorder's parameters stored in the bag
(``custom_data``) say what it recorded: a haptic run (``summary.json``, ``run.npz``,
``timeseries.png``, ``force_velocity.png``, as :func:`fric_nodes.tools.run_report.read_bag` and
:func:`~fric_nodes.tools.run_report.write_files` make them) or an arm recording (``kind: arm``:
``summary.json``, :func:`fric_nodes.tools.arm_run_report.summarize_bag`). Pure rosbags, numpy
and matplotlib: no ROS needed. Exit status: 0 written, 1 nothing recorded (no joint_states
with the joint), 2 not a bag that can be read (one line).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

PROG = "fric report"


def _fail(text: str) -> int:
    print(f"{PROG}: error: {' '.join(text.split())}", file=sys.stderr)
    return 2


def _bag_dir(path: Path) -> Path | str:
    """The bag directory of ``path`` (a bag directory, or its .mcap/.db3 file), or what is wrong
    with it."""
    if path.is_file() and path.suffix in (".mcap", ".db3"):
        path = path.parent
    if not path.is_dir():
        return f"{path}: no such bag directory"
    if not (path / "metadata.yaml").is_file():
        return (f"{path}: no metadata.yaml: the bag was not closed (its recorder was killed "
                f"while recording); `ros2 bag reindex {path}` (a ROS 2 install) rebuilds it, "
                f"then run fric report again")
    return path


def _message_counts(bag: Path, topics: dict) -> dict[str, int]:
    """Messages in ``bag`` of each recorded topic (run_report key -> topic name)."""
    from rosbags.highlevel import AnyReader

    with AnyReader([bag]) as reader:
        have = {}
        for c in reader.connections:
            have[c.topic] = have.get(c.topic, 0) + int(c.msgcount)
    return {k: have.get(t, 0) for k, t in topics.items() if t in have}


def report(bag: str | Path, out: str | Path | None = None, window: float | None = None,
           plots: bool = True, kind: str | None = None, topic: str | None = None) -> int:
    """Write the recorder's files for ``bag`` to ``out`` (default: the directory holding the
    bag, the recorder's ``out_dir``), over the last ``window`` seconds (default: the
    recorder's ``analysis_window``, 600 s for a bag without it; 0: all). ``kind`` (haptic or
    arm) and ``topic`` (an arm's JointState topic) default to what the recorder recorded.
    Returns the exit status."""
    from . import arm_run_report, run_report

    found = _bag_dir(Path(bag))
    if isinstance(found, str):
        return _fail(found)
    bag = found
    meta = run_report.bag_meta(bag)
    kind = kind or meta.get("kind") or "haptic"
    window = float(meta.get("analysis_window", 600.0) if window is None else window)
    out = Path(out) if out is not None else bag.parent
    topics = meta.get("bag_topics") or {k: v[1] for k, v in run_report.BAG_TOPICS.items()}
    try:
        if kind == "arm":
            topic = topic or topics.get("joint_states") or "/joint_states"
            summary = arm_run_report.summarize_bag(bag, topic, window=window)
            return arm_run_report.write_summary(summary, out, prog=PROG)
        data = run_report.read_bag(bag, meta or None, window=window)
        extra = {"bag": str(bag.resolve()), "bag_messages": _message_counts(bag, topics)}
        return run_report.write_files(data, out, plots, extra=extra, prog=PROG)[0]
    except ValueError as e:
        return _fail(str(e))
    except OSError as e:
        return _fail(f"{out}: cannot write the files: {e}")


def _run(ns: argparse.Namespace) -> int:
    if ns.window is not None and not ns.window >= 0.0:
        return _fail(f"--window: {ns.window:g} is not >= 0 (seconds; 0 = all of it)")
    return report(ns.bag, ns.out, ns.window, not ns.no_plots, ns.kind, ns.topic)


def add_subcommand(subparsers: argparse._SubParsersAction) -> None:
    """Register ``report`` on the ``fric`` parser."""
    p = subparsers.add_parser(
        "report", help="make fric_recorder's summary (and plots) again from its bag",
        description="Write the files fric_recorder writes at the end of a run from the bag it "
                    "recorded (OUT_DIR/run_bag): for a haptic run summary.json, run.npz, "
                    "timeseries.png and force_velocity.png; for an arm recording (kind:=arm) "
                    "summary.json; and print the summary. For a recorder stopped before it "
                    "wrote them, or another window of a long run. Exit status: 0 written, 1 "
                    "nothing recorded, 2 not a bag that can be read.")
    p.add_argument("bag", metavar="BAG", help="the bag directory (e.g. out/haptic_render/run_bag) "
                                              "or its .mcap/.db3 file")
    p.add_argument("--out", metavar="DIR", default=None,
                   help="where to write (default: the directory holding the bag)")
    p.add_argument("--window", type=float, default=None, metavar="S",
                   help="summarise the last S seconds (default: the recorder's analysis_window, "
                        "600; 0: all of it)")
    p.add_argument("--no-plots", action="store_true", help="haptic: no PNG plots")
    p.add_argument("--kind", choices=("haptic", "arm"), default=None,
                   help="what the bag holds (default: as recorded; haptic for a foreign bag)")
    p.add_argument("--topic", metavar="T", default=None,
                   help="arm: the sensor_msgs/JointState topic (default: as recorded)")
    p.set_defaults(func=_run)
