"""What ``symgen bench`` prints and writes: the result of one package as a JSON-ready dict, the
ratios to Pinocchio, the text report, and the machine the numbers come from."""
from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import numpy as np

from .harness import compiler_version
from .pin import pin_version

RATIO_PAIRS = (("pin_cpp", "c_loop"), ("pin_cpp_n_c", "c_loop"), ("pin_py", "c_py_single"), ("casadi_c", "c_loop"),
               ("casadi_pin_c", "c_loop"), ("cppadcg", "c_loop"), ("cppadcg_eval", "c_loop"),
               ("mujoco_c", "c_loop"), ("drake_py", "c_py_single"), ("idyntree_py", "c_py_single"),
               ("c_loop", "c_loop_batch"))

BENCH_LABELS = {"c_loop": "generated C, C loop",
                "c_loop_update": "generated C, C loop, _update (no zeroing)",
                "c_loop_batch": "generated C, C batch, per state (one thread)", "c_py_single": "generated C from Python, one state",
                "c_py_batch": "generated C from Python, per state in a batch",
                "pin_cpp": "Pinocchio C++", "pin_cpp_n_c": "Pinocchio C++, n x computeCoriolisMatrix",
                "pin_py": "Pinocchio from Python",
                "casadi_c": "CasADi's generated C (symgen's algorithms taped), same C loop",
                "casadi_pin_c": "CasADi's generated C (Pinocchio's algorithms taped), same C loop",
                "mujoco_c": "MuJoCo's C library, same C loop",
                "drake_py": "Drake's MultibodyPlant from Python",
                "idyntree_py": "iDynTree's KinDynComputations from Python",
                "cppadcg": "Pinocchio's generated code (CppADCodeGen)",
                "cppadcg_eval": "... through Pinocchio's evalFunction"}


def ratios(us: dict, spread: dict) -> dict:
    """How many times faster symgen is (Pinocchio C++ / C loop, Pinocchio Python / Python call),
    of the medians and of the minima: on a shared machine the two are timed minutes apart, and
    the minima (least disturbed repeats) compare the two codes more steadily than the medians."""
    out = {}
    for theirs, ours in RATIO_PAIRS:
        if theirs in us and ours in us and us[ours] > 0:
            out[f"{theirs}/{ours}"] = round(us[theirs] / us[ours], 2)
            out[f"{theirs}/{ours} (min)"] = round(spread[theirs][0] / spread[ours][0], 2)
    return out


def bench_result(measurement, package_dir, manifest: dict, quantities, flags: str) -> dict:
    """The JSON of ``symgen bench``: per quantity, µs per call by method, their min-max, ratios;
    notes keyed ``quantity/method``."""
    cells, spread = measurement.grid(by_quantity=True, timings_only=True)
    us = {qty: cells.get(qty, {}) for qty in quantities}
    spread_us = {qty: spread.get(qty, {}) for qty in quantities}
    result = {"package": str(package_dir), "robot": manifest.get("robot"), "nv": int(manifest["nv"]), "flags": flags,
              "machine": machine_info(), "us": us, "spread_us": spread_us,
              "notes": measurement.note_dict(by_quantity=True),
              "ratios": {qty: ratios(us[qty], spread_us[qty]) for qty in quantities}}
    for label in ("casadi", "casadi_pin"):
        if label in measurement.info:
            result[label] = casadi_summary(measurement.info[label], manifest, quantities)
    for label in ("mujoco", "drake", "idyntree"):
        if label in measurement.info:
            result[label] = measurement.info[label]
    if "cppadcg" in measurement.info:
        result["cppadcg"] = measurement.info["cppadcg"]
    return result


def casadi_summary(info: dict, manifest: dict, quantities) -> dict:
    """CasADi's side of a bench result: its version, the check before timing, and per quantity
    the operation counts of its generated function beside ours (the manifest's ``ops``)."""
    functions = manifest.get("functions", {})
    from ..quantities import QUANTITIES

    ops = {}
    for qty in quantities:
        if qty in info["ops"]:
            ours = functions.get(QUANTITIES[qty].function, {}).get("ops", {})
            ops[qty] = {"symgen": ours, "casadi": info["ops"][qty]}
    return {"version": info["version"], "check": info["check"], "tape_s": info["tape_s"], "c": info["c"],
            "ops": ops, "source": info.get("source", "symgen")}


def grouped_notes(notes) -> dict:
    """``{note: [where, ...]}`` from ``(where, note)`` pairs: a reason shared by many cells, once."""
    out = {}
    for where, note in notes:
        out.setdefault(note, []).append(where)
    return out


def format_report(result: dict) -> str:
    lines = [f"{result['robot']} ({result['nv']} DoF), {result['package']}; C loop flags {result['flags']}; "
             f"{result['machine']['cpu']}"]
    for qty, us in result["us"].items():
        lines.append(f"{qty}: median µs per call (min-max)")
        for method, value in us.items():
            lo, hi = result["spread_us"][qty][method]
            lines.append(f"  {BENCH_LABELS.get(method, method):45s} {value:12.3f}   ({lo:.3f}-{hi:.3f})")
        for k, v in result["ratios"][qty].items():
            lines.append(f"  ratio {k:39s} {v:12.2f}x")
    for label, whose in (("casadi", "symgen's"), ("casadi_pin", "Pinocchio's")):
        cas = result.get(label)
        if not cas:
            continue
        lines.append(f"CasADi {cas['version']}, {whose} algorithms taped: {cas['check']['pinocchio']}; max relative "
                     "error " + ", ".join(f"{q} {e:.1e}" for q, e in cas["check"]["max_rel"].items()))
        for qty, ops in cas["ops"].items():
            o, c = ops["symgen"], ops["casadi"]
            lines.append(f"  ops {qty}: symgen {o.get('total', '?')} ({o.get('trig', '?')} sin/cos), "
                         f"CasADi {c['total']} ({c['trig']} sin/cos, {c['neg']} negations)")
    cg = result.get("cppadcg")
    if cg and "versions" in cg:         # (a bench of contact functions alone has their notes only)
        v = cg["versions"]
        lines.append(f"CppADCodeGen {v['cppadcodegen']} (CppAD {v['cppad']}, Pinocchio {v['pinocchio']}), compiled with "
                     f"{cg['flags']}; checked against Pinocchio, max relative error "
                     + ", ".join(f"{q} {e:.1e}" for q, e in cg["check"].items()))
    if result.get("c_batch"):
        lines.append(f"C batch: {result['c_batch']} packed states a call, one thread; ratio c_loop/c_loop_batch: "
                     "how many times faster a state is in the batch")
    if result.get("fma"):
        from .fma import format_rate
        lines.append(format_rate(result["fma"]))
    for note, where in grouped_notes(result["notes"].items()).items():
        lines.append(f"note {', '.join(where)}: {note}")
    return "\n".join(lines)


def machine_info(cc: str | None = None) -> dict:
    """What a reader needs to place the numbers: CPU, cores, Python, SymPy, compiler, Pinocchio."""
    import sympy

    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    cc = cc or os.environ.get("CC") or "cc"
    try:                                      # which symgen made the numbers, in a checkout
        here = Path(__file__).resolve().parent
        commit = subprocess.run(["git", "-C", str(here), "describe", "--always", "--dirty"], capture_output=True,
                                text=True, timeout=10).stdout.strip() or None
    except (OSError, subprocess.TimeoutExpired):
        commit = None
    return {"cpu": cpu, "symgen_commit": commit, "cores": os.cpu_count(), "platform": platform.platform(),
            "python": sys.version.split()[0], "numpy": np.__version__, "sympy": sympy.__version__,
            "cc": compiler_version(cc) if shutil.which(cc) else "none", "pinocchio": pin_version(),
            "python_ext_suffix": sysconfig.get_config_var("EXT_SUFFIX")}
