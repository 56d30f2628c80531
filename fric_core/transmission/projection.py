"""The axis-aligned projection ``axproj`` of paper 004 (Kikuuwe 2022), eqs. (55), (59), (67)–(73).

For n joints with transmissions, one implicit-Euler step (68) needs::

    y = axproj(v, A, ϕ, P) = {y ∈ Rⁿ | y ∈ A Φ(sgn(v − y), ϕ, P)}            (67)
    Φ(s, ϕ, P) = [s] |λ(ϕ, P[s])|,   λ(ϕ, P) = {λ | λ − P|λ| = ϕ}          (59), (55)

(A = h M̂⁻¹ symmetric positive definite, P of (52), v = v*). The new velocity is ``v − y``; a
joint whose component of ``v − y`` is exactly 0 is in static friction. For σ_max(P) < 1 (57)
λ is unique (Lemma 3).

Solvers
-------
* :func:`axproj` — the default, a **semismooth Newton (active-set) method** on the friction
  force ``f = Φ(s) = [s]|λ|``. Because ``P[s]|λ| = P f``, eq. (55) becomes the explicit
  ``λ = ϕ + P f`` and (67) becomes, joint by joint, ``f_i ∈ |ϕ_i + (P f)_i| sgn(w_i)`` with
  ``w = v − A f``: a friction problem whose bounds depend linearly on the unknown. Written as the
  piecewise-affine equation ``G(f) = f − clip(f + r∘w, −|λ|, |λ|) = 0`` (r_i = 1/A_ii), every
  Newton step fixes each joint's piece — stuck (row ``A_i f = v_i``) or sliding in direction d_i
  with ``sgn λ_i = σ_i`` (row ``f_i − d_iσ_i P_i f = d_iσ_i ϕ_i``) — and solves one n×n linear
  system. Once the pieces are right, the solution is exact up to round-off. Full steps are
  taken until a piece recurs (cycling); then a backtracking line search on ‖G‖ globalises it,
  and projected Gauss–Seidel sweeps (each joint's exact 1-D
  problem (70) with the others frozen) take over if Newton stalls. Warm-started from the
  previous timestep (:class:`AxprojSolver`), it usually needs one or two solves.
* The diagonal case (70) — A and P diagonal — is solved exactly in closed form.
* :func:`axproj_projection` — the paper's reference: the VI (71)–(73) on the box [−1, 1]ⁿ by the
  projection iteration ``s := proj(Bⁿ, s − c F(s))``, ``F(s) = A Φ(s, ϕ, P) − v``, with λ from the
  fixed-point iteration of Remark 3 (:func:`lambda_fixed_point`).

:func:`axproj_residual` measures how far a candidate y is from satisfying (67), in velocity units,
without trusting any solver.
"""

from __future__ import annotations

import math
import warnings
from typing import NamedTuple

import numpy as np

from .._checks import real_array
from .dai import _TIE, IllPosedWarning

try:  # numpy's own LAPACK gufunc behind np.linalg.solve, without its wrapper (same result)
    from numpy.linalg import _umath_linalg

    def _solve1(K: np.ndarray, rhs: np.ndarray) -> np.ndarray:
        return _umath_linalg.solve1(K, rhs, signature="dd->d")

    def _inv(M: np.ndarray) -> np.ndarray:
        return _umath_linalg.inv(M, signature="d->d")
except (ImportError, AttributeError):  # pragma: no cover - other numpy layouts
    def _solve1(K: np.ndarray, rhs: np.ndarray) -> np.ndarray:
        try:
            return np.linalg.solve(K, rhs)
        except np.linalg.LinAlgError:
            return np.full(K.shape[0], np.nan)

    def _inv(M: np.ndarray) -> np.ndarray:
        try:
            return np.linalg.inv(M)
        except np.linalg.LinAlgError:
            return np.full(M.shape, np.nan)

_max = np.maximum.reduce  # a reduction without ndarray.max's Python wrapper

__all__ = ["axproj", "axproj_result", "axproj_diagonal", "axproj_projection", "axproj_residual",
           "lambda_fixed_point", "friction_phi_n", "sigma_max", "AxprojResult", "AxprojSolver",
           "IllPosedError"]


class IllPosedError(ValueError):
    """axproj found no solution: the problem is ill-posed (σ_max(P) ≥ 1, eq. 57) or degenerate."""


class AxprojResult(NamedTuple):
    y: np.ndarray  #: axproj(v, A, ϕ, P), eq. (67)
    friction: np.ndarray  #: f = Φ(s, ϕ, P) = [s]|λ| with y = A f
    lam: np.ndarray  #: λ(ϕ, P[s]) = ϕ + P f, eq. (55)
    s: np.ndarray  #: the VI solution s ∈ [−1, 1]ⁿ of (71)–(73)
    stuck: np.ndarray  #: joints with (v − y)_i exactly 0 (static friction)
    iterations: int  #: Newton solves / projection steps
    converged: bool
    #: velocity-unit residual: Newton's natural-map residual max_i A_ii |G_i(f)|, the projection
    #: iteration's :func:`axproj_residual` measure
    residual: float
    method: str  #: "diagonal", "newton", "newton+gauss-seidel" or "projection"


# ----------------------------------------------------------------------------------------------
# checks and small pieces
# ----------------------------------------------------------------------------------------------
def _vec(name: str, x, n: int | None = None) -> np.ndarray:
    a = real_array(x, name, "a real vector")
    if a.ndim == 0 and n is None:
        a = a.reshape(1)
    if a.ndim != 1 or (n is not None and a.shape != (n,)) or a.size == 0:
        want = f"({n},)" if n is not None else "(n,)"
        raise ValueError(f"{name}: expected shape {want}, got {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name}: must be finite (NaN or inf at index "
                         f"{int(np.flatnonzero(~np.isfinite(a))[0])})")
    return a


def _mat(name: str, x, n: int) -> np.ndarray:
    try:
        a = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: expected a real matrix, got {x!r}") from None
    if n == 1 and a.ndim < 2:
        a = a.reshape(1, 1)
    if a.shape != (n, n):
        raise ValueError(f"{name}: expected shape ({n}, {n}), got {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name}: must be finite")
    return a


def _check(v, A, phi, P):
    v = _vec("v", v)
    n = v.size
    A = _mat("A", A, n)
    phi = _vec("phi", phi, n)
    P = _mat("P", P, n)
    d = np.diagonal(A)
    if np.any(d <= 0.0):
        raise ValueError(f"A: the diagonal must be > 0 (A = h M̂⁻¹ is positive definite), got "
                         f"A[{int(np.flatnonzero(d <= 0.0)[0])}, same] = {d[d <= 0.0][0]!r}")
    return v, A, phi, P


def sigma_max(P: np.ndarray) -> float:
    """Largest singular value of P; (57): σ_max(P) < 1 makes λ (55) unique (Lemma 3).

    Parameters
    ----------
    P : (n, n) array_like
        P of (52) (dimensionless); may be empty.

    Returns
    -------
    float
        σ_max(P), the spectral norm (0 for an empty P).
    """
    P = np.asarray(P, dtype=float)
    return float(np.linalg.norm(P, 2)) if P.size else 0.0


def _is_diagonal(X: np.ndarray) -> bool:
    n = X.shape[0]
    return n == 1 or not np.any(X.reshape(-1)[:-1].reshape(n - 1, n + 1)[:, 1:])


def lambda_fixed_point(phi: np.ndarray, P: np.ndarray, s: np.ndarray | None = None, *,
                       tol: float = 1e-14, max_iter: int = 100000) -> tuple[np.ndarray, int]:
    """λ(ϕ, P[s]) of (55) by the fixed-point iteration of Remark 3; returns ``(λ, iterations)``.

    The iteration is ``λ := ϕ + P[s]|λ|`` from ``λ := ϕ``. The map is a contraction with factor
    σ_max(P) when σ_max(P) < 1 (Lemma 3). Converged when ``‖Δλ‖∞ ≤ tol (‖ϕ‖∞ + ‖λ‖∞)``.

    Parameters
    ----------
    phi : (n,) array_like
        ϕ of (55), the load-dependent driving term per joint, N or N m.
    P : (n, n) array_like
        P of (52) (dimensionless); σ_max(P) < 1 (57) for a well-posed problem.
    s : (n,) array_like, optional
        The sign variable s ∈ [−1, 1]ⁿ; P[s] = P diag(s). None: P itself.
    tol : float, optional
        Relative tolerance of the stopping test.
    max_iter : int, optional
        Most iterations.

    Returns
    -------
    lam : (n,) ndarray
        λ, in ϕ's unit.
    iterations : int
        Iterations used.

    Raises
    ------
    IllPosedError
        When it does not converge in ``max_iter`` iterations (or diverges), naming σ_max(P).
    """
    phi = np.asarray(phi, dtype=float)
    Ps = np.asarray(P, dtype=float) if s is None else np.asarray(P, dtype=float) * s
    lam = phi.copy()
    base = float(np.max(np.abs(phi))) if phi.size else 0.0
    for k in range(1, max_iter + 1):
        new = phi + Ps @ np.abs(lam)
        step = float(np.max(np.abs(new - lam)))
        lam = new
        big = float(np.max(np.abs(lam)))
        if not big < 1e200:  # diverging (or NaN): stop before overflowing
            break
        if step <= tol * (base + big) or big == 0.0:
            return lam, k
    raise IllPosedError(f"P: the fixed-point iteration of Remark 3 did not converge in {max_iter} "
                        f"iterations (sigma_max(P[s]) = {sigma_max(Ps):.4g}; (57) needs < 1)")


def friction_phi_n(s: np.ndarray, phi: np.ndarray, P: np.ndarray, **kwargs) -> np.ndarray:
    """Eq. (59): ``Φ(s, ϕ, P) = [s] |λ(ϕ, P[s])|`` (λ by :func:`lambda_fixed_point`).

    Parameters
    ----------
    s : (n,) array_like
        The sign variable s ∈ [−1, 1]ⁿ.
    phi, P : array_like
        As for :func:`lambda_fixed_point`.
    **kwargs
        ``tol``, ``max_iter`` of :func:`lambda_fixed_point`.

    Returns
    -------
    (n,) ndarray
        Φ, the friction force per joint, in ϕ's unit.

    Raises
    ------
    IllPosedError
        When the fixed-point iteration does not converge.
    """
    s = np.asarray(s, dtype=float)
    lam, _ = lambda_fixed_point(phi, P, s, **kwargs)
    return s * np.abs(lam)


def _phi_bounds(phi: np.ndarray, rho: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per joint (Φ(−1), Φ(1)) of (34) with λ_s (35): ±inf where (31) is empty (|ρ| ≥ 1)."""
    a = np.abs(phi)
    sr = np.where(phi >= 0.0, rho, -rho)
    up, down = sr < 1.0, sr > -1.0
    hi = np.where(up, a / np.where(up, 1.0 - sr, 1.0), np.inf)
    lo = np.where(down, -a / np.where(down, 1.0 + sr, 1.0), -np.inf)
    zero = a == 0.0
    if zero.any():
        hi = np.where(zero, 0.0, hi)
        lo = np.where(zero, 0.0, lo)
    return lo, hi


def axproj_diagonal(v: np.ndarray, a: np.ndarray, phi: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Eq. (70): ``y_i = proj(a_i Φ(B, ϕ_i, p_i), v_i)`` for diagonal A = [a], P = [p].

    Uses λ_s (35) where |p_i| ≥ 1, so a joint with an infinite bound stops (y_i = v_i). For
    stuck joints y_i is v_i exactly (ties within 8 ulp of a bound stick, as in
    :meth:`~.dai.Transmission.step`). No input checks (the callers have made them).

    Parameters
    ----------
    v : (n,) array_like
        The velocity v = v* of (68) to be projected, m/s or rad/s per joint.
    a : (n,) ndarray
        Diagonal of A = h M̂⁻¹, > 0 (velocity per force).
    phi : (n,) array_like
        ϕ of (55), the load-dependent driving term per joint, N or N m.
    p : (n,) ndarray
        Diagonal of P (dimensionless).

    Returns
    -------
    (n,) ndarray
        y, in v's unit; the new velocity is ``v − y``.
    """
    lo, hi = _phi_bounds(phi, p)
    lo, hi = a * lo, a * hi
    tie = _TIE * np.abs(v)  # the tie band of the 1-DOF algorithm (44): marginal states stick
    return np.where((v >= lo - tie) & (v <= hi + tie), v, np.minimum(np.maximum(v, lo), hi))


# ----------------------------------------------------------------------------------------------
# residual of (67)
# ----------------------------------------------------------------------------------------------
def _joint_residuals(f, lam, w, a_diag):
    """Velocity-unit distance of each joint from ``f_i ∈ |λ_i| sgn(w_i)``: the cheaper of
    'stuck' (|w_i| plus the bound violation) and 'sliding with w' (force off the bound)."""
    b = np.abs(lam)
    stuck = np.abs(w) + a_diag * np.maximum(np.abs(f) - b, 0.0)
    slide = a_diag * np.abs(f - np.sign(w) * b)
    slide = np.where(w == 0.0, np.inf, slide)
    return np.minimum(stuck, slide)


def axproj_residual(y, v, A, phi, P) -> float:
    """How far ``y`` is from satisfying (67), in velocity units (0 for the exact solution).

    From y: ``f = A⁻¹ y`` (so y = A f), ``λ = ϕ + P f`` (eq. 55 with [s]|λ| = f), and then per
    joint the smaller of: ``|w_i| + A_ii max(|f_i| − |λ_i|, 0)`` (stuck: w = v − y = 0 and
    |s_i| ≤ 1) and ``A_ii |f_i − sgn(w_i)|λ_i||`` (sliding: s_i = sgn(w_i)); the maximum over
    joints.

    Parameters
    ----------
    y : (n,) array_like
        The candidate solution of (67), in v's unit.
    v, A, phi, P : array_like
        As for :func:`axproj`: shapes (n,), (n, n), (n,), (n, n).

    Returns
    -------
    float
        The residual, in v's unit.

    Raises
    ------
    ValueError
        For mis-shaped or non-finite inputs or a non-positive diagonal of A.
    """
    v, A, phi, P = _check(v, A, phi, P)
    y = _vec("y", y, v.size)
    f = np.linalg.solve(A, y)
    lam = phi + P @ f
    return float(np.max(_joint_residuals(f, lam, v - y, np.diagonal(A))))


# ----------------------------------------------------------------------------------------------
# Newton / active-set solver
# ----------------------------------------------------------------------------------------------
class _WarmStartedNewton:
    """The state shared by the warm-started semismooth Newton solvers of one size n
    (:class:`AxprojSolver`, :class:`~.coulomb_projection.CoulombAxproj`): the settings, the last
    solution ``f`` and its pieces ``_last`` (the next step's guess), and the buffers.

    Parameters
    ----------
    n : int
        Number of joints.
    tol : float
        Tolerance relative to the solver's velocity scale.
    max_iter : int
        Most Newton solves.
    sweeps : int
        Most Gauss–Seidel sweeps.
    """

    def __init__(self, n: int, *, tol: float = 1e-12, max_iter: int = 30, sweeps: int = 200):
        self.n = int(n)
        self.tol = float(tol)
        self.max_iter = int(max_iter)
        self.sweeps = int(sweeps)
        self._eye = np.eye(self.n)
        self.f = np.zeros(self.n)  # last solution (warm start)
        self.warm = False
        self._last = None  # the last solve's final evaluation (each solver's own): its pieces
        self._K = np.empty((self.n, self.n))  # the fast step's system matrix

    def reset(self) -> None:
        """Forget the warm start."""
        self.f[:] = 0.0
        self.warm = False
        self._last = None


def _backtrack(f: np.ndarray, step: np.ndarray, res: float, evaluate):
    """Backtracking line search on ‖G‖ along a Newton direction, for a Newton step that did not
    decrease the residual once the pieces cycle: the first of ``f + t step``, t = 1/2, 1/4, …
    above 1e-6, whose residual falls below ``(1 − 1e-4 t) res``.

    Parameters
    ----------
    f : (n,) ndarray
        The current iterate.
    step : (n,) ndarray
        The Newton direction (the full step's iterate minus ``f``).
    res : float
        The residual at ``f``.
    evaluate : callable
        ``evaluate(trial)``: the solver's evaluation at ``trial``, a tuple whose last item is the
        residual.

    Returns
    -------
    tuple or None
        ``(trial, evaluate(trial))`` of the accepted trial; None if none decreases enough.
    """
    t = 0.5
    while t > 1e-6:
        trial = f + t * step
        out = evaluate(trial)
        if out[-1] < (1.0 - 1e-4 * t) * res:
            return trial, out
        t *= 0.5
    return None


def _solve_pieces(K: np.ndarray, rhs: np.ndarray):
    """One Newton step of a piecewise-affine solver: the solution of ``K f = rhs`` (the system
    of the joints' current pieces), or None where K is singular or the solution not finite
    (the Newton loop then stops and Gauss–Seidel takes over)."""
    try:
        f = np.linalg.solve(K, rhs)
    except np.linalg.LinAlgError:
        return None
    return f if np.isfinite(f).all() else None


class AxprojSolver(_WarmStartedNewton):
    """Reusable axproj solver for one size n, warm-started from its last solution.

    ``solve(v, A, phi, P) -> AxprojResult``. ``tol`` is relative to the velocity scale
    ``max(‖v‖∞, max_i A_ii|λ_i|)``. Used by :class:`~.geared_arm.GearedArm` at every step.
    The last solve's pieces ``_last`` are (z, |λ|, λ) of its final evaluation.
    """

    def __init__(self, n: int, *, tol: float = 1e-12, max_iter: int = 30, sweeps: int = 200):
        if int(n) != n or n < 1:
            raise ValueError(f"n: expected a positive integer, got {n!r}")
        super().__init__(n, tol=tol, max_iter=max_iter, sweeps=sweeps)

    # one evaluation of the piecewise-affine map
    @staticmethod
    def _evaluate(f, v, A, phi, P, r, a_diag):
        lam = phi + P @ f
        w = v - A @ f
        b = np.abs(lam)
        z = f + r * w
        G = f - np.minimum(np.maximum(z, -b), b)
        return lam, w, z, b, float((np.abs(G) * a_diag).max())

    def _initial(self, v, A, phi, P, a_diag):
        if self.warm:
            return self.f.copy()
        # exact solution of the diagonal part (70): often the right pieces already
        y = axproj_diagonal(v, a_diag, phi, np.diagonal(P))
        f = y / a_diag
        return np.where(np.isfinite(f), f, 0.0)

    def solve(self, v: np.ndarray, A: np.ndarray, phi: np.ndarray, P: np.ndarray) -> AxprojResult:
        """Solve (67) for validated float arrays (no checks here; see :func:`axproj`)."""
        a_diag = np.diagonal(A)
        r = 1.0 / a_diag
        f = self._initial(v, A, phi, P, a_diag)
        lam, w, z, b, res = self._evaluate(f, v, A, phi, P, r, a_diag)
        scale = max(float(np.abs(v).max()), float((a_diag * b).max()), 1e-300)
        tol = self.tol * scale
        eye = self._eye
        method = "newton"
        it = 0
        seen: set = set()
        damped = False
        while res > tol and it < self.max_iter:
            it += 1
            stuck = np.abs(z) <= b
            c = np.where(stuck, 0.0, np.where(z > 0.0, 1.0, -1.0) * np.where(lam < 0.0, -1.0, 1.0))
            key = stuck.tobytes() + c.tobytes()
            if key in seen:
                damped = True  # a piece came back: cycling; globalise with the line search
            seen.add(key)
            K = np.where(stuck[:, None], A, eye - c[:, None] * P)
            rhs = np.where(stuck, v, c * phi)
            f_new = _solve_pieces(K, rhs)
            if f_new is None:
                break
            out = self._evaluate(f_new, v, A, phi, P, r, a_diag)
            if damped and out[4] > (1.0 - 1e-4) * res and out[4] > tol:
                best = _backtrack(f, f_new - f, res,
                                 lambda x: self._evaluate(x, v, A, phi, P, r, a_diag))
                if best is None:
                    break
                f_new, out = best
            f = f_new
            lam, w, z, b, res = out
        if res > tol:
            f, it2, res = self._gauss_seidel(f, v, A, phi, P, a_diag, tol)
            it += it2
            method = "newton+gauss-seidel"
            lam, w, z, b, res = self._evaluate(f, v, A, phi, P, r, a_diag)
        converged = res <= tol
        self._last = (z, b, lam)  # the final pieces: the next :meth:`solve_velocity`'s guess
        return self._finish(f, lam, w, v, A, a_diag, it, converged, res, method)

    def solve_velocity(self, v: np.ndarray, A: np.ndarray, phi: np.ndarray, P: np.ndarray,
                       PA: np.ndarray | None = None):
        """:meth:`solve` for a time-stepper: ``(w, f, λ, stuck, iterations, converged,
        residual)`` with ``w = v − y`` the new velocity (exactly 0 for stuck joints).

        The common case of a warm-started step is one linear solve: every joint keeps the
        piece (stuck, or sliding with its direction and sgn λ) it had at the end of the
        previous solve, the system of those pieces is solved once, and if the result meets the
        tolerance (the residual of :meth:`solve`, same scale) it is the answer — the same linear
        system :meth:`solve`'s last Newton step solves when the pieces are right, so the same
        solution to round-off. Otherwise (a piece changed, the first call, after
        :meth:`reset`) it is :meth:`solve` from the same warm start. No input checks (see
        :func:`axproj`).

        Parameters
        ----------
        v, A, phi, P : ndarray
            As for :func:`axproj`: shapes (n,), (n, n), (n,), (n, n), validated floats.
        PA : (2n, n) ndarray, optional
            P stacked on A (the caller's buffer), for one matrix-vector product instead of two.

        Returns
        -------
        w : (n,) ndarray
            The new velocity ``v − y``, exactly 0 for stuck joints.
        f, lam : (n,) ndarray
            The friction ``f`` (y = A f) and λ = ϕ + P f.
        stuck : (n,) ndarray of bool
            Joints in static friction.
        iterations : int
            Linear solves.
        converged : bool
            The tolerance was met.
        residual : float
            As :attr:`AxprojResult.residual`.
        """
        last = self._last
        if last is not None and self.warm:
            n = self.n
            z0, b0, lam0 = last
            stuck0 = np.abs(z0) <= b0
            # the pieces of solve(): c = sgn z · sgn λ on sliding joints (a guess only: the
            # result is accepted by its residual, so a λ of exactly 0 may guess either way)
            c = np.sign(z0)
            c *= np.sign(lam0)
            c[stuck0] = 0.0
            K = np.multiply(c[:, None], P, out=self._K)
            np.subtract(self._eye, K, out=K)
            np.copyto(K, A, where=stuck0[:, None])
            rhs = c * phi
            np.copyto(rhs, v, where=stuck0)
            with np.errstate(all="ignore"):  # a singular K gives NaN: solve() takes over
                f = _solve1(K, rhs)
            if PA is None:
                lam = phi + P @ f
                w = v - A @ f
            else:
                pa = PA @ f
                lam = phi + pa[:n]
                w = v - pa[n:]
            a_diag = A.diagonal()
            b = np.abs(lam)
            z = f + (1.0 / a_diag) * w
            G = f - np.minimum(np.maximum(z, -b), b)
            res = float(_max(np.abs(G) * a_diag))
            vmax = float(_max(np.abs(v)))
            # solve()'s test res <= tol · max(‖v‖∞, max A_ii |λ_i|), the second term only
            # when needed
            if res <= self.tol * vmax or res <= self.tol * max(
                    vmax, float(_max(a_diag * b)), 1e-300):
                vel_tol = max(res, self.tol * max(vmax, 1e-300)) * 10.0
                stuck = np.abs(w) <= vel_tol
                w[stuck] = 0.0
                self.f[:] = f
                self._last = (z, b, lam)
                return w, f, lam, stuck, 1, True, res
            extra = 1
        else:
            extra = 0
        r = self.solve(v, A, phi, P)
        w = v - r.y
        w[r.stuck] = 0.0
        return w, r.friction, r.lam, r.stuck, r.iterations + extra, r.converged, r.residual

    def _gauss_seidel(self, f, v, A, phi, P, a_diag, tol):
        """Projected Gauss–Seidel: each joint's exact 1-D problem (70) with the others frozen."""
        f = f.copy()
        pd = np.diagonal(P)
        res = math.inf
        for sweep in range(1, self.sweeps + 1):
            for i in range(self.n):
                vi = v[i] - A[i] @ f + a_diag[i] * f[i]
                ph = phi[i] + P[i] @ f - pd[i] * f[i]
                lo, hi = _phi_bounds(np.array([ph]), np.array([pd[i]]))
                yi = min(max(vi, a_diag[i] * lo[0]), a_diag[i] * hi[0])
                f[i] = yi / a_diag[i]
            lam = phi + P @ f
            w = v - A @ f
            res = float(np.max(_joint_residuals(f, lam, w, a_diag)))
            if res <= tol:
                return f, sweep, res
        return f, self.sweeps, res

    def _finish(self, f, lam, w, v, A, a_diag, it, converged, res, method):
        # joints whose velocity is zero up to round-off (10 × the solver tolerance relative to the
        # largest |v_i|) are stuck: make it exact (v − y = 0), so a held joint does not creep
        b = np.abs(lam)
        vel_tol = max(res, self.tol * max(float(np.abs(v).max()), 1e-300)) * 10.0
        stuck = np.abs(w) <= vel_tol
        y = A @ f
        y = np.where(stuck, v, y)
        s = np.clip(np.divide(f, b, out=np.sign(w), where=b > 0.0), -1.0, 1.0)
        self.f[:] = f
        self.warm = True
        return AxprojResult(y, f, lam, s, stuck, it, bool(converged), float(res), method)


def axproj_result(v, A, phi, P, *, tol: float = 1e-12, max_iter: int = 30,
                  on_ill_posed: str = "warn") -> AxprojResult:
    """:func:`axproj` with everything the solver knows (an :class:`AxprojResult`).

    Parameters
    ----------
    v, A, phi, P : array_like
        As for :func:`axproj`: shapes (n,), (n, n), (n,), (n, n).
    tol, max_iter, on_ill_posed
        As for :func:`axproj`.

    Returns
    -------
    AxprojResult
        y (in v's unit), the friction f = A⁻¹ y and λ (in ϕ's unit), s, the stuck joints, the
        iterations, convergence, the residual and the method used.

    Raises
    ------
    IllPosedError, ValueError
        As for :func:`axproj`.
    """
    v, A, phi, P = _check(v, A, phi, P)
    if on_ill_posed not in ("warn", "raise", "ignore"):
        raise ValueError(f"on_ill_posed: expected 'warn', 'raise' or 'ignore', got "
                         f"{on_ill_posed!r}")
    n = v.size
    if _is_diagonal(A) and _is_diagonal(P):
        a, p = np.diagonal(A), np.diagonal(P)
        if on_ill_posed != "ignore" and np.any(np.abs(p) >= 1.0):
            i = int(np.flatnonzero(np.abs(p) >= 1.0)[0])
            msg = (f"P: |P[{i}, {i}]| = {abs(p[i]):.6g} >= 1 (ill-posed, eq. 57); that joint uses "
                   "lambda_s (35): it stops where (31) has no solution")
            if on_ill_posed == "raise":
                raise IllPosedError(msg)
            warnings.warn(msg, IllPosedWarning, stacklevel=3)
        y = axproj_diagonal(v, a, phi, p)
        lo, hi = _phi_bounds(phi, p)
        stuck = y == v
        f = np.where(stuck, v / a, y / a)
        lam = phi + p * f
        b = np.abs(lam)
        s = np.clip(np.divide(f, b, out=np.zeros(n), where=b > 0.0), -1.0, 1.0)
        return AxprojResult(y, f, lam, s, stuck, 0, True, 0.0, "diagonal")
    smax = sigma_max(P)
    if smax >= 1.0 and on_ill_posed != "ignore":
        msg = (f"P: sigma_max(P) = {smax:.6g} >= 1 violates the well-posedness condition (57); "
               "axproj may have no solution or several")
        if on_ill_posed == "raise":
            raise IllPosedError(msg)
        warnings.warn(msg, IllPosedWarning, stacklevel=3)
    res = AxprojSolver(n, tol=tol, max_iter=max_iter).solve(v, A, phi, P)
    if not res.converged:
        raise IllPosedError(f"axproj: no solution found (residual {res.residual:.3g} after "
                            f"{res.iterations} iterations; sigma_max(P) = {smax:.6g})")
    return res


def axproj(v: np.ndarray, A: np.ndarray, phi: np.ndarray, P: np.ndarray, *,
           tol: float = 1e-12, max_iter: int = 30, on_ill_posed: str = "warn") -> np.ndarray:
    """Eq. (67): ``y ∈ A Φ(sgn(v − y), ϕ, P)`` for any n; exact in the diagonal case (70).

    ``v``: (n,), ``A``: (n, n) with a positive diagonal (h M̂⁻¹), ``phi``: (n,), ``P``: (n, n).
    σ_max(P) ≥ 1 (57) gives an :class:`IllPosedWarning` (``on_ill_posed="warn"``), an
    :class:`IllPosedError` (``"raise"``) or nothing (``"ignore"``); when no solution is found
    :class:`IllPosedError` is raised. Components of ``v − y`` of stuck joints are exactly 0.

    Parameters
    ----------
    v : (n,) array_like
        The velocity v = v* of (68) to be projected, m/s or rad/s per joint.
    A : (n, n) array_like
        A = h M̂⁻¹, symmetric positive definite with a positive diagonal (velocity per force).
    phi : (n,) array_like
        ϕ of (55), the load-dependent driving term per joint, N or N m.
    P : (n, n) array_like
        P of (52) (dimensionless); σ_max(P) < 1 (57) for a well-posed problem.
    tol : float, optional
        Convergence tolerance, relative to the velocity scale ``max(‖v‖∞, max_i A_ii|λ_i|)``.
    max_iter : int, optional
        Most Newton solves.
    on_ill_posed : {"warn", "raise", "ignore"}, optional
        What σ_max(P) ≥ 1 (57) (or |P_ii| ≥ 1 in the diagonal case) gives: an
        :class:`IllPosedWarning`, an :class:`IllPosedError` or nothing.

    Returns
    -------
    (n,) ndarray
        y, in v's unit; the new velocity is ``v − y``.

    Raises
    ------
    IllPosedError
        When no solution is found, or for σ_max(P) ≥ 1 with ``on_ill_posed="raise"``.
    ValueError
        For mis-shaped or non-finite inputs, a non-positive diagonal of A, or an unknown
        ``on_ill_posed``.
    """
    return axproj_result(v, A, phi, P, tol=tol, max_iter=max_iter, on_ill_posed=on_ill_posed).y


# ----------------------------------------------------------------------------------------------
# the paper's projection iteration (reference)
# ----------------------------------------------------------------------------------------------
def axproj_projection(v, A, phi, P, *, c: float | np.ndarray | None = None,
                      s0: np.ndarray | None = None, tol: float = 1e-10,
                      max_iter: int = 200000, lambda_tol: float = 1e-14) -> AxprojResult:
    """The reference solver of Sec. 5.3: the projection iteration (71)–(73) of the VI.

    ``s := proj(Bⁿ, s − c F(s))`` with ``F(s) = A Φ(s, ϕ, P) − v`` (72), then
    ``y = F(s) + v`` (73).

    Φ is evaluated with :func:`lambda_fixed_point` (Remark 3), warm-started from the previous λ.
    ``c``: step size (scalar or per joint); default ``0.9 / (‖A‖₂ Λ)`` with the bound
    ``Λ = ‖ϕ‖₂/(1 − σ_max(P))`` of ‖λ‖ (81), a step below the Lipschitz scale of F.
    Stops when the velocity residual of (67) (the :func:`axproj_residual` measure) is below
    ``tol · max(‖v‖∞, ‖A‖₂ Λ)``; ``iterations`` counts projection steps (not the inner λ
    iterations). Convergence is not guaranteed (F need not be monotone); ``converged`` says.

    Parameters
    ----------
    v, A, phi, P : array_like
        As for :func:`axproj`: shapes (n,), (n, n), (n,), (n, n).
    c : float or (n,) array_like, optional
        Step size; default ``0.9 / (‖A‖₂ Λ)``.
    s0 : (n,) array_like, optional
        Starting s (clipped to [−1, 1]); default 0.
    tol : float, optional
        Relative tolerance on the velocity residual.
    max_iter : int, optional
        Most projection steps.
    lambda_tol : float, optional
        Relative tolerance of the inner λ iteration.

    Returns
    -------
    AxprojResult
        As :func:`axproj_result`, with ``method="projection"``.

    Raises
    ------
    IllPosedError
        For σ_max(P) ≥ 1, or when the inner λ iteration does not converge.
    ValueError
        For mis-shaped or non-finite inputs or a non-positive diagonal of A.
    """
    v, A, phi, P = _check(v, A, phi, P)
    n = v.size
    smax = sigma_max(P)
    if smax >= 1.0:
        raise IllPosedError(f"P: sigma_max(P) = {smax:.6g} >= 1 (57): the projection iteration "
                            "needs a unique λ")
    lam_bound = float(np.linalg.norm(phi)) / (1.0 - smax)
    a_norm = float(np.linalg.norm(A, 2))
    if c is None:
        c = 0.9 / max(a_norm * lam_bound, 1e-300)
    c = np.broadcast_to(np.asarray(c, dtype=float), (n,))
    s = np.zeros(n) if s0 is None else np.clip(np.asarray(s0, dtype=float), -1.0, 1.0)
    a_diag = np.diagonal(A)
    scale = max(float(np.max(np.abs(v))), a_norm * lam_bound, 1e-300)
    lam = phi.copy()
    res = math.inf
    it = 0
    for it in range(1, max_iter + 1):
        lam = _lambda_warm(phi, P * s, lam, lambda_tol)
        f = s * np.abs(lam)
        F = A @ f - v
        w = -F
        res = float(np.max(_joint_residuals(f, lam, w, a_diag)))
        if res <= tol * scale:
            break
        s = np.clip(s - c * F, -1.0, 1.0)
    lam = _lambda_warm(phi, P * s, lam, lambda_tol)
    f = s * np.abs(lam)
    y = A @ f
    w = v - y
    res = float(np.max(_joint_residuals(f, lam, w, a_diag)))
    stuck = np.abs(s) < 1.0
    return AxprojResult(y, f, lam, s, stuck, it, res <= tol * scale, res, "projection")


def _lambda_warm(phi, Ps, lam, tol):
    """Remark 3's iteration λ := ϕ + P[s]|λ| started from a previous λ (same fixed point)."""
    base = float(np.max(np.abs(phi)))
    for _ in range(100000):
        new = phi + Ps @ np.abs(lam)
        step = float(np.max(np.abs(new - lam)))
        lam = new
        if step <= tol * (base + float(np.max(np.abs(lam)))) or step == 0.0:
            return lam
    raise IllPosedError("P: the fixed-point iteration of Remark 3 did not converge")
