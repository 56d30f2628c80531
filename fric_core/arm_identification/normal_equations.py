"""The normal equations of :func:`~.fit.fit_arm_friction` and their solvers (issue 15; paper 003
eqs. (5), (6); gear law of paper 004).

:class:`_Problem` holds the parameter layout θ = [β (rigid-body base set), α = 1/η_f and η_b
(gear law), m (rotor inertias), Cp, bp, Cn, bn per joint], the features a chunk of samples needs
(friction columns, the base regressor ``Y_b`` or the URDF's ``rnea``), the rows of the design
(the Jacobian J at θ) and the residual r = y − model, and the per-joint measurement-error moments
``S`` of the errors-in-variables estimator (eq. (6); what they correct and neglect is in the
docstring of :mod:`.fit`).

* :func:`_accumulate`: per-joint normal equations ``A_j = JᵀJ``, ``b_j = Jᵀr``, ``c_j = rᵀr``
  accumulated chunk by chunk (the design is never held whole: 60 s of 7 joints at 1 kHz has
  420 000 rows); with the gear modes frozen (gear law, rigid body identified)
  :meth:`_Problem.accumulate` builds them from per-joint, per-mode moments instead, without a pass
  over the data;
* :func:`_gauss_newton`: damped Gauss–Newton for the bilinear gear fit (rigid body identified);
* :func:`_solve`: the column-equilibrated solve on the free parameters, with the condition number
  and the inverse normal matrix (the covariance up to σ²).
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from ..transmission.urdf_dynamics import UrdfDynamics
from .regressor import (base_parameters, curve_columns_own, curve_slopes, friction_columns,
                        rigid_body_regressor, separable_armature)

#: Most re-evaluations of the rows' gear modes in a Gauss–Newton run of the gear fit.
MODE_PASSES = 6


# -- the models: rows of the design (Jacobian) and residual for a chunk of samples ---------------
class _Problem:
    """Parameter layout, chunk features, rows J, residual r and their noise gradients."""

    def __init__(self, dyn, law, dynamics, armature, base, dv, knots=None):
        self.dyn, self.law, self.dynamics, self.dv = dyn, law, dynamics, dv
        n = dyn.n
        self.n = n
        # friction columns per joint: Cp, bp, Cn, bn (asymmetric, gear), or the curve's levels
        # at its knots, positive side then negative side (law "curve": ``knots`` per joint,
        # (v_pos, v_neg) magnitudes from 0, the same count on every joint and side)
        self.knots = knots
        self.nk = 0 if knots is None else len(knots[0][0])
        self.nf = 2 * self.nk if law == "curve" else 4
        self.fit_arm = armature is True
        self.known_arm = (np.zeros(n) if armature is True or armature is False
                          else np.asarray(armature, dtype=float))
        self.arm_in_base = self.fit_arm and law != "gear" and dynamics == "identify"
        if dynamics == "identify":
            if base is None:
                base = base_parameters(dyn, armature=self.arm_in_base)
            elif base.armature != self.arm_in_base:
                raise ValueError(f"base: built with armature={base.armature}, this fit needs "
                                 f"armature={self.arm_in_base} (base_parameters(..., armature=))")
            self.base = base
            self.r = len(base.index)
        else:
            self.base, self.r = None, 0
        # layout
        k = 0
        self.sl_beta = slice(k, k + self.r)
        k += self.r
        self.gear = law == "gear"
        if self.gear:
            self.sl_alpha = slice(k, k + n)
            k += n
            self.sl_etab = slice(k, k + n)
            k += n
        self.sl_arm = None
        if self.fit_arm and not self.arm_in_base:
            self.sl_arm = slice(k, k + n)
            k += n
        self.sl_fric = slice(k, k + self.nf * n)
        k += self.nf * n
        self.p = k
        self.mode_z = None
        self.fixed = []  # parameter indices held fixed (the gauge)
        self.start_fixed = []  # and, in addition, in the asymmetric start of the gear fit
        if self.gear and dynamics == "identify":
            self.fixed = [self.sl_alpha.start]
            self.start_fixed = list(range(self.sl_alpha.start, self.sl_etab.stop))
            if self.sl_arm is not None:
                # rotor inertias the rigid body absorbs when G = τ_load (joint 1 about the
                # vertical): only the gear's mode switch separates them; held at 0 in the start
                sep = separable_armature(dyn)
                self.start_fixed += [self.sl_arm.start + j for j in range(n) if not sep[j]]

    def joint_columns(self, j: int) -> np.ndarray:
        """The parameters joint j's rows can depend on (linear laws): the rigid body, its rotor
        inertia, its friction; the other columns of its rows are zero."""
        cols = list(range(self.sl_beta.start, self.sl_beta.stop))
        if self.sl_arm is not None:
            cols.append(self.sl_arm.start + j)
        cols += range(self.sl_fric.start + self.nf * j, self.sl_fric.start + self.nf * (j + 1))
        return np.array(cols, dtype=int)

    def joint_rows(self, f, j: int, mask=None):
        """Joint j's design restricted to :meth:`joint_columns` and its response (linear laws,
        not the gear law): (rows, columns), (rows,)."""
        parts = []
        sel = slice(None) if mask is None else mask
        if self.dynamics == "identify":
            parts.append(f["Yb"][sel, j])
        if self.sl_arm is not None:
            parts.append(f["a"][sel, j][:, None])
        parts.append(f["Fo"][sel, j])
        return np.hstack(parts) if len(parts) > 1 else parts[0], f["y"][sel, j]

    def model(self, f, theta) -> np.ndarray:
        """The model's efforts on a chunk, (Nc, n) (the response y less the residual)."""
        if self.gear:
            J, r = self.rows(f, theta)
            return f["y"] - r
        out = np.empty(f["y"].shape)
        for j in range(self.n):
            Jj, _ = self.joint_rows(f, j)
            out[:, j] = Jj @ theta[self.joint_columns(j)]
        # y = τ − known rotor torque (− rnea with the URDF): the model of τ adds them back
        return out

    # features of a chunk: what the rows need, computed once
    def features(self, q, v, a, tau, shared=None):
        """What the rows of a chunk need; ``shared``: the rigid-body part (``Yb`` or ``tl``)
        of another problem's features on the same samples (the same arm and base set)."""
        n = self.n
        f = {"v": v, "a": a, "y": tau - self.known_arm * a}
        # each joint's own friction columns (the others are zero on its rows), (Nc, n, nf)
        if self.law == "curve":
            f["Fo"], f["keep"] = curve_columns_own(v, self.dv, self.knots)
        else:
            F, keep = friction_columns(v, self.dv)
            F = F.reshape(-1, n, n, self.nf)
            f["Fo"] = np.ascontiguousarray(np.diagonal(F, axis1=1, axis2=2).transpose(0, 2, 1))
            f["keep"] = keep.reshape(-1, n)
        if self.dynamics == "identify":
            if shared is not None and "Yb" in shared:
                f["Yb"] = shared["Yb"]
            else:
                Y = rigid_body_regressor(self.dyn, q, v, a, armature=self.arm_in_base)
                f["Yb"] = self.base.reduce(Y).reshape(-1, n, self.r)
        else:
            f["tl"] = shared["tl"] if shared is not None and "tl" in shared else \
                _rnea_all(self.dyn, q, v, a)
            if not self.gear:
                f["y"] = f["y"] - f["tl"]
        return f

    def modes(self, f, theta):
        """Drive (τ_load·v > 0) and back-drive masks, from the current τ_load estimate (or as
        frozen by :meth:`freeze`), and τ_load."""
        tl = f["tl"] if self.dynamics == "urdf" else f["Yb"] @ theta[self.sl_beta]
        if "frozen" in f:
            return f["frozen"][0], f["frozen"][1], tl
        p = tl * f["v"]
        return p > 0, p < 0, tl

    def freeze(self, feats, theta) -> int:
        """Hold every row's gear mode as it is at θ (the Gauss–Newton iterations then minimise
        a smooth function; rows near τ_load = 0 would otherwise flip back and forth); returns
        how many kept rows changed mode."""
        flips, fresh = 0, False
        news = []
        for f in feats:
            old = f.pop("frozen", None)
            new = self.modes(f, theta)[:2]
            news.append(new)
            if old is None:
                fresh = True
            else:
                flips += int(np.sum(((old[0] != new[0]) | (old[1] != new[1])) & f["keep"]))
        for f, new in zip(feats, news):
            f["frozen"] = new
        if fresh or flips:
            self.mode_z = None  # the moments follow the modes
        return flips

    def unfreeze(self, feats):
        self.mode_z = None
        for f in feats:
            f.pop("frozen", None)

    def mode_moments(self, feats):
        """With the modes frozen (gear law, rigid body identified): per joint j and mode (drive,
        back-drive, neither), ``Σ z zᵀ`` over the kept rows, ``z = [Y_b row, q̈_j, F_j, y]``.
        Every Gauss–Newton normal equation is a quadratic form of these (:meth:`accumulate`),
        so an iteration no longer passes over the data."""
        n, r = self.n, self.r
        Z = np.zeros((n, 3, r + 6, r + 6))
        cnt = np.zeros((n, 3), dtype=int)
        for f in feats:
            d, b = f["frozen"]
            keep = f["keep"]
            Nc = keep.shape[0]
            for j in range(n):
                z = np.empty((Nc, r + 6))
                z[:, :r] = f["Yb"][:, j]
                z[:, r] = f["a"][:, j]
                z[:, r + 1:r + 5] = f["Fo"][:, j]
                z[:, r + 5] = f["y"][:, j]
                for g, mask in enumerate((d[:, j], b[:, j], ~(d[:, j] | b[:, j]))):
                    sel = keep[:, j] & mask
                    zs = z[sel]
                    Z[j, g] += zs.T @ zs
                    cnt[j, g] += int(sel.sum())
        return Z, cnt

    def accumulate(self, feats, theta):
        """Per-joint normal equations at θ (:func:`_accumulate`), from :meth:`mode_moments`
        when the modes are frozen (gear law, rigid body identified)."""
        if not (self.gear and self.dynamics == "identify" and feats and "frozen" in feats[0]):
            return _accumulate(self, feats, theta)
        if self.mode_z is None:
            self.mode_z = self.mode_moments(feats)
        Z, cnt = self.mode_z
        n, r, p = self.n, self.r, self.p
        A = np.zeros((n, p, p))
        bv = np.zeros((n, p))
        c = np.zeros(n)
        beta = theta[self.sl_beta]
        for j in range(n):
            for g_idx, g in enumerate((theta[self.sl_alpha.start + j],
                                       theta[self.sl_etab.start + j], 1.0)):
                L = np.zeros((p, r + 5))
                L[self.sl_beta, :r] = g * np.eye(r)
                if g_idx < 2:
                    col = (self.sl_alpha if g_idx == 0 else self.sl_etab).start + j
                    L[col, :r] = beta
                w = np.zeros(r + 5)
                w[:r] = g * beta
                if self.sl_arm is not None:
                    L[self.sl_arm.start + j, r] = 1.0
                    w[r] = theta[self.sl_arm.start + j]
                f0 = self.sl_fric.start + 4 * j
                L[f0:f0 + 4, r + 1:r + 5] = np.eye(4)
                w[r + 1:r + 5] = theta[f0:f0 + 4]
                Zxx, Zxy, Zyy = Z[j, g_idx, :r + 5, :r + 5], Z[j, g_idx, :r + 5, r + 5], \
                    Z[j, g_idx, r + 5, r + 5]
                A[j] += L @ Zxx @ L.T
                bv[j] += L @ (Zxy - Zxx @ w)
                c[j] += Zyy - 2 * w @ Zxy + w @ Zxx @ w
        return A, bv, c, cnt.sum(axis=1)

    def rows(self, f, theta):
        """J (Nc, n, p) and the residual r = y − model (Nc, n) at θ."""
        Nc, n = f["v"].shape
        J = np.zeros((Nc, n, self.p))
        j = np.arange(n)
        nf, f0 = self.nf, self.sl_fric.start
        for jj in range(n):
            J[:, jj, f0 + nf * jj:f0 + nf * (jj + 1)] = f["Fo"][:, jj]
        if self.sl_arm is not None:
            J[:, j, self.sl_arm.start + j] = f["a"]
        if self.gear:
            d, b, tl = self.modes(f, theta)
            al, eb = theta[self.sl_alpha], theta[self.sl_etab]
            J[:, j, self.sl_alpha.start + j] = d * tl
            J[:, j, self.sl_etab.start + j] = b * tl
            if self.dynamics == "identify":
                g = np.where(d, al, np.where(b, eb, 1.0))
                J[:, :, self.sl_beta] = g[:, :, None] * f["Yb"]
                model = g * tl + (J[:, :, self.sl_beta.stop:] @ theta[self.sl_beta.stop:]
                                  - (d * tl) * al - (b * tl) * eb)
            else:
                model = J @ theta + np.where(d | b, 0.0, tl)
        else:
            if self.dynamics == "identify":
                J[:, :, self.sl_beta] = f["Yb"]
            model = J @ theta
        return J, f["y"] - model

    # derivative features on the EIV subsample
    def grad_features(self, q, v):
        Ns, n = q.shape
        g = {}
        if self.dynamics == "identify":
            zero = np.zeros_like(q)
            Y0 = self.base.reduce(rigid_body_regressor(self.dyn, q, zero, zero,
                                                       armature=self.arm_in_base))
            Ya = np.empty((Ns, n, n, self.r))  # [k, i, row j, col]
            for i in range(n):
                e = np.zeros_like(q)
                e[:, i] = 1.0
                Yi = self.base.reduce(rigid_body_regressor(self.dyn, q, zero, e,
                                                           armature=self.arm_in_base))
                Ya[:, i] = (Yi - Y0).reshape(Ns, n, self.r)
            g["Ya"] = Ya
        else:
            g["M"] = np.array([self.dyn.mass_matrix(q[k]) for k in range(Ns)])  # [k, j, i]
        return g

    def moments(self, f, g, theta, noise):
        """Per joint j: Σ_rows Σ_sources var · z zᵀ, z = [∂J, ∂r] ((p+1)×(p+1) each)."""
        Ns, n = f["v"].shape
        p = self.p
        var_a, var_v = noise["var_a"], noise["var_v"]
        keep = f["keep"]
        S = np.zeros((n, p + 1, p + 1))
        jj = np.arange(n)
        # the columns a row of joint j can have non-zero in (acceleration noise): the rigid body,
        # its own efficiencies and rotor inertia, the response
        cols = []
        for j in range(n):
            cj = list(range(self.sl_beta.start, self.sl_beta.stop))
            if self.gear:
                cj += [self.sl_alpha.start + j, self.sl_etab.start + j]
            if self.sl_arm is not None:
                cj.append(self.sl_arm.start + j)
            cols.append(np.array(cj + [p]))
        Sc = [np.zeros((c.size, c.size)) for c in cols]
        d = b = None
        if self.gear:
            d, b, tl = self.modes(f, theta)
        for i in range(n):  # acceleration noise on joint i
            if var_a[i] == 0:
                continue
            Z = np.zeros((Ns, n, p + 1))
            dy = np.zeros((Ns, n))
            dy[:, i] -= self.known_arm[i]
            if self.sl_arm is not None:
                Z[:, i, self.sl_arm.start + i] = 1.0
            if self.dynamics == "identify":
                Yai = g["Ya"][:, i]
                if self.gear:
                    al, eb = theta[self.sl_alpha], theta[self.sl_etab]
                    gg = np.where(d, al, np.where(b, eb, 1.0))
                    Z[:, :, self.sl_beta] = gg[:, :, None] * Yai
                    dtl = Yai @ theta[self.sl_beta]
                    Z[:, jj, self.sl_alpha.start + jj] = d * dtl
                    Z[:, jj, self.sl_etab.start + jj] = b * dtl
                    dmodel = gg * dtl
                else:
                    Z[:, :, self.sl_beta] = Yai
                    dmodel = Yai @ theta[self.sl_beta]
            else:
                Mi = g["M"][:, :, i]  # ∂τ_load_j/∂a_i
                if self.gear:
                    Z[:, jj, self.sl_alpha.start + jj] = d * Mi
                    Z[:, jj, self.sl_etab.start + jj] = b * Mi
                    gg = np.where(d, theta[self.sl_alpha], np.where(b, theta[self.sl_etab], 1.0))
                    dmodel = gg * Mi
                else:
                    dy -= Mi  # y = τ − rnea
                    dmodel = np.zeros((Ns, n))
            if self.sl_arm is not None:
                dmodel = dmodel + theta[self.sl_arm.start + i] * (jj == i)[None, :]
            Z[:, :, p] = dy - dmodel
            for j in range(n):
                Zj = Z[keep[:, j], j][:, cols[j]]
                Sc[j] += var_a[i] * (Zj.T @ Zj)
        for j in range(n):
            S[j][np.ix_(cols[j], cols[j])] += Sc[j]
        # velocity noise: the velocity-linear friction columns of joint j's own rows (the
        # viscous terms; the curve's hat functions, whose derivative is the segment's slope)
        v = f["v"]
        nf = self.nf
        th = theta[self.sl_fric].reshape(n, nf)
        for j in range(n):
            if var_v[j] == 0:
                continue
            Z = np.zeros((Ns, p + 1))
            c = self.sl_fric.start + nf * j
            if self.law == "curve":
                dF = curve_slopes(v[:, j], self.dv, self.knots[j])
            else:
                pos, neg = v[:, j] > self.dv, v[:, j] < -self.dv
                dF = np.zeros((Ns, 4))
                dF[:, 1] = pos
                dF[:, 3] = neg
            Z[:, c:c + nf] = dF
            Z[:, p] = -(dF @ th[j])
            Zj = Z[keep[:, j]]
            S[j] += var_v[j] * (Zj.T @ Zj)
        return S


def _rnea_all(dyn: UrdfDynamics, q, v, a) -> np.ndarray:
    out = np.empty_like(q)
    perm = dyn._perm
    for k in range(q.shape[0]):
        tau = pin.rnea(dyn.model, dyn.data, dyn._config(q[k]), dyn._velocity(v[k]),
                       dyn._velocity(a[k]))
        out[k] = tau if perm is None else tau[perm]
    return out


def _accumulate(prob, feats, theta, blocks=None):
    """Per-joint normal equations A_j = JᵀJ, b_j = Jᵀr, c_j = rᵀr, rows n_j over the chunks.

    ``blocks`` (a list, optional): each chunk's own ``(A, b)`` is appended to it (merged into at
    most :data:`MAX_BLOCKS` consecutive blocks: a long recording's blocks grow longer), for the
    covariance that accounts for errors correlated in time (:func:`block_scores`).
    """
    n, p = prob.n, prob.p
    A = np.zeros((n, p, p))
    bv = np.zeros((n, p))
    c = np.zeros(n)
    m = np.zeros(n, dtype=int)
    linear = not prob.gear
    cols = [prob.joint_columns(j) for j in range(n)] if linear else None
    for f in feats:
        keep = f["keep"]
        Ab = np.zeros((n, p, p)) if blocks is not None else A
        bb = np.zeros((n, p)) if blocks is not None else bv
        if linear:  # each joint's rows touch only its own columns: normal equations on those
            # every joint's design at once, (Nc, n, columns of a joint): one copy per chunk
            # instead of three per joint (its pieces, then their hstack)
            parts = []
            if prob.dynamics == "identify":
                parts.append(f["Yb"])
            if prob.sl_arm is not None:
                parts.append(f["a"][:, :, None])
            parts.append(f["Fo"])
            Z = np.concatenate(parts, axis=2) if len(parts) > 1 else parts[0]
            for j in range(n):
                k = keep[:, j]
                Jj, yj = Z[k, j], f["y"][k, j]
                cj = cols[j]
                rj = yj - Jj @ theta[cj]
                Ab[j][np.ix_(cj, cj)] += Jj.T @ Jj
                bb[j][cj] += Jj.T @ rj
                c[j] += rj @ rj
                m[j] += int(k.sum())
        else:
            J, r = prob.rows(f, theta)
            for j in range(n):
                k = keep[:, j]
                Jj, rj = J[k, j], r[k, j]
                Ab[j] += Jj.T @ Jj
                bb[j] += Jj.T @ rj
                c[j] += rj @ rj
                m[j] += int(k.sum())
        if blocks is not None:
            A += Ab
            bv += bb
            blocks.append([Ab, bb, int(keep.shape[0])])
            if len(blocks) > 2 * MAX_BLOCKS:
                merged = []
                for i in range(0, len(blocks), 2):
                    pair = blocks[i:i + 2]
                    merged.append([sum(x[0] for x in pair), sum(x[1] for x in pair),
                                   sum(x[2] for x in pair)])
                blocks[:] = merged
    return A, bv, c, m


#: At most this many (twice this, before a merge) blocks of consecutive samples keep their own
#: normal equations for :func:`block_scores`.
MAX_BLOCKS = 32


def block_scores(blocks, x, w2) -> np.ndarray:
    """The scores ``g_b = Σ_j w_j (b_bj − A_bj x)`` of each block at the solution θ₀ + x (rows
    of the weighted gradient of the cost, summed over a block of consecutive samples), (B, p).

    Their outer products make the middle of the batch-means ("cluster-robust", blocks of
    consecutive samples as clusters) sandwich covariance ``H⁻¹ (Σ_b g_b g_bᵀ) H⁻¹``: unlike
    ``σ̂² H⁻¹`` it stays right when the residuals are correlated in time (a real joint's model
    error follows the motion; a filtered effort's noise is coloured) or their variance changes
    along the recording, as long as a block is longer than that correlation (Newey & West 1987;
    the blocks' count enters as ``B/(B − 1)``).
    """
    return np.array([np.einsum("j,ja->a", w2, b) - np.einsum("j,jab,b->a", w2, A, x)
                     for A, b, _ in blocks])


def _gauss_newton(prob, feats, all_feats, theta, w2, step, single, max_iter):
    """Damped Gauss–Newton on the weighted least-squares cost of the gear fit.

    Outer loop (at most :data:`MODE_PASSES`): hold every row's gear mode as the current
    estimate of τ_load gives it and re-estimate each joint's weight 1/σ_j²; inner loop: with
    modes and weights held the cost is smooth and its normal equations are quadratic forms of
    per-joint, per-mode moments (:meth:`_Problem.accumulate`, no pass over the data): steps are
    halved until the cost decreases, and the inner loop stops when it decreases by less than
    1e-2 (in units of χ², the weights making each row's residual variance 1: the last step moved
    the parameters by ~0.1 standard deviation in the Mahalanobis norm). The outer loop stops when
    at most 1e-4 of the rows change mode. ``single``: one step on the current modes (the linear
    start). Raises LinAlgError when the design is rank deficient.
    """
    p = prob.p

    def weights(c, m):
        return 1.0 / np.maximum(c / np.maximum(m - p * m / m.sum(), 1), 1e-300)

    if single:
        A, bv, c, m = _accumulate(prob, feats, theta)
        x, cond, Hinv, H, Hc = step(A, bv, None, w2, theta)
        if x is None:
            raise np.linalg.LinAlgError("rank deficient")
        theta = theta + x
        A, bv, c, m = _accumulate(prob, feats, theta)
        return theta, weights(c, m), cond, Hinv
    rows = sum(int(f["keep"].sum()) for f in feats)
    for outer in range(MODE_PASSES):
        flips = prob.freeze(all_feats, theta)
        if outer > 0 and flips <= 1e-4 * rows:
            break  # (rows flipping now sit at τ_load ≈ 0, where either mode gives G ≈ 0)
        A, bv, c, m = prob.accumulate(feats, theta)
        w2 = weights(c, m)
        cost = float(w2 @ c)
        for it in range(max_iter):
            x, cond, Hinv, H, Hc = step(A, bv, None, w2, theta)
            if x is None:
                raise np.linalg.LinAlgError("rank deficient")
            t = 1.0
            while True:
                new = theta + t * x
                A2, bv2, c2, m2 = prob.accumulate(feats, new)
                cost2 = float(w2 @ c2)
                if cost2 <= cost or t < 1.0 / 64:
                    break
                t *= 0.5
            if cost2 > cost:
                break  # no descent left along the Gauss–Newton direction
            decrease = cost - cost2
            theta, A, bv, c, m, cost = new, A2, bv2, c2, m2, cost2
            if decrease < 1e-2:
                break
    A, bv, c, m = prob.accumulate(feats, theta)
    x, cond, Hinv, H, Hc = step(A, bv, None, w2, theta)
    if x is None:
        raise np.linalg.LinAlgError("rank deficient")
    return theta, w2, cond, Hinv


def _solve(H, b, free):
    """Solve H x = b on the free parameters (column-equilibrated); x = 0 on the fixed ones."""
    Hf = H[np.ix_(free, free)]
    d = np.diag(Hf)
    if np.any(~(d > 0)):
        return None, np.inf, None
    s = np.sqrt(d)
    Hs = Hf / np.outer(s, s)
    w, U = np.linalg.eigh(Hs)
    if w[0] <= 0:
        return None, np.inf, None
    Hinv = (U / w) @ U.T / np.outer(s, s)
    x = np.zeros(H.shape[0])
    x[free] = Hinv @ b[free]
    return x, float(np.sqrt(w[-1] / w[0])), Hinv
