"""The Φ/Ψ maps of (13): how admittance states become impedance inputs and how impedance
outputs become admittance inputs.

A *port* describes one such map together with its dual, so that the two can never disagree:
if a port gives the impedance the motion ``x̂ = Φ(x)`` with velocity ``J(x) ẋ_vel``, the force
``w`` that the impedance returns is added to the admittance inputs as ``Jᵀ w`` (virtual work).
Ports name the admittances they read by the names given to :meth:`ModularSystem.add_admittance`
and are resolved when the system is built; unknown names, wrong component kinds and size
mismatches raise ``ValueError`` there, never during a step.

Motion layouts (the ``layout`` an impedance declares as ``motion``):

* ``"coordinates"``: ``[positions(m), velocities(m)]``, force of size m
  (:class:`Coordinates`, :class:`BodyPoint`, :class:`ArmPoint`, :class:`FixedPoint`,
  :class:`Relative`);
* ``"frames"``: per frame ``[p(3), q(4), v(3), ω(3)]`` (13 numbers), wrench ``[f(3), τ(3)]``
  about the frame origin, world axes (:class:`BodyFrame`, :class:`FixedFrame`);

:class:`Stack` concatenates ports of one layout (motions stacked, the force split).
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from ._vec import rotate

__all__ = ["Port", "Coordinates", "BodyPoint", "BodyFrame", "ArmPoint", "FixedPoint",
           "FixedFrame", "Relative", "Stack"]

# resolve(name, who) -> (component, state view, force view); raises ValueError naming the name
Resolver = Callable[[str, str], tuple]


class Port:
    """Base of the Φ/Ψ maps. ``bind(resolve, who)`` returns a bound port with ``n_motion``,
    ``n_force``, ``layout``, ``sources`` and the hot-path methods ``motion(out)`` and
    ``apply(w)``, reading the stage state and adding to the admittance inputs in place."""

    def bind(self, resolve: Resolver, who: str) -> "_Bound":
        raise AttributeError(f"{type(self).__name__} does not define bind()")


class _Bound:
    n_motion: int
    n_force: int
    layout: str
    sources: tuple

    def motion(self, out: np.ndarray) -> None:
        raise AttributeError

    def apply(self, w: np.ndarray) -> None:
        raise AttributeError


def _indices(indices, m: int, who: str, name: str) -> np.ndarray | None:
    if indices is None:
        return None
    idx = np.atleast_1d(np.asarray(indices))
    if idx.ndim != 1 or idx.size == 0 or idx.dtype.kind not in "iu":
        raise ValueError(f"{who}: indices of {name!r} must be a non-empty list of integers, "
                         f"got {indices!r}")
    bad = [int(i) for i in idx if not 0 <= int(i) < m]
    if bad:
        raise ValueError(f"{who}: indices {bad} out of range for {name!r}, which has {m} "
                         f"coordinates")
    if len(set(idx.tolist())) != idx.size:
        raise ValueError(f"{who}: repeated indices {idx.tolist()} for {name!r}")
    return idx.astype(np.intp)


class Coordinates(Port):
    """The generalised coordinates of an admittance.

    The generalised coordinates of an admittance of kind ``"coordinates"`` (a point mass (7),
    an arm (8)): motion ``[q[idx], q̇[idx]]``, force added to ``u[idx]`` (Φ = selection, Ψ = its
    transpose). ``indices=None`` takes all of them.

    Parameters
    ----------
    name : str
        The admittance's name.
    indices : sequence of int, int or None
        The coordinates to read; None: all of them.
    """

    def __init__(self, name: str, indices: Sequence[int] | int | None = None):
        self.name, self.indices = name, indices

    def bind(self, resolve, who):
        comp, x, u = resolve(self.name, who)
        if comp.kind != "coordinates":
            raise ValueError(f"{who}: Coordinates({self.name!r}) needs an admittance with "
                             f"generalised coordinates; {self.name!r} is a "
                             f"{type(comp).__name__} (use BodyPoint/BodyFrame)")
        m = comp.n_force
        idx = _indices(self.indices, m, who, self.name)
        return _BoundCoordinates(x, u, m, idx, (self.name,))


class _BoundCoordinates(_Bound):
    layout = "coordinates"

    def __init__(self, x, u, m, idx, sources):
        self.sources = sources
        self.pos, self.vel, self.u = x[:m], x[m:2 * m], u
        self.idx = idx
        k = m if idx is None else idx.size
        self.n_motion, self.n_force, self.k = 2 * k, k, k

    def motion(self, out):
        k = self.k
        if self.idx is None:
            out[:k] = self.pos
            out[k:] = self.vel
        else:
            out[:k] = self.pos[self.idx]
            out[k:] = self.vel[self.idx]

    def apply(self, w):
        if self.idx is None:
            self.u += w
        else:
            self.u[self.idx] += w


def _rigid(comp, name, who, port):
    if comp.kind != "rigid":
        raise ValueError(f"{who}: {port}({name!r}) needs a rigid body; {name!r} is a "
                         f"{type(comp).__name__}")


def _vec3(value, who, what) -> np.ndarray:
    a = np.asarray(value, dtype=float)
    if a.shape != (3,) or not np.all(np.isfinite(a)):
        raise ValueError(f"{who}: {what} must be a finite 3-vector, got {value!r}")
    return a


class BodyPoint(Port):
    """A point of a rigid body.

    A point of a rigid body (25)/(26): motion ``[p_c + r, v_c + ω × r]``, a force f at the
    point enters the body as ``[f, r × f]``. ``offset`` r is fixed in the body (``frame="body"``)
    or in the world (``frame="world"``: a point that stays at a fixed world offset from the
    centre, e.g. the lowest point a_z = [0, 0, −R] of a sphere, Sec. IV-A).

    Parameters
    ----------
    name : str
        The rigid body's name.
    offset : array_like
        The offset r of the point from the centre of mass [m], (3,).
    frame : str
        ``"body"`` (r fixed in the body) or ``"world"`` (r fixed in world axes).
    """

    def __init__(self, name: str, offset=(0.0, 0.0, 0.0), frame: str = "body"):
        self.name, self.offset, self.frame = name, offset, frame

    def bind(self, resolve, who):
        if self.frame not in ("body", "world"):
            raise ValueError(f"{who}: frame must be 'body' or 'world', got {self.frame!r}")
        off = _vec3(self.offset, who, "offset")
        comp, x, u = resolve(self.name, who)
        _rigid(comp, self.name, who, "BodyPoint")
        return _BoundBodyPoint(x, u, off, self.frame == "body", (self.name,))


class _BoundBodyPoint(_Bound):
    layout = "coordinates"
    n_motion, n_force = 6, 3

    def __init__(self, x, u, off, body, sources):
        self.x, self.u, self.sources = x, u, sources
        self.off = (float(off[0]), float(off[1]), float(off[2]))
        self.body = body
        self.r = self.off

    def motion(self, out):
        p0, p1, p2, v0, v1, v2, q0, q1, q2, q3, wx, wy, wz = self.x.tolist()
        r = rotate((q0, q1, q2, q3), self.off) if self.body else self.off
        self.r = r
        out[0] = p0 + r[0]
        out[1] = p1 + r[1]
        out[2] = p2 + r[2]
        out[3] = v0 + wy * r[2] - wz * r[1]
        out[4] = v1 + wz * r[0] - wx * r[2]
        out[5] = v2 + wx * r[1] - wy * r[0]

    def apply(self, w):
        r = self.r  # from motion() of the same evaluation
        fx, fy, fz = w.tolist()
        self.u += (fx, fy, fz, r[1] * fz - r[2] * fy, r[2] * fx - r[0] * fz,
                   r[0] * fy - r[1] * fx)


class BodyFrame(Port):
    """A frame fixed in a rigid body.

    A frame fixed in a rigid body at body-frame ``offset``, with the body's attitude:
    motion ``[p_c + r, q, v_c + ω × r, ω]`` (13), a wrench ``[f, τ]`` at the frame origin enters
    the body as ``[f, τ + r × f]``. Used by the penalty joints of Sec. IV-C (x_iB, x_iT).

    Parameters
    ----------
    name : str
        The rigid body's name.
    offset : array_like
        The frame origin r from the centre of mass in body axes [m], (3,).
    """

    def __init__(self, name: str, offset=(0.0, 0.0, 0.0)):
        self.name, self.offset = name, offset

    def bind(self, resolve, who):
        off = _vec3(self.offset, who, "offset")
        comp, x, u = resolve(self.name, who)
        _rigid(comp, self.name, who, "BodyFrame")
        shared = getattr(resolve, "frames", None)     # one bound frame per (body, offset)
        key = (self.name, tuple(off.tolist()))
        if shared is not None and key in shared:
            return shared[key]
        bound = _BoundBodyFrame(x, u, off, (self.name,), getattr(resolve, "stamp", None))
        if shared is not None:
            shared[key] = bound
        return bound


class _BoundBodyFrame(_Bound):
    layout = "frames"
    n_motion, n_force = 13, 6

    def __init__(self, x, u, off, sources, stamp=None):
        self.x, self.u, self.sources = x, u, sources
        self.off = (float(off[0]), float(off[1]), float(off[2]))
        self.r = self.off
        # stamp: [count of stage-state evaluations] of the system, or None (no caching)
        self._stamp, self._seen, self._values = stamp, -1, ()

    def values(self) -> tuple:
        """The frame ``[p, q, v, ω]`` as a tuple of 13 floats (remembers r for :meth:`add`);
        computed once per evaluation of the stage state when several ports share the frame."""
        stamp = self._stamp
        if stamp is not None:
            if stamp[0] == self._seen:
                return self._values
            self._seen = stamp[0]
        p0, p1, p2, v0, v1, v2, q0, q1, q2, q3, wx, wy, wz = self.x.tolist()
        r0, r1, r2 = rotate((q0, q1, q2, q3), self.off)
        self.r = (r0, r1, r2)
        self._values = (p0 + r0, p1 + r1, p2 + r2, q0, q1, q2, q3,
                        v0 + wy * r2 - wz * r1, v1 + wz * r0 - wx * r2,
                        v2 + wx * r1 - wy * r0, wx, wy, wz)
        return self._values

    def motion(self, out):
        out[:] = self.values()

    def add(self, fx, fy, fz, tx, ty, tz) -> None:
        """Add the wrench (at the frame origin, from :meth:`values` of the same evaluation)."""
        r0, r1, r2 = self.r
        u = self.u
        u0, u1, u2, u3, u4, u5 = u.tolist()
        u[:] = (u0 + fx, u1 + fy, u2 + fz, u3 + (tx + r1 * fz - r2 * fy),
                u4 + (ty + r2 * fx - r0 * fz), u5 + (tz + r0 * fy - r1 * fx))

    def apply(self, w):
        self.add(*w.tolist())


class ArmPoint(Port):
    """The tip of an arm (8).

    The tip of an arm (8) through its Jacobian: motion ``[p(θ), J(θ) θ̇]``, a force f at the
    tip enters the joints as ``Jᵀ f`` (the Φ/Ψ pair of (13) for a kinematic chain). The arm
    must provide ``tip_kinematics(θ) -> (p, J)`` (PlanarTwoLink: end of link 1; UrdfArm: the
    end-effector frame of its UrdfDynamics).

    Parameters
    ----------
    name : str
        The arm's name (an admittance with ``tip_kinematics``).
    """

    def __init__(self, name: str):
        self.name = name

    def bind(self, resolve, who):
        comp, x, u = resolve(self.name, who)
        if comp.kind != "coordinates" or not hasattr(comp, "tip_kinematics"):
            raise ValueError(f"{who}: ArmPoint({self.name!r}) needs an arm with "
                             f"tip_kinematics(); {self.name!r} is a {type(comp).__name__}")
        return _BoundArmPoint(comp, x, u, (self.name,))


class _BoundArmPoint(_Bound):
    layout = "coordinates"
    n_motion, n_force = 6, 3

    def __init__(self, comp, x, u, sources):
        n = comp.n_force
        self.kin, self.q, self.qd, self.u, self.sources = comp.tip_kinematics, x[:n], x[n:], u, \
            sources
        self.J = np.zeros((3, n))

    def motion(self, out):
        p, J = self.kin(self.q)
        self.J = J
        out[:3] = p
        np.dot(J, self.qd, out=out[3:])

    def apply(self, w):
        self.u += self.J.T @ w


class FixedPoint(Port):
    """A point fixed in the world: motion ``[position, 0]``; the force on it is discarded.

    Parameters
    ----------
    position : array_like
        The point's world position [m], (m,) (usually (3,)).
    """

    def __init__(self, position=(0.0, 0.0, 0.0)):
        self.position = position

    def bind(self, resolve, who):
        p = np.atleast_1d(np.asarray(self.position, dtype=float))
        if p.ndim != 1 or not np.all(np.isfinite(p)):
            raise ValueError(f"{who}: FixedPoint position must be a finite vector")
        m = np.concatenate([p, np.zeros_like(p)])
        return _BoundFixed(m, p.size, "coordinates")


class FixedFrame(Port):
    """A frame fixed in the world (the base of an arm).

    A frame fixed in the world (the base of an arm): motion ``[p, q, 0, 0]``; the wrench on
    it is discarded.

    Parameters
    ----------
    position : array_like
        The frame origin in the world [m], (3,).
    quaternion : array_like
        Its attitude ``[w, x, y, z]``, (4,), unit.
    """

    def __init__(self, position=(0.0, 0.0, 0.0), quaternion=(1.0, 0.0, 0.0, 0.0)):
        self.position, self.quaternion = position, quaternion

    def bind(self, resolve, who):
        p = _vec3(self.position, who, "position")
        q = np.asarray(self.quaternion, dtype=float)
        if q.shape != (4,) or not np.all(np.isfinite(q)) or not abs(q @ q - 1.0) < 1e-9:
            raise ValueError(f"{who}: quaternion must be a unit 4-vector [w, x, y, z], "
                             f"got {self.quaternion!r}")
        return _BoundFixed(np.concatenate([p, q, np.zeros(6)]), 6, "frames")


class _BoundFixed(_Bound):
    sources = ()

    def __init__(self, m, n_force, layout):
        self.m, self.n_motion, self.n_force, self.layout = m, m.size, n_force, layout
        self._values = tuple(float(v) for v in m)

    def motion(self, out):
        out[:] = self.m

    def apply(self, w):
        return None

    def values(self) -> tuple:
        return self._values

    def add(self, *w) -> None:
        return None


class Relative(Port):
    """The difference of two coordinate ports, ``a − b``.

    The difference of two coordinate ports, ``a − b`` (e.g. the displacement between two
    masses that a spring-damper reads, Sec. II-B); the force w goes to a as +w and to b as −w.

    Parameters
    ----------
    a : Port
        A coordinate port.
    b : Port
        A coordinate port of the same size.
    """

    def __init__(self, a: Port, b: Port):
        self.a, self.b = a, b

    def bind(self, resolve, who):
        a, b = self.a.bind(resolve, who), self.b.bind(resolve, who)
        for p, s in ((a, "a"), (b, "b")):
            if p.layout != "coordinates":
                raise ValueError(f"{who}: Relative needs coordinate ports; {s} is "
                                 f"{p.layout!r}")
        if a.n_motion != b.n_motion:
            raise ValueError(f"{who}: Relative of ports of different sizes: a has "
                             f"{a.n_force} coordinates, b has {b.n_force}")
        return _BoundRelative(a, b)


class _BoundRelative(_Bound):
    layout = "coordinates"

    def __init__(self, a, b):
        self.a, self.b = a, b
        self.n_motion, self.n_force = a.n_motion, a.n_force
        self.sources = a.sources + b.sources
        self._mb = np.zeros(b.n_motion)
        self._wb = np.zeros(b.n_force)

    def motion(self, out):
        self.a.motion(out)
        self.b.motion(self._mb)
        out -= self._mb

    def apply(self, w):
        self.a.apply(w)
        np.negative(w, out=self._wb)
        self.b.apply(self._wb)


class Stack(Port):
    """Several ports of one layout side by side.

    Several ports of one layout side by side: motion ``[x̂_1, x̂_2, …]``, force split in the
    same order (e.g. the two articulation frames a penalty joint reads, Sec. IV-C).

    Parameters
    ----------
    *ports : Port
        The ports, all of one layout.
    """

    def __init__(self, *ports: Port):
        self.ports = ports

    def bind(self, resolve, who):
        if not self.ports:
            raise ValueError(f"{who}: Stack needs at least one port")
        bound = [p.bind(resolve, who) for p in self.ports]
        layouts = {b.layout for b in bound}
        if len(layouts) != 1:
            raise ValueError(f"{who}: Stack of mixed layouts {sorted(layouts)}")
        return _BoundStack(bound)


class _BoundStack(_Bound):
    def __init__(self, bound):
        self.parts = bound
        self.layout = bound[0].layout
        self.n_motion = sum(b.n_motion for b in bound)
        self.n_force = sum(b.n_force for b in bound)
        self.sources = tuple(s for b in bound for s in b.sources)
        self._mviews, self._wslices = [], []
        i = j = 0
        for b in bound:
            self._mviews.append((b, slice(i, i + b.n_motion), slice(j, j + b.n_force)))
            i += b.n_motion
            j += b.n_force
        if all(hasattr(b, "values") for b in bound):
            # frames (BodyFrame, FixedFrame): one write of the stacked motion, one read of the
            # stacked wrench, the parts exchanging Python floats (the penalty-joint hot path)
            self._values = [b.values for b in bound]
            self._adds = [(b.add, fs.start, fs.stop) for b, _, fs in self._mviews]
            self.motion, self.apply = self._motion_values, self._apply_values

    def motion(self, out):
        for b, ms, _ in self._mviews:
            b.motion(out[ms])

    def apply(self, w):
        for b, _, fs in self._mviews:
            b.apply(w[fs])

    def _motion_values(self, out):
        v = ()
        for values in self._values:
            v += values()
        out[:] = v

    def _apply_values(self, w):
        w = w.tolist()
        for add, i, j in self._adds:
            add(*w[i:j])
