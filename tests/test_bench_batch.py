"""``symgen bench``'s C batch rows and the FMA probe: the driver times NAME_<function>_batch_threads
on packed states beside the one-state loop (its rows per state), a function of params has no batch
row, and the probe reports a rate per width this CPU has. Which is faster is for the benchmark
(docs/RESULTS.md in the git history), not for a test."""
from __future__ import annotations

from pathlib import Path

import pytest

from symgen.bench import cloop
from symgen.bench.fma import fma_rate, format_rate
from symgen.bench.report import ratios
from symgen.bench.timing import Timing
from symgen.codegen.build import BuildOptions, build
from symgen.urdf import load_urdf

ARM4 = Path(__file__).resolve().parents[1] / "symgen" / "examples" / "arm4.urdf"


@pytest.fixture(scope="module")
def arm4(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench-batch")
    return build(load_urdf(ARM4), out, opts=BuildOptions(quantities=("M", "tau", "qdd", "dtau"), compile=False)).path


def test_c_loop_times_the_batch_per_state_beside_one_state(arm4):
    """(dtau: two outputs, each packed over the batch)"""
    rows = cloop.c_loop(arm4, ("M", "tau", "qdd", "dtau"), flags="-O1", repeats=3, min_time=0.002, batch=37)
    assert set(rows) == {"M", "tau", "qdd", "dtau", "M:batch", "tau:batch", "qdd:batch", "dtau:batch"}
    for key, t in rows.items():
        assert t.median_ns > 0 and t.min_ns <= t.median_ns <= t.max_ns, key
    without = cloop.c_loop(arm4, ("M",), flags="-O1", repeats=1, min_time=0.001)
    assert set(without) == {"M"}


def test_processes_sample_the_code_layout(arm4, monkeypatch):
    """--processes 4: each process runs a driver whose package code starts LAYOUT_STEP bytes further
    on than the last one's (the median over processes is one over layouts too); one process: the
    driver as it was, no padding."""
    import shutil
    import subprocess

    if shutil.which("nm") is None:
        pytest.skip("no nm to read the drivers' symbols")
    starts = []

    def run(exe, args, what):
        table = subprocess.run(["nm", str(exe)], capture_output=True, text=True, check=True).stdout
        starts.append(next(int(line.split()[0], 16) for line in table.splitlines()
                           if line.endswith(" arm4_mass_matrix")))
        return {"M": Timing(median_ns=1.0, min_ns=1.0, max_ns=1.0, inner=1, repeats=1)}

    monkeypatch.setattr(cloop, "run_harness", run)
    cloop.c_loop(arm4, ("M",), flags="-O1", processes=cloop.LAYOUTS + 1)
    assert [s - starts[0] for s in starts] == [cloop.LAYOUT_STEP * k for k in range(cloop.LAYOUTS)] + [0]


def test_the_batch_driver_packs_states_per_argument_size():
    manifest = {"name": "x", "nq": 8, "nv": 7, "functions": {
        "forward_dynamics": {"inputs": ["q", "qd", "tau"], "outputs": [["qdd", [7]]]},
        "mass_matrix": {"inputs": ["q", "params"], "outputs": [["M", [7, 7]]]}}}
    ctx = cloop.c_driver_source_context(manifest, ("qdd", "M"), batch=5)
    assert [r["label"] for r in ctx["batch_runners"]] == ["qdd:batch"]       # M takes params: no batch row
    assert ctx["batch_runners"][0]["arguments"] == ["batch_q", "batch_qd", "batch_tau", "batch_out"]
    assert ctx["batch_runners"][0]["last"] == 5 * 7 - 1
    sizes = {a["name"]: a["size"] for a in ctx["batch_arrays"]}
    assert sizes["q"] == 8 and sizes["qd"] == 7 and sizes["tau"] == 7


def test_ratio_of_one_state_to_the_batch():
    us = {"c_loop": 0.3, "c_loop_batch": 0.1}
    assert ratios(us, {"c_loop": [0.2, 0.4], "c_loop_batch": [0.1, 0.1]})["c_loop/c_loop_batch"] == 3.0


def test_fma_probe_reports_each_width_of_this_cpu():
    rate = fma_rate(min_time=0.005, repeats=3)
    assert rate["scalar"]["lanes"] == 1 and rate["scalar"]["fma_per_s"] > 0
    for width in ("avx2", "avx512"):
        if width in rate:
            assert rate[width]["doubles_per_s"] == pytest.approx(rate[width]["fma_per_s"] * rate[width]["lanes"])
    assert "scalar" in format_rate(rate)
