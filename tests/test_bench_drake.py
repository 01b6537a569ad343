"""``symgen bench --drake``: Drake's MultibodyPlant from Python as a rival (symgen.bench.drake).
Before timing, the package's M, g, τ and q̈ equal Drake's on the same URDF (q and v mapped by
joint name; the URDF's joint damping, which Drake applies, on our side as passive_force) to 1e-9;
the bench then records Drake's times beside the binding's Python call. A floating-base package is
refused in a note. Tiny repeats: the numbers of a CI run are not figures."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest.importorskip("pydrake")

from symgen.bench import bench_package  # noqa: E402
from symgen.codegen.build import BuildOptions, build  # noqa: E402
from symgen.urdf import load_urdf  # noqa: E402

ARM4 = Path(__file__).resolve().parents[1] / "symgen" / "examples" / "arm4.urdf"
FUNCTIONS = ("M", "g", "tau", "qdd")


def _package(tmp_path, urdf, name, floating=False):
    robot = load_urdf(urdf, floating_base=floating)
    return build(robot, tmp_path, name=name, opts=BuildOptions(quantities=FUNCTIONS + (("tau_p",) if robot.damping else ()),
                                                                 copt="-O1")).path


def _bench(path, urdf):
    return bench_package(path, urdf=urdf, quantities=FUNCTIONS, pin_cpp="off", repeats=1, min_time=0.001,
                         c_batch=0, drake=True)


@pytest.mark.parametrize("damped", [False, True])
def test_drake_agrees_then_is_timed_beside_the_binding(tmp_path, damped):
    urdf = ARM4
    if damped:                                      # each joint with a damper (Drake applies it; Pinocchio does not)
        text = re.sub(r"(<joint name=\"joint(\d)\" type=\"revolute\">)",
                      lambda m: m.group(1) + f'<dynamics damping="{0.1 * int(m.group(2))}"/>', ARM4.read_text())
        urdf = tmp_path / "arm4_damped.urdf"
        urdf.write_text(text)
    result = _bench(_package(tmp_path, urdf, "arm4d" if damped else "arm4"), urdf)
    assert "drake" in result, result["notes"]
    assert set(result["drake"]["check"]) == set(FUNCTIONS)
    assert max(result["drake"]["check"].values()) <= 1e-9, result["drake"]["check"]
    for qty in FUNCTIONS:
        us = result["us"][qty]
        assert us["drake_py"] > 0 and us["c_py_single"] > 0, (qty, us)
        assert f"drake_py/c_py_single" in result["ratios"][qty]


def test_a_floating_base_package_is_left_out_in_a_note(tmp_path):
    result = _bench(_package(tmp_path, ARM4, "arm4ff", floating=True), ARM4)
    assert "drake" not in result
    assert "fixed-base" in " ".join(str(v) for v in result["notes"].values())
