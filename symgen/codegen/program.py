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
class Loop:
    """A loop over columns ``start`` to ``stop`` (excluded) of some outputs (``targets``, output
    numbers, all of one shape (rows, cols)), run after the assignments and the output entries
    are written: rows ``rows_in`` of each such column are read into ``column`` (one symbol per
    row read), the straight-line ``assignments`` run on them (their temps local to one column;
    they may read the Function's temps, which are loop-invariant), and rows ``rows_out`` of the
    column are overwritten with ``results``. The printers make it a loop whose body the
    compiler vectorizes across columns (the generated straight-line code is otherwise scalar).
    ``symmetric`` (on a target's last loop): the upper triangle is mirrored to the lower one
    once it has run. See :meth:`symgen.backend.SymbolicBackend.column_loop`."""
    targets: tuple[int, ...]
    column: tuple
    assignments: tuple[Assignment, ...]
    results: tuple
    rows_in: tuple[int, ...]
    rows_out: tuple[int, ...]
    start: int
    stop: int
    symmetric: bool = False

    def outer_symbols(self) -> set:
        """The symbols its body reads from outside (the Function's temps and inputs)."""
        local = set(self.column) | {a.temp for a in self.assignments}
        free = set().union(*(a.expr.free_symbols for a in self.assignments),
                           *(sp.sympify(e).free_symbols for e in self.results))
        return free - local

    def reads(self, cols: int) -> set:
        """The flat indices of a target's entries it reads (which the straight-line code writes)."""
        return {i * cols + c for i in self.rows_in for c in range(self.start, self.stop)}


@dataclass(frozen=True)
class Function:
    name: str                       # "coriolis_matrix"
    doc: str
    inputs: tuple[Input, ...]
    assignments: tuple[Assignment, ...]
    outputs: tuple[Output, ...]
    #: column loops run after the entries are written; an output a loop targets holds, as its
    #: ``exprs``, the matrix the loop starts from (every entry written, zeros included)
    loops: tuple[Loop, ...] = ()
    #: the sweep's run it was traced from (its name; a variant's when the build chose one)
    route: str = ""

    def loop_targets(self) -> set:
        return {t for lp in self.loops for t in lp.targets}

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
        for lp in self.loops:
            local = set(lp.column)
            for a in lp.assignments:
                free = a.expr.free_symbols - known - local
                if free:
                    raise BuildError(f"function {self.name}: loop temp {a.temp} uses undeclared symbols {sorted(map(str, free))}")
                local.add(a.temp)
            for e in lp.results:
                free = sp.sympify(e).free_symbols - known - local
                if free:
                    raise BuildError(f"function {self.name}: loop result uses undeclared symbols {sorted(map(str, free))}")
            shapes = {self.outputs[t].shape for t in lp.targets}
            if (len(shapes) != 1 or len(next(iter(shapes))) != 2 or len(lp.rows_in) != len(lp.column)
                    or len(lp.rows_out) != len(lp.results)):
                raise BuildError(f"function {self.name}: loop targets of shapes {sorted(shapes)} for "
                                 f"{len(lp.column)} rows in, {len(lp.results)} out")
        return self


def make_function(name, doc, inputs, assignments, outputs, loops=()) -> Function:
    """Build a Function from a symbolic backend's record and output arrays (``{name: array}``).
    ``loops``: the backend's column loops (:meth:`~symgen.backend.SymbolicBackend.column_loop`);
    an output that is one of their results, as returned, becomes a target of the loop (its
    entries: the block the loop starts from); a loop no output takes is dropped (dead)."""
    from ..errors import BuildError

    names = list(outputs)
    arrays = [np.asarray(v) for v in outputs.values()]
    exprs = [tuple(sp.sympify(e) for e in a.ravel()) for a in arrays]
    found = []
    for rec in loops:
        targets = []
        for X, B in zip(rec["placeholders"], rec["blocks"]):
            for k, a in enumerate(arrays):
                if a.shape == X.shape and all(x == y for x, y in zip(a.ravel(), X.ravel())):
                    targets.append(k)
                    exprs[k] = tuple(sp.sympify(e) for e in B.ravel())
        if targets:
            last = len(rec["segments"]) - 1
            found += [Loop(tuple(targets), seg["column"], tuple(Assignment(*a) for a in seg["assignments"]),
                           seg["results"], seg["rows_in"], seg["rows_out"], seg["start"], seg["stop"],
                           rec["symmetric"] and k == last)
                      for k, seg in enumerate(rec["segments"])]
    placeholders = {x for rec in loops for X in rec["placeholders"] for x in X.ravel()}
    for k, out in enumerate(exprs):
        if any(e.free_symbols & placeholders for e in out):
            raise BuildError(f"function {name}: output {names[k]} uses a column loop's results other than as its "
                             f"whole value")
    outs = tuple(Output(k, tuple(a.shape), e) for k, a, e in zip(names, arrays, exprs))
    return Function(name, doc, tuple(inputs), tuple(Assignment(*a) for a in assignments), outs, tuple(found))


def evaluate(fn: Function, values: dict, digits: int = 30) -> list:
    """The outputs of ``fn`` at ``values`` (``{input name: vector}``), its statements run one after
    the other on SymPy floats of ``digits`` digits, column loops included: a list of arrays of
    the outputs' shapes (for tests: what the printed code computes)."""
    env = {s: sp.Float(float(x), digits) for inp in fn.inputs for s, x in zip(inp.symbols, values[inp.name])}
    for a in fn.assignments:
        env[a.temp] = sp.Float(float(a.expr.xreplace(env)), digits)
    outs = [np.array([float(sp.sympify(e).xreplace(env)) for e in o.exprs]).reshape(o.shape) for o in fn.outputs]
    for lp in fn.loops:
        for t in lp.targets:
            X = outs[t]
            for c in range(lp.start, lp.stop):
                local = dict(env)
                local.update({s: sp.Float(float(X[i, c]), digits) for s, i in zip(lp.column, lp.rows_in)})
                for a in lp.assignments:
                    local[a.temp] = sp.Float(float(a.expr.xreplace(local)), digits)
                X[list(lp.rows_out), c] = [float(sp.sympify(e).xreplace(local)) for e in lp.results]
            if lp.symmetric:
                outs[t] = np.triu(X) + np.triu(X, 1).T
    return outs


# ------------------------------------------------------------------------------------- passes

def drop_dead(fn: Function) -> Function:
    """Remove assignments no output depends on."""
    live = set()
    for out in fn.outputs:
        for e in out.exprs:
            live |= e.free_symbols
    for lp in fn.loops:
        live |= lp.outer_symbols()
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
    by output; of a loop's target, every entry a loop reads, zero or not."""
    read = {}
    for lp in fn.loops:
        for t in lp.targets:
            read.setdefault(t, set()).update(lp.reads(fn.outputs[t].shape[1]))
    return [(o, k, e) for o, out in enumerate(fn.outputs)
            for k, e in ([(k, out.exprs[k]) for k in sorted(read[o])] if o in read else out.nonzero())]


def partition(fn: Function, size: int, above: int | None = None) -> tuple[tuple[Part, ...], dict]:
    """Split the straight-line code of a Function of more than ``above`` (default ``size``)
    statements into parts of about ``size`` statements (temps first, then output entries, in
    program order), and number the temps that are used outside the part that assigns them:
    ``(parts, {temp: slot})``. The C printer keeps those in a work array ``w[slot]``, every other
    temp in a local; compilers then see functions of bounded size (gcc -O2 time grows much faster
    than linearly with function length). The column loops (``fn.loops``) run in the last part."""
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
    last = len(groups) - 1
    for lp in fn.loops:
        for s in lp.outer_symbols():
            if owner.get(s, last) != last and s not in slots:
                slots[s] = len(slots)
    # slots numbered in assignment order, so the layout does not depend on set iteration order
    order = {a.temp: k for k, a in enumerate(fn.assignments)}
    slots = {s: k for k, s in enumerate(sorted(slots, key=order.__getitem__))}
    parts = tuple(Part(tuple(item for kind, item in group if kind == "a"),
                       tuple(item for kind, item in group if kind == "e")) for group in groups)
    return parts, slots


# ------------------------------------------------------------------------------- op counting

def count_ops(fn: Function) -> dict:
    """Floating-point operations of the straight-line code: adds (incl. subtractions), muls
    (incl. divisions and integer powers as repeated products), trig calls; a column loop's body
    counts once per column it runs on (``loop`` of the total: those operations)."""
    counts = {"add": 0, "mul": 0, "trig": 0}
    for e in [a.expr for a in fn.assignments] + [e for o in fn.outputs for e in o.exprs]:
        _count_expr(e, counts)
    loop = 0
    for lp, body in ((lp, loop_ops(lp)) for lp in fn.loops):
        runs = len(lp.targets) * (lp.stop - lp.start)
        for k in ("add", "mul", "trig"):
            counts[k] += runs * body[k]
        loop += runs * body["total"]
    counts["total"] = counts["add"] + counts["mul"] + counts["trig"]
    if fn.loops:
        counts["loop"] = loop
    return counts


def loop_ops(lp: Loop) -> dict:
    """The operations of one run of a column loop's body (one column)."""
    counts = {"add": 0, "mul": 0, "trig": 0}
    for e in [a.expr for a in lp.assignments] + list(lp.results):
        _count_expr(sp.sympify(e), counts)
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


#: how many columns one vector instruction of a column loop covers when :func:`cost` weighs it:
#: gcc vectorizes the loops across columns with 4 doubles a ymm register at -O3 -march=native
#: (512-bit vectors measured slower), so a loop over k columns runs its body ceil(k / 4) times
LOOP_LANES = 4
#: what each loop-invariant value a column loop's body reads (a factor of the solve, a joint
#: axis) costs, in operations: gcc broadcasts each into a vector before the loop and, with
#: hundreds of them, spills them to the stack and reloads them in the body
LOOP_INVARIANT_COST = 3
# Measured (gcc 12 -O3 -march=native, one process timing the candidates in turn; us): M^-1 of
# panda 0.249 (L^T D L in body frames, no loop) / 0.316 (L^T D L, loops) / 0.466 (ABA passes,
# loops); solo12 0.670 (dedicated algorithm) / 0.544 / 0.681; the 20-DoF chain 2.85 / 2.35 /
# 1.90. With these two weights each robot gets its fastest: loops run at about one vector
# instruction per scalar operation, and the ABA passes' body, reading 18 invariants per body
# where the L^T D L solve reads one per operation, pays for them on small robots. The forward-
# dynamics derivatives' 2n solves in a loop win everywhere: the chain 10.5 -> 6.6 us, panda
# 1.44 -> 0.89, solo12 3.19 -> 2.40, arm4 0.252 -> 0.247.


def loop_cost(fn: Function) -> int:
    """What :func:`cost` charges for ``fn``'s column loops (in operations): each body's operations
    once per :data:`LOOP_LANES` columns and target, plus :data:`LOOP_INVARIANT_COST` per
    loop-invariant value it reads."""
    return sum(loop_ops(lp)["total"] * len(lp.targets) * -(-(lp.stop - lp.start) // LOOP_LANES)
               + LOOP_INVARIANT_COST * len(lp.outer_symbols()) for lp in fn.loops)


def cost(fn: Function) -> int:
    """The cost a build compares variants of a sweep by: operations, a division weighing
    :data:`DIVISION_COST` (ABA and L^T D L both divide once per body whose pivot is not constant,
    but a body-frame route folds the constant pivots of leaves, a ground-coordinate one does not),
    a sin or cos :data:`TRIG_COST`, and the column loops :func:`loop_cost` (vectorized)."""
    ops = count_ops(fn)
    return (ops["total"] - ops.get("loop", 0) + loop_cost(fn) + (DIVISION_COST - 1) * count_divisions(fn)
            + (TRIG_COST - 1) * ops["trig"])


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
