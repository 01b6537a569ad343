"""The articulated-body algorithm: qdd = FD(q, qd, tau) in O(N), never forming M (Featherstone,
Rigid Body Dynamics Algorithms, Table 7.1), and M(q)^-1 by its rewriting without the affine terms
(Carpentier & Mansard, "Analytical derivatives of rigid body dynamics algorithms", Sec. IV-C, the
"M^-1 dedicated algorithm"; Pinocchio's ``computeMinverse``).

    aba            Table 7.1 in body frames, as printed (6x6 transforms X^T IA X down the tree)
    aba_ground     Table 7.1 in ground coordinates, as Pinocchio's ``aba`` runs it: every
                   inertia, force and motion about the base origin, so the backward pass adds
                   articulated inertias without transforming them
    minverse_ground  the three passes of computeMinverse in ground coordinates: M^-1's upper
                   triangle, mirrored
    minverse_dense   the same passes over the identity's columns in vectorized column loops,
                   each pass looking one body ahead (a column's chain is one multiply-add a body)

A free-flyer is its six single-DoF bodies in the base frame (:mod:`symgen.kinematics`): they add
no velocity product (c = 0), the base frame being the reference. Single-DoF joints: D_i = Phi_i^T U_i is a scalar and 1/D_i is the one division per body (the
L^T D L route has the same n divisions: the pivots D_i are the same numbers, see
:mod:`.forward_dynamics`). Joint i's coordinate enters through the kinematics functions
(:func:`~symgen.kinematics.body_frames`, :func:`~symgen.kinematics.ground_frames`); qd and tau are
indexed per velocity.

Names, Featherstone's (the paper's where it has one): v, c (= Phid qd, the velocity-product
acceleration), IA (articulated inertia), pA (articulated bias force), U = IA Phi, D = Phi^T U,
Dinv = 1/D, u = tau - Phi^T pA, Ia / pa (what body i passes to its parent), a (acceleration).
"""
from __future__ import annotations

from ..kinematics import base_acceleration, body_frames, body_inertia, ground_frames, plus_armature, rate_velocity
from ..model import GRAVITY
from ..spatial import congruence, crf, crm, cross_force, cross_motion, inertia_times


def _reduced(IA, U, UD, bk, name, body):
    """Ia = IA - U U^T / D (symmetric: the upper triangle, mirrored, so each entry is named once)."""
    Ia = bk.zeros((6, 6))
    for r in range(6):
        for c in range(r, 6):
            Ia[r, c] = Ia[c, r] = IA[r, c] - U[r] * UD[c]
    return bk.bind(Ia, name, body)


def aba(robot, q, qd, tau, bk, gravity=GRAVITY):
    """qdd with M(q) qdd + C(q, qd) qd + g(q) = tau, by Table 7.1 in body frames."""
    n, parent = robot.n, robot.parent
    Xup, Phi = body_frames(robot, q, bk)
    v, c, IA, pA = [None] * n, [None] * n, [None] * n, [None] * n
    for i in range(n):                                   # pass 1, root to leaves
        p = parent[i]
        vJ = Phi[i] * qd[i]                              # vJ = S_i qd_i
        if p < 0 or robot.at_rest_above(i):              # a free-flyer's sum_k (v_base x Phi_k) qd_k = 0
            v[i] = bk.bind(vJ if p < 0 else Xup[i] @ v[p] + vJ, f"v{i}", i)
            c[i] = bk.zeros(6)                           # c_i = v_i x vJ = vJ x vJ = 0
        else:
            v[i] = bk.bind(Xup[i] @ v[p] + vJ, f"v{i}", i)            # v_i = iXp v_p + vJ
            w = rate_velocity(robot, v, Phi, qd, i, bk)               # v_i, or the joint's child velocity
            c[i] = bk.bind(crm(w, bk) @ vJ, f"c{i}", i)               # c_i = cJ + v_i x vJ (cJ = 0)
        I = body_inertia(robot, i, bk)
        IA[i] = I                                                     # IA_i = I_i
        pA[i] = bk.bind(crf(v[i], bk) @ bk.bind(I @ v[i], f"h{i}", i), f"pA{i}", i)   # v_i x* I_i v_i
        bk.tick(i + 1, 3 * n)
    U, Dinv, u = [None] * n, [None] * n, [None] * n
    for i in reversed(range(n)):                         # pass 2, leaves to root
        U[i] = bk.bind(IA[i] @ Phi[i], f"U{i}", i)                    # U_i = IA_i S_i
        Dinv[i] = bk.bind(1 / plus_armature(robot, i, Phi[i] @ U[i]), f"Dinv{i}", i)   # D_i = S_i^T U_i + armature_i
        u[i] = bk.bind(tau[i] - Phi[i] @ pA[i], f"u{i}", i)           # u_i = tau_i - S_i^T pA_i
        p = parent[i]
        if p >= 0:
            UD = bk.bind(U[i] * Dinv[i], f"UD{i}", i)
            Ia = _reduced(IA[i], U[i], UD, bk, f"Ia{i}", i)           # Ia = IA_i - U_i D_i^-1 U_i^T
            pa = bk.bind(pA[i] + Ia @ c[i] + UD * u[i], f"pa{i}", i)  # pa = pA_i + Ia c_i + U_i D_i^-1 u_i
            IA[p] = bk.bind(IA[p] + congruence(Xup[i], Ia, bk, f"IaX{i}", i), f"IA{p}", p)  # += iXp^T Ia iXp
            pA[p] = bk.bind(pA[p] + Xup[i].T @ pa, f"pA{p}", p)      # pA_p += iXp^T pa
        bk.tick(2 * n - i, 3 * n)
    a0 = base_acceleration(robot, q, gravity, bk)
    a, qdd = [None] * n, bk.zeros(n)
    for i in range(n):                                   # pass 3, root to leaves
        p = parent[i]
        ai = bk.bind(Xup[i] @ (a0 if p < 0 else a[p]) + c[i], f"ap{i}", i)   # a'_i = iXp a_p + c_i
        qdd[i] = bk.bind((u[i] - U[i] @ ai) * Dinv[i], f"qdd{i}", i)       # qdd_i = D_i^-1 (u_i - U_i^T a'_i)
        a[i] = bk.bind(ai + Phi[i] * qdd[i], f"a{i}", i)                   # a_i = a'_i + S_i qdd_i
        bk.tick(2 * n + i + 1, 3 * n)
    return qdd


def aba_ground(robot, q, qd, tau, bk, gravity=GRAVITY):
    """qdd by Table 7.1 in ground coordinates (Pinocchio's ``aba``): Phi_i and I_i about the base
    origin (:func:`~symgen.kinematics.ground_frames`), so iXp is the identity, c_i = v_p x vJ
    (Phid_i = v_i x Phi_i in a fixed frame, and vJ x vJ = 0), and the backward pass adds Ia and pa
    to the parent's as they are."""
    n, parent = robot.n, robot.parent
    Phi, I = ground_frames(robot, q, bk, first_moments=True)
    v, c, IA, pA = [None] * n, [None] * n, [None] * n, [None] * n
    for i in range(n):                                   # pass 1, root to leaves
        p = parent[i]
        vJ = bk.bind(Phi[i] * qd[i], f"vJ{i}", i)          # named: v_i and c_i both read it
        if p < 0 or robot.at_rest_above(i):              # a free-flyer's sum_k (v_base x Phi_k) qd_k = 0
            v[i] = bk.bind(vJ if p < 0 else v[p] + vJ, f"v{i}", i)
            c[i] = bk.zeros(6)
        else:
            v[i] = bk.bind(v[p] + vJ, f"v{i}", i)                     # v_i = v_p + S_i qd_i
            w = rate_velocity(robot, v, Phi, qd, i, bk) if robot.in_group(i) else v[p]
            c[i] = bk.bind(cross_motion(w, vJ, bk), f"c{i}", i)       # c_i = v_i x vJ = v_p x vJ
        IA[i] = I[i]                                                  # IA_i = I_i
        pA[i] = bk.bind(cross_force(v[i], bk.bind(inertia_times(I[i], v[i], bk), f"h{i}", i), bk),
                        f"pA{i}", i)                                  # pA_i = v_i x* I_i v_i
        bk.tick(i + 1, 3 * n)
    U, Dinv, u = [None] * n, [None] * n, [None] * n
    for i in reversed(range(n)):                         # pass 2, leaves to root
        U[i] = bk.bind(IA[i] @ Phi[i], f"U{i}", i)                    # U_i = IA_i S_i
        Dinv[i] = bk.bind(1 / plus_armature(robot, i, Phi[i] @ U[i]), f"Dinv{i}", i)   # D_i = S_i^T U_i + armature_i
        u[i] = bk.bind(tau[i] - Phi[i] @ pA[i], f"u{i}", i)           # u_i = tau_i - S_i^T pA_i
        p = parent[i]
        if p >= 0:
            UD = bk.bind(U[i] * Dinv[i], f"UD{i}", i)
            Ia = _reduced(IA[i], U[i], UD, bk, f"Ia{i}", i)           # Ia = IA_i - U_i D_i^-1 U_i^T
            pa = pA[i] + Ia @ c[i] + UD * u[i]                        # pa = pA_i + Ia c_i + U_i D_i^-1 u_i
            IA[p] = bk.bind(IA[p] + Ia, f"IA{p}", p)                  # IA_p += Ia
            pA[p] = bk.bind(pA[p] + pa, f"pA{p}", p)                  # pA_p += pa
        bk.tick(2 * n - i, 3 * n)
    a0 = base_acceleration(robot, q, gravity, bk)
    a, qdd = [None] * n, bk.zeros(n)
    for i in range(n):                                   # pass 3, root to leaves
        p = parent[i]
        ai = bk.bind((a0 if p < 0 else a[p]) + c[i], f"ap{i}", i)     # a'_i = a_p + c_i
        qdd[i] = bk.bind((u[i] - U[i] @ ai) * Dinv[i], f"qdd{i}", i)  # qdd_i = D_i^-1 (u_i - U_i^T a'_i)
        a[i] = bk.bind(ai + Phi[i] * qdd[i], f"a{i}", i)              # a_i = a'_i + S_i qdd_i
        bk.tick(2 * n + i + 1, 3 * n)
    return qdd


def minverse_ground(robot, q, bk):
    """M(q)^-1 by ABA without the affine terms (tau = e_j, qd = 0, no gravity), for all j at once,
    in ground coordinates (Pinocchio's ``computeMinverse``). Column j's articulated bias force at
    body i, F_i[:, j], is nonzero only for j in i's strict subtree; the backward pass gives row i
    on i's subtree, D_i^-1 (e_i - S_i^T F_i); the forward pass subtracts (U_i / D_i)^T A_p, where
    A_p[:, j] is the acceleration of i's parent under tau = e_j, and is done for j >= i only (the
    upper triangle; parents are numbered before children, so A_p's columns j >= i are known)."""
    n, parent = robot.n, robot.parent
    Phi, I = ground_frames(robot, q, bk)
    subtree = [[i] for i in range(n)]                    # i and its descendants, ascending
    for i in reversed(range(n)):
        if parent[i] >= 0:
            subtree[parent[i]] = sorted(subtree[parent[i]] + subtree[i])
    IA = list(I)
    F = [bk.zeros((6, n)) for _ in range(n)]
    Minv = bk.zeros((n, n))
    UD = [None] * n
    for i in reversed(range(n)):                         # pass 2, leaves to root
        U = bk.bind(IA[i] @ Phi[i], f"U{i}", i)                       # U_i = IA_i S_i
        Dinv = bk.bind(1 / plus_armature(robot, i, Phi[i] @ U), f"Dinv{i}", i)   # D_i = S_i^T U_i + armature_i
        Minv[i, i] = Dinv                                             # u_i = 1 - S_i^T F_i[:, i] = 1
        for j in subtree[i][1:]:                                      # D_i^-1 u_i, u_i = -S_i^T F_i
            Minv[i, j] = bk.bind(-(Phi[i] @ F[i][:, j]) * Dinv, f"Minv{i}_{j}", i)
        p = parent[i]
        if p >= 0:
            UD[i] = bk.bind(U * Dinv, f"UD{i}", i)
            IA[p] = bk.bind(IA[p] + _reduced(IA[i], U, UD[i], bk, f"Ia{i}", i), f"IA{p}", p)
            for j in subtree[i]:                                      # F_p += F_i + U_i D_i^-1 u_i
                F[p][:, j] = bk.bind(F[p][:, j] + F[i][:, j] + U * Minv[i, j], f"F{p}_{j}", p)
        bk.tick(n - i, 2 * n)
    A = [None] * n
    for i in range(n):                                   # pass 3, root to leaves
        p = parent[i]
        A[i] = bk.zeros((6, n))
        for j in range(i, n):
            if p >= 0:                                                # Minv_ij -= (U_i / D_i)^T A_p[:, j]
                Minv[i, j] = bk.bind(Minv[i, j] - UD[i] @ A[p][:, j], f"Minv{i}_{j}", i)
            Minv[j, i] = Minv[i, j]
            if j > i:                                                 # A_i[:, j] = A_p[:, j] + S_i Minv_ij
                A[i][:, j] = bk.bind((A[p][:, j] if p >= 0 else 0) + Phi[i] * Minv[i, j], f"A{i}_{j}", i)
        bk.tick(n + i + 1, 2 * n)
    return Minv


#: columns per loop of M^-1's column loops: the identity's columns c in a run of this many have
#: nonzero entries only in the run's rows, and only rows up to the run's last are needed (the
#: upper triangle), so each run gets a body traced for its rows (the 20-DoF chain: 8 columns, one
#: 512-bit vector of doubles or two independent 256-bit ones, 3 loops whose bodies cover rows
#: 0-7, 0-15, 0-19; with the passes looking one body ahead, M^-1 in 1.15 us against 1.21 with 4
#: columns; before the look-ahead each column was a chain of dependent dot products and 4 won:
#: 1.96 us, against 2.14 with 8 columns and 2.48 with 2, and 2.69 with one loop over all)
COLUMN_BLOCK = 8


def _halves(a, b, sub, name):
    """a^T b for 6-vectors as the sum of two named 3-term halves: printed C keeps the order of a
    sum, so a 6-term dot product is a chain of six dependent multiply-adds, two halves a chain of
    three and an add."""
    return sub.bind(a[:3] @ b[:3], f"{name}a") + sub.bind(a[3:] @ b[3:], f"{name}b")


def minverse_dense(robot, q, bk):
    """M(q)^-1 by the passes of :func:`minverse_ground` run column by column: the articulated
    inertias, U_i, 1/D_i and U_i/D_i once (straight-line), then for each column e_j of the
    identity the ABA backward pass with tau = e_j (no velocity, no gravity: the bias forces F_i
    of column j only) and the forward pass, as one column loop (``bk.column_loop``) that the
    compiler vectorizes across columns, one loop per :data:`COLUMN_BLOCK` columns with the
    structural zeros of those columns folded and only the rows of the upper triangle kept, the
    rest mirrored.

    Each pass looks one body ahead, so that a column's chain of dependent operations from one body
    to the next is one multiply-add instead of a 6-term dot product (about 24 cycles of latency
    where the compiler keeps C's order of the sum) and a multiply: the backward pass's
    D_i^-1 (tau_i - S_i^T F_i) is split as D_i^-1 (tau_i - S_i^T E_i) - sum_c (S_i^T U_c / D_i)
    m_c, E_i the children's F_c (known a body earlier), and the forward pass's
    m_i - (U_i / D_i)^T A_p as m_i - (U_i / D_i)^T A_pp - (U_i^T S_p / D_i) x_p, A_pp the
    grandparent's acceleration. The scalars S_i^T U_c / D_i and U_i^T S_p / D_i are formed once
    per body (straight-line, 13 operations for both)."""
    n, parent = robot.n, robot.parent
    Phi, I = ground_frames(robot, q, bk, first_moments=True)
    IA = list(I)
    U, Dinv, UD = [None] * n, [None] * n, [None] * n
    for i in reversed(range(n)):                         # pass 2's inertias, leaves to root
        U[i] = bk.bind(IA[i] @ Phi[i], f"U{i}", i)                    # U_i = IA_i S_i
        Dinv[i] = bk.bind(1 / plus_armature(robot, i, Phi[i] @ U[i]), f"Dinv{i}", i)   # D_i = S_i^T U_i + armature_i
        p = parent[i]
        if p >= 0:
            UD[i] = bk.bind(U[i] * Dinv[i], f"UD{i}", i)
            IA[p] = bk.bind(IA[p] + _reduced(IA[i], U[i], UD[i], bk, f"Ia{i}", i), f"IA{p}", p)
    children = [[c for c in range(n) if parent[c] == i] for i in range(n)]
    w = {(i, c): bk.bind(Phi[i] @ U[c], f"w{i}_{c}", i) for i in range(n) for c in children[i]}   # S_i^T U_c
    WD = {ic: bk.bind(w[ic] * Dinv[ic[0]], f"WD{ic[0]}_{ic[1]}", ic[0]) for ic in w}              # S_i^T U_c / D_i
    L = {(c, i): bk.bind(w[i, c] * Dinv[c], f"L{c}_{i}", c) for i, c in w}                        # U_c^T S_i / D_c

    def column(tau, sub):
        F, m = [None] * n, [None] * n
        for i in reversed(range(n)):                     # pass 2: m_i = D_i^-1 (tau_i - S_i^T F_i)
            E = [F[c] for c in children[i] if F[c] is not None]
            E = sub.bind(sum(E[1:], E[0]), f"E{i}") if E else None     # E_i = sum of the children's F_c
            ahead = sub.bind(Dinv[i] * (tau[i] - (_halves(Phi[i], E, sub, f"e{i}") if E is not None else 0)), f"e{i}")
            m[i] = sub.bind(ahead - sum((WD[i, c] * m[c] for c in children[i]), start=0), f"m{i}")
            terms = ([E] if E is not None else []) + [U[c] * m[c] for c in children[i]]
            if terms and parent[i] >= 0:                 # F_i = E_i + sum_c U_c m_c
                F[i] = sub.bind(sum(terms[1:], terms[0]), f"F{i}")
        A = [None] * n
        for i in range(n):                               # pass 3: x_i = m_i - (U_i / D_i)^T A_p
            p = parent[i]
            if p >= 0:
                pp = parent[p]
                ahead = sub.bind(m[i] - _halves(UD[i], A[pp], sub, f"f{i}"), f"f{i}") if pp >= 0 else m[i]
                m[i] = sub.bind(ahead - L[i, p] * m[p], f"x{i}")
            A[i] = sub.bind((A[p] if p >= 0 else 0) + Phi[i] * m[i], f"A{i}")
        return m

    identity = bk.zeros((n, n))
    for i in range(n):
        identity[i, i] = 1
    return bk.column_loop(column, [identity], "col", symmetric=True, width=COLUMN_BLOCK)[0]
