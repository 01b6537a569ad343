"""The tree sparsity of the reduced mass matrix M̄ = GᵀMG of coupled robots (:mod:`symgen.reduced_tree`).

Geared rotors each tied to one joint keep M̄ tree-sparse over the independent joints (their parent:
the nearest independent joint towards the root), so forward dynamics and M̄⁻¹ factor M̄ with the
tree's L^T D L; a mimic in another branch couples the branches and keeps the dense factorization.
The outside reference is Pinocchio's model of the spanning tree projected by G (M̄ = GᵀMG,
b̄ = Gᵀ rnea(q_full, G v, 0)): q̈ = M̄⁻¹ (τ - b̄) and M̄⁻¹ solved densely by NumPy, and the zeros of
Pinocchio's M̄ where the detected tree says two joints are unrelated. Every comparison names its seed.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import symgen
from symgen import quantities as Q
from symgen.codegen.build import BuildOptions, build, import_package
from symgen.pinocchio_oracle import EmbeddedPinOracle
from symgen.reduced_tree import candidate_parent, factor_parent, reduced_parent
from symgen.urdf import parse_urdf_string
from support import rel_error, seeded_states

CHEETAH = Path(__file__).parent / "data" / "grbda" / "mini_cheetah.urdf"


def _link(name, mass, com):
    return (f'<link name="{name}"><inertial><origin xyz="{com}" rpy="0.1 -0.2 0.3"/><mass value="{mass}"/>'
            f'<inertia ixx="0.02" ixy="0.001" ixz="-0.002" iyy="0.03" iyz="0.0015" izz="0.025"/></inertial></link>')


def _joint(name, parent, child, xyz, axis, mimic=""):
    return (f'<joint name="{name}" type="revolute"><parent link="{parent}"/><child link="{child}"/>'
            f'<origin xyz="{xyz}" rpy="0.2 0 0.1"/><axis xyz="{axis}"/>'
            f'<limit lower="-3" upper="3" effort="1" velocity="1"/>{mimic}</joint>')


#: two branches on a fixed base; b1 (branch B) mimics a1 (branch A): q_b1 = 0.5 q_a1 - 0.3
ACROSS = "\n".join([
    '<robot name="across">', '<link name="base"/>',
    _link("A1", 1.2, "0.05 0.01 0.2"), _link("A2", 0.8, "0 0.02 0.05"),
    _link("B1", 0.9, "0.1 0 -0.1"), _link("B2", 0.3, "0.02 0.01 -0.05"),
    _joint("a1", "base", "A1", "0 0 0.1", "0 0 1"), _joint("a2", "A1", "A2", "0.1 0 0.4", "0 1 0"),
    _joint("b1", "base", "B1", "0 0.2 0", "1 0 0", '<mimic joint="a1" multiplier="0.5" offset="-0.3"/>'),
    _joint("b2", "B1", "B2", "0 0 -0.4", "0 1 0"),
    '</robot>'])
#: G and o of ACROSS by hand, full joints (a1, a2, b1, b2) over the independent ones (a1, a2, b2)
ACROSS_G = np.array([[1, 0, 0], [0, 1, 0], [0.5, 0, 0], [0, 0, 1]], dtype=float)
ACROSS_O = np.array([0, 0, -0.3, 0], dtype=float)


def _cheetah():
    with pytest.warns(Warning):                     # GRBDA's hip inertias break the triangle inequality
        return symgen.load_urdf(CHEETAH)


def _across():
    return parse_urdf_string(ACROSS, "across.urdf", mimic=True)


def _pin_oracle(pin, robot):
    from symgen.verify import _pinocchio

    if robot.name == "across":
        model = pin.buildModelFromXML(ACROSS)      # urdfdom's reading: every joint independent
        assert [model.names[i] for i in range(1, model.njoints)] == ["a1", "a2", "b1", "b2"]
        return EmbeddedPinOracle(robot, model, pin, G=ACROSS_G, offset=ACROSS_O)
    oracle, note = _pinocchio(robot)
    assert oracle is not None, note
    return oracle


def _related(parent, r, s):
    def anc(i):
        out = set()
        while i >= 0:
            out.add(i)
            i = parent[i]
        return out
    return r in anc(s) or s in anc(r)


# ------------------------------------------------------------------------------ the detection

def test_mini_cheetah_keeps_the_tree_of_its_independent_joints():
    """Base: the free-flyer's six speeds as a chain; each leg's abad under the base, hip under
    abad, knee under hip, the rotors (each geared to one joint) adding no edge: four legs apart."""
    robot = _cheetah()
    legs = tuple(x for k in range(4) for x in (5, 6 + 3 * k, 7 + 3 * k))
    assert reduced_parent(robot) == (-1, 0, 1, 2, 3, 4) + legs
    assert factor_parent(robot) == reduced_parent(robot)


def test_a_mimic_in_another_branch_keeps_the_dense_factorization():
    """b1 follows a1, so column a1 of G holds a body of branch B: M̄[a1, b2] != 0 though b2's
    nearest independent ancestor is the base; the candidate tree does not fit and the chain stays."""
    robot = _across()
    assert robot.joint_names == ("a1", "a2", "b2")
    assert np.array_equal(robot.embedding.matrix(), ACROSS_G)
    assert candidate_parent(robot.full.parent, robot.embedding) == (-1, 0, -1)
    assert reduced_parent(robot) is None
    assert factor_parent(robot) == (-1, 0, 1)


@pytest.mark.parametrize("which", ["cheetah", "across"])
def test_the_pattern_agrees_with_the_zeros_of_pinocchios_reduced_mass_matrix(pin, which):
    """Where the factorization's tree says r and s are unrelated, Pinocchio's GᵀMG is zero; in the
    cross-branch case the pair (a1, b2) that the candidate tree leaves unrelated is not."""
    robot = _cheetah() if which == "cheetah" else _across()
    oracle = _pin_oracle(pin, robot)
    parent = factor_parent(robot)
    seed, states = seeded_states(f"pattern-{which}", robot, layout=robot.joint_layout)
    for t, state in enumerate(states):
        M = oracle.mass_matrix(state["q"])
        for r in range(robot.nv):
            for s in range(robot.nv):
                if not _related(parent, r, s):
                    assert abs(M[r, s]) <= 1e-12 * np.abs(M).max(), f"{which}: M[{r}, {s}], seed {seed} #{t}"
        if which == "across":
            assert abs(M[0, 2]) > 1e-6, f"seed {seed} #{t}"


# ------------------------------------------------------------------- FD and M⁻¹ against Pinocchio

def _reduced_fd(oracle, state):
    """M̄⁻¹ (τ - b̄) and M̄⁻¹ from Pinocchio's spanning tree, solved densely."""
    q, v, tau = state["q"], state["qd"], state["tau"]
    M = oracle.mass_matrix(q)
    bias = oracle.inverse_dynamics(q, v, np.zeros(len(v)))
    return np.linalg.solve(M, tau - bias), np.linalg.inv(M)


@pytest.mark.parametrize("which", ["cheetah", "across"])
@pytest.mark.parametrize("frame", ["body", "ground"])
def test_numeric_reference_against_the_spanning_tree(pin, which, frame):
    robot = _cheetah() if which == "cheetah" else _across()
    oracle = _pin_oracle(pin, robot)
    seed, states = seeded_states(f"reference-{which}-{frame}", robot, layout=robot.joint_layout)
    opts = Q.SweepOptions(frame=frame)
    for t, state in enumerate(states):
        qdd, Minv = _reduced_fd(oracle, state)
        where = f"{which} {frame}: seed {seed} state #{t}"
        assert rel_error(Q.evaluate(robot, "qdd", state, opts), qdd) < 1e-9, where
        assert rel_error(Q.evaluate(robot, "Minv", state, opts), Minv) < 1e-9, where


@pytest.fixture(scope="module", params=["cheetah", "across"])
def package(request, tmp_path_factory):
    robot = _cheetah() if request.param == "cheetah" else _across()
    opts = BuildOptions(copt="-O0", jobs=2, quantities=("qdd", "Minv"))
    path = build(robot, tmp_path_factory.mktemp("sfd"), opts=opts).path
    return request.param, robot, import_package(path)


@pytest.mark.parametrize("backend", ["numpy", "c"])
def test_generated_fd_and_inverse_against_the_spanning_tree(pin, package, backend):
    which, robot, pkg = package
    mod = getattr(pkg, backend)
    oracle = _pin_oracle(pin, robot)
    seed, states = seeded_states(f"generated-{which}-{backend}", robot, layout=robot.joint_layout)
    for t, state in enumerate(states):
        qdd, Minv = _reduced_fd(oracle, state)
        where = f"{which} {backend}: seed {seed} state #{t}"
        assert rel_error(mod.forward_dynamics(state["q"], state["qd"], state["tau"]), qdd) < 1e-9, where
        got = mod.mass_matrix_inverse(state["q"])
        assert rel_error(got, Minv) < 1e-9, where
        assert np.array_equal(got, got.T), where


def test_the_body_frame_route_reaches_the_reduced_solve():
    """A ground-coordinate build traces FD's body-frame variant too; for an embedded robot that
    variant must run the reduced solve in body frames (it once ran the ground one again), so the
    build keeps it where it costs less: the rotor leg's FD, against the body-frame build's."""
    from symgen.codegen import program as P
    from symgen.codegen import symbolic as S

    robot = symgen.load_urdf(Path(__file__).parent / "data" / "urdfplus" / "quadruped_leg.urdf")
    chosen = S.trace_all(robot, ("qdd",))["qdd"]
    body = S.trace_all(robot, ("qdd",), Q.SweepOptions(frame="body"))["qdd"]
    ground = S.optimize(S._trace_sweep(robot, Q.SWEEPS["forward_dynamics"], ("qdd",),
                                       S.input_symbols(robot), Q.SweepOptions(), True, None)[0]["qdd"])
    assert P.cost(body) < P.cost(ground), (P.cost(body), P.cost(ground))
    # (since the cluster CRBA, a variant with M̄ in the local convention beats both here)
    assert chosen.route == "forward_dynamics_cluster_local" and P.cost(chosen) <= P.cost(body)
