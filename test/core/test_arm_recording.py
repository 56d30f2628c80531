"""Arm recordings in and out (fric_core.arm_identification.recording): rosbag2 of
sensor_msgs/JointState (MCAP and sqlite3) and CSV; joints matched by name; bad input named."""

import numpy as np
import pytest

from fric_core.arm_identification.recording import (ArmRecording, read_arm_recording,
                                                    write_arm_bag, write_arm_csv)

NAMES = ("shoulder", "elbow", "wrist")
T0_NS = 1_700_000_000_123_456_789


def _rec(n_rows=600, with_v=True):
    rng = np.random.default_rng(0)
    t = np.arange(n_rows) * 1e-3
    q = np.column_stack([np.sin(2 * np.pi * 0.5 * t + k) for k in range(3)])
    v = rng.standard_normal(q.shape) if with_v else None
    effort = rng.standard_normal(q.shape)
    return ArmRecording(t=t, joint_names=NAMES, q=q, v=v, effort=effort, source="test")


def _write_messages(path, messages, topic="/joint_states", extra_topic=False):
    """A bag of hand-made JointState messages: (stamp_ns, names, position, velocity, effort)."""
    from rosbags.rosbag2 import StoragePlugin, Writer
    from rosbags.typesys import Stores, get_typestore

    ts = get_typestore(Stores.ROS2_KILTED)
    T = ts.types
    Time, Header, JS = (T["builtin_interfaces/msg/Time"], T["std_msgs/msg/Header"],
                        T["sensor_msgs/msg/JointState"])
    with Writer(path, version=9, storage_plugin=StoragePlugin.MCAP) as w:
        c = w.add_connection(topic, JS.__msgtype__, typestore=ts)
        if extra_topic:
            S = T["std_msgs/msg/String"]
            cs = w.add_connection("/chatter", S.__msgtype__, typestore=ts)
            w.write(cs, T0_NS, ts.serialize_cdr(S(data="hi"), S.__msgtype__))
        for k, (ns, names, pos, vel, eff) in enumerate(messages):
            msg = JS(header=Header(stamp=Time(sec=ns // 10 ** 9, nanosec=ns % 10 ** 9),
                                   frame_id=""), name=list(names),
                     position=np.asarray(pos, float), velocity=np.asarray(vel, float),
                     effort=np.asarray(eff, float))
            w.write(c, T0_NS + k, ts.serialize_cdr(msg, JS.__msgtype__))
    return path


@pytest.mark.parametrize("storage", ["mcap", "sqlite3"])
def test_bag_round_trip(tmp_path, storage):
    rec = _rec()
    bag = write_arm_bag(tmp_path / "run", rec, t0_ns=T0_NS, storage=storage)
    back = read_arm_recording(bag)
    assert back.joint_names == NAMES and back.warnings == []
    for name in ("q", "v", "effort"):  # float64 through CDR: bit-identical
        assert np.array_equal(getattr(back, name), getattr(rec, name)), name
    np.testing.assert_allclose(back.t, rec.t, atol=1e-9)  # through integer-ns stamps
    # the storage file stands for its directory; joints selected and reordered by name
    file = next(p for p in bag.iterdir() if p.suffix in (".mcap", ".db3"))
    sub = read_arm_recording(file, topic="/joint_states", joints="wrist,shoulder")
    assert sub.joint_names == ("wrist", "shoulder")
    assert np.array_equal(sub.effort, rec.effort[:, [2, 0]])


def test_csv_round_trip_is_bit_identical(tmp_path):
    for rec in (_rec(), _rec(with_v=False)):
        write_arm_csv(tmp_path / "r.csv", rec)
        back = read_arm_recording(tmp_path / "r.csv")
        assert back.joint_names == NAMES
        assert np.array_equal(back.t, rec.t) and np.array_equal(back.q, rec.q)
        assert np.array_equal(back.effort, rec.effort)
        assert (back.v is None) == (rec.v is None)
        if rec.v is not None:
            assert np.array_equal(back.v, rec.v)
    head = (tmp_path / "r.csv").read_text().splitlines()
    assert head[0].startswith("#")
    assert head[2] == "t,shoulder.position,shoulder.effort,elbow.position,elbow.effort," \
                      "wrist.position,wrist.effort"


def test_joints_matched_by_name_whatever_the_order(tmp_path):
    rng = np.random.default_rng(1)
    q = rng.standard_normal((40, 3))
    msgs = []
    for k in range(40):
        order = rng.permutation(3)
        names = [NAMES[i] for i in order]
        if k == 7:  # one message without the elbow: that row is dropped and counted
            keep = [i for i in range(3) if NAMES[order[i]] != "elbow"]
            order, names = order[keep], [names[i] for i in keep]
        msgs.append((T0_NS + k * 1_000_000, names, q[k, order], q[k, order] * 2,
                     q[k, order] * 3))
    rec = read_arm_recording(_write_messages(tmp_path / "bag", msgs))
    rows = [k for k in range(40) if k != 7]
    assert np.array_equal(rec.q, q[rows]) and np.array_equal(rec.effort, 3 * q[rows])
    assert np.array_equal(rec.v, 2 * q[rows])
    assert any("1 of 40 rows" in w for w in rec.warnings)
    assert rec.t[7] == pytest.approx(8e-3)  # the gap stays in the stamps for segments()


def test_two_publishers_with_the_same_stamps_merge(tmp_path):
    msgs = []
    for k in range(30):
        ns = T0_NS + k * 1_000_000
        msgs.append((ns, ["shoulder"], [k], [], [10 + k]))
        msgs.append((ns, ["elbow", "wrist"], [-k, 2 * k], [], [-10, 20]))
    rec = read_arm_recording(_write_messages(tmp_path / "bag", msgs), joints=list(NAMES))
    assert rec.q.shape == (30, 3) and rec.v is None
    np.testing.assert_array_equal(rec.q[:, 1], -np.arange(30))
    assert any("derived from the positions" in w for w in rec.warnings)


def test_bad_input_names_the_problem(tmp_path):
    bag = _write_messages(tmp_path / "two", [(T0_NS + k * 10 ** 6, NAMES, [0, 0, 0], [0, 0, 0],
                                              [0, 0, 0]) for k in range(30)],
                          topic="/arm/joint_states", extra_topic=True)
    with pytest.raises(ValueError, match=r"topic 'joint_states' is not in the bag; it has: "
                                         r"/arm/joint_states \(sensor_msgs/msg/JointState\), "
                                         r"/chatter \(std_msgs/msg/String\)"):
        read_arm_recording(bag)
    with pytest.raises(ValueError, match="has type std_msgs/msg/String"):
        read_arm_recording(bag, topic="chatter")
    with pytest.raises(ValueError, match=r"joint\(s\) \['hand'\] not in the recording; it has "
                                         r"\['shoulder', 'elbow', 'wrist'\]"):
        read_arm_recording(bag, topic="/arm/joint_states", joints=["elbow", "hand"])
    no_eff = _write_messages(tmp_path / "noeff", [(T0_NS + k * 10 ** 6, NAMES, [0, 0, 0],
                                                   [0, 0, 0], []) for k in range(30)])
    with pytest.raises(ValueError, match="have no effort"):
        read_arm_recording(no_eff)
    with pytest.raises(ValueError, match="recording not found"):
        read_arm_recording(tmp_path / "absent")
    (tmp_path / "x.txt").write_text("hello")
    with pytest.raises(ValueError, match="not a recording"):
        read_arm_recording(tmp_path / "x.txt")
    with pytest.raises(ValueError, match="not a rosbag2 bag"):
        read_arm_recording(tmp_path)
    short = _write_messages(tmp_path / "short", [(T0_NS + k * 10 ** 6, NAMES, [k, k, k],
                                                  [0, 0, 0], [0, 0, 0]) for k in range(5)])
    with pytest.raises(ValueError, match="recording too short: 5 complete rows"):
        read_arm_recording(short)


def test_csv_nan_rows_dropped_and_counted(tmp_path):
    rec = _rec(200)
    write_arm_csv(tmp_path / "r.csv", rec)
    lines = (tmp_path / "r.csv").read_text().splitlines()
    for k in (10, 11, 50):  # data rows 7, 8, 47 (3 comment/header lines first)
        cells = lines[k].split(",")
        cells[2] = "nan" if k != 11 else ""
        lines[k] = ",".join(cells)
    (tmp_path / "r.csv").write_text("\n".join(lines) + "\n")
    back = read_arm_recording(tmp_path / "r.csv")
    assert len(back) == 197 and any("3 of 200 rows" in w for w in back.warnings)
    prepared = back.prepare(cutoff_hz=50.0)  # the gaps are segments for the filter
    assert len(prepared.segments) >= 1
    # all-NaN and unreadable files
    (tmp_path / "nan.csv").write_text("t,a.position,a.effort\n" + "nan,nan,nan\n" * 30)
    with pytest.raises(ValueError, match="every row has a missing"):
        read_arm_recording(tmp_path / "nan.csv")
    (tmp_path / "bad.csv").write_text("t,a.position,a.effort\n0,1,x\n")
    with pytest.raises(ValueError, match=r"line 2, column 'a.effort': 'x' is not a number"):
        read_arm_recording(tmp_path / "bad.csv")
    (tmp_path / "noeff.csv").write_text("t,a.position,a.velocity\n0,1,2\n")
    with pytest.raises(ValueError, match=r"no 'effort' column for joint\(s\) \['a'\]"):
        read_arm_recording(tmp_path / "noeff.csv")


def test_zero_stamps_use_receive_times_and_unsynchronised_publishers_are_named(tmp_path):
    msgs = [(0, NAMES, [k, k, k], [], [1, 2, 3]) for k in range(30)]
    rec = read_arm_recording(_write_messages(tmp_path / "zero", msgs))
    # _write_messages logs message k at T0_NS + k ns
    np.testing.assert_allclose(rec.t, np.arange(30) * 1e-9, atol=1e-12)
    assert any("receive times" in w for w in rec.warnings)
    split = []
    for k in range(30):
        split.append((T0_NS + 2 * k * 10 ** 6, ["shoulder"], [k], [], [1]))
        split.append((T0_NS + (2 * k + 1) * 10 ** 6, ["elbow", "wrist"], [k, k], [], [2, 3]))
    with pytest.raises(ValueError, match="separate messages with different stamps"):
        read_arm_recording(_write_messages(tmp_path / "split", split), joints=list(NAMES))
