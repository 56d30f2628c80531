"""The documented path of paper 003's fit (``fit_friction``, ``FrictionFit``); the code is in
:mod:`fric_core.haptics.identification`."""

from .haptics.identification import *  # noqa: F401,F403
from .haptics.identification import __all__  # noqa: F401
