"""Module-level tasks for fric fleet's process pool in tests (a spawned worker imports them by
name): one that kills its worker process for the path ``die``, one that returns at once."""

import os


def dying_task(key, path, topic, options):
    """Exit the worker without a word for ``path == "die"``; else an empty result."""
    if path == "die":
        os._exit(3)
    return {"key": key, "rows": [], "seconds": 0.0, "pid": os.getpid()}
