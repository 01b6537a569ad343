"""SymPy printers for the generated C and NumPy code. No post-processing of printed text.

Inputs print as ``q[3]`` (C) or as the local ``q3`` (Python, unpacked once); temps print as
their names, which symgen made (every temp name holds a digit, so none can clash with a keyword,
a parameter or a support function of the generated code); floats print with round-trip precision; small
integer powers print as products.
"""
from __future__ import annotations

import sympy as sp
from sympy.printing.c import C99CodePrinter
from sympy.printing.pycode import PythonCodePrinter


_PREC_MUL = sp.printing.precedence.PRECEDENCE["Mul"]
_PREC_ADD = sp.printing.precedence.PRECEDENCE["Add"]


def _negative(term) -> bool:
    return (term.is_Number and term < 0) or (term.is_Mul and term.args[0].is_Number and term.args[0] < 0)


class _Common:
    """Add and Mul print straight from their stored (canonical, hash-independent) argument
    order: SymPy's own printers re-sort every sum and rebuild every product, which made
    printing the slowest stage of a build."""

    def _print_Add(self, expr, order=None):
        out = []
        for t in expr.args:
            text = self._print(t)
            if not out:
                out.append(text)
            elif _negative(t):
                out.append(" - " + (text[1:] if text.startswith("-") else self._print(-t)))
            else:
                out.append(" + " + text)
        return "".join(out)

    def _print_Mul(self, expr):
        coeff, factors = expr.as_coeff_mul()
        num, den = [], []
        for f in factors:
            if f.is_Pow and f.exp.is_Integer and f.exp < 0:
                den.append(f.base if f.exp == -1 else sp.Pow(f.base, -f.exp, evaluate=False))
            else:
                num.append(f)
        sign = ""
        if coeff < 0:
            sign, coeff = "-", -coeff
        parts = [self.parenthesize(f, _PREC_MUL) for f in num]
        if coeff != 1 or not parts:
            parts.insert(0, self._print(coeff))
        text = "*".join(parts)
        if den:
            d = [self._print(f) if f.is_Atom else f"({self._print(f)})" for f in den]
            text += "/" + (d[0] if len(d) == 1 else "(" + "*".join(d) + ")")
        return sign + text

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
