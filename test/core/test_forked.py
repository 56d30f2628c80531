"""fric_core.forked: a call in a forked child gives what the call gives in the caller, raises
what it raises, and falls back to the caller when the child does not deliver; the fit that
splits its chunks between two processes gives the fit of one process."""

import os

import numpy as np
import pytest

from fric_core import forked
from fric_core.forked import can_fork, fork_call



@pytest.fixture
def forking():
    """Skip, at run time, where this process cannot fork safely (another thread left by an
    earlier test in the same process, or no fork)."""
    if not can_fork():
        pytest.skip("this process cannot fork safely now (more than one thread, or no fork)")


def test_value_and_exception_come_back_from_the_child(forking):
    parent = os.getpid()
    call = fork_call(lambda: (os.getpid(), np.arange(5.0) ** 2))
    assert call.forked
    pid, arr = call.result()
    assert pid != parent  # computed in the child
    np.testing.assert_array_equal(arr, np.arange(5.0) ** 2)

    def bad():
        raise ValueError("joint j2: no samples with v > dv")

    with pytest.raises(ValueError, match="joint j2: no samples"):
        fork_call(bad).result()


def test_a_child_that_dies_is_replaced_by_the_call_in_the_caller(forking):
    parent = os.getpid()

    def dies_in_child():
        if os.getpid() != parent:
            os._exit(3)  # killed before it could send anything
        return "computed here"

    call = fork_call(dies_in_child)
    assert call.forked
    assert call.result() == "computed here"


def test_no_fork_when_disabled(monkeypatch):
    monkeypatch.setenv("FRIC_NO_FORK", "1")
    assert not can_fork()
    call = fork_call(lambda: os.getpid())
    assert not call.forked and call.result() == os.getpid()


def test_split_fit_is_the_single_process_fit(forking, monkeypatch):
    from fric_core.arm_identification import fit as fit_mod
    from fric_core.arm_identification.realistic import realistic_recording
    from fric_core.transmission.urdf_dynamics import UrdfDynamics

    dyn = UrdfDynamics("planar_2link")
    sim = realistic_recording(dyn, duration=30.0, rate=1000.0, current=False, seed=4,
                              jitter=0.0, repeat_fraction=0.0, skip_fraction=0.0,
                              velocity=False)
    t = sim.truth
    args = (t.q, t.v, t.a, np.asarray(sim.recording.effort), dyn)
    assert t.q.shape[0] >= fit_mod.SPLIT_ROWS
    calls = []
    real = forked.ForkedCall.__init__

    def counting(self, fn):
        real(self, fn)
        calls.append(self.forked)

    monkeypatch.setattr(forked.ForkedCall, "__init__", counting)
    split = fit_mod.fit_arm_friction(*args, law="curve", line=True)
    assert calls == [True]
    monkeypatch.setenv("FRIC_NO_FORK", "1")
    one = fit_mod.fit_arm_friction(*args, law="curve", line=True, knots=split.knots)
    for a, b in ((split, one), (split.line, one.line)):
        for name in b.joints:
            for k, val in b.joints[name].items():
                sd = b.std[name][k]
                assert abs(a.joints[name][k] - val) <= 1e-9 * sd, (name, k)
                assert abs(a.std[name][k] - sd) <= 1e-9 * sd, (name, k)
