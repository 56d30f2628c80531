"""Joint friction compensation with the implicit friction element (issue 15; paper 000).

The identified friction of a joint (``joint_friction.yaml``, :mod:`fric_core.joint_friction`):
paper 003's asymmetric Coulomb + viscous law

    τ_f(v) = Cp + bp·v  (v > 0),   −Cn + bn·v  (v < 0),

or a monotone piecewise-linear curve per direction (issue 23, ``law: curve``: knots v_k, levels
f_k, ``τ_f(v) = f(|v|)`` forwards, ``−f(|v|)`` backwards, linear between knots), plus the
joint's effort ``offset`` o — the **total curve** ``τ_tot(v) = τ_f(v) + o``
(:meth:`~fric_core.joint_friction.JointFriction.total_curve`; the asymmetric law is its
two-knot case) —

is added to the controller's command, ``τ = τ_cmd + scale·f̂``, where the estimate f̂ is the
output of paper 000's massless impedance element (model C, eq. (38)) driven by the *measured
position*, not by the sign of a measured velocity:

    v*_k = u_k + K e_{k−1}/(B + T K)                        (38a)
    f̂_k  = Φ_Z(v*_k),   Z = 1/(B + T K)                      (38b)
    e_k  = (B e_{k−1} + T f̂_k)/(B + T K)                     (38c)

with u_k the position increment per step and Φ_Z the closed form of Theorem 1 (16) for the
total curve (:class:`~fric_core.laws.PiecewiseLinearFriction`): the static branch ``f̂ = v*/Z``
while ``v*/Z ∈ [−cn, cp]`` (cp = τ_tot(0+), −cn = τ_tot(0−): the levels at 0), else eq. (25) on
the segment k the sliding velocity falls in, ``f̂ = f_k + w_k (v* − g_k)`` with
``w_k = s_k/(1 + Z s_k)`` (s_k the segment's slope) — the segment is found by comparing v* with
the breakpoints ``g_k = v_k + Z f_k`` (mirrored for v* < −Z cn). The asymmetric law is one
segment per side, ``f̂ = C + w (v* − Z C)``, eq. (25) itself.

**Why the total curve, offset included.** The compensator's output is added to the command in
the units the effort was recorded in, and what the identification determines is the total
``τ_f(v) + o``: a constant offset is not separable from the levels without rest data (``Cp + o``
and ``Cn − o`` are what the data fix; one of them may then be below 0). A drive whose command
carries the same offset as its effort reading (a current loop's offset: the torque is the
command minus o) needs exactly the total added to deliver τ_f. The other case — an offset of
the *sensor* alone (a torque sensor reading τ + o while the command is exact) — is compensated
too, i.e. o is added while the joint moves although the drive does not need it; the
compensator cannot tell the two apart. Where the offset is known to be the sensor's, give
``offset: 0`` in the file (the levels are then the friction's).
While the joint moves, f̂ is the kinetic friction Φ(w) of the sliding velocity w ≈ v; at a velocity
reversal the element is in its static branch, f̂ = K e + B u, and goes continuously from +Cp to
−Cn while the joint moves back by the presliding distance (Cp + Cn)/K: the compensation changes
sign once, at one point of the return path, whatever the encoder's quantisation. ``sign(v)``
compensation instead flips with every ±1-count jitter of the differentiated position around the
reversal, and a ``tanh(v/ε)`` law gives less than Cp for |v| ≲ ε, so it under-compensates exactly
where stiction acts.

Two additions to (38), both in the element's static branch only, make it a compensator:

* **Deadband (play) on the position input.** The element is driven by the *played* position
  ``p̄ = clip(p̄, p − δ/2, p + δ/2)`` (a backlash of width δ, default 2 encoder counts): a
  ±1-count jitter of a joint at rest does not move p̄, so it never reaches the element.
* **Relaxation at rest.** Model C remembers its presliding tension: after the joint stops the
  output stays at ``K e`` (up to Cp in the direction of the last motion) for ever, pushing a joint
  at rest with up to the Coulomb level. Together with a load below breakaway that push can break
  the joint away (drift), and at a reversal it acts against the new direction. So in the static
  branch the tension relaxes, implicit Euler of ``ė = u − e/τ_r``:
  ``e_k = (e_{k−1} + T u_k)/(1 + T/τ_r)`` — the compensation of a joint at rest decays to zero
  with time constant τ_r (``relax_time``), never changes sign by itself, and is exactly zero for a
  joint that has not moved. When the static band ``[−cn, cp]`` excludes 0 (a level below 0: an
  offset left in the levels, both sides of the total curve near 0 have the offset's sign) the
  tension relaxes instead towards the band's point nearest 0, ``r = clip(0, −cn, cp)``
  (``ė = u − (e − r/K)/τ_r``): the output of a joint at rest goes to r, the total curve's value
  at the edge of rest, without chattering between the band and the kinetic branch. In slow creep
  the stationary balance ``e = v τ_r`` makes the compensation ``min(K τ_r v, C)``: full
  compensation above ``v_full = C/(K τ_r)`` (the presliding distance per relaxation time: 0.05
  rad/s with the defaults, 5 counts of 1e-4 rad and τ_r = 0.01 s), i.e. only creep slower than a
  few encoder counts per relaxation time is compensated partly — below the velocity resolution of
  one count per step (0.1 rad/s here), where a velocity-based law (sign, tanh) sees only 0 or ±1
  count.

Design conditions of paper 000. (15), ``Φ′ > −1/Z``: the compensated law has no stiction drop
(slopes bp, bn, s_k ≥ 0: a monotone law), so Φ_Z exists and is unique for every K, B. (63): for a
friction element on a mass it asks ``T² < M/(4K)`` for non-oscillatory sticking; the compensator's
element is not a contact on a mass but an estimate added *with the sign of the motion*, so within
its presliding band it acts on the joint as a negative stiffness −K and damping −B (eigenvalues of
(63) with K, B negated are real and > 1: no oscillatory mode, the joint leaves the band in the
direction it moves, which is the intended release). It lowers the controller's damping by B, so B =
0 by default (B also multiplies the quantisation spikes of the differentiated position, B·q/T); the
controller's own damping must exceed B. K follows from the encoder resolution q and the friction
level: the presliding distance ℓ/K spans ``presliding_counts`` (default 5) counts — above the
deadband, so a 1-count jitter never reaches the element and the sign change at a reversal is clean,
and small against any motion worth compensating (the compensation of the new direction is complete
after 5 counts of return travel). Smaller τ_r and fewer counts shorten the stick at a reversal (the
old direction's tension is gone sooner); the defaults were chosen on the closed loop of
test/core/test_compensation.py (PD tracking with true stiction).

The level ℓ of the presliding distance is the largest travel (in force) from the rest point r
to sliding, ``ℓ = max(cp − r, cn + r)``: ``max(Cp, Cn)`` when both levels are ≥ 0 (r = 0), the
whole band ``cp + cn`` when one is below 0 — so the tension of a joint at rest reaches either
edge within ``presliding_counts`` counts in every case (the mean ``(cp + cn)/2`` would leave
the farther edge of an asymmetric band at up to twice that; ``max(|cp|, |cn|)`` would make the
band of a large offset with little friction a fraction of a count). **Floor:** the element's
kinetic branch is a first-order lag with pole ``(B + s)/(B + T K + s)`` on a segment of slope s
(linearise (38a)–(38c)); as K → 0 it tends to 1 (an integrator: a joint with Cp = Cn = 0, which
identification can write, would give K = 0, Z = ∞ and NaN). So ℓ is at least
``s_max·presliding_counts·q/T`` — K ≥ s_max/T, the pole ≤ 1/2 for B = 0 (the estimate settles
within a few steps on the steepest segment) — and a joint without any friction (nothing to
render: any K gives 0) gets the K of a 1 N·m level. A law with a level well above
``0.5·s_max`` rad/s (q = 1e-4, T = 1 ms: the usual case) keeps ``ℓ/(counts·q)``.

Gear model (``eta_f``, ``eta_b`` known): the load-dependent part of paper 004 is itself a
Coulomb friction whose level depends on the load torque τ_load — the motor needs
``τ_load/η_f − τ_load`` more when it drives the load and ``η_b τ_load − τ_load`` (the same sign
as v) when the load back-drives it. So with an estimate of τ_load per step (``load`` of
:meth:`FrictionCompensator.step`: the controller's command, the torque it wants at the joint, or the
URDF gravity torque) the levels become
``Cp + (τ_load/η_f − τ_load)`` for τ_load > 0, ``Cp + (1 − η_b)|τ_load|`` for τ_load < 0 on the
positive side (mirrored for Cn), and the same element renders them. For a curve the extra level
of a side is added to every level of that side (the whole side is shifted: the gear's loss is a
Coulomb friction, independent of the speed). A gravity-only τ_load ignores
the inertial part M(q)q̈ of the load: the compensation is exact quasi-statically only. K is
scaled with the level, ``K·ℓ(cp, cn)/ℓ(cp₀, cn₀)`` (ℓ as above, with its floor), so that the
presliding distance stays
``presliding_counts`` counts however large the load makes the level (a fixed K would stretch the
reversal and the creep knee ``v_full`` in proportion to the load).

Hot path: fixed step, all joints in preallocated numpy arrays, no allocation per step. The
curves are padded (n, K) knot/level/slope arrays per side (knots +inf beyond a joint's last;
collinear knots merged, so the asymmetric law is one segment and its numbers are those of
eq. (25) bit for bit); the segment search is one comparison with the breakpoints, a row sum and
three gathers, skipped for a side where every joint has one segment.
"""

from __future__ import annotations

import math
import sys
from typing import Callable, Optional, Sequence

import numpy as np

from ._checks import real_array
from .joint_friction import JointFriction

__all__ = ["FrictionCompensator", "SignCompensator", "default_stiffness", "sign_changes"]

#: default number of encoder counts spanned by the presliding distance C/K
PRESLIDING_COUNTS = 5.0
_FMAX = sys.float_info.max


def _sides(jf: JointFriction, i: int):
    """Per side (forwards, backwards) the total curve's knots, levels and slopes of joint i (one
    slope per knot, the last segment's continued), a knot where the slope does not change
    merged; the asymmetric law as its one segment (level C ± offset, slope b: eq. (25) exactly).
    ValueError naming ``friction[i]`` for a law that is not monotone or not finite."""
    if jf.law == "asymmetric":
        out = ((np.zeros(1), np.array([jf.Cp + jf.offset], dtype=float),
                np.array([jf.bp], dtype=float)),
               (np.zeros(1), np.array([jf.Cn - jf.offset], dtype=float),
                np.array([jf.bn], dtype=float)))
    else:
        c = jf.total_curve()
        out = []
        for side in (1, -1):
            v, f, sl = c.segments(side)
            sl = np.append(sl, sl[-1])
            keep = np.ones(v.size, dtype=bool)
            keep[1:] = sl[1:] != sl[:-1]
            out.append((np.asarray(v, dtype=float)[keep], np.asarray(f, dtype=float)[keep],
                        sl[keep]))
        out = tuple(out)
    for v, f, sl in out:
        if not (np.all(np.isfinite(f)) and np.all(np.isfinite(sl)) and np.all(sl >= 0.0)):
            raise ValueError(f"friction[{i}]: the total curve must be finite and "
                             "non-decreasing (slopes bp, bn, s_k >= 0)")
    cp, cn = out[0][1][0], out[1][1][0]
    if cp + cn < -1e-9 * max(1.0, abs(cp), abs(cn)):
        raise ValueError(f"friction[{i}]: the levels at 0 cross (Cp + Cn = {cp + cn:.6g} < 0: "
                         "not a monotone law)")
    return out


def _travel(cp, cn):
    """(ℓ, r): the rest point ``r = clip(0, −cn, cp)`` (the static band's point nearest 0) and
    the largest presliding travel from it to sliding, ``ℓ = max(cp − r, cn + r)`` (module
    docstring); ``max(cp, cn)`` bit for bit when both levels are ≥ 0."""
    r = np.maximum(np.negative(cn), np.minimum(0.0, cp))
    return np.maximum(cp - r, cn + r), r


def _level_floor(smax, resolution, presliding_counts: float, dt: float):
    """ℓ_min = s_max·counts·q/T: K = ℓ/(counts·q) ≥ s_max/T (module docstring)."""
    return smax * presliding_counts * resolution / dt


def default_stiffness(friction: Sequence[JointFriction], resolution,
                      presliding_counts: float = PRESLIDING_COUNTS,
                      dt: float = 0.001) -> np.ndarray:
    """The element stiffness K per joint: the presliding distance ℓ/K spans
    ``presliding_counts`` encoder counts (module docstring), ℓ the largest travel from rest to
    sliding of the total curve's levels at 0 (``max(Cp, Cn)`` for levels ≥ 0, the jump
    ``Cp + Cn`` when one is below 0), at least ``s_max·presliding_counts·resolution/dt`` (so
    K ≥ s_max/T: never 0, the kinetic lag's pole ≤ 1/2 on the steepest segment), and 1 N·m for
    a joint without any friction.

    Parameters
    ----------
    friction : sequence of JointFriction
        The joints' identified friction.
    resolution : float or array_like
        Encoder resolution [rad per count] (per joint or one for all).
    presliding_counts : float
        Counts spanned by the presliding distance (> 0).
    dt : float
        The compensator's step T [s] (for the floor).

    Returns
    -------
    ndarray
        K [N·m/rad] per joint, finite and > 0.
    """
    n = len(friction)
    q = _per_joint("resolution", resolution, n, positive=True)
    if not (presliding_counts > 0 and math.isfinite(presliding_counts)):
        raise ValueError(f"presliding_counts: must be a finite number > 0, got "
                         f"{presliding_counts!r}")
    if not (isinstance(dt, (int, float)) and math.isfinite(dt) and 0 < dt <= 1.0):
        raise ValueError(f"dt: must be in (0, 1] s, got {dt!r}")
    sides = [_sides(jf, i) for i, jf in enumerate(friction)]
    cp = np.array([p[1][0] for p, _ in sides])
    cn = np.array([m[1][0] for _, m in sides])
    smax = np.array([max(p[2].max(), m[2].max()) for p, m in sides])
    level, _ = _travel(cp, cn)
    level = np.maximum(level, _level_floor(smax, q, presliding_counts, dt))
    level[level <= 0.0] = 1.0  # no friction at all: nothing to render, any K gives 0
    K = level / (presliding_counts * q)
    bad = ~np.isfinite(K) | (K <= 0.0)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"resolution: the default stiffness of joint index {i} is not a "
                         f"finite number > 0 ({K[i]!r}); give K")
    return K


def sign_changes(x, threshold: float = 0.0) -> int:
    """Number of sign changes of the sequence ``x``: transitions between ``> threshold`` and
    ``< −threshold`` (values in between, e.g. exact zeros, do not end a sign).

    Parameters
    ----------
    x : array_like
        The signal.
    threshold : float
        Hysteresis half-width (≥ 0).

    Returns
    -------
    int
        The count.
    """
    s = np.zeros(len(x), dtype=int)
    x = np.asarray(x, dtype=float)
    s[x > threshold] = 1
    s[x < -threshold] = -1
    s = s[s != 0]
    return int(np.count_nonzero(s[1:] != s[:-1]))


def _per_joint(name: str, value, n: int, *, positive: bool = False, lo: float = 0.0,
               hi: float = math.inf) -> np.ndarray:
    """``value`` broadcast to n finite floats in [lo, hi] (> 0 if ``positive``); ValueError."""
    try:
        arr = np.array(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: expected a number or {n} numbers, got {value!r}") from None
    if arr.ndim > 1 or (arr.ndim == 1 and arr.size != n):
        raise ValueError(f"{name}: expected one value or {n} (one per joint), got shape "
                         f"{arr.shape}")
    arr = np.broadcast_to(arr, (n,)).astype(float)
    bad = ~np.isfinite(arr) | (arr < lo) | (arr > hi) | ((arr <= 0) if positive else False)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        need = "> 0" if positive else f"in [{lo:g}, {hi:g}]"
        raise ValueError(f"{name}: must be finite and {need}, got {arr[i]!r} (joint index {i})")
    return arr


class _Side:
    """One direction of all joints' total curves as padded (n, K) arrays (module docstring:
    knots +inf beyond a joint's last, its last level, slope 0), with the element's working
    levels, gains w_k, breakpoints g_k and the buffers of the segment search."""

    def __init__(self, rows):
        n = len(rows)
        K = self.K = max(v.size for v, _, _ in rows)
        self.v = np.full((n, K), np.inf)
        self.f = np.empty((n, K))
        self.s = np.zeros((n, K))
        for i, (v, f, sl) in enumerate(rows):
            self.v[i, :v.size] = v
            self.f[i, :] = f[-1]
            self.f[i, :f.size] = f
            self.s[i, :sl.size] = sl
        self.f0 = self.f[:, 0].copy()
        self.smax = self.s.max(axis=1)
        self.level = self.f.copy()  #: working levels (the gear's shifted ones)
        self.g = np.empty((n, K))  #: breakpoints g_k = v_k + Z f_k
        self.w = np.empty((n, K))  #: gains w_k = s_k/(1 + Z s_k)
        self.level0 = self.level[:, 0]
        self._g0, self._w0, self._g1 = self.g[:, 0], self.w[:, 0], self.g[:, 1:]
        self._cmp = np.empty((n, K - 1), dtype=bool)
        self._k = np.empty(n, dtype=np.intp)
        self._row = np.arange(n, dtype=np.intp) * K
        self._fk, self._gk, self._wk = np.empty(n), np.empty(n), np.empty(n)

    def constants(self, Zcol: np.ndarray) -> None:
        """w_k and g_k for Z (a column (n, 1)) and the working levels."""
        w, g = self.w, self.g
        np.multiply(Zcol, self.s, out=w)
        w += 1.0
        np.divide(self.s, w, out=w)
        np.multiply(Zcol, self.level, out=g)
        g += self.v

    def kinetic(self, x: np.ndarray, xcol: np.ndarray, out: np.ndarray) -> None:
        """``f_k + w_k (x − g_k)`` on each joint's segment (the last breakpoint below x) into
        ``out``; ``xcol`` is ``x[:, None]``."""
        if self.K == 1:
            fk, gk, wk = self.level0, self._g0, self._w0
        else:
            k, fk, gk, wk = self._k, self._fk, self._gk, self._wk
            np.greater(xcol, self._g1, out=self._cmp)
            np.add.reduce(self._cmp, axis=1, out=k)
            k += self._row
            self.level.take(k, out=fk, mode="clip")
            self.g.take(k, out=gk, mode="clip")
            self.w.take(k, out=wk, mode="clip")
        np.subtract(x, gk, out=out)
        out *= wk
        out += fk


class FrictionCompensator:
    """The friction compensator of all joints (module docstring): model C (38) per joint with
    the joint's total curve τ_f + offset (asymmetric law or curve), driven by the played
    measured position, relaxed at rest; output ``command + gain·f̂ (+ gravity)`` saturated at
    ``max_effort`` (counted).

    Parameters
    ----------
    friction : sequence of JointFriction
        Per joint, in the order of the position/command arrays (any law the file reader
        accepts; ValueError naming ``friction[i]`` for one that is not monotone).
    dt : float
        Step T [s] (the joint_states period).
    resolution : float or array_like
        Encoder resolution [rad per count]: sets the default K and the deadband.
    K, B : float or array_like, optional
        Element stiffness [N·m/rad] (default :func:`default_stiffness`) and damping
        [N·m·s/rad] (default 0, see the module docstring).
    presliding_counts : float
        Counts in the presliding distance for the default K.
    deadband : float or array_like, optional
        Play width δ on the position input [rad] (default 2 counts; 0 disables it).
    relax_time : float or array_like
        τ_r [s] of the relaxation at rest (``inf`` disables it: plain model C).
    max_velocity : float
        The position increment per step is limited to ±max_velocity·T (a jump in the position
        is motion at that speed for one step: every internal value stays bounded).
    enable, scale : bool/float or array_like
        Per joint: compensate at all, and the fraction of the estimate added (0 … 1.5).
    max_effort : float or array_like
        Output saturation per joint [N·m].
    gravity : callable, optional
        ``gravity(q) -> τ_g`` added to the output (e.g. ``UrdfDynamics.gravity_torque``).
    """

    def __init__(self, friction: Sequence[JointFriction], dt: float = 0.001, *,
                 resolution=1e-4, K=None, B=0.0, presliding_counts: float = PRESLIDING_COUNTS,
                 deadband=None, relax_time=0.01, max_velocity: float = 10.0, enable=True,
                 scale=1.0, max_effort=math.inf,
                 gravity: Optional[Callable[[np.ndarray], np.ndarray]] = None):
        friction = list(friction)
        if not friction or not all(isinstance(jf, JointFriction) for jf in friction):
            raise ValueError("friction: expected one JointFriction per joint")
        n = self.n = len(friction)
        if not (isinstance(dt, (int, float)) and math.isfinite(dt) and 0 < dt <= 1.0):
            raise ValueError(f"dt: must be in (0, 1] s, got {dt!r}")
        self.dt = T = float(dt)
        self.friction = tuple(friction)
        self.resolution = _per_joint("resolution", resolution, n, positive=True)
        sides = [_sides(jf, i) for i, jf in enumerate(friction)]  # ValueError by joint
        self.K = (default_stiffness(friction, self.resolution, presliding_counts, T)
                  if K is None else _per_joint("K", K, n, positive=True))
        self.B = _per_joint("B", B, n)
        self.deadband = (2.0 * self.resolution if deadband is None
                         else _per_joint("deadband", deadband, n))
        tau = np.array(relax_time, dtype=float) if relax_time is not None else np.inf
        tau = np.broadcast_to(tau, (n,)) if np.ndim(tau) == 0 else tau
        if tau.shape != (n,) or np.isnan(tau).any() or (tau <= 0).any():
            raise ValueError(f"relax_time: must be > 0 (inf: no relaxation), one value or {n}, "
                             f"got {relax_time!r}")
        self.relax_time = tau.astype(float)
        if not (isinstance(max_velocity, (int, float)) and math.isfinite(max_velocity)
                and max_velocity > 0):
            raise ValueError(f"max_velocity: must be a finite number > 0, got {max_velocity!r}")
        self.max_velocity = float(max_velocity)
        self.max_effort = np.empty(n)
        self.gain = np.empty(n)
        self.set_gain(enable, scale)
        self.set_max_effort(max_effort)
        self.gravity = gravity

        self.Cp = np.array([jf.Cp for jf in friction])
        self.Cn = np.array([jf.Cn for jf in friction])
        self.bp = np.array([jf.bp for jf in friction])
        self.bn = np.array([jf.bn for jf in friction])
        self.offset = np.array([jf.offset for jf in friction])
        #: per joint the law rendered ("asymmetric" or "curve"; always its total, offset included)
        self.laws = tuple(jf.law for jf in friction)
        gear = [jf.has_gear for jf in friction]
        self.has_gear = any(gear)
        # gear: extra level per unit load when driving (1/eta_f - 1) and back-driven (1 - eta_b)
        self._drive = np.array([1.0 / jf.eta_f - 1.0 if g else 0.0
                                for jf, g in zip(friction, gear)])
        self._back = np.array([1.0 - jf.eta_b if g else 0.0 for jf, g in zip(friction, gear)])
        # the total curves, padded per side; working levels (the gear shifts them in place)
        self._pos = _Side([p for p, _ in sides])
        self._neg = _Side([m for _, m in sides])
        cp0, cn0 = self._pos.f0, self._neg.f0
        #: per joint the total curve's levels at 0, τ_tot(0+) and −τ_tot(0−) (offset included)
        self.levels = (cp0.copy(), cn0.copy())
        self._floor = _level_floor(np.maximum(self._pos.smax, self._neg.smax), self.resolution,
                                   presliding_counts, T)
        self._level0, r0 = _travel(cp0, cn0)
        np.maximum(self._level0, self._floor, out=self._level0)
        self._level0[self._level0 <= 0.0] = 1.0
        # a static band that may exclude 0 (a level below 0): relax towards its point nearest 0
        self._rest_shift = bool((cp0 < 0.0).any() or (cn0 < 0.0).any())
        # the element's constants (38), in working arrays that a gear step rescales in place
        self._K, self._Z, self._Kc, self._Bc, self._Tc = (np.zeros(n) for _ in range(5))
        self._c = np.zeros(n)
        self._Zcol = self._Z[:, None]
        self._set_constants(self.K)
        self.Z = self._Z.copy()  #: Z = 1/(B + T K) of (38b) at the identified levels
        self._rho = 1.0 / (1.0 + T / self.relax_time)  # implicit Euler of ė = −e/τ_r
        self._half = 0.5 * self.deadband
        self._du_max = self.max_velocity * T
        # relaxation target r/K, as the term (1 − ρ) r/K of e = ρ (e + T u) + (1 − ρ) r/K
        self._r = r0
        self._rest = (1.0 - self._rho) * r0 / self._K

        # state and preallocated buffers
        z = lambda: np.zeros(n)  # noqa: E731
        self.played = z()  #: played (deadband) position p̄
        self.e = z()  #: presliding displacement
        self.estimate = z()  #: f̂, the friction estimate of the last step (sign of the motion)
        self.compensation = z()  #: gain·f̂ of the last step
        self.output = z()  #: the last output
        self.gravity_torque = z()  #: g(q) of the last step (zero without ``gravity``)
        self.saturated = np.zeros(n, dtype=np.int64)  #: saturated outputs per joint
        self.saturated_steps = 0  #: outputs with any joint saturated
        self.steps = 0
        self.stuck = np.zeros(n, dtype=bool)  #: static branch in the last step
        self._u, self._vs, self._y, self._a, self._b = z(), z(), z(), z(), z()
        self._nvs, self._xp, self._xn = z(), z(), z()
        self._vs_col, self._nvs_col = self._vs[:, None], self._nvs[:, None]
        self._xp_col, self._xn_col = self._xp[:, None], self._xn[:, None]
        self._mp, self._mn = np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
        self._fin = np.zeros(n, dtype=bool)
        self._started = False

    def _set_constants(self, K: np.ndarray) -> None:
        """B + T K, Z = 1/(B + T K), K/(B + T K), B/(B + T K), T/(B + T K) of (38), and per
        side the gains w_k = s_k/(1 + Z s_k) and breakpoints g_k = v_k + Z f_k of Φ_Z (25)
        for the working levels, into the working arrays (no allocation)."""
        c, Z = self._c, self._Z
        np.copyto(self._K, K)
        np.multiply(K, self.dt, out=c)
        c += self.B
        np.divide(1.0, c, out=Z)
        np.divide(K, c, out=self._Kc)
        np.divide(self.B, c, out=self._Bc)
        np.divide(self.dt, c, out=self._Tc)
        for side in (self._pos, self._neg):
            side.constants(self._Zcol)

    @classmethod
    def from_set(cls, friction_set, joints: Sequence[str], dt: float = 0.001, **kwargs):
        """The compensator of ``joints`` (names) from a :class:`JointFrictionSet` (ValueError
        naming the joints missing from it); ``kwargs`` as for the constructor."""
        return cls(friction_set.for_joints(list(joints)), dt, **kwargs)

    # ------------------------------------------------------------------ live settings
    def set_gain(self, enable=True, scale=1.0) -> None:
        """Per joint: ``enable`` (bools) and ``scale`` (0 … 1.5); gain = enable·scale."""
        en = np.broadcast_to(np.array(enable), (self.n,)) if np.ndim(enable) == 0 \
            else np.asarray(enable)
        if en.shape != (self.n,) or en.dtype != bool:
            raise ValueError(f"enable: expected one bool or {self.n} bools, got {enable!r}")
        sc = _per_joint("scale", scale, self.n, lo=0.0, hi=1.5)
        self.gain[:] = np.where(en, sc, 0.0)

    def set_max_effort(self, max_effort) -> None:
        """Output saturation per joint (> 0)."""
        m = np.array(max_effort, dtype=float)
        m = np.broadcast_to(m, (self.n,)) if m.ndim == 0 else m
        if m.shape != (self.n,) or np.isnan(m).any() or (m <= 0).any():
            raise ValueError(f"max_effort: expected a number > 0 or {self.n} of them, got "
                             f"{max_effort!r}")
        self.max_effort[:] = m

    def reset(self, joints=None) -> None:
        """Back to rest: no tension, the next position starts the played position.

        Parameters
        ----------
        joints : array_like of bool or int, optional
            Only these joints (a mask or indices): their tension and estimate go to 0, the
            played position stays where it is (the others are untouched). None: all joints.
        """
        if joints is not None:
            for a in (self.e, self.estimate, self.compensation):
                a[joints] = 0.0
            self.stuck[joints] = False
            return
        self.e[:] = 0.0
        self.estimate[:] = 0.0
        self.compensation[:] = 0.0
        self.stuck[:] = False
        self._started = False

    # ------------------------------------------------------------------ hot path
    def _check(self, name: str, x) -> np.ndarray:
        if not (isinstance(x, np.ndarray) and x.shape == (self.n,) and x.dtype == float):
            x = real_array(x, name, f"{self.n} numbers")
            if x.shape != (self.n,):
                raise ValueError(f"{name}: expected shape ({self.n},), got {x.shape}")
        if not np.isfinite(x, out=self._fin).all():
            i = int(np.flatnonzero(~self._fin)[0])
            raise ValueError(f"{name}: non-finite value {x[i]!r} at joint index {i}")
        return x

    def step(self, position, command=None, load=None) -> np.ndarray:
        """One step: the output for the measured ``position``.

        ``command`` (the controller's efforts, None = 0) and ``load`` (τ_load estimate for the
        gear model, None = no load-dependent part) are per joint. A non-finite or wrongly shaped
        input raises ``ValueError`` and leaves the state untouched. Returns ``self.output``
        (overwritten by the next step).
        """
        p = self._check("position", position)
        cmd = None if command is None else self._check("command", command)
        ld = None if load is None or not self.has_gear else self._check("load", load)
        u, vs, y, a, b = self._u, self._vs, self._y, self._a, self._b
        pf = self.played
        if not self._started:
            pf[:] = p
            self._started = True
        # played position, its increment (bounded by max_velocity·T) as the velocity input u
        np.subtract(p, self._half, out=a)
        np.add(p, self._half, out=b)
        np.copyto(y, pf)
        np.clip(pf, a, b, out=pf)
        np.subtract(pf, y, out=u)
        np.clip(u, -self._du_max, self._du_max, out=u)
        u /= self.dt
        # levels: identified, plus the gear's load-dependent part on every level of a side
        P, N = self._pos, self._neg
        if ld is not None:
            xp, xn = self._xp, self._xn
            np.maximum(ld, 0.0, out=a)  # τ_load > 0: driving for v > 0, back-driven for v < 0
            np.minimum(ld, 0.0, out=b)  # τ_load < 0 (b ≤ 0)
            np.multiply(a, self._drive, out=xp)
            np.multiply(b, self._back, out=y)
            xp -= y
            np.multiply(b, self._drive, out=xn)
            np.negative(xn, out=xn)
            np.multiply(a, self._back, out=y)
            xn += y
            np.add(self._xp_col, P.f, out=P.level)
            np.add(self._xn_col, N.f, out=N.level)
            # K in proportion to the level ℓ: the presliding distance stays presliding_counts
            cp, cn = P.level0, N.level0
            if self._rest_shift:
                r = self._r
                np.minimum(cp, 0.0, out=r)
                np.negative(cn, out=a)
                np.maximum(r, a, out=r)
                np.subtract(cp, r, out=a)
                np.add(cn, r, out=b)
                np.maximum(a, b, out=a)
            else:
                np.maximum(cp, cn, out=a)
            np.maximum(a, self._floor, out=a)
            # a joint without any friction at this load (levels 0, slopes 0): nothing to
            # render, its identified K (the floor is 0 there: K = 0 would make Z infinite)
            np.less_equal(a, 0.0, out=self._mp)
            np.copyto(a, self._level0, where=self._mp)
            a /= self._level0
            a *= self.K
            self._set_constants(a)
            if self._rest_shift:
                np.divide(self._r, self._K, out=self._rest)
                self._rest *= 1.0 - self._rho
        cp, cn = P.level0, N.level0
        # model C (38a), (38b): v* and the static trial force v*/Z
        e = self.e
        Z = self._Z
        np.multiply(self._Kc, e, out=vs)
        vs += u
        np.divide(vs, Z, out=y)
        f = self.estimate
        np.minimum(y, cp, out=f)
        np.negative(cn, out=a)
        np.maximum(f, a, out=f)  # static branch value where v*/Z ∈ [−cn, cp]
        np.greater(y, cp, out=self._mp)
        np.less(y, a, out=self._mn)
        # kinetic branches, eq. (25) on the segment: f = f_k + w_k (v* − g_k) (backwards
        # mirrored: the forwards formula of −v*, negated)
        P.kinetic(vs, self._vs_col, b)
        np.copyto(f, b, where=self._mp)
        np.negative(vs, out=self._nvs)
        N.kinetic(self._nvs, self._nvs_col, b)
        np.negative(b, out=b)
        np.copyto(f, b, where=self._mn)
        np.logical_or(self._mp, self._mn, out=self.stuck)
        np.logical_not(self.stuck, out=self.stuck)
        # (38c) kinetic; static: e + T u (37a), relaxed: (e + T u)/(1 + T/τ_r), towards r/K
        np.multiply(self._Bc, e, out=a)
        np.multiply(self._Tc, f, out=b)
        a += b
        np.multiply(u, self.dt, out=b)
        b += e
        b *= self._rho
        if self._rest_shift:
            b += self._rest
        np.copyto(e, a)
        np.copyto(e, b, where=self.stuck)
        # output
        if self.gravity is not None:
            g = self.gravity(p)
            np.copyto(self.gravity_torque, g)
            if not np.isfinite(self.gravity_torque, out=self._fin).all():  # a model far out
                np.nan_to_num(self.gravity_torque, copy=False, nan=0.0, posinf=0.0, neginf=0.0)
        np.multiply(self.gain, f, out=self.compensation)
        self.steps += 1
        return self._output(cmd)

    def with_command(self, command) -> np.ndarray:
        """The output of the last step for a new controller ``command`` (the compensation and
        gravity of the last :meth:`step`, the new command; saturated and counted like a step).
        For a chain in which the controller's command arrives after the joint state the
        compensator stepped on: the command goes out without waiting for the next step.

        Returns ``self.output`` (overwritten by the next call). ``ValueError`` for a non-finite
        or wrongly shaped command."""
        return self._output(self._check("command", command))

    def _output(self, cmd) -> np.ndarray:
        out, a, m = self.output, self._a, self._mp
        np.copyto(out, self.compensation)
        if cmd is not None:
            out += cmd
        if self.gravity is not None:
            out += self.gravity_torque
        np.abs(out, out=a)
        np.greater(a, self.max_effort, out=m)
        if m.any():
            self.saturated += m
            self.saturated_steps += 1
            np.clip(out, -self.max_effort, self.max_effort, out=out)
        return out


class SignCompensator:
    """The naive baseline: the total curve ``τ_f(v) + offset`` of the identified law
    (:meth:`~fric_core.joint_friction.JointFriction.total`, asymmetric or curve) at the
    finite-difference velocity ``v = (p_k − p_{k−1})/T`` of the measured position — for the
    asymmetric law ``Cp + bp v`` for v > 0, ``−Cn + bn v`` for v < 0 — and 0 for v = 0 (what
    ``sign(v)`` compensation does). Allocation-free like :class:`FrictionCompensator` (the
    same padded curves; the segment of |v| found by comparing it with the knots).

    Parameters
    ----------
    friction : sequence of JointFriction
        Per joint.
    dt : float
        Step T [s].
    """

    def __init__(self, friction: Sequence[JointFriction], dt: float = 0.001):
        friction = list(friction)
        if not friction or not all(isinstance(jf, JointFriction) for jf in friction):
            raise ValueError("friction: expected one JointFriction per joint")
        if not (isinstance(dt, (int, float)) and math.isfinite(dt) and dt > 0):
            raise ValueError(f"dt: must be a finite number > 0, got {dt!r}")
        self.dt = float(dt)
        sides = [_sides(jf, i) for i, jf in enumerate(friction)]
        self.Cp = np.array([jf.Cp for jf in friction])
        self.Cn = np.array([jf.Cn for jf in friction])
        self.bp = np.array([jf.bp for jf in friction])
        self.bn = np.array([jf.bn for jf in friction])
        self._pos = _Side([p for p, _ in sides])
        self._neg = _Side([m for _, m in sides])
        self._slope0 = (self._pos.s[:, 0], self._neg.s[:, 0])  # b of the one-segment laws
        n = len(friction)
        self.output = np.zeros(n)
        self._last = np.zeros(n)
        self._v = np.zeros(n)
        self._nv = np.zeros(n)
        self._cols = (self._v[:, None], self._nv[:, None])
        self._m = np.zeros(n, dtype=bool)
        self._a = np.zeros(n)
        self._started = False

    @staticmethod
    def _curve(side: _Side, x: np.ndarray, xcol: np.ndarray, out: np.ndarray) -> None:
        """``f_k + s_k (x − v_k)`` on the segment of x ≥ 0 (the last knot at or below it)."""
        if side.K == 1:
            vk, fk, sk = side.v[:, 0], side.f0, side.s[:, 0]
        else:
            k, vk, fk, sk = side._k, side._gk, side._fk, side._wk  # the buffers, reused
            np.greater_equal(xcol, side.v[:, 1:], out=side._cmp)
            np.add.reduce(side._cmp, axis=1, out=k)
            k += side._row
            side.v.take(k, out=vk, mode="clip")
            side.f.take(k, out=fk, mode="clip")
            side.s.take(k, out=sk, mode="clip")
        np.subtract(x, vk, out=out)
        out *= sk
        out += fk

    def step(self, position: np.ndarray) -> np.ndarray:
        """The compensation for this position (``self.output``, overwritten next step)."""
        if not self._started:
            self._last[:] = position
            self._started = True
        v, out, m, a = self._v, self.output, self._m, self._a
        np.subtract(position, self._last, out=v)
        v /= self.dt
        self._last[:] = position
        np.minimum(v, _FMAX, out=v)  # a position jump beyond the float range: no inf·0
        np.maximum(v, -_FMAX, out=v)
        out[:] = 0.0
        P, N = self._pos, self._neg
        np.greater(v, 0.0, out=m)
        if P.K == 1:  # C + b v
            np.multiply(self._slope0[0], v, out=a)
            a += P.f0
        else:
            self._curve(P, v, self._cols[0], a)
        np.copyto(out, a, where=m)
        np.less(v, 0.0, out=m)
        if N.K == 1:  # −C + b v
            np.multiply(self._slope0[1], v, out=a)
            a -= N.f0
        else:
            np.negative(v, out=self._nv)
            self._curve(N, self._nv, self._cols[1], a)
            np.negative(a, out=a)
        np.copyto(out, a, where=m)
        np.minimum(out, _FMAX, out=out)
        np.maximum(out, -_FMAX, out=out)
        return out
