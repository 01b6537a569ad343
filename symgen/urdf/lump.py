"""The tree in q order: depth first from the root link, fixed joints lumped into the body they
hang from."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..joint_models import JOINT_MODELS
from ..model import Frame, Inertia, as_mat3, as_vec3
from .parse import GROUP_OF, JointSpec


def _children(joints: list[JointSpec]) -> dict[str, list[JointSpec]]:
    """Parent link -> its child joints in order of joint name (urdfdom's, hence Pinocchio's)."""
    out: dict[str, list[JointSpec]] = {}
    for j in sorted(joints, key=lambda j: j.name):
        out.setdefault(j.parent, []).append(j)
    return out


@dataclass(frozen=True)
class _Mount:
    """Where a URDF link sits: on body ``body`` (-1: the root) named ``body_link``, at (R, p);
    ``frame``: the index of its frame."""

    body: int
    body_link: str
    R: np.ndarray
    p: np.ndarray
    frame: int


@dataclass(frozen=True)
class Tree:
    """The bodies in q order: specs[k] = (joint, parent body, R, p) of body spec_body[k] (a planar
    or floating joint: the last of its bodies, see symgen.model.JOINT_MODELS);
    inertias: body index (root_body for the root) -> lumped inertia; body_of: link -> body index;
    frames: every link's and joint's frame, in the order of the walk (each joint, then its child)."""

    root_body: int
    specs: list
    inertias: dict[int, Inertia]
    lumped: list[str]
    body_of: dict[str, int]
    frames: list[Frame]
    spec_body: list = field(default_factory=list)

    def links_of(self, body: int) -> list[str]:
        """The URDF links that make up ``body``: its own link first, then those lumped into it."""
        return [link for link, b in self.body_of.items() if b == body]

    def subtree_masses(self) -> dict[int, float]:
        """Body index -> mass of the body and everything below it (root included)."""
        total = {b: I.mass for b, I in self.inertias.items()}
        for k in reversed(range(len(self.specs))):
            total[self.specs[k][1]] += total[self.spec_body[k]]
        return total


def assemble(root: str, links, joints: list[JointSpec], root_body: int, above: tuple[Frame, ...] = ()) -> Tree:
    """Depth first from the root, child joints in order of joint name; fixed joints lumped.
    ``above``: the frames above the root link (a floating base's), the last one its parent."""
    children = _children(joints)
    inertias = {root_body: links[root]}
    specs, spec_body, lumped, body_of = [], [], [], {root: root_body}
    frames = [*above, _frame(root, "link", root_body, np.eye(3), np.zeros(3), len(above) - 1)]
    top = _Mount(root_body, root, np.eye(3), np.zeros(3), len(frames) - 1)
    stack = [(j, top) for j in reversed(children.get(root, []))]
    while stack:
        j, at = stack.pop()
        R, p = at.R @ j.rotation, at.R @ j.translation + at.p
        if j.type == "fixed":
            inertias[at.body] = inertias[at.body] + links[j.child].transformed(R, p)
            lumped.append(f"{j.child} -> {at.body_link}")
            here = _Mount(at.body, at.body_link, R, p, len(frames) + 1)
        else:
            index = (spec_body[-1] if spec_body else root_body) + _velocities(j.type)
            specs.append((j, at.body, R, p))
            spec_body.append(index)
            inertias[index] = links[j.child]
            here = _Mount(index, j.child, np.eye(3), np.zeros(3), len(frames) + 1)
        # a moving joint's frame is its child's body frame (after the motion); a fixed one's is its child's
        frames.append(_frame(j.name, "joint", here.body, here.R, here.p, at.frame))
        frames.append(_frame(j.child, "link", here.body, here.R, here.p, len(frames) - 1))
        body_of[j.child] = here.body
        stack.extend((c, here) for c in reversed(children.get(j.child, [])))
    return Tree(root_body, specs, inertias, lumped, body_of, frames, spec_body)


def _velocities(jtype: str) -> int:
    """The number of bodies (velocities) of a joint of URDF type ``jtype``."""
    return len(JOINT_MODELS[GROUP_OF[jtype]][1]) if jtype in GROUP_OF else 1


def _frame(name, kind, body, R, p, parent) -> Frame:
    return Frame(name, kind, body, as_mat3(R), as_vec3(p), parent)
