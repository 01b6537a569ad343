"""symgen.urdf: reading URDF into a Robot and writing it back.

Properties checked, one test (or one parametrized family) each:

- every user error is a URDFError whose one-line message names the file, the element and the
  reason, and the CLI turns it into one line on stderr and exit code 2;
- numbers are parsed strictly; values near 0, ±1, ±1/2 and angles near k·π/2 snap to exact
  values (exact 0/±1 rotation entries), and each snap is reported;
- fixed joints are lumped exactly (same M as the same link written as one inertial, and as
  Pinocchio's crba), also below the root;
- the joint order is Pinocchio's (depth first, child joints by name);
- mimic joints are independent coordinates, each noted in Robot.notes (Pinocchio's default);
- inertia validity allows round-off (1e-9 of the trace plus 1e-12 kg m^2), nothing more;
- write_urdf / parse round trip for every synthetic kind gives the same bodies and the same M;
- every URDF of example-robot-data loads (same joint order and M as Pinocchio) or fails with a
  URDFError for a known reason.
"""
from __future__ import annotations

import dataclasses
import math
import os
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import symgen
from symgen import quantities as Q
from symgen import robots
from symgen.cli import main
from symgen.errors import URDFError
from symgen.model import FREE_AXES, ROOT_JOINT
from symgen.spatial import rpy_matrix
from symgen.urdf import load_urdf, matrix_rpy, parse_numbers, parse_urdf_string, urdf_string, write_urdf
from support import find_erd_dir, require as _require, require_pinocchio as _pinocchio

DATA = Path(__file__).resolve().parent / "data" / "urdf"
EXAMPLE = Path(symgen.__file__).resolve().parent / "examples" / "arm4.urdf"
SEED = 20240611


def pin_mass_matrix(pin, path, robot, q, free_flyer=False):
    """Pinocchio's M for symgen's q (joint names matched; a continuous joint gets cos, sin; with
    ``free_flyer`` Pinocchio's free-flyer, whose q and v layouts are symgen's) in symgen's order."""
    model = (pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer()) if free_flyer
             else pin.buildModelFromUrdf(str(path)))
    qp = pin.neutral(model)
    idx_v = list(range(6)) if free_flyer else []
    if free_flyer:
        qp[:7], q = q[:7], q[7:]
    for name, qi in zip(robot.joint_names[1 if free_flyer else 0:], q):
        joint = model.joints[model.getJointId(name)]
        if joint.nq == 1:
            qp[joint.idx_q] = qi
        else:
            qp[joint.idx_q:joint.idx_q + 2] = math.cos(qi), math.sin(qi)
        idx_v.append(joint.idx_v)
    M = pin.crba(model, model.createData(), qp)
    M = np.triu(M) + np.triu(M, 1).T
    return M[np.ix_(idx_v, idx_v)], [n for n in model.names[1:]]


# ------------------------------------------------------------------ building tiny URDFs in tests

UNIT_INERTIA = '<inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/>'


def inertial(mass="1", inertia=UNIT_INERTIA):
    return f'<inertial><mass value="{mass}"/>{inertia}</inertial>'


def link(name, body=None):
    return f'<link name="{name}">{inertial() if body is None else body}</link>'


def joint(name, parent, child, jtype="revolute", inner=""):
    return (f'<joint name="{name}" type="{jtype}"><parent link="{parent}"/>'
            f'<child link="{child}"/>{inner}</joint>')


def robot_xml(*parts):
    return '<robot name="r">' + "".join(parts) + "</robot>"


BASE = link("base", "")


def with_origin(xyz="0 0 0", rpy="0 0 0"):
    """A one-joint robot whose joint has this origin."""
    return robot_xml(BASE, link("l1"), joint("j1", "base", "l1", inner=f'<origin xyz="{xyz}" rpy="{rpy}"/>'))


def with_l1(body):
    """A one-joint robot whose moving link l1 has this content."""
    return robot_xml(BASE, link("l1", body), joint("j1", "base", "l1"))


def inertia_attrs(ixx="0.1", iyy="0.1", izz="0.1", ixy="0", ixz="0", iyz="0"):
    return f'<inertia ixx="{ixx}" ixy="{ixy}" ixz="{ixz}" iyy="{iyy}" iyz="{iyz}" izz="{izz}"/>'


# ------------------------------------------------------------------------------- bad input

J1, L1 = "<joint name='j1'>", "<link name='l1'>"

BAD = [
    pytest.param('<robot name="r">\n<link name="a">\n</robot>', None, "malformed XML at line 3",
                 id="malformed-xml"),
    pytest.param('<model name="r"/>', "<model>", "the root element must be <robot>", id="root-not-robot"),
    pytest.param('<robot name="r"/>', "<robot>", "no <link> elements", id="no-links"),
    pytest.param(robot_xml(BASE, '<link><inertial/></link>'), "<link> #2", "missing attribute 'name'",
                 id="link-without-name"),
    pytest.param(robot_xml(BASE, link("l1"), '<joint type="revolute"><parent link="base"/><child link="l1"/></joint>'),
                 "<joint> #1", "missing attribute 'name'", id="joint-without-name"),
    pytest.param(robot_xml(BASE, link("l1"), '<joint name="" type="revolute"/>'),
                 "<joint> #1", "attribute 'name' is empty", id="joint-with-empty-name"),
    pytest.param(robot_xml(BASE, link("l1"), '<joint name="j1"><parent link="base"/><child link="l1"/></joint>'),
                 J1, "missing attribute 'type'", id="joint-without-type"),
    pytest.param(robot_xml(BASE, link("l1"), '<joint name="j1" type="revolute"><child link="l1"/></joint>'),
                 J1, "missing element <parent>", id="joint-without-parent"),
    pytest.param(robot_xml(BASE, link("l1"), '<joint name="j1" type="revolute"><parent link="base"/><child/></joint>'),
                 f"{J1}/<child>", "missing attribute 'link'", id="child-without-link"),
    pytest.param(with_l1(f'<inertial><mass/>{UNIT_INERTIA}</inertial>'), f"{L1}/<inertial>/<mass>",
                 "missing attribute 'value'", id="mass-without-value"),
    pytest.param(with_l1(f'<inertial>{UNIT_INERTIA}</inertial>'), f"{L1}/<inertial>", "missing element <mass>",
                 id="inertial-without-mass"),
    pytest.param(with_l1('<inertial><mass value="1"/></inertial>'), f"{L1}/<inertial>",
                 "missing element <inertia>", id="inertial-without-inertia"),
    pytest.param(with_l1(inertial(inertia='<inertia ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/>')),
                 f"{L1}/<inertial>/<inertia>", "missing attribute 'ixx'", id="inertia-without-ixx"),
    pytest.param(with_origin(xyz="0 nan 0"), f"{J1}/<origin>", "'nan' is not a decimal number", id="nan"),
    pytest.param(with_origin(xyz="inf 0 0"), f"{J1}/<origin>", "'inf' is not a decimal number", id="inf"),
    pytest.param(with_origin(rpy="0x10 0 0"), f"{J1}/<origin>", "'0x10' is not a decimal number", id="hex"),
    pytest.param(with_origin(xyz="1_000 0 0"), f"{J1}/<origin>", "'1_000' is not a decimal number",
                 id="underscore"),
    pytest.param(with_origin(xyz="1e400 0 0"), f"{J1}/<origin>", "'1e400' is out of range", id="overflow"),
    pytest.param(with_origin(xyz=""), f"{J1}/<origin>", "expected 3 numbers, got 0", id="empty-xyz"),
    pytest.param(with_origin(rpy="0 0"), f"{J1}/<origin>", "expected 3 numbers, got 2", id="two-rpy"),
    pytest.param(with_origin(xyz="1,0,0"), f"{J1}/<origin>", "expected 3 numbers, got 1", id="commas"),
    pytest.param(with_l1(inertial(mass="abc")), f"{L1}/<inertial>/<mass>", "'abc' is not a decimal number",
                 id="mass-not-a-number"),
    pytest.param(with_l1(inertial(mass="1 2")), f"{L1}/<inertial>/<mass>", "expected 1 number, got 2",
                 id="two-masses"),
    pytest.param(with_l1(inertial(inertia=inertia_attrs(ixx="eval(1)"))), f"{L1}/<inertial>/<inertia>",
                 "'eval(1)' is not a decimal number", id="no-eval"),
    pytest.param(robot_xml(BASE, link("l1"), joint("j1", "base", "l1", "ball")), J1, "unknown joint type 'ball'",
                 id="unknown-type"),
    pytest.param(robot_xml(BASE, link("l1"), joint("j1", "base", "l1", "planar", inner='<axis xyz="1 0 0"/>')),
                 f"{J1}/<axis>", "a planar joint's normal must be 0 0 1", id="planar-normal"),
    pytest.param(robot_xml(BASE, link("l1"), link("l2"), joint("j1", "base", "l1"),
                           joint("j2", "base", "l2", inner='<mimic multiplier="1"/>')),
                 "<joint name='j2'>/<mimic>", "missing attribute 'joint'", id="mimic-without-joint"),
    pytest.param(robot_xml(BASE, link("l1"), link("l2"), joint("j1", "base", "l1"),
                           joint("j2", "base", "l2", inner='<mimic joint="j1" offset="half"/>')),
                 "<joint name='j2'>/<mimic>", "attribute offset='half': 'half' is not a decimal number",
                 id="mimic-offset-not-a-number"),
    pytest.param(robot_xml(BASE, link("l1"), link("l2"), joint("j1", "base", "l1")), "<robot>",
                 "more than one root link: 'base', 'l2'", id="two-roots"),
    pytest.param(robot_xml(BASE, link("l1"), joint("j1", "base", "l1"), joint("j2", "base", "l1")), L1,
                 "link has two parent joints, 'j1' and 'j2'", id="two-parents"),
    pytest.param(robot_xml(BASE, link("l1"), link("a"), link("b"), joint("j1", "base", "l1"),
                           joint("ja", "a", "b"), joint("jb", "b", "a")),
                 "<joint name='jb'>", "joints form a loop: jb -> ja -> jb", id="loop"),
    pytest.param(robot_xml(BASE, link("l1"), joint("j1", "base", "nope")), f"{J1}/<child>",
                 "link 'nope' is not defined", id="missing-link"),
    pytest.param(robot_xml(BASE, link("l1"), link("l1"), joint("j1", "base", "l1")), L1, "duplicate link name",
                 id="duplicate-link"),
    pytest.param(robot_xml(BASE, link("l1"), link("l2"), joint("j1", "base", "l1"), joint("j1", "l1", "l2")), J1,
                 "duplicate joint name", id="duplicate-joint"),
    pytest.param(with_l1(inertial(mass="-1")), f"{L1}/<inertial>/<mass>", "mass -1.0 is negative",
                 id="negative-mass"),
    pytest.param(with_l1(inertial(mass="0", inertia=inertia_attrs(ixx="-0.1"))), f"{L1}/<inertial>/<inertia>",
                 "not positive semidefinite", id="zero-mass-rotor-inertia-not-psd"),
    pytest.param(with_l1(inertial(inertia=inertia_attrs(ixy="0.2"))), f"{L1}/<inertial>/<inertia>",
                 "inertia is not physically valid (not positive semidefinite", id="inertia-not-psd"),
    pytest.param(with_l1(inertial(inertia=inertia_attrs(ixx="-0.1"))), f"{L1}/<inertial>/<inertia>",
                 "(not positive semidefinite: principal moments -0.1, 0.1, 0.1; the negative one is 1 of the trace)",
                 id="inertia-large-negative-moment"),
    pytest.param(with_l1(inertial(inertia=inertia_attrs(ixx="0", iyy="0", izz="0", ixz="1e-11"))),
                 f"{L1}/<inertial>/<inertia>", "not positive semidefinite", id="inertia-not-psd-above-floor"),
    pytest.param(robot_xml(BASE, link("l1"), joint("j1", "base", "l1", "fixed")), "<robot>", "no movable joints",
                 id="no-movable-joints"),
    pytest.param(robot_xml(BASE, link("l1"), joint("j1", "base", "l1", inner='<axis xyz="0 0 0"/>')),
                 f"{J1}/<axis>", "axis is zero", id="zero-axis"),
]


def assert_one_line_error(exc: URDFError, source: str, element: str | None, reason: str):
    assert exc.source == source
    assert exc.element == element
    assert reason in exc.reason
    message = str(exc)
    assert "\n" not in message
    assert message.startswith(f"{source}: ")
    assert element is None or f": {element}: " in message
    assert message.endswith(exc.reason)


@pytest.mark.parametrize("text, element, reason", BAD)
def test_bad_input_is_a_urdf_error_naming_file_element_and_reason(tmp_path, text, element, reason):
    path = tmp_path / "bad.urdf"
    path.write_text(text)
    with pytest.raises(URDFError) as info:
        load_urdf(path)
    assert_one_line_error(info.value, str(path), element, reason)


def test_missing_file_is_a_urdf_error(tmp_path):
    path = tmp_path / "nowhere.urdf"
    with pytest.raises(URDFError) as info:
        load_urdf(path)
    assert_one_line_error(info.value, str(path), None, "file not found")


def test_directory_is_a_urdf_error(tmp_path):
    with pytest.raises(URDFError) as info:
        load_urdf(tmp_path)
    assert_one_line_error(info.value, str(tmp_path), None, "is a directory")


def test_string_without_source_is_named_string():
    with pytest.raises(URDFError, match=r"^<string>: <model>: "):
        parse_urdf_string("<model/>")


def test_floating_base_refuses_names_it_would_add(tmp_path):
    path = tmp_path / "clash.urdf"
    path.write_text(robot_xml(BASE, link("l1"), joint(ROOT_JOINT, "base", "l1")))
    with pytest.raises(URDFError) as info:
        load_urdf(path, floating_base=True)
    assert_one_line_error(info.value, str(path), f"<joint name='{ROOT_JOINT}'>", "adds a virtual joint")


CLI_BAD = [
    pytest.param(None, "file not found", id="missing-file"),
    pytest.param('<robot name="r">\n<link name="a">\n</robot>', "malformed XML at line 3", id="malformed-xml"),
    pytest.param(robot_xml(BASE, link("l1"), link("l2"), joint("j1", "base", "l1"),
                           joint("j2", "base", "l2", inner='<mimic/>')), "missing attribute 'joint'",
                 id="mimic-without-joint"),
    pytest.param(with_l1(inertial(inertia=inertia_attrs(ixx="-0.1"))), "inertia is not physically valid",
                 id="bad-inertia"),
    pytest.param(robot_xml(BASE, link("l1"), joint("j1", "base", "l1", "screw")), "unknown joint type",
                 id="unknown-joint-type"),        # (pybullet's spherical is read: tests/test_joint_models.py)
]


@pytest.mark.parametrize("text, reason", CLI_BAD)
def test_cli_reports_bad_input_in_one_line_with_exit_code_2(tmp_path, text, reason):
    path = tmp_path / "bad.urdf"
    if text is not None:
        path.write_text(text)
    result = CliRunner().invoke(main, ["info", str(path)])
    assert result.exit_code == 2, result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"symgen: {path}: ")
    assert reason in lines[0]
    assert "Traceback" not in result.stdout + result.stderr


# ------------------------------------------------------------------------------- numbers

@pytest.mark.parametrize("text, expected", [
    ("0 0 0", (0.0, 0.0, 0.0)), ("1 -2.5 +3e-2", (1.0, -2.5, 0.03)), (" .5\t1.\n-0.0 ", (0.5, 1.0, -0.0)),
    ("1E+3 -1e-400 7", (1000.0, -0.0, 7.0)),
])
def test_parse_numbers_accepts_decimal_floats(text, expected):
    assert parse_numbers(text, 3) == expected


@pytest.mark.parametrize("text", ["nan 0 0", "inf 0 0", "-Infinity 0 0", "0x10 0 0", "1_000 0 0", "1e400 0 0",
                                  "", "1 2", "1 2 3 4", "1e 0 0", ". 0 0", "1..2 0 0", "١ 0 0", "1/2 0 0",
                                  "pi 0 0", "(1) 0 0"])
def test_parse_numbers_rejects_everything_else(text):
    with pytest.raises(ValueError):
        parse_numbers(text, 3)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])     # (a loaded CI machine)
@given(st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=1, max_size=4))
def test_parse_numbers_reads_repr_of_any_finite_float_exactly(values):
    parsed = parse_numbers(" ".join(repr(v) for v in values), len(values))
    assert [math.copysign(1, x) for x in parsed] == [math.copysign(1, v) for v in values]
    assert list(parsed) == values


# ------------------------------------------------------------------------------- snapping

def test_origin_values_near_0_1_half_snap_and_are_reported():
    robot = parse_urdf_string(with_origin(xyz="1e-12 0.99999999999 -0.50000000001"))
    assert robot.bodies[0].translation == (0.0, 1.0, -0.5)
    assert robot.snapped == ("joint 'j1' origin xyz[0]: 1e-12 -> 0",
                             "joint 'j1' origin xyz[1]: 0.99999999999 -> 1",
                             "joint 'j1' origin xyz[2]: -0.50000000001 -> -0.5")


def test_values_far_from_targets_and_exact_values_are_not_snapped():
    robot = parse_urdf_string(with_origin(xyz="0.3 1e-6 0", rpy="0 0.2 0"))
    assert robot.bodies[0].translation == (0.3, 1e-6, 0.0)
    assert robot.snapped == ()
    assert np.array_equal(np.array(robot.bodies[0].rotation), rpy_matrix((0.0, 0.2, 0.0)))


def test_snap_tolerance_is_an_option():
    robot = parse_urdf_string(with_origin(xyz="1e-12 0 0"), snap_tol=0.0)
    assert robot.bodies[0].translation == (1e-12, 0.0, 0.0)
    assert robot.snapped == ()


@pytest.mark.parametrize("rpy, labels", [
    ("1.5707963267948966 0 3.14159265359", ["rpy[0]: 1.5707963267948966 -> pi/2", "rpy[2]: 3.14159265359 -> pi"]),
    ("-1.57079632679 4.71238898038469 1e-13", ["rpy[0]: -1.57079632679 -> -pi/2",
                                                "rpy[1]: 4.71238898038469 -> 3pi/2", "rpy[2]: 1e-13 -> 0"]),
    ("0 -3.141592653589793 6.283185307179586", ["rpy[1]: -3.141592653589793 -> -pi",
                                                "rpy[2]: 6.283185307179586 -> 2pi"]),
])
def test_right_angles_snap_to_exact_rotations(rpy, labels):
    robot = parse_urdf_string(with_origin(rpy=rpy))
    R = np.array(robot.bodies[0].rotation)
    assert set(np.unique(R)) <= {0.0, 1.0, -1.0}
    assert np.allclose(R, rpy_matrix(parse_numbers(rpy, 3)), atol=1e-10)
    assert list(robot.snapped) == [f"joint 'j1' origin {label}" for label in labels]


def test_right_angle_twist_with_other_angles_keeps_structural_zeros():
    robot = parse_urdf_string(with_origin(rpy="1.5707963267948966 0.3 0"))
    R = np.array(robot.bodies[0].rotation)
    expected = rpy_matrix((math.pi / 2, 0.3, 0.0))
    assert np.allclose(R, expected, atol=1e-15)
    assert np.count_nonzero(R) == 5          # Ry(0.3) Rx(pi/2): four zeros are exact


def test_axis_is_normalized_and_snapped():
    def axis(text):
        return parse_urdf_string(robot_xml(BASE, link("l1"), joint("j1", "base", "l1", inner=f'<axis xyz="{text}"/>')))
    assert axis("0 0 2").bodies[0].axis == (0.0, 0.0, 1.0)
    assert axis("1e-12 0 -1").bodies[0].axis == (0.0, 0.0, -1.0)
    assert np.allclose(axis("1 1 0").bodies[0].axis, (math.sqrt(0.5), math.sqrt(0.5), 0.0), rtol=0, atol=1e-15)
    default = parse_urdf_string(robot_xml(BASE, link("l1"), joint("j1", "base", "l1")))
    assert default.bodies[0].axis == (1.0, 0.0, 0.0)
    assert default.bodies[0].translation == (0.0, 0.0, 0.0)
    assert default.bodies[0].rotation == ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0))


def test_inertial_data_is_not_snapped_except_exact_zeros():
    body = inertial(mass="0.99999999999", inertia=inertia_attrs(ixx="0.50000000001", iyy="0.5", izz="0.5",
                                                                 ixy="1e-20", iyz="1e-6"))
    body = body.replace("<inertial>", '<inertial><origin xyz="1e-12 0 0.5000000001"/>')
    robot = parse_urdf_string(with_l1(body))
    inertia = robot.bodies[0].inertia
    assert inertia.mass == 0.99999999999
    assert inertia.com == (1e-12, 0.0, 0.5000000001)
    assert inertia.I_com[0][0] == 0.50000000001
    assert inertia.I_com[0][1] == 0.0 and inertia.I_com[1][2] == 1e-6
    assert robot.snapped == ("link 'l1' inertial inertia ixy: 1e-20 -> 0",)


def test_inertial_rpy_rotates_the_inertia_into_link_axes():
    body = inertial(mass="2", inertia=inertia_attrs(ixx="0.01", iyy="0.02", izz="0.025"))
    body = body.replace("<inertial>", '<inertial><origin xyz="0.1 0.2 0.3" rpy="0.3 -0.4 1.2"/>')
    inertia = parse_urdf_string(with_l1(body)).bodies[0].inertia
    R = rpy_matrix((0.3, -0.4, 1.2))
    assert np.allclose(inertia.I_com, R @ np.diag([0.01, 0.02, 0.025]) @ R.T, rtol=0, atol=1e-17)
    assert inertia.com == (0.1, 0.2, 0.3)


# ------------------------------------------------------------------------------- rotations

def test_rpy_matrix_is_exact_at_right_angles_and_plain_trig_elsewhere():
    """Angles that are the floats k·pi/2 (what snapping produces) give exact 0/±1 entries; any
    other angle gives the product of the textbook matrices with math.cos/sin."""
    for rpy in _right_angle_rotations():
        R = rpy_matrix(rpy)
        assert set(np.unique(R)) <= {-1.0, 0.0, 1.0} and np.array_equal(R @ R.T, np.eye(3)), rpy
    rng = np.random.default_rng(SEED)
    for r, p, y in rng.uniform(-4, 4, size=(200, 3)):
        cr, sr, cp, sp, cy, sy = math.cos(r), math.sin(r), math.cos(p), math.sin(p), math.cos(y), math.sin(y)
        textbook = (np.array([[cy, -sy, 0.0], [sy, cy, 0.0], [0.0, 0.0, 1.0]])
                    @ np.array([[cp, 0.0, sp], [0.0, 1.0, 0.0], [-sp, 0.0, cp]])
                    @ np.array([[1.0, 0.0, 0.0], [0.0, cr, -sr], [0.0, sr, cr]]))
        assert np.array_equal(rpy_matrix((r, p, y)), textbook), f"seed {SEED}, rpy {(r, p, y)}"


def _right_angle_rotations():
    angles = [k * math.pi / 2 for k in range(4)]
    return [(r, p, y) for r in angles for p in angles for y in angles]


@pytest.mark.parametrize("case", ["random", "gimbal", "near-gimbal", "right-angles"])
def test_matrix_rpy_recovers_the_rotation(case):
    rng = np.random.default_rng(SEED)
    if case == "random":
        rpys = rng.uniform(-math.pi, math.pi, size=(500, 3))
    elif case == "gimbal":
        rpys = [(r, s * math.pi / 2, y) for r, y in rng.uniform(-math.pi, math.pi, size=(200, 2)) for s in (1, -1)]
    elif case == "near-gimbal":
        rpys = [(r, s * (math.pi / 2 - d), y) for (r, y), d in zip(rng.uniform(-math.pi, math.pi, size=(200, 2)),
                                                                   10.0 ** rng.uniform(-15, -3, 200))
                for s in (1, -1)]
    else:
        rpys = _right_angle_rotations()
    for rpy in rpys:
        R = rpy_matrix(rpy)
        back = rpy_matrix(matrix_rpy(R))
        assert np.abs(back - R).max() <= 1e-12, f"{case}, seed {SEED}, rpy {rpy}"
        if case == "right-angles":
            assert np.array_equal(back, R)


# ------------------------------------------------------------------------------- lumping

def test_fixed_joint_lumping_is_exact():
    split, combined = load_urdf(DATA / "split_link.urdf"), load_urdf(DATA / "combined_link.urdf")
    assert split.joint_names == combined.joint_names == ("j1", "j2")
    assert split.lumped == ("lower -> upper",)
    for a, b in zip(split.bodies, combined.bodies):
        assert a.parent == b.parent and a.axis == b.axis
        assert np.allclose(a.rotation, b.rotation, rtol=0, atol=1e-15)
        assert np.allclose(a.translation, b.translation, rtol=0, atol=1e-15)
        assert math.isclose(a.inertia.mass, b.inertia.mass)
        assert np.allclose(a.inertia.com, b.inertia.com, rtol=0, atol=1e-15)
        assert np.allclose(a.inertia.I_com, b.inertia.I_com, rtol=0, atol=1e-15)
    rng = np.random.default_rng(SEED)
    for q in rng.uniform(0, 2 * np.pi, size=(5, 2)):
        assert np.allclose(symgen.mass_matrix(split, q), symgen.mass_matrix(combined, q), rtol=1e-13, atol=1e-15), \
            f"seed {SEED}, q {q}"


def test_fixed_joint_lumping_matches_pinocchio():
    pin = _pinocchio()
    robot = load_urdf(DATA / "split_link.urdf")
    rng = np.random.default_rng(SEED)
    for q in rng.uniform(0, 2 * np.pi, size=(5, 2)):
        M_pin, _ = pin_mass_matrix(pin, DATA / "split_link.urdf", robot, q)
        assert np.allclose(symgen.mass_matrix(robot, q), M_pin, rtol=1e-12, atol=1e-15), f"seed {SEED}, q {q}"


def test_fixed_chain_below_the_root_folds_into_the_root():
    robot = load_urdf(DATA / "root_chain.urdf")
    assert robot.root_link == "world"
    assert robot.lumped == ("base_link -> world", "plate -> world")
    body = robot.bodies[0]
    # world -> base_link: yaw pi/2 and 0.5 up; base_link -> plate: (0.1, 0, 0.1); plate -> arm: 0.2 up
    assert body.translation == (0.0, 0.1, 0.8)
    assert body.rotation == ((0.0, -1.0, 0.0), (1.0, 0.0, 0.0), (0.0, 0.0, 1.0))
    # plate's own inertia breaks the triangle inequality; lumped with base_link into the ground
    # body it does not (and the ground body of a fixed base is unused anyway): no note
    assert robot.notes == ()


def test_floating_base_puts_a_free_flyer_first():
    robot = load_urdf(EXAMPLE, floating_base=True)
    fixed = load_urdf(EXAMPLE)
    assert robot.floating_base and robot.root_link == "world"
    assert robot.joint_names == (ROOT_JOINT,) + fixed.joint_names
    assert (robot.nq, robot.nv) == (fixed.n + 7, fixed.n + 6)
    assert robot.link_names == ("base_link",) + fixed.link_names
    assert [(b.joint_type, b.axis) for b in robot.bodies[:6]] == list(FREE_AXES)
    root = robot.bodies[5]
    assert root.name == "base_link" and root.inertia.mass == 3.0
    assert all(b.inertia.mass == 0.0 for b in robot.bodies[:5])
    assert robot.bodies[6].parent == 5
    assert robot.bodies[6:] == tuple(dataclasses.replace(b, parent=b.parent + 6 if b.parent >= 0 else 5)
                                     for b in fixed.bodies)


def test_floating_base_lumps_into_the_root_and_matches_pinocchio_free_flyer(tmp_path):
    pin = _pinocchio()
    text = (DATA / "root_chain.urdf").read_text()
    text = text.replace('<link name="world"/>', "").replace(
        text[text.index('<joint name="world_joint"'):text.index("</joint>") + len("</joint>")], "")
    text = text.replace('<inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0.001"/>',
                        '<inertia ixx="0.001" ixy="0" ixz="0" iyy="0.001" iyz="0" izz="0.001"/>')
    path = tmp_path / "floating.urdf"
    path.write_text(text)
    robot = load_urdf(path, floating_base=True)
    assert robot.lumped == ("plate -> base_link",) and robot.bodies[5].inertia.mass == 5.0
    rng = np.random.default_rng(SEED)
    quat = rng.normal(size=4)
    q = np.concatenate([rng.uniform(-1, 1, 3), quat / np.linalg.norm(quat), rng.uniform(0, 2 * np.pi, robot.n - 6)])
    M_pin, _ = pin_mass_matrix(pin, path, robot, q, free_flyer=True)
    assert np.allclose(symgen.mass_matrix(robot, q), M_pin, rtol=1e-12, atol=1e-14), f"seed {SEED}, q {q}"


# ------------------------------------------------------------------------------- joint order

def test_joint_order_is_depth_first_by_joint_name_like_pinocchio(tmp_path):
    # document order z_j, B_j, m_j, a_j; Pinocchio (urdfdom's std::map) orders children by name
    text = robot_xml(BASE, link("a"), link("b"), link("c"), link("d"),
                     joint("z_j", "base", "a"), joint("B_j", "a", "c"), joint("m_j", "base", "b"),
                     joint("a_j", "a", "d"))
    robot = parse_urdf_string(text)
    assert robot.joint_names == ("m_j", "z_j", "B_j", "a_j")
    assert robot.parent == (-1, -1, 1, 1)
    pin = _pinocchio()
    path = tmp_path / "order.urdf"
    path.write_text(text.replace("</joint>", '<limit lower="-1" upper="1" effort="1" velocity="1"/></joint>'))
    assert tuple(pin.buildModelFromUrdf(str(path)).names[1:]) == robot.joint_names


# ------------------------------------------------------------------------------- mimic joints

def mimic_note(name, target, undefined=False):
    return (f"joint {name!r} mimics {target!r} in the URDF"
            f"{' (which defines no joint of that name)' if undefined else ''}; symgen treats it as "
            f"an independent coordinate (as Pinocchio does by default; --mimic embeds the relation)")


MIMIC_PAIR = robot_xml(BASE, link("l1"), link("l2"), joint("j1", "base", "l1"),
                       joint("j2", "base", "l2", inner='<mimic joint="j1" multiplier="-2" offset="0.5"/>'))


@pytest.mark.parametrize("floating_base", [False, True])
def test_mimic_joint_is_an_independent_coordinate_with_a_note(floating_base):
    robot = parse_urdf_string(MIMIC_PAIR, floating_base=floating_base)
    plain = parse_urdf_string(MIMIC_PAIR.replace('<mimic joint="j1" multiplier="-2" offset="0.5"/>', ""),
                              floating_base=floating_base)
    assert robot.notes == (mimic_note("j2", "j1"),)
    assert plain.notes == ()
    assert robot.bodies == plain.bodies           # the relation is not modelled at all
    assert robot.joint_names[-2:] == ("j1", "j2")


def test_mimic_notes_are_in_q_order_and_only_for_movable_joints():
    # q order: a_j, then z_j; the fixed f_j has no coordinate, so its <mimic> changes nothing
    text = robot_xml(BASE, link("a"), link("b"), link("c"),
                     joint("z_j", "base", "a", inner='<mimic joint="a_j"/>'),
                     joint("a_j", "base", "b", inner='<mimic joint="gone"/>'),
                     joint("f_j", "a", "c", "fixed", inner='<mimic joint="z_j"/>'))
    robot = parse_urdf_string(text)
    assert robot.joint_names == ("a_j", "z_j")
    assert robot.notes == (mimic_note("a_j", "gone", undefined=True), mimic_note("z_j", "a_j"))
    assert robot.lumped == ("c -> a",)


def test_cli_info_shows_the_mimic_note(tmp_path):
    path = tmp_path / "mimic.urdf"
    path.write_text(MIMIC_PAIR)
    result = CliRunner().invoke(main, ["info", str(path)])
    assert result.exit_code == 0, result.output
    assert mimic_note("j2", "j1") in result.stdout, result.stdout


def test_mimic_joints_match_pinocchio_which_ignores_mimic_by_default(tmp_path):
    pin = _pinocchio()
    path = tmp_path / "mimic.urdf"
    path.write_text(MIMIC_PAIR.replace("</joint>", '<limit lower="-1" upper="1" effort="1" velocity="1"/></joint>'))
    robot = load_urdf(path)
    q = np.random.default_rng(SEED).uniform(0, 2 * np.pi, robot.n)
    M_pin, names = pin_mass_matrix(pin, path, robot, q)
    assert tuple(names) == robot.joint_names == ("j1", "j2")
    assert np.allclose(symgen.mass_matrix(robot, q), M_pin, rtol=1e-12, atol=1e-15), f"seed {SEED}, q {q}"


# ------------------------------------------------------------------------------- inertia round-off

@pytest.mark.parametrize("entries", [
    dict(ixx="0", iyy="0", izz="0", ixz="2.40741e-35"),   # icub's head, the minimal repro
    dict(ixx="0", iyy="0", izz="5e-13"),                  # triangle inequality off by 5e-13
    dict(ixx="-5e-13", iyy="0", izz="0"),                 # a principal moment of -5e-13
    dict(ixx="0.5", iyy="0.5", izz="1.0000000001"),       # off by 1e-10, of a trace of 2
], ids=["icub-head", "only-izz-5e-13", "negative-5e-13", "relative"])
def test_inertia_round_off_is_accepted_as_is(entries):
    robot = parse_urdf_string(with_l1(inertial(mass="1.3", inertia=inertia_attrs(**entries))))
    inertia = robot.bodies[0].inertia
    assert inertia.mass == 1.3
    v = {"ixy": 0.0, "ixz": 0.0, "iyz": 0.0, **{k: float(x) for k, x in entries.items()}}
    assert inertia.I_com == ((v["ixx"], v["ixy"], v["ixz"]), (v["ixy"], v["iyy"], v["iyz"]),
                             (v["ixz"], v["iyz"], v["izz"]))
    assert robot.notes == () and robot.snapped == ()


def test_robot_without_name_takes_the_file_name_and_says_so():
    robot = load_urdf(DATA / "noname.urdf")
    assert robot.name == "noname"
    assert robot.notes == ("the <robot> element has no name; using 'noname' (the file name)",)
    assert robot.bodies[0].joint_type == "continuous"


# ------------------------------------------------------------------------------- writing

ROUND_TRIP = [(kind, n) for kind in robots.KINDS for n in (4, 9)] + [("serial", 1), ("tree", 1), ("planar", 1)]


def _depth_first_by_name(robot):
    children = {}
    for i, b in sorted(enumerate(robot.bodies), key=lambda ib: ib[1].joint_name):
        children.setdefault(b.parent, []).append(i)
    order, stack = [], children.get(-1, [])[::-1]
    while stack:
        i = stack.pop()
        order.append(i)
        stack.extend(children.get(i, [])[::-1])
    return order


@pytest.mark.parametrize("kind, n", ROUND_TRIP)
def test_write_then_read_gives_the_same_bodies_and_mass_matrix(kind, n):
    robot = robots.make(kind, n, SEED)
    back = parse_urdf_string(urdf_string(robot), floating_base=robot.floating_base)   # a free-flyer is not written
    context = f"{kind} {n}, seed {SEED}"
    assert back.name == robot.name and back.root_link == robot.root_link
    # back's q order is depth first by joint name; that is robot's own order except for the
    # paper's binary tree, numbered breadth first
    order = _depth_first_by_name(robot)
    assert tuple(b.name for b in back.bodies) == tuple(robot.bodies[i].name for i in order), context
    if kind != "tree":
        assert order == list(range(robot.n))
    where = {b.name: k for k, b in enumerate(back.bodies)}
    for i, b in enumerate(robot.bodies):
        c = back.bodies[where[b.name]]
        assert (c.joint_name, c.joint_type, c.inertia.mass) == (b.joint_name, b.joint_type, b.inertia.mass), context
        parent = robot.bodies[b.parent].name if b.parent >= 0 else None
        assert (back.bodies[c.parent].name if c.parent >= 0 else None) == parent, context
        for x, y in [(c.axis, b.axis), (c.rotation, b.rotation), (c.translation, b.translation),
                     (c.inertia.com, b.inertia.com), (c.inertia.I_com, b.inertia.I_com)]:
            assert np.allclose(x, y, rtol=0, atol=1e-12), f"{context}, body {b.name}"
        # numbers are written with repr: exact, but for I_com, of which URDF holds the upper
        # triangle (the synthetic inertias are symmetric only to an ulp)
        assert (c.translation, c.inertia.mass, c.inertia.com) == (b.translation, b.inertia.mass, b.inertia.com)
        assert np.array_equal(np.triu(c.inertia.I_com), np.triu(b.inertia.I_com)), context
    perm = [where[b.name] for b in robot.bodies]
    rng = np.random.default_rng(SEED)
    for q in Q.ARGUMENTS["q"].draw(rng, robot.nq, robot.nv, 3):
        q_back = np.empty(robot.nq)
        q_back[[p + robot.nq - robot.n for p in perm]] = q[robot.nq - robot.n:]
        q_back[:robot.nq - robot.n] = q[:robot.nq - robot.n]
        M, M_back = symgen.mass_matrix(robot, q), symgen.mass_matrix(back, q_back)
        assert np.allclose(M_back[np.ix_(perm, perm)], M, rtol=1e-12, atol=1e-14), f"{context}, q {q}"


@pytest.mark.parametrize("kind", robots.KINDS)
def test_written_urdf_loads_in_pinocchio_with_the_same_mass_matrix(tmp_path, kind):
    pin = _pinocchio()
    robot = robots.make(kind, 6, SEED)
    path = tmp_path / f"{kind}.urdf"
    write_urdf(robot, path)
    back = load_urdf(path, floating_base=robot.floating_base)
    q = Q.ARGUMENTS["q"].draw(np.random.default_rng(SEED), robot.nq, robot.nv)
    M_pin, names = pin_mass_matrix(pin, path, back, q, free_flyer=robot.floating_base)
    assert tuple(names) == back.joint_names
    assert np.allclose(symgen.mass_matrix(back, q), M_pin, rtol=1e-12, atol=1e-14), f"{kind}, seed {SEED}"


def test_read_write_read_of_a_urdf_keeps_exact_structure(tmp_path):
    robot = load_urdf(EXAMPLE)
    path = tmp_path / "arm4_again.urdf"
    write_urdf(robot, path)
    back = load_urdf(path)
    assert back.bodies == robot.bodies           # exact, snapped right angles included
    assert back.lumped == () and "-0.0" not in path.read_text()


def test_names_are_escaped_in_the_written_urdf():
    robot = robots.make("serial", 2, SEED)
    odd = ['l<1>&"x"', "l2 'two'"]
    robot = dataclasses.replace(robot, name='r&<"', root_link="b>",
                                bodies=tuple(dataclasses.replace(b, name=n, joint_name=f"j {n}")
                                             for b, n in zip(robot.bodies, odd)))
    back = parse_urdf_string(urdf_string(robot))
    assert back.name == robot.name and back.root_link == "b>"
    assert back.link_names == tuple(odd) and back.joint_names == tuple(f"j {n}" for n in odd)


def test_write_failure_is_a_urdf_error(tmp_path):
    with pytest.raises(URDFError, match="cannot write the file"):
        write_urdf(robots.make("serial", 2), tmp_path / "no" / "such" / "dir.urdf")


def test_interrupted_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path, monkeypatch):
    target = tmp_path / "keep.urdf"
    target.write_text("old")

    def failing_replace(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(URDFError, match="No space left on device"):
        write_urdf(robots.make("serial", 2), target)
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["keep.urdf"]


# ------------------------------------------------------------------------------- CLI

def test_cli_info_on_the_example_shows_order_lumping_and_snapping():
    result = CliRunner().invoke(main, ["info", str(EXAMPLE)])
    assert result.exit_code == 0, result.output
    out = result.stdout
    for text in ["robot 'arm4'", "DoF: 4", "q[0] joint1", "q[3] joint4", "lumped by fixed joints: 1",
                 "tool_link -> wrist_link", "snapped to exact values: 2",
                 "joint 'joint2' origin rpy[0]: 1.5707963267948966 -> pi/2",
                 "joint 'joint4' origin rpy[0]: -1.5707963267948966 -> -pi/2"]:
        assert text in out, out


def test_cli_model_writes_a_loadable_urdf(tmp_path):
    path = tmp_path / "x.urdf"
    result = CliRunner().invoke(main, ["model", "serial", "5", "-o", str(path)])
    assert result.exit_code == 0, result.output
    robot = load_urdf(path)
    assert robot.n == 5 and robot.joint_names == robots.make("serial", 5).joint_names


def test_example_matches_pinocchio():
    pin = _pinocchio()
    robot = load_urdf(EXAMPLE)
    q = np.random.default_rng(SEED).uniform(0, 2 * np.pi, robot.n)
    M_pin, names = pin_mass_matrix(pin, EXAMPLE, robot, q)
    assert tuple(names) == robot.joint_names
    assert np.allclose(symgen.mass_matrix(robot, q), M_pin, rtol=1e-12, atol=1e-15)


# ------------------------------------------------------------------------------- example-robot-data

ERD = find_erd_dir()
ERD_URDFS = sorted(str(p.relative_to(ERD)) for p in ERD.rglob("*.urdf")) if ERD else []

#: Files of example-robot-data 4.x that symgen refuses, and why: rigid robots with a fixed base
#: (they load with a floating base), and a file Pinocchio refuses too.
KNOWN_FAILURES = {
    "hector_description/robots/quadrotor_base.urdf": "no movable joints",              # loads floating
    "iris_description/robots/iris_simple.urdf": "no movable joints",                   # loads floating
    "ur_description/urdf/ur3.urdf": "no <link> elements",      # an empty <robot> without a name
}
#: Files with mimic joints, loaded as independent coordinates: how many notes each gets (one per
#: movable mimic joint; talos_reduced's 24 <mimic> elements are all on fixed joints).
MIMIC_NOTES = {
    "alex_description/urdf/alex_psyonic_hands.urdf": 8,
    "baxter_description/urdf/baxter.urdf": 2,
    "panda_description/urdf/panda.urdf": 1,
    "panda_description/urdf/panda_collision.urdf": 1,
    "pr2_description/urdf/pr2.urdf": 10,
    "romeo_description/urdf/romeo.urdf": 22,
    "talos_data/robots/talos_full_v2.urdf": 12,
    "talos_data/robots/talos_full_v2_box.urdf": 12,
    "talos_data/robots/talos_reduced.urdf": 0,
    "tiago_pro_description/robots/tiago_pro.urdf": 10,
}


@pytest.mark.parametrize("relative", ERD_URDFS or [None])
def test_example_robot_data_loads_like_pinocchio_or_fails_for_a_known_reason(relative):
    _require("example-robot-data", relative is not None)
    path = ERD / relative
    try:
        robot = load_urdf(path)
    except URDFError as exc:
        assert relative in KNOWN_FAILURES, f"{relative} fails for a reason not known before: {exc}"
        assert KNOWN_FAILURES[relative] in exc.reason, str(exc)
        assert exc.source == str(path) and "\n" not in str(exc)
        return
    assert relative not in KNOWN_FAILURES, f"{relative} now loads: update KNOWN_FAILURES"
    mimic_notes = [note for note in robot.notes if " mimics " in note]
    assert len(mimic_notes) == MIMIC_NOTES.get(relative, 0), robot.notes
    pin = _pinocchio()
    q = np.random.default_rng(SEED).uniform(-1, 1, robot.n)
    M_pin, names = pin_mass_matrix(pin, path, robot, q)
    assert tuple(names) == robot.joint_names, "joint order differs from Pinocchio's"
    # snapping moves right angles by up to snap_tol (1.57079632679 is 5e-12 off), so M agrees to
    # about that, relative to its largest entry
    err = np.abs(symgen.mass_matrix(robot, q) - M_pin).max()
    assert err <= 1e-9 * np.abs(M_pin).max(), f"{relative}, seed {SEED}: max error {err:.3g}"


def test_known_failures_name_only_installed_files():
    """KNOWN_FAILURES is the report of what symgen refuses and why; it must not list files the
    installed example-robot-data does not have (a renamed file would silently drop out)."""
    _require("example-robot-data", ERD is not None)
    missing = sorted((set(KNOWN_FAILURES) | set(MIMIC_NOTES)) - set(ERD_URDFS))
    assert not missing, f"KNOWN_FAILURES or MIMIC_NOTES list files example-robot-data lacks: {missing}"


@pytest.mark.parametrize("relative", ["hector_description/robots/quadrotor_base.urdf",
                                      "iris_description/robots/iris_simple.urdf"])
def test_rigid_robots_load_with_a_floating_base(relative):
    _require("example-robot-data", ERD is not None)
    robot = load_urdf(ERD / relative, floating_base=True)
    assert robot.n == 6 and robot.bodies[5].inertia.mass > 0
