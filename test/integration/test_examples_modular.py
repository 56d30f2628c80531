"""The modular-simulator examples (paper 001, Sec. IV) run, pass their own checks and write PNGs."""

import pytest
from example_scripts import run_example

# script -> PNG files it must write
SCRIPTS = {
    "modular_rolling_sphere": ["modular_rolling_sphere.png"],
    "modular_two_link": ["modular_two_link.png", "modular_two_link_hold.png"],
}


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_modular_example_passes_and_writes_pngs(name, tmp_path, capsys):
    out = run_example(name, tmp_path, SCRIPTS[name], capsys, ["--quick"])
    assert "PASS" in out
