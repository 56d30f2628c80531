"""The component graph of the modular architecture (13): admittances, impedances and the ports
(Φ/Ψ maps) between them, checked once at build time.

::

    sys = ModularSystem()
    sys.add_admittance("sphere", RigidBody.solid_sphere(0.3, 0.2, gravity=(0, 0, -9.8)))
    sys.add_impedance("contact", PenaltyFrictionContact(K=1e5, B=10.0, mu=0.1),
                      BodyPoint("sphere", (0, 0, -0.2), frame="world"))
    model = sys.build()            # every wiring error is raised here, all of them at once
    x0 = model.initial_state(sphere=RigidBody.state(p=(0, 0, 0.202), v=(2, 0, 0)))

:meth:`ModularSystem.build` returns a :class:`CompiledSystem`: one flat state vector
``x = [x_1 … x_NA, y_1 … y_NI]`` (admittance states in the order added, then impedance states),
index views bound once into preallocated stage buffers, and ``derivative(x, t, τ)`` that runs
(13b)–(13g) with (22) without building any dict or array per call.

Build-time checks (``ValueError`` listing every problem, naming the components): duplicate or
unknown names, impedances without a port or connected twice, port/impedance size or layout
mismatches, and admittances whose force input nothing drives (unless added with
``unforced=True``).
"""

from __future__ import annotations

import math
from typing import Dict

import numpy as np

from .components import Admittance, Impedance
from .wiring import Port

__all__ = ["ModularSystem", "CompiledSystem"]


def _check_name(name, where: str) -> str:
    if not isinstance(name, str) or not name:
        raise ValueError(f"{where}: name must be a non-empty string, got {name!r}")
    return name


class ModularSystem:
    """A network of admittance and impedance components (Fig. 2); call :meth:`build` to use it."""

    def __init__(self):
        self._adm: Dict[str, Admittance] = {}
        self._unforced: Dict[str, bool] = {}
        self._imp: Dict[str, Impedance] = {}
        self._ports: Dict[str, list] = {}

    def add_admittance(self, name: str, component: Admittance, *,
                       unforced: bool = False) -> "ModularSystem":
        """Add an admittance ``ẋ = A(x, u)``. ``unforced=True`` allows no impedance to drive it."""
        _check_name(name, "add_admittance")
        if not isinstance(component, Admittance):
            raise ValueError(f"{name}: expected an Admittance, got {type(component).__name__}")
        if name in self._adm or name in self._imp:
            raise ValueError(f"{name}: a component with this name already exists")
        self._adm[name] = component
        self._unforced[name] = bool(unforced)
        return self

    def add_impedance(self, name: str, component: Impedance,
                      port: Port | None = None) -> "ModularSystem":
        """Add an impedance ``[w, ẏ] = I(x̂, y; τ)``, optionally connected to ``port`` now."""
        _check_name(name, "add_impedance")
        if not isinstance(component, Impedance):
            raise ValueError(f"{name}: expected an Impedance, got {type(component).__name__}")
        if name in self._adm or name in self._imp:
            raise ValueError(f"{name}: a component with this name already exists")
        self._imp[name] = component
        self._ports[name] = []
        if port is not None:
            self.connect(name, port)
        return self

    def connect(self, impedance: str, port: Port) -> "ModularSystem":
        """Feed impedance ``impedance`` the motion of ``port`` and its force back through it."""
        if not isinstance(port, Port):
            raise ValueError(f"{impedance}: expected a Port (Coordinates, BodyPoint, ...), "
                             f"got {type(port).__name__}")
        if impedance not in self._ports:
            raise ValueError(f"connect: unknown impedance {impedance!r} "
                             f"(known: {sorted(self._imp)})")
        self._ports[impedance].append(port)
        return self

    def build(self) -> "CompiledSystem":
        """Check the wiring and return the :class:`CompiledSystem`; raises ``ValueError``."""
        errors = []
        if not self._adm:
            errors.append("the system has no admittance component")
        layout = {}
        nx = 0
        for name, comp in self._adm.items():
            layout[name] = (slice(nx, nx + comp.n_state), comp.n_force)
            nx += comp.n_state
        nu = sum(c.n_force for c in self._adm.values())
        ny = sum(c.n_state for c in self._imp.values())
        n = nx + ny
        xs = np.zeros(n)
        xdot = np.zeros(n)
        u = np.zeros(nu)
        uviews, xviews = {}, {}
        j = 0
        for name, comp in self._adm.items():
            xviews[name] = xs[layout[name][0]]
            uviews[name] = u[j:j + comp.n_force]
            j += comp.n_force

        def resolve(name, who):
            if name not in self._adm:
                hint = " (it is an impedance)" if name in self._imp else ""
                raise ValueError(f"{who}: unknown admittance {name!r}{hint}; "
                                 f"known: {sorted(self._adm)}")
            return self._adm[name], xviews[name], uviews[name]

        # Ports that read the same body frame (a penalty joint and the actuator on its axis)
        # share one bound frame, evaluated once per derivative call: ``stamp`` counts the
        # evaluations of the stage state (bumped wherever the stage buffer is rewritten).
        stamp = [0]
        resolve.frames = {}
        resolve.stamp = stamp

        driven = set()
        evals = []
        iy = nx
        yslices = {}
        for name, imp in self._imp.items():
            ports = self._ports[name]
            ys = slice(iy, iy + imp.n_state)
            yslices[name] = ys
            iy += imp.n_state
            if not ports:
                errors.append(f"{name}: impedance input is not connected to any port")
                continue
            if len(ports) > 1:
                errors.append(f"{name}: impedance input connected {len(ports)} times "
                              f"(one port per impedance; use Stack or Relative to combine)")
                continue
            try:
                bp = ports[0].bind(resolve, name)
            except ValueError as exc:
                errors.append(str(exc))
                continue
            if imp.n_in is not None:
                if bp.layout != imp.motion:
                    errors.append(f"{name}: {type(imp).__name__} reads a {imp.motion!r} "
                                  f"motion but its port gives {bp.layout!r}")
                    continue
                if bp.n_motion != imp.n_in:
                    errors.append(f"{name}: size mismatch: {type(imp).__name__} takes a motion "
                                  f"input of size {imp.n_in}, its port gives {bp.n_motion}")
                    continue
            if bp.n_force != imp.n_out:
                errors.append(f"{name}: size mismatch: {type(imp).__name__} outputs a force "
                              f"of size {imp.n_out}, its port takes {bp.n_force}")
                continue
            driven.update(bp.sources)
            xin = np.zeros(bp.n_motion)
            w = np.zeros(imp.n_out)
            evals.append((name, imp, bp, xin, xs[ys], w, xdot[ys]))
        for name in self._adm:
            if name not in driven and not self._unforced[name]:
                errors.append(f"{name}: admittance force input is not connected to any "
                              f"impedance (add one, or add_admittance(..., unforced=True))")
        if errors:
            raise ValueError("inconsistent wiring:\n  " + "\n  ".join(errors))
        adms = [(name, comp, xviews[name], uviews[name], xdot[layout[name][0]])
                for name, comp in self._adm.items()]
        slices = {name: layout[name][0] for name in self._adm}
        slices.update(yslices)
        return CompiledSystem(adms, evals, slices, dict(self._imp), xs, xdot, u, stamp)


class CompiledSystem:
    """A checked, flattened system: the function F(x, t; τ) of (21) over all components.

    ``n_state``; ``slice(name)``; ``initial_state(**states)``; ``derivative(x, t, tau)``;
    ``project(x)`` (quaternions back to unit length); ``forces(x, t, tau)`` and ``energy(x)``
    for post-processing. Not thread-safe (it owns its stage buffers).

    Built by :meth:`ModularSystem.build`, which checks the wiring; not meant to be constructed
    directly.

    Parameters
    ----------
    adms : list of tuple
        Per admittance ``(name, component, state view, input view, derivative view)``.
    evals : list of tuple
        Per impedance ``(name, component, bound port, input buffer, state view, output buffer,
        derivative view)``.
    slices : dict
        Component name -> slice of its state in the flat state vector.
    imps : dict
        Impedance name -> component.
    xs : ndarray
        The stage state buffer, shape (n_state,), that the views above look into.
    xdot : ndarray
        The derivative buffer, shape (n_state,).
    u : ndarray
        The admittance input buffer (all force inputs side by side).
    stamp : list of int
        The one-element evaluation counter shared with the bound frames.
    """

    def __init__(self, adms, evals, slices, imps, xs, xdot, u, stamp):
        self._stamp = stamp       # shared with the bound frames (see ModularSystem.build)
        self._adms = adms
        self._evals = evals
        self._slices = slices
        self._imps = imps
        self._xs, self._xdot, self._u = xs, xdot, u
        self.n_state = xs.size
        self._hot_imp = [(imp.evaluate, bp.motion, bp.apply, xin, y, w, yd)
                         for (_, imp, bp, xin, y, w, yd) in evals]
        self._hot_adm = [(comp.derivative, xv, uv, xd) for (_, comp, xv, uv, xd) in adms]
        self._projectors = [(comp.project, slices[name]) for (name, comp, _, _, _) in adms
                            if type(comp).project is not Admittance.project]
        self.names = list(slices)
        # workspace of the integrators (integrators.py)
        self.ws = np.zeros((6, self.n_state))

    # -- layout ----------------------------------------------------------------------------
    def slice(self, name: str) -> slice:
        """Where component ``name``'s state lives in the flat state vector."""
        if name not in self._slices:
            raise ValueError(f"name: unknown component {name!r}; known: {self.names}")
        return self._slices[name]

    def initial_state(self, **states) -> np.ndarray:
        """Flat x0 from per-component states (impedances default to their ``initial_state``)."""
        x = np.zeros(self.n_state)
        for name, imp in self._imps.items():
            x[self._slices[name]] = imp.initial_state()
        for name, value in states.items():
            s = self.slice(name)
            v = np.asarray(value, dtype=float).ravel()
            if v.size != s.stop - s.start:
                raise ValueError(f"{name}: initial state has {v.size} entries, the component "
                                 f"has {s.stop - s.start}")
            if not np.all(np.isfinite(v)):
                raise ValueError(f"{name}: initial state must be finite")
            x[s] = v
        missing = [n for (n, *_rest) in self._adms if n not in states]
        if missing:
            raise ValueError(f"initial_state: no state given for admittance(s) {missing}")
        self.project(x)
        return x

    # -- the hot path ------------------------------------------------------------------------
    def derivative(self, x: np.ndarray, t: float, tau: float) -> np.ndarray:
        """F(x, t; τ) of (21b): (13b)–(13g) with (22). Returns an internal buffer (copy it).

        ``tau`` (τ of (19)/(22), the stage's step size) must be finite and > 0: the friction
        elements divide by B + τK, which is 0 for B = 0 at τ = 0.
        """
        if not 0.0 < tau < math.inf:   # one float compare per call (NaN fails it too)
            raise ValueError(f"tau: the timestep argument τ of (19)/(22) must be a finite "
                             f"step size > 0, got {tau!r}")
        xs = self._xs
        if x is not xs:
            try:
                xs[:] = x
            except (ValueError, TypeError):
                raise ValueError(f"x: expected the system state of {self.n_state} numbers, got "
                                 f"shape {np.shape(x)}") from None
        self._stamp[0] += 1
        self._u.fill(0.0)
        for evaluate, motion, apply, xin, y, w, yd in self._hot_imp:
            motion(xin)
            evaluate(xin, y, t, tau, w, yd)
            apply(w)
        for deriv, xv, uv, xd in self._hot_adm:
            deriv(xv, uv, t, xd)
        return self._xdot

    def project(self, x: np.ndarray) -> None:
        """Project the admittance states of ``x`` onto their manifolds (unit quaternions)."""
        for proj, s in self._projectors:
            proj(x[s])

    # -- post-processing ---------------------------------------------------------------------
    def forces(self, x: np.ndarray, t: float, tau: float) -> Dict[str, np.ndarray]:
        """Each impedance's output w at state x (copies), e.g. for plots."""
        self.derivative(x, t, tau)
        return {name: w.copy() for (name, _, _, _, _, w, _) in self._evals}

    def impedance_input(self, x: np.ndarray, name: str) -> np.ndarray:
        """The motion input x̂ that impedance ``name`` sees at state x (a copy)."""
        self._xs[:] = x
        self._stamp[0] += 1
        for (n, _, bp, xin, _, _, _) in self._evals:
            if n == name:
                bp.motion(xin)
                return xin.copy()
        raise ValueError(f"name: unknown impedance {name!r}")

    def energy(self, x: np.ndarray) -> float:
        """Kinetic + gravitational energy of the admittances plus the impedances' elastic energy."""
        self._xs[:] = x
        self._stamp[0] += 1
        e = 0.0
        for (_, comp, xv, _, _) in self._adms:
            e += comp.energy(xv)
        for (_, imp, bp, xin, y, _, _) in self._evals:
            bp.motion(xin)
            e += imp.energy(xin, y)
        return e
