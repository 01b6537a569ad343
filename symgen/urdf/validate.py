"""Checks of what was read: the tree's structure (one root, no loops, one parent per link), the
names a floating base adds, and the physical validity of inertias."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..errors import URDFError
from ..model import FLOATING_JOINTS

if TYPE_CHECKING:
    from .lump import Tree
    from .parse import Context, JointSpec

_INERTIA_VALID = 1e-9          # tolerance of the validity checks, relative to the trace ...
_INERTIA_FLOOR = 1e-12         # ... plus this, in kg m^2, so that pure round-off passes
VIRTUAL_ROOT = "world"


def inertia_problem(mass: float, I: np.ndarray, ctx: Context, where: str) -> URDFError | None:
    """Why (mass, I) cannot be a rigid body, as the error to raise if it is used; None if it can."""
    if mass < 0.0:
        return ctx.error(f"{where}/<mass>", f"mass {mass!r} is negative")
    if mass == 0.0 and np.any(I != 0.0):
        return ctx.error(where, "mass is 0 but the inertia is not zero")
    moments = np.linalg.eigvalsh(I)
    tol = _INERTIA_VALID * max(float(np.trace(I)), 0.0) + _INERTIA_FLOOR
    shown = ", ".join(f"{x:.6g}" for x in moments)
    if moments[0] < -tol:
        return ctx.error(f"{where}/<inertia>", f"inertia is not physically valid (not positive "
                                               f"semidefinite: principal moments {shown})")
    if moments[2] > moments[0] + moments[1] + tol:
        return ctx.error(f"{where}/<inertia>", f"inertia is not physically valid (principal moments "
                                               f"{shown} violate the triangle inequality)")
    return None


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


def check_used_inertias(tree: Tree, fixed_base: bool, ctx: Context) -> tuple[str, ...]:
    """Raise the first invalid inertia that enters the model; one that is fixed to the ground of
    a fixed base (the root link and links lumped into it) does not, and gets a note instead."""
    notes = []
    for link, problem in ctx.invalid.items():
        if not (fixed_base and tree.body_of[link] == -1):
            raise problem
        notes.append(f"link {link!r}: {problem.reason}; ignored, since the link is fixed to "
                     f"the ground and its inertia is unused")
    return tuple(notes)


def check_floating_names(links, joints: list[JointSpec], ctx: Context) -> None:
    """The virtual links and joints of a floating base must not clash with the URDF's names."""
    if VIRTUAL_ROOT in links:
        raise ctx.error(f"<link name={VIRTUAL_ROOT!r}>",
                        f"a floating base (--floating-base) adds a virtual root link {VIRTUAL_ROOT!r}, "
                        f"and this URDF already has one: it is fixed to the ground, load it without "
                        f"--floating-base")
    virtual_links = {f"{name}_link" for name, _, _ in FLOATING_JOINTS[:-1]}
    for name in virtual_links & set(links):
        raise ctx.error(f"<link name={name!r}>", "a floating base (--floating-base) adds a virtual "
                                                 "link of this name")
    virtual_joints = {name for name, _, _ in FLOATING_JOINTS}
    for name in virtual_joints & {j.name for j in joints}:
        raise ctx.error(f"<joint name={name!r}>", "a floating base (--floating-base) adds a virtual "
                                                  "joint of this name")
