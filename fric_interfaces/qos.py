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

from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

#: publishers of the control-loop topics
CONTROL_PUB = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1,
                         reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.VOLATILE)
#: subscriptions to the control-loop topics
CONTROL_SUB = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1,
                         reliability=ReliabilityPolicy.BEST_EFFORT,
                         durability=DurabilityPolicy.VOLATILE)
#: markers and diagnostics
INFO = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=10,
                  reliability=ReliabilityPolicy.RELIABLE,
                  durability=DurabilityPolicy.VOLATILE)
