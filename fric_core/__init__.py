"""fric_core — physically correct friction as discrete-time elements (numpy/scipy only, no ROS).

Paper 000 (Kikuuwe et al. 2006) at the top: laws, elements, design, baselines, coupling, bank.
One subpackage per later paper: modular (001), planar (002), haptics (003), transmission (004).
"""

__version__ = "0.1.0"
