"""``symgen build --parametric``: the dynamics functions take the inertial parameters as a last
argument ``params``, so a payload change needs no rebuild. Called with the nominal parameters a
parametric package is the folded-constant build; called with other parameters it is the folded
build of the robot that has them, and Pinocchio on that robot."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import support
from symgen import quantities as Q, robots
from symgen.algorithms.regressor import robot_parameters
from symgen.bench.cloop import c_driver_source_context, c_loop, read_manifest
from symgen.codegen.build import BuildOptions, build, import_package
from symgen.model import Inertia
from symgen.pinocchio_oracle import PinOracle
from symgen.urdf import urdf_string, write_urdf
from symgen.verify import verify_package

PARAMETRIC = Q.SweepOptions(parametric=True)
INERTIAL = tuple(k for k, x in Q.QUANTITIES.items() if Q.SWEEPS[x.sweep].inertial and k in Q.DEFAULT)
#: the functions linear in the parameters, which do not take them: the regressors, Y^T s
REGRESSORS = ("Y", "Yts", "Y_p", "Y_c", "Y_g", "Y_T", "Y_V", "Y_Vdot")


def heavier_last_link(robot):
    """The robot with a payload on its last link: 2.5 kg more, the CoM moved, more inertia."""
    last = robot.bodies[-1]
    payload = Inertia(2.5, (0.05, -0.03, 0.12), ((0.01, 0.001, 0.0), (0.001, 0.02, 0.002), (0.0, 0.002, 0.015)))
    bodies = robot.bodies[:-1] + (dataclasses.replace(last, inertia=last.inertia + payload),)
    return dataclasses.replace(robot, bodies=bodies, frames=())


@pytest.fixture(scope="module")
def packages(tmp_path_factory):
    """(robot, parametric package, folded package, modified robot)."""
    tmp = tmp_path_factory.mktemp("parametric")
    robot = robots.make("tree", 5, 3)
    opts = dict(copt="-O0")
    return (robot, import_package(build(robot, tmp / "p", opts=BuildOptions(parametric=True, **opts)).path),
            import_package(build(robot, tmp / "f", opts=BuildOptions(**opts)).path), heavier_last_link(robot))


def _args(x, state, opts=Q.SweepOptions()):
    return [state[a] for a in x.arguments_for(opts)]


def test_only_inertial_functions_take_params(packages):
    robot, par, folded, _ = packages
    for key, x in Q.QUANTITIES.items():
        frames = ("J", "vf", "af", "dJ", "dvf", "daf")                      # in every reference (--reference)
        kinematic = (REGRESSORS + ("oMf", "tau_p") + frames + tuple(k for f in frames for k in Q.references.BY_REFERENCE[f].values())
                     + Q.loops.LOOP_KEYS)    # (tau_p: no inertia)
        assert ("params" in x.arguments_for(PARAMETRIC)) == (key not in kinematic), key
        assert "params" not in x.arguments_for(Q.SweepOptions())
    assert len(par.parameters) == 10 * robot.n


def test_nominal_params_equal_the_folded_build(packages):
    robot, par, folded, _ = packages
    rng = np.random.default_rng(0)
    for _ in range(2):
        s = Q.random_state(rng, robot.nq, robot.nv)
        s["params"] = par.parameters
        for x in (Q.QUANTITIES[k] for k in Q.DEFAULT):          # a default build's
            expected = getattr(folded.numpy, x.function)(*_args(x, s))
            for backend in (par.numpy, par.c):
                support.assert_close(getattr(backend, x.function)(*_args(x, s, PARAMETRIC)), expected,
                                     f"{x.function}(params = nominal)")
                support.assert_close(getattr(backend, x.function)(*_args(x, s)), expected,
                                     f"{x.function}() with the default params")


def test_modified_params_equal_the_modified_robot_and_pinocchio(packages):
    pin = support.require_pinocchio()
    robot, par, _, heavy = packages
    theta = robot_parameters(heavy)
    assert not np.allclose(theta, par.parameters)
    oracle = PinOracle(heavy, pin.buildModelFromXML(urdf_string(heavy)), pin)
    rng = np.random.default_rng(1)
    for _ in range(2):
        s = Q.random_state(rng, robot.nq, robot.nv)
        s["params"] = theta
        for key in INERTIAL:
            x = Q.QUANTITIES[key]
            expected = Q.evaluate(heavy, key, {k: v for k, v in s.items() if k != "params"})   # the heavier robot's own
            for backend in (par.numpy, par.c):
                got = getattr(backend, x.function)(*_args(x, s, PARAMETRIC))
                support.assert_close(got, expected, f"{x.function}(params of the heavier link)")
            ref = Q.evaluate(robot, key, s)              # the numeric reference with those parameters
            support.assert_close(ref, expected, f"reference {x.function} with params (of the heavier robot)")
            if x.pinocchio and not x.oracle_state:
                support.assert_close(getattr(par.c, x.function)(*_args(x, s, PARAMETRIC)), x.pinocchio(oracle, s),
                                     f"{x.function} vs Pinocchio on the heavier robot", rtol=1e-8)


def test_pinocchio_oracle_takes_parameters(packages):
    pin = support.require_pinocchio()
    robot, _, _, heavy = packages
    oracle = PinOracle(robot, pin.buildModelFromXML(urdf_string(robot)), pin)
    theirs = PinOracle(heavy, pin.buildModelFromXML(urdf_string(heavy)), pin)
    oracle.set_parameters(robot_parameters(heavy))
    q = np.linspace(0.1, 1.0, robot.n)
    support.assert_close(oracle.mass_matrix(q), theirs.mass_matrix(q), "Pinocchio M with the parameters set")


def test_batches_take_one_params_or_one_per_state(packages):
    robot, par, _, _ = packages
    rng = np.random.default_rng(2)
    q, qd, qdd = (rng.uniform(-1, 1, (3, robot.n)) for _ in range(3))
    thetas = np.array([Q.ARGUMENTS["params"].draw(rng, robot.nq, robot.nv, nominal=par.parameters) for _ in range(3)])
    for backend in (par.numpy, par.c):
        per_state = backend.inverse_dynamics(q, qd, qdd, thetas)
        shared = backend.inverse_dynamics(q, qd, qdd, thetas[0])
        for k in range(3):
            support.assert_close(per_state[k], par.numpy.inverse_dynamics(q[k], qd[k], qdd[k], thetas[k]), "batch")
            support.assert_close(shared[k], par.numpy.inverse_dynamics(q[k], qd[k], qdd[k], thetas[0]), "batch")


def test_wrong_params_is_a_value_error_naming_params(packages):
    robot, par, _, _ = packages
    q = np.zeros(robot.n)
    for backend in (par, par.numpy, par.c):
        for bad in (np.zeros(10 * robot.n - 1), np.zeros(robot.n), np.zeros((2, 10 * robot.n)), ["a"] * 10 * robot.n):
            with pytest.raises(ValueError, match="params"):
                backend.mass_matrix(q, bad)


def test_verify_passes_on_a_parametric_package(tmp_path):
    support.require_pinocchio()
    robot = robots.make("serial", 4, 5)
    urdf = tmp_path / "s4.urdf"
    write_urdf(robot, urdf)
    path = build(robot, tmp_path / "out", opts=BuildOptions(parametric=True, copt="-O0")).path
    report, ok = verify_package(path, trials=3, urdf=urdf)
    assert ok, report
    assert "parametric=True" in report and "vs Pinocchio: inverse_dynamics" in report


def test_c_header_and_bench_driver(packages):
    robot, par, _, _ = packages
    from pathlib import Path

    folder = Path(par.__file__).parent
    header = (folder / f"{par.__name__}.h").read_text()
    assert f"{par.__name__.upper()}_NPARAMS {10 * robot.n}" in header
    assert "const double *params, double *tau)" in header
    context = c_driver_source_context(read_manifest(folder), ("tau", "Y"))
    by_name = {r["function"]: r["arguments"] for r in context["runners"]}
    assert by_name["inverse_dynamics"][3] == f"{par.__name__}_parameters"
    assert len(by_name["regressor"]) == 5                            # no params
    timings = c_loop(folder, ("tau", "M"), flags="-O0", repeats=1, min_time=0.001)
    assert set(timings) == {"tau", "M"}


@pytest.mark.parametrize("which", ["mixed_joints", "mixed_tree"])
def test_nominal_params_reproduce_the_model_with_inner_joint_models(which):
    """params given as the model's own theta (10 per link) give the model's M, tau, qdd and C with joints of
    several velocities inside the tree, whose massless helper bodies carry no parameters."""
    import symgen

    robot = (symgen.load_robot("tests/data/joints/mixed_joints.urdf") if which == "mixed_joints"
             else support.mixed_tree(21, size=6))
    theta = robot_parameters(robot)
    seed, (s,) = support.seeded_states(f"nominal params {which}", robot, 1, layout=robot.joint_layout)
    for key in ("M", "tau", "C", "qdd"):
        for frame in Q.FRAMES:
            opts = Q.SweepOptions(frame=frame)
            support.assert_close(Q.flat(Q.evaluate(robot, key, {**s, "params": theta}, opts)),
                                 Q.flat(Q.evaluate(robot, key, s, opts)), f"{key} ({frame})", f"{which} seed={seed}",
                                 rtol=1e-9)
