"""Conventional friction models as discrete-time elements, for side-by-side comparison.

These are the models Kikuuwe et al. 2006 (paper 000) replace, written the way practitioners
write them, with the same ``step`` interface as :mod:`fric_core.elements`, so the drift and
chattering the papers describe can be reproduced next to models A–D.

==============================  ====================  ==========================================
element                          source                step(input) -> output
==============================  ====================  ==========================================
KarnoppAdmittance                000 eq. (3)           net applied force h -> velocity v
QuinnAdmittance                  000 eq. (4)           net applied force h -> velocity v
ViscousRegularisedAdmittance     000 eq. (5)           net applied force h -> velocity v
ViscousRegularisedImpedance      000 eq. (5)           sliding velocity u -> friction force f
Dahl                             000 Sec. II-B [12]    sliding velocity u -> friction force f
LuGre                            002 eqs. (1)–(3)      sliding velocity u -> friction force f
ElastoPlastic                    002 eqs. (4)–(6)      sliding velocity u -> friction force f
==============================  ====================  ==========================================

Sign conventions are those of the elements: an admittance is a mass M with ``M dv/dt = h − f``;
an impedance returns the friction force ``f`` with the sign of the sliding velocity (the force to
command on a device moving at u is −f). Use :mod:`fric_core.coupling` to put an impedance on a
mass.

What to expect (paper 000, Sec. II): the threshold models (3)–(5) drift or chatter depending on
the non-physical threshold ``eps``; Dahl and LuGre drift under oscillating loads below the
breakaway level (paper 002, Sec. III-C); the elasto-plastic model does not (while its bristle
stays below the breakaway deflection), and neither do the implicit models A–D.

Shapes. A float input runs on plain floats (no numpy in the step); an array input of shape (n,)
means n *independent joints* (every parameter may be an array of per-joint values). n-D isotropic
contacts are not modelled by these baselines: ``per_joint=False`` and n-D-only laws such as
:class:`~fric_core.laws.EllipticCoulomb` raise ``ValueError``. Input validation is shared with the
elements: a non-finite or wrongly shaped input raises ``ValueError`` and leaves the state
untouched; an element built from scalars takes its shape from its first input.
"""

from __future__ import annotations

import math
from typing import NamedTuple, Union

import numpy as np

from ._checks import param
from .elements import _Element
from .laws import FrictionLaw, _stribeck_decay

ArrayLike = Union[float, np.ndarray]

__all__ = ["KarnoppAdmittance", "QuinnAdmittance", "ViscousRegularisedAdmittance",
           "ViscousRegularisedImpedance", "Dahl", "LuGre", "ElastoPlastic",
           "KarnoppState", "QuinnState", "ViscousRegularisedAdmittanceState",
           "ViscousRegularisedImpedanceState", "DahlState", "LuGreState", "ElastoPlasticState"]


def _check_per_joint(per_joint) -> None:
    if per_joint is not True:
        raise ValueError("per_joint: the baseline models act on independent 1-D joints only "
                         "(a vector input is n joints); n-D isotropic contacts are not "
                         "supported — use the implicit elements of fric_core.elements")


class _Baseline(_Element):
    """Shape handling and input checks of :class:`~fric_core.elements._Element`, without Φ_Z."""

    law: FrictionLaw | None = None

    def _setup_law(self, law: FrictionLaw, dt: float, per_joint, initial: dict | None = None,
                   **params) -> None:
        """For the models driven by a fric_core law (validates ``law``, ``dt``, sizes)."""
        _check_per_joint(per_joint)
        self._setup(law, dt, True, initial, **params)

    def _setup_plain(self, dt: float, per_joint, **params) -> None:
        """For the bristle models, which carry their own parameters instead of a law."""
        _check_per_joint(per_joint)
        self._setup_shape(dt, True, **params)

    def _on_shape(self, n: int | None) -> None:
        """No Φ_Z to pick: the bristle models need nothing shape-specific."""

    def _zeros(self):
        return 0.0 if self._n is None else np.zeros(self._n)


class _LawBaseline(_Baseline):
    """Baselines using a law's Φ (``_phi_scalar``/``_phi_each``) and static bounds Φ(±0)."""

    def _on_shape(self, n: int | None) -> None:
        law = self.law
        if n is None and not law.scalar_ok:  # pragma: no cover - rejected by _setup already
            raise ValueError(f"{self._input_name}: {type(law).__name__} needs a vector")
        self._phi = law._phi_scalar if n is None else law._phi_each
        lo, hi = law.static_bounds()
        if n is None:
            self._lo, self._hi = float(lo), float(hi)
        else:
            self._lo, self._hi = lo, hi
        self._shape_constants(n)

    def _shape_constants(self, n: int | None) -> None:
        """Hook: constants that depend on the (now known) shape."""

    def _viscous_slopes(self, n: int | None):
        """(Φ(+ε)/ε, Φ(−ε)/(−ε)): slopes of the linear band of eq. (5), continuous at ±ε."""
        if n is None:
            eps = self.eps
            return self.law._phi_scalar(eps) / eps, self.law._phi_scalar(-eps) / -eps
        eps = np.broadcast_to(np.asarray(self.eps, dtype=float), (n,))
        return self.law._phi_each(eps) / eps, self.law._phi_each(-eps) / -eps


# =============================================================================================
# Admittance type: a mass with friction, explicit (forward) Euler, step(h) -> v
# =============================================================================================

class _MassBaseline(_LawBaseline):
    """The admittance baselines' common part: a mass ``M`` > 0 with a law, a velocity threshold
    ``eps`` > 0 and the initial velocity ``v0`` (per-joint arrays allowed); ``step(h) -> v``."""

    _input_name = "h"

    def __init__(self, M: ArrayLike, law: FrictionLaw, dt: float, eps: ArrayLike,
                 v0: ArrayLike = 0.0, *, per_joint: bool = True):
        self.M = param("M", M, minimum=0.0, strict=True)
        self.eps = param("eps", eps, minimum=0.0, strict=True)
        self._v0 = param("v0", v0)
        self._setup_law(law, dt, per_joint, {"v0": self._v0}, M=self.M, eps=self.eps)
        self._check_law(law)
        self._TM = self.dt / self.M
        self.reset()

    def _check_law(self, law: FrictionLaw) -> None:
        """Hook: what a model demands of the law beyond the shared checks."""

    def _init_state(self):
        self._v = self._as_state(self._v0, self._n)
        self._f = self._zeros()


class KarnoppState(NamedTuple):
    v: ArrayLike  #: velocity after the step
    f: ArrayLike  #: friction force used in the step
    band: ArrayLike  #: |v_{k−1}| ≤ ε: the "static" branch of (3) (v is NOT necessarily 0)


class KarnoppAdmittance(_MassBaseline):
    """Karnopp's threshold model, paper 000 eq. (3), on a mass M with forward Euler.

    ``step(h) -> v``, from the previous velocity v_{k−1} and the net applied force h_k::

        f_k = Φ(v_{k−1})                    if |v_{k−1}| > ε
        f_k = clip(h_k, Φ(−0), Φ(+0))       if |v_{k−1}| ≤ ε        (eq. 3, cases 2–4)
        v_k = v_{k−1} + T (h_k − f_k)/M

    Inside the band the friction balances the applied force, ``f = h`` (the form of eq. 3), so
    the acceleration is zero but the velocity the mass entered the band with is kept: a residual
    velocity |v| ≤ ε persists and the position drifts linearly for ever. (The variant
    ``f = h + M v_{k−1}/T`` would zero it in one step; it is not eq. 3 and not what is built here.)
    If ε is smaller than the velocity change of one step, T·|h − Φ(±0)|/M, the mass jumps over
    the band and the force chatters between Φ(+0) and Φ(−0). Which of the two happens depends on
    ε, a threshold with no physical meaning (paper 000, Sec. II-A); model A
    (:class:`~fric_core.elements.RigidAdmittance`) has neither.

    ``law`` is any 1-D fric_core law (Φ for |v| > ε, static bounds Φ(±0) inside the band); ``eps``
    > 0 the velocity threshold (per-joint arrays allowed, like ``M``, ``v0`` and the law's).
    """

    def _init_state(self):
        super()._init_state()
        self._band = False if self._n is None else np.zeros(self._n, dtype=bool)

    def _advance_scalar(self, h: float) -> float:
        v = self._v
        eps = self.eps
        if v > eps or v < -eps:
            f = self._phi(v)
            band = False
        else:
            hi, lo = self._hi, self._lo
            f = hi if h > hi else (lo if h < lo else h)
            band = True
        v = v + self._TM * (h - f)
        self._v, self._f, self._band, self._stepped = v, f, band, True
        return v

    def _advance_vector(self, h):
        v = self._v
        band = np.abs(v) <= self.eps
        f = np.where(band, np.clip(h, self._lo, self._hi), self._phi(v))
        v = v + self._TM * (h - f)
        self._v, self._f, self._band, self._stepped = v, f, band, True
        return v.copy()

    @property
    def state(self) -> KarnoppState:
        return KarnoppState(v=self._v, f=self._f, band=self._band)


class QuinnState(NamedTuple):
    v: ArrayLike  #: velocity after the step
    f: ArrayLike  #: friction force used in the step
    q: ArrayLike  #: Quinn's auxiliary variable (4b)


class QuinnAdmittance(_MassBaseline):
    """Quinn's regularisation, paper 000 eq. (4), on a mass M with forward Euler.

    ``step(h) -> v`` with F the Coulomb level::

        q_k = v_{k−1} + ε sgn(h_k)     if |h_k| > F,   else  v_{k−1} + ε h_k/F     (4b)
        f_k = F sgn(q_k)               if |q_k| > ε,   else  F q_k/ε               (4a)
        v_k = v_{k−1} + T (h_k − f_k)/M

    Quinn's model has no rate-dependent law: only the law's static bounds are used,
    F = Φ(+0) for positive h (and q) and F = −Φ(−0) for negative ones (the two coincide for a
    symmetric law, giving exactly eq. 4); Φ(v) itself is ignored. Both bounds must be nonzero.

    At rest and under a sub-breakaway force, q = εh/F and f = h (up to rounding): the mass stays
    put. After sliding, inside the band f = h + F v/ε, a viscous damper of slope F/ε, so the
    velocity decays geometrically, v_k = (1 − T F/(ε M)) v_{k−1}, and never reaches exactly 0;
    it overshoots (oscillates) for T F/(ε M) > 1 and diverges for > 2. Behaviour therefore again
    depends on ε (paper 000, Sec. II-A).
    """

    def _check_law(self, law: FrictionLaw) -> None:
        lo, hi = law.static_bounds()
        if np.any(np.asarray(hi) <= 0.0) or np.any(np.asarray(lo) >= 0.0):
            raise ValueError(f"law: Quinn's model (4) divides by the Coulomb level; the static "
                             f"bounds Φ(±0) = ({lo!r}, {hi!r}) must be nonzero")

    def _shape_constants(self, n):
        if n is None:
            self._Fp, self._Fn = float(self._hi), -float(self._lo)
        else:
            self._Fp, self._Fn = self._hi, -np.asarray(self._lo)

    def _init_state(self):
        super()._init_state()
        self._q = self._zeros()

    def _advance_scalar(self, h: float) -> float:
        eps, Fp, Fn = self.eps, self._Fp, self._Fn
        if h >= 0.0:
            r = h / Fp
            r = 1.0 if r > 1.0 else r
        else:
            r = h / Fn
            r = -1.0 if r < -1.0 else r
        q = self._v + eps * r  # (4b)
        if q > eps:  # (4a)
            f = Fp
        elif q < -eps:
            f = -Fn
        else:
            f = (Fp if q >= 0.0 else Fn) * q / eps
        v = self._v + self._TM * (h - f)
        self._v, self._f, self._q, self._stepped = v, f, q, True
        return v

    def _advance_vector(self, h):
        eps, Fp, Fn = self.eps, self._Fp, self._Fn
        r = np.clip(h / np.where(h >= 0.0, Fp, Fn), -1.0, 1.0)
        q = self._v + eps * r
        f = np.where(q > eps, Fp,
                     np.where(q < -eps, -Fn, np.where(q >= 0.0, Fp, Fn) * q / eps))
        v = self._v + self._TM * (h - f)
        self._v, self._f, self._q, self._stepped = v, f, q, True
        return v.copy()

    @property
    def state(self) -> QuinnState:
        return QuinnState(v=self._v, f=self._f, q=self._q)


class ViscousRegularisedAdmittanceState(NamedTuple):
    v: ArrayLike  #: velocity after the step
    f: ArrayLike  #: friction force used in the step


class ViscousRegularisedAdmittance(_MassBaseline):
    """The viscosity approximation, paper 000 eq. (5), on a mass M with forward Euler.

    ``step(h) -> v``: f_k = Φ(v_{k−1}) if |v_{k−1}| > ε, else the line through 0 and Φ(±ε),
    f_k = |v_{k−1}|/ε · Φ(ε sgn v_{k−1}) (for Coulomb friction exactly F v/ε, eq. 5);
    v_k = v_{k−1} + T (h_k − f_k)/M.

    The force does not balance h at v = 0 (Fig. 1(d)): under a constant sub-breakaway force the
    mass creeps for ever at v = ε h/Φ(+ε) — drift proportional to the threshold. The explicit
    update of the steep band is stable only for T Φ(ε)/(ε M) < 2 and oscillates (chatters) above
    1, so a small ε trades drift for chattering.
    """

    def _shape_constants(self, n):
        self._kp, self._kn = self._viscous_slopes(n)

    def _advance_scalar(self, h: float) -> float:
        v = self._v
        eps = self.eps
        if v > eps or v < -eps:
            f = self._phi(v)
        else:
            f = v * (self._kp if v >= 0.0 else self._kn)
        v = v + self._TM * (h - f)
        self._v, self._f, self._stepped = v, f, True
        return v

    def _advance_vector(self, h):
        v = self._v
        f = np.where(np.abs(v) > self.eps, self._phi(v),
                     v * np.where(v >= 0.0, self._kp, self._kn))
        v = v + self._TM * (h - f)
        self._v, self._f, self._stepped = v, f, True
        return v.copy()

    @property
    def state(self) -> ViscousRegularisedAdmittanceState:
        return ViscousRegularisedAdmittanceState(v=self._v, f=self._f)


# =============================================================================================
# Impedance type: step(u) -> f, f with the sign of the sliding velocity u
# =============================================================================================

class ViscousRegularisedImpedanceState(NamedTuple):
    u: ArrayLike  #: the last input velocity
    f: ArrayLike  #: friction force (the element's output)


class ViscousRegularisedImpedance(_LawBaseline):
    """The viscosity approximation, paper 000 eq. (5), as an impedance (memoryless).

    ``step(u) -> f``: f = Φ(u) if |u| > ε, else |u|/ε · Φ(ε sgn u) (F u/ε for Coulomb friction).
    Static friction is a steep damper: any force below Φ(±0) makes the body creep at a velocity
    proportional to ε. ``dt`` is not used by the law; it is kept so that every element carries
    its time step (:func:`fric_core.coupling.simulate_mass_on_impedance` checks it).
    """

    _input_name = "u"

    def __init__(self, law: FrictionLaw, dt: float, eps: ArrayLike, *, per_joint: bool = True):
        self.eps = param("eps", eps, minimum=0.0, strict=True)
        self._setup_law(law, dt, per_joint, eps=self.eps)
        self.reset()

    def _shape_constants(self, n):
        self._kp, self._kn = self._viscous_slopes(n)

    def _init_state(self):
        self._u = self._zeros()
        self._f = self._zeros()

    def _advance_scalar(self, u: float) -> float:
        eps = self.eps
        if u > eps or u < -eps:
            f = self._phi(u)
        else:
            f = u * (self._kp if u >= 0.0 else self._kn)
        self._u, self._f, self._stepped = u, f, True
        return f

    def _advance_vector(self, u):
        f = np.where(np.abs(u) > self.eps, self._phi(u),
                     u * np.where(u >= 0.0, self._kp, self._kn))
        self._u, self._f, self._stepped = u, f, True
        return f.copy()

    @property
    def state(self) -> ViscousRegularisedImpedanceState:
        return ViscousRegularisedImpedanceState(u=self._u, f=self._f)


def _phi1(a: float) -> float:
    """(1 − e^{−a})/a, the exponential-integrator weight, accurate for small a > 0."""
    return -math.expm1(-a) / a


class DahlState(NamedTuple):
    z: ArrayLike  #: bristle deflection (m)
    f: ArrayLike  #: friction force σ0 z (the element's output)


class Dahl(_Baseline):
    """Dahl's model (paper 000, Sec. II-B, ref. [12]): dz/dt = v − σ0 |v| z / F,  f = σ0 z.

    ``step(u) -> f``. ``sigma0`` > 0 is the bristle stiffness (N/m), ``F`` > 0 the Coulomb level
    (N); per-joint arrays allowed.

    Discretisation: the velocity is held over the step (zero-order hold), and for constant v the
    ODE is linear in z, so it is integrated exactly::

        z_k = z_ss + (z_{k−1} − z_ss) exp(−a),  z_ss = F sgn(v)/σ0,  a = σ0 |v| T/F
            = z_{k−1} e^{−a} + v T (1 − e^{−a})/a        (the form used: no division by v)

    This is unconditionally stable and exact for the held input, so any drift shown (under an
    oscillating load below F the deflection is never purely elastic: every loading increment
    converts a fraction σ0 |z|/F of the motion into sliding) is the model's, not a numerical
    artefact.
    """

    _input_name = "u"

    def __init__(self, sigma0: ArrayLike, F: ArrayLike, dt: float, *, per_joint: bool = True):
        self.sigma0 = param("sigma0", sigma0, minimum=0.0, strict=True)
        self.F = param("F", F, minimum=0.0, strict=True)
        self._setup_plain(dt, per_joint, sigma0=self.sigma0, F=self.F)
        self._c = self.sigma0 * self.dt / self.F  # a = c |v|
        self.reset()

    def _init_state(self):
        self._z = self._zeros()
        self._f = self._zeros()

    def _advance_scalar(self, u: float) -> float:
        a = self._c * abs(u)
        if a > 0.0:
            em = math.expm1(-a)
            z = self._z * (1.0 + em) + u * self.dt * (-em / a)
        else:
            z = self._z + u * self.dt
        f = self.sigma0 * z
        self._z, self._f, self._stepped = z, f, True
        return f

    def _advance_vector(self, u):
        a = self._c * np.abs(u)
        z = _etd(self._z, u * self.dt, a)
        f = self.sigma0 * z
        self._z, self._f, self._stepped = z, f, True
        return f.copy()

    @property
    def state(self) -> DahlState:
        return DahlState(z=self._z, f=self._f)


def _etd(z, uT, a):
    """Vector exponential update z e^{−a} + uT (1 − e^{−a})/a (= z + uT at a = 0)."""
    em = np.expm1(-a)
    with np.errstate(divide="ignore", invalid="ignore"):
        w = np.where(a > 0.0, -em / a, 1.0)
    return z * (1.0 + em) + uT * w


class LuGreState(NamedTuple):
    z: ArrayLike  #: bristle deflection per unit normal force (the paper's z)
    z_dot: ArrayLike  #: ż at the end of the step, eq. (1)
    g: ArrayLike  #: g(v) of eq. (2) for the step's velocity
    f: ArrayLike  #: friction force (3), the element's output


class LuGre(_Baseline):
    """The amended LuGre model of paper 002, eqs. (1)–(3)::

        ż = v − z σ0 |v| / g(v)                                        (1)
        g(v) = μ_C + (μ_S − μ_C) exp(−|v/v_s|^γ)                          (2)
        f = (σ0 z + σ1 ż + σ2 v) f_N                                    (3)

    The amendment (De Wit & Tsiotras, paper 002 ref. [9]) normalises the model by the normal
    force f_N: g(v) is a dimensionless friction *coefficient* and σ0 [1/m], σ1, σ2 [s/m] are per
    unit normal force, so f scales with f_N; σ1 is a constant (not velocity-dependent) bristle
    damping and the memoryless part is f_v(v) = σ2 v. The Stribeck exponent γ is a parameter
    (the original LuGre fixes γ = 2).

    Constructor: ``LuGre(sigma0, sigma1, sigma2, mu_C, mu_S, v_s, dt, gamma=2.0, f_N=1.0)`` —
    bristle stiffness, bristle damping, viscous coefficient, Coulomb and static coefficients,
    Stribeck velocity (the paper's Table I: σ0 = 1e6, σ1 = 800, σ2 = 0–0.2, μ_C = 1, μ_S = 1–1.2,
    v_s = 1e-3, γ = 2). With the default f_N = 1 N the μ's read as force levels in N and σ0, σ1,
    σ2 as N/m, N·s/m. Every parameter may be a per-joint array. The breakaway force is
    μ_S f_N; below it the model is not static: it drifts under oscillating loads (paper 002,
    Sec. III-C; Fig. 6).

    Discretisation: as :class:`Dahl` — v held over the step, (1) integrated exactly,
    z_k = z_{k−1} e^{−a} + v T (1 − e^{−a})/a with a = σ0 |v| T/g(v): unconditionally stable,
    so the drift is the model's. ż is (1) evaluated at the end of the step,
    ż_k = v − (a/T) z_k (the continuous model's value at t_k for the held input).
    ``step(u) -> f`` with u the sliding velocity.
    """

    _input_name = "u"

    def __init__(self, sigma0: ArrayLike, sigma1: ArrayLike, sigma2: ArrayLike,
                 mu_C: ArrayLike, mu_S: ArrayLike, v_s: ArrayLike, dt: float, *,
                 gamma: ArrayLike = 2.0, f_N: ArrayLike = 1.0, per_joint: bool = True):
        self.sigma0 = param("sigma0", sigma0, minimum=0.0, strict=True)
        self.sigma1 = param("sigma1", sigma1, minimum=0.0)
        self.sigma2 = param("sigma2", sigma2, minimum=0.0)
        self.mu_C = param("mu_C", mu_C, minimum=0.0, strict=True)
        self.mu_S = param("mu_S", mu_S, minimum=0.0, strict=True)
        self.v_s = param("v_s", v_s, minimum=0.0, strict=True)
        self.gamma = param("gamma", gamma, minimum=0.0, strict=True)
        self.f_N = param("f_N", f_N, minimum=0.0)
        self._setup_plain(dt, per_joint, sigma0=self.sigma0, sigma1=self.sigma1,
                          sigma2=self.sigma2, mu_C=self.mu_C, mu_S=self.mu_S, v_s=self.v_s,
                          gamma=self.gamma, f_N=self.f_N, **self._extra_params())
        self._constants()
        self.reset()

    def _extra_params(self) -> dict:
        """Hook: further per-joint parameters a subclass has already validated."""
        return {}

    def _constants(self):
        T = self.dt
        self._s0T = self.sigma0 * T
        self._dmu = self.mu_S - self.mu_C
        self._k0 = self.sigma0 * self.f_N
        self._k1 = self.sigma1 * self.f_N
        self._k2 = self.sigma2 * self.f_N

    def _init_state(self):
        z = self._zeros()
        self._z, self._zd, self._f = z, z, z
        self._g = self.mu_S if self._n is None else np.broadcast_to(self.mu_S, (self._n,))

    def g(self, v: ArrayLike) -> ArrayLike:
        """Eq. (2): the steady-state friction coefficient at sliding velocity v."""
        v = np.asarray(v, dtype=float)
        out = self.mu_C + self._dmu * np.exp(-(np.abs(v) / self.v_s) ** self.gamma)
        return float(out) if out.ndim == 0 else out

    def _advance_scalar(self, u: float) -> float:
        g = self.mu_C + self._dmu * _stribeck_decay(abs(u) / self.v_s, self.gamma)
        a = self._s0T * abs(u) / g
        T = self.dt
        if a > 0.0:
            em = math.expm1(-a)
            z = self._z * (1.0 + em) + u * T * (-em / a)
            zd = u - (a / T) * z
        else:
            z = self._z + u * T
            zd = u
        f = self._k0 * z + self._k1 * zd + self._k2 * u
        self._z, self._zd, self._g, self._f, self._stepped = z, zd, g, f, True
        return f

    def _advance_vector(self, u):
        g = self.mu_C + self._dmu * np.exp(-(np.abs(u) / self.v_s) ** self.gamma)
        a = self._s0T * np.abs(u) / g
        T = self.dt
        z = _etd(self._z, u * T, a)
        zd = u - (a / T) * z
        f = self._k0 * z + self._k1 * zd + self._k2 * u
        self._z, self._zd, self._g, self._f, self._stepped = z, zd, g, f, True
        return f.copy()

    @property
    def state(self) -> LuGreState:
        return LuGreState(z=self._z, z_dot=self._zd, g=self._g, f=self._f)


class ElastoPlasticState(NamedTuple):
    z: ArrayLike  #: bristle deflection per unit normal force
    z_dot: ArrayLike  #: ż at the end of the step, eq. (4)
    alpha: ArrayLike  #: α(z, v) of eq. (5) at the end of the step (0: purely elastic)
    z_ba: ArrayLike  #: breakaway deflection s_ba g(v)/σ0 for the step's velocity
    f: ArrayLike  #: friction force (3), the element's output


class ElastoPlastic(LuGre):
    """Dupont et al.'s elasto-plastic model in the form of paper 002, eqs. (4)–(6)::

        ż = v − α(z, v) z σ0 |v| / g(v)                                  (4)
        α(z, v) = 0                     if sgn(v) ≠ sgn(z)
                = 0                     if |z| ≤ z_ba           ⎫
                = α_m(|z|)              if z_ba < |z| < z_max   ⎬ if sgn(v) = sgn(z)      (5)
                = 1                     if |z| ≥ z_max          ⎭
        α_m(z) = ½ sin(π (z − (z_max + z_ba)/2)/(z_max − z_ba)) + ½                         (6)

    with g(v) of (2), f of (3), z_max = g(v)/σ0 the steady-state deflection and, as in paper 002
    (Sec. IV-B, Table I), z_ba = s_ba z_max with 0 ≤ s_ba < 1 (default 0.9). α_m is applied to
    |z| (the paper writes z; for negative z the symmetric reading is the only consistent one).
    Constructor as :class:`LuGre` plus ``s_ba``.

    Below the breakaway deflection the bristle is a pure spring, ż = v, so the force is a
    function of the displacement and a sub-breakaway oscillating load causes no drift.

    Discretisation: v held over the step; for constant v, (4) is the autonomous ODE
    dz/ds = 1 − α(z) z/z_ss in the distance s travelled. It is integrated with the exponential
    (Lawson/ETD) update of :class:`LuGre` with α frozen over the step, z_k = z e^{−αa} +
    vT (1 − e^{−αa})/(αa), where α is taken at the midpoint of a predictor step (predictor: α at
    z_{k−1}). Justification: (i) it is unconditionally stable and monotone for any α ∈ [0, 1]
    (no step-size limit from the stiff σ0 |v|/g); (ii) it is exact where it matters for drift —
    while z stays in the elastic zone, α = 0 in both stages and z_k = z_{k−1} + vT exactly, and
    at α = 1 it is the exact LuGre update; (iii) in the thin transition zone it is second-order
    accurate, and because the exact solution started below z_max never crosses z_max, the
    result is clamped to z_max there (the frozen-α update could overshoot towards z_max/α).
    """

    def __init__(self, sigma0: ArrayLike, sigma1: ArrayLike, sigma2: ArrayLike,
                 mu_C: ArrayLike, mu_S: ArrayLike, v_s: ArrayLike, dt: float, *,
                 gamma: ArrayLike = 2.0, s_ba: ArrayLike = 0.9, f_N: ArrayLike = 1.0,
                 per_joint: bool = True):
        s = param("s_ba", s_ba, minimum=0.0)
        if np.any(np.asarray(s) >= 1.0):
            raise ValueError(f"s_ba: must be < 1 (z_ba = s_ba z_max below the steady-state "
                             f"deflection), got {s_ba!r}")
        self.s_ba = s
        super().__init__(sigma0, sigma1, sigma2, mu_C, mu_S, v_s, dt, gamma=gamma, f_N=f_N,
                         per_joint=per_joint)

    def _extra_params(self) -> dict:
        return {"s_ba": self.s_ba}

    def _init_state(self):
        super()._init_state()
        self._alpha = self._zeros()
        zmax = self.mu_S / self.sigma0
        zba = self.s_ba * zmax
        self._zba = zba if self._n is None else np.broadcast_to(zba, (self._n,))

    # α(z, v), eq. (5)–(6)
    @staticmethod
    def _alpha_s(z: float, u: float, zba: float, zmax: float) -> float:
        if z * u <= 0.0:  # sgn(v) ≠ sgn(z) (also z = 0 or v = 0)
            return 0.0
        w = abs(z)
        if w <= zba:
            return 0.0
        if w >= zmax:
            return 1.0
        return 0.5 * math.sin(math.pi * (w - 0.5 * (zmax + zba)) / (zmax - zba)) + 0.5

    @staticmethod
    def _alpha_v(z, u, zba, zmax):
        w = np.abs(z)
        with np.errstate(divide="ignore", invalid="ignore"):
            mid = 0.5 * np.sin(np.pi * (w - 0.5 * (zmax + zba)) / (zmax - zba)) + 0.5
        a = np.where(w <= zba, 0.0, np.where(w >= zmax, 1.0, mid))
        return np.where(z * u > 0.0, a, 0.0)

    def _advance_scalar(self, u: float) -> float:
        g = self.mu_C + self._dmu * _stribeck_decay(abs(u) / self.v_s, self.gamma)
        zmax = g / self.sigma0
        zba = self.s_ba * zmax
        T = self.dt
        a1 = self._s0T * abs(u) / g  # σ0|v|T/g: the LuGre exponent (α = 1)
        z0 = self._z
        alpha = self._alpha_s
        uT = u * T
        # predictor with α at the start, corrector with α at the midpoint
        a = alpha(z0, u, zba, zmax) * a1
        if a > 0.0:
            em = math.expm1(-a)
            zp = z0 * (1.0 + em) + uT * (-em / a)
        else:
            zp = z0 + uT
        a = alpha(0.5 * (z0 + zp), u, zba, zmax) * a1
        if a > 0.0:
            em = math.expm1(-a)
            z = z0 * (1.0 + em) + uT * (-em / a)
        else:
            z = z0 + uT
        if u > 0.0:
            if z > zmax and z0 <= zmax:
                z = zmax
        elif z < -zmax and z0 >= -zmax:
            z = -zmax
        al = alpha(z, u, zba, zmax)
        zd = u - (al * a1 / T) * z
        f = self._k0 * z + self._k1 * zd + self._k2 * u
        self._z, self._zd, self._g, self._alpha, self._zba, self._f, self._stepped = (
            z, zd, g, al, zba, f, True)
        return f

    def _advance_vector(self, u):
        g = self.mu_C + self._dmu * np.exp(-(np.abs(u) / self.v_s) ** self.gamma)
        zmax = g / self.sigma0
        zba = self.s_ba * zmax
        T = self.dt
        a1 = self._s0T * np.abs(u) / g
        z0 = self._z
        uT = u * T
        zp = _etd(z0, uT, self._alpha_v(z0, u, zba, zmax) * a1)
        z = _etd(z0, uT, self._alpha_v(0.5 * (z0 + zp), u, zba, zmax) * a1)
        z = np.where((u > 0.0) & (z > zmax) & (z0 <= zmax), zmax, z)
        z = np.where((u < 0.0) & (z < -zmax) & (z0 >= -zmax), -zmax, z)
        al = self._alpha_v(z, u, zba, zmax)
        zd = u - (al * a1 / T) * z
        f = self._k0 * z + self._k1 * zd + self._k2 * u
        self._z, self._zd, self._g, self._alpha, self._zba, self._f, self._stepped = (
            z, zd, g, al, zba, f, True)
        return f.copy()

    @property
    def state(self) -> ElastoPlasticState:
        return ElastoPlasticState(z=self._z, z_dot=self._zd, alpha=self._alpha, z_ba=self._zba,
                                  f=self._f)
