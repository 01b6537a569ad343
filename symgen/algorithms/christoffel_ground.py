"""Algorithm 2 of Echeandia & Wensing (2021) in ground coordinates (the paper's footnote 2).

The same lines as :mod:`.christoffel` with Phi_i(q) and the composite inertias IC_k(q) in the
base frame (:func:`~symgen.kinematics.ground_frames`): the composites add without congruences
(line 22), Bt and D are never moved (lines 18-19 are the identity) and neither are the F's
(line 15), so each Gamma_ijk = Phi_i^T B(Phi_k, IC_k) Phi_j (eq. 36) is one 6-vector dot product.

Bt is kept in its two parts (line 5): Bt = Bs + (h x*), Bs = 1/2 [(Phi_k x*) IC_k - IC_k (Phi_k x)]
symmetric (inertia form, 9 numbers) and h = 1/2 IC_k Phi_k, with (h x*) antisymmetric. Then
  F1 = Bt Phi_j   = Bs Phi_j + (Phi_j x*) h       (line 9)
  F2 = Bt^T Phi_j = Bs Phi_j - (Phi_j x*) h
  F3 = D Phi_j    = (2h x*) Phi_j - F1 = -F2      (D of line 6)
so line 14 is minus line 13: Gamma_kij = -Gamma_jik for i, j ancestors of k (dM_jk/dq_i = 0),
and each related triple costs two dot products; for j = k both are Gamma_kik = 1/2 dM_kk/dq_i = 0
and are not computed (exact zeros). This is the form the generated code uses.
"""
from __future__ import annotations

from ..kinematics import ground_frames
from ..spatial import cross_force, inertia_rate, inertia_times


def christoffel_ground(robot, q, bk):
    """Return Gamma with Gamma[i, j, k] = Gamma_ijk, so that C = sum_k Gamma[:, :, k] qd_k."""
    n, parent = robot.n, robot.parent
    Phi, IC = ground_frames(robot, q, bk)                               # lines 1-3
    Gamma = bk.zeros((n, n, n))
    for k in reversed(range(n)):                                        # line 4
        Bs = bk.bind(inertia_rate(Phi[k], IC[k], bk) * bk.half, f"Bs{k}", k)   # line 5
        h = bk.bind(inertia_times(IC[k], Phi[k], bk) * bk.half, f"h{k}", k)   # line 6
        for j in robot.ancestors(k):                                    # lines 7-8, 18-20
            E = bk.bind(inertia_times(Bs, Phi[j], bk), f"E{k}_{j}", j)
            Q = bk.bind(cross_force(Phi[j], h, bk), f"Q{k}_{j}", j)
            F1 = bk.bind(E + Q, f"F1_{k}_{j}", j)                          # line 9
            if j == k:              # lines 13-14 give Gamma_kik = 1/2 dM_kk/dq_i = 0: skipped,
                for i in robot.ancestors(j)[1:]:                        # as is Gamma_kkk = 0
                    Gamma[i, k, k] = Phi[i] @ F1                        # line 12
                continue
            F2 = bk.bind(E - Q, f"F2_{k}_{j}", j)
            for i in robot.ancestors(j):                                # lines 10-11, 15-16
                Gamma[i, j, k] = Gamma[i, k, j] = Phi[i] @ F1           # line 12
                g = bk.bind(Phi[i] @ F2, f"G{j}_{i}_{k}", i)
                Gamma[j, i, k] = Gamma[j, k, i] = g                     # line 13
                Gamma[k, i, j] = Gamma[k, j, i] = -g                    # line 14 (F3 = -F2)
        p = parent[k]
        if p >= 0:                                                      # line 22
            IC[p] = bk.bind(IC[p] + IC[k], f"IC{p}", p)
        bk.tick(n - k, n)
    return Gamma
