"""Loops beyond one four-bar on a fixed base (:mod:`symgen.loops`, issue #24): a Watt six-bar
(two loops sharing a joint: one cluster of 4 dependent joints, K_D inverted by an LU whose row
order is fixed at a nominal configuration); a free-flying torso with a four-bar leg (the
free-flyer's six speeds independent, G's lead block the identity); a random tree (drawn from a
seed here) with a four-bar in its middle whose plane is not a coordinate plane, joints above it
(one prismatic) and below its coupler and rocker.

The outside reference is Pinocchio's model of the spanning tree with two frames at each loop's
points (:class:`symgen.oracle_loops.LoopPinOracle`): G from its frame Jacobians, Ġ from its
classical accelerations, M̄ = GᵀMG, C̄ = GᵀCG + GᵀMĠ, τ̄ = Gᵀ rnea(q, Gv, Ga + Ġv), the
regressor; forward dynamics against Pinocchio's constrained forwardDynamics(q, v, τ, K, γ)
(Lagrange multipliers). Every comparison names its seed.
"""
from __future__ import annotations

import zlib
from pathlib import Path

import numpy as np
import pytest

import symgen
import symgen.urdf

from test_loops import assert_closed_identities, assert_embedded_matches, assert_forward_dynamics_matches
from support import rel_error

DATA = Path(__file__).parent / "data" / "urdfplus"


def _file(name, floating=False):
    return lambda: ((DATA / name).read_text(), floating)


def _random_tree_with_four_bar(seed):
    """A URDF+ text drawn from ``seed``: two joints with general axes (one prismatic) above a link
    that carries a four-bar whose plane (normal: a random direction, set by the same random rpy
    on the crank and the rocker joints) is not a coordinate plane of it, and one joint with a
    general axis below the coupler and one below the rocker (4 independent, 2 dependent)."""
    rng = np.random.default_rng(seed)

    def vec(x):
        return " ".join(f"{v:.17g}" for v in x)

    def link(name):
        m = rng.uniform(0.3, 2.0)
        R = np.linalg.qr(rng.normal(size=(3, 3)))[0]
        a, b = rng.uniform(0.5, 1.0, 2)
        I = m * 0.01 * R @ np.diag([a, b, rng.uniform(abs(a - b) + 0.05, a + b - 0.05)]) @ R.T
        return (f'<link name="{name}"><inertial><origin xyz="{vec(rng.uniform(-0.1, 0.1, 3))}"/><mass value="{m:.6f}"/>'
                f'<inertia ixx="{I[0, 0]:.8f}" ixy="{I[0, 1]:.8f}" ixz="{I[0, 2]:.8f}" iyy="{I[1, 1]:.8f}" '
                f'iyz="{I[1, 2]:.8f}" izz="{I[2, 2]:.8f}"/></inertial></link>')

    def joint(name, parent, child, kind="revolute", xyz=None, rpy=(0, 0, 0), axis=None, dependent=False):
        xyz = rng.uniform(-0.2, 0.2, 3) if xyz is None else xyz
        axis = rng.normal(size=3) if axis is None else np.asarray(axis, dtype=float)
        flag = ' independent="false"' if dependent else ""
        return (f'<joint name="{name}" type="{kind}"{flag}><parent link="{parent}"/><child link="{child}"/>'
                f'<origin xyz="{vec(xyz)}" rpy="{vec(rpy)}"/><axis xyz="{vec(axis / np.linalg.norm(axis))}"/>'
                f'<limit effort="30" velocity="10" lower="-6.3" upper="6.3"/></joint>')

    rpy = rng.uniform(0.3, 1.2, 3)                      # the four-bar's plane: tilted on all three axes
    hinge = rng.uniform(-0.1, 0.1, 3)
    (cr, cp, cy), (sr, sp, sy) = np.cos(rpy), np.sin(rpy)
    ground = hinge + 0.8 * np.array([cy * cp, sy * cp, -sp])      # Rz(y) Ry(p) Rx(r) (0.8, 0, 0), URDF's rpy
    names = ("base", "upper", "middle", "crank", "coupler", "rocker", "toe", "tip")
    body = "".join(link(n) for n in names[1:])
    body += joint("j_upper", "base", "upper") + joint("j_middle", "upper", "middle", kind="prismatic")
    body += joint("crank_joint", "middle", "crank", xyz=hinge, rpy=rpy, axis=(0, 0, 1))
    body += joint("coupler_joint", "crank", "coupler", xyz=(0.3, 0, 0), axis=(0, 0, 1), dependent=True)
    body += joint("rocker_joint", "middle", "rocker", xyz=ground, rpy=rpy, axis=(0, 0, 1), dependent=True)
    body += joint("j_toe", "coupler", "toe") + joint("j_tip", "rocker", "tip")
    loop = ('<loop name="knee" type="revolute"><predecessor link="coupler"><origin xyz="0.7 0 0"/></predecessor>'
            '<successor link="rocker"><origin xyz="0.5 0 0"/></successor><axis xyz="0 0 1"/></loop>')
    return f'<?xml version="1.0"?><robot name="random_four_bar_tree"><link name="base"/>{body}{loop}</robot>'


#: name -> () -> (URDF+ text, with a free-flyer)
MECHANISMS = {"six_bar": _file("six_bar.urdf"), "floating_leg": _file("floating_four_bar_leg.urdf", True),
              "random_tree": lambda: (_random_tree_with_four_bar(24), False)}


@pytest.fixture(scope="module", params=list(MECHANISMS))
def mechanism(request, pin):
    from symgen.oracle_loops import oracle_for

    xml, floating = MECHANISMS[request.param]()
    robot = symgen.urdf.parse_urdf_string(xml, floating_base=floating)
    model = _pin_model(pin, xml, robot)
    return request.param, robot, xml, model, oracle_for(robot, model, pin)


def _pin_model(pin, xml, robot):
    if robot.floating_base:
        return pin.buildModelFromXML(xml, pin.JointModelFreeFlyer())
    return pin.buildModelFromXML(xml)


def _draw_q(robot, rng):
    """A random spanning configuration (a free-flyer's pose random, its quaternion unit)."""
    q = rng.uniform(0.0, 2 * np.pi, robot.nq)
    if robot.floating_base:
        q[:3] = rng.uniform(-1, 1, 3)
        quat = rng.normal(size=4)
        q[3:7] = quat / np.linalg.norm(quat)
    return q


def _states(label, robot, count=3):
    seed = zlib.crc32(label.encode())
    rng = np.random.default_rng(seed)
    states = []
    for _ in range(count):
        q = robot.system.solve_loops(_draw_q(robot, rng))
        states.append({"q": q, **{k: rng.uniform(-3, 3, robot.nv) for k in ("v", "a", "v_r", "a_r", "tau")}})
    return seed, states


def _moved(robot, q, dv, h):
    """The spanning configuration q moved by h dv (dv: spanning speeds) and put back on the loops;
    a free-flyer's pose is kept (M̄ and G do not depend on it)."""
    q = np.array(q, dtype=float)
    tree = robot.system.tree
    for i in range(tree.free, tree.n):
        q[tree.q_index[i]] += h * dv[i]
    return robot.system.solve_loops(q)


def test_lu_with_a_fixed_row_order_inverts_on_numbers_and_symbols():
    """block_inverse.lu_inverse against NumPy's inverse: a 4x4 whose (0, 0) entry is 0 (pivoting
    needed) with a structural zero block, on numbers and traced on symbols (unnamed, then
    evaluated at the same entries); the order from pivot_order at one point serves a nearby one."""
    import sympy

    from symgen.algorithms.block_inverse import lu_inverse, pivot_order
    from symgen.backend import NUMERIC, SymbolicBackend

    seed = 2402
    rng = np.random.default_rng(seed)
    A0 = rng.normal(size=(4, 4))
    A0[0, 0], A0[2:, :1] = 0.0, 0.0
    order = pivot_order(A0)
    assert order[0] != 0, f"seed {seed}"
    A1 = A0 + 0.05 * rng.normal(size=(4, 4)) * (A0 != 0)
    assert rel_error(lu_inverse(A1, order, NUMERIC), np.linalg.inv(A1)) < 1e-12, f"seed {seed}"
    bk = SymbolicBackend(naming=False)
    x = sympy.symbols("a0:16")
    A = bk.zeros((4, 4))
    for (i, j), value in np.ndenumerate(A1):
        A[i, j] = x[4 * i + j] if A0[i, j] != 0 else sympy.S.Zero
    inv = lu_inverse(A, order, bk)
    at = {x[4 * i + j]: A1[i, j] for i in range(4) for j in range(4)}
    value = np.array([[float(e.xreplace(at)) for e in row] for row in inv])
    assert rel_error(value, np.linalg.inv(A1)) < 1e-12, f"seed {seed}"


def test_solve_loops_closes_every_loop(mechanism):
    name, robot, _, _, _ = mechanism
    system = robot.system
    seed, states = _states(f"solve-{name}", robot, count=4)
    for t, s in enumerate(states):
        q = s["q"]
        assert np.max(np.abs(system.loop_residual(q))) < 1e-12, f"{name}: seed {seed} #{t}"
        G, _ = system.embedding(q)
        assert np.max(np.abs(system.constraint_jacobian(q) @ G)) < 1e-12, f"{name}: seed {seed} #{t}"


def test_rows_kept_span_each_loop_plane(mechanism):
    """Two orthonormal rows per planar loop: coordinate rows for a coordinate plane of the loop's
    ancestor, else a basis of the tilted plane (the random tree's four-bar)."""
    name, robot, _, _, _ = mechanism
    for c in robot.system.closures:
        assert c.P.shape == (2, 3) and np.allclose(c.P @ c.P.T, np.eye(2)), f"{name}: {c.name}"
        coordinate = all(np.count_nonzero(row) == 1 for row in c.P)
        assert coordinate == (name != "random_tree"), f"{name}: {c.name} rows {c.P}"


def test_embedding_and_dynamics_match_pinocchio(mechanism):
    name, robot, _, _, oracle = mechanism
    system = robot.system
    seed, states = _states(f"dynamics-{name}", robot)
    for t, s in enumerate(states):
        q, v, a, where = s["q"], s["v"], s["a"], f"{name}: seed {seed} #{t}"
        oracle.at(q)
        G, Gd = system.embedding(q, v)
        assert rel_error(G, oracle.G) < 1e-10, where
        assert rel_error(Gd, oracle.gdot(q, v)) < 1e-9, where
        assert rel_error(system.mass_matrix(q), oracle.mass_matrix(q)) < 1e-9, where
        assert rel_error(system.coriolis_matrix(q, v), oracle.coriolis(q, v)) < 1e-9, where
        assert rel_error(system.inverse_dynamics(q, v, a), oracle.inverse_dynamics(q, v, a)) < 1e-9, where
        assert rel_error(system.gravity(q), oracle.gravity(q)) < 1e-9, where
        assert rel_error(system.regressor(q, v, v, a), oracle.regressor(q, v, a)) < 1e-9, where


def test_forward_dynamics_match_pinocchios_lagrange_multipliers(pin, mechanism):
    """τ̄ acts on the independent speeds; Pinocchio solves the spanning tree with the loops as
    K q̈ + γ = 0 (forwardDynamics with the constraint Jacobian and drift, in its own v order)."""
    name, robot, _, model, oracle = mechanism
    seed, states = _states(f"fd-{name}", robot)
    data = model.createData()
    for t, s in enumerate(states):
        assert_forward_dynamics_matches(pin, model, data, oracle, robot.system, s["q"], s["v"], s["tau"],
                                        f"{name}: seed {seed} #{t}")


@pytest.mark.parametrize("seed, floating", [(1, False), (2, False), (3, False), (4, True), (5, True)])
def test_random_trees_of_other_seeds(pin, seed, floating):
    """The random tree's generator on more seeds, two of them on a free-flyer (the loop's ancestor
    then two joints below the base), numeric reference only (no build): G, Ġ, M̄, C̄, τ̄ against
    Pinocchio."""
    from symgen.oracle_loops import oracle_for

    xml = _random_tree_with_four_bar(seed)
    robot = symgen.urdf.parse_urdf_string(xml, floating_base=floating)
    oracle, system = oracle_for(robot, _pin_model(pin, xml, robot), pin), robot.system
    _, states = _states(f"random-tree-{seed}", robot, count=2)
    for t, s in enumerate(states):
        q, v, a, where = s["q"], s["v"], s["a"], f"random tree of seed {seed}, state #{t}"
        assert_embedded_matches(system, oracle, q, v, a, where)


def test_identities_of_the_closed_system(mechanism):
    """Ṁ̄ (a central difference along a consistent motion) = C̄ + C̄ᵀ, Ġ likewise, C̄ = Γ̄ v,
    C̄ v = τ̄(q, v, 0) - ḡ, Y θ = τ̄."""
    from symgen.algorithms.regressor import robot_parameters

    name, robot, _, _, _ = mechanism
    system = robot.system
    theta = robot_parameters(system.tree)
    seed, states = _states(f"identities-{name}", robot, count=2)
    assert_closed_identities(system, theta, name, seed, states, lambda q, dq, h: _moved(robot, q, dq, h))


# ------------------------------------------------------------------ the generated package

#: the functions of the unmarked build of a mechanism whose default build takes over ~20 s (the
#: default build of each runs with ``-m slow``: test_default_build_matches_pinocchio)
QUICK = {"random_tree": ("M", "C", "Gamma", "tau", "qdd", "phi", "Kl", "qs")}


def _build(robot, where, quantities=None):
    from symgen import quantities as Q
    from symgen.codegen.build import BuildOptions, build, import_package

    opts = BuildOptions(quantities=quantities or Q.DEFAULT, copt="-O0", jobs=2)
    return import_package(build(robot, where, opts=opts).path)


@pytest.fixture(scope="module")
def package(mechanism, tmp_path_factory):
    name, robot, _, _, _ = mechanism
    return _build(robot, tmp_path_factory.mktemp(name), QUICK.get(name))


@pytest.mark.parametrize("backend", ["numpy", "c"])
def test_generated_code_matches_pinocchio(pin, mechanism, package, backend):
    """Every function of a default build (QUICK's for the random tree), NumPy and C, against
    Pinocchio's spanning tree with its own G(q), Ġ; the loop functions by definition (φ = 0,
    K = dφ/dq, G v = Pinocchio's)."""
    _check_package(pin, mechanism, package, backend, QUICK.get(mechanism[0]))


@pytest.fixture(scope="module")
def default_package(mechanism, tmp_path_factory):
    name = mechanism[0]
    if name not in QUICK:
        pytest.skip(f"{name}: its default build is the unmarked test's")
    return _build(mechanism[1], tmp_path_factory.mktemp(f"{name}-default"))


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["numpy", "c"])
def test_default_build_matches_pinocchio(pin, mechanism, default_package, backend):
    _check_package(pin, mechanism, default_package, backend, None)


def _check_package(pin, mechanism, package, backend, quantities):
    from symgen import quantities as Q
    from symgen.closed import UNSUPPORTED
    from symgen.oracle_loops import oracle_for

    name, robot, xml, model, _ = mechanism
    assert package.nq == robot.nq and package.nv == robot.nv and package.loops == robot.loops
    keys = [k for k in (quantities or Q.DEFAULT) if k not in UNSUPPORTED and k not in Q.loops.LOOP_KEYS]
    oracle = oracle_for(robot, _pin_model(pin, xml, robot), pin, frames=package.frames)
    mod = getattr(package, backend)
    seed, states = _states(f"generated-{name}-{backend}", robot, count=2)
    for t, s in enumerate(states):
        state = {"q": s["q"], "qd": s["v"], "qdd": s["a"], "qd_r": s["v_r"], "qdd_r": s["a_r"], "tau": s["tau"]}
        oracle.at(state["q"])
        for x in (Q.QUANTITIES[k] for k in keys):
            at = x.oracle_state(state) if x.oracle_state else state
            tol = Q.tolerance(x, oracle.mass_matrix(at["q"]))
            err = rel_error(Q.flat(Q.call(mod, x.key, at)), Q.flat(x.pinocchio(oracle, at)))
            assert err <= tol, f"{name} {backend} {x.function}: {err:.2e} > {tol:.1e}, seed {seed} state #{t}"
        q0 = s["q"] + 0.02 * (np.arange(robot.nq) % 3)
        q = package.solve_loops(q0)
        assert np.abs(mod.loop_residual(q)).max() <= 1e-10, f"{name} {backend}: seed {seed} #{t}"
        kept = [i for i in range(robot.nq) if i not in robot.system.dependent_q]
        assert np.array_equal(q[kept], q0[kept]), f"{name}: solve_loops moved an independent entry, seed {seed} #{t}"
        h, eye = 1e-6, np.eye(robot.nq)          # K = d phi / dq over q's entries (a free-flyer's: 0)
        K_fd = np.stack([(mod.loop_residual(q + h * e) - mod.loop_residual(q - h * e)) / (2 * h) for e in eye], -1)
        assert np.abs(mod.loop_jacobian(q) - K_fd).max() <= 1e-7, f"{name} {backend}: seed {seed} #{t}"
        oracle.at(q)
        qs = mod.spanning_velocity(q, s["v"])
        assert rel_error(qs, oracle.G @ s["v"]) <= 1e-9, f"{name} {backend}: seed {seed} #{t}"
