"""``fric arm-params --urdf URDF [--joints a,b,...] [--out FILE]``: the parameter file of
``launch/arm_friction.launch.xml`` for a user's own arm (issue 24, item 1).

The numbers follow from the URDF by the rules of :mod:`fric_core.arm_setup` (joints without mimic
joints and fingers, start positions inside the limits, PD gains on the mass matrix diagonal,
effort limits from ``<limit effort>``); the file is what ``urdf:=PATH`` alone derives, written out
to read and tune before anything moves, then passed as ``params:=FILE``. Exit status: 0 written,
2 bad input (one line naming it).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def _joint_list(text: str) -> list[str]:
    names = [s.strip() for s in text.split(",") if s.strip()]
    if not names:
        raise argparse.ArgumentTypeError(f"expected joint names separated by commas, got {text!r}")
    return names


def _arm_params(ns: argparse.Namespace) -> int:
    from fric_core.arm_setup import arm_setup, write_arm_parameters

    if not (ns.rate > 0.0 and ns.rate <= 20000.0):
        print(f"fric arm-params: error: --rate: expected (0, 20000] Hz, got {ns.rate!r}",
              file=sys.stderr)
        return 2
    try:
        setup = arm_setup(ns.urdf, ns.joints)
    except ValueError as e:
        print(f"fric arm-params: error: {' '.join(str(e).split())}", file=sys.stderr)
        return 2
    for line in setup.summary():
        print(f"# {line}")
    if ns.out is None:
        import yaml

        doc = {node: {"ros__parameters": p} for node, p in
               setup.node_parameters(ns.rate).items()}
        print(yaml.safe_dump(doc, sort_keys=False, default_flow_style=None, width=100), end="")
        return 0
    out = Path(ns.out)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        write_arm_parameters(out, setup, ns.rate, header=(
            f"fric arm-params --urdf {ns.urdf}"
            + (f" --joints {','.join(ns.joints)}" if ns.joints else ""),
            f"fric launch arm_friction.launch.xml urdf:={setup.urdf} params:={out.resolve()}"))
    except OSError as e:
        print(f"fric arm-params: error: --out: cannot write {out}: {e.strerror}",
              file=sys.stderr)
        return 2
    print(f"parameters: {out}")
    print(f"run: fric launch arm_friction.launch.xml urdf:={setup.urdf} params:={out.resolve()}")
    return 0


def add_subcommand(subparsers: argparse._SubParsersAction) -> None:
    """Register ``fric arm-params``."""
    p = subparsers.add_parser(
        "arm-params", help="write arm_friction.launch.xml's parameters for your own URDF",
        description="Derive the simulated arm chain's parameters (transmission_sim, "
                    "trajectory_tracker, friction_compensator, fric_recorder) from a URDF: the "
                    "joints (mimic joints and joints narrower than twice the 0.1 margin left out, "
                    "each named), start positions inside the limits (mid-range where 0 is "
                    "outside), PD gains from the mass matrix diagonal (30 rad/s, damping ratio "
                    "0.8), effort limits from the URDF. Without --out the YAML goes to stdout. "
                    "`fric launch arm_friction.launch.xml urdf:=URDF` derives the same by itself; "
                    "the file is for reading and tuning (params:=FILE).")
    p.add_argument("--urdf", required=True, metavar="URDF",
                   help="the arm's URDF (a file, or a bundled name: planar_2link, arm7)")
    p.add_argument("--joints", type=_joint_list, default=None, metavar="a,b,...",
                   help="the joints to drive (default: every movable joint but mimic joints and "
                        "joints too short to move)")
    p.add_argument("--out", default=None, metavar="FILE", help="the parameter file to write")
    p.add_argument("--rate", type=float, default=500.0, metavar="HZ",
                   help="transmission_sim's step rate = the joint_states rate (default 500)")
    p.set_defaults(func=_arm_params)
