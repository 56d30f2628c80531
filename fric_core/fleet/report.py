"""The fleet report: per joint the friction levels over time, and ``report.md`` (issue 26).

One PNG per joint (``levels_<joint>.png``): a panel per level (:data:`.table.LEVELS`) against the
recordings' dates, every robot a line with its per-recording ±1 std bars, the fleet's spread as a
band (per day the median over the robots ± 1.4826·MAD), a flagged robot drawn thick with the
fitted change dashed. Beyond :data:`COLOURED_ROBOTS` robots the unflagged ones are thin grey
lines (a fleet of hundreds stays readable). matplotlib through its object API on the Agg canvas.

``report.md``: what was run, the findings (:class:`.trends.Finding` sentences), how the
detector decided (levels watched, α, number of tests, threshold, each joint's scale and the
smallest trend it could have seen), the figures, the recordings that failed with their reasons.
"""

from __future__ import annotations

import datetime as _dt
import math
import re
from pathlib import Path
from typing import Dict, List, Sequence

import numpy as np

from .table import LEVELS
from .trends import QUANTITY_NAMES, Detection, Finding

__all__ = ["COLOURED_ROBOTS", "levels_figure", "write_fleet_report"]

#: Up to this many robots each gets its own colour; beyond, only the flagged ones.
COLOURED_ROBOTS = 20


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name)


def _fitted(finding: Finding, times: Sequence[_dt.datetime]):
    """The finding's fitted change at ``times`` (the level before, then the trend or step)."""
    t0 = finding.since.timestamp()
    out = []
    for t in times:
        dt_days = (t.timestamp() - t0) / 86400.0
        if finding.kind == "trend":
            slope = finding.change / finding.days if finding.days else 0.0
            out.append(finding.before + slope * max(0.0, dt_days))
        else:
            out.append(finding.before + (finding.change if dt_days >= 0 else 0.0))
    return out


def levels_figure(joint: str, rows: Sequence[dict], findings: Sequence[Finding] = (),
                  levels: Sequence[str] = LEVELS):
    """The figure of one joint's levels over time (module docstring).

    Parameters
    ----------
    joint : str
        The joint.
    rows : sequence of dict
        The fleet table's rows (any joints; this one's are drawn).
    findings : sequence of Finding
        Findings to draw (those of this joint are).
    levels : sequence of str
        The levels, one panel each.

    Returns
    -------
    matplotlib.figure.Figure
        On an Agg canvas.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    mine = [r for r in rows if r["joint"] == joint and r.get("time") is not None]
    robots = sorted({r["robot"] for r in mine})
    flagged = {(f.robot, f.quantity): f for f in findings if f.joint == joint}
    flagged_robots = {f.robot for f in findings if f.joint == joint}
    fig = Figure(figsize=(10, 3.4 * len(levels)), dpi=100)
    FigureCanvasAgg(fig)
    axes = fig.subplots(len(levels), 1, sharex=True, squeeze=False)[:, 0]
    colours = {rb: f"C{i % 10}" if len(robots) <= 10 else None for i, rb in enumerate(robots)}
    if len(robots) > 10:
        from matplotlib import colormaps

        cmap = colormaps["tab20"]
        colours = {rb: cmap(i % 20) for i, rb in enumerate(robots)}
    unit = mine[0].get("unit", "N·m") if mine else "N·m"
    for ax, q in zip(axes, levels):
        # the fleet's spread per day: median ± 1.4826·MAD over the robots
        by_day: Dict[_dt.date, List[float]] = {}
        for r in mine:
            if math.isfinite(r[q]):
                by_day.setdefault(r["time"].date(), []).append(r[q])
        days = sorted(by_day)
        if days:
            med = np.array([np.median(by_day[d]) for d in days])
            mad = np.array([1.4826 * np.median(np.abs(np.array(by_day[d]) - m))
                            for d, m in zip(days, med)])
            noon = [_dt.datetime(d.year, d.month, d.day, 12, tzinfo=_dt.timezone.utc)
                    for d in days]
            ax.fill_between(noon, med - mad, med + mad, color="0.85", zorder=0,
                            label="fleet median ± 1.4826·MAD")
            ax.plot(noon, med, color="0.55", lw=1.0, zorder=1)
        for rb in robots:
            pts = sorted((r for r in mine if r["robot"] == rb), key=lambda r: r["time"])
            t = [r["time"] for r in pts]
            y = np.array([r[q] for r in pts])
            e = np.array([r[q + "_std"] for r in pts])
            hot = rb in flagged_robots
            grey = len(robots) > COLOURED_ROBOTS and not hot
            col = "crimson" if hot else "0.6" if grey else colours[rb]
            ax.errorbar(t, y, yerr=e, color=col, lw=2.4 if hot else (0.6 if grey else 1.0),
                        marker="o", ms=3 if not grey else 0, elinewidth=0.6, capsize=0,
                        alpha=1.0 if hot or not grey else 0.5, zorder=3 if hot else 2,
                        label=rb if (not grey and len(robots) <= COLOURED_ROBOTS) or hot
                        else None)
            f = flagged.get((rb, q))
            if f is not None:
                ax.plot(t, _fitted(f, t), "--", color="k", lw=1.2, zorder=4)
                ax.annotate(f"{rb}: {100 * f.relative:+.0f} %" if math.isfinite(f.relative)
                            else f"{rb}: {f.change:+.3g} {unit}", (t[-1], y[-1]),
                            textcoords="offset points", xytext=(4, 0), fontsize=8)
        ax.set_ylabel(f"{QUANTITY_NAMES.get(q, q)} level "
                      + (f"[{unit}]" if q == "coulomb" else f"[{unit}·s/rad]"
                         if unit == "N·m" else f"[{unit}·s/m]"))
        ax.grid(True, alpha=0.3)
    axes[0].set_title(f"{joint}: friction levels over time ({len(robots)} robots; ±1 std of "
                      "each recording)")
    handles, labels = axes[0].get_legend_handles_labels()
    if handles:
        axes[0].legend(handles, labels, fontsize=7, ncol=min(6, max(1, len(handles) // 3)),
                       loc="upper left")
    fig.autofmt_xdate()
    fig.tight_layout()
    return fig


def _fmt(x: float, spec: str = ".3g") -> str:
    return "—" if x is None or not math.isfinite(x) else format(x, spec)


def write_fleet_report(out_dir, rows: Sequence[dict], detection: Detection,
                       failures: Sequence[dict], summary: Dict[str, object],
                       levels: Sequence[str] = LEVELS, figures: bool = True) -> List[Path]:
    """Write the figures and ``report.md`` (module docstring).

    Parameters
    ----------
    out_dir : str or path-like
        The directory (existing).
    rows : sequence of dict
        The fleet table's rows.
    detection : Detection
        What :func:`.trends.detect_changes` found.
    failures : sequence of dict
        The failures table's rows (``recording``, ``reason``).
    summary : dict
        What was run, shown first: label → value (e.g. ``"recordings": 200``).
    levels : sequence of str
        The levels drawn (one panel each).
    figures : bool
        Draw the PNGs (False: report.md only).

    Returns
    -------
    list of pathlib.Path
        The files written (report.md last).
    """
    out = Path(out_dir)
    joints: List[str] = []
    for r in rows:
        if r["joint"] not in joints:
            joints.append(r["joint"])
    paths: List[Path] = []
    if figures:
        for j in joints:
            p = out / f"levels_{_safe(j)}.png"
            levels_figure(j, rows, detection.findings, levels).savefig(p)
            paths.append(p)
    watched = sorted({s.quantity for s in detection.series} | set(detection.prior_dof))
    lines = ["# Fleet friction report", ""]
    lines += [f"- {k}: {v}" for k, v in summary.items()]
    lines += ["", "## Findings", ""]
    if detection.findings:
        lines += [f"- {f.sentence()}" for f in detection.findings]
    else:
        lines.append("None: no watched level of any robot changed beyond the threshold.")
    lines += ["", "## How changes are detected", "",
              f"Levels watched: {', '.join(QUANTITY_NAMES.get(q, q) for q in watched)} "
              "(`coulomb` = (Cp + Cn)/2, `viscous` = (bp + bn)/2: offset-free). Per robot and "
              "joint, a weighted linear trend, a trend from a later onset or a level shift, "
              "against a constant level; each series' scale is its residual scatter shrunk "
              "toward the fleet's (the moderated t-statistic, Smyth 2004: "
              "`fric_core/fleet/trends.py`).", "",
              f"- alternatives tested over the fleet: m = {detection.tests}",
              f"- family-wise false-alarm probability α = {detection.alpha:g} (Bonferroni): a "
              f"series is flagged when a p-value is below α/m = {detection.p_threshold:.2g}, "
              f"i.e. beyond {detection.z_threshold:.2f} stds (normal limit; a little more with "
              "few degrees of freedom)",
              "- prior degrees of freedom d0 (how alike the robots' scatter is; ∞: alike): "
              + ", ".join(f"{q} {_fmt(d, '.3g')}" for q, d in detection.prior_dof.items())]
    lines += [f"- note: {n}" for n in detection.notes]
    lines += ["", "| joint | level | scale s0 (× the recordings' stds) | smallest detectable "
                  "linear trend, median over robots [%/day] |", "|---|---|---|---|"]
    for (j, q), s0 in sorted(detection.prior_scale.items()):
        det = [s.detectable_per_day for s in detection.series
               if s.joint == j and s.quantity == q and math.isfinite(s.detectable_per_day)]
        lines.append(f"| {j} | {QUANTITY_NAMES.get(q, q)} | {_fmt(s0, '.2f')} | "
                     f"{_fmt(100 * float(np.median(det)), '.2f') if det else '—'} |")
    if detection.skipped:
        lines += ["", "Series not tested or with recordings left out:", ""]
        lines += [f"- {rb} {j} {q}: {why}" for rb, j, q, why in detection.skipped]
    lines += ["", "## Levels over time", ""]
    lines += [f"![{j}](levels_{_safe(j)}.png)" for j in joints] if figures else \
        ["(figures not drawn)"]
    lines += ["", "## Recordings that failed", ""]
    if failures:
        lines += ["| recording | reason |", "|---|---|"]
        lines += [f"| {f['recording']} | {' '.join(str(f['reason']).split())} |"
                  for f in failures]
    else:
        lines.append("None.")
    warned = sum(1 for r in rows if r.get("warnings"))
    lines += ["", f"{warned} of {len(rows)} rows carry warnings (the `warnings` column of "
                  "fleet.csv).", ""]
    report = out / "report.md"
    report.write_text("\n".join(lines), encoding="utf-8")
    paths.append(report)
    return paths
