"""The generated C on the targets controllers run on, cross-compiled: aarch64 Linux (NEON's double lanes
chosen explicitly) and ARMv7-A Linux (VFPv3, hard float, one lane) under qemu-user give the x86-64
results to 1e-12, batch included; a
Cortex-M7 (no double-precision SIMD: one-state code without vector helpers, NAME_LANES 1) builds
and links against newlib, its one-state functions no larger and using no more stack than with
NAME_NO_LANES. The cross compilers and qemu come from the project's CI script (.ci/run installs
gcc-aarch64-linux-gnu, gcc-arm-linux-gnueabihf, qemu-user, gcc-arm-none-eabi and libnewlib-arm-none-eabi
when missing)."""
from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest

import c_programs as cp
import support

AARCH64 = "aarch64-linux-gnu-gcc"
ARMV7 = "arm-linux-gnueabihf-gcc"
ARM_NONE = "arm-none-eabi-gcc"
M7 = "-mcpu=cortex-m7 -mfpu=fpv5-d16 -mfloat-abi=hard -mthumb"
APT = ("apt-get install gcc-aarch64-linux-gnu gcc-arm-linux-gnueabihf qemu-user gcc-arm-none-eabi libnewlib-arm-none-eabi "
       "(.ci/run does)")


def _require(*tools):
    for tool in tools:
        support.require(tool, shutil.which(tool) is not None, APT)


def _lanes(cc: str, flags: str, folder, name: str) -> int:
    """NAME_LANES as the header defines it for compiler ``cc`` with ``flags``."""
    done = subprocess.run([cc, *flags.split(), f"-I{folder}", "-dM", "-E", "-x", "c", "-"], input=f'#include "{name}.h"\n',
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    found = re.search(rf"^#define {name.upper()}_LANES (\d+)", done.stdout, re.M)
    assert found, f"{name}.h defines no {name.upper()}_LANES for {cc} {flags}"
    return int(found.group(1))


def test_lanes_follow_the_target(c_package):
    """8 with AVX-512, 4 with AVX, 2 on SSE2 and aarch64's NEON; 1 where the target has no
    double-precision SIMD (Cortex-M, 32-bit ARM)."""
    _require(AARCH64, ARM_NONE, ARMV7)
    folder, _, _ = c_package("arm4")
    assert _lanes("gcc", "-mavx512f", folder, "arm4") == 8
    assert _lanes("gcc", "-mavx", folder, "arm4") == 4
    assert _lanes("gcc", "", folder, "arm4") == 2
    assert _lanes(AARCH64, "", folder, "arm4") == 2
    assert _lanes(ARM_NONE, M7, folder, "arm4") == 1
    assert _lanes(ARM_NONE, "-mcpu=cortex-a9 -mfpu=neon -mfloat-abi=hard", folder, "arm4") == 1
    assert _lanes(ARMV7, "-march=armv7-a -mfpu=neon -mfloat-abi=hard", folder, "arm4") == 1
    assert _lanes("gcc", "-DARM4_LANES=4", folder, "arm4") == 4, "an explicit NAME_LANES is kept"


@pytest.mark.parametrize("cc,qemu,flags", [
    (AARCH64, "qemu-aarch64", ""),
    # ARMv7-A Linux (a Cortex-A9 / A7 controller board): VFPv3 doubles, hard float, NAME_LANES 1
    (ARMV7, "qemu-arm", "-march=armv7-a -mfpu=vfpv3-d16 -mfloat-abi=hard"),
], ids=["aarch64", "armv7"])
def test_linux_arm_under_qemu_equals_x86_64(c_package, tmp_path, cc, qemu, flags):
    _require(cc, qemu)
    folder, pkg, robot = c_package("arm4_ff")
    manifest = json.loads((folder / "manifest.json").read_text())
    lie = cp.has_lie(folder, "arm4_ff")
    seed, states = cp.states_of(pkg, robot, manifest, "arm4_ff", count=4)
    (tmp_path / "driver.c").write_text(cp.driver(manifest, states, lie), encoding="utf-8")
    sources = [tmp_path / "driver.c", folder / "arm4_ff.c"]
    native = cp.run_json([cp.compile_program("gcc", sources, "-O2 -std=gnu99", tmp_path / "x86", includes=[folder])])
    arm = cp.compile_program(cc, sources, f"-O2 -std=gnu99 -static {flags}", tmp_path / "arm", includes=[folder])
    found = cp.run_json([qemu, arm])
    for what, want in (("x86-64", native), ("NumPy", cp.expected(pkg, manifest, states, lie))):
        bad = {k: e for k, e in cp.worst(found, want).items() if not e <= 1e-12}
        assert not bad, f"arm4_ff with {cc} ({qemu}) against {what} (seed {seed}): relative error per function {bad}"
    assert any(k.endswith("/batch") for k in found), "the batches ran"


def _sizes(obj):
    """{function: bytes of code} of an object file, static helpers included (arm-none-eabi-nm)."""
    out = subprocess.run(["arm-none-eabi-nm", "-S", "--size-sort", str(obj)], capture_output=True, text=True,
                         timeout=120, check=True).stdout
    return {p[3]: int(p[1], 16) for p in (line.split() for line in out.splitlines()) if len(p) == 4 and p[2] in "tT"}


def _stacks(su):
    """{function: bytes of stack} from gcc's -fstack-usage file."""
    out = {}
    for line in su.read_text().splitlines():
        where, size, _ = line.split("\t")
        out[where.rsplit(":", 1)[-1]] = int(size)
    return out


def test_cortex_m7_one_state_code_is_no_larger_than_without_lanes(c_package, tmp_path):
    _require(ARM_NONE, "arm-none-eabi-nm")
    folder, _, _ = c_package("arm4")
    found = {}
    for label, extra in (("default", ""), ("no_lanes", "-DARM4_NO_LANES")):
        (tmp_path / label).mkdir()
        obj = cp.compile_program(ARM_NONE, [folder / "arm4.c"], f"{M7} -O2 -std=c99 -fstack-usage {extra} -c",
                                 tmp_path / label / "arm4.o", includes=[folder], libs="")
        found[label] = (_sizes(obj), _stacks(tmp_path / label / "arm4.su"))
    (code, stack), (code0, stack0) = found["default"], found["no_lanes"]
    mass = {f: (code[f], stack.get(f)) for f in code if f.startswith("arm4_mass_matrix")}
    assert sum(code.values()) <= sum(code0.values()), \
        f"arm4.o on Cortex-M7: {sum(code.values())} bytes of code against {sum(code0.values())} with NO_LANES; M: {mass}"
    worse = {f: (stack[f], stack0.get(f)) for f in stack if stack[f] > stack0.get(f, 0)}
    assert not worse, f"stack on Cortex-M7 (default, NO_LANES): {worse}; M: {mass}"
    # and a whole program links against newlib with libm only
    (tmp_path / "main.c").write_text('#include "arm4.h"\nint main(void) { double q[ARM4_NQ] = {0}, '
                                     'M[ARM4_MASS_MATRIX_M_SIZE]; arm4_mass_matrix(q, M); return M[0] > 0; }\n')
    cp.compile_program(ARM_NONE, [tmp_path / "main.c", folder / "arm4.c"], f"{M7} -O2 -std=c99 --specs=nosys.specs",
                       tmp_path / "arm4.elf", includes=[folder])
