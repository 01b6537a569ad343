"""Checks of what was read: the tree's structure (one root, no loops, one parent per link), the
names a floating base adds, and the physical validity of the bodies that enter the dynamics.

Inertias are checked per body, after fixed joints are lumped (a massless or placeholder link lumped
into a real body is fine), with three outcomes:

- round-off (a violation up to 1e-9 of the trace plus 1e-12 kg m^2): accepted silently;
- tolerated (unless ``strict``): a principal moment below zero by up to 1/4 of the trace, or a
  triangle inequality broken by any amount (with non-negative moments the spatial inertia is still
  positive semidefinite, so M stays so; CAD exports break it, e.g. romeo_small by 2/3 of the
  trace): a one-line :class:`~symgen.errors.SymgenWarning` naming the file, link and size;
- invalid: a larger negative moment, a negative mass anywhere: a :class:`~symgen.errors.URDFError`.

A link of mass 0 with a rotational inertia is a rotor (GRBDA's and Pinocchio's reading: pure
rotational inertia), checked like any other inertia and noted (:func:`.plus.rotor_notes`).

The body fixed to the ground of a fixed base is not used, so it is not checked (a note says why
if it would fail).
"""
from __future__ import annotations

import math
import warnings
from typing import TYPE_CHECKING

import numpy as np

from ..errors import SymgenWarning, located
from ..model import FREE_DOFS, ROOT_JOINT, Inertia

if TYPE_CHECKING:
    from .lump import Tree
    from .parse import Context, JointSpec

_ROUND_OFF = 1e-9              # violations below this fraction of the trace ...
_FLOOR = 1e-12                 # ... plus this, in kg m^2, are round-off
_TOLERATED_NEGATIVE = 0.25     # a negative principal moment up to this fraction of the trace is tolerated


def _inertia_issue(inertia: Inertia, strict: bool) -> tuple[str, bool] | None:
    """(why, tolerated) if ``inertia`` is not a rigid body's beyond round-off; None if it is."""
    I = np.array(inertia.I_com)
    if inertia.mass == 0.0 and not np.any(I):
        return None                 # massless; mass 0 with an inertia is a rotor (checked below)
    moments = np.linalg.eigvalsh(I)
    trace = max(float(moments.sum()), 0.0)
    round_off = _ROUND_OFF * trace + _FLOOR
    shown = ", ".join(f"{x:.6g}" for x in moments)
    if moments[0] < -round_off:
        share = -moments[0] / trace if trace > 0.0 else math.inf
        size = f"the negative one is {share:.2g} of the trace" if trace > 0.0 else "their sum is not positive"
        return (f"inertia is not physically valid (not positive semidefinite: principal moments "
                f"{shown}; {size})", not strict and share <= _TOLERATED_NEGATIVE)
    excess = moments[2] - moments[0] - moments[1]
    if excess > round_off:
        return (f"inertia is not physically valid (principal moments {shown} violate the triangle "
                f"inequality by {excess:.3g} kg m^2, {excess / trace:.2g} of the trace)", not strict)
    return None


def check_masses(links: dict[str, Inertia], ctx: Context) -> None:
    """A negative mass is an error wherever it is (it cannot come from rounding)."""
    for name, inertia in links.items():
        if inertia.mass < 0.0:
            raise ctx.error(f"<link name={name!r}>/<inertial>/<mass>", f"mass {inertia.mass!r} is negative")


def check_inertias(tree: Tree, links: dict[str, Inertia], fixed_base: bool, strict: bool,
                   ctx: Context) -> tuple[str, ...]:
    """Check every body that enters the dynamics (see the module docstring); warn of tolerated
    inertias and of joints that move only massless links. Returns notes for ``Robot.notes``."""
    notes = []
    for body, inertia in tree.inertias.items():
        issue = _inertia_issue(inertia, strict)
        if issue is None:
            continue
        why, tolerated = issue
        own, *others = tree.links_of(body)
        others = [name for name in others if links[name] != Inertia.zero()]
        why += f" (with {', '.join(map(repr, others))} lumped into it)" if others else ""
        if fixed_base and body == -1:
            notes.append(f"link {own!r}: {why}; not checked, since it is fixed to the ground and "
                         f"its inertia is unused")
            continue
        element = (f"<link name={own!r}>" if others else
                   f"<link name={own!r}>/<inertial>/<inertia>")
        if not tolerated:
            raise ctx.error(element, why)
        _warn(ctx, element, f"{why}; tolerated (strict_inertia=True refuses it)")
        notes.append(f"link {own!r}: {why}; tolerated")
    return tuple(notes) + _massless_subtrees(tree, ctx)


def _massless_subtrees(tree: Tree, ctx: Context) -> tuple[str, ...]:
    """A warning (and note) per joint that moves only massless links while its parent body does
    not: its row and column of M are zero, so M is singular."""
    masses = tree.subtree_masses()
    notes = []
    for k, (joint, parent, _, _) in enumerate(tree.specs):
        body = tree.spec_body[k]
        if masses[body] == 0.0 and (masses[parent] > 0.0 or parent == -1) and not _rotor_below(tree, body):
            why = (f"joint {joint.name!r} moves only massless links ({', '.join(map(repr, _below(tree, body)))}): "
                   f"the mass matrix is singular")
            _warn(ctx, f"<joint name={joint.name!r}>", why)
            notes.append(why)
    return tuple(notes)


def _rotor_below(tree: Tree, body: int) -> bool:
    """Whether a body at or below ``body`` has a rotational inertia (a rotor of mass 0: M is not
    singular for it)."""
    return any(np.any(np.array(tree.inertias[tree.body_of[link]].I_com)) for link in _below(tree, body))


def _below(tree: Tree, body: int) -> list[str]:
    """The links of ``body`` and of every body below it."""
    bodies = {body}
    for k, (_, parent, _, _) in enumerate(tree.specs):
        if parent in bodies:
            bodies.add(tree.spec_body[k])
    return [link for link, b in tree.body_of.items() if b in bodies]


def _warn(ctx: Context, element: str, reason: str) -> None:
    warnings.warn(SymgenWarning(located(ctx.source, element, reason)), stacklevel=2)


def parent_joints(joints: list[JointSpec], ctx: Context) -> dict[str, JointSpec]:
    """Child link -> the one joint that has it as child."""
    up: dict[str, JointSpec] = {}
    for j in joints:
        if j.child in up:
            raise ctx.error(f"<link name={j.child!r}>", f"link has two parent joints, "
                                                        f"{up[j.child].name!r} and {j.name!r}")
        up[j.child] = j
    return up


def check_no_loop(links, up: dict[str, JointSpec], ctx: Context) -> None:
    done: set[str] = set()
    for start in links:
        path: list[str] = []
        link = start
        while link in up and link not in done:
            if link in path:
                cycle = [up[x].name for x in path[path.index(link):]]
                raise ctx.error(f"<joint name={cycle[0]!r}>",
                                f"joints form a loop: {' -> '.join(cycle + cycle[:1])}")
            path.append(link)
            link = up[link].parent
        done.update(path)


def root_link(links, up: dict[str, JointSpec], ctx: Context) -> str:
    roots = [name for name in links if name not in up]
    if len(roots) > 1:
        raise ctx.error("<robot>", f"more than one root link: {', '.join(map(repr, roots))} (every "
                                   f"link but one must be the child of a joint)")
    return roots[0]


def virtual_root(links) -> str:
    """The name of a floating base's virtual root link: ``world``, unless the URDF has a link of
    that name (arms fixed to a ``world`` link; the free motion then moves that link, as
    Pinocchio's free-flyer does), then ``floating_world`` (``_1``, ``_2``, ... if need be)."""
    name, k = "world", 0
    while name in links:
        name, k = f"floating_world{f'_{k}' if k else ''}", k + 1
    return name


def check_floating_names(links, joints: list[JointSpec], ctx: Context) -> None:
    """The virtual links and joints of a floating base must not clash with the URDF's names."""
    virtual_links = {f"{ROOT_JOINT}_{k}" for k in range(FREE_DOFS - 1)}
    for name in sorted(virtual_links & set(links)):
        raise ctx.error(f"<link name={name!r}>", "a floating base (--floating-base) adds a virtual "
                                                 "link of this name")
    for name in {ROOT_JOINT} & {j.name for j in joints}:
        raise ctx.error(f"<joint name={name!r}>", "a floating base (--floating-base) adds a virtual "
                                                  "joint of this name")
