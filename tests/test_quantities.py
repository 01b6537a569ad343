"""The registry of quantities (symgen/quantities/): consistent with itself, and every quantity's
numeric evaluation — in both coordinate choices of its sweep, the same algorithm code the
symbolic run prints — equal to its Pinocchio counterpart on real and synthetic robots.

A quantity added to the registry is checked here without a new test: its sweep must yield its
outputs with the registered shapes, and its ``pinocchio`` counterpart must agree to 1e-9.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import symgen
from support import compare_with_pinocchio, erd_path, pin_model_from_robot
from symgen import quantities as Q
from symgen import robots
from symgen.urdf import load_urdf

SYNTHETIC = [("serial", 6, 1), ("tree", 7, 2), ("biped", 4, 3), ("quadruped", 4, 4)]
ERD = ["panda_description/urdf/panda.urdf", "ur_description/urdf/ur5_robot.urdf",
       "solo_description/robots/solo12.urdf"]
STATES = 3
#: the operational-space sweeps
TASK_SWEEPS = {Q.QUANTITIES[k].sweep for k in Q.operational_space.KEYS}


def test_function_names_and_keys_are_unique_and_sweeps_yield_the_registered_outputs():
    functions = [x.function for x in Q.QUANTITIES.values()]
    assert len(set(functions)) == len(functions)
    assert Q.BY_FUNCTION == {x.function: x for x in Q.QUANTITIES.values()}
    tree = robots.make("tree", 3, 0)
    four_bar = symgen.load_urdf(Path(__file__).parent / "data" / "urdfplus" / "four_bar.urdf")
    for x in Q.QUANTITIES.values():
        robot = four_bar if x.key in Q.loops.LOOP_KEYS else tree       # (those are for mechanisms with loops)
        state = Q.random_state(np.random.default_rng(0), robot.nq, robot.nv)
        sweep = Q.SWEEPS[x.sweep]
        assert set(x.arguments) <= set(sweep.arguments) <= set(Q.ARGUMENTS), x.key
        for frame in Q.FRAMES:
            opts = Q.SweepOptions(frame=frame)
            value = Q.evaluate(robot, x.key, state, opts)
            values = value if len(x.outputs) > 1 else (value,)
            for out, v in zip(x.outputs, values):
                assert np.shape(v) == out.shape(robot, opts), (x.key, frame, out.name)


def test_parse_takes_known_keys_in_order_without_repeats_and_refuses_the_rest():
    assert Q.parse(None) == Q.DEFAULT
    assert Q.parse("C, M,C") == ("C", "M")
    assert Q.parse("coriolis_matrix,M,gravity") == ("C", "M", "g")
    with pytest.raises(Q.OptionError, match="--quantities: unknown X"):
        Q.parse("M,X")
    with pytest.raises(Q.OptionError, match="--functions"):
        Q.parse(",", "--functions")


@pytest.mark.pinocchio
@pytest.mark.parametrize("kind,n,seed", SYNTHETIC, ids=[f"{k}{n}" for k, n, _ in SYNTHETIC])
def test_every_quantity_matches_pinocchio_on_synthetic_robots(kind, n, seed):
    robot = robots.make(kind, n, seed)
    compare_with_pinocchio(robot, pin_model_from_robot(robot), f"{kind}{n}-seed{seed}")


@pytest.mark.pinocchio
@pytest.mark.parametrize("relative", ERD, ids=lambda r: r.split("/")[-1][:-5])
def test_every_quantity_matches_pinocchio_on_example_robot_data(pin, relative):
    path = erd_path(relative)
    robot = load_urdf(path)
    from symgen.urdf import urdf_string

    compare_with_pinocchio(robot, pin.buildModelFromXML(urdf_string(robot)), path.stem)


def test_gravity_is_inverse_dynamics_at_rest():
    """g(q) = tau(q, 0, 0), eq. (1) with qd = qdd = 0, in both frames (seed printed)."""
    for kind, n, seed in SYNTHETIC:
        robot = robots.make(kind, n, seed)
        rng = np.random.default_rng(seed)
        q = Q.ARGUMENTS["q"].draw(rng, robot.nq, robot.nv)
        zero = np.zeros(robot.n)
        tau = Q.evaluate(robot, "tau", {"q": q, "qd": zero, "qdd": zero})
        for frame in Q.FRAMES:
            g = Q.evaluate(robot, "g", {"q": q}, Q.SweepOptions(frame=frame))
            assert np.max(np.abs(g - tau)) <= 1e-12 * max(1.0, np.max(np.abs(tau))), (kind, seed, frame)


def test_every_variant_of_a_sweep_computes_what_its_run_computes():
    """The routes a build chooses between by operation count (the regressor's and Slotine-Li's
    ground-coordinate forms) give the same values as the sweep's own run, which is the one
    compared with Pinocchio above (seeds printed)."""
    from symgen.backend import NUMERIC

    with_variants = [s for s in Q.SWEEPS.values() if s.variants]
    assert {s.name for s in with_variants} >= {"regressor", "slotine_li"}
    for kind, n, seed in SYNTHETIC:
        robot = robots.make(kind, n, seed)
        state = Q.random_state(np.random.default_rng(seed), robot.nq, robot.nv)
        for sweep in with_variants:
            args = {a: state[a] for a in sweep.arguments}
            ref = sweep.run(robot, args, NUMERIC, Q.SweepOptions())
            for variant in sweep.variants:
                if getattr(variant, "reduced", False):      # an embedded robot's (tests/test_cluster_crba.py)
                    continue
                tol = 1e-12
                if sweep.name in TASK_SWEEPS:               # solves with M and J M^-1 J^T: their conditioning
                    tol = Q.tolerance(Q.QUANTITIES["Lambda"], Q.evaluate(robot, "M", state), tol,
                                      Q.evaluate(robot, "Lambda", state))
                for name, value in variant(robot, args, NUMERIC, Q.SweepOptions()).items():
                    scale = max(1.0, np.max(np.abs(ref[name])))
                    assert np.max(np.abs(value - ref[name])) <= tol * scale, (sweep.name, name, kind, seed)


def test_a_sweep_with_variants_prints_the_one_with_fewest_operations():
    """The regressor's routes: the walk in body frames carrying each subspace down (where it
    applies: no body deeper than LOCAL_WALK_DEPTH) wins on a 4-joint arm and a 10-joint chain, the
    ground walk on a deeper chain; a build prints the cheaper (a body-frame build, which has no
    variants, gives the body route's count)."""
    from pathlib import Path

    from symgen.algorithms.regressor import LOCAL_WALK_DEPTH
    from symgen.codegen.program import count_ops
    from symgen.codegen.symbolic import program_for

    arm4 = load_urdf(Path(__file__).resolve().parent.parent / "symgen" / "examples" / "arm4.urdf")
    for robot, route in ((arm4, "regressor_local_sweep"), (robots.make("serial", 10, 1), "regressor_local_sweep"),
                         (robots.make("serial", LOCAL_WALK_DEPTH + 2, 1), "regressor_ground_sweep")):
        fn = program_for(robot, "Y")
        printed = count_ops(fn)["total"]
        body = count_ops(program_for(robot, "Y", Q.SweepOptions(frame="body")))["total"]
        assert printed < body and fn.route == route, (robot.name, printed, body, fn.route)
