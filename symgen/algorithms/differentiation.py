"""The third route to the Christoffel-consistent Coriolis matrix: differentiation of the Coriolis
and centripetal terms (Wensing & Slotine, Sec. VI-D, eqs. 27-29), beside Algorithm 1 and eq. (4).

With generalized coordinates, C = 1/2 d(C(q, v) v)/dv. With generalized speeds the Christoffel
symbols need not be symmetric in their last two indices, and the derivative needs a correction by
the structure constants s^l_jk = X^l . [X_j, X_k] of the speeds' basis (eq. 29):

    C*(q, v) = 1/2 [ d(C(q, v) v)/dv + H(q) K(q, v) ],      K = BlockDiag(K_1, ..., K_N),
    K_i(q, v) = Psi_i^T ((Phi_i v_i) x) Phi_i,               [Psi_i Psi_i^c] = [Phi_i Phi_i^c]^-T

per joint i with Phi_i-ring = 0 (eq. 30). A single-DoF joint has K_i = (Phi_i . Phi_i x Phi_i) = 0:
for revolute and prismatic joints C is half the velocity derivative of C v. Every joint with
several velocities has its block, wherever it sits in the tree (its speeds are fixed in its child
frame: :func:`symgen.joint_models.structure_constants`). Pinocchio's free-flyer (speeds = the
twist in the child frame, [linear; angular]) has Phi = 1_6, Psi = 1_6 and K = (v x), the spatial
motion cross product in [linear; angular] order:

    (v x) = [[w x, u x], [0, w x]]      for v = (u, w);

a spherical joint (speeds: the angular velocity w) K = (w x); a planar one (vx, vy, w_z)
K = [[0, -w_z, vy], [w_z, 0, -vx], [0, 0, 0]].

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
from ..joint_models import JOINT_MODELS, structure_constants
from .derivatives import inverse_dynamics_derivatives

_NO_GRAVITY = (0.0, 0.0, 0.0)


def joint_blocks(layout) -> tuple:
    """The joints of a layout (``robot.joint_layout``, a package's ``joint_models``: name, kind,
    idx_q, nq, idx_v, nv) with a K block: ((idx_v, structure constants), ...)."""
    return tuple((idx_v, structure_constants(kind)) for _, kind, _, _, idx_v, nv in layout
                 if nv > 1 and kind in JOINT_MODELS)


def structure_term(robot, v, bk, layout=None):
    """K(q, v) of eq. (30), n x n: BlockDiag(K_1, ..., K_N), K_i = sum_j v_ij T_i[j] for each joint
    with several velocities (the root free-flyer, spherical, planar and inner free-flyer joints
    alike), zero elsewhere. ``layout``: the joints (default ``robot.joint_layout``)."""
    n = robot.n
    K = bk.zeros((n, n))
    for a, T in joint_blocks(robot.joint_layout if layout is None else layout):
        m = T.shape[0]
        for r in range(m):
            for c in range(m):
                terms = [_times(float(T[j, r, c]), v[a + j]) for j in range(m) if T[j, r, c] != 0.0]
                if terms:
                    K[a + r, a + c] = sum(terms[1:], terms[0])
    return K


def coriolis_by_differentiation(robot, q, v, bk, frame="ground", M=None):
    """(M, C*) at (q, v): C* = 1/2 (d tau/d v + M K), d tau/dv from the analytical RNEA
    derivatives at zero acceleration and gravity, M from the CRBA in the same coordinates (or
    ``M`` as given)."""
    n = robot.n
    _, dtau_dv = inverse_dynamics_derivatives(robot, q, v, bk.zeros(n), bk, frame, gravity=_NO_GRAVITY)
    if M is None:
        M = (crba_ground if frame == "ground" else crba)(robot, q, bk)
    if not joint_blocks(robot.joint_layout):        # K = 0: single-DoF joints only
        return M, bk.half * dtau_dv
    return M, bk.half * (dtau_dv + M @ structure_term(robot, v, bk))


def _times(t, x):
    """t x, with the structure constants' 1 and -1 exact (no product in the code)."""
    return x if t == 1.0 else -x if t == -1.0 else t * x


def christoffel_by_differentiation(robot, q, bk, frame="ground"):
    """Gamma[i, j, k] = C*(q, e_k)[i, j], n x n x n (the columns of C* = Gamma v); M (for the
    joints' K) from one CRBA."""
    n = robot.n
    M = (crba_ground if frame == "ground" else crba)(robot, q, bk) if joint_blocks(robot.joint_layout) else None
    Gamma = bk.zeros((n, n, n))
    for k in range(n):
        e_k = bk.zeros(n)
        e_k[k] = bk.const(1)
        Gamma[:, :, k] = coriolis_by_differentiation(robot, q, e_k, bk, frame, M)[1]
        bk.tick(k + 1, n)
    return Gamma


def identity_residual(C, M, dtau_dv, v, layout) -> float:
    """max |C - 1/2 (dtau/dv + M K(v))| / max |C|, on numbers: the Sec. VI-D identity for a
    package's own outputs (``coriolis_matrix``, ``mass_matrix``, ``inverse_dynamics_derivatives``);
    ``layout``: its ``joint_models`` (or a robot's ``joint_layout``), whose joints give K."""
    v = np.asarray(v, dtype=float)
    K = np.zeros((len(v), len(v)))
    for a, T in joint_blocks(layout):
        K[a:a + T.shape[0], a:a + T.shape[0]] = np.einsum("j,jrc->rc", v[a:a + T.shape[0]], T)
    scale = max(float(np.abs(C).max()), 1e-300)
    return float(np.abs(C - 0.5 * (dtau_dv + M @ K)).max() / scale)
