"""The baseline of the paper's Table 2 ("eq. (4), symbolic partials of M"), against which
Algorithm 2 with symbolic inputs (:mod:`.christoffel`) is timed: Gamma from symbolic partial
derivatives of M,

    Gamma_ijk = 1/2 (dM_ij/dq_k + dM_ik/dq_j - dM_jk/dq_i)                        (eq. 4)

with M from a symbolic CRBA (:mod:`.crba`, in body frames or ground coordinates). Symbolic
backends only (there is nothing to differentiate in numbers). When the backend names
intermediates, dM/dq is taken through the recorded straight-line program by the chain rule
(forward mode, one derivative per temp and q_k), so the route stays linear in size like
Algorithm 2's; when it does not, this is plain ``diff`` of whole expressions, as in the paper's
MATLAB runs. ``symgen build --gamma-method partials`` generates Gamma this way.
"""
from __future__ import annotations

import sympy as sp

from ..errors import OptionError
from .crba import crba, crba_ground


def christoffel_partials(robot, q, bk, frame="body"):
    """Gamma from dM/dq; ``frame`` picks the CRBA whose M is differentiated (body or ground
    coordinates — the same M, different expressions)."""
    if robot.floating_base:
        raise OptionError(f"robot {robot.name!r}: --gamma-method partials differentiates M by q (eq. 4), which "
                          f"needs one coordinate per velocity; a free-flyer's speeds (the base twist) are not "
                          f"derivatives of coordinates: use --gamma-method algo2")
    n = robot.n
    start = len(bk.assignments)
    M = (crba_ground if frame == "ground" else crba)(robot, q, bk)
    qindex = {q[k]: k for k in range(n)}
    grad = {}                                   # temp -> [d temp / d q_k for k in 0..n-1]

    def derivative(expr, k, name, body):
        terms = []
        for s in expr.free_symbols:
            if s in qindex:
                ds = 1 if qindex[s] == k else 0
            else:
                ds = grad.get(s, (0,) * n)[k]
            if ds != 0:
                terms.append(sp.diff(expr, s) * ds)
        return bk.bind(sp.Add(*terms), name, body)

    record = list(bk.assignments[start:])
    for step, (sym, expr, body) in enumerate(record):
        grad[sym] = tuple(derivative(expr, k, f"d{sym.name}_{k}", body) for k in range(n))
        bk.tick(step + 1, len(record))
    dM = [[[derivative(sp.sympify(M[i, j]), k, f"dM{i}_{j}_{k}", i) for k in range(n)]
           for j in range(n)] for i in range(n)]
    Gamma = bk.zeros((n, n, n))
    for i in range(n):                          # eq. (4); Gamma_ijk = Gamma_ikj
        for j in range(n):
            for k in range(j, n):
                Gamma[i, j, k] = Gamma[i, k, j] = bk.half * (dM[i][j][k] + dM[i][k][j] - dM[j][k][i])
    return Gamma
