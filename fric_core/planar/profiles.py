"""The velocity profile of the paper's running example (Fig. 5) and its error measures.

:func:`fig5_twist` is the twist at the CoP that the paper uses for Figs. 5, 9, 13, 17, 19–22, 36
and 37: the authors' ``vel_num_cells`` test profile (``tests/velocity_profiles.py`` of
github.com/Gabrieleenx/FrictionModelling, the code published with paper 002). The CoR travels
through and around the 10 mm contact: tangential speeds up to ``cor_max`` = 15 mm/s at ω = 1 rad/s
(CoR up to 15 mm from the CoP), then a slower 6 mm/s (0.4 ``cor_max``) sideways slide during
which ω stops. It is piecewise linear in time with knots at 0.6, 0.8, 1.4, 1.6, 2.2, 2.4, 2.7,
3.4, 4.0, 4.3 and 4.6 s and zero from 4.6 s (the paper simulates 5 s).
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

__all__ = ["FIG5_DURATION", "fig5_twist", "simulate", "normalized_rmse", "drift_loads",
           "simulate_body",
           "gripper_normal_force", "simulate_in_hand"]

#: simulated time of the Fig. 5 experiment [s]
FIG5_DURATION = 5.0

#: the authors' ``vel_num_cells`` breakpoints t1 … t11 [s] (0 and "forever" added)
_KNOTS = np.array([0.0, 0.6, 0.8, 1.4, 1.6, 2.2, 2.4, 2.7, 3.4, 4.0, 4.3, 4.6, 1e9])
#                      t:  0   .6   .8  1.4  1.6  2.2  2.4  2.7  3.4  4.0  4.3  4.6  ∞
_VX = np.array([0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])  # × cor_max
_VY = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.4, 0.4, 0.4, 0.4, 0.0, 0.0])  # × cor_max
_OM = np.array([0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0])  # × omega_max


def fig5_twist(t, cor_max: float = 0.015, omega_max: float = 1.0) -> np.ndarray:
    """Twist [v_x, v_y, ω] at the CoP of the Fig. 5 profile at time(s) ``t``: (3,) or (n, 3).

    The authors' ``vel_num_cells``: 0–0.6 s ω ramps 0→1 (× ``omega_max``); 0.8–1.4 s v_x ramps
    0→``cor_max``; 1.6–2.2 s v_x back to 0; 2.4–2.7 s v_y ramps 0→0.4 ``cor_max``; 3.4–4.0 s ω
    ramps 1→0 (the CoR moves out to infinity); 4.3–4.6 s v_y ramps to 0; zero afterwards.

    Parameters
    ----------
    t : float or array_like
        The time(s) [s], a scalar or shape (n,).
    cor_max : float
        The peak tangential speed [m/s]; at ω = 1 rad/s the CoR lies up to this far [m] from
        the CoP.
    omega_max : float
        The peak angular velocity [rad/s].

    Returns
    -------
    ndarray
        The twist(s) ``[v_x, v_y, ω]`` [m/s, m/s, rad/s] at the CoP, (3,) or (n, 3).
    """
    tt = np.asarray(t, dtype=float)
    out = np.stack([np.interp(tt, _KNOTS, _VX) * cor_max, np.interp(tt, _KNOTS, _VY) * cor_max,
                    np.interp(tt, _KNOTS, _OM) * omega_max], axis=-1)
    return out


def simulate(step: Callable[[np.ndarray], np.ndarray], twists) -> np.ndarray:
    """Run a model's ``step`` over a sequence of twists (n, 3); return the wrenches (n, 3).

    Parameters
    ----------
    step : callable
        ``step(twist) -> wrench``: one model step from a (3,) twist ``[v_x, v_y, ω]``
        [m/s, m/s, rad/s] to a (3,) wrench ``[f_x, f_y, τ]`` [N, N, N m].
    twists : array_like
        The twists, shape (n, 3), one per step.

    Returns
    -------
    ndarray
        The wrenches, shape (n, 3).
    """
    tw = np.asarray(twists, dtype=float)
    out = np.empty((tw.shape[0], 3))
    for k in range(tw.shape[0]):
        out[k] = step(tw[k])
    return out


def normalized_rmse(reference, estimate) -> tuple[float, float]:
    """The paper's normalised RMSE of a wrench sequence against a reference.

    The paper's error measure (Figs. 9, 36, 37): RMSE of the tangential force vector divided by
    the largest reference tangential force, and RMSE of the torque divided by the largest
    reference torque magnitude.

    Parameters
    ----------
    reference : array_like
        The reference wrenches ``[f_x, f_y, τ]`` [N, N, N m], shape (n, 3).
    estimate : array_like
        The estimated wrenches at the same instants, shape (n, 3).

    Returns
    -------
    e_force, e_torque : float
        The normalised RMSE of the tangential force and of the torque [-].
    """
    ref = np.asarray(reference, dtype=float)
    est = np.asarray(estimate, dtype=float)
    ft_max = np.max(np.hypot(ref[:, 0], ref[:, 1]))
    tau_max = np.max(np.abs(ref[:, 2]))
    e_t = np.sqrt(np.mean((ref[:, 0] - est[:, 0]) ** 2 + (ref[:, 1] - est[:, 1]) ** 2))
    e_tau = np.sqrt(np.mean((ref[:, 2] - est[:, 2]) ** 2))
    return float(e_t / ft_max), float(e_tau / tau_max)


def drift_loads(t, kind: str = "tangential",
                weight: float = 9.81) -> tuple[np.ndarray, np.ndarray]:
    """External loads of the drift experiments (Figs. 6, 23–25), as in the authors' scripts.

    ``kind="tangential"``: f_x ramps to 1 N over 0.2 s, oscillates 1 + 0.4 sin(6πt) N from 1 s;
    τ ramps to 0.03 N·m over 2.8–3 s and oscillates 0.03 + 0.01 sin(6πt) N·m from 3 s. The normal
    load is ``weight``. ``kind="normal"``: f_x = 1 N and τ = 0.03 N·m (ramped over 0.2 s) and the
    normal load ``weight`` + sin(6πt) N from 1 s. For the paper's 1 kg disc (9.81 N, μ_C = 1) these
    stay well below slip: 1 N ≈ slip/10 and 0.03 N·m ≈ torque-to-slip/6 on a 25 mm contact disc.

    Returns (wrench (n, 3) at the contact CoP, normal force (n,)).

    Parameters
    ----------
    t : float or array_like
        The time(s) [s], a scalar or shape (n,) (a scalar gives n = 1).
    kind : str
        ``"tangential"`` or ``"normal"``: which load varies.
    weight : float
        The constant part of the normal load [N].

    Returns
    -------
    wrench : ndarray
        The external wrench ``[f_x, f_y, τ]`` [N, N, N m] at the contact CoP, shape (n, 3).
    normal_force : ndarray
        The normal load f_N [N], shape (n,).
    """
    tt = np.atleast_1d(np.asarray(t, dtype=float))
    ramp = np.clip(tt / 0.2, 0.0, 1.0)
    osc = np.sin(3.0 * 2.0 * np.pi * tt)
    w = np.zeros((tt.size, 3))
    fn = np.full(tt.size, float(weight))
    if kind == "tangential":
        w[:, 0] = np.where(tt < 1.0, ramp, 1.0 + 0.4 * osc)
        w[:, 2] = np.where(tt < 2.8, 0.0, np.where(tt < 3.0, 0.03 * (tt - 2.8) / 0.2,
                                                    0.03 + 0.01 * osc))
    elif kind == "normal":
        w[:, 0] = ramp
        w[:, 2] = 0.03 * ramp
        fn = np.where(tt > 1.0, weight + osc, weight)
    else:
        raise ValueError(f"kind: expected 'tangential' or 'normal', got {kind!r}")
    return w, fn


def simulate_body(model, external_wrench, normal_force, mass: float, inertia: float,
                  twist0=(0.0, 0.0, 0.0)) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Simulate a planar rigid body held by a friction model and pushed by external loads.

    A planar rigid body whose CoP is its centre of mass, pushed by ``external_wrench`` (n, 3)
    and held by the friction ``model`` (any model with ``dt``, ``step(twist)`` and
    ``set_normal_force``), integrated with semi-implicit Euler at the model's step: the friction
    over a step uses the twist at its start, then the twist and the pose are updated.

    Returns (poses (n, 3) [x, y, θ] in the initial body frame, twists (n, 3), friction (n, 3)).
    (For brevity the body frame is not rotated: valid for the small rotations of stick tests.)

    Parameters
    ----------
    model : object
        The friction model: ``dt`` [s], ``step(twist) -> wrench`` ((3,) → (3,), at the CoP) and
        ``set_normal_force(f_N)``.
    external_wrench : array_like
        The external wrench ``[f_x, f_y, τ]`` [N, N, N m] at the CoP per step, shape (n, 3).
    normal_force : float or array_like
        The normal load f_N [N], a scalar or shape (n,).
    mass : float
        The body's mass [kg].
    inertia : float
        Its moment of inertia about the CoP, z axis [kg m²].
    twist0 : array_like
        The initial twist ``[v_x, v_y, ω]`` [m/s, m/s, rad/s], shape (3,).

    Returns
    -------
    poses : ndarray
        ``[x, y, θ]`` [m, m, rad] after each step, shape (n, 3).
    twists : ndarray
        ``[v_x, v_y, ω]`` [m/s, m/s, rad/s] after each step, shape (n, 3).
    friction : ndarray
        The friction wrench ``[f_x, f_y, τ]`` [N, N, N m] of each step, shape (n, 3).
    """
    ext = np.asarray(external_wrench, dtype=float)
    fn = np.broadcast_to(np.asarray(normal_force, dtype=float), (ext.shape[0],))
    dt = model.dt
    inv_m = np.array([1.0 / mass, 1.0 / mass, 1.0 / inertia])
    # plain floats per step (numpy per-step overhead would rival the reduced model's step);
    # same operation order as v += (dt/m)(F_ext + F), x += dt v
    kx, ky, kth = (float(c) for c in dt * inv_m)
    vx, vy, om = (float(c) for c in twist0)
    px = py = pth = 0.0
    ext_list = ext.tolist()
    fn_list = fn.tolist()
    poses = np.empty_like(ext)
    twists = np.empty_like(ext)
    fric = np.empty_like(ext)
    fn_set = math.nan
    for k in range(ext.shape[0]):
        if fn_list[k] != fn_set:                # validated setter only when the load changes
            fn_set = fn_list[k]
            model.set_normal_force(fn_set)
        f = model.step(np.array((vx, vy, om)))
        fx, fy, ft = float(f[0]), float(f[1]), float(f[2])
        ex, ey, et = ext_list[k]
        vx += kx * (ex + fx)
        vy += ky * (ey + fy)
        om += kth * (et + ft)
        px += dt * vx
        py += dt * vy
        pth += dt * om
        poses[k] = (px, py, pth)
        twists[k] = (vx, vy, om)
        fric[k] = (fx, fy, ft)
    return poses, twists, fric


def _check_in_hand_step(dt: float, damping: float, mass: float, inertia: float,
                        lever: float, t: float) -> None:
    """ValueError naming ``dt`` if the semi-implicit Euler update of the held object is unstable:
    the pads' damping c = σ1 n f_N on the effective mass at the pads, 1/m_eff = 1/m + d²/I,
    requires c dt / m_eff < 2."""
    bound = 2.0 / (damping * (1.0 / mass + lever * lever / inertia))
    if dt > bound:
        raise ValueError(f"dt: {dt:g} s exceeds the stability bound 2/(sigma1 n f_N (1/m + d^2/I))"
                         f" = {bound:.3g} s at t = {t:.3f} s (f_N·sigma1·n = {damping:.4g} N s/m,"
                         f" CoM-pad distance d = {lever * 1e3:.1f} mm); use a smaller model dt")


def gripper_normal_force(t) -> np.ndarray:
    """Grip force of the authors' in-hand slip-stick timing run (Sec. VI-C, Table IV).

    f_N = 1.73 + 0.91 sin(2π·2t) N, applied step-wise constant at 100 Hz by
    :func:`simulate_in_hand`.

    Parameters
    ----------
    t : float or array_like
        The time(s) [s].

    Returns
    -------
    float or ndarray
        The grip force f_N [N], like ``t``.
    """
    return 1.73 + 0.91 * np.sin(2.0 * np.pi * 2.0 * np.asarray(t, dtype=float))


def simulate_in_hand(model, duration: float = 2.0, normal_force=gripper_normal_force,
                     com_offset=(0.002, 0.0), mass: float = 0.2, size=(0.15, 0.08),
                     n_fingers: int = 2, update_period: float = 0.01, on_normal_force=None,
                     gravity: float = 9.81) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Simulate the in-hand slip-stick experiment of Sec. VI-C.

    In-hand slip-stick (Sec. VI-C): a rectangular object (``size`` = width × height, ``mass``)
    held between ``n_fingers`` identical finger pads whose contact surface is fixed at the origin
    of the world frame, gravity along −y, the centre of mass starting at ``com_offset`` from the
    contact (case 2: 2 mm; case 1: 25 mm). Each pad applies the friction wrench of ``model`` (any
    model with ``dt``, ``step``, ``set_normal_force`` and ``cop``) for the object's twist at the
    pad's CoP. The grip force ``normal_force(t)`` is updated step-wise every ``update_period``
    (100 Hz in the paper); ``on_normal_force(model, fn)``, if given, is called at each update
    (e.g. to swap a Hertz-like surface or a rescaled limit surface, (45)–(46)).

    Integrated with semi-implicit Euler at the model's ``dt``: the pads' bristle damping σ1 f_N
    acts on the object's mass and, at the distance d from the CoM to the pads, on its rotational
    inertia I, so the step must stay below 2 / (σ1 · pads · f_N · (1/m + d²/I)); d grows as the
    object slips (case 1 of Sec. VI-C reaches d ≈ 65 mm, bounding dt near 3.5e-5 s with Table I;
    with the CoM at the pads, ≈ 1e-4 s). The bound is checked at every grip update with the
    current f_N and d (for a model with ``params.sigma1``): a ``dt`` above it raises ValueError
    instead of chattering silently. Returns (t (n,), CoM poses (n, 3) [x, y, θ], pad wrenches
    (n, 3) summed over the pads at the contact CoP).

    Parameters
    ----------
    model : object
        One pad's friction model: ``dt`` [s], ``step(twist) -> wrench`` ((3,) → (3,), at its
        CoP), ``set_normal_force(f_N)``, ``cop`` (2,) [m] and optionally ``params.sigma1``.
    duration : float
        The simulated time [s]; n = round(duration / dt) steps.
    normal_force : callable
        ``normal_force(t)``: the grip force f_N [N] at time t [s].
    com_offset : array_like
        The initial position of the centre of mass relative to the contact, (2,) [m].
    mass : float
        The object's mass [kg].
    size : array_like
        The object's width and height [m], (2,) (its inertia is a uniform rectangle's).
    n_fingers : int
        The number of identical pads.
    update_period : float
        The period of the grip-force updates [s].
    on_normal_force : callable or None
        ``on_normal_force(model, fn)``, called at each update before the new load is set.
    gravity : float
        The gravitational acceleration [m/s²], along −y.

    Returns
    -------
    t : ndarray
        The step times [s], shape (n,).
    poses : ndarray
        The centre of mass ``[x, y, θ]`` [m, m, rad] after each step, shape (n, 3).
    wrenches : ndarray
        The pads' friction wrench ``[f_x, f_y, τ]`` [N, N, N m], summed over the pads, at the
        contact CoP, shape (n, 3).

    Raises
    ------
    ValueError
        If the model's ``dt`` exceeds the stability bound at a grip update.
    """
    dt = model.dt
    sigma1 = float(getattr(getattr(model, "params", None), "sigma1", 0.0))
    n = int(round(duration / dt))
    every = max(1, int(round(update_period / dt)))
    inertia = mass / 12.0 * (size[0] ** 2 + size[1] ** 2)
    inv_m = np.array([1.0 / mass, 1.0 / mass, 1.0 / inertia])
    cx, cy = (float(c) for c in model.cop)
    # the body state in plain floats (the per-step numpy overhead would exceed the reduced
    # model's own step); same operation order as the vector form v += (dt/m) F, x += dt v
    px, py, pth = float(com_offset[0]), float(com_offset[1]), 0.0
    vx = vy = om = 0.0
    kx, ky, kth = (float(c) for c in dt * inv_m)
    wy = -mass * gravity
    nf = float(n_fingers)
    t_out = np.arange(n) * dt
    poses = np.empty((n, 3))
    wrenches = np.empty((n, 3))
    for k in range(n):
        if k % every == 0:
            fn = float(normal_force(k * dt))
            if on_normal_force is not None:
                on_normal_force(model, fn)
                cx, cy = (float(c) for c in model.cop)
            model.set_normal_force(fn)
            if sigma1 > 0.0:
                _check_in_hand_step(dt, sigma1 * n_fingers * fn, mass, inertia,
                                    math.hypot(cx - px, cy - py), k * dt)
        dx, dy = cx - px, cy - py                          # CoM → contact CoP
        f = model.step((vx - om * dy, vy + om * dx, om))
        fx, fy, ft = float(f[0]) * nf, float(f[1]) * nf, float(f[2]) * nf
        vx += kx * fx
        vy += ky * (wy + fy)
        om += kth * (ft + dx * fy - dy * fx)
        px += dt * vx
        py += dt * vy
        pth += dt * om
        poses[k] = (px, py, pth)
        wrenches[k] = (fx, fy, ft)
    return t_out, poses, wrenches
