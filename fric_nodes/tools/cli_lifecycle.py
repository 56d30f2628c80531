"""``fric lifecycle``: ``ros2 lifecycle`` for an install without the ``ros2`` command.

    fric lifecycle nodes                    the managed (lifecycle) nodes running (none within
                                            ``--wait``: one line saying so, in which
                                            ROS_DOMAIN_ID, and exit status 1)
    fric lifecycle get NODE                 its state, e.g. ``active [3]``
    fric lifecycle list NODE                the transitions it offers from its current state
    fric lifecycle set NODE TRANSITION      a transition by label (configure, activate,
                                            deactivate, cleanup, shutdown) or id

fric's managed nodes (friction_renderer, haptic_stage, friction_compensator; ``autostart`` puts
them in ``active`` at start-up) implement the standard lifecycle services (``<node>/get_state``,
``change_state``, ``get_available_transitions``: lifecycle_msgs), so this command and the real
``ros2 lifecycle`` drive them alike. Waits and failures follow :mod:`.cli_ros`: bounded waits,
one line saying what was looked for and what was seen, exit status 0 done, 1 refused / failed /
not found, 2 bad arguments, 130 interrupted.
"""
from __future__ import annotations

import argparse
import time

from .cli_ros import _absolute, _Fail, _run, _Session, _waits, _where

__all__ = ["add_subcommand"]

_GET_STATE = "lifecycle_msgs/srv/GetState"


def _managed_nodes(session: _Session) -> list[str]:
    return sorted(name[: -len("/get_state")] for name, types in session.services().items()
                  if name.endswith("/get_state") and _GET_STATE in types)


def _find_managed(session: _Session, node: str, wait: float) -> None:
    """Wait until ``node`` offers its lifecycle services; _Fail naming what was seen. A node
    whose parameter services are discovered without a ``get_state`` beside them for a further
    second is not a managed node (its services arrive together, within discovery's jitter)."""
    want, params = f"{node}/get_state", f"{node}/get_parameters"
    since: list[float] = []

    def settled() -> bool:
        services = session.services()
        if _GET_STATE in services.get(want, ()):
            return True
        if params in services:
            since.append(time.monotonic())
            return since[-1] - since[0] >= 1.0
        return False

    session.wait_for(settled, wait)
    if _GET_STATE in session.services().get(want, ()):
        return
    seen = session.nodes()
    if node in seen or params in session.services():
        raise _Fail(f"node {node} is running but is not a managed (lifecycle) node; managed "
                    f"nodes: {', '.join(_managed_nodes(session)) or 'none'}")
    raise _Fail(f"node {node} not found within {wait:g} s ({_where()}); nodes seen: "
                f"{', '.join(seen) or 'none'} (is it running, in this ROS_DOMAIN_ID?)")


def _state(session: _Session, node: str, ns) -> str:
    from lifecycle_msgs.srv import GetState
    r = session.call(GetState, f"{node}/get_state", GetState.Request(), ns.wait, ns.timeout,
                     idempotent=True)
    return f"{r.current_state.label} [{r.current_state.id}]"


def _transitions(session: _Session, node: str, ns) -> list:
    from lifecycle_msgs.srv import GetAvailableTransitions
    r = session.call(GetAvailableTransitions, f"{node}/get_available_transitions",
                     GetAvailableTransitions.Request(), ns.wait, ns.timeout, idempotent=True)
    return list(r.available_transitions)


def _label(t) -> str:
    return f"{t.transition.label} [{t.transition.id}]"


def _pick(available: list, wanted: str):
    """The available transition ``wanted`` names: its label, its id, or ``shutdown`` for the
    state's own shutdown transition (``unconfigured_shutdown``, ...)."""
    for t in available:
        label = t.transition.label
        if wanted in (label, str(t.transition.id)) or (
                wanted == "shutdown" and label.endswith("_shutdown")):
            return t
    return None


def _lifecycle(session: _Session, ns: argparse.Namespace) -> int:
    if ns.action == "nodes":
        if ns.node is not None:
            raise _Fail("`fric lifecycle nodes` takes no node")
        session.wait_for(lambda: bool(_managed_nodes(session)), ns.wait)
        managed = _managed_nodes(session)
        if not managed:  # not silence and 0: a script can tell "none" from a list
            seen = session.nodes()
            raise _Fail(f"no managed (lifecycle) node found within {ns.wait:g} s ({_where()}); "
                        f"nodes seen: {', '.join(seen) or 'none'} (fric's managed nodes: "
                        f"friction_renderer, haptic_stage, friction_compensator; is one "
                        f"running, in this ROS_DOMAIN_ID?)")
        for n in managed:
            print(n)
        return 0
    if ns.node is None:
        raise _Fail(f"give the node: fric lifecycle {ns.action} NODE"
                    + (" TRANSITION" if ns.action == "set" else ""))
    node = _absolute(ns.node)
    if ns.action != "set" and ns.transition is not None:
        raise _Fail(f"`fric lifecycle {ns.action}` takes only a node")
    _find_managed(session, node, ns.wait)
    if ns.action == "get":
        print(_state(session, node, ns))
        return 0
    available = _transitions(session, node, ns)
    if ns.action == "list":
        for t in available:
            print(f"- {_label(t)}: {t.start_state.label} -> {t.goal_state.label}")
        return 0
    if ns.transition is None:
        raise _Fail("give the transition: fric lifecycle set NODE TRANSITION (e.g. deactivate)")
    chosen = _pick(available, ns.transition)
    if chosen is None:
        offered = ", ".join(t.transition.label for t in available) or "none"
        raise _Fail(f"{node} is {_state(session, node, ns)}: no transition {ns.transition!r} "
                    f"from there (available: {offered})")
    from lifecycle_msgs.msg import Transition
    from lifecycle_msgs.srv import ChangeState
    r = session.call(ChangeState, f"{node}/change_state",
                     ChangeState.Request(transition=Transition(id=chosen.transition.id)),
                     ns.wait, ns.timeout)
    now = _state(session, node, ns)
    if not r.success:
        raise _Fail(f"{node}: transition {chosen.transition.label} failed; now {now} (the "
                    f"node's log says why)")
    print(f"{node}: {chosen.transition.label}: now {now}")
    return 0


def add_subcommand(subparsers: argparse._SubParsersAction) -> None:
    """Register ``lifecycle`` on the ``fric`` parser."""
    p = subparsers.add_parser(
        "lifecycle", help="get or change a managed node's state (ros2 lifecycle)",
        description="The lifecycle of fric's managed nodes (friction_renderer, haptic_stage, "
                    "friction_compensator) through their standard lifecycle services: `nodes`, "
                    "`get NODE`, `list NODE`, `set NODE TRANSITION` (configure, activate, "
                    "deactivate, cleanup, shutdown, or a transition id). Exit status: 0 done, "
                    "1 refused or not found (`nodes`: no managed node within --wait).")
    p.add_argument("action", choices=("nodes", "get", "list", "set"))
    p.add_argument("node", nargs="?", help="the node's name, e.g. /friction_renderer")
    p.add_argument("transition", nargs="?", help="set: the transition's label or id")
    _waits(p, 10.0)
    p.set_defaults(func=lambda ns: _run(f"fric lifecycle {ns.action}", _lifecycle, ns))
