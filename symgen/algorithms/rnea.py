"""Recursive Newton-Euler algorithm: tau = M(q) qdd + C(q, qd) qd + g(q).

Featherstone, Rigid Body Dynamics Algorithms, Table 5.1, in body frames, with gravity as a
fictitious base acceleration a_0 = -a_grav. With qdd = 0 and no gravity it returns C(q, qd) qd,
the paper's first check of Algorithm 1 (Section 5). A free-flyer's six bodies add no velocity
product: their columns turn with the base, so sum_k (v_base x Phi_k) qd_k = v_base x v_base = 0.
"""
from __future__ import annotations

from ..kinematics import body_frames, body_inertia, plus_armature, root_gravity
from ..model import GRAVITY
from ..spatial import crf, crm


def rnea(robot, q, qd, qdd, bk, gravity=GRAVITY):
    """Joint forces tau. ``gravity`` is the linear gravity acceleration in root coordinates."""
    n = robot.n
    Xup, Phi = body_frames(robot, q, bk)
    a_grav = bk.zeros(6)
    a_grav[3:] = root_gravity(robot, q, gravity, bk)
    v, a, f = [None] * n, [None] * n, [None] * n
    for i in range(n):                                   # forward pass: v_i, a_i, f_i
        p = robot.parent[i]
        vJ = Phi[i] * qd[i]
        if p < 0:
            v[i] = vJ
            a[i] = Xup[i] @ (-a_grav) + Phi[i] * qdd[i]
        else:
            v[i] = Xup[i] @ v[p] + vJ
            a[i] = Xup[i] @ a[p] + Phi[i] * qdd[i] + (0 if robot.is_free(i) else crm(v[i], bk) @ vJ)
        v[i] = bk.bind(v[i], f"v{i}", i)
        a[i] = bk.bind(a[i], f"a{i}", i)
        I = body_inertia(robot, i, bk)
        f[i] = bk.bind(I @ a[i] + crf(v[i], bk) @ bk.bind(I @ v[i], f"h{i}", i), f"f{i}", i)
    tau = bk.zeros(n)
    for i in reversed(range(n)):                         # backward pass: tau_i = Phi_i^T f_i
        tau[i] = plus_armature(robot, i, Phi[i] @ f[i], qdd[i])       # + armature_i qdd_i
        p = robot.parent[i]
        if p >= 0:
            f[p] = bk.bind(f[p] + Xup[i].T @ f[i], f"f{p}", p)
    return tau
