"""Parameter design help (Kikuuwe et al. 2006, Sec. III-E and IV-C).

* :func:`static_convergence` — the static-friction dynamics (63) of a model-C contact pulling a
  mass M: do they converge, and without oscillation?
* :func:`law_validity` — for a law and the element's Z: Theorem 1's uniqueness condition (15)/(56)
  and the validity condition (48)/(58) of the closed-form approximation (46)/(57)/(59).

The elements run these checks once, when they are constructed, and emit a
:class:`FrictionDesignWarning` for each condition that fails; they never check per step.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Union

import numpy as np

from ._checks import param
from .laws import AsymmetricFriction, FrictionLaw

ArrayLike = Union[float, np.ndarray]

__all__ = ["FrictionDesignWarning", "StaticConvergence", "static_convergence", "LawValidity",
           "law_validity", "max_dt_non_oscillatory"]


class FrictionDesignWarning(UserWarning):
    """A friction element was built with parameters outside the paper's design conditions."""


@dataclass(frozen=True)
class StaticConvergence:
    """Eigen-analysis of eq. (63): ``[e_k, u_k] = A [e_{k−1}, u_{k−1}]`` in static friction."""

    eigenvalues: np.ndarray
    #: spectral radius < 1: the stuck contact settles
    converges: bool
    #: both eigenvalues real and in [0, 1): it settles without oscillating (the paper's criterion)
    non_oscillatory: bool
    #: sqrt(M/(4K)): the largest dt for non-oscillatory settling with critical damping B² = 4KM
    dt_critical: float

    def __str__(self) -> str:
        lam = ", ".join(f"{complex(x):.6g}" for x in np.ravel(self.eigenvalues))
        return (f"eq. (63) eigenvalues [{lam}]: converges={self.converges}, "
                f"non_oscillatory={self.non_oscillatory}, dt_critical={self.dt_critical:.6g} s")


def static_convergence(M: ArrayLike, K: ArrayLike, B: ArrayLike, dt: float) -> StaticConvergence:
    """Eq. (63): the 2×2 static-friction iteration of a model-C contact (K, B) on a mass M.

    Per-joint arrays are accepted; ``converges``/``non_oscillatory`` then hold for all joints
    and ``eigenvalues`` has shape (n, 2).
    """
    M = param("M", M, minimum=0.0, strict=True)
    K = param("K", K, minimum=0.0)
    B = param("B", B, minimum=0.0)
    T = param("dt", dt, minimum=0.0, strict=True, allow_array=False)
    M, K, B = np.broadcast_arrays(np.asarray(M, float), np.asarray(K, float), np.asarray(B, float))
    a = 1.0 - T * T * K / M
    b = T - T * T * B / M
    c = -T * K / M
    d = 1.0 - T * B / M
    tr = a + d
    det = a * d - b * c
    root = np.sqrt((tr * tr - 4.0 * det).astype(complex))
    lam = np.stack([(tr + root) / 2.0, (tr - root) / 2.0], axis=-1)
    tol = 1e-12
    real = np.all(np.abs(lam.imag) <= tol * np.maximum(1.0, np.abs(lam.real)), axis=-1)
    in_unit = np.all((lam.real >= -tol) & (lam.real < 1.0), axis=-1)
    converges = bool(np.all(np.max(np.abs(lam), axis=-1) < 1.0))
    with np.errstate(divide="ignore"):
        dt_crit = float(np.min(np.sqrt(M / (4.0 * K))))
    return StaticConvergence(eigenvalues=lam, converges=converges,
                             non_oscillatory=bool(np.all(real & in_unit)), dt_critical=dt_crit)


def max_dt_non_oscillatory(M: float, K: float) -> float:
    """The paper's bound T² < M/(4K) for critical damping B² = 4KM (Sec. IV-C)."""
    M = param("M", M, minimum=0.0, strict=True, allow_array=False)
    K = param("K", K, minimum=0.0, strict=True, allow_array=False)
    return float(np.sqrt(M / (4.0 * K)))


@dataclass(frozen=True)
class LawValidity:
    """Conditions (15)/(56) and (48)/(58) for one law and one Z."""

    Z: ArrayLike
    min_slope: ArrayLike
    max_abs_slope: ArrayLike
    #: (15): Φ' > −1/Z everywhere, so Φ_Z exists and is unique (Theorem 1)
    unique: bool
    #: Φ_Z is computed in closed form without approximation
    exact: bool
    #: (48): |Φ'| Z ≤ margin (always True for exact laws)
    approximation_valid: bool
    margin: float

    def problems(self, law: FrictionLaw) -> list[str]:
        """Human-readable description of each failed condition (empty when all hold)."""
        out = []
        name = type(law).__name__
        if not self.unique:
            msg = (f"{name}: Theorem 1 condition (15) fails for Z={_fmt(self.Z)}: "
                   f"min Φ' = {_fmt(self.min_slope)} <= -1/Z, so Φ_Z is not unique")
            if isinstance(law, AsymmetricFriction):
                wp, wn = law.effective_dv(self.Z)
                msg += (f"; the stiction drop is widened to dv = {_fmt(wp)} (v > 0) and "
                        f"{_fmt(wn)} (v < 0) instead of {_fmt(law.dv)}: increase dv, or B + dt*K")
            out.append(msg)
        if not self.approximation_valid:
            out.append(f"{name}: approximation (46) is outside its validity condition (48): "
                       f"max |Φ'|·Z = {_fmt(np.asarray(self.max_abs_slope) * self.Z)} > "
                       f"{self.margin:g}; the static level and kinetic force will be off by "
                       f"about that fraction (eqs. 47, 49)")
        return out


def law_validity(law: FrictionLaw, Z: ArrayLike, margin: float = 0.1) -> LawValidity:
    """Check (15) and (48) for ``law`` at the element constant ``Z``.

    Z is T/M for model A, T/C for model B, 1/(B + T K) for model C and A of eq. (44) for model D
    (each element exposes it as ``.Z``). ``margin`` quantifies "≪" in (48).
    """
    if not isinstance(law, FrictionLaw):
        raise ValueError(f"law: expected a fric_core.laws law, got {law!r}")
    Z = param("Z", Z, minimum=0.0, strict=True)
    lo, hi = law.slope_bounds()
    return LawValidity(Z=Z, min_slope=lo, max_abs_slope=hi, unique=law.is_unique(Z),
                       exact=law.exact, approximation_valid=law.approximation_valid(Z, margin),
                       margin=margin)


def warn_design(messages: list[str], stacklevel: int = 3) -> None:
    """Emit each message as a :class:`FrictionDesignWarning`."""
    for msg in messages:
        warnings.warn(msg, FrictionDesignWarning, stacklevel=stacklevel)


def _fmt(x) -> str:
    a = np.asarray(x, dtype=float)
    if a.ndim == 0:
        return f"{float(a):.4g}"
    return np.array2string(a, precision=4)
