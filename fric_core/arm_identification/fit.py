"""Joint friction of an n-joint arm: least squares and errors-in-variables (issue 15; paper 003
eqs. (5), (6); gear law of paper 004).

Per joint, paper 003's asymmetric Coulomb + viscous law ``τ_f = Cp + bp·v`` (v > Δv),
``−Cn + bn·v`` (v < −Δv) (Cp, Cn positive magnitudes, N·m; bp, bn N·m·s/rad); the rows of a joint
inside the Δv band are left out, as the paper bins them out. The measured effort is the motor
torque referred to the joint, in the convention of :mod:`.joint_friction`:

    τ = m·q̈ + G(τ_load, q̇) + τ_f(q̇),   τ_load = M(q)q̈ + h(q, q̇) = Y(q, q̇, q̈) π

Laws (``law``):

* ``"asymmetric"``: ``G = τ_load``.
  ``dynamics="identify"``: ``τ = Y_b β + F θ`` with the base set β (:func:`~.regressor.
  base_parameters`) including the rotor inertias m (merged with link inertias where the data
  cannot separate them, e.g. joint 1 about the vertical); ``dynamics="urdf"``:
  ``τ − rnea(q, q̇, q̈) = m q̈ + F θ``.
* ``"gear"`` (paper 004): ``G = τ_load/η_f`` where τ_load·q̇ > 0 (the motor drives the load),
  ``η_b·τ_load`` where τ_load·q̇ < 0 (the load back-drives the motor).
  ``dynamics="urdf"``: τ_load from ``rnea`` is known, so the model is linear in
  ``(1/η_f, η_b, m, θ)`` per joint, the drive/back-drive split by sign(τ_load·q̇).
  ``dynamics="identify"``: bilinear in the rigid body β and the efficiencies; a global scale s of
  the rigid body is undone by η_f·s, η_b/s on every joint at once, so only each joint's product
  η_f·η_b (and m, θ) is identifiable. Fitted by damped Gauss–Newton (:func:`_gauss_newton`: the
  rows' modes from the current estimate of τ_load, held while the inner iterations converge)
  from the asymmetric fit, the gauge fixed by 1/η_f = 1 on the first joint (β is reported in that
  gauge). A rotor inertia the rigid body absorbs when G = τ_load (:func:`~.regressor.
  separable_armature`) is separated only by the gear's mode switch: held at 0 until the
  efficiencies are estimated, then released if the data determine it (else held, a warning).
  Reported: ``eta_product`` with its std (delta method), ``eta_f = eta_b = None``.

Rotor inertia (``armature``): ``True`` (default, both dynamics): fitted, one column ``q̈_j`` on
joint j's rows (a URDF carries no rotor inertia, yet a geared joint's is often larger than its
link's); ``False``: none; an array: known values, subtracted.

Estimators (``method``), weighted per joint: a first fit gives each joint's residual variance
σ_j², the final fit divides joint j's rows by σ_j (joints' torque sensors differ):

* ``"ols"``: paper 003 eq. (5), ``θ̂ = (AᵀA)⁻¹ Aᵀy``; covariance ``σ̂² (ÃᵀÃ)⁻¹``.
* ``"eiv"``: paper 003 eq. (6) (Fuller 1987, Sec. 2.2), ``θ̃ = (AᵀA − S_AA)⁻¹ (Aᵀy − S_Ay)``
  where ``S = Σ E[ΔzᵀΔz]`` over the rows, ``z = [A, y]``, is the regressors' (and response's)
  measurement-error moment. Velocities and accelerations are differentiated encoder positions
  with per-joint noise variances ``noise["var_v"]``, ``noise["var_a"]``; to first order a row's
  error is ``Σ_i δa_i ∂z/∂a_i + δv_j ∂z/∂v_j``. Corrected: every column linear in q̈ (the rigid-
  body regressor is linear in q̈ for fixed q, q̇: ``∂Y/∂q̈_i = Y(q, 0, e_i) − Y(q, 0, 0)``; the
  rotor inertia columns; τ_load in the gear columns, ``∂τ_load/∂q̈ = M(q)``; with
  ``dynamics="urdf"`` the response ``τ − rnea`` itself, which makes ``S_Ay`` non-zero) and the
  viscous columns (linear in q̇). Neglected: the velocity noise in the Coriolis/centrifugal terms
  (quadratic in q̇: first-order part small beside the inertial terms for the speeds of an
  identification run, and their second-order part is a mean shift σ_v²·∂²h/∂q̇², not a
  correlation), the noise in q (encoder quantisation, ~1e-5 rad), and rows whose velocity sign or
  gear mode the noise flips. The moments are means over the samples, smooth in q: they are
  computed on a subsample (every k-th sample, at most ``eiv_samples``) and scaled to the record.
  Covariance: Fuller's Theorem 2.2.1, ``V = H⁻¹ s_vv + H⁻¹ (S_AA s_vv + S_Ar S_Arᵀ/N) H⁻¹``
  with ``H = AᵀA − S_AA`` (weighted), ``S_Ar = S_Ay − S_AA θ̃``.

The normal equations are accumulated per joint over chunks of samples (the design is never held
whole: 60 s of 7 joints at 1 kHz has 420 000 rows), so each joint's residual sum of squares, hence
its weight, follows from its own normal equations without a second pass over the data.
``cond`` is the condition number of the column-equilibrated weighted design (from its normal
matrix); above :data:`COND_WARN` a warning names it, above :data:`COND_LIMIT` the fit refuses.
Standard deviations assume independent errors from sample to sample (correlated model errors,
and the low-pass filtered noise of differentiated positions, make them somewhat optimistic).

Reporting: a value is ``determined`` when its standard deviation is at most
:data:`REL_STD_WARN` of its magnitude (or of a floor: 0.02 N·m, 0.01 N·m·s/rad, 0.03) and, for a
viscous term, when |q̇| spans at least :data:`MIN_SPEED_SPAN` on its side. Physical bounds
(Cp, Cn ≥ 0; η_f, η_b, η_f·η_b ≤ 1): a value outside by less than 3 std is reported at the bound,
by more it is not determined (the law does not fit the joint); every such case is a warning.
:meth:`ArmFrictionFit.predict` gives the fitted model's torques (e.g. on a held-out part).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Mapping, Optional

import numpy as np
import pinocchio as pin

from ..transmission.urdf_dynamics import UrdfDynamics
from .joint_friction import JointFriction, JointFrictionSet
from .regressor import (FRICTION_PARAMS, BaseParameters, base_parameters, friction_columns,
                        rigid_body_regressor, separable_armature)

__all__ = ["ArmFrictionFit", "fit_arm_friction", "COND_WARN", "COND_LIMIT", "REL_STD_WARN"]

#: Condition number (column-equilibrated weighted design) above which the fit warns.
COND_WARN = 1e3
#: Condition number above which the design is taken as rank deficient (ValueError).
COND_LIMIT = 1e7
#: Relative standard deviation above which a parameter is reported as not determined.
REL_STD_WARN = 0.2
#: Fewer rows than this on one side of the band (or in one gear mode) draw a warning.
MIN_SIDE_ROWS = 100
#: Most re-evaluations of the rows' gear modes in a Gauss–Newton run of the gear fit.
MODE_PASSES = 6
#: A viscous coefficient needs at least this spread of |q̇| [rad/s] on its side.
MIN_SPEED_SPAN = 0.1
# floors of the relative-std test (absolute std below these is always "determined")
_FLOOR = {"Cp": 0.02, "Cn": 0.02, "bp": 0.01, "bn": 0.01, "eta_f": 0.03, "eta_b": 0.03,
          "eta_product": 0.03}


@dataclass
class ArmFrictionFit:
    """Result of :func:`fit_arm_friction`.

    ``joints``: joint name → ``{"Cp", "Cn", "bp", "bn"}`` (plus ``"eta_f", "eta_b",
    "eta_product"`` for ``law="gear"``, None where the data cannot determine them); ``std``: the
    same keys with standard deviations; ``determined``: the same keys → bool (False: not
    identifiable from these data, or relative std above :data:`REL_STD_WARN`); ``warnings``: what
    the data lack, one line each; ``base``: the base set and ``beta``/``beta_std`` its fitted
    values (None with ``dynamics="urdf"``; with ``law="gear"`` and ``"identify"`` known only up to
    the global scale s); ``armature``/``armature_std``: fitted rotor inertias per joint [kg·m²]
    (None when merged into the base set, not fitted, or known; per joint None where the gear fit
    could not separate it from the link inertias); ``cond``: condition number of the
    column-equilibrated weighted design; ``n_used``: rows (joint samples outside the band) per
    joint; ``residual_std``: per joint, N·m; ``noise``: the variances used by EIV.
    """

    joints: Dict[str, Dict[str, Optional[float]]]
    std: Dict[str, Dict[str, Optional[float]]]
    dynamics: str
    method: str
    dv: float
    cond: float
    n_used: Dict[str, int]
    residual_std: Dict[str, float]
    base: Optional[BaseParameters] = None
    beta: Optional[np.ndarray] = None
    beta_std: Optional[np.ndarray] = None
    law: str = "asymmetric"
    determined: Dict[str, Dict[str, bool]] = field(default_factory=dict)
    warnings: List[str] = field(default_factory=list)
    armature: Optional[Dict[str, Optional[float]]] = None
    armature_std: Optional[Dict[str, Optional[float]]] = None
    noise: Optional[Dict[str, np.ndarray]] = None
    _problem: Optional[object] = field(default=None, repr=False, compare=False)
    _theta: Optional[np.ndarray] = field(default=None, repr=False, compare=False)

    def predict(self, q, v, a) -> np.ndarray:
        """The fitted model's joint torques at (q, q̇, q̈): ``m·q̈ + G(τ_load, q̇) + τ_f(q̇)``
        with the identified (or URDF) rigid body; τ_f = 0 inside the Δv band (static friction is
        not fitted).

        Parameters
        ----------
        q, v, a : (N, n) array_like
            Positions, velocities, accelerations in the model's joint order.

        Returns
        -------
        (N, n) ndarray
            Predicted efforts [N·m].
        """
        prob = self._problem
        n = prob.n
        q, v, a, _ = _check(q, v, a, np.zeros(np.shape(q)), n)
        f = prob.features(q, v, a, np.zeros_like(q))
        _, r0 = prob.rows(f, self._theta)
        return -r0

    def to_joint_friction_set(self) -> JointFrictionSet:
        """The fit as :class:`~.joint_friction.JointFrictionSet` for
        :func:`~.joint_friction.write_joint_friction`: an efficiency the data do not determine
        (``determined`` False) is written as None, never as a number (η_f and η_b together).

        Returns
        -------
        JointFrictionSet
            ``model`` = the law, with ``dynamics``, ``method``, ``dv`` and per-joint stds.
        """
        out = {}
        for name, p in self.joints.items():
            det = self.determined.get(name, {})
            gear = {k: p.get(k) if det.get(k, True) else None
                    for k in ("eta_f", "eta_b", "eta_product")}
            law = {k: max(p[k], 0.0) if k in ("Cp", "Cn") else p[k]
                   for k in ("Cp", "Cn", "bp", "bn")}  # a negative Coulomb level is warned of
            if gear["eta_f"] is None or gear["eta_b"] is None:
                gear["eta_f"] = gear["eta_b"] = None
            std = {k: float(s) for k, s in self.std[name].items()
                   if s is not None and (k not in gear or gear[k] is not None)}
            out[name] = JointFriction(**law, **gear, std=std)
        return JointFrictionSet(joints=out, model=self.law, dynamics=self.dynamics,
                                method=self.method, dv=self.dv)


# -- input checks ----------------------------------------------------------------------------------
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


def _noise(noise, n):
    if noise is None:
        raise ValueError("noise: method='eiv' needs the velocity and acceleration noise "
                         "variances, noise={'var_v': (n,), 'var_a': (n,)} (e.g. from "
                         "signals.differentiate); or use method='ols'")
    out = {}
    for key in ("var_v", "var_a"):
        val = noise.get(key) if isinstance(noise, Mapping) else getattr(noise, key, None)
        if val is None:
            raise ValueError(f"noise: missing {key!r} (per-joint variances, shape ({n},))")
        arr = np.broadcast_to(np.asarray(val, dtype=float), (n,)).copy() \
            if np.ndim(val) == 0 else np.asarray(val, dtype=float)
        if arr.shape != (n,) or not np.all(np.isfinite(arr)) or np.any(arr < 0):
            raise ValueError(f"noise: {key} must be {n} finite variances >= 0, got {val!r}")
        out[key] = arr
    return out


# -- the models: rows of the design (Jacobian) and residual for a chunk of samples ---------------
class _Problem:
    """Parameter layout, chunk features, rows J, residual r and their noise gradients."""

    def __init__(self, dyn, law, dynamics, armature, base, dv):
        self.dyn, self.law, self.dynamics, self.dv = dyn, law, dynamics, dv
        n = dyn.n
        self.n = n
        self.fit_arm = armature is True
        self.known_arm = (np.zeros(n) if armature is True or armature is False
                          else np.asarray(armature, dtype=float))
        self.arm_in_base = self.fit_arm and law == "asymmetric" and dynamics == "identify"
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
        self.sl_fric = slice(k, k + 4 * n)
        k += 4 * n
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

    # features of a chunk: what the rows need, computed once
    def features(self, q, v, a, tau):
        n = self.n
        f = {"v": v, "a": a, "y": tau - self.known_arm * a}
        F, keep = friction_columns(v, self.dv)
        f["F"] = F.reshape(-1, n, 4 * n)
        f["keep"] = keep.reshape(-1, n)
        if self.dynamics == "identify":
            Y = rigid_body_regressor(self.dyn, q, v, a, armature=self.arm_in_base)
            f["Yb"] = self.base.reduce(Y).reshape(-1, n, self.r)
        else:
            f["tl"] = _rnea_all(self.dyn, q, v, a)
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
                z[:, r + 1:r + 5] = f["F"][:, j, 4 * j:4 * j + 4]
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
        J[:, :, self.sl_fric] = f["F"]
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
        # velocity noise: the viscous columns of joint j's own rows
        v = f["v"]
        th = theta[self.sl_fric].reshape(n, 4)
        for j in range(n):
            if var_v[j] == 0:
                continue
            pos, neg = v[:, j] > self.dv, v[:, j] < -self.dv
            Z = np.zeros((Ns, p + 1))
            c = self.sl_fric.start + 4 * j
            Z[:, c + 1] = pos
            Z[:, c + 3] = neg
            Z[:, p] = -(pos * th[j, 1] + neg * th[j, 3])
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


def _accumulate(prob, feats, theta):
    """Per-joint normal equations A_j = JᵀJ, b_j = Jᵀr, c_j = rᵀr, rows n_j over the chunks."""
    n, p = prob.n, prob.p
    A = np.zeros((n, p, p))
    bv = np.zeros((n, p))
    c = np.zeros(n)
    m = np.zeros(n, dtype=int)
    for f in feats:
        J, r = prob.rows(f, theta)
        keep = f["keep"]
        for j in range(n):
            k = keep[:, j]
            Jj, rj = J[k, j], r[k, j]
            A[j] += Jj.T @ Jj
            bv[j] += Jj.T @ rj
            c[j] += rj @ rj
            m[j] += int(k.sum())
    return A, bv, c, m


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


def fit_arm_friction(q, v, a, tau, model, dynamics: str = "identify", method: str = "ols",
                     dv: float = 0.01, base: Optional[BaseParameters] = None,
                     law: str = "asymmetric", armature=True, noise=None,
                     chunk: int = 4096, eiv_samples: int = 2000,
                     max_iter: int = 50) -> ArmFrictionFit:
    """Fit every joint's friction (paper 003 eqs. (5)/(6); gear law of paper 004).

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
        ``"urdf"``: the URDF's inverse dynamics (``pin.rnea``) is trusted.
    method : {"ols", "eiv"}
        Least squares, eq. (5), or the errors-in-variables estimator, eq. (6) (needs ``noise``).
    dv : float
        Half width Δv [rad/s] of the band around zero velocity left out per joint.
    base : BaseParameters, optional
        A precomputed base set (default: :func:`~.regressor.base_parameters` of the model, with
        the rotor inertias for ``law="asymmetric"`` and ``armature=True``).
    law : {"asymmetric", "gear"}
        The friction law (``--model`` of ``fric identify``); see the module docstring.
    armature : bool or (n,) array_like
        Rotor inertias: True fits them, False leaves them out, an array gives known values
        [kg·m²].
    noise : mapping or object, optional
        ``var_v``, ``var_a``: per-joint variances of the velocity and acceleration noise
        ((rad/s)², (rad/s²)², shape (n,)); required by ``method="eiv"``.
    chunk : int
        Samples per chunk of the accumulated normal equations.
    eiv_samples : int
        At most this many samples (evenly spaced) for EIV's noise moments.
    max_iter : int
        Gauss–Newton iterations (``law="gear"`` with ``dynamics="identify"``).

    Returns
    -------
    ArmFrictionFit
        Per-joint parameters with standard deviations, what the data determine, warnings, the
        base parameters (identify), the condition number.

    Raises
    ------
    ValueError
        Naming the field: bad shapes, NaN/inf rows, an unknown ``dynamics``/``method``/``law``,
        a negative ``dv``, ``method="eiv"`` without ``noise``, a joint without samples on one
        side of the band (``"joint j2: no samples with v < -dv (one direction only)"``), a
        rank-deficient design, noise variances beyond the regressors' spread (EIV). What the data
        merely lack (few samples one way or in one gear mode, little speed range, a poorly
        conditioned design, a large relative std) is a warning in the result instead.
    """
    if dynamics not in ("identify", "urdf"):
        raise ValueError(f"dynamics: expected 'identify' or 'urdf', got {dynamics!r}")
    if method not in ("ols", "eiv"):
        raise ValueError(f"method: expected 'ols' or 'eiv', got {method!r}")
    if law not in ("asymmetric", "gear"):
        raise ValueError(f"law: expected 'asymmetric' or 'gear', got {law!r}")
    if not (np.isfinite(dv) and dv >= 0.0):
        raise ValueError(f"dv: expected a finite Δv >= 0 [rad/s], got {dv!r}")
    for name_, val_ in (("chunk", chunk), ("eiv_samples", eiv_samples), ("max_iter", max_iter)):
        if isinstance(val_, bool) or not isinstance(val_, (int, np.integer)) or val_ < 1:
            raise ValueError(f"{name_}: expected a positive integer, got {val_!r}")
    dyn = _model(model)
    n, names = dyn.n, dyn.joint_names
    q, v, a, tau = _check(q, v, a, tau, n)
    if not (armature is True or armature is False):
        arm = np.asarray(armature, dtype=float)
        if arm.shape != (n,) or not np.all(np.isfinite(arm)):
            raise ValueError(f"armature: expected True, False or {n} finite rotor inertias "
                             f"[kg·m²], got {armature!r}")
        armature = arm
    nz = _noise(noise, n) if method == "eiv" else None
    N = q.shape[0]
    warnings: List[str] = []
    for j, name in enumerate(names):
        npos, nneg = int(np.sum(v[:, j] > dv)), int(np.sum(v[:, j] < -dv))
        if npos == 0:
            raise ValueError(f"joint {name}: no samples with v > dv (one direction only)")
        if nneg == 0:
            raise ValueError(f"joint {name}: no samples with v < -dv (one direction only)")
        for cnt, side in ((npos, "v > dv"), (nneg, "v < -dv")):
            if cnt < MIN_SIDE_ROWS:
                warnings.append(f"joint {name}: only {cnt} samples with {side} (one direction "
                                f"barely excited; fewer than {MIN_SIDE_ROWS})")
    prob = _Problem(dyn, law, dynamics, armature, base, dv)
    p = prob.p
    free = np.array([i for i in range(p) if i not in prob.fixed])
    if N * n <= p:
        raise ValueError(f"q: {N * n} rows for {p} parameters; record longer")
    iterative = law == "gear" and dynamics == "identify"
    # features per chunk; kept only when the fit must pass over the data more than once
    starts = range(0, N, int(chunk))

    def chunks():
        for s in starts:
            e = min(N, s + int(chunk))
            yield prob.features(q[s:e], v[s:e], a[s:e], tau[s:e])

    if iterative:
        feats = list(chunks())
    if method == "eiv":
        stride = max(1, int(np.ceil(N / eiv_samples)))
        idx = np.arange(0, N, stride)
        fsub = prob.features(q[idx], v[idx], a[idx], tau[idx])
        gsub = prob.grad_features(q[idx], v[idx])
        sub_scale = N / idx.size

    theta = np.zeros(p)
    if prob.gear:
        theta[prob.sl_alpha] = 1.0
        theta[prob.sl_etab] = 1.0
    w2 = np.ones(n)

    def step(A, bv, S, w2, theta):
        H = np.einsum("j,jab->ab", w2, A)
        g = np.einsum("j,ja->a", w2, bv)
        Hc = H
        if S is not None:
            Sw = np.einsum("j,jab->ab", w2, S)
            Hc = H - Sw[:p, :p]
            g = g - Sw[:p, p]
        x, cond_c, Hinv = _solve(Hc, g, free)
        x0, cond, _ = _solve(H, g, free)
        if x is None and x0 is not None:
            raise ValueError("noise: the given velocity/acceleration noise variances exceed the "
                             "regressors' spread (AᵀA − S_AA of eq. (6) is not positive "
                             "definite); check noise= (var_v, var_a) or use method='ols'")
        return x, cond, Hinv, H, Hc

    def moments(theta):
        if method != "eiv":
            return None
        return prob.moments(fsub, gsub, theta, nz) * sub_scale

    if iterative:
        # the asymmetric start (α = η_b = 1 and the merged rotor inertias held), Gauss–Newton
        # with the merged rotor inertias held, then on everything (the gear's mode switch is what
        # separates a merged rotor inertia from the rigid body: it needs η_f·η_b away from 1)
        all_feats = feats + ([fsub] if method == "eiv" else [])
        gauge = list(prob.fixed)
        merged = [i for i in prob.start_fixed
                  if prob.sl_arm is not None and prob.sl_arm.start <= i < prob.sl_arm.stop]
        phases = [gauge + prob.start_fixed, gauge + merged] + ([gauge] if merged else [])
        result = None
        for ph, fixed in enumerate(phases):
            free = np.array([i for i in range(p) if i not in fixed])
            prob.unfreeze(all_feats)
            try:
                th, w2p, cond, Hinv = _gauss_newton(prob, feats, all_feats, theta, w2, step,
                                                    ph == 0, max_iter)
                ok = True
                if ph == 2:  # the released rotor inertias must be determined (weights: s² ≈ 1)
                    pos = {int(i): k for k, i in enumerate(free)}
                    sd = np.sqrt(np.maximum([Hinv[pos[i], pos[i]] for i in merged], 0.0))
                    ok = bool(np.all(sd <= REL_STD_WARN * np.maximum(np.abs(th[merged]),
                                                                     0.01)))
            except np.linalg.LinAlgError:
                ok = False
            if not ok:
                if result is None:
                    raise ValueError("q: the regressor is rank deficient (the efficiencies and the "
                                     "rigid body cannot be separated by these data)")
                names_m = [names[i - prob.sl_arm.start] for i in merged]
                warnings.append(f"rotor inertia of {', '.join(names_m)} not separable from the "
                                "link inertias by these data (η_f·η_b too close to 1): held at "
                                "0, absorbed by the rigid body through the gear")
                free = result[0]
                break
            theta, w2 = th, w2p
            result = (free, cond, Hinv)
        # modes held as the OLS fit left them; EIV (eq. (6)) moves θ to the root of the
        # corrected normal equations (a few steps: the correction is small beside θ's spread)
        prob.freeze(all_feats, theta)
        for _ in range(max_iter if method == "eiv" else 1):
            A, bv, c, m = prob.accumulate(feats, theta)
            S = moments(theta)
            x, cond, Hinv, H, Hc = step(A, bv, S, w2, theta)
            if x is None:
                raise ValueError("q: the regressor is rank deficient (the efficiencies and the "
                                 "rigid body cannot be separated by these data)")
            if method != "eiv":
                break
            theta = theta + x
            # (the corrected equations' dependence on θ through S makes this converge linearly;
            # a step below 0.05 std changes nothing a standard deviation would notice)
            if np.all(np.abs(x[free]) <= 0.05 * np.sqrt(np.maximum(np.diag(Hinv), 0.0))):
                break
        A, bv, c, m = prob.accumulate(feats, theta)
        S = moments(theta) if method == "eiv" else None
    else:
        A, bv, c, m = _accumulate(prob, chunks(), theta)
        S = moments(theta)
        for _ in range(2):  # unweighted, then weighted by each joint's residual variance
            x, cond, Hinv, H, Hc = step(A, bv, S, w2, theta)
            if x is None:
                break
            rss = c - 2 * np.einsum("ja,a->j", bv, x) + np.einsum("a,jab,b->j", x, A, x)
            w2 = 1.0 / np.maximum(rss / np.maximum(m - p * m / m.sum(), 1), 1e-300)
        if x is None:
            raise ValueError("q: the regressor is rank deficient; the trajectory does not "
                             "excite every parameter")
        x, cond, Hinv, H, Hc = step(A, bv, S, w2, theta)
        # the linear problem: move A's residual statistics to the solution
        c = c - 2 * np.einsum("ja,a->j", bv, x) + np.einsum("a,jab,b->j", x, A, x)
        bv = bv - np.einsum("jab,b->ja", A, x)
        theta = theta + x
        if S is not None:  # S's response column at the solution: ∂r = ∂y − ∂J·θ
            S = S.copy()
            col = S[:, :p, p] - np.einsum("jab,b->ja", S[:, :p, :p], x)
            corner = (S[:, p, p] - 2 * np.einsum("ja,a->j", S[:, :p, p], x)
                      + np.einsum("a,jab,b->j", x, S[:, :p, :p], x))
            S[:, :p, p] = col
            S[:, p, :p] = col
            S[:, p, p] = corner
    if not cond < COND_LIMIT:
        raise ValueError(f"q: the regressor is rank deficient (condition number {cond:.3g} > "
                         f"{COND_LIMIT:.0g}); the trajectory does not excite every parameter")
    if cond > COND_WARN:
        warnings.append(f"poorly conditioned regressor: condition number {cond:.3g} > "
                        f"{COND_WARN:.0g} (column-equilibrated); excite the joints more "
                        "(fric excite)")
    rss = np.maximum(c, 0.0)
    n_rows = int(m.sum())
    dof = n_rows - len(free)
    s2 = float(np.sum(w2 * rss)) / dof
    if method == "eiv":
        Sw = np.einsum("j,jab->ab", w2, S)
        Sar = Sw[:p, p]
        Saa = Sw[:p, :p]
        cov = Hinv * s2
        F = free
        cov = cov + Hinv @ (Saa[np.ix_(F, F)] * s2 + np.outer(Sar[F], Sar[F]) / n_rows) @ Hinv
    else:
        cov = Hinv * s2
    cov_full = np.zeros((p, p))
    cov_full[np.ix_(free, free)] = cov
    std = np.sqrt(np.maximum(np.diag(cov_full), 0.0))
    if prob.gear:  # each joint's rows in each gear mode, at the estimate
        counts = np.zeros((n, 2), dtype=int)
        for f in (feats if iterative else chunks()):
            d, b, _ = prob.modes(f, theta)
            counts[:, 0] += np.sum(d & f["keep"], axis=0)
            counts[:, 1] += np.sum(b & f["keep"], axis=0)
        for j, name in enumerate(names):
            for cnt, what in zip(counts[j], ("the motor drives the load (eta_f)",
                                             "the load back-drives the motor (eta_b)")):
                if cnt < MIN_SIDE_ROWS:
                    warnings.append(f"joint {name}: only {cnt} samples where {what}; fewer "
                                    f"than {MIN_SIDE_ROWS}")
    prob.free = set(int(i) for i in free)
    return _result(prob, theta, std, cov_full, names, dynamics, method, dv, cond, m, rss,
                   warnings, nz, v)


def _result(prob, theta, std, cov, names, dynamics, method, dv, cond, m, rss, warnings, nz, v):
    joints, stds, det, used, rstd = {}, {}, {}, {}, {}
    f0 = prob.sl_fric.start
    for j, name in enumerate(names):
        sl = slice(f0 + 4 * j, f0 + 4 * j + 4)
        vals = dict(zip(FRICTION_PARAMS, map(float, theta[sl])))
        sd = dict(zip(FRICTION_PARAMS, map(float, std[sl])))
        vals = {k: vals[k] for k in ("Cp", "Cn", "bp", "bn")}
        sd = {k: sd[k] for k in ("Cp", "Cn", "bp", "bn")}
        dt = {}
        if prob.gear:
            ia, ib = prob.sl_alpha.start + j, prob.sl_etab.start + j
            al, eb = float(theta[ia]), float(theta[ib])
            # η_f·η_b = η_b/α; delta method on (α, η_b)
            prod = eb / al
            grad = np.array([-eb / al ** 2, 1.0 / al])
            c2 = cov[np.ix_([ia, ib], [ia, ib])]
            sprod = float(np.sqrt(max(grad @ c2 @ grad, 0.0)))
            if dynamics == "urdf":
                vals.update(eta_f=1.0 / al, eta_b=eb, eta_product=prod)
                sd.update(eta_f=float(std[ia]) / al ** 2, eta_b=float(std[ib]),
                          eta_product=sprod)
            else:
                vals.update(eta_f=None, eta_b=None, eta_product=prod)
                sd.update(eta_f=None, eta_b=None, eta_product=sprod)
                dt.update(eta_f=False, eta_b=False)
        for k, val in vals.items():
            if k in dt:
                continue
            ok = sd[k] <= max(REL_STD_WARN * abs(val), REL_STD_WARN * _FLOOR[k])
            dt[k] = bool(ok)
            if not ok:
                warnings.append(f"joint {name}: {k} = {val:.4g} ± {sd[k]:.2g} (relative std "
                                f"above {REL_STD_WARN:g}; not determined by these data)")
                continue
            # physical bounds (joint_friction.yaml's): Cp, Cn >= 0; η_f, η_b, η_f·η_b <= 1
            lo, hi = (0.0, np.inf) if k in ("Cp", "Cn") else \
                ((-np.inf, 1.0) if k.startswith("eta") else (-np.inf, np.inf))
            if lo <= val <= hi:
                continue
            edge = lo if val < lo else hi
            if abs(val - edge) <= 3 * sd[k]:
                vals[k] = edge
                warnings.append(f"joint {name}: {k} = {val:.6g} ± {sd[k]:.2g} is outside its "
                                f"physical range by less than 3 std: reported as {edge:g}")
            else:
                dt[k] = False
                warnings.append(f"joint {name}: {k} = {val:.4g} ± {sd[k]:.2g} is outside its "
                                f"physical range by more than 3 std: the {prob.law} model does "
                                "not fit this joint (not determined)")
        if prob.gear and dynamics == "urdf":  # (after any clipping of η_f, η_b)
            vals["eta_product"] = vals["eta_f"] * vals["eta_b"]
        for k, side in (("bp", v[:, j] > dv), ("bn", v[:, j] < -dv)):
            sp = np.abs(v[side, j])
            span = float(sp.max() - sp.min()) if sp.size else 0.0
            if span < MIN_SPEED_SPAN:
                dt[k] = False
                warnings.append(f"joint {name}: |v| spans only {span:.3g} rad/s on the {k[1]}"
                                f" side (< {MIN_SPEED_SPAN:g}): too little velocity range, "
                                f"viscous {k} undetermined")
        joints[name], stds[name], det[name] = vals, sd, dt
        used[name] = int(m[j])
        rstd[name] = float(np.sqrt(rss[j] / max(m[j], 1)))
    fit = ArmFrictionFit(joints=joints, std=stds, dynamics=dynamics, method=method, dv=float(dv),
                         cond=float(cond), n_used=used, residual_std=rstd, law=prob.law,
                         determined=det, warnings=warnings, noise=nz, _problem=prob,
                         _theta=theta.copy())
    if prob.sl_arm is not None:
        sl = prob.sl_arm
        held = [i not in prob.free for i in range(sl.start, sl.stop)]  # merged, not fitted
        fit.armature = {nm: None if h else float(x) for nm, x, h in zip(names, theta[sl], held)}
        fit.armature_std = {nm: None if h else float(x)
                            for nm, x, h in zip(names, std[sl], held)}
    if dynamics == "identify":
        fit.base = prob.base
        fit.beta = theta[prob.sl_beta].copy()
        fit.beta_std = std[prob.sl_beta].copy()
    return fit
