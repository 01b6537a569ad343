"""A build on several processes cannot hang (issue #21): builds in a row with --jobs 2 and 4 give
the bytes of one process; SIGTERM, SIGINT and SIGHUP at random moments leave no process and no
temporary file or folder; a build inside a process with threads running (and after an OpenMP
batch) finishes; a worker killed mid-build and the timeout end in a BuildError.

Each process check scans /proc, so those tests run on Linux only."""
from __future__ import annotations

import ctypes
import dataclasses
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from symgen import robots
from symgen.codegen import Progress
from symgen.codegen.build import BuildOptions, build, functions_for, import_package
from symgen.errors import BuildError
from symgen.urdf import load_urdf, write_urdf

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "symgen" / "examples" / "arm4.urdf"
#: six sweeps (crba, algorithm1, algorithm2, rnea, regressor, fd_derivatives): work for four workers
QUANTITIES = "M,C,Gamma,tau,Y,dqdd"
linux = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="scans /proc")


def _cli(out, *args, urdf=EXAMPLE):
    return [sys.executable, str(ROOT / "cli.py"), "build", str(urdf), "--out", str(out), "--quiet",
            "--quantities", QUANTITIES, *args]


def _files(folder: Path) -> dict:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def _processes():
    """{pid: (state, ppid, pgid, cmdline, environ)} of this user's processes (a zombie's
    cmdline and environ are empty)."""
    out = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            state, ppid, pgid = stat[stat.rindex(")") + 2:].split()[:3]
            out[int(entry)] = (state, int(ppid), int(pgid), Path(f"/proc/{entry}/cmdline").read_bytes(),
                               Path(f"/proc/{entry}/environ").read_bytes())
        except (OSError, ValueError):
            continue                      # gone meanwhile, or another user's
    return out


def _workers_of(pid: int) -> list:
    """The worker processes of ``pid`` still alive or not reaped (zombies)."""
    return [p for p, (state, ppid, _, cmd, _) in _processes().items()
            if ppid == pid and (b"symgen.codegen.worker" in cmd or state == "Z")]


def _leftovers(pgid: int, tmpdir: Path, wait: float = 1.5) -> list:
    """Processes still alive of the process group ``pgid`` or with TMPDIR ``tmpdir`` or a folder
    in it (compilers run in their own session, with TMPDIR a folder the build makes in its own),
    after up to ``wait`` seconds."""
    markers = (f"TMPDIR={tmpdir}\0".encode(), f"TMPDIR={tmpdir}/".encode())
    deadline = time.monotonic() + wait
    while True:
        alive = [(p, state, cmd[:120]) for p, (state, _, g, cmd, env) in _processes().items()
                 if g == pgid or any(m in env for m in markers)]
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.1)


def _consecutive_builds(tmp_path, runs: dict):
    """Each build, --force over the last, writes the bytes of a build on one process."""
    subprocess.run(_cli(tmp_path / "one", "--jobs", "1", "--no-compile"), check=True, timeout=600)
    expected = _files(tmp_path / "one" / "arm4")
    for jobs, count in runs.items():
        for k in range(count):
            run = subprocess.run(_cli(tmp_path / "many", "--jobs", str(jobs), "--no-compile", "--force"),
                                 capture_output=True, text=True, timeout=600)
            assert run.returncode == 0, f"--jobs {jobs}, build {k + 1}: {run.stderr}"
            assert _files(tmp_path / "many" / "arm4") == expected, f"--jobs {jobs}, build {k + 1}"
    assert sorted(p.name for p in (tmp_path / "many").iterdir()) == ["arm4"]


def test_builds_in_a_row_on_2_and_4_processes_write_the_bytes_of_one(tmp_path):
    _consecutive_builds(tmp_path, {2: 1, 4: 1})


@pytest.mark.slow
@pytest.mark.timeout(3600)                # 70 builds: over the suite's 900 s per test on a loaded machine
def test_50_builds_with_the_default_jobs_and_20_with_4_finish(tmp_path):
    """The issue's count: 50 builds with the default --jobs (one per core) and 20 with --jobs 4."""
    _consecutive_builds(tmp_path, {0: 50, 4: 20})


def _interrupted_builds(tmp_path, seed: int, count: int):
    """Builds signalled at a random moment (arm4: often while compiling; an 8-joint chain: while
    its workers run sweeps of seconds, which outlive the 1.5 s allowed unless killed)."""
    rng = random.Random(seed)
    signals = [signal.SIGTERM, signal.SIGINT, signal.SIGHUP]
    chain = tmp_path / "serial8.urdf"
    write_urdf(robots.make("serial", 8, 3), chain)
    for k in range(count):
        signum, urdf = signals[k % 3], (EXAMPLE, chain)[k % 2]
        delay = rng.uniform(0.0, 4.0)
        what = f"seed {seed}, build {k + 1} ({urdf.stem}): {signum.name} after {delay:.2f} s"
        tmpdir, out = tmp_path / f"tmp{k}", tmp_path / f"out{k}"
        tmpdir.mkdir()
        proc = subprocess.Popen(_cli(out, "--jobs", "2", "--copt", "-O0", "--name", "arm4", urdf=urdf),
                                start_new_session=True,
                                env=dict(os.environ, TMPDIR=str(tmpdir)),
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            time.sleep(delay)
            proc.send_signal(signum)
            _, err = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            pytest.fail(f"{what}: the build did not end within 60 s")
        left = _leftovers(proc.pid, tmpdir)
        if left:
            os.killpg(proc.pid, signal.SIGKILL)
        assert not left, f"{what}: still running: {left}"
        leftover_files = sorted(p.name for p in tmpdir.iterdir())
        leftover_files += sorted(p.name for p in out.iterdir() if p.name != "arm4") if out.exists() else []
        assert not leftover_files, f"{what}: left behind {leftover_files}"
        assert proc.returncode in (0, 128 + signum, -signum, 1, 130), f"{what}: exit code {proc.returncode}: {err}"
        if proc.returncode == 0:          # finished before the signal: the whole package
            assert (out / "arm4" / "manifest.json").exists(), what


@linux
def test_a_build_interrupted_by_sigterm_sigint_sighup_leaves_no_process_and_no_temporary(tmp_path):
    _interrupted_builds(tmp_path, seed=int(os.environ.get("SYMGEN_TEST_SEED", 21)), count=3)


@linux
@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_thirty_interrupted_builds_leave_no_process_and_no_temporary(tmp_path):
    _interrupted_builds(tmp_path, seed=int(os.environ.get("SYMGEN_TEST_SEED", 2126)), count=30)


def test_a_build_in_a_process_with_threads_running_after_an_openmp_batch(tmp_path):
    """In this process (the test runner's, threads and all): a batch of a compiled package on
    the binding's threads and on OpenMP's, then the symbolic runs on 2 processes while threads
    hold a lock and run NumPy; they give the printed functions of one process."""
    robot = load_urdf(EXAMPLE)
    pkg = import_package(build(robot, tmp_path, opts=BuildOptions(quantities=("M",), copt="-O0")).path)
    q = np.random.default_rng(21).uniform(0, 2 * np.pi, (512, robot.n))
    assert np.allclose(pkg.c.mass_matrix(q)[7], pkg.numpy.mass_matrix(q[7]))     # the binding's threads
    # the C entry point's OpenMP batch (libgomp's thread pool stays in this process)
    batch = ctypes.CDLL(pkg.c._ext.__file__).arm4_mass_matrix_batch_threads
    out = np.zeros((512, robot.n, robot.n))
    batch(ctypes.c_size_t(512), ctypes.c_int(2), q.ctypes.data_as(ctypes.c_void_p), out.ctypes.data_as(ctypes.c_void_p))
    assert np.allclose(out[300], pkg.numpy.mass_matrix(q[300])), f"openmp={pkg.c.openmp}"
    stop, lock = threading.Event(), threading.Lock()

    def busy():
        while not stop.is_set():
            with lock:
                np.linalg.inv(np.eye(30) + 0.01)
    threads = [threading.Thread(target=busy, daemon=True) for _ in range(3)]
    for t in threads:
        t.start()
    try:
        opts = BuildOptions(quantities=("M", "C", "Gamma", "tau"), compile=False, timeout=300)
        parallel, ops, _ = functions_for(robot, dataclasses.replace(opts, jobs=2))
    finally:
        stop.set()
        for t in threads:
            t.join()
    alone, ops_alone, _ = functions_for(robot, dataclasses.replace(opts, jobs=1))
    assert parallel == alone and ops == ops_alone
    assert not _workers_of(os.getpid())


class _KillWorkers(Progress):
    """At the first tick of a worker's sweep, SIGKILL every worker of this process."""

    def __init__(self):
        self.killed = []

    def tick(self, label, done, total):
        if not self.killed:
            self.killed = _workers_of(os.getpid())
            for pid in self.killed:
                os.kill(pid, signal.SIGKILL)


@linux
def test_a_worker_killed_mid_build_is_a_build_error_naming_its_sweep():
    progress = _KillWorkers()
    opts = BuildOptions(quantities=("M", "C", "Gamma", "dqdd"), compile=False, jobs=2, timeout=300)
    with pytest.raises(BuildError, match=r"worker process of sweep \w+ \(.+\) ended without its result "
                                         r"\(killed by SIGKILL\)"):
        functions_for(robots.make("tree", 5, 4), opts, progress)
    assert progress.killed, "no worker was running at the first tick"
    assert not _workers_of(os.getpid())           # reaped: no zombie


def test_the_timeout_is_a_build_error_naming_the_sweeps_still_running():
    opts = BuildOptions(quantities=("C", "Gamma", "dqdd"), compile=False, jobs=2, timeout=0.2)
    t0 = time.monotonic()
    with pytest.raises(BuildError, match=r"timed out after 0.2 s \(--timeout\) with sweep \w+ \(.+\) still running"):
        functions_for(robots.make("serial", 6, 4), opts)
    assert time.monotonic() - t0 < 10
    if Path("/proc/self/stat").exists():
        assert not _workers_of(os.getpid())


def test_cli_timeout_exits_2_with_one_line(tmp_path):
    run = subprocess.run(_cli(tmp_path, "--jobs", "2", "--no-compile", "--timeout", "0.1"),
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 2, run.stderr
    assert run.stderr.strip().startswith("symgen: symbolic runs: timed out after 0.1 s"), run.stderr
    assert len(run.stderr.strip().splitlines()) == 1, run.stderr


@pytest.mark.parametrize("kind", ["mimic", "free_flyer"])
def test_a_mimic_and_a_free_flyer_robot_reach_the_workers_whole(tmp_path, kind):
    """The robot goes to the workers as a pickle (a forked worker inherited it): a --mimic robot
    (the reduced view of a full model) and a free-flyer print on two processes what they print
    on one."""
    from test_mimic import gripper

    urdf = tmp_path / "gripper.urdf"
    urdf.write_text(gripper())
    robot = load_urdf(urdf, mimic=True) if kind == "mimic" else load_urdf(EXAMPLE, floating_base=True)
    opts = BuildOptions(quantities=("M", "C", "tau", "J"), compile=False, timeout=300)
    assert functions_for(robot, dataclasses.replace(opts, jobs=2))[:2] == \
        functions_for(robot, dataclasses.replace(opts, jobs=1))[:2]


def test_an_error_in_a_worker_is_the_error_one_process_raises():
    """A user error met inside a sweep (an unknown frame, found by frame kinematics' sweep) comes
    back from the worker as itself, with the worker's traceback as its cause."""
    robot = load_urdf(EXAMPLE)
    raised = {}
    for jobs in (1, 2):
        with pytest.raises(Exception) as info:
            functions_for(robot, BuildOptions(quantities=("M", "oMf"), frames=("nope",), compile=False, jobs=jobs))
        raised[jobs] = (type(info.value), str(info.value))
    assert raised[2] == raised[1] and "nope" in raised[1][1], raised


@linux
def test_a_hanging_compiler_is_killed_at_the_timeout_and_nothing_is_written(tmp_path):
    """--timeout covers each C compiler command too: a compiler that hangs on the package's C (the
    probes pass through to cc) is killed with its process group at the timeout; the build exits 2
    with one line, and no package, compiler or temporary folder is left."""
    fake = tmp_path / "slowcc"
    fake.write_text('#!/bin/sh\ncase "$*" in *probe*) ;; *" -c "*) exec sleep 300;; esac\nexec cc "$@"\n')
    fake.chmod(0o755)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, "CC": str(fake), "TMPDIR": str(tmp)}
    t0 = time.monotonic()
    run = subprocess.run([sys.executable, str(ROOT / "cli.py"), "build", str(EXAMPLE), "--out", str(tmp_path / "out"),
                          "--quiet", "--quantities", "M", "--jobs", "1", "--timeout", "3"],
                         capture_output=True, text=True, timeout=240, env=env)
    assert run.returncode == 2, run.stderr
    err = run.stderr.strip()
    assert len(err.splitlines()) == 1 and "arm4.c: compilation timed out after 3 s (--timeout" in err, err
    assert time.monotonic() - t0 < 120
    assert not _leftovers(-1, tmp), "a compiler outlived the build"
    assert not list(tmp.iterdir()), sorted(tmp.iterdir())
    assert not (tmp_path / "out" / "arm4").exists()
