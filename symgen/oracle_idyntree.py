"""iDynTree as an outside oracle of the floating base's velocity representations
(``symgen build --base-velocity``, :mod:`symgen.base_velocity`).

iDynTree's ``KinDynComputations`` computes the free-floating M, the bias C ν + g, the gravity
forces, inverse dynamics and frame Jacobians in each of its ``FrameVelocityRepresentation``\\ s:
BODY_FIXED (the base's speeds in the base frame: Pinocchio's free-flyer, symgen's ``body``),
MIXED (``mixed``) and INERTIAL_FIXED (``inertial``). Its base velocity is linear first, as
symgen's; its state is (world_H_base, joint positions, base velocity, joint velocities), which
:class:`IDynTreeOracle` builds from symgen's q (position, quaternion x y z w, joints) and ν. The
model is read from the URDF with the joints in symgen's order
(``ModelLoader.loadReducedModelFromFile(urdf, joint_names)``), the root link the floating base.

A frame Jacobian is the map from the speeds to the frame's velocity in the same representation:
MIXED gives [ṗ_frame; ω] in world axes (Pinocchio's LOCAL_WORLD_ALIGNED), INERTIAL_FIXED the
frame's spatial velocity in the world frame (WORLD), BODY_FIXED in the frame's own axes (LOCAL).
iDynTree is imported only when an oracle is made.
"""
from __future__ import annotations

import numpy as np

from .errors import SymgenError

#: symgen's --base-velocity choice -> iDynTree's FrameVelocityRepresentation name
REPRESENTATIONS = {"body": "BODY_FIXED_REPRESENTATION", "mixed": "MIXED_REPRESENTATION",
                   "inertial": "INERTIAL_FIXED_REPRESENTATION"}

#: the reference of symgen's frame functions that each representation's frame Jacobian equals
FRAME_REFERENCE = {"body": "local", "mixed": "local_world_aligned", "inertial": "world"}


class IDynTreeOracle:
    """iDynTree's ``KinDynComputations`` of the URDF ``urdf`` with the joints ``joint_names`` (symgen's
    order, the free-flyer's left out), floating at its root link, in representation ``kind``
    (body, mixed, inertial); ``gravity`` in world axes."""

    def __init__(self, urdf, joint_names, kind: str = "mixed", gravity=(0.0, 0.0, -9.81)):
        import idyntree.bindings as idt

        self.idt, self.kind = idt, kind
        loader = idt.ModelLoader()
        if not loader.loadReducedModelFromFile(str(urdf), list(joint_names)):
            raise SymgenError(f"iDynTree could not read {urdf} with joints {', '.join(joint_names)}")
        self.kd = idt.KinDynComputations()
        if not self.kd.loadRobotModel(loader.model()):
            raise SymgenError(f"iDynTree could not load the model of {urdf}")
        order = [self.kd.getDescriptionOfDegreeOfFreedom(i) for i in range(self.kd.getNrOfDegreesOfFreedom())]
        if order != list(joint_names):
            raise SymgenError(f"iDynTree's degrees of freedom {order} are not symgen's {list(joint_names)}")
        self.n = len(order)
        self.kd.setFrameVelocityRepresentation(getattr(idt, REPRESENTATIONS[kind]))
        self.gravity = np.asarray(gravity, dtype=float)

    # -- state
    def set_state(self, q, nu):
        """symgen's q (7 + n: position, quaternion x y z w, joints) and speeds ν (6 + n) in this
        oracle's representation."""
        idt = self.idt
        q, nu = np.asarray(q, dtype=float), np.asarray(nu, dtype=float)
        x, y, z, w = q[3:7] / np.linalg.norm(q[3:7])
        R = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                      [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                      [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])
        H = np.eye(4)
        H[:3, :3], H[:3, 3] = R, q[:3]
        ok = self.kd.setRobotState(idt.Transform(idt.Matrix4x4(H)), idt.VectorDynSize(q[7:]),
                                   idt.Twist.FromPython([float(x) for x in nu[:6]]), idt.VectorDynSize(nu[6:]),
                                   idt.Vector3(self.gravity))
        if not ok:
            raise SymgenError("iDynTree refused the state")

    # -- quantities (symgen's order: base linear, base angular, joints)
    def mass_matrix(self, q):
        self.set_state(q, np.zeros(6 + self.n))
        M = self.idt.FreeFloatingMassMatrix(self.kd.model())
        self.kd.getFreeFloatingMassMatrix(M)
        return M.toNumPy()

    def bias(self, q, nu):
        """C(q, ν) ν + g(q)."""
        self.set_state(q, nu)
        return self._generalized(self.kd.generalizedBiasForces)

    def gravity_forces(self, q):
        """g(q). In MIXED and INERTIAL, iDynTree 15's generalizedGravityForces right after
        setRobotState returns base wrenches off by 40-160 N on arm4 (not in BODY_FIXED) until a call
        such as getFreeFloatingMassMatrix has refreshed what it caches; that call comes first here,
        and then it equals its own inverseDynamics(q, 0, 0)."""
        self.mass_matrix(q)
        return self._generalized(self.kd.generalizedGravityForces)

    def inverse_dynamics(self, q, nu, nud):
        idt = self.idt
        self.set_state(q, nu)
        out = idt.FreeFloatingGeneralizedTorques(self.kd.model())
        links = idt.LinkWrenches(self.kd.model())
        links.zero()
        self.kd.inverseDynamics(idt.Vector6(np.asarray(nud[:6], dtype=float)),
                                idt.VectorDynSize(np.asarray(nud[6:], dtype=float)), links, out)
        return np.concatenate([out.baseWrench().asVector().toNumPy(), out.jointTorques().toNumPy()])

    def frame_jacobian(self, q, frame: str):
        self.set_state(q, np.zeros(6 + self.n))
        index = self.kd.getFrameIndex(frame)
        if index < 0:
            raise SymgenError(f"iDynTree has no frame {frame!r}")
        J = self.idt.MatrixDynSize(6, 6 + self.n)
        self.kd.getFrameFreeFloatingJacobian(index, J)
        return J.toNumPy()

    def frame_bias_acceleration(self, q, nu, frame: str):
        """J̇ ν of the frame in this representation (getFrameBiasAcc): in MIXED the classical
        acceleration at ν̇ = 0 in world axes (Pinocchio's LOCAL_WORLD_ALIGNED)."""
        self.set_state(q, nu)
        return self.kd.getFrameBiasAcc(frame).toNumPy()

    def _generalized(self, method):
        out = self.idt.FreeFloatingGeneralizedTorques(self.kd.model())
        method(out)
        return np.concatenate([out.baseWrench().asVector().toNumPy(), out.jointTorques().toNumPy()])


def package_values(oracle, present, state, manifest) -> dict:
    """iDynTree's value of each function of ``present`` (the package's registry quantities) it computes in its representation: M, g,
    inverse dynamics (which holds C qd + g) and the frame Jacobian in the matching reference (when
    iDynTree knows every frame by name). C itself iDynTree has not: the identities and the reference
    check it."""
    functions = {x.key: x.function for x in present}
    out = {}
    q, nu = state["q"], state["qd"]
    if "M" in functions:
        out[functions["M"]] = oracle.mass_matrix(q)
    if "g" in functions:
        out[functions["g"]] = oracle.gravity_forces(q)
    if "tau" in functions and "f_ext" not in state:
        out[functions["tau"]] = oracle.inverse_dynamics(q, nu, state["qdd"])
    key = {"local": "J_local", "world": "J_world", "local_world_aligned": "J"}[FRAME_REFERENCE[oracle.kind]]
    frames = manifest.get("frames") or ()
    if key in functions and frames and all(oracle.kd.getFrameIndex(f) >= 0 for f in frames):
        out[functions[key]] = np.stack([oracle.frame_jacobian(q, f) for f in frames])
    return out
