"""Algorithm 2 of Echeandia & Wensing (2021): all Christoffel symbols Gamma_ijk(q) in O(N d^2).

Gamma_ijk = 1/2 (dM_ij/dq_k + dM_ik/dq_j - dM_jk/dq_i) (eq. 4), computed without derivatives
from the closed form (eq. 36) Gamma_ijk = Phi_i^T B(Phi_k, IC_⌈ijk⌉) Phi_j. Line numbers in
comments are the paper's. Single-DoF joints; Gamma is zero unless i, j, k are mutually related.
"""
from __future__ import annotations

from ..kinematics import body_frames
from ..spatial import congruence, factor_B, icrf


def christoffel(robot, q, bk):
    """Return Gamma with Gamma[i, j, k] = Gamma_ijk, so that C = sum_k Gamma[:, :, k] qd_k."""
    n, parent = robot.n, robot.parent
    Xup, Phi = body_frames(robot, q, bk)
    IC = [bk.const(I) for I in robot.I]                                 # lines 1-3
    Gamma = bk.zeros((n, n, n))
    for k in reversed(range(n)):                                        # line 4
        Bt = bk.bind(factor_B(Phi[k], IC[k], bk), f"Bt{k}", k)             # line 5
        D = bk.bind(icrf(IC[k] @ Phi[k], bk) - Bt, f"D{k}", k)             # line 6
        j = k                                                           # line 7
        while j >= 0:                                                   # line 8
            F1 = bk.bind(Bt @ Phi[j], f"F1_{k}_{j}", j)                    # line 9
            F2 = bk.bind(Bt.T @ Phi[j], f"F2_{k}_{j}", j)
            F3 = bk.bind(D @ Phi[j], f"F3_{k}_{j}", j)
            i = j                                                       # line 10
            while i >= 0:                                               # line 11
                Gamma[i, j, k] = Gamma[i, k, j] = Phi[i] @ F1           # line 12
                Gamma[j, i, k] = Gamma[j, k, i] = Phi[i] @ F2           # line 13
                Gamma[k, i, j] = Gamma[k, j, i] = Phi[i] @ F3           # line 14
                if parent[i] >= 0:                                      # line 15 (the last
                    F1 = bk.bind(Xup[i].T @ F1, f"F1_{k}_{j}", j)          # transform, to the
                    F2 = bk.bind(Xup[i].T @ F2, f"F2_{k}_{j}", j)          # base, is not needed)
                    F3 = bk.bind(Xup[i].T @ F3, f"F3_{k}_{j}", j)
                i = parent[i]                                           # line 16
            if parent[j] >= 0:                                          # lines 18-19
                Bt = bk.bind(congruence(Xup[j], Bt, bk, f"BtX{k}", k), f"Bt{k}", k)
                D = bk.bind(congruence(Xup[j], D, bk, f"DX{k}", k), f"D{k}", k)
            j = parent[j]                                               # line 20
        p = parent[k]
        if p >= 0:                                                      # line 22
            IC[p] = bk.bind(IC[p] + congruence(Xup[k], IC[k], bk, f"ICX{k}", k), f"IC{p}", p)
        bk.tick(n - k, n)
    return Gamma
