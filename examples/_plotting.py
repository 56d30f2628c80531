"""Small helpers shared by the figure scripts: argument parsing, Agg plotting, PASS/FAIL checks."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("MPLBACKEND", "Agg")

# Make ``fric_core`` importable when a script is run from a plain checkout (no install).
_ROOT = str(Path(__file__).resolve().parent.parent)
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402,F401  (re-exported for the scripts)

DEFAULT_OUT = "out/examples"


def parse_args(argv, description: str, quick: bool = False) -> argparse.Namespace:
    """``--out DIR`` (created) and, if ``quick``, a ``--quick`` flag."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--out", default=DEFAULT_OUT, help=f"output directory (default {DEFAULT_OUT})")
    if quick:
        p.add_argument("--quick", action="store_true", help="shorter run (used by the tests)")
    args = p.parse_args(argv)
    args.out = Path(args.out)
    args.out.mkdir(parents=True, exist_ok=True)
    return args


def savefig(fig, out: Path, name: str) -> Path:
    """Save ``fig`` as ``out/name`` (PNG), close it and print where it went."""
    path = Path(out) / name
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    print(f"  wrote {path}")
    return path


class Checks:
    """Collects named PASS/FAIL results and prints each as it is recorded."""

    def __init__(self, title: str):
        self.title = title
        self.results: list[tuple[str, bool, str]] = []
        self.pngs: list[Path] = []
        print(f"== {title}")

    def __call__(self, name: str, ok, detail: str = "") -> bool:
        ok = bool(ok)
        self.results.append((name, ok, detail))
        print(f"  {'PASS' if ok else 'FAIL'}  {name}" + (f"  [{detail}]" if detail else ""))
        return ok

    @property
    def ok(self) -> bool:
        return all(r[1] for r in self.results)

    def status(self) -> int:
        n_fail = sum(not r[1] for r in self.results)
        print(f"  -> {len(self.results) - n_fail}/{len(self.results)} checks passed")
        return 0 if n_fail == 0 else 1
