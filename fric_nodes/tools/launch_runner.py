"""A small runner for ROS 2 XML launch files, for installs without the ``ros2`` CLI.

``ros2 launch fric <file>`` is the reference. This module parses the subset of the launch_xml /
launch_ros frontend that fric's launch files use (see docs/launch.md), resolves it to plain command
lines, and runs them as child processes. Anything outside the subset is rejected with an error
naming the file, line, tag and attribute, never silently ignored.

Python API::

    desc = parse_launch('haptic_render.launch.xml', {'backend': 'sim'})
    for node in desc:            # NodeSpec: label, node_name, cmd, env, output, on_exit_shutdown
        print(node.cmd)
    sys.exit(run(desc))          # starts them, forwards SIGINT/SIGTERM, returns 0 or 1
"""
from __future__ import annotations

import ctypes
import datetime
import math
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Iterable, Iterator
from xml.parsers import expat

from fric_nodes.tools.user_errors import params_file_problem

__all__ = ["LaunchError", "NodeSpec", "LaunchDescription", "parse_launch", "run",
           "find_launch_file", "package_share", "resolve_executable", "format_command",
           "default_log_dir"]

PACKAGE = "fric"
# launch/fail_on_node_death.launch.py: makes ros2 launch end with status 1 when a node dies, the
# rule run() applies anyway. An <include> of it is the one non-XML include fric launch accepts.
FAIL_ON_NODE_DEATH = "fail_on_node_death.launch.py"
_SOURCE_ROOT = Path(__file__).resolve().parents[2]



def _launch_equals(left: str, right: str) -> bool:
    """launch's EqualsSubstitution: booleans (true/false/1/0) as booleans, numbers within
    ``math.isclose``, anything else as strings."""
    bools = ("true", "false", "1", "0")
    if left.lower() in bools and right.lower() in bools:
        return (left.lower() in ("true", "1")) == (right.lower() in ("true", "1"))
    try:
        return math.isclose(float(left), float(right))
    except ValueError:
        return left == right

class LaunchError(Exception):
    """A launch file is invalid or uses something outside the supported subset."""



def _libc_prctl():
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):  # not Linux
        return None


_PRCTL = _libc_prctl()  # resolved here: after fork the child only makes the C call


def die_with_parent() -> None:
    """``preexec_fn`` for a child that must not outlive its launcher: SIGTERM it when the
    launching thread dies, however it dies (Linux ``PR_SET_PDEATHSIG``; no-op elsewhere).
    A haptic node orphaned by a killed launcher would otherwise keep commanding forces."""
    if _PRCTL is not None:
        _PRCTL(1, signal.SIGTERM)  # 1 = PR_SET_PDEATHSIG

@dataclass
class NodeSpec:
    """One node, fully resolved: what ``run`` starts."""

    label: str                  # process label as ros2 launch prints it: '<exec_name>-<N>'
    node_name: str | None       # full ROS name ('/ns/name'), None when the launch file sets no name
    cmd: list[str]              # absolute executable path + arguments
    env: dict[str, str] = field(default_factory=dict)   # additions to os.environ (<env> children)
    output: str = "screen"      # 'screen', 'log' or 'both'
    on_exit_shutdown: bool = False
    where: str = ""             # 'file:line' of the <node> tag


@dataclass
class LaunchDescription:
    """The resolved contents of a launch file: its nodes in start order and the argument values."""

    file: Path
    nodes: list[NodeSpec]
    arguments: dict[str, str]
    fail_on_node_death: bool = False    # includes FAIL_ON_NODE_DEATH (ros2 launch then fails too)

    def __iter__(self) -> Iterator[NodeSpec]:
        return iter(self.nodes)

    def __len__(self) -> int:
        return len(self.nodes)

    def node(self, name: str) -> NodeSpec:
        """The node whose full name, base name or label is ``name``."""
        for n in self.nodes:
            if name in (n.node_name, n.label) or (n.node_name or "").rsplit("/", 1)[-1] == name:
                return n
        raise KeyError(f"no node named {name!r} in {self.file}")


# --- packages and executables -------------------------------------------------------------------

def _ament_prefix(pkg: str) -> Path | None:
    try:
        from ament_index_python.packages import get_package_prefix
        return Path(get_package_prefix(pkg))
    except (ImportError, LookupError, OSError, ValueError):
        return None


def _is_source_root(root: Path) -> bool:
    try:
        return ET.parse(root / "package.xml").getroot().findtext("name") == PACKAGE
    except (OSError, ET.ParseError):
        return False


def package_share(pkg: str) -> Path:
    """``$(find-pkg-share pkg)``: the ament index, else (for fric) this source tree."""
    prefix = _ament_prefix(pkg)
    if prefix is not None:
        return prefix / "share" / pkg
    if pkg == PACKAGE and _is_source_root(_SOURCE_ROOT):
        return _SOURCE_ROOT
    raise LookupError(f"package '{pkg}' not found (not in the ament index: AMENT_PREFIX_PATH="
                      f"{os.environ.get('AMENT_PREFIX_PATH', '')!r})")


def resolve_executable(pkg: str | None, exe: str) -> str:
    """``<prefix>/lib/<pkg>/<exe>`` from the ament index, else ``exe`` on PATH (the directory of
    ``sys.executable`` first, so a venv's console scripts work without activating it)."""
    if "/" in exe:
        if os.access(exe, os.X_OK) and os.path.isfile(exe):
            return os.path.abspath(exe)
        raise LookupError(f"executable '{exe}' does not exist or is not executable")
    if pkg:
        prefix = _ament_prefix(pkg)
        if prefix is not None:
            candidate = prefix / "lib" / pkg / exe
            if candidate.is_file() and os.access(candidate, os.X_OK):
                return str(candidate)
    path = os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", os.defpath)])
    found = shutil.which(exe, path=path)
    if found is None:
        where = f"in package '{pkg}' (ament index: lib/{pkg}/{exe}) or " if pkg else ""
        raise LookupError(f"executable '{exe}' not found {where}on PATH")
    return os.path.abspath(found)


def find_launch_file(name: str | os.PathLike) -> Path:
    """A path to an existing file, or a bare file name looked up in ``<fric share>/launch/``."""
    path = Path(name)
    if path.is_file():
        return path.resolve()
    if len(path.parts) == 1:
        try:
            candidate = package_share(PACKAGE) / "launch" / path
        except LookupError as e:
            raise LaunchError(f"launch file '{name}' not found: {e}") from None
        if candidate.is_file():
            return candidate.resolve()
        raise LaunchError(f"launch file '{name}' not found (nor as {candidate})")
    raise LaunchError(f"launch file '{name}' not found")


def format_command(spec: NodeSpec) -> str:
    """A shell-ready rendering of a node's command line, with its <env> additions."""
    env = " ".join(f"{k}={shlex.quote(v)}" for k, v in spec.env.items())
    return (f"env {env} " if env else "") + shlex.join(spec.cmd)


# --- XML with line numbers ----------------------------------------------------------------------

@dataclass
class _El:
    tag: str
    attrib: dict[str, str]
    line: int
    children: list["_El"] = field(default_factory=list)


def _read_xml(path: Path) -> _El:
    parser = expat.ParserCreate()
    stack: list[_El] = []
    root: list[_El] = []

    def start(tag: str, attrib: dict[str, str]) -> None:
        el = _El(tag, attrib, parser.CurrentLineNumber)
        (stack[-1].children if stack else root).append(el)
        stack.append(el)

    def text(data: str) -> None:
        if data.strip():
            raise LaunchError(f"{path}:{parser.CurrentLineNumber}: unexpected text "
                              f"{data.strip()!r} in <{stack[-1].tag}> (launch tags carry "
                              "attributes only)")

    parser.StartElementHandler = start
    parser.EndElementHandler = lambda tag: stack.pop()
    parser.CharacterDataHandler = text
    try:
        parser.Parse(path.read_bytes(), True)
    except expat.ExpatError as e:
        raise LaunchError(f"{path}:{e.lineno}: XML syntax error: "
                          f"{expat.ErrorString(e.code)}") from None
    return root[0]


# Tag -> (allowed attributes, allowed child tags). 'include/arg' is <arg> inside <include>.
_ACTIONS = ("arg", "let", "node", "group", "include", "push-ros-namespace", "push_ros_namespace")
_COND = ("if", "unless")
_SCHEMA: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "launch": ((), _ACTIONS),
    "arg": (("name", "default", "description") + _COND, ("choice",)),
    "choice": (("value",), ()),
    "let": (("name", "value") + _COND, ()),
    "node": (("pkg", "exec", "name", "namespace", "exec_name", "output", "args", "ros_args",
              "on_exit") + _COND, ("param", "remap", "env")),
    "param": (("name", "value", "from", "type"), ()),
    "remap": (("from", "to"), ()),
    "env": (("name", "value"), ()),
    "group": (("scoped",) + _COND, _ACTIONS),
    "push-ros-namespace": (("namespace",) + _COND, ()),
    "push_ros_namespace": (("namespace",) + _COND, ()),
    "include": (("file",) + _COND, ("arg",)),
    "include/arg": (("name", "value"), ()),
}
_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*$")
_VAR_RE = re.compile(r"\$\(var\s+([^)\s]+)\s*\)")
_NS_RE = re.compile(r"/$|(/[A-Za-z_][A-Za-z0-9_]*)+$")
_OUTPUTS = ("screen", "log", "both")


def _absolute_hint(path: str, subdir: str) -> str:
    """Absolute forms of a relative ``path`` for an error message: the file it names from the
    current directory when that exists, and ``$(find-pkg-share PKG)/...`` (``subdir/`` added
    only to a bare file name: ``config/x.yaml`` stays ``.../config/x.yaml``)."""
    rel = path if len(Path(path).parts) > 1 else f"{subdir}/{path}"
    try:
        pkg = PACKAGE if (package_share(PACKAGE) / rel).is_file() else "PKG"
    except LookupError:
        pkg = "PKG"
    share = f"$(find-pkg-share {pkg})/{rel}"
    here = Path(path).resolve()
    return f"{here} (the file in the current directory) or {share}" if here.is_file() else share


def _prefix_namespace(base: str | None, ns: str | None) -> str | None:
    """launch_ros.utilities.prefix_namespace: ``ns`` under ``base`` unless ``ns`` is absolute."""
    if ns is None:
        combined = base
    elif not base or ns.startswith("/"):
        combined = ns
    else:
        combined = ("" if base == "/" else base) + "/" + ns
    if combined is not None and combined != "/":
        combined = combined.rstrip("/")
    return combined


@dataclass
class _Scope:
    vars: dict[str, str]
    ns: str | None = None


class _Parser:
    def __init__(self, cli_args: dict[str, str]) -> None:
        self.cli_args = dict(cli_args)
        self.declared: set[str] = set()
        self.nodes: list[NodeSpec] = []
        self.files: list[Path] = []          # include stack, for $(dirname) and cycle checks
        self.fail_on_node_death = False      # the file includes FAIL_ON_NODE_DEATH
        self.el: _El | None = None           # element being processed, for error locations

    # errors and attributes
    def err(self, msg: str, el: _El | None = None) -> LaunchError:
        el = el or self.el
        where = f"{self.files[-1]}:{el.line if el else 1}" if self.files else "<command line>"
        return LaunchError(f"{where}: {msg}")

    def validate(self, el: _El, key: str) -> None:
        """Reject unknown tags, attributes and children anywhere in the file, even in branches an
        if/unless switches off (ros2 launch parses the whole file too)."""
        if key not in _SCHEMA:
            raise self.err(f'unsupported tag <{el.tag}> (fric launch supports: '
                           f'{", ".join(t for t in _SCHEMA if "/" not in t)})', el)
        attrs, children = _SCHEMA[key]
        for a in el.attrib:
            if a not in attrs:
                raise self.err(f"<{el.tag}>: unsupported attribute '{a}' (supported: "
                               f"{', '.join(attrs) or 'none'})", el)
        for c in el.children:
            if c.tag not in children:
                if c.tag in _SCHEMA:
                    raise self.err(f"<{c.tag}> is not supported inside <{el.tag}>", c)
                raise self.err(f'unsupported tag <{c.tag}> (fric launch supports: '
                               f'{", ".join(t for t in _SCHEMA if "/" not in t)})', c)
            self.validate(c, f"{el.tag}/{c.tag}" if f"{el.tag}/{c.tag}" in _SCHEMA else c.tag)

    def raw(self, el: _El, name: str, required: bool = True) -> str | None:
        if name not in el.attrib:
            if required:
                raise self.err(f"<{el.tag}>: missing required attribute '{name}'", el)
            return None
        return el.attrib[name]

    def attr(self, el: _El, name: str, scope: _Scope, required: bool = True) -> str | None:
        value = self.raw(el, name, required)
        return None if value is None else self.subst(value, el, name, scope)

    # substitutions
    def segments(self, text: str, el: _El, attr: str, scope: _Scope) -> list[tuple[bool, str]]:
        """``text`` as (is_literal, string) pieces, every $(...) replaced by its value (nested
        substitutions and quoted arguments as launch's frontend grammar reads them)."""
        out, i = [], 0
        while (start := text.find("$(", i)) >= 0:
            value, end = self.parse_subst(text, start, el, attr, scope)
            out += [(True, text[i:start]), (False, value)]
            i = end
        out.append((True, text[i:]))
        return [(literal, s) for literal, s in out if s or not literal]

    def parse_subst(self, text: str, i: int, el: _El, attr: str,
                    scope: _Scope) -> tuple[str, int]:
        """The value of the substitution starting at ``text[i:i+2] == "$("`` and the index after
        its ``)``: a name, then arguments after single spaces; an argument is a quoted string
        ('...' or "...", substitutions inside) or a run of characters other than space, quotes
        and parentheses, with substitutions; a backslash escapes the next character."""
        def fail(what: str) -> LaunchError:
            if what == "unterminated":
                return self.err(f"<{el.tag} {attr}=...>: unterminated substitution in "
                                f"{text!r}", el)
            return self.err(f"<{el.tag} {attr}=...>: {what} in substitution {text[i:]!r}", el)

        m = re.compile(r"[A-Za-z][A-Za-z0-9_-]*").match(text, i + 2)
        if m is None:
            raise fail("expected a substitution name after '$('")
        kind, j, args = m.group(0), m.end(), []
        while True:
            if j >= len(text):
                raise fail("unterminated")
            if text[j] == ")":
                j += 1
                break
            if text[j] != " ":
                raise fail(f"unexpected {text[j]!r} (arguments are separated by one space)")
            j += 1
            arg, j = self.parse_arg(text, j, el, attr, scope, fail)
            args.append(arg)
        return self.one_subst(kind, args, el, attr, scope), j

    def parse_arg(self, text: str, j: int, el: _El, attr: str, scope: _Scope,
                  fail) -> tuple[str, int]:
        quote = text[j] if j < len(text) and text[j] in "'\"" else None
        stop = quote if quote else " )'\"("
        j += 1 if quote else 0
        buf = []
        while True:
            if j >= len(text):
                if quote:
                    raise fail(f"unterminated {quote}...{quote} argument")
                raise fail("unterminated")
            c = text[j]
            if c in stop:
                if quote:
                    j += 1
                elif c == "(":
                    raise fail("unescaped '(' in an argument (write \\( or quote it)")
                break
            if text.startswith("$(", j):
                value, j = self.parse_subst(text, j, el, attr, scope)
                buf.append(value)
            elif c == "\\" and j + 1 < len(text):
                buf.append(text[j + 1])
                j += 2
            else:
                buf.append(c)
                j += 1
        if not buf and not quote:
            raise fail("empty argument (write '' for an empty string)")
        return "".join(buf), j

    def subst(self, text: str, el: _El, attr: str, scope: _Scope) -> str:
        return "".join(s for _, s in self.segments(text, el, attr, scope))

    def split_args(self, text: str, el: _El, attr: str, scope: _Scope) -> list[str]:
        """A command line split like ros2 launch does: the literal text by shell rules, while a
        substitution's value stays inside one argument (spaces and all)."""
        args: list[str] = []
        cur: str | None = None
        for literal, piece in self.segments(text, el, attr, scope):
            if not literal:
                cur = (cur or "") + piece
                continue
            try:
                tokens = shlex.split(piece)
            except ValueError as e:
                raise self.err(f"<{el.tag} {attr}=...>: cannot split {text!r}: {e}", el) from None
            if cur is not None and (not tokens or piece[0].isspace()):
                args.append(cur)
                cur = None
            if tokens:
                cur = (cur or "") + tokens[0]
                if len(tokens) > 1:
                    args += [cur] + tokens[1:-1]
                    cur = tokens[-1]
                if piece[-1].isspace():
                    args.append(cur)
                    cur = None
        return args + ([] if cur is None else [cur])

    def one_subst(self, kind: str, args: list[str], el: _El, attr: str, scope: _Scope) -> str:
        inner = " ".join([kind] + args)
        arity = {"var": (1, 1), "env": (1, 2), "find-pkg-share": (1, 1), "dirname": (0, 0),
                 "equals": (2, 2), "not-equals": (2, 2), "if": (2, 3), "not": (1, 1),
                 "and": (2, 2), "or": (2, 2)}
        if kind not in arity:
            raise self.err(f"<{el.tag} {attr}=...>: unsupported substitution $({inner}) (fric "
                           f"launch supports $(var N), $(env N [DEFAULT]), $(find-pkg-share P), "
                           f"$(dirname), $(equals A B), $(not-equals A B), $(if C A [B]), "
                           f"$(not C), $(and C D), $(or C D))", el)
        lo, hi = arity[kind]
        if not lo <= len(args) <= hi:
            raise self.err(f"<{el.tag} {attr}=...>: $({kind}) takes {lo}..{hi} arguments, "
                           f"got $({inner})", el)
        if kind in ("equals", "not-equals"):
            if "" in args:  # launch: an empty argument is an empty list, str([]) == "[]"
                raise self.err(f"<{el.tag} {attr}=...>: $({kind}) with an empty argument: ros2 "
                               f"launch compares the text '[]' there, not ''; compare "
                               f"'x$(var NAME)' with x instead", el)
            same = _launch_equals(args[0], args[1])
            return "true" if same == (kind == "equals") else "false"
        if kind in ("if", "not", "and", "or"):
            flags = [self.boolean(a, kind, el, attr) for a in args[:1 if kind == "if" else None]]
            if kind == "if":
                return args[1] if flags[0] else (args[2] if len(args) == 3 else "")
            value = (not flags[0]) if kind == "not" else \
                (all(flags) if kind == "and" else any(flags))
            return "true" if value else "false"
        if kind == "var":
            if args[0] not in scope.vars:
                raise self.err(f"<{el.tag} {attr}=...>: $(var {args[0]}): launch argument "
                               f"'{args[0]}' is not defined (declare it with <arg> or <let> first)",
                               el)
            return scope.vars[args[0]]
        if kind == "env":
            value = os.environ.get(args[0], args[1] if len(args) == 2 else None)
            if value is None:
                raise self.err(f"<{el.tag} {attr}=...>: environment variable {args[0]} is not set "
                               f"(give a default: $(env {args[0]} DEFAULT))", el)
            return value
        if kind == "find-pkg-share":
            try:
                return str(package_share(args[0]))
            except LookupError as e:
                raise self.err(f"<{el.tag} {attr}=...>: $(find-pkg-share {args[0]}): {e}", el) \
                    from None
        return str(self.files[-1].parent)

    def boolean(self, value: str, kind: str, el: _El, attr: str) -> bool:
        """A condition's value as launch reads it: true/false/1/0 (any case)."""
        v = value.strip().lower()
        if v not in ("true", "false", "1", "0"):
            raise self.err(f"<{el.tag} {attr}=...>: $({kind}): a condition must be "
                           f"true/false/1/0, got {value!r}", el)
        return v in ("true", "1")

    def condition(self, el: _El, scope: _Scope) -> bool:
        if "if" in el.attrib and "unless" in el.attrib:
            raise self.err(f"<{el.tag}>: if and unless are mutually exclusive", el)
        for attr, want in (("if", True), ("unless", False)):
            if attr in el.attrib:
                value = self.subst(el.attrib[attr], el, attr, scope).strip().lower()
                if value not in ("true", "false", "1", "0"):
                    raise self.err(f"<{el.tag} {attr}=...>: condition must be true/false/1/0, "
                                   f"got {value!r}", el)
                return (value in ("true", "1")) == want
        return True

    # files and actions
    def parse_file(self, path: Path, scope: _Scope) -> None:
        path = path.resolve()
        if path in self.files:
            raise self.err(f"recursive include of {path}")
        if not path.is_file():
            raise self.err(f"included launch file {path} does not exist")
        if not path.name.endswith(".xml"):
            raise self.err(f"{path.name}: fric launch reads XML launch files only (the one "
                           f"Python launch file it knows is {FAIL_ON_NODE_DEATH})")
        self.files.append(path)
        try:
            root = _read_xml(path)
            if root.tag != "launch":
                raise self.err(f"root tag must be <launch>, not <{root.tag}>", root)
            self.validate(root, "launch")
            self.actions(root.children, scope)
        finally:
            self.files.pop()

    def actions(self, elements: list[_El], scope: _Scope) -> None:
        for el in elements:
            self.el = el
            if not self.condition(el, scope):
                continue
            getattr(self, "do_" + el.tag.replace("-", "_"))(el, scope)

    def do_arg(self, el: _El, scope: _Scope) -> None:
        name = self.raw(el, "name")
        self.declared.add(name)
        if name not in scope.vars:
            default = self.attr(el, "default", scope, required=False)
            if default is None:
                raise self.err(f"required launch argument '{name}' was not provided "
                               f"(pass {name}:=VALUE)", el)
            scope.vars[name] = default
        choices = [self.raw(c, "value") for c in el.children]
        if choices and scope.vars[name] not in choices:
            raise self.err(f"launch argument '{name}' is {scope.vars[name]!r}, not one of "
                           f"{', '.join(choices)}", el)

    def do_let(self, el: _El, scope: _Scope) -> None:
        scope.vars[self.raw(el, "name")] = self.attr(el, "value", scope)

    def do_push_ros_namespace(self, el: _El, scope: _Scope) -> None:
        ns = _prefix_namespace(scope.ns, self.attr(el, "namespace", scope))
        if ns is not None and not _NS_RE.match(ns if ns.startswith("/") else "/" + ns):
            raise self.err(f"<{el.tag}>: invalid namespace {ns!r}", el)
        scope.ns = ns

    def do_group(self, el: _El, scope: _Scope) -> None:
        scoped = (el.attrib.get("scoped", "true")).lower()
        if scoped not in ("true", "false"):
            raise self.err(f"<group scoped=...>: must be true or false, got {scoped!r}", el)
        inner = _Scope(dict(scope.vars), scope.ns) if scoped == "true" else scope
        self.actions(el.children, inner)

    def do_include(self, el: _El, scope: _Scope) -> None:
        file = self.attr(el, "file", scope)
        if not os.path.isabs(file):
            raise self.err(f"<include file={file!r}>: use an absolute path, e.g. "
                           f"$(dirname)/{file} or {_absolute_hint(file, 'launch')}", el)
        if os.path.basename(file) == FAIL_ON_NODE_DEATH:
            # ros2 launch's half of the rule run() always applies: nothing to start here
            if el.children:
                raise self.err(f"<include file=.../{FAIL_ON_NODE_DEATH}> takes no <arg>", el)
            if not os.path.isfile(file):
                raise self.err(f"included launch file {file} does not exist", el)
            self.fail_on_node_death = True
            return
        for a in el.children:     # like ros2 launch: set in the current (unscoped) context
            scope.vars[self.attr(a, "name", scope)] = self.attr(a, "value", scope)
        self.parse_file(Path(file), scope)

    def do_node(self, el: _El, scope: _Scope) -> None:
        pkg = self.attr(el, "pkg", scope, required=False)
        exe = self.attr(el, "exec", scope)
        name = self.attr(el, "name", scope, required=False)
        if name is not None and not _NAME_RE.match(name):
            raise self.err(f"<node name={name!r}>: invalid node name", el)
        ns = _prefix_namespace(scope.ns, self.attr(el, "namespace", scope, required=False))
        if ns is not None:
            ns = ns if ns.startswith("/") else "/" + ns
            if not _NS_RE.match(ns):
                raise self.err(f"<node namespace=...>: invalid namespace {ns!r}", el)
        output = self.attr(el, "output", scope, required=False) or "screen"
        if output not in _OUTPUTS:
            raise self.err(f"<node output={output!r}>: fric launch supports {', '.join(_OUTPUTS)}",
                           el)
        on_exit = self.raw(el, "on_exit", required=False)
        if on_exit not in (None, "shutdown"):
            raise self.err(f'<node on_exit={on_exit!r}>: only on_exit="shutdown" is '
                           "supported", el)
        try:
            path = resolve_executable(pkg, exe)
        except LookupError as e:
            raise self.err(f"<node>: {e}", el) from None

        cmd = [path] + self.split_args(el.attrib.get("args", ""), el, "args", scope)
        if "ros_args" in el.attrib:
            cmd += ["--ros-args"] + self.split_args(el.attrib["ros_args"], el, "ros_args", scope)
        cmd.append("--ros-args")     # the same order launch_ros.actions.Node produces
        if name is not None:
            cmd += ["-r", f"__node:={name}"]
        if ns is not None:
            cmd += ["-r", f"__ns:={ns}"]
        remaps, env = [], {}
        for c in el.children:
            if c.tag == "param":
                cmd += self.param(c, scope, os.path.basename(exe))
            elif c.tag == "remap":
                remaps += ["-r", f"{self.attr(c, 'from', scope)}:={self.attr(c, 'to', scope)}"]
            else:
                env[self.attr(c, "name", scope)] = self.attr(c, "value", scope)
        label = self.attr(el, "exec_name", scope, required=False) or os.path.basename(exe)
        self.nodes.append(NodeSpec(
            label=f"{label}-{len(self.nodes) + 1}",
            node_name=None if name is None else _prefix_namespace(ns or "/", name),
            cmd=cmd + remaps, env=env, output=output, on_exit_shutdown=on_exit == "shutdown",
            where=f"{self.files[-1]}:{el.line}"))

    def param(self, el: _El, scope: _Scope, executable: str) -> list[str]:
        if ("from" in el.attrib) == ("name" in el.attrib):
            raise self.err("<param>: give either name and value, or from (a parameter file)", el)
        if "from" in el.attrib:
            path = self.attr(el, "from", scope)
            if not os.path.isabs(path):
                raise self.err(f"<param from={path!r}>: use an absolute path, e.g. "
                               f"{_absolute_hint(path, 'config')}", el)
            if not os.path.isfile(path):
                raise self.err(f"<param from=...>: parameter file {path} does not exist", el)
            problem = params_file_problem(path)
            if problem:   # one line now, instead of a traceback from every node that reads it
                raise self.err(f"<param from=...>: {problem}", el)
            return ["--params-file", path]
        value = self.attr(el, "value", scope)
        if "type" in el.attrib:
            kind = self.attr(el, "type", scope)
            if kind != "str":
                raise self.err(f"<param type={kind!r}>: fric launch supports type=\"str\" only "
                               "(the value as a string, never read as YAML)", el)
            value = "'" + value.replace("'", "''") + "'"  # a YAML single-quoted scalar
        name = self.attr(el, "name", scope)
        self.check_param(executable, name, value, el, scope)
        return ["-p", f"{name}:={value}"]

    def check_param(self, executable: str, name: str, text: str, el: _El,
                    scope: _Scope) -> None:
        """Refuse now, before any node starts, a ``-p name:=text`` that fric node
        ``executable`` would refuse at start-up (a type rcl reads differently, e.g. ``5`` for a
        double; out of range; not one of the choices), naming the launch argument it came from.
        ``5`` is not taken for ``5.0``: ``ros2 launch`` would pass the integer and the node
        would stop, so the fix (``write 5.0``) is what works under both."""
        from fric_interfaces.parameters import check, descriptor, rejection_reason
        from fric_nodes.tools.param_schemas import param_spec, yaml_parameter

        spec = param_spec(executable, name)
        typed = yaml_parameter(text) if spec is not None else None
        if typed is None:
            return
        value, ptype = typed
        reason = rejection_reason(name, value, ptype, descriptor(spec), check_read_only=False)
        if reason is None:
            problem = check(spec, value)
            reason = f"{name}: {problem}" if problem else None
        if reason is None:
            return
        args = sorted(set(_VAR_RE.findall(el.attrib.get("value", ""))))
        if len(args) == 1 and args[0] in scope.vars:
            raise self.err(f"launch argument {args[0]}:={scope.vars[args[0]]} sets {executable}'s "
                           f"parameter {reason}", el)
        raise self.err(f"<param name={name!r}>: {executable}'s parameter {reason}", el)


def parse_launch(path: str | os.PathLike, args: dict[str, str] | None = None) -> LaunchDescription:
    """Parse a launch file (a path, or a bare name in ``<fric share>/launch/``) with ``args`` as
    the ``name:=value`` command-line arguments. Raises :class:`LaunchError` (message starting with
    ``file:line:``) for anything invalid or unsupported, a missing executable included."""
    file = find_launch_file(path)
    if not file.name.endswith(".xml"):
        raise LaunchError(f"{file}: fric launch reads XML launch files (*.launch.xml) only")
    parser = _Parser(args or {})
    scope = _Scope(dict(args or {}))
    parser.parse_file(file, scope)
    unknown = sorted(set(parser.cli_args) - parser.declared)
    if unknown:
        raise LaunchError(f"{file}: unknown launch argument(s) {', '.join(unknown)} (declared: "
                          f"{', '.join(sorted(parser.declared)) or 'none'})")
    return LaunchDescription(file, parser.nodes,
                             {k: v for k, v in scope.vars.items() if k in parser.declared},
                             parser.fail_on_node_death)


# --- running ------------------------------------------------------------------------------------

_CLEAN_STOP = {0, -signal.SIGINT, -signal.SIGTERM, 128 + signal.SIGINT, 128 + signal.SIGTERM}


def _describe(code: int) -> str:
    if code < 0:
        try:
            return f"{code} ({signal.Signals(-code).name})"
        except ValueError:
            pass
    return str(code)


def default_log_dir() -> Path:
    """Where ros2 launch would log: $ROS_LOG_DIR, else $ROS_HOME/log, else ~/.ros/log."""
    base = os.environ.get("ROS_LOG_DIR") or os.path.join(
        os.environ.get("ROS_HOME") or os.path.expanduser("~/.ros"), "log")
    stamp = datetime.datetime.now().strftime("%Y-%m-%d-%H-%M-%S")
    return Path(base) / f"fric_launch-{stamp}-{os.getpid()}"


@dataclass
class _Child:
    spec: NodeSpec
    proc: subprocess.Popen
    threads: list[threading.Thread]
    log: IO[str] | None
    code: int | None = None


class _Runner:
    def __init__(self, nodes: list[NodeSpec], sigterm_timeout: float, sigkill_timeout: float,
                 log_dir: Path | None, out: IO[str], err: IO[str]) -> None:
        self.nodes, self.out, self.err = nodes, out, err
        self.sigterm_timeout, self.sigkill_timeout = sigterm_timeout, sigkill_timeout
        self.log_dir = log_dir
        self.lock = threading.Lock()
        self.children: list[_Child] = []
        self.signals: list[str] = []      # appended by the signal handler, read by the main loop
        self.reported = 0
        self.failed = False

    def say(self, msg: str) -> None:
        self.write(self.err, f"[fric launch] {msg}\n")

    def write(self, sink: IO[str], text: str) -> None:
        with self.lock:
            try:
                sink.write(text)
                sink.flush()
            except (OSError, ValueError):
                pass     # a closed or broken terminal must not stop the pipes from draining

    def pump(self, stream: IO[bytes], label: str, sink: IO[str] | None,
             log: IO[str] | None) -> None:
        for raw in iter(stream.readline, b""):
            line = raw.decode(errors="replace").rstrip("\r\n")
            if sink is not None:
                self.write(sink, f"[{label}] {line}\n")
            if log is not None:
                with self.lock:
                    log.write(line + "\n")
                    log.flush()
        stream.close()

    def start(self, spec: NodeSpec) -> None:
        log = None
        if spec.output in ("log", "both"):
            if self.log_dir is None:
                self.log_dir = default_log_dir()
            self.log_dir.mkdir(parents=True, exist_ok=True)
            log = open(self.log_dir / f"{spec.label}.log", "w", encoding="utf-8")
        env = {**os.environ, "PYTHONUNBUFFERED": os.environ.get("PYTHONUNBUFFERED", "1"),
               **spec.env}
        try:
            proc = subprocess.Popen(spec.cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, env=env, start_new_session=True,
                                    preexec_fn=die_with_parent)
        except OSError as e:
            if log:
                log.close()
            raise LaunchError(f"cannot start {spec.label} ({spec.where}): {e}") from None
        screen = spec.output in ("screen", "both")
        threads = [threading.Thread(target=self.pump, daemon=True,
                                    args=(pipe, spec.label, sink if screen else None, log))
                   for pipe, sink in ((proc.stdout, self.out), (proc.stderr, self.err))]
        self.children.append(_Child(spec, proc, threads, log))
        self.say(f"{spec.label}: started, pid {proc.pid}"
                 + (f", output in {log.name}" if log else ""))
        for t in threads:
            t.start()

    def running(self) -> list[_Child]:
        return [c for c in self.children if c.code is None]

    def poll(self) -> list[_Child]:
        """Children that exited since the last call (their code recorded)."""
        done = []
        for c in self.running():
            code = c.proc.poll()
            if code is not None:
                c.code = code
                done.append(c)
        while self.reported < len(self.signals):
            if self.reported:
                self.say(f"received {self.signals[self.reported]} again: shutdown already "
                         f"in progress")
            self.reported += 1
        return done

    def signal_all(self, children: list[_Child], sig: signal.Signals) -> None:
        for c in children:
            try:
                os.killpg(c.proc.pid, sig)    # its process group: it and anything it started
            except ProcessLookupError:
                pass

    def wait(self, timeout: float) -> list[_Child]:
        deadline = time.monotonic() + timeout
        while self.running() and time.monotonic() < deadline:
            for c in self.poll():
                self.report_stop(c)
            time.sleep(0.02)
        for c in self.poll():
            self.report_stop(c)
        return self.running()

    def report_stop(self, c: _Child) -> None:
        if c.code in _CLEAN_STOP:
            self.say(f"{c.spec.label} (pid {c.proc.pid}) stopped, exit code {_describe(c.code)}")
        else:
            self.failed = True
            self.say(f"{c.spec.label} (pid {c.proc.pid}) exited with code {_describe(c.code)} "
                     f"while shutting down")

    def shutdown(self) -> None:
        alive = self.running()
        if not alive:
            return
        self.say(f"stopping {len(alive)} process(es): SIGINT")
        self.signal_all(alive, signal.SIGINT)
        alive = self.wait(self.sigterm_timeout)
        if alive:
            for c in alive:
                self.say(f"{c.spec.label} (pid {c.proc.pid}) still running "
                         f"{self.sigterm_timeout:g} s after SIGINT: sending SIGTERM")
            self.signal_all(alive, signal.SIGTERM)
            alive = self.wait(self.sigkill_timeout)
        if alive:
            self.failed = True
            for c in alive:
                self.say(f"{c.spec.label} (pid {c.proc.pid}) still running "
                         f"{self.sigkill_timeout:g} s after SIGTERM: sending SIGKILL")
            self.signal_all(alive, signal.SIGKILL)
            for c in alive:
                c.code = c.proc.wait()
                self.say(f"{c.spec.label} (pid {c.proc.pid}) killed, exit code {_describe(c.code)}")

    def loop(self) -> None:
        """Until a signal arrives, a child exits non-zero, an ``on_exit="shutdown"`` child exits
        or every child has exited. A child without ``on_exit="shutdown"`` exiting 0 ends nothing
        (as under ``ros2 launch``); any non-zero exit is a failure."""
        while not self.signals:
            end = False
            for c in self.poll():
                if c.code != 0:
                    end = self.failed = True
                    self.say(f"{c.spec.label} (pid {c.proc.pid}) died with exit code "
                             f"{_describe(c.code)}")
                elif c.spec.on_exit_shutdown:
                    end = True
                    self.say(f'{c.spec.label} (pid {c.proc.pid}) exited with code 0 and has '
                             f'on_exit="shutdown": shutting down')
                else:
                    self.say(f"{c.spec.label} (pid {c.proc.pid}) exited with code 0; the "
                             f"others go on")
            if end:
                return
            if not self.running():
                self.say("every process has exited")
                return
            time.sleep(0.05)
        self.say(f"received {self.signals[0]}: shutting down")

    def run(self) -> int:
        try:
            for spec in self.nodes:
                self.start(spec)
            self.loop()
        except LaunchError as e:
            self.failed = True
            self.say(str(e))
        finally:
            self.shutdown()
            for c in self.children:
                for t in c.threads:
                    t.join(timeout=2.0)
                if c.log:
                    c.log.close()
        self.say("done: " + ("FAILED, exit status 1" if self.failed else "exit status 0"))
        return 1 if self.failed else 0


def run(description: LaunchDescription | Iterable[NodeSpec], *, sigterm_timeout: float = 5.0,
        sigkill_timeout: float = 5.0, log_dir: str | os.PathLike | None = None,
        stdout: IO[str] | None = None, stderr: IO[str] | None = None) -> int:
    """Start every node, each in its own process group, prefix their output lines with
    ``[label]``, and wait. Returns 0 after a clean stop (SIGINT/SIGTERM to this process, an
    ``on_exit="shutdown"`` node exiting 0, or every node having exited 0); 1 when a node exited
    non-zero, failed to stop on SIGINT/SIGTERM and had to be killed, or exited with an error
    while stopping. A node without ``on_exit="shutdown"`` exiting 0 ends nothing.

    Shutdown: SIGINT to every child, SIGTERM to those still running after ``sigterm_timeout``,
    SIGKILL after a further ``sigkill_timeout``. Signal handlers are installed only when called
    from the main thread (elsewhere, only child exits end the run)."""
    nodes = list(description)
    runner = _Runner(nodes, sigterm_timeout, sigkill_timeout,
                     None if log_dir is None else Path(log_dir),
                     stdout or sys.stdout, stderr or sys.stderr)
    if not nodes:
        runner.say("nothing to launch")
        return 0
    previous = {}
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM):
            previous[sig] = signal.signal(sig, lambda n, _f: runner.signals.append(
                signal.Signals(n).name))
    try:
        return runner.run()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
