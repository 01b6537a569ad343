"""Algorithm 1 of Echeandia & Wensing (2021): M, Mdot and the Christoffel-consistent C in O(N d).

With the body-level factorization B(v, I) of eq. (10), the C returned here is the unique
Christoffel-consistent factorization, C_ij = sum_k Gamma_ijk qd_k (eq. 3), and Mdot = C + C^T
(eq. 2). Line numbers in comments are the paper's. Single-DoF joints: Phi_i is a 6-vector and
M_ij, C_ij are scalars. Phi_ring = 0 (axes fixed in the body frame).
"""
from __future__ import annotations

from ..kinematics import body_frames
from ..spatial import congruence, crm, factor_B


def coriolis(robot, q, qd, bk):
    """Return (M, Mdot, C) at (q, qd)."""
    n, parent = robot.n, robot.parent
    Xup, Phi = body_frames(robot, q, bk)
    v, Phid, IC, BC = [None] * n, [None] * n, [None] * n, [None] * n
    for i in range(n):                                                  # lines 2-7
        vJ = Phi[i] * qd[i]
        v[i] = bk.bind(vJ if parent[i] < 0 else Xup[i] @ v[parent[i]] + vJ, f"v{i}", i)  # line 3
        Phid[i] = bk.bind(crm(v[i], bk) @ Phi[i], f"Phid{i}", i)          # line 4
        IC[i] = bk.const(robot.I[i])                                    # line 5
        BC[i] = bk.bind(factor_B(v[i], IC[i], bk), f"BC{i}", i)            # line 6, eq. (10)
    M, Mdot, C = bk.zeros((n, n)), bk.zeros((n, n)), bk.zeros((n, n))
    for j in reversed(range(n)):                                        # lines 8-26
        F1 = bk.bind(IC[j] @ Phid[j] + BC[j] @ Phi[j], f"F1_{j}", j)       # line 9
        F2 = bk.bind(IC[j] @ Phi[j], f"F2_{j}", j)                         # line 10
        F3 = bk.bind(BC[j].T @ Phi[j], f"F3_{j}", j)                       # line 11
        C[j, j] = Phi[j] @ F1                                           # line 12
        M[j, j] = Phi[j] @ F2                                           # line 13
        Mdot[j, j] = Phid[j] @ F2 + Phi[j] @ (F1 + F3)                  # line 14
        i = j
        while parent[i] >= 0:                                           # lines 16-23
            F1 = bk.bind(Xup[i].T @ F1, f"F1_{j}", j)                      # line 17
            F2 = bk.bind(Xup[i].T @ F2, f"F2_{j}", j)
            F3 = bk.bind(Xup[i].T @ F3, f"F3_{j}", j)
            i = parent[i]                                               # line 18
            C[i, j] = Phi[i] @ F1                                       # line 19
            C[j, i] = Phid[i] @ F2 + Phi[i] @ F3                        # line 20
            M[i, j] = M[j, i] = Phi[i] @ F2                             # line 21
            Mdot[i, j] = Mdot[j, i] = Phid[i] @ F2 + Phi[i] @ (F1 + F3)  # line 22
        p = parent[j]
        if p >= 0:                                                      # lines 24-25
            IC[p] = bk.bind(IC[p] + congruence(Xup[j], IC[j], bk, f"ICX{j}", j), f"IC{p}", p)
            BC[p] = bk.bind(BC[p] + congruence(Xup[j], BC[j], bk, f"BCX{j}", j), f"BC{p}", p)
        bk.tick(n - j, n)
    return M, Mdot, C
