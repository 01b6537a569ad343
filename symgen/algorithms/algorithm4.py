"""The regressors of indirect and composite adaptation: Algorithm 4 of Wensing & Slotine
(Appendix B-B), for single-DoF joints and the free-flyer, in body frames.

With the body-level regressor Y_i(a, v, w) = d/dtheta_i [I_i a + B(I_i, v) w] of Appendix B-A
(:func:`~symgen.algorithms.regressor.body_regressor`) taken with no velocity, Y_i(x, 0, 0) =
d (I_i x) / d theta_i (:func:`~symgen.algorithms.regressor.inertia_regressor`):

    for i = 1..N:
        v_i    = iXp v_p(i) + Phi_i qd_i                                      line 3
        Phid_i = (v_i x) Phi_i                                                line 6
        a_g,i  = iXp a_g,p(i)         (a_g,0 = -a_g: gravity as a base acceleration)   line 8
        H_i = Y_i(v_i, 0, 0);   G_i = Y_i(a_g,i, 0, 0)                        lines 10-11
        [Y_T]_i = 1/2 v_i^T H_i;   [Y_Vdot]_i = v_i^T G_i                     lines 12-13
    for j = N..1, i = j and up the tree:
        [Y_p]_ij = Phi_i^T H_j;  [Y_c]_ij = Phid_i^T H_j;  [Y_g]_ij = Phi_i^T G_j     lines 19-21
        H_j = iXp^T H_j;  G_j = iXp^T G_j                                      line 22

so that Y_p theta = M v = p, Y_c theta = C^T v (eq. (38)), Y_g theta = g, Y_T theta = T and
Y_Vdot theta = v^T g = dV/dt. Columns: 10 per body with parameters, in ``link_names`` order
(Pinocchio's ``toDynamicParameters`` order, the layout of ``regressor``). Line 9's F_i (the
Slotine-Li regressor Y) is :mod:`.regressor`; each function here computes only what its output
needs (a generated function is traced from one of them).

The ``_ground`` variants run lines 15-25 as the regressor's ground variant does: each body's H_j
or G_j carried to ground coordinates once (X_0j^*), then [Y]_ij = Phi_i^T F_j (Phid_i^T F_j)
with Phi_i in ground coordinates, one dot product per (body, ancestor) pair instead of a force
transform; a build prints whichever costs less for the robot (deep chains: ground).
"""
from __future__ import annotations

from ..kinematics import base_acceleration, body_frames, rate_velocity
from ..model import GRAVITY
from ..spatial import cross_motion
from .momentum import body_velocities, joint_rates
from .regressor import ancestor_blocks, ground_subspaces, inertia_regressor, to_ground


def _blocks(robot, Xup, rows, U, bk, name):
    """Lines 15-25: the (n, 10 links) matrix with [Y]_ij = rows_i^T jX_i^T U_j for i an ancestor
    of j (i = j included), zero elsewhere."""
    bodies = robot.inertial_bodies
    Y = bk.zeros((robot.n, 10 * len(bodies)))
    for k, j in enumerate(bodies):
        for i, Ui in ancestor_blocks(robot, Xup, j, U[j], bk, name):
            Y[i, 10 * k:10 * k + 10] = rows[i] @ Ui
    return Y


def _ground_blocks(robot, q, U, bk, name, qd=None):
    """Lines 15-25 in ground coordinates: [Y]_ij = Phi_i^T X_0j^* U_j, or with ``qd``, Phid_i^T
    X_0j^* U_j with Phid_i = (v_i x) Phi_i of the ground velocities v_i."""
    from .frames import ground_bodies

    R, p = ground_bodies(robot, q, bk)
    rows = ground_subspaces(robot, R, p, bk)
    if qd is not None:                                                  # line 6, ground coordinates
        v = [None] * robot.n
        for i in range(robot.n):
            par = robot.parent[i]
            v[i] = bk.bind(rows[i] * qd[i] + (v[par] if par >= 0 else 0), f"vg{i}", i)
        rows = [bk.bind(cross_motion(rate_velocity(robot, v, rows, qd, i, bk), rows[i], bk), f"Phid{i}", i)
                for i in range(robot.n)]
    bodies = robot.inertial_bodies
    Y = bk.zeros((robot.n, 10 * len(bodies)))
    for c, j in enumerate(bodies):
        F = to_ground(robot, U[j], R, p, j, bk, name)
        for i in robot.ancestors(j):
            Y[i, 10 * c:10 * c + 10] = rows[i] @ F
    return Y


def _H(robot, v, bk):
    """Line 10: H_i = Y_i(v_i, 0, 0), the regressor of body i's momentum I_i v_i."""
    return {j: bk.bind(inertia_regressor(v[j], bk), f"H{j}", j) for j in robot.inertial_bodies}


def _G(robot, q, Xup, bk, gravity):
    """Lines 1 and 8, 11: G_i = Y_i(a_g,i, 0, 0) with a_g,i the base acceleration -a_g in body i."""
    ag = [None] * robot.n
    for i in range(robot.n):
        p = robot.parent[i]
        ag[i] = bk.bind(Xup[i] @ (ag[p] if p >= 0 else base_acceleration(robot, q, gravity, bk)), f"ag{i}", i)
    return {j: bk.bind(inertia_regressor(ag[j], bk), f"G{j}", j) for j in robot.inertial_bodies}


def momentum_regressor(robot, q, qd, bk):
    """Y_p(q, v), (n, 10 links): Y_p theta = M v (= Y(q, 0, 0, v) without gravity)."""
    Xup, Phi = body_frames(robot, q, bk)
    v = body_velocities(robot, Xup, Phi, qd, bk)
    return _blocks(robot, Xup, Phi, _H(robot, v, bk), bk, "H")                    # line 19


def coriolis_transpose_regressor(robot, q, qd, bk):
    """Y_c(q, v), (n, 10 links): Y_c theta = C^T v, the same for every admissible C."""
    Xup, Phi = body_frames(robot, q, bk)
    v = body_velocities(robot, Xup, Phi, qd, bk)
    Phid = joint_rates(robot, v, Phi, qd, bk)
    return _blocks(robot, Xup, Phid, _H(robot, v, bk), bk, "H")                   # line 20


def gravity_regressor(robot, q, bk, gravity=GRAVITY):
    """Y_g(q), (n, 10 links): Y_g theta = g (= Y(q, 0, 0, 0))."""
    Xup, Phi = body_frames(robot, q, bk)
    return _blocks(robot, Xup, Phi, _G(robot, q, Xup, bk, gravity), bk, "G")      # line 21


def momentum_regressor_ground(robot, q, qd, bk):
    """Y_p with lines 15-25 in ground coordinates."""
    Xup, Phi = body_frames(robot, q, bk)
    return _ground_blocks(robot, q, _H(robot, body_velocities(robot, Xup, Phi, qd, bk), bk), bk, "H")


def coriolis_transpose_regressor_ground(robot, q, qd, bk):
    """Y_c with lines 15-25 in ground coordinates."""
    Xup, Phi = body_frames(robot, q, bk)
    return _ground_blocks(robot, q, _H(robot, body_velocities(robot, Xup, Phi, qd, bk), bk), bk, "H", qd)


def gravity_regressor_ground(robot, q, bk, gravity=GRAVITY):
    """Y_g with lines 15-25 in ground coordinates."""
    Xup, _ = body_frames(robot, q, bk)
    return _ground_blocks(robot, q, _G(robot, q, Xup, bk, gravity), bk, "G")


def kinetic_energy_regressor(robot, q, qd, bk):
    """Y_T(q, v), (10 links,): Y_T theta = T."""
    Xup, Phi = body_frames(robot, q, bk)
    v = body_velocities(robot, Xup, Phi, qd, bk)
    H = _H(robot, v, bk)
    Y = bk.zeros(10 * len(robot.inertial_bodies))
    for k, j in enumerate(robot.inertial_bodies):
        Y[10 * k:10 * k + 10] = (v[j] @ H[j]) * bk.half                          # line 12
    return Y


def gravity_power_regressor(robot, q, qd, bk, gravity=GRAVITY):
    """Y_Vdot(q, v) = v^T Y_g, (10 links,): Y_Vdot theta = v^T g = dV/dt."""
    Xup, Phi = body_frames(robot, q, bk)
    v = body_velocities(robot, Xup, Phi, qd, bk)
    G = _G(robot, q, Xup, bk, gravity)
    Y = bk.zeros(10 * len(robot.inertial_bodies))
    for k, j in enumerate(robot.inertial_bodies):
        Y[10 * k:10 * k + 10] = v[j] @ G[j]                                       # line 13
    return Y
