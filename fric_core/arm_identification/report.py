"""Report of an arm's joint friction identification (issue 15): figures and a text summary.

What ``fric identify RECORDING --urdf URDF --out DIR`` writes beside ``joint_friction.yaml``:

* ``friction_velocity.png`` — per joint, the friction torque against velocity: the measured
  joint torque with the identified rigid-body torque removed (``τ − τ_rb``, the points), and the
  fitted law of paper 003, ``Cp + bp·v`` for v > Δv and ``−Cn + bn·v`` for v < −Δv (the lines),
  with the Δv band left out of the fit shaded (paper 003 Figs. 6–8 (b), one panel per joint);
* ``holdout.png`` — per joint, the measured torque and the model's prediction on the held-out
  part of the recording (not used by the fit), with the RMS of their difference;
* ``report.md`` — the identified values ± standard deviation per joint, which quantities the data
  determine (with ``--model gear --dynamics identify`` only η_f·η_b: a scale s of the rigid body
  is undone by η_f·s, η_b/s, so η_f and η_b are printed as "not determined", never as numbers),
  the held-out RMS per joint beside the residual std of the fitted part, and the warnings.

The data go in as an :class:`ArmReport` (plain arrays and the
:class:`~.joint_friction.JointFrictionSet` that was written), so the report does not depend on
how the fit was made. matplotlib through its object API on the Agg canvas (no pyplot, no display).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional

import numpy as np

from ..joint_friction import JointFriction, JointFrictionSet

__all__ = ["ArmReport", "ARM_REPORT_FILES", "holdout_rms", "format_value", "joint_units",
           "friction_velocity_figure", "holdout_figure", "summary_markdown", "write_arm_report"]

#: the files :func:`write_arm_report` writes, in the order it returns them
ARM_REPORT_FILES = ("friction_velocity.png", "holdout.png", "report.md")

#: (name, unit, meaning) of the per-joint table's rows
_QUANTITIES = (
    ("Cp", "N·m", "kinetic level, v > 0"),
    ("Cn", "N·m", "kinetic level magnitude, v < 0"),
    ("bp", "N·m·s/rad", "viscosity, v > 0"),
    ("bn", "N·m·s/rad", "viscosity, v < 0"),
)
#: per quantity of :data:`_QUANTITIES`, the unit's key in :func:`joint_units`
_UNIT_KEY = {"Cp": "effort", "Cn": "effort", "bp": "viscous", "bn": "viscous"}


def joint_units(kind: str) -> Dict[str, str]:
    """Units of a joint's quantities by its URDF type: a prismatic joint moves in m and carries
    N, a revolute or continuous one turns in rad and carries N·m.

    Parameters
    ----------
    kind : str
        ``"prismatic"``, ``"revolute"`` or ``"continuous"`` (``UrdfDynamics.joint_kinds``).

    Returns
    -------
    dict
        ``position``, ``velocity``, ``acceleration``, ``effort``, ``viscous`` → unit text.
    """
    if kind == "prismatic":
        return {"position": "m", "velocity": "m/s", "acceleration": "m/s²", "effort": "N",
                "viscous": "N·s/m"}
    return {"position": "rad", "velocity": "rad/s", "acceleration": "rad/s²", "effort": "N·m",
            "viscous": "N·m·s/rad"}


_GEAR_QUANTITIES = (
    ("eta_f", "", "forward efficiency (motor drives the load)"),
    ("eta_b", "", "backward efficiency (load back-drives)"),
    ("eta_product", "", "η_f·η_b"),
)


@dataclass
class ArmReport:
    """What the report shows (arrays: rows are samples, columns the joints in ``joints`` order).

    ``friction``: the identified set (as written to ``joint_friction.yaml``); ``v_fit``,
    ``tau_friction``: velocity [rad/s] and measured torque minus the identified rigid-body torque
    [N·m] on the fitted part; ``t_holdout``, ``tau_holdout``, ``pred_holdout``: time [s],
    measured and predicted torque on the held-out part (empty arrays when nothing was held out;
    NaN predictions, e.g. inside the Δv band where static friction acts, are left out of the RMS
    and show as gaps); ``residual_std``: per joint, the fit's residual std on the fitted part [N·m];
    ``determined``: joint → quantity → False where the data do not determine it (the fit's
    ``determined`` map; such a value is shown as "not determined" with its std only); ``notes``:
    further lines on what the data determine; ``data_notes``: how the recording was prepared
    (gaps, segments, trimmed rows); ``warnings``: one line each; ``effort_lag`` [s]: the
    effort's lag behind the states that the fit undid (q, v, a taken at ``t − effort_lag``);
    ``effort_lag_estimate``, ``effort_lag_std`` [s]: the ``auto`` estimate and its std (None when
    the lag was given); ``effort_lag_consistent``: False when the recording's two halves gave
    different lags (then 0 was used); ``sample_step`` [s]: the recording's sampling step;
    ``joint_kinds``: joint → URDF type (``"prismatic"`` joints are shown in m, m/s, N, N·s/m;
    the others, and joints not listed, in rad, rad/s, N·m, N·m·s/rad: :func:`joint_units`);
    ``design_cond``: the identification design's condition number on the fitted motion (the
    figure ``fric excite`` reports: :mod:`.conditioning`), ``cond``: the fitted law's weighted
    design's (NaN: not shown).
    """

    friction: JointFrictionSet
    v_fit: np.ndarray
    tau_friction: np.ndarray
    t_holdout: np.ndarray
    tau_holdout: np.ndarray
    pred_holdout: np.ndarray
    source: str = ""
    urdf: str = ""
    n_samples: int = 0
    duration: float = math.nan
    cond: float = math.nan
    design_cond: float = math.nan
    residual_std: Dict[str, float] = field(default_factory=dict)
    determined: Dict[str, Dict[str, bool]] = field(default_factory=dict)
    notes: List[str] = field(default_factory=list)
    data_notes: List[str] = field(default_factory=list)
    warnings: List[str] = field(default_factory=list)
    effort_lag: float = 0.0
    effort_lag_estimate: Optional[float] = None
    effort_lag_std: Optional[float] = None
    sample_step: float = math.nan
    effort_lag_consistent: bool = True
    joint_kinds: Dict[str, str] = field(default_factory=dict)

    @property
    def joints(self) -> List[str]:
        """The joint names, in the arrays' column order."""
        return self.friction.names

    def units(self, name: str) -> Dict[str, str]:
        """:func:`joint_units` of joint ``name`` (revolute unless ``joint_kinds`` says)."""
        return joint_units(self.joint_kinds.get(name, "revolute"))

    def prismatic(self) -> List[str]:
        """The prismatic joints, in column order."""
        return [n for n in self.joints if self.joint_kinds.get(n) == "prismatic"]


def holdout_rms(measured, predicted) -> np.ndarray:
    """Per joint, the RMS of ``measured − predicted`` over the samples where both are finite.

    Parameters
    ----------
    measured, predicted : (N, n) array_like
        Measured and predicted joint torques [N·m].

    Returns
    -------
    (n,) ndarray
        RMS error per joint [N·m]; NaN for a joint without a finite sample.
    """
    m = np.atleast_2d(np.asarray(measured, dtype=float))
    p = np.atleast_2d(np.asarray(predicted, dtype=float))
    if m.shape != p.shape:
        raise ValueError(f"predicted: expected the shape of measured {m.shape}, got {p.shape}")
    d = m - p
    ok = np.isfinite(d)
    count = ok.sum(axis=0)
    ss = np.where(ok, d, 0.0) ** 2
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, np.sqrt(ss.sum(axis=0) / np.maximum(count, 1)), np.nan)


#: Fixed margins [in] of the panel grid (:func:`_figure`): room for the suptitle and a panel
#: title (top), x tick labels and label (bottom, and between rows with the next row's title),
#: y tick labels of up to ~7 characters and the y label (left, and between columns), at the
#: default 10-point font. Fixed margins instead of a layout engine: matplotlib's constrained
#: layout measures every tick label twice per save (two iterations), which was most of the
#: report's time (0.3–0.5 s a figure on this project's 2-core machine).
_MARGINS = {"top": 0.6, "bottom": 0.5, "left": 0.9, "right": 0.15, "row_gap": 0.75,
            "col_gap": 1.0, "legend": 0.35}


def _figure(n: int, height_per_row: float = 2.6, legend_below: bool = False):
    """A figure of ``n`` panels in two columns (one for a single panel) on an Agg canvas, laid
    out with the fixed :data:`_MARGINS` (plus a strip under the panels for a figure legend when
    ``legend_below``); returns ``(fig, axes)``."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    m = _MARGINS
    cols = 1 if n == 1 else 2
    rows = -(-n // cols)
    width = 5.0 * cols
    height = 0.8 + height_per_row * rows + (m["legend"] if legend_below else 0.0)
    bottom = m["bottom"] + (m["legend"] if legend_below else 0.0)
    panel_w = (width - m["left"] - m["right"] - (cols - 1) * m["col_gap"]) / cols
    panel_h = (height - m["top"] - bottom - (rows - 1) * m["row_gap"]) / rows
    fig = Figure(figsize=(width, height), dpi=100)
    FigureCanvasAgg(fig)
    grid = {"left": m["left"] / width, "right": 1.0 - m["right"] / width,
            "top": 1.0 - m["top"] / height, "bottom": bottom / height,
            "wspace": m["col_gap"] / panel_w, "hspace": m["row_gap"] / panel_h}
    axes = np.atleast_1d(fig.subplots(rows, cols, squeeze=False, gridspec_kw=grid).ravel())
    for ax in axes[n:]:
        ax.set_visible(False)
    fig._fric_title_y = 1.0 - 0.12 / height  # the suptitle's top, 0.12 in under the edge
    fig._fric_legend_y = 0.06 / height  # a figure legend's bottom
    return fig, axes[:n]


def _suptitle(fig, text: str) -> None:
    fig.suptitle(text, fontsize=11, y=fig._fric_title_y, va="top")


def _law_lines(ax, jf: JointFriction, v: np.ndarray, dv: float) -> None:
    finite = v[np.isfinite(v)]
    if finite.size == 0:
        return
    vmin, vmax = float(finite.min()), float(finite.max())
    line = (f"Cp {jf.Cp:.3g}, bp {jf.bp:.3g} / Cn {jf.Cn:.3g}, bn {jf.bn:.3g}")
    curve = jf.law == "curve"
    # the law the file holds in red; beside a curve, the straight line fitted too (dashed)
    for side, lo, hi in ((1, dv, vmax), (-1, vmin, -dv)):
        if not hi > lo:
            continue
        vs = np.linspace(lo, hi, 60)
        lin = jf.Cp + jf.bp * vs if side > 0 else -jf.Cn + jf.bn * vs
        if curve:
            ax.plot(vs, jf.curve.kinetic(vs), color="tab:red", lw=1.6, zorder=3,
                    label=f"fit: curve ({len(jf.curve.v_pos)} knots a side)" if side > 0
                    or vmax <= dv else None)
            ax.plot(vs, lin, color="0.2", lw=0.9, ls="--", zorder=3,
                    label=f"line: {line}" if side > 0 or vmax <= dv else None)
        else:
            ax.plot(vs, lin, color="tab:red", lw=1.6, zorder=3,
                    label=f"fit: {line}" if side > 0 or vmax <= dv else None)


def friction_velocity_figure(report: ArmReport, title: str = ""):
    """Per joint: measured torque minus the identified rigid-body torque against velocity, with
    the fitted law of paper 003 and the Δv band shaded; returns the Figure.

    Parameters
    ----------
    report : ArmReport
        The data (``v_fit``, ``tau_friction``, ``friction``).
    title : str, optional
        The figure's title; when empty, "joint friction: data with the identified rigid-body
        torque removed".

    Returns
    -------
    matplotlib.figure.Figure
        One panel per joint (friction against velocity), on an Agg canvas.
    """
    names = report.joints
    v = np.asarray(report.v_fit, dtype=float).reshape(-1, len(names))
    f = np.asarray(report.tau_friction, dtype=float).reshape(-1, len(names))
    dv = float(report.friction.dv or 0.0)
    fig, axes = _figure(len(names))
    for j, (ax, name) in enumerate(zip(axes, names)):
        step = max(1, v.shape[0] // 3000)  # enough points to see the spread, a light file
        ax.plot(v[::step, j], f[::step, j], lw=0.0, marker=".", ms=1.5, alpha=0.35,
                color="tab:blue", zorder=1, label="τ − τ_rigid body")
        if dv > 0:
            ax.axvspan(-dv, dv, color="0.85", zorder=0, label=f"left out, |v| ≤ Δv = {dv:.3g}")
        _law_lines(ax, report.friction.joints[name], v[:, j], dv)
        # the axis spans the fitted rows (outside the band): inside it the model attributes no
        # torque to friction, and the gear's drive/back-drive switch leaves large residuals
        fitted = f[(np.abs(v[:, j]) > dv) & np.isfinite(f[:, j]), j]
        if fitted.size:
            lo, hi = np.percentile(fitted, [0.2, 99.8])
            pad = 0.15 * (hi - lo) + 1e-9
            ax.set_ylim(min(lo, 0.0) - pad, max(hi, 0.0) + pad)
        ax.axhline(0.0, color="0.6", lw=0.6, zorder=0)
        ax.set_title(name, fontsize=10, y=1.0)  # y given: no search for room above the axes
        u = report.units(name)
        ax.set_xlabel(f"velocity [{u['velocity']}]")
        ax.set_ylabel(f"friction {'force' if u['effort'] == 'N' else 'torque'} [{u['effort']}]")
        ax.legend(loc="upper left", fontsize=7, framealpha=0.9)
    _suptitle(fig, title or "joint friction: data with the identified rigid-body torque removed")
    return fig


def holdout_figure(report: ArmReport, title: str = ""):
    """Per joint: measured and predicted torque on the held-out part, RMS error in the title;
    one legend under the panels says what the prediction's gaps are (the Δv band) and how many
    gaps the stamps have; returns the Figure.

    Parameters
    ----------
    report : ArmReport
        The data (``t_holdout``, ``tau_holdout``, ``pred_holdout``).
    title : str, optional
        The figure's title; when empty, "held-out part of the recording (not used by the fit)".

    Returns
    -------
    matplotlib.figure.Figure
        One panel per joint (measured and predicted torque against time), on an Agg canvas.
    """
    names = report.joints
    t = np.asarray(report.t_holdout, dtype=float).ravel()
    meas = np.asarray(report.tau_holdout, dtype=float).reshape(-1, len(names))
    pred = np.asarray(report.pred_holdout, dtype=float).reshape(-1, len(names))
    rms = holdout_rms(meas, pred) if t.size else np.full(len(names), np.nan)
    fig, axes = _figure(len(names), legend_below=bool(t.size))
    step = max(1, t.size // 3000)  # a screen's worth of points per panel: a light, fast file
    # what the gaps are: no prediction inside the Δv band (static friction), and lost stamps
    dv = float(report.friction.dv or 0.0)
    dt = float(report.sample_step)
    n_gaps = int(np.sum(np.diff(t) > 1.5 * dt)) if math.isfinite(dt) and dt > 0 else 0
    meas_label = "measured" + (f" ({n_gaps} gap{'s' * (n_gaps > 1)} in the stamps, joined "
                               "straight)" if n_gaps else "")
    pred_label = (f"predicted; gaps: |v| ≤ Δv = {dv:.3g} "
                  f"{'rad/s or m/s' if report.prismatic() else 'rad/s'}, static friction (no "
                  "prediction, not in the RMS)")
    for j, (ax, name) in enumerate(zip(axes, names)):
        if t.size:
            ax.plot(t[::step], meas[::step, j], color="tab:blue", lw=2.5, alpha=0.4, zorder=1,
                    label=meas_label)
            ax.plot(t[::step], pred[::step, j], color="0.1", lw=0.7, zorder=2,
                    label=pred_label)
        u = report.units(name)
        ax.set_title(f"{name}: RMS error {rms[j]:.3g} {u['effort']}" if t.size else
                     f"{name}: nothing held out", fontsize=10, y=1.0)
        ax.set_xlabel("time [s]")
        ax.set_ylabel(f"joint {'force' if u['effort'] == 'N' else 'torque'} [{u['effort']}]")
    if t.size:  # one legend under the panels, off the data: it says what the gaps are
        fig.legend(*axes[0].get_legend_handles_labels(), loc="lower center",
                   bbox_to_anchor=(0.5, fig._fric_legend_y), ncol=2, fontsize=8, frameon=False)
    _suptitle(fig, title or "held-out part of the recording (not used by the fit)")
    return fig


def format_value(jf: JointFriction, name: str, determined: bool = True) -> str:
    """``value ± std`` of one quantity of a joint, or "not determined" (with the std alone, when
    known) where the value is None or ``determined`` is False: no number the data cannot support.

    Parameters
    ----------
    jf : JointFriction
        The joint's identified friction.
    name : str
        The quantity (``"Cp"``, ``"eta_f"``, ...).
    determined : bool
        False when the data do not determine it (the fit's ``determined`` map).

    Returns
    -------
    str
        The table cell.
    """
    val = getattr(jf, name)
    sd = jf.std.get(name)
    has_sd = sd is not None and math.isfinite(sd)
    if val is None or not determined:
        return f"not determined (± {sd:.2g})" if val is not None and has_sd else "not determined"
    return f"{val:.4g} ± {sd:.2g}" if has_sd else f"{val:.4g}"


def _determined_lines(fs: JointFrictionSet, determined) -> List[str]:
    lines = []
    undetermined = {n: [k for k, ok in determined.get(n, {}).items() if not ok
                        and k not in ("eta_f", "eta_b")] for n in fs.names}
    bad = {n: ks for n, ks in undetermined.items() if ks}
    good = [n for n in fs.names if n not in bad]
    if good:
        lines.append(f"The Coulomb levels Cp, Cn and viscosities bp, bn (paper 003's asymmetric "
                     f"law) of {', '.join(good)} are determined by the data; their standard "
                     "deviations are in the table.")
    for n, ks in bad.items():
        lines.append(f"{n}: {', '.join(ks)} not determined by these data (relative std too large "
                     "or too little velocity range; see the warnings): excite the joint more.")
    if fs.model != "gear":
        return lines
    both = [n for n, jf in fs.joints.items() if jf.has_gear]
    prod = [n for n, jf in fs.joints.items() if not jf.has_gear and jf.eta_product is not None]
    none = [n for n, jf in fs.joints.items() if not jf.has_gear and jf.eta_product is None]
    if both:
        lines.append(f"η_f and η_b are determined for {', '.join(both)} (the URDF's rigid-body "
                     "parameters trusted).")
    if prod:
        lines.append(f"Only the product η_f·η_b is determined for {', '.join(prod)}: the "
                     "rigid-body parameters were identified too, and scaling them by s is exactly "
                     "undone by η_f·s and η_b/s. The individual efficiencies need trusted "
                     "rigid-body parameters (`--dynamics urdf`) or a known payload.")
    if none:
        lines.append(f"No efficiency is determined for {', '.join(none)}.")
    return lines


def _ms(x: float) -> str:
    return f"{x * 1e3:.3g} ms"


def _effort_lag_line(report: ArmReport) -> str:
    """The effort lag the fit undid, and how it was chosen."""
    lag, step = report.effort_lag, report.sample_step
    samples = f" ({lag / step:.2f} samples of {_ms(step)})" if math.isfinite(step) and lag else ""
    est = report.effort_lag_estimate
    if est is None:
        how = "given (`--effort-lag`)"
    else:
        sd = report.effort_lag_std
        spread = f" ± {_ms(sd)}" if sd is not None and math.isfinite(sd) else ""
        how = f"estimated from the data (`--effort-lag auto`: {_ms(est)}{spread}"
        if lag:
            how += ")"
        elif not report.effort_lag_consistent:
            how += ", but the recording's halves disagree: not determined, 0 used)"
        else:
            how += ", not significantly above 0: 0 used)"
    what = ("q, v, a were taken at t − lag, the effort at its stamp t" if lag else
            "states and effort taken at the same instant")
    return (f"Effort lag {_ms(lag) if lag else '0'}{samples}, {how}: {what}. A command held over "
            "the step that ends at its stamp lags by half a step; a torque sensor by ≈ 0.")


def summary_markdown(report: ArmReport, title: str = "Joint friction identification") -> str:
    """The text summary (Markdown): the table of identified values ± std per joint, what the data
    determine, held-out RMS error per joint and the warnings.

    Parameters
    ----------
    report : ArmReport
        The data.
    title : str, optional
        The heading.

    Returns
    -------
    str
        Markdown text, ending with a newline.
    """
    fs = report.friction
    names = report.joints
    lines = [f"# {title}", ""]
    if report.source:
        lines.append(f"Data: {report.source}")
    if report.urdf:
        lines.append(f"URDF: {report.urdf}")
    facts = [f"model {fs.model}", f"dynamics {fs.dynamics}", f"method {fs.method}"]
    if fs.dv is not None:
        linear = report.prismatic()
        facts.append(f"Δv = {fs.dv:.3g} rad/s"
                     + (f" (m/s for {', '.join(linear)})" if linear else ""))
    if report.n_samples:
        facts.append(f"{report.n_samples} samples"
                     + (f" over {report.duration:.4g} s" if math.isfinite(report.duration)
                        else ""))
    if math.isfinite(report.design_cond):
        facts.append(f"condition number of the identification design {report.design_cond:.3g} "
                     "(fric excite's figure: the column-scaled rigid-body + friction regressor "
                     "on the fitted motion)")
    if math.isfinite(report.cond):
        facts.append(f"of the fitted law's weighted design {report.cond:.3g}"
                     if math.isfinite(report.design_cond) else
                     f"condition number {report.cond:.3g}")
    lines += [", ".join(facts) + "."]
    lines += ["", _effort_lag_line(report)]
    if report.data_notes:
        lines += [""] + [f"- {n}" for n in report.data_notes]
    lines += ["", "## Identified friction", ""]
    quantities = _QUANTITIES + (_GEAR_QUANTITIES if fs.model == "gear" else ())
    head = ["quantity", "unit"] + names
    rows = [head, ["---"] * len(head)]
    linear = report.prismatic()
    for q, unit, _ in quantities:
        if linear and q in _UNIT_KEY:
            unit += f"; {', '.join(linear)}: {joint_units('prismatic')[_UNIT_KEY[q]]}"
        rows.append([q, unit] + [format_value(fs.joints[n], q,
                                              report.determined.get(n, {}).get(q, True))
                                 for n in names])
    if any(jf.offset or "offset" in jf.std for jf in fs.joints.values()):
        rows.append(["offset", "N·m"] + [
            (f"{jf.offset:.4g} ± {jf.std['offset']:.2g}" if "offset" in jf.std
             else f"{jf.offset:.4g}") for jf in (fs.joints[n] for n in names)])
    selection = fs.extra.get("model_selection") if isinstance(fs.extra, dict) else None
    rows.append(["law", ""] + [fs.joints[n].law for n in names])
    if isinstance(selection, dict) and all(n in selection for n in names):
        rows.append(["held-out RMS, line / curve", "N·m"] + [
            f"{selection[n]['asymmetric']:.4g} / {selection[n]['curve']:.4g}" for n in names])
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    if any(jf.law == "curve" for jf in fs.joints.values()):
        lines += ["", "Where the law is `curve`, the friction is the monotone piecewise-linear "
                  "curve of joint_friction.yaml (its levels at the knots, with their stds, are "
                  "in the file; friction_velocity.png draws it); Cp, Cn, bp, bn are then the "
                  "straight line fitted beside it, for comparison."]
    lines += ["", "Values ± one standard deviation. " + "; ".join(
        f"{q}: {meaning}" for q, _, meaning in quantities) + "."]
    lines += _dynamics_lines(fs.extra.get("dynamics_selection")
                             if isinstance(fs.extra, dict) else None, names)
    lines += ["", "## What the data determine", ""]
    lines += [f"- {s}" for s in _determined_lines(fs, report.determined) + list(report.notes)]
    lines += ["", "## Prediction on the held-out part", ""]
    t = np.asarray(report.t_holdout, dtype=float).ravel()
    if t.size:
        rms = holdout_rms(report.tau_holdout, report.pred_holdout)
        lines.append(f"{t.size} samples ({t[-1] - t[0]:.4g} s) not used by the fit; the RMS is "
                     "over a joint's samples outside the Δv band (inside it static friction "
                     "holds the joint: the model predicts no torque there). A model that "
                     "captures the physics predicts them to within the torque noise: the "
                     "held-out RMS error is then close to the fit's residual std.")
        unit = "N·m" + (f"; {', '.join(linear)}: N" if linear else "")
        lines += ["", f"| joint | held-out RMS error [{unit}] | fit residual std [{unit}] |",
                  "| --- | --- | --- |"]
        for j, n in enumerate(names):
            rs = report.residual_std.get(n)
            lines.append(f"| {n} | {rms[j]:.3g} | "
                         + (f"{rs:.3g}" if rs is not None else "") + " |")
    else:
        lines.append("Nothing was held out.")
    lines += ["", "## Warnings", ""]
    lines += [f"- {w}" for w in report.warnings] or ["None."]
    lines += ["", "![friction torque against velocity](friction_velocity.png)", "",
              "![held-out prediction](holdout.png)", ""]
    return "\n".join(lines)


def _dynamics_lines(sel, names) -> List[str]:
    """The report's paragraph on ``--dynamics auto``'s choice (the file's
    ``dynamics_selection``); empty without one."""
    if not isinstance(sel, dict) or sel.get("chosen") not in ("urdf", "identify"):
        return []
    z, where = sel.get("difference_in_std"), sel.get("largest_difference", "")
    rms = "; ".join(f"{n} {sel[n]['urdf']:.3g} / {sel[n]['identify']:.3g}" for n in names
                    if isinstance(sel.get(n), dict))
    if sel["chosen"] == "urdf":
        head = ("Rigid body: the URDF's (`--dynamics auto`). Its friction values agree with "
                "those fitted with the rigid body identified to within "
                f"{z} of their stds (largest: {where}; refused above 4), and it predicts the "
                "held-out part as well. Each std includes the difference between the two "
                "fits, the bias a URDF error could leave.")
    else:
        head = ("Rigid body: identified (`--dynamics auto` refused the URDF's: its friction "
                f"values differ from the identified ones by up to {z} stds, at {where}, or it "
                "predicts the held-out part worse; see the warnings).")
    return ["", head + (f" Held-out RMS, URDF / identified [N·m]: {rms}." if rms else "")]


def write_arm_report(report: ArmReport, out_dir, title: str = "") -> List[Path]:
    """Write :data:`ARM_REPORT_FILES` into ``out_dir`` (created) and return their paths.

    Parameters
    ----------
    report : ArmReport
        The data.
    out_dir : str or path-like
        Directory to write into (created with its parents when missing).
    title : str, optional
        Heading of ``report.md`` (default "Joint friction identification").

    Returns
    -------
    list of pathlib.Path
        The paths of :data:`ARM_REPORT_FILES` in ``out_dir``, in that order.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / name for name in ARM_REPORT_FILES]
    # the two figures are drawn side by side where the platform forks (each takes ~0.25 s of
    # matplotlib on a 7-joint arm: half of fric identify's report step); any failure of the
    # child is redone here, so the files are the same either way
    child = _draw_in_child(friction_velocity_figure, report, paths[0])
    holdout_figure(report).savefig(paths[1])
    if child is None or not _child_done(child):
        friction_velocity_figure(report).savefig(paths[0])
    paths[2].write_text(summary_markdown(report, title or "Joint friction identification"),
                        encoding="utf-8")
    return paths


def _draw_in_child(figure, report: ArmReport, path: Path):
    """A forked process drawing ``figure(report)`` into ``path``; None where fork is not
    available or not safe: only a single-threaded process forks (a lock another thread holds at
    the fork — a DDS or BLAS worker's — would stay locked in the child)."""
    import multiprocessing
    import os

    try:
        single = len(os.listdir("/proc/self/task")) == 1
    except OSError:
        single = False
    if not single or "fork" not in multiprocessing.get_all_start_methods():
        return None
    try:
        proc = multiprocessing.get_context("fork").Process(
            target=_draw, args=(figure, report, str(path)), daemon=True)
        proc.start()
    except OSError:
        return None
    return proc


def _draw(figure, report: ArmReport, path: str) -> None:
    figure(report).savefig(path)


def _child_done(proc, timeout: float = 30.0) -> bool:
    proc.join(timeout)
    if proc.is_alive():
        proc.kill()
        proc.join()
        return False
    return proc.exitcode == 0

