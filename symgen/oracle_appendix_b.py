"""Pinocchio's values of the appendix_b family (:mod:`symgen.quantities.appendix_b`), for
``symgen verify`` and the tests: each a function of an oracle (:class:`~symgen.pinocchio_oracle.PinOracle`,
or :class:`~symgen.pinocchio_oracle.EmbeddedPinOracle` for ``--mimic`` robots) and a state
(``{argument: vector}``), in symgen's order.

Where Pinocchio has the function (computeKineticEnergy, computePotentialEnergy and their
regressors) it is called on the full model at the expanded state; the rest are composed from
the oracle's own methods (crba, computeCoriolisMatrix, computeJointTorqueRegressor), so they hold
for the embedded oracle too. Pinocchio has no regressor of C^T v and no Slotine-Li regressor with
qd_r != qd: those are built column by column, C and the Slotine-Li torque being linear in the
parameters, f(theta + e_k) - f(theta) with Pinocchio's own algorithms on a model with the
parameters theta + e_k (restored afterwards).
"""
from __future__ import annotations

import numpy as np


def _unwrap(o):
    """The oracle itself, not ``symgen verify``'s memo of its methods (which would return the
    values of the model's first parameters after :func:`_parameter_columns` changed them)."""
    return o.__dict__.get("oracle", o)


def _full(o, q, *velocities):
    """(the oracle of the full model, its q and velocities): a --mimic oracle expands them."""
    if hasattr(o, "full"):
        return o.full, o.q(q), *(o.v(x) for x in velocities)
    return o, np.asarray(q, dtype=float), *(np.asarray(x, dtype=float) for x in velocities)


def _parameters(po) -> np.ndarray:
    """theta of a PinOracle's model, 10 per symgen link (the layout of ``parameters``)."""
    return np.concatenate([po.model.inertias[po.model.getJointId(po.robot.bodies[i].joint_name)].toDynamicParameters()
                           for i in po.robot.inertial_bodies])


def _parameter_columns(o, f) -> np.ndarray:
    """d f / d theta of an f linear in the parameters: column k = f(theta' + e_k) - f(theta') by
    Pinocchio, theta' the model's parameters with every mass 1 kg more (Pinocchio's inertia keeps
    the CoM h / m: a massless body, a free-flyer's base link say, would give NaN); the model's own
    parameters are restored afterwards."""
    po = o.full if hasattr(o, "full") else o
    saved = [po.model.inertias[j].copy() for j in range(po.model.njoints)]
    reference = _parameters(po)
    reference[0::10] += 1.0
    columns = []
    try:
        po.set_parameters(reference)              # on the oracle's own copy of the model
        base = np.asarray(f(), dtype=float)
        for k in range(len(reference)):
            shifted = reference.copy()
            shifted[k] += 1.0
            po.set_parameters(shifted)
            columns.append(np.asarray(f(), dtype=float) - base)
    finally:                                      # the inertias themselves back: a massless body's
        for j, inertia in enumerate(saved):       # CoM would not survive a round trip through theta
            po.model.inertias[j] = inertia
        po.data = po.model.createData()
    return np.stack(columns, axis=-1)


def _links(po, row) -> np.ndarray:
    """A Pinocchio (10 joints,) regressor row in symgen's link order."""
    return row @ np.kron(po.map.L, np.eye(10))


def kinetic_energy(o, s):
    o = _unwrap(o)
    po, q, v = _full(o, s["q"], s["qd"])
    a = np.asarray(po.model.armature, dtype=float)
    if not a.any():
        return po.pin.computeKineticEnergy(po.model, po.data, po.map.q(q), po.map.v(v))
    # Pinocchio 4.1's computeKineticEnergy leaves out the armature of its unaligned revolute joints
    # (JointModelRevoluteUnaligned; measured: one joint's armature at a time, RX/RY/RZ, spherical
    # and free-flyer counted, unaligned 0; its crba counts them all): the rigid bodies' energy from
    # Pinocchio, plus 1/2 sum armature_i v_i^2
    rigid = po.pin.Model(po.model)
    rigid.armature = np.zeros(rigid.nv)
    vp = po.map.v(v)
    return po.pin.computeKineticEnergy(rigid, rigid.createData(), po.map.q(q), vp) + 0.5 * float(a @ (vp * vp))


def potential_energy(o, s):
    o = _unwrap(o)
    po, q = _full(o, s["q"])
    return po.pin.computePotentialEnergy(po.model, po.data, po.map.q(q))


def kinetic_energy_regressor(o, s):
    o = _unwrap(o)
    po, q, v = _full(o, s["q"], s["qd"])
    return _links(po, po.pin.computeKineticEnergyRegressor(po.model, po.data, po.map.q(q), po.map.v(v)))


def potential_energy_regressor(o, s):
    o = _unwrap(o)
    po, q = _full(o, s["q"])
    return _links(po, po.pin.computePotentialEnergyRegressor(po.model, po.data, po.map.q(q)))


def momentum(o, s):
    """crba(q) v."""
    o = _unwrap(o)
    return o.mass_matrix(s["q"]) @ s["qd"]


def coriolis_transpose_product(o, s):
    """computeCoriolisMatrix(q, v)^T v."""
    o = _unwrap(o)
    return o.coriolis(s["q"], s["qd"]).T @ s["qd"]


def gravity_regressor(o, s):
    """computeJointTorqueRegressor(q, 0, 0)."""
    o = _unwrap(o)
    zero = np.zeros(len(s["qd"]) if "qd" in s else o.robot.nv)
    return o.regressor(s["q"], zero, zero)


def momentum_regressor(o, s):
    """computeJointTorqueRegressor(q, 0, v) with gravity off: Y(q, 0, v) - Y(q, 0, 0)."""
    o = _unwrap(o)
    zero = np.zeros(len(s["qd"]))
    return o.regressor(s["q"], zero, s["qd"]) - o.regressor(s["q"], zero, zero)


def gravity_power_regressor(o, s):
    """qd^T computeJointTorqueRegressor(q, 0, 0)."""
    o = _unwrap(o)
    return s["qd"] @ gravity_regressor(o, s)


def coriolis_transpose_regressor(o, s):
    """Column by column: computeCoriolisMatrix(q, v)^T v with theta + e_k."""
    o = _unwrap(o)
    return _parameter_columns(o, lambda: coriolis_transpose_product(o, s))


def adaptation_term(o, s):
    """Y^T (qd - qd_r) with Y column by column: M qdd_r + C(q, qd) qd_r + g (crba,
    computeCoriolisMatrix, computeGeneralizedGravity) with theta + e_k."""
    o = _unwrap(o)

    def slotine_li():
        return o.mass_matrix(s["q"]) @ s["qdd_r"] + o.coriolis(s["q"], s["qd"]) @ s["qd_r"] + o.gravity(s["q"])

    return _parameter_columns(o, slotine_li).T @ (s["qd"] - s["qd_r"])
