"""The haptic stage node's parts that run without a node (no rclpy.init): the serial host's
device timeline (fric_nodes.hardware.device_timeline) and the /diagnostics builder over the
node's state groups (fric_nodes.stage_diagnostics)."""

from fric_nodes.hardware.device_timeline import DeviceTimeline
from fric_nodes.hardware.serial_link import SerialLink
from fric_nodes.hardware.stage_protocol import Mode, StateFrame, Status
from fric_nodes.stage_diagnostics import (ERROR, OK, WARN, CommandState, LockstepState,
                                          RealtimeState, Stats, stage_status, summary)

MS = 1_000_000


def _frame(seq, t_ms, ack=0, status=0):
    return StateFrame(seq, t_ms * 1000, 0.001, 0.0, 0.5, 0.0, 0.0, ack, status, time=t_ms * 1e-3)


def test_device_timeline_stamps_reconnects_late_cycles_and_flags():
    tl = DeviceTimeline(period_ns=MS, window=3)
    # stamps: device time + the smallest receive latency seen (2 ms, then 1 ms)
    f, stage, stamp = tl.take([_frame(10, 100)], 1, 102 * MS, 0, False, None, False)
    assert (f.seq, stage, stamp) == (10, 0, 102 * MS)
    _, stage, stamp = tl.take([_frame(11, 101)], 1, 102 * MS, stage, True, None, False)
    assert (stage, stamp) == (1 * MS, 102 * MS)
    # a batch of three: the newest is taken, two counted as skipped; commanding, no answer to
    # the previous state in time: the two unseen frames and this one are late
    f, stage, _ = tl.take([_frame(12, 102), _frame(13, 103), _frame(14, 104)], 1, 106 * MS,
                          stage, True, None, True)
    assert f.seq == 14 and stage == 4 * MS and tl.skipped == 2
    assert tl.late == 3 and tl.late_first == 4 * MS
    # the answer (seq 7) applied in the next frame (ack 7): not late
    tl.take([_frame(15, 105, ack=7)], 1, 106 * MS, stage, True, 7, True)
    assert tl.late == 3
    # device flags counted; FAULT is the newest frame's
    tl.take([_frame(16, 106, status=Status.TIMEOUT | Status.FAULT)], 1, 107 * MS, stage, True,
            None, False)
    assert (tl.timeouts, tl.faults, tl.rx_errors, tl.fault) == (1, 1, 0, True)
    # a reconnection (device time restarts): stage time goes on one period after the last state
    _, stage2, _ = tl.take([_frame(0, 0)], 2, 200 * MS, 6 * MS, True, None, True)
    assert stage2 == 7 * MS and not tl.fault


def test_stage_status_sim_realtime_and_new_period():
    class Sim:
        solver_unconverged = 0

    v = dict(backend="sim", sync="realtime", joint_name="stage_joint", rate=1000.0,
             sample="brass", hand_script="", hand_location="carriage", hand_start="immediately",
             carriage_friction=None, sim_dt=0.001, max_force=10.0, command_timeout=0.1)
    stats, cmd, rt = Stats(published=100, published_period=100), CommandState(), RealtimeState()
    stats.count(saturated=True, at_limit=False)
    rt.overruns = rt.overruns_period = 2
    rejects = _rejects()
    rejects.add("non_finite", "data[0] is nan")
    level, problems, ok, kv = stage_status(
        v, stats, cmd, rejects, elapsed=0.101, last=None, finished=False, hand_waiting=False,
        accelerometer=True, sim=Sim(), spc=1, realtime=rt)
    kv = dict(kv)
    assert ok == "sim, realtime" and kv["rate [Hz]"] == "1000.0"
    assert kv["cycle overruns this period"] == "2" and kv["rejected non_finite"] == "1"
    assert problems == ["2 cycle overruns", "motor force saturated (1 cycles, max_force 10 N)",
                        "1 rejected commands, last: data[0] is nan"]
    assert level == WARN
    # the period counts are reset: the next status is clean
    level, problems, _, _ = stage_status(
        v, stats, cmd, rejects, elapsed=1.0, last=None, finished=False, hand_waiting=False,
        accelerometer=True, sim=Sim(), spc=1, realtime=rt)
    assert (level, problems) == (OK, [])
    assert summary(stats, cmd, rejects, realtime=rt).startswith("101 states in 0.000 s")


def test_stage_status_serial_port_not_open_is_an_error():
    link = SerialLink("/nonexistent/port", 921600, 0.02, 0.5, on_frames=None, logger=None,
                      rtt=_NoRtt())
    v = dict(backend="serial", sync="realtime", joint_name="stage_joint", rate=1000.0,
             max_force=10.0, command_timeout=0.1)
    cmd = CommandState(latest=(int(Mode.FORCE), 1.5, 0), seen=True, timed_out=True)
    level, problems, ok, kv = stage_status(
        v, Stats(), cmd, _rejects(), elapsed=1.0, last=None, finished=True, hand_waiting=False,
        accelerometer=False, link=link, device=DeviceTimeline(MS))
    kv = dict(kv)
    assert level == ERROR and problems[0] == "finished (duration reached)"
    assert "serial port not open" in problems
    assert kv["accelerometer"] == "not published" and kv["command mode"] == "force"
    assert kv["command"] == "timed out: zero force" and kv["frames"] == "0"
    assert "command round trip p50 [ms]" not in kv


def test_lockstep_status_waits_for_a_controller():
    class Sim:
        solver_unconverged = 3

    v = dict(backend="sim", sync="lockstep", joint_name="j", rate=100.0, sample="none",
             hand_script="", hand_location="carriage", hand_start="first_command",
             carriage_friction=None, sim_dt=0.001, max_force=10.0, command_timeout=0.1)
    ls = LockstepState(timeout_ns=50 * MS)
    level, problems, ok, kv = stage_status(
        v, Stats(), CommandState(), _rejects(), elapsed=1.0, last=None, finished=False,
        hand_waiting=True, accelerometer=True, sim=Sim(), spc=10, lockstep=ls)
    kv = dict(kv)
    assert ok == "sim, lockstep" and level == WARN and problems[0].startswith("lockstep: waiting")
    assert kv["hand start"] == "waiting for the first command"
    assert kv["physics steps per cycle"] == "10 x 0.001 s" and kv["lockstep timeout [s]"] == "0.05"
    assert kv["command"] == "none yet (idle)"


class _NoRtt:
    def percentiles(self):
        return None

    def clear(self):
        pass


def _rejects():
    from fric_nodes._node_util import RejectLog

    class Log:
        def warning(self, *a, **k):
            pass

    return RejectLog(Log(), "command")
