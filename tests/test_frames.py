"""Frame kinematics (frame_placement, frame_jacobian): the frames a robot knows (every URDF link
and joint, lumped ones included), the default (leaf links) and the ``frames`` option, and the
values — ground coordinates (printed), the homogeneous-transform reference and the printed
program — against Pinocchio's framesForwardKinematics and getFrameJacobian(LOCAL_WORLD_ALIGNED)
on real and random robots. Pinocchio reads the original URDF, so lumped links and fixed joints
are its own frames, not symgen's mounts. Seeds are printed on failure."""
from __future__ import annotations

import zlib

import numpy as np
import pytest
import sympy as sp

from support import assert_close, erd_path, move, pin_model_from_robot, require_pinocchio
from symgen import quantities as Q
from symgen import robots
from symgen.codegen.symbolic import program_for
from symgen.errors import OptionError
from symgen.pinocchio_oracle import PinOracle
from symgen.urdf import load_urdf, parse_urdf_string

ERD = {"panda": "panda_description/urdf/panda.urdf", "ur5": "ur_description/urdf/ur5_robot.urdf",
       "solo12": "solo_description/robots/solo12.urdf", "talos_full_v2": "talos_data/robots/talos_full_v2.urdf"}
SYNTHETIC = [("serial", 6, 11), ("tree", 7, 12), ("biped", 4, 13), ("quadruped", 4, 14)]
STATES = 3


def _compare(robot, model, label, frames=None, states=STATES):
    """Both coordinate choices against Pinocchio at random states (the registry's draws)."""
    oracle = PinOracle(robot, model, require_pinocchio(), frames=frames)
    seed = zlib.crc32(label.encode())
    rng = np.random.default_rng(seed)
    for t in range(states):
        state = Q.random_state(rng, robot.nq, robot.nv, ("q",))
        ctx = f"{label} seed={seed} state#{t} frames={frames or 'leaf links'}"
        oMf, J = oracle.frame_placement(state["q"]), oracle.frame_jacobian(state["q"])
        for frame in Q.FRAMES:
            opts = Q.SweepOptions(frame=frame, frames=frames)
            assert_close(Q.evaluate(robot, "oMf", state, opts), oMf, f"oMf ({frame})", ctx)
            assert_close(Q.evaluate(robot, "J", state, opts), J, f"J ({frame})", ctx)


@pytest.mark.pinocchio
@pytest.mark.parametrize("name", list(ERD))
def test_every_link_and_joint_frame_matches_pinocchio_on_example_robot_data(pin, name):
    path = erd_path(ERD[name])
    robot = load_urdf(path)
    model = pin.buildModelFromUrdf(str(path))
    _compare(robot, model, name)                                    # the default: leaf links
    _compare(robot, model, f"{name}-all", frames=robot.frame_names)


@pytest.mark.pinocchio
def test_floating_base_frames_match_pinocchio(pin, tmp_path):
    """solo12 with a floating base, written with its six virtual joints (as test_codegen does),
    so that both libraries use the same coordinates."""
    from symgen.urdf import write_urdf

    write_urdf(load_urdf(erd_path(ERD["solo12"]), floating_base=True), tmp_path / "solo12_floating.urdf")
    robot = load_urdf(tmp_path / "solo12_floating.urdf")
    _compare(robot, pin.buildModelFromUrdf(str(tmp_path / "solo12_floating.urdf")), "solo12-floating",
             frames=robot.frame_names)


@pytest.mark.pinocchio
@pytest.mark.parametrize("kind,n,seed", SYNTHETIC, ids=[f"{k}{n}" for k, n, _ in SYNTHETIC])
def test_every_frame_matches_pinocchio_on_random_trees(kind, n, seed):
    robot = robots.make(kind, n, seed)
    model = pin_model_from_robot(robot)
    _compare(robot, model, f"{kind}{n}-seed{seed}")
    _compare(robot, model, f"{kind}{n}-seed{seed}-all", frames=robot.frame_names)


def test_ground_coordinates_equal_the_homogeneous_reference_and_J_is_the_rate_of_oMf():
    """Without Pinocchio: the two code paths agree, and d(op_f)/dt = J_lin v, d(oR_f)/dt =
    [J_ang v]x oR_f by a central difference along a random v."""
    for kind, n, seed in SYNTHETIC + [("planar", 5, 15)]:
        robot = robots.make(kind, n, seed)
        rng = np.random.default_rng(seed)
        q, v = Q.ARGUMENTS["q"].draw(rng, robot.nq, robot.nv), rng.uniform(-1, 1, robot.n)
        opts = {fr: Q.SweepOptions(frame=fr, frames=robot.frame_names) for fr in Q.FRAMES}
        ctx = f"{kind}{n} seed={seed}"
        oMf = {fr: Q.evaluate(robot, "oMf", {"q": q}, o) for fr, o in opts.items()}
        J = {fr: Q.evaluate(robot, "J", {"q": q}, o) for fr, o in opts.items()}
        assert_close(oMf["ground"], oMf["body"], "oMf ground vs reference", ctx, rtol=1e-12)
        assert_close(J["ground"], J["body"], "J ground vs reference", ctx, rtol=1e-12)
        h = 1e-6
        dM = (Q.evaluate(robot, "oMf", {"q": move(robot, q, v, h)}, opts["ground"])
              - Q.evaluate(robot, "oMf", {"q": move(robot, q, v, -h)}, opts["ground"])) / (2 * h)
        Jv = J["ground"] @ v
        assert_close(dM[:, :3, 3], Jv[:, :3], "d(op_f)/dt vs J_lin v", ctx, rtol=1e-7, atol=1e-9)
        w = Jv[:, 3:]
        wx = np.zeros((len(w), 3, 3))
        wx[:, [2, 0, 1], [1, 2, 0]], wx[:, [1, 2, 0], [2, 0, 1]] = w, -w
        assert_close(dM[:, :3, :3], wx @ oMf["ground"][:, :3, :3], "d(oR_f)/dt vs [J_ang v]x oR_f", ctx,
                     rtol=1e-7, atol=1e-9)


def test_panda_knows_every_urdf_link_and_joint_and_defaults_to_its_leaf_links():
    robot = load_urdf(erd_path(ERD["panda"]))
    links = {f.name for f in robot.frames if f.kind == "link"}
    joints = {f.name for f in robot.frames if f.kind == "joint"}
    assert links == {f"panda_link{i}" for i in range(9)} | {"panda_hand", "panda_hand_tcp", "panda_leftfinger",
                                                            "panda_rightfinger"}
    assert joints == {f"panda_joint{i}" for i in range(1, 9)} | {"panda_hand_joint", "panda_hand_tcp_joint",
                                                                "panda_finger_joint1", "panda_finger_joint2"}
    assert robot.leaf_links == ("panda_leftfinger", "panda_rightfinger", "panda_hand_tcp")
    assert [f.name for f in Q.frames_of(robot)] == list(robot.leaf_links)
    # lumped: the hand and its TCP sit on body 6 (panda_link7), 0.107 m and 0.2104 m up its z axis
    tcp, hand, joint8 = robot.frame("panda_hand_tcp"), robot.frame("panda_hand"), robot.frame("panda_joint8")
    assert tcp.body == hand.body == joint8.body == robot.link_names.index("panda_link7")
    assert tcp.translation == pytest.approx((0.0, 0.0, 0.2104)) and joint8.translation == pytest.approx((0, 0, 0.107))
    # a moving joint's frame is its body's frame
    assert robot.frame("panda_joint4").body == robot.frame("panda_link4").body == 3
    assert robot.frame("panda_joint4").rotation == robot.frame("panda_link4").rotation
    opts = Q.SweepOptions(frames=("panda_hand_tcp", "panda_joint2"))
    assert Q.QUANTITIES["J"].outputs[0].shape(robot, opts) == (2, 6, robot.nv)
    assert Q.QUANTITIES["oMf"].outputs[0].shape(robot, Q.SweepOptions()) == (3, 4, 4)


def test_robots_built_in_python_have_a_joint_and_a_link_frame_per_body():
    robot = robots.make("biped", 4, 0)
    assert [f.name for f in robot.frames[:3]] == ["world", "root_joint", "torso"]      # the free-flyer's
    assert robot.frame("root_joint").body == robot.frame("torso").body == 5
    assert len(robot.frames) == 3 + 2 * (robot.n - 6) and robot.leaf_links == ("leg1_link2", "leg2_link2")


NAME_CLASH = """<robot name="clash">
  <link name="base"/>
  <link name="a"><inertial><mass value="1"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial></link>
  <link name="tip"/>
  <joint name="tip" type="fixed"><parent link="a"/><child link="tip"/><origin xyz="0.3 0 0" rpy="0 0 0.5"/></joint>
  <joint name="a" type="revolute"><parent link="base"/><child link="a"/><origin xyz="0 0 0.2"/>
    <axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
</robot>"""


def test_a_link_wins_a_name_it_shares_with_a_joint():
    robot = parse_urdf_string(NAME_CLASH)
    assert robot.frame("tip").kind == "link" and robot.frame("a").kind == "link"
    assert robot.frame_names == ("base", "a", "tip") and robot.leaf_links == ("tip",)


@pytest.mark.pinocchio
def test_a_link_and_a_joint_sharing_a_name_match_pinocchio(pin):
    robot = parse_urdf_string(NAME_CLASH)
    _compare(robot, pin.buildModelFromXML(NAME_CLASH), "clash", frames=robot.frame_names)


def test_unknown_or_empty_frames_are_a_one_line_option_error():
    robot = load_urdf(erd_path(ERD["panda"]))
    with pytest.raises(OptionError) as err:
        Q.frames_of(robot, ("panda_hand", "gripper"))
    text = str(err.value)
    assert "\n" not in text and "'gripper'" in text and "panda_link0" in text and "panda_leftfinger" in text
    with pytest.raises(OptionError, match="no frame"):
        Q.evaluate(robot, "oMf", {"q": np.zeros(robot.n)}, Q.SweepOptions(frames=()))
    assert [f.name for f in Q.frames_of(robot, ("panda_hand", "panda_hand"))] == ["panda_hand"]


def _run(fn, q):
    """The printed program's values at q (its assignments in order, in floats)."""
    values = {s: sp.Float(x) for s, x in zip(fn.inputs[0].symbols, q)}
    for a in fn.assignments:
        values[a.temp] = a.expr.xreplace(values)
    (out,) = fn.outputs
    return np.array([float(e.xreplace(values)) for e in out.exprs]).reshape(out.shape)


@pytest.mark.pinocchio
def test_printed_program_with_chosen_frames_matches_pinocchio_and_keeps_structural_zeros(pin):
    """panda's lumped TCP, a fixed joint's frame and a moving joint's frame, through the symbolic
    run that a build prints: exact zeros where a joint does not move a frame, exact last rows."""
    path = erd_path(ERD["panda"])
    robot = load_urdf(path)
    frames = ("panda_hand_tcp", "panda_hand_joint", "panda_joint3", "panda_link0", "panda_leftfinger")
    oracle = PinOracle(robot, pin.buildModelFromUrdf(str(path)), pin, frames=frames)
    opts = Q.SweepOptions(frames=frames)
    oMf, J = program_for(robot, "oMf", opts), program_for(robot, "J", opts)
    placements = np.array(oMf.outputs[0].exprs, dtype=object).reshape(oMf.outputs[0].shape)
    jacobians = np.array(J.outputs[0].exprs, dtype=object).reshape(J.outputs[0].shape)
    assert all(e is sp.S.Zero for e in placements[:, 3, :3].ravel()) and all(e is sp.S.One for e in placements[:, 3, 3])
    for k, name in enumerate(frames):
        moved = set(robot.ancestors(robot.frame(name).body)) if robot.frame(name).body >= 0 else set()
        for j in set(range(robot.n)) - moved:
            assert all(e is sp.S.Zero for e in jacobians[k, :, j]), (name, robot.joint_names[j])
    seed = 5
    for t, q in enumerate(np.random.default_rng(seed).uniform(0, 2 * np.pi, (2, robot.n))):
        ctx = f"panda printed seed={seed} state#{t}"
        assert_close(_run(oMf, q), oracle.frame_placement(q), "printed oMf", ctx)
        assert_close(_run(J, q), oracle.frame_jacobian(q), "printed J", ctx)
