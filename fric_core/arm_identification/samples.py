"""The checks every entry point of the arm fit applies to its samples (issue 15): shapes and
finite values, named by field. Below both :mod:`.fit` and :mod:`.result`."""

from __future__ import annotations

import numpy as np

__all__ = ["check_samples"]


def check_samples(q, v, a, tau, n: int):
    """``q, v, a, tau`` as (N, n) float arrays; ValueError naming the field for a wrong shape,
    no samples, or rows with NaN/inf.

    Parameters
    ----------
    q, v, a, tau : array_like
        Positions, velocities, accelerations, efforts (a 1-D array for one joint).
    n : int
        The model's joints.

    Returns
    -------
    tuple of ndarray
        The four (N, n) arrays.
    """
    arrs = {}
    for name, x in (("q", q), ("v", v), ("a", a), ("tau", tau)):
        arr = np.asarray(x, dtype=float)
        if arr.ndim == 1 and n == 1:
            arr = arr[:, None]
        arrs[name] = arr
    N = arrs["q"].shape[0] if arrs["q"].ndim == 2 else -1
    for name, arr in arrs.items():
        if arr.ndim != 2 or arr.shape[1] != n or arr.shape[0] != N:
            raise ValueError(f"{name}: expected shape (N, n) = ({N if N >= 0 else 'N'}, {n}) "
                             f"(samples × the model's {n} joints), got {arr.shape}")
    if N == 0:
        raise ValueError("q: no samples")
    for name, arr in arrs.items():
        bad = ~np.all(np.isfinite(arr), axis=1)
        if bad.any():
            raise ValueError(f"{name}: contains NaN or inf ({int(bad.sum())} rows, first at row "
                             f"{int(np.argmax(bad))})")
    return arrs["q"], arrs["v"], arrs["a"], arrs["tau"]
