"""Paper 003's identification run as a state machine (Richard, Cutkosky & MacLean): hold, move to
the centre, excite, settle; no ROS, no logging, no publishing.

The stage, in position mode, follows the paper's excitation (:func:`~.identification.excitation`:
``center + A sin(2π f t)``, 1 cm at 2 Hz, the amplitude ramped up at the start of the warm-up); the
states after the warm-up are recorded: position, velocity, the load-cell force in the sign of
``F = m a + F_friction`` (eq. 1) and the accelerometer, for the fits by least squares (eq. 5) and
Fuller's errors-in-variables estimator (eq. 6) (:func:`fit_record`).

:class:`IdentificationRun` is driven by whoever has the stage's states (the ``friction_identifier``
node; a test with :class:`~.stage.HapticStageSim`): :meth:`~IdentificationRun.step` takes one
state and returns the next position setpoint (a float), :data:`DONE` or an :class:`Abort`; either
of the last two means: command zero effort now, the stage rests on its friction. One command per
state, so it works in lockstep (the stage steps when a command arrives) and in realtime.
"""

from __future__ import annotations

import math
import os
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .identification import Excitation, FrictionFit
from .recording import Recording, write_csv
from .renderer_yaml import fit_to_yaml
from .report import write_report

__all__ = ["IdentificationRun", "Abort", "Done", "DONE", "fit_record", "estimates_line",
           "write_run_files", "PREPARE", "MOVE", "EXCITE", "SETTLE", "END", "STEADY_STATES",
           "STEADY_MAX_NS", "MOVE_HOLD_NS", "SETTLE_NS", "MOVE_TOL"]

#: the phases of a run, in order
PREPARE, MOVE, EXCITE, SETTLE, END = range(5)
STEADY_STATES = 200  #: hold until this many consecutive states were answered (none missed)
STEADY_MAX_NS = 5_000_000_000  #: ... or this long at most [ns]
MOVE_HOLD_NS = 200_000_000  #: hold at the excitation centre after a move [ns]
SETTLE_NS = 300_000_000  #: position hold after the excitation, before zero effort [ns]
MOVE_TOL = 1e-5  #: no move when the centre is this close [m] (4 encoder counts)


class Done:
    """The run ended as planned: command zero effort (the stage rests), then fit the record."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "DONE"


#: the one :class:`Done`
DONE = Done()


@dataclass(frozen=True)
class Abort:
    """The run ended early: command zero effort at once. ``reason`` names the limit."""

    reason: str


class IdentificationRun:
    """One identification run: the plan, the control state and the record (preallocated).

    Time base: the states' stamps [ns]. The excitation (sampled at ``exc.t[0]``) is a table of the
    setpoint against the time since the excitation started; each state's command is the table,
    interpolated linearly, one stage period ahead (the command acts during the next cycle), so
    states the driver never saw (realtime, a loaded machine) do not shift the trajectory, and
    any stage rate works. Phases (:attr:`phase`):

    ``PREPARE``
        hold where the stage is until :data:`STEADY_STATES` consecutive states came without a
        gap (at most :data:`STEADY_MAX_NS`); the smallest stamp step is the stage period;
    ``MOVE``
        to the excitation centre at ``move_speed`` (when it is :data:`MOVE_TOL` or more away),
        then :data:`MOVE_HOLD_NS` of hold;
    ``EXCITE``
        the excitation; the states after its warm-up are recorded;
    ``SETTLE``
        :data:`SETTLE_NS` of hold at the last setpoint, then :data:`DONE`;
    ``END``
        over (:attr:`aborted` says why when it ended early; :attr:`done` is set).

    Parameters
    ----------
    exc
        The excitation (:func:`~.identification.excitation`), centred where the run goes.
    x_start
        The stage position where the run starts [m].
    band
        ``(lo, hi)``: a position outside aborts the run [m].
    move_speed
        Speed of the move to the centre [m/s].
    tracking_limit
        A position this far from the last setpoint aborts the run; 0 = off [m].
    max_saturation
        A stage report of more saturated motor cycles than this fraction aborts the run
        (:meth:`stage_report`).
    """

    def __init__(self, exc: Excitation, x_start: float, band: tuple[float, float], *,
                 move_speed: float = 0.01, tracking_limit: float = 0.0,
                 max_saturation: float = 0.1):
        self.lo, self.hi = float(band[0]), float(band[1])
        self.tracking_limit = float(tracking_limit)
        self.max_saturation = float(max_saturation)
        self.excitation = exc
        self.x_start = float(x_start)
        self.center = float(exc.center)
        self.table_dt = dt = float(exc.t[0])
        self.table = np.concatenate(([self.center], exc.x))  # setpoint at k * dt, k = 0, 1, ...
        self.t_warm_ns = int(round(int(np.argmax(exc.record)) * dt * 1e9)) \
            if exc.record.any() else int(round(exc.t[-1] * 1e9))
        self.t_end_ns = int(round(exc.t[-1] * 1e9))
        self.phase = PREPARE
        self.state = "moving"  # what the run is doing, in words
        self.prev_ns = -1  # stamp of the last state stepped
        self.min_diff = 1 << 62  # smallest stamp step seen: the stage period
        self.n_steady = 0  # consecutive states answered without a gap
        self.prep_start = -1
        self.prep_missed = 0
        self.setpoint = self.x_start
        away = abs(self.center - self.x_start)
        self.move_ns = int(away / move_speed * 1e9) if away > MOVE_TOL else 0
        self.t0 = 0  # stamp at which the move, then the excitation, started
        self.settle_end = 0
        self.imu_from_ns = 0
        # record (allocated when the period is known)
        self.t_ns = np.zeros(0, dtype=np.int64)
        self.x = self.v = self.force = np.zeros(0)
        self.k = 0  # recorded states
        self.overflow = 0  # states not recorded (buffer full)
        self.imu_ns = np.zeros(0, dtype=np.int64)
        self.imu_a = np.zeros(0)
        self.k_imu = 0
        self.imu_cov_sum = 0.0
        self.imu_cov_n = 0
        self.stage_reports = 0
        self.stage_states = -1  # "states published" of the stage's previous report
        self.n_excite = 0  # states handled during the excitation
        self.ex_first = self.ex_last = -1  # their first and last stamps
        self.ex_min_diff = 1 << 62
        self.aborted = ""
        self.done = threading.Event()  # set when the run reaches END (for a waiting thread)

    # ------------------------------------------------------------------ control
    def step(self, t_ns: int, x: float, v: float, force: float) -> float | Done | Abort:
        """One state of the stage; what to command next.

        Parameters
        ----------
        t_ns
            The state's stamp [ns], increasing from state to state.
        x, v
            Measured position [m] and velocity [m/s].
        force
            The load cell in paper 003's sign (eq. 1): the force the stage applies to the
            sample [N].

        Returns
        -------
        float | Done | Abort
            The position setpoint [m]; :data:`DONE` or an :class:`Abort` when the run ended
            with this state (command zero effort). Not to be called after the run ended.
        """
        if not self.lo <= x <= self.hi:
            return self.abort(f"travel limit: position {x:.6g} m outside [{self.lo:.6g}, "
                              f"{self.hi:.6g}] m (x_min/x_max shrunk by travel_margin)")
        lim, sp = self.tracking_limit, self.setpoint
        if lim and abs(x - sp) > lim:
            return self.abort(f"tracking: position {x:.6g} m is {abs(x - sp):.3g} m from the "
                              f"command {sp:.6g} m (> tracking_limit {lim:g} m): end stop, "
                              f"saturation or a jam")
        prev, self.prev_ns = self.prev_ns, t_ns
        if prev >= 0 and t_ns - prev < self.min_diff:
            self.min_diff = t_ns - prev
        phase = self.phase
        if phase == PREPARE:
            # a late command makes the next setpoint step twice as far, and the servo kicks
            if self.prep_start < 0:
                self.prep_start = t_ns
            elif t_ns - prev > 1.5 * self.min_diff:
                self.n_steady = 0
                self.prep_missed += 1
            self.n_steady += 1
            if self.n_steady < STEADY_STATES and t_ns - self.prep_start < STEADY_MAX_NS:
                return self.setpoint
            self._allocate()
            self.phase = phase = MOVE
            self.t0 = t_ns
        if phase == MOVE:
            tau = t_ns - self.t0 + self.min_diff
            if tau < self.move_ns + MOVE_HOLD_NS and self.move_ns:
                frac = min(1.0, tau / self.move_ns)
                self.setpoint = self.x_start + frac * (self.center - self.x_start)
                return self.setpoint
            self.phase = phase = EXCITE
            self.t0 = t_ns
            self.imu_from_ns = t_ns + self.t_warm_ns - 2 * self.min_diff
            self.state = "warm-up"
        if phase == EXCITE:
            tau = t_ns - self.t0
            if tau < self.t_end_ns:
                self._count_excite(t_ns)
                if tau >= self.t_warm_ns:
                    self._record(t_ns, x, v, force)
                self.setpoint = self.excitation_setpoint(tau + self.min_diff)
                return self.setpoint
            self.phase = SETTLE
            self.state = "settling"
            self.settle_end = t_ns + SETTLE_NS
            return self.setpoint
        if t_ns < self.settle_end:  # SETTLE: hold the last setpoint
            return self.setpoint
        self.phase = END
        self.done.set()
        return DONE

    def abort(self, reason: str) -> Abort | None:
        """End the run now (command zero effort); None when it had ended already.

        Parameters
        ----------
        reason
            Why, for the result (:attr:`aborted`).

        Returns
        -------
        Abort | None
            The abort to act on, or None.
        """
        if self.phase == END:
            return None
        self.phase = END
        self.aborted = reason
        self.done.set()
        return Abort(reason)

    def accel(self, t_ns: int, a: float, variance: float = 0.0) -> None:
        """An accelerometer sample, kept during the recorded part of the excitation (matched to
        the states by stamp in :meth:`recording`); ignored otherwise.

        Parameters
        ----------
        t_ns
            Its stamp [ns] (the state's it belongs to).
        a
            The acceleration of the sample [m/s²], finite.
        variance
            Its noise variance as the sensor states it [(m/s²)²]; the mean of those > 0 is
            the EIV fit's, unless given otherwise (:meth:`recording`).
        """
        k = self.k_imu
        if self.phase == EXCITE and t_ns >= self.imu_from_ns and k < self.imu_a.size:
            self.imu_ns[k] = t_ns
            self.imu_a[k] = a
            self.k_imu = k + 1
            if variance > 0.0 and variance < float("inf"):
                self.imu_cov_sum += variance
                self.imu_cov_n += 1

    def stage_report(self, at_end_stop: bool, end_stop_cycles: int | None,
                     saturated_cycles: int | None, states: int | None) -> Abort | None:
        """One periodic report of the stage (its /diagnostics); an :class:`Abort` when it shows
        an end-stop contact or more saturated cycles than ``max_saturation`` of the cycles since
        the previous report. Counts of the first report (a period that began before the run)
        are not judged.

        Parameters
        ----------
        at_end_stop
            The carriage is at an end stop now.
        end_stop_cycles, saturated_cycles
            Cycles at an end stop, saturated, in the report's period (None: not reported).
        states
            The stage's count of states published (None: not reported).

        Returns
        -------
        Abort | None
            The abort to act on, or None (also when the run is past its excitation).
        """
        if self.phase not in (PREPARE, MOVE, EXCITE):
            return None
        self.stage_reports += 1
        flags = ["the carriage at an end stop"] if at_end_stop else []
        if self.stage_reports > 1:
            if end_stop_cycles:
                flags.append(f"{end_stop_cycles} end-stop cycles")
            if saturated_cycles is not None and states is not None and self.stage_states >= 0:
                n = states - self.stage_states
                if n > 0 and saturated_cycles > self.max_saturation * n:
                    flags.append(f"the motor saturated in {saturated_cycles} of {n} cycles (> "
                                 f"max_saturation {self.max_saturation:g})")
        self.stage_states = states if states is not None else -1
        return self.abort(f"the stage reports {', '.join(flags)}") if flags else None

    def excitation_setpoint(self, tau_ns: int) -> float:
        """The excitation, linearly interpolated.

        Parameters
        ----------
        tau_ns
            Time since the excitation started [ns].

        Returns
        -------
        float
            The setpoint [m]; the excitation's last one after its end.
        """
        u = tau_ns * 1e-9 / self.table_dt
        i = int(u)
        tab = self.table
        if i + 1 >= tab.size:
            return float(tab[-1])
        x0 = float(tab[i])
        return x0 + (u - i) * (float(tab[i + 1]) - x0)

    def _allocate(self) -> None:
        """The record buffers, from the period measured while holding: room for four times
        the states expected (a period over-estimated because states were missed)."""
        n = int((self.t_end_ns - self.t_warm_ns) / self.min_diff) * 4 + 16
        self.t_ns = np.zeros(n, dtype=np.int64)
        self.x, self.v, self.force = np.zeros(n), np.zeros(n), np.zeros(n)
        self.imu_ns = np.zeros(n, dtype=np.int64)
        self.imu_a = np.zeros(n)

    def _count_excite(self, t_ns: int) -> None:
        self.n_excite += 1
        if self.ex_first < 0:
            self.ex_first = t_ns
        elif t_ns - self.ex_last < self.ex_min_diff:
            self.ex_min_diff = t_ns - self.ex_last
        self.ex_last = t_ns

    def _record(self, t_ns: int, x: float, v: float, force: float) -> None:
        k = self.k
        if k == 0:
            self.state = "recording"
        if k < self.t_ns.size:
            self.t_ns[k] = t_ns
            self.x[k] = x
            self.v[k] = v
            self.force[k] = force
            self.k = k + 1
        else:
            self.overflow += 1

    # ------------------------------------------------------------------ outcome
    def missed(self) -> tuple[int, int]:
        """States of the excitation the stage published but the driver never answered
        (realtime: it fell behind), from the stamps.

        Returns
        -------
        missed, span : int
            States not answered, states the excitation spanned.
        """
        if self.n_excite < 2:
            return 0, self.n_excite
        span = int(round((self.ex_last - self.ex_first) / self.ex_min_diff)) + 1
        return span - self.n_excite, span

    def notes(self) -> list[str]:
        """What the record lacks, in words.

        Returns
        -------
        list of str
            Excitation states not answered (:meth:`missed`), states not recorded (buffer
            full); empty when nothing is missing.
        """
        missed, span = self.missed()
        notes = [f"{missed} of {span} excitation states not answered (the stage ran ahead)"
                 ] if missed else []
        if self.overflow:
            notes.append(f"{self.overflow} states not recorded (buffer full)")
        return notes

    def recording(self, *, joint: str = "", source: str = "", accel_source: str = "accelerometer",
                  accel_variance: float = 0.0,
                  vel_variance: float = 0.0) -> tuple[Recording, list[str], dict]:
        """The record as a :class:`~.recording.Recording`, the accelerometer matched by stamp.

        Parameters
        ----------
        joint, source
            Labels of the recording (``source`` gets ``" + <accel_source>"`` when the
            accelerometer was used).
        accel_source
            The accelerometer's name in the notes (its topic).
        accel_variance, vel_variance
            Noise variances for the EIV fit, > 0 when known; 0: the accelerometer's stated
            variance (:meth:`accel`), else estimated from the data.

        Returns
        -------
        rec : Recording
            Time from the first recorded state [s]; without matched accelerometer samples
            ``a`` is None (the fit differentiates the velocity).
        notes : list of str
            Where the acceleration came from; the gaps of the record.
        noise : dict
            The noise variances to fit with (``accel``, ``vel``; possibly empty).

        Raises ``ValueError`` (from :class:`~.recording.Recording`) when the record is too short.
        """
        k = self.k
        t_ns, x, vel, force = self.t_ns[:k], self.x[:k], self.v[:k], self.force[:k]
        a = None
        noise = {}
        derived = "acceleration derived from the velocity (4-point central difference)"
        if self.k_imu:
            imu_ns, imu_a = self.imu_ns[:self.k_imu], self.imu_a[:self.k_imu]
            order = np.argsort(imu_ns, kind="stable")
            imu_ns, imu_a = imu_ns[order], imu_a[order]
            idx = np.minimum(np.searchsorted(imu_ns, t_ns), imu_ns.size - 1)
            ok = imu_ns[idx] == t_ns
            if ok.any():
                t_ns, x, vel, force = t_ns[ok], x[ok], vel[ok], force[ok]
                a = imu_a[idx[ok]]
                note = (f"accelerometer {accel_source} ({int(ok.sum())} of {k} states matched "
                        "by stamp)")
                if self.imu_cov_n:
                    noise["accel"] = self.imu_cov_sum / self.imu_cov_n
            else:
                note = f"accelerometer stamps on {accel_source} never matched joint_states: " \
                       + derived
        else:
            note = f"no accelerometer on {accel_source}: " + derived
        if accel_variance > 0.0:
            noise["accel"] = accel_variance
        if vel_variance > 0.0:
            noise["vel"] = vel_variance
        t = (t_ns - (t_ns[0] if t_ns.size else 0)) * 1e-9
        rec = Recording(t, x, vel, force, a, joint=joint,
                        source=source + (f" + {accel_source}" if a is not None else ""),
                        noise=dict(noise) or None)
        notes = [note]
        gaps = rec.gap_note()
        if gaps:
            notes.append(f"record: {gaps}")
        return rec, notes, noise


def fit_record(rec: Recording, dv: float | None = None,
               noise: dict | None = None) -> tuple[dict[str, FrictionFit], dict[str, str]]:
    """Both fits of a run's record: Fuller's EIV (paper 003 eq. 6) and OLS (eq. 5).

    Parameters
    ----------
    rec
        The record (:meth:`IdentificationRun.recording`).
    dv
        The band ``|v| <= dv`` binned out [m/s]; None: automatic.
    noise
        Noise variances for the EIV correction (``accel``, ``vel``); missing ones are
        estimated from the data.

    Returns
    -------
    fits : dict
        ``{"eiv": FrictionFit, "ols": FrictionFit}``, the methods that succeeded.
    errors : dict
        ``{method: text}`` of the ``ValueError`` of each method that failed (not identifiable).
    """
    fits, errors = {}, {}
    for m in ("eiv", "ols"):
        try:
            fits[m] = rec.fit(m, dv=dv, noise=noise)
        except ValueError as e:
            errors[m] = str(e)
    return fits, errors


def estimates_line(fit: FrictionFit, fits: dict[str, FrictionFit], n: int) -> str:
    """One line of a run's result: ``fit``'s estimates ± std, the other fits' masses.

    Parameters
    ----------
    fit
        The fit reported (the method pushed and exported).
    fits
        All fits of the run (:func:`fit_record`).
    n
        Samples in the record.

    Returns
    -------
    str
        ``"eiv (2000 samples): m 0.4231±0.0021 kg, Cp ..., (ols m 0.4102 kg)"``.
    """
    def pm(f, k, fmt):
        return f"{k} {getattr(f, k):{fmt}}±{f.std.get(k, math.nan):.2g}"
    parts = [pm(fit, "m", ".4f") + " kg", pm(fit, "Cp", ".4f"), pm(fit, "Cn", ".4f") + " N",
             pm(fit, "bp", ".3f"), pm(fit, "bn", ".3f") + " N·s/m",
             f"Dp {fit.Dp:.3f}, Dn {fit.Dn:.3f} N, dv {fit.dv:.4g} m/s"]
    other = [f"{m} m {f.m:.4f} kg" for m, f in fits.items() if f is not fit]
    return f"{fit.method} ({n} samples): " + ", ".join(parts) + \
        (f" ({', '.join(other)})" if other else "")


def write_run_files(out: str, rec: Recording, fits: dict[str, FrictionFit], fit: FrictionFit, *,
                    node: str, title: str, **renderer_kw) -> str:
    """A run's files in ``out``: ``recording.csv`` (:func:`~.recording.write_csv`),
    ``<node>.yaml`` (:func:`~.renderer_yaml.fit_to_yaml` of ``fit``) and the report
    (:func:`~.report.write_report`).

    Parameters
    ----------
    out
        The directory (created); "" writes nothing.
    rec, fits, fit
        The record, all its fits, the fit exported.
    node, renderer_kw
        The renderer's node name and its ``K``, ``B``, ``dt``, ``mass`` for the YAML.
    title
        The report's title.

    Returns
    -------
    str
        ``"files in <dir>"``, ``"files not written to <dir>: <error>"`` or "" (no ``out``).
    """
    if not out:
        return ""
    d = Path(out)
    try:
        d.mkdir(parents=True, exist_ok=True)
        write_csv(rec, d / "recording.csv")
        (d / f"{node}.yaml").write_text(fit_to_yaml(fit, rec.joint, node=node, source=rec.source,
                                                    **renderer_kw), encoding="utf-8")
        write_report(rec, fits, d, title=title)
    except (OSError, ValueError) as e:
        return f"files not written to {out}: {e}"
    return f"files in {os.path.abspath(out)}"
