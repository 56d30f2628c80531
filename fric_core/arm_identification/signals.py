"""Velocity and acceleration of recorded joint positions, by zero-phase filtering (issue 15).

Paper 003 (Richard et al.) identifies friction from ``F = m a + F_friction`` with the velocity
and acceleration as regressors; an arm's recording (ros2_control's ``joint_states``) often has
positions only, or an unfiltered velocity, and never an acceleration. This module derives them.

* :func:`segments` — cut the record where the stamps jump (lost samples, a paused recorder) or
  go backwards; every segment is filtered on its own (a filter run across a gap rings).
* :func:`differentiate` — per segment, a zero-phase low-pass (Butterworth of order ``order`` at
  ``cutoff_hz``, run forwards and backwards: ``scipy.signal.sosfiltfilt``), then central
  differences of the filtered positions: ``v_k = (q_{k+1} − q_{k−1}) / 2dt``,
  ``a_k = (q_{k+1} − 2 q_k + q_{k−1}) / dt²``. Why Butterworth rather than Savitzky–Golay: its
  pass band is maximally flat — at f = cutoff/4 the forward-backward gain is
  ``1/(1 + 4^{−2·order}) = 1 − 1.5e−5`` for order 4 — so the arm's motion (a few Hz) passes
  unscaled, while a Savitzky–Golay window trades a drooping pass band against a slow stop band;
  and a cutoff in Hz is the same number for the effort filter. Forwards-backwards: zero phase,
  so v, a and the effort stay aligned in time (a causal filter delays v by its group delay and
  turns ``m·a`` into friction). Non-uniform stamps inside a segment (jitter, one lost sample)
  are interpolated onto a uniform grid before filtering and back afterwards.
* Noise variances (``var_v``, ``var_a``, for paper 003's errors-in-variables estimator eq. (6)):
  the positions' white-noise level σ_q² (encoder quantisation: Δ²/12 for resolution Δ when the
  joint moves several counts per sample) is estimated from k-th divided differences of the raw
  samples, which annihilate any polynomial of degree < k for any spacing, so what is left is
  noise, ``σ̂² = Σ d_i² / Σ_i Σ_j w_ij²`` (w: the divided-difference weights); the smallest of
  k = 2…6 (the motion leaks less into higher orders). It is then propagated through the linear
  filter-and-difference operator: ``var_v = σ̂² Σ_k h_v[k]²`` with h_v the operator's impulse
  response (likewise h_a). With a measured velocity (``prepare(..., v=...)``) the same applies
  one order lower when its noise is white (a sensor's own); when it is a difference of the
  encoder positions (ros2_control often publishes that: its noise has no power at low
  frequency, detected from the residual's autocorrelation, :data:`DIFFERENCED_SPECTRUM`) the
  variances are propagated from the positions' noise instead — as white noise they would be
  overstated ~20× in ``a``, and the EIV fit would over-correct.
* :func:`prepare` — a whole recording: segments, drop those too short, filter, trim each
  segment's ends where the filter's edge transient lives (:attr:`DerivativeFilter.edge`),
  concatenate. The effort is left **raw** by default (``filter_effort=False``). Filtering it
  with the same low-pass ("every column sees the same filter", Gautier's parallel filtering) is
  what a purely linear model wants, but friction is not linear in v: the model's Coulomb column
  is ``sign(v)`` of the filtered v, a sharp step exactly at the reversal (zero phase), while the
  filtered effort smears the Coulomb step over :attr:`DerivativeFilter.settle_time`; and the
  filtered effort's noise is correlated over ~1/cutoff, so the fit's ``σ̂²(AᵀA)⁻¹`` standard
  deviations, which assume independent residuals, come out several times too small. Measured on
  a simulated arm7 (multi-sine, 40 s at 500 Hz, 17-bit encoders, 0.03 N·m torque noise, EIV,
  2 seeds): raw effort — errors/std RMS 0.3–1.5 (honest stds), viscous errors ≤ 0.003 N·m·s/rad;
  filtered (20 Hz) — errors/std RMS 6–8 with Δv = |a|·settle_time (2.6–3.3 at Δv = 0.02),
  viscous errors 0.007–0.009. The rigid-body columns lose nothing either way: the excitation's
  band (≤ 1–2 Hz) is far below the cutoff (:func:`~.synthetic.simulate_arm_recording`, then
  :func:`prepare`, then :func:`~.fit.fit_arm_friction`; test_arm_signals.py checks it).

A recorded velocity's lag (:func:`estimate_velocity_lag`, used by :func:`prepare`). A drive's
velocity estimate is often low-passed or logged late (0.1–0.3 s on real arms); taken at its stamp
it turns inertia into friction and back. The lag is the least-squares one between the low-passed
recorded velocity and the zero-phase derivative of the positions (the peak of their normalised
cross-correlation, sub-sample by a parabola); a joint lagging by more than
:data:`VELOCITY_LAG_SAMPLES` sampling steps gets the positions' derivative instead, with a
warning naming it and the lag in ms (a backward difference ``Δq/dt``, half a step late, is
kept). test_arm_velocity_lag.py: delays of 0.1–0.3 s found to half a sample, a first-order
filter's between its phase delays, unlagged velocities not flagged.

Effort lag (``prepare(..., effort_lag=τ)``, :func:`estimate_effort_lag`). The fit relates the
effort at a stamp t to the zero-phase q, v, a at t. A *commanded* effort held over the step that
ends at its stamp (ros2_control's commanded effort; fric's ``transmission_sim`` publishes the
torque applied over the step that ended at the stamp) produced the step's mean acceleration
``(v_k − v_{k−1})/dt = q̈(t_k − dt/2) + O(dt²)``: it lags the states by half a step. Left in, the
inertial torque of a motion at ω carries ``M·q⃛·dt/2 = −M·ω²·(dt/2)·q̇``, an apparent viscosity
``M·ω²·dt/2`` (arm7 at 1 kHz: joint_a2's bp +0.033 N·m·s/rad, 28 std). A measured torque (a
joint torque sensor) has no such lag, so the lag is a property of the recording, not of the
method. It is undone on the states, not on the effort: q, v, a are evaluated at ``t − τ`` by
cubic interpolation of the low-passed signals (flat to ~(ω·dt)⁴ far below the cutoff); shifting
the raw effort instead would interpolate its white noise — half-way between two samples the
interpolated noise has half the variance and neighbouring residuals become correlated, which
would bias both the stds and the search below towards half-sample lags. The shift reads the
edge rows the trim drops anyway: no row is lost. ``estimate_effort_lag`` finds τ by least
squares: cheap least-squares fits of the model (paper 003 eq. (5)) on a subsample of rows at
:data:`LAG_GRID` lags over ``[0, 1.5]`` samples, the vertex of the parabola through the
smallest residual sum of squares and its neighbours, its std from that parabola's curvature;
used when ≥ :data:`LAG_SIGNIFICANCE` std (an insignificant estimate would only add its
scatter to the viscous terms it is nearly collinear with). test_arm_effort_lag.py checks it: a
held effort's lag is half a step and the viscous terms return to within 3 std of the truth;
an instantaneous effort gives an insignificant estimate and an unchanged fit.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field

import numpy as np
import scipy.signal

__all__ = ["segments", "differentiate", "prepare", "Derivatives", "PreparedData",
           "DerivativeFilter", "derivative_filter", "position_noise_variance",
           "lagged_states", "estimate_effort_lag", "EffortLagEstimate",
           "estimate_velocity_lag", "VelocityLag", "MAX_VELOCITY_LAG", "VELOCITY_LAG_SAMPLES",
           "MIN_VELOCITY_CORRELATION",
           "DEFAULT_CUTOFF_HZ", "DEFAULT_ORDER", "GAP_FACTOR", "EDGE_TOLERANCE",
           "DIFFERENCED_SPECTRUM", "MAX_AUTO_LAG_SAMPLES", "LAG_GRID", "LAG_ROWS",
           "LAG_SIGNIFICANCE"]

#: Default low-pass cutoff [Hz]: well above an excitation trajectory's band (harmonics up to
#: ~1–2 Hz, :mod:`.excitation`) so the motion passes unscaled (gain 1 − (f/fc)^8 ≈ 1 − 4e−11 at
#: 1 Hz), low enough that quantisation noise in ``a`` stays small (σ_a ≈ 0.02 rad/s² for a
#: 17-bit encoder at 1 kHz).
DEFAULT_CUTOFF_HZ = 20.0
#: Default Butterworth order (of each pass; forwards-backwards doubles it).
DEFAULT_ORDER = 4
#: A step longer than this many median steps is a gap (:func:`segments`).
GAP_FACTOR = 5.0
#: Edge trim: the samples at each end of a segment where the response of the forwards-backwards
#: filter to a unit step (the odd padding's jump in curvature) still deviates by more than this
#: (:attr:`DerivativeFilter.edge`): the derived ``a`` there is off by < 2e−3 × |a| at the end.
EDGE_TOLERANCE = 1e-3
_JITTER = 1e-3  # relative deviation of stamps from the uniform grid below which none is needed


def segments(t, max_gap: float | None = None) -> list[slice]:
    """Cut a record into runs of increasing stamps without gaps.

    Parameters
    ----------
    t : (N,) array_like
        Sample times [s].
    max_gap : float, optional
        Longest step [s] inside a segment. Default: :data:`GAP_FACTOR` × the median positive
        step.

    Returns
    -------
    list of slice
        Row slices, in order, covering every row: a new slice starts after every step longer
        than ``max_gap`` and at every stamp not later than the one before it.
    """
    t = np.asarray(t, dtype=float).ravel()
    if t.size < 2:
        return [slice(0, int(t.size))] if t.size else []
    steps = np.diff(t)
    if max_gap is None:
        pos = steps[steps > 0.0]
        max_gap = GAP_FACTOR * float(np.median(pos)) if pos.size else math.inf
    cut = np.flatnonzero((steps > max_gap) | ~(steps > 0.0)) + 1
    edges = np.concatenate(([0], cut, [t.size]))
    return [slice(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:])]


@dataclass(frozen=True)
class DerivativeFilter:
    """The zero-phase low-pass and its derived quantities at one sampling step.

    ``sos``: Butterworth second-order sections (one pass); ``dt`` [s]; ``edge``: samples trimmed
    at each segment end (:data:`EDGE_TOLERANCE`); ``min_length``: shortest segment filtered
    (``3·edge``: one edge-width survives the trim); ``gain_q``, ``gain_v``, ``gain_a``: white-noise
    variance gains ``Σ h²`` of the operators position → filtered position, → velocity [1/s²],
    → acceleration [1/s⁴] (interior samples); ``settle_time`` [s]: a step in the filtered
    effort (Coulomb friction at a velocity reversal) is within 1 % of its final value that long
    after the step (signed tail of the forwards-backwards impulse response).
    """

    sos: np.ndarray
    dt: float
    cutoff_hz: float
    order: int
    edge: int
    min_length: int
    gain_q: float
    gain_v: float
    gain_a: float
    settle_time: float

    def lowpass(self, x: np.ndarray) -> np.ndarray:
        """Zero-phase low-pass of ``x`` along axis 0 (forwards-backwards, odd padding)."""
        pad = min(3 * self.edge, x.shape[0] - 1)
        return scipy.signal.sosfiltfilt(self.sos, x, axis=0, padtype="odd", padlen=pad)

    def first(self, x: np.ndarray) -> np.ndarray:
        """Central first difference along axis 0 (one-sided at the ends), per second."""
        return np.gradient(x, self.dt, axis=0)

    def second(self, x: np.ndarray) -> np.ndarray:
        """Central second difference along axis 0 (the ends copy their neighbours), per s²."""
        out = np.empty_like(x)
        out[1:-1] = (x[2:] - 2.0 * x[1:-1] + x[:-2]) / self.dt ** 2
        out[0], out[-1] = out[1], out[-2]
        return out


def derivative_filter(dt: float, cutoff_hz: float | None = None,
                      order: int = DEFAULT_ORDER) -> DerivativeFilter:
    """The zero-phase derivative filter for one sampling step.

    Parameters
    ----------
    dt : float
        Sampling step [s] (> 0).
    cutoff_hz : float or None
        Butterworth cutoff [Hz], below 0.8 × the Nyquist frequency ``1/(2 dt)``. None:
        :data:`DEFAULT_CUTOFF_HZ`, or a quarter of the sampling rate when that is lower.
    order : int
        Butterworth order of one pass (1–10).

    Returns
    -------
    DerivativeFilter
        Filter sections, edge trim, noise gains and settle time.

    Raises
    ------
    ValueError
        Naming ``dt``, ``cutoff_hz`` or ``order`` when out of range.
    """
    if not (math.isfinite(dt) and dt > 0.0):
        raise ValueError(f"dt: expected a sampling step > 0 [s], got {dt!r}")
    if not (isinstance(order, (int, np.integer)) and 1 <= order <= 10):
        raise ValueError(f"order: expected an integer Butterworth order 1..10, got {order!r}")
    nyquist = 0.5 / dt
    if cutoff_hz is None:
        cutoff_hz = min(DEFAULT_CUTOFF_HZ, 0.5 * nyquist)
    if not (math.isfinite(cutoff_hz) and 0.0 < cutoff_hz < 0.8 * nyquist):
        raise ValueError(f"cutoff_hz: expected 0 < cutoff < 0.8 × Nyquist = {0.8 * nyquist:.6g} "
                         f"Hz (sampling step {dt:.6g} s), got {cutoff_hz!r}")
    return _design(float(dt), float(cutoff_hz), int(order))


@functools.lru_cache(maxsize=32)
def _design(dt: float, cutoff_hz: float, order: int) -> DerivativeFilter:
    sos = scipy.signal.butter(order, cutoff_hz, fs=1.0 / dt, output="sos")
    # impulse response of the forwards-backwards pass: run it on a long centred impulse
    half = int(math.ceil(20.0 * order / (cutoff_hz * dt))) + 10
    x = np.zeros(2 * half + 1)
    x[half] = 1.0
    y = scipy.signal.sosfilt(sos, x)
    h = scipy.signal.sosfilt(sos, y[::-1])[::-1]  # zero phase, centred at `half`
    # step error k samples after a step (a Coulomb jump in the effort; the jump of the odd
    # padding's curvature at a segment end): the largest |Σ_{i>=k'} h_i| for k' >= k
    tail = np.cumsum(h[half:][::-1])[::-1]
    err = np.maximum.accumulate(np.abs(tail)[::-1])[::-1]
    edge = int(np.argmax(err < EDGE_TOLERANCE))
    settle = int(np.argmax(err < 0.01))
    hv = np.gradient(h, dt)[1:-1]
    ha = (h[2:] - 2.0 * h[1:-1] + h[:-2]) / dt ** 2
    return DerivativeFilter(sos=sos, dt=dt, cutoff_hz=cutoff_hz, order=order, edge=edge,
                            min_length=3 * edge, gain_q=float(np.sum(h ** 2)),
                            gain_v=float(np.sum(hv ** 2)), gain_a=float(np.sum(ha ** 2)),
                            settle_time=settle * dt)


def _divided_weights(t: np.ndarray, k: int) -> np.ndarray:
    """(M, k+1) weights w_ij of the k-th divided differences over windows t[i..i+k]."""
    M = t.size - k
    w = np.ones((M, k + 1))
    for j in range(k + 1):
        for m in range(k + 1):
            if m != j:
                w[:, j] /= t[j:j + M] - t[m:m + M]
    return w


def position_noise_variance(t, x, seg: list[slice] | None = None, orders=(2, 3, 4, 5, 6)):
    """White-noise variance of sampled signals, from their divided differences.

    Parameters
    ----------
    t : (N,) array_like
        Sample times [s] (increasing within each segment).
    x : (N,) or (N, n) array_like
        The sampled signal(s), e.g. joint positions.
    seg : list of slice, optional
        Segments to use (default: :func:`segments` of ``t``); differences never span two.
    orders : sequence of int
        Divided-difference orders tried; the smallest estimate is returned (the motion itself
        leaks less into higher orders, noise gives the same value at every order).

    Returns
    -------
    (n,) ndarray or float
        Per column, ``σ̂² = Σ d² / Σ w²`` (module docstring); a float for 1-D ``x``; NaN where no
        segment has ``max(orders) + 1`` samples.
    """
    t = np.asarray(t, dtype=float).ravel()
    x = np.asarray(x, dtype=float)
    one = x.ndim == 1
    x2 = x[:, None] if one else x
    seg = segments(t) if seg is None else seg
    best = np.full(x2.shape[1], np.inf)
    for k in orders:
        num = np.zeros(x2.shape[1])
        den = 0.0
        for s in seg:
            ts, xs = t[s], x2[s]
            if ts.size < k + 1:
                continue
            w = _divided_weights(ts, k)
            M = w.shape[0]
            d = sum(w[:, j, None] * xs[j:j + M] for j in range(k + 1))
            num += np.sum(d ** 2, axis=0)
            den += float(np.sum(w ** 2))
        if den > 0.0:
            best = np.minimum(best, num / den)
    best[~np.isfinite(best)] = np.nan
    return float(best[0]) if one else best


@dataclass
class Derivatives:
    """Result of :func:`differentiate` (arrays shaped like the input ``q``: (N,) or (N, n)).

    ``q``: the low-passed positions; ``v`` [/s], ``a`` [/s²]: their derivatives; NaN on the
    rows of segments shorter than the filter's ``min_length``. ``var_q``: the raw positions'
    white-noise variance (:func:`position_noise_variance`); ``var_v``, ``var_a``: noise variances
    of the derived ``v`` and ``a`` (``var_q`` × the operator's gain; a float per column, or a
    float for 1-D input). ``segments``: the row slices; ``filters``: the
    :class:`DerivativeFilter` used on each (None for one too short); ``edge``: samples at each
    segment end still carrying the filter's start-up transient (trimmed by :func:`prepare`).
    """

    q: np.ndarray
    v: np.ndarray
    a: np.ndarray
    var_q: np.ndarray | float
    var_v: np.ndarray | float
    var_a: np.ndarray | float
    segments: list
    filters: list
    edge: int


def _uniform(ts: np.ndarray):
    """Uniform grid over a segment's stamps, or None when the stamps are already uniform."""
    n = ts.size
    dt = (ts[-1] - ts[0]) / (n - 1)
    grid = ts[0] + dt * np.arange(n)
    if np.max(np.abs(ts - grid)) <= _JITTER * dt:
        return dt, None
    dt = float(np.median(np.diff(ts)))
    m = int(round((ts[-1] - ts[0]) / dt)) + 1
    return dt, ts[0] + dt * np.arange(m)


def _on_grid(ts, grid, x):
    if grid is None:
        return x
    return np.column_stack([np.interp(grid, ts, x[:, j]) for j in range(x.shape[1])])


def _off_grid(ts, grid, x):
    if grid is None:
        return x
    return np.column_stack([np.interp(ts, grid, x[:, j]) for j in range(x.shape[1])])


def _filter_segments(t, cols, seg, cutoff_hz, order, measured_v):
    """Low-pass every column of ``cols`` (dict name → (N, n)) per segment; derive v, a from the
    first column. Returns (dict of filtered arrays incl. 'v', 'a', filters)."""
    N = t.size
    out = {name: np.full(x.shape, np.nan) for name, x in cols.items()}
    first = next(iter(cols))
    n = cols[first].shape[1]
    out["v"] = out.get("v", np.full((N, n), np.nan))
    out["a"] = np.full((N, n), np.nan)
    filters = []
    for s in seg:
        ts = t[s]
        if ts.size < 2:
            filters.append(None)
            continue
        dt, grid = _uniform(ts)
        filt = derivative_filter(dt, cutoff_hz, order)
        m = ts.size if grid is None else grid.size
        if m < filt.min_length:
            filters.append(None)
            continue
        filters.append(filt)
        for name, x in cols.items():
            out[name][s] = _off_grid(ts, grid, filt.lowpass(_on_grid(ts, grid, x[s])))
        base = filt.lowpass(_on_grid(ts, grid, cols[first][s]))
        if measured_v:
            out["a"][s] = _off_grid(ts, grid, filt.first(base))
        else:
            out["v"][s] = _off_grid(ts, grid, filt.first(base))
            out["a"][s] = _off_grid(ts, grid, filt.second(base))
    return out, filters


def _noise_gains(seg, filters, measured_v):
    """Sample-weighted mean noise gains (base → v, base → a) over the filtered segments."""
    gv = ga = w = 0.0
    for s, f in zip(seg, filters):
        if f is None:
            continue
        k = max(s.stop - s.start - 2 * f.edge, 0) or 1
        gv += k * (f.gain_q if measured_v else f.gain_v)
        ga += k * (f.gain_v if measured_v else f.gain_a)
        w += k
    return (gv / w, ga / w) if w else (math.nan, math.nan)


def _as_columns(name, x, N=None):
    arr = np.asarray(x, dtype=float)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise ValueError(f"{name}: expected shape (N,) or (N, n), got {arr.shape}")
    if N is not None and arr.shape[0] != N:
        raise ValueError(f"{name}: {arr.shape[0]} rows, t has {N}")
    if not np.all(np.isfinite(arr)):
        bad = ~np.all(np.isfinite(arr), axis=1)
        raise ValueError(f"{name}: contains NaN or inf ({int(bad.sum())} rows, first at row "
                         f"{int(np.argmax(bad))}); drop those rows first")
    return arr


def _as_time(t):
    t = np.asarray(t, dtype=float)
    if t.ndim != 1:
        raise ValueError(f"t: expected a 1-D array of times [s], got shape {t.shape}")
    if not np.all(np.isfinite(t)):
        raise ValueError("t: contains NaN or inf")
    return t


def differentiate(t, q, cutoff_hz: float | None = None, order: int = DEFAULT_ORDER,
                  max_gap: float | None = None) -> Derivatives:
    """Zero-phase velocity and acceleration of sampled positions (module docstring).

    Parameters
    ----------
    t : (N,) array_like
        Sample times [s].
    q : (N,) or (N, n) array_like
        Positions [rad or m], one column per joint.
    cutoff_hz : float or None
        Butterworth cutoff [Hz]; None: :data:`DEFAULT_CUTOFF_HZ`, or a quarter of the sampling
        rate when that is lower (:func:`derivative_filter`).
    order : int
        Butterworth order of each pass (:data:`DEFAULT_ORDER`).
    max_gap : float, optional
        Longest step inside a segment [s] (:func:`segments`).

    Returns
    -------
    Derivatives
        Filtered q, v, a (NaN in segments too short to filter), noise variances
        ``var_q``, ``var_v``, ``var_a``, the segments and their filters.

    Raises
    ------
    ValueError
        Naming ``t``, ``q``, ``cutoff_hz`` or ``order`` (bad shape, NaN, out of range).
    """
    t = _as_time(t)
    one = np.asarray(q).ndim == 1
    q2 = _as_columns("q", q, t.size)
    seg = segments(t, max_gap)
    out, filters = _filter_segments(t, {"q": q2}, seg, cutoff_hz, order, measured_v=False)
    var_q = position_noise_variance(t, q2, seg)
    gv, ga = _noise_gains(seg, filters, measured_v=False)
    edge = max((f.edge for f in filters if f is not None), default=0)

    def shape(x):
        return x[:, 0] if one else x

    def var(x):
        return float(x[0]) if one else x

    return Derivatives(q=shape(out["q"]), v=shape(out["v"]), a=shape(out["a"]), var_q=var(var_q),
                       var_v=var(var_q * gv), var_a=var(var_q * ga), segments=seg,
                       filters=filters, edge=edge)


@dataclass
class PreparedData:
    """Result of :func:`prepare`: the rows fit for identification, concatenated.

    ``t`` (M,), ``q``, ``v``, ``a``, ``effort`` (M, n): filtered positions, velocities,
    accelerations and efforts (every column through the same zero-phase low-pass);
    ``rows``: (M,) indices of these rows in the input; ``segments``: slices of the M rows, one
    per kept segment (no difference or filter spans two); ``var_v``, ``var_a``: (n,) noise
    variances of ``v`` and ``a``; ``var_source``: the raw noise variance they came from (of q,
    or of the measured v); ``velocity_source``: ``"derived"``, ``"measured"`` or ``"mixed"``
    (measured, but derived for the joints whose recorded velocity lags: ``velocity_lag``);
    ``settle_time`` [s]: how long after a velocity reversal the effort's Coulomb step is within
    1 % of its final level — the filter's settle time when the effort was filtered (keep ``dv``
    above |a| × this at reversals), 0 for the raw effort (the default);
    ``effort_filtered``: whether it was;
    ``notes``: what was dropped, in words; ``effort_lag`` [s]: the effort's lag behind the
    states that was undone — ``q``, ``v``, ``a`` are the states at ``t − effort_lag``
    (:func:`prepare`); ``velocity_lag``: the measured velocity's lag behind the positions'
    derivative (:func:`estimate_velocity_lag`; None without a measured velocity);
    ``warnings``: what the user should hear (a lagging velocity replaced), in words, naming the
    joint.
    """

    t: np.ndarray
    q: np.ndarray
    v: np.ndarray
    a: np.ndarray
    effort: np.ndarray
    rows: np.ndarray
    segments: list
    var_v: np.ndarray
    var_a: np.ndarray
    var_source: np.ndarray
    velocity_source: str
    cutoff_hz: float
    settle_time: float
    effort_filtered: bool = False
    notes: list = field(default_factory=list)
    effort_lag: float = 0.0
    velocity_lag: "VelocityLag | None" = None
    warnings: list = field(default_factory=list)

    @property
    def step(self) -> float:
        """Median sampling step [s] of the kept rows."""
        return _median_step(self.t)

    def __len__(self) -> int:
        return int(self.t.size)


def prepare(t, q, effort, v=None, cutoff_hz: float | None = None,
            order: int = DEFAULT_ORDER, max_gap: float | None = None,
            filter_effort: bool = False, min_rows: int = 1,
            effort_lag: float = 0.0, check_velocity_lag: bool = True,
            names=None) -> PreparedData:
    """A whole recording made ready for the fit: segments, filtered columns, edges trimmed.

    Parameters
    ----------
    t : (N,) array_like
        Sample times [s].
    q : (N, n) array_like
        Joint positions.
    effort : (N, n) array_like
        Joint efforts (torques [N·m]).
    v : (N, n) array_like, optional
        Measured joint velocities; then ``v`` is its low-pass and ``a`` the derivative of that
        (``var_v``, ``var_a`` from its noise level). None: both derived from ``q``. A joint
        whose measured velocity lags the positions' derivative by more than
        :data:`VELOCITY_LAG_SAMPLES` steps (``check_velocity_lag``) gets the derived ``v`` and
        ``a`` instead, with a warning.
    cutoff_hz : float or None
        Butterworth cutoff [Hz]; None: :data:`DEFAULT_CUTOFF_HZ`, or a quarter of the sampling
        rate when that is lower (:func:`derivative_filter`).
    order : int
        Butterworth order of each pass.
    max_gap : float, optional
        Longest step inside a segment [s] (:func:`segments`).
    filter_effort : bool
        Low-pass the effort with the same filter. Default False: the raw effort, which keeps the
        Coulomb step sharp and the residuals independent (module docstring).
    min_rows : int
        Fewest rows the result may have.
    effort_lag : float
        How long [s] the effort lags the states (module docstring, "Effort lag"): the filtered
        ``q``, ``v``, ``a`` are evaluated at ``t − effort_lag`` (cubic interpolation of the
        low-passed signals, per segment, from the rows the edge trim drops: no row is lost);
        the effort stays the raw sample at ``t``. 0 (default): a measured torque, sampled with
        the state. At most the edge trim's duration either way.
    check_velocity_lag : bool
        With a measured ``v``: estimate its lag behind the positions' derivative
        (:func:`estimate_velocity_lag`) and use the derivative for joints lagging by more than
        :data:`VELOCITY_LAG_SAMPLES` sampling steps (a drive's velocity filter or a logging
        delay; in ``warnings``, naming the joint and the lag in ms). Default True.
    names : sequence of str, optional
        Joint names of the columns, for the warnings (default ``column j``).

    Returns
    -------
    PreparedData
        The kept rows (filtered, edge transients trimmed), per-segment slices, noise variances
        and notes on what was dropped.

    Raises
    ------
    ValueError
        Naming the argument for bad shapes or NaN; ``"t: ..."`` when no segment is long enough
        for the filter or fewer than ``min_rows`` rows remain (with the segment lengths and the
        length needed); ``"effort_lag: ..."`` when it is not a finite number or longer than the
        edge trim.
    """
    if isinstance(effort_lag, bool) or not isinstance(effort_lag, (int, float, np.floating,
                                                                   np.integer)) \
            or not math.isfinite(effort_lag):
        raise ValueError(f"effort_lag: expected a finite number of seconds, got {effort_lag!r}")
    effort_lag = float(effort_lag)
    t = _as_time(t)
    q2 = _as_columns("q", q, t.size)
    n = q2.shape[1]
    e2 = _as_columns("effort", effort, t.size)
    if e2.shape[1] != n:
        raise ValueError(f"effort: {e2.shape[1]} columns, q has {n}")
    labels = [f"column {j}" for j in range(n)] if names is None else [str(x) for x in names]
    if len(labels) != n:
        raise ValueError(f"names: {len(labels)} names for {n} columns")
    measured = v is not None
    cols = {"q": q2}
    vel_lag, lagged, warnings = None, np.zeros(n, dtype=bool), []
    if measured:
        v2 = _as_columns("v", v, t.size)
        if v2.shape[1] != n:
            raise ValueError(f"v: {v2.shape[1]} columns, q has {n}")
        if check_velocity_lag:
            vel_lag = estimate_velocity_lag(t, q2, v2, cutoff_hz, order, max_gap)
            lagged = vel_lag.flagged
            warnings += _velocity_lag_warnings(vel_lag, labels)
        measured = not lagged.all()
        if measured:
            cols = {"v": v2, "q": q2}
    if filter_effort:
        cols["effort"] = e2
    seg = segments(t, max_gap)
    out, filters = _filter_segments(t, cols, seg, cutoff_hz, order, measured_v=measured)
    if measured and lagged.any():  # the lagging joints' v, a from their positions
        sub, _ = _filter_segments(t, {"q": q2[:, lagged]}, seg, cutoff_hz, order,
                                  measured_v=False)
        out["v"][:, lagged], out["a"][:, lagged] = sub["v"], sub["a"]
    if not filter_effort:
        out["effort"] = e2
    if effort_lag != 0.0:
        _lag_states(t, out, seg, filters, effort_lag)
    var_src = position_noise_variance(t, v2 if measured else q2, seg)
    gv, ga = _noise_gains(seg, filters, measured_v=measured)
    var_v, var_a = var_src * gv, var_src * ga
    notes = []
    differenced = np.zeros(n, dtype=bool)
    if measured:
        differenced = _differenced_noise(v2, out["v"], seg, filters) & ~lagged
        from_q = differenced | lagged
        if from_q.any():
            # v = Δq/dt: its noise is the positions' noise differenced, so it propagates like
            # a velocity derived from q (the white-noise level of v would overstate it ~20×);
            # a lagging joint's v is derived from q
            gq_v, gq_a = _noise_gains(seg, filters, measured_v=False)
            q_noise = position_noise_variance(t, q2, seg)
            var_v = np.where(from_q, q_noise * gq_v, var_v)
            var_a = np.where(from_q, q_noise * gq_a, var_a)
            var_src = np.where(from_q, q_noise, var_src)
        if differenced.any():
            which = ", ".join(labels[j] for j in np.flatnonzero(differenced))
            notes.append(f"measured velocity of {which} is a difference of the "
                         f"positions (its noise has no power at low frequency): its noise "
                         f"variances propagated from the positions' noise")
    if len(seg) > 1:
        notes.append(f"{len(seg) - 1} gap(s) in the stamps: {len(seg)} segments filtered "
                     f"separately")
    keep, dropped, trimmed = [], [], 0
    for s, f in zip(seg, filters):
        length = s.stop - s.start
        if f is None:
            dropped.append(length)
            continue
        lo, hi = s.start + f.edge, s.stop - f.edge
        keep.append(np.arange(lo, hi))
        trimmed += 2 * f.edge
    if dropped:
        more = " ..." if len(dropped) > 5 else ""
        notes.append(f"{len(dropped)} segment(s) too short for the filter dropped "
                     f"({sum(dropped)} rows; lengths {dropped[:5]}{more})")
    if trimmed:
        notes.append(f"{trimmed} rows at segment ends trimmed (filter edge transients)")
    if effort_lag != 0.0:
        notes.append(f"effort lag {effort_lag * 1e3:.4g} ms undone: q, v, a evaluated at "
                     f"t − {effort_lag:.6g} s (the effort at its stamp t)")
    rows = np.concatenate(keep) if keep else np.zeros(0, dtype=int)
    if rows.size < max(min_rows, 1):
        f = next((f for f in filters if f is not None),
                 derivative_filter(_median_step(t), cutoff_hz, order))
        lens = [s.stop - s.start for s in seg]
        raise ValueError(f"t: recording too short: {rows.size} usable rows (need {min_rows}); "
                         f"segments of {lens[:8]}{' ...' if len(lens) > 8 else ''} samples, "
                         f"the {f.cutoff_hz:g} Hz filter needs segments of >= {f.min_length}")
    bounds = np.cumsum([0] + [k.size for k in keep])
    new_seg = [slice(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:])]
    settle = max(f.settle_time for f in filters if f is not None) if filter_effort else 0.0
    return PreparedData(t=t[rows], q=out["q"][rows], v=out["v"][rows], a=out["a"][rows],
                        effort=out["effort"][rows], rows=rows, segments=new_seg,
                        var_v=var_v, var_a=var_a, var_source=var_src,
                        velocity_source=("derived" if not measured else
                                         "mixed" if lagged.any() else "measured"),
                        cutoff_hz=next(f.cutoff_hz for f in filters if f is not None),
                        settle_time=settle,
                        effort_filtered=bool(filter_effort), notes=notes,
                        effort_lag=effort_lag, velocity_lag=vel_lag, warnings=warnings)


def _lag_states(t, out, seg, filters, lag: float) -> None:
    """In place: the filtered ``q``, ``v``, ``a`` of every filtered segment at ``t − lag``
    (:func:`_shifted`; the kept rows need only the trimmed edge rows around them)."""
    for s, f in zip(seg, filters):
        if f is None:
            continue
        room = f.edge * f.dt
        if abs(lag) > room:
            raise ValueError(f"effort_lag: {lag:.6g} s is longer than the {f.edge} samples "
                             f"({room:.6g} s) trimmed at each segment end; a lag of a few "
                             f"samples is expected (a held command: half a step)")
        ts = t[s]
        for name in ("q", "v", "a"):
            out[name][s] = _shifted(ts, out[name][s], ts - lag)


#: A measured velocity's noise is taken for differenced position noise (v = Δq/dt, or the
#: central difference) when its high-frequency residual's normalised low-lag spectrum
#: ``1 + 2 Σ_{l=1..4} ρ_l`` is below this: differenced white noise has no power at zero
#: frequency (the sum is ≈ 0: −0.5 at lag 1 for the backward, at lag 2 for the central
#: difference), white noise ≈ 1 (less the few % the high-pass takes).
DIFFERENCED_SPECTRUM = 0.5


def _differenced_noise(v_raw, v_filtered, seg, filters) -> np.ndarray:
    """Per column: does the high-frequency residual ``v − lowpass(v)`` look like differenced
    white noise (:data:`DIFFERENCED_SPECTRUM`)?"""
    lags = 4
    cov = np.zeros((lags + 1, v_raw.shape[1]))
    for s, f in zip(seg, filters):
        if f is None:
            continue
        r = (v_raw[s] - v_filtered[s])[f.edge:-f.edge or None]
        if r.shape[0] <= lags + 1:
            continue
        for lag in range(lags + 1):
            cov[lag] += np.sum(r[lag:] * r[:r.shape[0] - lag], axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        low = 1.0 + 2.0 * cov[1:].sum(axis=0) / cov[0]
    return np.nan_to_num(low, nan=1.0) < DIFFERENCED_SPECTRUM


def _median_step(t: np.ndarray) -> float:
    steps = np.diff(t)
    steps = steps[steps > 0.0]
    return float(np.median(steps)) if steps.size else 1.0


# -- effort lag -----------------------------------------------------------------------------------
#: The ``auto`` search covers lags 0 … this many sampling steps (a held command lags by half a
#: step; a torque filtered or sampled late by a little more).
MAX_AUTO_LAG_SAMPLES = 1.5
#: Lags evaluated by :func:`estimate_effort_lag` (evenly over the range, ends included: every
#: 3/8 sample). The residual sum of squares is quadratic in the lag where the effort is
#: smooth, but a gear's drive/back-drive switch makes the effort jump, and a jump adds a kink
#: ∝ |lag − true lag|: a parabola through a wide grid then misses the minimum (0.2 sample on the
#: gear planar arm at 200 Hz, true 0), one through the grid's minimum and its neighbours does not.
LAG_GRID = 5
#: At most this many rows (evenly spaced over the prepared ones) in each of its fits: the lag's
#: std falls as 1/√rows (arm7 at 1 kHz: 0.042 sample at 3000 rows, 0.012 at 20000). The cost:
#: the rigid-body terms of every row at every lag, :data:`LAG_GRID` × 5000 = 25000 rows, half
#: the rows of the 60 s × 1 kHz recording the fit itself evaluates once (48000 fitted).
LAG_ROWS = 5000
#: The estimate is used only when it is at least this many of its standard deviations above 0
#: (the data show a lag); below, the lag is 0: an insignificant estimate only adds its own
#: scatter to the viscous terms, which it is nearly collinear with (on arm7 at 1 kHz a lag std of
#: 0.04 sample moves joint_a2's bp by 2.4 of its std).
LAG_SIGNIFICANCE = 3.0


def lagged_states(prep: PreparedData, lag: float, rows=None):
    """The prepared states at ``t − lag`` (``lag`` [s] replaces ``prep.effort_lag``).

    Parameters
    ----------
    prep : PreparedData
        A prepared recording (:func:`prepare`).
    lag : float
        Effort lag [s] (module docstring, "Effort lag").
    rows : (R,) array_like of int, optional
        Rows of ``prep`` wanted (default all). A row whose ``t − lag`` falls outside its own
        segment is extrapolated linearly from the segment's end rows.

    Returns
    -------
    q, v, a : (R, n) ndarray
        ``prep``'s filtered states at ``t − lag``, cubic interpolation in time within each
        segment (the states are low-passed far below the sampling rate: exact to ~(ω·dt)⁴ at
        ω).
    """
    return _lagged(prep, lag, rows, (prep.q, prep.v, prep.a))


def _lagged(prep: PreparedData, lag: float, rows, arrays) -> tuple:
    """:func:`lagged_states` of the given arrays of ``prep`` (e.g. the velocity alone)."""
    rows = np.arange(len(prep)) if rows is None else np.asarray(rows, dtype=int)
    shift = float(lag) - float(prep.effort_lag)
    seg_of = np.searchsorted([s.stop for s in prep.segments], rows, side="right")
    outs = [np.empty((rows.size, prep.q.shape[1])) for _ in arrays]
    for k, s in enumerate(prep.segments):
        mine = seg_of == k
        if not mine.any():
            continue
        at = prep.t[rows[mine]] - shift
        for out, x in zip(outs, arrays):
            out[mine] = _shifted(prep.t[s], x[s], at)
    return tuple(outs)


def _shifted(ts, x, at):
    """``x`` (sampled at ``ts``, increasing) at the times ``at``: the cubic through the four
    samples around each time (Lagrange on the actual stamps; at a segment's ends the end four,
    extrapolating; a segment of fewer than four rows: linear). Why not linear interpolation:
    between samples it is a low-pass (gain cos(π f dt) half-way), which removes a few % of the
    acceleration's noise near the cutoff and so lowers the residual at every fractional lag —
    the lag search preferred 0.04–0.1 sample over 0 on a quantised encoder; the cubic's gain is
    flat to ~(2π f dt)⁴/100, 3e-6 at the 20 Hz cutoff and 1 kHz. Local, so O(rows)."""
    m = ts.size
    if m < 4:
        return np.column_stack([np.interp(at, ts, x[:, j]) for j in range(x.shape[1])])
    left = np.clip(np.searchsorted(ts, at, side="right") - 2, 0, m - 4)
    nodes = [ts[left + k] for k in range(4)]
    out = np.zeros((at.size, x.shape[1]))
    for k in range(4):
        w = np.ones(at.size)
        for m_ in range(4):
            if m_ != k:
                w *= (at - nodes[m_]) / (nodes[k] - nodes[m_])
        out += w[:, None] * x[left + k]
    return out


@dataclass(frozen=True)
class EffortLagEstimate:
    """Result of :func:`estimate_effort_lag`.

    ``lag`` [s]: the lag to use — ``estimate`` when ``significant`` and ``consistent``, else 0;
    ``estimate`` [s]: the least-squares lag, in ``[0, max_lag]``; ``std`` [s]: its standard
    deviation from the curvature of the residual sum of squares (NaN when the curve has none);
    ``significant``: ``estimate ≥ significance × std``; ``halves``: ``(estimate, std)`` [s] of
    the first and the second half of the rows alone; ``consistent``: they agree within
    ``significance`` × their combined std (when they do not, the residuals are not the white
    noise the std assumes: the model misses part of the effort, and the lag cannot be told
    from the data); ``step`` [s]: the median sampling step; ``lags`` [s], ``rss``: the grid
    and the residual sums of squares there; ``rows``: rows used; ``samples``: ``lag / step``.
    """

    lag: float
    estimate: float
    std: float
    significant: bool
    consistent: bool
    halves: tuple
    step: float
    lags: np.ndarray
    rss: np.ndarray
    rows: int

    @property
    def samples(self) -> float:
        """The lag in sampling steps."""
        return self.lag / self.step


def estimate_effort_lag(prep: PreparedData, residual, rows=None, max_lag: float | None = None,
                        grid: int = LAG_GRID, max_rows: int = LAG_ROWS,
                        significance: float = LAG_SIGNIFICANCE,
                        dv: float | None = None) -> EffortLagEstimate:
    """The effort's lag behind the states, by least squares over the lag (module docstring).

    Parameters
    ----------
    prep : PreparedData
        The recording prepared with any ``effort_lag`` (usually 0).
    residual : callable
        ``residual(q, v, a, effort)``: a cheap least-squares fit of the model that will be
        identified on those rows (``fric identify`` passes paper 003's eq. (5), OLS), returning
        its residuals (an array, NaN where a row is left out, e.g. inside the Δv band: only
        the entries finite at every lag count), or the pair ``(sum of squares, count)``.
    rows : array_like of int, optional
        Candidate rows of ``prep`` (default all; e.g. the fitted part, not the held-out one).
    max_lag : float, optional
        Largest lag tried [s]; default :data:`MAX_AUTO_LAG_SAMPLES` sampling steps.
    grid : int
        Number of lags tried, evenly over ``[0, max_lag]`` (≥ 3; :data:`LAG_GRID`).
    max_rows : int
        At most this many rows (evenly spaced over ``rows``) in each fit.
    significance : float
        The estimate is used (``lag``) only when at least this many stds above 0
        (:data:`LAG_SIGNIFICANCE`); 0 uses it always.
    dv : float, optional
        The fit's Δv band [rad/s]: rows where a joint's ``|v|`` crosses it between the lags
        tried are left out, so that every fit sees the same samples (near a reversal the
        residuals are large: a sample entering the fit at one lag and not at the next moves the
        sum of squares by more than the lag does — 0.2 sample on the gear planar arm at 200 Hz).

    Returns
    -------
    EffortLagEstimate
        The lag minimising the residual sum of squares (the vertex of the parabola through the
        grid's smallest sum and its neighbours, kept between those neighbours), its std,
        whether it is significant, the two halves' estimates and whether they agree, the grid.

    Raises
    ------
    ValueError
        Naming ``grid``, ``max_rows`` or ``max_lag`` when out of range; what ``residual``
        raises (e.g. too few rows to fit).
    """
    if isinstance(grid, bool) or not isinstance(grid, (int, np.integer)) or grid < 3:
        raise ValueError(f"grid: expected an integer >= 3 (lags tried), got {grid!r}")
    if isinstance(max_rows, bool) or not isinstance(max_rows, (int, np.integer)) or max_rows < 10:
        raise ValueError(f"max_rows: expected an integer >= 10, got {max_rows!r}")
    step = prep.step
    if max_lag is None:
        max_lag = MAX_AUTO_LAG_SAMPLES * step
    if not (math.isfinite(max_lag) and max_lag > 0.0):
        raise ValueError(f"max_lag: expected a positive lag [s], got {max_lag!r}")
    if not (math.isfinite(significance) and significance >= 0.0):
        raise ValueError(f"significance: expected a number of stds >= 0, got {significance!r}")
    cand = np.arange(len(prep)) if rows is None else np.asarray(rows, dtype=int)
    # leave out rows whose t − lag would leave their segment (no extrapolation in the search)
    lead = int(math.ceil(max_lag / step)) + 1
    starts = np.array([s.start for s in prep.segments])
    seg_start = starts[np.searchsorted(starts, cand, side="right") - 1]
    cand = cand[cand - seg_start >= lead]
    lags = np.linspace(0.0, float(max_lag), int(grid))
    if dv is not None:
        inside = np.array([np.abs(_lagged(prep, lag, cand, (prep.v,))[0]) <= dv
                           for lag in lags])
        cand = cand[np.all(np.all(inside, axis=0) | np.all(~inside, axis=0), axis=1)]
    if cand.size > max_rows:
        cand = cand[np.linspace(0, cand.size - 1, max_rows).round().astype(int)]
    # the two halves of the rows (in time) separately: the curvature's std assumes white
    # residuals; effort the model does not describe (unmodelled dynamics, a controller's
    # chatter) leaves coloured residuals whose minimum wanders, and the halves then disagree
    half = cand.size // 2
    parts = [cand[:half], cand[half:]]
    # the halves' fits side by side where the process can fork (fric_core.forked): the same
    # values, half the time on two cores
    from ..forked import fork_call

    second = fork_call(lambda: _rss_curve(prep, residual, lags, parts[1]))
    curves = [_rss_curve(prep, residual, lags, parts[0]), second.result()]
    x = lags / step
    ends = [_vertex(x, rss, count) for rss, count in curves]
    vertex, std_x = _vertex(x, curves[0][0] + curves[1][0], curves[0][1] + curves[1][1])
    estimate, std = vertex * step, std_x * step
    (e1, s1), (e2, s2) = ends
    spread = math.hypot(s1, s2)
    consistent = bool(math.isfinite(spread) and abs(e1 - e2) <= max(significance, 1.0) * spread)
    significant = bool(estimate > 0.0 and (significance == 0.0 or estimate >= significance * std))
    return EffortLagEstimate(lag=estimate if (significant and consistent) else 0.0,
                             estimate=estimate, std=std, significant=significant,
                             consistent=consistent,
                             halves=((e1 * step, s1 * step), (e2 * step, s2 * step)),
                             step=step, lags=lags, rss=curves[0][0] + curves[1][0],
                             rows=int(cand.size))


def _rss_curve(prep, residual, lags, rows):
    """The residual sum of squares at each lag over ``rows``, and the residual count."""
    effort = prep.effort[rows]
    res = []
    for lag in lags:
        q, v, a = lagged_states(prep, lag, rows)
        res.append(residual(q, v, a, effort))
    if all(isinstance(r, tuple) for r in res):  # (sum of squares, count) from the fit itself
        return (np.array([float(r[0]) for r in res]), int(min(int(r[1]) for r in res)))
    res = [np.asarray(r, dtype=float) for r in res]
    # the same residuals at every lag (a row may leave the Δv band as the lag moves its v)
    ok = np.all([np.isfinite(r) for r in res], axis=0)
    return np.array([float(np.sum(r[ok] ** 2)) for r in res]), int(ok.sum())


def _vertex(x, rss, count):
    """(vertex, std) [the units of ``x``] of the parabola through the smallest ``rss`` and its
    two neighbours: near its minimum RSS is quadratic in the lag (the residual is linear in
    it), the vertex is the least-squares lag, the curvature c gives var = σ²/c with
    σ² = RSS_min / count; (the grid's minimum, NaN) without curvature."""
    best = int(np.argmin(rss))
    mid = min(max(best, 1), x.size - 2)
    near = slice(mid - 1, mid + 2)
    c2, c1, _ = np.polyfit(x[near], rss[near], 2)
    if not c2 > 0.0:
        return float(x[best]), math.nan
    vertex = float(np.clip(-c1 / (2.0 * c2), x[mid - 1], x[mid + 1]))
    sigma2 = max(float(np.min(rss)), 0.0) / max(count, 1)
    return vertex, math.sqrt(sigma2 / c2)


def _velocity_lag_warnings(est: "VelocityLag", labels) -> list:
    """One line naming every joint whose measured velocity :func:`prepare` replaces, with its
    lag in ms (empty when none)."""
    parts = []
    for j in np.flatnonzero(est.flagged):
        sign = "" if est.lag[j] > 0 else "−"  # a negative lag: the velocity leads
        least = "≥ " if est.at_limit[j] else ""
        parts.append(f"{labels[j]} {least}{sign}{abs(est.lag[j]) * 1e3:.3g} ms "
                     f"({abs(est.samples[j]):.3g} samples)")
    if not parts:
        return []
    which = ", ".join(labels[j] for j in np.flatnonzero(est.flagged))
    return [f"measured velocity lags the derivative of the positions (a drive's velocity filter "
            f"or a logging delay): {', '.join(parts)}; the positions' derivative is used "
            f"instead for {which}"]


# -- recorded velocity's lag ----------------------------------------------------------------------
#: Largest lag [s] :func:`estimate_velocity_lag` searches, either way (a drive's velocity filter
#: or a logging delay is seen at 0.1–0.3 s on real arms; at most a quarter of the longest
#: segment).
MAX_VELOCITY_LAG = 0.5
#: A measured velocity lagging the positions' derivative by more than this many sampling steps
#: is not used (:func:`prepare`): a backward difference ``Δq/dt`` lags by half a step and is kept.
VELOCITY_LAG_SAMPLES = 1.0
#: Below this peak correlation between the measured velocity and the positions' derivative
#: (both low-passed) the lag is not estimated (NaN): a joint that hardly moves has only noise in
#: both, and their correlation peaks anywhere.
MIN_VELOCITY_CORRELATION = 0.5


@dataclass(frozen=True)
class VelocityLag:
    """Result of :func:`estimate_velocity_lag`, arrays (n,) per joint.

    ``lag`` [s]: how long the measured velocity lags the derivative of the positions (> 0: it
    comes late; NaN where not estimated: the joint hardly moved, or no segment is long enough);
    ``correlation``: the peak normalised cross-correlation of the two (1: the same shape);
    ``gain``: the least-squares factor from the positions' derivative to the measured velocity
    at that lag (≈ 1; below 1 for a first-order filter at frequencies near its corner);
    ``at_limit``: the peak is at the end of the searched range (the lag is at least that);
    ``step`` [s]: the median sampling step; ``max_lag`` [s]: the range searched either way.
    """

    lag: np.ndarray
    correlation: np.ndarray
    gain: np.ndarray
    at_limit: np.ndarray
    step: float
    max_lag: float

    @property
    def samples(self) -> np.ndarray:
        """The lag in sampling steps."""
        return self.lag / self.step

    @property
    def flagged(self) -> np.ndarray:
        """Joints whose measured velocity lags (or leads) by more than
        :data:`VELOCITY_LAG_SAMPLES` steps."""
        return np.nan_to_num(np.abs(self.samples), nan=0.0) > VELOCITY_LAG_SAMPLES


def estimate_velocity_lag(t, q, v, cutoff_hz: float | None = None, order: int = DEFAULT_ORDER,
                          max_gap: float | None = None,
                          max_lag: float = MAX_VELOCITY_LAG) -> VelocityLag:
    """How long a recorded velocity lags the derivative of the recorded positions, per joint.

    A drive's velocity estimate is often low-passed (a first-order filter of time constant T
    delays the motion's band by ≈ T) or logged late; identification relates the effort at t to
    the velocity at t, so a lag turns inertia and friction into each other. Both signals go
    through the same zero-phase low-pass (:func:`derivative_filter`; the positions then through
    the central difference), which leaves their relative timing untouched, and the lag is the
    least-squares one: τ maximising the normalised cross-correlation
    ``ρ(τ) = Σ v_m(t) ḋ(t − τ) / √(Σ v_m² Σ ḋ(t − τ)²)`` over the same rows ``t`` at every τ
    (equivalently, minimising ``Σ (v_m(t) − g·ḋ(t − τ))²`` over the gain g and τ), ḋ the
    positions' derivative. Sub-sample resolution: the vertex of the parabola through the peak
    sample and its two neighbours (ρ is smooth there: both signals are low-passed far below
    the sampling rate). Noise averages out in the sums over the record (its correlation is
    confined to ~1/cutoff), and the low-pass removes what is above the cutoff. Segments
    (:func:`segments`) are filtered alone and their sums added; stamps jittering inside a segment
    are interpolated onto a uniform grid first (as in :func:`prepare`).

    Parameters
    ----------
    t : (N,) array_like
        Sample times [s].
    q : (N,) or (N, n) array_like
        Positions [rad or m].
    v : (N,) or (N, n) array_like
        The recorded velocities [rad/s or m/s], same shape as ``q``.
    cutoff_hz : float or None
        Low-pass cutoff [Hz] (:func:`derivative_filter`; None: its default).
    order : int
        Butterworth order of each pass.
    max_gap : float, optional
        Longest step inside a segment [s] (:func:`segments`).
    max_lag : float
        Largest lag searched either way [s] (:data:`MAX_VELOCITY_LAG`), cut to a quarter of the
        longest segment.

    Returns
    -------
    VelocityLag
        Per joint: the lag [s] (NaN where not estimated), peak correlation, gain, whether the
        peak is at the range's end; the step and the range searched.

    Raises
    ------
    ValueError
        Naming ``t``, ``q``, ``v`` or ``max_lag`` (bad shape, NaN, a non-positive range).
    """
    t = _as_time(t)
    q2 = _as_columns("q", q, t.size)
    v2 = _as_columns("v", v, t.size)
    if v2.shape != q2.shape:
        raise ValueError(f"v: shape {v2.shape}, q has {q2.shape}")
    if not (isinstance(max_lag, (int, float, np.integer, np.floating)) and math.isfinite(max_lag)
            and max_lag > 0.0):
        raise ValueError(f"max_lag: expected a positive lag [s], got {max_lag!r}")
    n = q2.shape[1]
    step = _median_step(t)
    seg = segments(t, max_gap)
    longest = max(float(t[s][-1] - t[s][0]) if s.stop - s.start > 1 else 0.0 for s in seg)
    max_lag = min(float(max_lag), 0.25 * longest)
    L = int(math.floor(max_lag / step))
    nan = np.full(n, np.nan)
    if L < 2:
        return VelocityLag(lag=nan, correlation=nan.copy(), gain=nan.copy(),
                           at_limit=np.zeros(n, dtype=bool), step=step, max_lag=max_lag)
    lags = step * np.arange(-L, L + 1)
    s_mv = np.zeros((lags.size, n))
    s_vv = np.zeros((lags.size, n))
    s_mm = np.zeros(n)
    used = False
    for s in seg:
        ts = t[s]
        if ts.size < 2:
            continue
        dt, grid = _uniform(ts)
        k = int(math.ceil(max_lag / dt)) + 1  # lags of this segment's grid that cover ±max_lag
        m = ts.size if grid is None else grid.size
        filt = derivative_filter(dt, cutoff_hz, order)
        if m < max(filt.min_length, 4 * k + 1):
            continue
        qd = filt.first(filt.lowpass(_on_grid(ts, grid, q2[s])))[filt.edge:m - filt.edge]
        vm = filt.lowpass(_on_grid(ts, grid, v2[s]))[filt.edge:m - filt.edge]
        m2 = vm.shape[0]
        if m2 < 4 * k + 1:
            continue
        used = True
        own = dt * np.arange(-k, k + 1)
        core = vm[k:m2 - k]  # the same rows at every lag
        c2 = np.vstack([np.zeros((1, n)), np.cumsum(qd ** 2, axis=0)])
        s_mm += np.sum(core ** 2, axis=0)
        for j in range(n):
            # c[i] = Σ_r qd[r + i] · core[r] = Σ_row vm[row] qd[row − lag], lag = (k − i) steps
            c = scipy.signal.correlate(qd[:, j], core[:, j], mode="valid")[::-1]
            lo = k - np.arange(-k, k + 1)  # first qd row of each lag's window
            e = c2[lo + core.shape[0], j] - c2[lo, j]
            s_mv[:, j] += np.interp(lags, own, c)
            s_vv[:, j] += np.interp(lags, own, e)
    if not used:
        return VelocityLag(lag=nan, correlation=nan.copy(), gain=nan.copy(),
                           at_limit=np.zeros(n, dtype=bool), step=step, max_lag=max_lag)
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = s_mv / np.sqrt(s_vv * s_mm)
    lag, peak, gain = nan.copy(), nan.copy(), nan.copy()
    at_limit = np.zeros(n, dtype=bool)
    for j in range(n):
        r = rho[:, j]
        if not np.any(np.isfinite(r)):
            continue
        i = int(np.nanargmax(r))
        peak[j] = r[i]
        gain[j] = s_mv[i, j] / s_vv[i, j]
        if not r[i] >= MIN_VELOCITY_CORRELATION:
            continue
        if i in (0, r.size - 1):
            lag[j], at_limit[j] = lags[i], True
            continue
        y0, y1, y2 = r[i - 1], r[i], r[i + 1]
        curv = y0 - 2.0 * y1 + y2
        frac = 0.5 * (y0 - y2) / curv if curv < 0.0 else 0.0
        lag[j] = lags[i] + float(np.clip(frac, -0.5, 0.5)) * step
    return VelocityLag(lag=lag, correlation=peak, gain=gain, at_limit=at_limit, step=step,
                       max_lag=max_lag)
