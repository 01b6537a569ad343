"""The adaptation term Y^T (v - v_r) of the Slotine-Li law in O(N), Y never formed: Wensing &
Slotine, Algorithm 3, line 9 (Appendix B-A, eq. (37): theta-hat-dot = -Gamma Y^T s, s = v - v_r).

Y's block for joint i and body j is Y_ij = Phi_i^T jX_i^T Y_j(a_j, v_j, w_j) for i an ancestor of
j (:mod:`.regressor`), so

    [Y^T s]_j = Y_j^T  sum_{i <= j} jX_i Phi_i s_i = Y_j(a_j, v_j, w_j)^T (v_j - w_j)

since the velocities of the true and the reference motion, v_j and w_j, are those sums for qd and
qd_r: one 6x10 body-level regressor and one product per body after the forward pass of
Algorithm 3 (lines 1-7), no backward pass.
"""
from __future__ import annotations

from ..model import GRAVITY
from .regressor import body_regressor
from .slotine_li import reference_sweep


def adaptation_term(robot, q, qd, qd_r, qdd_r, bk, gravity=GRAVITY):
    """Y(q, qd, qd_r, qdd_r)^T (qd - qd_r), (10 links,), in ``link_names`` order."""
    _, _, v, w, a = reference_sweep(robot, q, qd, qd_r, qdd_r, bk, gravity)      # lines 1-7
    out = bk.zeros(10 * len(robot.inertial_bodies))
    for k, j in enumerate(robot.inertial_bodies):
        F = bk.bind(body_regressor(a[j], v[j], w[j], bk, f"F{j}", j), f"F{j}", j)           # F_j = Y_j(a_j, v_j, w_j)
        s = bk.bind(v[j] - w[j], f"s{j}", j)                                     # sum_{i <= j} jX_i Phi_i s_i
        out[10 * k:10 * k + 10] = s @ F                                          # line 9: [Y^T s]_j
    return out
