"""Physically admissible friction parameters and their covariance (issue 23).

A least-squares fit of real data can put a value outside its physical range: a negative viscous
coefficient (the effort lags the states, the velocity column lags, motion the rigid-body model
misses), a friction that drops across v = 0 (``Cp + Cn < 0``), an efficiency above 1. Such a
value is not friction, and a compensator or simulator given it misbehaves. So the fit's normal
equations are solved again with the ranges as constraints — the minimum of the same (weighted,
for EIV corrected) cost over the admissible set — and every parameter that ends at a bound is
reported as not determined, with the value the data wanted (:class:`Admissible`).

The ranges are bounds after a linear change of variables ``x = T z`` (per joint, block-diagonal):

* asymmetric law (``Cp, bp, Cn, bn``): ``z = (Cp, bp, Cp + Cn, bn)``, ``bp, bn ≥ 0`` and
  ``Cp + Cn ≥ 0`` (the jump at v = 0 is not negative: a monotone law). ``Cp`` and ``Cn`` alone
  are free: an effort offset ``o`` enters them as ``Cp + o``, ``Cn − o`` and may take either
  below 0 (:mod:`fric_core.joint_friction`);
* curve law (levels ``f⁺_0 … f⁺_{K−1}, f⁻_0 … f⁻_{K−1}``): ``z = (f⁺_0, f⁺_1 − f⁺_0, …,
  f⁺_0 + f⁻_0, f⁻_1 − f⁻_0, …)``, every increment ≥ 0 (monotone in |v|) and the jump ≥ 0;
* gear law with the URDF's dynamics (α = 1/η_f, η_b): ``α ≥ 1`` (η_f ≤ 1), ``η_b ≤ 1``.

The bounded problem is solved by bounded-variable least squares (``scipy.optimize.lsq_linear``,
BVLS) on the Cholesky factor of the column-equilibrated normal matrix in z.

Covariance (:func:`covariance`): the classical ``σ̂² H⁻¹`` (with Fuller's EIV term) assumes
residuals independent from sample to sample. A real joint's are not: its model error follows the
motion over seconds, and a filtered effort's noise is coloured. The batch-means (cluster-robust)
sandwich ``H⁻¹ (B/(B−1) Σ_b g_b g_bᵀ) H⁻¹`` over B blocks of consecutive samples
(:func:`~.normal_equations.block_scores`, Newey & West 1987) does not assume that; the reported
standard deviation is the larger of the two per parameter (the robust one is itself noisy with
few blocks), the correlations the robust one's. Parameters at a bound are held there: the
covariance is that of the others given them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

import numpy as np
import scipy.linalg
import scipy.optimize

__all__ = ["Admissible", "constraint_map", "bounded_solution", "covariance"]


@dataclass
class Admissible:
    """The bounded solution: ``x`` (p,), ``x_free`` the unconstrained one, ``active`` the
    z-indices at a bound, ``T`` (p, p), ``lb``, ``ub`` (bounds on z) and ``labels`` (z-index →
    (joint index, what is bounded))."""

    x: np.ndarray
    x_free: np.ndarray
    active: List[int]
    T: np.ndarray
    lb: np.ndarray
    ub: np.ndarray
    labels: Dict[int, Tuple[int, str]] = field(default_factory=dict)


def constraint_map(prob) -> Tuple[np.ndarray, np.ndarray, np.ndarray, Dict[int, Tuple[int, str]]]:
    """``(T, lb, ub, labels)`` of the admissible set of ``prob``'s parameters (module docstring).

    Parameters
    ----------
    prob : _Problem
        The parameter layout (law, joints, friction columns).

    Returns
    -------
    tuple
        ``T`` (p, p) with x = T z; ``lb``, ``ub`` (p,) bounds on z; ``labels``: z-index →
        (joint index, ``"bp"``, ``"bn"``, ``"Cp+Cn"``, ``"eta_f"``, ``"eta_b"``, ``"jump"``
        (curve: f⁺_0 + f⁻_0) or ``"f+k"``/``"f-k"`` (curve increments)).
    """
    p, n = prob.p, prob.n
    T = np.eye(p)
    lb = np.full(p, -np.inf)
    ub = np.full(p, np.inf)
    labels: Dict[int, Tuple[int, str]] = {}
    f0, nf = prob.sl_fric.start, prob.nf
    for j in range(n):
        c = f0 + nf * j
        if prob.law == "curve":
            K = prob.nk
            for side in (0, 1):
                s0 = c + side * K
                for k in range(K):          # f_k = z_0 + Σ_{i ≤ k} z_i (increments)
                    T[s0 + k, s0:s0 + k + 1] = 1.0
                for k in range(1, K):
                    lb[s0 + k] = 0.0
                    labels[s0 + k] = (j, f"{'f+' if side == 0 else 'f-'}{k}")
            # f⁻_0 = jump − f⁺_0: z[c + K] is the jump
            T[c + K:c + 2 * K, c] -= 1.0
            lb[c + K] = 0.0
            labels[c + K] = (j, "jump")
        else:  # Cp, bp, Cn, bn: z = (Cp, bp, Cp + Cn, bn)
            T[c + 2, c] = -1.0
            for off, what in ((1, "bp"), (2, "Cp+Cn"), (3, "bn")):
                lb[c + off] = 0.0
                labels[c + off] = (j, what)
    if prob.gear and prob.dynamics == "urdf":
        for j in range(n):
            ia, ib = prob.sl_alpha.start + j, prob.sl_etab.start + j
            lb[ia] = 1.0
            labels[ia] = (j, "eta_f")
            ub[ib] = 1.0
            labels[ib] = (j, "eta_b")
    return T, lb, ub, labels


def bounded_solution(Hc: np.ndarray, g: np.ndarray, theta0: np.ndarray, x_free: np.ndarray,
                     prob, free=None) -> Admissible:
    """Minimise ``½ xᵀHc x − gᵀx`` (the cost about θ₀, whose unconstrained minimum is
    ``x_free``) over ``θ₀ + x`` admissible (module docstring).

    Parameters
    ----------
    Hc : (p, p) ndarray
        The (EIV-corrected) weighted normal matrix, positive definite.
    g : (p,) ndarray
        The weighted gradient at θ₀.
    theta0 : (p,) ndarray
        Where the cost is expanded (the bounds apply to θ₀ + x).
    x_free : (p,) ndarray
        The unconstrained step.
    prob : _Problem
        The parameter layout.
    free : array_like of int, optional
        The estimated parameters (default all); the others (rigid-body parameters held, outside
        the blocks of ``T``) keep ``θ₀``.

    Returns
    -------
    Admissible
        The step and what is at a bound.
    """
    T, lb, ub, labels = constraint_map(prob)
    Tinv = np.linalg.inv(T)
    z0 = Tinv @ theta0
    z_free = Tinv @ (theta0 + x_free)
    tol = 1e-12
    if np.all(z_free >= lb - tol) and np.all(z_free <= ub + tol):
        return Admissible(x_free.copy(), x_free.copy(), [], T, lb, ub, labels)
    F = np.arange(T.shape[0]) if free is None else np.asarray(free, dtype=int)
    TF = T[np.ix_(F, F)]  # (held parameters are rigid-body ones: identity rows and columns)
    Hz = TF.T @ Hc[np.ix_(F, F)] @ TF
    gz = TF.T @ g[F]
    s = np.sqrt(np.maximum(np.diag(Hz), 1e-300))
    Hs = Hz / np.outer(s, s)
    R = scipy.linalg.cholesky(Hs, lower=False)
    # ½ yᵀHs y − (gz/s)ᵀy = ½‖R y − R⁻ᵀ gz/s‖² + const, y = (z − z0)·s
    rhs = scipy.linalg.solve_triangular(R, gz / s, trans="T", lower=False)
    lo = (lb[F] - z0[F]) * s
    hi = (ub[F] - z0[F]) * s
    res = scipy.optimize.lsq_linear(R, rhs, bounds=(lo, hi), method="bvls", tol=1e-12)
    z = z0.copy()
    z[F] = z0[F] + res.x / s
    z = np.clip(z, lb, ub)
    scale = np.maximum(np.abs(z_free - z0), 1e-12)
    active = [int(i) for i in range(z.size)
              if (np.isfinite(lb[i]) and z[i] - lb[i] <= 1e-9 * scale[i] + 1e-14)
              or (np.isfinite(ub[i]) and ub[i] - z[i] <= 1e-9 * scale[i] + 1e-14)]
    return Admissible(T @ z - theta0, x_free.copy(), active, T, lb, ub, labels)


def covariance(Hc: np.ndarray, adm: Optional[Admissible], free: np.ndarray, s2: float,
               extra: Optional[np.ndarray], scores: Optional[np.ndarray],
               counts: Optional[np.ndarray]) -> np.ndarray:
    """The parameters' covariance (p, p) (module docstring): classical and batch-means, the
    larger variance per parameter; parameters at a bound held.

    Parameters
    ----------
    Hc : (p, p) ndarray
        The weighted (corrected) normal matrix.
    adm : Admissible or None
        The bounded solution (None: no constraints).
    free : (p,) int ndarray
        Parameters that are estimated (the others are fixed, e.g. a gauge).
    s2 : float
        The weighted residual variance (≈ 1 with the per-joint weights).
    extra : (p, p) ndarray or None
        EIV's additional middle term ``S_AA s² + S_Ar S_Arᵀ/N`` (Fuller 2.2.1), in x.
    scores : (B, p) ndarray or None
        The blocks' scores at the solution (:func:`~.normal_equations.block_scores`).
    counts : (B,) ndarray or None
        Samples per block (the scores are centred in proportion to them).

    Returns
    -------
    (p, p) ndarray
        Zero rows/columns for the fixed parameters.
    """
    p = Hc.shape[0]
    T = np.eye(p) if adm is None else adm.T
    active = set() if adm is None else set(adm.active)
    keep = [i for i in range(p) if i not in active and (adm is not None or i in set(free))]
    if adm is not None:  # fixed x parameters are fixed z parameters (the gauge: identity rows)
        fixed = set(range(p)) - set(int(i) for i in free)
        keep = [i for i in keep if i not in fixed]
    F = np.array(keep, dtype=int)
    TF = T[:, F]
    Hz = TF.T @ Hc @ TF
    sd = np.sqrt(np.maximum(np.diag(Hz), 1e-300))
    w, U = np.linalg.eigh(Hz / np.outer(sd, sd))
    w = np.maximum(w, w[-1] * 1e-15)
    Hinv = (U / w) @ U.T / np.outer(sd, sd)
    Vc = Hinv * s2
    if extra is not None:
        Vc = Vc + Hinv @ (TF.T @ extra @ TF) @ Hinv
    V = Vc
    if scores is not None and len(scores) >= 4:
        B = len(scores)
        gz = scores @ TF
        cnt = np.asarray(counts, dtype=float)
        gz = gz - np.outer(cnt / cnt.sum(), gz.sum(axis=0))  # EIV: Σ g ≠ 0 by its correction
        Vr = Hinv @ (gz.T @ gz) @ Hinv * (B / (B - 1.0))
        dc, dr = np.diag(Vc), np.diag(Vr)
        d = np.sqrt(np.maximum(np.maximum(dc, dr), 0.0))
        with np.errstate(invalid="ignore", divide="ignore"):
            corr = Vr / np.sqrt(np.outer(dr, dr))
        corr = np.where(np.isfinite(corr), corr, 0.0)
        np.fill_diagonal(corr, 1.0)
        V = corr * np.outer(d, d)
    out = TF @ V @ TF.T
    return out
