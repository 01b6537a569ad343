"""The core quantities: the functions of rounds 1 and 2 (the paper's M, Mdot, C and Gamma, RNEA,
gravity, Slotine-Li and its regressor, forward dynamics, M^-1, the derivatives, frames), each
with its outputs' shapes, the sweep of :mod:`.sweeps` that yields it, its Pinocchio oracle for
``symgen verify`` and its Pinocchio call for ``symgen bench``.
"""
from __future__ import annotations

from .base import Output, PinCall, Quantity
from .sweeps import frames_of


def _qd_r_is_qd(state):
    """qd_r = qd"""
    return {**state, "qd_r": state["qd"]}


def _forces(state):
    """(f_ext,) of a state drawn for a build with external forces, else ()."""
    return () if state.get("f_ext") is None else (state["f_ext"],)


def _square(robot, opts):
    return (robot.nv, robot.nv)


def _cube(robot, opts):
    return (robot.nv, robot.nv, robot.nv)


def _vector(robot, opts):
    return (robot.nv,)


def _regressor(robot, opts):
    return (robot.nv, 10 * len(robot.link_names))


def _placements(robot, opts):
    return (len(frames_of(robot, opts.frames)), 4, 4)


def _jacobians(robot, opts):
    return (len(frames_of(robot, opts.frames)), 6, robot.nv)


# each shape in the header's size macros (codegen/files.py: shape_text): "n" nv, "F" the frames,
# "p" the inertial parameters
_square.dims, _cube.dims, _vector.dims = ("n", "n"), ("n", "n", "n"), ("n",)
_regressor.dims, _placements.dims, _jacobians.dims = ("n", "p"), ("F", 4, 4), ("F", 6, "n")


QUANTITIES = (
    Quantity("M", "mass_matrix", ("q",), (Output("M", _square, embed="matrix"),),
             "Mass matrix M(q), (n, n), by CRBA.", "crba", jax_fused=True,
             pinocchio=lambda o, s: o.mass_matrix(s["q"]),
             pin_call=PinCall(("crba",), ("q",), {"M": ("pin_cpp", "crba(model, data, qs[i]); sink = sink + data.M(0, 0);")})),
    Quantity("Mdot", "mass_matrix_dot", ("q", "qd"), (Output("Mdot", _square, embed="matrix"),),
             "dM/dt at (q, qd), (n, n), by Algorithm 1.", "algorithm1",
             pinocchio=lambda o, s: (lambda C: C + C.T)(o.coriolis(s["q"], s["qd"]))),       # eq. (2)
    Quantity("C", "coriolis_matrix", ("q", "qd"), (Output("C", _square, embed="matrix"),),
             "Christoffel-consistent Coriolis matrix C(q, qd), (n, n), by Algorithm 1.", "algorithm1",
             pinocchio=lambda o, s: o.coriolis(s["q"], s["qd"]),
             pin_call=PinCall(("computeCoriolisMatrix",), ("q", "qd"),
                              {"C": ("pin_cpp", "computeCoriolisMatrix(model, data, qs[i], vs[i]); sink = sink + data.C(0, 0);")})),
    Quantity("Gamma", "christoffel", ("q",), (Output("Gamma", _cube, embed="christoffel"),),
             "Christoffel symbols Gamma[i, j, k], (n, n, n): C = sum_k Gamma[:, :, k] qd[k].", "algorithm2",
             pinocchio=lambda o, s: o.christoffel(s["q"]), slp=True,
             # all second-order RNEA tensors; its d2tau_dvdv is 2 Gamma; or Gamma as n calls of C(q, e_k)
             pin_call=PinCall(("computeRNEASecondOrderDerivatives", "ComputeRNEASecondOrderDerivatives"), ("q", "qd", "zero"),
                              {"Gamma": ("pin_cpp", "ComputeRNEASecondOrderDerivatives(model, data, qs[i], vs[i], zero); "
                                                    "sink = sink + data.d2tau_dvdv(0, 0, 0);"),
                               "Gamma_by_n_C": ("pin_cpp_n_c", "for (int k = 0; k < model.nv; ++k) { e[k] = 1; "
                                                               "computeCoriolisMatrix(model, data, qs[i], e); e[k] = 0; "
                                                               "sink = sink + data.C(0, 0); }")})),
    Quantity("tau", "inverse_dynamics", ("q", "qd", "qdd"), (Output("tau", _vector, embed="vector"),),
             "Inverse dynamics tau = M qdd + C qd + g, (n,), by RNEA.", "rnea", jax_fused=True,
             pinocchio=lambda o, s: o.inverse_dynamics(s["q"], s["qd"], s["qdd"], *_forces(s)),
             pin_call=PinCall(("rnea",), ("q", "qd", "qdd"),
                              {"tau": ("pin_cpp", "rnea(model, data, qs[i], vs[i], as[i]); sink = sink + data.tau(0);")},
                              fext="rnea(model, data, qs[i], vs[i], as[i], fext); sink = sink + data.tau(0);")),
    Quantity("g", "gravity", ("q",), (Output("g", _vector, embed="vector"),),
             "Generalized gravity g(q) = tau(q, 0, 0), (n,), from composite gravity forces.", "gravity",
             pinocchio=lambda o, s: o.gravity(s["q"]),
             pin_call=PinCall(("computeGeneralizedGravity",), ("q",),
                              {"g": ("pin_cpp", "computeGeneralizedGravity(model, data, qs[i]); sink = sink + data.g(0);")})),
    Quantity("tau_sl", "slotine_li", ("q", "qd", "qd_r", "qdd_r"), (Output("tau_sl", _vector, embed="vector"),),
             "Slotine-Li torque M(q) qdd_r + C(q, qd) qd_r + g(q), (n,), by the O(N) recursion "
             "(Wensing & Slotine, Algorithm 3), without forming M or C.", "slotine_li",
             pinocchio=lambda o, s: (o.mass_matrix(s["q"]) @ s["qdd_r"] + o.coriolis(s["q"], s["qd"]) @ s["qd_r"]
                                     + o.gravity(s["q"])),
             pin_call=PinCall(("rnea",), ("q", "qd", "qdd"),
                              {"tau_sl": ("pin_cpp", "rnea(model, data, qs[i], vs[i], as[i]); sink = sink + data.tau(0);")},
                              note="Pinocchio has no Slotine-Li torque; its rival is rnea, which equals it at qd_r = qd")),
    Quantity("Y", "regressor", ("q", "qd", "qd_r", "qdd_r"), (Output("Y", _regressor, embed="rows"),),
             "Slotine-Li regressor Y, (n, 10 bodies): Y @ parameters = slotine_li(q, qd, qd_r, qdd_r); "
             "10 columns per body in link_names order, Pinocchio's toDynamicParameters order.", "regressor",
             pinocchio=lambda o, s: o.regressor(s["q"], s["qd"], s["qdd_r"]),
             oracle_state=_qd_r_is_qd, slp=True,       # computeJointTorqueRegressor has qd_r = qd
             pin_call=PinCall(("computeJointTorqueRegressor",), ("q", "qd", "qdd"),
                              {"Y": ("pin_cpp", "computeJointTorqueRegressor(model, data, qs[i], vs[i], as[i]); "
                                                "sink = sink + data.jointTorqueRegressor(0, 0);")})),
    Quantity("qdd", "forward_dynamics", ("q", "qd", "tau"), (Output("qdd", _vector, embed="solve"),),
             "Forward dynamics qdd = M^-1 (tau - C qd - g), (n,), by the articulated-body algorithm or "
             "the tree-sparse L^T D L factorization of M, whichever costs less for the robot.", "forward_dynamics",
             pinocchio=lambda o, s: o.forward_dynamics(s["q"], s["qd"], s["tau"], *_forces(s)), conditioned=True,
             pin_call=PinCall(("aba",), ("q", "qd", "tau"),
                              {"qdd": ("pin_cpp", "aba(model, data, qs[i], vs[i], ts[i]); sink = sink + data.ddq(0);")},
                              fext="aba(model, data, qs[i], vs[i], ts[i], fext); sink = sink + data.ddq(0);")),
    Quantity("Minv", "mass_matrix_inverse", ("q",), (Output("Minv", _square, embed="solve"),),
             "Inverse mass matrix M(q)^-1, (n, n), exactly symmetric, by the tree-sparse L^T D L "
             "factorization of M or the ABA-like dedicated algorithm, whichever costs less for the robot.",
             "mass_matrix_inverse",
             pinocchio=lambda o, s: o.mass_matrix_inverse(s["q"]), conditioned=True,
             pin_call=PinCall(("computeMinverse",), ("q",),
                              {"Minv": ("pin_cpp", "computeMinverse(model, data, qs[i]); sink = sink + data.Minv(0, 0);")})),
    Quantity("MCg", "all_terms", ("q", "qd"), (Output("M", _square, embed="matrix"), Output("C", _square, embed="matrix"), Output("g", _vector, embed="vector")),
             "(M, C, g) from one sweep: Algorithm 1's M and Christoffel-consistent C and the gravity "
             "vector, sharing the kinematics and composite inertias.", "all_terms",
             pinocchio=lambda o, s: (o.mass_matrix(s["q"]), o.coriolis(s["q"], s["qd"]), o.gravity(s["q"])),
             pin_call=PinCall(("computeAllTerms",), ("q", "qd"),
                              {"MCg": ("pin_cpp", "computeAllTerms(model, data, qs[i], vs[i]); "
                                                  "computeCoriolisMatrix(model, data, qs[i], vs[i]); "
                                                  "sink = sink + data.M(0, 0) + data.C(0, 0) + data.g(0);")},
                              note="Pinocchio: computeAllTerms (M, nle, g, ...) then computeCoriolisMatrix for C")),
    Quantity("dtau", "inverse_dynamics_derivatives", ("q", "qd", "qdd"),
             (Output("dtau_dq", _square, embed="matrix"), Output("dtau_dqd", _square, embed="matrix")),
             "(dtau/dq, dtau/dqd) of inverse dynamics, each (n, n), by the analytical RNEA derivatives "
             "(Carpentier & Mansard) in ground coordinates.", "id_derivatives",
             pinocchio=lambda o, s: o.inverse_dynamics_derivatives(s["q"], s["qd"], s["qdd"], *_forces(s)),
             pin_call=PinCall(("computeRNEADerivatives",), ("q", "qd", "qdd"),
                              {"dtau": ("pin_cpp", "computeRNEADerivatives(model, data, qs[i], vs[i], as[i]); "
                                                   "sink = sink + data.dtau_dq(0, 0);")},
                              fext="computeRNEADerivatives(model, data, qs[i], vs[i], as[i], fext); "
                                   "sink = sink + data.dtau_dq(0, 0);")),
    Quantity("dqdd", "forward_dynamics_derivatives", ("q", "qd", "tau"),
             (Output("dqdd_dq", _square, embed="solve"), Output("dqdd_dqd", _square, embed="solve")),
             "(dqdd/dq, dqdd/dqd) of forward dynamics, each (n, n): -M^-1 (dtau/dq, dtau/dqd) at "
             "qdd = FD(q, qd, tau), through the tree-sparse L^T D L factors.", "fd_derivatives",
             pinocchio=lambda o, s: o.forward_dynamics_derivatives(s["q"], s["qd"], s["tau"], *_forces(s)), conditioned=True,
             pin_call=PinCall(("computeABADerivatives",), ("q", "qd", "tau"),
                              {"dqdd": ("pin_cpp", "computeABADerivatives(model, data, qs[i], vs[i], ts[i]); "
                                                   "sink = sink + data.ddq_dq(0, 0);")},
                              fext="computeABADerivatives(model, data, qs[i], vs[i], ts[i], fext); "
                                   "sink = sink + data.ddq_dq(0, 0);")),
    Quantity("oMf", "frame_placement", ("q",), (Output("oMf", _placements, embed="none"),),
             "Placement of each frame (see frames), (frames, 4, 4): world <- frame homogeneous "
             "transform.", "frames",
             pinocchio=lambda o, s: o.frame_placement(s["q"]),
             pin_call=PinCall(("framesForwardKinematics",), ("q",),
                              {"oMf": ("pin_cpp", "framesForwardKinematics(model, data, qs[i]); "
                                                  "sink = sink + data.oMf[model.nframes - 1].translation()[0];")},
                              note="Pinocchio places all of its frames (symgen: the package's frames)")),
    Quantity("J", "frame_jacobian", ("q",), (Output("J", _jacobians, embed="columns"),),
             "Jacobian of each frame (see frames), (frames, 6, n): rows [linear; angular], "
             "LOCAL_WORLD_ALIGNED (origin at the frame, world axes).", "frames", jax_fused=True,
             pinocchio=lambda o, s: o.frame_jacobian(s["q"]),
             pin_call=PinCall(("computeJointJacobians",), ("q",),
                              {"J": ("pin_cpp", "computeJointJacobians(model, data, qs[i]); sink = sink + data.J(0, 0);")},
                              note="Pinocchio's computeJointJacobians, all joint Jacobians, before getFrameJacobian per frame")),
    Quantity("tau_p", "passive_force", ("q", "qd"), (Output("tau_p", _vector, embed="vector"),),
             "Passive joint forces tau_p = -damping * qd - stiffness * (q - springref), (n,): the joints' dampers "
             "and springs (MJCF's damping, stiffness, springref; URDF's <dynamics damping>), MuJoCo's qfrc_passive "
             "without tendons and fluid; forward_dynamics includes them in a build with --passive.", "passive",
             pinocchio=lambda o, s: o.passive_force(s["q"], s["qd"]), default=False),
)
