"""MuJoCo's coordinates <-> symgen's (Pinocchio's), for a model read from MJCF (:mod:`symgen.mjcf`).

MuJoCo's free joint: qpos = [position, quaternion w x y z], qvel = [linear velocity of the body
origin in the world frame, angular velocity in the body frame]. symgen's free-flyer (Pinocchio's):
q = [position, quaternion x y z w], v = [linear, angular velocity, both in the base frame]. A hinge
or slide: symgen's q = qpos - qpos0 (MuJoCo's ``ref``), the same speed. Every free joint of a
scene converts as the floating base's does (:mod:`symgen.scenes`). The generated package of
an MJCF model carries a copy of these two functions with its qpos0 (``from_mujoco``, ``to_mujoco``).
"""
from __future__ import annotations

import numpy as np


def quaternion_matrix(xyzw) -> np.ndarray:
    """The rotation of the unit quaternion ``(x, y, z, w)`` (normalized first); batched on the
    leading axes."""
    x, y, z, w = np.moveaxis(np.asarray(xyzw, dtype=float) / np.linalg.norm(xyzw, axis=-1, keepdims=True), -1, 0)
    return np.stack([np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], -1),
                     np.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], -1),
                     np.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], -1)], -2)


def ball_slots(robot) -> list[int]:
    """The first entries in q of the robot's spherical (MJCF ball) joints."""
    return [j.idx_q for j in robot.joint_models if j.kind == "spherical"]


def free_slots(layout) -> list[tuple[int, int]]:
    """(first entry in q, in v) of every free-flyer of a layout (``robot.joint_layout`` or a
    package's ``joint_models``), the floating base's (0, 0) included: each is a MuJoCo free joint
    (a scene's free joints are free-flyers at the world, :mod:`symgen.scenes`)."""
    return [(j[2], j[4]) for j in layout if j[1] == "freeflyer"]


def _frees(floating_base, frees):
    """The free-flyers' (q, v) slots: those given, or the floating base's alone."""
    return list(frees) if frees else [(0, 0)] * bool(floating_base)


def from_mujoco(qpos, qvel, qpos0, floating_base: bool, balls=(), frees=()):
    """(q, v) of MuJoCo's (qpos, qvel); ``qpos0``: MuJoCo's qpos0 of the joints after a
    floating base's (0 at a ball's and at a free joint's entries); ``balls``: :func:`ball_slots`
    (w x y z -> x y z w); ``frees``: :func:`free_slots` (default: the floating base's, if any).
    1-D or batched (B, n)."""
    qpos, qvel = np.asarray(qpos, dtype=float), np.asarray(qvel, dtype=float)
    q, v = qpos.copy(), qvel.copy()
    f = 7 if floating_base else 0
    q[..., f:] -= np.asarray(qpos0, dtype=float)
    for k, kv in _frees(floating_base, frees):
        q[..., k + 3:k + 6], q[..., k + 6] = qpos[..., k + 4:k + 7], qpos[..., k + 3]
        R = quaternion_matrix(q[..., k + 3:k + 7])
        v[..., kv:kv + 3] = np.einsum("...ji,...j->...i", R, qvel[..., kv:kv + 3])
    for k in balls:
        q[..., k:k + 3], q[..., k + 3] = qpos[..., k + 1:k + 4], qpos[..., k]
    return q, v


def to_mujoco(q, v, qpos0, floating_base: bool, balls=(), frees=()):
    """(qpos, qvel) of symgen's (q, v): the inverse of :func:`from_mujoco`."""
    q, v = np.asarray(q, dtype=float), np.asarray(v, dtype=float)
    qpos, qvel = q.copy(), v.copy()
    f = 7 if floating_base else 0
    qpos[..., f:] += np.asarray(qpos0, dtype=float)
    for k, kv in _frees(floating_base, frees):
        qpos[..., k + 3], qpos[..., k + 4:k + 7] = q[..., k + 6], q[..., k + 3:k + 6]
        R = quaternion_matrix(q[..., k + 3:k + 7])
        qvel[..., kv:kv + 3] = np.einsum("...ij,...j->...i", R, v[..., kv:kv + 3])
    for k in balls:
        qpos[..., k], qpos[..., k + 1:k + 4] = q[..., k + 3], q[..., k:k + 3]
    return qpos, qvel


def velocity_map(layout, q, v):
    """(T, Tdot qvel) with v = T qvel for MuJoCo's qvel (each free joint's world-frame linear
    velocity turned into its body frame, R^T) at symgen's (q, v): MuJoCo's M = T^T M T, its bias
    forces T^T (b + M Tdot qvel), a MuJoCo generalized force f is tau = T^-T f, qacc = T^-1 (vdot
    - Tdot qvel). One state (1-D q, v)."""
    n = len(v)
    T, Tdot_qvel = np.eye(n), np.zeros(n)
    for k, kv in free_slots(layout):
        T[kv:kv + 3, kv:kv + 3] = quaternion_matrix(q[k + 3:k + 7]).T
        Tdot_qvel[kv:kv + 3] = -np.cross(v[kv + 3:kv + 6], v[kv:kv + 3])   # d/dt R^T = -[w]x R^T, w in the body frame
    return T, Tdot_qvel
