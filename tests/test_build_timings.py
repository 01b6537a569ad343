"""`symgen build --timings` (symgen/codegen/timings.py).

The builds run the CLI in a fresh process, as a user does."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from symgen.codegen.package import import_package

ROOT = Path(__file__).resolve().parents[1]
ARM4 = ROOT / "symgen" / "examples" / "arm4.urdf"
#: crba and rnea read the inertias; the regressor and frame kinematics do not
QUANTITIES = "M,tau,Y,oMf"
PHASES = ("startup", "load", "prepare", "symbolic", "generate", "write", "compile", "link")


def _build(urdf, out, cache_dir, *extra):
    env = dict(os.environ)
    run = subprocess.run([sys.executable, "-m", "symgen.cli", "build", str(urdf), "--out", str(out), "--quantities",
                          QUANTITIES, "--copt", "-O0", "--jobs", "1", "--quiet", "--timings", *extra],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr
    folder = Path(out) / Path(urdf).stem
    return folder, json.loads((folder / "timings.json").read_text()), run.stdout


def test_timings_cover_the_build(tmp_path):
    """--timings: every phase, per sweep its tracing, passes and printing, per compile unit and
    link its seconds; the phases add up to the wall time; timings.json is not in the manifest."""
    first, t1, out = _build(ARM4, tmp_path / "a", tmp_path / "cache")
    assert set(t1["phases"]) == set(PHASES), t1["phases"]
    assert abs(sum(t1["phases"].values()) - t1["wall"]) <= 0.05 * t1["wall"] + 0.3, t1
    assert {sw["sweep"] for sw in t1["sweeps"]} == {"crba", "rnea", "regressor", "frames"}
    assert all(sw["cache"] == "off" and sw["runs"] >= 1 and sw["trace"] > 0 and sw["print"] > 0
               and sw["trace"] + sw["passes"] + sw["print"] <= sw["seconds"] + 0.01 for sw in t1["sweeps"]), t1["sweeps"]
    assert t1["compile_units"] and all(u["cache"] == "off" and u["seconds"] > 0 for u in t1["compile_units"])
    assert [link["output"] for link in t1["links"]] == [p.name for p in first.glob("*.so")]
    assert "total (wall)" in out and "symbolic" in out
    assert "timings" not in json.loads((first / "manifest.json").read_text())
    arm4 = import_package(first)
    q = np.random.default_rng(5).uniform(-1, 1, 4)
    np.testing.assert_allclose(arm4.mass_matrix(q), arm4.numpy.mass_matrix(q), rtol=1e-12, err_msg="seed 5")
