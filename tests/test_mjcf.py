"""MJCF in, through MuJoCo's own compiler (symgen/mjcf.py), checked against MuJoCo itself: the mass
matrix (``mj_fullM`` after kinematics, com_pos, crb; armature included), the bias forces
(``qfrc_bias``: ``mj_rne`` with zero acceleration after com_vel) and the kinetic energy, in MuJoCo's
coordinates (its free joint: qpos = [pos, quat w x y z], qvel = [world linear, body angular]), on
small models of our own (anchors, slides, several joints in one body, a free root, fixed bodies,
armature, ref offsets) and on dm_control suite models (committed under tests/data/mjcf/, Apache-2.0:
no network at test time); Pinocchio's buildModelFromMJCF where it reads the file as MuJoCo does;
a generated package's from_mujoco/to_mujoco and its M, bias and qacc against ``mj_forward``
with contacts and constraints off. Unsupported elements: one line, exit 2.
"""
from __future__ import annotations

import warnings
import zlib
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import symgen
from symgen.cli import main
from symgen.mjcf_convert import ball_slots, from_mujoco, quaternion_matrix, to_mujoco

from support import require

try:
    import mujoco                           # the mjcf extra (in the test extra: installed in CI)
except ImportError:
    mujoco = None


@pytest.fixture(autouse=True)
def _needs_mujoco():
    require("mujoco (the mjcf extra)", mujoco is not None)

DATA = Path(__file__).resolve().parent / "data" / "mjcf"
SUITE = ["acrobot", "cartpole", "cheetah", "finger", "hopper", "walker", "humanoid", "humanoid_CMU", "pendulum",
         "reacher", "swimmer", "ball_in_cup", "fish", "point_mass"]   # (the last three: tendons, left out)

#: hinge with an anchor off the body origin and a ref, a slide, a body with three hinges (anchors
#: apart, axes not along coordinate axes), turned bodies, a fixed (massive) body, armature
CHAIN = """<mujoco model="chain"><compiler angle="degree"/><worldbody>
<body name="b1" pos="0.1 0.2 0.3" euler="10 20 30">
  <joint name="h1" type="hinge" axis="0 0 1" pos="0.05 -0.02 0.1" ref="15" armature="0.03"/>
  <geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.04"/>
  <body name="b2" pos="0.4 0 0" quat="0.9 0.1 0.3 0.2">
    <joint name="s2" type="slide" axis="1 1 0" ref="0.1"/>
    <geom type="box" size="0.05 0.1 0.15" pos="0.02 0.03 0"/>
    <body name="b3" pos="0 0.3 0">
      <joint name="h3a" type="hinge" axis="1 0 0" pos="0.01 0 0" armature="0.2"/>
      <joint name="h3b" type="hinge" axis="0 1 1" pos="0 0.05 0"/>
      <joint name="h3c" type="hinge" axis="0.3 0.2 0.9" pos="0.02 0.01 -0.03" ref="-40"/>
      <geom type="sphere" size="0.07" pos="0.1 0.05 0.02"/>
      <body name="tool" pos="0.2 0 0" euler="0 90 0"><geom type="box" size="0.02 0.03 0.04" pos="0.05 0 0"/>
        <body name="tip" pos="0.1 0 0"><joint name="h5" type="hinge" axis="0 1 0" pos="0 0 0.02"/>
          <geom type="sphere" size="0.03" pos="0.05 0 0"/></body></body>
    </body>
  </body>
</body></worldbody></mujoco>"""

#: a free root with two hinges in one child body, a fixed body and armature
FLOATING = """<mujoco model="floating"><worldbody>
<body name="base" pos="0 0 1" euler="0.1 0.2 0.3"><freejoint name="root"/>
  <geom type="box" size="0.2 0.1 0.05" pos="0.01 0.02 0"/>
  <body name="leg" pos="0.2 0 -0.05"><joint name="ha" axis="0 1 0" pos="0 0 0.03" armature="0.05"/>
    <joint name="hb" axis="1 0 0" pos="0.01 0 0"/><geom type="capsule" fromto="0 0 0 0 0 -0.3" size="0.03"/>
    <body name="foot" pos="0 0 -0.3"><geom type="sphere" size="0.04"/></body></body>
  <body name="arm" pos="-0.2 0 0" quat="0.7 0 0.7 0"><joint name="hc" axis="0 0 1" ref="0.3"/>
    <geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.02"/></body>
</body></worldbody></mujoco>"""


def _own(tmp_path, text, name):
    path = tmp_path / f"{name}.xml"
    path.write_text(text)
    return path


def _mujoco_terms(m, qpos, qvel):
    """MuJoCo's M (mj_fullM) and bias forces (qfrc_bias) at (qpos, qvel)."""
    d = mujoco.MjData(m)
    d.qpos[:], d.qvel[:] = qpos, qvel
    mujoco.mj_kinematics(m, d)
    mujoco.mj_comPos(m, d)
    mujoco.mj_crb(m, d)
    M = np.zeros((m.nv, m.nv))
    mujoco.mj_fullM(m, d, M)
    mujoco.mj_comVel(m, d)
    bias = np.zeros(m.nv)
    mujoco.mj_rne(m, d, 0, bias)
    return M, bias


def _velocity_map(robot, q, v):
    """T with v = T qvel (the free joint's world linear velocity turned into the base frame) and
    Tdot qvel: MuJoCo's M = T^T M T, bias = T^T (b + M Tdot qvel)."""
    T, Tdot_qvel = np.eye(robot.n), np.zeros(robot.n)
    if robot.floating_base:
        T[:3, :3] = quaternion_matrix(q[3:7]).T
        Tdot_qvel[:3] = -np.cross(v[3:6], v[:3])          # d/dt R^T = -[w]x R^T (w in the base frame)
    return T, Tdot_qvel


def _random_mujoco_state(m, rng):
    qpos = m.qpos0 + rng.uniform(-1.0, 1.0, m.nq)
    for j in range(m.njnt):
        if m.jnt_type[j] in (mujoco.mjtJoint.mjJNT_FREE, mujoco.mjtJoint.mjJNT_BALL):
            a = m.jnt_qposadr[j] + (3 if m.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE else 0)
            qpos[a:a + 4] /= np.linalg.norm(qpos[a:a + 4])
    return qpos, rng.uniform(-2.0, 2.0, m.nv)


def _check_against_mujoco(path, states=3):
    robot = symgen.load_robot(path)
    m = mujoco.MjModel.from_xml_path(str(path))
    seed = zlib.crc32(path.name.encode())
    rng = np.random.default_rng(seed)
    assert robot.n == m.nv and robot.nq == m.nq
    assert np.array_equal(robot.armature_vector, m.dof_armature), path.name
    for t in range(states):
        ctx = f"{path.name} seed={seed} state#{t}"
        qpos, qvel = _random_mujoco_state(m, rng)
        M_mj, bias_mj = _mujoco_terms(m, qpos, qvel)
        q, v = from_mujoco(qpos, qvel, robot.mujoco_qpos0, robot.floating_base, ball_slots(robot))
        back = to_mujoco(q, v, robot.mujoco_qpos0, robot.floating_base, ball_slots(robot))
        assert np.allclose(back[0], qpos, atol=1e-14) and np.allclose(back[1], qvel, atol=1e-14), ctx
        M = symgen.mass_matrix(robot, q)
        b = symgen.inverse_dynamics(robot, q, v, np.zeros(robot.n), gravity=robot.gravity)
        T, Tdot_qvel = _velocity_map(robot, q, v)
        scale = max(1.0, np.abs(M_mj).max())
        assert np.abs(T.T @ M @ T - M_mj).max() <= 1e-9 * scale, ctx
        assert np.abs(T.T @ (b + M @ Tdot_qvel) - bias_mj).max() <= 1e-9 * max(1.0, np.abs(bias_mj).max()), ctx
        assert abs(0.5 * v @ M @ v - 0.5 * qvel @ M_mj @ qvel) <= 1e-9 * max(1.0, abs(qvel @ M_mj @ qvel)), ctx
    return robot


def test_own_models_match_mujoco(tmp_path):
    chain = _check_against_mujoco(_own(tmp_path, CHAIN, "chain"))
    assert chain.joint_names == ("h1", "s2", "h3a", "h3b", "h3c", "h5")
    assert [b.name for b in chain.bodies] == ["b1", "b2", "h3a_link", "h3b_link", "b3", "tip"]
    assert chain.lumped == ("tool -> b3",) and chain.armature_vector[2] == 0.2
    assert {"b1", "tool", "tip", "h3c"} <= set(chain.frame_names)
    floating = _check_against_mujoco(_own(tmp_path, FLOATING, "floating"))
    assert floating.floating_base and floating.nq == 10 and floating.joint_names[0] == "root_joint"


@pytest.mark.parametrize("name", SUITE)
def test_dm_control_suite_models_match_mujoco(name):
    _check_against_mujoco(DATA / f"{name}.xml", states=2)


def test_frames_follow_mujocos_body_placements(tmp_path):
    """Every MJCF body's link frame (fixed bodies included) where MuJoCo puts the body (xpos, xmat)."""
    path = _own(tmp_path, CHAIN, "chain")
    robot = symgen.load_robot(path)
    m = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(m)
    d.qpos[:] = _random_mujoco_state(m, np.random.default_rng(3))[0]
    mujoco.mj_kinematics(m, d)
    q, _ = from_mujoco(d.qpos, d.qvel, robot.mujoco_qpos0, False)
    names = [m.body(b).name for b in range(1, m.nbody)]
    from symgen import quantities as Q

    oMf = Q.evaluate(robot, "oMf", {"q": q}, Q.SweepOptions(frames=tuple(names)))
    for k, b in enumerate(range(1, m.nbody)):
        assert np.allclose(oMf[k][:3, 3], d.xpos[b], atol=1e-12), names[k]
        assert np.allclose(oMf[k][:3, :3], d.xmat[b].reshape(3, 3), atol=1e-12), names[k]


@pytest.mark.pinocchio
@pytest.mark.parametrize("name", ["humanoid", "hopper", "walker", "chain", "floating"])
def test_pinocchio_agrees_where_it_reads_the_file_as_mujoco_does(pin, tmp_path, name):
    """Pinocchio's buildModelFromMJCF (it merges a body's joints into one composite joint, same
    coordinates in the same order; its hinge coordinate is MuJoCo's qpos, ref included) at an
    identity root orientation: M, armature included. Measured: Pinocchio 4.1 reads acrobot,
    cartpole and cheetah (settotalmass) otherwise than MuJoCo, which is the reference there."""
    path = {"chain": lambda: _own(tmp_path, CHAIN, "chain"), "floating": lambda: _own(tmp_path, FLOATING, "floating")
            }.get(name, lambda: DATA / f"{name}.xml")()
    robot = symgen.load_robot(path)
    model = pin.buildModelFromMJCF(str(path))
    data = model.createData()
    rng = np.random.default_rng(11)
    assert (model.nq, model.nv) == (robot.nq, robot.nv)
    free = 7 if robot.floating_base else 0
    for t in range(2):
        q = rng.uniform(-1.0, 1.0, robot.nq)
        if robot.floating_base:
            q[3:7] = (0.0, 0.0, 0.0, 1.0)
        q_pin = q.copy()
        q_pin[free:] += robot.mujoco_qpos0
        M_pin = pin.crba(model, data, q_pin)
        M_pin = np.triu(M_pin) + np.triu(M_pin, 1).T
        M = symgen.mass_matrix(robot, q)
        assert np.abs(M - M_pin).max() <= 1e-9 * np.abs(M_pin).max(), (name, "seed 11", t)


SCENE_LOOP = """<mujoco><worldbody><body name="a"><joint axis="0 0 1"/><geom size=".1"/></body>
<body name="box" pos="1 0 0"><freejoint/><geom size=".1"/></body></worldbody>
<equality><connect name="grip" body1="a" body2="box" anchor="0.5 0 0"/></equality></mujoco>"""
WELD = """<mujoco><worldbody><body name="a"><joint name="h" axis="0 0 1"/><geom size=".1"/></body></worldbody>
<equality><weld body1="a"/></equality></mujoco>"""


TENDON_ARMATURE = """<mujoco><worldbody><site name="s0"/><body name="a"><joint name="h" axis="0 0 1"/>
<geom size=".1" pos=".2 0 0"/><site name="s1" pos=".2 0 0"/></body></worldbody>
<tendon><spatial name="cord" armature="0.1"><site site="s0"/><site site="s1"/></spatial></tendon></mujoco>"""


@pytest.mark.parametrize("text,expected", [
    (SCENE_LOOP, "<equality>/<connect name='grip'>: an equality constraint in a scene with free joints is not "
                 "supported yet"),
    (WELD, "<equality>/<weld name='weld0'>: its 1 closed rows lock every joint"),
    ("<mujoco><worldbody><body><joint", "MuJoCo's compiler refuses it"),
    (TENDON_ARMATURE, "<tendon>/<spatial name='cord'>: a spatial tendon with armature (0.1) is not supported"),
])
def test_unsupported_elements_are_one_line_and_exit_2(tmp_path, text, expected):
    path = _own(tmp_path, text, "bad")
    res = CliRunner().invoke(main, ["info", str(path)])
    assert res.exit_code == 2, res.output
    assert res.output.count("\n") == 1 and res.output.startswith(f"symgen: {path}: ") and expected in res.output


def test_info_and_options_on_mjcf(tmp_path):
    res = CliRunner().invoke(main, ["info", str(DATA / "cheetah.xml")])
    assert res.exit_code == 0 and "q[3] bthigh" in res.output and "MuJoCo" in res.output, res.output
    assert "torso -> bthigh  mass 1.54351  armature 0.1" in res.output
    res = CliRunner().invoke(main, ["info", str(DATA / "cheetah.xml"), "--floating-base"])
    assert res.exit_code == 2 and "free-flyer" in res.output


@pytest.fixture(scope="module")
def floating_package(tmp_path_factory):
    out = tmp_path_factory.mktemp("mjcf_pkg")
    path = out / "floating.xml"
    path.write_text(FLOATING)
    res = CliRunner().invoke(main, ["build", str(path), "--out", str(out), "--quiet", "--jobs", "1", "--quantities", "M,tau,qdd"])
    assert res.exit_code == 0, res.output
    from symgen.codegen.build import import_package

    pkg = import_package(out / "floating")
    pkg.folder = out / "floating"
    return path, pkg


def test_package_from_mujoco_gives_mujocos_dynamics(floating_package):
    """A MuJoCo user's data.qpos/qvel straight in: M, bias and qacc of mj_forward (contacts,
    constraints, springs, dampers and actuation off) from the generated C and NumPy."""
    path, pkg = floating_package
    m = mujoco.MjModel.from_xml_path(str(path))
    f = mujoco.mjtDisableBit
    m.opt.disableflags |= (f.mjDSBL_CONTACT | f.mjDSBL_CONSTRAINT | f.mjDSBL_SPRING | f.mjDSBL_DAMPER
                           | f.mjDSBL_ACTUATION)
    robot = symgen.load_robot(path)
    assert np.array_equal(pkg.armature, m.dof_armature) and np.array_equal(pkg.mujoco_qpos0, robot.mujoco_qpos0)
    rng = np.random.default_rng(5)
    for t in range(3):
        d = mujoco.MjData(m)
        d.qpos[:], d.qvel[:] = _random_mujoco_state(m, rng)
        d.qfrc_applied[:] = rng.uniform(-5, 5, m.nv)
        mujoco.mj_forward(m, d)
        M_mj = np.zeros((m.nv, m.nv))
        mujoco.mj_fullM(m, d, M_mj)
        q, v = pkg.from_mujoco(d.qpos, d.qvel)
        qpos, qvel = pkg.to_mujoco(q, v)
        assert np.allclose(qpos, d.qpos, atol=1e-14) and np.allclose(qvel, d.qvel, atol=1e-14)
        T, Tdot_qvel = _velocity_map(robot, q, v)
        tau = np.linalg.solve(T.T, d.qfrc_applied)              # T^T tau = MuJoCo's generalized force
        for mod in (pkg.numpy, pkg.c):
            M = mod.mass_matrix(q)
            assert np.abs(T.T @ M @ T - M_mj).max() <= 1e-9 * np.abs(M_mj).max(), ("seed 5", t)
            b = mod.inverse_dynamics(q, v, np.zeros(pkg.nv))
            assert np.abs(T.T @ (b + M @ Tdot_qvel) - d.qfrc_bias).max() <= 1e-9 * max(1, np.abs(d.qfrc_bias).max())
            vdot = mod.forward_dynamics(q, v, tau)               # vdot = T qacc + Tdot qvel
            qacc = np.linalg.solve(T, vdot - Tdot_qvel)
            assert np.abs(qacc - d.qacc).max() <= 1e-9 * max(1, np.abs(d.qacc).max()), ("seed 5", t)
    batch = rng.uniform(-1, 1, (4, m.nq)), rng.uniform(-1, 1, (4, m.nv))
    q, v = pkg.from_mujoco(*batch)
    assert q.shape == (4, m.nq) and np.allclose(pkg.to_mujoco(q, v)[1], batch[1])


def test_bench_mujoco_times_mujoco_in_the_same_c_loop_after_checking_it(floating_package, tmp_path):
    """`symgen bench --mujoco`: MuJoCo's C library (from the wheel) beside the generated C, each
    quantity checked against MuJoCo first; a model that is not the package's is refused."""
    from symgen.bench import BenchError, bench_package
    from symgen.bench.mujoco import check

    path, pkg = floating_package
    result = bench_package(pkg.folder, urdf=str(path), quantities=("M", "tau", "qdd"), repeats=1, min_time=0.002,
                           pin_cpp="off", batch=4, mujoco=True)
    assert all(result["us"][q]["mujoco_c"] > 0 and result["us"][q]["c_loop"] > 0 for q in ("M", "tau", "qdd"))
    assert max(result["mujoco"]["check"].values()) <= 1e-9
    heavier = tmp_path / "heavier.xml"
    heavier.write_text(FLOATING.replace('size="0.04"/></body>', 'size="0.04" mass="3"/></body>'))
    with pytest.raises(BenchError, match="disagrees with MuJoCo"):
        check(pkg.folder, heavier, ("M",))


def test_verify_takes_the_mjcf_model(floating_package):
    """`symgen verify --model robot.xml`: the reference and Pinocchio (on symgen's rewrite, armature
    set) read the MJCF the package was built from."""
    path, pkg = floating_package
    res = CliRunner().invoke(main, ["verify", str(pkg.folder), "--model", str(path), "--trials", "2"])
    assert res.exit_code == 0 and "all checks passed" in res.output, res.output
    assert "c vs Pinocchio: mass_matrix" in res.output and "c vs reference: forward_dynamics" in res.output


@pytest.mark.parametrize("relative", ["panda_description/urdf/panda.urdf", "solo_description/robots/solo12.urdf"],
                         ids=["panda", "solo12"])
def test_example_robot_data_compiled_to_mjcf_by_mujoco(tmp_path, relative):
    """A URDF compiled to MJCF by MuJoCo itself (mj_saveLastXML, from symgen's mesh-free rewrite of
    it, static bodies kept): symgen reads the MJCF as MuJoCo does (M, bias, energy to 1e-9), and as
    it reads the URDF (same joints in the same order; M to the 6 digits MuJoCo writes)."""
    robot, path = _compile_erd_to_mjcf(tmp_path, relative)
    mjcf = _check_against_mujoco(path, states=2)
    assert mjcf.joint_names == robot.joint_names
    q = np.random.default_rng(4).uniform(-1.0, 1.0, robot.nq)
    M = symgen.mass_matrix(robot, q)
    assert np.abs(symgen.mass_matrix(mjcf, q) - M).max() <= 1e-4 * np.abs(M).max(), (relative, "seed 4")


def _compile_erd_to_mjcf(tmp_path, relative, floating_base=False):
    """(symgen's URDF robot, the MJCF MuJoCo writes for it): mj_saveLastXML of symgen's mesh-free
    rewrite of the URDF, static bodies kept (``floating_base``: read with symgen's free-flyer, which
    the rewrite drops: MuJoCo's model stays fixed)."""
    from support import erd_path
    from symgen.urdf import load_urdf, urdf_string

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", symgen.errors.SymgenWarning)
        robot = load_urdf(erd_path(relative), floating_base=floating_base)
    text = urdf_string(robot)
    head = text.index(">", text.index("<robot")) + 1
    text = (text[:head] + '<mujoco><compiler fusestatic="false" balanceinertia="false" boundmass="0" '
            'boundinertia="0"/></mujoco>' + text[head:])
    path = tmp_path / f"{robot.name}.xml"
    mujoco.mj_saveLastXML(str(path), mujoco.MjModel.from_xml_string(text))
    return robot, path


#: example-robot-data files whose MJCF, as MuJoCo writes it, MuJoCo's own compiler refuses on reading
#: it back (their URDF inertias break the triangle inequality; the written file loses
#: balanceinertia="false"): symgen says so in one line
MUJOCO_REFUSES_ITS_OWN_FILE = ("allegro_hand_description/", "tiago_description/")
#: ... and those MuJoCo does not compile from the URDF at all (massless moving bodies, inertias
#: that are not positive definite): nothing to read
MUJOCO_REFUSES_THE_URDF = ("human_description/", "icub_description/", "romeo_description/")
ERD_SAMPLE = ["anymal_c_simple_description/urdf/anymal.urdf", "g1_description/urdf/g1_29dof_rev_1_0.urdf",
              "tiago_description/robots/tiago.urdf"]


def _erd_urdfs():
    from test_urdf import ERD_URDFS, KNOWN_FAILURES
    return [r for r in ERD_URDFS if r not in KNOWN_FAILURES and not r.startswith(MUJOCO_REFUSES_THE_URDF)]


@pytest.mark.parametrize("relative", [pytest.param(r, marks=() if r in ERD_SAMPLE else pytest.mark.slow)
                                      for r in _erd_urdfs()] or [None])
def test_every_example_robot_data_urdf_mujoco_compiles_reads_as_mujoco_does(tmp_path, relative):
    """Issue #23: every example-robot-data URDF compiled to MJCF by MuJoCo builds the robot MuJoCo
    has (M, bias forces, energy to 1e-9 on a random state; same joints, same order as the URDF), or,
    where MuJoCo refuses the file it wrote, a one-line error naming it. Three in CI, all with -m slow."""
    require("example-robot-data", relative is not None)
    robot, path = _compile_erd_to_mjcf(tmp_path, relative)
    if relative.startswith(MUJOCO_REFUSES_ITS_OWN_FILE):
        with pytest.raises(symgen.errors.URDFError) as info:
            symgen.load_robot(path)
        assert "\n" not in str(info.value) and str(path) in str(info.value), str(info.value)
        assert "MuJoCo's compiler refuses it" in str(info.value), str(info.value)
        return
    mjcf = _check_against_mujoco(path, states=1)
    assert mjcf.joint_names == robot.joint_names, relative


COUPLED = """<mujoco model="coupled"><worldbody><body name="a" pos="0 0 0.5"><joint name="ja" axis="0 0 1" ref="0.2"/>
<geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03"/>
<body name="b" pos="0.3 0 0"><joint name="jb" axis="0 1 0" ref="-0.4"/><geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.03"/>
<body name="c" pos="0.2 0 0"><joint name="jc" axis="1 0 0" pos="0.01 0 0"/><geom size="0.04" pos="0.05 0 0.02"/>
</body></body></body></worldbody>
<equality><joint joint1="jc" joint2="ja" polycoef="0.1 -1.5 0 0 0"/></equality></mujoco>"""


def test_equality_joint_couplings_are_mimic_joints_with_mimic(tmp_path):
    """<equality><joint> with a linear polycoef: joint1 - ref1 = a0 + a1 (joint2 - ref2), embedded by
    --mimic (reduced coordinates): M = G^T M_full G with MuJoCo's M of the full model, at a state
    that satisfies the coupling; without --mimic, one line and exit 2."""
    path = _own(tmp_path, COUPLED, "coupled")
    res = CliRunner().invoke(main, ["info", str(path)])
    assert res.exit_code == 2 and "--mimic embeds it" in res.output and res.output.count("\n") == 1
    robot = symgen.load_robot(path, mimic=True)
    assert robot.joint_names == ("ja", "jb") and robot.nq == 2
    m = mujoco.MjModel.from_xml_path(str(path))
    rng = np.random.default_rng(9)
    for t in range(2):
        q = rng.uniform(-1.0, 1.0, 2)
        qpos = m.qpos0 + np.array([q[0], q[1], 0.1 - 1.5 * q[0]])
        M_full, bias_full = _mujoco_terms(m, qpos, np.zeros(3))
        G = np.array([[1.0, 0.0], [0.0, 1.0], [-1.5, 0.0]])
        assert np.allclose(symgen.mass_matrix(robot, q), G.T @ M_full @ G, rtol=0, atol=1e-12), ("seed 9", t)
        g = symgen.inverse_dynamics(robot, q, np.zeros(2), np.zeros(2))
        assert np.allclose(g, G.T @ bias_full, rtol=0, atol=1e-12), ("seed 9", t)
    with_armature = _own(tmp_path, COUPLED.replace('axis="0 1 0" ref', 'axis="0 1 0" armature="0.1" ref'), "arm")
    with pytest.raises(symgen.URDFError, match="couplings in a model with armature are not supported yet"):
        symgen.load_robot(with_armature, mimic=True)
