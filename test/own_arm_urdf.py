"""A URDF the project does not ship, written by the tests that need "a user's own arm": seven
revolute joints with Panda-like ranges (joint 4's range excludes 0: [−3.07, −0.07] rad, as the
Panda's; joint 6's lower limit is 0.0175 rad from 0) and a gripper of two prismatic fingers
(range 0.04 m), the second a ``<mimic>`` of the first. Masses and inertias are plausible for a
3–4 kg link arm (not any real robot's)."""

from __future__ import annotations

from pathlib import Path

#: (name, axis, lower, upper, effort [N m], velocity [rad/s], link mass [kg], link length [m])
ARM_JOINTS = (
    ("own_joint1", "0 0 1", -2.9, 2.9, 87.0, 2.1, 3.5, 0.33),
    ("own_joint2", "0 1 0", -1.76, 1.76, 87.0, 2.1, 3.5, 0.30),
    ("own_joint3", "0 0 1", -2.9, 2.9, 87.0, 2.1, 3.0, 0.30),
    ("own_joint4", "0 1 0", -3.07, -0.07, 87.0, 2.1, 3.0, 0.30),
    ("own_joint5", "0 0 1", -2.9, 2.9, 12.0, 2.6, 2.0, 0.25),
    ("own_joint6", "0 1 0", -0.0175, 3.75, 12.0, 2.6, 1.5, 0.10),
    ("own_joint7", "0 0 1", -2.9, 2.9, 12.0, 2.6, 0.5, 0.10),
)
ARM_NAMES = tuple(j[0] for j in ARM_JOINTS)
FINGERS = ("own_finger1", "own_finger2")


def _link(name: str, mass: float, length: float) -> str:
    i_xx = mass * length * length / 12.0 + 1e-3
    return (f'  <link name="{name}"><inertial><origin xyz="0 0 {length / 2:.4f}"/>'
            f'<mass value="{mass}"/><inertia ixx="{i_xx:.5f}" iyy="{i_xx:.5f}" '
            f'izz="{mass * 0.003:.5f}" ixy="0" ixz="0" iyz="0"/></inertial></link>\n')


def own_arm_urdf(gripper: bool = True) -> str:
    """The URDF text (7 revolute joints; with ``gripper``, two fingers, one a mimic)."""
    out = ['<?xml version="1.0"?>\n<robot name="own_arm">\n  <link name="world"/>\n',
           '  <link name="own_base"/>\n  <joint name="own_base_fixed" type="fixed">'
           '<parent link="world"/><child link="own_base"/></joint>\n']
    parent, length = "own_base", 0.1
    for name, axis, lo, hi, effort, vel, mass, ln in ARM_JOINTS:
        child = name.replace("joint", "link")
        out.append(_link(child, mass, ln))
        out.append(f'  <joint name="{name}" type="revolute"><parent link="{parent}"/>'
                   f'<child link="{child}"/><origin xyz="0 0 {length:.3f}"/>'
                   f'<axis xyz="{axis}"/><limit lower="{lo}" upper="{hi}" effort="{effort}" '
                   f'velocity="{vel}"/></joint>\n')
        parent, length = child, ln
    if gripper:
        out.append(_link("own_hand", 0.7, 0.05))
        out.append(f'  <joint name="own_hand_fixed" type="fixed"><parent link="{parent}"/>'
                   f'<child link="own_hand"/><origin xyz="0 0 {length:.3f}"/></joint>\n')
        for k, f in enumerate(FINGERS):
            out.append(_link(f.replace("finger", "fingertip"), 0.015, 0.04))
            mimic = '<mimic joint="own_finger1"/>' if k == 1 else ""
            sign = 1 if k == 0 else -1
            out.append(f'  <joint name="{f}" type="prismatic"><parent link="own_hand"/>'
                       f'<child link="{f.replace("finger", "fingertip")}"/>'
                       f'<origin xyz="0 0 0.05"/><axis xyz="0 {sign} 0"/>'
                       f'<limit lower="0.0" upper="0.04" effort="20" velocity="0.2"/>{mimic}'
                       f'</joint>\n')
    out.append("</robot>\n")
    return "".join(out)


def write_own_arm_urdf(path, gripper: bool = True) -> Path:
    """Write :func:`own_arm_urdf` to ``path`` and return it."""
    path = Path(path)
    path.write_text(own_arm_urdf(gripper), encoding="utf-8")
    return path


#: A true friction for the own arm (joint_friction.yaml layout): asymmetric Coulomb + viscous,
#: shoulder a few N m, wrist tenths (the bundled arm7's magnitudes, config/arm7_true_friction.yaml)
OWN_FRICTION = {
    "own_joint1": (2.0, 1.8, 1.2, 1.4), "own_joint2": (2.5, 2.2, 1.5, 1.3),
    "own_joint3": (1.5, 1.3, 0.9, 1.0), "own_joint4": (1.6, 1.9, 1.0, 0.8),
    "own_joint5": (0.5, 0.45, 0.3, 0.35), "own_joint6": (0.4, 0.35, 0.2, 0.2),
    "own_joint7": (0.25, 0.3, 0.1, 0.12),
}


def write_own_friction(path) -> Path:
    """Write :data:`OWN_FRICTION` as a joint_friction.yaml (model asymmetric) and return it."""
    path = Path(path)
    lines = ["model: asymmetric", "joints:"]
    lines += [f"  {j}: {{Cp: {cp}, Cn: {cn}, bp: {bp}, bn: {bn}}}"
              for j, (cp, cn, bp, bn) in OWN_FRICTION.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
