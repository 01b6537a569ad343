"""Writing a Robot as URDF that the reader (and Pinocchio) reads back into the same bodies."""
from __future__ import annotations

import math
import os
from pathlib import Path
from xml.sax.saxutils import quoteattr

import numpy as np

from ..errors import URDFError
from ..model import Body, Inertia, Robot


def matrix_rpy(R) -> tuple[float, float, float]:
    """(roll, pitch, yaw) with ``rpy_matrix(rpy) == R`` (:func:`symgen.spatial.rpy_matrix`), robust
    at gimbal lock (pitch = ±π/2): roll from the last row, then yaw from R Rx(roll)^T = Rz(yaw) Ry(pitch), which stays well
    conditioned whatever roll is (M. Day, "Extracting Euler angles from a rotation matrix")."""
    R = np.asarray(R, dtype=float)
    roll = math.atan2(R[2, 1], R[2, 2])
    pitch = math.atan2(-R[2, 0], math.hypot(R[0, 0], R[1, 0]))
    s, c = math.sin(roll), math.cos(roll)
    yaw = math.atan2(s * R[0, 2] - c * R[0, 1], c * R[1, 1] - s * R[1, 2])
    return roll, pitch, yaw


def _num(values) -> str:
    return " ".join(repr(float(x) + 0.0) for x in values)      # + 0.0 turns -0.0 into 0.0


def _link_xml(name: str, inertia: Inertia) -> list[str]:
    if inertia.mass == 0.0 and not np.any(np.array(inertia.I_com)):     # massless (a rotor keeps its inertia)
        return [f"  <link name={quoteattr(name)}/>"]
    I = inertia.I_com
    return [
        f"  <link name={quoteattr(name)}>",
        "    <inertial>",
        f'      <origin xyz="{_num(inertia.com)}" rpy="0.0 0.0 0.0"/>',
        f'      <mass value="{_num([inertia.mass])}"/>',
        f'      <inertia ixx="{_num([I[0][0]])}" ixy="{_num([I[0][1]])}" ixz="{_num([I[0][2]])}" '
        f'iyy="{_num([I[1][1]])}" iyz="{_num([I[1][2]])}" izz="{_num([I[2][2]])}"/>',
        "    </inertial>",
        "  </link>",
    ]


def _limit_xml(joint_type: str) -> list[str]:
    """urdfdom (hence Pinocchio) requires limits on revolute and prismatic joints; symgen ignores
    them, so these are wide placeholders."""
    bound = {"revolute": 2 * math.pi, "prismatic": 1000.0}.get(joint_type)
    if bound is None:
        return []
    return [f'    <limit lower="{-bound!r}" upper="{bound!r}" effort="1000.0" velocity="100.0"/>']


#: URDF's type of each joint with several velocities that URDF can hold (spherical it cannot)
_URDF_GROUP = {"freeflyer": "floating", "planar": "planar"}


def _joint_xml(body: Body, parent_link: str, child: str | None = None, damping: float = 0.0) -> list[str]:
    jtype = _URDF_GROUP[body.group] if body.group else body.joint_type
    return [
        f"  <joint name={quoteattr(body.joint_name)} type={quoteattr(jtype)}>",
        f"    <parent link={quoteattr(parent_link)}/>",
        f"    <child link={quoteattr(child or body.name)}/>",
        f'    <origin xyz="{_num(body.translation)}" rpy="{_num(matrix_rpy(body.rotation))}"/>',
        f'    <axis xyz="{_num(body.axis)}"/>',
        *_limit_xml(body.joint_type),
        *([f'    <dynamics damping="{_num((damping,))}"/>'] if damping else []),
        "  </joint>",
    ]


def urdf_string(robot: Robot) -> str:
    """``robot`` as URDF text that :func:`parse_urdf_string` reads back into the same bodies (and
    the single-DoF joints' damping, as ``<dynamics damping>``; URDF has no springs)."""
    free = robot.free
    lines = ['<?xml version="1.0"?>',
             f"<!-- written by symgen: {robot.n - free} joints in q order; inertials at the CoM"
             f"{'; load with a free-flyer (floating_base=True)' if free else ''} -->",
             f"<robot name={quoteattr(robot.name)}>"]
    if free:                             # the free-flyer is not written: its child is the root link
        base = robot.bodies[free - 1]
        lines += _link_xml(base.name, base.inertia)
    else:
        lines.append(f"  <link name={quoteattr(robot.root_link)}/>")
    for i, b in enumerate(robot.bodies[free:], start=free):
        parent_link = robot.bodies[b.parent].name if b.parent >= 0 else robot.root_link
        if b.group:                      # a joint with several velocities: one joint, its last body's link
            joint = robot.joint_of[i]
            if joint.first != i:
                continue
            if b.group not in _URDF_GROUP:
                raise URDFError(robot.name, f"<joint name={b.joint_name!r}>", f"a {b.group} joint has no URDF form")
            link = robot.bodies[joint.last]
            lines += _joint_xml(b, parent_link, link.name) + _link_xml(link.name, link.inertia)
            continue
        lines += _joint_xml(b, parent_link, damping=robot.damping_vector[i]) + _link_xml(b.name, b.inertia)
    lines.append("</robot>")
    return "\n".join(lines) + "\n"


def write_urdf(robot: Robot, path) -> None:
    """Write ``robot`` as URDF to ``path``, atomically: a temporary file next to it, moved into
    place when complete, so a failure never leaves half a file."""
    text = urdf_string(robot)
    target = Path(path)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "x", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, target)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise URDFError(str(path), None, f"cannot write the file ({exc.strerror})") from None
