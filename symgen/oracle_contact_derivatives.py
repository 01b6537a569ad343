"""Pinocchio's contact dynamics derivatives at symgen states, for the tests and ``symgen verify``:
constraintDynamics then computeConstraintDynamicsDerivatives with one RigidConstraintModel per
active contact of the oracle ``o`` (:func:`symgen.oracle_contact.with_contacts`): CONTACT_3D at a
point contact, CONTACT_6D at a flat one, LOCAL_WORLD_ALIGNED, at the contact frame's joint and
placement in ``o.model``; ProximalSettings(1e-12, mu = 0, 1 iteration): the exact KKT solve.

Measured on solo12 (/tmp check, central differences of constraintDynamics along pin.integrate,
h = 1e-6): ddq_dq, ddq_dv, dlambda_dq, dlambda_dv are the derivatives along q ⊕ dv (the tangent
space), lambda in world axes, to the differences' error (1e-6 relative); not their negatives.

A flat contact is another constraint there: Pinocchio's CONTACT_6D in LOCAL_WORLD_ALIGNED constrains
the frame's *spatial* acceleration (its linear part without w x pdot), measured: constraintDynamics
equals forwardDynamics with the drift gamma - [w x pdot; 0] to 6e-12, and differs from the classical
drift's by hundreds on a random arm. symgen's contact_dynamics is forwardDynamics with the classical
drift (shared/API.md) for both types, so with a 6d contact active computeConstraintDynamicsDerivatives
is the derivative of another function: :func:`contact_dynamics_derivatives_fd` gives the derivatives of
Pinocchio's forwardDynamics (:func:`symgen.oracle_contact.contact_dynamics`) by five-point central
differences along pin.integrate instead.
"""
from __future__ import annotations

import numpy as np

from .oracle_contact import _rows, contact_dynamics, contacts_of


def constraint_models(pin, model, frame_ids, kinds):
    """One RigidConstraintModel per contact frame of ``model``: CONTACT_3D (``"3d"``) or CONTACT_6D
    (``"6d"``), LOCAL_WORLD_ALIGNED, at the frame's joint and placement (also the CppADCodeGen
    bench's, :mod:`symgen.bench.cppadcg`)."""
    kind = {"3d": pin.ContactType.CONTACT_3D, "6d": pin.ContactType.CONTACT_6D}
    return [pin.RigidConstraintModel(kind[k], model, model.frames[i].parentJoint, model.frames[i].placement,
                                     pin.LOCAL_WORLD_ALIGNED) for i, k in zip(frame_ids, kinds)]


def constraint_data(pin, model, models, q, v, tau, derivatives: bool = False):
    """Pinocchio's data after constraintDynamics (the exact KKT solve: ProximalSettings(1e-12, mu = 0,
    1 iteration)) at Pinocchio's (q, v, tau), and with ``derivatives`` computeConstraintDynamicsDerivatives."""
    cms = pin.StdVec_RigidConstraintModel(models)
    cds = pin.StdVec_RigidConstraintData([c.createData() for c in models])
    data = model.createData()
    settings = pin.ProximalSettings(1e-12, 0.0, 1)
    pin.initConstraintDynamics(model, data, cms, cds)
    pin.constraintDynamics(model, data, q, v, tau, cms, cds, settings)
    if derivatives:
        pin.computeConstraintDynamicsDerivatives(model, data, cms, cds, settings)
    return data


def _models(o, active):
    names = [f.name for f in o.frames]
    on = [(name, k) for (name, k), flag in zip(contacts_of(o), active) if flag]
    return constraint_models(o.pin, o.model, [o.frame_ids[names.index(name)] for name, _ in on], [k for _, k in on])


def contact_dynamics_derivatives(o, q, v, tau, active):
    """(ddq_dq, ddq_dv, ddq_dtau (n, n), dlam_dq, dlam_dv, dlam_dtau (m_active, n)) in symgen's
    order; no active contact: computeABADerivatives and M^-1 (constraintDynamics needs a constraint)."""
    pin, P = o.pin, o.map.P
    active = np.asarray(active, bool)
    models = _models(o, active)
    n = o.robot.nv
    if not models:
        dq, dv = o.forward_dynamics_derivatives(q, v, tau)
        return dq, dv, o.mass_matrix_inverse(q), np.zeros((0, n)), np.zeros((0, n)), np.zeros((0, n))
    data = constraint_data(pin, o.model, models, o.map.q(q), o.map.v(v), o.map.v(tau), derivatives=True)
    return (o.map.mat(data.ddq_dq.copy()), o.map.mat(data.ddq_dv.copy()), o.map.mat(data.ddq_dtau.copy()),
            data.dlambda_dq @ P, data.dlambda_dv @ P, data.dlambda_dtau @ P)


def _symgen_q(o, q_pin):
    """symgen's q of a Pinocchio configuration (the inverse of ``o.map.q``)."""
    q = np.zeros(o.robot.nq)
    for first, idx, nq in o.map.q_slots:
        if nq == 2:
            q[first] = np.arctan2(q_pin[idx + 1], q_pin[idx])
        else:
            q[first:first + nq] = q_pin[idx:idx + nq]
    return q


def contact_dynamics_derivatives_fd(o, q, v, tau, active, h=1e-4):
    """The derivatives of :func:`symgen.oracle_contact.contact_dynamics` (forwardDynamics with the
    classical drift) as :func:`contact_dynamics_derivatives` gives them, by five-point central
    differences (error O(h^4) + eps / h): q along pin.integrate, v and tau along the axes."""
    active = np.asarray(active, bool)
    n, q_pin = o.robot.nv, o.map.q(q)

    def at(dq, dv, dt):
        q1 = _symgen_q(o, o.pin.integrate(o.model, q_pin, o.map.v(dq))) if dq.any() else q
        qdd, lam = contact_dynamics(o, q1, v + dv, tau + dt, active)
        return np.concatenate([qdd, lam])

    out = []
    for slot in range(3):
        cols = []
        for k in range(n):
            step = [np.zeros(n), np.zeros(n), np.zeros(n)]

            def f(t):
                step[slot] = np.zeros(n)
                step[slot][k] = t
                return at(*step)
            cols.append((8 * (f(h) - f(-h)) - (f(2 * h) - f(-2 * h))) / (12 * h))
        out.append(np.array(cols).T)
    return (*(x[:n] for x in out), *(x[n:] for x in out))


def contact_acceleration_derivatives(o, q, v, qdd):
    """(d a_c/dq, d a_c/dv) (m, n), symgen's columns, of every contact row's classical acceleration a_c =
    Jc qdd + Jc_dot v, LOCAL_WORLD_ALIGNED: computeForwardKinematicsDerivatives(q, v, qdd), then
    getFrameVelocityDerivatives and getFrameAccelerationDerivatives of each contact frame, and the
    classical term's derivative d(w x pdot) = dw x pdot + w x dpdot (a_c's linear part is the spatial
    acceleration's at the frame plus w x pdot; its angular part is the spatial one's). Pinocchio's
    LOCAL_WORLD_ALIGNED q-derivatives of a linear part are taken at the frame's origin held fixed
    (measured against differences along pin.integrate, a random arm: off by 0.6); the frame's point
    moves by J_lin, so the linear parts gain w x J_lin (velocity) and wdot x J_lin (acceleration)."""
    pin, P = o.pin, o.map.P
    ref = pin.LOCAL_WORLD_ALIGNED
    data = o.model.createData()
    qp, vp = o.map.q(q), o.map.v(v)
    pin.computeForwardKinematicsDerivatives(o.model, data, qp, vp, o.map.v(qdd))
    Aq, Av = [], []
    for k, r in _rows(o):
        fid = o.frame_ids[k]
        dvq, dvv = pin.getFrameVelocityDerivatives(o.model, data, fid, ref)
        _, daq, dav, _ = pin.getFrameAccelerationDerivatives(o.model, data, fid, ref)
        vel, acc = pin.getFrameVelocity(o.model, data, fid, ref), pin.getFrameAcceleration(o.model, data, fid, ref)
        pdot, w = vel.linear, vel.angular
        Jlin = pin.getFrameJacobian(o.model, data, fid, ref)[:3]
        dvq, dq, dv = dvq.copy(), daq.copy(), dav.copy()
        dvq[:3] += np.cross(w, Jlin.T).T                    # the point moves: d(pdot)/dq
        dq[:3] += np.cross(acc.angular, Jlin.T).T           # d(spatial acceleration at the point)/dq
        dq[:3] += np.cross(dvq[3:].T, pdot).T + np.cross(w, dvq[:3].T).T
        dv[:3] += np.cross(dvv[3:].T, pdot).T + np.cross(w, dvv[:3].T).T
        Aq.append(dq[r] @ P)
        Av.append(dv[r] @ P)
    n = o.robot.nv
    return np.array(Aq).reshape(-1, n), np.array(Av).reshape(-1, n)
