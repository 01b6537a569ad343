"""The caller's work arrays in the generated C (every function's ``_work`` and ``_update_work``,
and ``_batch_work``: a serial batch whose groups of lanes live in the caller's buffer) and
``symgen stack``, which reports each entry point's stack as the user's compiler builds it.

arm4 printed in parts (the form big robots get: static parts sharing a work array) is built in
seconds; the driver of :mod:`c_programs` calls every entry point, with the work buffers filled with
NaNs first, at 1 (no lanes), 2 and 4 lanes, and compares with the package's NumPy module."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

import c_programs as cp
from symgen.cli import main
from symgen.codegen.build import BuildOptions, build, import_package
from symgen.codegen.stack import stack_usage
from symgen.urdf import load_urdf

EXAMPLE = Path(__file__).resolve().parents[1] / "symgen" / "examples" / "arm4.urdf"
QUANTITIES = ("M", "C", "Gamma", "qdd", "Y")


@pytest.fixture(scope="module")
def in_parts(tmp_path_factory):
    """(folder, package, robot) of arm4 with its big functions printed in parts."""
    import symgen.codegen.files as codegen_files

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(codegen_files, "C_SPLIT_ABOVE", 60)
        mp.setattr(codegen_files, "C_PART_SIZE", 40)
        robot = load_urdf(EXAMPLE)
        out = tmp_path_factory.mktemp("parts")
        path = build(robot, out, name="arm4p", opts=BuildOptions(compile=False, quantities=QUANTITIES)).path
    return path, import_package(path), robot


def _gcc():
    cc = shutil.which("gcc")
    assert cc, "gcc is needed (the project's CI installs it)"
    return cc


@pytest.mark.parametrize("lanes", ["-DARM4P_NO_LANES", "", "-DARM4P_LANES=4"])
def test_work_variants_equal_numpy_from_nan_filled_work(in_parts, tmp_path, lanes):
    folder, pkg, robot = in_parts
    manifest = json.loads((folder / "manifest.json").read_text())
    header = (folder / "arm4p.h").read_text()
    assert sum(f"{name}_update_work(" in header for name in manifest["functions"]) == len(manifest["functions"])
    assert "ARM4P_CORIOLIS_MATRIX_WORK_BYTES 0 " not in header, "arm4's C was not printed in parts"
    seed, states = cp.states_of(pkg, robot, manifest, "arm4p")
    (tmp_path / "driver.c").write_text(cp.driver(manifest, states, False), encoding="utf-8")
    exe = cp.compile_program(_gcc(), [tmp_path / "driver.c", folder / "arm4p.c"],
                             f"-O1 -std=gnu99 -Wall -Wextra -Werror {lanes}", tmp_path / "driver", includes=[folder])
    found, want = cp.run_json([exe]), cp.expected(pkg, manifest, states, False)
    errors = cp.worst(found, want)
    assert {k for k in errors if k.endswith("/batch_work")} == {f"{f}/batch_work" for f in manifest["functions"]}
    bad = {k: e for k, e in errors.items() if not e <= 1e-12}
    assert not bad, f"arm4 in parts {lanes or 'default lanes'} (seed {seed}): error against NumPy per entry: {bad}"


def test_stack_report_moves_the_work_arrays_to_the_caller(in_parts):
    folder, _, _ = in_parts
    report = stack_usage(folder, cc=_gcc(), cflags="-O2 -DARM4P_LANES=4")
    assert report["lanes"] == 4 and set(report["functions"]) == set(json.loads((folder / "manifest.json").read_text())["functions"])
    moved = 0
    for fn, row in report["functions"].items():
        assert all(isinstance(row[k], int) and row[k] > 0 for k in ("one state", "_work", "batch", "_batch_work")), (fn, row)
        # the work array is the caller's: the call's own stack shrinks by about its bytes
        assert row["_work"] <= row["one state"] - row["work bytes"] + 64, (fn, row)
        assert row["_batch_work"] < row["batch"], (fn, row)
        assert row["_batch_work"] <= row["batch"] - row["batch work bytes"] // 2, (fn, row)
        moved += row["work bytes"] > 0
    assert moved >= 2, "no function of arm4 in parts has a work array"


def test_stack_command_prints_every_function_and_writes_json(in_parts, tmp_path):
    folder, _, _ = in_parts
    result = CliRunner().invoke(main, ["stack", str(folder), "--json", str(tmp_path / "stack.json"), "--no-record"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert "stack per call in bytes" in lines[0] and "gcc -O2" in lines[0]
    data = json.loads((tmp_path / "stack.json").read_text())
    for fn in data["functions"]:
        assert any(line.split()[:1] == [fn] for line in lines[2:]), fn


def test_stack_command_records_each_toolchain_in_the_manifest(in_parts, tmp_path):
    """Two toolchains' figures side by side under the manifest's ``stack``, the same as the report,
    and the package still imports as the package its manifest describes (verify's check)."""
    from symgen.verify import check_files, check_module, read_manifest

    folder = tmp_path / "arm4p"
    shutil.copytree(in_parts[0], folder)
    before = json.loads((folder / "manifest.json").read_text())
    m7 = "-mcpu=cortex-m7 -mfpu=fpv5-d16 -mfloat-abi=hard -O2"
    runner, reports = CliRunner(), {}
    for k, (cc, flags) in enumerate((("gcc", "-O2"), ("arm-none-eabi-gcc", m7), ("gcc", "-O2"))):
        result = runner.invoke(main, ["stack", str(folder), "--cc", cc, "--cflags", flags, "--json", str(tmp_path / f"{k}.json")])
        assert result.exit_code == 0, result.output
        assert result.output.strip().splitlines()[-1].endswith(f"under stack[{cc + ' ' + flags!r}]"), result.output
        reports[f"{cc} {flags}"] = json.loads((tmp_path / f"{k}.json").read_text())   # the last of a key stays
    manifest = read_manifest(folder)
    assert set(manifest["stack"]) == set(reports) == {"gcc -O2", f"arm-none-eabi-gcc {m7}"}
    assert {k: v for k, v in manifest.items() if k != "stack"} == before
    for key, report in reports.items():
        entry = manifest["stack"][key]
        assert entry["functions"] == report["functions"] and entry["lanes"] == report["lanes"], key
        assert entry["version"] and entry["version"] == report["version"], key
    assert manifest["stack"][f"arm-none-eabi-gcc {m7}"]["lanes"] == 1
    check_files(folder, manifest)
    check_module(import_package(folder), manifest, folder)


def test_stack_for_a_cortex_m7(in_parts):
    cc = shutil.which("arm-none-eabi-gcc")
    assert cc, "arm-none-eabi-gcc is needed (.ci/run installs gcc-arm-none-eabi)"
    folder, _, _ = in_parts
    report = stack_usage(folder, cc=cc, cflags="-mcpu=cortex-m7 -mfpu=fpv5-d16 -mfloat-abi=hard -O2")
    assert report["lanes"] == 1
    for fn, row in report["functions"].items():
        assert row["batch work bytes"] == row["work bytes"], (fn, row)     # no lanes: a state's work array
        assert row["_work"] <= row["one state"], (fn, row)


def test_stack_command_errors_are_one_line(tmp_path, in_parts):
    folder, _, _ = in_parts
    runner = CliRunner()
    result = runner.invoke(main, ["stack", str(tmp_path)])
    assert result.exit_code == 2 and "manifest.json" in result.output and len(result.output.strip().splitlines()) == 1
    result = runner.invoke(main, ["stack", str(folder), "--cc", "no-such-cc-here"])
    assert result.exit_code == 2 and "no-such-cc-here" in result.output and len(result.output.strip().splitlines()) == 1
    if shutil.which("clang"):                       # no -fcallgraph-info: said in one line
        result = runner.invoke(main, ["stack", str(folder), "--cc", "clang"])
        assert result.exit_code == 2 and "GCC 10" in result.output and len(result.output.strip().splitlines()) == 1
