"""Small things about reading the models people have (issue #38 item 6): a blank line before
``<?xml`` (Pinocchio reads such a file; symgen reads it as the same robot), ``--name`` kept as
given or refused in one line (never silently renamed). A weld to a mocap body is in
tests/test_mjcf_weld.py (``mocap``)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from symgen.cli import main
from symgen.urdf import load_urdf

EXAMPLE = Path(__file__).resolve().parents[1] / "symgen" / "examples" / "arm4.urdf"


@pytest.mark.parametrize("lead", ["\n", "\n  \n\t", "   "])
def test_white_space_before_the_xml_declaration_is_read_as_pinocchio_reads_it(tmp_path, pin, lead):
    path = tmp_path / "blank.urdf"
    path.write_text(lead + EXAMPLE.read_text())
    assert EXAMPLE.read_text().startswith("<?xml")
    robot = load_urdf(path)
    model = pin.buildModelFromUrdf(str(path))
    assert robot.n == model.nv == 4
    q = np.random.default_rng(0).uniform(-1, 1, 4)
    from symgen import quantities as Q

    M = pin.crba(model, model.createData(), q)
    assert np.abs(Q.evaluate(robot, "M", {"q": q}) - np.triu(M) - np.triu(M, 1).T).max() < 1e-12


def test_an_error_after_a_late_declaration_keeps_the_files_line_numbers(tmp_path):
    path = tmp_path / "bad.urdf"
    path.write_text("\n\n" + EXAMPLE.read_text().replace("</robot>", "<link></robot", 1))
    result = CliRunner().invoke(main, ["info", str(path)])
    lines = EXAMPLE.read_text().count("\n") + 2
    assert result.exit_code == 2 and f"line {lines}," in result.output, result.output


@pytest.mark.parametrize("name", ["a__b", "Arm", "9lives", "class", "my-arm", "pep coding:utf-7 +AAo-"])
def test_a_package_name_that_would_be_renamed_is_refused_in_one_line(tmp_path, name):
    result = CliRunner().invoke(main, ["build", str(EXAMPLE), "--out", str(tmp_path), "--name", name,
                                       "--no-compile", "--quantities", "M", "--quiet"])
    assert result.exit_code == 2, result.output
    (line,) = result.output.strip().splitlines()
    assert "--name" in line and repr(name) in line, line
    assert not any(tmp_path.iterdir())


def test_a_package_name_as_given_is_kept(tmp_path):
    result = CliRunner().invoke(main, ["build", str(EXAMPLE), "--out", str(tmp_path), "--name", "arm_4b",
                                       "--no-compile", "--quantities", "M", "--quiet"])
    assert result.exit_code == 0, result.output
    assert [p.name for p in tmp_path.iterdir()] == ["arm_4b"]
