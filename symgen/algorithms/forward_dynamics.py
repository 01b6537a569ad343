"""Forward dynamics qdd = M(q)^-1 (tau - b(q, qd)) and M(q)^-1, through the sparse L^T D L
factorization of M that the kinematic tree induces (Featherstone, Rigid Body Dynamics
Algorithms, Sec. 6.3 and Tables 6.3-6.4): with parents numbered before children, M = L^T D L
where L is unit lower triangular and L_ij != 0 only for j an ancestor of i — no fill-in on a tree,
O(N d^2) to factor, O(N d) to solve. M comes from the CRBA (ground coordinates unless the body
frame is asked for) and the bias b = C qd + g = RNEA(q, qd, 0) from the RNEA; on symbols every
pivot and update is named once, so the generated code is the factorization unrolled with the
tree's structural zeros folded away.
"""
from __future__ import annotations

from ..model import GRAVITY
from .crba import crba, crba_ground, crba_local

#: columns per loop of M^-1's column loop over the identity (see :data:`.aba.COLUMN_BLOCK`)
COLUMN_BLOCK = 4
from .rnea import rnea, rnea_local


def ltdl(M, parent, bk, body=None):
    """(L, Dinv): the factorization M = L^T D L (Table 6.3), L unit lower triangular with the
    tree's sparsity (entries below the diagonal only at ancestors), and Dinv = 1 / diag(D).
    ``body``: the body the generated code's comments name for every step (None: each joint's own;
    a small dense matrix over no joints, e.g. a frame's task-space inertia, gives its frame's)."""
    n = len(parent)
    H = M.copy()
    Dinv = [None] * n
    for k in reversed(range(n)):                         # leaves first
        at = k if body is None else body
        Dinv[k] = bk.bind(1 / H[k, k], f"Dinv{k}", at)
        i = parent[k]
        while i >= 0:                                    # each ancestor i of k
            a = bk.bind(H[k, i] * Dinv[k], f"L{k}_{i}", at)
            j = i
            while j >= 0:                                # H_ij -= a H_kj for the ancestors j of i
                H[i, j] = bk.bind(H[i, j] - a * H[k, j], f"H{i}_{j}", at)
                j = parent[j]
            H[k, i] = a
            i = parent[i]
    L = bk.zeros((n, n))
    for k in range(n):
        L[k, k] = 1
        i = parent[k]
        while i >= 0:
            L[k, i] = H[k, i]
            i = parent[i]
    return L, Dinv


def ltdl_solve(L, Dinv, parent, b, bk):
    """x = M^-1 b from the factors (Table 6.4): L^T z = b, then y = D^-1 z, then L x = y."""
    n = len(parent)
    x = list(b)
    for i in reversed(range(n)):                         # L^T z = b, leaves first
        j = parent[i]
        while j >= 0:
            x[j] = bk.bind(x[j] - L[i, j] * x[i], f"z{j}", j)
            j = parent[j]
    for i in range(n):                                   # D y = z, then L x = y, root first
        x[i] = x[i] * Dinv[i]
        j = parent[i]
        while j >= 0:
            x[i] = x[i] - L[i, j] * x[j]
            j = parent[j]
        x[i] = bk.bind(x[i], f"x{i}", i)
    out = bk.zeros(n)
    for i in range(n):
        out[i] = x[i]
    return out


def solve_dense(L, Dinv, parent, blocks, bk, name="col", symmetric=False, width=None):
    """M^-1 B for each matrix B of ``blocks`` through the factors, as one loop over the columns
    (``bk.column_loop``): generated code runs the unrolled single-column solve of
    :func:`ltdl_solve` once per column, in a loop the compiler vectorizes across columns, where
    :func:`~symgen.algorithms.derivatives.solve_columns` unrolls every column as scalar code."""
    return bk.column_loop(lambda b, sub: ltdl_solve(L, Dinv, parent, b, sub), blocks, name, symmetric, width)


def _mass_matrix(robot, q, bk, frame):
    return {"ground": crba_ground, "local": crba_local}.get(frame, crba)(robot, q, bk)


def forward_dynamics(robot, q, qd, tau, bk, frame="ground", gravity=GRAVITY):
    """qdd with M(q) qdd + C(q, qd) qd + g(q) = tau; ``frame`` "local": M and the bias both in
    Pinocchio's local convention (the factorization does not care which coordinates M was formed
    in; where joint frames follow coordinate axes the local CRBA is the cheapest M)."""
    M = _mass_matrix(robot, q, bk, frame)
    L, Dinv = ltdl(M, robot.parent, bk)
    bias = (rnea_local if frame == "local" else rnea)(robot, q, qd, bk.zeros(robot.n), bk, gravity=gravity)  # C qd + g
    return ltdl_solve(L, Dinv, robot.parent, tau - bias, bk)


def mass_matrix_inverse_dense(robot, q, bk):
    """M(q)^-1 as M^-1 1, the columns of the identity solved with the factors of the
    ground-coordinate CRBA's M in column loops (:func:`solve_dense`), one per
    :data:`COLUMN_BLOCK` columns with those columns' zeros folded; the upper triangle mirrored,
    exactly symmetric."""
    n = robot.n
    L, Dinv = ltdl(crba_ground(robot, q, bk), robot.parent, bk)
    identity = bk.zeros((n, n))
    for i in range(n):
        identity[i, i] = 1
    return solve_dense(L, Dinv, robot.parent, [identity], bk, "col", symmetric=True, width=COLUMN_BLOCK)[0]


def mass_matrix_inverse(robot, q, bk, frame="ground"):
    """M(q)^-1 = L^-1 D^-1 L^-T, exactly symmetric: with Z = L^-1 (unit lower triangular,
    Z_ij != 0 only for j an ancestor of i), (M^-1)_ab = sum over common ancestors k of a and b of
    Z_ak Z_bk / D_k = sum W_ak Z_bk with W = Z D^-1 formed once (n^3/6 products fewer than
    dividing in every term); each entry computed once for a <= b and mirrored."""
    L, Dinv = ltdl(_mass_matrix(robot, q, bk, frame), robot.parent, bk)
    return inverse_from_factors(L, Dinv, robot.parent, bk)


def inverse_from_factors(L, Dinv, parent, bk, body=None):
    """M^-1 from the factors of :func:`ltdl` over the tree ``parent`` (a dense M: the chain
    ``(-1, 0, 1, ...)``): see :func:`mass_matrix_inverse`; ``body`` as :func:`ltdl`'s."""
    n = len(parent)
    ancestors = []
    for i in range(n):
        ancestors.append((i,) + (ancestors[parent[i]] if parent[i] >= 0 else ()))
    Z = bk.zeros((n, n))
    for i in range(n):                                   # L Z = 1, root first
        Z[i, i] = 1
        j = parent[i]
        while j >= 0:                                    # Z_ij = -sum_k L_ik Z_kj, k strictly between
            acc = 0
            k = parent[i]
            while k >= 0:
                acc = acc + L[i, k] * Z[k, j]
                k = parent[k]
            Z[i, j] = bk.bind(-acc, f"Z{i}_{j}", i if body is None else body)
            j = parent[j]
    W = bk.zeros((n, n))                                 # W = Z D^-1, once: a product less per term
    for a in range(n):
        for k in ancestors[a]:
            W[a, k] = bk.bind(Z[a, k] * Dinv[k], f"W{a}_{k}", a if body is None else body) if a != k else Dinv[k]
    Minv = bk.zeros((n, n))
    for a in range(n):
        for b in range(a, n):
            common = [k for k in ancestors[a] if k in ancestors[b]]
            Minv[a, b] = Minv[b, a] = sum((W[a, k] * Z[b, k] for k in common), start=0 * Dinv[0])
    return Minv
