"""jaxsim, the JAX rival timed beside the JAX target (``python -m symgen.bench.jax_batch PKG --jaxsim
URDF --x64``): the robot handed to it as SDF written from symgen's model, its mass matrix, inverse
and forward dynamics in its body-fixed velocities equal to symgen's on a fixed-base arm, panda and a
floating quadruped, and the benchmark's rows."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

import support
import symgen
from symgen.bench import jax_batch
from symgen.bench import jaxsim as J
from symgen.codegen.build import BuildOptions, build

EXAMPLE = Path(__file__).resolve().parents[1] / "symgen" / "examples" / "arm4.urdf"


def _jaxsim():
    try:
        import jaxsim  # noqa: F401
    except ImportError:
        pytest.fail("jaxsim is in the test extra (pip install -e '.[test]')")


@pytest.mark.parametrize("label,path,floating", [
    pytest.param("arm4", EXAMPLE, False, marks=pytest.mark.slow),
    pytest.param("panda", "panda_description/urdf/panda.urdf", False, marks=pytest.mark.slow),
    ("solo", "solo_description/robots/solo.urdf", True)])
def test_jaxsim_of_symgens_model_computes_symgens_values(label, path, floating):
    _jaxsim()
    robot = symgen.load_urdf(path if isinstance(path, Path) else support.erd_path(path), floating_base=floating)
    worst = J.check(J.functions(robot), robot, tol=1e-9, seed=5)
    assert set(worst) == set(J.FUNCTIONS), (label, worst)


def test_sdf_refuses_joints_of_several_velocities():
    robot = symgen.load_robot(Path(__file__).resolve().parent / "data" / "joints" / "mixed_joints.urdf")
    with pytest.raises(ValueError, match="single-DoF"):
        J.sdf_of(robot)


def test_jax_batch_times_jaxsim_beside_the_package(tmp_path, capsys):
    _jaxsim()
    path = build(symgen.load_urdf(EXAMPLE), tmp_path, opts=BuildOptions(
        quantities=("M", "tau", "qdd"), targets=("numpy", "jax"), compile=False)).path
    out = tmp_path / "times.json"
    argv = [str(path), "--jaxsim", str(EXAMPLE), "--batch", "32", "--repeats", "1", "--functions", "mass_matrix",
            "--json", str(out)]
    assert jax_batch.main(argv) == 2                              # float32 rows beside float64 jaxsim: refused
    assert jax_batch.main(argv + ["--x64"]) == 0
    report = json.loads(out.read_text())
    row = report["us_per_state"]["mass_matrix"]
    assert row["jaxsim"] > 0 and row["jax"] > 0, row
    assert "jaxsim against symgen" in capsys.readouterr().out
