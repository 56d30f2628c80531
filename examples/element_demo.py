"""fric demo: reproduce the papers' figures and check them (`make demo`).

Runs, in order,

* ``fig06_07_model_a.py``   — model A: zero-velocity reaching and velocity reversal (Figs. 6, 7);
* ``fig11_two_masses.py``   — two masses on two model-C contacts, stick-slip (Figs. 9-11);
* ``fig13_14_models_b_d.py`` — models B and D vs their composite alternatives (Figs. 12-14);
* ``drift_comparison.py``   — models A, C, D vs Karnopp, LuGre and Dahl under a sub-breakaway
  oscillating force (needs ``fric_core.baselines`` and ``fric_core.coupling``);
* ``fig09_transmission_rod.py`` — paper 004 Sec. 6.1, Fig. 9: a geared rod pushing a stiff
  contact, γ_v from backdrivable to self-locking;
* ``fig11_12_transmission_arm.py`` — paper 004 Sec. 6.2, Figs. 11–12: the 2-DOF geared arm
  against a moving wall;
* ``modular_rolling_sphere.py``, ``modular_two_link.py`` — paper 001 Sec. IV with RK4: a sphere
  sliding into pure rolling; the two-link mechanism holding still under I_fricK while LuGre
  drifts, and its penalty-based twin;
* ``planar_velocity_profile.py``, ``planar_drift.py``, ``planar_in_hand.py``,
  ``planar_convergence.py`` — paper 002: distributed vs reduced planar LuGre on the Fig. 5
  profile, Elasto-Plastic vs LuGre drift, the in-hand slip-stick object, convergence;

prints every check, then a summary table and where the PNGs are. Exit status 0 iff every check
passes.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import time
import traceback
from pathlib import Path

from _plotting import parse_args

SCRIPTS = ["fig06_07_model_a", "fig11_two_masses", "fig13_14_models_b_d", "drift_comparison",
           "fig09_transmission_rod", "fig11_12_transmission_arm",
           "modular_rolling_sphere", "modular_two_link",
           "planar_velocity_profile", "planar_drift", "planar_in_hand", "planar_convergence"]


def _drift_available() -> bool:
    return all(importlib.util.find_spec(m) is not None
               for m in ("fric_core.baselines", "fric_core.coupling"))


def main(argv=None) -> int:
    args = parse_args(argv, __doc__.splitlines()[0], quick=True)
    t_all = time.perf_counter()
    rows = []  # (script, passed, total, seconds, pngs, note)
    for name in SCRIPTS:
        if name == "drift_comparison" and not _drift_available():
            print(f"== {name}: SKIPPED (fric_core.baselines / fric_core.coupling not present)")
            rows.append((name, 0, 0, 0.0, [], "skipped: baselines not available"))
            continue
        t0 = time.perf_counter()
        try:
            mod = importlib.import_module(name)
            chk = mod.run(args.out, quick=args.quick)
            res = chk.results
            passed, total = sum(ok for _, ok, _ in res), len(res)
            rows.append((name, passed, total, time.perf_counter() - t0, chk.pngs, ""))
            for p in chk.pngs:
                if not Path(p).is_file() or Path(p).stat().st_size == 0:
                    rows[-1] = rows[-1][:5] + (f"missing PNG {p}",)
        except Exception:  # a crashing script is a failed check, not a crashed demo
            traceback.print_exc()
            rows.append((name, 0, 1, time.perf_counter() - t0, [], "raised an exception"))
        print()

    print("=" * 78)
    print(f"{'script':<28} {'checks':>9} {'time':>7}  result")
    print("-" * 78)
    ok_all = True
    for name, passed, total, sec, pngs, note in rows:
        ok = passed == total and not note.startswith(("missing", "raised"))
        ok_all &= ok
        res = "skipped" if note.startswith("skipped") else ("PASS" if ok else "FAIL")
        print(f"{name:<28} {passed:>4}/{total:<4} {sec:6.1f}s  {res}" + (f"  ({note})" if note
                                                                           else ""))
        for p in pngs:
            print(f"{'':<28} {'':>9} {'':>7}  {p}")
    print("-" * 78)
    print(f"{'all':<28} {sum(r[1] for r in rows):>4}/{sum(r[2] for r in rows):<4} "
          f"{time.perf_counter() - t_all:6.1f}s  {'PASS' if ok_all else 'FAIL'}")
    print(f"PNGs in {Path(args.out).resolve()}")
    return 0 if ok_all else 1


if __name__ == "__main__":
    sys.exit(main())
