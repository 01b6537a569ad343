"""The call path from Python into the generated C: the package's functions are the C binding
itself, one state is computed without a Python layer, ``out=`` writes in place, ``threads=``
splits a batch without changing a bit, and every error still names the argument. No timing here
(``python -m symgen.bench.callpath`` measures)."""
from __future__ import annotations

import ctypes
import inspect
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import types
from pathlib import Path

import numpy as np
import pytest

import support
from symgen.codegen import compile as package_mod
from symgen.codegen.build import BuildOptions, build, import_package
from symgen.urdf import load_urdf

ROOT = Path(__file__).resolve().parents[1]
ARM4 = ROOT / "symgen" / "examples" / "arm4.urdf"


@pytest.fixture(scope="module")
def arm4(tmp_path_factory):
    robot = load_urdf(ARM4)
    out = tmp_path_factory.mktemp("callpath")
    pkg = import_package(build(robot, out, opts=BuildOptions(copt="-O0")).path)
    assert pkg.backend == "c"
    return robot, pkg


@pytest.fixture(scope="module")
def arm4_parametric(tmp_path_factory):
    robot = load_urdf(ARM4)
    out = tmp_path_factory.mktemp("callpath_param")
    opts = BuildOptions(copt="-O0", parametric=True, quantities=("tau", "Y", "dtau"))
    return robot, import_package(build(robot, out, opts=opts).path)


def _manifest(pkg):
    return json.loads((Path(pkg.__file__).parent / "manifest.json").read_text())["functions"]


def _inputs(spec, n, rng, lead=()):
    return [rng.uniform(-2, 2, lead + (n,)) for p in spec["inputs"] if p != "params"]


def _as_tuple(result):
    return result if isinstance(result, tuple) else (result,)


def test_the_package_functions_are_the_c_binding_itself(arm4):
    _, pkg = arm4
    for name in _manifest(pkg):
        f = getattr(pkg, name)
        assert type(f) is types.BuiltinFunctionType and f is getattr(pkg.c, name), name
        assert f.__name__ == name
        params = inspect.signature(f).parameters
        assert list(params)[-2:] == ["out", "threads"], (name, list(params))
        assert params["out"].kind is inspect.Parameter.KEYWORD_ONLY
        assert f.__doc__.strip(), name


def test_the_binding_reads_plain_float64_arrays_directly(arm4):
    """_bind checked NumPy's array layout against a known array: one state of plain float64
    arrays takes the direct path (no buffer protocol) with this NumPy."""
    _, pkg = arm4
    assert pkg.c._ext.fast_arrays is True


def test_fast_and_general_paths_give_the_same_bits_for_every_function(arm4):
    """One float64 state (C only) against the same state as lists (the general path, then the
    raw batch of one), big-endian, strided, offset, read-only, memoryview and keyword copies,
    and the NumPy backend."""
    robot, pkg = arm4
    rng = np.random.default_rng(41)
    for name, spec in _manifest(pkg).items():
        f = getattr(pkg, name)
        args = _inputs(spec, robot.n, rng)
        fast = _as_tuple(f(*args))
        readonly = [a.copy() for a in args]
        for a in readonly:
            a.flags.writeable = False
        for other in ([a.tolist() for a in args], [a.astype(">f8") for a in args],
                      [np.repeat(a, 2)[::2] for a in args],                  # strided: converted
                      [np.concatenate([[7.0], a])[1:] for a in args],        # a view at an offset
                      readonly, [memoryview(a) for a in args]):
            general = _as_tuple(f(*other))
            assert len(general) == len(fast)
            for x, y in zip(fast, general):
                np.testing.assert_array_equal(x, y, err_msg=f"{name} (seed 41)")
        keywords = dict(zip([p for p in spec["inputs"] if p != "params"], args))
        for x, y in zip(fast, _as_tuple(f(**keywords))):
            np.testing.assert_array_equal(x, y, err_msg=f"{name} keyword inputs (seed 41)")
        for x, y, (oname, shape) in zip(fast, _as_tuple(getattr(pkg.numpy, name)(*args)), spec["outputs"]):
            assert x.shape == tuple(shape) and x.dtype == np.float64 and x.flags.c_contiguous
            support.assert_agree(x, y, f"{name}/{oname} C against NumPy (seed 41)")


def test_out_is_written_in_place_and_returned(arm4):
    robot, pkg = arm4
    rng = np.random.default_rng(42)
    for name, spec in _manifest(pkg).items():
        f = getattr(pkg, name)
        for lead in ((), (3,), (2, 3)):
            args = _inputs(spec, robot.n, rng, lead)
            expected = _as_tuple(f(*args))
            bufs = tuple(np.full(lead + tuple(shape), np.nan) for _, shape in spec["outputs"])
            out = bufs[0] if len(bufs) == 1 else bufs
            got = f(*args, out=out)
            assert got is out, f"{name} lead={lead}: out= must be what is returned"
            for b, e in zip(bufs, expected):
                np.testing.assert_array_equal(b, e, err_msg=f"{name} out= lead={lead} (seed 42)")
            # again over the previous values: everything is rewritten, structural zeros included
            args2 = _inputs(spec, robot.n, rng, lead)
            f(*args2, out=out)
            for b, e in zip(bufs, _as_tuple(f(*args2))):
                np.testing.assert_array_equal(b, e, err_msg=f"{name} out= reused lead={lead} (seed 42)")


def test_one_state_with_out_allocates_no_array(arm4):
    """The controller-loop case: with out=, a call makes no new ndarray (sys.getallocatedblocks
    does not grow over many calls)."""
    robot, pkg = arm4
    q, qd = np.full(robot.n, 0.3), np.full(robot.n, -0.2)
    out = np.empty((robot.n, robot.n))
    pkg.coriolis_matrix(q, qd, out=out)
    before = sys.getallocatedblocks()
    for _ in range(2000):
        pkg.coriolis_matrix(q, qd, out=out)
    assert sys.getallocatedblocks() - before < 50


@pytest.mark.parametrize("case, message", [
    ("shape", r"out must be a float64 ndarray of shape \(4, 4\), got float64 of shape \(4, 5\)"),
    ("dtype", r"out must be a float64 ndarray of shape \(4, 4\), got float32 of shape \(4, 4\)"),
    ("list", r"out must be a float64 ndarray of shape \(4, 4\), got list"),
    ("memoryview", r"out must be a float64 ndarray of shape \(4, 4\), got memoryview"),
    ("transposed", "out must be C-contiguous and writable"),
    ("readonly", "out must be C-contiguous and writable"),
    ("overlap", "out must not overlap an input or another output"),
    ("batch", r"out must be a float64 ndarray of shape \(3, 4, 4\), got float64 of shape \(4, 4\)"),
])
def test_a_bad_out_is_a_one_line_value_error_naming_it(arm4, case, message):
    _, pkg = arm4
    q, qd = np.zeros(4), np.ones(4)
    out = np.zeros((4, 4))
    if case == "shape":
        out = np.zeros((4, 5))
    elif case == "dtype":
        out = np.zeros((4, 4), np.float32)
    elif case == "list":
        out = [[0.0] * 4] * 4
    elif case == "memoryview":
        out = memoryview(out)
    elif case == "transposed":
        out = np.zeros((4, 4)).T[:, ::-1]
    elif case == "readonly":
        out.flags.writeable = False
    elif case == "overlap":
        big = np.zeros(20)
        q, out = big[:4], big[:16].reshape(4, 4)
    elif case == "batch":
        q, qd = np.zeros((3, 4)), np.ones((3, 4))
    with pytest.raises(ValueError, match=message) as info:
        pkg.coriolis_matrix(q, qd, out=out)
    assert "\n" not in str(info.value)


def test_a_function_of_several_outputs_takes_a_tuple_out(arm4):
    _, pkg = arm4
    q, qd, qdd = np.zeros(4), np.ones(4), np.ones(4)
    A, B = np.empty((4, 4)), np.empty((4, 4))
    f = pkg.inverse_dynamics_derivatives
    with pytest.raises(ValueError, match=r"out must be a tuple of 2 arrays \(dtau_dq, dtau_dqd\), got ndarray"):
        f(q, qd, qdd, out=A)
    with pytest.raises(ValueError, match=r"out must be a tuple of 2 arrays \(dtau_dq, dtau_dqd\), got tuple of 3"):
        f(q, qd, qdd, out=(A, B, B))
    with pytest.raises(ValueError, match=r"out\[1\] \(dtau_dqd\) must be a float64 ndarray of shape \(4, 4\)"):
        f(q, qd, qdd, out=(A, np.empty(4)))
    with pytest.raises(ValueError, match=r"out\[1\] \(dtau_dqd\) must not overlap"):
        f(q, qd, qdd, out=(A, A))
    with pytest.raises(ValueError, match="out must be a tuple"):
        f(q, qd, qdd, out=[A, B])


def test_threads_change_no_bit_of_a_batch(arm4):
    """A batch big enough to be split (several chunks of PARALLEL_MIN states) gives the same
    bits serially, on 2 and 3 threads and by default; one state at a time, the same numbers to
    1e-13 relative (the batch's sin and cos are its own, on the vector: tests/test_batch_lanes.py)."""
    robot, pkg = arm4
    rng = np.random.default_rng(43)
    count = 64 * 7 + 5
    for name, spec in _manifest(pkg).items():
        f = getattr(pkg, name)
        args = _inputs(spec, robot.n, rng, (count,))
        serial = _as_tuple(f(*args, threads=1))
        for threads in (None, 2, 3, 64):
            for x, y in zip(serial, _as_tuple(f(*args, threads=threads))):
                np.testing.assert_array_equal(x, y, err_msg=f"{name} threads={threads} (seed 43)")
        for i in (0, 64, 65, count - 1):
            for x, y in zip(serial, _as_tuple(f(*(a[i] for a in args)))):
                np.testing.assert_allclose(x[i], y, rtol=0, atol=1e-13 * max(1.0, np.max(np.abs(y))),
                                           err_msg=f"{name} state {i} (seed 43)")


@pytest.mark.parametrize("threads", [0, -1, 4097, 1.5, "2", True])
def test_a_bad_thread_count_is_a_value_error(arm4, threads):
    _, pkg = arm4
    with pytest.raises(ValueError, match="threads must be None or an int from 1 to 4096"):
        pkg.mass_matrix(np.zeros((2, 4)), threads=threads)
    with pytest.raises(ValueError, match="threads must be None or an int from 1 to 4096"):
        pkg.mass_matrix(np.zeros(4), threads=threads)


def test_errors_still_name_the_argument_and_the_function(arm4):
    _, pkg = arm4
    with pytest.raises(ValueError, match=r"q must have shape \(4,\) or \(batch, 4\), got \(5,\)"):
        pkg.mass_matrix(np.zeros(5))
    with pytest.raises(ValueError, match=r"qd must have shape"):
        pkg.coriolis_matrix(np.zeros(4), np.zeros((4, 2)))
    with pytest.raises(ValueError, match="qdd must hold real numbers"):
        pkg.inverse_dynamics(np.zeros(4), np.zeros(4), np.zeros(4, complex))
    with pytest.raises(TypeError, match=r"coriolis_matrix\(\) missing 1 required positional argument: 'qd'"):
        pkg.coriolis_matrix(np.zeros(4))
    with pytest.raises(TypeError, match="coriolis_matrix\\(\\) got an unexpected keyword argument 'output'"):
        pkg.coriolis_matrix(np.zeros(4), np.zeros(4), output=np.zeros((4, 4)))


def test_a_batch_forks_safely(arm4):
    """Threads of a batch in the parent do not hang a batch in a fork()ed child (libgomp's pool
    would: the binding's threads are its own)."""
    if not hasattr(os, "fork"):
        pytest.skip("no fork here")
    _, pkg = arm4
    Q = np.random.default_rng(44).uniform(-2, 2, (1000, 4))
    expected = pkg.mass_matrix(Q, threads=2)
    code = f"""
import os, sys, numpy as np
sys.path.insert(0, {str(Path(pkg.__file__).parent.parent)!r})
import {Path(pkg.__file__).parent.name} as pkg
Q = np.random.default_rng(44).uniform(-2, 2, (1000, 4))
a = pkg.mass_matrix(Q, threads=2)
pid = os.fork()
if pid == 0:
    os._exit(0 if np.array_equal(pkg.mass_matrix(Q, threads=2), a) else 3)
_, status = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(status))
"""
    run = subprocess.run([sys.executable, "-c", code], timeout=60, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert expected.shape == (1000, 4, 4)


def test_parametric_params_default_and_fast_path(arm4_parametric):
    robot, pkg = arm4_parametric
    rng = np.random.default_rng(45)
    q, qd, qdd = (rng.uniform(-2, 2, robot.n) for _ in range(3))
    theta = pkg.parameters * rng.uniform(0.5, 1.5, pkg.parameters.shape)
    nominal = pkg.inverse_dynamics(q, qd, qdd)
    np.testing.assert_array_equal(nominal, pkg.inverse_dynamics(q, qd, qdd, None))
    np.testing.assert_array_equal(nominal, pkg.inverse_dynamics(q, qd, qdd, pkg.parameters))
    np.testing.assert_array_equal(nominal, pkg.inverse_dynamics(q, qd, qdd, params=pkg.parameters.tolist()))
    got = pkg.inverse_dynamics(q, qd, qdd, theta)
    np.testing.assert_array_equal(got, pkg.inverse_dynamics(q.tolist(), qd, qdd, theta.tolist()))
    support.assert_agree(got, pkg.numpy.inverse_dynamics(q, qd, qdd, theta), "parametric tau (seed 45)")
    out = np.empty(robot.n)
    assert pkg.inverse_dynamics(q, qd, qdd, theta, out=out) is out
    np.testing.assert_array_equal(out, got)
    with pytest.raises(ValueError, match="params must have shape"):
        pkg.inverse_dynamics(q, qd, qdd, theta[:-1])
    Q = rng.uniform(-2, 2, (200, robot.n))
    serial = pkg.regressor(Q, Q, Q, Q, threads=1)
    np.testing.assert_array_equal(serial, pkg.regressor(Q, Q, Q, Q, threads=2))


def test_c_batch_threads_entry_point_equals_batch_and_single_calls(arm4):
    """The C API: NAME_f_batch (unchanged signature) and NAME_f_batch_threads(count, threads,
    ...) give the same bits whatever the thread count, and the single calls' values: groups of
    NAME_LANES states run as one (equal to a few ulps: FMAs contract differently in the lanes
    code), the states past the last whole group one by one (the single calls' bits)."""
    robot, pkg = arm4
    folder = Path(pkg.__file__).parent
    name = folder.name
    header = (folder / f"{name}.h").read_text()
    assert f"void {name}_mass_matrix_batch(size_t count, const double *q, double *M);" in header
    assert f"void {name}_mass_matrix_batch_threads(size_t count, int threads, const double *q, double *M);" in header
    lib = ctypes.CDLL(str(next(folder.glob("_*_ext*.so"))))
    P = ctypes.POINTER(ctypes.c_double)
    ptr = lambda a: a.ctypes.data_as(P)
    # the binding is built with -march=native: the header's choice for this CPU (8, 4 or 2)
    flags = next((line for line in Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("flags")), "")
    lanes = 8 if " avx512f" in flags else 4 if " avx" in flags else 2
    assert f"#define {name.upper()}_LANES {lanes}" in header
    count = 301
    Q = np.random.default_rng(46).uniform(-2, 2, (count, robot.n))
    for f in ("mass_matrix", "coriolis_matrix"):
        args = [Q] + [Q[::-1].copy()] * (f == "coriolis_matrix")
        single = np.empty((count, robot.n, robot.n))
        for i in range(count):
            getattr(lib, f"{name}_{f}")(*(ptr(np.ascontiguousarray(a[i])) for a in args), ptr(single[i]))
        batch = np.empty_like(single)
        getattr(lib, f"{name}_{f}_batch")(ctypes.c_size_t(count), *map(ptr, args), ptr(batch))
        support.assert_agree(batch, single, f"{f}: batch against single calls (seed 46)")
        tail = count - count % lanes
        np.testing.assert_array_equal(batch[tail:], single[tail:], err_msg=f"{f}: the states past the last group")
        for threads in (1, 2, 3, 0):
            got = np.empty_like(single)
            getattr(lib, f"{name}_{f}_batch_threads")(ctypes.c_size_t(count), ctypes.c_int(threads), *map(ptr, args),
                                                      ptr(got))
            np.testing.assert_array_equal(got, batch, err_msg=f"{f}: threads={threads}")


def test_batches_run_groups_of_lanes_and_threads_change_no_bit(arm4):
    """Every function of a package has a lanes version for its batches (arm4's are all whole
    functions) but those with column loops (already vectorized across columns); the binding's own threads split batches at whole groups, so a batch of any size
    gives the same bits on 1, 2 or 3 threads and agrees with the one-state calls."""
    robot, pkg = arm4
    folder = Path(pkg.__file__).parent
    source = (folder / f"{folder.name}.c").read_text()
    manifest = json.loads((folder / "manifest.json").read_text())
    body = lambda f: source.split(f"void {folder.name}_{f}_update(", 1)[1].split("\n}\n", 1)[0]
    looped = {f for f in manifest["functions"] if "column loop" in body(f)}
    assert "forward_dynamics_derivatives" in looped        # vectorized across columns instead
    prefix = folder.name.upper()
    kinds = {f: re.search(rf"^(static|{prefix}_LANES_INLINE) int {folder.name}_{f}_lanes\(", source, re.M) for f in manifest["functions"]}
    assert all(kinds[f] for f in manifest["functions"] if f not in looped)
    # always inlined into the batch loop exactly where the printed lanes function is mostly output
    # entries (codegen/lanes.py, inline_lanes), counted here from its text, not from the build's context
    from symgen.codegen.lanes import inline_lanes

    for f in manifest["functions"]:
        if f in looped or f"void {folder.name}_{f}_lanes_part1(" in source:
            continue
        text = source.split(f" int {folder.name}_{f}_lanes(", 1)[1].split("\n}\n", 1)[0]
        temps, entries = (len(re.findall(p, text, re.M)) for p in (r"^    const lanes_t \w+ = ", r"^    \w+\[\d+\] = "))
        assert (kinds[f].group(1) != "static") == inline_lanes(entries, temps), (f, temps, entries)
    assert any(k.group(1) != "static" for k in kinds.values() if k) and any(k.group(1) == "static" for k in kinds.values() if k)
    rng = np.random.default_rng(47)
    for count in (1, 3, 4, 5, 130, 257):
        Q, QD, QDD = (rng.uniform(-2, 2, (count, robot.n)) for _ in range(3))
        for f in ("inverse_dynamics", "all_terms", "frame_jacobian"):
            fn = getattr(pkg, f)
            args = {"inverse_dynamics": (Q, QD, QDD), "all_terms": (Q, QD), "frame_jacobian": (Q,)}[f]
            runs = [fn(*args, threads=t) for t in (1, 2, 3)]
            for got in runs[1:]:
                for a, b in zip(*(r if isinstance(r, tuple) else (r,) for r in (runs[0], got))):
                    np.testing.assert_array_equal(a, b, err_msg=f"{f}, batch of {count} (seed 47)")
            one = fn(*(x[-1] for x in args))
            for a, b in zip(*(r if isinstance(r, tuple) else (r,) for r in (runs[0], one))):
                support.assert_agree(a[-1], b, f"{f}, last state of a batch of {count} (seed 47)")


def test_generated_c_compiles_without_warnings_with_and_without_openmp(arm4):
    if shutil.which("gcc") is None:
        pytest.skip("gcc is not installed")
    _, pkg = arm4
    folder = Path(pkg.__file__).parent
    ext = json.loads((folder / "manifest.json").read_text())["c_extension"]
    strict = ["-Wall", "-Wextra", "-Wpedantic", "-std=c99", "-Werror", "-O2"]
    no_lanes = f"-D{folder.name.upper()}_NO_LANES"
    for extra in ([], list(package_mod.openmp_flags(("gcc",))), ["-march=native"], [no_lanes]):
        for source, more in ((f"{folder.name}.c", []), (f"{ext}.c", ["-isystem", sysconfig.get_paths()["include"]])):
            run = subprocess.run(["gcc", *strict, *extra, *more, "-c", source, "-o", os.devnull], cwd=folder,
                                 capture_output=True, text=True)
            assert run.returncode == 0, f"{source} {extra}: {run.stderr}"


def test_openmp_is_detected_and_can_be_turned_off(arm4, monkeypatch):
    _, pkg = arm4
    found = package_mod.openmp_flags(("gcc",)) if shutil.which("gcc") else ()
    assert found in ((), ("-fopenmp",))
    if shutil.which("gcc") and found:
        assert pkg.c.openmp is True
    monkeypatch.setenv("SYMGEN_OPENMP", "0")
    assert package_mod.openmp_flags(("gcc",)) == ()
    assert package_mod._probe_openmp(("no-such-compiler-xyz",)) == ()
    assert re.search(r"openmp = bool\(_ext\.openmp\)", (Path(pkg.__file__).parent / f"{Path(pkg.__file__).parent.name}_c.py").read_text())


def test_the_numpy_backend_takes_the_same_out_and_threads_keywords(arm4):
    """Code written for the binding (out=, threads=) runs unchanged on the NumPy module, the
    fallback when the C is not compiled: out is filled and returned, a tuple for several
    outputs, and the same one-line errors."""
    _, arm4 = arm4
    rng = np.random.default_rng(5)
    q, qd, qdd = rng.uniform(-1, 1, arm4.nq), rng.uniform(-1, 1, arm4.nv), rng.uniform(-1, 1, arm4.nv)
    out = np.full((arm4.nv, arm4.nv), np.nan)
    assert arm4.numpy.coriolis_matrix(q, qd, out=out, threads=2) is out
    assert np.array_equal(out, arm4.numpy.coriolis_matrix(q, qd)), "seed 5"
    pair = (np.full((arm4.nv, arm4.nv), np.nan), np.full((arm4.nv, arm4.nv), np.nan))
    assert arm4.numpy.inverse_dynamics_derivatives(q, qd, qdd, out=pair) is pair
    for got, expected in zip(pair, arm4.numpy.inverse_dynamics_derivatives(q, qd, qdd)):
        assert np.array_equal(got, expected), "seed 5"
    with pytest.raises(ValueError, match=r"^out must be a float64 ndarray of shape"):
        arm4.numpy.coriolis_matrix(q, qd, out=np.empty((2, 2)))
    with pytest.raises(ValueError, match=r"^threads must be None or an int"):
        arm4.numpy.coriolis_matrix(q, qd, threads=0)


def test_the_binding_is_native_unless_portable_and_both_compute_alike(tmp_path, monkeypatch):
    """The binding is compiled for this machine (-march=native, where the compiler takes it) by
    default and for the compiler's default target with ``portable``; both give the NumPy
    module's values."""
    if shutil.which("gcc") is None:
        pytest.skip("gcc is not installed")
    monkeypatch.setenv("CC", "gcc")
    commands = []
    real = package_mod._run_compilers

    def recording(cmds, timeout=None, **kw):
        commands.extend(cmds)
        return real(cmds, timeout, **kw)

    monkeypatch.setattr(package_mod, "_run_compilers", recording)
    robot = load_urdf(ARM4)
    rng = np.random.default_rng(11)
    q, qd = rng.uniform(-1, 1, robot.nq), rng.uniform(-1, 1, robot.nv)
    for portable in (False, True):
        commands.clear()
        opts = BuildOptions(quantities=("M", "C"), copt="-O0", portable=portable)
        pkg = import_package(build(robot, tmp_path / str(portable), opts=opts).path)
        compiles = [c for c in commands if "-c" in c]
        assert compiles and all(("-march=native" in c) == (not portable and package_mod.native_flags(("gcc",)) != ())
                                for c in compiles), compiles
        assert pkg.backend == "c"
        np.testing.assert_allclose(pkg.coriolis_matrix(q, qd), pkg.numpy.coriolis_matrix(q, qd), rtol=1e-12,
                                   atol=1e-14, err_msg=f"seed 11, portable={portable}")
    assert package_mod.native_flags(("no-such-compiler-xyz",)) == ()
