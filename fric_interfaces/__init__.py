"""The ROS contract of fric: topic and service names, message types, parameter declarations with
their descriptors, and conversions between ROS messages and the numpy arrays fric_core works on."""
