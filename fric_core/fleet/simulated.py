"""A simulated fleet: N robots × D days of realistic arm recordings (issue 26 item 3).

Every recording is :func:`fric_core.arm_identification.realistic.realistic_recording` — a
foreign friction law (Gaz et al.'s saturating sigmoids of the Panda's joints), effort offsets,
jittered stamps, repeated and skipped rows — written as a rosbag2 MCAP bag the way a fleet's
loggers would leave it::

    ROOT/<robot>/rosbag2_YYYY_MM_DD-HH_MM_SS/      (ros2 bag record's default name)
        metadata.yaml, *.mcap                       topic /<robot>/joint_states

so the robot is the topic's namespace (and the directory), the time the bag's start.

What varies, all deterministic from ``seed``:

* **per robot and joint** (a fleet of one model, not of one unit): the sigmoid's level ``φ1``
  scaled by a log-normal factor of spread ``robot_spread`` (15 %), its steepness ``φ2`` by one of
  half that spread, a viscous term uniform in [0, ``max_viscous``]; the effort offset (a torque
  sensor's zero, the same every day); the diagnostic motion (each robot runs its own multi-sine
  every day, as a fleet's daily test program would);
* **per robot and day**: every joint's friction scaled by ``1 + N(0, daily_variation)``
  (temperature: friction changes by percents over a few kelvin), and the noise, jitter, repeated
  and skipped rows of the log;
* **the wear** (:class:`FleetTrend`): one joint of one robot whose friction levels grow by
  ``rate`` (2 %) of their onset value per day from day ``onset`` on (``φ1`` scaled by
  ``1 + rate·(day − onset)``; the sigmoid's levels are proportional to ``φ1``);
* **one corrupt recording**: 4 KiB in the middle of its MCAP file overwritten with zeros (a lost
  disk sector): the reader refuses it (fewer messages than the bag lists);
* **one recording with a lagging velocity column**: the drive's velocity filter
  (``lag_time_constant``, 50 ms) — ``fric identify`` detects the lag and derives the velocity
  from the positions.
"""

from __future__ import annotations

import datetime as _dt
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import numpy as np

__all__ = ["FleetTrend", "FleetRecording", "SimulatedFleet", "simulate_fleet",
           "DEFAULT_START", "DAY_SECONDS"]

#: The first day of a simulated fleet (UTC midnight).
DEFAULT_START = "2026-11-02"
DAY_SECONDS = 86400.0


@dataclass(frozen=True)
class FleetTrend:
    """Wear injected into one joint: its friction levels grow by ``rate`` (a fraction of the
    onset value) per day from day ``onset`` on."""

    robot: str
    joint: str
    rate: float = 0.02
    onset: int = 5

    def factor(self, day: int) -> float:
        """The levels' factor on ``day`` relative to before the onset."""
        return 1.0 + self.rate * max(0, day - self.onset)


@dataclass(frozen=True)
class FleetRecording:
    """One simulated recording: its bag directory, robot, start time (UTC), day index and
    ``kind`` (``"ok"``, ``"corrupt"``, ``"lagging"``)."""

    path: Path
    robot: str
    time: _dt.datetime
    day: int
    kind: str = "ok"


@dataclass
class SimulatedFleet:
    """What :func:`simulate_fleet` wrote and the truth behind it.

    ``recordings``: every bag, in robot then day order; ``robots``, ``joints``; ``days``;
    ``scale[(robot, joint)]``: the robot's friction level relative to the Panda's values;
    ``daily[(robot, day)]``: that day's common factor; ``trend``; ``corrupt`` and ``lagging``:
    the bags made so; ``duration`` [s] and ``rate`` [Hz] of each recording.
    """

    root: Path
    recordings: List[FleetRecording]
    robots: List[str]
    joints: List[str]
    days: int
    scale: Dict[Tuple[str, str], float]
    daily: Dict[Tuple[str, int], float]
    trend: FleetTrend
    corrupt: Path
    lagging: Path
    duration: float
    rate: float
    seed: int = 0
    start: _dt.datetime = field(default_factory=lambda: _start_time(DEFAULT_START))

    def level_factor(self, robot: str, joint: str, day: int) -> float:
        """The true factor of a joint's friction levels on ``day`` against its own levels
        (the wear only; the daily variation is noise to a detector)."""
        t = self.trend
        return t.factor(day) if (robot, joint) == (t.robot, t.joint) else 1.0


def _start_time(text: str) -> _dt.datetime:
    day = _dt.date.fromisoformat(text)
    return _dt.datetime(day.year, day.month, day.day, tzinfo=_dt.timezone.utc)


def _damage(bag: Path) -> None:
    """Overwrite 4 KiB in the middle of the bag's MCAP file with zeros (a lost sector)."""
    f = next(iter(sorted(bag.glob("*.mcap"))))
    with open(f, "r+b") as fh:
        size = fh.seek(0, 2)
        fh.seek(size // 2)
        fh.write(b"\0" * min(4096, size // 4))


def simulate_fleet(out_dir, *, urdf: str = "arm7", robots: int = 10, days: int = 20,
                   duration: float = 20.0, rate: float = 500.0, robot_spread: float = 0.15,
                   daily_variation: float = 0.01, max_viscous: float = 0.05,
                   trend: Optional[FleetTrend] = None, corrupt: Optional[Tuple[int, int]] = None,
                   lagging: Optional[Tuple[int, int]] = None, lag_time_constant: float = 0.05,
                   start: str = DEFAULT_START, seed: int = 0) -> SimulatedFleet:
    """Write a simulated fleet's recordings under ``out_dir`` (module docstring).

    Parameters
    ----------
    out_dir : str or path-like
        The root directory (created; the robots' directories must not exist).
    urdf : str
        The arm (a URDF path or a bundled name).
    robots : int
        Number of robots (named ``r00``, ``r01``, …).
    days : int
        Recordings per robot, one a day.
    duration : float
        Length of each recording [s].
    rate : float
        joint_states rate [Hz].
    robot_spread : float
        Log-normal spread of a robot's friction level per joint.
    daily_variation : float
        Standard deviation of the day's common friction factor (temperature).
    max_viscous : float
        Largest viscous term [N·m·s/rad] drawn per robot and joint.
    trend : FleetTrend, optional
        The wear; default robot ``r{7·robots//10}``, ``joint_a3`` (the URDF's third joint),
        2 %/day from day ``days // 4``.
    corrupt : (int, int), optional
        (robot index, day) of the damaged bag; default (2 mod robots, days // 2).
    lagging : (int, int), optional
        (robot index, day) of the recording with a lagging velocity column; default
        (4 mod robots, days // 3), the next day when that is the corrupt one.
    lag_time_constant : float
        The lagging column's first-order filter time constant [s].
    start : str
        The first day (ISO date, UTC).
    seed : int
        Seed of everything random.

    Returns
    -------
    SimulatedFleet
        The recordings and the truth.

    Raises
    ------
    ValueError
        Naming the argument out of range.
    """
    from fric_core.arm_identification.realistic import (SigmoidFriction, default_friction,
                                                        realistic_recording)
    from fric_core.arm_identification.recording import write_arm_bag
    from fric_core.transmission.urdf_dynamics import UrdfDynamics

    for name, val in (("robots", robots), ("days", days)):
        if not (isinstance(val, int) and not isinstance(val, bool) and val >= 1):
            raise ValueError(f"{name}: expected a whole number >= 1, got {val!r}")
    for name, val in (("robot_spread", robot_spread), ("daily_variation", daily_variation),
                      ("max_viscous", max_viscous), ("lag_time_constant", lag_time_constant)):
        if not (isinstance(val, (int, float)) and math.isfinite(val) and val >= 0):
            raise ValueError(f"{name}: expected a finite number >= 0, got {val!r}")
    root = Path(out_dir)
    dyn = UrdfDynamics(urdf)
    joints = list(dyn.joint_names)
    names = [f"r{i:02d}" for i in range(robots)]
    if trend is None:
        trend = FleetTrend(names[(7 * robots) // 10], joints[min(2, len(joints) - 1)],
                           onset=days // 4)
    if trend.robot not in names or trend.joint not in joints:
        raise ValueError(f"trend: robot {trend.robot!r} or joint {trend.joint!r} not in the "
                         f"fleet ({names[0]}…{names[-1]}; {', '.join(joints)})")
    corrupt = corrupt or (2 % robots, days // 2)
    if lagging is None:
        lagging = (4 % robots, days // 3)
        if lagging == corrupt:
            lagging = (lagging[0], (lagging[1] + 1) % days)
    if corrupt == lagging:
        raise ValueError("corrupt, lagging: the same recording")
    t0 = _start_time(start)
    base = default_friction(dyn)
    rng = np.random.default_rng(seed)
    scale, daily, recordings = {}, {}, []
    corrupt_path = lagging_path = None
    for r, robot in enumerate(names):
        rr = np.random.default_rng([seed, r])
        law0, offsets = {}, {}
        for j, jn in enumerate(joints):
            k = float(np.exp(robot_spread * rr.standard_normal()))
            scale[(robot, jn)] = k
            b = base[jn]
            law0[jn] = (b.phi1 * k, b.phi2 * float(np.exp(0.5 * robot_spread
                                                          * rr.standard_normal())),
                        b.phi3, float(rr.uniform(0.0, max_viscous)))
            lin = dyn.joint_kinds[j] == "prismatic"
            size = rr.uniform(2.0, 10.0) if lin else rr.uniform(0.1, 0.5)
            offsets[jn] = float(rr.choice([-1.0, 1.0]) * size)
        motion_seed = int(rr.integers(2 ** 31))
        minute = int(rr.integers(0, 60))
        for d in range(days):
            f_day = float(1.0 + daily_variation * rng.standard_normal())
            daily[(robot, d)] = f_day
            law = {}
            for jn, (p1, p2, p3, visc) in law0.items():
                wear = trend.factor(d) if (robot, jn) == (trend.robot, trend.joint) else 1.0
                law[jn] = SigmoidFriction(p1 * f_day * wear, p2, p3, visc * f_day)
            when = t0 + _dt.timedelta(days=d, hours=9, minutes=minute,
                                      seconds=int(rng.integers(0, 600)))
            lag = (r, d) == lagging
            sim = realistic_recording(
                dyn, duration=duration, rate=rate, friction=law, offsets=offsets, current=False,
                velocity_time_constant=lag_time_constant if lag else 0.0,
                trajectory={"seed": motion_seed}, seed=int(rng.integers(2 ** 31)))
            bag = root / robot / when.strftime("rosbag2_%Y_%m_%d-%H_%M_%S")
            bag.parent.mkdir(parents=True, exist_ok=True)
            write_arm_bag(bag, sim.recording, topic=f"/{robot}/joint_states",
                          t0_ns=int(round(when.timestamp())) * 1_000_000_000)
            kind = "lagging" if lag else "ok"
            if (r, d) == corrupt:
                _damage(bag)
                kind, corrupt_path = "corrupt", bag
            if lag:
                lagging_path = bag
            recordings.append(FleetRecording(bag, robot, when, d, kind))
    return SimulatedFleet(root=root, recordings=recordings, robots=names, joints=joints,
                          days=days, scale=scale, daily=daily, trend=trend,
                          corrupt=corrupt_path, lagging=lagging_path, duration=float(duration),
                          rate=float(rate), seed=seed, start=t0)
