"""Shared by the example tests: run an ``examples/`` script's ``main`` and check that it passed
its own checks and wrote its PNGs."""

import importlib
import sys
from collections.abc import Sequence
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
if str(EXAMPLES) not in sys.path:
    sys.path.insert(0, str(EXAMPLES))


def run_example(name: str, out_dir: Path, pngs: Sequence[str], capsys,
                extra_args: Sequence[str] = ()) -> str:
    """``examples/<name>.py --out out_dir *extra_args``: exit status 0, no FAIL line, every PNG
    in ``pngs`` written (non-empty, PNG signature); returns the script's output."""
    mod = importlib.import_module(name)
    rc = mod.main(["--out", str(out_dir), *extra_args])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "FAIL" not in out, out
    for png in pngs:
        p = Path(out_dir) / png
        assert p.is_file() and p.stat().st_size > 0, f"{png} not written"
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    return out
