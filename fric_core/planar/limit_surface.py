"""Limit surfaces: direct integration (7)–(8), distributed steady state (11)–(12) with the
bilinear CoR interpolation (23), and the pre-computed normalised limit surface (31), (35)–(44).

Twists ``[v_x, v_y, ω]`` and wrenches ``[f_x, f_y, τ]`` are at the CoP of the surface and are
arrays of shape (3,) or (m, 3); every function here is vectorised over the m twists (the
pre-computation evaluates all 4·N_ls·(N_ls+1) samples, with their four bilinear corners, in a
few array operations).
"""

from __future__ import annotations

import math
from typing import Optional

import numpy as np

from .._checks import param, real_array
from .params import PlanarFrictionParams
from .surfaces import ContactSurface

__all__ = ["limit_surface_wrench", "steady_state_wrench", "LimitSurfaceTable",
           "EllipsoidLimitSurface", "as_twists", "as_state"]

_CHUNK = 1 << 21      # cell-velocity elements per chunk (≈ 16 MB per temporary)


def as_twists(twist, name: str = "twist") -> np.ndarray:
    """``twist`` as a float (m, 3) array; ValueError naming ``name`` if not finite or mis-shaped.

    Parameters
    ----------
    twist : array_like
        One twist (3,) or m twists (m, 3) ``[v_x, v_y, ω]`` [m/s, m/s, rad/s].
    name : str
        The argument's name for the error message.

    Returns
    -------
    ndarray
        The twists as floats, shape (m, 3) (m = 1 for a (3,) twist).

    Raises
    ------
    ValueError
        Naming ``name``, if ``twist`` is not real, not finite or of another shape.
    """
    t = real_array(twist, name, "real numbers of shape (3,) or (m, 3)")
    if t.ndim == 1:
        t = t[None, :]
    if t.ndim != 2 or t.shape[1] != 3:
        raise ValueError(f"{name}: expected shape (3,) or (m, 3), got {np.shape(twist)}")
    if not np.all(np.isfinite(t)):
        raise ValueError(f"{name}: must be finite (NaN or inf given)")
    return t


def as_state(state, size: int, per: str) -> np.ndarray:
    """Validate a flat model state.

    A flat model state as a float array of ``size`` finite values; ValueError naming
    ``state`` otherwise (``per`` says what one unit holds, e.g. "2 per loaded cell").

    Parameters
    ----------
    state : array_like
        The model state, ``size`` real numbers (any shape).
    size : int
        The number of values the model's state holds.
    per : str
        What one unit of the state holds, for the error message.

    Returns
    -------
    ndarray
        The state as floats, in the shape given (not flattened).

    Raises
    ------
    ValueError
        If ``state`` is not real, does not hold ``size`` values or is not finite.
    """
    z = real_array(state, "state", f"{size} real numbers")
    if z.size != size:
        raise ValueError(f"state: expected {size} values ({per}), got shape {z.shape}")
    if not np.all(np.isfinite(z)):
        raise ValueError("state: must be finite (NaN or inf given)")
    return z


def _ss_unit_load(rho: np.ndarray, w: np.ndarray, t: np.ndarray, mu_c: float, mu_s: float,
                  v_s: float, gamma: float, sigma2: float) -> np.ndarray:
    """Σ over cells of the steady-state cell force (12) for unit load: −Σ (g v̂ + σ2 v) w and its
    moment about the CoP, for (m, 3) twists at the CoP. Cells at rest contribute σ2·0 = 0."""
    out = np.empty((t.shape[0], 3))
    rows = max(1, _CHUNK // max(1, w.size))
    wx, wy = w * rho[0], w * rho[1]
    reach = float(np.max(np.hypot(rho[0], rho[1]))) if w.size else 0.0
    for a in range(0, t.shape[0], rows):
        tt = t[a:a + rows]
        om = tt[:, 2:3]
        vx = tt[:, 0:1] - om * rho[1]
        vy = tt[:, 1:2] + om * rho[0]
        s = np.sqrt(vx * vx + vy * vy)
        # a cell at the CoR (speed at round-off level of the twist) has no sliding direction:
        # it carries zero measure in (7)–(8), so it contributes nothing (not a random v̂)
        floor = 1e-12 * (np.abs(tt[:, 0:1]) + np.abs(tt[:, 1:2]) + np.abs(om) * reach)
        s = np.where(s > floor, s, 0.0)
        if mu_s != mu_c:
            x = s * (1.0 / v_s)
            x = x * x if gamma == 2.0 else x ** gamma
            gs = mu_c + (mu_s - mu_c) * np.exp(-x)
        else:
            gs = mu_c
        k = np.divide(gs, s, out=np.zeros_like(s), where=s > 0)
        if sigma2:
            k += sigma2
        qx = vx * k
        qy = vy * k
        out[a:a + rows, 0] = -(qx @ w)
        out[a:a + rows, 1] = -(qy @ w)
        out[a:a + rows, 2] = -(qy @ wx - qx @ wy)
    return out


def _bilinear_corners(surface: ContactSurface, t: np.ndarray):
    """For the twists whose CoR lies inside the grid, the four corner twists of the enclosing
    cell (rotations with the same ω about each corner, CoR*) and their weights (23)."""
    om = t[:, 2]
    with np.errstate(divide="ignore", invalid="ignore"):
        corx = np.where(om != 0, -t[:, 1] / om, np.inf) + surface.cop[0]   # grid frame
        cory = np.where(om != 0, t[:, 0] / om, np.inf) + surface.cop[1]
    half, d, n = 0.5 * surface.size, surface.cell_size, surface.n_cells
    inside = (np.abs(corx) < half) & (np.abs(cory) < half)
    idx = np.nonzero(inside)[0]
    fx = (corx[idx] + half) / d
    fy = (cory[idx] + half) / d
    ix = np.clip(np.floor(fx), 0, n - 1)
    iy = np.clip(np.floor(fy), 0, n - 1)
    dx, dy = fx - ix, fy - iy
    twists = np.empty((idx.size, 4, 3))
    weights = np.empty((idx.size, 4))
    o = om[idx]
    for c, (ox, oy, wgt) in enumerate(((0, 0, (1 - dx) * (1 - dy)), (0, 1, (1 - dx) * dy),
                                       (1, 0, dx * (1 - dy)), (1, 1, dx * dy))):
        px = (ix + ox) * d - half - surface.cop[0]     # corner relative to the CoP
        py = (iy + oy) * d - half - surface.cop[1]
        twists[:, c, 0] = o * py                        # v_CoP of a rotation ω about p
        twists[:, c, 1] = -o * px
        twists[:, c, 2] = o
        weights[:, c] = wgt
    return idx, twists, weights


def steady_state_wrench(surface: ContactSurface, twist,
                        params: Optional[PlanarFrictionParams] = None,
                        normal_force: Optional[float] = None, bilinear: bool = True) -> np.ndarray:
    """Steady-state wrench of the distributed model at the CoP, (11)–(14) with (21)–(22).

    ``params=None`` means Coulomb friction with μ = 1 and no viscosity, i.e. the limit surface
    (7)–(8). With ``bilinear`` the wrench of a twist whose CoR lies inside the grid is the
    bilinear interpolation (23) of the wrenches of rotations about the four corners of the cell
    enclosing the CoR, which removes the steps of Fig. 10. Returns (3,) or (m, 3) like ``twist``.

    Parameters
    ----------
    surface : ContactSurface
        The contact surface (its loaded cells ``rho``, ``weights`` and, by default, its load).
    twist : array_like
        Twist(s) at the CoP, (3,) or (m, 3) ``[v_x, v_y, ω]`` [m/s, m/s, rad/s].
    params : PlanarFrictionParams or None
        The friction parameters (μ_c, μ_s, v_s, γ, σ2 of (12)); None: Coulomb with μ = 1.
    normal_force : float or None
        The normal load f_N [N], >= 0; None: ``surface.normal_force``.
    bilinear : bool
        Interpolate over the cell enclosing the CoR (23).

    Returns
    -------
    ndarray
        The wrench(es) ``[f_x, f_y, τ]`` [N, N, N m] at the CoP, (3,) or (m, 3) like ``twist``.
    """
    t = as_twists(twist)
    fn = surface.normal_force if normal_force is None else param(
        "normal_force", normal_force, minimum=0.0, allow_array=False)
    p = params if params is not None else PlanarFrictionParams.coulomb(1.0)
    args = (surface.rho, surface.weights)
    coef = (p.mu_c, p.mu_s, p.v_s, p.gamma, p.sigma2)
    out = _ss_unit_load(*args, t, *coef) if not bilinear else np.empty((t.shape[0], 3))
    if bilinear:
        idx, ct, cw = _bilinear_corners(surface, t)
        mask = np.ones(t.shape[0], bool)
        mask[idx] = False
        if mask.any():
            out[mask] = _ss_unit_load(*args, t[mask], *coef)
        if idx.size:
            fc = _ss_unit_load(*args, ct.reshape(-1, 3), *coef).reshape(idx.size, 4, 3)
            out[idx] = np.einsum("mc,mcj->mj", cw, fc)
    out *= fn
    return out[0] if np.ndim(twist) == 1 else out


def limit_surface_wrench(surface: ContactSurface, twist, mu: float = 1.0) -> np.ndarray:
    """Coulomb limit surface wrench by direct integration (7)–(8).

    Coulomb limit surface by direct integration (7)–(8) over the cells (21)–(22):
    f = −μ Σ v̂ p A, τ = −μ Σ ρ × v̂ p A, at the CoP. Returns (3,) or (m, 3) like ``twist``.

    Parameters
    ----------
    surface : ContactSurface
        The contact surface, carrying its normal load.
    twist : array_like
        Twist(s) at the CoP, (3,) or (m, 3) ``[v_x, v_y, ω]`` [m/s, m/s, rad/s].
    mu : float
        The friction coefficient μ [-], > 0.

    Returns
    -------
    ndarray
        The wrench(es) ``[f_x, f_y, τ]`` [N, N, N m] at the CoP, (3,) or (m, 3) like ``twist``.
    """
    mu = param("mu", mu, minimum=0.0, strict=True, allow_array=False)
    return steady_state_wrench(surface, twist, PlanarFrictionParams.coulomb(mu), bilinear=False)


class _LimitSurface:
    """What both limit-surface forms share: :meth:`h` over :meth:`h_into` of the subclass."""

    def h(self, twist) -> np.ndarray:
        """Normalised limit-surface wrench h(r, v) (31) of one twist (3,) or of m twists (m, 3)
        (the subclass's ``h_into``: the ellipsoid (24) or the table look-up (43)); 0 at zero
        twist (no sliding direction)."""
        t = as_twists(twist)
        out = np.empty((3, t.shape[0]))
        tc = np.ascontiguousarray(t.T)
        self.h_into(tc[0], tc[1], tc[2], out)
        return out[:, 0] if np.ndim(twist) == 1 else out.T.copy()


class EllipsoidLimitSurface(_LimitSurface):
    """The ellipsoid approximation (24) of the normalised limit surface.

    The ellipsoid approximation (24) of the normalised limit surface of a rim contact of radius
    r: h(v) = −v_S/‖v_S‖ with v_S = S v, S = diag(1, 1, r). Same interface as
    :class:`LimitSurfaceTable` so the reduced model takes either.

    (The paper prints S = diag([1 0 r]); the rim contact it describes and the remark that
    S² shapes the ellipsoid f_eᵀ(S²)⁻¹f_e = (μ f_N)² require diag(1, 1, r).)

    Parameters
    ----------
    radius : float
        The rim radius r [m], > 0.
    viscous_torque_scale : float
        u of (29) [m²], >= 0: the viscous torque (30) is σ2 ω f_N u.
    cop : array_like
        The centre of pressure in grid coordinates [m], (2,).
    """

    def __init__(self, radius: float, viscous_torque_scale: float = 0.0, cop=(0.0, 0.0)) -> None:
        self.radius = param("radius", radius, minimum=0.0, strict=True, allow_array=False)
        self.viscous_torque_scale = param("viscous_torque_scale", viscous_torque_scale,
                                          minimum=0.0, allow_array=False)
        self.cop = np.asarray(cop, dtype=float)

    @classmethod
    def from_surface(cls, surface: ContactSurface) -> "EllipsoidLimitSurface":
        """r from (25), u from (29) and the CoP of ``surface``."""
        return cls(surface.rim_radius, surface.viscous_torque_scale, surface.cop)

    def rescaled(self, factor: float) -> "EllipsoidLimitSurface":
        """The same shape ``factor`` times larger: r scales by the factor, u by its square."""
        factor = param("factor", factor, minimum=0.0, strict=True, allow_array=False)
        return EllipsoidLimitSurface(self.radius * factor, self.viscous_torque_scale * factor ** 2,
                                     self.cop * factor)

    def h_into(self, vx, vy, om, out: np.ndarray) -> np.ndarray:
        """h for 1-D component arrays, written into ``out`` (3, m); h = 0 at zero twist."""
        r = self.radius
        n = np.sqrt(vx * vx + vy * vy + (r * om) ** 2)
        inv = np.divide(-1.0, n, out=np.zeros_like(n), where=n > 0)
        np.multiply(vx, inv, out=out[0])
        np.multiply(vy, inv, out=out[1])
        np.multiply(om, r * inv, out=out[2])
        return out

    def h_scalar(self, vx: float, vy: float, om: float) -> tuple:
        """h for one twist in plain floats; (0, 0, 0) at zero twist."""
        rom = self.radius * om
        n = math.sqrt(vx * vx + vy * vy + rom * rom)
        if n == 0.0:
            return (0.0, 0.0, 0.0)
        return (-vx / n, -vy / n, -rom / n)


class LimitSurfaceTable(_LimitSurface):
    """Pre-computed normalised limit surface h(r, v) (31) on a spherical grid, (35)–(44).

    Velocity samples (35) ``[r' cos θ sin ϕ, r' sin θ sin ϕ, cos ϕ]`` on the nodes
    θ = i_θ·π/(2 N_ls) (i_θ = 0 … 4N_ls − 1, periodic) and ϕ = i_ϕ·π/(2 N_ls) (i_ϕ = 0 … N_ls)
    hold the Coulomb steady-state wrench with the bilinear CoR interpolation (23) (Table I, p = 0),
    normalised by the maximum force (pure translation) and torque (pure rotation about the CoP).
    Look-up (37)–(44): θ from atan2(v_y, v_x) (+π and a sign flip sgn_p(ω) for ω < 0), ϕ from
    atan2(‖v_t‖, r|ω|) — the inverse of (35); (38) as printed swaps the two arguments — and bilinear
    interpolation between the four nodes of the enclosing cell.

    ``radius`` is r of the current surface, ``radius_sampled`` r' of the surface the table was
    computed for. r is the pure-rotation torque about the CoP per μ f_N of the bilinear steady
    state (23) (the paper's ``update_radius``), not ``surface.rim_radius`` (25): they differ by
    0.15–1.2 % at 21 × 21 cells. :meth:`rescaled` changes r only (Sec. VI-D): a surface scaled
    by s has h_s(v, ω) = h(v, sω), which the look-up with r = s r' reproduces without
    recomputation.

    Parameters
    ----------
    nodes : ndarray
        The normalised wrenches at the velocity samples (35), shape (4 N_ls, N_ls + 1, 3),
        N_ls >= 2 (:meth:`compute` builds them).
    radius : float
        r of the current surface [m], > 0.
    radius_sampled : float
        r' of the surface the table was computed for [m], > 0.
    viscous_torque_scale : float
        u of (29) [m²], >= 0: the viscous torque (30) is σ2 ω f_N u.
    tau_max : float
        The pure-rotation torque about the CoP per μ f_N [m] (the torque normalisation).
    cop : array_like
        The centre of pressure in grid coordinates [m], (2,).
    """

    def __init__(self, nodes: np.ndarray, radius: float, radius_sampled: float,
                 viscous_torque_scale: float, tau_max: float, cop) -> None:
        nodes = np.asarray(nodes, dtype=float)
        if nodes.ndim != 3 or nodes.shape[2] != 3 or nodes.shape[0] != 4 * (nodes.shape[1] - 1):
            raise ValueError(f"nodes: expected shape (4 N_ls, N_ls + 1, 3), got {nodes.shape}")
        self.n_ls = nodes.shape[1] - 1
        if self.n_ls < 2:
            raise ValueError(f"n_ls: resolution must be >= 2, got {self.n_ls}")
        self.nodes = nodes
        # per-cell bilinear coefficients (43): h = A + Δθ B + Δϕ (C + Δθ D), cells (i_θ, i_ϕ)
        t00 = nodes[:, :-1]
        t10 = np.roll(nodes, -1, axis=0)[:, :-1]
        t01 = nodes[:, 1:]
        t11 = np.roll(nodes, -1, axis=0)[:, 1:]
        coef = np.concatenate([t00, t10 - t00, t01 - t00, t11 - t10 - t01 + t00], axis=2)
        coef = coef.reshape(-1, 12)
        self._coef_t = np.ascontiguousarray(coef.T)                 # (12, cells): rows gather fast
        self._coef_list = [tuple(row) for row in coef.tolist()]
        self._set_scalars(radius, radius_sampled, viscous_torque_scale, tau_max, cop)

    def _set_scalars(self, radius, radius_sampled, viscous_torque_scale, tau_max, cop) -> None:
        """The size-dependent scalars (r, r', u, τ_max, CoP); all :meth:`rescaled` changes."""
        self.radius = param("radius", radius, minimum=0.0, strict=True, allow_array=False)
        self.radius_sampled = param("radius_sampled", radius_sampled, minimum=0.0, strict=True,
                                    allow_array=False)
        self.viscous_torque_scale = param("viscous_torque_scale", viscous_torque_scale,
                                          minimum=0.0, allow_array=False)
        self.tau_max = float(tau_max)
        self.cop = np.asarray(cop, dtype=float)

    @classmethod
    def compute(cls, surface: ContactSurface, n_ls: int = 20,
                bilinear: bool = True) -> "LimitSurfaceTable":
        """Pre-compute the table for ``surface`` at resolution N_ls (N_ls cells over π/2)."""
        try:
            n = int(n_ls)
        except (TypeError, ValueError):
            raise ValueError(f"n_ls: expected an integer, got {n_ls!r}") from None
        if n != n_ls or n < 2:
            raise ValueError(f"n_ls: resolution must be an integer >= 2, got {n_ls!r}")
        unit = surface.with_normal_force(1.0)
        tau_max = abs(steady_state_wrench(unit, [0.0, 0.0, 1.0], bilinear=bilinear)[2])
        f_max = abs(steady_state_wrench(unit, [1.0, 0.0, 0.0], bilinear=bilinear)[0])  # = μ = 1
        # r: the (25)-like pure-rotation torque per μ f_N, but of the bilinear steady state (23)
        # the nodes sample (not rim_radius): S h then reproduces the sampled torque
        r_p = tau_max
        th = np.arange(4 * n) * (math.pi / (2 * n))
        ph = np.arange(n + 1) * (math.pi / (2 * n))
        TH, PH = np.meshgrid(th, ph, indexing="ij")
        tw = np.stack([r_p * np.cos(TH) * np.sin(PH), r_p * np.sin(TH) * np.sin(PH),
                       np.cos(PH)], axis=-1).reshape(-1, 3)
        # every θ node at ϕ = 0 is the same pure rotation: evaluate it once
        off_pole = (np.arange(tw.shape[0]) % (n + 1)) != 0
        w = steady_state_wrench(unit, tw[off_pole], bilinear=bilinear)
        pure = steady_state_wrench(unit, [0.0, 0.0, 1.0], bilinear=bilinear)
        nodes = np.empty((4 * n, n + 1, 3))
        nodes[:, 0, :] = pure
        nodes[:, 1:, :] = w.reshape(4 * n, n, 3)
        nodes[..., :2] /= f_max
        nodes[..., 2] /= tau_max
        return cls(nodes, r_p, r_p, unit.viscous_torque_scale, tau_max, surface.cop)

    def rescaled(self, factor: float) -> "LimitSurfaceTable":
        """The table of the same shape ``factor`` times larger, without recomputation: only r
        changes (h_s(v, ω) = h(v, s ω)); u scales with the factor squared."""
        factor = param("factor", factor, minimum=0.0, strict=True, allow_array=False)
        # the nodes and the bilinear coefficients (43) do not depend on r: share them (read-only
        # after construction) instead of rebuilding 4·N_ls² coefficient rows
        new = LimitSurfaceTable.__new__(LimitSurfaceTable)
        new.n_ls, new.nodes = self.n_ls, self.nodes
        new._coef_t, new._coef_list = self._coef_t, self._coef_list
        new._set_scalars(self.radius * factor, self.radius_sampled,
                         self.viscous_torque_scale * factor ** 2, self.tau_max * factor,
                         self.cop * factor)
        return new

    def h_into(self, vx, vy, om, out: np.ndarray) -> np.ndarray:
        """(37)–(44) for contiguous 1-D component arrays, written into ``out`` of shape (3, m)
        (component-major, so every operation runs on contiguous rows).

        θ of (37) is taken as the angle of sgn_p(ω)·v_t (the same as adding π for ω < 0), and the
        bilinear form (43) is evaluated as A + Δi_θ B + Δi_ϕ (C + Δi_θ D) with per-cell
        coefficients gathered in one ``take``."""
        n = self.n_ls
        scale = 2.0 * n / math.pi
        sgn = np.where(om < 0, -1.0, 1.0)
        th = np.arctan2(vy * sgn, vx * sgn)                       # (−π, π]
        th += np.less(th, 0.0) * (2.0 * math.pi)                  # [0, 2π)
        th *= scale
        vt = vx * vx
        vt += vy * vy
        np.sqrt(vt, out=vt)
        ph = np.arctan2(vt, self.radius * np.abs(om))
        ph *= scale
        # zero twist (‖v_t‖ = r|ω| = 0): no sliding direction, h = 0 like the ellipsoid (24)
        sgn *= np.logical_or(vt > 0.0, om != 0.0)
        ith = th.astype(np.intp)
        np.minimum(ith, 4 * n - 1, out=ith)
        iph = ph.astype(np.intp)
        np.minimum(iph, n - 1, out=iph)
        th -= ith                                                 # Δi_θ (41)
        ph -= iph                                                 # Δi_ϕ (42)
        ith *= n
        ith += iph
        G = np.take(self._coef_t, ith, axis=1)                    # (12, m)
        for j in range(3):
            o = out[j]
            np.multiply(G[9 + j], th, out=o)
            o += G[6 + j]
            o *= ph
            o += G[j]
            G[3 + j] *= th
            o += G[3 + j]
            o *= sgn                                              # sgn_p(ω) (44)
        return out

    def h_scalar(self, vx: float, vy: float, om: float) -> tuple:
        """h(r, v) (43) for one twist, in plain Python floats (single-contact hot path)."""
        n = self.n_ls
        scale = 2.0 * n / math.pi
        sg = -1.0 if om < 0 else 1.0
        th = math.atan2(vy * sg, vx * sg)
        if th < 0.0:
            th += 2.0 * math.pi
        th *= scale
        vt = math.sqrt(vx * vx + vy * vy)
        if vt == 0.0 and om == 0.0:
            return (0.0, 0.0, 0.0)                                # zero twist: h = 0, as h_into
        ph = math.atan2(vt, self.radius * abs(om)) * scale
        ith = min(int(th), 4 * n - 1)
        iph = min(int(ph), n - 1)
        dth = th - ith
        dph = ph - iph
        a0, a1, a2, b0, b1, b2, c0, c1, c2, d0, d1, d2 = self._coef_list[ith * n + iph]
        return (sg * (a0 + dth * b0 + dph * (c0 + dth * d0)),
                sg * (a1 + dth * b1 + dph * (c1 + dth * d1)),
                sg * (a2 + dth * b2 + dph * (c2 + dth * d2)))
