"""Small 3-vector and unit-quaternion helpers on plain floats (faster than numpy at size 3).

Quaternions are ``[w, x, y, z]`` (scalar first) and rotate body vectors into the world frame.
"""

from __future__ import annotations

import math

import numpy as np


def quat_matrix(q0: float, q1: float, q2: float, q3: float) -> np.ndarray:
    """Rotation matrix R(q) of a quaternion (normalised here, so a slightly non-unit q is fine)."""
    n = q0 * q0 + q1 * q1 + q2 * q2 + q3 * q3
    s = 2.0 / n
    return np.array([
        [1.0 - s * (q2 * q2 + q3 * q3), s * (q1 * q2 - q0 * q3), s * (q1 * q3 + q0 * q2)],
        [s * (q1 * q2 + q0 * q3), 1.0 - s * (q1 * q1 + q3 * q3), s * (q2 * q3 - q0 * q1)],
        [s * (q1 * q3 - q0 * q2), s * (q2 * q3 + q0 * q1), 1.0 - s * (q1 * q1 + q2 * q2)],
    ])


def rotate(q, r) -> tuple[float, float, float]:
    """R(q) r for a (near-)unit quaternion q = (w, x, y, z) and a 3-vector r (pass tuples of
    Python floats for speed; numpy scalars work too)."""
    w, x, y, z = q
    n = w * w + x * x + y * y + z * z
    rx, ry, rz = r
    # t = 2 (v × r) / n ;  R r = r + w t + v × t   (v = (x, y, z))
    tx = 2.0 * (y * rz - z * ry) / n
    ty = 2.0 * (z * rx - x * rz) / n
    tz = 2.0 * (x * ry - y * rx) / n
    return (rx + w * tx + (y * tz - z * ty),
            ry + w * ty + (z * tx - x * tz),
            rz + w * tz + (x * ty - y * tx))


def quat_from_axis_angle(axis, angle: float) -> np.ndarray:
    """Unit quaternion of a rotation by ``angle`` about ``axis``."""
    a = np.asarray(axis, float)
    a = a / math.sqrt(float(a @ a))
    s = math.sin(0.5 * angle)
    return np.array([math.cos(0.5 * angle), a[0] * s, a[1] * s, a[2] * s])
