"""Arms driven through transmissions with asymmetric friction: algorithm (69) of paper 004.

The arm (46) ``M_h(q) q̈ + h(q, q̇) = τ̂_v + J(q)ᵀ f`` is driven at each joint through a
transmission (47) (a DAI (14) per joint, with asymmetry coefficients γ_u,i, γ_v,i, input-side
inertia m_i and output-side inertia m_v,i referred to the joint). Together they form the DAI (48).
:class:`GearedArm` integrates it by the implicit-Euler algorithm (69)::

    M̂ := [m] + M(q),  M(q) = M_h(q) + [m_v]                                (69a), (49)
    P := ([γ_u][m] − [γ_v] M(q)) M̂⁻¹                                       (69b), (52)
    τ_v := h(q, v) + [D] v − J(q)ᵀ f + τ_load                               (69c), (50)
    ϕ := [γ_u] τ_u + [γ_v] τ_v − P (τ_u − τ_v)                              (69d)
    v* := v + h M̂⁻¹ (τ_u − τ_v)                                             (69e)
    v := v* − axproj(v*, h M̂⁻¹, ϕ, P)                                       (69f)
    q := q + h v                                                             (69g)

(D: optional joint viscosity, explicit like the rest of h(q, v), as in the paper's Sec. 6.2).

Joint friction (issue 15: the arm of ``joint_friction.yaml``)
-------------------------------------------------------------
Besides the gear, each joint may have paper 003's asymmetric Coulomb + viscous friction
``τ_f(v) = Cp + bp v (v > 0), −Cn + bn v (v < 0)``, any value in ``[−Cn, Cp]`` at rest. It acts
on the **input side** (motor bearings, seals, the gear's load-independent losses): the gear sees
the actuator torque minus τ_f. That is what makes the arm obey the gear convention of
:mod:`fric_core.arm_identification.joint_friction` exactly: with ``f_u = τ_u − τ_f`` in (14),
eliminating λ gives ``τ_u = m q̈ + G(τ_load, v) + τ_f(v)``, ``G = τ_load/η_f`` when λ > 0
(⟺ τ_load v > 0) and ``η_b τ_load`` when λ < 0, with ``τ_load = M(q) q̈ + τ_v`` per joint (a
Coulomb torque added to the gear's bound instead, in parallel with it, would show up in the
motor torque scaled by 1/(1 − γ_u) when driving and 1/(1 + γ_u) when back-driven).

In the step: ``[−Cn, Cp] = c₀ + C [−1, 1]`` with the offset ``c₀ = (Cp − Cn)/2`` and the
symmetric ``C = (Cp + Cn)/2``. This split needs only ``Cp + Cn ≥ 0`` (C ≥ 0, a monotone law), not
each level ≥ 0: a ``joint_friction.yaml`` may hold one level below 0 where an effort offset could
not be separated from the levels (issue 23); c₀ then carries it, of either sign, and the
derivation below is unchanged (a joint whose static interval excludes 0 is pushed by the
offset's c₀ at rest: the sim then behaves as the robot did in the recording's effort units).
c₀ is a constant input torque (τ_u − c₀ in (69d), (69e)), the
set-valued ``C s`` (s ∈ sgn v) enters (69d) as ``−γ_u C s`` and adds to the friction, so (69f)
becomes the problem of :class:`CoulombAxproj`: friction f with ``v = v* − A f`` and per joint
``f = C + |ψ − γ_u C|`` sliding forwards, ``−C − |ψ + γ_u C|`` backwards and anything between
at rest (ψ = ϕ + P f; for |γ_u| ≤ 1 the union over s of the static sets is exactly that
interval). Static friction holds exactly: a joint at rest stays at v = 0 while its friction
need lies in ``[lo, hi]`` (for a joint without load ``τ_u ∈ [−Cn, Cp]``), no creep. Viscous
``b`` (bp moving forwards, bn backwards, chosen by the sign of the velocity at the start of the
step, their mean from rest) is implicit too: ``b v_new = b v + h b q̈`` is the explicit torque
``b v`` plus an input-side inertia ``h b`` added to m in (69a), (69b) — unconditionally stable,
and exact in steady sliding.
A joint whose velocity comes out exactly 0 is held by static friction; a self-locking joint
(|γ_v,i| ≥ 1) holds any load from the arm while its actuator is idle.

**Friction curves** (``curves``, ``law: curve`` of issue 23: a monotone piecewise-linear
τ_f per direction, knots v_k, levels f_k, slopes s_k). The step stays the one above with
per-step values, a *semi-implicit* treatment: the segment k of the velocity at the start of
the step fixes the law of the step, ``τ_f = c_k + s_k v`` (v > 0) with the intercept
``c_k = f_k − s_k v_k`` — an effective Coulomb level ``Cp = c_k`` and viscous slope
``b = s_k`` — and the step is implicit in them (Coulomb set-valued, viscosity as the inertia
h b). Mirrored backwards (``Cn = c_k⁻``, ``b = s_k⁻``). The other direction's level is the
curve's level at 0, lifted to ``−c_k`` if needed so that the step's law stays monotone
(``Cp + Cn ≥ 0``: the intercept of a steep later segment may lie below −f⁻_0); from rest the
Coulomb bounds are the levels at 0, ``[−f⁻_0, f⁺_0]``, and b the mean of the first slopes.
Exact in steady sliding (the start velocity is the end velocity, on its segment: the speed at
which the curve balances the torque); while a step crosses a knot the start segment's line is
used for the rest of that step, an error of ``|s_k − s_{k±1}|`` times the velocity change
beyond the knot, gone by the next step.

The simulator renders the **friction** τ_f, without a file's effort ``offset``: the offset is
the measurement's (a torque sensor's or current loop's constant), not a torque acting on the
joint, and τ_u here is the actuator's torque. (Where the offset could not be separated it is in
the levels, and the simulator cannot tell it from friction: see c₀ above.)

Well-posedness (57): σ_max(P) < 1 guarantees a unique internal force λ. P depends on q, so it is
checked at every step (a cheap Frobenius-norm bound first, the SVD only when the bound is ≥ 1).
A violation is reported in :attr:`GearedArm.state` (``well_posed``, ``sigma_max``), counted,
and warned about once (``on_ill_posed="warn"``) or raised (``"raise"``). The step never returns
NaN: bad inputs raise ``ValueError`` before the state changes.

The arm's rigid-body terms come from any object with the :class:`ArmDynamics` interface:
:class:`~.urdf_dynamics.UrdfDynamics` (Pinocchio, from a URDF) or
:class:`ConstantInertia` (a fixed inertia matrix; tests and 1-DOF checks).
"""

from __future__ import annotations

import math
import warnings
from typing import Mapping, NamedTuple, Protocol, Sequence

import numpy as np

from .._checks import real_array, short_repr
from .dai import IllPosedWarning, Transmission
from .coulomb_projection import (CoulombAxproj, _coulomb_diagonal,  # noqa: F401 (re-exported)
                                 coulomb_gear_bounds, solve_joint_friction)
from .input_friction import InputFriction, gear_asymmetries
from .projection import AxprojSolver, _inv, axproj_diagonal

_min = np.minimum.reduce  # reductions without the ndarray methods' Python wrappers
_all = np.logical_and.reduce

__all__ = ["ArmDynamics", "ConstantInertia", "GearedArm", "ArmState", "EndStops", "per_joint",
           "CoulombAxproj", "coulomb_gear_bounds"]


class ArmDynamics(Protocol):
    """What :class:`GearedArm` needs from a rigid-body model."""

    n: int
    joint_names: tuple

    def terms(self, q: np.ndarray, v: np.ndarray,
              jacobian: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """``(M_h(q), h(q, v), J(q) or None)``: the (n, n) inertia matrix, the (n,) bias force
        (Coriolis, centrifugal, gravity) and, when asked, the (6, n) end-effector Jacobian
        (linear rows first, world-aligned). The arrays may be reused by the next call."""


class ConstantInertia:
    """An arm with a constant inertia matrix: ``M_h q̈ + g = τ`` (g constant, default 0).

    ``jacobian``: a fixed (6, n) Jacobian for wrenches (default: none).
    """

    def __init__(self, M, gravity_torque=None, jacobian=None,
                 joint_names: Sequence[str] | None = None):
        M = np.array(M, dtype=float, ndmin=2)
        if M.ndim != 2 or M.shape[0] != M.shape[1] or not np.all(np.isfinite(M)):
            raise ValueError(f"M: expected a finite square matrix, got shape {M.shape}")
        if not np.allclose(M, M.T, rtol=1e-12, atol=0.0):
            raise ValueError("M: an inertia matrix must be symmetric")
        self.n = M.shape[0]
        self._M = M
        g = np.zeros(self.n) if gravity_torque is None else np.asarray(gravity_torque, float)
        if g.shape != (self.n,) or not np.all(np.isfinite(g)):
            raise ValueError(f"gravity_torque: expected finite shape ({self.n},), got {g.shape}")
        self._g = g
        if jacobian is not None:
            jacobian = np.asarray(jacobian, dtype=float)
            if jacobian.shape != (6, self.n) or not np.all(np.isfinite(jacobian)):
                raise ValueError(f"jacobian: expected finite shape (6, {self.n}), got "
                                 f"{jacobian.shape}")
        self._J = jacobian
        names = tuple(joint_names) if joint_names is not None else tuple(
            f"joint{i + 1}" for i in range(self.n))
        if len(names) != self.n:
            raise ValueError(f"joint_names: expected {self.n} names, got {len(names)}")
        self.joint_names = names

    def terms(self, q, v, jacobian=False):
        if jacobian and self._J is None:
            raise ValueError("wrench: this ConstantInertia has no jacobian")
        return self._M, self._g, (self._J if jacobian else None)


def per_joint(name: str, value, joint_names: Sequence[str], *, minimum: float = -math.inf,
              strict: bool = False) -> np.ndarray:
    """A per-joint parameter as an (n,) float array.

    From a scalar, a sequence of n values or a mapping ``{joint name: value}`` naming every
    joint.

    Parameters
    ----------
    name : str
        The parameter's name, for the error messages.
    value : float, sequence of n floats or mapping of str to float
        The value(s), in the parameter's own unit.
    joint_names : sequence of str
        The n joint names, in joint order.
    minimum : float, optional
        Lower bound on every value (default: none).
    strict : bool, optional
        True: values must exceed ``minimum``; False (default): equal is allowed.

    Returns
    -------
    (n,) ndarray of float
        One value per joint, in ``joint_names`` order.

    Raises
    ------
    ValueError
        Naming the field, unknown or missing joint names, a wrong count, non-finite and
        out-of-range values.
    """
    n = len(joint_names)
    if isinstance(value, Mapping):
        unknown = [k for k in value if k not in joint_names]
        if unknown:
            raise ValueError(f"{name}: unknown joint name(s) {unknown}; the joints are "
                             f"{list(joint_names)}")
        missing = [j for j in joint_names if j not in value]
        if missing:
            raise ValueError(f"{name}: no value for joint(s) {missing}")
        value = [value[j] for j in joint_names]
    try:
        arr = np.array(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: expected a number, {n} numbers or a {{joint: value}} mapping, "
                         f"got {value!r}") from None
    if arr.ndim == 0:
        arr = np.full(n, float(arr))
    if arr.shape != (n,):
        raise ValueError(f"{name}: expected {n} values (one per joint {list(joint_names)}), got "
                         f"shape {arr.shape}")
    bad = ~np.isfinite(arr)
    if np.any(bad):
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name}: must be finite (joint {joint_names[i]} has {arr[i]!r})")
    low = arr <= minimum if strict else arr < minimum
    if np.any(low):
        i = int(np.flatnonzero(low)[0])
        raise ValueError(f"{name}: must be {'>' if strict else '>='} {minimum:g} (joint "
                         f"{joint_names[i]} has {arr[i]!r})")
    return arr


class ArmState(NamedTuple):
    q: np.ndarray  #: joint positions after the step
    v: np.ndarray  #: joint velocities after the step (exact 0 for stuck joints)
    v_star: np.ndarray  #: (69e)
    #: [s]|λ|: transmission friction torque on each joint's motion (48a); with joint friction
    #: (``Cp, Cn, bp, bn``, ``curves``) the sum of the gear's and the joint friction's
    friction: np.ndarray
    lam: np.ndarray  #: internal forces λ (48b)
    stuck: np.ndarray  #: joints in static friction (velocity exactly 0)
    tau_v: np.ndarray  #: load torques τ_v of (50) used in the step
    sigma_max: float  #: σ_max(P) (or its Frobenius upper bound when that is already < 1)
    well_posed: bool  #: (57) held in this step
    iterations: int  #: axproj solver iterations in this step
    converged: bool  #: axproj met its tolerance
    #: joints held by their end stop in this step (hard stops, ``GearedArm(lower=, upper=)``):
    #: the stop's impulse acted, the joint ends exactly at its limit
    at_stop: np.ndarray | None = None
    #: the end stops' joint-side impulses (N m s) in this step, + pushing towards +q
    stop_impulse: np.ndarray | None = None


def _timestep(h) -> float:
    """``h`` as a float timestep [s]; ValueError naming ``h`` unless a finite number > 0."""
    if isinstance(h, (str, bytes)):
        raise ValueError(f"h: expected a timestep in seconds, got {short_repr(h)}")
    try:
        h = float(h)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"h: expected a timestep in seconds, got {short_repr(h)}") from None
    if not (h > 0.0 and math.isfinite(h)):
        raise ValueError(f"h: the timestep must be finite and > 0, got {h!r}")
    return h


def _wrench6(wrench) -> np.ndarray:
    """``wrench`` as 6 finite floats (force, torque); ValueError naming ``wrench``."""
    w = real_array(wrench, "wrench", "6 finite numbers (force, torque)")
    if w.shape != (6,) or not _all(np.isfinite(w)):
        raise ValueError(f"wrench: expected 6 finite numbers (force, torque), got "
                         f"{short_repr(wrench)}")
    return w


class GearedArm:
    """An n-joint arm with a gear transmission at every joint: algorithm (69).

    ``GearedArm(dynamics, gamma_u, gamma_v, m, *, m_v=0, damping=0, q0=0, v0=0, Cp=0, Cn=0,
    bp=0, bn=0)``: per-joint parameters are scalars, sequences of n, or ``{joint name: value}``
    mappings. ``m`` (rotor inertias referred to the joints, ≥ 0) and ``m_v`` (output-side
    transmission inertias) add to the arm's inertia as in (49), (63). ``damping``: viscous
    friction D ≥ 0 [N m s/rad] on the output side (a load: it goes through the gear).
    ``Cp, Cn`` [N m] (``Cp + Cn ≥ 0``; one may be below 0), ``bp, bn`` [N m s/rad] (≥ 0): the
    input-side joint friction of the module docstring ("Joint friction"; :meth:`from_joint_friction`
    takes them from a ``joint_friction.yaml``); it needs |γ_u| ≤ 1 (a forward-drivable gear).
    ``curves``: per joint a :class:`~fric_core.joint_friction.FrictionCurve` or None (a sequence
    of n or a ``{joint name: curve}`` mapping naming some joints): that joint's friction is the
    curve (module docstring, "Friction curves"), and its ``Cp, Cn, bp, bn`` become the curve's
    levels at 0 and first slopes.

    ``step(tau_u, h, wrench=None, tau_load=None) -> v``: actuator torques τ_u referred to the
    joints, timestep h, optional end-effector wrench f (6,: force then torque, world axes, acting
    on the arm) and extra joint load torques (added to τ_v, e.g. a contact modelled by the
    caller). Returns a copy of the new joint velocities; ``q``, ``v`` and ``state`` hold the rest.

    ``on_ill_posed``: ``"warn"`` (default: one :class:`IllPosedWarning`, every violation counted
    in ``ill_posed_steps``), ``"raise"`` (``ValueError`` before the state changes) or
    ``"ignore"``.

    ``lower``, ``upper`` (per joint, ±inf for none; default none): **hard end stops**, rigid
    unilateral constraints ``lower ≤ q ≤ upper`` on the joint outputs (a URDF's position
    limits), held in the implicit step itself: when (69f) would take joint i past its limit,
    the stop acts on the joint as a load torque τ_c,i in (69c) — like any load from the arm, it
    goes through the transmission, so a self-locking gear is stopped by its stop but never
    pushed back by it (paper 004, Sec. 4) — with the complementarity of a unilateral contact:

        v_i ≤ (upper_i − q_i)/h,  τ_c,i ≥ 0,  τ_c,i ((upper_i − q_i)/h − v_i) = 0

    (mirrored at ``lower``). So the joint lands exactly on its limit and rests there (an
    inelastic impact: the velocity-level constraint of implicit-Euler time-stepping, Moreau;
    Stewart & Trinkle), and the other joints take the stop's reaction through M̂⁻¹ and their
    own gears' friction in the same step. τ_c is found by a safeguarded Newton iteration: steps
    with the frictionless Jacobian ∂v/∂τ_c = −h M̂⁻¹ (exact without friction: one iteration),
    kept inside each joint's bracket (the τ_c known to be too small / too large, which static
    friction's flat stretches need), at most ``stop_max_iter`` (60) re-solves of (69d)–(69f);
    converged when each contact velocity is within ``stop_tol`` (1e-9, relative) of landing,
    then it is set to land exactly. If it does not converge (counted in ``stop_unconverged``),
    an impact projection of the step's result is used instead (:meth:`_end_stops`). Either
    way the joint never passes its limit, for any finite input: the result is clipped to
    ``[lower, upper]`` against round-off. ``state.at_stop`` and ``state.stop_impulse`` report
    the stops of the step.

    Speed (issue 17): :meth:`step` reuses buffers, keeps P and h M̂⁻¹ in one array, calls
    LAPACK without numpy's wrappers and lets :meth:`~.projection.AxprojSolver.solve_velocity`
    solve (67) by one linear solve when no joint changes its piece. ``arm.reference = True``
    steps by the reference implementation instead (the plain code the fast path is tested
    against: same trajectories to round-off, ``test/core/test_geared_arm_fast.py``).
    """

    def __init__(self, dynamics: ArmDynamics, gamma_u, gamma_v, m, *, m_v=0.0, damping=0.0,
                 q0=None, v0=None, tol: float = 1e-12, on_ill_posed: str = "warn",
                 lower=None, upper=None, Cp=0.0, Cn=0.0, bp=0.0, bn=0.0, curves=None):
        names = tuple(dynamics.joint_names)
        n = int(dynamics.n)
        if len(names) != n:
            raise ValueError(f"dynamics: {n} joints but {len(names)} joint names")
        self.dynamics = dynamics
        self.n = n
        self.joint_names = names
        gu = per_joint("gamma_u", gamma_u, names)
        gv = per_joint("gamma_v", gamma_v, names)
        flip = gu + gv < 0.0  # (48) is invariant to flipping both signs of a joint's pair
        self.gamma_u = np.where(flip, -gu, gu)
        self.gamma_v = np.where(flip, -gv, gv)
        self.m = per_joint("m", m, names, minimum=0.0)
        self.m_v = per_joint("m_v", m_v, names, minimum=0.0)
        self.damping = per_joint("damping", damping, names, minimum=0.0)
        friction = InputFriction(names, per_joint("Cp", Cp, names), per_joint("Cn", Cn, names),
                                 per_joint("bp", bp, names, minimum=0.0),
                                 per_joint("bn", bn, names, minimum=0.0), curves)
        self._input_friction = friction
        # the law's arrays (a curve joint's levels and first slopes from its curve)
        self.Cp, self.Cn, self.bp, self.bn = friction.Cp, friction.Cn, friction.bp, friction.bn
        #: per joint the friction curve (module docstring) or None
        self.curves = friction.curves
        self._coulomb, self._coulomb_offset = friction.coulomb, friction.offset
        self.joint_friction = friction.active
        self._friction_terms = friction.terms
        self.efficiencies_undetermined: tuple = ()  # set by from_joint_friction
        coulomb = friction.coulomb_possible
        bad = coulomb & (np.abs(self.gamma_u) > 1.0)
        if bad.any():
            j = names[int(np.flatnonzero(bad)[0])]
            raise ValueError(f"Cp: joint {j}: input-side Coulomb friction needs |gamma_u| <= 1 "
                             f"(a forward-drivable gear), got gamma_u = "
                             f"{self.gamma_u[names.index(j)]:g}")
        if on_ill_posed not in ("warn", "raise", "ignore"):
            raise ValueError(f"on_ill_posed: expected 'warn', 'raise' or 'ignore', got "
                             f"{on_ill_posed!r}")
        self.on_ill_posed = on_ill_posed
        lo = np.full(n, -np.inf) if lower is None else np.array(lower, dtype=float).reshape(-1)
        hi = np.full(n, np.inf) if upper is None else np.array(upper, dtype=float).reshape(-1)
        if lo.shape != (n,) or hi.shape != (n,) or np.isnan(lo).any() or np.isnan(hi).any():
            raise ValueError(f"lower, upper: expected {n} limits each (one per joint "
                             f"{list(names)}; ±inf for none), without NaN")
        if (lo >= hi).any():
            j = names[int(np.flatnonzero(lo >= hi)[0])]
            raise ValueError(f"lower: the lower limit of joint {j} is not below its upper limit")
        self.lower, self.upper = lo, hi
        self._stops = bool(np.isfinite(lo).any() or np.isfinite(hi).any())
        self.stop_steps = 0  # steps in which an end stop acted
        self.stop_unconverged = 0  # of those, steps that fell back to the impact projection
        self.stop_max_iter = 60
        self.stop_tol = 1e-9  # landing velocity tolerance, relative to |target| + |v| + 1
        self._q0 = np.zeros(n) if q0 is None else per_joint("q0", q0, names)
        self._v0 = np.zeros(n) if v0 is None else per_joint("v0", v0, names)
        self._solver = AxprojSolver(n, tol=tol)
        self._coulomb_solver = CoulombAxproj(n, tol=tol)
        self._tol = tol
        # γ_u C, C and c0 of the current step (joint friction)
        self._step_g = self._step_C = self._step_c0 = None
        self._gu_m = self.gamma_u * self.m
        self._diag = np.arange(n) * (n + 1)  # flat indices of a diagonal
        self._m_eff = np.zeros(n)
        self._warned = False
        #: True: step by the reference implementation (the plain-numpy code the fast path of
        #: :meth:`step` is tested against, to round-off; slower)
        self.reference = False
        # the fast path's constants and buffers (P and A share one (2n, n) array: one
        # matrix-vector product gives P x and A x)
        self._Dm = np.diag(self.m + self.m_v)
        self._mv_any = bool(self.m_v.any())
        self._Dmv = np.diag(self.m_v)
        self._neg_gv = -self.gamma_v[:, None]
        self._Dgu_m = np.diag(self._gu_m)
        self._Mhat = np.empty((n, n))
        self._B = np.empty((n, n))
        self._PA = np.empty((2 * n, n))
        self._P, self._A = self._PA[:n], self._PA[n:]
        self._shape = (n,)
        self._m_pos = bool((self.m > 0.0).all())
        self.reset()

    # -- constructors ---------------------------------------------------------------------------
    @classmethod
    def from_transmissions(cls, dynamics: ArmDynamics,
                           transmissions: Sequence[Transmission] | Mapping[str, Transmission],
                           **kwargs) -> "GearedArm":
        """One :class:`~.dai.Transmission` per joint (sequence in joint order,
        or a ``{joint name: Transmission}`` mapping): γ_u, γ_v, m from each, and its output-side
        inertia M as the joint's m_v (49)."""
        names = tuple(dynamics.joint_names)
        if isinstance(transmissions, Mapping):
            per_joint("transmissions", {k: 0.0 for k in transmissions}, names)  # names check
            transmissions = [transmissions[j] for j in names]
        transmissions = list(transmissions)
        if len(transmissions) != len(names):
            raise ValueError(f"transmissions: expected {len(names)} (one per joint), got "
                             f"{len(transmissions)}")
        for j, t in zip(names, transmissions):
            if not isinstance(t, Transmission):
                raise ValueError(f"transmissions: joint {j}: expected a Transmission, got {t!r}")
        if "m_v" in kwargs:
            raise ValueError("m_v: taken from the transmissions' M; do not pass it")
        return cls(dynamics, [t.gamma_u for t in transmissions],
                   [t.gamma_v for t in transmissions], [t.m for t in transmissions],
                   m_v=[t.M for t in transmissions], **kwargs)

    @classmethod
    def from_joint_friction(cls, dynamics: ArmDynamics, friction, m, *, gamma_u=0.0,
                            gamma_v=0.0, **kwargs) -> "GearedArm":
        """The arm with the identified (or "true") joint friction of a ``joint_friction.yaml``.

        Joints are matched by name (``dynamics.joint_names``; the file may hold more). Each
        joint gets ``Cp, Cn, bp, bn`` as input-side joint friction (a ``law: curve`` joint its
        curve, module docstring "Friction curves"; levels below 0 with ``Cp + Cn ≥ 0`` as they
        are: every file the reader accepts) — the friction τ_f, **without** the file's effort
        ``offset``, which is the measurement's and not a torque on the joint (module
        docstring) — and, where the file gives
        both efficiencies (``eta_f``, ``eta_b``: the gear model), its gear's γ_u, γ_v by (27);
        elsewhere ``gamma_u``, ``gamma_v`` (default 0: a lossless gear). The joints whose file
        entry has only ``eta_product`` (efficiencies undetermined) are listed in the result's
        ``efficiencies_undetermined``.

        Parameters
        ----------
        dynamics : ArmDynamics
            The arm's rigid body (e.g. :class:`~.urdf_dynamics.UrdfDynamics`).
        friction : JointFrictionSet, str or Path
            The friction, or the path of a ``joint_friction.yaml``.
        m : float, sequence or mapping
            Rotor inertias referred to the joints [kg m²], as for :class:`GearedArm`.
        gamma_u, gamma_v : float, sequence or mapping, optional
            Asymmetry coefficients for joints without efficiencies in the file.
        **kwargs
            Further :class:`GearedArm` arguments (``m_v``, ``damping``, ``q0``, ``lower``, ...).

        Returns
        -------
        GearedArm
            The arm; ``efficiencies_undetermined`` names the joints described above.

        Raises
        ------
        ValueError
            Naming the file and field for a bad file, the joints missing from it, or a bad
            argument.
        """
        from pathlib import Path

        from ..joint_friction import JointFrictionSet, read_joint_friction

        if isinstance(friction, (str, Path)):
            friction = read_joint_friction(friction)
        if not isinstance(friction, JointFrictionSet):
            raise ValueError(f"friction: expected a JointFrictionSet or a file path, got "
                             f"{type(friction).__name__}")
        for k in ("Cp", "Cn", "bp", "bn", "curves"):
            if k in kwargs:
                raise ValueError(f"{k}: taken from the joint friction; do not pass it")
        names = tuple(dynamics.joint_names)
        entries = friction.for_joints(names, "joint_names")
        gu = per_joint("gamma_u", gamma_u, names).copy()
        gv = per_joint("gamma_v", gamma_v, names).copy()
        undetermined = gear_asymmetries(names, entries, gu, gv, "joint_friction")
        arm = cls(dynamics, gu, gv, m, Cp=[e.Cp for e in entries], Cn=[e.Cn for e in entries],
                  bp=[e.bp for e in entries], bn=[e.bn for e in entries],
                  curves=[e.curve if e.law == "curve" else None for e in entries], **kwargs)
        arm.efficiencies_undetermined = tuple(undetermined)
        return arm

    def with_joint_friction(self, friction) -> "GearedArm":
        """A new arm like this one (dynamics, gears, inertias, damping, start state, stops,
        tolerance) with the joint friction (and, where given, the efficiencies) of ``friction``:
        :meth:`from_joint_friction`.

        Parameters
        ----------
        friction : JointFrictionSet, str or Path
            The friction, or the path of a ``joint_friction.yaml``.

        Returns
        -------
        GearedArm
            The new arm (this one is unchanged).
        """
        return type(self).from_joint_friction(
            self.dynamics, friction, self.m, gamma_u=self.gamma_u, gamma_v=self.gamma_v,
            m_v=self.m_v, damping=self.damping, q0=self._q0, v0=self._v0, tol=self._tol,
            on_ill_posed=self.on_ill_posed, lower=self.lower, upper=self.upper)

    @classmethod
    def from_urdf(cls, urdf, gamma_u, gamma_v, m, *, joint_names=None, ee_frame=None,
                  gravity=(0.0, 0.0, -9.81), **kwargs) -> "GearedArm":
        """Build the dynamics from a URDF file with Pinocchio
        (:class:`~.urdf_dynamics.UrdfDynamics`), then the arm."""
        from .urdf_dynamics import UrdfDynamics  # Pinocchio only when a URDF is used
        dyn = UrdfDynamics(urdf, joint_names=joint_names, ee_frame=ee_frame, gravity=gravity)
        return cls(dyn, gamma_u, gamma_v, m, **kwargs)

    # -- state ----------------------------------------------------------------------------------
    def reset(self, q0=None, v0=None) -> None:
        """Back to (q0, v0) (default: the constructor's); forgets the solver's warm start."""
        if q0 is not None:
            self._q0 = per_joint("q0", q0, self.joint_names)
        if v0 is not None:
            self._v0 = per_joint("v0", v0, self.joint_names)
        self._q = self._q0.copy()
        self._v = self._v0.copy()
        self._solver.reset()
        self._coulomb_solver.reset()
        self.steps = 0
        self.ill_posed_steps = 0
        self.unconverged_steps = 0
        z = np.zeros(self.n)
        self._state = ArmState(self._q.copy(), self._v.copy(), z, z, z, np.zeros(self.n, bool),
                               z, 0.0, True, 0, True)
        M, _, _ = self.dynamics.terms(self._q, self._v, False)
        self._inverse_inertia(M)  # fails early on a singular inertia

    def set_state(self, q, v) -> None:
        """Put the arm at (q, v) without resetting the step and failure counters (e.g. to hold
        it where it is after a step that could not be taken); forgets the solver's warm start."""
        q = per_joint("q", q, self.joint_names)
        v = per_joint("v", v, self.joint_names)
        M, _, _ = self.dynamics.terms(q, v, False)
        self._inverse_inertia(M)
        self._q, self._v = q, v
        self._solver.reset()
        self._coulomb_solver.reset()

    @property
    def effective_inertia(self) -> np.ndarray:
        """Per joint 1 / (M̂⁻¹)_ii: the inertia a torque on joint i alone meets with the other
        joints free (M̂ = [m] + M(q), (69a)), at the pose where M̂ was last inverted (the start
        of the last step, or the pose set by :meth:`reset`/:meth:`set_state`). A buffer."""
        return self._m_eff

    @property
    def q(self) -> np.ndarray:
        return self._q.copy()

    @property
    def v(self) -> np.ndarray:
        return self._v.copy()

    @property
    def state(self) -> ArmState:
        """Quantities of the last step."""
        return self._state

    @property
    def backdrivable(self) -> np.ndarray:
        """Per joint |γ_v| < 1 (Sec. 4.1): the joint yields to loads from the arm."""
        return np.abs(self.gamma_v) < 1.0

    @property
    def forward_drivable(self) -> np.ndarray:
        """Per joint |γ_u| < 1 (Sec. 4.1): the actuator moves the unloaded joint."""
        return np.abs(self.gamma_u) < 1.0

    @property
    def efficiencies(self) -> tuple[np.ndarray, np.ndarray]:
        """Per joint (η_f, η_b) of (26) (inf where (26) is singular, γ = −1)."""
        gu, gv = self.gamma_u, self.gamma_v
        eta_f = np.divide(1.0 - gu, 1.0 + gv, out=np.full(self.n, np.inf), where=gv != -1.0)
        eta_b = np.divide(1.0 - gv, 1.0 + gu, out=np.full(self.n, np.inf), where=gu != -1.0)
        return eta_f, eta_b

    # -- step -----------------------------------------------------------------------------------
    def _vector(self, name, x):
        a = real_array(x, name, f"{self.n} numbers")
        if a.shape != (self.n,):
            if a.ndim == 0 and self.n == 1:
                return a.reshape(1)
            raise ValueError(f"{name}: expected shape ({self.n},) (joints "
                             f"{list(self.joint_names)}), got {a.shape}")
        if not np.isfinite(a).all():
            i = int(np.flatnonzero(~np.isfinite(a))[0])
            raise ValueError(f"{name}: must be finite (joint {self.joint_names[i]} is {a[i]!r})")
        return a

    def _inverse_inertia(self, Mq: np.ndarray, m_extra=None) -> np.ndarray:
        Mhat = Mq.copy()
        Mhat.flat[self._diag] += self.m + self.m_v
        if m_extra is not None:
            Mhat.flat[self._diag] += m_extra
        try:
            Minv = np.linalg.inv(Mhat)
        except np.linalg.LinAlgError:
            Minv = None
        if Minv is None or not np.isfinite(Minv).all() or (Minv.flat[self._diag] <= 0.0).any():
            raise ValueError(f"m: the inertia [m] + M(q) is singular at q = {self._q.tolist()} "
                             "(massless links with zero rotor inertia?); give every joint a rotor "
                             "inertia m > 0 or check the link inertias")
        np.divide(1.0, Minv.flat[self._diag], out=self._m_eff)
        return Minv

    def _inverse_inertia_fast(self, Mh: np.ndarray, m_extra=None) -> np.ndarray:
        """:meth:`_inverse_inertia` without the wrappers (same result; it raises through it)."""
        Mhat = np.add(Mh, self._Dm, out=self._Mhat)
        if m_extra is not None:
            Mhat.flat[self._diag] += m_extra
        if self._m_pos:  # M̂ ⪰ [m] ≻ 0: LAPACK meets no zero pivot (no FP flag to silence)
            Minv = _inv(Mhat)
        else:
            with np.errstate(all="ignore"):  # singular: NaN, and the check below raises
                Minv = _inv(Mhat)
        d = Minv.diagonal()
        if not (_min(d) > 0.0 and _all(np.isfinite(Minv), axis=None)):
            return self._inverse_inertia(Mh, m_extra)  # raises the reference's error
        np.divide(1.0, d, out=self._m_eff)
        return Minv

    def step(self, tau_u, h: float, wrench=None, tau_load=None) -> np.ndarray:
        """One step of (69); returns the new joint velocities (a copy)."""
        if not (type(tau_u) is np.ndarray and tau_u.dtype == np.float64
                and tau_u.shape == self._shape and _all(np.isfinite(tau_u))):
            tau_u = self._vector("tau_u", tau_u)  # any other input: converted, or named
        h = _timestep(h) if type(h) is not float or not 0.0 < h < math.inf else h
        if wrench is not None:
            wrench = _wrench6(wrench)
        if tau_load is not None:
            tau_load = self._vector("tau_load", tau_load)
        q, v = self._q, self._v
        Mh, bias, J = self.dynamics.terms(q, v, wrench is not None)
        b = None
        if self.reference:
            tau_u, b, Minv, P, A, smax = self._reference_matrices(tau_u, h, v, Mh)
        else:
            Mq = Mh + self._Dmv if self._mv_any else Mh                           # (49)
            B = np.multiply(self._neg_gv, Mq, out=self._B)
            if self.joint_friction:  # input-side joint friction (module docstring)
                b, C, c0 = self._friction_terms(v)
                m_visc = h * b  # implicit viscosity: an input-side inertia h b
                tau_u = tau_u - c0 - b * v
                self._step_C, self._step_c0 = C, c0
                self._step_g = self.gamma_u * C
                Minv = self._inverse_inertia_fast(Mh, m_visc)                     # (69a)
                B.flat[self._diag] += self.gamma_u * (self.m + m_visc)
            else:
                Minv = self._inverse_inertia_fast(Mh)                             # (69a)
                np.add(B, self._Dgu_m, out=B)
            P = np.matmul(B, Minv, out=self._P)                                   # (69b)
            A = np.multiply(Minv, h, out=self._A)
            smax = math.sqrt(float(np.vdot(P, P)))  # ‖P‖_F ≥ σ_max(P)
        tau_v = bias + self.damping * v                                           # (69c)
        if wrench is not None:
            tau_v = tau_v - J.T @ wrench
        if tau_load is not None:
            tau_v = tau_v + tau_load
        if smax >= 1.0:
            smax = float(np.linalg.norm(P, 2))
        well_posed = smax < 1.0
        if not well_posed:
            self._ill_posed(smax)
        return self._finish_step(tau_u, tau_v, v, A, P, q, smax, well_posed, Minv, h, b)

    def _reference_matrices(self, tau_u, h: float, v, Mh):
        """:meth:`step`'s (49), (69a), (69b) by the reference implementation (``reference =
        True``): ``(τ_u, b, M̂⁻¹, P, A, ‖P‖_F)``, with τ_u less the joint friction's explicit
        part and b its viscous slopes (None without joint friction)."""
        gu_m = self._gu_m
        b = None
        if self.joint_friction:  # input-side joint friction (module docstring)
            b, C, c0 = self._friction_terms(v)
            m_visc = h * b  # implicit viscosity: an input-side inertia h b
            tau_u = tau_u - c0 - b * v
            gu_m = self.gamma_u * (self.m + m_visc)
            self._step_C, self._step_c0 = C, c0
            self._step_g = self.gamma_u * C
            Minv = self._inverse_inertia(Mh, m_visc)                              # (69a)
        else:
            Minv = self._inverse_inertia(Mh)                                      # (69a)
        Mq = Mh + np.diag(self.m_v) if self.m_v.any() else Mh                    # (49)
        B = -self.gamma_v[:, None] * Mq
        B.flat[self._diag] += gu_m
        P = B @ Minv                                                              # (69b)
        A = h * Minv
        smax = math.sqrt(float(np.dot(P.ravel(), P.ravel())))  # ‖P‖_F ≥ σ_max(P)
        return tau_u, b, Minv, P, A, smax

    def _finish_step(self, tau_u, tau_v, v, A, P, q, smax, well_posed, Minv, h, b):
        """(69d)–(69g) with the end stops; stores the state, returns a copy of v."""
        res = self._friction_step(tau_u, tau_v, v, A, P, q, smax)
        v_new = res[0]
        at_stop = impulse = None
        if self._stops:
            q_new = q + h * v_new
            if ((q_new > self.upper) | (q_new < self.lower)).any():
                res, tau_v, q_new, at_stop, impulse = self._stop_step(
                    tau_u, tau_v, v, A, P, q, smax, Minv, h, res)
                v_new = res[0]
                self.stop_steps += 1
            self._q = q_new
        else:
            self._q = q + h * v_new                                               # (69g)
        v_new, v_star, f, lam, stuck, it, conv = res
        if self.joint_friction:  # the friction torque includes the input side's c0 + b v_new
            f = f + self._step_c0 + b * v_new
        self._v = v_new
        self.steps += 1
        self._state = ArmState(self._q, v_new, v_star, f, lam, stuck, tau_v, smax, well_posed,
                               it, conv, at_stop, impulse)
        return v_new.copy()

    def _friction_step(self, tau_u, tau_v, v, A, P, q, smax):
        """(69d)–(69f) for the loads τ_v: (v_new, v*, f, λ, stuck, iterations, converged)."""
        tau_a = tau_u - tau_v
        fast = not self.reference
        if fast:  # A and P are the halves of self._PA: one product for both
            pa = self._PA @ tau_a
            n = self.n
            phi = self.gamma_u * tau_u + self.gamma_v * tau_v - pa[:n]            # (69d)
            v_star = v + pa[n:]                                                   # (69e)
        else:
            phi = self.gamma_u * tau_u + self.gamma_v * tau_v - P @ tau_a         # (69d)
            v_star = v + A @ tau_a                                                # (69e)
        if self.joint_friction:
            return self._joint_friction_step(v_star, A, phi, P, q, smax)
        if self.n == 1:  # (70), identical to the 1-DOF algorithm (44)
            y = axproj_diagonal(v_star, A[0], phi, P[0])
            a, p = A[0, 0], P[0, 0]
            stuck = y == v_star
            f = y / a
            lam = phi + p * f
            it, conv = 0, True
        elif fast:  # (67), (69f): one linear solve when no joint changes its piece
            v_new, f, lam, stuck, it, conv, resid = self._solver.solve_velocity(
                v_star, A, phi, P, self._PA)
            if not conv:
                self.unconverged_steps += 1
                if self.on_ill_posed == "raise":
                    raise ValueError(f"tau_u: axproj found no solution at q = {q.tolist()} "
                                     f"(residual {resid:.3g}, sigma_max(P) = {smax:.4g})")
            return v_new, v_star, f, lam, stuck, it, conv
        else:
            r = self._solver.solve(v_star, A, phi, P)                             # (67)
            y, f, lam, stuck, it, conv = r.y, r.friction, r.lam, r.stuck, r.iterations, r.converged
            if not conv:
                self.unconverged_steps += 1
                if self.on_ill_posed == "raise":
                    raise ValueError(f"tau_u: axproj found no solution at q = {q.tolist()} "
                                     f"(residual {r.residual:.3g}, sigma_max(P) = {smax:.4g})")
        v_new = v_star - y                                                        # (69f)
        v_new[stuck] = 0.0
        return v_new, v_star, f, lam, stuck, it, conv

    def _joint_friction_step(self, v_star, A, phi, P, q, smax):
        """(69f) with the input-side Coulomb friction (:class:`CoulombAxproj`)."""
        C, g = self._step_C, self._step_g
        y, f, stuck, it, conv, res = solve_joint_friction(self._coulomb_solver, v_star, A, phi, P,
                                                          C, g, self.reference)
        if not conv:
            self.unconverged_steps += 1
            if self.on_ill_posed == "raise":
                raise ValueError(f"tau_u: axproj with joint friction found no solution at "
                                 f"q = {q.tolist()} (residual {res:.3g}, sigma_max(P) = "
                                 f"{smax:.4g})")
        # λ of (55) with the Coulomb element's share c = C s: sliding s = sgn v, at rest the
        # share it can take (clip(f, −C, C))
        v_new = v_star - y                                                        # (69f)
        v_new[stuck] = 0.0
        c_share = np.where(stuck, np.clip(f, -C, C), np.sign(v_new) * C)
        lam = phi + P @ f - self.gamma_u * c_share
        return v_new, v_star, f, lam, stuck, it, conv

    def _stop_step(self, tau_u, tau_v, v, A, P, q, smax, Minv, h, res):
        """The hard end stops (class docstring): the stop torques τ_c as loads in (69c), found by
        a projected Newton iteration with the frictionless Jacobian −h M̂⁻¹ until every joint in
        contact lands on its limit (v_i = (limit − q_i)/h) and every stop pushes (complementarity);
        the impact projection :meth:`_end_stops` if it does not converge.
        Returns (friction-step result, τ_v, q, at_stop, impulse)."""
        lo, hi = self.lower, self.upper
        n = self.n
        mu = np.zeros(n)  # stop torque magnitudes: τ_c = sign μ, μ ≥ 0 (a stop only pushes)
        b_lo = np.zeros(n)  # per joint, μ known too small (the joint still passes its limit) ...
        b_hi = np.full(n, np.inf)  # ... and known too large (it stops short)
        target = np.zeros(n)
        sign = np.zeros(n)  # +1: upper stop (τ_c ≥ 0, a load), −1: lower stop (τ_c ≤ 0)
        contact = np.zeros(n, bool)
        free = res
        scale = np.abs(v) + np.abs(free[0]) + 1.0
        tv = tau_v
        for _ in range(self.stop_max_iter):
            v_new = res[0]
            qn = q + h * v_new
            up = ~contact & (qn > hi)
            dn = ~contact & (qn < lo)
            target[up] = (hi[up] - q[up]) / h
            target[dn] = (lo[dn] - q[dn]) / h
            sign[up], sign[dn] = 1.0, -1.0
            contact |= up | dn
            e = sign * (v_new - target)  # > 0: still passing the limit, < 0: stopping short
            # complementarity: a joint short of its limit with no stop torque is free
            contact &= ~((mu == 0.0) & (e <= 0.0))
            e[~contact] = 0.0
            tol = self.stop_tol * (np.abs(target) + scale)
            if (np.abs(e) <= tol).all():
                v_new = v_new.copy()
                v_new[contact] = target[contact]  # land exactly (moves it by <= the tolerance)
                q_new = q + h * v_new
                q_new[contact] = np.where(sign[contact] > 0.0, hi[contact], lo[contact])
                # round-off never takes a joint past a limit
                q_new = np.minimum(np.maximum(q_new, lo), hi)
                return (v_new,) + tuple(res[1:]), tv, q_new, contact, -h * sign * mu
            np.copyto(b_lo, np.maximum(b_lo, mu), where=contact & (e > tol))
            np.copyto(b_hi, np.minimum(b_hi, mu), where=contact & (e < -tol))
            idx = np.flatnonzero(contact)
            try:  # Newton with the frictionless Jacobian of v(τ_c): −h M̂⁻¹
                d = np.linalg.solve(Minv[np.ix_(idx, idx)], (sign * e)[idx]) / h
            except np.linalg.LinAlgError:
                break
            m_new = mu[idx] + sign[idx] * d
            lo_i, hi_i = b_lo[idx], b_hi[idx]
            # safeguard: stay inside the bracket (friction can make v(τ_c) flatter or steeper
            # than the frictionless guess; static friction makes it flat)
            out = (m_new <= lo_i) | (m_new >= hi_i)
            mid = np.where(np.isfinite(hi_i), 0.5 * (lo_i + hi_i), 2.0 * lo_i + np.abs(d))
            mu[idx] = np.maximum(np.where(out & (lo_i < hi_i), mid, m_new), 0.0)
            tv = tau_v + sign * mu  # the stops' torques are loads on the joints (69c)
            res = self._friction_step(tau_u, tv, v, A, P, q, smax)
        self.stop_unconverged += 1
        v_new, q_new, at_stop, impulse = self._end_stops(q, free[0], free[4], Minv, h)
        return (v_new,) + tuple(free[1:]), tau_v, q_new, at_stop, impulse

    def _end_stops(self, q: np.ndarray, v: np.ndarray, stuck: np.ndarray, Minv: np.ndarray,
                   h: float):
        """The fallback of the hard end stops (class docstring), when the stop torques did not
        converge: an impact projection of the step's result v. A joint that would pass its
        limit gets the impulse −p (through M̂⁻¹: ``v ← v − M̂⁻¹ p``) that lands it on the limit,
        solving ``(M̂⁻¹)_KK p_K = v_K − v_target,K`` on the constrained set K (a stop that would
        pull is released); stuck self-locking joints stay held (their gear holds any load from
        the arm). Returns (v, q, at_stop, impulse)."""
        lo, hi = self.lower, self.upper
        n = self.n
        contact = np.zeros(n, bool)
        target = np.zeros(n)
        sign = np.zeros(n)  # the direction a stop pushes: -1 from the upper, +1 from the lower
        p_full = np.zeros(n)
        v_out = v

        def engage(mask, qn):
            up = mask & (qn > hi)
            dn = mask & (qn < lo)
            target[up] = (hi[up] - q[up]) / h
            target[dn] = (lo[dn] - q[dn]) / h
            sign[up], sign[dn] = -1.0, 1.0
            contact[up | dn] = True

        # joints held by static friction stay held only if self-locking (they hold any load
        # from the arm); a backdrivable one takes the impact's reaction
        stuck = stuck & (np.abs(self.gamma_v) >= 1.0)
        engage(np.ones(n, bool), q + h * v)
        for _ in range(2 * n + 2):
            K = contact | stuck
            idx = np.flatnonzero(K)
            rhs = v[idx] - np.where(contact[idx], target[idx], 0.0)
            try:
                p = np.linalg.solve(Minv[np.ix_(idx, idx)], rhs)
            except np.linalg.LinAlgError:
                break
            # the impulse on joint i is -p_i (v_out = v - Minv p): a stop only pushes
            pulls = contact[idx] & (-p * sign[idx] < 0.0)
            if pulls.any():
                contact[idx[pulls]] = False
                continue
            v_out = v - Minv[:, idx] @ p
            p_full.fill(0.0)
            p_full[idx] = -p
            p_full[~contact] = 0.0  # a held joint's share is its static friction's, not a stop's
            free = ~K
            qn = q + h * v_out
            new = free & ((qn > hi) | (qn < lo))
            if not new.any():
                break
            engage(new, qn)
        v_out = np.array(v_out, dtype=float)
        v_out[contact] = target[contact]
        v_out[stuck & ~contact] = 0.0
        # never past a limit, whatever the round-off (or a failed solve): clip, velocity with it
        q_new = q + h * v_out
        clipped = (q_new > hi) | (q_new < lo)
        if clipped.any():
            q_new = np.minimum(np.maximum(q_new, lo), hi)
            v_out[clipped] = (q_new[clipped] - q[clipped]) / h
        q_new[contact] = np.where(sign[contact] < 0.0, hi[contact], lo[contact])
        return v_out, q_new, contact | clipped, p_full

    def _ill_posed(self, smax: float) -> None:
        msg = (f"GearedArm: sigma_max(P) = {smax:.4g} >= 1 at q = {np.round(self._q, 4).tolist()}"
               ": the well-posedness condition (57) fails (the internal forces may be non-unique "
               "or not exist); larger rotor inertias m or smaller |gamma_v| restore it")
        if self.on_ill_posed == "raise":
            raise ValueError("gamma_v: " + msg)
        self.ill_posed_steps += 1
        if self.on_ill_posed == "warn" and not self._warned:
            self._warned = True
            warnings.warn(msg + " (warned once; see ill_posed_steps)", IllPosedWarning,
                          stacklevel=3)


class EndStops:
    """Soft joint position limits, an alternative to :class:`GearedArm`'s hard stops (``lower``,
    ``upper``; what ``transmission_sim`` uses): a compliant bumper that a large enough torque
    pushes through (the penetration under a steady torque τ is τ / K, below), so it bounds the
    travel only for torques of the order of K × the tolerated penetration.

    Joint position limits as one-sided spring-dampers acting on the joints (a joint-side load:
    pass :meth:`torque` as ``tau_load`` to :meth:`GearedArm.step`, so the stop's torque goes
    through the transmission like any load from the arm: a self-locking joint is not pushed
    back by its stop, its actuator is stopped by it).

    Beyond ``upper``: τ = K (q − upper) + B q̇, and only while it pushes back (τ ≥ 0); the same
    below ``lower`` with τ ≤ 0. Non-finite limits (continuous joints) are never engaged.

    Like MuJoCo's soft constraints (``solref``: time constant and damping ratio), the stop is
    specified relative to the joint's effective inertia m_e (:attr:`GearedArm.effective_inertia`,
    which changes with the pose): K = m_e ω², B = 2 ζ m_e ω with ω = ``omega_h`` / h. The torque
    is explicit, from the step's starting (q, q̇), like the rest of h(q, q̇) in (69c). With
    a = ω h the update (69e)–(69g) of a stop alone is x⁺ = (1 − a²) x + (1 − 2ζa) y,
    y⁺ = −a² x + (1 − 2ζa) y (x = penetration, y = h q̇): determinant 1 − 2ζa, trace
    2 − a² − 2ζa, so by Jury's test it is stable iff ζa < 1 and a² + 4ζa < 4, i.e.
    a < 2√2 − 2 ≈ 0.83 for ζ = 1. The defaults a = 0.3, ζ = 1 (critically damped) keep a wide
    margin for the coupling between joints the per-joint m_e ignores. A critically damped
    one-sided stop lets go when its force vanishes (ωt = 2): the rebound speed is e⁻² ≈ 0.14 of
    the impact speed. The penetration under a steady torque τ is τ / K (e.g. 20 N m on
    m_e = 0.5 kg m² at 1 kHz: K = 4.5·10⁴ N m/rad, 0.44 mrad).
    """

    def __init__(self, lower, upper, h: float, joint_names: Sequence[str], *,
                 omega_h: float = 0.3, zeta: float = 1.0):
        self.joint_names = tuple(joint_names)
        lo = np.array(lower, dtype=float).reshape(-1)
        hi = np.array(upper, dtype=float).reshape(-1)
        n = len(self.joint_names)
        if lo.shape != (n,) or hi.shape != (n,) or np.isnan(lo).any() or np.isnan(hi).any():
            raise ValueError(f"lower, upper: expected {n} limits each (one per joint "
                             f"{list(self.joint_names)}), without NaN")
        bad = np.isfinite(lo) & np.isfinite(hi) & (lo >= hi)
        if bad.any():
            j = self.joint_names[int(np.flatnonzero(bad)[0])]
            raise ValueError(f"lower: the lower limit of joint {j} is not below its upper limit")
        if not (h > 0.0 and math.isfinite(h)):
            raise ValueError(f"h: the timestep must be finite and > 0, got {h!r}")
        if not (0.0 < omega_h <= 0.5):
            raise ValueError(f"omega_h: must be in (0, 0.5] for a stable explicit stop, got "
                             f"{omega_h!r}")
        if not (0.0 < zeta <= 1.0):
            raise ValueError(f"zeta: must be in (0, 1], got {zeta!r}")
        self.lower, self.upper = lo, hi
        self.omega = omega_h / h
        self.zeta = zeta
        self._tau = np.zeros(n)
        self._pen = np.zeros(n)

    def stiffness(self, inertia: np.ndarray) -> np.ndarray:
        """K = m_e ω² per joint for the effective inertias ``inertia``."""
        return np.asarray(inertia, float) * self.omega * self.omega

    def engaged(self, q: np.ndarray) -> np.ndarray:
        """Per joint: beyond a limit."""
        return (q > self.upper) | (q < self.lower)

    def torque(self, q: np.ndarray, v: np.ndarray, inertia: np.ndarray) -> np.ndarray:
        """The stops' joint-side load torques at (q, q̇) for the joints' effective inertias
        (a buffer reused by the next call)."""
        tau, pen = self._tau, self._pen
        tau.fill(0.0)
        w = self.omega
        np.subtract(q, self.upper, out=pen)
        hit = pen > 0.0
        if hit.any():
            tau[hit] = np.maximum(inertia[hit] * w * (w * pen[hit] + 2.0 * self.zeta * v[hit]),
                                  0.0)
        np.subtract(q, self.lower, out=pen)
        hit = pen < 0.0
        if hit.any():
            tau[hit] = np.minimum(inertia[hit] * w * (w * pen[hit] + 2.0 * self.zeta * v[hit]),
                                  0.0)
        return tau
