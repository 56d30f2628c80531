"""The parameter schema (:class:`~fric_interfaces.parameters.ParamSpec`) of each fric executable,
for checking a launch file's ``-p name:=value`` before any node starts (issue 22, item 7), and the
ROS parameter type rcl gives such a value.

A node module is imported only when a launch file starts that node (the compensator's, tracker's
and recorder's schemas live in their node modules, the others in :mod:`fric_interfaces`).
"""

from __future__ import annotations

import functools
import importlib
from typing import Any

from fric_interfaces.parameters import ParamSpec

__all__ = ["param_spec", "yaml_parameter"]

# executable -> the schemas its process declares, as (module, attribute) pairs; haptic_loop runs
# the renderer and the stage in one process (a -p rule reaches both)
_SCHEMAS: dict[str, tuple[tuple[str, str], ...]] = {
    "friction_renderer": (("fric_interfaces.renderer_params", "GLOBAL_SPECS"),
                          ("fric_interfaces.planar_params", "PLANAR_SPECS")),
    "haptic_stage": (("fric_interfaces.stage_params", "SPECS"),),
    "friction_identifier": (("fric_interfaces.identifier_params", "SPECS"),
                            ("fric_interfaces.identifier_params", "RESULT_SPECS")),
    "transmission_sim": (("fric_interfaces.transmission_params", "SPECS"),),
    "mujoco_sim": (("fric_interfaces.mujoco_params", "SPECS"),),
    "friction_compensator": (("fric_nodes.friction_compensator", "SPECS"),),
    "trajectory_tracker": (("fric_nodes.trajectory_tracker", "SPECS"),),
    "fric_recorder": (("fric_nodes.recorder", "PARAMS"),),
}
_SCHEMAS["haptic_loop"] = _SCHEMAS["friction_renderer"] + _SCHEMAS["haptic_stage"]
_RENDERERS = ("friction_renderer", "haptic_loop")  # per-joint '<joint>.<key>' parameters too


@functools.cache
def _specs(executable: str) -> dict[str, ParamSpec]:
    specs: dict[str, ParamSpec] = {}
    for module, attr in _SCHEMAS.get(executable, ()):
        for spec in getattr(importlib.import_module(module), attr):
            specs.setdefault(spec.name, spec)
    return specs


def param_spec(executable: str, name: str) -> ParamSpec | None:
    """The schema of parameter ``name`` of fric executable ``executable`` (a base name).

    Parameters
    ----------
    executable : str
        ``friction_renderer``, ``haptic_stage``, … (``setup.py``'s console scripts).
    name : str
        The parameter (``dt``, ``stage_joint.F``).

    Returns
    -------
    ParamSpec or None
        None for another package's executable or a name the node does not declare (the node
        itself reports unused parameters).
    """
    spec = _specs(executable).get(name)
    if spec is None and executable in _RENDERERS and "." in name:
        from fric_interfaces.renderer_params import joint_specs

        joint = name.rsplit(".", 1)[0]
        spec = next((s for s in joint_specs(joint) if s.name == name), None)
    return spec


def yaml_parameter(text: str) -> tuple[Any, int] | None:
    """``(value, ParameterType)`` that rcl gives the ``-p`` value ``text`` (read as YAML: ``5``
    an integer, ``5.0`` a double, ``true`` a boolean, ``'5'`` a string, ``[1.0, 2.0]`` a list of
    doubles), or None when it is not a value this check types (empty, null, a mapping, an empty
    or mixed list: rcl decides those).

    Parameters
    ----------
    text : str
        The text after ``:=``.

    Returns
    -------
    tuple or None
        The value and its ``rcl_interfaces/msg/ParameterType`` constant.
    """
    import yaml
    from rcl_interfaces.msg import ParameterType as T

    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError:
        return None
    scalar = {bool: T.PARAMETER_BOOL, int: T.PARAMETER_INTEGER, float: T.PARAMETER_DOUBLE,
              str: T.PARAMETER_STRING}
    if type(value) in scalar:
        return value, scalar[type(value)]
    if isinstance(value, list) and value and len({type(v) for v in value}) == 1:
        arrays = {bool: T.PARAMETER_BOOL_ARRAY, int: T.PARAMETER_INTEGER_ARRAY,
                  float: T.PARAMETER_DOUBLE_ARRAY, str: T.PARAMETER_STRING_ARRAY}
        kind = arrays.get(type(value[0]))
        return (value, kind) if kind is not None else None
    return None
