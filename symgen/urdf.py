"""Read a URDF into a :class:`~symgen.model.Robot`, and write a Robot back as URDF.

Conventions (URDF's own, made explicit):

- A joint's ``<origin xyz rpy>`` places the joint frame in the parent link's frame:
  ``Body.translation = xyz`` and ``Body.rotation = Rz(yaw) Ry(pitch) Rx(roll)``
  (:func:`symgen.spatial.rpy_matrix`). Missing ``xyz``/``rpy`` are zeros.
- The joint frame is the child link's frame at q = 0. ``<axis xyz>`` is in that frame; it defaults
  to (1, 0, 0) and is normalized. Link names are the child link names, joint names the joint names.
- ``<inertial>``: mass, ``<origin xyz rpy>`` (CoM and orientation of the inertia axes in the link
  frame) and ``<inertia>`` about the CoM in those axes; stored as ``Inertia(mass, com, I_com)``
  with ``I_com`` rotated into link axes. A link without ``<inertial>`` is massless. The mass must
  be >= 0 (zero only with a zero inertia) and the inertia physically valid (positive semidefinite,
  principal moments obeying the triangle inequality, to 1e-9 of the trace plus 1e-12 kg m^2, so
  that round-off such as a lone 1e-35 off-diagonal entry passes) — except for links fixed to the
  ground of a fixed base, whose inertia is unused: there a note replaces the error.
- Joint types: revolute, continuous and prismatic become bodies. A fixed joint is lumped: its
  child's inertia is added exactly to the body it hangs from and its frame is carried through so
  that its own children attach where they should (``Robot.lumped`` lists "child -> body").
  Links below the root through fixed joints only fold into the root (discarded for a fixed base).
- Mimic joints (``<mimic joint=... multiplier=... offset=...>``) are read as independent
  coordinates of q, as Pinocchio's ``buildModelFromUrdf`` does by default; the mimic relation is
  not modelled, and ``Robot.notes`` gets one line per such movable joint, in q order. As for
  urdfdom, ``<mimic>`` needs a ``joint`` attribute and ``multiplier``/``offset``, if present,
  must be numbers; the mimicked joint need not exist (the note then says so).
- Joint order (the order of q): depth first from the root link, the child joints of every link
  taken in order of joint name. That is how urdfdom builds its tree (a ``std::map`` of joints),
  hence Pinocchio's order, so q vectors are index-compatible with ``pinocchio.buildModelFromUrdf``.
- ``floating_base=True`` puts six virtual joints first (:data:`symgen.model.FLOATING_JOINTS`:
  prismatic x, y, z, then revolute about x, y, z of the frame reached so far, intrinsic X-Y-Z)
  from a virtual root ``world`` to the URDF root link, which carries its own (and lumped) inertia.
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
A floating-base Robot is written with its virtual joints as ordinary joints from a root link
``robot.root_link``, so Pinocchio loads it as is (it reads back as a fixed-base Robot with the same
bodies).
"""
from __future__ import annotations

import math
import os
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from xml.sax.saxutils import quoteattr

import numpy as np

from .errors import OptionError, URDFError
from .model import FLOATING_JOINTS, JOINT_TYPES, Body, Inertia, Robot, floating_base_bodies

HALF_PI = math.pi / 2
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_SNAP_TARGETS = (0.0, 1.0, -1.0, 0.5, -0.5)
_EXACT_COS_SIN = ((1.0, 0.0), (0.0, 1.0), (-1.0, 0.0), (0.0, -1.0))   # angle k·π/2, k mod 4
_INERTIA_ZERO = 1e-15          # inertia entries this small relative to the largest become 0
_INERTIA_VALID = 1e-9          # tolerance of the validity checks, relative to the trace ...
_INERTIA_FLOOR = 1e-12         # ... plus this, in kg m^2, so that pure round-off passes
_VIRTUAL_ROOT = "world"
_LARGEST = 1e12                # larger magnitudes are refused (see the module docstring)
_XML_SPACE = re.compile(r"[ \t\r\n]+")   # XML's whitespace; no other separator


# ---------------------------------------------------------------------------- reading: plumbing

@dataclass
class _Context:
    """What every reading step needs: where errors point, the snap tolerance, the snap log."""

    source: str | None
    snap_tol: float
    snapped: list[str] = field(default_factory=list)
    invalid: dict[str, URDFError] = field(default_factory=dict)   # link -> why its inertia is bad

    def error(self, element: str | None, reason: str) -> URDFError:
        return URDFError(self.source, element, reason)


@dataclass(frozen=True)
class _Joint:
    name: str
    type: str
    parent: str
    child: str
    rotation: np.ndarray
    translation: np.ndarray
    axis: tuple[float, float, float]
    mimic: str | None = None       # the joint named by its <mimic> element, if any


def parse_numbers(text: str, count: int) -> tuple[float, ...]:
    """``count`` whitespace-separated decimal floats from ``text``; ValueError with the reason
    otherwise (wrong count, a token that is not a plain decimal such as ``nan``, ``inf``,
    ``0x10`` or ``1_000``, or a value too large for a float)."""
    stripped = text.strip(" \t\r\n")
    tokens = _XML_SPACE.split(stripped) if stripped else []
    if len(tokens) != count:
        raise ValueError(f"expected {count} number{'s' * (count > 1)}, got {len(tokens)}")
    values = []
    for token in tokens:
        if not _DECIMAL.fullmatch(token):
            raise ValueError(f"{token!r} is not a decimal number")
        value = float(token)
        if not math.isfinite(value):
            raise ValueError(f"{token!r} is out of range for a float")
        values.append(value)
    return tuple(values)


def _attribute(el: ET.Element, name: str, ctx: _Context, where: str) -> str:
    value = el.get(name)
    if value is None:
        raise ctx.error(where, f"missing attribute {name!r}")
    if name in ("name", "link", "type") and not value.strip():
        raise ctx.error(where, f"attribute {name!r} is empty")
    return value


def _child(el: ET.Element, tag: str, ctx: _Context, where: str) -> ET.Element:
    found = el.find(tag)
    if found is None:
        raise ctx.error(where, f"missing element <{tag}>")
    return found


def _numbers(el: ET.Element | None, name: str, count: int, ctx: _Context, where: str,
             default: tuple[float, ...] | None = None) -> tuple[float, ...]:
    """The numbers of attribute ``name`` of ``el``; ``default`` when ``el`` or the attribute is
    absent (None: the attribute is required)."""
    text = None if el is None else el.get(name)
    if text is None:
        if default is None:
            raise ctx.error(where, f"missing attribute {name!r}")
        return default
    try:
        values = parse_numbers(text, count)
    except ValueError as exc:
        raise ctx.error(where, f"attribute {name}={text!r}: {exc}") from None
    for x in values:
        if abs(x) > _LARGEST:
            raise ctx.error(where, f"attribute {name}={text!r}: {x!r} is too large (symgen accepts "
                                   f"magnitudes up to {_LARGEST:g}; the dynamics would overflow)")
    return values


# ---------------------------------------------------------------------------- reading: snapping

def _snap_values(values, ctx: _Context, what: str) -> tuple[float, ...]:
    """Values within snap_tol of 0, ±1, ±1/2 made exact; each change logged."""
    out = []
    for i, x in enumerate(values):
        target = next((t for t in _SNAP_TARGETS if abs(x - t) <= ctx.snap_tol), x)
        if target != x:
            ctx.snapped.append(f"{what}[{i}]: {x!r} -> {target:g}")
        out.append(float(target))
    return tuple(out)


def _angle_label(k: int) -> str:
    if k == 0:
        return "0"
    if k % 2 == 0:
        return {2: "pi", -2: "-pi"}.get(k, f"{k // 2}pi")
    return {1: "pi/2", -1: "-pi/2"}.get(k, f"{k}pi/2")


def _snap_angles(rpy, ctx: _Context, what: str) -> tuple[float, ...]:
    """Angles within snap_tol of k·π/2 become the float k·π/2, which :func:`_cos_sin` reads as
    exact. A non-zero multiple of π/2 is always logged: no float equals it."""
    out = []
    for i, a in enumerate(rpy):
        k = round(a / HALF_PI)
        if abs(a - k * HALF_PI) <= ctx.snap_tol:
            if a != 0.0 or k != 0:
                ctx.snapped.append(f"{what}[{i}]: {a!r} -> {_angle_label(k)}")
            a = k * HALF_PI
        out.append(float(a))
    return tuple(out)


def _cos_sin(a: float) -> tuple[float, float]:
    """cos and sin of ``a``, exact (0, ±1) when ``a`` is the float k·π/2."""
    k = round(a / HALF_PI)
    if a == k * HALF_PI:
        return _EXACT_COS_SIN[k % 4]
    return math.cos(a), math.sin(a)


def rpy_rotation(rpy) -> np.ndarray:
    """URDF's R = Rz(yaw) Ry(pitch) Rx(roll), as :func:`symgen.spatial.rpy_matrix`, but with exact
    0/±1 entries for angles that are multiples of π/2."""
    (cr, sr), (cp, sp), (cy, sy) = (_cos_sin(a) for a in rpy)
    Rx = np.array([[1.0, 0.0, 0.0], [0.0, cr, -sr], [0.0, sr, cr]])
    Ry = np.array([[cp, 0.0, sp], [0.0, 1.0, 0.0], [-sp, 0.0, cp]])
    Rz = np.array([[cy, -sy, 0.0], [sy, cy, 0.0], [0.0, 0.0, 1.0]])
    return Rz @ Ry @ Rx


def _origin(parent: ET.Element, ctx: _Context, where: str, what: str,
            snap_xyz: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """(R, p) of the ``<origin>`` child of ``parent`` (identity when absent)."""
    el = parent.find("origin")
    where = f"{where}/<origin>"
    xyz = _numbers(el, "xyz", 3, ctx, where, default=(0.0, 0.0, 0.0))
    rpy = _numbers(el, "rpy", 3, ctx, where, default=(0.0, 0.0, 0.0))
    if snap_xyz:
        xyz = _snap_values(xyz, ctx, f"{what} origin xyz")
    rpy = _snap_angles(rpy, ctx, f"{what} origin rpy")
    return rpy_rotation(rpy), np.array(xyz)


# ---------------------------------------------------------------------------- reading: elements

def _parse_xml(text: str, ctx: _Context) -> ET.Element:
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        line, column = exc.position
        reason = str(exc).split(":")[0]
        raise ctx.error(None, f"malformed XML at line {line}, column {column + 1}: {reason}") from None
    except ValueError as exc:       # e.g. an encoding expat cannot handle
        raise ctx.error(None, f"malformed XML: {exc}") from None
    if root.tag != "robot":
        raise ctx.error(f"<{root.tag}>", "the root element must be <robot>")
    return root


def _robot_name(root: ET.Element, ctx: _Context) -> tuple[str, tuple[str, ...]]:
    name = (root.get("name") or "").strip()
    if name:
        return name, ()
    name = Path(ctx.source).stem if ctx.source else "robot"
    return name, (f"the <robot> element has no name; using {name!r} (the file name)",)


def _inertia_problem(mass: float, I: np.ndarray, ctx: _Context, where: str) -> URDFError | None:
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


def _inertia_tensor(el: ET.Element, ctx: _Context, where: str, what: str) -> np.ndarray:
    """The 3x3 inertia about the CoM in inertial axes; near-zero entries snapped to 0."""
    names = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")
    v = dict(zip(names, (_numbers(el, n, 1, ctx, where)[0] for n in names)))
    largest = max(abs(x) for x in v.values())
    for n, x in v.items():
        if x != 0.0 and abs(x) <= _INERTIA_ZERO * largest:
            ctx.snapped.append(f"{what} inertia {n}: {x!r} -> 0")
            v[n] = 0.0
    return np.array([[v["ixx"], v["ixy"], v["ixz"]],
                     [v["ixy"], v["iyy"], v["iyz"]],
                     [v["ixz"], v["iyz"], v["izz"]]])


def _read_inertial(link: ET.Element, name: str, ctx: _Context) -> Inertia:
    """The link's inertia in link axes. A physically invalid one is recorded in ctx.invalid, not
    raised: it only matters if the link is not fixed to the ground (see _check_used_inertias)."""
    el = link.find("inertial")
    if el is None:
        return Inertia.zero()
    where = f"<link name={name!r}>/<inertial>"
    what = f"link {name!r} inertial"
    mass_el = _child(el, "mass", ctx, where)
    mass = _numbers(mass_el, "value", 1, ctx, f"{where}/<mass>")[0]
    R, com = _origin(el, ctx, where, what, snap_xyz=False)
    I = _inertia_tensor(_child(el, "inertia", ctx, where), ctx, f"{where}/<inertia>", what)
    problem = _inertia_problem(mass, I, ctx, where)
    if problem is not None:
        ctx.invalid[name] = problem
    return Inertia(mass, _vec(com), _mat(R @ I @ R.T))


def _read_links(root: ET.Element, ctx: _Context) -> dict[str, Inertia]:
    """Link name -> inertia, in document order."""
    links: dict[str, Inertia] = {}
    for k, el in enumerate(root.findall("link"), start=1):
        name = _attribute(el, "name", ctx, f"<link> #{k}")
        if name in links:
            raise ctx.error(f"<link name={name!r}>", "duplicate link name")
        links[name] = _read_inertial(el, name, ctx)
    if not links:
        raise ctx.error("<robot>", "no <link> elements")
    return links


def _joint_type(el: ET.Element, ctx: _Context, where: str) -> str:
    jtype = _attribute(el, "type", ctx, where)
    if jtype in ("planar", "floating"):
        raise ctx.error(where, f"joint type {jtype!r} is not supported (symgen handles revolute, "
                               f"continuous, prismatic and fixed joints); for a free-floating root, "
                               f"leave the root unattached and use --floating-base")
    if jtype not in JOINT_TYPES + ("fixed",):
        raise ctx.error(where, f"unknown joint type {jtype!r}; expected revolute, continuous, "
                               f"prismatic or fixed")
    return jtype


def _joint_mimic(el: ET.Element, ctx: _Context, where: str) -> str | None:
    """The joint named by ``el``'s ``<mimic>`` (None without one). The relation itself
    (multiplier, offset) is not modelled, but its numbers must be numbers, as for urdfdom."""
    mimic = el.find("mimic")
    if mimic is None:
        return None
    where = f"{where}/<mimic>"
    target = _attribute(mimic, "joint", ctx, where)
    for attribute in ("multiplier", "offset"):
        _numbers(mimic, attribute, 1, ctx, where, default=(0.0,))
    return target


def _joint_link(el: ET.Element, tag: str, links, ctx: _Context, where: str) -> str:
    link = _attribute(_child(el, tag, ctx, where), "link", ctx, f"{where}/<{tag}>")
    if link not in links:
        raise ctx.error(f"{where}/<{tag}>", f"link {link!r} is not defined")
    return link


def _joint_axis(el: ET.Element, jtype: str, ctx: _Context, where: str, what: str):
    raw = _numbers(el.find("axis"), "xyz", 3, ctx, f"{where}/<axis>", default=(1.0, 0.0, 0.0))
    if jtype == "fixed":
        return raw
    axis = np.array(_snap_values(raw, ctx, f"{what} axis"))
    norm = float(np.linalg.norm(axis))
    if norm == 0.0:
        raise ctx.error(f"{where}/<axis>", "axis is zero")
    return _vec(axis if norm == 1.0 else axis / norm)


def _read_joint(el: ET.Element, k: int, links, ctx: _Context) -> _Joint:
    name = _attribute(el, "name", ctx, f"<joint> #{k}")
    where, what = f"<joint name={name!r}>", f"joint {name!r}"
    jtype = _joint_type(el, ctx, where)
    parent = _joint_link(el, "parent", links, ctx, where)
    child = _joint_link(el, "child", links, ctx, where)
    R, p = _origin(el, ctx, where, what)
    return _Joint(name, jtype, parent, child, R, p, _joint_axis(el, jtype, ctx, where, what),
                  _joint_mimic(el, ctx, where))


def _read_joints(root: ET.Element, links, ctx: _Context) -> list[_Joint]:
    joints: dict[str, _Joint] = {}
    for k, el in enumerate(root.findall("joint"), start=1):
        joint = _read_joint(el, k, links, ctx)
        if joint.name in joints:
            raise ctx.error(f"<joint name={joint.name!r}>", "duplicate joint name")
        joints[joint.name] = joint
    return list(joints.values())


# ---------------------------------------------------------------------------- reading: the tree

def _parent_joints(joints: list[_Joint], ctx: _Context) -> dict[str, _Joint]:
    """Child link -> the one joint that has it as child."""
    up: dict[str, _Joint] = {}
    for j in joints:
        if j.child in up:
            raise ctx.error(f"<link name={j.child!r}>", f"link has two parent joints, "
                                                        f"{up[j.child].name!r} and {j.name!r}")
        up[j.child] = j
    return up


def _check_no_loop(links, up: dict[str, _Joint], ctx: _Context) -> None:
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


def _root_link(links, up: dict[str, _Joint], ctx: _Context) -> str:
    roots = [name for name in links if name not in up]
    if len(roots) > 1:
        raise ctx.error("<robot>", f"more than one root link: {', '.join(map(repr, roots))} (every "
                                   f"link but one must be the child of a joint)")
    return roots[0]


def _children(joints: list[_Joint]) -> dict[str, list[_Joint]]:
    """Parent link -> its child joints in order of joint name (urdfdom's, hence Pinocchio's)."""
    out: dict[str, list[_Joint]] = {}
    for j in sorted(joints, key=lambda j: j.name):
        out.setdefault(j.parent, []).append(j)
    return out


def _combine(a: Inertia, b: Inertia) -> Inertia:
    """a + b, returning a massless operand's partner unchanged (Inertia.__add__ would divide and
    multiply by the mass and could move the CoM by an ulp)."""
    if b.mass == 0.0:
        return a
    if a.mass == 0.0:
        return b
    return a + b


@dataclass(frozen=True)
class _Mount:
    """Where a URDF link sits: on body ``body`` (-1: the root) named ``body_link``, at (R, p)."""

    body: int
    body_link: str
    R: np.ndarray
    p: np.ndarray


@dataclass(frozen=True)
class _Tree:
    """The bodies in q order: specs[k] = (joint, parent body, R, p) of body root_body + 1 + k;
    inertias: body index (root_body for the root) -> lumped inertia; body_of: link -> body index."""

    specs: list
    inertias: dict[int, Inertia]
    lumped: list[str]
    body_of: dict[str, int]


def _assemble(root: str, links, joints: list[_Joint], root_body: int) -> _Tree:
    """Depth first from the root, child joints in order of joint name; fixed joints lumped."""
    children = _children(joints)
    inertias = {root_body: links[root]}
    specs, lumped, body_of = [], [], {root: root_body}
    stack = [(j, _Mount(root_body, root, np.eye(3), np.zeros(3))) for j in reversed(children.get(root, []))]
    while stack:
        j, at = stack.pop()
        R, p = at.R @ j.rotation, at.R @ j.translation + at.p
        if j.type == "fixed":
            inertias[at.body] = _combine(inertias[at.body], links[j.child].transformed(R, p))
            lumped.append(f"{j.child} -> {at.body_link}")
            here = _Mount(at.body, at.body_link, R, p)
        else:
            index = root_body + 1 + len(specs)
            specs.append((j, at.body, R, p))
            inertias[index] = links[j.child]
            here = _Mount(index, j.child, np.eye(3), np.zeros(3))
        body_of[j.child] = here.body
        stack.extend((c, here) for c in reversed(children.get(j.child, [])))
    return _Tree(specs, inertias, lumped, body_of)


def _check_used_inertias(tree: _Tree, fixed_base: bool, ctx: _Context) -> tuple[str, ...]:
    """Raise the first invalid inertia that enters the model; one that is fixed to the ground of
    a fixed base (the root link and links lumped into it) does not, and gets a note instead."""
    notes = []
    for link, problem in ctx.invalid.items():
        if not (fixed_base and tree.body_of[link] == -1):
            raise problem
        notes.append(f"link {link!r}: {problem.reason}; ignored, since the link is fixed to "
                     f"the ground and its inertia is unused")
    return tuple(notes)


def _mimic_notes(tree: _Tree, joints: list[_Joint]) -> tuple[str, ...]:
    """One note per movable mimic joint, in q order (a fixed one has no coordinate to speak of).
    A mimicked joint the file does not define is said so (urdfdom, hence Pinocchio, accepts it)."""
    defined = {j.name for j in joints}
    return tuple(f"joint {j.name!r} mimics {j.mimic!r} in the URDF"
                 f"{'' if j.mimic in defined else ' (which defines no joint of that name)'}; symgen "
                 f"treats it as an independent coordinate (as Pinocchio does by default)"
                 for j, *_ in tree.specs if j.mimic is not None)


def _check_floating_names(links, joints: list[_Joint], ctx: _Context) -> None:
    """The virtual links and joints of a floating base must not clash with the URDF's names."""
    if _VIRTUAL_ROOT in links:
        raise ctx.error(f"<link name={_VIRTUAL_ROOT!r}>",
                        f"a floating base (--floating-base) adds a virtual root link {_VIRTUAL_ROOT!r}, "
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


def parse_urdf_string(text: str, source: str | None = None, floating_base: bool = False,
                      snap_tol: float = 1e-9) -> Robot:
    """The Robot described by the URDF ``text`` (``source`` names it in error messages)."""
    if not snap_tol >= 0.0:
        raise OptionError(f"snap_tol must be a number >= 0, got {snap_tol!r}")
    ctx = _Context(source, snap_tol)
    root_el = _parse_xml(text, ctx)
    name, notes = _robot_name(root_el, ctx)
    links = _read_links(root_el, ctx)
    joints = _read_joints(root_el, links, ctx)
    up = _parent_joints(joints, ctx)
    _check_no_loop(links, up, ctx)
    root = _root_link(links, up, ctx)
    if floating_base:
        _check_floating_names(links, joints, ctx)
    root_body = len(FLOATING_JOINTS) - 1 if floating_base else -1
    tree = _assemble(root, links, joints, root_body)
    if not tree.specs and not floating_base:
        raise ctx.error("<robot>", f"no movable joints (every joint is fixed, so {name!r} has no "
                                   f"degree of freedom; --floating-base would give it six)")
    notes += _mimic_notes(tree, joints)
    notes += _check_used_inertias(tree, not floating_base, ctx)
    bodies = floating_base_bodies(root, tree.inertias[root_body]) if floating_base else []
    for k, (j, parent, R, p) in enumerate(tree.specs):
        bodies.append(Body(name=j.child, joint_name=j.name, joint_type=j.type, axis=j.axis,
                           parent=parent, rotation=_mat(R), translation=_vec(p),
                           inertia=tree.inertias[root_body + 1 + k]))
    return Robot(name=name, bodies=tuple(bodies), root_link=_VIRTUAL_ROOT if floating_base else root,
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


# ---------------------------------------------------------------------------- writing

def matrix_rpy(R) -> tuple[float, float, float]:
    """(roll, pitch, yaw) with rpy_rotation(rpy) == R, robust at gimbal lock (pitch = ±π/2):
    roll from the last row, then yaw from R Rx(roll)^T = Rz(yaw) Ry(pitch), which stays well
    conditioned whatever roll is (M. Day, "Extracting Euler angles from a rotation matrix")."""
    R = np.asarray(R, dtype=float)
    roll = math.atan2(R[2, 1], R[2, 2])
    pitch = math.atan2(-R[2, 0], math.hypot(R[0, 0], R[1, 0]))
    s, c = math.sin(roll), math.cos(roll)
    yaw = math.atan2(s * R[0, 2] - c * R[0, 1], c * R[1, 1] - s * R[1, 2])
    return roll, pitch, yaw


def _num(values) -> str:
    return " ".join(repr(float(x) + 0.0) for x in values)      # + 0.0 turns -0.0 into 0.0


def _link_xml(name: str, inertia: Inertia) -> list[str]:
    if inertia.mass == 0.0:
        return [f"  <link name={quoteattr(name)}/>"]
    I = inertia.I_com
    return [
        f"  <link name={quoteattr(name)}>",
        "    <inertial>",
        f'      <origin xyz="{_num(inertia.com)}" rpy="0.0 0.0 0.0"/>',
        f'      <mass value="{_num([inertia.mass])}"/>',
        f'      <inertia ixx="{_num([I[0][0]])}" ixy="{_num([I[0][1]])}" ixz="{_num([I[0][2]])}" '
        f'iyy="{_num([I[1][1]])}" iyz="{_num([I[1][2]])}" izz="{_num([I[2][2]])}"/>',
        "    </inertial>",
        "  </link>",
    ]


def _limit_xml(joint_type: str) -> list[str]:
    """urdfdom (hence Pinocchio) requires limits on revolute and prismatic joints; symgen ignores
    them, so these are wide placeholders."""
    bound = {"revolute": 2 * math.pi, "prismatic": 1000.0}.get(joint_type)
    if bound is None:
        return []
    return [f'    <limit lower="{-bound!r}" upper="{bound!r}" effort="1000.0" velocity="100.0"/>']


def _joint_xml(body: Body, parent_link: str) -> list[str]:
    return [
        f"  <joint name={quoteattr(body.joint_name)} type={quoteattr(body.joint_type)}>",
        f"    <parent link={quoteattr(parent_link)}/>",
        f"    <child link={quoteattr(body.name)}/>",
        f'    <origin xyz="{_num(body.translation)}" rpy="{_num(matrix_rpy(body.rotation))}"/>',
        f'    <axis xyz="{_num(body.axis)}"/>',
        *_limit_xml(body.joint_type),
        "  </joint>",
    ]


def urdf_string(robot: Robot) -> str:
    """``robot`` as URDF text that :func:`parse_urdf_string` reads back into the same bodies."""
    lines = ['<?xml version="1.0"?>',
             f"<!-- written by symgen: {robot.n} joints in q order; inertials at the CoM -->",
             f"<robot name={quoteattr(robot.name)}>",
             f"  <link name={quoteattr(robot.root_link)}/>"]
    for b in robot.bodies:
        parent_link = robot.bodies[b.parent].name if b.parent >= 0 else robot.root_link
        lines += _joint_xml(b, parent_link) + _link_xml(b.name, b.inertia)
    lines.append("</robot>")
    return "\n".join(lines) + "\n"


def write_urdf(robot: Robot, path) -> None:
    """Write ``robot`` as URDF to ``path``, atomically: a temporary file next to it, moved into
    place when complete, so a failure never leaves half a file."""
    text = urdf_string(robot)
    target = Path(path)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "x", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, target)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise URDFError(str(path), None, f"cannot write the file ({exc.strerror})") from None


# ---------------------------------------------------------------------------- small helpers

def _vec(a) -> tuple[float, float, float]:
    return tuple(float(x) for x in a)


def _mat(a):
    return tuple(tuple(float(x) for x in row) for row in a)
