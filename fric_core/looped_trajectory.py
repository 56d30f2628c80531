"""A joint trajectory played several times back to back, continuous at every seam.

``trajectory_tracker``'s ``loops``: replaying a trajectory whose end is not its start (a
sinusoid over 1.5 periods ends at ``center + A``, having started at ``center − A``) by wrapping
the time alone steps the setpoint at every seam — a 2A position step, which the PD turns into a
torque step clipped at the effort bound. :class:`LoopedTrajectory` instead

* plays the trajectory back to back when it is **periodic at the seam**: the end state
  (position, velocity just before the last point) equals the start state (just after the first)
  within ``position_tolerance`` and ``velocity_tolerance`` (an excitation of ``fric excite``: a
  whole period of a Fourier series, at rest at both ends);
* otherwise inserts a **return segment** between plays: per joint the quintic polynomial from
  the end state (q, q̇, q̈) to the start state, so position, velocity and acceleration are
  continuous at both seams, of the shortest duration (on a geometric grid, 2.7 % apart) whose
  speed and acceleration stay within the trajectory's own peaks (``peaks()``: the return moves
  no faster and accelerates no harder than the trajectory itself). Where no duration keeps the
  acceleration within them (boundary accelerations that a slow return cannot match), the return
  starts and ends with zero acceleration instead (position and velocity continuous, an
  acceleration step at the seams, as at the start of a sinusoid), which a long enough return
  always allows.

Sampling (:meth:`LoopedTrajectory.sample`) writes into preallocated arrays without allocating,
like the trajectories it wraps; after the last play the trajectory's end is held at rest.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

__all__ = ["LoopedTrajectory", "quintic_coefficients", "POSITION_TOLERANCE",
           "VELOCITY_TOLERANCE"]

#: A seam is continuous when the end and start positions differ by at most this [rad or m] ...
POSITION_TOLERANCE = 1e-6
#: ... and their velocities by at most this [rad/s or m/s].
VELOCITY_TOLERANCE = 1e-4
#: Candidate return-segment durations [s] (geometric, ratio 1.027).
_DURATIONS = np.geomspace(1e-3, 1e4, 600)
#: Points per candidate where the return segment's speed and acceleration are evaluated.
_GRID = np.linspace(0.0, 1.0, 201)
#: Relative slack of the limit check (rounding: the ends of the segment sit on the limits when
#: the trajectory's peak speed or acceleration is at its end or start).
_SLACK = 1e-9


class Trajectory(Protocol):
    """What :class:`LoopedTrajectory` needs of the trajectory it plays
    (:class:`~fric_core.trajectory.SampledTrajectory`,
    :class:`~fric_core.trajectory.SineTrajectory`)."""

    n: int
    joint_names: list

    @property
    def duration(self) -> float: ...

    @property
    def start_time(self) -> float: ...

    def start(self) -> np.ndarray: ...

    def sample(self, t: float, q: np.ndarray, v: np.ndarray, a: np.ndarray) -> None: ...

    def boundary_states(self) -> tuple[np.ndarray, np.ndarray]: ...

    def peaks(self) -> tuple[np.ndarray, np.ndarray]: ...


def quintic_coefficients(begin: np.ndarray, end: np.ndarray, duration) -> np.ndarray:
    """Coefficients of the quintic from ``begin`` to ``end`` in ``duration``.

    Parameters
    ----------
    begin, end : (3, n) arrays
        Rows position, velocity, acceleration at the start and at the end.
    duration : float or (k,) array
        The segment's length T > 0 [s].

    Returns
    -------
    ndarray
        Shape (6, n), or (k, 6, n) for an array of durations: highest power first (Horner
        order), in the time since the segment's start.
    """
    T = np.asarray(duration, dtype=float)[..., None]  # (k, 1) or (1,)
    q0, v0, a0 = begin
    q1, v1, a1 = end
    d = q1 - q0
    c3 = (20.0 * d - (8.0 * v1 + 12.0 * v0) * T - (3.0 * a0 - a1) * T**2) / (2.0 * T**3)
    c4 = (-30.0 * d + (14.0 * v1 + 16.0 * v0) * T + (3.0 * a0 - 2.0 * a1) * T**2) / (2.0 * T**4)
    c5 = (12.0 * d - 6.0 * (v1 + v0) * T + (a1 - a0) * T**2) / (2.0 * T**5)
    shape = c3.shape
    return np.stack([c5, c4, c3, np.broadcast_to(0.5 * a0, shape),
                     np.broadcast_to(v0, shape), np.broadcast_to(q0, shape)], axis=-2)


def _peaks(coef: np.ndarray, durations: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Largest |velocity| and |acceleration| per candidate and joint, (k, n) each, of quintics
    ``coef`` (k, 6, n) over their durations (k,), on :data:`_GRID`."""
    powers = np.arange(5, -1, -1, dtype=float)
    dc = coef[:, :-1, :] * powers[None, :-1, None]
    ddc = dc[:, :-1, :] * powers[None, 1:-1, None]
    s = durations[:, None] * _GRID[None, :]  # (k, points)
    out = []
    for c in (dc, ddc):
        val = np.zeros(s.shape + (coef.shape[-1],))
        for row in np.moveaxis(c, 1, 0):
            val *= s[..., None]
            val += row[:, None, :]
        out.append(np.abs(val).max(axis=1))
    return out[0], out[1]


def _shortest_return(begin, end, vlim, alim) -> float | None:
    """The shortest candidate duration whose quintic ``begin`` → ``end`` keeps every joint's
    speed and acceleration within ``vlim``, ``alim`` (on :data:`_GRID`); None if none."""
    coef = quintic_coefficients(begin, end, _DURATIONS)
    vpk, apk = _peaks(coef, _DURATIONS)
    # a joint whose limits are 0 does not move in the trajectory (its seam has nothing to cross)
    ok = ((vpk <= (1.0 + _SLACK) * vlim + 1e-12)
          & (apk <= (1.0 + _SLACK) * alim + 1e-12)).all(axis=1)
    k = np.flatnonzero(ok)
    return float(_DURATIONS[k[0]]) if k.size else None


class LoopedTrajectory:
    """``trajectory`` played ``loops`` times, continuous at every seam (module docstring).

    Parameters
    ----------
    trajectory : SampledTrajectory or SineTrajectory
        What is played; its :meth:`sample` at ``start_time + s`` is ``s`` into it.
    loops : int
        Times it is played (≥ 1).
    position_tolerance, velocity_tolerance : float
        The seam is continuous (no return segment) when every joint's end and start differ by
        at most these [rad, rad/s].

    Attributes
    ----------
    return_time : float
        Length of the return segment between plays [s]; 0 when played back to back.
    seam_gap : (2, n) array
        Per joint start − end: position, velocity.
    matches_acceleration : bool
        The return segment also matches the accelerations at both seams (C²).
    """

    def __init__(self, trajectory: Trajectory, loops: int = 1, *,
                 position_tolerance: float = POSITION_TOLERANCE,
                 velocity_tolerance: float = VELOCITY_TOLERANCE):
        loops = int(loops)
        if loops < 1:
            raise ValueError(f"loops: must be >= 1, got {loops}")
        self.trajectory = trajectory
        self.loops = loops
        self.n = trajectory.n
        self.joint_names = trajectory.joint_names
        self._t0 = trajectory.start_time
        self._played = trajectory.duration
        first, last = trajectory.boundary_states()
        self._first = first
        self.seam_gap = first[:2] - last[:2]
        self.continuous = bool((np.abs(self.seam_gap[0]) <= position_tolerance).all()
                               and (np.abs(self.seam_gap[1]) <= velocity_tolerance).all())
        self.return_time = 0.0
        self.matches_acceleration = True
        n = self.n
        self._c = np.zeros((6, n))
        if loops > 1 and not self.continuous:
            self._plan_return(first, last)
        powers = np.arange(5, -1, -1, dtype=float)
        self._dc = self._c[:-1] * powers[:-1, None]
        self._ddc = self._dc[:-1] * powers[1:-1, None]
        self._period = self._played + self.return_time
        self._duration = loops * self._played + (loops - 1) * self.return_time

    def _plan_return(self, first: np.ndarray, last: np.ndarray) -> None:
        vlim, alim = self.trajectory.peaks()
        T = _shortest_return(last, first, vlim, alim)
        if T is None:  # the boundary accelerations cannot be matched within the limits
            self.matches_acceleration = False
            rest_a = [np.zeros((3, self.n)) for _ in range(2)]
            for src, dst in zip((last, first), rest_a):
                dst[:2] = src[:2]
            last, first = rest_a
            T = _shortest_return(last, first, vlim, alim)
        if T is None:  # not reached: zero accelerations are feasible for a long enough T
            raise ValueError("loops: no return segment within the trajectory's own speed and "
                             "acceleration peaks")
        self.return_time = T
        self._c[:] = quintic_coefficients(last, first, T)

    @property
    def duration(self) -> float:
        """All the plays and the return segments between them [s]."""
        return self._duration

    def start(self) -> np.ndarray:
        """The position the first play starts from (a copy)."""
        return self.trajectory.start()

    def sample(self, t: float, q: np.ndarray, v: np.ndarray, a: np.ndarray) -> None:
        """Write position, velocity and acceleration ``t`` seconds into the plays (before 0:
        the start, held; after :attr:`duration`: the end, held at rest); no allocation."""
        traj = self.trajectory
        if t >= self._duration:
            traj.sample(self._t0 + self._played, q, v, a)
            return
        if t <= 0.0:
            traj.sample(self._t0, q, v, a)
            return
        k, r = divmod(t, self._period)
        if r < self._played:
            if r == 0.0:  # a seam, exactly: the state just after the first point
                q[:], v[:], a[:] = self._first
            else:
                traj.sample(self._t0 + r, q, v, a)
            return
        if k >= self.loops - 1:  # rounding at the very end
            traj.sample(self._t0 + self._played, q, v, a)
            return
        s = r - self._played
        _horner(self._c, s, q)
        _horner(self._dc, s, v)
        _horner(self._ddc, s, a)

    def describe(self) -> str:
        """One line on how the plays are joined (for the log)."""
        if self.loops == 1:
            return "played once"
        if self.continuous:
            return (f"{self.loops} plays back to back (its end meets its start within "
                    f"{POSITION_TOLERANCE:g} rad and {VELOCITY_TOLERANCE:g} rad/s)")
        worst = int(np.argmax(np.abs(self.seam_gap[0]) + np.abs(self.seam_gap[1])))
        dq, dv = (0.0 if abs(x) < 1e-12 else -x for x in self.seam_gap[:, worst])  # rounding
        gap = f"{self.joint_names[worst]} {dq:+.4g} rad, {dv:+.4g} rad/s"
        how = ("position, velocity and acceleration continuous" if self.matches_acceleration
               else "position and velocity continuous, zero acceleration at the seams")
        return (f"{self.loops} plays; its end is not its start (end - start: {gap}): a "
                f"{self.return_time:.3g} s return segment between plays (quintic, {how}, speed "
                "and acceleration within the trajectory's own peaks)")


def _horner(c: np.ndarray, s: float, out: np.ndarray) -> None:
    out[:] = c[0]
    for row in c[1:]:
        out *= s
        out += row

