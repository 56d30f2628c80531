"""Parameter values → fric_core objects, for the nodes (rclpy-free: testable on plain dicts).

Each builder takes the flat parameter values a node declared (``fric_interfaces.*_params``) and
returns the core object the node steps, or raises ``ValueError`` naming the parameter:

* :func:`build_bank` — ``friction_renderer``'s joints as a :class:`fric_core.bank.ElementBank`,
  after the design checks (15), (48), (63); :func:`build_planar` — its planar contact
  (:class:`fric_core.planar.contact.PlanarContact`, paper 002), :func:`patch_geometry`,
  :func:`planar_problems`;
* :func:`build_sim`, :func:`build_hand` — ``haptic_stage``'s simulated stage (paper 003);
* :func:`build_arm`, :func:`well_posedness` — ``transmission_sim``'s arm (paper 004, algorithm
  (69));
* :func:`check_excitation` — ``friction_identifier``'s excitation (paper 003).
"""

from __future__ import annotations

import functools
import warnings
from typing import Any, Mapping, Sequence

import numpy as np

from fric_core.bank import (_ELEMENT_CLASSES, ElementBank, build_element, build_law,
                            design_problems, joint_config)
from fric_core.design import FrictionDesignWarning, static_convergence
from fric_core.haptics.identification import Excitation, excitation
from fric_core.haptics.stage import HapticStageSim, OperatorHand
from fric_core.planar.contact import PlanarContact
from fric_core.planar.limit_surface import LimitSurfaceTable
from fric_core.planar.params import PlanarFrictionParams
from fric_core.planar.surfaces import SURFACES
from fric_core.transmission import asymmetry_from_efficiencies
from fric_core.transmission.geared_arm import GearedArm, per_joint
from fric_interfaces.identifier_params import travel_band
from fric_interfaces.planar_params import planar_values
from fric_interfaces.renderer_params import IMPEDANCE_ELEMENTS
from fric_interfaces.stage_params import SIM_FIGURES

__all__ = ["build_bank", "build_planar", "patch_geometry", "planar_problems", "build_hand",
           "build_sim", "build_arm", "well_posedness", "check_excitation"]


# -- friction_renderer -----------------------------------------------------------------------------
def build_bank(element: str, dt: float, joints: Sequence[str], values: Mapping[str, Any], *,
               design_check: str = "reject", vectorize: bool | None = None
               ) -> tuple[ElementBank, list[str]]:
    """Validate every joint and build the bank; returns (bank, warnings to report).

    Raises ``ValueError`` with a reason naming the parameter for a bad value, and, with
    ``design_check="reject"``, for a failed design check (the returned warnings then hold only
    notes). Every joint is first built as a scalar element, so problems name their joint.
    """
    if element not in _ELEMENT_CLASSES:
        raise ValueError(f"element: {element!r} is not one of {list(_ELEMENT_CLASSES)}")
    configs, problems, notes = [], [], []
    planar = None
    if values.get("planar.joints"):
        planar, p = build_planar(values, joints, dt, impedance=element in IMPEDANCE_ELEMENTS)
        problems += p
    planar_joints = set(values.get("planar.joints") or ())
    for j in joints:
        if j in planar_joints:
            continue
        c = joint_config(values, j, element)
        try:
            law = build_law(c.law, c.law_params)
        except ValueError as e:
            raise ValueError(f"{j}.{e}") from None  # core messages start with the field
        try:
            el = build_element(element, c.element_params, law, dt)
        except ValueError as e:
            raise ValueError(f"{j}.{e}") from None
        p, n = design_problems(element, el, law, c.mass, dt)
        problems += [f"{j}: {m}" for m in p]
        notes += [f"{j}: {m}" for m in n]
        configs.append(c)
    if problems and design_check == "reject":
        raise ValueError("design check failed (set design_check: warn to accept): "
                         + "; ".join(problems))
    return ElementBank(element, dt, configs, vectorize, joints=joints, planar=planar), \
        problems + notes


# -- friction_renderer: the planar contact (paper 002) ---------------------------------------------
def patch_geometry(surface: str, cells: int, size: float, ls_resolution: int):
    """The unit-load contact surface and its pre-computed limit surface (35)–(44) for a patch
    geometry, computed once per geometry: retuning the friction coefficients or the per-joint
    elements rebuilds the contact without recomputing the table (both are only read).
    ``ValueError`` naming ``planar.surface`` and the accepted names for an unknown surface."""
    if not isinstance(surface, str) or surface not in SURFACES:
        raise ValueError(f"planar.surface: {surface!r} is not one of {list(SURFACES)}")
    return _patch_geometry(surface, int(cells), float(size), int(ls_resolution))


@functools.lru_cache(maxsize=4)
def _patch_geometry(surface: str, cells: int, size: float, ls_resolution: int):
    try:
        patch = SURFACES[surface](cells, size, 1.0)
    except ValueError as e:
        raise ValueError(f"planar.{e}") from None
    return patch, LimitSurfaceTable.compute(patch, n_ls=ls_resolution)


def _friction_params(values: Mapping[str, Any]) -> PlanarFrictionParams:
    try:
        return PlanarFrictionParams(
            sigma0=values["planar.sigma0"], sigma1=values["planar.sigma1"],
            sigma2=values["planar.sigma2"], mu_c=values["planar.mu_c"],
            mu_s=values["planar.mu_s"], gamma=values["planar.gamma"], v_s=values["planar.v_s"],
            s_ba=values["planar.s_ba"])
    except ValueError as e:
        raise ValueError(f"planar.{e}") from None


def planar_problems(values: Mapping[str, Any], dt: float, radius: float) -> list[str]:
    """Why the rendered bristles would not settle on the end effector at ``dt`` (eq. (63) of
    paper 000 on the translational and the yaw channel), for a known mass / inertia."""
    fn = float(values["planar.normal_force"])
    k = float(values["planar.sigma0"]) * fn
    b = (float(values["planar.sigma1"]) + float(values["planar.sigma2"])) * fn
    problems = []
    for what, m, scale in (("mass", values["planar.mass"], 1.0),
                           ("inertia", values["planar.inertia"], radius * radius)):
        if m > 0.0 and k > 0.0:
            sc = static_convergence(float(m), k * scale, b * scale, dt)
            if not sc.converges:
                problems.append(
                    f"planar.sigma0: the bristle stiffness sigma0*f_N = {k:g} on the end "
                    f"effector's {what} {m:g} diverges at dt = {dt:g} ({sc}); lower sigma0 or "
                    "normal_force, or raise sigma1")
    return problems


def build_planar(values: Mapping[str, Any], joints: Sequence[str], dt: float, *,
                 impedance: bool = True) -> tuple[PlanarContact | None, list[str]]:
    """The planar contact of the parameter values (None when ``planar.joints`` is empty) and its
    design problems; ``ValueError`` naming the parameter for bad values (wrong type, out of
    range, an unknown surface or parameter name: :func:`planar_values`)."""
    values = planar_values(values)
    pj = list(values["planar.joints"])
    if not pj:
        return None, []
    if not impedance:
        raise ValueError("planar.joints: a planar contact is rendered in impedance mode only "
                         "(velocities in, efforts out)")
    if len(pj) != 3 or len(set(pj)) != 3:
        raise ValueError(f"planar.joints: expected three different joints [x, y, yaw], got {pj}")
    missing = [j for j in pj if j not in joints]
    if missing:
        raise ValueError(f"planar.joints: {missing} not in joints {list(joints)}")
    if values["planar.mu_s"] < values["planar.mu_c"]:
        raise ValueError("planar.mu_s: must be >= planar.mu_c")
    params = _friction_params(values)
    surface, table = patch_geometry(values["planar.surface"], int(values["planar.cells"]),
                                    float(values["planar.size"]),
                                    int(values["planar.ls_resolution"]))
    contact = PlanarContact(surface, table, params, [list(joints).index(j) for j in pj], dt,
                            normal_force=float(values["planar.normal_force"]),
                            elasto_plastic=bool(values["planar.elasto_plastic"]))
    return contact, planar_problems(values, dt, contact.radius)


# -- haptic_stage ----------------------------------------------------------------------------------
def build_hand(values: Mapping[str, Any]) -> OperatorHand | None:
    """The scripted hand, or None for an empty ``hand_script``."""
    script = values["hand_script"].strip()
    if not script:
        return None
    try:
        return OperatorHand.parse(script, location=values["hand_location"])
    except ValueError as e:
        raise ValueError(f"hand_script: {e}") from None


def build_sim(values: Mapping[str, Any]) -> tuple[HapticStageSim, list[str]]:
    """The simulated stage of the parameter values, and the core's design warnings (Theorem 1's
    conditions for the carriage and sample frictions at ``sim_dt``) as messages to log.
    ``ValueError`` (naming the parameter) for values the core rejects."""
    kw = {name: float(values[name]) for name, *_ in SIM_FIGURES}
    sample = values["sample"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", FrictionDesignWarning)
        sim = HapticStageSim(
            dt=float(values["sim_dt"]), seed=int(values["seed"]),
            carriage_friction="default" if values["carriage_friction"] else None,
            sample=None if sample == "none" else sample, handle=bool(values["handle"]),
            hand=build_hand(values), x0=min(max(0.0, kw["x_min"]), kw["x_max"]), **kw)
    return sim, [str(w.message) for w in caught if issubclass(w.category, FrictionDesignWarning)]


# -- transmission_sim ------------------------------------------------------------------------------
def _gammas(values: Mapping[str, Any], names: tuple) -> tuple[np.ndarray, np.ndarray]:
    ef, eb = list(values["eta_f"]), list(values["eta_b"])
    if not ef and not eb:
        return (per_joint("gamma_u", _scalar(values["gamma_u"]), names),
                per_joint("gamma_v", _scalar(values["gamma_v"]), names))
    if not ef or not eb:
        raise ValueError(f"{'eta_b' if ef else 'eta_f'}: eta_f and eta_b go together")
    ef = per_joint("eta_f", _scalar(ef), names)
    eb = per_joint("eta_b", _scalar(eb), names)
    pairs = []
    for j, f, b in zip(names, ef, eb):
        try:
            pairs.append(asymmetry_from_efficiencies(float(f), float(b)))
        except ValueError as e:
            raise ValueError(f"{e} (joint {j})") from None
    return np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])


def _scalar(value):
    """A one-element list means 'the same for every joint'."""
    value = list(value)
    return value[0] if len(value) == 1 else value


def build_arm(values: Mapping[str, Any]) -> GearedArm:
    """The simulated arm of the parameter values; ``ValueError`` naming the parameter for a
    bad URDF (:class:`fric_core.transmission.urdf_dynamics.UrdfError`), unknown joint or frame
    names, bad per-joint values and a singular inertia."""
    from fric_core.transmission.urdf_dynamics import UrdfDynamics

    kw = dict(joint_names=list(values["joint_names"]) or None,
              ee_frame=values["ee_frame"] or None, gravity=list(values["gravity"]))
    text = values["robot_description"]
    try:
        if text.strip():
            dyn = UrdfDynamics.from_xml(text, **kw)
        else:
            dyn = UrdfDynamics(values["urdf"], **kw)
    except ValueError as e:
        msg = str(e)
        if msg.startswith("urdf:") and text.strip():
            msg = "robot_description:" + msg[len("urdf:"):]
        raise ValueError(msg) from None
    names = dyn.joint_names
    if values["wrench_frame"] not in (values["world_frame"], dyn.ee_frame):
        raise ValueError(f"wrench_frame: {values['wrench_frame']!r} is neither world_frame "
                         f"{values['world_frame']!r} nor ee_frame {dyn.ee_frame!r}")
    gu, gv = _gammas(values, names)
    m = per_joint("rotor_inertia", _scalar(values["rotor_inertia"]), names, minimum=0.0)
    d = per_joint("damping", _scalar(values["damping"]), names, minimum=0.0)
    q0 = list(values["initial_positions"])
    q0 = per_joint("initial_positions", q0, names) if q0 else np.zeros(len(names))
    if values["enforce_joint_limits"]:
        out = [j for j, x, lo, hi in zip(names, q0, dyn.lower, dyn.upper) if not lo <= x <= hi]
        if out:
            raise ValueError(f"initial_positions: joint(s) {out} start outside their URDF "
                             "limits (enforce_joint_limits is true)")
    try:
        stops = dict(lower=dyn.lower, upper=dyn.upper) if values["enforce_joint_limits"] else {}
        return GearedArm(dyn, gu, gv, m, damping=d, q0=q0, on_ill_posed="ignore", **stops)
    except ValueError as e:
        msg = str(e)
        if msg.startswith("m:"):
            msg = "rotor_inertia:" + msg[2:]
        raise ValueError(msg) from None


def well_posedness(arm: GearedArm, q: np.ndarray) -> tuple[float, np.ndarray]:
    """σ_max(P) of (69b)/(57) at ``q``, and per joint the 1-DOF ρ̂ (29) with the joint's own
    inertia M_ii(q) as the output side: well posed iff σ_max(P) < 1 (each |ρ̂_i| < 1 is
    necessary for a joint driven alone)."""
    M = arm.dynamics.terms(np.asarray(q, float), np.zeros(arm.n), False)[0] + np.diag(arm.m_v)
    Mhat = M + np.diag(arm.m)
    B = np.diag(arm.gamma_u * arm.m) - arm.gamma_v[:, None] * M
    try:
        P = B @ np.linalg.inv(Mhat)
        smax = float(np.linalg.norm(P, 2))
    except np.linalg.LinAlgError:
        smax = float("inf")
    Mii = np.diag(M)
    rho = (arm.gamma_u * arm.m - arm.gamma_v * Mii) / (arm.m + Mii)
    return smax, rho


# -- friction_identifier ---------------------------------------------------------------------------
def check_excitation(values: Mapping[str, Any], start: float, dt: float = 1e-3) -> Excitation:
    """The run's excitation (paper 003's warm-up + sinusoid), centred on ``start`` (or on
    ``center``), at the stage period ``dt``; ``ValueError`` naming the field when it leaves the
    travel band (:func:`travel_band`) or the stage is outside it."""
    lo, hi = travel_band(values)
    if not lo <= start <= hi:
        raise ValueError(f"position: the stage is at {start:.6g} m, outside the travel "
                         f"[{lo:.6g}, {hi:.6g}] m (x_min/x_max shrunk by travel_margin)")
    center = start if values["center_on_start"] else values["center"]
    duration = values["duration"] if values["duration"] > 0.0 else None
    cycles = None if duration is not None else values["cycles"]
    return excitation(amplitude=values["amplitude"], frequency=values["frequency"],
                      duration=duration, cycles=cycles, warmup=values["warmup"], dt=dt,
                      center=center, x_min=lo, x_max=hi)
