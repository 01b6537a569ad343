"""Pinocchio's centroidal and frame-motion quantities at symgen states, for ``symgen verify`` and the
tests: functions of an oracle ``o`` (:class:`~symgen.pinocchio_oracle.PinOracle`, or for a
``--mimic`` robot :class:`~symgen.pinocchio_oracle.EmbeddedPinOracle`, whose full model gives the
value at q_full = G q + o, v_full = G v and a Jacobian's columns are then projected by G).

    center_of_mass           centerOfMass
    com_jacobian             jacobianCenterOfMass
    centroidal_map           computeCentroidalMap                         (data.Ag)
    centroidal_inertia       ccrba                                        (data.Ig)
    centroidal_momentum      ccrba                                        (data.hg)
    centroidal_bias          computeCentroidalMomentumTimeVariation(q, v, 0)  (data.dhg)
    frame_velocity           forwardKinematics(q, v) + getFrameVelocity
    frame_acceleration_bias  forwardKinematics(q, v, 0) + getFrameClassicalAcceleration
    frame_jacobian_dot       computeJointJacobiansTimeVariation + getFrameJacobianTimeVariation

Frames: LOCAL_WORLD_ALIGNED, or the ``reference`` given (a ``pin.ReferenceFrame`` name: "LOCAL",
"WORLD"); vectors [linear; angular] (Pinocchio's order, symgen's output order).
"""
from __future__ import annotations

import numpy as np


def _unpack(o, q, v=None):
    """(PinOracle of the full model, Pinocchio's q, Pinocchio's v, column map): the map takes a
    (..., nv_pin) array to symgen's columns (P, then G for an embedded robot)."""
    full = getattr(o, "full", None)
    if full is None:
        cols = o.map.P
        return o, o.map.q(q), (None if v is None else o.map.v(v)), cols
    cols = full.map.P @ o.G
    return full, full.map.q(o.q(q)), (None if v is None else full.map.v(o.v(v))), cols


def center_of_mass(o, q):
    p, qp, _, _ = _unpack(o, q)
    return np.array(p.pin.centerOfMass(p.model, p.data, qp))


def com_jacobian(o, q):
    p, qp, _, cols = _unpack(o, q)
    return np.array(p.pin.jacobianCenterOfMass(p.model, p.data, qp)) @ cols


def centroidal_map(o, q):
    p, qp, _, cols = _unpack(o, q)
    return np.array(p.pin.computeCentroidalMap(p.model, p.data, qp)) @ cols


def centroidal_inertia(o, q):
    p, qp, _, _ = _unpack(o, q)
    p.pin.ccrba(p.model, p.data, qp, np.zeros(p.model.nv))
    return np.array(p.data.Ig.matrix())


def centroidal_momentum(o, q, v):
    p, qp, vp, _ = _unpack(o, q, v)
    p.pin.ccrba(p.model, p.data, qp, vp)
    return np.array(p.data.hg.vector)


def centroidal_bias(o, q, v):
    p, qp, vp, _ = _unpack(o, q, v)
    p.pin.computeCentroidalMomentumTimeVariation(p.model, p.data, qp, vp, np.zeros(p.model.nv))
    return np.array(p.data.dhg.vector)


def frame_velocity(o, q, v, reference="LOCAL_WORLD_ALIGNED"):
    p, qp, vp, _ = _unpack(o, q, v)
    p.pin.forwardKinematics(p.model, p.data, qp, vp)
    p.pin.updateFramePlacements(p.model, p.data)
    return np.array([p.pin.getFrameVelocity(p.model, p.data, f, getattr(p.pin, reference)).vector
                     for f in p.frame_ids]).reshape(len(p.frame_ids), 6)


def frame_acceleration_bias(o, q, v, reference="LOCAL_WORLD_ALIGNED"):
    p, qp, vp, _ = _unpack(o, q, v)
    p.pin.forwardKinematics(p.model, p.data, qp, vp, np.zeros(p.model.nv))
    p.pin.updateFramePlacements(p.model, p.data)
    return np.array([p.pin.getFrameClassicalAcceleration(p.model, p.data, f, getattr(p.pin, reference)).vector
                     for f in p.frame_ids]).reshape(len(p.frame_ids), 6)


def frame_jacobian_dot(o, q, v, reference="LOCAL_WORLD_ALIGNED"):
    p, qp, vp, cols = _unpack(o, q, v)
    p.pin.computeJointJacobiansTimeVariation(p.model, p.data, qp, vp)
    p.pin.updateFramePlacements(p.model, p.data)
    # reshaped: Pinocchio gives a one-column matrix as a 6-vector
    return np.array([np.reshape(p.pin.getFrameJacobianTimeVariation(p.model, p.data, f, getattr(p.pin, reference)),
                                (6, -1)) @ cols for f in p.frame_ids])
