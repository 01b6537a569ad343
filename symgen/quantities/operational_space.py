"""The operational-space family (issue #39, item 3): Khatib's operational-space inertia Lambda, the
dynamically consistent inverse Jbar, the bias mu + p and the force at a frame that joint forces are
worth, Jbar^T tau, for each frame of the build (``--frames``; a point ``name=LINK@x,y,z`` has the
3-row task of its linear velocity), by :mod:`symgen.algorithms.operational_space` through the
tree-sparse factors of M. Built on request (``--quantities Lambda,Jbar,mu_p,f_tau``), on trees only
(not --mimic, couplings or loops yet). Pinocchio's side: :mod:`symgen.oracle_operational_space`.

Every frame fills a 6 x 6 (n x 6, 6) block, [linear; angular] rows, LOCAL_WORLD_ALIGNED: a point's
values in its top-left 3 x 3 (first 3 columns, first 3 entries), the rest zero. The damping eps of
the singular-configuration policy is ``--opspace-damping`` (``SweepOptions.opspace_damping``).
"""
from __future__ import annotations

import numpy as np

from .. import oracle_operational_space as oos
from ..algorithms.operational_space import DAMPING, SIZE, task_rows
from .base import Output, PinCall, Quantity, Sweep
from .sweeps import frame_shape, frames_of


def _run(what, mass=None):
    """The run of one operational-space function with M by the CRBA of ``mass`` (None: the build's frame)."""
    def run(robot, args, bk, opts):
        from ..algorithms import operational_space as osp

        frames = frames_of(robot, opts.frames)
        common = {"mass": mass or opts.frame, "damping": opts.opspace_damping}
        if what == "inertia":
            return osp.operational_space_inertia(robot, args["q"], frames, bk, **common)
        if what == "bias":
            return osp.operational_space_bias(robot, args["q"], args["qd"], frames, bk, gravity=opts.gravity, **common)
        return osp.frame_force_from_torque(robot, args["q"], args["tau"], frames, bk, **common)
    run.__name__ = f"opspace_{what}_{mass or 'frame'}"
    if mass == "local":
        from ..kinematics import local_frames_pay

        run.applies = local_frames_pay
    return run


def _sweep(name, arguments, what):
    # variants: M by the CRBA in body frames or in Pinocchio's local convention, whichever makes the
    # whole sweep cheapest (as the contact terms')
    return Sweep(name, arguments, _run(what), variants=(_run(what, "body"), _run(what, "local")))


SWEEPS = (
    _sweep("opspace_inertia", ("q",), "inertia"),
    _sweep("opspace_bias", ("q", "qd"), "bias"),
    _sweep("opspace_force", ("q", "tau"), "force"),
)


#: eps lambda_max(Lambda) above which a task counts as damped (at or near a singular configuration)
DAMPED = 1e-3


def task_condition(Lambda, damping: float = DAMPING) -> float:
    """The largest cond(Lambda) of the frames' tasks in ``Lambda`` (frames, 6, 6) (a point's 3 x 3
    block): how much a comparison of the operational-space functions may lose beyond cond(M); inf
    where the damping holds a task (eps lambda_max(Lambda) > :data:`DAMPED`): along the direction
    the joints cannot move, the outputs are then round-off / eps, the same in no two correct codes,
    and a comparison can check only that they are finite."""
    worst = 1.0
    for block in np.asarray(Lambda, dtype=float):
        d = 3 if not block[3:].any() and not block[:, 3:].any() else SIZE
        eig = np.linalg.eigvalsh(block[:d, :d])
        if damping * eig.max() > DAMPED:
            return np.inf
        worst = max(worst, float(eig.max() / eig.min()))
    return worst


#: Pinocchio's route in C++ (issue #39's rival): M^-1 by computeMinverse, the frame's Jacobian by
#: computeFrameJacobian (its support only), J M^-1 J^T + eps 1 (no allocation: the products into held
#: buffers) and one Cholesky (Eigen's LLT) of the 6 x 6; on the model's last frame (the harness knows no package frames; on panda a finger, one
#: joint deeper than the flange)
_CPP_LAMBDA = (
    "static Data::Matrix6x J = Data::Matrix6x::Zero(6, model.nv), JMinv = Data::Matrix6x::Zero(6, model.nv); "
    "computeMinverse(model, data, qs[i]); "
    "data.Minv.triangularView<Eigen::StrictlyLower>() = data.Minv.transpose().triangularView<Eigen::StrictlyLower>(); "
    "computeFrameJacobian(model, data, qs[i], (FrameIndex)(model.nframes - 1), LOCAL_WORLD_ALIGNED, J); "
    "JMinv.noalias() = J * data.Minv; Eigen::Matrix<double, 6, 6> A; A.noalias() = JMinv * J.transpose(); "
    f"A.diagonal().array() += {DAMPING!r}; "
    "Eigen::Matrix<double, 6, 6> Lam = A.llt().solve(Eigen::Matrix<double, 6, 6>::Identity()); "
    "sink = sink + Lam(0, 0);")

_POLICY = ("Lambda = (J M^-1 J^T + eps 1)^-1, eps the build's --opspace-damping (default 1e-8; 0: Khatib's "
           "exact Lambda, inf or NaN at a singular configuration), so every output stays finite there")
_BLOCK = "a point frame's in the top-left 3 x 3 block (its linear rows), the rest zero"

QUANTITIES = (
    Quantity("Lambda", "operational_space_inertia", ("q",), (Output("Lambda", frame_shape("F", SIZE, SIZE), embed="none"),),
             f"Operational-space inertia of each frame (see frames), (frames, 6, 6): {_POLICY}; J the frame's "
             f"Jacobian [linear; angular], LOCAL_WORLD_ALIGNED, {_BLOCK}; through the tree-sparse L^T D L factors "
             "of M, never forming M^-1.", "opspace_inertia",
             pinocchio=lambda o, s: oos.inertia(o, s["q"]), conditioned=True, task=True, default=False,
             pin_call=PinCall(("computeMinverse",), ("q",), {"Lambda": ("pin_cpp", _CPP_LAMBDA)},
                              note="Pinocchio's route: computeMinverse, computeFrameJacobian, J M^-1 J^T and one "
                                   "Cholesky in C++ (through its Python binding: computeMinverse alone)")),
    Quantity("Jbar", "dynamically_consistent_inverse", ("q",), (Output("Jbar", frame_shape("F", "n", SIZE), embed="none"),),
             f"Dynamically consistent inverse of each frame's Jacobian, Jbar = M^-1 J^T Lambda, (frames, n, 6): "
             f"J Jbar = 1 - eps Lambda (1 without damping); {_BLOCK} (columns).", "opspace_inertia",
             pinocchio=lambda o, s: oos.dynamically_consistent_inverse(o, s["q"]), conditioned=True, task=True,
             default=False),
    Quantity("mu_p", "operational_space_bias", ("q", "qd"), (Output("mu_p", frame_shape("F", SIZE), embed="none"),),
             f"Operational-space bias of each frame, mu + p = Lambda (J M^-1 (C qd + g) - J_dot qd), (frames, 6): "
             f"F = Lambda xdd + mu + p (Khatib; p = frame_force_from_torque(q, g) alone), {_BLOCK}.",
             "opspace_bias",
             pinocchio=lambda o, s: oos.bias(o, s["q"], s["qd"]), conditioned=True, task=True, default=False),
    Quantity("f_tau", "frame_force_from_torque", ("q", "tau"), (Output("f_tau", frame_shape("F", SIZE), embed="none"),),
             f"Force at each frame that joint forces tau are worth, Jbar^T tau = Lambda J M^-1 tau, (frames, 6): "
             f"the dynamically consistent inverse of tau = J^T F (F = frame_force_from_torque(q, J^T F) up to "
             f"eps), {_BLOCK}.", "opspace_force",
             pinocchio=lambda o, s: oos.force_from_torque(o, s["q"], s["tau"]), conditioned=True, task=True,
             default=False),
)

#: the family's keys (``--quantities``)
KEYS = tuple(x.key for x in QUANTITIES)


def manifest_options(opts) -> dict:
    """What a package's manifest records of the family's options: ``opspace_damping`` when it is
    not the default (packages built without it are unchanged)."""
    return {} if opts.opspace_damping == DAMPING else {"opspace_damping": float(opts.opspace_damping)}
