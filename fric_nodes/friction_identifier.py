"""``friction_identifier``: identifies a sample's mass and friction on the haptic stage, as paper
003 (Richard, Cutkosky & MacLean) does, and hands the identified law to a ``friction_renderer``.

A run (the Trigger service ``~/identify``, or ``identify_on_start``):

1. **Checks.** Refused (Trigger ``success=False`` with the reason) when no valid joint_states of
   ``joint`` came within ``stage_timeout``, when the stage stands outside the travel band
   ``[x_min + travel_margin, x_max − travel_margin]``, or when the excitation (paper 003's
   warm-up + sinusoid, :func:`fric_core.identification.excitation`, centred where the run starts
   unless ``center`` is set) leaves that band — the message names the field.
2. **Hand-over** (``push_to_renderer``): ``output_enabled: false`` on ``renderer_node`` (its
   SetParameters service) so that two controllers never command the stage at once; a renderer
   that does not answer within ``renderer_timeout`` is reported and the run goes on.
3. **Motion**, one command per received joint_states (so it works in lockstep, where the stage
   steps when a command arrives, and in realtime): a position hold where the stage is until
   200 consecutive states were answered (the loop is steady; at most 5 s), a move to the
   excitation centre at ``move_speed`` (if needed) and 0.2 s of hold, then the excitation
   setpoint for the stage time since its start, one period ahead (header stamps: states missed
   in realtime do not shift it) on ``position_controller/commands``; the states after the
   warm-up are recorded: position, velocity, effort negated to paper 003's load-cell sign
   (``F = m a + F_friction``, eq. 1; haptic_stage publishes the force on the stage), and the
   ``accelerometer`` (sensor_msgs/Imu) matched by stamp afterwards. Then a 0.3 s position hold
   and one zero-effort command: the stage rests on its friction and nothing is commanded more.
4. **Aborts** — zero effort on ``effort_controller/commands`` at once (the stage rests), the
   renderer left disabled — when the position leaves the travel band, the stage's /diagnostics
   report an end-stop contact or the motor saturated in more than ``max_saturation`` of the
   cycles between two reports, no valid joint_states came for ``data_timeout``, the position is
   more than ``tracking_limit`` from the last command (off by default: in realtime a stalled
   command path makes the stage lag), or the node shuts down.
5. **Fit** of both methods on the record (:meth:`fric_core.identification_io.Recording.fit`:
   OLS, paper 003 eq. 5; Fuller's EIV, eq. 6, the EIV noise variances from the parameters, the
   Imu covariance or the data); no accelerometer messages: the acceleration is the 4-point
   central difference of the velocity within the gap-free segments of the record, and the
   result says so. States the node never saw are gaps in the record's stamps: the summary says
   how many were lost, and beyond ``MAX_LOST_FRACTION`` (5 %) of the record it says ``NOT
   TRUSTED`` (lost breakaway peaks bias Dp/Dn; /diagnostics WARN). A ``ValueError`` of the fit
   (not identifiable) fails the run with its text.
6. **Outputs**: ``output_dir`` gets ``recording.csv`` (write_csv, with the noise variances the
   EIV fit used in a ``# noise:`` comment, so that ``fric identify`` on it gives the same
   estimates), ``<renderer>.yaml`` (fit_to_yaml, the ``method`` fit) and the report
   (write_report: figures, estimates.md); the ``result.*`` parameters (read-only to users) and
   /diagnostics carry the estimates ± std; with ``push_to_renderer`` the renderer gets
   renderer_parameters(fit) and ``output_enabled: true`` in one SetParametersAtomically call
   whose reply is checked (a rejection is reported with the renderer's reason and fails the
   run).

The Trigger call answers when the run is over, with ``success`` and a one-line summary (also
logged); a second call during a run is answered at once: busy. Concurrency: the node itself runs
on the EventsExecutor of every fric node (``run_node``): joint_states, accelerometer, stage
diagnostics, parameter services and the renderer clients' replies, on one thread that never
waits. The run is a plain thread (the Trigger caller's, or one started for
``identify_on_start``) that waits on events and sleeps while the control path drives the stage;
the Trigger service itself lives on a hidden helper node (``_<name>_service``, same namespace,
service name ``<node>/identify``) spun in a thread of its own by a MultiThreadedExecutor of
two threads, the service in a reentrant callback group: one thread waits for the run, another
answers a call that comes during it ("busy", at once; one executor thread queued it behind the
run, which then ran a second identification). The control path stays on the EventsExecutor:
a MultiThreadedExecutor there (measured: realtime stage at 1 kHz, this 2-core machine) left
54 % of the states of an excitation unanswered and lost accelerometer messages, the
EventsExecutor under 1 %.

No thread dies silently: an unexpected exception in a subscription or timer callback (the run
in progress is then aborted to rest), the service callback, the service thread or the start-up
run is logged with its traceback, counted on /diagnostics (``internal
errors``, ERROR level in the next report, the last one named), and the caller gets a
``failed: internal error ...`` answer; the service thread goes on serving (after
``_MAX_SERVICE_FAILURES`` failures in a row it ends the node, status 1), a start-up run that
raises ends the node with status 1. Log calls keep one severity per line: rclpy raises
``ValueError`` when a call site changes its severity.

Hot path: per joint_states one JointStateReader read (by name; NaN, missing joint and length
errors rejected with a diagnostic, like the renderer), a few float operations, stores into
arrays preallocated at the run start, one preallocated command message.
"""

from __future__ import annotations

import math
import os
import sys
import threading
import time
import traceback
import warnings
from array import array
from pathlib import Path

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from rcl_interfaces.msg import SetParametersResult
from rcl_interfaces.srv import SetParameters, SetParametersAtomically
from rclpy.clock import Clock, ClockType
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.executors import MultiThreadedExecutor
from rclpy.node import Node
from rclpy.parameter import Parameter
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import Float64MultiArray
from std_srvs.srv import Trigger

from fric_core.haptics.identification import Excitation
from fric_core.haptics.recording import Recording, write_csv
from fric_core.haptics.renderer_yaml import fit_to_yaml, renderer_parameters
from fric_core.haptics.report import write_report
from fric_interfaces import names, qos
from fric_interfaces.conversions import InputError, JointStateReader
from fric_interfaces.identifier_params import (LIVE, RESULT_PARAMS, RESULT_SPECS, SPECS,
                                               check_excitation, travel_band, validate)
from fric_interfaces.parameters import check, descriptor

from ._node_util import (Housekeeping, declare_params, run_node, sleep_ok, status,
                         unused_overrides)

__all__ = ["FrictionIdentifier", "main"]

# hot-path phases of a run
PREPARE, MOVE, EXCITE, SETTLE, END = range(5)
_STEADY_STATES = 200  # hold until this many consecutive states were answered (none missed)
_STEADY_MAX_NS = 5_000_000_000  # ... or this long at most [ns]
_MOVE_HOLD_NS = 200_000_000  # hold at the excitation centre after a move [ns]
_SETTLE_NS = 300_000_000  # position hold after the excitation, before zero effort [ns]
_MOVE_TOL = 1e-5  # no move when the centre is this close [m] (4 encoder counts)
#: the Trigger service's executor threads: one may wait for a run, another answers "busy"
_SERVICE_THREADS = 2
#: the service thread ends the node (status 1) after this many exceptions in a row
_MAX_SERVICE_FAILURES = 10


def _resolve(node: Node, name: str) -> str:
    """A node name relative to ``node``'s namespace (absolute names unchanged)."""
    if name.startswith("/"):
        return name
    return f"{node.get_namespace().rstrip('/')}/{name}"


class _Run:
    """One identification run: the plan, the control state and the record (preallocated).

    Time base: the header stamps. The excitation (built by ``check_excitation`` at 1 ms) is a
    table of the setpoint against the time since the excitation started; each state's command
    is the table, interpolated linearly, one stage period ahead (the command acts during the
    next cycle), so states the stage published but this node never saw (realtime, a loaded
    machine) do not shift the trajectory, and any stage rate works."""

    def __init__(self, values: dict, exc: Excitation, x_start: float, number: int):
        self.values = values
        self.number = number
        self.lo, self.hi = travel_band(values)
        self.tracking_limit = float(values["tracking_limit"])
        self.max_saturation = float(values["max_saturation"])
        self.x_start = x_start
        self.center = float(exc.center)
        dt = float(exc.t[0])
        self.table_dt = dt
        self.table = np.concatenate(([self.center], exc.x))  # setpoint at k * dt, k = 0, 1, ...
        self.t_warm_ns = int(round(int(np.argmax(exc.record)) * dt * 1e9)) \
            if exc.record.any() else int(round(exc.t[-1] * 1e9))
        self.t_end_ns = int(round(exc.t[-1] * 1e9))
        self.phase = PREPARE
        self.state = "moving"
        self.prev_ns = -1
        self.min_diff = 1 << 62  # smallest stamp step seen: the stage period
        self.n_steady = 0  # consecutive states answered without a gap
        self.prep_start = -1
        self.prep_missed = 0
        self.setpoint = x_start
        self.move_ns = int(abs(self.center - x_start) / values["move_speed"] * 1e9) \
            if abs(self.center - x_start) > _MOVE_TOL else 0
        self.t0 = 0  # stamp at which the move, then the excitation, started
        self.settle_end = 0
        self.imu_from_ns = 0
        # record (allocated when the period is known)
        self.t_ns = np.zeros(0, dtype=np.int64)
        self.x = self.v = self.force = np.zeros(0)
        self.k = 0
        self.overflow = 0
        self.imu_ns = np.zeros(0, dtype=np.int64)
        self.imu_a = np.zeros(0)
        self.k_imu = 0
        self.imu_cov_sum = 0.0
        self.imu_cov_n = 0
        self.stage_diags = 0
        self.stage_states = -1  # "states published" of the stage's previous report
        self.n_excite = 0  # states handled during the excitation
        self.ex_first = self.ex_last = -1  # their first and last stamps
        self.ex_min_diff = 1 << 62
        self.aborted = ""
        self.done = threading.Event()

    def allocate(self) -> None:
        """The record buffers, from the period measured while holding: room for four times
        the states expected (a period over-estimated because states were missed)."""
        n = int((self.t_end_ns - self.t_warm_ns) / self.min_diff) * 4 + 16
        self.t_ns = np.zeros(n, dtype=np.int64)
        self.x, self.v, self.force = np.zeros(n), np.zeros(n), np.zeros(n)
        self.imu_ns = np.zeros(n, dtype=np.int64)
        self.imu_a = np.zeros(n)

    def excitation_setpoint(self, tau_ns: int) -> float:
        """The table at ``tau_ns`` (ns since the excitation started), linearly interpolated."""
        u = tau_ns * 1e-9 / self.table_dt
        i = int(u)
        tab = self.table
        if i + 1 >= tab.size:
            return float(tab[-1])
        x0 = float(tab[i])
        return x0 + (u - i) * (float(tab[i + 1]) - x0)

    def missed(self) -> tuple[int, int]:
        """(states of the excitation not handled, states it spanned): states the stage
        published that this node never answered (realtime: it fell behind)."""
        if self.n_excite < 2:
            return 0, self.n_excite
        span = int(round((self.ex_last - self.ex_first) / self.ex_min_diff)) + 1
        return span - self.n_excite, span


class FrictionIdentifier(Node):
    """The identification node (see the module docstring). ``kwargs`` go to ``Node``."""

    def __init__(self, node_name: str = names.FRICTION_IDENTIFIER, **kwargs):
        super().__init__(node_name, **kwargs)
        self._on_start_thread: threading.Thread | None = None
        self._service_node: Node | None = None
        self._service_executor: MultiThreadedExecutor | None = None
        self._service_thread: threading.Thread | None = None
        self._stopping = False
        try:
            self._setup()
        except Exception:
            self.destroy_node()
            raise

    # ------------------------------------------------------------------ set-up
    def _setup(self) -> None:
        self._specs = {s.name: s for s in SPECS}
        values = declare_params(self, SPECS)
        given = getattr(self, "_parameter_overrides", {}) or {}
        if "center" in given and "center_on_start" not in given:
            values["center_on_start"] = False  # setting center means: centre there
            self.set_parameters([Parameter("center_on_start", value=False)])
        validate(values)
        self._values = values
        self._result_specs = {s.name: s for s in RESULT_SPECS}
        for s in RESULT_SPECS:
            self.declare_parameter(s.name, s.default, descriptor(s))
        unused = unused_overrides(self, set(self._specs) | set(self._result_specs))
        if unused:
            self.get_logger().warning(f"ignoring unknown parameters {unused}")
        self._joint = values["joint"]
        self._stage_status = f"{_resolve(self, values['stage_node'])}: stage"
        self._renderer = _resolve(self, values["renderer_node"])

        self._lock = threading.Lock()  # phase changes: control path vs the run's thread
        self._busy = threading.Lock()  # one run at a time
        self._result_writer = None  # thread allowed to set result.* (the run's)
        self._run: _Run | None = None
        self._runs = 0
        self._state = "idle"
        self._reason = ""
        self._summary = ""
        self._fits: dict = {}
        self._stopping = False
        self.finished = False  # exit_when_done / exit_on_failure / a fatal error: main exits
        self.exit_status = 0
        self._trust = ""  # the last fit's record lost too much to trust it (else "")
        self._internal_errors = 0  # unexpected exceptions in this node's threads
        self._internal_errors_period = 0  # ... since the last diagnostics report
        self._internal_error_last = ""
        # control-path state
        self._reader = JointStateReader([self._joint], ("position", "velocity", "effort"))
        self._last_x = math.nan
        self._last_valid_mono: int | None = None
        self._accepted = 0
        self._rejected: dict[str, int] = {}
        self._rejected_last: dict[str, str] = {}
        self._rejected_latest = ""
        self._rejected_period = 0
        self._pos_msg = Float64MultiArray()
        self._pos_msg.data = array("d", [0.0])
        self._pos_data = self._pos_msg.data
        self._zero_msg = Float64MultiArray()
        self._zero_msg.data = array("d", [0.0])

        self._pos_pub = self.create_publisher(Float64MultiArray, names.POSITION_COMMANDS,
                                              qos.CONTROL_PUB)
        self._eff_pub = self.create_publisher(Float64MultiArray, names.EFFORT_COMMANDS,
                                              qos.CONTROL_PUB)
        self._diag_pub = self.create_publisher(DiagnosticArray, names.DIAGNOSTICS, qos.INFO)
        self.create_subscription(JointState, names.JOINT_STATES,
                                 self._guarded("joint_states callback", self._on_joint_state),
                                 qos.CONTROL_SUB)
        self.create_subscription(Imu, names.ACCELEROMETER,
                                 self._guarded("accelerometer callback", self._on_accel),
                                 qos.CONTROL_SUB)
        self.create_subscription(DiagnosticArray, names.DIAGNOSTICS,
                                 self._guarded("stage diagnostics callback",
                                               self._on_stage_diag), qos.INFO)
        self._set_client = self.create_client(SetParameters, f"{self._renderer}/set_parameters")
        self._set_atomic_client = self.create_client(
            SetParametersAtomically, f"{self._renderer}/set_parameters_atomically")
        self._housekeeping = Housekeeping()  # diagnostics in the slack after a command
        self.create_timer(values["diagnostics_period"],
                          self._guarded("diagnostics timer",
                                        self._housekeeping.timer(self._publish_diagnostics),
                                        timer=True),
                          clock=Clock(clock_type=ClockType.STEADY_TIME))
        self.add_on_set_parameters_callback(self._on_set_parameters)
        self._start_service()
        self.get_logger().info(
            f"joint {self._joint!r}, excitation {values['amplitude']:g} m at "
            f"{values['frequency']:g} Hz, method {values['method']}, service "
            f"{self.get_fully_qualified_name()}/identify"
            + (f", hands over to {self._renderer}" if values["push_to_renderer"] else ""))
        if values["identify_on_start"]:
            self._on_start_thread = threading.Thread(target=self._identify_on_start,
                                                     name="friction_identifier-run",
                                                     daemon=True)
            self._on_start_thread.start()

    # ------------------------------------------------------------------ parameters
    def _on_set_parameters(self, params: list[Parameter]) -> SetParametersResult:
        new = dict(self._values)
        for p in params:
            if p.name in self._result_specs:
                if threading.get_ident() != self._result_writer:
                    return SetParametersResult(successful=False, reason=f"{p.name}: read-only "
                                               "(written by the node after each fit)")
                continue
            spec = self._specs.get(p.name)
            if spec is None:
                continue
            if p.name not in LIVE:
                return SetParametersResult(successful=False, reason=f"{p.name}: read-only")
            reason = check(spec, p.value)
            if reason:
                return SetParametersResult(successful=False, reason=f"{p.name}: {reason}")
            new[p.name] = p.value
        try:
            validate(new)
        except ValueError as e:
            return SetParametersResult(successful=False, reason=str(e))
        self._values = new
        return SetParametersResult(successful=True)

    def _write_results(self, fit=None, ok: bool | None = None, summary: str = "") -> None:
        """result.* (read-only to users): the estimates of ``fit``, and/or the outcome."""
        params = []
        if ok is not None:
            params += [Parameter("result.success", value=ok),
                       Parameter("result.summary", value=summary)]
        if fit is not None:
            for p in RESULT_PARAMS:
                params.append(Parameter(f"result.{p}", value=float(getattr(fit, p))))
                params.append(Parameter(f"result.{p}_std",
                                        value=float(fit.std.get(p, math.nan))))
            params += [Parameter("result.dv", value=float(fit.dv)),
                       Parameter("result.method", value=fit.method)]
        self._result_writer = threading.get_ident()
        try:
            self.set_parameters(params)
        finally:
            self._result_writer = None

    # ------------------------------------------------------------------ control path
    def _reject(self, reason: str, text: str) -> None:
        self._rejected[reason] = self._rejected.get(reason, 0) + 1
        self._rejected_last[reason] = text
        self._rejected_latest = text
        self._rejected_period += 1
        self.get_logger().warning(f"rejected input: {text}", throttle_duration_sec=1.0)

    def _on_joint_state(self, msg: JointState) -> None:
        st = msg.header.stamp
        ns = st.sec * 1_000_000_000 + st.nanosec
        try:
            self._reader.read(msg)
        except InputError as e:
            self._reject(e.kind, f"joint_states: {e}")
            return
        run = self._run
        active = run is not None and run.phase != END
        if active and ns <= run.prev_ns:
            self._reject("stamp_not_increasing", f"joint_states: stamp {ns} ns is not after "
                         f"the last one {run.prev_ns} ns")
            return
        x = float(self._reader.position[0])
        self._last_x = x
        self._last_valid_mono = time.monotonic_ns()
        self._accepted += 1
        if not active:
            return
        with self._lock:
            if run.phase == END:
                return
            sp = self._step(run, ns, x, float(self._reader.velocity[0]),
                            float(self._reader.effort[0]))
            if sp is None:
                return
            self._pos_data[0] = sp
            self._pos_pub.publish(self._pos_msg)
        self._housekeeping.after_output()

    def _step(self, run: _Run, ns: int, x: float, v: float, effort: float) -> float | None:
        """The run's state machine for one state; the position setpoint, or None when the run
        ended (zero effort published)."""
        if not run.lo <= x <= run.hi:
            return self._abort(run, f"travel limit: position {x:.6g} m outside [{run.lo:.6g}, "
                               f"{run.hi:.6g}] m (x_min/x_max shrunk by travel_margin)")
        if run.tracking_limit and abs(x - run.setpoint) > run.tracking_limit:
            return self._abort(run, f"tracking: position {x:.6g} m is {abs(x - run.setpoint):.3g}"
                               f" m from the command {run.setpoint:.6g} m (> tracking_limit "
                               f"{run.tracking_limit:g} m): end stop, saturation or a jam")
        prev, run.prev_ns = run.prev_ns, ns
        if prev >= 0 and ns - prev < run.min_diff:
            run.min_diff = ns - prev
        phase = run.phase
        if phase == PREPARE:
            # hold where the stage is until the loop is steady (no state missed for a while:
            # a late command makes the next setpoint step twice as far, and the stage's servo
            # kicks), at most _STEADY_MAX_NS; the smallest stamp step is the stage period
            if run.prep_start < 0:
                run.prep_start = ns
            elif ns - prev > 1.5 * run.min_diff:
                run.n_steady = 0
                run.prep_missed += 1
            run.n_steady += 1
            if run.n_steady < _STEADY_STATES and ns - run.prep_start < _STEADY_MAX_NS:
                return run.setpoint
            run.allocate()
            run.phase = phase = MOVE
            run.t0 = ns
        if phase == MOVE:  # to the centre at move_speed, then a short hold
            tau = ns - run.t0 + run.min_diff
            if tau < run.move_ns + _MOVE_HOLD_NS and run.move_ns:
                frac = min(1.0, tau / run.move_ns)
                run.setpoint = run.x_start + frac * (run.center - run.x_start)
                return run.setpoint
            run.phase = phase = EXCITE
            run.t0 = ns
            run.imu_from_ns = ns + run.t_warm_ns - 2 * run.min_diff
            run.state = self._state = "warm-up"
        if phase == EXCITE:
            tau = ns - run.t0
            if tau < run.t_end_ns:
                run.n_excite += 1
                if run.ex_first < 0:
                    run.ex_first = ns
                elif ns - run.ex_last < run.ex_min_diff:
                    run.ex_min_diff = ns - run.ex_last
                run.ex_last = ns
                if tau >= run.t_warm_ns:
                    k = run.k
                    if k == 0:
                        run.state = self._state = "recording"
                    if k < run.t_ns.size:
                        run.t_ns[k] = ns
                        run.x[k] = x
                        run.v[k] = v
                        run.force[k] = -effort  # paper 003's sign: the force ON the sample
                        run.k = k + 1
                    else:
                        run.overflow += 1
                run.setpoint = run.excitation_setpoint(tau + run.min_diff)
                return run.setpoint
            run.phase = SETTLE
            run.state = self._state = "settling"
            run.settle_end = ns + _SETTLE_NS
            return run.setpoint
        if ns < run.settle_end:  # SETTLE: hold the last setpoint
            return run.setpoint
        run.phase = END
        self._eff_pub.publish(self._zero_msg)  # rest: motor off, the stage stays on friction
        run.done.set()
        return None

    def _abort(self, run: _Run, reason: str) -> None:
        """End the run now (lock held): zero effort, the reason kept for the result."""
        if run.phase == END:
            return None
        run.phase = END
        run.aborted = reason
        try:
            self._eff_pub.publish(self._zero_msg)
        except Exception:  # noqa: BLE001 - the context may be gone at shutdown
            pass
        run.done.set()
        return None

    def _on_accel(self, msg: Imu) -> None:
        run = self._run
        if run is None or run.phase != EXCITE:
            return
        a = msg.linear_acceleration.x
        if not math.isfinite(a):
            self._reject("accelerometer_non_finite", f"accelerometer: linear_acceleration.x "
                         f"is {a!r}")
            return
        st = msg.header.stamp
        ns = st.sec * 1_000_000_000 + st.nanosec
        k = run.k_imu
        if ns >= run.imu_from_ns and k < run.imu_a.size:
            run.imu_ns[k] = ns
            run.imu_a[k] = a
            run.k_imu = k + 1
            cov = msg.linear_acceleration_covariance[0]
            if cov > 0.0 and math.isfinite(cov):
                run.imu_cov_sum += cov
                run.imu_cov_n += 1

    def _on_stage_diag(self, msg: DiagnosticArray) -> None:
        run = self._run
        if run is None or run.phase not in (PREPARE, MOVE, EXCITE):
            return
        for st in msg.status:
            if st.name != self._stage_status:
                continue
            vals = {kv.key: kv.value for kv in st.values}
            run.stage_diags += 1
            flags = []
            if vals.get("at end stop") == "True":
                flags.append("the carriage at an end stop")
            states = vals.get("states published", "")
            if run.stage_diags > 1:  # counts of a period that began after the run started
                n_stop = vals.get("end-stop cycles this period", "0")
                if n_stop.isdigit() and int(n_stop) > 0:
                    flags.append(f"{n_stop} end-stop cycles")
                n_sat = vals.get("saturated cycles this period", "0")
                if n_sat.isdigit() and states.isdigit() and run.stage_states >= 0:
                    n = int(states) - run.stage_states
                    if n > 0 and int(n_sat) > run.max_saturation * n:
                        flags.append(f"the motor saturated in {n_sat} of {n} cycles (> "
                                     f"max_saturation {run.max_saturation:g})")
            run.stage_states = int(states) if states.isdigit() else -1
            if flags:
                with self._lock:
                    self._abort(run, f"the stage reports {', '.join(flags)}")

    # ------------------------------------------------------------------ runs
    def _start_service(self) -> None:
        """The Trigger service ``~/identify`` on a hidden helper node spun by its own executor
        thread: its callback waits for the run while this node's executor drives the stage."""
        # no global arguments: a command-line `-r __node:=...` must not rename the helper too
        helper = self._service_node = Node(f"_{self.get_name()}_service",
                                           namespace=self.get_namespace(),
                                           context=self.context, use_global_arguments=False,
                                           start_parameter_services=False)
        service = f"{self.get_fully_qualified_name()}/{names.IDENTIFY.removeprefix('~/')}"
        # reentrant: a call during a run is served by another thread of the executor's pool,
        # which answers "busy" at once (one thread would queue it behind the run)
        helper.create_service(Trigger, service, self._serve,
                              callback_group=ReentrantCallbackGroup())
        executor = self._service_executor = MultiThreadedExecutor(
            num_threads=_SERVICE_THREADS, context=self.context)
        executor.add_node(helper)

        def spin() -> None:
            failures = 0
            while not self._stopping and self.context.ok():
                try:
                    executor.spin_once(timeout_sec=0.1)
                    failures = 0
                except Exception as e:  # noqa: BLE001 - never die silently (module docstring)
                    if self._stopping or not self.context.ok():
                        break  # the context went away at shutdown
                    failures += 1
                    self._internal_error("service thread", e)
                    if failures >= _MAX_SERVICE_FAILURES:
                        self._fatal(f"service thread: {failures} failures in a row, the "
                                    f"identify service cannot serve; ending the node")
                        break
                    time.sleep(0.1)
            try:
                executor.remove_node(helper)
                executor.shutdown(timeout_sec=1.0)
            except Exception:  # noqa: BLE001 - at shutdown
                pass

        self._service_thread = threading.Thread(target=spin, name="friction_identifier-service",
                                                daemon=True)
        self._service_thread.start()

    def _serve(self, request: Trigger.Request, response: Trigger.Response):
        """The Trigger callback: :meth:`_on_identify`, and an answer whatever happens there (an
        exception in a pool thread of the executor would only surface calls later)."""
        try:
            return self._on_identify(request, response)
        except Exception as e:  # noqa: BLE001 - the caller always gets an answer
            self._internal_error("identify service", e)
            response.success = False
            response.message = f"failed: internal error {type(e).__name__}: {e}"
            return response

    def _on_identify(self, request: Trigger.Request, response: Trigger.Response):
        response.success, response.message = self.identify()
        return response

    def _identify_on_start(self) -> None:
        try:
            ok, _ = self.identify()
        except Exception as e:  # noqa: BLE001 - never die silently: end the node, status 1
            self._internal_error("start-up run", e)
            self._fatal(f"start-up run: internal error {type(e).__name__}: {e}")
            return
        v = self._values
        if v["exit_when_done"] or (v["exit_on_failure"] and not ok):
            self.exit_status = 0 if ok else 1
            self.finished = True

    def _guarded(self, where: str, callback, timer: bool = False):
        """``callback`` for the executor, with any unexpected exception reported
        (:meth:`_internal_error`) and a run in progress aborted to rest, instead of ending the
        executor's thread: the node goes on (the next message is handled as usual). One extra
        call per message; no allocation."""
        def fail(e: Exception) -> None:
            self._internal_error(where, e)
            self._abort_current(f"internal error in the {where}: {type(e).__name__}: {e}")

        if timer:  # no argument: rclpy passes a TimerInfo to a callback that takes one
            def run_timer() -> None:
                try:
                    callback()
                except Exception as e:  # noqa: BLE001 - never die silently (module docstring)
                    fail(e)
            return run_timer

        def run(msg) -> None:
            try:
                callback(msg)
            except Exception as e:  # noqa: BLE001 - never die silently (module docstring)
                fail(e)
        return run

    def _internal_error(self, where: str, e: BaseException) -> None:
        """An unexpected exception in a thread of this node: logged with its traceback and
        counted for /diagnostics (ERROR in the next report, the last one named there)."""
        text = f"{where}: {type(e).__name__}: {e}"
        self._internal_errors += 1
        self._internal_errors_period += 1
        self._internal_error_last = text
        try:
            tb = "".join(traceback.format_exception(type(e), e, e.__traceback__))
            self.get_logger().error(f"internal error in the {text}\n{tb}")
        except Exception:  # noqa: BLE001 - logging itself failed: stderr is left
            print(f"friction_identifier: internal error in the {text}", file=sys.stderr)

    def _fatal(self, text: str) -> None:
        """End the node with exit status 1 (main's loop watches ``finished``)."""
        try:
            self.get_logger().fatal(text)
        except Exception:  # noqa: BLE001
            print(f"friction_identifier: {text}", file=sys.stderr)
        self.exit_status = 1
        self.finished = True

    def identify(self) -> tuple[bool, str]:
        """One run (module docstring), blocking until it is over: (success, one-line summary).
        Call it from a thread that does not run the control path."""
        if not self._busy.acquire(blocking=False):
            return False, f"busy: a run is in progress ({self._state})"
        try:
            self._runs += 1
            self._reason = ""
            self._trust = ""
            try:
                ok, text = self._identify(dict(self._values), self._runs)
            except Exception as e:  # noqa: BLE001 - report, never leave the caller hanging
                ok, text = False, f"failed: internal error {type(e).__name__}: {e}"
                self._internal_error(f"run {self._runs}", e)
                self._abort_current("internal error")
            self._state = "done" if ok else text.partition(" ")[0].rstrip(":")
            if self._state not in ("refused", "aborted"):
                self._state = "failed" if not ok else self._state
            self._reason = "" if ok else text
            self._summary = text
            try:
                self._write_results(ok=ok, summary=text)
            except Exception as e:  # noqa: BLE001 - a context going away at shutdown
                self.get_logger().error(f"result parameters not written: {e}")
            # one severity per call site: rclpy refuses a call site that changes its severity
            # (ValueError "Logger severity cannot be changed between calls")
            if ok:
                self.get_logger().info(f"run {self._runs}: {text}")
            else:
                self.get_logger().error(f"run {self._runs}: {text}")
            return ok, text
        finally:
            self._busy.release()

    def _abort_current(self, reason: str) -> None:
        run = self._run
        if run is not None:
            with self._lock:
                self._abort(run, reason)

    def _wait_for_stage(self, timeout: float) -> bool:
        end = time.monotonic() + timeout
        while not self._stopping:
            last = self._last_valid_mono
            if last is not None and time.monotonic_ns() - last < timeout * 1e9:
                return True
            if time.monotonic() >= end:
                return False
            time.sleep(0.01)
        return False

    def _identify(self, v: dict, number: int):
        """The run: (success, one-line summary)."""
        self._state = "waiting for the stage"
        if not self._wait_for_stage(v["stage_timeout"]):
            why = (f"; last rejected joint_states: {self._rejected_latest}"
                   if self._rejected_latest else "")
            return False, (f"refused: no valid joint_states for joint {self._joint!r} on "
                           f"{self.resolve_topic_name(names.JOINT_STATES)} within stage_timeout"
                           f" = {v['stage_timeout']:g} s (is the stage running?){why}")
        x_start = self._last_x
        try:
            exc = check_excitation(v, x_start)
        except ValueError as e:
            return False, f"refused: {e}"
        notes = []
        if v["push_to_renderer"]:
            self._state = "handing over"
            err = self._set_renderer_output(v, False)
            notes.append(f"renderer {self._renderer}: " + (err or "output disabled"))
            if err:
                self.get_logger().warning(f"renderer {self._renderer}: {err}; going on")
        run = _Run(v, exc, x_start, number)
        self._state = "moving"
        with self._lock:
            self._run = run  # the control path takes over from the next state
            # answer the latest state with a hold where the stage is (a lockstep stage waits
            # for a command to step; in realtime it is the servo's bumpless start)
            self._pos_data[0] = x_start
            self._pos_pub.publish(self._pos_msg)
        started = time.monotonic_ns()
        while not run.done.wait(0.02):
            last = max(self._last_valid_mono or 0, started)
            age = (time.monotonic_ns() - last) * 1e-9
            reason = ("node shutting down" if self._stopping else
                      f"lost data: no valid joint_states for {age:.3g} s (> data_timeout "
                      f"{v['data_timeout']:g} s)" if age > v["data_timeout"] else "")
            if reason:
                self._abort_current(reason)
        missed, span = run.missed()
        lost = [f"{missed} of {span} excitation states not answered (the stage ran ahead)"
                ] if missed else []
        if run.aborted:
            tail = ["renderer left with output disabled"] if v["push_to_renderer"] else []
            return False, "; ".join([f"aborted ({run.state}): {run.aborted}", "the stage was "
                                     "commanded to rest (zero effort)"] + tail + lost)
        notes += lost
        if run.overflow:
            notes.append(f"{run.overflow} states not recorded (buffer full)")
        self._state = "fitting"
        return self._fit_and_hand_over(v, run, notes)

    def _recording(self, v: dict, run: _Run) -> tuple[Recording, list[str], dict]:
        """The record as a Recording (accelerometer matched by stamp), notes, EIV noise."""
        k = run.k
        t_ns, x, vel, force = run.t_ns[:k], run.x[:k], run.v[:k], run.force[:k]
        a = None
        noise = {}
        topic = self.resolve_topic_name(names.ACCELEROMETER)
        if run.k_imu:
            imu_ns, imu_a = run.imu_ns[:run.k_imu], run.imu_a[:run.k_imu]
            order = np.argsort(imu_ns, kind="stable")
            imu_ns, imu_a = imu_ns[order], imu_a[order]
            idx = np.minimum(np.searchsorted(imu_ns, t_ns), imu_ns.size - 1)
            ok = imu_ns[idx] == t_ns
            if ok.any():
                t_ns, x, vel, force = t_ns[ok], x[ok], vel[ok], force[ok]
                a = imu_a[idx[ok]]
                note = f"accelerometer {topic} ({int(ok.sum())} of {k} states matched by stamp)"
                if run.imu_cov_n:
                    noise["accel"] = run.imu_cov_sum / run.imu_cov_n
            else:
                note = (f"accelerometer stamps on {topic} never matched joint_states: "
                        "acceleration derived from the velocity (4-point central difference)")
        else:
            note = (f"no accelerometer on {topic}: acceleration derived from the velocity "
                    "(4-point central difference)")
        if v["accel_variance"] > 0.0:
            noise["accel"] = v["accel_variance"]
        if v["vel_variance"] > 0.0:
            noise["vel"] = v["vel_variance"]
        t = (t_ns - (t_ns[0] if t_ns.size else 0)) * 1e-9
        rec = Recording(t, x, vel, force, a, joint=self._joint,
                        source=f"{self.get_fully_qualified_name()} run {run.number}: "
                               f"{self.resolve_topic_name(names.JOINT_STATES)}"
                               + (f" + {topic}" if a is not None else ""),
                        noise=dict(noise) or None)
        notes = [note]
        gaps = rec.gap_note()
        if gaps:
            notes.append(f"record: {gaps}")
        return rec, notes, noise

    def _fit_and_hand_over(self, v: dict, run: _Run, notes: list[str]):
        method = v["method"]
        try:
            rec, more, noise = self._recording(v, run)
        except ValueError as e:
            return False, f"failed: the record cannot be fitted: {e}"
        notes = more + notes
        fits, errors = {}, {}
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for m in ("eiv", "ols"):
                try:
                    fits[m] = rec.fit(m, dv=v["dv"] or None, noise=noise or None)
                except ValueError as e:
                    errors[m] = str(e)
            fit = fits.get(method)
            if fit is None:
                return False, f"failed: fit ({method}) of {len(rec)} samples: {errors[method]}"
            kw = dict(K=v["render_K"], B=v["render_B"], dt=v["render_dt"],
                      mass=v["render_mass"] or None)
            try:
                params = renderer_parameters(fit, self._joint, **kw)
            except ValueError as e:
                return False, f"failed: renderer parameters of the fit: {e}"
            self._fits = fits
            self._write_results(fit)  # the estimates, before the renderer has them
            # the CSV carries the noise variances this EIV fit used (the Imu covariance, ...):
            # `fric identify` on it then makes the same correction (not a re-estimate from data)
            used = fits.get("eiv", fit).noise
            rec.noise = dict(used) if used else rec.noise
            files = self._write_files(v, rec, fits, fit, kw)
        notes += [str(w.message) for w in caught
                  if not issubclass(w.category, (DeprecationWarning, ResourceWarning))]
        for m, e in errors.items():
            notes.append(f"{m} fit failed: {e}")
        summary = self._estimates_line(fit, fits, len(rec))
        self._trust = rec.trust_problem()
        if self._trust:
            notes.insert(0, self._trust)
            self.get_logger().warning(f"run {run.number}: {self._trust}")
        ok = True
        if files:
            notes.append(files)
        if v["push_to_renderer"]:
            self._state = "pushing"
            err = self._push(v, params)
            if err:
                ok = False
                notes.append(f"hand-over to {self._renderer} failed: {err}")
            else:
                notes.append(f"pushed to {self._renderer} (output enabled)")
        head = "identified" if ok else "identified, but"
        return ok, f"{head}: {summary}; " + "; ".join(notes)

    @staticmethod
    def _estimates_line(fit, fits: dict, n: int) -> str:
        def pm(f, k, fmt):
            return f"{k} {getattr(f, k):{fmt}}±{f.std.get(k, math.nan):.2g}"
        parts = [pm(fit, "m", ".4f") + " kg", pm(fit, "Cp", ".4f"), pm(fit, "Cn", ".4f") + " N",
                 pm(fit, "bp", ".3f"), pm(fit, "bn", ".3f") + " N·s/m",
                 f"Dp {fit.Dp:.3f}, Dn {fit.Dn:.3f} N, dv {fit.dv:.4g} m/s"]
        other = [f"{m} m {f.m:.4f} kg" for m, f in fits.items() if f is not fit]
        return f"{fit.method} ({n} samples): " + ", ".join(parts) + \
            (f" ({', '.join(other)})" if other else "")

    def _write_files(self, v: dict, rec: Recording, fits: dict, fit, kw: dict) -> str:
        out = v["output_dir"]
        if not out:
            return ""
        d = Path(out)
        try:
            d.mkdir(parents=True, exist_ok=True)
            write_csv(rec, d / "recording.csv")
            node = self._renderer.rpartition("/")[2]
            (d / f"{node}.yaml").write_text(fit_to_yaml(fit, self._joint, node=node,
                                                        source=rec.source, **kw),
                                            encoding="utf-8")
            write_report(rec, fits, d, title=f"Friction identification: {self._joint}, run "
                                             f"{self._runs}")
        except (OSError, ValueError) as e:
            return f"files not written to {out}: {e}"
        return f"files in {os.path.abspath(out)}"

    # ------------------------------------------------------------------ renderer hand-over
    def _call(self, client, request, timeout: float):
        """(response, error text): waits for the service, then for the answer."""
        end = time.monotonic() + timeout
        while not client.service_is_ready():
            if time.monotonic() >= end or self._stopping:
                return None, f"no parameter service {client.srv_name} within " \
                             f"renderer_timeout = {timeout:g} s"
            time.sleep(0.02)
        fut = client.call_async(request)
        while not fut.done():
            if time.monotonic() >= end or self._stopping:
                client.remove_pending_request(fut)
                return None, f"no answer from {client.srv_name} within renderer_timeout = " \
                             f"{timeout:g} s"
            time.sleep(0.005)
        return fut.result(), ""

    def _set_renderer_output(self, v: dict, enabled: bool) -> str:
        req = SetParameters.Request()
        req.parameters = [Parameter("output_enabled", value=enabled).to_parameter_msg()]
        res, err = self._call(self._set_client, req, v["renderer_timeout"])
        if res is None:
            return err
        r = res.results[0] if res.results else None
        if r is None or not r.successful:
            return f"rejected output_enabled: {r.reason if r else 'no result'}"
        return ""

    def _push(self, v: dict, params: dict) -> str:
        req = SetParametersAtomically.Request()
        req.parameters = [Parameter(k, value=val).to_parameter_msg()
                          for k, val in params.items()]
        req.parameters.append(Parameter("output_enabled", value=True).to_parameter_msg())
        res, err = self._call(self._set_atomic_client, req, v["renderer_timeout"])
        if res is None:
            return err
        if not res.result.successful:
            return f"the renderer rejected the law: {res.result.reason}"
        return ""

    # ------------------------------------------------------------------ diagnostics
    def diagnostic_status(self) -> DiagnosticStatus:
        """The identifier's status (published on /diagnostics)."""
        run = self._run
        state = run.state if run is not None and run.phase != END and self._busy.locked() \
            else self._state
        kv = [("state", state), ("joint", self._joint), ("runs", str(self._runs)),
              ("accepted joint_states", str(self._accepted)),
              ("renderer", self._renderer if self._values["push_to_renderer"] else "none")]
        if run is not None:
            kv += [("recorded samples", str(run.k)), ("accelerometer samples", str(run.k_imu))]
        if self._reason:
            kv.append(("reason", self._reason))
        if self._summary:
            kv.append(("last result", self._summary))
        for m, f in self._fits.items():
            for p in RESULT_PARAMS + ("dv",):
                sd = f.std.get(p, math.nan)
                kv.append((f"{m} {p}", f"{getattr(f, p):.5g}"
                           + (f" ± {sd:.2g}" if math.isfinite(sd) else "")))
        kv.append(("rejected inputs", str(sum(self._rejected.values()))))
        for reason in sorted(self._rejected):
            kv += [(f"rejected {reason}", str(self._rejected[reason])),
                   (f"rejected {reason} last", self._rejected_last[reason])]
        problems = []
        level = DiagnosticStatus.OK
        if state in ("aborted", "failed", "refused"):
            level = DiagnosticStatus.ERROR if state != "refused" else DiagnosticStatus.WARN
            problems.append(self._reason)
        if self._trust and state == "done":
            level = max(level, DiagnosticStatus.WARN)
            problems.append(f"last run {self._trust}")
        if self._rejected_period:
            level = max(level, DiagnosticStatus.WARN)
            problems.append(f"{self._rejected_period} rejected inputs, last: "
                            f"{self._rejected_latest}")
        self._rejected_period = 0
        kv.append(("internal errors", str(self._internal_errors)))
        if self._internal_errors:
            kv.append(("internal errors last", self._internal_error_last))
        if self._internal_errors_period or (self.finished and self.exit_status):
            level = DiagnosticStatus.ERROR
            problems.append(f"internal error: {self._internal_error_last}")
        self._internal_errors_period = 0
        return status(f"{self.get_fully_qualified_name()}: identification", self._joint, level,
                      problems, state, kv)

    def _publish_diagnostics(self) -> None:
        msg = DiagnosticArray()
        msg.header.stamp = self.get_clock().now().to_msg()
        msg.status = [self.diagnostic_status()]
        self._diag_pub.publish(msg)

    # ------------------------------------------------------------------ shutdown
    def stop(self) -> None:
        """Abort a run in progress (zero effort) and wait briefly for the run and service
        threads."""
        self._stopping = True
        self._abort_current("node shutting down")
        for t in (self._on_start_thread, self._service_thread):
            if t is not None and t.is_alive():
                t.join(timeout=10.0)

    def destroy_node(self):
        self._stopping = True
        if self._service_thread is not None and self._service_thread.is_alive():
            self._service_thread.join(timeout=5.0)
        if self._service_node is not None:
            self._service_node.destroy_node()
            self._service_node = None
        return super().destroy_node()


def main(args=None) -> int:
    """Run the node until Ctrl-C/SIGTERM (or, with exit_when_done/exit_on_failure, the end of the
    identify_on_start run: status 0 on success, 1 on failure); 1 on bad parameters.

    ``--executor events|single`` as every fric node (module docstring: the service has its own
    thread)."""
    outcome = {"status": 0}

    def on_stop(node: FrictionIdentifier, context_ok: bool) -> None:
        node.stop()
        if context_ok:
            sleep_ok(0.05)  # let the reliable writers hand the last command over
        outcome["status"] = node.exit_status
        node.get_logger().info(f"stopped after {node._runs} run(s)")

    rc = run_node(FrictionIdentifier, names.FRICTION_IDENTIFIER, args,
                  done=lambda n: n.finished, on_stop=on_stop)
    return rc or outcome["status"]


if __name__ == "__main__":
    sys.exit(main())
