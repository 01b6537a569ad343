"""What every constrained system answers: a spanning tree seen in other coordinates.

A robot with ``--mimic`` joints (:class:`symgen.mimic.Embedded`), URDF+ couplings
(:class:`symgen.couplings.Coupled`) or loops (:class:`symgen.closed.Closed`) is a frozen object with
its spanning tree, ``full`` (a :class:`symgen.model.Robot`, on which the algorithms run), and its
embedding as fields: a constant q_full = G q + o (``embedding``) or the loops' G(q) (``system``).
Each kind writes out its sizes (``n``, ``nq``, ``nv``), its coordinates (``joint_names``,
``velocity_joint_names``) and ``check_state``; the rest a build, the registry and the readers ask
of it is its tree's, and is listed here by name (:class:`ConstrainedSystem`). A plain tree answers
the same questions (:attr:`symgen.model.Robot.full` is the robot itself, ``embedding`` and
``system`` None, ``loops`` and ``unsupported`` empty).
"""
from __future__ import annotations


def _of_tree(name: str, doc: str = ""):
    """A read-only attribute that is the spanning tree's ``name``."""
    def read(self):
        return getattr(self.full, name)

    read.__name__ = name
    return property(read, doc=doc or f"The spanning tree's ``{name}`` (:class:`symgen.model.Robot`).")


class ConstrainedSystem:
    """The spanning tree's attributes on a constrained system (subclasses: frozen dataclasses with
    a ``full`` field). A subclass defines ``n``, ``nq``, ``nv``, ``joint_names``, ``check_state``,
    ``embedding`` and ``system``."""

    # -- the model file's description, the tree's
    name = _of_tree("name")
    source = _of_tree("source")
    root_link = _of_tree("root_link")
    lumped = _of_tree("lumped")
    snapped = _of_tree("snapped")
    notes = _of_tree("notes")
    trees = _of_tree("trees")
    tendons = _of_tree("tendons")
    mujoco_qpos0 = _of_tree("mujoco_qpos0")
    gravity = _of_tree("gravity")
    floating_base = _of_tree("floating_base")
    free = _of_tree("free")

    # -- bodies, links and frames of the spanning tree
    bodies = _of_tree("bodies")
    parent = _of_tree("parent")
    depth = _of_tree("depth")
    joint_models = _of_tree("joint_models")
    joint_layout = _of_tree("joint_layout")
    joint_of = _of_tree("joint_of")
    #: per spanning body, its entry of the spanning tree's q (a mechanism with loops keeps that q)
    q_index = _of_tree("q_index")
    axisymmetric = _of_tree("axisymmetric")
    has_inner_groups = _of_tree("has_inner_groups")
    inertial_bodies = _of_tree("inertial_bodies")
    link_names = _of_tree("link_names")
    frames = _of_tree("frames")
    frame_names = _of_tree("frame_names")
    leaf_links = _of_tree("leaf_links")
    z_aligned = _of_tree("z_aligned")

    # -- the spanning tree's per-velocity constants (armature, dampers and springs)
    armature = _of_tree("armature")
    damping = _of_tree("damping")
    stiffness = _of_tree("stiffness")
    springref = _of_tree("springref")
    has_armature = _of_tree("has_armature")
    has_passive = _of_tree("has_passive")
    armature_vector = _of_tree("armature_vector")
    damping_vector = _of_tree("damping_vector")
    stiffness_vector = _of_tree("stiffness_vector")
    springref_vector = _of_tree("springref_vector")

    def frame(self, name: str):
        """The spanning tree's frame ``name`` (:meth:`symgen.model.Robot.frame`)."""
        return self.full.frame(name)

    def ancestors(self, i: int) -> tuple[int, ...]:
        """Body i's path to the root in the spanning tree."""
        return self.full.ancestors(i)

    def is_free(self, i: int) -> bool:
        """Whether body i of the spanning tree is a free-flyer's."""
        return self.full.is_free(i)

    def in_group(self, i: int) -> bool:
        """Whether body i of the spanning tree is one velocity of a joint with several."""
        return self.full.in_group(i)

    # -- what a build asks of every robot kind
    @property
    def velocity_joint_names(self) -> tuple[str, ...]:
        """The joints of v in order: those of the reduced q unless a kind says otherwise."""
        return self.joint_names

    @property
    def loops(self) -> tuple[str, ...]:
        """The URDF+ couplings and loops embedded: none unless a kind has them."""
        return ()

    @property
    def unsupported(self) -> frozenset:
        """The quantity keys a build leaves out for this robot: none unless a kind says so."""
        return frozenset()
