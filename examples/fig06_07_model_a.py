"""Figs. 6 and 7 of Kikuuwe et al. 2006: model A (rigid admittance, eq. 26) with Coulomb friction.

A mass M = 1 kg slides on a fixed surface with Φ(v) = F sgn(v), F = 8 N, pushed by a constant net
force h, simulated with T = 1 ms and T = 4 ms.

* Fig. 6 (zero-velocity reaching): v0 = 0.7 m/s, h = −1 N. The caption gives v = 0.7 m/s while the
  text (Sec. III-A) says 1.3 m/s; we use the caption's value (the text's 1.3 is Fig. 7's). Friction
  (8 N) and h (1 N) both oppose the motion: v falls at (F + |h|)/M = 9 m/s² and reaches 0 at
  t = M v0/(F + |h|) = 0.0778 s; then |h| = 1 N < F holds the mass: v stays at exactly 0.0.
* Fig. 7 (velocity reversal): v0 = 1.3 m/s, h = −10 N. v falls at (F + |h|)/M = 18 m/s² until
  t = 1.3/18 = 0.0722 s, then reverses and accelerates at (|h| − F)/M = 2 m/s² in the negative
  direction.
"""

from __future__ import annotations

import sys

import numpy as np

from _plotting import Checks, parse_args, plt, savefig
from fric_core.elements import RigidAdmittance
from fric_core.laws import Coulomb

M, F = 1.0, 8.0
DTS = (0.001, 0.004)
T_END = 0.2
CASES = {  # name: (v0, h)
    "fig06": (0.7, -1.0),  # caption values (the text's 1.3 m/s is Fig. 7's)
    "fig07": (1.3, -10.0),
}


def simulate(v0: float, h: float, dt: float, t_end: float = T_END):
    """Model A from v0 under constant h: times t_k = k dt (k = 0..N), velocities, forces, stuck."""
    el = RigidAdmittance(M, Coulomb(F), dt, v0=v0)
    n = int(round(t_end / dt))
    t = dt * np.arange(n + 1)
    v = np.empty(n + 1)
    f = np.zeros(n + 1)
    stuck = np.zeros(n + 1, dtype=bool)
    v[0] = v0
    for k in range(1, n + 1):
        v[k] = el.step(h)
        s = el.state
        f[k], stuck[k] = s.f, s.stuck
    return t, v, f, stuck


def check_fig06(chk: Checks, dt: float, t, v, stuck) -> None:
    v0, h = CASES["fig06"]
    t_stop = M * v0 / (F + abs(h))
    zero = np.flatnonzero(v == 0.0)
    tag = f"Fig. 6, T={dt * 1e3:g} ms"
    if not chk(f"{tag}: velocity reaches exactly 0.0", zero.size > 0):
        return
    k0 = zero[0]
    print(f"    {tag}: first v == 0.0 at t = {t[k0]:.4f} s; analytic stop M v0/(F+|h|) = "
          f"{t_stop:.5f} s; error {t[k0] - t_stop:+.5f} s")
    chk(f"{tag}: stop time within one step of {t_stop:.5f} s", 0.0 <= t[k0] - t_stop <= dt,
        f"t = {t[k0]:.4f} s")
    chk(f"{tag}: v stays exactly 0.0 afterwards (stuck every step)",
        np.all(v[k0:] == 0.0) and np.all(stuck[k0:]), f"{v.size - k0} steps")
    sc = int(np.count_nonzero(np.diff(np.sign(v[k0:]))))
    chk(f"{tag}: no chattering (sign changes of v after stopping = 0)", sc == 0,
        f"{sc} sign changes")
    dec = -np.diff(v[: k0])[:-1] / dt if k0 > 2 else np.array([np.nan])
    rel = np.max(np.abs(dec - (F + abs(h)) / M)) / ((F + abs(h)) / M)
    chk(f"{tag}: deceleration (F+|h|)/M = {(F + abs(h)) / M:g} m/s² before the stop",
        rel <= 1e-9, f"max rel. error {rel:.1e}")


def check_fig07(chk: Checks, dt: float, t, v, stuck) -> None:
    v0, h = CASES["fig07"]
    a1 = (F + abs(h)) / M  # deceleration while v > 0
    a2 = (abs(h) - F) / M  # acceleration (negative direction) after the reversal
    t_rev = M * v0 / (F + abs(h))
    tag = f"Fig. 7, T={dt * 1e3:g} ms"
    kr = int(np.flatnonzero(v <= 0.0)[0])  # first step at or below zero: the reversal step
    print(f"    {tag}: reversal step t = {t[kr]:.4f} s (v = {v[kr]:+.4g} m/s, stuck={stuck[kr]}); "
          f"analytic {t_rev:.5f} s; error {t[kr] - t_rev:+.5f} s")
    chk(f"{tag}: reversal within one step of {t_rev:.5f} s", 0.0 <= t[kr] - t_rev <= dt)
    acc = np.diff(v) / dt
    before = acc[: kr - 1]  # steps entirely in v > 0
    after = acc[kr + 1:]  # steps entirely in v < 0
    e1 = np.max(np.abs(before + a1)) / a1
    e2 = np.max(np.abs(after + a2)) / a2
    print(f"    {tag}: slope before = {before.mean():+.9f} m/s² (paper −{a1:g}), after = "
          f"{after.mean():+.9f} m/s² (paper −{a2:g})")
    chk(f"{tag}: deceleration −(F+|h|)/M = −{a1:g} m/s² to 1e-9 rel.", e1 <= 1e-9, f"{e1:.1e}")
    chk(f"{tag}: reversed acceleration −(|h|−F)/M = −{a2:g} m/s² to 1e-9 rel.", e2 <= 1e-9,
        f"{e2:.1e}")
    chk(f"{tag}: v < 0 after the reversal (no chattering back)", np.all(v[kr + 1:] < 0.0))


def run(out, quick: bool = False) -> Checks:
    chk = Checks("Figs. 6-7: model A (rigid admittance), Coulomb F = 8 N, M = 1 kg")
    fig, axes = plt.subplots(2, 2, figsize=(10, 6.5), sharex=True, sharey="row")
    for col, dt in enumerate(DTS):
        for row, (name, (v0, h)) in enumerate(CASES.items()):
            t, v, f, stuck = simulate(v0, h, dt)
            (check_fig06 if name == "fig06" else check_fig07)(chk, dt, t, v, stuck)
            ax = axes[row, col]
            ax.plot(t, v, "k.-", ms=3, lw=1, label="velocity v [m/s]")
            ax.plot(t[1:], f[1:] / F, color="0.6", lw=1.2, drawstyle="steps-pre",
                    label="friction f / F [-]")
            ax.axhline(0.0, color="0.8", lw=0.6)
            t_star = M * v0 / (F + abs(h))
            ax.axvline(t_star, color="tab:red", ls=":", lw=1, label=f"analytic v=0: {t_star:.4f} s")
            ax.set_title(f"{'Fig. 6' if name == 'fig06' else 'Fig. 7'}: v0 = {v0} m/s, h = {h:g} N,"
                         f" T = {dt * 1e3:g} ms", fontsize=10)
            ax.set_ylabel("v [m/s], f/F [-]")
            ax.grid(alpha=0.3)
            ax.legend(fontsize=8, loc="upper right")
    for ax in axes[-1]:
        ax.set_xlabel("time t [s]")
    fig.suptitle("Model A (eq. 26): zero-velocity reaching (Fig. 6) and velocity reversal (Fig. 7)")
    chk.pngs.append(savefig(fig, out, "fig06_07_model_a.png"))
    return chk


def main(argv=None) -> int:
    args = parse_args(argv, __doc__.splitlines()[0])
    return run(args.out).status()


if __name__ == "__main__":
    sys.exit(main())
