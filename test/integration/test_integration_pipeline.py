"""The haptic pipeline end to end: real node processes over loopback DDS.

``launch/haptic_render.launch.xml`` is run with ``fric launch`` (haptic_stage + friction_renderer
+ fric_recorder, each its own process), the stage in ``sync:=lockstep`` (deterministic: the
stage waits for each command, so a loaded 2-core machine changes the wall time, not the physics).
The assertions read what the recorder saved (``run.npz``, analysed by
``fric_nodes.tools.run_report``).
The operator (launch default hand script, on the handle beyond the load cell): rest 2 s, 2 N
for 10.5 s (below breakaway), 5.3 N for 0.2 s (above), release. Rendered law: Coulomb F = 4 N
(model C with K = 6000 N/m, B = 60 N·s/m in impedance mode; model A with M = 2 kg in admittance
mode). The stage's carriage friction is on (paper 003: static 1.04 N forward): in impedance mode
the hand must overcome F + 1.04 N = 5.04 N, in admittance mode the position servo hides the
carriage and the breakaway is F.

Serial: the same pipeline with ``backend:=serial`` against
``python -m fric_nodes.hardware.stage_emulator`` on a pseudo-terminal (the emulator's own 1 kHz
wall-clock servo; the hand runs in it), recorded and checked the same way, and compared with the
sim runs.

Kill/restart: the stage process is SIGKILLed mid-run; the renderer's watchdog must publish zero
effort; a new stage process brings rendering back.

Every process runs in a DDS domain nobody else uses (probed with ``pipeline.free_domain_id``),
not the domain ``conftest.py`` gives this pytest process, so other test runs on the machine can
not cross-talk. Timeouts are raised in the test parameter file (renderer watchdog, lockstep
timeout, command timeouts) so that scheduling stalls of a loaded machine cannot trip them; the
kill test lowers the watchdog back to 0.2 s on the command line.
"""

from __future__ import annotations

import math
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import yaml

from fric_nodes.tools import pipeline, run_report
from fric_nodes.tools.launch_runner import parse_launch

ROOT = Path(__file__).resolve().parents[2]
F = 4.0
K = 6000.0
COUNT = 2.57e-6  # one encoder count [m]
DURATION = 15.0  # stage time of a run [s]
LAUNCH_TIMEOUT = 120.0  # wall time allowed for one launch [s]
# serial: the emulator starts first; its hand waits for the first force/position command
# (--hand-start first_command: the renderer is up, however long a loaded machine takes to start
# the nodes; before that fix the hand pushed an unrendered stage into its end stop) and then
# rests 3.5 s so that the recorder is up too before the operator pushes
SERIAL_SCRIPT = "3.5:0, 10.5:2:0.5, 0.2:5.3:0.05, 1.5:0"
SERIAL_DURATION = 16.0  # stage time counted from the first command (hand_start first_command)


@pytest.fixture(scope="module")
def domain():
    own = int(os.environ.get("ROS_DOMAIN_ID", "0"))
    return pipeline.free_domain_id(exclude={own})


@pytest.fixture(scope="module")
def env(domain):
    return pipeline.loopback_env(domain)


@pytest.fixture(scope="module")
def params_file(tmp_path_factory):
    """config/haptic_render.yaml with timeouts a loaded machine cannot trip."""
    cfg = yaml.safe_load((ROOT / "config/haptic_render.yaml").read_text())
    cfg["friction_renderer"]["ros__parameters"]["watchdog_timeout"] = 2.0
    st = cfg["haptic_stage"]["ros__parameters"]
    st["lockstep_timeout"] = 2.0
    st["command_timeout"] = 0.5
    st["read_timeout"] = 0.2
    path = tmp_path_factory.mktemp("params") / "haptic_render_test.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def _launch(env, out_dir: Path, **args) -> tuple[int, str, float]:
    """``fric launch haptic_render.launch.xml`` to completion: (exit status, output, wall s)."""
    cmd = pipeline.launch_command({"out_dir": out_dir, **args})
    log = out_dir.parent / (out_dir.name + ".log")
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    with open(log, "w") as f:
        proc = subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=f, stderr=subprocess.STDOUT,
                                start_new_session=True)
        try:
            rc = proc.wait(timeout=LAUNCH_TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGINT)  # fric launch stops its nodes
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            rc = None
    return rc, log.read_text(), time.monotonic() - t0


class _Runs:
    """Pipeline runs shared by the tests of this module (each is run once)."""

    def __init__(self, env, params, tmp):
        self.env, self.params, self.tmp = env, params, tmp
        self.cache = {}

    def sim(self, mode: str):
        key = ("sim", mode)
        if key not in self.cache:
            out = self.tmp / f"sim_{mode}"
            rc, text, wall = _launch(self.env, out, mode=mode, sync="lockstep",
                                     duration=DURATION, params=self.params)
            self.cache[key] = self._result(rc, text, wall, out)
        return self.cache[key]

    def serial(self, mode: str):
        key = ("serial", mode)
        if key not in self.cache:
            out = self.tmp / f"serial_{mode}"
            link = self.tmp / f"stage_link_{mode}"
            emu = subprocess.Popen(
                [sys.executable, "-m", "fric_nodes.hardware.stage_emulator", "--link", str(link),
                 "--rate", "1000", "--handle", "--hand", SERIAL_SCRIPT, "--hand-location", "tool",
                 "--hand-start", "first_command", "--timeout-ms", "500", "--seed", "0"],
                env=self.env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                text=True)
            try:
                line = emu.stdout.readline()  # "port: /dev/pts/N", once the pty is served
                assert line.startswith("port:"), line
                rc, text, wall = _launch(self.env, out, mode=mode, backend="serial",
                                         port=link, duration=SERIAL_DURATION,
                                         hand_start="first_command",
                                         hand_script=SERIAL_SCRIPT, params=self.params)
            finally:
                emu.send_signal(signal.SIGINT)
                try:
                    emu_out, _ = emu.communicate(timeout=10)
                except subprocess.TimeoutExpired:
                    emu.kill()
                    emu_out, _ = emu.communicate()
            res = self._result(rc, text + "\n[emulator]\n" + emu_out, wall, out)
            res["emulator"] = emu_out
            self.cache[key] = res
        return self.cache[key]

    @staticmethod
    def _result(rc, text, wall, out):
        res = {"rc": rc, "log": text, "wall": wall, "out": out}
        npz = out / "run.npz"
        if npz.is_file():
            res["data"] = run_report.load_run(npz)
            res["summary"] = run_report.analyze(res["data"])
        return res


@pytest.fixture(scope="module")
def runs(env, params_file, tmp_path_factory):
    return _Runs(env, params_file, tmp_path_factory.mktemp("pipeline"))


def _ok(res):
    tail = "\n".join(res["log"].splitlines()[-40:])
    assert res["rc"] == 0, f"fric launch exit status {res['rc']}:\n{tail}"
    assert "summary" in res, f"no run.npz in {res['out']}:\n{tail}"
    for p in ("timeseries.png", "force_velocity.png", "summary.json"):
        assert (res["out"] / p).stat().st_size > 0, p
    return res["summary"], res["data"]


def _hold_window(data, hold, settle=0.5):
    """Positions (m) and velocities of the hold after ``settle`` s."""
    t = data.js_stamp - data.js_stamp[0]
    m = (t >= hold["t0"] + settle) & (t <= hold["t1"])
    return data.js_position[m], data.js_velocity[m], t[m]


def _check_run(s, data, mode, *, exact: bool):
    """The physics of a push-below / push-above / release run (see the module docstring)."""
    failed = [c for c in pipeline.physics_checks(s, mode=mode, F=F) if not c[1]]
    assert not failed, failed
    below, above = s["holds"]
    # below breakaway: the handle does not move over 10 s of stage time (one count at most)
    assert below["hand_force"] == pytest.approx(2.0)
    assert below["duration"] == pytest.approx(10.0, abs=0.01)
    x, v, t = _hold_window(data, below)
    assert t[-1] - t[0] >= 9.4
    assert np.ptp(x) <= COUNT * 1.001, f"moved {np.ptp(x) / COUNT:.1f} counts while stuck"
    assert np.all(v == 0.0) if exact else np.max(np.abs(v)) < 1e-3
    # the presliding deflection when the push came on is bounded by the static friction
    assert abs(below["max_abs_velocity"]) < 0.01
    # above breakaway: slides, the rendered force magnitude is the kinetic level F
    assert above["state"] == "sliding" and above["hand_force"] == pytest.approx(5.3)
    tol = 1e-6 if exact else 0.01
    assert above["kinetic_force"] == pytest.approx(F, abs=tol * F), above
    assert above["kinetic_samples"] >= (100 if exact else 50)
    assert 0.003 < above["displacement"] < 0.015  # within the stage's 16 mm of travel
    # release: stops, at most the presliding spring-back (impedance) as a sign change
    rel = s["release"]
    assert rel["stopped"] and rel["t_stop"] < 0.5
    assert rel["velocity_sign_changes"] <= (1 if mode == "impedance" else 0)
    assert rel["drift_after_stop_counts"] <= 1 and rel["rest_time"] > 1.0
    t = data.js_stamp - data.js_stamp[0]
    after = t > rel["t_release"]
    if mode == "impedance" and rel["velocity_sign_changes"]:
        # the one reversal is model C's presliding spring giving back its deflection (F/K when
        # the slide stopped); it stays inside the presliding band, |spring force| <= F
        x_after = data.js_position[after]
        back = np.max(x_after) - x_after[-1]
        assert 0.0 < back < 2.0 * F / K, back
    assert data.js_velocity[-1] == 0.0


def _lockstep_counts(log: str) -> tuple[int, int, int]:
    """From a lockstep stage's log: (cycle of the first command, states published, lockstep
    timeouts); the assertion message quotes the stage's lines when one is missing."""
    stage = "\n".join(ln for ln in log.splitlines() if "[haptic_stage" in ln)
    first = re.search(r"first command at stage time ([0-9.]+) s", stage)
    done = re.search(r"stopped \(duration reached\): (\d+) states in .*?(\d+) lockstep timeouts",
                     stage)
    assert "lockstep: state 0 published" in stage and first and done, stage
    return round(float(first.group(1)) * 1000), int(done.group(1)), int(done.group(2))


@pytest.mark.parametrize("mode", ["impedance", "admittance"])
def test_sim_lockstep_push_below_above_release(runs, mode):
    res = runs.sim(mode)
    s, data = _ok(res)
    k0, published, timeouts = _lockstep_counts(res["log"])
    # lockstep: the stage published all 15001 states of the run (t = 0 .. 15 s from the first
    # command, hand_start first_command); the lockstep loop runs faster than real time (~2 kHz
    # here), and a best-effort recorder on a loaded machine may miss a few of them (never the
    # renderer: the stage waits for its answer to each one). Before the first command the stage
    # may have stepped at rest on lockstep timeouts (k0 cycles: the renderer missed state 0 on a
    # slow discovery); after it, the renderer answered every state: no timeout at all.
    assert published == 15001 + k0 and timeouts == k0, (k0, published, timeouts)
    assert k0 <= 5, k0  # 5 lockstep timeouts of 2 s: discovery far slower than ever seen
    assert s["non_increasing_stamps"] == 0
    # The recorder's share: 0 lost on an idle 2-core machine; with other jobs on both cores
    # (CI's neighbours, a second test run) its DDS receive thread, starved while stage and
    # renderer race through ~3 states per ms, has lost 2-4 % (likely Fast DDS's shared-memory
    # port queue, a few tens of ms of this traffic, not the recorder's 2000-deep queues, which it
    # drains every 5 ms). 5 %: the summary's analysis needs each hold mostly present.
    assert s["states"] + s["lost_states"] <= published and s["lost_states"] <= 0.05 * 15001, s
    assert s["dt"] == pytest.approx(1e-3, rel=1e-6)
    _check_run(s, data, mode, exact=True)
    if mode == "impedance":
        # model C, Coulomb: while sliding the command is exactly -F
        e = data.effort
        assert np.count_nonzero(e == -F) >= 100
        assert np.all(np.abs(e) <= 9.0)  # max_effort
        assert data.setpoint.size == 0
    else:
        # model A: the setpoint does not move at all while the hand stays below F
        below = s["holds"][0]
        idx = run_report._state_index(data.js_rx, data.setpoint_rx)
        t = data.js_stamp - data.js_stamp[0]
        ts = t[np.clip(idx, 0, None)]
        sp = data.setpoint[(ts >= below["t0"]) & (ts <= below["t1"])]
        assert sp.size > 9000 and np.ptp(sp) == 0.0
        assert data.effort.size == 0
    print(f"\n{mode} sim lockstep: {res['wall']:.1f} s wall\n" + run_report.format_summary(s))


@pytest.mark.parametrize("mode", ["impedance", "admittance"])
def test_serial_backend_over_emulator_behaves_like_sim(runs, mode):
    res = runs.serial(mode)
    s, data = _ok(res)
    assert "opened" in res["log"]
    # realtime over a pty at 1 kHz: the stage publishes the newest frame of a batch and the
    # recorder is best effort, so on a loaded machine states go missing (a third of them with
    # two busy loops competing for the 2 cores); the analysis works on the stamps, the physics
    # must come out the same
    # the run lasts SERIAL_DURATION from the first command; the recorder may come up later than
    # the renderer on a loaded machine, but within the script's 3.5 s of rest (else the first
    # hold is cut, which the physics checks catch): >= 16 - 3.5 s recorded
    assert s["dt"] == pytest.approx(1e-3, rel=0.01) and s["stage_time"] > 12.5, s
    assert s["states"] >= 0.5 * 15000, s["states"]
    assert s["hand_source"].startswith("script aligned")
    _check_run(s, data, mode, exact=False)
    # the same behaviour as the simulated stage: same states, similar slide
    sim = runs.sim(mode)["summary"]
    for hs, hr in zip(sim["holds"], s["holds"]):
        assert hs["state"] == hr["state"]
        assert hs["hand_force"] == pytest.approx(hr["hand_force"])
    d_sim, d_ser = sim["holds"][1]["displacement"], s["holds"][1]["displacement"]
    if mode == "impedance":
        # the renderer reacts to the measured velocity: the slide is the sim's, +-25 % for the
        # command latency of the serial link. (Admittance is not compared: its element takes
        # one fixed step per state received, so states the stage skips under load slow the
        # rendered mass down in wall time: 8.0 mm in the sim, 3.7 mm once with two busy loops
        # competing for the cores; the qualitative behaviour above is what must not change.)
        assert d_ser == pytest.approx(d_sim, rel=0.25), (d_sim, d_ser)
    assert "crc_errors=0" in res["emulator"]
    print(f"\n{mode} serial: {res['wall']:.1f} s wall, slide {d_ser * 1e3:.2f} mm "
          f"(sim {d_sim * 1e3:.2f} mm)\n" + run_report.format_summary(s))


def test_demo_script_runs_the_pipeline_and_checks_it(env, tmp_path):
    """`make demo`'s haptic part (examples/haptic_demo.py), one mode, lockstep, no element demo."""
    t0 = time.monotonic()
    r = subprocess.run([sys.executable, str(ROOT / "examples" / "haptic_demo.py"), "--out",
                        str(tmp_path), "--modes", "admittance", "--sync", "lockstep",
                        "--no-elements"], env=env, cwd=ROOT, capture_output=True, text=True,
                       timeout=LAUNCH_TIMEOUT)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-4000:]
    assert "FAIL" not in r.stdout
    assert f"ROS_DOMAIN_ID={env['ROS_DOMAIN_ID']}" in r.stdout
    for name in ("run.npz", "summary.json", "timeseries.png", "force_velocity.png"):
        assert (tmp_path / "haptic_admittance" / name).stat().st_size > 0
    assert "haptic pipeline (admittance)" in r.stdout and "PASS" in r.stdout
    print(f"\ndemo (admittance, lockstep): {time.monotonic() - t0:.1f} s wall")


# -- kill and restart the stage -------------------------------------------------------------------
def _start(spec, env, log):
    return subprocess.Popen(spec.cmd, env={**env, **spec.env}, cwd=ROOT, stdout=log,
                            stderr=subprocess.STDOUT, start_new_session=True)


def _stop(proc):
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_killing_the_stage_makes_the_renderer_safe_and_restarting_resumes(domain, params_file,
                                                                          tmp_path):
    import rclpy
    from rclpy.context import Context
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from std_msgs.msg import Float64MultiArray

    # The launch file's renderer and stage (no recorder). The operator holds 2 N on the handle
    # from t = 0.5 s on, below breakaway, so a rendering renderer commands a steady effort of
    # about -1 N (the carriage's own static friction takes the rest). Lockstep: the restarted
    # stage waits until it sees the renderer. (On the wall clock it would start at once, and
    # after a SIGKILL the DDS discovery of the new process took 2-3 s here: the scripted hand
    # would push the carriage into its end stop before the renderer was connected.)
    # Its own domain: the killed process's participant lingers until its lease expires.
    domain = pipeline.free_domain_id(exclude={domain, int(os.environ.get("ROS_DOMAIN_ID", "0"))})
    env = pipeline.loopback_env(domain)
    desc = parse_launch("haptic_render.launch.xml", {
        "record": "false", "sync": "lockstep", "duration": "0.0", "params": str(params_file),
        "hand_script": "0.5:0, 100000:2:0.2"})
    assert [n.node_name for n in desc] == ["/friction_renderer", "/haptic_stage"]
    renderer, stage = desc.node("friction_renderer"), desc.node("haptic_stage")
    renderer.cmd += ["-p", "watchdog_timeout:=0.2"]  # after the params file: this one wins

    ctx = Context()
    rclpy.init(context=ctx, domain_id=domain)
    node = rclpy.create_node("kill_test_probe", context=ctx)
    ex = SingleThreadedExecutor(context=ctx)
    ex.add_node(node)
    rx = []  # (receive time, effort)
    node.create_subscription(Float64MultiArray, "effort_controller/commands",
                             lambda m: rx.append((time.monotonic(), m.data[0])),
                             QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE))

    def spin_until(cond, timeout):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            ex.spin_once(timeout_sec=0.02)
            if cond():
                return True
        return False

    def holding(since=0):  # the renderer holds the pushed handle: a steady effort of about -1 N
        recent = [e for _, e in rx[since:][-200:]]
        return len(recent) == 200 and all(-F <= e < -0.5 for e in recent)

    logf = open(tmp_path / "kill.log", "w")
    procs = []
    try:
        procs.append(_start(renderer, env, logf))
        procs.append(_start(stage, env, logf))
        assert spin_until(holding, 30.0), rx[-5:]
        e_before = rx[-1][1]

        # kill -9 the stage: no more joint_states; the watchdog commands zero effort, and
        # keeps commanding it (every watchdog tick) while the input stays silent
        procs[1].kill()
        procs[1].wait()
        t_kill = time.monotonic()
        n_kill = len(rx)
        assert spin_until(lambda: any(e == 0.0 for _, e in rx[n_kill:]), 5.0), rx[-5:]
        i0 = next(i for i in range(n_kill, len(rx)) if rx[i][1] == 0.0)
        t_safe = rx[i0][0] - t_kill
        # every watchdog tick (50 ms) again: >= 10 within 3 s. Not within 1 s: after a SIGKILLed
        # shared-memory peer, Fast DDS's port health check can hold a writer's publish for up to
        # ~1 s (eProsima/Fast-DDS#6535, #5469); seen once in CI (2 zeros in the first second)
        spin_until(lambda: len(rx) - i0 >= 10, 3.0)
        after = [e for _, e in rx[i0:]]
        assert len(after) >= 10 and all(e == 0.0 for e in after), after[:20]
        assert all(e < -0.5 for _, e in rx[n_kill - 10:n_kill])  # it was holding until then

        # restart the stage: rendering resumes (the hand pushes again from rest)
        n_restart = len(rx)
        t_restart = time.monotonic()
        procs[1] = _start(stage, env, logf)
        assert spin_until(lambda: holding(n_restart), 30.0), rx[-5:]
        t_resume = time.monotonic() - t_restart
        assert procs[0].poll() is None  # the renderer kept running throughout
        assert all(math.isfinite(e) and abs(e) <= 9.0 for _, e in rx)
        print(f"\nkill/restart: effort {e_before:+.3f} N before the kill, zero effort "
              f"{t_safe * 1e3:.0f} ms after it (then {len(after)} zero commands in 1 s), holding "
              f"again at {rx[-1][1]:+.3f} N {t_resume:.1f} s after the restart")
    finally:
        for p in procs:
            _stop(p)
        logf.close()
        ex.shutdown()
        node.destroy_node()
        rclpy.shutdown(context=ctx)
    assert procs[0].returncode == 0, (tmp_path / "kill.log").read_text()[-3000:]

