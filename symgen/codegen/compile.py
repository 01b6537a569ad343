"""Compiling a package's C: the CPython binding (and, with ``--target casadi``, the CasADi
library) from ``NAME.c`` and its extension source, in parts on every core for big robots, with
the compiler's OpenMP and ``-march=native`` when it has them (probed once per compiler)."""
from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import shlex
import sys
import shutil
import signal
import subprocess
import sysconfig
import tempfile
import threading
import time
from pathlib import Path

from ..errors import BuildError


def compile_extension(folder: Path, name: str, cc: str | None = None, opt: str = "-O2", native: bool = True,
                      libraries: tuple = (), timeout: float = 0, includes: tuple = (),
                      optional: tuple = (), cache=None, clock=None) -> Path:
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
    naming the C file, and that library is not written. ``cache``: a :class:`~.cache.Cache`
    whose compiled objects are used for the units whose text, headers, compiler and flags are
    those of an earlier compile (NAME.c is then split one unit per function, so that a change
    recompiles only the functions it changed); ``clock``: a :class:`~.timings.Timings` that gets
    the ``compile`` and ``link`` phases and each unit's and link's seconds."""
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
        units = [*compile_units(source, Path(tmp), per_function=cache is not None), *(folder / c for _, c in libraries),
                 folder / f"{ext}.c"]
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
            t0 = time.perf_counter()
            identity = compiler_identity(tuple(words), tuple(f for f in flags if f.startswith(("-m", "-f")))) \
                if cache is not None else ""
            results = _compile_cached([[*words, *flags, "-c", str(u), "-o", str(o)] for u, o in zip(units, objects)],
                                      units, objects, timeout or None, cache, folder, Path(tmp), clock, identity)
            if clock is not None:
                clock.add("compile", time.perf_counter() - t0)
            failed = _failures(results, whose)
            if not failed:
                t0 = time.perf_counter()
                links = [link for link in links if results[link[2]][0] == 0]   # an optional one that failed: not linked
                seconds: list = []
                results = _run_compilers([[*words, *flags, "-shared", *map(str, [*c_objects, o]), "-o", str(path), "-lm"]
                                          for path, o, _ in links], timeout or None, seconds=seconds)
                failed = _failures(results, [whose[k] for _, _, k in links])
                if clock is not None:
                    clock.add("link", time.perf_counter() - t0)
                    clock.links.extend({"output": path.name, "seconds": round(t, 3)} for (path, _, _), t in zip(links, seconds))
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
_UNIT_NAME = re.compile(r"([A-Za-z_][A-Za-z0-9_]*) \*/")


def compile_units(source: Path, tmp: Path, cores: int | None = None, per_function: bool = False) -> list:
    """NAME.c as the files to compile, in parallel: itself when small or on one core; else its
    functions (``/* @symgen-unit */`` blocks, each with the static parts it calls) spread over
    one unit per core by size, each unit with the shared head (includes, macros) and the first
    also with the package's data (``@symgen-data`` .. ``@symgen-data-end``), each ending with the
    file's tail (``@symgen-tail`` to the end: the helpers' #undefs), written to ``tmp``
    (``#include "NAME.h"`` resolves through ``-I`` the package folder). gcc's time on long
    straight-line code is the larger part of a big build (20-DoF chain, all functions: 47 s of
    -O2 on one core). ``per_function`` (a build with the object cache): past the size, one unit
    per function and one for the data, whatever the cores, so that a unit's text changes only
    when its function does."""
    text = source.read_text(encoding="utf-8")
    cores = cores or os.cpu_count() or 1
    blocks = text.split("/* @symgen-unit ")
    if len(text) <= UNIT_SPLIT_BYTES or (cores < 2 and not per_function) or len(blocks) < 3 \
            or "/* @symgen-data-end */" not in blocks[0]:
        return [source]
    blocks[-1], tail = (blocks[-1].split("/* @symgen-tail", 1) + [""])[:2]
    tail = "/* @symgen-tail" + tail if tail else ""                 # every unit's end (the helpers' #undefs)
    head, data_and_rest = blocks[0].split("/* @symgen-data:", 1)
    data = "/* @symgen-data:" + data_and_rest
    if per_function:
        paths = [tmp / f"{source.stem}.data.c"]
        paths[0].write_text(head + data, encoding="utf-8")
        for block in blocks[1:]:
            unit = _UNIT_NAME.match(block)
            path = tmp / f"{source.stem}.{unit.group(1) if unit else len(paths)}.c"
            path.write_text(head + "/* @symgen-unit " + block, encoding="utf-8")
            paths.append(path)
        return paths
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


def _run_compilers(commands, timeout=None, jobs: int | None = None, seconds: list | None = None) -> list:
    """Run compiler commands side by side, at most ``jobs`` at a time (default: all at once), in
    the order given, each in its own process group, all killed whole (cc1 and as are not
    orphaned) when the build is interrupted or ``timeout`` (s, from the first start) passes (then
    subprocess.TimeoutExpired); [(return code, stderr)] in order. ``seconds``, a list, gets each
    command's wall time."""
    commands = list(commands)
    procs, lock, pending = {}, threading.Lock(), list(range(len(commands)))
    outcome, spent, errors, stop = [None] * len(commands), [0.0] * len(commands), [], threading.Event()
    deadline = None if timeout is None else time.monotonic() + timeout
    # gcc's own temporaries (cc*.s, cc*.o) go to a folder of ours: a compiler killed by
    # SIGKILL cannot remove them, so the folder is removed once every compiler has ended
    scratch = None

    def lane():
        while not stop.is_set():
            with lock:
                if not pending:
                    return
                k = pending.pop(0)
                try:
                    t = time.perf_counter()
                    procs[k] = p = subprocess.Popen(commands[k], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                                    text=True, start_new_session=True, env=env)
                except BaseException as exc:    # OSError: the compiler cannot start
                    errors.append(exc)
                    stop.set()
                    return
            _, err = p.communicate()
            spent[k], outcome[k] = time.perf_counter() - t, (p.returncode, err)

    threads = []
    try:
        scratch = tempfile.mkdtemp(prefix="symgen-cc-")
        env = dict(os.environ, TMPDIR=scratch)
        threads = [threading.Thread(target=lane, daemon=True) for _ in range(min(jobs or len(commands), len(commands)))]
        for thread in threads:
            thread.start()
        for thread in threads:
            # joined in short waits: a SIGTERM the kernel hands to a lane thread only marks the
            # signal, and the main thread runs the CLI's handler when it next wakes, so a join
            # without a timeout would sit until the compiler ends
            while thread.is_alive() and (deadline is None or time.monotonic() < deadline):
                thread.join(0.2)
            if thread.is_alive():
                running = [commands[k] for k in procs if outcome[k] is None] or commands
                raise subprocess.TimeoutExpired(running[0], timeout)
        if errors:
            raise errors[0]
    except BaseException:
        stop.set()
        with lock:
            started = list(procs.values())
        for p in started:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(p.pid, signal.SIGKILL)
            p.wait()
        for thread in threads:
            thread.join(5)
        raise
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    if seconds is not None:
        seconds.extend(spent)
    return outcome


def _compile_cached(commands, units, objects, timeout, cache, folder: Path, tmp: Path, clock, identity="") -> list:
    """[(return code, stderr)] of the compile ``commands`` (unit k to object k), those found in
    ``cache`` (:class:`~.cache.Cache` or None) copied from it instead, the others compiled
    largest first (with the cache, at most one per core at a time) and stored."""
    keys = [object_key(cmd, unit, folder, tmp, identity) for cmd, unit in zip(commands, units)] \
        if cache is not None else None
    results, seconds, state, todo = [None] * len(commands), [0.0] * len(commands), ["off"] * len(commands), []
    for k in range(len(commands)):
        if keys is not None:
            t = time.perf_counter()
            entry = cache.get("objects", keys[k])
            if entry is not None and _deps_unchanged(entry[0].get("deps", ())):
                objects[k].write_bytes(entry[1])
                results[k], seconds[k], state[k] = (0, ""), time.perf_counter() - t, "hit"
                continue
            state[k] = "miss"
        todo.append(k)
    todo.sort(key=lambda k: -units[k].stat().st_size)
    run = [[*commands[k], *(("-MD", "-MF", f"{objects[k]}.d") if keys is not None else ())] for k in todo]
    spent: list = []
    # one unit per function (the cache's split): one compiler per core; else the few units at once
    jobs = (os.cpu_count() or 1) if keys is not None else None
    for k, result, t in zip(todo, _run_compilers(run, timeout, jobs=jobs, seconds=spent), spent):
        results[k], seconds[k] = result, t
        if keys is not None and result[0] == 0:
            deps = _deps(Path(f"{objects[k]}.d"), units[k], folder, tmp)
            if deps is not None:
                cache.put("objects", keys[k], objects[k].read_bytes(), {"deps": deps})
    if clock is not None:
        clock.units.extend({"unit": u.name, "bytes": u.stat().st_size, "seconds": round(t, 3), "cache": c}
                           for u, t, c in zip(units, seconds, state))
    return results


#: what the C compiler reads from the environment besides its command line
_COMPILER_ENV = ("CPATH", "C_INCLUDE_PATH", "GCC_EXEC_PREFIX", "COMPILER_PATH", "LIBRARY_PATH", "SOURCE_DATE_EPOCH",
                 "GCC_COMPARE_DEBUG", "DEPENDENCIES_OUTPUT", "SUNPRO_DEPENDENCIES")


def object_key(command, unit: Path, folder: Path, tmp: Path, identity: str) -> str:
    """The object cache's key of compiling ``unit`` with ``command`` (:mod:`.cache`): the unit's
    name and text, the package's headers (their code: :func:`code_text`), the command (the package and temporary folders named
    by role, not by path: they change with every build), the compiler's identity and the
    environment it reads."""
    import hashlib

    h = hashlib.sha256(b"object-1\0")
    words = [w.replace(str(folder), "<package>").replace(str(tmp), "<tmp>") for w in command]
    words += ["--identity", identity]
    words += [f"{k}={os.environ.get(k, '')}" for k in _COMPILER_ENV]
    words += [sys.version, unit.name]
    h.update(repr(words).encode())
    h.update(hashlib.sha256(code_text(unit.read_text(encoding="utf-8")).encode()).digest())
    for header in sorted(folder.glob("*.h")):
        h.update(header.name.encode() + b"\0" + hashlib.sha256(code_text(header.read_text(encoding="utf-8")).encode()).digest())
    return h.hexdigest()


_C_TOKENS = re.compile(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|//[^\n]*|/\*.*?\*/', re.DOTALL)


def code_text(text: str) -> str:
    """C text with its comments blanked (each one a space, or its newlines: the lines keep
    their numbers), string and character literals kept: what the compiler compiles. The head
    of every unit and the header say which URDF (its sha256) and command made them; a unit whose
    code is the same compiles to the same object whatever they say."""
    def blank(m):
        t = m.group(0)
        return t if t[0] in "\"'" else ("\n" * t.count("\n") or " ")
    return _C_TOKENS.sub(blank, text)


@functools.lru_cache(maxsize=None)
def compiler_identity(words: tuple, flags: tuple) -> str:
    """What the compiler says of itself, with ``flags``: ``cc -v -E`` of an empty file (its version,
    configuration and target, the instruction set ``-march=native`` names on this CPU, its
    include folders), and where its executable is and when it was written."""
    exe = shutil.which(words[0]) if words else None
    where = f"{os.path.realpath(exe)} {os.stat(os.path.realpath(exe)).st_mtime_ns}" if exe else ""
    try:
        run = subprocess.run([*words, *flags, "-v", "-E", "-x", "c", os.devnull, "-o", os.devnull],
                             capture_output=True, text=True, timeout=60)
        said = run.stdout + run.stderr
    except (OSError, subprocess.SubprocessError):
        said = ""
    return f"{where}\n{said}"


def _deps(depfile: Path, unit: Path, folder: Path, tmp: Path) -> list | None:
    """[(path, size, mtime_ns)] of the headers a compile read outside the package and temporary
    folders (its ``-MD`` file), or None when that file cannot be read."""
    try:
        text = depfile.read_text(encoding="utf-8")
    except OSError:
        return None
    words = text.replace("\\\n", " ").split(":", 1)[-1].replace("\\ ", "\0").split()
    out = []
    for word in words:
        path = os.path.realpath(word.replace("\0", " "))
        if path.startswith((os.path.realpath(folder) + os.sep, os.path.realpath(tmp) + os.sep)):
            continue
        try:
            st = os.stat(path)
        except OSError:
            return None
        out.append([path, st.st_size, st.st_mtime_ns])
    return sorted(out)


def _deps_unchanged(deps) -> bool:
    for path, size, mtime in deps:
        try:
            st = os.stat(path)
        except OSError:
            return False
        if (st.st_size, st.st_mtime_ns) != (size, mtime):
            return False
    return True


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
