"""The generated C compiled as controller authors compile it: with -O3 -ffast-math and -Ofast (and
-fassociative-math alone) every function of a fixed-base and of a free-flyer package, one state and
batch, equals the package's NumPy module to 1e-10 (relative to max(1, max |NumPy|)). The vector sin
and cos (lanes_sincos, used by one-state code too whenever NAME_LANES > 1) round to an integer with
x 2/pi + 0x1.8p52 - 0x1.8p52, which reassociation deleted before it was made opaque (arm4's M off by
100 %). In CI: arm4 and its free-flyer on a few quantities; panda and solo12 whole with -m slow."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

import c_programs as cp
import support
from symgen.codegen.build import BuildOptions, build, import_package
from symgen.urdf import load_urdf

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "symgen" / "examples" / "arm4.urdf"
TOL = 1e-10
#: the flag sets of the issue; x86-64's baseline (SSE2: 2 lanes) unless a set says -march
FLAGS = {"O3-fast-math": "-O3 -ffast-math", "Ofast": "-Ofast", "assoc": "-O2 -fassociative-math -fno-signed-zeros -fno-trapping-math",
         "Ofast-native": "-Ofast -march=native"}
#: what the CI sample builds (functions with joint sin and cos, solves, frames)
SAMPLE = ("M", "C", "tau", "qdd", "oMf", "J")


def _cc():
    cc = shutil.which("gcc") or shutil.which("cc")
    support.require("a C compiler", cc is not None)
    return cc


def _package(tmp_path_factory, label):
    """(folder, package, robot) of a package built without its binding (the NumPy module is the oracle)."""
    out = tmp_path_factory.mktemp(f"flags-{label}")
    if label in ("arm4", "arm4_ff"):
        robot = load_urdf(EXAMPLE, floating_base=label == "arm4_ff")
        opts = BuildOptions(quantities=SAMPLE, compile=False)
    elif label == "panda":
        robot, opts = load_urdf(support.erd_path("panda_description/urdf/panda.urdf")), BuildOptions(compile=False, jobs=2)
    else:
        robot = load_urdf(support.erd_path("solo_description/robots/solo12.urdf"), floating_base=True)
        opts = BuildOptions(compile=False, jobs=2)
    path = build(robot, out, name=label, opts=opts).path
    return path, import_package(path), robot


@pytest.fixture(scope="module")
def packages(tmp_path_factory):
    cache = {}

    def get(label):
        if label not in cache:
            cache[label] = _package(tmp_path_factory, label)
        return cache[label]
    return get


def states_of(pkg, robot, manifest, label, count=5):
    """(seed, states): ``count`` states of every argument, drawn as verify draws them, and lie_state's."""
    seed, states = support.seeded_states(label, robot, count, layout=manifest["joint_models"], unit_base=robot.floating_base)
    rng = np.random.default_rng(seed)
    return seed, [cp.lie_state(pkg, s, rng) for s in states]


def check_flags(folder, pkg, robot, label, flags, tmp_path):
    manifest = json.loads((folder / "manifest.json").read_text())
    lie = cp.has_lie(folder, manifest["name"])
    seed, states = states_of(pkg, robot, manifest, label)
    (tmp_path / "driver.c").write_text(cp.driver(manifest, states, lie), encoding="utf-8")
    exe = cp.compile_program(_cc(), [tmp_path / "driver.c", folder / f"{manifest['name']}.c"], f"{flags} -std=gnu99",
                             tmp_path / "driver", includes=[folder])
    errors = cp.worst(cp.run_json([exe]), cp.expected(pkg, manifest, states, lie))
    bad = {k: e for k, e in errors.items() if not e <= TOL}
    assert not bad, f"{label} with {flags} (seed {seed}): relative error against NumPy per function: {bad}"
    assert len(errors) >= 2 * len(manifest["functions"])


@pytest.mark.parametrize("label,flags", [("arm4", "O3-fast-math"), ("arm4_ff", "Ofast"),
                                         pytest.param("arm4", "Ofast", marks=pytest.mark.slow),
                                         pytest.param("arm4", "assoc", marks=pytest.mark.slow),
                                         pytest.param("arm4_ff", "O3-fast-math", marks=pytest.mark.slow),
                                         pytest.param("arm4_ff", "Ofast-native", marks=pytest.mark.slow)])
def test_fast_math_builds_equal_numpy(packages, tmp_path, label, flags):
    folder, pkg, robot = packages(label)
    check_flags(folder, pkg, robot, label, FLAGS[flags], tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("label", ["panda", "solo12"])
@pytest.mark.parametrize("flags", ["O3-fast-math", "Ofast"])
def test_fast_math_builds_of_panda_and_solo12_equal_numpy(packages, tmp_path, label, flags):
    folder, pkg, robot = packages(label)
    check_flags(folder, pkg, robot, label, FLAGS[flags], tmp_path)
