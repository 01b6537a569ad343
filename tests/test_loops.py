"""Nonlinear loop closures embedded with a configuration-dependent G(q) (:mod:`symgen.loops`):
the planar four-bar of tests/data/urdfplus and a four-bar knee whose plane is not a coordinate
plane, inside a thigh that turns about a hip joint.

The outside reference is Pinocchio's model of the spanning tree (the URDF+ file read as a plain
URDF) with two frames at the loop's points: the constraint Jacobian K = Uᵀ(J_pred - J_succ)
(linear rows, LOCAL_WORLD_ALIGNED, U a basis of their row space), G = [1; -K_D⁻¹K_I], and Ġ from
Pinocchio's classical accelerations of the two points (γ(x) = J̇(x) x at q̈ = 0 is the second
derivative of the points' offset; Ġ(v) w = -K_D⁻¹ Uᵀ B(Gv, Gw) with B's polarization
B(a, b) = (γ(a + b) - γ(a - b)) / 4). Against that: M̄ = GᵀMG, C̄ = GᵀCG + GᵀMĠ (crba,
computeCoriolisMatrix), τ̄ = Gᵀ rnea(q, Gv, Ga + Ġv), the regressor, and forward dynamics against
Pinocchio's constrained forwardDynamics(q, v, τ, K, γ) (Lagrange multipliers). Every comparison
names its seed.
"""
from __future__ import annotations

import zlib
from pathlib import Path

import numpy as np
import pytest

import symgen
from symgen.errors import ModelError
from support import rel_error

DATA = Path(__file__).parent / "data" / "urdfplus"
FILES = ("four_bar.urdf", "tilted_knee_linkage.urdf")


@pytest.fixture(scope="module", params=FILES)
def mechanism(request, pin):
    system = symgen.load_urdf(DATA / request.param).system
    model = pin.buildModelFromUrdf(str(DATA / request.param))
    assert tuple(model.names[1:]) == system.joint_names
    c = system.closures[0]
    ids = [model.addFrame(pin.Frame(f.name, f.body + 1, pin.SE3(np.eye(3), np.asarray(f.translation)),
                                    pin.FrameType.OP_FRAME)) for f in (c.pred, c.succ)]
    return request.param, system, model, ids


def _states(label, system, count=3):
    seed = zlib.crc32(label.encode())
    rng = np.random.default_rng(seed)
    states = []
    for _ in range(count):
        q = system.solve_loops(rng.uniform(0.0, 2 * np.pi, system.nq))
        states.append({"q": q, **{k: rng.uniform(-5, 5, system.nv) for k in ("v", "a", "v_r", "a_r", "tau")}})
    return seed, states


class PinLoop:
    """G, Ġ and the constrained dynamics from Pinocchio alone (see the module docstring)."""

    def __init__(self, pin, system, model, ids, q):
        self.pin, self.model, self.data, self.ids, self.q = pin, model, model.createData(), ids, q
        self.dep, self.own = list(system.dependent), list(system.independent)
        J3 = self._jacobian()
        U, s, _ = np.linalg.svd(J3)
        self.U = U[:, :int(np.sum(s > 1e-9 * s[0]))]
        K = self.U.T @ J3
        self.Kinv = np.linalg.inv(K[:, self.dep])
        self.G = np.zeros((model.nv, len(self.own)))
        self.G[self.own, range(len(self.own))] = 1.0
        self.G[self.dep] = -self.Kinv @ K[:, self.own]
        self.K = K

    def _jacobian(self):
        pin, model, data = self.pin, self.model, self.data
        pin.computeJointJacobians(model, data, self.q)
        pin.updateFramePlacements(model, data)
        J = [pin.getFrameJacobian(model, data, f, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED)[:3] for f in self.ids]
        return J[0] - J[1]

    def gamma(self, x):
        """The classical acceleration of the predecessor's point relative to the successor's at q̈ = 0."""
        pin, model, data = self.pin, self.model, self.data
        pin.forwardKinematics(model, data, self.q, x, np.zeros(model.nv))
        a = [pin.getFrameClassicalAcceleration(model, data, f, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED).linear
             for f in self.ids]
        return a[0] - a[1]

    def Gdot(self, v):
        Gd = np.zeros_like(self.G)
        x = self.G @ v
        for s in range(self.G.shape[1]):
            y = self.G[:, s]
            B = (self.gamma(x + y) - self.gamma(x - y)) / 4
            Gd[self.dep, s] = -self.Kinv @ (self.U.T @ B)
        return Gd

    def mass(self):
        M = self.pin.crba(self.model, self.data, self.q)
        return np.triu(M) + np.triu(M, 1).T


def test_solve_loops_closes_the_loop_and_keeps_the_independent_coordinates(mechanism):
    name, system, _, _ = mechanism
    seed = zlib.crc32(name.encode())
    rng = np.random.default_rng(seed)
    for t in range(5):
        q0 = rng.uniform(0, 2 * np.pi, system.nq)
        q = system.solve_loops(q0)
        assert np.max(np.abs(system.loop_residual(q))) < 1e-12, f"seed {seed} #{t}"
        assert np.array_equal(q[list(system.independent)], q0[list(system.independent)])
        G, _ = system.embedding(q)
        assert np.max(np.abs(system.constraint_jacobian(q) @ G)) < 1e-12, f"seed {seed} #{t}"
        assert rel_error(system.spanning_velocity(q, np.ones(system.nv)), G @ np.ones(system.nv)) == 0.0
    with pytest.raises(ModelError, match="Newton did not converge"):
        system.solve_loops(np.full(system.nq, 0.3), iterations=1)


def test_rows_kept_are_the_loop_plane(mechanism):
    name, system, _, _ = mechanism
    P = system.closures[0].P
    assert P.shape == (2, 3) and np.allclose(P @ P.T, np.eye(2))
    if name == "four_bar.urdf":                     # the xy plane: coordinate rows
        assert np.array_equal(P, np.eye(3)[:2])
    else:                                           # a tilted plane, in A's turned axes (whose angle
        c, tree = system.closures[0], system.tree   # symgen/turns.py may choose so that it is a
        b = c.pred_path[-1]                         # coordinate plane there): normal to the joints' axis
        n = tree.z_turns[c.ancestor].T @ np.array(tree.bodies[b].rotation) @ np.array(tree.bodies[b].axis)
        assert np.allclose(P @ n, 0.0, atol=1e-12), (P, n)


def test_embedding_and_its_rate_match_pinocchio(pin, mechanism):
    name, system, model, ids = mechanism
    seed, states = _states(f"G-{name}", system)
    for t, s in enumerate(states):
        ref = PinLoop(pin, system, model, ids, s["q"])
        G, Gd = system.embedding(s["q"], s["v"])
        assert rel_error(G, ref.G) < 1e-10, f"{name}: seed {seed} #{t}"
        assert rel_error(Gd, ref.Gdot(s["v"])) < 1e-9, f"{name}: seed {seed} #{t}"


def test_constrained_dynamics_match_pinocchio(pin, mechanism):
    name, system, model, ids = mechanism
    seed, states = _states(f"dynamics-{name}", system)
    for t, s in enumerate(states):
        q, v, a = s["q"], s["v"], s["a"]
        ref, where = PinLoop(pin, system, model, ids, q), f"{name}: seed {seed} #{t}"
        G, Gd, M = ref.G, ref.Gdot(v), ref.mass()
        assert rel_error(system.mass_matrix(q), G.T @ M @ G) < 1e-9, where
        C = pin.computeCoriolisMatrix(model, ref.data, q, G @ v)
        assert rel_error(system.coriolis_matrix(q, v), G.T @ C @ G + G.T @ M @ Gd) < 1e-9, where
        tau = G.T @ pin.rnea(model, ref.data, q, G @ v, G @ a + Gd @ v)
        assert rel_error(system.inverse_dynamics(q, v, a), tau) < 1e-9, where
        assert rel_error(system.gravity(q), G.T @ pin.computeGeneralizedGravity(model, ref.data, q)) < 1e-9, where
        Y = G.T @ pin.computeJointTorqueRegressor(model, ref.data, q, G @ v, G @ a + Gd @ v)
        assert rel_error(system.regressor(q, v, v, a), Y) < 1e-9, where


def test_forward_dynamics_match_pinocchios_lagrange_multipliers(pin, mechanism):
    """τ̄ acts on the independent joints; Pinocchio solves the spanning tree with the loop as
    K q̈ + γ = 0 (forwardDynamics with a constraint Jacobian and drift)."""
    name, system, model, ids = mechanism
    seed, states = _states(f"fd-{name}", system)
    for t, s in enumerate(states):
        q, v, tau = s["q"], s["v"], s["tau"]
        ref = PinLoop(pin, system, model, ids, q)
        tau_full = np.zeros(model.nv)
        tau_full[list(system.independent)] = tau
        qdd = pin.forwardDynamics(model, ref.data, q, ref.G @ v, tau_full, ref.K, ref.U.T @ ref.gamma(ref.G @ v))
        a = system.forward_dynamics(q, v, tau)
        G, Gd = system.embedding(q, v)
        assert rel_error(G @ a + Gd @ v, qdd) < 1e-8, f"{name}: seed {seed} #{t}"


def test_identities_of_the_closed_system(mechanism):
    """Ṁ̄ (a central difference along a consistent motion) = C̄ + C̄ᵀ, C̄ = Γ̄ v,
    C̄ v = τ̄(q, v, 0) - ḡ, Y θ = τ̄ at v_r = v, Ġ against a central difference of G."""
    from symgen.algorithms.regressor import robot_parameters

    name, system, _, _ = mechanism
    theta = robot_parameters(system.tree)
    seed, states = _states(f"identities-{name}", system)
    assert_closed_identities(system, theta, name, seed, states,
                             lambda q, dq, h: system.solve_loops(q + h * dq))


def assert_embedded_matches(system, oracle, q, v, a, where):
    """G, Ġ, M̄, C̄ and τ̄ of a closed system at one state against Pinocchio's spanning tree
    (:mod:`symgen.oracle_loops`; also tests/test_loop_clusters.py and tests/test_mjcf_weld.py);
    returns (G, Ġ)."""
    oracle.at(q)
    G, Gd = system.embedding(q, v)
    assert rel_error(G, oracle.G) < 1e-10 and rel_error(Gd, oracle.gdot(q, v)) < 1e-9, where
    assert rel_error(system.mass_matrix(q), oracle.mass_matrix(q)) < 1e-9, where
    assert rel_error(system.coriolis_matrix(q, v), oracle.coriolis(q, v)) < 1e-9, where
    assert rel_error(system.inverse_dynamics(q, v, a), oracle.inverse_dynamics(q, v, a)) < 1e-9, where
    return G, Gd


def assert_forward_dynamics_matches(pin, model, data, oracle, system, q, v, tau, where):
    """The closed system's q̈ against Pinocchio's spanning tree with the loops as K q̈ + γ = 0
    (forwardDynamics with the constraint Jacobian and drift, in its own v order)."""
    P = oracle.full.map.P
    oracle.at(q)
    tau_full = np.zeros(system.tree.n)
    tau_full[list(system.independent)] = tau
    x = oracle.G @ v
    qdd = pin.forwardDynamics(model, data, oracle.full.map.q(q), P @ x, P @ tau_full, oracle.K @ P.T, oracle._gamma(x))
    G, Gd = system.embedding(q, v)
    assert rel_error(P @ (G @ system.forward_dynamics(q, v, tau) + Gd @ v), qdd) < 1e-8, where


def assert_closed_identities(system, theta, name, seed, states, moved, h=1e-5):
    """The identities of a closed system at each state (also tests/test_loop_clusters.py):
    ``moved(q, dq, h)`` is a consistent configuration a step h along the consistent motion dq."""
    for t, s in enumerate(states):
        q, v, a, where = s["q"], s["v"], s["a"], f"{name}: seed {seed} #{t}"
        G, Gd = system.embedding(q, v)
        qp, qm = moved(q, G @ v, h), moved(q, G @ v, -h)
        assert rel_error((system.embedding(qp)[0] - system.embedding(qm)[0]) / (2 * h), Gd) < 1e-6, where
        C = system.coriolis_matrix(q, v)
        assert rel_error((system.mass_matrix(qp) - system.mass_matrix(qm)) / (2 * h), C + C.T) < 1e-6, where
        assert rel_error(np.einsum("ijk,k->ij", system.christoffel(q), v), C) < 1e-12, where
        zero = np.zeros(system.nv)
        assert rel_error(C @ v, system.inverse_dynamics(q, v, zero) - system.gravity(q)) < 1e-12, where
        assert rel_error(system.regressor(q, v, v, a) @ theta, system.inverse_dynamics(q, v, a)) < 1e-12, where


# ------------------------------------------------------------------ the generated package

@pytest.fixture(scope="module", params=FILES)
def package(request, tmp_path_factory):
    from symgen.codegen.build import BuildOptions, build, import_package

    robot = symgen.load_urdf(DATA / request.param)
    path = build(robot, tmp_path_factory.mktemp("loops"), opts=BuildOptions(copt="-O0", jobs=2)).path
    return request.param, robot, import_package(path)


@pytest.mark.parametrize("backend", ["numpy", "c"])
def test_generated_code_matches_pinocchio(pin, package, backend):
    """Every function of a default build (all but the derivatives, Cᵀv, the centroidal bias and
    J̇), NumPy and C, against Pinocchio's spanning tree with its own G(q), Ġ (symgen.oracle_loops)."""
    from symgen import quantities as Q
    from symgen.closed import UNSUPPORTED
    from symgen.oracle_loops import oracle_for

    name, robot, pkg = package
    assert pkg.nq == robot.nq == len(pkg.joint_names) and pkg.nv == robot.nv == len(pkg.velocity_joint_names)
    assert pkg.loops == robot.loops and set(pkg.velocity_joint_names) < set(pkg.joint_names)
    oracle = oracle_for(robot, pin.buildModelFromUrdf(str(DATA / name)), pin, frames=pkg.frames)
    mod = getattr(pkg, backend)
    seed, states = _states(f"generated-{name}-{backend}", robot.system)
    for t, s in enumerate(states):
        state = {"q": s["q"], "qd": s["v"], "qdd": s["a"], "qd_r": s["v_r"], "qdd_r": s["a_r"], "tau": s["tau"]}
        oracle.at(state["q"])
        for x in (Q.QUANTITIES[k] for k in Q.DEFAULT if k not in UNSUPPORTED):
            at = x.oracle_state(state) if x.oracle_state else state
            tol = Q.tolerance(x, oracle.mass_matrix(at["q"]))
            err = rel_error(Q.flat(Q.call(mod, x.key, at)), Q.flat(x.pinocchio(oracle, at)))
            assert err <= tol, f"{name} {backend} {x.function}: {err:.2e} > {tol:.1e}, seed {seed} state #{t}"
    assert not hasattr(mod, "inverse_dynamics_derivatives")


@pytest.mark.parametrize("backend", ["numpy", "c"])
def test_generated_loop_functions(pin, package, backend):
    """loop_residual, loop_jacobian, spanning_velocity (NumPy and C) and the package's solve_loops:
    phi = 0 after solve_loops with the independent coordinates kept, K = d phi/dq (a central
    difference), G v = Pinocchio's G (frame Jacobians) v, K G v = 0; a batch of solve_loops."""
    from symgen.oracle_loops import oracle_for

    name, robot, pkg = package
    mod = getattr(pkg, backend)
    oracle = oracle_for(robot, pin.buildModelFromUrdf(str(DATA / name)), pin)
    seed, states = _states(f"loop-functions-{name}-{backend}", robot.system)
    own = list(robot.system.independent)
    for t, s in enumerate(states):
        ctx = f"{name} {backend} seed {seed} state #{t}"
        q0 = s["q"] + np.where(np.isin(np.arange(pkg.nq), own), 0.0, 0.05)      # off the loop
        q = pkg.solve_loops(q0)
        assert np.abs(mod.loop_residual(q)).max() <= 1e-10 and np.array_equal(q[own], q0[own]), ctx
        h, eye = 1e-6, np.eye(pkg.nq)
        K_fd = np.stack([(mod.loop_residual(q + h * e) - mod.loop_residual(q - h * e)) / (2 * h) for e in eye], -1)
        assert np.abs(mod.loop_jacobian(q) - K_fd).max() <= 1e-7, ctx
        oracle.at(q)
        qs = mod.spanning_velocity(q, s["v"])
        assert np.abs(qs - oracle.G @ s["v"]).max() <= 1e-9 * max(1.0, np.abs(qs).max()), ctx
        assert np.abs(mod.loop_jacobian(q) @ qs).max() <= 1e-9 * max(1.0, np.abs(qs).max()), ctx
    batch = np.stack([st["q"] for st in states])
    assert np.allclose(pkg.solve_loops(batch), [pkg.solve_loops(x) for x in batch], atol=1e-14)
    with pytest.raises(pkg.LoopError, match="no closed configuration"):     # not converged: a clear error
        pkg.solve_loops(states[0]["q"] + 0.3, iterations=1)


def test_cli_build_and_verify_the_four_bar(tmp_path):
    import json

    from click.testing import CliRunner

    from symgen.cli import main

    runner, urdf = CliRunner(), DATA / "four_bar.urdf"
    result = runner.invoke(main, ["build", str(urdf), "--out", str(tmp_path), "--quantities", "M,C,Gamma,tau,qdd,Y",
                                  "--copt", "-O0", "--quiet", "--jobs", "2"])
    assert result.exit_code == 0, result.output
    manifest = json.loads((tmp_path / "four_bar" / "manifest.json").read_text())
    assert manifest["nq"] == 3 and manifest["nv"] == 1 and manifest["loops"] == ["pin"]
    assert manifest["velocity_joint_names"] == ["crank_joint"]
    result = runner.invoke(main, ["verify", str(tmp_path / "four_bar"), "--urdf", str(urdf), "--trials", "3"])
    assert result.exit_code == 0, result.output
    assert "c vs Pinocchio: coriolis_matrix" in result.output and "c vs Pinocchio: christoffel" in result.output
    refused = runner.invoke(main, ["build", str(urdf), "--out", str(tmp_path / "x"), "--quantities", "M,dtau"])
    assert refused.exit_code == 2 and "dtau not generated" in refused.output


def test_two_four_bars_are_two_clusters_solved_apart(pin):
    """Two four-bars side by side (4 dependent joints, two clusters of 2): K_D inverted block by
    block; the constrained dynamics against Pinocchio's spanning tree with its own G, Ġ."""
    from symgen.oracle_loops import oracle_for

    text = (DATA / "four_bar.urdf").read_text()
    body = text[text.index('<link name="crank">'):text.index("</robot>")]
    second = body.replace('"crank', '"b_crank').replace('"coupler', '"b_coupler').replace('"rocker', '"b_rocker') \
                 .replace('name="pin"', 'name="b_pin"').replace('<origin xyz="0.8 0 0"/>', '<origin xyz="0.8 0.5 0"/>')
    second = second.replace('<parent link="ground"/><child link="b_crank"/>',
                            '<parent link="ground"/><child link="b_crank"/><origin xyz="0 0.5 0"/>')
    robot = symgen.urdf.parse_urdf_string(text.replace("</robot>", second + "</robot>"))
    assert robot.nq == 6 and robot.nv == 2 and [len(d) for _, d in robot.system.clusters] == [2, 2]
    oracle = oracle_for(robot, pin.buildModelFromXML(text.replace("</robot>", second + "</robot>")), pin)
    seed, states = _states("two-clusters", robot.system)
    for t, s in enumerate(states):
        q, v, a, where = s["q"], s["v"], s["a"], f"seed {seed} #{t}"
        oracle.at(q)
        assert rel_error(robot.system.mass_matrix(q), oracle.mass_matrix(q)) < 1e-9, where
        assert rel_error(robot.system.coriolis_matrix(q, v), oracle.coriolis(q, v)) < 1e-9, where
        assert rel_error(robot.system.inverse_dynamics(q, v, a), oracle.inverse_dynamics(q, v, a)) < 1e-9, where
