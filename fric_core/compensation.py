"""Joint friction compensation with the implicit friction element (issue 15; paper 000).

The identified friction of a joint (paper 003's asymmetric Coulomb + viscous law, the
``joint_friction.yaml`` of :mod:`fric_core.arm_identification.joint_friction`)

    τ_f(v) = Cp + bp·v  (v > 0),   −Cn + bn·v  (v < 0)

is added to the controller's command, ``τ = τ_cmd + scale·f̂``, where the estimate f̂ is the
output of paper 000's massless impedance element (model C, eq. (38)) driven by the *measured
position*, not by the sign of a measured velocity:

    v*_k = u_k + K e_{k−1}/(B + T K)                        (38a)
    f̂_k  = Φ_Z(v*_k),   Z = 1/(B + T K)                      (38b)
    e_k  = (B e_{k−1} + T f̂_k)/(B + T K)                     (38c)

with u_k the position increment per step and Φ_Z the closed form of Theorem 1 (16) for the
asymmetric law (eq. (25) on each side; the static branch ``f̂ = v*/Z`` while ``v*/Z ∈ [−Cn, Cp]``).
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
  joint that has not moved. In slow creep the stationary balance ``e = v τ_r`` makes the
  compensation ``min(K τ_r v, C)``: full compensation above ``v_full = C/(K τ_r)`` (the
  presliding distance per relaxation time: 0.05 rad/s with the defaults, 5 counts of 1e-4 rad
  and τ_r = 0.01 s), i.e. only creep slower than a few encoder counts per relaxation time is
  compensated partly — below the velocity resolution of one count per step (0.1 rad/s here),
  where a velocity-based law (sign, tanh) sees only 0 or ±1 count.

Design conditions of paper 000. (15), ``Φ′ > −1/Z``: the compensated law has no stiction drop
(slopes bp, bn ≥ 0), so Φ_Z exists and is unique for every K, B. (63): for a friction element on
a mass it asks ``T² < M/(4K)`` for non-oscillatory sticking; the compensator's element is not a
contact on a mass but an estimate added *with the sign of the motion*, so within its presliding
band it acts on the joint as a negative stiffness −K and damping −B (eigenvalues of (63) with K,
B negated are real and > 1: no oscillatory mode, the joint leaves the band in the direction it
moves, which is the intended release). It lowers the controller's damping by B, so B = 0 by
default (B also multiplies the quantisation spikes of the differentiated position, B·q/T); the
controller's own damping must exceed B. K follows from the encoder resolution q and the friction
level: the presliding distance C/K spans ``presliding_counts`` (default 5) counts — above the
deadband, so a 1-count jitter never reaches the element and the sign change at a reversal is
clean, and small against any motion worth compensating (the compensation of the new direction is
complete after 5 counts of return travel). Smaller τ_r and fewer counts shorten the stick at a
reversal (the old direction's tension is gone sooner); the defaults were chosen on the closed
loop of test/core/test_compensation.py (PD tracking with true stiction).

Gear model (``eta_f``, ``eta_b`` known): the load-dependent part of paper 004 is itself a
Coulomb friction whose level depends on the load torque τ_load — the motor needs
``τ_load/η_f − τ_load`` more when it drives the load and ``η_b τ_load − τ_load`` (the same sign
as v) when the load back-drives it. So with an estimate of τ_load per step (``load`` of
:meth:`FrictionCompensator.step`: the controller's command, the torque it wants at the joint, or the
URDF gravity torque) the levels become
``Cp + (τ_load/η_f − τ_load)`` for τ_load > 0, ``Cp + (1 − η_b)|τ_load|`` for τ_load < 0 on the
positive side (mirrored for Cn), and the same element renders them. A gravity-only τ_load ignores
the inertial part M(q)q̈ of the load: the compensation is exact quasi-statically only. K is
scaled with the level, ``K·max(cp, cn)/max(Cp, Cn)``, so that the presliding distance stays
``presliding_counts`` counts however large the load makes the level (a fixed K would stretch the
reversal and the creep knee ``v_full`` in proportion to the load).

Hot path: fixed step, all joints in preallocated numpy arrays, no allocation per step.
"""

from __future__ import annotations

import math
from typing import Callable, Optional, Sequence

import numpy as np

from ._checks import real_array
from .joint_friction import JointFriction

__all__ = ["FrictionCompensator", "SignCompensator", "default_stiffness", "sign_changes"]

#: default number of encoder counts spanned by the presliding distance C/K
PRESLIDING_COUNTS = 5.0


def default_stiffness(friction: Sequence[JointFriction], resolution,
                      presliding_counts: float = PRESLIDING_COUNTS) -> np.ndarray:
    """The element stiffness K per joint: the presliding distance max(Cp, Cn)/K spans
    ``presliding_counts`` encoder counts (module docstring).

    Parameters
    ----------
    friction : sequence of JointFriction
        The joints' identified friction.
    resolution : float or array_like
        Encoder resolution [rad per count] (per joint or one for all).
    presliding_counts : float
        Counts spanned by the presliding distance (> 0).

    Returns
    -------
    ndarray
        K [N·m/rad] per joint.
    """
    n = len(friction)
    q = _per_joint("resolution", resolution, n, positive=True)
    if not (presliding_counts > 0 and math.isfinite(presliding_counts)):
        raise ValueError(f"presliding_counts: must be a finite number > 0, got "
                         f"{presliding_counts!r}")
    level = np.array([max(jf.Cp, jf.Cn) for jf in friction])
    return level / (presliding_counts * q)


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


class FrictionCompensator:
    """The friction compensator of all joints (module docstring): model C (38) per joint, driven
    by the played measured position, relaxed at rest; output ``command + gain·f̂ (+ gravity)``
    saturated at ``max_effort`` (counted).

    Parameters
    ----------
    friction : sequence of JointFriction
        Per joint, in the order of the position/command arrays.
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
        self.K = (default_stiffness(friction, self.resolution, presliding_counts) if K is None
                  else _per_joint("K", K, n, positive=True))
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
        gear = [jf.has_gear for jf in friction]
        self.has_gear = any(gear)
        # gear: extra level per unit load when driving (1/eta_f - 1) and back-driven (1 - eta_b)
        self._drive = np.array([1.0 / jf.eta_f - 1.0 if g else 0.0
                                for jf, g in zip(friction, gear)])
        self._back = np.array([1.0 - jf.eta_b if g else 0.0 for jf, g in zip(friction, gear)])
        # the element's constants (38), in working arrays that a gear step rescales in place
        self._level0 = np.maximum(self.Cp, self.Cn)
        self._K, self._Z, self._Kc, self._Bc, self._Tc, self._wp, self._wn = (
            np.zeros(n) for _ in range(7))
        self._c = np.zeros(n)
        self._set_constants(self.K)
        self.Z = self._Z.copy()  #: Z = 1/(B + T K) of (38b) at the identified levels
        self._rho = 1.0 / (1.0 + T / self.relax_time)  # implicit Euler of ė = −e/τ_r
        self._half = 0.5 * self.deadband
        self._du_max = self.max_velocity * T

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
        self._cp, self._cn = self.Cp.copy(), self.Cn.copy()
        self._mp, self._mn = np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
        self._fin = np.zeros(n, dtype=bool)
        self._started = False

    def _set_constants(self, K: np.ndarray) -> None:
        """B + T K, Z = 1/(B + T K), K/(B + T K), B/(B + T K), T/(B + T K) of (38) and the
        kinetic slopes w = b/(1 + Z b) of Φ_Z (25), into the working arrays (no allocation)."""
        c, Z = self._c, self._Z
        np.copyto(self._K, K)
        np.multiply(K, self.dt, out=c)
        c += self.B
        np.divide(1.0, c, out=Z)
        np.divide(K, c, out=self._Kc)
        np.divide(self.B, c, out=self._Bc)
        np.divide(self.dt, c, out=self._Tc)
        for b, w in ((self.bp, self._wp), (self.bn, self._wn)):
            np.multiply(Z, b, out=w)
            w += 1.0
            np.divide(b, w, out=w)

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

    def reset(self) -> None:
        """Back to rest: no tension, the next position starts the played position."""
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
        # levels: identified, plus the gear's load-dependent part
        cp, cn = self._cp, self._cn
        if ld is not None:
            np.maximum(ld, 0.0, out=a)  # τ_load > 0: driving for v > 0, back-driven for v < 0
            np.minimum(ld, 0.0, out=b)  # τ_load < 0 (b ≤ 0)
            np.multiply(a, self._drive, out=cp)
            cp -= b * self._back
            cp += self.Cp
            np.multiply(b, self._drive, out=cn)
            np.negative(cn, out=cn)
            cn += a * self._back
            cn += self.Cn
            # K in proportion to the level: the presliding distance stays presliding_counts
            np.maximum(cp, cn, out=a)
            a /= self._level0
            a *= self.K
            self._set_constants(a)
        # model C (38a), (38b): v* and the static trial force v*/Z
        e = self.e
        Z = self._Z
        np.multiply(self._Kc, e, out=vs)
        vs += u
        np.divide(vs, Z, out=y)
        f = self.estimate
        np.minimum(y, cp, out=f)
        np.negative(cn, out=a)
        np.maximum(f, a, out=f)  # static branch value where v*/Z ∈ [−Cn, Cp]
        np.greater(y, cp, out=self._mp)
        np.less(y, a, out=self._mn)
        # kinetic branches, eq. (25): f = C + w (v* − Z C), written as in laws._lin_z
        np.multiply(Z, cp, out=b)
        np.subtract(vs, b, out=b)
        b *= self._wp
        b += cp
        np.copyto(f, b, where=self._mp)
        np.multiply(Z, cn, out=b)
        np.add(vs, b, out=b)
        b *= self._wn
        b -= cn
        np.copyto(f, b, where=self._mn)
        np.logical_or(self._mp, self._mn, out=self.stuck)
        np.logical_not(self.stuck, out=self.stuck)
        # (38c) kinetic; static: e + T u (37a), relaxed: (e + T u)/(1 + T/τ_r)
        np.multiply(self._Bc, e, out=a)
        np.multiply(self._Tc, f, out=b)
        a += b
        np.multiply(u, self.dt, out=b)
        b += e
        b *= self._rho
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
    """The naive baseline: ``τ_f(v)`` of the identified law at the finite-difference velocity
    ``v = (p_k − p_{k−1})/T`` of the measured position — ``Cp + bp v`` for v > 0, ``−Cn + bn v``
    for v < 0, 0 for v = 0 (what ``sign(v)`` compensation does).

    Parameters
    ----------
    friction : sequence of JointFriction
        Per joint.
    dt : float
        Step T [s].
    """

    def __init__(self, friction: Sequence[JointFriction], dt: float = 0.001):
        self.dt = float(dt)
        self.Cp = np.array([jf.Cp for jf in friction])
        self.Cn = np.array([jf.Cn for jf in friction])
        self.bp = np.array([jf.bp for jf in friction])
        self.bn = np.array([jf.bn for jf in friction])
        n = len(friction)
        self.output = np.zeros(n)
        self._last = np.zeros(n)
        self._v = np.zeros(n)
        self._m = np.zeros(n, dtype=bool)
        self._a = np.zeros(n)
        self._started = False

    def step(self, position: np.ndarray) -> np.ndarray:
        """The compensation for this position (``self.output``, overwritten next step)."""
        if not self._started:
            self._last[:] = position
            self._started = True
        v, out, m, a = self._v, self.output, self._m, self._a
        np.subtract(position, self._last, out=v)
        v /= self.dt
        self._last[:] = position
        out[:] = 0.0
        np.greater(v, 0.0, out=m)
        np.multiply(self.bp, v, out=a)
        a += self.Cp
        np.copyto(out, a, where=m)
        np.less(v, 0.0, out=m)
        np.multiply(self.bn, v, out=a)
        a -= self.Cn
        np.copyto(out, a, where=m)
        return out
