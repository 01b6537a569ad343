"""Analytical derivatives of inverse and forward dynamics: Carpentier & Mansard (2018), "Analytical
Derivatives of Rigid Body Dynamics Algorithms" (the seed paper 003). Line numbers in comments are
the paper's (Algorithm 1: RNEA; Algorithm 2: the derivatives of its forward pass; Algorithm 3: of
its backward pass; Sec. III-C: the simplifications; Sec. IV: forward dynamics).

Body frames (``frame="body"``, the reference): Algorithms 2 and 3 as printed, carrying the
motion sets dv_i/du, da_i/du and force sets dh_i/du, df_i/du (6 x n) through the tree, with
    d(iXp)/dq_i v_p = (iXp v_p) x S_i           (eq. 13)
    d(pX*i)/dq_i f_i = pX*i (S_i x* f_i)         (eq. 14).

Ground coordinates (``frame="ground"``, what the generated code runs; the paper's Pinocchio
implementation): every quantity in the base frame, from :func:`~symgen.kinematics.ground_frames`.
A local-frame derivative column of body k with respect to q_j, seen in ground coordinates, is the
same for every body k in the subtree of j, so the motion sets collapse to one 6-vector per joint:
    dV/dq_j = v_p(j) x Phi_j = Phid_j               (v_j x Phi_j = v_p(j) x Phi_j)
    dA/dq_j = a_p(j) x Phi_j + v_p(j) x dV/dq_j     (a_0 = -a_g: gravity enters here)
    dA/dv_j = Phid_j + dV/dq_j = 2 Phid_j
and the composite inertias IC_i with their rates dIC_i = sum over the subtree of
(v_k x*) I_k - I_k (v_k x) + (I_k v_k) x*, which is 2 B(v_k, I_k) of Echeandia & Wensing's eq. (10)
(Algorithm 1's BC, doubled). Then, for j an ancestor of i (j <= i),
    dtau_j/dq_i = Phi_j . (dIC_i dV/dq_i + IC_i dA/dq_i + [j != i] Phi_i x* F_i)
    dtau_i/dq_j = (IC_i Phi_i) . dA/dq_j + (dIC_i^T Phi_i) . dV/dq_j          (j != i)
    dtau_j/dv_i = Phi_j . (dIC_i Phi_i + IC_i dA/dv_i)
    dtau_i/dv_j = (IC_i Phi_i) . dA/dv_j + (dIC_i^T Phi_i) . Phi_j            (j != i)
with F_i the composite force of RNEA's backward pass (line 17) — O(N d) dot products. dIC is kept
in two parts, as in Algorithm 1's ground form: the inertia-form rate (9 numbers) and the composite
momentum H (dIC = rate + (H x*)), so dIC x = rate x + (x x*) H and dIC^T x = rate x - (x x*) H.

For single-DoF joints on a fixed base the Christoffel symbols are symmetric in their last two
indices, so dtau/dv = d(C v)/dv = 2 C(q, v) (Echeandia & Wensing's eq. 3; Algorithm 1), and
dM_ij/dq_k = Gamma_ijk + Gamma_jik (their eq. 4): both are checked in tests/test_derivatives.py.

A free-flyer (Pinocchio's, derivatives in the tangent space: the base moved in its own frame).
The algorithms run in the base frame, where moving the base only turns gravity: its columns have
dV/dq_k = 0 and dA/dq_k = a_0 x Phi_k (a root joint's), and no Phi_k x* F_k term (the six columns
turn with the base, not with each other). Their rate is v_base x Phi_k (Algorithm 1's) and adds no
velocity product to the base acceleration, so dA/dv_k = Phid_k, once: the base acceleration does
not depend on v, the bodies below gain Phi_k x (v_i - v_base).

Forward dynamics (Sec. IV-B, eq. 24): dqdd/du = -M^-1 dtau/du at qdd = FD(q, v, tau), each
column solved with the tree-sparse L^T D L factors of M (:mod:`.forward_dynamics`), never M^-1;
with passive forces (``--passive``) tau + tau_p(q, v) is solved and dtau/du gains diag(stiffness)
and diag(damping) (:mod:`.passive`).

Measured (ops of the straight-line code; panda / 20-DoF serial chain): ground 7245 / 28940 for
(dtau/dq, dtau/dqd), against 9005 / 34589 with dtau/dqd = 2 C from Algorithm 1 and 16207 / 190031
in body frames; FD derivatives in one ground sweep 11738 / 70146, against 12622 / 78675 composing
forward_dynamics with the derivatives, 13227 / 85135 with a dense -M^-1 (mass_matrix_inverse)
times dtau/du, and 21867 / 255410 in body frames.
"""
from __future__ import annotations

from ..kinematics import (base_acceleration, body_frames, body_inertia, ground_frames, plus_armature, rate_velocity,
                          root_gravity)
from ..model import GRAVITY
from ..spatial import cross_force, cross_motion, crf, crm, icrf, inertia_rate, inertia_times
from .crba import crba
from .external_forces import body_forces, ground_forces, minus_force
from .forward_dynamics import ltdl, ltdl_solve, solve_dense
from .passive import add_passive_jacobians, plus_passive
from .rnea import rnea

FRAMES = ("ground", "body")


def inverse_dynamics_derivatives(robot, q, qd, qdd, bk, frame="ground", gravity=GRAVITY, f_ext=None):
    """(dtau/dq, dtau/dqd), each (n, n), at (q, qd, qdd); dtau/dqdd is M (CRBA). ``f_ext``:
    external forces on the bodies (:mod:`.external_forces`)."""
    _check_frame(frame)
    # the body-frame sets of Algorithms 2-3 as printed know single-DoF joints and the root
    # free-flyer only: a joint with several velocities inside the tree takes the ground form
    body = frame == "body" and not robot.has_inner_groups
    run = rnea_derivatives_body if body else rnea_derivatives_ground
    return run(robot, q, qd, qdd, bk, gravity, f_ext)


def forward_dynamics_derivatives(robot, q, qd, tau, bk, frame="ground", gravity=GRAVITY, dense=False,
                                 passive=False, f_ext=None):
    """(dqdd/dq, dqdd/dqd), each (n, n), at (q, qd, tau): eq. (24), -M^-1 dtau/du at qdd = FD.
    ``dense`` (ground coordinates): the 2n solves as one column loop (:func:`solve_dense`).
    ``passive``: FD with the passive forces, qdd = FD(q, qd, tau + tau_p(q, qd)), whose derivatives
    solve dtau/du minus tau_p's (:mod:`.passive`)."""
    n, parent = robot.n, robot.parent
    tau = plus_passive(robot, q, qd, tau, bk, passive)
    if _check_frame(frame) == "ground" or robot.has_inner_groups:       # (see above)
        return _fd_derivatives_ground(robot, q, qd, tau, bk, gravity, dense, passive, f_ext)
    M = crba(robot, q, bk)
    bias = rnea(robot, q, qd, bk.zeros(n), bk, gravity=gravity, f_ext=f_ext)  # C qd + g - tau_ext
    L, Dinv = ltdl(M, parent, bk)
    qdd = ltdl_solve(L, Dinv, parent, tau - bias, bk)                   # eq. (20)
    dtau_dq, dtau_dqd = add_passive_jacobians(robot, *inverse_dynamics_derivatives(robot, q, qd, qdd, bk, frame,
                                                                                  gravity, f_ext), passive)
    return (solve_columns(L, Dinv, parent, -dtau_dq, bk, "dtau_dq"),
            solve_columns(L, Dinv, parent, -dtau_dqd, bk, "dtau_dqd"))


def _check_frame(frame):
    if frame not in FRAMES:
        raise ValueError(f"frame must be one of {FRAMES}, got {frame!r}")
    return frame


def solve_columns(L, Dinv, parent, B, bk, name):
    """M^-1 B, one column at a time through the factors (Featherstone, Table 6.4). B is named
    first: the solve reads an entry once per ancestor."""
    B = bk.bind(B, name)
    X = bk.zeros(B.shape)
    for c in range(B.shape[1]):
        X[:, c] = ltdl_solve(L, Dinv, parent, B[:, c], bk)
    return X


# ------------------------------------------------------------------------- ground coordinates

def rnea_derivatives_ground(robot, q, qd, qdd, bk, gravity=GRAVITY, f_ext=None):
    """Algorithms 2-3 in ground coordinates (Pinocchio's computeRNEADerivatives)."""
    Phi, I, R, p = ground_frames(robot, q, bk, placements=True)
    a0 = base_acceleration(robot, q, gravity, bk)
    v, Phid, a, h, f = forward_pass(robot, Phi, I, qd, qdd, bk, a0, ground_forces(robot, R, p, f_ext, bk))
    IC = composites(robot, I, bk, "IC")
    return derivative_passes(robot, Phi, I, IC, qd, v, Phid, a, h, f, bk, a0)


def _fd_derivatives_ground(robot, q, qd, tau, bk, gravity, dense=False, passive=False, f_ext=None):
    """Eq. (24) in one sweep: RNEA's forward pass at qdd = 0 gives the bias (C qd + g, from the
    composite forces) and the composite inertias give M, the sweep's own IC_i Phi_i; after the
    solve, the accelerations gain alpha_i = alpha_p + Phi_i qdd_i and the forces I_i alpha_i."""
    n, parent = robot.n, robot.parent
    Phi, I, R, p = ground_frames(robot, q, bk, placements=True)
    a0 = base_acceleration(robot, q, gravity, bk)
    v, Phid, a, h, f = forward_pass(robot, Phi, I, qd, bk.zeros(n), bk, a0, ground_forces(robot, R, p, f_ext, bk))
    IC = composites(robot, I, bk, "IC")
    F0 = composites(robot, f, bk, "f")
    M, bias = bk.zeros((n, n)), bk.zeros(n)
    for i in range(n):
        F2 = bk.bind(inertia_times(IC[i], Phi[i], bk), f"F2_{i}", i)         # CRBA: M = dtau/dqdd
        for j in robot.ancestors(i):
            M[i, j] = M[j, i] = plus_armature(robot, i, Phi[j] @ F2) if j == i else Phi[j] @ F2
        bias[i] = Phi[i] @ F0[i]                                        # Alg. 1 line 15, qdd = 0
    L, Dinv = ltdl(M, parent, bk)
    qdd = ltdl_solve(L, Dinv, parent, tau - bias, bk)                   # eq. (20)
    alpha = [None] * n
    for i in range(n):
        p = parent[i]
        alpha[i] = bk.bind(Phi[i] * qdd[i] + (alpha[p] if p >= 0 else 0), f"alpha{i}", i)
        a[i] = bk.bind(a[i] + alpha[i], f"a{i}", i)
        f[i] = bk.bind(f[i] + inertia_times(I[i], alpha[i], bk), f"f{i}", i)
    dtau_dq, dtau_dqd = add_passive_jacobians(robot, *derivative_passes(robot, Phi, I, IC, qd, v, Phid, a, h, f, bk,
                                                                        a0), passive)
    if dense:
        return tuple(solve_dense(L, Dinv, parent, [-dtau_dq, -dtau_dqd], bk, "col"))
    return (solve_columns(L, Dinv, parent, -dtau_dq, bk, "dtau_dq"),
            solve_columns(L, Dinv, parent, -dtau_dqd, bk, "dtau_dqd"))


def forward_pass(robot, Phi, I, qd, qdd, bk, a0, fe=None):
    """Algorithm 1, lines 1-12, in ground coordinates: (v, Phid, a, h, f) per body (minus the
    external forces ``fe`` in ground coordinates, :func:`~.external_forces.ground_forces`), with
    Phid_i = v_i x Phi_i = v_p x Phi_i (the joint's own rate does not turn its axis; the columns
    of a joint with several velocities turn with its whole child velocity, and the root
    free-flyer's add no velocity product)."""
    n, parent = robot.n, robot.parent
    v, Phid, a, h, f = ([None] * n for _ in range(5))
    for i in range(n):                                                  # line 5
        p = parent[i]
        vp, ap = (v[p], a[p]) if p >= 0 else (bk.zeros(6), a0)
        v[i] = bk.bind(vp + Phi[i] * qd[i], f"v{i}", i)                    # line 8
        free = robot.is_free(i)
        turn = rate_velocity(robot, v, Phi, qd, i, bk) if robot.in_group(i) else vp
        Phid[i] = bk.bind(cross_motion(turn, Phi[i], bk), f"Phid{i}", i)
        a[i] = bk.bind(ap + Phi[i] * qdd[i] + (0 if free else Phid[i] * qd[i]), f"a{i}", i)  # line 9
        h[i] = bk.bind(inertia_times(I[i], v[i], bk), f"h{i}", i)          # line 10
        f[i] = bk.bind(minus_force(inertia_times(I[i], a[i], bk) + cross_force(v[i], h[i], bk),  # line 11
                                   None if fe is None else fe[i]), f"f{i}", i)
    return v, Phid, a, h, f


def composites(robot, X, bk, name):
    """Sums over each body's subtree (leaves first) of per-body quantities X (line 17's f_p += f_i,
    without a transform in ground coordinates)."""
    X = list(X)
    for i in reversed(range(robot.n)):
        p = robot.parent[i]
        if p >= 0:
            X[p] = bk.bind(X[p] + X[i], f"{name}{p}", p)
    return X


def derivative_passes(robot, Phi, I, IC, qd, v, Phid, a, h, f, bk, a0):
    """Algorithm 2 (forward) and 3 (backward) from the quantities of RNEA's forward pass and the
    composite inertias IC; the module docstring gives the collapsed columns and entries."""
    n, parent = robot.n, robot.parent
    dVdq, dAdq, dI = [None] * n, [None] * n, [None] * n
    twice = [1 if robot.is_free(i) else 2 for i in range(n)]           # dA/dv_i = twice_i Phid_i
    for i in range(n):                                                  # Algorithm 2
        p = parent[i]
        dI[i] = bk.bind(inertia_rate(v[i], I[i], bk), f"dI{i}", i)          # lines 4 and 6
        if robot.is_free(i):                                            # the base turns gravity only
            dVdq[i] = bk.zeros(6)
            dAdq[i] = bk.bind(cross_motion(a0, Phi[i], bk), f"dAdq{i}", i)
            continue
        ap = a[p] if p >= 0 else a0
        if robot.in_group(i):                   # moved at the joint's child frame: the joint's parent
            P = parent[robot.joint_of[i].first]
            vP, aP = (v[P], a[P]) if P >= 0 else (bk.zeros(6), a0)
            dVdq[i] = bk.bind(cross_motion(vP, Phi[i], bk), f"dVdq{i}", i)
            dAdq[i] = bk.bind(cross_motion(aP, Phi[i], bk) + cross_motion(vP, dVdq[i], bk), f"dAdq{i}", i)
            continue
        # line 3 with eq. (13): d(iXp)/dq_i v_p = (iXp v_p) x S_i, in ground coordinates
        dVdq[i] = Phid[i]
        # line 5: d(iXp)/dq_i a_p = (iXp a_p) x S_i, plus iXp da_p/dq_i x vJ terms, collapsed
        dAdq[i] = bk.bind(cross_motion(ap, Phi[i], bk)
                          + (cross_motion(v[p], dVdq[i], bk) if p >= 0 else 0), f"dAdq{i}", i)
    # dA/dv_i: twice_i Phid_i = dV/dq_i + Phid_i (a joint with several velocities inside the tree:
    # (v_P + v_child) x Phi_i, v_P its parent's velocity, v_child its whole child velocity)
    dAdv = [bk.bind(dVdq[i] + Phid[i], f"dAdv{i}", i) if robot.in_group(i) and not robot.is_free(i)
            else Phid[i] * twice[i] for i in range(n)]
    F, dI, H = composites(robot, f, bk, "f"), composites(robot, dI, bk, "dI"), composites(robot, h, bk, "h")
    dtau_dq, dtau_dqd = bk.zeros((n, n)), bk.zeros((n, n))
    for i in reversed(range(n)):                                        # Algorithm 3
        F2 = bk.bind(inertia_times(IC[i], Phi[i], bk), f"F2_{i}", i)         # IC_i Phi_i (= dtau/dqdd)
        E = bk.bind(inertia_times(dI[i], Phi[i], bk), f"E{i}", i)
        Q = bk.bind(cross_force(Phi[i], H[i], bk), f"Q{i}", i)
        F3 = bk.bind(E - Q, f"F3_{i}", i)                                  # dIC_i^T Phi_i
        # Alg. 2 line 6 summed over the subtree, then Alg. 3 line 1 for joint i and its ancestors
        dFdq = bk.bind(inertia_times(dI[i], dVdq[i], bk) + cross_force(dVdq[i], H[i], bk)
                       + inertia_times(IC[i], dAdq[i], bk), f"dFdq{i}", i)
        dFdv = bk.bind(E + Q + inertia_times(IC[i], dAdv[i], bk), f"dFdv{i}", i)
        dtau_dq[i, i] = Phi[i] @ dFdq
        dtau_dqd[i, i] = Phi[i] @ dFdv
        up = robot.ancestors(i)[1:]
        # the joint's own other columns turn with its child frame: for them eq. (14)'s term cancels
        own = robot.joint_of[i].first if robot.in_group(i) else i
        inner = [j for j in up if j >= own]
        for j in inner:
            dtau_dq[j, i] = Phi[j] @ dFdq
        if len(up) > len(inner) and not robot.is_free(i):                # Alg. 3 line 3, eq. (14)
            dFdq = bk.bind(dFdq + cross_force(Phi[i], F[i], bk), f"dFdq{i}", i)
        for j in up:
            if j < own:
                dtau_dq[j, i] = Phi[j] @ dFdq
            dtau_dqd[j, i] = Phi[j] @ dFdv
            dtau_dq[i, j] = F2 @ dAdq[j] + F3 @ dVdq[j]
            dtau_dqd[i, j] = F2 @ dAdv[j] + F3 @ Phi[j]
        bk.tick(n - i, n)
    return dtau_dq, dtau_dqd


# ------------------------------------------------------------------------------- body frames

def rnea_derivatives_body(robot, q, qd, qdd, bk, gravity=GRAVITY, f_ext=None):
    """Algorithms 1-3 as printed, in body frames, with 6 x n motion and force sets (columns of
    joints that are not ancestors stay exact zeros)."""
    n, parent = robot.n, robot.parent
    Xup, S = body_frames(robot, q, bk)
    a_grav = bk.zeros(6)
    a_grav[3:] = root_gravity(robot, q, gravity, bk)
    fe = body_forces(robot, f_ext, bk)
    f, df_dq, df_dqd = [None] * n, [None] * n, [None] * n
    v, a, dv_dq, dv_dqd, da_dq, da_dqd = ([None] * n for _ in range(6))
    for i in range(n):                                                  # Alg. 1 line 5
        p = parent[i]
        vp, ap = (v[p], a[p]) if p >= 0 else (bk.zeros(6), -a_grav)     # lines 2-3
        dvp_dq, dvp_dqd = (dv_dq[p], dv_dqd[p]) if p >= 0 else (bk.zeros((6, n)), bk.zeros((6, n)))
        dap_dq, dap_dqd = (da_dq[p], da_dqd[p]) if p >= 0 else (bk.zeros((6, n)), bk.zeros((6, n)))
        vJ = S[i] * qd[i]                                               # line 6 (cJ = 0)
        Xv = bk.bind(Xup[i] @ vp, f"Xv{i}", i)
        Xa = bk.bind(Xup[i] @ ap, f"Xa{i}", i)
        v[i] = bk.bind(Xv + vJ, f"v{i}", i)                                # line 8
        free = robot.is_free(i)             # a free-flyer column: no velocity product, turns gravity only
        a[i] = bk.bind(Xa + S[i] * qdd[i] + (0 if free else crm(v[i], bk) @ vJ), f"a{i}", i)  # line 9
        I = body_inertia(robot, i, bk)
        h = bk.bind(I @ v[i], f"h{i}", i)                                  # line 10
        f[i] = bk.bind(minus_force(I @ a[i] + crf(v[i], bk) @ h, fe[i]), f"f{i}", i)  # line 11
        # Algorithm 2 (dS/du = dcJ/du = 0; dvJ/dqd_i = S_i), u = q then u = qd
        dv_dq[i] = Xup[i] @ dvp_dq                                      # line 3
        if not free:
            dv_dq[i][:, i] = dv_dq[i][:, i] + crm(Xv, bk) @ S[i]        # eq. (13)
        dv_dq[i] = bk.bind(dv_dq[i], f"dvdq{i}", i)
        dv_dqd[i] = Xup[i] @ dvp_dqd
        dv_dqd[i][:, i] = dv_dqd[i][:, i] + S[i]
        dv_dqd[i] = bk.bind(dv_dqd[i], f"dvdqd{i}", i)
        da_dq[i] = Xup[i] @ dap_dq - (0 if free else crm(vJ, bk) @ dv_dq[i])  # line 5: dv_i/du x vJ
        da_dq[i][:, i] = da_dq[i][:, i] + crm(-a_grav if free else Xa, bk) @ S[i]  # eq. (13) for a_p
        da_dq[i] = bk.bind(da_dq[i], f"dadq{i}", i)
        da_dqd[i] = Xup[i] @ dap_dqd - (0 if free else crm(vJ, bk) @ dv_dqd[i])
        if not free:
            da_dqd[i][:, i] = da_dqd[i][:, i] + crm(v[i], bk) @ S[i]    # v_i x dvJ/dqd_i
        da_dqd[i] = bk.bind(da_dqd[i], f"dadqd{i}", i)
        for du, dv, da, tag in ((df_dq, dv_dq[i], da_dq[i], "q"), (df_dqd, dv_dqd[i], da_dqd[i], "qd")):
            dh = I @ dv                                                 # line 4
            du[i] = bk.bind(I @ da + icrf(h, bk) @ dv + crf(v[i], bk) @ dh, f"dfd{tag}{i}", i)  # line 6
    dtau_dq, dtau_dqd = bk.zeros((n, n)), bk.zeros((n, n))
    for i in reversed(range(n)):                                        # Alg. 1 line 14
        dtau_dq[i, :] = S[i] @ df_dq[i]                                 # Alg. 3 line 1
        dtau_dqd[i, :] = S[i] @ df_dqd[i]
        p = parent[i]
        if p >= 0:                                                      # Alg. 3 lines 2-3
            XT = Xup[i].T
            f[p] = bk.bind(f[p] + XT @ f[i], f"f{p}", p)                   # Alg. 1 line 17
            df = XT @ df_dq[i]
            if not robot.is_free(i):
                df[:, i] = df[:, i] + XT @ (crf(S[i], bk) @ f[i])       # eq. (14)
            df_dq[p] = bk.bind(df_dq[p] + df, f"dfdq{p}", p)
            df_dqd[p] = bk.bind(df_dqd[p] + XT @ df_dqd[i], f"dfdqd{p}", p)
        bk.tick(n - i, n)
    return dtau_dq, dtau_dqd
