"""Declarative parameter schemas: each node lists its parameters once as :class:`ParamSpec`\\ s,
and gets ROS declarations with full descriptors (description, unit, range, read-only, choices).

rclpy itself enforces the numeric ranges and read-only flags of a descriptor when a parameter is
set (``ros2 param set``, ``fric param set`` or a parameter service call), rejecting the change with
a reason. :func:`check` covers what descriptors cannot express (string choices, list lengths), for
use in a node's ``add_on_set_parameters_callback``.

Rejections are worded for people: rclpy's own reasons print the parameter type enums as numbers
("Wrong parameter type, expected '3' got '4'") and its undeclared-parameter error lists an
exhausted generator ("undeclared parameter(s): []"). :func:`declare` therefore installs
:func:`readable_rejections` on the node, which rewords every rejection of a live change (type,
range, read-only, unknown name: "F: expected a double, got a string ('abc')") and accepts an
empty list for a list parameter whatever element type the sender guessed (``ros2 param set N P
"[]"`` sends a bool array); at start-up :func:`declare` raises ``ValueError`` with the same words
("F: expected a double (write 4.0), got an integer (4)").

The schemas, :func:`check` and the wording import without rclpy (fric_core, tools and tests use
them); rclpy is imported by :func:`declare` and :func:`readable_rejections`, which act on a node.
"""

from __future__ import annotations

import array
import difflib
import functools
import math
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from rcl_interfaces.msg import (FloatingPointRange, IntegerRange, ParameterDescriptor,
                                ParameterType)

__all__ = ["ParamSpec", "SCHEDULING_SPECS", "LIFECYCLE_SPECS", "descriptor", "declare", "check",
           "frame_id_problem", "type_words", "rejection_reason", "readable_rejections"]

_TYPES = {
    bool: ParameterType.PARAMETER_BOOL,
    int: ParameterType.PARAMETER_INTEGER,
    float: ParameterType.PARAMETER_DOUBLE,
    str: ParameterType.PARAMETER_STRING,
}


@dataclass(frozen=True)
class ParamSpec:
    """One parameter: name, default (its type is the parameter's type), and constraints."""

    name: str
    default: Any
    description: str
    unit: str = ""
    min: float | None = None
    max: float | None = None
    read_only: bool = False
    choices: tuple[str, ...] | None = None
    #: element type of a list parameter ([] defaults cannot show it): float, str or int
    list_of: type | None = None
    #: a string that names a TF frame (``header.frame_id``): checked by :func:`frame_id_problem`
    frame_id: bool = False
    #: the number of elements a list parameter must have (None: any)
    length: int | None = None
    #: a string naming an input file: a relative value from a parameter file is read relative to
    #: that file (``fric_nodes.param_paths``; from the command line: the current directory)
    path: bool = False

    @property
    def type(self) -> int:
        if isinstance(self.default, (list, tuple)):
            elem = self.list_of or (type(self.default[0]) if self.default else None)
            return {float: ParameterType.PARAMETER_DOUBLE_ARRAY,
                    int: ParameterType.PARAMETER_INTEGER_ARRAY,
                    str: ParameterType.PARAMETER_STRING_ARRAY,
                    bool: ParameterType.PARAMETER_BOOL_ARRAY}[elem]
        return _TYPES[type(self.default)]


#: Real-time scheduling of a node's process, as ros2_control's controller_manager names them;
#: applied at start-up by ``fric_nodes.scheduling.apply_scheduling``.
SCHEDULING_SPECS = (
    ParamSpec("thread_priority", 0, "SCHED_FIFO priority of every thread of the node's process "
              "(1-99; 0 keeps normal scheduling). Needs CAP_SYS_NICE; without it the node warns "
              "and runs with normal scheduling", min=0, max=99, read_only=True),
    ParamSpec("cpu_affinity", [], "CPUs the node's process runs on (empty: all), e.g. [1] "
              "to keep the servo loop off the CPU that handles other work", min=0,
              read_only=True, list_of=int),
)


def descriptor(spec: ParamSpec) -> ParameterDescriptor:
    """The ROS descriptor of ``spec`` (ranges as FloatingPointRange/IntegerRange)."""
    text = spec.description + (f" [{spec.unit}]" if spec.unit else "")
    constraints = []
    if spec.choices:
        constraints.append("one of: " + ", ".join(spec.choices))
    d = ParameterDescriptor(name=spec.name, type=spec.type, description=text,
                            read_only=spec.read_only,
                            additional_constraints="; ".join(constraints))
    if spec.min is not None or spec.max is not None:
        if spec.type == ParameterType.PARAMETER_INTEGER:
            d.integer_range = [IntegerRange(from_value=int(spec.min if spec.min is not None
                                                           else -2**63),
                                            to_value=int(spec.max if spec.max is not None
                                                         else 2**63 - 1), step=0)]
        elif spec.type == ParameterType.PARAMETER_DOUBLE:
            d.floating_point_range = [FloatingPointRange(
                from_value=float(spec.min if spec.min is not None else -math.inf),
                to_value=float(spec.max if spec.max is not None else math.inf), step=0.0)]
    return d


def declare(node, specs: Iterable[ParamSpec]) -> dict[str, Any]:
    """Declare every spec on ``node`` (values from YAML/launch override the defaults) and return
    the resulting values, after :func:`check`; raises ``ValueError`` naming the first bad one in
    words (:func:`rejection_reason`). Installs :func:`readable_rejections` on ``node``."""
    from rclpy.exceptions import (InvalidParameterTypeException, InvalidParameterValueException,
                                  ParameterException)
    from rclpy.parameter import Parameter

    readable_rejections(node)
    values = {}
    for spec in specs:
        try:
            if isinstance(spec.default, (list, tuple)) and not spec.default:
                # an empty default would make rclpy infer BYTE_ARRAY: declare the type instead
                p = node.declare_parameter(spec.name, Parameter.Type(spec.type), descriptor(spec))
                value = p.value if p.value is not None else []
            else:
                value = node.declare_parameter(spec.name, spec.default, descriptor(spec)).value
        except (InvalidParameterTypeException, InvalidParameterValueException) as e:
            given = (getattr(node, "_parameter_overrides", None) or {}).get(spec.name)
            reason = None if given is None else rejection_reason(
                spec.name, given.value, given.type_, descriptor(spec), check_read_only=False)
            raise ValueError(reason or f"{spec.name}: {e}") from None
        except ParameterException as e:
            raise ValueError(f"{spec.name}: {e}") from None
        values[spec.name] = value
        reason = check(spec, value)
        if reason:
            raise ValueError(f"{spec.name}: {reason}")
    return values


def check(spec: ParamSpec, value: Any) -> str | None:
    """Why ``value`` is not acceptable for ``spec`` (None if it is). Covers ranges too, so it
    also guards values given at start-up (rclpy checks ranges only on later changes)."""
    if spec.choices is not None and value not in spec.choices:
        return f"{value!r} is not one of {list(spec.choices)}"
    if spec.frame_id:
        return frame_id_problem(value)
    if spec.length is not None and len(value) != spec.length:
        return f"has {len(value)} elements, needs {spec.length}"
    vals: Sequence = (value if isinstance(value, (list, tuple, array.array)) else [value])
    for v in vals:
        if isinstance(v, float) and not math.isfinite(v):
            return f"{v!r} is not finite"
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            if spec.min is not None and v < spec.min:
                return f"{v!r} is below the minimum {spec.min:g}"
            if spec.max is not None and v > spec.max:
                return f"{v!r} is above the maximum {spec.max:g}"
    return None


def frame_id_problem(value: Any) -> str | None:
    """Why ``value`` cannot be a TF frame id (None if it can): tf2 and RViz refuse an empty id
    and one with a leading slash (a ROS 1 habit: RViz drops such markers with "frame_id should
    not start with a /"); whitespace and other punctuation make ids no tool can type."""
    if not isinstance(value, str) or not value:
        return "an empty frame id (RViz cannot place the markers; e.g. 'world')"
    if value.startswith("/"):
        return (f"{value!r} starts with '/': tf2 frame ids have no leading slash "
                f"(write {value.lstrip('/')!r})")
    bad = sorted({c for c in value if not (c.isalnum() or c in "_/-.")})
    if bad:
        return f"{value!r} contains {''.join(bad)!r}: frame ids are letters, digits and _ / - ."
    return None


# -- rejections in words ---------------------------------------------------------------------------
_TYPE_WORDS = {
    ParameterType.PARAMETER_NOT_SET: "no value",
    ParameterType.PARAMETER_BOOL: "a boolean (true or false)",
    ParameterType.PARAMETER_INTEGER: "an integer",
    ParameterType.PARAMETER_DOUBLE: "a double",
    ParameterType.PARAMETER_STRING: "a string",
    ParameterType.PARAMETER_BYTE_ARRAY: "a list of bytes",
    ParameterType.PARAMETER_BOOL_ARRAY: "a list of booleans",
    ParameterType.PARAMETER_INTEGER_ARRAY: "a list of integers",
    ParameterType.PARAMETER_DOUBLE_ARRAY: "a list of doubles",
    ParameterType.PARAMETER_STRING_ARRAY: "a list of strings",
}
_ARRAYS = (ParameterType.PARAMETER_BYTE_ARRAY, ParameterType.PARAMETER_BOOL_ARRAY,
           ParameterType.PARAMETER_INTEGER_ARRAY, ParameterType.PARAMETER_DOUBLE_ARRAY,
           ParameterType.PARAMETER_STRING_ARRAY)


def type_words(ptype: int) -> str:
    """A parameter type in words: ``a double``, ``a list of strings``, … (not its enum number)."""
    return _TYPE_WORDS.get(int(ptype), f"parameter type {int(ptype)}")


def _show(value: Any) -> str:
    if isinstance(value, (str, bytes)) or not hasattr(value, "__len__"):
        text = repr(value)
    else:  # list, tuple, array.array
        text = repr(list(value))
    return text if len(text) <= 60 else text[:57] + "..."


def _given(value: Any, ptype: int) -> str:
    """What was sent: ``a string ('abc')``, ``an integer (4)``, ``an empty list``."""
    if int(ptype) in _ARRAYS and value is not None and len(value) == 0:
        return "an empty list"
    if int(ptype) == ParameterType.PARAMETER_NOT_SET:
        return "no value (an unset parameter)"
    return f"{type_words(ptype)} ({_show(value)})"


def _write_hint(value: Any, given: int, expected: int) -> str:
    """How to write an integer where a double is expected: YAML and the CLIs read ``4`` as an
    integer, ``4.0`` as a double."""
    if given == ParameterType.PARAMETER_INTEGER and expected == ParameterType.PARAMETER_DOUBLE:
        return f" (write {float(value)!r})"
    if (given == ParameterType.PARAMETER_INTEGER_ARRAY
            and expected == ParameterType.PARAMETER_DOUBLE_ARRAY and len(value)):
        return f" (write {_show([float(v) for v in value])})"
    return ""


def rejection_reason(name: str, value: Any, ptype: int, desc: ParameterDescriptor,
                     check_read_only: bool = True) -> str | None:
    """Why setting parameter ``name`` (declared with ``desc``) to ``value`` of type ``ptype`` is
    rejected by the descriptor, in words, or None if the descriptor accepts it. The checks and
    their order are rclpy's (``Node._apply_descriptor``): read-only, unset, type, range."""
    ptype = int(ptype)
    if check_read_only and desc.read_only:
        return (f"{name}: read-only: it is set at start-up (parameter file or launch argument) "
                f"and cannot be changed while the node runs")
    if desc.dynamic_typing:
        return None
    if ptype == ParameterType.PARAMETER_NOT_SET:
        return f"{name}: cannot be unset: give it a value ({type_words(desc.type)})"
    if ptype != desc.type:
        return (f"{name}: expected {type_words(desc.type)}{_write_hint(value, ptype, desc.type)}, "
                f"got {_given(value, ptype)}")
    ranges = (desc.integer_range if ptype == ParameterType.PARAMETER_INTEGER else
              desc.floating_point_range if ptype == ParameterType.PARAMETER_DOUBLE else ())
    if ranges:
        r = ranges[0]
        lo, hi = min(r.from_value, r.to_value), max(r.from_value, r.to_value)
        close = (lambda a, b: a == b) if ptype == ParameterType.PARAMETER_INTEGER else \
            (lambda a, b: math.isclose(a, b, rel_tol=1e-6))
        if close(value, lo) or close(value, hi):
            return None
        if not value > lo:
            return f"{name}: {value!r} is below the minimum {lo:g}"
        if not value < hi:
            return f"{name}: {value!r} is above the maximum {hi:g}"
        if r.step:
            return f"{name}: {value!r} is not on the grid {lo:g} + k * {r.step:g}"
    return None


@functools.cache
def _unknown_parameter_class() -> type:
    """:class:`UnknownParameter`, made on first use (it derives from an rclpy exception)."""
    from rclpy.exceptions import ParameterNotDeclaredException

    class UnknownParameter(ParameterNotDeclaredException):
        """A set request for names the node does not have; its text names them (rclpy's lists
        an exhausted generator: "undeclared parameter(s): []") and the closest declared names."""

        def __init__(self, node_name: str, names: list[str], known: Iterable[str]):
            super().__init__(names)
            known = list(known)
            parts = []
            for n in names:
                close = difflib.get_close_matches(n, known, n=3, cutoff=0.6)
                parts.append(n + (f" (did you mean {' or '.join(close)}?)" if close else ""))
            self.text = (f"{', '.join(parts)}: no such parameter on {node_name} "
                         f"(list them with: fric param list {node_name})")

        def __str__(self) -> str:
            return self.text

    UnknownParameter.__module__ = __name__
    return UnknownParameter


def __getattr__(name: str):
    if name == "UnknownParameter":  # without rclpy at import: the class is made when asked for
        return _unknown_parameter_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def readable_rejections(node) -> None:
    """Make the parameter rejections of ``node`` readable (once per node; see the module
    docstring). Wraps rclpy's descriptor check and undeclared-name check of this node instance
    only: rclpy keeps deciding what is accepted, with the same checks; only the reason text is
    replaced (:func:`rejection_reason`) for live changes. Declaration-time failures are
    worded by :func:`declare`. An empty list sent for a list parameter is converted to the
    declared list type (a pre-set callback), since ``[]`` carries no element type."""
    from rclpy.parameter import Parameter

    if getattr(node, "_fric_readable_rejections", False):
        return
    node._fric_readable_rejections = True
    apply_descriptor = getattr(node, "_apply_descriptor", None)
    if apply_descriptor is not None:
        def _apply_descriptor(parameter, descriptor=None, check_read_only=True):
            result = apply_descriptor(parameter, descriptor, check_read_only)
            # at declaration (check_read_only False) rclpy picks its exception type from its own
            # reason text; declare() words those itself
            if not result.successful and check_read_only:
                d = descriptor if descriptor is not None else node.describe_parameter(
                    parameter.name)
                reason = rejection_reason(parameter.name, parameter.value, parameter.type_, d)
                if reason:
                    result.reason = reason
            return result
        node._apply_descriptor = _apply_descriptor

    if hasattr(node, "_check_undeclared_parameters"):
        def _check_undeclared_parameters(parameter_list):
            if not all(isinstance(p, Parameter) for p in parameter_list):
                raise TypeError(f"parameter must be instance of type '{Parameter!r}'")
            missing = [p.name for p in parameter_list if not node.has_parameter(p.name)]
            if missing and not getattr(node, "_allow_undeclared_parameters", False):
                raise _unknown_parameter_class()(node.get_fully_qualified_name(), missing,
                                                 node._parameters.keys())
        node._check_undeclared_parameters = _check_undeclared_parameters

    def _empty_lists(parameter_list):
        out = []
        for p in parameter_list:
            if (p.type_.value in _ARRAYS and len(p.value) == 0 and node.has_parameter(p.name)):
                want = node.describe_parameter(p.name).type
                if want in _ARRAYS and want != p.type_.value:
                    p = Parameter(p.name, Parameter.Type(want), [])
            out.append(p)
        return out
    if hasattr(node, "add_pre_set_parameters_callback"):
        node.add_pre_set_parameters_callback(_empty_lists)


#: Managed (lifecycle) nodes (``fric_nodes._lifecycle.ManagedNode``): whether the node drives
#: itself to ``active`` at start-up.
LIFECYCLE_SPECS = (
    ParamSpec("autostart", True, "managed (lifecycle) node: true configures and activates it at "
              "start-up (what an unmanaged node does); false: it starts unconfigured, commands "
              "nothing and waits for `ros2 lifecycle set <node> configure` then `activate`",
              read_only=True),
)
