"""Joint friction on the input side of paper 004's gears: the axproj problem (67) with a
Coulomb element (used by :class:`~.geared_arm.GearedArm` when it has joint friction).

:class:`CoulombAxproj` solves, per step, for the friction f with ``v = v* − A f`` where each
joint's friction is the gear's load-dependent part plus a constant Coulomb level C (the motor-side
joint friction); :func:`coulomb_gear_bounds` gives the interval a stuck joint holds, in closed
form (see :class:`~.geared_arm.GearedArm`, "Joint friction", for the derivation).
"""

from __future__ import annotations

import numpy as np

from .dai import _TIE
from .projection import _WarmStartedNewton, _backtrack, _is_diagonal, _solve1, _solve_pieces

__all__ = ["CoulombAxproj", "coulomb_gear_bounds", "solve_joint_friction"]


# ----------------------------------------------------------------------------------------------
# joint friction on the input side: the axproj problem (67) with a Coulomb element
# ----------------------------------------------------------------------------------------------
def coulomb_gear_bounds(phi: np.ndarray, p: np.ndarray, C: np.ndarray,
                        g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per joint the range ``(lo, hi)`` of the friction torque at rest, in closed form, for a
    joint whose gear friction (34) is joined by a symmetric Coulomb element ``C`` on its input
    side (:class:`~.geared_arm.GearedArm`, "Joint friction").

    Sliding forwards the friction is ``f = C + |λ|`` with ``λ = a + p f``, ``a = ϕ − γ_u C``
    (the Coulomb torque is an input-side torque, so it enters ϕ of (69d) like τ_u), whose root
    is ``(C + a)/(1 − p)`` if ``a + p C ≥ 0``, else ``(C − a)/(1 + p)``; backwards, mirrored
    with ``a' = ϕ + γ_u C``. For C = 0 this is (Φ(−1), Φ(1)) of (34). A bound is ±inf where the
    root does not exist (|p| ≥ 1, ill-posed: the motion jams, as λ_s (35)).

    Parameters
    ----------
    phi : (n,) ndarray
        ϕ of (69d) per joint (the others' friction included), N m.
    p : (n,) ndarray
        The diagonal of P (52) (dimensionless).
    C : (n,) ndarray
        Symmetric Coulomb torque (Cp + Cn)/2 ≥ 0 per joint, N m.
    g : (n,) ndarray
        γ_u C per joint, N m.

    Returns
    -------
    lo : (n,) ndarray
        The most negative friction torque static friction can give, N m (≤ −C).
    hi : (n,) ndarray
        The most positive, N m (≥ C).
    """
    a = phi - g
    pos = a + p * C >= 0.0
    den = np.where(pos, 1.0 - p, 1.0 + p)
    ok = den > 0.0
    hi = np.where(ok, np.where(pos, C + a, C - a) / np.where(ok, den, 1.0), np.inf)
    a = phi + g
    pos = a - p * C >= 0.0
    den = np.where(pos, 1.0 + p, 1.0 - p)
    ok = den > 0.0
    lo = np.where(ok, -np.where(pos, C + a, C - a) / np.where(ok, den, 1.0), -np.inf)
    return lo, hi


class CoulombAxproj(_WarmStartedNewton):
    """Solver of (67) with input-side Coulomb friction: find the friction torques f with

        v_new = v* − A f,   f_i = hi_i(f) if v_new,i > 0,  lo_i(f) if v_new,i < 0,
        lo_i(f) ≤ f_i ≤ hi_i(f) if v_new,i = 0 (stuck),
        hi_i = C_i + |ψ_i − γ_u,i C_i|,  lo_i = −C_i − |ψ_i + γ_u,i C_i|,  ψ = ϕ + P f

    (:class:`~.geared_arm.GearedArm`, "Joint friction"). With C = 0 it is
    :class:`~.projection.AxprojSolver`'s problem. The same semismooth Newton (active-set)
    method: each joint's piece — stuck (row
    ``A_i f = v*_i``) or sliding in direction d with ``σ = sgn(ψ_i − d γ_u,i C_i)`` (row
    ``f_i − dσ (P f)_i = d C_i + dσ ϕ_i − σ γ_u,i C_i``) — fixes one n×n linear system; a
    backtracking line search once a piece recurs, projected Gauss–Seidel (:func:
    `coulomb_gear_bounds` per joint) if Newton stalls; warm-started from the previous step.
    Joints with zero velocity up to 10 × the tolerance are made exactly stuck.

    Parameters
    ----------
    n : int
        Number of joints.
    tol : float
        Tolerance relative to the velocity scale ``max(‖v*‖∞, max_i A_ii |f_i|)``.
    max_iter : int
        Most Newton solves.
    sweeps : int
        Most Gauss–Seidel sweeps.

    The last solve's pieces ``_last`` are (λ_up, λ_dn, z, lo, hi) of its final evaluation.
    """

    @staticmethod
    def _evaluate(f, v, A, phi, P, C, g, r, a_diag):
        psi = phi + P @ f
        lam_up, lam_dn = psi - g, psi + g
        hi = C + np.abs(lam_up)
        lo = -C - np.abs(lam_dn)
        w = v - A @ f
        z = f + r * w
        G = f - np.minimum(np.maximum(z, lo), hi)
        return lam_up, lam_dn, z, lo, hi, float((np.abs(G) * a_diag).max())

    def solve(self, v, A, phi, P, C, g):
        """Solve for validated float arrays; returns ``(y, f, stuck, iterations, converged,
        residual)`` with y = A f (y_i = v*_i exactly for stuck joints)."""
        a_diag = np.diagonal(A)
        r = 1.0 / a_diag
        if self.warm:
            f = self.f.copy()
        else:
            lo, hi = coulomb_gear_bounds(phi, np.diagonal(P), C, g)
            f = np.minimum(np.maximum(v * r, lo), hi)
            f = np.where(np.isfinite(f), f, 0.0)
        out = self._evaluate(f, v, A, phi, P, C, g, r, a_diag)
        lam_up, lam_dn, z, lo, hi, res = out
        scale = max(float(np.abs(v).max()), float((a_diag * np.maximum(hi, -lo)).max()), 1e-300)
        tol = self.tol * scale
        eye = self._eye
        it = 0
        seen: set = set()
        damped = False
        while res > tol and it < self.max_iter:
            it += 1
            d = np.where(z > hi, 1.0, np.where(z < lo, -1.0, 0.0))
            sigma = np.where(np.where(d > 0.0, lam_up, lam_dn) < 0.0, -1.0, 1.0)
            cc = d * sigma
            key = d.tobytes() + cc.tobytes()
            if key in seen:
                damped = True
            seen.add(key)
            stuck = d == 0.0
            K = np.where(stuck[:, None], A, eye - cc[:, None] * P)
            rhs = np.where(stuck, v, d * C + cc * phi - sigma * g)
            f_new = _solve_pieces(K, rhs)
            if f_new is None:
                break
            new = self._evaluate(f_new, v, A, phi, P, C, g, r, a_diag)
            if damped and new[5] > (1.0 - 1e-4) * res and new[5] > tol:
                best = _backtrack(f, f_new - f, res,
                                 lambda x: self._evaluate(x, v, A, phi, P, C, g, r, a_diag))
                if best is None:
                    break
                f_new, new = best
            f = f_new
            lam_up, lam_dn, z, lo, hi, res = new
        last = (lam_up, lam_dn, z, lo, hi)
        if res > tol:
            f, sweeps = self._gauss_seidel(f, v, A, phi, P, C, g, a_diag)
            it += sweeps
            *last, res = self._evaluate(f, v, A, phi, P, C, g, r, a_diag)
        self._last = tuple(last)  # the final pieces: the next :meth:`solve_fast`'s guess
        converged = res <= tol
        self.f[:] = f
        self.warm = True
        w = v - A @ f
        vel_tol = max(res, self.tol * max(float(np.abs(v).max()), 1e-300)) * 10.0
        stuck = np.abs(w) <= vel_tol
        y = np.where(stuck, v, A @ f)
        return y, f, stuck, it, bool(converged), float(res)

    def solve_fast(self, v, A, phi, P, C, g):
        """:meth:`solve` (same arguments and result) by one linear solve when every joint keeps
        the piece it had at the end of the previous solve and the result meets :meth:`solve`'s
        tolerance (then it is the linear system :meth:`solve`'s last Newton step solves:
        the same solution to round-off); otherwise :meth:`solve` from the same warm start."""
        last = self._last
        if last is not None and self.warm:
            lam_up, lam_dn, z, lo, hi = last
            # the pieces, as in solve()
            d = np.where(z > hi, 1.0, np.where(z < lo, -1.0, 0.0))
            sigma = np.where(np.where(d > 0.0, lam_up, lam_dn) < 0.0, -1.0, 1.0)
            cc = d * sigma
            stuck = d == 0.0
            K = np.multiply(cc[:, None], P, out=self._K)
            np.subtract(self._eye, K, out=K)
            np.copyto(K, A, where=stuck[:, None])
            rhs = d * C + cc * phi - sigma * g
            np.copyto(rhs, v, where=stuck)
            with np.errstate(all="ignore"):  # a singular K gives NaN: solve() takes over
                f = _solve1(K, rhs)
            a_diag = A.diagonal()
            out = self._evaluate(f, v, A, phi, P, C, g, 1.0 / a_diag, a_diag)
            res = out[5]
            vmax = float(np.abs(v).max())
            tol = self.tol
            if res <= tol * vmax or res <= tol * max(
                    vmax, float((a_diag * np.maximum(out[4], -out[3])).max()), 1e-300):
                self.f[:] = f
                self._last = out[:5]
                y = A @ f
                vel_tol = max(res, tol * max(vmax, 1e-300)) * 10.0
                stuck = np.abs(v - y) <= vel_tol
                return np.where(stuck, v, y), f, stuck, 1, True, float(res)
            extra = 1
        else:
            extra = 0
        y, f, stuck, it, conv, res = self.solve(v, A, phi, P, C, g)
        return y, f, stuck, it + extra, conv, res

    def _gauss_seidel(self, f, v, A, phi, P, C, g, a_diag):
        f = f.copy()
        pd = np.diagonal(P)
        r = 1.0 / a_diag
        for sweep in range(1, self.sweeps + 1):
            for i in range(self.n):
                vi = v[i] - A[i] @ f + a_diag[i] * f[i]
                ph = phi[i] + P[i] @ f - pd[i] * f[i]
                lo, hi = coulomb_gear_bounds(np.array([ph]), pd[i:i + 1], C[i:i + 1], g[i:i + 1])
                f[i] = min(max(vi * r[i], lo[0]), hi[0])
            if self._evaluate(f, v, A, phi, P, C, g, r, a_diag)[5] <= self.tol * max(
                    float(np.abs(v).max()), 1e-300):
                return f, sweep
        return f, self.sweeps


def _coulomb_diagonal(v, a, phi, p, C, g):
    """The diagonal case (70) of :class:`CoulombAxproj` in closed form: (y, f, stuck)."""
    lo, hi = coulomb_gear_bounds(phi, p, C, g)
    lo, hi = a * lo, a * hi
    tie = _TIE * np.abs(v)  # marginal states stick, as in the 1-DOF algorithm (44)
    stuck = (v >= lo - tie) & (v <= hi + tie)
    y = np.where(stuck, v, np.minimum(np.maximum(v, lo), hi))
    return y, y / a, stuck


def solve_joint_friction(solver: CoulombAxproj, v_star: np.ndarray, A: np.ndarray,
                         phi: np.ndarray, P: np.ndarray, C: np.ndarray, g: np.ndarray,
                         reference: bool = False):
    """(69f) with input-side Coulomb friction: the closed form (70) when A and P are diagonal
    (one joint, or decoupled joints), else ``solver`` (:meth:`CoulombAxproj.solve_fast`, or
    :meth:`CoulombAxproj.solve` when ``reference``).

    Parameters
    ----------
    solver : CoulombAxproj
        The warm-started solver of this problem's size.
    v_star : (n,) ndarray
        v* of (69e) [rad/s].
    A : (n, n) ndarray
        h M̂⁻¹ [rad/(N m s)... per step: velocity per torque].
    phi : (n,) ndarray
        ϕ of (69d) [N m].
    P : (n, n) ndarray
        P of (69b).
    C, g : (n,) ndarray
        The symmetric Coulomb levels and γ_u C [N m].
    reference : bool
        Solve by the reference iteration only.

    Returns
    -------
    tuple
        ``(y, f, stuck, iterations, converged, residual)``: y = A f (``v* − y`` the new
        velocity, exactly 0 where ``stuck``), f the friction torques.
    """
    if A.shape[0] == 1 or (_is_diagonal(A) and _is_diagonal(P)):
        y, f, stuck = _coulomb_diagonal(v_star, np.diagonal(A), phi, np.diagonal(P), C, g)
        return y, f, stuck, 0, True, 0.0
    solve = solver.solve if reference else solver.solve_fast
    return solve(v_star, A, phi, P, C, g)
