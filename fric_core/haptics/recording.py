"""Recorded identification runs: CSV and rosbag2 in, CSV out (paper 003: Richard, Cutkosky &
MacLean).

A :class:`Recording` is one run of the paper's procedure ("record force/motion variables"): time,
position, velocity, force and, when an accelerometer was fitted, acceleration. It feeds
:func:`~fric_core.haptics.identification.fit_friction` (the paper's eqs. 2–6) through
:meth:`Recording.fit`.

Force sign. ``Recording.force`` is the paper's ``F_applied`` of its force balance (1),
``F = m a + F_friction``: the load cell, the force the stage applies TO the sample, positive when
it pushes the sample forward (:attr:`~fric_core.haptics.stage.StageReading.force`). CSV files
hold this sign. ROS data hold the opposite one: ``haptic_stage`` publishes
``joint_states.effort`` and ``wrench.force.x`` as the force the sample applies to the stage, so
:func:`read_bag` negates them.

Files:

* :func:`read_csv` / :func:`write_csv` — a header row naming the columns; the default names are
  ``t`` [s], ``x`` [m], ``v`` [m/s], ``force`` [N, paper sign] and the optional ``a`` [m/s²];
  ``columns={"force": "load_cell_N", ...}`` maps these names to a file's own. Lines starting
  with ``#`` before the header are comments; ``# noise: accel=VAR vel=VAR`` among them gives the
  EIV noise variances (:attr:`Recording.noise`). :func:`write_csv` writes every value as
  Python's shortest round-tripping float repr, so a file read back gives bit-identical arrays.
* Gaps (lost samples: steps beyond :data:`MAX_STEP_DEVIATION` of the median): the recording is
  cut into uniformly sampled segments (:meth:`Recording.segments`) for the derivative of ``v``;
  :meth:`Recording.lost_fraction` beyond :data:`MAX_LOST_FRACTION` makes
  :meth:`Recording.trust_problem` say the estimates are not to be trusted.
* :func:`read_bag` — a ROS 2 bag (rosbag2 directory with ``metadata.yaml``, sqlite3 or mcap
  storage; a ``.db3``/``.mcap`` file stands for its directory), read with ``rosbags`` (imported
  only there). Time alignment is described in its docstring.

The export of a fit to ``friction_renderer``'s parameters is :mod:`.renderer_yaml`.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

import numpy as np

from .._checks import real_array
from .identification import FrictionFit, central_difference, fit_friction

__all__ = ["Recording", "read_csv", "write_csv", "read_bag", "CSV_COLUMNS", "MIN_ROWS",
           "MAX_STEP_DEVIATION", "MAX_LOST_FRACTION", "GAP_SETTLE_SAMPLES"]

#: CSV column names: the required ones, then the optional acceleration
CSV_COLUMNS = ("t", "x", "v", "force", "a")
#: fewest samples of a recording: the 4-point central difference needs 5
MIN_ROWS = 5
#: Largest deviation of a time step from the median step, as a fraction of it, within a
#: segment of uniform samples. The 4-point difference assumes uniform samples; a sample taken
#: ε·dt off its slot changes the derivative there by about (2/3)·ε·|a| (its weight 8/12), a
#: random error on the mass regressor whose attenuation of the mass is of order ε²·4/9: at most
#: 0.5 % for ε = 0.1, well inside the fit's own std. A lost message (a step of 2 dt) is a
#: deviation of 1: a gap, where the recording is cut into segments (:meth:`Recording.segments`).
MAX_STEP_DEVIATION = 0.1
#: Largest fraction of lost samples (missing from the stamps, :meth:`Recording.lost_fraction`)
#: for which the estimates are trusted; beyond it the report, the node's summary and the demo's
#: verdict say they are not. Measured on the simulated brass run (2 Hz, 1 cm, 2 s recorded; 16
#: seeds per point, lost in bursts of 1–14 states during which the stage held its last command,
#: as a loaded realtime run loses them; docs/identification.md, "Lost samples"): with the
#: accelerometer, mass and kinetic levels stay within their own (growing) std at any loss, but
#: the breakaway levels are single samples at the peaks, and lost peaks pull Dp towards zero:
#: −1 % with nothing lost, −3 % at 4–5 % lost, −7 % at 10 %, −8 % at 14 %, −15 % at 19 %; a
#: derived acceleration (no accelerometer) puts the mass +0.5 % high loss-free, +1.2 % at 4 %,
#: +1.8 % at 10 % lost (several of its std). 5 % keeps both within about 2 % of the loss-free
#: values, the size of the identification's own spread on Dp; the display check of the demo puts
#: a ±15 % bracket around the breakaway force.
MAX_LOST_FRACTION = 0.05
#: Rows left out after each gap when the acceleration is derived from v [samples]. A gap in a
#: realtime run is a stretch where the controller missed states: the stage held the old command,
#: and the next one steps (the setpoint table runs on the stamps); the servo's kick has content
#: beyond the bandwidth of the velocity estimate (time between encoder pulses), so its derivative
#: under-reads the kick the load cell sees, and the mass comes out high. Measured on the
#: simulated brass run with 10 % lost in bursts: +5 to +9 % without this margin, +1.5 % with 10
#: samples (loss-free: +0.5 to +0.9 %); the accelerometer needs none.
GAP_SETTLE_SAMPLES = 10


def _vector(name: str, values) -> np.ndarray:
    arr = real_array(values, name, "numbers")
    if arr.ndim != 1:
        raise ValueError(f"{name}: expected a 1-D array, got shape {arr.shape}")
    bad = ~np.isfinite(arr)
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"{name}: contains NaN or inf ({int(bad.sum())} samples, first at "
                         f"index {i})")
    return arr


@dataclass
class Recording:
    """One recorded identification run: 1-D float arrays of equal length.

    ``t`` time [s] (strictly increasing), ``x`` position [m], ``v`` velocity [m/s], ``force``
    the load cell in paper 003's sign (module docstring) [N], ``a`` the accelerometer [m/s²] or
    None (then derived from ``v``, see :meth:`acceleration`); ``joint`` and ``source`` (file,
    bag, topics) label reports; ``noise``: measurement-noise variances the source states
    (``accel`` [(m/s²)²], ``vel`` [(m/s)²], e.g. an Imu's covariance), used by :meth:`fit`
    where its ``noise`` argument gives none. ``ValueError`` naming the field for anything else.
    """

    t: np.ndarray
    x: np.ndarray
    v: np.ndarray
    force: np.ndarray
    a: np.ndarray | None = None
    joint: str = ""
    source: str = ""
    noise: dict | None = None

    def __post_init__(self):
        names = ("t", "x", "v", "force") + (("a",) if self.a is not None else ())
        for name in names:
            setattr(self, name, _vector(name, getattr(self, name)))
        lens = {name: getattr(self, name).size for name in names}
        if len(set(lens.values())) != 1:
            raise ValueError("mismatched lengths: " + ", ".join(f"{k} has {n}"
                                                                for k, n in lens.items()))
        if self.t.size < MIN_ROWS:
            raise ValueError(f"too few samples: {self.t.size} < {MIN_ROWS}")
        steps = np.diff(self.t)
        if np.any(steps <= 0.0):
            i = int(np.argmax(steps <= 0.0)) + 1
            raise ValueError(f"t: not strictly increasing at index {i} (t[{i - 1}] = "
                             f"{self.t[i - 1]!r}, t[{i}] = {self.t[i]!r})")

    def __len__(self) -> int:
        return int(self.t.size)

    @property
    def dt(self) -> float:
        """The median time step [s]."""
        return float(np.median(np.diff(self.t)))

    def breaks(self) -> np.ndarray:
        """Boolean array of the ``len − 1`` steps: True where a step deviates from the median
        step by more than :data:`MAX_STEP_DEVIATION` (a gap: lost samples; or a jitter beyond
        what the central difference tolerates)."""
        steps = np.diff(self.t)
        dt = float(np.median(steps))
        return np.abs(steps - dt) > MAX_STEP_DEVIATION * dt

    def segments(self) -> list[slice]:
        """The runs of uniformly sampled rows between :meth:`breaks` (row slices, in order)."""
        cut = np.flatnonzero(self.breaks()) + 1
        edges = np.concatenate(([0], cut, [self.t.size]))
        return [slice(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:])]

    def lost_samples(self) -> int:
        """Samples missing from the record: each step of about k median steps (k ≥ 2, rounded)
        lost k − 1 samples (e.g. a 14 ms gap at 1 kHz: 13)."""
        steps = np.diff(self.t)
        k = np.rint(steps / float(np.median(steps)))
        return int(np.maximum(k - 1.0, 0.0).sum())

    def lost_fraction(self) -> float:
        """:meth:`lost_samples` over the samples the record spans (recorded + lost)."""
        lost = self.lost_samples()
        return lost / (lost + self.t.size)

    def trust_problem(self) -> str:
        """Empty when the record is complete enough to trust its estimates; else one sentence
        saying how much was lost (more than :data:`MAX_LOST_FRACTION`) and what that does."""
        lost = self.lost_samples()
        frac = lost / (lost + self.t.size)
        if frac <= MAX_LOST_FRACTION:
            return ""
        n_gaps = int(np.count_nonzero(np.rint(np.diff(self.t) / self.dt) >= 2.0))
        return (f"NOT TRUSTED: {lost} of {lost + self.t.size} samples ({frac:.1%}) lost in "
                f"{n_gaps} gaps, more than MAX_LOST_FRACTION = {MAX_LOST_FRACTION:.0%}: lost "
                f"breakaway peaks bias Dp/Dn towards zero (and a derived acceleration loses the "
                f"samples next to each gap); record again on a less loaded machine")

    def acceleration(self) -> np.ndarray:
        """``a`` if recorded, else the paper's 4-point central difference of ``v``
        (:func:`~fric_core.haptics.identification.central_difference`) within each uniformly sampled
        :meth:`segment <segments>` (step: the median step of ``t``). The two samples at each
        end of a segment (where the 4-point stencil would reach across a gap or the record's
        end), the first :data:`GAP_SETTLE_SAMPLES` after a gap and segments shorter than 5
        samples have no derivative: NaN there (:meth:`fit` leaves those rows out).
        ``ValueError`` naming ``t`` when no segment is long enough."""
        if self.a is not None:
            return self.a
        dt = self.dt
        out = np.full(self.t.size, np.nan)
        for i, seg in enumerate(self.segments()):
            if seg.stop - seg.start >= 5:
                out[seg.start + 2:seg.stop - 2] = central_difference(self.v[seg], dt)[2:-2]
                if i:  # after a gap: the servo's kick (GAP_SETTLE_SAMPLES)
                    out[seg.start:seg.start + GAP_SETTLE_SAMPLES] = np.nan
        if not np.isfinite(out).any():
            raise ValueError(f"t: no 5 consecutive uniformly sampled rows (steps within "
                             f"{MAX_STEP_DEVIATION:.0%} of the median {dt:.6g} s): the "
                             f"acceleration cannot be derived from v; record the "
                             f"accelerometer (a) or resample")
        return out

    def gap_note(self) -> str:
        """One line on the gaps and what :meth:`fit` does with them ("" when there are none)."""
        br = self.breaks()
        if not br.any():
            return ""
        segs = self.segments()
        text = (f"{int(br.sum())} gap(s) in the stamps (first after t = "
                f"{self.t[int(np.argmax(br))]:.6g} s, row {int(np.argmax(br)) + 1}), "
                f"{self.lost_samples()} samples lost ({self.lost_fraction():.1%})")
        if self.a is None:
            used = int(np.isfinite(self.acceleration()).sum())
            text += (f"; acceleration differentiated within the {len(segs)} uniform segments "
                     f"between them, {self.t.size - used} rows left out (2 at each segment end, "
                     f"{GAP_SETTLE_SAMPLES} after each gap, segments shorter than 5 rows)")
        return text

    def fit(self, method: str = "eiv", dv: float | None = None,
            noise: dict | None = None) -> FrictionFit:
        """:func:`~fric_core.haptics.identification.fit_friction` on this run (eqs. 5/6 of paper
        003) with :meth:`acceleration` as the mass regressor (rows without one left out); ``noise``
        entries override the recording's own ``noise`` (a variance neither gives is estimated
        from the data, leaving out the differences across gaps)."""
        known = {} if self.a is None else dict(self.noise or {})
        if self.noise and "vel" in self.noise:
            known["vel"] = self.noise["vel"]
        known.update(noise or {})
        a = self.acceleration()
        rows = np.flatnonzero(np.isfinite(a))
        # a step between two fitted rows is a gap when rows were skipped or the stamps jump
        gaps = (np.diff(rows) != 1) | self.breaks()[rows[:-1]]
        return fit_friction(self.x[rows], self.v[rows], a[rows], self.force[rows], dv=dv,
                            method=method, noise=known or None, gaps=gaps)


# -- CSV -------------------------------------------------------------------------------------------
def _column_map(columns: Mapping[str, str] | None) -> dict:
    mapping = {name: name for name in CSV_COLUMNS}
    if columns:
        unknown = sorted(set(columns) - set(CSV_COLUMNS))
        if unknown:
            raise ValueError(f"columns: unknown name(s) {unknown}; map these: "
                             f"{list(CSV_COLUMNS)}")
        mapping.update({k: str(v) for k, v in columns.items()})
    return mapping


def read_csv(path, columns: Mapping[str, str] | None = None) -> Recording:
    """Read a :class:`Recording` from a CSV file with a header row (module docstring).

    A comment ``# noise: accel=VAR vel=VAR`` before the header (:func:`write_csv` writes the
    variances the online fit used) sets :attr:`Recording.noise`, so a refit uses the same EIV
    correction. ``force`` must be in paper 003's sign (the force the stage applies to the
    sample). ``a`` is optional unless mapped. Other columns are ignored.

    Parameters
    ----------
    path : str or path-like
        The CSV file.
    columns : mapping of str to str, optional
        Maps the names ``t, x, v, force, a`` to the file's column names (unmapped names are
        read as themselves). Default: the names themselves.

    Returns
    -------
    Recording
        t (s), x (m), v (m/s), force (N, paper sign) and, when present, a (m/s²), each of shape
        (number of data rows,); ``source`` is the path.

    Raises
    ------
    ValueError
        Naming the problem: missing column(s) (with the file's columns), a cell that is not a
        number or is NaN/inf (line and column), a line with the wrong number of cells, fewer than
        :data:`MIN_ROWS` rows, an unknown name in ``columns`` or a malformed ``# noise:`` comment.
    FileNotFoundError
        When the file is absent.
    """
    path = Path(path)
    mapping = _column_map(columns)
    with open(path, newline="", encoding="utf-8") as fh:
        lines = enumerate(csv.reader(fh), start=1)
        header = None
        noise = {}
        for lineno, row in lines:
            if row and row[0].lstrip().startswith("#"):
                text = ",".join(row).lstrip()[1:].strip()
                if text.startswith("noise:"):
                    noise = _noise_comment(path, lineno, text[len("noise:"):])
                continue
            if not row or not "".join(row).strip():
                continue
            header = [c.strip() for c in row]
            break
        if header is None:
            raise ValueError(f"{path}: no header row (the file is empty)")
        wanted = [n for n in CSV_COLUMNS if n != "a" or mapping["a"] in header
                  or (columns and "a" in columns)]
        missing = [f"{mapping[n]!r}" + (f" (for {n})" if mapping[n] != n else "")
                   for n in wanted if mapping[n] not in header]
        if missing:
            raise ValueError(f"{path}: missing column(s) {', '.join(missing)}; the file has "
                             f"{header}")
        index = {n: header.index(mapping[n]) for n in wanted}
        data = {n: [] for n in wanted}
        for lineno, row in lines:
            if not row or not "".join(row).strip() or row[0].lstrip().startswith("#"):
                continue
            if len(row) != len(header):
                raise ValueError(f"{path}: line {lineno} has {len(row)} cells, the header has "
                                 f"{len(header)}")
            for n, i in index.items():
                cell = row[i].strip()
                try:
                    val = float(cell)
                except ValueError:
                    raise ValueError(f"{path}: line {lineno}, column {mapping[n]!r}: "
                                     f"{cell!r} is not a number") from None
                if not math.isfinite(val):
                    raise ValueError(f"{path}: line {lineno}, column {mapping[n]!r}: "
                                     f"{cell!r} is not finite (NaN or inf)")
                data[n].append(val)
    n_rows = len(data["t"])
    if n_rows < MIN_ROWS:
        raise ValueError(f"{path}: {n_rows} data rows, fewer than {MIN_ROWS}")
    try:
        return Recording(t=np.array(data["t"]), x=np.array(data["x"]), v=np.array(data["v"]),
                         force=np.array(data["force"]),
                         a=np.array(data["a"]) if "a" in data else None, source=str(path),
                         noise=noise or None)
    except ValueError as e:
        raise ValueError(f"{path}: {e}") from None


def _noise_comment(path, lineno: int, text: str) -> dict:
    """``accel=VAR vel=VAR (free text)`` of a ``# noise:`` comment; ValueError naming the line."""
    out = {}
    for tok in text.split("(")[0].replace(",", " ").split():
        key, eq, val = tok.partition("=")
        try:
            var = float(val)
        except ValueError:
            var = math.nan
        if key not in ("accel", "vel") or not eq or not (math.isfinite(var) and var >= 0.0):
            raise ValueError(f"{path}: line {lineno}: '# noise:' comment: {tok!r} is not "
                             f"accel=VARIANCE or vel=VARIANCE (finite, >= 0)")
        out[key] = var
    return out


def write_csv(rec: Recording, path) -> None:
    """Write ``rec`` in :func:`read_csv`'s default format.

    A ``#`` comment with the units and the force sign, a ``# noise: accel=… vel=…`` comment with
    ``rec.noise`` when it has any, the header, one row per sample; exact float reprs.

    Parameters
    ----------
    rec : Recording
        The recording to write (its ``a`` column only when it has one).
    path : str or path-like
        The CSV file to create or overwrite.

    Returns
    -------
    None
    """
    names = ["t", "x", "v", "force"] + (["a"] if rec.a is not None else [])
    cols = [getattr(rec, n) for n in names]
    with open(Path(path), "w", newline="", encoding="utf-8") as fh:
        fh.write("# fric identification recording: t [s], x [m], v [m/s], force [N] = load cell, "
                 "the force the stage applies to the sample (paper 003 eq. 1 sign)"
                 + (", a [m/s^2]" if rec.a is not None else "") + "\n")
        if rec.joint or rec.source:
            fh.write(f"# joint: {rec.joint or '-'}; source: {rec.source or '-'}\n")
        if rec.noise:
            pairs = " ".join(f"{k}={float(v)!r}" for k, v in sorted(rec.noise.items()))
            fh.write(f"# noise: {pairs}"
                     + "  (measurement-noise variances [(m/s^2)^2, (m/s)^2] for the EIV fit, "
                       "read back into Recording.noise)\n")
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(names)
        for row in zip(*(c.tolist() for c in cols)):
            w.writerow([repr(float(val)) for val in row])


# -- rosbag2 -------------------------------------------------------------------------------------
_JOINT_STATE = "sensor_msgs/msg/JointState"
_IMU = "sensor_msgs/msg/Imu"
_WRENCH = "geometry_msgs/msg/WrenchStamped"


def _bag_dir(path: Path) -> Path:
    if not path.exists():
        raise FileNotFoundError(f"bag not found: {path}")
    if path.is_file():
        if path.suffix not in (".db3", ".mcap"):
            raise ValueError(f"{path}: not a bag (expected a rosbag2 directory or a .db3/.mcap "
                             f"file)")
        path = path.parent
    if not (path / "metadata.yaml").is_file():
        raise ValueError(f"{path}: not a rosbag2 bag (no metadata.yaml); give the bag directory "
                         f"that `ros2 bag record` wrote")
    return path


def _stamps(header_ns: list, log_ns: list) -> tuple[np.ndarray, bool]:
    """Header stamps, or the bag's receive times when a publisher left every stamp at zero."""
    stamps = np.array(header_ns, dtype=np.int64)
    if stamps.size and not stamps.any():
        return np.array(log_ns, dtype=np.int64), True
    return stamps, False


def _match(ref_ns: np.ndarray, ns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each reference stamp, the index of the message with the same stamp, else the nearest
    within half the reference period; -1 when none. Returns (index, keep mask)."""
    order = np.argsort(ns, kind="stable")
    ns = ns[order]
    period = float(np.median(np.diff(ref_ns))) if ref_ns.size > 1 else 0.0
    j = np.searchsorted(ns, ref_ns)
    lo = np.clip(j - 1, 0, ns.size - 1)
    hi = np.clip(j, 0, ns.size - 1)
    d_lo = np.abs(ref_ns - ns[lo])
    d_hi = np.abs(ns[hi] - ref_ns)
    best = np.where(d_hi <= d_lo, hi, lo)
    dist = np.minimum(d_lo, d_hi)
    ok = dist <= 0.5 * period
    return order[best], ok


def _check_matched(ok: np.ndarray, topic: str) -> None:
    if not ok.any():
        raise ValueError(f"{topic}: no message within half a joint_states period of any "
                         f"joint_states stamp (are the two stamped by the same clock?)")


def read_bag(path, joint: str = "stage_joint", joint_states_topic: str = "/joint_states",
             accel_topic: str | None = None, wrench_topic: str | None = None,
             force_source: str = "effort") -> Recording:
    """Read a :class:`Recording` of ``joint`` from a ROS 2 bag (rosbag2; sqlite3 or mcap).

    * ``joint_states_topic`` (sensor_msgs/JointState): the joint is found BY NAME in every
      message; position, velocity and (``force_source="effort"``) effort.
    * ``accel_topic`` (sensor_msgs/Imu, optional): ``linear_acceleration.x`` along the joint
      axis. Without it the acceleration is derived from the velocity (:meth:`Recording.fit`).
    * ``force_source="wrench"``: the force is ``wrench.force.x`` of ``wrench_topic``
      (geometry_msgs/WrenchStamped; default ``/wrench``) instead of the effort.

    The effort and the wrench are the force on the stage (ROS sign) and are negated into paper
    003's sign (module docstring). Time: header stamps (the bag's receive times for a topic
    whose stamps are all zero), ``t`` relative to the first joint_states sample; joint_states
    are sorted by stamp. Alignment: each joint_states sample takes the Imu/wrench message with
    the same header stamp, else the nearest one within half the joint_states period. Samples
    without one are dropped and counted in ``source``: at the start or the end of the record
    (the recorder picked the topics up at different moments), and inside it (a lost message:
    a gap in the record, as ``friction_identifier`` drops a state whose Imu never came; the
    fit handles gaps, :meth:`Recording.lost_fraction` counts them). An Imu whose
    ``linear_acceleration_covariance[0]`` is > 0 in every message (``haptic_stage`` publishes
    the accelerometer's noise variance there) sets ``Recording.noise["accel"]`` for the EIV fit.

    Parameters
    ----------
    path : str or path-like
        The rosbag2 directory (with ``metadata.yaml``), or a ``.db3``/``.mcap`` file in it.
    joint : str, optional
        Name of the joint in the JointState messages.
    joint_states_topic : str, optional
        Topic of the sensor_msgs/JointState messages.
    accel_topic : str, optional
        Topic of the sensor_msgs/Imu messages; None: no accelerometer.
    wrench_topic : str, optional
        Topic of the geometry_msgs/WrenchStamped messages for ``force_source="wrench"``
        (None: ``/wrench``).
    force_source : {"effort", "wrench"}, optional
        Where the force comes from: the joint's effort or ``wrench.force.x``.

    Returns
    -------
    Recording
        t (s), x (m), v (m/s), force (N, paper sign) and a (m/s², None without
        ``accel_topic``) at the aligned joint_states samples; ``source`` names the bag and the
        dropped samples.

    Raises
    ------
    FileNotFoundError
        For a missing bag.
    ValueError
        Naming the problem for a directory that is not a bag, a missing topic (lists the bag's
        topics), a topic of the wrong message type, a joint absent from a message (lists the
        names seen), a message that lacks its position/velocity/effort, or an unknown
        ``force_source``.
    """
    if force_source not in ("effort", "wrench"):
        raise ValueError(f"force_source: expected 'effort' or 'wrench', got {force_source!r}")
    if force_source == "wrench" and wrench_topic is None:
        wrench_topic = "/wrench"
    bag = _bag_dir(Path(path))
    from rosbags.highlevel import AnyReader, AnyReaderError  # lazy: only bag users need it
    from rosbags.typesys import Stores, get_typestore

    wanted = {joint_states_topic: _JOINT_STATE}
    if accel_topic:
        wanted[accel_topic] = _IMU
    if force_source == "wrench":
        wanted[wrench_topic] = _WRENCH
    try:
        reader = AnyReader([bag], default_typestore=get_typestore(Stores.ROS2_KILTED))
        reader.open()
    except AnyReaderError as e:
        raise ValueError(f"{bag}: cannot open the bag: {e}") from None
    try:
        have = {c.topic: c.msgtype for c in reader.connections}
        for topic, msgtype in wanted.items():
            if topic not in have:
                listing = ", ".join(f"{k} ({v})" for k, v in sorted(have.items())) or "none"
                raise ValueError(f"{bag}: topic {topic!r} is not in the bag; it has: {listing}")
            if have[topic] != msgtype:
                raise ValueError(f"{bag}: topic {topic!r} has type {have[topic]}, expected "
                                 f"{msgtype}")
        data = {topic: ([], [], []) for topic in wanted}  # header ns, log ns, values
        conns = [c for c in reader.connections if c.topic in wanted]
        names_seen: set = set()
        for conn, log_ns, raw in reader.messages(connections=conns):
            msg = reader.deserialize(raw, conn.msgtype)
            st = msg.header.stamp
            hdr, logs, vals = data[conn.topic]
            hdr.append(st.sec * 1_000_000_000 + st.nanosec)
            logs.append(log_ns)
            if conn.topic == joint_states_topic:
                vals.append(_joint_values(msg, joint, len(hdr), force_source, names_seen,
                                          joint_states_topic))
            elif conn.topic == accel_topic:
                vals.append((float(msg.linear_acceleration.x),
                             float(msg.linear_acceleration_covariance[0])))
            else:
                vals.append((float(msg.wrench.force.x), 0.0))
    finally:
        reader.close()
    return _assemble(bag, joint, joint_states_topic, accel_topic, wrench_topic, force_source,
                     data, names_seen)


def _joint_values(msg, joint, k, force_source, names_seen, topic):
    names = list(msg.name)
    if joint not in names:
        names_seen.update(names)
        raise ValueError(f"{topic}: joint {joint!r} is not in message {k} (names seen: "
                         f"{sorted(names_seen)})")
    names_seen.update(names)
    i = names.index(joint)
    fields = [("position", msg.position), ("velocity", msg.velocity)]
    if force_source == "effort":
        fields.append(("effort", msg.effort))
    out = []
    for fname, arr in fields:
        if len(arr) <= i:
            raise ValueError(f"{topic}: message {k} has no {fname} for joint {joint!r} "
                             f"({len(arr)} entries for {len(names)} names)")
        out.append(float(arr[i]))
    return out


def _assemble(bag, joint, js_topic, accel_topic, wrench_topic, force_source, data, names_seen):
    hdr, logs, vals = data[js_topic]
    if not vals:
        raise ValueError(f"{bag}: topic {js_topic!r} has no messages")
    ref_ns, js_log = _stamps(hdr, logs)
    order = np.argsort(ref_ns, kind="stable")
    ref_ns = ref_ns[order]
    js = np.array(vals, dtype=float)[order]
    notes = [f"{bag} {js_topic}[{joint}]" + (" (receive times: zero header stamps)"
                                             if js_log else "")]
    keep = np.ones(ref_ns.size, dtype=bool)
    extra = {}
    noise = None
    gaps = {}
    for topic, name in ((accel_topic, "a"),
                        (wrench_topic if force_source == "wrench" else None, "force")):
        if not topic:
            continue
        t_hdr, t_log, t_vals = data[topic]
        if not t_vals:
            raise ValueError(f"{bag}: topic {topic!r} has no messages")
        ns, used_log = _stamps(t_hdr, t_log)
        idx, ok = _match(ref_ns, ns)
        _check_matched(ok, topic)
        first, last = int(np.argmax(ok)), ok.size - int(np.argmax(ok[::-1]))
        inner = int(np.count_nonzero(~ok[first:last]))
        if inner:
            gaps[topic] = inner
        keep &= ok
        arr = np.array(t_vals, dtype=float)[idx]
        extra[name] = arr[:, 0]
        notes.append(topic + (" (receive times)" if used_log else ""))
        if name == "a" and np.all(arr[:, 1] > 0.0):  # Imu: variance known (0: unknown)
            noise = {"accel": float(np.median(arr[:, 1]))}
    if not keep.any():
        raise ValueError(f"{bag}: no joint_states sample has a message of every topic")
    first, last = int(np.argmax(keep)), keep.size - int(np.argmax(keep[::-1]))
    dropped = keep.size - (last - first)
    if dropped:
        notes.append(f"{dropped} joint_states samples at the ends without a matching message "
                     f"dropped")
    for topic, n in gaps.items():
        k = first + int(np.argmax(~keep[first:last]))
        notes.append(f"{n} joint_states samples inside the record without a {topic} message "
                     f"within half a period dropped (gaps in the record; first at t = "
                     f"{(ref_ns[k] - ref_ns[first]) * 1e-9:.6f} s)")
    ref_ns = ref_ns[keep]
    if ref_ns.size < MIN_ROWS:
        raise ValueError(f"{bag}: {ref_ns.size} aligned samples, fewer than {MIN_ROWS}")
    t = (ref_ns - ref_ns[0]).astype(float) * 1e-9
    force = -(extra["force"][keep] if "force" in extra else js[keep, 2])  # ROS -> paper sign
    sec, nsec = divmod(int(ref_ns[0]), 1_000_000_000)
    notes.append(f"t = 0 at stamp {sec}.{nsec:09d} s")
    return Recording(t=t, x=js[keep, 0], v=js[keep, 1], force=force,
                     a=extra["a"][keep] if "a" in extra else None, joint=joint,
                     source="; ".join(notes), noise=noise)
