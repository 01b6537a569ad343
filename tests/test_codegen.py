"""Generated NumPy and C: built, imported, executed and compared with the numeric reference and
Pinocchio; batches; argument checking; algo2 vs partials; determinism; the golden showcase."""
from __future__ import annotations

import filecmp
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import sympy
from click.testing import CliRunner

import support
import symgen
from symgen import quantities as Q_  # the tests name a batch of q "Q"
from symgen import robots
from symgen.cli import main
from symgen.codegen.build import BuildOptions, Progress as BuildProgress, build, import_package
from symgen.codegen.files import manifest_text
from symgen.urdf import load_urdf, write_urdf

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "symgen" / "examples" / "arm4.urdf"

def _build(robot, tmp, **kw):
    """Build and import; -O0 unless a test asks otherwise: gcc -O2 spends seconds per thousand
    lines of straight-line code and the values do not depend on it."""
    return import_package(build(robot, tmp, opts=BuildOptions(**{"copt": "-O0", **kw})).path)


@pytest.fixture(scope="module")
def systems(tmp_path_factory):
    """(robot, generated package) for a few systems, built once for the module."""
    tmp = tmp_path_factory.mktemp("gen")
    robots_ = {"arm4": lambda: load_urdf(EXAMPLE), "serial6": lambda: robots.make("serial", 6, 7),
               "tree7": lambda: robots.make("tree", 7, 3), "biped4": lambda: robots.make("biped", 4, 5)}

    class Built(dict):                  # each built on first use (serial6 and biped4: -m slow)
        def __missing__(self, name):
            robot = robots_[name]()
            self[name] = (robot, _build(robot, tmp))
            return self[name]
    return Built()


@pytest.mark.parametrize("name,backend", [(n, b) if (n, b) in (("arm4", "numpy"), ("arm4", "c"), ("tree7", "c"))
                                          else pytest.param(n, b, marks=pytest.mark.slow)   # (tree7's NumPy: 37 s)
                                          for n in ("arm4", "serial6", "tree7", "biped4") for b in ("numpy", "c")])
def test_generated_code_matches_numeric_reference(systems, name, backend):
    robot, pkg = systems[name]
    mod = getattr(pkg, backend)
    assert mod is not None, f"{name}: the C binding was not compiled"
    seed = 11
    for t, state in enumerate(support.random_states(seed, robot.n, 3, robot.nq)):
        for f in support.FUNCTIONS:
            what = f"{name} {backend} {f}, state {t} of support.random_states({seed}, {robot.n}, 3)"
            support.assert_matches_reference(support.call(mod, f, *state), robot, f, *state, what)


@pytest.mark.parametrize("backend", ["numpy", "c"])
def test_batch_equals_single_states(systems, backend):
    robot, pkg = systems["tree7"]
    mod = getattr(pkg, backend)
    rng = np.random.default_rng(3)
    Q, QD, QDD = (rng.uniform(0, 6, (2, 5, robot.n)) for _ in range(3))
    for f in support.FUNCTIONS:
        batch = support.call(mod, f, Q, QD, QDD)
        batch = Q_.flat(batch, lead=2)                 # several outputs: each batched on its own
        single = np.array([[Q_.flat(support.call(mod, f, Q[a, b], QD[a, b], QDD[a, b])) for b in range(5)]
                           for a in range(2)])
        assert batch.shape == single.shape, f
        support.assert_agree(batch, single, f"{backend} {f} batch (seed 3)")


@pytest.mark.parametrize("backend", ["numpy", "c"])
def test_wrong_shapes_and_dtypes_raise_value_error_naming_the_argument(systems, backend):
    robot, pkg = systems["arm4"]
    mod = getattr(pkg, backend)
    n = robot.n
    with pytest.raises(ValueError, match=r"q must have shape \(4,\)"):
        mod.mass_matrix(np.zeros(n + 1))
    with pytest.raises(ValueError, match="qd must have shape"):
        mod.coriolis_matrix(np.zeros(n), np.zeros((n, 2)))
    with pytest.raises(ValueError, match="qd has batch shape"):
        mod.coriolis_matrix(np.zeros((3, n)), np.zeros((2, n)))
    with pytest.raises(ValueError, match="qdd must hold real numbers"):
        mod.inverse_dynamics(np.zeros(n), np.zeros(n), np.zeros(n, dtype=complex))
    with pytest.raises(ValueError, match="q must have shape"):
        mod.christoffel(3.0)


def test_extension_refuses_a_count_whose_buffer_size_would_overflow(systems):
    _, pkg = systems["arm4"]
    with pytest.raises(ValueError, match="too large"):
        pkg.c._ext.mass_matrix(2**62, np.zeros(4), np.zeros(16))


def test_package_top_level_prefers_c_and_exposes_joint_order(systems):
    robot, pkg = systems["arm4"]
    assert pkg.backend == "c" and pkg.coriolis_matrix is pkg.c.coriolis_matrix
    assert pkg.joint_names == robot.joint_names and pkg.nq == pkg.nv == robot.n


def test_gamma_from_algorithm2_equals_gamma_from_partials_of_M(tmp_path):
    robot = robots.make("tree", 5, 2)
    (tmp_path / "a").mkdir(), (tmp_path / "b").mkdir()
    a = _build(robot, tmp_path / "a", quantities=("Gamma",), gamma_method="algo2")
    b = _build(robot, tmp_path / "b", quantities=("Gamma",), gamma_method="partials")
    q, _, _ = support.random_state(5, robot.n, robot.nq)
    support.assert_agree(a.c.christoffel(q), b.c.christoffel(q), "algo2 vs partials (seed 5)")
    support.assert_agree(b.numpy.christoffel(q), symgen.christoffel(robot, q), "partials vs reference (seed 5)")


def test_sympy_cse_option_gives_the_same_values(tmp_path):
    robot = robots.make("serial", 3, 1)
    pkg = _build(robot, tmp_path, quantities=("C",), cse=True, compile=False)
    q, qd = np.linspace(0, 1, 3), np.linspace(1, 2, 3)
    support.assert_agree(pkg.numpy.coriolis_matrix(q, qd), symgen.coriolis_matrix(robot, q, qd), "cse")


@pytest.mark.pinocchio
def test_generated_panda_and_floating_solo_match_pinocchio(pin, erd, tmp_path):
    """The issue's real robots: panda (fixed base) and solo12 with a floating base (written as a
    URDF with its six virtual joints so both libraries use the same coordinates)."""
    solo = load_urdf(erd("solo_description/robots/solo12.urdf"), floating_base=True)
    write_urdf(solo, tmp_path / "solo12_floating.urdf")
    for path in (Path(erd("panda_description/urdf/panda.urdf")), tmp_path / "solo12_floating.urdf"):
        robot = load_urdf(path)
        (tmp_path / path.stem).mkdir()
        pkg = _build(robot, tmp_path / path.stem, quantities=("M", "C", "Gamma"))     # what is checked here
        ref = support.PinOracle(robot, pin.buildModelFromUrdf(str(path)))
        Q, QD, _ = support.random_batch(21, robot.n, 2, robot.nq)
        for backend in (pkg.numpy, pkg.c):
            CB, MB, GB = backend.coriolis_matrix(Q, QD), backend.mass_matrix(Q), backend.christoffel(Q)
            for t in range(2):
                q, qd = Q[t], QD[t]
                C_pin, M_pin = ref.coriolis(q, qd), ref.mass_matrix(q)
                what = f"{path.stem}, state {t} of support.random_batch(21, {robot.n}, 2)"
                support.assert_agree(backend.coriolis_matrix(q, qd), C_pin, f"C vs Pinocchio, {what}")
                support.assert_agree(backend.mass_matrix(q), M_pin, f"M vs Pinocchio, {what}")
                support.assert_agree(np.einsum("ijk,k->ij", backend.christoffel(q), qd), C_pin, f"Gamma qd vs Pinocchio C, {what}")
                support.assert_agree(CB[t], C_pin, f"batch C vs Pinocchio, {what}")
                support.assert_agree(MB[t], M_pin, f"batch M vs Pinocchio, {what}")
                support.assert_agree(np.einsum("ijk,k->ij", GB[t], qd), C_pin, f"batch Gamma qd vs Pinocchio C, {what}")


def _build_files(tmp, cwd, hashseed):
    env = dict(os.environ, PYTHONHASHSEED=str(hashseed))
    subprocess.run([sys.executable, str(ROOT / "cli.py"), "build", str(EXAMPLE), "--out", str(tmp), "--no-compile",
                    "--quiet"], cwd=cwd, env=env, check=True, capture_output=True)
    return tmp / "arm4"


def test_regeneration_is_byte_identical(tmp_path):
    (tmp_path / "a").mkdir(), (tmp_path / "b").mkdir()
    a = _build_files(tmp_path / "a", ROOT, 1)
    b = _build_files(tmp_path / "b", tmp_path, 2)
    names = sorted(p.name for p in a.iterdir())
    assert names == sorted(p.name for p in b.iterdir())
    match, mismatch, errors = filecmp.cmpfiles(a, b, names, shallow=False)
    assert not mismatch and not errors, mismatch


def test_committed_showcase_is_what_symgen_generates(tmp_path):
    golden = ROOT / "generated" / "arm4"
    manifest = json.loads((golden / "manifest.json").read_text())
    if manifest["sympy"] != sympy.__version__:
        pytest.skip(f"generated/ was made with SymPy {manifest['sympy']}, this is {sympy.__version__}")
    fresh = _build_files(tmp_path, tmp_path, 0)
    for f in sorted(p.name for p in fresh.iterdir()):
        if f == "manifest.json":          # with what `symgen stack` recorded after the build (README)
            stack = manifest.pop("stack", {})
            assert all(set(e["functions"]) == set(manifest["functions"]) for e in stack.values()), \
                "generated/arm4/manifest.json: its stack figures are stale: rerun the README's symgen stack"
            assert manifest_text(manifest) == (fresh / f).read_text(), \
                "generated/arm4/manifest.json is stale: rerun the README build"
            continue
        assert (golden / f).read_bytes() == (fresh / f).read_bytes(), f"generated/arm4/{f} is stale: rerun the README build"


def test_cli_build_then_verify(tmp_path):
    runner = CliRunner()
    res = runner.invoke(main, ["build", str(EXAMPLE), "--out", str(tmp_path), "--quiet"])
    assert res.exit_code == 0, res.output
    res = runner.invoke(main, ["build", str(EXAMPLE), "--out", str(tmp_path), "--quiet"])
    assert res.exit_code == 2 and "already exists" in res.output and "Traceback" not in res.output
    res = runner.invoke(main, ["verify", str(tmp_path / "arm4"), "--urdf", str(EXAMPLE), "--trials", "3"])
    assert res.exit_code == 0 and "all checks passed" in res.output, res.output


@pytest.mark.pinocchio
def test_verify_compares_with_pinocchio_and_fails_on_another_robot(pin, tmp_path):
    """`symgen verify --urdf` checks every function against Pinocchio when it is installed; a
    package checked against a URDF with one mass changed fails (exit code 1)."""
    build(load_urdf(EXAMPLE), tmp_path, opts=BuildOptions(copt="-O0"))
    res = CliRunner().invoke(main, ["verify", str(tmp_path / "arm4"), "--urdf", str(EXAMPLE), "--trials", "2"])
    assert res.exit_code == 0, res.output
    for f in support.FUNCTIONS:
        assert f"c vs Pinocchio: {f}" in res.output and f"numpy vs Pinocchio: {f}" in res.output, (f, res.output)
    text = EXAMPLE.read_text()
    other = tmp_path / "heavier.urdf"
    last = text.rindex('<mass value="')                                       # the tool, far out
    other.write_text(text[:last] + '<mass value="9.0"' + text[text.index("/>", last):])
    res = CliRunner().invoke(main, ["verify", str(tmp_path / "arm4"), "--urdf", str(other), "--trials", "2"])
    assert res.exit_code == 1 and "FAIL" in res.output, res.output
    assert any("vs Pinocchio" in line and "FAIL" in line for line in res.output.splitlines()), res.output


def test_cli_rejects_unknown_quantity_in_one_line(tmp_path):
    res = CliRunner().invoke(main, ["build", str(EXAMPLE), "--out", str(tmp_path), "--quantities", "M,Q"])
    assert res.exit_code == 2 and "--quantities: unknown Q" in res.output and "Traceback" not in res.output
    assert list(tmp_path.iterdir()) == []


def test_failed_build_leaves_previous_package_untouched(tmp_path, monkeypatch):
    robot = robots.make("serial", 2, 0)
    good = build(robot, tmp_path, opts=BuildOptions(quantities=("M",), compile=False)).path
    before = {p.name: p.read_bytes() for p in good.iterdir()}

    def boom(folder, name, **kw):
        raise symgen.BuildError("simulated compiler failure")

    monkeypatch.setattr("symgen.codegen.build.compile_extension", boom)
    with pytest.raises(symgen.BuildError):
        build(robot, tmp_path, opts=BuildOptions(quantities=("M", "C"), force=True))
    assert {p.name: p.read_bytes() for p in good.iterdir()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["serial2"]


def test_fresh_venv_non_editable_install_can_build(tmp_path):
    venv = tmp_path / "venv"
    # a PYTHONPATH pointing at a checkout would shadow the installed copy this test is about
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True, env=env)
    py = venv / "bin" / "python"
    subprocess.run([str(py), "-m", "pip", "install", "--quiet", "--no-deps", str(ROOT)],
                   check=True, cwd=tmp_path, env=env)
    where = subprocess.run([str(py), "-c", "import symgen; print(symgen.__file__)"], cwd=tmp_path,
                           capture_output=True, text=True, check=True, env=env).stdout
    assert str(venv) in where, where
    out = tmp_path / "out"
    out.mkdir()
    subprocess.run([str(venv / "bin" / "symgen"), "build", str(EXAMPLE), "--out", str(out), "--quiet"],
                   check=True, cwd=tmp_path, env=env)
    assert (out / "arm4" / "arm4.c").is_file()


@pytest.fixture(scope="module")
def paper_systems(tmp_path_factory):
    """The paper's 20-DoF serial chain and binary tree, written as URDF (so that Pinocchio reads
    the same robot), generated with every quantity and compiled (-O0: the values do not depend
    on it; the sweeps on two worker processes, as `symgen build` runs them on two cores)."""
    tmp = tmp_path_factory.mktemp("paper")

    class Built(dict):                  # each system built on first use (the serial chain: -m slow)
        def __missing__(self, kind):
            path = tmp / f"{kind}20.urdf"
            write_urdf(robots.make(kind, 20, 1), path)
            robot = load_urdf(path)
            (tmp / kind).mkdir()
            self[kind] = (path, robot, _build(robot, tmp / kind, jobs=2))   # the sweeps on two worker processes
            return self[kind]
    return Built()


@pytest.mark.pinocchio
@pytest.mark.slow          # (tree: 80 s of calls on a 2-core machine, serial 90 s more; the work-array test builds tree20 in CI)
@pytest.mark.parametrize("kind", ["serial", "tree"])
def test_paper_20_dof_systems_generated_code_matches_reference_and_pinocchio(pin, paper_systems, kind):
    path, robot, pkg = paper_systems[kind]
    ref = support.PinOracle(robot, pin.buildModelFromUrdf(str(path)))
    seed = 29
    rng = np.random.default_rng(seed)
    Q, QD, QDD = rng.uniform(-np.pi, np.pi, (3, robot.n)), rng.uniform(-2, 2, (3, robot.n)), rng.normal(size=(3, robot.n))
    for backend in ("numpy", "c"):
        mod = getattr(pkg, backend)
        for f in support.FUNCTIONS:                                 # batch of 3, then each state
            batch = support.call(mod, f, Q, QD, QDD)
            for t in range(3):
                single = support.call(mod, f, Q[t], QD[t], QDD[t])
                what = f"{kind}20 {backend} {f}, state {t} (seed {seed})"
                support.assert_matches_reference(single, robot, f, Q[t], QD[t], QDD[t], what + " vs reference")
                support.assert_agree(tuple(b[t] for b in batch) if isinstance(batch, tuple) else batch[t], single,
                                     what + " batch vs single")
        for t in range(3):
            q, qd, qdd = Q[t], QD[t], QDD[t]
            what = f"{kind}20 {backend}, state {t} (seed {seed}) vs Pinocchio"
            support.assert_agree(mod.mass_matrix(q), ref.mass_matrix(q), "M " + what)
            support.assert_agree(mod.coriolis_matrix(q, qd), ref.coriolis(q, qd), "C " + what)
            support.assert_agree(mod.christoffel(q), ref.christoffel(q), "Gamma " + what)
            support.assert_agree(mod.inverse_dynamics(q, qd, qdd), ref.inverse_dynamics(q, qd, qdd), "tau " + what)


def test_progress_reports_every_step_of_each_symbolic_run(tmp_path):
    """What the CLI's bar shows: one tick per j of Algorithm 1 and per k of Algorithm 2."""
    robot = robots.make("tree", 5, 4)
    seen = []

    class Progress(BuildProgress):
        def message(self, text):
            seen.append(("stage", text))

        def tick(self, label, done, total):
            seen.append((label, done, total))

    build(robot, tmp_path, opts=BuildOptions(quantities=("C", "Gamma"), compile=False), progress=Progress())
    for label in ("C", "Gamma"):
        assert [t[1:] for t in seen if t[0] == label] == [(d, 5) for d in range(1, 6)], seen


def test_body_frame_code_matches_the_reference(tmp_path):
    """--frame body: the paper's pseudo-code as printed, generated and run."""
    robot = robots.make("biped", 3, 2)
    pkg = _build(robot, tmp_path, frame="body", compile=False)
    rng = np.random.default_rng(8)
    q, qd, qdd = rng.uniform(0, 6, robot.nq), rng.normal(size=robot.n), rng.normal(size=robot.n)
    for f in support.FUNCTIONS:
        support.assert_matches_reference(support.call(pkg.numpy, f, q, qd, qdd), robot, f, q, qd, qdd,
                                         f"body frame {f} (seed 8)")


def test_update_variants_write_exactly_the_entries_that_can_be_nonzero(systems):
    """NAME_f_update leaves the structurally zero entries alone: from a zeroed buffer it gives
    NAME_f's result, over a buffer NAME_f filled at another state it gives the new result, and
    an entry it is not meant to write keeps whatever was there."""
    import ctypes

    robot, pkg = systems["tree7"]
    lib = ctypes.CDLL(str(next(Path(pkg.__file__).parent.glob("_*_ext*.so"))))
    P = ctypes.POINTER(ctypes.c_double)
    rng = np.random.default_rng(12)
    name = Path(pkg.__file__).parent.name
    for f in ("christoffel", "coriolis_matrix", "mass_matrix"):
        full, update = getattr(lib, f"{name}_{f}"), getattr(lib, f"{name}_{f}_update")
        size = support.output_size(f, robot)
        states = [[rng.uniform(0, 6, robot.n) for _ in range(support.ARITY[f])] for _ in range(2)]
        ptr = lambda a: a.ctypes.data_as(P)
        expected = []
        for st in states:
            out = np.full(size, np.nan)
            full(*map(ptr, st), ptr(out))
            expected.append(out.copy())
        buf = np.zeros(size)
        update(*map(ptr, states[0]), ptr(buf))
        np.testing.assert_array_equal(buf, expected[0], err_msg=f"{f}_update from zeros (seed 12)")
        update(*map(ptr, states[1]), ptr(buf))
        np.testing.assert_array_equal(buf, expected[1], err_msg=f"{f}_update over an earlier result (seed 12)")
        marked = np.full(size, 7.0)
        update(*map(ptr, states[0]), ptr(marked))
        written = marked != 7.0
        np.testing.assert_array_equal(marked[written], expected[0][written], err_msg=f"{f}_update (seed 12)")
        assert np.all(expected[0][~written] == 0.0), f"{f}_update skipped an entry that is not zero (seed 12)"
        if f == "christoffel":                  # a tree: most triples are unrelated, never written
            assert (~written).sum() > size // 2, f"{f}_update wrote {written.sum()} of {size} entries"


def test_a_sparse_output_is_zeroed_run_by_run_and_the_function_still_writes_every_entry(systems):
    """An output of 256 entries or more whose zeros form few runs is zeroed run by run (a memset a
    run, a store for runs under 4) before its nonzeros, not whole: from a buffer of NaN the full
    function gives the NumPy module's result, entry for entry (tree7, seed 13)."""
    import ctypes
    import re

    from symgen.codegen.files import _zero_runs

    assert _zero_runs(300, {3, 4, 10, 299}) == [(0, 3), (5, 5), (11, 288)]
    assert _zero_runs(100, {0}) is None                                              # small: one memset
    assert _zero_runs(600, set(range(0, 600, 2))) is None                           # 300 runs
    robot, pkg = systems["tree7"]
    name = Path(pkg.__file__).parent.name
    source = (Path(pkg.__file__).parent / f"{name}.c").read_text()
    lib = ctypes.CDLL(str(next(Path(pkg.__file__).parent.glob("_*_ext*.so"))))
    P = ctypes.POINTER(ctypes.c_double)
    rng = np.random.default_rng(13)
    by_runs = []
    for f in support.FUNCTIONS:
        wrapper = re.search(rf"\nvoid {name}_{f}\(.*?\n}}\n", source, re.S)
        if not (wrapper and re.search(r"memset\(\w+ \+ \d+, 0", wrapper.group(0))):
            continue
        by_runs.append(f)
        args = [rng.uniform(0, 6, robot.n) for _ in range(support.ARITY[f])]
        out = np.full(support.output_size(f, robot), np.nan)
        getattr(lib, f"{name}_{f}")(*(a.ctypes.data_as(P) for a in args), out.ctypes.data_as(P))
        expected = np.ravel(getattr(pkg.numpy, f)(*args))
        np.testing.assert_allclose(out, expected, rtol=1e-12, atol=1e-12, err_msg=f"{f} from NaN (seed 13)")
    assert by_runs, "no function of tree7 zeroes its output run by run"


@pytest.mark.parametrize("kind", [pytest.param("serial", marks=pytest.mark.slow),
                                  pytest.param("tree", marks=pytest.mark.slow), "arm4-in-parts"])
def test_work_array_variant_of_a_function_in_parts_gives_the_same_values(request, monkeypatch, tmp_path, kind):
    """NAME_f_update_work(inputs, out, work): the caller's work array (size in the header)
    instead of the stack; from a zeroed buffer it equals NAME_f. In CI on arm4 printed in parts
    (the form big robots get, at a size that builds in seconds); the paper's 20-DoF systems with
    -m slow."""
    import ctypes
    import re

    if kind == "arm4-in-parts":
        import symgen.codegen.files as codegen_files

        monkeypatch.setattr(codegen_files, "C_SPLIT_ABOVE", 60)
        monkeypatch.setattr(codegen_files, "C_PART_SIZE", 40)
        robot = load_urdf(EXAMPLE)
        pkg = _build(robot, tmp_path, quantities=("Gamma", "C"))
    else:
        _, robot, pkg = request.getfixturevalue("paper_systems")[kind]
    folder = Path(pkg.__file__).parent
    name = folder.name
    header = (folder / f"{name}.h").read_text()
    lib = ctypes.CDLL(str(next(folder.glob("_*_ext*.so"))))
    P = ctypes.POINTER(ctypes.c_double)
    ptr = lambda a: a.ctypes.data_as(P)
    rng = np.random.default_rng(31)
    q, qd = rng.uniform(0, 6, robot.n), rng.normal(size=robot.n)
    for f, args in (("christoffel", (q,)), ("coriolis_matrix", (q, qd))):
        size = support.output_size(f, robot)
        work_bytes = int(re.search(rf"#define {name.upper()}_{f.upper()}_WORK_BYTES (\d+)", header).group(1))
        assert work_bytes > 0 and f"{name}_{f}_update_work(" in header, f"{f} is not printed in parts"
        expected, out = np.full(size, np.nan), np.zeros(size)
        getattr(lib, f"{name}_{f}")(*map(ptr, args), ptr(expected))
        work = np.full(work_bytes // 8, np.nan)
        getattr(lib, f"{name}_{f}_update_work")(*map(ptr, args), ptr(out), ptr(work))
        np.testing.assert_array_equal(out, expected, err_msg=f"{kind} {f}_update_work (seed 31)")


def _nearly_snapped_chain(eps: float, n: int = 5) -> str:
    """A chain whose offsets, angles and axes lie ``eps`` from values symgen snaps (0, 1/2, pi/2)."""
    lines = ['<robot name="nearsnap">', '<link name="l0"/>']
    for i in range(1, n + 1):
        lines.append(f'<link name="l{i}"><inertial><origin xyz="0.3 0.05 0.02"/><mass value="3"/><inertia ixx="0.1" '
                     f'iyy="0.2" izz="0.15" ixy="0.01" ixz="0" iyz="0"/></inertial></link>')
        lines.append(f'<joint name="j{i}" type="revolute"><parent link="l{i - 1}"/><child link="l{i}"/><origin '
                     f'xyz="{0.5 + eps!r} {eps!r} {eps!r}" rpy="{np.pi / 2 + eps * (i % 2)!r} {eps!r} 0"/><axis '
                     f'xyz="{eps!r} {eps!r} 1"/><limit lower="-3" upper="3" effort="1" velocity="1"/></joint>')
    return "\n".join(lines + ["</robot>", ""])


@pytest.mark.pinocchio
def test_verify_gives_pinocchio_the_robot_symgen_read(pin, tmp_path):
    """Values within 1e-9 of 0, 1/2, pi/2 are snapped by symgen's reader; verify compares with
    Pinocchio on the model symgen read (written back as URDF), not the raw file, so a correct
    package passes. So does a URDF Pinocchio's own reader refuses (a revolute joint without
    <limit>); and a floating base, whose six joints are written as real joints."""
    urdf = tmp_path / "nearsnap.urdf"
    urdf.write_text(_nearly_snapped_chain(9e-10))
    robot = load_urdf(urdf)
    assert len(robot.snapped) > 10
    build(robot, tmp_path, opts=BuildOptions(copt="-O0", quantities=("M", "C", "tau")))
    res = CliRunner().invoke(main, ["verify", str(tmp_path / "nearsnap"), "--urdf", str(urdf), "--trials", "3"])
    assert res.exit_code == 0 and "c vs Pinocchio: mass_matrix" in res.output, res.output
    nolimit = tmp_path / "nolimit.urdf"
    nolimit.write_text(urdf.read_text().replace('<limit lower="-3" upper="3" effort="1" velocity="1"/>', ""))
    res = CliRunner().invoke(main, ["verify", str(tmp_path / "nearsnap"), "--urdf", str(nolimit), "--trials", "2"])
    assert res.exit_code == 0 and "c vs Pinocchio: coriolis_matrix" in res.output, res.output
    floating = load_urdf(urdf, floating_base=True)
    (tmp_path / "f").mkdir()
    build(floating, tmp_path / "f", opts=BuildOptions(copt="-O0", quantities=("M", "C")))
    res = CliRunner().invoke(main, ["verify", str(tmp_path / "f" / "nearsnap"), "--urdf", str(urdf), "--floating-base",
                                    "--trials", "2"])
    assert res.exit_code == 0 and "c vs Pinocchio: coriolis_matrix" in res.output, res.output


def test_a_big_c_file_compiles_as_parallel_units_that_give_the_same_binding(tmp_path, monkeypatch):
    """NAME.c past UNIT_SPLIT_BYTES is compiled as one unit per core (its @symgen-unit blocks
    spread by size, the package's data in the first unit only); the binding built that way
    computes what the NumPy module computes, bit for bit on arm4's functions (seed 4)."""
    from symgen.codegen import compile as package_module

    monkeypatch.setattr(package_module, "UNIT_SPLIT_BYTES", 0)
    monkeypatch.setattr(package_module.os, "cpu_count", lambda: 3)
    pkg = _build(load_urdf(EXAMPLE), tmp_path)
    source = Path(pkg.__file__).parent / "arm4.c"
    units = package_module.compile_units(source, tmp_path)
    assert len(units) == 3
    texts = [u.read_text() for u in units]
    assert sum("@symgen-data:" in t for t in texts) == 1 and "@symgen-data:" in texts[0]
    assert sum(t.count("/* @symgen-unit ") for t in texts) == source.read_text().count("/* @symgen-unit ")
    assert all('#include "arm4.h"' in t for t in texts)
    rng = np.random.default_rng(4)
    q, qd, qdd = rng.uniform(-1, 1, 4), rng.uniform(-1, 1, 4), rng.uniform(-1, 1, 4)
    for f in support.FUNCTIONS:
        got, expected = support.call(pkg.c, f, q, qd, qdd), support.call(pkg.numpy, f, q, qd, qdd)
        support.assert_agree(Q_.flat(got), Q_.flat(expected), f"{f} from the split compile (seed 4)")


def test_a_build_on_several_processes_writes_the_same_bytes(tmp_path):
    """`symgen build --jobs 3` (sweeps traced and printed by worker processes, in the CLI's fresh
    process) writes the files one process writes, byte for byte."""
    written = {}
    for jobs in ("1", "3"):
        run = subprocess.run([sys.executable, str(ROOT / "cli.py"), "build", str(ROOT / "symgen" / "examples" / "arm4.urdf"),
                              "--out", str(tmp_path / jobs), "--jobs", jobs, "--no-compile", "--quiet"],
                             capture_output=True, text=True, timeout=600)
        assert run.returncode == 0, run.stderr
        written[jobs] = {p.name: p.read_bytes() for p in sorted((tmp_path / jobs / "arm4").iterdir())}
    assert written["1"] == written["3"]


def test_a_parallel_build_reports_every_message_and_tick_of_its_workers():
    """The worker processes' progress (messages and ticks) reaches the build's Progress: what the
    CLI's bar shows on several processes. In a fresh process, as `symgen build` runs."""
    script = """
from symgen import robots
from symgen.codegen import Progress
from symgen.codegen.build import BuildOptions, functions_for
seen = []
class P(Progress):
    def message(self, text): seen.append(text)
    def tick(self, label, done, total): seen.append((label, done, total))
functions_for(robots.make("tree", 5, 4), BuildOptions(quantities=("M", "C", "Gamma"), compile=False, jobs=2), P())
assert seen[0] == "symbolic runs of M, C, Gamma on 2 processes", seen
assert {m.split(":")[0] for m in seen if isinstance(m, str) and m.endswith("operations")} == {"M", "C", "Gamma"}, seen
for label in ("C", "Gamma"):
    assert [t[1:] for t in seen if isinstance(t, tuple) and t[0] == label] == [(d, 5) for d in range(1, 6)], seen
print("ok")
"""
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr
