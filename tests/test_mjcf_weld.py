"""MJCF loops beyond a connect on a fixed base (symgen.mjcf_loops, issue #24): a connect on a
free-floating model, and ``<equality weld>`` (translation and rotation rows, symgen.loop_kinematics).

- tests/data/mjcf/floating_four_bar_leg.xml is tests/data/urdfplus/floating_four_bar_leg.urdf written
  as MJCF (a <freejoint> torso) at a closed q*: every function of its default build (NumPy and C)
  equals Pinocchio's model of the URDF+ leg's spanning tree projected by its own G(q), Ġ, at the
  URDF's q = ours + q*, to 1e-9.
- tests/data/mjcf/four_bar_weld.xml: a planar four-bar whose last pin is a hinged knuckle welded
  to the rocker (rank 3 of the weld's 6 rows; nq 4, nv 1); and a spatial 7R loop drawn from a seed
  here (two chains of general hinges from the world, welded end to end: rank 6, nq 7, nv 1).
  Against Pinocchio's model of the spanning tree (symgen.pinocchio_oracle.pin_model_of) with G
  and Ġ from its own frame Jacobians and accelerations (symgen.oracle_loops, angular rows too):
  G, Ġ, M̄, C̄, τ̄, ḡ, the regressor to 1e-9, forward dynamics against its forwardDynamics(q, Gv,
  τ, K, γ) (Lagrange multipliers); the closed configurations against MuJoCo's own weld residual
  (efc_pos of mj_forward at qpos0 + q) and Pinocchio's frame placements; M̄ and the bias against
  MuJoCo's mj_fullM and qfrc_bias of the spanning tree (GᵀMG, Gᵀ(MĠv + bias(q, Gv))); the
  identities Ṁ̄ = C̄ + C̄ᵀ, C̄ = Γ̄ v, Y θ = τ̄; the generated NumPy and C.
- A weld to a mocap body (fixed to the world for dynamics: a weld to the world), a 7R chain: the
  same checks as the spatial loop's.
- Refusals, one line each (exit code 2).
Every comparison names its seed.
"""
from __future__ import annotations

import zlib
from pathlib import Path

import numpy as np
import pytest

import symgen
from symgen.errors import ModelError, URDFError

from support import rel_error
from test_loops import assert_closed_identities, assert_embedded_matches, assert_forward_dynamics_matches

mujoco = pytest.importorskip("mujoco")

DATA = Path(__file__).parent / "data"
LEG_MJCF = DATA / "mjcf" / "floating_four_bar_leg.xml"
LEG_URDF = DATA / "urdfplus" / "floating_four_bar_leg.urdf"
LEG_STAR = np.array([0.59999999999999998, -0.11540118986070685, 1.4363839095121216])   # the MJCF's qpos0
WELD = DATA / "mjcf" / "four_bar_weld.xml"
SPATIAL_SEED = 3


def _load(path):
    from symgen.mjcf import load_robot

    return load_robot(path)


def spatial_weld_xml(seed):
    """A spatial 7R loop drawn from ``seed``: a chain of 4 and one of 3 hinges from the world, each
    body turned by a random quaternion, each hinge with a random axis and anchor, welded end to end
    (anchor on body2; relpose from qpos0, where the loop is closed)."""
    rng = np.random.default_rng(seed)

    def vec(x):
        return " ".join(f"{a:.17g}" for a in x)

    def chain(prefix, n, start):
        opened = ""
        for i in range(n):
            pos = start if i == 0 else rng.uniform(-0.1, 0.1, 3) + np.array([0.3, 0, 0])
            quat, axis = rng.normal(size=4), rng.normal(size=3)
            opened += (f'<body name="{prefix}{i}" pos="{vec(pos)}" quat="{vec(quat / np.linalg.norm(quat))}">'
                       f'<joint name="{prefix}{i}_joint" type="hinge" axis="{vec(axis / np.linalg.norm(axis))}" '
                       f'pos="{vec(rng.uniform(-0.05, 0.05, 3))}"/><inertial pos="{vec(rng.uniform(-0.1, 0.1, 3))}" '
                       f'mass="{rng.uniform(0.3, 1.5):.6f}" diaginertia="{vec(rng.uniform(0.005, 0.008, 3))}"/>')
        return opened + "</body>" * n

    world = chain("a", 4, np.zeros(3)) + chain("b", 3, np.array([0.6, 0.2, 0.1]))
    return (f'<mujoco model="spatial_weld_{seed}"><compiler angle="radian"/><worldbody>{world}</worldbody>'
            f'<equality><weld name="w" body1="a3" body2="b2" anchor="0.1 0.05 -0.02"/></equality></mujoco>')


def _states(label, system, count, spread):
    """Closed states near qpos0 (q = 0): the independent coordinates of a 1-DoF loop admit a
    closure in a range only; a draw that admits none is redrawn."""
    seed = zlib.crc32(label.encode())
    rng = np.random.default_rng(seed)
    states = []
    while len(states) < count:
        q = rng.uniform(-spread, spread, system.nq)
        if system.tree.floating_base:
            q[:3] = rng.uniform(-1, 1, 3)
            quat = rng.normal(size=4)
            q[3:7] = quat / np.linalg.norm(quat)
        try:
            q = system.solve_loops(q)
        except ModelError:
            continue
        states.append({"q": q, **{k: rng.uniform(-3, 3, system.nv) for k in ("v", "a", "v_r", "a_r", "tau")}})
    return seed, states


def floating_spatial_weld_xml(seed):
    """The spatial 7R loop of ``seed`` hung from a free-flying torso (a <freejoint>): the loop's
    ancestor is the torso, the base, so its rows do not see the base's motion (nq 14, nv 7)."""
    torso = ('<worldbody><body name="torso" pos="0 0 1"><freejoint name="root"/>'
             '<inertial pos="0.1 0 0" mass="3" diaginertia="0.1 0.12 0.15"/>')
    return spatial_weld_xml(seed).replace("<worldbody>", torso).replace("</worldbody>", "</body></worldbody>")


def mocap_weld_xml(seed):
    """A chain of 7 general hinges from the world, drawn from ``seed`` as the spatial loop's, welded
    to a mocap body: mocap bodies are fixed to the world for dynamics, so this is a weld to the
    world (nq 7, nv 1)."""
    rng = np.random.default_rng(seed)

    def vec(x):
        return " ".join(f"{a:.17g}" for a in x)

    chain = ""
    for i in range(7):
        pos = np.zeros(3) if i == 0 else rng.uniform(-0.1, 0.1, 3) + np.array([0.3, 0, 0])
        quat, axis = rng.normal(size=4), rng.normal(size=3)
        chain += (f'<body name="a{i}" pos="{vec(pos)}" quat="{vec(quat / np.linalg.norm(quat))}">'
                  f'<joint name="a{i}_joint" type="hinge" axis="{vec(axis / np.linalg.norm(axis))}" '
                  f'pos="{vec(rng.uniform(-0.05, 0.05, 3))}"/><inertial pos="{vec(rng.uniform(-0.1, 0.1, 3))}" '
                  f'mass="{rng.uniform(0.3, 1.5):.6f}" diaginertia="{vec(rng.uniform(0.005, 0.008, 3))}"/>')
    return (f'<mujoco model="mocap_weld_{seed}"><compiler angle="radian"/><worldbody>'
            f'<body name="target" mocap="true" pos="0.4 0.3 0.2" quat="0.9 0.1 0.3 0.2"/>{chain}{"</body>" * 7}'
            f'</worldbody><equality><weld name="w" body1="a6" body2="target" anchor="0.1 0.05 -0.02"/>'
            f'</equality></mujoco>')


WELDS = {"planar": lambda tmp: WELD, "spatial": lambda tmp: _write(tmp, spatial_weld_xml(SPATIAL_SEED)),
         "floating": lambda tmp: _write(tmp, floating_spatial_weld_xml(SPATIAL_SEED)),
         "mocap": lambda tmp: _write(tmp, mocap_weld_xml(SPATIAL_SEED))}


def _qpos(m, robot, q):
    """MuJoCo's qpos of symgen's q (a free joint's quaternion w x y z; hinges offset by qpos0)."""
    if not robot.floating_base:
        return q + m.qpos0
    return np.concatenate([q[:3], q[6:7], q[3:6], q[7:] + m.qpos0[7:]])


def _write(tmp, text):
    path = tmp / "weld.xml"
    path.write_text(text)
    return path


@pytest.fixture(scope="module", params=list(WELDS))
def weld(request, pin, tmp_path_factory):
    from symgen.oracle_loops import oracle_for
    from symgen.pinocchio_oracle import pin_model_of

    path = WELDS[request.param](tmp_path_factory.mktemp("weld"))
    robot = _load(path)
    model = pin_model_of(robot.full, pin)
    return request.param, path, robot, model, oracle_for(robot, model, pin)


def test_weld_rows_and_dependent_joints(weld):
    name, _, robot, _, _ = weld
    (c,) = robot.system.closures
    assert robot.loops == (("knee",) if name == "planar" else ("w",))
    assert c.P.shape == ((3, 6) if name == "planar" else (6, 6)), f"{name}: {c.P}"
    if name == "planar":        # x, y and the turn about z: coordinate rows
        assert np.array_equal(c.P, np.eye(6)[[0, 1, 5]])
    free = 6 if robot.floating_base else 0
    assert robot.nv == 1 + free and robot.velocity_joint_names == robot.joint_names[:1 + bool(free)]
    q0 = np.zeros(robot.nq)
    if free:
        q0[6] = 1.0
    assert np.abs(robot.system.loop_residual(q0)).max() <= 1e-12, name     # qpos0 is closed


def test_closed_configurations_satisfy_mujocos_weld(pin, weld):
    """At symgen's solve_loops: MuJoCo's weld residual (efc_pos, its 6 rows) is 0 and Pinocchio's
    two frames (body1's point turned by relpose, body2's anchor) coincide."""
    name, path, robot, model, _ = weld
    model = pin.Model(model)                    # (the fixture's model is shared: frames added to a copy)
    m = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(m)
    (c,) = robot.system.closures
    frames = [model.addFrame(pin.Frame(f.name, model.getJointId(robot.full.bodies[f.body].joint_name) if f.body >= 0 else 0,
                                       pin.SE3(np.array(f.rotation), np.array(f.translation)), pin.FrameType.OP_FRAME))
              for f in (c.pred, c.succ)]
    data = model.createData()
    seed, states = _states(f"mujoco-weld-{name}", robot.system, 4, 0.4)
    for t, s in enumerate(states):
        d.qpos[:] = _qpos(m, robot, s["q"])
        mujoco.mj_forward(m, d)
        assert d.nefc == 6 and np.abs(d.efc_pos).max() <= 1e-10, f"{name}: seed {seed} #{t}: {d.efc_pos}"
        pin.framesForwardKinematics(model, data, s["q"])
        a, b = (data.oMf[f] for f in frames)
        assert np.abs(a.homogeneous - b.homogeneous).max() <= 1e-10, f"{name}: seed {seed} #{t}"
        d.qpos[-7:] += 0.05                           # off the loop: MuJoCo sees it too
        mujoco.mj_forward(m, d)
        assert np.abs(d.efc_pos).max() > 1e-4, f"{name}: seed {seed} #{t}"


def test_weld_dynamics_match_pinocchio_and_mujoco(pin, weld):
    name, path, robot, model, oracle = weld
    system = robot.system
    m = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(m)
    seed, states = _states(f"dynamics-weld-{name}", system, 3, 0.4)
    for t, s in enumerate(states):
        q, v, a, where = s["q"], s["v"], s["a"], f"{name}: seed {seed} #{t}"
        G, Gd = assert_embedded_matches(system, oracle, q, v, a, where)
        assert rel_error(system.gravity(q), oracle.gravity(q)) < 1e-9, where
        assert rel_error(system.regressor(q, v, v, a), oracle.regressor(q, v, a)) < 1e-9, where
        if robot.floating_base:                          # (a free joint's qvel is not v: tests/test_mjcf.py)
            continue
        d.qpos[:], d.qvel[:] = q + m.qpos0, G @ v        # MuJoCo's spanning tree (hinges: qvel = symgen's v)
        mujoco.mj_forward(m, d)
        M, bias = np.zeros((m.nv, m.nv)), np.zeros(m.nv)
        mujoco.mj_fullM(m, d, M)
        mujoco.mj_rne(m, d, 0, bias)                      # C(q, Gv) Gv + g, the weld off
        assert rel_error(G.T @ M @ G, system.mass_matrix(q)) < 1e-9, where
        assert rel_error(G.T @ (M @ Gd @ v + bias), system.inverse_dynamics(q, v, np.zeros(system.nv))) < 1e-9, where


def test_weld_forward_dynamics_match_pinocchios_lagrange_multipliers(pin, weld):
    name, _, robot, model, oracle = weld
    system, data = robot.system, model.createData()
    seed, states = _states(f"fd-weld-{name}", system, 3, 0.4)
    for t, s in enumerate(states):
        assert_forward_dynamics_matches(pin, model, data, oracle, system, s["q"], s["v"], s["tau"],
                                        f"{name}: seed {seed} #{t}")


def test_weld_identities(weld):
    from symgen.algorithms.regressor import robot_parameters

    name, _, robot, _, _ = weld
    system = robot.system

    tree = system.tree

    def moved(q, dq, h):              # the joints moved along dq (a free-flyer's pose kept: M̄, G ignore it)
        q = np.array(q, dtype=float)
        for i in range(tree.free, tree.n):
            q[tree.q_index[i]] += h * dq[i]
        return system.solve_loops(q)

    seed, states = _states(f"identities-weld-{name}", system, 2, 0.4)
    assert_closed_identities(system, robot_parameters(system.tree), name, seed, states, moved)


#: what the spatial welds' builds have (20-70 s here on a loaded machine: they run with -m slow; the
#: planar weld's default build, unmarked, runs the same code with its rotation row)
QUICK = {"spatial": ("M", "C", "tau", "qdd", "phi", "Kl", "qs"), "floating": ("M", "C", "tau", "qdd", "phi", "Kl", "qs"),
         "mocap": ("M", "C", "tau", "qdd", "phi", "Kl", "qs")}


def _build(robot, where, quantities=None):
    from symgen import quantities as Q
    from symgen.codegen.build import BuildOptions, build, import_package

    opts = BuildOptions(quantities=quantities or Q.DEFAULT, copt="-O0", jobs=2)
    return import_package(build(robot, where, opts=opts).path)


@pytest.fixture(scope="module")
def weld_package(weld, tmp_path_factory):
    return _build(weld[2], tmp_path_factory.mktemp(f"weld-{weld[0]}"), QUICK.get(weld[0]))


@pytest.mark.parametrize("backend", ["numpy", "c"])
@pytest.mark.parametrize("weld", [pytest.param(name, marks=pytest.mark.slow) if name in QUICK else name
                                  for name in WELDS], indirect=True)
def test_generated_weld_package(pin, weld, request, backend):
    """Every function of the weld's build (the planar weld's default set, unmarked; the spatial
    ones' QUICK set, -m slow), NumPy and C, against Pinocchio's spanning tree with its own G(q),
    Ġ; the loop functions by definition."""
    _check_weld_package(pin, weld, request.getfixturevalue("weld_package"), backend)


def _check_weld_package(pin, weld, weld_package, backend):
    from symgen.oracle_loops import oracle_for

    name, _, robot, model, _ = weld
    oracle = oracle_for(robot, model, pin, frames=weld_package.frames)
    seed, states = _states(f"generated-weld-{name}-{backend}", robot.system, 2, 0.4)
    _check_package(weld_package, backend, robot, oracle, states, QUICK.get(name), f"{name} seed {seed}")


def _check_package(package, backend, robot, oracle, states, quantities, where, shift=0.0):
    """Each built function at each state against ``oracle`` at q + ``shift`` (the spanning
    coordinates of the oracle's model); φ = 0, K = dφ/dq (central differences), G v."""
    from symgen import quantities as Q
    from symgen.closed import UNSUPPORTED

    mod = getattr(package, backend)
    keys = [k for k in (quantities or Q.DEFAULT) if k not in UNSUPPORTED and k not in Q.loops.LOOP_KEYS]
    for t, s in enumerate(states):
        state = {"q": s["q"], "qd": s["v"], "qdd": s["a"], "qd_r": s["v_r"], "qdd_r": s["a_r"], "tau": s["tau"]}
        theirs = dict(state, q=s["q"] + shift)
        oracle.at(theirs["q"])
        for x in (Q.QUANTITIES[k] for k in keys):
            at, at_ref = ((x.oracle_state(z) if x.oracle_state else z) for z in (state, theirs))
            tol = Q.tolerance(x, oracle.mass_matrix(at_ref["q"]))
            err = rel_error(Q.flat(Q.call(mod, x.key, at)), Q.flat(x.pinocchio(oracle, at_ref)))
            assert err <= tol, f"{backend} {x.function}: {err:.2e} > {tol:.1e}, {where} state #{t}"
        q = s["q"]
        assert np.abs(mod.loop_residual(q)).max() <= 1e-10, f"{backend}: {where} #{t}"
        h, eye = 1e-6, np.eye(robot.nq)
        K_fd = np.stack([(mod.loop_residual(q + h * e) - mod.loop_residual(q - h * e)) / (2 * h) for e in eye], -1)
        assert np.abs(mod.loop_jacobian(q) - K_fd).max() <= 1e-7, f"{backend}: {where} #{t}"
        assert rel_error(mod.spanning_velocity(q, s["v"]), oracle.G @ s["v"]) <= 1e-9, f"{backend}: {where} #{t}"
        q0 = q + 0.02 * (np.arange(robot.nq) % 3 == 1)
        assert np.abs(mod.loop_residual(package.solve_loops(q0))).max() <= 1e-10, f"{backend}: {where} #{t}"


def test_a_weld_with_torquescale_0_holds_no_rotation(tmp_path):
    """MuJoCo's rotation rows are scaled by torquescale: 0 holds the points together only (a
    connect: 2 rows of the planar loop, 2 degrees of freedom), as MuJoCo's own residual says."""
    path = tmp_path / "torquescale0.xml"
    path.write_text(WELD.read_text().replace('anchor="0.5 0 0"/>', 'anchor="0.5 0 0" torquescale="0"/>'))
    robot = _load(path)
    (c,) = robot.system.closures
    assert c.P.shape == (2, 3) and robot.nv == 2, c.P
    m = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(m)
    seed, states = _states("torquescale-0", robot.system, 3, 0.4)
    for t, s in enumerate(states):
        d.qpos[:] = s["q"] + m.qpos0
        mujoco.mj_forward(m, d)
        assert np.abs(d.efc_pos).max() <= 1e-10, f"seed {seed} #{t}: {d.efc_pos}"


# ------------------------------------------------------------------ a connect on a free-flyer

def test_floating_connect_reads_as_the_urdf_leg():
    robot, urdf = _load(LEG_MJCF), symgen.load_urdf(LEG_URDF, floating_base=True)
    assert robot.joint_names == urdf.joint_names and robot.velocity_joint_names == urdf.velocity_joint_names
    assert (robot.nq, robot.nv) == (10, 7) and robot.system.dependent == urdf.system.dependent
    c, u = robot.system.closures[0], urdf.system.closures[0]
    assert np.allclose(c.pred.translation, u.pred.translation, atol=1e-12)
    assert np.allclose(c.succ.translation, u.succ.translation, atol=1e-12)
    assert np.array_equal(c.P, u.P) and c.ancestor == u.ancestor


@pytest.fixture(scope="module")
def leg_package(tmp_path_factory):
    return _build(_load(LEG_MJCF), tmp_path_factory.mktemp("mjcf-leg"))


@pytest.mark.parametrize("backend", ["numpy", "c"])
def test_floating_mjcf_leg_equals_the_urdf_leg(pin, leg_package, backend):
    """Every default function of the MJCF leg (NumPy and C) against Pinocchio's model of the URDF+
    leg (JointModelFreeFlyer) projected by its own G(q), Ġ, at the URDF's q = ours + q*."""
    from symgen.oracle_loops import oracle_for

    urdf = symgen.load_urdf(LEG_URDF, floating_base=True)
    model = pin.buildModelFromUrdf(str(LEG_URDF), pin.JointModelFreeFlyer())
    oracle = oracle_for(urdf, model, pin, frames=leg_package.frames)
    robot = _load(LEG_MJCF)
    shift = np.concatenate([np.zeros(7), LEG_STAR])
    seed, states = _states(f"mjcf-leg-{backend}", robot.system, 2, 0.5)
    _check_package(leg_package, backend, robot, oracle, states, None, f"seed {seed}", shift)


# ------------------------------------------------------------------ refusals

WELD_LINE = '<weld name="knee" body1="knuckle" body2="rocker" anchor="0.5 0 0"/>'
PIN_LINE = '<connect name="pin" body1="coupler" body2="rocker" anchor="0.7 0 0"/>'


@pytest.mark.parametrize("change, element, reason", [
    ('<weld name="knee" site1="s1" site2="s2"/>', "<equality>/<weld name='knee'>", "between sites"),
    ('<weld name="knee" body1="knuckle" body2="rocker" active="false"/>', "<equality>/<weld name='knee'>",
     "inactive"),
    ('<weld name="pin" body1="coupler" body2="rocker"/>', "<equality>/<weld name='pin'>", "lock every joint"),
    (WELD_LINE + '<joint joint1="crank_joint" joint2="rocker_joint"/>', "<equality>/<weld>", "beside joint couplings"),
    (WELD_LINE.replace("/>", "/><connect body1=\"crank\" body2=\"rocker\" anchor=\"0 0 0\" active=\"false\"/>"),
     "<equality>/<connect name=", "inactive"),
])
def test_refusals_are_one_line(tmp_path, change, element, reason):
    from click.testing import CliRunner

    from symgen.cli import main
    from symgen.mjcf import load_mjcf

    if "name=\"pin\"" in change:             # the four-bar of four_bar_connect.xml: 3 hinges, 3 rows
        text = (DATA / "mjcf" / "four_bar_connect.xml").read_text().replace(PIN_LINE, change)
    else:
        text = WELD.read_text().replace(WELD_LINE, change)
    assert change in text
    if "site1" in change:
        text = text.replace('<joint name="knuckle_joint"', '<site name="s1"/><joint name="knuckle_joint"')
        text = text.replace('<joint name="rocker_joint"', '<site name="s2"/><joint name="rocker_joint"')
    path = tmp_path / "bad.xml"
    path.write_text(text)
    mimic = "joint1" in change
    with pytest.raises(URDFError) as info:
        load_mjcf(path, mimic=mimic)
    message = str(info.value)
    assert element in message and reason in message and str(path) in message and "\n" not in message, message
    result = CliRunner().invoke(main, ["info", str(path)] + (["--mimic"] if mimic else []))
    assert result.exit_code == 2 and element in result.output, result.output
