"""Report of an identification run: paper 003's figures and a table of the estimates.

* :func:`estimates_table` — Markdown, one row per parameter of the model (paper 003, eq. 1, with
  the mass of eq. 1's force balance): each method's estimate ± std (OLS, eq. 5; EIV, eq. 6) and,
  when the truth is known (a simulated sample), the truth and the EIV error in units of its std.
* :func:`write_report` — into a directory: ``force_velocity.png`` (raw force against velocity,
  paper 003 Figs. 6–8 (a)), ``mass_adjusted.png`` (``F − m a`` against velocity with the fitted
  kinetic lines and the box of Δv, Dn, Dp, Figs. 6–8 (b): OLS dashed over a translucent EIV
  band, so both show where they coincide), ``force_time.png`` (measured force under the thin
  model lines, and a residual panel below) and ``estimates.md`` (with the record's gaps and,
  past :data:`~fric_core.haptics.recording.MAX_LOST_FRACTION` lost, that the estimates are not
  to be trusted).

matplotlib is imported only by :func:`write_report` and used through its object API with the Agg
canvas (no pyplot: no global figure state, no display needed).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Mapping

import numpy as np

from .identification import FrictionFit
from .recording import MAX_LOST_FRACTION, Recording

__all__ = ["estimates_table", "write_report", "PARAMETERS", "REPORT_FILES", "STYLES",
           "force_velocity_figure", "mass_adjusted_figure", "force_time_figure"]

#: (name, unit, meaning) of the table's rows, in paper 003's Table 2 order
PARAMETERS = (
    ("m", "kg", "mass"),
    ("Cp", "N", "kinetic level, v > 0"),
    ("bp", "N·s/m", "viscosity, v > 0"),
    ("Cn", "N", "kinetic level magnitude, v < 0"),
    ("bn", "N·s/m", "viscosity, v < 0"),
    ("Dp", "N", "static level, positive forces"),
    ("Dn", "N", "static level, negative forces"),
    ("dv", "m/s", "stiction band Δv"),
)
#: the files :func:`write_report` writes, in the order it returns them
REPORT_FILES = ("force_velocity.png", "mass_adjusted.png", "force_time.png", "estimates.md")


def _ordered(fits: Mapping[str, FrictionFit]) -> list[str]:
    if not fits:
        raise ValueError("fits: no fit given")
    known = [k for k in ("ols", "eiv") if k in fits]
    return known + sorted(k for k in fits if k not in known)


def _cell(fit: FrictionFit, name: str) -> str:
    val = float(getattr(fit, name))
    sd = fit.std.get(name, math.nan)
    return f"{val:.4g} ± {sd:.2g}" if math.isfinite(sd) else f"{val:.4g}"


def estimates_table(fits: Mapping[str, FrictionFit],
                    truth: Mapping[str, float] | None = None) -> str:
    """A Markdown table of the estimates.

    A row per parameter (m, Cp, bp, Cn, bn, Dp, Dn, dv), a column per method (key of ``fits``,
    e.g. ``"ols"``, ``"eiv"``) with estimate ± std, then, with ``truth`` (parameter -> value),
    the truth and the EIV error in units of the EIV std (``(estimate − truth)/std``; blank where
    either is unknown).

    Parameters
    ----------
    fits : mapping of str to FrictionFit
        The fits by method name (``"ols"``, ``"eiv"``, ...); at least one.
    truth : mapping of str to float, optional
        The true value of some of the parameters (names of :data:`PARAMETERS`), in their
        :data:`PARAMETERS` units (kg, N, N·s/m, m/s).

    Returns
    -------
    str
        The Markdown table, ending with a newline.

    Raises
    ------
    ValueError
        When ``fits`` is empty or ``truth`` names an unknown parameter.
    """
    methods = _ordered(fits)
    truth = dict(truth or {})
    unknown = sorted(set(truth) - {p[0] for p in PARAMETERS})
    if unknown:
        raise ValueError(f"truth: unknown parameter(s) {unknown}")
    head = ["parameter", "unit"] + [m.upper() + " ± std" for m in methods]
    z_of = "eiv" if "eiv" in fits else None
    if truth:
        head.append("truth")
        if z_of:
            head.append("EIV error / std")
    rows = [head, ["---"] * len(head)]
    for name, unit, _ in PARAMETERS:
        row = [name, unit] + [_cell(fits[m], name) for m in methods]
        if truth:
            tv = truth.get(name)
            row.append("" if tv is None else f"{tv:.4g}")
            if z_of:
                sd = fits[z_of].std.get(name, math.nan)
                if tv is None or not (math.isfinite(sd) and sd > 0.0):
                    row.append("")
                else:
                    row.append(f"{(getattr(fits[z_of], name) - tv) / sd:+.2f}")
        rows.append(row)
    return "\n".join("| " + " | ".join(r) + " |" for r in rows) + "\n"


# -- figures ---------------------------------------------------------------------------------------
#: Line styles of the two fits, chosen so that the two stay visible where they coincide: EIV a
#: wide translucent solid band, OLS a narrow dashed line drawn on top of it.
STYLES = {
    "eiv": dict(color="tab:green", lw=4.0, ls="-", alpha=0.55, zorder=3),
    "ols": dict(color="tab:orange", lw=1.6, ls=(0, (5, 2.5)), alpha=1.0, zorder=4),
}
_OTHER = dict(color="tab:red", lw=1.2, ls=":", alpha=1.0, zorder=5)
#: measured data: drawn first, light, under every model line
_DATA = dict(color="tab:blue", zorder=1)


def _style(method: str) -> dict:
    return dict(STYLES.get(method, _OTHER))


def _figure(nrows: int = 1, height: float = 5.0, ratios=None):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(8.0, height), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    if nrows == 1:
        return fig, fig.add_subplot()
    axes = fig.subplots(nrows, 1, sharex=True, gridspec_kw={"height_ratios": ratios})
    return fig, axes


def _kinetic_lines(ax, fit: FrictionFit, v: np.ndarray, style: dict, label: str) -> None:
    vmax, vmin = float(np.nanmax(v)), float(np.nanmin(v))
    if vmax > fit.dv:
        vp = np.linspace(fit.dv, vmax, 50)
        ax.plot(vp, fit.Cp + fit.bp * vp, label=label, **style)
        label = None
    if vmin < -fit.dv:
        vn = np.linspace(vmin, -fit.dv, 50)
        ax.plot(vn, -fit.Cn + fit.bn * vn, label=label, **style)
    if math.isfinite(fit.Dp) and math.isfinite(fit.Dn):
        xs = [-fit.dv, fit.dv, fit.dv, -fit.dv, -fit.dv]
        ys = [fit.Dn, fit.Dn, fit.Dp, fit.Dp, fit.Dn]
        box = dict(style, lw=max(1.0, style["lw"] * 0.5))
        ax.plot(xs, ys, **box)


def force_velocity_figure(rec: Recording, title: str = ""):
    """Raw force against velocity (paper 003 Figs. 6–8 (a)), the samples as dots on a thin line
    that breaks at the gaps of the stamps (lost samples are not bridged); returns the Figure.

    Parameters
    ----------
    rec : Recording
        The recorded run: velocity (m/s) and force (N).
    title : str, optional
        First line of the figure's title (none when empty).

    Returns
    -------
    matplotlib.figure.Figure
        The figure, on an Agg canvas.
    """
    fig, ax = _figure()
    _, v, force = _with_gaps(rec, rec.v, rec.force)   # no line across lost samples
    ax.plot(v, force, lw=0.5, marker=".", ms=1.5, **_DATA)
    ax.set_xlabel("velocity v [m/s]")
    ax.set_ylabel("measured force F [N]")
    head = f"{title}\n" if title else ""
    n_gaps = int(rec.breaks().sum())
    gaps = f"; line broken at {n_gaps} gap{'s' * (n_gaps > 1)} in the stamps" if n_gaps else ""
    ax.set_title(f"{head}raw force against velocity ({len(rec)} samples{gaps})", fontsize=10)
    ax.axhline(0.0, color="0.7", lw=0.6, zorder=0)
    ax.axvline(0.0, color="0.7", lw=0.6, zorder=0)
    return fig


def mass_adjusted_figure(rec: Recording, a: np.ndarray, fits: Mapping[str, FrictionFit],
                         title: str = ""):
    """``F − m a`` against velocity with every fit's kinetic lines and box of Δv, Dn, Dp.

    The mass is the EIV one when there is one (paper 003 Figs. 6–8 (b)), each fit in its
    :data:`STYLES` (OLS dashed over the translucent EIV band: both visible where they coincide),
    the legend under the axes (off the data and the box); returns the Figure.

    Parameters
    ----------
    rec : Recording
        The recorded run: velocity (m/s) and force (N).
    a : (N,) ndarray
        Acceleration at the recording's samples, m/s² (e.g. ``rec.acceleration()``).
    fits : mapping of str to FrictionFit
        The fits by method name (``"ols"``, ``"eiv"``, ...); at least one.
    title : str, optional
        As for :func:`force_velocity_figure`.

    Returns
    -------
    matplotlib.figure.Figure
        The figure, on an Agg canvas.
    """
    methods = _ordered(fits)
    ref = "eiv" if "eiv" in fits else methods[0]
    m = fits[ref].m
    fig, ax = _figure()
    ax.plot(rec.v, rec.force - m * a, lw=0.0, marker=".", ms=2.0, alpha=0.35,
            label=f"F − m a (m = {m:.4g} kg, {ref.upper()})", **_DATA)
    for k in methods:
        f = fits[k]
        _kinetic_lines(ax, f, rec.v, _style(k),
                       f"{k.upper()}: kinetic friction, box Δv = {f.dv:.3g} m/s, "
                       f"Dn = {f.Dn:.3g} N, Dp = {f.Dp:.3g} N")
    ax.axhline(0.0, color="0.7", lw=0.6, zorder=0)
    ax.axvline(0.0, color="0.7", lw=0.6, zorder=0)
    ax.set_xlabel("velocity v [m/s]")
    ax.set_ylabel("mass-adjusted force F − m a [N]")
    head = f"{title}\n" if title else ""
    ax.set_title(f"{head}force adjusted for mass, fitted model (paper 003 eq. 1)", fontsize=10)
    # under the axes: inside, it covered the data and the top edge of the Δv/Dp box
    fig.legend(*ax.get_legend_handles_labels(), loc="outside lower center", fontsize=8,
               frameon=False)
    return fig


def _headroom(ax, frac: float) -> None:
    """Room above the data for a legend that must not sit on it."""
    lo, hi = ax.get_ylim()
    ax.set_ylim(lo, hi + frac * (hi - lo))


def _with_gaps(rec: Recording, *ys):
    """``t`` and ``ys`` with a NaN inserted at every gap of the stamps: lines break there
    instead of bridging the lost samples."""
    at = np.flatnonzero(rec.breaks()) + 1
    return [np.insert(np.asarray(y, dtype=float), at, np.nan) for y in (rec.t,) + ys]


def force_time_figure(rec: Recording, a: np.ndarray, fits: Mapping[str, FrictionFit],
                      title: str = ""):
    """Measured and predicted force against time, with the residual below.

    Top: the measured force (a wide light band, drawn first) and the model ``m a + friction`` of
    the reference fit (EIV when there is one) as a thin dark line on top, so the measurement
    shows on both sides of it. Bottom: the residual ``F − model`` of the reference fit and, for
    every other fit (OLS), its model minus the reference model (dashed): where the two fits
    differ, and by how much against the residual. Returns the Figure.

    Parameters
    ----------
    rec : Recording
        The recorded run: time (s), velocity (m/s) and force (N); lines break at its gaps.
    a, fits, title
        As for :func:`mass_adjusted_figure`.

    Returns
    -------
    matplotlib.figure.Figure
        The figure (two panels), on an Agg canvas.
    """
    methods = _ordered(fits)
    ref = "eiv" if "eiv" in fits else methods[0]
    fig, (ax, res) = _figure(2, height=6.5, ratios=(2.2, 1.0))
    pred = fits[ref].predict(rec.v, a)
    r = rec.force - pred
    sd = float(np.nanstd(r)) if np.isfinite(r).any() else math.nan
    t, force, pred_g, r_g = _with_gaps(rec, rec.force, pred, r)
    ax.plot(t, force, lw=3.0, alpha=0.4, label="measured F (load cell)", **_DATA)
    ax.plot(t, pred_g, color="0.1", lw=0.7, zorder=3,
            label=f"{ref.upper()} model m a + friction (none for |v| ≤ Δv)")
    res.plot(t, r_g, color=STYLES["eiv"]["color"] if ref == "eiv" else "0.1", lw=0.6,
             zorder=3, label=f"F − {ref.upper()} model (std {sd:.3g} N)")
    for k in methods:
        if k == ref:
            continue
        st = dict(_style(k), lw=1.4, alpha=1.0, zorder=4)
        _, diff = _with_gaps(rec, fits[k].predict(rec.v, a) - pred)
        res.plot(t, diff, label=f"{k.upper()} model − {ref.upper()} model", **st)
    res.axhline(0.0, color="0.5", lw=0.6, zorder=0)
    ax.set_ylabel("force [N]")
    res.set_ylabel("residual [N]")
    res.set_xlabel("time t [s]")
    head = f"{title}\n" if title else ""
    ax.set_title(f"{head}measured and predicted force; residual below", fontsize=10)
    _headroom(ax, 0.15)
    _headroom(res, 0.45)
    ax.legend(loc="upper center", fontsize=8, ncol=2, framealpha=0.9)
    res.legend(loc="upper center", fontsize=8, ncol=2, framealpha=0.9)
    return fig


def _data_lines(rec: Recording) -> list[str]:
    lines = []
    gaps = rec.gap_note()
    lines.append(f"Record: {gaps}." if gaps else "Record: no gaps in the stamps (nothing lost).")
    problem = rec.trust_problem()
    if problem:
        lines += ["", f"**{problem}.**"]
    else:
        lines.append(f"{rec.lost_fraction():.1%} of the samples lost, within "
                     f"MAX_LOST_FRACTION = {MAX_LOST_FRACTION:.0%}: the estimates can be trusted "
                     f"(as far as their standard deviations say).")
    return lines


def _markdown(rec: Recording, fits, methods, truth, title: str) -> str:
    lines = [f"# {title}", ""]
    if rec.source:
        lines += [f"Data: {rec.source}", ""]
    lines += [f"{len(rec)} samples over {rec.t[-1] - rec.t[0]:.4g} s (median step "
              f"{rec.dt * 1e3:.4g} ms); acceleration "
              + ("from the accelerometer." if rec.a is not None
                 else "from the 4-point central difference of the velocity."), ""]
    lines += _data_lines(rec) + [""]
    lines += ["Model: paper 003 eq. (1), F = m a + friction(v), F the force the stage applies "
              "to the sample. OLS is eq. (5), EIV Fuller's estimator eq. (6).", "",
              estimates_table({k: fits[k] for k in methods}, truth), ""]
    given = {k for k in (rec.noise or {}) if k != "accel" or rec.a is not None}
    for k in methods:
        f = fits[k]
        noise = ", ".join(f"{n} {val:.3g}" + (" (from the recording)" if n in given else
                                              " (estimated from the data)")
                          for n, val in f.noise.items())
        lines.append(f"- {k.upper()}: {f.n_used} kinetic samples ({f.n_pos} v > Δv, {f.n_neg} "
                     f"v < −Δv), condition number {f.cond:.3g}, residual std "
                     f"{f.residual_std:.3g} N" + (f", noise variances {noise}" if noise else ""))
    if rec.a is not None and "accel" not in given and rec.breaks().any():
        lines.append("- The accelerometer's noise variance was estimated from a record with gaps: "
                     "the servo's kicks after missed states read as noise and over-correct the "
                     "EIV mass; give the known variance (`fric identify --accel-noise`).")
    lines += ["", "![force against velocity](force_velocity.png)", "",
              "![mass-adjusted force with the fitted model](mass_adjusted.png)", "",
              "![measured and predicted force over time, residuals](force_time.png)", ""]
    return "\n".join(lines)


def write_report(rec: Recording, fits: Mapping[str, FrictionFit], out_dir,
                 truth: Mapping[str, float] | None = None, title: str = "") -> list[Path]:
    """Write :data:`REPORT_FILES` into ``out_dir`` (created) and return their paths.

    The mass adjustment of the second figure uses the EIV mass when there is one.

    Parameters
    ----------
    rec : Recording
        The recorded run.
    fits : mapping of str to FrictionFit
        The fits by method name (``"ols"``, ``"eiv"``, ...); at least one.
    out_dir : str or path-like
        Directory to write into (created with its parents when missing).
    truth : mapping of str to float, optional
        The true parameter values, as for :func:`estimates_table`.
    title : str, optional
        Title of the figures and the Markdown (default: "Friction identification" and the joint).

    Returns
    -------
    list of pathlib.Path
        The paths of :data:`REPORT_FILES` in ``out_dir``, in that order.
    """
    methods = _ordered(fits)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    title = title or f"Friction identification{': ' + rec.joint if rec.joint else ''}"
    a = rec.acceleration()
    paths = [out / name for name in REPORT_FILES]
    force_velocity_figure(rec, title).savefig(paths[0])
    mass_adjusted_figure(rec, a, fits, title).savefig(paths[1])
    force_time_figure(rec, a, fits, title).savefig(paths[2])
    paths[3].write_text(_markdown(rec, fits, methods, truth, title), encoding="utf-8")
    return paths
