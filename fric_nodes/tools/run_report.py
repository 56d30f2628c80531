"""Analysis and plots of a recorded haptic run (``fric_recorder``'s bag, read back by
:func:`read_bag`, and the ``run.npz`` it saves of what it analysed).

Pure numpy/matplotlib (Agg) and rosbags, no ROS: the recorder calls it after recording, and tests
and ``examples/haptic_demo.py`` call it on a saved file.

``run.npz`` holds float64 arrays (:data:`ARRAY_KEYS`; ``*_stamp``: header stamps in seconds since
``meta["stamp_base_ns"]``, the first stamp read, so float64 keeps nanoseconds; ``*_rx``:
receive times, seconds since the first message read) and ``meta_json`` (the recorder's parameters
and counters).

Time base: the header stamps of ``joint_states`` (stage time; in ``sync: lockstep`` the stage's
simulated time, so the analysis does not depend on how fast the loop ran). Unstamped messages
(the renderer's commands, ``Float64MultiArray``, and the stage's ``~/hand_force``,
``std_msgs/Float64``) get the stamp of the latest ``joint_states`` received before them: the
renderer answers state k with command k, so a command lines up with the state it answers.

Phases come from the operator's hand force (the ``hand_force`` topic of the simulated stage, or
the ``hand_script``, for a stage whose hand is out of reach, e.g. the device emulator's: placed at
``hand_t0``, or where it best matches the measured force, :func:`align_script`): a *hold* is a
stretch where the hand force stays at one non-zero value for at least ``min_hold`` seconds. A
hold is ``stuck`` when the velocity never reaches ``v_slide``, ``sliding`` otherwise. The summary
reports

* for stuck holds: max |v| over the hold and the position range (in encoder counts) after
  ``settle`` s (the presliding spring settling), plus the displacement since the hold started;
* for sliding holds: the rendered friction force while sliding (median of its magnitude over the
  samples with |v| >= ``v_slide``): the kinetic level, and the median velocity of those samples
  (``kinetic_velocity``: a velocity-dependent law is checked there);
* for every hold: ``rendered_max_abs`` (the most the rendered friction reached in the hold) and
  ``rendered_peak_since_previous`` (from the end of the previous hold, the hand's ramp included:
  for a hold that slides, the static level reached at breakaway);
* after the hand lets go (the end of the last sliding hold, or of the last hold): the velocity
  sign changes, when the velocity became (exactly) zero, and the position range from then on.

The rendered friction force on the device: in impedance mode, the effort command; in admittance
mode (position setpoints), ``M a − h`` of the rendered virtual mass: the setpoint's velocity
``v_k = (s_k − s_(k−1))/dt`` obeys ``M (v_k − v_(k−1))/dt = h_k − f_k`` (model A), so with
the measured force ``h_k`` the element saw (the wrench) and the mass ``M`` (``virtual_mass``), the
friction is recovered exactly wherever three consecutive setpoints were recorded.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any, Mapping

import numpy as np

__all__ = ["RunData", "empty_arrays", "save_run", "load_run", "read_bag", "bag_meta", "columns_for",
           "run_data", "write_files", "analyze",
           "format_summary",
           "plot_run", "sign_changes", "hand_from_script", "align_script"]

#: arrays stored in run.npz (all float64, possibly empty)
ARRAY_KEYS = ("js_stamp", "js_rx", "js_position", "js_velocity", "js_effort",
              "effort_rx", "effort", "setpoint_rx", "setpoint",
              "wrench_stamp", "wrench_rx", "wrench", "hand_rx", "hand")

#: most points a plot line or scatter draws (:func:`plot_run`)
PLOT_POINTS = 20_000

DEFAULTS = dict(encoder_resolution=2.57e-6, v_slide=0.01, settle=0.5, min_hold=0.05,
                hand_threshold=0.05, virtual_mass=0.0)


def empty_arrays() -> dict[str, np.ndarray]:
    return {k: np.zeros(0) for k in ARRAY_KEYS}


class RunData:
    """A recorded run: the raw arrays (see :data:`ARRAY_KEYS`) and ``meta`` (a dict)."""

    def __init__(self, arrays: Mapping[str, Any], meta: Mapping[str, Any] | None = None):
        self.a = {k: np.asarray(arrays.get(k, np.zeros(0)), dtype=float).reshape(-1)
                  for k in ARRAY_KEYS}
        self.meta = dict(meta or {})

    def __getattr__(self, name):
        a = self.__dict__.get("a")
        if a is not None and name in a:
            return a[name]
        raise AttributeError(name)

    @property
    def n_states(self) -> int:
        return self.a["js_stamp"].size


def save_run(path: str | os.PathLike, data: RunData, compress: bool = True) -> Path:
    """Write ``data`` as an .npz (arrays + ``meta_json``), compressed unless ``compress`` is
    False (the recorder's: 0.03 s instead of 1.0-1.8 s for 540 000 states, 52 MB instead of
    8-30 MB)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    save = np.savez_compressed if compress else np.savez
    save(path, meta_json=np.array(json.dumps(data.meta)), **data.a)
    return path


def load_run(path: str | os.PathLike) -> RunData:
    with np.load(path, allow_pickle=False) as z:
        meta = json.loads(str(z["meta_json"])) if "meta_json" in z.files else {}
        return RunData({k: z[k] for k in ARRAY_KEYS if k in z.files}, meta)


# -- the recorder's bag -------------------------------------------------------------------------
#: the topics the recorder records, as read back: run_report key -> (message type, default topic)
BAG_TOPICS = {"joint_states": ("sensor_msgs/msg/JointState", "/joint_states"),
              "effort": ("std_msgs/msg/Float64MultiArray", "/effort_controller/commands"),
              "setpoint": ("std_msgs/msg/Float64MultiArray", "/position_controller/commands"),
              "wrench": ("geometry_msgs/msg/WrenchStamped", "/wrench"),
              "hand": ("std_msgs/msg/Float64", "/haptic_stage/hand_force")}


def bag_meta(path: str | os.PathLike) -> dict:
    """The recorder's parameters stored in the bag's ``custom_data`` (``{}`` for another bag)."""
    import yaml
    try:
        info = yaml.safe_load((Path(path) / "metadata.yaml").read_text(encoding="utf-8"))
        text = (info["rosbag2_bagfile_information"].get("custom_data") or {})["fric_recorder"]
        return dict(json.loads(text))
    except (OSError, KeyError, TypeError, ValueError, yaml.YAMLError):
        return {}


def read_bag(path: str | os.PathLike, meta: Mapping[str, Any] | None = None, *,
             window: float = 0.0) -> RunData:
    """The :class:`RunData` of a recorded bag (``fric_recorder``'s ``run_bag``, or any rosbag2
    bag with these topics): ``joint_states`` of ``meta["joint_name"]`` (found by name in every
    message), entry ``meta["command_index"]`` of the command arrays, ``force.x`` of the wrench,
    the hand force. Receive times (``*_rx``) are the bag's timestamps, in seconds since the
    first message read. ``meta`` defaults to the recorder's parameters stored in the bag
    (:func:`bag_meta`). The messages are decoded a batch at a time
    (:mod:`fric_nodes.tools.run_columns`, the recorder's own decoders: the same arrays as it
    writes at the end of a run).

    ``window`` > 0 reads only the last ``window`` seconds (by bag timestamp) of a longer bag, so
    the memory of the arrays (14 float64 per 1 kHz cycle: 67 MB for 600 s) and the read-back
    time stay bounded however long the run was; ``meta["window"]`` then says what was read.
    Messages without the joint, or commands too short for ``command_index``, are skipped and
    counted in ``meta["skipped"]`` (with messages whose bytes are not their type,
    ``malformed``); the joints those messages carried are in ``meta["joints_seen"]``.
    ``ValueError`` for a path that is not a readable bag."""
    from rosbags.highlevel import AnyReader, AnyReaderError
    from rosbags.typesys import Stores, get_typestore

    from .run_columns import MemoryStore, window_start

    path = Path(path)
    meta = dict(bag_meta(path) if meta is None else meta)
    topics = meta.get("bag_topics") or {k: v[1] for k, v in BAG_TOPICS.items()}
    store = get_typestore(Stores.ROS2_KILTED)
    try:
        reader = AnyReader([path], default_typestore=store)
        reader.open()
    except (AnyReaderError, OSError) as e:
        raise ValueError(f"{path}: cannot open the bag: {e}") from None
    cols = columns_for(meta, MemoryStore(), batch=1 << 16)
    try:
        key_of = {}
        for c in reader.connections:
            for k, (msgtype, _) in BAG_TOPICS.items():
                if topics.get(k) == c.topic and c.msgtype == msgtype:
                    key_of[c.id] = k
        conns = [c for c in reader.connections if c.id in key_of]
        if conns:  # (connections=[] would read every topic)
            start, info = window_start(reader.start_time, reader.end_time, window)
            if info:
                meta["window"] = info
            push = cols.push
            for conn, log_ns, raw in reader.messages(connections=conns, start=start):
                push(key_of[conn.id], log_ns, raw)
            cols.flush()
    finally:
        reader.close()
    return run_data(cols, meta, path)


def columns_for(meta: Mapping[str, Any], store, batch: int = 2048):
    """The :class:`~fric_nodes.tools.run_columns.Columns` of a haptic recording with the
    recorder's parameters ``meta`` (``joint_name``, ``command_index``), into ``store``."""
    from .run_columns import Columns, decoder_for

    joint = meta.get("joint_name", "stage_joint")
    ci = int(meta.get("command_index", 0))
    return Columns({k: decoder_for(k, joint, ci) for k in BAG_TOPICS}, store, batch=batch)


def run_data(columns, meta: Mapping[str, Any], bag: str | os.PathLike,
             start_ns: int | None = None) -> RunData:
    """The :class:`RunData` of decoded records (``columns``: a
    :class:`~fric_nodes.tools.run_columns.Columns` of :func:`columns_for`; those received at or
    after ``start_ns``) with the recorder's parameters ``meta``, as :func:`read_bag` describes:
    receive times from the first message, stamps from the first joint_states with the joint or
    wrench, skipped messages counted, the bag's path in ``meta["bag"]``."""
    from .run_columns import MALFORMED

    meta = dict(meta)
    joint = meta.get("joint_name", "stage_joint")
    rec = {k: columns.records(k, start_ns) for k in BAG_TOPICS}
    firsts = [int(r["rx"].min()) for r in rec.values() if r.size]
    base_rx = min(firsts) if firsts else 0
    js, wr = rec["joint_states"], rec["wrench"]
    js_ok, wr_ok = js["ok"] == 1, wr["ok"] == 1
    starts = [(int(r["rx"][ok][0]), i, int(r["stamp"][ok][0]))
              for i, (r, ok) in enumerate(((js, js_ok), (wr, wr_ok))) if ok.any()]
    base_stamp = min(starts)[2] if starts else None
    a: dict[str, np.ndarray] = {}

    def rx(r: np.ndarray, ok: np.ndarray) -> np.ndarray:
        return (r["rx"][ok] - base_rx) * 1e-9

    a["js_stamp"] = (js["stamp"][js_ok] - (base_stamp or 0)) * 1e-9
    a["js_rx"] = rx(js, js_ok)
    for f in ("position", "velocity", "effort"):
        a["js_" + f] = js[f][js_ok]
    for k in ("effort", "setpoint", "hand"):
        ok = rec[k]["ok"] == 1
        a[k + "_rx"] = rx(rec[k], ok)
        a[k] = rec[k]["value"][ok]
    a["wrench_stamp"] = (wr["stamp"][wr_ok] - (base_stamp or 0)) * 1e-9
    a["wrench_rx"] = rx(wr, wr_ok)
    a["wrench"] = wr["value"][wr_ok]
    skipped_js = js["ok"] == 0
    meta["stamp_base_ns"] = base_stamp
    meta["skipped"] = {
        "joint_states_without_joint": int(np.count_nonzero(skipped_js)),
        "short_commands": int(sum(np.count_nonzero(rec[k]["ok"] == 0)
                                  for k in ("effort", "setpoint"))),
        "malformed": int(sum(np.count_nonzero(r["ok"] == MALFORMED) for r in rec.values()))}
    seen: dict[str, None] = {}  # joints of the messages skipped for lacking the joint
    lids, first = np.unique(js["layout"][skipped_js], return_index=True)
    dec = columns.decoders["joint_states"]
    for lid in lids[np.argsort(first)]:
        names = dec.names(int(lid))
        if joint not in names:
            seen.update(dict.fromkeys(names))
    if seen:
        meta["joints_seen"] = list(seen)
    meta["bag"] = str(bag)
    return RunData(a, meta)


def write_files(data: RunData, out_dir: str | os.PathLike, plots: bool = True, log=print,
                extra: Mapping[str, Any] | None = None, prog: str = "fric_recorder"
                ) -> tuple[int, list[Path]]:
    """Write ``out_dir/run.npz`` (uncompressed: milliseconds), ``summary.json`` (:func:`analyze`,
    with ``extra`` added, e.g. the bag's path) and the plots (:func:`plot_run`); ``log`` where
    they are and the summary, each line starting ``prog:``. Returns (exit status: 0, or 1 when
    no joint_states with the joint was recorded, written paths)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = [save_run(out / "run.npz", data, compress=False)]
    if data.n_states == 0:
        seen = data.meta.get("joints_seen")
        hint = (f" (the joint_states carried {', '.join(seen)}: set joint_name, or kind:=arm "
                f"for an arm recording)" if seen else "")
        log(f"{prog}: no joint_states with joint {data.meta.get('joint_name')!r} "
            f"received{hint}; wrote the empty record {written[0].resolve()}")
        return 1, written
    series = _series(data)  # once: aligning a hand script takes seconds on a long run
    summary = _analyze(data, series)
    summary.update(extra or {})
    p = out / "summary.json"
    p.write_text(json.dumps(summary, indent=1) + "\n")
    written.append(p)
    if plots:
        written += _plot_run(data, series, out, summary, "", PLOT_POINTS)
    log(f"{prog}: wrote " + ", ".join(str(w.resolve()) for w in written))
    log(format_summary(summary))
    return 0, written


# -- helpers ----------------------------------------------------------------------------------
def sign_changes(v: np.ndarray) -> int:
    """Number of sign changes of ``v``, zeros skipped (0, +, 0, + is none; +, 0, − is one)."""
    s = np.sign(np.asarray(v, dtype=float))
    s = s[s != 0]
    return int(np.count_nonzero(s[1:] != s[:-1]))


def hand_from_script(script: str, t: np.ndarray, location: str = "carriage") -> np.ndarray:
    """The scripted hand force (``OperatorHand.parse`` format) at times ``t`` (s from its start)."""
    from fric_core.haptics.stage import OperatorHand
    hand = OperatorHand.parse(script, location=location)
    return np.array([hand.force(float(x)) for x in np.asarray(t, dtype=float)])


def align_script(script: str, stamps: np.ndarray, force: np.ndarray,
                 search: float | None = None) -> float:
    """The stamp at which the hand script starts, found by least squares between the script's
    force and the measured ``force`` (the load cell: with the hand on the tool side it measures
    the hand, less the handle's inertia). For a stage whose hand runs on the device's own clock
    (the emulator's ``--hand``): the script started up to ``search`` s (default: the script's
    length) before the first recorded state (the device started first), or anywhere in the
    recording after it (``--hand-start first_command``: the hand waits for the first command).
    10 ms grid, then 1 ms."""
    from fric_core.haptics.stage import OperatorHand
    stamps = np.asarray(stamps, dtype=float)
    force = np.asarray(force, dtype=float)
    ok = np.isfinite(force)
    stamps, force = stamps[ok], force[ok]
    if stamps.size < 10:
        return float(stamps[0]) if stamps.size else 0.0
    hand = OperatorHand.parse(script)
    grid = np.arange(0.0, hand.duration + 0.5, 1e-3)
    prof = np.array([hand.force(float(x)) for x in grid])
    search = hand.duration if search is None else float(search)
    ts = stamps - stamps[0]
    step = max(1, stamps.size // 4000)  # the coarse pass on at most ~4000 samples
    tc, fc = ts[::step], force[::step]

    def cost(offsets: np.ndarray, t: np.ndarray, f: np.ndarray) -> np.ndarray:
        out = np.empty(offsets.size)
        for i in range(0, offsets.size, 256):
            o = offsets[i:i + 256, None]
            model = np.interp(t[None, :] + o, grid, prof, left=0.0, right=0.0)
            out[i:i + 256] = np.mean((model - f[None, :]) ** 2, axis=1)
        return out

    # offset = device time of the first recorded state (the script starts at stamps[0] - offset;
    # negative: the script started after the first recorded state)
    coarse = np.arange(-ts[-1], search + 1e-9, 0.01)
    best = coarse[int(np.argmin(cost(coarse, tc, fc)))]
    fine = np.arange(best - 0.02, best + 0.02 + 1e-9, 0.001)
    best = fine[int(np.argmin(cost(fine, ts, force)))]
    return float(stamps[0] - best)


def _state_index(js_rx: np.ndarray, rx: np.ndarray) -> np.ndarray:
    """For each receive time in ``rx``: the index of the latest joint_states received at or
    before it (−1 if none)."""
    return np.searchsorted(js_rx, rx, side="right") - 1


def _per_state(n: int, idx: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Values placed at their state index (the last one wins); NaN where none arrived."""
    out = np.full(n, np.nan)
    ok = idx >= 0
    out[idx[ok]] = values[ok]
    return out


def _hold_last(x: np.ndarray, fill: float = 0.0) -> np.ndarray:
    """NaNs replaced by the previous value (``fill`` before the first)."""
    x = np.array(x, dtype=float)
    ok = ~np.isnan(x)
    if not ok.any():
        return np.full_like(x, fill)
    idx = np.where(ok, np.arange(x.size), 0)
    np.maximum.accumulate(idx, out=idx)
    out = x[idx]
    out[: np.flatnonzero(ok)[0]] = fill
    return out


def _series(data: RunData) -> dict[str, np.ndarray]:
    """Everything on the joint_states time base (index = state)."""
    n = data.n_states
    js_rx = data.js_rx
    t = data.js_stamp - data.js_stamp[0] if n else np.zeros(0)
    s = {"t": t, "position": data.js_position, "velocity": data.js_velocity,
         "load_cell": data.js_effort}
    s["effort_cmd"] = _per_state(n, _state_index(js_rx, data.effort_rx), data.effort)
    s["setpoint"] = _per_state(n, _state_index(js_rx, data.setpoint_rx), data.setpoint)
    # the wrench is stamped: match it to the state with the same stamp when there is one
    if data.wrench_stamp.size and n:
        idx = np.searchsorted(data.js_stamp, data.wrench_stamp)
        idx = np.clip(idx, 0, n - 1)
        exact = data.js_stamp[idx] == data.wrench_stamp
        idx = np.where(exact, idx, _state_index(js_rx, data.wrench_rx))
        s["wrench"] = _per_state(n, idx, data.wrench)
    else:
        s["wrench"] = np.full(n, np.nan)
    if data.hand.size:
        s["hand"] = _hold_last(_per_state(n, _state_index(js_rx, data.hand_rx), data.hand))
        s["hand_source"] = "topic"
    elif data.meta.get("hand_script") and n:
        script = data.meta["hand_script"]
        t0 = float(data.meta.get("hand_t0") or 0.0)
        if t0 > 0.0:  # an absolute stamp: relative to the recording's stamps
            t0 -= (data.meta.get("stamp_base_ns") or 0) * 1e-9
            s["hand_source"] = "script"
        else:  # find where the script starts on the stamps' clock from the measured force
            t0 = align_script(script, data.js_stamp, data.js_effort)
            s["hand_source"] = "script aligned to the load cell"
        s["hand_t0"] = t0
        s["hand"] = hand_from_script(script, data.js_stamp - t0,
                                     data.meta.get("hand_location", "carriage"))
    else:
        s["hand"] = np.full(n, np.nan)
        s["hand_source"] = "none"
    s["rendered"] = _rendered(data, s)
    return s


def _rendered(data: RunData, s: dict) -> np.ndarray:
    """The rendered friction force on the device per state (NaN where unknown)."""
    mode = data.meta.get("mode", "impedance")
    n = data.n_states
    if mode != "admittance":
        return s["effort_cmd"].copy()
    M = float(data.meta.get("virtual_mass") or 0.0)
    out = np.full(n, np.nan)
    if M <= 0.0 or n < 3:
        return out
    t, sp, h = s["t"], s["setpoint"], s["wrench"]
    dt = float(np.median(np.diff(t))) if n > 1 else 0.0
    if not dt > 0.0:
        return out
    maxe = float(data.meta.get("max_effort") or math.inf)
    hc = np.clip(h, -maxe, maxe)
    v = np.full(n, np.nan)
    v[1:] = (sp[1:] - sp[:-1]) / dt
    a = np.full(n, np.nan)
    a[1:] = (v[1:] - v[:-1]) / dt
    # the friction force the virtual mass feels, as a force on the device: -f = M a - h
    # (NaN wherever a setpoint or the wrench of a state is missing)
    with np.errstate(invalid="ignore"):
        return M * a - hc


def _holds(t: np.ndarray, hand: np.ndarray, min_hold: float, threshold: float) -> list:
    """(i0, i1) index ranges (inclusive) where the hand force is held at one non-zero value."""
    if t.size == 0 or np.isnan(hand).all():
        return []
    h = np.nan_to_num(hand)
    # blocks of equal consecutive values (a held force is one block: the loop below runs over
    # blocks, not the 1 kHz samples), then runs of blocks within 1e-9 of a run's first value
    starts = np.flatnonzero(np.r_[True, h[1:] != h[:-1]])
    ends = np.r_[starts[1:] - 1, h.size - 1]
    vals = h[starts].tolist()
    out = []
    b, nb = 0, len(vals)
    while b < nb:
        c, first = b, vals[b]
        tol = 1e-9 * max(1.0, abs(first))
        while c + 1 < nb and abs(vals[c + 1] - first) <= tol:
            c += 1
        i, j = int(starts[b]), int(ends[c])
        if abs(first) > threshold and t[j] - t[i] >= min_hold:
            out.append((i, j))
        b = c + 1
    return out


def analyze(data: RunData, **options) -> dict:
    """The run's summary (a JSON-serialisable dict; see the module docstring). ``options``
    override :data:`DEFAULTS` and the values in ``data.meta``."""
    return _analyze(data, _series(data), **options)


def _analyze(data: RunData, s: dict, **options) -> dict:
    """:func:`analyze` on the series ``s`` of ``data`` (:func:`_series`)."""
    opt = {k: data.meta.get(k, v) for k, v in DEFAULTS.items()}
    opt.update(options)
    res_m = float(opt["encoder_resolution"])
    v_slide = float(opt["v_slide"])
    t, x, v, rf = s["t"], s["position"], s["velocity"], s["rendered"]
    out: dict[str, Any] = {
        "mode": data.meta.get("mode", "impedance"),
        "states": int(data.n_states),
        "stage_time": float(t[-1]) if t.size else 0.0,
        "hand_source": s["hand_source"],
        "messages": {"joint_states": int(data.n_states), "effort": int(data.effort.size),
                     "setpoint": int(data.setpoint.size), "wrench": int(data.wrench.size),
                     "hand_force": int(data.hand.size)},
        "holds": [], "release": None,
    }
    if t.size > 1:
        d = np.diff(data.js_stamp)
        dt = float(np.median(d))
        out["dt"] = dt
        out["lost_states"] = int(np.sum(np.maximum(np.round(d / dt) - 1, 0))) if dt > 0 else 0
        out["non_increasing_stamps"] = int(np.count_nonzero(d <= 0))
    if t.size == 0:
        return out
    holds = _holds(t, s["hand"], float(opt["min_hold"]), float(opt["hand_threshold"]))
    prev_end = 0
    for i0, i1 in holds:
        seg = slice(i0, i1 + 1)
        dur = float(t[i1] - t[i0])
        settle = min(float(opt["settle"]), 0.5 * dur)
        w = (t >= t[i0] + settle) & (t <= t[i1])
        vmax = float(np.max(np.abs(v[seg])))
        sliding = vmax >= v_slide
        h = {"t0": float(t[i0]), "t1": float(t[i1]), "duration": dur,
             "hand_force": float(s["hand"][i0]), "state": "sliding" if sliding else "stuck",
             "max_abs_velocity": vmax,
             "displacement": float(x[i1] - x[max(i0 - 1, 0)]),
             "settle": settle,
             "settled_range_counts": int(round((x[w].max() - x[w].min()) / res_m)) if w.any()
             else 0,
             "settled_max_abs_velocity": float(np.max(np.abs(v[w]))) if w.any() else 0.0}
        r = rf[seg]
        fin = ~np.isnan(r)
        h["rendered_samples"] = int(fin.sum())
        if sliding:
            m = (np.abs(v[seg]) >= v_slide) & fin
            if m.any():
                mags = np.abs(r[m])
                h["kinetic_force"] = float(np.median(mags))
                h["kinetic_velocity"] = float(np.median(v[seg][m]))  # signed, same samples
                h["kinetic_force_iqr"] = [float(np.percentile(mags, 25)),
                                          float(np.percentile(mags, 75))]
                h["kinetic_samples"] = int(m.sum())
        if fin.any():
            h["rendered_max_abs"] = float(np.max(np.abs(r[fin])))
        # the peak since the previous hold ended: the hand's ramp into this hold included (a
        # breakaway happens on the way up: the static level is reached there)
        r_up = rf[prev_end:i1 + 1]
        r_up = r_up[~np.isnan(r_up)]
        if r_up.size:
            h["rendered_peak_since_previous"] = float(np.max(np.abs(r_up)))
        prev_end = i1 + 1
        out["holds"].append(h)
    if holds:
        slid = [k for k, h in enumerate(out["holds"]) if h["state"] == "sliding"]
        k = slid[-1] if slid else len(holds) - 1
        i_rel = holds[k][1]  # the hand starts letting go after this sample
        after = slice(i_rel + 1, None)
        va, xa, ta = v[after], x[after], t[after]
        rel: dict[str, Any] = {"t_release": float(t[i_rel]), "after_hold": k,
                               "samples": int(va.size)}
        if va.size:
            nz = np.flatnonzero(va != 0.0)
            rel["velocity_sign_changes"] = sign_changes(va)
            if nz.size:
                i_stop = nz[-1] + 1
                rel["t_stop"] = float(ta[min(i_stop, ta.size - 1)] - t[i_rel])
                rel["stopped"] = bool(i_stop < ta.size)
            else:
                i_stop = 0
                rel["t_stop"] = 0.0
                rel["stopped"] = True
            rest = xa[i_stop:]
            rel["rest_time"] = float(ta[-1] - ta[min(i_stop, ta.size - 1)])
            rel["drift_after_stop_counts"] = (int(round((rest.max() - rest.min()) / res_m))
                                              if rest.size else None)
            rel["final_position"] = float(xa[-1])
            rel["max_abs_velocity"] = float(np.max(np.abs(va)))
            # any further hold after the release (the hand coming back) is not part of it
            nxt = [h for h in out["holds"] if h["t0"] > t[i_rel]]
            if nxt:
                rel["note"] = "another hold follows; counted up to the end of the record"
        out["release"] = rel
    return out


def format_summary(summary: Mapping[str, Any]) -> str:
    """A few human-readable lines."""
    mm = 1e3
    lines = [f"{summary['mode']} run: {summary['states']} states over "
             f"{summary['stage_time']:.2f} s of stage time"
             + (f", {summary.get('lost_states', 0)} lost" if "lost_states" in summary else "")
             + f"; hand force from {summary['hand_source']}"]
    for h in summary["holds"]:
        head = f"  hold {h['t0']:.2f}-{h['t1']:.2f} s, hand {h['hand_force']:+.2f} N: "
        if h["state"] == "stuck":
            lines.append(head + f"stuck (push below breakaway): max |v| "
                         f"{h['max_abs_velocity']:.3g} m/s, displacement while stuck "
                         f"{h['settled_range_counts']} counts after {h['settle']:.2f} s "
                         f"(presliding {h['displacement'] * mm:+.3f} mm)")
        else:
            kin = (f"rendered kinetic force {h['kinetic_force']:.3f} N (median |F| over "
                   f"{h['kinetic_samples']} sliding samples)" if "kinetic_force" in h
                   else "rendered force unknown")
            lines.append(head + f"sliding (push above breakaway): max |v| "
                         f"{h['max_abs_velocity']:.3g} m/s, moved {h['displacement'] * mm:+.2f} "
                         f"mm, {kin}")
    rel = summary.get("release")
    if rel and "velocity_sign_changes" in rel:
        stop = (f"stopped {rel['t_stop']:.3f} s after the release, then "
                f"{rel['drift_after_stop_counts']} counts of drift over {rel['rest_time']:.2f} s"
                if rel.get("stopped") else "still moving at the end of the record")
        lines.append(f"  release at {rel['t_release']:.2f} s: velocity sign changes "
                     f"{rel['velocity_sign_changes']}, {stop}")
    elif not summary["holds"]:
        lines.append("  no hand force holds found (no operator script?)")
    return "\n".join(lines)


# -- plots ------------------------------------------------------------------------------------
def _envelope(y: np.ndarray, k: int) -> np.ndarray:
    """The minimum and maximum of every ``k`` consecutive values (NaN ignored; NaN for a block
    of NaN only), interleaved: a line through them draws the signal's envelope, every spike
    included."""
    n = y.size
    m = -(-n // k)
    blocks = np.full(m * k, np.nan)
    blocks[:n] = y
    blocks = blocks.reshape(m, k)
    return np.column_stack((np.fmin.reduce(blocks, axis=1),
                            np.fmax.reduce(blocks, axis=1))).ravel()


def plot_run(data: RunData, out_dir: str | os.PathLike, summary: Mapping | None = None,
             prefix: str = "", max_points: int = PLOT_POINTS) -> list[Path]:
    """Write ``<prefix>timeseries.png`` (position, velocity, rendered and hand force vs time) and
    ``<prefix>force_velocity.png`` (rendered force vs velocity); returns their paths. A run of
    more than ``max_points`` states is plotted decimated, so the time to draw stays bounded
    (0.6 s for 540 000 states, 1.4 s before at 200 000 points): the time series as the minimum
    and maximum of every k states (``max_points`` points a line, every extreme kept), the force
    against velocity every k-th state."""
    s = _series(data)
    summary = summary if summary is not None else _analyze(data, s)
    return _plot_run(data, s, out_dir, summary, prefix, max_points)


def _plot_run(data: RunData, s: dict, out_dir: str | os.PathLike, summary: Mapping,
              prefix: str, max_points: int) -> list[Path]:
    """:func:`plot_run` on the series ``s`` of ``data`` (:func:`_series`)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    mode = data.meta.get("mode", "impedance")
    title = data.meta.get("title") or f"fric haptic run ({mode})"
    xlabel = "stage time [s]"
    n = data.n_states
    t, x, v, rf = s["t"], s["position"], s["velocity"], s["rendered"]
    k = max(1, -(-n // int(max_points)))  # the scatter: every k-th state
    scatter = (v[::k], rf[::k], t[::k])
    k_line = max(1, -(-2 * n // int(max_points)))  # the lines: min and max of k_line states
    if k_line > 1:  # a long run (the summary used every state)
        s = {key: (_envelope(val, k_line) if isinstance(val, np.ndarray) and val.size == n
                   else val) for key, val in s.items()}
        s["t"] = np.repeat(t[::k_line], 2)
        t, x, v, rf = s["t"], s["position"], s["velocity"], s["rendered"]
        xlabel += f" (min/max of every {k_line} states plotted)"
    paths = []

    fig, ax = plt.subplots(3, 1, figsize=(10, 8), sharex=True)
    ax[0].plot(t, x * 1e3, lw=1.0, label="position (encoder)")
    if mode == "admittance" and np.isfinite(s["setpoint"]).any():
        ax[0].plot(t, s["setpoint"] * 1e3, lw=0.8, ls="--", label="position setpoint")
    ax[0].set_ylabel("position [mm]")
    ax[1].plot(t, v, lw=0.8, color="C2", label="velocity (encoder)")
    ax[1].set_ylabel("velocity [m/s]")
    if np.isfinite(rf).any():
        ax[2].plot(t, rf, lw=0.9, color="C3", label="rendered friction force")
    if np.isfinite(s["hand"]).any():
        ax[2].plot(t, s["hand"], lw=1.2, color="k", label=f"hand force ({s['hand_source']})")
    if data.js_effort.size:
        ax[2].plot(t, s["load_cell"], lw=0.5, color="C7", alpha=0.6,
                   label="load cell (force applied to the stage)")
    ax[2].set_ylabel("force [N]")
    ax[2].set_xlabel(xlabel)
    for h in summary.get("holds", []):
        c = "tab:blue" if h["state"] == "stuck" else "tab:orange"
        for a in ax:
            a.axvspan(h["t0"], h["t1"], color=c, alpha=0.08, lw=0)
    for a in ax:
        a.grid(True, alpha=0.3)
        a.legend(loc="upper left", fontsize=8)
    ax[0].set_title(f"{title}: blue = hand held below breakaway (stuck), orange = sliding")
    p = out_dir / f"{prefix}timeseries.png"
    fig.tight_layout()
    fig.savefig(p, dpi=100)
    plt.close(fig)
    paths.append(p)

    fig, ax = plt.subplots(figsize=(7, 5))
    v, rf, t = scatter
    m = np.isfinite(rf)
    if m.any():
        sc = ax.scatter(v[m], rf[m], c=t[m], s=4, cmap="viridis")
        fig.colorbar(sc, ax=ax, label="stage time [s]")
    ax.axhline(0.0, color="k", lw=0.5)
    ax.axvline(0.0, color="k", lw=0.5)
    ax.set_xlabel("velocity [m/s]")
    ax.set_ylabel("rendered friction force [N]")
    every = f" (every {k}th state plotted)" if k > 1 else ""
    ax.set_title(f"{title}{every}: rendered force vs velocity")
    ax.grid(True, alpha=0.3)
    p = out_dir / f"{prefix}force_velocity.png"
    fig.tight_layout()
    fig.savefig(p, dpi=100)
    plt.close(fig)
    paths.append(p)
    return paths
