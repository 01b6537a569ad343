"""C programs that call a generated package's C directly, as a controller would (no Python
binding): a driver over every function of the package's manifest (and integrate, difference,
normalize and neutral where the header declares them) at given states, one state at a time and as
one batch, printing every output as JSON; compiled with any compiler and flags, run natively or
under an emulator. The tests compare what it prints with the package's NumPy module.

tests/ is not a package: ``conftest.py`` puts this folder on ``sys.path``.
"""
from __future__ import annotations

import json
import math
import shlex
import subprocess
from pathlib import Path

import numpy as np

from symgen import quantities as Q

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "symgen" / "examples" / "arm4.urdf"
#: what the small packages build (functions with joint sin and cos, solves, frames)
SAMPLE = ("M", "C", "tau", "qdd", "oMf", "J")
#: label -> (robot file under the repository or example-robot-data ("erd:..."), floating base, build options)
PACKAGES = {
    "arm4": (EXAMPLE, False, {"quantities": SAMPLE}),
    "arm4_ff": (EXAMPLE, True, {"quantities": SAMPLE}),
    "arm4_contact": (EXAMPLE, True, {"quantities": ("M", "contact_terms", "impulse_terms", "contact_partials"),
                                     "contacts": (("tool_link", "3d"),)}),
    "four_bar": (ROOT / "tests" / "data" / "urdfplus" / "four_bar.urdf", False, {"quantities": ("M", "tau", "qdd")}),
    "panda": ("erd:panda_description/urdf/panda.urdf", False, {"jobs": 2}),
    "solo12": ("erd:solo_description/robots/solo12.urdf", True, {"jobs": 2}),
}


def build_package(label: str, out: Path):
    """(folder, package, robot) of ``PACKAGES[label]`` built into ``out`` without its binding (the
    NumPy module is the oracle)."""
    import support
    from symgen import load_robot
    from symgen.codegen.build import BuildOptions, build, import_package

    source, floating, options = PACKAGES[label]
    if isinstance(source, str) and source.startswith("erd:"):
        source = support.erd_path(source[4:])
    robot = load_robot(source, floating_base=floating)
    path = build(robot, out, name=label, opts=BuildOptions(compile=False, **options)).path
    return path, import_package(path), robot


def states_of(pkg, robot, manifest: dict, label: str, count: int = 5):
    """(seed, states): ``count`` states of every argument, drawn as verify draws them (the seed from
    ``label``), with :func:`lie_state`'s inputs where the package has them."""
    import support

    seed, states = support.seeded_states(label, robot, count, layout=manifest["joint_models"],
                                         unit_base=robot.floating_base)
    rng = np.random.default_rng(seed)
    return seed, [lie_state(pkg, s, rng) if hasattr(pkg.numpy, "integrate") else s for s in states]


#: the configuration-space functions of a package (``NAME.h`` declares them unless the robot has loops):
#: name -> (arguments, output size: "nq" or "nv")
LIE = {"integrate": (("q", "v"), "nq"), "difference": (("q", "q1"), "nv"), "normalize": (("q",), "nq"),
       "neutral": ((), "nq")}


def has_lie(folder: Path, name: str) -> bool:
    return f"void {name}_integrate(" in (Path(folder) / f"{name}.h").read_text(encoding="utf-8")


def lie_state(pkg, state: dict, rng) -> dict:
    """The inputs of the configuration-space functions beside a state: v (a small velocity) and
    q1 = integrate(q, another velocity), so that difference(q, q1) is well defined."""
    v = 0.3 * rng.standard_normal(pkg.nv)
    return {**state, "v": v, "q1": pkg.numpy.integrate(state["q"], 0.7 * rng.standard_normal(pkg.nv))}


def calls(manifest: dict, lie: bool) -> list[tuple[str, tuple, list]]:
    """(function, its arguments, [(output, size)]) of every function the driver calls."""
    out = [(fn, tuple(info["inputs"]), [(o, math.prod(shape)) for o, shape in info["outputs"]])
           for fn, info in sorted(manifest["functions"].items())]
    sizes = {"nq": manifest["nq"], "nv": manifest["nv"]}
    if lie:
        out += [(fn, args, [("out", sizes[size])]) for fn, (args, size) in LIE.items()]
    return out


def _literal(values) -> str:
    return ", ".join(repr(float(x)) for x in np.ravel(values)) or "0.0"


def _size_texts(manifest: dict, fn: str, args, outs, states, macros: bool):
    """(input sizes, output sizes) of a call as C text: numbers, or (``macros``) the header's
    NAME_NQ / NAME_NV / NAME_NPARAMS and NAME_<FUNCTION>_<OUTPUT>_SIZE (integrate & co.: NQ, NV)."""
    if not macros:
        return [str(len(np.ravel(states[0][a]))) for a in args], [str(size) for _, size in outs]
    P_ = manifest["name"].upper()
    ins = [f"{P_}_NQ" if a in ("q", "q1") else f"{P_}_NPARAMS" if a == "params" else f"{P_}_NV" for a in args]
    if fn in LIE:
        return ins, [f"{P_}_{LIE[fn][1].upper()}"]
    return ins, [f"{P_}_{fn.upper()}_{o.upper()}_SIZE" for o, _ in outs]


def driver(manifest: dict, states: list, lie: bool, batch: bool = True, tag: str = "", macros: bool = False) -> str:
    """The C text of the driver: every function of ``calls`` at each of ``states`` (dicts of
    argument -> vector), one by one and (``batch``, functions of the manifest) as one batch of all,
    printing ``{"fn": [state's flat outputs, ...], "fn/batch": [...]}`` (a non-finite entry as 1e300),
    and the same through the caller's work array (``"fn/work"``, ``"fn/batch_work"``).
    ``tag``: its static names carry it, and its main is ``static int main_TAG(void)`` (several drivers
    in one translation unit). ``macros``: every buffer sized by the header's macros alone (the
    inputs' literals checked against them at compile time), and the header's names and parameters
    printed too (``"joint_names"``, ``"link_names"``, ``"frame_names"``, ``"parameters"``)."""
    name = manifest["name"]
    lines = ["#include <math.h>", "#include <stdio.h>", "#include <string.h>", f'#include "{name}.h"', "",
             f"static void put{tag}(const double *x, int n, int last) {{",
             "    printf(\"[\");",
             "    for (int k = 0; k < n; ++k) printf(\"%s%.17g\", k ? \", \" : \"\", isfinite(x[k]) ? x[k] : 1e300);",
             "    printf(\"]%s\", last ? \"\" : \", \");",
             "}", ""]
    count = len(states)
    body = []
    if macros:
        P_ = name.upper()
        lines += [f"static void names{tag}(const char *what, const char *const *x, int n) {{",
                  '    printf("\\"%s\\": [", what);',
                  '    for (int k = 0; k < n; ++k) printf("%s\\"%s\\"", k ? ", " : "", x[k]);',
                  '    printf("], ");', "}", ""]
        for what, macro in (("joint_names", "NJOINTS"), ("link_names", "NBODIES"), ("frame_names", "NFRAMES")):
            body.append(f'    names{tag}("{what}", {name}_{what}, {P_}_{macro});')
        body.append(f'    printf("\\"parameters\\": [");')
        body.append(f"    put{tag}({name}_parameters, {P_}_NPARAMS, 1);")
        body.append('    printf("], ");')
    for fn, args, outs in calls(manifest, lie):
        in_sizes, out_sizes = _size_texts(manifest, fn, args, outs, states, macros)
        total = "(" + " + ".join(out_sizes) + ")"
        for a, size in zip(args, in_sizes):
            var = f"{tag}{fn}_{a}"
            lines.append(f"static const double {var}[] = {{ {_literal([s[a] for s in states])} }};")
            lines.append(f"typedef char {var}_fits[sizeof {var} == sizeof(double) * {count} * {size} ? 1 : -1];")
        lines.append(f"static double {tag}{fn}_out[{count} * {total}];")
        offsets = ["(" + " + ".join(["0"] + out_sizes[:k]) + ")" for k in range(len(outs))]
        def call(entry, first):
            ins = [f"{tag}{fn}_{a} + {first} * {size}" for a, size in zip(args, in_sizes)]
            outs_c = [f"{tag}{fn}_out + {first} * {total} + {offsets[k]}" for k in range(len(outs))]
            return f"    {entry}({', '.join(ins + outs_c)});"
        body.append(f'    printf("\\"{fn}\\": [");')
        for s in range(count):
            body.append(call(f"{name}_{fn}", s))
            body.append(f"    put{tag}({tag}{fn}_out + {s} * {total}, {total}, {int(s == count - 1)});")
        body.append('    printf("], ");')
        if batch and fn in manifest["functions"]:
            # the same through the caller's work (filled with NaNs first: nothing may read it unwritten)
            work = f"{tag}{fn}_ws"
            macro = f"{name.upper()}_{fn.upper()}_BATCH_WORK_BYTES"
            lines.append(f"static double {work}[{macro} / sizeof(double) + 1] __attribute__((aligned(64)));")
            body.append(f"    memset({work}, 0xff, sizeof {work});")
            body.append(f'    printf("\\"{fn}/work\\": [");')
            for s in range(count):
                body.append(call(f"{name}_{fn}_work", s)[:-2] + f", {work});")
                body.append(f"    put{tag}({tag}{fn}_out + {s} * {total}, {total}, {int(s == count - 1)});")
            body.append('    printf("], ");')
            # the batch's outputs: each output of all states packed, one output after another
            ins = [f"{tag}{fn}_{a}" for a in args]
            outs_c = [f"{tag}{fn}_out + {offsets[k]} * {count}" for k in range(len(outs))]
            for entry, extra, key in (("batch", "", "batch"), ("batch_work", f", {work}", "batch_work")):
                body.append(f"    memset({work}, 0xff, sizeof {work});")
                body.append(f"    {name}_{fn}_{entry}({count}, {', '.join(ins + outs_c)}{extra});")
                body.append(f'    printf("\\"{fn}/{key}\\": [");')
                for k, size in enumerate(out_sizes):
                    body.append(f"    put{tag}({tag}{fn}_out + {offsets[k]} * {count}, {size} * {count}, {int(k == len(outs) - 1)});")
                body.append('    printf("], ");')
    lines += ["", f"static int main_{tag}(void) {{" if tag else "int main(void) {", '    printf("{");', *body,
              '    printf("\\"done\\": 1}\\n");', "    return 0;", "}", ""]
    return "\n".join(lines)


def expected(pkg, manifest: dict, states: list, lie: bool) -> dict:
    """What the driver should print, from the package's NumPy module: per function the flat outputs of
    each state, and per batch each output of all states in turn."""
    out = {}
    for fn, args, outs in calls(manifest, lie):
        values = [getattr(pkg.numpy, fn)(*(s[a] for a in args)) for s in states]
        out[fn] = [Q.flat(v) for v in values]
        if fn in manifest["functions"]:
            per = [v if isinstance(v, tuple) else (v,) for v in values]
            out[f"{fn}/batch"] = [np.concatenate([np.ravel(p[k]) for p in per]) for k in range(len(outs))]
            out[f"{fn}/batch_work"], out[f"{fn}/work"] = out[f"{fn}/batch"], out[fn]
    return out


def worst(found: dict, want: dict) -> dict:
    """Per key, max |found - want| / max(1, max |want|) (an entry count that differs: inf)."""
    errors = {}
    for key, rows in want.items():
        got = found.get(key)
        if got is None or len(got) != len(rows):
            errors[key] = math.inf
            continue
        e = 0.0
        for g, w in zip(got, rows):
            g, w = np.asarray(g, dtype=float), np.ravel(w)
            if g.shape != w.shape:
                e = math.inf
                break
            if w.size:
                e = max(e, float(np.max(np.abs(g - w)) / max(1.0, float(np.max(np.abs(w))))))
        errors[key] = e
    return errors


def compile_program(cc: str, sources, flags: str, exe: Path, includes=(), libs: str = "-lm", timeout: float = 900):
    """Compile ``sources`` into ``exe`` (an assertion error with the compiler's message on failure)."""
    cmd = [*shlex.split(cc), *shlex.split(flags), *(f"-I{d}" for d in includes), *map(str, sources),
           "-o", str(exe), *shlex.split(libs)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{' '.join(cmd)}\n{done.stderr[-3000:]}"
    return exe


def run_json(cmd, timeout: float = 300) -> dict:
    run = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=timeout)
    assert run.returncode == 0, f"{cmd}: exit {run.returncode}\n{run.stderr[-2000:]}"
    found = json.loads(run.stdout)
    assert found.pop("done") == 1
    return found
