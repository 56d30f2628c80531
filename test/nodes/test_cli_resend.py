"""``fric param|lifecycle`` queries are sent again when no answer comes (found in a fresh-clone
CI run: ``fric lifecycle get`` waited its 10 s for an answer that never came, the service having
been discovered from the client's side only; DDS discovery is two-sided, and a response sent
before the server matched the client's response reader is lost).

Here the first request is made to go unanswered for 4 s (a server whose first call blocks, in a
multi-threaded executor), which looks the same from the client: a query is answered by its
second sending after ``_RESEND`` s; a call with an effect is sent once and waits.
"""

from __future__ import annotations

import threading
import time

import pytest


def test_a_query_is_sent_again_and_a_call_with_an_effect_is_not(ros):
    import rclpy
    from rclpy.callback_groups import ReentrantCallbackGroup
    from rclpy.executors import MultiThreadedExecutor
    from std_srvs.srv import Trigger

    from fric_nodes.tools import cli_ros

    server = rclpy.create_node("resend_server")
    calls = []

    def answer(req, resp):
        calls.append(time.monotonic())
        if len(calls) == 1:
            time.sleep(4.0)  # the first request: as good as lost for the client
        resp.success, resp.message = True, f"answer {len(calls)}"
        return resp

    server.create_service(Trigger, "resend_check", answer,
                          callback_group=ReentrantCallbackGroup())
    ex = MultiThreadedExecutor(num_threads=3)
    ex.add_node(server)
    spin = threading.Thread(target=ex.spin, daemon=True)
    spin.start()
    session = cli_ros._Session()
    try:
        # the second sending answered while the first was still blocked
        r = session.call(Trigger, "/resend_check", Trigger.Request(), 10.0, 8.0, idempotent=True)
        assert r.message == "answer 2" and len(calls) == 2
        time.sleep(4.0)                      # let the blocked first call finish
        calls.clear()
        r = session.call(Trigger, "/resend_check", Trigger.Request(), 10.0, 8.0)
        assert r.message == "answer 1" and len(calls) == 1   # sent once: it waited
        calls.clear()  # the next call blocks again: a short timeout names the service
        with pytest.raises(cli_ros._Fail, match=r"^/resend_check: no answer within 1 s"):
            session.call(Trigger, "/resend_check", Trigger.Request(), 10.0, 1.0)
    finally:
        session.close()
        ex.shutdown()
        server.destroy_node()
