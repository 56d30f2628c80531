"""friction_renderer: the renderer's exact output against fric_core elements, joints by name,
saturation, each bad input (diagnostic + safe output + the node keeps running), watchdog,
live retuning with validation, admittance mode, a DDS round trip, and `main` as a process.

Exactness tests call the node's callbacks directly (no DDS timing involved); the DDS tests run
the renderer and a test node in one SingleThreadedExecutor with bounded spin_once loops.
"""

import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import rclpy
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter
from rclpy.qos import QoSProfile, ReliabilityPolicy
from geometry_msgs.msg import WrenchStamped
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from visualization_msgs.msg import MarkerArray

from fric_core.elements import (CompliantAdmittance, InertialImpedance, MasslessImpedance,
                                RigidAdmittance)
from fric_core.laws import Coulomb
from fric_interfaces import names, qos
from fric_interfaces.conversions import joint_state_msg, wrench_msg
from fric_core.bank import ElementBank, joint_config
from fric_interfaces.renderer_params import (GLOBAL_SPECS, joint_specs, resolve_element,
                                             validate_globals)
from fric_nodes.builders import build_bank
from fric_nodes.friction_renderer import FrictionRenderer

ROOT = Path(__file__).resolve().parents[2]
T0 = 1_000_000_000  # first stamp [ns]
DT_NS = 1_000_000
K, B, F, DT = 6000.0, 10.0, 4.0, 0.001


@pytest.fixture
def make(ros):
    nodes = []

    def _make(**params):
        overrides = [Parameter(k, value=v) for k, v in params.items()]
        n = FrictionRenderer(parameter_overrides=overrides)
        nodes.append(n)
        return n

    yield _make
    for n in nodes:
        n.destroy_node()


def js(names_, vel, pos=None, k=0, eff=None):
    """JointState stamped at cycle k."""
    pos = [0.0] * len(names_) if pos is None else pos
    return joint_state_msg(names_, pos, vel, eff, stamp_ns=T0 + k * DT_NS)


def diag(node):
    st = node.diagnostic_status()
    return st.level, st.message, {kv.key: kv.value for kv in st.values}


def velocity_profile():
    """Push (stick, then slip), stop (hold), reverse: 400 cycles."""
    return ([0.01] * 100 + [0.05] * 50 + [0.0] * 100 + [-0.02] * 150)


# ------------------------------------------------------------------ pure parameter helpers
def _values(joints, **over):
    v = {s.name: s.default for s in GLOBAL_SPECS}
    v["joints"] = list(joints)
    for j in joints:
        v.update({s.name: s.default for s in joint_specs(j)})
    v.update(over)
    return v


def test_build_bank_names_the_bad_parameter():
    vals = _values(["a", "b"], **{"b.law": "stribeck", "b.vs": 0.0})
    with pytest.raises(ValueError, match=r"^b\.vs: must be > 0"):
        build_bank("massless_impedance", DT, ["a", "b"], vals)
    vals = _values(["a"], **{"a.law": "asymmetric", "a.Dn": 1.0})
    with pytest.raises(ValueError, match=r"^a\.Dn: must be < 0"):
        build_bank("massless_impedance", DT, ["a"], vals)
    vals = _values(["a"], **{"a.K": 0.0, "a.B": 0.0})
    with pytest.raises(ValueError, match=r"^a\.B: B \+ dt\*K must be > 0"):
        build_bank("massless_impedance", DT, ["a"], vals)


def test_design_check_rejects_or_warns():
    # (15): stiction drop (Dp - Cp)/dv = 100 steeper than B + dt K = 16
    vals = _values(["a"], **{"a.law": "asymmetric", "a.dv": 0.01})
    with pytest.raises(ValueError, match=r"design check failed.*a: AsymmetricFriction.*\(15\)"):
        build_bank("massless_impedance", DT, ["a"], vals)
    bank, msgs = build_bank("massless_impedance", DT, ["a"], vals, design_check="warn")
    assert bank.n == 1 and any("(15)" in m for m in msgs)
    # (63) with a device mass: diverging static friction is rejected, oscillating only noted
    with pytest.raises(ValueError, match="diverges"):
        build_bank("massless_impedance", DT, ["a"], _values(["a"], **{"a.mass": 0.1,
                                                                      "a.K": 1e6}))
    _, notes = build_bank("massless_impedance", DT, ["a"], _values(["a"], **{"a.mass": 1.0}))
    assert len(notes) == 1 and "oscillation" in notes[0]
    # (48) for Stribeck at model C's Z
    bad = _values(["a"], **{"a.law": "stribeck", "a.vs": 0.01})
    with pytest.raises(ValueError, match=r"\(48\)"):
        build_bank("massless_impedance", DT, ["a"], bad)
    # the same law is fine for model A (Z = T/M is tiny)
    build_bank("rigid_admittance", DT, ["a"], bad)


def test_scalar_and_vector_banks_agree():
    joints = ["a", "b", "c"]
    vals = _values(joints, **{"b.law": "stribeck", "c.law": "asymmetric", "c.F": 1.0,
                              "a.F": 3.0, "b.K": 3000.0})
    configs = [joint_config(vals, j, "massless_impedance") for j in joints]
    scalar = ElementBank("massless_impedance", DT, configs, vectorize=False)
    vector = ElementBank("massless_impedance", DT, configs, vectorize=True)
    assert scalar.layout == "3 scalar" and "vector[Stribeck x1]" in vector.layout
    rng = np.random.default_rng(1)
    for k in range(300):
        u = rng.normal(0.0, 0.05, 3) * (k % 50 > 25)
        np.testing.assert_allclose(vector.step(u), scalar.step(u), rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(vector.stuck(), scalar.stuck())
    scalar.reset()
    assert not scalar.out.any()


def test_element_and_global_checks():
    assert resolve_element("impedance", "auto") == "massless_impedance"
    assert resolve_element("admittance", "auto") == "rigid_admittance"
    with pytest.raises(ValueError, match="does not fit mode"):
        resolve_element("impedance", "rigid_admittance")
    with pytest.raises(ValueError, match="exactly one joint"):
        validate_globals(_values(["a", "b"], mode="admittance"))
    with pytest.raises(ValueError, match="duplicate"):
        validate_globals(_values(["a", "a"]))


# ------------------------------------------------------------------ impedance, exact
def test_impedance_output_is_minus_model_c(make):
    node = make()
    ref = MasslessImpedance(K, B, Coulomb(F), DT)
    out, stuck = [], []
    for k, v in enumerate(velocity_profile()):
        node._on_joint_state(js(["stage_joint"], [v], k=k))
        expected = -ref.step(v)
        assert node.last_command[0] == expected  # bit-exact: the node adds nothing
        out.append(expected)
        stuck.append(bool(ref.state.stuck))
    out = np.array(out)
    # below breakaway the contact sticks: force = spring + damper, |f| < F
    assert stuck[0] and out[0] == pytest.approx(-(B + DT * K) * 0.01)
    assert np.all(np.abs(out[:60]) < F)
    # pushed on, it slides with exactly the kinetic force
    assert not stuck[120] and np.all(out[100:150] == -F)
    # stopped: sticks, holds a constant force without drift or chatter
    assert all(stuck[155:250]) and np.all(out[155:250] == out[155])
    # reversed: slides the other way at +F
    assert np.all(out[-50:] == F)
    _, _, d = diag(node)
    assert d["stage_joint state"] == "slip" and d["accepted inputs"] == "400"


def test_models_b_and_d(make):
    node_b = make(element="inertial_impedance", **{"stage_joint.M": 0.5})
    ref_b = InertialImpedance(0.5, K, B, Coulomb(F), DT)
    node_d = make(mode="admittance", admittance_input="joint_effort",
                  element="compliant_admittance", max_effort=50.0)
    ref_d = CompliantAdmittance(2.0, K, B, Coulomb(F), DT)
    x = 0.0
    for k, v in enumerate(velocity_profile()):
        node_b._on_joint_state(js(["stage_joint"], [v], k=k))
        assert node_b.last_command[0] == max(-10.0, min(10.0, -ref_b.step(v)))
        h = 1000.0 * v
        node_d._on_effort_state(js(["stage_joint"], [0.0], eff=[h], k=k))
        x += ref_d.step(h) * DT
        assert node_d.last_command[0] == x


def test_joints_matched_by_name_with_shuffled_order_and_extra_joints(make):
    node = make(joints=["a", "b"], **{"a.F": 2.0, "b.F": 3.0})
    ra = MasslessImpedance(K, B, Coulomb(2.0), DT)
    rb = MasslessImpedance(K, B, Coulomb(3.0), DT)
    orders = [["b", "x", "a"], ["a", "b"], ["y", "a", "z", "b"]]
    for k in range(150):
        va, vb = 0.03 * math.sin(k / 20), -0.05
        order = orders[k % 3]
        vel = {"a": va, "b": vb, "x": 99.0, "y": -99.0, "z": 7.0}
        node._on_joint_state(js(order, [vel[j] for j in order], k=k))
        np.testing.assert_array_equal(node.last_command, [-ra.step(va), -rb.step(vb)])
    assert node.last_command[1] == 3.0  # b slides against its own F


def test_max_effort_saturates_and_is_reported(make):
    node = make(max_effort=2.5)
    for k in range(100):
        node._on_joint_state(js(["stage_joint"], [0.05], k=k))
        assert abs(node.last_command[0]) <= 2.5
    assert node.last_command[0] == -2.5
    level, message, d = diag(node)
    assert level == DiagnosticStatus.WARN and "max_effort" in message
    assert d["saturation"] == "active" and int(d["stage_joint saturated cycles this period"]) > 0


# ------------------------------------------------------------------ bad input
def _bad_messages():
    nan, inf = float("nan"), float("inf")
    js_len = JointState(name=["stage_joint"], position=[0.0], velocity=[0.1, 0.2])
    js_len.header.stamp.sec, js_len.header.stamp.nanosec = 1, 60 * DT_NS  # T0 + 60 cycles
    return {
        "nan velocity": (js(["stage_joint"], [nan], k=60), "non_finite", "non-finite"),
        "inf position": (js(["stage_joint"], [0.0], pos=[inf], k=60), "non_finite",
                         "non-finite"),
        "missing joint": (js(["other"], [0.0], k=60), "missing_joint", "missing"),
        "unknown only": (js(["u1", "u2"], [0.0, 0.1], k=60), "missing_joint", "missing"),
        "length mismatch": (js_len, "length_mismatch", "has 2 entries for 1 names"),
        "duplicate name": (js(["stage_joint", "stage_joint"], [0.1, 0.2], k=60),
                           "duplicate_joint_name", "duplicate"),
        "stamp backwards": (js(["stage_joint"], [0.01], k=10), "stamp_not_increasing",
                            "not after"),
        "stamp duplicate": (js(["stage_joint"], [0.01], k=49), "stamp_not_increasing",
                            "not after"),
    }


@pytest.mark.parametrize("case", list(_bad_messages()))
def test_bad_input_gives_diagnostic_safe_output_and_node_continues(make, case):
    msg, reason, text = _bad_messages()[case]
    node = make(max_effort=3.0)
    ref = MasslessImpedance(K, B, Coulomb(F), DT)
    for k in range(50):  # slide: effort saturated at -3
        node._on_joint_state(js(["stage_joint"], [0.05], k=k))
        ref.step(0.05)
    held = node.last_command
    node._on_joint_state(msg)
    cmd = node.last_command
    assert np.all(np.isfinite(cmd)) and np.all(np.abs(cmd) <= 3.0)
    np.testing.assert_array_equal(cmd, held)  # the last command again
    level, message, d = diag(node)
    assert level == DiagnosticStatus.WARN and "rejected" in message
    assert d[f"rejected {reason}"] == "1"
    assert text in d[f"rejected {reason} last"]
    # the node keeps rendering, the element was not stepped by the bad message
    for k in range(61, 71):
        node._on_joint_state(js(["stage_joint"], [-0.01], k=k))
        assert node.last_command[0] == max(-3.0, min(3.0, -ref.step(-0.01)))
    assert diag(node)[0] == DiagnosticStatus.WARN  # the gap k=49 -> 61 is counted
    assert d["accepted inputs"] == "50"


def test_lowering_max_effort_clips_the_held_command(make):
    node = make()
    for k in range(80):
        node._on_joint_state(js(["stage_joint"], [0.05], k=k))
    assert node.last_command[0] == -F
    assert node.set_parameters([Parameter("max_effort", value=1.0)])[0].successful
    node._on_joint_state(js(["stage_joint"], [float("nan")], k=100))
    assert node.last_command[0] == -1.0


def test_gaps_count_lost_cycles_but_step_once(make):
    node = make()
    ref = MasslessImpedance(K, B, Coulomb(F), DT)
    for k in (0, 1, 2, 5, 6, 16):  # 2 + 9 lost cycles
        node._on_joint_state(js(["stage_joint"], [0.01], k=k))
        assert node.last_command[0] == -ref.step(0.01)
    level, message, d = diag(node)
    assert d["lost cycles"] == "11" and "11 lost cycles" in message


def test_zero_stamp_falls_back_to_receive_time(make):
    node = make()
    for _ in range(3):
        m = js(["stage_joint"], [0.01])
        m.header.stamp.sec = m.header.stamp.nanosec = 0
        node._on_joint_state(m)
    _, _, d = diag(node)
    assert d["accepted inputs"] == "3" and d["zero-stamped inputs (receive time used)"] == "3"


def test_watchdog_zero_effort_after_silence_and_recovery_from_rest(make):
    node = make(watchdog_timeout=0.05)
    for k in range(80):
        node._on_joint_state(js(["stage_joint"], [0.05], k=k))
    assert node.last_command[0] == -F
    node._on_watchdog()
    assert not node.watchdog_tripped
    time.sleep(0.08)
    node._on_watchdog()
    assert node.watchdog_tripped and node.last_command[0] == 0.0
    level, message, d = diag(node)
    assert level == DiagnosticStatus.ERROR and "watchdog" in message
    assert d["watchdog"].startswith("tripped") and d["stage_joint state"] == "stopped"
    # rejected input while tripped: still zero
    node._on_joint_state(js(["stage_joint"], [float("inf")], k=90))
    assert node.last_command[0] == 0.0
    # inputs return (with an older stamp: a restarted publisher): rendering from rest
    ref = MasslessImpedance(K, B, Coulomb(F), DT)
    for k in range(5):
        node._on_joint_state(js(["stage_joint"], [0.01], k=k))
        assert node.last_command[0] == -ref.step(0.01)
    assert not node.watchdog_tripped and diag(node)[2]["watchdog trips"] == "1"


def test_watchdog_trips_on_persistent_invalid_input(make):
    node = make(watchdog_timeout=0.05)
    for k in range(80):
        node._on_joint_state(js(["stage_joint"], [0.05], k=k))
    t_end = time.monotonic() + 0.08
    k = 100
    while time.monotonic() < t_end:
        node._on_joint_state(js(["stage_joint"], [float("nan")], k=k))
        assert node.last_command[0] in (-F, 0.0)
        k += 1
    node._on_watchdog()
    assert node.watchdog_tripped
    node._on_joint_state(js(["stage_joint"], [float("nan")], k=k))
    assert node.last_command[0] == 0.0


# ------------------------------------------------------------------ live retuning
def test_retune_accepted_takes_effect_from_rest(make):
    node = make()
    for k in range(80):
        node._on_joint_state(js(["stage_joint"], [0.05], k=k))
    assert node.last_command[0] == -F
    r = node.set_parameters([Parameter("stage_joint.F", value=2.0),
                             Parameter("stage_joint.B", value=20.0)])
    assert all(x.successful for x in r), r
    ref = MasslessImpedance(K, 20.0, Coulomb(2.0), DT)
    for k in range(80, 160):
        node._on_joint_state(js(["stage_joint"], [0.05], k=k))
        assert node.last_command[0] == -ref.step(0.05)
    assert node.last_command[0] == -2.0
    # switching the law live
    r = node.set_parameters([Parameter("stage_joint.law", value="coulomb_viscous"),
                             Parameter("stage_joint.D", value=10.0)])
    assert r[0].successful
    node._on_joint_state(js(["stage_joint"], [0.05], k=200))
    assert "CoulombViscous" in repr(node._bank._scalar[0][1].law)


@pytest.mark.parametrize("params, reason", [
    ({"stage_joint.F": -1.0}, "below the minimum"),  # descriptor range
    ({"stage_joint.F": float("nan")}, "nan"),  # rclpy's range check catches NaN
    ({"stage_joint.Dn": float("nan")}, "not finite"),  # no range: the node's check does
    ({"stage_joint.law": "stribeck", "stage_joint.vs": 0.0},
     "stage_joint.vs: must be > 0"),  # the core's check
    ({"stage_joint.law": "magic"}, "not one of"),
    ({"stage_joint.law": "asymmetric", "stage_joint.dv": 0.01}, "(15)"),
    ({"stage_joint.mass": 0.1, "stage_joint.K": 1e6}, "diverges"),  # unstable design
    ({"stage_joint.law": "stribeck", "stage_joint.vs": 0.01}, "(48)"),
    ({"max_effort": 0.0}, "below the minimum"),
    ({"joints": ["a"]}, "read-only"),
    ({"dt": 0.002}, "read-only"),
])
def test_retune_rejected_with_reason_and_nothing_changes(make, params, reason):
    node = make()
    for k in range(80):
        node._on_joint_state(js(["stage_joint"], [0.05], k=k))
    r = node.set_parameters_atomically([Parameter(k, value=v) for k, v in params.items()])
    assert not r.successful and reason in r.reason, r.reason
    assert node.get_parameter("stage_joint.F").value == F
    node._on_joint_state(js(["stage_joint"], [0.05], k=80))
    assert node.last_command[0] == -F  # same element, still sliding


def test_startup_rejects_bad_parameter_sets(ros):
    with pytest.raises(ValueError, match="stage_joint.vs: must be > 0"):
        FrictionRenderer(parameter_overrides=[Parameter("stage_joint.law", value="stribeck"),
                                              Parameter("stage_joint.vs", value=0.0)])
    with pytest.raises(ValueError, match="does not fit mode"):
        FrictionRenderer(parameter_overrides=[Parameter("element", value="rigid_admittance")])
    with pytest.raises(ValueError, match="expected a double"):
        FrictionRenderer(parameter_overrides=[Parameter("stage_joint.F", value=4)])


# ------------------------------------------------------------------ admittance
def test_admittance_wrench_setpoint_exact(make):
    node = make(mode="admittance", wrench_axis="y", **{"stage_joint.F": 6.0})
    x0 = 0.123
    # no position yet: nothing to start from, nothing published
    node._on_wrench(wrench_msg([0.0, 1.0, 0.0], stamp_ns=T0))
    assert diag(node)[2]["rejected no_position"] == "1"
    node._on_position(js(["stage_joint"], [0.0], pos=[x0], k=0))
    ref = RigidAdmittance(2.0, Coulomb(6.0), DT)
    for k in range(1, 200):  # below F: the setpoint stays exactly put
        h = 5.9 * math.sin(k / 10)
        node._on_wrench(wrench_msg([100.0, h, 0.0], stamp_ns=T0 + k * DT_NS))
        assert ref.step(h) == 0.0
        assert node.last_command[0] == x0
    x = x0
    for k in range(200, 400):  # above F: moves with the element's velocity
        node._on_wrench(wrench_msg([0.0, 8.0, 0.0], stamp_ns=T0 + k * DT_NS))
        x += ref.step(8.0) * DT
        assert node.last_command[0] == x
    assert x > x0 + 0.01
    pos, force, stuck = node.marker_forces()
    assert pos[0] == x and force[0] == -6.0 and not stuck[0]
    # a NaN force: held setpoint
    m = wrench_msg([0.0, 8.0, 0.0], stamp_ns=T0 + 400 * DT_NS)
    m.wrench.force.y = float("nan")
    node._on_wrench(m)
    assert node.last_command[0] == x and diag(node)[2]["rejected non_finite"] == "1"


def test_admittance_joint_effort_watchdog_holds_and_restarts_at_measured_position(make):
    node = make(mode="admittance", admittance_input="joint_effort", joints=["a", "b"],
                watchdog_timeout=0.05, max_effort=20.0,
                **{"a.F": 6.0, "b.F": 6.0, "b.M": 4.0})
    ra, rb = RigidAdmittance(2.0, Coulomb(6.0), DT), RigidAdmittance(4.0, Coulomb(6.0), DT)
    xa, xb = 1.0, -1.0
    for k in range(100):  # a pushed above F, b below; joint order shuffled
        node._on_effort_state(js(["b", "a"], [0.0, 0.0], pos=[-1.0, 1.0], eff=[3.0, 9.0], k=k))
        xa += ra.step(9.0) * DT
        xb += rb.step(3.0) * DT
        np.testing.assert_array_equal(node.last_command, [xa, xb])
    assert xb == -1.0 and xa > 1.0
    held = node.last_command
    time.sleep(0.08)
    node._on_watchdog()
    assert node.watchdog_tripped
    np.testing.assert_array_equal(node.last_command, held)  # holds the position
    node._on_effort_state(js(["a", "b"], [0.0, 0.0], pos=[5.0, 6.0], eff=[0.0, 0.0], k=0))
    np.testing.assert_array_equal(node.last_command, [5.0, 6.0])  # restarts where it is


def test_admittance_force_saturation(make):
    node = make(mode="admittance", admittance_input="joint_effort", max_effort=7.0,
                **{"stage_joint.F": 6.0})
    ref = RigidAdmittance(2.0, Coulomb(6.0), DT)
    x = 0.0
    for k in range(20):
        node._on_effort_state(js(["stage_joint"], [0.0], eff=[1000.0], k=k))
        x += ref.step(7.0) * DT
        assert node.last_command[0] == x
    assert diag(node)[2]["saturation"] == "active"


# ------------------------------------------------------------------ over DDS
def _spin_until(executor, cond, timeout=5.0):
    end = time.monotonic() + timeout
    while not cond() and time.monotonic() < end:
        executor.spin_once(timeout_sec=0.01)
    return cond()


def test_dds_round_trip_markers_and_diagnostics(make):
    node = make(joints=["a", "b"], diagnostics_period=0.2, marker_rate=50.0,
                watchdog_timeout=30.0)
    peer = rclpy.create_node("renderer_test_peer")
    try:
        reliable = QoSProfile(depth=50, reliability=ReliabilityPolicy.RELIABLE)
        cmds, diags, markers = [], [], []
        peer.create_subscription(Float64MultiArray, names.EFFORT_COMMANDS, cmds.append, reliable)
        peer.create_subscription(DiagnosticArray, names.DIAGNOSTICS, diags.append, reliable)
        peer.create_subscription(MarkerArray, "/friction_renderer/markers", markers.append,
                                 reliable)
        pub = peer.create_publisher(JointState, names.JOINT_STATES, qos.CONTROL_PUB)
        ex = SingleThreadedExecutor()
        ex.add_node(node)
        ex.add_node(peer)
        assert _spin_until(ex, lambda: pub.get_subscription_count() > 0
                           and peer.count_publishers(names.EFFORT_COMMANDS) > 0)
        ref_a = MasslessImpedance(K, B, Coulomb(F), DT)
        ref_b = MasslessImpedance(K, B, Coulomb(F), DT)
        k = 0
        while not cmds:  # first message may race discovery: resend until answered
            assert k < 200
            pub.publish(js(["b", "extra", "a"], [-0.05, 1.0, 0.05], k=k))
            _spin_until(ex, lambda: bool(cmds), timeout=0.05)
            k += 1
        expected = [-ref_a.step(0.05), -ref_b.step(-0.05)]
        np.testing.assert_array_equal(cmds[-1].data, expected)
        for i in range(60):  # lockstep: one state, one command
            n0 = len(cmds)
            pub.publish(js(["b", "extra", "a"], [-0.05, 1.0, 0.05], k=k + i))
            assert _spin_until(ex, lambda: len(cmds) > n0)
            np.testing.assert_array_equal(cmds[-1].data,
                                          [-ref_a.step(0.05), -ref_b.step(-0.05)])
        assert list(cmds[-1].data) == [-F, F]
        assert _spin_until(ex, lambda: bool(markers) and bool(diags))
        arrows = [m for m in markers[-1].markers if m.ns == "friction"]
        assert len(arrows) == 2 and arrows[0].color.r == 1.0  # orange: slipping
        assert arrows[0].points[1].x - arrows[0].points[0].x == pytest.approx(-F * 0.01)
        st = diags[-1].status[0]
        assert "friction_renderer" in st.name
    finally:
        peer.destroy_node()


def test_dds_admittance_wrench_to_position_setpoint(make):
    node = make(mode="admittance", watchdog_timeout=30.0, **{"stage_joint.F": 6.0})
    peer = rclpy.create_node("renderer_test_peer_adm")
    try:
        reliable = QoSProfile(depth=50, reliability=ReliabilityPolicy.RELIABLE)
        cmds = []
        peer.create_subscription(Float64MultiArray, names.POSITION_COMMANDS, cmds.append,
                                 reliable)
        jpub = peer.create_publisher(JointState, names.JOINT_STATES, qos.CONTROL_PUB)
        wpub = peer.create_publisher(WrenchStamped, names.WRENCH, qos.CONTROL_PUB)
        ex = SingleThreadedExecutor()
        ex.add_node(node)
        ex.add_node(peer)
        assert _spin_until(ex, lambda: jpub.get_subscription_count() > 0
                           and wpub.get_subscription_count() > 0
                           and peer.count_publishers(names.POSITION_COMMANDS) > 0)
        k = 0
        while not cmds:
            assert k < 200
            jpub.publish(js(["stage_joint"], [0.0], pos=[0.25], k=k))
            _spin_until(ex, lambda: False, timeout=0.01)
            wpub.publish(wrench_msg([3.0, 0.0, 0.0], stamp_ns=T0 + k * DT_NS))
            _spin_until(ex, lambda: bool(cmds), timeout=0.05)
            k += 1
        assert cmds[-1].data[0] == 0.25  # below F: exactly at the measured position
        for i in range(30):
            n0 = len(cmds)
            wpub.publish(wrench_msg([10.0, 0.0, 0.0], stamp_ns=T0 + (k + i) * DT_NS))
            assert _spin_until(ex, lambda: len(cmds) > n0)
        assert cmds[-1].data[0] > 0.25  # above F: moving in +x
    finally:
        peer.destroy_node()


def test_main_process_renders_and_stops_with_zero_effort(ros):
    env = dict(os.environ)
    proc = subprocess.Popen(
        [sys.executable, "-m", "fric_nodes.friction_renderer", "--ros-args",
         "--params-file", str(ROOT / "config/renderer_example.yaml"),
         "-p", "watchdog_timeout:=10.0"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    peer = rclpy.create_node("renderer_main_peer")
    try:
        reliable = QoSProfile(depth=50, reliability=ReliabilityPolicy.RELIABLE)
        cmds = []
        peer.create_subscription(Float64MultiArray, names.EFFORT_COMMANDS, cmds.append, reliable)
        pub = peer.create_publisher(JointState, names.JOINT_STATES, qos.CONTROL_PUB)
        ex = SingleThreadedExecutor()
        ex.add_node(peer)
        end = time.monotonic() + 15.0
        k = 0
        while not (cmds and cmds[-1].data[0] == -F) and time.monotonic() < end:
            pub.publish(js(["stage_joint"], [0.05], k=k))
            k += 1
            ex.spin_once(timeout_sec=0.01)
        assert cmds and cmds[-1].data[0] == -F, proc.poll()
        proc.send_signal(signal.SIGTERM)
        assert _spin_until(ex, lambda: cmds[-1].data[0] == 0.0, timeout=5.0)
        out, _ = proc.communicate(timeout=10)
        assert proc.returncode == 0, out
        assert "final zero effort" in out
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        peer.destroy_node()


def test_main_exits_nonzero_on_bad_parameters():
    r = subprocess.run([sys.executable, "-m", "fric_nodes.friction_renderer", "--ros-args",
                        "-p", "mode:=telepathy"], cwd=ROOT, capture_output=True, text=True,
                       timeout=30)
    assert r.returncode == 1 and "mode: 'telepathy' is not one of" in r.stderr


# ------------------------------------------------------------------ output_enabled (hand-over)
class _Sink:
    """Stands in for the command publisher: keeps a copy of every command published."""

    def __init__(self):
        self.sent = []

    def publish(self, msg):
        self.sent.append(list(msg.data))


def test_output_disabled_publishes_nothing_and_resumes_from_rest_impedance(make):
    """output_enabled false: no command at all (inputs, bad inputs, watchdog, shutdown), inputs
    still counted; true again: the element restarts from rest, so the first commands are those
    of a fresh model C; set atomically with a new law, that law from the first command on."""
    node = make(watchdog_timeout=0.05)
    sink = node._out = _Sink()
    ref = MasslessImpedance(K, B, Coulomb(F), DT)
    for k in range(50):  # sliding: -F
        node._on_joint_state(js(["stage_joint"], [0.05], k=k))
        assert sink.sent[-1] == [-ref.step(0.05)]
    assert sink.sent[-1] == [-F]
    assert node.set_parameters([Parameter("output_enabled", value=False)])[0].successful
    assert not node.output_enabled
    n = len(sink.sent)
    for k in range(50, 80):
        node._on_joint_state(js(["stage_joint"], [0.05], k=k))
    d = diag(node)[2]
    assert d["accepted inputs"] == "80" and d["output"].startswith("disabled")
    assert d["watchdog"] == "ok"  # inputs still watched
    node._on_joint_state(js(["stage_joint"], [math.nan], k=80))  # bad input: no safe output
    assert diag(node)[2]["rejected non_finite"] == "1"
    _, msg, _ = diag(node)  # a new period without problems
    assert msg == "output disabled"
    time.sleep(0.08)
    node._on_watchdog()  # trips (silence), publishes nothing
    node._on_watchdog()
    assert node.watchdog_tripped
    assert node.publish_stop() is False
    assert len(sink.sent) == n
    # enabled again, with a new law in the same atomic set: a fresh element of that law
    law = dict(Cp=1.5, Cn=1.2, bp=0.4, bn=0.6, Dp=1.8, Dn=-1.5, dv=0.05)
    res = node.set_parameters_atomically(
        [Parameter("stage_joint.law", value="asymmetric")]
        + [Parameter(f"stage_joint.{k}", value=v) for k, v in law.items()]
        + [Parameter("output_enabled", value=True)])
    assert res.successful, res.reason
    from fric_core.laws import AsymmetricFriction
    ref = MasslessImpedance(K, B, AsymmetricFriction(**law), DT)
    for k in range(100):
        v = 0.02 if k < 60 else -0.1
        node._on_joint_state(js(["stage_joint"], [v], k=k))  # after the trip: any stamp
        assert sink.sent[-1] == [-ref.step(v)]
    # sliding back beyond dv: the kinetic level Cn + bn |v| pushes the device forward
    assert sink.sent[-1][0] == pytest.approx(law["Cn"] + law["bn"] * 0.1, rel=1e-6)
    assert diag(node)[1] == "rendering"


def test_output_enabled_false_at_start_and_admittance_resumes_at_the_measured_position(make):
    node = make(mode="admittance", admittance_input="joint_effort", output_enabled=False,
                watchdog_timeout=30.0, **{"stage_joint.F": 6.0})
    sink = node._out = _Sink()
    for k in range(20):  # another controller moves the stage; the renderer only listens
        node._on_effort_state(js(["stage_joint"], [0.0], pos=[0.001 * k], eff=[9.0], k=k))
    assert sink.sent == [] and diag(node)[2]["output"].startswith("disabled")
    assert node.set_parameters([Parameter("output_enabled", value=True)])[0].successful
    ref = RigidAdmittance(2.0, Coulomb(6.0), DT)
    x = 0.05  # where the stage is when rendering resumes
    for k in range(20, 40):
        node._on_effort_state(js(["stage_joint"], [0.0], pos=[x if k == 20 else 0.0],
                                 eff=[9.0], k=k))
        x += ref.step(9.0) * DT
        assert sink.sent[-1] == [x]
    assert x > 0.05
