"""A planar contact rendered on a device's x, y and yaw joints (paper 002, Sec. V: the reduced
planar LuGre / Elasto-Plastic model (24)–(34) on a pre-computed limit surface (35)–(44)).

The joints' velocities are the end effector's twist in the world (ẋ, ẏ, θ̇); the patch is fixed
to the end effector with its grid axes along the end effector's x, y at yaw θ. The twist is
turned into the patch frame and moved to the CoP (:func:`~.surfaces.twist_to_cop`), the model's
wrench is moved back to the origin and turned to world axes: the efforts on the x, y, yaw joints.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from .limit_surface import LimitSurfaceTable
from .params import PlanarFrictionParams
from .reduced import ReducedLuGre
from .surfaces import ContactSurface, twist_to_cop, wrench_from_cop

__all__ = ["PlanarContact"]


class PlanarContact:
    """One planar contact on three joints (x, y, yaw): ``step(v, q) -> f``.

    ``surface`` is the unit-load patch and ``table`` its pre-computed limit surface (35)–(44);
    ``joint_index``: where the x, y, yaw joints sit in the device's joint order.

    ``v``, ``q``: the three joints' velocities and positions (only the yaw position is used);
    returns the friction on the device as efforts (f_x, f_y, τ) in world axes, in a buffer
    reused by the next call. ``stuck``: the last step's patch speed at the CoP (the rim speed
    included) was below 10⁻³ of v_s (the bristles hold).

    Parameters
    ----------
    surface : ContactSurface
        The unit-load patch.
    table : LimitSurfaceTable
        Its pre-computed limit surface.
    params : PlanarFrictionParams
        The Table I parameters.
    joint_index : sequence of int
        The positions of the x, y and yaw joints in the device's joint order, (3,).
    dt : float
        The step [s], > 0.
    normal_force : float
        The normal load f_N [N], >= 0.
    elasto_plastic : bool
        Use the Elasto-Plastic bristle rate (34) instead of (33).
    """

    def __init__(self, surface: ContactSurface, table: LimitSurfaceTable,
                 params: PlanarFrictionParams, joint_index: Sequence[int], dt: float,
                 normal_force: float, elasto_plastic: bool = True):
        self.index = np.asarray(joint_index, dtype=np.intp)
        self.table = table
        self.surface = surface
        self.model = ReducedLuGre(self.table, params, dt=dt, normal_force=float(normal_force),
                                  elasto_plastic=bool(elasto_plastic))
        cop = np.asarray(surface.cop, dtype=float)[:2]
        self._offset = bool(np.abs(cop).max() > 1e-9 * surface.size)  # CoP off the origin
        self.cop = cop if self._offset else np.zeros(2)
        self._v_stuck = 1e-3 * params.v_s
        self._out = np.zeros(3)
        self._twist = np.zeros(3)
        self.stuck = True

    @property
    def radius(self) -> float:
        return float(self.table.radius)

    def set_normal_force(self, normal_force: float) -> None:
        self.model.set_normal_force(normal_force)

    def reset(self) -> None:
        self.model.reset()
        self._out[:] = 0.0
        self.stuck = True

    def step(self, v: np.ndarray, q: np.ndarray) -> np.ndarray:
        c, s = math.cos(q[2]), math.sin(q[2])
        vx, vy, w = float(v[0]), float(v[1]), float(v[2])
        t = self._twist
        t[0], t[1], t[2] = c * vx + s * vy, -s * vx + c * vy, w       # world -> patch axes
        if self._offset:
            t = twist_to_cop(t, np.zeros(2), self.cop)
        r = self.radius
        self.stuck = math.sqrt(t[0] * t[0] + t[1] * t[1] + (r * t[2]) ** 2) < self._v_stuck
        f = self.model.step(t)
        if self._offset:
            f = wrench_from_cop(f, self.cop, np.zeros(2))
        out = self._out
        out[0], out[1], out[2] = c * f[0] - s * f[1], s * f[0] + c * f[1], f[2]  # patch -> world
        return out
