"""Run the algorithms on symbols and turn each requested quantity into a Program Function.

    M      mass_matrix(q)                  CRBA
    Mdot   mass_matrix_dot(q, qd)          Algorithm 1 (one run yields Mdot and C)
    C      coriolis_matrix(q, qd)          Algorithm 1
    Gamma  christoffel(q)                  Algorithm 2, or eq. (4) with gamma_method="partials"
    tau    inverse_dynamics(q, qd, qdd)    RNEA, gravity 9.81 along -z of the root

CRBA and Algorithms 1 and 2 run in ground coordinates by default (``frame="ground"``, the
``*_ground`` modules), or as the paper prints them (``frame="body"``); RNEA in body frames.
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from .. import algorithms as alg
from ..algorithms.partials import christoffel_partials
from ..backend import SymbolicBackend
from .._common import QUANTITIES, SIGNATURES
from ..errors import OptionError
from .program import Input, make_function

GAMMA_METHODS = ("algo2", "partials")
#: coordinates of Algorithms 1 and 2: ground (the base frame, no 6x6 transforms in the loops;
#: the default for generated code) or body (the paper's pseudo-code as printed)
FRAMES = ("ground", "body")


def input_symbols(n: int) -> dict:
    return {name: tuple(sp.Symbol(f"{name}{i}") for i in range(n)) for name in ("q", "qd", "qdd")}


def parse_quantities(text: str | None) -> tuple[str, ...]:
    if not text:
        return QUANTITIES
    wanted = tuple(dict.fromkeys(s.strip() for s in text.split(",") if s.strip()))
    unknown = [s for s in wanted if s not in QUANTITIES]
    if unknown or not wanted:
        raise OptionError(f"--quantities: unknown {', '.join(unknown) or '(empty)'}; expected a comma list of {','.join(QUANTITIES)}")
    return wanted


def _run(robot, quantities, syms, gamma_method, naming=True, frame="ground", tick=None):
    """One symbolic run that yields every quantity in ``quantities`` (all of one algorithm):
    ``(backend, {quantity: array})``."""
    if frame not in FRAMES:
        raise OptionError(f"--frame: unknown {frame!r}; expected one of {', '.join(FRAMES)}")
    ground = frame == "ground"
    bk = SymbolicBackend(naming=naming, tick=tick)
    q, qd, qdd = (np.array(syms[k], dtype=object) for k in ("q", "qd", "qdd"))
    kind = RUNS[quantities[0]]
    if kind == "crba":
        values = {"M": (alg.crba_ground if ground else alg.crba)(robot, q, bk)}
    elif kind == "algorithm1":
        M, Mdot, C = (alg.coriolis_ground if ground else alg.coriolis)(robot, q, qd, bk)
        values = {"Mdot": Mdot, "C": C}
    elif kind == "algorithm2":
        if gamma_method not in GAMMA_METHODS:
            raise OptionError(f"--gamma-method: unknown {gamma_method!r}; expected one of {', '.join(GAMMA_METHODS)}")
        if gamma_method == "algo2":
            values = {"Gamma": (alg.christoffel_ground if ground else alg.christoffel)(robot, q, bk)}
        else:
            values = {"Gamma": christoffel_partials(robot, q, bk, frame)}
    else:
        values = {"tau": alg.rnea(robot, q, qd, qdd, bk)}
    return bk, {k: values[k] for k in quantities}


#: which symbolic run yields each quantity (Mdot and C come from one run of Algorithm 1)
RUNS = {"M": "crba", "Mdot": "algorithm1", "C": "algorithm1", "Gamma": "algorithm2", "tau": "rnea"}


def trace_all(robot, quantities, gamma_method: str = "algo2", naming: bool = True, frame: str = "ground",
              tick=None) -> dict:
    """``{quantity: Function}`` for each of ``quantities``, running each algorithm once (Mdot and
    C share the run of Algorithm 1; each Function keeps the whole record, for drop_dead).
    ``tick(quantity, done, total)`` reports the progress of each run."""
    syms = input_symbols(robot.n)
    groups: dict = {}
    for qty in quantities:
        groups.setdefault(RUNS[qty], []).append(qty)
    out = {}
    for qtys in groups.values():
        label = "+".join(qtys)
        bk, values = _run(robot, qtys, syms, gamma_method, naming, frame,
                          tick=(lambda d, t, label=label: tick(label, d, t)) if tick else None)
        for qty in qtys:
            fname, inputs, name, doc = SIGNATURES[qty]
            out[qty] = make_function(fname, doc, [Input(k, syms[k]) for k in inputs], bk.assignments,
                                     {name: values[qty]})
    return {qty: out[qty] for qty in quantities}


def trace(robot, quantity: str, gamma_method: str = "algo2", naming: bool = True, frame: str = "ground"):
    """The Function computing ``quantity`` for ``robot``, straight from a symbolic run."""
    return trace_all(robot, (quantity,), gamma_method, naming, frame)[quantity]
