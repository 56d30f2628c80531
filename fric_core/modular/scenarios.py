"""The systems of the paper's Sec. IV, built from the components (used by the examples, the
tests and the benchmark).

* :func:`rolling_sphere` — Simulation I: a solid sphere (26) on a plane through ``I_fricKN``
  (23)/(24), wired at the lowest point a_z = [0, 0, −R] (a world-fixed offset).
* :func:`two_link` — Simulation II: the arm (8) (closed form) with ``I_fricK`` (19) at both joints,
  or LuGre (12) instead, driven by :func:`paper_torques` (28c, d).
* :func:`penalty_two_link` — Simulation III: the same mechanism from two rigid bodies and two
  penalty joints.

The paper does not give the link parameters of Fig. 5; :data:`LINKS` are thin rods chosen so that
the mechanism's elastic modes on the joint-friction springs (K = 5000 N m/rad) lie well above
the 100 rad/s excitation (see the example for the computed frequencies): near that frequency the
joint torques would be amplified beyond the breakaway level, and any friction model would slip.
"""

from __future__ import annotations

import math

import numpy as np

from .arm import PlanarTwoLink
from .bodies import RigidBody
from .conventional import LuGreImpedance
from .impedances import ExternalForce, FrictionImpedance, PenaltyFrictionContact
from .joints import AxisTorque, PenaltyJoint
from .system import CompiledSystem, ModularSystem
from .wiring import BodyFrame, BodyPoint, Coordinates, FixedFrame, Stack

__all__ = ["SPHERE", "JOINT_FRICTION", "LINKS", "PENALTY", "paper_torques", "rolling_sphere",
           "planar_arm", "two_link", "penalty_two_link", "penalty_initial_state",
           "penalty_joint_angles"]

#: Simulation I (Sec. IV-A): M, R, g, contact K, B, μ, v0, the step T = 1e-4 s.
SPHERE = dict(M=0.3, R=0.2, g=9.8, K=1e5, B=10.0, mu=0.1, v0=2.0, T=1e-4)
#: Simulation II joint friction (Sec. IV-B): K [N m/rad], B [N m s/rad], F [N m]; T = 1e-4 s.
JOINT_FRICTION = dict(K=5000.0, B=1.0, F=0.5, T=1e-4)
#: Link parameters (not in the paper): masses [kg], lengths [m], rod radius [m].
LINKS = dict(masses=(0.4, 0.2), lengths=(0.3, 0.2), radius=0.01)
#: Penalty-joint parameters of Simulation III (N/m, N s/m, N m/rad, N m s/rad).
PENALTY = dict(K_lin=1e6, B_lin=200.0, K_rot=10.0, B_rot=0.02)


def paper_torques(t: float) -> tuple[float, float]:
    """(28c, d): ``min(0.52, 0.3 t)`` for t < 4 s, then ``0.336 + 0.144 sin/cos(100 t)``."""
    if t < 4.0:
        a = min(0.52, 0.3 * t)
        return a, a
    return 0.336 + 0.144 * math.sin(100.0 * t), 0.336 + 0.144 * math.cos(100.0 * t)


def rolling_sphere(M: float = SPHERE["M"], R: float = SPHERE["R"], g: float = SPHERE["g"],
                   K: float = SPHERE["K"], B: float = SPHERE["B"],
                   mu: float = SPHERE["mu"]) -> CompiledSystem:
    """Simulation I: names ``"sphere"`` (RigidBody) and ``"contact"`` (PenaltyFrictionContact)."""
    s = ModularSystem()
    s.add_admittance("sphere", RigidBody.solid_sphere(M, R, gravity=(0.0, 0.0, -g)))
    s.add_impedance("contact", PenaltyFrictionContact(K=K, B=B, mu=mu),
                    BodyPoint("sphere", (0.0, 0.0, -R), frame="world"))
    return s.build()


def planar_arm(links: dict = LINKS) -> PlanarTwoLink:
    """The closed-form arm of rods with the given masses, lengths and radius."""
    m, L, r = links["masses"], links["lengths"], links["radius"]
    inertia = [mi * (3.0 * r * r + li * li) / 12.0 for mi, li in zip(m, L)]
    return PlanarTwoLink(masses=m, lengths=L, inertia=inertia)


def two_link(friction: str = "kikuuwe", torques=paper_torques, links: dict = LINKS,
             K: float = JOINT_FRICTION["K"], B: float = JOINT_FRICTION["B"],
             F: float = JOINT_FRICTION["F"]) -> CompiledSystem:
    """Simulation II: ``"arm"`` (PlanarTwoLink), ``"motors"``, ``"friction0"``, ``"friction1"``.

    ``friction="kikuuwe"``: ``I_fricK`` (19); ``"lugre"``: LuGre (12) with σ0 = K, σ1 = B,
    Fc = Fs = F, no viscosity (the same stiffness, damping and level).
    """
    if friction not in ("kikuuwe", "lugre"):
        raise ValueError(f"friction: expected 'kikuuwe' or 'lugre', got {friction!r}")
    s = ModularSystem()
    s.add_admittance("arm", planar_arm(links))
    s.add_impedance("motors", ExternalForce(torques, n=2), Coordinates("arm"))
    for i in (0, 1):
        imp = (FrictionImpedance(K=K, B=B, F=F) if friction == "kikuuwe"
               else LuGreImpedance(K=K, B=B, Fc=F))
        s.add_impedance(f"friction{i}", imp, Coordinates("arm", i))
    return s.build()


def penalty_two_link(torques=paper_torques, links: dict = LINKS, penalty: dict = PENALTY,
                     K: float = JOINT_FRICTION["K"], B: float = JOINT_FRICTION["B"],
                     F: float = JOINT_FRICTION["F"]) -> CompiledSystem:
    """Simulation III: rigid bodies ``"link0"``, ``"link1"`` (rods along their x axes, centre of
    mass mid-length), penalty joints ``"joint0"`` (world–link0) and ``"joint1"`` (link0 tip –
    link1 base) with ``I_fricK`` friction, actuators ``"motor0"``, ``"motor1"`` (AxisTorque)."""
    m, L, r = links["masses"], links["lengths"], links["radius"]
    s = ModularSystem()
    for i in (0, 1):
        s.add_admittance(f"link{i}", RigidBody.rod(m[i], L[i], r))
    frames = [Stack(FixedFrame(), BodyFrame("link0", (-0.5 * L[0], 0.0, 0.0))),
              Stack(BodyFrame("link0", (0.5 * L[0], 0.0, 0.0)),
                    BodyFrame("link1", (-0.5 * L[1], 0.0, 0.0)))]
    for i in (0, 1):
        s.add_impedance(f"joint{i}", PenaltyJoint(**penalty, K=K, B=B, F=F), frames[i])
        s.add_impedance(f"motor{i}", AxisTorque(lambda t, i=i: torques(t)[i]), frames[i])
    return s.build()


def penalty_initial_state(model: CompiledSystem, theta, omega=(0.0, 0.0),
                          links: dict = LINKS) -> np.ndarray:
    """x0 of :func:`penalty_two_link` with the links placed at joint angles θ, rates ω."""
    s0, s1 = planar_arm(links).link_states(theta, omega)
    return model.initial_state(link0=s0, link1=s1)


def penalty_joint_angles(model: CompiledSystem, X: np.ndarray) -> np.ndarray:
    """Joint angles (θ₀, θ₁), unwrapped over the samples, of penalty-model states X (m, n)."""
    yaw = []
    for name in ("link0", "link1"):
        q = X[:, model.slice(name)][:, 6:10]
        # rotation about z: q = [cos(a/2), 0, 0, sin(a/2)] up to tiny bending
        yaw.append(np.unwrap(2.0 * np.arctan2(q[:, 3], q[:, 0])))
    return np.stack([yaw[0], yaw[1] - yaw[0]], axis=1)
