"""Axisymmetric leaf rotors (symgen/axisymmetric.py): the inertial sweeps take their joint rotation
as the identity, so GRBDA's geared rotors' angles leave the generated M, C, tau; what sees the
rotor's own frame (frame placements and Jacobians) keeps the real rotation. Checked against
Pinocchio's spanning tree of GRBDA's Mini Cheetah (tests/data/grbda), and on a copy whose two
rotors are made asymmetric, which must keep their rotations."""
from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pytest

import symgen
from symgen import quantities as Q
from symgen.axisymmetric import inertial_view, is_axisymmetric, turns
from symgen.codegen.build import BuildOptions, build, import_package
from symgen.verify import _pinocchio
from support import rel_error, seeded_states

GRBDA = Path(__file__).parent / "data" / "grbda"
LEGS = ("FL", "FR", "HL", "HR")
CHEETAH_ROTORS = {f"{leg}_{part}_rotor" for leg in LEGS for part in ("abad", "hip", "knee")}


def _load(path):
    with warnings.catch_warnings():                 # GRBDA's hip inertias break the triangle inequality
        warnings.simplefilter("ignore")
        return symgen.load_urdf(path)


def _rotors(robot):
    full = robot.full
    return {full.bodies[i].name for i in full.axisymmetric}



def _asymmetric_cheetah(tmp_path):
    """The Mini Cheetah with FR_abad_rotor's transverse moments made unequal and FL_hip_rotor's
    centre of mass moved 3 mm off its axis (y)."""
    text = (GRBDA / "mini_cheetah.urdf").read_text()

    def edit(link, old, new):
        nonlocal text
        block = re.search(rf'<link name="{link}">.*?</link>', text, re.S).group(0)
        assert old in block
        text = text.replace(block, block.replace(old, new, 1))

    edit("FR_abad_rotor", 'iyy="3.2999999999999996e-05"', 'iyy="4.1e-05"')
    edit("FL_hip_rotor", '<origin xyz="0. 0. 0."/>', '<origin xyz="0.003 0. 0."/>')
    path = tmp_path / "mini_cheetah_asymmetric.urdf"
    path.write_text(text)
    return path


def test_the_detection_finds_exactly_grbdas_rotors():
    cheetah, humanoid = _load(GRBDA / "mini_cheetah.urdf"), _load(GRBDA / "mit_humanoid.urdf")
    assert _rotors(cheetah) == CHEETAH_ROTORS
    found = _rotors(humanoid)
    assert len(found) == 18 and all(name.endswith("_rotor") for name in found), sorted(found)
    rotors = {b.name for b in humanoid.full.bodies if b.name.endswith("_rotor")}
    assert found == rotors
    # only the inertial sweeps' view leaves them unturned
    full = cheetah.full
    k = full.axisymmetric[0]
    assert turns(full, k) and not turns(inertial_view(full), k)
    assert all(turns(inertial_view(full), i) for i in range(full.n) if i not in full.axisymmetric)


def test_the_symmetry_check_per_body():
    z = (0.0, 0.0, 1.0)
    assert is_axisymmetric(z, 0.05, (0, 0, 0.01), np.diag([2e-5, 2e-5, 6e-5]))
    assert is_axisymmetric(z, 0.0, (0, 0, 0), np.diag([2e-5, 2e-5, 6e-5]))      # a pure rotor
    assert not is_axisymmetric(z, 0.05, (0, 0, 0), np.diag([2e-5, 2.1e-5, 6e-5]))
    assert not is_axisymmetric(z, 0.05, (1e-6, 0, 0), np.diag([2e-5, 2e-5, 6e-5]))
    # the axis a principal axis of a turned inertia, the two others equal
    a = np.array([1.0, 1.0, 0.0]) / np.sqrt(2)
    Ic = 3e-5 * np.outer(a, a) + 1e-5 * (np.eye(3) - np.outer(a, a))
    assert is_axisymmetric(a, 0.1, 0.02 * a, Ic)
    assert not is_axisymmetric((1.0, 0.0, 0.0), 0.1, (0, 0, 0), Ic)


@pytest.mark.parametrize("frame", ["body", "ground"])
def test_asymmetric_rotors_keep_their_rotation_and_match_pinocchio(pin, tmp_path, frame):
    robot = _load(_asymmetric_cheetah(tmp_path))
    assert _rotors(robot) == CHEETAH_ROTORS - {"FR_abad_rotor", "FL_hip_rotor"}
    oracle, note = _pinocchio(robot)
    assert oracle is not None, note
    seed, states = seeded_states(f"asymmetric-{frame}", robot, 2, unit_base=True)
    opts = Q.SweepOptions(frame=frame)
    for t, state in enumerate(states):
        for key in ("M", "C", "tau", "g", "qdd", "Minv", "T", "hg"):
            x = Q.QUANTITIES[key]
            at = x.oracle_state(state) if x.oracle_state else state
            tol = Q.tolerance(x, oracle.mass_matrix(at["q"]))
            err = rel_error(Q.evaluate(robot, key, at, opts), x.pinocchio(oracle, at))
            assert err <= tol, f"{frame} {x.function}: rel. error {err:.2e} > {tol:.1e}, seed {seed} state #{t}"


def test_parameters_at_run_time_keep_the_rotors_rotation(pin):
    """With inertial parameters as an argument (``--parametric``; here the numeric reference fed
    ``params``) a rotor's inertia need not be symmetric: an asymmetric FR_abad_rotor given through
    theta still matches Pinocchio with the same parameters."""
    from symgen.algorithms.regressor import robot_parameters

    robot = _load(GRBDA / "mini_cheetah.urdf")
    full = robot.full
    theta = robot_parameters(full).copy()
    k = full.inertial_bodies.index(next(i for i, b in enumerate(full.bodies) if b.name == "FR_abad_rotor"))
    theta[10 * k + 6] *= 1.5                                            # its Iyy: no longer symmetric
    theta[10 * k + 2] = theta[10 * k] * 0.004                           # its CoM off the axis (m cy)
    oracle, note = _pinocchio(robot)
    assert oracle is not None, note
    oracle.set_parameters(theta)
    seed, states = seeded_states("parametric", robot, 2, unit_base=True)
    for t, state in enumerate(states):
        state["params"] = theta
        for frame in ("body", "ground"):
            for key in ("M", "C", "tau", "qdd"):
                x = Q.QUANTITIES[key]
                tol = Q.tolerance(x, oracle.mass_matrix(state["q"]))
                err = rel_error(Q.evaluate(robot, key, state, Q.SweepOptions(frame=frame)), x.pinocchio(oracle, state))
                assert err <= tol, f"{frame} {x.function}: rel. error {err:.2e} > {tol:.1e}, seed {seed} state #{t}"


@pytest.fixture(scope="module")
def cheetah(tmp_path_factory):
    robot = _load(GRBDA / "mini_cheetah.urdf")
    out = build(robot, tmp_path_factory.mktemp("rotor"),
                opts=BuildOptions(quantities=("M", "C", "tau", "oMf", "J"), copt="-O0", jobs=2))
    return robot, out, import_package(out.path)


def test_generated_code_has_no_trig_of_the_rotors(cheetah):
    """12 revolute joints besides the 12 rotors: one sin and one cos each in M, C and tau; the
    frame functions still turn every rotor (24 more)."""
    robot, out, pkg = cheetah
    full = robot.full
    joints = sum(1 for i, b in enumerate(full.bodies)
                 if b.joint_type in ("revolute", "continuous") and not b.group and i not in full.axisymmetric)
    assert joints == 12
    for function in ("mass_matrix", "coriolis_matrix", "inverse_dynamics"):
        assert out.ops[function]["trig"] == 2 * joints, (function, out.ops[function])
    assert out.ops["frame_placement"]["trig"] == 2 * (joints + len(CHEETAH_ROTORS))


@pytest.mark.parametrize("backend", ["numpy", "c"])
def test_generated_code_matches_pinocchio_and_rotor_frames_follow_their_angle(pin, cheetah, backend):
    robot, out, pkg = cheetah
    mod = getattr(pkg, backend)
    oracle, note = _pinocchio(robot, frames=tuple(pkg.frames))
    assert oracle is not None, note
    seed, states = seeded_states(f"generated-{backend}", robot, 2, unit_base=True)
    for t, state in enumerate(states):
        for key in ("M", "C", "tau", "oMf", "J"):
            x = Q.QUANTITIES[key]
            tol = Q.tolerance(x, oracle.mass_matrix(state["q"]))
            err = rel_error(Q.call(mod, key, state), x.pinocchio(oracle, state))
            assert err <= tol, f"{backend} {x.function}: rel. error {err:.2e} > {tol:.1e}, seed {seed} state #{t}"
    # FR_abad_rotor (on the torso) turns by 6 times its abad joint's angle
    frame = list(pkg.frames).index("FR_abad_rotor")
    q = states[0]["q"]
    q2 = q.copy()
    q2[7 + list(robot.joint_names[1:]).index("torso_to_FR_abad_j")] += 0.1
    R, R2 = mod.frame_placement(q)[frame][:3, :3], mod.frame_placement(q2)[frame][:3, :3]
    angle = np.arccos(np.clip((np.trace(R.T @ R2) - 1) / 2, -1, 1))
    assert abs(angle - 0.6) < 1e-9, f"seed {seed}: the rotor frame turned {angle} rad, not 0.6"


def test_a_parametric_build_keeps_the_rotors_trig(tmp_path):
    """``--parametric``: the inertias are symbols, so no rotor is turn-free (24 joints' sin and cos)."""
    robot = _load(GRBDA / "mini_cheetah.urdf")
    out = build(robot, tmp_path, opts=BuildOptions(quantities=("M",), parametric=True, compile=False, jobs=2))
    assert out.ops["mass_matrix"]["trig"] == 2 * (12 + len(CHEETAH_ROTORS)), out.ops["mass_matrix"]


def test_info_lists_the_rotors():
    from click.testing import CliRunner

    from symgen.cli import main

    result = CliRunner().invoke(main, ["info", str(GRBDA / "mini_cheetah.urdf")])
    assert result.exit_code == 0, result.output
    line = next(x for x in result.output.splitlines() if "axisymmetric leaf rotors" in x)
    assert line.split(": ")[-2].endswith("12") and set(line.split(": ")[-1].split(", ")) == CHEETAH_ROTORS
