"""Frame motion: the velocity of each frame, its classical acceleration at zero joint
acceleration (the drift J_dot v of a contact constraint) and the rate of its Jacobian, all
LOCAL_WORLD_ALIGNED (origin at the frame, world axes), rows [linear; angular] — Pinocchio's
getFrameVelocity, getFrameClassicalAcceleration after forwardKinematics(q, v, 0) and
getFrameJacobianTimeVariation.

In world coordinates about the world origin O (the orientations and origins of
:func:`.frames.ground_bodies`), joint j moves its subtree along the spatial motion
S_j = [a_j; o_j x a_j] (revolute, axis a_j through o_j) or [0; a_j] (prismatic). Down the tree
(Featherstone's RNEA forward pass at qdd = 0, Table 5.1):

    V_i = V_p + S_i qd_i,     Sdot_i = V_p x S_i,     A_i = A_p + Sdot_i qd_i       (A_root = 0)

with V_i = [w_i; v_O] the spatial velocity and A_i = [wdot_i; a_O] the spatial acceleration of
body i. A frame at the point p_f of body b then has

    velocity   [pdot_f; w_b],               pdot_f = v_O + w_b x p_f
    J_dot v    [a_O + wdot_b x p_f + w_b x pdot_f; wdot_b]     (the classical acceleration)
    J_dot      per joint j <= b: [Sdot_lin + Sdot_ang x p_f + S_ang x pdot_f; Sdot_ang]

(the last is d/dt of the Jacobian column [S_lin + S_ang x p_f; S_ang] of :mod:`.frames`). The
spatial acceleration A is not the classical one: the classical linear acceleration of a point adds
w x pdot_f (pinocchio issue #1395: getFrameAcceleration is the spatial one).

A free-flyer's six columns are joints at the base origin along the base's axes; they turn with
the whole base velocity (Sdot_k = V_base x S_k, :func:`~symgen.kinematics.rate_velocity`'s rule),
and since sum_k (V_base x S_k) qd_k = V_base x V_base = 0, the base's acceleration at qdd = 0 is
0 (Pinocchio's free-flyer acceleration is the body's spatial one).
"""
from __future__ import annotations

from ..kinematics import base_placement
from ..spatial import cross, cross_motion
from .frames import ground_bodies, joint_axis


def frame_motion(robot, q, qd, frames, bk):
    """``{"vf": (F, 6), "af": (F, 6), "dJ": (F, 6, n)}``: velocity, classical J_dot v and J_dot of
    ``frames`` (a sequence of Frame), LOCAL_WORLD_ALIGNED, [linear; angular]."""
    R, p, S, V, Sdot, A = motion_tree(robot, q, qd, bk)
    F, n = len(frames), robot.n
    vf, af, dJ = bk.zeros((F, 6)), bk.zeros((F, 6)), bk.zeros((F, 6, n))
    for k, f in enumerate(frames):
        b = f.body
        if b < 0:                                                       # on the fixed root: at rest
            continue
        pf = frame_origin(robot, R, p, f, k, bk)
        w, wdot = V[b][:3], A[b][:3]
        pdot = bk.bind(V[b][3:] + cross(w, pf, bk), f"pdot{k}", b)
        vf[k, :3], vf[k, 3:] = pdot, w
        af[k, :3] = A[b][3:] + cross(wdot, pf, bk) + cross(w, pdot, bk)
        af[k, 3:] = wdot
        for j in robot.ancestors(b):
            Sd = Sdot[j]
            dJ[k, :3, j] = Sd[3:] + cross(Sd[:3], pf, bk) + cross(S[j][:3], pdot, bk)
            dJ[k, 3:, j] = Sd[:3]
    return {"vf": vf, "af": af, "dJ": dJ}


def frame_origin(robot, R, p, f, k, bk):
    """The world position of frame ``f`` (the ``k``-th) on a moving body, from the bodies' turned
    frames (R, p) of :func:`.frames.ground_bodies`."""
    b = f.body
    return bk.bind(p[b] + R[b] @ bk.const(robot.z_turns[b].T @ f.translation), f"pf{k}", b)


def motion_tree(robot, q, qd, bk, qdd=None):
    """The forward pass of the module's docstring, in world coordinates about the world origin:
    (R, p) of :func:`.frames.ground_bodies` and per body S_i, V_i, Sdot_i and A_i ([angular;
    linear]), A at ``qdd`` (None: at qdd = 0, the drift)."""
    n, parent = robot.n, robot.parent
    R, p = ground_bodies(robot, q, bk, base_placement(robot, q, bk) if robot.floating_base else None)
    S, V, Sdot, A = [None] * n, [None] * n, [None] * n, [None] * n
    for i in range(n):
        a = joint_axis(robot, R, i)                                     # joint i's axis, world
        S[i] = bk.zeros(6)
        if robot.bodies[i].joint_type == "prismatic":
            S[i][3:] = a
        else:
            S[i][:3], S[i][3:] = a, bk.bind(cross(p[i], a, bk), f"oxa{i}", i)
        par = parent[i]
        Vp = V[par] if par >= 0 else bk.zeros(6)
        V[i] = bk.bind(Vp + S[i] * qd[i], f"V{i}", i)
    for i in range(n):
        par = parent[i]
        if robot.is_free(i):                                            # turned by the whole base
            Sdot[i] = bk.bind(cross_motion(V[robot.free - 1], S[i], bk), f"Sd{i}", i)
            A[i] = bk.zeros(6) if qdd is None else bk.bind((A[par] if par >= 0 else 0) + S[i] * qdd[i], f"A{i}", i)
            continue
        if robot.in_group(i):                   # turned by the joint's whole child velocity
            Sdot[i] = bk.bind(cross_motion(V[robot.joint_of[i].last], S[i], bk), f"Sd{i}", i)
            A[i] = bk.bind((A[par] if par >= 0 else 0) + Sdot[i] * qd[i] + _driven(S[i], qdd, i), f"A{i}", i)
            continue
        Sdot[i] = bk.bind(cross_motion(V[par], S[i], bk), f"Sd{i}", i) if par >= 0 else bk.zeros(6)
        A[i] = bk.bind((A[par] if par >= 0 else 0) + Sdot[i] * qd[i] + _driven(S[i], qdd, i), f"A{i}", i)
    return R, p, S, V, Sdot, A


def _driven(S, qdd, i):
    """S_i qdd_i, the acceleration a joint drives (0 at the drift, qdd None)."""
    return 0 if qdd is None else S * qdd[i]
