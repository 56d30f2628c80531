"""Conversions between the standard messages fric uses and numpy arrays, with input checks.

Every rejection raises :class:`InputError` whose ``field`` names the bad message field, so a node
can report it in its diagnostics and fall back to a safe output; nothing here returns NaN.

Hot-path use (1 kHz): :class:`JointStateReader` and :class:`CommandReader` keep preallocated
buffers and cache the name-to-index map, so a message with the same joint order as the previous
one costs a comparison of the name lists, a ``take`` and a finiteness check.
"""

from __future__ import annotations

import array
import math
from typing import Sequence

import numpy as np
from builtin_interfaces.msg import Time
from geometry_msgs.msg import WrenchStamped
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

__all__ = ["InputError", "JointStateReader", "CommandReader", "Float64ArrayWriter",
           "joint_state_msg", "wrench_to_arrays", "wrench_msg", "stamp_to_ns", "ns_to_stamp"]


class InputError(ValueError):
    """A message that cannot be used; ``field`` names the offending field."""

    def __init__(self, field: str, reason: str):
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason

    @property
    def kind(self) -> str:
        """A short machine-readable key for diagnostics counters: ``missing_joint``,
        ``duplicate_joint_name``, ``non_finite``, ``empty_field``, ``length_mismatch`` or
        ``bad_<field>``."""
        text = self.reason
        if self.field == "name":
            return "duplicate_joint_name" if "duplicate" in text else "missing_joint"
        if "non-finite" in text:
            return "non_finite"
        if "empty" in text:
            return "empty_field"
        return "length_mismatch" if "entries" in text else f"bad_{self.field}"


def stamp_to_ns(stamp: Time) -> int:
    """builtin_interfaces/Time -> integer nanoseconds."""
    return stamp.sec * 1_000_000_000 + stamp.nanosec


def ns_to_stamp(ns: int) -> Time:
    """Integer nanoseconds -> builtin_interfaces/Time."""
    sec, nanosec = divmod(int(ns), 1_000_000_000)
    return Time(sec=sec, nanosec=nanosec)


def _as_doubles(values) -> array.array:
    buf = array.array("d")
    buf.frombytes(np.ascontiguousarray(values, dtype=float).tobytes())
    return buf


class JointStateReader:
    """Picks the configured joints, by name, out of ``sensor_msgs/JointState`` messages.

    ``read(msg)`` fills ``position``, ``velocity`` and ``effort`` (arrays in the configured joint
    order) for the fields listed in ``fields``; other joints in the message are ignored. Raises
    :class:`InputError` for a missing joint, duplicate names, a field whose length does not match
    ``name``, an empty required field, or a non-finite value of a configured joint; the buffers
    keep their previous contents then.
    """

    def __init__(self, joint_names: Sequence[str],
                 fields: Sequence[str] = ("position", "velocity")):
        names = tuple(joint_names)
        if not names:
            raise ValueError("joint_names: at least one joint is needed")
        if len(set(names)) != len(names):
            raise ValueError(f"joint_names: duplicate names in {list(names)}")
        bad = [f for f in fields if f not in ("position", "velocity", "effort")]
        if bad:
            raise ValueError(f"fields: unknown JointState fields {bad}")
        self.joint_names = names
        self.fields = tuple(fields)
        n = len(names)
        self.position = np.zeros(n)
        self.velocity = np.zeros(n)
        self.effort = np.zeros(n)
        self._names: list | None = None
        self._index: np.ndarray | None = None
        self._bad_names: list | None = None  # the last names _map rejected, and its error
        self._bad: InputError | None = None

    def _map(self, names: list) -> np.ndarray:
        pos = {}
        for i, nm in enumerate(names):
            if nm in pos:
                raise InputError("name", f"duplicate joint name {nm!r}")
            pos[nm] = i
        missing = [j for j in self.joint_names if j not in pos]
        if missing:
            raise InputError("name", f"joint(s) {missing} missing (message has {names})")
        return np.array([pos[j] for j in self.joint_names], dtype=np.intp)

    def read(self, msg: JointState) -> None:
        names = msg.name
        if names != self._names:
            if names == self._bad_names:  # the same unusable names again (a foreign stream)
                raise self._bad.with_traceback(None)
            try:
                index = self._map(list(names))  # may raise: keep the old cache then
            except InputError as e:
                self._bad_names, self._bad = list(names), e
                raise
            self._names, self._index = list(names), index
        n_names = len(names)
        picked = []
        for field in self.fields:
            raw = getattr(msg, field)
            if len(raw) != n_names:
                if len(raw) == 0:
                    raise InputError(field, f"empty (the publisher sends no {field})")
                raise InputError(field, f"has {len(raw)} entries for {n_names} names")
            vals = np.frombuffer(raw, dtype=float) if isinstance(raw, array.array) \
                else np.asarray(raw, dtype=float)
            vals = vals[self._index]
            if not np.isfinite(vals).all():
                j = self.joint_names[int(np.flatnonzero(~np.isfinite(vals))[0])]
                raise InputError(field, f"non-finite value for joint {j!r}")
            picked.append((field, vals))
        for field, vals in picked:  # every field valid: commit together
            getattr(self, field)[:] = vals


class CommandReader:
    """Checks ``std_msgs/Float64MultiArray`` commands: exactly ``n`` finite entries."""

    def __init__(self, n: int):
        if n < 1:
            raise ValueError("n: at least one command entry is needed")
        self.n = n
        self.values = np.zeros(n)

    def read(self, msg: Float64MultiArray) -> np.ndarray:
        data = msg.data
        if len(data) != self.n:
            raise InputError("data", f"has {len(data)} entries, expected {self.n} "
                             "(one per configured joint, in order)")
        vals = np.frombuffer(data, dtype=float) if isinstance(data, array.array) \
            else np.asarray(data, dtype=float)
        if not np.isfinite(vals).all():
            raise InputError("data", f"non-finite entry at index "
                             f"{int(np.flatnonzero(~np.isfinite(vals))[0])}")
        self.values[:] = vals
        return self.values


class Float64ArrayWriter:
    """A reusable ``Float64MultiArray`` message filled from a numpy array (no per-call lists)."""

    def __init__(self):
        self.msg = Float64MultiArray()

    def fill(self, values) -> Float64MultiArray:
        self.msg.data = _as_doubles(values)
        return self.msg


def joint_state_msg(names: Sequence[str], position=None, velocity=None, effort=None,
                    stamp_ns: int | None = None, frame_id: str = "") -> JointState:
    """Build a JointState; absent fields are sent empty, as the message definition allows."""
    msg = JointState()
    msg.name = list(names)
    n = len(msg.name)
    for field, vals in (("position", position), ("velocity", velocity), ("effort", effort)):
        if vals is None:
            continue
        arr = np.asarray(vals, dtype=float).reshape(-1)
        if arr.size != n:
            raise ValueError(f"{field}: has {arr.size} entries for {n} names")
        setattr(msg, field, _as_doubles(arr))
    if stamp_ns is not None:
        msg.header.stamp = ns_to_stamp(stamp_ns)
    msg.header.frame_id = frame_id
    return msg


def wrench_to_arrays(msg: WrenchStamped) -> tuple[np.ndarray, np.ndarray]:
    """WrenchStamped -> (force[3], torque[3]); raises InputError on non-finite components."""
    w = msg.wrench
    vals = (w.force.x, w.force.y, w.force.z, w.torque.x, w.torque.y, w.torque.z)
    for name, v in zip(("force.x", "force.y", "force.z", "torque.x", "torque.y", "torque.z"),
                       vals):
        if not math.isfinite(v):
            raise InputError(f"wrench.{name}", f"non-finite value {v!r}")
    return np.array(vals[:3]), np.array(vals[3:])


def wrench_msg(force, torque=(0.0, 0.0, 0.0), frame_id: str = "",
               stamp_ns: int | None = None) -> WrenchStamped:
    """Build a WrenchStamped from force and torque 3-vectors."""
    msg = WrenchStamped()
    msg.header.frame_id = frame_id
    if stamp_ns is not None:
        msg.header.stamp = ns_to_stamp(stamp_ns)
    f = [float(x) for x in force]
    t = [float(x) for x in torque]
    if len(f) != 3 or len(t) != 3:
        raise ValueError("force, torque: need 3 components each")
    msg.wrench.force.x, msg.wrench.force.y, msg.wrench.force.z = f
    msg.wrench.torque.x, msg.wrench.torque.y, msg.wrench.torque.z = t
    return msg
