"""fric_core — physically correct friction as discrete-time elements (numpy/scipy only, no ROS).

Modules:
    laws          friction laws Φ and their implicit counterparts Φ_Z (Kikuuwe et al. 2006)
    elements      the implicit-Euler elements: models A, B, C, D
    baselines     conventional models (Karnopp, Quinn, viscosity, Dahl, LuGre, elasto-plastic)
    coupling      run elements over a force sequence; impedance element on a mass (eq. 60)
    design        parameter design conditions (15), (48), (63)
    stage         simulated 1-DOF haptic stage of paper 003 (apparatus, samples, operator hand)
    identification  asymmetric Karnopp fit of paper 003: OLS (5) and errors-in-variables (6)
    transmission  gear transmissions with asymmetric load-dependent friction (paper 004): the DAI
                  (14), efficiencies (26)/(27), drivability, the 1-DOF algorithm (44)
    gear_geometry γ_u, γ_v of leadscrews, worm gears and spur gears (paper 004, Sec. 3.2–3.4)
    axproj        the axis-aligned projection (67) of the multi-DOF algorithm: semismooth Newton,
                  the diagonal case (70), the paper's projection iteration as reference
    arm           arms with a transmission at every joint: algorithm (69) (GearedArm)
    arm_dynamics  M(q), h(q, q̇), J(q) from a URDF with Pinocchio (the only module importing it)
    modular       the modular RK4 simulator of paper 001: admittance/impedance components, checked
                  wiring (13), generalised RK4 (21)/(22), I_fricK (19), I_fricKN (23)/(24)
    identification_io      recorded runs (CSV, rosbag2) in; renderer parameters/YAML out
    identification_report  paper 003's figures and the estimates table of a run
    planar        planar friction of paper 002: distributed and reduced LuGre with limit surfaces,
                  planar Elasto-Plastic, contact surfaces (subpackage fric_core.planar)
"""

__version__ = "0.1.0"
