"""Benchmark of fric_core.identification.fit_friction (paper 003, eqs. 5 and 6).

Prints the wall time of one fit, OLS and EIV (automatic Δv, noise estimated from the data: the
full default path), for 2 s of 1 kHz data (the paper's record; target < 10 ms) and for 10⁶
samples. Every figure is the best of several repeats. Nothing here asserts.
Run: ``make bench`` or ``.venv/bin/python bench/identification.py [--quick]``.
"""

from __future__ import annotations

import argparse
import math
import sys
import time

import numpy as np

from fric_core.haptics.identification import fit_friction
from fric_core.haptics.stage import SAMPLES

TARGET_2S_MS = 10.0


def data(n, seed=0, dt=1e-3):
    s = SAMPLES["brass"]
    rng = np.random.default_rng(seed)
    t = np.arange(n) * dt
    w = 2 * math.pi * 2.0
    x = 0.01 * np.sin(w * t)
    v = 0.01 * w * np.cos(w * t)
    a = -0.01 * w * w * np.sin(w * t)
    F = s.mass * a + s.law.phi(v)
    return (x, v + 3.18e-3 * rng.standard_normal(n), a + 0.2379 * rng.standard_normal(n),
            F + 0.062 * rng.standard_normal(n))


def best_ms(fn, repeats):
    best = math.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best * 1e3


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="few repeats, 1e5 instead of 1e6 samples")
    args = ap.parse_args(argv)
    reps = 3 if args.quick else 20
    big = 100_000 if args.quick else 1_000_000
    d2 = data(2000)
    dbig = data(big, seed=1)
    for method in ("ols", "eiv"):
        ms = best_ms(lambda: fit_friction(*d2, method=method), reps)
        ok = "ok" if ms < TARGET_2S_MS else "MISSED"
        print(f"fit_friction {method}: 2 s of 1 kHz data (2000 samples): {ms:8.3f} ms "
              f"(target < {TARGET_2S_MS:g} ms: {ok})")
        ms = best_ms(lambda: fit_friction(*dbig, method=method), max(1, reps // 5))
        print(f"fit_friction {method}: {big} samples: {ms:8.1f} ms "
              f"({ms / big * 1e6:.1f} ns/sample; no target)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
