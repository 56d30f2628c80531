"""fric_core.haptics.report: the estimates table (both methods, truth, EIV error in std)
and the report files (paper 003's figures as real PNGs, estimates.md)."""

import struct
import sys

import numpy as np
import pytest

from fric_core.haptics.identification import excitation
from fric_core.haptics.recording import Recording
from fric_core.haptics.report import (PARAMETERS, REPORT_FILES, estimates_table, force_time_figure,
                                      mass_adjusted_figure, write_report)
from fric_core.haptics.stage import SAMPLES, HapticStageSim

BRASS = SAMPLES["brass"]
TRUTH = dict(m=BRASS.mass, Cp=BRASS.law.Cp, bp=BRASS.law.bp, Cn=BRASS.law.Cn, bn=BRASS.law.bn,
             Dp=BRASS.law.Dp, Dn=BRASS.law.Dn, dv=BRASS.law.dv)


@pytest.fixture(scope="module")
def run():
    """The simulated stage with brass through the paper's excitation (2 s recorded at 1 kHz)."""
    ex = excitation(warmup=2.0)
    st = HapticStageSim(sample="brass", seed=5)
    rs = [r for r, keep in zip((st.step(position_setpoint=float(x)) for x in ex.x), ex.record)
          if keep]
    col = {k: np.array([getattr(r, k) for r in rs])
           for k in ("t", "position", "velocity", "force", "acceleration")}
    rec = Recording(col["t"], col["position"], col["velocity"], col["force"],
                    a=col["acceleration"], joint="stage_joint", source="sim brass seed 5")
    return rec, {"ols": rec.fit("ols"), "eiv": rec.fit("eiv")}


def _rows(table):
    lines = table.strip().splitlines()
    return [[c.strip() for c in ln.strip("|").split("|")] for ln in lines]


def test_estimates_table_has_both_methods_and_truth(run):
    _, fits = run
    rows = _rows(estimates_table(fits, TRUTH))
    assert rows[0] == ["parameter", "unit", "OLS ± std", "EIV ± std", "truth", "EIV error / std"]
    assert [r[0] for r in rows[2:]] == [p[0] for p in PARAMETERS]
    m = rows[2]
    eiv = fits["eiv"]
    assert m[2] == f"{fits['ols'].m:.4g} ± {fits['ols'].std['m']:.2g}"
    assert m[3] == f"{eiv.m:.4g} ± {eiv.std['m']:.2g}"
    assert m[4] == "0.419"
    z = float(m[5])
    assert z == pytest.approx((eiv.m - BRASS.mass) / eiv.std["m"], abs=0.005)
    assert abs(z) < 4  # the EIV std is consistent with its error (test_identification)
    assert rows[-1][0] == "dv" and rows[-1][5] == ""  # Δv is chosen, it has no std
    plain = _rows(estimates_table({"eiv": eiv}))
    assert plain[0] == ["parameter", "unit", "EIV ± std"]
    with pytest.raises(ValueError, match=r"truth: unknown parameter\(s\) \['mass'\]"):
        estimates_table(fits, {"mass": 0.4})
    with pytest.raises(ValueError, match="fits: no fit"):
        estimates_table({})


def _png_size(path):
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24]), len(data)


def test_write_report_files(run, tmp_path):
    rec, fits = run
    pyplot = sys.modules.get("matplotlib.pyplot")
    before = pyplot.get_fignums() if pyplot else None
    paths = write_report(rec, fits, tmp_path / "report", TRUTH, title="brass")
    assert [p.name for p in paths] == list(REPORT_FILES)
    for p, size in zip(paths[:3], ((800, 500), (800, 500), (800, 650))):
        (w, h), n = _png_size(p)
        # 8 x 5 in (force_time: 8 x 6.5, two panels) at 100 dpi; 2000 plotted samples make
        # tens of kB, an empty axes ~10 kB
        assert (w, h) == size and n > 20_000, (p.name, w, h, n)
    md = paths[3].read_text()
    assert md.startswith("# brass\n") and "sim brass seed 5" in md
    assert "| OLS ± std | EIV ± std | truth |" in md and "from the accelerometer" in md
    for name in REPORT_FILES[:3]:
        assert f"({name})" in md
    if pyplot:  # no figure leaked into pyplot's global state
        assert pyplot.get_fignums() == before
    # without an accelerometer the acceleration is derived; the report says so
    bare = Recording(rec.t, rec.x, rec.v, rec.force)
    paths = write_report(bare, {"eiv": bare.fit()}, tmp_path / "bare")
    assert "central difference" in paths[3].read_text() and all(p.exists() for p in paths)


# -- issue 13, item 15: both comparisons visible --------------------------------------------------
def _lines(ax):
    return {ln.get_label(): ln for ln in ax.get_lines()}


def test_mass_adjusted_ols_and_eiv_lines_both_visible(run):
    """The OLS kinetic line used to lie under the EIV line (same style, drawn first). Now: EIV
    a wide translucent band, OLS a narrower dashed line drawn above it, the data below both."""
    rec, fits = run
    fig = mass_adjusted_figure(rec, rec.acceleration(), fits, "brass")
    (ax,) = fig.axes
    lines = _lines(ax)
    ols = next(ln for lb, ln in lines.items() if lb.startswith("OLS: kinetic"))
    eiv = next(ln for lb, ln in lines.items() if lb.startswith("EIV: kinetic"))
    data = next(ln for lb, ln in lines.items() if lb.startswith("F − m a"))
    assert ols.get_linestyle() != eiv.get_linestyle()  # dashed over solid
    assert ols.get_zorder() > eiv.get_zorder() > data.get_zorder()
    assert ols.get_linewidth() < eiv.get_linewidth()  # the band shows on both sides of it
    assert eiv.get_alpha() < 1.0  # ... and the dashes' gaps show the band through them
    # the two fits' lines really coincide here (so only the styles tell them apart)
    assert np.allclose(ols.get_ydata(), eiv.get_ydata(), atol=0.05)


def test_force_time_measured_visible_under_the_model_with_a_residual_panel(run):
    """The measured force used to be covered by the model traces. Now: measured a wide light
    band drawn first, the EIV model a thin line on top; a residual panel under it with F − EIV
    model and OLS model − EIV model; lines break at gaps of the stamps."""
    rec, fits = run
    keep = np.ones(len(rec), bool)
    keep[700:714] = False  # one 14 ms gap
    gap = Recording(rec.t[keep], rec.x[keep], rec.v[keep], rec.force[keep], a=rec.a[keep])
    fig = force_time_figure(gap, gap.acceleration(), fits, "brass")
    top, res = fig.axes
    assert res.get_ylabel() == "residual [N]" and res.get_xlabel() == "time t [s]"
    assert top.get_position().y0 > res.get_position().y0  # the residual panel is below
    lines = _lines(top)
    meas = lines["measured F (load cell)"]
    model = next(ln for lb, ln in lines.items() if lb.startswith("EIV model"))
    assert meas.get_zorder() < model.get_zorder()
    assert meas.get_linewidth() > 3 * model.get_linewidth() and meas.get_alpha() < 1.0
    rl = _lines(res)
    resid = next(ln for lb, ln in rl.items() if lb.startswith("F − EIV model"))
    diff = rl["OLS model − EIV model"]
    assert diff.get_linestyle() != resid.get_linestyle()
    y = np.asarray(resid.get_ydata(), float)
    pred = fits["eiv"].predict(gap.v, gap.a)
    expect = np.insert(gap.force - pred, 700, np.nan)  # a break where the samples are lost
    assert np.array_equal(np.isnan(y), np.isnan(expect))
    assert np.allclose(y[~np.isnan(y)], expect[~np.isnan(expect)])
    # where OLS and EIV differ, against the residual: here far less than the residual
    d = np.asarray(diff.get_ydata(), float)
    assert np.isfinite(d).sum() > 1000
    assert 0.0 < np.nanmax(np.abs(d)) < 0.5 * np.nanmax(np.abs(y))
