"""The sweeps: one run of one algorithm each (on numbers or SymPy symbols, the same code), with
the variants a ground-coordinate build traces beside it and keeps when they cost less. Every
quantity of :mod:`.core` names one of these.
"""
from __future__ import annotations

from dataclasses import replace

from ..errors import OptionError
import numpy as np

from .base import Sweep, gravity_text


def in_body_frames(run, why: str):
    """The variant of a sweep's ``run`` that runs in body frames (the paper's pseudo-code as
    printed): ``why`` says where it wins. Body frames never move the root's quantities to the
    base, so the first joint's sin and cos, which M and C do not depend on, are not computed."""
    def variant(robot, args, bk, opts):
        return run(robot, args, bk, replace(opts, frame="body"))

    variant.__name__, variant.__doc__ = f"{run.__name__}_body", why
    variant.frame = "body"              # read by the reduced solves of an embedding (symgen.mimic)
    return variant


def _crba(robot, args, bk, opts):
    from .. import algorithms as alg

    return {"M": (alg.crba_ground if opts.frame == "ground" else alg.crba)(robot, args["q"], bk)}


def _crba_local(robot, args, bk, opts):
    """CRBA in body frames turned so that each joint axis is z, with 10-number inertias
    (Pinocchio's local convention): ur5 278 operations against 757 (ground) and 818 (body), panda
    804 against 1,574, solo12 1,131 against 1,711; ground coordinates win on chains with general
    axes (7,168 against 20,074), whose constant joint rotations are dense."""
    from ..algorithms.crba import crba_local

    return {"M": crba_local(robot, args["q"], bk)}


def _cluster_crba(robot, args, bk, opts):
    """M̄ = GᵀMG of a robot with a constant embedding (couplings, rotors, belts, --mimic) by the
    cluster CRBA, one force carried up per reduced column (:mod:`symgen.algorithms.cluster_crba`),
    where the spanning tree's CRBA carries one per spanning body and projects by G at the end."""
    from ..algorithms.cluster_crba import cluster_crba, cluster_crba_ground, cluster_crba_local
    from ..kinematics import with_parameters

    emb = robot.embedding
    run = {"ground": cluster_crba_ground, "local": cluster_crba_local}.get(opts.frame, cluster_crba)
    return {"M": run(with_parameters(robot.full, args.get("params")), emb.expand_q(args["q"], bk), emb.columns(), bk)}


def _cluster_crba_local(robot, args, bk, opts):
    """The cluster CRBA in turned body frames with 10-number inertias (Pinocchio's local
    convention), a URDF ``floating`` root joint seen as a floating base: MIT Humanoid M̄ 2,616
    operations against 6,702, Mini Cheetah 889 against 2,455."""
    return _cluster_crba(robot, args, bk, replace(opts, frame="local"))


def _local_pays(robot) -> bool:
    from ..algorithms.cluster_crba import local_pays

    return local_pays(robot)


def _constant_embedding(robot) -> bool:
    """Whether ``robot`` is seen through a constant embedding (not a mechanism with loops)."""
    return robot.embedding is not None and robot.system is None


def _on_the_reduced_system(*runs):
    """Mark sweep runs that compute the reduced quantity of an embedded robot themselves
    (:func:`symgen.mimic.run_embedded` hands them the reduced robot and arguments): traced only
    for such robots."""
    for run in runs:
        run.applies, run.reduced = _constant_embedding, True


def _algorithm1(robot, args, bk, opts):
    from .. import algorithms as alg

    run = alg.coriolis_ground if opts.frame == "ground" else alg.coriolis
    M, Mdot, C = run(robot, args["q"], args["qd"], bk)
    return {"M": M, "Mdot": Mdot, "C": C}


def _algorithm1_local(robot, args, bk, opts):
    """Algorithm 1 in turned body frames with the ground version's 15-number BC (Pinocchio's
    local convention)."""
    from ..algorithms.coriolis import coriolis_local

    M, Mdot, C = coriolis_local(robot, args["q"], args["qd"], bk)
    return {"M": M, "Mdot": Mdot, "C": C}


def _algorithm1_root_local(robot, args, bk, opts):
    """Algorithm 1 in the local convention on the spanning tree of a robot with a constant embedding
    whose root joint is a URDF ``floating`` joint, seen as a floating base
    (:func:`~symgen.algorithms.cluster_crba.root_as_base`; :func:`_algorithm1_local` refuses such a
    joint), projected by G: MIT Humanoid C̄ 12,834 operations against 18,000 in body frames."""
    from ..algorithms.cluster_crba import root_as_base
    from ..algorithms.coriolis import coriolis_local
    from ..kinematics import with_parameters
    from ..mimic import expand, project

    emb, cols = robot.embedding, robot.embedding.columns()
    full_args = expand(emb, args, bk)
    values = coriolis_local(root_as_base(with_parameters(robot.full, args.get("params"))), full_args["q"],
                            full_args["qd"], bk)
    return {name: project("matrix", x, cols, bk) for name, x in zip(("M", "Mdot", "C"), values)}


def _all_terms_local(robot, args, bk, opts):
    """all_terms with Algorithm 1 in turned body frames (gravity as the build's other sweeps)."""
    values = _algorithm1_local(robot, args, bk, opts)
    return {"M": values["M"], "C": values["C"], "g": _gravity(robot, args, bk, opts)["g"]}


def _local_convention(*runs):
    """Mark sweep runs in the local convention: a build traces them only where they can win
    (:func:`~symgen.kinematics.local_frames_pay`)."""
    from ..kinematics import local_frames_pay

    for run in runs:
        run.applies = local_frames_pay


def _algorithm2(robot, args, bk, opts):
    from .. import algorithms as alg

    if opts.gamma_method == "partials":
        return {"Gamma": alg.christoffel_partials(robot, args["q"], bk, opts.frame)}
    if opts.gamma_method == "vid":
        from ..algorithms.differentiation import christoffel_by_differentiation

        return {"Gamma": christoffel_by_differentiation(robot, args["q"], bk, opts.frame)}
    return {"Gamma": (alg.christoffel_ground if opts.frame == "ground" else alg.christoffel)(robot, args["q"], bk)}


def _rnea(robot, args, bk, opts):
    from .. import algorithms as alg

    return {"tau": alg.rnea(robot, args["q"], args["qd"], args["qdd"], bk, gravity=opts.gravity, f_ext=args.get("f_ext"))}


def _rnea_local(robot, args, bk, opts):
    """RNEA in turned body frames, motions and forces as 3-vectors, 10-number inertias
    (Pinocchio's local convention)."""
    from ..algorithms.rnea import rnea_local

    return {"tau": rnea_local(robot, args["q"], args["qd"], args["qdd"], bk, gravity=opts.gravity, f_ext=args.get("f_ext"))}


def _rnea_offsets(robot, args, bk, opts):
    """RNEA in body frames moving motions and forces across revolute joints by rotation and
    offset (rnea._motion_down, _force_up): tau humanoid 4,050 operations against 4,220, solo12
    2,253 against 2,509, panda 1,228 against 1,267; arm4 keeps the 6x6 products."""
    from .. import algorithms as alg

    return {"tau": alg.rnea(robot, args["q"], args["qd"], args["qdd"], bk, gravity=opts.gravity, offsets=True,
                            f_ext=args.get("f_ext"))}


def _gravity_offsets(robot, args, bk, opts):
    """g by the body-frame RNEA at rest with :func:`_rnea_offsets`'s transforms: humanoid 1,232
    operations against 1,421 (ground), solo12 554 against 598, panda 272 against 291."""
    from ..algorithms.gravity import gravity

    return {"g": gravity(robot, args["q"], bk, gravity=opts.gravity, offsets=True)}


def _gravity(robot, args, bk, opts):
    from .. import algorithms as alg

    return {"g": (alg.gravity_ground if opts.frame == "ground" else alg.gravity)(robot, args["q"], bk, gravity=opts.gravity)}


def _regressor_sweep(robot, args, bk, opts):
    from .. import algorithms as alg

    return {"Y": alg.regressor(robot, args["q"], args["qd"], args["qd_r"], args["qdd_r"], bk, gravity=opts.gravity)}


def _regressor_ground_sweep(robot, args, bk, opts):
    from .. import algorithms as alg

    return {"Y": alg.regressor_ground(robot, args["q"], args["qd"], args["qd_r"], args["qdd_r"], bk,
                                      gravity=opts.gravity)}


def _regressor_local_sweep(robot, args, bk, opts):
    from .. import algorithms as alg

    return {"Y": alg.regressor_local(robot, args["q"], args["qd"], args["qd_r"], args["qdd_r"], bk, gravity=opts.gravity)}


def _shallow(robot):
    from ..algorithms.regressor import local_walk_pays

    return local_walk_pays(robot)


_regressor_local_sweep.applies = _shallow


def _tau(robot, args, bk, opts):
    """The joint forces forward dynamics solves for: tau, plus the passive forces tau_p(q, qd) in
    a build with --passive (:mod:`symgen.passive`), plus the joint forces of the external forces in
    a build with --external-forces (:mod:`symgen.algorithms.external_forces`)."""
    from ..algorithms.external_forces import plus_external
    from ..algorithms.passive import plus_passive

    tau = plus_passive(robot, args["q"], args["qd"], args["tau"], bk, opts.passive)
    return plus_external(robot, args["q"], tau, args.get("f_ext"), bk)


def _forward_dynamics(robot, args, bk, opts):
    from .. import algorithms as alg

    return {"qdd": alg.forward_dynamics(robot, args["q"], args["qd"], _tau(robot, args, bk, opts), bk, opts.frame,
                                        gravity=opts.gravity)}


def _forward_dynamics_local(robot, args, bk, opts):
    """M by the CRBA and the bias by the RNEA in Pinocchio's local convention, then L^T D L (solo12
    as MJCF: M 975 operations against 1,755 in ground coordinates)."""
    from .. import algorithms as alg

    return {"qdd": alg.forward_dynamics(robot, args["q"], args["qd"], _tau(robot, args, bk, opts), bk, "local",
                                        gravity=opts.gravity)}


def _aba_ground(robot, args, bk, opts):
    """The articulated-body algorithm in ground coordinates (Pinocchio's aba): O(N) where the
    L^T D L route is O(N d^2); wins on long chains (20-DoF chain 12,405 against 22,952)."""
    from .. import algorithms as alg

    return {"qdd": alg.aba_ground(robot, args["q"], args["qd"], _tau(robot, args, bk, opts), bk, gravity=opts.gravity)}


def _aba_body(robot, args, bk, opts):
    """The articulated-body algorithm in body frames (Featherstone's Table 7.1 as printed): wins
    on panda and solo12 (2,651 against 4,106; 2,048 against 3,088)."""
    from .. import algorithms as alg

    return {"qdd": alg.aba(robot, args["q"], args["qd"], _tau(robot, args, bk, opts), bk, gravity=opts.gravity)}


def _frames(robot, args, bk, opts):
    from .. import algorithms as alg

    run = alg.frame_kinematics_ground if opts.frame == "ground" else alg.frame_kinematics
    oMf, J = run(robot, args["q"], frames_of(robot, opts.frames), bk)
    return {"oMf": oMf, "J": J}


def _mass_matrix_inverse(robot, args, bk, opts):
    from .. import algorithms as alg

    return {"Minv": alg.mass_matrix_inverse(robot, args["q"], bk, opts.frame)}


def _minverse_ground(robot, args, bk, opts):
    """The M^-1 dedicated algorithm (ABA without the affine terms; Pinocchio's computeMinverse),
    O(N^2) against O(N d^2) on a chain: 20-DoF chain 15,883 against 19,065."""
    from .. import algorithms as alg

    return {"Minv": alg.minverse_ground(robot, args["q"], bk)}


def _minverse_dense(robot, args, bk, opts):
    """M^-1 as the identity's columns solved with the L^T D L factors of the ground CRBA's M in
    column loops, which the compiler vectorizes across the columns (see program.loop_cost)."""
    from ..algorithms.forward_dynamics import mass_matrix_inverse_dense

    return {"Minv": mass_matrix_inverse_dense(robot, args["q"], bk)}


def _minverse_aba_dense(robot, args, bk, opts):
    """M^-1 by the dedicated algorithm's passes, the articulated inertias straight-line and
    the passes over the identity's columns in column loops (see program.loop_cost)."""
    from ..algorithms.aba import minverse_dense

    return {"Minv": minverse_dense(robot, args["q"], bk)}


#: M^-1 in column loops: a change of the base's speeds (G^-1 M^-1 G^-T, symgen.base_velocity) reads
#: their results entry by entry, which a column loop's outputs do not allow
_minverse_dense.column_loops = _minverse_aba_dense.column_loops = True


def _all_terms(robot, args, bk, opts):
    """Algorithm 1 and the gravity sweep on one backend: value numbering gives the kinematics and
    composite inertias both read one name each, so the fused call pays for them once."""
    values = _algorithm1(robot, args, bk, opts)
    return {"M": values["M"], "C": values["C"], "g": _gravity(robot, args, bk, opts)["g"]}


def _id_derivatives(robot, args, bk, opts):
    from .. import algorithms as alg

    dq, dqd = alg.inverse_dynamics_derivatives(robot, args["q"], args["qd"], args["qdd"], bk, opts.frame, gravity=opts.gravity,
                                               f_ext=args.get("f_ext"))
    return {"dtau_dq": dq, "dtau_dqd": dqd}


def _fd_derivatives(robot, args, bk, opts):
    from .. import algorithms as alg

    dq, dqd = alg.forward_dynamics_derivatives(robot, args["q"], args["qd"], args["tau"], bk, opts.frame, gravity=opts.gravity,
                                               passive=opts.passive, f_ext=args.get("f_ext"))
    return {"dqdd_dq": dq, "dqdd_dqd": dqd}


def _fd_derivatives_dense(robot, args, bk, opts):
    """The ground sweep with the 2n solves -M^-1 dtau/du as one column loop over the 2n columns,
    vectorized by the compiler across columns (see program.loop_cost)."""
    from .. import algorithms as alg

    dq, dqd = alg.forward_dynamics_derivatives(robot, args["q"], args["qd"], args["tau"], bk, "ground",
                                               gravity=opts.gravity, dense=True, passive=opts.passive,
                                               f_ext=args.get("f_ext"))
    return {"dqdd_dq": dq, "dqdd_dqd": dqd}


def _passive(robot, args, bk, opts):
    from ..algorithms.passive import passive_force

    return {"tau_p": passive_force(robot, args["q"], args["qd"], bk)}


def _slotine_li(robot, args, bk, opts):
    from .. import algorithms as alg

    return {"tau_sl": alg.slotine_li(robot, args["q"], args["qd"], args["qd_r"], args["qdd_r"], bk,
                                     gravity=opts.gravity)}


def _slotine_li_ground(robot, args, bk, opts):
    """A variant that loses on every robot measured (an O(N) sweep pays for the world inertias and
    their rates: ops, ground vs body, arm4 1172 vs 339, panda 3528 vs 1496, serial 10 5306 vs
    4130), traced so that a robot where it wins gets it."""
    from .. import algorithms as alg

    return {"tau_sl": alg.slotine_li_ground(robot, args["q"], args["qd"], args["qd_r"], args["qdd_r"], bk,
                                            gravity=opts.gravity)}


_local_convention(_crba_local, _rnea_local, _algorithm1_local, _all_terms_local, _forward_dynamics_local)
_cluster_crba_body = in_body_frames(_cluster_crba, "the cluster CRBA in body frames: MIT Humanoid M̄ 6,482 operations "
                                                   "against 6,702 (the spanning tree's CRBA in body frames, projected)")
_on_the_reduced_system(_cluster_crba, _cluster_crba_body)
_cluster_crba_local.reduced = True
_cluster_crba_local.applies = lambda robot: _constant_embedding(robot) and _local_pays(robot.full)
_algorithm1_root_local.reduced = True
_algorithm1_root_local.applies = lambda robot: (_constant_embedding(robot) and robot.full.in_group(0)
                                                and not robot.full.is_free(0) and _local_pays(robot.full))


def _reduced_local(run, why: str):
    """The variant of a sweep with a reduced-system computation (:data:`symgen.mimic.REDUCED`:
    forward dynamics, M^-1) whose M̄ is the cluster CRBA's in the local convention: traced only
    where :func:`_cluster_crba_local` is."""
    def variant(robot, args, bk, opts):
        return run(robot, args, bk, replace(opts, frame="local"))

    variant.__name__, variant.__doc__ = f"{run.__name__}_cluster_local", why
    variant.frame, variant.applies = "local", _cluster_crba_local.applies
    return variant

SWEEPS = (
    Sweep("crba", ("q",), _crba, variants=(in_body_frames(_crba, "ur5 818 operations against 901, panda 1,574 "
                                                                 "against 1,851; ground wins on chains (7,645 against 22,842)"),
                                           _crba_local, _cluster_crba, _cluster_crba_body,
                                           _cluster_crba_local)),
    Sweep("algorithm1", ("q", "qd"), _algorithm1,
          variants=(in_body_frames(_algorithm1, "C: ur5 1,842 against 2,430, panda 3,798 against 4,407; ground "
                                                "wins on chains (16,533 against 46,342) and solo12"), _algorithm1_local,
                    _algorithm1_root_local)),
    Sweep("algorithm2", ("q",), _algorithm2),
    Sweep("rnea", ("q", "qd", "qdd"), _rnea, variants=(_rnea_local, _rnea_offsets), external=True),
    Sweep("gravity", ("q",), _gravity,
          variants=(in_body_frames(_gravity, "RNEA at rest never turns gravity about the first joint's axis when it is "
                                             "gravity's: panda 12 sin/cos against 14 (291 operations against 287)"),
                    _gravity_offsets)),
    Sweep("slotine_li", ("q", "qd", "qd_r", "qdd_r"), _slotine_li, variants=(_slotine_li_ground,)),
    Sweep("regressor", ("q", "qd", "qd_r", "qdd_r"), _regressor_sweep, inertial=False,
          variants=(_regressor_ground_sweep, _regressor_local_sweep)),
    Sweep("forward_dynamics", ("q", "qd", "tau"), _forward_dynamics,
          variants=(in_body_frames(_forward_dynamics, "M and the bias in body frames, then L^T D L: fewer "
                                   "operations than the ground-coordinate CRBA on small robots (arm4 460 against 892), "
                                   "and leaf pivots D_i constant (fewer divisions)"), _aba_ground, _aba_body,
                    _forward_dynamics_local,
                    _reduced_local(_forward_dynamics, "MIT Humanoid FD 10,333 operations against 14,583 (M̄ by "
                                                      "the spanning tree's CRBA in body frames, projected)")),
          external=True),
    Sweep("mass_matrix_inverse", ("q",), _mass_matrix_inverse,
          variants=(in_body_frames(_mass_matrix_inverse, "L^T D L of the body-frame CRBA's M: fewest operations "
                                   "on small robots (panda 2,395, solo12 680, against 3,162 and 1,712)"), _minverse_ground,
                    _minverse_dense, _minverse_aba_dense,
                    _reduced_local(_mass_matrix_inverse, "MIT Humanoid M̄^-1 8,472 operations against 12,568"))),
    Sweep("all_terms", ("q", "qd"), _all_terms,
          variants=(in_body_frames(_all_terms, "ur5 2,161 against 2,642, panda 4,240 against 4,882"),
                    _all_terms_local)),
    Sweep("id_derivatives", ("q", "qd", "qdd"), _id_derivatives, external=True),
    Sweep("fd_derivatives", ("q", "qd", "tau"), _fd_derivatives, variants=(_fd_derivatives_dense,), external=True),
    Sweep("frames", ("q",), _frames, inertial=False),
    Sweep("passive", ("q", "qd"), _passive, inertial=False),
)


def frame_shape(*dims):
    """An output shape from fixed sizes, "n" (nv) and "F" (the frames of the build)."""
    def shape(robot, opts):
        size = {"n": robot.nv, "F": len(frames_of(robot, opts.frames)) if "F" in dims else 0}
        return tuple(size.get(d, d) for d in dims)
    shape.dims = dims                        # the header's size macros (codegen/files.py: shape_text)
    return shape


def frames_of(robot, names=None) -> tuple:
    """The :class:`~symgen.model.Frame` of each of ``names`` (links or joints, a link winning a
    shared name; a point ``name=LINK@x,y,z``, see :func:`point_frame`; repeats dropped), by
    default the leaf links (:attr:`Robot.leaf_links`, in tree order); an unknown or empty list, a
    bad point or two frames of one name are an OptionError."""
    names = robot.leaf_links if names is None else tuple(dict.fromkeys(names))
    unknown = [n for n in names if n not in robot.frame_names and "@" not in n]
    if unknown or not names:
        valid = robot.frame_names
        raise OptionError(f"--frames: {f'unknown frame {unknown[0]!r}' if unknown else 'no frame given'} "
                          f"(robot {robot.name!r} has {len(valid)} link and joint frames, e.g. "
                          f"{', '.join(valid[:3] + robot.leaf_links[:2])}; a point: name=LINK@x,y,z)")
    frames = tuple(robot.frame(n) if n in robot.frame_names else point_frame(robot, n) for n in names)
    seen = set()
    for f in frames:
        if f.name in seen:
            raise OptionError(f"--frames: two frames are named {f.name!r}")
        seen.add(f.name)
    return frames


def point_frame(robot, text: str):
    """The frame of a point fixed in a link (a contact point, e.g. a foot's sole), from
    ``--frames`` text ``name=LINK@x,y,z``: at (x, y, z) in LINK's frame (metres), with LINK's
    orientation (LINK may also be a joint's frame). Its ``spec`` is the text normalized, which a
    package's manifest records so that ``symgen verify`` finds the point again."""
    from ..model import Frame

    name, _, rest = str(text).partition("=")
    link, _, numbers = rest.partition("@")
    name, link = name.strip(), link.strip()
    if not name or not link or "@" not in rest:
        raise OptionError(f"--frames: {text!r} is neither a link or joint of robot {robot.name!r} nor a point "
                          f"name=LINK@x,y,z")
    if link not in robot.frame_names:
        raise OptionError(f"--frames: point {text!r}: robot {robot.name!r} has no link or joint {link!r}")
    try:
        xyz = tuple(float(w) for w in numbers.split(","))
    except ValueError:
        xyz = ()
    if len(xyz) != 3 or not all(np.isfinite(xyz)):
        raise OptionError(f"--frames: point {text!r}: {numbers.strip()!r} is not three numbers x,y,z")
    base = robot.frame(link)
    R = np.array(base.rotation)
    offset = np.array(base.translation) + R @ np.array(xyz)
    return Frame(name, "point", base.body, base.rotation, tuple(float(x) for x in offset),
                 robot.frames.index(base), spec=f"{name}={link}@{gravity_text(xyz)}")


def split_frames(text: str | None):
    """``--frames`` text as a tuple of frame names and points: a comma list in which a point
    ``name=LINK@x,y,z`` keeps its three numbers (the two commas after its ``@``); None: None."""
    if text is None:
        return None
    words, out = [w.strip() for w in str(text).split(",")], []
    while words:
        word = words.pop(0)
        if "@" in word:
            word = ",".join([word] + [words.pop(0) for _ in range(min(2, len(words)))])
        if word:
            out.append(word)
    return tuple(out)
