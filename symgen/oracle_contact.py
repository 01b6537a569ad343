"""Pinocchio's contact dynamics at symgen states, for ``symgen verify`` and the tests: functions of
an oracle ``o`` (:class:`~symgen.pinocchio_oracle.PinOracle` whose frames include the contact
frames; its contacts are ``o.contacts``, set by :func:`with_contacts`, else every frame as a
point contact, the registry's default).

    contact_terms      crba (its tree-sparse L^T D L factors, here in NumPy), aba,
                       getFrameJacobian(LOCAL_WORLD_ALIGNED) and getFrameClassicalAcceleration
                       after forwardKinematics(q, v, 0)
    contact_dynamics   forwardDynamics(q, v, tau, J, gamma, damping)  (data.lambda_c)
    impulse_dynamics   impulseDynamics(q, v, J, restitution, damping)  (data.impulse_c)
    whole_body_terms   crba, nonLinearEffects, computeGeneralizedGravity, the frame functions,
                       computeCentroidalMap, computeCentroidalMomentumTimeVariation, centerOfMass

J stacks the active contacts' Jacobian rows (a point contact its 3 linear rows, a flat one all
6), gamma their classical drift J_dot v (Pinocchio's forwardDynamics reads it as the constraint
drift); lambda is in world axes (LOCAL_WORLD_ALIGNED), rows in the order of J.
"""
from __future__ import annotations

import numpy as np

from . import oracle_centroidal as oc
from .algorithms.contact import ROWS, ancestor_pairs



def with_contacts(o, contacts):
    """``o`` told the build's contacts, ((frame name, "3d" or "6d"), ...); returns it."""
    o.contacts = tuple((str(name), str(kind)) for name, kind in contacts)
    return o


def contacts_of(o):
    return getattr(o, "contacts", None) or tuple((f.name, "3d") for f in o.frames)


def _rows(o, active=None):
    """(frame index, row) of the constrained rows of the (active) contacts, in order."""
    names = [f.name for f in o.frames]
    contacts = contacts_of(o)
    active = np.ones(len(contacts), bool) if active is None else np.asarray(active, bool)
    return [(names.index(name), r) for (name, kind), on in zip(contacts, active) if on for r in ROWS[kind]]


def contact_jacobian(o, q, active=None):
    """The (active) contacts' Jacobian rows, (m, n), symgen's columns."""
    J = o.frame_jacobian(q)
    return np.array([J[k, r] for k, r in _rows(o, active)]).reshape(-1, o.robot.nv)


def contact_drift(o, q, v, active=None):
    """Their classical drift J_dot v, (m,)."""
    a = oc.frame_acceleration_bias(o, q, v)
    return np.array([a[k, r] for k, r in _rows(o, active)])


def ltdl(M, parent):
    """(L, D) with M = L^T D L, L unit lower triangular with the tree's sparsity (Featherstone's
    Table 6.3 on numbers: the factors symgen's contact terms carry, of Pinocchio's M)."""
    H, n = np.array(M, dtype=float), len(parent)
    for k in reversed(range(n)):
        i = parent[k]
        while i >= 0:
            a = H[k, i] / H[k, k]
            j = i
            while j >= 0:
                H[i, j] -= a * H[k, j]
                j = parent[j]
            H[k, i] = a
            i = parent[i]
    L = np.eye(n)
    for k in range(n):
        i = parent[k]
        while i >= 0:
            L[k, i] = H[k, i]
            i = parent[i]
    return L, np.diag(H).copy()


def _factors(o, q, J):
    """(Kc, Wc, Lc): J M^-1 J^T, D^-1 L^-T J^T transposed and L's entries at the ancestor pairs, from crba."""
    M = o.mass_matrix(q)
    L, D = ltdl(M, o.robot.parent)
    Wc = (np.linalg.solve(L.T, J.T) / D[:, None]).T
    pairs = ancestor_pairs(o.robot.parent)
    return J @ np.linalg.solve(M, J.T), Wc, np.array([L[i, j] for i, j in pairs] or [0.0])


def external_torque(o, q, f_ext):
    """sum_k J_k^T f_k of symgen's f_ext by Pinocchio: rnea(q, 0, 0) - rnea(q, 0, 0, fext); 0 for None."""
    if f_ext is None:
        return 0.0
    zero = np.zeros(o.robot.nv)
    return o.inverse_dynamics(q, zero, zero) - o.inverse_dynamics(q, zero, zero, f_ext)


def external_torque_dq(o, q, f_ext):
    """d(sum_k J_k^T f_k)/dq (tangent) by Pinocchio: the difference of computeRNEADerivatives' dtau/dq
    without and with fext."""
    zero = np.zeros(o.robot.nv)
    return o.inverse_dynamics_derivatives(q, zero, zero)[0] - o.inverse_dynamics_derivatives(q, zero, zero, f_ext)[0]


def contact_terms(o, q, v, tau, f_ext=None):
    """(Kc, Wc, Lc, qdd0, rc, Dinv) over every contact's rows: qdd0 by aba, rc = -gamma - J qdd0, D^-1 of
    crba's M = L^T D L (with ``f_ext``, at tau + :func:`external_torque`)."""
    J, gamma = contact_jacobian(o, q), contact_drift(o, q, v)
    qdd0 = o.forward_dynamics(q, v, tau + external_torque(o, q, f_ext))
    return (*_factors(o, q, J), qdd0, -gamma - J @ qdd0, 1.0 / ltdl(o.mass_matrix(q), o.robot.parent)[1])


def impulse_terms(o, q, v):
    """(Kc, Wc, Lc, Jv)."""
    J = contact_jacobian(o, q)
    return (*_factors(o, q, J), J @ v)


def contact_dynamics(o, q, v, tau, active, damping=0.0):
    """(qdd (n,), lam (m_active,)) by Pinocchio's forwardDynamics with the active rows (aba and
    no force when none is active)."""
    J, gamma = contact_jacobian(o, q, active), contact_drift(o, q, v, active)
    if not len(gamma):
        return o.forward_dynamics(q, v, tau), np.zeros(0)
    P = o.map.P
    qdd = o.pin.forwardDynamics(o.model, o.data, o.map.q(q), o.map.v(v), o.map.v(tau), J @ P.T, gamma, damping)
    return o.map.vec(np.array(qdd)), np.array(o.data.lambda_c).copy()


def impulse_dynamics(o, q, v, active, restitution=0.0, damping=0.0):
    """(v_after (n,), impulse (m_active,)) by Pinocchio's impulseDynamics."""
    J = contact_jacobian(o, q, active)
    if not len(J):
        return np.array(v, dtype=float), np.zeros(0)
    P = o.map.P
    dq = o.pin.impulseDynamics(o.model, o.data, o.map.q(q), o.map.v(v), J @ P.T, restitution, damping)
    return o.map.vec(np.array(dq)), np.array(o.data.impulse_c).copy()


def whole_body_terms(o, q, v):
    """(M, nle, g, Jc (contacts, 6, n), Jdot v (contacts, 6), A_G, A_G_dot v, CoM)."""
    names = [f.name for f in o.frames]
    ks = [names.index(name) for name, _ in contacts_of(o)]
    M = o.mass_matrix(q)
    nle = o.inverse_dynamics(q, v, np.zeros(len(v)))
    return (M, nle, o.gravity(q), o.frame_jacobian(q)[ks], oc.frame_acceleration_bias(o, q, v)[ks],
            oc.centroidal_map(o, q), oc.centroidal_bias(o, q, v), oc.center_of_mass(o, q))
