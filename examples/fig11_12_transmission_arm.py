"""Figs. 11 and 12 of Kikuuwe 2022 (paper 004, Sec. 6.2): a two-link arm with geared joints pushes
a wall that moves into it; five settings of the output-side asymmetry coefficients γ_v.

Set-up (Sec. 6.2, Fig. 10): algorithm (69) with h = 1 ms on ``urdf/planar_2link.urdf`` (links of
1 m with 1 kg lumped at their distal ends; Pinocchio gives M_h(q), h(q, q̇), J(q)); rotor inertias
m = 1 kg m² per joint at the output shafts; joint viscosity 5 N m s/rad; no gravity;
γ_u = [0.1, 0.1]. The wall is parallel to the y axis at x = w_x and pushes the end effector with
``f = [−K max(p_x − w_x, 0), 0]``. The actuators render an x-force command through the statics
``τ_u = J(q)ᵀ [f_ux, 0]``. Schedule: 0–0.5 s f_ux = 0; 0.5–1 s f_ux = 500 N (pushing the wall);
1–1.5 s the wall moves from w_x0 = 1.37 m to w_x1 = 1.12 m; 1.5–2 s it stops; 2–2.5 s f_ux = 0;
2.5–3 s f_ux = −500 N (pulling away).

Our readings of what the text leaves open: the wall stiffness K is not given (we use
K = 10⁴ N/m); the initial posture has the end effector at (w_x0, 0) with the elbow bent
symmetrically (q = [−θ, 2θ], cos θ = w_x0/2); the wall force and the commands are evaluated
from the previous step's state (as h(q, q̇) is in (69c)).

Checks (the paper's Sec. 6.2 text):
* Fig. 11 (γ_v = [0.1, 0.1], [0.6, 0.6], [1.1, 1.1]): a larger γ_v gives a larger contact force
  while the wall pushes the arm (1–2 s); with γ_v = 1.1 the arm is not moved by the wall (both
  joint velocities exactly 0 for 1–1.5 s), the force stays high after the arm stops pushing
  (2–2.5 s), and the arm still pulls away from the wall when f_ux < 0 (forward-drivable);
* Fig. 12 (γ_v = [0.1, 1.1], [1.1, 0.1]): while the wall pushes (1–1.5 s), the joint with
  γ_v = 1.1 stays fixed (exactly zero velocity in most steps) while the other one moves;
* σ_max(P) < 1 (57) along every run.
"""

from __future__ import annotations

import sys

import numpy as np

from _plotting import Checks, parse_args, plt, savefig
from fric_core.transmission.geared_arm import GearedArm
from fric_core.transmission.urdf_dynamics import UrdfDynamics

H = 1e-3
T_END = 3.0
ROTOR = 1.0
DAMPING = 5.0
GAMMA_U = (0.1, 0.1)
K_WALL = 1e4
WX0, WX1 = 1.37, 1.12
FIG11 = ((0.1, 0.1), (0.6, 0.6), (1.1, 1.1))
FIG12 = ((0.1, 1.1), (1.1, 0.1))
PHASES = ((0.0, 0.5), (0.5, 1.0), (1.0, 1.5), (1.5, 2.0), (2.0, 2.5), (2.5, 3.0))


def schedule(t: float) -> tuple[float, float]:
    """(f_ux [N], w_x [m]) of Sec. 6.2 at time t."""
    if t < 0.5:
        return 0.0, WX0
    if t < 1.0:
        return 500.0, WX0
    if t < 1.5:
        return 500.0, ((1.5 - t) * WX0 + (t - 1.0) * WX1) / 0.5
    if t < 2.0:
        return 500.0, WX1
    if t < 2.5:
        return 0.0, WX1
    return -500.0, WX1


def simulate(dyn: UrdfDynamics, gamma_v, t_end: float = T_END) -> dict:
    th = np.arccos(WX0 / 2.0)
    arm = GearedArm(dyn, GAMMA_U, gamma_v, ROTOR, damping=DAMPING, q0=[-th, th * 2.0])
    n = int(round(t_end / H))
    t = H * np.arange(n + 1)
    q, v = np.zeros((n + 1, 2)), np.zeros((n + 1, 2))
    px, py, fx, wx, smax = (np.zeros(n + 1) for _ in range(5))
    q[0] = arm.q
    px[0], py[0] = dyn.ee_position(q[0])[:2]
    wx[0] = WX0
    for k in range(1, n + 1):
        fux, wx[k] = schedule(t[k - 1])
        fx[k] = -K_WALL * max(px[k - 1] - wx[k], 0.0)
        J = dyn.jacobian(q[k - 1])
        tau_u = J[0] * fux  # J(q)ᵀ [f_ux, 0]: the x row of the translational Jacobian
        v[k] = arm.step(tau_u, H, wrench=[fx[k], 0.0, 0.0, 0.0, 0.0, 0.0])
        q[k] = arm.q
        px[k], py[k] = dyn.ee_position(q[k])[:2]
        smax[k] = arm.state.sigma_max
    return dict(t=t, q=q, v=v, px=px, py=py, fx=fx, wx=wx, smax=smax, arm=arm)


def _phase(t, a, b):
    return (t > a) & (t <= b)


def summarize(gv, r) -> None:
    t = r["t"]
    print(f"    gamma_v = {list(gv)}: max sigma_max(P) = {r['smax'][1:].max():.4f}, "
          f"ill-posed steps {r['arm'].ill_posed_steps}")
    for a, b in PHASES:
        m = _phase(t, a, b)
        st = (r["v"][m] == 0.0).mean(axis=0)
        print(f"      {a:.1f}-{b:.1f} s: p_x {r['px'][m][0]:+.4f} -> {r['px'][m][-1]:+.4f} m, "
              f"f_x mean {r['fx'][m].mean():+9.2f} N, end {r['fx'][m][-1]:+9.2f} N; "
              f"joints at rest {st[0]:.0%} / {st[1]:.0%} of the steps")


def check(chk: Checks, runs: dict) -> None:
    t = runs[FIG11[0]]["t"]
    for gv, r in runs.items():
        chk(f"gamma_v = {list(gv)}: well posed along the run, sigma_max(P) < 1 (57)",
            r["smax"][1:].max() < 1.0 and r["arm"].ill_posed_steps == 0,
            f"max {r['smax'][1:].max():.4f}")
    push = _phase(t, 1.0, 2.0)
    means = [-runs[gv]["fx"][push].mean() for gv in FIG11]
    chk("Fig. 11: larger gamma_v, larger contact force while the wall pushes (1-2 s)",
        means[0] < means[1] < means[2], " < ".join(f"{x:.1f} N" for x in means))
    r = runs[(1.1, 1.1)]
    wall = _phase(t, 1.0, 1.5)
    chk("Fig. 11, gamma_v = 1.1: the wall does not move the arm (v == 0.0, 1-1.5 s)",
        np.all(r["v"][wall] == 0.0), f"max |v| {np.abs(r['v'][wall]).max():.1e}")
    idle = _phase(t, 2.0, 2.5)
    chk("Fig. 11, gamma_v = 1.1: the force stays high after the arm stops pushing (2-2.5 s)",
        np.all(r["fx"][idle] < -1000.0), f"f_x in [{r['fx'][idle].min():.1f}, "
        f"{r['fx'][idle].max():.1f}] N")
    soft = runs[(0.1, 0.1)]
    chk("Fig. 11, gamma_v = 0.1: back-driven off the wall when the arm stops pushing (2-2.5 s)",
        soft["fx"][idle][-1] == 0.0, f"f_x at 2.5 s {soft['fx'][idle][-1]:.2f} N")
    pull = _phase(t, 2.5, 3.0)
    chk("Fig. 11, gamma_v = 1.1: pulled away from the wall when f_ux = -500 N (2.5-3 s)",
        r["fx"][pull][-1] == 0.0 and r["px"][-1] < WX1, f"p_x at 3 s {r['px'][-1]:+.3f} m")
    for gv, locked, free in (((0.1, 1.1), 1, 0), ((1.1, 0.1), 0, 1)):
        v = runs[gv]["v"][wall]
        rest = (v == 0.0).mean(axis=0)
        chk(f"Fig. 12, gamma_v = {list(gv)}: joint {locked + 1} (gamma_v = 1.1) stays fixed "
            f"while joint {free + 1} moves (1-1.5 s)",
            rest[locked] >= 0.75 and rest[free] <= 0.25,
            f"at rest in {rest[locked]:.0%} / {rest[free]:.0%} of the steps")


def plot(runs: dict, gvs, name: str, title: str, out, chk: Checks | None = None) -> object:
    """Snapshots of the arm (top) and p_x, f_x over time (bottom): p_x over the whole run (the
    arm pulls away to p_x ≈ −2 m after 2.5 s) and zoomed on the wall phase (0–2 s, where the
    runs differ by centimetres); one legend for the bottom row, below it."""
    fig = plt.figure(figsize=(12, 8.2))
    top = fig.add_gridspec(1, len(gvs), bottom=0.5, top=0.9, wspace=0.3)
    bottom = fig.add_gridspec(1, 3, top=0.4, bottom=0.12, wspace=0.42)
    colors = ("tab:blue", "tab:orange", "tab:red")
    for i, gv in enumerate(gvs):
        r = runs[gv]
        ax = fig.add_subplot(top[0, i])
        for k in range(0, int(round(2.0 / H)), int(round(0.3 / H))):
            q1, q12 = r["q"][k, 0], r["q"][k].sum()
            x = [0.0, np.cos(q1), np.cos(q1) + np.cos(q12)]
            y = [0.0, np.sin(q1), np.sin(q1) + np.sin(q12)]
            shade = 0.2 + 0.6 * k / (2.0 / H)
            ax.plot(x, y, "-o", color=plt.cm.Greys(shade), ms=3, lw=1.2)
            ax.axvline(r["wx"][k], color=plt.cm.Reds(shade), lw=0.8)
        ax.set_aspect("equal")
        ax.set_xlim(-0.3, 1.8)
        ax.set_ylim(-1.2, 1.2)
        ax.set_xlabel("x [m]")
        ax.set_ylabel("y [m]")
        ax.set_title(f"$\\gamma_v$ = {list(gv)}: arm (grey) and wall (red)", fontsize=9)
        ax.grid(alpha=0.3)
    ax_p = fig.add_subplot(bottom[0, 0])
    ax_z = fig.add_subplot(bottom[0, 1])
    ax_f = fig.add_subplot(bottom[0, 2])
    t = runs[gvs[0]]["t"]
    at_wall = t <= 2.0
    for c, gv in zip(colors, gvs):
        r = runs[gv]
        ax_p.plot(r["t"], r["px"], color=c, lw=1.2, label=f"$\\gamma_v$ = {list(gv)}")
        ax_z.plot(r["t"][at_wall], r["px"][at_wall], color=c, lw=1.2)
        ax_f.plot(r["t"], r["fx"], color=c, lw=1.2)
    ax_p.plot(t, runs[gvs[0]]["wx"], "k--", lw=0.8, label="wall $w_x$")
    ax_z.plot(t[at_wall], runs[gvs[0]]["wx"][at_wall], "k--", lw=0.8)
    ax_p.set_title("whole run", fontsize=9)
    ax_z.set_title("at the wall, 0–2 s (zoom)", fontsize=9)
    ax_f.set_title("wall force", fontsize=9)
    ax_p.set_ylabel("end-effector $p_x$ [m]")
    ax_z.set_ylabel("end-effector $p_x$ [m]")
    ax_f.set_ylabel("wall force $f_x$ [N]")
    for ax in (ax_p, ax_z, ax_f):
        ax.set_xlabel("time t [s]")
        ax.grid(alpha=0.3)
    handles, labels = ax_p.get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), fontsize=8,
               bbox_to_anchor=(0.5, 0.0), frameon=False)
    fig.suptitle(title, fontsize=10)
    return savefig(fig, out, name, chk)


def run(out, quick: bool = False) -> Checks:
    chk = Checks("Figs. 11-12 (paper 004, Sec. 6.2): 2-link geared arm against a moving wall")
    dyn = UrdfDynamics("planar_2link", gravity=(0.0, 0.0, 0.0))
    runs = {gv: simulate(dyn, gv) for gv in FIG11 + FIG12}
    for gv, r in runs.items():
        summarize(gv, r)
    check(chk, runs)
    sub = "$\\gamma_u$ = [0.1, 0.1], m = 1 kg m², D = 5 N m s/rad, K = 1e4 N/m, h = 1 ms"
    chk.pngs.append(plot(runs, FIG11, "fig11_transmission_arm.png",
                         "Fig. 11: snapshots every 0.3 s (t < 2 s), $p_x$ and $f_x$\n" + sub, out,
                         chk))
    chk.pngs.append(plot(runs, FIG12, "fig12_transmission_arm.png",
                         "Fig. 12: one self-locking joint\n" + sub, out, chk))
    return chk


def main(argv=None) -> int:
    args = parse_args(argv, __doc__.splitlines()[0])
    return run(args.out).status()


if __name__ == "__main__":
    sys.exit(main())
