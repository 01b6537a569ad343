"""Contact dynamics, the part fixed at build time: the terms of the KKT system

    [M   Jc^T] [ qdd]   [tau - b ]
    [Jc  0   ] [-lam] = [-Jc_dot v]          (Pinocchio's forwardDynamics(q, v, tau, J, gamma))

for the rows of every contact of the build (3 linear rows of a point contact, all 6 of a flat one,
LOCAL_WORLD_ALIGNED, [linear; angular]), so that a run-time mask of active contacts only picks
rows: with the Schur complement (the contact-space inverse inertia, Featherstone, RBDA Sec. 8.1)

    K = Jc M^-1 Jc^T,   qdd0 = M^-1 (tau - b),   K_a lam_a = -gamma_a - Jc_a qdd0,
    qdd = qdd0 + (M^-1 Jc^T)_a lam_a

the generated code gives K, qdd0 and r = -gamma - Jc qdd0 over all rows, and the package's short
hand-written Cholesky solves K_a (3-24 rows) at run time (``templates/contact_solve*.j2``).
The impulse at a touchdown (Pinocchio's impulseDynamics) is the same system at the velocity level:
K_a Lambda_a = -(1 + e) Jc_a v^-, v^+ = v^- + (M^-1 Jc^T)_a Lambda_a.

Build-time structure: with M = L^T D L (the tree-sparse factors of :mod:`.forward_dynamics`),
K = Y D^-1 Y^T with Y^T = L^-T Jc^T. A foot's rows of Jc are zero outside its leg and the base,
and so are those of Y (L^-T keeps ancestor sparsity), so the generated products skip the other
legs' columns: K's off-diagonal blocks between two feet cost the base's columns only. M^-1 Jc^T =
L^-1 D^-1 Y^T fills in (every joint), so it is not generated: the code gives W = D^-1 Y^T and L,
and the solve applies L^-1 once, to W_a^T lam_a (solo12, 4 point contacts: 9,053 operations
against 11,673 with M^-1 Jc^T generated); L's entries are packed at the tree's ancestor pairs.
The Jacobian rows and the classical drift gamma = Jc_dot v come from
:mod:`.frames` and :mod:`.frame_motion`, the bias b = C v + g from the RNEA.
"""
from __future__ import annotations

from ..joint_models import leading_free
from ..model import GRAVITY
from .crba import crba, crba_ground, crba_local
from .forward_dynamics import ltdl, ltdl_solve
from .frame_motion import frame_motion
from .frames import frame_kinematics_ground
from .rnea import rnea, rnea_local

#: rows of the Jacobian a contact of each type constrains: a point its linear velocity, a flat
#: contact its whole twist
ROWS = {"3d": (0, 1, 2), "6d": (0, 1, 2, 3, 4, 5)}


def contact_rows(robot, q, qd, frames, kinds, bk):
    """(Jc (m, n), gamma (m,)): the constrained rows of the contact frames' Jacobians and their
    classical drift Jc_dot v, contact after contact (``kinds``: "3d" or "6d" for each frame)."""
    _, J = frame_kinematics_ground(robot, q, frames, bk)
    af = frame_motion(robot, q, qd, frames, bk)["af"]
    rows = [(k, r) for k, kind in enumerate(kinds) for r in ROWS[kind]]
    Jc, gamma = bk.zeros((len(rows), robot.n)), bk.zeros(len(rows))
    for i, (k, r) in enumerate(rows):
        Jc[i], gamma[i] = J[k, r], af[k, r]
    return Jc, gamma


def contact_supports(robot, frames) -> list[list[int]]:
    """Per contact frame, the joints that move it (its body's ancestors, ascending): the only columns of its
    Jacobian rows, and the only rows and columns of their derivatives d(Jc_r^T)/dq, that can be nonzero."""
    return [sorted(robot.ancestors(f.body)) if f.body >= 0 else [] for f in frames]


def packed_rows(robot, frames, kinds) -> list[tuple[int, list[int]]]:
    """Per contact row r, (offset, support): d(Jc_r^T)/dq's nonzero block, support x support row-major, at
    offset of the packed ``dJ`` of contact_partials."""
    out, offset = [], 0
    for support, kind in zip(contact_supports(robot, frames), kinds):
        for _ in ROWS[kind]:
            out.append((offset, support))
            offset += len(support) ** 2
    return out


def packed_size(blocks) -> int:
    """Entries of the packed dJ over :func:`packed_rows`' blocks (at least one: a C array is never empty)."""
    return max(1, sum(len(support) ** 2 for _, support in blocks))


def path_ranges(parent, align=1, width=None, skip=0) -> list[list[tuple[int, int]]]:
    """Per joint k, the column ranges [lo, hi) of row k of (dID/dq, dID/dv, 1) side by side (3n columns) that
    can be nonzero, and stay so under L^-T (leaves first, each row pushed into its ancestors): dID/du[k, c] is
    zero unless k and c lie on one path from the root (c an ancestor of k, k itself or below it: moving c
    moves only its subtree, and tau_k sums k's subtree), the identity's row k is its column k, and L^-T
    spreads row k's columns into its ancestors (k's path columns are among theirs). The contact term
    sum_r lam_r d(Jc_r^T)/dq keeps to a foot's path too. ``skip``: the first q columns are left out of the
    layout (a free-flyer's translations, zero all through: :func:`zero_columns`), the others move left by
    as many. The ranges are widened to multiples of ``align`` (at most ``width``, 3n - skip by default) and
    merged."""
    n = len(parent)
    width = 3 * n - skip if width is None else width
    below = [[k] for k in range(n)]
    for k in reversed(range(n)):
        if parent[k] >= 0:
            below[parent[k]] += below[k]
    out = []
    for k in range(n):
        path, j = set(below[k]), parent[k]
        while j >= 0:
            path.add(j)
            j = parent[j]
        cols = sorted({c + b * n - skip for b in (0, 1) for c in path if b or c >= skip}
                      | {2 * n - skip + c for c in below[k]})
        ranges = []
        for c in cols:
            lo, hi = c - c % align, min(width, c - c % align + align)
            if ranges and lo <= ranges[-1][1]:
                ranges[-1] = (ranges[-1][0], max(ranges[-1][1], hi))
            else:
                ranges.append((lo, hi))
        out.append(ranges)
    return out


def zero_columns(robot) -> int:
    """How many leading q columns of contact dynamics' derivatives are zero whatever the state: 3 below a
    free-flyer at the root (its translations, v[0:3]: gravity is uniform and the contact rows, in
    LOCAL_WORLD_ALIGNED axes, and the inverse dynamics do not depend on where the base is), else 0."""
    return 3 if leading_free(robot) else 0


def ancestor_pairs(parent) -> list[tuple[int, int]]:
    """(i, j) for each joint i and each of its strict ancestors j, i ascending, j up the tree: the
    places of L's entries below the diagonal (tree sparsity), the packed layout of ``Lc``."""
    pairs = []
    for i in range(len(parent)):
        j = parent[i]
        while j >= 0:
            pairs.append((i, j))
            j = parent[j]
    return pairs


def back_substitute(L, parent, b, bk, name):
    """z = L^-T b (Table 6.4's first half: leaves first)."""
    z = list(b)
    for i in reversed(range(len(parent))):
        j = parent[i]
        while j >= 0:
            z[j] = bk.bind(z[j] - L[i, j] * z[i], f"{name}{j}", j)
            j = parent[j]
    return z


#: the CRBA of each coordinate choice (``mass``): ground coordinates, body frames, Pinocchio's local convention
CRBA = {"ground": crba_ground, "body": crba, "local": crba_local}


def contact_terms(robot, q, qd, tau, frames, kinds, bk, mass="body", gravity=GRAVITY, impulse=False, f_ext=None):
    """``{"Kc": (m, m), "Wc": (m, n), "Lc": (pairs,), ...}``: exactly symmetric Kc = Jc M^-1 Jc^T,
    Wc = (D^-1 L^-T Jc^T)^T and L's entries below the diagonal at :func:`ancestor_pairs` (the rest
    are zero), so that M^-1 Jc^T = L^-1 Wc^T; for the
    acceleration level (``impulse`` False) ``"qdd0"`` (n,) = M^-1 (tau - b) and ``"rc"`` (m,) =
    -gamma - Jc qdd0, and ``"Dinv"`` (n,), D^-1 of M = L^T D L (for contact_dynamics_derivatives' solve); for the
    velocity level (``impulse``: tau unused) ``"Jv"`` (m,) = Jc qd."""
    def rhs():
        # b = C qd + g: the RNEA in the CRBA's convention (ABA for qdd0 instead costs more: it cannot
        # reuse the factors, solo12 11,578 operations against 8,765)
        return tau - (rnea_local if mass == "local" else rnea)(robot, q, qd, bk.zeros(robot.n), bk, gravity=gravity,
                                                               f_ext=f_ext)
    return factored_terms(CRBA[mass](robot, q, bk), lambda: contact_rows(robot, q, qd, frames, kinds, bk), robot.parent,
                          bk, qd=qd, rhs=None if impulse else rhs)


def factored_terms(M, rows, parent, bk, qd=None, rhs=None):
    """:func:`contact_terms`' outputs from M (tree-sparse: M[i, j] = 0 unless one of i, j is an
    ancestor of the other) and ``rows()``, the contact rows Jc and their drift gamma: with ``rhs()``
    = tau - b the acceleration level's, else the velocity level's (Jv = Jc qd). (Callables, run after
    M's factors: the program keeps its order.) Written once for any generalized speeds whose M keeps
    the tree's sparsity (a free-flyer's MIXED/INERTIAL speeds: :mod:`symgen.base_velocity`)."""
    n = len(parent)
    L, Dinv = ltdl(M, parent, bk)
    Jc, gamma = rows()
    m = len(gamma)
    Y = [back_substitute(L, parent, Jc[r], bk, f"Y{r}_") for r in range(m)]       # Y^T = L^-T Jc^T, row by row
    W = [[bk.bind(Y[r][k] * Dinv[k], f"W{r}_{k}", k) for k in range(n)] for r in range(m)]
    Kc, Wc = bk.zeros((m, m)), bk.zeros((m, n))
    for r in range(m):
        for s in range(r, m):                                          # K = Y D^-1 Y^T
            Kc[r, s] = Kc[s, r] = sum((W[r][k] * Y[s][k] for k in range(n)), start=0 * Dinv[0])
        for k in range(n):
            Wc[r, k] = W[r][k]
    pairs = ancestor_pairs(parent)                                     # L below the diagonal, packed
    Lc = bk.zeros(max(1, len(pairs)))                                  # (a chain of one joint: one zero)
    for k, (i, j) in enumerate(pairs):
        Lc[k] = L[i, j]
    out = {"Kc": Kc, "Wc": Wc, "Lc": Lc}
    if rhs is None:
        out["Jv"] = Jc @ qd
        return out
    qdd0 = ltdl_solve(L, Dinv, parent, rhs(), bk)
    out["qdd0"] = qdd0
    out["rc"] = -gamma - Jc @ qdd0
    out["Dinv"] = bk.zeros(n)                                          # an array, like every output
    out["Dinv"][:] = Dinv
    return out
