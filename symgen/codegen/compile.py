"""Compiling a package's C: the CPython binding (and, with ``--target casadi``, the CasADi
library) from ``NAME.c`` and its extension source, in parts on every core for big robots, with
the compiler's OpenMP and ``-march=native`` when it has them (probed once per compiler)."""
from __future__ import annotations

import contextlib
import functools
import json
import os
import shlex
import shutil
import signal
import subprocess
import sysconfig
import tempfile
import time
from pathlib import Path

from ..errors import BuildError


def compile_extension(folder: Path, name: str, cc: str | None = None, opt: str = "-O2", native: bool = True,
                      libraries: tuple = (), timeout: float = 0, includes: tuple = (),
                      optional: tuple = ()) -> Path:
    """Compile NAME.c and its CPython binding into one extension module inside ``folder``; the
    module's name is the manifest's ``c_extension``. ``cc`` (default: $CC, else cc) is split
    like a shell word list, as make does (``CC="ccache gcc"``). The compiler runs in its own
    process group, killed whole when the build is interrupted (cc1 and as are not orphaned).
    ``native``: for this machine's instruction set (``-march=native`` where the compiler takes
    it: FMA and AVX, as the C loop benchmark and Pinocchio's harness are compiled), else for the
    compiler's default target (``--portable``: a binding copied to an older CPU still runs).
    ``libraries``: (file name, C file) pairs, each linked with NAME.c's objects into a shared library
    of its own in ``folder`` (the targets built on the C: NAME_casadi.so). ``timeout``: seconds the
    compile step and then the link step may each take (0: no limit); past it the compilers are
    killed and a BuildError says so. ``includes``: more header folders (the XLA FFI's, for NAME_xla.c).
    ``optional``: file names of ``libraries`` whose compile or link may fail without failing the
    build (NAME_xla.so: the JAX module then runs its own code); such a failure is a RuntimeWarning
    naming the C file, and that library is not written."""
    cc = cc or os.environ.get("CC") or "cc"
    try:
        words = shlex.split(cc)
    except ValueError as exc:
        raise BuildError(f"C compiler {cc!r}: {exc} (set CC, or build with --no-compile)") from exc
    if not words or shutil.which(words[0]) is None:
        raise BuildError(f"C compiler {cc!r} not found (set CC, or build with --no-compile)")
    ext = extension_name(folder, name)
    target = folder / f"{ext}{sysconfig.get_config_var('EXT_SUFFIX') or '.so'}"
    # -ffp-contract=fast: a * b + c as one fused multiply-add where the CPU has it (gcc's
    # -std=c99 would turn that off; the C loop benchmark and Pinocchio's C++ use it too)
    flags = [opt, *(native_flags(tuple(words)) if native else ()), "-fPIC", "-std=c99", "-ffp-contract=fast",
             *openmp_flags(tuple(words)),
             f"-I{sysconfig.get_paths()['include']}", f"-I{folder}", *(f"-I{d}" for d in includes)]
    source = folder / f"{name}.c"
    with tempfile.TemporaryDirectory(prefix="symgen-cc-") as tmp:
        units = [*compile_units(source, Path(tmp)), *(folder / c for _, c in libraries), folder / f"{ext}.c"]
        objects = [Path(tmp) / f"unit{k}.o" for k in range(len(units))]
        n_c = len(units) - len(libraries) - 1
        c_objects = objects[:n_c]                                        # NAME.c's, shared by every library
        # each compile: (its C file, the optional library it makes, whose failure is only a warning)
        whose = ([(u, None) for u in units[:n_c]] + [(u, lib if lib in optional else None)
                                                      for u, (lib, _) in zip(units[n_c:], libraries)] + [(units[-1], None)])
        # each link: (what it writes, its own object, the compile that makes that object)
        links = [(target, objects[-1], len(units) - 1)] + [(folder / lib, o, n_c + k) for k, ((lib, _), o)
                                                            in enumerate(zip(libraries, objects[n_c:]))]
        try:
            results = _run_compilers([[*words, *flags, "-c", str(u), "-o", str(o)]
                                      for u, o in zip(units, objects)], timeout or None)
            failed = _failures(results, whose)
            if not failed:
                links = [link for link in links if results[link[2]][0] == 0]   # an optional one that failed: not linked
                results = _run_compilers([[*words, *flags, "-shared", *map(str, [*c_objects, o]), "-o", str(path), "-lm"]
                                          for path, o, _ in links], timeout or None)
                failed = _failures(results, [whose[k] for _, _, k in links])
        except subprocess.TimeoutExpired as exc:
            raise BuildError(f"{source}: compilation timed out after {timeout:g} s (--timeout; {exc.cmd[0]} killed); "
                             f"raise --timeout (0: none), limit --quantities or build with --no-compile") from None
    if failed:
        unit, err = failed
        first = (err.strip().splitlines() or ["(no output)"])[0]
        raise BuildError(f"{source if unit.parent != folder else unit}: compilation failed: {first}")
    return target


#: NAME.c above this size (bytes) is compiled as several units at once, one per core
UNIT_SPLIT_BYTES = 200_000


def compile_units(source: Path, tmp: Path, cores: int | None = None) -> list:
    """NAME.c as the files to compile, in parallel: itself when small or on one core; else its
    functions (``/* @symgen-unit */`` blocks, each with the static parts it calls) spread over
    one unit per core by size, each unit with the shared head (includes, macros) and the first
    also with the package's data (``@symgen-data`` .. ``@symgen-data-end``), each ending with the
    file's tail (``@symgen-tail`` to the end: the helpers' #undefs), written to ``tmp``
    (``#include "NAME.h"`` resolves through ``-I`` the package folder). gcc's time on long
    straight-line code is the larger part of a big build (20-DoF chain, all functions: 47 s of
    -O2 on one core)."""
    text = source.read_text(encoding="utf-8")
    cores = cores or os.cpu_count() or 1
    blocks = text.split("/* @symgen-unit ")
    if len(text) <= UNIT_SPLIT_BYTES or cores < 2 or len(blocks) < 3 or "/* @symgen-data-end */" not in blocks[0]:
        return [source]
    blocks[-1], tail = (blocks[-1].split("/* @symgen-tail", 1) + [""])[:2]
    tail = "/* @symgen-tail" + tail if tail else ""                 # every unit's end (the helpers' #undefs)
    head, data_and_rest = blocks[0].split("/* @symgen-data:", 1)
    data = "/* @symgen-data:" + data_and_rest
    bins = [[] for _ in range(min(cores, len(blocks) - 1))]
    sizes = [0] * len(bins)
    for block in sorted(blocks[1:], key=len, reverse=True):          # largest first, to the lightest
        k = sizes.index(min(sizes))
        bins[k].append("/* @symgen-unit " + block)
        sizes[k] += len(block)
    paths = []
    for k, parts in enumerate(bins):
        path = tmp / f"{source.stem}.unit{k}.c"
        path.write_text(head + (data if k == 0 else "") + "".join(parts) + tail, encoding="utf-8")
        paths.append(path)
    return paths


def _run_compilers(commands, timeout=None) -> list:
    """Run compiler commands at once, each in its own process group, all killed whole (cc1 and
    as are not orphaned) when the build is interrupted or ``timeout`` (s, from their start: they
    run side by side) passes (then subprocess.TimeoutExpired); [(return code, stderr)] in order."""
    procs, results = [], []
    deadline = None if timeout is None else time.monotonic() + timeout
    # gcc's own temporaries (cc*.s, cc*.o) go to a folder of ours: a compiler killed by
    # SIGKILL cannot remove them, so the folder is removed once every compiler has ended
    scratch = None
    try:
        scratch = tempfile.mkdtemp(prefix="symgen-cc-")
        env = dict(os.environ, TMPDIR=scratch)
        for cmd in commands:
            procs.append(subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                          start_new_session=True, env=env))
        for p in procs:
            _, err = p.communicate(timeout=None if deadline is None else max(0.0, deadline - time.monotonic()))
            results.append((p.returncode, err))
    except BaseException:
        for p in procs:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(p.pid, signal.SIGKILL)
            p.wait()
        raise
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    return results


def _failures(results, whose) -> tuple | None:
    """(C file, stderr) of the first failed command that must succeed, or None; each failed
    optional one (``whose``: (C file, optional library or None) per command) is a RuntimeWarning
    naming its file."""
    import warnings

    for (code, err), (source, library) in zip(results, whose):
        first = ((err or "").strip().splitlines() or ["(no output)"])[0]
        if code != 0 and library:
            warnings.warn(f"{source}: compilation failed, so {library} is not built: {first}", RuntimeWarning)
        elif code != 0:
            return source, err or "(no output)"
    return None


_OPENMP_PROBE = "#include <omp.h>\nint probe(void) { return omp_get_max_threads(); }\n"


def openmp_flags(cc: tuple) -> tuple:
    """``("-fopenmp",)`` when the compiler ``cc`` (its words) compiles and links a shared
    library with OpenMP, else ``()``: the C entry points NAME_<function>_batch then run serially
    (the Python binding uses threads of its own either way). ``SYMGEN_OPENMP=0`` in the
    environment turns threads off (read at each build, so it is not cached)."""
    if os.environ.get("SYMGEN_OPENMP", "1") == "0":
        return ()
    return _probe_openmp(cc)


@functools.lru_cache(maxsize=None)
def _probe_openmp(cc: tuple) -> tuple:
    with tempfile.TemporaryDirectory(prefix="symgen-omp-") as tmp:
        src = Path(tmp) / "probe.c"
        src.write_text(_OPENMP_PROBE, encoding="utf-8")
        try:
            (returncode, _), = _run_compilers([[*cc, "-fopenmp", "-fPIC", "-shared", str(src), "-o",
                                                 str(Path(tmp) / "probe.so")]], timeout=60)
        except (OSError, subprocess.SubprocessError):
            return ()
        return ("-fopenmp",) if returncode == 0 else ()


@functools.lru_cache(maxsize=None)
def native_flags(cc: tuple) -> tuple:
    """``("-march=native",)`` when the compiler ``cc`` (its words) takes it, else ``()``. Measured
    (panda's C from Python, a batch of 10^4 states): the binding at gcc's default x86-64 target
    has no FMA and no AVX, and ran 2-3x slower per state than the same C in the C loop."""
    with tempfile.TemporaryDirectory(prefix="symgen-march-") as tmp:
        src = Path(tmp) / "probe.c"
        src.write_text("double f(double a, double b, double c) { return a * b + c; }\n", encoding="utf-8")
        try:
            (returncode, _), = _run_compilers([[*cc, "-march=native", "-c", str(src), "-o", str(Path(tmp) / "probe.o")]],
                                              timeout=60)
        except (OSError, subprocess.SubprocessError):
            return ()
        return ("-march=native",) if returncode == 0 else ()


def extension_name(folder: Path, name: str) -> str:
    """The binding's module name, as the package's manifest records it."""
    try:
        return json.loads((Path(folder) / "manifest.json").read_text(encoding="utf-8"))["c_extension"]
    except (OSError, ValueError, KeyError, TypeError):
        return f"_{name}_ext"
