"""QoS profiles of the fric topics, and why.

The 1 kHz loop topics (``joint_states``, ``wrench``, the controller ``commands``) use

* publishers: RELIABLE, keep-last 1 — a reliable writer is matched by both reliable and
  best-effort readers, so ros2_control controllers (reliable subscriptions), RViz, ``ros2 topic
  echo`` and fric's own nodes all receive it; depth 1 because only the newest sample matters;
* subscriptions: BEST_EFFORT, keep-last 1 — a best-effort reader matches every writer, never
  blocks a writer on retransmissions, and a late sample is worthless to a control loop: the
  node acts on the newest one and detects gaps from the header stamps instead.

Markers and diagnostics are for people and tools: RELIABLE, keep-last 10 (RViz and the
diagnostic aggregator subscribe reliably).
"""

#: name: (depth, reliability) — CONTROL_PUB: publishers of the control-loop topics; CONTROL_SUB:
#: subscriptions to them; INFO: markers and diagnostics. All keep-last, volatile.
_PROFILES = {"CONTROL_PUB": (1, "RELIABLE"), "CONTROL_SUB": (1, "BEST_EFFORT"),
             "INFO": (10, "RELIABLE")}

__all__ = list(_PROFILES)


def __getattr__(name: str):
    """The profiles are rclpy objects: made on first use, so that the contract imports without
    rclpy (then cached as module attributes)."""
    if name not in _PROFILES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

    depth, reliability = _PROFILES[name]
    profile = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=depth,
                         reliability=getattr(ReliabilityPolicy, reliability),
                         durability=DurabilityPolicy.VOLATILE)
    globals()[name] = profile
    return profile
