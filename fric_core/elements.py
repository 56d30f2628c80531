"""The four implicit-Euler friction elements of Kikuuwe et al. 2006 (Sec. III, Fig. 3).

=====================  ========  ============  =======================================
element                 model     eq.           step(input) -> output
=====================  ========  ============  =======================================
RigidAdmittance         A         (26)          net applied force h -> velocity v
InertialImpedance       B         (36)          input velocity u -> spring force h
MasslessImpedance       C         (38)          input velocity u -> friction force f
CompliantAdmittance     D         (45)          applied force h -> velocity u
=====================  ========  ============  =======================================

Each step solves the implicit-Euler constraints exactly through Φ_Z (Theorem 1), so a stuck
element has exactly zero sliding velocity (no drift) and the force never chatters at v = 0.

Shapes. With scalar parameters and a float input, an element runs on plain floats (no numpy in
the step). A vector input of shape (n,) is either

* one n-D contact (isotropic law, scalar M, K, B: the paper's Sec. III-F), or
* n independent 1-D joints: whenever M, K, B or the law's parameters are arrays of shape (n,),
  the law is :class:`~fric_core.laws.AsymmetricFriction`, or ``per_joint=True`` is given.

An element built from scalars only takes its shape from the first input it steps (a float, or an
array); later inputs must keep that shape. A non-finite or wrongly shaped input raises
``ValueError`` and leaves the state untouched.

Totality (issue 13). Every finite input gives a finite output and a finite state: the laws cannot
overflow (:mod:`fric_core.laws`), and a step whose plain-float evaluation overflows (an input or
parameter near the float range) is evaluated again from the old state with every intermediate
saturated at ``±sys.float_info.max`` (``_advance_*_safe``); the usual step pays one comparison
for that. Model C's output is Φ_Z, so it keeps the law's bound (e.g. ``|f| ≤ F`` for Coulomb) for
any input; the other outputs (a velocity, a spring force) have no bound by nature and are only
finite. Parameter sets whose constants (C of eq. (35), B + T K, Z, A of eq. (44)) are not finite
and positive are rejected at construction. Note that a finite but physically absurd input (one
sample at 1e300 m/s) is still *physics* to the element: it is the caller's job to reject
implausible inputs before they reach the state (the renderer's ``max_velocity``/``max_force``).
"""

from __future__ import annotations

import math
import sys
from typing import NamedTuple, Union

import numpy as np

from ._checks import named_sizes, param
from .design import law_validity, static_advice, static_convergence, warn_design
from .laws import FrictionLaw

ArrayLike = Union[float, np.ndarray]

__all__ = ["RigidAdmittance", "InertialImpedance", "MasslessImpedance", "CompliantAdmittance",
           "RigidAdmittanceState", "InertialImpedanceState", "MasslessImpedanceState",
           "CompliantAdmittanceState"]

_SCALAR_TYPES = (float, int, np.floating, np.integer)
_FMAX = sys.float_info.max


def _c(x: float) -> float:
    """Saturate ``x`` (finite or ±inf: the safe paths never form NaN) to the float range."""
    if -_FMAX <= x <= _FMAX:
        return x
    return _FMAX if x > 0.0 else -_FMAX


def _cv(x: np.ndarray) -> np.ndarray:
    """Vector :func:`_c`."""
    return np.clip(x, -_FMAX, _FMAX)


def _finite(*xs) -> bool:
    """All entries of the arrays ``xs`` finite (the vector steps' overflow check)."""
    for x in xs:
        if not np.isfinite(x).all():
            return False
    return True


def _check_constants(cls_name: str, **constants) -> None:
    """Reject parameter sets whose element constants overflow or vanish (``ValueError``)."""
    for name, value in constants.items():
        v = np.asarray(value, dtype=float)
        if not (np.all(np.isfinite(v)) and np.all(v > 0.0)):
            raise ValueError(f"{name}: {cls_name}'s constant {name} = {value!r} is not a finite "
                             "positive number for these parameters (they overflow or underflow "
                             "the float range); use parameters of physical size")


class _Element:
    """Shape handling, input checks and design warnings shared by the four elements."""

    _input_name = "input"

    def _setup(self, law: FrictionLaw, dt: float, per_joint: bool | None,
               initial: dict | None = None, **params) -> None:
        """Validate ``law`` and ``dt`` and settle the shape (see :meth:`_setup_shape`)."""
        if not isinstance(law, FrictionLaw):
            raise ValueError(f"law: expected a fric_core.laws law (e.g. Coulomb(F)), got {law!r}")
        self.law = law
        self._setup_shape(dt, per_joint, initial, law=law, **params)
        self._phiz_scalar = law._phi_z_scalar if law.scalar_ok else None

    def _setup_shape(self, dt: float, per_joint: bool | None, initial: dict | None = None, *,
                     law: FrictionLaw | None = None, **params) -> None:
        """Validate ``dt``; infer the size and the per-joint reading.

        ``params``: physical parameters (arrays mean per-joint); ``initial``: initial state
        values (arrays only fix the shape); ``law``: its per-joint parameters count as params.
        """
        self.dt = param("dt", dt, minimum=0.0, strict=True, allow_array=False)
        n = named_sizes(**params, **(initial or {}))
        if law is not None and law.size is not None:
            if n is not None and n != law.size:
                raise ValueError(f"law: has {law.size} per-joint parameter sets but the element "
                                 f"parameters have {n}")
            n = law.size
        arrays = any(isinstance(v, np.ndarray) for v in params.values())
        law_per_joint = law is not None and law.per_joint
        if per_joint is None:
            per_joint = law_per_joint or arrays
        elif not per_joint and (law_per_joint or arrays):
            raise ValueError("per_joint: array-valued parameters (or a 1-D-only law such as "
                             "AsymmetricFriction) describe independent joints; per_joint=False "
                             "needs scalar parameters")
        if per_joint and law is not None and not law.scalar_ok:
            raise ValueError(f"per_joint: {type(law).__name__} is an n-D contact law and cannot "
                             "act on independent joints")
        self.per_joint = bool(per_joint)
        self._n0 = n

    def _design_warnings(self, mass: float | None = None, K: ArrayLike = 0.0,
                         B: ArrayLike = 0.0) -> None:
        msgs = law_validity(self.law, self.Z).problems(self.law)
        if mass is not None:
            sc = static_convergence(mass, K, B, self.dt)
            if not sc.non_oscillatory:
                advice = ("; to settle without oscillation " + static_advice(mass, K, B, self.dt)
                          if np.ndim(mass) == 0 and np.ndim(K) == 0 and np.ndim(B) == 0 else "")
                msgs.append(f"{type(self).__name__}: static friction on mass {mass} will "
                            f"{'oscillate' if sc.converges else 'diverge'} ({sc}){advice}; "
                            "see Sec. IV-C: with B^2 = 4KM keep dt^2 < M/(4K)")
        warn_design(msgs, stacklevel=4)

    def _contact_constants(self) -> ArrayLike:
        """B + T K of the presliding spring-damper (models C, D) and the coefficients of (38c)."""
        c = self.B + self.dt * self.K
        if np.any(np.asarray(c) <= 0.0):
            raise ValueError("B: B + dt*K must be > 0 (a contact with K = B = 0 has no "
                             "presliding element)")
        _check_constants(type(self).__name__, **{"B + dt*K": c})
        self._Kc = self.K / c
        self._Bc = self.B / c
        self._Tc = self.dt / c
        return c

    # -- shape --------------------------------------------------------------------------------
    def _fix_shape(self, n: int | None) -> None:
        """Set the element's shape: None for scalar, n for vectors; (re)initialises the state."""
        self._n = n
        self._scalar = n is None
        self._on_shape(n)
        self._init_state()

    def _on_shape(self, n: int | None) -> None:
        """Hook run once the shape is known: the implicit elements pick their Φ_Z."""
        if n is None:
            if not self.law.scalar_ok:
                raise ValueError(f"{self._input_name}: {type(self.law).__name__} needs a vector")
            self._phiz = self._phiz_scalar
        elif self.per_joint:
            self._phiz = self.law._phi_z_each
        else:
            self._phiz = self.law._phi_z_iso

    def step(self, x: ArrayLike) -> ArrayLike:
        """Advance one step; return the element's output.

        Parameters
        ----------
        x : float or ndarray, shape (n,)
            The input the class docstring names: ``h``, the net applied force, of an admittance;
            ``u``, the velocity, of an impedance.

        Returns
        -------
        float or ndarray
            The output after the step: the velocity of an admittance, the force of an impedance.

        A finite float on a scalar element goes straight to the float step (no numpy); anything
        else is checked and converted first (:meth:`_step_checked`).
        """
        if self._scalar and x.__class__ is float and x - x == 0.0:
            return self._advance_scalar(x)
        return self._step_checked(x)

    def _step_checked(self, x):
        """Validate and convert ``x``, fixing the shape on the first step if still open."""
        name = self._input_name
        if isinstance(x, _SCALAR_TYPES) and not isinstance(x, bool):
            x = float(x)
            if not math.isfinite(x):
                raise ValueError(f"{name}: must be finite, got {x!r}")
            if not self._scalar:
                raise ValueError(f"{name}: expected an array of shape ({self._n},), got a scalar")
            return self._advance_scalar(x)
        try:
            arr = np.array(x, dtype=float)
        except (TypeError, ValueError):
            raise ValueError(f"{name}: expected a number or an array, got {x!r}") from None
        if arr.ndim == 0:
            return self._step_checked(float(arr))
        if arr.ndim != 1 or arr.size == 0:
            raise ValueError(f"{name}: expected a scalar or shape (n,), got shape {arr.shape}")
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"{name}: must be finite (got NaN or inf at index "
                             f"{int(np.flatnonzero(~np.isfinite(arr))[0])})")
        if self._scalar:
            if self._n0 is None and not self._stepped:
                self._fix_shape(arr.size)
            else:
                raise ValueError(f"{name}: this element is scalar, got shape {arr.shape}")
        elif arr.size != self._n:
            raise ValueError(f"{name}: expected shape ({self._n},), got {arr.shape}")
        return self._advance_vector(arr)

    def reset(self) -> None:
        """Return to the initial state (and, if the shape came from the first input, free it)."""
        self._stepped = False
        self._fix_shape(self._n0)

    def _stuck(self, f, vs, Z):
        """Whether Φ_Z took its static branch (f is exactly vs/Z)."""
        if self._scalar:
            return f == vs / Z
        with np.errstate(over="ignore"):
            eq = f == vs / Z
        return eq if self.per_joint else bool(np.all(eq))

    @staticmethod
    def _as_state(v0: ArrayLike, n: int | None) -> ArrayLike:
        if n is None:
            return float(v0)
        return np.broadcast_to(np.asarray(v0, dtype=float), (n,)).copy()

    @property
    def shape(self) -> tuple:
        """() for a scalar element, (n,) for a vector one (before the first step: as far as
        known)."""
        return () if self._scalar else (self._n,)


class RigidAdmittanceState(NamedTuple):
    v: ArrayLike  #: velocity of the mass after the step
    f: ArrayLike  #: friction force acting against the motion in the step
    v_star: ArrayLike  #: velocity the mass would have had without friction (26a)
    stuck: ArrayLike  #: static friction in the step (v is then exactly 0)


class RigidAdmittance(_Element):
    """Model A, rigid admittance (eq. 26): a mass M sliding on a fixed surface.

    ``step(h) -> v``: ``h`` is the net applied force (all forces but friction) and ``v`` the new
    velocity:  v* = v + T h/M (26a);  f = Φ_{T/M}(v*) (26b);  v = v* − T f/M (26c).
    ``v`` is exactly 0 while ``M v*/T`` lies in the static set; the element is dissipative for
    any T (|v| ≤ |v*|).
    """

    _input_name = "h"

    def __init__(self, M: ArrayLike, law: FrictionLaw, dt: float, v0: ArrayLike = 0.0, *,
                 per_joint: bool | None = None):
        self.M = param("M", M, minimum=0.0, strict=True)
        self._v0 = param("v0", v0)
        self._setup(law, dt, per_joint, {"v0": self._v0}, M=self.M)
        self.Z = self.dt / self.M
        _check_constants(type(self).__name__, Z=self.Z)
        self._design_warnings()
        self.reset()

    def _init_state(self):
        self._v = self._as_state(self._v0, self._n)
        self._f = 0.0 if self._n is None else np.zeros(self._n)
        self._vs = self._v

    def _advance_scalar(self, h: float) -> float:
        Z = self.Z
        vs = self._v + Z * h
        f = self._phiz(vs, Z)
        v = 0.0 if f == vs / Z else vs - Z * f
        if v - v != 0.0 or vs - vs != 0.0:  # overflowed: saturating evaluation
            return self._advance_scalar_safe(h)
        self._vs, self._f, self._v, self._stepped = vs, f, v, True
        return v

    def _advance_scalar_safe(self, h: float) -> float:
        Z = self.Z
        vs = _c(self._v + _c(Z * h))
        f = self._phiz(vs, Z)
        v = 0.0 if f == vs / Z else _c(vs - _c(Z * f))
        self._vs, self._f, self._v, self._stepped = vs, f, v, True
        return v

    def _advance_vector(self, h):
        Z = self.Z
        with np.errstate(over="ignore", invalid="ignore"):
            vs = self._v + Z * h
            f = self._phiz(vs, Z)
            v = np.where(f == vs / Z, 0.0, vs - Z * f)
            if not _finite(v, vs):
                vs = _cv(self._v + _cv(Z * h))
                f = self._phiz(vs, Z)
                v = np.where(f == vs / Z, 0.0, _cv(vs - _cv(Z * f)))
        self._vs, self._f, self._v, self._stepped = vs, f, v, True
        return v.copy()

    @property
    def state(self) -> RigidAdmittanceState:
        return RigidAdmittanceState(v=self._v, f=self._f, v_star=self._vs,
                                    stuck=self._stuck(self._f, self._vs, self.Z))


class InertialImpedanceState(NamedTuple):
    e: ArrayLike  #: spring-damper extension
    v: ArrayLike  #: velocity of the virtual mass
    h: ArrayLike  #: force of the spring-damper (the element's output)
    f: ArrayLike  #: friction force on the mass
    stuck: ArrayLike  #: static friction in the step (v is then exactly 0)


class InertialImpedance(_Element):
    """Model B, inertial impedance (eq. 36): a mass M with friction, pulled through a
    spring-damper (K, B) whose free end moves at the input velocity u.

    ``step(u) -> h``, the spring-damper force (what a device moving at u feels is −h). With the
    state written as the extension e and the mass velocity v (v_{k−1} = u_{k−1} − (e_{k−1} −
    e_{k−2})/T, which makes (36a) read as below), with C = M + T B + T² K (35):
    v* = u + (T K e − M (u − v))/C (36a); f = Φ_{T/C}(v*) (36b); v = v* − T f/C;
    e = e + T (u − v) (36c); h = K e + B (u − v) (36d).
    """

    _input_name = "u"

    def __init__(self, M: ArrayLike, K: ArrayLike, B: ArrayLike, law: FrictionLaw, dt: float,
                 *, per_joint: bool | None = None):
        self.M = param("M", M, minimum=0.0, strict=True)
        self.K = param("K", K, minimum=0.0)
        self.B = param("B", B, minimum=0.0)
        self._setup(law, dt, per_joint, M=self.M, K=self.K, B=self.B)
        T = self.dt
        self.C = self.M + T * self.B + T * T * self.K
        self.Z = T / self.C
        _check_constants(type(self).__name__, C=self.C, Z=self.Z)
        self._a = T * self.K / self.C
        self._b = self.M / self.C
        self._design_warnings()
        self.reset()

    def _init_state(self):
        z = 0.0 if self._n is None else np.zeros(self._n)
        self._e, self._v, self._h, self._f, self._vs = z, z, z, z, z

    def _advance_scalar(self, u: float) -> float:
        Z, T = self.Z, self.dt
        e = self._e
        vs = u + self._a * e - self._b * (u - self._v)
        f = self._phiz(vs, Z)
        v = 0.0 if f == vs / Z else vs - Z * f
        e = e + T * (u - v)
        h = self.K * e + self.B * (u - v)
        if h - h != 0.0 or (e - e) + (v - v) + (vs - vs) != 0.0:  # overflowed
            return self._advance_scalar_safe(u)
        self._e, self._v, self._h, self._f, self._vs, self._stepped = e, v, h, f, vs, True
        return h

    def _advance_scalar_safe(self, u: float) -> float:
        Z, T = self.Z, self.dt
        e = self._e
        vs = _c(_c(u + _c(self._a * e)) - _c(self._b * _c(u - self._v)))
        f = self._phiz(vs, Z)
        v = 0.0 if f == vs / Z else _c(vs - _c(Z * f))
        du = _c(u - v)
        e = _c(e + _c(T * du))
        h = _c(_c(self.K * e) + _c(self.B * du))
        self._e, self._v, self._h, self._f, self._vs, self._stepped = e, v, h, f, vs, True
        return h

    def _advance_vector(self, u):
        Z, T = self.Z, self.dt
        with np.errstate(over="ignore", invalid="ignore"):
            vs = u + self._a * self._e - self._b * (u - self._v)
            f = self._phiz(vs, Z)
            v = np.where(f == vs / Z, 0.0, vs - Z * f)
            e = self._e + T * (u - v)
            h = self.K * e + self.B * (u - v)
            if not _finite(h, e, v, vs):
                vs = _cv(_cv(u + _cv(self._a * self._e)) - _cv(self._b * _cv(u - self._v)))
                f = self._phiz(vs, Z)
                v = np.where(f == vs / Z, 0.0, _cv(vs - _cv(Z * f)))
                du = _cv(u - v)
                e = _cv(self._e + _cv(T * du))
                h = _cv(_cv(self.K * e) + _cv(self.B * du))
        self._e, self._v, self._h, self._f, self._vs, self._stepped = e, v, h, f, vs, True
        return h.copy()

    @property
    def state(self) -> InertialImpedanceState:
        return InertialImpedanceState(e=self._e, v=self._v, h=self._h, f=self._f,
                                      stuck=self._stuck(self._f, self._vs, self.Z))


class MasslessImpedanceState(NamedTuple):
    e: ArrayLike  #: elastic (presliding) displacement of the contact
    f: ArrayLike  #: friction force (the element's output)
    v_star: ArrayLike  #: (38a)
    stuck: ArrayLike  #: static friction in the step (the contact then does not slide at all)


class MasslessImpedance(_Element):
    """Model C, massless impedance (eq. 38): a frictional contact with presliding stiffness K
    and damping B, driven by the relative sliding velocity u. The versatile element: one per
    contact or joint, independent of the bodies' dynamics (Sec. IV-A).

    ``step(u) -> f``: v* = u + K e/(B + T K) (38a); f = Φ_{1/(B+TK)}(v*) (38b);
    e = (B e + T f)/(B + T K) (38c), which in static friction is exactly e + T u (37a).
    ``f`` has the sign of the sliding velocity; the force to command on a device moving at u
    is −f. ``mass`` (optional) is the mass the contact acts on, used only to check the
    static-friction dynamics (63) at construction.
    """

    _input_name = "u"

    def __init__(self, K: ArrayLike, B: ArrayLike, law: FrictionLaw, dt: float, *,
                 per_joint: bool | None = None, mass: ArrayLike | None = None):
        self.K = param("K", K, minimum=0.0)
        self.B = param("B", B, minimum=0.0)
        self._setup(law, dt, per_joint, K=self.K, B=self.B)
        self.Z = 1.0 / self._contact_constants()
        _check_constants(type(self).__name__, Z=self.Z)
        self._design_warnings(mass=mass, K=self.K, B=self.B)
        self.reset()

    def _init_state(self):
        z = 0.0 if self._n is None else np.zeros(self._n)
        self._e, self._f, self._vs = z, z, z

    def _advance_scalar(self, u: float) -> float:
        e = self._e
        vs = u + self._Kc * e
        Z = self.Z
        f = self._phiz(vs, Z)
        if f == vs / Z:
            e = e + self.dt * u  # (37a): stuck, the contact only deforms
        else:
            e = self._Bc * e + self._Tc * f
        if (e - e) + (vs - vs) + (f - f) != 0.0:  # overflowed
            return self._advance_scalar_safe(u)
        self._e, self._f, self._vs, self._stepped = e, f, vs, True
        return f

    def _advance_scalar_safe(self, u: float) -> float:
        e = self._e
        vs = _c(u + _c(self._Kc * e))
        Z = self.Z
        f = self._phiz(vs, Z)
        if f == vs / Z:
            e = _c(e + _c(self.dt * u))
        else:
            e = _c(_c(self._Bc * e) + _c(self._Tc * f))
        self._e, self._f, self._vs, self._stepped = e, f, vs, True
        return f

    def _advance_vector(self, u):
        e = self._e
        Z = self.Z
        with np.errstate(over="ignore", invalid="ignore"):
            vs = u + self._Kc * e
            f = self._phiz(vs, Z)
            e_new = np.where(f == vs / Z, e + self.dt * u, self._Bc * e + self._Tc * f)
            if not _finite(e_new, vs, f):
                vs = _cv(u + _cv(self._Kc * e))
                f = self._phiz(vs, Z)
                e_new = np.where(f == vs / Z, _cv(e + _cv(self.dt * u)),
                                 _cv(_cv(self._Bc * e) + _cv(self._Tc * f)))
        self._e = e_new
        self._f, self._vs, self._stepped = f, vs, True
        return f.copy()

    @property
    def state(self) -> MasslessImpedanceState:
        return MasslessImpedanceState(e=self._e, f=self._f, v_star=self._vs,
                                      stuck=self._stuck(self._f, self._vs, self.Z))


class CompliantAdmittanceState(NamedTuple):
    u: ArrayLike  #: velocity of the mass (the element's output)
    e: ArrayLike  #: elastic displacement of the contact
    f: ArrayLike  #: friction force on the mass
    stuck: ArrayLike  #: static friction in the step


class CompliantAdmittance(_Element):
    """Model D, compliant admittance (eq. 45): a mass M on a model-C contact (K, B).

    ``step(h) -> u`` with h the applied force: v* = u + T h/M + K e/(B + T K) (45a);
    f = Φ_A(v*) with A = (T² K + T B + M)/(M (B + T K)) (44), (45b); e = (B e + T f)/(B + T K)
    (45c); u = u + T (h − f)/M (45d). Stable for any K (Fig. 14), unlike a model-C element
    coupled explicitly to a mass.
    """

    _input_name = "h"

    def __init__(self, M: ArrayLike, K: ArrayLike, B: ArrayLike, law: FrictionLaw, dt: float,
                 u0: ArrayLike = 0.0, *, per_joint: bool | None = None):
        self.M = param("M", M, minimum=0.0, strict=True)
        self.K = param("K", K, minimum=0.0)
        self.B = param("B", B, minimum=0.0)
        self._u0 = param("u0", u0)
        self._setup(law, dt, per_joint, {"u0": self._u0}, M=self.M, K=self.K, B=self.B)
        T = self.dt
        c = self._contact_constants()
        self._TM = T / self.M
        self.Z = (T * T * self.K + T * self.B + self.M) / (self.M * c)  # A of eq. (44)
        _check_constants(type(self).__name__, **{"dt/M": self._TM, "A": self.Z})
        self._design_warnings()
        self.reset()

    def _init_state(self):
        self._u = self._as_state(self._u0, self._n)
        z = 0.0 if self._n is None else np.zeros(self._n)
        self._e, self._f, self._vs = z, z, z

    def _advance_scalar(self, h: float) -> float:
        e, u = self._e, self._u
        vs = u + self._TM * h + self._Kc * e
        f = self._phiz(vs, self.Z)
        e = self._Bc * e + self._Tc * f
        u = u + self._TM * (h - f)
        if (u - u) + (e - e) + (vs - vs) != 0.0:  # overflowed
            return self._advance_scalar_safe(h)
        self._e, self._u, self._f, self._vs, self._stepped = e, u, f, vs, True
        return u

    def _advance_scalar_safe(self, h: float) -> float:
        e, u = self._e, self._u
        vs = _c(_c(u + _c(self._TM * h)) + _c(self._Kc * e))
        f = self._phiz(vs, self.Z)
        e = _c(_c(self._Bc * e) + _c(self._Tc * f))
        u = _c(u + _c(self._TM * _c(h - f)))
        self._e, self._u, self._f, self._vs, self._stepped = e, u, f, vs, True
        return u

    def _advance_vector(self, h):
        e, u = self._e, self._u
        with np.errstate(over="ignore", invalid="ignore"):
            vs = u + self._TM * h + self._Kc * e
            f = self._phiz(vs, self.Z)
            e_new = self._Bc * e + self._Tc * f
            u_new = u + self._TM * (h - f)
            if not _finite(u_new, e_new, vs):
                vs = _cv(_cv(u + _cv(self._TM * h)) + _cv(self._Kc * e))
                f = self._phiz(vs, self.Z)
                e_new = _cv(_cv(self._Bc * e) + _cv(self._Tc * f))
                u_new = _cv(u + _cv(self._TM * _cv(h - f)))
        self._e, self._u, self._f, self._vs, self._stepped = e_new, u_new, f, vs, True
        return u_new.copy()

    @property
    def state(self) -> CompliantAdmittanceState:
        return CompliantAdmittanceState(u=self._u, e=self._e, f=self._f,
                                        stuck=self._stuck(self._f, self._vs, self.Z))
