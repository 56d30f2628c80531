"""Fixed-step integrators over a :class:`~fric_core.modular.system.CompiledSystem`.

* :func:`rk4_step` — the generalised RK4 (21)/(22) of Kikuuwe & Yamamoto: stage r evaluates
  ``ξ_r = F(x(k) + T_{r−1} ξ_{r−1}, kT + T_{r−1}; T_r)`` with
  ``{T_0, …, T_4} = {0, T/2, T/2, T, T}``, so every impedance receives τ = T_r (19), and
  ``x(k+1) = x(k) + (T/6)(ξ_1 + 2ξ_2 + 2ξ_3 + ξ_4)``.
* :func:`euler_step` — forward Euler (4) through the same interface with τ = T; with the friction
  component (19) this is exactly the implicit-Euler friction model (14)/(20).
* :func:`simulate` — n fixed steps, returning sampled times and states.

After every step the admittances project their states (unit quaternions of (26)).
"""

from __future__ import annotations

import math
from typing import Callable, NamedTuple

import numpy as np

from .._checks import param
from .system import CompiledSystem

__all__ = ["rk4_step", "euler_step", "simulate", "Trajectory", "RK4_STAGE_TIMES"]

#: {T_0, T_1, T_2, T_3, T_4} / T of (21): stage offsets and the τ passed to impedances.
RK4_STAGE_TIMES = (0.0, 0.5, 0.5, 1.0, 1.0)


def rk4_step(system: CompiledSystem, x: np.ndarray, t: float, T: float,
             out: np.ndarray | None = None) -> np.ndarray:
    """One step of the generalised RK4 (21)/(22); returns x(k+1) (in ``out`` if given).

    ``T`` must be finite and > 0 (``ValueError`` otherwise).

    Parameters
    ----------
    system : CompiledSystem
        The compiled system (its ``derivative``, ``project`` and work arrays ``ws``).
    x : ndarray
        The state x(k), shape ``(system.n_state,)``.
    t : float
        The time kT [s].
    T : float
        The step size [s], finite and > 0.
    out : ndarray or None
        Buffer for x(k+1), shape ``(system.n_state,)``; None: a new array.

    Returns
    -------
    ndarray
        The state x(k+1), shape ``(system.n_state,)``, projected (unit quaternions); ``out``
        if given.

    Raises
    ------
    ValueError
        If ``T`` is not finite and > 0.
    """
    if not 0.0 < T < math.inf:     # one float compare per step (NaN fails it too)
        raise ValueError(f"T: the step size must be finite and > 0, got {T!r}")
    ws = system.ws
    k1, k2, k3, k4, xs, tmp = ws[0], ws[1], ws[2], ws[3], ws[4], ws[5]
    h = 0.5 * T
    F = system.derivative
    k1[:] = F(x, t, h)                              # r = 1: x(k),          τ = T_1 = T/2
    np.multiply(k1, h, out=tmp)
    np.add(x, tmp, out=xs)
    k2[:] = F(xs, t + h, h)                         # r = 2: x + T/2 ξ_1,   τ = T_2 = T/2
    np.multiply(k2, h, out=tmp)
    np.add(x, tmp, out=xs)
    k3[:] = F(xs, t + h, T)                         # r = 3: x + T/2 ξ_2,   τ = T_3 = T
    np.multiply(k3, T, out=tmp)
    np.add(x, tmp, out=xs)
    k4[:] = F(xs, t + T, T)                         # r = 4: x + T ξ_3,     τ = T_4 = T
    np.add(k2, k3, out=tmp)
    tmp *= 2.0
    tmp += k1
    tmp += k4
    tmp *= T / 6.0
    if out is None:
        out = np.empty_like(x)
    np.add(x, tmp, out=out)
    system.project(out)
    return out


def euler_step(system: CompiledSystem, x: np.ndarray, t: float, T: float,
               out: np.ndarray | None = None) -> np.ndarray:
    """One forward-Euler step (4) with τ = T; returns x(k+1) (in ``out`` if given).

    ``T`` must be finite and > 0 (``ValueError`` otherwise).

    Parameters
    ----------
    system, x, t
        As for :func:`rk4_step`.
    T : float
        The step size [s], finite and > 0; also the τ passed to the impedances (19).
    out : ndarray or None
        As for :func:`rk4_step`.

    Returns
    -------
    ndarray
        The state x(k+1) (``out`` if given), projected like :func:`rk4_step`'s.

    Raises
    ------
    ValueError
        If ``T`` is not finite and > 0 (the message names ``T``).
    """
    if not 0.0 < T < math.inf:
        raise ValueError(f"T: the step size must be finite and > 0, got {T!r}")
    tmp = system.ws[5]
    np.multiply(system.derivative(x, t, T), T, out=tmp)
    if out is None:
        out = np.empty_like(x)
    np.add(x, tmp, out=out)
    system.project(out)
    return out


class Trajectory(NamedTuple):
    t: np.ndarray  #: sample times, shape (m,)
    x: np.ndarray  #: states, shape (m, n_state)


_METHODS = {"rk4": rk4_step, "euler": euler_step}


def simulate(system: CompiledSystem, x0: np.ndarray, T: float, n: int, *,
             method: str = "rk4", t0: float = 0.0, every: int = 1,
             callback: Callable[[float, np.ndarray], None] | None = None) -> Trajectory:
    """Advance ``n`` fixed steps of size ``T`` from ``x0`` at ``t0``.

    Records x0 and every ``every``-th state (and the last one). ``method`` is ``"rk4"`` (21) or
    ``"euler"`` (4). ``callback(t, x)`` is called after each step (x is a buffer: copy it).

    Parameters
    ----------
    system : CompiledSystem
        The compiled system.
    x0 : array_like
        The initial state, finite, shape ``(system.n_state,)`` (copied).
    T : float
        The step size [s], > 0.
    n : int
        The number of steps, >= 0.
    method : str
        ``"rk4"`` (:func:`rk4_step`, (21)) or ``"euler"`` (:func:`euler_step`, (4)).
    t0 : float
        The initial time [s].
    every : int
        Record every ``every``-th state, >= 1 (the last state is always recorded).
    callback : callable or None
        ``callback(t, x)`` after each step, with the time [s] and the state (a reused buffer).

    Returns
    -------
    Trajectory
        ``t``: the recorded times [s], shape (m,); ``x``: the recorded states, shape
        ``(m, system.n_state)``, where m = ``len(range(0, n + 1, every))``, plus one if ``n`` is
        not a multiple of ``every``.
    """
    if method not in _METHODS:
        raise ValueError(f"method: expected one of {sorted(_METHODS)}, got {method!r}")
    T = param("T", T, minimum=0.0, strict=True, allow_array=False)
    t0 = param("t0", t0, allow_array=False)
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ValueError(f"n: expected a non-negative integer number of steps, got {n!r}")
    if isinstance(every, bool) or not isinstance(every, (int, np.integer)) or every < 1:
        raise ValueError(f"every: expected a positive integer, got {every!r}")
    x = np.array(x0, dtype=float)
    if x.shape != (system.n_state,) or not np.all(np.isfinite(x)):
        raise ValueError(f"x0: expected a finite state of shape ({system.n_state},), got "
                         f"shape {x.shape}" + ("" if x.shape != (system.n_state,) else
                                               " with non-finite entries"))
    step = _METHODS[method]
    idx = list(range(0, n + 1, every))
    if idx[-1] != n:
        idx.append(n)
    ts = t0 + T * np.asarray(idx, dtype=float)
    xs = np.empty((len(idx), x.size))
    xs[0] = x
    j = 1
    nxt = np.empty_like(x)
    for k in range(1, n + 1):
        step(system, x, t0 + (k - 1) * T, T, out=nxt)
        x, nxt = nxt, x
        if callback is not None:
            callback(t0 + k * T, x)
        if j < len(idx) and idx[j] == k:
            xs[j] = x
            j += 1
    return Trajectory(ts, xs)
