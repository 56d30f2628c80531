"""What fric's simulated arm chain needs to run a user's own URDF (issue 24, item 1).

``launch/arm_friction.launch.xml`` ships tuned parameter files for its two bundled arms. For any
other URDF the same numbers follow from the URDF itself, by the rules written out here once (the
``fric arm-params`` command writes them to a parameter file to read and tune; the nodes of the
chain use them directly when they are given ``urdf`` and no joint list):

joints
    The movable joints (revolute, continuous, prismatic) except those the chain cannot drive on
    its own: ``<mimic>`` joints (they follow their master; a gripper's second finger) and joints
    whose range is narrower than twice :data:`LIMIT_MARGIN` (a gripper's fingers: a Panda's
    0.04 m). Each one left out is named with its reason; ``joints=`` chooses explicitly.
initial positions
    0 where 0 lies at least :data:`LIMIT_MARGIN` inside the limits, else mid-range (the Panda's
    joint 4, range [−3.07, −0.07] rad, starts at −1.57).
gains
    A PD of bandwidth ω = :data:`BANDWIDTH` and damping ratio ζ = :data:`DAMPING_RATIO` on the
    inertia each joint feels with the others free, m_i = 1 / (M⁻¹)_ii with M the URDF's mass
    matrix + rotor inertia, the smallest over the sinusoid's start, centre and far end:
    k_p = m_i ω², k_d = 2 ζ m_i ω. Not the diagonal M_ii the bundled arms' files use: where two
    axes are parallel (a Panda's joints 1 and 3 at q₂ = 0) M_ii puts the joints' relative mode at
    7.8 ω (233 rad/s for the test arm of test/own_arm_urdf.py), which the chain's 500 Hz loop
    with a step of delay does not hold (its tracking error reached 0.2 rad); with m_i every mode
    of M⁻¹K stays within 0.09–1.45 ω at those poses (measured on that arm and on arm7; the
    slowest is the arm turning about a vertical axis two soft parallel joints share, which the
    tracker's feed-forward carries).
effort limits
    The URDF's ``<limit effort>``; where it is absent or 0 (continuous joints may have none),
    k_p × 1 rad + 2 |g_i(q₀)|: the PD's effort at a 1 rad error plus twice the gravity torque, a
    stated default reported with the joint's name.
sinusoid
    ``q = center − A cos(2π f t)`` from the initial position (center − A = q₀) towards the side
    with more room, A = min(:data:`MAX_AMPLITUDE`, 0.4 × that room), f = :data:`SINE_FREQUENCY`,
    slowed where the URDF's velocity limit is below 2π f A.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence
from xml.etree import ElementTree

import numpy as np

__all__ = ["ArmSetup", "arm_setup", "LIMIT_MARGIN", "BANDWIDTH", "DAMPING_RATIO",
           "MAX_AMPLITUDE", "SINE_FREQUENCY", "ROTOR_INERTIA", "write_arm_parameters"]

#: Distance kept from the position limits, in the joint's unit (rad or m); ``fric excite``'s
#: default ``--margin``. A joint whose range is narrower than twice this cannot move.
LIMIT_MARGIN = 0.1
#: The tracker's PD bandwidth [rad/s] (config/arm_friction_arm7.yaml: "~30 rad/s").
BANDWIDTH = 30.0
#: The PD's damping ratio (config/arm_friction_arm7.yaml: "~0.8").
DAMPING_RATIO = 0.8
#: The largest sinusoid amplitude [rad or m] (the bundled arms' 0.5).
MAX_AMPLITUDE = 0.5
#: The sinusoid's frequency [Hz] (the bundled arm7's 0.1: slow, friction dominates inertia).
SINE_FREQUENCY = 0.1
#: Rotor inertia referred to each joint [kg m²] (transmission_sim's default).
ROTOR_INERTIA = 0.01


@dataclass(frozen=True)
class ArmSetup:
    """The chain's parameters for one URDF (see the module docstring for each rule)."""

    urdf: str
    joints: tuple[str, ...]
    #: (joint, reason) for every movable joint left out
    left_out: tuple[tuple[str, str], ...]
    kinds: tuple[str, ...]
    lower: np.ndarray
    upper: np.ndarray
    initial_positions: np.ndarray
    #: 1 / (M⁻¹)_ii, M with rotor inertia, the least over the sinusoid's poses [kg m² or kg]
    inertia: np.ndarray
    kp: np.ndarray
    kd: np.ndarray
    max_effort: np.ndarray
    #: joints whose effort bound is the stated default (the URDF gives none)
    effort_defaulted: tuple[str, ...]
    sine_center: np.ndarray
    sine_amplitude: np.ndarray
    sine_frequency: float
    rotor_inertia: float
    notes: tuple[str, ...] = field(default=())

    def node_parameters(self, rate: float = 500.0) -> dict[str, dict]:
        """``{node: {parameter: value}}`` for arm_friction.launch.xml's nodes (plain Python values,
        as a ``ros__parameters`` file holds them)."""
        joints = lambda: list(self.joints)  # noqa: E731 (a list each: no YAML aliases)
        fl = lambda a: [float(round(x, 6)) for x in np.asarray(a, float)]  # noqa: E731
        sim = lambda: {  # noqa: E731 (transmission_sim and mujoco_sim: the same meaning)
            "urdf": self.urdf, "joint_names": joints(),
            "rotor_inertia": [self.rotor_inertia], "damping": [0.0],
            "initial_positions": fl(self.initial_positions),
            "rate": float(rate), "sync": "realtime", "command_timeout": 0.1,
            "hold_until_command": True,
        }
        return {
            "transmission_sim": sim(),
            "mujoco_sim": sim(),
            "trajectory_tracker": {
                "joints": joints(), "urdf": self.urdf, "feed_forward": "inverse_dynamics",
                "rotor_inertia": [self.rotor_inertia],
                "kp": fl(self.kp), "kd": fl(self.kd), "max_effort": fl(self.max_effort),
                "sine_center": fl(self.sine_center), "sine_amplitude": fl(self.sine_amplitude),
                "sine_frequency": [float(self.sine_frequency)], "sine_duration": 10.0,
                "start_delay": 2.0, "approach_time": 2.0, "hold_time": 0.5,
                "watchdog_timeout": 0.2,
            },
            "fric_recorder": {"kind": "arm", "effort_topic": "effort_controller/commands"},
            "friction_compensator": {
                "joints": joints(), "urdf": self.urdf, "gear_load": "gravity",
                "max_effort": float(round(float(np.max(self.max_effort)), 6)),
                "dt": float(1.0 / rate), "watchdog_timeout": 0.1,
            },
        }

    def summary(self) -> list[str]:
        """Lines for people: the joints, each with its range, start, inertia and gains."""
        lines = [f"{self.urdf}: {len(self.joints)} joint(s)"]
        for i, j in enumerate(self.joints):
            unit = "m" if self.kinds[i] == "prismatic" else "rad"
            lines.append(f"  {j}: range [{self.lower[i]:.3g}, {self.upper[i]:.3g}] {unit}, start "
                         f"{self.initial_positions[i]:.3g}, inertia {self.inertia[i]:.3g}, kp "
                         f"{self.kp[i]:.3g}, kd {self.kd[i]:.3g}, max effort "
                         f"{self.max_effort[i]:.3g}"
                         + (" (default: the URDF gives none)" if j in self.effort_defaulted
                            else ""))
        for j, why in self.left_out:
            lines.append(f"  left out {j}: {why}")
        return lines + [f"  note: {n}" for n in self.notes]


def _urdf_path(urdf: str) -> str:
    """The file of a URDF path or bundled name (as :class:`UrdfDynamics` finds it)."""
    from .transmission.urdf_dynamics import bundled_urdf

    path = Path(urdf)
    if not path.is_file() and not str(urdf).endswith(".urdf") and os.sep not in str(urdf):
        try:
            path = bundled_urdf(str(urdf))
        except (LookupError, ValueError):
            pass
    return str(path)


def mimic_masters(xml: str) -> dict[str, str]:
    """``{joint: master}`` of the URDF's ``<mimic joint="master"/>`` joints."""
    root = ElementTree.fromstring(xml)
    out = {}
    for j in root.iter("joint"):
        m = j.find("mimic")
        if m is not None:
            out[j.get("name", "")] = m.get("joint", "")
    return out


def arm_setup(urdf: str, joints: Sequence[str] | None = None, *,
              rotor_inertia: float = ROTOR_INERTIA, gravity=(0.0, 0.0, -9.81),
              xml: str | None = None) -> ArmSetup:
    """The chain's parameters for a URDF (the rules: the module docstring).

    Parameters
    ----------
    urdf : str
        A URDF file or a bundled name (``arm7``); with ``xml``, only its name in messages.
    joints : sequence of str, optional
        The joints to drive (the others locked at their start positions). None: every movable
        joint but ``<mimic>`` joints and joints narrower than twice :data:`LIMIT_MARGIN`.
    rotor_inertia : float
        Rotor inertia referred to each joint [kg m²], in the inertia the gains use.
    gravity : (3,) array_like
        Gravity in the world frame [m/s²] (the effort-limit default uses the gravity torque).
    xml : str, optional
        The URDF's text instead of a file (a ``robot_description`` parameter).

    Returns
    -------
    ArmSetup
        The joints (and those left out, with reasons), start positions, inertias, gains, effort
        limits and the sinusoid.

    Raises
    ------
    ValueError
        (:class:`~fric_core.transmission.urdf_dynamics.UrdfError`) naming the field: an unknown,
        repeated or mimic joint in ``joints``, no joint to drive, a URDF that cannot be used.
    """
    from .transmission.urdf_dynamics import UrdfDynamics, UrdfError

    if not (isinstance(rotor_inertia, (int, float)) and math.isfinite(rotor_inertia)
            and rotor_inertia >= 0.0):
        raise ValueError(f"rotor_inertia: expected a finite value >= 0 [kg m^2], got "
                         f"{rotor_inertia!r}")
    from_file = xml is None
    if from_file:
        full = UrdfDynamics(urdf, gravity=gravity)  # checks the file (and its size) first
        source = _urdf_path(urdf)
        try:
            xml = Path(source).read_text(encoding="utf-8", errors="replace")
        except OSError as e:
            raise UrdfError(f"urdf: cannot read {source}: {e.strerror}") from None
    else:
        source = urdf or "<robot_description>"
        full = UrdfDynamics.from_xml(xml, gravity=gravity)
    try:
        mimic = mimic_masters(xml)
    except ElementTree.ParseError as e:  # check_urdf has parsed it already: defensive
        raise UrdfError(f"urdf: {source}: {e}") from None
    names = list(full.joint_names)
    kind = dict(zip(names, full.joint_kinds))
    lo = dict(zip(names, full.lower))
    hi = dict(zip(names, full.upper))
    from .arm_identification.excitation import excitable_joints, rest_positions

    left_out: list[tuple[str, str]] = []
    if joints is None:  # fric excite's rule (one rule for the tools and the chain)
        chosen, left_out = excitable_joints(full, LIMIT_MARGIN, mimic)
        if not chosen:
            raise UrdfError(f"joints: no joint of {source} to drive (left out: "
                            + "; ".join(f"{j}: {w}" for j, w in left_out) + ")")
    else:
        chosen = [str(j) for j in joints]
        if not chosen:
            raise UrdfError("joints: empty; name at least one joint (or give none: every "
                            "movable joint that is not a mimic joint)")
        bad = [f"{j} (a <mimic> of {mimic[j]}: it follows that joint)"
               for j in chosen if j in mimic]
        if bad:
            raise UrdfError(f"joints: {', '.join(bad)}; leave it out")
        left_out = [(j, "not in joints") for j in names if j not in chosen]

    rest = rest_positions(full, names, LIMIT_MARGIN)  # 0, or mid-range (the same rule)

    locked = {j: rest[j] for j in names if j not in chosen}
    try:  # UrdfDynamics names unknown and repeated joints
        if from_file:
            dyn = UrdfDynamics(source, joint_names=chosen, gravity=gravity,
                               locked_positions=locked)
        else:
            dyn = UrdfDynamics.from_xml(xml, joint_names=chosen, gravity=gravity,
                                        locked_positions=locked)
    except UrdfError as e:
        msg = str(e)
        raise UrdfError("joints: " + msg[len("joint_names: "):]
                        if msg.startswith("joint_names: ") else msg) from None
    n = dyn.n
    q0 = np.array([rest[j] for j in chosen])
    lower = np.array([lo[j] for j in chosen])
    upper = np.array([hi[j] for j in chosen])
    w, zeta = BANDWIDTH, DAMPING_RATIO
    amp = _sine_amplitudes(dyn, chosen, kind, q0, lower, upper)
    inertia = np.full(n, np.inf)
    for q in (q0, q0 + amp, q0 + 2.0 * amp):  # start, centre and far end of the sinusoid
        M = dyn.mass_matrix(q) + float(rotor_inertia) * np.eye(n)
        inertia = np.minimum(inertia, 1.0 / np.diag(np.linalg.inv(M)))
    kp = inertia * w * w
    kd = 2.0 * zeta * inertia * w
    g = np.abs(dyn.gravity_torque(q0))
    effort = np.asarray(dyn.effort, float).copy()
    defaulted = []
    for i in range(n):
        if not (math.isfinite(effort[i]) and effort[i] > 0.0):
            effort[i] = kp[i] * 1.0 + 2.0 * g[i]
            defaulted.append(chosen[i])
    notes = []
    over = [chosen[i] for i in range(n) if g[i] > effort[i]]
    if over:
        notes.append(f"gravity at the start pose exceeds the effort limit of {over}: the arm "
                     "cannot hold itself there")
    return ArmSetup(urdf=source, joints=tuple(chosen), left_out=tuple(left_out),
                    kinds=tuple(kind[j] for j in chosen), lower=lower, upper=upper,
                    initial_positions=q0, inertia=inertia, kp=kp, kd=kd, max_effort=effort,
                    effort_defaulted=tuple(defaulted), sine_center=q0 + amp,
                    sine_amplitude=amp, sine_frequency=SINE_FREQUENCY,
                    rotor_inertia=float(rotor_inertia), notes=tuple(notes))


def _sine_amplitudes(dyn, chosen, kind, q0, lower, upper) -> np.ndarray:
    """Signed amplitudes A of ``q = q0 + A (1 − cos 2πft)``: towards the side with more room,
    min(MAX_AMPLITUDE, 0.4 × room), slowed to the URDF's velocity limit."""
    amp = np.empty(len(chosen))
    for i, j in enumerate(chosen):
        if kind[j] == "continuous":
            room, sign = math.inf, 1.0
        else:
            up = upper[i] - LIMIT_MARGIN - q0[i]
            down = q0[i] - (lower[i] + LIMIT_MARGIN)
            room, sign = (up, 1.0) if up >= down else (down, -1.0)
        a = min(MAX_AMPLITUDE, 0.4 * max(room, 0.0))
        vmax = 2.0 * math.pi * SINE_FREQUENCY * a
        vel = model_velocity_limit(dyn, j)
        if vel > 0.0 and vmax > vel:
            a *= vel / vmax
        amp[i] = sign * a
    return amp


def model_velocity_limit(dyn, joint: str) -> float:
    """The URDF's velocity limit of ``joint`` (0 where it gives none)."""
    model = dyn.model
    v = float(model.velocityLimit[model.joints[model.getJointId(joint)].idx_v])
    return v if math.isfinite(v) and v > 0.0 else 0.0


def write_arm_parameters(path, setup: ArmSetup, rate: float = 500.0,
                         header: Sequence[str] = ()) -> None:
    """Write :meth:`ArmSetup.node_parameters` as a ``ros__parameters`` YAML file.

    Parameters
    ----------
    path : str or Path
        The file to write.
    setup : ArmSetup
        What :func:`arm_setup` derived.
    rate : float
        transmission_sim's step rate [Hz] (the compensator's ``dt`` is its inverse).
    header : sequence of str
        Comment lines for the top of the file (then the rules and :meth:`ArmSetup.summary`).

    Returns
    -------
    None
        The file is written (no YAML anchors: rcl's parser takes none).
    """
    import yaml

    doc: Mapping[str, dict] = {node: {"ros__parameters": p}
                               for node, p in setup.node_parameters(rate).items()}
    lines = [f"# {h}" for h in header]
    lines += ["# The arm chain's parameters for a URDF (fric arm-params; rules in "
              "fric_core/arm_setup.py):"]
    lines += [f"# {s}" for s in setup.summary()]
    text = "\n".join(lines) + "\n" + yaml.safe_dump(dict(doc), sort_keys=False,
                                                     default_flow_style=None, width=100)
    Path(path).write_text(text, encoding="utf-8")
