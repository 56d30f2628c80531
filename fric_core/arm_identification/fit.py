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
  η_f·η_b (and m, θ) is identifiable. Fitted by damped Gauss–Newton
  (:func:`.normal_equations._gauss_newton`: the rows' modes from the current estimate of τ_load,
  held while the inner iterations converge) from the asymmetric fit, the gauge fixed by 1/η_f = 1 on
  the first joint (β is reported in that gauge). A rotor inertia the rigid body absorbs when G =
  τ_load (:func:`~.regressor.separable_armature`) is separated only by the gear's mode switch: held
  at 0 until the efficiencies are estimated, then released if the data determine it (else held, a
  warning).
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
matrix); above :data:`COND_LIMIT` the fit refuses. ``design`` is the identification design's
(:mod:`.conditioning`: the figure ``fric excite`` minimises, on the fitted motion, unweighted):
above :data:`COND_WARN` a warning blames the motion and names the least-determined parameters;
a poorly conditioned design of the law itself (the gear's efficiencies beside the rigid body, the
curve's levels) is named as such, and one due to the per-joint weights alone draws no warning
(:func:`_conditioning_warnings`).
Standard deviations assume independent errors from sample to sample (correlated model errors,
and the low-pass filtered noise of differentiated positions, make them somewhat optimistic).

Reporting (what the data determine, physical bounds): :mod:`.result`. The parameter layout, the
chunked normal equations and the solvers: :mod:`.normal_equations`.
"""

from __future__ import annotations

from typing import List, Mapping, Optional

import numpy as np

from ..transmission.urdf_dynamics import UrdfDynamics
from .normal_equations import MODE_PASSES  # noqa: F401  (documented constant, importable here)
from ..joint_friction import curve_knots
from .admissible import bounded_solution, covariance
from .conditioning import (DESIGN_SAMPLES, DesignConditioning, conditioning,
                           design_normal_matrix, held_columns)
from .samples import check_samples as _check
from .normal_equations import (MAX_BLOCKS, _accumulate, _gauss_newton, _Problem, _solve,
                               block_scores)
from .regressor import FRICTION_PARAMS, BaseParameters
from .result import MIN_SPEED_SPAN  # noqa: F401  (documented constant, importable here)
from .result import REL_STD_WARN, ArmFrictionFit, _result

__all__ = ["ArmFrictionFit", "fit_arm_friction", "COND_WARN", "COND_LIMIT", "REL_STD_WARN"]

#: Condition number (column-equilibrated weighted design) above which the fit warns.
COND_WARN = 1e3
#: Condition number above which the design is taken as rank deficient (ValueError).
COND_LIMIT = 1e7
#: Fewer rows than this on one side of the band (or in one gear mode) draw a warning.
MIN_SIDE_ROWS = 100
#: Knots beyond 0 per side of the curve law (quantiles of the recorded speeds:
#: :data:`fric_core.joint_friction.KNOT_QUANTILES`).
CURVE_KNOTS = 10


# -- input checks ----------------------------------------------------------------------------------


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


def fit_arm_friction(q, v, a, tau, model, dynamics: str = "identify", method: str = "ols",
                     dv: float = 0.01, base: Optional[BaseParameters] = None,
                     law: str = "asymmetric", armature=True, noise=None,
                     chunk: int = 4096, eiv_samples: int = 2000,
                     max_iter: int = 50, knots=None, admissible: bool = True,
                     blocks: int = 16, line: bool = False, urdf_too: bool = False,
                     _normal=None, _rss_only: bool = False) -> ArmFrictionFit:
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
    law : {"asymmetric", "curve", "gear"}
        The friction law (``--model`` of ``fric identify``); see the module docstring.
        ``"curve"``: the monotone piecewise-linear law of :mod:`fric_core.joint_friction`,
        linear in its levels at the knots (:func:`~.regressor.curve_columns`).
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
    knots : sequence of (v_pos, v_neg), optional
        ``law="curve"``: per joint, the knot speeds of each side (magnitudes from 0, the same
        count everywhere); default :data:`CURVE_KNOTS` quantiles of each side's recorded speeds
        (:func:`fric_core.joint_friction.curve_knots`).
    admissible : bool
        Solve within the physical ranges (:mod:`.admissible`; default); False: the plain
        least-squares solution, whatever its values.
    blocks : int
        At least this many blocks of consecutive samples for the time-correlation-robust
        covariance (:func:`.admissible.covariance`): chunks are made short enough.
    line : bool
        ``law="curve"``: also the asymmetric line's fit, as the result's ``line`` attribute,
        from the same normal equations (the line lies in the curve's span: its levels at the
        knots are ``Cp + bp·v_k``, ``Cn + bn·v_k``), without a second pass over the data.
    urdf_too : bool
        ``dynamics="identify"`` with a linear law (not ``"gear"``): also the fit with the URDF's
        rigid body (``dynamics="urdf"``), as the result's ``urdf`` attribute (with its own
        ``line`` when ``line=True``), from the same normal equations: the URDF's base
        parameters β₀ are the model's, so ``θ_identify = θ₀ + T θ_urdf`` with the rotor inertias
        mapped into the base set where it merges them (:func:`_urdf_normal`); no second pass
        over the data. ``fric identify --dynamics auto`` compares the two on held-out rows.
    _normal : tuple, optional
        Internal (``line``, ``urdf_too``): accumulated normal equations to solve instead of the
        data's.
    _rss_only : bool
        Internal (``fric identify``'s effort-lag search): return ``(Σ_j rss_j, Σ_j rows_j)``
        of the (admissible) solution instead of the result, without its covariance and
        conditioning (what ``residual_std² · n_used`` summed over the joints would give).

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
    if law not in ("asymmetric", "curve", "gear"):
        raise ValueError(f"law: expected 'asymmetric', 'curve' or 'gear', got {law!r}")
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
    if law == "curve":
        if knots is None:
            knots = [(curve_knots(v[v[:, j] > dv, j], CURVE_KNOTS),
                      curve_knots(-v[v[:, j] < -dv, j], CURVE_KNOTS)) for j in range(n)]
            K = min(min(len(a_), len(b_)) for a_, b_ in knots)
            knots = [(a_[:K], b_[:K]) for a_, b_ in knots]
        knots = [(np.asarray(a_, dtype=float), np.asarray(b_, dtype=float)) for a_, b_ in knots]
        if len(knots) != n or any(a_.size != knots[0][0].size or b_.size != a_.size or
                                  a_.size < 2 or a_[0] != 0 or np.any(np.diff(a_) <= 0) or
                                  b_[0] != 0 or np.any(np.diff(b_) <= 0) for a_, b_ in knots):
            raise ValueError(f"knots: expected {n} pairs (v_pos, v_neg) of increasing speeds "
                             "from 0, the same count everywhere")
    else:
        knots = None
    prob = _Problem(dyn, law, dynamics, armature, base, dv, knots)
    p = prob.p
    free = np.array([i for i in range(p) if i not in prob.fixed])
    if N * n <= p:
        raise ValueError(f"q: {N * n} rows for {p} parameters; record longer")
    iterative = law == "gear" and dynamics == "identify"
    if not iterative:  # enough blocks of consecutive samples for the robust covariance
        chunk = max(64, min(int(chunk), int(np.ceil(N / max(int(blocks), 1)))))
    # features per chunk; kept only when the fit must pass over the data more than once
    starts = range(0, N, int(chunk))

    def chunks():
        for s in starts:
            e = min(N, s + int(chunk))
            yield prob.features(q[s:e], v[s:e], a[s:e], tau[s:e])

    if iterative:
        feats = list(chunks())
    fsub = gsub = None
    sub_scale = 1.0

    def eiv_features():
        """EIV's noise moments' subsample: features and their derivatives."""
        nonlocal fsub, gsub, sub_scale
        stride = max(1, int(np.ceil(N / eiv_samples)))
        idx = np.arange(0, N, stride)
        fsub = prob.features(q[idx], v[idx], a[idx], tau[idx])
        gsub = prob.grad_features(q[idx], v[idx])
        sub_scale = N / idx.size

    if method == "eiv" and _normal is None and iterative:
        eiv_features()

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
        if _normal is None:
            blist: list = []
            # EIV's subsample is worked out here while a forked child accumulates chunks
            A, bv, c, m = _accumulate_split(prob, q, v, a, tau, list(starts), int(chunk), theta,
                                            blist, eiv_features if method == "eiv" else None)
            S = moments(theta)
            normal = (A.copy(), bv.copy(), c.copy(), m.copy(), [list(b_) for b_ in blist],
                      None if S is None else S.copy()) \
                if (law == "curve" and line) or (urdf_too and dynamics == "identify") else None
        else:
            A, bv, c, m, blist, S = _normal
            normal = _normal if law == "curve" and line else None
        if dynamics == "identify":  # base parameters no motion determines: the URDF's values
            held = _unidentifiable_base(prob, A, free)
            if held:
                theta0 = np.zeros(p)
                for i_, val_ in held:
                    theta0[i_] = val_
                    warnings.append(
                        f"rigid body: {prob.base.names[i_]} (a base parameter) is not "
                        "determined by any motion of these joints (e.g. the mass a prismatic "
                        "joint lifts: its weight is a constant force, as an asymmetry of the "
                        f"friction levels is): held at the URDF's value {val_:.4g}")
                free = np.array([i_ for i_ in free if i_ not in {h[0] for h in held}])
                A, bv, c, blist, S = _shifted(A, bv, c, blist, S, theta0, p)
                theta = theta0
        for _ in range(2):  # unweighted, then weighted by each joint's residual variance
            x, cond, Hinv, H, Hc = step(A, bv, S, w2, theta)
            if x is None:
                break
            rss = c - 2 * np.einsum("ja,a->j", bv, x) + np.einsum("a,jab,b->j", x, A, x)
            # a joint fitted exactly (rss ≈ 0: every row in its band, or noise-free data) keeps
            # the largest weight of the others (1/0 would make the weighted design singular)
            sig2 = rss / np.maximum(m - p * m / m.sum(), 1)
            floor = 1e-12 * max(float(np.max(sig2)), 1e-300)
            w2 = 1.0 / np.maximum(sig2, floor)
        if x is None:
            raise ValueError("q: the regressor is rank deficient; the trajectory does not "
                             "excite every parameter")
        x, cond, Hinv, H, Hc = step(A, bv, S, w2, theta)
        if x is None:
            raise ValueError("q: the regressor is rank deficient once each joint's rows are "
                             "weighted by its residual variance (joints whose efforts differ by "
                             "orders of magnitude, e.g. a prismatic joint in N beside revolute "
                             "joints in N·m, and a parameter the motion leaves undetermined)")
        gw = np.einsum("j,ja->a", w2, bv)
        if S is not None:
            gw = gw - np.einsum("j,ja->a", w2, S[:, :p, p])
        adm = bounded_solution(Hc, gw, theta, x, prob, free) if admissible else None
        if adm is not None:
            x = adm.x
        # the linear problem: move A's residual statistics to the solution
        c = c - 2 * np.einsum("ja,a->j", bv, x) + np.einsum("a,jab,b->j", x, A, x)
        bv = bv - np.einsum("jab,b->ja", A, x)
        scores = block_scores(blist, x, w2)
        counts = np.array([b_[2] for b_ in blist], dtype=float)
        theta = theta + x
        if S is not None:  # S's response column at the solution: ∂r = ∂y − ∂J·θ
            S = S.copy()
            col = S[:, :p, p] - np.einsum("jab,b->ja", S[:, :p, :p], x)
            corner = (S[:, p, p] - 2 * np.einsum("ja,a->j", S[:, :p, p], x)
                      + np.einsum("a,jab,b->j", x, S[:, :p, :p], x))
            S[:, :p, p] = col
            S[:, p, :p] = col
            S[:, p, p] = corner
            if scores is not None:  # EIV's estimating equation: the corrected scores
                scores = scores + np.outer(counts / counts.sum(),
                                           np.einsum("j,ja->a", w2, S[:, :p, p]))
    if not cond < COND_LIMIT:
        raise ValueError(f"q: the regressor is rank deficient (condition number {cond:.3g} > "
                         f"{COND_LIMIT:.0g}); the trajectory does not excite every parameter")
    if _rss_only:  # the effort-lag search: the residual sum of squares and its rows only
        return float(np.sum(np.maximum(c, 0.0))), int(m.sum())
    pnames = _parameter_names(prob)
    design = _identification_design(prob, A, free, pnames, q, v, a)
    own = conditioning(A.sum(axis=0)[np.ix_(free, free)], [pnames[i] for i in free],
                       _rigid_mask(prob)[free])
    warnings += _conditioning_warnings(design, own, cond, law, dynamics)
    rss = np.maximum(c, 0.0)
    n_rows = int(m.sum())
    dof = n_rows - len(free)
    s2 = float(np.sum(w2 * rss)) / dof
    extra = None
    if method == "eiv":
        Sw = np.einsum("j,jab->ab", w2, S)
        Sar = Sw[:p, p]
        extra = Sw[:p, :p] * s2 + np.outer(Sar, Sar) / n_rows
    if iterative:
        cov = Hinv * s2
        if extra is not None:
            cov = cov + Hinv @ extra[np.ix_(free, free)] @ Hinv
        cov_full = np.zeros((p, p))
        cov_full[np.ix_(free, free)] = cov
        adm = None
    else:
        Hw = np.einsum("j,jab->ab", w2, A)
        Hc = Hw - np.einsum("j,jab->ab", w2, S)[:p, :p] if S is not None else Hw
        cov_full = covariance(Hc, adm, free, s2, extra, scores, counts)
    std = np.sqrt(np.maximum(np.diag(cov_full), 0.0))
    if prob.gear:  # each joint's rows in each gear mode, at the estimate
        mode_rows = np.zeros((n, 2), dtype=int)
        for f in (feats if iterative else chunks()):
            d, b, _ = prob.modes(f, theta)
            mode_rows[:, 0] += np.sum(d & f["keep"], axis=0)
            mode_rows[:, 1] += np.sum(b & f["keep"], axis=0)
        for j, name in enumerate(names):
            for cnt, what in zip(mode_rows[j], ("the motor drives the load (eta_f)",
                                             "the load back-drives the motor (eta_b)")):
                if cnt < MIN_SIDE_ROWS:
                    warnings.append(f"joint {name}: only {cnt} samples where {what}; fewer "
                                    f"than {MIN_SIDE_ROWS}")
    prob.free = set(int(i) for i in free)
    if adm is not None and adm.active:  # a value at its bound: its unconstrained std
        sd_free = np.sqrt(np.maximum(np.diag(covariance(Hc, None, free, s2, extra, scores,
                                                        counts)), 0.0))
        for i in adm.active:
            std[i] = max(std[i], sd_free[i])
    out = _result(prob, theta, std, cov_full, names, dynamics, method, dv, cond, m, rss,
                  warnings, nz, v, adm)
    out.design = design
    if not iterative and normal is not None and law == "curve" and line:
        out.line = _line_from_curve(prob, normal, q, v, a, tau, dyn, dynamics, method, dv,
                                    armature, nz, admissible, blocks)
    if not iterative and normal is not None and urdf_too and dynamics == "identify":
        out.urdf = fit_arm_friction(q, v, a, tau, dyn, dynamics="urdf", method=method, dv=dv,
                                    law=law, armature=armature, noise=nz, knots=knots,
                                    admissible=admissible, blocks=blocks, line=line,
                                    _normal=_urdf_normal(prob, normal))
    return out


#: Fewest rows for which :func:`_accumulate_split` accumulates half the chunks in a forked
#: child (below, the fork and the transfer of the blocks cost more than they save).
SPLIT_ROWS = 20000
#: The child's share of the chunks when this process has other work during the split (EIV's
#: subsample: 2000 samples' regressor and its n acceleration derivatives, ~a fifth of 60 s of
#: 7 joints' chunks).
SPLIT_SHARE = 0.6


def _accumulate_split(prob, q, v, a, tau, starts, chunk, theta, blist, also=None):
    """:func:`~.normal_equations._accumulate` over the chunks starting at ``starts``, the later
    part in a forked child where that is possible (:mod:`fric_core.forked`; 60 s of 7 joints at
    1 kHz: the rigid-body regressor, one Pinocchio call per sample, is most of the fit's time).
    ``also``: called without arguments in this process (after the fork, if any: the child then
    takes :data:`SPLIT_SHARE` of the chunks instead of half). The sums are the same up to
    rounding (their order differs), the blocks the same."""
    from ..forked import can_fork, fork_call

    N = q.shape[0]

    def run(sts, blocks):
        feats = (prob.features(q[s:min(N, s + chunk)], v[s:min(N, s + chunk)],
                               a[s:min(N, s + chunk)], tau[s:min(N, s + chunk)]) for s in sts)
        return _accumulate(prob, feats, theta, blocks)

    half = int(round(len(starts) * (1.0 - (SPLIT_SHARE if also is not None else 0.5))))
    if N < SPLIT_ROWS or min(half, len(starts) - half) < 2 or len(starts) > 2 * MAX_BLOCKS \
            or not can_fork():
        if also is not None:
            also()
        return run(starts, blist)

    def later():
        blocks: list = []
        return run(starts[half:], blocks), blocks

    child = fork_call(later)
    if also is not None:
        also()
    A, bv, c, m = run(starts[:half], blist)
    (A2, bv2, c2, m2), blocks2 = child.result()
    blist.extend(blocks2)
    return A + A2, bv + bv2, c + c2, m + m2


def _urdf_beta(prob) -> np.ndarray:
    """The URDF's base parameters β₀ (rotor inertias 0 where the base set holds them)."""
    dyn = prob.dyn
    pi = np.concatenate([dyn.model.inertias[i].toDynamicParameters()
                         for i in range(1, dyn.model.njoints)])
    return prob.base.beta(pi, np.zeros(dyn.n)) if prob.base.armature else prob.base.beta(pi)


def _urdf_normal(prob, normal):
    """The normal equations of ``dynamics="urdf"`` (layout [rotor inertias], friction) from
    those of ``dynamics="identify"`` (layout β, friction; the rotor inertias merged into β):
    θ = θ₀ + T θ_urdf with θ₀ = [β₀, 0] (:func:`_urdf_beta`: ``Y_b β₀`` is the URDF's
    ``rnea``, so the response becomes ``τ − rnea``) and T the identity on the friction and, on
    the rotor inertias, the base map's armature columns (``Y_b T[:, j]`` is ``q̈_j`` on joint
    j's row). Each joint's A, b, c, the blocks' and EIV's moments map as in
    :func:`_line_from_curve`."""
    n, p = prob.n, prob.p
    A, bv, c, m, blist, S = normal
    theta0 = np.zeros(p)
    theta0[prob.sl_beta] = _urdf_beta(prob)
    A, bv, c, blist, S = _shifted(A, bv, c, blist, S, theta0, p)
    n_arm = n if prob.arm_in_base else 0
    nfr = prob.sl_fric.stop - prob.sl_fric.start
    T = np.zeros((p, n_arm + nfr))
    if n_arm:
        T[prob.sl_beta, :n] = prob.base.map[:, -n:]
    T[prob.sl_fric, n_arm:] = np.eye(nfr)
    return _mapped(prob, T, (A, bv, c, m, blist, S))


def _mapped(prob, L, normal):
    """Normal equations of θ = L θ' (each joint's A, b, c; the blocks'; EIV's moments).

    Joint j's matrices are zero outside its own columns (:meth:`_Problem.joint_columns`; EIV's
    moments: those and the response), so each maps through those rows of L alone."""
    A, bv, c_, m, blist, S = normal
    p, p2, n = L.shape[0], L.shape[1], prob.n
    maps = []
    for j in range(n):
        rows = prob.joint_columns(j)
        cols = np.flatnonzero(np.any(L[rows] != 0.0, axis=0))
        maps.append((rows, cols, np.ascontiguousarray(L[np.ix_(rows, cols)])))

    def mat(X):
        out = np.zeros((n, p2, p2))
        for j, (rows, cols, Lj) in enumerate(maps):
            out[j][np.ix_(cols, cols)] = Lj.T @ X[j][np.ix_(rows, rows)] @ Lj
        return out

    def vec(x):
        out = np.zeros((n, p2))
        for j, (rows, cols, Lj) in enumerate(maps):
            out[j, cols] = x[j, rows] @ Lj
        return out

    S2 = None
    if S is not None:
        S2 = np.zeros((n, p2 + 1, p2 + 1))
        for j, (rows, cols, Lj) in enumerate(maps):
            r1, c1 = np.append(rows, p), np.append(cols, p2)
            Lt = np.zeros((r1.size, c1.size))
            Lt[:-1, :-1] = Lj
            Lt[-1, -1] = 1.0
            S2[j][np.ix_(c1, c1)] = Lt.T @ S[j][np.ix_(r1, r1)] @ Lt
    return mat(A), vec(bv), c_, m, [[mat(Ab), vec(bb), cnt] for Ab, bb, cnt in blist], S2


def _unidentifiable_base(prob, A, free, tol: float = 1e-10):
    """``[(index, URDF value)]``: a base parameter to hold per direction of the parameters that
    the data leave exactly undetermined (the equilibrated normal matrix's eigenvalues below
    ``tol`` of its largest), the rigid-body parameter weighing most in that direction
    (:func:`.conditioning.held_columns`, which ``fric excite``'s figure holds too)."""
    F = np.asarray(free, dtype=int)
    is_beta = (F >= prob.sl_beta.start) & (F < prob.sl_beta.stop)
    cols = held_columns(A.sum(axis=0)[np.ix_(F, F)], is_beta, tol)
    if not cols:
        return []
    dyn = prob.dyn
    pi = np.concatenate([dyn.model.inertias[i].toDynamicParameters()
                         for i in range(1, dyn.model.njoints)])
    beta = prob.base.beta(pi, np.zeros(dyn.n)) if prob.base.armature else prob.base.beta(pi)
    return [(int(F[c]), float(beta[int(F[c]) - prob.sl_beta.start])) for c in cols]


# -- conditioning: the identification design (fric excite's figure) and the fitted law's ---------


def _parameter_names(prob) -> list:
    """Names of the p parameters of the fit's layout: ``"<body>.<param>"`` (base set),
    ``"<joint>.1/eta_f"``, ``"<joint>.eta_b"``, ``"<joint>.armature"``, ``"<joint>.Cp"``, ... or
    ``"<joint>.f+k"``/``"<joint>.f-k"`` (curve levels)."""
    joints = list(prob.dyn.joint_names)
    out = list(prob.base.names) if prob.r else []
    if prob.gear:
        out += [f"{j}.1/eta_f" for j in joints] + [f"{j}.eta_b" for j in joints]
    if prob.sl_arm is not None:
        out += [f"{j}.armature" for j in joints]
    if prob.law == "curve":
        keys = [f"f+{k}" for k in range(prob.nk)] + [f"f-{k}" for k in range(prob.nk)]
    else:
        keys = list(FRICTION_PARAMS)
    out += [f"{j}.{k}" for j in joints for k in keys]
    return out


def _rigid_mask(prob) -> np.ndarray:
    """True on the rigid-body base parameters of the layout."""
    mask = np.zeros(prob.p, dtype=bool)
    mask[prob.sl_beta] = True
    return mask


def _line_map(prob) -> np.ndarray:
    """L (p × p_line) with θ_curve = L θ_line: the asymmetric line's levels at the curve's
    knots, ``Cp + bp·v_k`` and ``Cn + bn·v_k`` (the rigid body and rotor inertias unchanged)."""
    n, nf, K = prob.n, prob.nf, prob.nk
    p_line = prob.p - (nf - 4) * n
    L = np.zeros((prob.p, p_line))
    f0 = prob.sl_fric.start
    L[:f0, :f0] = np.eye(f0)
    for j in range(n):
        vp, vn = prob.knots[j]
        c, cl = f0 + nf * j, f0 + 4 * j  # curve: f+_0.., f-_0..; line: Cp, bp, Cn, bn
        L[c:c + K, cl] = 1.0
        L[c:c + K, cl + 1] = vp
        L[c + K:c + 2 * K, cl + 2] = 1.0
        L[c + K:c + 2 * K, cl + 3] = vn
    return L


def _identification_design(prob, A, free, pnames, q, v, a) -> DesignConditioning:
    """The identification design's conditioning on the fitted motion, as ``fric excite``
    computes it (:mod:`.conditioning`: rigid body with ``dynamics="identify"``, rotor inertias
    when fitted, the asymmetric friction columns; unweighted, columns equilibrated).

    The asymmetric law's normal equations are that design; the curve's map onto it by
    :func:`_line_map` (the line lies in the curve's span); the gear law's Jacobian is not a
    linear image of it, so the design is built on at most :data:`DESIGN_SAMPLES` samples."""
    free = np.asarray(free, dtype=int)
    H = A.sum(axis=0)
    if prob.law == "asymmetric":
        return conditioning(H[np.ix_(free, free)], [pnames[i] for i in free],
                            _rigid_mask(prob)[free])
    if prob.law == "curve":
        L = _line_map(prob)
        f0 = prob.sl_fric.start
        free_set = set(free.tolist())
        keep = np.array([i for i in range(L.shape[1]) if i >= f0 or i in free_set], dtype=int)
        names = pnames[:f0] + [f"{j}.{k}" for j in prob.dyn.joint_names
                               for k in FRICTION_PARAMS]
        rigid = np.zeros(L.shape[1], dtype=bool)
        rigid[prob.sl_beta] = True
        Hl = L.T @ H @ L
        return conditioning(Hl[np.ix_(keep, keep)], [names[i] for i in keep], rigid[keep])
    N = q.shape[0]
    idx = np.unique(np.linspace(0, N - 1, min(N, DESIGN_SAMPLES)).astype(int))
    design = design_normal_matrix(prob.dyn, q[idx], v[idx], a[idx], prob.dv,
                                  rigid_body=prob.dynamics == "identify", armature=prob.fit_arm)
    return conditioning(design.H, design.names, design.rigid)


def _share(cond: DesignConditioning, suffixes) -> float:
    """Share of the least-determined direction on the parameters named ``*.<suffix>``."""
    return sum(s for name, s in cond.weakest if name.rsplit(".", 1)[-1] in suffixes)


def _conditioning_warnings(design: DesignConditioning, own: DesignConditioning, cond: float,
                           law: str, dynamics: str) -> List[str]:
    """What the conditioning tells the user, with only the advice that would help.

    ``design``: the identification design on this motion (``fric excite``'s figure); ``own``:
    the fitted law's design, unweighted; ``cond``: the fitted, weighted design's. The motion is
    blamed (and ``fric excite`` advised) only when ``design`` is poorly conditioned; a law's own
    columns (the gear's efficiencies beside the rigid body, the curve's levels) are named as
    such; per-joint weights alone (each joint's rows divided by its residual std) change the
    figure without changing what the data determine, and draw no warning."""
    figure = "fric excite's figure: the column-scaled rigid-body + friction regressor"
    if design.cond > COND_WARN:
        weak = design.weakest_words()
        if _share(design, FRICTION_PARAMS) >= 0.5:
            joints = list(dict.fromkeys(name.rsplit(".", 1)[0] for name, _ in design.weakest
                                        if name.rsplit(".", 1)[-1] in FRICTION_PARAMS))
            advice = (f"move {', '.join(joints)} both ways over a wider range of speeds (a "
                      "trajectory from fric excite does)")
        else:
            advice = ("a trajectory from fric excite determines them (it minimises this figure)"
                      + ("; or trust the URDF's inertias (--dynamics urdf)"
                         if dynamics == "identify" else ""))
        return [f"poorly conditioned regressor: condition number {design.cond:.3g} > "
                f"{COND_WARN:.0g} of the identification design on this motion ({figure}); "
                f"least determined: {weak}; {advice}"]
    if not (cond > COND_WARN and own.cond > COND_WARN):
        return []
    head = (f"the {law} law's own design is poorly conditioned: condition number "
            f"{own.cond:.3g} > {COND_WARN:.0g} (the motion's identification design: "
            f"{design.cond:.3g}, {figure}, so exciting more does not change it); least "
            f"determined: {own.weakest_words()}")
    if law == "gear" and _share(own, ("1/eta_f", "eta_b")) >= 0.5:
        if dynamics == "identify":
            return [head + "; with the rigid body identified the efficiencies trade against "
                    "it (only η_f·η_b is determined): --dynamics urdf separates them"]
        return [head + "; the efficiencies are told apart only by how often the load drives "
                "and back-drives each joint"]
    return [head + "; each value's std says how well it is determined"]


def _shifted(A, bv, c, blist, S, theta0, p):
    """The accumulated normal equations (about θ = 0) moved to θ₀: ``b − A θ₀``, the residual
    sums, the blocks' scores and EIV's response moments."""
    bv2 = bv - np.einsum("jab,b->ja", A, theta0)
    c2 = c - 2 * np.einsum("ja,a->j", bv, theta0) + np.einsum("a,jab,b->j", theta0, A, theta0)
    bl2 = [[Ab, bb - np.einsum("jab,b->ja", Ab, theta0), cnt] for Ab, bb, cnt in blist]
    S2 = S
    if S is not None:
        S2 = S.copy()
        col = S[:, :p, p] - np.einsum("jab,b->ja", S[:, :p, :p], theta0)
        S2[:, :p, p] = col
        S2[:, p, :p] = col
        S2[:, p, p] = (S[:, p, p] - 2 * np.einsum("ja,a->j", S[:, :p, p], theta0)
                       + np.einsum("a,jab,b->j", theta0, S[:, :p, :p], theta0))
    return A, bv2, c2, bl2, S2


def _line_from_curve(prob, normal, q, v, a, tau, dyn, dynamics, method, dv, armature, nz,
                     admissible, blocks) -> ArmFrictionFit:
    """The asymmetric line's fit from the curve's normal equations (``line=True``): θ_curve =
    L θ_line, so each joint's ``A``, ``b``, the blocks' and EIV's moments map by L."""
    return fit_arm_friction(q, v, a, tau, dyn, dynamics=dynamics, method=method, dv=dv,
                            base=prob.base, law="asymmetric", armature=armature, noise=nz,
                            admissible=admissible, blocks=blocks,
                            _normal=_mapped(prob, _line_map(prob), normal))
