"""The documented path of paper 003's recordings and renderer export (``Recording``, ``read_csv``,
``write_csv``, ``read_bag``, ``fit_to_yaml``); the code is in :mod:`fric_core.haptics.recording` and
:mod:`fric_core.haptics.renderer_yaml`."""

from .haptics import recording as _recording, renderer_yaml as _renderer_yaml
from .haptics.recording import *  # noqa: F401,F403
from .haptics.renderer_yaml import *  # noqa: F401,F403

__all__ = _recording.__all__ + _renderer_yaml.__all__
