"""The reader's entry points: a URDF text or file in, a :class:`~symgen.model.Robot` out."""
from __future__ import annotations

from pathlib import Path

from ..errors import OptionError, URDFError
from ..model import FLOATING_JOINTS, Body, Robot, as_mat3, as_vec3, floating_base_bodies
from .lump import Tree, assemble
from .parse import Context, JointSpec, parse_xml, read_joints, read_links, robot_name
from .validate import (VIRTUAL_ROOT, check_floating_names, check_no_loop, check_used_inertias, parent_joints,
                       root_link)


def _mimic_notes(tree: Tree, joints: list[JointSpec]) -> tuple[str, ...]:
    """One note per movable mimic joint, in q order (a fixed one has no coordinate to speak of).
    A mimicked joint the file does not define is said so (urdfdom, hence Pinocchio, accepts it)."""
    defined = {j.name for j in joints}
    return tuple(f"joint {j.name!r} mimics {j.mimic!r} in the URDF"
                 f"{'' if j.mimic in defined else ' (which defines no joint of that name)'}; symgen "
                 f"treats it as an independent coordinate (as Pinocchio does by default)"
                 for j, *_ in tree.specs if j.mimic is not None)


def parse_urdf_string(text: str, source: str | None = None, floating_base: bool = False,
                      snap_tol: float = 1e-9) -> Robot:
    """The Robot described by the URDF ``text`` (``source`` names it in error messages)."""
    if not snap_tol >= 0.0:
        raise OptionError(f"snap_tol must be a number >= 0, got {snap_tol!r}")
    ctx = Context(source, snap_tol)
    root_el = parse_xml(text, ctx)
    name, notes = robot_name(root_el, ctx)
    links = read_links(root_el, ctx)
    joints = read_joints(root_el, links, ctx)
    up = parent_joints(joints, ctx)
    check_no_loop(links, up, ctx)
    root = root_link(links, up, ctx)
    if floating_base:
        check_floating_names(links, joints, ctx)
    root_body = len(FLOATING_JOINTS) - 1 if floating_base else -1
    tree = assemble(root, links, joints, root_body)
    if not tree.specs and not floating_base:
        raise ctx.error("<robot>", f"no movable joints (every joint is fixed, so {name!r} has no "
                                   f"degree of freedom; --floating-base would give it six)")
    notes += _mimic_notes(tree, joints)
    notes += check_used_inertias(tree, not floating_base, ctx)
    bodies = floating_base_bodies(root, tree.inertias[root_body]) if floating_base else []
    for k, (j, parent, R, p) in enumerate(tree.specs):
        bodies.append(Body(name=j.child, joint_name=j.name, joint_type=j.type, axis=j.axis,
                           parent=parent, rotation=as_mat3(R), translation=as_vec3(p),
                           inertia=tree.inertias[root_body + 1 + k]))
    return Robot(name=name, bodies=tuple(bodies), root_link=VIRTUAL_ROOT if floating_base else root,
                 source=source, lumped=tuple(tree.lumped), snapped=tuple(ctx.snapped),
                 floating_base=floating_base, notes=notes)


def load_urdf(path, floating_base: bool = False, snap_tol: float = 1e-9) -> Robot:
    """The Robot described by the URDF file ``path``."""
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise URDFError(source, None, "file not found") from None
    except IsADirectoryError:
        raise URDFError(source, None, "is a directory, not a URDF file") from None
    except UnicodeDecodeError as exc:
        raise URDFError(source, None, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise URDFError(source, None, f"cannot read the file ({exc.strerror})") from None
    return parse_urdf_string(text, source=source, floating_base=floating_base, snap_tol=snap_tol)
