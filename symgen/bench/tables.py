"""``symgen tables``: the paper's Tables 1 and 2 and Figures 2-4, on this machine, beside the paper.

Table 2 (symbolic): time to obtain all Gamma_ijk symbolically. Routes (:data:`~.paper.ROUTES`):

    eq4_whole    symbolic CRBA M, then eq. (4) on it, whole expressions (the paper's baseline)
    algo2_whole  Algorithm 2 on symbols, whole expressions (the paper's run)
    eq4_named    eq. (4) through symgen's named CRBA program (intermediates named during the run)
    algo2_named  Algorithm 2 with named intermediates: what ``symgen build`` does
    vid_named    seed 002 Sec. VI-D: C* = 1/2 (dtau/dv + M K) by the analytical RNEA derivatives, then
                 Gamma[:, :, k] = C*(q, e_k) (``symgen build --gamma-method vid``)

Each cell runs in its own process with a hard timeout; it reports the run alone, run + CSE
(sympy.cse over the whole program) and the op count after CSE. A cell over the timeout shows
``> S s``; a larger system of the same route is then not tried (it would only be slower).

Table 1 (numeric): µs per call of C(q, qd) and Gamma(q) for the paper's 20-DoF systems by every
route we have (generated C in a C loop and from Python, generated NumPy, the numeric reference,
Pinocchio from Python and C++), beside the paper's values; the package and Pinocchio are timed
as ``symgen bench`` times them (:mod:`.measure`). Figures 2-4 (:mod:`.figures`): log-log time vs
DoF of the generated C (C loop) and of Pinocchio, with fitted slopes.

Table 3 (seed 003, Carpentier & Mansard, Table I): µs per call of forward dynamics, M^-1, the
derivatives of inverse and forward dynamics and inverse dynamics, generated, for real robots of
example-robot-data (an arm, quadrupeds, a humanoid; the legged ones with ``floating_base=True``,
Pinocchio with its free-flyer root on the original URDF), beside Pinocchio timed in the same run
(aba, computeMinverse, computeRNEADerivatives, computeABADerivatives, rnea) and beside the seed's
Table I; timed by :mod:`.measure` as Table 1 and ``symgen bench``.

A cell is a number, ``"> S s"`` (over a timeout: a symbolic run, a build or a compile), or
``"n/a"`` with the reason in ``notes``.
"""
from __future__ import annotations

import dataclasses
import json
import os
import site
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import OptionError
from ..quantities import QUANTITIES as REGISTRY
from .cloop import DEFAULT_FLAGS
from .figures import figure_data, plot_figures
from .markdown import markdown
from .measure import Measurement, Settings, draw_states, over, time_package, time_pinocchio
from .paper import (PAPER_TABLE1, PAPER_TABLE2, PAPER_TABLE2_NOTE, PAPER_TABLE3, PAPER_TABLE3_MACHINE,
                    PAPER_TABLE3_NOTE, PAPER_TABLE3_OTHER, PAPER_TABLE3_ROBOTS, QUANTITIES, ROUTES,
                    TABLE3_QUANTITIES, TABLE3_ROWS)
from .pin import PIN_CALLS
from .report import machine_info
from .steps import built_package, compile_binding, merged, run_limited, table2_cell
from .timing import time_callable


@dataclass
class Plan:
    """What one run measures: sizes, timeouts, timing effort."""
    table2: list                           # [(kind, n)]
    table1: list                           # [(kind, n)]
    figures: dict                          # kind -> [n]
    table3: list = field(default_factory=list)   # [(name, source, floating, paper robot or None)]
    timeout: float = 600.0                 # per Table 2 cell
    build_timeout: float = 1200.0          # per package build (symbolic run + printing)
    compile_timeout: float = 1200.0        # per compile of a package's C
    repeats: int = 7
    min_time: float = 0.05
    batch: int = 10_000
    numpy_batch: int = 1_000
    table3_batch: int = 1_000              # states per batch call in Table 3 (derivatives are 2 n^2 each)
    flags: str = DEFAULT_FLAGS             # C loop
    copt: str = "-O2"                      # Python binding
    pin_cpp: str = "build"                 # build | cached | off
    quick: bool = False

    def settings(self) -> Settings:
        """How each Table 1 system is timed."""
        return Settings(flags=self.flags, repeats=self.repeats, min_time=self.min_time,
                        compile_timeout=self.compile_timeout, batch=self.batch, numpy_batch=self.numpy_batch,
                        pin_cpp=self.pin_cpp, pin_timeout=self.compile_timeout * 2)


def full_plan(**kw) -> Plan:
    return Plan(table2=[("tree", 5), ("tree", 10), ("tree", 15), ("serial", 5), ("serial", 10), ("serial", 15),
                        ("serial", 20), ("planar", 10)],
                table1=[("serial", 20), ("tree", 20), ("biped", 20), ("quadruped", 20)],
                figures={"serial": [4, 8, 12, 16, 20], "tree": [4, 8, 12, 16, 20],
                         "biped": [4, 8, 12, 16, 20], "quadruped": [4, 8, 12, 16, 20]},
                table3=[("panda", "erd:panda_description/urdf/panda.urdf", False, "KUKA-LWR"),
                        ("hyq", "erd:hyq_description/robots/hyq_no_sensors.urdf", True, "HyQ"),
                        ("solo12", "erd:solo_description/robots/solo12.urdf", True, "HyQ"),
                        ("talos_reduced", "erd:talos_data/robots/talos_reduced.urdf", True, "Atlas")], **kw)


def quick_plan(**kw) -> Plan:
    settings = dict(timeout=8.0, build_timeout=60.0, compile_timeout=60.0, repeats=3, min_time=0.005, batch=100,
                    numpy_batch=100, table3_batch=100, flags="-O1", copt="-O1", pin_cpp="cached", quick=True)
    settings.update(kw)
    return Plan(table2=[("tree", 3), ("serial", 2), ("planar", 3)],
                table1=[("serial", 3), ("tree", 3), ("biped", 2), ("quadruped", 4)],
                figures={"serial": [2, 3], "tree": [2, 3], "biped": [2, 4], "quadruped": [4, 8]},
                table3=[("arm4", "example:arm4", False, None)], **settings)


def is_cell(value) -> bool:
    """A valid cell: a number, a timeout marker or "n/a"."""
    return (isinstance(value, (int, float)) and not isinstance(value, bool)) or value == "n/a" or \
        (isinstance(value, str) and value.startswith("> ") and value.endswith(" s"))


# ------------------------------------------------------------------------------------ Table 2

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
            got = merged(msgs)
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
    "reference": f"numeric reference (symgen.{' / '.join(REGISTRY[qty].function for qty in QUANTITIES)})",
    "pin_py": "Pinocchio from Python (computeCoriolisMatrix; Gamma: computeRNEASecondOrderDerivatives)",
    "pin_cpp": "Pinocchio C++ (computeCoriolisMatrix; Gamma: ComputeRNEASecondOrderDerivatives)",
    "pin_cpp_n_c": "Pinocchio C++, Gamma as n calls of computeCoriolisMatrix(q, e_k)",
    "paper": "paper, Table 1 (RBDL, i7 3.2 GHz, mean)",
}
PACKAGE_METHODS = ("c_loop", "c_py_single", "c_py_batch", "numpy_single", "numpy_batch")


def measure_system(kind, n, plan: Plan, work: Path, log=print) -> Measurement:
    """Every Table 1 method on one system: build its package (in a child, under a timeout),
    compile its binding (likewise), time it and Pinocchio as ``symgen bench`` does, time the
    numeric reference, and set the paper's value beside."""
    import symgen
    from .. import robots
    from ..urdf import write_urdf

    res = Measurement()
    robot = robots.make(kind, n)
    res.info = {"kind": kind, "n": n, "dof": robot.n, "name": robot.name}
    paper = PAPER_TABLE1.get(kind) if n == 20 else None
    for qty, value in zip(QUANTITIES, paper or ("n/a", "n/a")):
        res.put("paper", qty, value)
    if not paper:
        res.notes["paper"] = "the paper reports 20-DoF systems only"
    settings = plan.settings()
    msgs, done = built_package(kind, n, work, plan.build_timeout)
    got = merged(msgs)
    if not done:
        for qty in QUANTITIES:
            res.missing(PACKAGE_METHODS, qty, over(plan.build_timeout),
                        f"symgen build took more than {plan.build_timeout:g} s")
        urdf = work / f"{robot.name}.urdf"
        write_urdf(robot, urdf)
    else:
        res.info.update(build_s=round(got["build_s"], 2), ops={k: v["total"] for k, v in got["ops"].items()})
        log(f"table 1 {robot.name}: built in {got['build_s']:.1f} s")
        urdf = got["urdf"]
        time_package(res, got["path"], QUANTITIES, settings, _compiled_binding(res, got["path"], robot.name, plan))
        log(f"table 1 {robot.name}: generated code timed")

    # the numeric reference: symgen's top-level functions carry the generated functions' names
    states = draw_states(robot.nq, robot.nv, max(settings.batch, settings.numpy_batch))
    for qty in QUANTITIES:
        fn = getattr(symgen, REGISTRY[qty].function)
        args = [states[a][0].copy() for a in REGISTRY[qty].arguments]
        res.put("reference", qty, time_callable(lambda: fn(robot, *args), plan.repeats, plan.min_time))
    time_pinocchio(res, urdf, QUANTITIES, robot.nv, settings)
    res.missing(["pin_cpp_n_c"], "C", "n/a", "a Gamma-only row")
    if plan.pin_cpp == "off":
        for qty in QUANTITIES:
            res.missing([method for method, _ in PIN_CALLS[qty].cpp.values()], qty, "n/a", "the Pinocchio C++ harness is off (--pin-cpp off)")
    log(f"table 1 {robot.name}: done")
    return res


def _compiled_binding(res: Measurement, path, name, plan: Plan) -> tuple:
    """Compile the package's Python binding in a child under the compile timeout; the cell and
    note of its Python methods should it be missing."""
    cmsgs, cdone = run_limited(compile_binding, (str(path), name, plan.copt), plan.compile_timeout)
    try:
        cgot = merged(cmsgs)
    except RuntimeError as exc:
        cgot, cdone = {}, False
        res.notes["binding"] = str(exc).splitlines()[0]
    if cdone and "compile_s" in cgot:
        res.info["binding_compile_s"] = round(cgot["compile_s"], 2)
    if cdone:
        return "n/a", res.notes.get("binding", "binding not compiled")
    return over(plan.compile_timeout), f"compiling the binding ({plan.copt}) took more than {plan.compile_timeout:g} s"


def table1(plan: Plan, work: Path, log=print) -> dict:
    systems = []
    for kind, n in plan.table1:
        r = measure_system(kind, n, plan, work, log)
        cells, spread = r.grid()
        systems.append({**r.info, "cells": cells, "spread_us": spread, "notes": r.note_dict()})
    return {"methods": TABLE1_METHODS, "systems": systems, "unit": "µs per call (median over repeats)",
            "c_loop_flags": plan.flags, "binding_copt": plan.copt, "batch": plan.batch, "numpy_batch": plan.numpy_batch}


# ------------------------------------------------------------------------------------ Table 3

TABLE3_METHODS = {  # name -> label
    "c_loop": "generated C, C loop",
    "pin_cpp": "Pinocchio C++",
    "c_py_single": "generated C from Python, one state",
    "c_py_batch": "generated C from Python, per state in a batch",
    "pin_py": "Pinocchio from Python",
    "paper": "seed 003, Table I (Pinocchio 2018)",
}
TABLE3_PACKAGE_METHODS = ("c_loop", "c_py_single", "c_py_batch")
#: (Pinocchio's method, ours): the ratios of Table 3, Pinocchio's time / ours (how many times faster ours is)
TABLE3_RATIOS = (("pin_cpp", "c_loop"), ("pin_py", "c_py_single"))


def _erd_dirs():
    env = os.environ.get("EXAMPLE_ROBOT_DATA_DIR")
    if env:
        yield Path(env)
        return
    for d in [*site.getsitepackages(), site.getusersitepackages(), *sys.path]:
        if d:
            yield Path(d) / "cmeel.prefix" / "share" / "example-robot-data" / "robots"
    for p in (sys.prefix, "/opt/openrobots", "/usr/local", "/usr"):
        yield Path(p) / "share" / "example-robot-data" / "robots"


def robot_urdf(source: str) -> Path:
    """The URDF of a Table 3 system: ``erd:RELATIVE`` (example-robot-data's robots folder, which
    installs files only; ``$EXAMPLE_ROBOT_DATA_DIR`` overrides the search), ``example:NAME`` (a
    URDF bundled with symgen) or a path. Raises OptionError saying what is missing."""
    kind, _, rest = source.partition(":")
    if kind == "example":
        return Path(__file__).resolve().parent.parent / "examples" / f"{rest}.urdf"
    if kind != "erd":
        return Path(source)
    for d in _erd_dirs():
        if (d / rest).is_file():
            return d / rest
    raise OptionError(f"example-robot-data has no {rest} (pip install example-robot-data, or set EXAMPLE_ROBOT_DATA_DIR)")


def build_urdf_package(urdf, floating, quantities, out_dir, name, send):
    """A step (run under a timeout): write the C and NumPy package of a URDF, no compile here."""
    from .. import load_urdf
    from ..codegen.build import BuildOptions, build

    robot = load_urdf(urdf, floating_base=floating)
    t0 = time.perf_counter()
    words = " --floating-base" if floating else ""
    result = build(robot, out_dir, name=name, opts=BuildOptions(
        quantities=tuple(quantities), compile=False, force=True,
        command=f"symgen build {Path(urdf).name}{words} --quantities {','.join(quantities)} (symgen tables)"))
    send({"path": str(result.path), "build_s": time.perf_counter() - t0, "dof": robot.n, "ops": result.ops})


def measure_robot(name, source, floating, paper_robot, plan: Plan, work: Path, log=print) -> Measurement:
    """Every Table 3 method on one robot: build its package of the Table 3 functions (in a child,
    under the build timeout), compile its binding (likewise), time it and Pinocchio as ``symgen
    bench`` does (Pinocchio on the original URDF: with a free-flyer root if the package has the
    six virtual joints), and set the seed's value beside."""
    from .. import load_urdf

    res = Measurement()
    qtys = TABLE3_QUANTITIES
    res.info = {"name": name, "source": source, "floating_base": floating, "paper_robot": paper_robot}
    for qty in qtys:
        res.put("paper", qty, PAPER_TABLE3[paper_robot][qty] if paper_robot else "n/a")
    if paper_robot:
        res.info["paper_dof"] = PAPER_TABLE3_ROBOTS[paper_robot]
    else:
        res.notes["paper"] = f"the seed reports {', '.join(PAPER_TABLE3_ROBOTS)} only"
    try:
        urdf = robot_urdf(source)
        robot = load_urdf(urdf, floating_base=floating)
    except Exception as exc:                     # a missing data set or file: every cell says why
        for qty in qtys:
            res.missing([m for m in TABLE3_METHODS if m != "paper"], qty, "n/a", str(exc).splitlines()[0])
        return res
    res.info.update(urdf=urdf.name, dof=robot.n)
    settings = dataclasses.replace(plan.settings(), batch=plan.table3_batch, numpy_batch=0)
    msgs, done = run_limited(build_urdf_package, (str(urdf), floating, qtys, str(work / "table3"), name),
                             plan.build_timeout)
    try:
        got = merged(msgs)
    except RuntimeError as exc:
        got, failure = {}, f"symgen build failed: {str(exc).splitlines()[0]}"
    else:
        failure = None if "path" in got else "symgen build ended without a package"
    if not done:
        for qty in qtys:
            res.missing(TABLE3_PACKAGE_METHODS, qty, over(plan.build_timeout),
                        f"symgen build took more than {plan.build_timeout:g} s")
    elif failure:
        for qty in qtys:
            res.missing(TABLE3_PACKAGE_METHODS, qty, "n/a", failure)
    else:
        res.info.update(build_s=round(got["build_s"], 2),
                        ops={qty: got["ops"][REGISTRY[qty].function]["total"] for qty in qtys})
        log(f"table 3 {name}: built in {got['build_s']:.1f} s")
        time_package(res, got["path"], qtys, settings, _compiled_binding(res, got["path"], name, plan))
        log(f"table 3 {name}: generated code timed")
    time_pinocchio(res, urdf, qtys, robot.nv, settings)
    if plan.pin_cpp == "off":
        for qty in qtys:
            res.missing(["pin_cpp"], qty, "n/a", "the Pinocchio C++ harness is off (--pin-cpp off)")
    log(f"table 3 {name}: done")
    return res


def table3_ratios(cells: dict, spread: dict, notes: dict) -> dict:
    """``{quantity: {"pin_cpp/c_loop": [of medians, of minima] or "n/a", ...}}``: how many times
    faster the generated code is than Pinocchio, every pair; a pair without two numbers is
    ``"n/a"`` with the note of the missing side put under ``"<pair>/<quantity>"``."""
    out = {}
    for qty in TABLE3_QUANTITIES:
        row = out[qty] = {}
        for theirs, ours in TABLE3_RATIOS:
            key = f"{theirs}/{ours}"
            a, b = cells.get(ours, {}).get(qty), cells.get(theirs, {}).get(qty)
            if isinstance(a, (int, float)) and isinstance(b, (int, float)) and a > 0:
                row[key] = [round(b / a, 2), round(spread[theirs][qty][0] / spread[ours][qty][0], 2)]
            else:
                row[key] = "n/a"
                why = [notes.get(f"{m}/{qty}") for m in (ours, theirs) if not isinstance(cells.get(m, {}).get(qty), (int, float))]
                notes[f"{key}/{qty}"] = "; ".join(w for w in why if w) or "a side was not measured"
    return out


def table3(plan: Plan, work: Path, log=print) -> dict:
    systems = []
    for name, source, floating, paper_robot in plan.table3:
        r = measure_robot(name, source, floating, paper_robot, plan, work, log)
        cells, spread = r.grid()
        notes = r.note_dict()
        systems.append({**r.info, "cells": cells, "spread_us": spread,
                        "ratios": table3_ratios(cells, spread, notes), "notes": notes})
    return {"methods": TABLE3_METHODS, "quantities": list(TABLE3_QUANTITIES),
            "rows": {qty: {"function": REGISTRY[qty].function, "paper_row": TABLE3_ROWS[qty][0],
                           "pinocchio": TABLE3_ROWS[qty][1]} for qty in TABLE3_QUANTITIES},
            "systems": systems, "unit": "µs per call (median over repeats)",
            "ratio": "Pinocchio's time / ours (how many times faster the generated code is), of medians and of minima",
            "paper": {"machine": PAPER_TABLE3_MACHINE, "note": PAPER_TABLE3_NOTE, "robots": PAPER_TABLE3_ROBOTS,
                      "values_us": PAPER_TABLE3, "other_rows_us": PAPER_TABLE3_OTHER},
            "c_loop_flags": plan.flags, "binding_copt": plan.copt, "batch": plan.table3_batch,
            "repeats": plan.repeats, "min_time_s": plan.min_time}


# --------------------------------------------------------------------------------------- run

def run(plan: Plan, out: Path, tables=("1", "2", "3"), figures: bool = False, command: str = "symgen tables",
        log=print) -> dict:
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    if figures:                                      # fail early, not after an hour of runs
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise OptionError("--figures needs matplotlib: pip install 'symgen[plots]'") from None
    results = {"command": command, "date": time.strftime("%Y-%m-%d %H:%M:%S"), "machine": machine_info(),
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
        if "3" in tables:
            results["table3"] = table3(plan, work, log)
            save()
        if figures:
            results["figures"] = figure_data(plan, work, log)
            results["figure_files"] = [str(p) for p in plot_figures(results["figures"], out)]
            save()
    save()
    return results
