"""The ``friction_renderer``'s RViz markers, built once and updated in place: per joint an arrow
(the friction force on the device, blue stuck / orange slipping) and a label; for a planar contact
(paper 002) the patch at the end effector, its force as an arrow and its torque as text."""

from __future__ import annotations

from builtin_interfaces.msg import Duration
from geometry_msgs.msg import Point
from std_msgs.msg import ColorRGBA
from visualization_msgs.msg import Marker, MarkerArray

from fric_interfaces.rviz_check import marker_lifetime

__all__ = ["RendererMarkers", "STICK", "SLIP"]

STICK = ColorRGBA(r=0.15, g=0.35, b=1.0, a=1.0)  # blue
SLIP = ColorRGBA(r=1.0, g=0.55, b=0.0, a=1.0)  # orange
_WHITE = ColorRGBA(r=1.0, g=1.0, b=1.0, a=1.0)


def _marker(ns: str, kind: int, life: Duration) -> Marker:
    m = Marker(ns=ns, id=0, type=kind, action=Marker.ADD)
    m.pose.orientation.w = 1.0
    m.lifetime = life
    return m


class RendererMarkers:
    """The marker array of ``joints`` (plus the planar patch when ``planar``), in :attr:`array`.

    Parameters
    ----------
    joints
        The rendered joints, in command order.
    planar
        Whether a planar contact is rendered (three more markers at the end).
    period
        The publication period [s] (1 / ``marker_rate``): the markers live
        ``fric_interfaces.rviz_check.marker_lifetime(period)``, so they do not blink out between
        two arrays at a low rate.
    """

    def __init__(self, joints, planar: bool, period: float = 1.0 / 30.0):
        self.joints = tuple(joints)
        self.array = arr = MarkerArray()
        sec, nanosec = marker_lifetime(period)
        life = Duration(sec=sec, nanosec=nanosec)
        for i, _ in enumerate(self.joints):
            a = Marker(ns="friction", id=i, type=Marker.ARROW, action=Marker.ADD)
            a.points = [Point(y=0.1 * i), Point(y=0.1 * i)]
            a.scale.x, a.scale.y, a.scale.z = 0.01, 0.02, 0.02
            a.pose.orientation.w = 1.0
            a.lifetime = life
            t = Marker(ns="friction_label", id=i, type=Marker.TEXT_VIEW_FACING,
                       action=Marker.ADD)
            t.scale.z = 0.02
            t.color = _WHITE
            t.pose.orientation.w = 1.0
            t.lifetime = a.lifetime
            arr.markers += [a, t]
        if planar:  # the patch, its force and torque at the end effector
            disc = _marker("planar_patch", Marker.CYLINDER, life)
            disc.scale.z = 0.002
            arrow = _marker("planar_force", Marker.ARROW, life)
            arrow.points = [Point(), Point()]
            arrow.scale.x, arrow.scale.y, arrow.scale.z = 0.005, 0.01, 0.01
            text = _marker("planar_label", Marker.TEXT_VIEW_FACING, life)
            text.scale.z = 0.015
            text.color = _WHITE
            arr.markers += [disc, arrow, text]

    def update(self, stamp, frame: str, scale: float, pos, force, stuck) -> None:
        """Per joint: the arrow from ``pos`` along ``scale`` × ``force``, its colour and label."""
        ms = self.array.markers
        for i, j in enumerate(self.joints):
            a, t = ms[2 * i], ms[2 * i + 1]
            x = float(pos[i])
            a.header.frame_id = t.header.frame_id = frame
            a.header.stamp = t.header.stamp = stamp
            a.points[0].x = x
            a.points[1].x = x + scale * float(force[i])
            a.color = STICK if stuck[i] else SLIP
            t.pose.position.x = x
            t.pose.position.y = 0.1 * i
            t.pose.position.z = 0.05
            t.text = f"{j}: {'stick' if stuck[i] else 'slip'} {force[i]:+.2f}"

    def update_planar(self, stamp, frame: str, scale: float, x: float, y: float, f, stuck: bool,
                      size: float) -> None:
        """The planar patch at the end effector (x, y): a disc of diameter ``size`` coloured
        stick/slip, the friction force ``f[:2]`` as an arrow, the torque ``f[2]`` as text."""
        disc, arrow, text = self.array.markers[-3:]
        for m in (disc, arrow, text):
            m.header.frame_id = frame
            m.header.stamp = stamp
        disc.pose.position.x, disc.pose.position.y = x, y
        disc.scale.x = disc.scale.y = size
        c = STICK if stuck else SLIP
        disc.color = ColorRGBA(r=c.r, g=c.g, b=c.b, a=0.6)
        arrow.points[0].x, arrow.points[0].y = x, y
        arrow.points[1].x = x + scale * float(f[0])
        arrow.points[1].y = y + scale * float(f[1])
        arrow.color = STICK if stuck else SLIP
        text.pose.position.x, text.pose.position.y, text.pose.position.z = x, y, 0.03
        text.text = (f"{'stick' if stuck else 'slip'} f=({f[0]:+.2f}, {f[1]:+.2f}) "
                     f"tau={f[2]:+.3f}")
