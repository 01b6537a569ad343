"""Seed 002's Sec. VI-D, the third route to the Christoffel-consistent C: differentiation of the
Coriolis terms with the structure-constant correction, C* = 1/2 (d tau/d v + M K(v))
(symgen/algorithms/differentiation.py), against Algorithm 1 and Algorithm 2 on numbers, as an
identity between a generated package's own outputs (coriolis_matrix, mass_matrix,
inverse_dynamics_derivatives) on fixed and free-flyer robots, and as ``--gamma-method vid``."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import symgen
from symgen import quantities as Q
from symgen import robots
from symgen.joint_models import structure_constants
from symgen.algorithms.differentiation import (christoffel_by_differentiation, coriolis_by_differentiation,
                                               identity_residual, structure_term)
from symgen.backend import NUMERIC
from symgen.codegen.build import BuildOptions, build
from symgen.codegen.package import import_package

pytestmark = pytest.mark.timeout(600)
SHOWCASE = Path(__file__).resolve().parent.parent / "generated" / "arm4"
ROBOTS = [("serial", 8), ("tree", 7), ("biped", 6), ("quadruped", 8)]


@pytest.mark.parametrize("kind,n", ROBOTS, ids=[f"{k}{n}" for k, n in ROBOTS])
@pytest.mark.parametrize("frame", ["ground", "body"])
def test_differentiation_gives_algorithm_1s_C_and_algorithm_2s_Gamma(kind, n, frame):
    robot = robots.make(kind, n)
    for seed in range(3):
        state = Q.random_state(np.random.default_rng(seed), robot.nq, robot.nv)
        q, v = state["q"], state["qd"]
        M, C = coriolis_by_differentiation(robot, q, v, NUMERIC, frame)
        C1 = Q.evaluate(robot, "C", state)
        assert np.abs(C - C1).max() <= 1e-9 * np.abs(C1).max(), f"{kind}{n} {frame} seed {seed}"
        assert np.allclose(M, Q.evaluate(robot, "M", state), rtol=1e-12, atol=1e-12)
        Gamma = christoffel_by_differentiation(robot, q, NUMERIC, frame)
        G2 = Q.evaluate(robot, "Gamma", state)
        assert np.abs(Gamma - G2).max() <= 1e-9 * np.abs(G2).max(), f"{kind}{n} {frame} seed {seed}"


@pytest.mark.parametrize("relative,floating", [("panda_description/urdf/panda.urdf", False),
                                               ("solo_description/robots/solo12.urdf", True)], ids=["panda", "solo12"])
def test_identity_on_panda_and_solo12(relative, floating, erd):
    """C = 1/2 (dtau/dv + M K) with the reference's Algorithm 1 C, M and RNEA derivatives (body
    frames, an independent run of each algorithm) on real robots, the free-flyer's K included."""
    from symgen import load_urdf

    robot = load_urdf(erd(relative), floating_base=floating)
    for seed in range(3):
        state = Q.random_state(np.random.default_rng(300 + seed), robot.nq, robot.nv)
        _, dtau_dv = Q.evaluate(robot, "dtau", state)
        C, M = Q.evaluate(robot, "C", state), Q.evaluate(robot, "M", state)
        assert identity_residual(C, M, dtau_dv, state["qd"], robot.joint_layout) < 1e-9, f"{relative} seed {300 + seed}"


def test_the_structure_term_is_what_makes_the_free_flyer_right():
    """Without K (eq. 27, generalized coordinates only) a free-flyer's C is wrong on the base
    block by 1/2 M (v x); single-DoF joints have K = 0."""
    robot = robots.make("biped", 4)
    state = Q.random_state(np.random.default_rng(7), robot.nq, robot.nv)
    K = structure_term(robot, state["qd"], NUMERIC)
    assert np.abs(K[6:]).max() == 0 and np.abs(K[:, 6:]).max() == 0 and np.abs(K[:6, :6]).max() > 0
    # (v x) = [[w x, u x], [0, w x]]: skew diagonal blocks, nothing below them
    assert np.allclose(K[:3, :3], -K[:3, :3].T) and np.allclose(K[3:6, 3:6], K[:3, :3])
    assert np.abs(K[3:6, :3]).max() == 0 and np.allclose(K[:3, 3:6] @ state["qd"][:3], 0)
    _, dtau_dv = Q.evaluate(robot, "dtau", {**state, "qdd": np.zeros(robot.nv)})
    M, C = Q.evaluate(robot, "M", state), Q.evaluate(robot, "C", state)
    assert identity_residual(C, M, dtau_dv, state["qd"], robot.joint_layout) < 1e-9
    assert identity_residual(C, M, dtau_dv, state["qd"], ()) > 1e-3          # no joint's K
    serial = robots.make("serial", 5)
    assert np.abs(structure_term(serial, np.ones(5), NUMERIC)).max() == 0


def test_identity_on_the_generated_showcase_package():
    """generated/arm4 (fixed base): coriolis_matrix = 1/2 inverse_dynamics_derivatives' dtau/dv,
    from the package's own compiled functions (or NumPy), single state and batch."""
    pkg = import_package(SHOWCASE)
    rng = np.random.default_rng(11)
    for backend in (pkg, pkg.numpy):
        q, v = rng.uniform(0, 2 * np.pi, (5, 4)), rng.uniform(-5, 5, (5, 4))
        C, M = backend.coriolis_matrix(q, v), backend.mass_matrix(q)
        _, dtau_dv = backend.inverse_dynamics_derivatives(q, v, rng.uniform(-5, 5, (5, 4)))
        for b in range(5):
            assert identity_residual(C[b], M[b], dtau_dv[b], v[b], pkg.joint_models) < 1e-9


@pytest.fixture(scope="module")
def floating(tmp_path_factory):
    """A free-flyer biped (4 joints + the base), with C, M, dtau and Gamma by the VI-D route."""
    robot = robots.make("biped", 4)
    out = tmp_path_factory.mktemp("vid")
    result = build(robot, out, opts=BuildOptions(quantities=("M", "C", "dtau", "Gamma"), gamma_method="vid",
                                                 copt="-O0"))
    return robot, import_package(result.path)


def test_identity_on_a_generated_free_flyer_package(floating):
    robot, pkg = floating
    rng = np.random.default_rng(12)
    for seed in range(3):
        state = Q.random_state(np.random.default_rng(100 + seed), robot.nq, robot.nv)
        q, v = state["q"], state["qd"]
        _, dtau_dv = pkg.inverse_dynamics_derivatives(q, v, rng.uniform(-5, 5, robot.nv))
        C, M = pkg.coriolis_matrix(q, v), pkg.mass_matrix(q)
        assert identity_residual(C, M, dtau_dv, v, pkg.joint_models) < 1e-9, f"seed {100 + seed}"


def test_gamma_method_vid_generates_the_christoffel_symbols(floating):
    """--gamma-method vid: the generated Gamma (C and NumPy) equals Algorithm 2's reference, and
    Gamma . v the package's C (Algorithm 1) - torsion included on the free-flyer's base block."""
    robot, pkg = floating
    for seed in range(3):
        state = Q.random_state(np.random.default_rng(200 + seed), robot.nq, robot.nv)
        ref = Q.evaluate(robot, "Gamma", state)
        for backend in (pkg, pkg.numpy):
            G = backend.christoffel(state["q"])
            assert np.abs(G - ref).max() <= 1e-9 * np.abs(ref).max(), f"seed {200 + seed}"
            C = pkg.coriolis_matrix(state["q"], state["qd"])
            assert np.allclose(G @ state["qd"], C, rtol=1e-9, atol=1e-9 * np.abs(C).max())
    manifest = json.loads((Path(pkg.__file__).parent / "manifest.json").read_text())
    assert manifest["options"]["gamma_method"] == "vid"


# ------------------------------------------------ every joint's K: inner free-flyer, spherical, planar

MIXED_URDF = Path(__file__).resolve().parent / "data" / "joints" / "mixed_joints.urdf"
BALL_MJCF = Path(__file__).resolve().parent / "data" / "joints" / "ball_limbs.xml"


def _joint_state(robot, rng):
    """q drawn on each joint's own manifold (unit quaternions, cos and sin of a planar angle)."""
    return {"q": Q.ARGUMENTS["q"].draw(rng, robot.nq, robot.nv, layout=robot.joint_layout),
            "qd": rng.uniform(-3, 3, robot.nv)}


def _assert_vid_is_algorithm_2(robot, label, seed, frames=("ground", "body"), states=2):
    rng = np.random.default_rng(seed)
    for t in range(states):
        state = _joint_state(robot, rng)
        ref = Q.evaluate(robot, "Gamma", state)                          # Algorithm 2, body frames
        C = Q.evaluate(robot, "C", state)                                # Algorithm 1
        for frame in frames:
            where = f"{label} ({frame}) seed={seed} state#{t}"
            Gamma = christoffel_by_differentiation(robot, state["q"], NUMERIC, frame)
            assert np.abs(Gamma - ref).max() <= 1e-9 * np.abs(ref).max(), where
            _, Cstar = coriolis_by_differentiation(robot, state["q"], state["qd"], NUMERIC, frame)
            assert np.abs(Cstar - C).max() <= 1e-9 * np.abs(C).max(), where
        _, dtau_dv = Q.evaluate(robot, "dtau", {**state, "qdd": np.zeros(robot.nv)})
        M = Q.evaluate(robot, "M", state)
        assert identity_residual(C, M, dtau_dv, state["qd"], robot.joint_layout) < 1e-9, f"{label} seed={seed}"


def test_every_joints_structure_block():
    """K is block diagonal over the joints with several speeds, each block its kind's structure
    constants: the free-flyer's (v x), a spherical joint's (w x), a planar joint's
    [[0, -w, vy], [w, 0, -vx], [0, 0, 0]], wherever the joint sits; 0 for single-DoF joints."""
    from symgen.spatial import skew

    robot = symgen.load_urdf(MIXED_URDF)
    blocks = {j.kind: j for j in robot.joint_models}
    v = np.random.default_rng(3).uniform(-2, 2, robot.nv)
    K = structure_term(robot, v, NUMERIC)
    expected = np.zeros_like(K)
    p, f = blocks["planar"].idx_v, blocks["freeflyer"].idx_v
    vx, vy, w = v[p:p + 3]
    expected[p:p + 3, p:p + 3] = [[0, -w, vy], [w, 0, -vx], [0, 0, 0]]
    u, w3 = v[f:f + 3], v[f + 3:f + 6]
    expected[f:f + 6, f:f + 6] = np.block([[skew(w3), skew(u)], [np.zeros((3, 3)), skew(w3)]])
    assert np.array_equal(K, expected)
    ball = next(j for j in symgen.load_robot(BALL_MJCF).joint_models if j.kind == "spherical")
    T = np.einsum("j,jrc->rc", v[:3], structure_constants("spherical"))
    assert ball.nv == 3 and np.array_equal(T, skew(v[:3]))


def test_vid_equals_algorithm_2_on_the_mixed_joints_urdf():
    """An inner free-flyer and a planar joint on a fixed base (Algorithm 2's Gamma and Algorithm
    1's C; the root free-flyer's K alone left |C - Gamma v| / |C| = 0.37 here)."""
    _assert_vid_is_algorithm_2(symgen.load_urdf(MIXED_URDF), "mixed_joints.urdf", 31)


@pytest.mark.parametrize("seed,floating", [(1, True), (3, False), (4, False)])
def test_vid_equals_algorithm_2_on_random_trees(seed, floating):
    """tests/support.py's random trees: every joint kind (spherical, planar, a free-flyer inside the
    tree, revolute and prismatic with general axes), random parents, a root free-flyer or none."""
    from support import mixed_tree

    robot = mixed_tree(seed, floating=floating)
    assert {j.kind for j in robot.joint_models[int(floating):]} >= {"spherical", "planar", "freeflyer"}
    _assert_vid_is_algorithm_2(robot, f"mixed_tree({seed}, floating={floating})", seed, states=1)


def _generated_vid_matches(robot, pkg, label, seed):
    rng = np.random.default_rng(seed)
    for t in range(3):
        state = _joint_state(robot, rng)
        ref = Q.evaluate(robot, "Gamma", state)                          # Algorithm 2 on numbers
        for backend in (pkg.numpy, pkg.c):
            G = backend.christoffel(state["q"])
            where = f"{label} {backend.__name__} seed={seed} state#{t}"
            assert np.abs(G - ref).max() <= 1e-9 * np.abs(ref).max(), where


def test_generated_vid_on_the_mixed_joints_urdf(tmp_path):
    robot = symgen.load_urdf(MIXED_URDF)
    pkg = import_package(build(robot, tmp_path, opts=BuildOptions(quantities=("Gamma",), gamma_method="vid",
                                                                  copt="-O0")).path)
    _generated_vid_matches(robot, pkg, "mixed_joints.urdf", 32)


@pytest.mark.slow
@pytest.mark.parametrize("seed,kinds", [(6, ("revolute", "spherical", "planar")),
                                        (7, ("prismatic", "freeflyer", "spherical"))])
def test_generated_vid_on_random_trees(tmp_path, seed, kinds):
    from support import mixed_tree

    robot = mixed_tree(seed, size=len(kinds), floating=False, kinds=kinds)
    pkg = import_package(build(robot, tmp_path, opts=BuildOptions(quantities=("Gamma",), gamma_method="vid",
                                                                  copt="-O0")).path)
    _generated_vid_matches(robot, pkg, f"mixed_tree({seed}, kinds={kinds})", seed)
