"""symgen against Pinocchio, the outside oracle (DESIGN.md, "Verification").

At random states (the paper's Section 5: q in [0, 2 pi], qd in [0, 10]) and for each robot:

    M      symgen.mass_matrix and Algorithm 1's M    vs  pin.crba (upper triangle, symmetrized)
    tau    symgen.inverse_dynamics, gravity default  vs  pin.rnea with the model's gravity
    C      Algorithm 1's C                           vs  pin.computeCoriolisMatrix
    Mdot   Algorithm 1's Mdot                        vs  C_pin + C_pin^T, and a central
                                                         difference of pin.crba along qd
    Gamma  Algorithm 2, Gamma[:, :, k]               vs  C_pin(q, e_k)  (C is linear in qd)

each both as printed in the paper (body frames) and in ground coordinates (``*_ground``, what the
generated code runs).

Robots: the paper's synthetic systems (built straight into Pinocchio, and written as URDF by
symgen.urdf.write_urdf and read back by both), robots from example-robot-data read by both from
the same URDF (legged ones with a fixed base; mimic joints are independent coordinates in both,
Pinocchio's default), and the same robots with a floating base, which symgen models as six
single-DoF joints: that model is written as URDF and read by both, so both use the same
coordinates. Every failure message carries the robot and the seed.
"""
from __future__ import annotations

import zlib
from pathlib import Path

import numpy as np
import pytest

import symgen
from symgen import robots
from symgen.algorithms import christoffel_ground, coriolis_ground, crba_ground
from symgen.backend import NUMERIC
from support import OracleError, PinOracle, assert_close, erd_path, pin_model_from_robot, random_states

pytestmark = pytest.mark.pinocchio

STATES = 5               # random states per robot for M, tau, C, Mdot
GAMMA_STATES = 2         # of those, how many also compare all Christoffel symbols (every k)


def seed_for(label: str) -> int:
    """A fixed seed per robot (stable across runs and Python versions), printed on failure."""
    return zlib.crc32(label.encode())


def compare_with_pinocchio(robot, model, label: str, states: int = STATES,
                           gamma_states: int = GAMMA_STATES, seed: int | None = None):
    """All comparisons of the module docstring at ``states`` random states."""
    oracle = PinOracle(robot, model)
    seed = seed_for(label) if seed is None else seed
    for t, (q, qd, qdd) in enumerate(random_states(seed, robot.n, states, robot.nq)):
        ctx = f"{label} seed={seed} state#{t} (support.random_states({seed}, {robot.n}, {states}))"
        M_pin = oracle.mass_matrix(q)
        C_pin = oracle.coriolis(q, qd)
        M, Mdot, C = symgen.coriolis(robot, q, qd)
        assert_close(symgen.mass_matrix(robot, q), M_pin, "M(crba)", ctx)
        assert_close(M, M_pin, "M(alg1)", ctx)
        assert_close(symgen.inverse_dynamics(robot, q, qd, qdd), oracle.inverse_dynamics(q, qd, qdd), "tau", ctx)
        assert_close(C, C_pin, "C", ctx)
        assert_close(Mdot, C_pin + C_pin.T, "Mdot", ctx)
        # independent of any factorization: h = 1e-6 leaves ~1e-10 of round-off and truncation
        assert_close(Mdot, oracle.mass_matrix_dot_fd(q, qd), "Mdot(fd)", ctx, rtol=1e-6, atol=1e-9)
        # the ground-coordinate algorithms, which the generated code runs
        Mg, Mdotg, Cg = coriolis_ground(robot, q, qd, NUMERIC)
        assert_close(crba_ground(robot, q, NUMERIC), M_pin, "M(crba, ground frame)", ctx)
        assert_close(Mg, M_pin, "M(alg1, ground frame)", ctx)
        assert_close(Cg, C_pin, "C(ground frame)", ctx)
        assert_close(Mdotg, C_pin + C_pin.T, "Mdot(ground frame)", ctx)
        if t < gamma_states:
            Gamma_pin = oracle.christoffel(q)
            assert_close(symgen.christoffel(robot, q), Gamma_pin, "Gamma", ctx)
            assert_close(christoffel_ground(robot, q, NUMERIC), Gamma_pin, "Gamma(ground frame)", ctx)


# ------------------------------------------------------------------------------ conventions

def test_gravity_is_pinocchio_default(pin):
    """symgen's default gravity is Pinocchio's (-9.81 along z), so rnea comparisons need no setup."""
    assert np.array_equal(np.asarray(symgen.GRAVITY, float), pin.Model().gravity.linear)


def test_joint_map_handles_order_and_continuous_joints(pin):
    """The adapter on a model whose Pinocchio order differs from symgen's (binary tree: symgen
    numbers breadth-first, Pinocchio needs depth-first) and whose joints are continuous
    (Pinocchio q = (cos, sin))."""
    from dataclasses import replace
    tree = robots.make("tree", 7, seed=3)
    tree = replace(tree, bodies=tuple(replace(b, joint_type="continuous") for b in tree.bodies))
    oracle = PinOracle(tree, pin_model_from_robot(tree))
    assert oracle.model.nq == 14 and oracle.model.nv == 7
    P = oracle.map.P
    assert np.array_equal(P @ P.T, np.eye(7)) and not np.array_equal(P, np.eye(7))
    q = np.linspace(0.1, 0.7, 7)
    qp = oracle.map.q(q)
    for i, name in enumerate(tree.joint_names):
        j = oracle.model.getJointId(name)
        iq, iv = oracle.model.joints[j].idx_q, oracle.model.joints[j].idx_v
        assert qp[iq:iq + 2] == pytest.approx([np.cos(q[i]), np.sin(q[i])])
        assert oracle.map.v(q)[iv] == q[i]
    compare_with_pinocchio(tree, oracle.model, "tree7-continuous")


def test_joint_map_rejects_breadth_first_pinocchio_model(pin):
    """A Pinocchio model built breadth-first gives silently wrong crba results; refuse it."""
    tree = robots.make("tree", 5, seed=0)
    model = pin.Model()
    for b in tree.bodies:
        jid = model.addJoint(b.parent + 1, pin.JointModelRevoluteUnaligned(np.array(b.axis)),
                             pin.SE3(np.array(b.rotation), np.array(b.translation)), b.joint_name)
        model.appendBodyToJoint(jid, pin.Inertia.Random(), pin.SE3.Identity())
    with pytest.raises(OracleError, match="depth-first"):
        PinOracle(tree, model)


# ------------------------------------------------------------------------- synthetic systems

SYNTHETIC = [("serial", 10), ("serial", 20), ("serial", 30), ("planar", 5), ("tree", 10), ("tree", 20),
             ("biped", 6), ("quadruped", 8), ("biped", 20), ("quadruped", 20)]


@pytest.mark.parametrize("kind,n", SYNTHETIC, ids=[f"{k}{n}" for k, n in SYNTHETIC])
def test_synthetic_built_directly(pin, kind, n):
    """The algorithms on symgen's own model, no URDF in between: Pinocchio is built joint by
    joint from the Robot (placements, axes, inertias about the CoM)."""
    robot = robots.make(kind, n, seed=0)
    compare_with_pinocchio(robot, pin_model_from_robot(robot), f"{robot.name}-direct")


@pytest.mark.slow
@pytest.mark.parametrize("n", [10, 20, 30])
def test_paper_section5_trials(pin, n):
    """The paper's experiment (100 random states, serial chains of 10, 20, 30 bodies), with
    Pinocchio in place of the paper's identity checks."""
    robot = robots.make("serial", n, seed=0)
    compare_with_pinocchio(robot, pin_model_from_robot(robot), f"{robot.name}-section5", states=100,
                           gamma_states=100)


SYNTHETIC_URDF = [("serial", 10), ("serial", 20), ("tree", 10), ("planar", 5), ("biped", 6), ("quadruped", 8)]


@pytest.mark.parametrize("kind,n", SYNTHETIC_URDF, ids=[f"{k}{n}" for k, n in SYNTHETIC_URDF])
def test_synthetic_written_as_urdf(pin, tmp_path, kind, n):
    """write_urdf, then both read the file: symgen's reader and writer against Pinocchio's reader.
    The Robot that was written must also agree (the file loses nothing that matters)."""
    from symgen.urdf import write_urdf
    robot = robots.make(kind, n, seed=0)
    path = tmp_path / f"{robot.name}.urdf"
    write_urdf(robot, path)
    model = (pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer()) if robot.floating_base
             else pin.buildModelFromUrdf(str(path)))
    reread = symgen.load_urdf(path, floating_base=robot.floating_base)
    compare_with_pinocchio(reread, model, f"{robot.name}-urdf")
    compare_with_pinocchio(robot, model, f"{robot.name}-written", gamma_states=1)


# ------------------------------------------------------------------- example-robot-data robots

#: Robots from example-robot-data: label -> path under its robots directory. Files with mimic
#: joints are read as they are: symgen and Pinocchio's buildModelFromUrdf (by default) both make
#: every mimic joint an independent coordinate (test_mimic_joints_are_independent_coordinates).
ERD_FILES = {
    "panda": "panda_description/urdf/panda.urdf",                      # prismatic fingers, mimic
    "ur5": "ur_description/urdf/ur5_robot.urdf",
    "z1": "z1_description/urdf/z1.urdf",
    "xarm7": "xarm_description/urdf/xarm7.urdf",
    "so101": "so_arm_description/urdf/so101.urdf",
    "kinova": "kinova_description/robots/kinova.urdf",                 # continuous joints
    "double_pendulum_continuous": "double_pendulum_description/urdf/double_pendulum_continuous.urdf",
    "finger_edu": "finger_edu_description/robots/finger_edu.urdf",
    "solo12": "solo_description/robots/solo12.urdf",
    "anymal_b": "anymal_b_simple_description/robots/anymal.urdf",
    "anymal_c": "anymal_c_simple_description/urdf/anymal.urdf",        # unaligned axes
    "go1": "go1_description/urdf/go1.urdf",
    "go2": "go2_description/urdf/go2.urdf",
    "a1": "a1_description/urdf/a1.urdf",
    "laikago": "laikago_description/urdf/laikago.urdf",
    "b1-z1": "b1_description/urdf/b1-z1.urdf",                         # quadruped with an arm
    "talos_full": "talos_data/robots/talos_full_v2.urdf",              # 44 DoF, 12 mimic joints
    "g1-hands": "g1_description/urdf/g1_29dof_with_hand_rev_1_0.urdf",  # 43 DoF, hands
    "alex-sake_hands": "alex_description/urdf/alex_sake_hands.urdf",   # humanoid upper body, grippers
    "centauro": "centauro_description/urdf/centauro.urdf",             # 39 DoF, unaligned axes
    "human": "human_description/robots/human.urdf",
    "tiago_no_hand": "tiago_description/robots/tiago_no_hand.urdf",    # prismatic + continuous
    "tiago_dual": "tiago_description/robots/tiago_dual.urdf",          # 101 DoF, depth 15
    "tiago_pro": "tiago_pro_description/robots/tiago_pro.urdf",        # 10 mimic joints
    "baxter": "baxter_description/urdf/baxter.urdf",                   # 2 mimic joints
    "romeo": "romeo_description/urdf/romeo.urdf",                      # 55 DoF, 22 mimic joints
    "icub": "icub_description/robots/icub.urdf",                       # head inertia: round-off
    "icub_reduced": "icub_description/robots/icub_reduced.urdf",
    # refused before inertias were checked after lumping, with a tolerance (symgen.urdf.validate)
    "allegro_right": "allegro_hand_description/urdf/allegro_right_hand.urdf",  # triangle, lumped tip
    "bolt": "bolt_description/robots/bolt.urdf",                       # feet: mass 0, inertia not 0
    "hyq": "hyq_description/robots/hyq_no_sensors.urdf",               # feet: massless placeholders
    "pr2": "pr2_description/urdf/pr2.urdf",                            # 10 mimic joints
    "alex-psyonic_hands": "alex_description/urdf/alex_psyonic_hands.urdf",
    "romeo_small": "romeo_description/urdf/romeo_small.urdf",          # triangle broken by 2/3: warned
    "romeo_laas_small": "romeo_description/urdf/romeo_laas_small.urdf",  # negative moments: warned
}

#: Read with a fixed base (the URDF root is the base, legged robots and humanoids included);
#: panda is compared in test_mimic_joints_are_independent_coordinates.
ERD_FIXED = [label for label in ERD_FILES if label != "panda"]
#: Read with symgen's floating base, compared through a URDF of that model; ur5, z1 and xarm7 have
#: a fixed "world" root link, which the free motion then moves (as Pinocchio's free-flyer does).
ERD_FLOATING = ["solo12", "go2", "laikago", "talos_full", "g1-hands", "centauro", "human", "kinova", "icub",
                "anymal_c", "go1", "anymal_b", "tiago_no_hand", "bolt", "allegro_right", "romeo_laas_small",
                "ur5", "z1", "xarm7"]


def erd_urdf(label: str) -> Path:
    """example-robot-data's URDF file for ``label``."""
    return erd_path(ERD_FILES[label])


def test_mimic_joints_are_independent_coordinates(pin):
    """panda.urdf as it is: its second finger joint mimics the first, and symgen, like
    Pinocchio's buildModelFromUrdf by default, makes it an independent coordinate of q (and says
    so in a note); M, tau, C, Mdot and Gamma then agree with Pinocchio's."""
    path = erd_urdf("panda")
    assert "<mimic" in path.read_text(encoding="utf-8"), f"{path} has no <mimic> element any more"
    robot = symgen.load_urdf(path)
    assert robot.notes == ("joint 'panda_finger_joint2' mimics 'panda_finger_joint1' in the URDF; symgen "
                           "treats it as an independent coordinate (as Pinocchio does by default; --mimic embeds the "
                           "relation)",)
    assert robot.joint_names[-2:] == ("panda_finger_joint1", "panda_finger_joint2")
    model = pin.buildModelFromUrdf(str(path))
    assert model.nv == robot.n == 9
    compare_with_pinocchio(robot, model, "panda", gamma_states=STATES)


@pytest.mark.parametrize("label", ERD_FIXED)
def test_erd_fixed_base(pin, label):
    path = erd_urdf(label)
    robot = symgen.load_urdf(path)
    compare_with_pinocchio(robot, pin.buildModelFromUrdf(str(path)), label)


@pytest.mark.parametrize("label", ERD_FLOATING)
def test_erd_floating_base(pin, tmp_path, label):
    """symgen's floating base is Pinocchio's free-flyer: both read the original file; then symgen's
    rewrite of it (without the free-flyer) read by both with one."""
    from symgen.urdf import write_urdf
    source = erd_urdf(label)
    robot = symgen.load_urdf(source, floating_base=True)
    assert robot.floating_base and robot.n == symgen.load_urdf(source).n + 6 and robot.nq == robot.n + 1
    compare_with_pinocchio(robot, pin.buildModelFromUrdf(str(source), pin.JointModelFreeFlyer()), f"{label}-floating")
    path = tmp_path / f"{robot.name}_floating.urdf"
    write_urdf(robot, path)
    model = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
    compare_with_pinocchio(symgen.load_urdf(path, floating_base=True), model, f"{label}-floating-written",
                           states=1, gamma_states=0)
