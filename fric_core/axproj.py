"""The documented path of paper 004's projection (``axproj``, ``AxprojSolver``,
``axproj_projection``); the code is in :mod:`fric_core.transmission.projection`."""

from .transmission.projection import *  # noqa: F401,F403
from .transmission.projection import __all__  # noqa: F401
