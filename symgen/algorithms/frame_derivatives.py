"""Partial derivatives of frame velocities and spatial accelerations with respect to q, qd and qdd
(seed 003, Sec. III-D; Pinocchio's getFrameVelocityDerivatives and getFrameAccelerationDerivatives
after computeForwardKinematicsDerivatives), in its three reference frames.

From :func:`.frame_motion.motion_tree`: in world coordinates about the world origin, the motion
S_k of each velocity k, the velocity V_i and the spatial acceleration A_i of each body ([angular;
linear]). A velocity k belongs to a joint (one velocity, or a free-flyer's, spherical or planar
joint's several) whose first body hangs from body l (V_l = A_l = 0 at the fixed root) and whose last
body is c. Moving q along k's tangent (q (+) e_k dt, Pinocchio's integrate) turns everything below
the joint by S_k dt about the world (every S_j there moves as S_j + S_k x S_j dt), so for a body b
below the joint:

    dV_b/dq_k   = S_k x (V_b - V_l)                           dV_b/dqd_k = S_k
    dA_b/dq_k   = S_k x (A_b - A_l) - (S_k x V_l) x (V_b - V_l)
    dA_b/dqd_k  = V_l x S_k + S_k x (V_b - V_c)               dA_b/dqdd_k = S_k

(the qd partial: k's own rate Sdot_k = V_l x S_k, and the velocity it adds to every joint below,
whose Sdot_j = V_parent x S_j turns with it). The columns of other velocities are zero.

In each reference, as Pinocchio defines them (measured on Pinocchio 4.1 against finite differences):
- WORLD: the columns above, [linear; angular].
- LOCAL: the derivatives of the LOCAL velocity and acceleration themselves. The frame turns with
  q_k too (Ad(oMf)^-1 X moves by -Ad(oMf)^-1 (S_k x X)), so a q column is Ad(oMf)^-1 (dX/dq_k -
  S_k x X_b): (V_l x S_k) for the velocity; the qd and qdd columns are Ad(oMf)^-1 of the world ones.
- LOCAL_WORLD_ALIGNED: the WORLD columns moved to the frame's origin p (linear part + angular x p),
  which for the q columns is not the derivative of getFrameVelocity(LOCAL_WORLD_ALIGNED): that one
  adds w x (dp/dq_k); Pinocchio's are the world partials seen at the frame.
"""
from __future__ import annotations

from ..spatial import cross, cross_motion
from .frame_motion import frame_origin, motion_tree
from .frame_references import LOCAL, LOCAL_WORLD_ALIGNED, WORLD

#: the references of the outputs, each output name's suffix ("" for LOCAL_WORLD_ALIGNED)
SUFFIXES = {LOCAL_WORLD_ALIGNED: "", LOCAL: "_local", WORLD: "_world"}


def frame_velocity_derivatives(robot, q, qd, frames, bk, references=tuple(SUFFIXES)):
    """``{"dv_dq" + suffix: (F, 6, n), "dv_dqd" + suffix: (F, 6, n)}`` for each of ``references``
    (:data:`SUFFIXES`)."""
    return _derivatives(robot, q, qd, None, frames, bk, references)


def frame_acceleration_derivatives(robot, q, qd, qdd, frames, bk, references=tuple(SUFFIXES)):
    """``{"dv_dq", "da_dq", "da_dqd", "da_dqdd"}`` (each + suffix, (F, 6, n)): the partials of
    the velocity with respect to q, then those of the spatial acceleration with respect to q, qd
    and qdd (the order of getFrameAccelerationDerivatives' outputs)."""
    return _derivatives(robot, q, qd, qdd, frames, bk, references)


def _derivatives(robot, q, qd, qdd, frames, bk, references):
    R, p, S, V, _, A = motion_tree(robot, q, qd, bk, qdd)
    F, n, zero = len(frames), robot.n, bk.zeros(6)
    names = ("dv_dq", "dv_dqd") if qdd is None else ("dv_dq", "da_dq", "da_dqd", "da_dqdd")
    out = {name + SUFFIXES[r]: bk.zeros((F, 6, n)) for r in references for name in names}
    for f_index, f in enumerate(frames):
        b = f.body
        if b < 0:                                                       # on the fixed root: at rest
            continue
        pf = frame_origin(robot, R, p, f, f_index, bk)
        Rf = bk.bind(R[b] @ bk.const(robot.z_turns[b].T @ f.rotation), f"Rf{f_index}", b)
        for k in robot.ancestors(b):
            joint = robot.joint_of[k]
            lead = robot.bodies[joint.first].parent
            Vl, Al = (V[lead], A[lead]) if lead >= 0 else (zero, zero)
            rel = bk.bind(V[b] - Vl, f"dV{f_index}_{k}", b)
            dv_dq = bk.bind(cross_motion(S[k], rel, bk), f"dvq{f_index}_{k}", b)
            world = {"dq": dv_dq, "dqd": S[k]}
            local = {"dq": cross_motion(Vl, S[k], bk), "dqd": S[k]}
            if qdd is not None:
                turn = bk.bind(cross_motion(S[k], Vl, bk), f"SxV{f_index}_{k}", b)
                drag = cross_motion(turn, rel, bk)
                world.update(vq=dv_dq, aq=cross_motion(S[k], A[b] - Al, bk) - drag,
                             aqd=cross_motion(Vl, S[k], bk) + cross_motion(S[k], V[b] - V[joint.last], bk),
                             aqdd=S[k])
                local.update(vq=local["dq"], aq=-cross_motion(S[k], Al, bk) - drag, aqd=world["aqd"], aqdd=S[k])
            parts = ("dq", "dqd") if qdd is None else ("vq", "aq", "aqd", "aqdd")
            for r in references:
                for name, part in zip(names, parts):
                    x = (local if r == LOCAL else world)[part]
                    out[name + SUFFIXES[r]][f_index, :, k] = _expressed(x, Rf, pf, r, bk)
    return out


def _expressed(x, R, p, reference, bk):
    """A world motion column x ([angular; linear] about the world origin) in ``reference``,
    [linear; angular]: WORLD as it is, LOCAL_WORLD_ALIGNED at the frame's origin p, LOCAL at p in
    the frame's axes R."""
    w, v = x[:3], x[3:]
    out = bk.zeros(6)
    if reference == WORLD:
        out[:3], out[3:] = v, w
        return out
    at_p = v + cross(w, p, bk)
    if reference == LOCAL:
        out[:3], out[3:] = R.T @ at_p, R.T @ w
    else:
        out[:3], out[3:] = at_p, w
    return out
