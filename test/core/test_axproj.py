"""fric_core.axproj: the axis-aligned projection (67) of paper 004 — inclusion residual, agreement
with the paper's projection iteration, the diagonal case (70), ill-posed problems."""

import warnings

import numpy as np
import pytest

from fric_core.transmission.projection import (AxprojSolver, IllPosedError, axproj, axproj_diagonal,
                                               axproj_projection, axproj_residual, axproj_result,
                                               friction_phi_n, lambda_fixed_point, sigma_max)
from fric_core.transmission import IllPosedWarning, friction_phi

H = 1e-3


def arm_problem(rng, n, gv_max=1.2):
    """(v*, A, ϕ, P) of algorithm (69) for a random arm state: SPD link inertia, rotor inertias,
    asymmetry coefficients (some self-locking), random torques and velocities (some zero)."""
    X = rng.normal(size=(n, n))
    Mh = X @ X.T * 0.5 + 0.05 * np.eye(n)
    m = rng.uniform(0.05, 1.0, n)
    gu, gv = rng.uniform(0, 0.5, n), rng.uniform(0, gv_max, n)
    Minv = np.linalg.inv(Mh + np.diag(m))
    P = (np.diag(gu * m) - gv[:, None] * Mh) @ Minv
    tu, tv = rng.normal(size=(2, n)) * 20
    v0 = rng.normal(size=n) * 0.02 * (rng.uniform(size=n) < 0.5)
    return v0 + H * Minv @ (tu - tv), H * Minv, gu * tu + gv * tv - P @ (tu - tv), P


def random_problem(rng, n):
    """O(1)-scaled problem with a random P (σ_max < 1) and SPD A: absolute tolerances are then
    relative ones."""
    X = rng.normal(size=(n, n))
    A = X @ X.T / n + 0.05 * np.eye(n)
    P = rng.normal(size=(n, n))
    P *= rng.uniform(0.05, 0.95) / sigma_max(P)
    phi = rng.normal(size=n) * (rng.uniform(size=n) < 0.8)
    return rng.normal(size=n) * rng.uniform(0.1, 3.0), A, phi, P


def inclusion_error(y, v, A, phi, P):
    """Check (67) from the definitions, not from the solver: f = A⁻¹y; the only λ with
    [s]|λ| = f in (55) is ϕ + P f, so s = f/|λ|; then λ(ϕ, P[s]) is recomputed by Remark 3's
    fixed point from s alone, Φ(s) = [s]|λ| (59), and y must equal A Φ(s) with s ∈ sgn(v − y)."""
    f = np.linalg.solve(A, y)
    lam0 = phi + P @ f
    w = v - y
    # where λ_i = 0 the joint's friction is 0 whatever s_i: take s_i = sgn(w_i)
    s = np.divide(f, np.abs(lam0), out=np.sign(w), where=lam0 != 0)
    assert np.all(np.abs(s) <= 1 + 1e-9)
    s = np.clip(s, -1, 1)
    err = np.max(np.abs(y - A @ friction_phi_n(s, phi, P)))
    # s ∈ sgn(w): s = ±1 where the joint slides (stuck joints have w exactly 0 by construction;
    # a sliding joint slower than 1e-12 may carry the round-off of s)
    sliding = np.abs(w) > 1e-12
    sign_err = np.max(np.abs(s[sliding] - np.sign(w[sliding])), initial=0.0)
    return err, sign_err


@pytest.mark.parametrize("kind", ["arm", "random"])
def test_axproj_satisfies_its_inclusion_67(kind):
    # 1e-10 absolute on O(1)-scaled problems (velocity scale ~1; arm problems scaled by 1/|v|max).
    rng = np.random.default_rng(10 if kind == "arm" else 11)
    n_done = 0
    while n_done < 150:
        n = int(rng.integers(1, 8))
        v, A, phi, P = arm_problem(rng, n) if kind == "arm" else random_problem(rng, n)
        if sigma_max(P) >= 0.98:
            continue
        if kind == "arm":  # scale to O(1) velocities so the absolute tolerance is relative
            k = 1.0 / max(np.max(np.abs(v)), 1e-12)
            v, A = v * k, A * k
        y = axproj(v, A, phi, P)
        err, sign_err = inclusion_error(y, v, A, phi, P)
        assert err <= 1e-10 and sign_err <= 1e-9, (err, sign_err)
        assert axproj_residual(y, v, A, phi, P) <= 1e-10
        n_done += 1


def test_axproj_agrees_with_the_projection_iteration():
    # The paper's reference, run to a 1e-11 velocity residual; y agrees to 1e-7 (the reference's
    # error is its residual amplified by the conditioning of A Φ, here < 1e3).
    rng = np.random.default_rng(12)
    done = 0
    while done < 12:
        n = int(rng.integers(2, 5))
        v, A, phi, P = random_problem(rng, n)
        if sigma_max(P) >= 0.8:
            continue
        ref = axproj_projection(v, A, phi, P, tol=1e-11, max_iter=50000)
        if not ref.converged:
            continue  # the projection iteration is not guaranteed to converge; skip those
        r = axproj_result(v, A, phi, P)
        assert np.max(np.abs(r.y - ref.y)) <= 1e-7
        assert r.iterations * 10 <= max(ref.iterations, 10)
        done += 1


def test_diagonal_case_equals_70_exactly():
    # A, P diagonal: y_i = proj(A_ii Φ(B, ϕ_i, P_ii), v_i) (70), the 1-DOF algorithm per joint;
    # includes |P_ii| >= 1, where λ_s (35) makes a bound infinite.
    rng = np.random.default_rng(13)
    for _ in range(200):
        n = int(rng.integers(1, 9))
        a = rng.uniform(0.1, 2.0, n)
        p = rng.uniform(-1.5, 1.5, n)
        phi = rng.normal(size=n) * (rng.uniform(size=n) < 0.8)
        v = rng.normal(size=n)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", IllPosedWarning)
            r = axproj_result(v, np.diag(a), phi, np.diag(p))
        assert r.method == "diagonal"
        for i in range(n):
            lo = a[i] * friction_phi(-1.0, phi[i], p[i])
            hi = a[i] * friction_phi(1.0, phi[i], p[i])
            expect = min(max(v[i], lo), hi)
            assert r.y[i] == pytest.approx(expect, rel=1e-15, abs=0.0)
            if lo <= v[i] <= hi:
                assert r.y[i] == v[i] and r.stuck[i]  # v − y exactly 0: static friction
        # the general Newton solver finds the same point when |P_ii| < 1
        if np.all(np.abs(p) < 1):
            g = AxprojSolver(n).solve(v, np.diag(a), phi, np.diag(p))
            assert np.max(np.abs(g.y - r.y)) <= 1e-14 * max(1.0, np.max(np.abs(v)))
            assert np.array_equal(g.stuck, r.stuck)


def test_newton_needs_ten_times_fewer_iterations_than_projection():
    rng = np.random.default_rng(14)
    newton, proj = [], []
    while len(newton) < 15:
        v, A, phi, P = arm_problem(rng, int(rng.integers(2, 6)), gv_max=0.9)
        if sigma_max(P) >= 0.9:
            continue
        ref = axproj_projection(v, A, phi, P, tol=1e-9, max_iter=20000)
        newton.append(max(axproj_result(v, A, phi, P, tol=1e-9).iterations, 1))
        proj.append(ref.iterations)
    assert np.median(proj) >= 10 * np.median(newton)


def test_warm_start_takes_one_solve_or_none():
    rng = np.random.default_rng(15)
    v, A, phi, P = random_problem(rng, 6)
    s = AxprojSolver(6)
    first = s.solve(v, A, phi, P)
    again = s.solve(v, A, phi, P)
    assert again.iterations <= 1 and np.max(np.abs(again.y - first.y)) <= 1e-13


def test_lambda_fixed_point_remark_3():
    rng = np.random.default_rng(16)
    for _ in range(50):
        n = int(rng.integers(1, 8))
        P = rng.normal(size=(n, n))
        P *= 0.9 / sigma_max(P)
        phi, s = rng.normal(size=n), rng.uniform(-1, 1, n)
        lam, it = lambda_fixed_point(phi, P, s)
        assert np.max(np.abs(lam - P @ (s * np.abs(lam)) - phi)) <= 1e-12 * np.max(np.abs(lam))
        assert it < 1000
    P = np.array([[1.5, 0.0], [0.0, 0.2]])  # σ_max > 1 and ϕ_1 > 0: λ_1 = ϕ_1 + 1.5|λ_1| diverges
    with pytest.raises(IllPosedError, match="sigma_max"):
        lambda_fixed_point(np.array([1.0, 1.0]), P, max_iter=2000)


def test_ill_posed_problems_are_reported():
    n = 3
    A = np.eye(n) * 0.1 + 0.01
    P = np.array([[0.0, 0.9, 0.0], [0.9, 0.0, 0.5], [0.0, 0.5, 0.2]]) * 1.3
    assert sigma_max(P) >= 1.0
    v, phi = np.ones(n), np.ones(n)
    with pytest.raises(IllPosedError, match="sigma_max"):
        axproj(v, A, phi, P, on_ill_posed="raise")
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        try:
            y = axproj(v, A, phi, P)
        except IllPosedError as e:  # no solution is also an answer, never NaN
            assert "no solution" in str(e)
        else:
            assert np.all(np.isfinite(y))
    assert any(issubclass(w.category, IllPosedWarning) for w in rec)


@pytest.mark.parametrize("args,field", [
    ((np.array([np.nan, 0.0]), np.eye(2), np.ones(2), np.zeros((2, 2))), "v"),
    ((np.ones(2), np.eye(3), np.ones(2), np.zeros((2, 2))), "A"),
    ((np.ones(2), np.eye(2), np.ones(3), np.zeros((2, 2))), "phi"),
    ((np.ones(2), np.eye(2), np.ones(2), np.full((2, 2), np.inf)), "P"),
    ((np.ones(2), -np.eye(2), np.ones(2), np.zeros((2, 2))), "A"),
])
def test_bad_input_names_the_field(args, field):
    with pytest.raises(ValueError, match=field):
        axproj(*args)


def test_diagonal_helper_jams_on_infinite_bound():
    # |p| >= 1 with the infinite side of λ_s (35): the joint stops in that direction (y = v).
    y = axproj_diagonal(np.array([2.0, -2.0]), np.array([0.1, 0.1]), np.array([1.0, 1.0]),
                        np.array([1.2, 1.2]))
    assert y[0] == 2.0  # ϕ > 0, ρ >= 1: Φ(1) = +inf, moving forward is blocked
    assert np.isfinite(y[1])
