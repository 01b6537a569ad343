"""The frame functions in every reference frame (issue #39, items 2 and 5): the Jacobian, velocity,
classical acceleration and Jacobian rate of the build's frames in LOCAL and WORLD beside today's
LOCAL_WORLD_ALIGNED ones (:mod:`symgen.algorithms.frame_references`), and the partial derivatives
of frame velocities and spatial accelerations (:mod:`symgen.algorithms.frame_derivatives`) in each.

``symgen build --reference local,world,local_world_aligned`` (default: local_world_aligned)
chooses the references: each frame function of the build is generated in each of them
(:func:`with_references`), and the package's ``reference_frames`` lists them. The quantities of
this module are built on request only (``Quantity.default`` False): a default build is unchanged.
"""
from __future__ import annotations

from .. import oracle_centroidal as oc
from ..algorithms.frame_derivatives import SUFFIXES
from ..algorithms.frame_references import LOCAL, LOCAL_WORLD_ALIGNED, WORLD
from ..errors import OptionError
from .base import Output, Quantity, Sweep
from .sweeps import frames_of

#: the references ``--reference`` takes, in the order a package lists them
REFERENCES = (LOCAL_WORLD_ALIGNED, LOCAL, WORLD)
DEFAULT_REFERENCES = (LOCAL_WORLD_ALIGNED,)
_PIN = {LOCAL_WORLD_ALIGNED: "LOCAL_WORLD_ALIGNED", LOCAL: "LOCAL", WORLD: "WORLD"}


def _frame_references(robot, args, bk, opts):
    """The frames sweep's J turned into LOCAL and WORLD with the frames' placements."""
    from ..algorithms import frame_references as fr
    from .sweeps import _frames

    values = _frames(robot, args, bk, opts)
    oMf, J = values["oMf"], values["J"]
    return {f"J_{r}": _stack([fr.jacobian(J[k], oMf[k, :3, :3], oMf[k, :3, 3], r, bk) for k in range(len(J))], J, bk)
            for r in (LOCAL, WORLD)}


def _frame_motion_references(robot, args, bk, opts):
    """The frame-motion sweep's velocity, classical drift and J_dot (and the frames sweep's
    placements and J, shared by value numbering) in LOCAL and WORLD."""
    from ..algorithms import frame_references as fr
    from .centroidal import _frame_motion
    from .sweeps import _frames

    placed, moving = _frames(robot, args, bk, opts), _frame_motion(robot, args, bk, opts)
    oMf, J, vf, af, dJ = placed["oMf"], placed["J"], moving["vf"], moving["af"], moving["dJ"]
    out = {}
    for r in (LOCAL, WORLD):
        at = [(oMf[k, :3, :3], oMf[k, :3, 3]) for k in range(len(J))]
        out[f"vf_{r}"] = _stack([fr.velocity(vf[k], *at[k], r, bk) for k in range(len(J))], vf, bk)
        out[f"af_{r}"] = _stack([fr.acceleration_bias(af[k], vf[k], *at[k], r, bk) for k in range(len(J))], af, bk)
        out[f"dJ_{r}"] = _stack([fr.jacobian_dot(dJ[k], J[k], vf[k], *at[k], r, bk) for k in range(len(J))], dJ, bk)
    return out


def _stack(rows, like, bk):
    out = bk.zeros(like.shape)
    for k, x in enumerate(rows):
        out[k] = x
    return out


def _velocity_derivatives(robot, args, bk, opts):
    from ..algorithms.frame_derivatives import frame_velocity_derivatives

    return frame_velocity_derivatives(robot, args["q"], args["qd"], frames_of(robot, opts.frames), bk)


def _acceleration_derivatives(robot, args, bk, opts):
    from ..algorithms.frame_derivatives import frame_acceleration_derivatives

    return frame_acceleration_derivatives(robot, args["q"], args["qd"], args["qdd"], frames_of(robot, opts.frames), bk)


SWEEPS = (
    Sweep("frame_references", ("q",), _frame_references, inertial=False),
    Sweep("frame_motion_references", ("q", "qd"), _frame_motion_references, inertial=False),
    Sweep("frame_velocity_derivatives", ("q", "qd"), _velocity_derivatives, inertial=False),
    Sweep("frame_acceleration_derivatives", ("q", "qd", "qdd"), _acceleration_derivatives, inertial=False),
)


def _shape(*dims):
    """An output shape from fixed sizes, "n" (nv) and "F" (the frames)."""
    def shape(robot, opts):
        size = {"n": robot.nv, "F": len(frames_of(robot, opts.frames))}
        return tuple(size.get(d, d) for d in dims)
    shape.dims = dims                        # the header's size macros (codegen/files.py: shape_text)
    return shape


_NAMES = {LOCAL: "LOCAL (the frame's own axes, origin at the frame)",
          WORLD: "WORLD (world axes, origin at the world origin)",
          LOCAL_WORLD_ALIGNED: "LOCAL_WORLD_ALIGNED (world axes, origin at the frame)"}


def _reference_quantities(r):
    """The frame functions in reference ``r`` (LOCAL or WORLD)."""
    pin = _PIN[r]
    return (
        Quantity(f"J_{r}", f"frame_jacobian_{r}", ("q",), (Output(f"J_{r}", _shape("F", 6, "n"), embed="columns"),),
                 f"Jacobian of each frame (see frames), (frames, 6, n): rows [linear; angular], {_NAMES[r]}.",
                 "frame_references", default=False,
                 pinocchio=lambda o, s: o.frame_jacobian(s["q"], pin)),
        Quantity(f"vf_{r}", f"frame_velocity_{r}", ("q", "qd"), (Output(f"vf_{r}", _shape("F", 6), embed="none"),),
                 f"Velocity of each frame (see frames), (frames, 6): [linear; angular], {_NAMES[r]}.",
                 "frame_motion_references", default=False,
                 pinocchio=lambda o, s: oc.frame_velocity(o, s["q"], s["qd"], pin)),
        Quantity(f"af_{r}", f"frame_acceleration_bias_{r}", ("q", "qd"),
                 (Output(f"af_{r}", _shape("F", 6), embed="none"),),
                 f"Classical acceleration of each frame at qdd = 0, (frames, 6): [linear; angular], {_NAMES[r]}; "
                 "Pinocchio's getFrameClassicalAcceleration there (the spatial acceleration plus w x v in that "
                 "reference; not frame_jacobian_dot @ qd, which is the spatial one in this reference).",
                 "frame_motion_references", default=False,
                 pinocchio=lambda o, s: oc.frame_acceleration_bias(o, s["q"], s["qd"], pin)),
        Quantity(f"dJ_{r}", f"frame_jacobian_dot_{r}", ("q", "qd"),
                 (Output(f"dJ_{r}", _shape("F", 6, "n"), embed="columns"),),
                 f"Time derivative of each frame's Jacobian in {_NAMES[r]}, (frames, 6, n) (Pinocchio's "
                 "getFrameJacobianTimeVariation there).", "frame_motion_references", default=False,
                 pinocchio=lambda o, s: oc.frame_jacobian_dot(o, s["q"], s["qd"], pin)),
    )


def _derivative_quantities(r):
    """frame_velocity_derivatives and frame_acceleration_derivatives in reference ``r``."""
    pin, suffix = _PIN[r], SUFFIXES[r]
    d = _shape("F", 6, "n")
    where = _NAMES[r] + (" (Pinocchio's: the WORLD partials moved to the frame's origin)"
                      if r == LOCAL_WORLD_ALIGNED else "")
    return (
        Quantity(f"dvf{suffix}", f"frame_velocity_derivatives{suffix}", ("q", "qd"),
                 tuple(Output(f"{name}{suffix}", d, embed="columns") for name in ("dv_dq", "dv_dqd")),
                 f"(dv/dq, dv/dqd) of each frame's velocity, each (frames, 6, n), {where}; d/dq along the tangent "
                 "space (a free-flyer: Pinocchio's integrate): getFrameVelocityDerivatives.",
                 "frame_velocity_derivatives", default=False,
                 pinocchio=lambda o, s: o.frame_velocity_derivatives(s["q"], s["qd"], pin)),
        Quantity(f"daf{suffix}", f"frame_acceleration_derivatives{suffix}", ("q", "qd", "qdd"),
                 tuple(Output(f"{name}{suffix}", d, embed="columns") for name in ("dv_dq", "da_dq", "da_dqd", "da_dqdd")),
                 f"(dv/dq, da/dq, da/dqd, da/dqdd) of each frame's velocity v and spatial acceleration a "
                 f"(getFrameAcceleration, not the classical one), each (frames, 6, n), {where}, in the order of "
                 "getFrameAccelerationDerivatives' outputs (da/dqdd = the frame's Jacobian).",
                 "frame_acceleration_derivatives", default=False,
                 pinocchio=lambda o, s: o.frame_acceleration_derivatives(s["q"], s["qd"], s["qdd"], pin)),
    )


QUANTITIES = (_reference_quantities(LOCAL) + _reference_quantities(WORLD)
              + _derivative_quantities(LOCAL_WORLD_ALIGNED) + _derivative_quantities(LOCAL)
              + _derivative_quantities(WORLD))

#: per family (the LOCAL_WORLD_ALIGNED key): Pinocchio's function and the call it follows
_CALLS = {"J": ("getFrameJacobian", "computeJointJacobians"), "vf": ("getFrameVelocity", "forwardKinematics(q, v)"),
          "af": ("getFrameClassicalAcceleration", "forwardKinematics(q, v, 0)"),
          "dJ": ("getFrameJacobianTimeVariation", "computeJointJacobiansTimeVariation"),
          "dvf": ("getFrameVelocityDerivatives", "computeForwardKinematicsDerivatives"),
          "daf": ("getFrameAccelerationDerivatives", "computeForwardKinematicsDerivatives")}


def _reference_of(key: str) -> str:
    return next((r for r in (LOCAL, WORLD) if key.endswith(f"_{r}")), LOCAL_WORLD_ALIGNED)


#: Pinocchio's counterpart of each quantity, for the function reference (none is timed by ``symgen bench``)
PINOCCHIO = {x.key: "`{}(..., {})` after `{}`".format(_CALLS[x.key.split("_")[0]][0], _PIN[_reference_of(x.key)],
                                                      _CALLS[x.key.split("_")[0]][1]) for x in QUANTITIES}

#: each frame function's LOCAL_WORLD_ALIGNED key -> {other reference: its key there}
BY_REFERENCE = {k: {LOCAL: f"{k}_{LOCAL}", WORLD: f"{k}_{WORLD}"} for k in ("J", "vf", "af", "dJ", "dvf", "daf")}


def parse_references(text: str | None) -> tuple[str, ...]:
    """``--reference``: a comma list of local, world, local_world_aligned (None or empty: the
    default), in :data:`REFERENCES` order; an unknown name is an OptionError naming the valid ones."""
    words = [w.strip().lower() for w in str(text or "").split(",") if w.strip()]
    unknown = [w for w in words if w not in REFERENCES]
    if unknown:
        raise OptionError(f"--reference: unknown {', '.join(map(repr, unknown))}; expected a comma list of "
                          f"{', '.join(REFERENCES)}")
    return tuple(r for r in REFERENCES if r in words) or DEFAULT_REFERENCES


def check_references(references) -> None:
    """An OptionError unless ``references`` is a non-empty tuple of :data:`REFERENCES` names."""
    if not isinstance(references, tuple) or not references or any(r not in REFERENCES for r in references):
        raise OptionError(f"--reference: {references!r} is not a comma list of {', '.join(REFERENCES)}")


def with_references(keys, references=DEFAULT_REFERENCES) -> tuple[str, ...]:
    """The quantity keys of a build in ``references``: each frame function of ``keys`` (by its
    LOCAL_WORLD_ALIGNED key) in each reference, the LOCAL_WORLD_ALIGNED one kept only when that
    reference is asked; other keys (a frame function named in a reference, J_local) as they are."""
    out = []
    for key in keys:
        if key not in BY_REFERENCE:
            out.append(key)
            continue
        out += [key if r == LOCAL_WORLD_ALIGNED else BY_REFERENCE[key][r] for r in REFERENCES if r in references]
    return tuple(dict.fromkeys(out))


def references_built(keys, references=DEFAULT_REFERENCES) -> tuple[str, ...]:
    """The package's ``reference_frames``: ``references`` and those of the frame functions named in
    a reference (``--quantities J_local``), in :data:`REFERENCES` order."""
    named = {r for by in BY_REFERENCE.values() for r, key in by.items() if key in keys}
    return tuple(r for r in REFERENCES if r in references or r in named)
