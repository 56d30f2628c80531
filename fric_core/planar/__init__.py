"""fric_core.planar — planar friction with LuGre dynamics and limit surfaces (paper 002,
Waltersson & Karayiannidis).

Twists ``[v_x, v_y, ω]`` and wrenches ``[f_x, f_y, τ]`` are at the centre of pressure (CoP) of the
contact surface; :func:`twist_to_cop` / :func:`wrench_from_cop` move them between points.
See ``docs/planar.md`` for the API and the paper's equation map.

Modules:
    params         Table I parameters, amended g(v) (2)
    surfaces       pressure grids: circle, square, line, gradient line, non-convex, Hertz-like
                   (45)–(46); CoP, r (25), u (29)
    limit_surface  direct integration (7)–(8), steady state (11)–(12) with bilinear CoR (23),
                   pre-computed limit surface (35)–(44), ellipsoid (24), rescaling (Sec. VI-D)
    distributed    distributed LuGre (9)–(14) and Elasto-Plastic (15)–(18) model
    reduced        reduced three-bristle model (24)–(34), batched over many contacts
    profiles       the Fig. 5 velocity profile and error measures used in the paper
    contact        a planar contact rendered on a device's x, y, yaw joints (friction_renderer)
"""

from .contact import PlanarContact
from .distributed import DistributedLuGre
from .limit_surface import (EllipsoidLimitSurface, LimitSurfaceTable, limit_surface_wrench,
                            steady_state_wrench)
from .params import TABLE_I, PlanarFrictionParams
from .profiles import (FIG5_DURATION, drift_loads, fig5_twist, gripper_normal_force,
                       normalized_rmse, simulate, simulate_body, simulate_in_hand)
from .reduced import ReducedLuGre
from .surfaces import (ContactSurface, circle, circle_inscribed, from_function, gradient_line,
                       gradient_line_midpoint, hertz_like, hertz_radius, line, non_convex_1,
                       non_convex_2, square, twist_to_cop, wrench_from_cop)

__all__ = [
    "PlanarFrictionParams", "TABLE_I", "ContactSurface", "circle", "circle_inscribed", "square",
    "line", "gradient_line", "gradient_line_midpoint", "non_convex_1", "non_convex_2", "hertz_like",
    "hertz_radius", "from_function", "twist_to_cop", "wrench_from_cop", "limit_surface_wrench",
    "steady_state_wrench", "LimitSurfaceTable", "EllipsoidLimitSurface", "DistributedLuGre",
    "ReducedLuGre", "FIG5_DURATION", "fig5_twist", "normalized_rmse", "simulate", "drift_loads",
    "simulate_body", "gripper_normal_force", "simulate_in_hand", "PlanarContact",
]
