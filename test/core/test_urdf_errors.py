"""A URDF mistake is one line naming the file, the line, the joint or link and what is wrong
(issue 22, item 5); urdfdom's own complaints ("at line 243 in model.cpp") never reach the C
stderr the user sees."""

import re

import pytest

from fric_core.transmission.urdf_dynamics import UrdfDynamics, UrdfError, bundled_urdf, check_urdf

LIMIT = '<limit lower="-3.1416" upper="3.1416" effort="1000" velocity="10"/>'
GOOD = bundled_urdf("planar_2link").read_text()


def _line_of(text: str, needle: str) -> int:
    return text[:text.index(needle)].count("\n") + 1


def _no_urdfdom_output(capfd) -> None:
    err = capfd.readouterr().err
    assert "urdfdom" not in err and ".cpp" not in err and "Error:" not in err, err


def test_revolute_joint_without_limit_names_file_line_joint_and_limit(tmp_path, capfd):
    path = tmp_path / "nolimit.urdf"
    path.write_text(GOOD.replace(LIMIT, "", 1))
    with pytest.raises(UrdfError) as e:
        UrdfDynamics(path)
    msg = str(e.value)
    line = _line_of(GOOD, '<joint name="joint1"')
    assert msg.startswith(f"urdf: {path}:{line}: joint 'joint1' (revolute) has no <limit>"), msg
    assert "effort=" in msg and "velocity=" in msg and "\n" not in msg
    _no_urdfdom_output(capfd)


def test_malformed_xml_names_file_and_line(tmp_path, capfd):
    path = tmp_path / "bad.urdf"
    path.write_text(GOOD.replace("</joint>", "", 1))  # joint1's closing tag is gone
    with pytest.raises(UrdfError) as e:
        UrdfDynamics(path)
    msg = str(e.value)
    assert re.match(rf"urdf: {re.escape(str(path))}:\d+: not well-formed XML: mismatched tag",
                    msg), msg
    _no_urdfdom_output(capfd)


def test_missing_file_names_the_path_and_the_directory_it_is_relative_to(tmp_path,
                                                                          monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UrdfError, match=r"no such file: 'arm\.urdf' \(relative to "
                                        + re.escape(str(tmp_path)) + r"\)"):
        UrdfDynamics("arm.urdf")
    with pytest.raises(UrdfError, match=re.escape(f"no such file: '{tmp_path}/x/arm.urdf'") + "$"):
        UrdfDynamics(str(tmp_path / "x" / "arm.urdf"))


@pytest.mark.parametrize("old, new, where, what", [
    (LIMIT, '<limit lower="-1" upper="1" velocity="10"/>', LIMIT,
     "joint 'joint1' (revolute): <limit> has no effort attribute"),
    (LIMIT, '<limit lower="x" upper="1" effort="1" velocity="10"/>', LIMIT,
     "joint 'joint1' (revolute): <limit lower>: 'x' is not a number"),
    ('type="revolute"', 'type="revolut"', '<joint name="joint1"',
     "joint 'joint1': type 'revolut' is not one of"),
    ('type="revolute"', 'type="prismatic"', '<joint name="joint1"', None),  # has a limit: fine
    ('<parent link="base_link"/>', '<parent link="base"/>', '<parent link="base_link"/>',
     "joint 'joint1' (revolute): parent link 'base' is not a <link> of the robot"),
    ('<mass value="1.0"/>', '<mass value="1kg"/>', '<mass value="1.0"/>',
     "link 'link1': <mass value>: '1kg' is not a number"),
    ('<mass value="1.0"/>', "", '<inertial>', "link 'link1': <inertial> has no <mass"),
    ('name="joint2"', 'name="joint1"', '<joint name="joint2"',
     "joint 'joint1' is defined twice (first at line 9)"),
    ('<origin xyz="1 0 0" rpy="0 0 0"/><axis', '<origin xyz="1 0" rpy="0 0 0"/><axis',
     '<origin xyz="1 0 0" rpy="0 0 0"/><axis',
     "joint 'joint2' (revolute): <origin xyz>: '1 0' is not 3 numbers"),
])
def test_urdf_text_mistakes_are_named_with_their_line(capfd, old, new, where, what):
    assert old in GOOD
    text = GOOD.replace(old, new, 1)
    if what is None:
        check_urdf(text, "t")
        return
    with pytest.raises(UrdfError) as e:
        UrdfDynamics.from_xml(text)
    line = _line_of(GOOD, where)
    assert str(e.value).startswith(f"urdf: the URDF text:{line}: {what}"), str(e.value)
    _no_urdfdom_output(capfd)


def test_what_the_check_misses_urdfdom_reason_in_one_line_and_stderr_kept(capfd):
    # a <dynamics> value is not among the checked numbers: urdfdom rejects it, its first reason
    # becomes the message and nothing of its output is shown
    text = GOOD.replace('<axis xyz="0 0 1"/>', '<axis xyz="0 0 1"/><dynamics damping="abc"/>', 1)
    with pytest.raises(UrdfError, match=r"^urdf: the URDF text: damping value \(abc\) is not a "
                                        r"valid float$"):
        UrdfDynamics.from_xml(text)
    _no_urdfdom_output(capfd)
    # the C stderr works as before afterwards
    import os
    os.write(2, b"after\n")
    assert capfd.readouterr().err == "after\n"


def test_good_urdfs_pass_the_check_unchanged():
    for name in ("planar_2link", "arm7"):
        path = bundled_urdf(name)
        check_urdf(path.read_bytes(), str(path))
        assert UrdfDynamics(name).n in (2, 7)
