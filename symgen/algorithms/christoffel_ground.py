"""Algorithm 2 of Echeandia & Wensing (2021) in ground coordinates (the paper's footnote 2).

The same lines as :mod:`.christoffel` with Phi_i(q) and the composite inertias IC_k(q) in the
base frame (:func:`~symgen.kinematics.ground_frames`): the composites add without congruences
(line 22), Bt and D are never moved (lines 18-19 are the identity) and neither are the F's
(line 15), so each Gamma_ijk = Phi_i^T B(Phi_k, IC_k) Phi_j (eq. 36) is one 6-vector dot product.

Two exact rewrites of lines 9-11 save a matrix-vector product each per (k, j):
  - F2 = Bt^T Phi_j is not formed: line 13 needs Phi_i . Bt^T Phi_j = Phi_j . (Bt Phi_i), and
    Bt Phi_i is the F1 of the pair (k, i), i an ancestor of j. So F1 is computed for every j
    first (lines 7-9), then lines 10-16 run.
  - F3 = D Phi_j with D = (IC_k Phi_k) x* - Bt (line 6) is (Phi_j x*)(IC_k Phi_k) - F1, a
    cross product (18 products) instead of a dense 6x6 product (36).
This is the form the generated code uses.
"""
from __future__ import annotations

from ..kinematics import ground_frames
from ..spatial import crf, factor_B


def christoffel_ground(robot, q, bk):
    """Return Gamma with Gamma[i, j, k] = Gamma_ijk, so that C = sum_k Gamma[:, :, k] qd_k."""
    n, parent = robot.n, robot.parent
    Phi, IC = ground_frames(robot, q, bk)                               # lines 1-3
    Gamma = bk.zeros((n, n, n))
    for k in reversed(range(n)):                                        # line 4
        Bt = bk.bind(factor_B(Phi[k], IC[k], bk), f"Bt{k}", k)             # line 5
        h = bk.bind(IC[k] @ Phi[k], f"h{k}", k)                            # line 6: D = h x* - Bt
        F1 = {j: bk.bind(Bt @ Phi[j], f"F1_{k}_{j}", j)                    # lines 7-9
              for j in robot.ancestors(k)}
        for j in robot.ancestors(k):                                    # line 8
            F3 = bk.bind(crf(Phi[j], bk) @ h - F1[j], f"F3_{k}_{j}", j)     # line 9: D Phi_j
            for i in robot.ancestors(j):                                # lines 10-11, 16
                Gamma[i, j, k] = Gamma[i, k, j] = Phi[i] @ F1[j]        # line 12
                Gamma[j, i, k] = Gamma[j, k, i] = Phi[j] @ F1[i]        # line 13: Phi_i.Bt^T Phi_j
                Gamma[k, i, j] = Gamma[k, j, i] = Phi[i] @ F3           # line 14
        p = parent[k]
        if p >= 0:                                                      # line 22
            IC[p] = bk.bind(IC[p] + IC[k], f"IC{p}", p)
    return Gamma
