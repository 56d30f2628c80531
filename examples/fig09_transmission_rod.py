"""Fig. 9 of Kikuuwe 2022 (paper 004, Sec. 6.1): a rod driven through a transmission pushes a stiff
contact; γ_u = 0.2 and γ_v ∈ {0.2, 0.5, 0.95, 1.05}.

Set-up (Sec. 6.1): algorithm (44) with h = 1 ms, m = M = 1 kg m² (referred to the output), the
rod's position p [rad] and velocity ṗ = v. The load force is
``f_v = min(K_e p, 0) + B_e ṗ`` (K_e = 10⁴ N m/rad, a contact at p = 0; B_e = 10 N m s/rad
viscosity), evaluated from the previous step's p and ṗ. The actuator force is f_u = −40 N m until
t = 0.9 s, 0 until t = 1.4 s, then +20 N m. The paper does not give the initial position; we start
at rest at p = 0.5 rad so that the rod reaches the contact at about t = 0.3–0.45 s.

What the figure shows and what is checked (the paper's Sec. 6.1 text):

* all four settings are well posed, |ρ̂| < 1 (29); γ_v = 1.05 is self-locking (non-back-drivable);
* while pushed (until 0.9 s) the rod bounces on the contact with small γ_v but keeps a contact
  force much larger than |f_u| = 40 N m with γ_v ≥ 0.95;
* with f_u = 0 (0.9–1.4 s) the back-drivable rods are pushed out of the contact, while with
  γ_v = 1.05 the rod stays exactly still (v = 0.0) and the contact force stays at its value at
  0.9 s; the static state satisfies (23) with λ = γ_u f_u + γ_v f_v;
* with f_u = +20 N m (from 1.4 s) every rod, the self-locking one too, leaves the contact
  (forward-drivable: |γ_u| < 1).
"""

from __future__ import annotations

import sys

import numpy as np

from _plotting import Checks, parse_args, plt, savefig
from fric_core.transmission import Transmission

H = 1e-3
M_IN = M_OUT = 1.0
GAMMA_U = 0.2
GAMMA_VS = (0.2, 0.5, 0.95, 1.05)
K_E, B_E = 1e4, 10.0
P0 = 0.5
T_END = 2.0


def f_u_of(t: float) -> float:
    """Actuator force schedule of Sec. 6.1 [N m]."""
    return -40.0 if t < 0.9 else (0.0 if t < 1.4 else 20.0)


def simulate(gamma_v: float, t_end: float = T_END) -> dict:
    tr = Transmission(GAMMA_U, gamma_v, M_IN, M_OUT)
    n = int(round(t_end / H))
    t = H * np.arange(n + 1)
    p, v, fu, fv, lam = (np.zeros(n + 1) for _ in range(5))
    stuck = np.zeros(n + 1, dtype=bool)
    p[0] = P0
    for k in range(1, n + 1):
        fu[k] = f_u_of(t[k])
        fv[k] = min(K_E * p[k - 1], 0.0) + B_E * v[k - 1]
        v[k] = tr.step(fu[k], fv[k], H)
        p[k] = p[k - 1] + H * v[k]
        st = tr.state
        stuck[k], lam[k] = st.stuck, st.lam
    return dict(tr=tr, t=t, p=p, v=v, fu=fu, fv=fv, lam=lam, stuck=stuck)


def check(chk: Checks, gv: float, r: dict) -> None:
    tr, t, p, v, fv, stuck = r["tr"], r["t"], r["p"], r["v"], r["fv"], r["stuck"]
    tag = f"gamma_v = {gv:g}"
    k_contact = int(np.argmax(p < 0.0))
    k09, k14 = int(round(0.9 / H)), int(round(1.4 / H))
    push = slice(k_contact, k09 + 1)
    reversals = int(np.count_nonzero(np.diff(np.sign(v[push])) != 0))
    after = p[k14:] > 0.0
    k_detach = k14 + int(np.argmax(after)) if after.any() else None
    print(f"    {tag}: rho_hat = {tr.rho_hat:+.4f}, eta_f = {tr.eta_f:.4f}, "
          f"eta_b = {tr.eta_b:+.4f}, backdrivable = {tr.backdrivable}")
    print(f"    {tag}: contact at t = {t[k_contact]:.3f} s; push phase: max|f_v| = "
          f"{np.max(np.abs(fv[push])):.1f} N m, velocity reversals {reversals}; at t = 0.9 s "
          f"p = {p[k09]:+.5f} rad, f_v = {fv[k09]:+.2f} N m")
    print(f"    {tag}: at t = 1.4 s p = {p[k14 - 1]:+.5f} rad, f_v = {fv[k14]:+.2f} N m; "
          f"stuck steps in 0.9-1.4 s: {int(stuck[k09 + 1:k14].sum())}/{k14 - k09 - 1}; "
          f"leaves the contact at t = {t[k_detach] if k_detach else float('nan'):.3f} s")
    chk(f"{tag}: well posed, |rho_hat| < 1 (29)", tr.well_posed, f"{tr.rho_hat:+.4f}")
    if gv < 0.9:
        chk(f"{tag}: bounces on the contact while pushed (velocity reversals >= 2)",
            reversals >= 2, f"{reversals}")
    else:
        chk(f"{tag}: keeps |f_v| > 4 |f_u| = 160 N m at t = 0.9 s", abs(fv[k09]) > 160.0,
            f"{fv[k09]:+.2f} N m")
    hold = slice(k09 + 1, k14)
    if gv < 1.0:
        chk(f"{tag}: back-drivable: pushed out of the contact with f_u = 0 (p > 0 at 1.4 s)",
            p[k14 - 1] > 0.0, f"p = {p[k14 - 1]:+.4f} rad")
    else:
        chk(f"{tag}: self-locking: v == 0.0 exactly for all of 0.9-1.4 s",
            np.all(v[hold] == 0.0) and np.all(stuck[hold]))
        chk(f"{tag}: contact force held: f_v(1.4 s) == f_v(0.9 s + 2 steps)",
            fv[k14] == fv[k09 + 2], f"{fv[k14]:+.4f} vs {fv[k09 + 2]:+.4f} N m")
        ks = np.flatnonzero(stuck[k09 + 2:k14]) + k09 + 2
        fu, fvk, lam = r["fu"][ks], fv[ks], r["lam"][ks]
        lam23 = GAMMA_U * fu + gv * fvk
        chk(f"{tag}: stuck state satisfies (23) with lambda = gamma_u f_u + gamma_v f_v",
            np.all(np.abs(fu - fvk) <= np.abs(lam23)) and
            np.max(np.abs(lam - lam23)) <= 1e-9 * np.max(np.abs(lam23)),
            f"max |lambda - (gamma_u f_u + gamma_v f_v)| = {np.max(np.abs(lam - lam23)):.2e}")
    chk(f"{tag}: forward-drivable: leaves the contact after f_u = +20 N m (by 2.0 s)",
        k_detach is not None)


def plot(results: dict, out) -> object:
    fig, axes = plt.subplots(2, 1, figsize=(9, 7), sharex=True)
    colors = dict(zip(GAMMA_VS, ("tab:blue", "tab:green", "tab:orange", "tab:red")))
    for gv, r in results.items():
        axes[0].plot(r["t"], r["p"], color=colors[gv], lw=1.2, label=f"$\\gamma_v$ = {gv:g}")
        axes[1].plot(r["t"], r["fv"], color=colors[gv], lw=1.2, label=f"$\\gamma_v$ = {gv:g}")
    axes[0].axhline(0.0, color="0.6", lw=0.8, ls="--")
    axes[0].set_ylabel("(b) position p [rad]")
    axes[1].set_ylabel("(c) force $f_v$ [N m]")
    axes[1].set_xlabel("time t [s]")
    for ax in axes:
        for tt in (0.9, 1.4):
            ax.axvline(tt, color="0.7", lw=0.8, ls=":")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="lower right")
    fig.suptitle("Fig. 9: rod through a transmission against a stiff contact (algorithm 44)\n"
                 "$\\gamma_u$ = 0.2, m = M = 1 kg m², $K_e$ = 1e4 N m/rad, $B_e$ = 10 N m s/rad, "
                 "h = 1 ms; $f_u$ = −40 / 0 / +20 N m", fontsize=10)
    return savefig(fig, out, "fig09_transmission_rod.png")


def run(out, quick: bool = False) -> Checks:
    chk = Checks("Fig. 9 (paper 004, Sec. 6.1): 1-DOF transmission, rod against a contact")
    results = {gv: simulate(gv) for gv in GAMMA_VS}
    for gv, r in results.items():
        check(chk, gv, r)
    chk.pngs.append(plot(results, out))
    return chk


def main(argv=None) -> int:
    args = parse_args(argv, __doc__.splitlines()[0])
    return run(args.out).status()


if __name__ == "__main__":
    sys.exit(main())
