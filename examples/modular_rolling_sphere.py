"""Fig. 4 of Kikuuwe & Yamamoto (paper 001, Sec. IV-A): a sphere rolling with slip on a plane,
simulated by the generalised RK4 (21) over a rigid body (26) and the friction component with a
penalty normal force I_fricKN (23)/(24).

Set-up (the paper's): solid sphere M = 0.3 kg, R = 0.2 m, g = 9.8 m/s²; contact K = 1e5 N/m,
B = 10 N s/m, μ = 0.1; T = 1e-4 s; v(0) = [2, 0, 0] m/s, p(0) = [0, 0, 1.01 R], ω(0) = 0. The
impedance reads the lowest point of the sphere, a_z = [0, 0, −R] from the centre (a world-fixed
offset), so its velocity is the contact-point velocity v_c = v + ω × a_z.

What the figure shows and what is checked:

* v_c falls linearly at 3.5 μg and reaches zero at t = 2 v0/(7 μg) = 0.583 s (the paper: "0.58 s"),
  after which the sphere rolls without slipping at 5/7 v0 (from the impulse balance);
* the sphere drops 2 mm and bounces on the lightly damped contact: the vertical impulse
  balance predicts the exact shift of the rolling time, t = 2 v0/(7 μg) − v_z(t)/g (v_z
  interpolated to the crossing like v_c);
* after pure rolling is reached, the total energy (kinetic, gravity, contact elastic) never
  increases; the quaternion stays unit;
* forward Euler through the same components at the same T, for comparison.
"""

from __future__ import annotations

import sys

import numpy as np

from _plotting import Checks, parse_args, plt, savefig
from fric_core.modular import RigidBody, simulate
from fric_core.modular.scenarios import SPHERE, rolling_sphere

M, R, G, MU, V0, T, K = (SPHERE[k] for k in ("M", "R", "g", "mu", "v0", "T", "K"))
T_ROLL = 2.0 * V0 / (7.0 * MU * G)


def run_sphere(method: str, t_end: float, z0: float = 1.01 * R) -> dict:
    model = rolling_sphere()
    x0 = model.initial_state(sphere=RigidBody.state(p=(0.0, 0.0, z0), v=(V0, 0.0, 0.0)))
    tr = simulate(model, x0, T, int(round(t_end / T)), method=method)
    X = tr.x
    vc = X[:, 3] - R * X[:, 11]
    i = int(np.argmax(vc <= 0.0))
    # the zero crossing of v_c and v_z there, both interpolated within the crossing step
    a = vc[i - 1] / (vc[i - 1] - vc[i]) if i > 0 else float("nan")
    t_cross = tr.t[i - 1] + T * a if i > 0 else float("nan")
    vz_cross = X[i - 1, 5] + a * (X[i, 5] - X[i - 1, 5]) if i > 0 else float("nan")
    return dict(model=model, t=tr.t, X=X, vc=vc, i=i, t_cross=t_cross, vz_cross=vz_cross)


def plot(r: dict, eu: dict, out):
    t, X = r["t"], r["X"]
    fig, axes = plt.subplots(3, 1, figsize=(8, 8), sharex=True)
    axes[0].plot(t, X[:, 3], label="RK4 (21)", color="tab:blue")
    axes[0].plot(eu["t"], eu["X"][:, 3], "--", label="forward Euler (4)", color="tab:orange")
    axes[0].set_ylabel("centre velocity $v_x$ [m/s]")
    axes[1].plot(t, r["vc"], color="tab:blue", label="RK4 (21)")
    axes[1].plot(eu["t"], eu["vc"], "--", color="tab:orange", label="forward Euler (4)")
    axes[1].axvline(T_ROLL, color="0.5", ls=":", lw=1,
                    label=f"2$v_0$/(7$\\mu g$) = {T_ROLL:.4f} s")
    axes[1].set_ylabel("contact-point velocity [m/s]")
    axes[2].plot(t, X[:, 2], color="tab:blue")
    axes[2].set_ylabel("height of the centre $p_z$ [m]")
    axes[2].set_xlabel("time t [s]")
    inset = axes[2].inset_axes([0.45, 0.45, 0.5, 0.45])
    sel = t < 0.15
    inset.plot(t[sel], (X[sel, 2] - R) * 1e3, color="tab:blue", lw=0.8)
    inset.set_title("$p_z$ − R [mm], first 0.15 s (bounces)", fontsize=8)
    inset.tick_params(labelsize=7)
    for ax in axes:
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    axes[1].legend(fontsize=8)
    fig.suptitle("Fig. 4: sphere rolling with slip (rigid body (26) + I_fricKN (24), RK4 (21))\n"
                 f"M = {M} kg, R = {R} m, K = {K:g} N/m, B = {SPHERE['B']} N s/m, μ = {MU}, "
                 f"T = {T:g} s", fontsize=10)
    return savefig(fig, out, "modular_rolling_sphere.png")


def run(out, quick: bool = False) -> Checks:
    chk = Checks("Fig. 4 (paper 001, Sec. IV-A): sphere rolling with slip, RK4 over components")
    t_end = 0.8 if quick else 1.2
    r = run_sphere("rk4", t_end)
    eu = run_sphere("euler", t_end)
    rest = run_sphere("rk4", 0.7, z0=R - M * G / K)
    X, i = r["X"], r["i"]
    vz = r["vz_cross"]
    # bias of the interpolated crossing from the slip->stick switch inside the crossing step
    # (see test_modular_sphere.py): (2/27) 3.5 (B + TK)/M T^2 = 1.7e-7 s at T = 1e-4 s
    switch_bias = 2.0 / 27.0 * 3.5 * (SPHERE["B"] + T * K) / M * T * T
    airborne = float(np.sum(X[:, 2] > R) * T)
    E = np.array([r["model"].energy(x) for x in X[i::5]])
    qn = np.abs(np.linalg.norm(X[:, 6:10], axis=1) - 1.0).max()
    print(f"    analytic pure-rolling time 2 v0/(7 mu g) = {T_ROLL:.6f} s")
    print(f"    RK4: v_c reaches zero at t = {r['t_cross']:.6f} s (the paper: 0.58 s); "
          f"v_z there = {vz:+.2e} m/s -> impulse-balance prediction "
          f"{T_ROLL - vz / G:.6f} s; airborne for {airborne:.3f} s in total (bounces)")
    print(f"    RK4 from rest on the surface (p_z = R - Mg/K): t = {rest['t_cross']:.8f} s "
          f"(error {rest['t_cross'] - T_ROLL:+.1e} s)")
    print(f"    forward Euler, same T: t = {eu['t_cross']:.6f} s")
    print(f"    final v_x = {X[-1, 3]:.6f} m/s (5/7 v0 = {5 * V0 / 7:.6f}), "
          f"max |v_c| after rolling = {np.abs(r['vc'][i:]).max():.2e} m/s")
    print(f"    energy after rolling: {E[0]:.6f} J -> {E[-1]:.6f} J, "
          f"max increase between samples {np.max(np.diff(E)):+.1e} J; max | |q| - 1 | = {qn:.1e}")
    chk("pure rolling reached at 2 v0/(7 mu g) within 1 ms (paper: 0.58 s)",
        abs(r["t_cross"] - T_ROLL) < 1e-3, f"{r['t_cross']:.5f} s vs {T_ROLL:.5f} s")
    chk("rolling time matches the impulse balance 2v0/(7 mu g) - v_z/g within 1e-6 s",
        abs(r["t_cross"] - (T_ROLL - vz / G)) < 1e-6,
        f"{r['t_cross'] - (T_ROLL - vz / G):+.1e} s")
    chk(f"from rest on the surface: within 2 x the switch bias ({2 * switch_bias:.1e} s) of "
        f"2 v0/(7 mu g)",
        abs(rest["t_cross"] - T_ROLL) < 2 * switch_bias, f"{rest['t_cross'] - T_ROLL:+.1e} s")
    chk("rolls at 5/7 v0 afterwards (1e-6 relative)",
        abs(X[-1, 3] - 5 * V0 / 7) < 1e-6 * V0, f"{X[-1, 3]:.7f} m/s")
    chk("energy never increases after pure rolling (rounding tolerance 1e-12 J)",
        np.max(np.diff(E)) < 1e-12, f"{np.max(np.diff(E)):+.1e} J")
    chk("quaternion unit to 1e-12", qn < 1e-12, f"{qn:.1e}")
    chk.pngs.append(plot(r, eu, out))
    return chk


def main(argv=None) -> int:
    args = parse_args(argv, __doc__.splitlines()[0], quick=True)
    return run(args.out, quick=args.quick).status()


if __name__ == "__main__":
    sys.exit(main())
