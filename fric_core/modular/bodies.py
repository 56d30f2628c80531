"""Admittance components for free bodies: the point mass (7) and the rigid body (26).

Both take the net generalised force from the impedances and an optional uniform gravity
acceleration ``gravity`` (a 3-vector, m/s²) that is part of the body, not an impedance.
"""

from __future__ import annotations

import math

import numpy as np

from .._checks import param, real_array
from ._vec import quat_matrix
from .components import Admittance

__all__ = ["PointMass", "RigidBody"]


def _vector(name: str, value, n: int) -> np.ndarray:
    """``value`` as a finite float array of shape (n,); ``ValueError`` naming ``name``."""
    a = real_array(value, name, f"a finite {n}-vector")
    if a.shape != (n,) or not np.all(np.isfinite(a)):
        raise ValueError(f"{name}: expected a finite {n}-vector, got {value!r}")
    return a


def _gravity(g) -> np.ndarray:
    return _vector("gravity", g, 3)


class PointMass(Admittance):
    """A point mass (7).

    A point mass (7): state ``[p, v]`` ∈ R⁶, input force f ∈ R³; ``ṗ = v``, ``v̇ = f/M + g``.

    Parameters
    ----------
    M : float
        The mass [kg], > 0.
    gravity : array_like
        The gravitational acceleration g [m/s²], (3,) in world axes.
    """

    kind = "coordinates"
    n_state, n_force = 6, 3

    def __init__(self, M: float, gravity=(0.0, 0.0, 0.0)):
        self.M = param("M", M, minimum=0.0, strict=True, allow_array=False)
        self.gravity = _gravity(gravity)
        self._inv_m = 1.0 / self.M

    def derivative(self, x, u, t, out):
        out[:3] = x[3:]
        np.multiply(u, self._inv_m, out=out[3:])
        out[3:] += self.gravity

    def energy(self, x) -> float:
        v = x[3:6]
        return 0.5 * self.M * float(v @ v) - self.M * float(self.gravity @ x[:3])

    @staticmethod
    def state(p=(0.0, 0.0, 0.0), v=(0.0, 0.0, 0.0)) -> np.ndarray:
        """``[p, v]`` as one array (each a finite 3-vector)."""
        return np.concatenate([_vector("p", p, 3), _vector("v", v, 3)])


class RigidBody(Admittance):
    """A rigid body (26): state ``x = [p, v, q, ω]`` ∈ R¹³ (25), input ``[f, τ]`` ∈ R⁶.

    ``p``, ``v``: centre-of-mass position and velocity (world); ``q = [w, x, y, z]``: unit
    quaternion of the attitude (body → world); ``ω``: angular velocity (world axes); ``f``,
    ``τ``: force and moment about the centre of mass (world axes). With J_w = R J Rᵀ::

        ṗ = v,  v̇ = f/M + g,  q̇ = Q(ω, q) = ½ [0, ω] ⊗ q,  ω̇ = J_w⁻¹ (τ − ω × J_w ω)

    ``inertia`` is the body-frame inertia J about the centre of mass: a 3×3 symmetric positive
    definite matrix or its 3 principal moments. :meth:`project` renormalises q after each step
    (the exact flow keeps ‖q‖ = 1; RK4 does not quite).

    Parameters
    ----------
    M : float
        The mass [kg], > 0.
    inertia : array_like
        The body-frame inertia J about the centre of mass [kg m²]: (3, 3) symmetric positive
        definite, or (3,) principal moments (satisfying the triangle inequality).
    gravity : array_like
        The gravitational acceleration g [m/s²], (3,) in world axes.
    """

    kind = "rigid"
    n_state, n_force = 13, 6

    def __init__(self, M: float, inertia, gravity=(0.0, 0.0, 0.0)):
        self.M = param("M", M, minimum=0.0, strict=True, allow_array=False)
        J = np.asarray(inertia, dtype=float)
        if J.shape == (3,):
            J = np.diag(J)
        if J.shape != (3, 3) or not np.all(np.isfinite(J)):
            raise ValueError(f"inertia: expected 3 principal moments or a 3x3 matrix, got "
                             f"{inertia!r}")
        if not np.allclose(J, J.T, rtol=0, atol=1e-12 * max(1.0, np.abs(J).max())):
            raise ValueError("inertia: must be symmetric")
        ev = np.linalg.eigvalsh(J)
        if ev[0] <= 0.0:
            raise ValueError(f"inertia: must be positive definite (eigenvalues {ev})")
        s = np.sort(ev)
        if s[2] > s[0] + s[1] + 1e-12 * s[2]:
            raise ValueError(f"inertia: principal moments {s} violate the triangle inequality")
        self.inertia = J
        self._J_inv = np.linalg.inv(J)
        self._Jf = tuple(float(v) for v in J.ravel())
        self._Jif = tuple(float(v) for v in self._J_inv.ravel())
        self.gravity = _gravity(gravity)
        self._inv_m = 1.0 / self.M
        self._g = tuple(float(v) for v in self.gravity)
        self._isotropic = bool(np.allclose(J, J[0, 0] * np.eye(3), rtol=1e-14, atol=0.0))

    @classmethod
    def solid_sphere(cls, M: float, R: float, gravity=(0.0, 0.0, 0.0)) -> "RigidBody":
        """A homogeneous solid sphere, J = (2/5) M R² I."""
        R = param("R", R, minimum=0.0, strict=True, allow_array=False)
        M = param("M", M, minimum=0.0, strict=True, allow_array=False)
        return cls(M, [0.4 * M * R * R] * 3, gravity)

    @classmethod
    def rod(cls, M: float, length: float, radius: float, gravity=(0.0, 0.0, 0.0)) -> "RigidBody":
        """A homogeneous solid cylinder along the body x axis (a link of Sec. IV-C)."""
        L = param("length", length, minimum=0.0, strict=True, allow_array=False)
        r = param("radius", radius, minimum=0.0, strict=True, allow_array=False)
        M = param("M", M, minimum=0.0, strict=True, allow_array=False)
        Jt = M * (3.0 * r * r + L * L) / 12.0
        return cls(M, [0.5 * M * r * r, Jt, Jt], gravity)

    def world_inertia(self, q) -> np.ndarray:
        R = quat_matrix(q[0], q[1], q[2], q[3])
        return R @ self.inertia @ R.T

    def derivative(self, x, u, t, out):
        _, _, _, v0, v1, v2, q0, q1, q2, q3, wx, wy, wz = x.tolist()
        fx, fy, fz, tx, ty, tz = u.tolist()
        inv_m = self._inv_m
        g0, g1, g2 = self._g
        qd = (0.5 * (-wx * q1 - wy * q2 - wz * q3),   # q̇ = ½ [0, ω] ⊗ q  (ω in world axes)
              0.5 * (wx * q0 + wy * q3 - wz * q2),
              0.5 * (wy * q0 + wz * q1 - wx * q3),
              0.5 * (wz * q0 + wx * q2 - wy * q1))
        if self._isotropic:  # ω × J ω = 0 and J_w = J
            ji = self._Jif[0]
            out[:] = (v0, v1, v2, fx * inv_m + g0, fy * inv_m + g1, fz * inv_m + g2) + qd + (
                tx * ji, ty * ji, tz * ji)
            return
        # Euler's equations in body axes (scalar code: 3-vectors are too small for numpy)
        n = q0 * q0 + q1 * q1 + q2 * q2 + q3 * q3
        c = 2.0 / n
        r00 = 1.0 - c * (q2 * q2 + q3 * q3)
        r01 = c * (q1 * q2 - q0 * q3)
        r02 = c * (q1 * q3 + q0 * q2)
        r10 = c * (q1 * q2 + q0 * q3)
        r11 = 1.0 - c * (q1 * q1 + q3 * q3)
        r12 = c * (q2 * q3 - q0 * q1)
        r20 = c * (q1 * q3 - q0 * q2)
        r21 = c * (q2 * q3 + q0 * q1)
        r22 = 1.0 - c * (q1 * q1 + q2 * q2)
        bx = r00 * wx + r10 * wy + r20 * wz          # ω_b = Rᵀ ω
        by = r01 * wx + r11 * wy + r21 * wz
        bz = r02 * wx + r12 * wy + r22 * wz
        j = self._Jf
        hx = j[0] * bx + j[1] * by + j[2] * bz       # J ω_b
        hy = j[3] * bx + j[4] * by + j[5] * bz
        hz = j[6] * bx + j[7] * by + j[8] * bz
        sx = r00 * tx + r10 * ty + r20 * tz - (by * hz - bz * hy)   # Rᵀτ − ω_b × J ω_b
        sy = r01 * tx + r11 * ty + r21 * tz - (bz * hx - bx * hz)
        sz = r02 * tx + r12 * ty + r22 * tz - (bx * hy - by * hx)
        k = self._Jif
        ax = k[0] * sx + k[1] * sy + k[2] * sz       # ω̇_b = J⁻¹ (...)
        ay = k[3] * sx + k[4] * sy + k[5] * sz
        az = k[6] * sx + k[7] * sy + k[8] * sz
        out[:] = (v0, v1, v2, fx * inv_m + g0, fy * inv_m + g1, fz * inv_m + g2) + qd + (
            r00 * ax + r01 * ay + r02 * az,          # ω̇ = R ω̇_b
            r10 * ax + r11 * ay + r12 * az,
            r20 * ax + r21 * ay + r22 * az)

    def project(self, x) -> None:
        q = x[6:10]
        n = math.sqrt(float(q @ q))
        if n > 0.0:
            q /= n

    def energy(self, x) -> float:
        v = x[3:6]
        w = x[10:13]
        Jw = self.world_inertia(x[6:10])
        return (0.5 * self.M * float(v @ v) + 0.5 * float(w @ Jw @ w)
                - self.M * float(self.gravity @ x[:3]))

    @staticmethod
    def state(p=(0.0, 0.0, 0.0), v=(0.0, 0.0, 0.0), q=(1.0, 0.0, 0.0, 0.0),
              omega=(0.0, 0.0, 0.0)) -> np.ndarray:
        """``[p, v, q, ω]`` (25) as one array (finite 3-vectors and a 4-vector); q is
        normalised."""
        q = _vector("q", q, 4)
        n = math.sqrt(float(q @ q))
        if not n > 0.0:
            raise ValueError("q: must be a non-zero quaternion")
        return np.concatenate([_vector("p", p, 3), _vector("v", v, 3), q / n,
                               _vector("omega", omega, 3)])
