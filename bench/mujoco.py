"""Benchmark of fric's exact joint friction inside MuJoCo (issue 25): drift and cost.

Prints, measured in one run:
* drift held at 50 % and 90 % of breakaway for 10 s (``--quick``: 2 s), h = 1 ms, for a 1-DOF
  hinge and the 7-joint arm (``urdf/arm7.urdf`` compiled by MuJoCo): MuJoCo's ``frictionloss``
  (default, and with ``noslip_iterations = 10``), MuJoCo 4.0's elasto-plastic joint springs
  (``springyield``) and :class:`fric_core.mujoco.FrictionStepper` — the scenarios of
  ``examples/mujoco_friction_hold.py`` (target: FrictionStepper |Δq| ≤ 1e-9 rad);
* breakaway at 101 %: the first-step acceleration against (τ − C)/I (target: within 1 %);
* µs per step of ``FrictionStepper.step`` — the compiled step (``fric_core._mujoco_kernel``)
  and the numpy step (``compiled=False``) — beside ``mujoco.mj_step`` on the same model in the
  same run, alternate blocks of 200 steps from their own states (medians of the blocks' means),
  for the hinge and the arm held at 50 % (all joints stuck) and the arm driven by sinusoidal
  torques (joints sliding and sticking) (target: ≤ 2× mj_step for the 7-joint arm).

Nothing here asserts. Run: ``.venv/bin/python bench/mujoco.py [--quick]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")
# this script is bench/mujoco.py: its own folder first on sys.path would shadow the package
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != HERE]
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "examples"))

import mujoco  # noqa: E402

import mujoco_friction_hold as scenes  # noqa: E402

from fric_core.joint_friction import JointFriction, JointFrictionSet  # noqa: E402
from fric_core.mujoco import FrictionStepper  # noqa: E402

TARGET_RATIO = 2.0


def drift(seconds: float) -> None:
    print(f"== drift held below breakaway for {seconds:g} s (max over joints of |q(t) - q(0)|; "
          "after 1 s: what it moved once settled)")
    for system in ("hinge", "arm"):
        for ratio in (0.5, 0.9):
            for method in scenes.METHODS:
                _, dev = scenes.hold(system, method, ratio, seconds)
                settled = dev[int(round(1.0 / scenes.H)) - 1] if seconds > 1.0 else dev[0]
                print(f"  {system:5s} {ratio:4.0%} {method:16s} max |dq| {dev.max():9.3g} rad"
                      f"   after 1 s {abs(dev[-1] - settled):9.3g} rad")
    print("  target: FrictionStepper |dq| <= 1e-9 rad")
    print("== breakaway at 101 % (first-step acceleration)")
    for system in ("hinge", "arm"):
        for method in ("FrictionStepper", "frictionloss"):
            got, want = scenes.breakaway(system, method)
            print(f"  {system:5s} {method:16s} {got:10.5g} rad/s2   (tau - C)/I = {want:.5g}   "
                  f"{abs(got / want - 1):8.2%} off")
    print("  target: FrictionStepper within 1 %")


def _steppers_and_plain(system: str):
    """[(name, step, data)] at 50 % of breakaway: FrictionStepper compiled and numpy, each on its
    own (model, data), and ``mj_step`` on a twin without friction; and the applied torques."""
    applied, _, levels = scenes.loads(system, 0.5)
    names = scenes.system_setup(system)[3]
    fs = JointFrictionSet({n: JointFriction(Cp=float(c), Cn=float(c), bp=0.0, bn=0.0)
                           for n, c in zip(names, levels)})
    runs = []
    for compiled in (True, False):
        _, m, d, _ = scenes.build(system, "frictionloss", levels, applied)
        m.dof_frictionloss[:] = 0.0  # the stepper's friction replaces it
        st = FrictionStepper(m, d, fs, compiled=compiled)
        runs.append(("compiled" if compiled else "numpy", st.step, d))
    _, m2, d2, _ = scenes.build(system, "frictionloss", levels, applied)
    m2.dof_frictionloss[:] = 0.0  # the bare mj_step: no friction constraint rows
    runs.append(("mj_step", lambda m=m2, d=d2: mujoco.mj_step(m, d), d2))
    return runs, applied


def cost(blocks: int, block: int) -> None:
    print(f"== cost per step ({blocks} alternate blocks of {block} steps, medians of block means)")
    for system, driven in (("hinge", False), ("arm", False), ("arm", True)):
        runs, applied = _steppers_and_plain(system)
        times = [[] for _ in runs]
        k = [0] * len(runs)  # steps taken by each, for its own drive
        for _ in range(blocks):
            for i, (_, step, d) in enumerate(runs):
                t0 = time.perf_counter()
                for _ in range(block):
                    if driven:
                        d.qfrc_applied[:] = applied + 15.0 * np.sin(6.0 * k[i] * scenes.H)
                        k[i] += 1
                    step()
                times[i].append((time.perf_counter() - t0) / block * 1e6)
        c, n, mj = (float(np.median(t)) for t in times)
        what = "driven (sliding and sticking)" if driven else "held at 50 %"
        print(f"  {system:5s} {what:30s} FrictionStepper compiled {c:6.2f} us ({c / mj:4.2f}x)"
              f"   numpy {n:6.2f} us ({n / mj:5.2f}x)   mj_step {mj:5.2f} us")
    print(f"  target: FrictionStepper.step <= {TARGET_RATIO:g}x mj_step for the 7-joint arm")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="short holds and few timing blocks")
    a = ap.parse_args(argv)
    drift(2.0 if a.quick else 10.0)
    cost(*((5, 100) if a.quick else (100, 200)))  # blocks of < 1 ms: many, for the medians
    return 0


if __name__ == "__main__":
    sys.exit(main())
