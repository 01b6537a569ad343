"""Passive joint forces of dampers and springs (MuJoCo's ``mj_passive`` for joints, Pinocchio's
``model.damping``), written once for numbers and symbols:

    tau_p,i = -damping_i qd_i - stiffness_i (q_i - springref_i)

per velocity i, the spring on the coordinate of a hinge or slide (:mod:`symgen.passive`). Its
Jacobians are constant and diagonal, -diag(stiffness) and -diag(damping), which the forward
dynamics derivatives add where they solve with M (:func:`add_passive_jacobians`).
"""
from __future__ import annotations

from ..kinematics import joint_position


def passive_force(robot, q, qd, bk):
    """tau_p (n,) at (q, qd); an entry without damper or spring is an exact zero."""
    D, K, ref = robot.damping_vector, robot.stiffness_vector, robot.springref_vector
    tau = bk.zeros(robot.n)
    for i in range(robot.n):
        value = 0
        if D[i]:
            value = value - float(D[i]) * qd[i]
        if K[i]:                                        # (only a hinge or slide has a spring)
            value = value - float(K[i]) * (joint_position(robot, q, i) - float(ref[i]))
        tau[i] = value
    return tau


def plus_passive(robot, q, qd, tau, bk, passive: bool):
    """tau + tau_p(q, qd) with ``passive`` (a build's ``--passive``) and passive forces, else tau."""
    if not passive or not robot.has_passive:
        return tau
    return tau + passive_force(robot, q, qd, bk)


def add_passive_jacobians(robot, dtau_dq, dtau_dqd, passive: bool):
    """(dtau/dq + diag(stiffness), dtau/dqd + diag(damping)): the derivatives of
    ID(q, qd, qdd) - tau_p(q, qd), which forward dynamics with passive forces solves with M
    (dqdd/du = -M^-1 of them); unchanged without ``passive``."""
    if passive and robot.has_passive:
        for i in range(robot.n):
            if robot.stiffness_vector[i]:
                dtau_dq[i, i] = dtau_dq[i, i] + float(robot.stiffness_vector[i])
            if robot.damping_vector[i]:
                dtau_dqd[i, i] = dtau_dqd[i, i] + float(robot.damping_vector[i])
    return dtau_dq, dtau_dqd
