"""Kinematics the algorithms start from, in the two coordinate choices they run in.

    body_frames    body frames: per body, Xup_i = iXp(i) = XJ(q_i) Xtree_i and Phi_i (constant
                   in body i); the spatial inertias I_i come from :func:`body_inertia`
    ground_frames  ground (base) coordinates, the paper's footnote 2: per body, Phi_i(q) and
                   I_i(q), both about the base origin; no transforms are needed afterwards
    local_frames   body frames turned so that each joint axis is z (Pinocchio's local
                   convention): per body a :class:`LocalFrame` that moves 10-number inertias
                   (m, h = m c, Ibar about the origin), forces and motions (two 3-vectors each)
                   across its joint with a rotation about z, a constant rotation and a constant shift

The inertias are the model's constants (folded into generated code), or, for a robot seen
through :func:`with_parameters`, built from inertial parameters theta (10 per body, Pinocchio's
``toDynamicParameters`` order, in the body frame: see :mod:`symgen.algorithms.regressor`), numbers
(a reference with another payload) or symbols (``symgen build --parametric``). The spatial
inertia is linear in theta, so the algorithms run unchanged on either.

Joint axes are fixed in the body frame (Phi_ring = 0), as the paper's algorithms assume.

A floating base (Pinocchio's free-flyer, :func:`symgen.model.free_flyer_bodies`) is six bodies
that share the base frame. Both coordinate choices then take the BASE frame as their reference
("ground" is the base frame): M, C, Gamma and the velocity terms do not depend on where the base is
or how it is turned, so no quaternion entry enters them; gravity is rotated into the base frame
(:func:`root_gravity`), and world placements compose the base pose at the end (frame kinematics).
The free-flyer's columns of Phi are the identity's; the rate of each is v_base x Phi_k, with the
base's whole velocity (:func:`rate_velocity`), which the algorithms use wherever single-DoF joints
use v_i x Phi_i; in accelerations, sum_k (v_base x Phi_k) v_k = v_base x v_base = 0.
"""
from __future__ import annotations

import numpy as np

from .axisymmetric import turns
from .turns import turned_columns
from .spatial import axis_angle, cross, inertia_form, inertia_parts, mcI, plux, rotate_symmetric, skew


def with_parameters(robot, theta=None):
    """``robot`` (a tree) with the inertial parameters ``theta`` (10 per body, numbers or symbols)
    instead of its URDF's (:meth:`symgen.model.Robot.with_parameters`); ``theta`` None: the robot
    itself."""
    return robot.with_parameters(theta)


def parameters_of(robot, i: int):
    """theta_i (10 entries) of a robot with parameters (:func:`with_parameters`), or None."""
    theta = robot.theta
    if theta is None or i not in robot.inertial_bodies:     # (a massless body of a joint with several speeds)
        return None
    k = robot.inertial_bodies.index(i)
    return theta[10 * k:10 * k + 10]


def armature(robot, i) -> float:
    """The armature of velocity i (0.0 when the robot has none): the reflected rotor inertia that
    Pinocchio's ``model.armature`` adds to M's diagonal. Every algorithm that forms M, a joint-space
    pivot (ABA's D_i) or tau adds it through :func:`plus_armature`."""
    values = robot.armature
    return float(values[i]) if values else 0.0


def plus_armature(robot, i, x, factor=None):
    """x + armature_i (a diagonal entry of M, a pivot D_i), or x + armature_i * factor (a
    force: tau_i gains armature_i qdd_i); x itself when the armature is 0, so a robot without one
    prints the same code as before."""
    a = armature(robot, i)
    if a == 0.0:
        return x
    return x + (a if factor is None else a * factor)


def joint_position(robot, q, i):
    """q_i, the coordinate of body i's joint (not for the free-flyer's bodies)."""
    return q[robot.q_index[i]]


def root_gravity(robot, q, gravity, bk):
    """The gravity acceleration (3-vector) in the algorithms' reference frame: ``gravity`` as
    given for a fixed base; for a floating base, turned into the base frame, R^T g with R the
    base orientation (:func:`base_placement`)."""
    g = bk.const(gravity)
    if not robot.floating_base:
        return g
    R, _ = base_placement(robot, q, bk)
    return bk.bind(R.T @ g, "gb")


def base_acceleration(robot, q, gravity, bk):
    """a_0 = -a_g: gravity as a fictitious acceleration of the reference frame (Featherstone's
    trick), [0; -g] with g from :func:`root_gravity`."""
    a0 = bk.zeros(6)
    a0[3:] = -root_gravity(robot, q, gravity, bk)
    return a0


def base_placement(robot, q, bk):
    """(R, p): the base frame's orientation and origin in the world, for a floating base (the
    free-flyer's joint motion, :func:`joint_motion`)."""
    R, p = joint_motion(robot.joint_models[0], q, bk)
    return bk.bind(R, "oRb"), p


def quaternion_matrix(x, y, z, w, bk, name):
    """The rotation of the quaternion (x, y, z, w) (Pinocchio's storage order), used as the
    rotation of quat/|quat|: R = 1 + s (w [u]x + [u]x^2) with u = (x, y, z) and s = 2 / |quat|^2,
    so an input that drifted off the unit sphere gives the rotation of its direction
    (Pinocchio's quaternion-to-matrix assumes a unit quaternion and would give a matrix that is
    no rotation)."""
    s = bk.bind(2 / (x * x + y * y + z * z + w * w), name)
    R = bk.zeros((3, 3))
    R[0, 0], R[1, 1], R[2, 2] = 1 - s * (y * y + z * z), 1 - s * (x * x + z * z), 1 - s * (x * x + y * y)
    R[0, 1], R[1, 0] = s * (x * y - z * w), s * (x * y + z * w)
    R[0, 2], R[2, 0] = s * (x * z + y * w), s * (x * z - y * w)
    R[1, 2], R[2, 1] = s * (y * z - x * w), s * (y * z + x * w)
    return R


def joint_motion(joint, q, bk):
    """(R, p): the child frame of a joint with several velocities in its joint frame, from its
    slice of q (Pinocchio's joint placements): free-flyer (R(quat), position), spherical
    (R(quat), 0), planar (Rz by (cos, sin) as given, as Pinocchio reads them, (x, y, 0))."""
    c = q[joint.idx_q:joint.idx_q + joint.nq]
    p = bk.zeros(3)
    if joint.kind == "freeflyer":
        p[:] = c[0:3]
        return quaternion_matrix(c[3], c[4], c[5], c[6], bk, "qs" if joint.first == 0 else f"qs{joint.first}"), p
    if joint.kind == "spherical":
        return quaternion_matrix(c[0], c[1], c[2], c[3], bk, f"qs{joint.first}"), p
    R = bk.zeros((3, 3))
    R[0, 0], R[0, 1], R[1, 0], R[1, 1], R[2, 2] = c[2], -c[3], c[3], c[2], bk.number(1.0)
    p[0], p[1] = c[0], c[1]
    return R, p


def rate_velocity(robot, v, Phi, qd, i, bk):
    """The velocity that turns Phi_i: v_i for a single-DoF joint (v_i x Phi_i = v_p x Phi_i);
    for the bodies of a joint with several velocities (free-flyer, spherical, planar), the whole
    velocity of its child frame, v_first + sum_k Phi_k qd_k over the joint's other bodies (not
    the chain's partial sum v_i): its columns are fixed in one frame, the child's. At the root
    free-flyer v_first = Phi_0 qd_0."""
    if not robot.in_group(i):
        return v[i]
    joint = robot.joint_of[i]
    first = joint.first
    start = Phi[first] * qd[first] if first < robot.free else v[first]
    return bk.bind(sum((Phi[k] * qd[k] for k in range(first + 1, joint.last + 1)), start),
                   "vbase" if first < robot.free else f"vj{first}", joint.last)


def parameter_inertia(theta, bk):
    """The spatial inertia I(theta) = sum_k theta_k E_k about the frame origin (see
    :func:`symgen.algorithms.regressor.inertia_basis`): [[I_O, S(h)], [S(h)^T, m 1]]."""
    A = bk.zeros((3, 3))
    for k, (r, c) in enumerate(((0, 0), (0, 1), (1, 1), (0, 2), (1, 2), (2, 2))):
        A[r, c] = A[c, r] = theta[4 + k]
    return inertia_form(theta[0], theta[1:4], A, bk)


def body_inertia(robot, i: int, bk):
    """The spatial inertia of body i about its origin, in its frame: the model's constant, or
    that of the robot's parameters (:func:`with_parameters`)."""
    theta = parameters_of(robot, i)
    return bk.const(robot.I[i]) if theta is None else parameter_inertia(theta, bk)


def body_frames(robot, q, bk):
    """Return (Xup, Phi): per body i, the motion transform iXp(i) from its parent's frame to its
    own at q, and its motion subspace Phi_i in its own frame."""
    Xup, Phi = [], []
    for i, body in enumerate(robot.bodies):
        axis = bk.const(body.axis)
        if robot.is_free(i) or (robot.in_group(i) and robot.joint_of[i].first != i) or not turns(robot, i):
            Xup.append(bk.const(robot.Xtree[i]))            # the base frame (the reference), the
            Phi.append(bk.const(robot.S[i]))                # child frame of the joint's first, or an
            continue                                        # axisymmetric rotor (symgen.axisymmetric)
        if robot.in_group(i):                               # moved by the joint's configuration
            R, pj = joint_motion(robot.joint_of[i], q, bk)
            XJ = plux(R.T, pj, bk)
            Xup.append(bk.bind(XJ @ bk.const(robot.Xtree[i]), f"X{i}", i))
            Phi.append(bk.const(robot.S[i]))
            continue
        qi = joint_position(robot, q, i)
        if body.joint_type == "prismatic":
            XJ = plux(bk.const([[1, 0, 0], [0, 1, 0], [0, 0, 1]]), axis * qi, bk)
        else:
            # E = R^T rotates parent coordinates into the rotated (body) frame
            R = axis_angle(axis, bk.cos(qi), bk.sin(qi), bk)
            XJ = plux(R.T, bk.zeros(3), bk)
        Xup.append(bk.bind(XJ @ bk.const(robot.Xtree[i]), f"X{i}", i))
        Phi.append(bk.const(robot.S[i]))                    # the model keeps Featherstone's S
    return Xup, Phi


def ground_frames(robot, q, bk, first_moments: bool = False, placements: bool = False):
    """Return (Phi, I): per body, its motion subspace and its spatial inertia in ground (base)
    coordinates, about the base origin — the paper's footnote 2, as Pinocchio does.

    Works with 3x3 rotations and 3-vectors down the tree (no 6x6 transforms), in body frames
    turned so that each joint axis is z (:attr:`Robot.z_aligned`): with R0, p0 the orientation
    and origin of joint i's frame in ground coordinates, the axis is a = R0 e_z (a column, no
    arithmetic), Phi_i = [a; p0 x a] (revolute) or [0; a] (prismatic), the body's orientation is
    R0 Rz(q_i) and its inertia ``mcI(m, c, R Ic R^T)`` with its CoM c in ground coordinates.
    ``first_moments``: the inertias' h = m c named (:func:`_ground_mcI`), for the algorithms that
    apply each inertia to several vectors (CRBA, ABA: humanoid M 3,948 -> 3,735 operations, FD
    9,846 -> 9,513); where h is read once (gravity) the bare product folds with its factor.
    ``placements``: (Phi, I, R, p), with each body's turned frame's orientation and origin.
    """
    R, p, Phi, I = [None] * robot.n, [None] * robot.n, [], []
    for i, (body, (Rt, t, com, Icom)) in enumerate(zip(robot.bodies, robot.z_aligned)):
        Rt, t = bk.const(Rt), bk.const(t)
        par = body.parent
        if par < 0:
            R0, p0 = Rt, t
        else:
            R0 = bk.bind(R[par] @ Rt, f"R0_{i}", i)                      # joint frame, q_i = 0
            p0 = bk.bind(p[par] + R[par] @ t, f"p{i}", i)
        a = R0[:, 2]                                                    # the axis in ground
        Phi_i = bk.zeros(6)
        if robot.is_free(i):                            # the base frame is the reference
            Phi_i[:] = bk.const(robot.S[i])
            R[i], p[i] = R0, p0
        elif robot.in_group(i):                         # a joint with several velocities: its
            joint = robot.joint_of[i]                   # bodies share the child frame (no turn)
            if joint.first == i:
                RJ, pJ = joint_motion(joint, q, bk)
                R[i] = bk.bind(R0 @ RJ, f"R{i}", i)
                p[i] = bk.bind(p0 + R0 @ pJ, f"p{i}", i) if joint.kind != "spherical" else p0
            else:
                R[i], p[i] = R[par], p[par]
            a = R[i] @ bk.const(body.axis)
            if body.joint_type == "prismatic":
                Phi_i[3:] = a
            else:
                Phi_i[:3] = a
                Phi_i[3:] = bk.bind(cross(p[i], a, bk), f"Phi{i}", i)
        elif body.joint_type == "prismatic":
            Phi_i[3:] = a
            R[i], p[i] = R0, bk.bind(p0 + a * joint_position(robot, q, i), f"p{i}", i)
        else:
            Phi_i[:3] = a
            Phi_i[3:] = bk.bind(cross(p0, a, bk), f"Phi{i}", i)
            if not turns(robot, i):                     # an axisymmetric rotor: R0 Rz(0)
                R[i], p[i] = R0, p0
            else:
                c, s = bk.cos(joint_position(robot, q, i)), bk.sin(joint_position(robot, q, i))
                Ri = bk.zeros((3, 3))                                   # R0 Rz(q_i)
                Ri[:, 0], Ri[:, 1] = turned_columns(robot.z_aligned[i][0], R[par] if par >= 0 else None, R0, c, s, bk, i)
                Ri[:, 2] = a
                R[i], p[i] = bk.bind(Ri, f"R{i}", i), p0
        Phi.append(Phi_i)
        theta = parameters_of(robot, i)
        if theta is not None:
            I.append(_ground_inertia(theta, robot.z_turns[i], R[i], p[i], bk, i))
            continue
        inertia = body.inertia
        if inertia.mass == 0.0 and not np.any(Icom):
            I.append(bk.zeros((6, 6)))
            continue
        cg = bk.bind(p[i] + R[i] @ bk.const(com), f"c{i}", i)              # CoM in ground
        Ic = rotate_symmetric(R[i], bk.const(Icom), bk, f"Ic{i}", i)
        if first_moments:
            I.append(_ground_mcI(bk.number(inertia.mass), cg, Ic, bk, i))
        else:
            I.append(bk.bind(mcI(bk.number(inertia.mass), cg, Ic, bk), f"I{i}", i))
    return (Phi, I, R, p) if placements else (Phi, I)


def _ground_mcI(m, c, Ic, bk, i):
    """``mcI(m, c, Ic)`` about the ground origin with its first moment h = m c named once (a
    number times a temp is otherwise repeated, a product more, wherever the inertia is applied)
    and the parallel-axis term read from it: Ic + S(h) S(c)^T."""
    h = bk.zeros(3)
    for a in range(3):
        h[a] = bk.bind_always(m * c[a], f"mc{i}_{a}", i)
    Ibar = bk.zeros((3, 3))
    for a in range(3):
        for b in range(a, 3):
            if a == b:
                Ibar[a, a] = Ic[a, a] + sum(h[k] * c[k] for k in range(3) if k != a)
            else:
                Ibar[a, b] = Ibar[b, a] = Ic[a, b] - h[a] * c[b]
    return bk.bind(inertia_form(m, h, Ibar, bk), f"I{i}", i)


def _ground_inertia(theta, T, R, p, bk, i):
    """The spatial inertia of parameters ``theta`` (body frame) about the ground origin, in ground
    axes, for a body whose turned frame (body frame turned by ``T``, :attr:`Robot.z_aligned`) has
    orientation ``R`` and origin ``p``: with h and I_B the first moment and rotational inertia
    about the body origin in ground axes, H = h + m p and I_O = I_B + (p . (H + h)) 1 - (H p^T +
    p h^T) (the parallel-axis theorem written in theta, so a massless body needs no division)."""
    m = theta[0]
    Tt = bk.const(T.T)
    hB = bk.zeros(3)
    hB[:] = theta[1:4]
    IB = bk.zeros((3, 3))
    for k, (r, c) in enumerate(((0, 0), (0, 1), (1, 1), (0, 2), (1, 2), (2, 2))):
        IB[r, c] = IB[c, r] = theta[4 + k]
    Rb = bk.bind(R @ Tt, f"Rb{i}", i)                                    # the body frame (unturned)
    h = bk.bind(Rb @ hB, f"h{i}", i)                                     # first moment, ground axes
    Io = rotate_symmetric(Rb, IB, bk, f"Ib{i}", i)                      # about the body origin
    H = bk.bind(h + p * m, f"H{i}", i)                                   # about the ground origin
    d = bk.bind(p @ (H + h), f"pH{i}", i)
    I = bk.zeros((6, 6))
    for a in range(3):
        for b in range(a, 3):
            I[a, b] = I[b, a] = Io[a, b] - H[a] * p[b] - p[a] * h[b] + (d if a == b else 0)
    S = skew(H, bk)
    I[:3, 3:] = S
    I[3:, :3] = S.T
    for a in range(3):
        I[3 + a, 3 + a] = m
    return bk.bind(I, f"I{i}", i)


# ------------------------------------------------------------------ the local convention

def local_frames(robot, q, bk):
    """Per body, its :class:`LocalFrame` at q."""
    return [LocalFrame(robot, q, i, bk) for i in range(robot.n)]


def local_frames_pay(robot) -> bool:
    """Whether the local convention can win for ``robot``: its constant joint rotations (Rt of
    :attr:`Robot.z_aligned`) are signed permutations for at least half of the bodies, as on
    robots whose joint axes and frames follow coordinate axes (ur5, panda, solo12). With general
    axes every Rt is dense and the ground form wins by far (the 20-DoF chain's C: 63,323
    operations against 16,056), so the build does not trace it."""
    def permutation(R):
        R = np.asarray(R, dtype=float)
        return bool(np.all(np.isin(R, (-1.0, 0.0, 1.0))) and np.all(np.abs(R).sum(axis=0) == 1))

    if robot.has_inner_groups:          # LocalFrame moves across single-DoF joints only
        return False
    return 2 * sum(permutation(z[0]) for z in robot.z_aligned) >= robot.n


class LocalFrame:
    """Body i's frame turned (once, about its origin, by :attr:`Robot.z_turns`) so that its
    joint axis is z, and its joint: a point x here is Rt Rz(q_i) x + t in the parent's turned
    frame (revolute), Rt (x + q_i e_z) + t (prismatic) or Rt x + t (a free-flyer's bodies, which
    share the base frame); ``Rt``, ``t`` constants of :attr:`Robot.z_aligned`. ``S``: the motion
    subspace as (angular, linear) 3-vectors in the turned frame (e_z on one side for a joint)."""

    def __init__(self, robot, q, i, bk):
        self.i, self.bk = i, bk
        self.T = robot.z_turns[i]
        Rt, t = robot.z_aligned[i][:2]
        self.Rt, self.t = bk.const(Rt), bk.const(t)
        S = np.asarray(robot.S[i], dtype=float)
        self.S = (bk.const(self.T.T @ S[:3]), bk.const(self.T.T @ S[3:]))
        self.kind, self.c, self.s, self.d = None, None, None, None
        if not robot.is_free(i):
            qi = joint_position(robot, q, i)
            if robot.bodies[i].joint_type == "prismatic":
                self.kind, self.d = "slide", qi
            elif turns(robot, i):                   # (an axisymmetric rotor moves as q_i = 0)
                self.kind, self.c, self.s = "rot", bk.cos(qi), bk.sin(qi)

    def inertia(self, I6):
        """(m, h, Ibar) of a 6x6 spatial inertia about the body origin ([angular; linear]) in
        the turned frame (T^T Ibar T, T^T h: a signed permutation for a coordinate axis)."""
        T = self.bk.const(self.T)
        A, h, m = inertia_parts(I6)
        return m, T.T @ vector3(h, self.bk), T.T @ A @ T

    def _rz(self, x, transpose=False):
        """R_z(q) x (or R_z(q)^T x) for a 3-vector x."""
        c, s = self.c, (-self.s if transpose else self.s)
        out = self.bk.zeros(3)
        out[0], out[1], out[2] = c * x[0] - s * x[1], s * x[0] + c * x[1], x[2]
        return out

    def _slide(self):
        d = self.bk.zeros(3)
        d[2] = self.d
        return d

    def inertia_up(self, m, h, I):
        """(h, Ibar) of an inertia of this frame in the parent's turned frame (m unchanged)."""
        bk, i = self.bk, self.i
        if self.kind == "rot":
            Rz = bk.zeros((3, 3))
            Rz[0, 0], Rz[0, 1], Rz[1, 0], Rz[1, 1], Rz[2, 2] = self.c, -self.s, self.s, self.c, bk.number(1.0)
            h = bk.bind(self._rz(h), f"hz{i}", i)
            I = rotate_symmetric(Rz, I, bk, f"Iz{i}", i)
        elif self.kind == "slide":
            h, I = shift_inertia(m, h, I, self._slide(), bk)
        return shift_inertia(m, self.Rt @ h, rotate_symmetric(self.Rt, I, bk, f"It{i}", i), self.t, bk)

    def force_up(self, n, f, name, body):
        """A force (moment n about this origin, force f) in the parent's turned frame."""
        bk = self.bk
        if self.kind == "rot":
            n, f = self._rz(n), self._rz(f)
        elif self.kind == "slide":
            n = n + cross(self._slide(), f, bk)
        f = bk.bind(self.Rt @ f, name + "f", body)
        return bk.bind(self.Rt @ n + cross(self.t, f, bk), name + "n", body), f

    def motion_down(self, w, v):
        """A motion (angular w, linear v at the parent's origin) of the parent's turned frame in
        this one's: (E w, E (v + w x t)) and the joint's slide, E = (Rt Rz)^T."""
        bk = self.bk
        v = self.Rt.T @ (v + cross(w, self.t, bk))
        w = self.Rt.T @ w
        if self.kind == "rot":
            return self._rz(w, True), self._rz(v, True)
        if self.kind == "slide":
            return w, v + cross(w, self._slide(), bk)
        return w, v


def vector3(values, bk):
    """A 3-vector of the backend from three entries."""
    out = bk.zeros(3)
    out[0], out[1], out[2] = values
    return out


def shift_inertia(m, h, I, d, bk):
    """(h, Ibar) of an inertia whose origin moves so that the old origin is at d: h + m d and
    Ibar + 2 (d . h) 1 - d h^T - h d^T + m ((d . d) 1 - d d^T)."""
    out = bk.zeros((3, 3))
    dh, dd = d @ h, d @ d
    for a in range(3):
        for b in range(a, 3):
            e = I[a, b] - d[a] * h[b] - h[a] * d[b] - m * d[a] * d[b]
            out[a, b] = out[b, a] = e + 2 * dh + m * dd if a == b else e
    return h + m * d, out


def inertia_apply(m, h, I, w, v, bk):
    """The spatial inertia (m, h, Ibar) times the motion (w, v): (Ibar w + h x v, m v - h x w)."""
    return I @ w + cross(h, v, bk), m * v - cross(h, w, bk)
