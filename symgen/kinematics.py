"""Joint transforms: for each body, Xup = XJ(q_i) Xtree_i and its motion subspace S_i (Phi_i).

Joint axes are fixed in the body frame (Phi_ring = 0), as the paper's algorithms assume.
"""
from __future__ import annotations

from .spatial import axis_angle, plux


def joint_transforms(robot, q, bk):
    """Return (Xup, S): per body, the motion transform from parent to body frame at q, and Phi."""
    Xup, S = [], []
    for i, body in enumerate(robot.bodies):
        axis = bk.const(body.axis)
        if body.joint_type == "prismatic":
            XJ = plux(bk.const([[1, 0, 0], [0, 1, 0], [0, 0, 1]]), axis * q[i], bk)
        else:
            # E = R^T rotates parent coordinates into the rotated (body) frame
            R = axis_angle(axis, bk.cos(q[i]), bk.sin(q[i]), bk)
            XJ = plux(R.T, bk.zeros(3), bk)
        Xup.append(bk.bind(XJ @ bk.const(robot.Xtree[i]), f"X{i}", i))
        S.append(bk.const(robot.S[i]))
    return Xup, S
