"""The benchmarks keep running. Every bench/*.py has ``main(argv) -> int`` and a ``--quick`` flag
for this smoke run; timing is never asserted here (it is read from the printed figures)."""

import importlib.util
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"


@pytest.mark.parametrize("script", sorted(p.name for p in BENCH.glob("*.py")))
def test_bench_script_runs_quick(script, capsys):
    spec = importlib.util.spec_from_file_location(script[:-3], BENCH / script)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.main(["--quick"]) == 0
    assert "target" in capsys.readouterr().out  # it printed its figures against the targets
