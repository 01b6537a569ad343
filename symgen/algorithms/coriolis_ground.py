"""Algorithm 1 of Echeandia & Wensing (2021) in ground coordinates (the paper's footnote 2).

The same lines as :mod:`.coriolis`, with every quantity expressed in the base frame instead of
body frames: Phi_i(q) and I_i(q) come from :func:`~symgen.kinematics.ground_frames`, velocities
add without transforms (line 3), Phi_ring = v_i x Phi_i (line 4), composites add without a
congruence (lines 24-25), and the ancestor walk (lines 16-23) moves no forces: F1, F2, F3 are
already in the frame of every Phi_i, so each entry is a dot product. B(v, I) of eq. (10) is
covariant (B' = X^-T B X^-1), so M, Mdot and C are those of the body-frame algorithm. This is
the form the generated code uses: no 6x6 transform in any loop.
"""
from __future__ import annotations

from ..kinematics import ground_frames
from ..spatial import crm, factor_B


def coriolis_ground(robot, q, qd, bk):
    """Return (M, Mdot, C) at (q, qd)."""
    n, parent = robot.n, robot.parent
    Phi, I = ground_frames(robot, q, bk)
    v, Phid, IC, BC = [None] * n, [None] * n, [None] * n, [None] * n
    for i in range(n):                                                  # lines 2-7
        vJ = Phi[i] * qd[i]
        v[i] = bk.bind(vJ if parent[i] < 0 else v[parent[i]] + vJ, f"v{i}", i)  # line 3
        Phid[i] = bk.bind(crm(v[i], bk) @ Phi[i], f"Phid{i}", i)          # line 4
        IC[i] = I[i]                                                    # line 5
        BC[i] = bk.bind(factor_B(v[i], IC[i], bk), f"BC{i}", i)            # line 6, eq. (10)
    M, Mdot, C = bk.zeros((n, n)), bk.zeros((n, n)), bk.zeros((n, n))
    for j in reversed(range(n)):                                        # lines 8-26
        F1 = bk.bind(IC[j] @ Phid[j] + BC[j] @ Phi[j], f"F1_{j}", j)       # line 9
        F2 = bk.bind(IC[j] @ Phi[j], f"F2_{j}", j)                         # line 10
        F3 = bk.bind(BC[j].T @ Phi[j], f"F3_{j}", j)                       # line 11
        F13 = bk.bind(F1 + F3, f"F13_{j}", j)
        C[j, j] = Phi[j] @ F1                                           # line 12
        M[j, j] = Phi[j] @ F2                                           # line 13
        Mdot[j, j] = Phid[j] @ F2 + Phi[j] @ F13                        # line 14
        i = parent[j]
        while i >= 0:                                                   # lines 16-23 (line 17,
            C[i, j] = Phi[i] @ F1                                       # the transform, is the
            C[j, i] = Phid[i] @ F2 + Phi[i] @ F3                        # identity here)
            M[i, j] = M[j, i] = Phi[i] @ F2                             # line 21
            Mdot[i, j] = Mdot[j, i] = Phid[i] @ F2 + Phi[i] @ F13       # line 22
            i = parent[i]                                               # line 18
        p = parent[j]
        if p >= 0:                                                      # lines 24-25
            IC[p] = bk.bind(IC[p] + IC[j], f"IC{p}", p)
            BC[p] = bk.bind(BC[p] + BC[j], f"BC{p}", p)
    return M, Mdot, C
