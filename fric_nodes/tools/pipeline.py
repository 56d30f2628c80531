"""Running the haptic pipeline (``launch/haptic_render.launch.xml``) from scripts and tests: a DDS
domain nobody else is using, the ``fric launch`` command line, and the physics checks on a
recorded run (used by ``examples/haptic_demo.py`` and
``test/integration/test_integration_pipeline.py``).

DDS stays on loopback: every environment built here has
``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST``. Other runs on the same machine (a second checkout's
tests, another demo) share the loopback network: :func:`free_domain_id` looks for a domain with
no nodes in it before a run uses it.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any, Iterable, Mapping

__all__ = ["demo_env", "DEFAULT_HAND_SCRIPT", "HOLD_BELOW", "HOLD_ABOVE", "CARRIAGE_STATIC_FORWARD",
           "domain_nodes", "free_domain_id", "loopback_env", "launch_command", "physics_checks"]

#: the launch file's default operator: 2 s rest (while the nodes find each other over DDS), 10.5 s
#: at 2 N (below breakaway), 0.2 s at 5.3 N (above), release; 14.2 s
DEFAULT_HAND_SCRIPT = "2:0, 10.5:2:0.5, 0.2:5.3:0.05, 1.5:0"
HOLD_BELOW, HOLD_ABOVE = 2.0, 5.3
#: the simulated carriage's forward static friction (paper 003 Table 3): in impedance mode the
#: hand must overcome it on top of the rendered friction
CARRIAGE_STATIC_FORWARD = 1.04


def domain_nodes(domain_id: int, wait: float = 1.0) -> list[str]:
    """Names of the ROS nodes seen on loopback in ``domain_id`` within ``wait`` seconds
    (a private rclpy context, so the caller's own context and domain are untouched)."""
    import rclpy
    from rclpy.context import Context

    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    ctx = Context()
    rclpy.init(context=ctx, domain_id=int(domain_id))
    try:
        me = f"fric_domain_probe_{os.getpid()}"
        node = rclpy.create_node(me, context=ctx)
        try:
            end = time.monotonic() + wait
            while True:
                others = [f"{ns.rstrip('/')}/{n}" for n, ns in node.get_node_names_and_namespaces()
                          if n != me]
                if others or time.monotonic() >= end:
                    return others
                time.sleep(0.1)
        finally:
            node.destroy_node()
    finally:
        rclpy.shutdown(context=ctx)


def free_domain_id(preferred: int | None = None, *, exclude: Iterable[int] = (),
                   wait: float = 1.0, tries: int = 20, log=None) -> int:
    """A ROS domain id in 1..100 with no nodes in it: ``preferred`` if free, else others
    starting from one derived from the process id. ``RuntimeError`` if ``tries`` are busy."""
    exclude = {int(e) for e in exclude}
    start = (os.getpid() * 37) % 100 + 1
    candidates = ([int(preferred)] if preferred is not None else []) + \
        [(start + 13 * i) % 100 + 1 for i in range(100)]
    seen: set[int] = set()
    busy = []
    for d in candidates:
        if d in seen or d in exclude:
            continue
        seen.add(d)
        nodes = domain_nodes(d, wait)
        if not nodes:
            return d
        busy.append(d)
        if log is not None:
            log(f"ROS_DOMAIN_ID {d} is in use ({', '.join(nodes[:3])}"
                f"{', ...' if len(nodes) > 3 else ''}); trying another")
        if len(busy) >= tries:
            break
    raise RuntimeError(f"no free ROS domain id found (busy: {busy})")


def loopback_env(domain_id: int, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """``base`` (default os.environ) with loopback-only DDS in ``domain_id``."""
    env = dict(os.environ if base is None else base)
    env["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    env["ROS_DOMAIN_ID"] = str(int(domain_id))
    env.setdefault("MPLBACKEND", "Agg")
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env


def demo_env(log=print) -> tuple[int, dict[str, str]]:
    """``(domain, env)`` for a demo: ROS_DOMAIN_ID from the environment unless other nodes use it
    (then a free one, said through ``log``), loopback-only DDS; the choice is logged."""
    preferred = os.environ.get("ROS_DOMAIN_ID")
    domain = free_domain_id(int(preferred) if preferred else None, log=log)
    if preferred and int(preferred) != domain:
        log(f"using ROS_DOMAIN_ID {domain} instead of {preferred}")
    log(f"DDS: loopback only (ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST), ROS_DOMAIN_ID={domain}")
    return domain, loopback_env(domain)


def launch_command(args: Mapping[str, Any], launch_file: str = "haptic_render.launch.xml",
                   sigterm_timeout: float = 20.0) -> list[str]:
    """``fric launch <launch_file> name:=value ...`` with this Python (no PATH lookup). The
    recorder writes its files after the stage ends the run (SIGINT): ``sigterm_timeout`` gives
    it time for that on a loaded machine before ``fric launch`` escalates."""
    return [sys.executable, "-m", "fric_nodes.tools.cli", "launch", "--sigterm-timeout",
            f"{sigterm_timeout:g}", launch_file, *(f"{k}:={v}" for k, v in args.items())]


def physics_checks(summary: Mapping[str, Any], *, mode: str, F: float = 4.0,
                   below: float = HOLD_BELOW, above: float = HOLD_ABOVE,
                   kinetic_rel_tol: float = 0.01, min_stuck_time: float = 9.4,
                   max_release_sign_changes: int | None = None, law=None
                   ) -> list[tuple[str, bool, str]]:
    """The checks of a push-below / push-above / release run (the launch file's default hand
    script) against a Coulomb law of level ``F``, or against ``law`` (a ``fric_core.laws`` law,
    e.g. an identified ``AsymmetricFriction``: static level ``Φ(+0)`` of ``static_bounds()``,
    kinetic level ``|Φ(v)|`` at the hold's median sliding velocity): (name, passed, measured).

    * the first hold (hand ``below`` N) is stuck and the position stays within one encoder count
      for at least ``min_stuck_time`` s (after the presliding spring settles);
    * the second hold (hand ``above`` N) slides, with the rendered friction at F (kinetic level);
    * after the release the stage stops, the velocity changes sign at most
      ``max_release_sign_changes`` times (default: impedance 1 — the presliding spring of model
      C gives back its deflection, at most F/K — admittance 0: model A stops dead) and it does
      not drift (one count) afterwards.
    """
    if max_release_sign_changes is None:
        max_release_sign_changes = 1 if mode == "impedance" else 0
    static = F if law is None else float(law.static_bounds()[1])
    breakaway = static + (CARRIAGE_STATIC_FORWARD if mode == "impedance" else 0.0)
    out: list[tuple[str, bool, str]] = []
    holds = summary.get("holds", [])
    out.append(("recorded a run with two hand holds", len(holds) == 2 and summary["states"] > 0,
                f"{summary['states']} states, {summary.get('lost_states', '?')} lost, "
                f"holds at {[round(h['hand_force'], 2) for h in holds]} N"))
    if len(holds) != 2:
        return out
    h0, h1 = holds
    stuck_time = h0["duration"] - h0["settle"]
    out.append((f"hand {h0['hand_force']:.2f} N < breakaway {breakaway:.2f} N: stuck",
                h0["state"] == "stuck" and h0["hand_force"] < breakaway,
                f"max |v| {h0['max_abs_velocity']:.2g} m/s"))
    out.append(("no drift while stuck (within one encoder count)",
                h0["state"] == "stuck" and h0["settled_range_counts"] <= 1
                and stuck_time >= min_stuck_time,
                f"{h0['settled_range_counts']} counts over {stuck_time:.2f} s"))
    kin = h1.get("kinetic_force")
    if law is None:
        expected, what = F, f"F = {F:g} N"
    else:
        vk = h1.get("kinetic_velocity", float("nan"))
        expected = abs(float(law.phi(vk))) if vk == vk else float("nan")
        what = f"the law's {expected:.4f} N at the sliding velocity {vk:.4f} m/s"
    out.append((f"hand {h1['hand_force']:.2f} N > breakaway {breakaway:.2f} N: slides",
                h1["state"] == "sliding" and h1["hand_force"] > breakaway,
                f"max |v| {h1['max_abs_velocity']:.3f} m/s, "
                f"moved {h1['displacement'] * 1e3:.2f} mm"))
    out.append((f"rendered kinetic force = {what}",
                kin is not None and abs(kin - expected) <= kinetic_rel_tol * expected,
                f"{kin:.4f} N" if kin is not None else "no sliding samples"))
    if law is not None:
        # the rendered static level: model C's friction force peaks at the static bound Φ(+0)
        # when the contact breaks away (the spring force reaches it; one step later it slides)
        peak = h1.get("rendered_peak_since_previous")
        out.append((f"rendered static level at breakaway = the law's {static:.4f} N",
                    peak is not None and abs(peak - static) <= kinetic_rel_tol * static,
                    f"peak rendered force {peak:.4f} N" if peak is not None
                    else "no rendered samples"))
    rel = summary.get("release") or {}
    ok = (rel.get("stopped", False)
          and rel.get("velocity_sign_changes", 99) <= max_release_sign_changes
          and (rel.get("drift_after_stop_counts") or 0) <= 1)
    out.append((f"release: stops, <= {max_release_sign_changes} velocity sign change(s), "
                "no drift", ok,
                f"{rel.get('velocity_sign_changes')} sign changes, stopped "
                f"{rel.get('t_stop', float('nan')):.3f} s after release, "
                f"{rel.get('drift_after_stop_counts')} counts drift over "
                f"{rel.get('rest_time', float('nan')):.2f} s"))
    return out
