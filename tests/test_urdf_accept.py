"""The URDF reader accepts the URDFs people have, and says what it tolerates (issues 11 and 15).

- Inertias are checked on the bodies that enter the dynamics, after fixed joints are lumped:
  placeholder links (massless, or mass 0 with a small inertia) lumped into a real body are fine.
- Violations beyond round-off are tolerated with a one-line SymgenWarning naming the file, the
  link and the size (and listed in Robot.notes, which `symgen info` prints); strict_inertia=True
  refuses them; a large negative moment is an error either way.
- --floating-base on a URDF whose root is a fixed "world" link puts the free motion on that link
  and lumps what is fixed to it, as Pinocchio's free-flyer does.
- Every example-robot-data URDF that Pinocchio loads loads here, fixed and floating.
- A URDF larger than 32 MiB (or /dev/zero) is refused before it is read whole; xacro is named as
  such; a joint that moves only massless links (M singular) is warned about.
"""
from __future__ import annotations

import contextlib
import io
import math
import os
import time
import warnings

import numpy as np
import pytest
from click.testing import CliRunner

import symgen
from symgen.cli import main
from symgen.errors import SymgenWarning, URDFError
from symgen.urdf import load_urdf, parse_urdf_string
from support import erd_dir
from test_urdf import (BASE, DATA, ERD, ERD_URDFS, SEED, _pinocchio, _require, assert_one_line_error,
                       inertia_attrs, inertial, joint, link, pin_mass_matrix, robot_xml)


def load_with_warnings(path, **options):
    """(robot, messages of the SymgenWarnings issued while loading)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        robot = load_urdf(path, **options)
    return robot, [str(w.message) for w in caught if issubclass(w.category, SymgenWarning)]


def write(tmp_path, text, name="robot.urdf"):
    path = tmp_path / name
    path.write_text(text)
    return path


def with_tip(tip_body, arm_body=None):
    """base -j1-> arm (revolute) -tip_joint-> tip (fixed): tip is lumped into arm."""
    return robot_xml(BASE, link("arm", arm_body), joint("j1", "base", "arm"), link("tip", tip_body),
                     joint("tip_joint", "arm", "tip", "fixed", '<origin xyz="0 0 0.3"/>'))


# ------------------------------------------------------------------ validity after lumping

@pytest.mark.parametrize("tip", [
    inertial(mass="0", inertia=inertia_attrs(ixx="1e-4", iyy="1e-4", izz="1e-4")),   # bolt's feet
    inertial(mass="1e-6", inertia=inertia_attrs(ixx="1e-6", iyy="1e-6", izz="1e-6", ixy="1e-6", ixz="1e-6",
                                                  iyz="1e-6")),                        # go1's base
    inertial(mass="0", inertia=inertia_attrs(ixx="-2.5e-22", iyy="0", izz="0")),      # hyq-like round-off
], ids=["mass-0-with-inertia", "placeholder-1e-6", "massless-negative-round-off"])
def test_placeholder_lumped_into_a_real_body_loads_silently(tmp_path, tip):
    path = write(tmp_path, with_tip(tip))
    robot, warned = load_with_warnings(path)
    assert warned == [] and robot.lumped == ("tip -> arm",)
    assert all("inertia" not in note for note in robot.notes), robot.notes


def test_massless_link_with_inertia_adds_its_inertia_like_pinocchio(tmp_path):
    """A link of mass 0 and rotational inertia J, fixed to a body, adds J to it (Pinocchio's sum)."""
    pin = _pinocchio()
    tip = inertial(mass="0", inertia=inertia_attrs(ixx="0.05", iyy="0.02", izz="0.04"))
    path = write(tmp_path, with_tip(tip).replace("</joint>", '<limit lower="-1" upper="1" effort="1" '
                                                              'velocity="1"/></joint>', 1))
    robot = load_urdf(path)
    assert robot.bodies[0].inertia.mass == 1.0
    assert np.allclose(robot.bodies[0].inertia.I_com, np.diag([0.15, 0.12, 0.14]), rtol=1e-15, atol=0)
    for q in np.random.default_rng(SEED).uniform(0, 2 * np.pi, size=(3, 1)):
        M_pin, _ = pin_mass_matrix(pin, path, robot, q)
        assert np.allclose(symgen.mass_matrix(robot, q), M_pin, rtol=1e-13), f"seed {SEED}, q {q}"


L_ARM = "<link name='arm'>/<inertial>/<inertia>"
TOLERATED = [
    # allegro's link_3.0: principal moments 2.30e-6, 3.49e-6, 7.27e-6
    pytest.param(inertial(mass="0.0388", inertia=inertia_attrs(ixx="3.48527e-06", iyy="2.30064e-06",
                                                                izz="7.2659e-06")),
                 "violate the triangle inequality by 1.48e-06 kg m^2, 0.11 of the trace", id="triangle-allegro"),
    pytest.param(inertial(inertia=inertia_attrs(izz="0.3")),
                 "principal moments 0.1, 0.1, 0.3 violate the triangle inequality by 0.1 kg m^2, 0.2 of the trace",
                 id="triangle"),
    pytest.param(inertial(inertia=inertia_attrs(ixx="-0.01", iyy="0.2", izz="0.2")),
                 "not positive semidefinite: principal moments -0.01, 0.2, 0.2; the negative one is 0.026 of "
                 "the trace", id="slightly-negative"),
]


@pytest.mark.parametrize("arm, reason", TOLERATED)
def test_small_violation_is_a_one_line_warning_and_an_error_when_strict(tmp_path, arm, reason):
    path = write(tmp_path, with_tip("", arm_body=arm))         # a massless tip changes nothing
    robot, warned = load_with_warnings(path)
    assert len(warned) == 1 and "\n" not in warned[0], warned
    assert warned[0].startswith(f"{path}: {L_ARM}: ") and reason in warned[0], warned[0]
    assert warned[0].endswith("; tolerated (strict_inertia=True refuses it)")
    assert any(note.startswith("link 'arm': ") and reason in note for note in robot.notes), robot.notes
    for strict in (load_urdf, symgen.load_urdf):
        with pytest.raises(URDFError) as info:
            strict(path, strict_inertia=True)
        assert_one_line_error(info.value, str(path), L_ARM, reason)


def test_violation_of_a_lumped_body_names_its_links(tmp_path):
    tip = inertial(mass="1", inertia=inertia_attrs(ixx="0", iyy="0", izz="0.5"))
    path = write(tmp_path, with_tip(tip, arm_body=inertial(inertia=inertia_attrs(ixx="0", iyy="0", izz="0.5"))))
    _, warned = load_with_warnings(path)
    assert len(warned) == 1 and warned[0].startswith(f"{path}: <link name='arm'>: "), warned
    assert "(with 'tip' lumped into it)" in warned[0]


@pytest.mark.parametrize("arm, reason", [
    (inertial(inertia=inertia_attrs(ixx="-1", iyy="1", izz="1")), "the negative one is 1 of the trace"),
    (inertial(inertia=inertia_attrs(ixx="-0.5", iyy="0.7", izz="0.7")), "the negative one is 0.56 of the trace"),
    (inertial(inertia=inertia_attrs(ixx="-1", iyy="-1", izz="-1")), "their sum is not positive"),
], ids=["negative-moment", "negative-half", "all-negative"])
def test_large_negative_moment_stays_an_error(tmp_path, arm, reason):
    path = write(tmp_path, with_tip("", arm_body=arm))
    with pytest.raises(URDFError) as info:
        load_urdf(path)
    assert_one_line_error(info.value, str(path), L_ARM, reason)


def test_negative_mass_is_an_error_even_fixed_to_the_ground(tmp_path):
    path = write(tmp_path, robot_xml(link("base", inertial()), link("plate", inertial(mass="-1")),
                                     joint("p", "base", "plate", "fixed"), link("arm"), joint("j1", "base", "arm")))
    with pytest.raises(URDFError) as info:
        load_urdf(path)
    assert_one_line_error(info.value, str(path), "<link name='plate'>/<inertial>/<mass>", "mass -1.0 is negative")


def test_symgen_info_lists_tolerated_inertias_as_notes(tmp_path):
    path = write(tmp_path, with_tip("", arm_body=TOLERATED[1].values[0]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SymgenWarning)
        result = CliRunner().invoke(main, ["info", str(path)])
    assert result.exit_code == 0, result.output
    assert "note: link 'arm': inertia is not physically valid (principal moments 0.1, 0.1, 0.3" in result.stdout


def test_cli_prints_a_tolerated_inertia_as_one_warning_line(tmp_path):
    """`symgen info` and `symgen build` show the warning as `symgen: warning: FILE: ELEMENT: reason`,
    one line, not Python's two-line warning with a source location."""
    path = write(tmp_path, with_tip("", arm_body=TOLERATED[1].values[0]))
    for args in (["info", str(path)], ["build", str(path), "--out", str(tmp_path / "out"), "--no-compile", "--quiet",
                                       "--quantities", "g"]):
        with warnings.catch_warnings():
            warnings.simplefilter("always", SymgenWarning)
            result = CliRunner().invoke(main, args)
        assert result.exit_code == 0, result.output
        lines = [ln for ln in result.stderr.splitlines() if ln.strip() and not ln.startswith("symgen: note: ")]
        assert lines == [f"symgen: warning: {path}: {L_ARM}: " + lines[0].split(f"{L_ARM}: ", 1)[1]], lines
        assert TOLERATED[1].values[1] in lines[0], lines


# ------------------------------------------------------------------ a fixed "world" root link

def test_floating_base_on_a_fixed_world_root_moves_that_link_and_lumps_what_is_fixed_to_it():
    robot = load_urdf(DATA / "root_chain.urdf", floating_base=True)
    fixed = load_urdf(DATA / "root_chain.urdf")
    assert robot.root_link == "floating_world" and robot.bodies[5].name == "world"
    assert robot.lumped == ("base_link -> world", "plate -> world")
    assert robot.bodies[5].inertia.mass == 5.0 and robot.n == fixed.n + 6
    assert robot.bodies[6].translation == fixed.bodies[0].translation


@pytest.mark.parametrize("relative", ["ur_description/urdf/ur5_robot.urdf", "xarm_description/urdf/xarm7.urdf",
                                      "z1_description/urdf/z1.urdf"])
def test_fixed_world_root_with_a_floating_base_matches_pinocchio_free_flyer(relative):
    """Pinocchio's free-flyer on the same file (root "world"), at random orientations."""
    pin = _pinocchio()
    path = erd_dir() / relative
    robot = load_urdf(path, floating_base=True)
    rng = np.random.default_rng(SEED)
    for _ in range(3):
        quat = rng.normal(size=4)
        q = np.concatenate([rng.uniform(-1, 1, 3), quat / np.linalg.norm(quat), rng.uniform(-np.pi, np.pi, robot.n - 6)])
        M_pin, _ = pin_mass_matrix(pin, path, robot, q, free_flyer=True)
        M = symgen.mass_matrix(robot, q)
        assert np.abs(M - M_pin).max() <= 1e-9 * np.abs(M_pin).max(), f"{relative}, seed {SEED}, q {q}"


@pytest.mark.parametrize("relative", ERD_URDFS or [None])
def test_every_example_robot_data_urdf_pinocchio_loads_loads_with_a_floating_base(relative):
    """Same number of speeds and same total mass as Pinocchio's free-flyer model of the file."""
    _require("example-robot-data", relative is not None)
    pin = _pinocchio()
    path = ERD / relative
    try:
        with contextlib.redirect_stderr(io.StringIO()):
            model = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
    except (RuntimeError, ValueError):
        pytest.skip(f"Pinocchio does not load {relative} either")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SymgenWarning)
        robot = load_urdf(path, floating_base=True)
    assert robot.n == model.nv
    total = sum(b.inertia.mass for b in robot.bodies)
    assert math.isclose(total, pin.computeTotalMass(model), rel_tol=1e-12), relative


# ------------------------------------------------------------------ size, xacro, massless joints

@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero")
def test_dev_zero_is_refused_at_once():
    start = time.monotonic()
    with pytest.raises(URDFError) as info:
        load_urdf("/dev/zero")
    assert_one_line_error(info.value, "/dev/zero", None, "larger than 32 MiB, the most symgen reads as a URDF")
    assert time.monotonic() - start < 10


def test_huge_file_is_refused_from_its_size(tmp_path):
    path = tmp_path / "huge.urdf"
    with open(path, "wb") as f:
        f.truncate(257 * 2**20)              # sparse: no disk used, and nothing is read
    with pytest.raises(URDFError) as info:
        load_urdf(path)
    assert_one_line_error(info.value, str(path), None, "larger than 32 MiB, the most symgen reads as a URDF (257 MiB)")


@pytest.mark.parametrize("command", ["info", "build"])
def test_cli_refuses_dev_zero_in_one_line(tmp_path, command):
    args = [command, "/dev/zero"] + (["--out", str(tmp_path)] if command == "build" else [])
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == ["symgen: /dev/zero: larger than 32 MiB, the most symgen reads as a URDF"]
    assert list(tmp_path.iterdir()) == []


XACRO = "this is xacro; run xacro first"


@pytest.mark.parametrize("text, element", [
    ('<robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro"><xacro:property name="l" value="1"/>'
     '<link name="base"/></robot>', "<xacro:property>"),
    ('<robot name="r" xmlns:xacro="http://ros.org/wiki/xacro"><link name="base"/>'
     '<xacro:include filename="arm.xacro"/></robot>', "<xacro:include>"),
    ('<robot name="r"><xacro:macro name="leg"/><link name="base"/></robot>', None),    # no namespace
], ids=["property", "include", "unbound-prefix"])
def test_xacro_is_named_as_such(tmp_path, text, element):
    path = write(tmp_path, text, "robot.urdf.xacro")
    with pytest.raises(URDFError) as info:
        load_urdf(path)
    assert_one_line_error(info.value, str(path), element, XACRO)


def test_example_robot_data_xacro_file_is_named_as_such():
    path = erd_dir() / "hector_description/robots/quadrotor_base.urdf.xacro"
    if not path.is_file():
        pytest.skip(f"{path} is not installed")
    with pytest.raises(URDFError) as info:
        load_urdf(path)
    assert XACRO in str(info.value) and "\n" not in str(info.value)


def test_urdf_declaring_the_xacro_namespace_without_using_it_loads(tmp_path):
    text = robot_xml(BASE, link("arm"), joint("j1", "base", "arm"))
    path = write(tmp_path, text.replace('<robot name="r">', '<robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro">'))
    assert load_urdf(path).joint_names == ("j1",)


def test_joint_moving_only_massless_links_is_warned_about(tmp_path):
    """M's row and column of such a joint are zero; one warning per topmost such joint."""
    path = write(tmp_path, robot_xml(BASE, link("arm"), joint("j1", "base", "arm"), link("finger", ""),
                                     joint("j2", "arm", "finger"), link("tip", ""), joint("j3", "finger", "tip"),
                                     link("sensor", ""), joint("s", "arm", "sensor", "fixed")))
    robot, warned = load_with_warnings(path)
    assert warned == [f"{path}: <joint name='j2'>: joint 'j2' moves only massless links ('finger', 'tip'): "
                      f"the mass matrix is singular"]
    assert robot.notes == ("joint 'j2' moves only massless links ('finger', 'tip'): the mass matrix is singular",)
    M = symgen.mass_matrix(robot, np.zeros(3))
    assert not M[1].any() and not M[2].any()


def test_massless_link_with_a_massive_child_is_not_warned_about(tmp_path):
    path = write(tmp_path, robot_xml(BASE, link("virtual", ""), joint("j1", "base", "virtual"), link("arm"),
                                     joint("j2", "virtual", "arm")))
    robot, warned = load_with_warnings(path)
    assert warned == [] and robot.notes == ()
