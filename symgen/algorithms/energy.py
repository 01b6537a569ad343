"""The kinetic and potential energies and the potential energy's regressor (Wensing & Slotine,
Appendix B-B2: T = Y_T theta, V = Y_V theta).

    T = 1/2 sum_i v_i^T I_i v_i                   (body frames: the spatial velocities of the RNEA)
    V = - sum_i g . (m_i p_i + R_i h_i)           (h_i = m_i c_i, the first moment in body i's frame;
                                                   R_i, p_i its world placement)

so that [Y_V]_i = [-g . p_i, -(R_i^T g)^T, 0 0 0 0 0 0] (Pinocchio's computePotentialEnergy:
-sum m g . c, zero at the world origin). A free-flyer's bodies are placed from q[0:7] (the world
pose of the base), so V, unlike T, reads the base pose.
"""
from __future__ import annotations

import numpy as np

from ..kinematics import base_placement, body_frames, body_inertia, parameters_of, plus_armature
from ..model import GRAVITY
from .frames import ground_bodies
from .momentum import body_velocities
from .regressor import parameters


def kinetic_energy(robot, q, qd, bk):
    """T(q, v) = 1/2 sum_i v_i . I_i v_i (+ 1/2 sum_i armature_i qd_i^2: the rotors', as Pinocchio's
    computeKineticEnergy with ``model.armature``), a scalar."""
    Xup, Phi = body_frames(robot, q, bk)
    v = body_velocities(robot, Xup, Phi, qd, bk)
    bodies = sum((v[i] @ (body_inertia(robot, i, bk) @ v[i]) for i in robot.inertial_bodies), 0)
    return sum((plus_armature(robot, i, 0, qd[i] * qd[i]) for i in range(robot.n)), bodies) * bk.half


def world_gravity_terms(robot, q, bk, gravity=GRAVITY) -> dict:
    """{body i: the 10 entries of [Y_V]_i}: -g . p_i and -R_i^T g per body with parameters."""
    R, p = ground_bodies(robot, q, bk, base_placement(robot, q, bk) if robot.floating_base else None)
    g = bk.const(gravity)
    rows = {}
    for i in robot.inertial_bodies:
        Rb = bk.bind(R[i] @ bk.const(robot.z_turns[i].T), f"Rb{i}", i)      # the URDF body frame
        row = bk.zeros(10)
        row[0] = -(g @ p[i])
        row[1:4] = -(Rb.T @ g)
        rows[i] = row
    return rows


def potential_energy_regressor(robot, q, bk, gravity=GRAVITY):
    """Y_V(q), (10 links,): Y_V @ theta = V."""
    rows = world_gravity_terms(robot, q, bk, gravity)
    Y = bk.zeros(10 * len(robot.inertial_bodies))
    for k, i in enumerate(robot.inertial_bodies):
        Y[10 * k:10 * k + 10] = rows[i]
    return Y


def potential_energy(robot, q, bk, gravity=GRAVITY):
    """V(q) = [Y_V]_i . theta_i summed, a scalar (only m_i and h_i enter)."""
    rows = world_gravity_terms(robot, q, bk, gravity)
    total = 0
    for i, row in rows.items():
        theta = parameters_of(robot, i)
        if theta is None:
            theta = bk.const(np.array(parameters(robot.bodies[i].inertia)))
        total = total + row[:4] @ theta[:4]
    return total
