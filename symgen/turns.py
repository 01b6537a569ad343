"""The turns of the z-aligned body frames, chosen like Denavit-Hartenberg's (issue #21 item 4).

A body frame turned so that its joint axis is z (:attr:`~symgen.model.Robot.z_aligned`) is still
free to turn about that axis. :func:`~symgen.spatial.z_turn` picks the angle from the body's own
axis alone; :func:`z_turns` picks it, for a body with a general axis below it, so that the axis of
one revolute child has no x component in the turned frame — the x axis along the common normal of
the two axes, as in Denavit-Hartenberg's convention. That child's constant rotation is then

    Rt = Rx(b) Rz(d)      (Rt[0, 2] = 0)

and its orientation in ground coordinates, R_p Rt Rz(q) = R_p Rx(b) Rz(q + d), costs 42
operations (:func:`turned_columns`: cos and sin of q + d from those of q, one column mix of R_p,
two columns of products) where R_p Rt and then Rz(q) cost 63: on a general-axis chain every body
but the first. A body none of whose revolute children has a general axis keeps ``z_turn``'s
signed permutation (what the local convention and exact zeros rely on), so robots like panda,
ur5 or solo12 print the same code; a body that is turned — even one on a coordinate axis, with a
general-axis child — gives its other children (and itself, in its parent) constant rotations that
are no longer signed permutations, which :func:`~symgen.kinematics.local_frames_pay` counts (the
MIT Humanoid's M̄: 2,616 operations before these turns, 2,666 after).
"""
from __future__ import annotations

import math

import numpy as np

from .spatial import z_turn


def z_turns(robot) -> tuple:
    """Per body, the rotation T (T e_z = its joint axis) from its turned frame to its body frame:
    ``z_turn`` of the axis (the identity for a body of a joint with several velocities but the
    floating base's free-flyer: the tree's geometry, also with its root joint seen as the base,
    :meth:`~symgen.model.Robot.as_root_base`), turned about z by the angle that puts its first
    revolute child with a general axis in the y-z plane."""
    free = robot.free if robot.floating_base else 0
    base = [np.eye(3) if b.group and i >= free else z_turn(b.axis) for i, b in enumerate(robot.bodies)]
    out = list(base)
    for c, child in enumerate(robot.bodies):
        p = child.parent
        if p < 0 or out[p] is not base[p] or robot.bodies[p].group or child.group or child.joint_type == "prismatic":
            continue                                    # (the first eligible child of p turns it)
        z = _snap(base[p].T @ np.array(child.rotation) @ np.array(child.axis))
        if z[0] != 0.0 and np.count_nonzero(z) > 1:      # not already in the y-z plane, not a coordinate axis
            psi = math.atan2(-z[0], z[1])
            out[p] = base[p] @ np.array([[math.cos(psi), -math.sin(psi), 0.0], [math.sin(psi), math.cos(psi), 0.0],
                                         [0.0, 0.0, 1.0]])
    return tuple(out)


def _snap(z, tol=1e-12):
    z = np.array(z, dtype=float)
    z[np.abs(z) <= tol] = 0.0
    return z


def _permutation(R) -> bool:
    return bool(np.all(np.isin(R, (-1.0, 0.0, 1.0))))


def turned_columns(Rt, R_par, R0, c, s, bk, i):
    """Columns 0 and 1 of body i's orientation R0 Rz(q_i), R0 = R_par Rt the joint frame's (z, its
    axis, is R0's column 2), from the cos ``c`` and sin ``s`` of q_i. ``Rt`` (numbers, from
    :attr:`~symgen.model.Robot.z_aligned`) of the form Rx(b) Rz(d) and not a signed permutation:
    R_par Rx(b) Rz(q_i + d) from R_par's columns, without R0's first two; else from R0."""
    Rt = np.asarray(Rt, dtype=float)
    if R_par is None or Rt[0, 2] != 0.0 or _permutation(Rt):
        return R0[:, 0] * c + R0[:, 1] * s, R0[:, 1] * c - R0[:, 0] * s
    cd, sd, cb, sb = (bk.number(x) for x in (Rt[0, 0], -Rt[0, 1], Rt[2, 2], -Rt[1, 2]))
    if Rt[0, 1] != 0.0 or Rt[0, 0] != 1.0:             # the angle q_i + d
        c, s = bk.bind(cd * c - sd * s, f"cqd{i}", i), bk.bind(sd * c + cd * s, f"sqd{i}", i)
    y = bk.bind(R_par[:, 1] * cb + R_par[:, 2] * sb, f"Ry{i}", i)  # R_par Rx(b) e_y
    return R_par[:, 0] * c + y * s, y * c - R_par[:, 0] * s
