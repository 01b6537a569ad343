"""The symbolic side of a build: robot + quantities -> one symbolic run per sweep -> Program
Functions -> the passes.

Each :class:`~symgen.quantities.Sweep` needed by the requested quantities runs once on SymPy
symbols (Mdot and C share the run of Algorithm 1); every quantity becomes a Function over that
run's record, with the outputs the registry gives it. CRBA and Algorithms 1 and 2 run in ground
coordinates by default (``frame="ground"``) or as the paper prints them (``frame="body"``).
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import sympy as sp

from .. import quantities as Q
from ..backend import SymbolicBackend
from . import program as P


def input_symbols(nq: int, nv: int, bodies: int | None = None) -> dict:
    """``{argument: tuple of Symbols}``: q0, q1, ..., qd0, ..., params0, ... — the names the
    printers map to ``q[0]`` (C) or unpack as locals (Python); ``bodies``: of ``params`` (default
    one per velocity)."""
    return {a.name: tuple(sp.Symbol(f"{a.name}{i}") for i in range(a.length(nq, nv, bodies)))
            for a in Q.ARGUMENTS.values()}


def trace_all(robot, keys, opts: Q.SweepOptions = Q.SweepOptions(), naming: bool = True, tick=None) -> dict:
    """``{key: Function}`` for each quantity of ``keys``, running each sweep once (each Function
    keeps its run's whole record; :func:`optimize` drops what it does not use).
    ``tick(label, done, total)`` reports the progress of each run."""
    Q.check_options(opts)
    syms = input_symbols(robot.n, robot.n, len(robot.link_names))     # --mimic: reduced n, every body
    runs: dict = {}
    for key in keys:
        runs.setdefault(Q.QUANTITIES[key].sweep, []).append(key)
    out = {}
    for sweep_name, group in runs.items():
        label = "+".join(group)
        sweep = Q.SWEEPS[sweep_name]
        candidates = [sweep] + ([replace(sweep, run=run) for run in sweep.variants] if opts.frame == "ground" else [])
        traced = [_trace_sweep(robot, s, group, syms, opts, naming,
                               (lambda d, t, label=label: tick(label, d, t)) if tick else None) for s in candidates]
        # the variant with the fewest operations once optimized (the first on a tie)
        out.update(min(traced, key=lambda fns: sum(P.count_ops(optimize(f))["total"] for f in fns.values()))
                   if len(traced) > 1 else traced[0])
    return {key: out[key] for key in keys}


def _trace_sweep(robot, sweep, keys, syms, opts, naming, tick) -> dict:
    """``{key: Function}`` for ``keys`` (quantities of ``sweep``) from one symbolic run of it."""
    bk = SymbolicBackend(naming=naming, tick=tick)
    names = sweep.arguments + (("params",) if opts.parametric and sweep.inertial else ())
    values = Q.run_sweep(sweep, robot, {a: np.array(syms[a], dtype=object) for a in names}, bk, opts)
    out = {}
    for key in keys:
        x = Q.QUANTITIES[key]
        out[key] = P.make_function(x.function, x.doc, [P.Input(a, syms[a]) for a in x.arguments_for(opts)],
                                   bk.assignments, {o.name: values[o.name] for o in x.outputs})
    return out


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
