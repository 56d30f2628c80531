"""The code style the project keeps: ruff (configured in ruff.toml: pyflakes, pycodestyle errors and
warnings at 100 columns) over the whole tree. ruff comes with the ``dev`` extra."""

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _ruff() -> list[str]:
    exe = Path(sys.executable).with_name("ruff")
    if exe.exists():
        return [str(exe)]
    found = shutil.which("ruff")
    assert found, "ruff is not installed: pip install -e '.[dev]' (the Makefile does)"
    return [found]


def test_ruff_passes_on_the_whole_tree():
    r = subprocess.run(_ruff() + ["check", "--no-cache", "."], cwd=ROOT, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
