"""trajectory_tracker ``loops`` (issue 24, item 8): replaying a trajectory must not step the
setpoint at the seams.

The finding: ``loops:=40`` with the params file's sinusoid (config/arm_friction_planar_2link.yaml:
joint2 at 0.15 Hz over 10 s, 1.5 periods, from center − A = 0 to center + A = 1 rad) wrapped the
time with ``fmod``: a 1.0 rad setpoint step at every loop, which kp = 150 N m/rad turns into
150 N m against max_effort 30 N m: 1741 clipped commands. Now a trajectory whose end is not its
start gets a quintic return segment between plays, within the trajectory's own peak speed and
acceleration, for the sinusoid and a CSV alike; a periodic one is played back to back.

In-process (``on_state`` called with made-up states): the arm follows the setpoint one step late
(q, q̇ of the previous step), the way a stiff tracking loop does, so the command is the PD on one
step of motion plus the feed-forward and nothing else.
"""

from pathlib import Path

import numpy as np
import pytest
import yaml
from builtin_interfaces.msg import Time
from sensor_msgs.msg import JointState
from std_msgs.msg import Header

from fric_nodes.trajectory_tracker import TrajectoryTracker
from ros_support import diag, made_nodes

ROOT = Path(__file__).resolve().parents[2]
PARAMS = yaml.safe_load((ROOT / "config/arm_friction_planar_2link.yaml").read_text())[
    "trajectory_tracker"]["ros__parameters"]
DT = 0.004   # state period [s] (the params file's sim runs at 500 Hz; 250 Hz keeps this fast)
LOOPS = 3    # two seams
CENTER, AMP, FREQ, LENGTH = (np.array(PARAMS["sine_center"]), np.array(PARAMS["sine_amplitude"]),
                             np.array(PARAMS["sine_frequency"]), PARAMS["sine_duration"])
W = 2 * np.pi * FREQ
V_PEAK = AMP * W  # the sinusoid's peak speed per joint: 0.314, 0.471 rad/s


@pytest.fixture
def make(ros):
    yield from made_nodes(TrajectoryTracker)


def _state(t, q, v, joints=("joint1", "joint2")):
    ns = 1_000_000_000 + round(t * 1e9)
    return JointState(name=list(joints), position=list(q), velocity=list(v),
                      header=Header(stamp=Time(sec=ns // 1_000_000_000,
                                               nanosec=ns % 1_000_000_000)))


def _follow(node, seconds):
    """Feed states every DT for ``seconds`` with the arm one step behind the setpoint; returns
    the setpoints (k, n), the phases and the commands."""
    q, v = node.trajectory.start(), np.zeros(node.n)  # the arm starts where the trajectory does
    qd, phases, cmds = [], [], []
    for k in range(int(round(seconds / DT)) + 1):
        node.on_state(_state(k * DT, q, v, node.joints))
        qd.append(node.q_d.copy())
        phases.append(node.phase)
        cmds.append(node.command.copy())
        q, v = node.q_d.copy(), node.v_d.copy()
    return np.array(qd), phases, np.array(cmds)


def _tracker(make, **over):
    params = {**PARAMS, "start_delay": 0.0, "approach_time": 0.2, "hold_time": 0.1,
              "loops": LOOPS, "wait_for_subscribers": 0, "max_state_gap": 10.0, **over}
    if "trajectory_file" in over:  # the file wins over the sinusoid: leave it out
        params = {k: x for k, x in params.items() if not k.startswith("sine_")}
    return make(**params)


def _csv_of_the_sinusoid(path):
    """The params file's sinusoid as a CSV with velocity and acceleration columns (the format
    fric excite writes), 10 ms apart."""
    t = np.round(np.arange(0.0, LENGTH + 1e-9, 0.01), 10)
    q = CENTER - AMP * np.cos(np.outer(t, W))
    v = AMP * W * np.sin(np.outer(t, W))
    a = AMP * W * W * np.cos(np.outer(t, W))
    cols = ["t"] + [f"joint{j}.{k}" for k in ("position", "velocity", "acceleration")
                    for j in (1, 2)]
    rows = np.column_stack([t, q, v, a])
    path.write_text(",".join(cols) + "\n" + "".join(",".join(repr(float(x)) for x in r) + "\n"
                                                    for r in rows))
    return path


@pytest.mark.parametrize("source", ["sinusoid", "csv"])
def test_loops_of_a_sinusoid_over_one_and_a_half_periods_never_step_the_setpoint(
        make, source, tmp_path):
    over = {}
    if source == "csv":
        over = {"trajectory_file": str(_csv_of_the_sinusoid(tmp_path / "sine.csv"))}
    node = _tracker(make, **over)
    looped = node.trajectory
    assert not looped.continuous and looped.return_time > 0.0, looped.describe()
    # the ideal return of joint2 is the other half period of its cosine, 1/(2 f) = 3.33 s at
    # exactly its peak speed and acceleration: the quintic needs a little longer
    assert 1 / (2 * FREQ[1]) <= looped.return_time <= 1.1 / (2 * FREQ[1]), looped.return_time
    total = 0.2 + LOOPS * LENGTH + (LOOPS - 1) * looped.return_time
    assert looped.duration == pytest.approx(LOOPS * LENGTH + (LOOPS - 1) * looped.return_time)
    qd, phases, cmds = _follow(node, total + 0.1)
    play = np.array([p == "trajectory" for p in phases])
    assert play.sum() * DT == pytest.approx(total - 0.2, abs=2 * DT)
    # continuity: between two states the setpoint moves at most the trajectory's peak speed
    # times the step (1 % for the interpolation of the CSV and the return's grid search);
    # the fmod wrap stepped joint2 by 2A = 1.0 rad, 530 times the bound
    steps = np.abs(np.diff(qd[play], axis=0))
    assert (steps <= V_PEAK * DT * 1.01).all(), steps.max(axis=0) / (V_PEAK * DT)
    # one step of motion under kp = [400, 150] is at most 0.5 / 0.28 N m, far inside max_effort
    assert node._clipped == 0 and diag(node)[2]["commands clipped"] == "0"
    assert np.all(np.abs(cmds) < np.array(PARAMS["max_effort"]))


def test_a_periodic_csv_is_played_back_to_back(make, tmp_path):
    # a whole period of q = 0.2 (1 - cos(2 pi t / T)): its end meets its start in position and
    # velocity, so no return segment: the plays follow each other and last exactly loops x T
    period = 2.0
    t = np.round(np.arange(0.0, period + 1e-9, 0.01), 10)
    w = 2 * np.pi / period
    f = tmp_path / "periodic.csv"
    f.write_text("t,joint1,joint1.velocity,joint1.acceleration\n" + "".join(
        f"{x:.17g},{0.2 * (1 - np.cos(w * x)):.17g},{0.2 * w * np.sin(w * x):.17g},"
        f"{0.2 * w * w * np.cos(w * x):.17g}\n" for x in t))
    node = _tracker(make, trajectory_file=str(f), joints=["joint1"], kp=[400.0], kd=[80.0],
                    max_effort=[60.0], rotor_inertia=[0.5], feed_forward="none")
    looped = node.trajectory
    assert looped.continuous and looped.return_time == 0.0
    assert looped.duration == pytest.approx(LOOPS * period)
    assert "back to back" in looped.describe()
    qd, phases, _ = _follow(node, 0.2 + LOOPS * period)
    play = np.array([p == "trajectory" for p in phases])
    steps = np.abs(np.diff(qd[play, 0]))
    assert steps.max() <= 0.2 * w * DT * 1.01
    assert node._clipped == 0
