"""The planar friction examples of paper 002 (examples/planar_*.py) run in --quick mode, pass
their own physical checks and write their PNGs."""

import pytest
from example_scripts import run_example

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
    out = run_example(name, tmp_path, SCRIPTS[name], capsys, ["--quick"])
    assert "PASS" in out, out
