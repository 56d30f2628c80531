"""Declarative parameter schemas: each node lists its parameters once as :class:`ParamSpec`\\ s,
and gets ROS declarations with full descriptors (description, unit, range, read-only, choices).

rclpy itself enforces the numeric ranges and read-only flags of a descriptor when a parameter is
set (``ros2 param set`` or a parameter service call), rejecting the change with a reason.
:func:`check` covers what descriptors cannot express (string choices, list lengths), for use in
a node's ``add_on_set_parameters_callback``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from rcl_interfaces.msg import (FloatingPointRange, IntegerRange, ParameterDescriptor,
                                ParameterType)
from rclpy.parameter import Parameter

__all__ = ["ParamSpec", "SCHEDULING_SPECS", "descriptor", "declare", "check"]

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
    the resulting values, after :func:`check`; raises ``ValueError`` naming the first bad one."""
    values = {}
    for spec in specs:
        if isinstance(spec.default, (list, tuple)) and not spec.default:
            # an empty default would make rclpy infer BYTE_ARRAY: declare the type instead
            p = node.declare_parameter(spec.name, Parameter.Type(spec.type), descriptor(spec))
            value = p.value if p.value is not None else []
        else:
            value = node.declare_parameter(spec.name, spec.default, descriptor(spec)).value
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
    vals: Sequence = value if isinstance(value, (list, tuple)) else [value]
    for v in vals:
        if isinstance(v, float) and not math.isfinite(v):
            return f"{v!r} is not finite"
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            if spec.min is not None and v < spec.min:
                return f"{v!r} is below the minimum {spec.min:g}"
            if spec.max is not None and v > spec.max:
                return f"{v!r} is above the maximum {spec.max:g}"
    return None
