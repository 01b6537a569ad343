"""Pinocchio's own generated code (CppADCodeGen) as a `symgen bench --cppadcg` rival (optional:
cmeel-cppadcodegen, the cppadcg extra): its libraries agree with Pinocchio's double-precision
functions, a disagreement or a bad input is one line of BenchError, and its rows reach the bench
result (a tiny robot, few iterations, no timing assertions). The tests that need the C++ harness
are slow: it is built once (minutes, cached in $SYMGEN_CACHE)."""
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pinocchio")

from symgen.bench import cppadcg as cg  # noqa: E402
from symgen.bench.harness import BenchError  # noqa: E402
from symgen.bench.measure import bench_package  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
ARM4 = ROOT / "generated" / "arm4"
ARM4_URDF = ROOT / "symgen" / "examples" / "arm4.urdf"
QUANTITIES = ("tau", "Minv", "qdd", "dtau", "dqdd")

needs_cppadcg = pytest.mark.skipif(cg.cppadcg_version() is None,
                                   reason="cmeel-cppadcodegen not installed (the optional cppadcg extra)")


def _one_line(exc):
    text = str(exc.value)
    assert text and "\n" not in text, text
    return text


def test_missing_urdf_is_one_line(tmp_path):
    with pytest.raises(BenchError) as exc:
        cg.pinocchio_cppadcg(tmp_path / "nope.urdf", ["tau"])
    assert "no such URDF" in _one_line(exc) or "not installed" in _one_line(exc)


@needs_cppadcg
def test_unreadable_urdf_is_one_line(tmp_path):
    bad = tmp_path / "bad.urdf"
    bad.write_text("<robot name='x'><link name='a'/><joint name='j' type='revolute'>\n</robot>")
    with pytest.raises(BenchError) as exc:
        cg.pinocchio_cppadcg(bad, ["tau"], build=False)
    assert _one_line(exc)


def test_without_cppadcodegen_says_how_to_install(monkeypatch):
    from importlib import metadata

    real = metadata.version

    def version(name):
        if name == "cmeel-cppadcodegen":
            raise metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(metadata, "version", version)
    assert cg.cppadcg_version() is None
    with pytest.raises(BenchError) as exc:
        cg.pinocchio_cppadcg(ARM4_URDF, ["tau"])
    assert "pip install cmeel-cppadcodegen" in _one_line(exc)


def test_quantities_without_a_codegen_class_are_skipped_not_built():
    if cg.cppadcg_version() is None:
        pytest.skip("cmeel-cppadcodegen not installed")
    out = cg.pinocchio_cppadcg(ARM4_URDF, ["M", "Gamma"], build=False)
    assert out["timings"] == {} and set(out["skipped"]) == {"M", "Gamma"}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The harness, arm4's model and its five libraries (built once; cached in $SYMGEN_CACHE)."""
    import pinocchio as pin

    exe = cg.harness_binary()
    model = pin.buildModelFromUrdf(str(ARM4_URDF))
    archive = tmp_path_factory.mktemp("cppadcg") / "model.txt"
    model.saveToText(str(archive))
    folders = cg.libraries(exe, model, archive, list(cg.CPPADCG_FUNCTIONS.values()), flags="-O1")
    return exe, model, archive, folders


@needs_cppadcg
@pytest.mark.slow
def test_libraries_agree_with_pinocchio(built):
    exe, model, archive, folders = built
    errors = cg.check(exe, model, archive, folders, trials=5, seed=3)
    assert set(errors) == set(cg.CPPADCG_FUNCTIONS.values())
    assert max(errors.values()) < 1e-12, errors
    for f, folder in folders.items():
        assert cg.generated_size(folder, f) > 0          # CppADCodeGen's C is kept beside the library


@needs_cppadcg
@pytest.mark.slow
def test_check_refuses_a_library_that_disagrees(built, monkeypatch):
    exe, model, archive, folders = built
    real = cg.reference
    monkeypatch.setattr(cg, "reference", lambda pin, m, d, f, *args: real(pin, m, d, f, *args) * (1 + 1e-6))
    with pytest.raises(BenchError, match="disagrees with Pinocchio") as exc:
        cg.check(exe, model, archive, {"rnea": folders["rnea"]})
    _one_line(exc)


@needs_cppadcg
@pytest.mark.slow
def test_bench_has_cppadcg_rows_and_ratios(built):
    result = bench_package(ARM4, urdf=ARM4_URDF, quantities=QUANTITIES + ("M",), pin_cpp="off", repeats=1,
                           min_time=0.001, batch=10, cppadcg=True)
    for qty in QUANTITIES:
        assert result["us"][qty]["cppadcg"] > 0 and result["us"][qty]["cppadcg_eval"] > 0
        assert "cppadcg/c_loop" in result["ratios"][qty]
        assert result["cppadcg"]["check"][qty] < 1e-9
    assert "cppadcg" not in result["us"]["M"]
    assert "dtau/cppadcg" in result["notes"]                # what it computes beyond ours
    from symgen.bench.report import format_report
    text = format_report(result)
    assert "Pinocchio's generated code (CppADCodeGen)" in text and "CppADCodeGen 2" in text


def test_bench_without_urdf_says_why_cppadcg_is_missing():
    result = bench_package(ARM4, quantities=("tau",), pin_cpp="off", repeats=1, min_time=0.001, batch=10,
                           cppadcg=True)
    assert "cppadcg" not in result["us"]["tau"]
    assert "needs --urdf" in result["notes"]["cppadcg"]
