"""Helpers the node tests share (test/nodes, test/integration): in-process nodes with parameter
overrides, a node's diagnostics as a dict, and stopping node processes."""

import signal
import subprocess

from rclpy.parameter import Parameter


def diag(node) -> tuple:
    """(level, message, {key: value}) of ``node.diagnostic_status()``."""
    st = node.diagnostic_status()
    return st.level, st.message, {kv.key: kv.value for kv in st.values}


def made_nodes(cls):
    """Body of a fixture: yields ``make(**params)`` building ``cls`` nodes with those parameter
    overrides, and destroys every node made when the test ends."""
    nodes = []

    def make(**params):
        n = cls(parameter_overrides=[Parameter(k, value=v) for k, v in params.items()])
        nodes.append(n)
        return n

    yield make
    for n in nodes:
        n.destroy_node()


def interrupt_all(procs, timeout: float = 15.0) -> None:
    """SIGINT every process still running (their clean stop), wait, kill what does not end."""
    for p in procs:
        if p.poll() is None:
            p.send_signal(signal.SIGINT)
    for p in procs:
        try:
            p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def terminate_output(proc, timeout: float = 10.0) -> str:
    """SIGTERM ``proc`` and return its output (killed if it does not end within ``timeout``)."""
    proc.terminate()
    try:
        return proc.communicate(timeout=timeout)[0]
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.communicate()[0]
