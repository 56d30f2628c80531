"""Distributed planar LuGre model (9)–(14) and its Elasto-Plastic extension (15)–(18).

Every loaded cell of a :class:`~fric_core.planar.surfaces.ContactSurface` carries a 2-D bristle
z (10) driven by the cell velocity v_t = v + ω × ρ of the body twist ``[v_x, v_y, ω]`` at the CoP.
The wrench at the CoP is the sum (21)–(22) of the cell forces (9) and their moments.

Two forms:

* ``derivative(state, twist)`` / ``wrench(state, twist)``: the ODE right-hand side (10)/(15)
  and the output (13)–(14), for a general solver (state = z flattened, shape (2M,)).
* ``step(twist)``: a fixed-step update that is exact for the velocity held over the step.
  Given the body twist the cells are independent and (10) is linear in z:
  ż = v − a z with a = σ0‖v‖/g(‖v‖), so z(t+h) = e^{−ah} z + (1 − e^{−ah})/a · v. It is stable
  for any step (the explicit Euler step of the paper's C++ code needs h < 2/a ≈ 2·10⁻⁴ s at
  1 cm/s), and reaches the steady state (11) exactly. The Elasto-Plastic factor β (17) is held
  over the step (a → β a; β = 0 gives the pure spring z += v h), taken as the larger of β at the
  start and at the end of a predictor step, so long steps do not carry a bristle elastically past
  z_max. The returned wrench is (9) at the end of the step with ż = v − β a z.

Normal force: the wrench is proportional to f_N ((3), (9)); ``set_normal_force(0)`` is valid and
gives an exactly zero wrench while the bristles keep their deflection.
"""

from __future__ import annotations

import math

import numpy as np

from .._checks import param
from .limit_surface import as_state, as_twists, steady_state_wrench
from .reduced_fast import _OVERFLOW
from .params import TABLE_I, PlanarFrictionParams
from .surfaces import ContactSurface

__all__ = ["DistributedLuGre"]

_TINY = 1e-300
_SHAPE3 = (3,)
#: [m/s] a twist whose cell speeds may reach this is refused: ‖v‖² and ‖v‖²/v_s² stay far inside
#: the float range below it (‖v‖² alone overflows from ~1.3e154), and no contact slides at 1e100
_MAX_SPEED = 1e100


class DistributedLuGre:
    """Distributed planar LuGre model over the loaded cells of ``surface``.

    Parameters
    ----------
    surface : ContactSurface
        Pressure grid; its ``normal_force`` is the initial load.
    params : PlanarFrictionParams
        Table I parameters (default p = 1).
    dt : float
        Fixed step of :meth:`step` [s] (> 0).
    elasto_plastic : bool
        Use the planar Elasto-Plastic bristle rate (15)–(18) instead of (10).

    Attributes
    ----------
    z : (2, M) bristle deflections of the loaded cells [m] (a view; ``state`` is a flat copy).
    normal_force : current f_N [N].
    """

    def __init__(self, surface: ContactSurface, params: PlanarFrictionParams = TABLE_I[1],
                 dt: float = 1e-4, elasto_plastic: bool = False) -> None:
        if not isinstance(surface, ContactSurface):
            raise ValueError(f"surface: expected a ContactSurface, got {type(surface).__name__}")
        if not isinstance(params, PlanarFrictionParams):
            raise ValueError(f"params: expected PlanarFrictionParams, got {type(params).__name__}")
        self.params = params
        self.dt = param("dt", dt, minimum=0.0, strict=True, allow_array=False)
        self.elasto_plastic = bool(elasto_plastic)
        self._set_geometry(surface)
        self.normal_force = surface.normal_force
        self.z = np.zeros((2, self.n_cells))
        self._alloc()

    # --- configuration ---------------------------------------------------------------------
    def _set_geometry(self, surface: ContactSurface) -> None:
        self.surface = surface
        self.n_cells = surface.n_loaded
        self._rho = np.ascontiguousarray(surface.rho)
        # a bound on the cell speed |v| + |ω| ρ_max below which ‖v_cell‖² cannot overflow
        self._rho_max = float(np.abs(self._rho).sum(axis=0).max()) if self.n_cells else 0.0
        w = surface.weights
        self._wmat = np.ascontiguousarray(np.stack([w, w * self._rho[0], w * self._rho[1]], axis=1))

    def _alloc(self) -> None:
        m = self.n_cells
        self._vc = np.empty((2, m))
        self._tmp = np.empty((2, m))
        self._q = np.empty((2, m))
        self._s2, self._s, self._g, self._a = (np.empty(m) for _ in range(4))
        self._em, self._e, self._c, self._k = (np.empty(m) for _ in range(4))
        self._b1, self._b2 = np.empty(m), np.empty(m)
        self._a0 = np.empty(m)
        self._zp = np.empty((2, m))
        self._rest = np.empty(m, dtype=bool)
        p = self.params
        self._const_g = p.mu_s == p.mu_c
        self._gamma2 = p.gamma == 2.0

    def set_normal_force(self, normal_force: float) -> None:
        """Set f_N (≥ 0; 0 gives zero friction). The pressure shape is kept."""
        self.normal_force = param("normal_force", normal_force, minimum=0.0, allow_array=False)

    def set_surface(self, surface: ContactSurface, keep_state: bool = True) -> None:
        """Replace the pressure grid (e.g. a Hertz-like surface at a new load, (45)–(46)) and take
        its normal force. The bristle state is kept when the loaded cells correspond one to one
        (same count), otherwise it must be reset (``keep_state=False``)."""
        if not isinstance(surface, ContactSurface):
            raise ValueError(f"surface: expected a ContactSurface, got {type(surface).__name__}")
        if keep_state and surface.n_loaded != self.n_cells:
            raise ValueError(f"surface: has {surface.n_loaded} loaded cells, the state has "
                             f"{self.n_cells}; pass keep_state=False to reset")
        self._set_geometry(surface)
        self.normal_force = surface.normal_force
        if not keep_state:
            self.z = np.zeros((2, self.n_cells))
            self._alloc()

    @property
    def cop(self) -> np.ndarray:
        """CoP of the current surface in grid coordinates (where twists and wrenches live)."""
        return self.surface.cop

    def reset(self) -> None:
        """Zero bristle deflections."""
        self.z[...] = 0.0

    @property
    def state(self) -> np.ndarray:
        """Bristle deflections flattened ([z_x of every cell, z_y of every cell]), a copy."""
        return self.z.ravel().copy()

    @state.setter
    def state(self, value) -> None:
        self.z[...] = self._state_of(value)

    # --- kernels ---------------------------------------------------------------------------
    def _cell_rates(self, vx: float, vy: float, om: float, z: np.ndarray) -> np.ndarray:
        """Fill the cell velocities and return a = β σ0 ‖v‖/g(‖v‖) (≥ _TINY) per cell.

        A twist whose cell speeds may reach ``_MAX_SPEED`` (|v_x| + |v_y| + |ω| ρ_max ≥ 1e100 m/s)
        is refused with a ValueError naming ``twist`` before any state changes (beyond ~1e154
        ‖v‖² overflowed: NaN wrenches, NaN left in the bristles)."""
        if abs(vx) + abs(vy) + abs(om) * self._rho_max >= _MAX_SPEED:
            raise ValueError(_OVERFLOW.format(float(vx), float(vy), float(om)))
        p, vc, s2, s, g, a = self.params, self._vc, self._s2, self._s, self._g, self._a
        np.multiply(self._rho[1], -om, out=vc[0])
        vc[0] += vx
        np.multiply(self._rho[0], om, out=vc[1])
        vc[1] += vy
        np.multiply(vc, vc, out=self._tmp)
        np.add(self._tmp[0], self._tmp[1], out=s2)
        np.sqrt(s2, out=s)
        if self._const_g:
            np.multiply(s, p.sigma0 / p.mu_c, out=a)
        else:
            if self._gamma2:
                np.multiply(s2, -1.0 / (p.v_s * p.v_s), out=g)
            else:
                np.multiply(s, 1.0 / p.v_s, out=g)
                np.power(g, p.gamma, out=g)
                np.negative(g, out=g)
            np.exp(g, out=g)
            g *= p.mu_s - p.mu_c
            g += p.mu_c
            np.divide(s, g, out=a)
            a *= p.sigma0
        if self.elasto_plastic:
            np.maximum(a, _TINY, out=self._a0)            # LuGre rate, kept for the corrector
            a *= self._beta(z)
        np.maximum(a, _TINY, out=a)
        return a

    def _beta(self, z: np.ndarray) -> np.ndarray:
        """β(z, v) of (16)–(18) per cell (needs the cell speeds in self._s, g in self._g)."""
        p = self.params
        zn, b, t = self._b1, self._b2, self._k
        np.multiply(z, z, out=self._tmp)
        np.add(self._tmp[0], self._tmp[1], out=zn)
        np.sqrt(zn, out=zn)
        # z_max = ‖z*‖ = g/σ0 (11); z_ba = s_ba z_max; t ∈ [0, 1] across the transition
        if self._const_g:
            t.fill(p.mu_c * (1.0 / p.sigma0))                  # t = z_max
        else:
            np.multiply(self._g, 1.0 / p.sigma0, out=t)
        np.multiply(t, p.s_ba, out=b)
        np.subtract(zn, b, out=b)                              # ‖z‖ − z_ba
        t *= 1.0 - p.s_ba                                      # z_max − z_ba
        np.divide(b, t, out=t)
        np.maximum(t, 0.0, out=t)                              # clip to [0, 1] (np.clip is
        np.minimum(t, 1.0, out=t)                              # slower on small arrays)
        # ᾱ = ½ sin(π(‖z‖ − (z_max + z_ba)/2)/(z_max − z_ba)) + ½ = ½ − ½ cos(π t)   (6), (18)
        np.multiply(t, math.pi, out=t)
        np.cos(t, out=t)
        np.multiply(t, -0.5, out=t)
        t += 0.5
        # ε = (v̂ᵀẑ + 1)/2 (16); taken as 1 where v or z vanishes (β = ᾱ there)
        vc, tmp = self._vc, self._tmp
        np.multiply(vc, z, out=tmp)
        np.add(tmp[0], tmp[1], out=b)                          # v·z (exactly 0 if v or z is)
        np.multiply(zn, self._s, out=zn)                       # ‖v‖‖z‖
        at_rest = np.less_equal(zn, 0.0, out=self._rest)
        np.maximum(zn, _TINY, out=zn)
        np.divide(b, zn, out=b)                                # cos(v, z) ...
        np.copyto(b, 1.0, where=at_rest)                       # ... and 1 where v or z is 0
        b += 1.0
        b *= 0.5
        t *= b
        return t

    def _wrench_of(self, z: np.ndarray, a: np.ndarray) -> np.ndarray:
        """(9), (21)–(22): −Σ (σ0 z + σ1 ż + σ2 v) p A with ż = v − a z, and its moment."""
        p, q = self.params, self._q
        np.multiply(a, -p.sigma1, out=self._k)
        self._k += p.sigma0
        np.multiply(z, self._k, out=q)
        np.multiply(self._vc, p.sigma1 + p.sigma2, out=self._tmp)
        q += self._tmp
        r = q @ self._wmat
        fn = self.normal_force
        return np.array([-r[0, 0] * fn, -r[1, 0] * fn, (r[0, 2] - r[1, 1]) * fn])

    # --- public API ------------------------------------------------------------------------
    def step(self, twist) -> np.ndarray:
        """Advance the bristles by ``dt`` with the twist [v_x, v_y, ω] (at the CoP) held constant
        and return the wrench [f_x, f_y, τ] at the CoP at the end of the step.

        Elasto-Plastic: β is taken as max(β(z_k), β(z_pred)), z_pred being the step with β(z_k)
        frozen (a predictor–corrector: β only grows along the sliding direction, so a bristle
        leaving the elastic range within a long step is not carried past z_max elastically)."""
        if (type(twist) is np.ndarray and twist.shape == _SHAPE3
                and twist.dtype == np.float64):
            vx, vy, om = twist.tolist()
        elif (type(twist) in (list, tuple) and len(twist) == 3
              and all(type(c) is float for c in twist)):
            vx, vy, om = twist
        else:             # ints, other shapes, not numbers: validated, or a ValueError naming it
            vx, vy, om = self._one_twist(twist).tolist()
        if not (math.isfinite(vx) and math.isfinite(vy) and math.isfinite(om)):
            raise ValueError(f"twist: must be finite, got {twist!r}")
        z = self.z
        a = self._cell_rates(vx, vy, om, z)
        if self.elasto_plastic:
            a0 = self._a0
            beta0 = a / a0                                  # β(z_k) (a0 > 0 where it matters)
            zp = self._zp
            zp[...] = z
            self._advance(zp, a)
            np.maximum(beta0, self._beta(zp), out=beta0)
            np.multiply(a0, beta0, out=a)
            np.maximum(a, _TINY, out=a)
        self._advance(z, a)
        return self._wrench_of(z, a)

    def _advance(self, z: np.ndarray, a: np.ndarray) -> None:
        """Exact step of ż = v − a z, v = self._vc and a held: z ← e^{−ah} z + (1 − e^{−ah})/a v."""
        em, c = self._em, self._c
        np.multiply(a, -self.dt, out=em)
        np.expm1(em, out=em)                          # e^{−ah} − 1
        np.divide(em, a, out=c)                       # −(1 − e^{−ah})/a
        em += 1.0                                     # e^{−ah}
        z *= em
        np.multiply(self._vc, c, out=self._tmp)
        z -= self._tmp

    @staticmethod
    def _one_twist(twist) -> np.ndarray:
        """One validated twist (3,) (a (1, 3) array is accepted); ValueError naming ``twist``."""
        t = as_twists(twist)
        if t.shape[0] != 1:
            raise ValueError(f"twist: expected one twist of shape (3,), got {np.shape(twist)}")
        return t[0]

    def _state_of(self, state) -> np.ndarray:
        """``state`` as the (2, M) bristle array; ValueError naming ``state`` if its size is not
        2M or it is not finite (the ODE entry points; ``step`` keeps its own state)."""
        z = as_state(state, 2 * self.n_cells, "2 per loaded cell")
        return z.reshape(2, self.n_cells)

    def derivative(self, state, twist) -> np.ndarray:
        """ż of (10) (or (15) with ``elasto_plastic``) for a flat ``state`` and the twist at the
        CoP, flat (2M,). The Jacobian ∂ż/∂z of (10) is diagonal (−a per cell and component)."""
        z = self._state_of(state)
        t = self._one_twist(twist)
        a = self._cell_rates(t[0], t[1], t[2], z)
        return (self._vc - a * z).ravel()

    def jacobian_diagonal(self, state, twist) -> np.ndarray:
        """Diagonal of ∂ż/∂z, flat (2M,): −a = −σ0‖v‖/g(‖v‖) per cell and component. For (10)
        this is the whole Jacobian (the cells and components decouple given the twist); for the
        Elasto-Plastic rate (15) it omits ∂β/∂z (β held, as in ``step``).
        Pass ``scipy.sparse.diags(...)`` as ``jac`` to an implicit solver (BDF, Radau, LSODA's
        banded mode) instead of finite-differencing 2M states."""
        z = self._state_of(state)
        t = self._one_twist(twist)
        a = self._cell_rates(t[0], t[1], t[2], z)
        return -np.concatenate([a, a])

    def wrench(self, state, twist) -> np.ndarray:
        """Wrench (13)–(14) at the CoP for a flat ``state`` and twist (ż from (10)/(15))."""
        z = self._state_of(state)
        t = self._one_twist(twist)
        a = self._cell_rates(t[0], t[1], t[2], z)
        return self._wrench_of(z, a)

    def steady_state(self, twist, bilinear: bool = True) -> np.ndarray:
        """Steady-state wrench (11)–(14) at the current load, with the bilinear CoR
        interpolation (23) unless ``bilinear=False``. (3,) or (m, 3) like ``twist``."""
        return steady_state_wrench(self.surface, twist, self.params, self.normal_force, bilinear)
