"""External forces on the bodies: one spatial force per body (per link, in ``link_names`` order),
given as Pinocchio gives ``fext`` to ``rnea`` and ``aba`` — the force the world applies to the body,
expressed in the body's frame (Pinocchio's joint frame), ``[force; torque]`` (``pin.Force``
layout). Written once for numbers and symbols.

They enter the dynamics as Carpentier & Mansard write them (seed 003, eq. 15): RNEA's forward
pass gives each body the force f_i = I_i a_i + v_i x* I_i v_i - f_ext,i, so that

    tau = M qdd + C qd + g - sum_k J_k^T f_ext,k        and     qdd = FD(q, qd, tau + sum_k J_k^T f_ext,k)

with J_k body k's Jacobian in its own frame. Where a sweep runs RNEA in body frames the force is
subtracted there (:func:`body_forces`: six subtractions per body); where it runs in ground
coordinates, the force is first carried to them (:func:`ground_forces`); every other route adds the
joint forces of the external ones, tau_ext = sum_k J_k^T f_ext,k (:func:`external_torques`, RNEA's
backward pass on those forces alone).

The derivatives need nothing more: a body-fixed force turns with its body, so in the derivative
passes (:mod:`.derivatives`) it joins the composite force F_i of the eq. (14) term (Phi_i x* F_i,
ground coordinates; S_i x* f_i, body frames) and no other.
"""
from __future__ import annotations

import numpy as np

from ..errors import ModelError
from ..kinematics import body_frames
from ..spatial import cross


def forces_array(robot, f_ext) -> np.ndarray:
    """``f_ext`` as numbers, flat (6 per link): a (links, 6) array or its flat form; None gives
    zeros. Another shape is a ModelError naming the robot."""
    links = len(robot.inertial_bodies)
    if f_ext is None:
        return np.zeros(6 * links)
    x = np.asarray(f_ext, dtype=float)
    if x.shape not in ((links, 6), (6 * links,)):
        raise ModelError(f"f_ext must have shape ({links}, 6) (one [force; torque] per link of robot "
                         f"{robot.name!r}: {', '.join(robot.link_names[:3])}{', ...' if links > 3 else ''}), "
                         f"got {x.shape}")
    return x.reshape(-1)


def body_forces(robot, f_ext, bk) -> list:
    """Per body, its external force in its own frame in Featherstone's order [torque; force], or
    None for the massless bodies of a joint with several velocities (their link is the last's) and
    for a build without external forces (``f_ext`` None)."""
    out = [None] * robot.n
    if f_ext is None:
        return out
    for k, i in enumerate(robot.inertial_bodies):
        f = bk.zeros(6)
        f[:3], f[3:] = f_ext[6 * k + 3:6 * k + 6], f_ext[6 * k:6 * k + 3]
        out[i] = f
    return out


def minus_force(f, fe):
    """f - fe, or f where there is no external force."""
    return f if fe is None else f - fe


def ground_forces(robot, R, p, f_ext, bk) -> list:
    """:func:`body_forces` carried to ground (base) coordinates: with Rb, p body i's axes and origin
    there (``R[i]``, ``p[i]`` of :func:`~symgen.kinematics.ground_frames`, whose axes are the body's
    turned by ``robot.z_turns[i]``), f = Rb f_b and n = Rb n_b + p x f."""
    out = body_forces(robot, f_ext, bk)
    for i, fb in enumerate(out):
        if fb is None:
            continue
        Rb = bk.bind(R[i] @ bk.const(np.asarray(robot.z_turns[i]).T), f"Rb{i}", i)
        f = bk.bind(Rb @ fb[3:], f"fe{i}", i)
        g = bk.zeros(6)
        g[:3], g[3:] = Rb @ fb[:3] + cross(p[i], f, bk), f
        out[i] = bk.bind(g, f"Fe{i}", i)
    return out


def external_torques(robot, q, f_ext, bk):
    """tau_ext = sum_k J_k^T f_ext,k (n,): RNEA's backward pass on the external forces alone, in
    body frames (tau_i = S_i . F_i, F_p += iXp^T F_i)."""
    n = robot.n
    Xup, S = body_frames(robot, q, bk)
    F = body_forces(robot, f_ext, bk)
    tau = bk.zeros(n)
    for i in reversed(range(n)):
        if F[i] is None:
            continue
        tau[i] = S[i] @ F[i]
        p = robot.parent[i]
        if p >= 0:
            up = Xup[i].T @ F[i]
            F[p] = bk.bind(up if F[p] is None else F[p] + up, f"Fx{p}", p)
    return tau


def plus_external(robot, q, tau, f_ext, bk):
    """tau + tau_ext(q, f_ext), or tau without external forces (``f_ext`` None)."""
    return tau if f_ext is None else tau + external_torques(robot, q, f_ext, bk)
