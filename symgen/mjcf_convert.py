"""MuJoCo's coordinates <-> symgen's (Pinocchio's), for a model read from MJCF (:mod:`symgen.mjcf`).

MuJoCo's free joint: qpos = [position, quaternion w x y z], qvel = [linear velocity of the body
origin in the world frame, angular velocity in the body frame]. symgen's free-flyer (Pinocchio's):
q = [position, quaternion x y z w], v = [linear, angular velocity, both in the base frame]. A hinge
or slide: symgen's q = qpos - qpos0 (MuJoCo's ``ref``), the same speed. The generated package of
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


def from_mujoco(qpos, qvel, qpos0, floating_base: bool, balls=()):
    """(q, v) of MuJoCo's (qpos, qvel); ``qpos0``: MuJoCo's qpos0 of the joints after a
    free-flyer's (0 at a ball's entries); ``balls``: :func:`ball_slots` (w x y z -> x y z w).
    1-D or batched (B, n)."""
    qpos, qvel = np.asarray(qpos, dtype=float), np.asarray(qvel, dtype=float)
    q, v = qpos.copy(), qvel.copy()
    f = 7 if floating_base else 0
    q[..., f:] -= np.asarray(qpos0, dtype=float)
    if floating_base:
        q[..., 3:6], q[..., 6] = qpos[..., 4:7], qpos[..., 3]
        R = quaternion_matrix(q[..., 3:7])
        v[..., 0:3] = np.einsum("...ji,...j->...i", R, qvel[..., 0:3])
    for k in balls:
        q[..., k:k + 3], q[..., k + 3] = qpos[..., k + 1:k + 4], qpos[..., k]
    return q, v


def to_mujoco(q, v, qpos0, floating_base: bool, balls=()):
    """(qpos, qvel) of symgen's (q, v): the inverse of :func:`from_mujoco`."""
    q, v = np.asarray(q, dtype=float), np.asarray(v, dtype=float)
    qpos, qvel = q.copy(), v.copy()
    f = 7 if floating_base else 0
    qpos[..., f:] += np.asarray(qpos0, dtype=float)
    if floating_base:
        qpos[..., 3], qpos[..., 4:7] = q[..., 6], q[..., 3:6]
        R = quaternion_matrix(q[..., 3:7])
        qvel[..., 0:3] = np.einsum("...ij,...j->...i", R, v[..., 0:3])
    for k in balls:
        qpos[..., k], qpos[..., k + 1:k + 4] = q[..., k + 3], q[..., k:k + 3]
    return qpos, qvel
