"""The frame functions in every reference frame and the frame derivatives (issue #39, items 2 and
5): frame_jacobian, frame_velocity, frame_acceleration_bias and frame_jacobian_dot in LOCAL and
WORLD (``symgen build --reference``), frame_velocity_derivatives and frame_acceleration_derivatives
in LOCAL_WORLD_ALIGNED, LOCAL and WORLD.

Each against Pinocchio 4.1's own functions (getFrameJacobian, getFrameVelocity,
getFrameClassicalAcceleration, getFrameJacobianTimeVariation with pin.LOCAL and pin.WORLD;
getFrameVelocityDerivatives and getFrameAccelerationDerivatives after
computeForwardKinematicsDerivatives) to 1e-9, at random states whose seed the failure names: the
numeric reference on ur5 (every link and joint frame), solo12 on a free-flyer, the general-axis
joints of tests/data/joints/mixed_joints.urdf (an unaligned revolute, a planar joint, a continuous
one and a free-flyer inside the tree), a random general-axis chain and the --mimic gripper; the
generated NumPy and C on ur5, solo12 and the mixed joints. The derivatives also against central
differences of Pinocchio's frame velocity and acceleration (where Pinocchio 4.1's own WORLD da/dq
misses the columns of a joint with several velocities below the root, the oracle turns its LOCAL
ones: checked here).
"""
from __future__ import annotations

import json
import zlib
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import symgen
from support import assert_close, erd_path, pin_model_from_robot
from symgen import quantities as Q
from symgen import robots
from symgen.cli import main
from symgen.codegen.build import BuildOptions, build, import_package
from symgen.errors import OptionError
from symgen.pinocchio_oracle import EmbeddedPinOracle, PinOracle, pin_model_of
from symgen.quantities.references import BY_REFERENCE, parse_references, references_built, with_references

ROOT = Path(__file__).resolve().parent
ARM4 = symgen.__path__[0] + "/examples/arm4.urdf"
MIXED = ROOT / "data" / "joints" / "mixed_joints.urdf"
UR5 = "ur_description/urdf/ur5_robot.urdf"
SOLO = "solo_description/robots/solo12.urdf"
#: the LOCAL_WORLD_ALIGNED frame functions and their keys in every other reference
FAMILIES = tuple(BY_REFERENCE)
KEYS = tuple(k for base in FAMILIES for k in with_references((base,), ("local_world_aligned", "local", "world")))


def _seed(label):
    return zlib.crc32(label.encode())


def _states(robot, label, count):
    rng = np.random.default_rng(_seed(label))
    layout = [(j.name, j.kind, j.idx_q, j.nq, j.idx_v, j.nv) for j in robot.joint_models]
    return [Q.random_state(rng, robot.nq, robot.nv, ("q", "qd", "qdd"), layout=layout) for _ in range(count)]


def _assert_value(got, expected, what, ctx):
    for k, (g, e) in enumerate(zip(got, expected) if isinstance(expected, tuple) else [(got, expected)]):
        assert_close(g, e, f"{what} output {k}" if isinstance(expected, tuple) else what, ctx)


def _compare_reference(robot, oracle, label, frames=None, keys=KEYS, states=3):
    """The numeric reference (both coordinate choices) of every key against Pinocchio."""
    for t, s in enumerate(_states(robot, label, states)):
        ctx = f"{label} seed={_seed(label)} state#{t}"
        for x in (Q.QUANTITIES[k] for k in keys):
            expected = x.pinocchio(oracle, s)
            for frame in Q.FRAMES:
                got = Q.evaluate(robot, x.key, s, Q.SweepOptions(frame=frame, frames=frames))
                _assert_value(got, expected, f"{x.function} ({frame})", ctx)


@pytest.mark.pinocchio
def test_every_frame_of_ur5_in_every_reference_matches_pinocchio(pin):
    path = erd_path(UR5)
    robot = symgen.load_urdf(path)
    oracle = PinOracle(robot, pin.buildModelFromUrdf(str(path)), pin, frames=robot.frame_names)
    _compare_reference(robot, oracle, "ur5", frames=robot.frame_names)


@pytest.mark.pinocchio
def test_free_flyer_frames_and_derivatives_match_pinocchio_in_its_tangent_space(pin):
    """solo12 on Pinocchio's JointModelFreeFlyer: d/dq along q (+) e_k (the base's six columns)."""
    path = str(erd_path(SOLO))
    robot = symgen.load_urdf(path, floating_base=True)
    frames = (*robot.leaf_links, "base_link", "FL_KFE", "sole=FL_FOOT@0,0,-0.016")
    oracle = PinOracle(robot, pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer()), pin, frames=frames)
    _compare_reference(robot, oracle, "solo12", frames=frames)


@pytest.mark.pinocchio
@pytest.mark.parametrize("label", ["mixed_joints", "serial7", "mixed_tree"])
def test_general_axes_and_joints_with_several_velocities_match_pinocchio(pin, label):
    from support import mixed_tree

    robot = {"mixed_joints": lambda: symgen.load_urdf(MIXED), "serial7": lambda: robots.make("serial", 7, 21),
             "mixed_tree": lambda: mixed_tree(39, size=6)}[label]()
    model = pin_model_from_robot(robot) if label == "serial7" else pin_model_of(robot, pin)
    frames = robot.link_names if label == "mixed_tree" else robot.frame_names    # (not a group's inner links)
    _compare_reference(robot, PinOracle(robot, model, pin, frames=frames), label, frames=frames)


@pytest.mark.pinocchio
def test_mimic_frames_in_every_reference_are_the_full_models_projected(pin, tmp_path):
    from test_mimic import G, O, gripper

    urdf = tmp_path / "gripper.urdf"
    urdf.write_text(gripper())
    robot = symgen.load_urdf(urdf, mimic=True)
    frames = ("thumb", "foot", "pad=finger_r@0.01,0.02,0.03")
    oracle = EmbeddedPinOracle(robot, pin.buildModelFromUrdf(str(urdf)), pin, frames=frames, G=G, offset=O)
    _compare_reference(robot, oracle, "mimic", frames=frames, states=2)


@pytest.mark.pinocchio
def test_the_derivatives_are_central_differences_of_pinocchios_frame_motion(pin):
    """LOCAL and WORLD partials are those of getFrameVelocity / getFrameAcceleration in that reference
    (q moved by pin.integrate); LOCAL_WORLD_ALIGNED ones are the WORLD ones at the frame's origin
    (Pinocchio's definition, not the partials of the LOCAL_WORLD_ALIGNED velocity). On the mixed
    joints, where Pinocchio's own WORLD da/dq differs from its differences."""
    robot = symgen.load_urdf(MIXED)
    oracle = PinOracle(robot, pin_model_of(robot, pin), pin, frames=robot.frame_names)
    model, data, P, h = oracle.model, oracle.data, oracle.map.P, 1e-6
    for t, s in enumerate(_states(robot, "mixed-fd", 2)):
        ctx = f"mixed-fd seed={_seed('mixed-fd')} state#{t}"
        q, v, a = oracle.map.q(s["q"]), oracle.map.v(s["qd"]), oracle.map.v(s["qdd"])

        def motion(qp, rf):
            pin.forwardKinematics(model, data, qp, v, a)
            pin.updateFramePlacements(model, data)
            return np.array([np.r_[pin.getFrameVelocity(model, data, f, rf).vector,
                                   pin.getFrameAcceleration(model, data, f, rf).vector] for f in oracle.frame_ids])

        for name, rf in (("local", pin.LOCAL), ("world", pin.WORLD)):
            fd = np.stack([(motion(pin.integrate(model, q, h * e), rf) - motion(pin.integrate(model, q, -h * e), rf))
                           / (2 * h) for e in np.eye(model.nv)], axis=-1) @ P
            dv_dq, da_dq, _, _ = Q.evaluate(robot, f"daf_{name}", s, Q.SweepOptions(frames=robot.frame_names))
            assert_close(dv_dq, fd[:, :6], f"dv/dq {name} vs differences", ctx, rtol=1e-6, atol=1e-6)
            assert_close(da_dq, fd[:, 6:], f"da/dq {name} vs differences", ctx, rtol=1e-6, atol=1e-6)
        world = Q.evaluate(robot, "daf_world", s, Q.SweepOptions(frames=robot.frame_names))
        pin.framesForwardKinematics(model, data, q)
        p = np.array([data.oMf[f].translation for f in oracle.frame_ids])[:, :, None]
        for got, w in zip(Q.evaluate(robot, "daf", s, Q.SweepOptions(frames=robot.frame_names)), world):
            moved = np.concatenate([w[:, :3] + np.cross(w[:, 3:], p, axis=1), w[:, 3:]], axis=1)
            assert_close(got, moved, "LOCAL_WORLD_ALIGNED = WORLD at the frame's origin", ctx)


# ------------------------------------------------------------------ generated packages (NumPy and C)

def _package(robot, tmp_path_factory, name, frames):
    opts = BuildOptions(quantities=("J", "vf", "af", "dJ", "dvf", "daf"), frames=frames, copt="-O0",
                        references=("local", "world", "local_world_aligned"))
    return import_package(build(robot, tmp_path_factory.mktemp(name), name=name, opts=opts).path)


@pytest.fixture(scope="module")
def packages(pin, tmp_path_factory):
    """{label: (robot, oracle, package)}: ur5 (its leaf link, a joint and a tool point), solo12 on a
    free-flyer (a foot, a sole point, the base) and the mixed joints (every frame), each built with
    every frame function in every reference."""
    out = {}
    path = str(erd_path(UR5))
    ur5 = symgen.load_urdf(path)
    frames = ("ee_link", "wrist_2_joint", "tool=wrist_3_link@0,0.1,0.05")
    out["ur5"] = (ur5, PinOracle(ur5, pin.buildModelFromUrdf(path), pin, frames=frames),
                  _package(ur5, tmp_path_factory, "ur5refs", frames))
    path = str(erd_path(SOLO))
    solo = symgen.load_urdf(path, floating_base=True)
    frames = ("FL_FOOT", "sole=HR_FOOT@0,0,-0.016", "base_link")
    out["solo12"] = (solo, PinOracle(solo, pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer()), pin, frames=frames),
                     _package(solo, tmp_path_factory, "solorefs", frames))
    mixed = symgen.load_urdf(MIXED)
    out["mixed"] = (mixed, PinOracle(mixed, pin_model_of(mixed, pin), pin, frames=mixed.frame_names),
                    _package(mixed, tmp_path_factory, "mixedrefs", mixed.frame_names))
    return out


@pytest.mark.pinocchio
@pytest.mark.parametrize("label", ["ur5", "solo12", "mixed"])
def test_generated_numpy_and_c_in_every_reference_match_pinocchio(packages, label):
    robot, oracle, pkg = packages[label]
    assert pkg.reference_frames == pkg.numpy.reference_frames == ("local_world_aligned", "local", "world")
    assert pkg.c is not None, "the C binding was not compiled"
    states = _states(robot, label, 3)
    for x in (Q.QUANTITIES[k] for k in KEYS):
        for t, s in enumerate(states):
            ctx = f"{label} seed={_seed(label)} state#{t}"
            expected = x.pinocchio(oracle, s)
            for backend in (pkg.numpy, pkg.c):
                _assert_value(Q.call(backend, x.key, s), expected, f"{x.function} ({backend.__name__})", ctx)
        batch = {a: np.stack([s[a] for s in states]) for a in x.arguments}
        for backend in (pkg.numpy, pkg.c):                 # a batch: each output gains the leading axis
            got = Q.call(backend, x.key, batch)
            for t, s in enumerate(states):
                one = tuple(g[t] for g in got) if isinstance(got, tuple) else got[t]
                _assert_value(one, x.pinocchio(oracle, s), f"{x.function} batch ({backend.__name__})",
                              f"{label} seed={_seed(label)} state#{t}")


# ---------------------------------------------------------------------------- the option itself

def test_the_reference_option_chooses_the_frame_functions_of_a_build():
    every = ("local_world_aligned", "local", "world")
    assert parse_references(None) == parse_references("") == ("local_world_aligned",)
    assert parse_references("world, LOCAL,local") == ("local", "world")
    assert parse_references("local,world,local_world_aligned") == every
    assert with_references(Q.DEFAULT) == Q.DEFAULT                  # the default build is unchanged
    assert with_references(("M", "J", "dJ"), ("local",)) == ("M", "J_local", "dJ_local")
    assert with_references(("J", "dvf"), every) == ("J", "J_local", "J_world", "dvf", "dvf_local", "dvf_world")
    assert with_references(("J_world",), ("local",)) == ("J_world",)  # named in a reference: kept
    assert references_built(("J_world", "vf"), ("local",)) == ("local", "world")
    for key in KEYS:                                  # built on request only, each with its oracle
        assert not Q.QUANTITIES[key].default or key in ("J", "vf", "af", "dJ"), key
        assert Q.QUANTITIES[key].pinocchio is not None, key
    with pytest.raises(OptionError, match=r"--reference: unknown 'body'; expected a comma list of "
                                          r"local_world_aligned, local, world"):
        parse_references("local,body")


@pytest.mark.pinocchio
def test_cli_reference_builds_records_and_verify_checks_every_reference(tmp_path):
    runner = CliRunner()
    result = runner.invoke(main, ["build", ARM4, "--out", str(tmp_path), "--quiet", "--copt=-O0",
                                  "--reference", "world,local", "--quantities", "M,J,vf,dvf,daf"])
    assert result.exit_code == 0, result.output
    manifest = json.loads((tmp_path / "arm4" / "manifest.json").read_text())
    assert manifest["reference_frames"] == ["local", "world"]
    assert sorted(manifest["functions"]) == sorted(
        ["mass_matrix", "frame_jacobian_local", "frame_jacobian_world", "frame_velocity_local", "frame_velocity_world",
         "frame_velocity_derivatives_local", "frame_velocity_derivatives_world",
         "frame_acceleration_derivatives_local", "frame_acceleration_derivatives_world"])
    result = runner.invoke(main, ["verify", str(tmp_path / "arm4"), "--urdf", ARM4, "--trials", "2"])
    assert result.exit_code == 0 and "all checks passed" in result.output, result.output
    assert "reference frames local, world" in result.output
    for f in manifest["functions"]:
        assert f"c vs Pinocchio: {f}" in result.output, (f, result.output)
    result = runner.invoke(main, ["build", ARM4, "--out", str(tmp_path / "bad"), "--reference", "body"])
    assert result.exit_code == 2 and "--reference: unknown 'body'" in result.output
    assert "Traceback" not in result.output and len(result.output.strip().splitlines()) == 1, result.output


#: the controller functions on the big robots: every reference family and the operational-space ones
BIG_KEYS = KEYS + Q.operational_space.KEYS
BIG = {"panda": ("panda_description/urdf/panda.urdf", False, ("panda_link8", "tcp=panda_hand@0,0,0.1034")),
       "solo12": (SOLO, True, ("FL_FOOT", "sole=HR_FOOT@0,0,-0.016", "base_link")),
       "talos": ("talos_data/robots/talos_reduced.urdf", True, ("left_sole_link", "right_sole_link",
                                                              "tool=arm_left_7_link@0,0,-0.1")),
       "serial20": (None, False, None)}


@pytest.mark.slow
@pytest.mark.timeout(3600)
@pytest.mark.parametrize("label", list(BIG))
def test_controller_functions_on_big_robots_match_pinocchio(pin, tmp_path, label):
    """The frame functions in every reference, the frame derivatives and the operational-space
    functions, generated NumPy and C, on panda, solo12 and talos (free-flyers) and the general-axis
    20-DoF chain of ``symgen model serial 20 --seed 1``, against Pinocchio (the operational-space
    ones: its route from computeMinverse, tolerance scaled by cond(M) cond(Lambda))."""
    from support import task_inertia

    path, floating, frames = BIG[label]
    if path is None:
        robot = robots.make("serial", 20, seed=1)
        model, frames = pin_model_from_robot(robot), (*robot.leaf_links, f"p={robot.link_names[9]}@0.1,-0.2,0.05")
    else:
        robot = symgen.load_urdf(erd_path(path), floating_base=floating)
        model = pin.buildModelFromUrdf(str(erd_path(path)), *((pin.JointModelFreeFlyer(),) if floating else ()))
    oracle = PinOracle(robot, model, pin, frames=frames)
    pkg = import_package(build(robot, tmp_path, name=f"{label}_big", opts=BuildOptions(
        quantities=BIG_KEYS, frames=frames, references=("local_world_aligned", "local", "world"), copt="-O0",
        jobs=0, max_dof=0, budget=0)).path)
    rng = np.random.default_rng(_seed(f"big {label}"))
    layout = [(j.name, j.kind, j.idx_q, j.nq, j.idx_v, j.nv) for j in robot.joint_models]
    for t in range(2):
        s = Q.random_state(rng, robot.nq, robot.nv, ("q", "qd", "qdd", "tau"), layout=layout)
        ctx = f"{label} seed={_seed(f'big {label}')} state#{t}"
        M = oracle.mass_matrix(s["q"])
        for x in (Q.QUANTITIES[k] for k in BIG_KEYS):
            expected = x.pinocchio(oracle, s)
            lam = task_inertia(oracle, s) if x.key in Q.operational_space.KEYS else None
            rtol = Q.tolerance(x, M, 1e-9, lam) if lam is not None else 1e-9
            for backend in (pkg.numpy, pkg.c):
                got = Q.call(backend, x.key, s)
                for k, (g, e) in enumerate(zip(got, expected) if isinstance(expected, tuple) else [(got, expected)]):
                    assert_close(g, e, f"{x.function} output {k} ({backend.__name__})", ctx, rtol=rtol)
