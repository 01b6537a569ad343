"""CasADi's generated C as a `symgen bench` rival (the optional bench extra): its taped M, C, tau
and g agree with symgen's numeric reference, its compiled C with its tape, and its rows reach the
bench result (a tiny robot, few iterations, no timing assertions) - both tapes: symgen's algorithms
and Pinocchio's (casadi_kin_dyn, in an environment made once under $SYMGEN_CACHE)."""
from pathlib import Path

import numpy as np
import pytest

ca = pytest.importorskip("casadi")

from symgen import quantities as Q  # noqa: E402
from symgen import robots  # noqa: E402
from symgen.bench import casadi as cas  # noqa: E402
from symgen.bench.cloop import read_manifest  # noqa: E402
from symgen.bench.harness import BenchError  # noqa: E402
from symgen.bench.measure import bench_package  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
ARM4 = ROOT / "generated" / "arm4"
ARM4_URDF = ROOT / "symgen" / "examples" / "arm4.urdf"


def _row_major(value):
    a = np.asarray(value, dtype=float)
    return a.T.reshape(-1) if a.ndim == 2 and a.shape[1] > 1 else a.reshape(-1)


@pytest.mark.parametrize("robot", [robots.serial_chain(4, seed=3), robots.binary_tree(5, seed=2)],
                         ids=["serial4", "tree5"])
@pytest.mark.parametrize("gravity", [(0.0, 0.0, -9.81), (1.0, -2.0, 3.0)])
def test_taped_functions_agree_with_the_numeric_reference(robot, gravity):
    functions = cas.tape(robot, gravity=gravity)
    assert set(functions) == set(cas.CASADI_QUANTITIES)
    rng = np.random.default_rng(0)
    opts = Q.SweepOptions(frame="body", gravity=gravity)
    for _ in range(3):
        state = Q.random_state(rng, robot.n, robot.n)
        for qty, f in functions.items():
            got = _row_major(f(*[state[a] for a in cas.CASADI_QUANTITIES[qty]]))
            ref = np.asarray(Q.evaluate(robot, qty, state, opts)).reshape(-1)
            np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-10 * max(1.0, np.abs(ref).max()))


def test_taped_c_is_christoffel_consistent():
    """Mdot = C + C^T, with Mdot by finite differences of the taped M."""
    robot = robots.serial_chain(3, seed=5)
    f = cas.tape(robot, ("M", "C"))
    rng = np.random.default_rng(1)
    q, qd, h = rng.uniform(0, 6, 3), rng.uniform(-2, 2, 3), 1e-6
    Mdot = (np.asarray(f["M"](q + h * qd)) - np.asarray(f["M"](q - h * qd))) / (2 * h)
    C = np.asarray(f["C"](q, qd)).T                  # taped transposed: row-major buffer
    np.testing.assert_allclose(C + C.T, Mdot, atol=1e-6)


def test_check_refuses_a_function_that_disagrees():
    robot = robots.serial_chain(3, seed=1)
    good = cas.tape(robot, ("M",))
    q = ca.SX.sym("q", 3)
    bad = {"M": ca.Function("bad", [q], [good["M"](q) * 1.001])}
    assert cas.check(robot, good)["max_rel"]["M"] < 1e-12
    with pytest.raises(BenchError, match="disagrees"):
        cas.check(robot, bad)


def test_op_counts_count_what_symgen_counts():
    x = ca.SX.sym("x", 2)
    f = ca.Function("f", [x], [ca.sin(x[0]) * x[1] + x[0] - x[1] / 3])
    ops = cas.op_counts(f)
    assert (ops["add"], ops["mul"], ops["trig"], ops["total"]) == (2, 2, 1, 5)


def test_prepare_and_compiled_c_agree_with_the_tape():
    prepared = cas.prepare(ARM4_URDF, read_manifest(ARM4), ("M", "C", "tau", "Gamma"))
    assert set(prepared["functions"]) == {"M", "C", "tau"}
    assert "Gamma" in prepared["skipped"]
    assert (prepared["dir"] / f"{prepared['name']}.c").is_file()
    errors = cas.check_compiled(prepared, "-O1")
    assert max(errors.values()) < 1e-12


def test_prepare_refuses_another_robot(tmp_path):
    other = tmp_path / "other.urdf"
    from symgen.urdf import urdf_string
    other.write_text(urdf_string(robots.serial_chain(4, seed=0)))
    with pytest.raises(BenchError, match="not the same robot"):
        cas.prepare(other, read_manifest(ARM4), ("M",))


@pytest.mark.timeout(1200)
def test_pinocchio_taped_rival_agrees_with_the_reference_and_compiles():
    """Pinocchio's crba and rnea taped on SX by casadi_kin_dyn (Pinocchio 2.6, its own venv): the
    check inside prepare compares them with symgen's reference and Pinocchio 4.1, then the C."""
    prepared = cas.prepare(ARM4_URDF, read_manifest(ARM4), ("M", "C", "tau", "g"), source="pinocchio")
    assert set(prepared["functions"]) == {"M", "C", "tau", "g"} and prepared["label"] == "casadi_pin"
    assert max(prepared["check"]["max_rel"].values()) < 1e-9
    assert max(cas.check_compiled(prepared, "-O1").values()) < 1e-12
    assert all(name.startswith("casadi_pin_") for name in (f.name() for f in prepared["functions"].values()))


def test_pinocchio_taped_rival_refuses_other_gravity(tmp_path):
    manifest = read_manifest(ARM4)
    manifest = {**manifest, "options": {**manifest["options"], "gravity": [0.0, 0.0, -1.0]}}
    with pytest.raises(BenchError, match="default gravity"):
        cas.prepare(ARM4_URDF, manifest, ("M",), source="pinocchio")


@pytest.mark.timeout(1200)
def test_bench_has_casadi_rows_ratios_and_op_counts():
    result = bench_package(ARM4, urdf=ARM4_URDF, quantities=("M", "C", "tau", "Gamma"), pin_cpp="off",
                           repeats=1, min_time=0.001, batch=10, casadi=True, processes=2)
    for qty in ("M", "C", "tau"):
        assert result["us"][qty]["casadi_c"] > 0 and result["us"][qty]["casadi_pin_c"] > 0
        assert result["us"][qty]["c_loop"] > 0
        assert "casadi_c/c_loop" in result["ratios"][qty] and "casadi_pin_c/c_loop" in result["ratios"][qty]
        for label in ("casadi", "casadi_pin"):
            ops = result[label]["ops"][qty]
            assert ops["symgen"]["total"] > 0 and ops["casadi"]["total"] > 0
    assert "casadi_c" not in result["us"]["Gamma"]
    assert "Gamma/casadi_c" in result["notes"]
    assert max(result["casadi"]["check"]["max_rel"].values()) < 1e-9
    from symgen.bench.report import format_report
    text = format_report(result)
    assert "CasADi's generated C" in text and "ops C: symgen" in text and "Pinocchio's algorithms taped" in text


def test_bench_without_urdf_says_why_casadi_is_missing():
    result = bench_package(ARM4, quantities=("M",), pin_cpp="off", repeats=1, min_time=0.001, batch=10, casadi=True)
    assert "casadi_c" not in result["us"]["M"]
    assert "needs --urdf" in result["notes"]["casadi"]
