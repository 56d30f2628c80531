"""The result of :func:`~.fit.fit_arm_friction`: :class:`ArmFrictionFit` (issue 15).

Reporting: a value is ``determined`` when its standard deviation is at most
:data:`REL_STD_WARN` of its magnitude (or of a floor: 0.02 N·m, 0.01 N·m·s/rad, 0.03) and, for a
viscous term, when |q̇| spans at least :data:`MIN_SPEED_SPAN` on its side. Physical bounds
(Cp, Cn ≥ 0; η_f, η_b, η_f·η_b ≤ 1): a value outside by less than 3 std is reported at the bound,
by more it is not determined (the law does not fit the joint); every such case is a warning.
:meth:`ArmFrictionFit.predict` gives the fitted model's torques (e.g. on a held-out part);
:meth:`ArmFrictionFit.to_joint_friction_set` what ``joint_friction.yaml`` holds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

import numpy as np

from ..joint_friction import FrictionCurve, JointFriction, JointFrictionSet
from .regressor import FRICTION_PARAMS, BaseParameters
from .rigid_body import RIGID_BODY_KEY, rigid_body_from_fit
from .samples import check_samples

__all__ = ["ArmFrictionFit", "REL_STD_WARN", "MIN_SPEED_SPAN", "predict_together"]

#: Relative standard deviation above which a parameter is reported as not determined.
REL_STD_WARN = 0.2
#: A viscous coefficient needs at least this spread of |q̇| [rad/s] on its side.
MIN_SPEED_SPAN = 0.1
# floors of the relative-std test (absolute std below these is always "determined")
_FLOOR = {"Cp": 0.02, "Cn": 0.02, "bp": 0.01, "bn": 0.01, "eta_f": 0.03, "eta_b": 0.03,
          "eta_product": 0.03}


@dataclass
class ArmFrictionFit:
    """Result of :func:`~.fit.fit_arm_friction`.

    ``joints``: joint name → ``{"Cp", "Cn", "bp", "bn"}`` (plus ``"eta_f", "eta_b",
    "eta_product"`` for ``law="gear"``, None where the data cannot determine them); ``std``: the
    same keys with standard deviations (``friction_cov``: per joint the covariance of its
    friction parameters in ``friction_keys`` order, :meth:`combination_std`); ``determined``:
    the same keys → bool (False: not identifiable from these data, or relative std above
    :data:`REL_STD_WARN`); ``warnings``: what
    the data lack, one line each; ``base``: the base set and ``beta``/``beta_std`` its fitted
    values (None with ``dynamics="urdf"``; with ``law="gear"`` and ``"identify"`` known only up to
    the global scale s); ``armature``/``armature_std``: fitted rotor inertias per joint [kg·m²]
    (None when merged into the base set, not fitted, or known; per joint None where the gear fit
    could not separate it from the link inertias); ``cond``: condition number of the
    column-equilibrated weighted design of the fitted law; ``design``: the conditioning of the
    identification design on the fitted motion, the figure ``fric excite`` reports and minimises
    (:class:`~.conditioning.DesignConditioning`: rigid body + rotor inertias + asymmetric
    friction columns, unweighted, columns equilibrated); ``n_used``: rows (joint samples outside
    the band) per joint; ``residual_std``: per joint, N·m; ``noise``: the variances used by EIV;
    ``line``: the asymmetric line beside a curve (``line=True``); ``urdf``: the same law with
    the URDF's rigid body beside a fit that identified it (``urdf_too=True``).
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
    reasons: Dict[str, Dict[str, str]] = field(default_factory=dict)
    knots: Optional[list] = None
    line: Optional["ArmFrictionFit"] = None
    urdf: Optional["ArmFrictionFit"] = None
    design: Optional[object] = None
    friction_cov: Dict[str, np.ndarray] = field(default_factory=dict, repr=False)
    friction_keys: Tuple[str, ...] = ()
    _problem: Optional[object] = field(default=None, repr=False, compare=False)
    _theta: Optional[np.ndarray] = field(default=None, repr=False, compare=False)

    def combination_std(self, name: str, weights: Dict[str, float]) -> float:
        """The standard deviation of ``Σ w_k·θ_k`` over joint ``name``'s friction parameters,
        with their covariance (``friction_cov``, parameters in ``friction_keys`` order): e.g.
        the mean Coulomb level ``(Cp + Cn)/2``, whose two terms are correlated through the
        rigid body and the effort offset.

        Parameters
        ----------
        name : str
            The joint.
        weights : dict
            Parameter name (one of ``friction_keys``: ``Cp``, ``bp``, ``Cn``, ``bn`` for the
            asymmetric and gear laws, ``f+k``/``f-k`` for the curve) → weight.

        Returns
        -------
        float
            The std, NaN when the fit has no covariance for the joint or a name is unknown.
        """
        cov = self.friction_cov.get(name)
        if cov is None or any(k not in self.friction_keys for k in weights):
            return float("nan")
        w = np.zeros(len(self.friction_keys))
        for k, x in weights.items():
            w[self.friction_keys.index(k)] = x
        return float(np.sqrt(max(float(w @ cov @ w), 0.0)))

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
        q, v, a, _ = check_samples(q, v, a, np.zeros(np.shape(q)), n)
        return predict_together({"fit": self}, q, v, a)["fit"]

    def to_joint_friction_set(self) -> JointFrictionSet:
        """The fit as :class:`~.joint_friction.JointFrictionSet` for
        :func:`~.joint_friction.write_joint_friction`: an efficiency the data do not determine
        (``determined`` False) is written as None, never as a number (η_f and η_b together).

        With the rigid body identified (``dynamics="identify"``) and the asymmetric law, the
        identified rigid body goes with it (``extra["rigid_body"]``, :mod:`.rigid_body`: the
        identified gravity torque for the compensator); not with the gear law, where β is known
        only up to a scale.

        Returns
        -------
        JointFrictionSet
            ``model`` = the law, with ``dynamics``, ``method``, ``dv`` and per-joint stds.
        """
        out = {}
        for j, (name, p) in enumerate(self.joints.items()):
            det = self.determined.get(name, {})
            gear = {k: p.get(k) if det.get(k, True) else None
                    for k in ("eta_f", "eta_b", "eta_product")}
            if gear["eta_f"] is None or gear["eta_b"] is None:
                gear["eta_f"] = gear["eta_b"] = None
            curve = None
            if self.law == "curve":
                K = len(self.knots[j][0])
                vp, vn = self.knots[j]
                fp = [p[f"f+{k}"] for k in range(K)]
                fn = [p[f"f-{k}"] for k in range(K)]
                curve = FrictionCurve.make(vp, fp, vn, fn, where=f"joints.{name}.curve")
                law = {"Cp": fp[0], "Cn": fn[0], "bp": (fp[-1] - fp[0]) / vp[-1],
                       "bn": (fn[-1] - fn[0]) / vn[-1]}
            else:
                law = {k: p[k] for k in ("Cp", "Cn", "bp", "bn")}
            std = {k: float(s) for k, s in self.std[name].items()
                   if s is not None and (k not in gear or gear[k] is not None)}
            out[name] = JointFriction(**law, **gear, std=std,
                                      law="curve" if curve is not None else "asymmetric",
                                      curve=curve,
                                      determined={k: False for k, d in det.items() if not d},
                                      reasons=dict(self.reasons.get(name, {})))
        extra = {}
        if self.beta is not None and self.law != "gear":
            rb = rigid_body_from_fit(self._problem.dyn, self.base, self.beta, self.beta_std)
            extra[RIGID_BODY_KEY] = rb.to_dict()
        return JointFrictionSet(joints=out, model=self.law, dynamics=self.dynamics,
                                method=self.method, dv=self.dv, extra=extra)


def predict_together(fits: Dict[str, "ArmFrictionFit"], q, v, a,
                     chunk: int = 8192) -> Dict[str, np.ndarray]:
    """Several fits' predicted efforts at the same (q, q̇, q̈), the rigid-body regressor (the
    costly part) computed once per chunk for all of them (fits of one arm and base set, e.g.
    the curve and the line of ``fit_arm_friction(law="curve", line=True)``).

    Parameters
    ----------
    fits : mapping
        Name → :class:`ArmFrictionFit`.
    q, v, a : (N, n) ndarray
        Positions, velocities, accelerations (already checked).
    chunk : int
        Samples per chunk (bounds the features' memory).

    Returns
    -------
    dict
        Name → (N, n) predicted efforts.
    """
    out = {k: np.empty(np.shape(q)) for k in fits}
    N, n = np.shape(q)
    for s in range(0, N, chunk):
        e = min(N, s + chunk)
        shared = None
        for k, fit in fits.items():
            prob = fit._problem
            f = prob.features(q[s:e], v[s:e], a[s:e], np.zeros((e - s, n)), shared=shared)
            if shared is None and not prob.gear:
                shared = {key: f[key] for key in ("Yb", "tl") if key in f}
            out[k][s:e] = prob.model(f, fit._theta) - f["y"]  # y = 0 − what is known
    return out


_CAUSES = ("likely causes: the effort lags the states (--effort-lag), a recorded velocity that "
           "lags the positions, dynamics the rigid-body model lacks (an elastic joint, cables), "
           "or a friction law that is not a straight line (--model curve)")


def _bound_reason(what: str, value: float, sd: float) -> Tuple[str, str]:
    """(parameter key, reason) for a value the admissible fit held at its bound."""
    got = f"{value:.4g} ± {sd:.2g} without the bound"
    if what in ("bp", "bn"):
        return what, (f"fitted below 0 ({got}): held at 0 (a negative viscous term is not "
                      f"friction); {_CAUSES}")
    if what == "Cp+Cn":
        return "Cn", (f"Cp + Cn fitted below 0 ({got}): held at Cn = -Cp (a friction that "
                      f"drops across v = 0 is not a monotone law); {_CAUSES}")
    if what == "jump":
        return "f-0", (f"the curve's jump at v = 0 (f+0 + f-0) fitted below 0 ({got}): held "
                       f"at 0; {_CAUSES}")
    if what == "eta_f":
        return what, (f"1/eta_f fitted below 1 ({got}): eta_f held at 1 (an efficiency above 1 "
                      "is not physical); likely the URDF's inertias are too large, or the "
                      "effort's scale is off (--effort-scale)")
    return what, (f"fitted above 1 ({got}): held at 1 (an efficiency above 1 is not "
                  "physical); likely the URDF's inertias are off, or the effort's scale "
                  "(--effort-scale)")


def _result(prob, theta, std, cov, names, dynamics, method, dv, cond, m, rss, warnings, nz, v,
            adm=None):
    joints, stds, det, used, rstd = {}, {}, {}, {}, {}
    reasons: Dict[str, Dict[str, str]] = {nm: {} for nm in names}
    held = {}
    at_bound: List[str] = []
    if adm is not None and adm.active:
        z_free = np.linalg.solve(adm.T, theta - adm.x + adm.x_free)
        for i in adm.active:
            j, what = adm.labels.get(i, (None, ""))
            if j is None or what.startswith(("f+", "f-")):  # a flat curve segment is physical
                continue
            bound = adm.lb[i] if np.isfinite(adm.lb[i]) and z_free[i] < adm.lb[i] else adm.ub[i]
            key, why = _bound_reason(what, float(z_free[i]), float(std[i]))
            if abs(float(z_free[i]) - bound) <= 3.0 * float(std[i]):
                # within 3 std of its bound: the bound is what the data say (e.g. a lossless
                # drive's η_f = 1, a joint without viscous friction): determined, a note only
                at_bound.append(f"{names[j]} {'f+0 + f-0' if what == 'jump' else key} "
                                f"({float(z_free[i]):.3g} ± {float(std[i]):.2g})")
                continue
            reasons[names[j]][key] = why
            held[(j, key)] = True
            warnings.append(f"joint {names[j]}: {key} {why}")
    if at_bound:
        warnings.append("at their physical bound, within 3 std of what the data gave (the bound "
                        "is what the data say, e.g. no jump at v = 0 for a continuous friction, "
                        "a lossless drive): " + ", ".join(at_bound))
    f0, nf = prob.sl_fric.start, prob.nf
    for j, name in enumerate(names):
        sl = slice(f0 + nf * j, f0 + nf * (j + 1))
        if prob.law == "curve":
            K = prob.nk
            keys = [f"f+{k}" for k in range(K)] + [f"f-{k}" for k in range(K)]
            vals = dict(zip(keys, map(float, theta[sl])))
            sd = dict(zip(keys, map(float, std[sl])))
        else:
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
        levels = [k for k in vals if k in ("Cp", "Cn") or k.startswith(("f+", "f-"))]
        level = max((abs(vals[k]) for k in levels), default=0.0)
        loose: List[str] = []
        for k, val in vals.items():
            if k in dt:
                continue
            if held.get((j, k)):
                dt[k] = False
                continue
            floor = _FLOOR.get(k, _FLOOR["Cp"])
            # a friction level is measured against the joint's friction, not against itself: an
            # offset left in the levels (or a saturated curve's flat end) puts some near 0
            size = max(abs(val), 0.5 * level) if k in levels else abs(val)
            ok = sd[k] <= max(REL_STD_WARN * size, REL_STD_WARN * floor)
            dt[k] = bool(ok)
            if not ok:
                reasons[name].setdefault(k, f"std above {REL_STD_WARN:g} of its size "
                                            f"({val:.4g} ± {sd[k]:.2g}): not determined by "
                                            "these data")
                loose.append(f"{k} = {val:.4g} ± {sd[k]:.2g}")
                continue
            if k == "eta_product" and val > 1.0:  # the gear fit with the rigid body identified
                if val - 1.0 <= 3 * sd[k]:
                    vals[k] = 1.0
                    warnings.append(f"joint {name}: {k} = {val:.6g} ± {sd[k]:.2g} is above 1 "
                                    "by less than 3 std: reported as 1")
                else:
                    dt[k] = False
                    reasons[name][k] = (f"fitted above 1 ({val:.4g} ± {sd[k]:.2g}): not an "
                                        "efficiency; the gear model does not fit this joint")
                    warnings.append(f"joint {name}: {k} = {val:.4g} ± {sd[k]:.2g} is above 1 "
                                    "by more than 3 std: the gear model does not fit this "
                                    "joint (not determined)")
        if adm is None and prob.gear and dynamics == "identify":
            # no bounded solve here (the gear law with the rigid body identified is solved by
            # Gauss–Newton): the file's ranges are kept by holding a value at its bound
            for k in ("bp", "bn"):
                if vals[k] < 0.0:
                    reasons[name][k] = (f"fitted below 0 ({vals[k]:.4g} ± {sd[k]:.2g}): held "
                                        f"at 0, the others not refitted; {_CAUSES}")
                    warnings.append(f"joint {name}: {k} {reasons[name][k]}")
                    vals[k], dt[k] = 0.0, False
            if vals["Cp"] + vals["Cn"] < 0.0:
                reasons[name]["Cn"] = (f"Cp + Cn fitted below 0 ({vals['Cp'] + vals['Cn']:.4g})"
                                       f": held at Cn = -Cp, the others not refitted; {_CAUSES}")
                warnings.append(f"joint {name}: Cn {reasons[name]['Cn']}")
                vals["Cn"], dt["Cn"] = -vals["Cp"], False
        if loose:
            warnings.append(f"joint {name}: {len(loose)} value(s) not determined by these data "
                            f"(std above {REL_STD_WARN:g} of their size): " + ", ".join(loose))
        if prob.gear and dynamics == "urdf":
            vals["eta_product"] = vals["eta_f"] * vals["eta_b"]
        if prob.law != "curve":
            for k, side in (("bp", v[:, j] > dv), ("bn", v[:, j] < -dv)):
                sp = np.abs(v[side, j])
                span = float(sp.max() - sp.min()) if sp.size else 0.0
                if span < MIN_SPEED_SPAN:
                    dt[k] = False
                    reasons[name].setdefault(k, f"|v| spans only {span:.3g} rad/s on this side "
                                                f"(< {MIN_SPEED_SPAN:g}): too little velocity "
                                                "range")
                    warnings.append(f"joint {name}: |v| spans only {span:.3g} rad/s on the "
                                    f"{k[1]} side (< {MIN_SPEED_SPAN:g}): too little velocity "
                                    f"range, viscous {k} undetermined")
        joints[name], stds[name], det[name] = vals, sd, dt
        used[name] = int(m[j])
        rstd[name] = float(np.sqrt(rss[j] / max(m[j], 1)))
    if prob.law == "curve":
        fkeys = tuple([f"f+{k}" for k in range(prob.nk)] + [f"f-{k}" for k in range(prob.nk)])
    else:
        fkeys = tuple(FRICTION_PARAMS)
    fcov = {name: np.array(cov[f0 + nf * j:f0 + nf * (j + 1), f0 + nf * j:f0 + nf * (j + 1)])
            for j, name in enumerate(names)}
    fit = ArmFrictionFit(joints=joints, std=stds, dynamics=dynamics, method=method, dv=float(dv),
                         cond=float(cond), n_used=used, residual_std=rstd, law=prob.law,
                         determined=det, warnings=warnings, noise=nz, _problem=prob,
                         _theta=theta.copy(), reasons=reasons, knots=prob.knots,
                         friction_cov=fcov, friction_keys=fkeys)
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
