"""Drift under an oscillating sub-breakaway force: models A, C, D vs Karnopp, LuGre, Dahl.

A mass M = 1 kg on a surface with Coulomb level F = 1 N is launched at v0 = 0.1 m/s, slides
about 1 cm and stops; all the while it is pushed by h(t) = 0.3 + 0.5 sin(2π t) N, whose maximum
0.8 N stays below the breakaway force F. A physical dry contact holds the mass after it stopped:
its position can only oscillate with the elastic (presliding) deflection, never walk away.

Models, all with T = 1 ms and the same presliding stiffness K = σ0 = 1e4 N/m and critical damping
B = σ1 = 2 sqrt(K M) where they have one:

* model A (eq. 26, rigid: no presliding), model D (eq. 45), model C (eq. 38) on the mass coupled
  explicitly (Fig. 12(b), eq. 60; eq. (63) is non-oscillatory for these K, B, T);
* Karnopp's threshold model, paper 000 eq. (3), ε = 1 mm/s: inside the band the friction balances
  the applied force, so the mass keeps the velocity it entered the band with and drifts for ever;
* LuGre (paper 002 eqs. 1-3, μ_C = μ_S = F, v_s = 1 mm/s) and Dahl, coupled like model C: their
  bristle deflection is never purely elastic, so every load cycle converts part of the motion
  into sliding and a biased oscillating load makes the mass walk (paper 002 Sec. III-C, Fig. 6);
* the elasto-plastic model (paper 002 eqs. 4-6) as a reference: pure spring below breakaway, no
  drift.

Drift is measured as x(20 s) − x(10 s): both instants are at the same phase of the 1 Hz load, so
any bounded periodic (presliding) motion cancels and what remains is net walking.
"""

from __future__ import annotations

import math
import sys

import numpy as np

from _plotting import Checks, parse_args, plt, savefig
from fric_core.baselines import Dahl, ElastoPlastic, KarnoppAdmittance, LuGre
from fric_core.coupling import simulate_admittance, simulate_mass_on_impedance
from fric_core.design import static_convergence
from fric_core.elements import CompliantAdmittance, MasslessImpedance, RigidAdmittance
from fric_core.laws import Coulomb

T = 1e-3
M, F = 1.0, 1.0
K = 1e4
B = 2.0 * math.sqrt(K * M)
V0 = 0.1
H0, HA, FREQ = 0.3, 0.5, 1.0  # h(t) = H0 + HA sin(2π FREQ t)
EPS = 1e-3  # Karnopp threshold
VS = 1e-3  # LuGre / elasto-plastic Stribeck velocity
T_END = 20.0
DRIFTING = ("Karnopp", "LuGre", "Dahl")
STYLE = {"model A": dict(color="k", lw=2.2), "model C": dict(color="tab:blue", lw=1.6),
         "model D": dict(color="tab:cyan", ls="--", lw=1.2),
         "elasto-plastic": dict(color="tab:green", ls=":", lw=1.6),
         "Karnopp": dict(color="tab:red", lw=1.2), "LuGre": dict(color="tab:orange", lw=1.2),
         "Dahl": dict(color="tab:purple", lw=1.2)}


def load(t: np.ndarray) -> np.ndarray:
    return H0 + HA * np.sin(2.0 * math.pi * FREQ * t)


def simulate(t_end: float = T_END):
    """Positions x(t) of the mass for every model; t_k = k T, k = 1..N (x = 0 at t = 0)."""
    t = T * np.arange(1, int(round(t_end / T)) + 1)
    h = load(t)
    law = Coulomb(F)
    x = {
        "model A": simulate_admittance(RigidAdmittance(M, law, T, v0=V0), h)[0],
        "model C": simulate_mass_on_impedance(MasslessImpedance(K, B, law, T), M, h, T, v0=V0)[0],
        "model D": simulate_admittance(CompliantAdmittance(M, K, B, law, T, u0=V0), h)[0],
        "Karnopp": simulate_admittance(KarnoppAdmittance(M, law, T, EPS, v0=V0), h)[0],
        "LuGre": simulate_mass_on_impedance(LuGre(K, B, 0.0, F, F, VS, T), M, h, T, v0=V0)[0],
        "Dahl": simulate_mass_on_impedance(Dahl(K, F, T), M, h, T, v0=V0)[0],
        "elasto-plastic": simulate_mass_on_impedance(ElastoPlastic(K, B, 0.0, F, F, VS, T), M, h,
                                                     T, v0=V0)[0],
    }
    return t, h, x


def run(out, quick: bool = False) -> Checks:
    chk = Checks("Drift: mass under h = 0.3 + 0.5 sin(2 pi t) N < F = 1 N, after sliding to rest")
    t, h, x = simulate()
    chk("load stays below breakaway", np.max(np.abs(h)) < F, f"max |h| = {np.max(np.abs(h)):.3g} N")
    sc = static_convergence(M, K, B, T)
    chk("explicit couplings (C, LuGre, elasto-plastic) satisfy eq. (63) non-oscillatory",
        sc.non_oscillatory, str(sc))
    i10 = int(round(10.0 / T)) - 1
    i20 = int(round(20.0 / T)) - 1
    last = slice(i20 - int(round(1.0 / FREQ / T)) + 1, i20 + 1)  # the last load period
    print(f"    {'model':<15} {'x(10 s) [mm]':>13} {'x(20 s) [mm]':>13} {'drift 10->20 s':>16} "
          f"{'last-cycle swing':>17}")
    drift = {}
    for name, xs in x.items():
        drift[name] = xs[i20] - xs[i10]
        print(f"    {name:<15} {xs[i10] * 1e3:13.6f} {xs[i20] * 1e3:13.6f} "
              f"{drift[name] * 1e3:13.3e} mm {np.ptp(xs[last]) * 1e3:13.3e} mm")
    for name in ("model A", "model C", "model D", "elasto-plastic"):
        chk(f"{name}: no drift (|x(20) - x(10)| <= 1e-9 m)", abs(drift[name]) <= 1e-9,
            f"{drift[name]:.2e} m")
    chk("model A: mass at rest after stopping (x constant over the last 10 s)",
        np.ptp(x["model A"][i10:]) == 0.0, f"ptp {np.ptp(x['model A'][i10:]):.1e} m")
    for name in DRIFTING:
        swing = np.ptp(x[name][last] - np.linspace(0.0, 1.0, last.stop - last.start)
                       * (x[name][last][-1] - x[name][last][0]))
        chk(f"{name}: drifts (x(20) - x(10) >= 0.1 mm and > 3x its per-cycle swing)",
            abs(drift[name]) >= 1e-4 and abs(drift[name]) > 3.0 * swing,
            f"{drift[name] * 1e3:.3f} mm in 10 s, swing {swing * 1e3:.3f} mm")

    fig, axes = plt.subplots(3, 1, figsize=(10, 10), layout="constrained",
                             gridspec_kw=dict(height_ratios=[1, 2, 2]))
    axes[0].plot(t, h, "k", lw=1)
    axes[0].axhline(F, color="tab:red", ls="--", lw=1, label=f"breakaway F = {F:g} N")
    axes[0].set_ylabel("applied force h [N]")
    axes[0].set_ylim(-0.4, 1.1)
    for name, xs in x.items():
        axes[1].plot(t, xs * 1e3, **STYLE[name], label=name)
        axes[2].plot(t, (xs - xs[int(round(2.0 / T)) - 1]) * 1e3, **STYLE[name], label=name)
    axes[1].set_ylabel("position x [mm]")
    axes[2].set_ylabel("x(t) - x(2 s) [mm]")
    axes[2].set_ylim(-0.5, 3.0)
    axes[2].set_title("displacement after the mass came to rest (Karnopp leaves the axes)",
                      fontsize=9)
    for ax in axes:
        ax.set_xlabel("time t [s]")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="upper left", ncol=2 if ax is not axes[0] else 1)
    fig.suptitle(f"Drift under an oscillating sub-breakaway load: M = {M:g} kg, v0 = {V0:g} m/s, "
                 f"F = {F:g} N, K = σ0 = {K:g} N/m, T = {T * 1e3:g} ms", fontsize=10)
    chk.pngs.append(savefig(fig, out, "drift_comparison.png"))
    return chk


def main(argv=None) -> int:
    args = parse_args(argv, __doc__.splitlines()[0])
    return run(args.out).status()


if __name__ == "__main__":
    sys.exit(main())
