"""Builds and packages that can be trusted (issue 15). Properties checked, one test or family each:

- concurrent builds into one OUT/NAME: without --force an existing package is never replaced;
  with it the replacement is one step and the build that lost the race says so in one line;
- the package folder and its files respect the umask;
- ``symgen verify`` refuses, in one line and exit code 2, what is not an intact symgen package
  (empty folder, other folder, foreign ``__init__.py``, edited file or manifest, another robot),
  and compares with Pinocchio's own reading of the URDF, which catches a misread URDF;
- a package rebuilt in a running Python loads its new binding;
- temporary folders of live builds survive other builds, whatever their PID; dead builds' go;
- CC with arguments, a dangling symlink at OUT/NAME, a shell-quoted regenerate command, q = inf
  in NumPy's one-state path (SIGHUP during the compiler: ``test_hostile``, with the other signals);
- the newcomer's edges: a binding that cannot be loaded warns once; the name clash is found
  before the symbolic work; the package name is explained; ``symgen.robots`` without an import.
"""
from __future__ import annotations

import dataclasses
import json
import os
import shlex
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import symgen
from symgen import robots
from symgen.cli import main
from symgen.codegen import package
from symgen.codegen.build import BuildOptions, Progress as BuildProgress, build, import_package
from symgen.codegen.files import manifest_digest, sha256_text
from symgen.codegen.names import py_literal
from symgen.errors import SymgenError
from symgen.urdf import load_urdf, write_urdf
from symgen.verify import verify_package

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "symgen" / "examples" / "arm4.urdf"
QUICK = BuildOptions(quantities=("M",), compile=False)


def _cli(args, cwd, env=None):
    return subprocess.run([sys.executable, str(ROOT / "cli.py"), *args], cwd=cwd, capture_output=True, text=True,
                          env=env)


def _one_line_error(res, start="symgen: "):
    """A CliRunner result or a finished process: exit 2, one line on stderr, no traceback."""
    code = getattr(res, "exit_code", getattr(res, "returncode", None))
    err = res.stderr
    assert code == 2 and err.count("\n") == 1 and err.startswith(start) and "Traceback" not in err + res.stdout, \
        (code, err, res.stdout)
    return err


def _entries(folder):
    return sorted(p.name for p in Path(folder).iterdir())


def _urdf(tmp_path, n, seed=0):
    path = tmp_path / f"serial{n}_{seed}.urdf"
    write_urdf(robots.make("serial", n, seed), path)
    return path


# ------------------------------------------------------------------------ concurrent builds

BARRIER_CC = """#!/bin/sh
# a C compiler that waits until two builds are compiling, then writes an empty binding
touch "$BARRIER/$$"
i=0
while [ "$(ls "$BARRIER" | wc -l)" -lt 2 ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done
prev=""
for a in "$@"; do [ "$prev" = "-o" ] && : > "$a"; prev="$a"; done
"""


def _race(tmp_path, out, force):
    """Two CLI builds of different robots (serial 2 and serial 3) into OUT/pkg, both past their
    start (the compiler waits for the other build's) before either moves its package in;
    [(joints, process)] of each."""
    cc, barrier = tmp_path / "barriercc", tmp_path / "barrier"
    cc.write_text(BARRIER_CC)
    barrier.mkdir()
    env = dict(os.environ, CC=f"sh {cc}", BARRIER=str(barrier))
    runs = []
    for n in (2, 3):
        args = ["build", str(_urdf(tmp_path, n)), "--out", str(out), "--name", "pkg", "--quantities", "M", "--quiet"]
        runs.append((n, subprocess.Popen([sys.executable, str(ROOT / "cli.py"), *args, *(["--force"] if force else [])],
                                         cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                         text=True)))
    done = []
    for n, proc in runs:
        out_text, err_text = proc.communicate(timeout=120)
        done.append((n, proc.returncode, err_text))
    return done


@pytest.mark.parametrize("force", [False, True], ids=["no-force", "force"])
def test_concurrent_builds_into_one_name_one_wins_the_other_says_so_and_nothing_is_mixed(tmp_path, force):
    out = tmp_path / "out"
    out.mkdir()
    if force:
        build(robots.make("serial", 4, 0), out, name="pkg", opts=QUICK)
    done = _race(tmp_path, out, force)
    codes = sorted(code for _, code, _ in done)
    assert codes == [0, 2], done
    (winner,) = [n for n, code, _ in done if code == 0]
    (loser,) = [err for _, code, err in done if code == 2]
    assert loser.count("\n") == 1 and loser.startswith(f"symgen: {out / 'pkg'}: ") and "Traceback" not in loser
    assert ("another build replaced it" if force else "already exists") in loser, loser
    assert _entries(out) == ["pkg"]
    manifest = json.loads((out / "pkg" / "manifest.json").read_text())
    assert manifest["nq"] == winner
    assert all(sha256_text((out / "pkg" / f).read_text()) == h for f, h in manifest["files"].items())


def test_sequential_builds_without_force_never_replace(tmp_path):
    first = build(robots.make("serial", 2, 0), tmp_path, name="pkg", opts=QUICK).path
    before = (first / "manifest.json").read_bytes()
    with pytest.raises(SymgenError, match="already exists"):
        build(robots.make("serial", 3, 0), tmp_path, name="pkg", opts=QUICK)
    assert (first / "manifest.json").read_bytes() == before and _entries(tmp_path) == ["pkg"]


def test_what_appears_at_the_target_during_a_build_is_kept(tmp_path):
    """The check at the final step: an empty folder made at OUT/NAME after the build started
    (which a plain rename would replace) is kept, and the build says so."""
    class Progress(BuildProgress):
        def message(self, text):
            (tmp_path / "pkg").mkdir(exist_ok=True)

    with pytest.raises(SymgenError, match="already exists .another build wrote it"):
        build(robots.make("serial", 2, 0), tmp_path, name="pkg", opts=QUICK, progress=Progress())
    assert _entries(tmp_path) == ["pkg"] and _entries(tmp_path / "pkg") == []


@pytest.mark.parametrize("exchange", ["renameat2", "two renames"])
def test_forced_replacement_without_renameat2_is_also_complete(tmp_path, monkeypatch, exchange):
    if exchange == "two renames":
        monkeypatch.setattr(package, "_RENAMEAT2", None)
    build(robots.make("serial", 2, 0), tmp_path, name="pkg", opts=QUICK)
    build(robots.make("serial", 3, 0), tmp_path, name="pkg", opts=dataclasses.replace(QUICK, force=True))
    assert json.loads((tmp_path / "pkg" / "manifest.json").read_text())["nq"] == 3
    assert _entries(tmp_path) == ["pkg"]


# ------------------------------------------------------------------------ permissions, paths

@pytest.mark.parametrize("umask", [0o022, 0o002, 0o077])
def test_package_folder_and_files_respect_the_umask(tmp_path, umask):
    old = os.umask(umask)
    try:
        path = build(robots.make("serial", 2, 0), tmp_path, name="pkg", opts=QUICK).path
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o777 & ~umask
    for f in path.iterdir():
        assert stat.S_IMODE(f.stat().st_mode) == 0o666 & ~umask, f.name


@pytest.mark.parametrize("where", ["component", "path"])
def test_overlong_out_path_is_a_one_line_error(tmp_path, where):
    out = tmp_path / ("x" * 300) if where == "component" else tmp_path.joinpath(*["y" * 200] * 25)
    res = CliRunner().invoke(main, ["build", str(EXAMPLE), "--out", str(out), "--no-compile", "--quiet"])
    err = _one_line_error(res)
    assert "too long" in err and _entries(tmp_path) == []


# ------------------------------------------------------------------------ verify refuses

@pytest.fixture(scope="module")
def arm4_package(tmp_path_factory):
    """arm4 built from its URDF through the CLI (no binding): M, C and tau."""
    out = tmp_path_factory.mktemp("arm4")
    res = CliRunner().invoke(main, ["build", str(EXAMPLE), "--out", str(out), "--no-compile", "--quiet",
                                    "--quantities", "M,C,tau"])
    assert res.exit_code == 0, res.output
    return out / "arm4"


@pytest.fixture
def arm4_copy(arm4_package, tmp_path):
    path = tmp_path / "arm4"
    shutil.copytree(arm4_package, path, ignore=shutil.ignore_patterns("__pycache__"))
    return path


def _verify(path, *args):
    return CliRunner().invoke(main, ["verify", str(path), "--trials", "2", *args])


def test_intact_package_verifies(arm4_copy):
    res = _verify(arm4_copy, "--urdf", str(EXAMPLE))
    assert res.exit_code == 0 and "all checks passed" in res.output, res.output
    assert "files match their sha256" in res.output and "is the file the package was built from" in res.output


@pytest.mark.parametrize("case", ["empty", "other folder", "foreign __init__", "not JSON", "trials 0", "seed -1",
                                  "missing file", "no such folder", "a file"])
def test_verify_refuses_what_is_not_an_intact_package_in_one_line(arm4_copy, tmp_path, case):
    path, args = arm4_copy, []
    if case == "empty":
        path = tmp_path / "empty"
        path.mkdir()
    elif case == "other folder":
        path = tmp_path / "other"
        path.mkdir()
        (path / "notes.txt").write_text("hello")
    elif case == "foreign __init__":
        (path / "__init__.py").write_text(f"open({str(tmp_path / 'RAN')!r}, 'w').close()\nraise SystemExit(0)\n")
    elif case == "not JSON":
        (path / "manifest.json").write_text("{nope")
    elif case == "missing file":
        (path / "arm4.h").unlink()
    elif case == "no such folder":
        path = tmp_path / "nothing"
    elif case == "a file":
        path = path / "arm4.h"
    else:
        args = ["--trials", "0"] if case == "trials 0" else ["--seed", "-1"]
    res = _verify(path, *args)
    err = _one_line_error(res, start=f"symgen: {path}")
    assert not case.startswith(("trials", "seed")) or f"--{case.split()[0]}" in err, err
    assert not (tmp_path / "RAN").exists(), "verify ran the package's foreign code"


def _edit(path, fname, old, new):
    text = (path / fname).read_text()
    assert old in text, (fname, old)
    (path / fname).write_text(text.replace(old, new, 1))


def _joint_names_literal(names):
    return "(" + "".join(py_literal(j) + ", " for j in names) + ")"


def _swap_first_joints(path, forge=False):
    """Swap joint_names[0] and [1] in the manifest and the NumPy module; with ``forge``, also
    update the manifest digest in __init__.py and the file hashes, as a forger would."""
    manifest = json.loads((path / "manifest.json").read_text())
    names = list(manifest["joint_names"])
    swapped = [names[1], names[0], *names[2:]]
    old_digest = manifest_digest(manifest)
    manifest["joint_names"] = swapped
    _edit(path, "arm4_numpy.py", _joint_names_literal(names), _joint_names_literal(swapped))
    if forge:
        _edit(path, "__init__.py", old_digest, manifest_digest(manifest))
        manifest["files"] = {f: sha256_text((path / f).read_text()) for f in manifest["files"]}
    (path / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")


@pytest.mark.parametrize("tamper, expect", [
    ("constant in arm4.c", "arm4.c: differs from the file symgen built"),
    ("joint_names in the NumPy module", "arm4_numpy.py: differs from the file symgen built"),
    ("joint_names swapped everywhere, hashes forged", "joint 0 of q is"),
    ("manifest nq", "manifest.json: edited after the build"),
    ("manifest source_sha256", "manifest.json: edited after the build"),
    ("manifest floating_base", "manifest.json: edited after the build"),
    ("manifest frame", "manifest.json: edited after the build"),
    ("manifest joint_names", "manifest.json: edited after the build"),
])
def test_verify_catches_tampering(arm4_copy, tamper, expect):
    path = arm4_copy
    manifest = json.loads((path / "manifest.json").read_text())
    if tamper == "constant in arm4.c":
        text = (path / "arm4.c").read_text()
        import re
        const = re.search(r"\b\d+\.\d{4,}\b", text.split("*/\n", 8)[-1]).group(0)
        _edit(path, "arm4.c", const, str(float(const) * 1.5))
    elif tamper == "joint_names in the NumPy module":
        names = manifest["joint_names"]
        _edit(path, "arm4_numpy.py", _joint_names_literal(names), _joint_names_literal([names[1], names[0], *names[2:]]))
    elif tamper.startswith("joint_names swapped"):
        _swap_first_joints(path, forge=True)
    else:
        key = tamper.split()[-1]
        if key == "frame":
            manifest["options"]["frame"] = "body"
        elif key == "joint_names":
            manifest["joint_names"] = list(reversed(manifest["joint_names"]))
        else:
            manifest[key] = {"nq": 5, "source_sha256": "0" * 64, "floating_base": True}[key]
        (path / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    res = _verify(path, "--urdf", str(EXAMPLE))
    err = _one_line_error(res)
    assert expect in err, err


def test_verify_catches_a_forged_floating_base(arm4_copy):
    """The manifest says free-flyer and its digest in __init__.py is forged to match: the package's
    own floating_base attribute still says fixed, and verify names the key (file hashes forged too)."""
    path = arm4_copy
    manifest = json.loads((path / "manifest.json").read_text())
    old_digest = manifest_digest(manifest)
    manifest["floating_base"] = True
    _edit(path, "__init__.py", old_digest, manifest_digest(manifest))
    manifest["files"] = {f: sha256_text((path / f).read_text()) for f in manifest["files"]}
    (path / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    err = _one_line_error(_verify(path, "--urdf", str(EXAMPLE)))
    assert "floating_base differs from the package's" in err, err


def test_verify_reads_the_floating_base_from_the_manifest(tmp_path):
    path = build(load_urdf(EXAMPLE, floating_base=True), tmp_path,
                 opts=BuildOptions(quantities=("M",), compile=False)).path
    report, ok = verify_package(path, trials=2, urdf=EXAMPLE)              # no floating_base given
    assert ok and "floating_base=True" in report and "own parse of the URDF: mass_matrix" in report, report
    with pytest.raises(SymgenError, match="built with --floating-base"):
        verify_package(path, trials=1, urdf=EXAMPLE, floating_base=False)


@pytest.mark.pinocchio
def test_verify_catches_a_misread_urdf_through_pinocchios_own_parse(tmp_path, monkeypatch):
    """A reader that gets the last link's mass wrong: the package, the numeric reference and
    Pinocchio on symgen's rewrite all share the misreading; Pinocchio's own parse does not."""
    pytest.importorskip("pinocchio")
    robot = load_urdf(EXAMPLE)
    last = robot.bodies[-1]
    wrong = dataclasses.replace(last, inertia=dataclasses.replace(last.inertia, mass=last.inertia.mass * 2))
    misread = dataclasses.replace(robot, bodies=robot.bodies[:-1] + (wrong,))
    path = build(misread, tmp_path, opts=BuildOptions(quantities=("M", "tau"), compile=False)).path
    monkeypatch.setattr(symgen, "load_urdf", lambda *a, **kw: misread)
    report, ok = verify_package(path, trials=2, urdf=EXAMPLE)
    failed = [line for line in report.splitlines() if line.endswith("FAIL")]
    assert not ok and failed and all("own parse" in line for line in failed), report


# ------------------------------------------------------------------------ rebuild in one process

def test_package_rebuilt_in_the_same_process_loads_its_new_binding(tmp_path):
    opts = BuildOptions(quantities=("M",), copt="-O0")
    q = np.linspace(0.1, 0.7, 2)
    first = import_package(build(robots.make("serial", 2, 0), tmp_path, name="pkg", opts=opts).path)
    assert first.backend == "c"
    old = first.c.mass_matrix(q)
    second = import_package(build(robots.make("serial", 2, 1), tmp_path, name="pkg",
                                  opts=dataclasses.replace(opts, force=True)).path)
    assert second.backend == "c"
    assert np.allclose(second.c.mass_matrix(q), second.numpy.mass_matrix(q), rtol=1e-12)
    assert not np.allclose(second.c.mass_matrix(q), old)
    third = import_package(build(robots.make("serial", 3, 0), tmp_path, name="pkg",
                                 opts=dataclasses.replace(opts, force=True)).path)
    assert third.c.mass_matrix(np.zeros(3)).shape == (3, 3)


# ------------------------------------------------------------------------ stale temporary folders

HOLD_LOCK = ("import fcntl, sys, time\nf = open(sys.argv[1])\nfcntl.flock(f, fcntl.LOCK_EX)\n"
             "print('locked', flush=True)\ntime.sleep(120)\n")


def test_live_build_elsewhere_keeps_its_folder_until_its_lock_is_free(tmp_path):
    """A build in another PID namespace (its PID means nothing here) holds the lock of its
    temporary folder: other builds leave it alone; once its lock is free, the next build removes it."""
    tmp = tmp_path / ".pkg.tmp-99999999-abc"
    tmp.mkdir()
    (tmp / "__init__.py").write_text("")
    lock = tmp_path / ".pkg.lock-99999999-abc"
    lock.write_text("")
    holder = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, str(lock)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        build(robots.make("serial", 2, 0), tmp_path, name="pkg", opts=dataclasses.replace(QUICK, force=True))
        assert tmp.is_dir() and lock.exists()
    finally:
        holder.kill()
        holder.wait()
    build(robots.make("serial", 2, 0), tmp_path, name="pkg", opts=dataclasses.replace(QUICK, force=True))
    assert _entries(tmp_path) == ["pkg"]


def test_folder_without_a_lock_is_removed_only_when_older_than_the_threshold(tmp_path):
    left = tmp_path / ".pkg.tmp-12345-xyz"
    left.mkdir()
    build(robots.make("serial", 2, 0), tmp_path, name="pkg", opts=dataclasses.replace(QUICK, force=True))
    assert left.is_dir()
    then = time.time() - package.STALE_AGE - 60
    os.utime(left, (then, then))
    build(robots.make("serial", 2, 0), tmp_path, name="pkg", opts=dataclasses.replace(QUICK, force=True))
    assert _entries(tmp_path) == ["pkg"]


# ------------------------------------------------------------------------ smaller defects

def test_compiler_command_with_arguments_is_split_like_make(tmp_path, monkeypatch):
    gcc = shutil.which("gcc") or shutil.which("cc")
    if gcc is None:
        pytest.skip("no C compiler")
    monkeypatch.setenv("CC", f"env {shlex.quote(gcc)}")                  # as CC="ccache gcc"
    res = build(robots.make("serial", 2, 0), tmp_path, name="pkg", opts=BuildOptions(quantities=("M",), copt="-O0"))
    assert res.compiled and import_package(res.path).backend == "c"


def test_dangling_symlink_at_the_target_is_kept_without_force_and_replaced_with_it(tmp_path):
    link = tmp_path / "pkg"
    link.symlink_to(tmp_path / "gone")
    with pytest.raises(SymgenError, match="already exists"):
        build(robots.make("serial", 2, 0), tmp_path, name="pkg", opts=QUICK)
    assert link.is_symlink()
    build(robots.make("serial", 2, 0), tmp_path, name="pkg", opts=dataclasses.replace(QUICK, force=True))
    assert not link.is_symlink() and (link / "manifest.json").is_file() and _entries(tmp_path) == ["pkg"]


def test_regenerate_command_in_the_headers_is_shell_quoted(tmp_path):
    urdf = tmp_path / "my robot's arm.urdf"
    shutil.copy(EXAMPLE, urdf)
    res = CliRunner().invoke(main, ["build", str(urdf), "--out", str(tmp_path), "--no-compile", "--quiet",
                                    "--quantities", "M", "--name", "pkg"])
    assert res.exit_code == 0, res.output
    command = (tmp_path / "pkg" / "__init__.py").read_text().splitlines()[1].removeprefix("#").strip()
    assert shlex.split(command)[:3] == ["symgen", "build", "my robot's arm.urdf"], command


def test_numpy_one_state_with_inf_gives_nan_like_the_batch(tmp_path):
    pkg = import_package(build(load_urdf(EXAMPLE), tmp_path, opts=BuildOptions(quantities=("M", "tau"),
                                                                             compile=False)).path)
    q = np.array([0.1, np.inf, 0.2, 0.3])
    with np.errstate(invalid="ignore"):
        for f, args in (("mass_matrix", (q,)), ("inverse_dynamics", (q, np.ones(4), np.ones(4)))):
            one = getattr(pkg.numpy, f)(*args)
            batch = getattr(pkg.numpy, f)(*(a[None] for a in args))[0]
            assert np.isnan(one).any() and np.array_equal(one, batch, equal_nan=True), f


# ------------------------------------------------------------------------ newcomer frictions

@pytest.fixture(scope="module")
def compiled_arm4(tmp_path_factory):
    out = tmp_path_factory.mktemp("compiled")
    return build(load_urdf(EXAMPLE), out, opts=BuildOptions(quantities=("M",), copt="-O0")).path


IMPORT = ("import sys, warnings\nwarnings.simplefilter('always')\nsys.path.insert(0, sys.argv[1])\nimport numpy as np\n"
          "import arm4\nimport arm4 as again\nprint(arm4.backend, arm4.mass_matrix(np.zeros(4)).shape)\n")


@pytest.mark.parametrize("case", ["corrupt binding", "another Python's binding", "not built"])
def test_binding_that_cannot_be_loaded_warns_once_says_why_and_how_to_rebuild(compiled_arm4, tmp_path, case):
    out = tmp_path / "out"
    shutil.copytree(compiled_arm4, out / "arm4", ignore=shutil.ignore_patterns("__pycache__"))
    (so,) = (out / "arm4").glob("_arm4_ext_*.so")
    if case == "corrupt binding":
        so.write_bytes(b"not a shared object")
    elif case == "another Python's binding":
        so.rename(so.parent / f"{so.name.split('.')[0]}.cpython-27-x86_64-linux-gnu.so")
    else:
        so.unlink()
    run = subprocess.run([sys.executable, "-c", IMPORT, str(out)], capture_output=True, text=True)
    assert run.returncode == 0 and run.stdout.strip() == "numpy (4, 4)", run.stderr
    if case == "not built":
        assert run.stderr == ""
    else:
        assert run.stderr.count("RuntimeWarning") == 1, run.stderr
        assert "cannot be loaded by this Python" in run.stderr and "symgen build" in run.stderr \
            and "--force" in run.stderr, run.stderr
        assert case != "another Python's binding" or "was built for another Python" in run.stderr, run.stderr


def test_name_clash_is_found_before_the_symbolic_work(tmp_path):
    build(robots.make("serial", 2, 0), tmp_path, name="pkg", opts=QUICK)

    class Progress(BuildProgress):
        def message(self, text):
            raise AssertionError(f"the symbolic work started: {text}")

    with pytest.raises(SymgenError, match="already exists"):
        build(robots.make("serial", 3, 0), tmp_path, name="pkg", opts=QUICK, progress=Progress())


@pytest.mark.parametrize("stem, note", [("solo12", True), ("arm4", False)])
def test_package_name_comes_from_the_robot_and_says_so_when_the_file_is_named_otherwise(tmp_path, stem, note):
    urdf = tmp_path / f"{stem}.urdf"
    shutil.copy(EXAMPLE, urdf)
    res = CliRunner().invoke(main, ["build", str(urdf), "--out", str(tmp_path / "out"), "--no-compile", "--quiet",
                                    "--quantities", "M"])
    assert res.exit_code == 0, res.output
    assert _entries(tmp_path / "out") == ["arm4"]
    assert ("note: package name 'arm4' from the robot's name" in res.stderr and "--name" in res.stderr) == note, \
        res.stderr


def test_symgen_robots_works_after_import_symgen_alone(tmp_path):
    run = subprocess.run([sys.executable, "-c", "import symgen; print(symgen.robots.make('serial', 2, 0).n)"],
                         cwd=tmp_path, capture_output=True, text=True)
    assert run.returncode == 0 and run.stdout.strip() == "2", run.stderr
