"""Reading a URDF's XML: elements, strict numbers and snapping, into link inertias and joints.

Nothing here builds the tree: :mod:`.lump` does, from the ``links`` and ``joints`` read here.
"""
from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import URDFError
from ..model import JOINT_TYPES, Inertia, as_mat3, as_vec3

#: URDF joint types read as joints with several velocities (symgen.model.JOINT_MODELS), as
#: Pinocchio's URDF parser reads them: planar -> JointModelPlanar (the x-y plane of the joint
#: frame), floating -> JointModelFreeFlyer; and pybullet's dialect (its URDF loader's own type,
#: which urdfdom does not know): spherical -> JointModelSpherical, a ball about the joint frame's
#: origin (no axis, no limits read)
URDF_GROUPS = ("planar", "floating", "spherical")
GROUP_OF = {"planar": "planar", "floating": "freeflyer", "spherical": "spherical"}
from ..spatial import HALF_PI, rpy_matrix

_DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_SNAP_TARGETS = (0.0, 1.0, -1.0, 0.5, -0.5)
_INERTIA_ZERO = 1e-15          # inertia entries this small relative to the largest become 0
_LARGEST = 1e12                # larger magnitudes are refused (see the module docstring)
_XML_SPACE = re.compile(r"[ \t\r\n]+")   # XML's whitespace; no other separator
_XACRO = "this is xacro; run xacro first (xacro FILE.urdf.xacro > FILE.urdf) and give symgen the URDF"


# ---------------------------------------------------------------------------- plumbing

@dataclass
class Context:
    """What every reading step needs: where errors point, the snap tolerance, the snap log."""

    source: str | None
    snap_tol: float
    snapped: list[str] = field(default_factory=list)

    def error(self, element: str | None, reason: str) -> URDFError:
        return URDFError(self.source, element, reason)


@dataclass(frozen=True)
class JointSpec:
    name: str
    type: str
    parent: str
    child: str
    rotation: np.ndarray
    translation: np.ndarray
    axis: tuple[float, float, float]
    mimic: str | None = None       # the joint named by its <mimic> element, if any
    #: its <mimic>'s multiplier and offset (urdfdom's defaults 1 and 0): q = multiplier q_mimic + offset
    mimic_multiplier: float = 1.0
    mimic_offset: float = 0.0
    #: its <dynamics damping friction> (urdfdom's defaults 0): viscous damping (Robot.damping) and
    #: Coulomb friction (left out: nonsmooth; Pinocchio keeps it as model.friction, its aba ignores it)
    damping: float = 0.0
    friction: float = 0.0


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


def _attribute(el: ET.Element, name: str, ctx: Context, where: str) -> str:
    value = el.get(name)
    if value is None:
        raise ctx.error(where, f"missing attribute {name!r}")
    if name in ("name", "link", "type") and not value.strip():
        raise ctx.error(where, f"attribute {name!r} is empty")
    return value


def _child(el: ET.Element, tag: str, ctx: Context, where: str) -> ET.Element:
    found = el.find(tag)
    if found is None:
        raise ctx.error(where, f"missing element <{tag}>")
    return found


def _numbers(el: ET.Element | None, name: str, count: int, ctx: Context, where: str,
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


# ---------------------------------------------------------------------------- snapping

def _snap_values(values, ctx: Context, what: str) -> tuple[float, ...]:
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


def _snap_angles(rpy, ctx: Context, what: str) -> tuple[float, ...]:
    """Angles within snap_tol of k·π/2 become the float k·π/2, which :func:`symgen.spatial.cos_sin`
    reads as exact. A non-zero multiple of π/2 is always logged: no float equals it."""
    out = []
    for i, a in enumerate(rpy):
        k = round(a / HALF_PI)
        if abs(a - k * HALF_PI) <= ctx.snap_tol:
            if a != 0.0 or k != 0:
                ctx.snapped.append(f"{what}[{i}]: {a!r} -> {_angle_label(k)}")
            a = k * HALF_PI
        out.append(float(a))
    return tuple(out)


def _origin(parent: ET.Element, ctx: Context, where: str, what: str,
            snap_xyz: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """(R, p) of the ``<origin>`` child of ``parent`` (identity when absent)."""
    el = parent.find("origin")
    where = f"{where}/<origin>"
    xyz = _numbers(el, "xyz", 3, ctx, where, default=(0.0, 0.0, 0.0))
    rpy = _numbers(el, "rpy", 3, ctx, where, default=(0.0, 0.0, 0.0))
    if snap_xyz:
        xyz = _snap_values(xyz, ctx, f"{what} origin xyz")
    rpy = _snap_angles(rpy, ctx, f"{what} origin rpy")
    return rpy_matrix(rpy), np.array(xyz)


# ---------------------------------------------------------------------------- elements

#: an XML declaration after leading white space (blank lines): expat refuses it, urdfdom (Pinocchio,
#: ROS) and MuJoCo read the file; it is blanked out in place, so lines and columns stay the file's
_LATE_DECLARATION = re.compile(r"\s+(<\?xml\b[^>]*\?>)")


def parse_xml(text: str, ctx: Context) -> ET.Element:
    late = _LATE_DECLARATION.match(text)
    if late:
        text = text[:late.start(1)] + " " * (late.end(1) - late.start(1)) + text[late.end(1):]
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        if "<xacro:" in text:       # often "unbound prefix": xacro elements without the namespace
            raise ctx.error(None, _XACRO) from None
        line, column = exc.position
        reason = str(exc).split(":")[0]
        raise ctx.error(None, f"malformed XML at line {line}, column {column + 1}: {reason}") from None
    except ValueError as exc:       # e.g. an encoding expat cannot handle
        raise ctx.error(None, f"malformed XML: {exc}") from None
    if root.tag != "robot":
        raise ctx.error(f"<{root.tag}>", "the root element must be <robot>")
    for el in root.iter():
        namespace, _, tag = el.tag.rpartition("}")
        if "xacro" in namespace:    # a declared xmlns:xacro alone is common in plain URDFs
            raise ctx.error(f"<xacro:{tag}>", _XACRO)
    return root


def robot_name(root: ET.Element, ctx: Context) -> tuple[str, tuple[str, ...]]:
    name = (root.get("name") or "").strip()
    if name:
        return name, ()
    name = Path(ctx.source).stem if ctx.source else "robot"
    return name, (f"the <robot> element has no name; using {name!r} (the file name)",)


def _inertia_tensor(el: ET.Element, ctx: Context, where: str, what: str) -> np.ndarray:
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


def _read_inertial(link: ET.Element, name: str, ctx: Context) -> Inertia:
    """The link's inertia in link axes; whether it is physical is checked on the bodies after
    lumping (:func:`.validate.check_inertias`)."""
    el = link.find("inertial")
    if el is None:
        return Inertia.zero()
    where = f"<link name={name!r}>/<inertial>"
    what = f"link {name!r} inertial"
    mass_el = _child(el, "mass", ctx, where)
    mass = _numbers(mass_el, "value", 1, ctx, f"{where}/<mass>")[0]
    R, com = _origin(el, ctx, where, what, snap_xyz=False)
    I = _inertia_tensor(_child(el, "inertia", ctx, where), ctx, f"{where}/<inertia>", what)
    return Inertia(mass, as_vec3(com), as_mat3(R @ I @ R.T))


def read_links(root: ET.Element, ctx: Context) -> dict[str, Inertia]:
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


def _joint_type(el: ET.Element, ctx: Context, where: str) -> str:
    jtype = _attribute(el, "type", ctx, where)
    if jtype not in JOINT_TYPES + URDF_GROUPS + ("fixed",):
        raise ctx.error(where, f"unknown joint type {jtype!r}; expected revolute, continuous, "
                               f"prismatic, planar, floating, spherical or fixed")
    return jtype


def _joint_mimic(el: ET.Element, ctx: Context, where: str) -> tuple[str | None, float, float]:
    """(the joint named by ``el``'s ``<mimic>``, its multiplier, its offset); (None, 1, 0)
    without one. The numbers must be numbers, as for urdfdom (defaults 1 and 0, urdfdom's); the
    relation is used only with ``mimic=True`` (:mod:`symgen.mimic`)."""
    mimic = el.find("mimic")
    if mimic is None:
        return None, 1.0, 0.0
    where = f"{where}/<mimic>"
    target = _attribute(mimic, "joint", ctx, where)
    (multiplier,) = _numbers(mimic, "multiplier", 1, ctx, where, default=(1.0,))
    (offset,) = _numbers(mimic, "offset", 1, ctx, where, default=(0.0,))
    return target, multiplier, offset


def _joint_link(el: ET.Element, tag: str, links, ctx: Context, where: str) -> str:
    link = _attribute(_child(el, tag, ctx, where), "link", ctx, f"{where}/<{tag}>")
    if link not in links:
        raise ctx.error(f"{where}/<{tag}>", f"link {link!r} is not defined")
    return link


def _joint_axis(el: ET.Element, jtype: str, ctx: Context, where: str, what: str):
    raw = _numbers(el.find("axis"), "xyz", 3, ctx, f"{where}/<axis>", default=(1.0, 0.0, 0.0))
    if jtype in ("fixed", "floating", "spherical"):       # no axis: every direction (or none) moves
        return raw
    if jtype == "planar":           # Pinocchio's planar joint moves in the x-y plane of its frame
        if el.find("axis") is not None and tuple(raw) != (0.0, 0.0, 1.0):
            raise ctx.error(f"{where}/<axis>", f"a planar joint's normal must be 0 0 1 (its frame's x-y "
                                               f"plane, as Pinocchio reads it), got {' '.join(map(str, raw))}")
        return (0.0, 0.0, 1.0)
    axis = np.array(_snap_values(raw, ctx, f"{what} axis"))
    norm = float(np.linalg.norm(axis))
    if norm == 0.0:
        raise ctx.error(f"{where}/<axis>", "axis is zero")
    return as_vec3(axis if norm == 1.0 else axis / norm)


def _read_joint(el: ET.Element, k: int, links, ctx: Context) -> JointSpec:
    name = _attribute(el, "name", ctx, f"<joint> #{k}")
    where, what = f"<joint name={name!r}>", f"joint {name!r}"
    jtype = _joint_type(el, ctx, where)
    parent = _joint_link(el, "parent", links, ctx, where)
    child = _joint_link(el, "child", links, ctx, where)
    R, p = _origin(el, ctx, where, what)
    return JointSpec(name, jtype, parent, child, R, p, _joint_axis(el, jtype, ctx, where, what),
                     *_joint_mimic(el, ctx, where), *_joint_dynamics(el, ctx, where))


def _joint_dynamics(el: ET.Element, ctx: Context, where: str) -> tuple[float, float]:
    """(damping, friction) of ``el``'s ``<dynamics>`` (0 when absent, as urdfdom's); a negative
    value, which no damper or friction has, is refused."""
    dyn = el.find("dynamics")
    out = []
    for name in ("damping", "friction"):
        (x,) = _numbers(dyn, name, 1, ctx, f"{where}/<dynamics>", default=(0.0,))
        if x < 0.0:
            raise ctx.error(f"{where}/<dynamics>", f"attribute {name}={x!r}: must be >= 0")
        out.append(x + 0.0)
    return tuple(out)


def read_joints(root: ET.Element, links, ctx: Context) -> list[JointSpec]:
    joints: dict[str, JointSpec] = {}
    for k, el in enumerate(root.findall("joint"), start=1):
        joint = _read_joint(el, k, links, ctx)
        if joint.name in joints:
            raise ctx.error(f"<joint name={joint.name!r}>", "duplicate joint name")
        joints[joint.name] = joint
    return list(joints.values())
