"""Friction laws Φ and their implicit counterparts Φ_Z (Kikuuwe et al. 2006, Sec. II–III).

A law maps a sliding velocity ``x ≠ 0`` to the kinetic friction force ``Φ(x)`` (same sign as
``x``). At ``x = 0`` friction is set-valued: any force in ``[Φ(−0), Φ(+0)]`` (eq. 9), given by
:meth:`FrictionLaw.static_bounds`.

``phi_z(x, Z)`` is Φ_Z of Theorem 1 (eq. 16): the unique ``y`` with ``y = Φ(x − Z y)``, where
``y = x/Z`` whenever ``x/Z`` lies in the static set (then the sliding velocity ``x − Z y`` is
exactly zero). It is what every implicit-Euler element evaluates once per step.

Inputs may be

* a float: the 1-D law;
* an array of shape (n,) for a law whose parameters are scalars: an n-D isotropic contact
  (eqs. 50–58), ``Φ(x) = φ(‖x‖) x/‖x‖`` with φ the 1-D law (the force opposes the motion);
* an array of shape (n,) for a law with per-joint (array) parameters, or for
  :class:`AsymmetricFriction` and :class:`PiecewiseLinearFriction`: n independent 1-D joints.

Convention relied on by :mod:`fric_core.elements`: in the static branch every ``phi_z``
returns exactly the float(s) ``x / Z``, so an element can detect sticking bit-exactly and set the
sliding velocity to exactly 0.

Totality (issue 13): every law is computed in a form that cannot overflow into ``inf`` or NaN, so
any finite input and any accepted parameters give a finite output. Where a law is bounded
(Coulomb: ``|Φ| ≤ F``; Stribeck with D = 0: ``|Φ| ≤ max(Fs, Fc)``; ...) ``phi`` and ``phi_z`` stay
within that bound for every finite input; where it is not (a viscous term ``D x``), a value beyond
the float range saturates at ``±sys.float_info.max`` instead of becoming ``inf``. The linear
branches of Φ_Z, ``y = (a + b x)/(1 + Z b)`` of eqs. (25), (55), are evaluated as
``a + w (x − Z a)`` with ``w = b/(1 + Z b)`` (see :func:`_lin_z`); the Stribeck decay
``exp(−|x/vs|^delta)`` is 0 without evaluating the power once ``delta·ln|x/vs| > 7``.
"""

from __future__ import annotations

import math
import sys
from abc import ABC, abstractmethod
from bisect import bisect_left, bisect_right
from typing import TYPE_CHECKING, List, Sequence, Tuple, Union

import numpy as np

from ._checks import named_sizes, param, real_array

if TYPE_CHECKING:  # the file format's curve; only its four knot/level tuples are read
    from .joint_friction import FrictionCurve

ArrayLike = Union[float, np.ndarray]

__all__ = [
    "FrictionLaw",
    "Coulomb",
    "CoulombViscous",
    "Stribeck",
    "AsymmetricFriction",
    "PiecewiseLinearFriction",
    "EllipticCoulomb",
]


#: the largest finite float: results beyond the float range saturate here (never ``inf``)
FMAX = sys.float_info.max


def _sat(y: float) -> float:
    """``y`` (finite or ±inf, never NaN) saturated to the finite float range."""
    if -FMAX <= y <= FMAX:
        return y
    return FMAX if y > 0.0 else -FMAX


def _lin_z(a: float, b: float, x: float, Z: float) -> float:
    """The solution y of ``y = a + b (x − Z y)`` (the Φ_Z of a linear branch ``a + b w`` of Φ,
    eqs. (25), (55)), computed as ``a + w (x − Z a)`` with ``w = b/(1 + Z b)``.

    Mathematically the same as ``(a + b x)/(1 + Z b)``, but ``b x`` and ``Z b`` may both overflow
    for huge inputs or parameters (``inf/inf`` = NaN); here the only product that may overflow is
    ``w (x − Z a)``, and the result saturates at ±FMAX. Needs ``1 + Z b > 0`` (condition (15)).
    """
    t = _sat(x - _sat(Z * a))
    if b == 0.0 or t == 0.0:
        return a
    zb = Z * b
    w = b / (1.0 + zb) if zb < 1e300 else 1.0 / Z
    return _sat(a + _sat(w * t))


def _lin_z_each(a, b, x, Z):
    """Vector form of :func:`_lin_z` (arrays broadcast)."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        t = np.clip(x - np.clip(Z * a, -FMAX, FMAX), -FMAX, FMAX)
        zb = Z * b
        w = np.where(zb < 1e300, b / (1.0 + zb), 1.0 / Z)
        wt = np.where((b == 0.0) | (t == 0.0), 0.0, np.clip(w * t, -FMAX, FMAX))
        return np.clip(a + wt, -FMAX, FMAX)


def _stribeck_decay(r: float, delta: float) -> float:
    """``exp(−r**delta)`` for r ≥ 0 (may be +inf) without overflow: for r > 1 and
    ``delta·ln r > 7`` the power exceeds 1096 and the result is 0 (exp(−1096) underflows)."""
    if r > 1.0 and delta * math.log(r) > 7.0:
        return 0.0
    return math.exp(-(r ** delta))


def _norm_dir(x: np.ndarray) -> tuple[float, np.ndarray]:
    """(‖x‖ saturated at FMAX, x/‖x‖) for x ≠ 0 without overflow or underflow."""
    r = math.hypot(*x.tolist())  # scaled internally: inf only if ‖x‖ > FMAX
    if r <= FMAX:
        return r, x / r
    m = float(np.max(np.abs(x)))
    xs = x / m
    return FMAX, xs / math.hypot(*xs.tolist())


class FrictionLaw(ABC):
    """Base class of the friction laws. Subclasses implement the private per-element hooks."""

    #: True if Φ_Z is exact (closed form); False if it is the approximation (46)/(57)/(59).
    exact: bool = True
    #: True if a vector input means independent 1-D joints rather than one n-D contact.
    per_joint: bool = False
    #: Length of the per-joint parameter arrays (None when all parameters are scalars).
    size: int | None = None
    #: Whether the 1-D (scalar) law exists; False for laws that only make sense in n-D.
    scalar_ok: bool = True

    # -- public API -------------------------------------------------------------------------
    def phi(self, x: ArrayLike) -> ArrayLike:
        """Kinetic friction force Φ(x) for a sliding velocity x ≠ 0 (0 is returned at x = 0)."""
        x, kind = self._input(x, "x")
        if kind == "scalar":
            return self._phi_scalar(x)
        if kind == "each":
            return self._phi_each(x)
        return self._phi_iso(x)

    def phi_z(self, x: ArrayLike, Z: ArrayLike) -> ArrayLike:
        """Φ_Z(x) of Theorem 1, eq. (16) (n-D: eq. 52): the y with ``y = Φ(x − Z y)``."""
        Z = param("Z", Z, minimum=0.0, strict=True)
        x, kind = self._input(x, "x")
        if isinstance(Z, np.ndarray) and kind != "each":
            raise ValueError("Z: an array of Z values needs per-joint input")
        if kind == "scalar":
            return self._phi_z_scalar(x, Z)
        if kind == "each":
            return self._phi_z_each(x, Z)
        return self._phi_z_iso(x, Z)

    @abstractmethod
    def static_bounds(self) -> Tuple[ArrayLike, ArrayLike]:
        """(Φ(−0), Φ(+0)): the range of friction forces available at zero velocity."""

    @abstractmethod
    def slope_bounds(self) -> Tuple[ArrayLike, ArrayLike]:
        """(inf Φ'(x), sup |Φ'(x)|) over x ≠ 0, for conditions (15)/(56) and (48)/(58)."""

    def is_unique(self, Z: ArrayLike) -> bool:
        """Theorem 1's condition (15) (n-D: 56): Φ'(x) > −1/Z for all x ≠ 0."""
        lo, _ = self.slope_bounds()
        return bool(np.all(np.asarray(lo) * np.asarray(Z) > -1.0))

    def approximation_valid(self, Z: ArrayLike, margin: float = 0.1) -> bool:
        """Condition (48)/(58), |Φ'| ≪ 1/Z, read as |Φ'| Z ≤ ``margin``; always True if exact."""
        if self.exact:
            return True
        _, hi = self.slope_bounds()
        return bool(np.all(np.asarray(hi) * np.asarray(Z) <= margin))

    # -- input handling ---------------------------------------------------------------------
    def _input(self, x, name: str):
        if isinstance(x, (float, int)) and not isinstance(x, bool):
            x = float(x)
            if not math.isfinite(x):
                raise ValueError(f"{name}: must be finite, got {x!r}")
            if not self.scalar_ok:
                raise ValueError(f"{name}: {type(self).__name__} needs a vector input")
            if self.size is not None:
                raise ValueError(f"{name}: this law has {self.size} per-joint parameter sets; "
                                 f"give an array of shape ({self.size},)")
            return x, "scalar"
        arr = np.asarray(x, dtype=float)
        if arr.ndim == 0:
            return self._input(float(arr), name)
        if arr.ndim != 1:
            raise ValueError(f"{name}: expected a scalar or shape (n,), got shape {arr.shape}")
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"{name}: must be finite")
        if self.size is not None and arr.size != self.size:
            raise ValueError(f"{name}: expected shape ({self.size},), got {arr.shape}")
        return arr, ("each" if self.per_joint else "iso")

    # -- hooks (defaults) -------------------------------------------------------------------
    def _phi_iso(self, x: np.ndarray) -> np.ndarray:
        r = math.hypot(*x.tolist())  # overflow/underflow-safe ‖x‖ (and cheaper than x @ x)
        if r == 0.0:
            return np.zeros_like(x)
        p = self._phi_scalar(_sat(r))
        if r <= 1e300 and p <= 1e300:
            return x * (p / r)
        _, u = _norm_dir(x)
        return np.clip(u * p, -FMAX, FMAX)

    def _phi_z_iso(self, x: np.ndarray, Z: float) -> np.ndarray:
        """n-D Φ_Z of an isotropic law from its 1-D Φ_Z on the speed (exact for eqs. 53, 55)."""
        r = _sat(math.hypot(*x.tolist()))
        ym = self._phi_z_scalar(r, Z)
        if ym == r / Z:  # static set: y = x/Z exactly (eq. 52, second case)
            return x / Z
        if r <= 1e300 and abs(ym) <= 1e300:
            return x * (ym / r)
        _, u = _norm_dir(x)
        return np.clip(u * ym, -FMAX, FMAX)


def _sign(x: float) -> float:
    return 1.0 if x > 0.0 else (-1.0 if x < 0.0 else 0.0)


class Coulomb(FrictionLaw):
    """Coulomb friction Φ(x) = F sgn(x) (eq. 2; n-D F x/‖x‖, eq. 53); Φ_Z exact, eqs. (23), (53).

    ``F`` ≥ 0 (N or N·m) is a scalar, or an array for per-joint levels.
    """

    def __init__(self, F: ArrayLike):
        self.F = param("F", F, minimum=0.0)
        self.size = named_sizes(F=self.F)
        self.per_joint = self.size is not None

    def static_bounds(self):
        return -self.F, self.F

    def slope_bounds(self):
        return 0.0, 0.0

    def _phi_scalar(self, x: float) -> float:
        return self.F * _sign(x)

    def _phi_each(self, x):
        return self.F * np.sign(x)

    def _phi_z_scalar(self, x: float, Z: float) -> float:
        s = x / Z
        F = self.F
        if s > F:
            return F
        if s < -F:
            return -F
        return s

    def _phi_z_each(self, x, Z):
        return np.clip(x / Z, -self.F, self.F)  # eq. (23) is the saturation of x/Z at ±F

    def __repr__(self):
        return f"Coulomb(F={self.F!r})"


class CoulombViscous(FrictionLaw):
    """Coulomb plus viscous friction Φ(x) = F sgn(x) + D x (eqs. 24, 54); Φ_Z exact (25), (55)."""

    def __init__(self, F: ArrayLike, D: ArrayLike):
        self.F = param("F", F, minimum=0.0)
        self.D = param("D", D, minimum=0.0)
        self.size = named_sizes(F=self.F, D=self.D)
        self.per_joint = self.size is not None

    def static_bounds(self):
        return -self.F, self.F

    def slope_bounds(self):
        return self.D, self.D

    def _phi_scalar(self, x: float) -> float:
        return _sat(self.F * _sign(x) + self.D * x)

    def _phi_each(self, x):
        with np.errstate(over="ignore"):
            return np.clip(self.F * np.sign(x) + self.D * x, -FMAX, FMAX)

    def _phi_z_scalar(self, x: float, Z: float) -> float:
        s = x / Z
        F = self.F
        if s > F:  # eq. (25), in the overflow-safe form of _lin_z
            return _lin_z(F, self.D, x, Z)
        if s < -F:
            return _lin_z(-F, self.D, x, Z)
        return s

    def _phi_z_each(self, x, Z):
        with np.errstate(over="ignore"):
            s = x / Z
        slip = _lin_z_each(self.F * np.sign(x), self.D, x, Z)
        return np.where(np.abs(s) > self.F, slip, s)

    def __repr__(self):
        return f"CoulombViscous(F={self.F!r}, D={self.D!r})"


class Stribeck(FrictionLaw):
    """Stribeck friction ``Φ(x) = (Fc + (Fs − Fc) exp(−|x/vs|^delta)) sgn(x) + D x``.

    No closed-form Φ_Z exists; ``phi_z`` is the paper's approximation (46) (n-D: 57), valid
    under (48): check it with :meth:`approximation_valid` or :mod:`fric_core.design`.
    ``Fs`` is the breakaway (static) level Φ(+0), ``Fc`` the Coulomb level, ``vs`` > 0 the
    Stribeck velocity, ``delta`` > 0 the shape exponent, ``D`` ≥ 0 the viscosity.
    """

    exact = False

    def __init__(self, Fc: ArrayLike, Fs: ArrayLike, vs: ArrayLike, D: ArrayLike = 0.0,
                 delta: ArrayLike = 2.0):
        self.Fc = param("Fc", Fc, minimum=0.0)
        self.Fs = param("Fs", Fs, minimum=0.0)
        self.vs = param("vs", vs, minimum=0.0, strict=True)
        self.D = param("D", D, minimum=0.0)
        self.delta = param("delta", delta, minimum=0.0, strict=True)
        self.size = named_sizes(Fc=self.Fc, Fs=self.Fs, vs=self.vs, D=self.D, delta=self.delta)
        self.per_joint = self.size is not None

    def static_bounds(self):
        return -self.Fs, self.Fs

    def slope_bounds(self):
        d = np.asarray(self.delta, dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):
            t = (d - 1.0) / d
            peak = np.where(d > 1.0, d * t ** t * np.exp(-t),
                            np.where(d == 1.0, 1.0, np.inf))
        k = np.abs(np.asarray(self.Fs) - np.asarray(self.Fc)) * peak / np.asarray(self.vs)
        k = np.where(np.asarray(self.Fs) == np.asarray(self.Fc), 0.0, k)
        D = np.asarray(self.D, dtype=float)
        falling = np.asarray(self.Fs) >= np.asarray(self.Fc)
        lo = np.where(falling, D - k, D)
        hi = np.where(falling, np.maximum(np.abs(D - k), D), D + k)
        if lo.ndim == 0:
            return float(lo), float(hi)
        return lo, hi

    def _phi_scalar(self, x: float) -> float:
        if x == 0.0:
            return 0.0
        g = self.Fc + (self.Fs - self.Fc) * _stribeck_decay(abs(x) / self.vs, self.delta)
        return _sat(math.copysign(g, x) + self.D * x)

    def _phi_each(self, x):
        with np.errstate(over="ignore", under="ignore"):
            r = np.abs(x) / self.vs
            # exp(-r**delta) is 0 once delta*ln r > 7; the power is never taken there
            big = (r > 1.0) & (self.delta * np.log(np.maximum(r, 1.0)) > 7.0)
            decay = np.where(big, 0.0, np.exp(-(np.where(big, 0.0, r) ** self.delta)))
            g = self.Fc + (self.Fs - self.Fc) * decay
            return np.clip(g * np.sign(x) + self.D * x, -FMAX, FMAX)

    def _phi_z_scalar(self, x: float, Z: float) -> float:
        s = x / Z  # may be ±inf for a tiny Z: then |s| > |p| and p (finite) is returned
        p = self._phi_scalar(x)
        return p if abs(s) > abs(p) else s  # eq. (46)

    def _phi_z_each(self, x, Z):
        with np.errstate(over="ignore"):
            s = x / Z
        p = self._phi_each(x)
        return np.where(np.abs(s) > np.abs(p), p, s)

    def _phi_z_iso(self, x, Z):
        r = _sat(math.hypot(*x.tolist()))
        p = self._phi_scalar(r)
        if r / Z > p:  # eq. (57)
            if r <= 1e300 and p <= 1e300:
                return x * (p / r)
            _, u = _norm_dir(x)
            return np.clip(u * p, -FMAX, FMAX)
        return x / Z

    def __repr__(self):
        return (f"Stribeck(Fc={self.Fc!r}, Fs={self.Fs!r}, vs={self.vs!r}, D={self.D!r}, "
                f"delta={self.delta!r})")


class AsymmetricFriction(FrictionLaw):
    """The asymmetric Karnopp-type law identified in paper 003 (Richard et al., eq. 1), renderable.

    Kinetic friction ``Cp + bp x`` for x > dv and ``−Cn + bn x`` for x < −dv (``Cp``, ``Cn`` > 0
    are magnitudes, ``bp``, ``bn`` ≥ 0 viscosities); static friction anywhere in ``[Dn, Dp]``
    (``Dn`` < 0 < ``Dp``) at zero velocity. Paper 003 holds the static level over the whole
    band |x| < dv, which has no meaning for an implicit element (it is the Karnopp threshold
    the implicit method removes); here Φ instead goes linearly from Φ(+0) = Dp to the kinetic
    line at x = dv (and likewise for x < 0), so Φ is continuous for x ≠ 0 as Theorem 1 needs.

    Φ is piecewise linear, so Φ_Z is exact and closed-form. When the stiction drop is so steep
    that Theorem 1's condition (15), 1 + Z·slope > 0, fails for the element's Z, Φ_Z is no longer
    unique: the drop is then limited to slope −1/(2Z) (a wider transition band), which elements
    announce with a :class:`~fric_core.design.FrictionDesignWarning` at construction.

    Always a 1-D law: an array input means independent joints, and every parameter may be an
    array of per-joint values.
    """

    per_joint = True

    def __init__(self, Cp: ArrayLike, Cn: ArrayLike, bp: ArrayLike, bn: ArrayLike,
                 Dp: ArrayLike, Dn: ArrayLike, dv: ArrayLike):
        self.Cp = param("Cp", Cp, minimum=0.0, strict=True)
        self.Cn = param("Cn", Cn, minimum=0.0, strict=True)
        self.bp = param("bp", bp, minimum=0.0)
        self.bn = param("bn", bn, minimum=0.0)
        self.Dp = param("Dp", Dp, minimum=0.0, strict=True)
        Dn = param("Dn", Dn)
        if np.any(np.asarray(Dn) >= 0.0):
            raise ValueError(f"Dn: must be < 0 (the static level for negative forces), got {Dn!r}")
        self.Dn = Dn
        self.dv = param("dv", dv, minimum=0.0, strict=True)
        self.size = named_sizes(Cp=self.Cp, Cn=self.Cn, bp=self.bp, bn=self.bn, Dp=self.Dp,
                                Dn=self.Dn, dv=self.dv)
        # slopes of the transition segments (negative when static > kinetic: stiction)
        with np.errstate(over="ignore", invalid="ignore"):
            self.sp = (self.Cp + self.bp * self.dv - self.Dp) / self.dv
            self.sn = (self.Dn + self.Cn + self.bn * self.dv) / self.dv
        for name, slope in (("positive", self.sp), ("negative", self.sn)):
            if not np.all(np.isfinite(slope)):  # a parameter set that could overflow
                raise ValueError(f"dv: the {name}-side transition slope (static - kinetic "
                                 f"level)/dv is not a finite number for dv={self.dv!r}; "
                                 "use a wider dv or smaller levels")

    def static_bounds(self):
        return self.Dn, self.Dp

    def slope_bounds(self):
        lo = np.minimum(np.minimum(self.sp, self.sn), np.minimum(self.bp, self.bn))
        hi = np.maximum(np.maximum(np.abs(self.sp), np.abs(self.sn)),
                        np.maximum(self.bp, self.bn))
        if np.ndim(lo) == 0:
            return float(lo), float(hi)
        return lo, hi

    def effective_dv(self, Z: ArrayLike) -> Tuple[ArrayLike, ArrayLike]:
        """Transition widths (positive side, negative side) Φ_Z uses for this Z (see class doc)."""
        sp, wp = self._segment(self.sp, self.Dp - self.Cp, self.bp, Z)
        sn, wn = self._segment(self.sn, -self.Cn - self.Dn, self.bn, Z)
        return wp, wn

    def _segment(self, s, gap, b, Z):
        """Effective transition slope and width: s itself, or −1/(2Z) when 1 + sZ ≤ 0."""
        if np.ndim(s) == 0 and np.ndim(Z) == 0:
            if 1.0 + s * Z > 0.0:
                return s, self.dv
            s_eff = -0.5 / Z
            return s_eff, gap / (b - s_eff)
        ok = 1.0 + s * Z > 0.0
        s_eff = np.where(ok, s, -0.5 / Z)
        with np.errstate(divide="ignore", invalid="ignore"):
            w = np.where(ok, self.dv, gap / (b - s_eff))
        return s_eff, w

    def _phi_scalar(self, x: float) -> float:
        if x > 0.0:
            return self.Dp + self.sp * x if x < self.dv else _sat(self.Cp + self.bp * x)
        if x < 0.0:
            return self.Dn + self.sn * x if x > -self.dv else _sat(-self.Cn + self.bn * x)
        return 0.0

    def _phi_each(self, x):
        with np.errstate(over="ignore", invalid="ignore"):
            pos = np.where(x < self.dv, self.Dp + self.sp * x, self.Cp + self.bp * x)
            neg = np.where(x > -self.dv, self.Dn + self.sn * x, -self.Cn + self.bn * x)
            return np.clip(np.where(x > 0.0, pos, np.where(x < 0.0, neg, 0.0)), -FMAX, FMAX)

    def _phi_z_scalar(self, x: float, Z: float) -> float:
        s = x / Z
        if s > self.Dp:
            sp, wp = self.sp, self.dv
            if 1.0 + sp * Z <= 0.0:  # (15) fails: widen the drop (see class docstring)
                sp = -0.5 / Z
                wp = (self.Dp - self.Cp) / (self.bp - sp)
            if x <= Z * self.Dp + wp * (1.0 + sp * Z):
                return _lin_z(self.Dp, sp, x, Z)  # (Dp + sp x)/(1 + sp Z)
            return _lin_z(self.Cp, self.bp, x, Z)  # (Cp + bp x)/(1 + bp Z)
        if s < self.Dn:
            sn, wn = self.sn, self.dv
            if 1.0 + sn * Z <= 0.0:
                sn = -0.5 / Z
                wn = (-self.Cn - self.Dn) / (self.bn - sn)
            if x >= Z * self.Dn - wn * (1.0 + sn * Z):
                return _lin_z(self.Dn, sn, x, Z)
            return _lin_z(-self.Cn, self.bn, x, Z)
        return s

    def _phi_z_each(self, x, Z):
        with np.errstate(over="ignore", invalid="ignore"):
            s = x / Z
            sp, wp = self._segment(self.sp, self.Dp - self.Cp, self.bp, Z)
            sn, wn = self._segment(self.sn, -self.Cn - self.Dn, self.bn, Z)
            pos = np.where(x <= Z * self.Dp + wp * (1.0 + sp * Z),
                           _lin_z_each(self.Dp, sp, x, Z), _lin_z_each(self.Cp, self.bp, x, Z))
            neg = np.where(x >= Z * self.Dn - wn * (1.0 + sn * Z),
                           _lin_z_each(self.Dn, sn, x, Z),
                           _lin_z_each(-self.Cn, self.bn, x, Z))
        return np.where(s > self.Dp, pos, np.where(s < self.Dn, neg, s))

    def __repr__(self):
        return (f"AsymmetricFriction(Cp={self.Cp!r}, Cn={self.Cn!r}, bp={self.bp!r}, "
                f"bn={self.bn!r}, Dp={self.Dp!r}, Dn={self.Dn!r}, dv={self.dv!r})")


def _pwl_rows(name: str, value) -> Tuple[List[np.ndarray], bool]:
    """``value`` as rows of knots or levels: one 1-D sequence (one law) or a sequence of them
    (one per joint, lengths may differ); (rows, per_joint). ValueError naming ``name``."""
    if isinstance(value, np.ndarray) and value.ndim == 2:
        value = list(value)
    if (isinstance(value, (list, tuple)) and value
            and all(isinstance(r, (list, tuple, np.ndarray)) for r in value)):
        return [real_array(r, f"{name}[{i}]", "a sequence of numbers")
                for i, r in enumerate(value)], True
    return [real_array(value, name, "a sequence of numbers")], False


def _pwl_side(vname: str, v: np.ndarray, fname: str, f: np.ndarray) -> np.ndarray:
    """Check one side of a :class:`PiecewiseLinearFriction`; returns its slope per knot (the
    last segment's slope repeated for the last knot)."""
    if v.ndim != 1 or v.size < 2:
        raise ValueError(f"{vname}: expected at least 2 knots (0 and a speed above it), got "
                         f"shape {v.shape}")
    if f.shape != v.shape:
        raise ValueError(f"{fname}: expected one level per knot ({v.size}), got shape "
                         f"{f.shape}")
    if not (np.all(np.isfinite(v)) and np.all(np.isfinite(f))):
        raise ValueError(f"{vname if not np.all(np.isfinite(v)) else fname}: must be finite")
    if v[0] != 0.0 or np.any(np.diff(v) <= 0.0):
        raise ValueError(f"{vname}: expected increasing speeds starting at 0, got {v.tolist()}")
    if np.any(np.diff(f) < 0.0):
        k = int(np.argmax(np.diff(f) < 0.0))
        raise ValueError(f"{fname}: friction must not decrease with speed (a monotone law, "
                         f"Theorem 1's condition (15) for every Z): {fname}[{k + 1}] = "
                         f"{f[k + 1]!r} < {fname}[{k}] = {f[k]!r}")
    with np.errstate(over="ignore", invalid="ignore"):
        s = np.diff(f) / np.diff(v)
    if not np.all(np.isfinite(s)):
        raise ValueError(f"{vname}: knots too close for the step in {fname} (a slope beyond "
                         "the float range)")
    return np.append(s, s[-1])


class PiecewiseLinearFriction(FrictionLaw):
    """A monotone piecewise-linear friction law per direction (issue 23:
    :class:`~fric_core.joint_friction.FrictionCurve`), with the exact closed-form Φ_Z.

    Per side, knots ``0 = v_0 < v_1 < … < v_K`` (speed magnitudes) and levels
    ``f_0 ≤ f_1 ≤ … ≤ f_K``; ``f(|x|)`` is linear between knots and continued with the last
    segment's slope beyond ``v_K``. Kinetic friction ``Φ(x) = f⁺(x)`` for x > 0,
    ``−f⁻(−x)`` for x < 0; static friction anywhere in ``[−f⁻_0, f⁺_0]`` at x = 0 (eq. 9).
    A level may be negative (an effort offset left in it) as long as the jump at 0,
    ``f⁺_0 + f⁻_0``, is ≥ 0: the law is then monotone non-decreasing, so Theorem 1's condition
    (15) holds for every Z > 0 and Φ_Z is unique.

    Φ_Z (Theorem 1, eq. 16), exact: for ``x/Z ∈ [−f⁻_0, f⁺_0]`` it is ``x/Z`` (static, the
    sliding velocity ``w = x − Z y`` is exactly 0). For ``x/Z > f⁺_0`` the joint slides forwards,
    ``w > 0`` with ``y = f⁺(w)``, so ``x = w + Z f⁺(w)``: increasing and piecewise linear in w
    with breakpoints ``g_k = v_k + Z f_k``. On the segment with ``g_k < x ≤ g_{k+1}`` (the last
    one continued) ``y = f_k + s_k (w − v_k)``, and solving linearly (eq. (25) on that segment)

        y = f_k + (x − g_k) · s_k/(1 + Z s_k),      s_k = (f_{k+1} − f_k)/(v_{k+1} − v_k),

    evaluated in the overflow-safe form of :func:`_lin_z`; mirrored for ``x/Z < −f⁻_0``.

    ``v_pos, f_pos, v_neg, f_neg``: one sequence each (one law; an array input means
    independent joints sharing it), or one sequence per joint (lengths may differ between
    joints and sides; the law then has ``size`` joints). Always a 1-D law, like
    :class:`AsymmetricFriction` (the two-knot curve ``v = [0, 1]``, ``f = [C, C + b]`` is its
    kinetic law ``C + b x`` with ``Dp = Cp``, ``Dn = −Cn``). :meth:`from_curve`,
    :meth:`from_curves` take ``FrictionCurve`` objects.
    """

    per_joint = True

    def __init__(self, v_pos, f_pos, v_neg, f_neg):
        rows = {}
        joint_wise = set()
        for name, val in (("v_pos", v_pos), ("f_pos", f_pos), ("v_neg", v_neg),
                          ("f_neg", f_neg)):
            rows[name], each = _pwl_rows(name, val)
            joint_wise.add(each)
        if len(joint_wise) != 1:
            raise ValueError("v_pos: give all four of v_pos, f_pos, v_neg, f_neg as one "
                             "sequence each, or all as one sequence per joint")
        m = len(rows["v_pos"])
        for name in ("f_pos", "v_neg", "f_neg"):
            if len(rows[name]) != m:
                raise ValueError(f"{name}: {len(rows[name])} joints, but v_pos has {m}")
        self.size = m if joint_wise.pop() else None
        sides = []
        for vname, fname in (("v_pos", "f_pos"), ("v_neg", "f_neg")):
            per = []
            for i in range(m):
                tag = "" if self.size is None else f"[{i}]"
                v, f = rows[vname][i], rows[fname][i]
                per.append((v, f, _pwl_side(vname + tag, v, fname + tag, f)))
            sides.append(per)
        for i in range(m):
            fp0, fn0 = sides[0][i][1][0], sides[1][i][1][0]
            # a crossing by rounding (a fit at the bound) is tolerated as joint_friction.yaml
            # does: Φ_Z then takes the forward branch in the 1e-9-wide overlap
            if fp0 + fn0 < -1e-9 * max(1.0, abs(fp0), abs(fn0)):
                tag = "" if self.size is None else f"[{i}]"
                raise ValueError(f"f_pos{tag}: the levels at 0 cross (f_pos[0] + f_neg[0] = "
                                 f"{fp0 + fn0!r} < 0: friction at 0+ below that at 0-, not a "
                                 "monotone law)")
        # padded (2, m, Kmax) knots / levels / slopes; side 0 forwards, 1 backwards. Padding:
        # knot +inf (never reached), the last level, slope 0 (all finite but the knot)
        km = max(len(v) for per in sides for v, _, _ in per)
        self._V = np.full((2, m, km), np.inf)
        self._F = np.zeros((2, m, km))
        self._S = np.zeros((2, m, km))
        for j, per in enumerate(sides):
            for i, (v, f, s) in enumerate(per):
                self._V[j, i, :v.size], self._S[j, i, :v.size] = v, s
                self._F[j, i, :] = f[-1]
                self._F[j, i, :v.size] = f
        self._sides = sides
        for arr in (self._V, self._F, self._S):
            arr.flags.writeable = False
        self.v_pos, self.f_pos, self.v_neg, self.f_neg = (
            tuple(tuple(r.tolist()) for r in rows[k]) if self.size is not None
            else tuple(rows[k][0].tolist()) for k in ("v_pos", "f_pos", "v_neg", "f_neg"))
        self._fp0 = self._F[0, :, 0].copy()
        self._fn0 = self._F[1, :, 0].copy()
        if self.size is None:  # the scalar path: plain floats and lists
            self._lists = [(v.tolist(), f.tolist(), s.tolist()) for v, f, s in
                           (sides[0][0], sides[1][0])]
            self._fp0_s, self._fn0_s = float(self._fp0[0]), float(self._fn0[0])
            self._zc = None  # Z of the cached breakpoints g_k and gains w_k

    @classmethod
    def from_curve(cls, curve: "FrictionCurve") -> "PiecewiseLinearFriction":
        """The law of one :class:`~fric_core.joint_friction.FrictionCurve` (e.g.
        ``JointFriction.curve``, or ``total_curve()`` with the effort offset).

        Parameters
        ----------
        curve : FrictionCurve
            Anything with the knot/level tuples ``v_pos, f_pos, v_neg, f_neg``.

        Returns
        -------
        PiecewiseLinearFriction
            The 1-D law.
        """
        return cls(curve.v_pos, curve.f_pos, curve.v_neg, curve.f_neg)

    @classmethod
    def from_curves(cls, curves: Sequence["FrictionCurve"]) -> "PiecewiseLinearFriction":
        """One law per joint from a sequence of curves (``size = len(curves)``).

        Parameters
        ----------
        curves : sequence of FrictionCurve
            One per joint, in joint order.

        Returns
        -------
        PiecewiseLinearFriction
            The per-joint law.
        """
        curves = list(curves)
        if not curves:
            raise ValueError("curves: expected at least one curve")
        return cls(*([list(getattr(c, k)) for c in curves]
                     for k in ("v_pos", "f_pos", "v_neg", "f_neg")))

    def static_bounds(self):
        if self.size is None:
            return -self._fn0_s, self._fp0_s
        return -self._fn0, self._fp0

    def slope_bounds(self):
        lo, hi = [], []
        for i in range(self._V.shape[1]):
            s = np.concatenate([self._sides[0][i][2], self._sides[1][i][2]])
            lo.append(float(s.min()))
            hi.append(float(s.max()))
        if self.size is None:
            return lo[0], hi[0]
        return np.array(lo), np.array(hi)

    # -- scalar path ----------------------------------------------------------------------------
    def _phi_scalar(self, x: float) -> float:
        if x == 0.0:
            return 0.0
        v, f, s = self._lists[0 if x > 0.0 else 1]
        r = abs(x)
        k = bisect_right(v, r) - 1
        y = _sat(f[k] + _sat(s[k] * (r - v[k])))
        return y if x > 0.0 else -y

    def _breakpoints(self, Z: float) -> None:
        """The breakpoints ``g_k = v_k + Z f_k`` and gains ``w_k = s_k/(1 + Z s_k)`` of both
        sides for this Z (cached: an element calls with one Z)."""
        self._zc = Z
        self._g, self._w = [], []
        for v, f, s in self._lists:
            self._g.append([_sat(vk + _sat(Z * fk)) for vk, fk in zip(v, f)])
            self._w.append([sk / (1.0 + Z * sk) if Z * sk < 1e300 else 1.0 / Z for sk in s])

    def _phi_z_scalar(self, x: float, Z: float) -> float:
        s = x / Z
        if s > self._fp0_s:
            side, r = 0, x
        elif s < -self._fn0_s:
            side, r = 1, -x
        else:
            return s
        if Z != self._zc:
            self._breakpoints(Z)
        g = self._g[side]
        k = max(bisect_left(g, r) - 1, 0)  # the last breakpoint below r
        w = self._w[side][k]
        t = _sat(r - g[k])
        y = self._lists[side][1][k]
        if w != 0.0 and t != 0.0:
            y = _sat(y + _sat(w * t))
        return y if side == 0 else -y

    # -- per-joint path -------------------------------------------------------------------------
    def _phi_each(self, x):
        r = np.abs(x)
        out = np.zeros_like(x)
        with np.errstate(over="ignore", invalid="ignore"):
            for side, mask in ((0, x > 0.0), (1, x < 0.0)):
                V, F, S = (np.broadcast_to(a[side], (x.size, a.shape[2]))
                           for a in (self._V, self._F, self._S))
                k = np.sum(r[:, None] >= V[:, 1:], axis=1)[:, None]
                vk, fk, sk = (np.take_along_axis(a, k, axis=1)[:, 0] for a in (V, F, S))
                y = np.clip(fk + np.clip(sk * (r - vk), -FMAX, FMAX), -FMAX, FMAX)
                out = np.where(mask, y if side == 0 else -y, out)
        return out

    def _phi_z_each(self, x, Z):
        n = x.size
        Zc = np.asarray(Z, dtype=float).reshape(-1, 1)  # (1, 1) or (n, 1)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            s = x / Z
            fp0 = np.broadcast_to(self._fp0, (n,))
            fn0 = np.broadcast_to(self._fn0, (n,))
            out = s.copy()
            for side, mask, r in ((0, s > fp0, x), (1, s < -fn0, -x)):
                V, F, S = (np.broadcast_to(a[side], (n, a.shape[2]))
                           for a in (self._V, self._F, self._S))
                G = np.clip(V + np.clip(Zc * F, -FMAX, FMAX), -FMAX, np.inf)
                zs = Zc * S
                W = np.where(zs < 1e300, S / (1.0 + zs), 1.0 / Zc)
                k = np.sum(r[:, None] > G[:, 1:], axis=1)[:, None]
                gk, fk, wk = (np.take_along_axis(a, k, axis=1)[:, 0] for a in (G, F, W))
                t = np.clip(r - gk, -FMAX, FMAX)
                wt = np.where((wk == 0.0) | (t == 0.0), 0.0, np.clip(wk * t, -FMAX, FMAX))
                y = np.clip(fk + wt, -FMAX, FMAX)
                out = np.where(mask, y if side == 0 else -y, out)
        return out

    def __repr__(self):
        return (f"PiecewiseLinearFriction(v_pos={self.v_pos!r}, f_pos={self.f_pos!r}, "
                f"v_neg={self.v_neg!r}, f_neg={self.f_neg!r})")


class EllipticCoulomb(FrictionLaw):
    """Anisotropic Coulomb friction with an elliptic limit set ``{f : Σ (f_i/F_i)² ≤ 1}``.

    By maximum dissipation the kinetic force is ``Φ(x) = F² x / ‖F x‖`` (elementwise F), which is
    not anti-parallel to the velocity unless all ``F_i`` are equal, so the paper has no exact Φ_Z:
    ``phi_z`` is the general approximation (59). n-D only (``F`` has shape (n,), n ≥ 2).
    """

    exact = False
    scalar_ok = False

    def __init__(self, F: ArrayLike):
        F = param("F", F, minimum=0.0, strict=True)
        if not isinstance(F, np.ndarray) or F.size < 2:
            raise ValueError("F: EllipticCoulomb needs one level per axis, shape (n,) with n >= 2")
        self.F = F
        self.size = F.size

    def static_bounds(self):
        return -self.F, self.F

    def slope_bounds(self):
        return 0.0, 0.0  # ‖Φ(x)‖ is constant along every ray: (56), (58) hold for any Z

    def _phi_iso(self, x):
        with np.errstate(over="ignore", under="ignore"):
            w = self.F * x
        n = math.hypot(*w.tolist())
        if n == 0.0 or not n <= FMAX:  # Φ is homogeneous of degree 0 in x: rescale
            m = float(np.max(np.abs(x)))
            if m == 0.0:
                return np.zeros_like(x)
            w = self.F * (x / m)
            if not w.any():  # F*x underflowed: rescale F as well
                w = (self.F / float(np.max(self.F))) * (x / m)
            _, u = _norm_dir(w)
            return self.F * u
        return self.F * (w / n)

    def _phi_z_iso(self, x, Z):
        r = math.hypot(*x.tolist())
        if r == 0.0:
            return x / Z
        p = self._phi_iso(x)
        pn = _sat(math.hypot(*p.tolist()))
        s = _sat(r) / Z
        if s > pn:  # eq. (59), first case: p + (Z pn/r)(x pn/r − p), a convex combination
            u = x / r if r <= FMAX else _norm_dir(x)[1]
            with np.errstate(over="ignore"):
                return np.clip(p + (pn / s) * (u * pn - p), -FMAX, FMAX)
        return x / Z

    def __repr__(self):
        return f"EllipticCoulomb(F={self.F!r})"
