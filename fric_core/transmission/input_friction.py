"""The input-side joint friction law of one step (paper 003's levels, issue 23's curves), shared
by :class:`~.geared_arm.GearedArm` and :class:`fric_core.mujoco.FrictionStepper`.

Per joint the friction ``τ_f(v) = Cp + bp v (v > 0), −Cn + bn v (v < 0)``, any value in
``[−Cn, Cp]`` at rest, or a monotone piecewise-linear
:class:`~fric_core.joint_friction.FrictionCurve`.
A step of the implicit-Euler algorithms treats it as (``GearedArm``'s module docstring, "Joint
friction" and "Friction curves"):

* a constant torque ``c0 = (Cp − Cn)/2`` (the offset of the static interval from 0),
* a symmetric Coulomb level ``C = max((Cp + Cn)/2, 0)``, set-valued at rest (solved exactly by
  :class:`~.coulomb_projection.CoulombAxproj`),
* a viscous slope b (bp moving forwards, bn backwards, by the sign of the velocity at the start
  of the step, their mean from rest), implicit as the input-side inertia ``h b``;

for a curve the segment of the start velocity gives the step's line ``c_k + s_k v`` (a
*semi-implicit* law: exact in steady sliding). :meth:`InputFriction.terms` returns ``(b, C, c0)``
for the velocities at the start of a step.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from .._checks import short_repr
from ..joint_friction import FrictionCurve

__all__ = ["InputFriction", "gear_asymmetries"]

_TOL = 1e-9  # a level sum below 0 by this much (a fit at the bound, rounded) is still monotone


class InputFriction:
    """Per-joint input-side friction: the levels and slopes (and curves) of n joints.

    Parameters
    ----------
    names : sequence of str
        The n joint names (for the messages).
    Cp, Cn : (n,) ndarray
        Levels at 0+ and (magnitude) at 0− [N m]; ``Cp + Cn ≥ 0`` (one may be below 0). Copied.
    bp, bn : (n,) ndarray
        Viscous slopes forwards and backwards [N m s/rad], ≥ 0. Copied.
    curves : sequence or mapping of FrictionCurve or None, optional
        Per joint a curve (``law: curve``) or None; a joint with a curve gets its ``Cp, Cn,
        bp, bn`` set to the curve's levels at 0 and first slopes.

    Raises
    ------
    ValueError
        ``curves`` malformed (naming the joint), or ``Cp + Cn < 0`` (naming the joint).

    Attributes
    ----------
    Cp, Cn, bp, bn : (n,) ndarray
        The levels and slopes (a curve joint's from its curve).
    curves : tuple
        One FrictionCurve or None per joint.
    curve_any : bool
        Some joint has a curve.
    coulomb, offset, b_rest : (n,) ndarray
        C, c0 and the mean slope of the levels' law.
    active : bool
        Some joint has friction (a level, an offset, a slope or a curve).
    coulomb_possible : (n,) ndarray of bool
        Joints whose step may have C > 0 (they need a forward-drivable gear, |γ_u| ≤ 1).
    """

    def __init__(self, names: Sequence[str], Cp: np.ndarray, Cn: np.ndarray, bp: np.ndarray,
                 bn: np.ndarray, curves=None):
        self.n = len(names)
        self.Cp, self.Cn, self.bp, self.bn = Cp.copy(), Cn.copy(), bp.copy(), bn.copy()
        #: per joint the friction curve or None
        self.curves = self.curves_arg(curves, names)
        self.curve_any = any(c is not None for c in self.curves)
        if self.curve_any:
            self._curve_setup()
        cross = self.Cp + self.Cn < -_TOL * np.maximum(1.0, np.maximum(np.abs(self.Cp),
                                                                       np.abs(self.Cn)))
        if cross.any():
            i = int(np.flatnonzero(cross)[0])
            raise ValueError(f"Cp: joint {names[i]}: Cp + Cn = {self.Cp[i] + self.Cn[i]:.6g} < 0 "
                             "(the friction at 0+ below that at 0-: not a monotone law)")
        # C: the symmetric part (≥ 0; a crossing by rounding is 0), c0: a constant input torque
        self.coulomb = np.maximum(0.5 * (self.Cp + self.Cn), 0.0)
        self.offset = 0.5 * (self.Cp - self.Cn)
        self.b_rest = 0.5 * (self.bp + self.bn)
        self.active = bool(self.coulomb.any() or self.offset.any() or self.bp.any()
                           or self.bn.any() or self.curve_any)
        coulomb = self.coulomb > 0.0
        if self.curve_any:  # a step's C = max(c_k + level at 0 of the other side, 0)/2
            coulomb |= self._curve_coulomb
        self.coulomb_possible = coulomb

    @staticmethod
    def curves_arg(curves, names) -> tuple:
        """``curves`` as one FrictionCurve or None per joint; ValueError naming ``curves``.

        Parameters
        ----------
        curves : None, sequence of n, or mapping {joint name: FrictionCurve or None}
            The curves.
        names : sequence of str
            The joint names.

        Returns
        -------
        tuple
            One FrictionCurve or None per joint, in ``names`` order.
        """
        n = len(names)
        if curves is None:
            return (None,) * n
        if isinstance(curves, Mapping):
            unknown = [k for k in curves if k not in names]
            if unknown:
                raise ValueError(f"curves: unknown joint name(s) {unknown}; the joints are "
                                 f"{list(names)}")
            curves = [curves.get(j) for j in names]
        curves = list(curves)
        if len(curves) != n:
            raise ValueError(f"curves: expected {n} entries (one per joint {list(names)}, None "
                             f"for none), got {len(curves)}")
        for j, c in zip(names, curves):
            if c is None:
                continue
            if not isinstance(c, FrictionCurve):
                raise ValueError(f"curves: joint {j}: expected a FrictionCurve or None, got "
                                 f"{short_repr(c)}")
            for side in (1, -1):
                v, f, sl = c.segments(side)
                if not (np.all(np.isfinite(f)) and np.all(np.isfinite(sl)) and v[0] == 0.0
                        and np.all(sl >= 0.0)):
                    raise ValueError(f"curves: joint {j}: expected finite, non-decreasing "
                                     "levels over increasing knots from 0")
            fp0, fn0 = c.f_pos[0], c.f_neg[0]
            if fp0 + fn0 < -_TOL * max(1.0, abs(fp0), abs(fn0)):
                raise ValueError(f"curves: joint {j}: the levels at 0 cross (f_pos[0] + "
                                 f"f_neg[0] = {fp0 + fn0:.6g} < 0)")
        return tuple(curves)

    def _curve_setup(self) -> None:
        """Padded per-side (n, K) knots, intercepts c_k = f_k − s_k v_k and slopes s_k of every
        joint's law (a joint without a curve: one segment, Cp + bp v); the curve joints' Cp, Cn,
        bp, bn set to the curves' levels at 0 and first slopes."""
        n = self.n
        rows = ([], [])
        for i, c in enumerate(self.curves):
            if c is None:
                rows[0].append((np.zeros(1), np.array([self.Cp[i]]), np.array([self.bp[i]])))
                rows[1].append((np.zeros(1), np.array([self.Cn[i]]), np.array([self.bn[i]])))
                continue
            for j, side in enumerate((1, -1)):
                v, f, sl = c.segments(side)
                v, f = np.asarray(v, dtype=float), np.asarray(f, dtype=float)
                sl = np.append(sl, sl[-1])
                rows[j].append((v, f - sl * v, sl))
            self.Cp[i], self.Cn[i] = c.f_pos[0], c.f_neg[0]
            self.bp[i], self.bn[i] = rows[0][-1][2][0], rows[1][-1][2][0]
        self._curve_v, self._curve_c, self._curve_s = [], [], []
        for side in rows:
            K = max(v.size for v, _, _ in side)
            V, Cc, S = np.full((n, K), np.inf), np.zeros((n, K)), np.zeros((n, K))
            for i, (v, c, sl) in enumerate(side):
                V[i, :v.size], Cc[i, :v.size], S[i, :v.size] = v, c, sl
            self._curve_v.append(V)
            self._curve_c.append(Cc)
            self._curve_s.append(S)
        # joints whose step may have C > 0 (for the |γ_u| ≤ 1 check)
        self._curve_coulomb = ((self._curve_c[0].max(axis=1) + self.Cn > 0.0)
                               | (self._curve_c[1].max(axis=1) + self.Cp > 0.0))

    def terms(self, v: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The step's viscous slope b, Coulomb C ≥ 0 and constant c0 per joint.

        Parameters
        ----------
        v : (n,) ndarray
            The joint velocities at the start of the step [rad/s].

        Returns
        -------
        b, C, c0 : (n,) ndarray
            b by the sign of v (from rest the mean slope); for a curve joint the start
            segment's slope and intercept (module docstring). C and c0 may be this object's own
            arrays (do not modify them).
        """
        if not self.curve_any:
            b = np.where(v > 0.0, self.bp, np.where(v < 0.0, self.bn, self.b_rest))
            return b, self.coulomb, self.offset
        r = np.abs(v)
        seg = []
        for V, Cc, S in zip(self._curve_v, self._curve_c, self._curve_s):
            k = np.count_nonzero(r[:, None] >= V[:, 1:], axis=1)[:, None]
            seg.append((np.take_along_axis(Cc, k, axis=1)[:, 0],
                        np.take_along_axis(S, k, axis=1)[:, 0]))
        (cp, sp), (cn, sn) = seg
        fwd, bwd = v > 0.0, v < 0.0
        Cp = np.where(fwd, cp, np.where(bwd, np.maximum(self.Cp, -cn), self.Cp))
        Cn = np.where(bwd, cn, np.where(fwd, np.maximum(self.Cn, -cp), self.Cn))
        b = np.where(fwd, sp, np.where(bwd, sn, self.b_rest))
        return b, np.maximum(0.5 * (Cp + Cn), 0.0), 0.5 * (Cp - Cn)


def gear_asymmetries(names: Sequence[str], entries: Sequence, gu: np.ndarray, gv: np.ndarray,
                     where: str) -> list[str]:
    """Write (γ_u, γ_v) of (47) from each entry's efficiencies (27) where it has both.

    Parameters
    ----------
    names : sequence of str
        The joints, in the order of ``entries``, ``gu`` and ``gv``.
    entries : sequence of JointFriction
        Each joint's friction (:meth:`~fric_core.joint_friction.JointFriction.has_gear`: both
        efficiencies known).
    gu, gv : (n,) ndarray
        Written in place where an entry has both efficiencies; left as they are elsewhere.
    where : str
        The field the messages name (``where: joints.<joint>: ...``).

    Returns
    -------
    list of str
        The joints with only ``eta_product`` (efficiencies not determined one by one).

    Raises
    ------
    ValueError
        Efficiencies outside their range, naming the joint.
    """
    from .dai import asymmetry_from_efficiencies

    undetermined = []
    for i, (j, e) in enumerate(zip(names, entries)):
        if e.has_gear:
            try:
                gu[i], gv[i] = asymmetry_from_efficiencies(e.eta_f, e.eta_b)
            except ValueError as exc:
                raise ValueError(f"{where}: joints.{j}: {exc}") from None
        elif e.eta_product is not None:
            undetermined.append(j)
    return undetermined
