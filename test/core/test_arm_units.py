"""Units per joint type in the arm identification report (issue 23 item 6): a prismatic joint
(``ArmReport.joint_kinds``) is shown in m, m/s, N and N·s/m, a revolute one in rad, rad/s, N·m
and N·m·s/rad — in the table, the Δv line, the held-out table and both figures' labels."""

import numpy as np

from fric_core.arm_identification.joint_friction import JointFriction, JointFrictionSet
from fric_core.arm_identification.report import (ArmReport, friction_velocity_figure,
                                                 holdout_figure, holdout_rms, joint_units,
                                                 summary_markdown)

LAWS = {"lift": JointFriction(20.0, 35.0, 80.0, 90.0), "joint1": JointFriction(0.5, 0.4, 0.2,
                                                                                0.3)}


def _report(kinds) -> ArmReport:
    t = np.arange(2000) / 200.0
    v = np.column_stack([0.1 * np.sin(2 * np.pi * 0.3 * t), np.sin(2 * np.pi * 0.2 * t)])
    fs = JointFrictionSet(LAWS, model="asymmetric", dynamics="urdf", method="ols", dv=0.01)
    tau = np.column_stack([LAWS[n].kinetic(v[:, j]) for j, n in enumerate(fs.names)])
    th = t[:400]
    pred = np.column_stack([np.cos(th), np.sin(th)])
    return ArmReport(friction=fs, v_fit=v, tau_friction=tau, t_holdout=th,
                     tau_holdout=pred + 0.01, pred_holdout=pred, joint_kinds=kinds,
                     residual_std={n: 0.01 for n in fs.names})


def test_joint_units():
    assert joint_units("prismatic") == {"position": "m", "velocity": "m/s",
                                        "acceleration": "m/s²", "effort": "N",
                                        "viscous": "N·s/m"}
    assert joint_units("revolute")["viscous"] == joint_units("continuous")["viscous"] \
        == "N·m·s/rad"


def test_prismatic_joint_in_si_units_of_a_linear_axis():
    rep = _report({"lift": "prismatic", "joint1": "revolute"})
    text = summary_markdown(rep)
    assert "| Cp | N·m; lift: N | 20 | 0.5 |" in text
    assert "| bn | N·m·s/rad; lift: N·s/m | 90 | 0.3 |" in text
    assert "Δv = 0.01 rad/s (m/s for lift)" in text
    assert "| joint | held-out RMS error [N·m; lift: N] | fit residual std [N·m; lift: N] |" \
        in text
    fig = friction_velocity_figure(rep)
    labels = [(ax.get_xlabel(), ax.get_ylabel()) for ax in fig.axes if ax.get_visible()]
    assert labels == [("velocity [m/s]", "friction force [N]"),
                      ("velocity [rad/s]", "friction torque [N·m]")]
    rms = holdout_rms(rep.tau_holdout, rep.pred_holdout)
    axes = [ax for ax in holdout_figure(rep).axes if ax.get_visible()]
    assert [ax.get_title() for ax in axes] == [f"lift: RMS error {rms[0]:.3g} N",
                                               f"joint1: RMS error {rms[1]:.3g} N·m"]
    assert [ax.get_ylabel() for ax in axes] == ["joint force [N]", "joint torque [N·m]"]


def test_without_kinds_everything_is_revolute():
    text = summary_markdown(_report({}))
    assert "| Cp | N·m | 20 | 0.5 |" in text and "m/s" not in text and "N·s/m" not in text
