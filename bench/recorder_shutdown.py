"""Benchmark: how long ``fric_recorder`` takes to exit on SIGINT after a long recording (issue 24
item 9), against the budget a launch gives it.

A recorder process (``fric_nodes.recorder.main``) is fed ``--seconds`` of a haptic run at
``--rate`` (joint_states, effort commands, wrench, hand force: 4 messages a cycle) through its
own drain path, faster than real time (``test/recorder_feed.py``), then sent SIGINT as a launch
does on Ctrl-C; the figure is the time from SIGINT to the process's exit, with what it left in
``out_dir``. The baseline is the recorder of commit ``--baseline`` (default 7a7cd31, before the
fix: it read the whole bag back after the stop) run the same way in the same run (its tree is
extracted with ``git archive``). Target: within ros2 launch's ``sigterm_timeout`` (5 s, after
which SIGTERM follows; SIGKILL 5 s later, and ``fric launch`` has the same defaults).

Run: ``.venv/bin/python bench/recorder_shutdown.py [--seconds 540] [--quick]``. Nothing asserts.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_S = 5.0  # ros2 launch's sigterm_timeout default

def shutdown_time(tree: Path, seconds: float, rate: float, out: Path) -> dict:
    """Feed a recorder of ``tree`` (a source tree on PYTHONPATH), SIGINT it, time its exit."""
    env = dict(os.environ, PYTHONPATH=str(tree), OPENBLAS_NUM_THREADS="1",
               ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST",
               ROS_DOMAIN_ID=os.environ.get("ROS_DOMAIN_ID", str(os.getpid() % 40 + 60)))
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "test" / "recorder_feed.py"), str(seconds), str(rate),
         "haptic", "--ros-args",
         "-p", f"out_dir:={out}", "-p", "hand_location:=tool",
         "-p", "hand_script:=2:0, 10.5:2:0.5, 0.2:5.3:0.05, 1.5:0"],
        cwd=tree, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    fed = ""
    for line in proc.stderr:
        if line.startswith("FED"):
            fed = line.strip()
            break
    time.sleep(0.5)  # into its recording loop
    t0 = time.monotonic()
    proc.send_signal(signal.SIGINT)
    try:
        out_text, err = proc.communicate(timeout=300)
    except subprocess.TimeoutExpired:
        proc.kill()
        out_text, err = proc.communicate()
    took = time.monotonic() - t0
    files = sorted(p.name for p in out.iterdir()) if out.exists() else []
    return {"time": took, "rc": proc.returncode, "fed": fed, "files": files,
            "tail": (out_text + err).strip().splitlines()[-3:]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=540.0, help="recorded run [s] (540)")
    ap.add_argument("--rate", type=float, default=1000.0, help="cycles per second (1000)")
    ap.add_argument("--baseline", default="7a7cd31", help="commit of the baseline recorder")
    ap.add_argument("--no-baseline", action="store_true", help="measure this tree only")
    ap.add_argument("--quick", action="store_true", help="5 s of recording (smoke run)")
    ns = ap.parse_args()
    seconds = 5.0 if ns.quick else ns.seconds
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        runs = {"this tree": ROOT}
        if not ns.no_baseline:
            old = tmp / "baseline"
            old.mkdir()
            arch = subprocess.run(["git", "-C", str(ROOT), "archive", ns.baseline, "fric_nodes",
                                   "fric_core", "fric_interfaces"], capture_output=True)
            if arch.returncode == 0:
                subprocess.run(["tar", "-x", "-C", str(old)], input=arch.stdout, check=True)
                runs[f"baseline {ns.baseline}"] = old
            else:
                print(f"# baseline {ns.baseline} not available: {arch.stderr.decode().strip()}")
        print(f"# recorder exit after SIGINT, {seconds:g} s recorded at {ns.rate:g} Hz "
              f"(4 messages a cycle)")
        res = {}
        for name, tree in runs.items():
            r = shutdown_time(tree, seconds, ns.rate, tmp / name.replace(" ", "_"))
            res[name] = r
            print(f"{name}: {r['time']:.2f} s to exit (status {r['rc']}); {r['fed']}; left "
                  f"{', '.join(r['files'])}")
            for line in r["tail"]:
                print(f"    | {line}")
        mine = res["this tree"]["time"]
        verdict = "PASS" if mine <= TARGET_S and res["this tree"]["rc"] == 0 else "FAIL"
        base = [r["time"] for k, r in res.items() if k != "this tree"]
        ratio = f", {mine / base[0]:.2f}x the baseline" if base else ""
        print(f"[{verdict}] recorder shutdown {mine:.2f} s (target <= {TARGET_S:g} s, ros2 "
              f"launch's sigterm_timeout){ratio}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
