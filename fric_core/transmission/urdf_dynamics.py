"""Rigid-body terms of an arm from its URDF, by Pinocchio (the only fric module importing it).

:class:`UrdfDynamics` gives what :class:`~.geared_arm.GearedArm` needs for algorithm (69) of
paper 004: the inertia matrix M_h(q), the bias force h(q, q̇) (Coriolis, centrifugal and
gravity: Pinocchio's ``nonLinearEffects``) and the end-effector Jacobian J(q) (6 × n, linear rows
first, axes of the world frame at the end-effector origin: Pinocchio's LOCAL_WORLD_ALIGNED), so a
wrench f = (force, torque) on the end effector enters as ``J(q)ᵀ f`` (46).

Joints: revolute, continuous (one angle, converted to Pinocchio's cos/sin pair) and prismatic.
``joint_names`` selects (and orders) the simulated joints; the other movable joints are locked
at ``locked_positions`` (default 0) with Pinocchio's reduced model. Bad files, unsupported
joints, unknown joint or frame names raise :class:`UrdfError` (a ``ValueError``) naming them.

A URDF is checked here (:func:`check_urdf`: well-formed XML, a ``<robot>``, named and unique
links and joints, a ``<limit effort velocity>`` on every revolute and prismatic joint, numbers
where numbers go, joints between existing links) before Pinocchio reads it, so a mistake is one
line naming the file, the line, the joint or link and what is missing. urdfdom (Pinocchio's URDF
parser) writes its own complaints to the C stderr; they are caught, never shown: what the check
above does not see and urdfdom rejects becomes a :class:`UrdfError` with urdfdom's first reason.

Sizes: a URDF larger than :data:`MAX_URDF_BYTES`, with more than :data:`MAX_URDF_LINKS` links or
more than :data:`MAX_MOVABLE_JOINTS` movable joints is refused with one line naming the limit and
the count, before the file is read (bytes) or Pinocchio builds anything (the counts, taken while
the XML is read). Each constant's comment gives the measurement behind it.

Bundled URDFs (``urdf/`` in the source tree, ``share/fric/urdf`` when installed):
``planar_2link`` (paper 004, Sec. 6.2) and ``arm7`` (a 7-DOF arm); see :func:`bundled_urdf`.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import tempfile
import threading
from pathlib import Path
from typing import Callable, Iterator, Mapping, Sequence, TypeVar
from xml.etree.ElementTree import Element, TreeBuilder
from xml.parsers import expat

import numpy as np
import pinocchio as pin

__all__ = ["UrdfDynamics", "UrdfError", "bundled_urdf", "check_urdf", "select_joints",
           "MAX_URDF_BYTES", "MAX_URDF_LINKS", "MAX_MOVABLE_JOINTS"]

_LWA = pin.LOCAL_WORLD_ALIGNED


class UrdfError(ValueError):
    """The URDF cannot be used: missing/malformed file, unsupported joint, unknown name."""


def bundled_urdf(name: str) -> Path:
    """Path of a URDF shipped with fric (``"planar_2link"``, ``"arm7"``; ``.urdf`` optional).

    Looked up in the source tree's ``urdf/``, then ``<sys.prefix>/share/fric/urdf`` and
    ``share/fric/urdf`` under each ``AMENT_PREFIX_PATH`` entry.

    Parameters
    ----------
    name : str
        The URDF's name, with or without the ``.urdf`` suffix.

    Returns
    -------
    pathlib.Path
        The first existing file.

    Raises
    ------
    UrdfError
        When no bundled URDF has that name.
    """
    fname = name if name.endswith(".urdf") else name + ".urdf"
    candidates = [Path(__file__).resolve().parents[2] / "urdf" / fname,
                  Path(sys.prefix) / "share" / "fric" / "urdf" / fname]
    for prefix in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep):
        if prefix:
            candidates.append(Path(prefix) / "share" / "fric" / "urdf" / fname)
    for c in candidates:
        if c.is_file():
            return c
    raise UrdfError(f"urdf: no bundled URDF named {name!r} (looked in "
                    f"{', '.join(str(c.parent) for c in candidates[:2])})")


def select_joints(joint_names: Sequence[str] | None, movable: Sequence[str],
                  source: str) -> list[str]:
    """The simulated joints: ``joint_names`` checked against a model's movable joints.

    Parameters
    ----------
    joint_names : sequence of str or None
        The joints asked for (the ``joint_names`` parameter); None: every movable joint.
    movable : sequence of str
        The model's movable joints, in its order.
    source : str
        The model, for the message (a URDF path).

    Returns
    -------
    list of str
        The joints, in ``joint_names`` order.

    Raises
    ------
    UrdfError
        ``joint_names: ...`` naming the unknown or repeated joints.
    """
    movable = list(movable)
    names = movable if joint_names is None else [str(j) for j in joint_names]
    unknown = [j for j in names if j not in movable]
    if unknown:
        raise UrdfError(f"joint_names: unknown joint(s) {unknown}; the movable joints of "
                        f"{source} are {movable}")
    if len(set(names)) != len(names):
        raise UrdfError(f"joint_names: repeated names in {names}")
    return names


# -- checking the URDF before Pinocchio (urdfdom) reads it ------------------------------------

_JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed", "floating", "planar")
_MOVABLE_TYPES = ("revolute", "continuous", "prismatic")
_T = TypeVar("_T")

#: Largest URDF text fric reads [bytes]. A URDF names its meshes (files) rather than embedding
#: them: the largest robot descriptions in use (full humanoids with hands, mobile manipulators)
#: are under 1 MB. A 16 MiB URDF (1000 links, each with 170 box visuals) took 1.0 s and 345 MB
#: peak RSS to check, 1.0 s and 275 MB for Pinocchio to read; at 8 MiB (80 visuals per link)
#: 0.6 s and 206 MB, 0.6 s and 171 MB, 311 MB for both in one process. 8 MiB leaves 8x the
#: largest real description.
MAX_URDF_BYTES = 8 * 2**20

#: Most ``<link>`` elements of a URDF. urdfdom and Pinocchio read the link tree recursively, one
#: C++ stack frame chain of ~2.1-2.8 KB per level: a chain of 4000 links overflows the default
#: 8 MiB stack (SIGSEGV, no message; 3000 pass) and a thread with a 2 MiB stack fails at 1000.
#: 1000 links bound the depth at a third of the 8 MiB stack and leave 2-5x the largest
#: descriptions with many fixed links (sensors, frames, meshes: 200-500 links).
MAX_URDF_LINKS = 1000

#: Most movable (revolute, continuous, prismatic) joints of a URDF. Pinocchio's ``Data`` holds
#: about eight nv × nv × nv tensors (second-order derivatives): peak RSS of building a chain of
#: nv revolute joints with its data (``/usr/bin/time -v``, ~75 MB of Python and Pinocchio
#: before) is 146 MB for 100, 593 MB for 200, 1.8 GB for 300 and 7.9 GB for 500, about
#: 64·nv³ bytes; it cannot be made smaller from outside Pinocchio. Fixed joints become frames and
#: cost nothing there. Real robots have 6-7 (an arm), 30-60 (a humanoid) and up to ~80 (a
#: humanoid with two dexterous hands) movable joints: 100 covers them at ~65 MB per ``Data``.
MAX_MOVABLE_JOINTS = 100


def _size_problem(size: int, where: str, unit: str = "bytes") -> None:
    """UrdfError when ``size`` exceeds :data:`MAX_URDF_BYTES`."""
    if size > MAX_URDF_BYTES:
        raise UrdfError(f"urdf: {where}: {size} {unit}, more than the {MAX_URDF_BYTES} bytes "
                        f"({MAX_URDF_BYTES // 2**20} MiB) fric reads (a URDF names its mesh "
                        "files rather than embedding them)")


def _parse_with_lines(data: bytes | str, where: str) -> tuple[Element, dict[int, int]]:
    """The XML tree and ``{id(element): line}``; UrdfError naming the line of a syntax error,
    or the count beyond :data:`MAX_URDF_LINKS` / :data:`MAX_MOVABLE_JOINTS` (counted while the
    XML is read; past a limit the tree is no longer built, only the count goes on)."""
    builder, lines = TreeBuilder(), {}
    parser = expat.ParserCreate()
    depth = 0
    links = movable = 0
    building = True

    def start(tag: str, attrib: dict[str, str]) -> None:
        nonlocal depth, links, movable, building
        depth += 1
        if depth == 2:  # the robot's own <link> and <joint> elements
            if tag == "link":
                links += 1
            elif tag == "joint" and attrib.get("type") in _MOVABLE_TYPES:
                movable += 1
            building = building and links <= MAX_URDF_LINKS and movable <= MAX_MOVABLE_JOINTS
        if building:
            lines[id(builder.start(tag, attrib))] = parser.CurrentLineNumber

    def end(tag: str) -> None:
        nonlocal depth
        depth -= 1
        if building:
            builder.end(tag)

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    try:
        parser.Parse(data, True)
    except expat.ExpatError as e:
        raise UrdfError(f"urdf: {where}:{e.lineno}: not well-formed XML: "
                        f"{expat.ErrorString(e.code)} (column {e.offset + 1})") from None
    if links > MAX_URDF_LINKS:
        raise UrdfError(f"urdf: {where}: {links} links, more than the {MAX_URDF_LINKS} fric "
                        "reads (the URDF reader recurses along each chain of links)")
    if movable > MAX_MOVABLE_JOINTS:
        raise UrdfError(f"urdf: {where}: {movable} movable joints, more than the "
                        f"{MAX_MOVABLE_JOINTS} fric reads (Pinocchio's data grows as the cube "
                        "of their number)")
    return builder.close(), lines


def _numbers_problem(text: str | None, count: int) -> str | None:
    """Why ``text`` is not ``count`` numbers separated by spaces (None when it is)."""
    if text is None:
        return None
    parts = text.split()
    if len(parts) != count:
        return f"{text!r} is not {count} number{'s' if count > 1 else ''}"
    for x in parts:
        try:
            float(x)
        except ValueError:
            return f"{x!r} is not a number"
    return None


def check_urdf(data: bytes | str, where: str) -> None:
    """Raise :class:`UrdfError` for the URDF mistakes urdfdom reports only on the C stderr.

    Checks that ``data`` is well-formed XML with a named ``<robot>`` root; that its links and
    joints are named and unique; that each joint has a known type, a ``<parent link>`` and a
    ``<child link>`` naming existing links; that revolute and prismatic joints have a ``<limit>``
    with ``effort`` and ``velocity``; that limits, origins, axes, masses and inertias hold
    numbers; and that exactly one link has no parent. Refuses, before any of that, a text larger
    than :data:`MAX_URDF_BYTES` or with more than :data:`MAX_URDF_LINKS` links or
    :data:`MAX_MOVABLE_JOINTS` movable joints.

    Parameters
    ----------
    data : bytes or str
        The URDF text.
    where : str
        How the message names the text: a file path, or e.g. ``"the URDF text"``.

    Returns
    -------
    None
        When the URDF passes.

    Raises
    ------
    UrdfError
        One line: ``urdf: <where>:<line>: <element> <what is wrong>``.
    """
    _size_problem(len(data), where, "bytes" if isinstance(data, bytes) else "characters")
    root, lines = _parse_with_lines(data, where)

    def fail(el: Element, what: str) -> None:
        raise UrdfError(f"urdf: {where}:{lines.get(id(el), 1)}: {what}")

    if root.tag != "robot":
        fail(root, f"the root element is <{root.tag}>, a URDF's is <robot name=\"...\">")
    if not root.get("name"):
        fail(root, "<robot> has no name attribute")

    def numbers(el: Element | None, owner: str, attrs: Sequence[tuple[str, int]]) -> None:
        for attr, count in attrs if el is not None else ():
            problem = _numbers_problem(el.get(attr), count)
            if problem:
                fail(el, f"{owner}: <{el.tag} {attr}>: {problem}")

    links: dict[str, Element] = {}
    for link in root.findall("link"):
        name = link.get("name")
        if not name:
            fail(link, "a <link> has no name attribute")
        if name in links:
            fail(link, f"link {name!r} is defined twice (first at line "
                       f"{lines.get(id(links[name]))})")
        links[name] = link
        for inertial in link.findall("inertial"):
            owner = f"link {name!r}"
            numbers(inertial.find("origin"), owner, (("xyz", 3), ("rpy", 3)))
            mass, inertia = inertial.find("mass"), inertial.find("inertia")
            if mass is None or mass.get("value") is None:
                fail(inertial, f"{owner}: <inertial> has no <mass value=\"...\">")
            numbers(mass, owner, (("value", 1),))
            if inertia is None:
                fail(inertial, f"{owner}: <inertial> has no <inertia ixx ixy ixz iyy iyz izz>")
            missing = [a for a in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")
                       if inertia.get(a) is None]
            if missing:
                fail(inertia, f"{owner}: <inertia> has no {', '.join(missing)}")
            numbers(inertia, owner, [(a, 1) for a in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")])
    if not links:
        fail(root, "<robot> has no <link>")

    joints: dict[str, Element] = {}
    children: dict[str, str] = {}
    for joint in root.findall("joint"):
        name, kind = joint.get("name"), joint.get("type")
        if not name:
            fail(joint, "a <joint> has no name attribute")
        if name in joints:
            fail(joint, f"joint {name!r} is defined twice (first at line "
                        f"{lines.get(id(joints[name]))})")
        joints[name] = joint
        owner = f"joint {name!r}"
        if kind not in _JOINT_TYPES:
            fail(joint, f"{owner}: type {kind!r} is not one of {', '.join(_JOINT_TYPES)}")
        owner = f"joint {name!r} ({kind})"
        for end in ("parent", "child"):
            el = joint.find(end)
            if el is None or not el.get("link"):
                fail(el if el is not None else joint, f"{owner} has no <{end} link=\"...\">")
            if el.get("link") not in links:
                fail(el, f"{owner}: {end} link {el.get('link')!r} is not a <link> of the robot")
        child = joint.find("child").get("link")
        if child in children:
            fail(joint, f"{owner}: link {child!r} is already the child of joint "
                        f"{children[child]!r} (a link has one parent joint)")
        children[child] = name
        numbers(joint.find("origin"), owner, (("xyz", 3), ("rpy", 3)))
        numbers(joint.find("axis"), owner, (("xyz", 3),))
        limit = joint.find("limit")
        if limit is None and kind in ("revolute", "prismatic"):
            hint = " (or type continuous for a joint without stops)" if kind == "revolute" else ""
            fail(joint, f"{owner} has no <limit>: a {kind} joint needs <limit lower=\"...\" "
                        f"upper=\"...\" effort=\"...\" velocity=\"...\"/>{hint}")
        if limit is not None:
            missing = [a for a in ("effort", "velocity") if limit.get(a) is None]
            if missing:
                fail(limit, f"{owner}: <limit> has no {' and '.join(missing)} attribute")
            numbers(limit, owner, [(a, 1) for a in ("lower", "upper", "effort", "velocity")])
    roots = [n for n in links if n not in children]
    if len(roots) != 1:
        fail(root, f"the links without a parent joint are {roots}; a URDF tree has one root "
                   "link (every other link is the child of a joint)")


_URDFDOM_LOCK = threading.Lock()
_URDFDOM_AT = re.compile(r"^\s+at line \d+ in \S+$")


@contextlib.contextmanager
def _c_stderr_captured() -> Iterator[list[str]]:
    """Redirect the C stderr (fd 2) into a file while the block runs; yields a list that holds
    the captured text afterwards."""
    box: list[str] = []
    sys.stderr.flush()
    with _URDFDOM_LOCK, tempfile.TemporaryFile() as tmp:
        saved = os.dup(2)
        try:
            os.dup2(tmp.fileno(), 2)
            yield box
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            tmp.seek(0)
            box.append(tmp.read().decode("utf-8", "replace"))


def _urdfdom_call(build: Callable[[], _T], where: str) -> _T:
    """``build()`` (a Pinocchio URDF reader) with urdfdom's stderr kept from the user: its first
    error, or Pinocchio's exception, becomes one :class:`UrdfError` line naming ``where``; other
    text written to stderr meanwhile is passed on."""
    error = None
    with _c_stderr_captured() as box:
        try:
            result = build()
        except Exception as e:  # Pinocchio raises ValueError/RuntimeError with a summary
            error = str(e).strip() or type(e).__name__
    reasons, other = [], []
    for ln in box[0].splitlines():
        if ln.startswith("Error:"):
            reasons.append(ln[len("Error:"):].strip())
        elif ln.startswith("Warning:") or _URDFDOM_AT.match(ln) or not ln.strip():
            continue
        else:
            other.append(ln)
    if other:
        print("\n".join(other), file=sys.stderr)
    if reasons:  # urdfdom's first complaint is the specific one; it may also drop an element
        raise UrdfError(f"urdf: {where}: {reasons[0]}")
    if error is not None:
        raise UrdfError(f"urdf: {where}: {error}")
    return result


def _kind(joint) -> str:
    """'revolute', 'continuous', 'prismatic' or the Pinocchio type name when unsupported."""
    short = joint.shortname()
    if joint.nv == 1 and joint.nq == 2 and short.startswith("JointModelR"):
        return "continuous"
    if joint.nv == 1 and joint.nq == 1:
        if short.startswith("JointModelR"):
            return "revolute"
        if short.startswith("JointModelP"):
            return "prismatic"
    return short


class UrdfDynamics:
    """M_h(q), h(q, q̇), J(q) of a fixed-base arm from a URDF (see the module docstring).

    ``UrdfDynamics(urdf, joint_names=None, ee_frame=None, gravity=(0, 0, -9.81),
    locked_positions=None)``; ``urdf`` is a file path or a bundled name (:func:`bundled_urdf`).
    :meth:`from_xml` takes the URDF text (e.g. a ``robot_description`` parameter).
    """

    def __init__(self, urdf, *, joint_names: Sequence[str] | None = None,
                 ee_frame: str | None = None, gravity=(0.0, 0.0, -9.81),
                 locked_positions: Mapping[str, float] | None = None, _xml: str | None = None):
        if _xml is None:
            path = Path(urdf)
            if not path.is_file() and not str(urdf).endswith(".urdf") and os.sep not in str(urdf):
                path = bundled_urdf(str(urdf))
            if not path.is_file():
                where = "" if path.is_absolute() else f" (relative to {os.getcwd()})"
                raise UrdfError(f"urdf: no such file: {str(urdf)!r}{where}")
            self.source = str(path)
            try:
                _size_problem(path.stat().st_size, str(path))
                data = path.read_bytes()
            except OSError as e:
                raise UrdfError(f"urdf: cannot read {path}: {e.strerror}") from None
            check_urdf(data, str(path))
            model = _urdfdom_call(lambda: pin.buildModelFromUrdf(str(path)), str(path))
        else:
            self.source = "<xml>"
            check_urdf(_xml, "the URDF text")
            model = _urdfdom_call(lambda: pin.buildModelFromXML(_xml), "the URDF text")
        g = np.asarray(gravity, dtype=float)
        if g.shape != (3,) or not np.all(np.isfinite(g)):
            raise ValueError(f"gravity: expected 3 finite numbers [m/s²], got {gravity!r}")
        model.gravity.linear = g
        movable = []
        for jid in range(1, model.njoints):
            name, kind = model.names[jid], _kind(model.joints[jid])
            if kind not in ("revolute", "continuous", "prismatic"):
                raise UrdfError(f"urdf: joint {name!r} is a {kind} (floating, planar, spherical "
                                "and mimic joints are not supported; fix the base to the world)")
            movable.append(name)
        if not movable:
            raise UrdfError(f"urdf: {self.source} has no movable joint")
        joint_names = select_joints(joint_names, movable, self.source)
        locked_positions = dict(locked_positions or {})
        bad = [j for j in locked_positions if j not in movable or j in joint_names]
        if bad:
            raise UrdfError(f"locked_positions: {bad} are not locked movable joints (locked: "
                            f"{[j for j in movable if j not in joint_names]})")
        lock = [j for j in movable if j not in joint_names]
        if lock:
            q_ref = pin.neutral(model)
            for j in lock:
                jid = model.getJointId(j)
                val = float(locked_positions.get(j, 0.0))
                idx = model.joints[jid].idx_q
                if _kind(model.joints[jid]) == "continuous":
                    q_ref[idx:idx + 2] = np.cos(val), np.sin(val)
                else:
                    q_ref[idx] = val
            model = pin.buildReducedModel(model, [model.getJointId(j) for j in lock], q_ref)
        self.model = model
        self.data = model.createData()
        order = [model.getJointId(j) for j in joint_names]
        self.n = len(joint_names)
        self.joint_names = tuple(joint_names)
        v_idx = np.array([model.joints[j].idx_v for j in order])
        self._perm = None if np.array_equal(v_idx, np.arange(self.n)) else v_idx
        kinds = [_kind(model.joints[j]) for j in order]
        self.joint_kinds = tuple(kinds)
        self._cont = [(i, model.joints[j].idx_q) for i, j in enumerate(order)
                      if kinds[i] == "continuous"]
        # precomputed index arrays: one fancy assignment each for the angles, cos and sin
        self._cont_i = np.array([i for i, _ in self._cont], dtype=int)
        self._cont_q = np.array([k for _, k in self._cont], dtype=int)
        self._cont_q1 = self._cont_q + 1
        self._vpin = np.zeros(model.nv)
        self._ix = np.ix_(self._perm, self._perm) if self._perm is not None else None
        self._plain_q = np.array([model.joints[j].idx_q for i, j in enumerate(order)
                                  if kinds[i] != "continuous"], dtype=int)
        self._plain_i = np.array([i for i in range(self.n) if kinds[i] != "continuous"],
                                 dtype=int)
        self._qpin = pin.neutral(model)
        self.lower = np.array([model.lowerPositionLimit[model.joints[j].idx_q]
                               if kinds[i] != "continuous" else -np.inf
                               for i, j in enumerate(order)])
        self.upper = np.array([model.upperPositionLimit[model.joints[j].idx_q]
                               if kinds[i] != "continuous" else np.inf
                               for i, j in enumerate(order)])
        self.effort = np.array([model.effortLimit[model.joints[j].idx_v] for j in order])
        if ee_frame is None:
            ee_frame = model.frames[len(model.frames) - 1].name
        if not model.existFrame(ee_frame):
            raise UrdfError(f"ee_frame: no frame {ee_frame!r}; frames: "
                            f"{[f.name for f in model.frames][1:]}")
        self.ee_frame = ee_frame
        self._fid = model.getFrameId(ee_frame)

    @classmethod
    def from_xml(cls, xml: str, **kwargs) -> "UrdfDynamics":
        """From the URDF text itself."""
        if not isinstance(xml, str) or not xml.strip():
            raise UrdfError("urdf: expected the URDF XML text, got an empty value")
        return cls(None, _xml=xml, **kwargs)

    # -- configuration -----------------------------------------------------------------------
    def _config(self, q: np.ndarray) -> np.ndarray:
        qp = self._qpin
        if self._perm is None and not self._cont:
            return q
        qp[self._plain_q] = q[self._plain_i]
        if self._cont:
            a = q[self._cont_i]
            qp[self._cont_q] = np.cos(a)
            qp[self._cont_q1] = np.sin(a)
        return qp

    def _velocity(self, v: np.ndarray) -> np.ndarray:
        if self._perm is None:
            return v
        vp = self._vpin
        vp[self._perm] = v
        return vp

    # -- terms ---------------------------------------------------------------------------------
    def terms(self, q: np.ndarray, v: np.ndarray, jacobian: bool = False):
        """``(M_h(q), h(q, v), J(q) or None)``; M and h are buffers reused by the next call.

        One call of each of Pinocchio's ``crba``, ``nonLinearEffects`` and (when asked)
        ``computeFrameJacobian`` on the model's own data; no copies when the joints are in the
        model's order and none is continuous (else one reordering with precomputed indices)."""
        model, data = self.model, self.data
        if self._perm is None and not self._cont:
            qp, vp = q, v
        else:
            qp, vp = self._config(q), self._velocity(v)
        M = pin.crba(model, data, qp)
        h = pin.nonLinearEffects(model, data, qp, vp)
        J = None
        if jacobian:
            J = pin.computeFrameJacobian(model, data, qp, self._fid, _LWA)
        if self._perm is not None:
            p = self._perm
            M = M[self._ix]
            h = h[p]
            J = J[:, p] if J is not None else None
        return M, h, J

    def mass_matrix(self, q) -> np.ndarray:
        """M_h(q), (n, n)."""
        return self.terms(np.asarray(q, float), np.zeros(self.n))[0].copy()

    def bias(self, q, v) -> np.ndarray:
        """h(q, q̇): Coriolis, centrifugal and gravity torques, (n,)."""
        return self.terms(np.asarray(q, float), np.asarray(v, float))[1].copy()

    def gravity_torque(self, q) -> np.ndarray:
        """g(q) = h(q, 0)."""
        return self.bias(q, np.zeros(self.n))

    def jacobian(self, q) -> np.ndarray:
        """End-effector Jacobian J(q), (6, n): [linear; angular], world-aligned axes."""
        return self.terms(np.asarray(q, float), np.zeros(self.n), True)[2].copy()

    def ee_position(self, q) -> np.ndarray:
        """World position of the end-effector frame, (3,)."""
        return self.ee_pose(q)[0]

    def ee_pose(self, q) -> tuple[np.ndarray, np.ndarray]:
        """(position (3,), rotation (3, 3)) of the end-effector frame in the world."""
        qp = self._config(np.asarray(q, float))
        pin.framesForwardKinematics(self.model, self.data, qp)
        oMf = self.data.oMf[self._fid]
        return oMf.translation.copy(), oMf.rotation.copy()

    def __repr__(self) -> str:
        return (f"UrdfDynamics({self.source!r}, joints={list(self.joint_names)}, "
                f"ee_frame={self.ee_frame!r})")
