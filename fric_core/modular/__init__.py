"""fric_core.modular — a modular simulator integrable by RK4 with drift-free Coulomb friction.

Kikuuwe & Yamamoto, "A modular software architecture for simulating mechanical systems involving
Coulomb friction integrable by the Runge-Kutta method" (paper 001), Sec. II–IV.

Architecture (13): a system is N_A admittance components ``ẋ_j = A_j(x_j, û_j)`` (force in,
motion out) and N_I impedance components ``[w_i, ẏ_i] = I_i(x̂_i, y_i; τ)`` (motion in, force
out). Per RK4 stage r (13a–h): the stage states ``x̂`` are formed from the step-start states and
the previous stage's rates (13b, c); each impedance reads its motion ``x̂_i = Φ_i(x)`` (13d) and
returns its force and state rate with the timestep argument τ = T_r (13e, 22); the forces are
mapped back ``û = Ψ(w)`` (13f); each admittance returns its rate (13g). The step ends with the
RK4 combination (13i–l). {T_0 … T_4} = {0, T/2, T/2, T, T} (21).

Modules (one concept each):
    components    the Admittance / Impedance base classes and the sign convention
    wiring        ports: the Φ/Ψ maps (coordinates, body points and frames, arm tips through
                  their Jacobians, differences, stacks)
    system        ModularSystem (the graph, checked at build) → CompiledSystem (F(x, t; τ))
    integrators   rk4_step (21)/(22), euler_step (4), simulate
    bodies        PointMass (7), RigidBody (25)/(26) with a unit quaternion
    arm           PlanarTwoLink (closed form) and UrdfArm (Pinocchio), eq. (8)
    impedances    SpringDamper (10), FrictionImpedance I_fricK (19) with any law,
                  PenaltyFrictionContact I_fricKN (23)/(24), ExternalForce
    joints        PenaltyJoint and AxisTorque (Sec. IV-C)
    conventional  DahlImpedance (11), LuGreImpedance (12)
    scenarios     the paper's Sec. IV systems: rolling_sphere, two_link, penalty_two_link
"""

from .arm import PlanarTwoLink, UrdfArm
from .bodies import PointMass, RigidBody
from .components import Admittance, Impedance
from .conventional import DahlImpedance, LuGreImpedance
from .impedances import ExternalForce, FrictionImpedance, PenaltyFrictionContact, SpringDamper
from .integrators import RK4_STAGE_TIMES, Trajectory, euler_step, rk4_step, simulate
from .joints import AxisTorque, PenaltyJoint
from .system import CompiledSystem, ModularSystem
from .wiring import (ArmPoint, BodyFrame, BodyPoint, Coordinates, FixedFrame, FixedPoint, Port,
                     Relative, Stack)

__all__ = [
    "Admittance", "Impedance",
    "Port", "Coordinates", "BodyPoint", "BodyFrame", "ArmPoint", "FixedPoint", "FixedFrame",
    "Relative", "Stack",
    "ModularSystem", "CompiledSystem",
    "rk4_step", "euler_step", "simulate", "Trajectory", "RK4_STAGE_TIMES",
    "PointMass", "RigidBody", "PlanarTwoLink", "UrdfArm",
    "SpringDamper", "FrictionImpedance", "PenaltyFrictionContact", "ExternalForce",
    "PenaltyJoint", "AxisTorque", "DahlImpedance", "LuGreImpedance",
]
