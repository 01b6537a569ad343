"""examples/identify_from_logs.py: a log on disk, the generated regressor mapped over its chunks by
dask on a 2-worker LocalCluster, a tall-skinny QR; the identifiable parameter combinations come
back (issue #26 item 3)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from test_examples import load_example

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "identify_from_logs.py"
pytestmark = pytest.mark.timeout(600)


def test_solve_recovers_the_identifiable_part_of_a_rank_deficient_system():
    """A planted Y of rank 5 in 8 unknowns (three columns combinations of others): the minimum-norm
    solution from the R factor of [Y | Y theta] equals theta on the identifiable subspace only."""
    example = load_example(EXAMPLE)
    rng = np.random.default_rng(3)
    base = rng.normal(size=(400, 5))
    Y = np.hstack([base, base[:, :3] @ rng.normal(size=(3, 3))])
    theta = rng.normal(size=8)
    R = np.linalg.qr(np.hstack([Y, (Y @ theta)[:, None]]), mode="r")
    theta_hat, P, rank, residual = example.solve(R)
    assert rank == 5 and residual < 1e-10
    assert np.allclose(P @ theta_hat, P @ theta, atol=1e-10)
    assert np.allclose(Y @ theta_hat, Y @ theta, atol=1e-9)
    assert not np.allclose(theta_hat, theta, atol=1e-3)        # the null-space part is not identifiable


def test_identification_from_a_chunked_log_on_two_workers(tmp_path):
    """100,000 samples of arm4 in 5 chunks on a 2-worker LocalCluster: without noise the
    identifiable combinations come back to 1e-6 (rounding level in fact); with 5% torque noise
    they come back approximately but not exactly (the test would catch a solve that ignores the
    data); a second run reuses the log."""
    def run(noise, log):
        out = tmp_path / f"result_{noise}.json"
        proc = subprocess.run([sys.executable, str(EXAMPLE), "--samples", "100000", "--chunk", "20000", "--workers", "2",
                               "--noise", str(noise), "--log", str(log), "--out", str(tmp_path / "build"),
                               "--json", str(out)], capture_output=True, text=True, timeout=500)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return json.loads(out.read_text()), proc.stdout

    exact, printed = run(0.0, tmp_path / "log")
    assert "identifiable combinations" in printed
    assert exact["samples"] == 100_000 and exact["rows"] == 400_000 and exact["parameters"] == 40
    assert 0 < exact["rank"] < exact["parameters"]
    assert exact["relative_error"] < 1e-6, exact
    assert exact["residual"] < 1e-6 * np.sqrt(exact["rows"]) * 10
    noisy, _ = run(0.05, tmp_path / "noisy_log")
    assert noisy["rank"] == exact["rank"]
    assert 1e-8 < noisy["relative_error"] < 0.2, noisy
    again, _ = run(0.0, tmp_path / "log")
    assert again["seconds"]["log"] < exact["seconds"]["log"] + 1 and again["relative_error"] < 1e-6
