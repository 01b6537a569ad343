"""The inverse of a small dense square block A(q) — the dependent columns K_D of a cluster of loops
(symgen.loops) — as straight-line code that runs on numbers and on symbols alike (no pivoting at
run time in the generated code):

    adjugate_inverse(A)  a 1x1, 2x2 or 3x3 block by its adjugate (exact wherever A is invertible)
    pivot_order(A0)      the rows of A0 (numbers) in the order partial pivoting picks them
    lu_inverse(A, order) A^-1 from A[order] = L U (L unit lower triangular), column by column:
                         L y = e_order, then U x = y; the row order is fixed once, at a nominal
                         configuration

The LU serves clusters of more than 3 dependent joints (a six-bar: 4), where the adjugate grows
factorially. The order
is valid wherever its pivots stay away from 0; partial pivoting at a well-conditioned nominal
configuration keeps them as large as the matrix allows there. Structural zeros (exact 0 on
symbols) are skipped, so a block-triangular K_D costs what its blocks cost.
"""
from __future__ import annotations

import numpy as np


def pivot_order(A0) -> tuple[int, ...]:
    """The row order partial pivoting picks on the numeric matrix ``A0``."""
    A = np.array(A0, dtype=float)
    r = A.shape[0]
    order = list(range(r))
    for k in range(r):
        p = k + int(np.argmax(np.abs(A[k:, k])))
        if A[p, k] == 0.0:
            raise ValueError(f"pivot_order: the matrix is singular (column {k})")
        A[[k, p]], order[k], order[p] = A[[p, k]], order[p], order[k]
        A[k + 1:, k:] -= np.outer(A[k + 1:, k] / A[k, k], A[k, k:])
    return tuple(order)


def _zero(x) -> bool:
    try:
        return bool(x == 0)
    except TypeError:
        return False


def lu_inverse(A, order, bk, name="lu"):
    """A^-1 for a square ``A`` (numbers or symbols) by the LU factorization of ``A[order]``,
    without pivoting; every factor entry named once (``bk.bind``)."""
    r = A.shape[0]
    U = A[list(order)].copy()
    L = bk.zeros((r, r))
    Dinv = [None] * r
    for k in range(r):                                   # Doolittle: U's row k, then column k of L
        L[k, k] = 1
        Dinv[k] = bk.bind(1 / U[k, k], f"{name}D{k}")
        for i in range(k + 1, r):
            if _zero(U[i, k]):
                continue
            L[i, k] = f = bk.bind(U[i, k] * Dinv[k], f"{name}L{i}_{k}")
            U[i, k] = 0
            for j in range(k + 1, r):
                if not _zero(U[k, j]):
                    U[i, j] = bk.bind(U[i, j] - f * U[k, j], f"{name}U{i}_{j}")
    inv = bk.zeros((r, r))
    for col in range(r):                                 # A x = e_col  <=>  L U x = e_col[order]
        y = [bk.number(1.0) if order[i] == col else bk.number(0.0) for i in range(r)]
        for i in range(r):
            for j in range(i):
                if not _zero(L[i, j]) and not _zero(y[j]):
                    y[i] = y[i] - L[i, j] * y[j]
        x = [None] * r
        for i in reversed(range(r)):
            s = y[i]
            for j in range(i + 1, r):
                if not _zero(U[i, j]) and not _zero(x[j]):
                    s = s - U[i, j] * x[j]
            x[i] = bk.bind(s * Dinv[i], f"{name}X{i}_{col}")
        for i in range(r):
            inv[i, col] = x[i]
    return inv


def adjugate_inverse(A, bk):
    """A^-1 of a 1x1, 2x2 or 3x3 block by its adjugate (no pivoting: the same code on symbols)."""
    r = A.shape[0]
    inv = bk.zeros((r, r))
    if r == 1:
        inv[0, 0] = 1 / A[0, 0]
        return inv
    if r == 2:
        det = A[0, 0] * A[1, 1] - A[0, 1] * A[1, 0]
        inv[0, 0], inv[0, 1], inv[1, 0], inv[1, 1] = A[1, 1] / det, -A[0, 1] / det, -A[1, 0] / det, A[0, 0] / det
        return inv
    cof = bk.zeros((3, 3))
    for i in range(3):
        for j in range(3):
            rows, cols = [x for x in range(3) if x != i], [x for x in range(3) if x != j]
            cof[i, j] = (-1) ** (i + j) * (A[rows[0], cols[0]] * A[rows[1], cols[1]] - A[rows[0], cols[1]] * A[rows[1], cols[0]])
    det = A[0, 0] * cof[0, 0] + A[0, 1] * cof[0, 1] + A[0, 2] * cof[0, 2]
    for i in range(3):
        for j in range(3):
            inv[i, j] = cof[j, i] / det
    return inv
