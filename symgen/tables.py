"""``symgen tables``: the paper's Tables 1 and 2 and Figures 2-4, on this machine, beside the paper.

Table 2 (symbolic): time to obtain all Gamma_ijk symbolically. Routes:

    eq4_whole    symbolic CRBA M, then eq. (4) on it, whole expressions (the paper's baseline)
    algo2_whole  Algorithm 2 on symbols, whole expressions (the paper's run)
    eq4_named    eq. (4) through symgen's named CRBA program (intermediates named during the run)
    algo2_named  Algorithm 2 with named intermediates: what ``symgen build`` does

Each cell runs in its own process with a hard timeout; it reports the run alone, run + CSE
(sympy.cse over the whole program) and the op count after CSE. A cell over the timeout shows
``> S s``; a larger system of the same route is then not tried (it would only be slower).

Table 1 (numeric): µs per call of C(q, qd) and Gamma(q) for the paper's 20-DoF systems by every
route we have (generated C in a C loop and from Python, generated NumPy, the numeric reference,
Pinocchio from Python and C++), beside the paper's values. Figures 2-4: log-log time vs DoF of
the generated C (C loop) and of Pinocchio, with fitted slopes.

A cell is a number, ``"> S s"`` (over a timeout: a symbolic run, a build or a compile), or
``"n/a"`` with the reason in ``notes``.
"""
from __future__ import annotations

import json
import multiprocessing
import os
import signal
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import bench
from .errors import OptionError

# ------------------------------------------------------------------------- the paper's numbers

#: Table 1, µs (C, Gamma), RBDL extension, Intel i7 3.2 GHz
PAPER_TABLE1 = {"serial": (18.0, 122.0), "tree": (10.0, 33.0), "biped": (13.0, 64.0), "quadruped": (10.0, 37.0)}
#: Table 2, seconds, MATLAB symbolic toolbox: (kind, N) -> {route: s}
PAPER_TABLE2 = {("tree", 5): {"eq4_whole": 1.23, "algo2_whole": 0.97},
                ("tree", 10): {"eq4_whole": 7.83, "algo2_whole": 3.11},
                ("tree", 15): {"eq4_whole": 27.1, "algo2_whole": 5.88},
                ("planar", 10): {"algo2_whole": 26.8 * 60}}
PAPER_TABLE2_NOTE = ("paper: for serial chains eq. (4) was faster than Algorithm 2 symbolically, and beyond "
                     "N = 15 both took hours; Algorithm 2 on the 10-DoF planar chain took 26.8 min")
#: Figures 2-4: the paper's measured scaling exponents
PAPER_SLOPES = {"serial": "C ~ N^2, Gamma ~ N^3", "tree": "between N and N^2",
                "biped": "main body + 2 serial legs", "quadruped": "main body + 4 serial legs"}

ROUTES = {  # name -> (gamma_method, naming, frame, label); the named routes in symgen build's default frame
    "eq4_whole": ("partials", False, "body", "eq. (4), symbolic partials of M, whole expressions, body frames"),
    "algo2_whole": ("algo2", False, "body", "Algorithm 2, whole expressions, body frames (the paper's run)"),
    "eq4_named": ("partials", True, "ground", "eq. (4), symgen's named CRBA program"),
    "algo2_named": ("algo2", True, "ground", "Algorithm 2, named intermediates (symgen build)"),
}
KIND_LABEL = {"serial": "serial chain", "planar": "planar serial chain", "tree": "binary tree",
              "biped": "biped", "quadruped": "quadruped"}


@dataclass
class Plan:
    """What one run measures: sizes, timeouts, timing effort."""
    table2: list                           # [(kind, n)]
    table1: list                           # [(kind, n)]
    figures: dict                          # kind -> [n]
    timeout: float = 600.0                 # per Table 2 cell
    build_timeout: float = 1200.0          # per package build (symbolic run + printing)
    compile_timeout: float = 1200.0        # per compile of a package's C
    repeats: int = 7
    min_time: float = 0.05
    batch: int = 10_000
    numpy_batch: int = 1_000
    flags: str = bench.DEFAULT_FLAGS       # C loop
    copt: str = "-O2"                      # Python binding
    pin_cpp: str = "build"                 # build | cached | off
    quick: bool = False


def full_plan(**kw) -> Plan:
    return Plan(table2=[("tree", 5), ("tree", 10), ("tree", 15), ("serial", 5), ("serial", 10), ("serial", 15),
                        ("serial", 20), ("planar", 10)],
                table1=[("serial", 20), ("tree", 20), ("biped", 20), ("quadruped", 20)],
                figures={"serial": [4, 8, 12, 16, 20], "tree": [4, 8, 12, 16, 20],
                         "biped": [4, 8, 12, 16, 20], "quadruped": [4, 8, 12, 16, 20]}, **kw)


def quick_plan(**kw) -> Plan:
    settings = dict(timeout=8.0, build_timeout=60.0, compile_timeout=60.0, repeats=3, min_time=0.005, batch=100,
                    numpy_batch=100, flags="-O1", copt="-O1", pin_cpp="cached", quick=True)
    settings.update(kw)
    return Plan(table2=[("tree", 3), ("serial", 2), ("planar", 3)],
                table1=[("serial", 3), ("tree", 3), ("biped", 2), ("quadruped", 4)],
                figures={"serial": [2, 3], "tree": [2, 3], "biped": [2, 4], "quadruped": [4, 8]}, **settings)


def over(seconds: float) -> str:
    """The marker of a cell that passed its timeout."""
    return f"> {seconds:g} s"


def is_cell(value) -> bool:
    """A valid cell: a number, a timeout marker or "n/a"."""
    return (isinstance(value, (int, float)) and not isinstance(value, bool)) or value == "n/a" or \
        (isinstance(value, str) and value.startswith("> ") and value.endswith(" s"))


# ----------------------------------------------------------------- running a step with a timeout

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


def _merged(messages) -> dict:
    out = {}
    for m in messages:
        out.update(m)
    if "error" in out:
        raise RuntimeError(out["error"] + "\n" + out.get("traceback", ""))
    return out


# ------------------------------------------------------------------------------------ Table 2

def table2_cell(kind, n, route, send):
    """One Table 2 cell (runs in a child): the symbolic run, then CSE and the op count."""
    from . import robots
    from .codegen.program import count_ops
    from .codegen.symbolic import optimize, trace
    from .quantities import SweepOptions

    method, naming, frame, _ = ROUTES[route]
    robot = robots.make(kind, n)
    t0 = time.perf_counter()
    fn = trace(robot, "Gamma", SweepOptions(frame=frame, gamma_method=method), naming=naming)
    send({"run_s": time.perf_counter() - t0})
    fn = optimize(fn, use_cse=True)                 # the passes of symgen build, with sympy.cse
    send({"run_cse_s": time.perf_counter() - t0, "ops": count_ops(fn)["total"]})


def table2(plan: Plan, log=print) -> dict:
    rows, notes, failed = [], {}, {}
    for kind, n in plan.table2:
        for route in ROUTES:
            key = f"{kind}{n}/{route}"
            row = {"kind": kind, "n": n, "route": route, "label": ROUTES[route][3],
                   "paper_s": PAPER_TABLE2.get((kind, n), {}).get(route, "n/a")}
            if (kind, route) in failed:
                row.update(run_s=over(plan.timeout), run_cse_s=over(plan.timeout), ops=over(plan.timeout))
                notes[key] = f"not run: {kind} N = {failed[kind, route]} was already over {plan.timeout:g} s"
                rows.append(row)
                log(f"table 2 {key}: skipped")
                continue
            msgs, done = run_limited(table2_cell, (kind, n, route), plan.timeout)
            got = _merged(msgs)
            row["run_s"] = round(got["run_s"], 3) if "run_s" in got else over(plan.timeout)
            row["run_cse_s"] = round(got["run_cse_s"], 3) if "run_cse_s" in got else over(plan.timeout)
            row["ops"] = got.get("ops", over(plan.timeout))
            if not done or "ops" not in got:
                failed[kind, route] = n
            rows.append(row)
            log(f"table 2 {key}: run {row['run_s']}, run+cse {row['run_cse_s']}, ops {row['ops']}")
    return {"rows": rows, "notes": notes, "paper_note": PAPER_TABLE2_NOTE, "timeout_s": plan.timeout}


# ------------------------------------------------------------------------------------ Table 1

TABLE1_METHODS = {  # name -> label
    "c_loop": "generated C, C loop",
    "c_py_single": "generated C from Python, one state",
    "c_py_batch": "generated C from Python, per state in a batch",
    "numpy_single": "generated NumPy, one state",
    "numpy_batch": "generated NumPy, per state in a batch",
    "reference": "numeric reference (symgen.coriolis_matrix / christoffel)",
    "pin_py": "Pinocchio from Python (computeCoriolisMatrix; Gamma: computeRNEASecondOrderDerivatives)",
    "pin_cpp": "Pinocchio C++ (computeCoriolisMatrix; Gamma: ComputeRNEASecondOrderDerivatives)",
    "pin_cpp_n_c": "Pinocchio C++, Gamma as n calls of computeCoriolisMatrix(q, e_k)",
    "paper": "paper, Table 1 (RBDL, i7 3.2 GHz, mean)",
}
QUANTITIES = ("C", "Gamma")


def build_package(kind, n, out_dir, send):
    """Write the C and NumPy package of a synthetic system (in a child): no compile here."""
    from . import robots
    from .codegen.build import BuildOptions, build
    from .urdf import write_urdf

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
    key = (kind, n, str(work))
    if key not in _BUILT:
        _BUILT[key] = run_limited(build_package, (kind, n, str(work)), timeout)
    return _BUILT[key]


def compile_binding(path, name, copt, send):
    from .codegen.build import compile_extension

    t0 = time.perf_counter()
    compile_extension(Path(path), name, opt=copt)
    send({"compile_s": time.perf_counter() - t0})


@dataclass
class SystemResult:
    cells: dict = field(default_factory=dict)      # method -> {quantity: cell}
    spread: dict = field(default_factory=dict)     # method -> {quantity: [min_us, max_us]}
    notes: dict = field(default_factory=dict)
    info: dict = field(default_factory=dict)

    def put(self, method, qty, value):
        if isinstance(value, bench.Timing):
            self.cells.setdefault(method, {})[qty] = round(value.us, 4)
            self.spread.setdefault(method, {})[qty] = [round(value.min_ns / 1e3, 4), round(value.max_ns / 1e3, 4)]
        else:
            self.cells.setdefault(method, {})[qty] = value

    def missing(self, methods, qty, value, note):
        for m in methods:
            self.put(m, qty, value)
            self.notes[f"{m}/{qty}"] = note


def measure_system(kind, n, plan: Plan, work: Path, log=print) -> SystemResult:
    """Every Table 1 method on one system."""
    from . import robots
    from .codegen.build import import_package
    import symgen

    res = SystemResult()
    robot = robots.make(kind, n)
    res.info = {"kind": kind, "n": n, "dof": robot.n, "name": robot.name}
    paper = PAPER_TABLE1.get(kind) if n == 20 else None
    for qty, value in zip(QUANTITIES, paper or ("n/a", "n/a")):
        res.put("paper", qty, value)
    if not paper:
        res.notes["paper"] = "the paper reports 20-DoF systems only"
    package_methods = ["c_loop", "c_py_single", "c_py_batch", "numpy_single", "numpy_batch"]
    msgs, done = built_package(kind, n, work, plan.build_timeout)
    got = _merged(msgs)
    if not done:
        for qty in QUANTITIES:
            res.missing(package_methods, qty, over(plan.build_timeout), f"symgen build took more than {plan.build_timeout:g} s")
        from .urdf import write_urdf
        urdf = work / f"{robot.name}.urdf"
        write_urdf(robot, urdf)
        got = {"urdf": str(urdf)}
    else:
        res.info.update(build_s=round(got["build_s"], 2), ops={k: v["total"] for k, v in got["ops"].items()})
        log(f"table 1 {robot.name}: built in {got['build_s']:.1f} s")
    urdf = got["urdf"]
    rng_q, rng_qd = bench.random_states(robot.n, max(plan.batch, plan.numpy_batch), seed=1)
    q, qd = rng_q[0].copy(), rng_qd[0].copy()

    if done:
        path = Path(got["path"])
        # generated C in a C loop
        try:
            t0 = time.perf_counter()
            loop = bench.c_loop(path, QUANTITIES, flags=plan.flags, repeats=plan.repeats, min_time=plan.min_time,
                                timeout=plan.compile_timeout)
            res.info["c_loop_compile_s"] = round(time.perf_counter() - t0, 2)
            for qty in QUANTITIES:
                res.put("c_loop", qty, loop[qty])
        except bench.BenchError as exc:
            value = over(plan.compile_timeout) if "timeout" in str(exc) else "n/a"
            for qty in QUANTITIES:
                res.missing(["c_loop"], qty, value, str(exc))
        # the compiled Python binding
        cmsgs, cdone = run_limited(compile_binding, (str(path), robot.name, plan.copt), plan.compile_timeout)
        try:
            cgot = _merged(cmsgs)
        except RuntimeError as exc:
            cgot, cdone = {}, False
            res.notes["binding"] = str(exc).splitlines()[0]
        if cdone and "compile_s" in cgot:
            res.info["binding_compile_s"] = round(cgot["compile_s"], 2)
        pkg = import_package(path)
        calls = {"C": ("coriolis_matrix", lambda mod, Q, QD: mod.coriolis_matrix(Q, QD)),
                 "Gamma": ("christoffel", lambda mod, Q, QD: mod.christoffel(Q))}
        for qty, (_, call) in calls.items():
            if pkg.c is not None:
                res.put("c_py_single", qty, bench.time_callable(lambda: call(pkg.c, q, qd), plan.repeats, plan.min_time))
                Q, QD = rng_q[:plan.batch].copy(), rng_qd[:plan.batch].copy()
                res.put("c_py_batch", qty, bench.time_callable(lambda: call(pkg.c, Q, QD), plan.repeats,
                                                               plan.min_time).scaled(1 / plan.batch))
            else:
                why = (f"compiling the binding ({plan.copt}) took more than {plan.compile_timeout:g} s" if not cdone
                       else res.notes.get("binding", "binding not compiled"))
                res.missing(["c_py_single", "c_py_batch"], qty, over(plan.compile_timeout) if not cdone else "n/a", why)
            res.put("numpy_single", qty, bench.time_callable(lambda: call(pkg.numpy, q, qd), plan.repeats, plan.min_time))
            Q, QD = rng_q[:plan.numpy_batch].copy(), rng_qd[:plan.numpy_batch].copy()
            res.put("numpy_batch", qty, bench.time_callable(lambda: call(pkg.numpy, Q, QD), plan.repeats,
                                                            plan.min_time).scaled(1 / plan.numpy_batch))
        log(f"table 1 {robot.name}: generated code timed")

    # the numeric reference
    res.put("reference", "C", bench.time_callable(lambda: symgen.coriolis_matrix(robot, q, qd), plan.repeats, plan.min_time))
    res.put("reference", "Gamma", bench.time_callable(lambda: symgen.christoffel(robot, q), plan.repeats, plan.min_time))
    # Pinocchio
    pin_methods(res, urdf, plan)
    log(f"table 1 {robot.name}: done")
    return res


def pin_methods(res: SystemResult, urdf, plan: Plan):
    try:
        py = bench.pinocchio_python(urdf, QUANTITIES, plan.repeats, plan.min_time)
        for qty in QUANTITIES:
            if isinstance(py[qty], str):
                res.missing(["pin_py"], qty, "n/a", py[qty])
            else:
                res.put("pin_py", qty, py[qty])
    except bench.BenchError as exc:
        for qty in QUANTITIES:
            res.missing(["pin_py"], qty, "n/a", str(exc))
    res.put("pin_cpp_n_c", "C", "n/a")
    res.notes["pin_cpp_n_c/C"] = "a Gamma-only row"
    try:
        if plan.pin_cpp == "off":
            raise bench.BenchError("the Pinocchio C++ harness is off (--pin-cpp off)")
        cpp = bench.pinocchio_cpp(urdf, ("C", "Gamma", "Gamma_by_n_C"), repeats=plan.repeats, min_time=plan.min_time,
                                  build=plan.pin_cpp == "build", timeout=plan.compile_timeout * 2)
        res.put("pin_cpp", "C", cpp["C"])
        res.put("pin_cpp", "Gamma", cpp["Gamma"])
        res.put("pin_cpp_n_c", "Gamma", cpp["Gamma_by_n_C"])
    except bench.BenchError as exc:
        res.missing(["pin_cpp"], "C", "n/a", str(exc))
        res.missing(["pin_cpp", "pin_cpp_n_c"], "Gamma", "n/a", str(exc))


def table1(plan: Plan, work: Path, log=print) -> dict:
    systems = []
    for kind, n in plan.table1:
        r = measure_system(kind, n, plan, work, log)
        systems.append({**r.info, "cells": r.cells, "spread_us": r.spread, "notes": r.notes})
    return {"methods": TABLE1_METHODS, "systems": systems, "unit": "µs per call (median over repeats)",
            "c_loop_flags": plan.flags, "binding_copt": plan.copt, "batch": plan.batch, "numpy_batch": plan.numpy_batch}


# ----------------------------------------------------------------------------------- Figures

def figure_data(plan: Plan, work: Path, log=print) -> dict:
    """Time per call vs DoF of the generated C (C loop) and of Pinocchio C++, per kind."""
    series = {}
    for kind, sizes in plan.figures.items():
        pts = []
        for n in sizes:
            from . import robots
            robot = robots.make(kind, n)
            point = {"n": n, "dof": robot.n}
            msgs, done = built_package(kind, n, work, plan.build_timeout)
            if done:
                got = _merged(msgs)
                try:
                    loop = bench.c_loop(got["path"], QUANTITIES, flags=plan.flags, repeats=plan.repeats,
                                        min_time=plan.min_time, timeout=plan.compile_timeout)
                    point.update({f"symgen_{q}": round(loop[q].us, 4) for q in QUANTITIES})
                except bench.BenchError as exc:
                    point["note"] = str(exc)
                if plan.pin_cpp != "off":
                    try:
                        cpp = bench.pinocchio_cpp(got["urdf"], ("C", "Gamma"), repeats=plan.repeats,
                                                  min_time=plan.min_time, build=plan.pin_cpp == "build")
                        point.update({f"pin_{q}": round(cpp[q].us, 4) for q in QUANTITIES})
                    except bench.BenchError as exc:
                        point["pin_note"] = str(exc)
            else:
                point["note"] = f"symgen build took more than {plan.build_timeout:g} s"
            pts.append(point)
            log(f"figures {kind} {n}: {point}")
        series[kind] = {"points": pts, "slopes": slopes(pts), "paper": PAPER_SLOPES.get(kind, "")}
    return series


def slopes(points) -> dict:
    """Least-squares slope of log(time) vs log(DoF) for each measured series."""
    out = {}
    keys = sorted({k for p in points for k in p if k.startswith(("symgen_", "pin_")) and not k.endswith("note")})
    for k in keys:
        xs = [p["dof"] for p in points if isinstance(p.get(k), (int, float))]
        ys = [p[k] for p in points if isinstance(p.get(k), (int, float))]
        if len(xs) >= 2 and len(set(xs)) >= 2:
            out[k] = round(float(np.polyfit(np.log(xs), np.log(ys), 1)[0]), 2)
    return out


def plot_figures(series: dict, out: Path) -> list[Path]:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise OptionError("--figures needs matplotlib: pip install 'symgen[plots]'") from None
    files = []
    groups = [("fig2_serial.png", ["serial"]), ("fig3_tree.png", ["tree"]), ("fig4_legged.png", ["biped", "quadruped"])]
    for fname, kinds in groups:
        fig, axes = plt.subplots(1, 2, figsize=(10, 4))
        for ax, qty in zip(axes, QUANTITIES):
            for kind in kinds:
                if kind not in series:
                    continue
                s = series[kind]
                for prefix, style, who in (("symgen", "o-", "symgen C"), ("pin", "s--", "Pinocchio C++")):
                    key = f"{prefix}_{qty}"
                    pts = [(p["dof"], p[key]) for p in s["points"] if isinstance(p.get(key), (int, float))]
                    if not pts:
                        continue
                    slope = s["slopes"].get(key)
                    label = f"{who}, {KIND_LABEL[kind]}" + (f" (slope {slope:.2f})" if slope is not None else "")
                    ax.loglog(*zip(*pts), style, label=label)
            ax.set_xlabel("degrees of freedom" + (" (incl. 6 of the floating base)" if "biped" in kinds else ""))
            ax.set_ylabel(f"time per {qty} (µs)")
            paper = "; ".join(f"paper, {KIND_LABEL[k]}: {PAPER_SLOPES[k]}" for k in kinds if k in ("serial", "tree"))
            ax.set_title(f"{qty} — {paper or 'biped vs quadruped (paper Fig. 4)'}", fontsize=9)
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=7)
        fig.tight_layout()
        path = out / fname
        fig.savefig(path, dpi=120)
        plt.close(fig)
        files.append(path)
    return files


# ---------------------------------------------------------------------------------- Markdown

def _fmt(v, digits=3):
    if isinstance(v, float):
        return f"{v:.{digits}g}" if abs(v) < 1000 else f"{v:,.0f}"
    if isinstance(v, int):
        return f"{v:,}"
    return str(v)


def markdown(results: dict) -> str:
    m = results["machine"]
    lines = [f"# symgen tables", "", f"Command: `{results['command']}`  ", f"Date: {results['date']}  ",
             f"Machine: {m['cpu']}, {m['cores']} cores; Python {m['python']}, NumPy {m['numpy']}, SymPy {m['sympy']}, "
             f"{m['cc']}, Pinocchio {m['pinocchio']}; symgen {m.get('symgen_commit') or 'n/a'}", ""]
    if "table2" in results:
        t2 = results["table2"]
        lines += ["## Table 2 — all Gamma_ijk symbolically (s; ops after CSE)", "",
                  f"Each cell in its own process, timeout {t2['timeout_s']:g} s. {t2['paper_note']}.", "",
                  "| system | route | run (s) | run + CSE (s) | ops after CSE | paper (s) |", "|---|---|---:|---:|---:|---:|"]
        for r in t2["rows"]:
            lines.append(f"| {KIND_LABEL[r['kind']]} N={r['n']} | {r['label']} | {_fmt(r['run_s'])} | "
                         f"{_fmt(r['run_cse_s'])} | {_fmt(r['ops'])} | {_fmt(r['paper_s'])} |")
        for k, v in t2["notes"].items():
            lines.append(f"- {k}: {v}")
        lines.append("")
    if "table1" in results:
        t1 = results["table1"]
        lines += ["## Table 1 — numeric, µs per call: median (min–max) over the repeats", "",
                  f"C loop flags `{t1['c_loop_flags']}`; Python binding `{t1['binding_copt']}`; batch {t1['batch']} "
                  f"(NumPy batch {t1['numpy_batch']}).", ""]
        head = "| method | " + " | ".join(f"{s['name']} ({s['dof']} DoF) C | Gamma" for s in t1["systems"]) + " |"
        lines += [head, "|---|" + "---:|---:|" * len(t1["systems"])]
        for method, label in t1["methods"].items():
            cells = []
            for s in t1["systems"]:
                for qty in QUANTITIES:
                    value = s["cells"].get(method, {}).get(qty, "n/a")
                    lo_hi = s["spread_us"].get(method, {}).get(qty)
                    cells.append(_fmt(value) + (f" ({_fmt(lo_hi[0])}–{_fmt(lo_hi[1])})" if lo_hi else ""))
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
        lines += ["", "How many times faster the generated C is, median / min of the repeats (Pinocchio C++ "
                  "and the paper against the C loop, Pinocchio from Python against the Python call):", ""]
        for s in t1["systems"]:
            c, spread = s["cells"], s["spread_us"]
            parts = []
            for qty in QUANTITIES:
                for ref, ours, name in (("pin_cpp", "c_loop", "Pinocchio C++"), ("pin_cpp_n_c", "c_loop", "Pinocchio C++ n x C"),
                                        ("pin_py", "c_py_single", "Pinocchio Python"), ("paper", "c_loop", "paper")):
                    a, b = c.get(ours, {}).get(qty), c.get(ref, {}).get(qty)
                    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and a > 0:
                        text = f"{qty} vs {name} {b / a:.1f}x"
                        if ref in spread and qty in spread.get(ref, {}):
                            text += f" / {spread[ref][qty][0] / spread[ours][qty][0]:.1f}x"
                        parts.append(text)
            lines.append(f"- {s['name']}: " + ("; ".join(parts) or "n/a"))
        grouped = {}
        for s in t1["systems"]:
            for k, v in s["notes"].items():
                grouped.setdefault(v, []).append(f"{s['name']} {k}")
        for v, where in grouped.items():
            lines.append(f"- {', '.join(where)}: {v}")
        lines.append("")
    if "figures" in results:
        lines += ["## Figures 2–4 — time vs DoF (µs, generated C in a C loop and Pinocchio C++)", ""]
        for kind, s in results["figures"].items():
            lines.append(f"- {KIND_LABEL[kind]}: slopes {s['slopes']} (paper: {s['paper']})")
            for p in s["points"]:
                lines.append(f"  - {p}")
        for f in results.get("figure_files", []):
            lines.append(f"- ![{Path(f).stem}]({Path(f).name})")
        lines.append("")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------------------- run

def run(plan: Plan, out: Path, tables=("1", "2"), figures: bool = False, command: str = "symgen tables",
        log=print) -> dict:
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    if figures:                                      # fail early, not after an hour of runs
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise OptionError("--figures needs matplotlib: pip install 'symgen[plots]'") from None
    results = {"command": command, "date": time.strftime("%Y-%m-%d %H:%M:%S"), "machine": bench.machine_info(),
               "quick": plan.quick}
    json_path = out / "tables.json"

    def save():
        json_path.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        (out / "tables.md").write_text(markdown(results), encoding="utf-8")

    with tempfile.TemporaryDirectory(prefix="symgen-tables-") as tmp:
        work = Path(tmp)
        if "2" in tables:
            results["table2"] = table2(plan, log)
            save()
        if "1" in tables:
            results["table1"] = table1(plan, work, log)
            save()
        if figures:
            results["figures"] = figure_data(plan, work, log)
            results["figure_files"] = [str(p) for p in plot_figures(results["figures"], out)]
            save()
    save()
    return results
