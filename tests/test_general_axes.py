"""General-axis robots (issue #21 item 4's floors): the turns of the z-aligned frames chosen like
Denavit-Hartenberg's (symgen/turns.py), the halved inertia rate of Algorithm 1 in ground
coordinates, and the generated code that takes those routes against Pinocchio's M, C, M^-1 and
regressor."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from support import erd_path, find_erd_dir, pin_model_from_robot, require_pinocchio
from symgen import quantities as Q
from symgen import robots
from symgen.codegen import program as P
from symgen.algorithms.coriolis import half_rate
from symgen.backend import NUMERIC
from symgen.codegen import symbolic as S
from symgen.pinocchio_oracle import oracle_for
from symgen.spatial import inertia_rate, mcI, z_turn
from symgen.urdf import load_urdf


@pytest.mark.parametrize("kind,n,seed", [("serial", 8, 1), ("tree", 12, 2), ("quadruped", 8, 3)])
def test_a_turned_frame_puts_one_child_axis_in_its_yz_plane(kind, n, seed):
    robot = robots.make(kind, n, seed)
    turned = 0
    for p, T in enumerate(robot.z_turns):
        axis = np.array(robot.bodies[p].axis)
        assert np.allclose(T @ [0, 0, 1], axis, atol=1e-12), f"{kind}{n} seed {seed} body {p}"
        assert np.allclose(T.T @ T, np.eye(3), atol=1e-12) and np.isclose(np.linalg.det(T), 1.0)
        if np.array_equal(T, z_turn(axis)):
            continue
        turned += 1
        rows = [robot.z_aligned[c][0][0, 2] for c, b in enumerate(robot.bodies) if b.parent == p]
        assert 0.0 in rows, f"{kind}{n} seed {seed}: body {p} is turned but no child axis lies in its y-z plane"
    assert turned >= n // 3, f"{kind}{n} seed {seed}: only {turned} frames turned"


def test_axis_aligned_robots_keep_their_permutation_turns():
    """Coordinate axes keep z_turn's signed permutations (panda and solo12 print the same code)."""
    paths = [Path(__file__).resolve().parents[1] / "symgen" / "examples" / "arm4.urdf"]
    if find_erd_dir() is not None:
        paths += [erd_path("panda_description/urdf/panda.urdf"), erd_path("solo_description/robots/solo12.urdf")]
    for path in paths:
        robot = load_urdf(path, floating_base=True)
        for i, b in enumerate(robot.bodies):
            expected = np.eye(3) if b.group and not robot.is_free(i) else z_turn(b.axis)
            assert np.array_equal(robot.z_turns[i], expected), f"{path} body {i}"


@pytest.mark.pinocchio
@pytest.mark.parametrize("kind,n,seed", [("serial", 6, 4), ("tree", 7, 5)])
def test_generated_code_through_the_turned_columns_is_pinocchios(kind, n, seed):
    """The printed statements (M, C, M^-1, Y in ground coordinates, evaluated one by one) against
    Pinocchio at random states; the Rx(b) Rz(q + d) route is taken (its ``Ry`` temps)."""
    require_pinocchio()
    robot = robots.make(kind, n, seed)
    oracle = oracle_for(robot, pin_model_from_robot(robot))
    keys = ("M", "C", "Minv", "Y")
    fns = S.trace_all(robot, keys)
    assert any(str(a.temp).startswith("Ry") for a in fns["C"].assignments), "the turned columns are used"
    rng = np.random.default_rng(seed)
    for k in range(2):
        s = Q.random_state(rng, robot.nq, robot.nv)
        expected = {"M": oracle.mass_matrix(s["q"]), "C": oracle.coriolis(s["q"], s["qd"]),
                    "Minv": oracle.mass_matrix_inverse(s["q"]), "Y": oracle.regressor(s["q"], s["qd"], s["qdd_r"])}
        values = {"q": s["q"], "qd": s["qd"], "qd_r": s["qd"], "qdd_r": s["qdd_r"]}
        for key in keys:
            got = P.evaluate(fns[key], values, digits=20)[0]
            scale = max(1.0, float(np.max(np.abs(expected[key]))))
            err = float(np.max(np.abs(got - expected[key])))
            assert err <= 1e-9 * scale, f"{kind}{n} seed {seed} state {k}: {key} off by {err:.2e}"


def test_half_rate_is_half_the_inertia_rate():
    for seed in range(10):
        rng = np.random.default_rng(700 + seed)
        A = rng.normal(size=(3, 3))
        I = mcI(rng.uniform(0.1, 3.0), rng.normal(size=3), A @ A.T + np.eye(3))
        u = rng.normal(size=6)
        expected = inertia_rate(u, I) / 2
        got = half_rate(u, I, NUMERIC, "Br", 0)
        assert np.max(np.abs(got - expected)) <= 1e-13 * max(1.0, np.max(np.abs(expected))), f"seed {700 + seed}"
