"""The centroidal family (issue #25, items 1-3): the motion of the frames (velocity, the classical
drift J_dot v, the Jacobian's rate) and the centre of mass and centroidal momentum (CoM, its
Jacobian, A_G, h_G, A_G_dot v, I_G), with their sweeps, Pinocchio oracles
(:mod:`symgen.oracle_centroidal`) and bench calls. All at Pinocchio's conventions: [linear;
angular], world axes (frames: LOCAL_WORLD_ALIGNED, centroidal: at the CoM).
"""
from __future__ import annotations

from .. import oracle_centroidal as oc
from .base import Output, PinCall, Quantity, Sweep
from .sweeps import frame_shape, frames_of


def _centroidal(robot, args, bk, opts):
    from ..algorithms.centroidal import centroidal_map

    return centroidal_map(robot, args["q"], bk)


def _centroidal_momentum(robot, args, bk, opts):
    from ..algorithms.centroidal import centroidal_momentum

    return centroidal_momentum(robot, args["q"], args["qd"], bk)


def _frame_motion(robot, args, bk, opts):
    from ..algorithms.frame_motion import frame_motion

    return frame_motion(robot, args["q"], args["qd"], frames_of(robot, opts.frames), bk)


SWEEPS = (
    Sweep("centroidal", ("q",), _centroidal),
    Sweep("centroidal_momentum", ("q", "qd"), _centroidal_momentum),
    Sweep("frame_motion", ("q", "qd"), _frame_motion, inertial=False),
)


def _cpp(name, statement):
    return {name: ("pin_cpp", statement)}


_LAST_FRAME = "(FrameIndex)(model.nframes - 1), LOCAL_WORLD_ALIGNED"

QUANTITIES = (
    Quantity("com", "center_of_mass", ("q",), (Output("com", frame_shape(3), embed="none"),),
             "Centre of mass c(q) in world coordinates, (3,).", "centroidal",
             pinocchio=lambda o, s: oc.center_of_mass(o, s["q"]),
             pin_call=PinCall(("centerOfMass",), ("q",), _cpp("com", "centerOfMass(model, data, qs[i]); "
                                                                     "sink = sink + data.com[0][0];"))),
    Quantity("Jcom", "com_jacobian", ("q",), (Output("Jcom", frame_shape(3, "n"), embed="columns"),),
             "Jacobian of the centre of mass, (3, n): d c / dt = Jcom qd (world axes).", "centroidal",
             pinocchio=lambda o, s: oc.com_jacobian(o, s["q"]),
             pin_call=PinCall(("jacobianCenterOfMass",), ("q",),
                              _cpp("Jcom", "jacobianCenterOfMass(model, data, qs[i]); sink = sink + data.Jcom(0, 0);"))),
    Quantity("Ag", "centroidal_map", ("q",), (Output("Ag", frame_shape(6, "n"), embed="columns"),),
             "Centroidal momentum matrix A_G(q), (6, n): h_G = A_G qd, [linear; angular] at the CoM, world "
             "axes, from the CRBA's composite inertias (Wensing & Orin).", "centroidal",
             pinocchio=lambda o, s: oc.centroidal_map(o, s["q"]),
             pin_call=PinCall(("computeCentroidalMap",), ("q",),
                              _cpp("Ag", "computeCentroidalMap(model, data, qs[i]); sink = sink + data.Ag(0, 0);"))),
    Quantity("Ig", "centroidal_inertia", ("q",), (Output("Ig", frame_shape(6, 6), embed="none"),),
             "Composite centroidal inertia I_G(q), (6, 6): [[m 1, 0], [0, I_c]] about the CoM, world axes "
             "(Pinocchio's data.Ig after ccrba).", "centroidal",
             pinocchio=lambda o, s: oc.centroidal_inertia(o, s["q"]),
             pin_call=PinCall(("ccrba",), ("q", "zero"),
                              _cpp("Ig", "ccrba(model, data, qs[i], zero); sink = sink + data.Ig.mass();"),
                              note="Pinocchio: ccrba (A_G, h_G and I_G together)")),
    Quantity("hg", "centroidal_momentum", ("q", "qd"), (Output("hg", frame_shape(6), embed="none"),),
             "Centroidal momentum h_G = A_G qd, (6,): [linear; angular] at the CoM, world axes.", "centroidal_momentum",
             pinocchio=lambda o, s: oc.centroidal_momentum(o, s["q"], s["qd"]),
             pin_call=PinCall(("computeCentroidalMomentum",), ("q", "qd"),
                              _cpp("hg", "computeCentroidalMomentum(model, data, qs[i], vs[i]); "
                                         "sink = sink + data.hg.linear()[0];"))),
    Quantity("dhg", "centroidal_bias", ("q", "qd"), (Output("dhg", frame_shape(6), embed="none"),),
             "Centroidal momentum bias A_G_dot qd, (6,): the rate of h_G at qdd = 0 (gravity not included).",
             "centroidal_momentum",
             pinocchio=lambda o, s: oc.centroidal_bias(o, s["q"], s["qd"]),
             pin_call=PinCall(("computeCentroidalMomentumTimeVariation",), ("q", "qd", "zero"),
                              _cpp("dhg", "computeCentroidalMomentumTimeVariation(model, data, qs[i], vs[i], zero); "
                                          "sink = sink + data.dhg.linear()[0];"))),
    Quantity("vf", "frame_velocity", ("q", "qd"), (Output("vf", frame_shape("F", 6), embed="none"),),
             "Velocity of each frame (see frames), (frames, 6): [linear; angular], LOCAL_WORLD_ALIGNED.",
             "frame_motion",
             pinocchio=lambda o, s: oc.frame_velocity(o, s["q"], s["qd"]),
             pin_call=PinCall(("forwardKinematics",), ("q", "qd"),
                              _cpp("vf", "forwardKinematics(model, data, qs[i], vs[i]); sink = sink + "
                                         f"getFrameVelocity(model, data, {_LAST_FRAME}).linear()[0];"),
                              note="Pinocchio: forwardKinematics(q, v) and getFrameVelocity of one frame")),
    Quantity("af", "frame_acceleration_bias", ("q", "qd"), (Output("af", frame_shape("F", 6), embed="none"),),
             "Classical acceleration of each frame at qdd = 0, J_dot qd, (frames, 6): [linear; angular], "
             "LOCAL_WORLD_ALIGNED (not the spatial acceleration: the linear part includes w x v).", "frame_motion",
             pinocchio=lambda o, s: oc.frame_acceleration_bias(o, s["q"], s["qd"]),
             pin_call=PinCall(("forwardKinematics",), ("q", "qd", "zero"),
                              _cpp("af", "forwardKinematics(model, data, qs[i], vs[i], zero); sink = sink + "
                                         f"getFrameClassicalAcceleration(model, data, {_LAST_FRAME}).linear()[0];"),
                              note="Pinocchio: forwardKinematics(q, v, 0) and getFrameClassicalAcceleration of one frame")),
    Quantity("dJ", "frame_jacobian_dot", ("q", "qd"), (Output("dJ", frame_shape("F", 6, "n"), embed="columns"),),
             "Time derivative of each frame's Jacobian (see frame_jacobian), (frames, 6, n), LOCAL_WORLD_ALIGNED.",
             "frame_motion",
             pinocchio=lambda o, s: oc.frame_jacobian_dot(o, s["q"], s["qd"]),
             pin_call=PinCall(("computeJointJacobiansTimeVariation",), ("q", "qd"),
                              _cpp("dJ", "computeJointJacobiansTimeVariation(model, data, qs[i], vs[i]); "
                                         "sink = sink + data.dJ(0, 0);"),
                              note="Pinocchio's computeJointJacobiansTimeVariation, all joints, before "
                                   "getFrameJacobianTimeVariation per frame")),
)
