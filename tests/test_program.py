"""The Program passes and the printers, each on a tiny hand-made Function (no robot involved).

A pass must keep every output's value: :func:`values` evaluates a Function at a point by running
its assignments in order, so the tests of a pass compare the values before and after; each test
also states the structural property it is about (what is removed, shared, ordered, numbered,
counted). The printers are checked by running what they print: Python text directly, C text as
Python too (the printed C expressions are in the common subset, with ``pow``/``sqrt`` bound),
plus the textual habits the generated code relies on (``x*x`` for small powers, double literals
in C, no ``+ -``).
"""
from __future__ import annotations

import math
import re

import numpy as np
import pytest
import sympy as sp

from symgen.codegen import program as P
from symgen.codegen.printers import CPrinter, PyPrinter
from symgen.errors import BuildError

q0, q1 = Q = sp.symbols("q0 q1")
a0, a1, a2, a3 = sp.symbols("a0 a1 a2 a3")
POINT = {q0: 0.7, q1: -1.3}


def function(assignments, *outputs, name="f"):
    """A Function of input ``q = (q0, q1)``; ``assignments`` are (temp, expr[, body]) triples and
    ``outputs`` (name, list of expressions) pairs, each a vector."""
    return P.Function(name, "a hand-made function", (P.Input("q", Q),),
                      tuple(P.Assignment(*a) for a in assignments),
                      tuple(P.Output(o, (len(es),), tuple(sp.sympify(e) for e in es)) for o, es in outputs))


def values(fn, point=POINT) -> dict:
    """``{output name: floats}`` at ``point``, running the assignments in order (a temp used
    before it is assigned is an error here, as in the generated code)."""
    env = {s: sp.Float(v) for s, v in point.items()}
    for a in fn.assignments:
        env[a.temp] = sp.Float(_number(a.expr, env))
    return {o.name: np.array([_number(e, env) for e in o.exprs]) for o in fn.outputs}


def _number(expr, env) -> float:
    value = sp.sympify(expr).xreplace(env)
    assert not value.free_symbols, f"{expr} uses {value.free_symbols} before they are assigned"
    return float(value)


def assert_same_values(before, after):
    want, got = values(before), values(after)
    assert list(got) == list(want)
    for name in want:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-14, atol=0, err_msg=name)


def temps(fn):
    return [a.temp for a in fn.assignments]


# ------------------------------------------------------------------------------ drop_dead

def test_drop_dead_removes_every_temp_no_output_reaches_and_keeps_the_order_of_the_rest():
    """Liveness is transitive both ways: a temp only a dead temp uses is dead too (a3 -> a2),
    a temp only a live temp uses is live (a0 -> a1 -> output)."""
    fn = function([(a0, q0 + 1), (a3, sp.sin(q1)), (a1, 2 * a0), (a2, a3 * q0)], ("M", [a1 * q1, q0]))
    kept = P.drop_dead(fn)
    assert temps(kept) == [a0, a1]
    assert_same_values(fn, kept)


def test_drop_dead_keeps_a_program_without_dead_temps_as_it_is():
    fn = function([(a0, q0 + 1, 3), (a1, a0 * q1, 4)], ("M", [a1]), ("N", [a0]))
    assert P.drop_dead(fn) == fn


# ------------------------------------------------------------------------------ share_outputs

def test_share_outputs_computes_an_expression_that_fills_several_entries_once():
    """M_01 = M_10 (and one entry of another output): one new temp, assigned after the existing
    ones, every entry refers to it; the values do not change."""
    off = a0 * q1 + q0
    fn = function([(a0, sp.cos(q0))], ("M", [a0, off, off, q1 * q1]), ("N", [off]))
    shared = P.share_outputs(fn)
    (new,) = shared.assignments[1:]
    assert temps(shared)[:1] == [a0] and new.expr == off and new.body is None
    assert shared.outputs[0].exprs == (a0, new.temp, new.temp, q1 * q1)
    assert shared.outputs[1].exprs == (new.temp,)
    assert new.temp not in temps(fn) + list(Q)
    assert_same_values(fn, shared)


def test_share_outputs_leaves_numbers_symbols_and_single_entries_inline():
    """Structural zeros stay literal zeros (the printers skip them), a repeated symbol or number
    needs no temp, and an expression used once is not worth one."""
    fn = function([(a0, sp.sin(q0))], ("M", [0, 0, a0, a0, q1, q1, 2, 2, q0 * q1]))
    assert P.share_outputs(fn) == fn


# ------------------------------------------------------------------------------ cse

def _cse_example():
    """a1 and a2 share q0 sin(q1) and q1 + q0 sin(q1) (the second built on the first); the
    outputs share cos(q0 q1), which no assignment uses. a0, x0 and x1 use none of it; x0 and x1
    are named like cse's own temps, and no expression mentions x1 (sympy's cse would take it)."""
    s = q0 * sp.sin(q1)
    u = s + q1
    x0, x1 = sp.symbols("x0 x1")
    fn = function([(a0, q0 + 1, 0), (x0, 2 * q1, 0), (x1, q0 - q1, 0), (a1, u * a0 + sp.cos(u) + s * a0**2, 1),
                   (a2, u**2 * a1 * x0 * s, 2)],
                  ("M", [a2 * sp.cos(q0 * q1), a1 + sp.cos(q0 * q1)]))
    return fn, P.cse(fn)


def test_cse_keeps_the_values_and_computes_each_common_subexpression_once():
    fn, reduced = _cse_example()
    assert_same_values(fn, reduced)
    text = [str(a.expr) for a in reduced.assignments] + [str(e) for e in reduced.outputs[0].exprs]
    for common in ("sin(q1)", "cos(q0*q1)"):
        assert sum(t.count(common) for t in text) == 1, (common, text)
    assert P.count_ops(reduced)["total"] < P.count_ops(fn)["total"]


def test_cse_places_each_new_temp_after_its_dependencies_and_just_before_its_first_user():
    """Dependencies first: every temp is assigned before any use (check_closed), the original
    assignments keep their order, and a new temp comes right before the first original
    assignment that needs it, not at the top (a0, x0 and x1 use none); temps only the outputs
    use come last. New temps never reuse an existing temp's name."""
    fn, reduced = _cse_example()
    reduced.check_closed()
    order = temps(reduced)
    new = [t for t in order if t not in temps(fn)]
    assert len(new) == 3 and len(set(order)) == len(order), order        # no clash with x0, x1
    defs = {a.temp: a.expr for a in reduced.assignments}
    assert new[0] in defs[new[1]].free_symbols, "the example no longer has a temp built on another"
    assert order == [*temps(fn)[:3], new[0], new[1], a1, a2, new[2]]


def test_cse_tags_a_new_temp_with_the_body_of_the_assignment_that_first_needs_it():
    """The body tags name the joint a line works on (comments of the generated code): original
    assignments keep theirs, a new temp takes its first user's, an output-only temp has none."""
    fn, reduced = _cse_example()
    bodies = {a.temp: a.body for a in reduced.assignments}
    assert [bodies[a.temp] for a in fn.assignments] == [a.body for a in fn.assignments]
    assert [a.body for a in reduced.assignments if a.temp not in temps(fn)] == [1, 1, None]


# ------------------------------------------------------------------------------ partition

def _chain(n_temps: int, used_late=()):
    """t0 = q0 + 1, t_k = t_{k-1} * q1 + k; one output vector [t_last, *used_late, 0]."""
    ts = sp.symbols(f"t0:{n_temps}")
    assignments = [(ts[0], q0 + 1)] + [(ts[k], ts[k - 1] * q1 + k) for k in range(1, n_temps)]
    return function(assignments, ("M", [ts[-1], *(ts[k] for k in used_late), 0])), ts


def test_partition_keeps_a_function_at_or_below_the_threshold_whole():
    fn, _ = _chain(4)                                   # 4 temps + 1 nonzero entry = 5 statements
    for size, above in ((5, None), (2, 5), (2, 100)):
        parts, slots = P.partition(fn, size, above)
        assert parts == (P.Part(fn.assignments, tuple(P.output_entries(fn))),) and slots == {}, (size, above)
    assert len(P.partition(fn, 4)[0]) == len(P.partition(fn, 2, 4)[0]) - 1 == 2


def test_partition_cuts_the_statements_in_program_order_into_parts_of_at_most_size():
    """Temps first, then the nonzero output entries; nothing lost, duplicated or reordered."""
    fn, _ = _chain(7, used_late=(2,))
    parts, _ = P.partition(fn, 3)
    assert [len(p.assignments) + len(p.entries) for p in parts] == [3, 3, 3]
    assert tuple(a for p in parts for a in p.assignments) == fn.assignments
    assert tuple(e for p in parts for e in p.entries) == tuple((0, k, e) for k, e in fn.outputs[0].nonzero())
    assert [k for p in parts for _, k, _ in p.entries] == [0, 1]       # entry 2 is a structural zero


def test_partition_gives_work_array_slots_only_to_temps_used_outside_their_part_in_assignment_order():
    """Parts of 3: [t0 t1 t2] [t3 t4 t5] [M0 = t5, M1 = t1 + t2]. t1, t2 and t5 cross a part
    boundary, t0, t3 and t4 do not; t5 is met first, t1 and t2 in one expression (set order),
    yet the slots follow the assignment order, so the layout does not depend on either."""
    t = sp.symbols("t0:6")
    fn = function([(t[0], q0 + 1), (t[1], 2 * q1), (t[2], t[0] * t[1]),
                   (t[3], q0 * q1), (t[4], t[3] + 1), (t[5], t[4] * q0)],
                  ("M", [t[5], t[1] + t[2]]))
    parts, slots = P.partition(fn, 3)
    assert [[a.temp for a in p.assignments] for p in parts] == [list(t[:3]), list(t[3:]), []]
    assert slots == {t[1]: 0, t[2]: 1, t[5]: 2}


# ------------------------------------------------------------------------------ count_ops

@pytest.mark.parametrize("expr, add, mul, trig", [
    (q0 + q1 + 1, 2, 0, 0),
    (q0 - q1, 1, 0, 0),                                 # a subtraction is an add
    (q0 * q1 * a0, 0, 2, 0),
    (-q0 * q1, 0, 1, 0),                                # a sign costs nothing
    (q0**3, 0, 2, 0),                                   # q0*q0*q0
    (q0**-2, 0, 2, 0),                                  # 1.0/(q0*q0)
    (1 / q0, 0, 1, 0),
    (sp.sin(q0) * sp.cos(q1) + 1, 1, 1, 2),
    (sp.sin(q0 + q1), 1, 0, 1),
], ids=str)
def test_count_ops_counts_adds_muls_and_trig_calls_of_one_expression(expr, add, mul, trig):
    fn = function([], ("M", [expr]))
    assert P.count_ops(fn) == {"add": add, "mul": mul, "trig": trig, "total": add + mul + trig}


def test_count_ops_sums_over_assignments_and_outputs():
    fn = function([(a0, sp.sin(q0) + q1)], ("M", [a0 * q1, a0 - 1]), ("N", [q0 * q1]))
    assert P.count_ops(fn) == {"add": 2, "mul": 2, "trig": 1, "total": 5}


# ------------------------------------------------------------------------------ check_closed

def test_check_closed_accepts_inputs_and_temps_assigned_earlier():
    fn = function([(a0, q0 + 1), (a1, a0 * q1)], ("M", [a1 + a0, q1]))
    assert fn.check_closed() is fn


@pytest.mark.parametrize("assignments, exprs, where", [
    ([(a0, q0 + sp.Symbol("qd0"))], [a0], "a0 uses undeclared symbols ['qd0']"),
    ([(a0, a1 + 1), (a1, q0)], [a0], "a0 uses undeclared symbols ['a1']"),          # used before assigned
    ([(a0, q0)], [a0 * sp.Symbol("stray")], "output M uses undeclared symbols ['stray']"),
], ids=["unknown-input", "temp-before-assignment", "in-an-output"])
def test_check_closed_fails_loudly_naming_an_undeclared_symbol(assignments, exprs, where):
    with pytest.raises(BuildError, match=re.escape(f"function f: {where}")):
        function(assignments, ("M", exprs)).check_closed()


def test_make_function_flattens_output_arrays_row_major():
    M = np.array([[q0, q1], [a0, 0]], dtype=object)
    fn = P.make_function("f", "doc", [P.Input("q", Q)], [(a0, q0 * q1, 1)], {"M": M})
    assert fn.outputs == (P.Output("M", (2, 2), (q0, q1, a0, sp.Integer(0))),)
    assert fn.assignments == (P.Assignment(a0, q0 * q1, 1),)
    assert fn.outputs[0].nonzero() == [(0, q0), (1, q1), (2, a0)]


# ------------------------------------------------------------------------------ printers

C = CPrinter({q0: "q[0]", q1: "q[1]"})
PY = PyPrinter()
X = {"q": [POINT[q0], POINT[q1]], "q0": POINT[q0], "q1": POINT[q1], "pow": math.pow, "sqrt": math.sqrt,
     "sin": math.sin, "cos": math.cos}


def _run(text: str) -> float:
    return float(eval(text, {"__builtins__": {}}, X))


PRINTED = [
    q0**2, q0**3, q0**4, q0**-2, q0**-1, q0**5, (q0 + q1)**2, (q0 - q1)**-3, sp.sqrt(q0 * q0),
    sp.Rational(1, 3) * q0, sp.Rational(-3, 4), sp.Rational(5, 2) * q1**2,
    q0 - q1, -q0 + q1, q0 - 2 * q1, q1 - sp.Rational(1, 3) * q0, -q0 - q1 - 1, q0 * q1 / (q0 - 3 * q1),
    sp.sin(q0)**2 - sp.cos(q1)**2, sp.Float(0.1) * q0 - sp.Float(1 / 3),
    -2 * q0 * q1, -q0 / q1, sp.Rational(-1, 3) * q0 * q1, -sp.sin(q0) / (q1 * q1 + 1),
]


@pytest.mark.parametrize("expr", PRINTED, ids=str)
@pytest.mark.parametrize("printer", [C, PY], ids=["C", "numpy"])
def test_printed_expression_computes_the_expressions_value(printer, expr):
    """What both printers emit, run, gives SymPy's value: precedence, powers, signs, rationals."""
    text = printer.doprint(expr)
    expected = float(expr.xreplace({s: sp.Float(v) for s, v in POINT.items()}))
    assert _run(text) == pytest.approx(expected, rel=1e-14, abs=0), text


@pytest.mark.parametrize("expr, c, py", [
    (q0**2, "q[0]*q[0]", "q0*q0"),
    (q0**4, "q[0]*q[0]*q[0]*q[0]", "q0*q0*q0*q0"),
    (q0**-2, "1.0/(q[0]*q[0])", "1.0/(q0*q0)"),
    (q0**-1, "1.0/q[0]", "1.0/q0"),
    ((q0 + q1)**2, "(q[0] + q[1])*(q[0] + q[1])", "(q0 + q1)*(q0 + q1)"),
], ids=str)
def test_small_integer_powers_print_as_products(expr, c, py):
    """|exponent| 2..4 as repeated products (no pow call), a negative one as 1.0/(...)."""
    assert (C.doprint(expr), PY.doprint(expr)) == (c, py)


def test_large_powers_are_left_to_pow():
    assert "pow(q[0], 5" in C.doprint(q0**5) and "q0**5" == PY.doprint(q0**5)


@pytest.mark.parametrize("x", [0.1, 1 / 3, 2 / 3, 1 + 2**-52, 1e-300, 6.02214076e23, -2.5e-7, math.pi, 5e-324],
                         ids=repr)
@pytest.mark.parametrize("printer", [C, PY], ids=["C", "numpy"])
def test_floats_print_with_round_trip_precision(printer, x):
    assert float(printer.doprint(sp.Float(x))) == x


@pytest.mark.parametrize("expr", [sp.Rational(1, 3), sp.Rational(-2, 7) * q0, sp.Rational(1, 2) * q1, 3 * q0,
                                  q0 / 3, sp.Integer(-4)], ids=str)
def test_c_prints_every_number_as_a_double_literal(expr):
    """No integer division in C: 1/3 would be 0."""
    numbers = re.findall(r"(?<![\w\[.])\d+(?:\.\d*)?(?:e[-+]?\d+)?(?![\w\]])", C.doprint(expr))
    assert numbers and all("." in n or "e" in n for n in numbers), C.doprint(expr)


@pytest.mark.parametrize("expr", [q0 - q1, -q0 + q1, q0 - 2 * q1, -q0 - q1, q1 - sp.Rational(1, 3) * q0,
                                  sp.Float(0.5) - q0 * q1], ids=str)
@pytest.mark.parametrize("printer", [C, PY], ids=["C", "numpy"])
def test_a_negative_term_in_a_sum_prints_as_a_subtraction(printer, expr):
    text = printer.doprint(expr)
    assert "+ -" not in text and "+-" not in text and " - " in text, text


def test_output_entries_lists_every_output_in_order_with_its_number():
    """A function with several outputs (a fused call, a derivative pair) prints each output's
    nonzero entries, output by output, each tagged with the output it belongs to."""
    q0, q1 = sp.symbols("q0 q1")
    fn = P.make_function("f", "", [P.Input("q", (q0, q1))], [], {"A": np.array([q0, 0]), "B": np.array([[0, q1]])})
    assert P.output_entries(fn) == [(0, 0, q0), (1, 1, q1)]
    parts, _ = P.partition(fn, 1, 0)
    assert [e for p in parts for e in p.entries] == [(0, 0, q0), (1, 1, q1)]
