"""The simulated haptic stage of paper 003 (fric_core.haptics.stage): physics, sensors, servo.

Physical facts asserted: an operator pushing below the breakaway force moves nothing (the
position is exactly constant for 10 s: implicit friction, no drift); above it the stage slides and
the load cell reads the sample's kinetic friction (paper 003 Table 2) within the load-cell noise
(Table 1); released, it stops without velocity sign chatter and stays; the end stops bound the
travel for any impact speed and stiffness (implicit contact, no tunnelling); motor saturation is
flagged; the PD servo tracks paper 003's 2 Hz, 10 mm sinusoid within its static error bound; a
seed fixes every reading.
"""

import math
import warnings

import numpy as np
import pytest

from fric_core.design import FrictionDesignWarning, law_validity
from fric_core.laws import AsymmetricFriction
from fric_core.haptics.stage import SAMPLES, HandSegment, HapticStageSim, OperatorHand, Sample

RES = 2.57e-6  # paper 003 Table 3: position resolution


def _arr(readings, field):
    return np.array([getattr(r, field) for r in readings], dtype=float)


# --- presets and parameters ---------------------------------------------------------------------
def test_samples_are_paper_003_table_2_and_valid_for_the_stage():
    b = SAMPLES["brass"].law
    assert (b.Cp, b.bp, b.Cn, b.bn, b.Dp, b.Dn, b.dv) == (1.7714, 0.457, 1.729, 0.6196, 2.1302,
                                                           -1.8623, 0.007)
    assert SAMPLES["teflon"].law.Dp == 1.0078 and SAMPLES["rubber"].law.Cp == 3.4901
    for name, s in SAMPLES.items():
        assert s.mass == 0.419  # the weighed block
        assert isinstance(s.law, AsymmetricFriction)
        with warnings.catch_warnings():
            warnings.simplefilter("error", FrictionDesignWarning)  # no design warning at 1 kHz
            sim = HapticStageSim(sample=name)
        zc, zb = sim.friction_z()
        assert law_validity(s.law, zb).unique and law_validity(s.law, zb).exact
        assert law_validity(sim.carriage_friction, zc).unique
        # even with the coupling removed (the bare block, Z = T/m), (15) holds: dv is sensible
        assert law_validity(s.law, 1e-3 / s.mass).unique
    assert SAMPLES["brass"].breakaway == (-1.8623, 2.1302)
    sim = HapticStageSim(sample="brass")
    assert sim.breakaway == pytest.approx((-0.69 - 1.8623, 1.04 + 2.1302))


def test_defaults_come_from_paper_003():
    sim = HapticStageSim()
    assert sim.carriage_mass == 0.692 and sim.max_force == 9.48  # Table 3
    assert sim.x_max - sim.x_min == pytest.approx(0.032)  # Table 3: range of motion 3.2 cm
    assert 1.0 / sim.counts_per_metre == pytest.approx(RES)  # Table 3
    assert sim.carriage_friction.static_bounds() == (-0.69, 1.04)  # Table 3
    assert (sim.force_noise, sim.accel_noise) == (0.062, 0.2379)  # Table 1
    assert sim.dt == 1e-3 and not sim.has_tool


def test_design_warning_for_a_too_steep_stiction_drop():
    steep = Sample("steep", AsymmetricFriction(1.0, 1.0, 0.0, 0.0, 3.0, -3.0, 1e-4), 0.05)
    with pytest.warns(FrictionDesignWarning, match="tool"):
        HapticStageSim(sample=steep, coupling_stiffness=1.0, coupling_damping=0.0)


def test_bad_parameters_and_commands_raise():
    with pytest.raises(ValueError, match="sample"):
        HapticStageSim(sample="granite")
    with pytest.raises(ValueError, match="x_min"):
        HapticStageSim(x_min=0.01, x_max=-0.01)
    with pytest.raises(ValueError, match="x0"):
        HapticStageSim(x0=0.5)
    with pytest.raises(ValueError, match="carriage_mass"):
        HapticStageSim(carriage_mass=0.0)
    with pytest.raises(ValueError, match="hand"):
        HapticStageSim().hand = OperatorHand((HandSegment(1.0, 1.0),), location="tool")
    sim = HapticStageSim()
    sim.step(1.0)
    before = sim.last
    for bad in (math.nan, math.inf):
        with pytest.raises(ValueError):
            sim.step(bad)
        with pytest.raises(ValueError):
            sim.step(None, bad)
    assert sim.last == before and sim.t == before.t  # untouched


def test_operator_hand_profile():
    h = OperatorHand((HandSegment(0.5, 0.0), HandSegment(1.0, 2.0, 0.2), HandSegment(1.0, -1.0),
                      HandSegment(0.5, 0.0, 0.5)), start=1.0)
    assert h.duration == 3.0
    for t, f in [(0.0, 0.0), (1.2, 0.0), (1.6, 1.0), (1.7, 2.0), (2.49, 2.0), (2.5, -1.0),
                 (3.25, -1.0), (3.75, -0.5), (4.0, 0.0), (9.0, 0.0)]:
        assert h.force(t) == pytest.approx(f), t
    assert OperatorHand.parse("0.5:0, 1:2:0.2, 1:-1, 0.5:0:0.5", start=1.0) == h
    with pytest.raises(ValueError):
        OperatorHand.parse("1:2:3:4")
    with pytest.raises(ValueError):
        HandSegment(1.0, 1.0, ramp=2.0)
    ends = OperatorHand((HandSegment(1.0, 3.0),))
    assert ends.force(0.5) == 3.0 and ends.force(1.0) == 0.0  # hand off after the script


# --- operator pushing below / above breakaway, release --------------------------------------------
@pytest.mark.parametrize("sample,direction", [("brass", 1), ("brass", -1), ("rubber", 1),
                                              ("teflon", -1)])
def test_push_below_breakaway_the_handle_does_not_move(sample, direction):
    sim0 = HapticStageSim(sample=sample)
    lo, hi = sim0.breakaway
    F = 0.9 * (hi if direction > 0 else lo)  # 90 % of the breakaway force, on the carriage
    ramp_end = 0.5 + 0.2
    hand = OperatorHand((HandSegment(0.5, 0.0), HandSegment(10.8, F, 0.2)))
    sim = HapticStageSim(sample=sample, hand=hand, seed=3)
    R = sim.run(11200)
    x, q = _arr(R, "true_position"), _arr(R, "position")
    k0 = int(round((ramp_end + 0.1) / sim.dt))  # 0.1 s after the ramp: 10.4 s of pushing
    assert R[k0].hand_force == pytest.approx(F)
    assert np.all(x[k0:] == x[k0]) and np.all(q[k0:] == q[k0])  # exactly constant: no drift
    assert np.all(_arr(R, "true_velocity")[k0:] == 0.0)
    assert np.all(_arr(R, "velocity")[k0 + 50:] == 0.0)  # the encoder velocity reads exactly 0
    assert all(r.carriage_stuck and r.tool_stuck for r in R[k0:])
    # what moved while the force built up is the coupling's compression, a few micrometres
    assert np.max(np.abs(x)) <= abs(F) / sim.coupling_stiffness + 2 * RES
    # the load cell carries what the carriage's own static friction does not hold
    fc_lo, fc_hi = sim.carriage_friction.static_bounds()
    assert fc_lo - 1e-9 <= F - R[-1].true_force <= fc_hi + 1e-9


@pytest.mark.parametrize("direction", [1, -1])
def test_push_above_breakaway_slides_at_the_kinetic_level_then_stops_when_released(direction):
    """Rubber block, stage starting near the far end: the hand goes 5 % over the breakaway force,
    then holds a force that keeps the stage sliding steadily (about 3 cm/s), then lets go."""
    s = SAMPLES["rubber"]
    law = s.law
    hand_lvl = 4.6 if direction > 0 else -3.4
    breakaway = HapticStageSim(sample="rubber").breakaway[1 if direction > 0 else 0]
    hand = OperatorHand((HandSegment(0.2, 0.0), HandSegment(0.3, 1.05 * breakaway, 0.2),
                         HandSegment(0.6, hand_lvl), HandSegment(2.0, 0.0, 0.05)))
    sim = HapticStageSim(sample="rubber", hand=hand, x0=-0.014 * direction, seed=5)
    R = sim.run(3100)
    t = _arr(R, "t")
    vb, ab = _arr(R, "tool_velocity"), _arr(R, "true_acceleration")
    f_true, f_meas = _arr(R, "true_force"), _arr(R, "force")
    x = _arr(R, "true_position")
    assert abs(x[1100] - x[0]) > 0.015  # it slid more than 15 mm
    assert not any(r.at_limit for r in R)
    # steady sliding window: the last 0.3 s of the hold
    w = (t > 0.8) & (t <= 1.1)
    assert np.all(np.sign(vb[w]) == direction) and np.all(np.abs(vb[w]) > 0.02)
    if direction > 0:
        kinetic = law.Cp + law.bp * vb[w]
    else:
        kinetic = -law.Cn + law.bn * vb[w]
    # noise-free: the load cell carries the block's kinetic friction plus its inertia
    np.testing.assert_allclose(f_true[w], kinetic + s.mass * ab[w], atol=0.02)
    # measured: the kinetic level within the noise (Table 1: 0.062 N)
    resid = f_meas[w] - kinetic
    n = int(w.sum())
    assert abs(resid.mean()) < 4 * 0.062 / math.sqrt(n) + 0.02
    assert 0.8 * 0.062 < resid.std() < 1.25 * 0.062
    level = law.Cp if direction > 0 else law.Cn  # rubber's kinetic friction (2.6-3.5 N)
    assert level < np.abs(f_meas[w]).mean() < level + 0.5
    # released (hand off from t = 1.1 s, 50 ms ramp): it stops and stays, without chatter.
    # The block stops first; the carriage then backs off once to relax the coupling spring
    # (compressed by the kinetic force) against its own friction: one reversal at most.
    vc = _arr(R, "true_velocity")
    after = t > 1.1
    assert np.all(vb[after] * direction >= 0.0)  # the block never reverses
    moving = vc[after][vc[after] != 0.0]
    assert np.count_nonzero(np.diff(np.sign(moving))) <= 1
    k_stop = int(np.flatnonzero(vc != 0.0)[-1]) + 1
    assert 0.0 < t[k_stop] - 1.1 < 0.2 and np.all(vb[k_stop:] == 0.0)
    assert np.all(x[k_stop:] == x[k_stop]) and all(r.carriage_stuck for r in R[k_stop:])
    assert np.all(_arr(R, "position")[k_stop:] == R[k_stop].position)
    assert np.all(_arr(R, "velocity")[k_stop + int(sim.velocity_timeout / sim.dt) + 1:] == 0.0)


def test_velocity_estimate_from_encoder_edges():
    """Frictionless carriage coasting: the 1/T estimate equals the true speed (to the edge
    timer's resolution), and it reads exactly 0 once no edge came for velocity_timeout."""
    sim = HapticStageSim(carriage_friction=None, x0=-0.015)
    for _ in range(5):
        sim.step(1.0)
    R = sim.run(300)  # coasting at 7.2 mm/s, 2.8 counts per step
    v = _arr(R, "true_velocity")
    assert np.ptp(v) == 0.0
    np.testing.assert_allclose(_arr(R, "velocity")[10:], v[0], rtol=2e-3)
    slow = HapticStageSim(carriage_friction=None, x0=-0.015)
    slow.step(0.692 * 1e-3 / slow.dt)  # 1 mm/s: one count per 2.6 steps
    R = slow.run(300)
    np.testing.assert_allclose(_arr(R, "velocity")[20:], 1e-3, rtol=5e-3)
    rest = HapticStageSim()
    assert all(r.velocity == 0.0 and r.position == 0.0 for r in rest.run(100))


# --- end stops, saturation ------------------------------------------------------------------------
@pytest.mark.parametrize("stiffness", [1e6, 1e9])
@pytest.mark.parametrize("force", [9.48, 40.0, 400.0])
def test_end_stops_bound_the_travel(stiffness, force):
    """A hand (up to 400 N, impact speeds up to 6 m/s) drives the carriage into either stop: the
    penetration stays within the bumper's energy bound (no tunnelling, even at 1e9 N/m, where
    an explicit contact would explode at 1 kHz), the stop never pulls, and nothing gains energy."""
    for sign in (1, -1):
        hand = OperatorHand((HandSegment(0.3, sign * force), HandSegment(0.5, 0.0)))
        sim = HapticStageSim(hand=hand, x0=-0.016 * sign, stop_stiffness=stiffness)
        R = sim.run(800)
        x, v = _arr(R, "true_position"), _arr(R, "true_velocity")
        lim = sim.x_max if sign > 0 else sim.x_min
        v_imp = np.max(np.abs(v))
        assert v_imp <= math.sqrt(2 * force * 0.032 / sim.carriage_mass) + 1e-9
        pen = np.max(sign * (x - lim))
        assert pen <= v_imp * math.sqrt(sim.carriage_mass / stiffness) + force / stiffness + 1e-9
        assert np.all(sign * x <= 0.016 + pen)
        assert any(r.at_limit for r in R) and R[299].at_limit
        sf = _arr(R, "stop_force")
        assert np.all(sign * sf <= 0.0)  # pushes back, never pulls
        rebound = np.max(-sign * v[np.argmax(np.abs(v)):])
        assert rebound <= v_imp  # a bumper dissipates
        assert R[-1].true_velocity == 0.0  # and it comes to rest
    assert sim.solver_unconverged == 0


def test_force_saturation_is_flagged():
    sim = HapticStageSim()
    r = sim.step(20.0)
    assert r.saturated and r.motor_force == 9.48 and r.force_command == 20.0
    r = sim.step(-30.0)
    assert r.saturated and r.motor_force == -9.48 and r.force_command == -30.0
    r = sim.step(9.48)
    assert not r.saturated and r.motor_force == 9.48
    r = sim.step(None)
    assert not r.saturated and r.motor_force == 0.0
    # position mode: a 10 mm setpoint step needs far more than 9.48 N at first
    sim = HapticStageSim()
    R = sim.run(1500, position_setpoint=0.01)
    assert R[5].saturated and R[5].motor_force == 9.48 and R[5].force_command > 9.48
    assert not R[-1].saturated
    assert abs(R[-1].true_position - 0.01) <= 1.04 / sim.kp + 2 * RES  # static friction / kp


# --- position servo -------------------------------------------------------------------------------
@pytest.mark.parametrize("sample", [None, "brass", "rubber"])
def test_position_servo_tracks_paper_003_sinusoid(sample):
    """2 Hz, 10 mm sinusoid (paper 003's identification trajectory). A PD servo's tracking error
    is bounded by the force it must produce over its stiffness kp — all the static friction plus
    the inertia force (m_carriage + m_block) A ω² at the peak — plus the lag of the first-order
    setpoint filter, A ω/ω_c, plus an encoder count; the tolerance is that sum."""
    A, fr = 0.01, 2.0
    w = 2 * math.pi * fr
    sim = HapticStageSim(sample=sample, seed=11)
    R = sim.run(3000, position_setpoint=lambda t: A * math.sin(w * t))
    t, x = _arr(R, "t"), _arr(R, "true_position")
    late = t > 1.0  # after two cycles of warm-up (paper 003 warms up for 10 s)
    err = np.abs(x - A * np.sin(w * t))[late]
    m = sim.carriage_mass + (sim.tool_mass if sim.has_tool else 0.0)
    lo, hi = sim.breakaway
    bound = (max(hi, -lo) + m * A * w * w) / sim.kp + A * w / (2 * math.pi * 100.0) + RES
    assert err.max() <= bound, (err.max(), bound)
    assert not any(r.saturated for r, keep in zip(R, late) if keep)
    assert np.ptp(x[late]) > 1.8 * A  # it really moves the full stroke


# --- determinism and noise ------------------------------------------------------------------------
def test_deterministic_per_seed():
    def run(seed):
        hand = OperatorHand.push_script(2.0, 4.0, hold=0.4, release=0.4)
        sim = HapticStageSim(sample="brass", hand=hand, seed=seed)
        out = [sim.step(0.5 * math.sin(0.01 * k)) for k in range(800)]
        out += sim.run(800, position_setpoint=lambda t: 0.005 * math.sin(6.0 * t))
        return out

    a, b, c = run(7), run(7), run(8)
    assert a == b
    assert _arr(a, "force").tolist() != _arr(c, "force").tolist()  # the noise differs...
    # ... and only the noise: the servo uses the encoder, so the true motion is identical
    assert _arr(a, "true_position").tolist() == _arr(c, "true_position").tolist()
    sim = HapticStageSim(seed=7)
    first = sim.run(50, 1.0)
    sim.reset()
    assert sim.run(50, 1.0) == first


def test_sensor_noise_levels_are_paper_003_table_1():
    sim = HapticStageSim(sample="brass", seed=2)
    R = sim.run(20000)
    f, a = _arr(R, "force"), _arr(R, "acceleration")
    assert np.all(_arr(R, "true_force") == 0.0) and np.all(_arr(R, "true_acceleration") == 0.0)
    assert f.std() == pytest.approx(0.062, rel=0.03) and abs(f.mean()) < 0.002
    assert a.std() == pytest.approx(0.2379, rel=0.03) and abs(a.mean()) < 0.008
    quiet = HapticStageSim(force_noise=0.0, accel_noise=0.0)
    assert all(r.force == 0.0 and r.acceleration == 0.0 for r in quiet.run(10))


def test_load_cell_range_clips_the_reading():
    sim = HapticStageSim(handle=True, force_noise=0.0, load_cell_range=5.0, x0=0.01)
    R = sim.run(200, force_command=9.0)  # pushing the handle's 0.05 kg into nothing: small force
    assert all(abs(r.force) <= 5.0 for r in R)
    hand = OperatorHand((HandSegment(1.0, -8.0),), location="tool")
    sim = HapticStageSim(hand=hand, force_noise=0.0, load_cell_range=5.0, carriage_friction=None)
    R = sim.run(100, force_command=9.0)  # motor against the hand: ~8 N through the load cell
    assert R[-1].force == 5.0 and R[-1].true_force > 7.0
