"""The C scalar of a package (``symgen build --scalar``): double (the default) or float.

A float package is the same straight-line program printed in single precision: the header's
``NAME_real`` is ``float``, every literal carries an ``f`` suffix and every math call is its
float form (``sinf``, ``cosf``, ``sqrtf``), so no operation is done in double (on a Cortex-M4F's
single-precision FPU, none goes to the software double helpers ``__aeabi_d*``). Its batches
compute one state at a time (``NAME_LANES`` is 1: the lanes' vector sin and cos are double
polynomials). A double package's C is printed exactly as before the option existed.

The Python binding of a float package takes and returns float64 arrays as a double one does:
the inputs are rounded to float32 on the way in, the float results widened on the way out.
``symgen verify`` compares it at :func:`tolerance` (:data:`FLOAT_TOL`, or cond(M) times
:data:`FLOAT_COND` eps32 for the solved quantities).
"""
from __future__ import annotations

import numpy as np
from sympy.codegen.ast import float32, real

from ..errors import OptionError
from .printers import CPrinter

SCALARS = ("double", "float")

#: the float C against the double NumPy module (relative to max(1, |NumPy's|)), a quantity that
#: does not inherit cond(M). Measured, worst over 200 random states (docs/guide/c.md has the table):
#: 5.3e-6 (arm4 on a free-flyer, mass_matrix_dot), panda 2.7e-6, solo12 4.1e-6; 1e-4 leaves 19x
FLOAT_TOL = 1e-4
#: ... and one that does (forward dynamics, M^-1 and their derivatives): this many eps32 times
#: cond(M), when larger. Measured, the worst error over eps32 cond(M): panda 1.5
#: (forward_dynamics_derivatives), solo12 0.009, arm4 on a free-flyer 0.023; 10 leaves 6.7x
FLOAT_COND = 10


def check_scalar(scalar, targets=(), contacts=(), loops=False) -> None:
    """An OptionError naming ``--scalar`` when ``scalar`` is not one of :data:`SCALARS`, or when a
    float build asks for what has no float C yet: the CasADi and JAX targets (CasADi's and XLA's
    interfaces are double), the contact functions' solves (--contacts) and the loop solve of URDF+
    loops."""
    if scalar not in SCALARS:
        raise OptionError(f"--scalar: unknown {scalar!r}; expected double or float")
    if scalar == "double":
        return
    other = [t for t in targets if t in ("casadi", "jax")]
    if other:
        raise OptionError(f"--scalar float: the {' and '.join(other)} target{'s' if len(other) > 1 else ''} "
                          f"call the C in double; build them without --scalar float")
    if contacts:
        raise OptionError("--scalar float: the contact solves (--contacts) have no float C yet")
    if loops:
        raise OptionError("--scalar float: the loop solve of URDF+ couplings and loops has no float C yet")


class FloatCPrinter(CPrinter):
    """:class:`~.printers.CPrinter` in single precision: ``0.5f``, ``2.0f``, ``(1.0f/3.0f)``,
    ``sinf``, ``cosf``, ``sqrtf`` (SymPy's C99 printer picks the float math functions by the
    ``real`` type alias)."""

    def __init__(self, inputs: dict):
        super().__init__(inputs)
        self._settings["type_aliases"] = {**self._settings.get("type_aliases", {}), real: float32}
        self.type_aliases = {**self.type_aliases, real: float32}

    def _print_Float(self, expr):
        return literal(float(expr))

    def _print_Integer(self, expr):
        return super()._print_Integer(expr) + "f"

    def _print_Rational(self, expr):
        if expr.q in (2, 4, 8):
            return repr(expr.p / expr.q) + "f"
        return f"({float(expr.p)!r}f/{float(expr.q)!r}f)"

    def _print_Pow(self, expr, rational=False):
        text = super()._print_Pow(expr, rational)
        return "1.0f/" + text[4:] if text.startswith("1.0/") else text


def literal(x) -> str:
    """``x`` as a C float literal: the shortest digits that give its float32 (``0.1f``, ``2.0f``, ``1e-05f``)."""
    text = str(np.float32(float(x) + 0.0))
    return text + ("f" if any(c in text for c in ".e") else ".0f")


def printer(scalar: str):
    """The C printer class of a package of ``scalar``."""
    return FloatCPrinter if scalar == "float" else CPrinter


def template_context(scalar: str, prefix: str, values: dict) -> dict:
    """What the C templates print for the scalar: ``scalar``; ``real``, the C type of every
    array (``double``, or the header's ``NAME_real``); ``fs``, the suffix of a literal and of a
    math function (``""`` or ``"f"``); ``np_dtype``, the binding's array type; and ``c_values``,
    per list of ``values`` (name -> floats: the package's data) its C initializer in the scalar."""
    fs = "f" if scalar == "float" else ""
    return {"scalar": scalar, "real": f"{prefix.upper()}_real" if fs else "double", "fs": fs,
            "np_dtype": "float32" if fs else "float64",
            "c_values": {key: ", ".join(literal(x) if fs else repr(float(x) + 0.0) for x in xs) for key, xs in values.items()}}


def tolerance(x, M, base: float) -> float:
    """The tolerance of a float package's C for quantity ``x`` at mass matrix ``M`` (see
    :data:`FLOAT_TOL`); ``base``: the double one it replaces, kept when larger."""
    tol = max(base, FLOAT_TOL)
    if x.conditioned and M is not None:
        tol = max(tol, FLOAT_COND * float(np.finfo(np.float32).eps) * float(np.linalg.cond(M)))
    return tol
