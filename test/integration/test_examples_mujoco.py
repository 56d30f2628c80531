"""examples/mujoco_friction_hold.py runs (``--quick``: 2 s holds), passes its own checks (held to
1e-9 rad by FrictionStepper, breakaway at (τ − C)/I within 1 %) and writes its PNG."""

import pytest
from example_scripts import run_example

pytest.importorskip("mujoco", reason="the optional extra [mujoco] is not installed")


def test_mujoco_friction_hold_example(tmp_path, capsys):
    out = run_example("mujoco_friction_hold", tmp_path, ["mujoco_friction_hold.png"], capsys,
                      ["--quick"])
    assert "PASS  arm held at 90% by FrictionStepper" in out
