"""The ``fric`` command.

    fric launch <file> [name:=value ...] [--print]   run a ROS 2 XML launch file (no ros2 CLI needed)

Subcommands are argparse sub-parsers: add one with a ``_add_<name>(subparsers)`` function that sets
``func`` (returning the exit status) and register it in ``_build_parser``.
"""
from __future__ import annotations

import argparse
import os
import sys

from fric_nodes import launch_runner


def _launch(ns: argparse.Namespace) -> int:
    args: dict[str, str] = {}
    for item in ns.launch_args:
        name, sep, value = item.partition(':=')
        if not sep or not name:
            print(f"fric launch: error: expected name:=value, got {item!r}", file=sys.stderr)
            return 2
        args[name] = value
    try:
        desc = launch_runner.parse_launch(ns.file, args)
    except launch_runner.LaunchError as e:
        print(f'fric launch: error: {e}', file=sys.stderr)
        return 2
    if ns.print:
        print(f'# {desc.file}')
        if desc.arguments:
            print('# arguments: ' + ' '.join(f'{k}:={v}' for k, v in desc.arguments.items()))
        for node in desc:
            extra = [node.node_name or '(node name from the executable)', f'output={node.output}']
            if node.on_exit_shutdown:
                extra.append('on_exit=shutdown')
            print(f"# {node.label}: {', '.join(extra)}")
            print(launch_runner.format_command(node))
        return 0
    if os.environ.get('ROS_AUTOMATIC_DISCOVERY_RANGE') is None:
        print('[fric launch] note: ROS_AUTOMATIC_DISCOVERY_RANGE is not set; nodes will use the '
              'default discovery range (set it to LOCALHOST for loopback-only DDS)', file=sys.stderr)
    return launch_runner.run(desc, sigterm_timeout=ns.sigterm_timeout,
                             sigkill_timeout=ns.sigkill_timeout, log_dir=ns.log_dir)


def _add_launch(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        'launch', help='run a ROS 2 XML launch file',
        description='Run a ROS 2 XML launch file of the fric package, the way `ros2 launch fric '
                    '<file>` does, where the ros2 CLI is absent. Supports the subset of the XML '
                    'format described in docs/launch.md and rejects anything else. Exit status: '
                    '0 after a clean stop, 1 when a node died or had to be killed, 2 for an '
                    'invalid launch file or arguments.')
    p.add_argument('file', help='a launch file path, or a file name in <fric share>/launch/')
    p.add_argument('launch_args', nargs='*', metavar='name:=value', help='launch arguments')
    p.add_argument('--print', action='store_true',
                   help='print the resolved command lines and exit without running anything')
    p.add_argument('--sigterm-timeout', type=float, default=5.0, metavar='S',
                   help='seconds between SIGINT and SIGTERM on shutdown (default 5)')
    p.add_argument('--sigkill-timeout', type=float, default=5.0, metavar='S',
                   help='seconds between SIGTERM and SIGKILL on shutdown (default 5)')
    p.add_argument('--log-dir', metavar='DIR', default=None,
                   help='where output="log" nodes write (default: $ROS_LOG_DIR or ~/.ros/log, '
                        'in a fric_launch-<time>-<pid> directory)')
    p.set_defaults(func=_launch)


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog='fric', description='fric: physically correct friction for ROS 2 joints and haptic '
                                 'devices.')
    subparsers = parser.add_subparsers(dest='command', metavar='COMMAND', required=True)
    _add_launch(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``fric`` console script."""
    ns = _build_parser().parse_args(argv)
    return ns.func(ns)


if __name__ == '__main__':
    sys.exit(main())
