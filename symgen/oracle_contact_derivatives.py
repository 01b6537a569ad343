"""Pinocchio's contact dynamics derivatives at symgen states, for the tests and ``symgen verify``:
constraintDynamics then computeConstraintDynamicsDerivatives with one RigidConstraintModel per
active contact of the oracle ``o`` (:func:`symgen.oracle_contact.with_contacts`): CONTACT_3D at a
point contact, CONTACT_6D at a flat one, LOCAL_WORLD_ALIGNED, at the contact frame's joint and
placement in ``o.model``; ProximalSettings(1e-12, mu = 0, 1 iteration): the exact KKT solve.

Measured on solo12 (/tmp check, central differences of constraintDynamics along pin.integrate,
h = 1e-6): ddq_dq, ddq_dv, dlambda_dq, dlambda_dv are the derivatives along q ⊕ dv (the tangent
space), lambda in world axes, to the differences' error (1e-6 relative); not their negatives.
"""
from __future__ import annotations

import numpy as np

from .oracle_contact import contacts_of


def _models(o, active):
    pin, names = o.pin, [f.name for f in o.frames]
    kind = {"3d": pin.ContactType.CONTACT_3D, "6d": pin.ContactType.CONTACT_6D}
    models = []
    for (name, k), on in zip(contacts_of(o), active):
        if on:
            frame = o.model.frames[o.frame_ids[names.index(name)]]
            models.append(pin.RigidConstraintModel(kind[k], o.model, frame.parentJoint, frame.placement,
                                                   pin.LOCAL_WORLD_ALIGNED))
    return models


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
    cms = pin.StdVec_RigidConstraintModel(models)
    cds = pin.StdVec_RigidConstraintData([c.createData() for c in models])
    data = o.model.createData()
    settings = pin.ProximalSettings(1e-12, 0.0, 1)
    pin.initConstraintDynamics(o.model, data, cms, cds)
    pin.constraintDynamics(o.model, data, o.map.q(q), o.map.v(v), o.map.v(tau), cms, cds, settings)
    pin.computeConstraintDynamicsDerivatives(o.model, data, cms, cds, settings)
    return (o.map.mat(data.ddq_dq.copy()), o.map.mat(data.ddq_dv.copy()), o.map.mat(data.ddq_dtau.copy()),
            data.dlambda_dq @ P, data.dlambda_dv @ P, data.dlambda_dtau @ P)

