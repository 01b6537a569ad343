"""The Slotine-Li torque tau = M(q) qdd_r + C(q, qd) qd_r + g(q) in O(N), never forming M or C:
Algorithm 3 of Wensing & Slotine ("Coriolis Factorizations and their Connections to Riemannian
Geometry", Appendix B-A), for single-DoF joints with axes fixed in their body (Phi-ring = 0).

    a_0 = -a_g                                                       line 1
    for i = 1..N:
        v_i  = iXp v_p(i) + Phi_i qd_i           true velocity        line 3
        w_i  = iXp w_p(i) + Phi_i qd_r,i         reference velocity   line 4
        Phid_i = (v_i x) Phi_i                                        line 5
        a_i  = iXp a_p(i) + Phid_i qd_r,i + Phi_i qdd_r,i             line 6
        f_i  = I_i a_i + B(v_i, I_i) w_i         eq. (10)'s B          line 8
    for i = N..1:
        tau_i = Phi_i^T f_i;   f_p(i) += iXp^T f_i                    lines 12-13

With B of eq. (10) the C in tau is the Christoffel-consistent one of Algorithm 1 (Niemeyer and
Slotine). A free-flyer's columns turn with the whole base velocity (line 5 with v_base for v_i,
:func:`~symgen.kinematics.rate_velocity`). In ground coordinates (the paper's footnote 2, what the generated code runs) the
transforms are identities, Phid_i = v_i x Phi_i, and B is kept as Bs + (p x*) with
Bs = 1/2 [(v x*) I - I (v x)] and p = 1/2 I v, as in Algorithm 1's ground form.
"""
from __future__ import annotations

from ..kinematics import base_acceleration, body_frames, body_inertia, ground_frames, plus_armature, rate_velocity
from ..model import GRAVITY
from ..spatial import cross_force, cross_motion, crm, factor_B, inertia_rate, inertia_times


def reference_sweep(robot, q, qd, qd_r, qdd_r, bk, gravity=GRAVITY, carry=None):
    """Lines 1-6 in body frames: (Xup, Phi, v, w, a) per body — shared with the regressor.
    ``carry(Xup, i, m, name)``: iX_p(i) m for a motion m of i's parent (default the product with
    Xup[i]; the regressor's local walk passes :func:`~symgen.algorithms.regressor.carry_motion`)."""
    n, parent = robot.n, robot.parent
    move = carry or (lambda X, i, m, name: X[i] @ m)
    Xup, Phi = body_frames(robot, q, bk)
    a0 = base_acceleration(robot, q, gravity, bk)                       # line 1
    v, w, a = [None] * n, [None] * n, [None] * n
    for i in range(n):
        p = parent[i]
        v[i] = bk.bind(Phi[i] * qd[i] + (move(Xup, i, v[p], f"vt{i}") if p >= 0 else 0), f"v{i}", i)     # line 3
        w[i] = bk.bind(Phi[i] * qd_r[i] + (move(Xup, i, w[p], f"wt{i}") if p >= 0 else 0), f"w{i}", i)   # line 4
        Phid = crm(rate_velocity(robot, v, Phi, qd, i, bk), bk) @ Phi[i]  # line 5
        a[i] = bk.bind(move(Xup, i, a[p] if p >= 0 else a0, f"at{i}") + Phid * qd_r[i] + Phi[i] * qdd_r[i],
                       f"a{i}", i)                                      # line 6
    return Xup, Phi, v, w, a


def slotine_li(robot, q, qd, qd_r, qdd_r, bk, gravity=GRAVITY):
    """M qdd_r + C(q, qd) qd_r + g in body frames (the paper's pseudo-code)."""
    n, parent = robot.n, robot.parent
    Xup, Phi, v, w, a = reference_sweep(robot, q, qd, qd_r, qdd_r, bk, gravity)
    f = [None] * n
    for i in range(n):
        I = body_inertia(robot, i, bk)
        f[i] = bk.bind(I @ a[i] + factor_B(v[i], I, bk) @ w[i], f"f{i}", i)                  # line 8
    tau = bk.zeros(n)
    for i in reversed(range(n)):
        tau[i] = plus_armature(robot, i, Phi[i] @ f[i], qdd_r[i])       # line 12 (+ armature_i qdd_r_i)
        p = parent[i]
        if p >= 0:
            f[p] = bk.bind(f[p] + Xup[i].T @ f[i], f"f{p}", p)           # line 13
    return tau


def slotine_li_ground(robot, q, qd, qd_r, qdd_r, bk, gravity=GRAVITY):
    """The same lines in ground coordinates."""
    n, parent = robot.n, robot.parent
    Phi, I = ground_frames(robot, q, bk)
    a0 = base_acceleration(robot, q, gravity, bk)                       # line 1
    v, w, a, f = [None] * n, [None] * n, [None] * n, [None] * n
    for i in range(n):
        p = parent[i]
        v[i] = bk.bind(Phi[i] * qd[i] + (v[p] if p >= 0 else 0), f"v{i}", i)        # line 3
        w[i] = bk.bind(Phi[i] * qd_r[i] + (w[p] if p >= 0 else 0), f"w{i}", i)      # line 4
        Phid = bk.bind(cross_motion(rate_velocity(robot, v, Phi, qd, i, bk), Phi[i], bk), f"Phid{i}", i)  # 5
        a[i] = bk.bind((a[p] if p >= 0 else a0) + Phid * qd_r[i] + Phi[i] * qdd_r[i], f"a{i}", i)  # line 6
        Bs = bk.bind(inertia_rate(v[i], I[i], bk) * bk.half, f"Bs{i}", i)            # line 8, eq. (10):
        pm = bk.bind(inertia_times(I[i], v[i], bk) * bk.half, f"pm{i}", i)           # B = Bs + (p x*)
        f[i] = bk.bind(inertia_times(I[i], a[i], bk) + inertia_times(Bs, w[i], bk) + cross_force(w[i], pm, bk),
                       f"f{i}", i)
    tau = bk.zeros(n)
    for i in reversed(range(n)):
        tau[i] = plus_armature(robot, i, Phi[i] @ f[i], qdd_r[i])       # line 12 (+ armature_i qdd_r_i)
        p = parent[i]
        if p >= 0:
            f[p] = bk.bind(f[p] + f[i], f"f{p}", p)                      # line 13
    return tau
