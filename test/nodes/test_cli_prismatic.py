"""`fric identify` on an arm with a prismatic joint (issue 23 item 6): urdf/arm7_lift.urdf, a
recording from fric_core.arm_identification.realistic (Gaz et al.'s Panda sigmoids on the arm,
the lift's assumed sigmoid + viscous law in N).

* With the rigid body identified the design is singular for every trajectory: the lift carries
  a constant M·g, which the asymmetric levels' difference Cp − Cn spans, and M also multiplies
  q̈ like the lift's rotor inertia. The error says so (and not "the recording does not excite
  every joint").
* With the URDF's rigid body the lift's friction is identified in N and N·s/m and reported in
  those units. Tolerance: the sigmoid (φ2 = 300 s/m) is within 8 % of its saturation level at
  Δv = 0.01 m/s and within 0.4 % above 0.02 m/s, and most samples move faster (up to 0.12 m/s):
  the fitted Coulomb levels are within 5 % of the saturation levels (measured 1–3 %).
"""

import numpy as np
import pytest

from fric_core.arm_identification.joint_friction import read_joint_friction
from fric_core.arm_identification.realistic import (LIFT_FRICTION, realistic_recording,
                                                    write_realistic)
from fric_core.transmission.urdf_dynamics import UrdfDynamics
from fric_nodes.tools.arm_identify import (_constant_gravity_joints,
                                           identify_arm)
from fric_nodes.tools.cli import main

PLAIN = dict(offsets=False, current=False, velocity=False, jitter=0.0, repeat_fraction=0.0,
             skip_fraction=0.0, digits=None)


@pytest.fixture(scope="module")
def lift_csv(tmp_path_factory):
    d = tmp_path_factory.mktemp("lift")
    sim = realistic_recording(UrdfDynamics("arm7_lift"), duration=30.0, rate=200.0, seed=3,
                              **PLAIN)
    return write_realistic(d / "lift.csv", sim)


def test_only_a_lift_along_gravity_has_a_constant_gravity_load():
    assert _constant_gravity_joints(UrdfDynamics("arm7_lift")) == ["torso_lift"]
    assert _constant_gravity_joints(UrdfDynamics("arm7")) == []


def test_identified_rigid_body_holds_the_lifted_mass_at_the_urdf(lift_csv, tmp_path):
    """With the rigid body identified, the mass the lift carries is not determined by any
    motion (its weight is a constant force, as an asymmetry of the lift's friction levels is;
    it multiplies the lift's acceleration as its rotor inertia does): that base parameter is held
    at the URDF's value, with a warning naming it, and the lift's friction is identified."""
    res = identify_arm(lift_csv, "arm7_lift", tmp_path / "o", model="asymmetric", method="ols",
                       effort_lag=0.0, offset="none", dynamics="identify")
    held = [w for w in res.warnings if w.startswith("rigid body:")]
    assert len(held) == 1 and "held at the URDF's value" in held[0], res.warnings
    lift = read_joint_friction(res.files["joint_friction.yaml"]).joints["torso_lift"]
    for k, true in (("Cp", LIFT_FRICTION.forward_level), ("Cn", -LIFT_FRICTION.backward_level)):
        assert getattr(lift, k) == pytest.approx(true, rel=0.05), (k, getattr(lift, k))


def test_urdf_rigid_body_identifies_the_lift_in_newtons(lift_csv, tmp_path, capsys):
    out = tmp_path / "o"
    rc = main(["identify", str(lift_csv), "--urdf", "arm7_lift", "--out", str(out),
               "--dynamics", "urdf", "--model", "asymmetric", "--method", "ols",
               "--effort-lag", "0", "--offset", "none"])
    cap = capsys.readouterr()
    assert rc == 0, cap.err
    assert ("# prismatic joint(s) torso_lift: Cp, Cn, RMS in N; bp, bn in N·s/m (the others: "
            "N·m, N·m·s/rad)") in cap.out
    assert "| held-out RMS [N·m; torso_lift: N] |" in cap.out
    assert "(m/s for prismatic joints)" in cap.err
    text = (out / "report.md").read_text(encoding="utf-8")
    assert "| Cp | N·m; torso_lift: N |" in text and "(m/s for torso_lift)" in text
    lift = read_joint_friction(out / "joint_friction.yaml").joints["torso_lift"]
    assert lift.Cp == pytest.approx(LIFT_FRICTION.forward_level, rel=0.05)
    assert lift.Cn == pytest.approx(-LIFT_FRICTION.backward_level, rel=0.05)
    assert np.isfinite(lift.bp) and lift.bp > 0


def test_excite_table_names_the_lift_units(tmp_path, capsys):
    rc = main(["excite", "--urdf", "arm7_lift", "--out", str(tmp_path / "e"), "--duration", "10",
               "--time-budget", "0.5"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "# prismatic joint(s) torso_lift: m, m/s, m/s² (the others: rad, rad/s, rad/s²)" in out
    row = next(ln for ln in out.splitlines() if ln.startswith("| torso_lift |"))
    q_min, q_max, v_max = (float(c) for c in row.split("|")[2:5])
    assert 0.0 <= q_min < q_max <= 0.35 and v_max <= 0.15 + 1e-3  # the URDF's stroke and speed
