"""A URDF beyond fric's size limits through the user's doors (issue 24, item 11): ``fric excite``,
``fric identify`` (exit status 2) and the transmission_sim node (exit status 1: its configure
fails) stop with one line naming the count and the limit, no traceback.

Before: a flat URDF of 10 000 revolute joints raised MemoryError with a traceback (Pinocchio's
data of 10 000 joints, ~64·nv³ bytes), a chain of 5000 links ended in SIGSEGV without a message
(the URDF reader's recursion overflows the stack).
"""

import subprocess
import sys

import numpy as np
import pytest

from cli_support import ROOT, one_error_line, run_fric  # test/ (conftest.py)
from fric_core.arm_identification.recording import ArmRecording, write_arm_csv
from fric_core.transmission.urdf_dynamics import MAX_URDF_LINKS

_INERTIAL = ('<inertial><mass value="0.1"/><inertia ixx="1e-4" ixy="0" ixz="0" iyy="1e-4" '
             'iyz="0" izz="1e-4"/></inertial>')
_LIMIT = '<limit lower="-3" upper="3" effort="10" velocity="2"/>'


def _write_urdf(path, links: int, kind: str, shape: str) -> None:
    """``links`` links joined by ``kind`` joints, as a chain or all on the base (flat)."""
    limit = _LIMIT if kind == "revolute" else ""
    parts = ['<robot name="huge">', f'<link name="base">{_INERTIAL}</link>']
    for i in range(links - 1):
        parent = "base" if i == 0 or shape == "flat" else f"l{i - 1}"
        parts.append(f'<link name="l{i}">{_INERTIAL}</link><joint name="j{i}" type="{kind}">'
                     f'<parent link="{parent}"/><child link="l{i}"/><axis xyz="0 0 1"/>'
                     f'{limit}</joint>')
    path.write_text("\n".join(parts + ["</robot>"]))


@pytest.fixture(scope="module")
def huge(tmp_path_factory):
    d = tmp_path_factory.mktemp("huge")
    _write_urdf(d / "flat.urdf", 10_000, "revolute", "flat")
    _write_urdf(d / "chain.urdf", 5000, "fixed", "chain")
    t = np.arange(0.0, 10.0, 0.01)
    q = np.stack([np.sin(t), np.cos(t)], axis=1)
    write_arm_csv(d / "rec.csv", ArmRecording(t=t, joint_names=("j0", "j1"), q=q, v=None,
                                              effort=0.1 * q))
    return d


def test_fric_excite_flat_urdf_of_10000_links(huge, tmp_path):
    r = run_fric("excite", "--urdf", huge / "flat.urdf", "--out", tmp_path / "out")
    assert r.returncode == 2, r.stderr
    line = one_error_line(r)
    assert line.startswith("fric excite: error: ") and \
        f": 10000 links, more than the {MAX_URDF_LINKS} " in line, line
    assert not (tmp_path / "out").exists()


def test_fric_identify_flat_urdf_of_10000_links(huge, tmp_path):
    r = run_fric("identify", huge / "rec.csv", "--urdf", huge / "flat.urdf",
                 "--out", tmp_path / "out")
    assert r.returncode == 2, r.stderr
    out = r.stdout + r.stderr
    assert "Traceback" not in out, out
    # the progress lines ("reading ...") come first; the error is the one line saying so
    errors = [ln for ln in r.stderr.splitlines() if "error" in ln.lower()]
    assert len(errors) == 1, r.stderr
    assert errors[0].startswith("fric identify: error: ") and \
        f": 10000 links, more than the {MAX_URDF_LINKS} " in errors[0], errors[0]
    assert not (tmp_path / "out").exists()


def test_transmission_sim_configure_fails_on_a_5000_link_chain(huge):
    path = huge / "chain.urdf"
    r = subprocess.run([sys.executable, "-m", "fric_nodes.transmission_sim", "--ros-args",
                        "-p", f"urdf:={path}"], cwd=ROOT, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 1, (r.returncode, r.stderr)  # before: -11 (SIGSEGV)
    line = one_error_line(r)
    assert line.startswith(f"transmission_sim: bad parameters: urdf: {path}: 5000 links, "
                           f"more than the {MAX_URDF_LINKS} "), line
