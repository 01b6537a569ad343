"""The cheaper forms of Algorithm 1 in ground coordinates: the pieces they are built of against
their definitions, on numbers and on symbols (where the named intermediates are what changes)."""
import numpy as np
import pytest
import sympy as sp

from symgen.backend import NUMERIC, SymbolicBackend
from symgen.spatial import _constant_split, crf, crm, inertia_rate, mcI, rotate_symmetric, rot_x, rot_z


def _random_inertia(rng):
    B = rng.normal(size=(3, 3))
    return mcI(rng.uniform(0.5, 2.0), rng.normal(size=3), B @ B.T + np.eye(3) * 0.1)


@pytest.mark.parametrize("seed", range(5))
def test_inertia_rate_is_the_commutator_form(seed):
    rng = np.random.default_rng(seed)
    I, u = _random_inertia(rng), rng.normal(size=6)
    want = crf(u) @ I - I @ crm(u)
    np.testing.assert_allclose(inertia_rate(u, I), want, atol=1e-13)
    np.testing.assert_allclose(inertia_rate(u, I, NUMERIC, "K", 0), want, atol=1e-13)


def test_inertia_rate_named_on_symbols_matches_and_costs_less():
    bk = SymbolicBackend()
    u = np.array(sp.symbols("w0:3") + sp.symbols("v0:3"), dtype=object)
    A = sp.symbols("a0:6")
    I = bk.zeros((6, 6))
    for k, (r, c) in enumerate(((0, 0), (0, 1), (1, 1), (0, 2), (1, 2), (2, 2))):
        I[r, c] = I[c, r] = A[k]
    h, m = sp.symbols("h0:3"), sp.Symbol("m")
    I[0, 4], I[0, 5], I[1, 3], I[1, 5], I[2, 3], I[2, 4] = -h[2], h[1], h[2], -h[0], -h[1], h[0]
    I[4, 0], I[5, 0], I[3, 1], I[5, 1], I[3, 2], I[4, 2] = -h[2], h[1], h[2], -h[0], -h[1], h[0]
    for a in range(3):
        I[3 + a, 3 + a] = m
    named = inertia_rate(u, I, bk, "K", 0)
    subs = {s: e for s, e, _ in bk.assignments}
    plain = inertia_rate(u, I, bk)
    for x, y in zip(np.ravel(named), np.ravel(plain)):
        assert sp.expand(sp.sympify(x).xreplace(subs).xreplace(subs) - y) == 0
    want = crf(u, bk) @ I - I @ crm(u, bk)
    for x, y in zip(np.ravel(plain), np.ravel(want)):
        assert sp.expand(x - y) == 0


@pytest.mark.parametrize("kind", ["full", "diagonal", "degenerate"])
def test_rotate_symmetric_split_of_a_constant(kind):
    rng = np.random.default_rng(3)
    B = rng.normal(size=(3, 3))
    A = {"full": B @ B.T, "diagonal": np.diag([0.3, 0.1, 0.2]), "degenerate": np.diag([0.2, 0.2, 0.5])}[kind]
    R = rot_z(0.7) @ rot_x(-1.1)
    np.testing.assert_allclose(rotate_symmetric(R, A, NUMERIC, "Ic"), R @ A @ R.T, atol=1e-15)
    bk = SymbolicBackend()
    Rs = np.array(sp.symbols("r0:9"), dtype=object).reshape(3, 3)
    out = rotate_symmetric(Rs, bk.const(A), bk, "Ic", 0)
    values = {s: e for s, e, _ in bk.assignments}
    rsub = dict(zip(sp.symbols("r0:9"), R.ravel()))
    got = np.array([[float(sp.sympify(out[a, b]).xreplace(values).xreplace(values).xreplace(rsub))
                     for b in range(3)] for a in range(3)])
    np.testing.assert_allclose(got, R @ A @ R.T, atol=1e-14)
    # A = lam 1 + two rank-one terms at most; one when two principal moments are equal (exactly,
    # for a diagonal A)
    lam, us = _constant_split(A)
    assert len(us) == (1 if kind == "degenerate" else 2)
    np.testing.assert_allclose(lam * np.eye(3) + sum(np.outer(u, u) for u in us), A, atol=1e-15)
