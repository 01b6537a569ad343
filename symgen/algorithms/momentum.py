"""The generalized momentum p = M(q) v and the product C(q, v)^T v in O(N), never forming M or C:
Wensing & Slotine, Appendix B-B1, eq. (38) (after [27]).

Every admissible C (Mdot = C + C^T) gives the same C^T v = Mdot v - C v; with the B of eq. (10),
B^T v = 0, and eq. (25) leaves

    (C^T v)_i = Phid_i^T  sum_{j >= i} jX_i^T I_j v_j                          eq. (38)
          p_i = Phi_i^T   sum_{j >= i} jX_i^T I_j v_j                          (p = M v)

so one sweep gives both: the spatial momenta h_j = I_j v_j of the bodies, summed over each
subtree leaves first (composite momenta hC_i), read through Phi_i for p and through its rate
Phid_i = (v_i x) Phi_i (a free-flyer's columns: v_base x Phi_k) for C^T v. Body frames, as the
other O(N) recursions (RNEA, Slotine-Li).
"""
from __future__ import annotations

from ..kinematics import body_frames, body_inertia, plus_armature, rate_velocity
from ..spatial import crm


def body_velocities(robot, Xup, Phi, qd, bk) -> list:
    """v_i = iXp v_p(i) + Phi_i qd_i (Algorithm 3, line 3), in body frames."""
    v = [None] * robot.n
    for i in range(robot.n):
        p = robot.parent[i]
        v[i] = bk.bind(Phi[i] * qd[i] + (Xup[i] @ v[p] if p >= 0 else 0), f"v{i}", i)
    return v


def joint_rates(robot, v, Phi, qd, bk) -> list:
    """Phid_i = (v_i x) Phi_i (Algorithm 3, line 6, Phi-ring = 0), a free-flyer's columns turning
    with the whole base velocity (:func:`~symgen.kinematics.rate_velocity`)."""
    return [bk.bind(crm(rate_velocity(robot, v, Phi, qd, i, bk), bk) @ Phi[i], f"Phid{i}", i)
            for i in range(robot.n)]


def momentum(robot, q, qd, bk):
    """(p, C^T v) at (q, v = qd), each (n,): one forward pass for v_i and h_i = I_i v_i, one
    backward pass for the composite momenta."""
    n, parent = robot.n, robot.parent
    Xup, Phi = body_frames(robot, q, bk)
    v = body_velocities(robot, Xup, Phi, qd, bk)
    Phid = joint_rates(robot, v, Phi, qd, bk)
    h = [bk.bind(body_inertia(robot, i, bk) @ v[i], f"h{i}", i) for i in range(n)]   # h_i = I_i v_i
    p, CTv = bk.zeros(n), bk.zeros(n)
    for i in reversed(range(n)):
        p[i] = plus_armature(robot, i, Phi[i] @ h[i], qd[i])          # p_i = Phi_i^T hC_i (+ armature_i qd_i)
        CTv[i] = Phid[i] @ h[i]                                        # (C^T v)_i = Phid_i^T hC_i, eq. (38)
        if parent[i] >= 0:
            h[parent[i]] = bk.bind(h[parent[i]] + Xup[i].T @ h[i], f"h{parent[i]}", parent[i])
    return p, CTv
