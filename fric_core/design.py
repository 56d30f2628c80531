"""Parameter design help (Kikuuwe et al. 2006, Sec. III-E and IV-C).

* :func:`static_convergence` — the static-friction dynamics (63) of a model-C contact pulling a
  mass M: do they converge, and without oscillation? :func:`non_oscillatory_B` and
  :func:`non_oscillatory_K` give the closed-form bounds on B and K for settling without
  oscillation, and :func:`static_advice` words them for a log line.
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
           "law_validity", "max_dt_non_oscillatory", "non_oscillatory_B", "non_oscillatory_K",
           "static_advice"]


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

    Parameters
    ----------
    M : float or (n,) array
        Mass, kg (> 0).
    K : float or (n,) array
        Contact stiffness of the model-C element, N/m (≥ 0).
    B : float or (n,) array
        Contact viscosity of the model-C element, N s/m (≥ 0).
    dt : float
        Time step T, s (> 0).

    Returns
    -------
    StaticConvergence
        The eigenvalues of (63) (shape (2,), or (n, 2) for per-joint arrays), whether they
        converge and settle without oscillation, and ``dt_critical`` = sqrt(M/(4K)), s (the
        smallest over the joints; inf for K = 0).
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


def non_oscillatory_B(M: float, K: float, dt: float) -> tuple[float, float]:
    """The range ``(B_min, B_max)`` of B for which eq. (63) settles without oscillation.

    With β = T B/M and κ = T² K/M, the matrix of (63) has trace 2 − β − κ and determinant
    1 − β, so its eigenvalues are real iff (β + κ)² ≥ 4κ, i.e. β ≥ 2√κ − κ, and lie in [0, 1)
    iff moreover β ≤ 1 and β + κ ≤ 2. In physical units: ``B_min = 2√(K M) − T K`` (the
    continuous-time critical damping 2√(KM) less the T K that the implicit step adds),
    ``B_max = min(M/T, 2M/T − T K)``. Empty (B_min > B_max) when T² > M/(4K) roughly: then no
    B helps and T or K must change (:func:`max_dt_non_oscillatory`).

    Parameters
    ----------
    M : float
        Mass, kg (> 0).
    K : float
        Contact stiffness, N/m (≥ 0).
    dt : float
        Time step T, s (> 0).

    Returns
    -------
    B_min : float
        Smallest non-oscillatory viscosity, N s/m (≥ 0).
    B_max : float
        Largest non-oscillatory viscosity, N s/m; below ``B_min`` when no B works.
    """
    M = param("M", M, minimum=0.0, strict=True, allow_array=False)
    K = param("K", K, minimum=0.0, allow_array=False)
    T = param("dt", dt, minimum=0.0, strict=True, allow_array=False)
    return (max(0.0, 2.0 * float(np.sqrt(K * M)) - T * K), min(M / T, 2.0 * M / T - T * K))


def non_oscillatory_K(M: float, B: float, dt: float) -> float:
    """The largest K for which eq. (63) settles without oscillation at this B.

    See :func:`non_oscillatory_B`: β ≥ 2√κ − κ solved for κ gives
    ``K_max = (M/T²)(1 − √(1 − T B/M))²``; 0 when T B ≥ M (then the step itself overshoots:
    lower B or T).

    Parameters
    ----------
    M : float
        Mass, kg (> 0).
    B : float
        Contact viscosity, N s/m (≥ 0).
    dt : float
        Time step T, s (> 0).

    Returns
    -------
    K_max : float
        Largest non-oscillatory stiffness, N/m (0 when T B ≥ M).
    """
    M = param("M", M, minimum=0.0, strict=True, allow_array=False)
    B = param("B", B, minimum=0.0, allow_array=False)
    T = param("dt", dt, minimum=0.0, strict=True, allow_array=False)
    beta = T * B / M
    if beta >= 1.0:
        return 0.0
    return M / (T * T) * (1.0 - float(np.sqrt(1.0 - beta))) ** 2


def static_advice(M: float, K: float, B: float, dt: float, *, k_name: str = "K",
                  b_name: str = "B") -> str:
    """What to change so that eq. (63) settles without oscillation, in words with the numbers.

    For a log line: raise B to at least B_min (:func:`non_oscillatory_B`), or lower K to at most
    K_max (:func:`non_oscillatory_K`); when neither helps, lower dt below
    :func:`max_dt_non_oscillatory`.

    Parameters
    ----------
    M, K, B, dt : float
        Mass (kg, > 0), contact stiffness (N/m, ≥ 0), contact viscosity (N s/m, ≥ 0) and time
        step T (s, > 0), as for :func:`static_convergence` (scalars here).
    k_name : str, optional
        Name of the stiffness in the advice (e.g. the ROS parameter's name), default ``"K"``.
    b_name : str, optional
        Name of the viscosity in the advice, default ``"B"``.

    Returns
    -------
    str
        The advice, options joined by ``" or "``.
    """
    b_lo, b_hi = non_oscillatory_B(M, K, dt)
    k_max = non_oscillatory_K(M, B, dt)
    opts = []
    if b_lo <= b_hi:
        # round the bound up (B) / down (K) in the 4th digit so that the advice itself passes
        opts.append(f"raise {b_name} to >= {_round_up(b_lo)} (2*sqrt(K*M) - dt*K)")
    if k_max > 0.0:
        opts.append(f"lower {k_name} to <= {_round_down(k_max)} "
                    "((M/dt^2)*(1 - sqrt(1 - dt*B/M))^2)")
    if not opts:
        return (f"no B settles without oscillation at dt = {dt:g}: lower dt below "
                f"{max_dt_non_oscillatory(M, K):.4g} s or lower {k_name}")
    return " or ".join(opts)


def _round_up(x: float) -> str:
    e = 10.0 ** (np.floor(np.log10(abs(x))) - 3) if x else 1.0
    return f"{np.ceil(x / e) * e:.4g}"


def _round_down(x: float) -> str:
    e = 10.0 ** (np.floor(np.log10(abs(x))) - 3) if x else 1.0
    return f"{np.floor(x / e) * e:.4g}"


def max_dt_non_oscillatory(M: float, K: float) -> float:
    """The paper's bound T² < M/(4K) for critical damping B² = 4KM (Sec. IV-C).

    Parameters
    ----------
    M : float
        Mass, kg (> 0).
    K : float
        Contact stiffness, N/m (> 0).

    Returns
    -------
    float
        sqrt(M/(4K)), s: the largest time step for non-oscillatory settling at B² = 4KM.
    """
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

    Parameters
    ----------
    law : FrictionLaw
        A :mod:`fric_core.laws` friction law Φ.
    Z : float or (n,) array
        The element constant Z (> 0), in the inverse units of the law's slope (m/(N s)).
    margin : float, optional
        Upper bound on max |Φ'| Z taken as "≪ 1" in (48), default 0.1.

    Returns
    -------
    LawValidity
        The slope bounds of the law and whether (15) and (48) hold.

    Raises
    ------
    ValueError
        If ``law`` is not a :class:`~fric_core.laws.FrictionLaw` or ``Z`` is not positive.
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
