"""Design-matrix columns for arm friction identification (issue 15).

* :func:`rigid_body_regressor`: Pinocchio's joint torque regressor ``Y(q, q̇, q̈)`` (n × 10·n_b,
  ``τ = Y π`` with π the bodies' dynamic parameters ``m, m·c, I`` in Pinocchio's order), stacked
  over samples: row ``k·n + j`` is joint j at sample k.
* :func:`base_parameters`: the identifiable base set. Many columns of Y are zero or linear
  combinations of others for every motion the arm can make; a QR decomposition with column
  pivoting of Y stacked over random configurations, velocities and accelerations (within the joint
  limits; the kinematics only, so the URDF's inertias play no part) gives the rank r, the
  independent columns ``Y_b`` and ``K`` with ``Y_d = Y_b K``; then ``Y π = Y_b β`` with
  ``β = π_b + K π_d`` (:attr:`BaseParameters.map`, r × 10·n_b, β = map @ π).
* rotor inertias (``armature=True``): n more columns, ``q̈_j`` on joint j's rows (the rotor
  inertia referred to the joint, not through the gear); in the base set they merge with link
  inertias where no motion separates them (:func:`separable_armature`; e.g. joint 1 about a
  fixed axis: its rotor and the first link's inertia about that axis both multiply ``q̈_1`` alone).
* :func:`friction_columns`: paper 003's asymmetric Coulomb + viscous law per joint,
  ``τ_f = Cp + bp·v`` (v > Δv), ``−Cn + bn·v`` (v < −Δv), ``Cp``, ``Cn`` positive magnitudes; the
  rows with ``|v| <= Δv`` (the Δv band, where static friction acts) are left out.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin
import scipy.linalg

__all__ = ["BaseParameters", "base_parameters", "rigid_body_regressor", "friction_columns",
           "separable_armature", "FRICTION_PARAMS", "curve_columns", "curve_columns_own",
           "curve_slopes"]

#: Friction parameters per joint, in the order of :func:`friction_columns`' columns.
FRICTION_PARAMS = ("Cp", "bp", "Cn", "bn")


def rigid_body_regressor(dyn, q, v, a, armature: bool = False) -> np.ndarray:
    """Joint torque regressor stacked over samples (Pinocchio, once per sample).

    Parameters
    ----------
    dyn : fric_core.transmission.urdf_dynamics.UrdfDynamics
        The arm (its joint order is the columns' order of ``q``, ``v``, ``a``).
    q, v, a : (N, n) array_like
        Joint positions [rad or m], velocities and accelerations.
    armature : bool
        Append n rotor-inertia columns: column ``10·n_b + j`` is ``q̈_j`` on joint j's rows (the
        rotor inertia referred to the joint, ``m_j q̈_j``, not through the gear).

    Returns
    -------
    (N·n, 10·n_b [+ n]) ndarray
        Row ``k·n + j``: joint j at sample k; ``τ = Y π`` with π the dynamic parameters of
        Pinocchio's n_b bodies (``inertia.toDynamicParameters()`` of each, in body order)
        followed by the n rotor inertias when ``armature``.
    """
    q, v, a = (np.atleast_2d(np.asarray(x, dtype=float)) for x in (q, v, a))
    model, data, n = dyn.model, dyn.data, dyn.n
    nr = 10 * (model.njoints - 1)
    N = q.shape[0]
    out = np.zeros((N, n, nr + (n if armature else 0)))
    perm = dyn._perm
    reg = pin.computeJointTorqueRegressor
    if perm is None and not dyn._cont:
        for k in range(N):
            out[k, :, :nr] = reg(model, data, q[k], v[k], a[k])
    else:
        for k in range(N):
            Y = reg(model, data, dyn._config(q[k]), dyn._velocity(v[k]), dyn._velocity(a[k]))
            out[k, :, :nr] = Y if perm is None else Y[perm]
    if armature:
        j = np.arange(n)
        out[:, j, nr + j] = a
    return out.reshape(N * n, -1)


@dataclass(frozen=True)
class BaseParameters:
    """The identifiable base set of an arm's dynamic parameters (see the module docstring).

    ``index``: the base columns of the full regressor (r of them); ``map``: (r, 10·n_b [+ n])
    with ``β = map @ π``; ``names``: ``"<body>.<param>"`` (``"<joint>.armature"`` for a rotor
    inertia) of each base column (the base parameter is that one plus the combination of
    dependent ones given by its row of ``map``); ``armature``: whether the n rotor-inertia
    columns of :func:`rigid_body_regressor` are part of the set.
    """

    index: np.ndarray
    map: np.ndarray
    names: tuple
    armature: bool = False

    def reduce(self, Y: np.ndarray) -> np.ndarray:
        """The base columns ``Y_b`` of a full regressor ``Y``."""
        return Y[:, self.index]

    def beta(self, pi, armature=None) -> np.ndarray:
        """Base parameters ``β = map @ π`` of full dynamic parameters π (10·n_b values; with an
        armature base set, the rotor inertias ``armature`` (n values, default 0) are appended
        unless π already holds them)."""
        pi = np.asarray(pi, dtype=float)
        extra = self.map.shape[1] - pi.size
        if extra > 0:
            arm = np.zeros(extra) if armature is None else np.asarray(armature, dtype=float)
            pi = np.concatenate([pi, arm])
        return self.map @ pi


_PI_NAMES = ("m", "mcx", "mcy", "mcz", "Ixx", "Ixy", "Iyy", "Ixz", "Iyz", "Izz")


def _random_motion_regressor(dyn, samples: int, seed: int, armature: bool) -> np.ndarray:
    """:func:`rigid_body_regressor` on ``samples`` random (q, q̇, q̈): positions uniform within
    the joint limits (±π for unlimited joints), velocities and accelerations standard normal,
    from ``numpy.random.default_rng(seed)``."""
    rng = np.random.default_rng(seed)
    lo = np.where(np.isfinite(dyn.lower), dyn.lower, -np.pi)
    hi = np.where(np.isfinite(dyn.upper), dyn.upper, np.pi)
    q = rng.uniform(lo, hi, size=(samples, dyn.n))
    v = rng.standard_normal((samples, dyn.n))
    a = rng.standard_normal((samples, dyn.n))
    return rigid_body_regressor(dyn, q, v, a, armature=armature)


def base_parameters(dyn, samples: int = 200, seed: int = 0, tol: float = 1e-8,
                    armature: bool = False) -> BaseParameters:
    """The identifiable base set by QR with column pivoting on random motions.

    Parameters
    ----------
    dyn : fric_core.transmission.urdf_dynamics.UrdfDynamics
        The arm.
    samples : int
        Number of random (q, q̇, q̈) samples (within the joint limits; ±π for unlimited joints,
        velocities and accelerations standard normal).
    seed : int
        Seed of the random samples (the result does not depend on it for generic motions).
    tol : float
        Relative rank tolerance on the diagonal of R (against its largest element).
    armature : bool
        Include the rotor inertias (one column ``q̈_j`` on joint j's rows each): where the data
        cannot tell a rotor inertia from link inertias (e.g. a first joint about the vertical:
        its rotor and the first link's ``Izz`` both multiply ``q̈_1`` alone) the QR merges them.

    Returns
    -------
    BaseParameters
        Base column indices, the full-to-base map and the columns' names.
    """
    Y = _random_motion_regressor(dyn, samples, seed, armature=armature)
    _, R, P = scipy.linalg.qr(Y, mode="economic", pivoting=True)
    d = np.abs(np.diag(R))
    r = int(np.sum(d > tol * d[0])) if d.size and d[0] > 0 else 0
    idx_b, idx_d = P[:r], P[r:]
    K = scipy.linalg.solve_triangular(R[:r, :r], R[:r, r:]) if r else np.zeros((0, idx_d.size))
    full = np.zeros((r, Y.shape[1]))
    full[:, idx_b] = np.eye(r)
    full[:, idx_d] = K
    full[np.abs(full) < 1e-10] = 0.0
    order = np.argsort(idx_b)  # base columns in the regressor's own order
    idx_b, full = idx_b[order], full[order]
    bodies = [dyn.model.names[j] for j in range(1, dyn.model.njoints)]
    nr = 10 * len(bodies)
    names = tuple(f"{bodies[i // 10]}.{_PI_NAMES[i % 10]}" if i < nr
                  else f"{dyn.joint_names[i - nr]}.armature" for i in idx_b)
    return BaseParameters(index=idx_b, map=full, names=names, armature=bool(armature))


def separable_armature(dyn, samples: int = 200, seed: int = 0, tol: float = 1e-8) -> np.ndarray:
    """Which rotor inertias the rigid-body regressor cannot absorb.

    Joint j's rotor-inertia column (``q̈_j`` on joint j's rows) is separable when it is not in
    the span of the rigid-body regressor for every motion (random samples as in
    :func:`base_parameters`); a first joint about the vertical is the classic exception (its
    rotor and the first link's ``Izz`` both multiply ``q̈_1`` alone).

    Parameters
    ----------
    dyn : fric_core.transmission.urdf_dynamics.UrdfDynamics
        The arm.
    samples, seed, tol : int, int, float
        As in :func:`base_parameters` (``tol`` relative to the column's norm).

    Returns
    -------
    (n,) bool ndarray
        True where the rotor inertia is separable from the link inertias.
    """
    Y = _random_motion_regressor(dyn, samples, seed, armature=True)
    nr = Y.shape[1] - dyn.n
    Q, R, _ = scipy.linalg.qr(Y[:, :nr], mode="economic", pivoting=True)
    d = np.abs(np.diag(R))
    Q = Q[:, :int(np.sum(d > tol * d[0]))]
    out = np.empty(dyn.n, dtype=bool)
    for j in range(dyn.n):
        c = Y[:, nr + j]
        res = c - Q @ (Q.T @ c)
        out[j] = np.linalg.norm(res) > 1e-6 * np.linalg.norm(c)
    return out


def friction_columns(v, dv: float):
    """Columns of the asymmetric Coulomb + viscous law per joint (paper 003's model).

    Parameters
    ----------
    v : (N, n) array_like
        Joint velocities.
    dv : float
        Half width Δv of the band around zero velocity whose rows are left out (≥ 0).

    Returns
    -------
    columns : (N·n, 4·n) ndarray
        Rows as in :func:`rigid_body_regressor`; columns ``4j … 4j+3`` carry joint j's
        ``Cp, bp, Cn, bn`` (:data:`FRICTION_PARAMS`): ``[1, v, 0, 0]`` for v > Δv and
        ``[0, 0, −1, v]`` for v < −Δv, zero on the other joints' rows.
    keep : (N·n,) bool ndarray
        False on the rows inside the band (|v| <= Δv).
    """
    v = np.atleast_2d(np.asarray(v, dtype=float))
    N, n = v.shape
    pos, neg = v > dv, v < -dv
    cols = np.zeros((N, n, 4 * n))
    j = np.arange(n)
    cols[:, j, 4 * j] = pos
    cols[:, j, 4 * j + 1] = np.where(pos, v, 0.0)
    cols[:, j, 4 * j + 2] = -neg.astype(float)
    cols[:, j, 4 * j + 3] = np.where(neg, v, 0.0)
    return cols.reshape(N * n, 4 * n), (pos | neg).reshape(N * n)


def _hats(x: np.ndarray, knots: np.ndarray):
    """Hat (piecewise-linear interpolation) basis at speeds ``x`` ≥ 0 over ``knots``, the last
    segment continued linearly beyond the last knot; (values, derivatives), each (N, K)."""
    K = knots.size
    seg = np.clip(np.searchsorted(knots, x, side="right") - 1, 0, K - 2)
    lo, hi = knots[seg], knots[seg + 1]
    w = (x - lo) / (hi - lo)
    rows = np.arange(x.size)
    val = np.zeros((x.size, K))
    der = np.zeros((x.size, K))
    val[rows, seg] = 1.0 - w
    val[rows, seg + 1] = w
    der[rows, seg] = -1.0 / (hi - lo)
    der[rows, seg + 1] = 1.0 / (hi - lo)
    return val, der


def curve_columns(v, dv: float, knots):
    """Columns of the monotone piecewise-linear law (``law="curve"``) per joint: the friction
    is linear in its levels at the knots, ``τ_f(v) = Σ_k f⁺_k φ_k(v)`` for v > Δv and
    ``−Σ_k f⁻_k φ_k(|v|)`` for v < −Δv (φ_k the hat functions over the side's knots, the last
    segment continued beyond the last knot).

    Parameters
    ----------
    v : (N, n) array_like
        Joint velocities.
    dv : float
        Half width Δv of the band left out.
    knots : sequence of (v_pos, v_neg)
        Per joint, the knot speeds of each side (magnitudes from 0, K each, the same K).

    Returns
    -------
    columns : (N·n, 2K·n) ndarray
        Joint j's ``f⁺_0 … f⁺_{K−1}, f⁻_0 … f⁻_{K−1}`` in columns ``2Kj …``.
    keep : (N·n,) bool ndarray
        False inside the band.
    """
    own, keep = curve_columns_own(v, dv, knots)
    N, n, nf = own.shape
    cols = np.zeros((N, n, nf * n))
    for j in range(n):
        cols[:, j, nf * j:nf * (j + 1)] = own[:, j]
    return cols.reshape(N * n, nf * n), keep.reshape(N * n)


def curve_columns_own(v, dv: float, knots):
    """Each joint's own :func:`curve_columns` (the others are zero on its rows).

    Parameters
    ----------
    v, dv, knots
        As for :func:`curve_columns`.

    Returns
    -------
    columns : (N, n, 2K) ndarray
        Joint j's ``f⁺_0 … f⁺_{K−1}, f⁻_0 … f⁻_{K−1}`` columns on its own rows.
    keep : (N, n) bool ndarray
        False inside the band.
    """
    v = np.atleast_2d(np.asarray(v, dtype=float))
    N, n = v.shape
    K = len(knots[0][0])
    cols = np.zeros((N, n, 2 * K))
    pos, neg = v > dv, v < -dv
    for j in range(n):
        for side, mask, sign, kn in ((0, pos[:, j], 1.0, knots[j][0]),
                                     (1, neg[:, j], -1.0, knots[j][1])):
            idx = np.flatnonzero(mask)
            val, _ = _hats(np.abs(v[idx, j]), np.asarray(kn, dtype=float))
            cols[idx, j, side * K:(side + 1) * K] = sign * val
    return cols, pos | neg


def curve_slopes(v, dv: float, knots) -> np.ndarray:
    """∂/∂v of one joint's :func:`curve_columns` (own columns only): the hat functions' slopes
    on the rows outside the band (for the velocity noise of EIV).

    Parameters
    ----------
    v : (N,) array_like
        The joint's velocities.
    dv : float
        Half width Δv of the band left out.
    knots : (v_pos, v_neg)
        The joint's knot speeds per side.

    Returns
    -------
    (N, 2K) ndarray
        The derivatives, zero inside the band.
    """
    v = np.asarray(v, dtype=float)
    K = len(knots[0])
    out = np.zeros((v.size, 2 * K))
    for side, mask, kn in ((0, v > dv, knots[0]), (1, v < -dv, knots[1])):
        idx = np.flatnonzero(mask)
        _, der = _hats(np.abs(v[idx]), np.asarray(kn, dtype=float))
        out[idx, side * K:(side + 1) * K] = der   # d(−φ(|v|))/dv = φ'(|v|) for v < 0
    return out
