"""The arm identification report (fric_core.arm_identification.report): held-out RMS, figures,
and a summary that never prints a number the data cannot support."""

import math

import numpy as np
import pytest

from fric_core.arm_identification.joint_friction import JointFriction, JointFrictionSet
from fric_core.arm_identification.report import (ARM_REPORT_FILES, ArmReport,
                                                 friction_velocity_figure, holdout_figure,
                                                 holdout_rms, summary_markdown,
                                                 write_arm_report)

LAWS = {"joint1": JointFriction(0.5, 0.4, 0.2, 0.3, std={"Cp": 0.004, "Cn": 0.005,
                                                         "bp": 0.003, "bn": 0.006}),
        "joint2": JointFriction(0.3, 0.35, 0.1, 0.15, std={"Cp": 0.002, "Cn": 0.002,
                                                           "bp": 0.001, "bn": 0.002})}
SIGMA = 0.03  # N·m, torque noise of the fabricated data
DV = 0.02


def _report(friction: JointFrictionSet, seed: int = 0, n_hold: int = 800) -> ArmReport:
    rng = np.random.default_rng(seed)
    names = friction.names
    t = np.arange(3000) / 200.0
    v = np.column_stack([np.sin(2 * np.pi * (0.2 + 0.11 * j) * t) for j in range(len(names))])
    law = np.column_stack([friction.joints[n].kinetic(v[:, j]) for j, n in enumerate(names)])
    th = 15.0 + np.arange(n_hold) / 200.0
    pred = np.column_stack([np.cos(2 * np.pi * 0.4 * th)] * len(names))
    return ArmReport(friction=friction, v_fit=v,
                     tau_friction=law + rng.normal(0, SIGMA, law.shape),
                     t_holdout=th, tau_holdout=pred + rng.normal(0, SIGMA, pred.shape),
                     pred_holdout=pred, source="sim.mcap", urdf="planar_2link.urdf",
                     n_samples=3800, duration=19.0, cond=42.0,
                     residual_std={n: SIGMA for n in names},
                     warnings=["joint2: little velocity range (0.2 rad/s)"])


def test_holdout_rms_of_white_noise_is_its_std():
    # measured = predicted + N(0, σ²): the RMS estimates σ with relative std 1/sqrt(2M)
    rng = np.random.default_rng(3)
    M, sig = 2000, np.array([0.03, 0.1, 0.5])
    pred = rng.normal(0, 2.0, (M, 3))
    rms = holdout_rms(pred + rng.normal(0, 1, (M, 3)) * sig, pred)
    assert rms == pytest.approx(sig, rel=4 / math.sqrt(2 * M))
    # a constant offset c on top of noise: RMS = sqrt(σ² + c²)
    rms = holdout_rms(pred + 0.4 + rng.normal(0, 0.3, (M, 3)), pred)
    assert rms == pytest.approx(np.full(3, 0.5), rel=4 / math.sqrt(2 * M))


def test_holdout_rms_ignores_non_finite_samples_and_checks_shapes():
    meas = np.array([[1.0, np.nan], [3.0, np.nan]])
    rms = holdout_rms(meas, np.zeros((2, 2)))
    assert rms[0] == pytest.approx(math.sqrt(5.0)) and np.isnan(rms[1])
    with pytest.raises(ValueError, match="predicted"):
        holdout_rms(np.zeros((3, 2)), np.zeros((3, 1)))


def test_summary_table_values_and_rms():
    rep = _report(JointFrictionSet(LAWS, model="asymmetric", dynamics="identify",
                                   method="eiv", dv=DV))
    text = summary_markdown(rep)
    assert "| quantity | unit | joint1 | joint2 |" in text
    assert "| Cp | N·m | 0.5 ± 0.004 | 0.3 ± 0.002 |" in text
    assert "| bn | N·m·s/rad | 0.3 ± 0.006 | 0.15 ± 0.002 |" in text
    rms = holdout_rms(rep.tau_holdout, rep.pred_holdout)
    assert all(r == pytest.approx(SIGMA, rel=0.15) for r in rms)
    assert f"| joint1 | {rms[0]:.3g} | {SIGMA:.3g} |" in text
    assert "- joint2: little velocity range (0.2 rad/s)" in text
    assert "eta" not in text.split("## What")[0]  # no efficiency rows for the asymmetric model
    assert "nan" not in text.lower()
    assert "of joint1, joint2 are determined by the data" in text
    rep.data_notes = ["1 gap(s) in the stamps: 2 segments filtered separately"]
    assert "\n- 1 gap(s) in the stamps: 2 segments filtered separately\n" in summary_markdown(rep)


def test_undetermined_values_are_not_printed():
    # a viscosity the data do not determine (the fit's `determined` map): no number, its std only
    rep = _report(JointFrictionSet(LAWS, model="asymmetric", dynamics="identify",
                                   method="eiv", dv=DV))
    rep.determined = {"joint1": dict(Cp=True, Cn=True, bp=True, bn=True),
                      "joint2": dict(Cp=True, Cn=True, bp=True, bn=False)}
    text = summary_markdown(rep)
    assert "| bn | N·m·s/rad | 0.3 ± 0.006 | not determined (± 0.002) |" in text
    assert "| Cp | N·m | 0.5 ± 0.004 | 0.3 ± 0.002 |" in text
    assert "0.15" not in text  # joint2's bn value appears nowhere
    assert "joint2: bn not determined by these data" in text
    assert "of joint1 are determined by the data" in text


def test_gear_with_identified_dynamics_prints_only_the_product():
    # η_f, η_b are not identifiable with the rigid body fitted (s·β undone by η_f·s, η_b/s):
    # the report says so and prints no number for them
    laws = {n: JointFriction(jf.Cp, jf.Cn, jf.bp, jf.bn, eta_product=0.56,
                             std=dict(jf.std, eta_product=0.01)) for n, jf in LAWS.items()}
    text = summary_markdown(_report(JointFrictionSet(laws, model="gear", dynamics="identify",
                                                     method="ols", dv=DV)))
    assert "| eta_f |  | not determined | not determined |" in text
    assert "| eta_b |  | not determined | not determined |" in text
    assert "| eta_product |  | 0.56 ± 0.01 | 0.56 ± 0.01 |" in text
    assert "Only the product η_f·η_b is determined for joint1, joint2" in text
    # with the URDF trusted both efficiencies are numbers
    laws = {n: JointFriction(jf.Cp, jf.Cn, jf.bp, jf.bn, eta_f=0.8, eta_b=0.7,
                             eta_product=0.56) for n, jf in LAWS.items()}
    text = summary_markdown(_report(JointFrictionSet(laws, model="gear", dynamics="urdf",
                                                     method="ols", dv=DV)))
    assert "| eta_f |  | 0.8 | 0.8 |" in text and "not determined" not in text
    assert "η_f and η_b are determined for joint1, joint2" in text


def test_friction_figure_draws_the_fitted_law_over_the_data():
    rep = _report(JointFrictionSet(LAWS, model="asymmetric", dynamics="identify",
                                   method="eiv", dv=DV))
    fig = friction_velocity_figure(rep)
    axes = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in axes] == ["joint1", "joint2"]
    for ax, name in zip(axes, rep.joints):
        jf = LAWS[name]
        data, *laws = ax.get_lines()[:3]
        # the law lines are the fitted law, each on its own side of the band
        for line in laws:
            x, y = np.asarray(line.get_xdata()), np.asarray(line.get_ydata())
            assert np.all(np.abs(x) >= DV - 1e-12)
            np.testing.assert_allclose(y, jf.kinetic(x), atol=1e-12)
        # the data scatter about the law by the noise only
        x, y = np.asarray(data.get_xdata()), np.asarray(data.get_ydata())
        out = np.abs(x) > DV
        assert np.std(y[out] - jf.kinetic(x[out])) == pytest.approx(SIGMA, rel=0.1)
    titles = [ax.get_title() for ax in holdout_figure(rep).axes if ax.get_visible()]
    rms = holdout_rms(rep.tau_holdout, rep.pred_holdout)
    assert titles == [f"joint1: RMS error {rms[0]:.3g} N·m", f"joint2: RMS error {rms[1]:.3g} N·m"]


def test_write_arm_report_files(tmp_path):
    laws = dict(LAWS, joint3=LAWS["joint1"])
    rep = _report(JointFrictionSet(laws, model="asymmetric", dynamics="urdf", method="ols",
                                   dv=DV))
    rep.warnings = []
    paths = write_arm_report(rep, tmp_path / "r")
    assert [p.name for p in paths] == list(ARM_REPORT_FILES)
    for p in paths[:2]:
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and p.stat().st_size > 10_000
    text = paths[2].read_text(encoding="utf-8")
    assert "## Warnings\n\nNone." in text and "joint3" in text
    # nothing held out: said, no RMS
    rep.t_holdout, rep.tau_holdout, rep.pred_holdout = (np.zeros(0), np.zeros((0, 3)),
                                                         np.zeros((0, 3)))
    paths = write_arm_report(rep, tmp_path / "r2")
    assert "Nothing was held out." in paths[2].read_text(encoding="utf-8")


def test_effort_lag_line_says_what_was_undone_and_how_it_was_chosen():
    rep = _report(JointFrictionSet(LAWS, model="asymmetric", dynamics="identify",
                                   method="eiv", dv=DV))
    rep.sample_step = 0.002
    # given 0: states and effort at the same instant (a torque sensor)
    assert ("Effort lag 0, given (`--effort-lag`): states and effort taken at the same "
            "instant.") in summary_markdown(rep)
    # estimated and significant: the value, in samples, its std, and what the fit did with it
    rep.effort_lag, rep.effort_lag_estimate, rep.effort_lag_std = 1.02e-3, 1.02e-3, 3.5e-5
    text = summary_markdown(rep)
    assert ("Effort lag 1.02 ms (0.51 samples of 2 ms), estimated from the data (`--effort-lag "
            "auto`: 1.02 ms ± 0.035 ms): q, v, a were taken at t − lag, the effort at its stamp "
            "t.") in text
    assert "half a step" in text
    # estimated but not significant: 0 used, the estimate still shown
    rep.effort_lag, rep.effort_lag_estimate = 0.0, 4e-5
    assert ("Effort lag 0, estimated from the data (`--effort-lag auto`: 0.04 ms ± 0.035 ms, not "
            "significantly above 0: 0 used)") in summary_markdown(rep)
    # estimated, significant, but the recording's halves disagree: not determined, 0 used
    rep.effort_lag_estimate, rep.effort_lag_consistent = 1.5e-3, False
    assert ("(`--effort-lag auto`: 1.5 ms ± 0.035 ms, but the recording's halves disagree: not "
            "determined, 0 used)") in summary_markdown(rep)
    # no NaN when the estimate had no std (a flat residual curve)
    rep.effort_lag_std = None
    assert "nan" not in summary_markdown(rep).lower()
