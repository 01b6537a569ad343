"""Backends: what an algorithm needs to run on numbers or on symbols.

An algorithm receives a backend ``bk`` and uses only ``bk.zeros``, ``bk.sin``, ``bk.cos``,
``bk.const``, ``bk.number``, ``bk.half``, ``bk.bind`` and ``bk.tick`` (progress) besides array arithmetic. Arrays are NumPy in both modes:
float64 for numbers, ``dtype=object`` holding SymPy expressions for symbols. No algorithm checks
which backend it has.

``bind(array, name)`` is the SymPyBotics hook: the numeric backend returns the array untouched;
the symbolic one replaces every compound entry by a fresh symbol and records ``symbol = entry``,
so expressions stay small and the run's record is already straight-line code.
"""
from __future__ import annotations

import math

import numpy as np


def is_zero(x) -> bool:
    """Whether an entry is exactly zero: a number equal to 0 or a SymPy expression that is 0
    (one whose truth cannot be decided, e.g. an array, is not)."""
    try:
        return bool(x == 0)
    except TypeError:
        return False


class NumericBackend:
    """float64 arrays; ``bind`` is the identity."""

    name = "numeric"
    half = 0.5

    def zeros(self, shape):
        return np.zeros(shape)

    def const(self, value):
        return np.array(value, dtype=float)

    def number(self, x):
        return float(x)

    def sin(self, x):
        return math.sin(x)

    def cos(self, x):
        return math.cos(x)

    def bind(self, value, name, body=None):
        return value

    def bind_always(self, value, name, body=None):
        return value

    def column_loop(self, body, blocks, name, symmetric=False, width=None):
        """``body(column, bk)`` applied to every column of each matrix of ``blocks`` (the symbolic
        backend prints it as loops over the columns, see :class:`SymbolicBackend`)."""
        out = [np.column_stack([body(B[:, c], self) for c in range(B.shape[1])]) for B in blocks]
        if symmetric:                                   # the upper triangle, mirrored (as printed)
            out = [np.triu(X) + np.triu(X, 1).T for X in out]
        return out

    def tick(self, done, total):
        """Progress of a long loop (a symbolic run reports it; numbers do not)."""


NUMERIC = NumericBackend()


class SymArray(np.ndarray):
    """An object array of SymPy expressions whose ``@`` skips structural zeros and builds each
    sum in one ``Add`` (NumPy's object matmul adds term by term, re-sorting the sum each time).
    Everything else is plain NumPy, so algorithms use ``@`` on both backends alike."""

    def __matmul__(self, other):
        from sympy import Add, S

        zero = S.Zero
        A, B = np.asarray(self), np.asarray(other)
        A2 = A if A.ndim == 2 else A[None, :]
        B2 = B[:, None] if B.ndim == 1 else B
        out = np.empty((A2.shape[0], B2.shape[1]), dtype=object)
        for r in range(A2.shape[0]):
            row = [(t, a) for t, a in enumerate(A2[r]) if a is not zero]
            for c in range(B2.shape[1]):
                terms = [a * B2[t, c] for t, a in row if B2[t, c] is not zero]
                out[r, c] = Add(*terms) if len(terms) > 1 else (terms[0] if terms else zero)
        if B.ndim == 1:
            out = out[:, 0]
        if A.ndim == 1:
            return out[0] if B.ndim == 1 else out[0].view(SymArray)
        return out.view(SymArray)

    def __rmatmul__(self, other):
        return np.asarray(other).view(SymArray).__matmul__(self)


class TraceLimit(Exception):
    """A symbolic run named more intermediates than its backend's ``limit`` (a candidate route
    that cannot be the cheapest is abandoned early)."""


class SymbolicBackend:
    """SymPy objects in ``dtype=object`` arrays, with named intermediates.

    ``assignments`` is the ordered record ``[(symbol, expression, body), ...]`` of every ``bind`` (and of
    each ``sin``/``cos``, computed once per distinct argument). ``const`` turns float constants into
    exact integers or halves where they are exactly so (structural zeros then vanish during the
    run) and into ``Float`` otherwise.
    """

    name = "symbolic"

    def __init__(self, prefix: str = "", naming: bool = True, tick=None, limit: int | None = None):
        import sympy

        self.limit = limit               # more named intermediates than this: TraceLimit
        self.sp = sympy
        self.half = sympy.Rational(1, 2)
        self.prefix = prefix
        self.naming = naming
        self._tick = tick
        self.assignments: list = []
        #: column loops recorded by :meth:`column_loop`, in order
        self.loops: list = []
        self._trig: dict = {}
        self._known: dict = {}
        self._counts: dict[str, int] = {}
        self._used: set[str] = set()            # every name given out (a suffix must not repeat one)

    # -- construction
    def zeros(self, shape):
        return np.full(shape, self.sp.S.Zero, dtype=object).view(SymArray)

    def const(self, value):
        arr = np.asarray(value, dtype=float)
        out = np.empty(arr.shape, dtype=object)
        for idx, x in np.ndenumerate(arr):
            out[idx] = self.number(float(x))
        return out.view(SymArray)

    def number(self, x: float):
        sp = self.sp
        if x == int(x) and abs(x) < 2**53:
            return sp.Integer(int(x))
        if 2 * x == int(2 * x):
            return sp.Rational(int(2 * x), 2)
        return sp.Float(x, 17)

    # -- elementary functions, each computed once per argument
    def _trig_of(self, fn, tag, x):
        if not self.naming:
            return fn(x)
        key = (tag, x)
        if key not in self._trig:
            self._trig[key] = self._record(f"{tag}{x}", fn(x), None)
        return self._trig[key]

    def sin(self, x):
        return self._trig_of(self.sp.sin, "s", x)

    def cos(self, x):
        return self._trig_of(self.sp.cos, "c", x)

    def tick(self, done, total):
        """An algorithm's outer loop finished step ``done`` of ``total`` (for a progress bar)."""
        if self._tick is not None:
            self._tick(done, total)

    # -- naming of intermediates
    def _record(self, name: str, expr, body):
        if self.limit is not None and len(self.assignments) >= self.limit:
            raise TraceLimit(self.limit)
        n = self._counts.get(name, 0)
        label = name if n == 0 else f"{name}_{n}"
        while label in self._used:              # "p0_1" bound twice is "p0_1_1", an entry of "p0_1" too
            n += 1
            label = f"{name}_{n}"
        self._counts[name] = n + 1
        self._used.add(label)
        sym = self.sp.Symbol(f"{self.prefix}{label}")
        self.assignments.append((sym, expr, body))
        self._known[expr] = sym
        return sym

    @staticmethod
    def _is_trivial(e) -> bool:
        # atoms, and a number times an atom, are cheaper to repeat than to name
        if e.is_Atom:
            return True
        return e.is_Mul and len(e.args) == 2 and e.args[0].is_Number and e.args[1].is_Atom

    def bind(self, value, name, body=None):
        """Name every compound entry of ``value``; an expression named before gets its old name
        back (value numbering), so repeated work in the algorithm is not repeated in the code."""
        if not self.naming:
            return value
        if not isinstance(value, np.ndarray):
            return self._bind_one(value, name, body)
        out = np.empty(value.shape, dtype=object)
        for idx, e in np.ndenumerate(np.asarray(value)):
            suffix = "_".join(str(i) for i in idx)
            out[idx] = self._bind_one(e, f"{name}_{suffix}" if suffix else name, body)
        return out.view(SymArray)

    def bind_always(self, value, name, body=None):
        """``value`` (one expression) named like :meth:`bind`, but a number times a symbol too:
        for an expression the code must hold in a temp of its own (trig values are named after
        their argument, which must be a symbol: a mimic joint's q = multiplier * q_lead)."""
        if not self.naming:
            return value
        e = self.sp.sympify(value)
        if e.is_Atom:
            return e
        known = self._known.get(e)
        return known if known is not None else self._record(name, e, body)

    def column_loop(self, body, blocks, name, symmetric=False, width=None):
        """``body(column, bk)`` (a map from a column vector to a column vector, linear or not)
        applied to every column of each matrix of ``blocks`` (all of one shape), recorded as
        loops over the columns instead of unrolled: the body is traced on symbols of one column
        (its temps named ``NAMEk_...``, local to the loop), and the returned matrices hold
        placeholder symbols that the program maps back to the loops
        (:func:`symgen.codegen.program.make_function`: they must be a function's outputs as they
        are, each then computed in place from the block's entries). ``width``: one loop per run of
        that many columns, each traced with the rows that are zero in all its columns as exact
        zeros; ``symmetric``: the results are symmetric, a loop keeps the rows up to its last
        column (the upper triangle) and the rest is mirrored. Without naming, the body is
        applied column by column (unrolled)."""
        if not self.naming:
            return NumericBackend.column_loop(self, body, blocks, name, symmetric)
        sp = self.sp
        rows, cols = blocks[0].shape
        width = width or cols
        segments = []
        for k, start in enumerate(range(0, cols, width)):
            stop = min(cols, start + width)
            rows_in = tuple(i for i in range(rows)
                            if any(B[i, c] != 0 for B in blocks for c in range(start, stop))) or (0,)
            sub = SymbolicBackend(prefix=f"{name}{k}_", naming=True)
            column = np.array([sp.Symbol(f"{name}{k}_b{i}") if i in rows_in else sp.S.Zero for i in range(rows)],
                              dtype=object).view(SymArray)
            values = [sp.sympify(x) for x in body(column, sub)]
            rows_out = tuple(range(min(rows, stop) if symmetric else rows))
            results = tuple(values[i] for i in rows_out)
            live = set().union(*(e.free_symbols for e in results))
            kept = []
            for sym, expr, tag in reversed(sub.assignments):     # the temps the kept rows need
                if sym in live:
                    kept.append((sym, expr, tag))
                    live |= expr.free_symbols
            segments.append({"start": start, "stop": stop, "rows_in": rows_in, "rows_out": rows_out,
                             "column": tuple(column[i] for i in rows_in), "assignments": kept[::-1],
                             "results": results})
        out = []
        for t, B in enumerate(blocks):
            X = np.empty(B.shape, dtype=object)
            for idx in np.ndindex(*B.shape):
                X[idx] = sp.Symbol(f"{name}_X{t}_{idx[0]}_{idx[1]}")
            out.append(X.view(SymArray))
        self.loops.append({"name": name, "segments": segments, "symmetric": symmetric,
                           "blocks": [np.asarray(B) for B in blocks], "placeholders": [np.asarray(X) for X in out]})
        return out

    def _bind_one(self, e, name, body):
        e = self.sp.sympify(e)
        if self._is_trivial(e):
            return e
        known = self._known.get(e)
        if known is not None:
            return known
        return self._record(name, e, body)
