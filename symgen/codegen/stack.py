"""The stack each function of a generated package's C takes, as the user's compiler builds it.

``NAME.c`` is compiled (not linked) with GCC's ``-fcallgraph-info=su``, which writes every
function's frame (``-fstack-usage``'s figure: bytes, and whether it is static) and the calls
between them; a function's stack is its frame plus the largest stack among the functions it calls
(:func:`worst`), so inlining, spills and the work arrays on the stack are all in it. Calls out of
the file (``sin``, ``cos``, ``memset``, GCC's builtins) count as nothing and are listed apart: add
the C library's own on a target where that matters. The figures hold for the compiler and flags
given (``symgen stack PKG --cc arm-none-eabi-gcc --cflags "-mcpu=cortex-m7 ... -O2"``): a
controller author sizes a thread by them. Per function: the one-state call, the same with the
caller's work array (``_work``), and a serial batch through the stack and through the caller's work
(``_batch_work``), with the work bytes those last take from the caller. ``symgen stack`` records
the figures in the package's ``manifest.json`` under ``stack``, one entry per compiler and flags
(:func:`record`), so they travel with the package.
"""
from __future__ import annotations

import json
import re
import shlex
import subprocess
import tempfile
from pathlib import Path

from ..errors import SymgenError
from .files import manifest_text

#: the entry points measured per function, and how the report names them
ENTRIES = (("", "one state"), ("_work", "_work"), ("_batch", "batch"), ("_batch_work", "_batch_work"))

_NODE = re.compile(r'node: \{ title: "([^"]+)" label: "([^"\\]+)(?:\\n([^"\\]*))?(?:\\n(\d+) bytes \(([^)]*)\))?')
_EDGE = re.compile(r'edge: \{ sourcename: "([^"]+)" targetname: "([^"]+)"')


def parse_callgraph(text: str) -> tuple[dict, dict, dict]:
    """(frames, calls, names) of a ``.ci`` file: frame bytes and qualifier per node title (None for
    a function defined elsewhere), the titles each calls, and each function's name by title."""
    frames, calls, names = {}, {}, {}
    for m in _NODE.finditer(text):
        title, name, _, size, qualifier = m.groups()
        names[title] = name
        frames[title] = (int(size), qualifier) if size is not None else None
    for m in _EDGE.finditer(text):
        calls.setdefault(m.group(1), set()).add(m.group(2))
    return frames, calls, names


def worst(title: str, frames: dict, calls: dict, memo: dict | None = None, path: tuple = ()) -> int:
    """The deepest stack from ``title``'s entry: its frame plus the largest of its callees'."""
    memo = {} if memo is None else memo
    if title in memo:
        return memo[title]
    if title in path:                       # generated code does not recurse
        raise SymgenError(f"{title}: calls itself through {' -> '.join(path)}; its stack has no bound")
    frame = frames.get(title)
    own = frame[0] if frame else 0
    below = max((worst(c, frames, calls, memo, path + (title,)) for c in calls.get(title, ())), default=0)
    memo[title] = own + below
    return memo[title]


def _last(stderr: str) -> str:
    """A compiler's complaint on one line: its first error, else its last line."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    errors = [line for line in lines if "error" in line]
    return (errors or lines or ["(no message)"])[0][:300]


def _work_bytes(folder: Path, name: str, functions, cc: list, flags: list, tmp: Path) -> dict:
    """Each function's work bytes (one state, batch) as the header's macros give them for this target."""
    P = name.upper()
    probe = tmp / "work_probe.c"
    probe.write_text(f'#include "{name}.h"\n' + "".join(
        f"{fn} {P}_{fn.upper()}_WORK_BYTES {P}_{fn.upper()}_BATCH_WORK_BYTES {P}_LANES\n" for fn in functions))
    done = subprocess.run([*cc, *flags, "-E", "-P", f"-I{folder}", str(probe)], capture_output=True, text=True,
                          timeout=120)
    if done.returncode != 0:
        raise SymgenError(f"{folder / (name + '.h')}: {' '.join(cc)} -E failed: {_last(done.stderr)}")
    out = {}
    for line in done.stdout.splitlines():
        m = re.fullmatch(r"(\w+) (\d+) (.+) (\d+)", line.strip())
        if m and m.group(1) in functions:
            out[m.group(1)] = (int(m.group(2)), _evaluate(m.group(3), folder / f"{name}.h"), int(m.group(4)))
    return out


def _evaluate(text: str, header: Path) -> int:
    """A preprocessed *_BATCH_WORK_BYTES: an integer, or ``(a > b && c * d > e ? f * g : h)``."""
    expr = text.replace("&&", " and ")
    expr = re.sub(r"^\((.*)\?(.*):(.*)\)$", r"((\2) if (\1) else (\3))", expr.strip())
    if not re.fullmatch(r"[\d\s()+*<>]*(?:(?:and|if|else)[\d\s()+*<>]*)*", expr):
        raise SymgenError(f"{header}: cannot read a work macro, {text!r}")
    return int(eval(expr, {"__builtins__": {}}))             # digits, + * < > and, if else: nothing else


def _version(cc: list) -> str:
    """The first line of ``cc --version`` (the figures hold for that compiler)."""
    try:
        done = subprocess.run([*cc, "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return (done.stdout.splitlines() or [""])[0].strip()


def stack_usage(package, cc: str = "gcc", cflags: str = "-O2", timeout: float = 1800) -> dict:
    """Per function of the package at ``package`` (its folder), the stack of each entry point of
    :data:`ENTRIES` in bytes, and the work bytes its ``_work`` / ``_batch_work`` take; with the
    compiler, flags and the calls out of the file."""
    folder = Path(package).resolve()       # the compiler runs in a scratch folder
    try:
        manifest = json.loads((folder / "manifest.json").read_text())
        name, functions = manifest["name"], list(manifest["functions"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise SymgenError(f"{folder / 'manifest.json'}: not a symgen package ({exc})") from exc
    source = folder / f"{name}.c"
    if not source.is_file():
        raise SymgenError(f"{source}: missing (a package built with --target c has it)")
    words, flags = shlex.split(cc), shlex.split(cflags)
    with tempfile.TemporaryDirectory(prefix="symgen-stack-") as tmp:
        tmp = Path(tmp)
        obj = tmp / f"{name}.o"
        cmd = [*words, *flags, "-c", "-fcallgraph-info=su", f"-I{folder}", str(source), "-o", str(obj)]
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=tmp)
        except FileNotFoundError as exc:
            raise SymgenError(f"--cc {cc}: no such compiler") from exc
        if done.returncode != 0:
            raise SymgenError(f"{source}: {' '.join(words + flags)} failed (-fcallgraph-info needs GCC 10 or newer): "
                              f"{_last(done.stderr)}")
        graphs = list(tmp.glob("*.ci"))
        if not graphs:
            raise SymgenError(f"--cc {cc}: wrote no call graph (-fcallgraph-info needs GCC 10 or newer)")
        frames, calls, names = parse_callgraph(graphs[0].read_text())
        work = _work_bytes(folder, name, functions, words, flags, tmp)
    by_name = {n: t for t, n in names.items() if frames.get(t) is not None}
    memo, rows = {}, {}
    for fn in functions:
        row = {}
        for suffix, label in ENTRIES:
            title = by_name.get(f"{name}_{fn}{suffix}")
            row[label] = None if title is None else worst(title, frames, calls, memo)
        row["work bytes"], row["batch work bytes"], lanes = work.get(fn, (0, 0, 1))
        rows[fn] = row
    dynamic = sorted(names[t] for t, f in frames.items() if f and "dynamic" in f[1])
    external = sorted({names.get(c, c) for cs in calls.values() for c in cs if frames.get(c) is None})
    return {"package": name, "compiler": " ".join(words), "version": _version(words), "flags": " ".join(flags),
            "lanes": lanes if rows else 1,
            "functions": rows, "dynamic": dynamic, "external": external}


def format_report(report: dict) -> str:
    """The report as a table: bytes of stack per entry point, and the work bytes the caller gives."""
    labels = [label for _, label in ENTRIES] + ["work bytes", "batch work bytes"]
    width = max([len("function")] + [len(f) for f in report["functions"]])
    lines = [f"{report['package']}: stack per call in bytes, {report['compiler']} {report['flags']} "
             f"(NAME_LANES {report['lanes']}); the work columns: what _work and _batch_work take from the caller",
             f"{'function':{width}s}" + "".join(f"{label:>18s}" for label in labels)]
    for fn, row in report["functions"].items():
        lines.append(f"{fn:{width}s}" + "".join(f"{'-' if row[k] is None else row[k]:>18}" for k in labels))
    if report["external"]:
        lines.append("calls out of the file, not counted: " + ", ".join(report["external"]))
    if report["dynamic"]:
        lines.append("frames of dynamic size (alloca or variable-length arrays): " + ", ".join(report["dynamic"]))
    return "\n".join(lines)


def _write_whole(path, text: str) -> None:
    """``text`` at ``path``, written whole: a temporary file renamed."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def write_json(report: dict, path) -> None:
    """The report as JSON at ``path`` (written whole)."""
    _write_whole(path, json.dumps(report, indent=1) + "\n")


def record(report: dict, package) -> str:
    """Record ``report`` in the package's ``manifest.json`` under ``stack``, keyed by its compiler
    and flags (one entry per toolchain: a host's and a Cortex-M7's side by side; the same key
    again replaces its entry). The manifest's digest leaves ``stack`` out (a measurement of the
    package, like ``timings.json``), so the package still verifies. Written whole: a temporary
    file renamed. Returns the key."""
    path = Path(package).resolve() / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    key = f"{report['compiler']} {report['flags']}".strip()
    entry = {k: report[k] for k in ("compiler", "version", "flags", "lanes", "functions", "external", "dynamic")}
    manifest.setdefault("stack", {})[key] = entry
    _write_whole(path, manifest_text(manifest))
    return key


def stack_report(package, cc: str, cflags: str, json_path=None, keep: bool = True) -> str:
    """``symgen stack``: the table of :func:`stack_usage` (and its JSON at ``json_path``), recorded
    in the package's manifest unless ``keep`` is false."""
    report = stack_usage(package, cc=cc, cflags=cflags)
    if json_path:
        write_json(report, json_path)
    table = format_report(report)
    if keep:
        table += f"\nrecorded in {Path(package) / 'manifest.json'} under stack[{record(report, package)!r}]"
    return table
