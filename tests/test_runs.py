"""Row runs (symgen.codegen.runs): row segments of dot products printed as vectorized loops.

On hand-made Functions: which segments become runs, that a run rebuilds every entry it replaces
exactly, that the temps it reads along the row are laid out contiguously in the work array, and
that a run whose layout disagrees with a longer one stays unrolled. On generated packages: a
chain and a tree printed in parts, compiled, with the runs in the C and its values equal to the
NumPy code's (which has no runs).
"""
from __future__ import annotations

import json
import re

import numpy as np
import pytest
import sympy as sp

import support
from symgen import robots
from symgen.codegen import program as P
from symgen.codegen.build import BuildOptions, build, import_package
from symgen.codegen.runs import MIN_RUN, row_runs

Q = sp.symbols("q0 q1")
COLS = 6


def _function(rows):
    """A Function of q = (q0, q1) with temps phi_r (3 of them, the row's common factors) and
    f_j_r (column j, component r), and a 2 x COLS output whose entries are ``rows[i](j)``."""
    phi = sp.symbols("phi0:3")
    f = [sp.symbols(f"f{j}_0:3") for j in range(COLS)]
    assignments = [(phi[r], Q[0] + r) for r in range(3)]
    assignments += [(f[j][r], Q[1] * (j + 1) + r) for j in range(COLS) for r in range(3)]
    exprs = tuple(sp.sympify(rows[i](j, phi, f)) for i in range(2) for j in range(COLS))
    fn = P.Function("f", "hand-made", (P.Input("q", Q),), tuple(P.Assignment(*a) for a in assignments),
                    (P.Output("X", (2, COLS), exprs),))
    return fn, phi, f


def _dot(j, phi, f):
    return sum(phi[r] * f[j][r] for r in range(3))


def _numeric(j, phi, f):
    return 2 + sp.Float(0.5) * f[j][0] - 3 * f[j][1] + f[j][2]


def _reversed(j, phi, f):
    return sum(phi[r] * f[COLS - 1 - j][r] for r in range(3))


def _runs_of(fn, size=4):
    parts, slots = P.partition(fn, size, 0)
    assert len(parts) > 1
    return parts, slots, row_runs(fn, parts, slots)


def _rebuilt(run):
    return [run.const + sum(c * t[k] for c, t in zip(run.coefs, run.temps)) for k in range(run.count)]


def test_each_row_of_dot_products_becomes_one_run_that_rebuilds_its_entries_exactly():
    fn, phi, f = _function([_dot, _numeric])
    parts, slots, (new_parts, new_slots, runs) = _runs_of(fn)
    assert [(p, run.output, run.start, run.count) for p, run in runs] == [(runs[0][0], 0, 0, COLS),
                                                                          (runs[1][0], 0, COLS, COLS)]
    for _, run in runs:
        assert _rebuilt(run) == list(fn.outputs[0].exprs[run.start:run.start + run.count])
    assert runs[0][1].coefs == phi                       # row 0: phi_r common, f_j_r along the row
    assert runs[1][1].const == 2                         # row 1: numbers common, and a constant
    # the entries the runs write are no longer printed one by one; nothing else moved
    assert [e for p in new_parts for e in p.entries] == []
    assert [p.assignments for p in new_parts] == [p.assignments for p in parts]
    # f_0_r .. f_5_r sit next to each other in the work array (each run reads w[base_r + k])
    for r in range(3):
        assert [new_slots[f[j][r]] for j in range(COLS)] == list(range(new_slots[f[0][r]], new_slots[f[0][r]] + COLS))
    assert len(set(new_slots.values())) == len(new_slots)
    assert set(slots) <= set(new_slots)                  # every temp shared before still is


def test_a_run_whose_layout_disagrees_with_a_taken_one_stays_unrolled():
    """Row 1 reads f_j in the opposite order: f_5_r .. f_0_r cannot also be contiguous upward."""
    fn, _, f = _function([_dot, _reversed])
    _, _, (new_parts, new_slots, runs) = _runs_of(fn)
    assert [(run.start, run.count) for _, run in runs] == [(0, COLS)]
    assert sorted(k for p in new_parts for _, k, _ in p.entries) == list(range(COLS, 2 * COLS))


def test_short_segments_a_whole_function_and_mixed_terms_are_left_alone():
    short = lambda j, phi, f: _dot(j, phi, f) if j < MIN_RUN - 1 else 0
    fn, _, _ = _function([short, lambda j, phi, f: phi[0] * f[j][0] * f[j][1]])   # two changing factors
    parts, slots, (new_parts, new_slots, runs) = _runs_of(fn)
    assert runs == [] and new_parts == parts and new_slots == slots
    whole = P.partition(fn, 10_000)
    assert row_runs(fn, *whole) == (*whole, [])


def _symmetric(negated=False):
    """X (7 x 7) with X[0, j] = X[j, 0] = phi . f_j (j = 1..6), shared by program.share_outputs as
    one temp each; ``negated``: X[j, j] = -X[0, j] as well (the temp is then read, not only placed)."""
    n = COLS + 1
    phi = sp.symbols("phi0:3")
    f = [sp.symbols(f"f{j}_0:3") for j in range(n)]
    assignments = [(phi[r], Q[0] + r) for r in range(3)]
    assignments += [(f[j][r], Q[1] * (j + 1) + r) for j in range(1, n) for r in range(3)]
    X = np.full((n, n), sp.S.Zero, dtype=object)
    X[0, 0] = Q[0]
    for j in range(1, n):
        X[0, j] = X[j, 0] = sum(phi[r] * f[j][r] for r in range(3))
    fn = P.share_outputs(P.Function("f", "hand-made", (P.Input("q", Q),), tuple(P.Assignment(*a) for a in assignments),
                                    (P.Output("X", (n, n), tuple(sp.sympify(e) for e in X.ravel())),)))
    if negated:
        exprs = list(fn.outputs[0].exprs)
        for j in range(1, n):
            exprs[j * n + j] = -exprs[j]
        fn = P.Function(fn.name, fn.doc, fn.inputs, fn.assignments, (P.Output("X", (n, n), tuple(exprs)),))
    return fn, n


def test_a_run_looks_through_a_shared_temp_and_writes_its_mirror():
    """M_ij = M_ji is one temp (share_outputs): the run along row 0 computes it and writes both
    triangles (X[0, 1..6] and X[1..6, 0], stride 7), and the temps are no longer computed."""
    fn, n = _symmetric()
    shared = {a.temp for a in fn.assignments if a.temp.name.startswith("x")}
    assert len(shared) == COLS
    parts, slots, (new_parts, new_slots, runs) = _runs_of(fn)
    assert [(run.start, run.count, run.mirror) for _, run in runs] == [(1, COLS, (0, n, n))]
    (_, run), = runs
    by_temp = {a.temp: a.expr for a in fn.assignments}
    assert _rebuilt(run) == [by_temp[fn.outputs[0].exprs[1 + k]] for k in range(COLS)]
    assert sorted(run.positions()) == sorted((0, k) for k in (*range(1, n), *range(n, n * n, n)))
    assert [k for p in new_parts for _, k, _ in p.entries] == [0]
    assert not shared & {a.temp for p in new_parts for a in p.assignments} and not shared & set(new_slots)


def test_a_shared_temp_read_elsewhere_is_not_looked_through():
    """X[j, j] = -temp reads the temp: it stays computed, and row 0 is no run."""
    fn, _ = _symmetric(negated=True)
    parts, slots, (new_parts, new_slots, runs) = _runs_of(fn)
    assert runs == [] and new_parts == parts


@pytest.mark.parametrize("kind", ["serial", "tree"])
def test_generated_c_in_parts_with_runs_equals_the_numpy_code(tmp_path, monkeypatch, kind):
    """C, Mdot, all_terms, Gamma and the ID derivatives of a chain and a tree printed in parts: the
    C has runs (some writing a mirror) and, from the binding, equals the NumPy code (unrolled) at
    random states."""
    import symgen.codegen.files as codegen_files

    monkeypatch.setattr(codegen_files, "C_SPLIT_ABOVE", 100)
    monkeypatch.setattr(codegen_files, "C_PART_SIZE", 60)
    robot = robots.make(kind, 9, 5)
    opts = BuildOptions(quantities=("C", "Mdot", "MCg", "Gamma", "dtau"), copt="-O0")
    pkg = import_package(build(robot, tmp_path, opts=opts).path)
    source = (tmp_path / robot.name / f"{robot.name}.c").read_text()
    assert source.count("one dot product along the row") >= 4 and "and at " in source
    shape = json.loads((tmp_path / robot.name / "manifest.json").read_text())["functions"]["coriolis_matrix"]
    assert shape["route"] == "algorithm1" and shape["c_shape"]["parts"] > 1 and shape["c_shape"]["row_runs"] >= 1
    seed = 41
    for q, qd, qdd in support.random_states(seed, robot.n, 3):
        for f in ("coriolis_matrix", "mass_matrix_dot", "all_terms", "christoffel", "inverse_dynamics_derivatives"):
            c, py = support.call(pkg.c, f, q, qd, qdd), support.call(pkg.numpy, f, q, qd, qdd)
            support.assert_agree(c, py, f"{kind}9 {f}: C with runs vs NumPy (seed {seed})", tol=1e-11)


def test_a_whole_function_has_runs_only_of_long_rows_and_its_lanes_copy_agrees(tmp_path):
    """A whole function (not in parts) takes runs of at least WHOLE_MIN_RUN entries: the 14-DoF
    chain's M does (rows of up to 13 entries above the diagonal). Its lanes copy for batches prints
    the same entries one by one; batch, single calls and NumPy agree."""
    from symgen.codegen.runs import WHOLE_MIN_RUN

    robot = robots.make("serial", 14, 2)
    pkg = import_package(build(robot, tmp_path, opts=BuildOptions(quantities=("M",), copt="-O0")).path)
    source = (tmp_path / robot.name / f"{robot.name}.c").read_text()
    shape = json.loads((tmp_path / robot.name / "manifest.json").read_text())["functions"]["mass_matrix"]["c_shape"]
    assert shape["parts"] == 1 and shape["row_runs"] >= 1 and f"static int {robot.name}_mass_matrix_lanes(" in source
    counts = [int(m) for m in re.findall(r"for \(int k_ = 0; k_ < (\d+); \+\+k_\)", source)]
    assert counts and min(counts) >= WHOLE_MIN_RUN
    seed = 43
    Q = np.random.default_rng(seed).uniform(-3, 3, (9, robot.n))
    batch, single = pkg.c.mass_matrix(Q), np.array([pkg.c.mass_matrix(q) for q in Q])
    support.assert_agree(batch, single, f"serial14 M batch (lanes) vs single (seed {seed})", tol=1e-13)
    support.assert_agree(single, np.array([pkg.numpy.mass_matrix(q) for q in Q]),
                         f"serial14 M C vs NumPy (seed {seed})", tol=1e-12)
