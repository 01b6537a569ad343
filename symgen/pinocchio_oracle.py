"""Pinocchio as an outside oracle: index matching and Pinocchio's quantities in symgen's order.

symgen's state is one number per joint, in ``robot.joint_names`` order (a free-flyer: seven in q,
six in v, Pinocchio's own layout). Pinocchio orders joints
by its own tree traversal and gives a continuous (unbounded revolute) joint two configuration
entries, (cos q, sin q), and one velocity entry. :class:`JointMap` matches the two by joint name
and builds the permutation ``P`` with ``v_pin = P @ v_symgen``, so that

    M_symgen = P.T @ M_pin @ P,    C_symgen = P.T @ C_pin @ P,    tau_symgen = P.T @ tau_pin.

Used by ``symgen verify --urdf`` (when Pinocchio is installed) and by the tests. Pinocchio is
imported only when a :class:`PinOracle` is made.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .algorithms.operational_space import DAMPING
from .errors import SymgenError


class OracleError(SymgenError):
    """symgen's robot and a Pinocchio model of it cannot be matched joint by joint."""


#: Pinocchio joint kinds (``shortname()`` without the "JointModel" prefix, up to the axis letter)
#: that carry one symgen joint, by symgen joint type.
_PIN_KINDS = {
    "revolute": ("JointModelRX", "JointModelRY", "JointModelRZ", "JointModelRevoluteUnaligned"),
    "continuous": ("JointModelRUBX", "JointModelRUBY", "JointModelRUBZ",
                   "JointModelRevoluteUnboundedUnaligned"),
    "prismatic": ("JointModelPX", "JointModelPY", "JointModelPZ", "JointModelPrismaticUnaligned"),
}

#: Pinocchio's joint kind of each symgen joint with several velocities (same q and v layout)
_PIN_GROUPS = {"freeflyer": "JointModelFreeFlyer", "spherical": "JointModelSpherical", "planar": "JointModelPlanar"}


def pin_model_of(robot, pin=None):
    """Pinocchio's model of ``robot`` built joint by joint (for joints no URDF can hold, e.g. a
    spherical joint): each joint placed by its first body's ``rotation``/``translation``, a
    single-DoF joint as Pinocchio's unaligned revolute (continuous too: one coordinate, as symgen's) or
    prismatic of its axis, the link's inertia
    appended to its joint; no frames (a :class:`PinOracle` adds the robot's)."""
    if pin is None:
        import pinocchio as pin
    model = pin.Model()
    joint_id = {-1: 0}
    for joint in robot.joint_models:
        b = robot.bodies[joint.first]
        parent = joint_id[b.parent] if b.parent >= 0 else 0
        placement = pin.SE3(np.array(b.rotation, dtype=float), np.array(b.translation, dtype=float))
        if joint.kind in _PIN_GROUPS:
            jm = getattr(pin, _PIN_GROUPS[joint.kind])()
        elif joint.kind == "prismatic":
            jm = pin.JointModelPrismaticUnaligned(np.array(b.axis, dtype=float))
        else:
            jm = pin.JointModelRevoluteUnaligned(np.array(b.axis, dtype=float))
        jid = model.addJoint(parent, jm, placement, joint.name)
        link = robot.bodies[joint.last]
        inertia = link.inertia
        model.appendBodyToJoint(jid, pin.Inertia(inertia.mass, np.array(inertia.com), np.array(inertia.I_com)),
                                pin.SE3.Identity())
        for i in range(joint.first, joint.last + 1):
            joint_id[i] = jid
    model.damping = np.array(robot.damping_vector, dtype=float)      # (joints added in v order)
    return model


@dataclass
class JointMap:
    """symgen <-> Pinocchio index matching for one robot and one Pinocchio model of it.

    ``P`` (nv_pin x n) is the permutation with ``v_pin = P @ v_symgen``; ``L`` (joints_pin x
    links) the one of the regressor's 10-column blocks. A revolute joint that Pinocchio made
    unbounded (nq = 2) receives (cos q, sin q); a free-flyer (nq = 7, nv = 6) is matched to
    symgen's with the same layout (position, quaternion x y z w; linear, angular velocity)."""

    n: int
    nq_pin: int
    P: np.ndarray
    #: per symgen joint: (its first entry in symgen's q, idx_q in pinocchio's q, nq there)
    q_slots: list[tuple[int, int, int]] = field(default_factory=list)
    L: np.ndarray | None = None

    @classmethod
    def build(cls, robot, model) -> "JointMap":
        names = list(robot.joint_names)
        bodies_of = {name: [i for i, b in enumerate(robot.bodies) if b.joint_name == name] for name in names}
        if model.nv != robot.n:
            pin_names = [model.names[j] for j in range(1, model.njoints)]
            raise OracleError(
                f"{robot.name}: Pinocchio has nv = {model.nv}, symgen has {robot.n} velocities\n"
                f"  only in Pinocchio: {sorted(set(pin_names) - set(names))}\n"
                f"  only in symgen:    {sorted(set(names) - set(pin_names))}")
        for j in range(1, model.njoints):
            # Pinocchio's crba/Coriolis read each subtree as one contiguous block of joints
            subtree = sorted(model.subtrees[j])
            if model.parents[j] >= j or subtree != list(range(j, j + len(subtree))):
                raise OracleError(f"{robot.name}: Pinocchio model is not in depth-first order "
                                     f"at joint {model.names[j]!r}; its results would be wrong")
        P = np.zeros((model.nv, robot.n))
        links = {b: k for k, b in enumerate(robot.inertial_bodies)}
        L = np.zeros((model.njoints - 1, len(links)))
        slots, seen = [], set()
        for j in range(1, model.njoints):
            jm, name = model.joints[j], model.names[j]
            if name not in bodies_of:
                raise OracleError(f"{robot.name}: Pinocchio joint {name!r} is not a symgen joint "
                                     f"(symgen has {names})")
            if name in seen:
                raise OracleError(f"{robot.name}: two Pinocchio joints are named {name!r}")
            seen.add(name)
            ours, kind = bodies_of[name], jm.shortname()
            group = robot.bodies[ours[0]].group
            if group:
                if kind != _PIN_GROUPS[group]:
                    raise OracleError(f"{robot.name}: joint {name!r} is symgen's {group} but {kind} in Pinocchio")
                joint = robot.joint_of[ours[0]]
                slots.append((joint.idx_q, jm.idx_q, joint.nq))
            else:
                jtype = robot.bodies[ours[0]].joint_type
                if jm.nv != 1 or jm.nq not in (1, 2):
                    raise OracleError(f"{robot.name}: joint {name!r} is {kind} with nq = {jm.nq}, "
                                         f"nv = {jm.nv}; only single-DoF joints can be matched")
                # a revolute joint Pinocchio made unbounded, or a continuous one built bounded in code
                # (pin_model_of: Python cannot give JointModelRevoluteUnboundedUnaligned an axis)
                if kind not in _PIN_KINDS[jtype] and not (jtype == "revolute" and kind in _PIN_KINDS["continuous"]) \
                        and not (jtype == "continuous" and kind in _PIN_KINDS["revolute"]):
                    raise OracleError(f"{robot.name}: joint {name!r} is {jtype} in symgen but {kind} "
                                         f"in Pinocchio")
                slots.append((robot.q_index[ours[0]], jm.idx_q, jm.nq))
            for k, i in enumerate(ours):
                P[jm.idx_v + k, i] = 1.0
            L[j - 1, links[ours[-1]]] = 1.0
        missing = [name for name in names if name not in seen]
        if missing:
            raise OracleError(f"{robot.name}: symgen joints {missing} have no Pinocchio joint")
        return cls(robot.n, model.nq, P, slots, L)

    def q(self, q_symgen) -> np.ndarray:
        """Pinocchio's configuration vector for symgen's q."""
        qp = np.zeros(self.nq_pin)
        for first, idx, nq in self.q_slots:
            if nq == 2:
                qp[idx], qp[idx + 1] = np.cos(q_symgen[first]), np.sin(q_symgen[first])
            else:
                qp[idx:idx + nq] = q_symgen[first:first + nq]
        return qp

    def v(self, v_symgen) -> np.ndarray:
        """Pinocchio's velocity (or acceleration) vector: ``P @ v``."""
        return self.P @ np.asarray(v_symgen, dtype=float)

    def vec(self, x_pin) -> np.ndarray:
        """A Pinocchio joint-space vector (forces) in symgen's order: ``P.T @ x``."""
        return self.P.T @ x_pin

    def mat(self, A_pin) -> np.ndarray:
        """A Pinocchio joint-space matrix in symgen's order: ``P.T @ A @ P``."""
        return self.P.T @ A_pin @ self.P


class PinOracle:
    """Pinocchio's quantities at symgen states, returned in symgen's order. ``frames``: the frame
    names of frame kinematics (default: the leaf links, as a build's); ``gravity``: the linear
    gravity acceleration in the root frame (default: the model's, Pinocchio's -9.81 along z),
    set on a copy of ``model`` (``model.gravity.linear``). ``passive``: forward dynamics and its
    derivatives with the passive forces (a package built with ``--passive``), which Pinocchio's aba
    leaves out: aba(q, v, tau + tau_p), :meth:`passive_force`."""

    passive = False
    #: eps of the operational-space functions' Lambda = (J M^-1 J^T + eps 1)^-1 (a package's
    #: ``--opspace-damping``; :mod:`symgen.oracle_operational_space`)
    opspace_damping = DAMPING

    def __init__(self, robot, model, pin=None, frames=None, gravity=None):
        if pin is None:
            import pinocchio as pin
        from .quantities import frames_of

        self.pin = pin
        self.robot = robot
        self.map = JointMap.build(robot, model)
        self.frames = frames_of(robot, frames)
        self._given = model
        self.model, self.frame_ids = _with_frames(pin, robot, model, self.frames)
        if gravity is not None:
            self.model = pin.Model(self.model)
            self.model.gravity.linear = np.asarray(gravity, dtype=float)
        if robot.has_armature:                            # Pinocchio's model.armature, in its v order
            self.model = pin.Model(self.model) if self.model is model else self.model
            self.model.armature = self.map.P @ robot.armature_vector
        self.data = self.model.createData()

    def set_parameters(self, theta):
        """Give the model the inertial parameters ``theta`` (10 per symgen body, each joint's
        body in Pinocchio's ``toDynamicParameters`` order, about the joint frame), in place of
        the ones it was built with (on the oracle's own model)."""
        theta = np.asarray(theta, dtype=float)
        links = self.robot.inertial_bodies
        if theta.shape != (10 * len(links),):
            raise ValueError(f"params must have shape ({10 * len(links)},), got {theta.shape}")
        if self.model is self._given:
            self.model = self.pin.Model(self.model)
        for k, i in enumerate(links):
            self.model.inertias[self.model.getJointId(self.robot.bodies[i].joint_name)] = \
                self.pin.Inertia.FromDynamicParameters(theta[10 * k:10 * k + 10])
        self.data = self.model.createData()

    def frame_placement(self, q):
        """framesForwardKinematics: oMf of each frame, (frames, 4, 4)."""
        self.pin.framesForwardKinematics(self.model, self.data, self.map.q(q))
        return np.array([self.data.oMf[f].homogeneous for f in self.frame_ids])

    def frame_jacobian(self, q, reference="LOCAL_WORLD_ALIGNED"):
        """computeJointJacobians + getFrameJacobian(``reference``, a ``pin.ReferenceFrame`` name;
        LOCAL_WORLD_ALIGNED by default), (frames, 6, n), columns in symgen's order."""
        self.pin.computeJointJacobians(self.model, self.data, self.map.q(q))
        self.pin.updateFramePlacements(self.model, self.data)
        return self._columns([self.pin.getFrameJacobian(self.model, self.data, f, getattr(self.pin, reference))
                              for f in self.frame_ids])

    def frame_velocity_derivatives(self, q, qd, reference="LOCAL_WORLD_ALIGNED"):
        """computeForwardKinematicsDerivatives + getFrameVelocityDerivatives(``reference``):
        (dv/dq, dv/dqd), each (frames, 6, n), columns in symgen's order (d/dq along the tangent)."""
        self.pin.computeForwardKinematicsDerivatives(self.model, self.data, self.map.q(q), self.map.v(qd),
                                                     np.zeros(self.model.nv))
        return self._frame_partials(self.pin.getFrameVelocityDerivatives, reference, 2)

    def frame_acceleration_derivatives(self, q, qd, qdd, reference="LOCAL_WORLD_ALIGNED"):
        """computeForwardKinematicsDerivatives + getFrameAccelerationDerivatives(``reference``):
        (dv/dq, da/dq, da/dqd, da/dqdd) of the spatial acceleration, each (frames, 6, n), in
        Pinocchio's output order."""
        self.pin.computeForwardKinematicsDerivatives(self.model, self.data, self.map.q(q), self.map.v(qd),
                                                     self.map.v(qdd))
        values = self._frame_partials(self.pin.getFrameAccelerationDerivatives, reference, 4)
        if reference == "LOCAL" or not self.robot.has_inner_groups:
            return values
        # Pinocchio 4.1's WORLD da/dq misses the columns of a joint with several velocities below the
        # root (measured against central differences of getFrameAcceleration(WORLD)); its LOCAL one
        # is right: turned to WORLD, da_W/dq_k = Ad(oMf) da_L/dq_k + S_k x a_W (S_k: the WORLD Jacobian)
        local = self._frame_partials(self.pin.getFrameAccelerationDerivatives, "LOCAL", 4)[1]
        world = self.frame_jacobian(q, "WORLD")
        self.pin.forwardKinematics(self.model, self.data, self.map.q(q), self.map.v(qd), self.map.v(qdd))
        self.pin.updateFramePlacements(self.model, self.data)
        da_dq = np.empty_like(local)
        for k, f in enumerate(self.frame_ids):
            oMf, a = self.data.oMf[f], self.pin.getFrameAcceleration(self.model, self.data, f, self.pin.WORLD)
            for c in range(local.shape[2]):
                col = self.pin.Motion(oMf.action @ local[k, :, c]) + self.pin.Motion(world[k, :, c]).cross(a)
                da_dq[k, :, c] = col.vector if reference == "WORLD" else np.r_[
                    col.linear + np.cross(col.angular, oMf.translation), col.angular]
        return values[0], da_dq, values[2], values[3]

    def _frame_partials(self, get, reference, count):
        self.pin.updateFramePlacements(self.model, self.data)
        values = [get(self.model, self.data, f, getattr(self.pin, reference)) for f in self.frame_ids]
        return tuple(self._columns([v[i] for v in values]) for i in range(count))

    def _columns(self, matrices):
        """(frames, 6, n): one 6 x nv_pin matrix per frame in symgen's columns; reshaped, as
        Pinocchio gives a one-column matrix as a 6-vector."""
        return np.array([np.reshape(m, (6, -1)) @ self.map.P for m in matrices])

    def mass_matrix(self, q):
        M = self.pin.crba(self.model, self.data, self.map.q(q)).copy()
        return self.map.mat(np.triu(M) + np.triu(M, 1).T)    # crba fills the upper triangle only

    def inverse_dynamics(self, q, qd, qdd, f_ext=None):
        """rnea with the oracle's gravity (and ``fext``: symgen's f_ext, one force per link)."""
        return self.map.vec(self.pin.rnea(self.model, self.data, self.map.q(q), self.map.v(qd), self.map.v(qdd),
                                          *self._fext(f_ext)))

    def _fext(self, f_ext):
        """() without external forces, else (Pinocchio's fext,): one pin.Force per joint (the
        universe's zero), symgen's link k on the joint moving it (``map.L``)."""
        if f_ext is None:
            return ()
        f = np.asarray(f_ext, dtype=float).reshape(-1, 6)
        forces = self.map.L @ f                           # (joints_pin - 1, 6): joint j's link's force
        return ([self.pin.Force.Zero()] + [self.pin.Force(np.array(row)) for row in forces],)

    def gravity(self, q):
        """computeGeneralizedGravity, with the oracle's gravity."""
        return self.map.vec(self.pin.computeGeneralizedGravity(self.model, self.data, self.map.q(q)))

    def regressor(self, q, qd, qdd):
        """computeJointTorqueRegressor (reference velocity = qd), rows and 10-column blocks in
        symgen's velocity/link order (block k is the joint moving link k)."""
        Y = self.pin.computeJointTorqueRegressor(self.model, self.data, self.map.q(q), self.map.v(qd),
                                                 self.map.v(qdd))
        return self.map.P.T @ Y @ np.kron(self.map.L, np.eye(10))

    def forward_dynamics(self, q, qd, tau, f_ext=None):
        """aba with the model's gravity (at tau + tau_p with :attr:`passive`; fext: see
        :meth:`inverse_dynamics`)."""
        tau = self._passive_tau(q, qd, tau)
        return self.map.vec(self.pin.aba(self.model, self.data, self.map.q(q), self.map.v(qd), self.map.v(tau),
                                         *self._fext(f_ext)))

    def passive_force(self, q, qd):
        """-model.damping * v (Pinocchio's damping, from the URDF's <dynamics damping>) minus
        symgen's springs, stiffness * (q - springref) (Pinocchio has no joint springs)."""
        damping = self.map.vec(np.asarray(self.model.damping, dtype=float) * self.map.v(qd))
        robot, spring = self.robot, np.zeros(self.robot.n)
        for i, k in enumerate(robot.stiffness_vector):
            if k:
                spring[i] = k * (q[robot.q_index[i]] - robot.springref_vector[i])
        return -damping - spring

    def _passive_tau(self, q, qd, tau):
        return np.asarray(tau, dtype=float) + (self.passive_force(q, qd) if self.passive else 0.0)

    def mass_matrix_inverse(self, q):
        """computeMinverse (it fills the upper triangle only)."""
        Minv = self.pin.computeMinverse(self.model, self.data, self.map.q(q)).copy()
        return self.map.mat(np.triu(Minv) + np.triu(Minv, 1).T)

    def inverse_dynamics_derivatives(self, q, qd, qdd, f_ext=None):
        """computeRNEADerivatives with the model's gravity: (dtau/dq, dtau/dqd) in symgen's order
        (with one coordinate per joint, d/dq is the derivative along each joint's tangent)."""
        dq, dv, _ = self.pin.computeRNEADerivatives(self.model, self.data, self.map.q(q), self.map.v(qd),
                                                    self.map.v(qdd), *self._fext(f_ext))
        return self.map.mat(dq.copy()), self.map.mat(dv.copy())

    def forward_dynamics_derivatives(self, q, qd, tau, f_ext=None):
        """computeABADerivatives with the model's gravity: (dqdd/dq, dqdd/dqd) in symgen's order (with
        :attr:`passive`, at tau + tau_p, plus tau_p's path: -M^-1 d tau_p/du)."""
        dq, dv, _ = self.pin.computeABADerivatives(self.model, self.data, self.map.q(q), self.map.v(qd),
                                                   self.map.v(self._passive_tau(q, qd, tau)), *self._fext(f_ext))
        dq, dv = self.map.mat(dq.copy()), self.map.mat(dv.copy())
        if self.passive:                   # through tau_p: -M^-1 diag(stiffness), -M^-1 diag(damping)
            Minv = self.mass_matrix_inverse(q)
            dq = dq - Minv * self.robot.stiffness_vector
            dv = dv - Minv * self.map.vec(np.asarray(self.model.damping, dtype=float))
        return dq, dv

    def coriolis(self, q, qd):
        """Pinocchio's C(q, qd), the Christoffel-consistent one for single-DoF joints."""
        return self.map.mat(self.pin.computeCoriolisMatrix(self.model, self.data, self.map.q(q),
                                                           self.map.v(qd)).copy())

    def christoffel(self, q, ks=None):
        """Gamma[:, :, k] = C(q, e_k) (C is linear in qd), for k in ``ks`` (all by default)."""
        n = self.robot.n
        ks = range(n) if ks is None else ks
        Gamma = np.zeros((n, n, len(ks)))
        for col, k in enumerate(ks):
            e = np.zeros(n)
            e[k] = 1.0
            Gamma[:, :, col] = self.coriolis(q, e)
        return Gamma

    def mass_matrix_dot_fd(self, q, qd, h=1e-6):
        """dM/dt along qd by a central difference of Pinocchio's crba (independent of any C),
        along q(t) = integrate(q, t qd) (a free-flyer's quaternion moves on the unit sphere)."""
        qp, v = self.map.q(np.asarray(q, float)), self.map.v(qd)
        M = [self.pin.crba(self.model, self.data, self.pin.integrate(self.model, qp, s * h * v)).copy()
             for s in (1.0, -1.0)]
        return self.map.mat(np.triu(M[0] - M[1]) + np.triu(M[0] - M[1], 1).T) / (2 * h)


def _with_frames(pin, robot, model, frames):
    """(model, Pinocchio frame id of each of ``frames``). Pinocchio's URDF parser makes a BODY
    frame per link and a JOINT (FIXED_JOINT) frame per joint, matched here by name and kind; a
    frame the model lacks (a model built in code, or a URDF rewritten after lumping) is added,
    to a copy, as an OP_FRAME at symgen's mount on the joint of its body (Pinocchio's joint frame
    is symgen's body frame)."""
    kinds = {"link": ("BODY",), "joint": ("JOINT", "FIXED_JOINT")}
    found = {(f.name, str(f.type).rsplit(".", 1)[-1]): k for k, f in enumerate(model.frames)}
    ids, copied = [], False
    for f in frames:
        fid = next((found[(f.name, t)] for t in kinds.get(f.kind, ()) if (f.name, t) in found), None)
        if fid is None:
            if not copied:
                model, copied = pin.Model(model), True
            joint = model.getJointId(robot.bodies[f.body].joint_name) if f.body >= 0 else 0
            placement = pin.SE3(np.array(f.rotation, dtype=float), np.array(f.translation, dtype=float))
            fid = model.addFrame(pin.Frame(f"{f.kind} {f.name}", joint, placement, pin.FrameType.OP_FRAME))
        ids.append(fid)
    return model, ids


class EmbeddedPinOracle:
    """Pinocchio's quantities of a robot with mimic joints embedded (``--mimic``), from
    Pinocchio's model WITHOUT mimic joints (every joint independent, as ``buildModelFromUrdf``
    reads a URDF by default) and the constant embedding q_full = G q + o (dense ``G``, ``o``):
    M = G^T M_full G, C = G^T C_full(q_full, G v) G, tau = G^T tau_full(q_full, G v, G a), ...;
    forward dynamics and M^-1 solve the reduced system with NumPy. Pinocchio's own ``mimic=True``
    algorithms are not used: in Pinocchio 4.1 its computeCoriolisMatrix breaks C v = rnea - g and
    Mdot = C + C^T, and aba, computeMinverse, the derivatives and the regressor refuse mimic joints.

    ``robot``: the :class:`symgen.mimic.Embedded` system (its ``full`` model is matched with
    ``model``); ``G``, ``offset``: the embedding (default: the robot's own)."""

    def __init__(self, robot, model, pin=None, frames=None, gravity=None, G=None, offset=None):
        self.robot = robot
        self.full = PinOracle(robot.full, model, pin, frames=frames, gravity=gravity)
        self.G = robot.embedding.matrix() if G is None else np.asarray(G, dtype=float)
        self.o = robot.embedding.offsets() if offset is None else np.asarray(offset, dtype=float)
        self.lead_q, self.lead_v = robot.embedding.lead_q, robot.embedding.lead_v   # a free-flyer's 7, 6

    @property
    def frames(self):
        """The frames of frame kinematics (the full model's: an embedding keeps every frame)."""
        return self.full.frames

    def set_parameters(self, theta):
        """Every body's parameters (the mimicking joints' bodies included), as :class:`PinOracle`."""
        self.full.set_parameters(theta)

    def q(self, q):
        """q_full: a free-flyer's q[0:7] as they are, the joints G q + o."""
        q, lq, lv = np.asarray(q, dtype=float), self.lead_q, self.lead_v
        return np.r_[q[:lq], self.G[lv:, lv:] @ q[lq:] + self.o[lq:]]

    def v(self, v):
        return self.G @ np.asarray(v, dtype=float)

    def spanning_velocity(self, q, v):
        """G v: the full model's speeds (a package's ``spanning_velocity``)."""
        return self.v(v)

    def _mat(self, A):
        return self.G.T @ A @ self.G

    def frame_placement(self, q):
        return self.full.frame_placement(self.q(q))

    def frame_jacobian(self, q, reference="LOCAL_WORLD_ALIGNED"):
        return self.full.frame_jacobian(self.q(q), reference) @ self.G

    def frame_velocity_derivatives(self, q, qd, reference="LOCAL_WORLD_ALIGNED"):
        """The full model's partials at (q_full, G qd), columns projected by G (q_full = G q + o)."""
        return tuple(d @ self.G for d in self.full.frame_velocity_derivatives(self.q(q), self.v(qd), reference))

    def frame_acceleration_derivatives(self, q, qd, qdd, reference="LOCAL_WORLD_ALIGNED"):
        return tuple(d @ self.G for d in self.full.frame_acceleration_derivatives(self.q(q), self.v(qd), self.v(qdd),
                                                                                 reference))

    def mass_matrix(self, q):
        return self._mat(self.full.mass_matrix(self.q(q)))

    def inverse_dynamics(self, q, qd, qdd):
        return self.G.T @ self.full.inverse_dynamics(self.q(q), self.v(qd), self.v(qdd))

    def gravity(self, q):
        return self.G.T @ self.full.gravity(self.q(q))

    def regressor(self, q, qd, qdd):
        return self.G.T @ self.full.regressor(self.q(q), self.v(qd), self.v(qdd))

    def coriolis(self, q, qd):
        return self._mat(self.full.coriolis(self.q(q), self.v(qd)))

    def christoffel(self, q, ks=None):
        """Gamma_ijk = sum G_ai G_bj G_ck Gamma_full_abc, from Pinocchio's full Gamma."""
        Gamma = np.einsum("ai,bj,ck,abc->ijk", self.G, self.G, self.G, self.full.christoffel(self.q(q)))
        return Gamma if ks is None else Gamma[:, :, list(ks)]

    def forward_dynamics(self, q, qd, tau):
        """qdd of the reduced system: M qdd = tau - G^T rnea_full(q_full, G v, 0)."""
        bias = self.inverse_dynamics(q, qd, np.zeros(len(qd)))
        return np.linalg.solve(self.mass_matrix(q), np.asarray(tau, dtype=float) - bias)

    def mass_matrix_inverse(self, q):
        Minv = np.linalg.inv(self.mass_matrix(q))
        return (Minv + Minv.T) / 2

    def inverse_dynamics_derivatives(self, q, qd, qdd):
        dq, dv = self.full.inverse_dynamics_derivatives(self.q(q), self.v(qd), self.v(qdd))
        return self._mat(dq), self._mat(dv)

    def forward_dynamics_derivatives(self, q, qd, tau):
        """-M^-1 (dtau/dq, dtau/dqd) of the reduced system at qdd = FD(q, qd, tau)."""
        qdd = self.forward_dynamics(q, qd, tau)
        M = self.mass_matrix(q)
        return tuple(-np.linalg.solve(M, d) for d in self.inverse_dynamics_derivatives(q, qd, qdd))

    def mass_matrix_dot_fd(self, q, qd, h=1e-6):
        q, qd = np.asarray(q, float), np.asarray(qd, float)
        return (self.mass_matrix(q + h * qd) - self.mass_matrix(q - h * qd)) / (2 * h)


def oracle_for(robot, model, pin=None, frames=None, gravity=None):
    """The oracle of ``robot``: :class:`PinOracle`, or :class:`EmbeddedPinOracle` for a robot with
    mimic joints embedded (``model``: Pinocchio's model of the full robot, without mimic joints)."""
    if robot.embedding is not None:
        return EmbeddedPinOracle(robot, model, pin, frames=frames, gravity=gravity)
    return PinOracle(robot, model, pin, frames=frames, gravity=gravity)
