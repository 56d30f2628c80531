"""Contact surfaces as pressure grids over N×N square cells (paper 002, Sec. III-D, IV-C, VI-C).

A :class:`ContactSurface` holds a pressure p(x, y) sampled at the centres of N×N cells covering a
square of side ``size`` centred on the origin (the centre of area of the grid). ``pressure[i, j]``
is the pressure at ``(x_i, y_j)`` ("ij" indexing: the first index runs along x). The pressure is
normalised so that the discrete normal force Σ p·A equals ``normal_force`` (A = cell area), which
makes the discretisation (21)–(22) exact for the total load.

Every model in :mod:`fric_core.planar` takes twists and returns wrenches **at the centre of
pressure (CoP)**, as the paper does; ``ContactSurface.cop`` gives the CoP in grid coordinates and
:func:`twist_to_cop`, :func:`wrench_from_cop` move twists and wrenches between points.

Normal force and zero load: a surface *shape* needs a positive load (a Hertz-like surface (45)
has zero size at f_N = 0, and a normalised pressure cannot be built from zero), so every
constructor here rejects ``normal_force <= 0`` with a ``ValueError``. The friction models keep
the shape and take the instantaneous load separately (``set_normal_force``), where 0 is valid and
gives an exactly zero wrench (every force of the paper is proportional to f_N): zero normal force
gives zero friction, never NaN.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from .._checks import param

__all__ = [
    "ContactSurface", "circle", "circle_inscribed", "square", "line", "gradient_line",
    "gradient_line_midpoint", "non_convex_1", "non_convex_2", "hertz_like", "hertz_radius",
    "from_function", "twist_to_cop", "wrench_from_cop", "SURFACES",
]


def _n_cells(n_cells) -> int:
    try:
        n = int(n_cells)
    except (TypeError, ValueError):
        raise ValueError(f"n_cells: expected an integer, got {n_cells!r}") from None
    if n != n_cells or n < 2:
        raise ValueError(f"n_cells: resolution must be an integer >= 2, got {n_cells!r}")
    return n


class ContactSurface:
    """A pressure distribution over an N×N grid of square cells.

    Parameters
    ----------
    pressure : (N, N) array_like, N ≥ 2
        Pressure (any positive scale; it is re-normalised to ``normal_force``) at the cell centres,
        ``pressure[i, j]`` at ``(x_i, y_j)``. Non-negative, finite, not all zero.
    size : float
        Side of the square grid [m] (> 0); cells have side ``size / N``.
    normal_force : float
        Total normal load f_N [N] (> 0; see the module docstring for zero load).
    name : str
        Label used in reprs and plots.

    Attributes
    ----------
    n_cells, size, cell_size, cell_area, normal_force, name
    pressure : (N, N) pressure [Pa] with Σ p·A = f_N.
    cop : (2,) centre of pressure in grid coordinates [m].
    x, y : (M,) grid coordinates of the M loaded cells (p > 0) [m].
    rho : (2, M) positions of the loaded cells relative to the CoP (ρ of (7)–(8)) [m].
    weights : (M,) normalised loads p·A/f_N of the loaded cells (sum 1), i.e. p_n·A of (25).
    """

    def __init__(self, pressure, size: float, normal_force: float = 1.0, name: str = "") -> None:
        p = np.asarray(pressure, dtype=float)
        if p.size == 0:
            raise ValueError("pressure: empty pressure grid")
        if p.ndim != 2 or p.shape[0] != p.shape[1]:
            raise ValueError(f"pressure: expected a square (N, N) grid, got shape {p.shape}")
        _n_cells(p.shape[0])
        if not np.all(np.isfinite(p)):
            raise ValueError("pressure: must be finite")
        if np.any(p < 0):
            raise ValueError(f"pressure: must be >= 0, got minimum {p.min():g}")
        if not np.any(p > 0):
            raise ValueError("pressure: all cells have zero pressure (no contact)")
        self.size = param("size", size, minimum=0.0, strict=True, allow_array=False)
        self.normal_force = param("normal_force", normal_force, minimum=0.0, strict=True,
                                  allow_array=False)
        self.name = str(name)
        self.n_cells = p.shape[0]
        self.cell_size = self.size / self.n_cells
        self.cell_area = self.cell_size ** 2
        shape_norm = p / p.sum()                       # Σ = 1: the normalised load per cell
        self._shape = shape_norm
        self.pressure = shape_norm * (self.normal_force / self.cell_area)
        centres = (np.arange(self.n_cells) + 0.5) * self.cell_size - 0.5 * self.size
        gx, gy = np.meshgrid(centres, centres, indexing="ij")
        loaded = shape_norm > 0
        self.x = np.ascontiguousarray(gx[loaded])
        self.y = np.ascontiguousarray(gy[loaded])
        self.weights = np.ascontiguousarray(shape_norm[loaded])
        cop = np.array([self.weights @ self.x, self.weights @ self.y])
        cop[np.abs(cop) < 1e-12 * self.size] = 0.0      # exact zero for symmetric shapes
        self.cop = cop
        self.rho = np.vstack([self.x - self.cop[0], self.y - self.cop[1]])

    # --- derived quantities -------------------------------------------------------------
    @property
    def n_loaded(self) -> int:
        """Number of cells with non-zero pressure (the cells the models integrate over)."""
        return self.weights.size

    @property
    def rim_radius(self) -> float:
        """Radius r of the equivalent circular rim contact (25): |∫ ρ × v̂_pr p_n dA| with v̂_pr
        the unit velocity of a pure rotation about the CoP; ρ × v̂_pr = ‖ρ‖, so r = Σ p_n A ‖ρ‖."""
        return float(self.weights @ np.hypot(self.rho[0], self.rho[1]))

    @property
    def viscous_torque_scale(self) -> float:
        """u of (29): ∫ ‖ρ‖² p_n dA [m²] — the viscous torque (30) is σ2 ω f_N u."""
        return float(self.weights @ (self.rho[0] ** 2 + self.rho[1] ** 2))

    def with_normal_force(self, normal_force: float) -> "ContactSurface":
        """The same pressure shape carrying another (positive) load."""
        return ContactSurface(self._shape, self.size, normal_force, self.name)

    def scaled(self, factor: float) -> "ContactSurface":
        """The same normalised shape on a grid ``factor`` times larger (Sec. VI-D re-sizing)."""
        factor = param("factor", factor, minimum=0.0, strict=True, allow_array=False)
        return ContactSurface(self._shape, self.size * factor, self.normal_force, self.name)

    def normalized_shape(self) -> np.ndarray:
        """(N, N) normalised loads p·A/f_N (sum 1), a copy."""
        return self._shape.copy()

    def __repr__(self) -> str:
        return (f"ContactSurface({self.name or 'custom'!s}, N={self.n_cells}, size={self.size:g} m,"
                f" f_N={self.normal_force:g} N, loaded cells={self.n_loaded})")


# --- point transforms -----------------------------------------------------------------------
def twist_to_cop(twist, point, cop) -> np.ndarray:
    """Twist [v_x, v_y, ω] given at ``point`` expressed at ``cop`` (rigid body: v + ω × Δ).

    Works on (3,) or (m, 3) twists.

    Parameters
    ----------
    twist : array_like
        Twist(s) ``[v_x, v_y, ω]`` [m/s, m/s, rad/s] at ``point``, (3,) or (m, 3).
    point : array_like
        The point the twist is given at, (2,) [m].
    cop : array_like
        The point to express it at (usually the CoP), (2,) [m].

    Returns
    -------
    ndarray
        The twist(s) at ``cop``, a new array of the shape of ``twist``.
    """
    t = np.array(twist, dtype=float)
    d = np.asarray(cop, dtype=float) - np.asarray(point, dtype=float)
    t[..., 0] -= t[..., 2] * d[1]
    t[..., 1] += t[..., 2] * d[0]
    return t


def wrench_from_cop(wrench, cop, point) -> np.ndarray:
    """Wrench [f_x, f_y, τ] acting at ``cop`` expressed at ``point`` (τ_P = τ + (cop − P) × f).

    Works on (3,) or (m, 3) wrenches.

    Parameters
    ----------
    wrench : array_like
        Wrench(es) ``[f_x, f_y, τ]`` [N, N, N m] at ``cop``, (3,) or (m, 3).
    cop : array_like
        The point the wrench acts at (usually the CoP), (2,) [m].
    point : array_like
        The point to express it at, (2,) [m].

    Returns
    -------
    ndarray
        The wrench(es) at ``point``, a new array of the shape of ``wrench``.
    """
    w = np.array(wrench, dtype=float)
    d = np.asarray(cop, dtype=float) - np.asarray(point, dtype=float)
    w[..., 2] += d[0] * w[..., 1] - d[1] * w[..., 0]
    return w


# --- the paper's surfaces (Figs. 4, 8, 33) -------------------------------------------------
def _centres(n: int, size: float) -> tuple[np.ndarray, np.ndarray]:
    c = (np.arange(n) + 0.5) / n * size - 0.5 * size
    return np.meshgrid(c, c, indexing="ij")


def from_function(n_cells: int, size: float,
                  pressure: Callable[[np.ndarray, np.ndarray], np.ndarray],
                  normal_force: float = 1.0, name: str = "function") -> ContactSurface:
    """Sample ``pressure(x, y)`` (vectorised, grid coordinates in m) at the cell centres.

    Parameters
    ----------
    n_cells : int
        The grid resolution N (N×N cells), >= 2.
    size : float
        The side of the square grid [m], > 0.
    pressure : callable
        ``pressure(x, y)``: the (unnormalised) pressure at the (N, N) cell-centre coordinates
        x, y [m] ("ij" indexing), an (N, N) array or a scalar; non-negative.
    normal_force : float
        The total normal load f_N [N], > 0.
    name : str
        The surface's label.

    Returns
    -------
    ContactSurface
        The surface, normalised to ``normal_force``.
    """
    n = _n_cells(n_cells)
    size = param("size", size, minimum=0.0, strict=True, allow_array=False)
    gx, gy = _centres(n, size)
    return ContactSurface(np.asarray(pressure(gx, gy), dtype=float) * np.ones_like(gx), size,
                          normal_force, name)


def square(n_cells: int = 21, size: float = 0.02, normal_force: float = 1.0) -> ContactSurface:
    """Uniform pressure over the whole ``size``×``size`` square (Fig. 8).

    Parameters
    ----------
    n_cells, size, normal_force
        As for :func:`from_function`; the whole grid is loaded.

    Returns
    -------
    ContactSurface
        The square, N² loaded cells.
    """
    return from_function(n_cells, size, lambda x, y: np.ones_like(x), normal_force, "square")


def circle(n_cells: int = 21, size: float = 0.02, normal_force: float = 1.0) -> ContactSurface:
    """The authors' circle: uniform pressure on a disc reaching the grid's edge.

    The authors' circle (``"Circle"`` of paper 002's code, Figs. 5, 8, 9): uniform pressure on
    the cells whose centre lies within (N − 1)/2 cells of the centre cell, i.e. within
    (``size``/2)(1 − 1/N) of the grid centre; the loaded cells then reach the grid's edge
    (radius ``size``/2 = 10 mm for the paper's 21×21 cells of 0.02/21 m). 21 cells: 317 loaded
    cells; 101: 7845.

    The authors centre their mask on cell ``int(N/2)``, half a cell off the grid centre for an
    even N (and clipped by the grid); here an even N gets the same radius around the grid
    centre (the paper only uses odd N). :func:`circle_inscribed` is the disc of diameter
    ``size`` (349 cells at 21).

    Parameters
    ----------
    n_cells, size, normal_force
        As for :func:`from_function`; the loaded cells reach the grid's edge.

    Returns
    -------
    ContactSurface
        The authors' circle.
    """
    n = _n_cells(n_cells)
    half = 0.5 * (n - 1)
    i = np.arange(n) - half
    di, dj = np.meshgrid(i, i, indexing="ij")
    mask = (di * di + dj * dj <= half * half * (1 + 1e-12)) * 1.0
    return ContactSurface(mask, size, normal_force, "circle")


def circle_inscribed(n_cells: int = 21, size: float = 0.02,
                     normal_force: float = 1.0) -> ContactSurface:
    """Uniform pressure on the disc of diameter ``size``.

    Uniform pressure on the disc of diameter ``size``: the cells whose centre lies inside
    (one half cell more radius than the authors' :func:`circle`; 349 cells at N = 21).

    Parameters
    ----------
    n_cells, size, normal_force
        As for :func:`from_function`; ``size`` is also the disc's diameter [m].

    Returns
    -------
    ContactSurface
        The disc.
    """
    r = 0.5 * float(size)
    return from_function(n_cells, size, lambda x, y: (x * x + y * y <= r * r * (1 + 1e-12)) * 1.0,
                         normal_force, "inscribed circle")


def _line_profile(n: int, values: np.ndarray, axis: str) -> np.ndarray:
    """Put a 1-D profile on the centre row (odd N) or on both centre rows (even N), as the
    authors do (each row carries the profile; the normalisation halves it)."""
    if axis not in ("x", "y"):
        raise ValueError(f"axis: expected 'x' or 'y', got {axis!r}")
    p = np.zeros((n, n))
    rows = [n // 2] if n % 2 else [n // 2 - 1, n // 2]
    for r in rows:
        if axis == "x":       # the line runs along x at y = 0: fixed second index
            p[:, r] = values
        else:
            p[r, :] = values
    return p


def line(n_cells: int = 21, size: float = 0.02, normal_force: float = 1.0,
         axis: str = "y") -> ContactSurface:
    """Uniform line contact of length ``size`` along ``axis`` through the centre (Figs. 8, 10).

    The default ``axis="y"`` is the authors' ``"Line"`` (the centre column x = 0).

    Parameters
    ----------
    n_cells, size, normal_force
        As for :func:`from_function`; ``size`` is also the line's length [m].
    axis : str
        ``"x"`` or ``"y"``: the direction of the line (through the grid centre).

    Returns
    -------
    ContactSurface
        The uniform line on the centre row of cells (the two centre rows for an even N).
    """
    n = _n_cells(n_cells)
    return ContactSurface(_line_profile(n, np.ones(n), axis), size, normal_force, "line")


def gradient_line(n_cells: int = 21, size: float = 0.02, normal_force: float = 1.0,
                  axis: str = "y", reverse: bool = False) -> ContactSurface:
    """The authors' gradient line: pressures 1/N … N/N along a line contact.

    The authors' gradient line (paper 002's code, Figs. 8, 15, 16, 19): a line contact along
    ``axis`` through the centre whose N cells carry pressures 1/N, 2/N, …, N/N from one end to
    the other, the largest at the +``axis`` end (the −``axis`` end if ``reverse``).

    The defaults are the authors' ``"LineGrad"`` (along y, largest at +y), used in Figs. 9, 14–16,
    19, 22 and 37; ``axis="x", reverse=True`` is their ``"LineGradX"`` (largest at −x), the
    in-hand pads of Fig. 31. The CoP lies (N − 1)/6 cells = (L − L/N)/6 from the centre towards
    the heavy end (L/6 as N → ∞), and a rotation about the CoP produces a tangential force
    (Fig. 16). :func:`gradient_line_midpoint` is the ramp p ∝ s + L/2 sampled at the cell centres
    (pressures 0.5/N … (N − 0.5)/N).

    Parameters
    ----------
    n_cells, size, normal_force
        As for :func:`line`.
    axis : str
        ``"x"`` or ``"y"``: the line's direction.
    reverse : bool
        The largest pressure at the −``axis`` end instead of the +``axis`` end.

    Returns
    -------
    ContactSurface
        The ramp 1/N … N/N on the centre row (the two centre rows for an even N).
    """
    n = _n_cells(n_cells)
    ramp = np.arange(1, n + 1) / n
    if reverse:
        ramp = ramp[::-1]
    return ContactSurface(_line_profile(n, ramp, axis), size, normal_force, "gradient line")


def gradient_line_midpoint(n_cells: int = 21, size: float = 0.02, normal_force: float = 1.0,
                           axis: str = "y", reverse: bool = False) -> ContactSurface:
    """Line contact whose pressure grows linearly from 0 at one end (the continuous ramp).

    Line contact along ``axis`` whose pressure grows linearly from 0 at one end
    (p ∝ s + L/2, sampled at the cell centres: 0.5/N … (N − 0.5)/N; largest at +``axis`` unless
    ``reverse``): the continuous ramp, whose CoP lies at L/6 − L/(6N²).

    Parameters
    ----------
    n_cells, size, normal_force, axis, reverse
        As for :func:`gradient_line`.

    Returns
    -------
    ContactSurface
        The ramp 0.5/N … (N − 0.5)/N, placed like :func:`gradient_line`'s.
    """
    n = _n_cells(n_cells)
    ramp = (np.arange(n) + 0.5) / n
    if reverse:
        ramp = ramp[::-1]
    return ContactSurface(_line_profile(n, ramp, axis), size, normal_force,
                          "gradient line (midpoint)")


def non_convex_1(n_cells: int = 21, size: float = 0.02,
                 normal_force: float = 1.0) -> ContactSurface:
    """Gradient "C" shape (gradient non-convex 1 of Fig. 8).

    Gradient "C" shape: the ring 0.45 R ≤ ‖(x, y)‖ ≤ R (R = size/2) with a 90° opening towards
    +x, pressure growing linearly along y. Our reconstruction of the paper's "gradient non-convex
    1" (Fig. 8 gives the shapes only as pictures).

    Parameters
    ----------
    n_cells, size, normal_force
        As for :func:`from_function`; ``size`` is also the ring's outer diameter 2R [m].

    Returns
    -------
    ContactSurface
        The "C".
    """
    R = 0.5 * float(size)

    def p(x, y):
        rr = np.hypot(x, y)
        ring = (rr <= R) & (rr >= 0.45 * R)
        gap = (x > 0) & (np.abs(y) < x)          # the 90° wedge around +x
        return (ring & ~gap) * (1.0 + (y + R) / (2 * R))
    return from_function(n_cells, size, p, normal_force, "gradient non-convex 1")


def non_convex_2(n_cells: int = 21, size: float = 0.02,
                 normal_force: float = 1.0) -> ContactSurface:
    """Gradient "L" shape (gradient non-convex 2 of Fig. 8).

    Gradient "L" shape: the square without its (+x, +y) quadrant, pressure growing linearly
    along x. Our reconstruction of the paper's "gradient non-convex 2" (Fig. 8).

    Parameters
    ----------
    n_cells, size, normal_force
        As for :func:`from_function`; the "L" spans the whole grid.

    Returns
    -------
    ContactSurface
        The "L".
    """
    h = 0.5 * float(size)

    def p(x, y):
        return (~((x > 0) & (y > 0))) * (1.0 + (x + h) / (2 * h))
    return from_function(n_cells, size, p, normal_force, "gradient non-convex 2")


def hertz_radius(normal_force, coefficient: float = 6e-3, exponent: float = 1.0 / 3.0):
    """Contact radius (45) of a Hertz-like surface.

    Contact radius (45): a = c·f_N^e, by default 6 mm at 1 N growing with f_N^(1/3) (Hertz;
    Xydas and Kao report 0 ≤ e ≤ 1/3). The paper writes a = 6 f_N^(1/3) with a in millimetres.

    Parameters
    ----------
    normal_force : float or array_like
        The normal load(s) f_N [N], > 0: a scalar or a (n,) array.
    coefficient : float
        c [m N^(−e)], > 0: the radius at 1 N.
    exponent : float
        e [-], >= 0.

    Returns
    -------
    float or ndarray
        The contact radius a [m], like ``normal_force``.
    """
    fn = param("normal_force", normal_force, minimum=0.0, strict=True)
    c = param("coefficient", coefficient, minimum=0.0, strict=True, allow_array=False)
    e = param("exponent", exponent, minimum=0.0, allow_array=False)
    return c * np.power(fn, e)


def hertz_like(n_cells: int = 21, normal_force: float = 1.0, k: float = 2.0,
               coefficient: float = 6e-3, exponent: float = 1.0 / 3.0) -> ContactSurface:
    """Normal-force dependent soft-finger surface (45)–(46).

    p(ρ) ∝ [1 − (‖ρ‖/a)^k]^(1/k) for ‖ρ‖ ≤ a with a from (45); the grid spans exactly the
    contact disc (size 2a), so with a constant ``k`` only the size changes with f_N and a
    pre-computed limit surface can be re-used by rescaling (Sec. VI-D). The paper's constant
    1.144 f_N/(πa²) is replaced by the exact discrete normalisation Σ p·A = f_N. Pass
    ``k=2*f_N`` for the paper's load-dependent distribution (which needs a new limit surface).

    Parameters
    ----------
    n_cells : int
        The grid resolution N (N×N cells), >= 2.
    normal_force : float
        The normal load f_N [N], > 0: sets the radius a (45) and the load.
    k : float
        The shape exponent k of (46) [-], > 0.
    coefficient : float
        c of (45) [m N^(−e)], > 0: the radius at 1 N (:func:`hertz_radius`).
    exponent : float
        e of (45) [-], >= 0.

    Returns
    -------
    ContactSurface
        The surface on a grid of side 2a.
    """
    k = param("k", k, minimum=0.0, strict=True, allow_array=False)
    normal_force = param("normal_force", normal_force, minimum=0.0, strict=True,
                         allow_array=False)                     # one surface, one load
    a = float(hertz_radius(normal_force, coefficient, exponent))

    def p(x, y):
        s = np.clip(np.hypot(x, y) / a, 0.0, 1.0)
        return np.power(np.clip(1.0 - s ** k, 0.0, None), 1.0 / k)
    surf = from_function(n_cells, 2.0 * a, p, normal_force, f"hertz-like k={k:g}")
    return surf


#: surface name -> constructor ``f(n_cells, size, normal_force)``: the patches a rendered planar
#: contact can be given by name (``friction_renderer``'s ``planar.surface``)
SURFACES = {"circle": circle, "square": square, "line": line, "gradient_line": gradient_line,
            "non_convex_1": non_convex_1, "non_convex_2": non_convex_2}
