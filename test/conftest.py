# DDS rule: only loopback traffic is allowed on developer machines and CI. Every process that
# may start DDS (rclpy.init, a node, `fric launch`) must run with
# ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST and a ROS_DOMAIN_ID of its own, so concurrent test runs
# never see each other's nodes. This file sets both at import time, before any test imports
# rclpy; subprocesses started by tests inherit os.environ.
#
# The tests are split by what they need (markers follow the folder: pytest_collection_modifyitems):
#   core/         numpy/scipy physics and the papers' figures: no rclpy, no process   (no marker)
#   nodes/        the contract, one node in-process or as a process, the hardware link   ("ros")
#   integration/  launch files, node pipelines, example and bench scripts    ("ros", "slow")
#   conformance/  the launch files and nodes under the real ros2 CLI (skipped without it) ("ros")
# `pytest -m "not ros" test` runs the physics alone; `pytest test/core` is the same set.
import os
import sys
from pathlib import Path

import pytest

_HERE = Path(__file__).resolve().parent
# test-support modules at this level (example_scripts) and in each folder (a test may reuse another
# folder's helpers, e.g. integration's identify-and-render verdict the lossy runs of nodes/)
for _p in (_HERE, _HERE / "core", _HERE / "nodes", _HERE / "integration"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
os.environ["ROS_DOMAIN_ID"] = str(os.getpid() % 100 + 1)
os.environ["MPLBACKEND"] = "Agg"


@pytest.fixture(scope="module")
def ros():
    """rclpy initialised for the tests of one module (node tests build nodes in-process)."""
    import rclpy

    rclpy.init()
    yield
    rclpy.shutdown()


def pytest_configure(config):
    config.addinivalue_line("markers", "ros: needs rclpy/DDS or starts processes (test/nodes, "
                            "test/integration)")
    config.addinivalue_line("markers", "slow: whole pipelines and example/bench scripts "
                            "(test/integration)")


def pytest_collection_modifyitems(config, items):
    for item in items:
        part = Path(str(item.fspath)).resolve().relative_to(_HERE).parts[0]
        if part in ("nodes", "integration", "conformance"):
            item.add_marker(pytest.mark.ros)
        if part == "integration":
            item.add_marker(pytest.mark.slow)
