"""The frame functions in Pinocchio's other reference frames (``ReferenceFrame``), from their
LOCAL_WORLD_ALIGNED values (:mod:`.frames`, :mod:`.frame_motion`) by a few rotations and cross
products. With the frame's world orientation R and origin p, its LOCAL_WORLD_ALIGNED velocity
[pdot; w], classical acceleration [c; wdot] and Jacobian J = [J_v; J_w], rows [linear; angular]:

    LOCAL  (the frame's own axes and origin)           WORLD  (world axes, origin at the world origin)
    J        [R^T J_v; R^T J_w]                          [J_v + p x J_w; J_w]
    v        [R^T pdot; R^T w]                           [pdot + p x w; w]
    classical [R^T c; R^T wdot]                          [c + p x wdot - w x (w x p); wdot]
    J_dot    [R^T (J_v' - w x J_v); R^T (J_w' - w x J_w)]   [J_v' + pdot x J_w + p x J_w'; J_w']

(J' = J_dot in LOCAL_WORLD_ALIGNED). The classical acceleration is Pinocchio's
getFrameClassicalAcceleration, the spatial acceleration in the reference plus w_r x v_r (its
angular and linear velocity there): in LOCAL the point's acceleration turned into the frame's
axes; in WORLD the spatial acceleration of the world origin's motion plus w x v_O, v_O = pdot +
p x w. J_dot is Pinocchio's getFrameJacobianTimeVariation, the time derivative of the Jacobian in
that reference (of R^T J for LOCAL: d/dt R^T = -R^T [w]x). Unlike LOCAL_WORLD_ALIGNED, in LOCAL and
WORLD the classical drift is not J_dot v (J_dot v is the spatial acceleration there).
"""
from __future__ import annotations

from ..spatial import cross

#: Pinocchio's ``ReferenceFrame`` names, as ``--reference`` spells them
LOCAL, WORLD, LOCAL_WORLD_ALIGNED = "local", "world", "local_world_aligned"


def _columns(J, f, bk):
    """``f(J[:3, c], J[3:, c])`` -> (linear, angular), column by column of a (6, n) matrix."""
    out = bk.zeros(J.shape)
    for c in range(J.shape[1]):
        out[:3, c], out[3:, c] = f(J[:3, c], J[3:, c])
    return out


def jacobian(J, R, p, reference, bk):
    """A (6, n) LOCAL_WORLD_ALIGNED Jacobian in ``reference``."""
    if reference == LOCAL:
        return _columns(J, lambda v, w: (R.T @ v, R.T @ w), bk)
    return _columns(J, lambda v, w: (v + cross(p, w, bk), w), bk)


def velocity(vf, R, p, reference, bk):
    """A LOCAL_WORLD_ALIGNED velocity [pdot; w] in ``reference``."""
    return jacobian(vf.reshape(6, 1), R, p, reference, bk).reshape(6)


def acceleration_bias(af, vf, R, p, reference, bk):
    """The classical acceleration ``af`` (LOCAL_WORLD_ALIGNED, [c; wdot]) of a frame with velocity
    ``vf`` in ``reference`` (Pinocchio's getFrameClassicalAcceleration there)."""
    out = bk.zeros(6)
    if reference == LOCAL:
        out[:3], out[3:] = R.T @ af[:3], R.T @ af[3:]
        return out
    w = vf[3:]
    out[:3] = af[:3] + cross(p, af[3:], bk) - cross(w, cross(w, p, bk), bk)
    out[3:] = af[3:]
    return out


def jacobian_dot(dJ, J, vf, R, p, reference, bk):
    """The rate ``dJ`` of the LOCAL_WORLD_ALIGNED Jacobian ``J`` of a frame with velocity ``vf``,
    as the rate of the Jacobian in ``reference`` (Pinocchio's getFrameJacobianTimeVariation)."""
    pdot, w = vf[:3], vf[3:]
    out = bk.zeros(dJ.shape)
    for c in range(dJ.shape[1]):
        Jv, Jw, dv, dw = J[:3, c], J[3:, c], dJ[:3, c], dJ[3:, c]
        if reference == LOCAL:
            out[:3, c], out[3:, c] = R.T @ (dv - cross(w, Jv, bk)), R.T @ (dw - cross(w, Jw, bk))
        else:
            out[:3, c], out[3:, c] = dv + cross(pdot, Jw, bk) + cross(p, dw, bk), dw
    return out
