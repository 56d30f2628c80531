"""Managed (lifecycle) fric nodes: the ROS 2 node state machine (``unconfigured`` →
``inactive`` → ``active`` → ``finalized``; ``ros2 lifecycle set/get``, the ``lifecycle_msgs``
services ``~/change_state``, ``~/get_state``, … and ``~/transition_event``) on top of
:class:`fric_nodes._node_util.FricNode`, with rclpy's own ``LifecycleNodeMixin``.

A node class lists :class:`ManagedNode` before ``FricNode``
(``class FrictionRenderer(ManagedNode, FricNode)``). Construction runs ``FricNode``'s as before:
``_setup`` declares and checks the parameters and builds the node's objects, so bad parameters
still end the process at start-up with ``bad parameters: …``; then the state machine and its
services are added. What each state means is the node's, through five hooks it may define
(each returns None, or raises ``ValueError``: the transition fails with that reason logged and
the node stays where it was):

* ``_lc_configure()`` — ``unconfigured`` → ``inactive``: (re)build from the current parameters;
* ``_lc_activate()`` — ``inactive`` → ``active``: start commanding;
* ``_lc_deactivate()`` — ``active`` → ``inactive``: the safe output at once, then command nothing;
* ``_lc_cleanup()`` — ``inactive`` → ``unconfigured``: drop the run's state;
* ``_lc_shutdown(previous)`` — any → ``finalized`` (``previous`` is the state's label): after
  ``_lc_deactivate`` when it was active. :attr:`ManagedNode.lifecycle_done` becomes true 0.2 s
  later (the service answer is on its way) and ``run_node``'s loop ends: the process exits 0.

An unexpected exception in a hook is logged with its traceback and ends the transition in
rcl's ``errorprocessing``, whose handler runs ``_lc_deactivate`` (the safe output) and
``_lc_cleanup`` and returns the node to ``unconfigured``.

``autostart`` (parameter, :data:`fric_interfaces.parameters.LIFECYCLE_SPECS`; default true):
the constructor configures and activates the node, which then behaves as an unmanaged one (and
can still be deactivated); false: it waits in ``unconfigured`` for ``ros2 lifecycle set``.
"""

from __future__ import annotations

import time
import traceback

from lifecycle_msgs.msg import State
from rclpy.lifecycle import LifecycleNodeMixin, LifecycleState, TransitionCallbackReturn

__all__ = ["ManagedNode", "lifecycle_done"]

_FINAL_WAIT_NS = 200_000_000  # finalized → end of the loop: the change_state answer goes out
SUCCESS, FAILURE, ERROR = (TransitionCallbackReturn.SUCCESS, TransitionCallbackReturn.FAILURE,
                           TransitionCallbackReturn.ERROR)


class ManagedNode(LifecycleNodeMixin):
    """The lifecycle state machine for a ``FricNode`` subclass (module docstring): list it first,
    ``class N(ManagedNode, FricNode)``. The node's ``_setup`` must declare ``autostart``
    (:data:`~fric_interfaces.parameters.LIFECYCLE_SPECS` in its specs)."""

    def __init__(self, node_name: str | None = None, **kwargs):
        self._finalized_ns: int | None = None
        self._lc_quiet = False  # autostart: one log line for both transitions
        # FricNode.__init__ (Node, then _setup): the class after ManagedNode's own bases
        super(LifecycleNodeMixin, self).__init__(node_name, **kwargs)
        try:
            LifecycleNodeMixin.__init__(self)
            if bool(self.get_parameter("autostart").value):
                self._lc_quiet = True
                for step in (self.trigger_configure, self.trigger_activate):
                    if step() != SUCCESS:
                        raise ValueError(f"autostart: the {step.__name__[8:]} transition "
                                         "failed (see the log)")
                self._lc_quiet = False
                self.get_logger().info("lifecycle: active (autostart)")
            else:
                self.get_logger().info("lifecycle: unconfigured (autostart false): waiting for "
                                       "`ros2 lifecycle set` configure, activate")
        except Exception:
            self.destroy_node()
            raise

    # ------------------------------------------------------------------ state
    @property
    def lifecycle_state(self) -> str:
        """The current state's label: unconfigured, inactive, active, finalized (or a
        transition state while a hook runs)."""
        return self._state_machine.current_state[1]

    @property
    def lifecycle_active(self) -> bool:
        return self._state_machine.current_state[0] == State.PRIMARY_STATE_ACTIVE

    @property
    def lifecycle_done(self) -> bool:
        """Finalized for 0.2 s (``run_node``'s ``done``: the process ends)."""
        t = self._finalized_ns
        return t is not None and time.monotonic_ns() - t > _FINAL_WAIT_NS

    # ------------------------------------------------------------------ transitions
    def _lc_run(self, what: str, *hooks) -> TransitionCallbackReturn:
        for hook in hooks:
            fn = getattr(self, hook, None)
            if fn is None:
                continue
            try:
                fn()
            except ValueError as e:
                self.get_logger().error(f"lifecycle {what} failed: {e}")
                return FAILURE
            except Exception as e:  # noqa: BLE001 - logged, then rcl's error processing
                self.get_logger().error(f"lifecycle {what}: internal error {type(e).__name__}: "
                                        f"{e}\n{traceback.format_exc()}")
                return ERROR
        if not self._lc_quiet:
            self.get_logger().info(f"lifecycle: {what} done")
        return SUCCESS

    def on_configure(self, state: LifecycleState) -> TransitionCallbackReturn:
        return self._lc_run("configure", "_lc_configure")

    def on_activate(self, state: LifecycleState) -> TransitionCallbackReturn:
        ret = super().on_activate(state)  # lifecycle publishers, if any
        return ret if ret != SUCCESS else self._lc_run("activate", "_lc_activate")

    def on_deactivate(self, state: LifecycleState) -> TransitionCallbackReturn:
        ret = self._lc_run("deactivate", "_lc_deactivate")
        return ret if ret != SUCCESS else super().on_deactivate(state)

    def on_cleanup(self, state: LifecycleState) -> TransitionCallbackReturn:
        return self._lc_run("cleanup", "_lc_cleanup")

    def on_shutdown(self, state: LifecycleState) -> TransitionCallbackReturn:
        hooks = ("_lc_deactivate",) if state.state_id == State.PRIMARY_STATE_ACTIVE else ()
        shutdown = getattr(self, "_lc_shutdown", None)
        ret = self._lc_run("shutdown", *hooks)
        if ret == SUCCESS and shutdown is not None:
            try:
                shutdown(state.label)
            except Exception as e:  # noqa: BLE001 - finalized anyway
                self.get_logger().error(f"lifecycle shutdown: {type(e).__name__}: {e}")
        self._finalized_ns = time.monotonic_ns()
        return SUCCESS  # finalized whatever happened: the process ends

    def on_error(self, state: LifecycleState) -> TransitionCallbackReturn:
        ret = self._lc_run("error processing (safe output, cleanup)", "_lc_deactivate",
                           "_lc_cleanup")
        if ret != SUCCESS:
            self._finalized_ns = time.monotonic_ns()
        return ret  # SUCCESS: unconfigured; otherwise finalized


def lifecycle_done(node) -> bool:
    """``run_node``'s ``done`` for a managed node (or a tuple of nodes: the first)."""
    node = node[0] if isinstance(node, tuple) else node
    return bool(getattr(node, "lifecycle_done", False))
