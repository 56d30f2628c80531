"""``fit_arm_friction(urdf_too=True)`` and :mod:`fric_core.arm_identification.urdf_check`
(``fric identify --dynamics auto``, issue 23).

The URDF's fit derived from the identified fit's normal equations must be the fit
``dynamics="urdf"`` gives on the same rows: the same linear least-squares problem, reached by an
exact change of variables (θ = θ₀ + T θ_urdf), so the two agree to rounding (1e-9 of a std is
about a million times the 1e-15 of the arithmetic, and a million times below any difference a
std would notice).
"""

import math

import numpy as np
import pytest

from fric_core.arm_identification.fit import fit_arm_friction
from fric_core.arm_identification.realistic import realistic_recording
from fric_core.arm_identification.urdf_check import urdf_disagreement, with_urdf_bias
from fric_core.transmission.urdf_dynamics import UrdfDynamics


@pytest.fixture(scope="module")
def arm():
    dyn = UrdfDynamics("arm7")
    sim = realistic_recording(dyn, duration=12.0, rate=500.0, current=False, seed=2,
                              jitter=0.0, repeat_fraction=0.0, skip_fraction=0.0,
                              velocity=False)
    t = sim.truth
    noise = {"var_v": np.full(dyn.n, 1e-6), "var_a": np.full(dyn.n, 1e-2)}
    return dyn, (t.q, t.v, t.a, np.asarray(sim.recording.effort)), noise


def _same(x, y):
    for name in y.joints:
        for k, val in y.joints[name].items():
            if val is None:
                assert x.joints[name][k] is None
                continue
            sd = y.std[name][k]
            assert abs(x.joints[name][k] - val) <= 1e-9 * sd, (name, k)
            assert abs(x.std[name][k] - sd) <= 1e-9 * sd, (name, k)
    for name, a in (y.armature or {}).items():
        assert abs(x.armature[name] - a) <= 1e-9 * y.armature_std[name], name


@pytest.mark.parametrize("law,method", [("asymmetric", "ols"), ("asymmetric", "eiv"),
                                        ("curve", "eiv")])
def test_urdf_fit_from_the_identified_normal_equations_is_the_urdf_fit(arm, law, method):
    dyn, (q, v, a, tau), noise = arm
    line = law == "curve"
    f = fit_arm_friction(q, v, a, tau, dyn, dynamics="identify", method=method, law=law,
                         noise=noise, urdf_too=True, line=line)
    g = fit_arm_friction(q, v, a, tau, dyn, dynamics="urdf", method=method, law=law,
                         noise=noise, line=line, knots=f.knots)
    assert f.urdf is not None and f.urdf.dynamics == "urdf" and f.urdf.beta is None
    _same(f.urdf, g)
    if line:
        _same(f.urdf.line, g.line)
    # and the identified fit itself is the plain one
    h = fit_arm_friction(q, v, a, tau, dyn, dynamics="identify", method=method, law=law,
                         noise=noise, knots=f.knots)
    _same(f, h)
    assert h.urdf is None


def test_disagreement_and_the_bias_carried_by_the_urdf_fit(arm):
    dyn, (q, v, a, tau), noise = arm
    f = fit_arm_friction(q, v, a, tau, dyn, dynamics="identify", method="ols", noise=noise,
                         urdf_too=True)
    u = f.urdf
    z, joint, key = urdf_disagreement(f, u)
    # by hand: the largest |Δ| / std_identified
    zz = max((abs(u.joints[n][k] - f.joints[n][k]) / f.std[n][k], n, k)
             for n in f.joints for k in f.joints[n])
    assert (z, joint, key) == zz
    # the recording was simulated with this URDF: the difference is noise-sized
    assert z < 4.0
    only = urdf_disagreement(f, u, [dyn.joint_names[-1]])
    assert only[1] == dyn.joint_names[-1] and only[0] <= z
    b = with_urdf_bias(u, f)
    for n in u.joints:
        for k in u.joints[n]:
            d = u.joints[n][k] - f.joints[n][k]
            assert b.joints[n][k] == u.joints[n][k]
            assert b.std[n][k] == pytest.approx(math.hypot(u.std[n][k], d), rel=1e-12)
        # the covariance carries ΔΔᵀ: its diagonal is the new variance, a combination's std
        # includes the common bias (here (Cp + Cn)/2, where an offset-like bias adds up)
        cov = b.friction_cov[n]
        for i, k in enumerate(b.friction_keys):
            assert math.sqrt(cov[i, i]) == pytest.approx(b.std[n][k], rel=1e-9)
        dm = 0.5 * ((u.joints[n]["Cp"] - f.joints[n]["Cp"]) + (u.joints[n]["Cn"]
                                                               - f.joints[n]["Cn"]))
        w = {"Cp": 0.5, "Cn": 0.5}
        assert b.combination_std(n, w) == pytest.approx(
            math.hypot(u.combination_std(n, w), dm), rel=1e-9)
    # the input is untouched
    assert u.std == f.urdf.std and u.std is not b.std
