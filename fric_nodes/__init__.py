"""rclpy nodes of the fric package: friction_renderer, transmission_sim, friction_identifier and
haptic_stage, thin ROS 2 wrappers around the pure numpy/scipy code in fric_core."""
