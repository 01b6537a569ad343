"""Pinocchio's route to the operational-space quantities at symgen states, for ``symgen verify`` and
the tests: functions of an oracle ``o`` (:class:`~symgen.pinocchio_oracle.PinOracle`), NumPy on
Pinocchio's own values, written from the definitions (Khatib) and not from symgen's factors:

    M^-1      computeMinverse (upper triangle mirrored)
    J         computeJointJacobians + getFrameJacobian(LOCAL_WORLD_ALIGNED)
    J_dot v   forwardKinematics(q, v, 0) + getFrameClassicalAcceleration(LOCAL_WORLD_ALIGNED)
    C v + g   nonLinearEffects

    Lambda = (J M^-1 J^T + eps 1)^-1     Jbar = M^-1 J^T Lambda
    mu + p = Lambda (J M^-1 (C v + g) - J_dot v)     F = Jbar^T tau

with J a point frame's 3 linear rows or a frame's 6 and eps the build's damping,
``o.opspace_damping`` (:attr:`PinOracle.opspace_damping`); each frame's values in the top-left
corner of the registry's 6 x 6 (n x 6, 6) block, the rest zero (``np.linalg.inv`` of the d x d).
"""
from __future__ import annotations

import numpy as np

from . import oracle_centroidal as oc
from .algorithms.operational_space import SIZE, task_rows


def with_damping(o, damping):
    """``o`` told the build's eps (``--opspace-damping``); returns it."""
    o.opspace_damping = float(damping)
    return o


def _tasks(o, q):
    """Per frame (rows, J_rows (d, n), Lambda (d, d)) and M^-1, from Pinocchio's M^-1 and J."""
    Minv, J = o.mass_matrix_inverse(q), o.frame_jacobian(q)
    out = []
    for k, f in enumerate(o.frames):
        rows = list(task_rows(f))
        Jk = J[k, rows]
        out.append((rows, Jk, np.linalg.inv(Jk @ Minv @ Jk.T + o.opspace_damping * np.eye(len(rows)))))
    return out, Minv


def inertia(o, q):
    """Lambda of each frame, (frames, 6, 6)."""
    tasks, _ = _tasks(o, q)
    out = np.zeros((len(tasks), SIZE, SIZE))
    for k, (rows, _, Lam) in enumerate(tasks):
        out[k, :len(rows), :len(rows)] = Lam
    return out


def dynamically_consistent_inverse(o, q):
    """Jbar = M^-1 J^T Lambda of each frame, (frames, n, 6)."""
    tasks, Minv = _tasks(o, q)
    out = np.zeros((len(tasks), Minv.shape[0], SIZE))
    for k, (rows, Jk, Lam) in enumerate(tasks):
        out[k, :, :len(rows)] = Minv @ Jk.T @ Lam
    return out


def bias(o, q, v):
    """mu + p = Lambda (J M^-1 (C v + g) - J_dot v) of each frame, (frames, 6)."""
    tasks, Minv = _tasks(o, q)
    nle = o.map.vec(o.pin.nonLinearEffects(o.model, o.data, o.map.q(q), o.map.v(v)))
    drift = oc.frame_acceleration_bias(o, q, v)
    out = np.zeros((len(tasks), SIZE))
    for k, (rows, Jk, Lam) in enumerate(tasks):
        out[k, :len(rows)] = Lam @ (Jk @ Minv @ nle - drift[k, rows])
    return out


def force_from_torque(o, q, tau):
    """F = Jbar^T tau of each frame, (frames, 6)."""
    tasks, Minv = _tasks(o, q)
    out = np.zeros((len(tasks), SIZE))
    for k, (rows, Jk, Lam) in enumerate(tasks):
        out[k, :len(rows)] = Lam @ Jk @ Minv @ np.asarray(tau, dtype=float)
    return out
