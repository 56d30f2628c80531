"""Issue 22, item 10: figures that hid or misread their data, each checked on the figure as
drawn (the report modules' and the examples' plotting functions, fed small fabricated data)."""

import numpy as np
import pytest
from example_scripts import EXAMPLES  # noqa: F401  (puts examples/ on sys.path)

from _plotting import layout_problems, plt
from fric_core.arm_identification.joint_friction import JointFriction, JointFrictionSet
from fric_core.arm_identification.report import ArmReport, holdout_figure


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


# -- holdout.png: the gaps of the prediction are said --------------------------------------------
def _arm_report(gap: bool) -> ArmReport:
    dv = 0.02
    law = JointFriction(0.5, 0.4, 0.2, 0.3)
    fs = JointFrictionSet({"joint1": law, "joint2": law}, model="asymmetric", dynamics="urdf",
                          method="ols", dv=dv)
    t = 15.0 + np.arange(800) / 200.0
    if gap:
        t[400:] += 0.5                                  # a second segment, after lost stamps
    v = np.sin(2 * np.pi * 0.4 * t)
    pred = np.column_stack([np.cos(2 * np.pi * 0.4 * t)] * 2)
    meas = pred + 0.01
    pred[np.abs(v) <= dv] = np.nan                      # as fric identify: none in the band
    return ArmReport(friction=fs, v_fit=np.zeros((10, 2)), tau_friction=np.zeros((10, 2)),
                     t_holdout=t, tau_holdout=meas, pred_holdout=pred, sample_step=0.005)


@pytest.mark.parametrize("gap", [False, True])
def test_holdout_legend_says_what_the_gaps_are(gap):
    rep = _arm_report(gap)
    fig = holdout_figure(rep)
    # the prediction really has gaps (NaN inside the band) ...
    pred_line = fig.axes[0].get_lines()[1]
    assert np.isnan(np.asarray(pred_line.get_ydata(), float)).any()
    # ... and one legend, under the panels, says they are the Δv band, with its width
    (lg,) = fig.legends
    texts = [t.get_text() for t in lg.get_texts()]
    assert any("gaps: |v| ≤ Δv = 0.02 rad/s" in s and "static friction" in s for s in texts), \
        texts
    # the lost stamps are counted in the measured curve's entry, only when there are some
    assert any("(1 gap in the stamps" in s for s in texts) == gap, texts
    assert all(ax.get_legend() is None for ax in fig.axes)
    assert not [p for p in layout_problems(fig) if p.startswith("legend")]
