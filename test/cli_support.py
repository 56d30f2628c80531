"""Running the ``fric`` CLI in a test (no rclpy here: the CLI starts its own processes)."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_fric(*args, timeout: float = 60.0) -> subprocess.CompletedProcess:
    """``fric ARGS`` as a process from the repository root (text output captured)."""
    return subprocess.run([sys.executable, "-m", "fric_nodes.tools.cli", *map(str, args)],
                          cwd=ROOT, capture_output=True, text=True, timeout=timeout)


def one_error_line(r: subprocess.CompletedProcess) -> str:
    """The single error line of a failed command (asserts there is no traceback)."""
    out = r.stdout + r.stderr
    assert "Traceback" not in out, out
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, r.stderr
    return lines[0]
