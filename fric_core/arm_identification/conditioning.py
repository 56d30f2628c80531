"""The identification design's condition number: one figure for ``fric excite`` and
``fric identify`` (issue 24 item 4).

The *identification design* of an arm is the regressor of the asymmetric friction law with the
rigid body: per joint and sample, the base-parameter rigid-body columns ``Y_b(q, q̇, q̈)``
(:func:`~.regressor.base_parameters`, the rotor inertias ``q̈_j`` merged in where motion cannot
separate them; with ``dynamics="urdf"`` only the rotor inertias) beside paper 003's friction
columns ``Cp, bp, Cn, bn`` (:func:`~.regressor.friction_columns`), the rows inside the Δv band left
out. Each column is scaled to unit norm (the equilibration that makes the figure independent of
units and of the size of each parameter); its condition number ``σ_max/σ_min`` bounds how much
relative error in the efforts is amplified in the parameters, ``‖δθ‖/‖θ‖ ≤ cond · ‖δτ‖/‖τ‖``.

``fric excite`` minimises this figure over its trajectories (:mod:`.excitation`) and reports it;
``fric identify`` computes it on the recorded motion (:func:`~.fit.fit_arm_friction`'s
``design``) and reports it beside the conditioning of the law it fitted, so the two numbers are
the same quantity and can be compared.

A direction of the rigid-body parameters that *no* motion of the joints determines (e.g. the mass
a vertical prismatic lift carries: its weight is a constant force, indistinguishable from an
asymmetry of the friction levels) is not a property of the trajectory: :func:`held_columns` finds
it (the equilibrated normal matrix's eigenvalues below :data:`UNDETERMINED_TOL` of the largest) and
names the rigid-body parameter weighing most in it; the fit holds that parameter at the URDF's
value and the figure is taken over the other parameters.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple, Sequence

import numpy as np

from .regressor import FRICTION_PARAMS, base_parameters, friction_columns, rigid_body_regressor

__all__ = ["DesignConditioning", "Design", "conditioning", "held_columns",
           "design_normal_matrix", "UNDETERMINED_TOL", "WEAKEST_SHARE", "DESIGN_SAMPLES"]

#: An eigenvalue of the column-equilibrated normal matrix below this fraction of the largest is
#: a direction the data leave exactly undetermined (σ_min/σ_max below 1e-5: rounding level for a
#: normal matrix accumulated in float64).
UNDETERMINED_TOL = 1e-10
#: At most this many samples (evenly spaced) give the figure of a sampled motion where it is
#: built from samples (``fric excite``'s written trajectory, ``fric identify``'s gear law): the
#: Pinocchio regressor costs ~27 µs per sample of a 7-joint arm; on a band-limited motion 2000
#: samples give the figure of the whole to well under 1 %.
DESIGN_SAMPLES = 2000
#: The least-determined direction is described by the parameters holding at least this share
#: of its squared norm.
WEAKEST_SHARE = 0.05


@dataclass(frozen=True)
class DesignConditioning:
    """The conditioning of a design (:func:`conditioning`).

    ``cond``: ``σ_max/σ_min`` of the column-equilibrated design over the determined parameters
    (inf when a column is zero or the design is singular beyond what holding the rigid body's
    undetermined directions removes);
    ``weakest``: ``((name, share), ...)``, the parameters that make up the least-determined
    direction (share of its squared norm, at least :data:`WEAKEST_SHARE`, largest first);
    ``held``: names of the rigid-body parameters no motion determines (left out of ``cond``).
    """

    cond: float
    weakest: tuple = ()
    held: tuple = ()

    def weakest_words(self, limit: int = 4) -> str:
        """The least-determined direction in words: ``"link3.Izz 62 %, joint_a1.Cp 20 %"``.

        Parameters
        ----------
        limit : int
            Most parameters named.

        Returns
        -------
        str
            Names with their shares, largest first.
        """
        return ", ".join(f"{name} {100 * share:.0f} %" for name, share in self.weakest[:limit])


class Design(NamedTuple):
    """An identification design as its normal matrix (:func:`design_normal_matrix`): ``H`` =
    ``AᵀA`` (p, p), ``names`` of the p parameters, ``rigid`` (p,) bool (the rigid-body columns),
    ``rows`` of A (joint samples outside the Δv band)."""

    H: np.ndarray
    names: list
    rigid: np.ndarray
    rows: int


def held_columns(H, rigid, tol: float = UNDETERMINED_TOL) -> list:
    """The rigid-body columns to hold so that the rest of a design is determined.

    One column per direction that the data leave exactly undetermined (eigenvalue of the
    column-equilibrated normal matrix at most ``tol`` of the largest): the rigid-body column
    weighing most in that direction (each once).

    Parameters
    ----------
    H : (p, p) array_like
        The design's normal matrix ``AᵀA``.
    rigid : (p,) array_like of bool
        True for the rigid-body columns (the ones a fit may hold at the URDF's values).
    tol : float
        Relative eigenvalue below which a direction is undetermined.

    Returns
    -------
    list of int
        Column indices to hold; empty when every direction is determined, or when an
        undetermined direction is not the rigid body's (then nothing can be held: the design is
        rank deficient).
    """
    H = np.asarray(H, dtype=float)
    d = np.diag(H)
    if H.size == 0 or np.any(~(d > 0)):
        return []
    w, U = _equilibrated_eigh(H)
    return _held(w, U, np.asarray(rigid, dtype=bool), tol)


def _equilibrated_eigh(H: np.ndarray):
    """Eigenvalues (ascending) and eigenvectors of ``H`` with unit diagonal (columns scaled)."""
    sd = np.sqrt(np.diag(H))
    return np.linalg.eigh(H / np.outer(sd, sd))


def _held(w, U, rigid, tol) -> list:
    held: list = []
    for k in np.flatnonzero(w <= tol * w[-1]):
        u = np.where(rigid, np.abs(U[:, k]), 0.0)
        u[held] = 0.0  # one parameter per direction
        if not u.max() > 0.1:  # the direction is not the rigid body's: nothing to hold
            return []
        held.append(int(np.argmax(u)))
    return held


def conditioning(H, names: Sequence[str], rigid=None,
                 tol: float = UNDETERMINED_TOL) -> DesignConditioning:
    """Condition number of the column-equilibrated design whose normal matrix is ``H``.

    Parameters
    ----------
    H : (p, p) array_like
        ``AᵀA`` of the design A (rows: joint samples outside the Δv band; any row weights already
        applied).
    names : sequence of str
        The p parameters' names (``"<body>.<param>"``, ``"<joint>.Cp"``, ...).
    rigid : (p,) array_like of bool, optional
        The rigid-body columns: an exactly undetermined direction of these is held
        (:func:`held_columns`) and left out of the figure. Default: none.
    tol : float
        Relative eigenvalue below which a direction is undetermined.

    Returns
    -------
    DesignConditioning
        ``σ_max/σ_min`` of the equilibrated design over the determined parameters, the
        least-determined direction's parameters and the held ones.
    """
    H = np.asarray(H, dtype=float)
    names = list(names)
    p = H.shape[0]
    rigid = np.zeros(p, dtype=bool) if rigid is None else np.asarray(rigid, dtype=bool)
    if p == 0:
        return DesignConditioning(math.inf)
    d = np.diag(H)
    bad = np.flatnonzero(~(d > 1e-24 * max(float(np.max(d)), 1e-300)))
    if bad.size:  # a zero column (e.g. a joint that never moves one way)
        return DesignConditioning(math.inf, tuple((names[i], 1.0 / bad.size) for i in bad))
    w, U = _equilibrated_eigh(H)
    keep = np.arange(p)
    held = _held(w, U, rigid, tol) if w[0] <= tol * w[-1] else []
    if held:
        keep = np.setdiff1d(keep, held)
        w, U = _equilibrated_eigh(H[np.ix_(keep, keep)])
    u2 = U[:, 0] ** 2
    order = np.argsort(-u2)
    weakest = tuple((names[keep[i]], float(u2[i])) for i in order if u2[i] >= WEAKEST_SHARE)
    # (σ² ratios resolved down to 1e-14: conds well below 1e7, the fit's refusal, are exact)
    cond = float(math.sqrt(w[-1] / w[0])) if w[0] > 1e-14 * w[-1] else math.inf
    return DesignConditioning(cond, weakest, tuple(names[i] for i in held))


def design_normal_matrix(dyn, q, v, a, dv: float = 0.01, base=None, rigid_body: bool = True,
                         armature: bool = True):
    """The identification design's normal matrix on a motion (module docstring).

    Parameters
    ----------
    dyn : fric_core.transmission.urdf_dynamics.UrdfDynamics
        The arm.
    q, v, a : (N, n) array_like
        Joint positions, velocities, accelerations.
    dv : float
        Half width Δv of the band around zero velocity left out
        (:func:`~.regressor.friction_columns`).
    base : BaseParameters, optional
        The arm's base set (default: :func:`~.regressor.base_parameters` of ``dyn`` with
        ``armature``).
    rigid_body : bool
        Include the base rigid-body columns (``dynamics="identify"``); False: the friction (and
        rotor-inertia) columns only (``dynamics="urdf"``).
    armature : bool
        Include the rotor inertias (one column ``q̈_j`` on joint j's rows, merged into the base
        set where a link inertia has the same column).

    Returns
    -------
    Design
        ``H = AᵀA`` over the rows outside the Δv band, the columns' parameter names, which are
        the rigid body's (with the merged rotor inertias), the number of rows.
    """
    F, keep = friction_columns(v, dv)
    n = F.shape[1] // len(FRICTION_PARAMS)
    joints = list(dyn.joint_names)
    fnames = [f"{joints[j]}.{k}" for j in range(n) for k in FRICTION_PARAMS]
    if rigid_body:
        base = base_parameters(dyn, armature=armature) if base is None else base
        Y = rigid_body_regressor(dyn, q, v, a, armature=bool(getattr(base, "armature", False)))
        A = np.hstack([base.reduce(Y), F])
        names = list(base.names) + fnames
        rigid = np.r_[np.ones(len(base.names), bool), np.zeros(F.shape[1], bool)]
    elif armature:
        acc = np.atleast_2d(np.asarray(a, dtype=float))
        N = acc.shape[0]
        rotor = np.zeros((N, n, n))
        rotor[:, np.arange(n), np.arange(n)] = acc
        A = np.hstack([F, rotor.reshape(N * n, n)])
        names = fnames + [f"{j}.armature" for j in joints]
        rigid = np.zeros(A.shape[1], bool)
    else:
        A, names, rigid = F, fnames, np.zeros(F.shape[1], bool)
    A = A[keep]
    return Design(A.T @ A, names, rigid, int(A.shape[0]))
