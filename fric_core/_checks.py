"""Parameter validation shared by the core: every bad value raises ``ValueError`` naming the
field."""

from __future__ import annotations

import math
from typing import Union

import numpy as np

Param = Union[float, np.ndarray]


def short_repr(value, limit: int = 80) -> str:
    """``repr(value)``, cut to ``limit`` characters (a 400-digit integer stays readable)."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def real_array(value, name: str, expected: str = "real numbers") -> np.ndarray:
    """``value`` as a float array (``np.asarray(value, dtype=float)``), refusing by ``name`` what
    is not real numbers where numpy would take it or fail otherwise: strings (numpy parses
    ``"3"``), complex values (numpy drops the imaginary part with a warning), integers beyond the
    float range (OverflowError), ``None`` (numpy makes it NaN), ragged nestings. Finiteness
    and shape are the caller's checks.
    """
    if isinstance(value, np.ndarray) and value.dtype.kind in "fiub":
        return value.astype(float, copy=False)
    if not isinstance(value, (str, bytes)):
        try:
            arr = np.asarray(value)
            kind = arr.dtype.kind
            if kind in "fiub":
                return arr.astype(float, copy=False)
            if kind == "O" and not any(v is None or isinstance(v, (str, bytes, complex))
                                       for v in arr.flat):
                return arr.astype(float)  # Decimal, Fraction, Python ints: as floats
        except (TypeError, ValueError, OverflowError):
            pass
    raise ValueError(f"{name}: expected {expected}, got {short_repr(value)}")


def param(name: str, value, *, minimum: float = -math.inf, strict: bool = False,
          allow_array: bool = True) -> Param:
    """Return ``value`` as a float (scalar) or a read-only float array of shape (n,).

    Raises ``ValueError`` naming ``name`` when the value is not a real number, is NaN or
    infinite, has a shape other than () or (n,), or is below ``minimum`` (or equal to it when
    ``strict``).
    """
    arr = real_array(value, name, "a real number")
    if arr.ndim > 1 or (arr.ndim == 1 and (not allow_array or arr.size == 0)):
        shape = "a scalar" if not allow_array else "a scalar or a non-empty 1-D array"
        raise ValueError(f"{name}: expected {shape}, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name}: must be finite, got {value!r}")
    bad = arr <= minimum if strict else arr < minimum
    if np.any(bad):
        rel = ">" if strict else ">="
        raise ValueError(f"{name}: must be {rel} {minimum:g}, got {value!r}")
    if arr.ndim == 0:
        return float(arr)
    arr = arr.copy()
    arr.flags.writeable = False
    return arr


def size_of(*values: Param) -> int | None:
    """Common length of the array-valued parameters (None when all are scalars)."""
    n = None
    for v in values:
        if isinstance(v, np.ndarray):
            if n is None:
                n = v.size
            elif v.size != n:
                raise ValueError(f"per-joint parameters have different lengths: {n} and {v.size}")
    return n


def named_sizes(**values: Param) -> int | None:
    """Like :func:`size_of` but names the offending parameters."""
    n, first = None, None
    for name, v in values.items():
        if isinstance(v, np.ndarray):
            if n is None:
                n, first = v.size, name
            elif v.size != n:
                raise ValueError(f"{name}: has {v.size} entries but {first} has {n}")
    return n
