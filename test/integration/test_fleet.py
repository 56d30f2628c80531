"""``fric fleet`` on a reduced simulated fleet (issue 26): 4 robots × 12 days of 10 s arm7
recordings at 500 Hz (realistic logs: Gaz et al.'s sigmoid friction, effort offsets, jittered
stamps, repeated and skipped rows, 1 % day-to-day friction variation), robot r01's joint_a3
wearing by 3 %/day from the first day, one corrupt bag and one with a lagging velocity column.

The full case of the issue (10 robots × 20 days × 20 s) is bench/fleet.py's. Here, in one
module (the fleet is made once; ~45 s on two cores):

* the local pool: the wear found and named (robot, joint), its growth per day within 3 of its
  stds of the truth, nothing else flagged, the corrupt bag listed with its reason, the lagging
  one identified with its warning; the tables and the report written;
* a second run on the same output directory redoes nothing (every result from the cache) and
  writes the same table;
* Ray started by the test (``ray.init(num_cpus=2)``, its servers on 127.0.0.1 only) gives the
  same rows as the pool for one robot's recordings, value for value.
"""

import json
import math
import os
import subprocess
import sys

import pytest

from cli_support import run_fric

pytest.importorskip("pyarrow")

WEAR = 0.03  # per day, from the first day


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    from fric_core.fleet.simulated import FleetTrend, simulate_fleet

    root = tmp_path_factory.mktemp("fleet")
    return simulate_fleet(root / "recordings", robots=4, days=12, duration=10.0,
                          trend=FleetTrend("r01", "joint_a3", rate=WEAR, onset=0), seed=0)


@pytest.fixture(scope="module")
def pool_run(fleet):
    from fric_nodes.tools.fleet import run_fleet

    out = fleet.root.parent / "pool"
    lines = []
    res = run_fleet([str(fleet.root)], "arm7", out, jobs=2, progress=lines.append)
    return out, res, lines


def test_the_wear_is_found_and_named_and_nothing_else(fleet, pool_run):
    out, res, lines = pool_run
    det = res.detection
    assert [(f.robot, f.joint, f.quantity, f.kind) for f in det.findings] == \
        [("r01", "joint_a3", "coulomb", "trend")]
    f = det.findings[0]
    # the growth per day relative to the level before it, against the truth (3 %/day): within
    # 3 of its stds (delta method with the series' moderated scale)
    assert abs(f.per_day - WEAR) <= 3.0 * f.per_day_std, (f.per_day, f.per_day_std)
    assert f.per_day_std < WEAR / 4  # a size, not noise
    assert f.sentence().startswith("robot r01 joint_a3: Coulomb +")
    assert f.p < det.p_threshold and det.p_threshold == pytest.approx(0.01 / det.tests)
    # every other series was tested and stayed below the threshold
    tested = {(s.robot, s.joint) for s in det.series}
    assert len(tested) == 4 * 7
    assert all(not s.flagged for s in det.series if (s.robot, s.joint) != ("r01", "joint_a3"))
    report = (out / "report.md").read_text()
    assert f.sentence() in report and "levels_joint_a3.png" in report
    assert (out / "levels_joint_a3.png").stat().st_size > 10_000


def test_the_corrupt_and_the_lagging_recordings(fleet, pool_run):
    out, res, lines = pool_run
    assert res.recordings == 48 and res.identified == 47 and res.failed == 1
    [bad] = res.failures
    assert bad["recording"] == str(fleet.corrupt.resolve())
    assert "damaged" in bad["reason"] and bad["robot"] == "r02"
    assert str(fleet.corrupt.resolve()) in (out / "failures.csv").read_text()
    lagging = [r for r in res.rows if r["recording"] == str(fleet.lagging.resolve())]
    assert len(lagging) == 7
    assert all("measured velocity lags the derivative of the positions" in r["warnings"]
               for r in lagging)
    # progress on the way: n/N done, the rate and the time left
    assert lines[-1].startswith("48/48 done (1 failed, 0 from the cache)")
    assert any("recordings/s, ETA" in ln for ln in lines)


def test_the_table_has_a_row_per_robot_joint_and_time(fleet, pool_run):
    import pyarrow.parquet as pq

    out, res, _ = pool_run
    table = pq.read_table(out / "fleet.parquet")
    assert table.num_rows == 47 * 7
    keys = set(zip(*(table.column(c).to_pylist() for c in ("robot", "joint", "time"))))
    assert len(keys) == 47 * 7
    cols = set(table.column_names)
    assert {"coulomb", "coulomb_std", "Cp", "Cp_std", "Cn", "bp", "bn", "curve_f_pos",
            "cond", "design_cond", "holdout_rms", "warnings"} <= cols
    # times from the bags' metadata: the simulated start of each recording
    truth = {(r.robot, r.time) for r in fleet.recordings if r.kind != "corrupt"}
    got = {(rb, t.replace(microsecond=0)) for rb, _, t in keys}
    assert got == truth
    assert (out / "fleet.csv").read_text().count("\n") == 47 * 7 + 1


def test_a_second_run_redoes_nothing(fleet, pool_run):
    out, res, _ = pool_run
    before = (out / "fleet.csv").read_bytes()
    r = run_fric("fleet", fleet.root, "--urdf", "arm7", "--out", out, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "# 48 recordings: 0 identified in this run, 48 from the cache, 1 failed" in r.stdout
    assert "finding: robot r01 joint_a3: Coulomb +" in r.stdout
    assert (out / "fleet.csv").read_bytes() == before


RAY_SCRIPT = r"""
import json, os, sys
from pathlib import Path
import ray  # after the loopback environment (read when ray is imported)
from fric_nodes.tools.fleet import run_fleet


def descendants(pid):
    children = {}
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            try:
                ppid = int((p / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(p.name))
    out, todo = set(), [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            if c not in out:
                out.add(c)
                todo.append(c)
    return out


def listening(pids):
    listen = {}
    for name in ("tcp", "tcp6"):
        for line in Path(f"/proc/net/{name}").read_text().splitlines()[1:]:
            f = line.split()
            if f[3] == "0A":  # LISTEN
                listen[f[9]] = f[1].split(":")[0]
    found = set()
    for pid in pids:
        try:
            fds = list(Path(f"/proc/{pid}/fd").iterdir())
        except OSError:
            continue
        for fd in fds:
            try:
                target = os.readlink(fd)
            except OSError:
                continue
            if target.startswith("socket:[") and target[8:-1] in listen:
                found.add(listen[target[8:-1]])
    return sorted(found)


ray.init(num_cpus=2, include_dashboard=False, _node_ip_address="127.0.0.1",
         log_to_driver=False, configure_logging=False)
try:
    addresses = listening(descendants(os.getpid()))
    res = run_fleet(sys.argv[1:-1], "arm7", sys.argv[-1], ray="auto", figures=False)
finally:
    ray.shutdown()
print("RESULT " + json.dumps({"addresses": addresses, "executor": res.executor,
                              "identified": res.identified}))
"""
# 127.0.0.1, ::1 and ::ffff:127.0.0.1 as /proc/net/tcp{,6} write them
LOOPBACK = {"0100007F", "00000000000000000000000001000000", "0000000000000000FFFF00000100007F"}


def test_ray_gives_the_same_table_on_loopback(fleet, pool_run, tmp_path):
    """The wearing robot's 12 recordings on a Ray instance the test starts
    (``ray.init(num_cpus=2)``, in a process of its own: Ray reads its loopback setting when
    imported) give the pool's rows of those recordings, value for value; every port Ray's
    processes listen on is 127.0.0.1."""
    pytest.importorskip("ray")
    import pyarrow.parquet as pq

    from fric_nodes.tools.fleet_runner import ray_loopback_environment

    out = tmp_path / "ray"
    robots = [fleet.root / "r01"]  # the wearing robot: 12 recordings
    env = {**os.environ, **ray_loopback_environment()}
    r = subprocess.run([sys.executable, "-c", RAY_SCRIPT, *map(str, robots), str(out)],
                       capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    got = json.loads(next(ln for ln in r.stdout.splitlines() if ln.startswith("RESULT "))[7:])
    assert got["addresses"], "Ray's servers not found among the process's children"
    assert set(got["addresses"]) <= LOOPBACK, got["addresses"]
    assert got["executor"] == "ray" and got["identified"] == 12
    ray_table = pq.read_table(out / "fleet.parquet")
    pool_table = pq.read_table(pool_run[0] / "fleet.parquet")
    mine = [i for i, rb in enumerate(pool_table.column("robot").to_pylist()) if rb == "r01"]
    assert ray_table.num_rows == len(mine) == 12 * 7
    assert ray_table.schema == pool_table.schema
    pool_mine = pool_table.take(mine)
    for name in ray_table.column_names:  # (NaN == NaN here: a column of absent values)
        a, b = ray_table.column(name).to_pylist(), pool_mine.column(name).to_pylist()
        assert all(map(_same, a, b)), name
    pool_lines = (pool_run[0] / "fleet.csv").read_text().splitlines()
    assert (out / "fleet.csv").read_text().splitlines() == \
        pool_lines[:1] + [ln for ln in pool_lines[1:] if ln.startswith("r01,")]


def _same(x, y) -> bool:
    if isinstance(x, float) and isinstance(y, float):
        return x == y or (math.isnan(x) and math.isnan(y))
    if isinstance(x, list) and isinstance(y, list):
        return len(x) == len(y) and all(map(_same, x, y))
    return x == y
