"""The loops' closure rows, their Jacobian K and its rate K̇ (:class:`symgen.loops.LoopSystem`),
written once over the backend (numbers here; the same code traces on symbols).

Two kinds of rows, both in the axes of the loop's nearest common ancestor A (its rotation R_A):

- **translation** (URDF+ ``<loop>``, MJCF ``connect``, the first three of a ``weld``): the offset of
  the two points, R_Aᵀ (p_pred - p_succ). Column j of K, for a revolute joint on the predecessor's
  path, a_j x (p - o_j), its rate ȧ_j x (p - o_j) + a_j x (ṗ - ȯ_j); a prismatic joint a_j and
  ω_parent x a_j; minus on the successor's path.
- **rotation** (MJCF ``weld``: the two frames' orientations coincide): with E = (R_Aᵀ R_pred)
  (R_Aᵀ R_succ)ᵀ, the vee of its skew part, ½ (E₂₁ - E₁₂, E₀₂ - E₂₀, E₁₀ - E₀₁) (sin θ times the
  axis of the relative turn: 0 at E = 1). Its rows of K are those of the relative angular
  velocity R_Aᵀ (ω_pred - ω_succ): exactly dφ/dq where φ = 0 (there E = 1 and dE = [R_Aᵀ(ω_pred -
  ω_succ)]x, A's own turn cancelling), and a Pfaffian form of the same constraint elsewhere, which
  is all G (taken at consistent configurations) and Newton's step need. Column j: a_j for a
  revolute joint (0 for a prismatic one), rate ω_parent x a_j; minus on the successor's path.
  Newton from within a quarter turn closes on E = 1, not on the half turn where sin θ is 0 too
  (the step θ -> θ - sin θ moves away from π).

K̇ in A's axes takes A's rotation out: d/dt (R_Aᵀ x) = R_Aᵀ (ẋ - ω_A x x). A free-flyer's speeds
are set to 0 for K̇: rows in A's axes (A at or below the base) do not see the base's motion.
A closure's P (r x 3: translation rows kept; r x 6: of [translation; rotation]) picks its rows.
"""
from __future__ import annotations

import numpy as np

from .spatial import cross


def closure_kinematics(robot, closures, q, qd, bk):
    """Per closure (phi, K, Kdot) in its rows P (Kdot None without qd); K over the tree's speeds."""
    from .algorithms.frames import ground_bodies

    n = robot.n
    R, p = ground_bodies(robot, q, bk)
    if qd is not None and robot.free:               # phi in A's axes ignores the base's motion:
        qd = qd.copy()                              # its speeds add nothing to Kdot but terms
        qd[:robot.free] = bk.number(0.0)            # that cancel
    w, vo = velocities(robot, R, p, qd, bk) if qd is not None else (None, None)
    out = []
    for c in closures:
        spatial = c.P.shape[1] == 6
        rows = 6 if spatial else 3
        RA = R[c.ancestor] if c.ancestor >= 0 else bk.const(np.eye(3))
        phi = bk.zeros(3)
        K, Kd = bk.zeros((rows, n)), (bk.zeros((rows, n)) if qd is not None else None)
        turns = []
        for frame, sign, path in ((c.pred, 1, c.pred_path), (c.succ, -1, c.succ_path)):
            b = frame.body
            if b < 0:                               # an end fixed to the root (the world, a mocap body)
                pf = bk.const(np.asarray(frame.translation, dtype=float))
                if spatial:
                    turns.append(RA.T @ bk.const(np.asarray(frame.rotation, dtype=float)))
                phi = phi + sign * pf
                continue                            # (no joint on its path: no column of K, Kdot)
            T = robot.z_turns[b].T
            pf = p[b] + R[b] @ bk.const(T @ np.asarray(frame.translation, dtype=float))
            if spatial:
                turns.append(RA.T @ (R[b] @ bk.const(T @ np.asarray(frame.rotation, dtype=float))))
            phi = phi + sign * pf
            pfd = vo[b] + cross(w[b], pf - p[b], bk) if qd is not None else None
            for j in path:
                a, par = R[j][:, 2], robot.bodies[j].parent
                wp = (w[par] if par >= 0 else bk.zeros(3)) if qd is not None else None
                if robot.bodies[j].joint_type == "prismatic":
                    K[:3, j] = K[:3, j] + sign * a
                    if qd is not None:
                        Kd[:3, j] = Kd[:3, j] + sign * cross(wp, a, bk)
                    continue
                K[:3, j] = K[:3, j] + sign * cross(a, pf - p[j], bk)
                if spatial:
                    K[3:, j] = K[3:, j] + sign * a
                if qd is not None:
                    Kd[:3, j] = Kd[:3, j] + sign * (cross(cross(wp, a, bk), pf - p[j], bk) + cross(a, pfd - vo[j], bk))
                    if spatial:
                        Kd[3:, j] = Kd[3:, j] + sign * cross(wp, a, bk)
        P = bk.const(c.P)
        if qd is not None and c.ancestor >= 0:              # d/dt (R_A^T x) = R_A^T (xdot - w_A x x)
            wA = w[c.ancestor]
            for j in range(n):
                Kd[:3, j] = Kd[:3, j] - cross(wA, K[:3, j], bk)
                if spatial:
                    Kd[3:, j] = Kd[3:, j] - cross(wA, K[3:, j], bk)
        phi = RA.T @ phi
        K = _turned(RA, K, spatial, bk)
        Kd = None if Kd is None else _turned(RA, Kd, spatial, bk)
        if spatial:
            E = turns[0] @ turns[1].T
            phi = np.concatenate([phi, _vee_skew(E, bk)])
        out.append((P @ phi, P @ K, None if Kd is None else P @ Kd))
    return out


def _turned(RA, X, spatial, bk):
    """X's column triples in A's axes."""
    if not spatial:
        return RA.T @ X
    out = bk.zeros(X.shape)
    out[:3], out[3:] = RA.T @ X[:3], RA.T @ X[3:]
    return out


def _vee_skew(E, bk):
    out = bk.zeros(3)
    out[0] = (E[2, 1] - E[1, 2]) * 0.5
    out[1] = (E[0, 2] - E[2, 0]) * 0.5
    out[2] = (E[1, 0] - E[0, 1]) * 0.5
    return out


def velocities(robot, R, p, qd, bk):
    """World angular velocity and velocity of each body's (turned) origin."""
    w, vo = [None] * robot.n, [None] * robot.n
    for i, body in enumerate(robot.bodies):
        par = body.parent
        wp = w[par] if par >= 0 else bk.zeros(3)
        vp = (vo[par] + cross(wp, p[i] - p[par], bk)) if par >= 0 else bk.zeros(3)
        a = R[i][:, 2]
        if body.joint_type == "prismatic":
            w[i], vo[i] = wp, bk.bind(vp + a * qd[i], f"lvo{i}", i)
        else:
            w[i], vo[i] = bk.bind(wp + a * qd[i], f"lw{i}", i), bk.bind(vp, f"lvo{i}", i)
    return w, vo
