"""Benchmark of fric_core.arm_identification.fit_arm_friction (issue 15: target ≤ 2 s).

60 s of the shipped 7-DOF arm ("arm7") recorded at 1 kHz (420 000 joint rows): a multi-sine
trajectory, 17-bit joint encoders, 0.03 N·m torque noise, rotor inertias, asymmetric friction
(and, for the gear law, efficiencies); the velocity and acceleration carry white noise of known
variance (σ_v = 0.003 rad/s, σ_a = 0.2 rad/s²: several times what zero-phase filtered
differentiation of such an encoder leaves, ~0.02–0.05 rad/s² at a 20 Hz cut-off). Printed: the
wall time of the default fit (rigid body identified, OLS and EIV, asymmetric law; the gear law
with the URDF trusted, and with the rigid body identified), the regressor + fit, beside the plain
baseline — the same design (Pinocchio regressor reduced to the base set + friction columns,
band rows removed) built whole and solved by ``np.linalg.lstsq`` — and each one's worst error
in the Coulomb and viscous terms against the truth. Every time is the best of several repeats.
No decimation is needed for the target (≈ 0.85 s for EIV on an idle core; the times grow
several-fold when other processes share the cores — run it alone, ``OPENBLAS_NUM_THREADS=1``
helps on a loaded machine). Nothing here asserts.
Run: ``.venv/bin/python bench/arm_identification.py [--quick]``.
"""

from __future__ import annotations

import argparse
import math
import sys
import time

import numpy as np

from fric_core.arm_identification.fit import fit_arm_friction
from fric_core.arm_identification.joint_friction import JointFriction
from fric_core.arm_identification.regressor import (base_parameters, friction_columns,
                                                    rigid_body_regressor)
from fric_core.arm_identification.synthetic import multisine_trajectory, simulate_arm_recording
from fric_core.transmission.urdf_dynamics import UrdfDynamics

TARGET_S = 2.0
SIGMA_V, SIGMA_A = 0.003, 0.2
KEYS = ("Cp", "Cn", "bp", "bn")


def data(dyn, duration, gear=False, seed=0):
    fr = {nm: JointFriction(0.5 + 0.1 * i, 0.4 + 0.05 * i, 0.2 + 0.05 * i, 0.3 - 0.02 * i,
                            eta_f=(0.85 - 0.02 * i) if gear else None,
                            eta_b=(0.75 - 0.03 * i) if gear else None)
          for i, nm in enumerate(dyn.joint_names)}
    t, q, v, a = multisine_trajectory(dyn, duration=duration, rate=1000.0, amplitude=1.0,
                                      seed=seed)
    rec = simulate_arm_recording(dyn, t, q, v, a, fr, armature=np.linspace(0.3, 0.05, dyn.n),
                                 seed=seed + 1)
    rng = np.random.default_rng(seed + 2)
    vn = v + SIGMA_V * rng.standard_normal(v.shape)
    an = a + SIGMA_A * rng.standard_normal(a.shape)
    return fr, (rec.q, vn, an, rec.tau)


def baseline(dyn, base, q, v, a, tau, dv):
    """The same design as the default fit, built whole, solved by np.linalg.lstsq."""
    Y = base.reduce(rigid_body_regressor(dyn, q, v, a, armature=True))
    F, keep = friction_columns(v, dv)
    A = np.hstack([Y, F])[keep]
    x, *_ = np.linalg.lstsq(A, tau.reshape(-1)[keep], rcond=None)
    fric = x[Y.shape[1]:].reshape(dyn.n, 4)  # Cp, bp, Cn, bn
    return {nm: dict(Cp=fric[j, 0], bp=fric[j, 1], Cn=fric[j, 2], bn=fric[j, 3])
            for j, nm in enumerate(dyn.joint_names)}


def worst(est, fr):
    return {k: max(abs(est[nm][k] - getattr(p, k)) for nm, p in fr.items()) for k in KEYS}


def best_s(fn, repeats):
    best, out = math.inf, None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def fmt(err):
    return ", ".join(f"{k} {err[k]:.4f}" for k in KEYS)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="one repeat, 10 s instead of 60 s")
    args = ap.parse_args(argv)
    reps = 1 if args.quick else 3
    duration = 10.0 if args.quick else 60.0
    dyn = UrdfDynamics("arm7")
    base = base_parameters(dyn, armature=True)
    fr, d = data(dyn, duration)
    rows = d[0].shape[0] * dyn.n
    noise = {"var_v": np.full(dyn.n, SIGMA_V ** 2), "var_a": np.full(dyn.n, SIGMA_A ** 2)}
    print(f"arm7, {duration:g} s at 1 kHz ({rows} joint rows; errors: worst over the 7 joints, "
          "N·m and N·m·s/rad)")
    s, est = best_s(lambda: baseline(dyn, base, *d, 0.02), reps)
    print(f"  baseline np.linalg.lstsq (design built whole): {s:6.2f} s   errors "
          f"{fmt(worst(est, fr))}")
    for method in ("ols", "eiv"):
        s, fit = best_s(lambda: fit_arm_friction(*d, dyn, method=method, dv=0.02, base=base,
                                                 noise=noise), reps)
        ok = "ok" if s <= TARGET_S else "MISSED"
        print(f"  fit_arm_friction identify {method}:             {s:6.2f} s   errors "
              f"{fmt(worst(fit.joints, fr))}   (target ≤ {TARGET_S:g} s: {ok})")
    frg, dg = data(dyn, duration, gear=True)
    s, fit = best_s(lambda: fit_arm_friction(*dg, dyn, dynamics="urdf", law="gear",
                                             method="eiv", dv=0.02, noise=noise), reps)
    eta = max(abs(fit.joints[nm][k] - getattr(p, k)) for nm, p in frg.items()
              if fit.determined[nm]["eta_f"] and fit.determined[nm]["eta_b"]
              for k in ("eta_f", "eta_b"))
    print(f"  fit_arm_friction gear, urdf, eiv:          {s:6.2f} s   errors "
          f"{fmt(worst(fit.joints, frg))}, eta {eta:.4f} (determined joints; no target)")
    s, fit = best_s(lambda: fit_arm_friction(*dg, dyn, law="gear", method="eiv", dv=0.02,
                                             noise=noise), 1)
    prod = max(abs(fit.joints[nm]["eta_product"] - p.eta_f * p.eta_b) for nm, p in frg.items()
               if fit.determined[nm]["eta_product"])
    print(f"  fit_arm_friction gear, identify, eiv:      {s:6.2f} s   errors "
          f"{fmt(worst(fit.joints, frg))}, eta_f·eta_b {prod:.4f} (Gauss–Newton; one run; "
          "no target)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
