"""Issue 23: a foreign simulated arm (arm7 with the saturating sigmoid friction of Gaz et al.'s
Panda fit, per-joint effort offsets; realistic.py) identified end to end by ``fric identify``'s
pipeline: the file is one every tool reads, and the total friction curve follows the truth.

Tolerance: the issue's 0.03 N·m RMS over 0.05–1.5 rad/s for the total curve (friction + offset:
only that is identifiable, joint_friction.py), against a straight Coulomb + viscous line that
misses a sigmoid by 0.03–0.11 N·m RMS.
"""

import re

import numpy as np
import pytest

from fric_core.arm_identification.realistic import realistic_recording, write_realistic
from fric_core.joint_friction import read_joint_friction
from fric_core.transmission.urdf_dynamics import UrdfDynamics
from fric_nodes.tools.arm_identify import identify_arm


@pytest.fixture(scope="module")
def identified(tmp_path_factory):
    dyn = UrdfDynamics("arm7")
    sim = realistic_recording(dyn, duration=60.0, rate=500.0, offsets=True, current=False,
                              velocity=False, jitter=0.0, repeat_fraction=0.0,
                              skip_fraction=0.0, seed=0)
    d = tmp_path_factory.mktemp("real")
    path = write_realistic(d / "rec.csv", sim)
    return dyn, sim, identify_arm(path, "arm7", d / "out")


def test_total_curve_follows_a_sigmoid_friction_with_offsets(identified):
    dyn, sim, res = identified
    v = np.concatenate([-np.linspace(1.5, 0.05, 200), np.linspace(0.05, 1.5, 200)])
    for name in dyn.joint_names:
        jf = res.friction.joints[name]
        true = sim.truth.friction[name].kinetic(v) + sim.truth.offsets[name]
        rms = float(np.sqrt(np.mean((jf.total(v) - true) ** 2)))
        assert rms < 0.03, (name, jf.law, rms)
    sel = res.friction.extra["model_selection"]
    assert set(sel) == set(dyn.joint_names)
    assert all(s["curve"] <= s["asymmetric"] for s in sel.values() if s["chosen"] == "curve")


def test_written_file_is_read_back_with_the_offsets_in_the_levels(identified):
    dyn, sim, res = identified
    back = read_joint_friction(res.files["joint_friction.yaml"])
    assert back.names == list(dyn.joint_names)
    for name, jf in back.joints.items():
        assert jf.bp >= 0 and jf.bn >= 0 and jf.Cp + jf.Cn >= 0
        np.testing.assert_allclose(jf.total(np.array([-0.7, 0.7])),
                                   res.friction.joints[name].total(np.array([-0.7, 0.7])),
                                   rtol=1e-9, atol=1e-12)
    # an offset bigger than a Coulomb level leaves that level below 0: readable, not clamped
    assert any(min(jf.Cp, jf.Cn) < 0 for jf in back.joints.values())


@pytest.mark.parametrize("delay", [0.1, 0.3])
def test_a_lagging_velocity_column_is_named_and_does_not_move_the_result(tmp_path, delay):
    """The recorded velocity lags d(position)/dt by ``delay`` (a drive's filter or the logger):
    ``fric identify`` names the lag and uses the positions' derivative, so the result is the one
    of the same log without a velocity column, well within its stds."""
    dyn = UrdfDynamics("planar_2link")
    common = dict(duration=40.0, rate=250.0, offsets=False, current=False, jitter=0.0,
                  repeat_fraction=0.0, skip_fraction=0.0, seed=7)
    lagged = realistic_recording(dyn, velocity=True, velocity_delay=delay,
                                 velocity_time_constant=0.0, **common)
    plain = realistic_recording(dyn, velocity=False, **common)
    res = {}
    for name, sim in (("lagged", lagged), ("plain", plain)):
        path = write_realistic(tmp_path / f"{name}.csv", sim)
        res[name] = identify_arm(path, "planar_2link", tmp_path / name, dynamics="urdf",
                                 model="asymmetric", offset="none")
    named = [w for w in res["lagged"].warnings if "velocity lags" in w]
    assert len(named) == 1, res["lagged"].warnings
    for j in dyn.joint_names:
        lag = re.search(rf"{j} ([0-9.]+) ms", named[0])
        assert lag and abs(float(lag.group(1)) - 1e3 * delay) <= 0.1 * 1e3 * delay, named
        a, b = res["lagged"].friction.joints[j], res["plain"].friction.joints[j]
        for k in ("Cp", "Cn", "bp", "bn"):
            assert abs(getattr(a, k) - getattr(b, k)) <= 0.5 * b.std[k], (j, k)


def _prepared(sim):
    from fric_core.arm_identification.signals import prepare

    r = sim.recording
    return prepare(r.t, r.q, r.effort)


def _curve_fit(dyn, p, sl=slice(None), knots=None, dynamics="identify"):
    from fric_core.arm_identification.fit import fit_arm_friction

    noise = {"var_v": np.asarray(p.var_v), "var_a": np.asarray(p.var_a)}
    return fit_arm_friction(p.q[sl], p.v[sl], p.a[sl], p.effort[sl], dyn, method="eiv",
                            noise=noise, dv=0.01, law="curve", knots=knots, dynamics=dynamics)


def _foreign(dyn, seed):
    return realistic_recording(dyn, duration=60.0, rate=500.0, offsets=True, current=False,
                               velocity=False, jitter=0.0, repeat_fraction=0.0,
                               skip_fraction=0.0, seed=seed)


def test_curve_levels_are_within_3_std_of_the_truth_over_seeds():
    """Issue 23: ≥ 95 % of the identified values within 3 stds of the truth over seeds (the
    curve's levels at its knots against the true sigmoid + offset there; 4 seeds × 7 joints ×
    22 levels measured 97.7 %, rms z ≈ 1.1)."""
    dyn = UrdfDynamics("arm7")
    z = []
    for seed in (0, 1, 2):
        sim = _foreign(dyn, seed)
        fit = _curve_fit(dyn, _prepared(sim))
        for j, n in enumerate(dyn.joint_names):
            vp, vn = fit.knots[j]
            true, o = sim.truth.friction[n], sim.truth.offsets[n]
            for k in range(len(vp)):
                z.append((fit.joints[n][f"f+{k}"] - (true.kinetic(vp[k]) + o))
                         / fit.std[n][f"f+{k}"])
                z.append((fit.joints[n][f"f-{k}"] + (true.kinetic(-vn[k]) + o))
                         / fit.std[n][f"f-{k}"])
    z = np.abs(np.array(z))
    assert z.size == 3 * 7 * 22
    assert np.mean(z <= 3.0) >= 0.95, np.sort(z)[-10:]


@pytest.mark.parametrize("dynamics", ["identify", "urdf"])
def test_two_halves_of_one_recording_agree_within_their_stds(dynamics):
    """Issue 23: the halves of one recording, identified apart (the same knots), agree within 3
    combined stds on ≥ 90 % of the values (measured 99.7 % over 2 seeds with the rigid body
    identified); with the URDF's rigid body (what --dynamics auto keeps when it is right) the
    stds are smaller and must still hold."""
    dyn = UrdfDynamics("arm7")
    from fric_core.joint_friction import curve_knots

    p = _prepared(_foreign(dyn, 3))
    knots = [(curve_knots(p.v[p.v[:, j] > 0.01, j]), curve_knots(-p.v[p.v[:, j] < -0.01, j]))
             for j in range(dyn.n)]
    h = len(p) // 2
    a = _curve_fit(dyn, p, slice(0, h), knots, dynamics)
    b = _curve_fit(dyn, p, slice(h, len(p)), knots, dynamics)
    z = np.array([(a.joints[n][k] - b.joints[n][k]) / np.hypot(a.std[n][k], b.std[n][k])
                  for n in dyn.joint_names for k in a.joints[n]])
    assert z.size == 7 * 22
    assert np.mean(np.abs(z) <= 3.0) >= 0.90, np.sort(np.abs(z))[-10:]


def _total_rms(jf, truth, name):
    v = np.concatenate([-np.linspace(1.5, 0.05, 200), np.linspace(0.05, 1.5, 200)])
    true = truth.friction[name].kinetic(v) + truth.offsets[name]
    return float(np.sqrt(np.mean((jf.total(v) - true) ** 2)))


def _written_z(jf, truth, name):
    """(written value − truth) / std for each level of the written curve (or the line's four
    values), the offset folded back in as the file's total curve has it."""
    t, o = truth.friction[name], truth.offsets[name]
    z = []
    if jf.law == "curve":
        c = jf.curve
        for k in range(len(c.v_pos)):
            z.append((c.f_pos[k] + jf.offset - (t.kinetic(c.v_pos[k]) + o)) / jf.std[f"f+{k}"])
            z.append((c.f_neg[k] - jf.offset + (t.kinetic(-c.v_neg[k]) + o)) / jf.std[f"f-{k}"])
    return z


def test_default_dynamics_meets_the_bound_where_the_identified_rigid_body_does_not():
    """Issue 23's Done means with the default options: seeds 1 and 3 of the foreign arm are
    the recordings where the shoulder's constant level trades with its identified gravity
    (0.066 and 0.076 N·m RMS with --dynamics identify, within 1.5–2 of its std). --dynamics auto
    keeps the URDF's rigid body, whose friction agrees with the identified one (the recording
    was simulated with it), and every joint's total curve is within 0.03 N·m (measured ≤ 0.021
    over seeds 0–5); the written levels are within 3 std of the truth (≥ 95 %)."""
    from fric_nodes.tools.arm_identify import identify_recording

    import tempfile

    dyn = UrdfDynamics("arm7")
    z = []
    with tempfile.TemporaryDirectory() as d:
        for seed in (1, 3):
            sim = _foreign(dyn, seed)
            path = write_realistic(f"{d}/rec{seed}.csv", sim)
            ident = identify_recording(path, "arm7")
            sel = ident.friction.extra["dynamics_selection"]
            assert ident.dynamics == "urdf" and sel["chosen"] == "urdf", sel
            assert sel["difference_in_std"] <= 4.0, sel
            for name in dyn.joint_names:
                jf = ident.friction.joints[name]
                assert _total_rms(jf, sim.truth, name) < 0.03, (seed, name)
                z += _written_z(jf, sim.truth, name)
    z = np.abs(np.array(z))
    assert z.size >= 2 * 7 * 20
    assert np.mean(z <= 3.0) >= 0.95, np.sort(z)[-10:]


def test_a_urdf_whose_centres_of_mass_are_3_mm_off_is_refused(identified, tmp_path):
    """Every link's centre of mass 3 mm off along x: the shoulder's gravity error then lies
    along the direction its friction constant trades with, so the URDF's rigid body predicts
    the held-out efforts about as well as the identified one (≤ 1.06×) while its friction is
    0.36 N·m off. The friction values tell: the URDF's differ from the identified ones by far
    more than 4 of their stds, --dynamics auto uses the identified rigid body, says why, and the
    curves are the identified rigid body's (within 0.03 N·m on this seed)."""
    from pathlib import Path

    from fric_nodes.tools.arm_identify import identify_recording

    dyn, sim, _ = identified
    src = (Path(__file__).resolve().parents[2] / "urdf" / "arm7.urdf").read_text()
    off = re.sub(r'<inertial><origin xyz="([-0-9.e]+) ',
                 lambda m: f'<inertial><origin xyz="{float(m.group(1)) + 0.003:.6g} ', src)
    assert off.count("<inertial>") == off.count(' xyz="0.003 ') > 0
    urdf = tmp_path / "arm7_com_off.urdf"
    urdf.write_text(off)
    path = write_realistic(tmp_path / "rec.csv", sim)
    ident = identify_recording(path, str(urdf))
    sel = ident.friction.extra["dynamics_selection"]
    assert ident.dynamics == "identify" and sel["chosen"] == "identify", sel
    assert sel["difference_in_std"] > 10.0, sel
    said = [w for w in ident.warnings if w.startswith("--dynamics auto:")]
    assert len(said) == 1 and "does not fit this arm" in said[0], ident.warnings
    for name in dyn.joint_names:
        assert _total_rms(ident.friction.joints[name], sim.truth, name) < 0.03, name
