"""Cluster CRBA: the reduced mass matrix M̄ = GᵀMG of a tree under a constant embedding
q_full = G q + o (geared rotors, belts, mimic joints), one force carried up per column of G.

Wensing & Slotine (seed 002) Sec. VI-C, and GRBDA's cluster CRBA: a rotor turning N times its
joint moves with that joint's speed, so instead of carrying the rotor's column of the spanning
tree's CRBA to the root on its own and summing it into its joint's column by G at the end, its
force N F_r is added to the joint's where their paths meet, and one force goes on up. In general,
with g_i the row of G of body i (its coefficients in the reduced columns) and F_i = IC_i Phi_i
(Algorithm 1, line 10; IC_i the composite inertia of i's subtree, line 24):

    M = sum over pairs i ⪯ b (i on b's path to the root) of M_ib (e_i e_bᵀ + e_b e_iᵀ) - sum_i M_ii e_i e_iᵀ,
    M_ib = Phi_iᵀ (F_b carried up to i)    (lines 15-21)

so, for reduced columns r and s,

    M̄_rs = sum_{i ∈ r} g_ir V_is + sum_{i ∈ s} g_is V_ir + sum_i g_ir g_is M_ii,
    V_is = Phi_iᵀ (sum of g_bs F_b over the bodies b of column s strictly below i, carried to i),
    M_ii = Phi_iᵀ F_i (+ the armature, line 13),

where "i ∈ s" are the bodies whose coefficient in column s is not zero. The strict force of
column s is the one carried: leaves first, each body of column s adds g_bs F_b to the force
arriving from its children, and the sum moves to the parent (line 17) — one pass per reduced
column (24 on the MIT Humanoid) instead of one per spanning body (42), and no projection sums.
The composites (line 24) are the spanning tree's, as before. An axisymmetric rotor (its joint
rotation the identity in an inertial view, :mod:`symgen.axisymmetric`) has a constant F_r and a
constant transform, so its N F_r arrives at its parent as a constant.

Three versions, side by side, as :mod:`.crba`:

    cluster_crba         body frames (:func:`~symgen.kinematics.body_frames`): line 17 is
                         Xupᵀ F
    cluster_crba_ground  ground coordinates (:func:`~symgen.kinematics.ground_frames`): the
                         forces of a column are summed, never moved
    cluster_crba_local   body frames turned so that each joint axis is z, 10-number inertias
                         (Pinocchio's local convention, :func:`~symgen.kinematics.local_frames`);
                         a root joint with several velocities (GRBDA's URDF ``floating`` root
                         joint) is seen as a floating base's free-flyer (:func:`root_as_base`)

``columns``: per reduced velocity, its nonzero entries of G as (full velocity = body index,
coefficient) (:meth:`symgen.mimic.Embedding.columns`); ``robot`` the full model, ``q`` its
configuration q_full.
"""
from __future__ import annotations

import numpy as np

from ..kinematics import inertia_apply, local_frames_pay, plus_armature
from .crba import composites, composites_ground, composites_local


def _times(g, x):
    """g x, a coefficient 1 (a joint's own column) without a product."""
    return x if g == 1.0 else g * x


def _columns(robot, columns, Phi, F, carry, bk):
    """M̄ from each body's F_i = IC_i Phi_i (6-vectors, as Phi_i) and ``carry(i, f, s)``, a force
    of column s at body i moved to its parent's coordinates (the identity in ground coordinates)."""
    n, parent, m = robot.n, robot.parent, len(columns)
    coeff = [dict(col) for col in columns]
    diag = {i: plus_armature(robot, i, Phi[i] @ F[i]) for c in coeff for i in c}    # M_ii (line 13)
    V = [{} for _ in range(m)]                                  # V[s][i], i on column s's paths
    for s in range(m):
        arriving = {}                                           # body -> strict force of column s
        for i in reversed(range(n)):                            # leaves first
            below, own = arriving.pop(i, None), coeff[s].get(i)
            if below is None and own is None:
                continue
            if below is not None:
                V[s][i] = Phi[i] @ below                        # line 21
            if own is None:                                     # the force leaving i, line 10 + 17
                f = below
            else:
                f = _times(own, F[i]) if below is None else bk.bind(_times(own, F[i]) + below, f"Fc{s}_{i}", i)
            p = parent[i]
            if p >= 0:                                          # line 17
                up = carry(i, f, s)
                arriving[p] = up if p not in arriving else bk.bind(arriving[p] + up, f"Fs{s}_{p}", p)
    M = bk.zeros((m, m))
    for r in range(m):
        for s in range(r, m):
            terms = [_times(g, V[s][i]) for i, g in coeff[r].items() if i in V[s]]
            if s != r:
                terms += [_times(g, V[r][i]) for i, g in coeff[s].items() if i in V[r]]
                terms += [_times(g * coeff[s][i], diag[i]) for i, g in coeff[r].items() if i in coeff[s]]
            else:
                terms = [2 * t for t in terms] + [_times(g * g, diag[i]) for i, g in coeff[r].items()]
            total = terms[0] if terms else bk.number(0.0)
            for t in terms[1:]:
                total = total + t
            M[r, s] = M[s, r] = total
    return M


def cluster_crba(robot, q, columns, bk):
    """Return M̄ = GᵀM(q)G, computed in body frames."""
    n = robot.n
    Xup, Phi, IC = composites(robot, q, bk)                             # lines 5 and 24
    used = {i for col in columns for i, _ in col}
    F = [bk.bind(IC[i] @ Phi[i], f"F{i}", i) if i in used else None for i in range(n)]    # line 10
    return _columns(robot, columns, Phi, F, lambda i, f, s: bk.bind(Xup[i].T @ f, f"Fc{s}_{i}u", i), bk)


def cluster_crba_ground(robot, q, columns, bk):
    """Return M̄ = GᵀM(q)G, computed in ground coordinates."""
    n = robot.n
    Phi, IC = composites_ground(robot, q, bk)                           # lines 5 and 24
    used = {i for col in columns for i, _ in col}
    F = [bk.bind(IC[i] @ Phi[i], f"F{i}", i) if i in used else None for i in range(n)]    # line 10
    return _columns(robot, columns, Phi, F, lambda i, f, s: f, bk)


def root_as_base(robot):
    """``robot`` for M, Ṁ and C in the local convention: a root joint with several velocities (a
    URDF ``floating`` root joint, read as a joint model, not as ``floating_base``) moves the whole
    tree rigidly, and its velocities are fixed in its child frame (Pinocchio's body twist), so M
    and C do not depend on its configuration; its bodies are then the base frame's, as a floating
    base's free-flyer bodies are (:class:`~symgen.kinematics.LocalFrame` does not turn them, and
    Algorithm 1 turns their columns with the base's whole velocity). Not for gravity (the RNEA needs
    the root's orientation). A robot without such a joint is returned as it is."""
    return robot.as_root_base()


def local_pays(robot) -> bool:
    """Whether the local convention can win for M of ``robot`` (:func:`local_frames_pay` of
    :func:`root_as_base`)."""
    return local_frames_pay(root_as_base(robot))


def cluster_crba_local(robot, q, columns, bk):
    """Return M̄ = GᵀM(q)G, computed in turned body frames with 10-number inertias."""
    robot = root_as_base(robot)
    n = robot.n
    L, m, h, I = composites_local(robot, q, bk)                         # lines 5 and 24
    used = {i for col in columns for i, _ in col}
    Phi = [bk.const(np.concatenate(L[i].S)) for i in range(n)]         # [angular; linear], turned
    F = [None] * n
    for i in used:                                                      # line 10: IC_i Phi_i
        F[i] = bk.bind(np.concatenate(inertia_apply(m[i], h[i], I[i], *L[i].S, bk)), f"F{i}", i)

    def carry(i, f, s):                                                 # line 17: moment, force
        nf, ff = L[i].force_up(f[:3], f[3:], f"Fc{s}_{i}u", i)
        return np.concatenate((nf, ff)).view(type(f))

    return _columns(robot, columns, Phi, F, carry, bk)
