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
  :class:`AsymmetricFriction`: n independent 1-D joints.

Convention relied on by :mod:`fric_core.elements`: in the static branch every ``phi_z``
returns exactly the float(s) ``x / Z``, so an element can detect sticking bit-exactly and set the
sliding velocity to exactly 0.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from typing import Tuple, Union

import numpy as np

from ._checks import named_sizes, param

ArrayLike = Union[float, np.ndarray]

__all__ = [
    "FrictionLaw",
    "Coulomb",
    "CoulombViscous",
    "Stribeck",
    "AsymmetricFriction",
    "EllipticCoulomb",
]


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
        r = math.sqrt(float(x @ x))
        if r == 0.0:
            return np.zeros_like(x)
        return x * (self._phi_scalar(r) / r)

    def _phi_z_iso(self, x: np.ndarray, Z: float) -> np.ndarray:
        """n-D Φ_Z of an isotropic law from its 1-D Φ_Z on the speed (exact for eqs. 53, 55)."""
        r = math.sqrt(float(x @ x))
        ym = self._phi_z_scalar(r, Z)
        if ym == r / Z:  # static set: y = x/Z exactly (eq. 52, second case)
            return x / Z
        return x * (ym / r)


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
        return self.F * _sign(x) + self.D * x

    def _phi_each(self, x):
        return self.F * np.sign(x) + self.D * x

    def _phi_z_scalar(self, x: float, Z: float) -> float:
        s = x / Z
        F = self.F
        if s > F:
            return (F + self.D * x) / (1.0 + Z * self.D)
        if s < -F:
            return (-F + self.D * x) / (1.0 + Z * self.D)
        return s

    def _phi_z_each(self, x, Z):
        s = x / Z
        slip = (self.F * np.sign(x) + self.D * x) / (1.0 + Z * self.D)
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
        g = self.Fc + (self.Fs - self.Fc) * math.exp(-(abs(x) / self.vs) ** self.delta)
        return math.copysign(g, x) + self.D * x

    def _phi_each(self, x):
        g = self.Fc + (self.Fs - self.Fc) * np.exp(-(np.abs(x) / self.vs) ** self.delta)
        return g * np.sign(x) + self.D * x

    def _phi_z_scalar(self, x: float, Z: float) -> float:
        s = x / Z
        p = self._phi_scalar(x)
        return p if abs(s) > abs(p) else s  # eq. (46)

    def _phi_z_each(self, x, Z):
        s = x / Z
        p = self._phi_each(x)
        return np.where(np.abs(s) > np.abs(p), p, s)

    def _phi_z_iso(self, x, Z):
        r = math.sqrt(float(x @ x))
        p = self._phi_scalar(r)
        if r / Z > p:  # eq. (57)
            return x * (p / r)
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
        self.sp = (self.Cp + self.bp * self.dv - self.Dp) / self.dv
        self.sn = (self.Dn + self.Cn + self.bn * self.dv) / self.dv

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
            return self.Dp + self.sp * x if x < self.dv else self.Cp + self.bp * x
        if x < 0.0:
            return self.Dn + self.sn * x if x > -self.dv else -self.Cn + self.bn * x
        return 0.0

    def _phi_each(self, x):
        pos = np.where(x < self.dv, self.Dp + self.sp * x, self.Cp + self.bp * x)
        neg = np.where(x > -self.dv, self.Dn + self.sn * x, -self.Cn + self.bn * x)
        return np.where(x > 0.0, pos, np.where(x < 0.0, neg, 0.0))

    def _phi_z_scalar(self, x: float, Z: float) -> float:
        s = x / Z
        if s > self.Dp:
            sp, wp = self.sp, self.dv
            if 1.0 + sp * Z <= 0.0:  # (15) fails: widen the drop (see class docstring)
                sp = -0.5 / Z
                wp = (self.Dp - self.Cp) / (self.bp - sp)
            if x <= Z * self.Dp + wp * (1.0 + sp * Z):
                return (self.Dp + sp * x) / (1.0 + sp * Z)
            return (self.Cp + self.bp * x) / (1.0 + self.bp * Z)
        if s < self.Dn:
            sn, wn = self.sn, self.dv
            if 1.0 + sn * Z <= 0.0:
                sn = -0.5 / Z
                wn = (-self.Cn - self.Dn) / (self.bn - sn)
            if x >= Z * self.Dn - wn * (1.0 + sn * Z):
                return (self.Dn + sn * x) / (1.0 + sn * Z)
            return (-self.Cn + self.bn * x) / (1.0 + self.bn * Z)
        return s

    def _phi_z_each(self, x, Z):
        s = x / Z
        sp, wp = self._segment(self.sp, self.Dp - self.Cp, self.bp, Z)
        sn, wn = self._segment(self.sn, -self.Cn - self.Dn, self.bn, Z)
        pos = np.where(x <= Z * self.Dp + wp * (1.0 + sp * Z),
                       (self.Dp + sp * x) / (1.0 + sp * Z),
                       (self.Cp + self.bp * x) / (1.0 + self.bp * Z))
        neg = np.where(x >= Z * self.Dn - wn * (1.0 + sn * Z),
                       (self.Dn + sn * x) / (1.0 + sn * Z),
                       (-self.Cn + self.bn * x) / (1.0 + self.bn * Z))
        return np.where(s > self.Dp, pos, np.where(s < self.Dn, neg, s))

    def __repr__(self):
        return (f"AsymmetricFriction(Cp={self.Cp!r}, Cn={self.Cn!r}, bp={self.bp!r}, "
                f"bn={self.bn!r}, Dp={self.Dp!r}, Dn={self.Dn!r}, dv={self.dv!r})")


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
        w = self.F * x
        n = math.sqrt(float(w @ w))
        if n == 0.0:
            return np.zeros_like(x)
        return self.F * w / n

    def _phi_z_iso(self, x, Z):
        r = math.sqrt(float(x @ x))
        p = self._phi_iso(x)
        pn = math.sqrt(float(p @ p))
        if r / Z > pn:  # eq. (59), first case
            return p + (Z * pn / r) * (x * (pn / r) - p)
        return x / Z

    def __repr__(self):
        return f"EllipticCoulomb(F={self.F!r})"
