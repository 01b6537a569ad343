"""The tree sparsity that a constant embedding leaves in the reduced mass matrix M̄ = GᵀMG.

The full tree's M has M_ab = 0 unless a ~ b (one body on the other's path to the root). With
q_full = G q + o,

    M̄_rs = sum over a in col r of G, b in col s of G_ar M_ab G_bs,

so M̄_rs is structurally zero unless some entry a of column r and some b of column s are related.
When every rotor is geared to one joint (or a belt ties it to joints on one path), each column
holds its own joint and bodies hanging off that joint's ancestors, and M̄ keeps the tree sparsity
of the independent joints, whose parent is the nearest independent joint on the path to the root.
Then the tree-sparse L^T D L of :mod:`symgen.algorithms.forward_dynamics` (Featherstone, RBDA
Sec. 6.5: no fill-in when M's nonzeros lie at related pairs of a tree numbered parents first)
factors M̄ with that parent array, and the legs of a quadruped stay apart. A coupling across
branches (a mimic in another leg, a belt over two branches) relates joints the tree does not:
:func:`reduced_parent` returns None and the reduced solves keep the dense factorization (the
chain). Loops (a G that depends on q, :mod:`symgen.closed`) are not handled here.

Structure only: the pattern is decided at build time from G's columns and the full tree's
ancestry, never from values, so it is the same on numbers and symbols.
"""
from __future__ import annotations


def _ancestors(parent, i):
    out = set()
    while i >= 0:
        out.add(i)
        i = parent[i]
    return out


def owners(embedding) -> tuple[int, ...]:
    """Per reduced velocity index, the full velocity index of its own joint (the lead entries of a
    free-flyer pass through: their own indices)."""
    lead = embedding.lead_v
    return tuple(range(lead)) + tuple(lead + j for j in embedding.independent)


def candidate_parent(full_parent, embedding) -> tuple[int, ...]:
    """Per reduced index r, the reduced index of the nearest independent joint on the path from
    r's own joint to the root of the full tree (-1 at the root)."""
    own = owners(embedding)
    reduced = {a: r for r, a in enumerate(own)}
    out = []
    for a in own:
        p = full_parent[a]
        while p >= 0 and p not in reduced:
            p = full_parent[p]
        out.append(reduced[p] if p >= 0 else -1)
    return tuple(out)


def fits(full, columns, parent) -> bool:
    """True when ``parent`` numbers parents first and every structural nonzero of GᵀMG (columns
    r, s holding bodies a ~ b related in the full tree ``full``, a Robot) sits at a pair r, s
    related in ``parent``."""
    n = len(parent)
    if any(not -1 <= parent[r] < r for r in range(n)):
        return False
    red_anc = [_ancestors(parent, r) for r in range(n)]
    for r in range(n):
        for s in range(r + 1, n):
            if r in red_anc[s]:
                continue
            if any(full.related(a, b) for a, _ in columns[r] for b, _ in columns[s]):
                return False
    return True


def reduced_parent(robot):
    """The independent joints' parent array when M̄ of the embedded ``robot`` (an
    :class:`~symgen.mimic.Embedded` system) has their tree sparsity, else None."""
    emb = robot.embedding
    parent = candidate_parent(robot.full.parent, emb)
    return parent if fits(robot.full, emb.columns(), parent) else None


def factor_parent(robot) -> tuple[int, ...]:
    """The parent array the reduced L^T D L runs over: the independent tree where M̄ fits it,
    else the chain (-1, 0, 1, ...), a dense factorization."""
    parent = reduced_parent(robot)
    return parent if parent is not None else tuple(range(-1, robot.embedding.nv - 1))


def named_matrix(M, bk):
    """M̄ with each entry of its lower triangle named once and mirrored: the factorization reads
    an entry several times, which would otherwise repeat its sum of projected terms (Mini Cheetah
    FD 11,104 operations in ground coordinates, 10,447 named)."""
    for r in range(M.shape[0]):
        for s in range(r + 1):
            M[r, s] = M[s, r] = bk.bind(M[r, s], f"Mr{r}_{s}")
    return M
