"""Figs. 6–7 of Kikuuwe & Yamamoto (paper 001, Sec. IV-B, C): a two-link mechanism with Coulomb
friction at both joints under the paper's torques, simulated by the generalised RK4 (21).

* Simulation II (constraint-based): the arm (8) (closed form) + two friction components I_fricK
  (19), K = 5000 N m/rad, B = 1 N m s/rad, F = 0.5 N m; T = 1e-4 s. The same with LuGre (12)
  joint friction (σ0 = K, σ1 = B, Fc = Fs = F) for comparison.
* Simulation III (penalty-based): two rigid bodies (26) joined by penalty joints (stiff
  spring-dampers K_lin = 1e6 N/m, B_lin = 50 N s/m, bending K_rot = 10 N m/rad) with the same
  I_fricK friction about each axis and the actuator torques applied about the axes.

Torques (28c, d), Fig. 6: min(0.52, 0.3 t) on both joints for t < 4 s, then 0.336 + 0.144 sin(100 t)
and 0.336 + 0.144 cos(100 t): between 0.192 and 0.48 N m, below the breakaway level 0.5 N m.
The paper does not give the links; here (``scenarios.LINKS``) a 1 kg, 1 m rod and a 0.7 kg
payload (a ball of inertia 0.011 kg m²) at the tip of a massless 1 m second link, horizontal,
starting at rest at θ = 0: it moves a few hundredths of a radian, as in Fig. 7, and its elastic
modes on the joint springs at the held pose (≈ 36 and 276 rad/s, printed by the script) are away
from the 100 rad/s excitation (see scenarios.py for why that matters).

What the figures show and what is checked:

* the mechanism slides during the ramp and stops at about t = 4.4 s (the paper: "around 4.5 s");
* with I_fricK the angles then change only elastically (≤ the torque swing / K times the largest
  modal amplification at 100 rad/s, 1.151, computed from the arm's mass matrix) and the massless
  objects of Fig. 1 (θ − e) do not move at all: no drift;
* with LuGre the angles drift, and the drift grows steadily with time (Fig. 7);
* the penalty-based mechanism agrees with the constraint-based one and holds still too.
"""

from __future__ import annotations

import math
import sys

import numpy as np

from _plotting import Checks, parse_args, plt, savefig
from fric_core.modular import simulate
from fric_core.modular.scenarios import (JOINT_FRICTION, LINKS, PENALTY, paper_torques,
                                         penalty_initial_state, penalty_joint_angles,
                                         penalty_two_link, planar_arm, two_link)

K, F = JOINT_FRICTION["K"], JOINT_FRICTION["F"]
SWING = 2 * 0.144            # peak-to-peak torque in the hold phase [N m]
T_HOLD = 4.7                 # hold phase analysed from here (stop at ~4.4 s + settling)


def run_constraint(kind: str, T: float, t_end: float) -> dict:
    m = two_link(kind)
    tr = simulate(m, m.initial_state(arm=[0.0, 0.0, 0.0, 0.0]), T, int(round(t_end / T)),
                  every=max(1, int(round(1e-3 / T))))
    e = np.stack([tr.x[:, m.slice(f"friction{j}")][:, 0] for j in (0, 1)], axis=1)
    return dict(t=tr.t, theta=tr.x[:, :2], omega=tr.x[:, 2:4], e=e)


def run_penalty(T: float, t_end: float) -> dict:
    m = penalty_two_link()
    tr = simulate(m, penalty_initial_state(m, (0.0, 0.0)), T, int(round(t_end / T)),
                  every=max(1, int(round(1e-3 / T))))
    e = np.stack([tr.x[:, m.slice(f"joint{j}")][:, 0] for j in (0, 1)], axis=1)
    theta = penalty_joint_angles(m, tr.x)
    sep = max(np.abs(m.impedance_input(x, "joint1")[13:16] - m.impedance_input(x, "joint1")[0:3])
              .max() for x in tr.x[::50])
    return dict(t=tr.t, theta=theta, e=e, separation=sep)


def window_means(t, y, start, stop):
    """Means over whole periods (2 × 2π/100 s) of the torque: the elastic ripple averages out."""
    w = 2 * 2 * math.pi / 100.0
    starts = np.arange(start, stop - w, w)
    return starts, np.array([y[(t >= s) & (t < s + w)].mean(axis=0) for s in starts])


def mode_frequencies(theta) -> np.ndarray:
    """Natural frequencies of the held mechanism, the arm on the joint springs: √eig(H⁻¹K)."""
    H = planar_arm().mass_matrix(theta)
    return np.sqrt(np.sort(np.linalg.eigvals(np.linalg.solve(H, K * np.eye(2))).real))


def plot(ki: dict, lu: dict, pe: dict, out, chk: Checks | None = None):
    fig, axes = plt.subplots(2, 2, figsize=(12, 7.5))
    tt = np.linspace(0.0, ki["t"][-1], 4000)
    tq = np.array([paper_torques(s) for s in tt])
    ax = axes[0, 0]
    ax.plot(tt, tq[:, 0], lw=0.6, label="joint 0")
    ax.plot(tt, tq[:, 1], lw=0.6, label="joint 1")
    ax.axhline(F, color="k", ls="--", lw=0.8, label="static friction F")
    ax.set_title("Fig. 6: applied torques (28c, d)", fontsize=10)
    ax.set_ylabel("torque [N m]")
    ax.set_xlabel("time [s]")
    ax.legend(fontsize=8)
    ax = axes[0, 1]
    for j, c in ((0, "tab:blue"), (1, "tab:red")):
        ax.plot(ki["t"], ki["theta"][:, j], color=c, label=f"joint {j}, I_fricK (19)")
        ax.plot(lu["t"], lu["theta"][:, j], "--", color=c, label=f"joint {j}, LuGre (12)")
    ax.set_title("joint angles, whole run", fontsize=10)
    ax.set_ylabel("angle [rad]")
    ax.set_xlabel("time [s]")
    ax.legend(fontsize=7)
    for j, ax in ((0, axes[1, 0]), (1, axes[1, 1])):
        s = ki["t"] >= 3.0
        ax.plot(ki["t"][s], ki["theta"][s, j], color="tab:blue", lw=1,
                label="Kikuuwe et al. (I_fricK), constraint-based")
        sp = pe["t"] >= 3.0
        ax.plot(pe["t"][sp], pe["theta"][sp, j], color="tab:green", lw=1, ls=":",
                label="Kikuuwe et al., penalty-based (Sim. III)")
        sl = lu["t"] >= 3.0
        ax.plot(lu["t"][sl], lu["theta"][sl, j], color="tab:orange", lw=1, label="LuGre")
        ax.set_title(f"Fig. 7: joint {j} angle, t ≥ 3 s", fontsize=10)
        ax.set_xlabel("time [s]")
        ax.set_ylabel("angle [rad]")
        ax.legend(fontsize=7)
    for ax in axes.ravel():
        ax.grid(alpha=0.3)
    fig.suptitle("Two-link mechanism with joint friction, RK4 (21) over components; "
                 f"K = {K:g} N m/rad, B = {JOINT_FRICTION['B']} N m s/rad, F = {F} N m",
                 fontsize=11)
    fig.tight_layout()
    return savefig(fig, out, "modular_two_link.png", chk)


def hold_figure(ki: dict, lu: dict):
    """The hold phase: I_fricK's angles and massless objects, LuGre's drift. Each curve's label
    is what it plots (the massless object is θ − e − θ(T_HOLD): offset from θ by the spring's
    held deflection e, flat)."""
    fig, axes = plt.subplots(2, 1, figsize=(12, 6.5), sharex=True)
    for j, c in ((0, "tab:blue"), (1, "tab:red")):
        s = ki["t"] >= T_HOLD
        ref = ki["theta"][s, j][0]
        axes[0].plot(ki["t"][s], (ki["theta"][s, j] - ref) * 1e6, color=c, lw=0.6,
                     label=f"joint {j}: θ − θ({T_HOLD} s)")
        axes[0].plot(ki["t"][s], (ki["theta"][s, j] - ki["e"][s, j] - ref) * 1e6, color=c,
                     lw=1.5, ls="--", label=f"joint {j}: massless object θ − e − θ({T_HOLD} s)")
        sl = lu["t"] >= T_HOLD
        axes[1].plot(lu["t"][sl], (lu["theta"][sl, j] - lu["theta"][sl, j][0]) * 1e3, color=c,
                     lw=0.8, label=f"joint {j}, LuGre")
    axes[0].set_ylabel(f"I_fricK: relative to θ({T_HOLD} s) [µrad]")
    axes[0].set_title("hold phase: I_fricK moves only elastically (±torque/K), no drift",
                      fontsize=10)
    axes[1].set_ylabel("LuGre: change [mrad]")
    axes[1].set_title("LuGre under the same torques: the angles drift", fontsize=10)
    axes[1].set_xlabel("time [s]")
    for ax in axes:
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))  # beside the data
    fig.tight_layout()
    return fig


def plot_hold(ki: dict, lu: dict, pe: dict, out, chk: Checks | None = None):
    return savefig(hold_figure(ki, lu), out, "modular_two_link_hold.png", chk)


def run(out, quick: bool = False) -> Checks:
    chk = Checks("Figs. 6-7 (paper 001, Sec. IV-B, C): two-link mechanism with joint friction")
    # quick: T = 2e-4 s and 6 s. Stable: the constraint-based arm's stiffest mode on the joint
    # springs is 276 rad/s (ωT = 0.06); the penalty model's, the payload turning about its centre
    # against K_lin, is √(K_lin · 1²/0.011) = 9500 rad/s (ωT = 1.9 < 2.8)
    T, t_end = (2e-4, 6.0) if quick else (JOINT_FRICTION["T"], 8.0)
    ki = run_constraint("kikuuwe", T, t_end)
    lu = run_constraint("lugre", T, t_end)
    pe = run_penalty(T, t_end)
    t = ki["t"]
    stop = t[np.argmax((t > 4.0) & np.all(np.abs(ki["omega"]) < 0.005, axis=1))]
    hold = t >= T_HOLD
    th_hold = ki["theta"][hold]
    anchor = ki["theta"][hold] - ki["e"][hold]
    ptp_theta = np.ptp(th_hold, axis=0)
    ptp_anchor = np.ptp(anchor, axis=0)
    modes = mode_frequencies(th_hold[-1])
    amplification = np.max(np.abs(1.0 / (1.0 - (100.0 / modes) ** 2)))
    print(f"    links: masses {LINKS['masses']} kg, lengths {LINKS['lengths']} m; held-pose "
          f"modes on the joint springs: {modes[0]:.0f}, {modes[1]:.0f} rad/s (excitation 100, "
          f"largest modal amplification {amplification:.3f})")
    print(f"    I_fricK: slides during the ramp (max |ω| = {np.abs(ki['omega']).max():.2f} rad/s),"
          f" stops at t = {stop:.2f} s at θ = ({th_hold[0, 0]:.4f}, {th_hold[0, 1]:.4f}) rad")
    print(f"    I_fricK, t >= {T_HOLD} s: angle ranges {ptp_theta[0]:.2e}, {ptp_theta[1]:.2e} rad "
          f"(torque swing/K = {SWING / K:.2e}); massless objects θ − e moved "
          f"{ptp_anchor[0]:.1e}, {ptp_anchor[1]:.1e} rad")
    ws, lm = window_means(lu["t"], lu["theta"], T_HOLD, t_end)
    drift = np.abs(lm - lm[0])
    rate = (lm[-1] - lm[len(lm) // 2]) / (ws[-1] - ws[len(ws) // 2])
    print(f"    LuGre, t >= {T_HOLD} s: drift of the period-mean angles {drift[-1, 0]:.2e}, "
          f"{drift[-1, 1]:.2e} rad by t = {ws[-1]:.2f} s; rate over the second half "
          f"{rate[0]:+.2e}, {rate[1]:+.2e} rad/s")
    pdiff = np.abs(pe["theta"] - ki["theta"])
    pe_hold = pe["t"] >= T_HOLD
    pe_anchor = np.ptp(pe["theta"][pe_hold] - pe["e"][pe_hold], axis=0)
    print(f"    penalty-based (K_lin = {PENALTY['K_lin']:g} N/m): max |θ_pen − θ_con| = "
          f"{pdiff[:, 0].max():.2e}, {pdiff[:, 1].max():.2e} rad over the run; joint 1 "
          f"separation ≤ {pe['separation']:.1e} m; hold-phase range of θ − e "
          f"{pe_anchor[0]:.1e}, {pe_anchor[1]:.1e} rad")
    # the friction torque in the hold: f = K e + B ė with ė = ω while stuck (19c)
    f_hold = np.abs(K * ki["e"][hold] + JOINT_FRICTION["B"] * ki["omega"][hold]).max()
    print(f"    I_fricK hold: max |friction torque| = {f_hold:.4f} N m (F = {F})")
    chk("I_fricK: joint friction torques stay below F in the hold (static friction)",
        f_hold < F, f"{f_hold:.4f} N m")
    chk("I_fricK: slides during the ramp, stops at about 4.5 s (4.2-4.8 s)",
        np.abs(ki["omega"]).max() > 0.02 and 4.2 < stop < 4.8, f"{stop:.2f} s")
    chk("I_fricK: no drift, the massless objects θ − e fixed to 1e-12 rad",
        np.all(ptp_anchor < 1e-12), f"{ptp_anchor.max():.1e} rad")
    chk(f"I_fricK: angles change only elastically, < {amplification:.3f} (largest modal "
        f"amplification) x torque swing / K",
        np.all(ptp_theta < amplification * SWING / K),
        f"{ptp_theta.max():.2e} rad = {ptp_theta.max() * K / SWING:.3f} x swing/K")
    chk("LuGre: the drift grows monotonically (period means)",
        np.all(np.diff(drift[1:], axis=0) > 0.0))
    chk("LuGre: the drift exceeds 20 x the elastic range of I_fricK, and still grows",
        np.all(drift[-1] > 20 * SWING / K) and np.all(np.abs(rate) > 1e-4),
        f"{drift[-1].min():.2e} rad")
    # the ramp leaves only 0.02 N m of net torque, so a torque error δ from the penalty joints'
    # compliance changes the net acceleration by δ/0.02 (25 x amplified): allow 5 % of the
    # travel (the convergence as K_lin grows is tested in test_modular_two_link.py)
    travel = np.ptp(ki["theta"], axis=0)
    chk("penalty-based agrees with constraint-based within 5 % of the travel",
        np.all(pdiff.max(axis=0) < 0.05 * travel),
        f"{pdiff.max():.2e} rad vs travel {travel.min():.3f} rad")
    chk("penalty-based holds still too (θ − e fixed to 1e-9 rad)", np.all(pe_anchor < 1e-9),
        f"{pe_anchor.max():.1e} rad")
    chk.pngs.append(plot(ki, lu, pe, out, chk))
    chk.pngs.append(plot_hold(ki, lu, pe, out, chk))
    return chk


def main(argv=None) -> int:
    args = parse_args(argv, __doc__.splitlines()[0], quick=True)
    return run(args.out, quick=args.quick).status()


if __name__ == "__main__":
    sys.exit(main())
