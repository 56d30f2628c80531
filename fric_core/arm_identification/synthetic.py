"""Simulated arm recordings with known friction, for tests, benchmarks and demos (issue 15).

:func:`multisine_trajectory` gives a smooth band-limited multi-sine ``q(t)`` per joint inside the
joint limits, with its analytic velocity and acceleration (it is not the condition-number
optimised excitation of ``fric excite``; it only needs to move every joint both ways at varied
speeds). :func:`simulate_arm_recording` turns a trajectory into what a real arm records:

* positions quantised like an absolute joint encoder: ``encoder_counts_per_rev`` counts per
  joint revolution (default 2¹⁷ = 131072, 4.8e-5 rad, a 17-bit joint-side encoder as on common
  collaborative arms), rounded to the nearest count;
* the effort: the motor torque referred to the joint in the gear convention of
  :mod:`.joint_friction` (paper 004),

      τ_m = m·q̈ + G(τ_load, q̇) + τ_f(q̇),   τ_load = M(q)q̈ + h(q, q̇)  (Pinocchio ``rnea``),

  ``G = τ_load/η_f`` when τ_load·q̇ > 0, ``η_b·τ_load`` when τ_load·q̇ < 0 (``G = τ_load`` for a
  :class:`~.joint_friction.JointFriction` without efficiencies), τ_f paper 003's asymmetric law,
  m the rotor inertia referred to the joint (``armature``);
* white torque-sensor noise of standard deviation ``torque_noise_std`` (default 0.03 N·m, about
  1 % of the few N·m a wrist joint carries; motor-current based efforts are noisier).

The true values (unquantised q, q̇, q̈, noise-free torque, τ_load) are returned alongside, so a
test can compare. Everything is deterministic given ``seed``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Mapping, Optional

import numpy as np

from ..joint_friction import JointFriction
from .normal_equations import _rnea_all

__all__ = ["SimulatedRecording", "multisine_trajectory", "simulate_arm_recording"]


@dataclass
class SimulatedRecording:
    """A simulated recording (see the module docstring); arrays are (N, n), joints in the
    model's order.

    ``q``: encoder positions (quantised); ``tau``: measured efforts (with noise); ``q_true``,
    ``v``, ``a``: the exact motion; ``tau_true``: the noise-free motor torque; ``tau_load``: the
    rigid-body torque ``rnea(q, q̇, q̈)``; ``friction``, ``armature``: the true parameters.
    """

    t: np.ndarray
    q: np.ndarray
    tau: np.ndarray
    q_true: np.ndarray
    v: np.ndarray
    a: np.ndarray
    tau_true: np.ndarray
    tau_load: np.ndarray
    friction: Dict[str, JointFriction]
    armature: np.ndarray
    torque_noise_std: float
    encoder_resolution: float


def multisine_trajectory(dyn, duration: float = 20.0, rate: float = 200.0,
                         frequencies=(0.1, 0.23, 0.37, 0.51), amplitude: float = 0.8,
                         margin: float = 0.2, seed: int = 0):
    """A smooth multi-sine trajectory per joint, inside the joint limits.

    ``q_j(t) = c_j + Σ_i A_ij sin(ω_i t + φ_ij)`` with random amplitudes and phases, scaled so that
    ``max_t |q_j − c_j| = amplitude`` (or less where the joint's range minus ``margin`` on each
    side is narrower), ``c_j`` the middle of the range (0 for unlimited joints).

    Parameters
    ----------
    dyn : fric_core.transmission.urdf_dynamics.UrdfDynamics
        The arm (its ``lower``/``upper`` limits and joint order).
    duration : float
        Length [s].
    rate : float
        Sampling rate [Hz].
    frequencies : sequence of float
        The sines' frequencies [Hz].
    amplitude : float
        Largest excursion from the middle of the range [rad].
    margin : float
        Kept clear of each joint limit [rad].
    seed : int
        Seed of the amplitudes and phases.

    Returns
    -------
    t : (N,) ndarray
        Times [s].
    q, v, a : (N, n) ndarray
        Positions [rad], velocities [rad/s], accelerations [rad/s²] (analytic).
    """
    if not (duration > 0 and rate > 0):
        raise ValueError(f"duration, rate: expected positive numbers, got {duration!r}, {rate!r}")
    rng = np.random.default_rng(seed)
    t = np.arange(0.0, duration, 1.0 / rate)
    w = 2 * np.pi * np.asarray(frequencies, dtype=float)
    n = dyn.n
    q, v, a = (np.zeros((t.size, n)) for _ in range(3))
    lo = np.where(np.isfinite(dyn.lower), dyn.lower, -np.inf)
    hi = np.where(np.isfinite(dyn.upper), dyn.upper, np.inf)
    for j in range(n):
        amp = rng.uniform(0.5, 1.0, w.size)
        ph = rng.uniform(0, 2 * np.pi, w.size)
        arg = np.outer(t, w) + ph
        s = np.sin(arg) @ amp
        center = 0.0 if not np.isfinite(lo[j] + hi[j]) else 0.5 * (lo[j] + hi[j])
        room = min(amplitude, 0.5 * (hi[j] - lo[j]) - margin)
        if not room > 0:
            raise ValueError(f"margin: joint {dyn.joint_names[j]}'s range is too narrow")
        k = room / np.max(np.abs(s))
        q[:, j] = center + k * s
        v[:, j] = k * (np.cos(arg) @ (amp * w))
        a[:, j] = -k * (np.sin(arg) @ (amp * w * w))
    return t, q, v, a


def simulate_arm_recording(dyn, t, q, v, a, friction: Mapping[str, JointFriction],
                           armature=None, torque_noise_std: float = 0.03,
                           encoder_counts_per_rev: Optional[int] = 2 ** 17,
                           seed: int = 0) -> SimulatedRecording:
    """What the arm's joint_states would record along a trajectory (module docstring).

    Parameters
    ----------
    dyn : fric_core.transmission.urdf_dynamics.UrdfDynamics
        The true arm (its inertias make τ_load).
    t : (N,) array_like
        Times [s].
    q, v, a : (N, n) array_like
        The exact motion (e.g. :func:`multisine_trajectory`).
    friction : mapping
        Joint name → :class:`~.joint_friction.JointFriction` (every joint of ``dyn``); with
        efficiencies the gear law applies.
    armature : (n,) array_like, optional
        Rotor inertia referred to each joint [kg·m²] (default 0).
    torque_noise_std : float
        Standard deviation of the white effort noise [N·m].
    encoder_counts_per_rev : int or None
        Encoder resolution; None records exact positions.
    seed : int
        Seed of the noise.

    Returns
    -------
    SimulatedRecording
        Measured and true signals.
    """
    q, v, a = (np.atleast_2d(np.asarray(x, dtype=float)) for x in (q, v, a))
    t = np.asarray(t, dtype=float)
    n = dyn.n
    if q.shape != v.shape or q.shape != a.shape or q.shape[1] != n or t.shape != (q.shape[0],):
        raise ValueError(f"q, v, a: expected (N, {n}) arrays and t of shape (N,), got "
                         f"{q.shape}, {v.shape}, {a.shape}, {t.shape}")
    missing = [name for name in dyn.joint_names if name not in friction]
    if missing:
        raise ValueError(f"friction: no entry for joint(s) {missing}")
    m = np.zeros(n) if armature is None else np.asarray(armature, dtype=float)
    if m.shape != (n,) or not np.all(np.isfinite(m)) or np.any(m < 0):
        raise ValueError(f"armature: expected {n} finite values >= 0 [kg·m²], got {armature!r}")
    if not (np.isfinite(torque_noise_std) and torque_noise_std >= 0):
        raise ValueError(f"torque_noise_std: expected a finite value >= 0, got "
                         f"{torque_noise_std!r}")
    tau_load = _rnea_all(dyn, q, v, a)
    tau_true = m * a
    for j, name in enumerate(dyn.joint_names):
        jf = friction[name]
        tau_true[:, j] += jf.gear(tau_load[:, j], v[:, j]) + jf.kinetic(v[:, j])
    rng = np.random.default_rng(seed)
    tau = tau_true + rng.normal(0.0, torque_noise_std, tau_true.shape)
    if encoder_counts_per_rev is None:
        res = 0.0
        qm = q.copy()
    else:
        if not (int(encoder_counts_per_rev) == encoder_counts_per_rev and
                encoder_counts_per_rev > 0):
            raise ValueError(f"encoder_counts_per_rev: expected a positive integer, got "
                             f"{encoder_counts_per_rev!r}")
        res = 2 * np.pi / encoder_counts_per_rev
        qm = np.round(q / res) * res
    return SimulatedRecording(t=t, q=qm, tau=tau, q_true=q, v=v, a=a, tau_true=tau_true,
                        tau_load=tau_load, friction=dict(friction), armature=m,
                        torque_noise_std=float(torque_noise_std), encoder_resolution=res)
