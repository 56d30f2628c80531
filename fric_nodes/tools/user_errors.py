"""One clear line for the mistakes a user makes on the command line, instead of a traceback:

* a parameter file (``--params-file`` of a node, ``params:=`` of a launch file) that is missing or
  not valid YAML: :func:`params_file_problem` names the file, the line and the problem;
* rcl's own parse errors of ``--ros-args`` (what PyYAML accepts but rcl does not, e.g. a list
  mixing strings and numbers): :func:`ros_args_problem` shortens them to the file, line and problem;
* an output directory option (``fric identify --out``, the recorder's ``out_dir``, the demo's
  ``--out``) that points at an existing file: :func:`out_dir_problem` names the option.

No ROS imports: ``fric launch`` and ``fric identify`` use it without starting rclpy.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Iterable

__all__ = ["params_file_problem", "params_files_problem", "ros_args_problem", "out_dir_problem",
           "make_out_dir"]


def params_file_problem(path: str | os.PathLike) -> str | None:
    """Why ``path`` is not a usable ROS 2 parameter file (``file:line:column: problem``), or
    None. Checks that it exists, parses as YAML, is a mapping (node name →
    ``ros__parameters``) and has no list mixing types (rcl refuses those); anything else rcl
    refuses is reported by :func:`ros_args_problem`."""
    import yaml

    p = Path(path)
    if not p.is_file():
        return f"{path}: parameter file not found" if not p.exists() else \
            f"{path}: is not a file (a parameter file is a YAML file)"
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        return f"{path}: cannot read the parameter file: {e}"
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark is not None else str(path)
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        context = getattr(e, "context", None)
        return (f"{where}: YAML syntax error: {problem}"
                + (f" ({context})" if context else ""))
    if data is None:
        return None  # an empty file sets nothing (rcl accepts it)
    if not isinstance(data, dict):
        return (f"{path}:1: expected a mapping of node names to ros__parameters, got a "
                f"{type(data).__name__}")
    return _mixed_list(path, yaml.compose(text))


def _kind(node) -> str:
    """The ROS parameter type rcl would give a YAML scalar node."""
    import yaml
    if not isinstance(node, yaml.ScalarNode):
        return "a list" if isinstance(node, yaml.SequenceNode) else "a mapping"
    value = yaml.safe_load(yaml.serialize(node))
    return {bool: "a boolean", int: "an integer", float: "a double"}.get(type(value), "a string")


def _mixed_list(path, node) -> str | None:
    """rcl types a list by its first element and refuses any other (``[1.0, 2]`` too): the
    first such list, as ``file:line:column: problem``."""
    import yaml
    if isinstance(node, yaml.MappingNode):
        for _, v in node.value:
            problem = _mixed_list(path, v)
            if problem:
                return problem
    elif isinstance(node, yaml.SequenceNode) and node.value:
        first = _kind(node.value[0])
        for item in node.value:
            kind = _kind(item)
            if kind != first or kind in ("a list", "a mapping"):
                m = item.start_mark
                hint = (" (write every entry of a list of doubles with a decimal point: 2.0, "
                        "not 2)" if {first, kind} == {"an integer", "a double"} else "")
                return (f"{path}:{m.line + 1}:{m.column + 1}: a parameter list holds one type: "
                        f"this entry is {kind}, the first is {first}{hint}")
    return None


def _params_files(argv: Iterable[str]) -> list[str]:
    """The files given to ``--params-file`` inside ``--ros-args`` sections of ``argv``."""
    out, ros, args = [], False, list(argv)
    for i, a in enumerate(args):
        if a == "--ros-args":
            ros = True
        elif a == "--":
            ros = False
        elif ros and a == "--params-file" and i + 1 < len(args):
            out.append(args[i + 1])
    return out


def params_files_problem(argv: Iterable[str]) -> str | None:
    """:func:`params_file_problem` of the first bad ``--params-file`` in a node's arguments."""
    for f in _params_files(argv):
        problem = params_file_problem(f)
        if problem:
            return problem
    return None


_RCL_PARAMS = re.compile(r"Couldn't parse params file: '--params-file (?P<file>.*?)'\. "
                         r"Error: (?P<error>.*?)(?:,? at line_num (?P<line>\d+))?(?:, at /|$)")


def ros_args_problem(exc: BaseException) -> str:
    """rcl's ``--ros-args`` error (``RCLInvalidROSArgsError``) in one line: the parameter file,
    line and problem, without rcl's C source locations."""
    text = " ".join(str(exc).split())
    m = _RCL_PARAMS.search(text)
    if m:
        line = f":{m.group('line')}" if m.group("line") else ""
        return f"{m.group('file')}{line}: {m.group('error').rstrip('.,')}"
    return re.sub(r",? at /\S+:\d+", "", text)


def out_dir_problem(path: str | os.PathLike, option: str) -> str | None:
    """Why directory ``path`` (given as ``option``) cannot be created or written, or None.
    A missing directory is fine (it is created); an existing file in its place is not."""
    p = Path(path)
    for q in (p, *p.parents):
        if not q.exists():
            continue
        if not q.is_dir():
            if q == p:
                return (f"{option} {path}: is an existing file, not a directory (give a "
                        f"directory; it is created if missing)")
            return f"{option} {path}: {q} is an existing file, not a directory"
        if not os.access(q, os.W_OK | os.X_OK):
            return f"{option} {path}: directory {q} is not writable"
        return None
    return None


def make_out_dir(path: str | os.PathLike, option: str) -> Path:
    """Create directory ``path`` (and its parents); ``ValueError`` naming ``option`` when it
    cannot be (:func:`out_dir_problem`, or the OS's reason)."""
    problem = out_dir_problem(path, option)
    if problem:
        raise ValueError(problem)
    p = Path(path)
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ValueError(f"{option} {path}: cannot create the directory: "
                         f"{e.strerror or e}") from None
    return p
