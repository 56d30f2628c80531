"""``fric fleet RECORDINGS... --urdf URDF --out DIR [--ray auto|local|ADDRESS]``: friction
across a fleet (issue 26; docs/fleet.md).

1. The recordings (bags or CSVs, folders, globs) and, per recording, its robot, time and topic
   (:mod:`fric_nodes.tools.fleet_sources`: from the bag's metadata by default, or naming
   patterns ``--robot-from``, ``--time-from``).
2. Each recording identified with ``fric identify``'s own pipeline
   (:func:`fric_nodes.tools.arm_identify.identify_recording`, the same options), in parallel: a
   local process pool of ``--jobs`` workers (default: every core), or Ray tasks with ``--ray``
   (:mod:`fric_nodes.tools.fleet_runner`). A recording identified before with the same bytes
   and options is taken from ``DIR/cache`` (a run stopped half-way goes on where it stopped);
   a recording that fails is listed with its reason and the batch goes on. Progress on stderr.
3. ``DIR/fleet.parquet`` and ``DIR/fleet.csv`` (one row per robot, joint and time:
   :mod:`fric_core.fleet.table`), ``DIR/failures.parquet``/``.csv``, the change detection
   (:mod:`fric_core.fleet.trends`) in ``DIR/findings.csv``, and ``DIR/report.md`` with one
   ``levels_<joint>.png`` per joint (:mod:`fric_core.fleet.report`).

:func:`run_fleet` is the whole of it without the command line; :func:`add_subcommand`
registers ``fric fleet`` on the ``fric`` parser. Exit status: 0 done (failed recordings are
listed), 1 no recording could be identified, 2 bad arguments (one line).
"""

from __future__ import annotations

import argparse
import csv
import datetime as _dt
import hashlib
import math
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence

__all__ = ["FleetResult", "run_fleet", "add_subcommand", "default_jobs"]

PROG = "fric fleet"
#: The table's files, the failures', the findings' and the report's.
OUTPUT_FILES = ("fleet.parquet", "fleet.csv", "failures.parquet", "failures.csv",
                "findings.csv", "report.md")


def _none(_msg: str) -> None:
    pass


def default_jobs() -> int:
    """Every core this process may run on.

    Returns
    -------
    int
        The number of CPUs in the affinity mask (``os.cpu_count()`` where there is none).
    """
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


@dataclass
class FleetResult:
    """What :func:`run_fleet` did: the table's ``rows`` and the ``failures`` (dicts, as
    written), the ``detection``, the ``files`` written (name → path), how many recordings were
    found, ``identified`` in this run, taken from the ``cached`` results, ``failed``; the wall
    time ``seconds`` of the identification phase (first submission to last result), the
    workers' summed identification time ``work_seconds``, the largest peak resident memory a
    worker reported ``worker_peak_rss`` [bytes], and the ``executor`` used."""

    rows: List[dict]
    failures: List[dict]
    detection: object
    files: Dict[str, Path]
    recordings: int
    identified: int
    cached: int
    failed: int
    seconds: float
    work_seconds: float
    executor: str
    worker_peak_rss: int = 0
    notes: List[str] = field(default_factory=list)

    @property
    def rate(self) -> float:
        """Recordings identified per second of wall time in this run (NaN when none)."""
        return self.identified / self.seconds if self.identified and self.seconds > 0 \
            else math.nan


def _file_digest(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _options(urdf, joints, model, dynamics, method, effort_lag, effort_scale, offset) -> Dict:
    """The identification options, checked, as the workers take them (JSON-able)."""
    from fric_nodes.tools.arm_identify import (MODELS, OFFSETS, ArmIdentifyError,
                                               parse_effort_lag, parse_effort_scale)

    if model not in MODELS:
        raise ArmIdentifyError(f"--model: expected one of {', '.join(MODELS)}, got {model!r}")
    if offset not in OFFSETS:
        raise ArmIdentifyError(f"--offset: expected one of {', '.join(OFFSETS)}, got "
                               f"{offset!r}")
    if dynamics not in ("auto", "identify", "urdf"):
        raise ArmIdentifyError(f"--dynamics: expected auto, identify or urdf, got {dynamics!r}")
    if method not in ("eiv", "ols"):
        raise ArmIdentifyError(f"--method: expected eiv or ols, got {method!r}")
    scale = None if effort_scale is None else parse_effort_scale(effort_scale)
    return {"urdf": urdf, "joints": list(joints) if joints else None, "model": model,
            "dynamics": dynamics, "method": method, "effort_lag": parse_effort_lag(effort_lag),
            "effort_scale": scale, "offset": offset}


class _Progress:
    """``n/N done (… failed, … from the cache), rate, ETA`` lines, at most one a second."""

    def __init__(self, total: int, emit: Callable[[str], None]):
        self.total, self.emit = total, emit
        self.done = self.failed = self.cached = self.identified = 0
        self.start: Optional[float] = None
        self._last = 0.0

    def count(self, *, cached: bool, failed: bool) -> None:
        self.done += 1
        self.failed += failed
        self.cached += cached
        self.identified += not cached
        now = time.perf_counter()
        if now - self._last < 1.0 and self.done < self.total:
            return
        self._last = now
        text = f"{self.done}/{self.total} done ({self.failed} failed, {self.cached} from the cache)"
        if self.start is not None and self.identified:
            rate = self.identified / max(now - self.start, 1e-9)
            left = self.total - self.done
            eta = left / rate if rate > 0 else math.inf
            text += f", {rate:.2f} recordings/s, ETA {_duration(eta)}"
        self.emit(text)


def _duration(s: float) -> str:
    if not math.isfinite(s):
        return "?"
    if s < 60:
        return f"{s:.0f} s"
    if s < 3600:
        return f"{int(s // 60)} min {int(s % 60):02d} s"
    return f"{int(s // 3600)} h {int((s % 3600) // 60):02d} min"


def run_fleet(recordings: Sequence[str], urdf: str, out_dir, *, topic: str = "joint_states",
              joints: Optional[Sequence[str]] = None, model: str = "auto",
              dynamics: str = "identify", method: str = "eiv", effort_lag="auto",
              effort_scale=None, offset: str = "auto", robot_from: str = "auto",
              time_from: str = "auto", jobs: Optional[int] = None, ray: Optional[str] = None,
              levels: Sequence[str] = ("coulomb",), alpha: float = 0.01, parquet: bool = True,
              figures: bool = True, progress: Callable[[str], None] = _none) -> FleetResult:
    """Identify a fleet's recordings and write the table and the report (module docstring).

    Parameters
    ----------
    recordings : sequence of str
        Bags, CSVs, folders, globs.
    urdf : str
        The arm's URDF (a path or a bundled name), the same for every robot.
    out_dir : str or path-like
        The output directory (created; its ``cache/`` is reused).
    topic, joints, model, dynamics, method, effort_lag, effort_scale, offset
        ``fric identify``'s options (:func:`~fric_nodes.tools.arm_identify.identify_recording`).
    robot_from : str
        ``auto``, ``dir`` or a regular expression (:mod:`.fleet_sources`).
    time_from : str
        ``auto``, ``bag``, ``mtime`` or a regular expression.
    jobs : int, optional
        Local workers (default: every core); with ``ray="local"`` the CPUs of that instance.
    ray : str, optional
        None: the local pool; ``"auto"``, ``"local"`` or a cluster address: Ray.
    levels : sequence of str
        The levels the change detection watches (``coulomb``, ``viscous``).
    alpha : float
        The detection's family-wise false-alarm probability.
    parquet : bool
        Write Parquet besides CSV (needs pyarrow, the ``[fleet]`` extra).
    figures : bool
        Draw the per-joint figures.
    progress : callable
        Called with each progress line.

    Returns
    -------
    FleetResult
        Rows, failures, detection, files, counts and timings.

    Raises
    ------
    ValueError
        One line naming a bad argument (:class:`~.fleet_sources.FleetInputError`,
        :class:`~fric_nodes.tools.arm_identify.ArmIdentifyError`), before any identification.
    RuntimeError
        ``ray`` given without Ray installed, or no cluster at the address
        (:class:`~.fleet_runner.RayMissing`).
    """
    from fric_core.fleet.report import write_fleet_report
    from fric_core.fleet.table import LEVELS, parquet_available, write_failures, write_table
    from fric_core.fleet.trends import detect_changes
    from fric_nodes.tools import fleet_runner as fr
    from fric_nodes.tools.fleet_sources import (FleetInputError, check_patterns, describe,
                                                find_recordings)
    from fric_nodes.tools.user_errors import make_out_dir, out_dir_problem

    options = _options(urdf, joints, model, dynamics, method, effort_lag, effort_scale, offset)
    check_patterns(robot_from, time_from)
    bad = [q for q in levels if q not in LEVELS]
    if bad or not levels:
        raise FleetInputError(f"--levels: expected some of {', '.join(LEVELS)}, got "
                              f"{', '.join(levels) or 'none'}")
    if not (isinstance(alpha, (int, float)) and 0.0 < alpha < 1.0):
        raise FleetInputError(f"--alpha: expected a probability in (0, 1), got {alpha!r}")
    jobs = default_jobs() if jobs is None else jobs
    if not (isinstance(jobs, int) and not isinstance(jobs, bool) and jobs >= 1):
        raise FleetInputError(f"--jobs: expected a whole number >= 1, got {jobs!r}")
    if parquet and not parquet_available():
        raise FleetInputError("writing Parquet needs pyarrow: pip install 'fric[fleet]' (or "
                              "--no-parquet for the CSV table only)")
    if ray is not None:
        fr.import_ray(ray)  # (one line when it is missing; loopback for local)
    problem = out_dir_problem(out_dir, "--out")
    if problem:
        raise FleetInputError(problem)
    from fric_core.transmission.urdf_dynamics import UrdfDynamics, UrdfError
    from fric_nodes.tools.arm_identify import unknown_joints

    try:
        model_dyn = UrdfDynamics(urdf)
    except UrdfError as e:
        raise FleetInputError(f"--urdf {urdf}: {str(e).removeprefix('urdf: ')}") from None
    problem = unknown_joints(joints, model_dyn) if joints else None
    if problem:
        raise FleetInputError(problem)
    urdf_digest = _file_digest(Path(model_dyn.source))
    out = Path(out_dir)
    found = find_recordings(recordings, skip=out)
    out = make_out_dir(out_dir, "--out")
    cache = fr.ResultCache(out)
    progress(f"{len(found)} recording(s); identifying with "
             + (f"Ray ({ray})" if ray is not None else f"a pool of {jobs} worker(s)"))

    sources = [describe(p, kind, topic, robot_from, time_from) for p, kind in found]
    entries: Dict[str, dict] = {}  # key → the result: {"rows": [...]} or {"failure": reason}
    keys: Dict[int, str] = {}  # source index → key
    digests: Dict[int, str] = {}
    waiting: Dict[str, List[int]] = {}  # key submitted → the sources waiting for it
    bar = _Progress(len(sources), progress)
    executor = None
    t_first = t_last = None
    work = 0.0
    peak_rss = 0
    identified = 0

    def tasks():
        """The recordings to identify, hashed one at a time as the workers ask for more
        (cached results and sources without robot or time are counted on the way)."""
        for i, src in enumerate(sources):
            if not src.problem:
                try:
                    digests[i] = cache.digest(src.path, src.kind)
                except OSError as e:  # gone or unreadable since it was found
                    src.problem = f"cannot be read: {' '.join(str(e).split())}"
            if src.problem:
                bar.count(cached=False, failed=True)
                continue
            key = keys[i] = fr.cache_key(digests[i], urdf_digest, src.topic, options)
            if key in waiting:
                waiting[key].append(i)
                continue
            hit = entries.get(key) or cache.get(key)
            if hit is not None:
                entries[key] = hit
                bar.count(cached=True, failed="failure" in hit)
                continue
            waiting[key] = [i]
            yield key, str(src.path), src.topic

    try:
        todo = tasks()
        item = next(todo, None)
        if item is not None:
            executor = (fr.RayExecutor(ray, jobs if ray == "local" else None) if ray is not None
                        else fr.PoolExecutor(jobs, urdf))
            window = 2 * executor.capacity
            t_first = bar.start = time.perf_counter()
        while item is not None or (executor is not None and executor.pending()):
            while item is not None and executor.pending() < window:
                executor.submit(*item, options)
                item = next(todo, None)
            for res in executor.next_results():
                key = res["key"]
                work += res.get("seconds", 0.0)
                peak_rss = max(peak_rss, res.get("maxrss", 0))
                entry = {"rows": res["rows"]} if "rows" in res else {"failure": res["failure"]}
                entries[key] = entry
                identified += "rows" in res
                if "rows" in res or res.get("cacheable"):
                    cache.put(key, entry)
                for _ in waiting[key]:
                    bar.count(cached=False, failed="failure" in entry)
        t_last = time.perf_counter() if t_first is not None else None
    except BaseException:
        if executor is not None:
            executor.close(cancel=True)
            executor = None
        raise
    finally:
        cache.save()
        if executor is not None:
            executor.close()

    rows, failures = [], []
    for i, src in enumerate(sources):
        base = {"robot": src.robot, "time": src.time, "recording": str(src.path),
                "digest": digests.get(i, "")}
        entry = entries.get(keys.get(i, ""), None)
        if src.problem or entry is None:
            failures.append({**base, "reason": src.problem or "not identified"})
        elif "failure" in entry:
            failures.append({**base, "reason": entry["failure"]})
        else:
            for k, r in enumerate(entry["rows"]):
                rows.append({**r, **base, "_order": k})
    files: Dict[str, Path] = {}
    for p in write_table(out, rows, parquet=parquet) + write_failures(out, failures,
                                                                      parquet=parquet):
        files[p.name] = p
    detection = detect_changes(rows, quantities=tuple(levels), alpha=alpha)
    files["findings.csv"] = _write_findings(out / "findings.csv", detection.findings)
    seconds = (t_last - t_first) if t_first is not None and t_last is not None else 0.0
    summary = _summary(sources, rows, failures, bar, identified, urdf, options, ray, jobs,
                       seconds)
    for p in write_fleet_report(out, rows, detection, failures, summary, figures=figures):
        files[p.name] = p
    return FleetResult(rows=rows, failures=failures, detection=detection, files=files,
                       recordings=len(sources), identified=identified, cached=bar.cached,
                       failed=len(failures), seconds=seconds, work_seconds=work,
                       executor="ray" if ray is not None else "pool", worker_peak_rss=peak_rss)


def _summary(sources, rows, failures, bar, identified, urdf, options, ray, jobs,
             seconds) -> Dict[str, object]:
    robots = sorted({r["robot"] for r in rows})
    times = sorted(r["time"] for r in rows)
    span = (f"{times[0].date().isoformat()} to {times[-1].date().isoformat()}" if times
            else "—")
    opts = ", ".join(f"{k} {v}" for k, v in options.items()
                     if k != "urdf" and v is not None)
    return {
        "recordings": f"{len(sources)}: {identified} identified in this run, {bar.cached} "
                      f"taken from the cache, {len(failures)} failed",
        "robots": f"{len(robots)} ({', '.join(robots[:12])}{', …' if len(robots) > 12 else ''})",
        "period": span,
        "URDF": urdf,
        "identification options": opts,
        "run on": f"Ray ({ray})" if ray is not None else f"a local pool of {jobs} worker(s)",
        "identification wall time": f"{seconds:.1f} s",
    }


def _write_findings(path: Path, findings) -> Path:
    cols = ("robot", "joint", "quantity", "kind", "since", "until", "days", "before", "after",
            "change", "change_std", "relative", "relative_std", "per_day", "per_day_std", "t",
            "dof", "p", "p_threshold", "scale", "unit")
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(cols + ("sentence",))
        for f in findings:
            vals = []
            for c in cols:
                v = getattr(f, c)
                vals.append(v.isoformat() if isinstance(v, _dt.datetime)
                            else repr(v) if isinstance(v, float) else str(v))
            w.writerow(vals + [f.sentence()])
    return path


# -- the command line -----------------------------------------------------------------------------
def _fail(text: str) -> int:
    print(f"{PROG}: error: {' '.join(str(text).split())}", file=sys.stderr)
    return 2


def _run(ns: argparse.Namespace) -> int:
    from fric_nodes.tools.fleet_runner import RayMissing

    def progress(msg: str) -> None:
        print(f"{PROG}: {msg}", file=sys.stderr, flush=True)

    try:
        res = run_fleet(ns.recordings, ns.urdf, ns.out, topic=ns.topic, joints=ns.joints,
                        model=ns.model, dynamics=ns.dynamics, method=ns.method,
                        effort_lag=ns.effort_lag, effort_scale=ns.effort_scale,
                        offset=ns.offset, robot_from=ns.robot_from, time_from=ns.time_from,
                        jobs=ns.jobs, ray=ns.ray, levels=ns.levels, alpha=ns.alpha,
                        parquet=not ns.no_parquet, figures=not ns.no_figures,
                        progress=progress)
    except (ValueError, OSError, RayMissing) as e:
        return _fail(str(e))
    det = res.detection
    print(f"# {res.recordings} recordings: {res.identified} identified in this run, "
          f"{res.cached} from the cache, {res.failed} failed")
    if res.identified:
        print(f"# identification: {res.seconds:.1f} s wall, {res.rate:.2f} recordings/s "
              f"({res.executor}); {res.work_seconds / res.identified:.2f} s per recording in "
              "a worker")
    if det.tests:
        print(f"# change detection: {det.tests} tests, false-alarm probability <= "
              f"{det.alpha:g} (p < {det.p_threshold:.2g}, ~{det.z_threshold:.2f} std)")
    else:
        from fric_core.fleet.trends import MIN_POINTS

        print(f"# change detection: no robot's joint has {MIN_POINTS} recordings or more: "
              "nothing tested")
    for f in det.findings:
        print(f"finding: {f.sentence()}")
    if not det.findings:
        print("finding: none")
    for f in res.failures:
        print(f"failed: {f['recording']}: {f['reason']}")
    for name, path in res.files.items():
        if not name.startswith("levels_"):
            print(f"{name}: {path}")
    return 0 if res.rows or not res.recordings else 1


def _jobs(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}") \
            from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}")
    return n


def _levels(text: str) -> list:
    from fric_core.fleet.table import LEVELS

    names = [p.strip() for p in text.split(",") if p.strip()]
    bad = [n for n in names if n not in LEVELS]
    if bad or not names:
        raise argparse.ArgumentTypeError(f"expected some of {', '.join(LEVELS)} (comma-"
                                         f"separated), got {text!r}")
    return names


def _alpha(text: str) -> float:
    try:
        a = float(text)
    except ValueError:
        a = math.nan
    if not (0.0 < a < 1.0):
        raise argparse.ArgumentTypeError(f"expected a probability in (0, 1), got {text!r}")
    return a


def add_subcommand(subparsers: argparse._SubParsersAction) -> None:
    """Register ``fleet`` on the ``fric`` parser.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        The ``fric`` parser's sub-parsers.

    Returns
    -------
    None
    """
    from fric_nodes.tools.cli import (_effort_lag, _effort_scale, _joint_list,
                                      _one_line_error)

    p = subparsers.add_parser(
        "fleet", help="identify every recording of a fleet of arms and watch their friction "
                      "over time (docs/fleet.md)",
        description="Identify the joint friction of every recording of a fleet (the same "
                    "pipeline and options as `fric identify RECORDING --urdf URDF`), in "
                    "parallel on this machine or on a Ray cluster, resumably (DIR/cache), and "
                    "write DIR/fleet.parquet and DIR/fleet.csv (one row per robot, joint and "
                    "time), DIR/failures.*, DIR/findings.csv and DIR/report.md with one "
                    "levels_<joint>.png per joint: the friction levels over time and the "
                    "robots and joints whose level changed (a trend or a shift beyond the "
                    "fleet's false-alarm threshold). Exit status: 0 done (failed recordings "
                    "are listed), 1 no recording could be identified, 2 bad arguments.")
    p.add_argument("recordings", nargs="+", metavar="RECORDING",
                   help="rosbag2 bag directories (or their .mcap/.db3 files), .csv files, "
                        "folders searched for both, or globs ('**' for any depth)")
    p.add_argument("--urdf", required=True, metavar="URDF",
                   help="the arms' URDF (a file, or a bundled name: planar_2link, arm7)")
    p.add_argument("--out", required=True, metavar="DIR",
                   help="output directory (created; its cache/ makes a second run resume)")
    p.add_argument("--robot-from", default="auto", metavar="auto|dir|REGEX",
                   help="the robot id of a recording: auto (default: the bag's JointState "
                        "topic namespace, /r07/joint_states -> r07, else the folder holding "
                        "the recording), dir (that folder's name), or a regular expression "
                        "searched in the recording's path (its group 'robot' or first group)")
    p.add_argument("--time-from", default="auto", metavar="auto|bag|mtime|REGEX",
                   help="the time of a recording: auto (default: a bag's start from its "
                        "metadata; a CSV's date-time in its name, else its modification time), "
                        "bag, mtime, or a regular expression searched in the path (its group "
                        "'time' or first group: ISO 8601, 2026_11_02-09_12_00, 20261102T091200 "
                        "or epoch seconds; UTC unless an offset is given)")
    p.add_argument("--jobs", type=_jobs, default=None, metavar="N",
                   help="local worker processes (default: every core; with --ray local the "
                        "CPUs of that Ray instance)")
    p.add_argument("--ray", default=None, metavar="auto|local|ADDRESS",
                   help="run one Ray task per recording: auto (the cluster this machine "
                        "belongs to: `ray start` or RAY_ADDRESS), local (a Ray instance started "
                        "for this run, loopback only), or a cluster ADDRESS; needs the [ray] "
                        "extra, and every node must see the recordings and the URDF")
    p.add_argument("--levels", type=_levels, default=["coulomb"], metavar="coulomb[,viscous]",
                   help="the levels watched for changes (default coulomb: (Cp + Cn)/2)")
    p.add_argument("--alpha", type=_alpha, default=0.01, metavar="A",
                   help="probability of any false alarm in the fleet per run (default 0.01)")
    p.add_argument("--no-parquet", action="store_true",
                   help="write the tables as CSV only (no pyarrow needed)")
    p.add_argument("--no-figures", action="store_true", help="report.md without the figures")
    arm = p.add_argument_group("identification (as fric identify)")
    arm.add_argument("--topic", default="joint_states", metavar="T",
                     help="the bags' sensor_msgs/JointState topic: a relative name matches it "
                          "in any namespace (default joint_states)")
    arm.add_argument("--joints", type=_joint_list, default=None, metavar="a,b,...",
                     help="joints to identify (default: every joint of each recording)")
    arm.add_argument("--model", choices=("auto", "asymmetric", "curve", "gear"),
                     default="auto", help="friction law per joint (default auto)")
    arm.add_argument("--offset", choices=("auto", "none", "estimate-at-rest", "symmetric"),
                     default="auto", help="effort offset treatment (default auto)")
    arm.add_argument("--dynamics", choices=("auto", "identify", "urdf"), default="identify",
                     help="identify the rigid body (default: one choice for every recording, so "
                          "that a trend is never a switch of model), trust the URDF's inertias, "
                          "or auto (fric identify's default: per recording, the URDF's unless "
                          "the identified one predicts clearly better)")
    arm.add_argument("--method", choices=("eiv", "ols"), default="eiv",
                     help="errors-in-variables (default) or least squares")
    arm.add_argument("--effort-lag", type=_effort_lag, default="auto", metavar="{auto,SECONDS}",
                     help="how long the effort lags the positions (default auto)")
    arm.add_argument("--effort-scale", type=_effort_scale, default=None, metavar="JOINT=K,...",
                     help="multiply a joint's effort by K (motor current to torque)")
    p.set_defaults(func=_run)
    p.error = _one_line_error(p)
