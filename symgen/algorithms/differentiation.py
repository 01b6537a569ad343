"""The third route to the Christoffel-consistent Coriolis matrix: differentiation of the Coriolis
and centripetal terms (Wensing & Slotine, Sec. VI-D, eqs. 27-29), beside Algorithm 1 and eq. (4).

With generalized coordinates, C = 1/2 d(C(q, v) v)/dv. With generalized speeds the Christoffel
symbols need not be symmetric in their last two indices, and the derivative needs a correction by
the structure constants s^l_jk = X^l . [X_j, X_k] of the speeds' basis (eq. 29):

    C*(q, v) = 1/2 [ d(C(q, v) v)/dv + H(q) K(q, v) ],      K = BlockDiag(K_1, ..., K_N),
    K_i(q, v) = Psi_i^T ((Phi_i v_i) x) Phi_i,               [Psi_i Psi_i^c] = [Phi_i Phi_i^c]^-T

per joint i with Phi_i-ring = 0. A single-DoF joint has K_i = (Phi_i . Phi_i x Phi_i) = 0: for
revolute and prismatic joints C is half the velocity derivative of C v. Pinocchio's free-flyer
(speeds = the base twist in the base frame, [linear; angular]) has Phi = 1_6, Psi = 1_6 and
K_base = (v_base x), the spatial motion cross product in [linear; angular] order:

    (v x) = [[w x, u x], [0, w x]]      for v = (u, w).

d(C v)/dv is d tau/d v of inverse dynamics (gravity and M qdd do not depend on v), which the
analytical RNEA derivatives of :mod:`.derivatives` give (Carpentier & Mansard). The Christoffel
symbols follow column by column, Gamma[:, :, k] = C*(q, e_k) (C* is linear in v). Written once
over the backend: numbers (a check of Algorithm 1, tests/test_vid.py) and symbols (``symgen build
--gamma-method vid``; ``symgen tables``' route ``vid_named``), so the three routes can be compared
robot by robot.
"""
from __future__ import annotations

import numpy as np

from .crba import crba, crba_ground
from ..spatial import crm
from .derivatives import inverse_dynamics_derivatives

_NO_GRAVITY = (0.0, 0.0, 0.0)


def motion_cross(v, bk):
    """(v x) for a twist v = (u, w) in [linear; angular] order, 6 x 6: Featherstone's
    :func:`~symgen.spatial.crm` (angular first) with both orders swapped."""
    swap = [3, 4, 5, 0, 1, 2]
    return crm(np.concatenate([v[3:6], v[:3]]), bk)[np.ix_(swap, swap)]


def structure_term(robot, v, bk):
    """K(q, v) of eq. (29), n x n: zero but for a free-flyer's base block, (v_base x)."""
    n = robot.n
    K = bk.zeros((n, n))
    if robot.floating_base:
        K[:6, :6] = motion_cross(v[:6], bk)
    return K


def coriolis_by_differentiation(robot, q, v, bk, frame="ground", M=None):
    """(M, C*) at (q, v): C* = 1/2 (d tau/d v + M K), d tau/dv from the analytical RNEA
    derivatives at zero acceleration and gravity, M from the CRBA in the same coordinates (or
    ``M`` as given)."""
    n = robot.n
    _, dtau_dv = inverse_dynamics_derivatives(robot, q, v, bk.zeros(n), bk, frame, gravity=_NO_GRAVITY)
    if M is None:
        M = (crba_ground if frame == "ground" else crba)(robot, q, bk)
    if not robot.floating_base:                      # K = 0: single-DoF joints only
        return M, bk.half * dtau_dv
    return M, bk.half * (dtau_dv + M @ structure_term(robot, v, bk))


def christoffel_by_differentiation(robot, q, bk, frame="ground"):
    """Gamma[i, j, k] = C*(q, e_k)[i, j], n x n x n (the columns of C* = Gamma v); M (for the
    free-flyer's K) from one CRBA."""
    n = robot.n
    M = (crba_ground if frame == "ground" else crba)(robot, q, bk) if robot.floating_base else None
    Gamma = bk.zeros((n, n, n))
    for k in range(n):
        e_k = bk.zeros(n)
        e_k[k] = bk.const(1)
        Gamma[:, :, k] = coriolis_by_differentiation(robot, q, e_k, bk, frame, M)[1]
        bk.tick(k + 1, n)
    return Gamma


def identity_residual(C, M, dtau_dv, v, floating_base: bool) -> float:
    """max |C - 1/2 (dtau/dv + M K(v))| / max |C|, on numbers: the Sec. VI-D identity for a
    package's own outputs (``coriolis_matrix``, ``mass_matrix``, ``inverse_dynamics_derivatives``)."""
    from ..backend import NUMERIC

    n = len(v)
    K = np.zeros((n, n))
    if floating_base:
        K[:6, :6] = motion_cross(np.asarray(v, dtype=float)[:6], NUMERIC)
    scale = max(float(np.abs(C).max()), 1e-300)
    return float(np.abs(C - 0.5 * (dtau_dv + M @ K)).max() / scale)
