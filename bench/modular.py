"""Benchmark of the modular RK4 simulator (paper 001, Kikuuwe & Yamamoto): steps per second.

Prints, measured side by side in one run, for the paper's systems at their timestep T = 1e-4 s:
* the sphere rolling with slip (Sec. IV-A: rigid body (26) + I_fricKN (24));
* the constraint-based two-link with I_fricK joint friction (Sec. IV-B: arm (8) + 2 × (19) +
  actuator torques), and the same with LuGre (12);
* the penalty-based two-link (Sec. IV-C: 2 rigid bodies + 2 penalty joints + 2 axis torques);
* a two-link whose arm dynamics come from Pinocchio (UrdfArm, the bundled planar_2link URDF);

RK4 (21) steps per second, forward-Euler (4) steps per second through the same components, their
ratio (RK4 evaluates the components 4 times per step, so ≈ 4 is the expected cost ratio) and the
real-time factor at T = 1e-4 s. Every figure is the median over blocks of steps on a shared
machine (load printed). Nothing here asserts.
Run: ``make bench`` or ``.venv/bin/python bench/modular.py [--quick]``.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from fric_core.transmission.urdf_dynamics import UrdfDynamics  # noqa: E402
from fric_core.modular import (Coordinates, ExternalForce, FrictionImpedance,  # noqa: E402
                               ModularSystem, RigidBody, UrdfArm, euler_step, rk4_step)
from fric_core.modular.scenarios import (paper_torques, penalty_initial_state,  # noqa: E402
                                         penalty_two_link, rolling_sphere, two_link)

T = 1e-4
TARGET_RT = 1.0   # real-time factor at the paper's T: simulate at least as fast as time passes


def systems():
    sphere = rolling_sphere()
    yield "sphere (IV-A)", sphere, sphere.initial_state(
        sphere=RigidBody.state(p=(0.0, 0.0, 0.2 * 1.01), v=(2.0, 0.0, 0.0)))
    for kind in ("kikuuwe", "lugre"):
        m = two_link(kind)
        yield f"two-link, {kind} (IV-B)", m, m.initial_state(arm=[0.0, 0.0, 0.0, 0.0])
    pen = penalty_two_link()
    yield "two-link, penalty (IV-C)", pen, penalty_initial_state(pen, (0.0, 0.0))
    # the same I_fricK joints on an arm whose dynamics come from Pinocchio (the bundled
    # planar_2link URDF: other link parameters, so only its speed is comparable)
    s = ModularSystem().add_admittance("arm", UrdfArm(UrdfDynamics("planar_2link",
                                                                   gravity=(0.0, 0.0, 0.0))))
    s.add_impedance("motors", ExternalForce(paper_torques, n=2), Coordinates("arm"))
    for i in (0, 1):
        s.add_impedance(f"friction{i}", FrictionImpedance(K=5000.0, B=1.0, F=0.5),
                        Coordinates("arm", i))
    urdf = s.build()
    yield "two-link, URDF/Pinocchio", urdf, urdf.initial_state(arm=[0.0, 0.0, 0.0, 0.0])


def steps_per_second(step, model, x0, t0: float, n_block: int, n_rep: int) -> float:
    x = x0.copy()
    out = np.empty_like(x)
    rates = []
    t = t0
    for _ in range(n_rep):
        start = time.perf_counter()
        for _ in range(n_block):
            step(model, x, t, T, out=out)
            x, out = out, x
            t += T
        rates.append(n_block / (time.perf_counter() - start))
    return float(np.median(rates))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="short smoke run")
    args = p.parse_args(argv)
    n_block, n_rep = (200, 3) if args.quick else (2000, 7)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"modular RK4 benchmark: Python {platform.python_version()}, numpy {np.__version__}, "
          f"load average {load:.2f} (shared machine), T = {T:g} s, median of {n_rep} blocks "
          f"of {n_block} steps")
    print(f"{'system':28s} {'RK4 steps/s':>12s} {'Euler steps/s':>14s} {'Euler/RK4':>10s} "
          f"{'RK4 x real time':>16s}")
    results = []
    for name, model, x0 in systems():
        # the two-links start from rest at t0 = 2 s of the torque profile (28c, d), where the
        # torque, 0.52 N m, exceeds F = 0.5 N m: the joints break away within the first 200
        # steps, so the timed blocks exercise the friction elements' sliding branch (not a
        # state at rest); the sphere starts as in Fig. 4 (falling, bouncing, slipping)
        t0 = 2.0 if "two-link" in name else 0.0
        rk = steps_per_second(rk4_step, model, x0, t0, n_block, n_rep)
        eu = steps_per_second(euler_step, model, x0, t0, n_block, n_rep)
        rt = rk * T
        results.append((name, rk, eu, rt))
        print(f"{name:28s} {rk:12.0f} {eu:14.0f} {eu / rk:10.2f} {rt:16.2f}")
    print("  (an RK4 step sweeps the components 4 times, an Euler step once: a ratio near 4 "
          "means the sweeps, not the integrator, dominate)")
    for name, rk, eu, rt in results:
        ok = "meets" if rt >= TARGET_RT else "misses"
        print(f"target: RK4 >= {TARGET_RT:g}x real time at T = {T:g} s — {name}: {rt:.2f}x "
              f"({ok})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
