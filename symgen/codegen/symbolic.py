"""The symbolic side of a build: robot + quantities -> one symbolic run per sweep -> Program
Functions -> the passes.

Each :class:`~symgen.quantities.Sweep` needed by the requested quantities runs once on SymPy
symbols (Mdot and C share the run of Algorithm 1); every quantity becomes a Function over that
run's record, with the outputs the registry gives it. CRBA and Algorithms 1 and 2 run in ground
coordinates by default (``frame="ground"``) or as the paper prints them (``frame="body"``).
"""
from __future__ import annotations

import time
from dataclasses import replace

import numpy as np
import sympy as sp

from .. import quantities as Q
from ..backend import SymbolicBackend, TraceLimit
from . import program as P


def input_symbols(robot) -> dict:
    """``{argument: tuple of Symbols}``: q0, q1, ..., qd0, ..., params0, ... — the names the
    printers map to ``q[0]`` (C) or unpack as locals (Python)."""
    sizes = (robot.nq, robot.nv, len(robot.link_names))
    return {a.name: tuple(sp.Symbol(f"{a.name}{i}") for i in range(a.length(*sizes))) for a in Q.ARGUMENTS.values()}


def trace_all(robot, keys, opts: Q.SweepOptions = Q.SweepOptions(), naming: bool = True, tick=None,
              times: dict | None = None) -> dict:
    """``{key: Function}`` for each quantity of ``keys``, running each sweep once, and for a
    sweep with variants (ground-coordinate builds) each variant, keeping the cheapest by
    :func:`~symgen.codegen.program.cost` once optimized (the first on a tie); a variant with an
    ``applies(robot)`` attribute that says no is not traced. The Functions are
    optimized (:func:`optimize` without CSE; applying it again is free).
    ``tick(label, done, total)`` reports the progress of each run; ``times``, a dict, gets the
    seconds of the runs (``trace``) and of the passes on their Functions (``passes``) added, and
    the number of runs (``runs``: a variant abandoned on the way counts)."""
    Q.check_options(opts)
    runs: dict = {}
    for key in keys:
        runs.setdefault(Q.QUANTITIES[key].sweep, []).append(key)
    jobs = [(name, k, tuple(group)) for name, group in runs.items()
            for k in range(1 + (len(Q.SWEEPS[name].variants) if opts.frame == "ground" else 0))
            if not k or getattr(Q.SWEEPS[name].variants[k - 1], "applies", lambda r: True)(robot)
            and not (opts.base_velocity != "body" and getattr(Q.SWEEPS[name].variants[k - 1], "column_loops", False))]
    # (forking the candidates over the cores was tried: SymPy's unpickling of the results costs
    # about as much as the tracing it saves — 2.0 s for dqdd of a 20-DoF chain traced in 3.3 s)
    out = {}
    for name, group in runs.items():
        best, best_cost, limit = None, None, None
        for job in (j for j in jobs if j[0] == name):
            try:
                fns, named = _candidate(robot, job, opts, naming, tick, limit, times)
            except TraceLimit:                      # already far costlier than the best: abandoned
                continue
            c = sum(P.cost(f) for f in fns.values())
            if best is None or c < best_cost:
                best, best_cost = fns, c
                limit = VARIANT_LIMIT * named
        out.update(best)
    return {key: out[key] for key in keys}


#: a variant is abandoned once its run has named this many times the intermediates of the best
#: run so far (the 20-DoF chain: Algorithm 1 in body frames names 3x what the ground form does
#: and costs 2.8x; an abandoned variant saves most of its tracing time)
VARIANT_LIMIT = 2


def _candidate(robot, job, opts, naming, tick=None, limit=None, times=None) -> tuple:
    """One candidate run, ``job`` = (sweep name, 0 for its run or k for its k-th variant, keys):
    (``{key: optimized Function}``, how many intermediates the run named); TraceLimit past
    ``limit`` of them."""
    name, k, keys = job
    sweep = Q.SWEEPS[name]
    if k:
        sweep = replace(sweep, run=sweep.variants[k - 1])
    label = "+".join(keys) + (f" (variant {k})" if k else "")
    times = {} if times is None else times
    times["runs"] = times.get("runs", 0) + 1
    t0 = time.perf_counter()
    try:
        fns, named = _trace_sweep(robot, sweep, keys, input_symbols(robot), opts, naming,
                                  (lambda d, t: tick(label, d, t)) if tick else None, limit)
    finally:
        t1 = time.perf_counter()
        times["trace"] = times.get("trace", 0.0) + t1 - t0
    route = sweep.run.__name__.lstrip("_")
    out = {key: replace(optimize(fn), route=route) for key, fn in fns.items()}
    times["passes"] = times.get("passes", 0.0) + time.perf_counter() - t1
    return out, named


def _trace_sweep(robot, sweep, keys, syms, opts, naming, tick, limit=None) -> tuple:
    """(``{key: Function}`` for ``keys`` (quantities of ``sweep``) from one symbolic run of it,
    the number of intermediates it named)."""
    bk = SymbolicBackend(naming=naming, tick=tick, limit=limit)
    names = sweep.arguments_for(opts)
    values = Q.run_sweep(sweep, robot, {a: np.array(syms[a], dtype=object) for a in names}, bk, opts)
    out = {}
    for key in keys:
        x = Q.QUANTITIES[key]
        out[key] = P.make_function(x.function, x.doc, [P.Input(a, syms[a]) for a in x.arguments_for(opts)],
                                   bk.assignments, {o.name: values[o.name] for o in x.outputs}, bk.loops)
    return out, len(bk.assignments)


def trace(robot, key: str, opts: Q.SweepOptions = Q.SweepOptions(), naming: bool = True):
    """The Function computing quantity ``key`` for ``robot``, straight from a symbolic run."""
    return trace_all(robot, (key,), opts, naming)[key]


def optimize(fn, use_cse: bool = False):
    """The passes every traced Function goes through: dead-code removal, shared outputs, CSE."""
    fn = P.share_outputs(P.drop_dead(fn))
    if use_cse:
        fn = P.cse(fn)
    return fn.check_closed()


def program_for(robot, key: str, opts: Q.SweepOptions = Q.SweepOptions(), use_cse: bool = False):
    """The optimized Function for one quantity (what ``symgen build`` prints)."""
    return optimize(trace(robot, key, opts), use_cse)
