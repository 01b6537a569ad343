"""NAME.c with the compilers a controller is built with: gcc -std=c99 -pedantic, clang (C99), g++ and
clang++ (as C++: NAME_RESTRICT is __restrict__ there), each with -Wall -Wextra -Werror, with and
without lanes (-march=native, NAME_NO_LANES); compiled as C++ and linked with a C driver, its results
equal NumPy's; and a unity build, two packages' .c files in one translation unit (their static helpers
are prefixed with the package's name), compiles as C and C++ and computes both robots right. The
compilers come from the project's CI script (.ci/run installs clang when missing)."""
from __future__ import annotations

import json
import shutil

import pytest

import c_programs as cp
import support

WARN = "-Wall -Wextra -Werror"
COMPILERS = {"gcc": ("gcc", "-std=c99 -pedantic"), "clang": ("clang", "-std=c99"), "g++": ("g++", "-x c++"),
             "clang++": ("clang++", "-x c++")}


def _compiler(which):
    cc, flags = COMPILERS[which]
    support.require(which, shutil.which(cc) is not None, "apt-get install clang g++ (.ci/run does)")
    return cc, flags


#: in CI clang (C99) alone: gcc's -pedantic C99 compiles the unity build below, g++ and clang++ the C++ ones
WHICH = [pytest.param(w, marks=pytest.mark.slow) if w != "clang" else w for w in sorted(COMPILERS)]


@pytest.mark.parametrize("label", ["arm4_ff", pytest.param("arm4_contact", marks=pytest.mark.slow),
                                   pytest.param("four_bar", marks=pytest.mark.slow)])
@pytest.mark.parametrize("which", WHICH)
def test_every_compiler_compiles_it_without_a_warning(c_package, tmp_path, label, which):
    folder, _, _ = c_package(label)
    cc, flags = _compiler(which)
    for lanes in ("-march=native", f"-D{label.upper()}_NO_LANES"):
        cp.compile_program(cc, [folder / f"{label}.c"], f"{flags} -O1 {lanes} {WARN} -c", tmp_path / "unit.o",
                           includes=[folder], libs="")


def _check(found, want, what):
    errors = cp.worst(found, want)
    bad = {k: e for k, e in errors.items() if not e <= 1e-12}
    assert not bad, f"{what}: relative error against NumPy per function: {bad}"


@pytest.mark.parametrize("which", ["g++", "clang++"])
def test_compiled_as_cxx_it_computes_what_numpy_does(c_package, tmp_path, which):
    folder, pkg, robot = c_package("arm4_ff")
    cc, flags = _compiler(which)
    manifest = json.loads((folder / "manifest.json").read_text())
    seed, states = cp.states_of(pkg, robot, manifest, "arm4_ff")
    (tmp_path / "driver.c").write_text(cp.driver(manifest, states, True), encoding="utf-8")
    obj = cp.compile_program(cc, [folder / "arm4_ff.c"], f"{flags} -O2 {WARN} -c", tmp_path / "arm4_ff.o",
                             includes=[folder], libs="")
    exe = cp.compile_program("gcc", [tmp_path / "driver.c", obj], "-O1 -std=c99", tmp_path / "driver", includes=[folder])
    _check(cp.run_json([exe]), cp.expected(pkg, manifest, states, True), f"arm4_ff.c as C++ by {which} (seed {seed})")


@pytest.mark.parametrize("which", ["gcc", pytest.param("clang++", marks=pytest.mark.slow)])
def test_a_unity_build_of_two_packages_compiles_and_computes_both(c_package, tmp_path, which):
    """One translation unit with two packages' .c files (and a driver for each): no clash between
    their static helpers, lanes types or macros, and each package's results are its own."""
    cc, flags = _compiler(which)
    parts, drivers, wants = [], [], []
    for label in ("arm4", "arm4_ff"):
        folder, pkg, robot = c_package(label)
        manifest = json.loads((folder / "manifest.json").read_text())
        lie = cp.has_lie(folder, label)
        seed, states = cp.states_of(pkg, robot, manifest, label, count=3)
        drivers.append(cp.driver(manifest, states, lie, tag=label))
        parts.append(f'#include "{folder / label}.c"')
        wants.append((label, cp.expected(pkg, manifest, states, lie), seed, folder))
    unity = "\n".join(parts + drivers + ["int main(int argc, char **argv) {", "    (void)argv;",
                                         "    return argc > 1 ? main_arm4_ff() : main_arm4();", "}", ""])
    (tmp_path / "unity.c").write_text(unity, encoding="utf-8")
    exe = cp.compile_program(cc, [tmp_path / "unity.c"], f"{flags} -O1 {WARN}",
                             tmp_path / "unity", includes=[w[3] for w in wants])
    for k, (label, want, seed, _) in enumerate(wants):
        _check(cp.run_json([exe] + ["ff"] * k), want, f"{label} in a unity build by {which} (seed {seed})")
