"""URDF+ (GRBDA's extension of URDF for mechanisms with local loops): ``<coupling>``, ``<loop>``
and the joint attribute ``independent``, read as ``mit-biomimetics/urdfdom`` and
``ROAM-Lab-ND/generalized_rbda`` (``ClusterTreeParsing.cpp``) define them.

- ``<joint ... independent="false">``: the joint's coordinate is solved from the constraints of
  its cluster (default ``true``; urdfdom takes anything but ``true``/``True`` as false, symgen
  accepts ``true``, ``True``, ``false``, ``False`` and refuses the rest).
- ``<coupling name=N [type="rolling"]>`` with ``<predecessor link=P/>``, ``<successor link=S/>``,
  ``<ratio value=r/>``: with A the nearest common ancestor of P and S, ratio * (sum of the
  coordinates of the joints from A down to P) = (sum of those from A down to S) -- GRBDA's row of
  K (ratio on the predecessor path, -1 on the successor path), so a rotor geared to one joint
  turns as r q, and a belt's rotor whose predecessor lies two joints below A turns as
  r (q_1 + q_2). A linear, constant constraint: embedded by :mod:`symgen.couplings`.
- ``<loop name=N type=T>`` with ``<predecessor link=P><origin .../></predecessor>``,
  ``<successor link=S><origin .../></successor>`` and ``<axis>``: the point at the predecessor's
  origin coincides with the successor's (GRBDA closes those translation rows). A nonlinear
  constraint: symgen cannot embed it yet and refuses the file unless ``open_loops`` (the CLI's
  ``--open-loops``) asks for the open spanning tree, the loop's dependent joints then being
  ordinary coordinates.
- Clusters are the connected components of the joints that constraints tie together (the joints
  on both paths from the nearest common ancestor), i.e. the strongly connected components of the
  tree plus the constraint edges; each coupling cluster needs as many dependent joints as it has
  couplings, with the equations fixing them.

Every refusal is a :class:`~symgen.errors.URDFError` naming the file, the element and the reason.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, replace

import numpy as np

from ..errors import SymgenWarning, located
from ..joint_models import leading_free
from .parse import _attribute, _child, _numbers, _origin

LOOP_TYPES = ("revolute", "continuous", "prismatic", "planar", "fixed")
_SINGLE_DOF = ("revolute", "continuous", "prismatic")


@dataclass(frozen=True)
class Coupling:
    name: str
    predecessor: str
    successor: str
    ratio: float


@dataclass(frozen=True)
class Loop:
    name: str
    type: str
    predecessor: str
    successor: str
    #: (R, p) of the constraint point in the predecessor's and the successor's link frame
    predecessor_origin: tuple
    successor_origin: tuple
    axis: tuple


@dataclass(frozen=True)
class Plus:
    """What a URDF+ file adds to its URDF: couplings, loops, the joints marked dependent."""
    couplings: tuple[Coupling, ...] = ()
    loops: tuple[Loop, ...] = ()
    dependent: tuple[str, ...] = ()

    def __bool__(self):
        return bool(self.couplings or self.loops or self.dependent)


# ---------------------------------------------------------------------------------- reading

def _independent(el, name, ctx) -> bool:
    value = el.get("independent")
    if value is None or value in ("true", "True"):
        return True
    if value in ("false", "False"):
        return False
    raise ctx.error(f"<joint name={name!r}>", f"attribute independent={value!r}: expected true or false")


def _link(el, tag, links, ctx, where) -> tuple[str, object]:
    child = _child(el, tag, ctx, where)
    link = _attribute(child, "link", ctx, f"{where}/<{tag}>")
    if link not in links:
        raise ctx.error(f"{where}/<{tag}>", f"link {link!r} is not defined")
    return link, child


def read_plus(root, links, ctx) -> Plus:
    """The URDF+ elements of the ``<robot>`` element ``root`` (``links``: the link names)."""
    dependent = []
    for k, el in enumerate(root.findall("joint"), start=1):
        name = el.get("name", f"#{k}")
        if not _independent(el, name, ctx):
            dependent.append(name)
    names: set[str] = set()
    couplings, loops = [], []
    for tag in ("coupling", "loop"):
        for k, el in enumerate(root.findall(tag), start=1):
            name = _attribute(el, "name", ctx, f"<{tag}> #{k}")
            where = f"<{tag} name={name!r}>"
            if name in names:
                raise ctx.error(where, "duplicate constraint name (couplings and loops share one namespace)")
            names.add(name)
            pred, pred_el = _link(el, "predecessor", links, ctx, where)
            succ, succ_el = _link(el, "successor", links, ctx, where)
            if pred == succ:
                raise ctx.error(where, f"predecessor and successor are the same link {pred!r}")
            if tag == "coupling":
                kind = el.get("type", "rolling")
                if kind != "rolling":
                    raise ctx.error(where, f"coupling type {kind!r} is not known (GRBDA's couplings are 'rolling')")
                ratio = _numbers(_child(el, "ratio", ctx, where), "value", 1, ctx, f"{where}/<ratio>")[0]
                couplings.append(Coupling(name, pred, succ, ratio))
                continue
            kind = _attribute(el, "type", ctx, where)
            if kind not in LOOP_TYPES:
                raise ctx.error(where, f"loop type {kind!r} is not known; expected one of {', '.join(LOOP_TYPES)}")
            axis = _numbers(el.find("axis"), "xyz", 3, ctx, f"{where}/<axis>", default=(1.0, 0.0, 0.0))
            loops.append(Loop(name, kind, pred, succ,
                              _origin(pred_el, ctx, f"{where}/<predecessor>", f"loop {name!r} predecessor"),
                              _origin(succ_el, ctx, f"{where}/<successor>", f"loop {name!r} successor"), axis))
    return Plus(tuple(couplings), tuple(loops), tuple(dependent))


# --------------------------------------------------------------------------------- clusters

def path_joints(link: str, ancestor: str, up) -> list:
    """The joints from ``ancestor`` (exclusive) down to ``link``, bottom up (``up``: child link
    -> its JointSpec)."""
    out = []
    while link != ancestor:
        joint = up[link]
        out.append(joint)
        link = joint.parent
    return out


def ancestry(link: str, up) -> list[str]:
    """``link`` and its ancestors up to the root."""
    out = [link]
    while out[-1] in up:
        out.append(up[out[-1]].parent)
    return out


def nearest_common_ancestor(a: str, b: str, up) -> str:
    above = set(ancestry(a, up))
    return next(link for link in ancestry(b, up) if link in above)


def _tied(constraint, up) -> tuple[str, list, list]:
    nca = nearest_common_ancestor(constraint.predecessor, constraint.successor, up)
    return nca, path_joints(constraint.predecessor, nca, up), path_joints(constraint.successor, nca, up)


def clusters(constraints, up) -> list[tuple[list, set[str]]]:
    """The clusters of ``constraints``: (its constraints, its joint names), connected components
    of the joints each constraint ties (both paths from the nearest common ancestor)."""
    groups: list[tuple[list, set[str]]] = []
    for c in constraints:
        _, pred, succ = _tied(c, up)
        joints = {j.name for j in pred + succ}
        merged = [g for g in groups if g[1] & joints]
        group = ([c], joints)
        for g in merged:
            group[0][:0] = g[0]
            group[1].update(g[1])
            groups.remove(g)
        groups.append(group)
    return groups


# ---------------------------------------------------------------------------------- the hook

def embed(robot, plus: Plus, joints, ctx, mimic: bool = False, open_loops: bool = False):
    """``robot`` (the full tree the reader built) with the URDF+ constraints of ``plus`` honoured:
    a :class:`~symgen.couplings.Coupled` system when there are couplings (or mimic joints with
    ``mimic``), the robot itself (with notes) otherwise. A loop is refused unless ``open_loops``."""
    from ..couplings import Constraint, Coupled, solve
    from ..mimic import Relation

    up = {j.child: j for j in joints}
    by_name = {j.name: j for j in joints}
    movable = set(robot.joint_names)
    for name in plus.dependent:
        if name in by_name and by_name[name].type == "fixed":
            raise ctx.error(f"<joint name={name!r}>", 'a fixed joint marked independent="false" (it has no coordinate)')
    loop_joints: set[str] = set()
    for loop in plus.loops:
        _, pred, succ = _tied(loop, up)
        loop_joints.update(j.name for j in pred + succ)
    mimics = mimic and any(j.mimic is not None and j.name in movable for j in joints)
    if plus.loops and not open_loops and (plus.couplings or mimics):
        loop = plus.loops[0]
        raise ctx.error(f"<loop name={loop.name!r}>",
                        f"a {loop.type} loop closure beside {'couplings' if plus.couplings else '--mimic joints'} is not "
                        f"embedded yet; --open-loops builds the open spanning tree on purpose (the loop's joints then "
                        f"move freely: not the closed mechanism's dynamics)")
    notes = []
    for c in plus.couplings:
        _, pred, succ = _tied(c, up)
        where = f"<coupling name={c.name!r}>"
        for j in pred + succ:
            if j.type not in _SINGLE_DOF + ("fixed",):
                raise ctx.error(where, f"joint {j.name!r} on its path is {j.type!r}; a coupling ties revolute, "
                                       f"continuous or prismatic joints")
        if not [j for j in pred if j.type != "fixed"] or not [j for j in succ if j.type != "fixed"]:
            raise ctx.error(where, f"links {c.predecessor!r} and {c.successor!r}: one lies on the other's path to "
                                   f"the root, so one side has no joint to couple")
    groups = clusters(plus.couplings, up)
    dep_coupled = []
    for group, tied in groups:
        deps = [name for name in plus.dependent if name in tied]
        if len(deps) != len(group):
            raise ctx.error(f"<coupling name={group[0].name!r}>",
                            f"its cluster ({', '.join(repr(c.name) for c in group)}: joints {', '.join(sorted(map(repr, tied)))}) "
                            f"has {len(group)} coupling(s) but {len(deps)} joint(s) marked independent=\"false\"; "
                            f"mark one dependent joint per coupling (the rotor's)")
        dep_coupled += deps
    for name in plus.dependent:
        if name not in dep_coupled and name not in loop_joints and name in by_name:
            raise ctx.error(f"<joint name={name!r}>", 'marked independent="false" but no <coupling> or <loop> ties it')
    if plus.loops and not open_loops:                   # nonlinear loops: G(q) (symgen.loops, symgen.closed)
        from ..closed import Closed
        from ..loops import closed_system

        speeds = ", ".join(repr(j) for j in robot.joint_names if j not in plus.dependent)
        notes += [f"loop {loop.name!r} ({loop.type}, {loop.predecessor!r} to {loop.successor!r}): closed by "
                  f"embedding; q holds the spanning tree's coordinates, v the speeds of {speeds}" for loop in plus.loops]
        robot = replace(robot, notes=robot.notes + tuple(notes))
        return Closed(closed_system(robot, plus.loops, plus.dependent, lambda element, reason: ctx.error(
            element, f"{reason}; --open-loops builds the open spanning tree on purpose (not the closed mechanism's dynamics)")))
    if plus.loops:
        opened = ", ".join(repr(loop.name) for loop in plus.loops)
        reason = (f"--open-loops: loop(s) {opened} not closed; the open spanning tree is built, every joint of it "
                  f"a coordinate (not the closed mechanism's dynamics)")
        warnings.warn(SymgenWarning(located(ctx.source, "<robot>", reason)), stacklevel=3)
        notes.append(reason)
    constraints = []
    for c in plus.couplings:
        _, pred, succ = _tied(c, up)
        coeffs = [(j.name, c.ratio) for j in pred if j.type != "fixed"] + [(j.name, -1.0) for j in succ if j.type != "fixed"]
        constraints.append(Constraint(c.name, "coupling", tuple(coeffs)))
        notes.append(f"coupling {c.name!r}: {c.ratio:g} * ({' + '.join(j.name for j in reversed(pred) if j.type != 'fixed')}) "
                     f"= {' + '.join(j.name for j in reversed(succ) if j.type != 'fixed')}")
    relations = ()
    if mimic:
        relations = tuple(Relation(j.name, j.mimic, j.mimic_multiplier, j.mimic_offset)
                          for j in joints if j.mimic is not None and j.name in movable)
        for rel in relations:
            if rel.target not in movable:
                raise ctx.error(f"<joint name={rel.joint!r}>/<mimic>",
                                f"--mimic: mimics joint {rel.target!r}, which is not a movable joint of the tree")
        constraints += [Constraint(r.joint, "mimic", ((r.joint, 1.0), (r.target, -r.multiplier)), r.offset)
                        for r in relations]
        dep_coupled += [r.joint for r in relations]
    robot = replace(robot, notes=robot.notes + tuple(notes))
    if not constraints:
        return robot
    free = leading_free(robot, lambda joint, reason: ctx.error(f"<joint name={joint!r}>", reason))
    names = robot.joint_names[free:]
    emb = solve(names, constraints, dep_coupled, 7 * free, 6 * free, relations,
                lambda reason: ctx.error(f"<coupling name={constraints[0].name!r}>", reason))
    return Coupled(robot, emb)


def rotor_notes(tree) -> tuple[str, ...]:
    """One note per moving body of mass 0 with a rotational inertia (a rotor), as GRBDA and
    Pinocchio read them: pure rotational inertia about its origin. A placeholder link lumped into
    a real body is no rotor (its body has a mass)."""
    notes = []
    for body, inertia in tree.inertias.items():
        I = np.array(inertia.I_com)
        if body >= 0 and inertia.mass == 0.0 and np.any(I):
            moments = ", ".join(f"{x:.3g}" for x in np.linalg.eigvalsh(I))
            notes.append(f"link {tree.links_of(body)[0]!r}: mass 0 with rotational inertia (principal moments "
                         f"{moments}): read as a rotor, pure rotational inertia")
    return tuple(notes)
