"""Topic, service and node names of the fric ROS interface (CONTRACT.md).

Topic names are relative, so namespaces and remaps work; they follow ros2_control's conventions so
a fric node can stand in for, or sit beside, ``joint_state_broadcaster`` and
``forward_command_controller``.
"""

# Topics
JOINT_STATES = "joint_states"  #: sensor_msgs/JointState
EFFORT_COMMANDS = "effort_controller/commands"  #: std_msgs/Float64MultiArray, one per joint
POSITION_COMMANDS = "position_controller/commands"  #: std_msgs/Float64MultiArray
WRENCH = "wrench"  #: geometry_msgs/WrenchStamped
#: sensor_msgs/Imu (as ros2_control's imu_sensor_broadcaster): linear_acceleration.x along +x
ACCELEROMETER = "accelerometer"
MARKERS = "~/markers"  #: visualization_msgs/MarkerArray
DIAGNOSTICS = "/diagnostics"  #: diagnostic_msgs/DiagnosticArray
#: std_msgs/Float64MultiArray: a controller's effort commands into friction_compensator, which
#: publishes them plus the friction compensation on EFFORT_COMMANDS (parameter command_topic)
COMPENSATOR_EFFORT_IN = "friction_compensator/effort_in"
#: sensor_msgs/JointState: ros2_control's topic-based hardware interface publishes its commands
#: here (by name, effort filled, NaN = no command yet) and reads the joint states from
#: ROBOT_JOINT_STATES; the simulators serve both (fric_interfaces.topic_based)
ROBOT_JOINT_COMMANDS = "/robot_joint_commands"
ROBOT_JOINT_STATES = "/robot_joint_states"  #: sensor_msgs/JointState

# Services
#: std_srvs/Trigger on friction_identifier (-> friction_identifier/identify)
IDENTIFY = "~/identify"

# Executables / default node names
FRICTION_RENDERER = "friction_renderer"
TRANSMISSION_SIM = "transmission_sim"
MUJOCO_SIM = "mujoco_sim"
FRICTION_IDENTIFIER = "friction_identifier"
HAPTIC_STAGE = "haptic_stage"
FRICTION_COMPENSATOR = "friction_compensator"
