"""`symgen build --timings` and the build cache (symgen/codegen/timings.py, cache.py).

The builds run the CLI in a fresh process, as a user does, with the cache in the test's own
folder (SYMGEN_CACHE=tmp_path), so nothing depends on what an earlier run left."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import support
from symgen.codegen import cache as C
from symgen.codegen.build import BuildOptions
from symgen.codegen.package import import_package

ROOT = Path(__file__).resolve().parents[1]
ARM4 = ROOT / "symgen" / "examples" / "arm4.urdf"
#: crba and rnea read the inertias; the regressor and frame kinematics do not
QUANTITIES = "M,tau,Y,oMf"
PHASES = ("startup", "load", "prepare", "symbolic", "generate", "write", "compile", "link")


def _build(urdf, out, cache_dir, *extra):
    env = {k: v for k, v in os.environ.items() if k != "SYMGEN_BUILD_CACHE"}
    env["SYMGEN_CACHE"] = str(cache_dir)
    # NAME.c split one unit per function whatever its size (arm4's is below UNIT_SPLIT_BYTES)
    split = "import symgen.codegen.compile as c; c.UNIT_SPLIT_BYTES = 0; from symgen.cli import main; main()"
    run = subprocess.run([sys.executable, "-c", split, "build", str(urdf), "--out", str(out), "--quantities",
                          QUANTITIES, "--copt", "-O0", "--jobs", "1", "--quiet", "--timings", *extra],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr
    folder = Path(out) / Path(urdf).stem
    return folder, json.loads((folder / "timings.json").read_text()), run.stdout


def _files(folder):
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.name != "timings.json"}


def test_timings_cover_the_build_and_a_second_identical_build_is_read_from_the_cache(tmp_path):
    """--timings: every phase, per sweep its tracing, passes and printing, per compile unit and
    link its seconds; the phases add up to the wall time; timings.json is not in the manifest.
    The same build again reads every sweep and object from the cache and writes the same bytes."""
    first, t1, out = _build(ARM4, tmp_path / "a", tmp_path / "cache")
    assert set(t1["phases"]) == set(PHASES), t1["phases"]
    assert abs(sum(t1["phases"].values()) - t1["wall"]) <= 0.05 * t1["wall"] + 0.3, t1
    assert {sw["sweep"] for sw in t1["sweeps"]} == {"crba", "rnea", "regressor", "frames"}
    assert all(sw["cache"] == "miss" and sw["runs"] >= 1 and sw["trace"] > 0 and sw["print"] > 0
               and sw["trace"] + sw["passes"] + sw["print"] <= sw["seconds"] + 0.01 for sw in t1["sweeps"]), t1["sweeps"]
    assert t1["compile_units"] and all(u["cache"] == "miss" and u["seconds"] > 0 for u in t1["compile_units"])
    assert [link["output"] for link in t1["links"]] == [p.name for p in first.glob("*.so")]
    assert "total (wall)" in out and "symbolic" in out
    assert "timings" not in json.loads((first / "manifest.json").read_text())

    second, t2, _ = _build(ARM4, tmp_path / "b", tmp_path / "cache")
    assert all(sw["cache"] == "hit" for sw in t2["sweeps"]), t2["sweeps"]
    assert all(u["cache"] == "hit" for u in t2["compile_units"]), t2["compile_units"]
    assert t2["phases"]["symbolic"] < t1["phases"]["symbolic"] and t2["phases"]["compile"] < t1["phases"]["compile"]
    assert _files(second) == _files(first)
    arm4 = import_package(second)
    q = np.random.default_rng(5).uniform(-1, 1, 4)
    np.testing.assert_allclose(arm4.mass_matrix(q), arm4.numpy.mass_matrix(q), rtol=1e-12, err_msg="seed 5")


def test_a_rebuild_after_a_mass_change_reruns_what_reads_the_inertias_and_is_right(tmp_path, pin):
    """One link's mass changed in the URDF (the upper arm: the shoulder's centre of mass sits on joint 1's axis,
    where its mass changes nothing): crba and rnea run again, the regressor and frame
    kinematics come from the cache (their units too); the rebuilt M changed and is Pinocchio's
    crba of the changed URDF, and the cached Y times the new parameters is its rnea."""
    urdf = tmp_path / "arm4.urdf"
    text = ARM4.read_text()
    assert text.count('<mass value="1.5"/>') == 1
    urdf.write_text(text)
    before, _, _ = _build(urdf, tmp_path / "a", tmp_path / "cache")
    urdf.write_text(text.replace('<mass value="1.5"/>', '<mass value="2.25"/>'))
    after, t, _ = _build(urdf, tmp_path / "b", tmp_path / "cache")
    state = {sw["sweep"]: sw["cache"] for sw in t["sweeps"]}
    assert state == {"crba": "miss", "rnea": "miss", "regressor": "hit", "frames": "hit"}, state
    units = {u["unit"]: u["cache"] for u in t["compile_units"]}
    assert units["arm4.frame_placement.c"] == units["arm4.regressor.c"] == "hit", units
    assert units["arm4.mass_matrix.c"] == units["arm4.inverse_dynamics.c"] == "miss", units
    old, new = import_package(before), import_package(after)
    model = pin.buildModelFromUrdf(str(urdf))
    data = model.createData()
    rng = np.random.default_rng(17)
    for _ in range(3):
        q, qd, qdd = (rng.uniform(-1, 1, 4) for _ in range(3))
        M = new.mass_matrix(q)
        assert np.abs(M - old.mass_matrix(q)).max() > 1e-3, "seed 17: M did not change with the mass"
        expected = pin.crba(model, data, q)
        expected = np.triu(expected) + np.triu(expected, 1).T
        support.assert_close(M, expected, "M after the mass change vs Pinocchio (seed 17)")
        tau = pin.rnea(model, data, q, qd, qdd)
        support.assert_close(new.regressor(q, qd, qd, qdd) @ new.parameters, tau, "cached Y @ new parameters (seed 17)")
        support.assert_close(new.inverse_dynamics(q, qd, qdd), tau, "tau after the mass change (seed 17)")


def test_the_sweep_key_is_the_same_in_every_process_and_follows_what_the_sweep_reads():
    """The key of a sweep does not depend on the process (hash seeds); an inertia change moves
    the keys of the sweeps that read the inertias only, a gravity change every sweep's key that
    takes it, a kinematic change all."""
    code = ("from symgen.urdf import load_urdf; from symgen.codegen.build import BuildOptions; "
            "from symgen.codegen.cache import sweep_key; "
            f"print(sweep_key(load_urdf({str(ARM4)!r}), BuildOptions(), ('M',)))")
    keys = {subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True,
                           env=dict(os.environ, PYTHONHASHSEED=str(seed))).stdout for seed in (1, 2)}
    assert len(keys) == 1, keys
    import dataclasses

    from symgen.urdf import load_urdf

    robot = load_urdf(ARM4)
    b = robot.bodies[1]
    heavier = dataclasses.replace(robot, bodies=(robot.bodies[0], dataclasses.replace(
        b, inertia=dataclasses.replace(b.inertia, mass=b.inertia.mass + 0.5)), *robot.bodies[2:]))
    moved = dataclasses.replace(robot, bodies=(robot.bodies[0], dataclasses.replace(
        b, translation=tuple(np.add(b.translation, (0.0, 0.0, 0.01)))), *robot.bodies[2:]))
    opts = BuildOptions()
    for keys, inertial in ((("M",), True), (("tau",), True), (("Y",), False), (("oMf", "J"), False)):
        key = C.sweep_key(robot, opts, keys)
        assert (C.sweep_key(heavier, opts, keys) != key) == inertial, keys
        assert C.sweep_key(moved, opts, keys) != key, keys
    assert C.sweep_key(robot, BuildOptions(gravity=(0, 0, -9.8)), ("tau",)) != C.sweep_key(robot, opts, ("tau",))
    assert C.sweep_key(robot, BuildOptions(cse=True), ("M",)) != C.sweep_key(robot, opts, ("M",))


def test_cache_entries_are_checked_evicted_least_recently_used_first_and_cleared(tmp_path):
    """A damaged entry or another file put in its place is a miss; past the size cap the
    entries used least recently go first; clear removes them all."""
    cache = C.Cache(tmp_path)
    for k in range(4):
        cache.put("objects", f"{k:064x}", bytes([k]) * 1000, {"k": k})
    assert cache.get("objects", f"{2:064x}") == ({"k": 2}, bytes([2]) * 1000)
    path = tmp_path / "objects" / "00" / f"{1:064x}"
    data = bytearray(path.read_bytes())
    data[-1] ^= 1
    path.write_bytes(bytes(data))
    assert cache.get("objects", f"{1:064x}") is None and cache.get("sweeps", f"{9:064x}") is None
    now = __import__("time").time()
    for k in range(4):                                  # used at 0, 1, 2, 3 s ago: 3 is the oldest
        os.utime(tmp_path / "objects" / "00" / f"{k:064x}", (now - k, now - k))
    size = sum(s for _, s, _ in C.entries(tmp_path))
    C.evict(tmp_path, size - 1)
    assert sorted(Path(p).name[-1] for _, _, p in C.entries(tmp_path)) == ["0", "1", "2"]
    assert C.clear(tmp_path)[0] == 3 and C.entries(tmp_path) == []


def test_the_cache_folder_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.delenv("SYMGEN_BUILD_CACHE", raising=False)
    monkeypatch.setenv("SYMGEN_CACHE", str(tmp_path))
    assert C.folder() == tmp_path / "build"
    monkeypatch.setenv("SYMGEN_BUILD_CACHE", str(tmp_path / "own"))
    assert C.folder() == tmp_path / "own"
    monkeypatch.setenv("SYMGEN_BUILD_CACHE", "off")
    assert C.folder() is None
    monkeypatch.setenv("SYMGEN_BUILD_CACHE_MAX", "3M")
    assert C.max_bytes() == 3 << 20


def test_symgen_cache_info_and_clear(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from symgen.cli import main

    monkeypatch.setenv("SYMGEN_BUILD_CACHE", str(tmp_path))
    C.Cache(tmp_path).put("sweeps", "ab" * 32, b"x" * 10)
    res = CliRunner().invoke(main, ["cache", "info"])
    assert res.exit_code == 0 and "1 entries" in res.output, res.output
    res = CliRunner().invoke(main, ["cache", "clear"])
    assert res.exit_code == 0 and "removed 1 entries" in res.output, res.output
    assert C.entries(tmp_path) == []


def test_entries_written_side_by_side_are_read_whole_or_not_at_all(tmp_path):
    """Writers of one key at once (builds side by side) and a reader among them: the reader
    gets a whole entry of one writer or a miss, never a mix; no temporary file is left."""
    import threading

    cache, key, got = C.Cache(tmp_path), "cd" * 32, []
    payloads = [bytes([k]) * 200_000 for k in range(6)]

    def write(p):
        for _ in range(5):
            cache.put("objects", key, p, {"n": p[0]})

    def read():
        for _ in range(50):
            got.append(C.Cache(tmp_path).get("objects", key))

    threads = [threading.Thread(target=write, args=(p,)) for p in payloads] + [threading.Thread(target=read)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert all(g is None or g[1] == payloads[g[0]["n"]] for g in got)
    assert cache.get("objects", key)[1] in payloads
    assert [p.name for p in (tmp_path / "objects" / "cd").iterdir()] == [key]
