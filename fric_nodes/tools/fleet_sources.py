"""``fric fleet``'s recordings: found from paths, folders and globs, each with a robot id, a
time and its JointState topic (issue 26).

A recording is a rosbag2 bag (its directory with ``metadata.yaml``; a ``.mcap``/``.db3`` file
given stands for its directory) or a ``.csv`` file. A folder that is not a bag is searched
(recursively, hidden folders and the output directory skipped) for both; an argument with
``*``, ``?`` or ``[`` is a glob (``**`` for any depth).

**Robot** (``--robot-from``):

* ``auto`` (default): a bag's JointState topic namespace (``/r07/joint_states`` → ``r07``,
  ``/site_a/r07/joint_states`` → ``site_a/r07``), else the name of the folder holding the
  recording (``fleet/r07/rosbag2_…`` → ``r07``, ``logs/r07/day1.csv`` → ``r07``);
* ``dir``: always the holding folder's name;
* a regular expression searched in the recording's absolute path: its group ``robot``, else
  its first group, else the whole match (``--robot-from 'robot_(\\d+)'``).

**Time** (``--time-from``), UTC unless the text carries an offset:

* ``auto`` (default): a bag's start (``metadata.yaml``: ``starting_time``, the first message's
  receive time); a CSV's date-time in its file name (:func:`parse_time_text`'s forms), else
  its modification time;
* ``bag``: the bag's start (a CSV is refused); ``mtime``: the file's (a bag's newest file's)
  modification time;
* a regular expression searched in the absolute path: its group ``time``, else its first group,
  else the whole match, read by :func:`parse_time_text`.

**Topic**: ``--topic`` with a leading ``/`` is taken as it is; without one (default
``joint_states``) it is the bag's JointState topic named so in any namespace (``/joint_states``,
``/r07/joint_states``); more than one match is an error naming them.

A recording whose robot, time or topic cannot be told is not identified: it goes to the failures
table with the reason (:class:`Source` ``problem``), like a recording that fails to identify.
"""

from __future__ import annotations

import datetime as _dt
import glob
import math
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, List, Optional, Tuple

__all__ = ["FleetInputError", "Source", "find_recordings", "describe", "parse_time_text",
           "bag_topics", "check_patterns", "ROBOT_MODES", "TIME_MODES"]

ROBOT_MODES = ("auto", "dir")
TIME_MODES = ("auto", "bag", "mtime")
JOINT_STATE = "sensor_msgs/msg/JointState"
_GLOB = re.compile(r"[*?\[]")
# a date, then optionally a time: 2026-11-02, 2026_11_02-09_12_00 (ros2 bag record), 20261102,
# 2026-11-02T09:12:00[.123][Z|+01:00], 20261102T091200, 2026-11-02_09-12-00
_DATE_TIME = re.compile(
    r"(?<!\d)(?P<y>(?:19|20)\d\d)(?P<s1>[-_]?)(?P<mo>[01]\d)(?P=s1)(?P<d>[0-3]\d)"
    r"(?:[T_ -]?(?P<h>[0-2]\d)(?P<s2>[-_:]?)(?P<mi>[0-5]\d)(?:(?P=s2)(?P<se>[0-6]\d)"
    r"(?P<frac>\.\d+)?)?)?(?P<tz>Z|[+-]\d\d:?\d\d)?(?!\d)")


class FleetInputError(ValueError):
    """A problem with ``fric fleet``'s arguments (one line naming it)."""


@dataclass
class Source:
    """One recording: ``path`` (a bag directory or a CSV file, absolute), ``kind`` (``"bag"``
    or ``"csv"``), ``robot``, ``time`` (aware UTC datetime), ``topic`` (the bag's JointState
    topic; None for a CSV) — or ``problem``, why one of them could not be told."""

    path: Path
    kind: str
    robot: Optional[str] = None
    time: Optional[_dt.datetime] = None
    topic: Optional[str] = None
    problem: Optional[str] = None


def parse_time_text(text: str) -> _dt.datetime:
    """A date-time in a file name or a text: ISO 8601 (``2026-11-02T09:12:00``, ``Z`` or an
    offset), ros2 bag record's ``2026_11_02-09_12_00``, compact ``20261102T091200`` or
    ``20261102``, ``2026-11-02_09-12-00``, or Unix epoch seconds (``1793610720``, a fraction
    allowed).

    Parameters
    ----------
    text : str
        The text (the first date-time in it is taken).

    Returns
    -------
    datetime.datetime
        Aware, UTC (a time without an offset is taken as UTC; a date alone is midnight).

    Raises
    ------
    ValueError
        When the text holds no such date-time.
    """
    s = text.strip()
    if re.fullmatch(r"\d{9,11}(\.\d+)?", s):
        return _dt.datetime.fromtimestamp(float(s), tz=_dt.timezone.utc)
    m = _DATE_TIME.search(s)
    if not m:
        raise ValueError(f"no date-time in {text!r} (expected e.g. 2026-11-02T09:12:00, "
                         "2026_11_02-09_12_00, 20261102T091200 or epoch seconds)")
    g = m.groupdict()
    try:
        when = _dt.datetime(int(g["y"]), int(g["mo"]), int(g["d"]), int(g["h"] or 0),
                            int(g["mi"] or 0), int(g["se"] or 0),
                            int(round(float(g["frac"] or 0) * 1e6)) % 1_000_000)
    except ValueError as e:
        raise ValueError(f"{m.group(0)!r} in {text!r}: {e}") from None
    tz = _dt.timezone.utc
    if g["tz"] and g["tz"] != "Z":
        sign = 1 if g["tz"][0] == "+" else -1
        hh, mm = int(g["tz"][1:3]), int(g["tz"][-2:])
        tz = _dt.timezone(sign * _dt.timedelta(hours=hh, minutes=mm))
    return when.replace(tzinfo=tz).astimezone(_dt.timezone.utc)


def _bag_dir(path: Path) -> Optional[Path]:
    """The bag directory ``path`` is or stands for, or None."""
    if path.is_dir() and (path / "metadata.yaml").is_file():
        return path
    if path.is_file() and path.suffix in (".mcap", ".db3") \
            and (path.parent / "metadata.yaml").is_file():
        return path.parent
    return None


def _walk(folder: Path, skip: Optional[Path]) -> Iterable[Tuple[Path, str]]:
    for dirpath, dirnames, filenames in os.walk(folder):
        here = Path(dirpath)
        if skip is not None and (here == skip or skip in here.parents):
            dirnames[:] = []
            continue
        if "metadata.yaml" in filenames:
            dirnames[:] = []
            yield here, "bag"
            continue
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for f in sorted(filenames):
            if f.lower().endswith(".csv"):
                yield here / f, "csv"


def find_recordings(args: Iterable[str], skip: Optional[Path] = None) -> List[Tuple[Path, str]]:
    """The recordings named by ``args`` (module docstring), absolute, in order, once each.

    Parameters
    ----------
    args : iterable of str
        Paths, folders and globs.
    skip : pathlib.Path, optional
        A folder never searched (the output directory).

    Returns
    -------
    list of (pathlib.Path, str)
        (path, ``"bag"`` or ``"csv"``).

    Raises
    ------
    FleetInputError
        A path that does not exist or is no recording, a glob or a folder with no recording,
        or no recording at all.
    """
    skip = skip.resolve() if skip is not None else None
    out: List[Tuple[Path, str]] = []
    seen = set()

    def add(p: Path, kind: str) -> None:
        p = p.resolve()
        if p not in seen:
            seen.add(p)
            out.append((p, kind))

    for arg in args:
        paths = [Path(p) for p in sorted(glob.glob(arg, recursive=True))] \
            if _GLOB.search(arg) else [Path(arg)]
        if not paths:
            raise FleetInputError(f"{arg}: no file or folder matches")
        found = 0
        for p in paths:
            bag = _bag_dir(p)
            if bag is not None:
                add(bag, "bag")
                found += 1
            elif p.is_file() and p.suffix.lower() == ".csv":
                add(p, "csv")
                found += 1
            elif p.is_dir():
                for q, kind in _walk(p, skip):
                    add(q, kind)
                    found += 1
            elif not p.exists():
                raise FleetInputError(f"{p}: no such file or folder")
            elif not _GLOB.search(arg):
                raise FleetInputError(f"{p}: not a recording (a rosbag2 directory, a .mcap/.db3 "
                                      "file in one, a .csv file, or a folder of them)")
        if not found:
            raise FleetInputError(f"{arg}: no recording found (rosbag2 directories with "
                                  "metadata.yaml, or .csv files)")
    if not out:
        raise FleetInputError("no recording given")
    return out


def _metadata(bag: Path) -> dict:
    import yaml

    try:
        doc = yaml.safe_load((bag / "metadata.yaml").read_text(encoding="utf-8"))
        return doc["rosbag2_bagfile_information"]
    except (OSError, UnicodeDecodeError, yaml.YAMLError, KeyError, TypeError) as e:
        raise ValueError(f"{bag}/metadata.yaml: cannot be read ({type(e).__name__}: "
                         f"{' '.join(str(e).split())[:200]})") from None


def bag_topics(bag: Path) -> List[Tuple[str, str]]:
    """(name, type) of the topics ``metadata.yaml`` lists.

    Parameters
    ----------
    bag : pathlib.Path
        The bag directory.

    Returns
    -------
    list of (str, str)
        Topic names and message types.

    Raises
    ------
    ValueError
        When metadata.yaml cannot be read.
    """
    info = _metadata(bag)
    out = []
    for entry in info.get("topics_with_message_count") or []:
        meta = (entry or {}).get("topic_metadata") or {}
        if "name" in meta:
            out.append((str(meta["name"]), str(meta.get("type", ""))))
    return out


def _topic(bag: Path, topic: str) -> str:
    states = [n for n, t in bag_topics(bag) if t == JOINT_STATE]
    if topic.startswith("/"):
        if topic in states:
            return topic
        raise ValueError(f"topic {topic} not in the bag (its JointState topics: "
                         f"{', '.join(states) or 'none'})")
    cands = [n for n in states if n == "/" + topic or n.endswith("/" + topic)]
    if len(cands) == 1:
        return cands[0]
    if not cands:
        raise ValueError(f"no JointState topic named {topic} in the bag (its JointState "
                         f"topics: {', '.join(states) or 'none'}); give it with --topic")
    raise ValueError(f"several JointState topics named {topic}: {', '.join(cands)}; give one "
                     "with --topic /NAMESPACE/" + topic)


def _regex_group(rx: re.Pattern, text: str, group: str, what: str) -> str:
    m = rx.search(text)
    if not m:
        raise ValueError(f"{what} {rx.pattern!r}: no match in {text}")
    if group in rx.groupindex:
        val = m.group(group)
    elif rx.groups:
        val = m.group(1)
    else:
        val = m.group(0)
    if not val:
        raise ValueError(f"{what} {rx.pattern!r}: matched an empty text in {text}")
    return val


def _mtime(path: Path) -> _dt.datetime:
    if path.is_dir():
        stamps = [p.stat().st_mtime for p in path.iterdir() if p.is_file()]
        t = max(stamps) if stamps else path.stat().st_mtime
    else:
        t = path.stat().st_mtime
    return _dt.datetime.fromtimestamp(t, tz=_dt.timezone.utc)


def describe(path: Path, kind: str, topic: str = "joint_states", robot_from: str = "auto",
             time_from: str = "auto") -> Source:
    """The recording's robot, time and topic (module docstring); a problem is recorded in the
    returned :class:`Source`, never raised.

    Parameters
    ----------
    path : pathlib.Path
        The recording (absolute).
    kind : str
        ``"bag"`` or ``"csv"``.
    topic : str
        ``--topic``.
    robot_from : str
        ``auto``, ``dir`` or a regular expression.
    time_from : str
        ``auto``, ``bag``, ``mtime`` or a regular expression.

    Returns
    -------
    Source
        With ``robot``, ``time`` and ``topic`` set, or ``problem``.
    """
    src = Source(path=path, kind=kind)
    try:
        if kind == "bag":
            src.topic = _topic(path, topic)
        if robot_from == "auto":
            ns = src.topic.rsplit("/", 1)[0].strip("/") if src.topic else ""
            src.robot = ns or path.parent.name
        elif robot_from == "dir":
            src.robot = path.parent.name
        else:
            src.robot = _regex_group(re.compile(robot_from), str(path), "robot", "--robot-from")
        if time_from in ("auto", "bag"):
            if kind == "bag":
                ns = _metadata(path).get("starting_time", {}).get("nanoseconds_since_epoch")
                if not isinstance(ns, int) or ns <= 0:
                    raise ValueError(f"{path}/metadata.yaml: no starting_time")
                src.time = _dt.datetime.fromtimestamp(ns // 1_000_000_000,
                                                      tz=_dt.timezone.utc) \
                    + _dt.timedelta(microseconds=(ns % 1_000_000_000) // 1000)
            elif time_from == "bag":
                raise ValueError("--time-from bag: a CSV has no bag metadata")
            else:
                try:
                    src.time = parse_time_text(path.name)
                except ValueError:
                    src.time = _mtime(path)
        elif time_from == "mtime":
            src.time = _mtime(path)
        else:
            src.time = parse_time_text(_regex_group(re.compile(time_from), str(path), "time",
                                                    "--time-from"))
    except (ValueError, OSError) as e:
        src.problem = " ".join(str(e).split())
    if src.time is not None and not math.isfinite(src.time.timestamp()):
        src.problem = f"time {src.time} is not a valid time"
    return src


def check_patterns(robot_from: str, time_from: str) -> None:
    """The ``--robot-from``/``--time-from`` values compile; FleetInputError naming the option
    otherwise.

    Parameters
    ----------
    robot_from : str
        ``--robot-from``.
    time_from : str
        ``--time-from``.

    Returns
    -------
    None
    """
    for opt, val, modes in (("--robot-from", robot_from, ROBOT_MODES),
                            ("--time-from", time_from, TIME_MODES)):
        if val in modes:
            continue
        try:
            re.compile(val)
        except re.error as e:
            raise FleetInputError(f"{opt} {val!r}: not {', '.join(modes)} nor a valid "
                                  f"regular expression ({e})") from None
