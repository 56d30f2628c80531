"""The ``haptic_stage``'s RViz markers, built once and updated in place: the carriage, the sample
block (sim, with a tool), the travel limits, an arrow for the force (the scripted hand's, or the
load cell's) and a label."""

from __future__ import annotations

from builtin_interfaces.msg import Duration
from geometry_msgs.msg import Point
from std_msgs.msg import ColorRGBA
from visualization_msgs.msg import Marker, MarkerArray

from fric_interfaces.rviz_check import marker_lifetime

__all__ = ["StageMarkers"]


def _marker(ns: str, kind: int, rgba, scale, life: Duration) -> Marker:
    m = Marker(ns=ns, id=0, type=kind, action=Marker.ADD)
    m.pose.orientation.w = 1.0
    m.scale.x, m.scale.y, m.scale.z = scale
    m.color = ColorRGBA(r=rgba[0], g=rgba[1], b=rgba[2], a=rgba[3])
    m.lifetime = life
    return m


class StageMarkers:
    """The stage's marker array, in :attr:`array`.

    Parameters
    ----------
    x_min, x_max
        The travel (m), drawn as two red lines.
    hand_location
        Where the scripted hand pushes (``"carriage"`` or ``"tool"``), or None (no hand: the
        arrow shows the load-cell force).
    tool
        Whether a sample block beyond the load cell is drawn.
    period
        The publication period [s] (1 / ``marker_rate``): the markers live
        ``fric_interfaces.rviz_check.marker_lifetime(period)``, so they do not blink out between
        two arrays at a low rate.
    offset
        (x, y, z) [m] where the stage's origin is drawn in the marker frame (``marker_offset``):
        two stages in one RViz view side by side.
    """

    def __init__(self, x_min: float, x_max: float, hand_location: str | None, tool: bool,
                 period: float = 0.05, offset=(0.0, 0.0, 0.0)):
        self.hand_location = hand_location
        ox, oy, oz = (float(c) for c in offset)
        self._ox = ox
        self.tool = tool
        sec, nanosec = marker_lifetime(period)
        life = Duration(sec=sec, nanosec=nanosec)
        self._carriage = _marker("carriage", Marker.CUBE, (0.6, 0.6, 0.65, 1.0),
                                 (0.02, 0.03, 0.02), life)
        self._block = _marker("sample", Marker.CUBE, (0.8, 0.5, 0.2, 1.0), (0.02, 0.025, 0.015),
                              life)
        self._arrow = _marker("force", Marker.ARROW, (0.1, 0.8, 0.2, 1.0), (0.004, 0.008, 0.008),
                              life)
        self._arrow.points = [Point(), Point()]
        limits = _marker("travel_limits", Marker.LINE_LIST, (0.9, 0.1, 0.1, 1.0),
                         (0.001, 0.0, 0.0), life)
        limits.points = [Point(x=x, y=y) for x in (x_min, x_max) for y in (-0.03, 0.03)]
        self._text = _marker("label", Marker.TEXT_VIEW_FACING, (1.0, 1.0, 1.0, 1.0),
                             (0.0, 0.0, 0.008), life)
        self._text.pose.position.z = 0.03
        # the offset: the poses' y and z here; x in update (the arrow's and the limits' points
        # are relative to their poses)
        for m in (self._carriage, self._block, self._arrow, limits, self._text):
            m.pose.position.y += oy
            m.pose.position.z += oz
        limits.pose.position.x = ox
        self.array = MarkerArray()
        self.array.markers = [self._carriage, self._arrow, limits, self._text]
        if tool:
            self.array.markers.insert(1, self._block)

    def update(self, stamp, frame: str, joint: str, last) -> None:
        """Move the markers to the reading ``last`` (``StageReading`` or ``StateFrame``)."""
        for m in self.array.markers:
            m.header.frame_id = frame
            m.header.stamp = stamp
        x = float(last.position)
        lc = -float(last.force)  # force of the object/operator on the stage
        self._carriage.pose.position.x = x + self._ox
        a = self._arrow
        a.pose.position.x = self._ox
        if self.hand_location is not None:
            # the hand's force, drawn where it pushes (carriage, or the tool side)
            h = float(last.hand_force)
            at = float(last.tool_position) if self.hand_location == "tool" else x
            a.points[0].x, a.points[1].x = at - 0.002 * h, at
            a.ns = "hand_force"
            label = f"hand {h:+.2f} N"
        else:
            a.points[0].x, a.points[1].x = x, x + 0.002 * lc
            a.ns = "load_cell_force"
            label = f"load cell {lc:+.2f} N"
        if self.tool:
            self._block.pose.position.x = float(last.tool_position) + 0.02 + self._ox
        self._text.pose.position.x = x + self._ox
        self._text.text = f"{joint}: x {x * 1e3:+.2f} mm, v {last.velocity:+.3f} m/s, {label}"
