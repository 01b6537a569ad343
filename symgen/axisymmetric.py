"""Bodies whose joint angle no inertial quantity sees: axisymmetric leaf rotors.

A leaf body on a revolute joint whose inertia is symmetric about the joint axis through the
joint origin (centre of mass on the axis, the axis a principal axis of the rotational inertia, the
two other principal moments equal) has the same spatial inertia, seen from its parent, at every
joint angle: X(q)^T I X(q) = I for the rotation X(q) about the axis. Its velocity seen from the
parent, v_p + Phi qd, does not depend on the angle either. So nothing it contributes to M, C,
Mdot, Gamma, tau, g, FD, M^-1, Slotine-Li, the derivatives, the CoM, centroidal quantities or
energies depends on its angle — GRBDA's geared rotors (Mini Cheetah's 12, MIT Humanoid's 18) are
such bodies. The inertial sweeps (:attr:`symgen.quantities.base.Sweep.inertial`, with the model's
own inertias) run on :func:`inertial_view`, in which :mod:`symgen.kinematics` takes such a body's
joint rotation as the identity (its motion subspace unchanged), so the angle's sin and cos leave
the generated code. Everything that sees the body's own frame keeps the real rotation: frame
placements and Jacobians (:mod:`symgen.algorithms.frames`), the regressors (general parameters,
``inertial=False`` sweeps) and ``--parametric`` builds (symbolic inertias).
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

#: relative tolerance of the symmetry checks (per body, on its own scale)
TOLERANCE = 1e-12


def is_axisymmetric(axis, mass: float, com, I_com, tol: float = TOLERANCE) -> bool:
    """Whether an inertia (mass, centre of mass ``com`` and rotational inertia ``I_com`` about it,
    in the body frame) is symmetric about the line through the body origin along the unit
    ``axis``: I_com = alpha a a^T + beta (1 - a a^T) up to ``tol`` relative to |I_com|, and the
    CoM's distance from the axis at most ``tol`` times the larger of |com| and the radius of
    gyration."""
    a = np.asarray(axis, dtype=float)
    c = np.asarray(com, dtype=float)
    Ic = np.asarray(I_com, dtype=float)
    alpha = a @ Ic @ a
    beta = (np.trace(Ic) - alpha) / 2
    P = np.outer(a, a)
    scale = np.linalg.norm(Ic)
    if np.linalg.norm(Ic - alpha * P - beta * (np.eye(3) - P)) > tol * scale:
        return False
    if mass == 0.0:
        return True
    length = max(np.linalg.norm(c), np.sqrt(scale / mass))
    return bool(np.linalg.norm(c - (c @ a) * a) <= tol * length)


def axisymmetric_rotors(robot) -> tuple[int, ...]:
    """The bodies of ``robot`` (indices) that are leaves on a single-DoF revolute joint with an
    inertia symmetric about that joint's axis through its origin (:func:`is_axisymmetric`)."""
    parents = {b.parent for b in robot.bodies}
    out = []
    for i, b in enumerate(robot.bodies):
        if (i in parents or b.group or robot.is_free(i) or b.joint_type not in ("revolute", "continuous")):
            continue
        inertia = b.inertia
        if inertia.mass == 0.0 and not np.any(inertia.I_com):
            continue                                    # massless: nothing to save
        if is_axisymmetric(b.axis, inertia.mass, inertia.com, inertia.I_com):
            out.append(i)
    return tuple(out)


def inertial_view(robot):
    """``robot`` for a sweep whose values depend on its (constant) inertias only through the
    algorithms: its axisymmetric rotors (:attr:`symgen.model.Robot.axisymmetric`) turn-free
    (:meth:`symgen.model.Robot.inertial`), those of the full model for a constrained robot; the
    robot itself when it has none."""
    full = robot.full
    if full is robot:
        return robot.inertial()
    view = full.inertial()
    return robot if view is full else replace(robot, full=view)


def turns(robot, i: int) -> bool:
    """Whether a sweep on ``robot`` must turn body i by its joint angle: False only for the rotors
    of an :func:`inertial_view` (:attr:`symgen.model.Robot.turn_free`)."""
    return i not in robot.turn_free
