"""``fric identify RECORDING --urdf URDF --out DIR``: an arm's joint friction from a recording.

The pipeline (no ROS imports; the CLI in :mod:`fric_nodes.tools.cli` only parses arguments):

1. read the recording — a rosbag2 directory (sqlite3 or MCAP) of sensor_msgs/JointState, or a CSV
   (:func:`fric_core.arm_identification.recording.read_arm_recording`); rows with NaN or inf are
   dropped with a warning (the gap they leave splits the data into segments); an effort recorded
   as motor current is multiplied per joint by ``effort_scale`` (``--effort-scale JOINT=K``,
   K = motor constant × reduction, :func:`parse_effort_scale`) before anything else;
2. check the joints against the URDF (every identified joint must be one of its movable joints);
3. segments and derivatives (:func:`fric_core.arm_identification.signals.prepare`: zero-phase
   filtering, velocity and acceleration from the positions when the recording lacks them — or
   when its velocity of a joint lags the positions' derivative by more than a sample (a drive's
   filter, a logging delay: a warning names the joint and the lag in ms) —, the noise variances
   for the errors-in-variables estimator);
4. hold out the last part of the recording (:data:`HOLDOUT_FRACTION` of the rows, whole segments
   where the gaps allow) — the fit never sees it;
4b. the effort's lag behind the states (``effort_lag``, ``--effort-lag``): given in seconds, or
   ``"auto"`` (:data:`DEFAULT_EFFORT_LAG`), estimated on the fitted part by
   :func:`fric_core.arm_identification.signals.estimate_effort_lag` with least-squares fits of the
   chosen model (paper 003 eq. (5)) on a subsample; q, v, a are then taken at ``t − lag``. A
   commanded effort held over the step that ends at its stamp (ros2_control's commanded effort,
   fric's ``transmission_sim``) lags by half a step, a torque sensor by ≈ 0; left in, half a step
   shows up as a viscosity ≈ M·ω²·dt/2 too high (docs/arm_workflow.md);
5. fit (:func:`fric_core.arm_identification.fit.fit_arm_friction`: paper 003's asymmetric law,
   the monotone curve or paper 004's gear model per joint, the rigid body identified or taken
   from the URDF — ``--dynamics auto``, the default, fits both and keeps the URDF's where its
   friction agrees with the identified one's (:func:`_choose_dynamics`) —, OLS eq. (5) or EIV
   eq. (6));
6. write ``DIR/joint_friction.yaml``, ``DIR/friction_compensator.yaml`` and
   ``DIR/transmission_sim.yaml`` (``ros__parameters`` files naming the friction file by its
   absolute path), and the report (:mod:`fric_core.arm_identification.report`): the prediction of
   the held-out part, its RMS error per joint, the warnings.

:func:`identify_recording` runs steps 1–5 and returns what they found without writing anything
(``fric fleet`` calls it once per recording: :mod:`fric_nodes.tools.fleet`);
:func:`write_identification` is step 6; :func:`identify_arm` (``fric identify``) is the two.

Every user mistake is an :class:`ArmIdentifyError` (a ``ValueError``) with a one-line message
naming the problem; the CLI prints it and exits with status 2. Long steps report progress through
the ``progress`` callback (the CLI prints it on stderr).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Union

import numpy as np

__all__ = ["ArmIdentifyError", "ArmIdentifyResult", "ArmIdentification", "identify_arm",
           "identify_recording", "write_identification", "excite_arm",
           "HOLDOUT_FRACTION", "MIN_SAMPLES", "OUTPUT_FILES", "EXCITE_FILES",
           "DEFAULT_EFFORT_LAG", "DYNAMICS", "DEFAULT_DYNAMICS", "parse_effort_lag",
           "parse_effort_scale"]

#: fraction of the prepared rows held out for the prediction check (the last ones)
HOLDOUT_FRACTION = 0.2
#: fewest usable samples (after filtering) a recording must give
MIN_SAMPLES = 200
#: parameter files written besides the report
OUTPUT_FILES = ("joint_friction.yaml", "friction_compensator.yaml", "transmission_sim.yaml")
#: smallest stiction band half-width Δv [rad/s]
MIN_DV = 0.01
#: ``effort_lag`` of :func:`identify_arm` and ``fric identify --effort-lag``: estimated from the
#: data. On a recording whose effort is a held command (half a step late) it removes the viscous
#: bias (arm7, 60 s at 1 kHz, gear law: joint_a2's bp +28 std → +0.3 std); on one whose effort
#: is sampled with the state its estimate is not significant and the fit is unchanged; where the
#: model leaves effort unexplained (the simulated node chain) the recording's halves disagree and
#: it uses 0 with a warning — never worse than 0 (test/core/test_arm_effort_lag.py,
#: docs/arm_workflow.md "Effort lag")
DEFAULT_EFFORT_LAG = "auto"
#: ``--model``: ``auto`` fits the asymmetric line and the monotone curve and keeps, per joint,
#: the one with the smaller held-out RMS error (the curve on a tie: it contains the line; both
#: reported in the file's ``model_selection``); ``gear`` is never chosen by auto
MODELS = ("auto", "asymmetric", "curve", "gear")
DEFAULT_MODEL = "auto"
#: ``--offset``: how a per-joint effort offset is treated (:func:`_separate_offsets`)
OFFSETS = ("auto", "none", "estimate-at-rest", "symmetric")
DEFAULT_OFFSET = "auto"
#: ``--dynamics``: ``identify`` fits the rigid body's base parameters with the friction,
#: ``urdf`` takes the URDF's inverse dynamics; ``auto`` fits both (the URDF's from the same
#: normal equations) and keeps the URDF's rigid body unless its friction values differ from the
#: identified ones by more than ``URDF_Z`` identified stds or the identified one predicts the
#: held-out rows better by more than :data:`URDF_TOLERANCE` (:func:`_choose_dynamics`)
DYNAMICS = ("auto", "identify", "urdf")
DEFAULT_DYNAMICS = "auto"
#: ``--dynamics auto``: the identified rigid body is kept when some joint's held-out RMS error
#: with the URDF's is larger than this factor times that with the identified one
URDF_TOLERANCE = 1.1
#: fitted rows the report's friction-velocity figure shows (evenly spaced)
REPORT_ROWS = 6000
#: a joint at rest this long (|v| ≤ Δv/2) gives its effort offset (``--offset estimate-at-rest``)
REST_SECONDS = 0.5
#: what :func:`excite_arm` writes: the trajectory as CSV (``trajectory_tracker`` plays it), as a
#: trajectory_msgs/JointTrajectory in YAML (``ros2 topic pub``) and in an MCAP bag
#: (``ros2 bag play``)
EXCITE_FILES = ("excitation.csv", "excitation_trajectory.yaml", "excitation_bag")


class ArmIdentifyError(ValueError):
    """A problem with the user's input (recording, URDF, joints, options); one line."""


@dataclass
class ArmIdentifyResult:
    """What :func:`identify_arm` produced: the identified set, the written files (name → path),
    the held-out RMS per joint [N·m; N for a prismatic joint], the warnings, the fit itself, and
    the effort lag [s] undone (``effort_lag``; ``effort_lag_std`` [s] when it was estimated, else
    None); ``joint_kinds``: joint → URDF type (``"prismatic"``: m, m/s, N)."""

    friction: object
    files: Dict[str, Path]
    holdout_rms: Dict[str, float]
    residual_std: Dict[str, float]
    warnings: List[str] = field(default_factory=list)
    fit: object = None
    effort_lag: float = 0.0
    effort_lag_std: Optional[float] = None
    joint_kinds: Dict[str, str] = field(default_factory=dict)


def parse_effort_lag(value) -> Union[str, float]:
    """``"auto"`` or a finite lag [s] (a number or its text); ArmIdentifyError otherwise.

    Parameters
    ----------
    value : str or float
        ``--effort-lag``'s value.

    Returns
    -------
    str or float
        ``"auto"``, or the lag in seconds.
    """
    if isinstance(value, str):
        text = value.strip()
        if text.lower() == "auto":
            return "auto"
        try:
            value = float(text)
        except ValueError:
            raise ArmIdentifyError(f"--effort-lag: expected auto or a lag in seconds (e.g. "
                                   f"0.001), got {text!r}") from None
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
            or not math.isfinite(value):
        raise ArmIdentifyError(f"--effort-lag: expected auto or a finite lag in seconds, got "
                               f"{value!r}")
    return float(value)


def parse_effort_scale(value) -> Dict[str, float]:
    """``--effort-scale JOINT=K,...``: per joint, the factor the recorded effort is multiplied by.

    For a recording whose effort is a motor current [A] (many drives publish the current, not the
    torque): ``K = k_t × N``, the motor's torque constant [N·m/A] times the gear reduction, gives
    the joint torque [N·m] (a prismatic joint: its force per ampere [N/A]). Joints not named keep
    their effort. ArmIdentifyError (one line naming the entry) for a bad spec.

    Parameters
    ----------
    value : str or mapping
        ``"joint_a1=12.5,joint_a2=12.5"``, or a mapping joint → factor.

    Returns
    -------
    dict
        Joint name → finite, non-zero factor.
    """
    if isinstance(value, str):
        pairs = []
        for part in value.split(","):
            name, eq, num = part.strip().partition("=")
            if not eq or not name.strip():
                raise ArmIdentifyError(f"--effort-scale: expected JOINT=K[,JOINT=K...] (K in "
                                       f"N·m/A, e.g. joint_a1=12.5), got {part.strip()!r}")
            try:
                factor = float(num.strip())
            except ValueError:
                raise ArmIdentifyError(f"--effort-scale: {name.strip()}={num.strip()}: "
                                       f"{num.strip()!r} is not a number") from None
            pairs.append((name.strip(), factor))
    elif isinstance(value, dict):
        pairs = [(str(k), v) for k, v in value.items()]
    else:
        raise ArmIdentifyError(f"--effort-scale: expected JOINT=K[,JOINT=K...], got {value!r}")
    out: Dict[str, float] = {}
    for name, factor in pairs:
        if name in out:
            raise ArmIdentifyError(f"--effort-scale: joint {name} given twice")
        if isinstance(factor, bool) or not isinstance(factor, (int, float, np.integer,
                                                               np.floating)) \
                or not math.isfinite(factor) or factor == 0.0:
            raise ArmIdentifyError(f"--effort-scale: {name}={factor!r}: expected a finite, "
                                   f"non-zero factor (motor constant × reduction, N·m/A)")
        out[name] = float(factor)
    if not out:
        raise ArmIdentifyError("--effort-scale: no JOINT=K given")
    return out


def _none(_msg: str) -> None:
    pass


def _scaled_effort(effort: np.ndarray, names: Sequence[str], scale: Dict[str, float],
                   source: str, progress: Callable[[str], None]) -> np.ndarray:
    """``effort`` with each named joint's column multiplied by its factor (``--effort-scale``);
    ArmIdentifyError naming a joint the recording lacks."""
    missing = [n for n in scale if n not in names]
    if missing:
        raise ArmIdentifyError(f"--effort-scale: joint(s) {', '.join(missing)} not in the "
                               f"recording {source} (it has {', '.join(names)})")
    out = effort.copy()
    for name, factor in scale.items():
        out[:, list(names).index(name)] *= factor
    progress("efforts scaled (--effort-scale): "
             + ", ".join(f"{n} × {k:.6g}" for n, k in scale.items()))
    return out


def _drop_non_finite(t, q, effort, v, warnings: List[str], source: str):
    """Drop rows with NaN/inf anywhere (stamp, position, effort, velocity) or beyond the
    plausible magnitudes (:data:`~fric_core.arm_identification.recording.PLAUSIBLE`; the
    reader refused those already, a scaled effort may exceed them); warn or refuse. Returns the
    arrays themselves (no copy) when every row is kept."""
    from fric_core.arm_identification.recording import PLAUSIBLE

    with np.errstate(invalid="ignore"):
        ok = (np.abs(t) <= PLAUSIBLE["t"]) & np.all(np.abs(q) <= PLAUSIBLE["position"], axis=1) \
            & np.all(np.abs(effort) <= PLAUSIBLE["effort"], axis=1)
        if v is not None:
            ok &= np.all(np.abs(v) <= PLAUSIBLE["velocity"], axis=1)
    bad = int((~ok).sum())
    if not bad:
        return t, q, effort, v
    if bad == ok.size:
        raise ArmIdentifyError(f"{source}: every one of the {ok.size} rows has NaN, inf or an "
                               "implausible magnitude in its stamp, position, velocity or "
                               "effort; nothing to identify")
    first = int(np.argmax(~ok))
    warnings.append(f"{bad} of {ok.size} rows with NaN, inf or an implausible magnitude dropped "
                    f"(first at row {first}); the gaps they leave split the data into segments")
    return t[ok], q[ok], effort[ok], None if v is None else v[ok]


def _urdf_dynamics(urdf: str, joints: Optional[Sequence[str]], recorded: Sequence[str],
                   q, warnings: List[str]):
    """The URDF's dynamics for the identified joints; ArmIdentifyError naming missing joints.

    A movable URDF joint that is not identified is locked: at the median of its recorded
    positions when the recording has it (with a warning when it moved), else at 0 rad.
    """
    from fric_core.transmission.urdf_dynamics import UrdfDynamics, UrdfError

    try:
        full = UrdfDynamics(urdf)
    except UrdfError as e:
        raise ArmIdentifyError(f"--urdf {urdf}: {str(e).removeprefix('urdf: ')}") from None
    names = list(joints) if joints else list(recorded)
    missing = [n for n in names if n not in full.joint_names]
    if missing:
        what = "--joints" if joints else "the recording's joints"
        raise ArmIdentifyError(
            f"joint(s) {', '.join(missing)} ({what}) not in the URDF {full.source} (its movable "
            f"joints: {', '.join(full.joint_names)})"
            + ("" if joints else "; choose the joints to identify with --joints"))
    locked = {}
    for n, kind in zip(full.joint_names, full.joint_kinds):
        if n in names:
            continue
        unit = "m" if kind == "prismatic" else "rad"
        if n in recorded:
            col = q[:, list(recorded).index(n)]
            locked[n] = float(np.median(col))
            span = float(col.max() - col.min())
            if span > (0.001 if kind == "prismatic" else 0.01):
                warnings.append(f"joint {n} moved ({span:.3g} {unit}) but is not identified: "
                                f"held at {locked[n]:.3g} {unit} in the model (its motion is not "
                                "accounted for)")
        else:
            locked[n] = 0.0
            warnings.append(f"URDF joint {n} is not in the recording: held at 0 {unit} in the "
                            "model")
    order = [n for n in full.joint_names if n in names]  # the model's order
    return UrdfDynamics(urdf, joint_names=order, locked_positions=locked), full.source


def _constant_gravity_joints(dyn, samples: int = 20, seed: int = 0) -> List[str]:
    """Joints whose gravity load is the same non-zero force in every configuration: a prismatic
    joint along gravity (a lift carrying mass M: M·g)."""
    rng = np.random.default_rng(seed)
    lo = np.where(np.isfinite(dyn.lower), dyn.lower, -np.pi)
    hi = np.where(np.isfinite(dyn.upper), dyn.upper, np.pi)
    g = np.array([dyn.gravity_torque(rng.uniform(lo, hi)) for _ in range(samples)])
    mean = np.abs(g.mean(axis=0))
    return [n for j, n in enumerate(dyn.joint_names)
            if dyn.joint_kinds[j] == "prismatic" and mean[j] > 0
            and np.ptp(g[:, j]) <= 1e-9 * mean[j]]


def _rank_hint(dyn, dynamics: str) -> str:
    """What to tell a user whose fit is rank deficient: a lift's structural singularity
    (:func:`_constant_gravity_joints`, with the rigid body identified), or the excitation."""
    lifts = _constant_gravity_joints(dyn) if dynamics == "identify" else []
    if lifts:
        which = ", ".join(lifts)
        return (f" — joint(s) {which}: a prismatic joint along gravity carries a constant force "
                "M·g (M the mass it lifts); with the rigid body identified, M·g cannot be told "
                "from an asymmetry of its friction levels (Cp − Cn: a constant force either "
                "way), nor M from its rotor inertia (both multiply its acceleration): singular "
                "for every trajectory. Use --dynamics urdf (M from the URDF's masses)")
    return (" — the recording does not excite every joint (and the rigid body): record a "
            "trajectory that moves each joint both ways at varied speeds (fric excite)")


def _holdout_split(M: int, segs: Sequence[slice], fraction: float) -> int:
    """First held-out row: at ``(1 − fraction)·M``, moved to a segment boundary when one lies
    within ±⅓ of the held-out length (the held-out part is then whole segments)."""
    if fraction <= 0:
        return M
    k = int(round((1.0 - fraction) * M))
    bounds = [s.start for s in segs[1:]]
    near = [b for b in bounds if abs(b - k) <= fraction * M / 3.0]
    return min(near, key=lambda b: abs(b - k)) if near else k


def _choose_dv(v: np.ndarray, a: np.ndarray, var_v, settle_time: float) -> float:
    """Δv [rad/s]: above the velocity noise (3σ), and wide enough that the filtered effort's
    Coulomb step at a reversal (smeared over ``settle_time``) has settled outside the band."""
    sig = float(np.sqrt(np.nanmax(np.atleast_1d(var_v)))) if np.size(var_v) else 0.0
    turning = np.abs(v) < np.nanpercentile(np.abs(v), 10)
    a_rev = float(np.nanmedian(np.abs(a[turning]))) if turning.any() else 0.0
    dv = max(MIN_DV, 3.0 * sig if math.isfinite(sig) else 0.0, a_rev * settle_time)
    return float(dv)


def _friction_outside_band(fs, names, v) -> np.ndarray:
    """τ_f(v) of each joint's identified law, 0 inside the Δv band (as in the fit's model)."""
    dv = float(fs.dv or 0.0)
    return np.column_stack([np.where(np.abs(v[:, j]) > dv, fs.joints[n].kinetic(v[:, j]), 0.0)
                            for j, n in enumerate(names)])


def _params_files(out: Path, friction_path: Path, joints: List[str], urdf: str, dt: float,
                  armature: Optional[Dict[str, Optional[float]]], warnings: List[str],
                  header: str) -> Dict[str, Path]:
    """``friction_compensator.yaml`` and ``transmission_sim.yaml``: ``ros__parameters`` files
    naming the friction file by its absolute path, the identified joints, the URDF (absolute),
    and what the recording tells: the compensator's ``dt`` (the joint_states period), the sim's
    ``rotor_inertia`` (when the fit separated it from the link inertias)."""
    import yaml

    absolute = str(friction_path.resolve())
    comp = {"joints": list(joints), "joint_friction": absolute, "urdf": urdf,
            "dt": float(dt)}
    sim = {"urdf": urdf, "joint_names": list(joints), "joint_friction": absolute}
    if armature and all(armature.get(n) is not None for n in joints):
        m = [float(armature[n]) for n in joints]
        if any(x < 0 for x in m):
            warnings.append("identified rotor inertia below 0 for "
                            + ", ".join(n for n, x in zip(joints, m) if x < 0)
                            + ": transmission_sim.yaml uses 0")
        sim["rotor_inertia"] = [max(x, 0.0) for x in m]
    docs = {"friction_compensator.yaml": {"friction_compensator": {"ros__parameters": comp}},
            "transmission_sim.yaml": {"transmission_sim": {"ros__parameters": sim}}}
    paths = {}
    for name, doc in docs.items():
        p = out / name
        p.write_text(header + yaml.safe_dump(doc, sort_keys=False, default_flow_style=None),
                     encoding="utf-8")
        paths[name] = p
    return paths


@dataclass
class ArmIdentification:
    """What :func:`identify_recording` found, before anything is written.

    ``friction``: the identified set as ``joint_friction.yaml`` holds it (provenance in its
    ``extra``); ``fit``: the fit whose rigid body and predictions are used; ``holdout_rms`` and
    ``residual_std`` per joint [N·m; N for a prismatic joint]; ``warnings``; ``effort_lag`` [s]
    undone and ``lag_estimate`` (the ``auto`` search's result, None when given); ``method``:
    the method used (``eiv`` falls back to ``ols`` with a warning); ``source``: the recording
    path; ``urdf_source``: the URDF file read; ``joint_kinds``: joint → URDF type; ``prep``:
    the prepared rows, fitted ``[0, k)`` and held out ``[k, len(prep))``; ``pred_holdout``: the
    prediction of the held-out rows (NaN inside the Δv band).
    """

    friction: object
    fit: object
    holdout_rms: Dict[str, float]
    residual_std: Dict[str, float]
    warnings: List[str]
    effort_lag: float
    lag_estimate: object
    model: str
    dynamics: str
    method: str
    source: str
    urdf_source: str
    joint_kinds: Dict[str, str]
    prep: object
    k: int
    pred_holdout: np.ndarray

    @property
    def effort_lag_std(self) -> Optional[float]:
        """The estimated lag's std [s]; None when the lag was given or its std is not finite."""
        est = self.lag_estimate
        return None if est is None or not math.isfinite(est.std) else float(est.std)


def identify_recording(recording, urdf: str, *, topic: str = "joint_states",
                       joints: Optional[Sequence[str]] = None, model: str = DEFAULT_MODEL,
                       dynamics: str = DEFAULT_DYNAMICS, method: str = "eiv",
                       holdout: float = HOLDOUT_FRACTION,
                       effort_lag: Union[str, float] = DEFAULT_EFFORT_LAG,
                       effort_scale: Union[str, Dict[str, float], None] = None,
                       offset: str = DEFAULT_OFFSET,
                       progress: Callable[[str], None] = _none) -> ArmIdentification:
    """Steps 1–5 of the module docstring: read, check, prepare, hold out, fit; nothing written.

    What ``fric identify`` (:func:`identify_arm`, which then writes the files and the report)
    and ``fric fleet`` (one call per recording) share. Arguments as :func:`identify_arm`'s.

    Returns
    -------
    ArmIdentification
        The identified set, the fit, the held-out check and what the steps found.

    Raises
    ------
    ArmIdentifyError
        One line naming the problem with the recording, the URDF, the joints or an option
        (a damaged bag is a ``ValueError`` naming it).
    """
    from fric_core.arm_identification.fit import fit_arm_friction
    from fric_core.arm_identification.recording import read_arm_recording
    from fric_core.arm_identification.report import holdout_rms
    from fric_core.arm_identification.signals import estimate_effort_lag, prepare

    import time

    effort_lag, scale = _checked_options(recording, model, offset, effort_lag, effort_scale,
                                         dynamics)
    start = time.perf_counter()
    user_progress = progress

    def progress(msg: str) -> None:
        user_progress(f"{msg} [{time.perf_counter() - start:.1f} s]")

    warnings: List[str] = []
    src = Path(recording)
    progress(f"reading {src}")
    rec = read_arm_recording(src, topic)
    if joints:  # every recorded joint is read: the others' positions lock them in the model
        missing = [j for j in joints if j not in rec.joint_names]
        if missing:
            raise ArmIdentifyError(f"--joints: joint(s) {', '.join(missing)} not in the "
                                   f"recording {rec.source or src} (it has "
                                   f"{', '.join(rec.joint_names)})")
    names_rec = list(rec.joint_names)
    warnings += [str(w) for w in rec.warnings]
    t = np.asarray(rec.t, dtype=float)
    q = np.asarray(rec.q, dtype=float)
    effort = np.asarray(rec.effort, dtype=float)
    if scale:
        effort = _scaled_effort(effort, names_rec, scale, rec.source or str(src), progress)
    v_meas = None if rec.v is None else np.asarray(rec.v, dtype=float)
    progress(f"read {t.size} samples of {len(names_rec)} joints ({', '.join(names_rec)}) over "
             f"{rec.duration:.4g} s")
    t, q, effort, v_meas = _drop_non_finite(t, q, effort, v_meas, warnings, rec.source or str(src))

    dyn, urdf_source = _urdf_dynamics(urdf, joints, names_rec, q, warnings)
    cols = [names_rec.index(n) for n in dyn.joint_names]
    q, effort = q[:, cols], effort[:, cols]
    v_meas = None if v_meas is None else v_meas[:, cols]

    def prepared(lag: float):
        try:
            return prepare(t, q, effort, v=v_meas, min_rows=MIN_SAMPLES, effort_lag=lag,
                           names=dyn.joint_names)
        except ValueError as e:
            msg = str(e)
            if msg.startswith("effort_lag:"):
                raise ArmIdentifyError("--effort-lag:" + msg.removeprefix("effort_lag:")) \
                    from None
            raise ArmIdentifyError(f"{src}: {msg.removeprefix('t: ')}") from None

    prep = prepared(0.0 if effort_lag == "auto" else effort_lag)
    M = len(prep)
    warnings += [s for s in prep.notes if "dropped" in s] + list(prep.warnings)
    k = _holdout_split(M, prep.segments, holdout)
    if k < MIN_SAMPLES:
        raise ArmIdentifyError(f"{src}: recording too short: {k} samples left for the fit after "
                               f"holding out {M - k} (need {MIN_SAMPLES})")
    fit_rows, hold_rows = slice(0, k), slice(k, M)
    dv = _choose_dv(prep.v[fit_rows], prep.a[fit_rows], prep.var_v, prep.settle_time)
    lag_est = None
    if effort_lag == "auto":
        lag_est = _estimate_lag(prep, k, dyn, "gear" if model == "gear" else "asymmetric",
                                "identify" if dynamics == "auto" else dynamics, dv, warnings,
                                progress,
                                estimate_effort_lag, fit_arm_friction)
        effort_lag = 0.0 if lag_est is None else lag_est.lag
        if effort_lag != 0.0:
            prep = prepared(effort_lag)  # the same rows: the shift uses the trimmed edges
    progress(f"fitting {k} samples ({prep.t[k - 1] - prep.t[0]:.3g} s; {M - k} held out), "
             f"model {model}, dynamics {dynamics}, method {method}, Δv = {dv:.3g} rad/s"
             + (" (m/s for prismatic joints)" if "prismatic" in dyn.joint_kinds else ""))
    noise = {"var_v": np.asarray(prep.var_v, dtype=float),
             "var_a": np.asarray(prep.var_a, dtype=float)}

    def run(law: str, meth: str, line: bool = False, dyn_mode: Optional[str] = None):
        mode = dyn_mode or ("identify" if dynamics == "auto" else dynamics)
        try:
            return fit_arm_friction(prep.q[fit_rows], prep.v[fit_rows], prep.a[fit_rows],
                                    prep.effort[fit_rows], dyn, dynamics=mode, method=meth,
                                    dv=dv, law=law, noise=noise, line=line,
                                    urdf_too=dynamics == "auto" and law != "gear")
        except ValueError as e:  # np.linalg.LinAlgError is one too
            msg = " ".join(str(e).split())
            if meth == "eiv" and msg.startswith("noise:"):
                raise  # the default must not fail on ordinary data: least squares instead
            if "one direction only" in msg or "rank deficient" in msg:
                hint = _rank_hint(dyn, mode)
                if hint.startswith(" — joint(s)"):  # not the trajectory's fault
                    msg = msg.replace("; the trajectory does not excite every parameter", "")
                msg += hint
            raise ArmIdentifyError(msg) from None

    def run_or_ols(law: str, line: bool = False, dyn_mode: Optional[str] = None):
        nonlocal method
        try:
            return run(law, method, line, dyn_mode)
        except ValueError as e:
            if isinstance(e, ArmIdentifyError):
                raise
            warnings.append("errors-in-variables (--method eiv) not possible on these data: the "
                            "estimated velocity/acceleration noise exceeds the regressors' spread "
                            "(typical of efforts from motor currents, or positions without "
                            "encoder noise); least squares (--method ols) used instead")
            method = "ols"
            return run(law, method, line, dyn_mode)

    def fit_laws():
        fits = {}
        if model == "auto":  # one pass over the data: the line from the curve's normal equations
            progress("fitting the curve and the asymmetric line")
            try:
                curve = run_or_ols("curve", line=True)
                fits = {"asymmetric": curve.line, "curve": curve}
            except ArmIdentifyError as e:
                warnings.append(f"--model auto: the curve law could not be fitted ({e}); the "
                                "asymmetric line alone is used")
        if not fits:
            law = "asymmetric" if model == "auto" else model
            progress(f"fitting the {law} law")
            fits[law] = run_or_ols(law)
        return fits

    try:
        fits = fit_laws()
    except ArmIdentifyError as e:
        if dynamics != "auto" or "rank deficient" not in str(e):
            raise
        warnings.append(f"--dynamics auto: this motion does not determine the rigid body ({e}); "
                        "the URDF's is used")
        dynamics = "urdf"
        fits = fit_laws()
    if dynamics == "auto":
        if "gear" in fits:  # the bilinear gear fit has no normal equations to map: fit again
            progress("fitting the gear law with the URDF's rigid body")
            by_dynamics = {"identify": fits, "urdf": {"gear": run_or_ols("gear",
                                                                         dyn_mode="urdf")}}
        else:
            by_dynamics = {"identify": fits,
                           "urdf": {law: (f.urdf if law == "curve" or "curve" not in fits
                                          else fits["curve"].urdf.line)
                                    for law, f in fits.items()}}
        dynamics, chosen_fit, dyn_choice = _choose_dynamics(by_dynamics, prep, fit_rows,
                                                            hold_rows, dyn.joint_names,
                                                            warnings, progress)
        fit, fs, choice, held_out = chosen_fit
    else:
        dyn_choice = None
        fit, fs, choice, held_out = _choose_law(fits, prep, fit_rows, hold_rows,
                                                dyn.joint_names, warnings)
    fs = _separate_offsets(fs, fit, prep, fit_rows, offset, dyn.joint_names, warnings, progress)
    if choice:
        fs = dataclasses.replace(fs, extra={**fs.extra, "model_selection": choice})
    if dyn_choice:
        fs = dataclasses.replace(fs, extra={**fs.extra, "dynamics_selection": dyn_choice})
    provenance = {"effort_lag": float(f"{effort_lag:.4g}")}
    if lag_est is not None:
        provenance["effort_lag_estimate"] = float(f"{lag_est.estimate:.4g}")
        if math.isfinite(lag_est.std):
            provenance["effort_lag_std"] = float(f"{lag_est.std:.2g}")
    fs = dataclasses.replace(fs, extra={**fs.extra, **provenance})

    if M > k and held_out is not None:  # --model auto: computed when choosing the law
        pred_h = held_out
    elif M > k:
        pred_h = fit.predict(*(x[hold_rows] for x in (prep.q, prep.v, prep.a)))
        # inside the band static friction holds the joint (any torque up to breakaway): the
        # kinetic law, and the gear's drive/back-drive switch, predict nothing there
        pred_h[np.abs(prep.v[hold_rows]) <= fs.dv] = np.nan
    else:
        pred_h = np.zeros((0, dyn.n))
    rms = holdout_rms(prep.effort[hold_rows], pred_h) if M > k else np.full(dyn.n, np.nan)
    return ArmIdentification(
        friction=fs, fit=fit, holdout_rms=dict(zip(dyn.joint_names, map(float, rms))),
        residual_std=dict(fit.residual_std), warnings=warnings, effort_lag=effort_lag,
        lag_estimate=lag_est, model=model, dynamics=dynamics, method=method, source=str(src),
        urdf_source=str(urdf_source), joint_kinds=dict(zip(dyn.joint_names, dyn.joint_kinds)),
        prep=prep, k=k, pred_holdout=pred_h)


def identify_arm(recording, urdf: str, out_dir, *, topic: str = "joint_states",
                 joints: Optional[Sequence[str]] = None, model: str = DEFAULT_MODEL,
                 dynamics: str = DEFAULT_DYNAMICS, method: str = "eiv",
                 holdout: float = HOLDOUT_FRACTION,
                 effort_lag: Union[str, float] = DEFAULT_EFFORT_LAG,
                 effort_scale: Union[str, Dict[str, float], None] = None,
                 offset: str = DEFAULT_OFFSET,
                 progress: Callable[[str], None] = _none) -> ArmIdentifyResult:
    """Identify an arm's joint friction from a recording and write the files (module docstring).

    ``recording``: a rosbag2 directory (or its .db3/.mcap file) or a CSV; ``urdf``: a URDF path
    or a bundled name; ``joints``: the joints to identify (default: the recording's); ``model``
    ``"auto"``/``"asymmetric"``/``"curve"``/``"gear"``, ``dynamics``
    ``"auto"``/``"identify"``/``"urdf"`` (:data:`DYNAMICS`), ``method``
    ``"eiv"``/``"ols"``; ``holdout``: fraction held out; ``effort_lag``: how long [s] the effort
    lags the states, or ``"auto"`` to estimate it (module docstring, step 4b); ``effort_scale``:
    joint → factor (or its ``JOINT=K,...`` text, :func:`parse_effort_scale`) multiplying that
    joint's recorded effort right after reading (an effort recorded as motor current). Raises
    :class:`ArmIdentifyError` (one line naming the problem) for bad input.
    :func:`identify_recording` does steps 1–5, :func:`write_identification` step 6.
    """
    from fric_nodes.tools.user_errors import out_dir_problem

    import time

    start = time.perf_counter()
    _checked_options(recording, model, offset, effort_lag, effort_scale, dynamics)
    problem = out_dir_problem(out_dir, "--out")  # before reading: nothing written on error
    if problem:
        raise ArmIdentifyError(problem)
    ident = identify_recording(recording, urdf, topic=topic, joints=joints, model=model,
                               dynamics=dynamics, method=method, holdout=holdout,
                               effort_lag=effort_lag, effort_scale=effort_scale, offset=offset,
                               progress=progress)
    return write_identification(
        ident, urdf, out_dir,
        progress=lambda msg: progress(f"{msg} [{time.perf_counter() - start:.1f} s]"))


def unknown_joints(joints: Sequence[str], dyn) -> Optional[str]:
    """``--joints`` naming joints the URDF's model ``dyn`` does not have: the message naming
    them and the movable joints it has, or None (``fric excite``, ``fric fleet``)."""
    missing = [j for j in joints if j not in dyn.joint_names]
    if not missing:
        return None
    return (f"--joints: joint(s) {', '.join(missing)} not in the URDF {dyn.source} (its "
            f"movable joints: {', '.join(dyn.joint_names)})")


def _checked_options(recording, model: str, offset: str, effort_lag, effort_scale,
                     dynamics: str = DEFAULT_DYNAMICS):
    """The options checked before anything is read or written (in this order: ``--model``,
    ``--dynamics``, ``--offset``, ``--effort-lag``, ``--effort-scale``, the recording's path);
    returns the parsed effort lag and scale. ArmIdentifyError naming the first bad one."""
    if model not in MODELS:
        raise ArmIdentifyError(f"--model: expected one of {', '.join(MODELS)}, got {model!r}")
    if dynamics not in DYNAMICS:
        raise ArmIdentifyError(f"--dynamics: expected one of {', '.join(DYNAMICS)}, got "
                               f"{dynamics!r}")
    if offset not in OFFSETS:
        raise ArmIdentifyError(f"--offset: expected one of {', '.join(OFFSETS)}, got "
                               f"{offset!r}")
    lag = parse_effort_lag(effort_lag)
    scale = None if effort_scale is None else parse_effort_scale(effort_scale)
    if not Path(recording).exists():
        raise ArmIdentifyError(f"{recording}: no such file or directory")
    return lag, scale


def write_identification(ident: ArmIdentification, urdf: str, out_dir, *,
                         progress: Callable[[str], None] = _none) -> ArmIdentifyResult:
    """Step 6 of the module docstring: ``joint_friction.yaml``, the parameter files and the
    report of an identification, in ``out_dir`` (created).

    Parameters
    ----------
    ident : ArmIdentification
        From :func:`identify_recording`.
    urdf : str
        The ``--urdf`` given (named in the files' headers).
    out_dir : str or path-like
        The output directory.
    progress : callable
        Called with a line of progress.

    Returns
    -------
    ArmIdentifyResult
        The set, the written files (name → path), the held-out RMS and the warnings.
    """
    from fric_core.arm_identification.joint_friction import write_joint_friction
    from fric_core.arm_identification.report import ARM_REPORT_FILES, ArmReport, write_arm_report
    from fric_nodes.tools.user_errors import make_out_dir

    fs, fit, prep, k = ident.friction, ident.fit, ident.prep, ident.k
    M = len(prep)
    names = list(ident.joint_kinds)
    warnings = ident.warnings
    lag_est, effort_lag = ident.lag_estimate, ident.effort_lag
    out = make_out_dir(out_dir, "--out")
    progress(f"writing {out}")
    how = " (auto)" if lag_est is not None else ""
    header = (f"fric identify {ident.source} --urdf {urdf} (model {ident.model}, dynamics "
              f"{ident.dynamics}, method {ident.method}, effort lag {effort_lag:.4g} s{how}); "
              f"{k} samples fitted, {M - k} held out")
    fpath = write_joint_friction(out / OUTPUT_FILES[0], fs, header=header)
    urdf_param = str(Path(ident.urdf_source).resolve())
    files = {OUTPUT_FILES[0]: fpath}
    steps = np.diff(prep.t)
    dt = float(f"{np.median(steps[steps > 0]):.6g}")  # 0.005, not 0.004999999999999893
    files.update(_params_files(out, fpath, names, urdf_param, dt, fit.armature, warnings,
                               f"# written by fric identify from {ident.source}\n"))

    # the report's friction-velocity scatter: at most REPORT_ROWS fitted rows, evenly spaced
    # (its figure shows no more; predicting all 48 000 rows of a minute at 1 kHz cost 0.5 s)
    pick = np.unique(np.linspace(0, k - 1, min(k, REPORT_ROWS)).astype(int))
    qf, vf, af, tf = (x[pick] for x in (prep.q, prep.v, prep.a, prep.effort))
    # everything the model attributes to the rigid body, rotor and gear: its prediction less
    # friction (the fit's own parameters, also in the gauge of --model gear --dynamics identify)
    rest_fit = fit.predict(qf, vf, af) - _friction_outside_band(fs, names, vf)
    hold_rows = slice(k, M)
    lag_std = ident.effort_lag_std
    report = ArmReport(friction=fs, v_fit=vf, tau_friction=tf - rest_fit,
                       t_holdout=prep.t[hold_rows], tau_holdout=prep.effort[hold_rows],
                       pred_holdout=ident.pred_holdout, source=ident.source, urdf=urdf_param,
                       n_samples=M, duration=float(prep.t[-1] - prep.t[0]),
                       cond=float(fit.cond), residual_std=ident.residual_std,
                       design_cond=float(fit.design.cond),
                       determined=fit.determined, warnings=warnings,
                       data_notes=[s for s in prep.notes
                                   if "dropped" not in s and not s.startswith("effort lag")],
                       effort_lag=effort_lag, sample_step=dt,
                       effort_lag_estimate=None if lag_est is None else lag_est.estimate,
                       effort_lag_std=lag_std,
                       effort_lag_consistent=lag_est is None or lag_est.consistent,
                       joint_kinds=dict(ident.joint_kinds))
    files.update(zip(ARM_REPORT_FILES, write_arm_report(report, out)))
    return ArmIdentifyResult(friction=fs, files=files, holdout_rms=dict(ident.holdout_rms),
                             residual_std=ident.residual_std, warnings=warnings, fit=fit,
                             effort_lag=effort_lag, effort_lag_std=lag_std,
                             joint_kinds=dict(ident.joint_kinds))


def _choose_dynamics(by_dynamics, prep, fit_rows, hold_rows, names, warnings, progress):
    """``--dynamics auto``: the URDF's rigid body or the identified one.

    ``by_dynamics``: ``{"identify": fits, "urdf": fits}`` (law → fit, the same laws). The URDF's
    rigid body is kept unless (a) some friction value fitted with it differs from the identified
    one by more than :data:`~fric_core.arm_identification.urdf_check.URDF_Z` of the identified
    value's std, or (b) some joint's held-out RMS error with it exceeds
    :data:`URDF_TOLERANCE` × that with the identified one. Why prefer the URDF, and why (a)
    catches what (b) cannot: :mod:`fric_core.arm_identification.urdf_check`. When kept, its
    friction covariances carry the difference (:func:`~.urdf_check.with_urdf_bias`).

    Returns (the chosen dynamics, :func:`_choose_law`'s tuple for it, the file's
    ``dynamics_selection``: per joint the held-out RMS of both, the largest difference in
    identified stds and where, the choice). With the URDF's kept, the identified rigid body
    still goes into the set's ``rigid_body`` section (the compensator's ``gravity:
    identified``: the holding torque the recording measured)."""
    from fric_core.arm_identification.report import holdout_rms
    from fric_core.arm_identification.result import predict_together
    from fric_core.arm_identification.rigid_body import RIGID_BODY_KEY
    from fric_core.arm_identification.urdf_check import (URDF_Z, urdf_disagreement,
                                                         with_urdf_bias)
    from fric_core.forked import fork_call

    ident, urdf = by_dynamics["identify"], by_dynamics["urdf"]
    rows = hold_rows if hold_rows.stop - hold_rows.start >= 10 else fit_rows
    X = tuple(x[rows] for x in (prep.q, prep.v, prep.a))
    # both sets' predictions of the compared rows, side by side where the process can fork
    later = fork_call(lambda: predict_together(by_dynamics["urdf"], *X))
    preds = {"identify": predict_together(ident, *X)}
    preds["urdf"] = later.result()
    results, rms, notes = {}, {}, {}
    for mode in ("identify", "urdf"):
        notes[mode] = []
        if mode == "urdf":
            urdf = {law: with_urdf_bias(f, ident[law]) for law, f in urdf.items()}
            if "curve" in urdf and "asymmetric" in urdf:  # the line beside the curve
                urdf["asymmetric"] = urdf["curve"].line
        fits = ident if mode == "identify" else urdf
        results[mode] = _choose_law(fits, prep, fit_rows, hold_rows, names, notes[mode],
                                    preds[mode])
        if mode == "identify":  # the values that would be written: each joint's chosen law
            laws = results[mode][2]
            z, zj, zk = max(urdf_disagreement(ident[law], by_dynamics["urdf"][law],
                                              [n for n in names if laws is None
                                               or laws[n]["chosen"] == law])
                            for law in ident)
        fit, _, _, held_out = results[mode]
        if held_out is None or rows is not hold_rows:
            held_out = preds[mode][next(iter(fits))] if len(fits) == 1 else \
                fit.predict(*X)
            held_out[np.abs(prep.v[rows]) <= fit.dv] = np.nan
        rms[mode] = holdout_rms(prep.effort[rows], held_out)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = rms["urdf"] / rms["identify"]
    finite = np.isfinite(ratio)
    worst = int(np.argmax(np.where(finite, ratio, -np.inf))) if finite.any() else 0
    rmax = float(ratio[worst]) if finite.any() else 1.0
    use = "identify" if (z > URDF_Z or rmax > URDF_TOLERANCE) else "urdf"
    choice = {name: {"identify": float(f"{rms['identify'][j]:.4g}"),
                     "urdf": float(f"{rms['urdf'][j]:.4g}")} for j, name in enumerate(names)}
    choice["difference_in_std"] = float(f"{z:.3g}")
    if zj:
        choice["largest_difference"] = f"{zj}.{zk}"
    choice["chosen"] = use
    if use == "identify":
        why = (f"{zj}'s {zk} fitted with it differs from the identified one by {z:.3g} std "
               f"(> {URDF_Z:g})" if z > URDF_Z else
               f"it predicts the held-out efforts worse ({names[worst]}: RMS "
               f"{rms['urdf'][worst]:.3g} against {rms['identify'][worst]:.3g})")
        warnings.append(f"--dynamics auto: the URDF's rigid body does not fit this arm: {why}; "
                        "the identified rigid body is used (a mass or a centre of mass in the "
                        "URDF is off, or a load is missing)")
    progress(f"dynamics auto: {use} (URDF's friction values within {z:.3g} identified std, "
             f"held-out RMS ratio URDF/identified at most {rmax:.3g})")
    warnings += notes[use]
    fit, fs, laws, held_out = results[use]
    # the motion's identification design as fric excite reports it by default (rigid body
    # included): the figure to compare with excite's, whichever rigid body was kept
    fit.design = results["identify"][0].design
    rb = results["identify"][1].extra.get(RIGID_BODY_KEY)
    if use == "urdf" and rb is not None:  # gravity: identified still has what the data measured
        fs = dataclasses.replace(fs, extra={**fs.extra, RIGID_BODY_KEY: rb})
    return use, (fit, fs, laws, held_out), choice


def _choose_law(fits, prep, fit_rows, hold_rows, names, warnings, preds=None):
    """The fit to write: the only one, or (``--model auto``) per joint the law with the smaller
    held-out RMS error (``preds``: law → the fits' predictions of the compared rows, when
    already computed); returns (fit whose rigid body and predictions are used, the set,
    ``{joint: {law: rms, chosen}}`` or None, the held-out prediction per joint of the chosen law
    (NaN inside the band) or None)."""
    from fric_core.arm_identification.report import holdout_rms
    from fric_core.arm_identification.result import predict_together

    if len(fits) == 1:
        fit = next(iter(fits.values()))
        warnings += [str(w) for w in fit.warnings]
        return fit, fit.to_joint_friction_set(), None, None
    line, curve = fits["asymmetric"], fits["curve"]
    sets = {law: f.to_joint_friction_set() for law, f in fits.items()}
    if hold_rows.stop - hold_rows.start < 10:
        rows = fit_rows  # nothing held out: the fitted rows (the curve then wins by its freedom)
        warnings.append("--model auto: nothing held out; the laws compared on the fitted rows")
    else:
        rows = hold_rows
    if preds is None:
        preds = predict_together(fits, *(x[rows] for x in (prep.q, prep.v, prep.a)))
    for law, f in fits.items():
        preds[law][np.abs(prep.v[rows]) <= f.dv] = np.nan
    rms = {law: holdout_rms(prep.effort[rows], preds[law]) for law in fits}
    choice, joints = {}, {}
    for j, name in enumerate(names):
        use = "curve" if rms["curve"][j] <= rms["asymmetric"][j] else "asymmetric"
        choice[name] = {"asymmetric": float(f"{rms['asymmetric'][j]:.4g}"),
                        "curve": float(f"{rms['curve'][j]:.4g}"), "chosen": use}
        lj, cj = sets["asymmetric"].joints[name], sets["curve"].joints[name]
        if use == "curve":
            joints[name] = dataclasses.replace(
                lj, law="curve", curve=cj.curve, std={**lj.std, **cj.std},
                determined={**lj.determined, **cj.determined},
                reasons={**lj.reasons, **cj.reasons})
        else:
            joints[name] = lj
    chosen = curve if any(c["chosen"] == "curve" for c in choice.values()) else line
    held_out = None
    if rows is hold_rows:  # the held-out prediction, per joint the chosen law's (reused)
        held_out = np.column_stack([preds[choice[n]["chosen"]][:, j]
                                    for j, n in enumerate(names)])
    warnings += [str(w) for w in chosen.warnings]
    base = sets["curve" if chosen is curve else "asymmetric"]
    fs = dataclasses.replace(base, joints=joints, model="curve" if chosen is curve
                             else "asymmetric")
    return chosen, fs, choice, held_out


def _rest_rows(prep, dv: float, j: int) -> np.ndarray:
    """Rows where joint j rests (|v| ≤ Δv/2 for at least :data:`REST_SECONDS`)."""
    still = np.abs(prep.v[:, j]) <= 0.5 * dv
    step = prep.step if prep.step > 0 else 1e-3
    need = max(3, int(REST_SECONDS / step))
    edges = np.diff(np.concatenate([[0], still.view(np.int8), [0]]))
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    out = np.zeros(still.size, dtype=bool)
    for s0, e0 in zip(starts, ends):
        if e0 - s0 >= need:
            out[s0:e0] = True
    return out


def _separate_offsets(fs, fit, prep, fit_rows, offset, names, warnings, progress):
    """``--offset``: with the asymmetric (or curve) law only ``Cp + o`` and ``Cn − o`` are
    identifiable; ``none`` leaves any offset in the levels (the total curve is right);
    ``symmetric`` assumes ``Cp = Cn`` (o = (Cp − Cn)/2); ``estimate-at-rest`` takes o from the
    rows where the joint rests ≥ :data:`REST_SECONDS` (effort − the model's rigid-body torque
    there, assuming friction carries no load at rest); ``auto`` is estimate-at-rest where a
    joint rests long enough, else none. The levels then hold the friction and ``offset`` the
    rest: the total curve (what the compensator renders) is unchanged."""
    if offset == "none" or fs.model == "gear":
        _negative_levels(fs, [n for n, jf in fs.joints.items() if min(jf.levels()) < 0],
                         warnings)
        return fs
    joints = dict(fs.joints)
    negative: List[str] = []
    for j, name in enumerate(names):
        jf = joints[name]
        o = so = None
        how = ""
        if offset in ("auto", "estimate-at-rest"):
            rest = _rest_rows(prep, fs.dv or 0.01, j)
            if rest.sum() > 0:
                r = np.flatnonzero(rest)
                zeros = np.zeros((r.size, len(names)))
                pred = fit.predict(prep.q[r], zeros, zeros)[:, j]
                res = prep.effort[r, j] - pred
                o = float(np.median(res))
                runs = max(1, int(np.sum(np.diff(r) > 1)) + 1)
                so = float(np.std(res) / np.sqrt(min(r.size, 10 * runs)))
                how = f"from {r.size} rows at rest"
            elif offset == "estimate-at-rest":
                warnings.append(f"joint {name}: --offset estimate-at-rest: the joint never rests "
                                f"{REST_SECONDS:g} s; its offset stays in the levels")
        if offset == "symmetric":
            o = 0.5 * (jf.Cp - jf.Cn)
            so = 0.5 * float(np.hypot(jf.std.get("Cp", 0.0), jf.std.get("Cn", 0.0)))
            how = "assuming Cp = Cn"
        if o is None:
            if min(jf.levels()) < 0:
                negative.append(name)
            continue
        std = dict(jf.std)
        std["offset"] = so
        for k in ("Cp", "Cn"):
            if k in std:
                std[k] = float(np.hypot(std[k], so))
        curve = jf.curve.shifted(-o) if jf.curve is not None else None
        joints[name] = dataclasses.replace(jf, Cp=jf.Cp - o, Cn=jf.Cn + o, offset=o, std=std,
                                           curve=curve)
        progress(f"joint {name}: effort offset {o:.4g} ± {so:.2g} N·m ({how})")
    _negative_levels(fs, negative, warnings)
    return dataclasses.replace(fs, joints=joints)


def _negative_levels(fs, names: List[str], warnings: List[str]) -> None:
    """One warning for the joints whose levels keep an effort offset that took one below 0."""
    if names:
        lv = ", ".join(f"{n} ({fs.joints[n].levels()[0]:.3g}, {fs.joints[n].levels()[1]:.3g})"
                       for n in names)
        warnings.append(f"a friction level below 0 at v = ±0 on {lv}: an effort offset (torque "
                        "sensor, current loop) is in the levels; only Cp + offset and Cn - "
                        "offset are identifiable from motion, and their total curve (what the "
                        "compensator renders) is right; --offset estimate-at-rest (a rest "
                        "segment in the recording) or symmetric separates it")


def _estimate_lag(prep, k, dyn, model, dynamics, dv, warnings, progress, estimate, fit_fn):
    """``--effort-lag auto``: :func:`~fric_core.arm_identification.signals.estimate_effort_lag`
    with least-squares fits (paper 003 eq. (5)) of the chosen model on a subsample of the fitted
    rows; None with a warning when those fits fail.

    The gear law is searched with the URDF's rigid body even under ``--dynamics identify``: the
    gear law with the rigid body identified is a Gauss–Newton fit, ~1 s per 3000 rows of arm7
    (seven of them would cost more than the identification itself), the others are linear least
    squares. Wrong URDF inertias scale the lag's estimate by about M_true/M_urdf (the lag's
    signature is M·q⃛·lag) and raise its std (the inertial misfit is residual).
    """
    import time

    search = "urdf" if model == "gear" else dynamics
    base = None
    if search == "identify":  # one base set for every fit of the search (5 ms each otherwise)
        from fric_core.arm_identification.regressor import base_parameters
        base = base_parameters(dyn, armature=True)

    def residual(qs, vs, as_, es):
        # the sum of squares of the rows outside the Δv band, from the fit's own normal equations
        return fit_fn(qs, vs, as_, es, dyn, dynamics=search, method="ols", dv=dv, law=model,
                      base=base, _rss_only=True)

    start = time.perf_counter()
    try:
        est = estimate(prep, residual, rows=np.arange(k), dv=dv)
    except (ValueError, np.linalg.LinAlgError) as e:
        warnings.append(f"effort lag not estimated ({' '.join(str(e).split())}): 0 assumed "
                        "(give it with --effort-lag SECONDS)")
        return None
    progress(f"effort lag {est.lag * 1e3:.3g} ms: {_lag_words(est)} (least squares on "
             f"{est.rows} rows, {time.perf_counter() - start:.1f} s)")
    if est.significant and not est.consistent:
        warnings.append(f"effort lag not determined: estimate {est.estimate * 1e3:.3g} ms "
                        f"{_halves_words(est)}; the model leaves effort unexplained whose "
                        "timing it cannot tell from a lag. 0 used: give it with --effort-lag "
                        "SECONDS (a command held over the step ending at its stamp: half the "
                        "joint_states period)")
    return est


def _lag_words(est) -> str:
    """How the ``auto`` lag was decided, in words (progress line)."""
    std = (f" ± {est.std * 1e3:.2g}" if math.isfinite(est.std) else "")
    what = (f"estimate {est.estimate * 1e3:.3g}{std} ms = {est.estimate / est.step:.2f} samples "
            f"of {est.step * 1e3:.3g} ms")
    if not est.significant:
        return what + ", not significant: 0 used"
    if not est.consistent:
        return what + ", " + _halves_words(est) + ": 0 used"
    return what


def _halves_words(est) -> str:
    (e1, s1), (e2, s2) = est.halves
    return (f"but the recording's halves disagree ({e1 * 1e3:.3g} ± {s1 * 1e3:.2g} vs "
            f"{e2 * 1e3:.3g} ± {s2 * 1e3:.2g} ms)")


def _excite_ranges() -> Dict[str, tuple]:
    """``fric excite``'s numeric options: option → (lowest, highest, unit, lowest allowed)."""
    from fric_core.arm_identification import excitation as ex

    return {"--duration": (0.0, ex.MAX_PERIOD, "s", False),
            "--base-frequency": (1.0 / ex.MAX_PERIOD, ex.MAX_RATE / 4.0, "Hz", True),
            "--harmonics": (2, ex.MAX_HARMONICS, "", True),
            "--max-velocity": (0.0, math.inf, "rad/s", False),
            "--max-acceleration": (0.0, math.inf, "rad/s²", False),
            "--margin": (0.0, math.inf, "rad", True),
            "--rate": (0.0, ex.MAX_RATE, "Hz", False),
            "--time-budget": (0.0, ex.MAX_TIME, "s", False),
            "--seed": (0, math.inf, "", True)}


def _range_words(lo, hi, unit: str, closed: bool, whole: bool) -> str:
    """``"a number in (0, 3600] [s]"``: the range as the error message states it."""
    def num(x) -> str:
        return f"{x:.3g}" if 0 < abs(x) < 1 else f"{x:.6g}"

    what = "a whole number" if whole else "a number"
    if math.isinf(hi):
        rng = f"{'>=' if closed else '>'} {num(lo)}"
    else:
        rng = f"in {'[' if closed else '('}{num(lo)}, {num(hi)}]"
    return f"{what} {rng}" + (f" [{unit}]" if unit else "")


def _check_excite_numbers(**values) -> None:
    """Every numeric option of ``fric excite`` in its range (:func:`_excite_ranges`), then the
    band against the rate (Nyquist) and the samples to write against
    :data:`~fric_core.arm_identification.excitation.MAX_SAMPLES`; ArmIdentifyError naming the
    option and its range. Nothing is allocated before this passes."""
    from fric_core.arm_identification import excitation as ex

    for opt, (lo, hi, unit, closed) in _excite_ranges().items():
        val = values[opt[2:].replace("-", "_")]
        whole = opt in ("--harmonics", "--seed")
        if whole:
            ok = isinstance(val, (int, np.integer)) and not isinstance(val, bool)
        else:
            ok = isinstance(val, (int, float, np.floating, np.integer)) \
                and not isinstance(val, bool) and math.isfinite(val)
        ok = ok and (val >= lo if closed else val > lo) and val <= hi
        if not ok:
            if opt == "--margin" and unit:
                unit += "; m for a prismatic joint"
            raise ArmIdentifyError(f"{opt}: expected {_range_words(lo, hi, unit, closed, whole)}"
                                   f", got {val!r}")
    f, K, rate, duration = (values["base_frequency"], values["harmonics"], values["rate"],
                            values["duration"])
    if K * f >= 0.5 * rate:
        raise ArmIdentifyError(f"--rate: {rate:g} Hz does not resolve the band --harmonics × "
                               f"--base-frequency = {K} × {f:g} Hz = {K * f:g} Hz (Nyquist: "
                               f"--rate above {2 * K * f:g} Hz)")
    samples = math.ceil(duration * f - 1e-9) / f * rate
    if samples > ex.MAX_SAMPLES:
        raise ArmIdentifyError(f"--duration × --rate: {duration:g} s (whole periods of "
                               f"{1 / f:g} s) × {rate:g} Hz = {samples:.3g} samples, more than "
                               f"{ex.MAX_SAMPLES}; shorten --duration or lower --rate")


def _excite_option_words(msg: str) -> str:
    """A message of :func:`~fric_core.arm_identification.excitation.generate_excitation` with
    its argument named as ``fric excite``'s option."""
    for arg, opt in (("rate_hz:", "--rate:"), ("margin:", "--margin:"),
                     ("max_velocity:", "--max-velocity:"),
                     ("max_acceleration:", "--max-acceleration:"),
                     ("harmonics:", "--harmonics:"), ("max_time:", "--time-budget:")):
        if msg.startswith(arg):
            return opt + msg[len(arg):]
    return msg


def excite_arm(urdf: str, out_dir, *, joints: Optional[Sequence[str]] = None,
               duration: float = 20.0, base_frequency: float = 0.1, harmonics: int = 5,
               max_velocity: float = 1.0, max_acceleration: float = 3.0, margin: float = 0.1,
               rate: float = 100.0, dynamics: str = "identify", topic: Optional[str] = None,
               time_budget: float = 3.0, seed: int = 0,
               progress: Callable[[str], None] = _none):
    """``fric excite``: an excitation trajectory for ``urdf`` written to ``out_dir``.

    A band-limited Fourier series per joint (fundamental ``base_frequency`` [Hz], ``harmonics``
    harmonics), at rest at its ends, scaled into the URDF's joint limits (less ``margin``) and
    the speed/acceleration limits, optimised for the identification design's condition number
    (:func:`fric_core.arm_identification.excitation.generate_excitation`; the rigid-body columns
    included with ``dynamics="identify"``); repeated for ``duration`` seconds (whole periods,
    rounded up). Without ``joints``, ``<mimic>`` joints and joints whose range is not wider than
    twice the margin are left out (one ``progress`` line each, naming the joint and why); the
    joints not moved are held at 0, or mid-range where 0 is not inside their limits by the margin
    (the arm chain's initial positions). Every number is checked against its range
    (:func:`_excite_ranges`) before anything is allocated. Writes
    :data:`EXCITE_FILES`; returns ``(trajectory, {name: path}, yaml_bytes)``. Raises
    :class:`ArmIdentifyError` (one line) for bad input.
    """
    from fric_core.arm_identification import excitation as ex
    from fric_core.arm_setup import mimic_masters
    from fric_core.transmission.urdf_dynamics import UrdfDynamics, UrdfError
    from fric_nodes.tools.user_errors import make_out_dir, out_dir_problem

    _check_excite_numbers(duration=duration, base_frequency=base_frequency,
                          harmonics=harmonics, max_velocity=max_velocity,
                          max_acceleration=max_acceleration, margin=margin, rate=rate,
                          time_budget=time_budget, seed=seed)
    if dynamics not in ("identify", "urdf"):
        raise ArmIdentifyError(f"--dynamics: expected identify or urdf, got {dynamics!r}")
    problem = out_dir_problem(out_dir, "--out")
    if problem:
        raise ArmIdentifyError(problem)
    bag = Path(out_dir) / EXCITE_FILES[2]
    if bag.exists():
        raise ArmIdentifyError(f"--out {out_dir}: {bag} exists (a bag is written to a new "
                               "directory); remove it or choose another --out")
    try:
        full = UrdfDynamics(urdf)
    except UrdfError as e:
        raise ArmIdentifyError(f"--urdf {urdf}: {str(e).removeprefix('urdf: ')}") from None
    try:
        mimic = mimic_masters(Path(full.source).read_text(encoding="utf-8", errors="replace"))
    except (OSError, ValueError) as e:  # read and parsed by UrdfDynamics just before
        raise ArmIdentifyError(f"--urdf {urdf}: {e}") from None
    movable, left_out = ex.excitable_joints(full, margin, mimic)
    if joints:
        problem = unknown_joints(joints, full)
        if problem:
            raise ArmIdentifyError(problem)
        refused = [f"{name}: {why}" + (" (leave it out of --joints)" if name in mimic else
                                       " (give a smaller --margin, or leave it out)")
                   for name, why in left_out if name in joints]
        if refused:
            raise ArmIdentifyError(f"--joints: cannot move {'; '.join(refused)}")
        joints = [j for j in full.joint_names if j in joints]
    else:
        if not movable:
            short = [f"{name} {full.upper[j] - full.lower[j]:.3g} "
                     f"{'m' if full.joint_kinds[j] == 'prismatic' else 'rad'}"
                     for j, name in enumerate(full.joint_names) if name not in mimic]
            follow = [f"{name} ({why})" for name, why in left_out if name in mimic]
            parts = ([f"ranges not wider than twice the margin: {', '.join(short)}"]
                     if short else []) + ([f"<mimic> joints: {', '.join(follow)}"]
                                          if follow else [])
            raise ArmIdentifyError(f"--margin {margin:g}: no joint of {full.source} to excite: "
                                   + "; ".join(parts)
                                   + (" (give a smaller --margin)" if short else ""))
        for name, why in left_out:
            progress(f"note: {name} left out: {why} (--joints a,b,... names the joints to move)")
        joints = movable if left_out else None
    period = 1.0 / base_frequency
    periods = max(1, int(math.ceil(duration / period - 1e-9)))
    n_move = len(joints or full.joint_names)
    progress(f"optimising a {harmonics}-harmonic excitation of {n_move} joints (period "
             f"{period:.4g} s, up to {time_budget:g} s)")
    if joints is None:
        dyn = full
    else:
        still = [j for j in full.joint_names if j not in joints]
        dyn = UrdfDynamics(urdf, joint_names=joints,
                           locked_positions=ex.rest_positions(full, still, margin))
    try:
        traj = ex.generate_excitation(dyn, period=period, harmonics=harmonics,
                                      max_velocity=max_velocity,
                                      max_acceleration=max_acceleration, margin=margin,
                                      rate_hz=rate, periods=periods,
                                      rigid_body=dynamics == "identify", max_time=time_budget,
                                      seed=seed)
    except ValueError as e:
        raise ArmIdentifyError(_excite_option_words(" ".join(str(e).split()))) from None
    peak = np.abs(traj.v).max(axis=0)
    slow = [f"{name} ({peak[j]:.3g})" for j, name in enumerate(traj.joint_names)
            if not peak[j] > 2.0 * MIN_DV]
    if slow:  # (a limit of 1e-300 is a number > 0, and moves nothing)
        raise ArmIdentifyError(f"--max-velocity, --max-acceleration: within these limits "
                               f"{', '.join(slow)} would move no faster than twice the "
                               f"{MIN_DV:g} rad/s band around rest where friction is not "
                               "identified; raise them")
    out = make_out_dir(out_dir, "--out")
    progress(f"writing {out}")
    files = {name: out / name for name in EXCITE_FILES}
    ex.write_excitation_csv(files[EXCITE_FILES[0]], traj)
    size = ex.write_trajectory_yaml(files[EXCITE_FILES[1]], traj)
    ex.write_trajectory_bag(files[EXCITE_FILES[2]], traj,
                            **({"topic": topic} if topic else {}))
    return traj, files, size
