"""Every package's CMakeLists.txt and pkg-config file, as a C++ controller project uses them: the
package configured, built and installed by CMake, then a small C++ consumer (the driver of
:mod:`c_programs`, compiled as C++ against the installed header) built with ``find_package`` on the
static and on the shared library, with ``add_subdirectory`` on the package's folder, and with
``pkg-config``; each consumer's results equal the package's NumPy module. cmake and pkg-config come
from the project's CI script (.ci/run installs cmake when missing)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

import c_programs as cp
import support

LABEL = "arm4_ff"


def _run(cmd, cwd=None, env=None):
    done = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, cwd=cwd, env=env, timeout=600)
    assert done.returncode == 0, f"{' '.join(map(str, cmd))}: exit {done.returncode}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    return done.stdout


def _cmake_project(work, body: str, tmp_path, name: str, *cmake_args):
    """Configure and build the consumer project ``name`` (its CMakeLists ``body``, the driver in
    ``work``/main.cpp as its source), return its executable."""
    src = tmp_path / name
    src.mkdir()
    (src / "CMakeLists.txt").write_text("cmake_minimum_required(VERSION 3.18)\nproject(consumer LANGUAGES CXX)\n"
                                        + body, encoding="utf-8")
    shutil.copy(work / "main.cpp", src / "main.cpp")
    _run(["cmake", "-S", src, "-B", src / "build", "-DCMAKE_BUILD_TYPE=Release", *cmake_args])
    _run(["cmake", "--build", src / "build"])
    return src / "build" / "consumer"


@pytest.fixture(scope="module")
def installed(c_package, tmp_path_factory):
    """(work folder with the consumer's source main.cpp -- the driver, as C++ --, package folder,
    install prefix, expected results, seed): the package built and installed by its own
    CMakeLists.txt."""
    support.require("cmake", shutil.which("cmake") is not None, "apt-get install cmake (.ci/run does)")
    folder, pkg, robot = c_package(LABEL)
    work = tmp_path_factory.mktemp("cmake")
    manifest = json.loads((folder / "manifest.json").read_text())
    lie = cp.has_lie(folder, LABEL)
    seed, states = cp.states_of(pkg, robot, manifest, LABEL, count=3)
    (work / "main.cpp").write_text(cp.driver(manifest, states, lie, macros=True), encoding="utf-8")
    prefix = work / "prefix"
    _run(["cmake", "-S", folder, "-B", work / "build", "-DCMAKE_BUILD_TYPE=Release"])
    _run(["cmake", "--build", work / "build"])
    _run(["cmake", "--install", work / "build", "--prefix", prefix])
    want = cp.expected(pkg, manifest, states, lie)
    for what, names in (("joint_names", pkg.joint_names), ("link_names", pkg.link_names)):
        want[what] = [list(names)]
    return work, folder, prefix, want, seed


def _check(exe, want, what, seed):
    found = cp.run_json([exe])
    found = {k: ([v] if k.endswith("_names") else v) for k, v in found.items() if k in want}
    bad = {k: e for k, e in cp.worst(found, {k: v for k, v in want.items() if not k.endswith("_names")}).items()
           if not e <= 1e-12}
    assert not bad, f"{what} (seed {seed}): relative error against NumPy per function: {bad}"
    for k in ("joint_names", "link_names"):
        assert found[k] == want[k], f"{what}: {k} {found[k]} against {want[k]}"


def test_the_installed_package_has_its_libraries_header_cmake_and_pkg_config_files(installed):
    _, _, prefix, _, _ = installed
    lib = next(p for p in (prefix / "lib", prefix / "lib64") if p.is_dir())
    for path in (lib / f"lib{LABEL}.a", lib / f"lib{LABEL}.so", prefix / "include" / f"{LABEL}.h",
                 lib / "cmake" / LABEL / f"{LABEL}Config.cmake", lib / "cmake" / LABEL / f"{LABEL}ConfigVersion.cmake",
                 lib / "pkgconfig" / f"{LABEL}.pc"):
        assert path.is_file(), f"{path} is not installed"


@pytest.mark.parametrize("target", [LABEL, f"{LABEL}_shared"])
def test_a_cxx_consumer_finds_the_installed_package(installed, tmp_path, target):
    work, _, prefix, want, seed = installed
    exe = _cmake_project(work, f"find_package({LABEL} REQUIRED CONFIG)\nadd_executable(consumer main.cpp)\n"
                         f"target_link_libraries(consumer PRIVATE {LABEL}::{target})\n", tmp_path, "found",
                         f"-DCMAKE_PREFIX_PATH={prefix}")
    _check(exe, want, f"find_package({LABEL}) linking {LABEL}::{target}", seed)
    if target.endswith("_shared"):
        assert "not found" not in _run(["ldd", exe]), "the shared library is not on the consumer's run path"


def test_a_cxx_consumer_adds_the_package_folder_as_a_subdirectory(installed, tmp_path):
    work, pkg_folder, _, want, seed = installed
    exe = _cmake_project(work, f"add_subdirectory({pkg_folder.as_posix()} {LABEL}_build)\n"
                         f"add_executable(consumer main.cpp)\ntarget_link_libraries(consumer PRIVATE {LABEL}::{LABEL})\n",
                         tmp_path, "sub")
    _check(exe, want, f"add_subdirectory({LABEL})", seed)


def test_a_consumer_built_with_pkg_config_flags(installed, tmp_path):
    work, _, prefix, want, seed = installed
    support.require("pkg-config", shutil.which("pkg-config") is not None, "apt-get install pkg-config")
    lib = next(p for p in (prefix / "lib", prefix / "lib64") if p.is_dir())
    env = {**os.environ, "PKG_CONFIG_PATH": str(lib / "pkgconfig")}
    flags = _run(["pkg-config", "--cflags", "--libs", "--static", LABEL], env=env).split()
    assert f"-l{LABEL}" in flags and "-lm" in flags, flags
    exe = tmp_path / "consumer"
    _run(["g++", "-O1", "-std=c++11", work / "main.cpp", "-o", exe, *flags, f"-Wl,-rpath,{lib}"])
    _check(exe, want, f"g++ with pkg-config --cflags --libs {LABEL}", seed)
