"""SymPy printers for the generated C and NumPy code. No post-processing of printed text.

Inputs print as ``q[3]`` (C) or as the local ``q3`` (Python, unpacked once); temps print as
their names, which symgen made (every temp name holds a digit, so none can clash with a keyword,
a parameter or a helper of the generated code); floats print with round-trip precision; small
integer powers print as products.
"""
from __future__ import annotations

import sympy as sp
from sympy.printing.c import C99CodePrinter
from sympy.printing.pycode import PythonCodePrinter


class _Common:
    def _print_Float(self, expr):
        return repr(float(expr))

    def _print_Rational(self, expr):
        return repr(expr.p / expr.q) if expr.q in (2, 4, 8) else f"({float(expr.p)!r}/{float(expr.q)!r})"

    def _print_Pow(self, expr, rational=False):
        base, exp = expr.base, expr.exp
        if exp.is_Integer and 1 < abs(int(exp)) <= 4:
            b = self.parenthesize(base, sp.printing.precedence.PRECEDENCE["Mul"] + 1)
            prod = "*".join([b] * abs(int(exp)))
            return prod if exp > 0 else f"1.0/({prod})"
        if exp == -1:
            return f"1.0/{self.parenthesize(base, sp.printing.precedence.PRECEDENCE['Mul'] + 1)}"
        return super()._print_Pow(expr)


class CPrinter(_Common, C99CodePrinter):
    """C99; ``inputs`` maps each input symbol to its C lvalue (``q[3]``)."""

    def __init__(self, inputs: dict):
        super().__init__({"strict": False})
        self._inputs = inputs

    def _print_Symbol(self, expr):
        return self._inputs.get(expr) or expr.name

    def _print_Integer(self, expr):
        return f"{int(expr)}.0" if abs(int(expr)) < 2**53 else repr(float(expr))


class PyPrinter(_Common, PythonCodePrinter):
    """Python over NumPy or math: ``sin``/``cos`` are locals of the generated function, bound to
    ``math`` for one state and to ``numpy`` for a batch."""

    def __init__(self):
        super().__init__({"strict": False, "fully_qualified_modules": False})

    def _print_Symbol(self, expr):
        return expr.name

    def _print_sin(self, expr):
        return f"sin({self._print(expr.args[0])})"

    def _print_cos(self, expr):
        return f"cos({self._print(expr.args[0])})"
