"""`symgen tables --quick` and the timing harness behind it.

The harness tests time functions of known cost (busy-waits of a set length, in Python and in C)
and check that the reported time per call is right within a factor: they test the timing code,
not the speed of symgen.
"""
from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from symgen.bench import cloop, harness, paper, steps, tables, timing


def _spin(seconds):
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


# ---------------------------------------------------------------------------- Python harness

def _work(k):
    x = 0.0
    for _ in range(k):
        x = x * 0.999999 + 1e-7
    return x


def test_time_callable_never_reports_less_than_a_known_busy_wait():
    # a call cannot take less than its 200 µs busy-wait: a wrong loop count or unit shows here
    t = timing.time_callable(lambda: _spin(200e-6), repeats=5, min_time=0.02)
    assert t.median_ns >= 200e3 * 0.95, t
    assert t.min_ns <= t.median_ns <= t.max_ns and t.repeats == 5
    assert t.inner >= 20, "the loop count was not calibrated up to min_time"


def test_time_callable_scales_with_the_work(monkeypatch):
    """On a clock that each call advances by its work (1 or 4 µs), the calibrated loop reports that
    work per call, for a loop of at least min_time: the scaling, without timing the shared
    machine (a ratio of real times failed on 2 cores with the suite's other worker running)."""
    clock = [0.0]
    monkeypatch.setattr(timing.time, "perf_counter", lambda: clock[0])

    def work(us):
        def call():
            clock[0] += us * 1e-6
        return call

    one = timing.time_callable(work(1), repeats=5, min_time=0.02)
    four = timing.time_callable(work(4), repeats=5, min_time=0.02)
    assert one.min_ns == pytest.approx(1000.0) and four.median_ns == pytest.approx(4000.0), (one, four)
    assert one.inner * 1e-6 >= 0.02 and four.inner * 4e-6 >= 0.02, (one, four)


def test_batch_timing_is_divided_per_item():
    t = timing.Timing(1000.0, 900.0, 1500.0, 10, 3).scaled(1 / 100)
    assert (t.median_ns, t.min_ns, t.max_ns) == (10.0, 9.0, 15.0)


# --------------------------------------------------------------------------------- C harness

_FAKE_C = r"""
#define _POSIX_C_SOURCE 199309L
#include <time.h>
#include "fake.h"
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }
static double spin_for(double x, double seconds) { double end = now() + seconds; while (now() < end) x += 1e-9; return x; }
void fake_mass_matrix(const double *q, double *M) { M[0] = spin_for(q[0], 20e-6); }
void fake_coriolis_matrix(const double *q, const double *qd, double *C) { C[0] = spin_for(q[0] + qd[1], 40e-6); C[3] = 1; }
void fake_christoffel(const double *q, double *Gamma) { Gamma[0] = spin_for(q[1], 160e-6); Gamma[7] = 2; }
"""
_FAKE_H = """#include <stddef.h>
void fake_mass_matrix(const double *q, double *M);
void fake_coriolis_matrix(const double *q, const double *qd, double *C);
void fake_christoffel(const double *q, double *Gamma);
"""


@pytest.fixture()
def fake_package(tmp_path, monkeypatch):
    """A package with the shape of a generated one: M busy-waits 20 µs, C 40 µs, Gamma 160 µs."""
    monkeypatch.setenv("SYMGEN_CACHE", str(tmp_path / "cache"))
    pkg = tmp_path / "fake"
    pkg.mkdir()
    (pkg / "fake.c").write_text(_FAKE_C)
    (pkg / "fake.h").write_text(_FAKE_H)
    (pkg / "_fake_ext.c").write_text("#error the CPython binding must not be compiled into the C loop\n")
    (pkg / "manifest.json").write_text(json.dumps({
        "name": "fake", "nv": 2, "c_extension": "_fake_ext",
        "functions": {"mass_matrix": {"quantity": "M", "inputs": ["q"], "outputs": [["M", [2, 2]]]},
                      "coriolis_matrix": {"quantity": "C", "inputs": ["q", "qd"], "outputs": [["C", [2, 2]]]},
                      "christoffel": {"quantity": "Gamma", "inputs": ["q"], "outputs": [["Gamma", [2, 2, 2]]]}}}))
    return pkg


def test_c_loop_never_reports_less_than_a_known_busy_wait(fake_package):
    t = cloop.c_loop(fake_package, ("M",), flags="-O1", repeats=5, min_time=0.02)["M"]
    assert t.median_ns >= 20e3 * 0.95, t
    assert t.inner >= 500 and t.repeats == 5


def test_c_loop_times_each_function_with_its_own_work(fake_package):
    """Busy waits of known length: each function's least disturbed repeat is at least its wait,
    so the loop calls the function it names each time (no call hoisted or thrown away); bounds
    from below only, as a busy shared machine can only lengthen a repeat."""
    t = cloop.c_loop(fake_package, ("C", "Gamma"), flags="-O1", repeats=5, min_time=0.02)
    assert t["C"].min_ns >= 40e3 * 0.95 and t["Gamma"].min_ns >= 160e3 * 0.95, t


def test_c_loop_rejects_a_function_the_package_does_not_have(fake_package):
    with pytest.raises(harness.BenchError, match="no inverse_dynamics"):
        cloop.c_loop(fake_package, ("tau",), flags="-O1")


def test_c_loop_reports_a_compile_timeout(fake_package):
    (fake_package / "fake.c").write_text(_FAKE_C + "\n".join(
        f"double f{i}(double x) {{ return " + " + ".join(f"x*{j}.5" for j in range(2000)) + "; }"
        for i in range(200)))
    with pytest.raises(harness.BenchError, match="timeout"):
        cloop.c_loop(fake_package, ("C",), flags="-O2", timeout=0.2)


# ------------------------------------------------------------------------ bounded subprocesses

def _hang(send):
    send({"started": True})
    time.sleep(600)


def test_run_limited_kills_a_step_over_its_timeout():
    t0 = time.monotonic()
    messages, done = steps.run_limited(_hang, (), timeout=3.0)
    assert not done and messages == [{"started": True}]
    assert time.monotonic() - t0 < 30


# --------------------------------------------------------------------- symgen tables --quick

@pytest.fixture(scope="module")
def quick_results(tmp_path_factory):
    out = tmp_path_factory.mktemp("tables")
    proc = subprocess.run([sys.executable, "-m", "symgen.cli", "tables", "--quick", "--pin-cpp", "off",
                           "--out", str(out)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads((out / "tables.json").read_text()), (out / "tables.md").read_text()


def test_quick_table2_has_every_row_and_every_cell(quick_results):
    results, md = quick_results
    plan = tables.quick_plan()
    rows = results["table2"]["rows"]
    assert [(r["kind"], r["n"], r["route"]) for r in rows] == \
        [(k, n, route) for k, n in plan.table2 for route in paper.ROUTES]
    for r in rows:
        for key in ("run_s", "run_cse_s", "ops", "paper_s"):
            assert tables.is_cell(r[key]), (r, key)
    # symgen's own route on tiny robots finishes well inside the timeout
    assert all(isinstance(r["ops"], int) and r["ops"] > 0 for r in rows if r["route"] == "algo2_named")
    assert "## Table 2" in md


def test_quick_table1_has_every_system_method_and_cell(quick_results):
    results, md = quick_results
    plan = tables.quick_plan()
    systems = results["table1"]["systems"]
    assert [(s["kind"], s["n"]) for s in systems] == plan.table1
    for s in systems:
        assert set(s["cells"]) == set(tables.TABLE1_METHODS), s["name"]
        for method, cells in s["cells"].items():
            for qty in paper.QUANTITIES:
                value = cells[qty]
                assert tables.is_cell(value), (s["name"], method, qty, value)
                if value == "n/a":
                    assert f"{method}/{qty}" in s["notes"] or method == "paper", (s["name"], method, qty)
        # what needs no optional extra is measured, not skipped
        for method in ("c_loop", "c_py_single", "c_py_batch", "numpy_single", "numpy_batch", "reference"):
            assert all(isinstance(s["cells"][method][q], float) and s["cells"][method][q] > 0
                       for q in paper.QUANTITIES), (s["name"], method, s["cells"][method])
    assert {"cpu", "cores", "python", "sympy", "cc", "pinocchio"} <= set(results["machine"])
    assert "## Table 1" in md


def test_quick_table3_has_every_robot_function_method_cell_and_ratio(quick_results):
    results, md = quick_results
    plan = tables.quick_plan()
    t3 = results["table3"]
    assert t3["quantities"] == list(paper.TABLE3_QUANTITIES)
    assert {q: r["pinocchio"] for q, r in t3["rows"].items()} == \
        {"qdd": "aba", "Minv": "computeMinverse", "dtau": "computeRNEADerivatives",
         "dqdd": "computeABADerivatives", "tau": "rnea"}
    assert [s["name"] for s in t3["systems"]] == [name for name, *_ in plan.table3]
    for s in t3["systems"]:
        assert set(s["cells"]) == set(tables.TABLE3_METHODS), s["name"]
        for method, cells in s["cells"].items():
            assert set(cells) == set(paper.TABLE3_QUANTITIES), (s["name"], method)
            for qty, value in cells.items():
                assert tables.is_cell(value), (s["name"], method, qty, value)
                if not isinstance(value, (int, float)):
                    assert f"{method}/{qty}" in s["notes"] or (method == "paper" and "paper" in s["notes"]), \
                        (s["name"], method, qty)
        for qty, pairs in s["ratios"].items():
            assert set(pairs) == {f"{a}/{b}" for a, b in tables.TABLE3_RATIOS}
            for pair, r in pairs.items():
                assert (isinstance(r, list) and len(r) == 2 and all(x > 0 for x in r)) or \
                    (r == "n/a" and f"{pair}/{qty}" in s["notes"]), (s["name"], qty, pair, r)
        # the generated code and Pinocchio from Python need no optional extra: measured, not skipped
        for method in ("c_loop", "c_py_single", "c_py_batch", "pin_py"):
            assert all(isinstance(v, float) and v > 0 for v in s["cells"][method].values()), (s["name"], method)
        assert all(isinstance(r["pin_py/c_py_single"], list) for r in s["ratios"].values())
        assert set(s["ops"]) == set(paper.TABLE3_QUANTITIES) and all(v > 0 for v in s["ops"].values())
    assert "## Table 3" in md
    for qty in paper.TABLE3_QUANTITIES:
        assert f"`{results['table3']['rows'][qty]['function']}`" in md


def test_paper_table3_is_the_seeds_table_i():
    # Carpentier & Mansard (2018), Table I, µs: ID, analytical dID, FD, analytical dFD, M^-1 dedicated
    assert paper.PAPER_TABLE3["KUKA-LWR"] == {"tau": 1.20, "dtau": 3.34, "qdd": 1.78, "dqdd": 5.78, "Minv": 1.82}
    assert paper.PAPER_TABLE3["Atlas"]["dqdd"] == 45.20 and paper.PAPER_TABLE3["HyQ"]["Minv"] == 4.86
    assert all(set(v) == set(paper.TABLE3_QUANTITIES) for v in paper.PAPER_TABLE3.values())
    assert set(paper.PAPER_TABLE3) == set(paper.PAPER_TABLE3_ROBOTS)
    assert all(robot in paper.PAPER_TABLE3 for *_, robot in tables.full_plan().table3)


def test_table3_ratio_of_a_missing_side_is_na_with_its_note():
    cells = {"c_loop": {q: 1.0 for q in paper.TABLE3_QUANTITIES}, "pin_cpp": {q: "n/a" for q in paper.TABLE3_QUANTITIES},
             "c_py_single": {q: 2.0 for q in paper.TABLE3_QUANTITIES}, "pin_py": {q: 3.0 for q in paper.TABLE3_QUANTITIES}}
    spread = {m: {q: [v, v] for q, v in c.items() if isinstance(v, float)} for m, c in cells.items()}
    notes = {f"pin_cpp/{q}": "the Pinocchio C++ harness is off" for q in paper.TABLE3_QUANTITIES}
    r = tables.table3_ratios(cells, spread, notes)
    assert r["qdd"] == {"pin_cpp/c_loop": "n/a", "pin_py/c_py_single": [1.5, 1.5]}
    assert notes["pin_cpp/c_loop/qdd"] == "the Pinocchio C++ harness is off"


def test_is_cell_accepts_only_numbers_and_markers():
    assert tables.is_cell(1.5) and tables.is_cell(3) and tables.is_cell("> 20 s") and tables.is_cell("n/a")
    assert not tables.is_cell(None) and not tables.is_cell("error") and not tables.is_cell(True)
