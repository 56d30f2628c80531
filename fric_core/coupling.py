"""Run friction elements over a force sequence, for side-by-side simulations.

* :func:`simulate_mass_on_impedance` — a mass M pushed by an applied force h and held by an
  impedance-type friction element (model C, :class:`~fric_core.baselines.LuGre`, ...), coupled
  explicitly.
* :func:`simulate_admittance` — step an admittance-type element (model A, D, Karnopp, ...) over h.

Both return numpy arrays over the input sequence: shape (N,) for a 1-D h of N samples (the
element then runs on its float fast path) or (N, n) for an (N, n) h (n independent joints).
Positions use the semi-implicit Euler rule x_k = x_{k−1} + T v_k with x = 0 before the first
step. The elements are stepped from their current state (call ``reset()`` first for a fresh run).
"""

from __future__ import annotations

from typing import Tuple, Union

import numpy as np

from ._checks import param

ArrayLike = Union[float, np.ndarray]

__all__ = ["simulate_mass_on_impedance", "simulate_admittance"]


def _force_sequence(h) -> np.ndarray:
    try:
        h = np.array(h, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"h: expected an array of forces, got {h!r}") from None
    if h.ndim not in (1, 2) or h.shape[0] == 0 or h.size == 0:
        raise ValueError(f"h: expected shape (N,) or (N, n) with N >= 1, got {h.shape}")
    if not np.all(np.isfinite(h)):
        raise ValueError("h: must be finite")
    return h


def simulate_mass_on_impedance(element, M: ArrayLike, h, dt: float,
                               v0: ArrayLike = 0.0) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mass M under applied force h_k and the friction of an impedance ``element``.

    Explicit (semi-implicit Euler) coupling, for k = 1..N::

        f_k = element.step(v_{k−1})           # friction from the last known velocity
        v_k = v_{k−1} + T (h_k − f_k)/M
        x_k = x_{k−1} + T v_k

    This is the composite of paper 000 Fig. 12(b) ("alternative model" of model D), eq. (60):
    the friction element sees the velocity one step late. Sec. IV-B/C: unlike model D
    (:class:`~fric_core.elements.CompliantAdmittance`), this composite can oscillate or go
    unstable for stiff contacts or large T; for a model-C element in static friction its
    dynamics are eq. (63) — check them with :func:`fric_core.design.static_convergence`
    (non-oscillatory for B² = 4KM needs T² < M/(4K)). The same applies to the σ0, σ1 presliding
    spring of the bristle models.

    Parameters
    ----------
    element : impedance element
        Anything with ``step(u) -> f`` (f with the sign of u), e.g. a model-C element or
        :class:`~fric_core.baselines.LuGre`; its ``dt``, if it has one, must equal ``dt``.
        Stepped from its current state.
    M : float or (n,) array
        Mass, kg (> 0); an (n,) array for per-joint masses needs an (N, n) ``h``.
    h : (N,) or (N, n) array_like
        Applied force h_k at each step, N.
    dt : float
        Time step T, s (> 0).
    v0 : float or (n,) array, optional
        Initial velocity, m/s (default 0).

    Returns
    -------
    x : ndarray
        Position, m, of h's shape (x = 0 before the first step).
    v : ndarray
        Velocity v_k, m/s, of h's shape.
    f : ndarray
        Friction force f_k returned by the element, N, of h's shape.

    Raises
    ------
    ValueError
        On a non-finite or mis-shaped ``h``, a non-positive ``M`` or ``dt``, per-joint ``M``/``v0``
        that do not match h's columns, or an element whose ``dt`` differs from ``dt``.
    """
    h = _force_sequence(h)
    M = param("M", M, minimum=0.0, strict=True)
    dt = param("dt", dt, minimum=0.0, strict=True, allow_array=False)
    v0 = param("v0", v0)
    el_dt = getattr(element, "dt", None)
    if el_dt is not None and el_dt != dt:
        raise ValueError(f"dt: {dt!r} differs from the element's time step {el_dt!r}")
    step = element.step
    N = h.shape[0]
    if h.ndim == 1:
        for name, val in (("M", M), ("v0", v0)):
            if isinstance(val, np.ndarray):
                raise ValueError(f"{name}: per-joint values need h of shape (N, n)")
        TM = dt / M
        v = v0
        vs = [0.0] * N
        fs = [0.0] * N
        for k, hk in enumerate(h.tolist()):  # floats: the elements' scalar fast path
            f = step(v)
            v = v + TM * (hk - f)
            vs[k] = v
            fs[k] = f
        V = np.array(vs)
        Fo = np.array(fs, dtype=float)
    else:
        n = h.shape[1]
        for name, val in (("M", M), ("v0", v0)):
            if isinstance(val, np.ndarray) and val.size != n:
                raise ValueError(f"{name}: has {val.size} entries but h has {n} columns")
        TM = dt / np.broadcast_to(M, (n,))
        v = np.broadcast_to(v0, (n,)).astype(float)
        V = np.empty_like(h)
        Fo = np.empty_like(h)
        for k in range(N):
            f = step(v)
            v = v + TM * (h[k] - f)
            V[k] = v
            Fo[k] = f
    x = np.cumsum(V, axis=0) * dt
    return x, V, Fo


def simulate_admittance(element, h) -> Tuple[np.ndarray, np.ndarray]:
    """Step an admittance ``element`` (``step(h) -> v``) over the forces h; return ``(x, v)``.

    ``v[k]`` is the velocity returned for ``h[k]`` and ``x[k] = T Σ_{j≤k} v[j]`` the displacement
    since the start (T = ``element.dt``).

    Parameters
    ----------
    element : admittance element
        Anything with ``step(h) -> v`` and a time step ``dt`` (s, > 0): model A, D, Karnopp, ...
        Stepped from its current state.
    h : (N,) or (N, n) array_like
        Applied force at each step, N.

    Returns
    -------
    x : ndarray
        Displacement since the start, m, of h's shape.
    v : ndarray
        Velocity returned by the element for each ``h[k]``, m/s, of h's shape.

    Raises
    ------
    ValueError
        On a non-finite or mis-shaped ``h``, or an element without a positive ``dt``.
    """
    h = _force_sequence(h)
    dt = param("dt", getattr(element, "dt", float("nan")), minimum=0.0, strict=True,
               allow_array=False)
    step = element.step
    if h.ndim == 1:
        V = np.array([step(hk) for hk in h.tolist()], dtype=float)
    else:
        V = np.empty_like(h)
        for k in range(h.shape[0]):
            V[k] = step(h[k])
    return np.cumsum(V, axis=0) * dt, V
