"""The fleet table: one row per (robot, joint, time), written as Parquet and CSV (issue 26).

A row holds what ``fric identify`` found for one joint in one recording (:func:`joint_rows`):

* the law's parameters with their stds: ``Cp, Cn, bp, bn`` (always: the asymmetric line's, also
  beside a curve), ``offset`` when it was separated, ``eta_f, eta_b, eta_product`` for the gear
  law, and for ``law = curve`` its knots and levels (``curve_v_pos``, ``curve_f_pos``,
  ``curve_f_pos_std``, and the negative side: lists);
* the two **levels** the fleet is watched by, both independent of an effort offset (only
  ``Cp + o`` and ``Cn − o`` are identifiable from motion, their sum is not affected):
  ``coulomb = (Cp + Cn)/2`` and ``viscous = (bp + bn)/2``, with stds from the fit's covariance
  (:meth:`~fric_core.arm_identification.result.ArmFrictionFit.combination_std`: Cp and Cn are
  strongly anti-correlated on a joint whose gravity load trades with an asymmetry — −0.98 on
  arm7's shoulder —, so the independent-terms std would be 6× too large there);
* the fit's condition figures (``cond``: the fitted law's weighted design, ``design_cond``: the
  one ``fric excite`` minimises), ``holdout_rms`` and ``residual_std``, the rows used, the Δv band,
  the effort lag undone, the recording's length, the values the data left undetermined, and the
  warnings that concern the joint (or no joint in particular).

Units: N·m, N·m·s/rad (a prismatic joint: N, N·s/m; ``unit`` says which). ``time`` is UTC.
:data:`COLUMNS` is the schema; :func:`write_table` writes ``rows`` sorted by robot, time and the
recording's joint order. :data:`FAILURE_COLUMNS` and :func:`write_failures`: one row per
recording that could not be identified, with the reason.

CSV: floats written exactly (``repr``), lists as numbers separated by spaces, NaN as ``nan``,
times as ISO 8601 with ``+00:00``. Parquet: pyarrow (the ``[fleet]`` extra), imported only here.
"""

from __future__ import annotations

import csv
import datetime as _dt
import math
import re
from pathlib import Path
from typing import Dict, List, Sequence

__all__ = ["COLUMNS", "FAILURE_COLUMNS", "LEVELS", "joint_rows", "write_table",
           "write_failures", "read_table_csv", "parquet_available"]

#: The table's columns: name → (type, description). Types: ``str``, ``float``, ``int``,
#: ``time`` (UTC), ``floats`` (a list).
COLUMNS: Dict[str, tuple] = {
    "robot": ("str", "robot id"),
    "joint": ("str", "joint name"),
    "time": ("time", "the recording's start, UTC"),
    "recording": ("str", "the recording's path"),
    "digest": ("str", "SHA-256 of the recording's files"),
    "unit": ("str", "force unit of the joint: N·m (revolute) or N (prismatic)"),
    "law": ("str", "the joint's law: asymmetric, curve or gear"),
    "model": ("str", "--model"), "dynamics": ("str", "--dynamics"),
    "method": ("str", "the method used (eiv, or ols where EIV was not possible)"),
    "coulomb": ("float", "(Cp + Cn)/2: the mean Coulomb level, offset-free"),
    "coulomb_std": ("float", "its std (fit covariance)"),
    "viscous": ("float", "(bp + bn)/2: the mean viscous slope"),
    "viscous_std": ("float", "its std (fit covariance)"),
    "Cp": ("float", ""), "Cp_std": ("float", ""), "Cn": ("float", ""), "Cn_std": ("float", ""),
    "bp": ("float", ""), "bp_std": ("float", ""), "bn": ("float", ""), "bn_std": ("float", ""),
    "offset": ("float", "effort offset separated from the levels (NaN: none was)"),
    "offset_std": ("float", ""),
    "eta_f": ("float", "gear law"), "eta_f_std": ("float", ""),
    "eta_b": ("float", "gear law"), "eta_b_std": ("float", ""),
    "eta_product": ("float", "gear law"), "eta_product_std": ("float", ""),
    "curve_v_pos": ("floats", "curve law: knots [rad/s], v > 0"),
    "curve_f_pos": ("floats", "curve law: levels at the knots, v > 0"),
    "curve_f_pos_std": ("floats", ""),
    "curve_v_neg": ("floats", "curve law: knots (magnitudes), v < 0"),
    "curve_f_neg": ("floats", "curve law: level magnitudes, v < 0"),
    "curve_f_neg_std": ("floats", ""),
    "cond": ("float", "condition number of the fitted law's weighted design"),
    "design_cond": ("float", "condition number of the identification design (fric excite's)"),
    "holdout_rms": ("float", "RMS error of the held-out prediction"),
    "residual_std": ("float", "std of the fit's residual"),
    "rows_used": ("int", "samples of the joint outside the Δv band in the fit"),
    "dv": ("float", "the Δv band left out of the fit [rad/s]"),
    "effort_lag": ("float", "effort lag undone [s]"),
    "samples": ("int", "prepared samples of the recording"),
    "duration": ("float", "length of the prepared recording [s]"),
    "undetermined": ("str", "values the data did not determine, comma-separated"),
    "warnings": ("str", "warnings about this joint or the whole recording, '; '-separated"),
}
#: The failures table: one row per recording that could not be identified.
FAILURE_COLUMNS: Dict[str, tuple] = {
    "recording": ("str", "the recording's path"),
    "robot": ("str", "robot id (empty when it could not be told)"),
    "time": ("time", "the recording's start (NaT when it could not be told)"),
    "digest": ("str", "SHA-256 of the recording's files (empty when not read)"),
    "reason": ("str", "why, in one line"),
}
#: The offset-free levels a fleet is watched by (column names).
LEVELS = ("coulomb", "viscous")

_NAN = float("nan")


def _f(x) -> float:
    return _NAN if x is None else float(x)


def _level_weights(fit, name: str) -> Dict[str, Dict[str, float]]:
    """The weights of ``coulomb`` and ``viscous`` over the fit's friction parameters (the
    curve's: its levels at 0 and its end-to-end slopes, as ``Cp, Cn, bp, bn`` are made of them
    under ``--model curve``)."""
    if fit.law == "curve":
        vp, vn = fit.knots[list(fit.joints).index(name)]
        last = len(vp) - 1
        return {"coulomb": {"f+0": 0.5, "f-0": 0.5},
                "viscous": {f"f+{last}": 0.5 / vp[-1], "f+0": -0.5 / vp[-1],
                            f"f-{last}": 0.5 / vn[-1], "f-0": -0.5 / vn[-1]}}
    return {"coulomb": {"Cp": 0.5, "Cn": 0.5}, "viscous": {"bp": 0.5, "bn": 0.5}}


def _mentions(text: str, joints: Sequence[str]) -> List[str]:
    return [j for j in joints if re.search(rf"(?<![\w]){re.escape(j)}(?![\w])", text)]


def joint_rows(friction, fit, holdout_rms: Dict[str, float], warnings: Sequence[str],
               joint_kinds: Dict[str, str], *, model: str, dynamics: str, method: str,
               effort_lag: float, samples: int, duration: float) -> List[dict]:
    """The table's rows of one identified recording, one per joint (without ``robot``,
    ``time``, ``recording`` and ``digest``, which the caller adds).

    Parameters
    ----------
    friction : fric_core.joint_friction.JointFrictionSet
        The identified set (as ``joint_friction.yaml`` holds it).
    fit : fric_core.arm_identification.result.ArmFrictionFit
        The fit that produced it (the line's covariance gives the levels' stds: ``fit.line``
        when the fit is the curve of ``--model auto``).
    holdout_rms : dict
        Joint → held-out RMS error.
    warnings : sequence of str
        The identification's warnings.
    joint_kinds : dict
        Joint → URDF type (``"revolute"``, ``"prismatic"``, …).
    model, dynamics, method : str
        The options the identification ran with (``method``: the one used).
    effort_lag : float
        The effort lag undone [s].
    samples : int
        Prepared samples.
    duration : float
        Their length [s].

    Returns
    -------
    list of dict
        One row per joint (:data:`COLUMNS` less the four the caller adds).
    """
    line = fit.line if getattr(fit, "line", None) is not None else fit
    names = list(friction.joints)
    rows = []
    for name, jf in friction.joints.items():
        std = jf.std
        w = _level_weights(line, name)
        own = [t for t in warnings if not _mentions(t, names) or name in _mentions(t, names)]
        curve = jf.curve if jf.law == "curve" else None
        k = len(curve.v_pos) if curve is not None else 0
        row = {
            "joint": name,
            "unit": "N" if joint_kinds.get(name) == "prismatic" else "N·m",
            "law": jf.law, "model": model, "dynamics": dynamics, "method": method,
            "coulomb": 0.5 * (jf.Cp + jf.Cn),
            "coulomb_std": line.combination_std(name, w["coulomb"]),
            "viscous": 0.5 * (jf.bp + jf.bn),
            "viscous_std": line.combination_std(name, w["viscous"]),
        }
        for key in ("Cp", "Cn", "bp", "bn"):
            row[key] = float(getattr(jf, key))
            row[key + "_std"] = _f(std.get(key))
        separated = "offset" in std
        row["offset"] = float(jf.offset) if separated else _NAN
        row["offset_std"] = _f(std.get("offset"))
        for key in ("eta_f", "eta_b", "eta_product"):
            row[key] = _f(getattr(jf, key))
            row[key + "_std"] = _f(std.get(key))
        row["curve_v_pos"] = list(curve.v_pos) if curve else []
        row["curve_f_pos"] = list(curve.f_pos) if curve else []
        row["curve_f_pos_std"] = [_f(std.get(f"f+{i}")) for i in range(k)]
        row["curve_v_neg"] = list(curve.v_neg) if curve else []
        row["curve_f_neg"] = list(curve.f_neg) if curve else []
        row["curve_f_neg_std"] = [_f(std.get(f"f-{i}")) for i in range(k)]
        row.update(cond=float(fit.cond), design_cond=_f(getattr(fit.design, "cond", None)),
                   holdout_rms=_f(holdout_rms.get(name)),
                   residual_std=_f(fit.residual_std.get(name)),
                   rows_used=int(fit.n_used.get(name, 0)), dv=_f(friction.dv),
                   effort_lag=float(effort_lag), samples=int(samples), duration=float(duration),
                   undetermined=",".join(sorted(k2 for k2, ok in jf.determined.items()
                                                if not ok)),
                   warnings="; ".join(" ".join(t.split()) for t in own))
        rows.append(row)
    return rows


# -- writing --------------------------------------------------------------------------------------
def parquet_available() -> bool:
    """Whether pyarrow (the ``[fleet]`` extra) can be imported.

    Returns
    -------
    bool
        True when Parquet can be written.
    """
    try:
        import pyarrow  # noqa: F401
        import pyarrow.parquet  # noqa: F401
    except ImportError:
        return False
    return True


def _sorted(rows: List[dict]) -> List[dict]:
    def key(r):
        t = r.get("time")
        return (r.get("robot") or "", t.timestamp() if isinstance(t, _dt.datetime) else math.inf,
                r.get("recording") or "", r.get("_order", 0))
    return sorted(rows, key=key)


def _cell(kind: str, x) -> str:
    if kind == "time":
        return "" if x is None else x.astimezone(_dt.timezone.utc).isoformat()
    if kind == "floats":
        return " ".join(repr(float(v)) for v in x)
    if kind == "float":
        return repr(float(x))
    return "" if x is None else str(x)


def _write_csv(path: Path, columns: Dict[str, tuple], rows: List[dict]) -> Path:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(list(columns))
        for r in rows:
            w.writerow([_cell(kind, r.get(name)) for name, (kind, _) in columns.items()])
    return path


def _write_parquet(path: Path, columns: Dict[str, tuple], rows: List[dict]) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    types = {"str": pa.string(), "float": pa.float64(), "int": pa.int64(),
             "time": pa.timestamp("us", tz="UTC"), "floats": pa.list_(pa.float64())}
    schema = pa.schema([pa.field(name, types[kind]) for name, (kind, _) in columns.items()])
    data = {name: [r.get(name) for r in rows] for name in columns}
    table = pa.Table.from_pydict(data, schema=schema)
    pq.write_table(table, path)
    return path


def write_table(out_dir, rows: List[dict], parquet: bool = True) -> List[Path]:
    """Write the fleet table: ``fleet.csv`` and (``parquet``) ``fleet.parquet``.

    Parameters
    ----------
    out_dir : str or path-like
        The directory (existing).
    rows : list of dict
        Rows as :func:`joint_rows` gives them, with ``robot``, ``time`` (an aware datetime),
        ``recording`` and ``digest`` added (``_order``: the joint's place in its recording).
    parquet : bool
        Also write Parquet (needs pyarrow).

    Returns
    -------
    list of pathlib.Path
        The files written.
    """
    return _write_formats(Path(out_dir) / "fleet", COLUMNS, _sorted(rows), parquet)


def write_failures(out_dir, failures: List[dict], parquet: bool = True) -> List[Path]:
    """Write the failures table: ``failures.csv`` and (``parquet``) ``failures.parquet``.

    Parameters
    ----------
    out_dir : str or path-like
        The directory (existing).
    failures : list of dict
        One per recording: ``recording``, ``robot``, ``time`` (or None), ``digest``, ``reason``.
    parquet : bool
        Also write Parquet (needs pyarrow).

    Returns
    -------
    list of pathlib.Path
        The files written.
    """
    return _write_formats(Path(out_dir) / "failures", FAILURE_COLUMNS, _sorted(failures),
                          parquet)


def _write_formats(stem: Path, columns, rows: List[dict], parquet: bool) -> List[Path]:
    """``stem.csv`` and (``parquet``) ``stem.parquet`` of ``rows``; the paths written."""
    paths = [_write_csv(stem.with_suffix(".csv"), columns, rows)]
    if parquet:
        paths.append(_write_parquet(stem.with_suffix(".parquet"), columns, rows))
    return paths


def read_table_csv(path) -> Dict[str, list]:
    """Read a table written by :func:`write_table` (or :func:`write_failures`) from its CSV.

    Parameters
    ----------
    path : str or path-like
        ``fleet.csv`` or ``failures.csv``.

    Returns
    -------
    dict
        Column → list of values (floats, ints, aware datetimes or None, lists of floats, str).
    """
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.reader(fh)
        header = next(reader)
        body = list(reader)
    kinds = {**COLUMNS, **FAILURE_COLUMNS}
    out: Dict[str, list] = {h: [] for h in header}
    for line in body:
        for h, cell in zip(header, line):
            kind = kinds.get(h, ("str",))[0]
            out[h].append(_parse(kind, cell))
    return out


def _parse(kind: str, cell: str):
    if kind == "float":
        return float(cell)
    if kind == "int":
        return int(cell)
    if kind == "floats":
        return [float(v) for v in cell.split()]
    if kind == "time":
        return _dt.datetime.fromisoformat(cell) if cell else None
    return cell
