"""The build's cost estimate and budget (symgen.codegen.cost, issue #38 item 5): the estimate
against measured builds' operation counts (the committed arm4 package, not in the fit; a small
chain built here), the refusal past the budget in one line, no joint cap by default, and (slow) a
100-joint tree built with the default functions without a flag."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from symgen import quantities as Q, robots
from symgen.cli import main
from symgen.codegen import cost
from symgen.codegen.build import BuildOptions, build, check_size
from symgen.errors import BuildError

ROOT = Path(__file__).resolve().parents[1]


def test_the_estimate_is_near_measured_operation_counts(tmp_path):
    manifest = json.loads((ROOT / "generated" / "arm4" / "manifest.json").read_text())
    measured = {Q.BY_FUNCTION[f].key: v["ops"]["total"] for f, v in manifest["functions"].items()}
    from symgen.urdf import load_urdf

    est = cost.estimate(load_urdf(ROOT / "symgen" / "examples" / "arm4.urdf"), tuple(measured))
    # an upper estimate: arm4's axes follow coordinate axes (Pinocchio's local convention pays), the fit's are general
    assert 0.8 * sum(measured.values()) <= est.total_ops <= 4 * sum(measured.values()), (est.total_ops, measured)
    robot = robots.serial_chain(8, seed=3)
    keys = ("M", "tau", "g", "Minv")
    result = build(robot, tmp_path, opts=BuildOptions(quantities=keys, compile=False))
    got = {Q.BY_FUNCTION[f].key: c["total"] for f, c in result.ops.items()}
    est = cost.estimate(robot, keys)
    for key in keys:
        assert 0.6 * got[key] <= est.ops[key] <= 1.6 * got[key], (key, est.ops[key], got[key])


def test_shape_counts_supports():
    assert cost.shape(robots.serial_chain(4)) == (4, 10, 30)
    n, s1, s2 = cost.shape(robots.binary_tree(7))
    assert n == 7 and s1 == 1 + 2 * 2 + 4 * 3 and s2 == 1 + 2 * 4 + 4 * 9


def test_a_build_past_the_budget_is_refused_in_one_line_and_the_budget_raises_it():
    robot = robots.serial_chain(150)
    with pytest.raises(BuildError) as info:
        check_size(robot, BuildOptions())
    message = str(info.value)
    assert "\n" not in message and "budget of 7200 s" in message and "--budget" in message and "serial150" in message
    check_size(robot, BuildOptions(budget=20000))          # raised: accepted
    check_size(robot, BuildOptions(budget=0))              # 0: no limit
    check_size(robot, BuildOptions(quantities=("M", "tau", "qdd")))   # the cheap functions of 150 joints: affordable


def test_no_joint_cap_by_default_a_100_joint_chain_is_within_the_budget():
    check_size(robots.serial_chain(100), BuildOptions())
    check_size(robots.binary_tree(120), BuildOptions())
    with pytest.raises(BuildError, match="more than --max-dof 50"):
        check_size(robots.serial_chain(60), BuildOptions(max_dof=50))


def test_the_cli_prints_the_estimate_of_a_long_build_and_refuses_past_the_budget(tmp_path):
    urdf = tmp_path / "serial150.urdf"
    assert CliRunner().invoke(main, ["model", "serial", "150", "-o", str(urdf)]).exit_code == 0
    result = CliRunner().invoke(main, ["build", str(urdf), "--out", str(tmp_path / "out"), "--no-compile"])
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert any(line.startswith("symgen: note: estimated") for line in lines[:-1]), lines
    assert "budget of 7200 s" in lines[-1], lines
    result = CliRunner().invoke(main, ["build", str(urdf), "--out", str(tmp_path / "out"), "--no-compile",
                                       "--budget", "1"])
    assert result.exit_code == 2 and "budget of 1 s" in result.output


@pytest.mark.slow
@pytest.mark.timeout(4 * 3600)
def test_a_100_joint_tree_builds_with_the_default_functions_without_a_flag(tmp_path):
    from symgen.codegen.build import import_package
    import numpy as np

    robot = robots.binary_tree(100)
    pkg = import_package(build(robot, tmp_path, opts=BuildOptions(copt="-O0", jobs=0)).path)
    q = np.random.default_rng(0).uniform(-1, 1, 100)
    assert np.abs(pkg.mass_matrix(q) - Q.evaluate(robot, "M", {"q": q})).max() < 1e-9
