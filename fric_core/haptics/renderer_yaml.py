"""A fit of paper 003 as ``friction_renderer`` parameters: the flat per-joint ROS parameters
(:func:`renderer_parameters`) and a complete ``--params-file`` (:func:`fit_to_yaml`).

Both widen the fitted Δv where Theorem 1's condition (15) of the rendering element (paper 000,
model C, eq. 38) requires it (:func:`renderable_law`), so the exported set always passes the
renderer's ``design_check: reject``.
"""

from __future__ import annotations

import math

from ..laws import AsymmetricFriction
from .identification import FrictionFit

__all__ = ["renderable_law", "renderer_parameters", "fit_to_yaml"]


def _positive(name: str, val: float, strict: bool = True) -> float:
    try:
        val = float(val)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: expected a number, got {val!r}") from None
    if not math.isfinite(val) or val < 0.0 or (strict and val == 0.0):
        raise ValueError(f"{name}: must be a finite value {'>' if strict else '>='} 0, "
                         f"got {val!r}")
    return val


def renderable_law(fit: FrictionFit, K: float = 6000.0, B: float = 10.0,
                   dt: float = 0.001) -> tuple[AsymmetricFriction, float]:
    """``(law, Z)``: ``fit.law()`` with Δv widened, if needed, to what the model-C element
    (paper 000, eq. 38; ``Z = 1/(B + dt K)``) renders anyway: where the stiction drop
    ``(Dp − Cp)/Δv`` (or its negative-side twin) breaks condition (15), ``1 + Z·slope > 0``,
    the element limits the slope to ``−1/(2Z)``, i.e. Δv = ``law.effective_dv(Z)``.

    Parameters
    ----------
    fit : FrictionFit
        The identified friction.
    K, B : float
        The element's presliding stiffness [N/m] and damping [N·s/m] (≥ 0, B + dt K > 0).
    dt : float
        The element's timestep [s] (> 0).

    Returns
    -------
    law : AsymmetricFriction
        What model C renders.
    Z : float
        The element's ``1/(B + dt K)``.
    """
    K = _positive("K", K, strict=False)
    B = _positive("B", B, strict=False)
    dt = _positive("dt", dt)
    if not B + dt * K > 0.0:
        raise ValueError(f"B: B + dt*K must be > 0 (got B = {B!r}, K = {K!r})")
    Z = 1.0 / (B + dt * K)
    law = fit.law()
    wp, wn = law.effective_dv(Z)
    dv = max(float(law.dv), float(wp), float(wn))
    if dv > law.dv:
        law = AsymmetricFriction(Cp=law.Cp, Cn=law.Cn, bp=law.bp, bn=law.bn, Dp=law.Dp,
                                 Dn=law.Dn, dv=dv)
    return law, Z


def renderer_parameters(fit: FrictionFit, joint: str = "stage_joint", *, K: float = 6000.0,
                        B: float = 10.0, dt: float = 0.001, mass: float | None = None) -> dict:
    """The flat per-joint ROS parameters of ``friction_renderer`` for the identified law.

    ``{"<joint>.law": "asymmetric", "<joint>.Cp": …, "<joint>.Cn", "bp", "bn", "Dp", "Dn",
    "dv", "<joint>.K": K, "<joint>.B": B}`` (floats), plus ``"<joint>.mass"`` when ``mass`` (the
    device's moving mass [kg], for the eq. (63) check) is given. All are live parameters: a
    running renderer accepts them through ``set_parameters``. The law is ``fit.law()`` (which
    clips non-physical values with warnings) with Δv from :func:`renderable_law`, so the set
    passes the renderer's design check (15) for model C with this K, B, dt.

    Parameters
    ----------
    fit : FrictionFit
        The identified friction.
    joint : str
        The renderer's joint name (the parameters' prefix).
    K, B, dt : float
        Model C's stiffness, damping and timestep (:func:`renderable_law`).
    mass : float or None
        The device's moving mass [kg], for the renderer's (63) check.

    Returns
    -------
    dict
        ``"<joint>.<name>" -> value``.
    """
    if not joint or any(c in joint for c in " ./~{}"):
        raise ValueError(f"joint: {joint!r} cannot prefix parameter names")
    law, _ = renderable_law(fit, K, B, dt)
    out = {f"{joint}.law": "asymmetric"}
    for k in ("Cp", "Cn", "bp", "bn", "Dp", "Dn", "dv"):
        out[f"{joint}.{k}"] = float(getattr(law, k))
    out[f"{joint}.K"] = float(K)
    out[f"{joint}.B"] = float(B)
    if mass is not None:
        out[f"{joint}.mass"] = _positive("mass", mass)
    return out


def _yaml_float(x: float) -> str:
    """A float YAML 1.1 and ROS's parser both read as a double (``1.0e-05``, not ``1e-05``)."""
    s = repr(float(x))
    mant, e, exp = s.partition("e")
    if e and "." not in mant:
        s = f"{mant}.0e{exp}"
    return s


_UNITS = {"m": "kg", "Cp": "N", "Cn": "N", "bp": "N·s/m", "bn": "N·s/m", "Dp": "N", "Dn": "N",
          "dv": "m/s", "K": "N/m", "B": "N·s/m", "mass": "kg"}
_WHAT = {"Cp": "kinetic level for v > 0", "Cn": "kinetic level magnitude for v < 0",
         "bp": "viscosity for v > 0", "bn": "viscosity for v < 0",
         "Dp": "static level, positive forces", "Dn": "static level, negative forces",
         "dv": "stiction transition width", "K": "presliding stiffness",
         "B": "presliding damping", "mass": "moving mass of the device (eq. 63 check)"}


def _pm(fit: FrictionFit, k: str) -> str:
    sd = fit.std.get(k, math.nan)
    return f"{getattr(fit, k):.5g} ± {sd:.2g}" if math.isfinite(sd) else f"{getattr(fit, k):.5g}"


def fit_to_yaml(fit: FrictionFit, joint: str = "stage_joint", node: str = "friction_renderer",
                **renderer_kw) -> str:
    """A ``--params-file`` for ``friction_renderer`` rendering the identified friction.

    ``{node: {ros__parameters: {joints: [joint], mode: impedance, element:
    massless_impedance, dt, <joint>: {...}}}}`` with the values of :func:`renderer_parameters`
    (``renderer_kw``: ``K``, ``B``, ``dt``, ``mass``; and ``source``, a description of the
    data for the comments). The element and dt are pinned because the exported Δv is computed
    for model C at that dt. Comments give the estimates ± std, the method, the fitted and the
    exported Δv (and why they differ), the condition number and the data source.

    Parameters
    ----------
    fit : FrictionFit
        The identified friction.
    joint : str
        The renderer's joint name.
    node : str
        The renderer's node name (the file's top-level key).
    **renderer_kw
        ``K``, ``B``, ``dt``, ``mass`` of :func:`renderer_parameters`; ``source``.

    Returns
    -------
    str
        The YAML text.
    """
    source = str(renderer_kw.pop("source", "") or "")
    params = renderer_parameters(fit, joint, **renderer_kw)
    dt = float(renderer_kw.get("dt", 0.001))
    pre = f"{joint}."
    method = {"eiv": "Fuller's errors-in-variables estimator, paper 003 eq. (6)",
              "ols": "least squares, paper 003 eq. (5)"}.get(fit.method, fit.method)
    lines = [
        f"# {node}: friction identified by fric (paper 003, asymmetric Karnopp model, eq. 1)",
        "#   ros2 run fric friction_renderer --ros-args --params-file <this file>",
    ]
    if source:
        lines.append(f"# data: {source}")
    lines += [
        f"# method: {fit.method} ({method})",
        f"#   {fit.n_used} kinetic samples ({fit.n_pos} with v > dv, {fit.n_neg} with v < -dv); "
        f"design-matrix condition number {fit.cond:.3g}",
        f"# estimates ± std: m = {_pm(fit, 'm')} kg (the sample's mass; model C renders no mass)",
        f"#   Cp = {_pm(fit, 'Cp')} N, bp = {_pm(fit, 'bp')} N·s/m, "
        f"Cn = {_pm(fit, 'Cn')} N, bn = {_pm(fit, 'bn')} N·s/m",
        f"#   Dp = {_pm(fit, 'Dp')} N, Dn = {_pm(fit, 'Dn')} N, fitted dv = {fit.dv:.5g} m/s",
    ]
    dv_out = params[pre + "dv"]
    if dv_out > fit.dv:
        K, B = params[pre + "K"], params[pre + "B"]
        lines += [
            f"# dv: widened from the fitted {fit.dv:.5g} m/s to {dv_out:.5g} m/s. The fitted "
            f"stiction drop",
            "#   (Dp - Cp)/dv is steeper than condition (15) of paper 000 allows for model C",
            f"#   (slope > -(B + dt K) = {-(B + dt * K):.4g} N·s/m); the element would widen it "
            f"to the slope",
            "#   -(B + dt K)/2 anyway (AsymmetricFriction.effective_dv): this file states what "
            "is rendered",
            "#   and passes the renderer's design_check: reject.",
        ]
    lines += [
        f"{node}:",
        "  ros__parameters:",
        f"    joints: [{joint}]",
        "    mode: impedance",
        "    element: massless_impedance   # model C; the exported dv is computed for it",
        f"    dt: {_yaml_float(dt)}",
        f"    {joint}:",
        "      law: asymmetric",
    ]
    for key, val in params.items():
        k = key[len(pre):]
        if k == "law":
            continue
        note = f"{_WHAT[k]} [{_UNITS[k]}]"
        if k in fit.std and math.isfinite(fit.std[k]) and getattr(fit, k) == val:
            note += f", ± {fit.std[k]:.2g}"
        if k in _WHAT and hasattr(fit, k) and k != "dv" and val != getattr(fit, k):
            note += f", fitted {getattr(fit, k):.4g} made physical by FrictionFit.law()"
        lines.append(f"      {k + ':':<6} {_yaml_float(val):<24} # {note}")
    return "\n".join(lines) + "\n"
