"""Scenes: several moving trees side by side (a robot beside the objects it handles, two free
bodies, an arm beside a door), read from the one file a user already simulates.

A *tree* is a child of the fixed root (MJCF: a child body of ``<worldbody>``; URDF: the child link
of a joint of the root link) with everything below it; it is *moving* when it holds at least one
degree of freedom. Each moving tree keeps its own root joint: a free joint (MJCF ``free``, URDF
``floating``), a joint to the world, or none (a fixed root body whose children move).

- q and v hold the trees one after the other, in the file's order (MuJoCo's body order; URDF's
  depth first walk, child joints by name), each tree's joints as for a single robot.
- A free joint of a scene is a free-flyer *inside* the model, at the world (Pinocchio's
  JointModelFreeFlyer below the universe; :func:`symgen.model.group_bodies` with parent -1), named as
  the file names it. Only the free joint of a model with a single moving tree is the floating base
  (``root_joint``, ``floating_base``) as before: a floating base makes its base frame the
  algorithms' reference frame, which the world's other trees do not hang from. q and v of every
  free-flyer follow the same convention (position and quaternion x y z w, body-frame velocities),
  and ``from_mujoco``/``to_mujoco`` convert each free joint (:mod:`symgen.mjcf_convert`).
- No body of one tree is the ancestor of a body of another, so M, M^-1 and every Jacobian of a tree
  are block-diagonal by tree with exact zeros: the recursive algorithms never combine bodies that
  are not on one path to the root, and the generated code does no work across trees.
- ``--tree BODY[,BODY]`` (``trees=`` of the loaders) keeps the moving trees rooted at the bodies
  named, in the file's order; the others are dropped before the model is read (MJCF: deleted from
  MuJoCo's model specification with the elements that refer to them, then compiled again; URDF:
  their joints and links left out) and named in the robot's notes. Bodies without a degree of
  freedom (a table, the floor) stay: they move nothing and keep their frames.
"""
from __future__ import annotations

from dataclasses import dataclass

from .errors import URDFError


@dataclass(frozen=True)
class Tree:
    """One moving tree: the body it hangs from the world by (``root``), the root's joint in the
    file's words (MJCF ``free``, ``hinge``, ``slide``, ``ball``; URDF ``floating``, ``revolute``,
    ...; ``fixed``: the root body has none, its children move) and the model's bodies (velocities)
    it holds."""

    root: str
    kind: str
    bodies: tuple[int, ...]

    @property
    def nv(self) -> int:
        return len(self.bodies)

    def describe(self) -> str:
        return f"{self.root} ({self.kind}, nv {self.nv})"


def trees_of(robot) -> tuple[Tree, ...]:
    """The robot's moving trees: those its reader recorded (``Robot.trees``), or else one per
    body hanging from the fixed root, named after the link its first joint moves."""
    if robot.trees:
        return robot.trees
    top = []
    for i, parent in enumerate(robot.parent):
        top.append(i if parent < 0 else top[parent])
    out = {}
    for j in robot.joint_models:
        if robot.parent[j.first] < 0 and j.first not in out:
            out[j.first] = (robot.bodies[j.last].name, j.kind)
    return tuple(Tree(name, kind, tuple(i for i in range(robot.n) if top[i] == first))
                 for first, (name, kind) in out.items())


def is_scene(robot) -> bool:
    """Whether the robot has more than one moving tree."""
    return len(trees_of(robot)) > 1


def package_trees(robot) -> tuple[Tree, ...] | None:
    """The trees a package lists (``trees``, ``tree_velocities``, the manifest's ``trees``): those of
    a scene; None for one tree, and in reduced coordinates (--mimic, couplings, loops), where v is not
    the trees' velocities."""
    if robot.embedding is not None or robot.system is not None or not is_scene(robot):
        return None
    return trees_of(robot)


def check_trees(trees, keep, source) -> None:
    """A URDFError naming the file, the first unknown name of ``keep`` and the trees there are."""
    known = {t.root for t in trees}
    for name in keep:
        if name not in known:
            listing = ", ".join(t.describe() for t in trees) or "none"
            raise URDFError(source, f"--tree {name}", f"no moving tree is rooted at a body called {name!r}; "
                            f"the moving trees: {listing}")


def parse_trees(text) -> tuple[str, ...]:
    """``--tree a,b`` as ('a', 'b'): the names in the order given, each once, blanks dropped."""
    if text is None:
        return ()
    names = text if isinstance(text, (tuple, list)) else str(text).split(",")
    return tuple(dict.fromkeys(n.strip() for n in names if n.strip()))


def dropped_note(dropped, what: str = "") -> str:
    """The note of a robot read with ``--tree``."""
    return (f"--tree: {len(dropped)} moving tree{'s' * (len(dropped) != 1)} left out: "
            + ", ".join(t.describe() for t in dropped) + what)


# ------------------------------------------------------------------------------------------- MJCF

#: MuJoCo's joint types (mjtJoint) in MJCF's words
MJCF_KINDS = ("free", "ball", "slide", "hinge")


def mjcf_trees(m, name) -> tuple[Tree, ...]:
    """MuJoCo's moving trees of the compiled model ``m``: per child body of the world with a
    degree of freedom below it, its name (``name(b)``), its joint's type and its dofs."""
    roots = {}
    for dof in range(m.nv):
        root = int(m.body_rootid[m.dof_bodyid[dof]])
        roots.setdefault(root, []).append(dof)
    out = []
    for root, dofs in roots.items():
        kind = MJCF_KINDS[int(m.jnt_type[m.body_jntadr[root]])] if m.body_jntnum[root] else "fixed"
        out.append(Tree(name(root), kind, tuple(dofs)))
    return tuple(out)


def mjcf_drop(m, name, keep, source) -> tuple[list[int], tuple[Tree, ...]]:
    """(the body ids of the world's children to delete, the trees dropped) to keep only the moving
    trees rooted at the bodies ``keep`` names (URDFError on a name that roots none)."""
    trees = mjcf_trees(m, name)
    check_trees(trees, keep, source)
    dropped = tuple(t for t in trees if t.root not in keep)
    names = {t.root for t in dropped}
    roots = {int(m.body_rootid[m.dof_bodyid[t.bodies[0]]]) for t in dropped}
    return sorted(b for b in roots if name(b) in names), dropped


def delete_bodies(mujoco, path, bodies):
    """MuJoCo's model of the file ``path`` with the bodies of compiled ids ``bodies`` (and what
    refers to them) deleted from its specification, compiled again."""
    spec = mujoco.MjSpec.from_file(str(path))
    doomed = [spec.bodies[b] for b in bodies]            # (the spec lists bodies in compiled order)
    gone = {body.name for top in doomed for body in [top, *top.find_all(mujoco.mjtObj.mjOBJ_BODY)]}
    for element in [*spec.cameras, *spec.lights]:         # a camera or light aimed at a body left out
        if element.targetbody in gone:                   # (it moves nothing)
            spec.delete(element)
    for body in doomed:
        spec.delete(body)
    return spec.compile()


def refuse_constraints(m, source):
    """The one-line refusal of a scene with free joints and equality constraints (couplings and
    loops are embedded on one tree with at most a floating base at its root: not beside free-flyers
    at the world yet)."""
    import mujoco

    kind = mujoco.mjtEq(int(m.eq_type[0])).name.removeprefix("mjEQ_").lower()
    name = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_EQUALITY, 0)
    raise URDFError(source, f"<equality>/<{kind}{f' name={name!r}' if name else ''}>", "an equality constraint "
                    "in a scene with free joints is not supported yet (--tree keeps the trees without them)")


# ------------------------------------------------------------------------------------------- URDF

def urdf_tree_roots(root: str, joints) -> dict[str, str]:
    """Per link below the root link ``root``: the child link of the root's joint above it."""
    children: dict[str, list] = {}
    for j in joints:
        children.setdefault(j.parent, []).append(j)
    out = {}
    for top in children.get(root, []):
        stack = [top.child]
        while stack:
            link = stack.pop()
            out[link] = top.child
            stack.extend(j.child for j in children.get(link, []))
    return out


def urdf_trees(root: str, joints) -> tuple[Tree, ...]:
    """The moving trees of a URDF with a fixed root link ``root``: per joint of the root link whose
    subtree has a movable joint, its child link, its type and its bodies (the reader's depth first
    walk, child joints by name, gives each tree consecutive velocities)."""
    tops = urdf_tree_roots(root, joints)
    nv: dict[str, int] = {}
    for j in joints:
        if j.type != "fixed":
            nv[tops[j.child]] = nv.get(tops[j.child], 0) + _URDF_VELOCITIES.get(j.type, 1)
    out, first = [], 0
    for j in sorted(joints, key=lambda j: j.name):
        if j.parent == root and j.child in nv:
            out.append(Tree(j.child, j.type, tuple(range(first, first + nv[j.child]))))
            first += nv[j.child]
    return tuple(out)


#: the velocities of a URDF joint of several (the others have one; fixed joints none)
_URDF_VELOCITIES = {"planar": 3, "floating": 6, "spherical": 3}


def urdf_keep(root: str, links: dict, joints: list, keep, source):
    """(links, joints, the trees dropped) of a URDF with only the moving trees rooted at the links
    ``keep`` names below its root link (URDFError on a name that roots none)."""
    trees = urdf_trees(root, joints)
    check_trees(trees, keep, source)
    tops = urdf_tree_roots(root, joints)
    dropped = tuple(t for t in trees if t.root not in keep)
    gone = {t.root for t in dropped}
    links = {name: link for name, link in links.items() if tops.get(name) not in gone}
    return links, [j for j in joints if tops[j.child] not in gone], dropped
