"""Joints with several velocities as Pinocchio models them (JointModelFreeFlyer,
JointModelSpherical, JointModelPlanar): their coordinates and velocity directions. symgen builds
each as a chain of single-DoF bodies that share the joint's child frame
(:func:`symgen.model.group_bodies`); the algorithms treat the chain as one joint (the rate of each
column turns with the whole child velocity, :func:`symgen.kinematics.rate_velocity`)."""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

#: The joints with several velocities (Pinocchio's JointModelFreeFlyer, JointModelSpherical,
#: JointModelPlanar), each as a chain of single-DoF bodies that share the joint's child frame (its
#: velocity directions are constant there and its bias c_J is zero): per kind, (nq, the bodies'
#: (type, axis) in v order). The first body carries the joint's placement and is moved by the
#: joint's whole configuration (q[idx_q:idx_q + nq]); the others are never moved; the last carries
#: the link. q: free-flyer (x, y, z, quaternion x, y, z, w), spherical (quaternion x, y, z, w),
#: planar (x, y, cos theta, sin theta); v in the child frame (linear first).
JOINT_MODELS = {
    "freeflyer": (7, (("prismatic", (1.0, 0.0, 0.0)), ("prismatic", (0.0, 1.0, 0.0)), ("prismatic", (0.0, 0.0, 1.0)),
                      ("revolute", (1.0, 0.0, 0.0)), ("revolute", (0.0, 1.0, 0.0)), ("revolute", (0.0, 0.0, 1.0)))),
    "spherical": (4, (("revolute", (1.0, 0.0, 0.0)), ("revolute", (0.0, 1.0, 0.0)), ("revolute", (0.0, 0.0, 1.0)))),
    "planar": (4, (("prismatic", (1.0, 0.0, 0.0)), ("prismatic", (0.0, 1.0, 0.0)), ("revolute", (0.0, 0.0, 1.0)))),
}


@dataclass(frozen=True)
class JointModel:
    """One joint of q/v order: its name, kind ("revolute", "continuous", "prismatic" or a key of
    :data:`JOINT_MODELS`), its bodies (first..last), and its slices of q and v."""

    name: str
    kind: str
    first: int
    last: int
    idx_q: int
    nq: int

    @property
    def idx_v(self) -> int:
        return self.first

    @property
    def nv(self) -> int:
        return self.last - self.first + 1


def motion_subspace(kind: str) -> np.ndarray:
    """S of a joint with several velocities, 6 x nv in [linear; angular] order (Pinocchio's), in its
    child frame, where it is constant: a prismatic column (axis, 0), a revolute one (0, axis)."""
    axes = JOINT_MODELS[kind][1]
    return np.array([(*axis, 0.0, 0.0, 0.0) if jtype == "prismatic" else (0.0, 0.0, 0.0, *axis)
                     for jtype, axis in axes]).T


@lru_cache(maxsize=None)
def structure_constants(kind: str) -> np.ndarray:
    """The structure constants of a joint's speeds (Wensing & Slotine, Sec. VI-D), nv x nv x nv:
    ``T[j] = Psi^T (S_j x) S``, so that the joint's block of eq. (30) is K(v) = Psi^T ((S v) x) S
    = sum_j v_j T[j]. S is constant in the child frame (its rate is 0) and its span is a Lie
    subalgebra (se(3), so(3), se(2)), so (S_j x) S lies in it and Psi^T, the dual basis, reads its
    coordinates: (Sᵀ S)^-1 Sᵀ, exact for the unit axes of :data:`JOINT_MODELS`. A single-DoF
    joint's is 0 (S x S = 0): not a key here."""
    from .spatial import crm

    S = motion_subspace(kind)
    swap = [3, 4, 5, 0, 1, 2]                       # crm is Featherstone's (angular first)
    dual = np.linalg.solve(S.T @ S, S.T)
    T = np.array([dual @ crm(S[swap, j])[np.ix_(swap, swap)] @ S for j in range(S.shape[1])])
    T[np.abs(T) < 1e-15] = 0.0
    T.setflags(write=False)
    return T


def layout_of(robot) -> tuple:
    """A robot's joints as (name, kind, idx_q, nq, idx_v, nv) per joint (a package's
    ``joint_models``); with ``--mimic``, the reduced ones: a root free-flyer, then 1-DoF joints."""
    e = robot.embedding
    if e is None:
        return robot.joint_layout
    kind = {j.name: j.kind for j in robot.full.joint_models}
    return robot.full.joint_layout[:bool(e.lead_v)] + tuple(
        (name, kind[name], e.lead_q + k, 1, e.lead_v + k, 1) for k, name in enumerate(robot.joint_names))


def leading_free(robot, error=None) -> bool:
    """Whether the robot's first joint is a free-flyer at the root (``--floating-base``, or a URDF
    ``floating`` joint on the root link), whose q[0:7], v[0:6] an embedding (couplings, mimic)
    passes through; ``error(joint, reason)``: raised for any other joint with several velocities,
    which embeddings do not support yet."""
    joints = robot.joint_models
    lead = bool(joints) and joints[0].kind == "freeflyer" and robot.bodies[0].parent < 0
    for j in joints[lead:]:
        if j.kind in JOINT_MODELS and error is not None:
            raise error(j.name, f"a {j.kind} joint in a robot with couplings or --mimic is not supported yet")
    return lead
