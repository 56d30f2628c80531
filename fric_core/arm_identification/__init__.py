"""Joint friction identification for URDF arms (issue 15, step 1).

regressor: the rigid-body torque regressor (Pinocchio), its identifiable base set, and the
friction columns of paper 003's asymmetric model per joint; fit: :func:`fit_arm_friction`
(least squares, paper 003 eq. (5)). Imports Pinocchio (through the URDF wrapper) when used.
"""

from .fit import ArmFrictionFit, fit_arm_friction
from .joint_friction import (JointFriction, JointFrictionSet, read_joint_friction,
                             write_joint_friction)
from .regressor import BaseParameters, base_parameters, friction_columns, rigid_body_regressor

__all__ = ["ArmFrictionFit", "fit_arm_friction", "BaseParameters", "base_parameters",
           "friction_columns", "rigid_body_regressor", "JointFriction", "JointFrictionSet",
           "read_joint_friction", "write_joint_friction"]
