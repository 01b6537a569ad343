"""NAME.h alone sizes everything: a C consumer that allocates every input and output with the header's
macros only (NAME_NQ, NAME_NV, NAME_NPARAMS, NAME_<FUNCTION>_<OUTPUT>_SIZE; its inputs' literals
checked against them at compile time) computes what NumPy does, one state and batch, and reads the
names and parameters the package has (NAME_NJOINTS joint names, NAME_NBODIES link names,
NAME_NFRAMES frame names, NAME_NPARAMS parameters); the shapes are written with those counts; the
free-flyer's q and v layout and quaternion order are stated."""
from __future__ import annotations

import json
import re
import shutil

import numpy as np

import c_programs as cp
import support
from symgen.codegen.files import shape_text


def test_a_consumer_of_the_header_alone_allocates_and_reads_everything(c_package, tmp_path):
    folder, pkg, robot = c_package("arm4_ff")
    manifest = json.loads((folder / "manifest.json").read_text())
    seed, states = cp.states_of(pkg, robot, manifest, "arm4_ff header", count=3)
    (tmp_path / "consumer.c").write_text(cp.driver(manifest, states, True, macros=True), encoding="utf-8")
    cc = shutil.which("gcc") or shutil.which("cc")
    support.require("a C compiler", cc is not None)
    exe = cp.compile_program(cc, [tmp_path / "consumer.c", folder / "arm4_ff.c"], "-O1 -std=c99 -Wall -Wextra -Werror",
                             tmp_path / "consumer", includes=[folder])
    found = cp.run_json([exe])
    assert found.pop("joint_names") == list(pkg.joint_names)
    assert found.pop("link_names") == list(pkg.link_names)
    assert found.pop("frame_names") == list(pkg.frames)
    (parameters,) = found.pop("parameters")
    assert np.array_equal(parameters, pkg.parameters)
    errors = cp.worst(found, cp.expected(pkg, manifest, states, True))
    bad = {k: e for k, e in errors.items() if not e <= 1e-12}
    assert not bad, f"header-sized consumer (seed {seed}): relative error against NumPy per function: {bad}"


def test_the_header_writes_shapes_with_its_counts_and_states_the_layout(c_package):
    folder, pkg, _ = c_package("arm4_ff")
    header = (folder / "arm4_ff.h").read_text()
    counts = {m: int(v) for m, v in re.findall(r"^#define ARM4_FF_(N\w+|FLOATING_BASE) (\d+)", header, re.M)}
    assert counts == {"NQ": pkg.nq, "NV": pkg.nv, "NJOINTS": len(pkg.joint_names), "NBODIES": len(pkg.link_names),
                      "NFRAMES": len(pkg.frames), "NPARAMS": len(pkg.parameters), "FLOATING_BASE": 1}
    assert "#define ARM4_FF_FRAME_JACOBIAN_J_SIZE (ARM4_FF_NFRAMES * 6 * ARM4_FF_NV)" in header
    assert "#define ARM4_FF_FRAME_PLACEMENT_OMF_SIZE (ARM4_FF_NFRAMES * 4 * 4)" in header
    assert "#define ARM4_FF_MASS_MATRIX_M_SIZE (ARM4_FF_NV * ARM4_FF_NV)" in header
    assert "#define ARM4_FF_INVERSE_DYNAMICS_TAU_SIZE ARM4_FF_NV " in header
    assert re.search(r"root_joint \(freeflyer\): q\[0\.\.6\] x y z .*quaternion qx qy qz qw", header)
    assert "extern const char *const arm4_ff_frame_names[ARM4_FF_NFRAMES];" in header


def test_shape_text_uses_the_counts_only_where_they_agree():
    sizes = {"n": ("R_NV", 6), "F": ("R_NFRAMES", 2), "p": ("R_NPARAMS", 60)}
    assert shape_text(("n", "p"), (6, 60), sizes) == ("(R_NV * R_NPARAMS)", "(R_NV, R_NPARAMS)")
    assert shape_text((6, "n"), (6, 6), sizes) == ("(6 * R_NV)", "(6, R_NV)")       # a fixed 6 stays a 6
    assert shape_text(("n",), (6,), sizes) == ("R_NV", "(R_NV,)")
    assert shape_text((), (), sizes) == ("1", "()")
    assert shape_text(None, (3, 5), sizes) == ("(3 * 5)", "(3, 5)")                  # no dims: the numbers
    assert shape_text(("n", "n"), (5, 5), sizes) == ("(5 * 5)", "(5, 5)")            # dims that disagree: numbers
    assert shape_text(("m",), (3,), sizes) == ("3", "(3,)")                          # no such count here
