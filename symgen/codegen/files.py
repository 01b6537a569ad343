"""The files of a generated package: optimized Functions -> printed lines -> templates.

:func:`generate` returns ``{file name: text}`` and the manifest; nothing here touches the disk.
The printers turn expressions into C and Python text, the templates lay the lines out.
"""
from __future__ import annotations

import hashlib
import json
import re
from collections import Counter

import numpy as np
import sympy as sp

from .. import quantities as Q
from ..joint_models import layout_of
from .cmake import build_files, cmake_version
from ..mjcf_convert import free_slots
from ..scenes import package_trees
from ..algorithms.regressor import robot_parameters
from . import program as P
from .casadi_target import casadi_context, source_name
from .runs import row_runs
from ..passive import header_lines as passive_lines, package_values as passive_of
from .names import c_literal, comment_text, py_literal
from .jax_target import jax_context
from .xla_target import MAX_BUFFERS, library_name as xla_library_name, source_name as xla_source_name, xla_functions
from .lanes import HELPERS as LANES_HELPERS, inline_lanes, store_plan, store_plans, unchecked_trig
from ..quantities.contact import package_context as contact_context
from .printers import PyPrinter
from .scalar import printer, template_context
from .render import lane_expr, render

#: statements per C function part (see program.partition); serial 20, C and Gamma, gcc -O2:
#: 17 s with 200, 26 s with 800, 40 s with 1600, 272 s unsplit, same speed of the code
C_PART_SIZE = 200
#: functions up to this many statements stay whole (they compile in well under a second)
C_SPLIT_ABOVE = 2000
#: a work-array slot in printed C (the lanes copy reads it back as the temp's name)
_SLOT = re.compile(r"\bw\[\d+\]")
#: a whole function with at most this many output entries also gets a lanes version for batches
#: (its inputs and outputs for LANES states live on the stack: 4 x 8 bytes an entry)
LANES_MAX_OUT = 1024
#: ... and, printed in parts, at most this many work-array slots (8 lanes: 64 bytes a slot)
LANES_MAX_WORK = 4096
#: a whole function's lanes copy of at most this many lines computes its joints' sin and cos by the
#: polynomials alone, the range tested once at its top (solo12's M batch 14-20 % faster); longer
#: ones keep a test and a libm branch a call (without them the 20-DoF chain's M, 1,321 lines, was
#: 3-25 % slower in every run, its tau, 844 lines, 3 %, though link order alone moves the chain's
#: M as much; docs/RESULTS.md in the git history, simd3)
LANES_POLY_MAX_LINES = 800


def _comments(robot, assignments):
    """The body comment to print before each assignment (None when the body did not change)."""
    out, last = [], object()
    for a in assignments:
        if a.body is not None and a.body != last:
            b = robot.bodies[a.body]
            out.append(comment_text(f"body {a.body}: link '{b.name}', joint '{b.joint_name}'"))
            last = a.body
        else:
            out.append(None)
    return out


def _zeros_to_store(size, nonzero):
    """The flat indices of the zero entries (``nonzero``: the set of the others), when storing
    them one by one beats a memset of the whole output (fewer than half the entries are zero);
    None otherwise."""
    zeros = [k for k in range(size) if k not in nonzero]
    return zeros if 2 * len(zeros) < size else None


#: a sparse output with at most this many runs of zeros (and at most 16 zeros in runs shorter than 4)
#: zeroes only those runs (a memset of a run of 4 or more, a store each below), not the whole output
#: before its nonzeros overwrite part of it
ZERO_RUNS_MAX = 64
#: ... and has at least this many entries (2 KB): below, one memset costs about what the runs do
ZERO_RUNS_MIN_SIZE = 256


def _zero_runs(size, nonzero):
    """The runs of zero entries (start, length) of a sparse output (one :func:`_zeros_to_store`
    leaves to a memset), when there are at most ZERO_RUNS_MAX: the "zero" steps of the batch's
    store plan for one lane; None otherwise (a memset of the whole). solo12's regressor (1,568 of
    2,340 entries zero, 55 runs): 806 -> 764 ns a call (min, one process)."""
    if size < ZERO_RUNS_MIN_SIZE:                                    # one memset of a small output
        return None
    runs = [(start, count) for kind, start, count in store_plan(size, nonzero, 1) if kind == "zero"]
    short = sum(length for _, length in runs if length < 4)         # zeroed by a store each
    return runs if len(runs) <= ZERO_RUNS_MAX and short <= 16 else None


def _output_context(out, entries, pypr, loop_values=None) -> dict:
    size = 1
    for d in out.shape:
        size *= d
    if loop_values:                 # a loop's target: the loops write every entry
        entries = [(k, None) for k in range(size)]
    index = [k for k, _ in entries]
    nonzero = set(index)
    # a mostly dense output gets its few zeros stored one by one (also in the batch's lanes copy of
    # widths without a store plan), a sparse one a memset of its zero runs or of the whole first
    zeros = _zeros_to_store(size, nonzero)
    return {
        "name": out.name, "size": size, "shape": tuple(out.shape), "shape_literal": repr(tuple(out.shape)),
        "zeros": zeros, "zero_runs": _zero_runs(size, nonzero) if zeros is None else None,
        "nonzero": len(entries), "index_literal": repr(index), "index": index,
        # the batch's lanes copy: per width, how its vectors go back to the packed states (zero
        # entries stored there, not in the vectors)
        "lanes_plans": store_plans(size, nonzero),
        "py_values": loop_values or [pypr.doprint(e) for _, e in entries],
    }


def _loop_context(fn, lp, number, cpr, pypr) -> dict:
    """What the templates print for one column loop (:class:`~symgen.codegen.program.Loop`): its
    body in C (one column ``c_`` of ``X_``, a target: rows read in, rows overwritten) and in
    Python (a nested function of the rows read, each an array over the loop's columns)."""
    rows, cols = fn.outputs[lp.targets[0]].shape
    return {
        "number": number, "rows": rows, "cols": cols, "start": lp.start, "stop": lp.stop,
        "symmetric": lp.symmetric, "targets": [fn.outputs[t].name for t in lp.targets],
        "column": [(s.name, i * cols) for s, i in zip(lp.column, lp.rows_in)],
        "c_lines": [{"temp": a.temp.name, "c": cpr.doprint(a.expr)} for a in lp.assignments],
        "c_results": [(i * cols, cpr.doprint(e)) for i, e in zip(lp.rows_out, lp.results)],
        "py_column": [s.name for s in lp.column],
        "py_lines": [{"temp": a.temp.name, "py": pypr.doprint(a.expr)} for a in lp.assignments],
        "py_results": [pypr.doprint(e) for e in lp.results],
    }


def _run_context(fn, run, slots, cpr, lanes=None) -> dict:
    """What the C template prints for one row run (:class:`~symgen.codegen.runs.Run`): the
    shared factors, computed once, and the loop's statement over ``k_``; and, for the lanes copy
    of a whole function (``lanes``: printed C with the work array's slots as temp names), each
    entry it writes."""
    terms = [f"w[{slots[temps[0]]} + k_]" if coef == 1 else f"c{r}_*w[{slots[temps[0]]} + k_]"
             for r, (coef, temps) in enumerate(zip(run.coefs, run.temps))]
    const = [] if run.const == 0 else [cpr.doprint(run.const)]
    coefs = [cpr.doprint(coef) for coef in run.coefs]
    context = {
        "output": fn.outputs[run.output].name, "start": run.start, "count": run.count,
        "coefs": [(f"c{r}_", c) for r, (coef, c) in enumerate(zip(run.coefs, coefs)) if coef != 1],
        "lanes_coefs": [(f"c{r}_", lane_expr(c)) for r, (coef, c) in enumerate(zip(run.coefs, coefs)) if coef != 1],
        "value": " + ".join(const + terms),
        "mirror": (None if run.mirror is None else
                   {"output": fn.outputs[run.mirror[0]].name, "start": run.mirror[1], "stride": run.mirror[2]}),
        "lanes_entries": [],
    }
    if lanes is not None:
        # entry by entry (with the temps in a lanes array the chain's M batch went 0.56 -> 0.84
        # µs a state), the loop's sum in the loop's order (const, then term by term, each coef
        # computed first), so that without FMA contraction the lanes copy gives the loop's bits
        values = [lane_expr(" + ".join([lanes(c) for c in const] + [
                      t[k].name if coef == 1 else f"({lanes(c)})*{t[k].name}"
                      for coef, c, t in zip(run.coefs, coefs, run.temps)]))
                  for k in range(run.count)]
        context["lanes_entries"] = [(fn.outputs[o].name, k, values[i % run.count])
                                    for i, (o, k) in enumerate(run.positions())]
    return context


def _loop_values(fn, target) -> list[str]:
    """The Python text of each entry of a loop's target: row r of the loop covering column c,
    ``_loopN_t[position of r in its rows_out][c - start]`` (mirrored: the upper triangle's)."""
    rows, cols = fn.outputs[target].shape
    where = {}
    for number, lp in enumerate(fn.loops):
        if target in lp.targets:
            t = lp.targets.index(target)
            for c in range(lp.start, lp.stop):
                for pos, r in enumerate(lp.rows_out):
                    where[r, c] = f"_loop{number}_{t}[{pos}][{c - lp.start}]"
    symmetric = any(lp.symmetric for lp in fn.loops if target in lp.targets)
    return [where[(min(i, c), max(i, c)) if symmetric else (i, c)] for i in range(rows) for c in range(cols)]


def _sincos(assignments, cin) -> tuple[list, dict]:
    """The inputs whose sin or cos a part computes (C text, in order) and, per such temp, where
    the C of a build with lanes reads it: ``ts_[k]``/``tc_[k]``, filled at the part's top by
    ``lanes_sincos_n`` (templates/c_lanes.h.j2), LANES angles a call instead of one libm call each."""
    args, trig = [], {}
    for a in assignments:
        e = a.expr
        if isinstance(e, (sp.sin, sp.cos)) and e.args[0] in cin:
            text = cin[e.args[0]]
            if text not in args:
                args.append(text)
            trig[a.temp] = f"{'ts_' if isinstance(e, sp.sin) else 'tc_'}[{args.index(text)}]"
    return args, trig


def function_context(robot, fn, key: str, scalar: str = "double") -> dict:
    """What the templates print for one Function: its lines in Python and C (in parts when long, in
    ``scalar``: :mod:`.scalar`), the entries of each output, signature and the sizes the bindings check."""
    params = [inp.name for inp in fn.inputs]
    cin = {s: f"{inp.name}[{k}]" for inp in fn.inputs for k, s in enumerate(inp.symbols)}
    pypr = PyPrinter()
    # per temp, the expressions (later lines, output entries; not the column loops) that read it:
    # read only by the JAX module's fused functions (jax_target), so counted only for theirs
    readers = Counter(s for e in [a.expr for a in fn.assignments] + [e for o in fn.outputs for e in o.exprs]
                      for s in sp.sympify(e).free_symbols) if Q.QUANTITIES[key].jax_fused else Counter()
    lines = [{"temp": a.temp.name, "py": pypr.doprint(a.expr), "comment": c, "readers": readers[a.temp]}
             for a, c in zip(fn.assignments, _comments(robot, fn.assignments))]
    entries = P.output_entries(fn)
    # a loop's target: every entry, read from the loops' results
    loop_values = {t: _loop_values(fn, t) for lp in fn.loops for t in lp.targets}
    outputs = [_output_context(out, [(k, e) for o, k, e in entries if o == n], pypr, loop_values.get(n))
               for n, out in enumerate(fn.outputs)]
    parts, slots = P.partition(fn, C_PART_SIZE, C_SPLIT_ABOVE)
    parts, slots, runs = row_runs(fn, parts, slots)
    cpr = printer(scalar)({**cin, **{s: f"w[{k}]" for s, k in slots.items()}})      # scalar: its C type
    # the lanes copy of a whole function keeps every temp a local: its printed text with the
    # work array's slots (the row runs' arrays) read back as the temps' names
    named = {f"w[{k}]": s.name for s, k in slots.items()}
    lanes = (lambda c: _SLOT.sub(lambda m: named[m.group(0)], c)) if len(parts) == 1 else None
    loops = [_loop_context(fn, lp, number, cpr, pypr) for number, lp in enumerate(fn.loops)]
    py_loops = [{**lc, "calls": [{"var": f"_loop{lc['number']}_{t}",
                                  "rows": [[pypr.doprint(fn.outputs[target].exprs[i * lc["cols"] + c])
                                            for c in range(lp.start, lp.stop)] for i in lp.rows_in]}
                                 for t, target in enumerate(lp.targets)]}
                for lc, lp in zip(loops, fn.loops)]
    c_parts = []
    for number, part in enumerate(parts):
        sincos, trig = _sincos(part.assignments, cin) if scalar == "double" else ([], {})   # float: no lanes
        # a joint angle's sin or cos in a short whole function's lanes copy: the polynomials alone
        # (the range tested once, at its top, on the part's sincos angles)
        poly = lanes is not None and len(part.assignments) <= LANES_POLY_MAX_LINES
        lanes_trig = (lambda a, c: unchecked_trig(c) if poly and a.temp in trig else c)
        c_lines = [{"lhs": (f"w[{slots[a.temp]}]" if a.temp in slots else f"const {scalar} {a.temp.name}"),
                    "c": cpr.doprint(a.expr), "comment": c, "trig": trig.get(a.temp)}
                   for a, c in zip(part.assignments, _comments(robot, part.assignments))]
        c_entries = [(fn.outputs[o].name, k, cpr.doprint(e)) for o, k, e in part.entries]
        c_parts.append({
            "lines": c_lines, "entries": c_entries, "sincos": sincos,
            "loops": loops if part is parts[-1] else [],
            "runs": [_run_context(fn, run, slots, cpr, lanes) for p, run in runs if p == number],
            # the lanes copy: a whole function's every temp a local, none in the runs' arrays; a
            # part's as printed, its work array one of lanes (the runs read it as they are)
            "lanes_lines": [{"lhs": f"const lanes_t {a.temp.name}", "c": lanes_trig(a, lane_expr(lanes(line["c"])))}
                            for a, line in zip(part.assignments, c_lines)] if lanes else
                           [{"lhs": line["lhs"].replace("const double ", "const lanes_t "),
                             "c": lanes_trig(a, lane_expr(line["c"]))} for a, line in zip(part.assignments, c_lines)],
            "lanes_entries": [(o, k, lane_expr(lanes(c) if lanes else c)) for o, k, c in c_entries],
            "lanes_poly": poly,
        })
    returns = " -> " + (outputs[0]["shape_literal"] if len(outputs) == 1
                        else "(" + ", ".join(o["shape_literal"] for o in outputs) + ")")
    return {
        "name": fn.name, "doc": fn.doc, "params": params, "outputs": outputs,
        "outs": [o["name"] for o in outputs],
        "nonzero": sum(o["nonzero"] for o in outputs), "size": sum(o["size"] for o in outputs),
        "signature": f"{fn.name}({', '.join(params)}){returns}",
        "inputs": [{"name": inp.name, "size": len(inp.symbols),
                    "unpack": ", ".join(s.name for s in inp.symbols) + ("," if len(inp.symbols) == 1 else "")}
                   for inp in fn.inputs],
        # per input, the doubles it holds (n, or 10 per body for params); the state inputs, and
        # the Python signature (params, when there, is optional: the nominal parameters)
        "sizes": [len(inp.symbols) for inp in fn.inputs],
        "state_params": [p for p in params if p != "params"],
        "parametric": "params" in params,
        "params_def": ", ".join("params=None" if p == "params" else p for p in params),
        "lines": lines, "py_loops": py_loops,
        "c_parts": c_parts,
        "work": len(slots), "quantity": key,
        "route": fn.route,
        "c_shape": {"parts": len(c_parts), "column_loops": len(fn.loops), "row_runs": len(runs)},
        "slp": Q.QUANTITIES[key].slp,
        "jax_fused": Q.QUANTITIES[key].jax_fused,
        # a lanes copy for batches: no column loops (those are vectorized across columns
        # already), outputs small enough for LANES states on the stack; in parts, the parts' work
        # array of lanes on the stack too (LANES x 8 bytes a slot)
        "lanes": (scalar == "double" and not c_parts[-1]["loops"] and sum(o["size"] for o in outputs) <= LANES_MAX_OUT
                  and len(slots) <= LANES_MAX_WORK),
        "lanes_inline": len(c_parts) == 1 and inline_lanes(len(c_parts[0]["lanes_entries"]) + sum(
            len(r["lanes_entries"]) for r in c_parts[0]["runs"]), len(c_parts[0]["lanes_lines"])),
    }


def header_lines(robot, opts, version: str) -> list[str]:
    """The provenance header of every generated file (no timestamps, no absolute paths)."""
    return [
        f"Generated by symgen {version} -- do not edit; regenerate with:",
        f"  {comment_text(opts.command)}" if opts.command else "  symgen build <urdf>",
        f"robot {comment_text(robot.name)}: {robot.n} joints, depth {robot.depth}"
        + (f", free-flyer (nq = {robot.nq})" if robot.floating_base else ""),
        f"source sha256 {comment_text(opts.source_sha256 or 'n/a')}",
        f"options: quantities={','.join(opts.quantities)} gamma_method={opts.gamma_method} "
        f"frame={opts.frame} floating_base={robot.floating_base} cse={opts.cse} "
        f"gravity={Q.gravity_text(opts.gravity)} parametric={opts.parametric}"
        + (" mimic=True" if _relations(robot) else "")
        + (f" couplings={','.join(tuple(robot.loops))}" if tuple(robot.loops) else "")
        + "".join(f" {k}=True" for k in ("open_loops", "passive", "external_forces") if getattr(opts, k, False))
        + (" scalar=float" if opts.scalar == "float" else "")
        + (f" base_velocity={opts.sweep.base_velocity}" if opts.sweep.base_velocity != "body" else ""),
        *([f"armature: {' '.join(repr(float(a)) for a in armature_of(robot))}"] if robot.has_armature else []),
        *passive_lines(robot),
        f"SymPy {sp.__version__}",
    ]


def armature_of(robot) -> np.ndarray:
    """The armature per velocity of the package (nv,): zeros when none (an embedded robot's
    reduced velocities have none: --mimic with --armature is refused)."""
    return robot.armature_vector if robot.has_armature and not robot.embedding else np.zeros(robot.n)


def _mujoco_qpos0(robot, opts=None):
    """MuJoCo's qpos0 of a model read from MJCF (from_mujoco/to_mujoco), else None; None too with
    --mimic, with loops and in mixed or inertial base speeds (reduced coordinates or other speeds:
    those two are not generated there yet)."""
    if robot.embedding or robot.system is not None or opts is not None and opts.sweep.base_velocity != "body":
        return None                               # v is not MuJoCo's qvel there
    return robot.mujoco_qpos0


def _relations(robot):
    """The mimic relations embedded (--mimic), else ()."""
    return robot.embedding.relations if robot.embedding is not None else ()


def _loop_solve(robot, contexts):
    """What ``templates/loops_solve.c.j2`` needs (C ``NAME_solve_loops``), or None: the package of a
    model with URDF+ couplings or loops that has the residual (and, with rows, the Jacobian) it
    calls; with couplings only it has no rows, and solve_loops returns q."""
    names = set(f["name"] for f in contexts)
    if not robot.loops or "loop_residual" not in names or (robot.loop_rows and "loop_jacobian" not in names):
        return None
    dependent = list(robot.loop_dependent_q)               # q entries (a free-flyer shifts them by one)
    return {"rows": len(dependent), "dependent": dependent}


#: a joint's coordinates as the header states them (q entries, then v entries)
_JOINT_LAYOUT = {
    "revolute": ("angle (rad)", "speed (rad/s)"), "continuous": ("angle (rad)", "speed (rad/s)"),
    "prismatic": ("position (m)", "speed (m/s)"),
    "freeflyer": ("x y z (m, in the world) then the unit quaternion qx qy qz qw (Pinocchio's order)",
                  "linear (m/s) then angular (rad/s) velocity, both in the base frame"),
    "spherical": ("the unit quaternion qx qy qz qw", "angular velocity (rad/s) in the child frame"),
    "planar": ("x y (m) then cos, sin of the angle", "vx vy (m/s) then the angle's speed (rad/s), in the child frame"),
}


def shape_text(dims, shape, sizes: dict) -> tuple[str, str]:
    """(size, shape) of an output as C text over the header's count macros: ``dims`` (an Output
    shape's ``dims``: ints and letters, None when unknown) read through ``sizes`` (letter ->
    (macro, value)); the numbers themselves where a letter has no macro or the dims disagree with
    the output's ``shape``."""
    if dims is not None and len(dims) == len(shape) and all(
            (d == k if isinstance(d, int) else d in sizes and sizes[d][1] == k) for d, k in zip(dims, shape)):
        parts = [str(d) if isinstance(d, int) else sizes[d][0] for d in dims]
    else:
        parts = [str(k) for k in shape]
    size = " * ".join(parts) or "1"
    return (f"({size})" if len(parts) > 1 else size), "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"


def _header_sizes(robot, opts, name: str, contexts: list, frames, nparams: int) -> dict:
    """What the header prints to size everything: the count macros (letter -> (macro, value)), and
    per output of each function its size and shape over them (``size_c``, ``shape_c``, set on the
    output contexts)."""
    P_ = name.upper()
    sizes = {"n": (f"{P_}_NV", robot.nv), "F": (f"{P_}_NFRAMES", len(frames)), "p": (f"{P_}_NPARAMS", nparams)}
    functions = [f["name"] for f in contexts]
    if {"contact_terms", "impulse_terms", "whole_body_terms", "contact_partials"} & set(functions):
        sizes["C"] = (f"{P_}_NCONTACTS", len(Q.contact.contacts_of(robot, opts.sweep)))
        sizes["m"] = (f"{P_}_NCONTACT_ROWS", Q.contact.contact_size(robot, opts.sweep))
    for f in contexts:
        declared = Q.QUANTITIES[f["quantity"]].outputs
        for k, o in enumerate(f["outputs"]):
            spec = declared[k] if k < len(declared) and declared[k].name == o["name"] else None
            o["size_c"], o["shape_c"] = shape_text(getattr(spec.shape, "dims", None) if spec else None, o["shape"], sizes)
    return sizes


def generate(robot, name: str, opts, contexts: list, ops: dict, version: str) -> dict:
    """All files of the package as ``{filename: text}``, from the printed Functions
    (:func:`function_context` of each, in build order) and their op counts (``{function name:
    counts}``)."""
    frames = Q.frames_of(robot, opts.frames)
    parameters = robot_parameters(robot)
    layout = layout_of(robot)
    scene = package_trees(robot)
    ctx = {
        "header": header_lines(robot, opts, version), "name": name, "cmake_version": cmake_version(version), "prefix": name, "PREFIX": name.upper(),
        "lanes_helpers": LANES_HELPERS, "n": robot.n, "nq": robot.nq, "functions": contexts,
        "robot_literal": py_literal(robot.name), "robot_comment": comment_text(robot.name),
        "joint_names_literal": "(" + "".join(py_literal(j) + ", " for j in robot.joint_names) + ")",
        "link_names_literal": "(" + "".join(py_literal(j) + ", " for j in robot.link_names) + ")",
        "frames_literal": "(" + "".join(py_literal(f.name) + ", " for f in frames) + ")",
        "parameters_literal": "[" + ", ".join(repr(float(x)) for x in parameters) + "]",
        "floating_base_literal": repr(bool(robot.floating_base)), "passive": bool(opts.passive),
        "gravity_literal": "[" + ", ".join(repr(float(x)) for x in opts.gravity) + "]",
        "armature_literal": "[" + ", ".join(repr(float(x)) for x in armature_of(robot)) + "]",
        **{f"{name}_literal": "[" + ", ".join(repr(float(x) + 0.0) for x in values) + "]"
           for name, values in passive_of(robot).items()},
        "external_forces": bool(opts.external_forces), "reference_frames_literal": repr(tuple(opts.reference_frames)),
        "joint_models_literal": "(" + "".join(f"({py_literal(j[0])}, {j[1]!r}, {j[2]}, {j[3]}, {j[4]}, {j[5]}), "
                                              for j in layout) + ")",
        # integrate & co. on a tree's coordinates; a mechanism with loops (v: independent speeds) has none yet
        "lie_joints": [{"kind": j[1], "iq": j[2], "iv": j[4],
                        "world": robot.floating_base and j[2] == 0 and opts.sweep.base_velocity != "body"} for j in layout],
        # a floating base's speeds (--base-velocity): body, mixed or inertial; None without a floating base
        "base_velocity": opts.sweep.base_velocity if robot.floating_base else None,
        "has_lie": robot.system is None,
        "loop_dependent": (repr(tuple(robot.loop_dependent_q)) if robot.loops
                           and "loop_residual" in [f["name"] for f in contexts] else None),
        "loop_solve": _loop_solve(robot, contexts),
        "loop_rows": robot.loop_rows if robot.loops else 0,       # couplings only: none, solve_loops returns q
        # a function with an output of no entries (couplings' loop_residual): the binding's size checks guard it
        "empty_outputs": any(o["size"] == 0 for f in contexts for o in f["outputs"]),
        "mujoco_balls": [j[2] for j in layout if j[1] == "spherical"],
        "mujoco_frees": free_slots(layout),                 # every free joint (of a scene: symgen.scenes)
        "mujoco_qpos0_literal": (None if _mujoco_qpos0(robot, opts) is None
                                 else "[" + "".join(repr(float(x)) + ", " for x in robot.mujoco_qpos0) + "]"),
        "parametric": opts.parametric, "nparams": len(parameters),
        "parameters_c": [repr(float(x)) for x in parameters],
        "gravity_c": ", ".join(repr(float(x)) for x in opts.gravity),
        "joint_names_c": [c_literal(j) for j in robot.joint_names],
        "link_names_c": [c_literal(j) for j in robot.link_names],
        "frame_names_c": [c_literal(f.name) for f in frames],
        "floating_base": bool(robot.floating_base),
        "joint_layout": [{"name": comment_text(j[0]), "kind": j[1], "q": f"q[{j[2]}..{j[2] + j[3] - 1}]" if j[3] > 1 else f"q[{j[2]}]",
                          "v": f"v[{j[4]}..{j[4] + j[5] - 1}]" if j[5] > 1 else f"v[{j[4]}]",
                          "what": _JOINT_LAYOUT.get(j[1], ("", ""))} for j in layout],
        "sizes": _header_sizes(robot, opts, name, contexts, frames, len(parameters)),
        "has_jax": "jax" in opts.targets,
        "trees_literal": None if scene is None else "(" + "".join(py_literal(t.root) + ", " for t in scene) + ")",
        "tree_velocities_literal": None if scene is None else repr(tuple(t.bodies for t in scene)),
        "tendons_literal": repr(tuple(tuple(t) for t in robot.tendons)) if robot.tendons else None,
        "loops_literal": ("(" + "".join(py_literal(x) + ", " for x in tuple(robot.loops)) + ")") if tuple(robot.loops) else None,
        "velocity_joint_names_literal": "(" + "".join(py_literal(j) + ", " for j in robot.velocity_joint_names) + ")",
        **contact_context(robot, opts.sweep, [f["name"] for f in contexts]),
        **template_context(opts.scalar, name, {"gravity": opts.gravity, "armature": armature_of(robot), **passive_of(robot)}),
    }
    c_source = render("c_source.c.j2", ctx)
    # the binding's module name carries its C source's hash: a package rebuilt in a running
    # Python loads its new binding (CPython and dlopen keep the first module of a given name)
    ext_name = f"_{name}_ext_{sha256_text(c_source)[:8]}"
    manifest = {
        "generator": f"symgen {version}", "sympy": sp.__version__, "robot": robot.name, "name": name, "scalar": opts.scalar,
        "nq": robot.nq, "nv": robot.nv, "depth": robot.depth, "floating_base": robot.floating_base,
        "joint_names": list(robot.joint_names), "link_names": list(robot.link_names),
        "joint_models": [list(j) for j in layout],
        "frames": [f.spec or f.name for f in frames], "armature": [float(x) for x in armature_of(robot)],
        **{name: [float(x) + 0.0 for x in values] for name, values in passive_of(robot).items()},
        "source_sha256": opts.source_sha256, "reference_frames": list(opts.reference_frames),
        "options": {"quantities": list(opts.quantities), "gamma_method": opts.gamma_method,
                    "frame": opts.frame, "cse": opts.cse, "gravity": [float(x) for x in opts.gravity],
                    "parametric": opts.parametric, "targets": list(opts.targets), "passive": bool(opts.passive),
                    "external_forces": bool(opts.external_forces), **Q.operational_space.manifest_options(opts.sweep),
                    **({"base_velocity": opts.sweep.base_velocity} if robot.floating_base else {})},
        "functions": {f["name"]: {"quantity": f["quantity"], "inputs": f["params"],
                                  "outputs": [[o["name"], list(o["shape"])] for o in f["outputs"]],
                                  "ops": ops[f["name"]], "route": f["route"], "c_shape": f["c_shape"]}
                      for f in contexts},
        "c_extension": ext_name,
    }
    if ctx["contacts_literal"] != "()":        # contact functions: their frames and types (--contacts)
        manifest["contacts"] = [[f.name, kind] for f, kind in Q.contact.contacts_of(robot, opts.sweep)]
    if _mujoco_qpos0(robot, opts) is not None:       # read from MJCF: from_mujoco/to_mujoco
        manifest["mujoco_qpos0"] = [float(x) for x in robot.mujoco_qpos0]
    if scene is not None:               # a scene: its moving trees (symgen.scenes)
        manifest["trees"] = [[t.root, t.kind, list(t.bodies)] for t in scene]
    if robot.tendons:                   # MJCF tendons (name, kind, role)
        manifest["tendons"] = [list(t) for t in robot.tendons]
    if tuple(robot.loops):                   # URDF+ couplings (symgen.couplings)
        manifest["loops"] = list(tuple(robot.loops))
        manifest["velocity_joint_names"] = list(robot.velocity_joint_names)
    if getattr(opts, "trees", ()):      # --tree: the trees kept (verify reads the model so)
        manifest["options"]["trees"] = list(opts.trees)
    if getattr(opts, "open_loops", False):   # --open-loops: the spanning tree of a mechanism with loops, on purpose
        manifest["options"]["open_loops"] = True
    if _relations(robot):               # --mimic: recorded only then (packages without it are unchanged)
        manifest["options"]["mimic"] = True
        manifest["mimic"] = [{"joint": r.joint, "mimics": r.target, "multiplier": r.multiplier, "offset": r.offset}
                             for r in robot.embedding.relations]
    if "casadi" in opts.targets and ctx["has_lie"]:    # the CasADi library has integrate ... neutral too
        manifest["casadi_lie"] = True
    ctx.update(ext_name=ext_name, xla_library=xla_library_name(ext_name), manifest_sha256=manifest_digest(manifest),
               rebuild_literal=py_literal(opts.command or "symgen build <urdf>"))
    files = {
        "__init__.py": render("package_init.py.j2", ctx),
        f"{name}_numpy.py": render("numpy_module.py.j2", ctx),
        f"{name}_c.py": render("c_wrapper.py.j2", ctx),
        f"{name}.h": render("c_header.h.j2", ctx),
        f"{name}.c": c_source,
        f"{ext_name}.c": render("c_extension.c.j2", ctx),
        **build_files(render, ctx, name),         # CMakeLists.txt and NAME.pc
    }
    if "casadi" in opts.targets:
        files[source_name(name)] = render("casadi_external.c.j2", {**ctx, **casadi_context(robot, contexts,
                                                                 opts.parametric or opts.external_forces, ctx["has_lie"])})
    if "jax" in opts.targets:
        handled = xla_functions(ctx["functions"])
        files[f"{name}_jax.py"] = render("jax_module.py.j2", jax_context(ctx, ops, [f["name"] for f in handled]))
        files[xla_source_name(name)] = render("xla_ffi.c.j2", {**ctx, "functions": handled, "max_buffers": MAX_BUFFERS})
    manifest["files"] = {fname: sha256_text(text) for fname, text in sorted(files.items())}
    files["manifest.json"] = manifest_text(manifest)
    return files


def sha256_text(text: str) -> str:
    """The sha256 of a generated file's bytes (UTF-8), as ``manifest.json`` records it."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def manifest_text(manifest: dict) -> str:
    """``manifest.json``'s text: sorted keys, two spaces (the build's and ``symgen stack``'s)."""
    return json.dumps(manifest, indent=2, sort_keys=True) + "\n"


def manifest_digest(manifest: dict) -> str:
    """The sha256 of a manifest without its ``files`` and ``stack`` entries, which ``__init__.py``
    records (so an edit of manifest.json shows, and the file hashes cover ``__init__.py``; ``stack``
    is what ``symgen stack`` measured and recorded after the build)."""
    return sha256_text(json.dumps({k: v for k, v in manifest.items() if k not in ("files", "stack")}, sort_keys=True))
