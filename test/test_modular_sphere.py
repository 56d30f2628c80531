"""Simulation I of Kikuuwe & Yamamoto (Sec. IV-A): a solid sphere rolling with slip on a plane,
rigid body (26) + I_fricKN (23)/(24) under RK4 (21); and the rigid body's unit quaternion."""

import math

import numpy as np
import pytest

from fric_core.modular import ModularSystem, RigidBody, simulate
from fric_core.modular._vec import quat_matrix
from fric_core.modular.scenarios import SPHERE, rolling_sphere

M, R, G, MU, V0, T = (SPHERE[k] for k in ("M", "R", "g", "mu", "v0", "T"))
T_ROLL = 2.0 * V0 / (7.0 * MU * G)  # solid sphere: slip decelerates at μg(1 + MR²/J) = 3.5 μg


def run(z0, t_end=0.8):
    m = rolling_sphere()
    x0 = m.initial_state(sphere=RigidBody.state(p=(0.0, 0.0, z0), v=(V0, 0.0, 0.0)))
    tr = simulate(m, x0, T, int(round(t_end / T)))
    X = tr.x
    vc = X[:, 3] - R * X[:, 11]           # contact-point velocity v + ω × a_z, a_z = [0, 0, −R]
    i = int(np.argmax(vc <= 0.0))
    assert i > 0
    t_cross = tr.t[i - 1] + T * vc[i - 1] / (vc[i - 1] - vc[i])
    return m, tr, vc, i, t_cross


def test_pure_rolling_time_from_rest_on_the_surface():
    # Start on the surface at the static penetration Mg/K, so the normal force is Mg throughout.
    # While it slips the tangential element is saturated (f_t = μ f_z exactly, (23c)), so v_c
    # falls linearly at 3.5 μg and the zero crossing (interpolated within the step) is at
    # 2v0/(7μg) up to the RK4 error of a smooth ODE: 1e-6 s = T/100 is far above that
    # (measured ~3e-8 s) and far below the 1.7 ms timescale √(M/K) of the contact.
    m, tr, vc, i, t_cross = run(R - M * G / SPHERE["K"])
    assert abs(t_cross - T_ROLL) < 1e-6
    assert abs(T_ROLL - 0.583) < 1e-3   # the paper's Fig. 4: "reaches zero at t = 0.58 s"
    # after that it rolls: v = 5/7 v0, v_c stays ~0 (the tangential spring's elastic slip
    # decays: |v_c| ≤ μMg/√(K M_eff) with M_eff = 2M/7, ≈ 5e-3 m/s bound)
    assert tr.x[-1, 3] == pytest.approx(5.0 / 7.0 * V0, rel=1e-6)
    assert np.max(np.abs(vc[i:])) < MU * M * G / math.sqrt(SPHERE["K"] * 2.0 * M / 7.0)


def test_pure_rolling_time_with_the_papers_drop():
    # The paper starts at p_z = 1.01 R: the sphere falls 2 mm and bounces on the lightly damped
    # contact (ζ = B/(2√(KM)) ≈ 0.03). The vertical impulse balance gives the friction impulse
    # μ ∫f_z dt = μ M (g t − v_z(t)), so slip ends at t = 2v0/(7μg) − v_z(t)/g. Tolerance 2e-5 s
    # (= T/5): each impact crosses the kink of the penalty force at p_z = 0 inside a step, where
    # RK4's local error drops to first order, O(f_z T²/M) in v_z (measured 2e-6 s).
    m, tr, vc, i, t_cross = run(1.01 * R)
    vz = tr.x[i, 5]
    assert np.sum(tr.x[:, 2] > R) > 100       # it really was airborne for a while
    assert abs(t_cross - (T_ROLL - vz / G)) < 2e-5
    assert abs(t_cross - T_ROLL) < 1e-3


@pytest.mark.parametrize("z0", [1.01 * R, R - M * G / SPHERE["K"]])
def test_energy_never_increases_after_pure_rolling(z0):
    # Energy = kinetic + gravity + contact elastic (½K p_z², ½K|e|²). After the slip ends only
    # the dampers act, so it must not increase; 1e-12 J allows the rounding of E ≈ 1 J
    # (~1e-15 relative per evaluation, summed over components).
    m, tr, vc, i, _ = run(z0, t_end=1.5)
    E = np.array([m.energy(x) for x in tr.x[i::5]])
    assert np.max(np.diff(E)) < 1e-12
    assert E[-1] < E[0]


def test_quaternion_stays_unit_on_the_sphere():
    _, tr, _, _, _ = run(1.01 * R)
    q = tr.x[:, 6:10]
    assert np.max(np.abs(np.linalg.norm(q, axis=1) - 1.0)) < 1e-12
    # it has rolled: rotation angle ≈ distance / R after the slip ends
    assert abs(2.0 * math.atan2(q[-1, 2], q[-1, 0])) > 0.5


def test_free_tumbling_body_keeps_unit_quaternion_momentum_and_energy():
    # An asymmetric body spinning near its intermediate axis tumbles (Dzhanibekov): a hard test
    # of the attitude integration. Angular momentum (world) and kinetic energy are invariants of
    # (26); RK4 at ωT = 0.01 keeps them to ~1e-9 relative over 2000 steps; the quaternion is
    # renormalised after every step, so ‖q‖ = 1 to rounding.
    body = RigidBody(2.0, [1.0, 2.0, 3.0])
    m = ModularSystem().add_admittance("b", body, unforced=True).build()
    x0 = m.initial_state(b=RigidBody.state(q=(0.9, 0.1, 0.3, 0.2), omega=(0.01, 5.0, 0.02)))
    tr = simulate(m, x0, 2e-3, 2000, every=50)
    L0 = body.world_inertia(x0[6:10]) @ x0[10:13]
    for x in tr.x:
        q = x[6:10]
        assert abs(np.linalg.norm(q) - 1.0) < 1e-12
        L = body.world_inertia(q) @ x[10:13]
        assert np.allclose(L, L0, rtol=0, atol=1e-8 * np.linalg.norm(L0))
        assert body.energy(x) == pytest.approx(body.energy(x0), rel=1e-9)
    # it did tumble: the body-frame spin axis flipped (ω_y changes sign in body axes)
    wy = [float((quat_matrix(*x[6:10]).T @ x[10:13])[1]) for x in tr.x]
    assert min(wy) < 0.0 < max(wy)
