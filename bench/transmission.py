"""Benchmark of the geared-arm algorithm (69) of paper 004 (Kikuuwe 2022) and its axproj solver.

Prints, measured in one run:
* µs per ``GearedArm.step`` (Pinocchio dynamics M_h, h, J + P, ϕ, v* + axproj (67)) for the
  planar 2-link arm of Sec. 6.2 (pushing the moving wall of Fig. 11, γ_v = [1.1, 1.1]) and for a
  7-DOF arm (``urdf/arm7.urdf``, gravity on, a self-locking wrist, PD commands that alternate 1 s
  of sinusoidal motion with 1 s of holding, and an end-effector contact wrench): median and
  99th percentile, and the real-time factor at 1 kHz;
* axproj iterations on states recorded from the 7-DOF run, solved cold (no warm start) by the
  semismooth Newton solver and by the paper's projection iteration at equal accuracy (both until
  the velocity residual of (67) is below 1e-9 of the problem's velocity scale); also the
  warm-started iterations per step of the simulation itself.

Every timing is a median over the steps of one run on a shared machine. Targets are printed next
to the figures; nothing here asserts.
Run: ``make bench`` or ``.venv/bin/python bench/transmission.py [--quick]``.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from fric_core.transmission.geared_arm import GearedArm  # noqa: E402
from fric_core.transmission.urdf_dynamics import UrdfDynamics  # noqa: E402
from fric_core.transmission.projection import (  # noqa: E402
    AxprojSolver, axproj_projection, axproj_residual)

H = 1e-3
ARM7 = dict(gamma_u=0.1, gamma_v=[0.3, 0.3, 0.5, 0.5, 0.7, 1.1, 1.1],
            m=[0.6, 0.6, 0.4, 0.4, 0.2, 0.2, 0.1], damping=2.0)
Q7 = np.array([0.0, 0.5, 0.0, -1.2, 0.0, 0.8, 0.0])
TARGET_STEP_US = 250.0
TARGET_ITER_RATIO = 10.0
ACCURACY = 1e-9


def _stats(ts) -> tuple[float, float]:
    a = np.asarray(ts) * 1e6
    return float(np.median(a)), float(np.percentile(a, 99))


def two_link(n_steps: int) -> tuple[float, float]:
    dyn = UrdfDynamics("planar_2link", gravity=(0.0, 0.0, 0.0))
    th = np.arccos(1.37 / 2.0)
    arm = GearedArm(dyn, 0.1, 1.1, 1.0, damping=5.0, q0=[-th, 2.0 * th])
    ts = []
    for k in range(n_steps):
        t = k * H
        fux = 500.0 if 0.5 <= t < 2.0 else (0.0 if t < 2.5 else -500.0)
        wx = 1.37 - 0.25 * min(max((t - 1.0) / 0.5, 0.0), 1.0)
        q = arm.q
        px = dyn.ee_position(q)[0]
        tau = dyn.jacobian(q)[0] * fux
        wrench = [-1e4 * max(px - wx, 0.0), 0.0, 0.0, 0.0, 0.0, 0.0]
        t0 = time.perf_counter()
        arm.step(tau, H, wrench=wrench)
        ts.append(time.perf_counter() - t0)
    return _stats(ts)


def seven_dof(n_steps: int, record_every: int):
    dyn = UrdfDynamics("arm7")
    arm = GearedArm(dyn, ARM7["gamma_u"], ARM7["gamma_v"], ARM7["m"], damping=ARM7["damping"],
                    q0=Q7)
    kp, kd = np.array([300, 300, 150, 150, 60, 20, 20.0]), np.array([20, 20, 10, 10, 4, 1, 1.0])
    ts, its, smax, problems, stuck = [], [], [], [], 0
    for k in range(n_steps):
        t = k * H
        q, v = arm.q, arm.v
        t_ref = min(t % 2.0, 1.0) + 2.0 * (t // 2.0)  # move for 1 s, hold for 1 s
        q_ref = Q7 + 0.4 * np.sin(np.pi * t_ref + np.arange(7))
        tau = dyn.gravity_torque(q) + kp * (q_ref - q) - kd * v
        push = 40.0 * max(np.sin(2 * np.pi * 0.7 * t), 0.0)
        wrench = np.array([0.0, 0.0, -push, 0.0, 0.0, 0.0])
        if record_every and k % record_every == 0:
            problems.append(_problem(arm, dyn, tau, wrench))
        t0 = time.perf_counter()
        arm.step(tau, H, wrench=wrench)
        ts.append(time.perf_counter() - t0)
        its.append(arm.state.iterations)
        smax.append(arm.state.sigma_max)
        stuck += int(arm.state.stuck.sum())
    return _stats(ts), np.asarray(its), float(np.max(smax)), stuck / (7.0 * n_steps), problems


def _problem(arm: GearedArm, dyn: UrdfDynamics, tau_u, wrench):
    """(v*, A, ϕ, P) of (69) at the arm's current state: the axproj problem of its next step."""
    q, v = arm.q, arm.v
    Mh, bias, J = dyn.terms(q, v, True)
    Mq = Mh + np.diag(arm.m_v)
    Minv = np.linalg.inv(Mq + np.diag(arm.m))
    P = (np.diag(arm.gamma_u * arm.m) - arm.gamma_v[:, None] * Mq) @ Minv
    tau_v = bias + arm.damping * v - J.T @ wrench
    ta = tau_u - tau_v
    phi = arm.gamma_u * tau_u + arm.gamma_v * tau_v - P @ ta
    return v + H * Minv @ ta, H * Minv, phi, P


def iteration_comparison(problems, max_iter: int):
    newton, proj, capped, t_newton, t_proj, res = [], [], 0, [], [], []
    for v, A, phi, P in problems:
        solver = AxprojSolver(v.size, tol=ACCURACY)
        t0 = time.perf_counter()
        r = solver.solve(v, A, phi, P)
        t_newton.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        ref = axproj_projection(v, A, phi, P, tol=ACCURACY, max_iter=max_iter)
        t_proj.append(time.perf_counter() - t0)
        newton.append(max(r.iterations, 1))
        proj.append(ref.iterations)
        capped += not ref.converged
        scale = max(float(np.max(np.abs(v))), 1e-300)
        res.append((axproj_residual(r.y, v, A, phi, P) / scale,
                    axproj_residual(ref.y, v, A, phi, P) / scale))
    return (np.asarray(newton), np.asarray(proj), capped, float(np.median(t_newton)) * 1e6,
            float(np.median(t_proj)) * 1e6, np.asarray(res))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer steps (smoke run)")
    args = ap.parse_args(argv)
    print(f"fric bench/transmission.py — Python {platform.python_version()}, numpy "
          f"{np.__version__}, {platform.machine()}, {os.cpu_count()} CPUs")
    n2, n7 = (300, 600) if args.quick else (3000, 5000)
    med, p99 = two_link(n2)
    print(f"\nplanar 2-link (Sec. 6.2, Fig. 11 scenario), {n2} steps of GearedArm.step:")
    print(f"  median {med:7.1f} us, p99 {p99:7.1f} us, real-time factor at 1 kHz "
          f"{1000.0 / med:.1f}x")
    (med7, p997), its, smax, stuck, problems = seven_dof(n7, 25 if args.quick else 50)
    print(f"\n7-DOF arm (urdf/arm7.urdf, gravity, gamma_v {ARM7['gamma_v']}), {n7} steps of "
          "GearedArm.step (dynamics + axproj):")
    print(f"  median {med7:7.1f} us, p99 {p997:7.1f} us, real-time factor at 1 kHz "
          f"{1000.0 / med7:.1f}x; max sigma_max(P) {smax:.3f}; joints in static friction "
          f"{stuck:.0%} of the joint-steps; warm-started axproj iterations per step: "
          f"mean {its.mean():.2f}, max {its.max()}")
    print(f"  target: 7-DOF step <= {TARGET_STEP_US:g} us median: {med7:.1f} us "
          f"[{'PASS' if med7 <= TARGET_STEP_US else 'FAIL'}]")
    cap = 3000 if args.quick else 100000
    newton, proj, capped, tn, tp, res = iteration_comparison(problems, cap)
    ratio = float(np.median(proj)) / float(np.median(newton))
    print(f"\naxproj on {len(problems)} recorded 7-DOF states, cold start, velocity residual of "
          f"(67) <= {ACCURACY:g} x scale:")
    print(f"  semismooth Newton : iterations median {np.median(newton):.0f}, max {newton.max()}; "
          f"median {tn:.0f} us per solve; residual/|v*| max {res[:, 0].max():.1e}")
    print(f"  projection (paper): iterations median {np.median(proj):.0f}, max {proj.max()}"
          f"{f' ({capped} stopped at the cap {cap})' if capped else ''}; median {tp:.0f} us "
          f"per solve; residual/|v*| max {res[:, 1].max():.1e}")
    print(f"  target: >= {TARGET_ITER_RATIO:g}x fewer iterations than the projection iteration: "
          f"{ratio:.0f}x [{'PASS' if ratio >= TARGET_ITER_RATIO else 'FAIL'}]")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
