"""MJCF ``<equality><connect>`` read as a loop (symgen.mjcf_loops): tests/data/mjcf/four_bar_connect.xml
is the URDF+ four-bar written as MJCF at a closed configuration q* (MuJoCo's connect holds at
qpos0), so its q is the URDF+ four-bar's q - q*. Its M̄, C̄, τ̄ and forward dynamics (numeric
reference, generated NumPy and C) match the URDF+ four-bar's and Pinocchio's spanning tree projected
by its own G(q), Ġ (symgen.oracle_loops) to 1e-9; unsupported connects (and a weld that would lock
it) are refused in one line (exit code 2); welds and a free-flyer: tests/test_mjcf_weld.py. Every comparison names its seed."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import symgen
from symgen.errors import URDFError

from support import rel_error
from test_loops import _states

pytest.importorskip("mujoco")

HERE = Path(__file__).parent / "data"
MJCF = HERE / "mjcf" / "four_bar_connect.xml"
URDF = HERE / "urdfplus" / "four_bar.urdf"
Q_STAR = np.array([0.6, -0.28932408559675565, 1.281555949216235])      # the configuration the MJCF is written in


def _load(path):
    from symgen.mjcf import load_robot

    return load_robot(path)


def test_connect_reads_as_the_urdf_loop():
    robot, urdf = _load(MJCF), symgen.load_urdf(URDF)
    assert robot.joint_names == urdf.joint_names and robot.velocity_joint_names == ("crank_joint",)
    assert robot.loops == ("pin",) and robot.nq == 3 and robot.nv == 1
    c, u = robot.system.closures[0], urdf.system.closures[0]
    # the anchor in body1's frame; the point in body2 from qpos0 (MuJoCo's eq_data[3:6]) = the URDF's
    assert np.allclose(c.pred.translation, u.pred.translation, atol=1e-12)
    assert np.allclose(c.succ.translation, u.succ.translation, atol=1e-12)
    assert np.abs(robot.system.loop_residual(np.zeros(3))).max() <= 1e-12        # qpos0 is closed


def test_mjcf_four_bar_matches_the_urdf_four_bar_and_pinocchio(pin):
    from symgen.oracle_loops import oracle_for

    robot, urdf = _load(MJCF).system, symgen.load_urdf(URDF)
    oracle = oracle_for(urdf, pin.buildModelFromUrdf(str(URDF)), pin)
    seed, states = _states("mjcf-connect", urdf.system, count=4)
    for t, (q, v, a, tau) in enumerate((s["q"], s["v"], s["a"], s["tau"]) for s in states):
        ctx = f"seed {seed} state #{t}"
        qm = q - Q_STAR
        assert np.abs(robot.loop_residual(qm)).max() <= 1e-9, ctx
        oracle.at(q)
        for ours, ref in ((robot.mass_matrix(qm), oracle.mass_matrix(q)),
                          (robot.coriolis_matrix(qm, v), oracle.coriolis(q, v)),
                          (robot.inverse_dynamics(qm, v, a), oracle.inverse_dynamics(q, v, a)),
                          (robot.forward_dynamics(qm, v, tau), urdf.system.forward_dynamics(q, v, tau))):
            assert rel_error(ours, ref) <= 1e-9, f"{ctx}: {rel_error(ours, ref):.2e}"
        fd = robot.forward_dynamics(qm, v, tau)
        assert rel_error(robot.inverse_dynamics(qm, v, fd), tau) <= 1e-9, ctx


def test_generated_package_of_the_mjcf_four_bar(pin, tmp_path_factory):
    from symgen.codegen.build import BuildOptions, build, import_package
    from symgen.oracle_loops import oracle_for

    robot, urdf = _load(MJCF), symgen.load_urdf(URDF)
    opts = BuildOptions(quantities=("M", "C", "tau", "qdd"), copt="-O0", jobs=2)
    pkg = import_package(build(robot, tmp_path_factory.mktemp("mjcf_loops"), opts=opts).path)
    assert pkg.loops == ("pin",) and pkg.velocity_joint_names == ("crank_joint",)
    oracle = oracle_for(urdf, pin.buildModelFromUrdf(str(URDF)), pin)
    seed, states = _states("mjcf-connect-package", urdf.system, 3)
    for mod in (pkg.numpy, pkg.c):
        for t, (q, v, a, tau) in enumerate((s["q"], s["v"], s["a"], s["tau"]) for s in states):
            ctx = f"{mod.__name__} seed {seed} state #{t}"
            qm = q - Q_STAR
            oracle.at(q)
            assert rel_error(mod.mass_matrix(qm), oracle.mass_matrix(q)) <= 1e-9, ctx
            assert rel_error(mod.coriolis_matrix(qm, v), oracle.coriolis(q, v)) <= 1e-9, ctx
            assert rel_error(mod.inverse_dynamics(qm, v, a), oracle.inverse_dynamics(q, v, a)) <= 1e-9, ctx
            assert rel_error(mod.forward_dynamics(qm, v, tau), urdf.system.forward_dynamics(q, v, tau)) <= 1e-9, ctx


@pytest.mark.parametrize("change, element", [
    ('<connect name="pin" body1="coupler" body2="rocker" anchor="0.7 0 0"/>',
     "<equality>/<weld name='pin'>"),          # a weld of the three-hinge four-bar locks it (tests/test_mjcf_weld.py)
    ('<connect name="pin" body1="coupler" body2="rocker" anchor="0.7 0 0" active="false"/>',
     "<equality>/<connect name='pin'>"),
])
def test_refusals_are_one_line(tmp_path, change, element):
    from click.testing import CliRunner

    from symgen.cli import main

    text = MJCF.read_text()
    line = '<connect name="pin" body1="coupler" body2="rocker" anchor="0.7 0 0"/>'
    new = change if "weld" not in element else '<weld name="pin" body1="coupler" body2="rocker"/>'
    path = tmp_path / "bad.xml"
    path.write_text(text.replace(line, new))
    with pytest.raises(URDFError) as info:
        _load(path)
    assert element in str(info.value) and "\n" not in str(info.value)
    result = CliRunner().invoke(main, ["info", str(path)])
    assert result.exit_code == 2 and element in result.output
