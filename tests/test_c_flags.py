"""The generated C compiled as controller authors compile it: with -O3 -ffast-math and -Ofast (and
-fassociative-math alone) every function of a fixed-base and of a free-flyer package, one state and
batch, equals the package's NumPy module to 1e-10 (relative to max(1, max |NumPy|)). The vector sin
and cos (lanes_sincos, used by one-state code too whenever NAME_LANES > 1) round to an integer with
x 2/pi + 0x1.8p52 - 0x1.8p52, which reassociation deleted before it was made opaque (arm4's M off by
100 %). In CI: arm4 and its free-flyer on a few quantities, panda (fixed base) whole with -O3 -ffast-math,
and that the two flag sets give gcc the same object code; solo12 (free-flyer) whole, and the other
pairs, with -m slow (solo12's build and -Ofast compile: a minute of one core)."""
from __future__ import annotations

import json
import shutil

import pytest

import c_programs as cp
import support

TOL = 1e-10
#: the flag sets of the issue; x86-64's baseline (SSE2: 2 lanes) unless a set says -march
FLAGS = {"O3-fast-math": "-O3 -ffast-math", "Ofast": "-Ofast", "assoc": "-O2 -fassociative-math -fno-signed-zeros -fno-trapping-math",
         "Ofast-native": "-Ofast -march=native"}


def _cc():
    cc = shutil.which("gcc") or shutil.which("cc")
    support.require("a C compiler", cc is not None)
    return cc


def check_flags(folder, pkg, robot, label, flags, tmp_path):
    manifest = json.loads((folder / "manifest.json").read_text())
    lie = cp.has_lie(folder, manifest["name"])
    seed, states = cp.states_of(pkg, robot, manifest, label)
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
def test_fast_math_builds_equal_numpy(c_package, tmp_path, label, flags):
    folder, pkg, robot = c_package(label)
    check_flags(folder, pkg, robot, label, FLAGS[flags], tmp_path)


@pytest.mark.timeout(3600)                   # the default build of panda or solo12 and its -O3 compile: a minute
@pytest.mark.parametrize("label,flags", [("panda", "O3-fast-math"),
                                         pytest.param("solo12", "Ofast", marks=pytest.mark.slow),
                                         pytest.param("panda", "Ofast", marks=pytest.mark.slow),
                                         pytest.param("solo12", "O3-fast-math", marks=pytest.mark.slow)])
def test_fast_math_builds_of_panda_and_solo12_equal_numpy(c_package, tmp_path, label, flags):
    folder, pkg, robot = c_package(label)
    check_flags(folder, pkg, robot, label, FLAGS[flags], tmp_path)


def test_o3_fast_math_and_ofast_give_the_same_object_code(c_package, tmp_path):
    """gcc's -Ofast is -O3 -ffast-math with -fallow-store-data-races and without
    -fsemantic-interposition: on the generated C (no shared stores between threads, every helper
    static) the objects are byte-identical, so each big robot is compiled with one of the two."""
    import subprocess

    folder, _, _ = c_package("arm4_ff")
    objects = []
    for k, flags in enumerate((FLAGS["O3-fast-math"], FLAGS["Ofast"])):
        obj = tmp_path / f"arm4_ff_{k}.o"
        subprocess.run([_cc(), *flags.split(), "-c", str(folder / "arm4_ff.c"), f"-I{folder}", "-o", str(obj)],
                       check=True, capture_output=True, timeout=600)
        objects.append(obj.read_bytes())
    assert objects[0] == objects[1], "-O3 -ffast-math and -Ofast compiled arm4_ff.c differently"
