"""Mimic joints by embedding (``--mimic``, :mod:`symgen.mimic`).

The outside reference is Pinocchio's model WITHOUT mimic joints (``buildModelFromUrdf`` reads
every joint as independent by default), evaluated at q_full = G q + o, G v, G a and projected by
G (:class:`~symgen.pinocchio_oracle.EmbeddedPinOracle`) — with G and o written out BY HAND here for
the test robot, so a wrong composition of mimics in symgen cannot also fool the reference.
Pinocchio 4.1's own ``mimic=True`` algorithms are not a reference (its computeCoriolisMatrix
breaks Mdot = C + C^T). Every comparison names its seed.

The test robot (a gripper on an arm, plus a leg on another branch of the base):
  leg_joint (continuous, on the base)  mimics shoulder (another branch) x 0.5 - 0.3
  finger_r_joint (prismatic)           mimics finger_l_joint x -1 + 0.01
  thumb_joint (revolute)               mimics finger_r_joint x 2.5 + 0.1: a mimic of a mimic
                                       = -2.5 finger_l + 0.125
"""
from __future__ import annotations

import json
import zlib

import numpy as np
import pytest
from click.testing import CliRunner

import symgen
from symgen import quantities as Q
from symgen.cli import main
from symgen.codegen.build import BuildOptions, build, import_package
from symgen.errors import URDFError
from symgen.pinocchio_oracle import EmbeddedPinOracle
from symgen.urdf import parse_urdf_string
from support import rel_error, seeded_states


def _link(name, mass, com):
    return (f'<link name="{name}"><inertial><origin xyz="{com}" rpy="0.1 -0.2 0.3"/><mass value="{mass}"/>'
            f'<inertia ixx="0.02" ixy="0.001" ixz="-0.002" iyy="0.03" iyz="0.0015" izz="0.025"/></inertial></link>')


def _joint(name, jtype, parent, child, xyz, rpy, axis, mimic=""):
    return (f'<joint name="{name}" type="{jtype}"><parent link="{parent}"/><child link="{child}"/>'
            f'<origin xyz="{xyz}" rpy="{rpy}"/><axis xyz="{axis}"/>'
            f'<limit lower="-3" upper="3" effort="1" velocity="1"/>{mimic}</joint>')


def gripper(finger_r='<mimic joint="finger_l_joint" multiplier="-1" offset="0.01"/>',
            thumb='<mimic joint="finger_r_joint" multiplier="2.5" offset="0.1"/>',
            leg='<mimic joint="shoulder" multiplier="0.5" offset="-0.3"/>', extra=""):
    return "\n".join([
        '<robot name="gripper">', '<link name="base"/>',
        _link("upper", 1.2, "0.05 0.01 0.2"), _link("palm", 0.8, "0 0.02 0.05"),
        _link("finger_l", 0.1, "0.01 0.02 0.03"), _link("finger_r", 0.12, "0.01 -0.02 0.03"),
        _link("thumb", 0.05, "0.02 0 0.01"), _link("leg", 0.9, "0.1 0 -0.1"), _link("foot", 0.3, "0.02 0.01 -0.05"),
        _joint("shoulder", "revolute", "base", "upper", "0 0 0.1", "0 0 0", "0 0 1"),
        _joint("wrist", "revolute", "upper", "palm", "0.1 0 0.4", "0.3 0 0", "0 1 0"),
        _joint("finger_l_joint", "prismatic", "palm", "finger_l", "0 0.03 0.1", "0 0 0", "0 1 0"),
        _joint("finger_r_joint", "prismatic", "palm", "finger_r", "0 -0.03 0.1", "0 0 0", "0 1 0", finger_r),
        _joint("thumb_joint", "revolute", "palm", "thumb", "0.03 0 0.08", "0 0.2 0", "1 0 0", thumb),
        _joint("leg_joint", "continuous", "base", "leg", "0 0.2 0", "0 0 0.5", "1 0 0", leg),
        _joint("foot_joint", "revolute", "leg", "foot", "0 0 -0.4", "0 0 0", "0 1 0"),
        extra, '</robot>'])


#: full q order (urdfdom's: depth first, children by joint name) and the reduced one
FULL = ("leg_joint", "foot_joint", "shoulder", "wrist", "finger_l_joint", "finger_r_joint", "thumb_joint")
REDUCED = ("foot_joint", "shoulder", "wrist", "finger_l_joint")
#: q_full = G q + o, by hand from the relations above
G = np.array([[0, 0.5, 0, 0],
              [1, 0, 0, 0],
              [0, 1, 0, 0],
              [0, 0, 1, 0],
              [0, 0, 0, 1],
              [0, 0, 0, -1],
              [0, 0, 0, -2.5]])
O = np.array([-0.3, 0, 0, 0, 0, 0.01, 2.5 * 0.01 + 0.1])


@pytest.fixture(scope="module")
def urdf(tmp_path_factory):
    path = tmp_path_factory.mktemp("mimic") / "gripper.urdf"
    path.write_text(gripper())
    return path


@pytest.fixture(scope="module")
def robot(urdf):
    return symgen.load_urdf(urdf, mimic=True)


@pytest.fixture(scope="module")
def oracle(pin, urdf, robot):
    model = pin.buildModelFromUrdf(str(urdf))                 # mimic ignored: the full model
    assert tuple(model.names[1:]) == FULL
    return EmbeddedPinOracle(robot, model, pin, G=G, offset=O)


def test_embedding_is_the_hand_written_one(robot):
    assert robot.full.joint_names == FULL
    assert robot.joint_names == REDUCED and robot.n == robot.nq == robot.nv == 4
    assert np.array_equal(robot.embedding.matrix(), G)
    assert np.allclose(robot.embedding.offsets(), O, rtol=0, atol=1e-15)
    # the regressor's parameters stay 10 per moving body of the full model
    assert robot.link_names == robot.full.link_names and len(robot.link_names) == 7
    with pytest.raises(symgen.ModelError, match=r"q must have shape \(4,\)"):
        Q.evaluate(robot, "M", {"q": np.zeros(7)})


@pytest.mark.parametrize("frame", Q.FRAMES)
def test_numeric_reference_matches_the_embedding_of_pinocchio(robot, oracle, frame):
    """Every registered quantity, as the numeric reference computes it, against Pinocchio's
    full model at q_full = G q + o projected by G (the hand-written G)."""
    seed, states = seeded_states(f"reference-{frame}", robot)
    for t, state in enumerate(states):
        for x in (Q.QUANTITIES[k] for k in Q.available(robot)):
            at = x.oracle_state(state) if x.oracle_state else state
            got = Q.evaluate(robot, x.key, at, Q.SweepOptions(frame=frame))
            tol = Q.tolerance(x, oracle.mass_matrix(at["q"]))
            err = rel_error(got, x.pinocchio(oracle, at))
            assert err <= tol, f"{x.function} ({frame}): rel. error {err:.2e} > {tol:.1e}, seed {seed} state #{t}"


def test_numeric_api_embeds_too(robot, oracle):
    seed, (s,) = seeded_states("api", robot, 1)
    assert rel_error(symgen.mass_matrix(robot, s["q"]), oracle.mass_matrix(s["q"])) < 1e-9, f"seed {seed}"
    assert rel_error(symgen.inverse_dynamics(robot, s["q"], s["qd"], s["qdd"]),
                oracle.inverse_dynamics(s["q"], s["qd"], s["qdd"])) < 1e-9, f"seed {seed}"
    assert rel_error(symgen.christoffel(robot, s["q"]), oracle.christoffel(s["q"])) < 1e-9, f"seed {seed}"


@pytest.fixture(scope="module")
def package(robot, tmp_path_factory):
    return import_package(build(robot, tmp_path_factory.mktemp("pkg"), opts=BuildOptions(copt="-O0")).path)


@pytest.mark.parametrize("backend", ["numpy", "c"])
def test_generated_code_matches_the_embedding_of_pinocchio(package, oracle, robot, backend):
    mod = getattr(package, backend)
    assert package.nq == package.nv == 4 and tuple(package.joint_names) == REDUCED
    assert len(package.parameters) == 70
    seed, states = seeded_states(f"generated-{backend}", robot)
    for t, state in enumerate(states):
        for x in (Q.QUANTITIES[k] for k in Q.DEFAULT):            # a default build's
            at = x.oracle_state(state) if x.oracle_state else state
            tol = Q.tolerance(x, oracle.mass_matrix(at["q"]))
            for what, expected in (("Pinocchio", x.pinocchio(oracle, at)), ("reference", Q.evaluate(robot, x.key, at))):
                err = rel_error(Q.call(mod, x.key, at), expected)
                assert err <= tol, (f"{backend} {x.function} vs {what}: rel. error {err:.2e} > {tol:.1e}, "
                                    f"seed {seed} state #{t}")


def test_identities_of_the_reduced_system(package):
    """Mdot = C + C^T, C = Gamma v, C v = RNEA(q, v, 0) - g, M Minv = 1 on the generated C."""
    c = package.c
    seed, states = seeded_states("identities", package)
    for t, s in enumerate(states):
        q, v, a = s["q"], s["qd"], s["qdd"]
        C, zero = c.coriolis_matrix(q, v), np.zeros(4)
        where = f"seed {seed} state #{t}"
        assert rel_error(c.mass_matrix_dot(q, v), C + C.T) < 1e-12, where
        assert rel_error(np.einsum("ijk,k->ij", c.christoffel(q), v), C) < 1e-12, where
        assert rel_error(C @ v, c.inverse_dynamics(q, v, zero) - c.gravity(q)) < 1e-12, where
        assert rel_error(c.mass_matrix(q) @ c.mass_matrix_inverse(q), np.eye(4)) < 1e-10, where
        assert rel_error(c.inverse_dynamics(q, v, c.forward_dynamics(q, v, s["tau"])), s["tau"]) < 1e-10, where
        assert rel_error(c.regressor(q, v, v, a) @ package.parameters, c.slotine_li(q, v, v, a)) < 1e-12, where


def test_parametric_build_embeds_the_full_models_parameters(pin, robot, urdf, tmp_path):
    pkg = import_package(build(robot, tmp_path, opts=BuildOptions(copt="-O0", parametric=True,
                                                                  quantities=("M", "tau", "Y", "qdd"))).path)
    oracle = EmbeddedPinOracle(robot, pin.buildModelFromUrdf(str(urdf)), pin, G=G, offset=O)
    seed = zlib.crc32(b"parametric")
    rng = np.random.default_rng(seed)
    for t in range(2):
        s = Q.random_state(rng, 4, 4, parameters=pkg.parameters)
        assert s["params"].shape == (70,)
        oracle.set_parameters(s["params"])
        for key in ("M", "tau", "qdd"):
            x = Q.QUANTITIES[key]
            err = rel_error(Q.call(pkg.c, key, s, Q.SweepOptions(parametric=True)), x.pinocchio(oracle, s))
            assert err <= Q.tolerance(x, oracle.mass_matrix(s["q"])), f"{key}: {err:.2e}, seed {seed} state #{t}"
        Y = pkg.c.regressor(s["q"], s["qd"], s["qd_r"], s["qdd_r"])        # no params: not inertial
        assert rel_error(Y @ s["params"], oracle.mass_matrix(s["q"]) @ s["qdd_r"] + oracle.coriolis(s["q"], s["qd"]) @ s["qd_r"]
                    + oracle.gravity(s["q"])) < 1e-9, f"seed {seed} state #{t}"


def test_panda_fingers_embedded_match_pinocchio(pin, erd):
    """A real file: panda's second finger mimics the first (prismatic, multiplier 1)."""
    path = erd("panda_description/urdf/panda.urdf")
    robot = symgen.load_urdf(path, mimic=True)
    assert robot.n == 8 and "panda_finger_joint2" not in robot.joint_names
    G_panda = np.zeros((9, 8))
    G_panda[:8, :8] = np.eye(8)
    G_panda[8, 7] = 1.0
    oracle = EmbeddedPinOracle(robot, pin.buildModelFromUrdf(str(path)), pin, G=G_panda, offset=np.zeros(9))
    seed, states = seeded_states("panda", robot, 2)
    for t, state in enumerate(states):
        for x in (Q.QUANTITIES[k] for k in Q.available(robot)):
            at = x.oracle_state(state) if x.oracle_state else state
            err = rel_error(Q.evaluate(robot, x.key, at), x.pinocchio(oracle, at))
            tol = Q.tolerance(x, oracle.mass_matrix(at["q"]))
            assert err <= tol, f"panda {x.function}: {err:.2e} > {tol:.1e}, seed {seed} state #{t}"


def test_cli_build_mimic_then_verify_against_pinocchio(pin, urdf, tmp_path):
    runner = CliRunner()
    out = tmp_path / "out"
    result = runner.invoke(main, ["build", str(urdf), "--mimic", "--out", str(out), "--quantities", "M,C,tau,qdd,J",
                                  "--copt", "-O0", "--quiet"])
    assert result.exit_code == 0, result.output
    manifest = json.loads((out / "gripper" / "manifest.json").read_text())
    assert manifest["options"]["mimic"] is True and manifest["nv"] == 4
    assert manifest["joint_names"] == list(REDUCED) and len(manifest["link_names"]) == 7
    assert {m["joint"] for m in manifest["mimic"]} == {"leg_joint", "finger_r_joint", "thumb_joint"}
    result = runner.invoke(main, ["verify", str(out / "gripper"), "--urdf", str(urdf), "--trials", "3"])
    assert result.exit_code == 0, result.output
    assert "numpy vs Pinocchio: mass_matrix" in result.output and "mimic=True" in result.output


def test_info_without_mimic_suggests_the_option_and_with_it_shows_the_relations(urdf):
    plain = CliRunner().invoke(main, ["info", str(urdf)])
    assert plain.exit_code == 0 and "DoF: 7" in plain.output
    assert plain.output.count("--mimic embeds the relation") == 3, plain.output
    embedded = CliRunner().invoke(main, ["info", str(urdf), "--mimic"])
    assert embedded.exit_code == 0 and "DoF: 4" in embedded.output, embedded.output
    assert "= -2.5 q[3] + 0.125 thumb_joint" in embedded.output, embedded.output


def test_without_mimic_the_tags_are_ignored(urdf):
    plain, stripped = symgen.load_urdf(urdf), parse_urdf_string(gripper("", "", ""))
    assert plain.bodies == stripped.bodies and plain.n == 7
    assert plain.embedding is None and plain.system is None


BAD = [
    pytest.param(gripper(finger_r='<mimic joint="thumb_joint"/>'), "finger_r_joint",
                 "a cycle of mimic joints (finger_r_joint -> thumb_joint -> finger_r_joint)", id="cycle"),
    pytest.param(gripper(leg='<mimic joint="hip"/>'), "leg_joint", "mimics joint 'hip', which the file does not define",
                 id="missing-target"),
    pytest.param(gripper(leg='<mimic joint="fix"/>', extra='<link name="tip"/>' + _joint(
        "fix", "fixed", "foot", "tip", "0 0 0", "0 0 0", "1 0 0")), "leg_joint", "which is fixed", id="fixed-target"),
    pytest.param(gripper(thumb='<mimic joint="finger_r_joint" multiplier="two"/>'), "thumb_joint",
                 "attribute multiplier='two': 'two' is not a decimal number", id="non-numeric-multiplier"),
]


@pytest.mark.parametrize("text, joint, reason", BAD)
def test_bad_mimic_specs_are_one_line_errors_with_exit_code_2(tmp_path, text, joint, reason):
    path = tmp_path / "bad.urdf"
    path.write_text(text)
    with pytest.raises(URDFError, match=joint):
        symgen.load_urdf(path, mimic=True)
    for command in (["build", str(path), "--mimic", "--out", str(tmp_path / "o"), "--no-compile"],
                    ["info", str(path), "--mimic"]):
        result = CliRunner().invoke(main, command)
        assert result.exit_code == 2, result.output
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and str(path) in lines[0] and f"<joint name='{joint}'>" in lines[0], lines
        assert reason in lines[0], lines[0]


def test_a_cycle_without_mimic_is_only_a_note(tmp_path):
    """Without --mimic the relations are not used (Pinocchio's default), so a cycle reads."""
    robot = parse_urdf_string(gripper(finger_r='<mimic joint="thumb_joint"/>'))
    assert robot.n == 7 and len(robot.notes) == 3


def test_gamma_by_partials_of_m_with_a_plain_copy_mimic(tmp_path):
    """--gamma-method partials differentiates the full M by its coordinates: a mimic that is a
    plain copy (multiplier 1, offset 0: the thumb copies the wrist) shares the wrist's symbol, so
    d/dq_wrist lands on one of the two columns, which the projection sums anyway."""
    path = tmp_path / "copy.urdf"
    path.write_text(gripper(thumb='<mimic joint="wrist"/>'))
    robot = symgen.load_urdf(path, mimic=True)
    pkg = import_package(build(robot, tmp_path, opts=BuildOptions(copt="-O0", quantities=("Gamma",),
                                                                  gamma_method="partials")).path)
    seed, states = seeded_states("partials", robot, 2)
    for t, s in enumerate(states):
        err = rel_error(pkg.c.christoffel(s["q"]), Q.evaluate(robot, "Gamma", s))
        assert err < 1e-9, f"rel. error {err:.2e}, seed {seed} state #{t}"


def test_mimic_on_a_free_flyer_matches_the_embedding_of_pinocchio(pin, urdf):
    """--floating-base --mimic: the free-flyer's q[0:7], v[0:6] pass through the embedding (G is
    the hand-written one with an identity block for the base), against Pinocchio's free-flyer
    model of the full robot."""
    robot = symgen.load_urdf(urdf, mimic=True, floating_base=True)
    assert robot.joint_names == ("root_joint",) + REDUCED and (robot.nq, robot.nv) == (11, 10)
    G_ff = np.zeros((13, 10))
    G_ff[:6, :6], G_ff[6:, 6:] = np.eye(6), G
    assert np.array_equal(robot.embedding.matrix(), G_ff)
    oracle = EmbeddedPinOracle(robot, pin.buildModelFromUrdf(str(urdf), pin.JointModelFreeFlyer()), pin,
                               G=G_ff, offset=np.r_[np.zeros(7), O])
    seed, states = seeded_states("free-flyer", robot, 2)
    for t, state in enumerate(states):
        for x in (Q.QUANTITIES[k] for k in Q.available(robot)):
            at = x.oracle_state(state) if x.oracle_state else state
            for frame in Q.FRAMES:
                got = Q.evaluate(robot, x.key, at, Q.SweepOptions(frame=frame))
                err, tol = rel_error(got, x.pinocchio(oracle, at)), Q.tolerance(x, oracle.mass_matrix(at["q"]))
                assert err <= tol, f"{x.function} ({frame}): {err:.2e} > {tol:.1e}, seed {seed} state #{t}"
