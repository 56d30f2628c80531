"""The modular-simulator examples (paper 001, Sec. IV) run, pass their own checks and write PNGs."""

import importlib
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
sys.path.insert(0, str(EXAMPLES))

# script -> PNG files it must write
SCRIPTS = {
    "modular_rolling_sphere": ["modular_rolling_sphere.png"],
    "modular_two_link": ["modular_two_link.png", "modular_two_link_hold.png"],
}


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_modular_example_passes_and_writes_pngs(name, tmp_path, capsys):
    mod = importlib.import_module(name)
    rc = mod.main(["--out", str(tmp_path), "--quick"])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "FAIL" not in out, out
    assert "PASS" in out
    for png in SCRIPTS[name]:
        p = tmp_path / png
        assert p.is_file() and p.stat().st_size > 0, f"{png} not written"
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
