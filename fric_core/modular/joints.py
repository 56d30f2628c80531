"""Penalty joints between rigid bodies (Sec. IV-C): the impedance ``I_joint`` and an actuator
torque about the same axis.

Both read two stacked frames ``[x_A, x_B]`` (26 numbers: per frame ``[p, q, v, ω]``; wire them with
``Stack(BodyFrame(...), BodyFrame(...))`` or ``Stack(FixedFrame(), BodyFrame(...))`` for the
base) and return the two wrenches ``[f_A, τ_A, f_B, τ_B]`` (12) on them. A is the proximal side
(the tip x_(i−1)T of the previous link, or the world), B the distal side (the base x_iB of
link i). The joint axis is ``axis`` in each frame's own coordinates; a_A = R(q_A) axis.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from .._checks import param
from ..laws import FrictionLaw
from ._vec import rotate
from .components import Impedance
from .impedances import FrictionImpedance

__all__ = ["PenaltyJoint", "AxisTorque"]


def _axis(axis) -> tuple[float, float, float]:
    a = np.asarray(axis, dtype=float)
    if a.shape != (3,) or not np.all(np.isfinite(a)) or not float(a @ a) > 0.0:
        raise ValueError(f"axis: expected a non-zero finite 3-vector, got {axis!r}")
    a = a / math.sqrt(float(a @ a))
    return float(a[0]), float(a[1]), float(a[2])


class PenaltyJoint(Impedance):
    """A revolute joint as a stiff spring-damper with friction about its axis (Sec. IV-C).

    With d = p_B − p_A, ḋ = v_B − v_A, Δω = ω_B − ω_A and the axes a_A, a_B::

        f_B = −(K_lin d + B_lin ḋ),                       f_A = −f_B
        τ_B = −K_rot (a_A × a_B) − B_rot (Δω − (a_A·Δω) a_A) − f a_A,   τ_A = −τ_B

    where the first two terms of τ_B penalise the bending of the joint axes and
    ``f = I_fricK(a_A·Δω, e; τ)`` (19) is the joint friction (any :mod:`fric_core.laws` law,
    state e ∈ R). The separation d and the bending are O(load / stiffness): the joint tends to
    the ideal (constraint) joint as K_lin, K_rot → ∞, but the stable RK4 step shrinks like
    1/√K: the stiffest mode is a body turning about its centre of mass against K_lin at the
    lever c from the joint, ω = √(K_lin c²/I); keep ωT < 2.8 (and B_lin c² T/I < 2.7). The
    bending damper also acts on a slender link's spin about its own axis (Δω ⊥ a_A): keep
    B_rot T / I_axial < 2.7 too, with I_axial the link's smallest principal inertia.

    Parameters
    ----------
    K_lin : float
        The stiffness K_lin of the joint's translation [N/m], > 0.
    B_lin : float
        Its damping B_lin [N s/m], >= 0.
    K_rot : float
        The bending stiffness K_rot of the joint axes [N m/rad], > 0.
    B_rot : float
        The bending damping B_rot [N m s/rad], >= 0.
    K : float
        The joint friction's stiffness [N m/rad] (:class:`FrictionImpedance`), > 0.
    B : float
        The joint friction's viscosity [N m s/rad], >= 0.
    F : float or None
        The joint friction's Coulomb level [N m]; give exactly one of ``F`` and ``law``.
    law : FrictionLaw or None
        A :mod:`fric_core.laws` law for the joint friction instead of Coulomb(F).
    axis : array_like
        The joint axis, (3,), non-zero (normalised), in each frame's own axes.
    """

    motion = "frames"
    n_in, n_out, n_state = 26, 12, 1

    def __init__(self, K_lin: float, B_lin: float, K_rot: float, B_rot: float, *,
                 K: float, B: float, F: float | None = None, law: FrictionLaw | None = None,
                 axis=(0.0, 0.0, 1.0)):
        self.K_lin = param("K_lin", K_lin, minimum=0.0, strict=True, allow_array=False)
        self.B_lin = param("B_lin", B_lin, minimum=0.0, allow_array=False)
        self.K_rot = param("K_rot", K_rot, minimum=0.0, strict=True, allow_array=False)
        self.B_rot = param("B_rot", B_rot, minimum=0.0, allow_array=False)
        self.friction = FrictionImpedance(K, B, F, law=law)
        self.axis = _axis(axis)
        self._fin = np.zeros(2)
        self._fw = np.zeros(1)

    def evaluate(self, xin, y, t, tau, w, ydot):
        m = xin.tolist()
        ax, ay, az = rotate(m[3:7], self.axis)     # a_A = R(q_A) axis
        bx, by, bz = rotate(m[16:20], self.axis)   # a_B = R(q_B) axis
        dx, dy, dz = m[13] - m[0], m[14] - m[1], m[15] - m[2]
        dvx, dvy, dvz = m[20] - m[7], m[21] - m[8], m[22] - m[9]
        Kl, Bl = self.K_lin, self.B_lin
        fx = -(Kl * dx + Bl * dvx)
        fy = -(Kl * dy + Bl * dvy)
        fz = -(Kl * dz + Bl * dvz)
        ox, oy, oz = m[23] - m[10], m[24] - m[11], m[25] - m[12]
        wa = ax * ox + ay * oy + az * oz          # relative angular velocity about the axis
        fric = self.friction
        F = fric._coulomb_F
        if F is not None:                         # (19b, c) for Coulomb's law, as in fric
            Kf = fric.K
            Zi = fric.B + fric._tau_factor * tau * Kf
            e = y.item(0)
            sf = Zi * wa + Kf * e
            f = F if sf > F else (-F if sf < -F else sf)
            ydot[0] = (f - Kf * e) / Zi
            fr = -f                               # friction torque on B about a_A (= −f)
        else:
            self._fin[1] = wa
            fric.evaluate(self._fin, y, t, tau, self._fw, ydot)
            fr = self._fw[0]
        Kr, Br = self.K_rot, self.B_rot
        tx = -Kr * (ay * bz - az * by) - Br * (ox - wa * ax) + fr * ax
        ty = -Kr * (az * bx - ax * bz) - Br * (oy - wa * ay) + fr * ay
        tz = -Kr * (ax * by - ay * bx) - Br * (oz - wa * az) + fr * az
        w[:] = (-fx, -fy, -fz, -tx, -ty, -tz, fx, fy, fz, tx, ty, tz)

    def energy(self, xin, y) -> float:
        a = np.array(rotate(xin[3:7], self.axis))
        b = np.array(rotate(xin[16:20], self.axis))
        d = xin[13:16] - xin[0:3]
        return (0.5 * self.K_lin * float(d @ d) + self.K_rot * (1.0 - float(a @ b))
                + 0.5 * self.friction.K * float(y @ y))

    def angle(self, xin) -> float:
        """Rotation of frame B relative to frame A about the joint axis (rad, in (−π, π])."""
        qa, qb = xin[3:7], xin[16:20]
        # relative quaternion q_rel = conj(q_A) ⊗ q_B, expressed in A's frame
        w0, x0, y0, z0 = qa[0], -qa[1], -qa[2], -qa[3]
        w1, x1, y1, z1 = qb
        rw = w0 * w1 - x0 * x1 - y0 * y1 - z0 * z1
        rx = w0 * x1 + x0 * w1 + y0 * z1 - z0 * y1
        ry = w0 * y1 - x0 * z1 + y0 * w1 + z0 * x1
        rz = w0 * z1 + x0 * y1 - y0 * x1 + z0 * w1
        s = rx * self.axis[0] + ry * self.axis[1] + rz * self.axis[2]
        return 2.0 * math.atan2(s, rw) if rw >= 0 else 2.0 * math.atan2(-s, -rw)


class AxisTorque(Impedance):
    """An actuator torque ``τ(t)`` about a joint axis: ``+τ a_A`` on B, ``−τ a_A`` on A.

    Parameters
    ----------
    torque : callable
        ``torque(t)``: the torque τ [N m] at time t [s], a finite float.
    axis : array_like
        The joint axis, (3,), non-zero (normalised), in frame A's own axes.
    """

    motion = "frames"
    n_in, n_out, n_state = 26, 12, 0

    def __init__(self, torque: Callable[[float], float], axis=(0.0, 0.0, 1.0)):
        if not callable(torque):
            raise ValueError(f"torque: expected a callable torque(t), got {torque!r}")
        try:
            probe = float(torque(0.0))
        except Exception as exc:  # noqa: BLE001 - report what the user's function did
            raise ValueError(f"torque: calling torque(0.0) failed: {exc}") from None
        if not math.isfinite(probe):
            raise ValueError("torque: torque(0.0) is not finite")
        self.torque = torque
        self.axis = _axis(axis)

    def evaluate(self, xin, y, t, tau, w, ydot):
        ax, ay, az = rotate(xin[3:7].tolist(), self.axis)
        m = float(self.torque(t))
        w[:] = (0.0, 0.0, 0.0, -m * ax, -m * ay, -m * az, 0.0, 0.0, 0.0, m * ax, m * ay, m * az)
