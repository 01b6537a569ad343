"""Algorithm 2 of Echeandia & Wensing (2021): all Christoffel symbols Gamma_ijk(q) in O(N d^2).

Gamma_ijk = 1/2 (dM_ij/dq_k + dM_ik/dq_j - dM_jk/dq_i) (eq. 4), computed without derivatives
from the closed form (eq. 36) Gamma_ijk = Phi_i^T B(Phi_k, IC_⌈ijk⌉) Phi_j, with B of eq. (10).
Comments carry the paper's line numbers: for each body k, leaves first (line 4), Bt = B(Phi_k,
IC_k) and D (lines 5-6) go down to each ancestor j of k (lines 7-8, 18-20); for each such j,
F1..F3 (line 9) go down to each ancestor i of j (lines 10-11, 15-16), giving three symmetric
pairs of entries (lines 12-14); then IC_k joins its parent's composite (line 22). Single-DoF
joints; Gamma is zero unless i, j, k are mutually related.

Two versions, side by side and line for line:

    christoffel         body frames (:func:`~symgen.kinematics.body_frames`), as printed
    christoffel_ground  ground coordinates (:func:`~symgen.kinematics.ground_frames`), the
                        paper's footnote 2. What changes:
      lines 5-6   Bt is kept in two parts, Bt = Bs + (h x*) with Bs = 1/2 [(Phi_k x*) IC_k -
                  IC_k (Phi_k x)] symmetric, of the inertia form (9 numbers), and h = 1/2 IC_k
                  Phi_k ((h x*) antisymmetric); D = (2h x*) - Bt is not formed;
      line 9      F1 = Bt Phi_j = E + Q and F2 = Bt^T Phi_j = E - Q, with E = Bs Phi_j and
                  Q = (Phi_j x*) h, and F3 = D Phi_j = (2h x*) Phi_j - F1 = -F2, so line 14 is
                  minus line 13 (Gamma_kij = -Gamma_jik for i, j ancestors of k, since
                  dM_jk/dq_i = 0): two dot products per related triple. For j = k both lines
                  give Gamma_kik = 1/2 dM_kk/dq_i = 0 and are skipped (exact zeros);
      line 15     the identity: the F's are already in the frame of every Phi_i;
      lines 18-19 the identity: Bt and D are never moved;
      line 22     composites add without a congruence.
    Each Gamma_ijk is then one 6-vector dot product. Both versions return the same Gamma
    (tests/test_identities.py); the generated code uses the ground version by default.

A free-flyer (generalized speeds: the base's body twist) adds torsion, and so does any joint with
several velocities fixed in its child frame (spherical, planar, a free-flyer inside the tree). Its six columns are fixed
in the base, so the rate of column c is v_base x Phi_c, where the single-DoF closed form above
assumes the chain's partial sum (only k <= c turn Phi_c). The difference is the term of the base
columns k after c: (Phi_k x Phi_c) v_k, and with Phi_k x Phi_c = sigma Phi_m (the structure
constants of se(3) in the body-twist basis: linear x linear = 0, angular x linear = linear,
angular x angular = angular) it adds Gamma_rck += sigma M_rm for every r (:func:`torsion`). So
Gamma[:, c, k] - Gamma[:, k, c] = M (Phi_k x Phi_c) on the base block and 0 elsewhere, as
Pinocchio's computeCoriolisMatrix has it, and C = sum_k Gamma[:, :, k] v_k is Algorithm 1's C.
"""
from __future__ import annotations

import numpy as np

from ..kinematics import armature, body_frames, body_inertia, ground_frames
from ..spatial import congruence, crm, cross_force, factor_B, icrf, inertia_rate, inertia_times
from .crba import crba, crba_ground


def christoffel(robot, q, bk):
    """Return Gamma with Gamma[i, j, k] = Gamma_ijk, so that C = sum_k Gamma[:, :, k] qd_k;
    computed in body frames."""
    n, parent = robot.n, robot.parent
    Xup, Phi = body_frames(robot, q, bk)
    IC = [body_inertia(robot, i, bk) for i in range(n)]                                 # lines 1-3
    Gamma = bk.zeros((n, n, n))
    for k in reversed(range(n)):                                        # line 4
        Bt = bk.bind(factor_B(Phi[k], IC[k], bk), f"Bt{k}", k)             # line 5
        D = bk.bind(icrf(IC[k] @ Phi[k], bk) - Bt, f"D{k}", k)             # line 6
        for j in robot.ancestors(k):                                    # lines 7-8, 20
            F1 = bk.bind(Bt @ Phi[j], f"F1_{k}_{j}", j)                    # line 9
            F2 = bk.bind(Bt.T @ Phi[j], f"F2_{k}_{j}", j)
            F3 = bk.bind(D @ Phi[j], f"F3_{k}_{j}", j)
            for i in robot.ancestors(j):                                # lines 10-11, 16
                Gamma[i, j, k] = Gamma[i, k, j] = Phi[i] @ F1           # line 12
                Gamma[j, i, k] = Gamma[j, k, i] = Phi[i] @ F2           # line 13
                Gamma[k, i, j] = Gamma[k, j, i] = Phi[i] @ F3           # line 14
                if parent[i] >= 0:                                      # line 15 (the last move,
                    F1 = bk.bind(Xup[i].T @ F1, f"F1_{k}_{j}", j)          # to the base, is not
                    F2 = bk.bind(Xup[i].T @ F2, f"F2_{k}_{j}", j)          # needed)
                    F3 = bk.bind(Xup[i].T @ F3, f"F3_{k}_{j}", j)
            if parent[j] >= 0:                                          # lines 18-19
                Bt = bk.bind(congruence(Xup[j], Bt, bk, f"BtX{k}", k), f"Bt{k}", k)
                D = bk.bind(congruence(Xup[j], D, bk, f"DX{k}", k), f"D{k}", k)
        p = parent[k]
        if p >= 0:                                                      # line 22
            IC[p] = bk.bind(IC[p] + congruence(Xup[k], IC[k], bk, f"ICX{k}", k), f"IC{p}", p)
        bk.tick(n - k, n)
    return torsion(robot, Gamma, lambda: crba(robot, q, bk))


def christoffel_ground(robot, q, bk):
    """Return Gamma with Gamma[i, j, k] = Gamma_ijk, so that C = sum_k Gamma[:, :, k] qd_k;
    computed in ground coordinates."""
    n, parent = robot.n, robot.parent
    Phi, IC = ground_frames(robot, q, bk)                               # lines 1-3
    Gamma = bk.zeros((n, n, n))
    for k in reversed(range(n)):                                        # line 4
        Bs = bk.bind(inertia_rate(Phi[k], IC[k], bk) * bk.half, f"Bs{k}", k)   # line 5
        h = bk.bind(inertia_times(IC[k], Phi[k], bk) * bk.half, f"h{k}", k)   # line 6
        for j in robot.ancestors(k):                                    # lines 7-8, 20
            E = bk.bind(inertia_times(Bs, Phi[j], bk), f"E{k}_{j}", j)     # Bs Phi_j
            Q = bk.bind(cross_force(Phi[j], h, bk), f"Q{k}_{j}", j)       # (Phi_j x*) h
            F1 = bk.bind(E + Q, f"F1_{k}_{j}", j)                          # line 9
            if j == k:                          # lines 13-14: Gamma_kik = 0, skipped; so is
                for i in robot.ancestors(j)[1:]:                        # Gamma_kkk = 0
                    Gamma[i, k, k] = Phi[i] @ F1                        # line 12
                continue
            F2 = bk.bind(E - Q, f"F2_{k}_{j}", j)                          # (F3 = -F2)
            for i in robot.ancestors(j):                                # lines 10-11, 16
                Gamma[i, j, k] = Gamma[i, k, j] = Phi[i] @ F1           # line 12
                G = bk.bind(Phi[i] @ F2, f"G{j}_{i}_{k}", i)
                Gamma[j, i, k] = Gamma[j, k, i] = G                     # line 13
                Gamma[k, i, j] = Gamma[k, j, i] = -G                    # line 14 (F3 = -F2)
                # line 15: the F's are already in the frame of every Phi_i
            # lines 18-19: so are Bt and D
        p = parent[k]
        if p >= 0:                                                      # line 22
            IC[p] = bk.bind(IC[p] + IC[k], f"IC{p}", p)
        bk.tick(n - k, n)
    return torsion(robot, Gamma, lambda: crba_ground(robot, q, bk))


def structure_constants(robot):
    """[(c, k, m, sigma)]: Phi_k x Phi_c = sigma Phi_m for the columns c < k of one joint with
    several velocities (free-flyer, spherical, planar; all fixed in its child frame), those with
    a non-zero product; c, k, m body indices."""
    out = []
    for joint in robot.joint_models:
        if joint.nv == 1:
            continue
        ids = range(joint.first, joint.last + 1)
        for c in ids:
            for k in ids:
                if k <= c:
                    continue
                x = crm(np.asarray(robot.S[k])) @ np.asarray(robot.S[c])
                for m in ids:
                    if np.any(x) and abs(abs(x @ robot.S[m]) - 1.0) < 1e-12:
                        out.append((c, k, m, float(x @ robot.S[m])))
    return out


def torsion(robot, Gamma, mass_matrix):
    """Gamma plus the free-flyer's torsion term (module docstring); ``mass_matrix()`` gives M
    (called only for a floating base)."""
    constants = structure_constants(robot)
    if not constants:
        return Gamma
    M = mass_matrix()
    for c, k, m, sigma in constants:
        Gamma[:, c, k] = Gamma[:, c, k] + M[:, m] * sigma
        if armature(robot, m):                      # the rigid bodies' M: a rotor's inertia has no torsion
            Gamma[m, c, k] = Gamma[m, c, k] - armature(robot, m) * sigma
    return Gamma
