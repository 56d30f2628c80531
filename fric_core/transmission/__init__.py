"""Paper 004 (Kikuuwe 2022): gear transmissions with asymmetric load-dependent friction.

dai: the 1-DOF DAI (14), efficiencies (26)/(27), algorithm (44); gear_geometry: γ_u, γ_v of real
gears (Sec. 3.2–3.4); projection: axproj (67); geared_arm: algorithm (69); urdf_dynamics: M(q),
h(q, q̇), J(q) by Pinocchio (imported only when used); joint_bounds: the effort and speed limits
and the angle wrap that keep a simulated arm bounded.
"""

from . import gear_geometry
from .dai import (IllPosedWarning, Transmission, TransmissionState, asymmetry_from_efficiencies,
                  efficiencies, friction_phi, internal_force, internal_force_s, rho_hat)
from .projection import AxprojSolver, axproj, axproj_projection

__all__ = ["Transmission", "TransmissionState", "IllPosedWarning", "efficiencies",
           "asymmetry_from_efficiencies", "internal_force", "internal_force_s", "friction_phi",
           "rho_hat", "axproj", "AxprojSolver", "axproj_projection", "gear_geometry"]
