"""Friction and mass identification for haptic display (paper 003: Richard, Cutkosky & MacLean).

The model is the paper's asymmetric Karnopp model (its eq. 1) inside ``F = m a + F_friction`` (its
force balance, also numbered 1): kinetic friction ``Cp + bp v`` for ``v > Δv`` and ``−Cn + bn v``
for ``v < −Δv`` (``Cp``, ``Cn`` magnitudes, as in the paper's Table 2), static friction in
``[Dn, Dp]`` inside the band ``|v| < Δv``.

:func:`fit_friction` does what the paper's "Solve for unknown parameters" section does:

1. bin out the samples with ``|v| <= Δv`` (Δv given, or chosen automatically: see below);
2. split the remaining velocities into positive and negative parts ``vel_p``, ``vel_n``;
3. build the design matrix of eq. (3), columns ``[a, [v>Δv], vel_p, −[v<−Δv], vel_n]`` so that
   ``F = X β + ε`` with ``β = (m, Cp, bp, Cn, bn)`` (``sgn(vel_n) = −1``: ``Cn`` is a magnitude);
4. solve by least squares, eq. (5) (``method="ols"``), or by Fuller's errors-in-variables
   estimator, eq. (6) (``method="eiv"``, the default):
   ``β̃ = (N⁻¹ XᵀX − S_uu)⁻¹ N⁻¹ XᵀF``.

``S_uu`` is the mean outer product of the regressors' measurement errors. The paper writes
``diag(s_δa, 0, s_δvel, 0, s_δvel)``; since ``vel_p`` carries velocity noise only on the
``N_p`` positive samples (zeros elsewhere), its exact mean square error is ``s_δvel N_p / N``
(likewise ``N_n / N`` for ``vel_n``), which is what is used here (the paper's form over-corrects
the viscosities by a factor up to 2). The sign columns are exact once the band is binned out.

Standard deviations:

* OLS: ``σ̂² (XᵀX)⁻¹`` with ``σ̂² = ‖F − Xβ̂‖² / (N − 5)``;
* EIV: Fuller's normal-theory asymptotic covariance for the estimator with known error covariance
  (Fuller, *Measurement Error Models*, Wiley 1987, Sec. 2.2, Theorem 2.2.1):
  ``V̂ = N⁻¹ [M̂⁻¹ s_vv + M̂⁻¹ (S_uu s_vv + Ŝ_uv Ŝ_uvᵀ) M̂⁻¹]`` with ``M̂ = N⁻¹XᵀX − S_uu``,
  ``s_vv = ‖F − Xβ̃‖² / (N − 5)`` and ``Ŝ_uv = −S_uu β̃``.

Both assume independent errors from sample to sample; correlated model errors (unmodelled
dynamics, stick-slip vibration) make the reported standard deviations optimistic.

Noise variances (``noise=dict(accel=..., vel=...)``, variances in (m/s²)², (m/s)²): when not
given they are estimated from the data as the variance of white noise on a signal that is smooth
at the sampling rate: the third-order difference ``Δ³y`` of such a signal is its noise times
``[1, −3, 3, −1]`` (variance ``20 σ²``), and its median absolute deviation (MAD/0.6745, robust to
the jumps of the acceleration at stick/slip transitions) gives ``σ``. This over-estimates when the
signal itself is rough at the sampling rate — a realtime run whose controller missed states has
the servo's kicks in its acceleration, read as noise, which over-corrects the mass — so give the
variances when they are known (Table 1 of the paper lists them for its apparatus: 0.2379²
(m/s²)², 3.18e-3² (m/s)²). Differences spanning a gap of the record (``gaps``, lost samples)
are left out.

Δv (automatic): "the smallest velocity range that fully encompasses the transition from static to
dynamic friction". A provisional kinetic fit on ``|v| > 0.25 max|v|`` predicts the kinetic force at
every sample; the samples with ``0 < |v| <= 0.25 max|v|`` are sorted by ``|v|`` per velocity sign
and grouped in bins (≥ 20 samples); a bin whose median residual (measured − predicted kinetic
force; the median ignores the few samples whose velocity sign the noise flipped) differs from zero
by more than 3 standard errors belongs to the transition, and Δv is the upper ``|v|`` edge of the
bin after the fastest such bin (either sign; the margin covers the transition's undetectably small
tail). The fit is repeated once with that Δv. With no
transition detected, Δv is 3 velocity-noise standard deviations (or the smallest non-zero |v|).

Static levels ``Dp``, ``Dn`` (from the stuck band): in each run of consecutive samples with
``|v| <= Δv`` (an episode: a reversal or a stop), the friction force ``F − m a`` (3-sample moving
average) reaches its breakaway peak just before the block leaves the band; the peak (maximum when
it leaves towards ``v > Δv``, minimum towards ``v < −Δv``) of every episode is taken and ``Dp``/
``Dn`` are their medians; their ``std`` is the spread of the peaks over √(number of episodes).
Sensor noise biases a peak upward in magnitude by about one noise standard deviation of the force
residual.

Identifiability: :func:`fit_friction` raises ``ValueError`` naming the problem for mismatched
lengths, NaN/inf (naming the argument), a data set stuck the whole time, one velocity sign only,
fewer than :data:`MIN_SAMPLES_PER_SIGN` kinetic samples on a side, and an ill-conditioned design
(:data:`COND_LIMIT`).

Also here: :func:`excitation` (the paper's warm-up + sinusoidal position trajectory within travel
limits), :func:`central_difference` (the 4-point central difference of velocity) and
:func:`calibrate_accelerometer` (the paper's scale and offset of the accelerometer fitted against
that difference).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import Dict, Optional

import numpy as np

from ..laws import AsymmetricFriction

__all__ = ["FrictionFit", "fit_friction", "estimate_noise", "excitation", "Excitation",
           "central_difference", "calibrate_accelerometer", "AccelCalibration",
           "MIN_SAMPLES_PER_SIGN", "COND_LIMIT", "IdentificationWarning"]

#: Minimum number of kinetic samples (|v| > Δv) on each velocity side: each side carries two
#: parameters (Coulomb level, viscosity) and the asymptotic standard deviations need many more
#: samples than parameters; 50 samples is 50 ms at the paper's 1 kHz.
MIN_SAMPLES_PER_SIGN = 50

#: Largest accepted condition number of the column-equilibrated design matrix X (each column
#: scaled to unit norm, so the figure is unit-free). Beyond it a parameter is not determined by
#: the data (e.g. no acceleration variation for the mass, one speed per side for a viscosity);
#: 1e6 leaves ≥ 10 significant digits of double precision for the solution.
COND_LIMIT = 1e6

PARAMS = ("m", "Cp", "bp", "Cn", "bn")


class IdentificationWarning(UserWarning):
    """A fitted value had to be changed to make a renderable law (named in the message)."""


@dataclass
class FrictionFit:
    """Result of :func:`fit_friction`. Forces in N, velocities in m/s, mass in kg.

    ``std`` holds the standard deviation of every estimate under the same names (``dv`` has none:
    it is chosen, not estimated). ``cond`` is the condition number of the column-equilibrated
    design matrix; ``n_used`` the number of kinetic samples (|v| > Δv) in the regression;
    ``noise`` the variances used for the EIV correction (estimated or given).
    """

    m: float
    Cp: float
    bp: float
    Cn: float
    bn: float
    Dp: float
    Dn: float
    dv: float
    std: Dict[str, float]
    method: str
    cond: float
    n_used: int
    n_pos: int = 0
    n_neg: int = 0
    noise: Dict[str, float] = field(default_factory=dict)
    residual_std: float = float("nan")

    def law(self) -> AsymmetricFriction:
        """The identified friction as a renderable :class:`~fric_core.laws.AsymmetricFriction`.

        A negative fitted viscosity (not a physical law) is clipped to 0 and a non-positive
        Coulomb level or a static level on the wrong side of zero is replaced, each with an
        :class:`IdentificationWarning` naming the field.
        """
        vals = dict(Cp=self.Cp, Cn=self.Cn, bp=self.bp, bn=self.bn, Dp=self.Dp, Dn=self.Dn,
                    dv=self.dv)
        for name in ("bp", "bn"):
            if vals[name] < 0.0:
                warnings.warn(f"FrictionFit.law: fitted {name} = {vals[name]:.4g} < 0 is not a "
                              f"physical viscosity; clipped to 0", IdentificationWarning,
                              stacklevel=2)
                vals[name] = 0.0
        for name in ("Cp", "Cn"):
            if not vals[name] > 0.0:
                warnings.warn(f"FrictionFit.law: fitted {name} = {vals[name]:.4g} is not a "
                              f"positive Coulomb magnitude; set to 1e-9", IdentificationWarning,
                              stacklevel=2)
                vals[name] = 1e-9
        if not vals["Dp"] > 0.0:
            warnings.warn(f"FrictionFit.law: Dp = {vals['Dp']:.4g} <= 0; replaced by Cp = "
                          f"{vals['Cp']:.4g}", IdentificationWarning, stacklevel=2)
            vals["Dp"] = vals["Cp"]
        if not vals["Dn"] < 0.0:
            warnings.warn(f"FrictionFit.law: Dn = {vals['Dn']:.4g} >= 0; replaced by -Cn = "
                          f"{-vals['Cn']:.4g}", IdentificationWarning, stacklevel=2)
            vals["Dn"] = -vals["Cn"]
        return AsymmetricFriction(**vals)

    def predict(self, v, a) -> np.ndarray:
        """Model force ``m a + kinetic friction(v)`` (the band |v| <= Δv predicts the static
        bound towards which the friction acts is unknown: it is NaN there)."""
        v = np.asarray(v, dtype=float)
        a = np.asarray(a, dtype=float)
        f = np.where(v > self.dv, self.Cp + self.bp * v,
                     np.where(v < -self.dv, -self.Cn + self.bn * v, np.nan))
        return self.m * a + f

    def table(self) -> str:
        """A plain-text table of the estimates ± std."""
        rows = [f"{'param':>5} {'estimate':>10} {'std':>9}"]
        for k in PARAMS + ("Dp", "Dn"):
            rows.append(f"{k:>5} {getattr(self, k):>10.4f} {self.std.get(k, float('nan')):>9.4f}")
        rows.append(f"{'dv':>5} {self.dv:>10.4f} {'':>9}")
        return "\n".join(rows)


# -- input checks ----------------------------------------------------------------------------------
def _arrays(**named):
    out = {}
    n = None
    for name, val in named.items():
        arr = np.asarray(val, dtype=float)
        if arr.ndim != 1:
            raise ValueError(f"{name}: expected a 1-D array, got shape {arr.shape}")
        out[name] = arr
    lens = {k: v.size for k, v in out.items()}
    if len(set(lens.values())) != 1:
        raise ValueError("mismatched lengths: "
                         + ", ".join(f"{k} has {n}" for k, n in lens.items()))
    for name, arr in out.items():
        bad = ~np.isfinite(arr)
        if bad.any():
            i = int(np.argmax(bad))
            raise ValueError(f"{name}: contains NaN or inf ({int(bad.sum())} samples, first at "
                             f"index {i})")
    n = next(iter(lens.values()))
    if n == 0:
        raise ValueError("no samples: the arrays are empty")
    return out


# -- noise estimation ------------------------------------------------------------------------------
def estimate_noise(y, gaps=None) -> float:
    """Variance of the white noise on a signal that is smooth at the sampling rate.

    From the MAD of its third-order difference (variance 20 σ² for white noise; see the module
    docstring).

    Parameters
    ----------
    y : (N,) array_like
        The uniformly sampled signal (N ≥ 8), in its own unit (e.g. m/s or m/s²).
    gaps : (N − 1,) bool array_like, optional
        True where samples are missing between ``y[k]`` and ``y[k+1]`` (a lost message); the
        differences spanning such a step are left out (across a gap the signal's own change is not
        "smooth at the sampling rate"). None: no gaps.

    Returns
    -------
    float
        The noise variance σ², in the square of y's unit.

    Raises
    ------
    ValueError
        With fewer than 8 samples, a ``gaps`` of the wrong shape, or fewer than 5 third
        differences left without a gap.
    """
    y = np.asarray(y, dtype=float)
    if y.size < 8:
        raise ValueError("estimate_noise: needs at least 8 samples")
    d3 = y[3:] - 3.0 * y[2:-1] + 3.0 * y[1:-2] - y[:-3]
    if gaps is not None:
        gaps = np.asarray(gaps, dtype=bool)
        if gaps.shape != (y.size - 1,):
            raise ValueError(f"gaps: expected {y.size - 1} steps, got shape {gaps.shape}")
        d3 = d3[~(gaps[:-2] | gaps[1:-1] | gaps[2:])]  # window k spans steps k, k+1, k+2
        if d3.size < 5:
            raise ValueError("estimate_noise: fewer than 5 third differences without a gap")
    mad = float(np.median(np.abs(d3 - np.median(d3))))
    sigma = mad / 0.6744897501960817 / math.sqrt(20.0)
    return sigma * sigma


# -- the regression --------------------------------------------------------------------------------
def _design(v, a, dv):
    pos = v > dv
    neg = v < -dv
    keep = pos | neg
    vk, ak = v[keep], a[keep]
    pk, nk = pos[keep], neg[keep]
    X = np.empty((vk.size, 5))
    X[:, 0] = ak
    X[:, 1] = pk
    X[:, 2] = np.where(pk, vk, 0.0)
    X[:, 3] = -nk.astype(float)
    X[:, 4] = np.where(nk, vk, 0.0)
    return X, keep, int(pk.sum()), int(nk.sum())


def _check_sides(n_pos, n_neg, dv, n_total, n_moving):
    if n_moving == 0:
        raise ValueError("stuck the whole time: no sample has a non-zero velocity, so neither "
                         "friction nor mass can be identified; use a larger excitation")
    if n_pos == 0 and n_neg == 0:
        raise ValueError(f"stuck the whole time: no sample is outside the band |v| <= dv = "
                         f"{dv:.4g} m/s; use a larger excitation (or a smaller dv)")
    if n_neg == 0:
        raise ValueError(f"only positive velocities (none below -dv = {-dv:.4g} m/s): Cn and bn "
                         f"cannot be identified; excite both directions")
    if n_pos == 0:
        raise ValueError(f"only negative velocities (none above dv = {dv:.4g} m/s): Cp and bp "
                         f"cannot be identified; excite both directions")
    for side, k in (("positive", n_pos), ("negative", n_neg)):
        if k < MIN_SAMPLES_PER_SIGN:
            raise ValueError(f"too few samples with {side} velocity beyond dv = {dv:.4g} m/s: {k} "
                             f"< {MIN_SAMPLES_PER_SIGN} (MIN_SAMPLES_PER_SIGN); record longer")


def _cond(XtX):
    d = np.sqrt(np.diag(XtX))
    if np.any(d == 0.0):
        return math.inf
    S = XtX / np.outer(d, d)
    w = np.linalg.eigvalsh(S)
    if w[0] <= 0.0:
        return math.inf
    return float(math.sqrt(w[-1] / w[0]))


def _solve(X, F, method, s_a, s_v, n_pos, n_neg):
    N = X.shape[0]
    XtX = X.T @ X
    XtF = X.T @ F
    cond = _cond(XtX)
    if not cond <= COND_LIMIT:
        names = []
        d = np.diag(XtX)
        if d[0] == 0.0:
            names.append("the acceleration is identically zero (mass)")
        for i, nm in ((2, "bp"), (4, "bn")):
            col = X[:, i][X[:, i - 1] != 0.0]
            if col.size and np.ptp(col) == 0.0:
                names.append(f"one speed only on the {nm} side ({nm})")
        why = "; ".join(names) if names else "the regressors are nearly collinear"
        raise ValueError(f"ill-conditioned design matrix: condition number {cond:.3g} > "
                         f"COND_LIMIT = {COND_LIMIT:.0g} ({why}); vary speed and acceleration "
                         f"(a sinusoidal excitation does)")
    k = 5
    if method == "ols":
        beta = np.linalg.solve(XtX, XtF)
        r = F - X @ beta
        s2 = float(r @ r) / (N - k)
        cov = s2 * np.linalg.inv(XtX)
        return beta, cov, cond, math.sqrt(s2)
    Suu = np.diag([s_a, 0.0, s_v * n_pos / N, 0.0, s_v * n_neg / N])
    M = XtX / N - Suu
    w = np.linalg.eigvalsh(M)
    if w[0] <= 0.0:
        raise ValueError("noise: the given/estimated noise variances exceed the regressors' "
                         "spread (N⁻¹XᵀX − S_uu is not positive definite); check noise=")
    beta = np.linalg.solve(M, XtF / N)
    r = F - X @ beta
    svv = float(r @ r) / (N - k)
    Minv = np.linalg.inv(M)
    Suv = -Suu @ beta
    cov = (Minv * svv + Minv @ (Suu * svv + np.outer(Suv, Suv)) @ Minv) / N
    return beta, cov, cond, math.sqrt(svv)


def _auto_dv(v, a, F, method, s_a, s_v):
    """Δv: the smallest band containing the static-to-kinetic transition (module docstring)."""
    vmax = float(np.max(np.abs(v)))
    lim = 0.25 * vmax
    X, keep, n_pos, n_neg = _design(v, a, lim)
    _check_sides(n_pos, n_neg, lim, v.size, int(np.count_nonzero(v)))
    beta, _, _, s = _solve(X, F[keep], "ols", s_a, s_v, n_pos, n_neg)
    dv = 0.0
    for sgn in (1.0, -1.0):
        sel = (sgn * v > 0.0) & (sgn * v <= lim)
        if sel.sum() < 20:
            continue
        vs, as_, fs = v[sel], a[sel], F[sel]
        kin = beta[1] + beta[2] * vs if sgn > 0 else -beta[3] + beta[4] * vs
        r = fs - beta[0] * as_ - kin
        order = np.argsort(np.abs(vs))
        r, av = r[order], np.abs(vs)[order]
        nb = max(20, r.size // 40)
        nbins = r.size // nb
        if nbins == 0:
            continue
        rb = np.median(r[: nbins * nb].reshape(nbins, nb), axis=1)
        se = 1.2533 * s / math.sqrt(nb)  # standard error of a median of nb normal samples
        sig = np.nonzero(np.abs(rb) > 3.0 * se)[0]
        if sig.size:
            j = int(sig[-1]) + 1  # one more bin: the transition's tail is below detection
            dv = max(dv, float(av[min((j + 1) * nb, av.size) - 1]))
    if dv == 0.0:
        nz = np.abs(v[v != 0.0])
        dv = max(3.0 * math.sqrt(s_v), float(nz.min()) if nz.size else 0.0)
        dv = max(dv, 1e-12)
    return dv


def _static_levels(v, a, F, m, dv):
    """Dp, Dn and their std from the breakaway peaks of the stuck-band episodes."""
    band = np.abs(v) <= dv
    f = F - m * a
    if f.size >= 3:
        fs = np.convolve(f, np.ones(3) / 3.0, mode="same")
        fs[0], fs[-1] = f[0], f[-1]
    else:
        fs = f
    db = np.diff(band.astype(np.int8))
    starts = np.nonzero(db == 1)[0] + 1
    ends = np.nonzero(db == -1)[0] + 1  # first index after the episode
    if band[0]:
        starts = np.r_[0, starts]
    if band[-1]:
        ends = np.r_[ends, band.size]
    peaks_p, peaks_n = [], []
    for s, e in zip(starts, ends):
        if e >= band.size:
            continue  # the record ends inside the band: no breakaway seen
        seg = fs[s:e]
        if v[e] > dv:
            peaks_p.append(float(seg.max()))
        elif v[e] < -dv:
            peaks_n.append(float(seg.min()))

    def level(p):
        if not p:
            return math.nan, math.nan
        p = np.asarray(p)
        sd = float(np.std(p, ddof=1) / math.sqrt(p.size)) if p.size > 1 else math.nan
        return float(np.median(p)), sd

    return level(peaks_p), level(peaks_n)


def fit_friction(x, v, a, force, dv: Optional[float] = None, method: str = "eiv",
                 noise: Optional[dict] = None, gaps=None) -> FrictionFit:
    """Identify mass and asymmetric Karnopp friction from one record (paper 003, eqs. 2–6).

    The inputs are 1-D arrays of one length, uniformly sampled (the regression itself needs no
    uniform sampling; the noise estimates do).

    Parameters
    ----------
    x : (N,) array_like
        Position, m (checked, not used by the regression).
    v : (N,) array_like
        Velocity, m/s.
    a : (N,) array_like
        Acceleration, m/s².
    force : (N,) array_like
        Applied force, N, positive pushing the object forward.
    dv : float, optional
        The band |v| <= dv binned out, m/s (≥ 0). None: chosen automatically (module docstring).
    method : {"eiv", "ols"}, optional
        ``"eiv"`` (Fuller, eq. 6; default) or ``"ols"`` (eq. 5).
    noise : dict, optional
        The measurement-noise *variances* ``accel`` ((m/s²)²) and ``vel`` ((m/s)²) for the EIV
        correction; a missing entry is estimated from the data (:func:`estimate_noise`).
    gaps : (N − 1,) bool array_like, optional
        True where samples are missing between two rows (lost messages); the noise estimates
        leave the differences across them out (:func:`estimate_noise`).

    Returns
    -------
    FrictionFit
        m (kg), Cp, Cn, Dp, Dn (N), bp, bn (N s/m), dv (m/s), their standard deviations and the
        regression's diagnostics.

    Raises
    ------
    ValueError
        Naming the problem when the data cannot identify the model (or an argument is invalid).
    """
    if method not in ("eiv", "ols"):
        raise ValueError(f"method: expected 'eiv' or 'ols', got {method!r}")
    arrs = _arrays(x=x, v=v, a=a, force=force)
    v, a, F = arrs["v"], arrs["a"], arrs["force"]
    noise = dict(noise or {})
    unknown = set(noise) - {"accel", "vel"}
    if unknown:
        raise ValueError(f"noise: unknown keys {sorted(unknown)}; expected 'accel', 'vel'")
    s_a = noise.get("accel")
    s_v = noise.get("vel")
    for name, val in (("accel", s_a), ("vel", s_v)):
        if val is not None and not (math.isfinite(val) and val >= 0.0):
            raise ValueError(f"noise: {name} must be a finite variance >= 0, got {val!r}")
    if v.size < 8:
        raise ValueError(f"too few samples: {v.size}; need at least 2·MIN_SAMPLES_PER_SIGN = "
                         f"{2 * MIN_SAMPLES_PER_SIGN} outside the band")
    if s_a is None:
        s_a = estimate_noise(a, gaps)
    if s_v is None:
        s_v = estimate_noise(v, gaps)
    if not np.any(v != 0.0):
        _check_sides(0, 0, 0.0, v.size, 0)
    if dv is None:
        dv = _auto_dv(v, a, F, method, s_a, s_v)
    else:
        if not (math.isfinite(dv) and dv >= 0.0):
            raise ValueError(f"dv: must be a finite velocity >= 0, got {dv!r}")
    X, keep, n_pos, n_neg = _design(v, a, dv)
    _check_sides(n_pos, n_neg, dv, v.size, int(np.count_nonzero(v)))
    beta, cov, cond, s = _solve(X, F[keep], method, s_a if method == "eiv" else 0.0,
                                s_v if method == "eiv" else 0.0, n_pos, n_neg)
    sd = np.sqrt(np.maximum(np.diag(cov), 0.0))
    (Dp, sDp), (Dn, sDn) = _static_levels(v, a, F, float(beta[0]), dv)
    std = {k: float(sd[i]) for i, k in enumerate(PARAMS)}
    std.update(Dp=sDp, Dn=sDn)
    return FrictionFit(m=float(beta[0]), Cp=float(beta[1]), bp=float(beta[2]), Cn=float(beta[3]),
                       bn=float(beta[4]), Dp=Dp, Dn=Dn, dv=float(dv), std=std, method=method,
                       cond=cond, n_used=int(keep.sum()), n_pos=n_pos, n_neg=n_neg,
                       noise=dict(accel=float(s_a), vel=float(s_v)), residual_std=s)


# -- excitation ------------------------------------------------------------------------------------
@dataclass
class Excitation:
    """A position trajectory: times ``t`` (s, from dt), setpoints ``x`` (m) and the boolean
    ``record`` mask (True after the warm-up)."""

    t: np.ndarray
    x: np.ndarray
    record: np.ndarray
    amplitude: float
    frequency: float
    center: float


def excitation(amplitude: float = 0.01, frequency: float = 2.0, duration: Optional[float] = None,
               cycles: Optional[float] = None, warmup: float = 10.0, dt: float = 1e-3,
               center: float = 0.0, x_min: float = -0.016, x_max: float = 0.016,
               ramp: float = 0.5) -> Excitation:
    """The paper's excitation: a sinusoid ``center + A sin(2π f t)`` after a warm-up.

    Run for ``warmup`` seconds (amplitude ramped up linearly over the first ``ramp`` seconds so the
    servo starts gently), then recorded for ``duration`` seconds or ``cycles`` periods (default
    2 s: the paper's 2 Hz, 0.01 m, four cycles, seven reversals).

    Parameters
    ----------
    amplitude : float, optional
        Amplitude A, m (> 0).
    frequency : float, optional
        Frequency f, Hz (> 0).
    duration : float, optional
        Recorded time after the warm-up, s (> 0). Give this or ``cycles``, not both; default 2 s.
    cycles : float, optional
        Recorded periods after the warm-up (> 0), instead of ``duration``.
    warmup : float, optional
        Warm-up time before recording, s (≥ 0).
    dt : float, optional
        Sample period, s (> 0).
    center : float, optional
        Centre of the stroke, m.
    x_min : float, optional
        Lower end of the travel, m.
    x_max : float, optional
        Upper end of the travel, m (> ``x_min``).
    ramp : float, optional
        Time over which the amplitude ramps up from 0, s (≤ 0: no ramp).

    Returns
    -------
    Excitation
        Times ``t`` (s, ``dt`` to the end), setpoints ``x`` (m) and the ``record`` mask, each of
        shape (round(warmup/dt) + round(duration/dt),).

    Raises
    ------
    ValueError
        When the stroke leaves the travel ``[x_min, x_max]`` or a value is not positive.
    """
    for name, val in (("amplitude", amplitude), ("frequency", frequency), ("dt", dt)):
        if not (math.isfinite(val) and val > 0.0):
            raise ValueError(f"{name}: must be > 0, got {val!r}")
    if not (math.isfinite(warmup) and warmup >= 0.0):
        raise ValueError(f"warmup: must be >= 0, got {warmup!r}")
    if duration is not None and cycles is not None:
        raise ValueError("duration, cycles: give one, not both")
    if cycles is not None:
        if not cycles > 0:
            raise ValueError(f"cycles: must be > 0, got {cycles!r}")
        duration = cycles / frequency
    if duration is None:
        duration = 2.0
    if not (math.isfinite(duration) and duration > 0.0):
        raise ValueError(f"duration: must be > 0, got {duration!r}")
    if not x_min < x_max:
        raise ValueError(f"x_min: must be < x_max, got {x_min!r} >= {x_max!r}")
    if center - amplitude < x_min or center + amplitude > x_max:
        raise ValueError(f"amplitude: the stroke [{center - amplitude:.4g}, "
                         f"{center + amplitude:.4g}] m leaves the travel [{x_min:.4g}, "
                         f"{x_max:.4g}] m")
    n_w = int(round(warmup / dt))
    n_r = int(round(duration / dt))
    t = np.arange(1, n_w + n_r + 1) * dt
    env = np.ones_like(t) if ramp <= 0 else np.clip(t / ramp, 0.0, 1.0)
    x = center + amplitude * env * np.sin(2.0 * math.pi * frequency * t)
    record = np.zeros(t.size, dtype=bool)
    record[n_w:] = True
    return Excitation(t, x, record, float(amplitude), float(frequency), float(center))


# -- differentiation and accelerometer calibration ------------------------------------------------
def central_difference(v, dt: float) -> np.ndarray:
    """Derivative of ``v`` by the 4-point central difference (fourth order).

    ``(v[k−2] − 8 v[k−1] + 8 v[k+1] − v[k+2]) / (12 dt)``; the two samples at each end use
    second-order differences (``numpy.gradient``).

    Parameters
    ----------
    v : (N,) array_like
        Uniformly sampled signal (N ≥ 5), e.g. velocity in m/s.
    dt : float
        Sample period, s (> 0).

    Returns
    -------
    (N,) ndarray
        dv/dt, in v's unit per second (m/s² for a velocity).

    Raises
    ------
    ValueError
        If ``dt`` is not positive or ``v`` is not 1-D with at least 5 samples.
    """
    v = np.asarray(v, dtype=float)
    if not (math.isfinite(dt) and dt > 0):
        raise ValueError(f"dt: must be > 0, got {dt!r}")
    if v.ndim != 1 or v.size < 5:
        raise ValueError("v: needs a 1-D array of at least 5 samples")
    out = np.gradient(v, dt, edge_order=2)
    out[2:-2] = (v[:-4] - 8.0 * v[1:-3] + 8.0 * v[3:-1] - v[4:]) / (12.0 * dt)
    return out


@dataclass(frozen=True)
class AccelCalibration:
    """Accelerometer correction ``a = scale · a_meas + offset``."""

    scale: float
    offset: float

    def apply(self, a_meas) -> np.ndarray:
        return self.scale * np.asarray(a_meas, dtype=float) + self.offset


def calibrate_accelerometer(a_meas, v, dt: float) -> AccelCalibration:
    """The paper's per-run accelerometer scale and offset.

    Least squares of ``central_difference(v, dt) ≈ scale · a_meas + offset`` (drops 2 samples at
    each end).

    Parameters
    ----------
    a_meas : (N,) array_like
        Measured acceleration, in the accelerometer's unit (nominally m/s²).
    v : (N,) array_like
        Velocity at the same samples, m/s.
    dt : float
        Sample period, s (> 0).

    Returns
    -------
    AccelCalibration
        ``scale`` and ``offset`` (m/s²) of ``a = scale · a_meas + offset``.

    Raises
    ------
    ValueError
        If ``a_meas`` is constant, or the arrays are empty, of different lengths or not finite.
    """
    arrs = _arrays(a_meas=a_meas, v=v)
    a_meas, v = arrs["a_meas"], arrs["v"]
    ad = central_difference(v, dt)[2:-2]
    am = a_meas[2:-2]
    if np.ptp(am) == 0.0:
        raise ValueError("a_meas: constant; the scale cannot be fitted")
    A = np.column_stack([am, np.ones_like(am)])
    (scale, offset), *_ = np.linalg.lstsq(A, ad, rcond=None)
    return AccelCalibration(float(scale), float(offset))
