"""The one way a timing harness in C or C++ is built and run.

A harness is a Jinja template in ``templates/`` (the generated-C loop driver, the Pinocchio C++
harness), rendered, compiled to an executable, and run; it prints JSON on stdout,
``{"results": {name: {"median_ns", "min_ns", "max_ns", "inner", "repeats"}}}``, the fields of
:class:`~symgen.bench.timing.Timing`. The compiler runner is shared with the package objects that
a driver links, and ends a compile over its timeout with everything it started.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from ..codegen.render import render
from ..errors import SymgenError
from .timing import Timing


class BenchError(SymgenError):
    """A harness could not be built or run (compiler missing, compile failed or timed out)."""


class CompileTimeout(BenchError):
    """A compile passed its timeout (a table cell shows it as ``> S s``, not ``n/a``)."""


def cache_dir() -> Path:
    root = Path(os.environ.get("SYMGEN_CACHE") or Path.home() / ".cache" / "symgen")
    root.mkdir(parents=True, exist_ok=True)
    return root


def find_cc(cc: str | None, env: str = "CC", default: str = "cc") -> str:
    cc = cc or os.environ.get(env) or default
    if shutil.which(cc) is None:
        raise BenchError(f"C compiler {cc!r} not found (set {env})")
    return cc


def compiler_version(cc: str) -> str:
    try:
        out = subprocess.run([cc, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return (out.splitlines() or ["unknown"])[0]


def run_compiler(cmd, timeout, what) -> subprocess.CompletedProcess:
    """Run a compiler; on timeout end its whole process group (gcc's cc1 outlives a killed driver)."""
    try:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
    except FileNotFoundError as exc:
        raise BenchError(f"{what}: {exc}") from None
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except BaseException as exc:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.communicate()
        if isinstance(exc, subprocess.TimeoutExpired):
            raise CompileTimeout(f"{what}: compilation took more than {timeout:g} s (timeout)") from None
        raise
    proc = subprocess.CompletedProcess(cmd, proc.returncode, stdout, stderr)
    if proc.returncode != 0:
        lines = [ln for ln in proc.stderr.splitlines() if "error" in ln] or proc.stderr.strip().splitlines() or ["(no output)"]
        raise BenchError(f"{what}: compilation failed: {lines[0]}")
    return proc


def compile_harness(template: str, context: dict, command, exe: Path, timeout, what) -> Path:
    """Render ``template`` into a temporary folder, compile it with ``command(source, output)``
    and move the executable to ``exe`` (so a cached one is never half written)."""
    with tempfile.TemporaryDirectory(prefix="symgen-harness-") as tmp:
        source = Path(tmp) / Path(template).stem             # bench_driver.c.j2 -> bench_driver.c
        source.write_text(render(template, context), encoding="utf-8")
        out = Path(tmp) / "harness"
        run_compiler(command(source, out), timeout, what)
        shutil.move(str(out), exe)
    return exe


def cached_harness(template: str, context: dict, identity: str, name: str, command, timeout, build: bool,
                   what: str, cost: str) -> Path:
    """A harness compiled once and kept in :func:`cache_dir` as ``name-KEY``, KEY a hash of
    ``identity`` (versions, flags) and the rendered source; built with ``command(source, output)``
    when missing and ``build``, else a BenchError. ``cost`` is said before a build (minutes to
    build: a first run must not look hung)."""
    source = render(template, context)
    key = hashlib.sha256(f"{identity}\0{source}".encode()).hexdigest()[:16]
    exe = cache_dir() / f"{name}-{key}"
    if exe.exists():
        return exe
    if not build:
        raise BenchError(f"the {what} is not built yet ({exe})")
    print(f"symgen bench: building the {what} once ({cost}); cached as {exe} (set SYMGEN_CACHE to move the cache)",
          file=sys.stderr, flush=True)
    return compile_harness(template, context, command, exe, timeout, what)


def run_harness(exe: Path, args, what) -> dict:
    """Run a compiled harness: ``{name: Timing}`` from the JSON it prints."""
    proc = subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True)
    if proc.returncode != 0:
        raise BenchError(f"{what} failed (exit {proc.returncode}): {proc.stderr.strip()[:300]}")
    return {k: Timing(**v) for k, v in json.loads(proc.stdout)["results"].items()}
