"""The haptic pipeline's files, without running the pipeline: config/fric.rviz, the launch file
(resolved command lines, and every node built in-process from them so the parameter types and
values are checked against the declarations), and the recording analysis and plots of
fric_nodes.tools.run_report / fric_nodes.recorder on runs simulated here with fric_core.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml

from fric_core.elements import MasslessImpedance, RigidAdmittance
from fric_core.laws import Coulomb
from fric_core.haptics.stage import HapticStageSim, OperatorHand
from fric_interfaces import names
from fric_nodes import recorder
from fric_nodes.tools import pipeline, run_report
from fric_nodes.tools.launch_runner import LaunchError, package_share, parse_launch

SHARE = package_share("fric")
F = 4.0
SCRIPT = "0.3:0, 1.5:2:0.2, 0.15:5.3:0.05, 0.8:0"  # a short version of the launch default


# -- RViz --------------------------------------------------------------------------------------
def test_rviz_config_shows_both_marker_topics_in_world():
    cfg = yaml.safe_load((SHARE / "config" / "fric.rviz").read_text())
    assert {"Panels", "Visualization Manager", "Window Geometry"} <= set(cfg)
    assert "rviz_common/Displays" in [p["Class"] for p in cfg["Panels"]]
    vm = cfg["Visualization Manager"]
    assert vm["Global Options"]["Fixed Frame"] == "world"
    assert vm["Enabled"] is True
    for d in vm["Displays"]:
        assert {"Class", "Name", "Enabled", "Value"} <= set(d), d
        assert d["Class"].startswith("rviz_default_plugins/")
    markers = {d["Topic"]["Value"]: d for d in vm["Displays"]
               if d["Class"] == "rviz_default_plugins/MarkerArray"}
    # the nodes' ~/markers under their default names
    want = {f"/{n}/{names.MARKERS[2:]}" for n in (names.HAPTIC_STAGE, names.FRICTION_RENDERER)}
    assert set(markers) == want == {"/haptic_stage/markers", "/friction_renderer/markers"}
    for d in markers.values():
        assert d["Enabled"] is True
        # the nodes publish markers RELIABLE/VOLATILE (fric_interfaces.qos.INFO)
        assert d["Topic"]["Reliability Policy"] == "Reliable"
        assert d["Topic"]["Durability Policy"] == "Volatile"
    view = vm["Views"]["Current"]
    assert view["Class"] == "rviz_default_plugins/Orbit"
    assert 0.01 < view["Distance"] < 1.0  # the stage is a few cm long
    assert all(t["Class"].startswith("rviz_default_plugins/") for t in vm["Tools"])


def test_nodes_draw_markers_in_the_rviz_fixed_frame():
    from fric_interfaces.renderer_params import GLOBAL_SPECS
    from fric_interfaces.stage_params import SPECS
    for specs in (GLOBAL_SPECS, SPECS):
        assert {s.name: s.default for s in specs}["marker_frame"] == "world"
    cfg = yaml.safe_load((SHARE / "config" / "haptic_render.yaml").read_text())
    assert cfg["haptic_stage"]["ros__parameters"]["marker_frame"] == "world"
    assert cfg["friction_renderer"]["ros__parameters"]["marker_frame"] == "world"


# -- the launch file ---------------------------------------------------------------------------
def _params(cmd):
    """{name: value} of the -p overrides (and params files) of a command line."""
    out, files = {}, []
    for a, b in zip(cmd, cmd[1:]):
        if a == "-p":
            k, _, v = b.partition(":=")
            out[k] = v
        elif a == "--params-file":
            files.append(b)
    return out, files


def test_launch_file_defaults():
    desc = parse_launch("haptic_render.launch.xml")
    assert [n.node_name for n in desc] == ["/fric_recorder", "/friction_renderer", "/haptic_stage"]
    assert all(n.output == "screen" for n in desc)
    # the fixed-duration run ends when the stage does
    assert [n.on_exit_shutdown for n in desc] == [False, False, True]
    a = desc.arguments
    assert (a["backend"], a["sync"], a["rate"], a["dt"], a["mode"], a["law"]) == \
        ("sim", "realtime", "1000.0", "0.001", "impedance", "coulomb")
    assert float(a["duration"]) > pipeline_script_length()
    assert a["hand_script"] == pipeline.DEFAULT_HAND_SCRIPT
    st, files = _params(desc.node("haptic_stage").cmd)
    assert files == [str(SHARE / "config" / "haptic_render.yaml")]
    assert st["rate"] == "1000.0" and st["sync"] == "realtime" and st["backend"] == "sim"
    assert st["hand_script"] == f"'{pipeline.DEFAULT_HAND_SCRIPT}'"  # a YAML string, quoted
    rd, _ = _params(desc.node("friction_renderer").cmd)
    assert (rd["mode"], rd["stage_joint.law"], rd["stage_joint.F"]) == ("impedance", "coulomb",
                                                                         "4.0")
    rc, _ = _params(desc.node("fric_recorder").cmd)
    assert rc["out_dir"] == "out/haptic_render" and rc["mode"] == "impedance"


def pipeline_script_length():
    return OperatorHand.parse(pipeline.DEFAULT_HAND_SCRIPT).duration


def test_launch_file_arguments_and_choices(tmp_path):
    desc = parse_launch("haptic_render.launch.xml", {
        "backend": "serial", "port": "/dev/ttyACM0", "mode": "admittance", "record": "false",
        "law": "coulomb_viscous", "F": "3.0", "sample": "brass", "rate": "500.0",
        "dt": "0.002", "out_dir": str(tmp_path)})
    assert [n.node_name for n in desc] == ["/friction_renderer", "/haptic_stage"]
    st, _ = _params(desc.node("haptic_stage").cmd)
    assert (st["backend"], st["port"], st["sample"], st["rate"]) == ("serial", "/dev/ttyACM0",
                                                                     "brass", "500.0")
    rd, _ = _params(desc.node("friction_renderer").cmd)
    assert (rd["mode"], rd["dt"], rd["stage_joint.law"], rd["stage_joint.F"]) == \
        ("admittance", "0.002", "coulomb_viscous", "3.0")
    for bad in ({"mode": "telepathy"}, {"backend": "usb"}, {"sample": "gold"},
                {"sync": "sometimes"}, {"nonsense": "1"}):
        with pytest.raises(LaunchError):
            parse_launch("haptic_render.launch.xml", bad)


@pytest.mark.parametrize("args", [{}, {"mode": "admittance", "sync": "lockstep"},
                                  {"law": "stribeck", "sample": "teflon", "rate": "500.0",
                                   "dt": "0.002"}])
def test_launch_command_lines_build_the_nodes(args, tmp_path):
    """Each node of the launch file, built in-process from its exact command line (the real
    rcl argument parser): every parameter has the declared type and passes validation."""
    import rclpy
    from rclpy.context import Context

    from fric_nodes.friction_renderer import FrictionRenderer
    from fric_nodes.haptic_stage import HapticStage

    desc = parse_launch("haptic_render.launch.xml", {"out_dir": str(tmp_path), **args})
    classes = {"/fric_recorder": recorder.Recorder, "/friction_renderer": FrictionRenderer,
               "/haptic_stage": HapticStage}
    for spec in desc:
        ctx = Context()
        rclpy.init(args=spec.cmd, context=ctx)
        try:
            node = classes[spec.node_name](context=ctx)
            try:
                assert node.get_fully_qualified_name() == spec.node_name
                p, _ = _params(spec.cmd)
                for k, v in p.items():
                    got = node.get_parameter(k).value
                    want = yaml.safe_load(v)
                    assert got == want, (spec.node_name, k, got, want)
            finally:
                node.destroy_node()
        finally:
            rclpy.shutdown(context=ctx)


# -- the analysis on simulated runs ------------------------------------------------------------
def _simulate(mode: str, script: str = SCRIPT, *, rx_drop: int = 0) -> run_report.RunData:
    """What the recorder would save from the pipeline, with the pipeline's nodes replaced by
    fric_core: stage (hand on the handle) + model C (impedance) or model A (admittance).
    ``rx_drop``: drop every n-th joint_states message (a recorder falling behind)."""
    hand = OperatorHand.parse(script, location="tool")
    sim = HapticStageSim(hand=hand, handle=True)
    el = (MasslessImpedance(K=6000.0, B=60.0, law=Coulomb(F), dt=1e-3) if mode == "impedance"
          else RigidAdmittance(M=2.0, law=Coulomb(F), dt=1e-3))
    a = {k: [] for k in run_report.ARRAY_KEYS}
    r = sim.step()
    sp = r.position
    rx = 0.0
    for k in range(int(round(hand.duration / 1e-3)) + 300):
        ext = -r.force  # the stage publishes the force applied to it (ROS sign convention)
        rx += 1e-4
        if not (rx_drop and k % rx_drop == 5):
            for key, val in (("js_stamp", 5.0 + r.t), ("js_rx", rx),
                             ("js_position", r.position), ("js_velocity", r.velocity),
                             ("js_effort", ext), ("wrench_stamp", 5.0 + r.t), ("wrench_rx", rx),
                             ("wrench", ext)):
                a[key].append(val)
        rx += 1e-4
        a["hand_rx"].append(rx)
        a["hand"].append(r.hand_force)
        rx += 1e-4
        if mode == "impedance":
            e = -el.step(r.velocity)
            a["effort_rx"].append(rx)
            a["effort"].append(e)
            r = sim.step(e)
        else:
            sp += el.step(ext) * 1e-3
            a["setpoint_rx"].append(rx)
            a["setpoint"].append(sp)
            r = sim.step(None, sp)
    return run_report.RunData(a, {"mode": mode, "virtual_mass": 2.0, "max_effort": 9.0,
                                  "hand_script": script, "hand_location": "tool"})


@pytest.mark.parametrize("mode", ["impedance", "admittance"])
def test_analysis_of_push_below_above_release(mode):
    s = run_report.analyze(_simulate(mode))
    assert [h["state"] for h in s["holds"]] == ["stuck", "sliding"]
    below, above = s["holds"]
    assert below["hand_force"] == 2.0 and below["duration"] == pytest.approx(1.3, abs=2e-3)
    assert below["settled_range_counts"] == 0
    assert above["kinetic_force"] == pytest.approx(F, abs=1e-6)
    assert above["kinetic_samples"] >= 80
    rel = s["release"]
    assert rel["stopped"] and rel["drift_after_stop_counts"] == 0
    assert rel["velocity_sign_changes"] == (1 if mode == "impedance" else 0)
    checks = pipeline.physics_checks(s, mode=mode, F=F, min_stuck_time=0.7)
    assert all(ok for _, ok, _ in checks), checks
    text = run_report.format_summary(s)
    assert "stuck (push below breakaway)" in text and "rendered kinetic force 4.000 N" in text
    # a wrong F fails the kinetic check, a stricter sign-change limit the release check
    bad = pipeline.physics_checks(s, mode=mode, F=3.0, min_stuck_time=0.7,
                                  max_release_sign_changes=-1)
    assert [ok for _, ok, _ in bad][-2:] == [False, False]


def test_analysis_tolerates_missing_messages():
    s = run_report.analyze(_simulate("impedance", rx_drop=7))
    assert s["lost_states"] > 0
    assert [h["state"] for h in s["holds"]] == ["stuck", "sliding"]
    assert s["holds"][1]["kinetic_force"] == pytest.approx(F, abs=1e-6)


def test_script_alignment_recovers_the_hand_start():
    """The serial backend's hand runs in the device: the script is placed on the stamps' clock
    by least squares against the load cell."""
    data = _simulate("impedance")
    ref = run_report.analyze(data)
    data.a["hand"] = np.zeros(0)
    data.a["hand_rx"] = np.zeros(0)
    t0 = run_report.align_script(SCRIPT, data.js_stamp, data.js_effort)
    assert t0 == pytest.approx(data.js_stamp[0] - 0.001, abs=0.003)  # state 0 is t = 1 ms
    s = run_report.analyze(data)
    assert s["hand_source"] == "script aligned to the load cell"
    for h, hr in zip(s["holds"], ref["holds"]):
        assert h["state"] == hr["state"] and h["t0"] == pytest.approx(hr["t0"], abs=0.004)
    # hand_start first_command: the script starts after the first recorded state (here 1.5 s
    # of rest recorded before it): found at the same stamp
    dt = float(np.median(np.diff(data.js_stamp)))
    pre = data.js_stamp[0] - dt * np.arange(1500, 0, -1)
    t1 = run_report.align_script(SCRIPT, np.concatenate([pre, data.js_stamp]),
                                 np.concatenate([np.zeros(pre.size), data.js_effort]))
    assert t1 == pytest.approx(t0, abs=0.002)


def test_plots_and_recorder_outputs(tmp_path):
    data = _simulate("admittance")
    status, written = recorder.finish(data, str(tmp_path), log=lambda *_: None)
    assert status == 0
    assert sorted(p.name for p in written) == ["force_velocity.png", "run.npz",
                                               "summary.json", "timeseries.png"]
    for p in written:
        assert p.stat().st_size > 1000
    back = run_report.load_run(tmp_path / "run.npz")
    assert back.meta == data.meta and back.n_states == data.n_states
    np.testing.assert_array_equal(back.setpoint, data.setpoint)
    assert json.loads((tmp_path / "summary.json").read_text()) == \
        json.loads(json.dumps(run_report.analyze(back)))


def test_recorder_reports_an_empty_recording(tmp_path):
    lines = []
    status, written = recorder.finish(run_report.RunData({}, {"joint_name": "stage_joint"}),
                                      str(tmp_path), log=lines.append)
    assert status == 1 and [p.name for p in written] == ["run.npz"]
    assert "no joint_states" in lines[0]


def test_sign_changes():
    assert run_report.sign_changes([0, 1, 0, 2, 0]) == 0
    assert run_report.sign_changes([1, 0, -1, 0, 0, 1]) == 2
    assert run_report.sign_changes([]) == 0
