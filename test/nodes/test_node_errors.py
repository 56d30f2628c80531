"""The shared "no thread dies silently" helpers of fric_nodes._node_util, without a node:
InternalErrors (count, log, diagnostics key/values and period), guarded (a callback's exception
goes to ``fail``, the next call runs as usual) and rejected_change (live parameter changes)."""

from __future__ import annotations

from types import SimpleNamespace

from fric_interfaces.parameters import ParamSpec
from fric_nodes._node_util import InternalErrors, guarded, rejected_change


class _Logger:
    def __init__(self, broken=False):
        self.lines = []
        self.broken = broken

    def error(self, text):
        if self.broken:
            raise ValueError("logger gone")
        self.lines.append(("error", text))

    def fatal(self, text):
        if self.broken:
            raise ValueError("logger gone")
        self.lines.append(("fatal", text))


def test_internal_errors_count_log_and_report_once_per_period():
    log = _Logger()
    errors = InternalErrors(log, "prog")
    assert errors.key_values() == [("internal errors", "0")]
    assert errors.period_problem() is None
    assert errors.period_problem(failed=True) == "internal error: "
    try:
        1 / 0
    except ZeroDivisionError as e:
        errors.add("service thread", e)
    assert errors.count == 1
    assert errors.last == "service thread: ZeroDivisionError: division by zero"
    level, text = log.lines[0]
    assert level == "error" and text.startswith("internal error in the service thread: ")
    assert "Traceback" in text and "1 / 0" in text
    assert errors.key_values() == [("internal errors", "1"), ("internal errors last", errors.last)]
    assert errors.period_problem() == f"internal error: {errors.last}"
    assert errors.period_problem() is None  # reported once
    errors.fatal("ending")
    assert log.lines[-1] == ("fatal", "ending")


def test_internal_errors_fall_back_to_stderr_when_logging_fails(capsys):
    errors = InternalErrors(_Logger(broken=True), "prog")
    errors.add("timer", RuntimeError("boom"))
    errors.fatal("ending")
    assert capsys.readouterr().err.splitlines() == [
        "prog: internal error in the timer: RuntimeError: boom", "prog: ending"]
    assert errors.count == 1


def test_guarded_hands_the_exception_to_fail_and_goes_on():
    seen, failed = [], []

    def callback(msg):
        if msg == "bad":
            raise KeyError(msg)
        seen.append(msg)

    run = guarded(callback, failed.append)
    for msg in ("a", "bad", "b"):
        run(msg)
    assert seen == ["a", "b"] and [type(e) for e in failed] == [KeyError]
    ticks = []
    tick = guarded(lambda: ticks.append(1) or 1 / len(ticks[1:]), failed.append, timer=True)
    tick()
    tick()
    assert len(ticks) == 2 and [type(e) for e in failed] == [KeyError, ZeroDivisionError]


def test_rejected_change_names_the_parameter_and_the_reason():
    specs = {"gain": ParamSpec("gain", 1.0, "a gain", min=0.0),
             "joint": ParamSpec("joint", "j", "the joint")}
    live = {"gain"}

    def p(name, value):
        return SimpleNamespace(name=name, value=value)

    assert rejected_change(specs, live, p("gain", 2.0)) is None
    assert rejected_change(specs, live, p("other", 2.0)) is None
    assert rejected_change(specs, live, p("joint", "k")) == "joint: read-only"
    reason = rejected_change(specs, live, p("gain", -1.0))
    assert reason is not None and reason.startswith("gain: ")


def test_known_signature_keeps_the_callback_and_its_signature():
    """Timer callbacks get a precomputed ``__signature__`` (rclpy inspects it every tick): the
    wrapped callback is called the same way, a ``TimerInfo`` parameter is still visible to
    rclpy's check, and one that already has a signature is returned as it is."""
    import inspect

    from rclpy.timer import TimerInfo

    from fric_nodes._node_util import known_signature

    calls = []

    class Owner:
        def tick(self):
            calls.append("tick")
            return 7

        def with_info(self, info: TimerInfo):
            calls.append(info)

    o = Owner()
    cb = known_signature(o.tick)
    assert cb() == 7 and calls == ["tick"]
    assert inspect.signature(cb) == inspect.signature(o.tick)
    assert "__signature__" in cb.__dict__
    assert known_signature(cb) is cb and known_signature(None) is None
    cb2 = known_signature(o.with_info)
    # the callback's own parameter, annotation and all (rclpy compares it with TimerInfo)
    assert inspect.signature(cb2) == inspect.signature(o.with_info)
    assert list(inspect.signature(cb2).parameters) == ["info"]
    cb2(info="x")
    assert calls[-1] == "x"
