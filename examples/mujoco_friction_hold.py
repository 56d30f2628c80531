"""MuJoCo joint friction held below breakaway: frictionloss, noslip, springyield, FrictionStepper.

A 1-DOF hinge (a 3 kg, 1 m bar about a vertical axis, armature 0.05 kg m², friction C = 2 N m
under a constant torque) and the project's 7-joint arm (``urdf/arm7.urdf`` compiled by MuJoCo,
at a pose where gravity loads the shoulder, elbow and wrist, plus constant torques on the other
joints) are each held by friction at 50 % and 90 % of breakaway for 10 s (``--quick``: 2 s;
the friction levels fixed, the load scaled: a torque cancelling gravity plus 50 % or 90 % of C),
h = 1 ms, Euler, with

* MuJoCo's ``frictionloss`` = C (default ``solreffriction``/``solimpfriction``): a soft
  constraint, it creeps (google-deepmind/mujoco #565, #2082, #3528);
* the same with ``noslip_iterations = 10`` (a projected Gauss–Seidel pass after the solver);
* MuJoCo 4.0's elasto-plastic joint springs (``springyield``: the yield *deflection*, in the
  model's angle unit): stiffness k = I ω² with ω = 100 rad/s (hω = 0.1, stable for the
  explicit spring), critical damping 2 I ω, yield deflection C/k so that the spring yields at
  the torque C — it holds with an elastic deflection τ/k, not at the start position;
* fric's :class:`fric_core.mujoco.FrictionStepper` with the same C (a ``joint_friction.yaml``).

Then breakaway at 101 %: the hinge, and the arm's shoulder with the other joints at 50 %; the
acceleration over the first step against (τ − C)/I (I the inertia with the other joints held).
The figure plots max |q(t) − q(0)| over the joints (log scale) per method.
"""

from __future__ import annotations

import sys
from pathlib import Path

import mujoco
import numpy as np

from _plotting import Checks, parse_args, plt, savefig
from fric_core.joint_friction import JointFriction, JointFrictionSet
from fric_core.mujoco import FrictionStepper

H = 1e-3
ROOT = Path(__file__).resolve().parents[1]
ARM_URDF = ROOT / "urdf" / "arm7.urdf"
ARM_Q0 = np.array([0.3, 0.6, 0.2, -1.2, 0.4, 0.9, 0.1])
ARM_EXTRA = np.array([3.0, 0.0, 2.0, 0.0, 1.5, 0.0, 0.5])  # N m where gravity is ~0
HINGE_C = 2.0
HINGE_XML = """<mujoco><compiler angle="radian"/><option timestep="{h}"/>
<worldbody><body><joint name="hinge" type="hinge" axis="0 0 1" armature="0.05"/>
<geom type="box" size="0.5 0.05 0.05" pos="0.5 0 0" mass="3"/></body></worldbody></mujoco>"""
METHODS = ("frictionloss", "noslip", "springyield", "FrictionStepper")
SPRING_OMEGA = 100.0  # rad/s
STYLE = {"frictionloss": dict(color="tab:red"), "noslip": dict(color="tab:orange", ls="--"),
         "springyield": dict(color="tab:purple", ls="-."),
         "FrictionStepper": dict(color="k", lw=2.0)}
FLOOR = 1e-18  # log plots: exact zeros drawn here


def _spec(system: str):
    if system == "hinge":
        return mujoco.MjSpec.from_string(HINGE_XML.format(h=H))
    spec = mujoco.MjSpec.from_file(str(ARM_URDF))
    spec.option.timestep = H
    return spec


def _compile(spec):
    m = spec.compile()
    return m, mujoco.MjData(m)


def system_setup(system: str):
    """``(q0, gravity torque at q0, inertia M at q0, joint names, friction levels C, load
    directions)``: the hinge C = 2 N m; the arm's C twice its nominal load (gravity plus
    ARM_EXTRA), so that the nominal load is 50 % of breakaway."""
    m, d = _compile(_spec(system))
    q0 = np.zeros(1) if system == "hinge" else ARM_Q0
    d.qpos[:] = q0
    mujoco.mj_forward(m, d)
    M = np.zeros((m.nv, m.nv))
    mujoco.mj_fullM(m, d, M)
    names = [m.joint(j).name for j in range(m.njnt)]
    if system == "hinge":
        return q0, d.qfrc_bias.copy(), M, names, np.array([HINGE_C]), np.ones(1)
    load = ARM_EXTRA - d.qfrc_bias
    return q0, d.qfrc_bias.copy(), M, names, 2.0 * np.abs(load), np.sign(load)


def loads(system: str, ratios) -> tuple:
    """Per joint the applied torque making the net static load ``ratios`` × C (a scalar or
    one ratio per joint), the net load and the levels C."""
    _, bias, _, _, C, sign = system_setup(system)
    net = np.asarray(ratios, float) * C * sign
    return bias + net, net, C


def build(system: str, method: str, levels: np.ndarray, applied: np.ndarray):
    """The model and data of ``system`` with friction ``levels`` (N m per joint) by ``method``,
    at rest at q0 under the ``applied`` joint torques; returns ``(step, model, data, stepper)``."""
    q0, _, M, names, _, _ = system_setup(system)
    spec = _spec(system)
    if method == "springyield":
        inertia = 1.0 / np.diag(np.linalg.inv(M))  # each joint's inertia with the others free
        for j, joint in enumerate(spec.joints):
            k = inertia[j] * SPRING_OMEGA ** 2
            joint.stiffness = [k, 0.0, 0.0]  # (linear, polynomial terms)
            joint.damping = [2.0 * inertia[j] * SPRING_OMEGA, 0.0, 0.0]
            joint.springyield = levels[j] / k
            joint.springref = q0[j]
    m, d = _compile(spec)
    d.qpos[:] = q0
    d.qfrc_applied[:] = applied
    stepper = None
    if method in ("frictionloss", "noslip"):
        m.dof_frictionloss[:] = levels
        if method == "noslip":
            m.opt.noslip_iterations = 10
    if method == "FrictionStepper":
        fs = JointFrictionSet({n: JointFriction(Cp=float(c), Cn=float(c), bp=0.0, bn=0.0)
                               for n, c in zip(names, levels)})
        stepper = FrictionStepper(m, d, fs)
        step = stepper.step
    else:
        def step(m=m, d=d):
            mujoco.mj_step(m, d)
    return step, m, d, stepper


def hold(system: str, method: str, ratio: float, seconds: float):
    """Held at ``ratio`` of breakaway for ``seconds``: ``(t, max_j |q_j(t) − q_j(0)|)``."""
    q0 = system_setup(system)[0]
    applied, _, levels = loads(system, ratio)
    step, m, d, _ = build(system, method, levels, applied)
    n = int(round(seconds / H))
    dev = np.empty(n)
    for k in range(n):
        step()
        dev[k] = np.abs(d.qpos - q0).max()
    return np.arange(1, n + 1) * H, dev


def breakaway(system: str, method: str):
    """101 % on the hinge / the arm's shoulder (others at 50 %): ``(measured, expected)``
    acceleration of that joint over the first step [rad/s²]."""
    M = system_setup(system)[2]
    j = 0 if system == "hinge" else 1
    ratios = np.full(M.shape[0], 0.5)
    ratios[j] = 1.01
    applied, net, levels = loads(system, ratios)
    step, m, d, _ = build(system, method, levels, applied)
    step()
    expected = (net[j] - np.sign(net[j]) * levels[j]) / M[j, j]
    return d.qvel[j] / H, expected


def run(out: Path, seconds: float) -> Checks:
    chk = Checks(f"MuJoCo joint friction held below breakaway ({seconds:g} s, h = 1 ms)")
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    for ax, system in zip(axes, ("hinge", "arm")):
        for ratio, alpha in ((0.5, 0.45), (0.9, 1.0)):
            for method in METHODS:
                t, dev = hold(system, method, ratio, seconds)
                settled = dev[int(round(1.0 / H)) - 1] if seconds > 1.0 else dev[0]
                print(f"  {system:5s} {ratio:4.0%} {method:16s} max|dq| = {dev.max():.3g} rad, "
                      f"after 1 s it moved {abs(dev[-1] - settled):.3g} rad")
                if method == "FrictionStepper":
                    chk(f"{system} held at {ratio:.0%} by FrictionStepper: |dq| <= 1e-9 rad",
                        dev.max() <= 1e-9, f"{dev.max():.3g} rad")
                ax.semilogy(t, np.maximum(dev, FLOOR), alpha=alpha, **STYLE[method],
                            label=f"{method} {ratio:.0%}")
        ax.set_title(f"{system}: held at 50 % (faint) and 90 % of breakaway")
        ax.set_xlabel("t [s]")
        ax.set_ylim(FLOOR / 3, 30.0)
    axes[0].set_ylabel("max |q(t) − q(0)| [rad]  (exact 0 drawn at 1e-18)")
    axes[1].legend(fontsize=7, loc="center right", ncol=2)
    for system in ("hinge", "arm"):
        for method in ("FrictionStepper", "frictionloss"):
            got, want = breakaway(system, method)
            rel = abs(got / want - 1.0)
            print(f"  {system:5s} 101% {method:16s} first-step acceleration {got:.5g} rad/s² "
                  f"(analytic (tau - C)/I = {want:.5g}, {rel:.2%} off)")
            if method == "FrictionStepper":
                chk(f"{system} breaks away at 101 % with (tau - C)/I within 1 %", rel <= 0.01,
                    f"{got:.5g} vs {want:.5g}")
    chk.pngs.append(savefig(fig, out, "mujoco_friction_hold.png", chk))
    return chk


def main(argv=None) -> int:
    args = parse_args(argv, __doc__.splitlines()[0], quick=True)
    return run(args.out, 2.0 if args.quick else 10.0).status()


if __name__ == "__main__":
    sys.exit(main())
