"""The systems of the paper's Sec. IV, built from the components (used by the examples, the
tests and the benchmark).

* :func:`rolling_sphere` — Simulation I: a solid sphere (26) on a plane through ``I_fricKN``
  (23)/(24), wired at the lowest point a_z = [0, 0, −R] (a world-fixed offset).
* :func:`two_link` — Simulation II: the arm (8) (closed form) with ``I_fricK`` (19) at both joints,
  or LuGre (12) instead, driven by :func:`paper_torques` (28c, d).
* :func:`penalty_two_link` — Simulation III: the same mechanism from two rigid bodies and two
  penalty joints.

The paper does not give the link parameters of Fig. 5. :data:`LINKS` is a 1 kg, 1 m rod with a
0.7 kg payload (a ball, 0.011 kg m²) at the tip of a massless 1 m second link, chosen so that

* the mechanism moves little and slowly during the ramp and stops at about 4.4 s, as in Fig. 7
  (the paper's angles change by a few hundredths of a radian);
* the elastic modes of the held mechanism on the joint-friction springs (K = 5000 N m/rad,
  ≈ 36 and 276 rad/s at the held pose) are away from the 100 rad/s excitation. The paper's
  torques peak at 0.48 N m, only 4 % below F: a dynamic amplification above 1.14 lifts the
  joint torque over the breakaway level and any friction model slips (a 0.5 kg payload already
  does, briefly; with 0.7 kg the peak friction torque is 0.494 N m);
* LuGre stays within RK4's stability region at T = 1e-4 s: its ODE has the rate σ0|v|/F, so
  explicit RK4 needs |v| < 2.8 F/(σ0 T) = 2.8 rad/s (much lighter links reach 10 rad/s).
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
#: Link parameters (not in the paper): masses [kg], lengths [m] (joint to joint / to the tip),
#: centre of mass from the proximal joint [m], principal inertias about the centre of mass
#: [kg m²] in link axes (x along the link, z the joint axis): a rod of radius 2 cm and a ball
#: of inertia 0.011 kg m² (its inertia bounds the penalty model's stiffest mode, the ball
#: turning about its centre against K_lin at the 1 m lever: √(K_lin c²/I) = 9500 rad/s).
LINKS = dict(masses=(1.0, 0.7), lengths=(1.0, 1.0), com=(0.5, 1.0),
             inertia=((0.5 * 1.0 * 0.02 ** 2, 1.0 * (3 * 0.02 ** 2 + 1.0) / 12.0,
                       1.0 * (3 * 0.02 ** 2 + 1.0) / 12.0),
                      (0.011,) * 3))
#: Penalty-joint parameters of Simulation III (N/m, N s/m, N m/rad, N m s/rad).
PENALTY = dict(K_lin=1e6, B_lin=50.0, K_rot=10.0, B_rot=0.02)


def paper_torques(t: float) -> tuple[float, float]:
    """The actuator torques of Simulations II and III, (28c, d).

    ``min(0.52, 0.3 t)`` for t < 4 s, then ``0.336 + 0.144 sin/cos(100 t)``.

    Parameters
    ----------
    t : float
        The time [s].

    Returns
    -------
    tau0, tau1 : float
        The torques at joints 0 and 1 [N m].
    """
    if t < 4.0:
        a = min(0.52, 0.3 * t)
        return a, a
    return 0.336 + 0.144 * math.sin(100.0 * t), 0.336 + 0.144 * math.cos(100.0 * t)


def rolling_sphere(M: float = SPHERE["M"], R: float = SPHERE["R"], g: float = SPHERE["g"],
                   K: float = SPHERE["K"], B: float = SPHERE["B"],
                   mu: float = SPHERE["mu"]) -> CompiledSystem:
    """Simulation I: a sphere rolling and slipping on a plane (Sec. IV-A).

    Names ``"sphere"`` (RigidBody) and ``"contact"`` (PenaltyFrictionContact).

    Parameters
    ----------
    M : float
        The sphere's mass [kg].
    R : float
        Its radius [m]; the contact point is at [0, 0, −R] from the centre (world axes).
    g : float
        The gravitational acceleration [m/s²], along −z.
    K : float
        The contact stiffness [N/m] of ``I_fricKN`` (23).
    B : float
        The contact damping [N s/m] of (23).
    mu : float
        The friction coefficient μ [-].

    Returns
    -------
    CompiledSystem
        The system; its state is the sphere's ``[p, v, q, ω]`` (25) (13 numbers) and the
        contact's tangential element e (2 numbers).
    """
    s = ModularSystem()
    s.add_admittance("sphere", RigidBody.solid_sphere(M, R, gravity=(0.0, 0.0, -g)))
    s.add_impedance("contact", PenaltyFrictionContact(K=K, B=B, mu=mu),
                    BodyPoint("sphere", (0.0, 0.0, -R), frame="world"))
    return s.build()


def planar_arm(links: dict = LINKS) -> PlanarTwoLink:
    """The closed-form arm (8) of the links (their z inertias about the centres of mass).

    Parameters
    ----------
    links : dict
        ``masses`` [kg], ``lengths`` [m], ``com`` [m] (pairs) and ``inertia`` (two triples of
        principal inertias [kg m²], the third about z), as :data:`LINKS`.

    Returns
    -------
    PlanarTwoLink
        The arm; state ``[θ₀, θ₁, ω₀, ω₁]`` [rad, rad/s], horizontal (no gravity).
    """
    return PlanarTwoLink(masses=links["masses"], lengths=links["lengths"], com=links["com"],
                         inertia=[links["inertia"][0][2], links["inertia"][1][2]])


def two_link(friction: str = "kikuuwe", torques=paper_torques, links: dict = LINKS,
             K: float = JOINT_FRICTION["K"], B: float = JOINT_FRICTION["B"],
             F: float = JOINT_FRICTION["F"]) -> CompiledSystem:
    """Simulation II: ``"arm"`` (PlanarTwoLink), ``"motors"``, ``"friction0"``, ``"friction1"``.

    ``friction="kikuuwe"``: ``I_fricK`` (19); ``"lugre"``: LuGre (12) with σ0 = K, σ1 = B,
    Fc = Fs = F, no viscosity (the same stiffness, damping and level).

    Parameters
    ----------
    friction : str
        ``"kikuuwe"`` or ``"lugre"``: the joint friction model.
    torques : callable
        ``torques(t) -> (tau0, tau1)``: the joint torques [N m] at time t [s]
        (default :func:`paper_torques`).
    links : dict
        The link parameters, as :data:`LINKS`.
    K : float
        The joint-friction stiffness [N m/rad] (LuGre: σ0).
    B : float
        The joint-friction damping [N m s/rad] (LuGre: σ1).
    F : float
        The friction level [N m] (LuGre: Fc = Fs).

    Returns
    -------
    CompiledSystem
        The system; its state starts with the arm's ``[θ₀, θ₁, ω₀, ω₁]``.

    Raises
    ------
    ValueError
        If ``friction`` is neither ``"kikuuwe"`` nor ``"lugre"``.
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
    """Simulation III: the arm of :func:`two_link` from two rigid bodies and two penalty joints.

    Rigid bodies ``"link0"``, ``"link1"`` (x axes along the links, origins at
    the centres of mass), penalty joints ``"joint0"`` (world–link0) and ``"joint1"`` (link0 tip –
    link1 base) with ``I_fricK`` friction, actuators ``"motor0"``, ``"motor1"`` (AxisTorque).

    Parameters
    ----------
    torques, links
        As for :func:`two_link`.
    penalty : dict
        The penalty-joint parameters ``K_lin`` [N/m], ``B_lin`` [N s/m], ``K_rot`` [N m/rad],
        ``B_rot`` [N m s/rad], as :data:`PENALTY`.
    K, B, F
        The joint friction ``I_fricK`` (19) of both joints, as for :func:`two_link`.

    Returns
    -------
    CompiledSystem
        The system; start it from :func:`penalty_initial_state`.
    """
    m, L, c = links["masses"], links["lengths"], links["com"]
    s = ModularSystem()
    for i in (0, 1):
        s.add_admittance(f"link{i}", RigidBody(m[i], links["inertia"][i]))
    frames = [Stack(FixedFrame(), BodyFrame("link0", (-c[0], 0.0, 0.0))),
              Stack(BodyFrame("link0", (L[0] - c[0], 0.0, 0.0)),
                    BodyFrame("link1", (-c[1], 0.0, 0.0)))]
    for i in (0, 1):
        s.add_impedance(f"joint{i}", PenaltyJoint(**penalty, K=K, B=B, F=F), frames[i])
        s.add_impedance(f"motor{i}", AxisTorque(lambda t, i=i: torques(t)[i]), frames[i])
    return s.build()


def penalty_initial_state(model: CompiledSystem, theta, omega=(0.0, 0.0),
                          links: dict = LINKS) -> np.ndarray:
    """x0 of :func:`penalty_two_link` with the links placed at joint angles θ, rates ω.

    Parameters
    ----------
    model : CompiledSystem
        The system of :func:`penalty_two_link`.
    theta : array_like
        The joint angles (θ₀, θ₁) [rad], θ₁ relative to link 0.
    omega : array_like
        The joint rates (ω₀, ω₁) [rad/s].
    links : dict
        The link parameters the model was built with, as :data:`LINKS`.

    Returns
    -------
    ndarray
        The initial state, shape ``(model.n_state,)`` (the friction elements at rest).
    """
    s0, s1 = planar_arm(links).link_states(theta, omega)
    return model.initial_state(link0=s0, link1=s1)


def penalty_joint_angles(model: CompiledSystem, X: np.ndarray) -> np.ndarray:
    """Joint angles (θ₀, θ₁), unwrapped over the samples, of penalty-model states X (m, n).

    Parameters
    ----------
    model : CompiledSystem
        The system of :func:`penalty_two_link`.
    X : ndarray
        Its states, shape ``(m, model.n_state)`` (e.g. ``Trajectory.x``).

    Returns
    -------
    ndarray
        The joint angles [rad], shape (m, 2): θ₀ of link 0 and θ₁ of link 1 relative to link 0.
    """
    yaw = []
    for name in ("link0", "link1"):
        q = X[:, model.slice(name)][:, 6:10]
        # rotation about z: q = [cos(a/2), 0, 0, sin(a/2)] up to tiny bending
        yaw.append(np.unwrap(2.0 * np.arctan2(q[:, 3], q[:, 0])))
    return np.stack([yaw[0], yaw[1] - yaw[0]], axis=1)
