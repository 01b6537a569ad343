"""Composite-rigid-body algorithm: the mass matrix M(q) (Featherstone, RBDA Table 6.2).

It is the M part of the paper's Algorithm 1, and comments carry that algorithm's line numbers:
IC_i = I_i (line 5), F2 = IC_j Phi_j (line 10, Featherstone's F), M_jj = Phi_j^T F2 (line 13),
the walk to the root (lines 15-18) giving M_ij = M_ji = Phi_i^T F2 (line 21), and the composite
IC_p(j) += jXp(j)^T IC_j jXp(j) (line 24). All composites are accumulated first, leaves first,
then M is filled column by column from the root down (the order of the named intermediates, and
so of the generated code, follows from this).

Three versions, side by side and line for line:

    crba         body frames (:func:`~symgen.kinematics.body_frames`), as printed
    crba_ground  ground coordinates (:func:`~symgen.kinematics.ground_frames`), the paper's
                 footnote 2: Phi_i(q) and I_i(q) are in the base frame, so the composites add
                 without a congruence (line 24) and F2 is never moved (line 17 is the identity):
                 M_ij = Phi_i^T (IC_j Phi_j) is a dot product.
    crba_local   body frames turned so that each joint axis is z (:attr:`Robot.z_aligned`),
                 inertias as their 10 numbers (m, h = m c, Ibar about the frame origin) and forces
                 as two 3-vectors, Pinocchio's local convention: the congruence of line 24 is a
                 rotation about z by q_j (a few products of cos q_j and sin q_j), a constant
                 rotation (free when the joint frame's is a signed permutation) and a constant
                 shift of the origin, instead of 6x6 products; line 17 likewise.
"""
from __future__ import annotations

from ..kinematics import body_frames, body_inertia, ground_frames, joint_position
from ..spatial import congruence, cross, rotate_symmetric


def crba(robot, q, bk):
    """Return M(q), computed in body frames."""
    n, parent = robot.n, robot.parent
    Xup, Phi = body_frames(robot, q, bk)
    IC = [body_inertia(robot, i, bk) for i in range(n)]                                 # line 5
    for j in reversed(range(n)):                                        # composites, leaves first
        p = parent[j]
        if p >= 0:                                                      # line 24
            IC[p] = bk.bind(IC[p] + congruence(Xup[j], IC[j], bk, f"ICX{j}", j), f"IC{p}", p)
    M = bk.zeros((n, n))
    for j in range(n):                                                  # M, column j
        F = bk.bind(IC[j] @ Phi[j], f"F{j}", j)                            # line 10
        M[j, j] = Phi[j] @ F                                            # line 13
        i = j                                                           # line 15
        while parent[i] >= 0:                                           # line 16
            F = bk.bind(Xup[i].T @ F, f"F{j}", j)                          # line 17
            i = parent[i]                                               # line 18
            M[i, j] = M[j, i] = Phi[i] @ F                              # line 21
    return M


def crba_ground(robot, q, bk):
    """Return M(q), computed in ground coordinates."""
    n, parent = robot.n, robot.parent
    Phi, IC = ground_frames(robot, q, bk)                               # line 5
    for j in reversed(range(n)):                                        # composites, leaves first
        p = parent[j]
        if p >= 0:                                                      # line 24
            IC[p] = bk.bind(IC[p] + IC[j], f"IC{p}", p)
    M = bk.zeros((n, n))
    for j in range(n):                                                  # M, column j
        F = bk.bind(IC[j] @ Phi[j], f"F{j}", j)                            # line 10
        M[j, j] = Phi[j] @ F                                            # line 13
        i = j                                                           # line 15
        while parent[i] >= 0:                                           # line 16
            # line 17: F is already in the frame of every Phi_i
            i = parent[i]                                               # line 18
            M[i, j] = M[j, i] = Phi[i] @ F                              # line 21
    return M


def crba_local(robot, q, bk):
    """Return M(q), computed in turned body frames with 10-number inertias."""
    n, parent = robot.n, robot.parent
    joints = [_joint_motion(robot, q, i, bk) for i in range(n)]
    S = [_turned(robot.S[i], robot.z_turns[i]) for i in range(n)]
    m, h, I = [], [], []
    for i in range(n):                                                  # line 5
        mi, hi, Ii = _ten(body_inertia(robot, i, bk), robot.z_turns[i], bk)
        m.append(mi), h.append(hi), I.append(Ii)
    for j in reversed(range(n)):                                        # composites, leaves first
        p = parent[j]
        if p >= 0:                                                      # line 24, in three moves
            hj, Ij = _inertia_up(robot, j, joints[j], m[j], h[j], I[j], bk)
            m[p] = m[p] + m[j]
            h[p] = bk.bind(h[p] + hj, f"hC{p}", p)
            I[p] = bk.bind(I[p] + Ij, f"IC{p}", p)
    M = bk.zeros((n, n))
    for j in range(n):                                                  # M, column j
        w, v = S[j][:3], S[j][3:]
        nf = bk.bind(I[j] @ w + cross(h[j], v, bk), f"Fn{j}", j)        # line 10: IC_j Phi_j
        ff = bk.bind(m[j] * v - cross(h[j], w, bk), f"Ff{j}", j)
        M[j, j] = S[j][:3] @ nf + S[j][3:] @ ff                         # line 13
        i = j                                                           # line 15
        while parent[i] >= 0:                                           # line 16
            nf, ff = _force_up(robot, i, joints[i], nf, ff, bk, f"F{j}_{i}", j)   # line 17
            i = parent[i]                                               # line 18
            M[i, j] = M[j, i] = S[i][:3] @ nf + S[i][3:] @ ff           # line 21
    return M


def _turned(x, T):
    """A motion or force 6-vector of a body frame in its turned frame (T^T on both halves)."""
    import numpy as np

    return np.concatenate([T.T @ np.asarray(x[:3], dtype=float), T.T @ np.asarray(x[3:], dtype=float)])


def _ten(I6, T, bk):
    """(m, h, Ibar) of a 6x6 spatial inertia about the frame origin ([angular; linear]), turned
    by T (T^T Ibar T, T^T h: a signed permutation for an axis along a coordinate axis)."""
    h = [I6[2, 4], I6[0, 5], I6[1, 3]]                                  # I6[:3, 3:] = (h x)
    Tc = bk.const(T)
    return I6[5, 5], Tc.T @ _array(h, bk), Tc.T @ I6[:3, :3] @ Tc


def _array(values, bk):
    out = bk.zeros(3)
    for k, x in enumerate(values):
        out[k] = x
    return out


def _joint_motion(robot, q, i, bk):
    """Body i's joint, in its turned frame: ("rot", cos, sin), ("slide", q_i) or None (a
    free-flyer's bodies share the base frame)."""
    if robot.is_free(i):
        return None
    qi = joint_position(robot, q, i)
    if robot.bodies[i].joint_type == "prismatic":
        return ("slide", qi)
    return ("rot", bk.cos(qi), bk.sin(qi))


def _rz(joint, x, bk):
    """R_z(q) x for a 3-vector x."""
    _, c, s = joint
    out = bk.zeros(3)
    out[0], out[1], out[2] = c * x[0] - s * x[1], s * x[0] + c * x[1], x[2]
    return out


def _shift(m, h, I, d, bk):
    """(h, Ibar) of an inertia whose frame origin moves by -d (the old origin at d in the new
    frame): h + m d and Ibar + 2 (d . h) 1 - d h^T - h d^T + m ((d . d) 1 - d d^T)."""
    h2 = h + m * d
    out = bk.zeros((3, 3))
    dh = d @ h
    dd = d @ d
    for a in range(3):
        for b in range(a, 3):
            e = I[a, b] - d[a] * h[b] - h[a] * d[b] - m * d[a] * d[b]
            if a == b:
                e = e + 2 * dh + m * dd
            out[a, b] = out[b, a] = e
    return h2, out


def _inertia_up(robot, i, joint, m, h, I, bk):
    """(h, Ibar) of body i's composite in its parent's turned frame: the joint's motion, then
    the constant Rt, t of :attr:`Robot.z_aligned`."""
    Rt, t = (bk.const(x) for x in robot.z_aligned[i][:2])
    if joint is not None and joint[0] == "rot":
        c, s = joint[1], joint[2]
        Rz = bk.zeros((3, 3))
        Rz[0, 0], Rz[0, 1], Rz[1, 0], Rz[1, 1], Rz[2, 2] = c, -s, s, c, bk.number(1.0)
        h = bk.bind(_rz(joint, h, bk), f"hz{i}", i)
        I = rotate_symmetric(Rz, I, bk, f"Iz{i}", i)
    elif joint is not None:
        d = bk.zeros(3)
        d[2] = joint[1]
        h, I = _shift(m, h, I, d, bk)
    h = Rt @ h
    I = rotate_symmetric(Rt, I, bk, f"It{i}", i)
    return _shift(m, h, I, t, bk)


def _force_up(robot, i, joint, nf, ff, bk, name, body):
    """A force (moment nf about the origin, force ff) in body i's turned frame, moved to its
    parent's: the joint's motion, then Rt, then the origin shift by t (n + t x f)."""
    Rt, t = (bk.const(x) for x in robot.z_aligned[i][:2])
    if joint is not None and joint[0] == "rot":
        nf, ff = _rz(joint, nf, bk), _rz(joint, ff, bk)
    elif joint is not None:
        d = bk.zeros(3)
        d[2] = joint[1]
        nf = nf + cross(d, ff, bk)
    ff = bk.bind(Rt @ ff, name + "f", body)
    nf = bk.bind(Rt @ nf + cross(t, ff, bk), name + "n", body)
    return nf, ff
