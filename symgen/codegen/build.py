"""``symgen build``: robot -> symbolic runs -> Program passes -> printed files -> compiled binding.

Output is written to a temporary folder beside the target and moved into place only when
complete, so a failed or interrupted build never leaves a half-written package and never
clobbers a good one. Same robot, options and versions give the same bytes.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import sympy as sp

from .. import __version__
from ..errors import BuildError
from . import program as P
from .names import c_literal, comment_text, identifier, py_literal
from .printers import CPrinter, PyPrinter
from .render import render
from .trace import SIGNATURES, trace_all


#: ``symgen build`` stops before the symbolic run of a robot with more joints than this unless
#: told otherwise (--max-dof): Gamma has ~N^3/6 distinct entries on a chain (serial 20: 77k
#: operations, a build of ~20 s; serial 64 would be ~30x that)
MAX_DOF_DEFAULT = 64


@dataclass
class BuildOptions:
    quantities: tuple = ("M", "Mdot", "C", "Gamma", "tau")
    gamma_method: str = "algo2"
    frame: str = "ground"                 # coordinates of the algorithms: ground or body
    cse: bool = False                     # sympy.cse on top of value numbering (slow, ~3% fewer ops)
    compile: bool = True
    force: bool = False
    copt: str = "-O2"                     # optimization flag for the compiled binding
    max_dof: int = MAX_DOF_DEFAULT        # refuse bigger robots (see check_size)
    command: str = ""                     # how to regenerate, for the header
    source_sha256: str = ""


@dataclass
class BuildResult:
    path: Path
    name: str
    compiled: bool
    timings: dict = field(default_factory=dict)
    ops: dict = field(default_factory=dict)


def optimize(fn, use_cse=False):
    """The passes every traced Function goes through: dead-code removal, shared outputs, CSE."""
    fn = P.share_outputs(P.drop_dead(fn))
    if use_cse:
        fn = P.cse(fn)
    return fn.check_closed()


def program_for(robot, quantity, gamma_method="algo2", use_cse=False, frame="ground"):
    """The optimized Function for one quantity."""
    return optimize(trace_all(robot, (quantity,), gamma_method, frame=frame)[quantity], use_cse)


def _body_comment(robot, body):
    b = robot.bodies[body]
    return comment_text(f"body {body}: link '{b.name}', joint '{b.joint_name}'")


#: statements per C function part (see program.partition); serial 20, C and Gamma, gcc -O2:
#: 17 s with 200, 26 s with 800, 40 s with 1600, 272 s unsplit, same speed of the code
C_PART_SIZE = 200
#: functions up to this many statements stay whole (they compile in well under a second)
C_SPLIT_ABOVE = 2000


def _comments(robot, assignments):
    """The body comment to print before each assignment (None when the body did not change)."""
    out, last = [], object()
    for a in assignments:
        if a.body is not None and a.body != last:
            out.append(_body_comment(robot, a.body))
            last = a.body
        else:
            out.append(None)
    return out


def _zeros_to_store(size, entries):
    """The flat indices of the zero entries, when storing them one by one beats a memset of
    the whole output (fewer than half the entries are zero); None otherwise."""
    nonzero = {k for k, _ in entries}
    zeros = [k for k in range(size) if k not in nonzero]
    return zeros if 2 * len(zeros) < size else None


def _function_context(robot, fn, quantity):
    n = robot.n
    params = [inp.name for inp in fn.inputs]
    cin = {s: f"{inp.name}[{k}]" for inp in fn.inputs for k, s in enumerate(inp.symbols)}
    pypr = PyPrinter()
    lines = [{"temp": a.temp.name, "py": pypr.doprint(a.expr), "comment": c}
             for a, c in zip(fn.assignments, _comments(robot, fn.assignments))]
    (out,) = fn.outputs
    entries = out.nonzero()
    parts, slots = P.partition(fn, C_PART_SIZE, C_SPLIT_ABOVE)
    cpr = CPrinter({**cin, **{s: f"w[{k}]" for s, k in slots.items()}})
    c_parts = []
    for part in parts:
        comments = _comments(robot, part.assignments)
        c_parts.append({
            "lines": [{"lhs": (f"w[{slots[a.temp]}]" if a.temp in slots else f"const double {a.temp.name}"),
                       "c": cpr.doprint(a.expr), "comment": c} for a, c in zip(part.assignments, comments)],
            "entries": [(k, cpr.doprint(e)) for k, e in part.entries],
        })
    size = 1
    for d in out.shape:
        size *= d
    return {
        "name": fn.name, "doc": fn.doc, "params": params, "out": out.name, "size": size,
        # a mostly dense output gets its few zeros stored one by one, a sparse one a memset first
        "zeros": _zeros_to_store(size, entries),
        "nonzero": len(entries),
        "shape": tuple(out.shape), "shape_literal": repr(tuple(out.shape)), "signature": f"{fn.name}({', '.join(params)}) -> {tuple(out.shape)}",
        "inputs": [{"name": inp.name, "unpack": ", ".join(s.name for s in inp.symbols) + ("," if n == 1 else "")}
                   for inp in fn.inputs],
        "lines": lines,
        "index_literal": repr([k for k, _ in entries]),
        "py_values": [pypr.doprint(e) for _, e in entries],
        "c_parts": c_parts,
        "work": len(slots),
        "quantity": quantity,
    }


def generate(robot, name: str, opts: BuildOptions, progress=None) -> tuple[dict, dict]:
    """All files of the package as ``{filename: text}``, and the manifest's op counts/timings."""
    say = progress or (lambda msg: None)
    functions, ops, timings = [], {}, {}
    t0 = time.perf_counter()
    say(f"symbolic runs of {', '.join(opts.quantities)}")
    traced = trace_all(robot, opts.quantities, opts.gamma_method, frame=opts.frame,
                       tick=getattr(progress, "tick", None))
    timings["symbolic"] = round(time.perf_counter() - t0, 3)
    for quantity in opts.quantities:
        t0 = time.perf_counter()
        fn = optimize(traced[quantity], opts.cse)
        timings[quantity] = round(time.perf_counter() - t0, 3)
        ops[fn.name] = P.count_ops(fn)
        functions.append(_function_context(robot, fn, quantity))
        say(f"{quantity}: {ops[fn.name]['total']} operations")
    prefix = name
    ext_name = f"_{name}_ext"
    header = [
        f"Generated by symgen {__version__} -- do not edit; regenerate with:",
        f"  {comment_text(opts.command)}" if opts.command else "  symgen build <urdf>",
        f"robot {comment_text(robot.name)}: {robot.n} joints, depth {robot.depth}",
        f"source sha256 {comment_text(opts.source_sha256 or 'n/a')}",
        f"options: quantities={','.join(opts.quantities)} gamma_method={opts.gamma_method} "
        f"frame={opts.frame} floating_base={robot.floating_base} cse={opts.cse}",
        f"SymPy {sp.__version__}",
    ]
    ctx = {
        "header": header, "name": name, "prefix": prefix, "PREFIX": prefix.upper(), "n": robot.n,
        "ext_name": ext_name, "functions": functions,
        "robot_literal": py_literal(robot.name), "robot_comment": comment_text(robot.name),
        "joint_names_literal": "(" + "".join(py_literal(j) + ", " for j in robot.joint_names) + ")",
        "link_names_literal": "(" + "".join(py_literal(j) + ", " for j in robot.link_names) + ")",
        "joint_names_c": [c_literal(j) for j in robot.joint_names],
    }
    files = {
        "__init__.py": render("package_init.py.j2", ctx),
        f"{name}_numpy.py": render("numpy_module.py.j2", ctx),
        f"{name}_c.py": render("c_wrapper.py.j2", ctx),
        f"{name}.h": render("c_header.h.j2", ctx),
        f"{name}.c": render("c_source.c.j2", ctx),
        f"{ext_name}.c": render("c_extension.c.j2", ctx),
    }
    manifest = {
        "generator": f"symgen {__version__}", "sympy": sp.__version__, "robot": robot.name, "name": name,
        "nq": robot.n, "nv": robot.n, "depth": robot.depth, "floating_base": robot.floating_base,
        "joint_names": list(robot.joint_names), "link_names": list(robot.link_names),
        "source_sha256": opts.source_sha256,
        "options": {"quantities": list(opts.quantities), "gamma_method": opts.gamma_method,
                    "frame": opts.frame, "cse": opts.cse},
        "functions": {f["name"]: {"quantity": f["quantity"], "inputs": f["params"], "shape": list(f["shape"]),
                                  "ops": ops[f["name"]]} for f in functions},
        "c_extension": ext_name,
    }
    files["manifest.json"] = json.dumps(manifest, indent=2, sort_keys=True) + "\n"
    return files, {"ops": ops, "timings": timings}


def compile_extension(folder: Path, name: str, cc: str | None = None, opt: str = "-O2") -> Path:
    """Compile NAME.c and its CPython binding into one extension module inside ``folder``."""
    cc = cc or os.environ.get("CC") or "cc"
    if shutil.which(cc) is None:
        raise BuildError(f"C compiler {cc!r} not found (set CC, or build with --no-compile)")
    ext = f"_{name}_ext"
    target = folder / f"{ext}{sysconfig.get_config_var('EXT_SUFFIX') or '.so'}"
    cmd = [cc, opt, "-fPIC", "-shared", "-std=c99", f"-I{sysconfig.get_paths()['include']}",
           str(folder / f"{name}.c"), str(folder / f"{ext}.c"), "-o", str(target), "-lm"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        first = (proc.stderr.strip().splitlines() or ["(no output)"])[0]
        raise BuildError(f"{folder / (name + '.c')}: compilation failed: {first}")
    return target


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _remove_stale(out_dir: Path, name: str) -> None:
    """Remove the temporary folders of earlier builds of ``name`` whose process is gone (a
    SIGKILLed build cannot clean up after itself). Their names carry the builder's pid."""
    for p in out_dir.glob(f".{name}.*-*"):
        kind, _, rest = p.name[len(name) + 2:].partition("-")
        pid = rest.split("-")[0]
        if kind in ("tmp", "old") and pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
            if kind == "old" and (p / name).is_dir() and not (out_dir / name).exists():
                os.replace(p / name, out_dir / name)    # killed between its two renames: put it back
            shutil.rmtree(p, ignore_errors=True)


def write_package(files: dict, out_dir: Path, name: str, opts: BuildOptions, compile_hook=None) -> Path:
    """Write ``files`` into ``out_dir/name`` atomically: into a temporary folder beside it, then
    renamed into place. Whatever interrupts it (an error, Ctrl-C, SIGTERM), ``out_dir/name`` is
    afterwards either the previous package or the complete new one, and no temporary is left."""
    out_dir = Path(out_dir)
    target = out_dir / name
    if not out_dir.is_dir():
        if out_dir.exists() or not out_dir.parent.is_dir():
            what = "is not a folder" if out_dir.exists() else f"does not exist, nor does its parent {out_dir.parent}"
            raise BuildError(f"{out_dir}: output folder {what}")
        try:
            out_dir.mkdir()                       # one level, like `symgen build --out generated`
        except OSError as exc:
            raise BuildError(f"{out_dir}: cannot create the output folder: {exc.strerror or exc}") from exc
    if not os.access(out_dir, os.W_OK):
        raise BuildError(f"{out_dir}: output folder is not writable")
    _remove_stale(out_dir, name)                # may put back a package a killed build moved aside
    if target.exists() and not opts.force:
        raise BuildError(f"{target}: already exists; pass --force to replace it")
    tag = f"{os.getpid()}-"
    tmp = old = None
    try:
        tmp = Path(tempfile.mkdtemp(prefix=f".{name}.tmp-{tag}", dir=out_dir))
        for fname, text in sorted(files.items()):
            (tmp / fname).write_text(text, encoding="utf-8")
        if compile_hook is not None:
            compile_hook(tmp)
        if target.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{name}.old-{tag}", dir=out_dir))
            os.replace(target, old / name)
        os.replace(tmp, target)
        tmp = None
    except BaseException as exc:
        if old is not None and not target.exists() and (old / name).exists():
            os.replace(old / name, target)                  # put the previous package back
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
        if isinstance(exc, OSError):
            raise BuildError(f"{out_dir}: cannot write the package: {exc.strerror or exc}") from exc
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
    return target




def check_size(robot, opts: BuildOptions) -> None:
    if robot.n == 0:
        raise BuildError(f"robot {comment_text(robot.name)!r} has no degree of freedom (every joint is fixed); "
                         f"nothing to generate (--floating-base gives the root six)")
    if robot.n > opts.max_dof:
        raise BuildError(f"robot {comment_text(robot.name)!r} has {robot.n} joints, more than --max-dof "
                         f"{opts.max_dof}: the code grows as N^2 (M, C) and N^3 (Gamma) on a chain; pass "
                         f"--max-dof {robot.n} to build anyway, limit --quantities, or use the numeric API")


def build(robot, out_dir, name: str | None = None, opts: BuildOptions | None = None, progress=None) -> BuildResult:
    opts = opts or BuildOptions()
    name = identifier(name or robot.name)
    if opts.copt not in ("-O0", "-O1", "-O2", "-O3", "-Os"):
        raise BuildError(f"--copt: unknown {opts.copt!r}; expected -O0, -O1, -O2, -O3 or -Os")
    check_size(robot, opts)
    if not opts.source_sha256:
        from ..urdf import urdf_string
        opts.source_sha256 = hashlib.sha256(urdf_string(robot).encode()).hexdigest()
    t0 = time.perf_counter()
    files, info = generate(robot, name, opts, progress)
    t_gen = time.perf_counter() - t0
    compiled = False
    timings = dict(info["timings"], generate=round(t_gen, 3))

    def hook(folder):
        nonlocal compiled
        if opts.compile:
            t = time.perf_counter()
            (progress or (lambda m: None))("compiling the C binding")
            compile_extension(folder, name, opt=opts.copt)
            timings["compile"] = round(time.perf_counter() - t, 3)
            compiled = True

    path = write_package(files, Path(out_dir), name, opts, hook)
    return BuildResult(path, name, compiled, timings, info["ops"])


def import_package(path):
    """Import a generated package from its folder (for tests and ``symgen verify``)."""
    import importlib.util

    path = Path(path).resolve()
    for key in [k for k in sys.modules if k == path.name or k.startswith(path.name + ".")]:
        del sys.modules[key]                    # a package of the same name imported before
    spec = importlib.util.spec_from_file_location(path.name, path / "__init__.py",
                                                  submodule_search_locations=[str(path)])
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.name] = module
    spec.loader.exec_module(module)
    return module
