"""Kinematics the algorithms start from, in the two coordinate choices they run in.

    body_frames    body frames: per body, Xup_i = iXp(i) = XJ(q_i) Xtree_i and Phi_i (constant
                   in body i); the spatial inertias I_i are the model's constants
    ground_frames  ground (base) coordinates, the paper's footnote 2: per body, Phi_i(q) and
                   I_i(q), both about the base origin; no transforms are needed afterwards

Joint axes are fixed in the body frame (Phi_ring = 0), as the paper's algorithms assume.
"""
from __future__ import annotations

import numpy as np

from .spatial import axis_angle, cross, mcI, plux, rotate_symmetric


def body_frames(robot, q, bk):
    """Return (Xup, Phi): per body i, the motion transform iXp(i) from its parent's frame to its
    own at q, and its motion subspace Phi_i in its own frame."""
    Xup, Phi = [], []
    for i, body in enumerate(robot.bodies):
        axis = bk.const(body.axis)
        if body.joint_type == "prismatic":
            XJ = plux(bk.const([[1, 0, 0], [0, 1, 0], [0, 0, 1]]), axis * q[i], bk)
        else:
            # E = R^T rotates parent coordinates into the rotated (body) frame
            R = axis_angle(axis, bk.cos(q[i]), bk.sin(q[i]), bk)
            XJ = plux(R.T, bk.zeros(3), bk)
        Xup.append(bk.bind(XJ @ bk.const(robot.Xtree[i]), f"X{i}", i))
        Phi.append(bk.const(robot.S[i]))                    # the model keeps Featherstone's S
    return Xup, Phi


def ground_frames(robot, q, bk):
    """Return (Phi, I): per body, its motion subspace and its spatial inertia in ground (base)
    coordinates, about the base origin — the paper's footnote 2, as Pinocchio does.

    Works with 3x3 rotations and 3-vectors down the tree (no 6x6 transforms), in body frames
    turned so that each joint axis is z (:attr:`Robot.z_aligned`): with R0, p0 the orientation
    and origin of joint i's frame in ground coordinates, the axis is a = R0 e_z (a column, no
    arithmetic), Phi_i = [a; p0 x a] (revolute) or [0; a] (prismatic), the body's orientation is
    R0 Rz(q_i) and its inertia ``mcI(m, c, R Ic R^T)`` with its CoM c in ground coordinates.
    """
    R, p, Phi, I = [None] * robot.n, [None] * robot.n, [], []
    for i, (body, (Rt, t, com, Icom)) in enumerate(zip(robot.bodies, robot.z_aligned)):
        Rt, t = bk.const(Rt), bk.const(t)
        par = body.parent
        if par < 0:
            R0, p0 = Rt, t
        else:
            R0 = bk.bind(R[par] @ Rt, f"R0_{i}", i)                      # joint frame, q_i = 0
            p0 = bk.bind(p[par] + R[par] @ t, f"p{i}", i)
        a = R0[:, 2]                                                    # the axis in ground
        Phi_i = bk.zeros(6)
        if body.joint_type == "prismatic":
            Phi_i[3:] = a
            R[i], p[i] = R0, bk.bind(p0 + a * q[i], f"p{i}", i)
        else:
            Phi_i[:3] = a
            Phi_i[3:] = bk.bind(cross(p0, a, bk), f"Phi{i}", i)
            c, s = bk.cos(q[i]), bk.sin(q[i])
            Ri = bk.zeros((3, 3))                                       # R0 Rz(q_i)
            Ri[:, 0] = R0[:, 0] * c + R0[:, 1] * s
            Ri[:, 1] = R0[:, 1] * c - R0[:, 0] * s
            Ri[:, 2] = a
            R[i], p[i] = bk.bind(Ri, f"R{i}", i), p0
        Phi.append(Phi_i)
        inertia = body.inertia
        if inertia.mass == 0.0 and not np.any(Icom):
            I.append(bk.zeros((6, 6)))
            continue
        cg = bk.bind(p[i] + R[i] @ bk.const(com), f"c{i}", i)              # CoM in ground
        Ic = rotate_symmetric(R[i], bk.const(Icom), bk, f"Ic{i}", i)
        I.append(bk.bind(mcI(bk.number(inertia.mass), cg, Ic, bk), f"I{i}", i))
    return Phi, I
