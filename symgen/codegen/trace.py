"""Run the algorithms on symbols and turn each requested quantity into a Program Function.

    M      mass_matrix(q)                  CRBA
    Mdot   mass_matrix_dot(q, qd)          Algorithm 1
    C      coriolis_matrix(q, qd)          Algorithm 1
    Gamma  christoffel(q)                  Algorithm 2, or eq. (4) with gamma_method="partials"
    tau    inverse_dynamics(q, qd, qdd)    RNEA, gravity 9.81 along -z of the root
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from .. import algorithms as alg
from ..algorithms.partials import christoffel_partials
from ..backend import SymbolicBackend
from ..errors import OptionError
from .program import Input, make_function

QUANTITIES = ("M", "Mdot", "C", "Gamma", "tau")
GAMMA_METHODS = ("algo2", "partials")
#: coordinates of Algorithms 1 and 2: ground (the base frame, no 6x6 transforms in the loops;
#: the default for generated code) or body (the paper's pseudo-code as printed)
FRAMES = ("ground", "body")

#: quantity -> (function name, inputs, output name, one-line doc)
SIGNATURES = {
    "M": ("mass_matrix", ("q",), "M", "Mass matrix M(q), (n, n), by CRBA."),
    "Mdot": ("mass_matrix_dot", ("q", "qd"), "Mdot", "dM/dt at (q, qd), (n, n), by Algorithm 1."),
    "C": ("coriolis_matrix", ("q", "qd"), "C", "Christoffel-consistent Coriolis matrix C(q, qd), (n, n), by Algorithm 1."),
    "Gamma": ("christoffel", ("q",), "Gamma", "Christoffel symbols Gamma[i, j, k], (n, n, n): C = sum_k Gamma[:, :, k] qd[k]."),
    "tau": ("inverse_dynamics", ("q", "qd", "qdd"), "tau", "Inverse dynamics tau = M qdd + C qd + g, (n,), by RNEA."),
}


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


def _run(robot, quantity, syms, gamma_method, naming=True, frame="ground"):
    if frame not in FRAMES:
        raise OptionError(f"--frame: unknown {frame!r}; expected one of {', '.join(FRAMES)}")
    ground = frame == "ground"
    bk = SymbolicBackend(naming=naming)
    q, qd, qdd = (np.array(syms[k], dtype=object) for k in ("q", "qd", "qdd"))
    if quantity == "M":
        value = (alg.crba_ground if ground else alg.crba)(robot, q, bk)
    elif quantity in ("Mdot", "C"):
        M, Mdot, C = (alg.coriolis_ground if ground else alg.coriolis)(robot, q, qd, bk)
        value = Mdot if quantity == "Mdot" else C
    elif quantity == "Gamma":
        if gamma_method not in GAMMA_METHODS:
            raise OptionError(f"--gamma-method: unknown {gamma_method!r}; expected one of {', '.join(GAMMA_METHODS)}")
        if gamma_method == "algo2":
            value = (alg.christoffel_ground if ground else alg.christoffel)(robot, q, bk)
        else:
            value = christoffel_partials(robot, q, bk, frame)
    else:
        value = alg.rnea(robot, q, qd, qdd, bk)
    return bk, value


def trace(robot, quantity: str, gamma_method: str = "algo2", naming: bool = True, frame: str = "ground"):
    """The Function computing ``quantity`` for ``robot``, straight from a symbolic run."""
    fname, inputs, out, doc = SIGNATURES[quantity]
    syms = input_symbols(robot.n)
    bk, value = _run(robot, quantity, syms, gamma_method, naming, frame)
    return make_function(fname, doc, [Input(k, syms[k]) for k in inputs], bk.assignments, {out: value})
