"""xacro descriptions (symgen.urdf.xacro, issue #38 item 4): tests/data/xacro's arm, with its
arguments and includes ($(find ...), package://), read as Pinocchio reads the expanded URDF (M and
τ to 1e-12 at random states); the arguments in the package's provenance header; errors in one
line naming the xacro file (and the line where the XML parser gives it)."""
from __future__ import annotations

import zlib
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import symgen
from symgen import quantities as Q
from symgen.cli import main
from symgen.errors import OptionError, URDFError

pytest.importorskip("xacro")

DATA = Path(__file__).resolve().parent / "data" / "xacro"
ARM = DATA / "arm_description" / "urdf" / "arm.urdf.xacro"


@pytest.mark.parametrize("args, n, axis", [({}, 4, (0.0, 0.0, 1.0)), ({"links": "5", "wrist_axis": "1 0 0"}, 6, (1.0, 0.0, 0.0))])
def test_xacro_arm_matches_pinocchio_on_the_expanded_urdf(pin, args, n, axis):
    from symgen.urdf.xacro import expand

    robot = symgen.load_robot(ARM, xacro_args=args, package_paths=[DATA])
    assert robot.n == n and robot.bodies[-1].axis == axis and robot.source == str(ARM)
    model = pin.buildModelFromXML(expand(ARM, args, [DATA]))
    data = model.createData()
    seed = zlib.crc32(repr(args).encode())
    rng = np.random.default_rng(seed)
    for t in range(3):
        q, v, a = (rng.uniform(-1, 1, n) for _ in range(3))
        M = Q.evaluate(robot, "M", {"q": q})
        M_pin = pin.crba(model, data, q)
        M_pin = np.triu(M_pin) + np.triu(M_pin, 1).T
        assert np.abs(M - M_pin).max() < 1e-12, f"seed {seed} #{t}"
        tau = Q.evaluate(robot, "tau", {"q": q, "qd": v, "qdd": a})
        assert np.abs(tau - pin.rnea(model, data, q, v, a)).max() < 1e-12, f"seed {seed} #{t}"


def test_the_header_records_the_xacro_arguments(tmp_path):
    result = CliRunner().invoke(main, ["build", str(ARM), "--out", str(tmp_path), "--no-compile", "--quantities", "M",
                                       "--quiet", "--xacro-arg", "links:=2", "--package-path", str(DATA)])
    assert result.exit_code == 0, result.output
    header = (tmp_path / "xacro_arm" / "xacro_arm.h").read_text()
    assert "--xacro-arg links:=2" in header and f"--package-path {DATA}" in header, header[:600]


def _one_line(tmp_path, args, *expected):
    result = CliRunner().invoke(main, ["info", *map(str, args)])
    assert result.exit_code == 2, result.output
    (line,) = result.output.strip().splitlines()
    for text in expected:
        assert text in line, line
    return line


def test_xacro_errors_are_one_line_naming_the_file(tmp_path):
    _one_line(tmp_path, [ARM], "$(find parts_description)", "--package-path", str(ARM))
    broken = tmp_path / "broken.urdf.xacro"
    broken.write_text('<?xml version="1.0"?>\n<robot name="b" xmlns:xacro="http://www.ros.org/wiki/xacro">\n'
                      '  <link name="a">\n</robot>\n')
    _one_line(tmp_path, [broken], str(broken), "line 4")
    unknown = tmp_path / "unknown.urdf.xacro"
    unknown.write_text('<robot name="u" xmlns:xacro="http://www.ros.org/wiki/xacro"><link name="${missing}"/></robot>')
    _one_line(tmp_path, [unknown], str(unknown), "missing")
    with pytest.raises(OptionError, match="expected name:=value"):
        from symgen.urdf.xacro import parse_args
        parse_args(["links=3"])
    plain = tmp_path / "plain.urdf"
    plain.write_text((Path(symgen.__file__).parent / "examples" / "arm4.urdf").read_text())
    _one_line(tmp_path, [plain, "--xacro-arg", "a:=1"], "no xacro file")


def test_a_package_path_that_is_no_folder_is_refused(tmp_path):
    with pytest.raises((OptionError, URDFError)):
        symgen.load_robot(ARM, package_paths=[tmp_path / "nowhere"])
