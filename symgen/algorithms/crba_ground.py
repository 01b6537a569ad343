"""Composite-rigid-body algorithm for M(q) in ground coordinates (Featherstone, Table 6.2, with
every quantity in the base frame as in the paper's footnote 2): composites add without
congruences and M_ij = Phi_i . (IC_j Phi_j) for i an ancestor of j — dot products only."""
from __future__ import annotations

from ..kinematics import ground_frames


def crba_ground(robot, q, bk):
    n, parent = robot.n, robot.parent
    S, IC = ground_frames(robot, q, bk)
    for i in reversed(range(n)):                  # composite inertias, leaves first
        p = parent[i]
        if p >= 0:
            IC[p] = bk.bind(IC[p] + IC[i], f"IC{p}", p)
    M = bk.zeros((n, n))
    for j in range(n):
        F = bk.bind(IC[j] @ S[j], f"F{j}", j)
        for i in robot.ancestors(j):
            M[i, j] = M[j, i] = S[i] @ F
    return M
