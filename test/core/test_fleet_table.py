"""The fleet table's files (fric_core.fleet.table): every column of COLUMNS, rows sorted by
robot, time and the recording's joint order, floats exact through CSV (repr) and Parquet, NaN
kept as NaN, lists kept, times in UTC; the failures table with its reasons."""

import datetime as dt
import math

import pytest

from fric_core.fleet.table import (COLUMNS, FAILURE_COLUMNS, read_table_csv, write_failures,
                                   write_table)

T = dt.datetime(2026, 11, 2, 9, 12, 30, 123456, tzinfo=dt.timezone.utc)


def _row(robot, joint, day, order):
    r = {name: (math.nan if kind == "float" else 0 if kind == "int" else [] if kind == "floats"
                else "") for name, (kind, _) in COLUMNS.items()}
    r.update(robot=robot, joint=joint, time=T + dt.timedelta(days=day), _order=order,
             recording=f"/fleet/{robot}/b{day}", coulomb=0.1 + 1e-17 * order + day / 3,
             coulomb_std=1 / 3, curve_v_pos=[0.0, 0.1 / 3], rows_used=4000 + order,
             warnings="joint_a1: a; b, with a comma")
    return r


def _same(x, y):
    if isinstance(x, float) and isinstance(y, float):
        return x == y or (math.isnan(x) and math.isnan(y))
    if isinstance(x, list):
        return len(x) == len(y) and all(map(_same, x, y))
    return x == y


def test_csv_round_trip_is_exact_and_sorted(tmp_path):
    rows = [_row("r2", "joint_a2", 1, 1), _row("r10", "joint_a1", 0, 0),
            _row("r2", "joint_a1", 1, 0), _row("r2", "joint_a1", 0, 0)]
    write_table(tmp_path, rows, parquet=False)
    back = read_table_csv(tmp_path / "fleet.csv")
    assert list(back) == list(COLUMNS)
    # robot (as text), then time, then the joint's place in its recording
    assert list(zip(back["robot"], back["joint"], [t.day for t in back["time"]])) == \
        [("r10", "joint_a1", 2), ("r2", "joint_a1", 2), ("r2", "joint_a1", 3),
         ("r2", "joint_a2", 3)]
    want = sorted(rows, key=lambda r: (r["robot"], r["time"], r["_order"]))
    for name in COLUMNS:
        assert all(map(_same, back[name], [r[name] for r in want])), name
    assert back["time"][0].tzinfo is not None and back["time"][0].microsecond == 123456


def test_parquet_holds_the_same_values(tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    rows = [_row("r1", "joint_a1", d, 0) for d in range(3)]
    write_table(tmp_path, rows)
    table = pq.read_table(tmp_path / "fleet.parquet")
    csv_back = read_table_csv(tmp_path / "fleet.csv")
    assert table.column_names == list(COLUMNS)
    for name in COLUMNS:
        assert all(map(_same, table.column(name).to_pylist(), csv_back[name])), name
    assert str(table.schema.field("time").type) == "timestamp[us, tz=UTC]"
    lists = table.schema.field("curve_v_pos").type
    assert lists.num_fields == 1 and str(lists.value_type) == "double"


def test_failures_table(tmp_path):
    fails = [{"recording": "/f/r1/b", "robot": "r1", "time": None, "digest": "",
              "reason": "damaged: only 3 of 9 messages"}]
    paths = write_failures(tmp_path, fails, parquet=False)
    back = read_table_csv(paths[0])
    assert list(back) == list(FAILURE_COLUMNS)
    assert back["reason"] == ["damaged: only 3 of 9 messages"] and back["time"] == [None]
