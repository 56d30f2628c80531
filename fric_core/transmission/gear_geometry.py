"""Asymmetry coefficients γ_u, γ_v of real gear sets from their geometry (paper 004, Sec. 3.2–3.4).

Every function returns a :class:`GearCoefficients`: the asymmetry coefficients of the DAI (14)
and the reduction ratio κ (input velocity u = κ v, output velocity v). The DAI is written at the
output: an input-side moment of inertia m̂ becomes ``m = κ² m̂`` and an input torque f̂_u becomes
``f_u = κ f̂_u`` (Sec. 3.1). :class:`~.dai.Transmission` has a constructor for
each (``leadscrew``, ``worm_gear``, ``spur_gear``).

* Leadscrew (Sec. 3.2): lead angle θ, friction coefficient μ: ``γ_u = μ tan θ``, ``γ_v = μ/tan θ``;
  the forward and backward efficiencies (26) are then the textbook ``tan θ / tan(θ + φ)`` and
  ``tan(θ − φ) / tan θ`` with tan φ = μ, and the screw self-locks when tan θ ≤ μ.
* Worm gear (Sec. 3.3, eq. 17): ``γ_u = μ tan λ_l / cos φ_n``, ``γ_v = μ / (tan λ_l cos φ_n)``,
  ``κ = r_g / (r_w tan λ_l)``.
* Spur gear (Sec. 3.4, eq. 21): at a contact point a distance ξ along the line of action from the
  pitch point, ``γ_u = μ|ξ|/(R_v cos α) − sgn(ξ) μ tan α`` and
  ``γ_v = μ|ξ|/(R_u cos α) + sgn(ξ) μ tan α`` (derived below; the sign pair is fixed so that
  γ_u + γ_v ≥ 0, the paper's normalisation). :func:`spur_gear` averages them over a mesh cycle.

Derivation of (21) as used here. Input gear centre (−R_u, 0) turning clockwise at u, output
centre (R_v, 0) turning counter-clockwise at v, pitch point at the origin, contact point
``c = ξ (sin α, cos α)`` on the line of action (normal n = (sin α, cos α), tangent
t = (cos α, −sin α)). The normal velocities agree when ``u R_u = v R_v`` (κ = R_v/R_u); the
sliding velocity of the output tooth over the input tooth is ``−ξ (1 + κ) v``. With the contact
force ``λ_n n + λ_t t`` on the output and Coulomb's ``|λ_t| ≤ μ |λ_n|``, summing the two equations
of motion referred to the output gives (14a) with ``|λ| = μ |λ_n| |ξ| (1 + κ)``, and eliminating
λ_t gives (14b) with the γ's above. At ξ = 0 (pure rolling) γ_u = −γ_v and (23) allows no
static friction: the mesh is lossless there.

Mesh-cycle average (the integral the paper suggests at the end of Sec. 3.4). For standard
involute gears (addendum ``a`` modules) the path of contact runs from ``ξ = −L_a`` (the output's
addendum circle) to ``ξ = L_r`` (the input's), ``L_r = √(R_au² − R_bu²) − R_u sin α`` and
``L_a = √(R_av² − R_bv²) − R_v sin α`` (R_a addendum, R_b = R cos α base radius). One tooth pair
sweeps it at constant speed; the contact ratio is ε = (L_a + L_r)/p_b with the base pitch
``p_b = π m cos α``, and the next pairs follow at ± p_b. Where N pairs are in contact each carries
1/N of the load (for 1 < ε < 2: half the load in the first and last ``(ε − 1) p_b`` of the path).
The time average over a mesh cycle of the load-weighted γ's is then
``γ̄ = (1/p_b) ∫ w(ξ) γ(ξ) dξ`` with w = 1/N(ξ). To first
order in μ the forward loss ``1 − η_f`` of this average is Niemann's gear loss factor
``μ π (1/z_u + 1/z_v)(1 − ε + ε_r² + ε_a²)`` (ε_r = L_r/p_b, ε_a = L_a/p_b).
"""

from __future__ import annotations

import math
from typing import NamedTuple

from .._checks import param

__all__ = ["GearCoefficients", "SpurMesh", "leadscrew", "worm_gear", "spur_contact", "spur_gear"]


class GearCoefficients(NamedTuple):
    gamma_u: float  #: input-side asymmetry coefficient γ_u
    gamma_v: float  #: output-side asymmetry coefficient γ_v
    ratio: float  #: reduction ratio κ: input velocity u = κ v (Sec. 3.1, eq. 10)


class SpurMesh(NamedTuple):
    gamma_u: float  #: mesh-cycle average of γ_u (21a)
    gamma_v: float  #: mesh-cycle average of γ_v (21b)
    ratio: float  #: κ = R_v / R_u = z_v / z_u
    contact_ratio: float  #: ε = (L_a + L_r) / p_b
    approach: float  #: L_a, path of contact on the ξ < 0 side [m]
    recess: float  #: L_r, path of contact on the ξ > 0 side [m]
    base_pitch: float  #: p_b = π m cos α [m]


def _angle(name: str, value, upper: float) -> float:
    a = param(name, value, minimum=0.0, strict=True, allow_array=False)
    if a >= upper:
        raise ValueError(f"{name}: must be < {upper:.6g} rad, got {value!r}")
    return a


def leadscrew(lead_angle: float, radius: float, mu: float) -> GearCoefficients:
    """Leadscrew (Sec. 3.2): lead angle θ [rad], screw (pitch) radius r [m], friction μ.

    The nut advances ``r tan θ`` per radian of screw rotation, so ``κ = 1/(r tan θ)`` [rad/m];
    ``γ_u = μ tan θ``, ``γ_v = μ / tan θ``.

    Parameters
    ----------
    lead_angle : float
        Lead angle θ ∈ (0, π/2), rad.
    radius : float
        Pitch radius r of the screw, m (> 0).
    mu : float
        Coulomb friction coefficient μ ≥ 0 of the contact (dimensionless).

    Returns
    -------
    GearCoefficients
        γ_u, γ_v (dimensionless) and κ, rad/m (the output is the nut).
    """
    th = _angle("lead_angle", lead_angle, math.pi / 2)
    r = param("radius", radius, minimum=0.0, strict=True, allow_array=False)
    mu = param("mu", mu, minimum=0.0, allow_array=False)
    t = math.tan(th)
    return GearCoefficients(mu * t, mu / t, 1.0 / (r * t))


def worm_gear(worm_radius: float, gear_radius: float, lead_angle: float, mu: float,
              pressure_angle: float = math.radians(20.0)) -> GearCoefficients:
    """Worm gear (Sec. 3.3, eq. 17): pitch radii r_w, r_g, lead angle λ_l, pressure angle φ_n.

    ``κ = r_g / (r_w tan λ_l)``, ``γ_u = μ tan λ_l / cos φ_n``, ``γ_v = μ / (tan λ_l cos φ_n)``.

    Parameters
    ----------
    worm_radius : float
        Pitch radius r_w of the worm, m (> 0).
    gear_radius : float
        Pitch radius r_g of the gear, m (> 0).
    lead_angle : float
        Lead angle λ_l ∈ (0, π/4], rad.
    mu : float
        Coulomb friction coefficient μ ≥ 0 of the contact (dimensionless).
    pressure_angle : float, optional
        Normal pressure angle φ_n ∈ (0, π/2), rad (default 20°).

    Returns
    -------
    GearCoefficients
        γ_u, γ_v (dimensionless) and κ (dimensionless, worm turns per gear turn).
    """
    rw = param("worm_radius", worm_radius, minimum=0.0, strict=True, allow_array=False)
    rg = param("gear_radius", gear_radius, minimum=0.0, strict=True, allow_array=False)
    lam = _angle("lead_angle", lead_angle, math.pi / 4 + 1e-12)
    phn = _angle("pressure_angle", pressure_angle, math.pi / 2)
    mu = param("mu", mu, minimum=0.0, allow_array=False)
    t, c = math.tan(lam), math.cos(phn)
    return GearCoefficients(mu * t / c, mu / (t * c), rg / (rw * t))


def spur_contact(xi: float, mu: float, radius_in: float, radius_out: float,
                 pressure_angle: float = math.radians(20.0)) -> GearCoefficients:
    """Eq. (21): γ_u, γ_v of a spur pair with its single contact at ξ [m] on the line of action.

    ξ > 0 is the side of the input's addendum (recess), ξ < 0 the output's (approach).

    Parameters
    ----------
    xi : float
        Position ξ of the contact on the line of action from the pitch point, m.
    mu : float
        Coulomb friction coefficient μ ≥ 0 of the contact (dimensionless).
    radius_in : float
        Pitch radius R_u of the input gear, m (> 0).
    radius_out : float
        Pitch radius R_v of the output gear, m (> 0).
    pressure_angle : float, optional
        Pressure angle α ∈ (0, π/2), rad (default 20°).

    Returns
    -------
    GearCoefficients
        γ_u, γ_v (dimensionless) at ξ and κ = R_v/R_u.
    """
    xi = param("xi", xi, allow_array=False)
    mu = param("mu", mu, minimum=0.0, allow_array=False)
    ru = param("radius_in", radius_in, minimum=0.0, strict=True, allow_array=False)
    rv = param("radius_out", radius_out, minimum=0.0, strict=True, allow_array=False)
    al = _angle("pressure_angle", pressure_angle, math.pi / 2)
    sg = (xi > 0) - (xi < 0)
    c, t = math.cos(al), math.tan(al)
    return GearCoefficients(mu * abs(xi) / (rv * c) - sg * mu * t,
                            mu * abs(xi) / (ru * c) + sg * mu * t, rv / ru)


def _segment_integrals(a: float, b: float) -> tuple[float, float]:
    """(∫ sgn ξ dξ, ∫ |ξ| dξ) over [a, b]."""
    def prim(x):  # primitives of sgn and |.|
        return abs(x), 0.5 * x * abs(x)
    (s0, m0), (s1, m1) = prim(a), prim(b)
    return s1 - s0, m1 - m0


def spur_gear(teeth_in: int, teeth_out: int, module: float, mu: float,
              pressure_angle: float = math.radians(20.0), addendum: float = 1.0) -> SpurMesh:
    """Mesh-cycle average of (21) for a standard involute spur pair (see the module docstring).

    Parameters
    ----------
    teeth_in : int
        Tooth count z_u of the input gear (≥ 5).
    teeth_out : int
        Tooth count z_v of the output gear (≥ 5).
    module : float
        Module m, m (> 0).
    mu : float
        Coulomb friction coefficient μ ≥ 0 of the contact (dimensionless).
    pressure_angle : float, optional
        Pressure angle α ∈ (0, π/2), rad (default 20°).
    addendum : float, optional
        Addendum in modules (1.0 for standard teeth).

    Returns
    -------
    SpurMesh
        Mesh-cycle averages of γ_u, γ_v, κ = z_v/z_u, the contact ratio ε, the paths of
        approach L_a and recess L_r (m) and the base pitch p_b (m).

    Raises
    ------
    ValueError
        When the teeth interfere (addendum beyond the other gear's interference point) or the
        contact ratio is below 1.
    """
    zu = param("teeth_in", teeth_in, minimum=5.0, allow_array=False)
    zv = param("teeth_out", teeth_out, minimum=5.0, allow_array=False)
    mod = param("module", module, minimum=0.0, strict=True, allow_array=False)
    mu = param("mu", mu, minimum=0.0, allow_array=False)
    al = _angle("pressure_angle", pressure_angle, math.pi / 2)
    ad = param("addendum", addendum, minimum=0.0, strict=True, allow_array=False) * mod
    ru, rv = zu * mod / 2.0, zv * mod / 2.0
    s, c = math.sin(al), math.cos(al)
    recess = math.sqrt((ru + ad) ** 2 - (ru * c) ** 2) - ru * s
    approach = math.sqrt((rv + ad) ** 2 - (rv * c) ** 2) - rv * s
    if recess > rv * s or approach > ru * s:
        raise ValueError(f"addendum: {addendum!r} modules makes the teeth interfere with "
                         f"z = {zu:g}/{zv:g}, α = {math.degrees(al):.3g}° (path of contact past "
                         "the base-circle tangent point); use more teeth or a larger pressure "
                         "angle")
    pb = math.pi * mod * c
    length = approach + recess
    eps = length / pb
    if eps < 1.0:
        raise ValueError(f"addendum: contact ratio {eps:.3f} < 1 (the teeth lose contact)")
    # position x = ξ + L_a in [0, L]; the other pairs sit at x ± k p_b, so the number of pairs in
    # contact is constant between the breakpoints j p_b and L − j p_b
    cuts = {0.0, length}
    for j in range(1, int(eps) + 1):
        cuts.update(x for x in (j * pb, length - j * pb) if 0.0 < x < length)
    cuts = sorted(cuts)
    sgn_int, abs_int = 0.0, 0.0
    for x0, x1 in zip(cuts[:-1], cuts[1:]):
        mid = 0.5 * (x0 + x1)
        pairs = sum(1 for k in range(-int(eps) - 1, int(eps) + 2) if 0.0 <= mid + k * pb <= length)
        si, ai = _segment_integrals(x0 - approach, x1 - approach)
        sgn_int += si / pairs
        abs_int += ai / pairs
    sgn_mean, abs_mean = sgn_int / pb, abs_int / pb
    gu = mu * abs_mean / (rv * c) - mu * math.tan(al) * sgn_mean
    gv = mu * abs_mean / (ru * c) + mu * math.tan(al) * sgn_mean
    return SpurMesh(gu, gv, rv / ru, eps, approach, recess, pb)
