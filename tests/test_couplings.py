"""URDF+ couplings (geared rotors, belts) embedded as explicit linear constraints, loops refused
or opened on purpose, rotors of mass 0 (:mod:`symgen.urdf.plus`, :mod:`symgen.couplings`).

The outside reference is Pinocchio's model of the spanning tree: ``buildModelFromUrdf`` reads a
URDF+ file as a plain URDF (urdfdom skips ``<coupling>`` and ``<loop>``), every rotor joint an
ordinary joint. It is evaluated at the consistent q_full = G y and projected by G, with G written
out BY HAND below from the files' couplings (so a misreading of GRBDA's coupling semantics in
symgen cannot also fool the reference): M̄ = GᵀMG, C̄ = GᵀC(q_full, G v)G (Ġ = 0), τ̄ = Gᵀτ,
the regressor GᵀY. Every comparison names its seed.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import symgen
from symgen import quantities as Q
from symgen.cli import main
from symgen.codegen.build import BuildOptions, build, import_package
from symgen.errors import URDFError
from symgen.pinocchio_oracle import EmbeddedPinOracle, PinOracle
from symgen.urdf import parse_urdf_string
from support import rel_error, seeded_states

DATA = Path(__file__).parent / "data" / "urdfplus"

#: per mechanism: (file, floating base, full joint order (urdfdom's), independent joints, G by hand)
MECHANISMS = {
    # rotor_k turns as ratio_k q_k (ratios 6, -9, 4.5)
    "rotor_chain": ("rotor_chain.urdf", False, ("j0", "j1", "j2", "j2_rotor", "j1_rotor", "j0_rotor"),
                    ("j0", "j1", "j2"),
                    np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1], [0, 0, 4.5], [0, -9, 0], [6, 0, 0]])),
    # the ankle rotor sits on the thigh, its predecessor is the foot: 12 (q_knee + q_ankle)
    "belt_leg": ("belt_leg.urdf", False,
                 ("hip", "ankle_rotor_joint", "knee", "ankle", "knee_rotor_joint", "hip_rotor_joint"),
                 ("hip", "knee", "ankle"),
                 np.array([[1, 0, 0], [0, 12, 12], [0, 1, 0], [0, 0, 1], [0, 12, 0], [6, 0, 0]])),
    # a free-flying torso (6 speeds passed through) and a leg whose knee rotor turns with hip + knee
    "quadruped_leg": ("quadruped_leg.urdf", True,
                      ("root_joint", "abad_joint", "hip_joint", "knee_joint", "hip_rotor_joint", "knee_rotor_joint",
                       "abad_rotor_joint"),
                      ("root_joint", "abad_joint", "hip_joint", "knee_joint"),
                      np.block([[np.eye(6), np.zeros((6, 3))],
                                [np.zeros((6, 6)), np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1], [0, 6, 0],
                                                             [0, 9.33, 9.33], [6, 0, 0]])]])),
}


def _load(key):
    file, floating, *_ = MECHANISMS[key]
    return symgen.load_urdf(DATA / file, floating_base=floating)


def _pin_model(pin, key):
    file, floating, *_ = MECHANISMS[key]
    path = str(DATA / file)
    return pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer()) if floating else pin.buildModelFromUrdf(path)


def _oracle(pin, key, robot, **kwargs):
    G = MECHANISMS[key][4].astype(float)
    return EmbeddedPinOracle(robot, _pin_model(pin, key), pin, G=G, offset=np.zeros(G.shape[0] + (key == "quadruped_leg")),
                             **kwargs)


# ------------------------------------------------------------------------------------ reading

@pytest.mark.parametrize("key", MECHANISMS)
def test_the_embedding_is_the_hand_written_one(pin, key):
    _, _, full, independent, G = MECHANISMS[key]
    robot = _load(key)
    assert tuple(_pin_model(pin, key).names[1:]) == full == robot.full.joint_names
    assert robot.joint_names == robot.velocity_joint_names == independent
    assert np.array_equal(robot.embedding.matrix(), G)
    assert not np.any(robot.embedding.offsets())
    assert len(robot.loops) == 3 and robot.link_names == robot.full.link_names


def test_info_notes_rotors_and_couplings():
    result = CliRunner().invoke(main, ["info", str(DATA / "belt_leg.urdf")])
    assert result.exit_code == 0, result.output
    assert "DoF: 3 (nq 3, nv 3)" in result.output
    assert "= 12 q[1] + 12 q[2] ankle_rotor_joint" in result.output
    assert "coupling 'ankle_belt': 12 * (knee + ankle) = ankle_rotor_joint" in result.output
    assert "link 'knee_rotor': mass 0 with rotational inertia" in result.output


def test_rotors_of_mass_zero_are_read_as_pinocchio_reads_them(pin):
    """Without its URDF+ elements (a plain URDF, every joint free) the rotor chain, two of whose
    rotors have mass 0 and an inertia, gives Pinocchio's M and tau."""
    text = (DATA / "rotor_chain.urdf").read_text().replace(' independent="false"', "")
    text = text[:text.index("  <coupling")] + "</robot>\n"
    robot = parse_urdf_string(text)
    assert robot.n == 6 and robot.embedding is None and not robot.loops
    assert any("'rotor0': mass 0 with rotational inertia" in n for n in robot.notes)
    oracle = PinOracle(robot, pin.buildModelFromXML(text), pin)        # (continuous joints: cos, sin there)
    seed, states = seeded_states("rotors", robot)
    for t, s in enumerate(states):
        assert rel_error(symgen.mass_matrix(robot, s["q"]), oracle.mass_matrix(s["q"])) < 1e-12, f"seed {seed} #{t}"
        assert rel_error(symgen.inverse_dynamics(robot, s["q"], s["qd"], s["qdd"]),
                    oracle.inverse_dynamics(s["q"], s["qd"], s["qdd"])) < 1e-12, f"seed {seed} #{t}"


# ------------------------------------------------------------------- against Pinocchio, numbers

@pytest.mark.parametrize("key", MECHANISMS)
@pytest.mark.parametrize("frame", Q.FRAMES)
def test_numeric_reference_matches_the_spanning_tree_of_pinocchio(pin, key, frame):
    """Every registered quantity (M̄, C̄, Γ̄, τ̄, ḡ, regressors, FD, frames ...) against Pinocchio's
    spanning tree at q_full = G y, projected by the hand-written G."""
    robot = _load(key)
    oracle = _oracle(pin, key, robot)
    seed, states = seeded_states(f"reference-{key}-{frame}", robot)
    for t, state in enumerate(states):
        for x in (Q.QUANTITIES[k] for k in Q.available(robot)):
            if x.pinocchio is None:                  # loop_residual: no rows (tested below)
                continue
            at = x.oracle_state(state) if x.oracle_state else state
            tol = Q.tolerance(x, oracle.mass_matrix(at["q"]))
            err = rel_error(Q.evaluate(robot, x.key, at, Q.SweepOptions(frame=frame)), x.pinocchio(oracle, at))
            assert err <= tol, f"{key} {x.function} ({frame}): rel. error {err:.2e} > {tol:.1e}, seed {seed} state #{t}"


@pytest.mark.parametrize("key", ["rotor_chain", "belt_leg"])
def test_projection_written_out_with_pinocchio(pin, key):
    """M̄ = GᵀMG, C̄ = GᵀCG, τ̄ = Gᵀτ and the regressor GᵀY, formed here from Pinocchio's crba,
    computeCoriolisMatrix, rnea and computeJointTorqueRegressor on the spanning tree."""
    robot, G = _load(key), MECHANISMS[key][4].astype(float)
    model = _pin_model(pin, key)
    data = model.createData()
    seed, states = seeded_states(f"written-{key}", robot)
    for t, s in enumerate(states):
        y, v, a = s["q"], s["qd"], s["qdd"]
        q, qd, qdd = _pin_q(model, G @ y), G @ v, G @ a
        where = f"{key}: seed {seed} state #{t}"
        M = pin.crba(model, data, q)
        M = np.triu(M) + np.triu(M, 1).T
        assert rel_error(symgen.mass_matrix(robot, y), G.T @ M @ G) < 1e-9, where
        C = pin.computeCoriolisMatrix(model, data, q, qd)
        assert rel_error(symgen.coriolis(robot, y, v)[2], G.T @ C @ G) < 1e-9, where
        assert rel_error(symgen.inverse_dynamics(robot, y, v, a), G.T @ pin.rnea(model, data, q, qd, qdd)) < 1e-9, where
        Y = pin.computeJointTorqueRegressor(model, data, q, qd, qdd)
        assert rel_error(Q.evaluate(robot, "Y", {"q": y, "qd": v, "qd_r": v, "qdd_r": a}), G.T @ Y) < 1e-9, where


def _pin_q(model, q):
    """Pinocchio's configuration of symgen's q (a continuous joint's angle as its cos, sin)."""
    out = np.zeros(model.nq)
    for k, joint in enumerate(model.joints[1:]):
        out[joint.idx_q:joint.idx_q + joint.nq] = (np.cos(q[k]), np.sin(q[k])) if joint.nq == 2 else q[k]
    return out


# ------------------------------------------------------------------- against Pinocchio, code

@pytest.fixture(scope="module", params=["belt_leg", "quadruped_leg"])
def package(request, tmp_path_factory):
    robot = _load(request.param)
    path = build(robot, tmp_path_factory.mktemp("cpl"), opts=BuildOptions(copt="-O0", jobs=2)).path
    return request.param, robot, import_package(path)


@pytest.mark.parametrize("backend", ["numpy", "c"])
def test_generated_code_matches_the_spanning_tree_of_pinocchio(pin, package, backend):
    key, robot, pkg = package
    mod = getattr(pkg, backend)
    assert tuple(pkg.joint_names) == tuple(pkg.velocity_joint_names) == MECHANISMS[key][3]
    assert len(pkg.loops) == 3 and len(pkg.parameters) == 10 * len(robot.link_names)
    oracle = _oracle(pin, key, robot, frames=pkg.frames)
    seed, states = seeded_states(f"generated-{key}-{backend}", robot)
    for t, state in enumerate(states):
        for x in (Q.QUANTITIES[k] for k in Q.DEFAULT):
            at = x.oracle_state(state) if x.oracle_state else state
            tol = Q.tolerance(x, oracle.mass_matrix(at["q"]))
            err = rel_error(Q.call(mod, x.key, at), x.pinocchio(oracle, at))
            assert err <= tol, f"{key} {backend} {x.function}: rel. error {err:.2e} > {tol:.1e}, seed {seed} state #{t}"


def test_identities_of_the_constrained_system(package):
    """Ṁ̄ = C̄ + C̄ᵀ, C̄ = Γ̄ · v, C̄ v = τ̄(q, v, 0) - ḡ, Y θ = τ̄ (Slotine-Li at v_r = v) on the C."""
    key, robot, pkg = package
    c, n = pkg.c, pkg.nv
    seed, states = seeded_states(f"identities-{key}", robot)
    for t, s in enumerate(states):
        q, v, a = s["q"], s["qd"], s["qdd"]
        C, where = c.coriolis_matrix(q, v), f"{key}: seed {seed} state #{t}"
        assert rel_error(c.mass_matrix_dot(q, v), C + C.T) < 1e-12, where
        assert rel_error(np.einsum("ijk,k->ij", c.christoffel(q), v), C) < 1e-12, where
        assert rel_error(C @ v, c.inverse_dynamics(q, v, np.zeros(n)) - c.gravity(q)) < 1e-12, where
        assert rel_error(c.regressor(q, v, v, a) @ pkg.parameters, c.inverse_dynamics(q, v, a)) < 1e-12, where
        assert rel_error(c.inverse_dynamics(q, v, c.forward_dynamics(q, v, s["tau"])), s["tau"]) < 1e-10, where


# --------------------------------------------------------------------------- CLI, loops, errors

def test_cli_build_then_verify_a_belt_transmission(pin, tmp_path):
    runner, out, urdf = CliRunner(), tmp_path / "out", DATA / "belt_leg.urdf"
    result = runner.invoke(main, ["build", str(urdf), "--out", str(out), "--quantities", "M,C,tau,qdd,J,Y",
                                  "--copt", "-O0", "--quiet", "--jobs", "2"])
    assert result.exit_code == 0, result.output
    manifest = json.loads((out / "belt_leg" / "manifest.json").read_text())
    assert manifest["loops"] == ["hip_transmission", "knee_transmission", "ankle_belt"]
    assert manifest["joint_names"] == manifest["velocity_joint_names"] == ["hip", "knee", "ankle"]
    assert "mimic" not in manifest["options"] and len(manifest["link_names"]) == 6
    result = runner.invoke(main, ["verify", str(out / "belt_leg"), "--urdf", str(urdf), "--trials", "2"])
    assert result.exit_code == 0, result.output
    assert "numpy vs Pinocchio: mass_matrix" in result.output and "couplings=" not in result.output


def test_a_loop_symgen_cannot_embed_is_refused_in_one_line_with_exit_code_2(tmp_path):
    """A loop pinned to the fixed root link has no joint on one side (tests/test_loops.py and
    tests/test_loop_clusters.py embed the loops symgen can; a floating base is one since #24)."""
    urdf = tmp_path / "in" / "grounded_loop.urdf"
    urdf.parent.mkdir()
    urdf.write_text((DATA / "four_bar.urdf").read_text().replace('<successor link="rocker">', '<successor link="ground">')
                    .replace('"rocker_joint" type="revolute" independent="false"', '"rocker_joint" type="revolute"'))
    out = tmp_path / "out"
    out.mkdir()
    result = CliRunner().invoke(main, ["build", str(urdf), "--out", str(out)])
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "<loop name='pin'>" in lines[0] and "--open-loops" in lines[0], result.output
    # a loop closed to the root is embedded now (a weld to the world); this one is refused because its
    # joints marked independent do not match the loop's degrees of freedom
    assert "they must match" in lines[0] and not any(out.iterdir())


def test_open_loops_builds_the_spanning_tree_on_purpose(tmp_path):
    with pytest.warns(symgen.SymgenWarning, match="--open-loops: loop\\(s\\) 'pin' not closed"):
        robot = symgen.load_urdf(DATA / "four_bar.urdf", open_loops=True)
    assert robot.n == 3 and any("not the closed mechanism" in n for n in robot.notes)
    result = CliRunner().invoke(main, ["build", str(DATA / "four_bar.urdf"), "--open-loops", "--out", str(tmp_path),
                                       "--quantities", "M", "--no-compile", "--quiet"])
    assert result.exit_code == 0, result.output
    assert "not closed" in result.output
    manifest = json.loads((tmp_path / "four_bar" / "manifest.json").read_text())
    assert manifest["options"]["open_loops"] is True and manifest["nv"] == 3
    assert "--open-loops" in (tmp_path / "four_bar" / "four_bar.c").read_text()


def _plus(extra="", rotor_joint='independent="false"', ratio='<ratio value="6"/>', coupling_attrs='name="gear"',
          pred="link1", succ="rotor"):
    return f"""<robot name="r"><link name="base"/>
  <link name="link1"><inertial><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>
  <link name="rotor"><inertial><mass value="0"/><inertia ixx="1e-4" ixy="0" ixz="0" iyy="1e-4" iyz="0" izz="1e-4"/></inertial></link>
  <joint name="j1" type="continuous"><parent link="base"/><child link="link1"/></joint>
  <joint name="jr" type="continuous" {rotor_joint}><parent link="base"/><child link="rotor"/></joint>
  <coupling {coupling_attrs}><predecessor link="{pred}"/><successor link="{succ}"/>{ratio}</coupling>{extra}
</robot>"""


BAD = [
    (_plus(rotor_joint='independent="no"'), "<joint name='jr'>", "attribute independent='no': expected true or false"),
    (_plus(ratio=""), "<coupling name='gear'>", "missing element <ratio>"),
    (_plus(ratio='<ratio value="six"/>'), "<coupling name='gear'>/<ratio>", "'six' is not a decimal number"),
    (_plus(succ="nope"), "<coupling name='gear'>/<successor>", "link 'nope' is not defined"),
    (_plus(succ="link1"), "<coupling name='gear'>", "predecessor and successor are the same link"),
    (_plus(pred="base"), "<coupling name='gear'>", "one lies on the other's path to the root"),
    (_plus(coupling_attrs='name="gear" type="spur"'), "<coupling name='gear'>", "coupling type 'spur' is not known"),
    (_plus(rotor_joint=""), "<coupling name='gear'>", "1 coupling(s) but 0 joint(s) marked independent=\"false\""),
    (_plus(extra='<coupling name="gear"><predecessor link="link1"/><successor link="rotor"/><ratio value="2"/></coupling>'),
     "<coupling name='gear'>", "duplicate constraint name"),
    (_plus(rotor_joint='independent="false"').replace('<joint name="j1" type="continuous">',
                                                      '<joint name="j1" type="continuous" independent="false">'),
     "<coupling name='gear'>", "1 coupling(s) but 2 joint(s)"),
]


@pytest.mark.parametrize("text, element, reason", BAD)
def test_bad_urdf_plus_is_a_one_line_error_with_exit_code_2(tmp_path, text, element, reason):
    with pytest.raises(URDFError) as info:
        parse_urdf_string(text, source="r.urdf")
    assert info.value.element == element and reason in info.value.reason, str(info.value)
    path = tmp_path / "r.urdf"
    path.write_text(text)
    result = CliRunner().invoke(main, ["info", str(path)])
    assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 1, result.output


def test_mimic_stays_working_beside_couplings():
    """A mimic joint in a URDF+ file: with --mimic it is one more linear equation, embedded with
    the couplings (the rotor chain's link2 mirrored by a mimic of j1); without, a free joint."""
    text = (DATA / "rotor_chain.urdf").read_text().replace(
        "</robot>", '<link name="tip"><inertial><mass value="0.1"/><inertia ixx="1e-3" ixy="0" ixz="0" iyy="1e-3" '
                    'iyz="0" izz="1e-3"/></inertial></link><joint name="tip_joint" type="revolute"><parent link="link2"/>'
                    '<child link="tip"/><axis xyz="1 0 0"/><limit lower="-1" upper="1" effort="1" velocity="1"/>'
                    '<mimic joint="j1" multiplier="-2" offset="0.5"/></joint></robot>')
    free, mimicked = parse_urdf_string(text), parse_urdf_string(text, mimic=True)
    assert free.n == 4 and mimicked.n == 3
    row = mimicked.full.joint_names.index("tip_joint")
    assert mimicked.embedding.matrix()[row].tolist() == [0, -2, 0]
    assert mimicked.embedding.offsets()[row] == 0.5


# --------------------------------------------------------------- GRBDA's own model: Mini Cheetah

def test_grbda_mini_cheetah_with_its_floating_root_joint_and_twelve_rotors(pin):
    """GRBDA's mini_cheetah.urdf (tests/data/grbda): a URDF `floating` root joint (a free-flyer
    model, passed through by the embedding) and 12 rotors coupled to their joints by gear ratios
    6, 6 and 9.33; every registered quantity against Pinocchio's spanning tree (its own reading of
    the file, the floating joint a JointModelFreeFlyer) projected by G, G's ratios by hand."""
    path = Path(__file__).parent / "data" / "grbda" / "mini_cheetah.urdf"
    with pytest.warns(Warning):                             # GRBDA's hip inertias break the triangle inequality
        robot = symgen.load_urdf(path)
    assert robot.nq == 19 and robot.nv == 18 and robot.full.nv == 30 and robot.joint_layout[0][1] == "freeflyer"
    G, names = robot.embedding.matrix(), robot.full.joint_names
    col = {name: 6 + k for k, name in enumerate(robot.joint_names[1:])}
    row = {name: 6 + k for k, name in enumerate(names[1:])}
    for leg in ("FL", "FR", "HL", "HR"):
        assert G[row[f"torso_to_{leg}_abad_rotor_j"], col[f"torso_to_{leg}_abad_j"]] == 6.0
        assert G[row[f"{leg}_abad_to_hip_rotor_j"], col[f"{leg}_abad_to_hip_j"]] == 6.0
        assert G[row[f"{leg}_hip_to_knee_rotor_j"], col[f"{leg}_hip_to_knee_j"]] == 9.33
    assert np.count_nonzero(G) == 6 + 12 + 12
    _every_quantity_against_the_spanning_tree(robot, "mini_cheetah")


@pytest.mark.slow          # (30 s; mini_cheetah's rotors and the random trees run in CI)
def test_grbda_mit_humanoid_with_its_eighteen_rotors(pin):
    """GRBDA's mit_humanoid.urdf (tests/data/grbda; the humanoid of issue #24's speed goal): a
    floating root joint and 18 rotors geared to hips, knees, ankles, shoulders and elbows, 42
    spanning speeds for 24 independent ones; every registered quantity against Pinocchio's
    spanning tree projected by G."""
    path = Path(__file__).parent / "data" / "grbda" / "mit_humanoid.urdf"
    robot = symgen.load_urdf(path)
    assert robot.nq == 25 and robot.nv == 24 and robot.full.nv == 42 and robot.joint_layout[0][1] == "freeflyer"
    G = robot.embedding.matrix()
    assert np.count_nonzero(G[6:, 6:].any(axis=1)) == 36                  # 18 joints and their 18 rotors
    _every_quantity_against_the_spanning_tree(robot, "mit_humanoid")


def _every_quantity_against_the_spanning_tree(robot, name):
    from symgen.verify import _pinocchio

    oracle, note = _pinocchio(robot)
    assert oracle is not None, note
    seed, states = seeded_states(name, robot, count=2)
    for t, state in enumerate(states):
        state["q"][3:7] /= np.linalg.norm(state["q"][3:7])
        for x in (Q.QUANTITIES[k] for k in Q.available(robot)):
            if x.pinocchio is None:
                continue
            at = x.oracle_state(state) if x.oracle_state else state
            tol = Q.tolerance(x, oracle.mass_matrix(at["q"]))
            err = rel_error(Q.evaluate(robot, x.key, at), x.pinocchio(oracle, at))
            assert err <= tol, f"{name} {x.function}: rel. error {err:.2e} > {tol:.1e}, seed {seed} state #{t}"


# ------------------------------------------------- the loop functions of every URDF+ package

GRBDA = Path(__file__).parent / "data" / "grbda"


def _load_grbda(name):
    import warnings

    with warnings.catch_warnings():                 # GRBDA's hip inertias break the triangle inequality
        warnings.simplefilter("ignore")
        return symgen.load_urdf(GRBDA / f"{name}.urdf")


@pytest.fixture(scope="module")
def loop_function_packages(tmp_path_factory):
    """{name: (robot, package)}: rotor_chain and GRBDA's mini_cheetah and mit_humanoid built with the
    loop functions only (solve_loops comes with loop_residual)."""
    tmp = tmp_path_factory.mktemp("cpl_loopf")
    robots = {"rotor_chain": _load("rotor_chain"), "mini_cheetah": _load_grbda("mini_cheetah"),
              "mit_humanoid": _load_grbda("mit_humanoid")}
    opts = BuildOptions(quantities=("phi", "qs"), copt="-O0")
    return {name: (robot, import_package(build(robot, tmp, name=name, opts=opts).path)) for name, robot in robots.items()}


def _assert_loop_functions(robot, pkg, G, label, count=3):
    """loop_residual has no rows, solve_loops returns q, spanning_velocity is G v, in NumPy, the C
    binding and at the top level, one state and a batch."""
    assert pkg.loop_dependent == () and issubclass(pkg.LoopError, ValueError), label
    seed, states = seeded_states(f"loop-functions-{label}", robot, count, layout=pkg.joint_models, unit_base=robot.floating_base)
    Qs, Vs = np.array([s["q"] for s in states]), np.array([s["qd"] for s in states])
    for name, mod in (("numpy", pkg.numpy), ("c", pkg.c), ("top", pkg)):
        where = f"{label} {name} seed {seed}"
        for q, v in zip(Qs, Vs):
            phi = mod.loop_residual(q)
            assert phi.shape == (0,) and phi.dtype == np.float64, where
            closed = mod.solve_loops(q)
            assert closed.shape == q.shape and np.array_equal(closed, q) and closed is not q, where
            assert rel_error(mod.spanning_velocity(q, v), G @ v) < 1e-14, where
        assert mod.loop_residual(Qs).shape == (count, 0), where
        assert np.array_equal(mod.solve_loops(Qs), Qs), where
        assert rel_error(mod.spanning_velocity(Qs, Vs), Vs @ G.T) < 1e-14, where
        with pytest.raises(ValueError, match=r"q must have shape"):
            mod.solve_loops(np.zeros(pkg.nq + 1))
    assert pkg.solve_loops is pkg.c.solve_loops, label          # the C one, when compiled
    return seed, states


def test_default_packages_with_couplings_have_the_loop_functions(pin, package):
    """belt_leg and quadruped_leg's default builds: G v against the hand-written G, and against
    Pinocchio's spanning tree: its kinetic energy at (G y, G v) is 1/2 v^T M̄ v of the projection
    by the hand-written G (so a wrong G v cannot hide in M̄)."""
    key, robot, pkg = package
    manifest = json.loads((Path(pkg.__file__).parent / "manifest.json").read_text())
    assert {"loop_residual", "spanning_velocity"} <= set(manifest["functions"])
    assert "loop_jacobian" not in manifest["functions"]
    G = MECHANISMS[key][4].astype(float)
    seed, states = _assert_loop_functions(robot, pkg, G, key)
    oracle = _oracle(pin, key, robot)
    _assert_spanning_energy(pin, oracle, pkg, states, key, seed)
    for s in states:
        q, v = s["q"], s["qd"]
        assert rel_error(pkg.spanning_velocity(q, v), oracle.spanning_velocity(q, v)) < 1e-14, f"{key} seed {seed}"


def _assert_spanning_energy(pin, oracle, pkg, states, label, seed):
    """G v against Pinocchio's spanning tree: its kinetic energy at (G y, G v) is the reduced one."""
    po = oracle.full
    for t, s in enumerate(states):
        q, v = s["q"], s["qd"]
        T = pin.computeKineticEnergy(po.model, po.data, po.map.q(oracle.q(q)), po.map.v(pkg.spanning_velocity(q, v)))
        expected = 0.5 * v @ oracle.mass_matrix(q) @ v
        assert abs(T - expected) <= 1e-12 * abs(expected), f"{label} seed {seed} state #{t}"


@pytest.mark.parametrize("name", ["rotor_chain", "mini_cheetah", "mit_humanoid"])
def test_grbda_models_with_couplings_have_the_loop_functions(pin, loop_function_packages, name):
    """rotor_chain (G by hand), GRBDA's mini_cheetah and mit_humanoid (G from the embedding, whose
    gear ratios test_grbda_* check): loop_residual, solve_loops, spanning_velocity, and G v against
    Pinocchio's spanning tree by the kinetic energy."""
    from symgen.verify import _pinocchio

    robot, pkg = loop_function_packages[name]
    G = MECHANISMS[name][4].astype(float) if name in MECHANISMS else robot.embedding.matrix()
    seed, states = _assert_loop_functions(robot, pkg, G, name)
    oracle = _oracle(pin, name, robot) if name in MECHANISMS else _pinocchio(robot)[0]
    _assert_spanning_energy(pin, oracle, pkg, states, name, seed)


def test_loop_functions_are_refused_where_there_is_nothing_to_close(tmp_path):
    """loop_jacobian with couplings only (no rows), any loop function on a plain tree: one line, exit 2."""
    for urdf, asked, why in ((DATA / "rotor_chain.urdf", "M,loop_jacobian", "couplings only: no loop rows"),
                             (Path(__file__).parent.parent / "symgen" / "examples" / "arm4.urdf", "loop_residual",
                              "no URDF+ couplings or loops")):
        result = CliRunner().invoke(main, ["build", str(urdf), "--out", str(tmp_path), "--quantities", asked,
                                           "--no-compile", "--quiet"])
        assert result.exit_code == 2 and result.output.count("\n") == 1, result.output
        assert why in result.output and "--quantities" in result.output, result.output
