"""Scenes: several moving trees in one file (symgen/scenes.py), against MuJoCo and Pinocchio.

- Our MJCF scenes (tests/data/mjcf/scenes/): a 3-hinge arm beside a free box and a free can, two
  free bodies, a floating-base robot beside a free ball, a fixed arm beside a door on a hinge. The
  numeric reference and the generated NumPy and C against MuJoCo at random states after
  ``from_mujoco``: M (``mj_fullM``), C v + g (``qfrc_bias``), tau (``qfrc_inverse`` of
  ``mj_inverse``) and forward dynamics (``qacc`` of ``mj_forward``, contacts, constraints, springs,
  dampers and actuation off), to 1e-9 relative, every free joint's velocity turned by
  :func:`symgen.mjcf_convert.velocity_map`.
- M, M^-1, the derivatives of tau and the frame Jacobians are block-diagonal by tree with exact
  zeros, and the generated code of the two free bodies does as many operations as the two bodies'
  packages together (no work across trees).
- ``--tree``: the trees kept match MuJoCo's model of the file without the others.
- A URDF whose root link ``world`` holds an arm and two ``floating`` joints, against Pinocchio's own
  reading of the file (crba, rnea, aba), numeric and generated.
- Refusals: one line naming the file, the element and the reason.

Every failure message carries the seed.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import symgen
from symgen import quantities as Q
from symgen.cli import main
from symgen.mjcf_convert import ball_slots, free_slots, from_mujoco, to_mujoco, velocity_map
from symgen.scenes import delete_bodies

from support import require

try:
    import mujoco
except ImportError:
    mujoco = None

pytestmark = pytest.mark.timeout(300)

DATA = Path(__file__).resolve().parent / "data"
SCENES = DATA / "mjcf" / "scenes"
URDF_SCENE = DATA / "urdf" / "scene_two_floating.urdf"
TOL = 1e-9

#: per scene, its moving trees: (root body, joint, nv)
TREES = {
    "arm_and_props": [("arm", "hinge", 3), ("box", "free", 6), ("can", "free", 6)],
    "two_free": [("brick", "free", 6), ("ball", "free", 6)],
    "floating_robot_and_ball": [("torso", "free", 9), ("ball", "free", 6)],
    "arm_and_door": [("arm_base", "fixed", 2), ("frame", "fixed", 2)],
}
#: what each package holds: enough for M, C v + g, tau and FD; the arm's also M^-1, the derivatives of
#: tau and frame Jacobians on every tree (block-diagonal checks)
BUILDS = {
    "arm_and_props": ["--quantities", "M,tau,qdd,Minv,dtau,J", "--frames", "fore,box,can"],
    "two_free": ["--quantities", "M,tau,qdd,Minv"],
    "only_brick": ["--quantities", "M,tau,qdd,Minv", "--tree", "brick"],
    "only_ball": ["--quantities", "M,tau,qdd,Minv", "--tree", "ball"],
    "floating_robot_and_ball": ["--quantities", "M,tau,qdd"],
    "scene_two_floating": ["--quantities", "M,tau,qdd"],
}


@pytest.fixture(autouse=True)
def _needs_mujoco(request):
    if "urdf" not in request.node.name:
        require("mujoco (the mjcf extra)", mujoco is not None)


def _source(label):
    if label == "scene_two_floating":
        return URDF_SCENE
    return SCENES / f"{'two_free' if label.startswith('only_') else label}.xml"


class _Packages(dict):
    """label -> imported package, each built on first use (NumPy and C) from BUILDS."""

    def __init__(self, out):
        super().__init__()
        self.out = out

    def __missing__(self, label):
        from symgen.codegen.build import import_package

        res = CliRunner().invoke(main, ["build", str(_source(label)), "--out", str(self.out), "--name", label,
                                        "--quiet", "--jobs", "1", *BUILDS[label]])
        assert res.exit_code == 0, res.output
        pkg = import_package(self.out / label)
        assert pkg.c is not None, f"{label}: no compiled binding"
        pkg.folder = self.out / label
        self[label] = pkg
        return pkg


@pytest.fixture(scope="module")
def packages(tmp_path_factory):
    return _Packages(tmp_path_factory.mktemp("scenes"))


# ------------------------------------------------------------------------------------ MuJoCo's side

def _model(path, m=None):
    """MuJoCo's model of ``path`` (or ``m``, compiled already) with contacts, constraints, passive
    forces and actuators off: the rigid-body terms alone."""
    m = mujoco.MjModel.from_xml_path(str(path)) if m is None else m
    f = mujoco.mjtDisableBit
    m.opt.disableflags |= (f.mjDSBL_CONTACT | f.mjDSBL_CONSTRAINT | f.mjDSBL_SPRING | f.mjDSBL_DAMPER
                           | f.mjDSBL_ACTUATION)
    return m


def _mujoco_state(m, rng):
    """qpos (unit quaternions), qvel (test_mjcf's draw), a generalized force and an acceleration,
    MuJoCo's coordinates."""
    from test_mjcf import _random_mujoco_state

    qpos, qvel = _random_mujoco_state(m, rng)
    return qpos, qvel, rng.uniform(-5, 5, m.nv), rng.uniform(-3, 3, m.nv)


def _mujoco_terms(m, qpos, qvel, qfrc, qacc):
    """MuJoCo's M, qfrc_bias, qacc (mj_forward under qfrc) and qfrc_inverse (mj_inverse at qacc)."""
    d = mujoco.MjData(m)
    d.qpos[:], d.qvel[:], d.qfrc_applied[:] = qpos, qvel, qfrc
    mujoco.mj_forward(m, d)
    M = np.zeros((m.nv, m.nv))
    mujoco.mj_fullM(m, d, M)
    bias, acc = d.qfrc_bias.copy(), d.qacc.copy()
    d.qacc[:] = qacc
    mujoco.mj_inverse(m, d)
    return M, bias, acc, d.qfrc_inverse.copy()


class _Reference:
    """The numeric reference (symgen's algorithms on numbers) with a package's call signatures."""

    def __init__(self, robot):
        self.robot = robot
        self.opts = Q.SweepOptions(frame="body", gravity=robot.gravity or symgen.GRAVITY)

    def _eval(self, key, **state):
        return Q.evaluate(self.robot, key, state, self.opts)

    def mass_matrix(self, q):
        return self._eval("M", q=q)

    def inverse_dynamics(self, q, v, a):
        return self._eval("tau", q=q, qd=v, qdd=a)

    def forward_dynamics(self, q, v, tau):
        return self._eval("qdd", q=q, qd=v, tau=tau)


def _convert(robot):
    frees, balls = free_slots(robot.joint_layout), ball_slots(robot)
    return (lambda qpos, qvel: from_mujoco(qpos, qvel, robot.mujoco_qpos0, robot.floating_base, balls, frees),
            lambda q, v: to_mujoco(q, v, robot.mujoco_qpos0, robot.floating_base, balls, frees))


def _rel(a, b):
    return float(np.abs(np.asarray(a) - np.asarray(b)).max() / max(1.0, np.abs(b).max()))


def _match_mujoco(mod, m, layout, convert, label, seed, states=3):
    """The worst relative error of M, C v + g, tau and FD of ``mod`` against MuJoCo's ``m``;
    asserts each <= TOL."""
    rng = np.random.default_rng(seed)
    worst = dict.fromkeys(("M", "bias", "tau", "qdd"), 0.0)
    for t in range(states):
        ctx = f"{label} seed={seed} state#{t}"
        qpos, qvel, qfrc, qacc_in = _mujoco_state(m, rng)
        M_mj, bias_mj, qacc_mj, qfrc_inv = _mujoco_terms(m, qpos, qvel, qfrc, qacc_in)
        from_mj, to_mj = convert
        q, v = from_mj(qpos, qvel)
        back = to_mj(q, v)
        assert np.allclose(back[0], qpos, atol=1e-14) and np.allclose(back[1], qvel, atol=1e-14), ctx
        T, Tdot_qvel = velocity_map(layout, q, v)
        M = mod.mass_matrix(q)
        errors = {"M": _rel(T.T @ M @ T, M_mj),
                  "bias": _rel(T.T @ (mod.inverse_dynamics(q, v, np.zeros(len(v))) + M @ Tdot_qvel), bias_mj),
                  "tau": _rel(T.T @ mod.inverse_dynamics(q, v, T @ qacc_in + Tdot_qvel), qfrc_inv),
                  "qdd": _rel(np.linalg.solve(T, mod.forward_dynamics(q, v, np.linalg.solve(T.T, qfrc)) - Tdot_qvel),
                              qacc_mj)}
        for key, e in errors.items():
            assert e <= TOL, f"{ctx}: {key} off MuJoCo's by {e:.2e} (relative)"
            worst[key] = max(worst[key], e)
    return worst


# ------------------------------------------------------------------------------------- the readers

@pytest.mark.parametrize("label", list(TREES))
def test_mjcf_scenes_read_as_one_system_that_matches_mujoco(label):
    path = SCENES / f"{label}.xml"
    robot = symgen.load_robot(path)
    m = _model(path)
    assert (robot.nq, robot.nv) == (m.nq, m.nv)
    assert [(t.root, t.kind, t.nv) for t in robot.trees] == TREES[label]
    assert np.array_equal(robot.armature_vector, m.dof_armature)
    free = [j for j in robot.joint_models if j.kind == "freeflyer"]
    assert not robot.floating_base and all(j.name != "root_joint" for j in free), label   # free-flyers at the world
    assert all(robot.parent[j.first] == -1 for j in free)
    _match_mujoco(_Reference(robot), m, robot.joint_layout, _convert(robot), label, seed=len(label))


def _dm_control_suite(name):
    """A model file of dm_control's suite as the installed wheel ships it (with its mesh assets)."""
    try:
        import dm_control.suite
    except ImportError:
        pytest.fail("dm_control is in the test extra (pip install -e '.[test]')")
    return Path(dm_control.suite.__file__).parent / f"{name}.xml"


@pytest.mark.parametrize("trees", [(), ("torso",)])
def test_dm_control_dog_matches_mujoco(trees):
    """dm_control's dog: 75 joints (a free torso, 73 hinges) beside a free ball, meshes giving most
    inertias, eight tendons (no armature: left out with a note). With --tree torso its ball goes,
    and with it a camera aimed at the ball (MuJoCo refused the model while the camera stayed)."""
    path = _dm_control_suite("dog")
    robot = symgen.load_robot(path, trees=trees)
    if trees:
        whole = _model(path)
        m = _model(path, delete_bodies(mujoco, path, [b for b in range(1, whole.nbody) if whole.body(b).name == "ball"]))
        assert (robot.nv, len(robot.trees), robot.floating_base) == (79, 1, True)
    else:
        m = _model(path)
        assert [(t.root, t.kind) for t in robot.trees] == [("torso", "free"), ("ball", "free")]
    assert (robot.nq, robot.nv) == (m.nq, m.nv) and np.array_equal(robot.armature_vector, m.dof_armature)
    worst = _match_mujoco(_Reference(robot), m, robot.joint_layout, _convert(robot), f"dog {trees}", seed=7, states=2)
    assert max(worst.values()) <= TOL


def test_trees_are_children_of_the_world_in_the_files_order():
    robot = symgen.load_robot(SCENES / "floating_robot_and_ball.xml")
    assert robot.joint_names == ("torso_free", "hip", "knee", "shoulder", "ball_free")
    assert [t.bodies for t in robot.trees] == [tuple(range(9)), tuple(range(9, 15))]
    two = symgen.load_robot(SCENES / "two_free.xml")
    assert two.joint_names[1] == "joint1"                        # an unnamed free joint: MuJoCo's id
    alone = symgen.load_robot(SCENES / "two_free.xml", trees=("ball",))
    assert alone.floating_base and alone.joint_names == ("root_joint",)   # one tree left: the floating base


def test_info_reports_the_trees():
    res = CliRunner().invoke(main, ["info", str(SCENES / "arm_and_props.xml")])
    assert res.exit_code == 0, res.output
    assert "moving trees: 3  (M block-diagonal by tree)" in res.output
    assert re.search(r"arm +hinge +nv 3 +v\[0:3\]", res.output) and re.search(r"can +free +nv 6 +v\[9:15\]", res.output)
    res = CliRunner().invoke(main, ["info", str(SCENES / "arm_and_props.xml"), "--tree", "arm"])
    assert res.exit_code == 0 and "moving trees: 1\n" in res.output, res.output
    assert "--tree: 2 moving trees left out: box (free, nv 6), can (free, nv 6)" in res.output


# ------------------------------------------------------------------------------------------- --tree

def _without(path, tmp_path, bodies):
    """The MJCF text of ``path`` with the world's child bodies ``bodies`` cut out (by hand, not
    through symgen): MuJoCo's model of the scene without them."""
    text = path.read_text()
    for name in bodies:
        start = text.index(f'<body name="{name}"')
        depth, k = 0, start
        for tag in re.finditer(r"<(/?)body\b[^>]*?(/?)>", text[start:]):
            depth += 0 if tag.group(2) else (-1 if tag.group(1) else 1)
            if depth == 0:
                k = start + tag.end()
                break
        text = text[:start] + text[k:]
    out = tmp_path / f"{path.stem}_without_{'_'.join(bodies)}.xml"
    out.write_text(text)
    return out


@pytest.mark.parametrize("label,keep,cut,floating", [
    ("arm_and_props", "arm", ("box", "can"), False),
    ("arm_and_props", "can,arm", ("box",), False),
    ("floating_robot_and_ball", "torso", ("ball",), True),
])
def test_tree_keeps_the_robot_without_its_props(tmp_path, label, keep, cut, floating):
    path = SCENES / f"{label}.xml"
    robot = symgen.load_robot(path, trees=keep.split(","))
    alone = _without(path, tmp_path, cut)
    m = _model(alone)
    assert (robot.nq, robot.nv) == (m.nq, m.nv) and robot.floating_base == floating
    assert [t.root for t in robot.trees] == [t for t in ("arm", "torso", "box", "can") if t in keep.split(",")]
    assert any(note.startswith(f"--tree: {len(cut)} moving tree") for note in robot.notes)
    _match_mujoco(_Reference(robot), m, robot.joint_layout, _convert(robot), f"{label} --tree {keep}", seed=8)


def test_a_floating_base_is_one_tree_rooted_at_the_root_link():
    urdf = Path(symgen.__file__).parent / "examples" / "arm4.urdf"
    robot = symgen.load_robot(urdf, floating_base=True, trees=("base_link",))
    assert [(t.root, t.kind, t.nv) for t in robot.trees] == [("base_link", "floating", robot.nv)]


def test_urdf_tree_keeps_the_arm():
    robot = symgen.load_robot(URDF_SCENE, trees=("base",))
    assert robot.joint_names == ("shoulder", "elbow") and [t.root for t in robot.trees] == ["base"]
    full = symgen.load_robot(URDF_SCENE)
    q = np.random.default_rng(2).uniform(-1, 1, 2)
    q_full = Q.ARGUMENTS["q"].draw(np.random.default_rng(2), full.nq, full.nv, layout=full.joint_layout)
    q_full[14:] = q
    M = symgen.mass_matrix(full, q_full)
    assert np.allclose(symgen.mass_matrix(robot, q), M[12:, 12:], rtol=1e-15, atol=1e-15), "seed 2"
    assert not np.any(M[12:, :12]) and not np.any(M[:6, 6:12]), "seed 2"


# -------------------------------------------------------------------------- the generated packages

@pytest.mark.parametrize("label", ["arm_and_props", "two_free", "floating_robot_and_ball"])
def test_generated_scenes_match_mujoco(packages, label):
    """A MuJoCo user's data.qpos/qvel straight into the package's from_mujoco: NumPy and C."""
    pkg = packages[label]
    m = _model(SCENES / f"{label}.xml")
    assert pkg.trees == tuple(t for t, _, _ in TREES[label])
    assert [len(v) for v in pkg.tree_velocities] == [nv for _, _, nv in TREES[label]]
    for mod in (pkg.numpy, pkg.c):
        worst = _match_mujoco(mod, m, pkg.joint_models, (pkg.from_mujoco, pkg.to_mujoco), f"{label} {mod.__name__}",
                              seed=21)
        print(label, mod.__name__, {k: f"{e:.1e}" for k, e in worst.items()})
    batch = np.tile(m.qpos0, (3, 1)), np.zeros((3, m.nv))
    assert np.allclose(pkg.to_mujoco(*pkg.from_mujoco(*batch))[0], batch[0])


def test_tree_package_matches_mujoco_without_the_other_body(packages, tmp_path):
    pkg = packages["only_brick"]
    assert pkg.floating_base and not hasattr(pkg, "trees")
    m = _model(_without(SCENES / "two_free.xml", tmp_path, ("ball",)))
    for mod in (pkg.numpy, pkg.c):
        _match_mujoco(mod, m, pkg.joint_models, (pkg.from_mujoco, pkg.to_mujoco), f"--tree brick {mod.__name__}",
                      seed=5)
    manifest = json.loads((pkg.folder / "manifest.json").read_text())
    assert manifest["options"]["trees"] == ["brick"]
    res = CliRunner().invoke(main, ["verify", str(pkg.folder), "--model", str(SCENES / "two_free.xml"),
                                    "--trials", "2"])
    assert res.exit_code == 0 and "all checks passed" in res.output, res.output


def _cross_tree(trees, n):
    """The mask of M's entries between velocities of different trees."""
    tree_of = np.empty(n, dtype=int)
    for k, vs in enumerate(trees):
        tree_of[list(vs)] = k
    return tree_of[:, None] != tree_of[None, :]


def test_generated_functions_are_block_diagonal_by_tree(packages):
    pkg = packages["arm_and_props"]
    across = _cross_tree(pkg.tree_velocities, pkg.nv)
    rng = np.random.default_rng(13)
    q = Q.ARGUMENTS["q"].draw(rng, pkg.nq, pkg.nv, layout=pkg.joint_models)
    v, a = rng.uniform(-2, 2, pkg.nv), rng.uniform(-2, 2, pkg.nv)
    for mod in (pkg.numpy, pkg.c):
        for name, X in (("M", mod.mass_matrix(q)), ("Minv", mod.mass_matrix_inverse(q)),
                        *zip(("dtau/dq", "dtau/dv"), mod.inverse_dynamics_derivatives(q, v, a))):
            assert np.all(X[across] == 0.0), f"{mod.__name__} {name}: work across trees (seed 13)"
            assert np.all(np.abs(X[~across]).max() > 0), name
        J = mod.frame_jacobian(q)                      # fore, box, can: columns of their own tree only
        for k, tree in enumerate(pkg.tree_velocities):
            others = [i for i in range(pkg.nv) if i not in tree]
            assert np.all(J[k][:, others] == 0.0) and np.abs(J[k][:, list(tree)]).max() > 0, (pkg.frames[k], "seed 13")


def test_two_free_bodies_cost_what_the_two_bodies_cost(packages):
    """No work across trees: each function of the scene does the operations of the two bodies' own
    packages (--tree), within 2 %."""
    ops = {label: {f: v["ops"]["total"] for f, v in json.loads((packages[label].folder / "manifest.json")
                                                               .read_text())["functions"].items()}
           for label in ("two_free", "only_brick", "only_ball")}
    for f, total in ops["two_free"].items():
        assert total <= 1.02 * (ops["only_brick"][f] + ops["only_ball"][f]), (f, ops)


# ------------------------------------------------------------------------------------- URDF scenes

def _pinocchio_layout(model, robot):
    """(iq, iv): per symgen joint, its entries of Pinocchio's q and v, matched by name."""
    iq, iv = np.zeros(robot.nq, dtype=int), np.zeros(robot.nv, dtype=int)
    for j in robot.joint_models:
        jid = model.getJointId(j.name)
        assert model.nqs[jid] == j.nq and model.nvs[jid] == j.nv, j.name
        iq[j.idx_q:j.idx_q + j.nq] = range(model.idx_qs[jid], model.idx_qs[jid] + j.nq)
        iv[j.idx_v:j.idx_v + j.nv] = range(model.idx_vs[jid], model.idx_vs[jid] + j.nv)
    return iq, iv


def test_urdf_scene_matches_pinocchio(pin, packages):
    """Pinocchio's own reading of the file (a universe with an arm and two JointModelFreeFlyer
    children): crba, rnea, aba against the numeric reference and the generated NumPy and C."""
    robot = symgen.load_robot(URDF_SCENE)
    assert [(t.root, t.kind, t.nv) for t in robot.trees] == [("ball", "floating", 6), ("box", "floating", 6),
                                                                ("base", "fixed", 2)]
    model = pin.buildModelFromUrdf(str(URDF_SCENE))
    data = model.createData()
    assert (model.nq, model.nv) == (robot.nq, robot.nv)
    iq, iv = _pinocchio_layout(model, robot)
    pkg = packages["scene_two_floating"]
    assert pkg.trees == ("ball", "box", "base")
    seed = 17
    rng = np.random.default_rng(seed)
    worst = {}
    for t in range(3):
        q = Q.ARGUMENTS["q"].draw(rng, robot.nq, robot.nv, layout=robot.joint_layout)
        v, a, tau = rng.uniform(-2, 2, robot.nv), rng.uniform(-3, 3, robot.nv), rng.uniform(-5, 5, robot.nv)
        qp, vp, ap, taup = np.zeros(model.nq), np.zeros(model.nv), np.zeros(model.nv), np.zeros(model.nv)
        qp[iq], vp[iv], ap[iv], taup[iv] = q, v, a, tau
        Mp = pin.crba(model, data, qp)
        Mp = np.triu(Mp) + np.triu(Mp, 1).T
        expected = {"M": Mp[np.ix_(iv, iv)], "tau": pin.rnea(model, data, qp, vp, ap)[iv],
                    "qdd": pin.aba(model, data, qp, vp, taup)[iv]}
        for mod in (_Reference(robot), pkg.numpy, pkg.c):
            got = {"M": mod.mass_matrix(q), "tau": mod.inverse_dynamics(q, v, a),
                   "qdd": mod.forward_dynamics(q, v, tau)}
            for key, value in got.items():
                e = _rel(value, expected[key])
                assert e <= TOL, f"{type(mod).__name__} {key}: {e:.2e} off Pinocchio's (seed {seed}, state {t})"
                worst[key] = max(worst.get(key, 0.0), e)
        assert np.all(pkg.c.mass_matrix(q)[_cross_tree(pkg.tree_velocities, pkg.nv)] == 0.0)
    print("URDF scene vs Pinocchio", {k: f"{e:.1e}" for k, e in worst.items()})


# ---------------------------------------------------------------------------------------- refusals

MIMIC_SCENE = """<robot name="r"><link name="world"/>
<link name="a"><inertial><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>
<link name="b"><inertial><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>
<link name="c"><inertial><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>
<link name="d"><inertial><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>
<joint name="f1" type="floating"><parent link="world"/><child link="a"/></joint>
<joint name="f2" type="floating"><parent link="world"/><child link="b"/></joint>
<joint name="h1" type="continuous"><parent link="world"/><child link="c"/></joint>
<joint name="h2" type="continuous"><parent link="c"/><child link="d"/><mimic joint="h1"/></joint></robot>"""
SCENE_WELD = """<mujoco><worldbody><body name="arm"><joint axis="0 0 1"/><geom size=".1"/></body>
<body name="box" pos="1 0 0"><freejoint/><geom size=".1"/></body></worldbody>
<equality><weld name="glue" body1="arm" body2="box"/></equality></mujoco>"""


@pytest.mark.parametrize("file,text,args,expected", [
    ("scene.xml", None, ["--tree", "arm,cup"], "--tree cup: no moving tree is rooted at a body called 'cup'; the "
     "moving trees: arm (hinge, nv 3), box (free, nv 6), can (free, nv 6)"),
    ("scene.urdf", None, ["--tree", "world"], "--tree world: no moving tree is rooted at a body called 'world'; the "
     "moving trees: ball (floating, nv 6), box (floating, nv 6), base (fixed, nv 2)"),
    ("weld.xml", SCENE_WELD, [], "<equality>/<weld name='glue'>: an equality constraint in a scene with free joints "
     "is not supported yet"),
    ("mimic.urdf", MIMIC_SCENE, ["--mimic"], "<joint name='f2'>: a freeflyer joint in a robot with couplings or "
     "--mimic is not supported yet"),
])
def test_refusals_are_one_line_naming_the_element(tmp_path, file, text, args, expected):
    path = {"scene.xml": SCENES / "arm_and_props.xml", "scene.urdf": URDF_SCENE}.get(file, tmp_path / file)
    if text is not None:
        path.write_text(text)
    res = CliRunner().invoke(main, ["info", str(path), *args])
    assert res.exit_code == 2, res.output
    assert res.output.count("\n") == 1 and res.output.startswith(f"symgen: {path}: ") and expected in res.output, \
        res.output
    with_weld = symgen.load_robot(path, trees=("arm",)) if file == "weld.xml" else None
    assert with_weld is None or with_weld.trees[0].root == "arm"       # --tree keeps the trees without it
