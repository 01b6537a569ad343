"""Analytical derivatives of inverse and forward dynamics (symgen/algorithms/derivatives.py):
equal to Pinocchio's computeRNEADerivatives / computeABADerivatives on real and synthetic robots in
both coordinate choices, consistent with the package's Christoffel symbols (dtau/dqd = 2 C,
dM_ij/dq_k = Gamma_ijk + Gamma_jik), and printable: a symbolic run is a closed straight-line
program that evaluates to the numeric run. Every randomized test names its seed on failure.
"""
from __future__ import annotations


import numpy as np
import pytest

from support import PinOracle, assert_close, compare_with_pinocchio, erd_path, pin_model_from_robot, seeded_states
from symgen import robots
from symgen.algorithms import christoffel_ground, coriolis_ground, crba_ground
from symgen.algorithms.derivatives import forward_dynamics_derivatives, inverse_dynamics_derivatives
from symgen.backend import NUMERIC, SymbolicBackend
from symgen.codegen import program as P
from symgen.codegen.symbolic import input_symbols
from symgen.urdf import load_urdf, urdf_string

FRAMES = ("ground", "body")
STATES = 3



# Against Pinocchio on the synthetic robots, panda and ur5, in both frames: the registry-wide test
# (tests/test_quantities.py) covers both derivative functions, with the same seeds and states.


@pytest.mark.pinocchio
def test_derivatives_match_pinocchio_on_a_20_dof_chain():
    """The large-robot tolerance of issue 13 (1e-8 relative) on the chain the op counts use."""
    robot = robots.make("serial", 20, 1)
    compare_with_pinocchio(robot, pin_model_from_robot(robot), "serial20-seed1", keys=("dtau", "dqdd"), base=1e-8)


@pytest.mark.parametrize("kind,n,seed", [("serial", 6, 1), ("tree", 7, 2), ("serial", 12, 5)])
def test_dtau_dqd_is_twice_the_christoffel_consistent_coriolis_matrix(kind, n, seed):
    """d(C(q, qd) qd)/dqd = 2 C(q, qd) when Gamma_ijk = Gamma_ikj (single-DoF joints, fixed
    base): dtau/dqd against Algorithm 1's C, and against Pinocchio's C where it is installed."""
    robot = robots.make(kind, n, seed)
    label = f"{kind}{n}-seed{seed}"
    seed_s, states = seeded_states(label, robot)
    for t, s in enumerate(states):
        ctx = f"{label} seed={seed_s} state#{t}"
        _, _, C = coriolis_ground(robot, s["q"], s["qd"], NUMERIC)
        for frame in FRAMES:
            _, dqd = inverse_dynamics_derivatives(robot, s["q"], s["qd"], s["qdd"], NUMERIC, frame=frame)
            scale = np.max(np.abs(C))
            assert np.max(np.abs(dqd - 2 * C)) <= 1e-12 * scale, f"dtau_dqd != 2 C ({frame}) [{ctx}]"


@pytest.mark.pinocchio
def test_pinocchio_dtau_dqd_is_twice_its_coriolis_matrix_on_panda(pin):
    path = erd_path("panda_description/urdf/panda.urdf")
    robot = load_urdf(path)
    oracle = PinOracle(robot, pin.buildModelFromXML(urdf_string(robot)))
    seed, states = seeded_states("panda-2C", robot)
    for t, s in enumerate(states):
        _, dqd = oracle.inverse_dynamics_derivatives(s["q"], s["qd"], s["qdd"])
        assert_close(dqd, 2 * oracle.coriolis(s["q"], s["qd"]), "pinocchio dtau_dqd vs 2 C",
                     f"panda seed={seed} state#{t}")


@pytest.mark.parametrize("kind,n,seed", [("serial", 5, 1), ("tree", 7, 2), ("biped", 3, 3)])
def test_mass_matrix_derivative_is_a_sum_of_two_christoffel_symbols(kind, n, seed):
    """Eq. (4): dM_ij/dq_k = Gamma_ijk + Gamma_jik. At qd = 0 without gravity, tau = M(q) qdd, so
    dtau_i/dq_k = sum_j (Gamma_ijk + Gamma_jik) qdd_j with Algorithm 2's Gamma; and the
    symmetric dM/dq_k it gives is the central difference of the CRBA's M."""
    robot = robots.make(kind, n, seed)
    label = f"{kind}{n}-seed{seed}"
    seed_s, states = seeded_states(label, robot)
    zero = np.zeros(robot.n)
    for t, s in enumerate(states):
        ctx = f"{label} seed={seed_s} state#{t}"
        Gamma = christoffel_ground(robot, s["q"], NUMERIC)
        dM = Gamma + Gamma.transpose(1, 0, 2)                           # dM[i, j, k] = dM_ij/dq_k
        expected = np.einsum("ijk,j->ik", dM, s["qdd"])
        for frame in FRAMES:
            dq, _ = inverse_dynamics_derivatives(robot, s["q"], zero, s["qdd"], NUMERIC, frame=frame,
                                                 gravity=(0.0, 0.0, 0.0))
            assert np.max(np.abs(dq - expected)) <= 1e-12 * np.max(np.abs(expected)), f"eq. (4) ({frame}) [{ctx}]"
        h = 1e-6
        for k in range(robot.n):                       # M does not depend on a free-flyer's pose
            e = np.zeros(robot.nq)
            if not robot.is_free(k):
                e[robot.q_index[k]] = h
            fd = (crba_ground(robot, s["q"] + e, NUMERIC) - crba_ground(robot, s["q"] - e, NUMERIC)) / (2 * h)
            assert np.max(np.abs(fd - dM[:, :, k])) <= 1e-6 * max(1.0, np.max(np.abs(fd))), f"dM/dq_{k} [{ctx}]"


def _symbolic_program(robot, run, arguments, outputs):
    syms = input_symbols(robot)
    bk = SymbolicBackend()
    values = run(robot, *[np.array(syms[a], dtype=object) for a in arguments], bk)
    fn = P.make_function("f", "", [P.Input(a, syms[a]) for a in arguments], bk.assignments,
                         dict(zip(outputs, values)))
    return P.share_outputs(P.drop_dead(fn)).check_closed(), syms


def _evaluate(fn, values):
    """Run a straight-line Function (and its column loops) on numbers, one statement after the other."""
    return P.evaluate(fn, values)


@pytest.mark.parametrize("frame", FRAMES)
@pytest.mark.parametrize("which", ["inverse", "forward"])
def test_symbolic_run_is_a_closed_straight_line_program_equal_to_the_numeric_run(which, frame):
    robot = robots.make("tree", 4, 7)
    if which == "inverse":
        def run(r, q, qd, x, bk):
            return inverse_dynamics_derivatives(r, q, qd, x, bk, frame=frame)
        arguments = ("q", "qd", "qdd")
    else:
        def run(r, q, qd, x, bk):
            return forward_dynamics_derivatives(r, q, qd, x, bk, frame=frame)
        arguments = ("q", "qd", "tau")
    fn, _ = _symbolic_program(robot, run, arguments, ("d_dq", "d_dqd"))
    ops = P.count_ops(fn)
    assert 0 < ops["total"] < 20000 and ops["trig"] <= 2 * robot.n, ops
    seed, (s,) = seeded_states(f"symbolic-{which}-{frame}", robot, 1)
    got = _evaluate(fn, s)
    expected = run(robot, *(s[a] for a in arguments), NUMERIC)
    for g, e, name in zip(got, expected, ("d_dq", "d_dqd")):
        scale = max(1.0, np.max(np.abs(e)))
        assert np.max(np.abs(g - e)) <= 1e-10 * scale, f"{which} {name} ({frame}) seed={seed}"
