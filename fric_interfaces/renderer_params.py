"""Parameters of the ``friction_renderer`` node: declarations and the checks across them.

Parameters (``ros__parameters``; per-joint ones are nested under the joint name in YAML)::

    joints               string[]  the joints to render, matched by NAME in joint_states (read-only)
    mode                 string    impedance | admittance (read-only)
    element              string    auto | massless_impedance (C) | inertial_impedance (B)
                                   | rigid_admittance (A) | compliant_admittance (D) (read-only);
                                   auto = C for impedance, A for admittance (paper 000, Sec. IV-D)
    dt                   double    element step = expected input period [s] (read-only)
    max_effort           double    output saturation [N or N·m] (> 0)
    max_velocity         double    impedance: |velocity| above this is an implausible input,
                                   rejected like NaN (default 10 m/s or rad/s)
    max_position         double    |position| above this is an implausible input (default 1000)
    max_force            double    admittance: |force| above this is an implausible input,
                                   rejected like NaN (default 1000 N or N·m)
    watchdog_timeout     double    silence/invalid input longer than this -> safe output [s]
    admittance_input     string    wrench | joint_effort (read-only)
    wrench_axis          string    x | y | z: WrenchStamped force axis of a 1-DOF stage (read-only)
    design_check         string    reject | warn: what a failed design check does
    output_enabled       bool      publish commands (default true; live): the hand-over switch
    thread_priority      int       SCHED_FIFO priority 1-99 of the process, 0 = normal (read-only)
    cpu_affinity         int[]     CPUs the process runs on, empty = all (read-only)
    autostart            bool      managed node: configure and activate at start-up (default
                                   true); false: wait unconfigured for ``ros2 lifecycle set``
    marker_frame, marker_scale, marker_rate, diagnostics_period   display
    <joint>.law          string    coulomb | coulomb_viscous | stribeck | asymmetric
    <joint>.F .D .Fc .Fs .vs .delta .Cp .Cn .bp .bn .Dp .Dn .dv   law parameters (fric_core.laws)
    <joint>.K .B .M      double    element parameters (presliding stiffness, damping, virtual mass)
    <joint>.mass         double    moving mass of the device at this joint, 0 = unknown; with model
                                   C it enables the static-friction stability check, eq. (63)
    planar.*                       a planar contact on three of the joints (x, y, yaw of a planar
                                   end effector): :mod:`fric_interfaces.planar_params`; those
                                   joints have no per-joint law

``output_enabled`` (live) hands the device over to another controller and back, e.g. to
``friction_identifier`` while it drives the stage, so two controllers never command one device:

* ``false`` — nothing is published on the command topic (no safe output, no watchdog output, no
  final command at shutdown); inputs are still read, checked and counted, the watchdog and the
  diagnostics keep running (message "output disabled"); the element is reset and not stepped.
* ``true`` again — rendering resumes from rest: impedance from the next valid input; admittance
  from the measured position, like after a watchdog trip.

It can be set together with new law parameters in one ``set_parameters_atomically`` call (the
new law is then rendered from the first command on).

Only the parameters of the selected law and element are used; all are declared so that
``ros2 param list`` shows them and a live change of ``<joint>.law`` finds its parameters.

The parameter values become elements in :func:`fric_nodes.builders.build_bank` (a ``ValueError``
names the parameter, e.g. ``stage_joint.vs: must be > 0``; then the paper's design checks),
carried by :class:`fric_core.bank.ElementBank`.
"""

from __future__ import annotations

from typing import Any, Mapping

from .parameters import LIFECYCLE_SPECS, SCHEDULING_SPECS, ParamSpec

__all__ = ["MODES", "ELEMENTS", "IMPEDANCE_ELEMENTS", "ADMITTANCE_ELEMENTS", "LAW_NAMES",
           "GLOBAL_SPECS", "ELEMENT_KEYS", "global_specs", "joint_specs", "resolve_element",
           "validate_globals"]

MODES = ("impedance", "admittance")
IMPEDANCE_ELEMENTS = ("massless_impedance", "inertial_impedance")
ADMITTANCE_ELEMENTS = ("rigid_admittance", "compliant_admittance")
ELEMENTS = IMPEDANCE_ELEMENTS + ADMITTANCE_ELEMENTS
DEFAULT_ELEMENT = {"impedance": "massless_impedance", "admittance": "rigid_admittance"}

#: the friction laws a joint can render (:data:`fric_core.bank.LAWS` builds them)
LAW_NAMES = ("coulomb", "coulomb_viscous", "stribeck", "asymmetric")

_FORCE = "N, or N·m for a revolute joint"
_DAMP = "N·s/m, or N·m·s/rad"

GLOBAL_SPECS = (
    ParamSpec("joints", ["stage_joint"], "joints to render, matched by name in joint_states; "
              "effort/position commands have one entry per joint in this order",
              read_only=True, list_of=str),
    ParamSpec("mode", "impedance", "impedance: velocity in, effort out (backdrivable devices); "
              "admittance: force in, position setpoint out (stiff force-sensed devices)",
              read_only=True, choices=MODES),
    ParamSpec("element", "auto", "friction element: auto picks massless_impedance (model C) in "
              "impedance mode, rigid_admittance (model A) in admittance mode",
              read_only=True, choices=("auto",) + ELEMENTS),
    ParamSpec("dt", 0.001, "element time step = the expected input period", unit="s",
              min=1e-6, max=1.0, read_only=True),
    ParamSpec("max_effort", 10.0, "saturation of the commanded effort (impedance) or of the "
              "measured force fed to the element (admittance)", unit=_FORCE, min=1e-6),
    ParamSpec("max_velocity", 10.0, "plausibility limit of the joint velocities read in "
              "impedance mode: a joint_states message with |velocity| above it is rejected like "
              "NaN (diagnostics, the safe output) and never reaches the element; far above any "
              "haptic stage (< 1 m/s) or robot joint (a few rad/s)", unit="m/s, or rad/s",
              min=1e-6, max=1e6),
    ParamSpec("max_position", 1000.0, "plausibility limit of the joint positions read: a "
              "joint_states message with |position| above it is rejected like NaN (it would start "
              "an admittance setpoint or a planar contact's yaw there); far beyond any stage's "
              "travel (m) or joint's range (rad)", unit="m, or rad", min=1e-6, max=1e9),
    ParamSpec("max_force", 1000.0, "plausibility limit of the measured force in admittance "
              "mode (wrench, or the joint_states effort): above it the message is rejected like "
              "NaN; forces between max_effort and max_force are saturated at max_effort",
              unit=_FORCE, min=1e-6, max=1e9),
    ParamSpec("watchdog_timeout", 0.1, "no valid input for this long: zero effort (impedance) "
              "or hold the position (admittance), element reset", unit="s", min=0.002, max=60.0),
    ParamSpec("admittance_input", "wrench", "admittance force source: the wrench topic "
              "(1 joint) or the effort field of joint_states", read_only=True,
              choices=("wrench", "joint_effort")),
    ParamSpec("wrench_axis", "x", "force axis of the WrenchStamped along the joint's positive "
              "direction (admittance_input: wrench)", read_only=True, choices=("x", "y", "z")),
    ParamSpec("design_check", "reject", "a failed design check (paper conditions (15), (48), "
              "(63)): reject the parameter set, or only warn", choices=("reject", "warn")),
    ParamSpec("output_enabled", True, "publish commands; false: publish nothing (another "
              "controller has the device), inputs and diagnostics go on, the element is reset; "
              "true again: resume from rest (admittance: from the measured position)"),
    ParamSpec("marker_frame", "world", "frame of the ~/markers arrows", frame_id=True),
    ParamSpec("marker_scale", 0.01, "arrow length per unit of friction force",
              unit="m/N", min=0.0),
    ParamSpec("marker_rate", 30.0, "~/markers publication rate", unit="Hz", min=0.1, max=100.0,
              read_only=True),
    ParamSpec("diagnostics_period", 1.0, "/diagnostics publication period", unit="s",
              min=0.1, max=60.0, read_only=True),
) + SCHEDULING_SPECS + LIFECYCLE_SPECS

#: (suffix, default, description, unit, min) of the per-joint double parameters
_JOINT_DOUBLES = (
    ("F", 4.0, "Coulomb level (coulomb, coulomb_viscous)", _FORCE, 0.0),
    ("D", 0.0, "viscous coefficient (coulomb_viscous, stribeck)", _DAMP, 0.0),
    ("Fc", 4.0, "Coulomb level (stribeck)", _FORCE, 0.0),
    ("Fs", 4.5, "static level (stribeck)", _FORCE, 0.0),
    ("vs", 0.5, "Stribeck velocity (stribeck)", "m/s, or rad/s", 0.0),
    ("delta", 2.0, "Stribeck exponent (stribeck)", "", 0.0),
    ("Cp", 4.0, "kinetic level for v > 0 (asymmetric)", _FORCE, 0.0),
    ("Cn", 4.0, "kinetic level magnitude for v < 0 (asymmetric)", _FORCE, 0.0),
    ("bp", 0.0, "viscous coefficient for v > 0 (asymmetric)", _DAMP, 0.0),
    ("bn", 0.0, "viscous coefficient for v < 0 (asymmetric)", _DAMP, 0.0),
    ("Dp", 5.0, "static level for positive forces (asymmetric)", _FORCE, 0.0),
    ("Dn", -5.0, "static level for negative forces, < 0 (asymmetric)", _FORCE, None),
    ("dv", 0.1, "stiction transition width (asymmetric)", "m/s, or rad/s", 0.0),
    ("K", 6000.0, "presliding stiffness (models B, C, D)", "N/m, or N·m/rad", 0.0),
    ("B", 10.0, "presliding damping (models B, C, D)", _DAMP, 0.0),
    ("M", 2.0, "virtual mass (models A, B, D)", "kg, or kg·m²", 0.0),
    ("mass", 0.0, "moving mass of the device, 0 = unknown; model C uses it for the "
     "static-friction stability check, eq. (63)", "kg, or kg·m²", 0.0),
)
#: per-joint parameter suffixes that feed the element (a change rebuilds it)
ELEMENT_KEYS = ("law",) + tuple(s[0] for s in _JOINT_DOUBLES)


def global_specs() -> tuple[ParamSpec, ...]:
    return GLOBAL_SPECS


def joint_specs(joint: str) -> tuple[ParamSpec, ...]:
    """The per-joint parameters ``<joint>.law``, ``<joint>.F``, … (template instantiated)."""
    specs = [ParamSpec(f"{joint}.law", "coulomb", f"friction law of joint {joint}",
                       choices=LAW_NAMES)]
    for suffix, default, text, unit, lo in _JOINT_DOUBLES:
        specs.append(ParamSpec(f"{joint}.{suffix}", default, text, unit=unit, min=lo))
    return tuple(specs)


def resolve_element(mode: str, element: str) -> str:
    """The element name for ``mode``; ``ValueError`` if it does not fit the mode."""
    if mode not in MODES:
        raise ValueError(f"mode: {mode!r} is not one of {list(MODES)}")
    if element == "auto":
        return DEFAULT_ELEMENT[mode]
    allowed = IMPEDANCE_ELEMENTS if mode == "impedance" else ADMITTANCE_ELEMENTS
    if element not in allowed:
        raise ValueError(f"element: {element!r} does not fit mode {mode!r} (use one of "
                         f"{list(allowed)}): impedance elements take a velocity, admittance "
                         "elements a force")
    return element


def validate_globals(values: Mapping[str, Any]) -> None:
    """Cross-parameter checks the descriptors cannot express; ``ValueError`` on failure."""
    joints = list(values["joints"])
    if not joints:
        raise ValueError("joints: at least one joint is needed")
    if len(set(joints)) != len(joints):
        raise ValueError(f"joints: duplicate names in {joints}")
    for j in joints:
        if not j or any(c in j for c in " ./~{}"):
            raise ValueError(f"joints: {j!r} cannot prefix parameter names (no spaces, dots, "
                             "slashes)")
    resolve_element(values["mode"], values["element"])
    if (values["mode"] == "admittance" and values["admittance_input"] == "wrench"
            and len(joints) != 1):
        raise ValueError(f"admittance_input: 'wrench' drives exactly one joint (a 1-DOF stage), "
                         f"got {len(joints)} joints; use 'joint_effort'")
