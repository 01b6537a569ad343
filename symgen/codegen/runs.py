"""Row runs: consecutive output entries that are the same dot product, printed as one loop.

Algorithm 1 ends in dot products: row i of C above the diagonal is C[i, j] = Phi_i . F1_j over the
descendants j of body i, row j below it C[j, i] = Phid_i . F2_j + Phi_i . F3_j over the ancestors
i. Unrolled, each entry loads its own six or twelve temps and multiplies them one at a time.
Here such a row segment becomes

    for (k = 0; k < m; ++k)  C[start + k] = c_0 * w[b_0 + k] + ... + c_R * w[b_R + k];

with the factors c_r that every entry of the segment shares (Phi_i; F2_j, F3_j) read once before
the loop, and the factors that change along the row (F1_j; Phid_i, Phi_i) laid out in the work
array so that each is a contiguous array (component-major: F1_j[r] for all j in a row). The
compiler vectorizes such a loop across entries, four at a time with AVX.

The pass looks only at the printed shape of the entries, not at the algorithm: a run is any
maximal segment of at least :data:`MIN_RUN` consecutive entries of one output row whose every
term is (a factor common to the whole segment) x (one temp that changes from entry to entry),
with the same common factors in every entry. A segment that would only copy temps is left alone.

An entry whose value is a temp that only output entries hold
(:func:`~symgen.codegen.program.share_outputs` makes one for M_ij = M_ji and for Gamma_ijk =
Gamma_ikj) is read through that temp: the run computes it and also writes its other place when
those places are evenly spaced (the other triangle, a column: ``mirror``), and the temp is no
longer computed.

Each changing temp gets one place in the work array, so two runs that need one temp at places
that disagree cannot both be loops: runs are taken longest first, and a run whose layout
conflicts with those taken, or that writes an entry one of them writes, stays unrolled.

In a function printed in parts the temps already go through the work array, and runs of
:data:`MIN_RUN` pay. In a whole function the changing temps leave registers for a local array, so
only runs of :data:`WHOLE_MIN_RUN` are taken; its lanes copy for batches prints their entries one
by one, in the loop's order of operations.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import sympy as sp


#: the shortest segment printed as a loop (one AVX vector)
MIN_RUN = 4
#: the shortest in a whole function (not in parts): there its changing temps leave registers for
#: the array, which short rows do not pay back (panda with runs of 4-8 entries: C 0.349 -> 0.365
#: µs; with 12, the 20-DoF chain's M 0.97 -> 0.87 µs and panda's regressor 0.484 -> 0.460)
WHOLE_MIN_RUN = 12


@dataclass(frozen=True)
class Run:
    """Entries ``start`` .. ``start + count - 1`` (flat) of output ``output``: ``const`` plus the sum
    over r of ``coefs[r]`` times the run's r-th changing temps (``temps[r]``, one per entry)."""
    output: int
    start: int
    coefs: tuple
    const: sp.Expr
    temps: tuple               # temps[r][k]: the changing factor of term r in entry start + k
    #: (output, start, stride): entry start + k also written at start + stride k of that output
    #: (the other triangle of a symmetric M, the other half of Gamma_ijk = Gamma_ikj)
    mirror: tuple | None = None

    @property
    def count(self) -> int:
        return len(self.temps[0])

    def positions(self) -> list:
        """Every (output, flat index) the run writes."""
        out = [(self.output, self.start + k) for k in range(self.count)]
        if self.mirror:
            o, start, stride = self.mirror
            out += [(o, start + stride * k) for k in range(self.count)]
        return out


def _decompose(e, common, temps):
    """(const, {coef: temp}) when ``e`` is const + the sum of coef x (one temp not in ``common``),
    the coefs and const made of ``common`` symbols and numbers only; None otherwise."""
    const, terms = sp.S.Zero, {}
    for term in sp.Add.make_args(e):
        factors = sp.Mul.make_args(term)
        changing = [f for f in factors if f.free_symbols - common]
        if not changing:
            const += term
            continue
        if len(changing) != 1 or changing[0] not in temps:
            return None
        coef = sp.Mul(*(f for f in factors if f is not changing[0]))
        if coef in terms:
            return None
        terms[coef] = changing[0]
    return (const, terms) if terms else None


def _grow(row, a, temps):
    """The longest run of ``row`` ([(flat index, expr, mirrors)], in order) that starts at ``a``:
    (end, const, {coef: [temp per entry]}, mirror), or None if not even two entries make one."""
    best, common, parts = None, set(row[a][1].free_symbols), None
    for b in range(a + 1, len(row)):
        if row[b][0] != row[b - 1][0] + 1 or not _mirrors_agree(row[a:b + 1]):
            break
        narrowed = common & row[b][1].free_symbols
        if parts is None or narrowed != common:      # the common factors changed: decompose again
            parts = [_decompose(e, narrowed, temps) for _, e, _ in row[a:b]]
        common = narrowed
        parts.append(_decompose(row[b][1], common, temps))
        if any(p is None or p[0] != parts[0][0] or p[1].keys() != parts[0][1].keys() for p in parts):
            break
        first = row[a][2]
        mirror = (first[0][0], first[0][1], row[a + 1][2][0][1] - first[0][1]) if first else None
        best = (b + 1, parts[0][0], {c: [p[1][c] for p in parts] for c in parts[0][1]}, mirror)
    return best


def _mirrors_agree(items):
    """Whether the entries' other places (``mirrors``) are none for all, or one each, in one
    output, at evenly spaced flat indices."""
    counts = {len(m) for _, _, m in items}
    if counts == {0}:
        return True
    if counts != {1} or len({m[0][0] for _, _, m in items}) != 1:
        return False
    at = [m[0][1] for _, _, m in items]
    return len({y - x for x, y in zip(at, at[1:])}) == 1


def _shared(fn):
    """{temp: (expression, [(output, flat index), ...])} of the temps that are the whole value of
    output entries and that nothing else reads (:func:`~symgen.codegen.program.share_outputs`
    makes them for M_ij = M_ji and Gamma_ijk = Gamma_ikj): a run looks through them and writes
    each of their places."""
    assigned = {a.temp: a.expr for a in fn.assignments}
    read = set().union(*(a.expr.free_symbols for a in fn.assignments), *(lp.outer_symbols() for lp in fn.loops))
    places = {}
    for o, out in enumerate(fn.outputs):
        for k, e in enumerate(out.exprs):
            if e in assigned:
                places.setdefault(e, []).append((o, k))
            else:
                read |= e.free_symbols                  # -t, 2 t: read, not only placed
    return {t: (assigned[t], p) for t, p in places.items() if t not in read}


def _segments(fn, entries, shared, shortest=MIN_RUN):
    """Maximal runs of at least ``shortest`` entries in each output row (greedy from the left)."""
    temps = {a.temp for a in fn.assignments}
    by_row = {}
    for o, k, e in entries:
        shape = fn.outputs[o].shape
        if len(shape) < 2:
            continue
        value, mirrors = (shared[e][0], [p for p in shared[e][1] if p != (o, k)]) if e in shared else (e, [])
        by_row.setdefault((o, k // shape[-1]), []).append((k, value, mirrors))
    found = []
    for (o, _), row in by_row.items():
        a = 0
        while a + shortest <= len(row):
            grown = _grow(row, a, temps)
            if grown is not None and grown[0] - a >= shortest and list(grown[2]) != [1]:   # not a copy
                end, const, table, mirror = grown
                coefs = tuple(sorted(table, key=sp.default_sort_key))
                found.append(Run(o, row[a][0], coefs, const, tuple(tuple(table[c]) for c in coefs), mirror))
                a = end
            else:
                a += 1
    return found


def _layout(runs):
    """Take runs longest first while the temps they need contiguous can be (every temp has at
    most one successor and one predecessor, no cycles) and no two write one entry. Returns
    (runs taken, chains: lists of temps each laid out contiguously)."""
    succ, pred, written, taken = {}, {}, set(), []
    for run in sorted(runs, key=lambda r: (-r.count, r.output, r.start)):
        places = run.positions()
        new = None if written.intersection(places) else _links(run.temps, succ, pred)
        if new is None:
            continue
        succ, pred = {**succ, **new}, {**pred, **{y: x for x, y in new.items()}}
        written.update(places)
        taken.append(run)
    members = {t for run in taken for seq in run.temps for t in seq}
    chains = []
    for t in members - set(pred):
        chain = [t]
        while chain[-1] in succ:
            chain.append(succ[chain[-1]])
        chains.append(chain)
    return taken, chains


def _links(seqs, succ, pred):
    """The successor links ``seqs`` (sequences of temps, each to be laid out contiguously) add to
    ``succ``/``pred``, or None when they contradict them or each other, or close a cycle."""
    new = {}
    for seq in seqs:
        if len(set(seq)) != len(seq):
            return None
        for x, y in zip(seq, seq[1:]):
            if succ.get(x, new.get(x)) not in (None, y) or pred.get(y) not in (None, x):
                return None
            new[x] = y
    if len(set(new.values())) != len(new) or _closes_cycle({**succ, **new}, new):
        return None                         # two temps before one, or a loop
    return new


def _closes_cycle(succ, new):
    """Whether one of the ``new`` links x -> y closes a cycle of ``succ`` (from y back to x)."""
    for x, y in new.items():
        z = y
        while z in succ:
            z = succ[z]
            if z == x:
                return True
    return False


def row_runs(fn, parts, slots):
    """The row runs of a Function as :func:`~symgen.codegen.program.partition` split it:
    ``(parts without the runs' entries and the shared temps they replace, slots with the runs'
    temps laid out contiguously after the others, [(part number, Run), ...])``. A whole function
    (one part) takes only runs of :data:`WHOLE_MIN_RUN` entries."""
    loop_targets = fn.loop_targets()
    entries = [(o, k, e) for part in parts for o, k, e in part.entries if o not in loop_targets]
    shared = _shared(fn)
    taken, chains = _layout(_segments(fn, entries, shared, MIN_RUN if len(parts) > 1 else WHOLE_MIN_RUN))
    if not taken:
        return parts, slots, []
    removed = {place for run in taken for place in run.positions()}
    # a shared temp whose every place a run writes is no longer computed on its own
    dropped = {t for t, (_, places) in shared.items() if removed.issuperset(places)}
    where = {(o, k): p for p, part in enumerate(parts) for o, k, _ in part.entries}
    placed = sorted(((where[run.output, run.start], run) for run in taken),
                    key=lambda pr: (pr[0], pr[1].output, pr[1].start))
    # what a run reads besides its chains: visible in its part (a looked-through temp's factors
    # may be locals of the part that computed it)
    owner = {a.temp: p for p, part in enumerate(parts) for a in part.assignments}
    read = {x for p, run in placed for e in (*run.coefs, run.const) for x in e.free_symbols
            if owner.get(x, p) != p}
    order = {a.temp: k for k, a in enumerate(fn.assignments)}
    chained = {t for chain in chains for t in chain}
    ordinary = sorted((set(slots) | read) - chained - dropped, key=order.__getitem__)
    new_slots = {s: k for k, s in enumerate(ordinary)}
    for chain in sorted(chains, key=lambda c: order[c[0]]):
        for t in chain:
            new_slots[t] = len(new_slots)
    new_parts = tuple(replace(part, assignments=tuple(a for a in part.assignments if a.temp not in dropped),
                              entries=tuple(x for x in part.entries if (x[0], x[1]) not in removed))
                      for part in parts)
    return new_parts, new_slots, placed


__all__ = ["MIN_RUN", "WHOLE_MIN_RUN", "Run", "row_runs"]
