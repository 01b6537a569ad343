"""Read a URDF into a :class:`~symgen.model.Robot`, and write a Robot back as URDF.

Conventions (URDF's own, made explicit):

- A joint's ``<origin xyz rpy>`` places the joint frame in the parent link's frame:
  ``Body.translation = xyz`` and ``Body.rotation = Rz(yaw) Ry(pitch) Rx(roll)``
  (:func:`symgen.spatial.rpy_matrix`). Missing ``xyz``/``rpy`` are zeros.
- The joint frame is the child link's frame at q = 0. ``<axis xyz>`` is in that frame; it defaults
  to (1, 0, 0) and is normalized. Link names are the child link names, joint names the joint names.
- ``<inertial>``: mass, ``<origin xyz rpy>`` (CoM and orientation of the inertia axes in the link
  frame) and ``<inertia>`` about the CoM in those axes; stored as ``Inertia(mass, com, I_com)``
  with ``I_com`` rotated into link axes. A link without ``<inertial>`` is massless. A negative
  mass is an error; everything else about inertias is checked on the bodies that enter the
  dynamics, after lumping (:mod:`.validate`): round-off passes, small violations (a triangle
  inequality broken, a principal moment below zero by up to 1/4 of the trace) pass with a one-line
  :class:`~symgen.errors.SymgenWarning` and a note unless ``strict_inertia=True``, larger ones are
  errors. A joint that moves only massless links (M singular) gets a warning and a note.
- Joint types: revolute, continuous and prismatic become bodies. A fixed joint is lumped: its
  child's inertia is added exactly to the body it hangs from and its frame is carried through so
  that its own children attach where they should (``Robot.lumped`` lists "child -> body").
  Links below the root through fixed joints only fold into the root (discarded for a fixed base).
- Mimic joints (``<mimic joint=... multiplier=... offset=...>``) are read as independent
  coordinates of q, as Pinocchio's ``buildModelFromUrdf`` does by default; the mimic relation is
  not modelled, and ``Robot.notes`` gets one line per such movable joint, in q order (suggesting
  ``--mimic``). As for urdfdom, ``<mimic>`` needs a ``joint`` attribute and ``multiplier``/``offset``
  (defaults 1 and 0), if present, must be numbers; the mimicked joint need not exist (the note
  then says so). With ``mimic=True`` (``--mimic``) the relations are embedded: the result is a
  :class:`symgen.mimic.Embedded` system in reduced coordinates, and a mimic of a missing or fixed
  joint, or a cycle of mimics, is a URDFError naming the joint.
- Joint order (the order of q): depth first from the root link, the child joints of every link
  taken in order of joint name. That is how urdfdom builds its tree (a ``std::map`` of joints),
  hence Pinocchio's order, so q vectors are index-compatible with ``pinocchio.buildModelFromUrdf``.
- ``floating_base=True`` attaches the URDF root link to a virtual root ``world`` by a free-flyer,
  Pinocchio's ``JointModelFreeFlyer`` named ``root_joint``: q starts with the base position and
  unit quaternion (x, y, z, qx, qy, qz, qw), v with the base's linear then angular velocity in
  the base frame (:func:`symgen.model.free_flyer_bodies`). The root link carries its own (and
  lumped) inertia.
  If the URDF's root link is itself called ``world`` (an arm fixed to the world), that link is
  the one set free, as Pinocchio's free-flyer does, and the virtual root is ``floating_world``.
- Files: at most 32 MiB are read (a larger file, or a stream such as /dev/zero, is refused at
  once); a xacro file (elements in the xacro namespace) is refused with "run xacro first".
- Numbers are parsed strictly by :func:`parse_numbers` (decimal floats only, never ``eval``;
  separated by XML whitespace only). A value beyond 1e12 in magnitude is an error: no URDF in SI
  units has one, and products of such values in the dynamics overflow float64 (1e308 as a
  joint offset gives a mass matrix of inf and nan).
- Snapping (``snap_tol``): joint origin and axis values within ``snap_tol`` of 0, ±1 or ±1/2
  become exact; rpy angles (of joints and inertials) within ``snap_tol`` of k·π/2 become k·π/2,
  and their cos/sin exactly 0/±1, so structural zeros of transforms are exact. Every change is
  listed in ``Robot.snapped``; an angle written as 1.5707963267948966 is reported too, because it
  is read as exactly π/2, which no float is. Inertial data is real data: only entries of the
  inertia tensor within 1e-15 of zero (relative to its largest entry) are snapped, to 0.
- Every user error raises :class:`~symgen.errors.URDFError` (file, element, reason; one line).

The writer emits the same Robot back: numbers as ``repr(float)``, rotations as rpy recovered
robustly from the matrix (:func:`matrix_rpy`), inertials at the CoM with rpy zero. The joint order
comes back the same whenever it is depth first by joint name, as it is for every Robot this reader
makes and for serial chains and legged robots; a Robot numbered otherwise (the paper's binary tree,
parent(i) = i // 2, is numbered breadth first) comes back renumbered depth first, Pinocchio's order.
A floating-base Robot is written without its free-flyer (the base link is the file's root link),
so it reads back with ``floating_base=True``, and Pinocchio loads it with ``JointModelFreeFlyer``.

URDF+ (GRBDA's ``<coupling>``, ``<loop>`` and ``independent="false"``): :mod:`.plus`. Couplings
are embedded (a :class:`symgen.couplings.Coupled` system in the independent coordinates); a loop is
refused unless ``open_loops=True``; a link of mass 0 with an inertia is a rotor (docs/LOOPS.md).

The package: :mod:`.parse` reads the XML (strict numbers, snapping), :mod:`.validate` checks
structure and inertias, :mod:`.lump` assembles the tree and lumps fixed joints, :mod:`.read` is
the entry point, :mod:`.plus` the URDF+ elements, :mod:`.write` the writer.
"""
from .parse import parse_numbers
from .read import load_urdf, parse_urdf_string
from .write import matrix_rpy, urdf_string, write_urdf

__all__ = ["load_urdf", "matrix_rpy", "parse_numbers", "parse_urdf_string", "urdf_string", "write_urdf"]
