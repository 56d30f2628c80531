# DDS rule: only loopback traffic is allowed on developer machines and CI. Every process that may start
# DDS (rclpy.init, a node, `fric launch`) must run with ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST and a
# ROS_DOMAIN_ID of its own, so concurrent test runs never see each other's nodes. This file sets both at
# import time, before any test imports rclpy; subprocesses started by tests inherit os.environ.
import os

import pytest

os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
os.environ['ROS_DOMAIN_ID'] = str(os.getpid() % 100 + 1)
os.environ['MPLBACKEND'] = 'Agg'


@pytest.fixture(scope="module")
def ros():
    """rclpy initialised for the tests of one module (node tests build nodes in-process)."""
    import rclpy

    rclpy.init()
    yield
    rclpy.shutdown()
