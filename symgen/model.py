"""The robot model: an immutable description of a tree of rigid bodies with single-DoF joints.

Bodies are numbered 0..N-1 with ``parent[i] < i`` (``-1`` is the fixed base); this is the paper's
numbering 1..N shifted by one. Body ``i`` is moved by joint ``i``; the joint order is the order of
``q`` and is exposed as ``joint_names``. All vectors are in the frame of the body they belong to.

The model holds numbers only (floats, with exact zeros/ones where the URDF had them or where
they were snapped). Workspaces for the algorithms are separate and built per call.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property

import numpy as np

from . import spatial
from .turns import z_turns
from .axisymmetric import axisymmetric_rotors
from .errors import ModelError
from .joint_models import JOINT_MODELS, JointModel

JOINT_TYPES = ("revolute", "continuous", "prismatic")

#: Gravity used by inverse dynamics: 9.81 m/s^2 along -z of the URDF root frame (Pinocchio's).
GRAVITY = (0.0, 0.0, -9.81)

Vec3 = tuple[float, float, float]
Mat3 = tuple[Vec3, Vec3, Vec3]


@dataclass(frozen=True)
class Inertia:
    """Mass, centre of mass (body frame) and rotational inertia about the CoM (body axes)."""

    mass: float
    com: Vec3
    I_com: Mat3

    @staticmethod
    def zero() -> "Inertia":
        return Inertia(0.0, (0.0, 0.0, 0.0), ((0.0,) * 3,) * 3)

    def spatial(self) -> np.ndarray:
        """6x6 spatial inertia about the body origin (``mcI``)."""
        return spatial.mcI(self.mass, np.array(self.com), np.array(self.I_com))

    def __add__(self, other: "Inertia") -> "Inertia":
        """Inertia of two bodies rigidly joined, both expressed in the same frame. A massless
        operand adds only its rotational inertia (if any) and leaves the other's mass and CoM
        exactly as they are (the general formula would divide and multiply by the mass)."""
        if other.mass == 0.0:
            if not np.any(other.I_com):
                return self
            return Inertia(self.mass, self.com, as_mat3(np.array(self.I_com) + np.array(other.I_com)))
        if self.mass == 0.0:
            return other + self
        m = self.mass + other.mass
        c1, c2 = np.array(self.com), np.array(other.com)
        c = (self.mass * c1 + other.mass * c2) / m
        Ic = np.zeros((3, 3))
        for mass, ci, Ii in ((self.mass, c1, self.I_com), (other.mass, c2, other.I_com)):
            d = ci - c
            Ic += np.array(Ii) + mass * (d @ d * np.eye(3) - np.outer(d, d))
        return Inertia(m, as_vec3(c), as_mat3(Ic))

    def transformed(self, R: np.ndarray, p: np.ndarray) -> "Inertia":
        """The same body seen from a frame in which its frame has orientation R and origin p."""
        return Inertia(self.mass, as_vec3(R @ np.array(self.com) + p), as_mat3(R @ np.array(self.I_com) @ R.T))


@dataclass(frozen=True)
class Body:
    """One body and the joint that connects it to its parent.

    ``rotation``/``translation`` place the joint frame (at q = 0) in the parent body's frame,
    as URDF's ``<origin>`` does: ``rotation`` is the orientation of the joint frame in parent
    coordinates, ``translation`` its origin. The body frame is the joint frame moved by q.
    """

    name: str
    joint_name: str
    joint_type: str
    axis: Vec3
    parent: int
    rotation: Mat3
    translation: Vec3
    inertia: Inertia
    #: the joint model this body is one velocity of, for a joint with several ("" for a single-DoF
    #: joint; "freeflyer", "spherical", "planar": see :data:`JOINT_MODELS`)
    group: str = ""

    def Xtree(self) -> np.ndarray:
        """Motion transform from the parent frame to the joint frame at q = 0."""
        E = np.array(self.rotation).T
        return spatial.plux(E, np.array(self.translation))

    def motion_subspace(self) -> np.ndarray:
        """Phi: [a; 0] for a revolute or continuous joint, [0; a] for a prismatic one."""
        S = np.zeros(6)
        if self.joint_type == "prismatic":
            S[3:] = self.axis
        else:
            S[:3] = self.axis
        return S


@dataclass(frozen=True)
class Frame:
    """A frame a controller may ask for: a URDF link (``kind`` "link") or joint ("joint"), or a
    point a build names (``kind`` "point", ``--frames name=LINK@x,y,z``), mounted
    on moving body ``body`` (-1: the fixed root) at orientation ``rotation`` and origin
    ``translation`` in that body's frame. A moving joint's frame is its body's frame (after the
    joint motion, Pinocchio's JOINT frame); a fixed joint's frame is its child link's frame.
    ``parent`` is the index (in :attr:`Robot.frames`) of the frame above: a link's joint, a
    joint's parent link, -1 for the root link."""

    name: str
    kind: str
    body: int
    rotation: Mat3
    translation: Vec3
    parent: int = -1
    #: a point's ``--frames`` text (kind "point": a frame of a build, never of the robot's list)
    spec: str = ""


FRAME_KINDS = ("link", "joint")


@dataclass(frozen=True)
class Robot:
    """A kinematic tree with a fixed base. Build one with :func:`symgen.load_urdf` or
    :mod:`symgen.robots`; all fields are read-only."""

    name: str
    bodies: tuple[Body, ...]
    root_link: str = "base"
    source: str | None = None
    lumped: tuple[str, ...] = ()
    snapped: tuple[str, ...] = ()
    floating_base: bool = False
    notes: tuple[str, ...] = ()
    #: every link and joint frame, in tree order (the root link, then depth first in q order,
    #: each joint followed by its child link); by default each body's joint and link frames
    frames: tuple[Frame, ...] = ()
    #: reflected rotor inertia per velocity (Pinocchio's ``model.armature``, MuJoCo's
    #: ``dof_armature``), added to M's diagonal; () when none (:attr:`armature_vector`)
    armature: tuple[float, ...] = ()
    #: viscous damping per velocity (MJCF's ``dof_damping``, URDF's ``<dynamics damping>``): the
    #: passive force -damping * v (:mod:`symgen.passive`); () when none
    damping: tuple[float, ...] = ()
    #: joint springs per velocity (MJCF's ``jnt_stiffness``; hinges and slides only): the passive
    #: force -stiffness * (q - springref), ``springref`` in symgen's q (MuJoCo's qpos_spring - qpos0)
    stiffness: tuple[float, ...] = ()
    springref: tuple[float, ...] = ()
    #: a model read from MJCF: MuJoCo's qpos0 per joint coordinate after a free-flyer's (symgen's
    #: q = qpos - qpos0 there; :mod:`symgen.mjcf`), else None
    mujoco_qpos0: tuple[float, ...] | None = None
    #: the gravity the model file sets (MJCF's <option gravity>, zero with <flag gravity="disable">),
    #: the default of ``symgen build --gravity`` for it; None: symgen's default, GRAVITY
    gravity: tuple[float, float, float] | None = None
    #: the moving trees as the file names them (:class:`symgen.scenes.Tree`: root body, its joint,
    #: the bodies it holds), in q order; () for a robot built in Python (:func:`symgen.scenes.trees_of`)
    trees: tuple = ()
    #: the MJCF tendons, (name, kind, role) each (:func:`symgen.mjcf_tendons.records`)
    tendons: tuple = ()
    # -- per-build choices, set by the methods below (each returns a Robot of the same tree, in any order)
    #: inertial parameters used instead of the bodies' inertias (10 per inertial body, Pinocchio's
    #: ``toDynamicParameters`` order; numbers or symbols: not compared), or None
    theta: object = field(default=None, compare=False)
    #: bodies whose joint rotation the algorithms take as the identity (:mod:`symgen.axisymmetric`)
    turn_free: frozenset = frozenset()
    #: the root joint's bodies (several velocities) seen as a floating base's (:attr:`free`)
    root_as_base: bool = False

    def __post_init__(self):
        if not self.frames:         # a robot built in Python: one joint and one link per body
            object.__setattr__(self, "frames", tree_frames(self.root_link, self.bodies, self.free))
        if self.floating_base and [(b.joint_type, b.axis, b.parent, b.joint_name, b.group) for b in self.bodies[:FREE_DOFS]] != [
                (t, a, k - 1, ROOT_JOINT, "freeflyer") for k, (t, a) in enumerate(FREE_AXES)]:
            raise ModelError(f"robot {self.name!r}: a floating base must start with the six bodies of "
                             f"model.free_flyer_bodies")
        for i, b in enumerate(self.bodies):
            if not -1 <= b.parent < i:
                raise ModelError(f"robot {self.name!r}: body {b.name!r} has parent index {b.parent}, "
                                 f"which is not an earlier body")
            if abs(float(np.linalg.norm(b.axis)) - 1.0) > 1e-9:
                raise ModelError(f"robot {self.name!r}: body {b.name!r} has joint axis {b.axis}, which is "
                                 f"not a unit vector")
            if b.group and b.group not in JOINT_MODELS:
                raise ModelError(f"robot {self.name!r}: body {b.name!r} is part of a joint of unknown kind "
                                 f"{b.group!r}; expected one of {', '.join(JOINT_MODELS)}")
            if b.joint_type not in JOINT_TYPES:
                raise ModelError(f"robot {self.name!r}: body {b.name!r} has joint type "
                                 f"{b.joint_type!r}; expected one of {', '.join(JOINT_TYPES)}")
        if self.armature and (len(self.armature) != self.n or not all(0.0 <= a < float("inf") for a in self.armature)):
            raise ModelError(f"robot {self.name!r}: armature must be {self.n} numbers >= 0 (one per velocity), "
                             f"got {self.armature}")
        from .passive import check_passive

        check_passive(self)
        for k, f in enumerate(self.frames):
            if f.kind not in FRAME_KINDS or not -1 <= f.body < self.n or not -1 <= f.parent < k:
                raise ModelError(f"robot {self.name!r}: frame {f.name!r} ({f.kind}) is mounted on body "
                                 f"{f.body} below frame {f.parent}, which is not a body and an earlier frame")

    def with_parameters(self, theta) -> "Robot":
        """This tree with the inertial parameters ``theta`` (None: itself); no body turn-free then
        (a rotor's symmetry is that of its own inertia)."""
        if theta is None:
            return self
        size = 10 * len(self.inertial_bodies)
        if len(theta) != size:
            raise ValueError(f"params must have {size} entries (10 per body), got {len(theta)}")
        return replace(self, theta=theta, turn_free=frozenset())

    def inertial(self) -> "Robot":
        """This tree for a sweep on its own inertias: its :attr:`axisymmetric` rotors turn-free."""
        return self if self.theta is not None or not self.axisymmetric or self.turn_free else self._inertial

    _inertial = cached_property(lambda self: replace(self, turn_free=frozenset(self.axisymmetric)))

    def as_root_base(self) -> "Robot":
        """This tree with a root joint of several velocities (not the free-flyer) as its base."""
        if not self.n or self.root_as_base or self.joint_models[0].nv == 1 or self.floating_base:
            return self
        return replace(self, root_as_base=True)

    # -- what every robot kind answers (:class:`symgen.constrained.ConstrainedSystem`), for a tree
    full = property(lambda self: self, doc="The tree the algorithms run on: the robot itself.")
    embedding = property(lambda self: None, doc="The constant embedding q_full = G q + o: none.")
    system = property(lambda self: None, doc="The loop system G(q) (:class:`symgen.loops.LoopSystem`): none.")
    loops = property(lambda self: (), doc="The URDF+ couplings and loops embedded (and their functions): none.")
    unsupported = property(lambda self: frozenset(), doc="The quantity keys a build leaves out: none.")
    velocity_joint_names = property(lambda self: self.joint_names, doc="The joints of v: those of q.")

    # -- sizes and order
    @property
    def n(self) -> int:
        """The number of velocities (nv): one per body, the free-flyer's six included."""
        return len(self.bodies)

    nv = n

    @property
    def nq(self) -> int:
        """The number of configuration entries: nv, plus one per free-flyer, spherical or planar
        joint (a unit quaternion; cos and sin of the planar angle)."""
        return sum(j.nq for j in self.joint_models)

    @cached_property
    def joint_models(self) -> tuple[JointModel, ...]:
        """The joints in q/v order, each with its bodies and its slice of q."""
        out, idx_q, i = [], 0, 0
        while i < self.n:
            b = self.bodies[i]
            if b.group:
                nq, axes = JOINT_MODELS[b.group]
                last = i + len(axes) - 1
                out.append(JointModel(b.joint_name, b.group, i, last, idx_q, nq))
            else:
                last, nq = i, 1
                out.append(JointModel(b.joint_name, b.joint_type, i, i, idx_q, 1))
            idx_q += nq
            i = last + 1
        return tuple(out)

    @property
    def joint_layout(self) -> tuple:
        """The joints as plain tuples (name, kind, idx_q, nq, idx_v, nv): a package's
        ``joint_models``."""
        return tuple((j.name, j.kind, j.idx_q, j.nq, j.idx_v, j.nv) for j in self.joint_models)

    @cached_property
    def joint_of(self) -> tuple[JointModel, ...]:
        """Per body, the joint it is a velocity of."""
        return tuple(j for j in self.joint_models for _ in range(j.nv))

    def in_group(self, i: int) -> bool:
        """Whether body i is one velocity of a joint with several (free-flyer, spherical, planar)."""
        return bool(self.bodies[i].group)

    def at_rest_above(self, i: int) -> bool:
        """Whether body i is one velocity of a joint with several whose parent is the fixed root
        (the root free-flyer's included): its bias sum_k (v_child x Phi_k) qd_k is v_child x
        v_child = 0, so its bodies add no velocity product."""
        return self.in_group(i) and self.bodies[self.joint_of[i].first].parent < 0

    @cached_property
    def has_inner_groups(self) -> bool:
        """Whether a joint with several velocities sits anywhere but as the root free-flyer."""
        return any(j.kind in JOINT_MODELS and j.first >= self.free for j in self.joint_models)

    @cached_property
    def armature_vector(self) -> np.ndarray:
        """The armature (nv,): zeros when the robot has none."""
        return np.array(self.armature, dtype=float) if self.armature else np.zeros(self.n)

    @property
    def has_armature(self) -> bool:
        return any(self.armature)

    # the passive force -damping * v - stiffness * (q - springref) (nv,) each; zeros when none
    damping_vector = cached_property(lambda self: np.array(self.damping or np.zeros(self.n), dtype=float))
    stiffness_vector = cached_property(lambda self: np.array(self.stiffness or np.zeros(self.n), dtype=float))
    springref_vector = cached_property(lambda self: np.array(self.springref or np.zeros(self.n), dtype=float))

    @property
    def has_passive(self) -> bool:
        """Whether the robot has joint dampers or springs (``passive_force`` is then generated)."""
        return any(self.damping) or any(self.stiffness)

    @property
    def free(self) -> int:
        """The number of leading bodies that make up the free-flyer (6 with a floating base, else
        0): one per velocity of the base, all sharing the base frame (see :func:`free_flyer_bodies`)."""
        if self.floating_base:
            return FREE_DOFS
        return self.joint_models[0].nv if self.root_as_base else 0

    def is_free(self, i: int) -> bool:
        """Whether body i is one of the free-flyer's six velocity directions."""
        return i < self.free

    @cached_property
    def q_index(self) -> tuple[int | None, ...]:
        """Per body, the entry of q holding its joint's coordinate; None for the free-flyer's
        bodies, whose configuration is q[0:7] (position, then the quaternion x, y, z, w)."""
        return tuple(None if self.in_group(i) else self.joint_of[i].idx_q for i in range(self.n))

    @cached_property
    def joint_names(self) -> tuple[str, ...]:
        """One name per joint in q/v order (a free-flyer is one joint, ``root_joint``)."""
        return tuple(dict.fromkeys(b.joint_name for b in self.bodies))

    @cached_property
    def inertial_bodies(self) -> tuple[int, ...]:
        """The bodies that carry a link (and 10 inertial parameters): all but the massless
        helpers of the joints with several velocities (all their bodies but the last)."""
        return tuple(i for i in range(self.n) if not self.in_group(i) or self.joint_of[i].last == i)

    @property
    def link_names(self) -> tuple[str, ...]:
        return tuple(self.bodies[i].name for i in self.inertial_bodies)

    @cached_property
    def parent(self) -> tuple[int, ...]:
        return tuple(b.parent for b in self.bodies)

    # -- frames
    def frame(self, name: str) -> Frame:
        """The frame called ``name``: a link's, or else a joint's (a link wins a shared name);
        KeyError if there is none."""
        return self._frame_by_name[name]

    @cached_property
    def frame_names(self) -> tuple[str, ...]:
        """The distinct names of :attr:`frames`, in order."""
        return tuple(dict.fromkeys(f.name for f in self.frames))

    @cached_property
    def _frame_by_name(self) -> dict[str, Frame]:
        out = {f.name: f for f in self.frames if f.kind == "joint"}
        return out | {f.name: f for f in self.frames if f.kind == "link"}

    @cached_property
    def leaf_links(self) -> tuple[str, ...]:
        """The links that are no joint's parent (the default frames of frame kinematics), in
        :attr:`frames` order."""
        parents = {f.parent for f in self.frames if f.kind == "joint"}
        return tuple(f.name for k, f in enumerate(self.frames) if f.kind == "link" and k not in parents)

    # -- topology
    def ancestors(self, i: int) -> tuple[int, ...]:
        """Bodies on the path from i to the root, i included, nearest first (all j with j ⪯ i)."""
        out = []
        while i >= 0:
            out.append(i)
            i = self.parent[i]
        return tuple(out)

    def related(self, i: int, j: int) -> bool:
        """i ~ j: one is on the other's path to the root."""
        return i in self.ancestors(j) or j in self.ancestors(i)

    @cached_property
    def depth(self) -> int:
        """d: the number of bodies on the longest path from a leaf to the root."""
        return max((len(self.ancestors(i)) for i in range(self.n)), default=0)

    # -- numeric constants the algorithms use, computed once
    @cached_property
    def Xtree(self) -> tuple[np.ndarray, ...]:
        return tuple(b.Xtree() for b in self.bodies)

    @cached_property
    def S(self) -> tuple[np.ndarray, ...]:
        return tuple(b.motion_subspace() for b in self.bodies)

    @cached_property
    def I(self) -> tuple[np.ndarray, ...]:
        return tuple(b.inertia.spatial() for b in self.bodies)
    axisymmetric = cached_property(axisymmetric_rotors)  # rotors the inertial sweeps need not turn

    @cached_property
    def z_turns(self) -> tuple[np.ndarray, ...]:
        """Per body, the rotation T (T e_z = the joint axis) from its turned frame (see
        :attr:`z_aligned`) to its body frame, turned as :func:`symgen.turns.z_turns` says."""
        return z_turns(self)

    @cached_property
    def z_aligned(self) -> tuple[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray], ...]:
        """Per body, the constants of its joint and inertia in a body frame turned (about the
        body origin, once) so that the joint axis is its z axis: ``(Rt, t, com, I_com)`` with
        ``Rt``/``t`` placing the joint frame in the parent's turned frame. A joint rotation is
        then Rz(q) (4 products instead of a Rodrigues matrix) and the axis in ground
        coordinates is the third column of the frame's orientation, free. A coordinate axis's turn
        is a permutation (exact zeros stay) unless a general-axis child turns it (symgen.turns)."""
        turns = self.z_turns
        out = []                                        # (group members: T = 1, see z_turns)
        for b, T in zip(self.bodies, turns):
            Tp = turns[b.parent] if b.parent >= 0 else np.eye(3)
            Ic = np.array(b.inertia.I_com)
            out.append((snap_unit(Tp.T @ np.array(b.rotation) @ T), Tp.T @ np.array(b.translation),
                        T.T @ np.array(b.inertia.com), T.T @ Ic @ T))
        return tuple(out)

    def check_state(self, name: str, x) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        size = self.nq if name == "q" else self.n
        if x.shape != (size,):
            raise ModelError(f"{name} must have shape ({size},) for robot {self.name!r}, got {x.shape}")
        return x


def tree_frames(root_link: str, bodies, free: int = 0) -> tuple[Frame, ...]:
    """The frames of a tree without fixed joints: the root link, then per body its joint's frame
    and its link's, both the body frame. The first ``free`` bodies (a free-flyer) have one joint
    frame and one link frame between them, on the last; so has every joint with several velocities
    (its massless helper bodies share the child frame but move with only the joint's first speeds:
    a frame on one of them would have a partial Jacobian)."""
    frames = [Frame(root_link, "link", -1, IDENTITY, ORIGIN)]
    link_of = {-1: 0}
    if free:
        frames.append(Frame(ROOT_JOINT, "joint", free - 1, IDENTITY, ORIGIN, 0))
        frames.append(Frame(bodies[free - 1].name, "link", free - 1, IDENTITY, ORIGIN, 1))
        link_of[free - 1] = 2
    for i, b in enumerate(bodies):
        if i < free:
            continue
        if b.group and i + 1 < len(bodies) and bodies[i + 1].group and bodies[i + 1].joint_name == b.joint_name:
            link_of[i] = link_of[b.parent]                  # a helper body of the joint: its frames are the last's
            continue
        frames.append(Frame(b.joint_name, "joint", i, IDENTITY, ORIGIN, link_of[b.parent]))
        link_of[i] = len(frames)
        frames.append(Frame(b.name, "link", i, IDENTITY, ORIGIN, len(frames) - 1))
    return tuple(frames)


def snap_unit(R, tol: float = 1e-12) -> np.ndarray:
    """R with entries within ``tol`` of 0 or ±1 made exact: the turns of :attr:`Robot.z_aligned`
    multiply three rotations, and two general axes that agree (an MJCF elbow after a shoulder
    about the same axis) leave 1 + 2e-16 and 4e-17 where the product is exactly the identity,
    entries the generated code would multiply by."""
    R = np.array(R, dtype=float)
    for v in (0.0, 1.0, -1.0):
        R[np.abs(R - v) <= tol] = v
    return R


def as_vec3(a) -> Vec3:
    """A 3-vector (array, list ...) as the tuple of floats a model stores."""
    return tuple(float(x) for x in a)


def as_mat3(a) -> Mat3:
    """A 3x3 matrix as the tuple of float rows a model stores."""
    return tuple(tuple(float(x) for x in row) for row in a)


#: The free-flyer (Pinocchio's ``JointModelFreeFlyer``): its joint name, and its six velocity
#: directions in v order, each as the axis of a single-DoF body fixed in the base frame: the
#: base's linear velocity along its x, y, z axes, then its angular velocity about them.
ROOT_JOINT = "root_joint"
FREE_DOFS = 6
FREE_AXES = JOINT_MODELS["freeflyer"][1]

IDENTITY: Mat3 = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0))
ORIGIN: Vec3 = (0.0, 0.0, 0.0)


def free_flyer_bodies(root_link: str, root_inertia: Inertia) -> list[Body]:
    """The free-flyer as six single-DoF bodies, a chain in v order: five massless helpers
    (named ``root_joint_<k>``) and the root link itself, all of them the base frame. Their
    motion subspaces are the columns of the identity in the base frame (Pinocchio's body-twist
    speeds, linear first); they are never moved by q. The algorithms treat them as one joint:
    they run in the base frame (the base's pose enters only through gravity, rotated into it by
    the quaternion, and through world placements), and the rate of each column is v_base x Phi_k
    (the velocity of the base, not the chain's partial sum: :func:`symgen.kinematics.rate_velocity`)."""
    return group_bodies("freeflyer", ROOT_JOINT, root_link, -1, 0, IDENTITY, ORIGIN, root_inertia)


def group_bodies(kind: str, joint_name: str, link: str, parent: int, first: int, rotation: Mat3,
                 translation: Vec3, inertia: Inertia) -> list[Body]:
    """A joint with several velocities (a key of :data:`JOINT_MODELS`) as its chain of single-DoF
    bodies below body ``parent``, the first of them body ``first``: the first placed by ``rotation``/``translation`` in the parent's
    frame (the joint frame at the neutral configuration), the others at its origin; massless
    helpers named ``<joint>_<k>`` and the link ``link`` last, with ``inertia``."""
    axes = JOINT_MODELS[kind][1]
    bodies = []
    for k, (jtype, axis) in enumerate(axes):
        last = k == len(axes) - 1
        bodies.append(Body(
            name=link if last else f"{joint_name}_{k}", joint_name=joint_name, joint_type=jtype,
            axis=axis, parent=parent if k == 0 else first + k - 1,
            rotation=rotation if k == 0 else IDENTITY, translation=translation if k == 0 else ORIGIN,
            inertia=inertia if last else Inertia.zero(), group=kind))
    return bodies
