"""Simulated arm recordings shaped like real arms' logs (issue 23 item 8).

:mod:`.synthetic` simulates what an ideal logger records with fric's own friction law; real
``joint_states`` logs differ in ways that break an identification pipeline that has only seen
those. :func:`realistic_recording` builds one on top of
:func:`~.synthetic.simulate_arm_recording` (the rigid body by Pinocchio, the effort
``τ = m·q̈ + τ_load + τ_f(q̇)``) with every effect below switchable, all deterministic from a
``seed``, and returns the truth beside the log (:class:`RealisticTruth`):

1. **A foreign friction law** (:class:`SigmoidFriction`): the saturating sigmoid Gaz et al.
   fitted to the Franka Emika Panda's seven joints (C. Gaz, M. Cognetti, A. Oliva, P. Robuffo
   Giordano, A. De Luca, "Dynamic identification of the Franka Emika Panda robot with retrieval
   of feasible parameters using penalty-based optimization", IEEE RA-L 4(4):4147–4154, 2019),

       τ_f(q̇) = φ1 / (1 + exp(−φ2 (q̇ + φ3))) − φ1 / (1 + exp(−φ2 φ3)),

   zero at rest, asymmetric (φ3 ≠ 0 shifts it), saturating at ``φ1(1 − s0)`` forwards and
   ``−φ1·s0`` backwards (``s0 = 1/(1 + exp(−φ2 φ3))``), no viscous term (an optional
   ``viscous·q̇`` is added here). :data:`PANDA_FRICTION` holds their identified values per joint,
   as published with the paper (the authors' release, ``get_FrictionTorque.m`` of
   FrankaEmikaPandaDynModel): φ1 0.30–1.28 N·m, φ2 5.1–17.1 s/rad, φ3 −0.046…0.040 rad/s. Not
   fric's law (Coulomb + viscous, paper 003), so a fit of fric's law has a model error, as on a
   real arm. A prismatic joint gets :data:`LIFT_FRICTION` (N, m/s), an assumed value of the order
   of a ball-screw column's friction (tens of N), not from a source.
2. **Effort offsets** per joint (a torque sensor's or current sensor's zero error): drawn with a
   random sign and a size uniform in ``offset_range`` (0.1–0.5 N·m; N for a prismatic joint:
   ``linear_offset_range``, 2–10 N), added to the joint torque.
3. **Motor-current effort**: the recorded effort is ``(τ + offset) / K`` [A], ``K = k_t × N``
   the motor's torque constant times the reduction [N·m/A; N/A for a prismatic joint]; by
   default ``K = effort limit / 20 A`` (a drive of 20 A peak current: 16 N·m/A for arm7's
   320 N·m shoulder, 2 N·m/A for its 40 N·m wrist, 50 N/A for the 1000 N lift).
4. **A lagging velocity column**: the recorded velocity is the true one delayed by
   ``velocity_delay`` [s] (a logging delay) and/or through a first-order low-pass of time
   constant ``velocity_time_constant`` [s] (a drive's velocity filter, 1/(Ts + 1)), evaluated in
   closed form on the multi-sine (steady state: the motion ran before the log began), plus white
   noise.
5. **A prismatic joint**: ``urdf/arm7_lift.urdf`` (arm7 on a vertical torso lift ``torso_lift``:
   m, m/s, N); positions of a prismatic joint are quantised by a linear encoder
   (``linear_resolution``, 1 µm), of a revolute one by ``encoder_counts_per_rev`` (2¹⁷).
6. **Messy logs**: stamps that jitter (``jitter`` [s], the standard deviation of a stamp's
   deviation from its tick; :data:`JITTER_MODES`), repeated rows (``repeat_fraction``, 5.5 %),
   skipped ticks (``skip_fraction``, 1.7 %), values printed with ``digits`` significant digits
   (6) and stamps to ``stamp_resolution`` (1 µs), at ``rate`` Hz (:data:`SERVICE_ROBOT_RATE`:
   100 Hz, like a mobile service robot's ``joint_states``).

:func:`write_realistic` writes the log with :func:`~.recording.write_arm_bag` (MCAP) or
:func:`~.recording.write_arm_csv` (a ``.csv`` path).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Mapping, Optional, Union

import numpy as np

from .recording import ArmRecording, write_arm_bag, write_arm_csv
from .report import joint_units
from .synthetic import simulate_arm_recording

__all__ = ["SigmoidFriction", "RealisticTruth", "RealisticRecording", "PANDA_FRICTION",
           "LIFT_FRICTION", "SERVICE_ROBOT_RATE", "JITTER_MODES", "REPEAT_MODES",
           "default_friction", "realistic_trajectory", "realistic_recording", "write_realistic",
           "round_significant"]


@dataclass(frozen=True)
class SigmoidFriction:
    """Gaz et al. (2019)'s sigmoid joint friction (module docstring, item 1), plus an optional
    viscous term: ``τ_f(v) = φ1/(1 + exp(−φ2 (v + φ3))) − φ1/(1 + exp(−φ2 φ3)) + viscous·v``.

    ``phi1`` [N·m or N], ``phi2`` [s/rad or s/m], ``phi3`` [rad/s or m/s], ``viscous``
    [N·m·s/rad or N·s/m]. No gear: :meth:`gear` is the load itself (what
    :func:`~.synthetic.simulate_arm_recording` asks of a law).
    """

    phi1: float
    phi2: float
    phi3: float
    viscous: float = 0.0

    def kinetic(self, v) -> np.ndarray:
        """τ_f(v) (the class docstring)."""
        v = np.asarray(v, dtype=float)
        return (self.phi1 * (_logistic(self.phi2 * (v + self.phi3)) - self.s0)
                + self.viscous * v)

    def gear(self, tau_load, v) -> np.ndarray:
        """The load torque passed on unchanged (no gear efficiency)."""
        return np.asarray(tau_load, dtype=float) + 0.0 * np.asarray(v, dtype=float)

    @property
    def s0(self) -> float:
        """``1/(1 + exp(−φ2 φ3))``: the sigmoid's value at rest."""
        return float(_logistic(self.phi2 * self.phi3))

    @property
    def forward_level(self) -> float:
        """The sigmoid's level for v → +∞, ``φ1 (1 − s0)`` (the viscous term aside)."""
        return self.phi1 * (1.0 - self.s0)

    @property
    def backward_level(self) -> float:
        """The sigmoid's level for v → −∞, ``−φ1 s0``."""
        return -self.phi1 * self.s0


def _logistic(x):
    return 0.5 * (1.0 + np.tanh(0.5 * np.asarray(x, dtype=float)))  # 1/(1 + e^−x), no overflow


#: Gaz et al. 2019's identified friction of the Panda's joints 1–7 (φ1 [N·m], φ2 [s/rad],
#: φ3 [rad/s]) as released with the paper; assigned to an arm's revolute joints in order.
PANDA_FRICTION = (
    SigmoidFriction(0.54615, 5.1181, 0.039533),
    SigmoidFriction(0.87224, 9.0657, 0.025882),
    SigmoidFriction(0.64068, 10.136, -0.04607),
    SigmoidFriction(1.2794, 5.5903, 0.036194),
    SigmoidFriction(0.83904, 8.3469, 0.026226),
    SigmoidFriction(0.30301, 17.133, -0.021047),
    SigmoidFriction(0.56489, 10.336, 0.0035526),
)
#: A prismatic joint's friction [N, s/m, m/s; N·s/m]: assumed (tens of N, saturating within
#: ~1 cm/s, slightly asymmetric, a little viscous drag), not from a source.
LIFT_FRICTION = SigmoidFriction(60.0, 300.0, 0.002, viscous=80.0)
#: A mobile service robot's joint_states rate [Hz].
SERVICE_ROBOT_RATE = 100.0
#: ``"loop"``: a control loop that wakes late: each sample is taken and stamped at its tick plus
#: an exponential latency (mean = std = ``jitter``), never before the previous sample (values
#: at the stamps: the stamps are right, the spacing uneven); ``"stamp"``: samples on the ticks,
#: stamps off by Gaussian errors (a normal cut at ±3 of its std, scaled so that the std is
#: ``jitter``: at most ±3.04 × ``jitter``) — a logger stamping on receipt; rows stay in logging
#: order, so a stamp can fall behind the previous one.
JITTER_MODES = ("loop", "stamp")
#: ``"duplicate"``: a row logged twice (same stamp, same values); ``"stale"``: a tick that
#: repeats the previous tick's values under its own stamp (a driver without a new reading).
REPEAT_MODES = ("duplicate", "stale")


def default_friction(dyn) -> Dict[str, SigmoidFriction]:
    """:data:`PANDA_FRICTION` on an arm's revolute joints in order (cycling past the seventh),
    :data:`LIFT_FRICTION` on its prismatic ones.

    Parameters
    ----------
    dyn : fric_core.transmission.urdf_dynamics.UrdfDynamics
        The arm.

    Returns
    -------
    dict
        Joint name → :class:`SigmoidFriction`.
    """
    out, k = {}, 0
    for name, kind in zip(dyn.joint_names, dyn.joint_kinds):
        if kind == "prismatic":
            out[name] = LIFT_FRICTION
        else:
            out[name] = PANDA_FRICTION[k % len(PANDA_FRICTION)]
            k += 1
    return out


@dataclass(frozen=True)
class _Multisine:
    """``q_j(t) = c_j + Σ_i A_ij sin(ω_i t + φ_ij)`` and its derivatives, in closed form."""

    center: np.ndarray  # (n,)
    amp: np.ndarray  # (m, n)
    w: np.ndarray  # (m,)
    phase: np.ndarray  # (m, n)

    def _arg(self, t):
        return np.asarray(t, dtype=float)[:, None, None] * self.w[None, :, None] + self.phase

    def q(self, t):
        return self.center + np.einsum("tmn,mn->tn", np.sin(self._arg(t)), self.amp)

    def v(self, t, delay: float = 0.0, time_constant: float = 0.0):
        """q̇ at ``t − delay`` through ``1/(time_constant·s + 1)`` (steady state)."""
        wt = self.w * time_constant
        gain = 1.0 / np.sqrt(1.0 + wt ** 2)
        lag = np.arctan(wt)
        arg = self._arg(np.asarray(t, dtype=float) - delay) - lag[None, :, None]
        return np.einsum("tmn,mn->tn", np.cos(arg), self.amp * (self.w * gain)[:, None])

    def a(self, t):
        return -np.einsum("tmn,mn->tn", np.sin(self._arg(t)), self.amp * (self.w ** 2)[:, None])


def realistic_trajectory(dyn, frequencies=(0.1, 0.23, 0.37, 0.51), amplitude: float = 0.8,
                         linear_amplitude: float = 0.12, margin: float = 0.2,
                         linear_margin: float = 0.02, speed_fraction: float = 0.8,
                         seed: int = 0) -> _Multisine:
    """A multi-sine per joint inside the joint's position and velocity limits, in closed form.

    As :func:`~.synthetic.multisine_trajectory` (random amplitudes and phases, centred in the
    range), but with a prismatic joint's excursion in metres and every joint's peak speed at
    most ``speed_fraction`` of its URDF velocity limit; evaluable at any time (the lagging
    velocity column and jittered samples need that).

    Parameters
    ----------
    dyn : fric_core.transmission.urdf_dynamics.UrdfDynamics
        The arm (limits, joint types).
    frequencies : sequence of float
        The sines' frequencies [Hz].
    amplitude : float
        Largest excursion of a revolute joint from the middle of its range [rad].
    linear_amplitude : float
        Largest excursion of a prismatic joint [m].
    margin : float
        Kept clear of a revolute joint's limits [rad].
    linear_margin : float
        Kept clear of a prismatic joint's limits [m].
    speed_fraction : float
        Peak speed at most this fraction of the URDF velocity limit.
    seed : int
        Seed of the amplitudes and phases.

    Returns
    -------
    object
        The trajectory: methods ``q(t)``, ``v(t, delay, time_constant)``, ``a(t)`` giving
        (len(t), n) arrays.
    """
    rng = np.random.default_rng(seed)
    w = 2.0 * np.pi * np.asarray(frequencies, dtype=float)
    if w.ndim != 1 or not w.size or not np.all(np.isfinite(w) & (w > 0)):
        raise ValueError(f"frequencies: expected positive frequencies [Hz], got {frequencies!r}")
    n = dyn.n
    amp = np.zeros((w.size, n))
    phase = np.zeros((w.size, n))
    center = np.zeros(n)
    t = np.linspace(0.0, 2.0 / min(w / (2 * np.pi)), 20001)  # two of the slowest periods
    vmax = np.array([_velocity_limit(dyn, j) for j in range(n)])
    for j, kind in enumerate(dyn.joint_kinds):
        a = rng.uniform(0.5, 1.0, w.size)
        ph = rng.uniform(0.0, 2.0 * np.pi, w.size)
        lo, hi = float(dyn.lower[j]), float(dyn.upper[j])
        lin = kind == "prismatic"
        want, edge = (linear_amplitude, linear_margin) if lin else (amplitude, margin)
        if math.isfinite(lo + hi):
            center[j] = 0.5 * (lo + hi)
            room = min(want, 0.5 * (hi - lo) - edge)
        else:
            room = want
        if not room > 0:
            raise ValueError(f"{'linear_margin' if lin else 'margin'}: joint "
                             f"{dyn.joint_names[j]}'s range is too narrow")
        arg = np.outer(t, w) + ph
        k = room / np.max(np.abs(np.sin(arg) @ a))
        speed = k * np.max(np.abs(np.cos(arg) @ (a * w)))
        if math.isfinite(vmax[j]) and vmax[j] > 0 and speed > speed_fraction * vmax[j]:
            k *= speed_fraction * vmax[j] / speed
        amp[:, j], phase[:, j] = k * a, ph
    return _Multisine(center=center, amp=amp, w=w, phase=phase)


def round_significant(x, digits: int) -> np.ndarray:
    """``x`` as printed with ``digits`` significant digits (``%.{digits}g``) and read back.

    Parameters
    ----------
    x : array_like
        Values.
    digits : int
        Significant digits (≥ 1).

    Returns
    -------
    ndarray
        The nearest doubles to the printed values (``repr`` prints them with ≤ ``digits``
        digits).
    """
    x = np.asarray(x, dtype=float)
    fmt = f"{{:.{int(digits)}g}}"
    return np.array([float(fmt.format(v)) for v in x.ravel().tolist()]).reshape(x.shape)


@dataclass
class RealisticTruth:
    """What :func:`realistic_recording` put into the log, per recorded row (arrays (rows, n),
    joints in ``joint_names`` order) and per joint (dicts by name).

    ``t_sample`` (rows,) [s]: when each row's values were true (the stamps are ``recording.t``);
    ``tick`` (rows,) int: each row's tick index (``tick / rate`` its nominal time);
    ``q``, ``v``, ``a``: the true motion at ``t_sample``; ``v_recorded_clean``: the recorded
    velocity column before noise and rounding; ``tau``: the true joint torque/force (rigid body
    + friction, no offset, no noise) [N·m or N]; ``tau_load``: its rigid-body part;
    ``friction``: the true laws (``friction[name].kinetic(v)`` is the true curve);
    ``offsets``: effort offsets [N·m or N]; ``effort_scale``: K [N·m/A or N/A] per joint when
    the effort is a current (multiply the recorded effort by it; ``fric identify
    --effort-scale``), else None; ``velocity_delay``, ``velocity_time_constant`` [s];
    ``effort_noise_std``, ``velocity_noise_std`` per joint (in the joint's units, the effort's
    before the current conversion); ``jitter`` [s] and ``jitter_mode``; ``repeated``: row
    indices that repeat the row before; ``skipped``: tick indices with no row; ``units``: per
    joint, :func:`~.report.joint_units`; ``rate`` [Hz]; ``seed``; ``armature`` (n,).
    """

    joint_names: tuple
    t_sample: np.ndarray
    tick: np.ndarray
    q: np.ndarray
    v: np.ndarray
    a: np.ndarray
    v_recorded_clean: Optional[np.ndarray]
    tau: np.ndarray
    tau_load: np.ndarray
    friction: Dict[str, object]
    offsets: Dict[str, float]
    effort_scale: Optional[Dict[str, float]]
    velocity_delay: float
    velocity_time_constant: float
    effort_noise_std: Dict[str, float]
    velocity_noise_std: Dict[str, float]
    jitter: float
    jitter_mode: str
    repeated: np.ndarray
    skipped: np.ndarray
    units: Dict[str, Dict[str, str]]
    rate: float
    seed: int
    armature: np.ndarray = field(default_factory=lambda: np.zeros(0))

    def curve(self, name: str, v) -> np.ndarray:
        """The true friction of joint ``name`` at velocities ``v``.

        Parameters
        ----------
        name : str
            A joint.
        v : array_like
            Velocities [rad/s or m/s].

        Returns
        -------
        ndarray
            τ_f(v) [N·m or N].
        """
        return self.friction[name].kinetic(np.asarray(v, dtype=float))


@dataclass
class RealisticRecording:
    """:func:`realistic_recording`'s result: the log as read back (``recording``) and the
    truth."""

    recording: ArmRecording
    truth: RealisticTruth


def _per_joint(name: str, value, dyn, default) -> Dict[str, float]:
    """A scalar, a mapping joint → value, or None (→ ``default(j)``) as a dict by joint."""
    if value is None:
        return {n: float(default(j)) for j, n in enumerate(dyn.joint_names)}
    if isinstance(value, Mapping):
        unknown = [k for k in value if k not in dyn.joint_names]
        if unknown:
            raise ValueError(f"{name}: joint(s) {unknown} not in the arm "
                             f"({', '.join(dyn.joint_names)})")
        out = {n: float(value.get(n, default(j))) for j, n in enumerate(dyn.joint_names)}
    else:
        out = {n: float(value) for n in dyn.joint_names}
    bad = [n for n, x in out.items() if not math.isfinite(x)]
    if bad:
        raise ValueError(f"{name}: not a finite number for joint(s) {bad}")
    return out


def _fraction(name: str, x: float) -> float:
    if not (isinstance(x, (int, float)) and math.isfinite(x) and 0.0 <= x < 0.5):
        raise ValueError(f"{name}: expected a fraction in [0, 0.5), got {x!r}")
    return float(x)


def realistic_recording(dyn, duration: float = 30.0, rate: float = 500.0, *,
                        friction: Optional[Mapping[str, object]] = None,
                        armature=None,
                        offsets: Union[bool, Mapping[str, float]] = True,
                        offset_range=(0.1, 0.5), linear_offset_range=(2.0, 10.0),
                        current: Union[bool, Mapping[str, float]] = True,
                        velocity: bool = True, velocity_delay: float = 0.0,
                        velocity_time_constant: float = 0.15,
                        velocity_noise_std=None, effort_noise_std=None,
                        encoder_counts_per_rev: Optional[int] = 2 ** 17,
                        linear_resolution: Optional[float] = 1e-6,
                        jitter: float = 0.7e-3, jitter_mode: str = "loop",
                        repeat_fraction: float = 0.055, repeat_mode: str = "duplicate",
                        skip_fraction: float = 0.017, digits: Optional[int] = 6,
                        stamp_resolution: Optional[float] = 1e-6, start: float = 0.1,
                        trajectory: Optional[Mapping] = None,
                        seed: int = 0) -> RealisticRecording:
    """A simulated joint_states log shaped like a real arm's (module docstring), and its truth.

    Parameters
    ----------
    dyn : fric_core.transmission.urdf_dynamics.UrdfDynamics
        The true arm (e.g. ``UrdfDynamics("arm7_lift")``).
    duration : float
        Length [s].
    rate : float
        Tick rate [Hz] (:data:`SERVICE_ROBOT_RATE` for a service robot's 100 Hz).
    friction : mapping, optional
        Joint → law with ``kinetic(v)`` and ``gear(tau_load, v)``; default
        :func:`default_friction` (Gaz et al.'s Panda sigmoids, the lift's).
    armature : (n,) array_like, optional
        Rotor inertia referred to each joint [kg·m² or kg] (default 0).
    offsets : bool or mapping
        Effort offsets: True draws them (``offset_range``/``linear_offset_range``, random sign),
        False none, a mapping gives them per joint [N·m or N] (others 0).
    offset_range : (float, float)
        Size range of a revolute joint's drawn offset [N·m].
    linear_offset_range : (float, float)
        Size range of a prismatic joint's drawn offset [N].
    current : bool or mapping
        Record the effort as motor current ``(τ + offset)/K``: True with ``K = effort limit /
        20 A``, a mapping joint → K [N·m/A or N/A] (others as True), False records torques.
    velocity : bool
        Record a velocity column (False: positions and efforts only).
    velocity_delay : float
        The recorded velocity's pure delay [s] (≥ 0).
    velocity_time_constant : float
        The recorded velocity's first-order filter time constant [s] (≥ 0; 0: none).
    velocity_noise_std : float or mapping, optional
        White noise of the recorded velocity (default 0.2 % of each joint's velocity limit).
    effort_noise_std : float or mapping, optional
        White noise of the joint torque/force before the current conversion (default 0.1 % of
        each joint's effort limit: 0.32 N·m on a 320 N·m joint, 1 N on the 1000 N lift).
    encoder_counts_per_rev : int or None
        Revolute joints' encoder counts per revolution (None: exact positions).
    linear_resolution : float or None
        Prismatic joints' encoder resolution [m] (None: exact).
    jitter : float
        Standard deviation of the stamps' deviation from their ticks [s] (0: none); see
        :data:`JITTER_MODES`.
    jitter_mode : str
        ``"loop"`` or ``"stamp"`` (:data:`JITTER_MODES`).
    repeat_fraction : float
        Fraction of the rows that repeat the row before (rounded to a count), in [0, 0.5).
    repeat_mode : str
        ``"duplicate"`` or ``"stale"`` (:data:`REPEAT_MODES`).
    skip_fraction : float
        Fraction of the ticks with no row (rounded to a count; never the first or last).
    digits : int or None
        Significant digits of positions, velocities and efforts (None: full precision).
    stamp_resolution : float or None
        Stamps rounded to this [s] (None: not rounded).
    start : float
        Time of the first tick [s] (> 3 × ``jitter``: no stamp before 0).
    trajectory : mapping, optional
        Keyword arguments of :func:`realistic_trajectory` (its ``seed`` defaults to ``seed``).
    seed : int
        Seed of everything random.

    Returns
    -------
    RealisticRecording
        ``recording`` (an :class:`~.recording.ArmRecording`: stamps, q, v or None, effort) and
        ``truth`` (:class:`RealisticTruth`).

    Raises
    ------
    ValueError
        Naming the argument out of range or the joint it concerns.
    """
    if not (isinstance(duration, (int, float)) and duration > 0 and math.isfinite(duration)):
        raise ValueError(f"duration: expected a positive number of seconds, got {duration!r}")
    if not (isinstance(rate, (int, float)) and rate > 0 and math.isfinite(rate)):
        raise ValueError(f"rate: expected a positive rate [Hz], got {rate!r}")
    for name, x in (("velocity_delay", velocity_delay),
                    ("velocity_time_constant", velocity_time_constant), ("jitter", jitter)):
        if not (isinstance(x, (int, float)) and math.isfinite(x) and x >= 0):
            raise ValueError(f"{name}: expected a finite number of seconds >= 0, got {x!r}")
    if jitter_mode not in JITTER_MODES:
        raise ValueError(f"jitter_mode: expected one of {JITTER_MODES}, got {jitter_mode!r}")
    if repeat_mode not in REPEAT_MODES:
        raise ValueError(f"repeat_mode: expected one of {REPEAT_MODES}, got {repeat_mode!r}")
    repeat_fraction = _fraction("repeat_fraction", repeat_fraction)
    skip_fraction = _fraction("skip_fraction", skip_fraction)
    if digits is not None and not (isinstance(digits, int) and 1 <= digits <= 17):
        raise ValueError(f"digits: expected an integer 1..17 or None, got {digits!r}")
    if not (math.isfinite(start) and start >= 0 and (jitter_mode == "loop" or start > 3 * jitter)):
        raise ValueError(f"start: expected a time [s] > 3 × jitter = {3 * jitter:g}, got "
                         f"{start!r}")
    names = tuple(dyn.joint_names)
    n = dyn.n
    kinds = tuple(dyn.joint_kinds)
    lin = np.array([k == "prismatic" for k in kinds])
    law = default_friction(dyn) if friction is None else dict(friction)
    missing = [j for j in names if j not in law]
    if missing:
        raise ValueError(f"friction: no law for joint(s) {missing}")
    rng = np.random.default_rng(seed)
    r_traj, r_skip, r_jit, r_rep, r_off, r_noise = rng.spawn(6)
    traj = realistic_trajectory(dyn, **{"seed": seed, **dict(trajectory or {})})

    # ticks, the skipped ones, and when each remaining row's values are true
    N = int(math.floor(duration * rate + 1e-9))
    if N < 10:
        raise ValueError(f"duration: {duration!r} s at {rate!r} Hz gives {N} ticks (need >= 10)")
    n_skip = int(round(skip_fraction * N))
    skipped = np.sort(r_skip.choice(np.arange(1, N - 1), n_skip, replace=False)) if n_skip \
        else np.zeros(0, dtype=int)
    tick = np.setdiff1d(np.arange(N), skipped)
    t_tick = start + tick / rate
    if jitter == 0.0:
        t_sample = t_tick.copy()
        stamps = t_tick.copy()
    elif jitter_mode == "loop":
        late = r_jit.exponential(jitter, tick.size)
        t_sample = t_tick + late
        floor = 0.1 / rate  # a sequential loop: never within a tenth of a period of the last
        for k in range(1, t_sample.size):
            if t_sample[k] < t_sample[k - 1] + floor:
                t_sample[k] = t_sample[k - 1] + floor
        stamps = t_sample.copy()
    else:
        z = r_jit.standard_normal(tick.size * 2)
        z = z[np.abs(z) <= 3.0][:tick.size]
        while z.size < tick.size:  # (practically never: 0.27 % fall outside)
            extra = r_jit.standard_normal(tick.size)
            z = np.concatenate([z, extra[np.abs(extra) <= 3.0]])[:tick.size]
        t_sample = t_tick.copy()
        stamps = t_tick + jitter / _TRUNC3_STD * z

    # the motion and the efforts at the sampling instants
    q_true, v_true, a_true = traj.q(t_sample), traj.v(t_sample), traj.a(t_sample)
    sim = simulate_arm_recording(dyn, t_sample, q_true, v_true, a_true, law, armature=armature,
                                 torque_noise_std=0.0, encoder_counts_per_rev=None, seed=seed)
    tau = sim.tau_true
    if offsets is True:
        size = np.where(lin, r_off.uniform(*linear_offset_range, n), r_off.uniform(*offset_range,
                                                                                   n))
        sign = r_off.choice([-1.0, 1.0], n)
        offs = {nm: float(s * m) for nm, s, m in zip(names, sign, size)}
    elif offsets is False or offsets is None:
        offs = {nm: 0.0 for nm in names}
    else:
        offs = _per_joint("offsets", offsets, dyn, lambda j: 0.0)
    e_std = _per_joint("effort_noise_std", effort_noise_std, dyn,
                       lambda j: 1e-3 * float(dyn.effort[j]))
    v_std = _per_joint("velocity_noise_std", velocity_noise_std, dyn,
                       lambda j: 2e-3 * float(_velocity_limit(dyn, j)))
    for nm, x in list(e_std.items()) + list(v_std.items()):
        if x < 0:
            raise ValueError(f"noise std: negative for joint {nm}")
    effort = tau + np.array([offs[nm] for nm in names]) \
        + r_noise.standard_normal(tau.shape) * np.array([e_std[nm] for nm in names])
    scale = None
    if current is not False and current is not None:
        scale = _per_joint("current", None if current is True else current, dyn,
                           lambda j: float(dyn.effort[j]) / 20.0)
        bad = [nm for nm, k in scale.items() if not k > 0]
        if bad:
            raise ValueError(f"current: K must be > 0 [N·m/A or N/A] for joint(s) {bad}")
        effort = effort / np.array([scale[nm] for nm in names])
    v_clean = None
    v_rec = None
    if velocity:
        v_clean = traj.v(t_sample, velocity_delay, velocity_time_constant)
        v_rec = v_clean + r_noise.standard_normal(v_clean.shape) * np.array(
            [v_std[nm] for nm in names])
    q_rec = q_true.copy()
    if encoder_counts_per_rev is not None:
        if not (int(encoder_counts_per_rev) == encoder_counts_per_rev
                and encoder_counts_per_rev > 0):
            raise ValueError(f"encoder_counts_per_rev: expected a positive integer, got "
                             f"{encoder_counts_per_rev!r}")
        res = 2.0 * np.pi / encoder_counts_per_rev
        q_rec[:, ~lin] = np.round(q_rec[:, ~lin] / res) * res
    if linear_resolution is not None:
        if not (math.isfinite(linear_resolution) and linear_resolution > 0):
            raise ValueError(f"linear_resolution: expected a resolution > 0 [m], got "
                             f"{linear_resolution!r}")
        q_rec[:, lin] = np.round(q_rec[:, lin] / linear_resolution) * linear_resolution

    # repeated rows
    rows = np.arange(tick.size)
    n_rep = int(round(repeat_fraction * tick.size))
    rep_src = np.sort(r_rep.choice(np.arange(1, tick.size), n_rep, replace=False)) if n_rep \
        else np.zeros(0, dtype=int)
    if repeat_mode == "duplicate":
        # row r logged twice: the copy right after it
        order = np.sort(np.concatenate([rows, rep_src]), kind="stable")
        repeated = np.flatnonzero(np.diff(order) == 0) + 1
        src = order
        stamp_rows = stamps[order]
    else:
        # tick r shows the values of the row before it, under its own stamp
        src = rows.copy()
        for r in rep_src:  # in order: a run of stale ticks keeps showing the same reading
            src[r] = src[r - 1]
        repeated = rep_src
        stamp_rows = stamps
    if stamp_resolution is not None:
        stamp_rows = np.round(stamp_rows / stamp_resolution) * stamp_resolution

    def show(x):
        return x if digits is None else round_significant(x, digits)

    rec = ArmRecording(t=stamp_rows, joint_names=names, q=show(q_rec[src]),
                       v=None if v_rec is None else show(v_rec[src]), effort=show(effort[src]),
                       source=f"realistic_recording(seed={seed})")
    truth = RealisticTruth(
        joint_names=names, t_sample=t_sample[src], tick=tick[src], q=q_true[src],
        v=v_true[src], a=a_true[src], v_recorded_clean=None if v_clean is None else v_clean[src],
        tau=tau[src], tau_load=sim.tau_load[src], friction={nm: law[nm] for nm in names},
        offsets=offs, effort_scale=scale, velocity_delay=float(velocity_delay) if velocity
        else 0.0, velocity_time_constant=float(velocity_time_constant) if velocity else 0.0,
        effort_noise_std=e_std, velocity_noise_std=v_std, jitter=float(jitter),
        jitter_mode=jitter_mode, repeated=repeated, skipped=skipped,
        units={nm: joint_units(k) for nm, k in zip(names, kinds)}, rate=float(rate),
        seed=int(seed), armature=sim.armature)
    return RealisticRecording(recording=rec, truth=truth)


#: Standard deviation of a standard normal cut at ±3.
_TRUNC3_STD = math.sqrt(1.0 - 6.0 * math.exp(-4.5) / math.sqrt(2.0 * math.pi)
                        / math.erf(3.0 / math.sqrt(2.0)))


def _velocity_limit(dyn, j: int) -> float:
    """The URDF velocity limit of joint j (Pinocchio's ``velocityLimit``)."""
    model = dyn.model
    jid = model.getJointId(dyn.joint_names[j])
    return float(model.velocityLimit[model.joints[jid].idx_v])


def write_realistic(path, sim: RealisticRecording, storage: str = "mcap",
                    topic: str = "joint_states") -> Path:
    """Write a realistic recording's log as ``fric identify`` reads it.

    A path ending in ``.csv``: :func:`~.recording.write_arm_csv` (rows in logging order,
    duplicates kept); otherwise a rosbag2 directory by :func:`~.recording.write_arm_bag` (one
    JointState per row; the reader merges rows with the same stamp, as a real bag's would be).

    Parameters
    ----------
    path : str or path-like
        A ``.csv`` file, or the bag directory to create.
    sim : RealisticRecording
        From :func:`realistic_recording`.
    storage : str
        The bag's storage plugin (``"mcap"`` or ``"sqlite3"``).
    topic : str
        The bag's topic.

    Returns
    -------
    pathlib.Path
        What was written.
    """
    path = Path(path)
    if path.suffix.lower() == ".csv":
        tr = sim.truth
        note = (f"realistic_recording seed {tr.seed}: rate {tr.rate:g} Hz, jitter "
                f"{tr.jitter * 1e3:g} ms ({tr.jitter_mode}), {tr.repeated.size} repeated rows, "
                f"{tr.skipped.size} skipped ticks; effort "
                + ("motor current [A]" if tr.effort_scale else "joint torque/force"))
        write_arm_csv(path, sim.recording, header=note)
        return path
    return write_arm_bag(path, sim.recording, topic=topic, storage=storage)
