"""Column loops (symgen/backend.py ``column_loop``, ``program.Loop``): the variants of M^-1 and of
the forward-dynamics derivatives whose dense part (the solves with M's factors, the dedicated
algorithm's passes over the identity's columns) is one loop over the columns, which the compiler
vectorizes, instead of scalar code unrolled column by column. On numbers and symbols, traced and
generated (NumPy and C, one state and a batch), each equals the numeric reference; the IR
refuses a loop's result used other than as a whole output.

Every failure message names the robot kind, size and seed of the random robot and state."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import sympy as sp

import support
from symgen import robots
from symgen import quantities as Q
from symgen.quantities import sweeps
from symgen.algorithms.aba import COLUMN_BLOCK
from symgen.backend import NUMERIC, SymbolicBackend
from symgen.codegen import program as P
from symgen.codegen import symbolic as S
from symgen.codegen.build import BuildOptions, build, import_package
from symgen.errors import BuildError

#: (quantity, sweep, variant of the registry that runs column loops)
DENSE = [("Minv", "mass_matrix_inverse", sweeps._minverse_dense), ("Minv", "mass_matrix_inverse", sweeps._minverse_aba_dense),
         ("dqdd", "fd_derivatives", sweeps._fd_derivatives_dense)]
ROBOTS = [("serial", 6, 1), ("tree", 7, 2), ("quadruped", 4, 5)]       # quadruped: a free-flyer


def _tol(robot, state):
    return Q.tolerance(Q.QUANTITIES["Minv"], Q.evaluate(robot, "M", state), 1e-9)


def _trace(robot, key, sweep, run):
    fns, _ = S._trace_sweep(robot, replace(Q.SWEEPS[sweep], run=run), (key,), S.input_symbols(robot),
                            Q.SweepOptions(), True, None)
    return S.optimize(fns[key])


@pytest.mark.parametrize("key,sweep,run", DENSE, ids=lambda x: getattr(x, "__name__", x))
@pytest.mark.parametrize("kind,n,seed", ROBOTS)
def test_loop_variants_on_numbers_and_symbols_equal_the_reference(key, sweep, run, kind, n, seed):
    robot = robots.make(kind, n, seed)
    s = Q.random_state(np.random.default_rng(seed), robot.nq, robot.nv)
    ctx = f"{key} {run.__name__} on {kind} n={n} seed={seed}"
    expected = Q.evaluate(robot, key, s)
    expected = expected if isinstance(expected, tuple) else (expected,)
    args = {a: robot.check_state(a, s[a]) for a in Q.SWEEPS[sweep].arguments}
    values = run(robot, args, NUMERIC, Q.SweepOptions())
    fn = _trace(robot, key, sweep, run)
    assert fn.loops, ctx
    got = P.evaluate(fn, s)
    for o, want, traced in zip(Q.QUANTITIES[key].outputs, expected, got):
        support.assert_agree(values[o.name], want, f"numeric {ctx} {o.name}", _tol(robot, s))
        support.assert_agree(traced, want, f"traced {ctx} {o.name}", _tol(robot, s))
    if key == "Minv":
        assert np.array_equal(got[0], got[0].T), f"{ctx}: not exactly symmetric"
    ops = P.count_ops(fn)
    assert 0 < ops["loop"] < ops["total"], (ctx, ops)


def test_blocked_loops_fold_the_identity_zeros_and_keep_the_upper_rows():
    """M^-1 over the identity in runs of COLUMN_BLOCK columns: a run reads only its own rows (where
    its columns of the identity are not zero) and writes the rows up to its last column."""
    robot, w = robots.make("serial", 10, 3), COLUMN_BLOCK
    fn = _trace(robot, "Minv", "mass_matrix_inverse", sweeps._minverse_aba_dense)
    spans = [(lp.start, lp.stop, lp.rows_in, lp.rows_out) for lp in fn.loops]
    assert spans == [(c, min(c + w, 10), tuple(range(c, min(c + w, 10))), tuple(range(min(c + w, 10))))
                     for c in range(0, 10, w)]
    assert [lp.symmetric for lp in fn.loops] == [False] * (len(spans) - 1) + [True]   # mirrored once, at the end
    # the straight-line code writes only the entries the loops read: the diagonal COLUMN_BLOCK-wide blocks
    written = {k for o, k, _ in P.output_entries(fn)}
    assert written == {i * 10 + c for lp in fn.loops for i in lp.rows_in for c in range(lp.start, lp.stop)}


def test_a_loop_result_used_other_than_as_a_whole_output_is_refused():
    x = sp.Symbol("x")
    bk = SymbolicBackend()
    B = np.array([[x, 1], [2, x]], dtype=object)
    (X,) = bk.column_loop(lambda b, sub: b * 2, [B], "col")
    fn = P.make_function("f", "", [P.Input("q", (x,))], bk.assignments, {"out": X}, bk.loops)
    assert fn.outputs[0].exprs == (x, 1, 2, x) and len(fn.loops) == 1
    assert P.evaluate(fn, {"q": [3.0]})[0].tolist() == [[6.0, 2.0], [4.0, 6.0]]
    with pytest.raises(BuildError, match="column loop"):
        P.make_function("f", "", [P.Input("q", (x,))], bk.assignments, {"out": X + 1}, bk.loops)


@pytest.fixture(scope="module")
def dense_package(tmp_path_factory):
    """A free-flyer quadruped's package with every dense variant forced (the build picks by cost:
    this makes sure both loop forms are printed and compiled here)."""
    robot = robots.make("quadruped", 4, 8)
    saved = dict(Q.SWEEPS)
    try:
        Q.SWEEPS["mass_matrix_inverse"] = replace(Q.SWEEPS["mass_matrix_inverse"], run=sweeps._minverse_aba_dense,
                                                  variants=())
        Q.SWEEPS["fd_derivatives"] = replace(Q.SWEEPS["fd_derivatives"], run=sweeps._fd_derivatives_dense, variants=())
        out = build(robot, tmp_path_factory.mktemp("dense"), opts=BuildOptions(quantities=("Minv", "dqdd"),
                                                                                copt="-O0"))
    finally:
        Q.SWEEPS.clear()
        Q.SWEEPS.update(saved)
    return robot, import_package(out.path)


@pytest.mark.parametrize("backend", ["c", "numpy"])
def test_generated_loops_match_the_reference_for_one_state_and_a_batch(dense_package, backend):
    robot, pkg = dense_package
    module = getattr(pkg, backend)
    assert module is not None, backend
    rng = np.random.default_rng(9)
    states = [Q.random_state(rng, robot.nq, robot.nv) for _ in range(3)]
    for key in ("Minv", "dqdd"):
        for t, s in enumerate(states):
            want = Q.flat(Q.evaluate(robot, key, s))
            support.assert_agree(Q.flat(Q.call(module, key, s)), want, f"{backend} {key} state {t}", _tol(robot, s))
            if key == "Minv":
                got = Q.call(module, key, s)
                assert np.array_equal(got, got.T), f"{backend} Minv not exactly symmetric"
        batch = {a: np.array([s[a] for s in states]) for a in states[0]}
        got = Q.flat(Q.call(module, key, batch), lead=1)
        for t, s in enumerate(states):
            support.assert_agree(got[t], Q.flat(Q.call(module, key, s)), f"{backend} {key} batch item {t}", 1e-12)
    if backend == "c":                      # _update twice: entries a loop overwrote are written again
        s = states[0]
        out = tuple(np.full((robot.nv, robot.nv), 7.0) for _ in range(2))
        pkg.c.forward_dynamics_derivatives(s["q"], s["qd"], s["tau"], out=out)
        support.assert_agree(Q.flat(out), Q.flat(Q.evaluate(robot, "dqdd", s)), "dqdd into out=", _tol(robot, s))
