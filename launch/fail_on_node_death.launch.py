"""Make ``ros2 launch`` end with a non-zero status when a node dies, as ``fric launch`` does.

Included first by every fric XML launch file::

    <include file="$(dirname)/fail_on_node_death.launch.py"/>

``ros2 launch`` alone returns 0 whatever its nodes do: ``on_exit="shutdown"`` ends the launch but
still with status 0, and a node without it may die unnoticed while the others run on. This file
registers one process-exit handler for every process of the launch: a process that exits with a
non-zero status before the launch is shutting down (a failed identification, a crashed node),
or with anything but a clean stop (0, or the SIGINT/SIGTERM the launch sent it: -2, -15, 130,
143) while it is shutting down, raises. ``ros2 launch`` then logs ``Caught exception in launch:
<node> exited with code N``, stops every other node (SIGINT, SIGTERM, SIGKILL) and exits 1.

A node exiting 0 without ``on_exit="shutdown"`` ends nothing (the others go on), under both
runners. ``fric launch`` does not run Python: it recognises this include by its file name and
applies the same rule, which is its own (docs/launch.md).
"""

import signal

from launch import LaunchDescription
from launch.actions import RegisterEventHandler
from launch.event_handlers import OnProcessExit, OnShutdown

_CLEAN_STOP = {0, -signal.SIGINT, -signal.SIGTERM, 128 + signal.SIGINT, 128 + signal.SIGTERM}


class NodeDied(RuntimeError):
    """A launched process failed: the launch ends with status 1."""


def generate_launch_description() -> LaunchDescription:
    shutting_down = []

    def on_shutdown(_event, _context):
        shutting_down.append(True)

    def on_exit(event, _context):
        code = event.returncode
        if code == 0 or (shutting_down and code in _CLEAN_STOP):
            return None
        when = " while shutting down" if shutting_down else ""
        raise NodeDied(f"{event.process_name} (pid {event.pid}) "
                       f"exited with code {code}{when}")

    return LaunchDescription([
        RegisterEventHandler(OnShutdown(on_shutdown=on_shutdown)),
        RegisterEventHandler(OnProcessExit(on_exit=on_exit)),
    ])
