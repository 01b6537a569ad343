"""The regressor's building blocks after issue #21 item 4: the body regressor in closed form (22
named values up to sign instead of the sum over the ten E_k) and the ground walk that takes the
rotational-inertia columns of shallow bodies in the body's own frame. Checked against Pinocchio
(bodyRegressor, computeJointTorqueRegressor) and against the definition; seeds in the messages.
"""
from __future__ import annotations

import importlib

import numpy as np
import pytest

from support import pin_model_from_robot, require_pinocchio
from symgen import quantities as Q
from symgen import robots
from symgen.backend import NUMERIC
from symgen.pinocchio_oracle import oracle_for

R = importlib.import_module("symgen.algorithms.regressor")      # the module (the package exports its function)


def _swap(x):
    """[angular; linear] (symgen) <-> [linear; angular] (Pinocchio), rows of a 6 x k array."""
    return np.concatenate([x[3:], x[:3]])


def test_closed_form_body_regressor_is_the_definition():
    """Column k = E_k a + B(v, E_k) w for independent v, w and a (w != v: Slotine-Li's)."""
    for seed in range(20):
        a, v, w = np.random.default_rng(seed).normal(size=(3, 6))
        closed = R.body_regressor(a, v, w, NUMERIC)
        basis = R.body_regressor_from_basis(a, v, w, NUMERIC)
        assert np.max(np.abs(closed - basis)) <= 1e-14 * max(1.0, np.max(np.abs(basis))), f"seed {seed}"


@pytest.mark.pinocchio
def test_closed_form_body_regressor_is_pinocchios_at_w_equal_v():
    """With w = v the body regressor is Pinocchio's bodyRegressor(v, a) (f = I a + v x* I v)."""
    pin = require_pinocchio()
    for seed in range(20):
        a, v = np.random.default_rng(100 + seed).normal(size=(2, 6))
        ours = R.body_regressor(a, v, v, NUMERIC)
        theirs = pin.bodyRegressor(pin.Motion(v[3:], v[:3]), pin.Motion(a[3:], a[:3]))
        assert np.max(np.abs(ours - _swap(np.asarray(theirs)))) <= 1e-12 * max(1.0, np.max(np.abs(theirs))), \
            f"seed {100 + seed}"


@pytest.mark.pinocchio
@pytest.mark.parametrize("walk", ["regressor_ground", "regressor_local"])
@pytest.mark.parametrize("kind,n,seed", [("tree", 12, 1), ("serial", 9, 2), ("quadruped", 8, 3)])
def test_walk_matches_pinocchio(walk, kind, n, seed):
    """Each walk, numerically, is computeJointTorqueRegressor (v_r = v) on general-axis robots, a
    free-flyer's six columns included: the ground walk, whose bodies take both routes for the
    rotational columns (depth up to LOCAL_DEPTH in the body frame, deeper in ground coordinates),
    and the walk in body frames (each ancestor's subspace carried down to the body, revolute
    transforms as [E w; E (l - r x w)])."""
    robot = robots.make(kind, n, seed)
    depths = {len(robot.ancestors(j)) for j in robot.inertial_bodies}
    oracle = oracle_for(robot, pin_model_from_robot(robot))
    rng = np.random.default_rng(seed)
    for k in range(3):
        s = Q.random_state(rng, robot.nq, robot.nv)
        ours = getattr(R, walk)(robot, s["q"], s["qd"], s["qd"], s["qdd_r"], NUMERIC)
        theirs = oracle.regressor(s["q"], s["qd"], s["qdd_r"])
        scale = max(1.0, np.max(np.abs(theirs)))
        assert np.max(np.abs(ours - theirs)) <= 1e-9 * scale, f"{walk} {kind}{n} seed {seed} state {k} depths {sorted(depths)}"
    if kind == "serial" and walk == "regressor_ground":
        assert min(depths) <= R.LOCAL_DEPTH < max(depths), "the chain exercises both routes"


@pytest.mark.parametrize("walk, cases", [
    ("regressor_ground", (("tree", 10, 4), ("serial", 8, 5))),
    ("regressor_local", (("tree", 10, 4), ("serial", 8, 5), ("quadruped", 8, 6)))])
def test_walk_with_a_reference_velocity_is_the_body_walk(walk, cases):
    """v_r != v: the ground walk (both column routes) and the local walk equal the body-frame walk
    that carries U up (seeds printed)."""
    for kind, n, seed in cases:
        robot = robots.make(kind, n, seed)
        s = Q.random_state(np.random.default_rng(seed), robot.nq, robot.nv)
        ours = getattr(R, walk)(robot, s["q"], s["qd"], s["qd_r"], s["qdd_r"], NUMERIC)
        body = R.regressor(robot, s["q"], s["qd"], s["qd_r"], s["qdd_r"], NUMERIC)
        assert np.max(np.abs(ours - body)) <= 1e-12 * max(1.0, np.max(np.abs(body))), f"{walk} {kind}{n} seed {seed}"


@pytest.mark.pinocchio
def test_a_shallow_general_tree_builds_the_local_walk_and_it_is_pinocchios():
    """A build takes the local walk where it applies and is cheapest (a shallow general-axis tree),
    never on a deep chain; the printed statements match Pinocchio (seed 7)."""
    from symgen.codegen import program as P
    from symgen.codegen import symbolic as S

    require_pinocchio()
    assert not R.local_walk_pays(robots.make("serial", R.LOCAL_WALK_DEPTH + 1, 7))
    robot = robots.make("tree", 9, 7)
    assert R.local_walk_pays(robot)
    fn = S.trace_all(robot, ("Y",))["Y"]
    assert fn.route == "regressor_local_sweep", fn.route
    oracle = oracle_for(robot, pin_model_from_robot(robot))
    rng = np.random.default_rng(7)
    for k in range(2):
        s = Q.random_state(rng, robot.nq, robot.nv)
        got = P.evaluate(fn, {"q": s["q"], "qd": s["qd"], "qd_r": s["qd"], "qdd_r": s["qdd_r"]}, digits=20)[0]
        expected = oracle.regressor(s["q"], s["qd"], s["qdd_r"])
        err = float(np.max(np.abs(got - expected)))
        assert err <= 1e-9 * max(1.0, float(np.max(np.abs(expected)))), f"tree9 seed 7 state {k}: off by {err:.2e}"
