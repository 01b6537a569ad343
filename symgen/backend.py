"""Backends: what an algorithm needs to run on numbers or on symbols.

An algorithm receives a backend ``bk`` and uses only ``bk.zeros``, ``bk.sin``, ``bk.cos``,
``bk.const``, ``bk.half`` and ``bk.bind`` besides array arithmetic. Arrays are NumPy in both modes:
float64 for numbers, ``dtype=object`` holding SymPy expressions for symbols. No algorithm checks
which backend it has.

``bind(array, name)`` is the SymPyBotics hook: the numeric backend returns the array untouched;
the symbolic one replaces every compound entry by a fresh symbol and records ``symbol = entry``,
so expressions stay small and the run's record is already straight-line code.
"""
from __future__ import annotations

import math

import numpy as np


class NumericBackend:
    """float64 arrays; ``bind`` is the identity."""

    name = "numeric"
    half = 0.5

    def zeros(self, shape):
        return np.zeros(shape)

    def const(self, value):
        return np.array(value, dtype=float)

    def sin(self, x):
        return math.sin(x)

    def cos(self, x):
        return math.cos(x)

    def bind(self, value, name):
        return value


NUMERIC = NumericBackend()


class SymbolicBackend:
    """SymPy objects in ``dtype=object`` arrays, with named intermediates.

    ``assignments`` is the ordered record ``[(symbol, expression), ...]`` of every ``bind`` (and of
    each ``sin``/``cos``, computed once per distinct argument). ``const`` turns float constants into
    exact integers or halves where they are exactly so (structural zeros then vanish during the
    run) and into ``Float`` otherwise.
    """

    name = "symbolic"

    def __init__(self, prefix: str = ""):
        import sympy

        self.sp = sympy
        self.half = sympy.Rational(1, 2)
        self.prefix = prefix
        self.assignments: list = []
        self._trig: dict = {}
        self._counts: dict[str, int] = {}

    # -- construction
    def zeros(self, shape):
        return np.full(shape, self.sp.S.Zero, dtype=object)

    def const(self, value):
        arr = np.asarray(value, dtype=float)
        out = np.empty(arr.shape, dtype=object)
        for idx, x in np.ndenumerate(arr):
            out[idx] = self.number(float(x))
        return out

    def number(self, x: float):
        sp = self.sp
        if x == int(x) and abs(x) < 2**53:
            return sp.Integer(int(x))
        if 2 * x == int(2 * x):
            return sp.Rational(int(2 * x), 2)
        return sp.Float(x, 17)

    # -- elementary functions, each computed once per argument
    def _trig_of(self, fn, tag, x):
        key = (tag, x)
        if key not in self._trig:
            sym = self._new_symbol(f"{tag}_{x}")
            self.assignments.append((sym, fn(x)))
            self._trig[key] = sym
        return self._trig[key]

    def sin(self, x):
        return self._trig_of(self.sp.sin, "s", x)

    def cos(self, x):
        return self._trig_of(self.sp.cos, "c", x)

    # -- naming of intermediates
    def _new_symbol(self, name: str):
        n = self._counts.get(name, 0)
        self._counts[name] = n + 1
        full = f"{self.prefix}{name}" if n == 0 else f"{self.prefix}{name}_{n}"
        return self.sp.Symbol(full, real=True)

    def _is_trivial(self, e) -> bool:
        # atoms, and a number times an atom, are cheaper to repeat than to name
        if e.is_Atom:
            return True
        if e.is_Mul and len(e.args) == 2 and e.args[0].is_Number and e.args[1].is_Atom:
            return True
        return False

    def bind(self, value, name):
        if not isinstance(value, np.ndarray):
            return self._bind_one(value, name)
        out = np.empty(value.shape, dtype=object)
        for idx, e in np.ndenumerate(value):
            suffix = "_".join(str(i) for i in idx)
            out[idx] = self._bind_one(e, f"{name}_{suffix}" if suffix else name)
        return out

    def _bind_one(self, e, name):
        e = self.sp.sympify(e)
        if self._is_trivial(e):
            return e
        sym = self._new_symbol(name)
        self.assignments.append((sym, e))
        return sym
