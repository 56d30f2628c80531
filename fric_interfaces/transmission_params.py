"""Parameters of the ``transmission_sim`` node, whose simulated arm
(:class:`fric_core.transmission.geared_arm.GearedArm`, algorithm (69) of paper 004) is built by
:func:`fric_nodes.builders.build_arm`.

Parameters (``ros__parameters``; see config/arm_transmission.yaml)::

    urdf               string    URDF file path or bundled name (planar_2link, arm7) (read-only)
    robot_description  string    URDF text; when non-empty it wins over urdf (read-only)
    joint_names        string[]  simulated joints, in command order; [] = every movable joint
    ee_frame           string    end-effector frame of the external wrench; "" = last frame
    world_frame        string    the URDF's fixed base frame name for wrenches and markers
    wrench_frame       string    frame of a wrench whose header.frame_id is empty
    gamma_u, gamma_v   double[]  asymmetry coefficients (47), one value for all or one per joint
    eta_f, eta_b       double[]  efficiencies (27); when given they replace gamma_u, gamma_v
    rotor_inertia      double[]  m: input-side inertia referred to the joint (49) [kg m²]
    damping            double[]  joint viscosity D [N m s/rad] (output side, through the gear)
    joint_friction     string    joint_friction.yaml (``fric identify``'s output, or a true-friction
                                 file): per-joint Cp, Cn, bp, bn (or law: curve, its curve) on the
                                 motor side, without the file's effort offset, and, where the
                                 file has them, eta_f/eta_b replacing gamma_u, gamma_v; "" = none
    gravity            double[3] [m/s²]
    initial_positions  double[]  joint positions at start, one per joint; [] = all 0 [rad]
    enforce_joint_limits bool    the URDF position limits are hard end stops (else only reported)
    hold_until_command bool      the joints held where they start until the first command (brakes)
    default_effort_limit double  effort limit of joints whose URDF gives none (0/absent) [N m]
    default_velocity_limit double speed limit of joints whose URDF gives none [rad/s]; every
                                 joint's speed is bounded by its limit, continuous joints wrap
                                 into (-pi, pi] (fric_core.transmission.joint_bounds)
    rate               double    internal step rate, 1/h (69) [Hz]
    sync               string    realtime | as_fast_as_possible
    duration, command_timeout, marker_frame, marker_rate, diagnostics_period
    effort_commands_topic, joint_states_topic, robot_joint_commands_topic,
    robot_joint_states_topic, robot_joint_commands_timeout
                                 both ros2_control conventions' topics ("" = off):
                                 fric_interfaces.topic_based.SIM_TOPIC_SPECS
"""

from __future__ import annotations

from .arm_setup_param import ARM_SETUP_SPEC
from .parameters import ParamSpec
from .topic_based import SIM_TOPIC_SPECS

__all__ = ["SYNCS", "SPECS"]

SYNCS = ("realtime", "as_fast_as_possible")

SPECS = (
    ParamSpec("urdf", "planar_2link", "URDF file path, or a bundled name (planar_2link, arm7)",
              read_only=True, path=True),
    ParamSpec("robot_description", "", "URDF XML text; non-empty wins over urdf",
              read_only=True),
    ParamSpec("joint_names", [], "simulated joints in command order ([] = every movable "
              "joint; the others are locked at 0)", read_only=True, list_of=str),
    ParamSpec("ee_frame", "", "end-effector frame (external wrench, force marker); '' = the "
              "URDF's last frame", read_only=True),
    ParamSpec("world_frame", "world", "name of the arm's fixed base frame (world-axes "
              "wrenches)", read_only=True),
    ParamSpec("wrench_frame", "world", "frame of a WrenchStamped whose header.frame_id is empty "
              "(world_frame or ee_frame)", read_only=True),
    ParamSpec("gamma_u", [0.0], "asymmetry coefficient gamma_u (47): one value, or one per "
              "joint", read_only=True),
    ParamSpec("gamma_v", [0.0], "asymmetry coefficient gamma_v (47): >= 1 is self-locking: one "
              "value, or one per joint", read_only=True),
    ParamSpec("eta_f", [], "forward efficiencies (27); non-empty: replace gamma_u, gamma_v "
              "(with eta_b)", read_only=True, list_of=float),
    ParamSpec("eta_b", [], "backward efficiencies (27); <= 0 is self-locking", read_only=True,
              list_of=float),
    ParamSpec("rotor_inertia", [0.01], "input-side inertia m referred to the joint (49)",
              unit="kg m^2", min=0.0, read_only=True),
    ParamSpec("damping", [0.0], "joint viscosity D", unit="N m s/rad", min=0.0,
              read_only=True),
    ParamSpec("joint_friction", "", "joint_friction.yaml (fric identify's layout) with each "
              "joint's friction and gear efficiencies; '' = none", read_only=True, path=True),
    ParamSpec("gravity", [0.0, 0.0, -9.81], "gravity in the world frame", unit="m/s^2",
              read_only=True),
    ParamSpec("initial_positions", [], "joint positions at start, one per joint in joint_names "
              "order ([] = all 0)", unit="rad", read_only=True, list_of=float),
    ParamSpec("enforce_joint_limits", True, "the URDF's position limits are hard end stops "
              "(unilateral constraints: a joint never passes its limit); false: only reported",
              read_only=True),
    ParamSpec("default_effort_limit", 1000.0, "effort limit of a joint whose URDF <limit "
              "effort> is absent, 0 or not finite (commands beyond it are clipped)",
              unit="N m (N: prismatic)", min=1e-6, max=1e9, read_only=True),
    ParamSpec("default_velocity_limit", 10.0, "speed limit of a joint whose URDF <limit "
              "velocity> is absent, 0 or not finite; a step ending faster than a joint's limit "
              "is cut back to it", unit="rad/s (m/s: prismatic)", min=1e-6, max=1e6,
              read_only=True),
    ParamSpec("hold_until_command", False, "true: the joints are held where they start (a real "
              "arm's brakes) until the first valid command arrives; false: gravity and wrenches "
              "move the arm from the start", read_only=True),
    ParamSpec("rate", 1000.0, "internal step rate 1/h; one joint_states per step", unit="Hz",
              min=1.0, max=20000.0, read_only=True),
    ParamSpec("sync", "realtime", "realtime: steps follow the wall clock; as_fast_as_possible: "
              "steps back to back (simulated time only)", read_only=True, choices=SYNCS),
    ParamSpec("duration", 0.0, "simulated time after which the node exits 0; 0 = forever",
              unit="s", min=0.0, read_only=True),
    ParamSpec("command_timeout", 0.1, "a command older than this (simulated time) is dropped: "
              "zero actuator torque", unit="s", min=1e-4, max=3600.0),
    ParamSpec("marker_frame", "world", "frame of the ~/markers", read_only=True,
              frame_id=True),
    ParamSpec("marker_rate", 20.0, "~/markers rate", unit="Hz", min=0.1, max=100.0,
              read_only=True),
    ParamSpec("diagnostics_period", 1.0, "/diagnostics period", unit="s", min=0.05, max=60.0,
              read_only=True),
    ARM_SETUP_SPEC,
) + SIM_TOPIC_SPECS
