"""A fixed-step physical simulation of the 1-DOF haptic stage of paper 003 (Richard, Cutkosky &
MacLean, "Friction identification for haptic display").

The apparatus (paper 003, Figs. 2–3): a DC motor drives a carriage on a linear slide through a cable
transmission; a 2048-line encoder measures its position; a load cell sits between the carriage and
the object under test (the sample block, or the handle the operator holds), joined by a coupling
that is stiff along the axis; an accelerometer measures the object's acceleration. Here:

* **carriage** — mass ``carriage_mass`` sliding with its own asymmetric friction (an
  :class:`~fric_core.laws.AsymmetricFriction`), driven by the motor force (the command, saturated at
  ``max_force`` and *flagged* when it is), by the operator's hand (when it pushes the carriage), and
  held between two end stops (stiff spring-dampers at ``x_min``/``x_max``);
* **tool side** (optional) — the body beyond the load cell: a sample block sliding with its own
  friction law (:data:`SAMPLES`), or a frictionless handle of ``handle_mass`` for the operator to
  hold. It is coupled to the carriage by the coupling spring-damper ``coupling_stiffness``,
  ``coupling_damping``; the load cell reads the force transmitted through it;
* **operator hand** (optional) — a scripted force profile (:class:`OperatorHand`) on the carriage or
  on the tool side.

Integration: implicit Euler for everything stiff. Each body's friction is the implicit model-A step
of paper 000 (eq. 26, :class:`~fric_core.elements.RigidAdmittance`) evaluated through the law's
exact Φ_Z, with the coupling spring-damper folded into the body's effective mass
(``M + T B + T² K``) so the stiff coupling is implicit too; the two bodies' steps are solved
jointly by block Gauss–Seidel until the tool velocity changes by less than ``solver_tol`` (a stuck
body returns exactly 0, so a stuck stage reaches its fixed point in one sweep and never drifts).
The end stops are implicit one-sided spring-dampers solved exactly inside the carriage's step (no
tunnelling for any stiffness at any dt; they push, never pull).

Sensors (what a device can report): the encoder position (quantised to ``1/counts_per_metre``), a
velocity estimated from the encoder edges (below), the load-cell force and the accelerometer with
additive Gaussian noise (seeded; levels of paper 003's Table 1) and clipped at their ranges. The
noise-free ("true") state is reported too, for tests.

Velocity estimate — the "1/T" method of paper 003's I/O card (it "calculates velocity values by
measuring the time between encoder pulses"): edge times are interpolated from the true motion within
the step and quantised to the card's timer (``timer_resolution``); when a step contains edges the
velocity is (counts since the last edge of an earlier step) / (time between those two edges); with
no edge it keeps its last value but is bounded by one count over the time since the last edge (a
faster motion would have produced one), and it is exactly 0 once no edge came for
``velocity_timeout``. A stage at rest thus reads exactly zero velocity.

Position mode: a PD servo on the encoder position and estimated velocity tracks the setpoint after a
first-order low-pass filter (cut-off ``setpoint_cutoff``). Paper 003 drives its stage with a PD
controller whose command output is low-pass filtered at 100 Hz (second order); here the setpoint is
filtered (first order, same cut-off) so the servo sees a smooth reference and its derivative.

Defaults and their sources (paper 003 = Richard, Cutkosky & MacLean; "chosen" = the paper gives no
figure, the value is a realistic choice):

==========================  =====================  =================================================
parameter                   default                source
==========================  =====================  =================================================
``carriage_mass``           0.692 kg               Table 3, system equivalent inertia (motor, slide)
``carriage_friction``       Dp 1.04 N, Dn −0.69 N  Table 3, static friction forward / reverse;
                            Cp 0.83, Cn 0.55 N     chosen: kinetic 80 % of static,
                            bp = bn 0.5 N·s/m,     chosen: light viscous drag of a linear slide,
                            dv 0.005 m/s           chosen: transition width like Table 2's Δv
``max_force``               9.48 N                 Table 3, maximum force (continuous)
``x_min``, ``x_max``        ∓0.016 m               Table 3, range of motion 3.2 cm (centred on 0)
``counts_per_metre``        1/(2.57e-6 m)         Table 3, position resolution 2.57 µm
``force_noise``             0.062 N                Table 1, force measurement error (std)
``accel_noise``             0.2379 m/s²            Table 1, acceleration measurement error (std)
``load_cell_range``         44.8 N                 text: 10 lb (44.8 N) capacity load cell
``accel_range``             50 g                   text: ±50 g accelerometer
``setpoint_cutoff``         100 Hz                 text: command filter cut-off (see above)
``dt``                      1e-3 s                 text: 1 kHz command and sampling rate
``coupling_stiffness``      2e5 N/m                chosen: "stiff in the axial direction": 5 µm/N
                                                   for the load cell and coupling in series
``coupling_damping``        100 N·s/m              chosen: damping ratio ≈ 0.2 of the coupling mode
``stop_stiffness``          1e6 N/m                chosen: hard stop, ≈ 10 µm at the maximum force
``stop_damping``            500 N·s/m              chosen: a damped bumper (ratio ≈ 0.3)
``kp``, ``kd``              8000 N/m, 100 N·s/m    chosen: ≈ 13 Hz, ratio ≈ 0.5 with a 0.42 kg block
``handle_mass``             0.05 kg                chosen: a small handle beyond the load cell
``timer_resolution``        1e-6 s                 chosen: 1 MHz edge-timer of the counter card
``velocity_timeout``        0.05 s                 chosen: below 5e-5 m/s (one count per 50 ms) → 0
==========================  =====================  =================================================

Table 1's position (5.76e-5 m) and velocity (3.18e-3 m/s) errors are paper 003's differences from
the ideal trajectories, control errors included; an encoder has no additive noise, so here position
error is its quantisation and velocity error that of the estimator.

Sign conventions: +x is the carriage's forward direction; the motor force, hand force and velocity
are positive along +x. The load cell reads the force the carriage applies to the tool side (paper
003's F_applied of its eq. 1: positive when the stage pushes the object forward). When the operator
holds the handle (``location="tool"``) the force the hand applies to the device is therefore −force
(less the handle's inertia).
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, field
from typing import NamedTuple, Tuple

import numpy as np

from .._checks import param
from ..design import law_validity, warn_design
from ..laws import AsymmetricFriction, FrictionLaw

__all__ = ["HapticStageSim", "StageReading", "Sample", "SAMPLES", "HandSegment", "OperatorHand",
           "default_carriage_friction", "GRAVITY"]

GRAVITY = 9.80665


# -- samples (paper 003, Table 2) ------------------------------------------------------------------
@dataclass(frozen=True)
class Sample:
    """A sample block: its friction law on the surface and its mass."""

    name: str
    law: FrictionLaw
    mass: float
    source: str = ""

    @property
    def breakaway(self) -> Tuple[float, float]:
        """(reverse, forward) static friction levels: the force needed to start it sliding."""
        lo, hi = self.law.static_bounds()
        return float(lo), float(hi)


def _table2(Cp, bp, Cn, bn, Dp, Dn, dv) -> AsymmetricFriction:
    return AsymmetricFriction(Cp=Cp, Cn=Cn, bp=bp, bn=bn, Dp=Dp, Dn=Dn, dv=dv)


#: The aluminium block of paper 003 on brass, teflon and rubber: Table 2's first runs ("Brass1",
#: "Teflon1", "Rubber1"; the second brass run has negative viscosities, not a physical law) and the
#: block's weighed mass, 0.419 kg. ``dv`` is Table 2's Δv, "the smallest velocity range that fully
#: encompasses the transition from static to dynamic friction": the transition width of the law.
#: Theorem 1's condition (15) holds for it on the block at 1 kHz (|slope|·T/m ≤ 0.24; checked at
#: construction by :class:`HapticStageSim` with :func:`fric_core.design.law_validity`).
SAMPLES = {
    "brass": Sample("brass", _table2(1.7714, 0.457, 1.729, 0.6196, 2.1302, -1.8623, 0.007), 0.419,
                    "paper 003 Table 2, Brass1; mass weighed 0.419 kg"),
    "teflon": Sample("teflon", _table2(0.513, 1.0957, 0.5365, 1.3038, 1.0078, -0.7167, 0.005),
                     0.419, "paper 003 Table 2, Teflon1; mass weighed 0.419 kg"),
    "rubber": Sample("rubber", _table2(3.4901, 8.7338, 2.5611, 7.9521, 3.8513, -2.9099, 0.02),
                     0.419, "paper 003 Table 2, Rubber1; mass weighed 0.419 kg"),
}


def default_carriage_friction() -> AsymmetricFriction:
    """The carriage's friction: Table 3's static levels; kinetic, viscous, dv chosen (see above).

    Takes no parameters (the values are the module docstring's ``carriage_friction`` row).

    Returns
    -------
    AsymmetricFriction
        Dp 1.04 N, Dn −0.69 N, Cp 0.832 N, Cn 0.552 N, bp = bn 0.5 N·s/m, dv 0.005 m/s.
    """
    return AsymmetricFriction(Cp=0.832, Cn=0.552, bp=0.5, bn=0.5, Dp=1.04, Dn=-0.69, dv=0.005)


# -- operator hand ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class HandSegment:
    """One segment of a hand force profile: over ``duration`` seconds the force goes linearly from
    the previous level (0 before the first segment) to ``force`` during the first ``ramp`` seconds,
    then holds ``force``. A release is a segment with ``force=0``."""

    duration: float
    force: float
    ramp: float = 0.0

    def __post_init__(self):
        param("duration", self.duration, minimum=0.0, strict=True, allow_array=False)
        param("force", self.force, allow_array=False)
        param("ramp", self.ramp, minimum=0.0, allow_array=False)
        if self.ramp > self.duration:
            raise ValueError(f"ramp: {self.ramp!r} is longer than the segment ({self.duration!r})")


@dataclass(frozen=True)
class OperatorHand:
    """A scripted operator hand: a piecewise-linear force profile (N, +x forward) starting at time
    ``start``, applied to the ``location`` ``"carriage"`` (pushing the handle of the carriage) or
    ``"tool"`` (holding the handle/object beyond the load cell, so the load cell measures it).
    Zero before ``start`` and after the last segment (hand off)."""

    segments: Tuple[HandSegment, ...]
    location: str = "carriage"
    start: float = 0.0
    _t: Tuple[float, ...] = field(default=(), init=False, repr=False, compare=False)
    _f: Tuple[float, ...] = field(default=(), init=False, repr=False, compare=False)

    def __post_init__(self):
        segs = tuple(self.segments)
        if not segs or not all(isinstance(s, HandSegment) for s in segs):
            raise ValueError("segments: expected a non-empty sequence of HandSegment")
        if self.location not in ("carriage", "tool"):
            raise ValueError(f"location: expected 'carriage' or 'tool', got {self.location!r}")
        param("start", self.start, allow_array=False)
        # breakpoints of the piecewise-linear profile
        t, f = [self.start], [0.0]
        now, level = self.start, 0.0
        for s in segs:
            if s.ramp > 0.0:
                t.append(now + s.ramp)
                f.append(s.force)
            else:  # a step: an instantaneous change at the segment start
                t.append(now)
                f.append(s.force)
            now += s.duration
            t.append(now)
            f.append(s.force)
            level = s.force
        if level != 0.0:
            t.append(now)
            f.append(0.0)  # hand off after the script
        object.__setattr__(self, "segments", segs)
        object.__setattr__(self, "_t", tuple(t))
        object.__setattr__(self, "_f", tuple(f))

    @property
    def duration(self) -> float:
        """Length of the script (s), from ``start``."""
        return sum(s.duration for s in self.segments)

    def force(self, t: float) -> float:
        """The hand force at time t (right-continuous at steps)."""
        ts, fs = self._t, self._f
        i = bisect.bisect_right(ts, t)
        if i == 0 or i == len(ts):
            return 0.0
        t0, t1 = ts[i - 1], ts[i]
        f0, f1 = fs[i - 1], fs[i]
        return f1 if t1 == t0 else f0 + (f1 - f0) * (t - t0) / (t1 - t0)

    @classmethod
    def push_script(cls, below: float, above: float, *, rest: float = 0.5, ramp: float = 0.2,
                    hold: float = 3.0, release: float = 3.0, location: str = "carriage",
                    start: float = 0.0) -> "OperatorHand":
        """Rest, push at ``below`` (under the breakaway force), at ``above`` (over it), release."""
        return cls((HandSegment(rest, 0.0), HandSegment(hold, below, ramp),
                    HandSegment(hold, above, ramp), HandSegment(release, 0.0, ramp)),
                   location=location, start=start)

    @classmethod
    def parse(cls, spec: str, location: str = "carriage", start: float = 0.0) -> "OperatorHand":
        """From ``"duration:force[:ramp], ..."``, e.g. ``"0.5:0, 3:2:0.2, 3:4:0.2, 3:0:0.2"``."""
        segs = []
        for i, item in enumerate(p for p in str(spec).split(",") if p.strip()):
            parts = item.strip().split(":")
            if len(parts) not in (2, 3):
                raise ValueError(f"hand segment {i}: expected 'duration:force[:ramp]', "
                                 f"got {item!r}")
            try:
                nums = [float(p) for p in parts]
            except ValueError:
                raise ValueError(f"hand segment {i}: not numbers: {item!r}") from None
            segs.append(HandSegment(*nums))
        return cls(tuple(segs), location=location, start=start)


# -- the stage -------------------------------------------------------------------------------------
class StageReading(NamedTuple):
    """One servo cycle of the stage: the sensors (what a device reports) and the true state."""

    t: float  #: time at the end of the step (s)
    position: float  #: encoder position (m), quantised
    velocity: float  #: velocity from the encoder edges (m/s), see module doc
    force: float  #: load cell (N), force of the carriage on the tool side, with noise
    acceleration: float  #: accelerometer (m/s²) on the tool side (on the carriage if none)
    force_command: float  #: motor force asked for (N): the force command, or the servo output
    motor_force: float  #: motor force applied (N): force_command saturated at ±max_force
    saturated: bool  #: the command exceeded max_force in this step
    at_limit: bool  #: the carriage is at or in an end stop
    true_position: float  #: carriage position (m), exact
    true_velocity: float  #: carriage velocity (m/s), exact
    true_acceleration: float  #: acceleration of the accelerometer's body, noise-free
    true_force: float  #: load-cell force, noise-free and unclipped
    tool_position: float  #: tool-side body position (m) (= carriage position if none)
    tool_velocity: float  #: tool-side body velocity (m/s)
    hand_force: float  #: operator hand force (N) in the step
    stop_force: float  #: end-stop force on the carriage (N)
    carriage_stuck: bool  #: the carriage's friction was static in the step (velocity exactly 0)
    tool_stuck: bool  #: the tool body's friction was static (False without a tool friction)


def _law_or_none(name: str, law) -> FrictionLaw | None:
    if law is None:
        return None
    if not isinstance(law, FrictionLaw):
        raise ValueError(f"{name}: expected a fric_core.laws law or None, got {law!r}")
    if not law.scalar_ok or law.size is not None:
        raise ValueError(f"{name}: needs a 1-D law with scalar parameters, got {law!r}")
    return law


class HapticStageSim:
    """The simulated haptic stage (see the module docstring for the physics and the defaults).

    ``sample``: None, a name of :data:`SAMPLES` or a :class:`Sample` — the block on the tool side.
    ``hand``: None or an :class:`OperatorHand`. A tool-side body exists when there is a sample, when
    the hand holds the tool side, or with ``handle=True`` (a frictionless ``handle_mass``).

    ``step(force_command=None, position_setpoint=None) -> StageReading`` advances one step ``dt``:

    * ``position_setpoint`` given: position mode — the PD servo tracks the low-pass filtered
      setpoint (the filter starts from the measured position when the mode is entered); a
      ``force_command`` given too is added to the servo output as a feed-forward;
    * otherwise force mode: the motor force is ``force_command`` (None means 0: motor idle).

    The motor force is clipped at ±``max_force`` and the reading's ``saturated`` says so. Non-finite
    commands raise ``ValueError`` (the stage state is untouched). The step is total: any finite
    force command or setpoint gives a finite state — the motor force saturates, and the servo's
    reference is limited to ``[x_min − L, x_max + L]`` (L = ``x_max − x_min``, one travel length
    beyond either stop, where the servo output is long saturated), so a setpoint of ±1.8e308 m
    pushes into the stop like one of ``x_max + L`` and is forgotten within the setpoint filter's
    time constant. (The ``haptic_stage`` node rejects setpoints outside ``[x_min, x_max]`` before
    they reach the servo.) Deterministic for a given ``seed``: the sensor noise is the only
    randomness.
    """

    def __init__(self, *, dt: float = 1e-3, seed: int | None = 0,
                 carriage_mass: float = 0.692,
                 carriage_friction: FrictionLaw | None | str = "default",
                 max_force: float = 9.48,
                 x_min: float = -0.016, x_max: float = 0.016, x0: float = 0.0,
                 stop_stiffness: float = 1e6, stop_damping: float = 500.0,
                 counts_per_metre: float = 1.0 / 2.57e-6,
                 timer_resolution: float = 1e-6, velocity_timeout: float = 0.05,
                 force_noise: float = 0.062, accel_noise: float = 0.2379,
                 load_cell_range: float = 44.8, accel_range: float = 50.0 * GRAVITY,
                 sample: Sample | str | None = None, hand: OperatorHand | None = None,
                 handle: bool = False, handle_mass: float = 0.05,
                 coupling_stiffness: float = 2e5, coupling_damping: float = 100.0,
                 kp: float = 8000.0, kd: float = 100.0, setpoint_cutoff: float = 100.0,
                 solver_tol: float = 1e-12, solver_max_iter: int = 100):
        p = lambda n, v, **kw: param(n, v, allow_array=False, **kw)  # noqa: E731
        self.dt = p("dt", dt, minimum=0.0, strict=True)
        self.carriage_mass = p("carriage_mass", carriage_mass, minimum=0.0, strict=True)
        if isinstance(carriage_friction, str):
            if carriage_friction != "default":
                raise ValueError(f"carriage_friction: expected a law, None or 'default', got "
                                 f"{carriage_friction!r}")
            carriage_friction = default_carriage_friction()
        self.carriage_friction = _law_or_none("carriage_friction", carriage_friction)
        self.max_force = p("max_force", max_force, minimum=0.0, strict=True)
        self.x_min = p("x_min", x_min)
        self.x_max = p("x_max", x_max)
        if not self.x_min < self.x_max:
            raise ValueError(f"x_min: must be < x_max, got {x_min!r} >= {x_max!r}")
        # the position servo's reference range (step): one travel length beyond either stop
        span = self.x_max - self.x_min
        self._r_lo, self._r_hi = self.x_min - span, self.x_max + span
        if not (math.isfinite(self._r_lo) and math.isfinite(self._r_hi)):
            raise ValueError(f"x_min: the travel [{x_min!r}, {x_max!r}] is too large to "
                             "compute with")
        self.x0 = p("x0", x0)
        if not self.x_min <= self.x0 <= self.x_max:
            raise ValueError(f"x0: {x0!r} is outside the travel [{x_min!r}, {x_max!r}]")
        self.stop_stiffness = p("stop_stiffness", stop_stiffness, minimum=0.0, strict=True)
        self.stop_damping = p("stop_damping", stop_damping, minimum=0.0)
        self.counts_per_metre = p("counts_per_metre", counts_per_metre, minimum=0.0, strict=True)
        self.timer_resolution = p("timer_resolution", timer_resolution, minimum=0.0)
        self.velocity_timeout = p("velocity_timeout", velocity_timeout, minimum=0.0, strict=True)
        self.force_noise = p("force_noise", force_noise, minimum=0.0)
        self.accel_noise = p("accel_noise", accel_noise, minimum=0.0)
        self.load_cell_range = p("load_cell_range", load_cell_range, minimum=0.0, strict=True)
        self.accel_range = p("accel_range", accel_range, minimum=0.0, strict=True)
        self.handle_mass = p("handle_mass", handle_mass, minimum=0.0, strict=True)
        self.coupling_stiffness = p("coupling_stiffness", coupling_stiffness, minimum=0.0,
                                    strict=True)
        self.coupling_damping = p("coupling_damping", coupling_damping, minimum=0.0)
        self.kp = p("kp", kp, minimum=0.0)
        self.kd = p("kd", kd, minimum=0.0)
        self.setpoint_cutoff = p("setpoint_cutoff", setpoint_cutoff, minimum=0.0, strict=True)
        # the servo terms are bounded (reference range 3 travel lengths, step): gains that could
        # overflow them (and give inf - inf = NaN) are no gains a device has
        e_max = 4.0 * span
        for name, gain, err in (("kp", self.kp, e_max), ("kd", self.kd, e_max / self.dt)):
            if not gain * err < 1e300:
                raise ValueError(f"{name}: {gain!r} is so large that the position servo output "
                                 f"overflows over the travel [{x_min!r}, {x_max!r}]")
        self.solver_tol = p("solver_tol", solver_tol, minimum=0.0, strict=True)
        if not isinstance(solver_max_iter, int) or solver_max_iter < 1:
            raise ValueError(f"solver_max_iter: expected an int >= 1, got {solver_max_iter!r}")
        self.solver_max_iter = solver_max_iter
        if isinstance(sample, str):
            if sample not in SAMPLES:
                raise ValueError(f"sample: unknown {sample!r}; known: {sorted(SAMPLES)}")
            sample = SAMPLES[sample]
        if sample is not None and not isinstance(sample, Sample):
            raise ValueError(f"sample: expected None, a name or a Sample, got {sample!r}")
        if sample is not None:
            _law_or_none("sample.law", sample.law)
            param("sample.mass", sample.mass, minimum=0.0, strict=True, allow_array=False)
        self.sample = sample
        if hand is not None and not isinstance(hand, OperatorHand):
            raise ValueError(f"hand: expected None or an OperatorHand, got {hand!r}")
        self.has_tool = bool(sample is not None or handle
                             or (hand is not None and hand.location == "tool"))
        self.tool_mass = (sample.mass if sample is not None else self.handle_mass)
        self.tool_friction = sample.law if sample is not None else None
        self._hand = None
        self.hand = hand

        T = self.dt
        # implicit coupling constants: spring force K d + k2 (vc' - vb'), k2 = T K + B
        self._k2 = (T * self.coupling_stiffness + self.coupling_damping) if self.has_tool else 0.0
        self._Tk2 = T * self._k2
        self._Mc = self.carriage_mass + self._Tk2
        self._Mb = self.tool_mass + self._Tk2
        self._Ks_T2_Bs_T = T * T * self.stop_stiffness + T * self.stop_damping
        self._alpha = 1.0 - math.exp(-2.0 * math.pi * self.setpoint_cutoff * T)
        self._res = 1.0 / self.counts_per_metre
        cf, tf = self.carriage_friction, self.tool_friction
        self._phiz_c = cf._phi_z_scalar if cf is not None else None
        self._phi_c = cf._phi_scalar if cf is not None else None
        self._phiz_b = tf._phi_z_scalar if tf is not None else None
        self._design_check()
        self._seed = seed
        self.reset()

    # -- configuration ---------------------------------------------------------------------------
    @property
    def hand(self) -> OperatorHand | None:
        """The operator hand (settable; a hand on the tool side needs a tool-side body)."""
        return self._hand

    @hand.setter
    def hand(self, hand: OperatorHand | None) -> None:
        if hand is not None and not isinstance(hand, OperatorHand):
            raise ValueError(f"hand: expected None or an OperatorHand, got {hand!r}")
        if hand is not None and hand.location == "tool" and not getattr(self, "has_tool", True):
            raise ValueError("hand: this stage has no tool-side body; build it with a sample, "
                             "handle=True or a hand on the tool")
        self._hand = hand

    def _design_check(self) -> None:
        """Theorem 1's conditions for each friction at the Z its implicit step uses (largest Z:
        no end-stop contact); emits FrictionDesignWarning like the elements do."""
        msgs = []
        for name, law, M in (("carriage", self.carriage_friction, self._Mc),
                             ("tool", self.tool_friction, self._Mb)):
            if law is not None:
                msgs += [f"HapticStageSim {name}: {m}"
                         for m in law_validity(law, self.dt / M).problems(law)]
        warn_design(msgs, stacklevel=4)

    def friction_z(self) -> Tuple[float, float | None]:
        """Z of the carriage's and the tool's implicit friction steps (for design checks)."""
        return self.dt / self._Mc, (self.dt / self._Mb if self.has_tool else None)

    @property
    def breakaway(self) -> Tuple[float, float]:
        """(reverse, forward) force on the carriage that starts the stage moving from rest: the
        static levels of the carriage plus those of the sample (no sample: the carriage's)."""
        lo, hi = 0.0, 0.0
        for law in (self.carriage_friction, self.tool_friction):
            if law is not None:
                a, b = law.static_bounds()
                lo, hi = lo + float(a), hi + float(b)
        return lo, hi

    # -- state -----------------------------------------------------------------------------------
    def reset(self, seed: int | None = None) -> None:
        """Back to rest at ``x0`` at t = 0; reseed the noise (``seed`` None: the same seed)."""
        if seed is not None:
            self._seed = seed
        self._rng = np.random.default_rng(self._seed)
        self._noise: list = []
        self._ni = 0
        self._k = 0
        self._xc = self.x0
        self._vc = 0.0
        self._xb = self.x0
        self._vb = 0.0
        self._q = math.floor(self.x0 * self.counts_per_metre + 0.5)
        self._q_edge = self._q
        self._t_edge = 0.0
        self._vel_est = 0.0
        self._pos_meas = self._q * self._res
        self._pos_mode = False
        self._rf = self._pos_meas
        self.solver_iterations_max = 0
        self.solver_unconverged = 0
        self.last: StageReading | None = None

    @property
    def t(self) -> float:
        return self._k * self.dt

    def _draw(self) -> float:
        i = self._ni
        if i >= len(self._noise):
            self._noise = self._rng.standard_normal(4096).tolist()
            i = 0
        self._ni = i + 1
        return self._noise[i]

    # -- the step --------------------------------------------------------------------------------
    def _implicit_mass(self, P: float, M: float):
        """Model A (eq. 26) for the carriage with momentum ``P`` and effective mass ``M``:
        v* = P/M, f = Φ_Z(v*) with Z = T/M, v = v* − Z f (exactly 0 when stuck).
        Returns (v, f, stuck)."""
        vs = P / M
        phiz = self._phiz_c
        if phiz is None:
            return vs, 0.0, False
        Z = self.dt / M
        f = phiz(vs, Z)
        stuck = f == vs / Z
        return (0.0 if stuck else vs - Z * f), f, stuck

    def _carriage(self, P: float, M: float):
        """The carriage's implicit step ``M v = P − T f(v) + T s(v)``: friction f (Φ_Z, exact
        stick) and end-stop force s on the carriage. Returns (v, f, s, stuck)."""
        T = self.dt
        v, f, stuck = self._implicit_mass(P, M)
        xc = self._xc
        xn = xc + T * v
        if xn > self.x_max:
            lim, s = self.x_max, 1.0
        elif xn < self.x_min:
            lim, s = self.x_min, -1.0
        else:
            return v, f, 0.0, stuck
        # in contact: the bumper force s·(Ks pen + Bs s v) is implicit too
        Ks = self.stop_stiffness
        M2 = M + self._Ks_T2_Bs_T
        P2 = P - T * Ks * (xc - lim)
        v2, f2, stuck2 = self._implicit_mass(P2, M2)
        pen = s * (xc + T * v2 - lim)
        if pen > 0.0:
            mag = Ks * pen + self.stop_damping * s * v2
            if mag >= 0.0:
                return v2, f2, -s * mag, stuck2
            return v, f, 0.0, stuck  # separating faster than the bumper follows: no force
        # the bumper's force jumps at first contact (its damping): the carriage lands on the stop
        v0 = (lim - xc) / T
        f0 = self._phi_c(v0) if self._phi_c is not None else 0.0
        return v0, f0, (M * v0 - P) / T + f0, False

    def step(self, force_command: float | None = None,
             position_setpoint: float | None = None) -> StageReading:
        """Advance one step (see the class docstring); return the reading at its end."""
        T = self.dt
        # --- command (the controller sees the sensors of the previous step) ---
        if position_setpoint is not None:
            r = float(position_setpoint)
            ff = 0.0 if force_command is None else float(force_command)
            if not (math.isfinite(r) and math.isfinite(ff)):
                raise ValueError(f"command: must be finite, got setpoint {position_setpoint!r}, "
                                 f"force {force_command!r}")
            # the reference is limited to one travel length beyond either stop: the servo output
            # saturates long before (kp x 3.2 cm = 256 N >> max_force by default), and every
            # servo term stays finite for any finite setpoint (no inf - inf = NaN)
            if r > self._r_hi:
                r = self._r_hi
            elif r < self._r_lo:
                r = self._r_lo
            if not self._pos_mode:
                self._rf = self._pos_meas  # bumpless entry into position mode
            rf0 = self._rf
            rf = rf0 + self._alpha * (r - rf0)
            cmd = (self.kp * (rf - self._pos_meas) + self.kd * ((rf - rf0) / T - self._vel_est)
                   + ff)
            pos_mode = True
        else:
            cmd = 0.0 if force_command is None else float(force_command)
            if not math.isfinite(cmd):
                raise ValueError(f"force_command: must be finite, got {force_command!r}")
            rf = self._rf
            pos_mode = False
        Fmax = self.max_force
        if cmd > Fmax:
            u, sat = Fmax, True
        elif cmd < -Fmax:
            u, sat = -Fmax, True
        else:
            u, sat = cmd, False
        self._rf, self._pos_mode = rf, pos_mode

        k = self._k + 1
        t = k * T
        hand = self._hand
        fh = hand.force(t) if hand is not None else 0.0
        fh_c, fh_b = (fh, 0.0) if hand is None or hand.location == "carriage" else (0.0, fh)

        # --- dynamics: implicit Euler, carriage and tool solved jointly ---
        xc, vc, xb, vb = self._xc, self._vc, self._xb, self._vb
        mc = self.carriage_mass
        if self.has_tool:
            K = self.coupling_stiffness
            Tk2 = self._Tk2
            Kd = K * (xc - xb)
            Pc0 = mc * vc + T * (u + fh_c - Kd)
            mb, Mb = self.tool_mass, self._Mb
            Pb0 = mb * vb + T * (Kd + fh_b)
            phiz_b = self._phiz_b
            Zb = T / Mb
            vb1 = vb
            it = 0
            tol = self.solver_tol
            while True:
                it += 1
                vc1, fc, fs, c_stuck = self._carriage(Pc0 + Tk2 * vb1, self._Mc)
                vs = (Pb0 + Tk2 * vc1) / Mb
                if phiz_b is None:
                    vb_new, b_stuck = vs, False
                else:
                    fb = phiz_b(vs, Zb)
                    b_stuck = fb == vs / Zb
                    vb_new = 0.0 if b_stuck else vs - Zb * fb
                done = abs(vb_new - vb1) <= tol
                vb1 = vb_new
                if done:
                    break
                if it >= self.solver_max_iter:
                    self.solver_unconverged += 1
                    break
            if it > self.solver_iterations_max:
                self.solver_iterations_max = it
            vc_new, vb_new = vc1, vb1
        else:
            vc_new, fc, fs, c_stuck = self._carriage(mc * vc + T * (u + fh_c), mc)
            vb_new, b_stuck = vc_new, False
        xc_new = xc + T * vc_new
        xb_new = (xb + T * vb_new) if self.has_tool else xc_new
        if self.has_tool:
            f_true = (self.coupling_stiffness * (xc_new - xb_new)
                      + self.coupling_damping * (vc_new - vb_new))
            a_true = (vb_new - vb) / T
        else:
            f_true = 0.0
            a_true = (vc_new - vc) / T
        at_limit = fs != 0.0 or xc_new >= self.x_max or xc_new <= self.x_min

        # --- encoder and velocity estimate ---
        cpm = self.counts_per_metre
        q_old = self._q
        q = math.floor(xc_new * cpm + 0.5)
        v_est = self._vel_est
        if q != q_old:
            edge = (q - 0.5) if q > q_old else (q + 0.5)  # the last edge crossed
            t0 = t - T
            te = t0 + T * (edge * self._res - xc) / (xc_new - xc)
            tick = self.timer_resolution
            if tick > 0.0:
                te = math.floor(te / tick) * tick
            te = min(max(te, t0), t)
            span = te - self._t_edge
            v_est = ((q - self._q_edge) if span > 0.0 else (q - q_old)) * self._res / (
                span if span > 0.0 else T)
            self._t_edge, self._q_edge = te, q
        else:
            age = t - self._t_edge
            if age >= self.velocity_timeout:
                v_est = 0.0
            else:
                bound = self._res / age
                if v_est > bound:
                    v_est = bound
                elif v_est < -bound:
                    v_est = -bound
        pos_meas = q * self._res

        # --- analogue sensors ---
        lc = self.load_cell_range
        f_meas = f_true + self.force_noise * self._draw() if self.force_noise else f_true
        f_meas = lc if f_meas > lc else (-lc if f_meas < -lc else f_meas)
        ar = self.accel_range
        a_meas = a_true + self.accel_noise * self._draw() if self.accel_noise else a_true
        a_meas = ar if a_meas > ar else (-ar if a_meas < -ar else a_meas)

        self._k = k
        self._xc, self._vc, self._xb, self._vb = xc_new, vc_new, xb_new, vb_new
        self._q, self._vel_est, self._pos_meas = q, v_est, pos_meas
        reading = StageReading(t, pos_meas, v_est, f_meas, a_meas, cmd, u, sat, at_limit,
                               xc_new, vc_new, a_true, f_true, xb_new, vb_new, fh, fs,
                               c_stuck, b_stuck)
        self.last = reading
        return reading

    def rest_reading(self) -> StageReading:
        """The stage at rest at t = 0: the encoder at ``x0``, no motion, the hand's force at 0."""
        x0 = self.x0
        q = math.floor(x0 * self.counts_per_metre + 0.5)
        hand = self.hand  # None while hand_start waits for the first command
        fh = hand.force(0.0) if hand is not None else 0.0
        return StageReading(0.0, q / self.counts_per_metre, 0.0, 0.0, 0.0, 0.0, 0.0, False,
                            x0 <= self.x_min or x0 >= self.x_max, x0, 0.0, 0.0, 0.0, x0, 0.0, fh,
                            0.0, True, self.tool_friction is not None)

    def run(self, n: int, force_command: float | None = None,
            position_setpoint=None) -> list:
        """Step ``n`` times with one command (``position_setpoint`` may be a function of t)."""
        out = []
        for _ in range(int(n)):
            sp = position_setpoint((self._k + 1) * self.dt) if callable(position_setpoint) \
                else position_setpoint
            out.append(self.step(force_command, sp))
        return out

    def __repr__(self) -> str:
        s = self.sample.name if self.sample is not None else None
        return (f"HapticStageSim(dt={self.dt!r}, sample={s!r}, has_tool={self.has_tool}, "
                f"t={self.t:.6g})")
