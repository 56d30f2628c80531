"""friction_compensator fails safe (issue 24, items 3, 5, 6, 7 and 13), in-process with the
callbacks called directly (the outputs go to a sink), as the faults were found from outside:

* item 5: a joint with Cp = Cn = 0 (``fric identify`` can write it) made the node publish NaN:
  every law the file may hold gives finite outputs; a non-finite output that something inside
  would still produce is replaced by 0, counted and logged once;
* item 6: a second, stale joint_states publisher interleaved with a joint at rest made the
  output alternate −6.76/+5.95 N·m (Cp 1.5), 993 sign changes per second; states delivered in
  swapped pairs swung it 0.68↔3.08 N·m: stamps not after the last accepted one are rejected, and
  two publishers of the compensated joints are reported (log once + diagnostics);
* item 7: with the default parameters a dead controller left the compensation alone pushing:
  the default is now zero effort after the watchdog, and it stays zero;
* item 13: ``rejected non_finite`` appeared twice in the diagnostics (states and commands);
* item 3: a gear file of ``fric identify --dynamics identify`` (only eta_product) lost its gear
  part silently: the node says what it renders and what it leaves out (log + diagnostics).
"""

import time
from pathlib import Path

import numpy as np
import pytest
import rclpy
import yaml
from diagnostic_msgs.msg import DiagnosticStatus
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from fric_core.compensation import sign_changes
from fric_interfaces import names, qos
from fric_interfaces.conversions import joint_state_msg
from fric_nodes.friction_compensator import SPECS, FrictionCompensatorNode

ROOT = Path(__file__).resolve().parents[2]
T0 = 1_700_000_000_000_000_000  # a wall-clock-like stamp [ns]
DT_NS = 1_000_000  # the compensator's default dt, 1 ms


class _Sink:
    """Stands in for the command publisher: (monotonic time, copy) of every command."""

    def __init__(self):
        self.sent = []

    def publish(self, msg):
        self.sent.append((time.monotonic(), list(msg.data)))

    def wait_for_all_acked(self, _d):
        return True

    @property
    def data(self):
        return [d for _, d in self.sent]


class _Log:
    """Records what a node logs, by severity."""

    def __init__(self):
        self.lines = {"info": [], "warning": [], "error": []}

    def info(self, msg, **_):
        self.lines["info"].append(msg)

    def warning(self, msg, **_):
        self.lines["warning"].append(msg)

    def error(self, msg, **_):
        self.lines["error"].append(msg)

    def debug(self, msg, **_):
        pass


@pytest.fixture
def make(ros, monkeypatch, tmp_path):
    """make(file_text, **params) -> (node, log): a compensator of the file's joints (all of
    them, file order) with its outputs in a sink and its log recorded."""
    nodes = []

    def _make(text, **params):
        path = tmp_path / f"jf{len(nodes)}.yaml"
        path.write_text(text)
        params.setdefault("joints", list(yaml.safe_load(text)["joints"]))
        log = _Log()
        monkeypatch.setattr(FrictionCompensatorNode, "get_logger", lambda self: log)
        node = FrictionCompensatorNode(parameter_overrides=[
            Parameter(k, value=v) for k, v in {"joint_friction": str(path), **params}.items()])
        node._out = _Sink()
        nodes.append(node)
        return node, log

    yield _make
    for n in nodes:
        n.destroy_node()


def _cmd(*vals):
    return Float64MultiArray(data=[float(v) for v in vals])


def _diag(node):
    st = node.diagnostic_status()
    return st.level, st.message, [(kv.key, kv.value) for kv in st.values]


# ------------------------------------------------------------------ item 5: finite outputs
FILES = {
    "zero levels": "joints:\n  a: {Cp: 0.0, Cn: 0.0, bp: 0.5, bn: 0.5}\n"
                   "  b: {Cp: 0.0, Cn: 0.0, bp: 0.0, bn: 0.0}\n",
    "curve, zero levels at 0": (
        "model: curve\njoints:\n  a: {Cp: 0.0, Cn: 0.0, bp: 0.5, bn: 0.5, law: curve,\n"
        "      curve: {positive: {v: [0.0, 0.1, 1.0], f: [0.0, 0.05, 0.5]},\n"
        "              negative: {v: [0.0, 1.0], f: [0.0, 0.5]}}}\n"
        "  b: {Cp: 0.0, Cn: 0.0, bp: 0.0, bn: 0.0, law: curve,\n"
        "      curve: {positive: {v: [0.0, 1.0], f: [0.0, 0.0]},\n"
        "              negative: {v: [0.0, 1.0], f: [0.0, 0.0]}}}\n"),
    "offsets, zero levels": "joints:\n  a: {Cp: 0.0, Cn: 0.0, bp: 0.5, bn: 0.5, offset: 0.3}\n"
                            "  b: {Cp: -0.4, Cn: 0.4, bp: 0.0, bn: 0.0}\n",
    "gear, zero levels": "model: gear\njoints:\n"
                         "  a: {Cp: 0.0, Cn: 0.0, bp: 0.5, bn: 0.5, eta_f: 0.5, eta_b: 0.3}\n"
                         "  b: {Cp: 0.0, Cn: 0.0, bp: 0.0, bn: 0.0, eta_f: 1.0, eta_b: -2.0}\n",
}


@pytest.mark.parametrize("law", list(FILES))
def test_every_output_is_finite_for_zero_levels(make, law):
    """Joint a (levels 0 at rest, bp = bn = 0.5) moves forward at 0.3 rad/s, reverses, rests,
    jumps; joint b has no friction at all; commands up to max_command. Every output is finite;
    sliding forward a's compensation is its law's τ_tot(0.3) (0.15 N·m for the line, the curve's
    0.05 + (0.45/0.9)·0.2 = 0.15 too, plus the offset) — the node renders what the file says,
    not NaN (before the fix K = 0, Z = inf: 592 of 593 outputs NaN)."""
    node, _ = make(FILES[law], publish_on="joint_states", watchdog_timeout=30.0,
                   max_effort=50.0)
    q = np.zeros(2)
    k = 0
    out = []

    def state(v_a, cmd=(0.0, 0.0)):
        nonlocal k
        q[0] += v_a * 1e-3
        node._on_command(_cmd(*cmd))
        node._on_joint_state(joint_state_msg(["a", "b"], list(q), stamp_ns=T0 + k * DT_NS))
        k += 1
        out.append(node._out.data[-1])

    for _ in range(300):
        state(0.3)
    expected = {"zero levels": 0.15, "curve, zero levels at 0": 0.15,
                "offsets, zero levels": 0.15 + 0.3, "gear, zero levels": 0.15}[law]
    assert out[-1][0] == pytest.approx(expected, rel=1e-6)
    for v in [-0.3] * 300 + [0.0] * 200 + [50.0] * 5 + [-50.0] * 5:  # reverse, rest, jumps
        state(v)
    for c in (1e4, -1e4, 0.0):  # commands at max_command (gear: levels in the 1e4)
        for _ in range(100):
            state(0.3, (c, -c))
    arr = np.array(out)
    assert np.isfinite(arr).all(), np.argwhere(~np.isfinite(arr))[:5]
    assert np.abs(arr).max() <= 50.0  # saturated at max_effort, never beyond
    kv = dict(_diag(node)[2])
    assert kv["non-finite outputs (replaced by 0)"] == "0"  # the law itself is finite


def test_a_non_finite_output_is_replaced_by_zero_counted_and_logged_once(make):
    """Something inside produces NaN (here: the element's constants of K = 0 forced, the old
    Cp = Cn = 0 bug): the node publishes 0 on that joint instead (the other joint's output
    unchanged), counts each such output, says it once (an error line), and /diagnostics is
    ERROR while it happens."""
    node, log = make("joints:\n  a: {Cp: 1.0, Cn: 0.8, bp: 0.2, bn: 0.3}\n"
                     "  b: {Cp: 0.5, Cn: 0.6, bp: 0.0, bn: 0.1}\n",
                     publish_on="joint_states", watchdog_timeout=30.0)
    comp = node.compensator
    with np.errstate(divide="ignore", invalid="ignore"):
        comp._set_constants(np.array([0.0, comp.K[1]]))  # joint a: Z = inf, K/(B + T K) NaN
        node._on_command(_cmd(2.0, -1.0))
        for k in range(50):  # both joints moving forward at 0.2 rad/s
            p = 0.2 * k * 1e-3
            node._on_joint_state(joint_state_msg(["a", "b"], [p, p], stamp_ns=T0 + k * DT_NS))
    sent = np.array(node._out.data)
    assert np.isfinite(sent).all()
    assert (sent[:, 0] == 0.0).all()  # joint a: 0 instead of NaN
    assert sent[-1][1] == pytest.approx(-1.0 + 0.5, rel=1e-9)  # joint b: command + Cp
    errors = [m for m in log.lines["error"] if "not finite" in m]
    assert len(errors) == 1 and "['a']" in errors[0], log.lines["error"]
    level, message, kv = _diag(node)
    assert dict(kv)["non-finite outputs (replaced by 0)"] == str(len(sent)) == "50"
    assert level == DiagnosticStatus.ERROR and "not finite" in message


# ------------------------------------------------------------------ item 6: stamps
CP15 = "joints:\n  a: {Cp: 1.5, Cn: 1.2, bp: 0.5, bn: 0.5}\n"


@pytest.mark.parametrize("stale", ["lagging stream", "one old message repeated",
                                   "lagging stream, its message first"])
def test_a_stale_publisher_interleaved_with_a_joint_at_rest_does_not_chatter(make, stale):
    """The joint rests at 0.2 rad (live publisher: wall-clock stamps 1 ms apart); a stale
    publisher interleaves where the joint was, 0.35 rad: a stream lagging 0.5 s, one old message
    repeated, or the lagging stream with the first message of all. Each stale message is
    rejected for its stamp (not after the live one's); the output stays at the rest value (the
    command, 0 compensation: the joint does not move) — no sign change in 2000 messages. When
    the stale message came first, the live stream re-anchors (its stamp is near the receive
    time, the stale one's is not) and the one jump back to 0.2 rad decays without a sign change.
    Before: ±(Cp + bp·10 rad/s) every message (each jump is motion at max_velocity)."""
    node, _ = make(CP15, publish_on="joint_states", watchdog_timeout=0.1)
    stale_first = stale.endswith("first")
    t0 = time.time_ns()  # live stamps: the wall clock (what the node compares them with)
    for k in range(1000):
        t_stale = t0 - 500 * DT_NS + (0 if stale == "one old message repeated" else k * DT_NS)
        msgs = [joint_state_msg(["a"], [0.2], stamp_ns=t0 + k * DT_NS),
                joint_state_msg(["a"], [0.35], stamp_ns=t_stale)]
        node._on_command(_cmd(0.0))  # the controller (fresh commands), output 0 at rest
        for m in msgs[::-1] if stale_first else msgs:
            node._on_joint_state(m)
    out = np.array(node._out.data)[:, 0]
    kv = dict(_diag(node)[2])
    if stale_first:
        assert len(out) == 1001 and kv["stamp re-anchors"] == "1"
        assert out[0] == 0.0 and out[1] < -1.0  # the one jump back (0.35 -> 0.2 rad)
        assert sign_changes(out) == 0 and np.abs(out[-500:]).max() < 1e-12  # relaxed to rest
        assert kv["rejected joint_states stamp_not_increasing"] == "999"
    else:
        assert len(out) == 1000  # one output per live message, none for the stale ones
        assert sign_changes(out) == 0 and np.abs(out).max() == 0.0
        assert kv["rejected joint_states stamp_not_increasing"] == "1000"


def test_states_delivered_in_swapped_pairs_give_a_steady_output(make):
    """A joint sliding forward at 0.3 rad/s, its states delivered in swapped pairs (stamps
    2, 1, 4, 3, ...): the late one of each pair is rejected, the element steps on every second
    state (a step of 2 cycles' travel: 2v, the stamps count the lost cycle), and the output is
    steady at Cp + bp·2v — no swing (before: 0.68 <-> 3.08 N·m with these levels)."""
    node, _ = make(CP15, publish_on="joint_states", watchdog_timeout=0.1)
    v = 0.3
    t0 = time.time_ns()
    for k in range(0, 600, 2):
        node._on_command(_cmd(0.0))  # fresh commands
        for j in (k + 1, k):  # swapped
            node._on_joint_state(joint_state_msg(["a"], [v * j * 1e-3],
                                                 stamp_ns=t0 + j * DT_NS))
    out = np.array(node._out.data)[:, 0]
    assert len(out) == 300
    tail = out[50:]
    # sliding forward: the element's kinetic branch at the measured 2v; no swing
    assert np.ptp(tail) < 1e-9 and tail[-1] == pytest.approx(1.5 + 0.5 * 2 * v, rel=1e-6)
    kv = dict(_diag(node)[2])
    assert kv["rejected joint_states stamp_not_increasing"] == "300"
    assert kv["lost joint_states (stamps)"] == "299"


def test_two_publishers_of_the_same_joints_are_reported_once(make):
    """Two publishers on joint_states (a peer node in this process), both with the compensated
    joint, interleaved (one stale): /diagnostics is ERROR naming them, with the publisher count,
    and the error is logged once over several periods. A second publisher of other joints (a
    gripper) is not reported."""
    node, log = make(CP15, publish_on="joint_states", watchdog_timeout=0.1)
    peer = rclpy.create_node("two_publishers_peer")
    pubs = [peer.create_publisher(JointState, names.JOINT_STATES, qos.CONTROL_PUB)
            for _ in range(2)]
    ex = SingleThreadedExecutor()
    ex.add_node(peer)
    try:
        end = time.monotonic() + 10.0
        while (node.count_publishers("/joint_states") < 2
               or not all(p.get_subscription_count() for p in pubs)) and time.monotonic() < end:
            ex.spin_once(timeout_sec=0.01)
        assert node.count_publishers("/joint_states") == 2
        _diag(node)  # a period without input: nothing to report
        t0 = time.time_ns()
        for other_joints in (False, True):
            for k in range(200, 300) if other_joints else range(100):
                node._on_joint_state(joint_state_msg(["a"], [0.2], stamp_ns=t0 + k * DT_NS))
                node._on_joint_state(
                    joint_state_msg(["finger"], [0.01], stamp_ns=t0 + k * DT_NS) if other_joints
                    else joint_state_msg(["a"], [0.35], stamp_ns=t0 - 500 * DT_NS))
            level, message, kv = _diag(node)
            same = "2 publishers on /joint_states carry the compensated joints" in message
            if other_joints:
                assert not same, message
            else:
                assert same and "interleaved stamps" in message and level == \
                    DiagnosticStatus.ERROR, message
                for k in range(100, 110):  # another period, the same problem: no new line
                    node._on_joint_state(joint_state_msg(["a"], [0.35],
                                                         stamp_ns=t0 - 500 * DT_NS))
                    node._on_joint_state(joint_state_msg(["a"], [0.2],
                                                         stamp_ns=t0 + k * DT_NS))
                _diag(node)
            assert dict(kv)["/joint_states publishers"] == "2"
        said = [m for m in log.lines["error"] if "publishers on /joint_states" in m]
        assert len(said) == 1 and "['a']" in said[0], log.lines["error"]
    finally:
        ex.remove_node(peer)
        peer.destroy_node()


# ------------------------------------------------------------------ item 7: dead controller
def test_default_dead_controller_zero_after_the_watchdog_and_it_stays_zero(make):
    """Default parameters (require_command, publish_on, watchdog_timeout 0.1 s): the controller
    commands while the joint slides at 0.3 rad/s, then dies while the joint keeps moving (the
    arm coasts). Within the watchdog after the last command the output is command + friction;
    then exactly one zero effort (no earlier than watchdog_timeout after the last command, no
    later than that plus 60 ms of scheduling on a loaded machine) and nothing else for 0.4 s.
    Before: the compensation alone, ~Cp + bp·v = 1.06 N·m, pushing on every joint_states."""
    assert next(s for s in SPECS if s.name == "require_command").default is True
    node, log = make("joints:\n  a: {Cp: 1.0, Cn: 0.8, bp: 0.2, bn: 0.3}\n")
    assert any("without fresh commands: zero effort (require_command)" in m
               for m in log.lines["info"]), log.lines["info"]
    k = 0

    def state():
        nonlocal k
        node._on_joint_state(joint_state_msg(["a"], [0.3 * k * 1e-3], stamp_ns=T0 + k * DT_NS))
        k += 1

    for _ in range(200):
        state()
        node._on_command(_cmd(2.0))
    t_last_cmd = time.monotonic()
    n_cmd = len(node._out.sent)
    assert node._out.data[-1] == pytest.approx([2.0 + 1.0 + 0.2 * 0.3], rel=1e-6)
    end = t_last_cmd + 0.5
    while time.monotonic() < end:  # the joint keeps moving, nobody commands
        state()
        node._on_watchdog()
        time.sleep(0.001)
    after = node._out.sent[n_cmd:]
    assert [d for _, d in after] == [[0.0]], after[:5]
    assert 0.1 <= after[0][0] - t_last_cmd <= 0.16
    level, message, kv = _diag(node)
    assert dict(kv)["watchdog trips (commands)"] == "1" and level == DiagnosticStatus.ERROR


def test_hand_guiding_then_require_command_switched_on_live_zeroes_once(make):
    """require_command false (hand guiding, no controller): the compensation alone is published;
    switched to true live (the safe mode), the next watchdog publishes zero effort once, then
    nothing — the last hand-guiding output is not left standing (a forward_command_controller
    holds the last command). Before: nothing at all, the last compensation stayed."""
    node, _ = make("joints:\n  a: {Cp: 1.0, Cn: 0.8, bp: 0.2, bn: 0.3}\n",
                   publish_on="joint_states", require_command=False)
    for k in range(100):
        node._on_joint_state(joint_state_msg(["a"], [0.3 * k * 1e-3], stamp_ns=T0 + k * DT_NS))
    assert node._out.data[-1] == pytest.approx([1.0 + 0.2 * 0.3], rel=1e-6)
    n0 = len(node._out.sent)
    assert node.set_parameters([Parameter("require_command", value=True)])[0].successful
    node._on_watchdog()
    for k in range(100, 200):
        node._on_joint_state(joint_state_msg(["a"], [0.3 * k * 1e-3], stamp_ns=T0 + k * DT_NS))
        node._on_watchdog()
    assert node._out.data[n0:] == [[0.0]]


def test_the_shipped_parameter_file_is_the_safe_default():
    """config/friction_compensator.yaml (what users copy) keeps require_command true; false is
    the documented hand-guiding option."""
    doc = yaml.safe_load((ROOT / "config/friction_compensator.yaml").read_text())
    assert doc["friction_compensator"]["ros__parameters"]["require_command"] is True


# ------------------------------------------------------------------ item 13: unique keys
def test_diagnostics_keys_are_unique(make):
    """Every rejection reason of joint_states and of commands at once (the same reasons on
    both: non_finite, implausible), gear and curve joints: no key appears twice."""
    node, _ = make("model: gear\njoints:\n"
                   "  a: {Cp: 1.0, Cn: 0.8, bp: 0.2, bn: 0.3, eta_f: 0.8, eta_b: 0.6}\n"
                   "  b: {Cp: 0.5, Cn: 0.6, bp: 0.0, bn: 0.1, eta_product: 0.4}\n",
                   publish_on="joint_states")
    js = lambda p, k: joint_state_msg(["a", "b"], p, stamp_ns=T0 + k * DT_NS)  # noqa: E731
    node._on_joint_state(js([0.0, 0.0], 10))
    node._on_joint_state(js([float("nan"), 0.0], 11))
    node._on_joint_state(js([0.0, 5000.0], 12))
    node._on_joint_state(joint_state_msg(["a"], [0.0], stamp_ns=T0 + 13 * DT_NS))
    node._on_joint_state(js([0.0, 0.0], 5))  # stamp before the last accepted
    for data in ([1.0], [1.0, float("nan")], [1.0, 1e5]):
        node._on_command(_cmd(*data))
    _, _, kv = _diag(node)
    keys = [k for k, _ in kv]
    assert len(keys) == len(set(keys)), sorted(k for k in keys if keys.count(k) > 1)
    d = dict(kv)
    assert d["rejected joint_states non_finite"] == "1" == d["rejected commands non_finite"]
    assert d["rejected joint_states implausible"] == "1" == d["rejected commands implausible"]
    assert d["rejected joint_states stamp_not_increasing"] == "1"


# ------------------------------------------------------------------ item 3: what is used
IDENTIFY_GEAR = """model: gear
dynamics: identify
joints:
  j1: {Cp: 1.0, Cn: 0.8, bp: 0.2, bn: 0.3, eta_f: null, eta_b: null, eta_product: 0.45}
  j2: {Cp: 0.5, Cn: 0.6, bp: 0.0, bn: 0.1, offset: 0.1, eta_f: 0.8, eta_b: 0.6,
       determined: {bn: false}, reasons: {bn: "fitted below 0 (-0.07 +- 0.01), held at 0"}}
  j3: {Cp: 0.3, Cn: 0.25, bp: 0.2, bn: 0.2, law: curve,
       curve: {positive: {v: [0.0, 0.5], f: [0.3, 0.4]},
               negative: {v: [0.0, 0.5], f: [0.25, 0.35]}}}
"""


def test_what_is_rendered_and_left_out_is_said_once_and_in_diagnostics(make):
    """A file of fric identify --model gear --dynamics identify (j1: only eta_product), a joint
    with both efficiencies, an offset and an undetermined value (j2), a curve (j3): one start-up
    line (a warning: something is left out) says per joint the law, the offset, the gear part
    used or left out and why, and the undetermined values; /diagnostics has the same per joint.
    What it says is what it does: j1 moving forward with a command of 4 N·m gets 4 + Cp + bp·v
    (no 4/eta_f), j2 gets 4/eta_f + Cp + offset."""
    node, log = make(IDENTIFY_GEAR, publish_on="joint_states", watchdog_timeout=30.0)
    lines = [m for lv in log.lines.values() for m in lv if m.startswith("friction laws")]
    assert len(lines) == 1 and lines[0] in log.lines["warning"], log.lines
    line = lines[0]
    assert "j1: left out: the file has only eta_product 0.45" in line
    assert "--dynamics identify" in line and "--dynamics urdf" in line
    assert "j2: used: eta_f 0.8, eta_b 0.6, load torque from gear_load: command" in line
    assert "j3: none in the file" in line
    assert "j2 asymmetric" in line and "+ offset 0.1 N m" in line and "j3 curve" in line
    assert line.endswith("values the data did not determine (used as written, at their "
                         "bound): j2 bn")
    kv = dict(_diag(node)[2])
    assert kv["j1 gear efficiencies"].startswith("left out: the file has only eta_product 0.45")
    assert kv["j2 gear efficiencies"].startswith("used: eta_f 0.8, eta_b 0.6")
    assert kv["j3 gear efficiencies"] == "none in the file"
    assert [kv[f"j{i} law"] for i in (1, 2, 3)] == ["asymmetric", "asymmetric", "curve"]
    assert kv["j2 offset [N m]"] == "0.1" and kv["j1 offset [N m]"] == "0"
    assert kv["j2 undetermined values"] == "bn (bn: fitted below 0 (-0.07 +- 0.01), held at 0)"
    assert kv["j1 undetermined values"] == "none"
    node._on_command(_cmd(4.0, 4.0, 0.0))
    for k in range(300):  # all forward at 0.2 rad/s
        p = 0.2 * k * 1e-3
        node._on_joint_state(joint_state_msg(["j1", "j2", "j3"], [p, p, p],
                                             stamp_ns=T0 + k * DT_NS))
    out = node._out.data[-1]
    assert out[0] == pytest.approx(4.0 + 1.0 + 0.2 * 0.2, rel=1e-6)
    assert out[1] == pytest.approx(4.0 / 0.8 + 0.5 + 0.1, rel=1e-6)


def test_gear_load_none_says_the_gear_part_is_left_out(make):
    node, log = make(IDENTIFY_GEAR, gear_load="none")
    line = next(m for m in log.lines["warning"] if m.startswith("friction laws"))
    assert "j2: left out (gear_load: none): eta_f 0.8, eta_b 0.6 in the file" in line
    assert dict(_diag(node)[2])["j2 gear efficiencies"].startswith("left out (gear_load: none)")


def test_a_file_with_nothing_left_out_is_one_info_line(make):
    node, log = make("joints:\n  a: {Cp: 1.0, Cn: 0.8, bp: 0.2, bn: 0.3}\n")
    lines = [m for m in log.lines["info"] if m.startswith("friction laws")]
    assert len(lines) == 1 and not [m for m in log.lines["warning"]
                                    if m.startswith("friction laws")]
    assert "a: none in the file" in lines[0] and lines[0].endswith(": none")
