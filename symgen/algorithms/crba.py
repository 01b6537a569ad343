"""Composite-rigid-body algorithm for the mass matrix M(q) (Featherstone, Table 6.2)."""
from __future__ import annotations

from ..kinematics import joint_transforms
from ..spatial import congruence


def crba(robot, q, bk):
    n = robot.n
    Xup, S = joint_transforms(robot, q, bk)
    IC = [bk.const(I) for I in robot.I]
    for i in reversed(range(n)):                  # composite inertias, leaves first
        p = robot.parent[i]
        if p >= 0:
            IC[p] = bk.bind(IC[p] + congruence(Xup[i], IC[i], bk, f"ICX{i}", i), f"IC{p}", p)
    M = bk.zeros((n, n))
    for i in range(n):
        F = bk.bind(IC[i] @ S[i], f"F{i}", i)
        M[i, i] = S[i] @ F
        j = i
        while robot.parent[j] >= 0:
            F = bk.bind(Xup[j].T @ F, f"F{i}", i)
            j = robot.parent[j]
            M[i, j] = M[j, i] = S[j] @ F
    return M
