"""The Slotine-Li regressor Y(q, qd, qd_r, qdd_r), with Y theta = M qdd_r + C(q, qd) qd_r + g:
Wensing & Slotine, Appendix B-A (the body-level regressor helper and the blocks Y_ij).

The spatial inertia is linear in the body's ten inertial parameters, I(theta) = sum_k theta_k E_k,
in Pinocchio's ``Inertia.toDynamicParameters`` order

    theta = [m, m c_x, m c_y, m c_z, I_xx, I_xy, I_yy, I_xz, I_yz, I_zz]

(I about the body frame's origin, in its axes; the body frame is the URDF joint frame). So the
body-level regressor, whose columns are d f / d theta_k for f = I a + B(v, I) w (Algorithm 3,
line 8), is

    Y_body[:, k] = E_k a + B(v, E_k) w                    (B of eq. (10) is linear in I)

and the block relating joint i to body j is Y_ij = Phi_i^T jX_i^T Y_body_j for i an ancestor of j
(i = j included), zero otherwise: Y is block upper-triangular by the tree, and its structural
zeros are exact zeros.
"""
from __future__ import annotations

import numpy as np

from ..model import GRAVITY
from ..spatial import cross, factor_B, skew
from .slotine_li import reference_sweep

PARAMETER_NAMES = ("m", "mc_x", "mc_y", "mc_z", "I_xx", "I_xy", "I_yy", "I_xz", "I_yz", "I_zz")
_ROTATIONAL = ((0, 0), (0, 1), (1, 1), (0, 2), (1, 2), (2, 2))        # I_xx, I_xy, I_yy, I_xz, I_yz, I_zz


def inertia_basis() -> tuple[np.ndarray, ...]:
    """E_0..E_9, constant 6x6 arrays with I(theta) = sum_k theta_k E_k."""
    basis = []
    E = np.zeros((6, 6))
    E[3:, 3:] = np.eye(3)
    basis.append(E)                                                   # m
    for axis in range(3):                                             # m c: [[0, S(h)], [S(h)^T, 0]]
        E = np.zeros((6, 6))
        S = skew(np.eye(3)[axis])
        E[:3, 3:], E[3:, :3] = S, S.T
        basis.append(E)
    for r, c in _ROTATIONAL:                                          # rotational inertia about the origin
        E = np.zeros((6, 6))
        E[r, c] = E[c, r] = 1.0
        basis.append(E)
    return tuple(basis)


def parameters(inertia) -> np.ndarray:
    """theta of one body (:class:`~symgen.model.Inertia`: mass, CoM, inertia about the CoM)."""
    m, c = float(inertia.mass), np.array(inertia.com, dtype=float)
    I_origin = np.array(inertia.I_com, dtype=float) + m * (c @ c * np.eye(3) - np.outer(c, c))
    return np.array([m, *(m * c), *(I_origin[r, k] for r, k in _ROTATIONAL)])


def robot_parameters(robot) -> np.ndarray:
    """theta of every body, 10 per body in ``robot.link_names`` order: Y @ theta = slotine_li."""
    return (np.concatenate([parameters(robot.bodies[i].inertia) for i in robot.inertial_bodies])
            if robot.bodies else np.zeros(0))


def body_regressor(a, v, w, bk) -> np.ndarray:
    """6x10: column k = E_k a + B(v, E_k) w."""
    Y = bk.zeros((6, 10))
    for k, E in enumerate(inertia_basis()):
        E = bk.const(E)
        Y[:, k] = E @ a + factor_B(v, E, bk) @ w
    return Y


def inertia_regressor(x, bk) -> np.ndarray:
    """6x10: the body-level regressor with no velocity, Y_i(x, 0, 0) of Algorithm 4 (lines 10-11):
    column k = E_k x, so that I(theta) x = Y_i(x, 0, 0) theta (x: a body's velocity gives its
    momentum's regressor H_i, the gravity acceleration gives G_i)."""
    Y = bk.zeros((6, 10))
    for k, E in enumerate(inertia_basis()):
        Y[:, k] = bk.const(E) @ x
    return Y


def regressor(robot, q, qd, qd_r, qdd_r, bk, gravity=GRAVITY):
    """Y, (n, 10 links): columns 10 k .. 10 k + 9 belong to the k-th link of ``robot.link_names``
    (body j = ``robot.inertial_bodies[k]``; a free-flyer's massless helpers have no columns)."""
    n, bodies = robot.n, robot.inertial_bodies
    Xup, Phi, v, w, a = reference_sweep(robot, q, qd, qd_r, qdd_r, bk, gravity)
    Y = bk.zeros((n, 10 * len(bodies)))
    for k, j in enumerate(bodies):
        U = bk.bind(body_regressor(a[j], v[j], w[j], bk), f"Yb{j}", j)    # line 8, d f_j / d theta_j
        for i, Ui in ancestor_blocks(robot, Xup, j, U, bk, "Yb"):
            Y[i, 10 * k:10 * k + 10] = Phi[i] @ Ui                     # Y_ij = Phi_i^T jX_i^T Y_body_j
    return Y


def ancestor_blocks(robot, Xup, j, U, bk, name):
    """(i, jX_i^T U) for i = j and then each ancestor of j, U (6 x 10) given in body j's frame:
    the inner loop of Algorithm 4 (lines 16-23; Algorithm 3, line 13, for Y), carrying a body's
    block to its parent's frame one joint at a time (named ``{name}{j}_{i}``)."""
    i = j
    while True:
        yield i, U
        p = robot.parent[i]
        if p < 0:
            return
        U = bk.bind(Xup[i].T @ U, f"{name}{j}_{p}", j)                  # to the parent's frame
        i = p


def regressor_ground(robot, q, qd, qd_r, qdd_r, bk, gravity=GRAVITY):
    """The same Y with each body's block carried to ground coordinates once, about the base
    origin (F_j = X_0j^* Y_body_j: forces f' = oR f, moments n' = oR n + op x f'), after which
    Y_ij = Phi_i^T F_j is one dot product per ancestor i (Phi_i in ground coordinates): one force
    transform per body instead of one per (body, ancestor) pair. Fewer operations on deep trees
    (serial 20: 29,089 against 68,607), more on shallow ones (panda: 5,362 against 4,114), so a
    build prints whichever is cheaper (``Sweep.variants``)."""
    from .frames import _ground_bodies

    n = robot.n
    _, _, v, w, a = reference_sweep(robot, q, qd, qd_r, qdd_r, bk, gravity)
    R, p = _ground_bodies(robot, q, bk)                      # turned frames: z is the joint axis
    Phi = ground_subspaces(robot, R, p, bk)
    Y = bk.zeros((n, 10 * len(robot.inertial_bodies)))
    for c, j in enumerate(robot.inertial_bodies):
        U = bk.bind(body_regressor(a[j], v[j], w[j], bk), f"Yb{j}", j)           # line 8, body j's frame
        F = to_ground(robot, U, R, p, j, bk, "Y")
        for i in robot.ancestors(j):
            Y[i, 10 * c:10 * c + 10] = Phi[i] @ F                               # Y_ij = Phi_i^T F_j
    return Y


def ground_subspaces(robot, R, p, bk) -> list:
    """Phi_i in ground coordinates from the turned frames' placements (R, p) of
    :func:`~symgen.algorithms.frames._ground_bodies`: [a; p x a] (revolute), [0; a] (prismatic)."""
    from .frames import joint_axis

    Phi = []
    for i, body in enumerate(robot.bodies):
        axis, S = joint_axis(robot, R, i), bk.zeros(6)
        if body.joint_type == "prismatic":
            S[3:] = axis
        else:
            S[:3], S[3:] = axis, bk.bind(cross(p[i], axis, bk), f"Phi{i}", i)
        Phi.append(S)
    return Phi


def to_ground(robot, U, R, p, j, bk, name):
    """A 6 x 10 block of forces in body j's (URDF) frame carried to ground coordinates about the
    base origin, X_0j^* U: forces f' = oR f, moments n' = oR n + op x f' (named ``{name}f``,
    ``{name}g``)."""
    oR = bk.bind(R[j] @ bk.const(robot.z_turns[j].T), f"oRb{j}", j)              # its URDF axes in the world
    F = bk.zeros((6, 10))
    F[3:, :] = bk.bind(oR @ U[3:, :], f"{name}f{j}", j)
    for k in range(10):
        F[:3, k] = oR @ U[:3, k] + cross(p[j], F[3:, k], bk)
    return bk.bind(F, f"{name}g{j}", j)
