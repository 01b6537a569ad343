"""Joints with several velocities (Pinocchio's joint models): spherical, planar, and free-flyers
anywhere in the tree, against Pinocchio 4.1.

- Random trees of our own mixing every joint type (a root free-flyer, ball and planar joints
  mid-tree, a free-flyer inside the tree): every registered quantity with a Pinocchio counterpart,
  from the algorithms on numbers in both coordinate choices, against Pinocchio's model built joint
  by joint (:func:`symgen.pinocchio_oracle.pin_model_of`), to 1e-9.
- A URDF with `planar` and `floating` joints inside the tree, read by symgen and by Pinocchio's own
  parser: the generated NumPy and C of every default function through `symgen verify`.
- An MJCF with ball joints (one after a hinge in one body, armature on every joint): MuJoCo's M,
  bias forces and energy after `from_mujoco`, and the generated package through `symgen verify`.
- The generated `integrate`, `difference`, `normalize`, `neutral` (NumPy and the binding's C) against
  Pinocchio's, large rotations included.

Every failure message carries the seed.
"""
from __future__ import annotations

import importlib
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import symgen
from symgen import quantities as Q
from symgen.cli import main
from symgen.quantities.base import SweepOptions
from support import mixed_tree, task_inertia

pin = pytest.importorskip("pinocchio")
from symgen.pinocchio_oracle import PinOracle, pin_model_of  # noqa: E402

DATA = Path(__file__).parent / "data" / "joints"
MIXED_URDF = DATA / "mixed_joints.urdf"
BALL_MJCF = DATA / "ball_limbs.xml"


def _state(robot, rng):
    n = robot.nv
    return {"q": Q.ARGUMENTS["q"].draw(rng, robot.nq, n, layout=robot.joint_layout),
            **{a: rng.uniform(-3, 3, n) for a in ("qd", "qdd", "qd_r", "qdd_r", "tau")}}


@pytest.mark.parametrize("seed,floating", [(1, True), (2, True), (3, False), (4, False)])
def test_every_quantity_matches_pinocchio_on_mixed_trees(seed, floating):
    robot = mixed_tree(seed, floating=floating)
    assert {j.kind for j in robot.joint_models} >= {"spherical", "planar", "freeflyer"}
    oracle = PinOracle(robot, pin_model_of(robot))
    _assert_every_quantity(robot, oracle, seed)


def test_urdf_planar_and_floating_joints_read_as_pinocchio_reads_them():
    robot = symgen.load_urdf(MIXED_URDF)
    model = pin.buildModelFromUrdf(str(MIXED_URDF))
    kinds = {j.name: j.kind for j in robot.joint_models}
    assert kinds["slide_plane"] == "planar" and kinds["free_body"] == "freeflyer"
    assert robot.nv == model.nv and robot.nq == model.nq - 1      # Pinocchio's continuous joint: cos, sin
    oracle = PinOracle(robot, model)
    rng = np.random.default_rng(7)
    state = _state(robot, rng)
    for key in ("M", "C", "tau", "qdd", "J", "Gamma"):
        x = Q.QUANTITIES[key]
        ours, ref = Q.flat(Q.evaluate(robot, key, state)), Q.flat(x.pinocchio(oracle, state))
        assert np.abs(ours - ref).max() <= 1e-9 * max(1.0, np.abs(ref).max()), key


@pytest.mark.parametrize("text,expected", [
    ('<joint name="p" type="planar"><parent link="a"/><child link="b"/><axis xyz="1 0 0"/></joint>',
     "a planar joint's normal must be 0 0 1"),
])
def test_unsupported_joint_forms_are_one_line(tmp_path, text, expected):
    path = tmp_path / "bad.urdf"
    path.write_text(f'<robot name="r"><link name="a"/><link name="b"><inertial><mass value="1"/>'
                    f'<inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>{text}</robot>')
    res = CliRunner().invoke(main, ["info", str(path)])
    assert res.exit_code == 2 and res.output.count("\n") == 1 and expected in res.output, res.output


def test_mjcf_ball_joints_match_mujoco():
    """M, bias forces and kinetic energy against MuJoCo's after from_mujoco (test_mjcf's check)."""
    pytest.importorskip("mujoco")
    from test_mjcf import _check_against_mujoco

    robot = _check_against_mujoco(BALL_MJCF, states=3)
    assert [j.kind for j in robot.joint_models].count("spherical") == 2
    assert robot.armature_vector[6:9].tolist() == [0.03] * 3          # the shoulder's, on its 3 velocities


class _Built(dict):
    """stem -> package folder, each built on first use with every default function (NumPy and C)."""

    def __init__(self, out):
        super().__init__()
        self.out = out

    def __missing__(self, stem):
        path = {MIXED_URDF.stem: MIXED_URDF, BALL_MJCF.stem: BALL_MJCF}[stem]
        res = CliRunner().invoke(main, ["build", str(path), "--out", str(self.out), "--jobs", "2"])
        assert res.exit_code == 0, res.output
        self[stem] = self.out / stem
        return self[stem]


@pytest.fixture(scope="module")
def packages(tmp_path_factory):
    """The mixed URDF and the ball MJCF, built on first use."""
    return _Built(tmp_path_factory.mktemp("joint_models"))


#: the ball MJCF's package (spherical joints, covered in CI by the numeric tests) with -m slow
PACKAGES = [("mixed_joints", MIXED_URDF), pytest.param("ball_limbs", BALL_MJCF, marks=pytest.mark.slow)]


@pytest.mark.parametrize("stem,model", PACKAGES)
def test_generated_packages_verify_against_pinocchio(packages, stem, model):
    res = CliRunner().invoke(main, ["verify", str(packages[stem]), "--model", str(model), "--trials", "3"])
    assert res.exit_code == 0 and "all checks passed" in res.output, res.output
    assert "Pinocchio 4" in res.output and "skipped" not in res.output.split("Pinocchio 4")[1].splitlines()[0]


def _load(folder):
    sys.path.insert(0, str(folder.parent))
    try:
        return importlib.import_module(folder.name)
    finally:
        sys.path.pop(0)


@pytest.mark.parametrize("stem,model", PACKAGES)
def test_integrate_and_difference_match_pinocchio(packages, stem, model):
    pkg = _load(packages[stem])
    robot = symgen.load_robot(model)
    oracle = PinOracle(robot, pin_model_of(robot))
    pm = oracle.model
    c = pkg.c                                   # the binding's integrate, ... (the C entry points)
    rng = np.random.default_rng(11)
    assert np.allclose(oracle.map.q(pkg.neutral()), pin.neutral(pm))
    for t, scale in enumerate([1e-9, 1e-4, 0.5, 3.0, 10.0] * 4):
        ctx = f"{stem} seed=11 step#{t} |v| scale {scale}"
        q0 = Q.ARGUMENTS["q"].draw(rng, robot.nq, robot.nv, layout=robot.joint_layout)
        v = rng.normal(size=robot.nv) * scale
        for impl in (pkg.integrate, c.integrate):
            q1 = impl(q0, v)
            # as configurations (a quaternion and its negative are one rotation)
            gap = pin.difference(pm, pin.integrate(pm, oracle.map.q(q0), oracle.map.v(v)), oracle.map.q(q1))
            assert np.abs(gap).max() <= 1e-12 * max(1.0, scale), ctx
        q1 = pkg.integrate(q0, v)
        ref = oracle.map.vec(pin.difference(pm, oracle.map.q(q0), oracle.map.q(q1)))
        for impl in (pkg.difference, c.difference):
            d = impl(q0, q1)
            err = d - ref
            assert np.abs(err).max() <= 1e-9 * max(1.0, np.abs(ref).max()), ctx
    batch = np.array([Q.ARGUMENTS["q"].draw(rng, robot.nq, robot.nv, layout=robot.joint_layout) for _ in range(5)])
    V = rng.uniform(-0.5, 0.5, (5, robot.nv))               # rotations under pi: difference gives V back
    for lie in (pkg.numpy, c):                  # batches: state by state; the C's equal NumPy's
        assert np.allclose(lie.integrate(batch, V), [pkg.integrate(a, b) for a, b in zip(batch, V)], atol=1e-15)
        assert np.allclose(lie.difference(batch, pkg.integrate(batch, V)), V, atol=1e-9)
        assert np.allclose(lie.normalize(batch), pkg.numpy.normalize(batch), atol=1e-15)
        assert np.array_equal(lie.neutral(), pkg.numpy.neutral())
    assert np.allclose(c.integrate(batch[:2].reshape(2, 1, -1), V[0]), pkg.integrate(batch[:2], V[0])[:, None], atol=1e-15)
    unit = pkg.normalize(batch)
    scaled = batch.copy()
    for _, kind, k, _, _, _ in pkg.joint_models:
        lo = {"spherical": 0, "freeflyer": 3, "planar": 2}.get(kind)
        if lo is not None:
            scaled[:, k + lo:k + 4 + (3 if kind == "freeflyer" else 0)] *= 1.7
    assert np.allclose(pkg.normalize(scaled), unit, atol=1e-15)


# ------------------------------------------- pybullet's URDF `spherical` joint: the ball joint model

#: a URDF in pybullet's dialect (its loader's `spherical` type, which urdfdom does not know): a ball
#: on the fixed root and one inside the tree, between revolute joints with general axes
PYBULLET_URDF = """<robot name="pybullet_balls">
  <link name="base"/>
  <link name="upper"><inertial><origin xyz="0.02 -0.01 0.15" rpy="0.1 0.2 -0.3"/><mass value="1.3"/>
    <inertia ixx="0.03" ixy="0.002" ixz="-0.001" iyy="0.025" iyz="0.003" izz="0.012"/></inertial></link>
  <link name="lower"><inertial><origin xyz="0.0 0.03 -0.2" rpy="-0.2 0 0.4"/><mass value="0.8"/>
    <inertia ixx="0.02" ixy="-0.001" ixz="0.0" iyy="0.018" iyz="0.001" izz="0.006"/></inertial></link>
  <link name="hand"><inertial><origin xyz="0.05 0 0.01"/><mass value="0.3"/>
    <inertia ixx="0.002" ixy="0" ixz="0.0002" iyy="0.003" iyz="0" izz="0.0025"/></inertial></link>
  <link name="head"><inertial><origin xyz="0 0 0.08"/><mass value="0.6"/>
    <inertia ixx="0.004" ixy="0" ixz="0" iyy="0.004" iyz="0" izz="0.003"/></inertial></link>
  <joint name="shoulder" type="spherical"><parent link="base"/><child link="upper"/>
    <origin xyz="0.1 0.0 0.5" rpy="0.3 -0.1 0.2"/><axis xyz="0 0 1"/></joint>
  <joint name="elbow" type="revolute"><parent link="upper"/><child link="lower"/>
    <origin xyz="0.0 0.05 0.3" rpy="0 0.4 0"/><axis xyz="0.6 0 0.8"/><limit lower="-2" upper="2" effort="5" velocity="5"/></joint>
  <joint name="wrist" type="spherical"><parent link="lower"/><child link="hand"/>
    <origin xyz="0.02 0.0 -0.35" rpy="-0.5 0.2 0.1"/></joint>
  <joint name="neck" type="revolute"><parent link="base"/><child link="head"/>
    <origin xyz="0 -0.2 0.6"/><axis xyz="0 0.8 0.6"/><limit lower="-1" upper="1" effort="5" velocity="5"/></joint>
</robot>
"""


def _pin_model_of_urdf_text(text):
    """Pinocchio's model of a URDF read here joint by joint (urdfdom refuses `spherical`): each
    joint at its <origin> in its parent's frame, `spherical` as JointModelSpherical, `revolute` as
    JointModelRevoluteUnaligned, each link's <inertial> appended to its joint; independent of
    symgen's reader (joints in document order, parents first)."""
    import xml.etree.ElementTree as ET

    def numbers(el, name, default):
        return np.array([float(x) for x in el.get(name).split()]) if el is not None and el.get(name) else np.array(default, dtype=float)

    root = ET.fromstring(text)
    links = {link.get("name"): link for link in root.iter("link")}
    model, joint_of = pin.Model(), {root.find("link").get("name"): 0}
    for j in root.iter("joint"):
        origin = j.find("origin")
        placement = pin.SE3(pin.rpy.rpyToMatrix(numbers(origin, "rpy", [0, 0, 0])), numbers(origin, "xyz", [0, 0, 0]))
        kind = (pin.JointModelSpherical() if j.get("type") == "spherical"
                else pin.JointModelRevoluteUnaligned(numbers(j.find("axis"), "xyz", [1, 0, 0])))
        parent, child = j.find("parent").get("link"), j.find("child").get("link")
        jid = joint_of[child] = model.addJoint(joint_of[parent], kind, placement, j.get("name"))
        inertial = links[child].find("inertial")
        o, I = inertial.find("origin"), inertial.find("inertia")
        R = pin.rpy.rpyToMatrix(numbers(o, "rpy", [0, 0, 0]))
        Ic = np.array([[float(I.get("ixx")), float(I.get("ixy")), float(I.get("ixz"))],
                       [float(I.get("ixy")), float(I.get("iyy")), float(I.get("iyz"))],
                       [float(I.get("ixz")), float(I.get("iyz")), float(I.get("izz"))]])
        model.appendBodyToJoint(jid, pin.Inertia(float(inertial.find("mass").get("value")), numbers(o, "xyz", [0, 0, 0]),
                                                 R @ Ic @ R.T), pin.SE3.Identity())
    return model


def test_pybullet_spherical_joint_is_read_as_the_ball_joint(tmp_path):
    """The reader alone turns pybullet's `spherical` into the ball joint model (q a unit quaternion
    x, y, z, w; v the angular velocity in the child frame): every quantity with a Pinocchio
    counterpart against Pinocchio's JointModelSpherical model of the same text, both frames."""
    path = tmp_path / "pybullet_balls.urdf"
    path.write_text(PYBULLET_URDF)
    robot = symgen.load_urdf(path)
    assert [(j.name, j.kind, j.nq, j.nv) for j in robot.joint_models] == [      # urdfdom's order
        ("neck", "revolute", 1, 1), ("shoulder", "spherical", 4, 3), ("elbow", "revolute", 1, 1),
        ("wrist", "spherical", 4, 3)]
    model = _pin_model_of_urdf_text(PYBULLET_URDF)
    assert (robot.nq, robot.nv) == (model.nq, model.nv) == (10, 8)
    oracle = PinOracle(robot, model)
    _assert_every_quantity(robot, oracle, 17)
    res = CliRunner().invoke(main, ["info", str(path)])
    assert res.exit_code == 0 and "shoulder" in res.output, res.output


def _assert_every_quantity(robot, oracle, seed):
    """Every registry quantity with a Pinocchio counterpart (the loop functions have none on a
    tree) against Pinocchio at two random states, in body and ground frames."""
    rng = np.random.default_rng(seed)
    for t in range(2):
        state = _state(robot, rng)
        M = Q.evaluate(robot, "M", state)
        for key, x in Q.QUANTITIES.items():
            if x.pinocchio is None or key in Q.loops.LOOP_KEYS:
                continue
            st = x.oracle_state(state) if x.oracle_state else state
            ref = Q.flat(x.pinocchio(oracle, st))
            for frame in ("body", "ground"):
                ours = Q.flat(Q.evaluate(robot, key, st, SweepOptions(frame=frame)))
                err = np.abs(ours - ref).max() / max(1.0, np.abs(ref).max())
                tol = Q.tolerance(x, M, Lambda=task_inertia(oracle, st) if x.task else None)
                assert err <= tol, f"{key} ({frame}) seed={seed} state#{t}: {err:.2e}"


@pytest.mark.parametrize("seed", [11, 13])
def test_every_frame_of_a_random_tree_of_joint_models_matches_pinocchio(pin, seed):
    """A Robot built in code (its frames from model.tree_frames): a joint with several velocities has one joint
    frame and one link frame, on its last body, whose placement and Jacobian are the joint's child frame's
    (frames on its massless helper bodies had the joint's first speeds only)."""
    import support

    robot = mixed_tree(seed, size=6)
    assert not any(f.name.startswith(f"{j.name}_") for j in robot.joint_models if j.nv > 1 for f in robot.frames)
    oracle = PinOracle(robot, pin_model_of(robot, pin), pin, frames=robot.frame_names)
    label, (state,) = support.seeded_states(f"joint-model frames {seed}", robot, 1, layout=robot.joint_layout)
    for key, want in (("oMf", oracle.frame_placement(state["q"])), ("J", oracle.frame_jacobian(state["q"]))):
        for frame in Q.FRAMES:
            support.assert_close(Q.evaluate(robot, key, state, Q.SweepOptions(frame=frame, frames=robot.frame_names)),
                                 want, f"{key} ({frame}) of every frame", f"mixed_tree({seed}) seed={label}")
