"""Figs. 12-14 of Kikuuwe et al. 2006: models B and D against their composite alternatives.

Common: M = 1 kg, B = 2 sqrt(K M) (critical damping; the captions' 2 sqrt(K/M) is the same for
M = 1), Coulomb friction, T = 1 ms, K in {8.3e4, 2.5e5, 7.5e5} N/m.

* Fig. 13: model B (eq. 36) vs the alternative of Fig. 12(a): a model-A element (eq. 26) behind
  an explicit spring-damper. The spring-damper needs the mass velocity, which the model-A element
  returns only after it got the force, so the alternative uses v_{k-1}:
  e_k = e_{k-1} + T (u_k − v_{k-1}), h_k = K e_k + B (u_k − v_{k-1}), v_k = A.step(h_k).
  Input: ramp u = 0.1 t m/s, F = 10 N; output: the spring-damper force h.
* Fig. 14: model D (eq. 45) vs the alternative of Fig. 12(b): a model-C element (eq. 38) on an
  explicit mass, eq. (60): u_k = u_{k-1} + (T/M)(h_k − f_{k-1}), f_k = C.step(u_k).
  Initial velocity u = 1 m/s, input h = 0, F = 7 N; output: the mass velocity u.

The one-step delay puts the same static-friction iteration (63) into both alternatives. With
B² = 4KM its eigenvalues are real and in [0, 1) iff T² ≤ M/(4K) (Sec. IV-C): K = 2.5e5 N/m is the
marginal case T² = M/(4K) (the dashed curves), K = 7.5e5 N/m violates it.

Checks (continuous-time references are exact solutions of the same mass-spring-damper-friction
system): model B's force peaks once, never above the continuous-time peak, and settles to
F + M du/dt = 10.1 N while sliding (the friction F plus the force accelerating the mass with the
ramp); model D's velocity stops, undershoots at most once (the presliding spring relaxing, bounded
by the continuous-time F/(e sqrt(KM))) and stays at zero; the alternatives oscillate or diverge
at K = 7.5e5 N/m; eq. (63) is non-oscillatory for K ≤ 2.5e5 and not for 7.5e5, with
T² = M/(4K) exactly at 2.5e5.
"""

from __future__ import annotations

import math
import sys

import numpy as np

from _plotting import Checks, parse_args, plt, savefig
from fric_core.design import max_dt_non_oscillatory, static_convergence
from fric_core.elements import (CompliantAdmittance, InertialImpedance, MasslessImpedance,
                                RigidAdmittance)
from fric_core.laws import Coulomb

T = 1e-3
M = 1.0
KS = (8.3e4, 2.5e5, 7.5e5)
STYLE = {8.3e4: dict(color="0.6", ls="-", lw=1.8), 2.5e5: dict(color="k", ls="--", lw=1.2),
         7.5e5: dict(color="k", ls="-", lw=1.0)}
F13, RAMP = 10.0, 0.1  # Fig. 13: F, du/dt
F14, U0 = 7.0, 1.0  # Fig. 14: F, initial velocity
T_END = 0.3


def damping(K: float) -> float:
    return 2.0 * math.sqrt(K * M)


def fig13_original(K: float, t_end: float = T_END):
    el = InertialImpedance(M, K, damping(K), Coulomb(F13), T)
    t = T * np.arange(int(round(t_end / T)) + 1)
    h = np.zeros_like(t)
    for k in range(1, t.size):
        h[k] = el.step(RAMP * t[k])
    return t, h


def fig13_alternative(K: float, t_end: float = T_END):
    B = damping(K)
    el = RigidAdmittance(M, Coulomb(F13), T)
    t = T * np.arange(int(round(t_end / T)) + 1)
    h = np.zeros_like(t)
    e = v = 0.0
    for k in range(1, t.size):
        u = RAMP * t[k]
        e += T * (u - v)  # explicit: the spring-damper only knows v_{k-1}
        h[k] = K * e + B * (u - v)
        v = el.step(h[k])
    return t, h


def fig13_continuous(K: float, t: np.ndarray):
    """Exact continuous-time h(t): stuck until K e + B ė = F (e = RAMP t²/2), then sliding with
    y = h − (F + M RAMP) obeying y'' + 2ω y' + ω² y = 0 (critical damping, ω = sqrt(K/M))."""
    B, w = damping(K), math.sqrt(K / M)
    a, F = RAMP, F13
    tb = (-B * a + math.sqrt((B * a) ** 2 + 2.0 * K * a * F)) / (K * a)
    h_inf = F + M * a
    y0 = F - h_inf
    yd0 = K * a * tb + B * a  # dh/dt just after breakaway (mass at rest, acceleration 0)
    tau = np.maximum(t - tb, 0.0)
    h = np.where(t < tb, K * a * t ** 2 / 2.0 + B * a * t,
                 h_inf + (y0 + (yd0 + w * y0) * tau) * np.exp(-w * tau))
    return tb, h


def fig14_original(K: float, t_end: float = T_END):
    el = CompliantAdmittance(M, K, damping(K), Coulomb(F14), T, u0=U0)
    t = T * np.arange(int(round(t_end / T)) + 1)
    u = np.empty_like(t)
    stuck = np.zeros(t.size, dtype=bool)
    u[0] = U0
    for k in range(1, t.size):
        u[k] = el.step(0.0)
        stuck[k] = el.state.stuck
    return t, u, stuck


def fig14_alternative(K: float, t_end: float = T_END):
    el = MasslessImpedance(K, damping(K), Coulomb(F14), T)
    t = T * np.arange(int(round(t_end / T)) + 1)
    u = np.empty_like(t)
    u[0] = U0
    f = 0.0
    for k in range(1, t.size):
        u[k] = u[k - 1] + (T / M) * (0.0 - f)  # eq. (60): the mass only knows f_{k-1}
        f = el.step(float(u[k]))
    return t, u


def sign_changes(x: np.ndarray, tol: float = 0.0) -> int:
    """Sign changes of x, ignoring entries with |x| <= tol."""
    x = x[np.abs(x) > tol]
    return int(np.count_nonzero(np.sign(x[1:]) != np.sign(x[:-1])))


def run(out, quick: bool = False) -> Checks:
    chk = Checks("Figs. 13-14: models B and D vs their composite alternatives (Fig. 12)")

    print("  eq. (63) static-friction iteration, B = 2 sqrt(KM), T = 1 ms:")
    for K in KS:
        sc = static_convergence(M, K, damping(K), T)
        print(f"    K = {K:8.3g}: T^2 = {T * T:.3g}, M/(4K) = {M / (4 * K):.3g}; {sc}")
        expect = K <= 2.5e5
        chk(f"eq. (63) at K = {K:.3g}: non-oscillatory = {expect}", sc.non_oscillatory == expect)
    dtc = max_dt_non_oscillatory(M, 2.5e5)
    chk("K = 2.5e5 N/m is the marginal case T^2 = M/(4K)", abs(dtc - T) <= 1e-15,
        f"sqrt(M/(4K)) = {dtc:.6g} s")

    # ---- Fig. 13 ---------------------------------------------------------------------------
    h_inf = F13 + M * RAMP
    fig, ax4 = plt.subplots(2, 2, figsize=(11, 7.5), layout="constrained")
    axes = ax4[0]
    print("  Fig. 13 (ramp u = 0.1 t, F = 10 N): output force h")
    for K in KS:
        t, h = fig13_original(K)
        _, ha = fig13_alternative(K)
        tb, hc = fig13_continuous(K, t)
        peaks = sign_changes(np.diff(h), 1e-9)
        peaks_a = sign_changes(np.diff(ha), 1e-9)
        print(f"    K = {K:8.3g}: continuous breakaway {tb * 1e3:.1f} ms, peak {hc.max():.4f} N | "
              f"model B peak {h.max():.4f} N, final {h[-1]:.6f} N, dh sign changes {peaks} | "
              f"alternative max|h| {np.max(np.abs(ha)):.4g} N, final {ha[-1]:.4g} N, "
              f"dh sign changes {peaks_a}")
        chk(f"Fig. 13 model B, K = {K:.3g}: one peak, not above the continuous-time peak "
            f"{hc.max():.3f} N", peaks <= 1 and h.max() <= hc.max(), f"peak {h.max():.4f} N")
        chk(f"Fig. 13 model B, K = {K:.3g}: settles to F + M du/dt = {h_inf:g} N while sliding",
            abs(h[-1] - h_inf) <= 1e-6, f"h(end) = {h[-1]:.9f} N")
        if K == 7.5e5:
            chk(f"Fig. 13 alternative, K = {K:.3g}: oscillates/diverges",
                peaks_a >= 10 and np.max(np.abs(ha)) > 2 * F13,
                f"{peaks_a} dh sign changes, max|h| = {np.max(np.abs(ha)):.3g} N")
        for row in ax4:
            row[0].plot(t, h, **STYLE[K], label=f"K = {K:.2g} N/m")
            row[1].plot(t, ha, **STYLE[K], label=f"K = {K:.2g} N/m")
            row[0].plot(t, hc, ":", color="tab:red", lw=1,
                        label="continuous time" if K == KS[0] else None)
    axes[0].set_title("model B (eq. 36)", fontsize=10)
    axes[1].set_title("alternative of Fig. 12(a): model A + explicit spring-damper", fontsize=10)
    axes[0].set_ylim(-0.5, 12.0)
    for ax in ax4[1]:
        ax.set_xlim(0.0, 0.08)
        ax.set_ylim(9.0, 11.0)
        ax.set_title("zoom on the breakaway", fontsize=9)
    for ax in ax4.ravel():
        ax.set_xlabel("time t [s]")
        ax.set_ylabel("output force h [N]")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="lower right" if ax is axes[0] else "upper left")
    fig.suptitle("Fig. 13: ramp input u = 0.1 t m/s; M = 1 kg, B = 2 sqrt(KM), F = 10 N, "
                 "T = 1 ms", fontsize=10)
    chk.pngs.append(savefig(fig, out, "fig13_model_b.png"))

    # ---- Fig. 14 ---------------------------------------------------------------------------
    fig, ax4 = plt.subplots(2, 2, figsize=(11, 7.5), sharey="row", layout="constrained")
    axes = ax4[0]
    t_stop = M * U0 / F14
    print(f"  Fig. 14 (u0 = 1 m/s, h = 0, F = 7 N): velocity u; kinetic stop at M u0/F = "
          f"{t_stop:.4f} s")
    for K in KS:
        t, u, stuck = fig14_original(K)
        _, ua = fig14_alternative(K)
        k_st = int(np.argmax(stuck))
        bound = F14 / (math.e * math.sqrt(K * M))  # continuous-time undershoot, critical damping
        late = t >= T_END - 0.05
        print(f"    K = {K:8.3g}: model D stuck from t = {t[k_st]:.3f} s, min u = {u.min():.3g} "
              f"m/s (continuous bound -{bound:.3g}), sign changes {sign_changes(u)}, "
              f"max|u| over the last 50 ms {np.max(np.abs(u[late])):.2g} | alternative: min u "
              f"{ua.min():.3g}, sign changes {sign_changes(ua)}, max|u| over the last 50 ms "
              f"{np.max(np.abs(ua[late])):.2g}")
        chk(f"Fig. 14 model D, K = {K:.3g}: sticks at M u0/F = {t_stop:.4f} s (+ <= 1 step)",
            0.0 <= t[k_st] - t_stop <= T + 1e-12, f"t = {t[k_st]:.3f} s")
        chk(f"Fig. 14 model D, K = {K:.3g}: then u -> 0 and stays (|u| <= 1e-8 over the last "
            f"50 ms, <= 1 sign change, undershoot <= F/(e sqrt(KM)) = {bound:.3g} m/s)",
            np.max(np.abs(u[late])) <= 1e-8 and sign_changes(u) <= 1 and -u.min() <= bound,
            f"{sign_changes(u)} sign change(s), min u = {u.min():.3g}")
        if K == 7.5e5:
            chk(f"Fig. 14 alternative, K = {K:.3g}: keeps vibrating (does not settle)",
                sign_changes(ua) >= 10 and np.max(np.abs(ua[late])) > 1e-3,
                f"{sign_changes(ua)} sign changes, |u| up to {np.max(np.abs(ua[late])):.2g} m/s "
                f"in the last 50 ms")
        for row in ax4:
            row[0].plot(t, u, **STYLE[K], label=f"K = {K:.2g} N/m")
            row[1].plot(t, ua, **STYLE[K], label=f"K = {K:.2g} N/m")
    axes[0].set_title("model D (eq. 45)", fontsize=10)
    axes[1].set_title("alternative of Fig. 12(b): model C + explicit mass (eq. 60)", fontsize=10)
    for ax in ax4[1]:
        ax.set_xlim(0.12, T_END)
        ax.set_ylim(-0.012, 0.012)
        ax.set_title("zoom on the stop", fontsize=9)
    for ax in ax4.ravel():
        ax.set_xlabel("time t [s]")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="upper right")
        ax.axvline(t_stop, color="tab:red", ls=":", lw=0.8)
    for ax in ax4[:, 0]:
        ax.set_ylabel("velocity u [m/s]")
    fig.suptitle("Fig. 14: initial u = 1 m/s, input h = 0; M = 1 kg, B = 2 sqrt(KM), F = 7 N, "
                 "T = 1 ms (red: kinetic stop M u0/F)", fontsize=10)
    chk.pngs.append(savefig(fig, out, "fig14_model_d.png"))
    return chk


def main(argv=None) -> int:
    args = parse_args(argv, __doc__.splitlines()[0])
    return run(args.out).status()


if __name__ == "__main__":
    sys.exit(main())
