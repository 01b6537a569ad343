"""Frame kinematics: the placement oMf (world <- frame, 4x4) and the Jacobian J (6 x n, rows
[linear; angular], LOCAL_WORLD_ALIGNED: origin at the frame, world axes) of chosen frames.

A frame f sits on body b at a constant (R_f, p_f) in b's frame (:class:`~symgen.model.Frame`).
With oR_b, op_b the world orientation and origin of body b (forward kinematics down the tree),

    oR_f = oR_b R_f,    op_f = op_b + oR_b p_f,

and each joint j on the path from b to the root contributes the column (zero for the others)

    revolute:  [a_j x (op_f - o_j); a_j]        prismatic:  [a_j; 0]

with a_j the joint axis and o_j the joint's origin in world coordinates (Pinocchio's
framesForwardKinematics and getFrameJacobian(LOCAL_WORLD_ALIGNED)).

Ground coordinates (what the generated code runs): 3x3 rotations and 3-vectors down the tree in
body frames turned so that each joint axis is z (:attr:`Robot.z_aligned`), so a_j is a column of
oR_j and a revolute joint's rotation is Rz(q_j). Reference (an independent path): 4x4 homogeneous
products of the URDF's joint placements and Rodrigues rotations, each Jacobian column the joint's
motion subspace carried into the frame by the adjoint of f^-1 j, then turned to world axes.

A floating base starts the walk at the base's pose from q[0:7] (:func:`~symgen.kinematics.base_placement`);
the free-flyer's six columns are then those of "joints" along and about the base's axes at the
base origin: [oR_b e_k; 0] for its linear velocity, [oR_b e_k x (op_f - op_b); oR_b e_k] for its
angular velocity (body-twist speeds, as Pinocchio's free-flyer).
"""
from __future__ import annotations

import numpy as np

from ..kinematics import base_placement, joint_motion, joint_position
from ..spatial import axis_angle, cross
from ..turns import turned_columns


def frame_kinematics_ground(robot, q, frames, bk):
    """(oMf, J) of ``frames`` (a sequence of Frame), shapes (F, 4, 4) and (F, 6, n)."""
    R, p = ground_bodies(robot, q, bk, base_placement(robot, q, bk) if robot.floating_base else None)
    oMf, J = bk.zeros((len(frames), 4, 4)), bk.zeros((len(frames), 6, robot.n))
    for k, f in enumerate(frames):
        b = f.body
        if b < 0:                                                       # on the fixed root
            Rf, pf = bk.const(f.rotation), bk.const(f.translation)
        else:
            T = robot.z_turns[b].T                                      # body frame -> turned frame
            Rf = bk.bind(R[b] @ bk.const(T @ f.rotation), f"Rf{k}", b)  # oR_f = oR_b R_f
            pf = bk.bind(p[b] + R[b] @ bk.const(T @ f.translation), f"pf{k}", b)
        oMf[k, :3, :3], oMf[k, :3, 3], oMf[k, 3, 3] = Rf, pf, bk.number(1.0)
        for j in robot.ancestors(b) if b >= 0 else ():
            a = joint_axis(robot, R, j)                                 # the axis of joint j in world
            if robot.bodies[j].joint_type == "prismatic":
                J[k, :3, j] = a
            else:                                                       # o_j = op_j: on the axis
                J[k, :3, j] = bk.bind(cross(a, pf - p[j], bk), f"Jv{k}_{j}", b)
                J[k, 3:, j] = a
    return oMf, J


def joint_axis(robot, R, i):
    """Joint i's axis in world from the orientation R[i] of its frame (:func:`ground_bodies`):
    the z column of a turned frame; for a body of a joint with several velocities (its child
    frame, not turned), the column of its axis, a coordinate axis there."""
    if robot.in_group(i) and not robot.is_free(i):
        return R[i][:, int(np.argmax(np.abs(robot.bodies[i].axis)))]
    return R[i][:, 2]


def ground_bodies(robot, q, bk, base=None):
    """World orientation and origin of each body's turned frame (z = its joint axis). A floating
    base's bodies are placed at ``base`` ((oR_b, op_b), the world pose of the base), or, with
    None, at the origin: then "world" is the base frame."""
    R, p = [None] * robot.n, [None] * robot.n
    for i, (body, (Rt, t, _, _)) in enumerate(zip(robot.bodies, robot.z_aligned)):
        Rt, t, par = bk.const(Rt), bk.const(t), body.parent
        if par < 0:
            R0, p0 = (Rt, t) if base is None else (bk.bind(base[0] @ Rt, f"R0_{i}", i), base[1])
        else:                                                           # the joint frame at q_i = 0
            R0 = bk.bind(R[par] @ Rt, f"R0_{i}", i)
            p0 = p[par] if robot.is_free(i) else bk.bind(p[par] + R[par] @ t, f"p0_{i}", i)
        if robot.is_free(i):                                            # turned, never moved
            R[i], p[i] = R0, p0
            continue
        if robot.in_group(i):                   # a joint with several velocities: not turned (T = 1),
            if robot.joint_of[i].first != i:    # its bodies share the child frame of its first
                R[i], p[i] = R[par], p[par]
                continue
            RJ, pJ = joint_motion(robot.joint_of[i], q, bk)
            R[i] = bk.bind(R0 @ RJ, f"R{i}", i)
            p[i] = p0 if robot.joint_of[i].kind == "spherical" else bk.bind(p0 + R0 @ pJ, f"p{i}", i)
            continue
        qi = joint_position(robot, q, i)
        if body.joint_type == "prismatic":
            R[i], p[i] = R0, bk.bind(p0 + R0[:, 2] * qi, f"p{i}", i)
            continue
        c, s = bk.cos(qi), bk.sin(qi)
        Ri = bk.zeros((3, 3))                                           # R0 Rz(q_i)
        Ri[:, 0], Ri[:, 1] = turned_columns(robot.z_aligned[i][0], R[par] if par >= 0 else None, R0, c, s, bk, i)
        Ri[:, 2] = R0[:, 2]
        R[i], p[i] = bk.bind(Ri, f"R{i}", i), p0
    return R, p


def frame_kinematics(robot, q, frames, bk):
    """(oMf, J) as :func:`frame_kinematics_ground`, from homogeneous transforms (the reference)."""
    oMb = []                                                            # world <- body i
    for i, body in enumerate(robot.bodies):
        axis = bk.const(body.axis)
        if robot.is_free(i):                                            # the base's pose, from q
            oMb.append(oMb[0] if i else bk.bind(_homogeneous(*base_placement(robot, q, bk), bk), "oMb0", 0))
            continue
        if robot.in_group(i):                                           # the joint's child frame
            joint = robot.joint_of[i]
            if joint.first != i:
                oMb.append(oMb[i - 1])
                continue
            Xtree = _homogeneous(bk.const(body.rotation), bk.const(body.translation), bk)
            up = Xtree if body.parent < 0 else oMb[body.parent] @ Xtree
            oMb.append(bk.bind(up @ _homogeneous(*joint_motion(joint, q, bk), bk), f"oMb{i}", i))
            continue
        qi = joint_position(robot, q, i)
        if body.joint_type == "prismatic":
            XJ = _homogeneous(bk.const([[1, 0, 0], [0, 1, 0], [0, 0, 1]]), axis * qi, bk)
        else:
            XJ = _homogeneous(axis_angle(axis, bk.cos(qi), bk.sin(qi), bk), bk.zeros(3), bk)
        Xtree = _homogeneous(bk.const(body.rotation), bk.const(body.translation), bk)
        up = Xtree if body.parent < 0 else oMb[body.parent] @ Xtree
        oMb.append(bk.bind(up @ XJ, f"oMb{i}", i))
    oMf, J = bk.zeros((len(frames), 4, 4)), bk.zeros((len(frames), 6, robot.n))
    for k, f in enumerate(frames):
        bMf = _homogeneous(bk.const(f.rotation), bk.const(f.translation), bk)
        oMf[k] = bMf if f.body < 0 else bk.bind(oMb[f.body] @ bMf, f"oMf{k}", f.body)
        fMo = _inverse(oMf[k], bk)
        oRf = oMf[k, :3, :3]
        for j in robot.ancestors(f.body) if f.body >= 0 else ():
            fMj = fMo @ oMb[j]
            Rj, pj = fMj[:3, :3], fMj[:3, 3]
            w, v = bk.zeros(3), bk.zeros(3)                             # Phi_j in body j: [w; v]
            if robot.bodies[j].joint_type == "prismatic":
                v = bk.const(robot.bodies[j].axis)
            else:
                w = bk.const(robot.bodies[j].axis)
            w_f = Rj @ w                                                # Ad(fMj) Phi_j, in frame f
            v_f = Rj @ v + cross(pj, w_f, bk)
            J[k, :3, j], J[k, 3:, j] = oRf @ v_f, oRf @ w_f             # turned to world axes
    return oMf, J


def _homogeneous(R, p, bk):
    X = bk.zeros((4, 4))
    X[:3, :3], X[:3, 3], X[3, 3] = R, p, bk.number(1.0)
    return X


def _inverse(X, bk):
    """[R p; 0 1]^-1 = [R^T -R^T p; 0 1]."""
    Rt = X[:3, :3].T
    return _homogeneous(Rt, -(Rt @ X[:3, 3]), bk)
