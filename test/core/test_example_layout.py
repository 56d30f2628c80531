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
