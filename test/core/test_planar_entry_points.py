"""Unknown names at the planar entry points (issue 13, item 12): a ValueError naming the field and
the accepted names, never a KeyError or TypeError. No ROS process is involved: ``build_planar``
is what ``friction_renderer`` calls with its parameter values, and what a user scripting the
planar contact calls directly."""

import numpy as np
import pytest

import fric_core.planar as P
from fric_interfaces.planar_params import PLANAR_SPECS, SURFACES
from fric_nodes.builders import build_planar, patch_geometry

JOINTS = ["x", "y", "yaw"]
DT = 1e-3


def _values(**over):
    v = {s.name: s.default for s in PLANAR_SPECS}
    v["planar.joints"] = list(JOINTS)
    v.update(over)
    return v


@pytest.mark.parametrize("name", ["disc", "Circle", "", None, ["circle"]])
def test_unknown_surface_names_the_field_and_the_accepted_surfaces(name):
    # found as: build_planar(..., planar.surface="disc") -> KeyError: 'disc'
    with pytest.raises(ValueError) as e:
        build_planar(_values(**{"planar.surface": name}), JOINTS, DT)
    msg = str(e.value)
    assert msg.startswith("planar.surface:")
    for accepted in SURFACES:
        assert accepted in msg
    with pytest.raises(ValueError, match=r"^planar\.surface: .* is not one of \['circle'"):
        patch_geometry(name, 21, 0.04, 20)


def test_unknown_planar_parameter_is_named_with_the_accepted_ones():
    with pytest.raises(ValueError) as e:
        build_planar(_values(**{"planar.sufrace": "circle"}), JOINTS, DT)
    msg = str(e.value)
    assert msg.startswith("planar.sufrace: unknown planar parameter")
    assert "planar.surface" in msg and "planar.normal_force" in msg


@pytest.mark.parametrize("field, value, words", [
    ("planar.cells", "21", "expected an integer"),
    ("planar.cells", 1, "below the minimum"),
    ("planar.size", "big", "expected a number"),
    ("planar.normal_force", float("nan"), "not finite"),
    ("planar.elasto_plastic", "yes", "expected a boolean"),
    ("planar.joints", "x", "expected a list of strings"),
])
def test_bad_planar_values_name_the_field(field, value, words):
    with pytest.raises(ValueError, match=rf"^{field.replace('.', '[.]')}: .*{words}"):
        build_planar(_values(**{field: value}), JOINTS, DT)


def test_omitted_planar_values_take_their_declared_defaults():
    contact, problems = build_planar({"planar.joints": JOINTS}, JOINTS, DT)
    assert contact is not None and not problems
    assert contact.surface.name == "circle" and contact.surface.n_cells == 21


def test_core_entry_points_name_unknown_choices():
    # the other name-taking entry points of fric_core.planar already answer this way: keep them
    with pytest.raises(ValueError, match=r"^axis: expected 'x' or 'y', got 'z'"):
        P.gradient_line(21, 0.02, axis="z")
    with pytest.raises(ValueError, match=r"^axis: expected 'x' or 'y'"):
        P.line(21, 0.02, axis="xy")
    with pytest.raises(ValueError, match=r"^kind: expected 'tangential' or 'normal'"):
        P.drift_loads(np.zeros(3), kind="torsional")
