"""The benchmarks keep running. Every bench/*.py accepts ``--quick`` for this smoke run and exits
0; timing is never asserted here (it is read from the printed figures). Each runs as its own
process, as ``make bench`` runs it (rclpy's EventsExecutor needs real stdio file descriptors)."""

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.mark.parametrize("script", sorted(p.name for p in BENCH.glob("*.py")))
def test_bench_script_runs_quick(script):
    proc = subprocess.run([sys.executable, str(BENCH / script), "--quick"], capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "target" in proc.stdout  # it printed its figures against the targets
