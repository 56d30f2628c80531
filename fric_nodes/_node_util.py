"""Helpers shared by the fric nodes: the node skeleton (:class:`FricNode`), parameter declaration
with readable errors, rejected-input bookkeeping, internal errors (:class:`InternalErrors`,
:func:`guarded`, a blocking service on its own thread: :class:`ServiceThread`), a ring of timing
samples with percentiles, diagnostics key/values, and the ``main`` loop (rclpy init without its
signal handlers, SIGINT/SIGTERM → clean stop, EventsExecutor driven by ``spin_once``).

Why ``spin_once`` in a loop: rclpy 9.1.2's ``EventsExecutor.spin()`` is broken (checked again
for issue 17: it runs one core at 100 %, takes no message and ignores SIGTERM);
``spin_until_future_complete(future, timeout_sec)`` does stay in C++ for many messages, but
against ``spin_once`` it saved no CPU that this 2-core machine could resolve (a bare echo and the
renderer at 1 kHz, interleaved pairs: differences of ±2 % of a core both ways), while a stop,
``done`` or a node's fatal error would wait for its timeout. Measured here the EventsExecutor
costs several times less CPU per message than the SingleThreadedExecutor (see
friction_renderer.main), so it is the default.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import inspect
import signal
import sys
import threading
import time
import traceback
from typing import Callable, Iterable, Iterator

import numpy as np
import rclpy
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.exceptions import ParameterException, ParameterUninitializedException
from rclpy.executors import MultiThreadedExecutor, SingleThreadedExecutor
from rclpy.experimental import EventsExecutor
from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy_impl
from rclpy.node import Node
from rclpy.signals import SignalHandlerOptions
from rclpy.utilities import remove_ros_args

from fric_interfaces.parameters import ParamSpec, check, declare

from .param_paths import resolve_path_param
from .scheduling import apply_scheduling, process_threads
from .tools.user_errors import params_files_problem, ros_args_problem

RCLError = _rclpy_impl.RCLError

#: the ``--ros-args`` this process gave ``rclpy.init`` (:func:`init_ros`); what a parameter file
#: of them sets is resolved against that file (:func:`declare_params`)
_PROCESS_ROS_ARGS: list[str] = []

__all__ = ["FricNode", "declare_params", "init_ros", "unused_overrides", "wall_clock_ns", "Ring",
           "Housekeeping", "RejectLog", "InternalErrors", "guarded", "ServiceThread",
           "rejected_change", "status", "run_node", "report_fatal", "stop_signals",
           "known_signature", "friction_laws_text"]


class FricNode(Node):
    """The anatomy of a fric node, written down once.

    A subclass sets :attr:`default_name` (from :mod:`fric_interfaces.names`) and implements
    ``_setup()``: read the parameters (:func:`declare_params` over the node's ``ParamSpec``
    tuple, the single schema), build the core object from them, create the publishers,
    subscriptions and timers, and add the live-parameter callbacks (validate the whole new set,
    then apply it). Callbacks forward messages to the core object; rejected inputs go to a
    :class:`RejectLog`; markers and diagnostics (``diagnostic_status()``) run in the control
    loop's slack (:class:`Housekeeping`); :meth:`publish_diagnostics` publishes the status on
    ``self._diag_pub`` (the /diagnostics publisher ``_setup`` creates). ``main`` is
    :func:`run_node` with the final safe output as ``on_stop``.

    A ``_setup`` that raises destroys the node before the error propagates (``run_node`` prints
    a ``ValueError`` as ``bad parameters``): no half-built node stays in the context. ``kwargs``
    go to ``Node`` (e.g. ``parameter_overrides``, ``namespace``).
    """

    default_name = ""

    def __init_subclass__(cls, abstract: bool = False, **kwargs):
        """A node class must define its ``_setup`` and ``diagnostic_status`` (checked when the
        class is defined, not when a half-built node would first call them); ``abstract=True``
        (``class Base(FricNode, abstract=True)``) marks a base that its subclasses complete."""
        super().__init_subclass__(**kwargs)
        missing = [m for m in ("_setup", "diagnostic_status")
                   if not abstract and not callable(getattr(cls, m, None))]
        if missing:
            raise TypeError(f"{cls.__name__} derives from FricNode but does not define "
                            f"{', '.join(missing)}")

    def __init__(self, node_name: str | None = None, **kwargs):
        # where parameter values came from (fric_nodes.param_paths: paths in parameter files)
        self._fric_cli_args = list(kwargs.get("cli_args") or [])
        self._fric_overridden = {p.name for p in kwargs.get("parameter_overrides") or ()}
        super().__init__(node_name or self.default_name, **kwargs)
        try:
            self._setup()
        except Exception:
            self.destroy_node()
            raise

    def create_timer(self, timer_period_sec: float, callback, *args, **kwargs):
        """``Node.create_timer`` with ``callback`` through :func:`known_signature` (rclpy's
        executors inspect a timer callback's signature at every tick)."""
        return super().create_timer(timer_period_sec, known_signature(callback), *args,
                                    **kwargs)

    def publish_diagnostics(self) -> None:
        """One DiagnosticArray holding :meth:`diagnostic_status` on ``self._diag_pub``."""
        msg = DiagnosticArray()
        msg.header.stamp = self.get_clock().now().to_msg()
        msg.status = [self.diagnostic_status()]
        self._diag_pub.publish(msg)


def known_signature(callback: Callable | None) -> Callable | None:
    """``callback`` as a timer callback whose ``__signature__`` is set once: rclpy 9's executors
    call ``inspect.signature`` on a timer's callback at every tick (to find a ``TimerInfo``
    parameter), 7–11 µs per call in a tight loop for a function or bound method (more in a
    process between messages, cold caches) against ~1.3 µs with ``__signature__`` — e.g. 1–5 %
    of a core for a 1 kHz timer. The signature is the callback's own, so a callback that takes a
    ``TimerInfo`` still gets it."""
    if callback is None or "__signature__" in getattr(callback, "__dict__", ()):
        return callback
    try:
        sig = inspect.signature(callback)
    except (TypeError, ValueError):  # no signature to find: rclpy's own check fails alike
        return callback
    if sig.parameters:
        def timer_callback(*args, **kwargs):
            return callback(*args, **kwargs)
    else:
        def timer_callback():
            return callback()
    timer_callback.__signature__ = sig
    return timer_callback


def declare_params(node, specs: Iterable[ParamSpec]) -> dict:
    """:func:`fric_interfaces.parameters.declare`: every rclpy parameter error becomes a
    ``ValueError`` in words that says what to write (``F: expected a double (write 4.0), got an
    integer (4)`` for a double given as ``4`` in YAML), and the node's later rejections of live
    changes are worded the same way (:func:`fric_interfaces.parameters.readable_rejections`).
    A file parameter (``ParamSpec.path``) set by a parameter file to a relative path comes back
    resolved against that file's directory (:mod:`fric_nodes.param_paths`; ``ValueError`` naming
    the parameter and the path tried when it does not exist)."""
    specs = tuple(specs)
    try:
        values = declare(node, specs)
    except ParameterException as e:  # declare words the usual ones; anything else: its text
        raise ValueError(str(e)) from None
    args = (_PROCESS_ROS_ARGS, getattr(node, "_fric_cli_args", ()))
    overridden = getattr(node, "_fric_overridden", set())
    for spec in specs:
        if spec.path and values.get(spec.name):
            values[spec.name] = resolve_path_param(spec.name, values[spec.name], args,
                                                   spec.name in overridden)
    return values


def rejected_change(specs: dict, live, p) -> str | None:
    """Why a live change of parameter ``p`` is refused (``"<name>: read-only"`` when its name is
    not in ``live``, ``"<name>: <reason>"`` when :func:`~fric_interfaces.parameters.check` of its
    ``ParamSpec`` in ``specs`` fails), or None: accepted, or not a name in ``specs``."""
    spec = specs.get(p.name)
    if spec is None:
        return None
    if p.name not in live:
        return f"{p.name}: read-only"
    reason = check(spec, p.value)
    return f"{p.name}: {reason}" if reason else None


def unused_overrides(node, known: Iterable[str]) -> list[str]:
    """Parameters given in YAML/launch that the node does not declare (typos), sorted."""
    given = getattr(node, "_parameter_overrides", {}) or {}
    known = set(known) | {"use_sim_time"}
    return sorted(k for k in given if k not in known)


def wall_clock_ns(node) -> Callable[[], int]:
    """The clock that input header stamps are compared with: ``time.time_ns`` (publishers stamp
    with the wall clock), or the node's ROS clock when ``use_sim_time`` is true (stamps are then
    simulated time)."""
    if bool(node.get_parameter("use_sim_time").value):
        return lambda: node.get_clock().now().nanoseconds
    return time.time_ns


class Ring:
    """The last ``size`` float samples (preallocated; ``add`` is O(1), no allocation)."""

    def __init__(self, size: int = 4096):
        self._buf = np.zeros(int(size))
        self._n = 0

    def add(self, x: float) -> None:
        self._buf[self._n % self._buf.size] = x
        self._n += 1

    def __len__(self) -> int:
        return min(self._n, self._buf.size)

    def clear(self) -> None:
        self._n = 0

    def samples(self) -> np.ndarray:
        """The samples held (a view, oldest not first once the ring has wrapped)."""
        return self._buf[:len(self)]

    def percentiles(self, qs=(50.0, 99.0, 100.0)) -> list[float] | None:
        """Percentiles of the samples held, or None when empty."""
        n = len(self)
        if not n:
            return None
        return [float(v) for v in np.percentile(self._buf[:n], qs)]


class Housekeeping:
    """Periodic non-control work (diagnostics, markers) run in the control loop's slack.

    On one executor thread a 0.1–0.7 ms diagnostics callback that happens to run just before a
    control message is handled delays that answer by as much, which at 1 kHz loses the cycle
    (measured with bench/loop_latency.py: one lost cycle per diagnostics period). So a
    housekeeping timer only marks its task due (:meth:`timer` wraps the task for
    ``create_timer``), and the control callback calls :meth:`after_output` right after it has
    published: that runs at most one due task, in the time until the next input arrives. When no
    control callback has run for ``idle_s`` there is nothing to delay and the timer runs the task
    itself. ``after_output`` costs one clock read when nothing is due; no allocation.
    """

    def __init__(self, idle_s: float = 0.05):
        self._idle_ns = int(idle_s * 1e9)
        self._last_ns = -self._idle_ns
        self._due: list[Callable[[], None]] = []

    def timer(self, task: Callable[[], None]) -> Callable[[], None]:
        """The callback to give ``create_timer`` for ``task``."""
        def on_timer() -> None:
            if time.monotonic_ns() - self._last_ns > self._idle_ns:
                task()  # control loop idle: nothing to delay
            elif task not in self._due:
                self._due.append(task)
        return on_timer

    def after_output(self) -> None:
        """Call right after the control output is published: runs the oldest due task."""
        self._last_ns = time.monotonic_ns()
        if self._due:
            self._due.pop(0)()


class RejectLog:
    """A node's rejected inputs, per reason: the count, the last text, the count in the current
    diagnostics period and the latest text of any reason. Each rejection logs one throttled
    warning (one call site, one severity: rclpy forbids changing either between calls).

    Parameters
    ----------
    logger
        The node's logger.
    what
        What is rejected, for the log line and the diagnostics keys ("input", "command").
    key_prefix
        Put into each reason's keys (``rejected <key_prefix> <reason>``): a node with two
        logs (inputs and commands) keeps their keys apart. None: ``rejected <reason>``.
    """

    def __init__(self, logger, what: str = "input", key_prefix: str | None = None):
        self.counts: dict[str, int] = {}
        self.last: dict[str, str] = {}
        self.latest = ""
        self.period = 0
        self._log = logger
        self._what = what
        self._key = "rejected " + (f"{key_prefix} " if key_prefix else "")

    def add(self, reason: str, text: str) -> None:
        """Count one rejection for ``reason``; ``text`` says what was wrong (names the field)."""
        self.counts[reason] = self.counts.get(reason, 0) + 1
        self.last[reason] = text
        self.latest = text
        self.period += 1
        self._log.warning(f"rejected {self._what}: {text}", throttle_duration_sec=1.0)

    @property
    def total(self) -> int:
        """All rejections since the start."""
        return sum(self.counts.values())

    def key_values(self) -> list[tuple[str, str]]:
        """Diagnostics key/values: the total, then count and last text per reason."""
        kv = [(f"rejected {self._what}s", str(self.total))]
        key = self._key
        for reason in sorted(self.counts):
            kv += [(key + reason, str(self.counts[reason])),
                   (f"{key}{reason} last", self.last[reason])]
        return kv

    def period_problem(self) -> str | None:
        """``"N rejected inputs, last: …"`` when this period had rejections (then resets the
        period count), else None."""
        n, self.period = self.period, 0
        if not n:
            return None
        return f"{n} rejected {self._what}s, last: {self.latest}"


class InternalErrors:
    """Unexpected exceptions in a node's own callbacks and threads ("no thread dies silently"):
    each is logged with its traceback and counted for /diagnostics, where the next report is at
    ERROR level and names the last one.

    Parameters
    ----------
    logger
        The node's logger.
    prog
        The node's name, for the stderr line written when logging itself fails.
    """

    def __init__(self, logger, prog: str):
        self.count = 0  # since the start
        self.period = 0  # since the last diagnostics report
        self.last = ""
        self._log = logger
        self._prog = prog

    def add(self, where: str, e: BaseException) -> None:
        """Count ``e``, raised in ``where`` (``"service thread"``), and log it."""
        text = f"{where}: {type(e).__name__}: {e}"
        self.count += 1
        self.period += 1
        self.last = text
        try:
            tb = "".join(traceback.format_exception(type(e), e, e.__traceback__))
            self._log.error(f"internal error in the {text}\n{tb}")
        except Exception:  # noqa: BLE001 - logging itself failed: stderr is left
            print(f"{self._prog}: internal error in the {text}", file=sys.stderr)

    def fatal(self, text: str) -> None:
        """Log ``text`` at FATAL level (stderr when logging fails); the caller ends the node."""
        try:
            self._log.fatal(text)
        except Exception:  # noqa: BLE001
            print(f"{self._prog}: {text}", file=sys.stderr)

    def key_values(self) -> list[tuple[str, str]]:
        """Diagnostics key/values: the count, and the last error when there was one."""
        kv = [("internal errors", str(self.count))]
        if self.count:
            kv.append(("internal errors last", self.last))
        return kv

    def period_problem(self, failed: bool = False) -> str | None:
        """``"internal error: <last>"`` when this period had one (or ``failed``: the node is
        ending with an error status), else None; starts the next period."""
        n, self.period = self.period, 0
        return f"internal error: {self.last}" if n or failed else None


def guarded(callback: Callable, fail: Callable[[Exception], None], timer: bool = False):
    """``callback`` for the executor, with an unexpected exception handed to ``fail`` instead of
    ending the executor's thread: the node goes on (the next message is handled as usual).
    ``timer``: a callback without argument (rclpy passes a TimerInfo to one that takes one).
    One extra call per message; no allocation."""
    if timer:
        def run_timer() -> None:
            try:
                callback()
            except Exception as e:  # noqa: BLE001 - never die silently
                fail(e)
        return run_timer

    def run(msg) -> None:
        try:
            callback(msg)
        except Exception as e:  # noqa: BLE001 - never die silently
            fail(e)
    return run


class ServiceThread:
    """A service whose callback may block (it waits for a long run while the node's own executor
    drives the control path): served by a hidden helper node of ``node`` spun by a
    MultiThreadedExecutor on a thread of its own. Reentrant, so a call during a blocked one is
    served by another of the ``threads`` pool threads (one thread would queue it behind).

    The callback's exceptions are answered (``response.success = False``, ``response.message =
    "failed: internal error …"``: a std_srvs-style response) and reported to ``errors``; the
    executor's own exceptions are reported and the thread goes on, until ``max_failures`` in a
    row: then ``on_fatal(text)`` (end the node) and the thread ends. The thread starts at once and
    runs until ``stopping()`` or the context ends; :meth:`destroy` joins it.
    """

    def __init__(self, node: Node, srv_type, callback: Callable, errors: InternalErrors, *,
                 name: str, stopping: Callable[[], bool], on_fatal: Callable[[str], None],
                 threads: int = 2, max_failures: int = 10):
        self._callback = callback
        self._errors = errors
        self._stopping = stopping
        self._on_fatal = on_fatal
        self._max_failures = max_failures
        self._context = node.context
        self._label = name
        # no global arguments: a command-line `-r __node:=...` must not rename the helper too
        self.node = Node(f"_{node.get_name()}_service", namespace=node.get_namespace(),
                         context=node.context, use_global_arguments=False,
                         start_parameter_services=False)
        self.node.create_service(srv_type, f"{node.get_fully_qualified_name()}/{name}",
                                 self._serve, callback_group=ReentrantCallbackGroup())
        self.executor = MultiThreadedExecutor(num_threads=threads, context=node.context)
        self.executor.add_node(self.node)
        self.thread = threading.Thread(target=self._spin, name=f"{node.get_name()}-service",
                                       daemon=True)
        self.thread.start()

    def _serve(self, request, response):
        """The callback, and an answer whatever happens there (an exception in a pool thread of
        the executor would only surface calls later)."""
        try:
            return self._callback(request, response)
        except Exception as e:  # noqa: BLE001 - the caller always gets an answer
            self._errors.add(f"{self._label} service", e)
            response.success = False
            response.message = f"failed: internal error {type(e).__name__}: {e}"
            return response

    def _spin(self) -> None:
        failures = 0
        while not self._stopping() and self._context.ok():
            try:
                self.executor.spin_once(timeout_sec=0.1)
                failures = 0
            except Exception as e:  # noqa: BLE001 - never die silently
                if self._stopping() or not self._context.ok():
                    break  # the context went away at shutdown
                failures += 1
                self._errors.add("service thread", e)
                if failures >= self._max_failures:
                    self._on_fatal(f"service thread: {failures} failures in a row, the "
                                   f"{self._label} service cannot serve; ending the node")
                    break
                time.sleep(0.1)
        try:
            self.executor.remove_node(self.node)
            self.executor.shutdown(timeout_sec=1.0)
        except Exception:  # noqa: BLE001 - at shutdown
            pass

    def destroy(self) -> None:
        """Wait (5 s at most) for the thread (``stopping()`` must be true), destroy the helper."""
        if self.thread.is_alive():
            self.thread.join(timeout=5.0)
        if self.node is not None:
            self.node.destroy_node()
            self.node = None


def status(name: str, hardware_id: str, level: int, problems: list[str], ok_message: str,
           kv: list[tuple[str, str]]) -> DiagnosticStatus:
    """A DiagnosticStatus whose message lists the problems (or ``ok_message``)."""
    return DiagnosticStatus(level=level, name=name, hardware_id=hardware_id,
                            message="; ".join(problems) or ok_message,
                            values=[KeyValue(key=k, value=v) for k, v in kv])


def _int_list(node, name: str) -> list[int]:
    """An integer-array parameter declared without a default: [] when not set."""
    try:
        return list(node.get_parameter(name).value or [])
    except ParameterUninitializedException:
        return []


def run_node(factory: Callable[[], object], prog: str, args=None, *,
             done: Callable[[object], bool] = lambda node: False,
             on_stop: Callable[[object, bool], None] | None = None) -> int:
    """The ``main`` of a fric node: run ``factory()`` until SIGINT/SIGTERM or ``done(node)``.

    ``factory`` returns a node, or a tuple of nodes composed in this process on one executor
    (``done``/``on_stop`` get what it returned). Raising ``ValueError`` (bad parameters) prints
    ``<prog>: bad parameters: …`` and returns 1. ``on_stop(node, context_ok)`` runs before the
    nodes are destroyed (final safe output). Applies the (first) node's ``thread_priority``/
    ``cpu_affinity`` parameters, when it has them, to every thread of the process
    (:mod:`fric_nodes.scheduling`). Non-ROS option ``--executor events|single`` (default
    events). Returns 0; 1 when a callback raised or a node set ``fatal_error`` (one of its own
    threads stopped): the error is logged with its traceback, reported as an ERROR status on
    /diagnostics, and ``on_stop`` still gives the final safe output. No thread dies silently.

    SIGINT/SIGTERM, any number of them from the moment ``run_node`` is called (before
    ``rclpy.init``), end the loop and the node exits cleanly (``on_stop``, status 0): see
    :func:`stop_signals`. With ``args=None`` (the node's own process) both signals stay ignored
    after the return, until the process has exited; with ``args`` (in-process) the previous
    handlers are restored.
    """
    stop: list[int] = []
    with stop_signals(stop, restore=args is not None):
        return _run_node(factory, prog, args, done, on_stop, stop)


def _run_node(factory, prog, args, done, on_stop, stop: list[int]) -> int:
    argv = list(sys.argv[1:] if args is None else args)
    parser = argparse.ArgumentParser(prog=prog)
    parser.add_argument("--executor", choices=("events", "single"), default="events")
    if not init_ros(prog, argv):
        return 1
    opts, _ = parser.parse_known_args(remove_ros_args(["prog"] + argv)[1:])
    made = None
    nodes: tuple = ()
    try:
        try:
            made = factory()
            nodes = made if isinstance(made, tuple) else (made,)
            _apply_scheduling(nodes[0])
        except ValueError as e:
            print(f"{prog}: bad parameters: {e}", file=sys.stderr)
            return 1
        executor = EventsExecutor() if opts.executor == "events" else SingleThreadedExecutor()
        for node in nodes:
            executor.add_node(node)
        gc.collect()
        gc.freeze()  # set-up objects out of the collector's way: shorter pauses in the loop
        failure = None
        try:
            while not stop and rclpy.ok() and not done(made):
                executor.spin_once(timeout_sec=0.1)
                failure = _fatal_error(nodes)
                if failure is not None:
                    break
        except Exception as e:  # noqa: BLE001 - a callback raised: report, go safe, exit 1
            failure = f"unexpected {type(e).__name__} in a callback: {e}"
            nodes[0].get_logger().fatal(f"{failure}\n{traceback.format_exc()}")
        if failure is not None:
            report_fatal(nodes, prog, failure)
        if on_stop is not None:
            try:
                on_stop(made, rclpy.ok())
            except Exception as e:  # noqa: BLE001 - the final safe output failed: say so
                nodes[0].get_logger().fatal(f"final safe output failed: {e}\n"
                                            f"{traceback.format_exc()}")
                failure = failure or str(e)
        for node in nodes:
            executor.remove_node(node)
        if failure is not None:
            print(f"{prog}: stopped: {failure}", file=sys.stderr)
            return 1
        return 0
    finally:
        for node in nodes:
            node.destroy_node()
        rclpy.try_shutdown()
        _PROCESS_ROS_ARGS.clear()


@contextlib.contextmanager
def stop_signals(stop: list[int], restore: bool = True) -> Iterator[list[int]]:
    """SIGINT and SIGTERM append their number to ``stop`` inside the block, however many arrive
    and whenever (during spin, in a service callback, while the node shuts down): the node's loop
    watches ``stop``, nothing is ever raised. Python's default SIGINT handler raises
    KeyboardInterrupt wherever the main thread is, and inside a pybind11 call of rclpy (a service
    or node being destroyed) that aborts the process (``terminate called after throwing an
    instance of 'pybind11::error_already_set' what(): KeyboardInterrupt``, exit -6); ``ros2
    launch`` sends SIGINT twice on Ctrl-C (the terminal's to every process, then its own).

    On leaving the block: ``restore`` puts the previous handlers back (a node run in-process, by
    a test); ``restore=False`` (a node's own process: ``run_node`` with ``args=None``) ignores
    both signals from then on (SIG_IGN), so a late one cannot interrupt the interpreter's exit.
    Only on the main thread (elsewhere a no-op: Python delivers signals to the main thread)."""
    if threading.current_thread() is not threading.main_thread():
        yield stop
        return

    def on_signal(signum, _frame):
        stop.append(signum)

    sigs = (signal.SIGINT, signal.SIGTERM)
    previous = {s: signal.signal(s, on_signal) for s in sigs}
    try:
        yield stop
    finally:
        for s in sigs:
            signal.signal(s, previous[s] if restore else signal.SIG_IGN)


def _fatal_error(nodes) -> str | None:
    """The first node's ``fatal_error`` (a node sets it when one of its own threads stopped)."""
    for node in nodes:
        err = getattr(node, "fatal_error", None)
        if err:
            return str(err)
    return None


def report_fatal(nodes, prog: str, what: str, wait_s: float = 2.0) -> None:
    """Publish one ERROR status per node on /diagnostics (the node is about to stop).

    The publisher is new, so it first waits (at most ``wait_s``) until it has matched every
    /diagnostics subscriber the node's graph knows of, and after publishing until they have
    acknowledged it: on a loaded machine a status published at once is lost with the node."""
    from rclpy.duration import Duration
    for node in nodes:
        try:
            pub = node.create_publisher(DiagnosticArray, "/diagnostics", 10)
            end = time.monotonic() + wait_s
            while time.monotonic() < end:
                known = node.count_subscribers("/diagnostics")
                if known and pub.get_subscription_count() >= known:
                    break
                time.sleep(0.01)
            msg = DiagnosticArray()
            msg.header.stamp = node.get_clock().now().to_msg()
            msg.status = [DiagnosticStatus(level=DiagnosticStatus.ERROR,
                                           name=f"{node.get_name()}: fatal",
                                           hardware_id=prog,
                                           message=f"stopping: {what}")]
            pub.publish(msg)
            pub.wait_for_all_acked(Duration(seconds=max(0.0, end - time.monotonic()) + 0.2))
        except Exception:  # noqa: BLE001 - the context may be gone; the log and exit 1 remain
            pass


def init_ros(prog: str, argv: list[str]) -> bool:
    """``rclpy.init`` with ``argv`` (without rclpy's signal handlers). A bad ``--params-file``
    (missing, a YAML syntax error, a list rcl cannot type) or other bad ``--ros-args`` prints one
    line, ``<prog>: <file>:<line>: <problem>``, and returns False (no traceback)."""
    problem = params_files_problem(argv)
    if problem is None:
        try:
            rclpy.init(args=["prog"] + argv, signal_handler_options=SignalHandlerOptions.NO)
            _PROCESS_ROS_ARGS[:] = argv
            return True
        except RCLError as e:
            problem = ros_args_problem(e)
    print(f"{prog}: {problem}", file=sys.stderr)
    return False


def _apply_scheduling(node) -> None:
    """``thread_priority``/``cpu_affinity`` of ``node`` for every thread of this process."""
    if not node.has_parameter("thread_priority"):
        return
    prio = node.get_parameter("thread_priority").value
    cpus = _int_list(node, "cpu_affinity")
    problems = apply_scheduling(prio, cpus)
    for problem in problems:
        node.get_logger().warning(problem)
    if (prio or cpus) and not problems:
        node.get_logger().info(f"scheduling: {f'SCHED_FIFO {prio}' if prio else 'normal'}, "
                               f"CPUs {cpus or 'all'}, all {len(process_threads())} threads")


def sleep_ok(seconds: float) -> None:
    """Let reliable writers hand the last messages over before the node goes away."""
    if seconds > 0.0:
        time.sleep(seconds)


def friction_laws_text(names, friction, offset: bool) -> str:
    """One line naming each joint's friction law (``joint_friction.yaml``, issue 23) for the
    start-up log: ``asymmetric`` with its levels or ``curve`` with its knots and levels at 0, a
    level below 0 flagged (an offset left in the levels), and the effort offset — rendered when
    ``offset`` (the compensator: the total curve), else said to be left out (the simulator)."""
    parts = []
    for name, jf in zip(names, friction):
        if jf.law == "curve":
            c = jf.curve
            text = (f"{name} curve {len(c.v_pos)}+{len(c.v_neg)} knots, at 0 Cp "
                    f"{c.f_pos[0]:g} Cn {c.f_neg[0]:g}")
            low = min(c.f_pos[0], c.f_neg[0])
        else:
            text = f"{name} asymmetric Cp {jf.Cp:g} Cn {jf.Cn:g} bp {jf.bp:g} bn {jf.bn:g}"
            low = min(jf.Cp, jf.Cn)
        if low < 0.0:
            text += " [a level below 0: an effort offset left in the levels]"
        if jf.offset:
            text += (f" + offset {jf.offset:g} N m" if offset
                     else f", offset {jf.offset:g} N m not simulated")
        parts.append(text)
    return "; ".join(parts)
