"""Excitation trajectories for arm identification: band-limited Fourier series per joint,
optimised for the condition number of the identification design (``fric excite``; issue 15).

Swevers, Ganseman, Tükel, De Schutter & Van Brussel, "Optimal robot excitation and identification"
(IEEE T-RA 13(5), 1997): each joint follows a finite Fourier series of fundamental ω_f = 2π/T,

    q_j(t) = q0_j + Σ_{k=1..K} a_jk/(k ω_f) sin(k ω_f t) − b_jk/(k ω_f) cos(k ω_f t),
    q̇_j(t) = Σ_k a_jk cos(k ω_f t) + b_jk sin(k ω_f t),
    q̈_j(t) = Σ_k k ω_f (−a_jk sin(k ω_f t) + b_jk cos(k ω_f t)),

periodic with period T and band-limited to K/T Hz (so the zero-phase filter of :mod:`.signals`,
far above that band, passes it unchanged, and repeating periods averages noise). Here:

* **At rest at the ends**: ``Σ_k a_jk = 0`` (q̇(0) = 0) and ``Σ_k k·b_jk = 0`` (q̈(0) = 0); by
  periodicity also at every multiple of T. The coefficients live in the null space of these two
  constraints (K − 1 free values each for a and b per joint), so they hold exactly.
* **Limits, exactly**: a shape (the coefficients) is scaled per joint by the largest factor that
  keeps the position within ``[lower + margin, upper − margin]`` (centred by q0), |q̇| ≤
  ``max_velocity`` and |q̈| ≤ ``max_acceleration``, evaluated on the written samples and a dense
  grid; the trajectory therefore uses the whole feasible range (maximal excitation).
* **Optimised**: the design of the fit (:mod:`.fit`) — the base-parameter rigid-body regressor
  ``Y_b(q, q̇, q̈)`` (:func:`~.regressor.base_parameters`) beside the friction columns
  (:func:`~.regressor.friction_columns`, rows inside the Δv band left out), each column scaled
  to unit norm (the equilibration that makes cond independent of units) — has its condition
  number minimised over the shapes by a (1+1) evolution strategy (Gaussian steps, step size
  adapted by the 1/5 success rule) from the best of a few random starts, within ``max_time``
  seconds or ``iterations`` evaluations. Cond bounds how much relative noise in the torques is
  amplified in the parameters, ``‖δθ‖/‖θ‖ ≤ cond · ‖δτ‖/‖τ‖``. It is one function,
  :mod:`.conditioning`, for both tools: ``fric identify`` reports the same figure on the
  recorded motion. A rigid-body direction no motion determines (a prismatic lift's load) is held
  as the fit holds it, so it does not make every shape's figure infinite.
* **Which joints** (:func:`excitable_joints`): ``<mimic>`` joints follow their master and are
  not moved on their own; a joint whose range is not wider than twice the margin cannot be
  moved. ``fric excite`` leaves both out (saying which and why) and holds them, like every joint
  not moved, at 0, or mid-range where 0 is not inside the limits by the margin
  (:func:`rest_positions`, the arm chain's rule).

Files: :func:`write_excitation_csv` / :func:`read_excitation_csv` (``t``, ``<joint>.position``,
``.velocity``, ``.acceleration``; the format of :mod:`.recording`'s CSV, which
``trajectory_tracker`` plays), :func:`trajectory_message` / :func:`write_trajectory_yaml` (a
trajectory_msgs/JointTrajectory as YAML for ``ros2 topic pub``) and :func:`write_trajectory_bag`
(the same message in an MCAP bag for ``ros2 bag play``).
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np
import scipy.linalg

from .conditioning import DESIGN_SAMPLES, conditioning, design_normal_matrix
from .recording import _write_columns, read_joint_csv
from .regressor import base_parameters

__all__ = ["ExcitationTrajectory", "generate_excitation", "design_condition",
           "excitable_joints", "rest_positions",
           "write_excitation_csv", "read_excitation_csv", "trajectory_message",
           "write_trajectory_yaml", "write_trajectory_bag", "JTC_TOPIC", "MAX_ARG_BYTES",
           "MAX_PERIOD", "MAX_RATE", "MAX_SAMPLES", "MAX_HARMONICS", "MAX_TIME"]

#: joint_trajectory_controller's command topic (its default name).
JTC_TOPIC = "/joint_trajectory_controller/joint_trajectory"
#: Longest single command-line argument on Linux (MAX_ARG_STRLEN, 32 pages): the YAML given to
#: ``ros2 topic pub ... "$(cat trajectory.yaml)"`` must be shorter.
MAX_ARG_BYTES = 131072
#: Longest period [s] (an hour: an identification run is minutes long).
MAX_PERIOD = 3600.0
#: Highest sampling rate of the written trajectory [Hz] (a 10 kHz control loop).
MAX_RATE = 10_000.0
#: Most samples written (periods × period × rate): 1000 s at 1 kHz, 3 × 8 B × n per sample in
#: memory (168 MB for 7 joints) and ~22 numbers per row in the CSV.
MAX_SAMPLES = 1_000_000
#: Most harmonics: the optimisation searches 2 (K − 1) n shape values, and the limit check
#: evaluates 40 K points per period.
MAX_HARMONICS = 50
#: Longest optimisation budget [s].
MAX_TIME = 600.0
_OPT_SAMPLES = 60  # samples per period in the optimisation's design (7 rows each for arm7)
_DENSE = 40  # grid points per period of the highest harmonic for the limit check
_SAFETY = 1.0 - 1e-9  # the scale stays this far inside the binding limit (rounding)


@dataclass
class ExcitationTrajectory:
    """An excitation trajectory sampled for playing.

    ``t`` (N,) [s] from 0 over ``periods`` periods; ``q``, ``v``, ``a`` (N, n) [rad, rad/s,
    rad/s²]; ``joint_names``; ``cond``: condition number of the column-equilibrated
    identification design over one period of the motion (:func:`design_condition` on
    :data:`~.conditioning.DESIGN_SAMPLES` samples; the figure ``fric identify`` reports on a
    recording of it; NaN when unknown);
    ``period`` T [s]; ``cond_initial``: that of the first random shape (what optimising gained);
    ``coefficients``: ``{"a", "b"}`` (n, K) and ``"q0"`` (n,) of the series (module docstring),
    None when read from samples only; ``limits``: the limits it was scaled into.
    """

    t: np.ndarray
    q: np.ndarray
    v: np.ndarray
    a: np.ndarray
    joint_names: tuple
    cond: float
    period: float
    cond_initial: float = math.nan
    coefficients: dict | None = None
    limits: dict = field(default_factory=dict)

    @property
    def harmonics(self) -> int:
        """K, the number of harmonics (0 when the coefficients are unknown)."""
        return 0 if self.coefficients is None else int(np.shape(self.coefficients["a"])[1])

    @property
    def bandwidth_hz(self) -> float:
        """Highest frequency K/T [Hz] (NaN when the coefficients are unknown)."""
        return self.harmonics / self.period if self.harmonics else math.nan

    def at(self, t) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Position, velocity, acceleration at times ``t`` [s] (each (len(t), n)): the series
        itself, periodic, when the coefficients are known; else linear interpolation of the
        samples (held at the ends). At multiples of the period v and a are exactly 0."""
        t = np.atleast_1d(np.asarray(t, dtype=float))
        if self.coefficients is not None:
            c = self.coefficients
            q, v, a = _series(np.asarray(c["a"]), np.asarray(c["b"]), np.asarray(c["q0"]),
                              2 * np.pi / self.period, t)
            phase = np.abs(np.remainder(t / self.period + 0.5, 1.0) - 0.5)
            rest = phase < 1e-12  # at rest there by construction; zero the rounding
            v[rest] = 0.0
            a[rest] = 0.0
            return q, v, a
        cols = [np.column_stack([np.interp(t, self.t, x[:, j]) for j in range(x.shape[1])])
                for x in (self.q, self.v, self.a)]
        return cols[0], cols[1], cols[2]


def _series(a, b, q0, w, t):
    """q, v, acc (len(t), n) of the series with coefficients a, b (n, K) and offset q0."""
    k = np.arange(1, a.shape[1] + 1) * w
    S, C = np.sin(np.outer(k, t)), np.cos(np.outer(k, t))
    q = (a / k) @ S - (b / k) @ C + q0[:, None]
    v = a @ C + b @ S
    acc = (-a * k) @ S + (b * k) @ C
    return q.T, v.T, acc.T


def _per_joint(name, value, n, positive=True):
    arr = np.broadcast_to(np.asarray(value, dtype=float), (n,)).copy() if np.ndim(value) == 0 \
        else np.asarray(value, dtype=float)
    if arr.shape != (n,):
        raise ValueError(f"{name}: expected a number or {n} values (one per joint), got shape "
                         f"{arr.shape}")
    if not np.all(np.isfinite(arr)) or (positive and np.any(arr <= 0.0)) or np.any(arr < 0.0):
        raise ValueError(f"{name}: expected finite values {'> 0' if positive else '>= 0'}, got "
                         f"{arr.tolist()}")
    return arr


def excitable_joints(dyn, margin=0.1, mimic=None) -> tuple:
    """Which joints an excitation can move, and why the others cannot.

    Parameters
    ----------
    dyn : fric_core.transmission.urdf_dynamics.UrdfDynamics
        The arm with every candidate joint.
    margin : float or (n,) array_like
        Distance kept from each position limit [rad; m for a prismatic joint].
    mimic : mapping, optional
        Mimic joint → the joint it follows (:func:`fric_core.arm_setup.mimic_masters` of the
        URDF's text).

    Returns
    -------
    names : list of str
        The joints to move, in the model's order.
    left_out : list of (str, str)
        ``(joint, reason)`` for the others: a ``<mimic>`` joint follows its master (moving it
        on its own would fight that constraint); a joint whose range is not wider than twice
        the margin has no room to move.
    """
    marg = _per_joint("margin", margin, dyn.n, positive=False)
    mimic = dict(mimic or {})
    names, left_out = [], []
    for j, name in enumerate(dyn.joint_names):
        unit = "m" if dyn.joint_kinds[j] == "prismatic" else "rad"
        lo, hi = dyn.lower[j], dyn.upper[j]
        if name in mimic:
            left_out.append((name, f"a <mimic> of {mimic[name]} (it follows that joint)"))
        elif np.isfinite(lo) and np.isfinite(hi) and hi - lo <= 2.0 * marg[j]:
            left_out.append((name, f"its range [{lo:.4g}, {hi:.4g}] {unit} is not wider than "
                                   f"twice the margin {marg[j]:.4g} {unit}"))
        else:
            names.append(name)
    return names, left_out


def rest_positions(dyn, names, margin=0.0) -> dict:
    """Where the joints an excitation does not move are held: 0, or the middle of the range
    where 0 is not at least ``margin`` inside the limits (e.g. a Panda's joint 4, [−3.07, −0.07]
    rad: −1.57), the rule of the arm chain's initial positions (:mod:`fric_core.arm_setup`).

    Parameters
    ----------
    dyn : fric_core.transmission.urdf_dynamics.UrdfDynamics
        The arm with every joint of ``names``.
    names : sequence of str
        The joints held.
    margin : float
        Distance 0 must keep from a limit to be used [rad or m].

    Returns
    -------
    dict
        Joint → position [rad or m].
    """
    out = {}
    for name in names:
        j = dyn.joint_names.index(name)
        lo, hi = float(dyn.lower[j]), float(dyn.upper[j])
        bounded = math.isfinite(lo) and math.isfinite(hi)
        out[name] = 0.5 * (lo + hi) if bounded and not lo + margin <= 0.0 <= hi - margin \
            else 0.0
    return out


def design_condition(dyn, q, v, a, dv: float = 0.01, base=None, rigid_body: bool = True,
                     armature: bool = True) -> float:
    """Condition number of the column-equilibrated identification design (the figure
    ``fric identify`` reports too: :mod:`.conditioning`).

    Parameters
    ----------
    dyn : fric_core.transmission.urdf_dynamics.UrdfDynamics
        The arm.
    q, v, a : (N, n) array_like
        Joint positions, velocities, accelerations.
    dv : float
        Half width Δv of the band around zero velocity left out
        (:func:`~.regressor.friction_columns`).
    base : BaseParameters, optional
        The arm's base set (default: :func:`~.regressor.base_parameters` of ``dyn`` with
        ``armature``).
    rigid_body : bool
        Include the base rigid-body columns (the fit's ``dynamics="identify"``); False: the
        friction (and rotor-inertia) columns only (``dynamics="urdf"``).
    armature : bool
        Include the rotor inertias (one column ``q̈_j`` on joint j's rows, merged into the base
        set where a link inertia has the same column), as :func:`~.fit.fit_arm_friction` fits
        them by default.

    Returns
    -------
    float
        ``σ_max/σ_min`` of the design (rows in the Δv band dropped, columns scaled to unit
        norm, a rigid-body direction no motion determines held as the fit holds it:
        :func:`~.conditioning.conditioning`); inf when a column is zero (e.g. a joint never
        moves one way) or there are fewer rows than parameters.
    """
    design = design_normal_matrix(dyn, q, v, a, dv, base, rigid_body, armature)
    if design.rows < len(design.names):
        return math.inf
    return conditioning(design.H, design.names, design.rigid).cond


class _Problem:
    """Shape parameters → scaled coefficients → trajectory → cond."""

    def __init__(self, dyn, period, K, lo, hi, vmax, amax, dv, rigid_body, armature, t_out):
        self.dyn, self.n, self.K, self.w = dyn, dyn.n, K, 2 * np.pi / period
        self.lo, self.hi, self.vmax, self.amax = lo, hi, vmax, amax
        self.dv, self.rigid_body = dv, rigid_body
        self.armature = armature
        self.base = base_parameters(dyn, armature=armature) if rigid_body else None
        self.Na = scipy.linalg.null_space(np.ones((1, K)))  # Σ a_k = 0: at rest
        self.Nb = scipy.linalg.null_space(np.arange(1.0, K + 1)[None])  # Σ k b_k = 0
        dense = np.arange(_DENSE * K) * (period / (_DENSE * K))
        self.t_check = np.unique(np.concatenate([dense, np.mod(t_out, period)]))
        self.t_opt = np.arange(_OPT_SAMPLES) * (period / _OPT_SAMPLES)
        self.dim = 2 * (K - 1) * self.n

    def coefficients(self, x, exact: bool = False):
        """Scaled coefficients (a, b, q0) of shape ``x``; ``exact``: the extremes refined
        between the grid points (Brent) so the limits hold for the continuous trajectory."""
        x = x.reshape(self.n, 2, self.K - 1)
        a = x[:, 0] @ self.Na.T
        b = x[:, 1] @ self.Nb.T
        q, v, acc = _series(a, b, np.zeros(self.n), self.w, self.t_check)
        qmax, qmin = q.max(axis=0), q.min(axis=0)
        vpk, apk = np.abs(v).max(axis=0), np.abs(acc).max(axis=0)
        if exact:
            for j in range(self.n):
                qmax[j] = self._peak(a[j], b[j], 0, 1.0, q[:, j])
                qmin[j] = -self._peak(a[j], b[j], 0, -1.0, -q[:, j])
                vpk[j] = max(self._peak(a[j], b[j], 1, sg, sg * v[:, j]) for sg in (1.0, -1.0))
                apk[j] = max(self._peak(a[j], b[j], 2, sg, sg * acc[:, j])
                             for sg in (1.0, -1.0))
        span = qmax - qmin
        with np.errstate(divide="ignore", invalid="ignore"):
            s = np.min([(self.hi - self.lo) / span, self.vmax / vpk, self.amax / apk],
                       axis=0) * _SAFETY
        s[~np.isfinite(s)] = 0.0
        a, b = a * s[:, None], b * s[:, None]
        q0 = 0.5 * (self.lo + self.hi) - 0.5 * s * (qmax + qmin)
        return a, b, q0

    def _peak(self, a, b, which, sign, grid_vals) -> float:
        """Largest value of ``sign ×`` (q, v or acc: ``which``) of one joint's series: every
        grid maximum within 1 % of the largest, refined by Brent's method between its
        neighbours."""
        import scipy.optimize

        t, g = self.t_check, grid_vals
        top = g.max()
        best = top
        left, right = np.roll(g, 1), np.roll(g, -1)  # the grid is periodic
        cand = np.flatnonzero((g >= left) & (g >= right) & (g >= top - 0.01 * abs(top)))
        for i in cand[:20]:
            lo, hi = t[max(i - 1, 0)], t[min(i + 1, t.size - 1)]
            if hi <= lo:
                continue

            def neg(tt, a=a, b=b):
                return -sign * _series(a[None], b[None], np.zeros(1), self.w,
                                       np.array([tt]))[which][0, 0]

            r = scipy.optimize.minimize_scalar(neg, bounds=(lo, hi), method="bounded",
                                               options={"xatol": 1e-10 * (hi - lo) + 1e-12})
            best = max(best, -float(r.fun))
        return best

    def cond(self, x) -> float:
        a, b, q0 = self.coefficients(x)
        q, v, acc = _series(a, b, q0, self.w, self.t_opt)
        return design_condition(self.dyn, q, v, acc, self.dv, self.base, self.rigid_body,
                                self.armature)


def generate_excitation(model, joint_names: Sequence[str] | None = None, period: float = 10.0,
                        harmonics: int = 5, max_velocity=1.0, max_acceleration=3.0,
                        margin=0.1, rate_hz: float = 100.0, periods: int = 1,
                        dv: float = 0.01, rigid_body: bool = True, armature: bool = True,
                        max_time: float = 3.0,
                        iterations: int | None = None, seed: int = 0) -> ExcitationTrajectory:
    """An excitation trajectory within the limits, optimised for the identification design.

    Parameters
    ----------
    model : UrdfDynamics or str
        The arm, or a URDF path / bundled name (``"planar_2link"``, ``"arm7"``).
    joint_names : sequence of str, optional
        The joints to move (others held at :func:`rest_positions`: 0, or mid-range where 0 is
        not inside the limits by the margin; only with a URDF path/name). Default: all.
    period : float
        Period T [s] of the series (its fundamental is 1/T Hz).
    harmonics : int
        K ≥ 2 harmonics: the band is K/T Hz.
    max_velocity : float or (n,) array_like
        Joint speed limit [rad/s]; the URDF's velocity limit where that is lower.
    max_acceleration : float or (n,) array_like
        Joint acceleration limit [rad/s²].
    margin : float or (n,) array_like
        Distance kept from the URDF's position limits [rad] (limits of continuous joints: ±π).
    rate_hz : float
        Sampling rate of the returned trajectory [Hz].
    periods : int
        Number of periods in the returned trajectory (the arm is at rest between them).
    dv : float
        Δv band of the fit [rad/s] (rows inside it carry no friction information).
    rigid_body : bool
        Optimise the design with the rigid-body base columns (``--dynamics identify``); False:
        the friction columns only (``--dynamics urdf``).
    armature : bool
        Include the rotor-inertia columns the fit has by default (:func:`design_condition`).
    max_time : float
        Wall-time budget of the optimisation [s], at most :data:`MAX_TIME`.
    iterations : int, optional
        Budget in cond evaluations instead (whichever ends first; None: time only).
    seed : int
        Seed of the random starts and steps.

    Returns
    -------
    ExcitationTrajectory
        Samples at ``rate_hz`` over ``periods`` periods (at rest at the start and the end), the
        optimised and the initial cond, the coefficients and the limits used.

    Raises
    ------
    ValueError
        Naming the argument, before anything is allocated: a period outside (0,
        :data:`MAX_PERIOD`], a rate outside (0, :data:`MAX_RATE`], harmonics outside [2,
        :data:`MAX_HARMONICS`], more than :data:`MAX_SAMPLES` samples, a budget outside [0,
        :data:`MAX_TIME`], a non-positive limit, a band above the Nyquist frequency of
        ``rate_hz``; joint limits narrower than twice the margin.
    """
    from ..transmission.urdf_dynamics import UrdfDynamics

    # the numbers first: nothing is read or allocated for a value out of range
    if not (math.isfinite(period) and 0.0 < period <= MAX_PERIOD):
        raise ValueError(f"period: expected a number in (0, {MAX_PERIOD:g}] [s], got {period!r}")
    if not (isinstance(harmonics, (int, np.integer)) and 2 <= harmonics <= MAX_HARMONICS):
        raise ValueError(f"harmonics: expected an integer from 2 to {MAX_HARMONICS}, got "
                         f"{harmonics!r}")
    if not (math.isfinite(rate_hz) and 0.0 < rate_hz <= MAX_RATE):
        raise ValueError(f"rate_hz: expected a number in (0, {MAX_RATE:g}] [Hz], got {rate_hz!r}")
    if harmonics / period >= 0.5 * rate_hz:
        raise ValueError(f"rate_hz: {rate_hz:g} Hz does not resolve the band {harmonics}/"
                         f"{period:g} s = {harmonics / period:g} Hz (Nyquist)")
    if not (isinstance(periods, (int, np.integer)) and periods >= 1
            and periods * period * rate_hz <= MAX_SAMPLES):
        raise ValueError(f"periods: expected an integer >= 1 with periods × period × rate_hz "
                         f"<= {MAX_SAMPLES} samples, got {periods!r} (× {period:g} s × "
                         f"{rate_hz:g} Hz)")
    if not (math.isfinite(max_time) and 0.0 <= max_time <= MAX_TIME):
        raise ValueError(f"max_time: expected a number in [0, {MAX_TIME:g}] [s], got "
                         f"{max_time!r}")
    if iterations is not None and not (isinstance(iterations, (int, np.integer))
                                       and iterations >= 1):
        raise ValueError(f"iterations: expected None or an integer >= 1, got {iterations!r}")
    if isinstance(model, UrdfDynamics):
        dyn = model
    elif joint_names is None:
        dyn = UrdfDynamics(model)
    else:  # the joints not moved are held at rest_positions (0, or mid-range)
        full = UrdfDynamics(model)
        still = [j for j in full.joint_names if j not in set(joint_names)]
        dyn = UrdfDynamics(model, joint_names=joint_names,
                           locked_positions=rest_positions(full, still, float(np.max(margin))))
    if isinstance(model, UrdfDynamics) and joint_names is not None \
            and tuple(joint_names) != dyn.joint_names:
        raise ValueError(f"joint_names: {list(joint_names)} differ from the model's "
                         f"{list(dyn.joint_names)}; build the UrdfDynamics with them")
    n = dyn.n
    if not (math.isfinite(dv) and dv >= 0.0):
        raise ValueError(f"dv: expected a finite Δv >= 0 [rad/s], got {dv!r}")
    vmax = _per_joint("max_velocity", max_velocity, n)
    urdf_v = np.array([dyn.model.velocityLimit[dyn.model.joints[dyn.model.getJointId(j)].idx_v]
                       for j in dyn.joint_names])
    vmax = np.where((urdf_v > 0) & np.isfinite(urdf_v), np.minimum(vmax, urdf_v), vmax)
    amax = _per_joint("max_acceleration", max_acceleration, n)
    marg = _per_joint("margin", margin, n, positive=False)
    lower = np.where(np.isfinite(dyn.lower), dyn.lower, -np.pi)
    upper = np.where(np.isfinite(dyn.upper), dyn.upper, np.pi)
    lo, hi = lower + marg, upper - marg
    if np.any(hi <= lo):
        bad = [dyn.joint_names[j] for j in np.flatnonzero(hi <= lo)]
        raise ValueError(f"margin: joint(s) {bad} have position ranges narrower than twice the "
                         f"margin {marg[np.flatnonzero(hi <= lo)].tolist()}")
    count = int(round(periods * period * rate_hz))
    t_out = np.arange(count + 1) / rate_hz
    prob = _Problem(dyn, period, int(harmonics), lo, hi, vmax, amax, dv, rigid_body,
                    bool(armature), t_out)

    rng = np.random.default_rng(seed)
    start = time.perf_counter()
    budget = math.inf if iterations is None else int(iterations)
    evals = 0

    def out_of_budget():
        return evals >= budget or time.perf_counter() - start > max_time

    x = rng.standard_normal(prob.dim)
    f = cond_initial = prob.cond(x)
    evals = 1
    for _ in range(7):  # a few random starts: keep the best
        if out_of_budget():
            break
        y = rng.standard_normal(prob.dim)
        fy = prob.cond(y)
        evals += 1
        if fy < f:
            x, f = y, fy
    sigma = 0.3
    while not out_of_budget():  # (1+1)-ES, 1/5 success rule
        y = x + sigma * rng.standard_normal(prob.dim)
        fy = prob.cond(y)
        evals += 1
        if fy < f:
            x, f = y, fy
            sigma *= math.exp(1.0 / 3.0)
        else:
            sigma *= math.exp(-1.0 / 12.0)
        sigma = min(max(sigma, 1e-3), 3.0)
    a, b, q0 = prob.coefficients(x, exact=True)
    q, v, acc = _series(a, b, q0, prob.w, t_out)
    v[0] = v[-1] = 0.0  # exactly at rest (the constraints hold to rounding)
    acc[0] = acc[-1] = 0.0
    # the figure reported is the motion's over one period (it repeats), on as many samples as
    # fric identify uses at most, whatever the rate it is written at or recorded at
    t_fig = np.arange(DESIGN_SAMPLES) * (period / DESIGN_SAMPLES)
    f = design_condition(dyn, *_series(a, b, q0, prob.w, t_fig), dv, prob.base, rigid_body,
                         bool(armature))
    limits = {"lower": lo.tolist(), "upper": hi.tolist(), "max_velocity": vmax.tolist(),
              "max_acceleration": amax.tolist(), "margin": marg.tolist()}
    return ExcitationTrajectory(t=t_out, q=q, v=v, a=acc, joint_names=dyn.joint_names, cond=f,
                                period=float(period), cond_initial=cond_initial,
                                coefficients={"a": a, "b": b, "q0": q0}, limits=limits)


# -- files ----------------------------------------------------------------------------------------
def write_excitation_csv(path, traj: ExcitationTrajectory) -> None:
    """Write the trajectory as CSV: ``t, <joint>.position, <joint>.velocity,
    <joint>.acceleration`` (exact float reprs), with ``#`` comments giving cond, the period and
    the series' coefficients (JSON) so :func:`read_excitation_csv` restores them.

    Parameters
    ----------
    path : str or path-like
        The CSV file to create or overwrite.
    traj : ExcitationTrajectory
        The trajectory.

    Returns
    -------
    None
    """
    cols = [("t", traj.t)]
    for j, name in enumerate(traj.joint_names):
        cols += [(f"{name}.position", traj.q[:, j]), (f"{name}.velocity", traj.v[:, j]),
                 (f"{name}.acceleration", traj.a[:, j])]
    meta = {"period": traj.period, "cond": traj.cond, "cond_initial": traj.cond_initial,
            "limits": traj.limits}
    if traj.coefficients is not None:
        meta["coefficients"] = {k: np.asarray(v).tolist() for k, v in traj.coefficients.items()}
    comments = ["fric excitation trajectory: t [s]; <joint>.position [rad], .velocity [rad/s], "
                ".acceleration [rad/s^2]; band-limited Fourier series, at rest at both ends",
                f"period {traj.period!r} s, cond {traj.cond:.6g} (initial {traj.cond_initial:.6g})",
                "excitation: " + json.dumps(meta)]
    _write_columns(Path(path), cols, comments)


def read_excitation_csv(path) -> ExcitationTrajectory:
    """Read a trajectory CSV written by :func:`write_excitation_csv` (or any CSV with ``t`` and
    ``<joint>.position`` columns; velocity and acceleration columns optional, else derived by
    central differences).

    Parameters
    ----------
    path : str or path-like
        The trajectory CSV file to read.

    Returns
    -------
    ExcitationTrajectory
        Samples, joint names, and cond/period/coefficients when the file's ``# excitation:``
        comment gives them (else NaN, the duration, None).

    Raises
    ------
    ValueError
        Naming the file: missing, no ``t`` or position columns, a cell that is not a finite
        number, times not increasing.
    """
    t, names, cols, comments = read_joint_csv(path)
    if not names or any((j, "position") not in cols for j in names):
        raise ValueError(f"{path}: no '<joint>.position' column for "
                         f"{[j for j in names if (j, 'position') not in cols] or 'any joint'}")
    q = np.column_stack([cols[(j, "position")] for j in names])
    if not (np.all(np.isfinite(t)) and np.all(np.isfinite(q))):
        raise ValueError(f"{path}: a time or position cell is empty or not finite")
    if t.size < 2 or np.any(np.diff(t) <= 0):
        raise ValueError(f"{path}: t must increase strictly over at least 2 rows")

    def column(fld, fallback):
        if all((j, fld) in cols for j in names):
            x = np.column_stack([cols[(j, fld)] for j in names])
            if not np.all(np.isfinite(x)):
                raise ValueError(f"{path}: a {fld} cell is empty or not finite")
            return x
        return fallback()

    v = column("velocity", lambda: np.gradient(q, t, axis=0))
    a = column("acceleration", lambda: np.gradient(v, t, axis=0))
    meta = {}
    for c in comments:
        if c.startswith("excitation:"):
            try:
                meta = json.loads(c[len("excitation:"):])
            except json.JSONDecodeError:
                raise ValueError(f"{path}: the '# excitation:' comment is not JSON") from None
    coef = meta.get("coefficients")
    return ExcitationTrajectory(
        t=t, q=q, v=v, a=a, joint_names=tuple(names), cond=float(meta.get("cond", math.nan)),
        period=float(meta.get("period", t[-1] - t[0])),
        cond_initial=float(meta.get("cond_initial", math.nan)),
        coefficients=None if coef is None else {k: np.asarray(x, dtype=float)
                                                for k, x in coef.items()},
        limits=meta.get("limits", {}))


def _resample(traj: ExcitationTrajectory, rate_hz: float | None):
    if rate_hz is None:
        return traj.t, traj.q, traj.v, traj.a
    if not (math.isfinite(rate_hz) and rate_hz > 0.0):
        raise ValueError(f"rate_hz: expected > 0 [Hz], got {rate_hz!r}")
    t = np.arange(int(math.floor((traj.t[-1] - traj.t[0]) * rate_hz + 1e-9)) + 1) / rate_hz
    t = t + traj.t[0]
    if t[-1] < traj.t[-1] - 1e-9:
        t = np.append(t, traj.t[-1])
    q, v, a = traj.at(t)
    return t, q, v, a


def trajectory_message(traj: ExcitationTrajectory, rate_hz: float | None = 20.0,
                       lead_in: float = 3.0) -> dict:
    """The trajectory as a trajectory_msgs/JointTrajectory in plain Python types.

    Parameters
    ----------
    traj : ExcitationTrajectory
        The trajectory.
    rate_hz : float or None
        Points per second (None: the trajectory's own samples). joint_trajectory_controller
        interpolates between points with quintic splines when positions, velocities and
        accelerations are given, which reproduces a series of a few harmonics to ~1e−9 rad at
        20 Hz, so 20 Hz keeps the message small (:data:`MAX_ARG_BYTES`).
    lead_in : float
        ``time_from_start`` of the first point [s]: the controller moves the arm from where it
        is to the first point in that time (keep it long enough for the distance).

    Returns
    -------
    dict
        ``header`` (zero stamp: start on receipt), ``joint_names``, ``points`` with
        ``positions``, ``velocities``, ``accelerations``, ``effort`` (empty) and
        ``time_from_start`` ``{sec, nanosec}``.
    """
    if not (math.isfinite(lead_in) and lead_in >= 0.0):
        raise ValueError(f"lead_in: expected >= 0 [s], got {lead_in!r}")
    t, q, v, a = _resample(traj, rate_hz)
    points = []
    for k in range(t.size):
        ns = int(round((lead_in + t[k] - t[0]) * 1e9))
        points.append({"positions": [float(f"{x:.9g}") for x in q[k]],
                       "velocities": [float(f"{x:.9g}") for x in v[k]],
                       "accelerations": [float(f"{x:.9g}") for x in a[k]],
                       "effort": [],
                       "time_from_start": {"sec": ns // 1_000_000_000,
                                           "nanosec": ns % 1_000_000_000}})
    return {"header": {"stamp": {"sec": 0, "nanosec": 0}, "frame_id": ""},
            "joint_names": list(traj.joint_names), "points": points}


def write_trajectory_yaml(path, traj: ExcitationTrajectory, rate_hz: float | None = 20.0,
                          lead_in: float = 3.0) -> int:
    """Write :func:`trajectory_message` as YAML (flow style) for
    ``ros2 topic pub --once /joint_trajectory_controller/joint_trajectory
    trajectory_msgs/msg/JointTrajectory "$(cat trajectory.yaml)"``.

    Parameters
    ----------
    path : str or path-like
        The YAML file to create or overwrite.
    traj : ExcitationTrajectory
        The trajectory.
    rate_hz, lead_in : float or None, float
        Points per second and the first point's ``time_from_start`` [s], as for
        :func:`trajectory_message`.

    Returns
    -------
    int
        The file's size in bytes: above :data:`MAX_ARG_BYTES` the shell cannot pass it as one
        argument (lower ``rate_hz`` or play :func:`write_trajectory_bag`'s bag instead).
    """
    import yaml

    text = yaml.safe_dump(trajectory_message(traj, rate_hz, lead_in), default_flow_style=None,
                          sort_keys=False, width=100)
    Path(path).write_text(text, encoding="utf-8")
    return len(text.encode("utf-8"))


def write_trajectory_bag(path, traj: ExcitationTrajectory, topic: str = JTC_TOPIC,
                         rate_hz: float | None = 20.0, lead_in: float = 3.0) -> Path:
    """Write the JointTrajectory message into an MCAP bag (``ros2 bag play PATH`` sends it).

    Parameters
    ----------
    path : str or path-like
        The bag directory to create (it must not exist).
    traj : ExcitationTrajectory
        The trajectory.
    topic : str
        The controller's trajectory topic.
    rate_hz, lead_in : float or None, float
        Points per second and the first point's ``time_from_start`` [s], as for
        :func:`trajectory_message`.

    Returns
    -------
    pathlib.Path
        The bag directory.
    """
    from rosbags.rosbag2 import StoragePlugin, Writer
    from rosbags.typesys import Stores, get_typestore

    path = Path(path)
    if path.exists():
        raise ValueError(f"{path}: exists; a bag is written to a new directory")
    msg = trajectory_message(traj, rate_hz, lead_in)
    ts = get_typestore(Stores.ROS2_KILTED)
    T = ts.types
    Time, Duration, Header = (T["builtin_interfaces/msg/Time"],
                              T["builtin_interfaces/msg/Duration"], T["std_msgs/msg/Header"])
    JT = T["trajectory_msgs/msg/JointTrajectory"]
    JTP = T["trajectory_msgs/msg/JointTrajectoryPoint"]
    points = [JTP(positions=np.array(p["positions"]), velocities=np.array(p["velocities"]),
                  accelerations=np.array(p["accelerations"]), effort=np.zeros(0),
                  time_from_start=Duration(sec=p["time_from_start"]["sec"],
                                           nanosec=p["time_from_start"]["nanosec"]))
              for p in msg["points"]]
    jt = JT(header=Header(stamp=Time(sec=0, nanosec=0), frame_id=""),
            joint_names=msg["joint_names"], points=points)
    with Writer(path, version=9, storage_plugin=StoragePlugin.MCAP) as w:
        conn = w.add_connection("/" + topic.lstrip("/"), JT.__msgtype__, typestore=ts)
        w.write(conn, time.time_ns(), ts.serialize_cdr(jt, JT.__msgtype__))
    return path
