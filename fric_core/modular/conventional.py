"""Conventional friction impedances for comparison (Sec. II-B): Dahl (11) and LuGre (12).

They are ordinary ODEs, integrated by the same RK4 as everything else (τ is ignored). Under an
oscillating load below the breakaway level both drift (paper 001, Fig. 7; paper 000, Sec. II-B),
unlike :class:`~fric_core.modular.impedances.FrictionImpedance`. Outputs are the force on the
moving side, −f.
"""

from __future__ import annotations

import math

from .._checks import param
from .components import Impedance

__all__ = ["DahlImpedance", "LuGreImpedance"]


class DahlImpedance(Impedance):
    """The Dahl model (11) as an impedance.

    Dahl (11): ``f = K e``, ``ė = v − |v| K e / F``. Input ``[p, v]``, state e, output −f.

    Parameters
    ----------
    K : float
        The stiffness [N/m, or N m/rad for a joint], > 0.
    F : float
        The Coulomb level [N, or N m], > 0.
    """

    motion = "coordinates"
    n_in, n_out, n_state = 2, 1, 1

    def __init__(self, K: float, F: float):
        self.K = param("K", K, minimum=0.0, strict=True, allow_array=False)
        self.F = param("F", F, minimum=0.0, strict=True, allow_array=False)
        self._c = self.K / self.F

    def evaluate(self, xin, y, t, tau, w, ydot):
        v, e = xin.item(1), y.item(0)
        w[0] = -self.K * e
        ydot[0] = v - abs(v) * self._c * e

    def energy(self, xin, y) -> float:
        return 0.5 * self.K * float(y[0]) ** 2


class LuGreImpedance(Impedance):
    """The LuGre model (12) as an impedance.

    LuGre (12): ``ė = v − |v| e/g(v)``, ``f = K e + B ė + D v``, with the Stribeck curve
    ``g(v) = (Fc + (Fs − Fc) exp(−(v/vs)²)) / K`` (a displacement). Input ``[p, v]``, state e,
    output −f. ``K`` > 0 bristle stiffness, ``B`` ≥ 0 bristle damping, ``D`` ≥ 0 viscosity,
    ``Fc`` > 0 Coulomb and ``Fs`` ≥ Fc breakaway levels (default Fs = Fc), ``vs`` > 0.

    Parameters
    ----------
    K : float
        The bristle stiffness σ0 [N/m, or N m/rad for a joint], > 0.
    B : float
        The bristle damping σ1 [N s/m, or N m s/rad], >= 0.
    Fc : float
        The Coulomb level [N, or N m], > 0.
    Fs : float or None
        The breakaway level [N, or N m], >= ``Fc``; None: ``Fc``.
    vs : float
        The Stribeck velocity [m/s, or rad/s], > 0.
    D : float
        The viscosity [N s/m, or N m s/rad], >= 0.
    """

    motion = "coordinates"
    n_in, n_out, n_state = 2, 1, 1

    def __init__(self, K: float, B: float, Fc: float, Fs: float | None = None,
                 vs: float = 1e-3, D: float = 0.0):
        self.K = param("K", K, minimum=0.0, strict=True, allow_array=False)
        self.B = param("B", B, minimum=0.0, allow_array=False)
        self.D = param("D", D, minimum=0.0, allow_array=False)
        self.Fc = param("Fc", Fc, minimum=0.0, strict=True, allow_array=False)
        self.Fs = self.Fc if Fs is None else param("Fs", Fs, minimum=0.0, allow_array=False)
        if self.Fs < self.Fc:
            raise ValueError(f"Fs: the breakaway level must be >= Fc = {self.Fc}, got {Fs!r}")
        self.vs = param("vs", vs, minimum=0.0, strict=True, allow_array=False)

    def evaluate(self, xin, y, t, tau, w, ydot):
        v, e = xin.item(1), y.item(0)
        if self.Fs == self.Fc:
            gF = self.Fc
        else:
            r = v / self.vs
            gF = self.Fc + (self.Fs - self.Fc) * math.exp(-r * r)
        ed = v - abs(v) * self.K * e / gF
        ydot[0] = ed
        w[0] = -(self.K * e + self.B * ed + self.D * v)

    def energy(self, xin, y) -> float:
        return 0.5 * self.K * float(y[0]) ** 2
