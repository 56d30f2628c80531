"""Joint friction of an n-joint arm by least squares (issue 15, step 1; paper 003 eq. (5)).

Per joint, paper 003's asymmetric Coulomb + viscous law ``τ_f = Cp + bp·v`` (v > Δv),
``−Cn + bn·v`` (v < −Δv) (Cp, Cn positive magnitudes, N·m; bp, bn N·m·s/rad); the rows of a joint
inside the Δv band are left out, as the paper bins them out. The measured joint torques are

* ``dynamics="identify"``: ``τ = Y_b(q, q̇, q̈) β + F(q̇) θ`` — the rigid-body base parameters β
  (:func:`~.regressor.base_parameters`) are fitted jointly with the friction θ, so the URDF's
  inertias play no part (only its kinematics);
* ``dynamics="urdf"``: ``τ − rnea(q, q̇, q̈) = F(q̇) θ`` — the URDF's inertias are trusted.

Least squares, paper 003 eq. (5), ``θ̂ = (AᵀA)⁻¹ Aᵀ τ``, weighted per joint: a first fit gives each
joint's residual variance σ_j², the second fit divides joint j's rows by σ_j (joints' torque
sensors differ). Standard deviations from ``σ̂² (ÃᵀÃ)⁻¹`` of the weighted design Ã (σ̂² its
residual variance, ≈ 1), assuming independent errors from sample to sample. ``cond`` is the
condition number of the column-equilibrated weighted design.

Not yet here (issue 15): the errors-in-variables estimator (eq. (6)), the gear model.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Optional

import numpy as np
import pinocchio as pin

from ..transmission.urdf_dynamics import UrdfDynamics
from .regressor import (FRICTION_PARAMS, BaseParameters, base_parameters, friction_columns,
                        rigid_body_regressor)

__all__ = ["ArmFrictionFit", "fit_arm_friction"]


@dataclass
class ArmFrictionFit:
    """Result of :func:`fit_arm_friction`.

    ``joints``: joint name → ``{"Cp", "Cn", "bp", "bn"}``; ``std``: the same with standard
    deviations; ``base``: the base set and ``beta``/``beta_std`` its fitted values (None with
    ``dynamics="urdf"``); ``cond``: condition number of the column-equilibrated design;
    ``n_used``: rows (joint samples outside the band) per joint; ``residual_std``: per joint, N·m.
    """

    joints: Dict[str, Dict[str, float]]
    std: Dict[str, Dict[str, float]]
    dynamics: str
    method: str
    dv: float
    cond: float
    n_used: Dict[str, int]
    residual_std: Dict[str, float]
    base: Optional[BaseParameters] = None
    beta: Optional[np.ndarray] = None
    beta_std: Optional[np.ndarray] = None


def _check(q, v, a, tau, n):
    arrs = {}
    for name, x in (("q", q), ("v", v), ("a", a), ("tau", tau)):
        arr = np.asarray(x, dtype=float)
        if arr.ndim == 1 and n == 1:
            arr = arr[:, None]
        arrs[name] = arr
    N = arrs["q"].shape[0] if arrs["q"].ndim == 2 else -1
    for name, arr in arrs.items():
        if arr.ndim != 2 or arr.shape[1] != n or arr.shape[0] != N:
            raise ValueError(f"{name}: expected shape (N, n) = ({N if N >= 0 else 'N'}, {n}) "
                             f"(samples × the model's {n} joints), got {arr.shape}")
    if N == 0:
        raise ValueError("q: no samples")
    for name, arr in arrs.items():
        bad = ~np.all(np.isfinite(arr), axis=1)
        if bad.any():
            raise ValueError(f"{name}: contains NaN or inf ({int(bad.sum())} rows, first at row "
                             f"{int(np.argmax(bad))})")
    return arrs["q"], arrs["v"], arrs["a"], arrs["tau"]


def _model(model) -> UrdfDynamics:
    return model if isinstance(model, UrdfDynamics) else UrdfDynamics(model)


def fit_arm_friction(q, v, a, tau, model, dynamics: str = "identify", method: str = "ols",
                     dv: float = 0.01, base: Optional[BaseParameters] = None) -> ArmFrictionFit:
    """Fit every joint's asymmetric Coulomb + viscous friction (paper 003 eq. (5)).

    Parameters
    ----------
    q, v, a : (N, n) array_like
        Joint positions [rad], velocities [rad/s] and accelerations [rad/s²], columns in the
        model's joint order (``model.joint_names``).
    tau : (N, n) array_like
        Measured joint torques [N·m] (ros2_control's effort state).
    model : UrdfDynamics or str
        The arm, or a URDF path / bundled name for :class:`UrdfDynamics`.
    dynamics : {"identify", "urdf"}
        ``"identify"``: fit the rigid-body base parameters jointly (the URDF's inertias unused);
        ``"urdf"``: subtract the URDF's inverse dynamics (``pin.rnea``) and fit friction only.
    method : {"ols"}
        Least squares, eq. (5). (``"eiv"``, eq. (6), is not implemented yet.)
    dv : float
        Half width Δv [rad/s] of the band around zero velocity left out per joint.
    base : BaseParameters, optional
        A precomputed base set (default: :func:`~.regressor.base_parameters` of the model).

    Returns
    -------
    ArmFrictionFit
        Per-joint ``Cp, Cn, bp, bn`` with standard deviations, the base parameters (identify),
        the condition number.

    Raises
    ------
    ValueError
        Naming the field: bad shapes, NaN/inf rows, an unknown ``dynamics``/``method``, a
        negative ``dv``, a joint without samples on one side of the band
        (``"joint j2: no samples with v < -dv (one direction only)"``), a rank-deficient design.
    """
    if dynamics not in ("identify", "urdf"):
        raise ValueError(f"dynamics: expected 'identify' or 'urdf', got {dynamics!r}")
    if method == "eiv":
        raise ValueError("method: 'eiv' (paper 003 eq. (6)) is not implemented yet; use 'ols'")
    if method != "ols":
        raise ValueError(f"method: expected 'ols', got {method!r}")
    if not (np.isfinite(dv) and dv >= 0.0):
        raise ValueError(f"dv: expected a finite Δv >= 0 [rad/s], got {dv!r}")
    dyn = _model(model)
    n, names = dyn.n, dyn.joint_names
    q, v, a, tau = _check(q, v, a, tau, n)
    N = q.shape[0]
    for j, name in enumerate(names):
        if not np.any(v[:, j] > dv):
            raise ValueError(f"joint {name}: no samples with v > dv (one direction only)")
        if not np.any(v[:, j] < -dv):
            raise ValueError(f"joint {name}: no samples with v < -dv (one direction only)")
    F, keep = friction_columns(v, dv)
    y = tau.reshape(N * n).copy()
    if dynamics == "urdf":
        for k in range(N):
            y[k * n:(k + 1) * n] -= _rnea(dyn, q[k], v[k], a[k])
        A = F
    else:
        base = base if base is not None else base_parameters(dyn)
        A = np.hstack([base.reduce(rigid_body_regressor(dyn, q, v, a)), F])
    joint_of_row = np.tile(np.arange(n), N)[keep]
    A, y = A[keep], y[keep]
    p = A.shape[1]
    if A.shape[0] <= p:
        raise ValueError(f"q: {A.shape[0]} rows outside the band for {p} parameters; record longer")
    # eq. (5), then weighted by each joint's residual standard deviation
    theta = _lstsq(A, y)
    r = y - A @ theta
    sig = np.array([np.sqrt(np.mean(r[joint_of_row == j] ** 2) * A.shape[0] / (A.shape[0] - p))
                    for j in range(n)])
    sig = np.where(sig > 0, sig, 1.0)
    w = 1.0 / sig[joint_of_row]
    Aw, yw = A * w[:, None], y * w
    scale = np.linalg.norm(Aw, axis=0)
    if np.any(scale == 0):
        raise ValueError("q: a parameter has an all-zero column (not excited by the data)")
    As = Aw / scale
    s = np.linalg.svd(As, compute_uv=False)
    cond = float(s[0] / s[-1]) if s[-1] > 0 else float("inf")
    if not cond < 1e10:
        raise ValueError(f"q: the regressor is rank deficient (condition number {cond:.3g}); the "
                         "trajectory does not excite every parameter")
    ths, *_ = np.linalg.lstsq(As, yw, rcond=None)
    theta = ths / scale
    rw = yw - Aw @ theta
    s2 = float(rw @ rw) / (Aw.shape[0] - p)
    cov_s = s2 * np.linalg.inv(As.T @ As)
    std = np.sqrt(np.diag(cov_s)) / scale
    rres = y - A @ theta
    nb = p - 4 * n
    joints, stds, used, rstd = {}, {}, {}, {}
    for j, name in enumerate(names):
        sl = slice(nb + 4 * j, nb + 4 * j + 4)
        joints[name] = dict(zip(FRICTION_PARAMS, map(float, theta[sl])))
        stds[name] = dict(zip(FRICTION_PARAMS, map(float, std[sl])))
        m = joint_of_row == j
        used[name] = int(m.sum())
        rstd[name] = float(np.sqrt(np.mean(rres[m] ** 2)))
    fit = ArmFrictionFit(joints=joints, std=stds, dynamics=dynamics, method=method, dv=float(dv),
                         cond=cond, n_used=used, residual_std=rstd)
    if dynamics == "identify":
        fit.base, fit.beta, fit.beta_std = base, theta[:nb].copy(), std[:nb].copy()
    return fit


def _lstsq(A, y):
    scale = np.linalg.norm(A, axis=0)
    scale = np.where(scale > 0, scale, 1.0)
    x, *_ = np.linalg.lstsq(A / scale, y, rcond=None)
    return x / scale


def _rnea(dyn: UrdfDynamics, q, v, a) -> np.ndarray:
    tau = pin.rnea(dyn.model, dyn.data, dyn._config(q).copy(), dyn._velocity(v).copy(),
                   dyn._velocity(a).copy())
    return tau if dyn._perm is None else tau[dyn._perm]
