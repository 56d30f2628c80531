"""Reduced planar LuGre model: three bristles z = [z_x, z_y, z_τ] coupled through a limit
surface (paper 002, Sec. V), for one contact or a batch of independent contacts.

With v_S = S v, S = diag(1, 1, r) (r the rim radius (25)) and the normalised limit-surface wrench
h(r, v) (31), the bristle rate is (33) (the ellipsoid model (27) is the case h = −v_S/‖v_S‖):

    ż = (w − β z σ0/g(‖v_S‖)) ‖v_S‖,   w = −S h(r, v),

with β ≡ 1 for LuGre and β = β(S⁻¹z, −h‖v_S‖) of (16)–(18) for the Elasto-Plastic form (34).
The wrench at the CoP is (28): f_r = −(σ0 z + σ1 ż + σ2 U v) f_N, U = diag(1, 1, u), u of (29).
(The paper's (33) prints "+ z σ0‖v_S‖/g"; (32), (34) and a stable steady state need "−".)

``step`` advances a fixed step exactly for the twist held over the step (ż is linear in z:
z(t+h) = e^{−ah} z + (1 − e^{−ah})/a · w‖v_S‖ with a = β σ0‖v_S‖/g), so it is stable for any
step. All contacts are advanced in one vectorised call: twists (m, 3), loads scalar or (m,).
Zero normal force gives an exactly zero wrench.
"""

from __future__ import annotations

import math
from typing import Union

import numpy as np

from .._checks import param
from .limit_surface import EllipsoidLimitSurface, LimitSurfaceTable, as_twists
from .params import TABLE_I, PlanarFrictionParams

__all__ = ["ReducedLuGre"]

_TINY = 1e-300
LimitSurfaceLike = Union[LimitSurfaceTable, EllipsoidLimitSurface]


class ReducedLuGre:
    """Reduced planar LuGre / Elasto-Plastic model (24)–(34) for ``n_contacts`` contacts.

    Parameters
    ----------
    limit_surface : LimitSurfaceTable or EllipsoidLimitSurface
        The normalised limit surface h(r, v) with r and u: a pre-computed table (31)–(44) (the
        limit-surface-scaled model) or the ellipsoid (24) (the paper's first reduced model).
    params : PlanarFrictionParams
        Table I parameters (default p = 1).
    dt : float
        Fixed step of :meth:`step` [s].
    normal_force : float or (m,) array
        Loads f_N ≥ 0 [N] (0 gives zero friction).
    elasto_plastic : bool
        Use (34) instead of (33).
    n_contacts : int
        Number of independent contacts m advanced per call (all share the limit surface).
    """

    def __init__(self, limit_surface: LimitSurfaceLike, params: PlanarFrictionParams = TABLE_I[1],
                 dt: float = 1e-4, normal_force=1.0, elasto_plastic: bool = False,
                 n_contacts: int = 1) -> None:
        if not isinstance(limit_surface, (LimitSurfaceTable, EllipsoidLimitSurface)):
            raise ValueError("limit_surface: expected a LimitSurfaceTable or EllipsoidLimitSurface,"
                             f" got {type(limit_surface).__name__}")
        if not isinstance(params, PlanarFrictionParams):
            raise ValueError(f"params: expected PlanarFrictionParams, got {type(params).__name__}")
        try:
            m = int(n_contacts)
        except (TypeError, ValueError):
            raise ValueError(f"n_contacts: expected an integer, got {n_contacts!r}") from None
        if m != n_contacts or m < 1:
            raise ValueError(f"n_contacts: must be an integer >= 1, got {n_contacts!r}")
        self.params = params
        self.dt = param("dt", dt, minimum=0.0, strict=True, allow_array=False)
        self.elasto_plastic = bool(elasto_plastic)
        self.n_contacts = m
        self.limit_surface = limit_surface
        self.z = np.zeros((m, 3))
        self._h = np.empty((m, 3))
        self._u = np.empty((m, 3))
        self._q = np.empty((m, 3))
        self.set_normal_force(normal_force)

    # --- configuration ---------------------------------------------------------------------
    def set_normal_force(self, normal_force) -> None:
        """Set f_N ≥ 0 (scalar or one per contact); 0 gives zero friction."""
        fn = param("normal_force", normal_force, minimum=0.0)
        if isinstance(fn, np.ndarray) and fn.size != self.n_contacts:
            raise ValueError(f"normal_force: has {fn.size} entries for {self.n_contacts} contacts")
        self.normal_force = fn
        self._fn_col = fn[:, None] if isinstance(fn, np.ndarray) else fn

    def set_limit_surface(self, limit_surface: LimitSurfaceLike) -> None:
        """Swap the limit surface (e.g. ``table.rescaled(s)`` when a Hertz-like contact grows,
        Sec. VI-D); the bristle state is kept."""
        if not isinstance(limit_surface, (LimitSurfaceTable, EllipsoidLimitSurface)):
            raise ValueError("limit_surface: expected a LimitSurfaceTable or EllipsoidLimitSurface")
        self.limit_surface = limit_surface

    def reset(self) -> None:
        """Zero bristle deflections."""
        self.z[...] = 0.0

    @property
    def state(self) -> np.ndarray:
        """Bristle deflections (m, 3) flattened, a copy."""
        return self.z.ravel().copy()

    @state.setter
    def state(self, value) -> None:
        v = np.asarray(value, dtype=float)
        if v.size != 3 * self.n_contacts or not np.all(np.isfinite(v)):
            raise ValueError(f"state: expected {3 * self.n_contacts} finite values")
        self.z[...] = v.reshape(self.n_contacts, 3)

    # --- kernels ---------------------------------------------------------------------------
    def _twists(self, twist) -> np.ndarray:
        t = as_twists(twist)
        if t.shape[0] != self.n_contacts:
            raise ValueError(f"twist: {t.shape[0]} twists for {self.n_contacts} contacts")
        return t

    def _rates(self, t: np.ndarray, z: np.ndarray):
        """w‖v_S‖ (into self._u), a = β σ0‖v_S‖/g (≥ tiny), and S v_S components."""
        p, ls = self.params, self.limit_surface
        r = ls.radius
        vx, vy, om = t[:, 0], t[:, 1], t[:, 2]
        h = ls.h_into(vx, vy, om, self._h)
        rom = r * om
        n = np.sqrt(vx * vx + vy * vy + rom * rom)                 # ‖v_S‖
        u = self._u
        np.multiply(h, n[:, None], out=u)
        u *= -1.0
        u[:, 2] *= r                                                # w‖v_S‖ = −S h ‖v_S‖
        if p.mu_s == p.mu_c:
            g = p.mu_c
        else:
            x = n * (1.0 / p.v_s)
            x = x * x if p.gamma == 2.0 else np.power(x, p.gamma)
            g = p.mu_c + (p.mu_s - p.mu_c) * np.exp(-x)
        a = n * (p.sigma0 / g) if np.ndim(g) == 0 else np.multiply(n, p.sigma0) / g
        if self.elasto_plastic:
            a *= self._beta(z, h, n, g, r)
        np.maximum(a, _TINY, out=a)
        return u, a

    def _beta(self, z, h, n, g, r) -> np.ndarray:
        """β(S⁻¹z, −h‖v_S‖) of (34) with (16)–(18); z_max = ‖S⁻¹z*‖ = ‖h‖ g/σ0."""
        p = self.params
        zs = z.copy()
        zs[:, 2] /= r
        zn = np.sqrt(np.einsum("ij,ij->i", zs, zs))
        hn = np.sqrt(np.einsum("ij,ij->i", h, h))
        zmax = hn * (np.asarray(g) / p.sigma0)
        span = zmax * (1.0 - p.s_ba)
        t = np.divide(zn - p.s_ba * zmax, span, out=np.ones_like(zn), where=span > 0)
        np.clip(t, 0.0, 1.0, out=t)
        alpha = 0.5 - 0.5 * np.cos(math.pi * t)
        # ε = (v̂ᵀẑ + 1)/2 with v ∝ −h: cos = −hᵀzs/(‖h‖‖zs‖); 1 where either vanishes
        den = zn * hn
        cos = np.divide(-np.einsum("ij,ij->i", h, zs), den, out=np.ones_like(zn),
                        where=(den > 0) & (n > 0))
        return alpha * (0.5 * (cos + 1.0))

    def _wrench(self, t, z, u, a) -> np.ndarray:
        """(28) with ż = u − a z."""
        p, q = self.params, self._q
        np.multiply(z, (p.sigma0 - p.sigma1 * a)[:, None], out=q)
        q += p.sigma1 * u
        if p.sigma2:
            q[:, :2] += p.sigma2 * t[:, :2]
            q[:, 2] += (p.sigma2 * self.limit_surface.viscous_torque_scale) * t[:, 2]
        q *= self._fn_col
        return -q

    # --- public API ------------------------------------------------------------------------
    def step(self, twist) -> np.ndarray:
        """Advance all contacts by ``dt`` with the twists (at the CoP) held constant; return the
        wrenches at the CoP at the end of the step, (3,) for one contact given a (3,) twist."""
        t = self._twists(twist)
        z = self.z
        u, a = self._rates(t, z)
        em = np.expm1(a * -self.dt)                  # e^{−ah} − 1
        c = em / a                                   # −(1 − e^{−ah})/a
        z *= (em + 1.0)[:, None]
        z -= c[:, None] * u
        f = self._wrench(t, z, u, a)
        return f[0] if np.ndim(twist) == 1 else f

    def derivative(self, state, twist) -> np.ndarray:
        """ż of (27)/(33)/(34), flat (3m,), for a flat ``state`` and the twists at the CoP."""
        t = self._twists(twist)
        z = np.asarray(state, dtype=float).reshape(self.n_contacts, 3)
        u, a = self._rates(t, z)
        return (u - a[:, None] * z).ravel()

    def wrench(self, state, twist) -> np.ndarray:
        """Wrench (28) at the CoP for a flat ``state`` and twists ((3,) for a (3,) twist)."""
        t = self._twists(twist)
        z = np.asarray(state, dtype=float).reshape(self.n_contacts, 3)
        u, a = self._rates(t, z)
        f = self._wrench(t, z, u, a)
        return f[0] if np.ndim(twist) == 1 else f

    def steady_state(self, twist) -> np.ndarray:
        """Steady-state wrench −(g(‖v_S‖) w + σ2 U v) f_N, w = −S h (z* of (26)/(32))."""
        t = self._twists(twist)
        z = np.zeros((self.n_contacts, 3))
        el, self.elasto_plastic = self.elasto_plastic, False
        try:
            u, a = self._rates(t, z)
        finally:
            self.elasto_plastic = el
        p = self.params
        # σ0 z* = g w and ż* = 0: (28) gives −(σ0 z* + σ2 U v) f_N; u = w‖v_S‖ and a = σ0‖v_S‖/g
        zstar = np.divide(u, a[:, None], out=np.zeros_like(u), where=a[:, None] > _TINY)
        zero_speed = a <= _TINY
        if np.any(zero_speed):                       # g(0) w at rest: limit of the ratio
            zstar[zero_speed] = 0.0
        q = p.sigma0 * zstar
        q[:, :2] += p.sigma2 * t[:, :2]
        q[:, 2] += p.sigma2 * self.limit_surface.viscous_torque_scale * t[:, 2]
        q *= self._fn_col
        return -q[0] if np.ndim(twist) == 1 else -q
