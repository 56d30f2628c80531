"""Joint trajectories for a tracking controller: sampled (CSV, trajectory_msgs) or sinusoidal,
evaluated at any time with position, velocity and acceleration.

What ``trajectory_tracker`` plays (a stand-in for ros2_controllers' joint_trajectory_controller):

* :class:`SampledTrajectory` — waypoints ``t, q[, v[, a]]`` interpolated piecewise-polynomially
  like joint_trajectory_controller does: quintic Hermite segments when positions, velocities and
  accelerations are given (C², exact at the waypoints), cubic Hermite with positions and
  velocities (C¹), a C² cubic spline with positions only (not-a-knot ends: the waypoints'
  own velocities, which need not be zero; write velocities to make the ends rest);
* :class:`SineTrajectory` — ``q_j(t) = center_j − A_j·cos(2π f_j t)``: starts at rest at
  ``center − A``; the velocity reverses every ``1/(2 f_j)`` s (the moments a friction
  compensator is tested at);
* :func:`minimum_jerk` — the rest-to-rest approach from where the arm is to the trajectory's first
  point (``10s³ − 15s⁴ + 6s⁵``).

Evaluation (:meth:`SampledTrajectory.sample`) writes into preallocated arrays: a segment lookup
that advances from the previous one (O(1) for increasing times) and a Horner loop, no allocation
per call. Before the first waypoint the trajectory holds its first point, after the last its last
point (velocity and acceleration zero). :func:`read_trajectory_csv` reads the CSV that
``fric excite`` writes (a time column and one position column per joint, optional velocity and
acceleration columns); every problem is a ``ValueError`` naming the file, line and column.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import Sequence

import numpy as np

__all__ = ["SampledTrajectory", "SineTrajectory", "minimum_jerk", "read_trajectory_csv",
           "trajectory_from_points"]

_TIME_COLUMNS = ("t", "time", "time_from_start", "t [s]", "time [s]")


class SampledTrajectory:
    """Waypoints interpolated piecewise-polynomially (see the module docstring).

    Parameters
    ----------
    t : (m,) array
        Waypoint times [s], strictly increasing, m ≥ 2.
    q : (m, n) array
        Joint positions at the waypoints [rad].
    v, a : (m, n) arrays, optional
        Joint velocities [rad/s] and accelerations [rad/s²] at the waypoints (``a`` needs ``v``).
    joint_names : sequence of str, optional
        The joints, in column order.
    """

    def __init__(self, t, q, v=None, a=None, joint_names: Sequence[str] | None = None):
        from scipy.interpolate import BPoly, CubicHermiteSpline, CubicSpline

        t = np.asarray(t, dtype=float)
        q = np.asarray(q, dtype=float)
        if q.ndim == 1:
            q = q[:, None]
        if t.ndim != 1 or t.size < 2:
            raise ValueError(f"t: need at least 2 waypoint times, got {t.size}")
        if q.shape[0] != t.size:
            raise ValueError(f"q: {q.shape[0]} rows for {t.size} times")
        for name, arr in (("t", t), ("q", q)):
            if not np.isfinite(arr).all():
                raise ValueError(f"{name}: non-finite value")
        if not (np.diff(t) > 0).all():
            i = int(np.argmax(np.diff(t) <= 0))
            raise ValueError(f"t: times must increase strictly (waypoint {i + 1}: {t[i + 1]:g} "
                             f"after {t[i]:g})")
        n = q.shape[1]
        arrays = {}
        for name, arr in (("v", v), ("a", a)):
            if arr is None:
                continue
            arr = np.asarray(arr, dtype=float).reshape(q.shape[0], -1)
            if arr.shape != q.shape:
                raise ValueError(f"{name}: shape {arr.shape}, q has {q.shape}")
            if not np.isfinite(arr).all():
                raise ValueError(f"{name}: non-finite value")
            arrays[name] = arr
        if "a" in arrays and "v" not in arrays:
            raise ValueError("a: accelerations need velocities too")
        if "a" in arrays:
            y = np.stack([q, arrays["v"], arrays["a"]], axis=1)  # (m, 3, n)
            pp = [BPoly.from_derivatives(t, y[:, :, j]) for j in range(n)]
            coeffs = [_ppoly_coefficients(p) for p in pp]
            c = np.stack(coeffs, axis=-1)  # (k, m-1, n)
        elif "v" in arrays:
            c = CubicHermiteSpline(t, q, arrays["v"], axis=0).c
        else:
            c = CubicSpline(t, q, axis=0, bc_type="not-a-knot").c
        self.t = t
        self.n = n
        self.joint_names = list(joint_names) if joint_names is not None else \
            [f"joint{i + 1}" for i in range(n)]
        if len(self.joint_names) != n:
            raise ValueError(f"joint_names: {len(self.joint_names)} names for {n} columns")
        k = c.shape[0]
        # Horner coefficients, highest power first, per segment: (segments, k, n)
        self._c = np.ascontiguousarray(np.moveaxis(c, 1, 0))
        powers = np.arange(k - 1, -1, -1, dtype=float)
        self._dc = self._c[:, :-1, :] * powers[:-1, None]
        self._ddc = self._dc[:, :-1, :] * powers[1:-1, None]
        self._q_end = q[-1].copy()
        self._q_start = q[0].copy()
        self._seg = 0

    @property
    def duration(self) -> float:
        """Time of the last waypoint minus that of the first [s]."""
        return float(self.t[-1] - self.t[0])

    @property
    def start_time(self) -> float:
        """Time of the first waypoint [s]: :meth:`sample` at ``start_time + s`` is ``s`` into the
        trajectory."""
        return float(self.t[0])

    def start(self) -> np.ndarray:
        """The position at the first waypoint (a copy)."""
        return self._q_start.copy()

    def boundary_states(self) -> tuple[np.ndarray, np.ndarray]:
        """``(first, last)``, each (3, n) rows q, v, a: the interpolant just after the first
        waypoint and just before the last (its own derivatives there, where :meth:`sample` holds
        the ends at rest)."""
        c, dc, ddc = self._c, self._dc, self._ddc
        first = np.stack([c[0, -1], dc[0, -1], ddc[0, -1]])  # s = 0: the constant terms
        s = float(self.t[-1] - self.t[-2])
        last = np.zeros((3, self.n))
        for row, coef in zip(last, (c[-1], dc[-1], ddc[-1])):
            _horner(coef, s, row)
        return first, last

    def peaks(self, points_per_segment: int = 8) -> tuple[np.ndarray, np.ndarray]:
        """Per joint the largest |velocity| and |acceleration| of the interpolant, evaluated at
        the waypoints and ``points_per_segment`` evenly spaced times inside each segment."""
        h = np.diff(self.t)
        frac = np.linspace(0.0, 1.0, points_per_segment + 2)
        s = h[:, None] * frac[None, :]  # (segments, points)
        vmax, amax = np.zeros(self.n), np.zeros(self.n)
        for coef, out in ((self._dc, vmax), (self._ddc, amax)):
            val = np.zeros(s.shape + (self.n,))
            for row in np.moveaxis(coef, 1, 0):  # Horner over all segments and points at once
                val *= s[..., None]
                val += row[:, None, :]
            np.max(np.abs(val), axis=(0, 1), out=out)
        return vmax, amax

    def sample(self, t: float, q: np.ndarray, v: np.ndarray, a: np.ndarray) -> None:
        """Write position, velocity and acceleration at time ``t`` (same time base as the
        waypoints) into ``q``, ``v``, ``a`` (each shape (n,)); no allocation."""
        tt = self.t
        if t <= tt[0]:
            q[:] = self._q_start
            v[:] = 0.0
            a[:] = 0.0
            return
        if t >= tt[-1]:
            q[:] = self._q_end
            v[:] = 0.0
            a[:] = 0.0
            return
        i = self._seg
        if not tt[i] <= t < tt[i + 1]:
            if tt[i + 1] <= t < (tt[i + 2] if i + 2 < tt.size else math.inf):
                i += 1
            else:
                i = int(np.searchsorted(tt, t, side="right")) - 1
            self._seg = i
        s = t - tt[i]
        _horner(self._c[i], s, q)
        _horner(self._dc[i], s, v)
        _horner(self._ddc[i], s, a)


def _ppoly_coefficients(bp) -> np.ndarray:
    from scipy.interpolate import PPoly

    return PPoly.from_bernstein_basis(bp).c


def _horner(c: np.ndarray, s: float, out: np.ndarray) -> None:
    out[:] = c[0]
    for row in c[1:]:
        out *= s
        out += row


class SineTrajectory:
    """``q_j(t) = center_j − A_j·cos(2π f_j t)`` for ``0 ≤ t ≤ duration`` (rest at t = 0).

    Parameters
    ----------
    center, amplitude, frequency : sequences of float, one per joint
        Centre [rad], amplitude A ≥ 0 [rad] and frequency f > 0 [Hz].
    duration : float
        Length [s]; after it the trajectory holds the position it reached (velocity and
        acceleration zero; choose a whole number of periods to end at rest).
    joint_names : sequence of str, optional
        The joints.
    """

    def __init__(self, center, amplitude, frequency, duration: float,
                 joint_names: Sequence[str] | None = None):
        c = np.atleast_1d(np.asarray(center, dtype=float))
        n = c.size
        amp = np.broadcast_to(np.asarray(amplitude, dtype=float), (n,)).copy()
        f = np.broadcast_to(np.asarray(frequency, dtype=float), (n,)).copy()
        for name, arr in (("center", c), ("amplitude", amp), ("frequency", f)):
            if not np.isfinite(arr).all():
                raise ValueError(f"{name}: non-finite value")
        if (amp < 0).any():
            raise ValueError("amplitude: must be >= 0")
        if (f <= 0).any():
            raise ValueError("frequency: must be > 0")
        if not (math.isfinite(duration) and duration > 0):
            raise ValueError(f"duration: must be > 0, got {duration!r}")
        self.center, self.amplitude, self.omega = c, amp, 2.0 * math.pi * f
        self.n = n
        self._duration = float(duration)
        self.joint_names = list(joint_names) if joint_names is not None else \
            [f"joint{i + 1}" for i in range(n)]
        self._end = np.zeros((3, n))
        self._at(self._duration, self._end[0], self._end[1], self._end[2])
        self._end[1:] = 0.0

    @property
    def duration(self) -> float:
        """The length [s]."""
        return self._duration

    @property
    def start_time(self) -> float:
        """0: the sinusoid's time is the time into it."""
        return 0.0

    def start(self) -> np.ndarray:
        """The position at t = 0: ``center − A``."""
        return self.center - self.amplitude

    def boundary_states(self) -> tuple[np.ndarray, np.ndarray]:
        """``(first, last)``, each (3, n) rows q, v, a: the sinusoid at t = 0⁺ (at rest,
        acceleration A ω²) and at ``duration``⁻ (where :meth:`sample` holds the end at rest)."""
        first, last = np.zeros((3, self.n)), np.zeros((3, self.n))
        self._at(0.0, *first)
        self._at(self._duration, *last)
        return first, last

    def peaks(self) -> tuple[np.ndarray, np.ndarray]:
        """Per joint the largest |velocity| and |acceleration| over ``[0, duration]``: A ω (or
        A ω sin(ω T) when T is shorter than a quarter period) and A ω² (at t = 0)."""
        wt = self.omega * self._duration
        vmax = self.amplitude * self.omega * np.where(wt >= 0.5 * math.pi, 1.0, np.sin(wt))
        return vmax, self.amplitude * self.omega * self.omega

    def _at(self, t: float, q: np.ndarray, v: np.ndarray, a: np.ndarray) -> None:
        np.multiply(self.omega, t, out=a)
        np.sin(a, out=v)
        np.cos(a, out=q)
        v *= self.amplitude
        v *= self.omega
        q *= self.amplitude
        np.multiply(q, self.omega, out=a)
        a *= self.omega
        np.subtract(self.center, q, out=q)

    def sample(self, t: float, q: np.ndarray, v: np.ndarray, a: np.ndarray) -> None:
        """Write position, velocity and acceleration at ``t`` into ``q``, ``v``, ``a``."""
        if t <= 0.0:
            q[:] = self.center - self.amplitude
            v[:] = 0.0
            a[:] = 0.0
        elif t >= self._duration:
            q[:], v[:], a[:] = self._end
        else:
            self._at(t, q, v, a)


def minimum_jerk(q_from: np.ndarray, q_to: np.ndarray, duration: float, t: float,
                 q: np.ndarray, v: np.ndarray, a: np.ndarray) -> None:
    """The rest-to-rest minimum-jerk move ``q_from → q_to`` in ``duration``, at time ``t``.

    Parameters
    ----------
    q_from, q_to : (n,) arrays
        Start and end positions.
    duration : float
        Length of the move [s] (> 0).
    t : float
        Time since the start of the move [s]; clipped to [0, duration].
    q, v, a : (n,) arrays
        Outputs: position, velocity, acceleration (written in place).

    Returns
    -------
    None
        The outputs are written into ``q``, ``v``, ``a``.
    """
    s = min(max(t / duration, 0.0), 1.0)
    p = s * s * s * (10.0 + s * (-15.0 + 6.0 * s))
    dp = 30.0 * s * s * (1.0 - s) * (1.0 - s) / duration
    ddp = 60.0 * s * (1.0 - s) * (1.0 - 2.0 * s) / (duration * duration)
    np.subtract(q_to, q_from, out=a)
    np.multiply(a, dp, out=v)
    np.multiply(a, p, out=q)
    q += q_from
    a *= ddp


def trajectory_from_points(joint_names: Sequence[str], times: Sequence[float],
                           positions: Sequence[Sequence[float]],
                           velocities: Sequence[Sequence[float]] | None = None,
                           accelerations: Sequence[Sequence[float]] | None = None
                           ) -> SampledTrajectory:
    """A :class:`SampledTrajectory` from trajectory_msgs/JointTrajectory-like points.

    Parameters
    ----------
    joint_names : sequence of str
        The joints, in the points' column order.
    times : sequence of float
        ``time_from_start`` of each point [s]. When the first is > 0 the arm's start is not a
        waypoint: the trajectory starts at the first point.
    positions : sequence of sequences
        One position per joint per point [rad].
    velocities, accelerations : sequences of sequences, optional
        Per point; empty or None = not given (every point must give them, or none).

    Returns
    -------
    SampledTrajectory
        The interpolated trajectory; ``ValueError`` naming the point for a malformed one.
    """
    n = len(joint_names)
    if n == 0:
        raise ValueError("joint_names: empty")
    if len(set(joint_names)) != n:
        raise ValueError(f"joint_names: duplicates in {list(joint_names)}")
    if len(times) < 2:
        raise ValueError(f"points: need at least 2, got {len(times)}")

    def table(name, rows, required):
        if rows is None:
            return None
        given = [len(r) > 0 for r in rows]
        if not any(given) and not required:
            return None
        for i, r in enumerate(rows):
            if len(r) != n:
                raise ValueError(f"points[{i}].{name}: {len(r)} values for {n} joints")
        return np.asarray(rows, dtype=float)

    q = table("positions", positions, True)
    v = table("velocities", velocities, False)
    a = table("accelerations", accelerations, False) if v is not None else None
    return SampledTrajectory(np.asarray(times, dtype=float), q, v, a, joint_names)


def read_trajectory_csv(path, joint_names: Sequence[str] | None = None) -> SampledTrajectory:
    """Read a joint trajectory CSV (e.g. written by ``fric excite``).

    The first row names the columns: a time column (``t``, ``time`` or ``time_from_start``,
    seconds), and per joint a position column (``<joint>``, ``<joint>.position`` or
    ``position.<joint>``), optionally ``<joint>.velocity`` and ``<joint>.acceleration`` (or
    ``velocity.<joint>``, ``acceleration.<joint>``). Lines starting with ``#`` are comments.

    Parameters
    ----------
    path : str or Path
        The CSV file.
    joint_names : sequence of str, optional
        The joints to read, in this order; None = every position column in file order.

    Returns
    -------
    SampledTrajectory
        The trajectory. ``ValueError`` naming the file, line and column for a missing file, a
        missing column, a value that is not a finite number, or times that do not increase.
    """
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as e:
        raise ValueError(f"{path}: cannot read: {e.strerror or e}") from None
    rows = [(i + 1, r) for i, r in enumerate(csv.reader(text.splitlines()))
            if r and not r[0].lstrip().startswith("#")]
    if not rows:
        raise ValueError(f"{path}: empty (no header row)")
    header_line, header = rows[0]
    cols = [h.strip() for h in header]
    index = {c: k for k, c in enumerate(cols)}
    tcol = next((index[c] for c in _TIME_COLUMNS if c in index), None)
    if tcol is None:
        raise ValueError(f"{path}:{header_line}: no time column (one of "
                         f"{', '.join(_TIME_COLUMNS[:3])}) in the header {cols}")

    def column(joint, kind):
        for c in ((f"{joint}.{kind}", f"{kind}.{joint}", f"{joint}/{kind}")
                  + ((joint,) if kind == "position" else ())):
            if c in index:
                return index[c]
        return None

    if joint_names is None:
        found = []
        for c in cols:
            if cols.index(c) == tcol:
                continue
            for kind in ("velocity", "acceleration", "effort"):
                if c.endswith(f".{kind}") or c.startswith(f"{kind}.") or c.endswith(f"/{kind}"):
                    break
            else:
                found.append(c[:-len(".position")] if c.endswith(".position") else
                             c[len("position."):] if c.startswith("position.") else c)
        joint_names = found
    if not joint_names:
        raise ValueError(f"{path}:{header_line}: no joint position columns in {cols}")
    pos = []
    for j in joint_names:
        k = column(j, "position")
        if k is None:
            raise ValueError(f"{path}:{header_line}: no position column for joint {j!r} "
                             f"(columns: {cols})")
        pos.append(k)
    vel = [column(j, "velocity") for j in joint_names]
    acc = [column(j, "acceleration") for j in joint_names]
    use_v = all(k is not None for k in vel)
    use_a = use_v and all(k is not None for k in acc)
    wanted = [tcol] + pos + (vel if use_v else []) + (acc if use_a else [])
    data = np.empty((len(rows) - 1, len(wanted)))
    for r, (line, row) in enumerate(rows[1:]):
        for c, k in enumerate(wanted):
            if k >= len(row):
                raise ValueError(f"{path}:{line}: {len(row)} values, column {cols[k]!r} "
                                 f"missing")
            try:
                x = float(row[k])
            except ValueError:
                raise ValueError(f"{path}:{line}: column {cols[k]!r}: {row[k]!r} is not a "
                                 "number") from None
            if not math.isfinite(x):
                raise ValueError(f"{path}:{line}: column {cols[k]!r}: {row[k]!r} is not "
                                 "finite")
            data[r, c] = x
    if data.shape[0] < 2:
        raise ValueError(f"{path}: {data.shape[0]} data rows; a trajectory needs at least 2")
    n = len(joint_names)
    t = data[:, 0]
    bad = np.flatnonzero(np.diff(t) <= 0)
    if bad.size:
        line = rows[1 + bad[0] + 1][0]
        raise ValueError(f"{path}:{line}: time {t[bad[0] + 1]:g} does not increase (previous "
                         f"{t[bad[0]]:g})")
    q = data[:, 1:1 + n]
    v = data[:, 1 + n:1 + 2 * n] if use_v else None
    a = data[:, 1 + 2 * n:1 + 3 * n] if use_a else None
    return SampledTrajectory(t, q, v, a, joint_names)
