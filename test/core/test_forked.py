"""fric_core.forked: a call in a forked child gives what the call gives in the caller, raises
what it raises, and falls back to the caller when the child does not deliver; the fit that
splits its chunks between two processes gives the fit of one process.

The forking checks run in a fresh interpreter: pytest's own process may hold threads left by
earlier tests, and then (rightly) never forks.
"""

import os
import subprocess
import sys
import textwrap

from fric_core.forked import can_fork, fork_call

ENV = dict(os.environ, OPENBLAS_NUM_THREADS="1")
ENV.pop("FRIC_NO_FORK", None)


def _run(code: str) -> str:
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                       text=True, env=ENV, timeout=300)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_value_exception_and_a_dead_child():
    out = _run("""
        import os
        import numpy as np
        from fric_core.forked import can_fork, fork_call
        assert can_fork(), "a fresh interpreter has one thread"
        parent = os.getpid()
        call = fork_call(lambda: (os.getpid(), np.arange(5.0) ** 2))
        assert call.forked
        pid, arr = call.result()
        assert pid != parent  # computed in the child
        assert (arr == np.arange(5.0) ** 2).all()
        def bad():
            raise ValueError("joint j2: no samples with v > dv")
        try:
            fork_call(bad).result()
            raise SystemExit("no exception")
        except ValueError as e:
            assert "joint j2: no samples" in str(e)
        def dies_in_child():
            if os.getpid() != parent:
                os._exit(3)  # killed before it could send anything
            return "computed here"
        call = fork_call(dies_in_child)
        assert call.forked and call.result() == "computed here"
        print("ok")
    """)
    assert out.strip() == "ok"


def test_no_fork_when_disabled(monkeypatch):
    monkeypatch.setenv("FRIC_NO_FORK", "1")
    assert not can_fork()
    call = fork_call(lambda: os.getpid())
    assert not call.forked and call.result() == os.getpid()


def test_split_fit_is_the_single_process_fit():
    out = _run("""
        import os
        import numpy as np
        from fric_core import forked
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
        forked.ForkedCall.__init__ = counting
        split = fit_mod.fit_arm_friction(*args, law="curve", line=True)
        assert calls == [True], calls
        os.environ["FRIC_NO_FORK"] = "1"
        one = fit_mod.fit_arm_friction(*args, law="curve", line=True, knots=split.knots)
        assert calls == [True], calls  # not forked again
        worst = 0.0
        for a, b in ((split, one), (split.line, one.line)):
            for name in b.joints:
                for k, val in b.joints[name].items():
                    sd = b.std[name][k]
                    worst = max(worst, abs(a.joints[name][k] - val) / sd,
                                abs(a.std[name][k] - sd) / sd)
        print(worst)
    """)
    # the same sums in another order: rounding, far below what a std would notice
    assert float(out.strip()) <= 1e-9
