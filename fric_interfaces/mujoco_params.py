"""Parameters of the ``mujoco_sim`` node: an arm simulated by MuJoCo (an MJCF file, or a URDF
compiled by MuJoCo) with the joint friction of a ``joint_friction.yaml`` solved exactly by
:class:`fric_core.mujoco.FrictionStepper`. Where a parameter means what it means for
``transmission_sim`` it is the same :class:`~fric_interfaces.parameters.ParamSpec`
(:mod:`fric_interfaces.transmission_params`).

Parameters (``ros__parameters``; see config/arm_friction_*.yaml, section ``mujoco_sim``)::

    mjcf               string    MuJoCo MJCF file; non-empty wins over urdf and robot_description
    urdf, robot_description      the URDF (path or bundled name, or its text) MuJoCo compiles
    joint_names        string[]  simulated (commanded, published) joints in command order; [] =
                                 every hinge and slide joint; the model's other hinge and slide
                                 joints are welded where the model puts them at 0
    ee_frame           string    body marking the end effector (markers); "" = the last body
    rotor_inertia      double[]  the joints' armature (rotor inertia referred to the joint)
                                 [kg m²]; [] = the model's
    damping            double[]  the joints' damping [N m s/rad]; [] = the model's
    joint_friction     string    joint_friction.yaml: those joints' friction (and gear
                                 efficiencies) solved by FrictionStepper; "" = MuJoCo's own
    integrator         string    euler | implicitfast (MuJoCo's Euler or implicitfast)
    gravity, initial_positions, enforce_joint_limits, hold_until_command,
    default_effort_limit, default_velocity_limit, rate (1/timestep), sync, duration,
    command_timeout, marker_frame, marker_rate, diagnostics_period, arm_setup, and the topics of
    fric_interfaces.topic_based.SIM_TOPIC_SPECS       as transmission_sim's
"""

from __future__ import annotations

from .parameters import ParamSpec
from .topic_based import SIM_TOPIC_SPECS
from .transmission_params import SPECS as _TRANSMISSION_SPECS

__all__ = ["INTEGRATORS", "SPECS"]

#: the integrators :class:`fric_core.mujoco.FrictionStepper` reproduces, as parameter values
INTEGRATORS = ("euler", "implicitfast")

_SAME = {s.name: s for s in _TRANSMISSION_SPECS}

SPECS = (
    ParamSpec("mjcf", "", "MuJoCo MJCF file of the arm; non-empty wins over urdf and "
              "robot_description ('' = the URDF, compiled by MuJoCo)", read_only=True,
              path=True),
    *(_SAME[n] for n in ("urdf", "robot_description")),
    ParamSpec("joint_names", [], "simulated joints in command order ([] = every hinge and slide "
              "joint; the model's other hinge and slide joints are welded at 0)",
              read_only=True, list_of=str),
    ParamSpec("ee_frame", "", "body of the end effector (markers); '' = the model's last body",
              read_only=True),
    ParamSpec("rotor_inertia", [], "the joints' armature: input-side inertia referred to the "
              "joint, one value or one per joint ([] = the model's)", unit="kg m^2", min=0.0,
              read_only=True, list_of=float),
    ParamSpec("damping", [], "the joints' viscosity, one value or one per joint ([] = the "
              "model's)", unit="N m s/rad", min=0.0, read_only=True, list_of=float),
    _SAME["joint_friction"],
    ParamSpec("integrator", "implicitfast", "MuJoCo's integrator (the ones FrictionStepper "
              "reproduces)", read_only=True, choices=INTEGRATORS),
    *(_SAME[n] for n in ("gravity", "initial_positions", "enforce_joint_limits",
                         "default_effort_limit", "default_velocity_limit", "hold_until_command",
                         "rate", "sync", "duration", "command_timeout", "marker_frame",
                         "marker_rate", "diagnostics_period", "arm_setup")),
) + SIM_TOPIC_SPECS
