"""Algorithm 1 of Echeandia & Wensing (2021) in ground coordinates (the paper's footnote 2).

The same lines as :mod:`.coriolis`, with every quantity expressed in the base frame instead of
body frames: Phi_i(q) and I_i(q) come from :func:`~symgen.kinematics.ground_frames`, velocities
add without transforms (line 3), Phi_ring = v_i x Phi_i (line 4), composites add without a
congruence (lines 24-25), and the ancestor walk (lines 16-23) moves no forces: F1, F2, F3 are
already in the frame of every Phi_i, so each entry is a dot product. B(v, I) of eq. (10) is
covariant (B' = X^-T B X^-1), so M, Mdot and C are those of the body-frame algorithm.

B is kept in its two parts (line 6): B(v, I) = Bs + (p x*), with Bs = 1/2 [(v x*) I - I (v x)]
symmetric and of the inertia form (9 numbers) and p = 1/2 I v, so that BC Phi = Bs Phi +
(Phi x*) p and BC^T Phi = Bs Phi - (Phi x*) p ((p x*) is antisymmetric) — 15 numbers per
composite instead of 36. This is the form the generated code uses.
"""
from __future__ import annotations

from ..kinematics import ground_frames
from ..spatial import cross_force, cross_motion, inertia_rate, inertia_times


def coriolis_ground(robot, q, qd, bk):
    """Return (M, Mdot, C) at (q, qd)."""
    n, parent = robot.n, robot.parent
    Phi, I = ground_frames(robot, q, bk)
    v, Phid, IC, BsC, pC = [None] * n, [None] * n, [None] * n, [None] * n, [None] * n
    for i in range(n):                                                  # lines 2-7
        vJ = Phi[i] * qd[i]
        v[i] = bk.bind(vJ if parent[i] < 0 else v[parent[i]] + vJ, f"v{i}", i)  # line 3
        Phid[i] = bk.bind(cross_motion(v[i], Phi[i], bk), f"Phid{i}", i)  # line 4
        IC[i] = I[i]                                                    # line 5
        BsC[i] = bk.bind(inertia_rate(v[i], I[i], bk) * bk.half, f"Bs{i}", i)   # line 6, eq. (10):
        pC[i] = bk.bind(inertia_times(I[i], v[i], bk) * bk.half, f"p{i}", i)   # B = Bs + (p x*)
    M, Mdot, C = bk.zeros((n, n)), bk.zeros((n, n)), bk.zeros((n, n))
    for j in reversed(range(n)):                                        # lines 8-26
        E = bk.bind(inertia_times(BsC[j], Phi[j], bk), f"E{j}", j)         # Bs Phi_j
        Q = bk.bind(cross_force(Phi[j], pC[j], bk), f"Q{j}", j)           # (p x*) Phi_j
        F1 = bk.bind(inertia_times(IC[j], Phid[j], bk) + E + Q, f"F1_{j}", j)  # line 9
        F2 = bk.bind(inertia_times(IC[j], Phi[j], bk), f"F2_{j}", j)       # line 10
        F3 = bk.bind(E - Q, f"F3_{j}", j)                                  # line 11
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
            BsC[p] = bk.bind(BsC[p] + BsC[j], f"Bs{p}", p)
            pC[p] = bk.bind(pC[p] + pC[j], f"p{p}", p)
        bk.tick(n - j, n)
    return M, Mdot, C
