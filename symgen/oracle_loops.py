"""Pinocchio's side for mechanisms with loops (:mod:`symgen.closed`): its model of the spanning
tree, with two frames at each loop's points, gives G(q) and Ġ on its own — the constraint
Jacobian K = Uᵀ(J_pred - J_succ) (linear rows, LOCAL_WORLD_ALIGNED, and for a weld the angular
rows too; U a basis of their row space), G = [1; -K_D⁻¹K_I], and Ġ(v) w = -K_D⁻¹ Uᵀ B(Gv, Gw)
from the classical accelerations of the two points (for a weld their frames' angular
accelerations too; γ(x) = J̇(x) x at q̈ = 0 is the second derivative of their offset, B its
polarization (γ(a + b) - γ(a - b)) / 4). Then M̄ = GᵀMG, C̄ = GᵀC(q, Gv)G + GᵀMĠ, Γ̄[:, :, k] =
C̄(q, e_k), τ̄ = Gᵀ rnea(q, Gv, Ga + Ġv), the regressor likewise, frames J G.

An :class:`~symgen.pinocchio_oracle.EmbeddedPinOracle` whose G is that of the configuration last
given to :meth:`LoopPinOracle.at` (or to any method taking q): the centroidal and Appendix B
oracles read ``G`` after ``q(...)`` as for ``--mimic``.
"""
from __future__ import annotations

import numpy as np

from .errors import SymgenError
from .pinocchio_oracle import EmbeddedPinOracle, PinOracle
from .pinocchio_oracle import oracle_for as _oracle_for


def oracle_for(robot, model, pin=None, frames=None, gravity=None):
    """:func:`symgen.pinocchio_oracle.oracle_for`, with :class:`LoopPinOracle` for a mechanism
    with loops (:mod:`symgen.closed`)."""
    if robot.system is not None:
        return LoopPinOracle(robot, model, pin, frames=frames, gravity=gravity)
    return _oracle_for(robot, model, pin, frames=frames, gravity=gravity)


class LoopPinOracle(EmbeddedPinOracle):
    def __init__(self, robot, model, pin=None, frames=None, gravity=None):
        if pin is None:
            import pinocchio as pin
        self.robot, self.system, self.pin = robot, robot.system, pin
        self.full = PinOracle(robot.full, model, pin, frames=frames, gravity=gravity)
        self.lead_q = self.lead_v = 0
        self.o = np.zeros(robot.nq)
        self.loop_model = pin.Model(self.full.model)
        self.ids = []
        for c in self.system.closures:
            self.ids.append([self.loop_model.addFrame(pin.Frame(
                f"symgen_loop:{f.name}", self.loop_model.getJointId(robot.full.bodies[f.body].joint_name) if f.body >= 0 else 0,
                pin.SE3(np.eye(3), np.asarray(f.translation, dtype=float)), pin.FrameType.OP_FRAME))
                for f in (c.pred, c.succ)])
        #: per loop, the spatial rows it closes: 3 (the points' linear velocities), 6 for a weld (and
        #: the frames' angular velocities: [linear; angular] in LOCAL_WORLD_ALIGNED)
        self.spatial_rows = [c.P.shape[1] for c in self.system.closures]
        self.loop_data = self.loop_model.createData()
        self._at = None

    def at(self, q):
        """Compute G (and K, its row bases) at the spanning configuration ``q``."""
        q = np.asarray(q, dtype=float)
        if self._at is not None and np.array_equal(q, self._at):
            return
        pin, model, data, P = self.pin, self.loop_model, self.loop_data, self.full.map.P
        self._qpin = self.full.map.q(q)
        pin.computeJointJacobians(model, data, self._qpin)
        pin.updateFramePlacements(model, data)
        rows, self.U = [], []
        for (pred, succ), width in zip(self.ids, self.spatial_rows):
            J = [pin.getFrameJacobian(model, data, f, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED)[:width] @ P
                 for f in (pred, succ)]
            U, s, _ = np.linalg.svd(J[0] - J[1])
            self.U.append(U[:, :int(np.sum(s > 1e-9 * s[0]))])
            rows.append(self.U[-1].T @ (J[0] - J[1]))
        K = np.vstack(rows)
        dep, own = list(self.system.dependent), list(self.system.independent)
        self.Kinv = np.linalg.inv(K[:, dep])
        G = np.zeros((self.robot.full.n, len(own)))
        G[own, range(len(own))] = 1.0
        G[dep] = -self.Kinv @ K[:, own]
        self.G, self.K, self._at = G, K, q

    def q(self, q):
        self.at(q)
        return np.asarray(q, dtype=float)

    def spanning_velocity(self, q, v):
        """G(q) v, G from Pinocchio's frame Jacobians at q."""
        self.at(q)
        return self.G @ np.asarray(v, dtype=float)

    def _gamma(self, x):
        """Per loop, Uᵀ (classical acceleration of pred's point - succ's) at velocity x, q̈ = 0."""
        pin, model, data = self.pin, self.loop_model, self.loop_data
        pin.forwardKinematics(model, data, self._qpin, self.full.map.v(x), np.zeros(model.nv))
        out = []
        for U, (pred, succ), width in zip(self.U, self.ids, self.spatial_rows):
            a = [pin.getFrameClassicalAcceleration(model, data, f, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED).vector[:width]
                 for f in (pred, succ)]
            out.append(U.T @ (a[0] - a[1]))
        return np.concatenate(out)

    def gdot(self, q, v):
        """Ġ(q, v)."""
        self.at(q)
        Gd = np.zeros_like(self.G)
        x = self.G @ np.asarray(v, dtype=float)
        for s in range(self.G.shape[1]):
            y = self.G[:, s]
            Gd[list(self.system.dependent), s] = -self.Kinv @ ((self._gamma(x + y) - self._gamma(x - y)) / 4)
        return Gd

    def coriolis(self, q, qd):
        q = self.q(q)
        qd = np.asarray(qd, dtype=float)
        M, C = self.full.mass_matrix(q), self.full.coriolis(q, self.G @ qd)
        return self.G.T @ C @ self.G + self.G.T @ M @ self.gdot(q, qd)

    def christoffel(self, q, ks=None):
        n = self.robot.nv
        Gamma = np.stack([self.coriolis(q, np.eye(n)[k]) for k in range(n)], axis=-1)
        return Gamma if ks is None else Gamma[:, :, list(ks)]

    def _accel(self, q, qd, qdd):
        return self.G @ np.asarray(qdd, dtype=float) + self.gdot(q, qd) @ np.asarray(qd, dtype=float)

    def inverse_dynamics(self, q, qd, qdd):
        q = self.q(q)
        return self.G.T @ self.full.inverse_dynamics(q, self.G @ np.asarray(qd, dtype=float), self._accel(q, qd, qdd))

    def regressor(self, q, qd, qdd):
        q = self.q(q)
        return self.G.T @ self.full.regressor(q, self.G @ np.asarray(qd, dtype=float), self._accel(q, qd, qdd))

    def mass_matrix_dot_fd(self, q, qd, h=1e-6):
        """A central difference of M̄ along the consistent motion through q with speeds qd (the
        configurations kept on the loops by symgen's solve_loops)."""
        q = self.q(q)
        step, tree = h * (self.G @ np.asarray(qd, dtype=float)), self.robot.full
        at = [tree.q_index[i] for i in range(tree.free, tree.n)]            # M̄ ignores a free-flyer's pose
        plus, minus = q.copy(), q.copy()
        plus[at] += step[tree.free:]
        minus[at] -= step[tree.free:]
        plus, minus = self.system.solve_loops(plus), self.system.solve_loops(minus)
        return (self.mass_matrix(plus) - self.mass_matrix(minus)) / (2 * h)

    def inverse_dynamics_derivatives(self, q, qd, qdd):
        raise SymgenError("the derivatives of mechanisms with loops are not generated yet")

    forward_dynamics_derivatives = inverse_dynamics_derivatives
