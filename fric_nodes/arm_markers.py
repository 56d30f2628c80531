"""The arm simulators' ``~/markers`` (``transmission_sim``, ``mujoco_sim``): the arm as a line
from the base through its joints to the end effector, the end-effector force as an arrow, and
each joint a sphere, red while stuck in static friction, green while slipping."""

from __future__ import annotations

from typing import Sequence

import numpy as np
from builtin_interfaces.msg import Duration
from geometry_msgs.msg import Point
from std_msgs.msg import ColorRGBA
from visualization_msgs.msg import Marker, MarkerArray

from fric_interfaces.rviz_check import marker_lifetime

__all__ = ["arm_markers", "FORCE_SCALE", "MIN_ARROW"]

FORCE_SCALE = 0.02  # marker arrow length per newton [m/N]
MIN_ARROW = 1e-3    # a shorter force arrow (< 0.05 N) is not drawn [m]


def _point(p) -> Point:
    return Point(x=float(p[0]), y=float(p[1]), z=float(p[2]))


def arm_markers(frame: str, stamp, period: float, joint_names: Sequence[str], joint_points,
                ee_point, force, stuck) -> MarkerArray:
    """The markers of one arm pose.

    Parameters
    ----------
    frame, stamp
        The markers' header (``stamp`` a builtin_interfaces Time).
    period
        The markers' publishing period [s]: each marker outlives it.
    joint_names
        The joints, one sphere each (its ``text`` the name).
    joint_points : (n, 3) array_like
        The joints' origins in ``frame`` [m].
    ee_point, force : (3,) array_like
        The end effector's origin [m] and the force on it [N] (zero: the arrow is deleted
        rather than drawn with zero length: RViz draws a stray head for a degenerate arrow).
    stuck : (n,) array_like of bool
        The joints held by static friction.

    Returns
    -------
    MarkerArray
        The arrow (``ee_force``), the line (``links``) and the spheres (``joint_stuck``).
    """
    sec, nsec = marker_lifetime(period)
    life = Duration(sec=sec, nanosec=nsec)
    out = MarkerArray()
    p = np.asarray(ee_point, dtype=float)
    f = np.asarray(force, dtype=float)
    drawn = FORCE_SCALE * float(np.linalg.norm(f)) >= MIN_ARROW
    arrow = Marker(type=Marker.ARROW, action=Marker.ADD if drawn else Marker.DELETE,
                   ns="ee_force", id=0, lifetime=life)
    arrow.header.frame_id, arrow.header.stamp = frame, stamp
    arrow.points = [_point(p), _point(p + FORCE_SCALE * f)]
    arrow.scale.x, arrow.scale.y, arrow.scale.z = 0.01, 0.02, 0.03
    arrow.color = ColorRGBA(r=1.0, g=0.6, b=0.0, a=1.0)
    arrow.pose.orientation.w = 1.0
    out.markers.append(arrow)
    links = Marker(type=Marker.LINE_STRIP, action=Marker.ADD, ns="links", id=0, lifetime=life)
    links.header.frame_id, links.header.stamp = frame, stamp
    links.pose.orientation.w = 1.0
    links.scale.x = 0.02
    links.color = ColorRGBA(r=0.7, g=0.7, b=0.75, a=1.0)
    links.points = [Point()] + [_point(o) for o in joint_points] + [_point(p)]  # from the base
    out.markers.append(links)
    for i, (j, origin) in enumerate(zip(joint_names, joint_points)):
        s = Marker(type=Marker.SPHERE, action=Marker.ADD, ns="joint_stuck", id=i,
                   lifetime=life, text=j)
        s.header.frame_id, s.header.stamp = frame, stamp
        s.pose.position = _point(origin)
        s.pose.orientation.w = 1.0
        s.scale.x = s.scale.y = s.scale.z = 0.05
        s.color = (ColorRGBA(r=0.9, g=0.1, b=0.1, a=0.9) if stuck[i]
                   else ColorRGBA(r=0.1, g=0.8, b=0.1, a=0.9))
        out.markers.append(s)
    return out
