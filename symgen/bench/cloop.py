"""A generated package's C timed in a compiled C loop.

:func:`c_loop` renders a small driver (``templates/bench_driver.c.j2``) against the package's
``NAME.h``, compiles it with the package's C sources under given flags (default
``-O3 -march=native -ffp-contract=fast``), and times each function in a loop over random inputs drawn inside C. The
package is a black box: its ``manifest.json`` says which functions it has and the size of their
outputs; the registry says their arguments and input ranges.
"""
from __future__ import annotations

import hashlib
import json
import os
import shlex
import tempfile
from pathlib import Path

import numpy as np

from ..quantities import ARGUMENTS, QUANTITIES, STATE_ARGUMENTS
from .harness import BenchError, cache_dir, compile_harness, compiler_version, find_cc, run_compiler, run_harness

#: -ffp-contract=fast: gcc's -std=c99 (strict ISO C) turns off the contraction of a * b + c into
#: one fused multiply-add, which g++ keeps on for Pinocchio's C++ harness (-std=c++17); so that
#: both sides compile alike, the C loop turns it back on (measured: 0-40% on the generated code,
#: most on large straight-line functions; results stay within 1e-15 relative)
DEFAULT_FLAGS = "-O3 -march=native -ffp-contract=fast"

#: with several processes, process k links the package's code LAYOUT_STEP * (k % LAYOUTS) bytes
#: further (padding before it): where the code falls in a 64-byte window alone moved panda's C batch
#: 36 <-> 52 ns and solo12's M batch 49 <-> 57 (docs/RESULTS.md in the git history, simd4), so a median over processes
#: is also one over layouts, not one layout's luck
LAYOUT_STEP, LAYOUTS = 16, 4


def read_manifest(package_dir) -> dict:
    path = Path(package_dir) / "manifest.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BenchError(f"{path}: not found; is {package_dir} a package written by symgen build?") from None
    except json.JSONDecodeError as exc:
        raise BenchError(f"{path}: not valid JSON: {exc}") from None


def package_functions(manifest: dict, quantities) -> list[tuple[str, str]]:
    """(quantity, function name) for each wanted quantity; BenchError if the package lacks one."""
    have = manifest.get("functions", {})
    wanted = []
    for qty in quantities:
        if qty not in QUANTITIES:
            raise BenchError(f"--functions: unknown {qty!r}; expected a comma list of {','.join(QUANTITIES)}")
        fname = QUANTITIES[qty].function
        if fname not in have:
            raise BenchError(f"{manifest.get('name')}: the package has no {fname} ({qty}); it has "
                             f"{', '.join(sorted(have)) or 'nothing'}")
        wanted.append((qty, fname))
    return wanted


def dimensions(manifest: dict) -> tuple[int, int]:
    """(nq, nv) of a package."""
    nv = int(manifest["nv"])
    return int(manifest.get("nq", nv)), nv


def c_driver_source_context(manifest: dict, quantities, count: int = 64, update: bool = False,
                            batch: int = 0) -> dict:
    """What ``templates/bench_driver.c.j2`` needs to time ``quantities`` of a generated package
    over ``count`` random states drawn in C from the registry's argument ranges; with ``update``,
    also each function's ``_update`` variant (reported as ``"<quantity>:update"``), which leaves
    the structurally zero entries of the output alone; with ``batch``, also one call of its
    ``_batch_threads`` on that many packed states, one thread (``"<quantity>:batch"``, the time of
    the whole call: :func:`c_loop` divides it). Functions of ``params`` have no batch row (a batch
    takes parameters per state)."""
    name = manifest["name"]
    nq, nv = dimensions(manifest)
    # f_ext (an --external-forces build): one more row, 6 per link (the rows widen to hold it)
    external = bool(manifest.get("options", {}).get("external_forces"))
    names = STATE_ARGUMENTS + (("f_ext",) if external else ())
    forces = 6 * len(manifest.get("link_names", ())) if external else 0
    row = {a: i for i, a in enumerate(names)}    # inputs[row][state][k]
    # params (a --parametric build): the package's nominal parameters, NAME_parameters
    row_of = {a: f"inputs[{i}][s]" for a, i in row.items()} | {"params": f"{name}_parameters"}
    runners, batch_runners, out_size = [], [], 1
    for qty, fname in package_functions(manifest, quantities):
        sizes = [int(np.prod(shape)) for _, shape in manifest["functions"][fname]["outputs"]]
        size = sum(sizes)                                   # what the package writes, outputs back to back
        out_size = max(out_size, size)
        offsets = np.cumsum([0] + sizes[:-1])
        inputs = manifest["functions"][fname].get("inputs", QUANTITIES[qty].arguments)
        args = [row_of[a] for a in inputs] + [
            "out" if k == 0 else f"out + {k}" for k in offsets]
        variants = [("", qty)] + ([("_update", f"{qty}:update")] if update else [])
        runners += [{"runner": fname + suffix, "function": fname + suffix, "arguments": args, "label": label,
                     "last": size - 1} for suffix, label in variants]
        if batch and "params" not in inputs:
            # several outputs: each packed over the batch, one after the other in batch_out
            outs = ["batch_out" if k == 0 else f"batch_out + {batch * k}" for k in offsets]
            batch_runners.append({"runner": fname + "_batch", "function": fname, "label": f"{qty}:batch", "after": qty,
                                  "arguments": [f"batch_{a}" for a in inputs] + outs, "last": batch * size - 1})
    arguments = [{"name": a.name, "low": repr(a.low), "high": repr(a.high), "span": repr(a.high - a.low)}
                 for a in map(ARGUMENTS.get, names)]
    sizes = {a: {"nq": nq, "forces": forces}.get(ARGUMENTS[a].size, nv) for a in names}
    return {"name": name, "header": f"{name}.h", "n": max(nq, nv, forces), "count": count, "out_size": out_size,
            "arguments": arguments, "runners": runners, "batch": batch, "batch_runners": batch_runners,
            "batch_arrays": [{"name": a, "size": sizes[a], "row": row[a]} for a in names]}


def package_sources(package_dir, manifest: dict) -> list[Path]:
    """The package's C sources (every ``*.c`` but the CPython binding and the --target extras: the
    CasADi externals and the XLA FFI wrapper, which need those libraries' headers), sorted."""
    ext = manifest.get("c_extension", f"_{manifest['name']}_ext")
    extras = {ext, f"{manifest['name']}_casadi", f"{manifest['name']}_xla"}
    sources = sorted(p for p in Path(package_dir).glob("*.c") if p.stem not in extras)
    if not sources:
        raise BenchError(f"{package_dir}: no C sources")
    return sources


_FAILED: dict = {}        # object path -> (timeout, error) of compiles that failed in this process


def compile_package_objects(package_dir, manifest, flags: str = DEFAULT_FLAGS, cc: str | None = None,
                            timeout: float | None = None) -> list[Path]:
    """Object files of the package's C sources under ``flags``, cached by content, flags and
    compiler (so a big generated file compiles once per flag set)."""
    cc = find_cc(cc)
    version = compiler_version(cc)
    header = Path(package_dir) / f"{manifest['name']}.h"
    objs = []
    for src in package_sources(package_dir, manifest):
        h = hashlib.sha256()
        for part in (src.read_bytes(), header.read_bytes() if header.exists() else b"", flags.encode(), version.encode()):
            h.update(part)
            h.update(b"\0")
        obj = cache_dir() / "c-objects" / f"{src.stem}-{h.hexdigest()[:20]}.o"
        if str(obj) in _FAILED and (timeout is None or _FAILED[str(obj)][0] >= timeout):
            raise _FAILED[str(obj)][1]                   # the same compile failed in this process
        if not obj.exists():
            obj.parent.mkdir(parents=True, exist_ok=True)
            tmp = obj.with_suffix(f".{os.getpid()}.tmp.o")
            try:
                run_compiler([cc, *shlex.split(flags), "-std=c99", "-c", str(src), "-o", str(tmp)], timeout,
                             f"{src.name} ({flags})")
            except BenchError as exc:
                _FAILED[str(obj)] = (timeout or float("inf"), exc)
                tmp.unlink(missing_ok=True)
                raise
            os.replace(tmp, obj)
        objs.append(obj)
    return objs


def c_loop(package_dir, quantities=("C", "Gamma"), flags: str = DEFAULT_FLAGS, cc: str | None = None,
           repeats: int = 7, min_time: float = 0.05, count: int = 64, timeout: float | None = None,
           update: bool = False, rival=None, processes: int = 1, batch: int = 0) -> dict:
    """Time the package's C functions in a compiled C loop over ``count`` random states:
    ``{quantity: Timing}``. ``flags`` compile both the package and the driver.

    ``rival``: rivals' generated C to time in the same driver, compiled with the same flags
    (:func:`symgen.bench.casadi.prepare` and ``driver_extra``): one ``{"dir", "name", "extra"}``
    or a list of them, their rows labelled ``"<quantity>:<rival>"``. ``processes``: run the driver that many times,
    each a fresh process, and report per row the median of the processes' medians (min of their
    minima, max of their maxima): large straight-line functions time differently from one
    process to the next, and with the place of their code (process k links it behind
    ``LAYOUT_STEP * (k % LAYOUTS)`` bytes of padding). ``batch``: also each function's C batch of that many states, one thread,
    per state (rows ``"<quantity>:batch"``)."""
    package_dir = Path(package_dir)
    manifest = read_manifest(package_dir)
    if not (package_dir / f"{manifest['name']}.h").exists():
        raise BenchError(f"{package_dir}: no {manifest['name']}.h")
    cc = find_cc(cc)
    context = c_driver_source_context(manifest, quantities, count, update, batch)
    objs = compile_package_objects(package_dir, manifest, flags, cc, timeout)
    include_dirs, libs = [], []
    for one in ([rival] if isinstance(rival, dict) else rival or []):
        extra = one["extra"]
        if one.get("dir") is not None:                  # a rival's generated C (CasADi); MuJoCo: a library
            objs += compile_package_objects(one["dir"], {"name": one["name"], "c_extension": None}, flags, cc, timeout)
        context["extra_includes"] = context.get("extra_includes", []) + extra["includes"]
        context["extra_declarations"] = "\n".join(filter(None, [context.get("extra_declarations"),
                                                                 extra["declarations"]]))
        context["runners"] = context["runners"] + extra["runners"]
        context["out_size"] = max(context["out_size"], extra["out_size"])
        include_dirs += [f"-I{d}" for d in extra["include_dirs"]]
        libs += list(extra.get("libs", ()))
    what = f"{package_dir}: the C driver"

    def driver(tmp, layout: int) -> Path:
        """The driver, the package's code linked LAYOUT_STEP * layout bytes further on."""
        pad = []
        if layout:
            pad = [Path(tmp) / f"pad{layout}.c"]
            pad[0].write_text(f'__asm__(".text\\n.skip {LAYOUT_STEP * layout}, 0x90\\n");\n', encoding="utf-8")

        def command(source, exe):
            return [cc, *shlex.split(flags), "-std=c99", f"-I{package_dir}", *include_dirs, str(source),
                    *map(str, pad + objs), "-o", str(exe), *libs, "-lm"]
        return compile_harness("bench_driver.c.j2", context, command, Path(tmp) / f"driver{layout}", timeout, what)

    with tempfile.TemporaryDirectory(prefix="symgen-bench-") as tmp:
        layouts = [k % LAYOUTS for k in range(max(1, processes))]
        exes = {layout: driver(tmp, layout) for layout in dict.fromkeys(layouts)}
        runs = [run_harness(exes[layout], [repeats, min_time], what) for layout in layouts]
    out = runs[0] if len(runs) == 1 else combine_processes(runs)
    return {key: t.scaled(1 / batch) if key.endswith(":batch") else t for key, t in out.items()}


def combine_processes(runs: list) -> dict:
    """One Timing per row of several runs of a driver (fresh processes): the median of their
    medians, the min of their minima, the max of their maxima."""
    from .timing import Timing

    out = {}
    for key in runs[0]:
        ts = [r[key] for r in runs]
        out[key] = Timing(median_ns=float(np.median([t.median_ns for t in ts])), min_ns=min(t.min_ns for t in ts),
                          max_ns=max(t.max_ns for t in ts), inner=ts[0].inner, repeats=sum(t.repeats for t in ts))
    return out
