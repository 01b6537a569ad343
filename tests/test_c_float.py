"""``symgen build --scalar float``: the whole C in single precision. Checked against the double
NumPy module (the oracle) at the float tolerance for every function the build emits, through
``symgen verify``, on a Cortex-M4F (single-precision FPU: no software double helper ``__aeabi_d*``
may be referenced) and from a C consumer that knows the header only. A double package's C is
printed as before the option (``tests/test_codegen.py``'s golden showcase covers it)."""
from __future__ import annotations

import json
import shutil
import subprocess

import numpy as np
import pytest
from click.testing import CliRunner

import c_programs as cp
import support
from symgen import load_robot, quantities as Q
from symgen.cli import main
from symgen.codegen.build import BuildOptions, build, import_package
from symgen.codegen.scalar import tolerance
from symgen.verify import TOL, verify_package

M4F = "-mcpu=cortex-m4 -mfpu=fpv4-sp-d16 -mfloat-abi=hard -mthumb"
#: what gcc must not see in a float package's C: an operation promoted to double, or a double
#: value narrowed to float
STRICT = "-std=c99 -O2 -Wall -Wextra -pedantic -Wdouble-promotion -Wfloat-conversion -Werror"


def _float_package(tmp_path_factory, label, source, floating_base, **options):
    robot = load_robot(source, floating_base=floating_base)
    folder = build(robot, tmp_path_factory.mktemp(f"float-{label}"), name=label,
                   opts=BuildOptions(scalar="float", **options)).path
    return folder, import_package(folder), robot


@pytest.fixture(scope="module")
def arm4_ff(tmp_path_factory):
    """(folder, package, robot): arm4 on a free-flyer (its quaternion's integrate and difference),
    every default function, built in float and compiled once for the module."""
    return _float_package(tmp_path_factory, "arm4_ff", cp.EXAMPLE, True)


def _worst_against_numpy(folder, pkg, seed: int, count: int = 30) -> dict:
    """{function: worst error / its float tolerance} of the float C against the double NumPy
    module over ``count`` random states, one by one and as one batch."""
    rng = np.random.default_rng(seed)
    manifest = json.loads((folder / "manifest.json").read_text())
    present = [Q.BY_FUNCTION[f] for f in manifest["functions"] if f in Q.BY_FUNCTION]
    states = [Q.random_state(rng, pkg.nq, pkg.nv, layout=pkg.joint_models) for _ in range(count)]
    masses = [pkg.numpy.mass_matrix(s["q"]) for s in states]
    worst: dict = {}
    for state, M in zip(states, masses):
        for x in present:
            error = support.rel_error(Q.flat(Q.call(pkg.c, x.key, state)), Q.flat(Q.call(pkg.numpy, x.key, state)))
            worst[x.function] = max(worst.get(x.function, 0.0), error / tolerance(x, M, TOL))
    batch = {a: np.stack([s[a] for s in states]) for a in states[0]}
    for x in present:
        got, want = (Q.flat(Q.call(mod, x.key, batch), lead=1) for mod in (pkg.c, pkg.numpy))
        worst[f"{x.function} (batch)"] = max(support.rel_error(g, w) / tolerance(x, M, TOL)
                                             for g, w, M in zip(got, want, masses))
    return worst


def test_float_package_says_float(arm4_ff):
    folder, pkg, _ = arm4_ff
    manifest = json.loads((folder / "manifest.json").read_text())
    assert pkg.scalar == pkg.numpy.scalar == pkg.c.scalar == manifest["scalar"] == "float"
    header = (folder / "arm4_ff.h").read_text()
    assert "typedef float ARM4_FF_real;" in header and "#define ARM4_FF_LANES 1" in header
    assert " double" not in (folder / "arm4_ff.c").read_text(), "a double in a float package's C"


def test_float_c_matches_double_numpy_in_every_function(arm4_ff):
    folder, pkg, _ = arm4_ff
    seed = 41
    worst = _worst_against_numpy(folder, pkg, seed)
    bad = {f: r for f, r in worst.items() if not r <= 1.0}
    assert not bad, f"float C against NumPy (seed {seed}): error / float tolerance {bad}"
    assert pkg.c.mass_matrix(np.zeros((2, 3, pkg.nq)) + pkg.neutral()).shape == (2, 3, pkg.nv, pkg.nv)


def test_float_configuration_space_matches_numpy(arm4_ff):
    _, pkg, _ = arm4_ff
    seed = 7
    rng = np.random.default_rng(seed)
    for _ in range(20):
        q0, q1 = (Q.random_state(rng, pkg.nq, pkg.nv, ("q",), layout=pkg.joint_models)["q"] for _ in range(2))
        v = rng.uniform(-2, 2, pkg.nv)
        for what, got, want in (("integrate", pkg.c.integrate(q0, v), pkg.numpy.integrate(q0, v)),
                                ("difference", pkg.c.difference(q0, q1), pkg.numpy.difference(q0, q1)),
                                ("normalize", pkg.c.normalize(2 * q0), pkg.numpy.normalize(2 * q0))):
            assert got.dtype == np.float64
            assert support.rel_error(got, want) <= 1e-5, f"{what} (seed {seed}): {support.rel_error(got, want):.2e}"


def test_out_is_float64_and_written(arm4_ff):
    _, pkg, _ = arm4_ff
    q = pkg.neutral()
    out = np.empty((pkg.nv, pkg.nv))
    assert pkg.c.mass_matrix(q, out=out) is out
    assert support.rel_error(out, pkg.numpy.mass_matrix(q)) <= 1e-6
    with pytest.raises(ValueError, match="float64"):
        pkg.c.mass_matrix(q, out=np.empty((pkg.nv, pkg.nv), dtype=np.float32))


def test_verify_passes_on_a_float_package(arm4_ff):
    folder, _, _ = arm4_ff
    report, ok = verify_package(folder, trials=3, seed=3, urdf=cp.EXAMPLE)
    assert ok, report
    assert "scalar float" in report


def test_float_c_has_no_double_operation_for_gcc(arm4_ff, tmp_path):
    folder, _, _ = arm4_ff
    cp.compile_program("gcc", [folder / "arm4_ff.c"], f"{STRICT} -c", tmp_path / "arm4_ff.o", includes=[folder], libs="")


def _require_arm():
    for tool in ("arm-none-eabi-gcc", "arm-none-eabi-nm"):
        support.require(tool, shutil.which(tool) is not None, "apt-get install gcc-arm-none-eabi "
                        "libnewlib-arm-none-eabi (.ci/run does)")


def _double_helpers(obj) -> list:
    """The software double helpers (``__aeabi_d*``, and the float <-> double conversions) an object references."""
    out = subprocess.run(["arm-none-eabi-nm", "-u", str(obj)], capture_output=True, text=True, timeout=120, check=True)
    return sorted(s for s in out.stdout.split() if s.startswith(("__aeabi_d", "__aeabi_f2d", "__aeabi_d2f")))


def test_cortex_m4f_float_package_calls_no_software_double(arm4_ff, tmp_path):
    """arm-none-eabi-gcc for a Cortex-M4F (fpv4-sp-d16: single precision only): the float
    package references no ``__aeabi_d*``; the double one does (the check can fail)."""
    _require_arm()
    folder, _, _ = arm4_ff
    obj = cp.compile_program("arm-none-eabi-gcc", [folder / "arm4_ff.c"], f"{M4F} -O2 -std=c99 -c",
                             tmp_path / "arm4_ff.o", includes=[folder], libs="")
    assert _double_helpers(obj) == [], f"arm4_ff.o (float, Cortex-M4F) calls software double: {_double_helpers(obj)}"
    (tmp_path / "main.c").write_text('#include "arm4_ff.h"\nint main(void) { ARM4_FF_real q[ARM4_FF_NQ] = {0}, '
                                     'M[ARM4_FF_MASS_MATRIX_M_SIZE]; arm4_ff_neutral(q); arm4_ff_mass_matrix(q, M); '
                                     'return M[0] > ARM4_FF_R(0.0); }\n')
    elf = cp.compile_program("arm-none-eabi-gcc", [tmp_path / "main.c", folder / "arm4_ff.c"],
                             f"{M4F} -O2 -std=c99 --specs=nosys.specs", tmp_path / "arm4_ff.elf", includes=[folder])
    assert _double_helpers(elf) == []


def test_cortex_m4f_double_package_does_call_software_double(c_package, tmp_path):
    _require_arm()
    folder, _, _ = c_package("arm4")
    obj = cp.compile_program("arm-none-eabi-gcc", [folder / "arm4.c"], f"{M4F} -O2 -std=c99 -c", tmp_path / "arm4.o",
                             includes=[folder], libs="")
    assert "__aeabi_dmul" in _double_helpers(obj)


CONSUMER = r"""
#include <stdio.h>
#include "arm4_ff.h"

/* the header's scalar, as a controller sizes and fills its buffers (no manifest) */
_Static_assert(sizeof(ARM4_FF_real) == sizeof(float), "a float package's real is float");
_Static_assert(ARM4_FF_SCALAR_FLOAT == 1 && ARM4_FF_LANES == 1, "float: one state at a time");

int main(void)
{
    ARM4_FF_real q[ARM4_FF_NQ], v[ARM4_FF_NV], M[ARM4_FF_MASS_MATRIX_M_SIZE];
    arm4_ff_neutral(q);
    for (int k = 0; k < ARM4_FF_NV; ++k)
        v[k] = ARM4_FF_R(0.25) * (ARM4_FF_real)(k + 1);
    ARM4_FF_real q1[ARM4_FF_NQ];
    arm4_ff_integrate(q, v, q1);
    arm4_ff_mass_matrix(q1, M);
    for (int k = 0; k < ARM4_FF_NQ; ++k)
        printf("%.9g\n", (double)q1[k]);
    for (int k = 0; k < ARM4_FF_MASS_MATRIX_M_SIZE; ++k)
        printf("%.9g\n", (double)M[k]);
    return 0;
}
"""


def test_a_consumer_of_the_header_alone_gets_floats(arm4_ff, tmp_path):
    """A C program that includes only the header (compiled on its own, strict, then linked with
    arm4_ff.c) computes in float what NumPy computes in double."""
    folder, pkg, _ = arm4_ff
    (tmp_path / "main.c").write_text(CONSUMER, encoding="utf-8")
    main_o = cp.compile_program("gcc", [tmp_path / "main.c"], f"{STRICT.replace('-std=c99', '-std=c11')} -c",
                                tmp_path / "main.o", includes=[folder], libs="")
    exe = cp.compile_program("gcc", [main_o, folder / "arm4_ff.c"], "-std=c99 -O2", tmp_path / "consumer", includes=[folder])
    values = np.array([float(x) for x in subprocess.run([str(exe)], capture_output=True, text=True, timeout=60,
                                                        check=True).stdout.split()])
    v = 0.25 * np.arange(1, pkg.nv + 1)
    q1 = pkg.numpy.integrate(pkg.neutral(), v)
    assert support.rel_error(values[:pkg.nq], q1) <= 1e-5
    assert support.rel_error(values[pkg.nq:], pkg.numpy.mass_matrix(q1).ravel()) <= 1e-5


@pytest.mark.parametrize("args, says", [
    (["--scalar", "half"], "--scalar: unknown 'half'; expected double or float"),
    (["--scalar", "float", "--target", "numpy,c,jax"], "--scalar float: the jax target"),
])
def test_bad_scalar_is_a_one_line_error_naming_the_option(tmp_path, args, says):
    run = CliRunner().invoke(main, ["build", str(cp.EXAMPLE), "--out", str(tmp_path), "--no-compile", "--quiet", *args])
    assert run.exit_code != 0
    lines = run.output.strip().splitlines()
    assert len(lines) == 1 and says in lines[0], run.output
    assert not (tmp_path / "arm4").exists()


@pytest.mark.slow
@pytest.mark.parametrize("label", ["panda", "solo12"])
def test_panda_and_solo12_float_packages_pass_verify_and_call_no_double_on_m4f(tmp_path_factory, tmp_path, label):
    """Every default function (about 20 s of build each), verify at the float tolerance, then the
    whole NAME.c for a Cortex-M4F (about 30 s of arm-none-eabi-gcc -O2)."""
    source, floating, _ = cp.PACKAGES[label]
    folder, _, _ = _float_package(tmp_path_factory, label, support.erd_path(source[4:]), floating, jobs=2)
    report, ok = verify_package(folder, trials=5, seed=11, urdf=support.erd_path(source[4:]))
    assert ok, report
    _require_arm()
    obj = cp.compile_program("arm-none-eabi-gcc", [folder / f"{label}.c"], f"{M4F} -O2 -std=c99 -c",
                             tmp_path / f"{label}.o", includes=[folder], libs="")
    assert _double_helpers(obj) == [], f"{label}.o (float, Cortex-M4F) calls software double"
