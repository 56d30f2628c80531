"""Figs. 9-11 of Kikuuwe et al. 2006: two masses, two model-C frictional contacts, stick-slip.

Parameters (Fig. 11 caption): M1 = M2 = 1 kg, K1 = 100 N/m, K2 = 200 N/m, velocity input
u = 0.5 sin(5t) m/s, T = 1 ms; contact 1: model C with K = 3e4 N/m, B = 300 N·s/m, Coulomb
F = 5 N; contact 2: the same with F = 2.5 N.

Topology. The paper shows Fig. 9 only as a drawing (taken from Quinn [6]); its text says just
that Fig. 9 is "a simple example of multiple frictional contacts", introduced right after the
remark that models A, B and D "cannot deal with the case where a single object has more than one
frictional contact" (Sec. IV-A). Our reading, ``stacked`` (the default and the main figure):

* mass 1 rests on a belt (or floor) that moves at the input velocity u; contact 1 (F = 5 N) is
  between the belt and mass 1, sliding velocity v1 − u;
* mass 2 rests on top of mass 1; contact 2 (F = 2.5 N) is between mass 1 and mass 2, sliding
  velocity v2 − v1. Mass 1 thus has two frictional contacts, which is the case the text says
  needs model C;
* spring K1 ties mass 1 and spring K2 ties mass 2 to the fixed wall.

Supporting this reading: with one friction coefficient μ the lower contact carries both weights
and the upper one only mass 2's, F1/F2 = (M1 + M2) g/(M2 g) = 2 = 5 N/2.5 N exactly.

The other reading, ``chain`` (also simulated and checked, second PNG): a velocity source moving at
u pulls mass 1 through K1, mass 1 pulls mass 2 through K2, and each mass sits on the fixed ground
through its own contact (sliding velocities v1 and v2). Each mass then has a single contact.

Integration (the block diagram of Fig. 10, like eq. 60): semi-implicit Euler for the masses,
v_k = v_{k−1} + (T/M)(spring forces(x_{k−1}) − contact forces f_{k−1}), x_k = x_{k−1} + T v_k,
then each model-C element is stepped with its contact's sliding velocity at step k and returns
f_k, which acts with opposite signs on the two bodies of the contact.

Checks: stick-slip in both contacts (model C's ``state.stuck`` intervals alternating with slip);
|f| ≤ F; in static friction the contact's sliding velocity u − ė is exactly zero (model C has
presliding: the bodies may still move relative to each other by the elastic deflection e, so
their relative velocity is ė, not 0); no chattering (the stuck flag never flickers step to step,
the force never flips sign on consecutive steps, and the sliding velocity has no sign changes
while stuck).
"""

from __future__ import annotations

import sys

import numpy as np

from _plotting import Checks, parse_args, plt, savefig
from fric_core.design import static_convergence
from fric_core.elements import MasslessImpedance
from fric_core.laws import Coulomb

T = 1e-3
M1 = M2 = 1.0
K1, K2 = 100.0, 200.0
KC, BC = 3e4, 300.0  # both model-C contacts
F1, F2 = 5.0, 2.5
T_END = 6.0


def u_in(t):
    return 0.5 * np.sin(5.0 * t)


def simulate(topology: str = "stacked", t_end: float = T_END) -> dict:
    c1 = MasslessImpedance(KC, BC, Coulomb(F1), T)
    c2 = MasslessImpedance(KC, BC, Coulomb(F2), T)
    n = int(round(t_end / T))
    t = T * np.arange(n + 1)
    u = u_in(t)
    x1, x2, v1, v2, f1, f2, w1, w2 = (np.zeros(n + 1) for _ in range(8))
    s1 = np.zeros(n + 1, dtype=bool)
    s2 = np.zeros(n + 1, dtype=bool)
    xu = 0.0  # position of the velocity source (chain topology)
    for k in range(1, n + 1):
        if topology == "stacked":
            g1 = -K1 * x1[k - 1] - f1[k - 1] + f2[k - 1]  # belt contact on 1, reaction of 2 on 1
            g2 = -K2 * x2[k - 1] - f2[k - 1]
        else:
            xu += T * u[k]
            g1 = K1 * (xu - x1[k - 1]) - K2 * (x1[k - 1] - x2[k - 1]) - f1[k - 1]
            g2 = K2 * (x1[k - 1] - x2[k - 1]) - f2[k - 1]
        v1[k] = v1[k - 1] + T * g1 / M1
        v2[k] = v2[k - 1] + T * g2 / M2
        x1[k] = x1[k - 1] + T * v1[k]
        x2[k] = x2[k - 1] + T * v2[k]
        r1 = v1[k] - u[k] if topology == "stacked" else v1[k]  # relative velocity at contact 1
        r2 = v2[k] - v1[k] if topology == "stacked" else v2[k]
        for c, r, f, w, s in ((c1, r1, f1, w1, s1), (c2, r2, f2, w2, s2)):
            e_prev = c.state.e
            f[k] = c.step(float(r))
            st = c.state
            s[k] = st.stuck
            w[k] = r - (st.e - e_prev) / T  # sliding velocity u - de/dt of eq. (39)
    rel1 = v1 - u if topology == "stacked" else v1
    rel2 = v2 - v1 if topology == "stacked" else v2
    return dict(t=t, u=u, x1=x1, x2=x2, v1=v1, v2=v2, f=(f1, f2), stuck=(s1, s2), w=(w1, w2),
                rel=(rel1, rel2))


def runs(flag: np.ndarray):
    """[(value, start, stop)] of the constant runs of a boolean array."""
    edges = np.flatnonzero(np.diff(flag.astype(np.int8))) + 1
    starts = np.r_[0, edges]
    stops = np.r_[edges, flag.size]
    return [(bool(flag[a]), int(a), int(b)) for a, b in zip(starts, stops)]


def check(chk: Checks, topology: str, r: dict) -> None:
    for i, (F, f, s, w, rel) in enumerate(zip((F1, F2), r["f"], r["stuck"], r["w"], r["rel"])):
        tag = f"{topology}, contact {i + 1} (F = {F:g} N)"
        rr = runs(s[1:])
        stick = [(a + 1, b + 1) for val, a, b in rr if val]
        slip = [(a + 1, b + 1) for val, a, b in rr if not val]
        stick_ms = [(b - a) * T * 1e3 for a, b in stick]
        slip_ms = [(b - a) * T * 1e3 for a, b in slip]
        print(f"    {tag}: {len(stick)} stick intervals (durations {min(stick_ms):.0f}-"
              f"{max(stick_ms):.0f} ms, total {sum(stick_ms) / 1e3:.2f} s), {len(slip)} slip "
              f"intervals ({min(slip_ms):.0f}-{max(slip_ms):.0f} ms); max|f| = "
              f"{np.max(np.abs(f)):.6g} N")
        chk(f"{tag}: stick-slip (>= 3 stick intervals alternating with slip)",
            len(stick) >= 3 and len(slip) >= 3, f"{len(stick)} stick, {len(slip)} slip")
        chk(f"{tag}: |f| <= F", np.max(np.abs(f)) <= F, f"max {np.max(np.abs(f)):.6g} N")
        ws = np.abs(w[s])
        chk(f"{tag}: sliding velocity u - de/dt is zero while stuck", ws.max() <= 1e-12,
            f"max {ws.max():.1e} m/s over {s.sum()} stuck steps")
        wz = np.where(np.abs(w) <= 1e-12, 0.0, w)  # round-off (~1e-17) counts as zero
        sc_w = sum(int(np.count_nonzero(np.diff(np.sign(wz[a:b])))) for a, b in stick)
        sc_rel, amp_sc = 0, 0.0
        for a, b in stick:
            seg = rel[a:b]
            ks = np.flatnonzero(np.sign(seg[:-1]) * np.sign(seg[1:]) < 0)
            sc_rel += ks.size
            for kk in ks:
                amp_sc = max(amp_sc, np.max(np.abs(seg[max(kk - 5, 0):kk + 6])))
        amp = max(np.max(np.abs(rel[a:b])) for a, b in stick)
        print(f"    {tag}: while stuck, the bodies' relative velocity is the presliding rate de/dt "
              f"(max {amp:.3g} m/s); its sign changes while stuck: {sc_rel}"
              + (f" (|de/dt| <= {amp_sc:.2g} m/s within 5 steps of them)" if sc_rel else ""))
        flicker = min(b - a for _, a, b in rr[1:-1]) if len(rr) > 2 else 10**9
        fs = np.sign(f[1:])
        flips = int(np.count_nonzero((fs[:-2] * fs[1:-1] < 0) & (fs[1:-1] * fs[2:] < 0)))
        chk(f"{tag}: no chattering (sliding-velocity sign changes while stuck = 0, no 1-step "
            f"stick/slip flicker, no back-to-back force sign flips)",
            sc_w == 0 and flicker >= 2 and flips == 0,
            f"{sc_w} sign changes, shortest run {flicker} steps, {flips} flips; max |df| per step "
            f"{np.max(np.abs(np.diff(f))):.3g} N")


def plot(r: dict, topology: str, out) -> object:
    t = r["t"]
    fig, axes = plt.subplots(3, 1, figsize=(10, 9), sharex=True)
    ax = axes[0]
    ax.plot(t, r["x1"] * 1e3, "k", lw=1.2, label="mass 1, $x_1$")
    ax.plot(t, r["x2"] * 1e3, color="0.55", lw=1.2, label="mass 2, $x_2$")
    ax.set_ylabel("position [mm]")
    ax = axes[1]
    ax.plot(t, r["u"], ":", color="tab:blue", lw=1, label="input $u = 0.5\\sin 5t$")
    ax.plot(t, r["v1"], "k", lw=1.2, label="$v_1$")
    ax.plot(t, r["v2"], color="0.55", lw=1.2, label="$v_2$")
    ax.set_ylabel("velocity [m/s]")
    ax = axes[2]
    for (F, f, s, c, lab) in zip((F1, F2), r["f"], r["stuck"], ("k", "0.55"), ("1", "2")):
        ax.plot(t, f, color=c, lw=1.2, label=f"$f_{lab}$, contact {lab}\n(F = {F:g} N)")
        for val, a, b in runs(s):
            if val:
                ax.axvspan(t[a], t[min(b, t.size - 1)], ymin=0.0 if lab == "1" else 0.5,
                           ymax=0.5 if lab == "1" else 1.0,
                           color="tab:orange" if lab == "1" else "tab:green", alpha=0.15, lw=0)
    for F in (F1, F2):
        ax.axhline(F, color="0.8", ls="--", lw=0.8)
        ax.axhline(-F, color="0.8", ls="--", lw=0.8)
    ax.plot([], [], color="tab:orange", alpha=0.3, lw=6, label="contact 1 stuck\n(lower half)")
    ax.plot([], [], color="tab:green", alpha=0.3, lw=6, label="contact 2 stuck\n(upper half)")
    ax.set_ylabel("friction force f [N]\n(sign of the sliding velocity)")
    ax.set_xlabel("time t [s]")
    for ax in axes:
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    desc = ("belt at u under mass 1, mass 2 on mass 1, K1/K2 to the wall" if topology == "stacked"
            else "source u -K1- mass 1 -K2- mass 2, both masses on the ground")
    fig.suptitle(f"Fig. 11: two masses with two model-C contacts ({topology}: {desc})\n"
                 f"M1 = M2 = 1 kg, K1 = 100, K2 = 200 N/m, contacts K = 3e4 N/m, B = 300 N s/m, "
                 f"T = 1 ms", fontsize=10)
    name = "fig11_two_masses.png" if topology == "stacked" else "fig11_two_masses_chain.png"
    return savefig(fig, out, name)


def run(out, quick: bool = False) -> Checks:
    chk = Checks("Figs. 9-11: two masses, two model-C contacts, u = 0.5 sin(5t) m/s")
    for m in (M1, M1 + M2):
        print(f"    eq. (63) for a contact (K = {KC:g}, B = {BC:g}) on mass {m:g} kg: "
              f"{static_convergence(m, KC, BC, T)}")
    for topology in ("stacked", "chain"):
        r = simulate(topology, 3.0 if quick else T_END)
        check(chk, topology, r)
        chk.pngs.append(plot(r, topology, out))
    return chk


def main(argv=None) -> int:
    args = parse_args(argv, __doc__.splitlines()[0], quick=True)
    return run(args.out, args.quick).status()


if __name__ == "__main__":
    sys.exit(main())
