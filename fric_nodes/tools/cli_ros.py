"""``fric call``, ``fric param`` and ``fric run``: the common ``ros2`` CLI actions for an install
without the ``ros2`` command (the PyPI wheels have rclpy but no ros2cli).

    fric call SERVICE                    call a std_srvs/Trigger (or Empty) service, e.g.
                                         fric call /probe/friction_identifier/identify
    fric param list NODE                 the node's parameters: value, read-only, description
    fric param get NODE NAME [NAME ...]  their values
    fric param set NODE NAME VALUE       set one live (VALUE in YAML, as ros2 param set reads it:
                                         4 is an integer, 4.0 a double); the node's reason is
                                         printed when it refuses
    fric run EXECUTABLE [ARGS ...]       run a fric executable (ros2 run fric EXECUTABLE ARGS)

They talk to the nodes through the ROS services every node has (rcl_interfaces' parameter
services), in the ROS_DOMAIN_ID and ROS_AUTOMATIC_DISCOVERY_RANGE of the environment, like
``ros2``. Every wait is bounded (``--wait`` for the node or service to appear, ``--timeout`` for
the answer); when nothing answers they say what they looked for, in which domain, and what they
saw instead, without a traceback. Exit status: 0 done, 1 refused / failed / not found, 2 bad
arguments, 130 interrupted.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

__all__ = ["add_subcommands", "parse_value", "node_executables"]

#: service types ``fric call`` knows: type name -> (module, class)
_CALLABLE = {"std_srvs/srv/Trigger": ("std_srvs.srv", "Trigger"),
             "std_srvs/srv/Empty": ("std_srvs.srv", "Empty")}


#: a query without an answer after this long is sent again (``_Session.call``) [s]
_RESEND = 1.0
#: a call with an effect waits this much longer for the server to discover the client [s]
_SETTLE = 0.25


class _NotSet:
    def __repr__(self) -> str:
        return "(not set)"


_NOT_SET = _NotSet()


class _Fail(Exception):
    """A failure with a message for the user (exit status 1)."""


def _where() -> str:
    return (f"ROS_DOMAIN_ID={os.environ.get('ROS_DOMAIN_ID', '0 (unset)')}, "
            f"ROS_AUTOMATIC_DISCOVERY_RANGE="
            f"{os.environ.get('ROS_AUTOMATIC_DISCOVERY_RANGE', '(unset: SUBNET)')}")


def _absolute(name: str) -> str:
    return name if name.startswith("/") else "/" + name


class _Session:
    """A private rclpy context and a hidden node for one command."""

    def __init__(self) -> None:
        import rclpy
        from rclpy.context import Context
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.signals import SignalHandlerOptions

        self.ctx = Context()
        rclpy.init(context=self.ctx, signal_handler_options=SignalHandlerOptions.NO)
        self.node = rclpy.create_node(f"_fric_cli_{os.getpid()}", context=self.ctx,
                                      start_parameter_services=False)
        self.executor = SingleThreadedExecutor(context=self.ctx)
        self.executor.add_node(self.node)

    def close(self) -> None:
        import rclpy
        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.ctx)

    def nodes(self) -> list[str]:
        me = self.node.get_name()
        return sorted(f"{ns.rstrip('/')}/{n}" for n, ns in self.node.get_node_names_and_namespaces()
                      if n != me)

    def services(self) -> dict[str, list[str]]:
        return dict(self.node.get_service_names_and_types())

    def wait_for(self, cond, wait: float) -> bool:
        end = time.monotonic() + wait
        while True:
            if cond():
                return True
            if time.monotonic() >= end:
                return False
            self.executor.spin_once(timeout_sec=0.05)

    def call(self, srv_type, name: str, request, wait: float, timeout: float,
             idempotent: bool = False):
        """Call ``name`` once it is ready; the answer, or _Fail after ``timeout``.

        DDS discovery is two-sided: the client can see the server (``service_is_ready``) before
        the server has matched the client's response reader, and a response sent then is lost
        (a fresh-clone CI run saw ``lifecycle get`` wait 10 s for nothing). So a query
        (``idempotent``: get_state, get_parameters, ...) is sent again every ``_RESEND`` s until
        one answer comes; a call with an effect (set, change_state, Trigger) is sent once, after
        ``_SETTLE`` s more of discovery."""
        client = self.node.create_client(srv_type, name)
        try:
            if not self.wait_for(client.service_is_ready, wait):
                raise _Fail(f"service {name} did not appear within {wait:g} s")
            if not idempotent:
                self.wait_for(lambda: False, _SETTLE)
            futures = [client.call_async(request)]
            end = time.monotonic() + timeout
            while not self.wait_for(lambda: any(f.done() for f in futures),
                                    min(end - time.monotonic(), _RESEND)):
                if time.monotonic() >= end:
                    raise _Fail(f"{name}: no answer within {timeout:g} s (raise --timeout for "
                                f"a long call)")
                if idempotent:
                    futures.append(client.call_async(request))
            return next(f for f in futures if f.done()).result()
        finally:
            self.node.destroy_client(client)

    def find_node(self, node: str, wait: float) -> None:
        """Wait until ``node`` offers its parameter services; _Fail naming what was seen."""
        want = f"{node}/get_parameters"
        if self.wait_for(lambda: want in self.services(), wait):
            return
        seen = self.nodes()
        if node in seen:
            raise _Fail(f"node {node} is running but has no parameter services")
        raise _Fail(f"node {node} not found within {wait:g} s ({_where()}); nodes seen: "
                    f"{', '.join(seen) or 'none'} (is it running, in this ROS_DOMAIN_ID?)")


def _run(prog: str, body, ns: argparse.Namespace) -> int:
    try:
        session = _Session()
    except Exception as e:  # noqa: BLE001 - rclpy cannot start: say why, no traceback
        print(f"{prog}: cannot start ROS: {e}", file=sys.stderr)
        return 1
    try:
        return body(session, ns)
    except _Fail as e:
        print(f"{prog}: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130
    finally:
        session.close()


# -- fric call ------------------------------------------------------------------------------------
def _call(session: _Session, ns: argparse.Namespace) -> int:
    import importlib

    name = _absolute(ns.service)
    found = session.wait_for(lambda: name in session.services(), ns.wait)
    if not found:
        known = sorted(s for s, types in session.services().items()
                       if any(t in _CALLABLE for t in types))
        raise _Fail(f"service {name} not found within {ns.wait:g} s ({_where()}); Trigger/Empty "
                    f"services seen: {', '.join(known) or 'none'}")
    types = session.services()[name]
    kind = next((t for t in types if t in _CALLABLE), None)
    if kind is None:
        raise _Fail(f"{name} is a {', '.join(types)} service; fric call calls "
                    f"{' and '.join(_CALLABLE)} services (others: ros2 service call, in a ROS 2 "
                    f"install)")
    module, cls = _CALLABLE[kind]
    srv = getattr(importlib.import_module(module), cls)
    print(f"calling {name} ({kind}) ...", flush=True)
    r = session.call(srv, name, srv.Request(), ns.wait, ns.timeout)
    if kind == "std_srvs/srv/Empty":
        print("done")
        return 0
    print(f"success: {str(r.success).lower()}")
    if r.message:
        print(f"message: {r.message}")
    return 0 if r.success else 1


# -- fric param -----------------------------------------------------------------------------------
def parse_value(text: str):
    """A parameter value from the command line, typed as ``ros2 param set`` types it (YAML:
    ``4`` an integer, ``4.0`` a double, ``true`` a boolean, ``[1.0, 2.0]`` a list of doubles,
    anything else a string); returns an ``rcl_interfaces/ParameterValue``."""
    import yaml
    from rcl_interfaces.msg import ParameterType, ParameterValue

    try:
        v = yaml.safe_load(text)
    except yaml.YAMLError:
        v = text
    out = ParameterValue()
    if isinstance(v, bool):
        out.type, out.bool_value = ParameterType.PARAMETER_BOOL, v
    elif isinstance(v, int):
        out.type, out.integer_value = ParameterType.PARAMETER_INTEGER, v
    elif isinstance(v, float):
        out.type, out.double_value = ParameterType.PARAMETER_DOUBLE, v
    elif isinstance(v, list) and all(isinstance(x, bool) for x in v):
        out.type, out.bool_array_value = ParameterType.PARAMETER_BOOL_ARRAY, v
    elif isinstance(v, list) and all(isinstance(x, int) and not isinstance(x, bool) for x in v):
        out.type, out.integer_array_value = ParameterType.PARAMETER_INTEGER_ARRAY, v
    elif isinstance(v, list) and all(isinstance(x, float) for x in v):
        out.type, out.double_array_value = ParameterType.PARAMETER_DOUBLE_ARRAY, v
    elif isinstance(v, list) and all(isinstance(x, str) for x in v):
        out.type, out.string_array_value = ParameterType.PARAMETER_STRING_ARRAY, v
    else:
        out.type = ParameterType.PARAMETER_STRING
        out.string_value = v if isinstance(v, str) else text
    return out


def _show(value: Any) -> str:
    if isinstance(value, str):
        return repr(value) if value == "" or value.strip() != value else value
    if isinstance(value, bool):
        return str(value).lower()
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_show(v) for v in value) + "]"
    return repr(value)


def _get_values(session: _Session, node: str, names: list[str], ns) -> dict[str, Any]:
    from rcl_interfaces.srv import GetParameters
    from rclpy.parameter import parameter_value_to_python

    r = session.call(GetParameters, f"{node}/get_parameters",
                     GetParameters.Request(names=names), ns.wait, ns.timeout, idempotent=True)
    if len(r.values) == len(names):
        return {n: parameter_value_to_python(v) for n, v in zip(names, r.values)}
    # rclpy answers nothing at all when one name is unknown, or declared without a value
    known = set(_list_names(session, node, ns))
    missing = [n for n in names if n not in known]
    if missing:
        raise _Fail(f"{', '.join(missing)}: no such parameter on {node} "
                    f"(fric param list {node} lists them)")
    out = {}
    for n in names:
        r = session.call(GetParameters, f"{node}/get_parameters",
                         GetParameters.Request(names=[n]), ns.wait, ns.timeout,
                         idempotent=True)
        out[n] = parameter_value_to_python(r.values[0]) if r.values else _NOT_SET
    return out


def _list_names(session: _Session, node: str, ns) -> list[str]:
    from rcl_interfaces.srv import ListParameters
    r = session.call(ListParameters, f"{node}/list_parameters", ListParameters.Request(),
                     ns.wait, ns.timeout, idempotent=True)
    return sorted(r.result.names)


def _param(session: _Session, ns: argparse.Namespace) -> int:
    node = _absolute(ns.node)
    session.find_node(node, ns.wait)
    if ns.action == "list":
        from rcl_interfaces.srv import DescribeParameters
        names = _list_names(session, node, ns)
        values = _get_values(session, node, names, ns) if names else {}
        d = session.call(DescribeParameters, f"{node}/describe_parameters",
                         DescribeParameters.Request(names=names), ns.wait, ns.timeout,
                         idempotent=True)
        desc = {x.name: x for x in d.descriptors}
        for n in names:
            x = desc.get(n)
            flags = " (read-only)" if x is not None and x.read_only else ""
            text = f"  # {x.description}" if x is not None and x.description else ""
            print(f"{n}: {_show(values[n])}{flags}{text}")
        return 0
    if ns.action == "get":
        if not ns.args:
            raise _Fail("give the parameter name(s): fric param get NODE NAME [NAME ...]")
        for n, v in _get_values(session, node, ns.args, ns).items():
            print(f"{n}: {_show(v)}")
        return 0
    # set
    if len(ns.args) != 2:
        raise _Fail("give a name and a value: fric param set NODE NAME VALUE")
    from rcl_interfaces.msg import Parameter as ParameterMsg
    from rcl_interfaces.srv import SetParameters
    from rclpy.parameter import parameter_value_to_python

    name, text = ns.args
    value = parse_value(text)
    r = session.call(SetParameters, f"{node}/set_parameters", SetParameters.Request(
        parameters=[ParameterMsg(name=name, value=value)]), ns.wait, ns.timeout)
    result = r.results[0] if r.results else None
    if result is None or not result.successful:
        reason = result.reason if result is not None else "no result"
        print(f"fric param set: {node} refused {name} = {text}: {reason}", file=sys.stderr)
        return 1
    print(f"{node}: {name} = {_show(parameter_value_to_python(value))}")
    return 0


# -- fric run -------------------------------------------------------------------------------------
def node_executables() -> list[str]:
    """fric's node executables: the ``console_scripts`` entry points of the installed ``fric``
    distribution (setup.py), less the ``fric`` command itself; ``[]`` when fric's metadata is
    not found (neither pip- nor colcon-installed)."""
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        eps = distribution("fric").entry_points
    except PackageNotFoundError:
        return []
    return sorted(e.name for e in eps if e.group == "console_scripts" and e.name != "fric")


def _known_executables() -> str:
    names = node_executables()
    return ("fric's executables: " + ", ".join(names) if names
            else "fric's package metadata was not found: is fric installed?")


def _exec(ns: argparse.Namespace) -> int:
    from fric_nodes.tools import launch_runner

    if ns.executable is None:
        print(f"fric run: give the executable: fric run EXECUTABLE [ARGS ...] "
              f"({_known_executables()})", file=sys.stderr)
        return 2
    try:
        path = launch_runner.resolve_executable(launch_runner.PACKAGE, ns.executable)
    except LookupError as e:
        print(f"fric run: {e} ({_known_executables()})", file=sys.stderr)
        return 1
    sys.stdout.flush()
    os.execv(path, [path, *ns.args])
    return 1  # pragma: no cover - execv does not return


# -- registration ---------------------------------------------------------------------------------
def _waits(p: argparse.ArgumentParser, timeout: float) -> None:
    p.add_argument("--wait", type=float, default=5.0, metavar="S",
                   help="how long to wait for the node or service to appear (default 5)")
    p.add_argument("--timeout", type=float, default=timeout, metavar="S",
                   help=f"how long to wait for the answer (default {timeout:g})")


def add_subcommands(subparsers: argparse._SubParsersAction) -> None:
    """Register ``call``, ``param`` and ``run`` on the ``fric`` parser."""
    p = subparsers.add_parser(
        "call", help="call a std_srvs/Trigger service (ros2 service call)",
        description="Call a std_srvs/srv/Trigger (or Empty) service and print its answer, e.g. "
                    "`fric call /probe/friction_identifier/identify` starts another "
                    "identification run. Exit status: 0 success, 1 refused or not found.")
    p.add_argument("service", help="the service name, e.g. /probe/friction_identifier/identify")
    _waits(p, 120.0)
    p.set_defaults(func=lambda ns: _run("fric call", _call, ns))

    p = subparsers.add_parser(
        "param", help="list, get or set a node's parameters (ros2 param)",
        description="List, get or set the parameters of a running node through its parameter "
                    "services. `fric param set` sends VALUE typed as YAML reads it (4 is an "
                    "integer, 4.0 a double) and prints the node's reason when it refuses. "
                    "Exit status: 0 done, 1 refused or not found.")
    p.add_argument("action", choices=("list", "get", "set"))
    p.add_argument("node", help="the node's name, e.g. /friction_renderer")
    p.add_argument("args", nargs="*", metavar="NAME [VALUE]",
                   help="get: names; set: a name and a value")
    _waits(p, 10.0)
    p.set_defaults(func=lambda ns: _run(f"fric param {ns.action}", _param, ns))

    p = subparsers.add_parser(
        "run", help="run a fric executable (ros2 run fric ...)",
        description="Run one of fric's executables with its arguments, as `ros2 run fric "
                    "EXECUTABLE ARGS` does, e.g. `fric run friction_renderer --ros-args "
                    "--params-file my_renderer.yaml`. Without EXECUTABLE, or with one that "
                    "is not found, it lists fric's executables (the package's console scripts). "
                    "Exit status: the executable's; 1 not found, 2 none given.")
    p.add_argument("executable", nargs="?", default=None,
                   help="friction_renderer, fric_recorder, ... (fric run lists them)")
    p.add_argument("args", nargs=argparse.REMAINDER, help="its arguments (--ros-args ...)")
    p.set_defaults(func=_exec)
