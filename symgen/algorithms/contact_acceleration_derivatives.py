"""Analytic derivatives of the contact rows (Jc and the classical contact acceleration a_c = Jc qdd +
Jc_dot v, LOCAL_WORLD_ALIGNED, [linear; angular]) with respect to q (Pinocchio's tangent directions) and
v, from the quantities the ID-derivative sweep already forms in ground (base) coordinates
(:func:`.derivatives.forward_pass`: Phi_k, v_i, Phid_k = v_p x Phi_k, a_i with gravity a_0): what
Pinocchio's getFrameAccelerationDerivatives gives, with the classical term w x pdot and the base frame
turned to world axes. Used by :func:`.contact_derivatives.contact_partials` instead of forward mode
through the contact rows' program (solo12: about 18,000 operations of it).

Ground coordinates, spatial motions [angular; linear] about the base origin. A (no gravity) = a - a_0.
Joint k moves (turns) the columns below it: d Phi_j / d q_k = Phi_k x Phi_j (k strictly above j), so
for a body b below k, with V_p, A_p its parent's velocity and acceleration,

    dV_b/dq_k = Phi_k x V_b + Phid_k,    dA_b/dq_k = Phi_k x A_b + Phid_k x V_b + D_k,
    D_k = A_p x Phi_k + V_p x Phid_k,    dA_b/dv_k = 2 Phid_k + Phi_k x V_b.

At the contact point p of b (ground coordinates), with pdot = v_O + w x p, c = a_O + wdot x p + w x pdot
(the classical acceleration), X^p = X_lin + X_ang x p, (w_k, u_k) the Jacobian column and the Jacobi
identity, the terms in u_k cancel:

    dc/dq_k   = D_k^p + w_k x c + 2 Phid_k,ang x pdot       dwdot/dq_k = D_k,ang + w_k x wdot + Phid_k,ang x w
    dc/dv_k   = 2 w_k x pdot + t_k Phid_k^p                 dwdot/dv_k = t_k Phid_k,ang + w_k x w

t_k = 2. A free-flyer's column k moves the base in its own frame: in the base frame nothing moves (c is
independent of the base pose), in the world everything turns, d(R c)/dq_k = R (w_k x c) (w_k = e_k or 0),
and its rate is Phid_k = V_base x Phi_k with t_k = 1 (its own column turns with the base: the sum over
the base's columns gives Phi_k x (V_b - V_base)). The results are turned to world by the base rotation.

dJ from the world Jacobian columns (u_j, w_j) alone: if k moves j (k above j, or k a free-flyer column),
d u_j = w_k x u_j, d w_j = w_k x w_j; else (j above or equal to k) d u_j = w_j x u_k, d w_j = 0.

Joints with several velocities inside the tree (spherical, planar below the root) turn their own columns
too: :func:`applies` is False for them and the caller keeps the forward mode.
"""
from __future__ import annotations

from ..kinematics import base_placement
from ..spatial import cross, cross_motion
from .contact import ROWS, contact_supports
from .frames import ground_bodies


def applies(robot) -> bool:
    """Single-DoF joints below an optional root free-flyer (the module docstring's derivation)."""
    return not robot.has_inner_groups


def _at(X, p, bk):
    """The linear part of the spatial motion X taken at the point p: X_lin + X_ang x p."""
    return X[3:] + cross(X[:3], p, bk)


def contact_acceleration_partials(robot, q, frames, kinds, sweep, bk):
    """(Jc (m, n), dJ (m, n, n) = d Jc[r, i] / d q_k, Aq (m, n), Av (m, n)) of the module docstring over
    every contact row; ``sweep`` = (Phi, v, Phid, a, a0) of the ID-derivative sweep at (q, qd, qdd)."""
    Phi, v, Phid, a, a0 = sweep
    n, parent = robot.n, robot.parent
    Jw = bk.zeros((len(frames), 6, n))                                  # world axes, at the frames
    Rg, pg = ground_bodies(robot, q, bk, None)                         # base frame
    Rb = base_placement(robot, q, bk)[0] if robot.floating_base else None
    Vbase = v[robot.free - 1] if robot.free > 0 else None
    terms = {}

    def joint(k):
        """(Phid_k, t_k, D_k or None for a free-flyer column) of the docstring."""
        if k not in terms:
            if robot.is_free(k):
                terms[k] = (bk.bind(cross_motion(Vbase, Phi[k], bk), f"Pfd{k}", k), 1, None)
            elif parent[k] < 0:                                         # fixed root: V_p = A_p = 0
                terms[k] = (bk.zeros(6), 2, bk.zeros(6))
            else:
                p = parent[k]
                Ap = a[p] - a0
                D = bk.bind(cross_motion(Ap, Phi[k], bk) + cross_motion(v[p], Phid[k], bk), f"Dk{k}", k)
                terms[k] = (Phid[k], 2, D)
        return terms[k]

    rows = [(f, r) for f, kind in enumerate(kinds) for r in ROWS[kind]]
    m = len(rows)
    Jc, dJ, Aq, Av = bk.zeros((m, n)), bk.zeros((m, n, n)), bk.zeros((m, n)), bk.zeros((m, n))
    row0 = 0
    for f, (frame, kind, support) in enumerate(zip(frames, kinds, contact_supports(robot, frames))):
        count = len(ROWS[kind])
        b = frame.body
        if support:
            pf = bk.bind(pg[b] + Rg[b] @ bk.const(robot.z_turns[b].T @ frame.translation), f"pg{f}", b)
            for k in support:                       # the Jacobian column [u_k; w_k] from the sweep's Phi_k
                wk = Phi[k][:3]
                uk = bk.bind(Phi[k][3:] + cross(wk, pf, bk), f"Jg{f}_{k}", b)
                if Rb is not None:
                    uk, wk = Rb @ uk, Rb @ wk
                Jw[f, :3, k], Jw[f, 3:, k] = bk.bind(uk, f"Ju{f}_{k}", b), bk.bind(wk, f"Jw{f}_{k}", b)
            for i, r in enumerate(ROWS[kind]):
                Jc[row0 + i] = Jw[f, r]
            A = a[b] - a0
            w, wd = v[b][:3], A[:3]
            pdot = bk.bind(v[b][3:] + cross(w, pf, bk), f"pdg{f}", b)
            c = bk.bind(A[3:] + cross(wd, pf, bk) + cross(w, pdot, bk), f"cg{f}", b)
            for k in support:
                Sd, t, D = joint(k)
                wk = Phi[k][:3]
                dq, dv = bk.zeros(6), bk.zeros(6)                       # [linear; angular], base frame
                if D is None:
                    dq[:3], dq[3:] = cross(wk, c, bk), cross(wk, wd, bk)
                else:
                    dq[:3] = _at(D, pf, bk) + cross(wk, c, bk) + 2 * cross(Sd[:3], pdot, bk)
                    dq[3:] = D[:3] + cross(wk, wd, bk) + cross(Sd[:3], w, bk)
                dv[:3] = 2 * cross(wk, pdot, bk) + t * _at(Sd, pf, bk)
                dv[3:] = t * Sd[:3] + cross(wk, w, bk)
                if Rb is not None:
                    dq[:3], dq[3:], dv[:3], dv[3:] = Rb @ dq[:3], Rb @ dq[3:], Rb @ dv[:3], Rb @ dv[3:]
                for i, r in enumerate(ROWS[kind]):
                    Aq[row0 + i, k] = bk.bind(dq[r], f"daq{f}_{r}_{k}", b)
                    Av[row0 + i, k] = bk.bind(dv[r], f"dav{f}_{r}_{k}", b)
            for k in support:                                           # dJ from the world columns
                uk, wk = Jw[f, :3, k], Jw[f, 3:, k]
                for j in support:
                    uj, wj = Jw[f, :3, j], Jw[f, 3:, j]
                    if robot.is_free(k) or k < j:
                        col = (cross(wk, uj, bk), cross(wk, wj, bk))
                    else:
                        col = (cross(wj, uk, bk), bk.zeros(3))
                    for i, r in enumerate(ROWS[kind]):
                        dJ[row0 + i, j, k] = bk.bind(col[r // 3][r % 3], f"dJg{f}_{r}_{j}_{k}", b)
        row0 += count
    return Jc, dJ, Aq, Av
