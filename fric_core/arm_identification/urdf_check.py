"""Is the URDF's rigid body right for this recording, as far as the friction is concerned?

``fric identify --dynamics auto`` (issue 23) fits the friction twice on the same normal
equations (:func:`~.fit.fit_arm_friction` with ``urdf_too=True``): with the rigid body's base
parameters identified, and with the URDF's. Where the URDF is right both are unbiased and the
URDF's is the more precise: identifying the rigid body adds variance, and part of it trades with
the friction on any one motion (a link's first moment whose gravity column is nearly constant
over the recorded range is indistinguishable from the friction's constant part: arm7's shoulder,
moved ±0.8 rad about upright, leaves its levels 0.04–0.08 N·m uncertain). Where the URDF is
wrong (a mass, a centre of mass a few mm off, a tool left out), the URDF's fit puts the error
into the friction, and a held-out prediction cannot see it when the error lies along such a
direction: the two models then predict the efforts equally well.

The friction values themselves tell (a Hausman-type comparison, J. A. Hausman, "Specification
tests in econometrics", Econometrica 46(6), 1978): under a right URDF the difference
``Δ = θ_urdf − θ_identified`` has variance ``var_identified − var_urdf ≤ var_identified``, so
``|Δ| / std_identified`` is at most a standard normal's size. :func:`urdf_disagreement` gives its
largest value over every friction value of every joint; above :data:`URDF_Z` the URDF is refused.
Below it, a URDF error can still hide inside the identified values' own uncertainty: the URDF's
fit carries it as a bias of up to Δ, so :func:`with_urdf_bias` adds ``Δ Δᵀ`` to each joint's
friction covariance (the standard deviations become ``√(std_urdf² + Δ²)``): they cover that
bias, and under a right URDF they stay at most those of the identified fit on average.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Optional, Sequence, Tuple

import numpy as np

__all__ = ["URDF_Z", "urdf_disagreement", "with_urdf_bias"]

#: The largest ``|θ_urdf − θ_identified| / std_identified`` over a recording's friction values
#: (up to ~150: 7 joints × 20 curve levels + the line) for which the URDF's rigid body is kept:
#: a standard normal exceeds 4 with probability 6.3e-5, so a right URDF is refused in < 1 % of
#: recordings even if every value were independent.
URDF_Z = 4.0

_GEAR_KEYS = ("eta_f", "eta_b", "eta_product")


def _keys(fit, name):
    """The friction values of joint ``name`` both fits can compare (the gear's efficiencies
    are left out: with the rigid body identified they are known only up to a scale)."""
    return [k for k in fit.joints[name] if k not in _GEAR_KEYS]


def urdf_disagreement(identified, urdf, joints: Optional[Sequence[str]] = None
                      ) -> Tuple[float, str, str]:
    """The largest ``|θ_urdf − θ_identified| / std_identified`` over the friction values.

    Parameters
    ----------
    identified, urdf : ArmFrictionFit
        The same law fitted with ``dynamics="identify"`` and ``"urdf"`` on the same rows.
    joints : sequence of str, optional
        The joints to compare (default: all).

    Returns
    -------
    (float, str, str)
        The largest ratio (0 when nothing compares), its joint and its value's key.
    """
    worst = (0.0, "", "")
    for name in identified.joints if joints is None else joints:
        if name not in urdf.joints or name not in identified.joints:
            continue
        for k in _keys(identified, name):
            a, b = identified.joints[name].get(k), urdf.joints[name].get(k)
            sd = identified.std.get(name, {}).get(k)
            if a is None or b is None or sd is None or not (math.isfinite(a) and
                                                             math.isfinite(b)):
                continue
            if not (sd > 0 and math.isfinite(sd)):
                continue
            z = abs(b - a) / sd
            if z > worst[0]:
                worst = (float(z), name, k)
    return worst


def with_urdf_bias(urdf, identified):
    """``urdf`` with each joint's friction covariance increased by ``Δ Δᵀ`` (Δ = its friction
    values less ``identified``'s), and its standard deviations ``√(std² + Δ²)``; the same for
    the ``line`` beside a curve. The values are unchanged.

    Parameters
    ----------
    urdf, identified : ArmFrictionFit
        The same law fitted with ``dynamics="urdf"`` and ``"identify"`` on the same rows.

    Returns
    -------
    ArmFrictionFit
        A copy of ``urdf``.
    """
    std = {name: dict(sd) for name, sd in urdf.std.items()}
    cov = dict(urdf.friction_cov)
    for name, vals in urdf.joints.items():
        other = identified.joints.get(name, {})
        delta = {}
        for k in _keys(urdf, name):
            a, b = vals.get(k), other.get(k)
            if a is None or b is None or not (math.isfinite(a) and math.isfinite(b)):
                continue
            delta[k] = float(a - b)
            sd = std[name].get(k)
            if sd is not None and math.isfinite(sd):
                std[name][k] = float(math.hypot(sd, delta[k]))
        if name in cov and urdf.friction_keys:
            d = np.array([delta.get(k, 0.0) for k in urdf.friction_keys])
            cov[name] = cov[name] + np.outer(d, d)
    out = dataclasses.replace(urdf, std=std, friction_cov=cov)
    if urdf.line is not None and identified.line is not None:
        out.line = with_urdf_bias(urdf.line, identified.line)
    return out
