"""Report of an identification run: paper 003's figures and a table of the estimates.

* :func:`estimates_table` — Markdown, one row per parameter of the model (paper 003, eq. 1, with
  the mass of eq. 1's force balance): each method's estimate ± std (OLS, eq. 5; EIV, eq. 6) and,
  when the truth is known (a simulated sample), the truth and the EIV error in units of its std.
* :func:`write_report` — into a directory: ``force_velocity.png`` (raw force against velocity,
  paper 003 Figs. 6–8 (a)), ``mass_adjusted.png`` (``F − m a`` against velocity with the fitted
  kinetic lines and the box of Δv, Dn, Dp, Figs. 6–8 (b)), ``force_time.png`` (measured and
  predicted force over the cycles) and ``estimates.md``.

matplotlib is imported only by :func:`write_report` and used through its object API with the Agg
canvas (no pyplot: no global figure state, no display needed).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Mapping

import numpy as np

from .identification import FrictionFit
from .identification_io import Recording

__all__ = ["estimates_table", "write_report", "PARAMETERS", "REPORT_FILES"]

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
_COLORS = {"ols": "tab:orange", "eiv": "tab:green"}


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
    """A Markdown table of the estimates: a row per parameter (m, Cp, bp, Cn, bn, Dp, Dn, dv), a
    column per method (key of ``fits``, e.g. ``"ols"``, ``"eiv"``) with estimate ± std, then,
    with ``truth`` (parameter -> value), the truth and the EIV error in units of the EIV std
    (``(estimate − truth)/std``; blank where either is unknown)."""
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
def _figure():
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(8.0, 5.0), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    return fig, fig.add_subplot()


def _kinetic_lines(ax, fit: FrictionFit, v: np.ndarray, color: str, label: str) -> None:
    vmax, vmin = float(v.max()), float(v.min())
    if vmax > fit.dv:
        vp = np.linspace(fit.dv, vmax, 50)
        ax.plot(vp, fit.Cp + fit.bp * vp, color=color, lw=2.0, label=label)
        label = None
    if vmin < -fit.dv:
        vn = np.linspace(vmin, -fit.dv, 50)
        ax.plot(vn, -fit.Cn + fit.bn * vn, color=color, lw=2.0, label=label)
    if math.isfinite(fit.Dp) and math.isfinite(fit.Dn):
        xs = [-fit.dv, fit.dv, fit.dv, -fit.dv, -fit.dv]
        ys = [fit.Dn, fit.Dn, fit.Dp, fit.Dp, fit.Dn]
        ax.plot(xs, ys, color=color, lw=1.2, ls="--")


def _force_velocity(rec: Recording, path: Path, title: str) -> None:
    fig, ax = _figure()
    ax.plot(rec.v, rec.force, color="tab:blue", lw=0.5, marker=".", ms=1.5)
    ax.set_xlabel("velocity v [m/s]")
    ax.set_ylabel("measured force F [N]")
    head = f"{title}\n" if title else ""
    ax.set_title(f"{head}raw force against velocity ({len(rec)} samples)", fontsize=10)
    ax.axhline(0.0, color="0.7", lw=0.6)
    ax.axvline(0.0, color="0.7", lw=0.6)
    fig.savefig(path)


def _mass_adjusted(rec: Recording, a: np.ndarray, fits: Mapping[str, FrictionFit],
                   methods: list[str], path: Path, title: str) -> None:
    ref = "eiv" if "eiv" in fits else methods[0]
    m = fits[ref].m
    fig, ax = _figure()
    ax.plot(rec.v, rec.force - m * a, color="tab:blue", lw=0.4, marker=".", ms=1.5, alpha=0.6,
            label=f"F − m a (m = {m:.4g} kg, {ref.upper()})")
    for k in methods:
        f = fits[k]
        _kinetic_lines(ax, f, rec.v, _COLORS.get(k, "tab:red"),
                       f"{k.upper()}: kinetic friction; box Δv = {f.dv:.3g} m/s, "
                       f"Dn = {f.Dn:.3g} N, Dp = {f.Dp:.3g} N")
    ax.axhline(0.0, color="0.7", lw=0.6)
    ax.axvline(0.0, color="0.7", lw=0.6)
    ax.set_xlabel("velocity v [m/s]")
    ax.set_ylabel("mass-adjusted force F − m a [N]")
    head = f"{title}\n" if title else ""
    ax.set_title(f"{head}force adjusted for mass, fitted model (paper 003 eq. 1)", fontsize=10)
    ax.legend(loc="upper left", fontsize=8)
    fig.savefig(path)


def _force_time(rec: Recording, a: np.ndarray, fits: Mapping[str, FrictionFit],
                methods: list[str], path: Path, title: str) -> None:
    fig, ax = _figure()
    ax.plot(rec.t, rec.force, color="tab:blue", lw=0.8, label="measured F")
    for k in methods:
        ax.plot(rec.t, fits[k].predict(rec.v, a), color=_COLORS.get(k, "tab:red"), lw=1.0,
                label=f"{k.upper()} model m a + friction (gaps: |v| ≤ Δv)")
    ax.set_xlabel("time t [s]")
    ax.set_ylabel("force [N]")
    head = f"{title}\n" if title else ""
    ax.set_title(f"{head}measured and predicted force", fontsize=10)
    ax.legend(loc="upper right", fontsize=8)
    fig.savefig(path)


def _markdown(rec: Recording, fits, methods, truth, title: str) -> str:
    lines = [f"# {title}", ""]
    if rec.source:
        lines += [f"Data: {rec.source}", ""]
    lines += [f"{len(rec)} samples over {rec.t[-1] - rec.t[0]:.4g} s (median step "
              f"{rec.dt * 1e3:.4g} ms); acceleration "
              + ("from the accelerometer." if rec.a is not None
                 else "from the 4-point central difference of the velocity."), "",
              "Model: paper 003 eq. (1), F = m a + friction(v), F the force the stage applies "
              "to the sample. OLS is eq. (5), EIV Fuller's estimator eq. (6).", "",
              estimates_table({k: fits[k] for k in methods}, truth), ""]
    for k in methods:
        f = fits[k]
        noise = ", ".join(f"{n} {val:.3g}" for n, val in f.noise.items())
        lines.append(f"- {k.upper()}: {f.n_used} kinetic samples ({f.n_pos} v > Δv, {f.n_neg} "
                     f"v < −Δv), condition number {f.cond:.3g}, residual std "
                     f"{f.residual_std:.3g} N" + (f", noise variances {noise}" if noise else ""))
    lines += ["", "![force against velocity](force_velocity.png)", "",
              "![mass-adjusted force with the fitted model](mass_adjusted.png)", "",
              "![measured and predicted force over time](force_time.png)", ""]
    return "\n".join(lines)


def write_report(rec: Recording, fits: Mapping[str, FrictionFit], out_dir,
                 truth: Mapping[str, float] | None = None, title: str = "") -> list[Path]:
    """Write :data:`REPORT_FILES` into ``out_dir`` (created) and return their paths.

    ``fits`` by method name (``"ols"``, ``"eiv"``); the mass adjustment of the second figure
    uses the EIV mass when there is one. ``truth`` as for :func:`estimates_table`.
    """
    methods = _ordered(fits)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    title = title or f"Friction identification{': ' + rec.joint if rec.joint else ''}"
    a = rec.acceleration()
    paths = [out / name for name in REPORT_FILES]
    _force_velocity(rec, paths[0], title)
    _mass_adjusted(rec, a, fits, methods, paths[1], title)
    _force_time(rec, a, fits, methods, paths[2], title)
    paths[3].write_text(_markdown(rec, fits, methods, truth, title), encoding="utf-8")
    return paths
