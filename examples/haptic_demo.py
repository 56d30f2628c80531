"""fric demo (`make demo`): identify a sample and render it (the main job), the ROS 2 haptic
pipeline in both rendering modes, then the element demo.

First ``identify_and_render.py`` (the "haptic camera" of paper 003): a probe stage with the brass
sample, the ``friction_identifier`` fitting its mass and friction (OLS and EIV), the identified law
pushed to a renderer on a display stage and felt by a scripted operator; the estimates are printed
next to the simulated truth, refitted from the identifier's recording as ``fric identify`` does
(they must agree with the identifier's), and the rendering is checked against the identified law.
A realtime run on a loaded machine makes the identifier miss states; a record that lost more than
``MAX_LOST_FRACTION`` (5 %) of its samples is NOT TRUSTED and fails the verdict, saying so (run
it again on a quieter machine, or ``--sync lockstep``).

Then, for each rendering mode (impedance: model C, velocity in, force out; admittance: model A,
force in, position setpoint out) it runs

    fric launch haptic_render.launch.xml mode:=<mode> duration:=15.0 out_dir:=<out>/haptic_<mode>

in a subprocess: three ROS 2 node processes over loopback DDS — ``haptic_stage`` (the simulated
1-DOF stage of paper 003 at 1 kHz, an operator's hand on its handle), ``friction_renderer``
(Coulomb friction F = 4 N) and ``fric_recorder`` (records the run, writes ``run.npz``,
``summary.json`` and the plots ``timeseries.png`` and ``force_velocity.png``). The operator
rests 2 s, pushes 2 N for 10.5 s (below breakaway: the handle must not move), pushes 5.3 N for 0.2 s
(above: it slides against the kinetic level F) and lets go (it must stop without velocity sign
chatter). The demo checks all that on the recording, then runs ``element_demo.py`` (the paper's
figures), prints where every plot is, and exits 0 only if everything passed.

DDS: ``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST`` always; ``ROS_DOMAIN_ID`` from the environment
(the Makefile's 42) unless other nodes are already using that domain on this machine, in which
case a free one is picked (and printed).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

_ROOT = Path(__file__).resolve().parent.parent
for p in (str(_ROOT), str(Path(__file__).resolve().parent)):
    if p not in sys.path:
        sys.path.insert(0, p)

import identify_and_render  # noqa: E402
from fric_nodes.tools import pipeline, run_report  # noqa: E402
from fric_nodes.tools.user_errors import out_dir_problem  # noqa: E402

MODES = ("impedance", "admittance")
DURATION = 15.0  # s of stage time: the 14.2 s hand script and a little rest


def run_mode(mode: str, out: Path, env: dict, sync: str, timeout: float) -> tuple[bool, list]:
    """One pipeline run; returns (pipeline ok, checks)."""
    out_dir = out / f"haptic_{mode}"
    npz = out_dir / "run.npz"
    if npz.exists():
        npz.unlink()  # never check a stale recording
    cmd = pipeline.launch_command({"mode": mode, "sync": sync, "duration": DURATION,
                                   "out_dir": out_dir})
    print(f"== haptic pipeline, {mode} mode ({sync}): fric {' '.join(cmd[3:])}", flush=True)
    t0 = time.monotonic()
    try:
        rc = subprocess.run(cmd, env=env, cwd=_ROOT, timeout=timeout).returncode
    except subprocess.TimeoutExpired:
        print(f"  FAIL  the launch did not end within {timeout:g} s")
        return False, []
    wall = time.monotonic() - t0
    checks = [("launch exited 0", rc == 0, f"exit status {rc}, {wall:.1f} s wall")]
    if not npz.is_file():
        checks.append(("recorder wrote run.npz", False, str(npz)))
    else:
        data = run_report.load_run(npz)
        summary = run_report.analyze(data)
        pngs = [out_dir / "timeseries.png", out_dir / "force_velocity.png"]
        checks.append(("recorder wrote the plots", all(p.is_file() and p.stat().st_size > 0
                                                        for p in pngs),
                       ", ".join(str(p) for p in pngs)))
        checks += pipeline.physics_checks(summary, mode=mode)
    print(f"-- {mode} checks:")
    for name, ok, detail in checks:
        print(f"  {'PASS' if ok else 'FAIL'}  {name}  [{detail}]")
    print(flush=True)
    return rc == 0, checks


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="out/demo", help="output directory (default out/demo)")
    ap.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    ap.add_argument("--sync", choices=("realtime", "lockstep"), default="realtime",
                    help="realtime: the stage's 1 kHz servo on the wall clock (default); "
                         "lockstep: the stage waits for each command (deterministic)")
    ap.add_argument("--no-elements", action="store_true", help="skip the element demo")
    ap.add_argument("--no-identify", action="store_true", help="skip identify-then-render")
    ap.add_argument("--timeout", type=float, default=120.0, help="per pipeline run [s]")
    args = ap.parse_args(argv)
    problem = out_dir_problem(args.out, "--out")
    if problem:
        ap.error(problem)
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    t_all = time.monotonic()

    _, env = pipeline.demo_env(log=print)
    print()

    rows = []  # (what, passed, total, pngs)
    if not args.no_identify:
        d = out / "identify_and_render"
        checks = identify_and_render.run(d, env, args.sync, args.timeout + 60.0)
        identify_and_render.report(checks)
        rows.append(("identify brass, then render it", sum(ok for _, ok, _ in checks),
                     max(len(checks), 1),
                     sorted((d / "identification").glob("*.png"))
                     + [d / "identification" / "estimates.md", d / "display" / "timeseries.png"]))
    for mode in args.modes:
        _, checks = run_mode(mode, out, env, args.sync, args.timeout)
        d = out / f"haptic_{mode}"
        rows.append((f"haptic pipeline ({mode})", sum(ok for _, ok, _ in checks),
                     max(len(checks), 1), [d / "timeseries.png", d / "force_velocity.png"]))

    if not args.no_elements:
        print("== element demo (paper 000 figures)", flush=True)
        import element_demo
        rc = element_demo.main(["--out", str(out)])
        rows.append(("element demo (paper figures)", int(rc == 0), 1,
                     sorted(out.glob("*.png"))))
        print()

    print("=" * 78)
    ok_all = True
    for what, passed, total, pngs in rows:
        ok = passed == total
        ok_all &= ok
        print(f"{what:<32} {passed:>3}/{total:<3} {'PASS' if ok else 'FAIL'}")
        for p in pngs:
            print(f"{'':<4}{p}")
    print("-" * 78)
    print(f"{'all':<32} {time.monotonic() - t_all:6.1f} s  {'PASS' if ok_all else 'FAIL'}")
    print(f"plots and recordings in {out}")
    return 0 if ok_all else 1


if __name__ == "__main__":
    sys.exit(main())
