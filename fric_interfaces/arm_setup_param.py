"""The ``arm_setup`` parameter shared by the arm chain's nodes (``transmission_sim``,
``trajectory_tracker``, ``friction_compensator``): see :mod:`fric_nodes.own_arm`."""

from __future__ import annotations

from .parameters import ParamSpec

__all__ = ["ARM_SETUP_SPEC"]

ARM_SETUP_SPEC = ParamSpec(
    "arm_setup", "", "derive the parameters not given (joints, start positions, PD gains, "
    "effort limits, the sinusoid) from the URDF (fric_core/arm_setup.py): 'auto' = every movable "
    "joint but mimic joints and joints too short to move, or 'a,b,...'; '' = off",
    read_only=True)
