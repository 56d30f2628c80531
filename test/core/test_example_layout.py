"""The figure check the examples record (examples/_plotting.layout_problems, issue 13 item 15b):
it must flag what was found on the examples' figures — panels without axis labels, curves running
off a panel, legends on the data — and pass a figure without them."""

import numpy as np
import pytest
from example_scripts import EXAMPLES  # noqa: F401  (puts examples/ on sys.path)

import _plotting
from _plotting import layout_problems, plt


def _figure(**kw):
    fig, ax = plt.subplots(figsize=(6, 4))
    t = np.linspace(0.0, 3.0, 500)
    ax.plot(t, np.full_like(t, 0.5), label="flat")          # runs through the whole width
    ax.plot(t, t / 3.0, label="ramp")
    ax.set_xlim(0.0, 3.0)
    ax.set_ylim(kw.get("ylim", (-0.1, 1.1)))
    if kw.get("labels", True):
        ax.set_xlabel("time [s]")
        ax.set_ylabel("value [1]")
    if kw.get("legend") == "inside":
        ax.legend(loc="center")
    elif kw.get("legend") == "outside":
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return fig


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def test_a_clean_figure_passes():
    assert layout_problems(_figure(legend="outside")) == []


def test_missing_axis_labels_are_flagged():
    p = layout_problems(_figure(labels=False))
    assert any("no x label" in m for m in p) and any("no y label" in m for m in p)


def test_curves_running_off_the_panel_are_flagged():
    # the transmission figure's p_x panel: y limits that cut the data (here: the ramp above 0.8)
    p = layout_problems(_figure(ylim=(0.0, 0.8)))
    assert any("outside the axes" in m for m in p), p


def test_a_legend_on_the_data_is_flagged():
    # a legend in the centre covers the flat line at 0.5 (no vertex of a 2-point line need lie
    # inside: the segments are filled in)
    p = layout_problems(_figure(legend="inside"))
    assert any(m.startswith("legend of") for m in p), p
    fig, ax = plt.subplots()
    ax.plot([0.0, 1.0], [0.5, 0.5], label="a two-point line")
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    ax.legend(loc="center")
    assert any(m.startswith("legend of") for m in layout_problems(fig))


def test_labels_running_into_a_neighbouring_panel_are_flagged():
    fig, axes = plt.subplots(1, 2, figsize=(6, 3), gridspec_kw={"wspace": 0.02})
    for ax in axes:
        ax.plot([0, 1], [0, 1000])
        ax.set_xlabel("x")
        ax.set_ylabel("a long y label [N]")
    assert any("overlaps" in m for m in layout_problems(fig))


def test_savefig_records_the_check(tmp_path):
    chk = _plotting.Checks("layout")
    _plotting.savefig(_figure(legend="inside"), tmp_path, "bad.png", chk)
    _plotting.savefig(_figure(legend="outside"), tmp_path, "good.png", chk)
    assert [ok for _, ok, _ in chk.results] == [False, True]
    assert (tmp_path / "bad.png").is_file() and (tmp_path / "good.png").is_file()


# -- issue 22, item 10: what the check missed or over-reported ------------------------------------
def _axes():
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.set_xlim(0.0, 1.0)
    ax.set_ylim(0.0, 1.0)
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    return fig, ax


def _legend_bottom(fig, ax):
    """The legend's lower edge, in data units of ``ax`` (after a draw)."""
    fig.canvas.draw()
    lb = ax.get_legend().get_window_extent()
    return float(ax.transData.inverted().transform((lb.x0, lb.y0))[1])


def test_a_legend_over_half_a_thick_line_is_flagged():
    # the mass-adjusted figure's Δv/Dp box: its top edge, a thick line just under the legend's
    # lower edge, half hidden by the legend's frame (the line's centre is outside the legend)
    fig, ax = _axes()
    ax.plot([0.0, 1.0], [0.1, 0.1], lw=1.0, label="a thin line far below")
    ax.legend(loc="upper left")
    y0 = _legend_bottom(fig, ax)
    px = 1.0 / ax.bbox.height                                   # one pixel, in data units
    (edge,) = ax.plot([0.02, 0.3], [y0 - 2 * px] * 2, lw=8.0)   # 4 px half width
    p = layout_problems(fig)
    assert any(m.startswith("legend of") for m in p), p
    edge.set_linewidth(1.0)                                     # now clear of the legend
    assert layout_problems(fig) == []


def test_markers_only_are_their_markers_not_the_segments_between_them():
    # scattered samples drawn as a marker-only line: an empty region between two samples is
    # free for the legend (the old check filled the segments in and flagged it) ...
    fig, ax = _axes()
    ax.plot([0.05, 0.95], [0.9, 0.9], lw=0.0, marker=".", ms=3, label="two samples")
    ax.legend(loc="upper center")
    assert layout_problems(fig) == []
    # ... and a sample under the legend is data under the legend
    ax.plot([0.5], [0.95], lw=0.0, marker="o", label="one sample under it")
    ax.legend(loc="upper center")
    assert any(m.startswith("legend of") for m in layout_problems(fig))


@pytest.mark.parametrize("kind", ["fill_between", "vlines", "violin", "errorbar", "rectangle"])
def test_collections_and_patch_edges_under_a_legend_are_flagged(kind):
    fig, ax = _axes()
    if kind == "fill_between":
        ax.fill_between([0.0, 1.0], [0.45, 0.45], [0.55, 0.55], label="band")
    elif kind == "vlines":
        ax.vlines([0.5], 0.05, 0.95, label="marks")
    elif kind == "violin":
        rng = np.random.default_rng(0)
        ax.violinplot([rng.normal(0.5, 0.05, 200)], positions=[0.5], widths=0.6)
        ax.plot([], [], label="violin")
    elif kind == "errorbar":
        ax.errorbar([0.5], [0.5], yerr=[0.4], fmt="none", label="error bar")
    else:   # a patch whose edge crosses the legend with no vertex inside it
        from matplotlib.patches import Rectangle
        ax.add_patch(Rectangle((0.2, 0.49), 0.6, 0.02, fill=False, label="box"))
    ax.legend(loc="center")
    p = layout_problems(fig)
    assert any(m.startswith("legend of") for m in p), (kind, p)
