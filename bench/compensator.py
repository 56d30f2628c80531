"""Benchmark of the joint friction compensator (issue 15, fric_core.compensation).

Prints, measured side by side in one run:
* µs per 1 kHz step for 7 joints of :class:`FrictionCompensator` (paper 000's model C on the
  played encoder position, relaxed at rest; with the controller command added and saturation)
  beside the plain Coulomb ``sign(v)`` baseline (:class:`SignCompensator`), target ≤ 50 µs;
* the same with the URDF gravity torque of the bundled 7-DOF arm (Pinocchio rnea) added, with the
  identified gravity (``gravity: identified``: Pinocchio's gravity on inertias equivalent to β),
  and with the gear model's load-dependent levels (the command as the load torque, K rescaled per
  step), and with 6-knot friction curves (``law: curve``, issue 23) and effort offsets;
* the transient allocation peak over 500 steps (tracemalloc, bytes: numpy scalars only, nothing
  is kept from step to step);
* sign changes of the compensation over 7 velocity reversals of an encoder-quantised, noisy
  position (1e-4 rad counts, 0.3 counts of noise), implicit vs sign(v).

Every timing is the best of several repeats (the least-disturbed run on a shared machine).
Nothing here asserts. Run: ``.venv/bin/python bench/compensator.py [--quick]``.
"""

from __future__ import annotations

import argparse
import math
import platform
import tracemalloc

import numpy as np

from fric_core.arm_identification.joint_friction import FrictionCurve, JointFriction
from fric_core.compensation import FrictionCompensator, SignCompensator, sign_changes

from elements import per_step_us  # bench/elements.py, this script's neighbour

T = 1e-3
N_JOINTS = 7
TARGET_US = 50.0
RES = 1e-4


def _friction(gear: bool = False, curve: bool = False):
    rng = np.random.default_rng(0)
    out = []
    for _ in range(N_JOINTS):
        cp, cn = rng.uniform(0.5, 3.0, 2)
        bp, bn = rng.uniform(0.1, 1.0, 2)
        kw = dict(eta_f=0.8, eta_b=0.6) if gear else {}
        if curve:  # a saturating 6-knot curve per side (issue 23) and an effort offset
            v = np.array([0.0, 0.05, 0.1, 0.3, 0.6, 1.2])
            sides = [(v, c + b * 0.3 * np.tanh(v / 0.3)) for c, b in ((cp, bp), (cn, bn))]
            kw.update(law="curve", curve=FrictionCurve.make(*sides[0], *sides[1]),
                      offset=float(rng.uniform(-0.2, 0.2)))
        out.append(JointFriction(float(cp), float(cn), float(bp), float(bn), **kw))
    return out


def _positions(n_steps: int) -> list:
    """Per step, the 7 joints' encoder-quantised positions of a multi-sine (reversals included)."""
    t = np.arange(n_steps)[:, None] * T
    f = np.linspace(0.3, 1.2, N_JOINTS)[None, :]
    q = 0.4 * np.sin(2 * np.pi * f * t) + 0.1 * np.sin(2 * np.pi * 3.1 * f * t)
    q = RES * np.round(q / RES)
    return [np.ascontiguousarray(row) for row in q]




def allocations_per_step(step, inputs) -> float:
    """Net bytes still allocated after running ``step`` over ``inputs`` (0: nothing kept), and
    the peak of transient allocation per step."""
    step(inputs[0])
    tracemalloc.start()
    tracemalloc.reset_peak()
    for x in inputs:
        step(x)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak


def cost_section(n_steps: int, repeats: int) -> None:
    pos = _positions(n_steps)
    cmd = np.linspace(-5.0, 5.0, N_JOINTS)
    jf = _friction()
    comp = FrictionCompensator(jf, T, resolution=RES, max_effort=20.0)
    base = SignCompensator(jf, T)
    from fric_core.transmission.urdf_dynamics import UrdfDynamics
    dyn = UrdfDynamics("arm7")
    comp_g = FrictionCompensator(jf, T, resolution=RES, max_effort=80.0,
                                 gravity=dyn.gravity_torque)
    comp_gear = FrictionCompensator(_friction(gear=True), T, resolution=RES, max_effort=80.0)
    # the identified gravity (gravity: identified): Y(q, 0, 0) β of a base set (here the URDF's β)
    from fric_core.arm_identification.regressor import base_parameters
    from fric_core.arm_identification.rigid_body import IdentifiedGravity, rigid_body_from_fit
    bp = base_parameters(dyn, armature=True)
    beta = bp.beta(np.concatenate([dyn.model.inertias[i].toDynamicParameters()
                                   for i in range(1, dyn.model.njoints)]))
    ig = IdentifiedGravity(dyn, rigid_body_from_fit(dyn, bp, beta, np.zeros_like(beta)))
    g_buf = np.zeros(N_JOINTS)
    comp_ig = FrictionCompensator(jf, T, resolution=RES, max_effort=80.0,
                                  gravity=lambda q: ig.torque(q, out=g_buf))

    def gear_step(p):  # the node's default gear_load: command
        return comp_gear.step(p, cmd, load=cmd)

    comp_curve = FrictionCompensator(_friction(curve=True), T, resolution=RES, max_effort=20.0)
    base_curve = SignCompensator(_friction(curve=True), T)

    cases = [
        ("sign(v) Coulomb + viscous (baseline)", base.step),
        ("implicit model C compensator + command", lambda p: comp.step(p, cmd)),
        ("  + URDF gravity (arm7, Pinocchio)", lambda p: comp_g.step(p, cmd)),
        ("  + identified gravity (arm7, identified β)", lambda p: comp_ig.step(p, cmd)),
        ("implicit + gear levels (load = command)", gear_step),
        ("implicit, curve law (6 knots a side) + offset", lambda p: comp_curve.step(p, cmd)),
        ("sign(v), curve law (6 knots a side) + offset", base_curve.step),
        ("(URDF gravity torque alone)", dyn.gravity_torque),
        ("(identified gravity torque alone)", lambda p: ig.torque(p, out=g_buf)),
    ]
    print(f"Cost per 1 kHz step, {N_JOINTS} joints, {n_steps} steps x {repeats} repeats (best)")
    print(f"  {'case':46s} {'us/step':>8s} {'vs sign(v)':>10s} {'peak B':>8s}")
    res = []
    for name, step in cases:
        res.append((name, per_step_us(step, pos, repeats), allocations_per_step(step, pos[:500])))
    b = res[0][1]
    for name, us, peak in res:
        print(f"  {name:46s} {us:8.2f} {us / b:9.2f}x {peak:8d}")
    print(f"  target: implicit compensator <= {TARGET_US:g} us per step for {N_JOINTS} joints "
          f"(the 1 kHz budget leaves the rest to the node and DDS)")


def sign_section() -> None:
    rng = np.random.default_rng(7)
    t = np.arange(8000) * T
    q = 0.2 * np.cos(math.pi * t)  # reversals at 1, 2, ..., 7 s
    jf = [JointFriction(1.0, 0.8, 0.2, 0.3)]
    comp = FrictionCompensator(jf, T, resolution=RES)
    base = SignCompensator(jf, T)
    f_imp, f_sign = np.zeros(t.size), np.zeros(t.size)
    p = np.zeros(1)
    for k in range(t.size):
        p[0] = RES * round((q[k] + rng.normal(0.0, 0.3 * RES)) / RES)
        f_imp[k] = comp.step(p)[0]
        f_sign[k] = base.step(p)[0]
    print("Sign changes of the compensation over 7 reversals (1e-4 rad counts, 0.3 counts noise)")
    print(f"  implicit model C: {sign_changes(f_imp[100:]):4d}    sign(v): "
          f"{sign_changes(f_sign[100:]):4d}    (ideal: 7)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer steps and repeats")
    a = ap.parse_args()
    n_steps, repeats = (2000, 3) if a.quick else (20000, 5)
    print(f"bench/compensator.py on {platform.machine()} {platform.python_implementation()} "
          f"{platform.python_version()}, numpy {np.__version__}")
    cost_section(n_steps, repeats)
    sign_section()


if __name__ == "__main__":
    main()
