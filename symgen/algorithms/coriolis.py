"""Algorithm 1 of Echeandia & Wensing (2021): M, Mdot and the Christoffel-consistent C in O(N d).

With the body-level factorization B(v, I) of eq. (10) on line 6, the C returned is the unique
Christoffel-consistent factorization, C_ij = sum_k Gamma_ijk qd_k (eq. 3, Proposition 2), and
Mdot = C + C^T (eq. 2, Proposition 1). Comments carry the paper's line numbers: the forward sweep
(lines 2-7) makes v_i, Phid_i, IC_i and BC_i; the backward sweep (lines 8-26) makes F1..F3 for
body j, the entries of column j on the diagonal (lines 12-14) and along the walk to the root
(lines 15-23), and the composites of the parent (lines 24-25). Single-DoF joints: Phi_i is a
6-vector and M_ij, C_ij are scalars. Phi_ring = 0 (axes fixed in the body frame), so line 4 is
Phid_i = (v_i x) Phi_i; for a free-flyer's six columns, fixed in the base, v_i is the base's whole
velocity (:func:`~symgen.kinematics.rate_velocity`), which gives Pinocchio's torsion-free C.

Two versions, side by side and line for line:

    coriolis         body frames (:func:`~symgen.kinematics.body_frames`), as printed
    coriolis_ground  ground coordinates (:func:`~symgen.kinematics.ground_frames`), the paper's
                     footnote 2 (Pinocchio's choice). What changes:
      line 3      velocities add without a transform: v_i = v_p(i) + Phi_i qd_i;
      line 4      the same formula, (v_i x) Phi_i, now the rate of Phi_i(q);
      line 6      BC_i is kept in two parts, BC = Bs + (p x*) with Bs = 1/2 [(v x*) I - I (v x)]
                  symmetric, of the inertia form (9 numbers), and p = 1/2 I v ((p x*) is
                  antisymmetric): 15 numbers instead of 36. Then BC Phi = E + Q and
                  BC^T Phi = E - Q with E = Bs Phi, Q = (Phi x*) p (lines 9 and 11);
      line 17     the identity: F1..F3 are already in the frame of every Phi_i, so each entry
                  is a dot product;
      lines 24-25 composites add without a congruence.
    coriolis_local   body frames turned so that each joint axis is z (Pinocchio's local
                     convention, :func:`~symgen.kinematics.local_frames`): the ground version's
                     15-number BC and 10-number IC, kept in each body's own frame, moved to the
                     parent on lines 17 and 24-25 by a rotation about z, a constant rotation and a
                     constant shift (forces: two 3-vectors) instead of 6x6 congruences.
    B(v, I) is covariant (B' = X^-T B X^-1), so all return the same M, Mdot and C (tested in
    tests/test_identities.py). A build prints whichever costs least for the robot.
"""
from __future__ import annotations

import numpy as np

from ..kinematics import body_frames, body_inertia, ground_frames, local_frames, plus_armature, rate_velocity, vector3
from ..spatial import (congruence, crm, cross, cross_force, cross_motion, factor_B, inertia_form, inertia_parts,
                       inertia_rate, inertia_times, skew)


def coriolis(robot, q, qd, bk):
    """Return (M, Mdot, C) at (q, qd), computed in body frames."""
    n, parent = robot.n, robot.parent
    Xup, Phi = body_frames(robot, q, bk)
    v, Phid, IC, BC = [None] * n, [None] * n, [None] * n, [None] * n
    for i in range(n):                                                  # line 2
        vJ = Phi[i] * qd[i]
        v[i] = bk.bind(vJ if parent[i] < 0 else Xup[i] @ v[parent[i]] + vJ, f"v{i}", i)  # line 3
        Phid[i] = bk.bind(crm(rate_velocity(robot, v, Phi, qd, i, bk), bk) @ Phi[i], f"Phid{i}", i)  # 4
        IC[i] = body_inertia(robot, i, bk)                                    # line 5
        BC[i] = bk.bind(factor_B(v[i], IC[i], bk), f"BC{i}", i)            # line 6, eq. (10)
    M, Mdot, C = bk.zeros((n, n)), bk.zeros((n, n)), bk.zeros((n, n))
    for j in reversed(range(n)):                                        # line 8
        F1 = bk.bind(IC[j] @ Phid[j] + BC[j] @ Phi[j], f"F1_{j}", j)       # line 9
        F2 = bk.bind(IC[j] @ Phi[j], f"F2_{j}", j)                         # line 10
        F3 = bk.bind(BC[j].T @ Phi[j], f"F3_{j}", j)                       # line 11
        C[j, j] = Phi[j] @ F1                                           # line 12
        M[j, j] = plus_armature(robot, j, Phi[j] @ F2)                  # line 13 (+ armature)
        Mdot[j, j] = Phid[j] @ F2 + Phi[j] @ (F1 + F3)                  # line 14
        i = j                                                           # line 15
        while parent[i] >= 0:                                           # line 16
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


def coriolis_ground(robot, q, qd, bk):
    """Return (M, Mdot, C) at (q, qd), computed in ground coordinates."""
    n, parent = robot.n, robot.parent
    Phi, I = ground_frames(robot, q, bk, first_moments=True)
    v, Phid, IC, BsC, pC = [None] * n, [None] * n, [None] * n, [None] * n, [None] * n
    for i in range(n):                                                  # line 2
        vJ = Phi[i] * qd[i]
        v[i] = bk.bind(vJ if parent[i] < 0 else v[parent[i]] + vJ, f"v{i}", i)  # line 3
        Phid[i] = bk.bind(cross_motion(rate_velocity(robot, v, Phi, qd, i, bk), Phi[i], bk), f"Phid{i}", i)  # 4
        IC[i] = I[i]                                                    # line 5
        BsC[i] = bk.bind(half_rate(v[i], I[i], bk, f"Br{i}", i), f"Bs{i}", i)   # line 6, eq. (10):
        pC[i] = bk.bind(bk.bind(inertia_times(I[i], v[i], bk), f"Iv{i}", i) * bk.half, f"p{i}", i)  # BC = Bs + (p x*)
    M, Mdot, C = bk.zeros((n, n)), bk.zeros((n, n)), bk.zeros((n, n))
    for j in reversed(range(n)):                                        # line 8
        E = bk.bind(inertia_times(BsC[j], Phi[j], bk), f"E{j}", j)         # Bs Phi_j
        Q = bk.bind(cross_force(Phi[j], pC[j], bk), f"Q{j}", j)           # (Phi_j x*) p
        F1 = bk.bind(inertia_times(IC[j], Phid[j], bk) + E + Q, f"F1_{j}", j)  # line 9
        F2 = bk.bind(inertia_times(IC[j], Phi[j], bk), f"F2_{j}", j)       # line 10
        F3 = bk.bind(E - Q, f"F3_{j}", j)                                  # line 11
        F13 = bk.bind(F1 + F3, f"F13_{j}", j)                              # F1 + F3, lines 14, 22
        C[j, j] = Phi[j] @ F1                                           # line 12
        M[j, j] = plus_armature(robot, j, Phi[j] @ F2)                  # line 13 (+ armature)
        Mdot[j, j] = Phid[j] @ F2 + Phi[j] @ F13                        # line 14
        i = j                                                           # line 15
        while parent[i] >= 0:                                           # line 16
            # line 17: F1, F2, F3 are already in the frame of every Phi_i
            i = parent[i]                                               # line 18
            C[i, j] = Phi[i] @ F1                                       # line 19
            C[j, i] = Phid[i] @ F2 + Phi[i] @ F3                        # line 20
            M[i, j] = M[j, i] = Phi[i] @ F2                             # line 21
            Mdot[i, j] = Mdot[j, i] = Phid[i] @ F2 + Phi[i] @ F13       # line 22
        p = parent[j]
        if p >= 0:                                                      # lines 24-25
            IC[p] = bk.bind(IC[p] + IC[j], f"IC{p}", p)
            BsC[p] = bk.bind(BsC[p] + BsC[j], f"Bs{p}", p)
            pC[p] = bk.bind(pC[p] + pC[j], f"p{p}", p)
        bk.tick(n - j, n)
    return M, Mdot, C


def coriolis_local(robot, q, qd, bk):
    """Return (M, Mdot, C) at (q, qd), computed in turned body frames."""
    n, parent = robot.n, robot.parent
    L = local_frames(robot, q, bk)
    S = [np.concatenate(L[i].S) for i in range(n)]
    v = [None] * n
    for i in range(n):                                                  # line 3
        vJ = S[i] * qd[i]
        if parent[i] < 0:
            v[i] = vJ
        else:
            w, u = L[i].motion_down(v[parent[i]][:3], v[parent[i]][3:])
            v[i] = np.concatenate([w, u]) + vJ
        v[i] = bk.bind(v[i], f"v{i}", i)
    rate = _free_flyer_rates(robot, L, v, bk)
    Phid, IC, BsC, pC = [None] * n, [None] * n, [None] * n, [None] * n
    for i in range(n):
        Phid[i] = bk.bind(cross_motion(rate.get(i, v[i]), S[i], bk), f"Phid{i}", i)   # line 4
        IC[i] = inertia_form(*L[i].inertia(body_inertia(robot, i, bk)), bk)                    # line 5
        BsC[i] = bk.bind(inertia_rate(v[i], IC[i], bk) * bk.half, f"Bs{i}", i)          # line 6:
        pC[i] = bk.bind(inertia_times(IC[i], v[i], bk) * bk.half, f"p{i}", i)          # Bs + (p x*)
    M, Mdot, C = bk.zeros((n, n)), bk.zeros((n, n)), bk.zeros((n, n))
    for j in reversed(range(n)):                                        # line 8
        E = bk.bind(inertia_times(BsC[j], S[j], bk), f"E{j}", j)           # Bs Phi_j
        Q = bk.bind(cross_force(S[j], pC[j], bk), f"Q{j}", j)             # (Phi_j x*) p
        F1 = bk.bind(inertia_times(IC[j], Phid[j], bk) + E + Q, f"F1_{j}", j)  # line 9
        F2 = bk.bind(inertia_times(IC[j], S[j], bk), f"F2_{j}", j)         # line 10
        F3 = bk.bind(E - Q, f"F3_{j}", j)                                  # line 11
        C[j, j] = S[j] @ F1                                             # line 12
        M[j, j] = plus_armature(robot, j, S[j] @ F2)                    # line 13 (+ armature)
        Mdot[j, j] = Phid[j] @ F2 + S[j] @ (F1 + F3)                    # line 14
        i = j                                                           # line 15
        while parent[i] >= 0:                                           # line 16
            F1, F2, F3 = (_force_up(L[i], F, f"{k}_{j}_{i}", j, bk)     # line 17
                          for k, F in (("F1", F1), ("F2", F2), ("F3", F3)))
            i = parent[i]                                               # line 18
            C[i, j] = S[i] @ F1                                         # line 19
            C[j, i] = Phid[i] @ F2 + S[i] @ F3                          # line 20
            M[i, j] = M[j, i] = S[i] @ F2                               # line 21
            Mdot[i, j] = Mdot[j, i] = Phid[i] @ F2 + S[i] @ (F1 + F3)   # line 22
        p = parent[j]
        if p >= 0:                                                      # lines 24-25
            IC[p] = bk.bind(IC[p] + _inertia_up(L[j], IC[j], bk), f"IC{p}", p)
            BsC[p] = bk.bind(BsC[p] + _inertia_up(L[j], BsC[j], bk), f"Bs{p}", p)
            pC[p] = bk.bind(pC[p] + _force_up(L[j], pC[j], f"pu{j}", j, bk), f"p{p}", p)
        bk.tick(n - j, n)
    return M, Mdot, C


def half_rate(u, I, bk, name, body):
    """1/2 [(u x*) I - I (u x)] (:func:`~symgen.spatial.inertia_rate` halved), each sum named
    before it is halved: SymPy spreads a number over a sum, a product more per term (the 20-DoF
    chain's C: 12 products a body in the three off-diagonal entries and h'). Ground coordinates
    only: in a body's own frame (the local variant) its inertia is constant and folds the 1/2."""
    A, h, m = inertia_parts(I)
    w, v = u[:3], u[3:]
    SwA = skew(w, bk) @ A
    out = bk.zeros((6, 6))
    for r in range(3):
        k, l = [x for x in range(3) if x != r]
        out[r, r] = SwA[r, r] + v[k] * h[k] + v[l] * h[l]
        for c in range(r + 1, 3):
            out[r, c] = out[c, r] = bk.bind(SwA[r, c] + SwA[c, r] - v[r] * h[c] - h[r] * v[c], f"{name}_{r}{c}",
                                            body) * bk.half
    Shd = skew(bk.bind(cross(w, h, bk) + v * m, f"{name}h", body) * bk.half, bk)      # h' = w x h + m v
    out[:3, 3:], out[3:, :3] = Shd, Shd.T
    return out


def _inertia_up(frame, form, bk):
    """An inertia form of ``frame`` in its parent's turned frame."""
    A, h, m = inertia_parts(form)
    h_up, A_up = frame.inertia_up(m, vector3(h, bk), A)
    return inertia_form(m, h_up, A_up, bk)


def _force_up(frame, F, name, body, bk):
    n_up, f_up = frame.force_up(F[:3], F[3:], name, body)
    return np.concatenate([n_up, f_up])


def _free_flyer_rates(robot, L, v, bk):
    """{free body k: the base's whole velocity in its turned frame} (what turns its column,
    :func:`~symgen.kinematics.rate_velocity`): the last free body's v, moved back up the free
    bodies' constant joints (w_p = Rt w, u_p = Rt u + t x (Rt w))."""
    if not robot.free:
        return {}
    k = robot.free - 1
    out = {k: v[k]}
    while k > 0:
        w, u = out[k][:3], out[k][3:]
        Rw = L[k].Rt @ w
        out[k - 1] = bk.bind(np.concatenate([Rw, L[k].Rt @ u + cross(L[k].t, Rw, bk)]), f"vbase{k - 1}", k - 1)
        k -= 1
    return out
