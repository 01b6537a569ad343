"""The reader's entry points: a URDF text or file in, a :class:`~symgen.model.Robot` out."""
from __future__ import annotations

import os
import stat

from ..errors import OptionError, URDFError
from ..joint_models import leading_free
from ..scenes import Tree as SceneTree, check_trees, dropped_note, urdf_keep, urdf_trees
from ..model import FREE_DOFS, ROOT_JOINT, Body, Frame, Robot, as_mat3, as_vec3, free_flyer_bodies, group_bodies
from .lump import Tree, assemble
from .parse import GROUP_OF, Context, JointSpec, parse_xml, read_joints, read_links, robot_name
from .plus import embed, read_plus, rotor_notes
from .validate import (check_floating_names, check_inertias, check_masses, check_no_loop, parent_joints,
                       root_link, virtual_root)

#: The largest URDF symgen reads (the largest in example-robot-data is under 1 MiB); more is
#: refused before it is read, and a stream (/dev/zero, a pipe) is read no further than this.
MAX_URDF_BYTES = 32 * 2**20


def _mimic_notes(tree: Tree, joints: list[JointSpec], mimic: bool = False) -> tuple[str, ...]:
    """One note per movable mimic joint, in q order (a fixed one has no coordinate to speak of).
    A mimicked joint the file does not define is said so (urdfdom, hence Pinocchio, accepts it).
    Without ``mimic`` the note suggests --mimic; with it, it gives the relation embedded."""
    defined = {j.name for j in joints}
    if mimic:
        return tuple(f"joint {j.name!r} mimics {j.mimic!r} in the URDF; --mimic: it moves as {j.mimic_multiplier!r} * "
                     f"q[{j.mimic!r}] {'-' if j.mimic_offset < 0 else '+'} {abs(j.mimic_offset)!r}, no coordinate "
                     f"of its own" for j, *_ in tree.specs if j.mimic is not None)
    return tuple(f"joint {j.name!r} mimics {j.mimic!r} in the URDF"
                 f"{'' if j.mimic in defined else ' (which defines no joint of that name)'}; symgen "
                 f"treats it as an independent coordinate (as Pinocchio does by default; --mimic embeds the relation)"
                 for j, *_ in tree.specs if j.mimic is not None)


def _embedding(tree: Tree, joints: list[JointSpec], robot, ctx: Context):
    """The :class:`~symgen.mimic.Embedding` of the movable joints' ``<mimic>`` relations (after a
    free-flyer's q[0:7], v[0:6]); a mimic of a missing or fixed joint, or a cycle of mimics, is a
    URDFError naming the joint."""
    from ..mimic import Relation, build

    relations = tuple(Relation(j.name, j.mimic, j.mimic_multiplier, j.mimic_offset)
                      for j, *_ in tree.specs if j.mimic is not None)
    free = leading_free(robot, lambda joint, reason: ctx.error(f"<joint name={joint!r}>", reason))
    return build(robot.joint_names[free:], relations, {j.name for j in joints},
                 {j.name for j in joints if j.type == "fixed"},
                 lambda joint, reason: ctx.error(f"<joint name={joint!r}>/<mimic>", reason), 7 * free, 6 * free)


def parse_urdf_string(text: str, source: str | None = None, floating_base: bool = False,
                      snap_tol: float = 1e-9, strict_inertia: bool = False, mimic: bool = False,
                      open_loops: bool = False, trees=()) -> Robot:
    """The Robot described by the URDF ``text`` (``source`` names it in error messages and
    warnings). ``strict_inertia``: refuse inertias that are invalid beyond round-off instead of
    tolerating small violations with a warning (:mod:`symgen.urdf.validate`). ``mimic``: the
    ``<mimic>`` relations are embedded (reduced coordinates): the result is then a
    :class:`symgen.mimic.Embedded` system of the full Robot (when the file has any movable mimic
    joint). URDF+ (``<coupling>``, ``<loop>``, ``independent``): :mod:`.plus`; ``open_loops`` builds
    the open spanning tree of a file with loops instead of refusing it. ``trees``: the child links
    of the root link whose moving trees are kept, the others left out (:mod:`symgen.scenes`)."""
    if not snap_tol >= 0.0:
        raise OptionError(f"snap_tol must be a number >= 0, got {snap_tol!r}")
    ctx = Context(source, snap_tol)
    root_el = parse_xml(text, ctx)
    name, notes = robot_name(root_el, ctx)
    links = read_links(root_el, ctx)
    check_masses(links, ctx)
    joints = read_joints(root_el, links, ctx)
    up = parent_joints(joints, ctx)
    check_no_loop(links, up, ctx)
    root = root_link(links, up, ctx)
    if trees and not floating_base:                 # (a floating base is one tree, rooted at the root link)
        links, joints, dropped = urdf_keep(root, links, joints, trees, source)
        notes += (dropped_note(dropped),)
    elif trees:
        check_trees((SceneTree(root, "floating", ()),), trees, source)
    if floating_base:
        check_floating_names(links, joints, ctx)
    root_body = FREE_DOFS - 1 if floating_base else -1
    tree = assemble(root, links, joints, root_body, _virtual_frames(virtual_root(links)) if floating_base else ())
    if not tree.specs and not floating_base:
        raise ctx.error("<robot>", f"no movable joints (every joint is fixed, so {name!r} has no "
                                   f"degree of freedom; --floating-base would give it six)")
    notes += _mimic_notes(tree, joints, mimic)
    notes += check_inertias(tree, links, not floating_base, strict_inertia, ctx) + rotor_notes(tree)
    bodies = free_flyer_bodies(root, tree.inertias[root_body]) if floating_base else []
    damping = [0.0] * len(bodies)
    for k, (j, parent, R, p) in enumerate(tree.specs):
        if j.type in GROUP_OF:                          # planar, floating: several bodies
            bodies.extend(group_bodies(GROUP_OF[j.type], j.name, j.child, parent, len(bodies), as_mat3(R),
                                       as_vec3(p), tree.inertias[tree.spec_body[k]]))
            damping.extend([0.0] * (len(bodies) - len(damping)))
            continue
        bodies.append(Body(name=j.child, joint_name=j.name, joint_type=j.type, axis=j.axis,
                           parent=parent, rotation=as_mat3(R), translation=as_vec3(p),
                           inertia=tree.inertias[tree.spec_body[k]]))
        damping.append(j.damping)
    notes += _dynamics_notes(tree)
    scene = (SceneTree(root, "floating", tuple(range(len(bodies)))),) if floating_base else urdf_trees(root, joints)
    robot = Robot(name=name, bodies=tuple(bodies), root_link=virtual_root(links) if floating_base else root,
                  source=source, lumped=tuple(tree.lumped), snapped=tuple(ctx.snapped),
                  floating_base=floating_base, notes=notes, frames=tuple(tree.frames), trees=scene,
                  damping=tuple(damping) if any(damping) else ())
    plus = read_plus(root_el, links, ctx)
    if plus:                                        # URDF+: couplings embedded, loops refused or opened
        return embed(robot, plus, joints, ctx, mimic, open_loops)
    if mimic and any(j.mimic is not None for j, *_ in tree.specs):
        from ..mimic import Embedded

        return Embedded(robot, _embedding(tree, joints, robot, ctx))
    return robot


def _dynamics_notes(tree: Tree) -> tuple[str, ...]:
    """What of the movable joints' ``<dynamics>`` is left out: Coulomb friction (nonsmooth; Pinocchio
    keeps it as model.friction and its aba leaves it out) and the damping of a planar, floating or
    spherical joint (Pinocchio's parser reads none there)."""
    friction = [j.name for j, *_ in tree.specs if j.friction]
    group = [j.name for j, *_ in tree.specs if j.damping and j.type in GROUP_OF]
    notes = ()
    if friction:
        notes += (f"<dynamics friction> of joint(s) {', '.join(map(repr, friction))} left out: Coulomb friction is "
                  f"nonsmooth (Pinocchio keeps it as model.friction; its aba leaves it out too)",)
    if group:
        notes += (f"<dynamics damping> of the planar, floating or spherical joint(s) {', '.join(map(repr, group))} "
                  f"left out (as Pinocchio's URDF parser does)",)
    return notes


def _virtual_frames(world: str) -> tuple[Frame, ...]:
    """The frames above a floating base's root link: the virtual root link (Pinocchio's
    ``universe``) and the free-flyer's joint frame, ``root_joint`` (the root link's frame
    follows, from the tree)."""
    identity, origin = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)), (0.0, 0.0, 0.0)
    return (Frame(world, "link", -1, identity, origin), Frame(ROOT_JOINT, "joint", FREE_DOFS - 1, identity, origin, 0))


def load_urdf(path, floating_base: bool = False, snap_tol: float = 1e-9,
              strict_inertia: bool = False, mimic: bool = False, open_loops: bool = False, trees=()) -> Robot:
    """The Robot described by the URDF file ``path`` (see :func:`parse_urdf_string`)."""
    source = str(path)
    data = _read_capped(path, source)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise URDFError(source, None, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    text = text.replace("\r\n", "\n").replace("\r", "\n")     # as a file read in text mode
    return parse_urdf_string(text, source=source, floating_base=floating_base, snap_tol=snap_tol,
                             strict_inertia=strict_inertia, mimic=mimic, open_loops=open_loops, trees=trees)


def _read_capped(path, source: str) -> bytes:
    """The bytes of ``path``, at most MAX_URDF_BYTES: a larger regular file is refused from its
    size, anything else (a device, a pipe) when more than that arrives."""
    too_big = f"larger than {MAX_URDF_BYTES // 2**20} MiB, the most symgen reads as a URDF"
    try:
        with open(path, "rb") as f:
            info = os.fstat(f.fileno())
            if stat.S_ISDIR(info.st_mode):
                raise IsADirectoryError
            if stat.S_ISREG(info.st_mode) and info.st_size > MAX_URDF_BYTES:
                raise URDFError(source, None, f"{too_big} ({info.st_size / 2**20:.0f} MiB)")
            data = f.read(MAX_URDF_BYTES + 1)
    except FileNotFoundError:
        raise URDFError(source, None, "file not found") from None
    except IsADirectoryError:
        raise URDFError(source, None, "is a directory, not a URDF file") from None
    except OSError as exc:
        raise URDFError(source, None, f"cannot read the file ({exc.strerror})") from None
    if len(data) > MAX_URDF_BYTES:
        raise URDFError(source, None, too_big)
    return data
