"""The two component types of the modular architecture (Kikuuwe & Yamamoto, Sec. II-B).

* :class:`Admittance` — force in, motion out: ``ẋ = A(x, u)`` (6). ``x`` holds generalised
  positions and velocities; ``u`` is the generalised force summed from the impedances.
* :class:`Impedance` — motion in, force out: ``[w, ẏ] = I(x̂, y; τ)`` (9), generalised with the
  timestep-size argument τ of (19)/(22) and the time t. ``y`` is the component's own state (may be
  empty).

Sign convention (one for every impedance): the output ``w`` is the generalised force the
impedance exerts ON the motion it reads, so the power it delivers is ``wᵀ v``. A spring-damper
therefore returns ``−(K p + B v)``, and a friction element the negative of the paper's ``f``
(which has the direction of the sliding velocity).

Both are plain classes with fixed sizes known at construction; the hot-path methods write into
caller-owned arrays and allocate nothing.
"""

from __future__ import annotations

import numpy as np

__all__ = ["Admittance", "Impedance"]


class Admittance:
    """An admittance component ``ẋ = A(x, u)`` (eq. 6).

    Attributes set by subclasses: ``n_state`` (size of x), ``n_force`` (size of u), ``kind``
    (what the state means: ``"coordinates"`` = ``[positions(m), velocities(m)]`` with m = n_force,
    ``"rigid"`` = ``[p, v, q, ω]`` of (25)).
    """

    n_state: int = 0
    n_force: int = 0
    kind: str = "coordinates"

    def derivative(self, x: np.ndarray, u: np.ndarray, t: float, out: np.ndarray) -> None:
        """Write ``A(x, u)`` into ``out`` (shape (n_state,))."""
        raise AttributeError(f"{type(self).__name__} does not define derivative()")

    def project(self, x: np.ndarray) -> None:
        """Map a state back onto its manifold after a step (in place); default: nothing."""

    def energy(self, x: np.ndarray) -> float:
        """Kinetic plus potential (gravity) energy of the state, J."""
        raise AttributeError(f"{type(self).__name__} does not define energy()")


class Impedance:
    """An impedance component ``[w, ẏ] = I(x̂, y; τ)`` (eqs. 9, 19, 22).

    Attributes set by subclasses: ``n_in`` (size of the motion input x̂; None = ignores it),
    ``n_out`` (size of the force output w), ``n_state`` (size of y), ``motion`` (the layout
    of x̂ it expects: ``"coordinates"`` = ``[positions(m), velocities(m)]`` with m = n_out, or
    ``"frames"`` = stacked frames ``[p, q, v, ω]``).
    """

    n_in: int | None = 0
    n_out: int = 0
    n_state: int = 0
    motion: str = "coordinates"

    def evaluate(self, xin: np.ndarray, y: np.ndarray, t: float, tau: float,
                 w: np.ndarray, ydot: np.ndarray) -> None:
        """Write the force ``w`` (n_out,) and the state rate ``ẏ`` (n_state,) in place."""
        raise AttributeError(f"{type(self).__name__} does not define evaluate()")

    def initial_state(self) -> np.ndarray:
        """Default initial y (zeros)."""
        return np.zeros(self.n_state)

    def energy(self, xin: np.ndarray, y: np.ndarray) -> float:
        """Elastic energy stored in the component, J (0 if it stores none)."""
        return 0.0
