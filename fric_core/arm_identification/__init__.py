"""Joint friction of URDF arms: identification from recordings (issue 15).

* :mod:`.regressor` — Pinocchio's torque regressor reduced to an identifiable base set (rotor
  inertias merged where motion cannot separate them), paper 003's asymmetric friction columns;
* :mod:`.fit` — :func:`fit_arm_friction`: least squares (paper 003 eq. (5)) or errors in variables
  (eq. (6)), asymmetric law or the load-dependent gear law (paper 004's efficiencies (27)), over
  :mod:`.normal_equations` (chunked moments, EIV corrections, Gauss–Newton) into :mod:`.result`;
* :mod:`.rigid_body` — the identified base parameters as a ``rigid_body:`` section and the gravity
  torque they give (:class:`IdentifiedGravity`);
* :mod:`.signals` — gaps → segments, zero-phase derivatives and their noise variances;
* :mod:`.recording` — JointState bags (sqlite3, MCAP) and CSV in and out;
* :mod:`.excitation` — band-limited Fourier excitation optimised for the design's condition;
* :mod:`.conditioning` — that condition number, one function for ``fric excite`` (which
  minimises it) and ``fric identify`` (which reports it on the recording);
* :mod:`.joint_friction` — ``joint_friction.yaml``, the file compensator and simulator load;
* :mod:`.report` — figures and ``report.md``; :mod:`.synthetic` — simulated recordings;
  :mod:`.realistic` — simulated recordings shaped like real arms' logs (a foreign friction law,
  effort offsets, motor currents, a lagging velocity, messy stamps).

Imports Pinocchio (through the URDF wrapper) when used.
"""

from .excitation import (ExcitationTrajectory, design_condition, generate_excitation,
                         read_excitation_csv, trajectory_message, write_excitation_csv,
                         write_trajectory_bag, write_trajectory_yaml)
from .fit import COND_LIMIT, COND_WARN, REL_STD_WARN, ArmFrictionFit, fit_arm_friction
from ..joint_friction import (JointFriction, JointFrictionSet, parse_joint_friction,
                             read_joint_friction, write_joint_friction)
from .recording import ArmRecording, read_arm_recording, write_arm_bag, write_arm_csv
from .regressor import (BaseParameters, base_parameters, friction_columns, rigid_body_regressor,
                        separable_armature)
from .rigid_body import IdentifiedGravity, RigidBody, identified_gravity, parse_rigid_body
from .report import ArmReport, holdout_rms, write_arm_report
from .signals import (Derivatives, PreparedData, derivative_filter, differentiate,
                      position_noise_variance, prepare, segments)
from .synthetic import SimulatedRecording, multisine_trajectory, simulate_arm_recording
from .realistic import (RealisticRecording, RealisticTruth, SigmoidFriction, realistic_recording,
                        write_realistic)

__all__ = [
    "ArmFrictionFit", "fit_arm_friction", "COND_LIMIT", "COND_WARN", "REL_STD_WARN",
    "BaseParameters", "base_parameters", "friction_columns", "rigid_body_regressor",
    "separable_armature",
    "JointFriction", "JointFrictionSet", "parse_joint_friction", "read_joint_friction",
    "write_joint_friction",
    "ArmRecording", "read_arm_recording", "write_arm_bag", "write_arm_csv",
    "Derivatives", "PreparedData", "derivative_filter", "differentiate",
    "position_noise_variance", "prepare", "segments",
    "ExcitationTrajectory", "design_condition", "generate_excitation", "read_excitation_csv",
    "trajectory_message", "write_excitation_csv", "write_trajectory_bag", "write_trajectory_yaml",
    "ArmReport", "holdout_rms", "write_arm_report",
    "IdentifiedGravity", "RigidBody", "identified_gravity", "parse_rigid_body",
    "SimulatedRecording", "multisine_trajectory", "simulate_arm_recording",
    "RealisticRecording", "RealisticTruth", "SigmoidFriction", "realistic_recording",
    "write_realistic",
]
