"""Packaging: a colcon build, package.xml agreeing with setup.py, and a loopback ROS smoke test."""
import os
import runpy
import shutil
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import setuptools

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ['fric_core', 'fric_nodes', 'fric_interfaces']
# The RMW implementation is a deployment choice, not a dependency a package.xml names.
WHEELS_WITHOUT_EXEC_DEPEND = {'ros-rmw-fastrtps-cpp'}


def _ros_env():
    """Environment for a child process that may start DDS: loopback only, this run's domain."""
    return dict(os.environ,
                ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST',
                ROS_DOMAIN_ID=os.environ.get('ROS_DOMAIN_ID', str(os.getpid() % 100 + 1)))


def _setup_kwargs(monkeypatch):
    captured = {}
    monkeypatch.setattr(setuptools, 'setup', lambda **kw: captured.update(kw))
    monkeypatch.chdir(ROOT)
    runpy.run_path(str(ROOT / 'setup.py'), run_name='__main__')
    return captured


def colcon_build(tmp_path: Path, timeout: float = 120.0):
    """``colcon build --packages-select fric`` of this tree into ``tmp_path/install``:
    (the finished process, the install prefix ``tmp_path/install/fric``), or ``pytest.skip`` when
    colcon is not installed. The conformance tests (test/conformance) share this prefix."""
    colcon = Path(sys.executable).parent / 'colcon'
    if not colcon.exists():
        colcon = shutil.which('colcon')
    if colcon is None:
        pytest.skip('colcon is not installed (pip install -e .[dev])')
    install = tmp_path / 'install'
    # --paths names the package directory exactly, so nothing else (.venv, build dirs) is crawled.
    cmd = [str(colcon), '--log-base', str(tmp_path / 'log'), 'build',
           '--paths', str(ROOT), '--packages-select', 'fric',
           '--build-base', str(tmp_path / 'build'), '--install-base', str(install),
           '--event-handlers', 'console_direct+']
    env = dict(_ros_env(), COLCON_HOME=str(tmp_path / 'colcon_home'))
    result = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True,
                            timeout=timeout)
    return result, install / 'fric'


def test_colcon_build_installs_package(tmp_path):
    result, prefix = colcon_build(tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert 'Finished <<< fric' in result.stdout, result.stdout

    assert (prefix / 'share/fric/package.xml').is_file()
    assert (prefix / 'share/ament_index/resource_index/packages/fric').is_file()
    site = prefix / 'lib/python{}.{}/site-packages'.format(*sys.version_info[:2])
    probe = textwrap.dedent(f"""
        import importlib, sys
        from ament_index_python.packages import get_package_share_directory
        for name in {PACKAGES!r}:
            path = importlib.import_module(name).__file__
            assert path.startswith({str(site)!r}), (name, path)
        print(get_package_share_directory('fric'))
    """)
    env = dict(_ros_env(), PYTHONPATH=str(site), AMENT_PREFIX_PATH=str(prefix))
    result = subprocess.run([sys.executable, '-c', probe], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip() == str(prefix / 'share/fric')


def test_package_xml_agrees_with_setup_py(monkeypatch):
    kw = _setup_kwargs(monkeypatch)
    xml = ET.parse(ROOT / 'package.xml').getroot()
    assert xml.get('format') == '3'
    assert kw['name'] == xml.findtext('name') == 'fric'
    assert kw['version'] == xml.findtext('version')
    assert xml.findtext('export/build_type') == 'ament_python'
    assert set(PACKAGES) <= set(kw['packages'])

    exec_depends = [e.text for e in xml.findall('exec_depend')]
    # rosdep keys whose pip name differs (pinocchio is a ROS package; its wheel is `pin`)
    rosdep_to_pip = {'python3-serial': 'pyserial', 'python3-yaml': 'pyyaml', 'pinocchio': 'pin'}
    ros_deps = [d for d in exec_depends if not d.startswith('python3-') and d not in rosdep_to_pip]
    py_deps = [rosdep_to_pip.get(d, d.removeprefix('python3-'))
               for d in exec_depends if d.startswith('python3-') or d in rosdep_to_pip]
    # pip-only: no rosdep key exists (package.xml says so in a comment next to the others)
    pip_only = {'rosbags'}
    assert 'rosbags' in (ROOT / 'package.xml').read_text()
    ros_extra = set(kw['extras_require']['ros'])
    wheels = {'ros-' + d.replace('_', '-') for d in ros_deps}
    assert wheels <= ros_extra, \
        f'exec_depends without a wheel in the ros extra: {wheels - ros_extra}'
    assert ros_extra - wheels <= WHEELS_WITHOUT_EXEC_DEPEND, \
        f'wheels in the ros extra without an exec_depend: {ros_extra - wheels}'
    assert set(py_deps) | pip_only == set(kw['install_requires'])
    test_deps = {e.text.removeprefix('python3-') for e in xml.findall('test_depend')}
    assert test_deps <= set(kw['extras_require']['dev'])


SMOKE = """
import os, time
import rclpy
from std_msgs.msg import Float64MultiArray

assert os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] == 'LOCALHOST'
rclpy.init()
try:
    node = rclpy.create_node('fric_packaging_smoke')
    got = []
    node.create_subscription(Float64MultiArray, 'smoke', lambda m: got.append(list(m.data)), 10)
    pub = node.create_publisher(Float64MultiArray, 'smoke', 10)
    deadline = time.monotonic() + 10.0
    while not got and time.monotonic() < deadline:
        pub.publish(Float64MultiArray(data=[1.0, -2.5]))
        rclpy.spin_once(node, timeout_sec=0.1)
    node.destroy_node()
finally:
    rclpy.try_shutdown()
print(got[0] if got else 'nothing received')
"""


def test_ros_loopback_pub_sub():
    result = subprocess.run([sys.executable, '-c', SMOKE], env=_ros_env(),
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip().splitlines()[-1] == '[1.0, -2.5]', result.stdout + result.stderr
