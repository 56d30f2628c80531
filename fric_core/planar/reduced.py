"""Reduced planar LuGre model: three bristles z = [z_x, z_y, z_τ] coupled through a limit
surface (paper 002, Sec. V), for one contact or a batch of independent contacts.

With v_S = S v, S = diag(1, 1, r) and the normalised limit-surface wrench h(r, v) (31), the
bristle rate is (33) (the ellipsoid model (27) is the case h = −v_S/‖v_S‖). r is the
``radius`` of the limit surface: for :class:`EllipsoidLimitSurface.from_surface` the rim radius
(25) Σ p_n A ‖ρ‖; for a :class:`LimitSurfaceTable` the pure-rotation torque about the CoP per
μ f_N of the same bilinear steady state (23) the table samples (the paper's ``update_radius``),
so that h and r are consistent (S h reproduces the sampled torque). The two differ by the
bilinear CoR interpolation: 0.15–1.2 % at 21 × 21 cells (gradient line largest), → 0 as the
cells shrink.

    ż = (w − β z σ0/g(‖v_S‖)) ‖v_S‖,   w = −S h(r, v),

with β ≡ 1 for LuGre and β = β(S⁻¹z, −h‖v_S‖) of (16)–(18) for the Elasto-Plastic form (34).
The wrench at the CoP is (28): f_r = −(σ0 z + σ1 ż + σ2 U v) f_N, U = diag(1, 1, u), u of (29).
(The paper's (33) prints "+ z σ0‖v_S‖/g"; (32), (34) and a stable steady state need "−".)

``step`` advances a fixed step exactly for the twist held over the step (ż is linear in z:
z(t+h) = e^{−ah} z + (1 − e^{−ah})/a · w‖v_S‖ with a = β σ0‖v_S‖/g), so it is stable for any
step (Elasto-Plastic: β held at max(β(z_k), β(z_predicted)) as in the distributed model).
All contacts are advanced in one vectorised call: twists (m, 3), loads scalar or (m,).
Zero normal force gives an exactly zero wrench.
"""

from __future__ import annotations

import math
from typing import Union

import numpy as np

from .._checks import param
from .limit_surface import EllipsoidLimitSurface, LimitSurfaceTable, as_state, as_twists
from .params import TABLE_I, PlanarFrictionParams
from .reduced_fast import _OVERFLOW, make_kernel

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
        self._kern = None                        # the one-contact kernel (reduced_fast)
        self.params = params
        self.dt = param("dt", dt, minimum=0.0, strict=True, allow_array=False)
        self.elasto_plastic = bool(elasto_plastic)
        self.n_contacts = m
        self.limit_surface = limit_surface
        self._zc = np.zeros((3, m))              # component-major bristle state
        self._h = np.empty((3, m))
        self._u = np.empty((3, m))
        self.set_normal_force(normal_force)

    # --- configuration ---------------------------------------------------------------------
    def set_normal_force(self, normal_force) -> None:
        """Set f_N ≥ 0 (scalar or one per contact); 0 gives zero friction."""
        fn = param("normal_force", normal_force, minimum=0.0)
        if isinstance(fn, np.ndarray) and fn.size != self.n_contacts:
            raise ValueError(f"normal_force: has {fn.size} entries for {self.n_contacts} contacts")
        self.normal_force = fn
        self._neg_fn = -fn
        self._fn0 = float(np.ravel(fn)[0])
        self._kern = None

    def set_limit_surface(self, limit_surface: LimitSurfaceLike) -> None:
        """Swap the limit surface (e.g. ``table.rescaled(s)`` when a Hertz-like contact grows,
        Sec. VI-D); the bristle state is kept."""
        if not isinstance(limit_surface, (LimitSurfaceTable, EllipsoidLimitSurface)):
            raise ValueError("limit_surface: expected a LimitSurfaceTable or EllipsoidLimitSurface")
        self.limit_surface = limit_surface

    # what the one-contact kernel captures: setting any of these rebuilds it at the next step
    params = property(lambda self: self._params, lambda self, v: self._reconfigure("_params", v),
                      doc="The Table I parameters (PlanarFrictionParams).")
    dt = property(lambda self: self._dt, lambda self, v: self._reconfigure("_dt", v),
                  doc="The fixed step of :meth:`step` [s].")
    elasto_plastic = property(lambda self: self._ep, lambda self, v: self._reconfigure("_ep", v),
                              doc="Whether the bristle rate is the Elasto-Plastic (34).")
    limit_surface = property(lambda self: self._ls, lambda self, v: self._reconfigure("_ls", v),
                             doc="The limit surface (treated as read-only once given).")

    def _reconfigure(self, name, value) -> None:
        setattr(self, name, value)
        self._kern = None

    def __getstate__(self):
        # copies and pickles rebuild the kernel: it holds a view of this model's state
        d = self.__dict__.copy()
        d["_kern"] = None
        return d

    @property
    def cop(self) -> np.ndarray:
        """CoP of the contact the limit surface was built for, in grid coordinates."""
        return self.limit_surface.cop

    @property
    def z(self) -> np.ndarray:
        """Bristle deflections (m, 3) [m, m, m²] (a writable view of the internal state)."""
        return self._zc.T

    def reset(self) -> None:
        """Zero bristle deflections."""
        self._zc[...] = 0.0

    @property
    def state(self) -> np.ndarray:
        """Bristle deflections (m, 3) flattened, a copy."""
        return self.z.ravel().copy()

    @state.setter
    def state(self, value) -> None:
        self._zc[...] = self._state_of(value)

    # --- kernels ---------------------------------------------------------------------------
    def _twists(self, twist) -> np.ndarray:
        """Validated twists, component-major (3, m)."""
        t = as_twists(twist)
        if t.shape[0] != self.n_contacts:
            raise ValueError(f"twist: {t.shape[0]} twists for {self.n_contacts} contacts")
        return np.ascontiguousarray(t.T)

    def _state_of(self, state) -> np.ndarray:
        """Flat ``state`` ((m, 3) flattened) as component-major (3, m); ValueError naming
        ``state`` if its size is not 3m or it is not finite (the ODE entry points)."""
        z = as_state(state, 3 * self.n_contacts, "3 per contact")
        return np.ascontiguousarray(z.reshape(self.n_contacts, 3).T)

    def _rates(self, tc: np.ndarray, zc: np.ndarray):
        """For component-major twists tc (3, m) and states zc (3, m): u = w‖v_S‖ = −S h ‖v_S‖
        (into self._u, (3, m)) and a = β σ0‖v_S‖/g(‖v_S‖) (≥ tiny)."""
        p, ls = self.params, self.limit_surface
        r = ls.radius
        vx, vy, om = tc[0], tc[1], tc[2]
        h = ls.h_into(vx, vy, om, self._h)
        n = om * r
        n *= n
        n += vx * vx
        n += vy * vy
        np.sqrt(n, out=n)                                           # ‖v_S‖
        u = self._u
        np.multiply(h, n, out=u)
        u *= -1.0
        u[2] *= r                                                   # w‖v_S‖ = −S h ‖v_S‖
        if p.mu_s == p.mu_c:
            a = n * (p.sigma0 / p.mu_c)
            g = p.mu_c
        else:
            g = n * (1.0 / p.v_s)
            if p.gamma == 2.0:
                g *= g
            else:
                np.power(g, p.gamma, out=g)
            np.negative(g, out=g)
            np.exp(g, out=g)
            g *= p.mu_s - p.mu_c
            g += p.mu_c
            a = n * p.sigma0
            a /= g
        if self.elasto_plastic:
            self._ep_args = (h, n, g, r, self._beta_pre(h, n, g))
            self._a0 = np.maximum(a, _TINY)                 # LuGre rate, kept for the corrector
            a *= self._beta(zc, *self._ep_args)
        np.maximum(a, _TINY, out=a)
        return u, a

    def _finite_rates(self, tc: np.ndarray, zc: np.ndarray):
        """``_rates``, refusing twists whose ‖v_S‖² overflows (‖v_S‖ ≳ 1e154) with a
        ValueError naming ``twist`` and the contact, before anything is changed."""
        with np.errstate(over="ignore", invalid="ignore"):  # refused just below, by name
            u, a = self._rates(tc, zc)
        if not math.isfinite(a.max()):
            k = int(np.argmax(~np.isfinite(a)))
            raise ValueError(_OVERFLOW.format(*tc[:, k].tolist()) + f" (contact {k})")
        return u, a

    def _beta_pre(self, h, n, g) -> tuple:
        """What β of (34) takes from the twist alone (shared by β(z_k) and β(z_predicted)):
        ‖h‖, z_ba = s_ba z_max, z_max − z_ba, where that is > 0, where ‖v_S‖ > 0."""
        p = self.params
        hn = np.sqrt(h[0] * h[0] + h[1] * h[1] + h[2] * h[2])
        zmax = hn * (np.asarray(g) / p.sigma0)
        span = zmax * (1.0 - p.s_ba)
        return hn, p.s_ba * zmax, span, span > 0, n > 0

    def _beta(self, zc, h, n, g, r, pre=None) -> np.ndarray:
        """β(S⁻¹z, −h‖v_S‖) of (34) with (16)–(18); z_max = ‖S⁻¹z*‖ = ‖h‖ g/σ0."""
        hn, zba, span, spanpos, moving = pre if pre is not None else self._beta_pre(h, n, g)
        zt = zc[2] / r
        zn = np.sqrt(zc[0] * zc[0] + zc[1] * zc[1] + zt * zt)
        t = np.divide(zn - zba, span, out=np.ones_like(zn), where=spanpos)
        np.clip(t, 0.0, 1.0, out=t)
        # α = (1 − cos πt)/2 is exactly t at t = 0 and t = 1 (stuck, sliding): the cosine only
        # for the contacts in the transition
        mid = np.flatnonzero((t > 0.0) & (t < 1.0))
        alpha = t
        if mid.size:
            alpha[mid] = 0.5 - 0.5 * np.cos(math.pi * t[mid])
        # ε = (v̂ᵀẑ + 1)/2 with v ∝ −h: cos = −hᵀzs/(‖h‖‖zs‖); 1 where either vanishes
        den = zn * hn
        dot = h[0] * zc[0] + h[1] * zc[1] + h[2] * zt
        cos = np.divide(-dot, den, out=np.ones_like(zn), where=(den > 0) & moving)
        cos += 1.0
        cos *= 0.5
        alpha *= cos
        return alpha

    def _wrench(self, tc, zc, u, a) -> np.ndarray:
        """(28) with ż = u − a z: −(σ0 z + σ1 ż + σ2 U v) f_N, returned (m, 3) (a fresh array)."""
        p = self.params
        q = np.empty_like(zc)
        k = a * -p.sigma1
        k += p.sigma0
        np.multiply(zc, k, out=q)
        if p.sigma1:
            q += p.sigma1 * u
        if p.sigma2:
            q[0] += p.sigma2 * tc[0]
            q[1] += p.sigma2 * tc[1]
            q[2] += (p.sigma2 * self.limit_surface.viscous_torque_scale) * tc[2]
        q *= self._neg_fn
        return q.T

    def _step_one(self, vx: float, vy: float, om: float) -> np.ndarray:
        """The same update for one contact in plain floats, through ``h_scalar`` (the reference
        of the kernel of :mod:`.reduced_fast`, which inlines it)."""
        p, ls = self.params, self.limit_surface
        r = ls.radius
        hx, hy, ht = ls.h_scalar(vx, vy, om)
        rom = r * om
        n = math.sqrt(vx * vx + vy * vy + rom * rom)
        ux, uy, ut = -hx * n, -hy * n, -ht * n * r
        if p.mu_s == p.mu_c:
            g = p.mu_c
        else:
            x = n / p.v_s
            if p.gamma == 2.0:
                x = x * x
            else:
                try:
                    x = x ** p.gamma
                except OverflowError:                # a huge twist: g = μ_C, as in numpy
                    x = math.inf
            g = p.mu_c + (p.mu_s - p.mu_c) * math.exp(-x)
        a = p.sigma0 * n / g
        zc = self._zc
        zx, zy, zt = float(zc[0, 0]), float(zc[1, 0]), float(zc[2, 0])
        if self.elasto_plastic:
            # predictor–corrector for β: β only grows along the sliding direction, so take the
            # larger of β at the start and at the end of the frozen-β step; a bristle leaving
            # the elastic range within a long step is then not carried past z_max elastically
            beta = self._beta_one(zx, zy, zt, hx, hy, ht, n, g, r)
            ab = max(a * beta, _TINY)
            em = math.expm1(-ab * self.dt)
            c = em / ab
            px, py, pt = ((em + 1.0) * zx - c * ux, (em + 1.0) * zy - c * uy,
                          (em + 1.0) * zt - c * ut)
            beta = max(beta, self._beta_one(px, py, pt, hx, hy, ht, n, g, r))
            a *= beta
        if a < _TINY:
            a = _TINY
        em = math.expm1(-a * self.dt)
        c = em / a
        e = em + 1.0
        zx = e * zx - c * ux
        zy = e * zy - c * uy
        zt = e * zt - c * ut
        zc[0, 0], zc[1, 0], zc[2, 0] = zx, zy, zt
        k = p.sigma0 - p.sigma1 * a
        fn = -self._fn0
        s2 = p.sigma2
        return np.array([(k * zx + p.sigma1 * ux + s2 * vx) * fn,
                         (k * zy + p.sigma1 * uy + s2 * vy) * fn,
                         (k * zt + p.sigma1 * ut + s2 * ls.viscous_torque_scale * om) * fn])

    def _beta_one(self, zx, zy, zt, hx, hy, ht, n, g, r) -> float:
        p = self.params
        zt = zt / r
        zn = math.sqrt(zx * zx + zy * zy + zt * zt)
        hn = math.sqrt(hx * hx + hy * hy + ht * ht)
        zmax = hn * g / p.sigma0
        span = zmax * (1.0 - p.s_ba)
        t = (zn - p.s_ba * zmax) / span if span > 0 else 1.0
        t = min(max(t, 0.0), 1.0)
        alpha = 0.5 - 0.5 * math.cos(math.pi * t)
        den = zn * hn
        cos = -(hx * zx + hy * zy + ht * zt) / den if (den > 0 and n > 0) else 1.0
        return alpha * 0.5 * (cos + 1.0)

    # --- public API ------------------------------------------------------------------------
    def step(self, twist) -> np.ndarray:
        """Advance all contacts by ``dt`` with the twists (at the CoP) held constant; return the
        wrenches at the CoP at the end of the step, (3,) for one contact given a (3,) twist."""
        kern = self._kern
        if kern is not None:
            # one contact, a float (3,)/(1, 3) array or a list/tuple of 3 floats, finite sum:
            # the kernel (reduced_fast) steps and returns the wrench; anything else: None, and
            # the checks below
            f = kern(twist)
            if f is not None:
                return f
        if self.n_contacts == 1:
            # anything else the kernel did not take (ints, float32, Decimal, the first call):
            # validated (shape (3,) or (1, 3), real, finite, else a ValueError naming twist)
            t = self._twists(twist)
            vx, vy, om = float(t[0, 0]), float(t[1, 0]), float(t[2, 0])
            if kern is None:
                kern = self._kern = make_kernel(self)
            f = kern.step3(vx, vy, om)
            return f if np.ndim(twist) == 1 else f[None, :]
        return self._step_numpy(twist)

    def _step_numpy(self, twist) -> np.ndarray:
        """The vectorised step (any number of contacts): the reference of the kernels."""
        tc = self._twists(twist)
        zc = self._zc
        u, a = self._finite_rates(tc, zc)
        if self.elasto_plastic:                      # β = max(β(z_k), β(z_pred)), see _step_one
            a0 = self._a0
            beta = a / a0
            zp = zc.copy()
            self._advance(zp, u, a)
            np.maximum(beta, self._beta(zp, *self._ep_args), out=beta)
            np.multiply(a0, beta, out=a)
            np.maximum(a, _TINY, out=a)
        self._advance(zc, u, a)
        f = self._wrench(tc, zc, u, a)
        return f[0].copy() if np.ndim(twist) == 1 else f

    def _advance(self, zc: np.ndarray, u: np.ndarray, a: np.ndarray) -> None:
        """Exact step of ż = u − a z with u, a held: z ← e^{−ah} z + (1 − e^{−ah})/a u."""
        em = a * -self.dt
        np.expm1(em, out=em)                         # e^{−ah} − 1
        c = em / a                                   # −(1 − e^{−ah})/a
        em += 1.0
        zc *= em
        c = u * c
        zc -= c

    def derivative(self, state, twist) -> np.ndarray:
        """ż of (27)/(33)/(34), flat (3m,) in the layout of ``state``, for a flat ``state``
        ((m, 3) flattened) and the twists at the CoP."""
        tc = self._twists(twist)
        zc = self._state_of(state)
        u, a = self._finite_rates(tc, zc)
        return (u - a * zc).T.ravel()

    def wrench(self, state, twist) -> np.ndarray:
        """Wrench (28) at the CoP for a flat ``state`` and twists ((3,) for a (3,) twist)."""
        tc = self._twists(twist)
        zc = self._state_of(state)
        u, a = self._finite_rates(tc, zc)
        f = self._wrench(tc, zc, u, a)
        return f[0].copy() if np.ndim(twist) == 1 else f

    def steady_state(self, twist) -> np.ndarray:
        """Steady-state wrench −(g(‖v_S‖) w + σ2 U v) f_N with w = −S h (z* of (26)/(32), ż = 0).
        At zero twist the steady state is undefined (any |z| ≤ z_max sticks); zero is returned."""
        tc = self._twists(twist)
        zc = np.zeros_like(tc)
        el, self.elasto_plastic = self.elasto_plastic, False
        try:
            u, a = self._finite_rates(tc, zc)
        finally:
            self.elasto_plastic = el
        p = self.params
        # σ0 z* = σ0 u/a = g w (u = w‖v_S‖, a = σ0‖v_S‖/g)
        moving = a > _TINY
        q = np.where(moving, p.sigma0 * u / a, 0.0)
        q[0] += p.sigma2 * tc[0]
        q[1] += p.sigma2 * tc[1]
        q[2] += p.sigma2 * self.limit_surface.viscous_torque_scale * tc[2]
        q *= self._neg_fn
        return q[:, 0].copy() if np.ndim(twist) == 1 else q.T.copy()
