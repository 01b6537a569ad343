"""The articulated-body algorithm and the M^-1 dedicated algorithm (symgen/algorithms/aba.py):
on numbers and on symbols, in both frames, equal to the L^T D L route and to Pinocchio's ``aba``
and ``computeMinverse`` on random trees; and the forward-dynamics and M^-1 sweeps print, per
robot, the variant of lowest cost, whose generated code still computes the right values.

Every failure message names the robot kind, size and seed of the random robot and state."""
from __future__ import annotations

import importlib
from pathlib import Path

import numpy as np
import pytest
import sympy as sp

import support
from symgen import load_urdf, robots
from symgen import quantities as Q
from symgen.quantities import sweeps
from symgen.backend import NUMERIC, SymbolicBackend
from symgen.codegen import program as P
from symgen.codegen import symbolic as S

A = importlib.import_module("symgen.algorithms.aba")
FD = importlib.import_module("symgen.algorithms.forward_dynamics")

#: random robots: (kind, bodies, seed); biped and quadruped have six 1-DoF floating-base joints
TREES = [("serial", 1, 6), ("serial", 6, 1), ("tree", 7, 2), ("planar", 5, 3), ("biped", 3, 4), ("quadruped", 4, 5),
         ("serial", 9, 11), ("tree", 11, 12)]
ARM4 = Path(__file__).resolve().parent.parent / "symgen" / "examples" / "arm4.urdf"


def _state(robot, seed):
    return Q.random_state(np.random.default_rng(seed), robot.nq, robot.nv)


def _tol(robot, q):
    """1e-9, or 100 eps cond(M) where that is larger (a solve with M: Q.tolerance)."""
    return Q.tolerance(Q.QUANTITIES["qdd"], FD.crba(robot, q, NUMERIC))


def _routes(robot, s, bk):
    """{route: qdd} and {route: Minv} on backend ``bk``."""
    qdd = {"aba body": A.aba(robot, s["q"], s["qd"], s["tau"], bk),
           "aba ground": A.aba_ground(robot, s["q"], s["qd"], s["tau"], bk)}
    minv = {"minverse ground": A.minverse_ground(robot, s["q"], bk),
            "minverse loops": A.minverse_dense(robot, s["q"], bk)}   # its passes look a body ahead
    return qdd, minv


@pytest.mark.parametrize("kind,n,seed", TREES)
def test_aba_and_minverse_on_numbers_equal_the_ltdl_route(kind, n, seed):
    robot = robots.make(kind, n, seed)
    for t in range(3):
        s = _state(robot, 100 * seed + t)
        ctx = f"{kind} n={n} seed={seed} state seed={100 * seed + t}"
        tol = _tol(robot, s["q"])
        qdd, minv = _routes(robot, s, NUMERIC)
        for frame in Q.FRAMES:
            ref = FD.forward_dynamics(robot, s["q"], s["qd"], s["tau"], NUMERIC, frame)
            ref_inv = FD.mass_matrix_inverse(robot, s["q"], NUMERIC, frame)
            for route, value in qdd.items():
                support.assert_agree(value, ref, f"qdd {route} vs L^T D L ({frame}) [{ctx}]", tol)
            for route, value in minv.items():
                support.assert_agree(value, ref_inv, f"Minv {route} vs L^T D L ({frame}) [{ctx}]", tol)
                assert np.array_equal(value, value.T), f"Minv {route} not exactly symmetric [{ctx}]"


@pytest.mark.parametrize("kind,n,seed", TREES[:5])
def test_aba_and_minverse_equal_pinocchio(kind, n, seed):
    robot = robots.make(kind, n, seed)
    oracle = support.PinOracle(robot, support.pin_model_from_robot(robot))
    for t in range(3):
        s = _state(robot, 200 * seed + t)
        ctx = f"{kind} n={n} seed={seed} state seed={200 * seed + t}"
        rtol = Q.tolerance(Q.QUANTITIES["qdd"], oracle.mass_matrix(s["q"]))
        qdd, minv = _routes(robot, s, NUMERIC)
        expected = oracle.forward_dynamics(s["q"], s["qd"], s["tau"])
        for route, value in qdd.items():
            support.assert_close(value, expected, f"qdd {route} vs aba", ctx, rtol=rtol)
        expected = oracle.mass_matrix_inverse(s["q"])
        for route, value in minv.items():
            support.assert_close(value, expected, f"Minv {route} vs computeMinverse", ctx, rtol=rtol)


def _evaluate(fn, values: dict) -> np.ndarray:
    """The first output of a traced Function at ``values`` ({input name: vector}), running its
    straight-line assignments (and column loops) in order on floats."""
    return P.evaluate(fn, values)[0]


def _trace(robot, run, arguments, output):
    bk = SymbolicBackend()
    syms = S.input_symbols(robot)
    value = run(robot, *(np.array(syms[a], dtype=object) for a in arguments), bk)
    fn = P.make_function("f", "", [P.Input(a, syms[a]) for a in arguments], bk.assignments, {output: value})
    return S.optimize(fn)


@pytest.mark.parametrize("kind,n,seed", [("tree", 5, 21), ("quadruped", 4, 22)])
def test_aba_and_minverse_on_symbols_compute_what_they_compute_on_numbers(kind, n, seed):
    """The symbolic run (what a build prints) evaluated at a state equals the numeric run; one
    division per body whose pivot is not a constant, as in the L^T D L route (and with a
    free-flyer one for the quaternion's 2/|quat|^2, in the gravity of forward dynamics)."""
    robot = robots.make(kind, n, seed)
    s = _state(robot, seed)
    ctx = f"{kind} n={n} seed={seed}"
    tol = _tol(robot, s["q"])
    qdd, minv = _routes(robot, s, NUMERIC)
    for route, run in (("aba body", A.aba), ("aba ground", A.aba_ground)):
        fn = _trace(robot, run, ("q", "qd", "tau"), "qdd")
        support.assert_agree(_evaluate(fn, s), qdd[route], f"symbolic {route} [{ctx}]", tol)
        assert P.count_divisions(fn) <= robot.n + robot.floating_base, f"{route}: {P.count_divisions(fn)} divisions [{ctx}]"
    fn = _trace(robot, A.minverse_ground, ("q",), "Minv")
    support.assert_agree(_evaluate(fn, s), minv["minverse ground"], f"symbolic minverse ground [{ctx}]", tol)
    assert P.count_divisions(fn) == robot.n, f"minverse ground: {P.count_divisions(fn)} divisions [{ctx}]"


def test_count_divisions_and_cost_weigh_a_division():
    x, y, z = sp.symbols("x y z")
    fn = P.Function("f", "", (P.Input("q", (x, y, z)),), (P.Assignment(sp.Symbol("t"), 1 / (x + y)),),
                    (P.Output("o", (2,), (sp.Symbol("t") * z, x / z)),))
    assert P.count_divisions(fn) == 2
    assert P.cost(fn) == P.count_ops(fn)["total"] + 2 * (P.DIVISION_COST - 1)


def _candidates(robot, key):
    """{variant index: cost} of every route of ``key``'s sweep (0: the run) that a build traces on
    ``robot`` (a variant's ``applies`` says which)."""
    from dataclasses import replace

    sweep = Q.SWEEPS[Q.QUANTITIES[key].sweep]
    costs = {}
    for k, run in enumerate((sweep.run,) + sweep.variants):
        if not getattr(run, "applies", lambda r: True)(robot):
            continue
        fn = S._trace_sweep(robot, replace(sweep, run=run), (key,), S.input_symbols(robot),
                            Q.SweepOptions(), True, None)[0][key]
        costs[k] = P.cost(S.optimize(fn))
    return costs


@pytest.mark.parametrize("key", ["qdd", "Minv"])
def test_the_build_prints_the_cheapest_route_per_robot_and_it_computes_the_right_values(key):
    """On a 4-joint arm a body-frame (or local-convention) route wins, on a 14-DoF chain the ground-coordinate ABA (or
    M^-1 by a solve over the identity's columns in column loops): the printed function is the cheapest of the candidates, and
    its values at a random state are the numeric reference's (seeds printed)."""
    arm4, chain = load_urdf(ARM4), robots.make("serial", 14, 7)
    sweep = Q.SWEEPS[Q.QUANTITIES[key].sweep]
    chosen = {}
    for robot, seed in ((arm4, 31), (chain, 32)):
        costs = _candidates(robot, key)
        printed = S.program_for(robot, key)
        assert P.cost(printed) == min(costs.values()), (robot.name, key, costs, P.cost(printed))
        chosen[robot.name] = min(costs, key=costs.get)
        s = _state(robot, seed)
        got = _evaluate(printed, s)
        expected = Q.evaluate(robot, key, s)
        support.assert_agree(got, expected, f"printed {key} on {robot.name} (state seed {seed})", _tol(robot, s["q"]))
    runs = (sweep.run,) + sweep.variants
    name = {sweeps._forward_dynamics: "ltdl", sweeps._aba_ground: "aba ground", sweeps._aba_body: "aba body",
            sweeps._mass_matrix_inverse: "ltdl", sweeps._minverse_ground: "minverse ground", sweeps._minverse_dense: "ltdl loops",
            sweeps._minverse_aba_dense: "minverse loops", sweeps._forward_dynamics_local: "ltdl local"}
    name |= {run: "ltdl body" for run in runs if run.__name__.endswith("_body") and run not in name}
    chosen = {robot: name[runs[k]] for robot, k in chosen.items()}
    assert chosen[arm4.name] in ("ltdl body", "aba body", "ltdl local"), (key, chosen)
    # M^-1 of a long chain: a solve over the identity's columns in vectorized column loops (the
    # 14-DoF chain: the L^T D L factors', the 20-DoF chain: the dedicated algorithm's passes)
    assert chosen[chain.name] in {"qdd": ("aba ground",), "Minv": ("ltdl loops", "minverse loops")}[key], (key, chosen)
