"""Gear transmissions with asymmetric load-dependent friction (paper 004: Kikuuwe 2022), 1 DOF.

The transmission is the DAI (14) in the output coordinate v (input velocity u = κ v)::

    (m + M) v̇ ∈ f_u − f_v − |λ| sgn(v)          (14a)  visible dynamics
    (γ_u m − γ_v M) v̇ = γ_u f_u + γ_v f_v − λ    (14b)  hidden dynamics, λ the internal force

``f_u``: actuator force on the input (referred to the output), ``f_v``: force the output applies
to its load, ``m``/``M``: input/output inertias, γ_u/γ_v: the asymmetry coefficients. Friction is
proportional to the internal force, so it grows with the load, and it differs between driving
from the input and from the output:

* statics (23): the transmission can stay at rest iff ``|f_u − f_v| ≤ |γ_u f_u + γ_v f_v|``;
  forward and backward efficiencies (26): ``η_f = (1 − γ_u)/(1 + γ_v)``,
  ``η_b = (1 − γ_v)/(1 + γ_u)``, and (27) is the inverse map;
* back-drivable iff |γ_v| < 1, forward-drivable iff |γ_u| < 1 (Sec. 4.1); a self-locking
  (non-back-drivable) gear holds any output load with zero input force;
* with ``ρ̂ = (γ_u m − γ_v M)/(m + M)`` (29) the dynamics are well posed iff |ρ̂| < 1.

:class:`Transmission` integrates (14) with the implicit-Euler algorithm (44)::

    ϕ_k = γ_u f_u + γ_v f_v − ρ̂ (f_u − f_v)                         (44a), (32)
    v*_k = v_{k−1} + h (f_u − f_v)/(m + M)                          (44b)
    v_k = v*_k − proj(h Φ(B, ϕ_k, ρ̂)/(m + M), v*_k)                 (44c)

with ``Φ(s, ϕ, ρ) = s |λ(ϕ, ρ s)|`` (34) and λ of (31). The output velocity is exactly 0 while
``(m + M) v*_k / h`` lies in ``[Φ(−1), Φ(1)]`` (45): static friction without drift or chatter.
For |ρ̂| ≥ 1 the step uses λ_s (35) with ±∞ (a jam: the velocity stops in that direction).

The multi-DOF algorithm (69) for arms is :class:`~.geared_arm.GearedArm`, and its inner problem
(67) is :func:`~.projection.axproj`. Geometry (Sec. 3.2–3.4): :mod:`~.gear_geometry`.
"""

from __future__ import annotations

import math
import warnings
from typing import NamedTuple

from . import gear_geometry
from .._checks import param

__all__ = ["Transmission", "TransmissionState", "IllPosedWarning", "efficiencies",
           "asymmetry_from_efficiencies", "internal_force", "internal_force_s", "friction_phi",
           "rho_hat"]


#: Relative width of the tie band of the static test (45): a velocity v* within 8 ulp of a
#: bound of the static interval counts as stuck, so marginal states (e.g. γ_v = 1 exactly, where
#: the friction equals the load in exact arithmetic) stick instead of creeping at ~1e-16 |v*|.
_TIE = 8.0 * 2.0 ** -52


class IllPosedWarning(UserWarning):
    """The transmission dynamics are ill-posed (|ρ̂| ≥ 1, eq. 29; or σ_max(P) ≥ 1, eq. 57)."""


def efficiencies(gamma_u: float, gamma_v: float) -> tuple[float, float]:
    """Eq. (26): forward and backward efficiencies ``(η_f, η_b)`` of the asymmetry coefficients.

    ``η_f = (1 − γ_u)/(1 + γ_v)``, ``η_b = (1 − γ_v)/(1 + γ_u)``.

    Parameters
    ----------
    gamma_u : float
        Input-side asymmetry coefficient γ_u (dimensionless).
    gamma_v : float
        Output-side asymmetry coefficient γ_v (dimensionless).

    Returns
    -------
    eta_f : float
        Forward efficiency (dimensionless).
    eta_b : float
        Backward efficiency (dimensionless; ≤ 0 for a self-locking gear).

    Raises
    ------
    ValueError
        At the singular points γ_v = −1 (η_f) and γ_u = −1 (η_b), or for a non-finite γ.
    """
    gu = param("gamma_u", gamma_u, allow_array=False)
    gv = param("gamma_v", gamma_v, allow_array=False)
    if gv == -1.0:
        raise ValueError(f"gamma_v: eta_f of (26) is undefined at gamma_v = -1 (got {gv!r})")
    if gu == -1.0:
        raise ValueError(f"gamma_u: eta_b of (26) is undefined at gamma_u = -1 (got {gu!r})")
    return (1.0 - gu) / (1.0 + gv), (1.0 - gv) / (1.0 + gu)


def asymmetry_from_efficiencies(eta_f: float, eta_b: float) -> tuple[float, float]:
    """Eq. (27): ``(γ_u, γ_v)`` from the forward and backward efficiencies.

    η_f, η_b ≤ 1 with ``η_f η_b < 1`` (both = 1 is the lossless gear, γ = 0). η_b ≤ 0 describes a
    self-locking gear (γ_v ≥ 1), η_f ≤ 0 one that cannot be driven from the input alone (γ_u ≥ 1).
    The result satisfies γ_u + γ_v ≥ 0.

    Parameters
    ----------
    eta_f : float
        Forward efficiency η_f ≤ 1 (dimensionless).
    eta_b : float
        Backward efficiency η_b ≤ 1 (dimensionless), with η_f η_b < 1 unless both are 1.

    Returns
    -------
    gamma_u : float
        Input-side asymmetry coefficient γ_u.
    gamma_v : float
        Output-side asymmetry coefficient γ_v.

    Raises
    ------
    ValueError
        For an efficiency above 1 or η_f η_b ≥ 1 (other than the lossless 1, 1).
    """
    ef = param("eta_f", eta_f, allow_array=False)
    eb = param("eta_b", eta_b, allow_array=False)
    if ef > 1.0:
        raise ValueError(f"eta_f: an efficiency is at most 1, got {eta_f!r}")
    if eb > 1.0:
        raise ValueError(f"eta_b: an efficiency is at most 1, got {eta_b!r}")
    if ef == 1.0 and eb == 1.0:
        return 0.0, 0.0
    den = 1.0 - ef * eb
    if den <= 0.0:
        raise ValueError(f"eta_b: (27) needs eta_f * eta_b < 1, got {ef!r} * {eb!r}")
    return (1.0 - 2.0 * ef + ef * eb) / den, (1.0 - 2.0 * eb + ef * eb) / den


def rho_hat(gamma_u: float, gamma_v: float, m: float, M: float) -> float:
    """Eq. (29): ``ρ̂ = (γ_u m − γ_v M)/(m + M)``; the dynamics are well posed iff |ρ̂| < 1.

    Parameters
    ----------
    gamma_u, gamma_v : float
        The asymmetry coefficients γ_u, γ_v (dimensionless), as for :func:`efficiencies`.
    m : float
        Input-side inertia referred to the output, kg (kg m² for a rotary output).
    M : float
        Output-side inertia, in m's unit.

    Returns
    -------
    float
        ρ̂ (dimensionless).
    """
    return (gamma_u * m - gamma_v * M) / (m + M)


def internal_force(phi: float, rho: float) -> float:
    """Eq. (31) for |ρ| < 1: ``λ(ϕ, ρ) = ϕ / (1 − sgn(ϕ) ρ)`` (0 at ϕ = 0).

    The solution of ``λ − ρ|λ| = ϕ`` (Lemma 1). For |ρ| ≥ 1 the set is empty or two-valued:
    ``ValueError``.

    Parameters
    ----------
    phi : float
        ϕ, N (N m for a rotary output): the driving term of (31), e.g. ϕ_k of (44a).
    rho : float
        ρ (dimensionless), e.g. ρ̂ of (29).

    Returns
    -------
    float
        The internal force λ, in ϕ's unit.

    Raises
    ------
    ValueError
        For |ρ| ≥ 1 (use :func:`internal_force_s`, eq. 35).
    """
    if not -1.0 < rho < 1.0:
        raise ValueError(f"rho: (31) is single-valued only for |rho| < 1, got {rho!r}; "
                         "use internal_force_s (35)")
    return internal_force_s(phi, rho)


def internal_force_s(phi: float, rho: float) -> float:
    """Eq. (35): the single-valued λ_s.

    (31) where |ρ| < 1, the branch continuous with it otherwise, and ±∞ where (31) is empty
    (ϕ > 0, ρ ≥ 1 → +∞; ϕ < 0, ρ ≤ −1 → −∞).

    Parameters
    ----------
    phi, rho : float
        As for :func:`internal_force` (any real ρ here).

    Returns
    -------
    float
        λ_s, in ϕ's unit (±inf where (31) is empty).
    """
    if phi > 0.0:
        return phi / (1.0 - rho) if rho < 1.0 else math.inf
    if phi < 0.0:
        return phi / (1.0 + rho) if rho > -1.0 else -math.inf
    return 0.0


def friction_phi(s: float, phi: float, rho: float) -> float:
    """Eq. (34): ``Φ(s, ϕ, ρ) = s |λ_s(ϕ, ρ s)|`` for s ∈ [−1, 1].

    Continuous and monotone in s when |ρ| < 1 (Lemma 2). ``Φ(±1)`` bound the friction force of
    the static state (45).

    Parameters
    ----------
    s : float
        The sign variable s ∈ [−1, 1] (dimensionless).
    phi, rho : float
        As for :func:`internal_force` (any real ρ here).

    Returns
    -------
    float
        Φ, the friction force referred to the output, in ϕ's unit (±inf where λ_s is).
    """
    if s == 0.0:
        return 0.0
    return s * abs(internal_force_s(phi, rho * s))


class TransmissionState(NamedTuple):
    v: float  #: output velocity after the step (exactly 0 when stuck)
    v_star: float  #: velocity without internal friction, (44b)
    phi: float  #: ϕ_k of (44a)
    friction: float  #: s|λ|: friction force on the motion, referred to the output (14a)
    lam: float  #: internal force λ (the Lagrange multiplier of (14b))
    stuck: bool  #: static friction: v is exactly 0


class Transmission:
    """A gear transmission with asymmetric load-dependent friction: the DAI (14), algorithm (44).

    ``Transmission(gamma_u, gamma_v, m, M)``: asymmetry coefficients γ_u, γ_v (any reals) and the
    input/output inertias m, M > 0 referred to the output (m = κ² m̂ for an input inertia m̂).
    ``step(f_u, f_v, h) -> v`` advances (44) by the timestep h from the stored velocity:
    ``f_u`` is the input (actuator) force referred to the output (κ f̂_u), ``f_v`` the force the
    output applies to its load (a load pushing the output backwards gives f_v > 0).

    Keyword arguments: ``v0`` initial velocity; ``ratio`` the reduction ratio κ (kept for the
    conversions :meth:`input_force`, :meth:`input_velocity`; the dynamics are in output units);
    ``ill_posed``: what to do when |ρ̂| ≥ 1 (29): ``"warn"`` (default: an
    :class:`IllPosedWarning`, then step with λ_s, eq. 35), ``"allow"`` (λ_s, silently) or
    ``"raise"`` (``ValueError``).

    (14) is unchanged when both γ's change sign; the pair is stored with γ_u + γ_v ≥ 0 (the
    paper's convention, Sec. 3.1), which makes η_f, η_b the efficiencies.
    """

    def __init__(self, gamma_u: float, gamma_v: float, m: float, M: float, *, v0: float = 0.0,
                 ratio: float = 1.0, ill_posed: str = "warn"):
        gu = param("gamma_u", gamma_u, allow_array=False)
        gv = param("gamma_v", gamma_v, allow_array=False)
        if gu + gv < 0.0:
            gu, gv = -gu, -gv
        self._gu, self._gv = gu, gv
        self._m = param("m", m, minimum=0.0, strict=True, allow_array=False)
        self._M = param("M", M, minimum=0.0, strict=True, allow_array=False)
        self._v0 = param("v0", v0, allow_array=False)
        self._ratio = param("ratio", ratio, minimum=0.0, strict=True, allow_array=False)
        if ill_posed not in ("warn", "allow", "raise"):
            raise ValueError(f"ill_posed: expected 'warn', 'allow' or 'raise', got {ill_posed!r}")
        self._mass = self._m + self._M
        self._rho = rho_hat(gu, gv, self._m, self._M)
        if not self.well_posed:
            msg = (f"Transmission(gamma_u={gu:g}, gamma_v={gv:g}, m={self._m:g}, M={self._M:g}): "
                   f"|rho_hat| = {abs(self._rho):.4g} >= 1 (eq. 29): the dynamics are ill-posed "
                   "(dynamic jamming); stepping with lambda_s (35), which stops the motion "
                   "where (31) has no solution. Increase m (rotor inertia) or reduce |gamma_v|.")
            if ill_posed == "raise":
                raise ValueError("gamma_v: " + msg)
            if ill_posed == "warn":
                warnings.warn(msg, IllPosedWarning, stacklevel=2)
        self.reset()

    # -- constructors ---------------------------------------------------------------------------
    @classmethod
    def from_efficiencies(cls, eta_f: float, eta_b: float, m: float, M: float,
                          **kwargs) -> "Transmission":
        """From the forward and backward efficiencies via (27) (see
        :func:`asymmetry_from_efficiencies`)."""
        gu, gv = asymmetry_from_efficiencies(eta_f, eta_b)
        return cls(gu, gv, m, M, **kwargs)

    @classmethod
    def leadscrew(cls, lead_angle: float, radius: float, mu: float, screw_inertia: float,
                  slider_mass: float, **kwargs) -> "Transmission":
        """Leadscrew (Sec. 3.2): screw of moment of inertia m̂ [kg m²] driving a slider [kg].

        The output is the slider (v in m/s, forces in N); ``ratio`` κ = 1/(r tan θ) rad/m, so a
        screw torque τ becomes ``f_u = κ τ`` (:meth:`input_force`)."""
        g = gear_geometry.leadscrew(lead_angle, radius, mu)
        return cls._geared(g, screw_inertia, slider_mass, "screw_inertia", kwargs)

    @classmethod
    def worm_gear(cls, worm_radius: float, gear_radius: float, lead_angle: float, mu: float,
                  worm_inertia: float, gear_inertia: float,
                  pressure_angle: float = math.radians(20.0), **kwargs) -> "Transmission":
        """Worm gear (Sec. 3.3, eq. 17); the output is the gear shaft (rad/s, N m)."""
        g = gear_geometry.worm_gear(worm_radius, gear_radius, lead_angle, mu, pressure_angle)
        return cls._geared(g, worm_inertia, gear_inertia, "worm_inertia", kwargs)

    @classmethod
    def spur_gear(cls, teeth_in: int, teeth_out: int, module: float, mu: float,
                  inertia_in: float, inertia_out: float,
                  pressure_angle: float = math.radians(20.0), addendum: float = 1.0,
                  **kwargs) -> "Transmission":
        """Spur gear pair (Sec. 3.4, eq. 21) with γ's averaged over a mesh cycle
        (:func:`~.gear_geometry.spur_gear`); the output is the driven gear's shaft."""
        g = gear_geometry.spur_gear(teeth_in, teeth_out, module, mu, pressure_angle, addendum)
        return cls._geared(g, inertia_in, inertia_out, "inertia_in", kwargs)

    @classmethod
    def _geared(cls, g, inertia_in, inertia_out, in_name, kwargs) -> "Transmission":
        if "ratio" in kwargs:
            raise ValueError("ratio: set by the geometry; do not pass it")
        mi = param(in_name, inertia_in, minimum=0.0, strict=True, allow_array=False)
        return cls(g.gamma_u, g.gamma_v, g.ratio ** 2 * mi, inertia_out, ratio=g.ratio, **kwargs)

    # -- properties -----------------------------------------------------------------------------
    gamma_u = property(lambda self: self._gu, doc="input-side asymmetry coefficient γ_u")
    gamma_v = property(lambda self: self._gv, doc="output-side asymmetry coefficient γ_v")
    m = property(lambda self: self._m, doc="input-side inertia referred to the output")
    M = property(lambda self: self._M, doc="output-side inertia")
    ratio = property(lambda self: self._ratio, doc="reduction ratio κ (u = κ v)")
    rho_hat = property(lambda self: self._rho, doc="ρ̂ of eq. (29)")

    @property
    def well_posed(self) -> bool:
        """|ρ̂| < 1: the internal force λ (31) is unique and (44) is exact (Sec. 4.3)."""
        return abs(self._rho) < 1.0

    @property
    def eta_f(self) -> float:
        """Forward efficiency (26): ``f_v = η_f f_u`` at the margin of driving from the input."""
        return efficiencies(self._gu, self._gv)[0]

    @property
    def eta_b(self) -> float:
        """Backward efficiency (26): ``f_u = η_b f_v`` at the margin of driving from the output."""
        return efficiencies(self._gu, self._gv)[1]

    @property
    def backdrivable(self) -> bool:
        """|γ_v| < 1 (Sec. 4.1): a load on the output moves it when the input is free."""
        return abs(self._gv) < 1.0

    @property
    def forward_drivable(self) -> bool:
        """|γ_u| < 1 (Sec. 4.1): an input force moves the unloaded output."""
        return abs(self._gu) < 1.0

    def input_force(self, torque: float) -> float:
        """f_u = κ f̂_u: an input-shaft force/torque referred to the output."""
        return self._ratio * torque

    def input_velocity(self, v: float) -> float:
        """u = κ v: the input-shaft velocity of an output velocity."""
        return self._ratio * v

    # -- statics --------------------------------------------------------------------------------
    def static_friction_holds(self, f_u: float, f_v: float) -> bool:
        """Eq. (23): the transmission can stay at rest under f_u, f_v."""
        return abs(f_u - f_v) <= abs(self._gu * f_u + self._gv * f_v)

    def friction_bounds(self, f_u: float, f_v: float) -> tuple[float, float]:
        """``(Φ(−1), Φ(1))`` of (34) with ϕ(f_u, f_v, ρ̂) (32): the range of the friction force
        (14a) at rest; a bound is ±inf where λ_s (35) is infinite (|ρ̂| ≥ 1)."""
        phi = self._gu * f_u + self._gv * f_v - self._rho * (f_u - f_v)
        return friction_phi(-1.0, phi, self._rho), friction_phi(1.0, phi, self._rho)

    def forward_inertia(self) -> float:
        """Apparent inertia while driven from the input (38): (η_f m + M) v̇ = η_f f_u − f_v."""
        return self.eta_f * self._m + self._M

    # -- dynamics -------------------------------------------------------------------------------
    def reset(self, v0: float | None = None) -> None:
        """Back to rest at ``v0`` (default: the constructor's)."""
        if v0 is not None:
            self._v0 = param("v0", v0, allow_array=False)
        self._v = self._v0
        self._state = TransmissionState(self._v0, self._v0, 0.0, 0.0, 0.0, False)

    @property
    def v(self) -> float:
        """Current output velocity v_k."""
        return self._v

    @property
    def state(self) -> TransmissionState:
        """Quantities of the last step."""
        return self._state

    def step(self, f_u: float, f_v: float, h: float) -> float:
        """Algorithm (44): advance by ``h`` under input force f_u and load force f_v; return v_k."""
        for name, x in (("f_u", f_u), ("f_v", f_v), ("h", h)):
            if x.__class__ is not float:
                try:
                    x = float(x)
                except (TypeError, ValueError):
                    raise ValueError(f"{name}: expected a real number, got {x!r}") from None
            if not math.isfinite(x):
                raise ValueError(f"{name}: must be finite, got {x!r}")
        f_u, f_v, h = float(f_u), float(f_v), float(h)
        if h <= 0.0:
            raise ValueError(f"h: the timestep must be > 0, got {h!r}")
        rho, mass = self._rho, self._mass
        phi = self._gu * f_u + self._gv * f_v - rho * (f_u - f_v)  # (44a)
        v_star = self._v + h * (f_u - f_v) / mass  # (44b)
        a = abs(phi)
        sr = rho if phi >= 0.0 else -rho  # sgn(ϕ) ρ
        c = h / mass
        hi = c * a / (1.0 - sr) if sr < 1.0 else math.inf  # h Φ(1)/(m+M), λ_s (35)
        lo = -c * a / (1.0 + sr) if sr > -1.0 else -math.inf  # h Φ(−1)/(m+M)
        tie = _TIE * abs(v_star)  # a state on the boundary of (45) within round-off sticks
        stuck = lo - tie <= v_star <= hi + tie
        if stuck:  # (45): static friction, v exactly 0
            v, friction = 0.0, v_star / c
        elif v_star > hi:
            v, friction = v_star - hi, a / (1.0 - sr)
        else:
            v, friction = v_star - lo, -a / (1.0 + sr)
        lam = phi + rho * friction  # (28b) with s|λ| = friction
        self._v = v
        self._state = TransmissionState(v, v_star, phi, friction, lam, stuck)
        return v

    def __repr__(self) -> str:
        return (f"Transmission(gamma_u={self._gu:g}, gamma_v={self._gv:g}, m={self._m:g}, "
                f"M={self._M:g}; eta_f={self.eta_f:.4g}, eta_b={self.eta_b:.4g}, "
                f"backdrivable={self.backdrivable}, forward_drivable={self.forward_drivable})")
