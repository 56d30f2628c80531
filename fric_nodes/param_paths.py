"""Paths in a parameter file are relative to that file (issue 22, item 6).

A node parameter that names an input file (``ParamSpec(..., path=True)``: ``joint_friction``,
``urdf``, ``trajectory_file``) and whose value is a relative path is read relative to the
directory of the parameter file that set it, so ``config/friction_compensator.yaml`` can say
``joint_friction: planar_2link_true_friction.yaml`` and work from any directory: under
``ros2 run … --params-file``, under ``ros2 launch`` with ``<param from="$(find-pkg-share
fric)/config/…"/>`` (launch_ros passes that file itself) and under ``fric launch``/``fric run``.

A value from the command line (``-p name:=value``, a launch file's inline ``<param name value>``,
which ``ros2 launch`` writes to a temporary ``launch_params_*`` file, or an in-process
``parameter_overrides``) stays relative to the current directory, as before. A bare name without
a suffix (``planar_2link``: a bundled URDF) is left as it is.

Which source gave the value is found the way rcl applies them: the ``--ros-args`` of the
process, then the node's own ``cli_args``, each in order, the last ``--params-file`` or ``-p``
setting that parameter to that value winning; ``parameter_overrides`` win over all.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

__all__ = ["value_origin", "resolve_path_param"]

_LAUNCH_TEMP_PREFIX = "launch_params_"  # launch_ros's files for inline <param name value>


def _ros_arg_pairs(argv: Sequence[str]) -> Iterator[tuple[str, str]]:
    """``(flag, value)`` of each ``--params-file``/``-p``/``--param`` inside ``--ros-args``."""
    in_ros = False
    for i, arg in enumerate(argv):
        if arg == "--ros-args":
            in_ros = True
        elif arg == "--":
            in_ros = False
        elif in_ros and arg in ("--params-file", "-p", "--param") and i + 1 < len(argv):
            yield arg, argv[i + 1]


def _flat(params: dict, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """Nested ``ros__parameters`` as dotted names (``stage_joint.F``)."""
    for key, val in params.items():
        if isinstance(val, dict):
            yield from _flat(val, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}", val


def _file_values(path: str, name: str) -> list[Any]:
    """The values a parameter file gives ``name``, for any node it addresses."""
    import yaml

    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return []  # rcl reports an unreadable file itself, before any node starts
    found = []
    for body in (data or {}).values() if isinstance(data, dict) else ():
        params = body.get("ros__parameters") if isinstance(body, dict) else None
        if isinstance(params, dict):
            found += [v for k, v in _flat(params) if k == name]
    return found


def _rule_value(text: str) -> Any:
    """A ``-p`` value as rcl reads it (YAML)."""
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        return text


def value_origin(name: str, value: str, arg_lists: Iterable[Sequence[str]],
                 overridden: bool = False) -> Path | None:
    """The parameter file that gave parameter ``name`` its ``value``, or None (the command line).

    Parameters
    ----------
    name : str
        The parameter's name.
    value : str
        Its value as the node got it.
    arg_lists : iterable of sequences of str
        The process's arguments, then the node's ``cli_args`` (rcl's order of precedence).
    overridden : bool
        The node was given ``name`` in ``parameter_overrides`` (which win over every file).

    Returns
    -------
    pathlib.Path or None
        The file (as given on the command line), or None when the value came from a ``-p``,
        an override, or a temporary file ``ros2 launch`` wrote for inline launch parameters.
    """
    origin = None
    for argv in arg_lists:
        for flag, arg in _ros_arg_pairs(list(argv)):
            if flag == "--params-file":
                if value in _file_values(arg, name):
                    origin = Path(arg)
            else:
                key, sep, text = arg.partition(":=")
                if sep and key.rsplit(":", 1)[-1] == name and _rule_value(text) == value:
                    origin = None
    if overridden or origin is None:
        return None
    if (origin.name.startswith(_LAUNCH_TEMP_PREFIX)
            and origin.resolve().parent == Path(tempfile.gettempdir()).resolve()):
        return None
    return origin


def resolve_path_param(name: str, value: str, arg_lists: Iterable[Sequence[str]],
                       overridden: bool = False) -> str:
    """``value`` of file parameter ``name`` resolved against the parameter file that set it.

    Parameters
    ----------
    name : str
        The parameter's name (for the message).
    value : str
        Its value; empty, absolute and bare suffix-less names (``planar_2link``) come back as
        they are, and so does a value from the command line (relative to the current directory).
    arg_lists : iterable of sequences of str
        As for :func:`value_origin`.
    overridden : bool
        As for :func:`value_origin`.

    Returns
    -------
    str
        The absolute path, when the value came from a parameter file; else ``value``.

    Raises
    ------
    ValueError
        ``"<name>: <path tried> does not exist (…relative to the parameter file …)"`` when the
        resolved file is missing (one line; says so when the value names a file of the current
        directory instead).
    """
    if not value or os.path.isabs(value) or (os.sep not in value and not Path(value).suffix):
        return value
    origin = value_origin(name, value, arg_lists, overridden)
    if origin is None:
        return value
    resolved = Path(os.path.normpath(Path(os.path.abspath(origin)).parent / value))
    if not resolved.exists():
        here = Path(value).resolve()
        hint = (f"; {here} exists: give its absolute path, or a path relative to the parameter "
                "file" if here.exists() else "")
        raise ValueError(f"{name}: {resolved} does not exist ({value!r} in the parameter file "
                         f"{origin} is relative to that file's directory){hint}")
    return str(resolved)
