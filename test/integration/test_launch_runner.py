"""fric launch: the XML subset, the exact command lines, the errors, and process management.

The nodes here are tiny fake executables (python scripts on PATH, one per behaviour) so the tests
are fast and need no DDS: they print their argv, write their pid to a state directory once their
signal handlers are in place, and then sleep, exit, or ignore signals according to their name.
"""
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from fric_nodes.tools.launch_runner import LaunchError, parse_launch, run

ROOT = Path(__file__).resolve().parents[2]

FAKE = '''#!{python}
import json, os, signal, sys, time
from pathlib import Path
kind = os.path.basename(sys.argv[0])
node = next((a.split(':=', 1)[1] for a in sys.argv if a.startswith('__node:=')), kind)
state = Path(os.environ['FAKE_STATE'])
stop = []
if kind == 'sleeper':                                  # a well-behaved node: stops on SIGINT
    signal.signal(signal.SIGINT, lambda *a: stop.append(1))
if kind in ('stubborn', 'immortal'):                   # ignores SIGINT (and SIGTERM: immortal)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
if kind == 'immortal':
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
print('argv ' + json.dumps(sys.argv[1:]), flush=True)
print(kind + ' says hello on stderr', file=sys.stderr, flush=True)
tmp = state / (node + '.tmp')
tmp.write_text(str(os.getpid()))
tmp.rename(state / (node + '.pid'))
if kind in ('exit3', 'exit0'):
    # exit once the other fakes have started and installed their handlers
    want = int(os.environ.get('FAKE_WAIT_FOR', '0'))
    deadline = time.monotonic() + 10
    while len(list(state.glob('*.pid'))) < want and time.monotonic() < deadline:
        time.sleep(0.01)
    sys.exit(3 if kind == 'exit3' else 0)
while not stop:
    time.sleep(0.01)
'''
KINDS = ('sleeper', 'stubborn', 'immortal', 'exit3', 'exit0')


class Fakes:
    def __init__(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.bin = tmp_path / 'bin'
        self.state = tmp_path / 'state'
        self.bin.mkdir()
        self.state.mkdir()
        for kind in KINDS:
            exe = self.bin / kind
            exe.write_text(FAKE.format(python=sys.executable))
            exe.chmod(0o755)
        monkeypatch.setenv('PATH', f"{self.bin}{os.pathsep}{os.environ['PATH']}")
        monkeypatch.setenv('FAKE_STATE', str(self.state))

    def pids(self) -> dict[str, int]:
        return {p.stem: int(p.read_text()) for p in self.state.glob('*.pid')}

    def wait_for(self, n: int, timeout: float = 10.0) -> dict[str, int]:
        deadline = time.monotonic() + timeout
        while len(self.pids()) < n and time.monotonic() < deadline:
            time.sleep(0.02)
        assert len(self.pids()) == n, self.pids()
        return self.pids()


@pytest.fixture
def fakes(tmp_path, monkeypatch):
    return Fakes(tmp_path, monkeypatch)


def _alive(pid: int) -> bool:
    try:
        stat = Path(f'/proc/{pid}/stat').read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(')', 1)[1].split()[0] != 'Z'


def _write(path: Path, body: str) -> Path:
    path.write_text(textwrap.dedent(body).lstrip('\n'))
    return path


# --- parsing ------------------------------------------------------------------------------------

def test_exact_ros_args_command_line(tmp_path, fakes):
    params = _write(tmp_path / 'stage.yaml', 'stage:\n  ros__parameters:\n    rate: 1000\n')
    f = _write(tmp_path / 'a.launch.xml', f'''
        <launch>
          <node pkg="fric" exec="sleeper" name="stage" namespace="haptic" output="screen"
                args="--flag 'two words'" ros_args="--log-level debug">
            <remap from="joint_states" to="/js"/>
            <param name="backend" value="sim"/>
            <param from="{params}"/>
            <param name="gain" value="2.5"/>
            <env name="FRIC_TEST" value="1"/>
          </node>
          <node exec="sleeper"/>
        </launch>
    ''')
    desc = parse_launch(f)
    stage, bare = desc.nodes
    assert stage.cmd == [
        str(fakes.bin / 'sleeper'), '--flag', 'two words', '--ros-args', '--log-level', 'debug',
        '--ros-args', '-r', '__node:=stage', '-r', '__ns:=/haptic',
        '-p', 'backend:=sim', '--params-file', str(params), '-p', 'gain:=2.5',
        '-r', 'joint_states:=/js']
    assert (stage.label, stage.node_name, stage.output, stage.env) == \
        ('sleeper-1', '/haptic/stage', 'screen', {'FRIC_TEST': '1'})
    assert stage.where == f'{f}:2' and not stage.on_exit_shutdown
    assert bare.cmd == [str(fakes.bin / 'sleeper'), '--ros-args'] and bare.node_name is None
    assert bare.label == 'sleeper-2' and desc.node('stage') is stage


def test_param_type_str_is_a_yaml_string(tmp_path, fakes):
    """``<param ... type="str"/>`` (what ros2 launch needs so that ``hand_script:=5:2`` is not
    read as the YAML 1.1 integer 302): fric launch passes the value as a single-quoted YAML
    string, quotes doubled; any other type is refused by name."""
    f = _write(tmp_path / 'a.launch.xml', '''
        <launch>
          <arg name="script" default="5:2"/>
          <node exec="sleeper" name="stage">
            <param name="hand_script" value="$(var script)" type="str"/>
            <param name="label" value="it's" type="str"/>
          </node>
        </launch>
    ''')
    cmd = parse_launch(f).nodes[0].cmd
    assert cmd[-4:] == ['-p', "hand_script:='5:2'", '-p', "label:='it''s'"]
    bad = _write(tmp_path / 'b.launch.xml', '''
        <launch><node exec="sleeper"><param name="x" value="1" type="int"/></node></launch>
    ''')
    with pytest.raises(LaunchError, match='type="str" only'):
        parse_launch(bad)


def test_args_defaults_overrides_and_choices(tmp_path, fakes):
    f = _write(tmp_path / 'a.launch.xml', '''
        <launch>
          <arg name="backend" default="sim" description="stage backend">
            <choice value="sim"/>
            <choice value="serial"/>
          </arg>
          <arg name="rate" default="1000"/>
          <let name="period" value="1/$(var rate)"/>
          <node exec="sleeper" name="n" args="$(var backend) $(var period)"/>
        </launch>
    ''')
    assert parse_launch(f).nodes[0].cmd[1:3] == ['sim', '1/1000']
    desc = parse_launch(f, {'backend': 'serial', 'rate': '500'})
    assert desc.nodes[0].cmd[1:3] == ['serial', '1/500']
    assert desc.arguments == {'backend': 'serial', 'rate': '500'}
    with pytest.raises(LaunchError, match=rf"{f}:2: launch argument 'backend' is 'usb', not one"):
        parse_launch(f, {'backend': 'usb'})
    with pytest.raises(LaunchError, match=r'unknown launch argument\(s\) bakend'):
        parse_launch(f, {'bakend': 'sim'})


def test_substitutions_env_dirname_find_pkg_share(tmp_path, fakes, monkeypatch):
    monkeypatch.delenv('AMENT_PREFIX_PATH', raising=False)
    monkeypatch.setenv('FRIC_SAMPLE', 'brass')
    monkeypatch.delenv('FRIC_UNSET', raising=False)
    f = _write(tmp_path / 'a.launch.xml', '''
        <launch>
          <node exec="sleeper" args="$(env FRIC_SAMPLE) $(env FRIC_UNSET 'fallback x') $(dirname)/y
                                     $(find-pkg-share fric)/config"/>
        </launch>
    ''')
    assert parse_launch(f).nodes[0].cmd[1:5] == [
        'brass', 'fallback x', f'{tmp_path}/y', f'{ROOT}/config']


def test_nested_conditional_substitutions_as_launch_reads_them(tmp_path, fakes):
    # launch (Iron and later) exposes $(equals), $(not-equals), $(if C A [B]), $(not), $(and),
    # $(or) with nested substitutions and quoted arguments ('' is an empty string):
    # arm_friction.launch.xml's urdf:= picks its parameter file with them
    f = _write(tmp_path / 'a.launch.xml', '''
        <launch>
          <arg name="urdf" default=""/>
          <let name="own" value="$(not-equals 'x$(var urdf)' x)"/>
          <let name="p" value="$(if $(var own) '$(var urdf)' $(dirname)/bundled.yaml)"/>
          <let name="e" value="[$(if false x)]"/>
          <node exec="sleeper" args="$(var p) $(var own) $(equals 1.0 1) $(equals true 1)
                                     $(and $(var own) $(not $(var own))) $(or 0 TRUE)
                                     $(var e) x\\(y\\)"/>
        </launch>
    ''')
    assert parse_launch(f).nodes[0].cmd[1:9] == [
        f'{tmp_path}/bundled.yaml', 'false', 'true', 'true', 'false', 'true', '[]', 'x(y)']
    assert parse_launch(f, {'urdf': '/a b/my.urdf'}).nodes[0].cmd[1:3] == ['/a b/my.urdf', 'true']


def test_ament_index_first_and_bare_launch_file_name(tmp_path, fakes, monkeypatch):
    prefix = tmp_path / 'install'
    (prefix / 'share/ament_index/resource_index/packages').mkdir(parents=True)
    (prefix / 'share/ament_index/resource_index/packages/fric').write_text('')
    (prefix / 'share/fric/launch').mkdir(parents=True)
    (prefix / 'lib/fric').mkdir(parents=True)
    exe = prefix / 'lib/fric/sleeper'
    exe.write_text((fakes.bin / 'sleeper').read_text())
    exe.chmod(0o755)
    _write(prefix / 'share/fric/launch/x.launch.xml', '''
        <launch>
          <node pkg="fric" exec="sleeper" args="$(find-pkg-share fric)"/>
          <node pkg="fric" exec="stubborn"/>
        </launch>
    ''')
    monkeypatch.setenv('AMENT_PREFIX_PATH', str(prefix))
    desc = parse_launch('x.launch.xml')
    assert desc.file == prefix / 'share/fric/launch/x.launch.xml'
    assert desc.nodes[0].cmd[:2] == [str(exe), str(prefix / 'share/fric')]
    assert desc.nodes[1].cmd[0] == str(fakes.bin / 'stubborn')    # not in lib/fric: PATH


def test_if_unless_and_group_namespaces(tmp_path, fakes):
    f = _write(tmp_path / 'a.launch.xml', '''
        <launch>
          <arg name="with_op" default="false"/>
          <node exec="sleeper" name="a" if="true"/>
          <node exec="sleeper" name="b" if="0"/>
          <node exec="sleeper" name="c" unless="$(var with_op)"/>
          <node exec="sleeper" name="d" unless="1"/>
          <group if="False"><node exec="sleeper" name="e"/></group>
          <group>
            <push-ros-namespace namespace="robot"/>
            <let name="inner" value="1"/>
            <node exec="sleeper" name="f"/>
            <group>
              <push_ros_namespace namespace="arm/"/>
              <node exec="sleeper" name="g" namespace="joint1"/>
              <node exec="sleeper" name="h" namespace="/abs"/>
            </group>
            <node exec="sleeper" name="i" namespace="x"/>
          </group>
          <node exec="sleeper" name="j"/>
          <group scoped="false"><push-ros-namespace namespace="leak"/>
            <let name="v" value="2"/></group>
          <node exec="sleeper" name="k" args="$(var v)"/>
        </launch>
    ''')
    names = {n.node_name: n for n in parse_launch(f)}
    assert list(names) == ['/a', '/c', '/robot/f', '/robot/arm/joint1/g', '/abs/h', '/robot/x/i',
                           '/j', '/leak/k']
    assert names['/robot/f'].cmd[-2:] == ['-r', '__ns:=/robot']
    assert names['/j'].cmd[-2:] == ['-r', '__node:=j']        # no namespace: no __ns remap
    assert names['/leak/k'].cmd[1] == '2'
    with pytest.raises(LaunchError, match=r"\$\(var inner\): launch argument 'inner' is not def"):
        parse_launch(_write(tmp_path / 'b.launch.xml', '''
            <launch>
              <group><let name="inner" value="1"/></group>
              <node exec="sleeper" args="$(var inner)"/>
            </launch>
        '''))


def test_include_with_args(tmp_path, fakes):
    sub = tmp_path / 'sub'
    sub.mkdir()
    _write(sub / 'inner.launch.xml', '''
        <launch>
          <arg name="who"/>
          <arg name="rate" default="10"/>
          <node exec="sleeper" name="$(var who)" args="$(var rate) $(dirname)"/>
        </launch>
    ''')
    f = _write(tmp_path / 'outer.launch.xml', '''
        <launch>
          <arg name="r" default="99"/>
          <group>
            <push-ros-namespace namespace="g"/>
            <include file="$(dirname)/sub/inner.launch.xml">
              <arg name="who" value="inc"/>
              <arg name="rate" value="$(var r)"/>
            </include>
          </group>
          <node exec="sleeper" name="after" args="$(dirname)"/>
        </launch>
    ''')
    inc, after = parse_launch(f, {'r': '7'})
    assert inc.node_name == '/g/inc' and inc.cmd[1:3] == ['7', str(sub)]
    assert inc.where == f'{sub / "inner.launch.xml"}:4'
    assert after.cmd[1] == str(tmp_path)
    with pytest.raises(LaunchError, match=rf"{sub / 'inner.launch.xml'}:2: required launch "
                                          r"argument 'who' was not provided"):
        parse_launch(_write(tmp_path / 'c.launch.xml', '''
            <launch>
              <include file="$(dirname)/sub/inner.launch.xml"/>
            </launch>
        '''))


@pytest.mark.parametrize('body, line, message', [
    ('<node exec="sleeper"/>\n<timer period="1"/>', 3, 'unsupported tag <timer>'),
    ('<node exec="sleeper" respawn="true"/>', 2, "<node>: unsupported attribute 'respawn'"),
    ('<group>\n  <node exec="sleeper">\n    <param name="a" value="1" sep=","/>\n'
     '  </node>\n</group>', 4, "<param>: unsupported attribute 'sep'"),
    ('<group if="false">\n<executable cmd="ls"/></group>', 3, 'unsupported tag <executable>'),
    ('<node exec="sleeper">\n  <choice value="x"/>\n</node>', 3,
     '<choice> is not supported inside <node>'),
    ('<node exec="sleeper" args="$(command ls)"/>', 2,
     r'unsupported substitution \$\(command ls\)'),
    ('<node exec="sleeper" args="$(var $(env FRIC_SURELY_UNSET))"/>', 2,
     'environment variable FRIC_SURELY_UNSET is not set'),
    ('<node exec="sleeper" args="$(if maybe a b)"/>', 2,
     r"\$\(if\): a condition must be true/false/1/0, got 'maybe'"),
    ('<node exec="sleeper" args="$(equals a)"/>', 2, r'\$\(equals\) takes 2..2 arguments'),
    ('<node exec="sleeper" args="$(not-equals a \'\')"/>', 2,
     r"ros2 launch compares the text '\[\]' there"),
    ('<node exec="sleeper" args="$(var \'x)"/>', 2, "unterminated '...' argument"),
    ('<node exec="sleeper" args="$(var x"/>', 2, 'unterminated substitution'),
    ('<node exec="sleeper" args="$(var nope)"/>', 2, "launch argument 'nope' is not defined"),
    ('<node exec="sleeper" args="$(env FRIC_SURELY_UNSET)"/>', 2,
     'environment variable FRIC_SURELY_UNSET is not set'),
    ('<node exec="sleeper" if="yes"/>', 2, 'condition must be true/false/1/0'),
    ('<node exec="sleeper" on_exit="restart"/>', 2, 'only on_exit="shutdown"'),
    ('<node exec="sleeper" output="own_log"/>', 2, 'fric launch supports screen, log, both'),
    ('<node exec="sleeper" name="bad-name"/>', 2, 'invalid node name'),
    ('<node exec="sleeper">\n  <param from="cfg.yaml"/>\n</node>', 3, 'use an absolute path'),
    ('<include file="other.launch.xml"/>', 2, 'use an absolute path'),
    ('<include file="$(dirname)/a.launch.xml"/>', 2, 'recursive include'),
    ('<node exec="sleeper">\n</nod>', 3, 'XML syntax error: mismatched tag'),
    ('<node exec="no_such_fric_exe" pkg="fric"/>', 2, "executable 'no_such_fric_exe' not found"),
])
def test_errors_name_file_and_line(tmp_path, fakes, monkeypatch, body, line, message):
    monkeypatch.delenv('FRIC_SURELY_UNSET', raising=False)
    f = tmp_path / 'a.launch.xml'
    f.write_text('<launch>\n' + body + '\n</launch>\n')
    with pytest.raises(LaunchError, match=rf'^{f}:{line}: .*{message}'):
        parse_launch(f)


# --- running ------------------------------------------------------------------------------------

def _cli(*args):
    return [sys.executable, '-m', 'fric_nodes.tools.cli', 'launch', *map(str, args)]


def test_missing_executable_fails_before_anything_starts(tmp_path, fakes):
    f = _write(tmp_path / 'a.launch.xml', '''
        <launch>
          <node exec="sleeper" name="first"/>
          <node pkg="fric" exec="not_installed_node" name="second"/>
        </launch>
    ''')
    result = subprocess.run(_cli(f), capture_output=True, text=True, timeout=30, cwd=ROOT)
    assert result.returncode == 2, result.stderr
    assert f"{f}:3: <node>: executable 'not_installed_node' not found" in result.stderr
    assert fakes.pids() == {} and 'started' not in result.stderr


def test_killed_runner_takes_its_children_along(tmp_path, fakes):
    """SIGKILL cannot be handled, so the children must not rely on the runner's clean-up: they
    get SIGTERM from the kernel when it dies (PR_SET_PDEATHSIG), or nodes driving a device
    would keep running orphaned."""
    f = _write(tmp_path / 'a.launch.xml', '''
        <launch>
          <node exec="sleeper" name="one"/>
          <node exec="sleeper" name="two"/>
        </launch>
    ''')
    runner = subprocess.Popen(_cli(f), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              cwd=ROOT)
    try:
        pids = fakes.wait_for(2)
        assert all(_alive(p) for p in pids.values())
    finally:
        runner.kill()
        runner.wait(timeout=10)
    deadline = time.monotonic() + 10.0  # the sleepers exit on SIGTERM's default action at once
    while any(_alive(p) for p in pids.values()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(p) for p in pids.values())


@pytest.mark.parametrize('sig', [signal.SIGINT, signal.SIGTERM])
def test_signal_to_runner_stops_every_child(tmp_path, fakes, sig):
    f = _write(tmp_path / 'a.launch.xml', '''
        <launch>
          <node exec="sleeper" name="one"/>
          <group><push-ros-namespace namespace="ns"/><node exec="sleeper" name="two"/></group>
        </launch>
    ''')
    runner = subprocess.Popen(_cli(f), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              cwd=ROOT)
    try:
        pids = fakes.wait_for(2)
        assert all(_alive(p) for p in pids.values())
        runner.send_signal(sig)
        out, err = runner.communicate(timeout=20)
    finally:
        runner.kill()
    assert runner.returncode == 0, out + err
    assert not any(_alive(p) for p in pids.values())
    assert f'received {sig.name}: shutting down' in err
    assert 'stopping 2 process(es): SIGINT' in err
    assert "[sleeper-1] argv " in out and '[sleeper-2] sleeper says hello on stderr' in err
    assert f"sleeper-2 (pid {pids['two']}) stopped, exit code 0" in err


def test_child_exiting_with_3_fails_the_launch_and_stops_the_rest(tmp_path, fakes, monkeypatch,
                                                                  capsys):
    monkeypatch.setenv('FAKE_WAIT_FOR', '3')
    f = _write(tmp_path / 'a.launch.xml', '''
        <launch>
          <node exec="sleeper" name="one"/>
          <node exec="sleeper" name="two"/>
          <node exec="exit3" name="bad"/>
        </launch>
    ''')
    assert run(parse_launch(f)) == 1
    pids = fakes.pids()
    err = capsys.readouterr().err
    assert f"[fric launch] exit3-3 (pid {pids['bad']}) died with exit code 3" in err
    assert 'stopping 2 process(es): SIGINT' in err and 'FAILED, exit status 1' in err
    assert not any(_alive(p) for p in pids.values())


def test_on_exit_shutdown_child_exiting_0_ends_the_launch_cleanly(tmp_path, fakes, monkeypatch,
                                                                   capsys):
    monkeypatch.setenv('FAKE_WAIT_FOR', '3')
    f = _write(tmp_path / 'a.launch.xml', '''
        <launch>
          <node exec="sleeper" name="one"/>
          <node exec="sleeper" name="two"/>
          <node exec="exit0" name="operator" on_exit="shutdown"/>
        </launch>
    ''')
    assert run(parse_launch(f)) == 0
    pids = fakes.pids()
    err = capsys.readouterr().err
    assert 'exit0-3' in err and 'on_exit="shutdown": shutting down' in err
    assert not any(_alive(p) for p in pids.values())


def test_child_exiting_0_without_on_exit_ends_nothing(tmp_path, fakes, monkeypatch, capsys):
    """As under ros2 launch: a node without on_exit="shutdown" that exits 0 leaves the others
    running; the launch ends (status 0) when every node has exited."""
    monkeypatch.setenv('FAKE_WAIT_FOR', '2')
    f = _write(tmp_path / 'a.launch.xml', '''
        <launch>
          <node exec="exit0" name="first"/>
          <node exec="exit0" name="second"/>
        </launch>
    ''')
    assert run(parse_launch(f)) == 0
    err = capsys.readouterr().err
    assert 'exited with code 0; the others go on' in err
    assert 'every process has exited' in err and 'done: exit status 0' in err
    assert 'died' not in err


def test_children_ignoring_sigint_are_escalated(tmp_path, fakes, monkeypatch, capsys):
    monkeypatch.setenv('FAKE_WAIT_FOR', '4')
    f = _write(tmp_path / 'a.launch.xml', '''
        <launch>
          <node exec="sleeper" name="good"/>
          <node exec="stubborn" name="deaf_to_sigint"/>
          <node exec="immortal" name="deaf_to_both"/>
          <node exec="exit0" name="operator" on_exit="shutdown"/>
        </launch>
    ''')
    t0 = time.monotonic()
    code = run(parse_launch(f), sigterm_timeout=0.3, sigkill_timeout=0.3)
    elapsed = time.monotonic() - t0
    pids = fakes.pids()
    err = capsys.readouterr().err
    assert code == 1      # a node that had to be SIGKILLed is a failure
    assert elapsed < 5.0
    assert not any(_alive(p) for p in pids.values())
    assert 'stubborn-2' in err and 'still running 0.3 s after SIGINT: sending SIGTERM' in err
    assert f"stubborn-2 (pid {pids['deaf_to_sigint']}) stopped, exit code -15 (SIGTERM)" in err
    assert 'immortal-3' in err and 'still running 0.3 s after SIGTERM: sending SIGKILL' in err
    assert f"immortal-3 (pid {pids['deaf_to_both']}) killed, exit code -9 (SIGKILL)" in err


def test_output_log_goes_to_a_file(tmp_path, fakes, monkeypatch, capsys):
    monkeypatch.setenv('FAKE_WAIT_FOR', '2')
    f = _write(tmp_path / 'a.launch.xml', '''
        <launch>
          <node exec="sleeper" name="quiet" output="log"/>
          <node exec="exit0" name="operator" on_exit="shutdown" output="both"/>
        </launch>
    ''')
    assert run(parse_launch(f), log_dir=tmp_path / 'logs') == 0
    out, err = capsys.readouterr()
    assert '[sleeper-1]' not in out + err and '[exit0-2] argv' in out
    assert f"output in {tmp_path / 'logs' / 'sleeper-1.log'}" in err
    log = (tmp_path / 'logs' / 'sleeper-1.log').read_text()
    assert 'argv ["--ros-args", "-r", "__node:=quiet"]' in log and 'hello on stderr' in log
    assert 'hello on stderr' in (tmp_path / 'logs' / 'exit0-2.log').read_text()


def test_fric_console_script_prints_the_command_lines(tmp_path, fakes):
    fric = Path(sys.executable).parent / 'fric'
    assert fric.exists(), 'pip install -e .[ros,dev] installs the fric console script'
    f = _write(tmp_path / 'a.launch.xml', '''
        <launch>
          <arg name="sample" default="brass"/>
          <node pkg="fric" exec="sleeper" name="renderer" namespace="haptic" on_exit="shutdown">
            <param name="sample" value="$(var sample)"/>
          </node>
        </launch>
    ''')
    result = subprocess.run([str(fric), 'launch', str(f), 'sample:=teflon', '--print'],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[1:] == [
        '# arguments: sample:=teflon',
        '# sleeper-1: /haptic/renderer, output=screen, on_exit=shutdown',
        f"{fakes.bin / 'sleeper'} --ros-args -r __node:=renderer -r __ns:=/haptic "
        f"-p sample:=teflon"]
    assert fakes.pids() == {}     # --print starts nothing
    bad = subprocess.run([str(fric), 'launch', str(f), 'sample'], capture_output=True, text=True,
                         timeout=30)
    assert bad.returncode == 2 and "expected name:=value, got 'sample'" in bad.stderr


RCL_PROBE = '''#!{python}
import json, sys, rclpy
rclpy.init(args=sys.argv)
node = rclpy.create_node('default_name', automatically_declare_parameters_from_overrides=True)
print('probe ' + json.dumps({{
    'fqn': node.get_fully_qualified_name(),
    'params': {{n: p.value for n, p in node._parameters.items()}},
    'remapped': node.resolve_topic_name('joint_states'),
    'args': rclpy.utilities.remove_ros_args(sys.argv)[1:]}}), flush=True)
node.destroy_node()
rclpy.shutdown()
'''


def test_command_line_is_what_rcl_expects(tmp_path, capsys):
    """The real rcl argument parser (rclpy 9) reads the command line the runner builds."""
    probe = tmp_path / 'probe'
    probe.write_text(RCL_PROBE.format(python=sys.executable))
    probe.chmod(0o755)
    _write(tmp_path / 'p.yaml', '/**:\n  ros__parameters:\n    from_file: 42\n')
    f = _write(tmp_path / 'a.launch.xml', '''
        <launch>
          <group>
            <push-ros-namespace namespace="haptic"/>
            <node exec="$(dirname)/probe" name="stage" args="--foo 'a b'"
                  ros_args="--log-level warn"
                  on_exit="shutdown">
              <param name="rate" value="1000"/>
              <param name="quoted" value="'1'"/>
              <param name="flag" value="true"/>
              <param name="gains" value="[1.0, 2.5]"/>
              <param from="$(dirname)/p.yaml"/>
              <remap from="joint_states" to="/js"/>
            </node>
          </group>
        </launch>
    ''')
    assert run(parse_launch(f)) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith('[probe-1] probe '))
    got = json.loads(line.split(' ', 2)[2])
    assert got['fqn'] == '/haptic/stage' and got['remapped'] == '/js'
    assert got['args'] == ['--foo', 'a b']
    assert {k: got['params'][k] for k in ('rate', 'quoted', 'flag', 'gains', 'from_file')} == \
        {'rate': 1000, 'quoted': '1', 'flag': True, 'gains': [1.0, 2.5], 'from_file': 42}


def test_include_of_fail_on_node_death_is_the_one_python_include(tmp_path, fakes):
    """fric launch applies launch/fail_on_node_death.launch.py's rule itself: the include starts
    nothing and is recorded; any other Python include is refused, as is one with <arg>s."""
    policy = tmp_path / 'fail_on_node_death.launch.py'
    policy.write_text((ROOT / 'launch' / 'fail_on_node_death.launch.py').read_text())
    f = _write(tmp_path / 'a.launch.xml', '''
        <launch>
          <include file="$(dirname)/fail_on_node_death.launch.py"/>
          <node exec="sleeper" name="one"/>
        </launch>
    ''')
    desc = parse_launch(f)
    assert desc.fail_on_node_death and [n.node_name for n in desc] == ['/one']
    (tmp_path / 'other.launch.py').write_text('')
    f.write_text(f.read_text().replace('fail_on_node_death', 'other'))
    with pytest.raises(LaunchError, match='XML launch files only .*fail_on_node_death'):
        parse_launch(f)
    f.write_text(f.read_text().replace(
        '<include file="$(dirname)/other.launch.py"/>',
        '<include file="$(dirname)/fail_on_node_death.launch.py"><arg name="x" value="1"/>'
        '</include>'))
    with pytest.raises(LaunchError, match='takes no <arg>'):
        parse_launch(f)


@pytest.mark.parametrize('name', ['haptic_render', 'identify_and_render', 'arm_transmission',
                                  'arm_friction'])
def test_every_launch_file_fails_on_node_death_under_ros2_launch_too(name):
    """Each shipped launch file includes fail_on_node_death.launch.py (ros2 launch then ends with
    status 1 when a node dies, as fric launch does) before any node, and its rviz2 node (when it
    has one) comes first among the nodes: without rviz2, rviz:=true fails before anything
    starts under both runners."""
    text = (ROOT / 'launch' / f'{name}.launch.xml').read_text()
    include = text.index('<include file="$(dirname)/fail_on_node_death.launch.py"/>')
    first_node = text.index('<node ')
    assert include < first_node
    if 'exec="rviz2"' in text:
        assert text.index('exec="rviz2"') < text.index('<node ', first_node + 1)
    assert parse_launch(ROOT / 'launch' / f'{name}.launch.xml').fail_on_node_death
