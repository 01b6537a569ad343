"""Program: the single intermediate representation between a symbolic run and the printers.

A :class:`Function` has named inputs (vectors of symbols), ordered assignments
``temp = expression`` (each tagged with the body it works on, for comments), and named outputs
(arrays of expressions). Passes take a Function and return a new one; printers only print.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import sympy as sp


@dataclass(frozen=True)
class Input:
    name: str                       # "q", "qd", "qdd"
    symbols: tuple                  # one sympy Symbol per entry


@dataclass(frozen=True)
class Output:
    name: str                       # "M", "C", "Gamma", "tau"
    shape: tuple
    exprs: tuple                    # flattened row-major

    def nonzero(self):
        """(flat index, expression) of the entries that are not exactly zero."""
        return [(k, e) for k, e in enumerate(self.exprs) if e != 0]


@dataclass(frozen=True)
class Assignment:
    temp: sp.Symbol
    expr: sp.Expr
    body: int | None = None


@dataclass(frozen=True)
class Function:
    name: str                       # "coriolis_matrix"
    doc: str
    inputs: tuple[Input, ...]
    assignments: tuple[Assignment, ...]
    outputs: tuple[Output, ...]

    def check_closed(self):
        """Every symbol used is an input or a temp assigned before its use (fail loudly)."""
        from ..errors import BuildError

        known = {s for inp in self.inputs for s in inp.symbols}
        for a in self.assignments:
            free = a.expr.free_symbols - known
            if free:
                raise BuildError(f"function {self.name}: {a.temp} uses undeclared symbols {sorted(map(str, free))}")
            known.add(a.temp)
        for out in self.outputs:
            for e in out.exprs:
                free = sp.sympify(e).free_symbols - known
                if free:
                    raise BuildError(f"function {self.name}: output {out.name} uses undeclared symbols {sorted(map(str, free))}")
        return self


def make_function(name, doc, inputs, assignments, outputs) -> Function:
    """Build a Function from a symbolic backend's record and output arrays (``{name: array}``)."""
    outs = tuple(Output(k, tuple(np.shape(v)), tuple(sp.sympify(e) for e in np.asarray(v).ravel()))
                 for k, v in outputs.items())
    return Function(name, doc, tuple(inputs), tuple(Assignment(*a) for a in assignments), outs)


# ------------------------------------------------------------------------------------- passes

def drop_dead(fn: Function) -> Function:
    """Remove assignments no output depends on."""
    live = set()
    for out in fn.outputs:
        for e in out.exprs:
            live |= e.free_symbols
    kept = []
    for a in reversed(fn.assignments):
        if a.temp in live:
            kept.append(a)
            live |= a.expr.free_symbols
    return replace(fn, assignments=tuple(reversed(kept)))


def share_outputs(fn: Function) -> Function:
    """An output expression that fills several entries (Gamma_ijk = Gamma_ikj, M_ij = M_ji) is
    computed once into a temp and scattered."""
    seen, repeated = {}, set()
    for out in fn.outputs:
        for e in out.exprs:
            if not (e.is_Atom or e.is_Number):
                if e in seen:
                    repeated.add(e)
                seen[e] = True
    if not repeated:
        return fn
    names = {}
    extra = []
    for out in fn.outputs:
        for e in out.exprs:
            if e in repeated and e not in names:
                names[e] = sp.Symbol(f"{out.name.lower()}{len(names)}")
                extra.append(Assignment(names[e], e, None))
    outputs = tuple(replace(o, exprs=tuple(names.get(e, e) for e in o.exprs)) for o in fn.outputs)
    return replace(fn, assignments=fn.assignments + tuple(extra), outputs=outputs)


def cse(fn: Function, prefix: str = "x") -> Function:
    """Common subexpressions across all assignments and outputs (sympy.cse), with the body tag
    of each original assignment kept for comments."""
    exprs = [a.expr for a in fn.assignments] + [e for o in fn.outputs for e in o.exprs]
    existing = {a.temp for a in fn.assignments}
    gen = (sp.Symbol(f"{prefix}{i}") for i in _count())
    gen = (s for s in gen if s not in existing)
    repl, reduced = sp.cse(exprs, symbols=gen, order="none", list=True)
    # each cse temp goes right before the first assignment that uses it (dependencies first)
    pending = list(repl)
    assignments = []
    defined = set()
    for a, new in zip(fn.assignments, reduced):
        need = new.free_symbols
        # emit, in cse's order, every pending temp this assignment needs (transitively)
        wanted = _closure(need, dict(pending), defined)
        keep = []
        for s, e in pending:
            if s in wanted:
                assignments.append(Assignment(s, e, a.body))
                defined.add(s)
            else:
                keep.append((s, e))
        pending = keep
        assignments.append(replace(a, expr=new))
        defined.add(a.temp)
    assignments += [Assignment(s, e, None) for s, e in pending]
    rest = reduced[len(fn.assignments):]
    outputs, pos = [], 0
    for o in fn.outputs:
        outputs.append(replace(o, exprs=tuple(rest[pos:pos + len(o.exprs)])))
        pos += len(o.exprs)
    return replace(fn, assignments=tuple(assignments), outputs=tuple(outputs))


def _closure(need, defs, defined):
    out, stack = set(), [s for s in need if s in defs and s not in defined]
    while stack:
        s = stack.pop()
        if s in out:
            continue
        out.add(s)
        stack += [t for t in defs[s].free_symbols if t in defs and t not in defined and t not in out]
    return out


def _count():
    i = 0
    while True:
        yield i
        i += 1


# ------------------------------------------------------------------------------- layout

@dataclass(frozen=True)
class Part:
    """A run of consecutive statements printed as one C function: ``assignments`` (temps) and
    ``entries`` ((output number, flat index, expression) of the Function's outputs)."""
    assignments: tuple
    entries: tuple


def output_entries(fn: Function) -> list[tuple[int, int, sp.Expr]]:
    """(output number, flat index, expression) of every entry that is not exactly zero, output
    by output."""
    return [(o, k, e) for o, out in enumerate(fn.outputs) for k, e in out.nonzero()]


def partition(fn: Function, size: int, above: int | None = None) -> tuple[tuple[Part, ...], dict]:
    """Split the straight-line code of a Function of more than ``above`` (default ``size``)
    statements into parts of about ``size`` statements (temps first, then output entries, in
    program order), and number the temps that are used outside the part that assigns them:
    ``(parts, {temp: slot})``. The C printer keeps those in a work array ``w[slot]``, every other
    temp in a local; compilers then see functions of bounded size (gcc -O2 time grows much faster
    than linearly with function length)."""
    entries = output_entries(fn)
    statements = [("a", a) for a in fn.assignments] + [("e", e) for e in entries]
    if len(statements) <= (size if above is None else above):
        return (Part(fn.assignments, tuple(entries)),), {}
    owner, slots = {}, {}
    groups = [statements[k:k + size] for k in range(0, len(statements), size)]
    for g, group in enumerate(groups):
        for kind, item in group:
            expr = item.expr if kind == "a" else item[2]
            for s in expr.free_symbols:
                if owner.get(s, g) != g and s not in slots:
                    slots[s] = len(slots)
            if kind == "a":
                owner[item.temp] = g
    # slots numbered in assignment order, so the layout does not depend on set iteration order
    order = {a.temp: k for k, a in enumerate(fn.assignments)}
    slots = {s: k for k, s in enumerate(sorted(slots, key=order.__getitem__))}
    parts = tuple(Part(tuple(item for kind, item in group if kind == "a"),
                       tuple(item for kind, item in group if kind == "e")) for group in groups)
    return parts, slots


# ------------------------------------------------------------------------------- op counting

def count_ops(fn: Function) -> dict:
    """Floating-point operations of the straight-line code: adds (incl. subtractions), muls
    (incl. divisions and integer powers as repeated products), trig calls."""
    counts = {"add": 0, "mul": 0, "trig": 0}
    for e in [a.expr for a in fn.assignments] + [e for o in fn.outputs for e in o.exprs]:
        _count_expr(e, counts)
    counts["total"] = counts["add"] + counts["mul"] + counts["trig"]
    return counts


#: what one division costs when :func:`cost` compares routes, in operations: :func:`count_ops`
#: counts it as one multiplication, but a double division has about 3x a multiplication's latency
#: (13-15 against 4 cycles on x86-64) and holds its divider for about 4 cycles where multiplies
#: issue two per cycle, so in straight-line code it takes the issue slots of about ten operations
DIVISION_COST = 10


def count_divisions(fn: Function) -> int:
    """Divisions of the straight-line code: factors x**-k (SymPy writes a / b as a * b**-1)."""
    return sum(1 for e in [a.expr for a in fn.assignments] + [e for o in fn.outputs for e in o.exprs]
               for x in sp.preorder_traversal(e) if x.is_Pow and x.exp.is_Integer and x.exp < 0)


#: what one sin or cos costs when :func:`cost` compares routes, in operations. Measured here
#: (gcc 12 -O3 -march=native, glibc): sin(x) + cos(x) of one argument 6.7 ns a pair, gcc fusing
#: them into sincos; the generated code runs at about 0.15 ns per operation (ur5's M, 818
#: operations in 0.123 µs), so one call is worth about 22 operations. A route that never needs a
#: joint's angle (M does not depend on the first joint's, nor gravity terms on a turn about the
#: gravity axis) saves a pair
TRIG_COST = 20


def cost(fn: Function) -> int:
    """The cost a build compares variants of a sweep by: operations, a division weighing
    :data:`DIVISION_COST` (ABA and L^T D L both divide once per body whose pivot is not constant,
    but a body-frame route folds the constant pivots of leaves, a ground-coordinate one does not)
    and a sin or cos :data:`TRIG_COST`."""
    ops = count_ops(fn)
    return ops["total"] + (DIVISION_COST - 1) * count_divisions(fn) + (TRIG_COST - 1) * ops["trig"]


def _count_expr(e, counts):
    if e.is_Atom:
        return
    if e.is_Add:
        counts["add"] += len(e.args) - 1
    elif e.is_Mul:
        factors = [a for a in e.args if a not in (-1, sp.S.NegativeOne)]
        counts["mul"] += max(len(factors) - 1, 0)
    elif e.is_Pow and e.exp.is_Integer:
        counts["mul"] += abs(int(e.exp)) - 1 + (1 if e.exp < 0 else 0)
    elif isinstance(e, (sp.sin, sp.cos)):
        counts["trig"] += 1
    for a in e.args:
        _count_expr(a, counts)
