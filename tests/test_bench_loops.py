"""``symgen bench`` of mechanisms with loops or couplings (symgen.bench.loops): the states handed to
the one-process C++ harness (Pinocchio's q, G, Ġ and a spanning τ with Gᵀτ_full = τ) reproduce the
package's M̄ and τ̄ through Pinocchio's crba and rnea (fast, no harness); and the bench command on
the four-bar runs, checks the package against Pinocchio's route and constraintDynamics before
timing, and reports every row (slow: the harness is built once, minutes)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import symgen

DATA = Path(__file__).parent / "data" / "urdfplus"


@pytest.fixture(scope="module", params=("four_bar.urdf", "belt_leg.urdf"))
def package(request, tmp_path_factory):
    from symgen.codegen.build import BuildOptions, build

    robot = symgen.load_urdf(DATA / request.param)
    opts = BuildOptions(quantities=("M", "C", "tau", "qdd"), copt="-O0", jobs=2)
    return DATA / request.param, Path(build(robot, tmp_path_factory.mktemp("bench_loops"), opts=opts).path)


def test_harness_states_reproduce_the_package(pin, package):
    from symgen.bench.cloop import read_manifest
    from symgen.bench.loops import _robot_and_oracle, loop_states
    from symgen.codegen.build import import_package

    urdf, path = package
    manifest, pkg = read_manifest(path), import_package(path)
    robot, oracle = _robot_and_oracle(urdf, manifest)
    model = oracle.full.model
    data = model.createData()
    s = loop_states(robot, oracle, manifest, count=4, seed=3)
    for t in range(4):
        ctx = f"{urdf.name} seed 3 state #{t}"
        qp, G, Gd = s["q_pin"][t], s["G"][t], s["Gd"][t]
        M = pin.crba(model, data, qp)
        M = np.triu(M) + np.triu(M, 1).T
        assert np.abs(G.T @ M @ G - pkg.numpy.mass_matrix(s["q"][t])).max() <= 1e-9, ctx
        a = G @ s["qdd"][t] + Gd @ s["qd"][t]
        tau = G.T @ pin.rnea(model, data, qp, G @ s["qd"][t], a)
        assert np.abs(tau - pkg.numpy.inverse_dynamics(s["q"][t], s["qd"][t], s["qdd"][t])).max() <= 1e-9, ctx
        assert np.abs(G.T @ s["tau_full"][t] - s["tau"][t]).max() <= 1e-12, ctx
        if getattr(robot, "system", None) is not None:           # loops: a consistent configuration
            assert np.abs(robot.system.loop_residual(s["q"][t])).max() <= 1e-9, ctx


@pytest.mark.slow
def test_bench_command_on_the_four_bar(tmp_path):
    from click.testing import CliRunner

    from symgen.cli import main

    urdf = DATA / "four_bar.urdf"
    runner = CliRunner()
    built = runner.invoke(main, ["build", str(urdf), "--out", str(tmp_path), "--quantities", "M,C,tau,qdd"])
    assert built.exit_code == 0, built.output
    out = tmp_path / "bench.json"
    result = runner.invoke(main, ["bench", str(tmp_path / "four_bar"), "--urdf", str(urdf), "--functions", "M,C,tau,qdd",
                                  "--repeats", "1", "--min-time", "0.001", "--c-batch", "0", "--json", str(out)])
    assert result.exit_code == 0, result.output
    record = json.loads(out.read_text())
    assert record["command"].startswith("symgen bench ") and "--json" in record["command"] and record["date"]
    assert record["machine"]["cpu"]                          # what the results pages name for each figure
    loops = record["loops"]
    assert set(loops["check"]) == {"M", "C", "tau", "qdd", "constraintDynamics", "forwardDynamics_J_gamma"}
    assert max(loops["check"].values()) <= 1e-8, loops["check"]
    assert loops["nv"] == 1 and loops["spanning_nv"] == 3
    for qty in ("M", "C", "tau", "qdd"):
        row = loops["rows"][qty]
        assert row["symgen_us"] > 0 and all(x > 0 for x in row["pinocchio_us"].values())
    assert {"constraintDynamics", "forwardDynamics_J_gamma", "route", "tree"} == set(loops["rows"]["qdd"]["pinocchio_us"])
    assert "constraintDynamics" in result.output
