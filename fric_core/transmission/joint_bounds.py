"""What keeps a simulated arm finite and bounded for any finite input: the actuators' effort
limits, the joints' speed limits and the angle range of continuous joints.

A URDF gives each revolute and prismatic joint ``<limit effort="..." velocity="..."/>``; a
continuous joint may have none, and exporters often write 0 for both. Without them nothing
bounds the arm: a torque of 1e6 N m on a joint of a few kg m² integrates to 1e273 rad within
seconds (the Coriolis terms grow with the square of the speed). :class:`JointBounds` gives every
joint

* an **effort limit**: the URDF's where it is positive and finite, else ``default_effort``
  (a stated default: which joints use it is in :attr:`JointBounds.effort_defaulted`). A command
  beyond it is clipped, as a saturating actuator does;
* a **speed limit**: the URDF's ``velocity`` where positive and finite, else
  ``default_velocity``. A step that ends faster is cut back to the limit, position included
  (``q = q_prev + h v`` with the limited v, the implicit-Euler update (69g)): the drive's rated
  speed, as a simulator that enforces the URDF's velocity limits does (it is also what bounds
  the arm when gravity, the external wrench or a self-locking gear would drive it faster);
* for a **continuous** joint, its angle kept in (−π, π] (the joint has no stops: the angle is
  only defined modulo 2π, and an unbounded one loses precision).

Speed and effort bounded, every output of a step is finite and bounded: |q̇| ≤ the speed
limit, a revolute or prismatic q within its stops (when enforced) or moving at most that fast, a
continuous q within (−π, π].
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

__all__ = ["JointBounds", "wrap_angle", "DEFAULT_EFFORT_LIMIT", "DEFAULT_VELOCITY_LIMIT"]

#: Effort limit of a joint whose URDF gives none (N m, or N for a prismatic joint).
DEFAULT_EFFORT_LIMIT = 1000.0
#: Speed limit of a joint whose URDF gives none (rad/s, or m/s for a prismatic joint).
DEFAULT_VELOCITY_LIMIT = 10.0


def wrap_angle(q: np.ndarray) -> np.ndarray:
    """Angles mapped into (−π, π].

    Parameters
    ----------
    q : array_like
        Angles [rad].

    Returns
    -------
    ndarray
        The same angles modulo 2π in (−π, π], same shape (π stays π, −π becomes π).
    """
    return math.pi - np.mod(math.pi - np.asarray(q, dtype=float), 2.0 * math.pi)


def _limits(name: str, urdf, default: float, joint_names: Sequence[str]):
    if not (math.isfinite(default) and default > 0.0):
        raise ValueError(f"{name}: must be > 0 and finite, got {default!r}")
    urdf = np.asarray(urdf, dtype=float)
    if urdf.shape != (len(joint_names),):
        raise ValueError(f"{name}: {urdf.size} URDF values for {len(joint_names)} joints")
    given = np.isfinite(urdf) & (urdf > 0.0)
    return (np.where(given, urdf, default),
            tuple(j for j, g in zip(joint_names, given) if not g))


class JointBounds:
    """Effort and speed limits of an arm's joints, and which joints are continuous.

    Parameters
    ----------
    joint_names : sequence of str
        The joints, in the arm's order.
    effort, velocity : (n,) array_like
        The URDF's limits; 0, negative, NaN or inf = not given.
    continuous : (n,) array_like of bool
        The continuous joints (angles wrapped into (−π, π]).
    default_effort, default_velocity : float
        The limits of joints whose URDF gives none (> 0, finite).

    Attributes
    ----------
    effort, velocity : (n,) arrays
        The limits in use (all finite, > 0).
    effort_defaulted, velocity_defaulted : tuple of str
        The joints that use the defaults.
    """

    def __init__(self, joint_names: Sequence[str], effort, velocity, continuous, *,
                 default_effort: float = DEFAULT_EFFORT_LIMIT,
                 default_velocity: float = DEFAULT_VELOCITY_LIMIT):
        self.joint_names = tuple(joint_names)
        n = len(self.joint_names)
        self.effort, self.effort_defaulted = _limits("default_effort_limit", effort,
                                                     float(default_effort), self.joint_names)
        self.velocity, self.velocity_defaulted = _limits(
            "default_velocity_limit", velocity, float(default_velocity), self.joint_names)
        cont = np.asarray(continuous, dtype=bool)
        if cont.shape != (n,):
            raise ValueError(f"continuous: {cont.size} flags for {n} joints")
        self.continuous = np.flatnonzero(cont)
        self._over = np.zeros(n, dtype=bool)
        self._speed = np.zeros(n)
        self.speed_limited = np.zeros(n, dtype=bool)  # the joints cut back by the last bound()

    @classmethod
    def from_dynamics(cls, dynamics, **defaults) -> "JointBounds":
        """From a :class:`~.urdf_dynamics.UrdfDynamics` (its ``effort``, the Pinocchio model's
        velocity limits, its ``joint_kinds``); an object without them has no URDF limits and
        no continuous joints."""
        names = list(dynamics.joint_names)
        n = len(names)
        effort = getattr(dynamics, "effort", np.full(n, np.inf))
        model = getattr(dynamics, "model", None)
        velocity = np.full(n, np.inf)
        if model is not None and hasattr(model, "velocityLimit"):
            velocity = np.array([model.velocityLimit[model.joints[model.getJointId(j)].idx_v]
                                 for j in names], dtype=float)
        kinds = getattr(dynamics, "joint_kinds", ("",) * n)
        return cls(names, effort, velocity, [k == "continuous" for k in kinds], **defaults)

    def bound_state(self, q_prev: np.ndarray, q: np.ndarray, v: np.ndarray, h: float) -> bool:
        """Cut a step's result back to the bounds, in place: a joint faster than its speed limit
        gets the limit (its sign kept) and ``q = q_prev + h v``; continuous joints' angles are
        wrapped into (−π, π]. Returns whether anything changed (:attr:`speed_limited` names the
        joints whose speed was cut). ``v`` must be finite; ``q`` may be non-finite where the
        speed is cut (it is recomputed there)."""
        over, speed = self._over, self._speed
        np.abs(v, out=speed)
        np.greater(speed, self.velocity, out=over)
        self.speed_limited[:] = over
        changed = bool(over.any())
        if changed:
            np.copysign(self.velocity, v, out=speed)
            v[over] = speed[over]
            q[over] = q_prev[over] + h * speed[over]
        c = self.continuous
        if c.size:
            qc = q[c]
            if (qc > math.pi).any() or (qc <= -math.pi).any():
                q[c] = wrap_angle(qc)
                changed = True
        return changed
