"""Benchmark of ``fric identify`` end to end — bag to report — on the shipped 7-DOF arm (issue 23).

A simulated arm7 recording at 1 kHz (multi-sine per joint, 17-bit encoders, 0.03 N·m torque
noise, rotor inertias, asymmetric friction) is written as an MCAP bag of sensor_msgs/JointState,
one message per sample, generated and written in 60 s chunks (the generator's memory does not
grow with the duration). Then :func:`fric_nodes.tools.arm_identify.identify_arm` runs on it in a
fresh Python process, as ``fric identify BAG --urdf arm7 --out DIR`` does (default options), and
the bench prints:

* the end-to-end time of the identification (bag write excluded; module imports excluded and
  printed apart — they are the same for any recording), and its split: read (the bag's rows),
  prepare (segments, filtering, derivatives), effort lag (its search, the fits in it included),
  fit (every other ``fit_arm_friction`` call: ``--model auto`` fits more than one law), predict
  (the fitted model on the fitted and held-out rows, outside the fit), report (figures and
  report.md), other (the URDF, the parameter files, what the steps do between the calls);
* the process's peak resident memory (``ru_maxrss``) for the 60 s recording and for a long one
  (``--long``, default 3600 s: an hour; generating it takes a few minutes and 1.1 GB of disk,
  ``--long 600`` takes a tenth), and the peak during each step (RSS sampled every 5 ms).

Run: ``.venv/bin/python bench/arm_identify_pipeline.py [--duration 60] [--long 3600]
[--model asymmetric] [--dynamics identify,auto] [--predict-chunk 8192] [--keep DIR]
[--quick]``; ``OPENBLAS_NUM_THREADS=1``
on a loaded machine (the BLAS threads then do not fight the other processes). Nothing here asserts;
the targets (≤ 2 s for 60 s, ≤ 1 GiB for an hour) are printed beside the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

TARGET_S = 2.0
TARGET_RSS_MIB = 1024.0
RATE = 1000.0
CHUNK_S = 60.0
FREQUENCIES = (0.1, 0.23, 0.37, 0.51)


def write_bag(path: Path, duration: float, seed: int = 0) -> dict:
    """The simulated arm7 recording of ``duration`` s at :data:`RATE`, written in chunks of
    :data:`CHUNK_S` s; returns the true friction (joint → (Cp, Cn, bp, bn))."""
    from fric_core.arm_identification.joint_friction import JointFriction
    from fric_core.arm_identification.joint_state_bag import JointStateBagWriter
    from fric_core.arm_identification.synthetic import simulate_arm_recording
    from fric_core.transmission.urdf_dynamics import UrdfDynamics

    dyn = UrdfDynamics("arm7")
    fr = {nm: JointFriction(0.5 + 0.1 * i, 0.4 + 0.05 * i, 0.2 + 0.05 * i, 0.3 - 0.02 * i)
          for i, nm in enumerate(dyn.joint_names)}
    rng = np.random.default_rng(seed)
    w = 2 * np.pi * np.asarray(FREQUENCIES)
    amp = rng.uniform(0.5, 1.0, (dyn.n, w.size))
    phase = rng.uniform(0, 2 * np.pi, (dyn.n, w.size))
    lo = np.where(np.isfinite(dyn.lower), dyn.lower, -np.inf)
    hi = np.where(np.isfinite(dyn.upper), dyn.upper, np.inf)
    center = np.where(np.isfinite(lo + hi), 0.5 * (lo + hi), 0.0)
    room = np.minimum(1.0, 0.5 * (hi - lo) - 0.2)
    k = room / amp.sum(axis=1)  # |q − c| ≤ k Σ A ≤ room for every t
    n_total = int(round(duration * RATE))
    step = int(round(CHUNK_S * RATE))
    with JointStateBagWriter(path, dyn.joint_names) as bag:
        for c, a in enumerate(range(0, n_total, step)):
            t = np.arange(a, min(a + step, n_total)) / RATE
            arg = t[:, None, None] * w + phase  # (N, joints, sines)
            q = center + k * np.einsum("tjs,js->tj", np.sin(arg), amp)
            v = k * np.einsum("tjs,js->tj", np.cos(arg), amp * w)
            acc = -k * np.einsum("tjs,js->tj", np.sin(arg), amp * w * w)
            sim = simulate_arm_recording(dyn, t, q, v, acc, fr,
                                         armature=np.linspace(0.3, 0.05, dyn.n),
                                         seed=seed + 1 + c)
            bag.write(1_700_000_000_000_000_000 + a * 1_000_000
                      + np.arange(t.size, dtype=np.int64) * 1_000_000, sim.q, None, sim.tau)
    return {nm: (p.Cp, p.Cn, p.bp, p.bn) for nm, p in fr.items()}


# run in the child process: identify with the steps timed and the RSS sampled
_CHILD = r"""
import json, os, resource, sys, threading, time
t0 = time.perf_counter()
import fric_core.arm_identification.fit as F
import fric_core.arm_identification.recording as R
import fric_core.arm_identification.report as REP
import fric_core.arm_identification.result as RES
import fric_core.arm_identification.signals as S
import matplotlib.backends.backend_agg, matplotlib.figure, rosbags.highlevel, yaml  # noqa
from fric_nodes.tools.arm_identify import identify_arm
imports = time.perf_counter() - t0
page = os.sysconf("SC_PAGE_SIZE")
stack, times, peaks, done = ["other"], {}, {}, []

def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * page

def sample():
    while not done:
        r, p = rss(), stack[-1]
        peaks[p] = max(peaks.get(p, 0), r)
        time.sleep(0.005)

def timed(obj, name, label):
    f = getattr(obj, name)
    def g(*a, **k):
        if len(stack) > 1:  # called by a timed step (the lag search's fits): that step's time
            return f(*a, **k)
        stack.append(label)
        s = time.perf_counter()
        try:
            return f(*a, **k)
        finally:
            stack.pop()
            times[label] = times.get(label, 0.0) + time.perf_counter() - s
    setattr(obj, name, g)

chunk = int(os.environ.get("BENCH_PREDICT_CHUNK", "0"))
if chunk:  # ArmFrictionFit.predict a chunk of rows at a time (see --predict-chunk)
    import numpy as np
    whole = RES.ArmFrictionFit.predict
    def predict(self, q, v, a):
        q, v, a = (np.asarray(x, dtype=float) for x in (q, v, a))
        return np.concatenate([whole(self, q[i:i + chunk], v[i:i + chunk], a[i:i + chunk])
                               for i in range(0, max(q.shape[0], 1), chunk)])
    RES.ArmFrictionFit.predict = predict
timed(R, "read_arm_recording", "read"); timed(S, "prepare", "prepare")
timed(S, "estimate_effort_lag", "effort lag"); timed(F, "fit_arm_friction", "fit")
timed(RES.ArmFrictionFit, "predict", "predict"); timed(REP, "write_arm_report", "report")
if os.environ.get("BENCH_SAMPLE_RSS") == "1":
    threading.Thread(target=sample, daemon=True).start()
base = rss()
s = time.perf_counter()
opts = {"model": sys.argv[3]} if len(sys.argv) > 3 and sys.argv[3] else {}
if os.environ.get("BENCH_DYNAMICS"):
    opts["dynamics"] = os.environ["BENCH_DYNAMICS"]
res = identify_arm(sys.argv[1], "arm7", sys.argv[2], **opts)
total = time.perf_counter() - s
done.append(1)
out = {"imports": imports, "total": total, "times": times, "base_rss": base,
       "peaks": peaks, "maxrss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
       "maxrss_children": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024,
       "warnings": res.warnings,
       "friction": {n: [getattr(j, k) for k in ("Cp", "Cn", "bp", "bn")]
                    for n, j in res.friction.joints.items()},
       "std": {n: [j.std.get(k, float("nan")) for k in ("Cp", "Cn", "bp", "bn")]
               for n, j in res.friction.joints.items()}}
print("BENCH " + json.dumps(out))
"""


def identify(bag: Path, out: Path, sample_rss: bool, model: str | None,
             predict_chunk: int = 0, dynamics: str | None = None) -> dict:
    """The child's measurements of one identification of ``bag`` (``model``: ``--model``, None
    for fric identify's default; ``predict_chunk``: see ``--predict-chunk``; ``dynamics``:
    ``--dynamics``, None for the default)."""
    env = dict(os.environ, BENCH_SAMPLE_RSS="1" if sample_rss else "0",
               BENCH_PREDICT_CHUNK=str(predict_chunk), BENCH_DYNAMICS=dynamics or "")
    cmd = [sys.executable, "-c", _CHILD, str(bag), str(out), model or ""]
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=3600)
    line = next((ln for ln in r.stdout.splitlines() if ln.startswith("BENCH ")), None)
    if r.returncode != 0 or line is None:
        raise SystemExit(f"identification of {bag} failed:\n{r.stderr[-3000:]}")
    return json.loads(line[6:])


def mib(x: float) -> str:
    return f"{x / 2 ** 20:.0f} MiB"


def report(label: str, m: dict, true: dict, timing: bool) -> None:
    order = ["read", "prepare", "effort lag", "fit", "predict", "report"]
    t = m["times"]
    other = m["total"] - sum(t.get(k, 0.0) for k in order)
    print(f"{label}:")
    ok = f" (target ≤ {TARGET_S:g} s: {'ok' if m['total'] <= TARGET_S else 'MISSED'})"
    print(f"  end to end {m['total']:.2f} s{ok if timing else ''}; module imports "
          f"{m['imports']:.2f} s more")
    print("  split: " + ", ".join(f"{k} {t.get(k, 0.0):.2f}" for k in order)
          + f", other {other:.2f} s")
    ok = "ok" if m["maxrss"] <= TARGET_RSS_MIB * 2 ** 20 else "MISSED"
    print(f"  peak RSS {mib(m['maxrss'])} (target ≤ {TARGET_RSS_MIB:g} MiB: {ok}); after "
          f"imports {mib(m['base_rss'])}; largest forked child (fric_core.forked, the report's "
          f"figure; its pages shared with the parent until written) "
          f"{mib(m.get('maxrss_children', 0))}")
    if m["peaks"]:
        print("  peak RSS during: " + ", ".join(f"{k} {mib(v)}" for k, v in m["peaks"].items()))
    worst = max(abs(m["friction"][n][i] - true[n][i]) / m["std"][n][i]
                for n in true for i in range(4))
    print(f"  worst friction error {worst:.1f} std; warnings: "
          + ("; ".join(w[:110] for w in m["warnings"]) or "none"))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--duration", type=float, default=60.0, help="the timed recording [s]")
    ap.add_argument("--long", type=float, default=3600.0,
                    help="the long recording for peak memory [s] (0: none)")
    ap.add_argument("--model", default=None,
                    help="fric identify --model (default: its default)")
    ap.add_argument("--dynamics", default=None,
                    help="fric identify --dynamics (default: its default); a comma-separated "
                         "list times each, interleaved in one run (e.g. identify,auto)")
    ap.add_argument("--predict-chunk", type=int, default=0, metavar="ROWS",
                    help="evaluate ArmFrictionFit.predict ROWS rows at a time (patched in the "
                         "bench only: what predict would cost chunked; 0: as it is)")
    ap.add_argument("--keep", type=Path, default=None,
                    help="write the bags here and keep them (reused when present)")
    ap.add_argument("--quick", action="store_true",
                    help="smoke run: a 10 s recording timed once, no long one")
    args = ap.parse_args(argv)
    if args.quick:
        args.duration, args.long = 10.0, 0.0
    work = Path(tempfile.mkdtemp(prefix="fric_bench_")) if args.keep is None else args.keep
    work.mkdir(parents=True, exist_ok=True)
    try:
        runs = [(args.duration, True)] + ([(args.long, False)] if args.long > 0 else [])
        for duration, timing in runs:
            bag = work / f"arm7_{duration:g}s"
            t0 = time.perf_counter()
            if bag.exists():
                true = json.loads((work / f"{bag.name}.json").read_text())
            else:
                true = write_bag(bag, duration)
                (work / f"{bag.name}.json").write_text(json.dumps(true))
            size = sum(p.stat().st_size for p in bag.iterdir())
            print(f"arm7 {duration:g} s at {RATE:g} Hz: {int(duration * RATE)} messages, "
                  f"{size / 2 ** 20:.0f} MiB bag (written in {time.perf_counter() - t0:.1f} s)")
            dyns = (args.dynamics or "").split(",")
            if timing:  # best of three for the time, a sampled run for the steps' memory
                ms = {d: [] for d in dyns}
                runs = 1 if args.quick else 3
                for i in range(runs):  # interleaved: the machine's drift falls on each alike
                    for d in dyns:
                        ms[d].append(identify(bag, work / f"out{i}", False, args.model,
                                              args.predict_chunk, d or None))
                for d in dyns:
                    best = min(ms[d], key=lambda m: m["total"])
                    best["peaks"] = identify(bag, work / "out_rss", True, args.model,
                                             args.predict_chunk, d or None)["peaks"]
                    how = f"model {args.model or 'default'}, dynamics {d or 'default'}" + (
                        f", predict {args.predict_chunk} rows at a time"
                        if args.predict_chunk else "")
                    report(f"  {duration:g} s, {how}, best of {runs}", best, true, timing=True)
            else:
                m = identify(bag, work / "out_long", True, args.model, args.predict_chunk,
                             dyns[0] or None)
                report(f"  {duration:g} s (one run)", m, true, timing=False)
            if args.keep is None:
                shutil.rmtree(bag, ignore_errors=True)
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
