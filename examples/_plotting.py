"""Small helpers shared by the figure scripts: argument parsing, Agg plotting, PASS/FAIL checks."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("MPLBACKEND", "Agg")

# Make ``fric_core`` importable when a script is run from a plain checkout (no install).
_ROOT = str(Path(__file__).resolve().parent.parent)
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

import matplotlib  # noqa: E402
import numpy as np  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402,F401  (re-exported for the scripts)

DEFAULT_OUT = "out/examples"


def parse_args(argv, description: str, quick: bool = False) -> argparse.Namespace:
    """``--out DIR`` (created) and, if ``quick``, a ``--quick`` flag."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--out", default=DEFAULT_OUT, help=f"output directory (default {DEFAULT_OUT})")
    if quick:
        p.add_argument("--quick", action="store_true", help="shorter run (used by the tests)")
    args = p.parse_args(argv)
    args.out = Path(args.out)
    args.out.mkdir(parents=True, exist_ok=True)
    return args


def _fill_in(polys, step_px: float):
    """The polylines ``polys`` (display pixels) with their segments filled in every ``step_px``
    (so a line crossing a box without a vertex inside still hits it); non-finite vertices
    (NaN gaps) are dropped, and the polyline is broken there."""
    out = []
    for poly in polys:
        poly = np.asarray(poly, float).reshape(-1, 2)
        ok = np.all(np.isfinite(poly), axis=1)
        # split at the gaps: a NaN breaks a line, the pieces are drawn separately
        for piece in np.split(poly, np.flatnonzero(~ok)):
            p = piece[np.all(np.isfinite(piece), axis=1)]
            if len(p) < 2:
                out.append(p)
                continue
            seg = np.diff(p, axis=0)
            n = np.maximum(1, np.ceil(np.hypot(seg[:, 0], seg[:, 1]) / step_px)).astype(int)
            frac = np.concatenate([np.arange(k) / k for k in n])
            start = np.repeat(p[:-1], n, axis=0)
            out.append(np.vstack([start + np.repeat(seg, n, axis=0) * frac[:, None], p[-1:]]))
    return np.vstack(out) if out else np.zeros((0, 2))


def _filled(polys, facecolors) -> list:
    """The closed polygons of ``polys`` when the face is painted (some alpha), else none."""
    alpha = np.asarray(facecolors, float).reshape(-1, 4)[:, 3] if len(facecolors) else []
    if not np.any(np.asarray(alpha) > 0):
        return []
    return [np.asarray(q, float) for q in polys if len(q) >= 3]


def _display_points(artist, step_px: float = 2.0):
    """``(points, pad, areas)``: the points an artist draws, in display pixels, its segments
    filled in every ``step_px``; half the width of what is drawn there in pixels (half the line
    width, the marker's radius): a legend that comes within ``pad`` of a point covers part of
    it; and the polygons it fills (a patch's or a collection's face; display pixels). A Line2D
    drawn with markers only counts its vertices, not the empty segments between them;
    collections (scatter points, fill_between, vlines, violins, error bars) count too."""
    from matplotlib.collections import Collection, PathCollection
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    none = (np.zeros((0, 2)), 0.0, [])
    fig = artist.get_figure()
    px = (fig.dpi if fig is not None else 72.0) / 72.0      # pixels per point
    if isinstance(artist, Line2D):
        xy = artist.get_transform().transform(np.asarray(artist.get_xydata(), float))
        line = artist.get_linestyle() not in ("None", "none", " ", "") \
            and artist.get_linewidth() > 0
        marker = artist.get_marker() not in (None, "None", "none", " ", "") \
            and artist.get_markersize() > 0
        pad = max(artist.get_linewidth() / 2 if line else 0.0,
                  artist.get_markersize() / 2 if marker else 0.0) * px
        if line:
            return _fill_in([xy], step_px), pad, []
        return (xy[np.all(np.isfinite(xy), axis=1)], pad, []) if marker else none
    if isinstance(artist, Patch):
        polys = artist.get_path().to_polygons(artist.get_transform())
        face = [artist.get_facecolor()] if artist.get_fill() else []
        return _fill_in(polys, step_px), artist.get_linewidth() / 2 * px, _filled(polys, face)
    if isinstance(artist, PathCollection):
        off = np.asarray(artist.get_offsets(), float)
        if not len(off):
            return none
        sizes = artist.get_sizes()                          # marker areas [points²]
        pad = float(np.sqrt(np.max(sizes)) / 2 * px) if len(sizes) else 0.0
        return artist.get_offset_transform().transform(off), pad, []
    if isinstance(artist, Collection):
        trans = artist.get_transform()
        polys = [q for path in artist.get_paths()
                 for q in path.to_polygons(trans, closed_only=False)]
        lws = artist.get_linewidths()
        pad = float(np.max(lws)) / 2 * px if len(lws) else 0.0
        return _fill_in(polys, step_px), pad, _filled(polys, artist.get_facecolors())
    return none


def layout_problems(fig, tol_px: float = 1.0) -> list[str]:
    """What makes ``fig`` hard to read, as drawn (Agg): an axes with data but no x or y label
    (unless its tick labels are hidden, as for shared axes), data drawn outside its axes
    (clipped: a curve running off the panel), a legend covering data of any axes. Data are the
    axes' lines (including axvline/axhline and a box drawn as a line), patches (their edges,
    e.g. a boxplot's boxes, and their painted faces) and collections (scatter points,
    fill_between, vlines, violins), each as wide as it is drawn (a legend over half a thick
    line covers it); a line drawn with markers only is its markers. Grid lines and the legend's
    own handles are not data. Returns one message per problem (empty: none)."""
    from matplotlib.path import Path as MplPath
    fig.canvas.draw()
    problems = []
    data = []
    for i, ax in enumerate(fig.axes):
        artists = [a for a in list(ax.lines) + list(ax.patches) + list(ax.collections)
                   if a.get_visible()]
        if not artists:
            continue                                   # e.g. a colour bar or an empty panel
        name = ax.get_title() or f"axes {i}"
        drawn = [_display_points(a) for a in artists]
        allp = np.vstack([p for p, _, _ in drawn]) if drawn else np.zeros((0, 2))
        data.append((name, drawn))
        for axis, label in (("x", ax.get_xlabel()), ("y", ax.get_ylabel())):
            ticks = getattr(ax, f"get_{axis}ticklabels")()
            shown = any(t.get_visible() and t.get_text() for t in ticks)
            if not label and shown:
                problems.append(f"{name}: no {axis} label")
        bb = ax.bbox
        off = ((allp[:, 0] < bb.x0 - tol_px) | (allp[:, 0] > bb.x1 + tol_px)
               | (allp[:, 1] < bb.y0 - tol_px) | (allp[:, 1] > bb.y1 + tol_px))
        if off.any():
            problems.append(f"{name}: {off.mean():.1%} of the drawn data outside the axes")
    # axis labels and titles clear of the other panels
    renderer = fig.canvas.get_renderer()
    for i, ax in enumerate(fig.axes):
        for text in (ax.xaxis.label, ax.yaxis.label, ax.title):
            if not (text.get_visible() and text.get_text()):
                continue
            tb = text.get_window_extent(renderer)
            for j, other in enumerate(fig.axes):
                if j != i and other.get_visible() and tb.overlaps(other.bbox):
                    problems.append(f"{text.get_text()!r} of {ax.get_title() or f'axes {i}'}"
                                    f" overlaps {other.get_title() or f'axes {j}'}")
    legends = [(ax.get_title() or f"axes {i}", ax.get_legend())
               for i, ax in enumerate(fig.axes)] + [("figure", lg) for lg in fig.legends]
    for owner, lg in legends:
        if lg is None or not lg.get_visible():
            continue
        lb = lg.get_window_extent()
        # the legend's area, sampled: a filled band or box under it is covered even when none
        # of its edges pass under the legend
        gx, gy = np.meshgrid(np.linspace(lb.x0, lb.x1, 7)[1:-1],
                             np.linspace(lb.y0, lb.y1, 5)[1:-1])
        grid = np.column_stack([gx.ravel(), gy.ravel()])
        for name, drawn in data:
            n = 0
            for pts, pad, areas in drawn:
                n += int(np.sum((pts[:, 0] > lb.x0 - pad) & (pts[:, 0] < lb.x1 + pad)
                                & (pts[:, 1] > lb.y0 - pad) & (pts[:, 1] < lb.y1 + pad)))
                n += sum(int(MplPath(q).contains_points(grid).sum()) for q in areas)
            if n:
                problems.append(f"legend of {owner} covers data of {name} ({n} points)")
    return problems


def savefig(fig, out: Path, name: str, chk: "Checks | None" = None) -> Path:
    """Save ``fig`` as ``out/name`` (PNG), close it and print where it went. With ``chk``, first
    record a check that the figure reads well (:func:`layout_problems`)."""
    if chk is not None:
        problems = layout_problems(fig)
        chk(f"{name}: axes labelled, data inside the axes, legends off the data", not problems,
            "; ".join(problems[:4]) + (f" (+{len(problems) - 4} more)" if len(problems) > 4
                                       else ""))
    path = Path(out) / name
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    print(f"  wrote {path}")
    return path


class Checks:
    """Collects named PASS/FAIL results and prints each as it is recorded."""

    def __init__(self, title: str):
        self.title = title
        self.results: list[tuple[str, bool, str]] = []
        self.pngs: list[Path] = []
        print(f"== {title}")

    def __call__(self, name: str, ok, detail: str = "") -> bool:
        ok = bool(ok)
        self.results.append((name, ok, detail))
        print(f"  {'PASS' if ok else 'FAIL'}  {name}" + (f"  [{detail}]" if detail else ""))
        return ok

    @property
    def ok(self) -> bool:
        return all(r[1] for r in self.results)

    def status(self) -> int:
        n_fail = sum(not r[1] for r in self.results)
        print(f"  -> {len(self.results) - n_fail}/{len(self.results)} checks passed")
        return 0 if n_fail == 0 else 1
