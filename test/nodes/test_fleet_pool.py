"""fric fleet's local pool when a worker dies (a native crash, the kernel's OOM killer): the
pool is started again and the task retried once; a task that kills it twice fails with the
reason, not cached; the other recordings go on (fric_nodes.tools.fleet_runner.PoolExecutor)."""

from fleet_tasks import dying_task
from fric_nodes.tools.fleet_runner import PoolExecutor


def _drain(ex):
    out = []
    while ex.pending():
        out += ex.next_results()
    return out


def test_a_recording_that_kills_its_worker_fails_alone_and_the_pool_goes_on():
    ex = PoolExecutor(1, "planar_2link", task=dying_task)
    try:
        ex.submit("k1", "die", None, {})
        [res] = _drain(ex)
        assert res["key"] == "k1" and res["cacheable"] is False
        assert res["failure"].startswith("a worker process died twice while it")
        for k in ("k2", "k3"):
            ex.submit(k, f"ok_{k}", None, {})
        assert sorted(r["key"] for r in _drain(ex) if "rows" in r) == ["k2", "k3"]
    finally:
        ex.close()


def test_beside_a_dying_recording_the_others_end_with_a_result_or_the_reason():
    ex = PoolExecutor(2, "planar_2link", task=dying_task)
    try:
        for k, path in (("a", "ok"), ("d", "die"), ("b", "ok")):
            ex.submit(k, path, None, {})
        res = {r["key"]: r for r in _drain(ex)}
    finally:
        ex.close()
    assert set(res) == {"a", "b", "d"}
    assert "died twice" in res["d"]["failure"]
    for k in ("a", "b"):  # done, or lost beside it (then said so, and tried again next run)
        assert "rows" in res[k] or "(or a recording beside it)" in res[k]["failure"]
