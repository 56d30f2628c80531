"""Friction parameters of the planar LuGre models (paper 002, Table I) and the amended g(v) (2).

All σ's are per unit normal load (the amended LuGre model (1)–(3) of De Wit and Tsiotras): a
bristle force is ``(σ0 z + σ1 ż + σ2 v) · f_N``, so σ0 is in 1/m, σ1 and σ2 in s/m, and μ_C, μ_S
are dimensionless.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Union

import numpy as np

from .._checks import param

__all__ = ["PlanarFrictionParams", "TABLE_I"]


@dataclass(frozen=True)
class PlanarFrictionParams:
    """Parameters of the planar LuGre / Elasto-Plastic models (Table I of paper 002).

    sigma0: bristle stiffness σ0 [1/m] (> 0); sigma1: bristle damping σ1 [s/m] (≥ 0);
    sigma2: viscous coefficient σ2 [s/m] (≥ 0); mu_c, mu_s: Coulomb and static coefficients
    (0 < μ_C ≤ μ_S); gamma: Stribeck exponent γ (> 0); v_s: Stribeck velocity [m/s] (> 0);
    s_ba: break-away ratio z_ba = s_ba·z_max of the Elasto-Plastic extension (0 ≤ s_ba < 1).

    ``g(speed)`` is the amended steady-state friction coefficient (2).

    Parameters
    ----------
    sigma0 : float
        The bristle stiffness σ0 [1/m], > 0.
    sigma1 : float
        The bristle damping σ1 [s/m], >= 0.
    sigma2 : float
        The viscous coefficient σ2 [s/m], >= 0.
    mu_c : float
        The Coulomb coefficient μ_C [-], > 0.
    mu_s : float
        The static coefficient μ_S [-], >= μ_C.
    gamma : float
        The Stribeck exponent γ [-], > 0.
    v_s : float
        The Stribeck velocity [m/s], > 0.
    s_ba : float
        The break-away ratio [-], 0 <= s_ba < 1.
    """

    sigma0: float = 1e6
    sigma1: float = 8e2
    sigma2: float = 0.2
    mu_c: float = 1.0
    mu_s: float = 1.2
    gamma: float = 2.0
    v_s: float = 1e-3
    s_ba: float = 0.9

    def __post_init__(self) -> None:
        for name, minimum, strict in (("sigma0", 0.0, True), ("sigma1", 0.0, False),
                                      ("sigma2", 0.0, False), ("mu_c", 0.0, True),
                                      ("gamma", 0.0, True), ("v_s", 0.0, True),
                                      ("s_ba", 0.0, False)):
            object.__setattr__(self, name, param(name, getattr(self, name), minimum=minimum,
                                                 strict=strict, allow_array=False))
        object.__setattr__(self, "mu_s", param("mu_s", self.mu_s, minimum=self.mu_c,
                                               allow_array=False))
        if self.s_ba >= 1.0:
            raise ValueError(f"s_ba: must be < 1, got {self.s_ba!r}")

    @classmethod
    def coulomb(cls, mu: float = 1.0, sigma0: float = 1e6) -> "PlanarFrictionParams":
        """Coulomb-like parameters: μ_S = μ_C = μ, no damping, no viscosity (Table I, p = 0
        without σ1, the setting of the limit surface (7)–(8))."""
        return cls(sigma0=sigma0, sigma1=0.0, sigma2=0.0, mu_c=mu, mu_s=mu)

    def g(self, speed) -> Union[float, np.ndarray]:
        """Amended steady-state coefficient (2): μ_C + (μ_S − μ_C) exp(−|v/v_s|^γ)."""
        s = np.abs(np.asarray(speed, dtype=float)) / self.v_s
        out = self.mu_c + (self.mu_s - self.mu_c) * np.exp(-(s ** self.gamma))
        return float(out) if np.ndim(out) == 0 else out

    def g_scalar(self, speed: float) -> float:
        """(2) for one float, without numpy (hot scalar paths)."""
        x = (abs(speed) / self.v_s) ** self.gamma
        return self.mu_c + (self.mu_s - self.mu_c) * math.exp(-x)


#: Table I of paper 002: row p = 0 (no viscosity, μ_S = μ_C) and row p = 1 (Stribeck, viscous).
TABLE_I = {
    0: PlanarFrictionParams(sigma0=1e6, sigma1=8e2, sigma2=0.0, mu_c=1.0, mu_s=1.0, gamma=2.0,
                            v_s=1e-3, s_ba=0.9),
    1: PlanarFrictionParams(sigma0=1e6, sigma1=8e2, sigma2=0.2, mu_c=1.0, mu_s=1.2, gamma=2.0,
                            v_s=1e-3, s_ba=0.9),
}
