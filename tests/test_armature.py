"""Armature (reflected rotor inertia, Pinocchio's ``model.armature``): added to M's diagonal, so
it enters M, tau, qdd, M^-1, Slotine-Li and the forward-dynamics derivatives. Every registered
quantity, in both coordinate choices, against Pinocchio with ``model.armature`` set (the oracle
sets it from the robot), on arm4 and on solo12 with its free-flyer; the package records it."""
from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from support import compare_with_pinocchio, erd_path
from symgen import OptionError
from symgen import quantities as Q
from symgen.cli import main
from symgen.armature import with_armature
from symgen.urdf import load_urdf, urdf_string

from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[1] / "symgen" / "examples" / "arm4.urdf"


@pytest.mark.pinocchio
def test_every_quantity_matches_pinocchio_with_armature_on_arm4(pin):
    robot = with_armature(load_urdf(EXAMPLE), "0.05")
    robot = with_armature(robot, f"{robot.joint_names[2]}=0.3")       # one joint told apart
    assert robot.armature_vector[2] == 0.3 and robot.armature_vector[0] == 0.05
    compare_with_pinocchio(robot, pin.buildModelFromXML(urdf_string(robot)), "arm4-armature")


@pytest.mark.pinocchio
def test_every_quantity_matches_pinocchio_with_armature_on_solo12(pin):
    robot = load_urdf(erd_path("solo_description/robots/solo12.urdf"), floating_base=True)
    robot = with_armature(robot, "FL_KFE=0.02,HR_HAA=0.01,FR_HFE=0.015")
    assert robot.armature_vector[:6].tolist() == [0.0] * 6
    keys = ["M", "tau", "qdd", "Minv", "dqdd", "dtau", "tau_sl", "Y", "C", "MCg"]
    keys = [k for k in keys if k in Q.QUANTITIES]
    compare_with_pinocchio(robot, pin.buildModelFromXML(urdf_string(robot), pin.JointModelFreeFlyer()),
                           "solo12-armature", keys=keys, states=2)


def test_armature_changes_M_by_its_diagonal_and_tau_by_armature_times_qdd():
    """An identity of its own: M_arm - M = diag(armature), tau_arm - tau = armature * qdd."""
    base = load_urdf(EXAMPLE)
    robot = with_armature(base, "0.1")
    rng = np.random.default_rng(7)
    state = Q.random_state(rng, base.nq, base.nv)
    for frame in Q.FRAMES:
        opts = Q.SweepOptions(frame=frame)
        dM = Q.evaluate(robot, "M", state, opts) - Q.evaluate(base, "M", state, opts)
        assert np.allclose(dM, 0.1 * np.eye(base.n), rtol=0, atol=1e-12), ("seed 7", frame)
        dtau = Q.evaluate(robot, "tau", state, opts) - Q.evaluate(base, "tau", state, opts)
        assert np.allclose(dtau, 0.1 * state["qdd"], rtol=0, atol=1e-10), ("seed 7", frame)


def test_armature_option_is_checked():
    robot = load_urdf(EXAMPLE)
    for bad, why in (("-1", "not a number >= 0"), ("nope=1", "no joint 'nope'"), ("x", "not a number"),
                     (f"{robot.joint_names[0]}", "not a number"), (f"b,{robot.joint_names[0]}=1", "not joint=value")):
        with pytest.raises(OptionError, match=why):
            with_armature(robot, bad)


def test_build_records_the_armature_and_verify_checks_it(tmp_path):
    res = CliRunner().invoke(main, ["build", str(EXAMPLE), "--out", str(tmp_path), "--quiet", "--jobs", "1", "--armature", "0.02",
                                    "--quantities", "M,tau,qdd,Minv,tau_sl,Y"])
    assert res.exit_code == 0, res.output
    manifest = json.loads((tmp_path / "arm4" / "manifest.json").read_text())
    assert manifest["armature"] == [0.02] * 4
    assert "armature: 0.02 0.02 0.02 0.02" in (tmp_path / "arm4" / "arm4.h").read_text()
    res = CliRunner().invoke(main, ["verify", str(tmp_path / "arm4"), "--model", str(EXAMPLE), "--trials", "2"])
    assert res.exit_code == 0, res.output
    assert "Y @ parameters = Slotine-Li" in res.output and "vs Pinocchio: mass_matrix " in res.output
    res = CliRunner().invoke(main, ["build", str(EXAMPLE), "--out", str(tmp_path), "--armature", "j=1"])
    assert res.exit_code == 2 and res.output.count("\n") == 1 and "--armature: no joint 'j'" in res.output


@pytest.mark.parametrize("floating", [False, True], ids=["arm4", "solo12"])
def test_every_variant_of_every_sweep_adds_the_armature_as_the_main_run_does(floating):
    """The variants a build may print instead (ABA in both frames, the dedicated M^-1, the column
    loops, Slotine-Li in ground coordinates ...) each form their own pivot or diagonal: each
    must agree with the main run, which the tests above hold against Pinocchio."""
    from symgen.backend import NUMERIC

    robot = (load_urdf(erd_path("solo_description/robots/solo12.urdf"), floating_base=True) if floating
             else load_urdf(EXAMPLE))
    robot = with_armature(robot, "0.07")
    rng = np.random.default_rng(13)
    state = Q.random_state(rng, robot.nq, robot.nv)
    opts = Q.SweepOptions()
    checked = 0
    for sweep in Q.SWEEPS.values():
        if not sweep.variants or sweep.name not in {x.sweep for x in Q.QUANTITIES.values()}:
            continue
        args = {a: robot.check_state(a, state[a]) for a in sweep.arguments}
        main = sweep.run(robot, args, NUMERIC, opts)
        tol = 1e-9
        if sweep.name in {Q.QUANTITIES[k].sweep for k in Q.operational_space.KEYS}:    # J M^-1 J^T's conditioning
            tol = Q.tolerance(Q.QUANTITIES["Lambda"], Q.evaluate(robot, "M", state), tol,
                              Q.evaluate(robot, "Lambda", state))
        for variant in sweep.variants:
            if getattr(variant, "reduced", False):          # an embedded robot's (tests/test_cluster_crba.py)
                continue
            other = variant(robot, args, NUMERIC, opts)
            for name, value in main.items():
                if name in other:
                    scale = max(1.0, np.abs(value).max())
                    assert np.abs(np.asarray(other[name]) - value).max() <= tol * scale, \
                        (sweep.name, getattr(variant, "__name__", variant), name, "seed 13")
                    checked += 1
    assert checked >= 6
