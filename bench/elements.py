"""Benchmark of the implicit-Euler friction elements (Kikuuwe et al. 2006, models A–D).

Prints, measured side by side in one run:
* µs per scalar ``step`` of each element and of the Karnopp baseline (eq. 3), with ratios —
  the implicit models should cost no more than the naive threshold model;
* joint-steps per second of one vector (per-joint) element over 1, 10, 1000 and 100000 joints.

Every figure is the best of several repeats (the least-disturbed run on a shared machine).
Targets for this 2-core machine are printed next to the figures; nothing here asserts.
Run: ``make bench`` or ``.venv/bin/python bench/elements.py [--quick]``.
"""

from __future__ import annotations

import argparse
import math
import platform
import time

import numpy as np

from fric_core.baselines import KarnoppAdmittance
from fric_core.elements import (CompliantAdmittance, InertialImpedance, MasslessImpedance,
                                RigidAdmittance)
from fric_core.laws import AsymmetricFriction, Coulomb, CoulombViscous

T = 1e-3  # 1 kHz
BRASS = dict(Cp=1.7714, Cn=1.729, bp=0.457, bn=0.6196, Dp=2.1302, Dn=-1.8623, dv=0.05)


def per_step_us(step, inputs, repeats):
    """Best-of-``repeats`` wall time per call of ``step`` over the input list, in µs."""
    best = math.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        for x in inputs:
            step(x)
        best = min(best, time.perf_counter() - t0)
    return best / len(inputs) * 1e6


def loop_overhead_us(inputs, repeats):
    def nop(x):
        return x
    return per_step_us(nop, inputs, repeats)


def scalar_section(n_steps, repeats):
    t = np.arange(n_steps) * T
    # forces that alternate stick and slip (F = 8 N; |h| up to 12 N), velocities likewise
    forces = [float(x) for x in 12.0 * np.sin(2 * np.pi * 0.7 * t)]
    vels = [float(x) for x in 0.2 * np.sin(2 * np.pi * 0.7 * t)]
    cases = [
        ("KarnoppAdmittance (eq. 3), Coulomb", KarnoppAdmittance(1.0, Coulomb(8.0), T, 1e-3),
         forces),
        ("RigidAdmittance   (A, 26), Coulomb", RigidAdmittance(1.0, Coulomb(8.0), T), forces),
        ("InertialImpedance (B, 36), Coulomb",
         InertialImpedance(1.0, 1e4, 200.0, Coulomb(8.0), T), vels),
        ("MasslessImpedance (C, 38), Coulomb", MasslessImpedance(6000.0, 10.0, Coulomb(8.0), T),
         vels),
        ("CompliantAdmittance (D, 45), Coulomb",
         CompliantAdmittance(1.0, 1e4, 200.0, Coulomb(8.0), T), forces),
        ("MasslessImpedance (C), CoulombViscous",
         MasslessImpedance(6000.0, 10.0, CoulombViscous(8.0, 2.0), T), vels),
        ("MasslessImpedance (C), AsymmetricFriction",
         MasslessImpedance(6000.0, 100.0, AsymmetricFriction(**BRASS), T), vels),
    ]
    print(f"Scalar step, {n_steps} steps x {repeats} repeats (best), plain Python floats")
    print(f"  {'element':44s} {'us/step':>8s}  {'vs Karnopp':>10s}")
    res = {}
    for name, el, xs in cases:
        el.reset() if hasattr(el, "reset") else None
        us = per_step_us(el.step, xs, repeats)
        res[name] = us
    karnopp = res[cases[0][0]]
    for name, us in res.items():
        print(f"  {name:44s} {us:8.3f}  {us / karnopp:9.2f}x")
    print(f"  {'(loop + call overhead of a no-op function)':44s} "
          f"{loop_overhead_us(forces, repeats):8.3f}")
    c = res[cases[3][0]]
    a = res[cases[1][0]]
    print(f"  target: MasslessImpedance.step <= 2 us: {c:.3f} us "
          f"[{'PASS' if c <= 2.0 else 'FAIL'}]")
    print(f"  target: MasslessImpedance <= 1.5x Karnopp: {c / karnopp:.2f}x "
          f"[{'PASS' if c <= 1.5 * karnopp else 'FAIL'}]; "
          f"RigidAdmittance vs Karnopp (same structure: mass + friction): {a / karnopp:.2f}x")
    return res


def vector_section(sizes, budget_s):
    print("\nVector step, one per-joint MasslessImpedance (Coulomb, per-joint K) and "
          "RigidAdmittance")
    print(f"  {'joints':>8s} {'C: us/step':>11s} {'C: joint-steps/s':>17s} "
          f"{'A: joint-steps/s':>17s}")
    rng = np.random.default_rng(0)
    out = {}
    for n in sizes:
        c = MasslessImpedance(np.full(n, 6000.0), 10.0, Coulomb(8.0), T)
        a = RigidAdmittance(np.full(n, 1.0), Coulomb(8.0), T)
        u = [rng.normal(size=n) * 0.05 for _ in range(16)]
        h = [rng.normal(size=n) * 8.0 for _ in range(16)]
        reps = max(3, int(budget_s / max(n * 5e-9, 5e-6) / 16))
        tc = min(per_step_us(c.step, u * reps, 1) for _ in range(3))
        ta = min(per_step_us(a.step, h * reps, 1) for _ in range(3))
        out[n] = n / (tc * 1e-6)
        print(f"  {n:8d} {tc:11.2f} {n / (tc * 1e-6):17.3g} {n / (ta * 1e-6):17.3g}")
    big = max(sizes)
    print(f"  target: >= 2e7 joint-steps/s at {big} joints: {out[big]:.3g} "
          f"[{'PASS' if out[big] >= 2e7 else 'FAIL'}]")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer steps (smoke run)")
    args = ap.parse_args(argv)
    print(f"fric bench/elements.py — Python {platform.python_version()}, numpy {np.__version__}, "
          f"{platform.machine()}")
    scalar_section(20000 if args.quick else 200000, 3 if args.quick else 7)
    vector_section([1, 10, 1000, 100000], 0.05 if args.quick else 0.5)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
