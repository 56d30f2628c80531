"""Paper 003's identification run without ROS: :class:`IdentificationRun` driven by the simulated
stage (HapticStageSim, the brass sample of Table 2) one state at a time, as the node drives it
(each state in, its setpoint out; the stage steps with that setpoint).

Physical facts checked: the phases come in order (hold, move to the centre, excitation, settle,
rest), the commanded excitation is the paper's 1 cm at 2 Hz and the stage follows it, the fit of
the record recovers the sample's mass and friction within 4 standard deviations, and a stage that
leaves the travel band ends the run at once.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from fric_core.haptics.identification import excitation
from fric_core.haptics.procedure import (DONE, END, EXCITE, MOVE, MOVE_HOLD_NS, PREPARE, SETTLE,
                                         SETTLE_NS, STEADY_STATES, Abort, IdentificationRun,
                                         estimates_line, fit_record, write_run_files)
from fric_core.haptics.stage import SAMPLES, HapticStageSim

BRASS = SAMPLES["brass"]
BAND = (-0.015, 0.015)  # x_min/x_max of paper 003's Table 3 (±16 mm) less a 1 mm margin
SIG_A = 0.2379  # the simulated accelerometer's noise std (paper 003 Table 1) [m/s²]


def drive(run: IdentificationRun, st: HapticStageSim, n_max: int = 20000):
    """Answer every state of ``st`` with ``run.step``; the stage steps with that setpoint.
    Returns (the last outcome, phase after each state, setpoints, positions)."""
    r = st.step()
    phases, sps, xs = [], [], []
    for _ in range(n_max):
        ns = int(round(r.t * 1e9))
        run.accel(ns, r.acceleration, SIG_A ** 2)
        out = run.step(ns, r.position, r.velocity, r.force)  # force: paper 003's sign
        phases.append(run.phase)
        xs.append(r.position)
        if not isinstance(out, float):
            return out, phases, sps, xs
        sps.append(out)
        r = st.step(position_setpoint=out)
    raise AssertionError("the run did not end")


@pytest.fixture(scope="module")
def brass_run():
    """The paper's excitation (1 cm, 2 Hz, four cycles recorded after a 2 s warm-up) centred
    2 mm from where the stage rests: the run moves there first."""
    st = HapticStageSim(sample="brass", seed=3)
    x_start = st.step().position
    exc = excitation(warmup=2.0, center=0.002, x_min=BAND[0], x_max=BAND[1])
    run = IdentificationRun(exc, x_start, BAND, move_speed=0.01)
    st.reset(seed=3)
    out, phases, sps, xs = drive(run, st)
    return run, exc, out, np.array(phases), np.array(sps), np.array(xs)


def test_phases_in_order_and_timed(brass_run):
    run, exc, out, phases, sps, _ = brass_run
    assert out is DONE and run.phase == END and run.done.is_set() and not run.aborted
    # each phase once, in order; the last state is answered with zero effort (DONE)
    changes = phases[np.flatnonzero(np.diff(phases)) + 1]
    assert [phases[0], *changes] == [PREPARE, MOVE, EXCITE, SETTLE, END]
    n = {p: int(np.sum(phases == p)) for p in (PREPARE, MOVE, EXCITE, SETTLE)}
    assert n[PREPARE] == STEADY_STATES - 1  # the 200th steady state starts the move
    # 2 mm at 10 mm/s, then the hold at the centre: 0.2 s + 0.2 s of 1 ms states
    assert n[MOVE] == pytest.approx(200 + MOVE_HOLD_NS // 10**6, abs=2)
    assert n[EXCITE] == pytest.approx(exc.t.size, abs=2)  # warm-up + 4 cycles
    assert n[SETTLE] == pytest.approx(SETTLE_NS // 10**6, abs=2)
    # the hold: where the stage was; the settle: the last excitation setpoint
    assert np.all(sps[:n[PREPARE]] == run.x_start)
    assert np.all(sps[-n[SETTLE]:] == sps[-n[SETTLE]])
    assert run.missed() == (0, n[EXCITE])  # lockstep: every state answered
    assert run.k == int(exc.record.sum()) and run.overflow == 0


def test_the_excitation_is_the_papers_and_the_stage_follows_it(brass_run):
    """Paper 003: a 2 Hz sinusoid of 1 cm around the centre. The commands of the recorded part
    are it to rounding; the measured position follows with the servo's lag, within 5 %."""
    run, exc, _, phases, sps, _ = brass_run
    assert (exc.amplitude, exc.frequency) == (0.01, 2.0)
    t = run.t_ns[:run.k] * 1e-9
    x = run.x[:run.k]
    w = 2 * math.pi * exc.frequency
    basis = np.column_stack([np.ones_like(t), np.sin(w * t), np.cos(w * t)])
    c, *_ = np.linalg.lstsq(basis, x, rcond=None)
    resid = x - basis @ c
    assert math.hypot(c[1], c[2]) == pytest.approx(exc.amplitude, rel=0.05)
    assert c[0] == pytest.approx(exc.center, abs=5e-4)
    assert np.std(resid) < 0.05 * np.std(x)  # a 2 Hz sinusoid explains the motion
    # the commands of the excitation phase: centre ± amplitude, reached at the peaks
    ex_sp = sps[np.flatnonzero(phases[:sps.size] == EXCITE)]
    assert ex_sp.max() == pytest.approx(exc.center + exc.amplitude, abs=1e-6)
    assert ex_sp.min() == pytest.approx(exc.center - exc.amplitude, abs=1e-6)
    # seven or eight velocity reversals in four cycles (the paper: seven)
    v = run.v[:run.k]
    signs = np.sign(v[np.abs(v) > 0.02])
    assert 7 <= int(np.sum(signs[1:] != signs[:-1])) <= 8


def test_the_fit_recovers_the_samples_mass_and_friction(brass_run, tmp_path):
    """EIV (eq. 6) on the record with the accelerometer matched by stamp: the brass block's mass
    and kinetic friction (Cp, bp, Cn, bn) within 4 standard deviations (as
    test_identification_io), the breakaway levels within 5 %; OLS (eq. 5) under-reads the mass
    (accelerometer noise)."""
    run, *_ = brass_run
    rec, notes, noise = run.recording(joint="stage_joint", source="sim",
                                      accel_source="/accelerometer")
    assert rec.a is not None and len(rec) == run.k
    assert notes == [f"accelerometer /accelerometer ({run.k} of {run.k} states matched by "
                     "stamp)"]
    assert noise == {"accel": pytest.approx(SIG_A ** 2)}
    fits, errors = fit_record(rec, noise=noise)
    assert errors == {} and set(fits) == {"eiv", "ols"}
    eiv, law = fits["eiv"], BRASS.law
    print("\n" + estimates_line(eiv, fits, len(rec)))
    assert abs(eiv.m - BRASS.mass) < 4 * eiv.std["m"]
    assert abs(eiv.Cp - law.Cp) < 4 * eiv.std["Cp"]
    assert abs(eiv.Cn - law.Cn) < 4 * eiv.std["Cn"]
    assert abs(eiv.bp - law.bp) < 4 * eiv.std["bp"] and abs(eiv.bn - law.bn) < 4 * eiv.std["bn"]
    assert eiv.Dp == pytest.approx(law.Dp, rel=0.05) and eiv.Dn == pytest.approx(law.Dn, rel=0.05)
    assert fits["ols"].m < eiv.m
    text = write_run_files(str(tmp_path), rec, fits, eiv, node="friction_renderer",
                           title="brass")
    assert text.startswith("files in ")
    assert {"recording.csv", "friction_renderer.yaml"} <= {p.name for p in tmp_path.iterdir()}
    assert write_run_files("", rec, fits, eiv, node="r", title="t") == ""


def test_leaving_the_travel_band_aborts_at_once():
    """An excitation of 12 mm inside a band of ±11 mm: the servoed stage follows it out of the
    band, and the first state outside ends the run (zero effort), just past the edge."""
    band = (-0.011, 0.011)
    exc = excitation(amplitude=0.012, warmup=1.0, x_min=-0.016, x_max=0.016)
    run = IdentificationRun(exc, 0.0, band)
    out, phases, sps, xs = drive(run, HapticStageSim(sample="brass", seed=1))
    assert isinstance(out, Abort) and out.reason.startswith("travel limit: position")
    assert "outside [-0.011, 0.011] m" in out.reason and run.aborted == out.reason
    assert run.phase == END and run.done.is_set() and phases[-2] == EXCITE
    assert 0.011 < abs(xs[-1]) < 0.0115  # one 1 ms state past the edge
    assert max(abs(x) for x in xs[:-1]) <= 0.011
    assert run.abort("again") is None and run.aborted == out.reason  # ended once


def test_tracking_limit_and_stage_reports_abort():
    """A jammed stage (it stays where it is) is tracking_limit from the moving command; a stage
    report of an end stop, or of more saturated cycles than max_saturation, aborts."""
    exc = excitation(warmup=1.0)
    run = IdentificationRun(exc, 0.0, BAND, tracking_limit=0.001)
    out = None
    for k in range(1, 2000):
        out = run.step(k * 10**6, 0.0, 0.0, 0.0)
        if not isinstance(out, float):
            break
    assert isinstance(out, Abort) and out.reason.startswith("tracking: position 0 m")
    run = IdentificationRun(exc, 0.0, BAND, max_saturation=0.1)
    assert run.stage_report(False, 5, 500, 1000) is None  # the first report's period: not judged
    assert run.stage_report(False, 0, 100, 2000) is None  # 100 of 1000 cycles: 10 %, the limit
    a = run.stage_report(False, 0, 101, 3000)
    assert a == Abort("the stage reports the motor saturated in 101 of 1000 cycles (> "
                      "max_saturation 0.1)")
    run = IdentificationRun(exc, 0.0, BAND)
    a = run.stage_report(True, None, None, None)
    assert a is not None and a.reason == "the stage reports the carriage at an end stop"
    assert run.stage_report(True, None, None, None) is None  # over already
