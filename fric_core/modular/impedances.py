"""Impedance components: the spring-damper (10), the friction element ``I_fricK`` (19), friction
with a penalty normal force ``I_fricKN`` (23)/(24), and a time-dependent external force.

Every output is the force ON the motion the component reads (see
:mod:`fric_core.modular.components`); the paper's friction force f (direction of the sliding
velocity) is therefore returned as ``−f``.

The friction components take any :mod:`fric_core.laws` law (the paper's footnote 1: viscous and
Stribeck effects as in Sec. III-F of Kikuuwe et al. 2006). Writing (19) with a law Φ::

    f = Φ(v − ė),  f = K e + B ė,  ė ≈ (e_new − e)/τ   ⇒   f = Φ_Z(v + Z K e),  Z = 1/(B + τK)
    ė = (f − K e) Z

which for Coulomb's law Φ = F sgn is (19b)–(19c) exactly: Φ_Z(x) = gsat(F, x/Z).
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from .._checks import param
from ..laws import Coulomb, FrictionLaw
from .components import Impedance

__all__ = ["SpringDamper", "FrictionImpedance", "PenaltyFrictionContact", "ExternalForce"]


def _size(n, name="n") -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"{name}: expected a positive integer, got {n!r}")
    return int(n)


def _law(law, F, n: int, who: str) -> FrictionLaw:
    """The law from ``law`` or from a Coulomb level ``F`` (exactly one of them)."""
    if (law is None) == (F is None):
        raise ValueError(f"{who}: give exactly one of law= (a fric_core.laws law) or F= "
                         f"(the Coulomb level)")
    if law is None:
        law = Coulomb(param("F", F, minimum=0.0, strict=True, allow_array=False))
    if not isinstance(law, FrictionLaw):
        raise ValueError(f"law: expected a fric_core.laws.FrictionLaw, got {type(law).__name__}")
    if n == 1 and not law.scalar_ok:
        raise ValueError(f"law: {type(law).__name__} needs a vector input (n > 1)")
    if law.size is not None and law.size != n:
        raise ValueError(f"law: has {law.size} per-joint parameter sets but the component "
                         f"has n = {n}")
    lo, hi = law.static_bounds()
    if np.any(np.asarray(hi) <= 0.0) or np.any(np.asarray(lo) >= 0.0):
        raise ValueError(f"law: static bounds {lo}, {hi} must enclose 0 strictly (F > 0)")
    return law


class SpringDamper(Impedance):
    """Spring-damper (10): input ``[p, v]`` (n each), output ``w = −(K (p − rest) + B v)``.

    ``K``, ``B`` ≥ 0 (scalars or per-coordinate arrays of length n); no state.

    Parameters
    ----------
    K : float or array_like
        The stiffness [N/m, or N m/rad], >= 0: a scalar or (n,).
    B : float or array_like
        The damping [N s/m, or N m s/rad], >= 0: a scalar or (n,).
    n : int
        The number of coordinates, >= 1.
    rest : float or array_like
        The rest position [m, or rad]: a scalar or (n,).
    """

    motion = "coordinates"
    n_state = 0

    def __init__(self, K, B, n: int = 1, rest=0.0):
        n = _size(n)
        self.K = param("K", K, minimum=0.0)
        self.B = param("B", B, minimum=0.0)
        self.rest = param("rest", rest)
        for name, v in (("K", self.K), ("B", self.B), ("rest", self.rest)):
            if isinstance(v, np.ndarray) and v.size != n:
                raise ValueError(f"{name}: has {v.size} entries, expected n = {n}")
        self.n_in, self.n_out = 2 * n, n
        self._n = n

    def evaluate(self, xin, y, t, tau, w, ydot):
        n = self._n
        if n == 1:
            w[0] = -(self.K * (xin.item(0) - self.rest) + self.B * xin.item(1))
            return
        np.subtract(xin[:n], self.rest, out=w)
        w *= self.K
        w += self.B * xin[n:]
        np.negative(w, out=w)

    def energy(self, xin, y) -> float:
        d = xin[:self._n] - self.rest
        return 0.5 * float(np.sum(self.K * d * d))


class FrictionImpedance(Impedance):
    """The RK4-ready friction element ``I_fricK(v, e; τ)`` of (19), with any friction law.

    Input ``[p, v]`` (the position is not used: friction reads the relative velocity v), state
    e (the elastic displacement of the viscoelastic element of Fig. 1), output ``w = −f``::

        Z = 1/(B + τK);  f = Φ_Z(v + Z K e)   [Coulomb: gsat(F, (B + τK) v + K e)]  (19b)
        ė = (f − K e) Z                                                          (19c)

    Laws without a closed-form Φ_Z (Stribeck) need condition (48), |Φ'| / B ≤ 0.1, checked here.

    ``timestep_argument``: ``"stage"`` (default) is the paper's (22): τ = T_r of the RK4 stage.
    The τK term is numerical damping that keeps the element stable for any B ≥ 0 (as implicit
    Euler does), at a price: e, and the force of a rate-dependent law, depend on τ, so they
    converge only like T (Coulomb's law while sliding is exact: f = F). ``"none"`` uses τ = 0,
    the continuous element (17) as an ODE (Z = 1/B): 4th-order under RK4 for every law and still
    exactly drift-free (ė = v in the static branch), but it needs B > 0 and a step that resolves
    the element's own rate K/B (T K/B < 2.7, RK4's real-axis limit).

    ``n`` > 1 gives the n-D contact of the same law (isotropic: gsat on the vector), or n
    independent joints when the law has per-joint parameters. ``K`` > 0, ``B`` ≥ 0.
    As long as the static branch holds, ė = v exactly, so ``p − e`` (the massless object of
    Fig. 1) does not move: no drift.

    Parameters
    ----------
    K : float
        The stiffness of the viscoelastic element [N/m, or N m/rad for a joint], > 0.
    B : float
        Its viscosity [N s/m, or N m s/rad], >= 0 (> 0 for ``timestep_argument="none"``).
    F : float or None
        The Coulomb level [N, or N m], > 0; give exactly one of ``F`` and ``law``.
    law : FrictionLaw or None
        A :mod:`fric_core.laws` law instead of Coulomb(F).
    n : int
        The number of coordinates, >= 1.
    timestep_argument : str
        ``"stage"`` (τ = T_r, (22)) or ``"none"`` (τ = 0, the element (17)).
    """

    motion = "coordinates"

    def __init__(self, K: float, B: float, F: float | None = None, *,
                 law: FrictionLaw | None = None, n: int = 1, timestep_argument: str = "stage"):
        n = _size(n)
        self.K = param("K", K, minimum=0.0, strict=True, allow_array=False)
        self.B = param("B", B, minimum=0.0, allow_array=False)
        if timestep_argument not in ("stage", "none"):
            raise ValueError(f"timestep_argument: expected 'stage' (paper (22)) or 'none' "
                             f"(τ = 0), got {timestep_argument!r}")
        if timestep_argument == "none" and self.B == 0.0:
            raise ValueError("B: timestep_argument='none' needs B > 0 (the element (17) is an "
                             "ODE only with viscosity)")
        self.timestep_argument = timestep_argument
        self._tau_factor = 1.0 if timestep_argument == "stage" else 0.0
        self.law = _law(law, F, n, type(self).__name__)
        if not self.law.exact and (self.B == 0.0 or not self.law.approximation_valid(1.0 / self.B)):
            # Φ_Z of a law without a closed form is the approximation (46)/(57), valid under
            # (48): |Φ'| Z ≪ 1 for every Z = 1/(B + τK) ≤ 1/B.
            raise ValueError(f"B: {type(self.law).__name__}'s Φ_Z is approximate and needs "
                             f"|Φ'| / B <= 0.1 (condition (48) of paper 000); B = {self.B} is "
                             f"too small for slopes up to {self.law.slope_bounds()[1]}")
        self.n_in, self.n_out, self.n_state = 2 * n, n, n
        self._n = n
        if n == 1:
            self._coulomb_F = self.law.F if type(self.law) is Coulomb else None
            self._hook = self.law._phi_z_scalar
        else:
            self._coulomb_F = None
            self._hook = self.law._phi_z_each if self.law.per_joint else self.law._phi_z_iso
        self._buf = np.zeros(n)

    def evaluate(self, xin, y, t, tau, w, ydot):
        K = self.K
        Zi = self.B + self._tau_factor * tau * K
        if self._n == 1:
            e = y.item(0)
            v = xin.item(1)
            F = self._coulomb_F
            if F is not None:  # (19b) literally: gsat(F, (B + τK) v + K e)
                s = Zi * v + K * e
                f = F if s > F else (-F if s < -F else s)
            else:
                f = self._hook(v + K * e / Zi, 1.0 / Zi)
            w[0] = -f
            ydot[0] = (f - K * e) / Zi
            return
        n = self._n
        b = self._buf
        np.multiply(y, K / Zi, out=b)
        b += xin[n:]
        f = self._hook(b, 1.0 / Zi)
        np.negative(f, out=w)
        np.multiply(y, K, out=b)
        np.subtract(f, b, out=ydot)
        ydot /= Zi

    def energy(self, xin, y) -> float:
        return 0.5 * self.K * float(y @ y)


class PenaltyFrictionContact(Impedance):
    """Friction on a flat surface with a penalty normal force, ``I_fricKN`` (23)/(24).

    The surface is the plane z = ``height`` with normal +z. Input: a contact point
    ``[p(3), v(3)]`` (e.g. :class:`~fric_core.modular.wiring.BodyPoint`); state e ∈ R² (the
    tangential viscoelastic element); output: the force ON the point::

        f_z = max(0, −K p̃_z − B v_z) if p̃_z < 0 else 0,   p̃_z = p_z − height         (23a)
        f̂_t = (B_t + τ K_t) v_t + K_t e ;  f_t = gsat(μ f_z, f̂_t)                       (23b, c)
        ė = (f_t − K_t e)/(B_t + τ K_t)                                                 (23d, 24)
        w = [−f_t, f_z]

    Two deliberate details: the normal force is clipped at 0 (a penalty contact cannot pull;
    gsat needs a non-negative level), and the tangential stiffness/viscosity ``K_t``, ``B_t``
    default to the normal ones (the paper uses one K, B). With ``law`` (a 2-D isotropic
    :mod:`fric_core.laws` law whose force levels are friction *coefficients*) the tangential force
    is ``f_z Φ_{Z f_z}(v_t + Z K_t e)``, Z = 1/(B_t + τK_t), which is (23c) for Coulomb(μ).

    Parameters
    ----------
    K : float
        The normal penalty stiffness [N/m], > 0.
    B : float
        The normal penalty damping [N s/m], >= 0.
    mu : float or None
        The Coulomb friction coefficient μ [-], > 0; give exactly one of ``mu`` and ``law``.
    law : FrictionLaw or None
        A 2-D isotropic :mod:`fric_core.laws` law whose force levels are coefficients [-].
    K_t : float or None
        The tangential stiffness [N/m], > 0; None: ``K``.
    B_t : float or None
        The tangential viscosity [N s/m], >= 0; None: ``B``.
    height : float
        The height of the surface plane z = ``height`` [m].
    """

    motion = "coordinates"
    n_in, n_out, n_state = 6, 3, 2

    def __init__(self, K: float, B: float, mu: float | None = None, *,
                 law: FrictionLaw | None = None, K_t: float | None = None,
                 B_t: float | None = None, height: float = 0.0):
        self.K = param("K", K, minimum=0.0, strict=True, allow_array=False)
        self.B = param("B", B, minimum=0.0, allow_array=False)
        self.K_t = self.K if K_t is None else param("K_t", K_t, minimum=0.0, strict=True,
                                                    allow_array=False)
        self.B_t = self.B if B_t is None else param("B_t", B_t, minimum=0.0, allow_array=False)
        self.height = param("height", height, allow_array=False)
        if (law is None) == (mu is None):
            raise ValueError("PenaltyFrictionContact: give exactly one of mu= or law=")
        if law is None:
            self.mu = param("mu", mu, minimum=0.0, strict=True, allow_array=False)
            self.law = Coulomb(self.mu)
        else:
            if not isinstance(law, FrictionLaw) or law.per_joint:
                raise ValueError("law: expected an isotropic fric_core.laws law (scalar "
                                 "parameters)")
            self.law = _law(law, None, 2, "PenaltyFrictionContact")
            self.mu = None
        self._buf = np.zeros(2)

    def evaluate(self, xin, y, t, tau, w, ydot):
        _, _, pz, vx, vy, vz = xin.tolist()
        pz -= self.height
        fz = 0.0
        if pz < 0.0:
            fz = -self.K * pz - self.B * vz
            if fz < 0.0:
                fz = 0.0
        Kt = self.K_t
        Zi = self.B_t + tau * Kt
        e0, e1 = y.tolist()
        sx = Zi * vx + Kt * e0
        sy = Zi * vy + Kt * e1
        if self.mu is not None:            # (23c): gsat(μ f_z, f̂_t)
            X = self.mu * fz
            r = math.sqrt(sx * sx + sy * sy)
            if r > X:
                c = X / r if r > 0.0 else 0.0
                sx *= c
                sy *= c
            fx, fy = sx, sy
        elif fz > 0.0:
            b = self._buf
            b[0], b[1] = sx / Zi, sy / Zi
            f = self.law._phi_z_iso(b, 1.0 / (Zi * fz))
            fx, fy = fz * f[0], fz * f[1]
        else:
            fx = fy = 0.0
        w[:] = (-fx, -fy, fz)
        ydot[:] = ((fx - Kt * e0) / Zi, (fy - Kt * e1) / Zi)

    def energy(self, xin, y) -> float:
        pz = xin[2] - self.height
        en = 0.5 * self.K * pz * pz if pz < 0.0 else 0.0
        return en + 0.5 * self.K_t * float(y @ y)


class ExternalForce(Impedance):
    """A prescribed force ``w = force(t)`` (actuator torques, loads); reads no motion.

    ``force(t)`` returns a float (n = 1) or an array of shape (n,). It is called once per RK4
    stage at that stage's time kT + T_{r−1}.

    Parameters
    ----------
    force : callable
        ``force(t)`` [N, or N m] at time t [s]: a float (n = 1) or an (n,) array, finite.
    n : int
        The number of force components, >= 1.
    """

    n_in = None
    n_state = 0

    def __init__(self, force: Callable[[float], object], n: int = 1):
        if not callable(force):
            raise ValueError(f"force: expected a callable force(t), got {force!r}")
        self.force = force
        self.n_out = _size(n)
        try:
            probe = np.asarray(force(0.0), dtype=float)
        except Exception as exc:  # noqa: BLE001 - report what the user's function did
            raise ValueError(f"force: calling force(0.0) failed: {exc}") from None
        if probe.size != self.n_out or not np.all(np.isfinite(probe)):
            raise ValueError(f"force: force(0.0) must give {self.n_out} finite value(s), got "
                             f"{probe!r}")

    def evaluate(self, xin, y, t, tau, w, ydot):
        w[:] = self.force(t)
