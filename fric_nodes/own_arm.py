"""The ``arm_setup`` parameter of the arm chain's nodes (``transmission_sim``,
``trajectory_tracker``, ``friction_compensator``): a user's own URDF without hand-written files.

``launch/arm_friction.launch.xml urdf:=PATH`` sets ``arm_setup: auto`` (or the joints of
``joints:=a,b,...``): every parameter :func:`fric_core.arm_setup.arm_setup` derives (joints,
start positions, PD gains, effort limits, the sinusoid; the rules are in that module) that the
parameter file or command line does not give becomes a parameter override before the node
declares its parameters, so ``fric param get`` / ``ros2 param get`` show the values in use, and
the node logs what it derived. ``fric arm-params --urdf PATH`` writes the same values to a file.
"""

from __future__ import annotations

from typing import Iterable

from fric_interfaces.arm_setup_param import ARM_SETUP_SPEC
from fric_interfaces.parameters import ParamSpec

from ._node_util import declare_params, unused_overrides

__all__ = ["ARM_SETUP_SPEC", "DERIVED", "arm_setup_overrides", "declare_arm_node_params"]

#: the parameters that depend on the URDF (the rest of ``ArmSetup.node_parameters`` is the
#: parameter file's business)
DERIVED = ("joint_names", "joints", "initial_positions", "kp", "kd", "max_effort", "sine_center",
           "sine_amplitude", "sine_frequency", "rotor_inertia")
#: each node's joint-list parameter
_JOINTS = {"transmission_sim": "joint_names", "mujoco_sim": "joint_names",
           "trajectory_tracker": "joints",
           "friction_compensator": "joints"}


def arm_setup_overrides(node, key: str) -> list[str]:
    """Add node ``key``'s URDF-derived parameters to ``node``'s parameter overrides where it was
    not given them (call before declaring); returns the lines to log (none: ``arm_setup`` off).

    Raises ``ValueError`` naming ``arm_setup`` (an unknown or mimic joint, a URDF it cannot
    use)."""
    from rclpy.parameter import Parameter

    from fric_core.arm_setup import arm_setup

    ov = getattr(node, "_parameter_overrides", None)
    if ov is None:
        return []

    def given(name: str, default=None):
        p = ov.get(name)
        return default if p is None else p.value

    choice = given("arm_setup", "")
    if not isinstance(choice, str) or not choice.strip():
        return []
    choice = choice.strip()
    jkey = _JOINTS[key]
    listed = given(jkey)
    listed = [str(j) for j in listed] if isinstance(listed, (list, tuple)) and listed else None
    if choice == "auto":
        joints = listed
    else:
        joints = [s.strip() for s in choice.split(",") if s.strip()]
        if listed is not None and listed != joints:
            raise ValueError(f"arm_setup: joints {joints} differ from {jkey} {listed}; give one "
                             "of them")
    xml = given("robot_description", "") or None
    urdf = given("urdf", "")
    if not (isinstance(urdf, str) and urdf) and not xml:
        raise ValueError("arm_setup: needs urdf (or robot_description)")
    try:
        setup = arm_setup(urdf if isinstance(urdf, str) else "", joints,
                          xml=xml if isinstance(xml, str) else None)
    except ValueError as e:
        raise ValueError(f"arm_setup: {' '.join(str(e).split())}") from None
    used = []
    for name, value in setup.node_parameters()[key].items():
        if name in DERIVED and name not in ov:
            ov[name] = Parameter(name, value=value)
            used.append(name)
    return [f"arm_setup: from {setup.urdf}: {', '.join(used) or 'nothing (all given)'}"] \
        + setup.summary()[1:]


def declare_arm_node_params(node, key: str, specs: Iterable[ParamSpec]) -> dict:
    """The parameters of arm-chain node ``key`` (its name): what ``arm_setup`` derives added
    (:func:`arm_setup_overrides`), ``specs`` declared (:func:`._node_util.declare_params`), a
    given parameter the node does not declare refused (``ValueError`` naming it) and the derived
    values logged. Returns the values."""
    specs = tuple(specs)
    derived = arm_setup_overrides(node, key)
    values = declare_params(node, specs)
    typos = unused_overrides(node, [s.name for s in specs])
    if typos:
        raise ValueError(f"{typos[0]}: not a parameter of {key}")
    for line in derived:
        node.get_logger().info(line)
    return values
