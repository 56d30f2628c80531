"""The physics, the contract and the rclpy-free parts of the nodes import without rclpy: every
module of fric_core and fric_interfaces (the parameter schemas, names, QoS and conversions),
fric_nodes.builders and fric_nodes.hardware.*, imported in a fresh interpreter, leave 'rclpy' out
of sys.modules. (The QoS profiles and the node-side parameter functions import rclpy when used.)"""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

_SCRIPT = """
import importlib, pkgutil, sys
import fric_core, fric_interfaces, fric_nodes.hardware
names = ["fric_nodes.builders"]
for pkg in (fric_core, fric_interfaces, fric_nodes.hardware):
    names += [m.name for m in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + ".")]
for name in names:
    importlib.import_module(name)
    if "rclpy" in sys.modules:
        print("rclpy imported by", name)
        break
from fric_interfaces import identifier_params, planar_params, renderer_params, stage_params
from fric_interfaces import transmission_params
from fric_interfaces.parameters import ParamSpec, check
assert check(ParamSpec("F", 1.0, "a force", min=0.0), -1.0)
print(len(names), "modules;", "rclpy" in sys.modules)
"""


def test_core_contract_and_hardware_import_without_rclpy():
    r = subprocess.run([sys.executable, "-c", _SCRIPT], cwd=ROOT, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    last = r.stdout.strip().splitlines()[-1]
    assert last.endswith("modules; False"), r.stdout
    assert int(last.split()[0]) > 40, r.stdout  # the walk found the packages' modules
