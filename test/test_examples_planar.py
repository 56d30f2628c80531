"""The planar friction examples of paper 002 (examples/planar_*.py) run in --quick mode, pass
their own physical checks and write their PNGs."""

import importlib
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
sys.path.insert(0, str(EXAMPLES))

# script -> PNG files it must write in --quick mode
SCRIPTS = {
    "planar_velocity_profile": [
        "planar_velocity_profile_circle.png", "planar_velocity_profile_square.png",
        "planar_velocity_profile_line.png", "planar_velocity_profile_gradient_line.png",
        "planar_velocity_profile_non_convex_1.png", "planar_velocity_profile_non_convex_2.png",
        "planar_velocity_profile_boxplot.png"],
    "planar_drift": ["planar_drift_tangential.png", "planar_drift_normal.png"],
    "planar_in_hand": ["planar_in_hand.png", "planar_in_hand_snapshots.png",
                       "planar_in_hand_fn2.png", "planar_in_hand_hertz.png"],
    "planar_convergence": ["planar_convergence.png"],
}


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_planar_example_passes_and_writes_pngs(name, tmp_path, capsys):
    mod = importlib.import_module(name)
    rc = mod.main(["--out", str(tmp_path), "--quick"])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "FAIL" not in out, out
    assert "PASS" in out, out
    for png in SCRIPTS[name]:
        p = tmp_path / png
        assert p.is_file() and p.stat().st_size > 0, f"{png} not written"
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
