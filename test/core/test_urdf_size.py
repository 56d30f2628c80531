"""A URDF beyond fric's stated size is refused with one line naming the limit and the count,
before Pinocchio builds anything (issue 24, item 11).

Before: a chain of 5000 links ended in SIGSEGV inside Pinocchio's (urdfdom's) recursive reader, a
flat URDF of 10 000 revolute joints in a MemoryError (Pinocchio's data: ~64·nv³ bytes), 300
movable joints took 1.8 GB. The tests use :mod:`pinocchio`'s builders replaced by a function
that fails the test, so "refused before building" is checked, not assumed; the huge cases that
would crash are never handed to Pinocchio.
"""

import time

import pytest

from fric_core.transmission import urdf_dynamics as ud
from fric_core.transmission.urdf_dynamics import (MAX_MOVABLE_JOINTS, MAX_URDF_BYTES,
                                                  MAX_URDF_LINKS, UrdfDynamics, UrdfError,
                                                  check_urdf)

_INERTIAL = ('<inertial><mass value="0.1"/><inertia ixx="1e-4" ixy="0" ixz="0" iyy="1e-4" '
             'iyz="0" izz="1e-4"/></inertial>')
_LIMIT = '<limit lower="-3" upper="3" effort="10" velocity="2"/>'


def _urdf(links: int, kind: str = "revolute", shape: str = "chain",
          fixed_first: int = 0) -> str:
    """A URDF of ``links`` links: a chain (each link the child of the previous) or flat (every
    link a child of the base), joined by ``kind`` joints (the first ``fixed_first`` fixed)."""
    parts = ['<robot name="generated">', f'<link name="base">{_INERTIAL}</link>']
    limit = _LIMIT if kind in ("revolute", "prismatic") else ""
    for i in range(links - 1):
        parent = "base" if i == 0 or shape == "flat" else f"l{i - 1}"
        parts.append(f'<link name="l{i}">{_INERTIAL}</link>')
        parts.append(f'<joint name="j{i}" type="{"fixed" if i < fixed_first else kind}">'
                     f'<parent link="{parent}"/>'
                     f'<child link="l{i}"/><origin xyz="0 0 0.1"/><axis xyz="0 0 1"/>{limit}'
                     '</joint>')
    parts.append("</robot>")
    return "\n".join(parts)


@pytest.fixture
def no_pinocchio_build(monkeypatch):
    """Pinocchio's URDF builders replaced by a function that records the call and raises; the
    test asserts the record stays empty (fric turns the builder's exception into a UrdfError,
    so raising alone would not tell)."""
    calls = []

    def build(*args, **_kwargs):
        calls.append(args)
        raise RuntimeError("Pinocchio was asked to build the model")
    monkeypatch.setattr(ud.pin, "buildModelFromUrdf", build)
    monkeypatch.setattr(ud.pin, "buildModelFromXML", build)
    yield calls
    assert not calls, "Pinocchio was asked to build the model"


def _refused(call) -> str:
    t0 = time.perf_counter()
    with pytest.raises(UrdfError) as e:
        call()
    elapsed = time.perf_counter() - t0
    # a streaming count of a few MB of XML: ~0.1 s on this machine for 10 000 links; before,
    # Pinocchio's data of 10 000 joints did not fit in memory, and a 5000-link chain crashed
    assert elapsed < 2.0, elapsed
    msg = str(e.value)
    assert "\n" not in msg, msg
    return msg


@pytest.mark.parametrize("shape", ["chain", "flat"])
def test_ten_thousand_links_refused_before_building(tmp_path, no_pinocchio_build, shape):
    path = tmp_path / f"{shape}.urdf"
    path.write_text(_urdf(10_000, "fixed", shape))
    msg = _refused(lambda: UrdfDynamics(path))
    assert msg.startswith(f"urdf: {path}: 10000 links, more than the {MAX_URDF_LINKS} "), msg


def test_deep_chain_of_5000_revolute_links_refused_from_text(no_pinocchio_build):
    msg = _refused(lambda: UrdfDynamics.from_xml(_urdf(5000)))
    assert msg.startswith(f"urdf: the URDF text: 5000 links, more than the {MAX_URDF_LINKS} "), \
        msg


def test_movable_joints_beyond_the_limit_refused_with_the_count(no_pinocchio_build):
    n = MAX_MOVABLE_JOINTS + 1  # a flat URDF: 101 revolute joints on the base
    msg = _refused(lambda: check_urdf(_urdf(n + 1, shape="flat"), "flat.urdf"))
    assert msg.startswith(f"urdf: flat.urdf: {n} movable joints, more than the "
                          f"{MAX_MOVABLE_JOINTS} "), msg


def test_the_largest_urdf_allowed_is_built_and_one_more_link_is_not():
    """The limits refuse only what is beyond them: 1000 links (a chain whose last 100 joints
    are movable) build with 100 joints; 1001 links are refused."""
    n_fixed = MAX_URDF_LINKS - 1 - MAX_MOVABLE_JOINTS
    dyn = UrdfDynamics.from_xml(_urdf(MAX_URDF_LINKS, fixed_first=n_fixed))
    assert dyn.n == MAX_MOVABLE_JOINTS
    assert dyn.joint_names[0] == f"j{n_fixed}"
    one_more = _urdf(MAX_URDF_LINKS + 1, fixed_first=n_fixed + 1)
    msg = _refused(lambda: UrdfDynamics.from_xml(one_more))
    assert f": {MAX_URDF_LINKS + 1} links, more than the {MAX_URDF_LINKS} " in msg, msg


def test_file_beyond_the_byte_limit_refused_before_reading(tmp_path, monkeypatch,
                                                           no_pinocchio_build):
    path = tmp_path / "padded.urdf"
    text = _urdf(3)
    path.write_text(text + " " * (MAX_URDF_BYTES + 1 - len(text)))  # well-formed, 1 byte over

    def no_read(*_args, **_kwargs):
        raise AssertionError("the file was read")
    monkeypatch.setattr(ud.Path, "read_bytes", no_read)
    msg = _refused(lambda: UrdfDynamics(path))
    assert msg.startswith(f"urdf: {path}: {MAX_URDF_BYTES + 1} bytes, more than the "
                          f"{MAX_URDF_BYTES} bytes "), msg
