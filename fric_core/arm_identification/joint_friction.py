"""``joint_friction.yaml`` (re-export): the type lives in :mod:`fric_core.joint_friction`, below
both of its users (identification writes it; the compensator and the simulator read it)."""

from ..joint_friction import *  # noqa: F401,F403
from ..joint_friction import __all__  # noqa: F401
