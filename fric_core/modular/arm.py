"""Articulated arms as admittance components, eq. (8): state ``[θ, ω]``, input joint torques τ,
``θ̇ = ω``, ``ω̇ = H(θ)⁻¹ (τ − c(θ, ω))``.

* :class:`PlanarTwoLink` — closed form for two revolute links turning about parallel z axes
  (the mechanism of Fig. 5);
* :class:`UrdfArm` — any fixed-base arm from a URDF, H and c (Coriolis, centrifugal and gravity)
  from Pinocchio via :class:`fric_core.transmission.urdf_dynamics.UrdfDynamics`.

Both are of kind ``"coordinates"``: wire joint-space impedances with
:class:`~fric_core.modular.wiring.Coordinates`, and Cartesian ones (contacts, springs) at the tip
with :class:`~fric_core.modular.wiring.ArmPoint` (``tip_kinematics``: position and Jacobian).
"""

from __future__ import annotations

import math

import numpy as np

from .._checks import param
from ._vec import quat_from_axis_angle
from .components import Admittance

__all__ = ["PlanarTwoLink", "UrdfArm"]


def _pair(name, value, minimum, strict=False) -> tuple[float, float]:
    a = np.asarray(value, dtype=float)
    if a.shape != (2,):
        raise ValueError(f"{name}: expected two values (one per link), got {value!r}")
    v = param(name, a, minimum=minimum, strict=strict)
    return float(v[0]), float(v[1])


class PlanarTwoLink(Admittance):
    """Two revolute links about parallel z axes, joint 0 at the origin (Fig. 5), eq. (8).

    ``masses`` (m₀, m₁) > 0, ``lengths`` (l₀, l₁) > 0 (joint-to-joint / joint-to-tip),
    ``com`` (c₀, c₁): distance of each link's centre of mass from its proximal joint (default
    l/2), ``inertia`` (I₀, I₁) ≥ 0: moment of inertia about the centre of mass, z axis (default:
    thin rods, m l²/12). ``gravity`` ≥ 0 (m/s²) acts along −y (0: a horizontal mechanism).
    θ₁ is the angle of link 1 relative to link 0. With s = c₁ l₀ m₁::

        H = [[I₀ + I₁ + m₀c₀² + m₁(l₀² + c₁² + 2 l₀c₁ cos θ₁),  I₁ + m₁(c₁² + l₀c₁ cos θ₁)],
             [I₁ + m₁(c₁² + l₀c₁ cos θ₁),                      I₁ + m₁c₁²]]
        c = [−s sin θ₁ (2 ω₀ω₁ + ω₁²) + g((m₀c₀ + m₁l₀) cos θ₀ + m₁c₁ cos(θ₀+θ₁)),
              s sin θ₁ ω₀² + g m₁c₁ cos(θ₀+θ₁)]

    Parameters
    ----------
    masses : array_like
        (m₀, m₁) [kg], > 0.
    lengths : array_like
        (l₀, l₁) [m], > 0: joint 0 to joint 1, joint 1 to the tip.
    com : array_like or None
        (c₀, c₁) [m], >= 0: each centre of mass from its proximal joint; None: (l₀/2, l₁/2).
    inertia : array_like or None
        (I₀, I₁) [kg m²], >= 0: about each centre of mass, z axis; None: thin rods, m l²/12.
    gravity : float
        The gravitational acceleration [m/s²], >= 0, along −y.
    """

    kind = "coordinates"
    n_state, n_force = 4, 2

    def __init__(self, masses, lengths, com=None, inertia=None, gravity: float = 0.0):
        self.masses = _pair("masses", masses, 0.0, strict=True)
        self.lengths = _pair("lengths", lengths, 0.0, strict=True)
        self.com = (_pair("com", com, 0.0) if com is not None
                    else (0.5 * self.lengths[0], 0.5 * self.lengths[1]))
        if inertia is None:
            inertia = [m * l * l / 12.0 for m, l in zip(self.masses, self.lengths)]
        self.inertia = _pair("inertia", inertia, 0.0)
        self.gravity = param("gravity", gravity, minimum=0.0, allow_array=False)
        m0, m1 = self.masses
        l0, _ = self.lengths
        c0, c1 = self.com
        I0, I1 = self.inertia
        self._a = I0 + I1 + m0 * c0 * c0 + m1 * (l0 * l0 + c1 * c1)
        self._b = m1 * l0 * c1
        self._d = I1 + m1 * c1 * c1
        self._g0 = (m0 * c0 + m1 * l0) * self.gravity
        self._g1 = m1 * c1 * self.gravity
        if self._d <= 0.0:
            raise ValueError("inertia: link 1 has no inertia about joint 1 (I₁ + m₁c₁² = 0)")

    def mass_matrix(self, theta) -> np.ndarray:
        c = math.cos(theta[1])
        h01 = self._d + self._b * c
        return np.array([[self._a + 2.0 * self._b * c, h01], [h01, self._d]])

    def bias(self, theta, omega) -> np.ndarray:
        """c(θ, ω): Coriolis, centrifugal and gravity torques."""
        s = self._b * math.sin(theta[1])
        w0, w1 = omega[0], omega[1]
        c01 = math.cos(theta[0] + theta[1])
        return np.array([-s * (2.0 * w0 * w1 + w1 * w1) + self._g0 * math.cos(theta[0])
                         + self._g1 * c01,
                         s * w0 * w0 + self._g1 * c01])

    def derivative(self, x, u, t, out):
        th0, th1, w0, w1 = x.tolist()
        u0, u1 = u.tolist()
        c, sn = math.cos(th1), math.sin(th1)
        b = self._b
        h00 = self._a + 2.0 * b * c
        h01 = self._d + b * c
        h11 = self._d
        s = b * sn
        c01 = math.cos(th0 + th1)
        r0 = u0 + s * (2.0 * w0 * w1 + w1 * w1) - self._g0 * math.cos(th0) - self._g1 * c01
        r1 = u1 - s * w0 * w0 - self._g1 * c01
        det = h00 * h11 - h01 * h01
        out[:] = (w0, w1, (h11 * r0 - h01 * r1) / det, (h00 * r1 - h01 * r0) / det)

    def energy(self, x) -> float:
        th, w = x[:2], x[2:]
        m0, m1 = self.masses
        pot = (self._g0 * math.sin(th[0]) + self._g1 * math.sin(th[0] + th[1]))
        return 0.5 * float(w @ self.mass_matrix(th) @ w) + pot

    def tip_kinematics(self, theta) -> tuple[np.ndarray, np.ndarray]:
        """Tip of link 1 (distance l₁ from joint 1): world position (3,) and Jacobian J (3 × 2)."""
        l0, l1 = self.lengths
        a0, a1 = float(theta[0]), float(theta[0]) + float(theta[1])
        c0, s0, c1, s1 = math.cos(a0), math.sin(a0), math.cos(a1), math.sin(a1)
        p = np.array([l0 * c0 + l1 * c1, l0 * s0 + l1 * s1, 0.0])
        J = np.array([[-l0 * s0 - l1 * s1, -l1 * s1], [l0 * c0 + l1 * c1, l1 * c1], [0.0, 0.0]])
        return p, J

    def link_states(self, theta, omega) -> list[np.ndarray]:
        """Each link as a rigid-body state ``[p, v, q, ω]`` (25) at the centre of mass, for the
        penalty-based model of the same mechanism (Sec. IV-C). Link frames: x along the link."""
        th0, th1 = float(theta[0]), float(theta[1])
        w0, w1 = float(omega[0]), float(omega[1])
        l0 = self.lengths[0]
        c0, c1 = self.com
        a0, a1 = th0, th0 + th1
        W0, W1 = w0, w0 + w1
        p0 = np.array([c0 * math.cos(a0), c0 * math.sin(a0), 0.0])
        v0 = np.array([-c0 * math.sin(a0) * W0, c0 * math.cos(a0) * W0, 0.0])
        j1 = np.array([l0 * math.cos(a0), l0 * math.sin(a0), 0.0])
        vj1 = np.array([-l0 * math.sin(a0) * W0, l0 * math.cos(a0) * W0, 0.0])
        p1 = j1 + np.array([c1 * math.cos(a1), c1 * math.sin(a1), 0.0])
        v1 = vj1 + np.array([-c1 * math.sin(a1) * W1, c1 * math.cos(a1) * W1, 0.0])
        z = (0.0, 0.0, 1.0)
        return [np.concatenate([p0, v0, quat_from_axis_angle(z, a0), [0.0, 0.0, W0]]),
                np.concatenate([p1, v1, quat_from_axis_angle(z, a1), [0.0, 0.0, W1]])]


class UrdfArm(Admittance):
    """An arm (8) whose H(θ) and c(θ, ω) come from Pinocchio (:class:`UrdfDynamics`).

    ``dynamics`` is a :class:`fric_core.transmission.urdf_dynamics.UrdfDynamics` (its gravity
    setting is the arm's); n = ``dynamics.n`` joints.

    Parameters
    ----------
    dynamics : UrdfDynamics
        The arm's Pinocchio dynamics (:class:`fric_core.transmission.urdf_dynamics.UrdfDynamics`).
    """

    kind = "coordinates"

    def __init__(self, dynamics):
        from ..transmission.urdf_dynamics import UrdfDynamics  # Pinocchio only when used

        if not isinstance(dynamics, UrdfDynamics):
            raise ValueError(f"dynamics: expected a UrdfDynamics, got {type(dynamics).__name__}")
        self.dynamics = dynamics
        n = int(dynamics.n)
        self.n_state, self.n_force = 2 * n, n
        self._n = n
        self._rhs = np.zeros(n)

    def tip_kinematics(self, theta) -> tuple[np.ndarray, np.ndarray]:
        """The end-effector frame origin (UrdfDynamics' ee_frame): position (3,), J (3 × n)."""
        q = np.asarray(theta, dtype=float)
        return self.dynamics.ee_position(q), self.dynamics.jacobian(q)[:3]

    def derivative(self, x, u, t, out):
        n = self._n
        q, w = x[:n], x[n:]
        M, h, _ = self.dynamics.terms(q, w)
        out[:n] = w
        np.subtract(u, h, out=self._rhs)
        out[n:] = np.linalg.solve(M, self._rhs)

    def energy(self, x) -> float:
        """Kinetic energy ½ ωᵀ H ω; the gravity potential is not available from UrdfDynamics,
        so a ValueError is raised when the arm has gravity."""
        n = self._n
        if np.any(np.asarray(self.dynamics.model.gravity.linear) != 0.0):
            raise ValueError("energy: UrdfArm with gravity has no potential-energy model here; "
                             "build UrdfDynamics with gravity=(0, 0, 0) to use energy()")
        q, w = np.array(x[:n]), np.array(x[n:])
        return 0.5 * float(w @ self.dynamics.mass_matrix(q) @ w)
