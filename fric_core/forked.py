"""Run a pure function in a forked child while the caller works on: two cores, one process.

``fric identify``'s costly steps are Python loops over samples (Pinocchio's regressor, one call
per sample) that hold one core; the machines fric runs on have at least two. :func:`fork_call`
starts ``fn()`` in a child made by ``fork`` (the child shares the parent's memory copy-on-write,
so the arguments are not pickled) and returns a handle; :meth:`ForkedCall.result` waits for the
child and returns ``fn()``'s value (pickled back through a pipe), or raises what it raised.

It forks only where that is safe and cheap: the platform has ``fork`` and the process has a
single thread (a lock another thread holds at the fork — a DDS or BLAS worker's — would stay
locked in the child). Otherwise, and whenever the child fails to deliver (killed, out of
memory), ``fn()`` runs in the caller, in :meth:`~ForkedCall.result`: the value is the same
either way, only the time differs. Set ``FRIC_NO_FORK=1`` to never fork.
"""

from __future__ import annotations

import os
import pickle
from typing import Any, Callable

__all__ = ["ForkedCall", "fork_call", "can_fork"]


def can_fork() -> bool:
    """Whether :func:`fork_call` would fork now.

    Returns
    -------
    bool
        True when ``fork`` is available, the process has one thread and ``FRIC_NO_FORK`` is
        not ``1``.
    """
    if os.environ.get("FRIC_NO_FORK") == "1" or not hasattr(os, "fork"):
        return False
    try:
        return len(os.listdir("/proc/self/task")) == 1
    except OSError:
        return False


class ForkedCall:
    """A call of ``fn()`` running in a forked child, or deferred to :meth:`result`."""

    def __init__(self, fn: Callable[[], Any]):
        self._fn = fn
        self._pid = None
        self._fd = None
        if not can_fork():
            return
        try:
            r, w = os.pipe()
        except OSError:
            return
        try:
            pid = os.fork()
        except OSError:
            os.close(r)
            os.close(w)
            return
        if pid == 0:  # the child: compute, send, leave without running the parent's exit hooks
            code = 0
            try:
                os.close(r)
                try:
                    data = pickle.dumps((True, fn()), protocol=pickle.HIGHEST_PROTOCOL)
                except BaseException as e:  # noqa: BLE001 — handed to the parent to raise
                    try:
                        data = pickle.dumps((False, e), protocol=pickle.HIGHEST_PROTOCOL)
                    except Exception:  # an exception that does not pickle: run it in the parent
                        data = b""
                with os.fdopen(w, "wb") as f:
                    f.write(data)
            except BaseException:  # noqa: BLE001 — nothing may escape a forked child
                code = 1
            finally:
                os._exit(code)
        os.close(w)
        self._pid, self._fd = pid, r

    @property
    def forked(self) -> bool:
        """Whether ``fn()`` runs in a child."""
        return self._pid is not None

    def result(self) -> Any:
        """``fn()``'s value (raises what it raised); runs it here if no child delivers it."""
        if self._pid is None:
            return self._fn()
        chunks = []
        try:
            with os.fdopen(self._fd, "rb") as f:
                while True:
                    b = f.read(1 << 20)
                    if not b:
                        break
                    chunks.append(b)
        finally:
            try:
                os.waitpid(self._pid, 0)
            except ChildProcessError:
                pass
            self._pid = None
        data = b"".join(chunks)
        if not data:
            return self._fn()
        ok, value = pickle.loads(data)
        if ok:
            return value
        raise value


def fork_call(fn: Callable[[], Any]) -> ForkedCall:
    """Start ``fn()`` in a forked child where that is safe (module docstring).

    Parameters
    ----------
    fn : callable
        Called without arguments; its value must pickle (it comes back through a pipe) and it
        must not depend on side effects in the caller (the child's are lost).

    Returns
    -------
    ForkedCall
        The handle: :meth:`~ForkedCall.result` gives ``fn()``'s value, and ``forked`` says
        whether a child computes it.
    """
    return ForkedCall(fn)
