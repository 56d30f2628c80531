"""``friction_identifier``: identifies a sample's mass and friction on the haptic stage, as paper
003 (Richard, Cutkosky & MacLean) does, and hands the identified law to a ``friction_renderer``.

Wiring only. The run (hold, move to the centre, the paper's excitation, settle; the record; the
aborts) is :class:`fric_core.haptics.procedure.IdentificationRun`, which the joint_states
subscription drives: each state in, its setpoint (or zero effort) out. The fit is paper 003's
eq. (5) OLS and eq. (6) EIV (:func:`fric_core.haptics.procedure.fit_record`). This node reads the
parameters (:mod:`fric_interfaces.identifier_params`), serves the Trigger ``~/identify`` (a call
during a run is answered "busy" at once), hands the stage over from and back to the renderer,
writes the files, the ``result.*`` parameters and /diagnostics; no thread dies silently.

The full specification (checks, hand-over, aborts, outputs, threads, failures, hot path):
docs/friction_identifier.md.
"""

from __future__ import annotations

import math
import sys
import threading
import time
import warnings
from array import array

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from rcl_interfaces.msg import SetParametersResult
from rcl_interfaces.srv import SetParameters, SetParametersAtomically
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rclpy.parameter import Parameter
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import Float64MultiArray
from std_srvs.srv import Trigger

from fric_core.haptics.procedure import (END, EXCITE, MOVE, PREPARE, SETTLE,  # noqa: F401
                                         IdentificationRun, estimates_line, fit_record,
                                         write_run_files)
from fric_core.haptics.renderer_yaml import renderer_parameters
from fric_interfaces import names, qos
from fric_interfaces.conversions import InputError, JointStateReader
from fric_interfaces.identifier_params import (LIVE, RESULT_PARAMS, RESULT_SPECS, SPECS,
                                               travel_band, validate)
from fric_interfaces.parameters import descriptor
from fric_nodes.builders import check_excitation

from ._node_util import (FricNode, Housekeeping, InternalErrors, RejectLog, ServiceThread,
                         declare_params, guarded, rejected_change, run_node, sleep_ok, status,
                         unused_overrides)

__all__ = ["FrictionIdentifier", "main"]

#: the Trigger service's executor threads: one may wait for a run, another answers "busy"
_SERVICE_THREADS = 2
#: the service thread ends the node (status 1) after this many exceptions in a row
_MAX_SERVICE_FAILURES = 10
# the run's first hold is said again when no state came back this long: a hold lost while DDS
# discovery was still matching would otherwise leave a lockstep stage and this node waiting for
# each other until data_timeout; long beside any loopback delay (a resend that overtook a late
# answer would shift a lockstep run by one step), short beside data_timeout
_HOLD_RESEND_NS = 500_000_000


def _resolve(node: Node, name: str) -> str:
    """A node name relative to ``node``'s namespace (absolute names unchanged)."""
    if name.startswith("/"):
        return name
    return f"{node.get_namespace().rstrip('/')}/{name}"


class FrictionIdentifier(FricNode):
    """The identification node (docs/friction_identifier.md). ``kwargs`` go to ``Node``."""

    default_name = names.FRICTION_IDENTIFIER
    # threads (set in _setup; stop/destroy_node look at them)
    _on_start_thread: threading.Thread | None = None
    _service: ServiceThread | None = None
    _stopping = False

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
        self._run: IdentificationRun | None = None
        self._runs = 0
        self._state = "idle"
        self._reason = ""
        self._summary = ""
        self._fits: dict = {}
        self.finished = False  # exit_when_done / exit_on_failure / a fatal error: main exits
        self.exit_status = 0
        self._trust = ""  # the last fit's record lost too much to trust it (else "")
        self._errors = InternalErrors(self.get_logger(), names.FRICTION_IDENTIFIER)
        # control-path state
        self._reader = JointStateReader([self._joint], ("position", "velocity", "effort"))
        self._last_x = math.nan
        self._last_valid_mono: int | None = None
        self._accepted = 0
        self._rejects = RejectLog(self.get_logger())
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
                                        self._housekeeping.timer(self.publish_diagnostics),
                                        timer=True),
                          clock=Clock(clock_type=ClockType.STEADY_TIME))
        self.add_on_set_parameters_callback(self._on_set_parameters)
        # ~/identify blocks until the run is over: its own thread, a "busy" answer meanwhile
        self._service = ServiceThread(
            self, Trigger, lambda req, res: self._on_identify(req, res), self._errors,
            name=names.IDENTIFY.removeprefix("~/"), stopping=lambda: self._stopping,
            on_fatal=self._fatal, threads=_SERVICE_THREADS, max_failures=_MAX_SERVICE_FAILURES)
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
            reason = rejected_change(self._specs, LIVE, p)
            if reason:
                return SetParametersResult(successful=False, reason=reason)
            if p.name in self._specs:
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
    def _on_joint_state(self, msg: JointState) -> None:
        st = msg.header.stamp
        ns = st.sec * 1_000_000_000 + st.nanosec
        try:
            self._reader.read(msg)
        except InputError as e:
            self._rejects.add(e.kind, f"joint_states: {e}")
            return
        run = self._run
        active = run is not None and run.phase != END
        if active and ns <= run.prev_ns:
            self._rejects.add("stamp_not_increasing", f"joint_states: stamp {ns} ns is not "
                              f"after the last one {run.prev_ns} ns")
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

    def _step(self, run: IdentificationRun, ns: int, x: float, v: float,
              effort: float) -> float | None:
        """One state for the run (lock held): the position setpoint, or None when the run
        ended (zero effort published). ``effort`` is the force on the stage (haptic_stage's
        sign): the run gets paper 003's, the force on the sample."""
        out = run.step(ns, x, v, -effort)
        if isinstance(out, float):
            return out
        self._rest()
        return None

    def _rest(self) -> None:
        """Zero effort: the motor off, the stage rests on its friction."""
        try:
            self._eff_pub.publish(self._zero_msg)
        except Exception:  # noqa: BLE001 - the context may be gone at shutdown
            pass

    def _abort_current(self, reason: str) -> None:
        run = self._run
        if run is not None:
            with self._lock:
                if run.abort(reason) is not None:
                    self._rest()

    def _on_accel(self, msg: Imu) -> None:
        run = self._run
        if run is None or run.phase != EXCITE:
            return
        a = msg.linear_acceleration.x
        if not math.isfinite(a):
            self._rejects.add("accelerometer_non_finite", f"accelerometer: "
                              f"linear_acceleration.x is {a!r}")
            return
        st = msg.header.stamp
        run.accel(st.sec * 1_000_000_000 + st.nanosec, a, msg.linear_acceleration_covariance[0])

    def _on_stage_diag(self, msg: DiagnosticArray) -> None:
        run = self._run
        if run is None or run.phase not in (PREPARE, MOVE, EXCITE):
            return
        for st in msg.status:
            if st.name != self._stage_status:
                continue
            vals = {kv.key: kv.value for kv in st.values}

            def count(key: str) -> int | None:
                text = vals.get(key, "")
                return int(text) if text.isdigit() else None

            with self._lock:
                if run.stage_report(vals.get("at end stop") == "True",
                                    count("end-stop cycles this period"),
                                    count("saturated cycles this period"),
                                    count("states published")) is not None:
                    self._rest()

    # ------------------------------------------------------------------ runs
    def _on_identify(self, request: Trigger.Request, response: Trigger.Response):
        response.success, response.message = self.identify()
        return response

    def _identify_on_start(self) -> None:
        try:
            ok, _ = self.identify()
        except Exception as e:  # noqa: BLE001 - never die silently: end the node, status 1
            self._errors.add("start-up run", e)
            self._fatal(f"start-up run: internal error {type(e).__name__}: {e}")
            return
        v = self._values
        if not self._stopping and (v["exit_when_done"] or (v["exit_on_failure"] and not ok)):
            self.exit_status = 0 if ok else 1
            self.finished = True

    def _guarded(self, where: str, callback, timer: bool = False):
        """``callback`` for the executor (:func:`guarded`): an unexpected exception is reported
        and a run in progress aborted to rest; the node goes on."""
        def fail(e: Exception) -> None:
            self._errors.add(where, e)
            self._abort_current(f"internal error in the {where}: {type(e).__name__}: {e}")
        return guarded(callback, fail, timer)

    def _fatal(self, text: str) -> None:
        """End the node with exit status 1 (main's loop watches ``finished``)."""
        self._errors.fatal(text)
        self.exit_status = 1
        self.finished = True

    def identify(self) -> tuple[bool, str]:
        """One run (docs/friction_identifier.md), blocking until it is over: (success, one-line
        summary). Call it from a thread that does not run the control path."""
        if not self._busy.acquire(blocking=False):
            return False, f"busy: a run is in progress ({self._current_state()})"
        try:
            self._runs += 1
            self._reason = ""
            self._trust = ""
            try:
                ok, text = self._identify(dict(self._values), self._runs)
            except Exception as e:  # noqa: BLE001 - report, never leave the caller hanging
                ok, text = False, f"failed: internal error {type(e).__name__}: {e}"
                self._errors.add(f"run {self._runs}", e)
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
            latest = self._rejects.latest
            why = f"; last rejected joint_states: {latest}" if latest else ""
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
        run = IdentificationRun(exc, x_start, travel_band(v), move_speed=v["move_speed"],
                                tracking_limit=v["tracking_limit"],
                                max_saturation=v["max_saturation"])
        self._state = "moving"
        with self._lock:
            self._run = run  # the control path takes over from the next state
            # answer the latest state with a hold where the stage is (a lockstep stage waits
            # for a command to step; in realtime it is the servo's bumpless start)
            self._pos_data[0] = x_start
            self._pos_pub.publish(self._pos_msg)
        started = sent = time.monotonic_ns()
        while not run.done.wait(0.02):
            now = time.monotonic_ns()
            if (self._last_valid_mono or 0) <= started and now - sent > _HOLD_RESEND_NS:
                # no state since the hold: it (or the stage's answer) may have been lost while
                # discovery was still matching the endpoints, and a lockstep stage waits for a
                # command to step: say it again rather than both sides waiting out a timeout
                with self._lock:
                    if (self._last_valid_mono or 0) <= started:
                        self._pos_pub.publish(self._pos_msg)
                sent = now
            last = max(self._last_valid_mono or 0, started)
            age = (time.monotonic_ns() - last) * 1e-9
            reason = ("node shutting down" if self._stopping else
                      f"lost data: no valid joint_states for {age:.3g} s (> data_timeout "
                      f"{v['data_timeout']:g} s)" if age > v["data_timeout"] else "")
            if reason:
                self._abort_current(reason)
        with self._lock:  # the control path has commanded rest
            self._state = run.state
        if run.aborted:
            tail = ["renderer left with output disabled"] if v["push_to_renderer"] else []
            return False, "; ".join([f"aborted ({run.state}): {run.aborted}", "the stage was "
                                     "commanded to rest (zero effort)"] + tail + run.notes())
        notes += run.notes()
        self._state = "fitting"
        return self._fit_and_hand_over(v, run, number, notes)

    def _fit_and_hand_over(self, v: dict, run: IdentificationRun, number: int,
                           notes: list[str]):
        method = v["method"]
        accel = self.resolve_topic_name(names.ACCELEROMETER)
        try:
            rec, more, noise = run.recording(
                joint=self._joint, accel_source=accel, accel_variance=v["accel_variance"],
                vel_variance=v["vel_variance"],
                source=f"{self.get_fully_qualified_name()} run {number}: "
                       f"{self.resolve_topic_name(names.JOINT_STATES)}")
        except ValueError as e:
            return False, f"failed: the record cannot be fitted: {e}"
        notes = more + notes
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fits, errors = fit_record(rec, dv=v["dv"] or None, noise=noise or None)
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
            files = write_run_files(v["output_dir"], rec, fits, fit,
                                    node=self._renderer.rpartition("/")[2],
                                    title=f"Friction identification: {self._joint}, run "
                                          f"{self._runs}", **kw)
        notes += [str(w.message) for w in caught
                  if not issubclass(w.category, (DeprecationWarning, ResourceWarning))]
        for m, e in errors.items():
            notes.append(f"{m} fit failed: {e}")
        summary = estimates_line(fit, fits, len(rec))
        self._trust = rec.trust_problem()
        if self._trust:
            notes.insert(0, self._trust)
            self.get_logger().warning(f"run {number}: {self._trust}")
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
        state = self._current_state()
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
        kv += self._rejects.key_values()
        problems = []
        level = DiagnosticStatus.OK
        if state in ("aborted", "failed", "refused"):
            level = DiagnosticStatus.ERROR if state != "refused" else DiagnosticStatus.WARN
            problems.append(self._reason)
        if self._trust and state == "done":
            level = max(level, DiagnosticStatus.WARN)
            problems.append(f"last run {self._trust}")
        rejected = self._rejects.period_problem()
        if rejected:
            level = max(level, DiagnosticStatus.WARN)
            problems.append(rejected)
        kv += self._errors.key_values()
        internal = self._errors.period_problem(failed=self.finished and bool(self.exit_status))
        if internal:
            level = DiagnosticStatus.ERROR
            problems.append(internal)
        return status(f"{self.get_fully_qualified_name()}: identification", self._joint, level,
                      problems, state, kv)

    def _current_state(self) -> str:
        """The run's own state while it drives the stage, else the node's."""
        run = self._run
        if run is not None and run.phase != END and self._busy.locked():
            return run.state
        return self._state

    # ------------------------------------------------------------------ shutdown
    def stop(self) -> None:
        """Abort a run in progress (zero effort) and wait briefly for the run and service
        threads."""
        self._stopping = True
        self._abort_current("node shutting down")
        for t in (self._on_start_thread, self._service and self._service.thread):
            if t is not None and t.is_alive():
                t.join(timeout=10.0)

    def destroy_node(self):
        self._stopping = True
        if self._service is not None:
            self._service.destroy()
        return super().destroy_node()


def main(args=None) -> int:
    """Run the node until Ctrl-C/SIGTERM (or, with exit_when_done/exit_on_failure, the end of the
    identify_on_start run: status 0 on success, 1 on failure); 1 on bad parameters.

    ``--executor events|single`` as every fric node (the service has its own thread)."""
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
