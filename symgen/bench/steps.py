"""The steps of ``symgen tables`` that run in a fresh process under a hard timeout: a Table 2
cell (a symbolic run), a package build, a compile of its Python binding. A step is
``target(*args, send)`` and sends its results as dicts as it goes, so a step over its timeout
still reports what it finished."""
from __future__ import annotations

import multiprocessing
import os
import signal
import time
import traceback
from pathlib import Path

from .paper import QUANTITIES, ROUTES


def _child(target, args, conn):
    os.setsid()                        # its own process group: a timeout ends compilers it started too
    try:
        target(*args, conn.send)
    except BaseException as exc:                      # report, never hang the parent
        conn.send({"error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()})
    finally:
        conn.close()


def run_limited(target, args, timeout: float) -> tuple[list, bool]:
    """Run ``target(*args, send)`` in a fresh (spawned) process; return the messages it sent and
    whether it finished before ``timeout`` seconds (it is killed otherwise)."""
    ctx = multiprocessing.get_context("spawn")
    recv, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(target, args, send), daemon=True)
    proc.start()
    send.close()
    messages, deadline, done = [], time.monotonic() + timeout, False
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        if recv.poll(min(left, 0.5)):
            try:
                messages.append(recv.recv())
            except EOFError:
                done = True
                break
        elif not proc.is_alive() and not recv.poll(0):
            done = True
            break
    try:
        os.killpg(proc.pid, signal.SIGKILL)        # the step and anything it started (gcc)
    except (ProcessLookupError, PermissionError):
        pass
    if proc.is_alive():                            # killed before it made its own group
        proc.kill()
    proc.join()
    recv.close()
    return messages, done


def merged(messages) -> dict:
    """The messages of a step as one dict; a step that failed raises RuntimeError with its traceback."""
    out = {}
    for m in messages:
        out.update(m)
    if "error" in out:
        raise RuntimeError(out["error"] + "\n" + out.get("traceback", ""))
    return out


def table2_cell(kind, n, route, send):
    """One Table 2 cell: the symbolic run, then CSE and the op count."""
    from .. import robots
    from ..codegen.program import count_ops
    from ..codegen.symbolic import optimize, trace
    from ..quantities import SweepOptions

    method, naming, frame, _ = ROUTES[route]
    robot = robots.make(kind, n)
    t0 = time.perf_counter()
    fn = trace(robot, "Gamma", SweepOptions(frame=frame, gamma_method=method), naming=naming)
    send({"run_s": time.perf_counter() - t0})
    fn = optimize(fn, use_cse=True)                 # the passes of symgen build, with sympy.cse
    send({"run_cse_s": time.perf_counter() - t0, "ops": count_ops(fn)["total"]})


def build_package(kind, n, out_dir, send):
    """Write the C and NumPy package of a synthetic system (and its URDF): no compile here."""
    from .. import robots
    from ..codegen.build import BuildOptions, build
    from ..urdf import write_urdf

    robot = robots.make(kind, n)
    urdf = Path(out_dir) / f"{robot.name}.urdf"
    write_urdf(robot, urdf)
    t0 = time.perf_counter()
    result = build(robot, out_dir, name=robot.name, opts=BuildOptions(quantities=QUANTITIES, compile=False,
                                                                      force=True, command=f"symgen tables ({kind} {n})"))
    send({"path": str(result.path), "urdf": str(urdf), "build_s": time.perf_counter() - t0, "dof": robot.n,
          "ops": result.ops})


_BUILT: dict = {}         # (kind, n, folder) -> (messages, done): one build per system per run


def built_package(kind, n, work: Path, timeout: float):
    """The messages of :func:`build_package` for a system, built once per run (Table 1 and the
    figures share it)."""
    key = (kind, n, str(work))
    if key not in _BUILT:
        _BUILT[key] = run_limited(build_package, (kind, n, str(work)), timeout)
    return _BUILT[key]


def compile_binding(path, name, copt, send):
    from ..codegen.build import compile_extension

    t0 = time.perf_counter()
    compile_extension(Path(path), name, opt=copt)
    send({"compile_s": time.perf_counter() - t0})
