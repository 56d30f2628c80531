"""Change detection over a fleet's friction levels (issue 26 item 2).

Each robot's joint gives a series of a level over time — ``coulomb = (Cp + Cn)/2`` or
``viscous = (bp + bn)/2`` (:mod:`.table`), one value ``y_i ± s_i`` per recording at day ``t_i``.
Friction that wears (a gear losing lubricant, a seal hardening) drifts; a repair or a swapped
drive shifts it. :func:`detect_changes` asks of every series whether it is constant, against
alternatives of one extra parameter each:

* **a trend**: ``y = a + b·max(0, t − τ)`` — growth from an onset ``τ`` at one of the series'
  recordings (``τ`` = the first: a plain linear trend; a later onset needs :data:`MIN_SIDE`
  recordings up to it and after it);
* **a level shift**: ``y = a + c·[t ≥ τ]`` at a recording, :data:`MIN_SIDE` recordings on each
  side.

Each alternative is a weighted least-squares fit with weights ``1/s_i²``.

**The scale.** A recording's std comes from that recording's residuals. It misses what varies
from day to day (temperature, the load), and it counts as noise what repeats every day (the
friction law's misfit along the same diagnostic motion): on the simulated fleet the levels
scatter by 0.2–1.2 × their stds, differently for each robot. So every series gets its own scale
``σ_g`` (the residual scatter in units of the stds), estimated by empirical Bayes as in the
*moderated t-statistic* (G. K. Smyth, "Linear models and empirical Bayes methods for assessing
differential expression in microarray experiments", Stat. Appl. Genet. Mol. Biol. 3(1), 2004):

* each series' linear-trend residual variance ``s_g² = RSS_g/d_g`` (``d_g = n_g − 2``);
* a prior ``σ_g² ~ d0·s0²/χ²(d0)``: ``s0²`` per joint (the fleet's typical scale of that joint)
  and ``d0`` (how alike the robots are) from the moments of ``log s_g²`` across the fleet
  (Smyth's eqs. (16)–(18), ψ and ψ' the digamma and trigamma functions);
* for every alternative ``k`` of a series, its own residual ``RSS_k`` shrunk toward the prior,
  ``s̃_k² = (d0·s0² + RSS_k)/(d0 + d)``, and ``t_k = b_k/(s̃_k·√c_k)``, which under a constant
  series follows Student's t with ``d0 + d`` degrees of freedom (normal when the robots are
  alike, ``d0 = ∞``).

A series that scatters more than its stds say (a joint whose effort-lag estimate flips between
days) keeps its wide scale and is not flagged for it; a series that scatters less is as sensitive
as its data allow.

**False alarms.** With ``m`` alternatives tested over the fleet (every series of every watched
level), a series is flagged when one of its p-values ``2·P(T > |t_k|)`` is below ``α/m``
(Bonferroni): the probability of any false alarm in a fleet where nothing changed is at most
``α`` (:data:`DEFAULT_ALPHA` = 1 % per run), provided the levels' errors are Gaussian with the
per-series scale the prior describes. In stds: ``z* = Φ⁻¹(1 − α/(2m))`` (4.7 for 10 robots × 7
joints × 20 days of one level: 2170 alternatives), a little more for few degrees of freedom. The
alternatives of one series are correlated, so the bound is conservative.

A flagged series is reported with its best alternative (the smallest p-value): the robot, the
joint, the size of the change since its onset relative to the level before it (its std by the
delta method on ``(a, b)`` with the scale ``s̃``, given the onset), since when, and the onsets
the data cannot tell from it (:data:`ONSET_CHI2`) — e.g. ``robot r07 joint_a3: Coulomb +31 % ±
2 % over 14 days (trend since 2026-11-07, onset between 2026-11-06 and 2026-11-08 …)``.
"""

from __future__ import annotations

import datetime as _dt
import math
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

__all__ = ["Finding", "SeriesTest", "Detection", "detect_changes", "DEFAULT_ALPHA",
           "MIN_POINTS", "MIN_SIDE", "ONSET_CHI2", "QUANTITY_NAMES"]

#: Family-wise false-alarm probability per run (Bonferroni over the fleet's tests).
DEFAULT_ALPHA = 0.01
#: Fewest recordings of a series for it to be tested.
MIN_POINTS = 6
#: Fewest recordings on each side of a level shift, and up to and after a later trend onset.
MIN_SIDE = 3
#: A finding's onset range: the onsets whose residual sum is within this many s̃² of the
#: best one's (χ²₁'s 95 % quantile: a profile-likelihood interval of the onset).
ONSET_CHI2 = 3.841
#: The levels' names in sentences.
QUANTITY_NAMES = {"coulomb": "Coulomb", "viscous": "viscous"}
_DAY = 86400.0


@dataclass(frozen=True)
class Finding:
    """A flagged series: ``kind`` ``"trend"`` or ``"shift"``; ``since``: the onset (the
    recording a trend grows from, or the first after a shift; UTC); ``until``: the last
    recording; ``days`` between them; ``before``: the level up to the onset, ``after``: the
    fitted level at ``until`` (in ``unit``); ``change`` ± ``change_std``: their difference;
    ``relative`` ± ``relative_std``: the change over ``before`` (NaN when ``before`` is not
    clearly above 0); ``per_day`` ± ``per_day_std``: a trend's slope over ``before`` [1/day]
    (NaN for a shift); ``t``, its degrees of freedom ``dof`` (inf: normal), ``p`` and the
    threshold ``p_threshold`` = α/m; ``scale``: the series' scale s̃ (× the recordings'
    stds); ``onset_earliest``, ``onset_latest``: the onsets of the same kind the data do not
    tell from ``since`` (:data:`ONSET_CHI2`; the sizes are those of the onset ``since``)."""

    robot: str
    joint: str
    quantity: str
    kind: str
    since: _dt.datetime
    until: _dt.datetime
    days: float
    before: float
    after: float
    change: float
    change_std: float
    relative: float
    relative_std: float
    per_day: float
    per_day_std: float
    t: float
    dof: float
    p: float
    p_threshold: float
    scale: float
    unit: str = "N·m"
    onset_earliest: Optional[_dt.datetime] = None
    onset_latest: Optional[_dt.datetime] = None

    def sentence(self) -> str:
        """The finding in one line, e.g. ``robot r07 joint_a3: Coulomb +31 % ± 2 % over 14
        days (trend since 2026-11-07, onset between 2026-11-06 and 2026-11-08: 0.2 → 0.262 N·m;
        t = 16.7, p = 1e-14 < 5e-06)``."""
        q = QUANTITY_NAMES.get(self.quantity, self.quantity)
        if math.isfinite(self.relative):
            size = f"{100 * self.relative:+.0f} % ± {100 * self.relative_std:.0f} %"
        else:
            size = f"{self.change:+.3g} ± {self.change_std:.2g} {self.unit}"
        if self.kind == "trend":
            what = (f"{q} {size} over {self.days:.0f} days (trend since "
                    f"{self.since.date().isoformat()}")
        else:
            what = f"{q} level shift {size} (on {self.since.date().isoformat()}"
        lo, hi = self.onset_earliest, self.onset_latest
        if lo is not None and hi is not None and lo.date() != hi.date():
            what += f", onset between {lo.date().isoformat()} and {hi.date().isoformat()}"
        return (f"robot {self.robot} {self.joint}: {what}: {self.before:.3g} → {self.after:.3g} "
                f"{self.unit}; t = {self.t:.1f}, p = {self.p:.1g} < {self.p_threshold:.1g})")


@dataclass(frozen=True)
class SeriesTest:
    """One series' test: its size ``n``, number of alternatives ``tests``, its best alternative
    (``kind``, onset ``since``, ``t``, ``p``), whether it was flagged, its moderated scale
    ``scale``, and the smallest linear trend over its span it could have shown,
    ``detectable_per_day`` (``z*·s̃·std(b)/|mean level|``, 1/day)."""

    robot: str
    joint: str
    quantity: str
    n: int
    tests: int
    kind: str
    since: Optional[_dt.datetime]
    t: float
    p: float
    flagged: bool
    scale: float
    detectable_per_day: float


@dataclass
class Detection:
    """What :func:`detect_changes` found: ``findings`` (flagged series, smallest p first),
    every ``series`` tested, ``skipped`` ones (robot, joint, quantity, why), the prior per
    (joint, quantity): ``prior_scale`` s0 and ``prior_dof`` d0 (inf: the robots alike),
    ``alpha``, the number of ``tests`` (alternatives over the fleet), ``p_threshold`` = α/m and
    its normal equivalent ``z_threshold``."""

    findings: List[Finding]
    series: List[SeriesTest]
    skipped: List[Tuple[str, str, str, str]]
    prior_scale: Dict[Tuple[str, str], float]
    prior_dof: Dict[str, float]
    alpha: float
    tests: int
    p_threshold: float
    z_threshold: float
    notes: List[str] = field(default_factory=list)


@dataclass
class _Series:
    t: np.ndarray  # days since the fleet's first recording, increasing
    y: np.ndarray
    s: np.ndarray
    stamps: list
    unit: str


def _alternatives(t: np.ndarray, min_side: int) -> List[Tuple[str, int, np.ndarray]]:
    """(kind, onset index, regressor) of every alternative of a series at days ``t``."""
    n = t.size
    out = []
    for k in range(n):
        if int(np.sum(t > t[k])) < min_side:
            break
        if k == 0 or k + 1 >= min_side:
            out.append(("trend", k, np.maximum(0.0, t - t[k])))
    for k in range(min_side, n - min_side + 1):
        out.append(("shift", k, (t >= t[k]).astype(float)))
    return [a for a in out if np.ptp(a[2]) > 0]


def _fit(x: np.ndarray, y: np.ndarray, w: np.ndarray):
    """β, (XᵀWX)⁻¹ and the weighted RSS of ``y = β0 + β1·x``."""
    X = np.column_stack([np.ones_like(x), x])
    cov = np.linalg.inv(X.T @ (w[:, None] * X))
    beta = cov @ (X.T @ (w * y))
    r = y - X @ beta
    return beta, cov, float(np.sum(w * r * r))


def _prior(var: Dict[Tuple[str, str, str], Tuple[float, int]], quantity: str, notes: List[str]):
    """Smyth (2004)'s prior from the series' residual variances of one level: ``d0`` (over
    the fleet) and ``s0²`` per joint. ``var``: series → (s_g², d_g)."""
    from scipy.special import digamma, polygamma

    items = [(key[1], v, d) for key, (v, d) in var.items() if key[2] == quantity and d > 0]
    if not items:
        return math.inf, {}
    e = {}
    for joint, v, d in items:
        e.setdefault(joint, []).append(math.log(max(v, 1e-300)) - digamma(d / 2)
                                       + math.log(d / 2))
    mean = {j: float(np.mean(x)) for j, x in e.items()}
    dev = [x - mean[j] for j, xs in e.items() for x in xs]
    groups = len(e)
    trig = float(np.mean([polygamma(1, d / 2) for _, _, d in items]))
    V = (sum(x * x for x in dev) / (len(dev) - groups) - trig) if len(dev) > groups else 0.0
    if V > 0:
        d0 = _trigamma_inverse(V) * 2.0
        s0 = {j: math.exp(m + digamma(d0 / 2) - math.log(d0 / 2)) for j, m in mean.items()}
    else:
        d0 = math.inf
        s0 = {j: math.exp(m) for j, m in mean.items()}
        if len(dev) <= groups:
            notes.append(f"{quantity}: one series per joint: each joint's scale is its own "
                         "series' (no fleet to compare with)")
    return d0, {j: math.sqrt(x) for j, x in s0.items()}


def _trigamma_inverse(x: float) -> float:
    """y with ψ'(y) = x (Newton's iteration on 1/ψ', as Smyth's limma does)."""
    from scipy.special import polygamma

    if x > 1e7:
        return 1.0 / math.sqrt(x)
    if x < 1e-6:
        return 1.0 / x
    y = 0.5 + 1.0 / x
    for _ in range(50):
        tri = float(polygamma(1, y))
        step = tri * (1.0 - tri / x) / float(polygamma(2, y))
        y += step
        if -step / y < 1e-8:
            break
    return y


def detect_changes(rows: Sequence[dict], quantities: Sequence[str] = ("coulomb",),
                   alpha: float = DEFAULT_ALPHA, min_points: int = MIN_POINTS,
                   min_side: int = MIN_SIDE) -> Detection:
    """Flag the series of the fleet whose level changed (module docstring).

    Parameters
    ----------
    rows : sequence of dict
        The fleet table's rows: ``robot``, ``joint``, ``time`` (an aware datetime), and for each
        quantity ``q`` its value ``q`` and std ``q_std`` (``unit`` optional).
    quantities : sequence of str
        The levels to watch (``"coulomb"``, ``"viscous"``).
    alpha : float
        Family-wise false-alarm probability, in (0, 1).
    min_points : int
        Fewest recordings of a series to test it.
    min_side : int
        Fewest recordings on each side of an onset (≥ 2).

    Returns
    -------
    Detection
        Findings, every series' test, the prior, the threshold.

    Raises
    ------
    ValueError
        For ``alpha`` outside (0, 1), ``min_side`` < 2 or ``min_points`` < 2·``min_side``.
    """
    from scipy.stats import norm
    from scipy.stats import t as student

    if not (0.0 < alpha < 1.0):
        raise ValueError(f"alpha: expected a probability in (0, 1), got {alpha!r}")
    if min_side < 2 or min_points < 2 * min_side:
        raise ValueError(f"min_side, min_points: expected min_side >= 2 and min_points >= "
                         f"2·min_side, got {min_side}, {min_points}")
    data, skipped = _series(rows, quantities, min_points)
    notes: List[str] = []
    var = {}
    for key, sr in data.items():
        _, _, rss = _fit(sr.t, sr.y, 1.0 / sr.s ** 2)
        var[key] = (rss / (sr.t.size - 2), sr.t.size - 2)
    prior_dof, prior_scale = {}, {}
    for q in quantities:
        d0, s0 = _prior(var, q, notes)
        prior_dof[q] = d0
        prior_scale.update({(j, q): x for j, x in s0.items()})
    alts = {key: _alternatives(sr.t, min_side) for key, sr in data.items()}
    m = sum(len(a) for a in alts.values())
    p_thr = alpha / m if m else 0.0
    z_thr = float(norm.isf(p_thr / 2)) if m else math.inf
    findings: List[Finding] = []
    tests: List[SeriesTest] = []
    for key, sr in data.items():
        robot, joint, q = key
        d0, s0 = prior_dof[q], prior_scale[(joint, q)]
        w = 1.0 / sr.s ** 2
        d = sr.t.size - 2
        dof = d0 + d

        def moderated(rss: float) -> float:
            return s0 if math.isinf(d0) else math.sqrt((d0 * s0 ** 2 + rss) / dof)

        best, fits = None, []
        for kind, k, x in alts[key]:
            beta, cov, rss = _fit(x, sr.y, w)
            fits.append((kind, k, rss))
            sc = moderated(rss)
            tk = beta[1] / (sc * math.sqrt(cov[1, 1]))
            p = 2.0 * float(norm.sf(abs(tk)) if math.isinf(dof) else student.sf(abs(tk), dof))
            if best is None or p < best[0]:
                best = (p, tk, kind, k, beta, cov * sc ** 2, sc, rss)
        beta0, cov0, rss0 = _fit(sr.t, sr.y, w)
        sc0 = moderated(rss0)
        mean = float(np.average(sr.y, weights=w))
        detectable = (z_thr * sc0 * math.sqrt(cov0[1, 1]) / abs(mean)) if mean else math.inf
        if best is None:
            tests.append(SeriesTest(robot, joint, q, sr.t.size, 0, "", None, math.nan, math.nan,
                                    False, sc0, detectable))
            skipped.append((*key, "no alternative with enough recordings on each side"))
            continue
        p, tk, kind, k, beta, cov, sc, rss_best = best
        flagged = p < p_thr
        tests.append(SeriesTest(robot, joint, q, sr.t.size, len(alts[key]), kind, sr.stamps[k],
                                float(tk), p, flagged, sc0, detectable))
        if flagged:
            # the onsets of the same kind the data cannot tell from the best (profile
            # likelihood, 95 %: the residual sum within χ²₁(0.95)·s̃² of the best one's)
            near = [kk for kd, kk, r in fits
                    if kd == kind and r - rss_best <= ONSET_CHI2 * sc ** 2]
            findings.append(_finding(key, kind, k, sr, beta, cov, tk, dof, p, p_thr, sc,
                                     (sr.stamps[min(near)], sr.stamps[max(near)])))
    findings.sort(key=lambda f: f.p)
    return Detection(findings=findings, series=tests, skipped=skipped, prior_scale=prior_scale,
                     prior_dof=prior_dof, alpha=alpha, tests=m, p_threshold=p_thr,
                     z_threshold=z_thr, notes=notes)


def _series(rows, quantities, min_points):
    """Rows → series per (robot, joint, quantity) with enough finite values; the skipped."""
    times = [r["time"].timestamp() for r in rows if r.get("time") is not None]
    t_first = min(times) if times else 0.0
    points: Dict[Tuple[str, str, str], list] = {}
    units: Dict[Tuple[str, str], str] = {}
    for r in rows:
        if r.get("time") is None:
            continue
        units[(r["robot"], r["joint"])] = r.get("unit", "N·m")
        for q in quantities:
            points.setdefault((r["robot"], r["joint"], q), []).append(
                ((r["time"].timestamp() - t_first) / _DAY, float(r[q]), float(r[q + "_std"]),
                 r["time"]))
    data, skipped = {}, []
    for key, pts in points.items():
        ok = [p for p in pts if math.isfinite(p[1]) and math.isfinite(p[2]) and p[2] > 0]
        if len(ok) < len(pts):
            skipped.append((*key, f"{len(pts) - len(ok)} recording(s) left out: the level NaN, "
                                  "or held at a physical bound by the fit (std 0: Cp + Cn >= 0)"))
        if len(ok) < min_points:
            skipped.append((*key, f"{len(ok)} recording(s), fewer than {min_points}: not "
                                  "tested"))
            continue
        ok.sort(key=lambda p: p[0])
        t, y, s = (np.array([p[i] for p in ok]) for i in range(3))
        if np.ptp(t) <= 0:
            skipped.append((*key, "every recording at the same time: not tested"))
            continue
        data[key] = _Series(t, y, s, [p[3] for p in ok], units[key[:2]])
    return data, skipped


def _finding(key, kind, k, sr: _Series, beta, C, tk, dof, p, p_thr, scale,
             onsets) -> Finding:
    """The flagged series' best alternative as a :class:`Finding` (sizes by the delta method
    on (a, b) with the scaled covariance ``C``)."""
    robot, joint, q = key
    a, b = float(beta[0]), float(beta[1])
    L = float(sr.t[-1] - sr.t[k])
    if kind == "trend":
        change, dchange = b * L, np.array([0.0, L])
        if a:
            per_day = b / a
            g = np.array([-b / a ** 2, 1.0 / a])
            per_day_std = float(math.sqrt(max(g @ C @ g, 0.0)))
        else:
            per_day = per_day_std = math.nan
    else:
        change, dchange = b, np.array([0.0, 1.0])
        per_day = per_day_std = math.nan
    change_std = float(math.sqrt(max(dchange @ C @ dchange, 0.0)))
    if a > 3.0 * math.sqrt(C[0, 0]):
        rel = change / a
        g = np.array([-change / a ** 2, dchange[1] / a])
        rel_std = float(math.sqrt(max(g @ C @ g, 0.0)))
    else:
        rel = rel_std = math.nan
    return Finding(robot=robot, joint=joint, quantity=q, kind=kind, since=sr.stamps[k],
                   until=sr.stamps[-1], days=L, before=a, after=a + change, change=change,
                   change_std=change_std, relative=rel, relative_std=rel_std, per_day=per_day,
                   per_day_std=per_day_std, t=float(tk), dof=float(dof), p=float(p),
                   p_threshold=float(p_thr), scale=float(scale), unit=sr.unit,
                   onset_earliest=onsets[0], onset_latest=onsets[1])
