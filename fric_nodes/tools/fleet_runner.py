"""``fric fleet``'s work: one identification per recording, in parallel, cached (issue 26).

* :func:`identify_task` — what a worker runs for one recording: ``fric identify``'s pipeline
  (:func:`fric_nodes.tools.arm_identify.identify_recording`, nothing written) and the table's
  rows (:func:`fric_core.fleet.table.joint_rows`); it never raises: a recording that fails gives
  its reason, and whether the failure is the data's (kept in the cache: the same bytes fail the
  same way) or the machine's (a worker that died, memory: tried again next run).
* :class:`ResultCache` — ``DIR/cache/``: one JSON file per identification, named by the SHA-256
  of the recording's bytes (:func:`content_digest`: every file of a bag, or the CSV) and of
  everything that changes the result (:func:`cache_key`: the URDF's bytes, the topic, the
  identification options, fric's version and :data:`CACHE_VERSION`). Robot ids and times are not
  in it (they are the table's, set afresh each run). Digests are remembered by path, size and
  modification time, so a second run reads no recording it has identified.
* Executors with one interface (``submit``, ``pending``, ``next_results``, ``close``):
  :class:`PoolExecutor` — a local process pool (``spawn``; each worker imports the heavy modules
  and loads the URDF once, in its initializer); :class:`RayExecutor` — one Ray task per recording
  on a cluster (``ray.init(address=…)``; the workers must see the recordings' and the URDF's
  paths, and have fric installed). Both are fed through a bounded window of tasks in flight, and
  their results come back as they finish.

Memory per worker is bounded by the chunked bag reader
(:data:`fric_core.arm_identification.recording.MAX_ROWS` rows used however long the
recording: ~450 MiB peak for an hour of arm7 at 1 kHz, bench/arm_identify_pipeline.py).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from pathlib import Path
from typing import Dict, List, Optional

__all__ = ["CACHE_VERSION", "identify_task", "content_digest", "cache_key", "ResultCache",
           "PoolExecutor", "RayExecutor", "RayMissing", "import_ray", "ray_loopback_environment"]

#: Bumped when the pipeline's results change for the same recording and options (a cache of an
#: older fric is then not used).
CACHE_VERSION = 1
_READ = 1 << 20


def content_digest(path: Path, kind: str) -> str:
    """SHA-256 of a recording's bytes: a CSV file, or every file of a bag directory (names and
    contents, in name order); read in 1 MiB blocks.

    Parameters
    ----------
    path : pathlib.Path
        The recording.
    kind : str
        ``"bag"`` or ``"csv"``.

    Returns
    -------
    str
        The hex digest.
    """
    h = hashlib.sha256()
    files = [path] if kind == "csv" else sorted(p for p in path.rglob("*") if p.is_file())
    for f in files:
        h.update(str(f.relative_to(path) if kind == "bag" else f.name).encode())
        h.update(b"\0")
        with open(f, "rb") as fh:
            while True:
                block = fh.read(_READ)
                if not block:
                    break
                h.update(block)
    return h.hexdigest()


def _stat_key(path: Path, kind: str) -> list:
    files = [path] if kind == "csv" else sorted(p for p in path.rglob("*") if p.is_file())
    stats = [f.stat() for f in files]
    return [len(files), sum(s.st_size for s in stats), max(s.st_mtime_ns for s in stats)]


def cache_key(digest: str, urdf_digest: str, topic: Optional[str], options: Dict) -> str:
    """The cache key of one identification (module docstring).

    Parameters
    ----------
    digest : str
        :func:`content_digest` of the recording.
    urdf_digest : str
        SHA-256 of the URDF file.
    topic : str or None
        The bag's JointState topic (None for a CSV).
    options : dict
        The identification options (JSON-able; those that change the result).

    Returns
    -------
    str
        The hex key.
    """
    from fric_core import __version__

    doc = {"cache": CACHE_VERSION, "fric": __version__, "recording": digest,
           "urdf": urdf_digest, "topic": topic, "options": options}
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()


class ResultCache:
    """``DIR/cache/``: results by key, digests by path (module docstring)."""

    def __init__(self, out_dir: Path):
        self.root = Path(out_dir) / "cache"
        (self.root / "entries").mkdir(parents=True, exist_ok=True)
        self._digest_file = self.root / "digests.json"
        try:
            self._digests = json.loads(self._digest_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            self._digests = {}

    def _entry(self, key: str) -> Path:
        return self.root / "entries" / key[:2] / f"{key}.json"

    def digest(self, path: Path, kind: str) -> str:
        """The recording's content digest, from memory when its files' count, size and newest
        modification time are those seen before."""
        stat = _stat_key(path, kind)
        known = self._digests.get(str(path))
        if known and known[:3] == stat:
            return known[3]
        d = content_digest(path, kind)
        self._digests[str(path)] = stat + [d]
        return d

    def get(self, key: str) -> Optional[dict]:
        """The stored result of ``key`` (``{"rows": [...]}`` or ``{"failure": reason}``), or
        None."""
        try:
            return json.loads(self._entry(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    def put(self, key: str, entry: dict) -> None:
        """Store a result (written to a temporary file, then renamed: never half a file)."""
        p = self._entry(key)
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_name(f".{p.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(entry), encoding="utf-8")
        os.replace(tmp, p)

    def save(self) -> None:
        """Write the digests remembered (at the end of a run)."""
        tmp = self._digest_file.with_name(f".digests.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(self._digests), encoding="utf-8")
        os.replace(tmp, self._digest_file)


# -- the worker -----------------------------------------------------------------------------------
def _warm(urdf: str) -> None:
    """A pool worker's initializer: the heavy modules imported and the URDF loaded once."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    import fric_core.arm_identification.fit  # noqa: F401
    import fric_core.arm_identification.joint_state_bag  # noqa: F401
    import fric_core.arm_identification.signals  # noqa: F401
    import fric_nodes.tools.arm_identify  # noqa: F401
    import rosbags.highlevel  # noqa: F401
    from fric_core.transmission.urdf_dynamics import UrdfDynamics

    UrdfDynamics(urdf)


def identify_task(key: str, path: str, topic: Optional[str], options: Dict) -> dict:
    """Identify one recording (module docstring); never raises.

    Parameters
    ----------
    key : str
        The task's cache key (returned with the result).
    path : str
        The recording.
    topic : str or None
        The bag's JointState topic.
    options : dict
        ``urdf`` and the keyword arguments of
        :func:`~fric_nodes.tools.arm_identify.identify_recording`.

    Returns
    -------
    dict
        ``key``, ``seconds`` (the identification's wall time), ``pid``, ``maxrss`` (the
        worker's peak resident memory so far [bytes], where the OS tells), and either ``rows`` (the
        table's rows of the recording) or ``failure`` (the reason, one line) with ``cacheable``
        (the data's fault: the same bytes fail again).
    """
    import warnings

    start = time.perf_counter()
    out = {"key": key, "pid": os.getpid()}
    try:
        from fric_core.fleet.table import joint_rows
        from fric_nodes.tools.arm_identify import identify_recording

        opts = dict(options)
        urdf = opts.pop("urdf")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            ident = identify_recording(path, urdf, topic=topic or "joint_states", **opts)
        extra = [f"{w.category.__name__}: {w.message}" for w in caught]
        prep = ident.prep
        out["rows"] = joint_rows(ident.friction, ident.fit, ident.holdout_rms,
                                 ident.warnings + extra, ident.joint_kinds, model=ident.model,
                                 dynamics=ident.dynamics, method=ident.method,
                                 effort_lag=ident.effort_lag, samples=len(prep),
                                 duration=float(prep.t[-1] - prep.t[0]))
    except ValueError as e:  # the data's (ArmIdentifyError, a damaged bag, a bad CSV)
        out.update(failure=" ".join(str(e).split()), cacheable=True)
    except MemoryError:
        out.update(failure="out of memory while identifying it", cacheable=False)
    except Exception as e:  # noqa: BLE001 - one bad recording never stops the batch
        out.update(failure=f"internal error: {type(e).__name__}: {' '.join(str(e).split())}",
                   cacheable=False)
    out["seconds"] = time.perf_counter() - start
    try:
        import resource

        out["maxrss"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # (Linux: KiB)
    except (ImportError, OSError):
        pass
    return out


# -- executors ------------------------------------------------------------------------------------
class PoolExecutor:
    """A local process pool of ``jobs`` workers (``spawn``; :func:`_warm` in each) running
    ``task`` (default :func:`identify_task`; another module-level function of the same
    signature for tests).

    A worker that dies (killed for memory, a crash in a native library) breaks the whole pool:
    it is started again and the tasks that were in flight are submitted once more; a task in
    flight when the pool breaks a second time fails (not cached: the next run tries it again).
    """

    name = "pool"

    def __init__(self, jobs: int, urdf: str, task=None):
        self.jobs = jobs
        self._urdf = urdf
        self._task = identify_task if task is None else task  # (a module-level function)
        self._pending: Dict[object, tuple] = {}
        self._start()

    def _start(self) -> None:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        self._ex = ProcessPoolExecutor(max_workers=self.jobs,
                                       mp_context=multiprocessing.get_context("spawn"),
                                       initializer=_warm, initargs=(self._urdf,))

    @property
    def capacity(self) -> int:
        """Workers."""
        return self.jobs

    def submit(self, key: str, path: str, topic: Optional[str], options: Dict,
               _tries: int = 0) -> None:
        """Queue one recording."""
        fut = self._ex.submit(self._task, key, path, topic, options)
        self._pending[fut] = (key, path, topic, options, _tries)

    def pending(self) -> int:
        """Tasks submitted and not yet returned."""
        return len(self._pending)

    def next_results(self) -> List[dict]:
        """Block until a task finishes: ``[its result]`` (:func:`identify_task`'s). After a
        worker died: the results of the tasks that had finished, the failures of those in
        flight for the second time, the others resubmitted (possibly an empty list)."""
        from concurrent.futures import FIRST_COMPLETED, wait
        from concurrent.futures.process import BrokenProcessPool

        done, _ = wait(list(self._pending), return_when=FIRST_COMPLETED)
        fut = next(iter(done))
        task = self._pending.pop(fut)
        try:
            return [fut.result()]
        except BrokenProcessPool as e:
            why = " ".join(str(e).split())
        out, retry = [], [task]
        for f, t in self._pending.items():  # finished before the break: kept
            if f.done() and not f.cancelled() and f.exception() is None:
                out.append(f.result())
            else:
                retry.append(t)
        self._pending = {}
        self._ex.shutdown(wait=False, cancel_futures=True)
        self._start()
        for key, path, topic, options, tries in retry:
            if tries >= 1:
                out.append({"key": key, "failure": "a worker process died twice while it (or a "
                                                   f"recording beside it) was identified ({why})",
                            "cacheable": False})
            else:
                self.submit(key, path, topic, options, _tries=tries + 1)
        return out

    def close(self, cancel: bool = False) -> None:
        """Stop the workers (``cancel``: drop the queued tasks)."""
        self._ex.shutdown(wait=not cancel, cancel_futures=cancel)


class RayMissing(RuntimeError):
    """``--ray`` without Ray installed."""


def ray_loopback_environment() -> Dict[str, str]:
    """The environment a Ray instance started on this machine needs to listen on the loopback
    only and not report usage statistics: ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0`` (Ray then takes
    127.0.0.1 as the node's address, and its servers bind it, as on Windows and macOS, instead of
    the machine's routable address on every interface) and ``RAY_USAGE_STATS_ENABLED=0``.

    Returns
    -------
    dict
        Variable → value (set them before ``ray.init``; values already set are kept).
    """
    return {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_USAGE_STATS_ENABLED": "0"}


def import_ray(address: str):
    """``import ray`` for ``--ray ADDRESS``; for ``local`` the loopback environment
    (:func:`ray_loopback_environment`) is set first — Ray reads it when imported, so it holds
    when this is the process's first import of Ray (as in ``fric fleet``).

    Parameters
    ----------
    address : str
        ``--ray``'s value.

    Returns
    -------
    module
        The ``ray`` module.

    Raises
    ------
    RayMissing
        When Ray cannot be imported (one line: the extra to install).
    """
    if address == "local" and "ray" not in sys.modules:
        for k, v in ray_loopback_environment().items():
            os.environ.setdefault(k, v)
    try:
        import ray
    except ImportError:
        raise RayMissing("--ray: Ray is not installed: pip install 'fric[ray]'") from None
    return ray


class RayExecutor:
    """One Ray task per recording (``num_cpus=1``), results as they finish.

    ``address``: ``"auto"`` (the cluster this machine is part of: ``ray start`` or
    ``RAY_ADDRESS``), ``"local"`` (a Ray instance started here for this run, loopback only,
    ``jobs`` CPUs), or a cluster address (``HOST:PORT``, ``ray://HOST:PORT``). When Ray is already
    initialised in this process (a test, a notebook), that instance is used as it is.
    """

    name = "ray"

    def __init__(self, address: str, jobs: Optional[int] = None):
        ray = import_ray(address)
        self._ray = ray
        self._owned = False
        if not ray.is_initialized():
            if address == "local":
                ray.init(num_cpus=jobs, include_dashboard=False, _node_ip_address="127.0.0.1",
                         log_to_driver=False, configure_logging=False)
            else:
                try:
                    ray.init(address=address, log_to_driver=False, configure_logging=False)
                except ConnectionError as e:
                    raise RayMissing(f"--ray {address}: no Ray cluster there "
                                     f"({' '.join(str(e).split())[:200]}); start one with "
                                     "`ray start --head`, give its ADDRESS, or use --ray local")
            self._owned = True
        self._remote = ray.remote(num_cpus=1, max_retries=1)(identify_task)
        self._pending: Dict[object, str] = {}

    @property
    def capacity(self) -> int:
        """The cluster's CPUs (tasks kept in flight: twice as many)."""
        return max(1, int(self._ray.cluster_resources().get("CPU", 1)))

    def submit(self, key: str, path: str, topic: Optional[str], options: Dict) -> None:
        """Queue one recording as a task."""
        self._pending[self._remote.remote(key, path, topic, options)] = key

    def pending(self) -> int:
        """Tasks submitted and not yet returned."""
        return len(self._pending)

    def next_results(self) -> List[dict]:
        """Block until a task finishes: ``[its result]``, or its failure when Ray lost it (a
        worker that died after its retry, a node lost)."""
        ray = self._ray
        done, _ = ray.wait(list(self._pending), num_returns=1)
        ref = done[0]
        key = self._pending.pop(ref)
        try:
            return [ray.get(ref)]
        except Exception as e:  # noqa: BLE001 - one lost task never stops the batch
            return [{"key": key, "failure": f"Ray lost the task: {type(e).__name__}: "
                                            f"{' '.join(str(e).split())[:300]}",
                     "cacheable": False}]

    def close(self, cancel: bool = False) -> None:
        """Cancel what is left (``cancel``) and shut down a Ray instance this run started."""
        if cancel:
            for ref in list(self._pending):
                try:
                    self._ray.cancel(ref, force=True)
                except Exception:  # noqa: BLE001 - already finished
                    pass
        if self._owned:
            self._ray.shutdown()
