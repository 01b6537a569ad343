"""The generated C ``NAME_solve_loops`` (templates/loops_solve.c.j2): Newton on the dependent
coordinates with step halving, as the NumPy module's ``solve_loops`` (templates/loops_solve_py.j2),
declared in NAME.h with a status code; the package's ``solve_loops`` is the C one when compiled.
Checked against the NumPy one and against the definition (phi = 0, independent coordinates kept),
on the four-bar and the tilted knee linkage; every comparison names its seed."""
from __future__ import annotations

import ctypes
import zlib
from pathlib import Path

import numpy as np
import pytest

import symgen

DATA = Path(__file__).parent / "data" / "urdfplus"


@pytest.fixture(scope="module", params=("four_bar.urdf", "tilted_knee_linkage.urdf"))
def package(request, tmp_path_factory):
    from symgen.codegen.build import BuildOptions, build, import_package

    robot = symgen.load_urdf(DATA / request.param)
    opts = BuildOptions(quantities=("M", "phi", "Kl"), copt="-O0", jobs=2)
    path = build(robot, tmp_path_factory.mktemp("loops_c"), opts=opts).path
    return request.param, robot, import_package(path), Path(path)


def _draws(label, nq, count):
    seed = zlib.crc32(label.encode())
    return seed, np.random.default_rng(seed).uniform(0.0, 2 * np.pi, (count, nq))


def test_c_solve_loops_matches_numpy(package):
    name, robot, pkg, _ = package
    assert pkg.c is not None and pkg.solve_loops is pkg.c.solve_loops
    seed, draws = _draws(f"solve-c-{name}", pkg.nq, 40)
    own = list(robot.system.independent)
    solved = 0
    for t, q0 in enumerate(draws):
        ctx = f"{name} seed {seed} draw #{t}"
        try:
            ref = pkg.numpy.solve_loops(q0)
        except pkg.LoopError:                    # no closed configuration at these independent coordinates
            with pytest.raises(pkg.LoopError, match="no closed configuration"):
                pkg.c.solve_loops(q0)
            continue
        q = pkg.c.solve_loops(q0)
        solved += 1
        assert np.abs(q - ref).max() <= 1e-10, ctx
        assert np.array_equal(q[own], q0[own]) and np.abs(pkg.numpy.loop_residual(q)).max() <= 1e-9, ctx
    assert solved >= 10, f"{name} seed {seed}: only {solved} draws closed"
    closed = np.stack([pkg.numpy.solve_loops(q) for q in draws[:3] if _closes(pkg, q)] or [draws[0]])
    assert np.abs(pkg.c.solve_loops(closed) - np.stack([pkg.c.solve_loops(q) for q in closed])).max() == 0.0


def _closes(pkg, q):
    try:
        pkg.numpy.solve_loops(q)
        return True
    except pkg.LoopError:
        return False


def test_c_entry_point_and_its_status_codes(package):
    """NAME.h declares it; 0 on convergence, 1 when Newton runs out of steps; the batch 1 + the
    first state that failed; the independent coordinates never move."""
    name, robot, pkg, path = package
    prefix = path.name
    header = (path / f"{prefix}.h").read_text()
    assert f"int {prefix}_solve_loops(const double *q, int iterations, double tol, double *q_out);" in header
    lib = ctypes.CDLL(pkg.c._ext.__file__)
    f = getattr(lib, f"{prefix}_solve_loops")
    f.restype, f.argtypes = ctypes.c_int, [ctypes.c_void_p, ctypes.c_int, ctypes.c_double, ctypes.c_void_p]
    seed, draws = _draws(f"status-{name}", pkg.nq, 20)
    q0 = next(q for q in draws if _closes(pkg, q))
    out = np.empty(pkg.nq)
    assert f(q0.ctypes.data, 50, 1e-12, out.ctypes.data) == 0, f"{name} seed {seed}"
    assert np.abs(out - pkg.numpy.solve_loops(q0)).max() <= 1e-10, f"{name} seed {seed}"
    far = pkg.numpy.solve_loops(q0) + np.where(np.isin(np.arange(pkg.nq), robot.system.dependent), 0.5, 0.0)
    assert f(far.ctypes.data, 1, 1e-14, out.ctypes.data) == 1, f"{name} seed {seed}: one step cannot converge"
    own = list(robot.system.independent)
    assert np.array_equal(out[own], far[own])
    batch = np.stack([pkg.numpy.solve_loops(q0), far])
    with pytest.raises(pkg.LoopError, match="state 1 of the batch"):
        pkg.c.solve_loops(batch, iterations=1, tol=1e-14)
