"""fric_core — physically correct friction as discrete-time elements (numpy/scipy only, no ROS).

Modules:
    laws          friction laws Φ and their implicit counterparts Φ_Z (Kikuuwe et al. 2006)
    elements      the implicit-Euler elements: models A, B, C, D
    baselines     conventional models (Karnopp, Quinn, viscosity, Dahl, LuGre, elasto-plastic)
    coupling      run elements over a force sequence; impedance element on a mass (eq. 60)
    design        parameter design conditions (15), (48), (63)
    stage         simulated 1-DOF haptic stage of paper 003 (apparatus, samples, operator hand)
    identification  asymmetric Karnopp fit of paper 003: OLS (5) and errors-in-variables (6)
    identification_io      recorded runs (CSV, rosbag2) in; renderer parameters/YAML out
    identification_report  paper 003's figures and the estimates table of a run
"""

__version__ = "0.1.0"
