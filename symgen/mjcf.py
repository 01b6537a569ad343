"""Read MJCF through MuJoCo's own compiler into a :class:`~symgen.model.Robot`.

No MJCF parser here: ``mujoco.MjModel.from_xml_path`` resolves defaults, classes, includes,
``fromto``, inertias from geoms and angle units, and this module walks the compiled arrays
(``body_parentid``, ``body_pos/quat/ipos/iquat/inertia/mass``, ``jnt_type/axis/pos/bodyid``,
``qpos0``, ``dof_armature``).

Mapping (MuJoCo's kinematics, ``mj_kinematics``: a body's pose is its parent's composed with
``body_pos/quat``, then each of its joints in order, a hinge turning about its anchor
``jnt_pos``, a slide moving along its axis, both by ``qpos - qpos0``):

- A body with joints j_1..j_k (hinge or slide) becomes k single-DoF bodies, a chain: the frame of
  the i-th is the MJCF body's orientation with its origin at the anchor p_i of j_i, so the first
  is placed at ``body_pos + R p_1`` in its parent, the next at ``p_i - p_(i-1)`` (no turn); the
  first k-1 are massless (named ``<joint>_link``), the last carries the body (named as the body),
  its inertia and its children shifted by -p_k. symgen's q of a hinge or slide is
  ``qpos - qpos0`` (``qpos0`` is the joint's ``ref``): :func:`symgen.mjcf_convert.from_mujoco`.
- A ``free`` joint (MuJoCo has them on children of the world only) is the free-flyer
  (Pinocchio's ``JointModelFreeFlyer``, ``root_joint``) at the root of the only moving tree; in a
  scene of several moving trees (:mod:`symgen.scenes`; ``trees=`` keeps some) each free joint is a
  free-flyer at the world, named as the joint.
- A body without joints is lumped into the body it hangs from (as a URDF fixed joint); one
  fixed to the world is dropped. Every MJCF body keeps a link frame of its name.
- ``dof_armature`` becomes ``Robot.armature``; ``dof_damping``, ``jnt_stiffness`` and
  ``qpos_spring`` become ``Robot.damping``, ``stiffness`` and ``springref`` (:mod:`symgen.mjcf_passive`). Tendons (:mod:`symgen.mjcf_tendons`): a one-joint
  fixed tendon's armature joins its joint's; tendons without armature are left out (a
  SymgenWarning names them: they do not enter M, C v + g or τ); ``<equality><tendon>`` on fixed
  tendons is embedded as a linear coupling; the rest is refused in one line.
- ``<equality><joint>`` with a linear polycoef: with ``mimic`` a mimic joint (reduced
  coordinates, :mod:`symgen.mimic`), else refused.
- ``<equality><connect body1 body2 anchor>`` and ``<weld body1 body2 relpose anchor>`` (active,
  between bodies): loops, as a URDF+ ``<loop>`` (a weld also holds the three rotation rows;
  :mod:`symgen.mjcf_loops`), on a fixed base or a free-flyer.
- A ``ball`` joint is Pinocchio's spherical joint (three bodies sharing the MJCF body's frame at
  the anchor; q = quaternion x y z w, MuJoCo's w x y z reordered; v = MuJoCo's qvel, the angular
  velocity in the body frame).
- Not supported yet, one line each (URDFError, exit 2): an equality constraint in a scene with
  free joints, other equality constraints (flex, site-based connect/weld, a loop beside joint
  couplings), tendons that enter M other than one-joint fixed ones, gravity compensation.
- ``<option gravity>`` (zero with ``<flag gravity="disable"/>``) becomes ``Robot.gravity``, the
  default of ``symgen build --gravity`` for the file.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from .errors import OptionError, URDFError
from .model import (FREE_DOFS, IDENTITY, ORIGIN, ROOT_JOINT, Body, Frame, Inertia, Robot, as_mat3, as_vec3,
                    group_bodies)

#: rotation and axis entries this close to 0, ±1/2, ±1 become exact (MuJoCo's quaternions carry
#: round-off of a few ulps; exact zeros keep the generated code short)
SNAP = 1e-12
_FREE, _BALL, _SLIDE, _HINGE = 0, 1, 2, 3


def _mujoco():
    try:
        import mujoco
    except ImportError:
        raise OptionError("reading MJCF needs the mujoco package: pip install 'symgen[mjcf]'") from None
    return mujoco


def is_mjcf(path) -> bool:
    """Whether the file's first element is ``<mujoco>`` (comments and the declaration skipped)."""
    import re

    try:
        with open(path, "rb") as f:
            head = f.read(1 << 16).decode("utf-8", "replace")
    except OSError:
        return False
    head = re.sub(r"<!--.*?(-->|$)", "", head, flags=re.S)
    tag = re.search(r"<([A-Za-z_][\w.:-]*)", re.sub(r"<\?.*?\?>", "", head, flags=re.S))
    return tag is not None and tag.group(1) == "mujoco"


def _snap(a):
    a = np.array(a, dtype=float)
    for v in (0.0, 0.5, -0.5, 1.0, -1.0):
        a[np.abs(a - v) <= SNAP] = v
    return a


def _quat_matrix(wxyz) -> np.ndarray:
    w, x, y, z = np.asarray(wxyz, dtype=float) / np.linalg.norm(wxyz)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def compile_mjcf(path, drop=()):
    """MuJoCo's compiled model of the file (a URDFError naming the file when it does not compile);
    ``drop``: the ids of bodies deleted first (``--tree``, :func:`symgen.scenes.delete_bodies`)."""
    import warnings

    from .errors import SymgenWarning

    mujoco = _mujoco()
    said = []
    previous = mujoco.get_mju_user_warning()
    mujoco.set_mju_user_warning(lambda text: said.append(" ".join(str(text).split())))
    try:                                                  # the compiler's warnings as one line each
        if drop:
            from .scenes import delete_bodies

            return delete_bodies(mujoco, path, drop)
        return mujoco.MjModel.from_xml_path(str(path))
    except Exception as exc:                              # mujoco raises ValueError with the compiler's text
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise URDFError(str(path), None, f"MuJoCo's compiler refuses it: {reason}") from None
    finally:
        mujoco.set_mju_user_warning(previous)
        for text in said:
            warnings.warn(f"{path}: MuJoCo's compiler: {text}", SymgenWarning, stacklevel=2)


def _name(m, kind, i):
    import mujoco

    obj = {"body": mujoco.mjtObj.mjOBJ_BODY, "joint": mujoco.mjtObj.mjOBJ_JOINT}[kind]
    return mujoco.mj_id2name(m, obj, i) or f"{kind}{i}"


def _body_inertia(m, b) -> Inertia:
    """The body's inertia in its frame. Entries of the rotational inertia within 1e-15 of zero
    relative to its largest (round-off of the principal axes' turn, as the URDF reader snaps them)
    and CoM coordinates within 1e-15 m become exact zeros, so they fold out of the code."""
    R = _snap(_quat_matrix(m.body_iquat[b]))
    I = R @ np.diag(m.body_inertia[b]) @ R.T
    I[np.abs(I) <= 1e-15 * max(float(np.abs(I).max()), 1e-300)] = 0.0
    com = np.array(m.body_ipos[b], dtype=float)
    com[np.abs(com) <= 1e-15] = 0.0
    return Inertia(float(m.body_mass[b]), as_vec3(com), as_mat3(I))


def _check_supported(m, source, mimic=False):
    mujoco = _mujoco()

    def refuse(element, reason):
        raise URDFError(source, element, reason)

    for e in range(m.neq):
        kind = mujoco.mjtEq(int(m.eq_type[e])).name.removeprefix("mjEQ_").lower()
        if kind in ("connect", "weld", "tendon"):   # a loop (symgen.mjcf_loops checks the rest), a coupling
            continue                                #   of joints by fixed tendons (symgen.mjcf_tendons)
        if kind != "joint":
            refuse(f"<equality>/<{kind}>", "equality constraints other than joint and tendon couplings, connect "
                   "and weld are not supported yet")
        where = f"<equality>/<joint joint1={_name(m, 'joint', int(m.eq_obj1id[e]))!r}>"
        if not mimic:
            refuse(where, "couples two joints; --mimic embeds it (reduced coordinates), else not supported")
        if m.eq_obj2id[e] < 0 or np.any(m.eq_data[e][2:5]) or not m.eq_active0[e]:
            refuse(where, "--mimic: only an active coupling of two joints with a linear polycoef (a0 a1 0 0 0)")
    for j in range(m.njnt):
        where = f"<joint name={_name(m, 'joint', j)!r}>"
        if m.jnt_type[j] == _FREE and m.body_parentid[m.jnt_bodyid[j]] != 0:
            refuse(where, "a free joint below the root is not supported yet (only on a child of <worldbody>)")
    if np.any(m.body_gravcomp):
        refuse("<body gravcomp>", "gravity compensation is not supported")


def load_mjcf(path, mimic: bool = False, trees=()) -> Robot:
    """The Robot of the MJCF file ``path``, compiled by MuJoCo (see the module's docstring).
    ``mimic``: its ``<equality><joint>`` couplings with a linear polycoef embedded, as URDF mimic
    joints (:mod:`symgen.mimic`): joint1 - qpos0 = a0 + a1 (joint2 - qpos0). ``trees``: the names of
    the bodies whose moving trees are kept, the others dropped (``--tree``, :mod:`symgen.scenes`)."""
    from .scenes import dropped_note, mjcf_drop, mjcf_trees, refuse_constraints

    source = str(path)
    m = compile_mjcf(path)
    dropped = ()
    if trees:
        drop, dropped = mjcf_drop(m, lambda b: _name(m, "body", b), trees, source)
        m = compile_mjcf(path, drop) if drop else m
    _check_supported(m, source, mimic)
    scene = mjcf_trees(m, lambda b: _name(m, "body", b))
    if m.nv == 0:
        raise URDFError(source, "<worldbody>", "no joints: the model has no degree of freedom")
    bodies: list[Body] = []
    inertias: list[Inertia] = []
    frames = [Frame("world", "link", -1, IDENTITY, ORIGIN)]
    #: per MJCF body: (symgen body it is fixed to, R, p: its frame in that body's frame, its link frame)
    host = {0: (-1, np.eye(3), np.zeros(3), 0)}
    lumped, armature, offsets = [], [], []
    floating = False
    for b in range(1, m.nbody):
        parent, Rp, pp, parent_link = host[int(m.body_parentid[b])]
        R = _snap(Rp @ _quat_matrix(m.body_quat[b]))
        p = Rp @ m.body_pos[b] + pp
        name = _name(m, "body", b)
        joints = range(m.body_jntadr[b], m.body_jntadr[b] + m.body_jntnum[b])
        if not joints:
            if parent >= 0:
                inertias[parent] = inertias[parent] + _body_inertia(m, b).transformed(R, p)
            lumped.append(f"{name} -> {bodies[parent].name if parent >= 0 else 'world'}")
            frames.append(Frame(name, "link", parent, as_mat3(R), as_vec3(p), parent_link))
            host[b] = (parent, R, p, len(frames) - 1)
            continue
        if m.jnt_type[joints[0]] == _FREE:     # the floating base of a lone tree, else a free-flyer at the
            floating = len(scene) == 1          # world (symgen.scenes), its qpos reordered (from_mujoco), not offset
            jname = ROOT_JOINT if floating else _name(m, "joint", joints[0])
            bodies.extend(group_bodies("freeflyer", jname, name, -1, len(bodies), IDENTITY, ORIGIN, Inertia.zero()))
            inertias.extend([Inertia.zero()] * FREE_DOFS)
            inertias[-1] = _body_inertia(m, b)
            armature.extend(float(a) for a in m.dof_armature[m.jnt_dofadr[joints[0]]:][:6])
            offsets.extend([] if floating else [0.0] * 7)
            frames += [Frame(jname, "joint", len(bodies) - 1, IDENTITY, ORIGIN, parent_link),
                       Frame(name, "link", len(bodies) - 1, IDENTITY, ORIGIN, len(frames))]
            host[b] = (len(bodies) - 1, np.eye(3), np.zeros(3), len(frames) - 1)
            continue
        link = parent_link
        anchor_prev = None
        for k, j in enumerate(joints):
            jname = _name(m, "joint", j)
            anchor = np.array(m.jnt_pos[j], dtype=float)
            if anchor_prev is None:
                rot, trans = R, p + R @ anchor
            else:
                rot, trans = np.eye(3), anchor - anchor_prev
            last = k == len(joints) - 1
            if m.jnt_type[j] == _BALL:          # Pinocchio's spherical joint: three bodies, one frame
                added = group_bodies("spherical", jname, name if last else f"{jname}_link", parent, len(bodies),
                                     as_mat3(rot), as_vec3(_snap_small(trans)), Inertia.zero())
                offsets.extend([0.0] * 4)       # (the quaternion is reordered, not offset)
            else:
                added = [Body(name=name if last else f"{jname}_link", joint_name=jname,
                              joint_type="prismatic" if m.jnt_type[j] == _SLIDE else "revolute",
                              axis=as_vec3(_snap(m.jnt_axis[j] / np.linalg.norm(m.jnt_axis[j]))), parent=parent,
                              rotation=as_mat3(rot), translation=as_vec3(_snap_small(trans)), inertia=Inertia.zero())]
                offsets.append(float(m.qpos0[m.jnt_qposadr[j]]))
            bodies.extend(added)
            inertias.extend([Inertia.zero()] * len(added))
            armature.extend(float(a) for a in m.dof_armature[m.jnt_dofadr[j]:][:len(added)])
            parent = len(bodies) - 1
            frames.append(Frame(jname, "joint", parent, IDENTITY, ORIGIN, link))
            link_offset = -anchor if last else np.zeros(3)
            frames.append(Frame(bodies[-1].name, "link", parent, IDENTITY, as_vec3(link_offset), len(frames) - 1))
            link = len(frames) - 1
            anchor_prev = anchor
        inertias[parent] = _body_inertia(m, b).transformed(np.eye(3), -anchor_prev)
        host[b] = (parent, np.eye(3), -anchor_prev, link)
    bodies = [dataclasses.replace(b, inertia=inertia) for b, inertia in zip(bodies, inertias)]
    _unique_links(bodies, source)
    notes = (f"read through MuJoCo {_mujoco().__version__}'s compiler: {m.nbody - 1} bodies, {m.njnt} joints",)
    tendons = ()
    if m.ntendon:                              # a one-joint fixed tendon's armature joins its joint's
        from .mjcf_tendons import records, tendon_armature

        tendons = records(m)
        dof = {b.joint_name: i for i, b in enumerate(bodies) if not b.group}
        added, tendon_notes = tendon_armature(m, source, dof)
        for i, a in added.items():
            armature[i] += a
        notes += tendon_notes
    if any(offsets):
        notes += ("hinge/slide ref offsets: symgen's q = MuJoCo's qpos - qpos0 (from_mujoco/to_mujoco convert)",)
    notes += (dropped_note(dropped),) if dropped else ()
    from .mjcf_passive import read_passive                  # dampers and springs (symgen.passive)

    passive, passive_notes = read_passive(m, source, lambda j: _name(m, "joint", j))
    robot = Robot(name=m.names[:m.names.index(b"\0")].decode() or "mjcf", bodies=tuple(bodies), root_link="world",
                  source=source, lumped=tuple(lumped), floating_base=floating, notes=notes + passive_notes,
                  frames=tuple(frames), armature=tuple(armature) if any(armature) else (), mujoco_qpos0=tuple(offsets),
                  gravity=_gravity(m), trees=scene, tendons=tendons, **passive)
    if m.neq and not floating and any(j.kind == "freeflyer" for j in robot.joint_models):
        refuse_constraints(m, source)
    from .mjcf_loops import closed_mjcf, connects

    loops = connects(m)
    if loops:
        if len(loops) < m.neq:
            kind = _mujoco().mjtEq(int(m.eq_type[loops[0]])).name.removeprefix("mjEQ_").lower()
            raise URDFError(source, f"<equality>/<{kind}>", f"a {kind} (a loop) beside joint couplings "
                            "(<equality><joint>) is not embedded yet")
        return closed_mjcf(m, robot, source)
    return _embedded(m, robot, source) if m.neq else robot


def _embedded(m, robot, source):
    """The Robot with its joint couplings embedded (reduced coordinates)."""
    from .mimic import Embedded, Relation, build
    from .mjcf_tendons import EQ_TENDON

    joint_eqs = [e for e in range(m.neq) if int(m.eq_type[e]) != EQ_TENDON]
    relations = tuple(Relation(_name(m, "joint", int(m.eq_obj1id[e])), _name(m, "joint", int(m.eq_obj2id[e])),
                               float(m.eq_data[e][1]), float(m.eq_data[e][0])) for e in joint_eqs)
    if robot.has_armature:                  # G^T diag(armature) G is no diagonal: not the package's armature
        where = (f"<equality>/<joint joint1={relations[0].joint!r}>" if relations else
                 f"<equality>/<tendon tendon1={_tendon_of(m, 0)!r}>")
        raise URDFError(source, where, "joint and tendon couplings in a model with armature are not supported yet "
                        "(Gᵀ diag(armature) G is no diagonal)")
    if len(joint_eqs) < m.neq:
        return _tendon_coupled(m, robot, source, relations)
    names = {_name(m, "joint", j) for j in range(m.njnt)}
    free = bool(robot.floating_base)
    embedding = build(robot.joint_names[free:], relations, names, set(),
                      lambda joint, reason: URDFError(source, f"<equality>/<joint joint1={joint!r}>", reason),
                      7 * free, 6 * free)
    return Embedded(robot, embedding)


def _tendon_of(m, k):
    """The tendon1 name of the model's k-th tendon equality."""
    from .mjcf_tendons import EQ_TENDON, tendon_name

    return tendon_name(m, int(m.eq_obj1id[[e for e in range(m.neq) if int(m.eq_type[e]) == EQ_TENDON][k]]))


def _tendon_coupled(m, robot, source, relations):
    """The Robot with its tendon equalities (and, with --mimic, joint couplings) embedded as linear
    couplings (:mod:`symgen.couplings`; dependent joints: :func:`symgen.mjcf_tendons.choose_dependent`)."""
    from .couplings import Constraint, Coupled, solve
    from .mjcf_tendons import choose_dependent, tendon_constraints, tendons

    constraints = tendon_constraints(m, source, {t.name: t for t in tendons(m)})
    constraints += [Constraint(r.joint, "mimic", ((r.joint, 1.0), (r.target, -r.multiplier)), r.offset)
                    for r in relations]
    free = bool(robot.floating_base)
    names = robot.joint_names[free:]
    first = f"<equality>/<tendon tendon1={_tendon_of(m, 0)!r}>"
    known = set(names)
    for c in constraints:
        for joint, _ in c.coeffs:
            if joint not in known:
                raise URDFError(source, first, f"couples joint {joint!r}, which is not a hinge or slide of the tree")
    dependent = choose_dependent(names, constraints, [r.joint for r in relations])
    emb = solve(names, constraints, dependent, 7 * free, 6 * free, relations,
                lambda reason: URDFError(source, first, reason))
    notes = tuple(f"equality tendon {c.name!r}: " + " ".join(f"{'-' if k < 0 else '+'} {abs(k):g} {j}" for j, k in c.coeffs)
                  .removeprefix("+ ") + f" = {c.constant:g} "
                  f"(q = qpos - qpos0) embedded as a coupling: reduced coordinates" for c in constraints
                  if c.kind == "tendon")
    notes += (f"dependent joints (no coordinate of their own): {', '.join(dependent)}",)
    return Coupled(dataclasses.replace(robot, notes=robot.notes + notes), emb)


def _gravity(m):
    mujoco = _mujoco()
    if m.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_GRAVITY:
        return (0.0, 0.0, 0.0)
    return tuple(float(g) + 0.0 for g in m.opt.gravity)


def _snap_small(a):
    a = np.array(a, dtype=float)
    a[np.abs(a) <= SNAP] = 0.0
    return a


def _unique_links(bodies, source):
    seen = {}
    for b in bodies:
        if b.name in seen:
            raise URDFError(source, f"<body name={b.name!r}>", f"two bodies of symgen's model are called {b.name!r} "
                            f"(a joint's intermediate link and a body); rename one")
        seen[b.name] = b


def load_robot(path, floating_base: bool = False, mimic: bool = False, xacro_args=None, package_paths=(),
               trees=(), **kwargs) -> Robot:
    """The Robot of a URDF or MJCF file (told apart by the root element, ``<robot>`` or
    ``<mujoco>``), or of a xacro file (``*.xacro``: expanded with ``xacro_args`` and
    ``package_paths``, :mod:`symgen.urdf.xacro`): what ``symgen build``, ``info`` and ``verify
    --model`` read. ``trees``: the root bodies of the moving trees kept (``--tree``, :mod:`symgen.scenes`)."""
    from .urdf.xacro import is_xacro, load_xacro

    if trees:
        kwargs["trees"] = tuple(trees)
    if is_xacro(path):
        return load_xacro(path, xacro_args, package_paths, floating_base=floating_base, mimic=mimic, **kwargs)
    if xacro_args or package_paths:
        raise OptionError(f"--xacro-arg, --package-path: {path} is no xacro file (*.xacro)")
    if not is_mjcf(path):
        from .urdf import load_urdf

        return load_urdf(path, floating_base=floating_base, mimic=mimic, **kwargs)
    robot = load_mjcf(path, mimic=mimic, trees=tuple(trees))
    if floating_base and not robot.floating_base:      # (verify passes the package's; a free joint is one)
        raise OptionError(f"--floating-base: {path} is MJCF, whose own <joint type=\"free\"> makes the free-flyer")
    return robot
