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

from ..kinematics import body_frames, body_inertia, ground_frames, inertia_apply, local_frames, plus_armature
from ..spatial import congruence


def composites(robot, q, bk):
    """Body frames: (Xup, Phi, IC), the composite inertias of lines 5 and 24, leaves first."""
    n, parent = robot.n, robot.parent
    Xup, Phi = body_frames(robot, q, bk)
    IC = [body_inertia(robot, i, bk) for i in range(n)]                                 # line 5
    for j in reversed(range(n)):                                        # composites, leaves first
        p = parent[j]
        if p >= 0:                                                      # line 24
            IC[p] = bk.bind(IC[p] + congruence(Xup[j], IC[j], bk, f"ICX{j}", j), f"IC{p}", p)
    return Xup, Phi, IC


def composites_ground(robot, q, bk):
    """Ground coordinates: (Phi, IC), the composites add without a congruence (line 24)."""
    n, parent = robot.n, robot.parent
    Phi, IC = ground_frames(robot, q, bk, first_moments=True)           # line 5
    for j in reversed(range(n)):                                        # composites, leaves first
        p = parent[j]
        if p >= 0:                                                      # line 24
            IC[p] = bk.bind(IC[p] + IC[j], f"IC{p}", p)
    return Phi, IC


def composites_local(robot, q, bk):
    """Turned body frames: (L, m, h, I), each composite as its 10 numbers (line 24 in three moves)."""
    n, parent = robot.n, robot.parent
    L = local_frames(robot, q, bk)
    m, h, I = [list(x) for x in zip(*(L[i].inertia(body_inertia(robot, i, bk)) for i in range(n)))]   # line 5
    for j in reversed(range(n)):                                        # composites, leaves first
        p = parent[j]
        if p >= 0:                                                      # line 24, in three moves
            hj, Ij = L[j].inertia_up(m[j], h[j], I[j])
            m[p] = m[p] + m[j]
            h[p] = bk.bind(h[p] + hj, f"hC{p}", p)
            I[p] = bk.bind(I[p] + Ij, f"IC{p}", p)
    return L, m, h, I


def crba(robot, q, bk):
    """Return M(q), computed in body frames."""
    n, parent = robot.n, robot.parent
    Xup, Phi, IC = composites(robot, q, bk)                             # lines 5 and 24
    M = bk.zeros((n, n))
    for j in range(n):                                                  # M, column j
        F = bk.bind(IC[j] @ Phi[j], f"F{j}", j)                            # line 10
        M[j, j] = plus_armature(robot, j, Phi[j] @ F)                   # line 13 (+ armature)
        i = j                                                           # line 15
        while parent[i] >= 0:                                           # line 16
            F = bk.bind(Xup[i].T @ F, f"F{j}", j)                          # line 17
            i = parent[i]                                               # line 18
            M[i, j] = M[j, i] = Phi[i] @ F                              # line 21
    return M


def crba_ground(robot, q, bk):
    """Return M(q), computed in ground coordinates."""
    n, parent = robot.n, robot.parent
    Phi, IC = composites_ground(robot, q, bk)                           # lines 5 and 24
    M = bk.zeros((n, n))
    for j in range(n):                                                  # M, column j
        F = bk.bind(IC[j] @ Phi[j], f"F{j}", j)                            # line 10
        M[j, j] = plus_armature(robot, j, Phi[j] @ F)                   # line 13 (+ armature)
        i = j                                                           # line 15
        while parent[i] >= 0:                                           # line 16
            # line 17: F is already in the frame of every Phi_i
            i = parent[i]                                               # line 18
            M[i, j] = M[j, i] = Phi[i] @ F                              # line 21
    return M


def crba_local(robot, q, bk):
    """Return M(q), computed in turned body frames with 10-number inertias."""
    n, parent = robot.n, robot.parent
    L, m, h, I = composites_local(robot, q, bk)                         # lines 5 and 24
    M = bk.zeros((n, n))
    for j in range(n):                                                  # M, column j
        Sw, Sv = L[j].S
        nf, ff = inertia_apply(m[j], h[j], I[j], Sw, Sv, bk)           # line 10: IC_j Phi_j
        nf, ff = bk.bind(nf, f"Fn{j}", j), bk.bind(ff, f"Ff{j}", j)
        M[j, j] = plus_armature(robot, j, Sw @ nf + Sv @ ff)            # line 13 (+ armature)
        i = j                                                           # line 15
        while parent[i] >= 0:                                           # line 16
            nf, ff = L[i].force_up(nf, ff, f"F{j}_{i}", j)              # line 17
            i = parent[i]                                               # line 18
            M[i, j] = M[j, i] = L[i].S[0] @ nf + L[i].S[1] @ ff         # line 21
    return M
