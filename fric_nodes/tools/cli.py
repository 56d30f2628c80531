"""The ``fric`` command.

    fric launch <file> [name:=value ...] [--print]  run a ROS 2 XML launch file (no ros2 CLI)
    fric identify INPUT [options]                   identify mass and friction from a recorded
                                                    run (CSV or rosbag2; docs/identification.md)
    fric identify RECORDING --urdf URDF --out DIR   an arm's joint friction (arm_identify.py)
    fric excite --urdf URDF --out DIR [options]     an excitation trajectory for that
    fric play EXCITATION [--topic T]                publish it as one JointTrajectory
                                                    (cli_play.py)
    fric arm-params --urdf URDF [--out FILE]        arm_friction.launch.xml's parameters for
                                                    your own arm (cli_arm_params.py)
    fric fleet RECORDINGS... --urdf URDF --out DIR  every recording of a fleet identified, the
                                                    friction levels watched over time
                                                    (fleet.py; docs/fleet.md)
    fric call SERVICE                               call a std_srvs/Trigger service
    fric param list|get|set NODE [NAME [VALUE]]     a running node's parameters
    fric lifecycle nodes|get|list|set [NODE [TR]]  a managed node's state (cli_lifecycle.py)
    fric run EXECUTABLE [ARGS ...]                  run a fric node (ros2 run fric ...)
    fric report BAG [--out DIR]                     fric_recorder's summary and plots, made
                                                    again from its bag (cli_report.py)

(``call``, ``param`` and ``run``: :mod:`fric_nodes.tools.cli_ros`, for installs without ``ros2``.)

Subcommands are argparse sub-parsers: add one with a ``_add_<name>(subparsers)`` function that sets
``func`` (returning the exit status) and register it in ``_build_parser``.
"""
from __future__ import annotations

import argparse
import math
import os
import sys

from fric_nodes.tools import (cli_arm_params, cli_lifecycle, cli_play, cli_report, cli_ros,
                              fleet, launch_runner)
from fric_nodes.tools.user_errors import out_dir_problem


def _launch(ns: argparse.Namespace) -> int:
    args: dict[str, str] = {}
    for item in ns.launch_args:
        name, sep, value = item.partition(":=")
        if not sep or not name:
            print(f"fric launch: error: expected name:=value, got {item!r}", file=sys.stderr)
            return 2
        args[name] = value
    try:
        desc = launch_runner.parse_launch(ns.file, args)
    except launch_runner.LaunchError as e:
        print(f"fric launch: error: {e}", file=sys.stderr)
        return 2
    if ns.print:
        print(f"# {desc.file}")
        if desc.arguments:
            print("# arguments: " + " ".join(f"{k}:={v}" for k, v in desc.arguments.items()))
        for node in desc:
            extra = [node.node_name or "(node name from the executable)", f"output={node.output}"]
            if node.on_exit_shutdown:
                extra.append("on_exit=shutdown")
            print(f"# {node.label}: {', '.join(extra)}")
            print(launch_runner.format_command(node))
        return 0
    if os.environ.get("ROS_AUTOMATIC_DISCOVERY_RANGE") is None:
        print("[fric launch] note: ROS_AUTOMATIC_DISCOVERY_RANGE is not set; nodes will use the "
              "default discovery range (set it to LOCALHOST for loopback-only DDS)",
              file=sys.stderr)
    return launch_runner.run(desc, sigterm_timeout=ns.sigterm_timeout,
                             sigkill_timeout=ns.sigkill_timeout, log_dir=ns.log_dir)


def _add_launch(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "launch", help="run a ROS 2 XML launch file",
        description="Run a ROS 2 XML launch file of the fric package, the way `ros2 launch fric "
                    "<file>` does, where the ros2 CLI is absent. Supports the subset of the XML "
                    "format described in docs/launch.md and rejects anything else. Exit status: "
                    "0 after a clean stop, 1 when a node died or had to be killed, 2 for an "
                    "invalid launch file or arguments.")
    p.add_argument("file", help="a launch file path, or a file name in <fric share>/launch/")
    p.add_argument("launch_args", nargs="*", metavar="name:=value", help="launch arguments")
    p.add_argument("--print", action="store_true",
                   help="print the resolved command lines and exit without running anything")
    p.add_argument("--sigterm-timeout", type=float, default=5.0, metavar="S",
                   help="seconds between SIGINT and SIGTERM on shutdown (default 5)")
    p.add_argument("--sigkill-timeout", type=float, default=5.0, metavar="S",
                   help="seconds between SIGTERM and SIGKILL on shutdown (default 5)")
    p.add_argument("--log-dir", metavar="DIR", default=None,
                   help='where output="log" nodes write (default: $ROS_LOG_DIR or ~/.ros/log, '
                        'in a fric_launch-<time>-<pid> directory)')
    p.set_defaults(func=_launch)


def _columns(text: str) -> dict[str, str]:
    """``name=col,...`` of --columns (names: t, x, v, force, a)."""
    from fric_core.haptics.recording import CSV_COLUMNS

    out: dict[str, str] = {}
    for item in (p.strip() for p in text.split(",") if p.strip()):
        name, sep, col = item.partition("=")
        if not sep or not name.strip() or not col.strip():
            raise argparse.ArgumentTypeError(f"expected name=column, got {item!r}")
        if name.strip() not in CSV_COLUMNS:
            raise argparse.ArgumentTypeError(f"{name.strip()!r} is not one of "
                                             f"{list(CSV_COLUMNS)}")
        out[name.strip()] = col.strip()
    if not out:
        raise argparse.ArgumentTypeError("expected name=column[,name=column...]")
    return out


#: defaults of the 1-DOF stage's options (None in the parser, so the arm path can tell whether
#: they were given)
_STAGE_DEFAULTS = {"joint": "stage_joint", "K": 6000.0, "B": 10.0, "dt": 0.001,
                   "out": "fric_identify_out"}
#: options of the 1-DOF stage only (dest -> flag) and of the arm only
_STAGE_ONLY = {"joint": "--joint", "joint_states_topic": "--joint-states-topic",
               "accel_topic": "--accel-topic", "wrench_topic": "--wrench-topic",
               "force_source": "--force-source", "columns": "--columns", "dv": "--dv",
               "accel_noise": "--accel-noise", "vel_noise": "--vel-noise", "K": "--K",
               "B": "--B", "dt": "--dt", "mass": "--mass", "yaml": "--yaml"}
_ARM_ONLY = {"topic": "--topic", "joints": "--joints", "model": "--model", "offset": "--offset",
             "dynamics": "--dynamics", "effort_lag": "--effort-lag",
             "effort_scale": "--effort-scale"}


def _joint_list(text: str) -> list[str]:
    """``a,b,...`` of --joints."""
    names = [p.strip() for p in text.split(",")]
    if not names or any(not n for n in names):
        raise argparse.ArgumentTypeError(f"expected joint names separated by commas, got {text!r}")
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise argparse.ArgumentTypeError(f"joint(s) named twice: {', '.join(dup)}")
    return names


def _whole_number(text: str) -> int | float:
    """An integer option's value: ``5``, ``5.0`` and ``1e9`` give ints; another number (``2.5``,
    ``nan``, ``inf``) is passed on as a float for the option's range check to name; text that is
    no number is an argparse error."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        x = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    return int(x) if math.isfinite(x) and x == int(x) else x


def _one_line_error(parser: argparse.ArgumentParser):
    """``parser.error`` printing one line (no usage: ``--help`` shows it) and exiting with 2."""
    def error(message: str):
        print(f"{parser.prog}: error: {' '.join(message.split())}", file=sys.stderr)
        sys.exit(2)
    return error


def _effort_lag(text: str):
    """``auto`` or SECONDS of --effort-lag."""
    from fric_nodes.tools.arm_identify import ArmIdentifyError, parse_effort_lag

    try:
        return parse_effort_lag(text)
    except ArmIdentifyError as e:
        raise argparse.ArgumentTypeError(str(e).removeprefix("--effort-lag: ")) from None


def _effort_scale(text: str) -> dict:
    """``JOINT=K,...`` of --effort-scale."""
    from fric_nodes.tools.arm_identify import ArmIdentifyError, parse_effort_scale

    try:
        return parse_effort_scale(text)
    except ArmIdentifyError as e:
        raise argparse.ArgumentTypeError(str(e).removeprefix("--effort-scale: ")) from None


def _identify_arm(ns: argparse.Namespace) -> int:
    """``fric identify RECORDING --urdf URDF --out DIR``: :mod:`fric_nodes.tools.arm_identify`."""
    given = [flag for dest, flag in _STAGE_ONLY.items() if getattr(ns, dest) is not None]
    if given:
        print(f"fric identify: error: {', '.join(given)} appl{'ies' if len(given) == 1 else 'y'} "
              "only to the 1-DOF stage (without --urdf)", file=sys.stderr)
        return 2
    if ns.out is None:
        print("fric identify: error: --out DIR is required with --urdf (the directory for "
              "joint_friction.yaml, the parameter files and the report)", file=sys.stderr)
        return 2
    problem = out_dir_problem(ns.out, "--out")
    if problem:
        print(f"fric identify: error: {problem}", file=sys.stderr)
        return 2
    from fric_core.arm_identification.report import format_value
    from fric_nodes.tools.arm_identify import DEFAULT_EFFORT_LAG, identify_arm

    def progress(msg: str) -> None:
        print(f"fric identify: {msg}", file=sys.stderr, flush=True)

    import warnings
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            res = identify_arm(ns.input, ns.urdf, ns.out, topic=ns.topic or "joint_states",
                               joints=ns.joints, model=ns.model or "auto",
                               offset=ns.offset or "auto",
                               dynamics=ns.dynamics or "auto", method=ns.method,
                               effort_lag=(DEFAULT_EFFORT_LAG if ns.effort_lag is None
                                           else ns.effort_lag),
                               effort_scale=ns.effort_scale, progress=progress)
        except (ValueError, OSError) as e:
            print(f"fric identify: error: {' '.join(str(e).split())}", file=sys.stderr)
            return 2
        finally:
            for w in caught:
                print(f"fric identify: warning: {' '.join(str(w.message).split())}",
                      file=sys.stderr)
    for w in res.warnings:
        print(f"fric identify: warning: {w}", file=sys.stderr)
    fs = res.friction
    keys = ["Cp", "Cn", "bp", "bn"] + (["eta_f", "eta_b", "eta_product"] if fs.model == "gear"
                                       else [])
    print(f"# {ns.input}: model {fs.model}, dynamics {fs.dynamics}, method {fs.method}, "
          f"effort lag {res.effort_lag * 1e3:.3g} ms")
    print(f"# condition number of the identification design: {res.fit.design.cond:.4g} (as fric "
          f"excite reports it, on the fitted motion; the fitted {fs.model} law's weighted design:"
          f" {res.fit.cond:.4g})")
    linear = [n for n, k in res.joint_kinds.items() if k == "prismatic"]
    if linear:
        print(f"# prismatic joint(s) {', '.join(linear)}: Cp, Cn, RMS in N; bp, bn in N·s/m "
              "(the others: N·m, N·m·s/rad)")
    unit = "N·m" + (f"; {', '.join(linear)}: N" if linear else "")
    print("| joint | law | " + " | ".join(keys) + f" | held-out RMS [{unit}] |")
    print("|---" * (len(keys) + 3) + "|")
    for name, jf in fs.joints.items():
        det = res.fit.determined.get(name, {})
        cells = [format_value(jf, k, det.get(k, True)) for k in keys]
        print(f"| {name} | {jf.law} | " + " | ".join(cells)
              + f" | {res.holdout_rms[name]:.3g} |")
    for name, path in res.files.items():
        print(f"{name}: {path}")
    return 0


def _identify(ns: argparse.Namespace) -> int:
    import warnings
    from pathlib import Path

    if ns.urdf is not None:
        return _identify_arm(ns)
    given = [flag for dest, flag in _ARM_ONLY.items() if getattr(ns, dest) is not None]
    if given:
        print(f"fric identify: error: {', '.join(given)} appl{'ies' if len(given) == 1 else 'y'} "
              "only to an arm (with --urdf URDF)", file=sys.stderr)
        return 2
    for dest, default in _STAGE_DEFAULTS.items():
        if getattr(ns, dest) is None:
            setattr(ns, dest, default)

    from fric_core.haptics.recording import read_bag, read_csv
    from fric_core.haptics.renderer_yaml import fit_to_yaml
    from fric_core.haptics.report import estimates_table, write_report

    src = Path(ns.input)
    is_csv = src.suffix.lower() == ".csv"
    bag_only = [opt for opt, val in (("--joint-states-topic", ns.joint_states_topic),
                                     ("--accel-topic", ns.accel_topic),
                                     ("--wrench-topic", ns.wrench_topic),
                                     ("--force-source", ns.force_source)) if val is not None]
    if is_csv and bag_only:
        print(f"fric identify: error: {', '.join(bag_only)} apply only to a bag, not to a CSV "
              f"file", file=sys.stderr)
        return 2
    if not is_csv and ns.columns is not None:
        print("fric identify: error: --columns only applies to a CSV file", file=sys.stderr)
        return 2
    noise = {k: v for k, v in (("accel", ns.accel_noise), ("vel", ns.vel_noise))
             if v is not None}
    out = Path(ns.out)
    yaml_path = Path(ns.yaml) if ns.yaml else out / f"{ns.joint}.yaml"
    problem = out_dir_problem(out, "--out") or (
        f"--yaml {ns.yaml}: is an existing directory, not a file" if yaml_path.is_dir()
        else out_dir_problem(yaml_path.parent, "--yaml") if ns.yaml else None)
    if problem:  # before reading the data: nothing is written, no raw [Errno 17]
        print(f"fric identify: error: {problem}", file=sys.stderr)
        return 2
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            if not src.exists():
                raise FileNotFoundError(f"{src}: no such file or directory")
            if is_csv:
                rec = read_csv(src, ns.columns)
                rec.joint = ns.joint
            else:
                rec = read_bag(src, ns.joint,
                               joint_states_topic=ns.joint_states_topic or "/joint_states",
                               accel_topic=ns.accel_topic, wrench_topic=ns.wrench_topic,
                               force_source=ns.force_source or "effort")
            fits = {}
            for method in ("ols", "eiv"):
                try:
                    fits[method] = rec.fit(method, dv=ns.dv, noise=noise or None)
                except ValueError as e:
                    if method == ns.method:
                        raise
                    print(f"fric identify: warning: the {method.upper()} fit failed: {e}",
                          file=sys.stderr)
            print(f"# {rec.source}: {len(rec)} samples, joint {ns.joint}")
            if rec.gap_note():
                print(f"# {rec.gap_note()}")
            print(estimates_table(fits))
            if rec.trust_problem():  # issue 13, item 9: a record that lost too much
                print(f"fric identify: warning: {rec.trust_problem()}", file=sys.stderr)
            text = fit_to_yaml(fits[ns.method], ns.joint, K=ns.K, B=ns.B, dt=ns.dt,
                               mass=ns.mass, source=rec.source)
            yaml_path.parent.mkdir(parents=True, exist_ok=True)
            yaml_path.write_text(text, encoding="utf-8")
            paths = write_report(rec, fits, out)
        except (ValueError, OSError) as e:
            print(f"fric identify: {e}", file=sys.stderr)
            return 1
        finally:
            for w in caught:
                print(f"fric identify: warning: {w.message}", file=sys.stderr)
    print(f"renderer parameters ({ns.method.upper()}): {yaml_path}")
    print("report: " + ", ".join(str(p) for p in paths))
    return 0


def _add_identify(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "identify", help="identify friction from a recorded run: the 1-DOF stage's mass and "
                         "friction (paper 003), or with --urdf an arm's joint friction",
        description="Without --urdf: fit paper 003's asymmetric Karnopp friction and the mass "
                    "(OLS, eq. 5, and errors-in-variables, eq. 6) to a recorded run of the 1-DOF "
                    "stage, print both estimates, write a friction_renderer parameter file of "
                    "the chosen method and a report (PNG figures, estimates.md). See "
                    "docs/identification.md. Exit status: 0 done, 1 bad data (the message names "
                    "the problem), 2 bad arguments. "
                    "With --urdf URDF --out DIR: identify every joint's friction of an arm "
                    "(sensor_msgs/JointState with position, velocity, effort) with its "
                    "rigid-body parameters, write DIR/joint_friction.yaml, parameter files for "
                    "friction_compensator and transmission_sim, and a report (held-out "
                    "prediction, RMS error, warnings). Exit status: 0 done, 2 bad input (one "
                    "line naming the problem).")
    p.add_argument("input", metavar="INPUT",
                   help="a .csv file (stage: columns t, x, v, force [, a]; force = the force the "
                        "stage applies to the sample; arm: t and per joint <joint>.position, "
                        "[<joint>.velocity,] <joint>.effort) or a rosbag2 directory (or its "
                        ".db3/.mcap file)")
    arm = p.add_argument_group("arm (with --urdf)")
    arm.add_argument("--urdf", metavar="URDF", default=None,
                     help="the arm's URDF (a file, or a bundled name: planar_2link, arm7); "
                          "selects the arm identification")
    arm.add_argument("--topic", metavar="T", default=None,
                     help="bag: sensor_msgs/JointState topic (default joint_states)")
    arm.add_argument("--joints", type=_joint_list, default=None, metavar="a,b,...",
                     help="joints to identify (default: every joint of the recording; each "
                          "must be a movable joint of the URDF)")
    arm.add_argument("--model", choices=("auto", "asymmetric", "curve", "gear"), default=None,
                     help="friction law per joint: auto (default: fits paper 003's asymmetric "
                          "Coulomb + viscous line and a monotone piecewise-linear curve, keeps "
                          "per joint the one with the smaller held-out error, reports both), "
                          "asymmetric, curve, or gear (paper 004's load-dependent friction, "
                          "eta_f, eta_b, on top of the line)")
    arm.add_argument("--offset", choices=("auto", "none", "estimate-at-rest", "symmetric"),
                     default=None,
                     help="a per-joint effort offset (torque sensor, current loop): auto "
                          "(default: estimated where a joint rests >= 0.5 s, else left in the "
                          "levels), none, estimate-at-rest, or symmetric (assume Cp = Cn). Only "
                          "Cp + offset and Cn - offset are identifiable from motion; the "
                          "compensator renders their total either way")
    arm.add_argument("--dynamics", choices=("auto", "identify", "urdf"), default=None,
                     help="the rigid body: auto (default) fits the friction with the rigid "
                          "body identified and with the URDF's, and keeps the URDF's unless "
                          "its friction values differ from the identified ones by more than 4 "
                          "stds or it predicts the held-out part worse (then a mass or a "
                          "centre of mass in the URDF is off: a warning says so); identify: "
                          "always fit it; urdf: trust the URDF's inertias")
    arm.add_argument("--effort-lag", type=_effort_lag, default=None, metavar="{auto,SECONDS}",
                     help="how long the recorded effort lags the positions: auto (default) "
                          "estimates it (a command held over the step ending at its stamp lags "
                          "half a step; a torque sensor 0), or give it in seconds, e.g. 0")
    arm.add_argument("--effort-scale", type=_effort_scale, default=None,
                     metavar="JOINT=K,...",
                     help="multiply a joint's recorded effort by K before anything else: for an "
                          "effort recorded as motor current [A], K = torque constant × gear "
                          "reduction [N·m/A] (prismatic joint: N/A), e.g. "
                          "joint_a1=12.5,joint_a2=12.5; joints not named are kept")
    p.add_argument("--joint", default=None,
                   help="joint name in joint_states and in the parameter file "
                        "(default stage_joint)")
    p.add_argument("--joint-states-topic", metavar="T", default=None,
                   help="bag: sensor_msgs/JointState topic (default /joint_states)")
    p.add_argument("--accel-topic", metavar="T", default=None,
                   help="bag: sensor_msgs/Imu accelerometer topic, linear_acceleration.x (e.g. "
                        "/accelerometer); default: differentiate the velocity")
    p.add_argument("--wrench-topic", metavar="T", default=None,
                   help="bag: geometry_msgs/WrenchStamped topic for --force-source wrench "
                        "(default /wrench)")
    p.add_argument("--force-source", choices=("effort", "wrench"), default=None,
                   help="bag: force from joint_states effort (default) or wrench force.x")
    p.add_argument("--columns", type=_columns, default=None, metavar="name=col,...",
                   help="CSV: map t, x, v, force, a to the file's column names, e.g. "
                        "force=load_cell_N,a=acc")
    p.add_argument("--method", choices=("eiv", "ols"), default="eiv",
                   help="the estimate written to the parameter file: errors-in-variables "
                        "(paper 003 eq. 6, default) or least squares (eq. 5)")
    p.add_argument("--dv", type=float, default=None, metavar="V",
                   help="stiction band Δv [m/s] (default: chosen from the data)")
    p.add_argument("--accel-noise", type=float, default=None, metavar="VAR",
                   help="accelerometer noise variance [(m/s^2)^2] for EIV (default: estimated)")
    p.add_argument("--vel-noise", type=float, default=None, metavar="VAR",
                   help="velocity noise variance [(m/s)^2] for EIV (default: estimated)")
    p.add_argument("--K", type=float, default=None,
                   help="renderer presliding stiffness [N/m] (default 6000)")
    p.add_argument("--B", type=float, default=None,
                   help="renderer presliding damping [N·s/m] (default 10)")
    p.add_argument("--dt", type=float, default=None,
                   help="renderer element step [s] (default 0.001)")
    p.add_argument("--mass", type=float, default=None, metavar="M",
                   help="moving mass of the rendering device [kg], enables the eq. (63) check")
    p.add_argument("--out", default=None, metavar="DIR",
                   help="report directory (stage: default fric_identify_out; arm: required)")
    p.add_argument("--yaml", default=None, metavar="PATH",
                   help="parameter file (default OUT/<joint>.yaml)")
    p.set_defaults(func=_identify)


def _excite(ns: argparse.Namespace) -> int:
    """``fric excite --urdf URDF --out DIR``: :func:`fric_nodes.tools.arm_identify.excite_arm`."""
    from fric_core.arm_identification.excitation import MAX_ARG_BYTES
    from fric_nodes.tools.arm_identify import excite_arm

    def progress(msg: str) -> None:
        print(f"fric excite: {msg}", file=sys.stderr, flush=True)

    try:
        traj, files, size = excite_arm(
            ns.urdf, ns.out, joints=ns.joints, duration=ns.duration,
            base_frequency=ns.base_frequency, harmonics=ns.harmonics,
            max_velocity=ns.max_velocity, max_acceleration=ns.max_acceleration,
            margin=ns.margin, rate=ns.rate, dynamics=ns.dynamics, topic=ns.topic,
            time_budget=ns.time_budget, seed=ns.seed, progress=progress)
    except (ValueError, OSError) as e:
        print(f"fric excite: error: {' '.join(str(e).split())}", file=sys.stderr)
        return 2
    import numpy as np

    print(f"# excitation for {', '.join(traj.joint_names)}: {traj.harmonics} harmonics of "
          f"{1.0 / traj.period:.4g} Hz (band {traj.bandwidth_hz:.4g} Hz), "
          f"{traj.t[-1] - traj.t[0]:.4g} s = {round((traj.t[-1] - traj.t[0]) / traj.period)} "
          f"period(s) at {ns.rate:g} Hz, at rest at both ends")
    print(f"# condition number of the identification design: {traj.cond:.4g} (first random "
          f"shape {traj.cond_initial:.4g})")
    from fric_core.transmission.urdf_dynamics import UrdfDynamics

    dyn = UrdfDynamics(ns.urdf)  # (read without error by excite_arm above)
    linear = [n for n, k in zip(dyn.joint_names, dyn.joint_kinds)
              if k == "prismatic" and n in traj.joint_names]
    if linear:
        print(f"# prismatic joint(s) {', '.join(linear)}: m, m/s, m/s² (the others: rad, rad/s, "
              "rad/s²)")
    print("| joint | q min [rad] | q max [rad] | max |v| [rad/s] | max |a| [rad/s²] |")
    print("|---|---|---|---|---|")
    for j, name in enumerate(traj.joint_names):
        print(f"| {name} | {traj.q[:, j].min():.3f} | {traj.q[:, j].max():.3f} | "
              f"{np.abs(traj.v[:, j]).max():.3f} | {np.abs(traj.a[:, j]).max():.3f} |")
    for name, path in files.items():
        print(f"{name}: {path}")
    if size > MAX_ARG_BYTES:
        yaml_file = files["excitation_trajectory.yaml"]
        print(f"fric excite: warning: {yaml_file} is {size} bytes, more than the shell passes "
              f"as one argument ({MAX_ARG_BYTES}) to `ros2 topic pub`; send it with `fric play "
              f"{yaml_file}` (or `ros2 bag play {files.get('excitation_bag', 'excitation_bag')}`"
              " in a ROS 2 install)", file=sys.stderr)
    return 0


def _add_excite(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "excite", help="write an excitation trajectory for identifying an arm's joint friction",
        description="Design a band-limited Fourier excitation trajectory for an arm (per joint a "
                    "finite Fourier series, at rest at both ends, scaled into the URDF's joint "
                    "limits and the speed/acceleration limits, optimised for the condition "
                    "number of the identification design) and write it to DIR as CSV "
                    "(excitation.csv, for trajectory_tracker), as a trajectory_msgs/"
                    "JointTrajectory for a joint_trajectory_controller (excitation_trajectory."
                    "yaml: `fric play` sends it, or `ros2 topic pub --once` for a small one; "
                    "excitation_bag/ for `ros2 bag play`). Record joint_states while it runs "
                    "(`fric run fric_recorder --ros-args -p kind:=arm -p out_dir:=REC`), then "
                    "`fric identify REC/run_bag --urdf URDF --out DIR`. Exit status: 0 done, 2 "
                    "bad input (one line naming it).")
    p.add_argument("--urdf", required=True, metavar="URDF",
                   help="the arm's URDF (a file, or a bundled name: planar_2link, arm7)")
    p.add_argument("--out", required=True, metavar="DIR", help="output directory (created)")
    p.add_argument("--duration", type=float, default=20.0, metavar="S",
                   help="length [s], up to 3600, rounded up to whole periods (default 20; at most "
                        "1e6 samples at --rate)")
    p.add_argument("--base-frequency", type=float, default=0.1, metavar="HZ",
                   help="fundamental frequency [Hz], 1/3600 to 2500: the period is its inverse "
                        "(default 0.1)")
    p.add_argument("--harmonics", type=_whole_number, default=5, metavar="K",
                   help="number of harmonics, 2 to 50: the band is K × the base frequency "
                        "(default 5)")
    p.add_argument("--joints", type=_joint_list, default=None, metavar="a,b,...",
                   help="joints to move (default: every movable joint of the URDF but <mimic> "
                        "joints and joints whose range is not wider than twice the margin; the "
                        "others stay at 0, or mid-range where 0 is not inside their limits by "
                        "the margin)")
    p.add_argument("--max-velocity", type=float, default=1.0, metavar="RAD_S",
                   help="joint speed limit [rad/s] (the URDF's where lower; default 1)")
    p.add_argument("--max-acceleration", type=float, default=3.0, metavar="RAD_S2",
                   help="joint acceleration limit [rad/s²] (default 3)")
    p.add_argument("--margin", type=float, default=0.1, metavar="RAD",
                   help="distance kept from the URDF's position limits [rad] (default 0.1)")
    p.add_argument("--rate", type=float, default=100.0, metavar="HZ",
                   help="sampling rate of the CSV [Hz], up to 10000, above twice the band (default "
                        "100)")
    p.add_argument("--dynamics", choices=("identify", "urdf"), default="identify",
                   help="optimise for identifying the rigid body too (default) or friction "
                        "only (the URDF's inertias trusted)")
    p.add_argument("--topic", metavar="T", default=None,
                   help="the controller's trajectory topic in the bag (default "
                        "/joint_trajectory_controller/joint_trajectory)")
    p.add_argument("--time-budget", type=float, default=3.0, metavar="S",
                   help="wall time for the optimisation [s], up to 600 (default 3)")
    p.add_argument("--seed", type=_whole_number, default=0,
                   help="seed of the optimisation, >= 0 (default 0)")
    p.set_defaults(func=_excite)
    p.error = _one_line_error(p)


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fric", description="fric: physically correct friction for ROS 2 joints and haptic "
                                 "devices.")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    _add_launch(subparsers)
    _add_identify(subparsers)
    _add_excite(subparsers)
    cli_ros.add_subcommands(subparsers)
    cli_lifecycle.add_subcommand(subparsers)
    cli_play.add_subcommand(subparsers)
    cli_report.add_subcommand(subparsers)
    cli_arm_params.add_subcommand(subparsers)
    fleet.add_subcommand(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``fric`` console script."""
    ns = _build_parser().parse_args(argv)
    return ns.func(ns)


if __name__ == "__main__":
    sys.exit(main())
