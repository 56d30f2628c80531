"""Benchmark of fric's exact joint friction inside MuJoCo (issue 25): drift and cost.

Prints, measured in one run:
* drift held at 50 % and 90 % of breakaway for 10 s (``--quick``: 2 s), h = 1 ms, for a 1-DOF
  hinge and the 7-joint arm (``urdf/arm7.urdf`` compiled by MuJoCo): MuJoCo's ``frictionloss``
  (default, and with ``noslip_iterations = 10``), MuJoCo 4.0's elasto-plastic joint springs
  (``springyield``) and :class:`fric_core.mujoco.FrictionStepper` — the scenarios of
  ``examples/mujoco_friction_hold.py`` (target: FrictionStepper |Δq| ≤ 1e-9 rad);
* breakaway at 101 %: the first-step acceleration against (τ − C)/I (target: within 1 %);
* µs per step of ``FrictionStepper.step`` beside ``mujoco.mj_step`` on the same model in the
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


def _stepper_and_plain(system: str):
    """(FrictionStepper.step, its (model, data), a twin (model, data) without friction for
    mj_step, the applied torques) at 50 % of breakaway."""
    applied, _, levels = scenes.loads(system, 0.5)
    st_step, m1, d1, _ = scenes.build(system, "FrictionStepper", levels, applied)
    _, m2, d2, _ = scenes.build(system, "frictionloss", levels, applied)
    m2.dof_frictionloss[:] = 0.0  # the bare mj_step: no friction constraint rows
    return st_step, (m1, d1), (m2, d2), applied


def cost(blocks: int, block: int) -> None:
    print(f"== cost per step ({blocks} alternate blocks of {block} steps, medians of block means)")
    for system, driven in (("hinge", False), ("arm", False), ("arm", True)):
        st_step, (m1, d1), (m2, d2), applied = _stepper_and_plain(system)
        t_st, t_mj = [], []
        k = [0, 0]  # steps taken by each, for its own drive
        for _ in range(blocks):
            for which in (0, 1):
                m, d = (m1, d1) if which == 0 else (m2, d2)
                t0 = time.perf_counter()
                for _ in range(block):
                    if driven:
                        d.qfrc_applied[:] = applied + 15.0 * np.sin(6.0 * k[which] * scenes.H)
                        k[which] += 1
                    if which == 0:
                        st_step()
                    else:
                        mujoco.mj_step(m, d)
                dt = (time.perf_counter() - t0) / block * 1e6
                (t_st if which == 0 else t_mj).append(dt)
        a, b = float(np.median(t_st)), float(np.median(t_mj))
        what = "driven (sliding and sticking)" if driven else "held at 50 %"
        print(f"  {system:5s} {what:30s} FrictionStepper.step {a:7.2f} us   mj_step {b:6.2f} us"
              f"   ratio {a / b:5.2f}x")
    print(f"  target: FrictionStepper.step <= {TARGET_RATIO:g}x mj_step for the 7-joint arm")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="short holds and few timing blocks")
    a = ap.parse_args(argv)
    drift(2.0 if a.quick else 10.0)
    cost(*((5, 100) if a.quick else (30, 200)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
