"""Pinocchio's local convention (symgen/kinematics.py ``local_frames``: body frames turned so that
each joint axis is z, 10-number inertias, motions and forces as 3-vectors): the CRBA
(``crba_local``) and RNEA (``rnea_local``) give the body-frame algorithms' M and tau on joints of
every kind (revolute about general and coordinate axes, continuous, prismatic, a free-flyer),
with runtime inertial parameters and any gravity, and the robots whose builds print them."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from symgen import load_urdf, robots
from symgen import quantities as Q
from symgen.algorithms.crba import crba, crba_local
from symgen.algorithms.rnea import rnea, rnea_local
from symgen.algorithms.coriolis import coriolis, coriolis_local
from symgen.algorithms.regressor import robot_parameters
from symgen.backend import NUMERIC
from symgen.codegen import program as P
from symgen.codegen import symbolic as S
from symgen.kinematics import with_parameters
from symgen.urdf import parse_urdf_string

pytestmark = pytest.mark.timeout(300)
ARM4 = Path(__file__).resolve().parent.parent / "symgen" / "examples" / "arm4.urdf"

MIXED = """<robot name="mixed">
  <link name="base"/>
  <link name="a"><inertial><origin xyz="0.1 0.02 -0.03" rpy="0.3 -0.2 0.1"/><mass value="2"/>
    <inertia ixx="0.02" ixy="0.001" ixz="-0.002" iyy="0.03" iyz="0.0015" izz="0.025"/></inertial></link>
  <link name="b"><inertial><origin xyz="0 0.05 0.1"/><mass value="1.5"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.012" iyz="0" izz="0.008"/></inertial></link>
  <link name="c"><inertial><origin xyz="0.02 0 0.01"/><mass value="0.7"/>
    <inertia ixx="0.004" ixy="0.0002" ixz="0" iyy="0.005" iyz="0" izz="0.003"/></inertial></link>
  <link name="d"><inertial><origin xyz="0 0 0.04"/><mass value="0.4"/>
    <inertia ixx="0.001" ixy="0" ixz="0" iyy="0.001" iyz="0" izz="0.0005"/></inertial></link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="a"/><origin xyz="0 0 0.1" rpy="0.1 0.2 0.3"/>
    <axis xyz="0.3 -0.5 0.8"/><limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
  <joint name="j2" type="prismatic"><parent link="a"/><child link="b"/><origin xyz="0.2 0.1 0" rpy="0 1.5707963267948966 0"/>
    <axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
  <joint name="j3" type="continuous"><parent link="b"/><child link="c"/><origin xyz="0 0.3 0.05"/>
    <axis xyz="1 0 0"/></joint>
  <joint name="j4" type="prismatic"><parent link="a"/><child link="d"/><origin xyz="-0.1 0 0.2" rpy="0.4 0 -0.6"/>
    <axis xyz="0.6 0.8 0"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
</robot>"""


def _cases():
    return [("mixed", parse_urdf_string(MIXED)), ("mixed free-flyer", parse_urdf_string(MIXED, floating_base=True)),
            ("arm4", load_urdf(ARM4)), ("serial7", robots.make("serial", 7, 3)), ("quadruped8", robots.make("quadruped", 8))]


@pytest.mark.parametrize("name,robot", _cases(), ids=lambda x: x if isinstance(x, str) else "")
def test_local_crba_equals_the_body_frame_crba(name, robot):
    for seed in range(4):
        state = Q.random_state(np.random.default_rng(seed), robot.nq, robot.nv, parameters=robot_parameters(robot))
        for theta in (None, state["params"]):
            r = with_parameters(robot, theta)
            ref = crba(r, state["q"], NUMERIC)
            got = crba_local(r, state["q"], NUMERIC)
            assert np.abs(got - ref).max() <= 1e-12 * np.abs(ref).max(), f"{name} seed {seed} params {theta is not None}"


@pytest.mark.parametrize("name,robot", _cases(), ids=lambda x: x if isinstance(x, str) else "")
def test_local_rnea_equals_the_body_frame_rnea(name, robot):
    for seed in range(4):
        state = Q.random_state(np.random.default_rng(50 + seed), robot.nq, robot.nv, parameters=robot_parameters(robot))
        gravity = tuple(np.random.default_rng(seed).normal(size=3) * 5)
        for theta in (None, state["params"]):
            r = with_parameters(robot, theta)
            args = (state["q"], state["qd"], state["qdd"], NUMERIC)
            ref, got = rnea(r, *args, gravity=gravity), rnea_local(r, *args, gravity=gravity)
            assert np.abs(got - ref).max() <= 1e-12 * np.abs(ref).max(), f"{name} seed {50 + seed}"


@pytest.mark.parametrize("name,robot", _cases(), ids=lambda x: x if isinstance(x, str) else "")
def test_local_algorithm_1_equals_the_body_frame_algorithm_1(name, robot):
    """M, Mdot and C, free-flyer included (its columns turn with the whole base velocity, moved
    back up the free bodies' frames)."""
    for seed in range(3):
        state = Q.random_state(np.random.default_rng(80 + seed), robot.nq, robot.nv, parameters=robot_parameters(robot))
        for theta in (None, state["params"]):
            r = with_parameters(robot, theta)
            for what, ref, got in zip(("M", "Mdot", "C"), coriolis(r, state["q"], state["qd"], NUMERIC),
                                      coriolis_local(r, state["q"], state["qd"], NUMERIC)):
                assert np.abs(got - ref).max() <= 1e-11 * np.abs(ref).max(), f"{name} {what} seed {80 + seed}"


def test_local_variants_are_traced_only_where_they_can_win():
    """General axes (every constant rotation dense): not traced; coordinate axes: traced."""
    from symgen.kinematics import local_frames_pay
    from symgen.quantities import sweeps

    assert not local_frames_pay(robots.make("serial", 8, 1)) and local_frames_pay(load_urdf(ARM4))
    for run in (sweeps._crba_local, sweeps._rnea_local, sweeps._algorithm1_local, sweeps._all_terms_local):
        assert run.applies is local_frames_pay


def test_local_crba_traced_with_symbolic_parameters_evaluates_right():
    """A --parametric trace (inertias as symbols) of the local CRBA, evaluated: the reference M."""
    robot = parse_urdf_string(MIXED)
    fn = S.program_for(robot, "M", Q.SweepOptions(parametric=True))
    state = Q.random_state(np.random.default_rng(9), robot.nq, robot.nv, parameters=robot_parameters(robot))
    got = P.evaluate(fn, {"q": state["q"], "params": state["params"]})
    ref = Q.evaluate(robot, "M", state)
    got = got[0] if isinstance(got, (tuple, list)) else got
    assert np.abs(np.asarray(got).reshape(ref.shape) - ref).max() <= 1e-12 * np.abs(ref).max()


def test_arms_print_the_local_crba():
    """Where it costs least (an arm with coordinate axes) the build prints it: fewer operations
    than either other route."""
    from dataclasses import replace

    from symgen.quantities import sweeps

    robot = load_urdf(ARM4)
    costs = {}
    for run in (sweeps._crba, sweeps.in_body_frames(sweeps._crba, ""), sweeps._crba_local):
        fn = S._trace_sweep(robot, replace(Q.SWEEPS["crba"], run=run, variants=()), ("M",), S.input_symbols(robot),
                            Q.SweepOptions(), True, None)[0]["M"]
        costs[run.__name__] = P.cost(S.optimize(fn))
    assert costs["_crba_local"] < min(v for k, v in costs.items() if k != "_crba_local"), costs
    assert P.cost(S.program_for(robot, "M")) == costs["_crba_local"]
