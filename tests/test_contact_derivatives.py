"""contact_dynamics_derivatives (issue #25 item 6): the generated contact_partials and the package's
run-time solve over the active contacts against Pinocchio 4.1's computeConstraintDynamicsDerivatives
(constraintDynamics with RigidConstraintModel CONTACT_3D / CONTACT_6D, LOCAL_WORLD_ALIGNED,
:mod:`symgen.oracle_contact_derivatives`), NumPy and C, one state and batches; random active sets
including none and all. Fast: a small random biped on a free-flyer (two point contacts) and a random
6-joint serial arm with a flat (6d) contact at its tip; slow: solo12 (4 point contacts), panda (a flat
contact at the hand) and talos (flat contacts at both soles). Tolerance: 1e-8 relative, or 100 eps
cond(KKT) when larger. With a flat contact active the reference is five-point differences of
Pinocchio's forwardDynamics (1e-6): Pinocchio's CONTACT_6D LOCAL_WORLD_ALIGNED constrains the spatial
acceleration, not the classical one contact_dynamics uses (:mod:`symgen.oracle_contact_derivatives`). The numeric reference (the same closed forms on numbers; the complex step in
test_contact_acceleration_derivatives.py) against the
generated code and against central differences of the contact rows along pin.integrate.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import symgen
from support import erd_path, pin_model_from_robot
from symgen import oracle_contact as ocn
from symgen import oracle_contact_derivatives as ocd
from symgen import quantities as Q
from symgen import robots
from symgen.codegen.build import BuildOptions, build, import_package
from symgen.oracle_contact import with_contacts
from symgen.pinocchio_oracle import PinOracle
from symgen.verify_contact import kkt_tolerance

KEYS = ("contact_terms", "contact_partials")
#: with a flat contact active: against five-point differences of Pinocchio's forwardDynamics (h = 1e-4)
FD_TOL = 1e-6
NAMES = ("dqdd_dq", "dqdd_dv", "dqdd_dtau", "dlam_dq", "dlam_dv", "dlam_dtau")
SOLO = ("solo_description/robots/solo12.urdf", tuple((f"{leg}_FOOT", "3d") for leg in ("FL", "FR", "HL", "HR")))
PANDA = ("panda_description/urdf/panda.urdf", (("panda_hand", "6d"),))
TALOS = ("talos_data/robots/talos_reduced.urdf", (("left_sole_link", "6d"), ("right_sole_link", "6d")))


def _case(pin, tmp_path_factory, name, robot, model, contacts):
    """(robot, oracle with the contacts, package of KEYS)."""
    opts = BuildOptions(quantities=KEYS, contacts=contacts, copt="-O0", jobs=2)
    pkg = import_package(build(robot, tmp_path_factory.mktemp(name), name=name, opts=opts).path)
    frames = tuple(json.loads((Path(pkg.__file__).parent / "manifest.json").read_text())["frames"])
    return robot, with_contacts(PinOracle(robot, model, pin, frames=frames), contacts), pkg


def _synthetic(pin, tmp_path_factory, label):
    if label == "biped":                            # a free-flyer, legs of 2 random-axis joints
        robot = robots.make("biped", 4, 3)
        contacts = tuple((f, "3d") for f in robot.leaf_links)
    else:                                           # a fixed 6-joint arm, a flat contact at its tip
        robot = robots.make("serial", 6, 5)
        contacts = ((robot.leaf_links[0], "6d"),)
    return _case(pin, tmp_path_factory, f"{label}cdd", robot, pin_model_from_robot(robot), contacts)


def _erd(pin, tmp_path_factory, label, spec):
    path, contacts = spec
    floating = label != "panda"
    robot = symgen.load_urdf(erd_path(path), floating_base=floating)
    model = (pin.buildModelFromUrdf(str(erd_path(path)), pin.JointModelFreeFlyer()) if floating
             else pin.buildModelFromUrdf(str(erd_path(path))))
    return _case(pin, tmp_path_factory, f"{label}cdd", robot, model, contacts)


@pytest.fixture(scope="module")
def fast(pin, tmp_path_factory):
    return {label: _synthetic(pin, tmp_path_factory, label) for label in ("biped", "arm")}


def _options(pkg):
    """The sweep options of the package's contacts (its frames are the contact frames)."""
    return Q.SweepOptions(frames=tuple(name for name, _ in pkg.contacts), contacts=tuple(pkg.contacts))


def _active_sets(rng, count, draws=3):
    return [np.zeros(count), np.ones(count)] + [rng.integers(0, 2, count).astype(float) for _ in range(draws)]


def _rows(pkg, on):
    return [r for rows, a in zip(pkg.numpy._CONTACT_ROWS, on) if a for r in rows]


def _check(robot, oracle, pkg, label, seed, states=2):
    """Both backends against Pinocchio on ``states`` random states, each with the active sets of
    :func:`_active_sets`; the inactive rows of the lambda derivatives are zero."""
    rng = np.random.default_rng(seed)
    for t in range(states):
        s = Q.random_state(rng, robot.nq, robot.nv, layout=robot.joint_layout)
        q, v, tau = s["q"], s["qd"], s["tau"]
        for on in _active_sets(rng, len(pkg.contacts)):
            flags = on.astype(bool)
            tol = max(1e-8, kkt_tolerance(oracle.mass_matrix(q), ocn.contact_jacobian(oracle, q, flags)))
            if any(kind == "6d" for (_, kind), a in zip(pkg.contacts, flags) if a):
                # Pinocchio's CONTACT_6D constrains another acceleration (oracle_contact_derivatives)
                want, tol = ocd.contact_dynamics_derivatives_fd(oracle, q, v, tau, flags), FD_TOL
            else:
                want = ocd.contact_dynamics_derivatives(oracle, q, v, tau, flags)
            rows, off = _rows(pkg, flags), [r for r in range(pkg.numpy._CONTACT_M) if r not in _rows(pkg, flags)]
            for backend in ("numpy", "c"):
                got = getattr(pkg, backend).contact_dynamics_derivatives(q, v, tau, on)
                for name, g, w in zip(NAMES, got, want):
                    g = g[rows] if name.startswith("dlam") else g
                    err = np.max(np.abs(g - w), initial=0.0) / max(1.0, np.max(np.abs(w), initial=0.0))
                    assert err <= tol, (f"{name} ({backend}) {label} seed={seed} state#{t} active={on.astype(int)}: "
                                        f"relative error {err:.2e} > {tol:.1e}")
                for g in got[3:]:
                    assert not g[off].any(), f"{label} seed={seed}: lambda derivatives on inactive rows"


@pytest.mark.pinocchio
@pytest.mark.parametrize("label", ["biped", "arm"])
def test_contact_dynamics_derivatives_match_pinocchio_on_small_robots(fast, label):
    _check(*fast[label], label, seed=3100 + len(label))


@pytest.mark.pinocchio
def test_a_tree_with_ball_and_planar_joints_takes_the_forward_mode_route_and_matches_pinocchio(pin, tmp_path_factory):
    """Joints of several velocities inside the tree (a spherical and a planar one below the
    free-flyer): contact_partials takes the contact rows' partials by forward mode, not the closed
    forms (which every other robot here takes), and still matches Pinocchio (seed 3107)."""
    from symgen.algorithms.contact_acceleration_derivatives import applies
    from symgen.pinocchio_oracle import pin_model_of
    from support import mixed_tree

    robot = mixed_tree(7, size=6)
    assert not applies(robot) and {j.kind for j in robot.joint_models} >= {"spherical", "planar"}
    contacts = tuple((f, "3d") for f in robot.leaf_links[:2])
    case = _case(pin, tmp_path_factory, "ballcdd", robot, pin_model_of(robot), contacts)
    _check(*case, "ball", seed=3107)


@pytest.mark.pinocchio
def test_batches_match_one_state_calls_and_the_generated_terms_match_the_reference(fast):
    robot, _, pkg = fast["biped"]
    seed = 3200
    rng = np.random.default_rng(seed)
    states = [Q.random_state(rng, robot.nq, robot.nv, layout=robot.joint_layout) for _ in range(5)]
    q, v, tau = (np.array([s[a] for s in states]) for a in ("q", "qd", "tau"))
    active = rng.integers(0, 2, (5, len(pkg.contacts))).astype(float)
    for backend in ("numpy", "c"):
        batch = getattr(pkg, backend).contact_dynamics_derivatives(q, v, tau, active)
        for k in range(5):
            one = pkg.numpy.contact_dynamics_derivatives(q[k], v[k], tau[k], active[k])
            for name, b, o in zip(NAMES, batch, one):
                np.testing.assert_allclose(b[k], o, rtol=1e-10, atol=1e-10, err_msg=f"{name} {backend} seed={seed}")
    for label in ("biped", "arm"):
        robot, _, pkg = fast[label]
        opts = _options(pkg)
        s = Q.random_state(rng, robot.nq, robot.nv, layout=robot.joint_layout)
        want = Q.evaluate(robot, "contact_partials", s, opts)
        for backend in ("numpy", "c"):
            got = getattr(pkg, backend).contact_partials(s["q"], s["qd"], s["qdd"])
            for g, w in zip(got, want):
                np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-9 * max(1.0, np.max(np.abs(w))),
                                           err_msg=f"contact_partials {label} {backend} seed={seed}")


@pytest.mark.pinocchio
def test_contact_partials_give_pinocchios_rnea_derivatives_and_the_pivots_of_its_mass_matrix(fast):
    """The unsolved terms the solve starts from: contact_partials' Tq, Tv = computeRNEADerivatives at (q, v, qdd)
    and contact_terms' Dinv = 1 / D of crba's M = L^T D L (tree-sparse, oracle_contact.ltdl), NumPy and C."""
    seed = 3220
    rng = np.random.default_rng(seed)
    for label in ("biped", "arm"):
        robot, oracle, pkg = fast[label]
        s = Q.random_state(rng, robot.nq, robot.nv, layout=robot.joint_layout)
        dq, dv = oracle.inverse_dynamics_derivatives(s["q"], s["qd"], s["qdd"])
        _, D = ocn.ltdl(oracle.mass_matrix(s["q"]), robot.parent)
        for backend in ("numpy", "c"):
            Tq, Tv = getattr(pkg, backend).contact_partials(s["q"], s["qd"], s["qdd"])[:2]
            Dinv = getattr(pkg, backend).contact_terms(s["q"], s["qd"], s["tau"])[5]
            for name, got, want in (("Tq", Tq, dq), ("Tv", Tv, dv), ("Dinv", Dinv, 1 / D)):
                np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9 * max(1.0, np.max(np.abs(want))),
                                           err_msg=f"{name} {label} {backend} seed={seed}")


@pytest.mark.pinocchio
def test_the_difference_oracle_agrees_with_computeConstraintDynamicsDerivatives_on_point_contacts(fast):
    """The oracle of flat contacts (differences of forwardDynamics) checked where Pinocchio's own
    derivatives hold (point contacts: the same constraint in both)."""
    robot, oracle, pkg = fast["biped"]
    seed = 3250
    rng = np.random.default_rng(seed)
    s = Q.random_state(rng, robot.nq, robot.nv, layout=robot.joint_layout)
    on = np.ones(len(pkg.contacts), bool)
    exact = ocd.contact_dynamics_derivatives(oracle, s["q"], s["qd"], s["tau"], on)
    fd = ocd.contact_dynamics_derivatives_fd(oracle, s["q"], s["qd"], s["tau"], on)
    for name, e, f in zip(NAMES, exact, fd):
        err = np.max(np.abs(e - f)) / max(1.0, np.max(np.abs(e)))
        assert err <= FD_TOL, f"{name} seed={seed}: {err:.2e}"


@pytest.mark.pinocchio
def test_the_reference_contact_partials_are_derivatives_along_pin_integrate(fast, pin):
    """The numeric contact_partials' dJ, d a_c/dq, d a_c/dv (closed forms) against central differences of the contact rows
    (Jc, Jc qdd + Jc_dot v) at q ⊕ (±h e_k) by Pinocchio's integrate."""
    from symgen.algorithms.contact import contact_rows
    from symgen.algorithms.contact_derivatives import unpack_dJ
    from symgen.backend import NUMERIC

    robot, oracle, pkg = fast["biped"]
    seed, h = 3300, 1e-6
    rng = np.random.default_rng(seed)
    s = Q.random_state(rng, robot.nq, robot.nv, layout=robot.joint_layout)
    q, v, qdd = s["q"], s["qd"], s["qdd"]
    opts = _options(pkg)
    frames, kinds = zip(*Q.contact.contacts_of(robot, opts))
    _, _, packed, _, Aq, Av = Q.evaluate(robot, "contact_partials", s, opts)
    dJ = unpack_dJ(robot, frames, kinds, packed)

    def rows(q, v):
        J, gamma = contact_rows(robot, q, v, frames, kinds, NUMERIC)
        return J, J @ qdd + gamma

    def plus(dv):                                   # pin.integrate in symgen's order (the same layout here)
        return pin.integrate(oracle.model, oracle.map.q(q), oracle.map.v(dv))

    assert np.allclose(oracle.map.q(q), q)
    for k in range(robot.nv):
        e = np.zeros(robot.nv)
        e[k] = h
        (Jp, ap), (Jm, am) = rows(plus(e), v), rows(plus(-e), v)
        np.testing.assert_allclose(dJ[:, :, k], (Jp - Jm) / (2 * h), atol=1e-6, err_msg=f"dJ column {k} seed={seed}")
        np.testing.assert_allclose(Aq[:, k], (ap - am) / (2 * h), atol=1e-5, err_msg=f"Aq column {k} seed={seed}")
        np.testing.assert_allclose(Av[:, k], (rows(q, v + e)[1] - rows(q, v - e)[1]) / (2 * h), atol=1e-5,
                                   err_msg=f"Av column {k} seed={seed}")


@pytest.mark.slow
@pytest.mark.pinocchio
@pytest.mark.parametrize("label,spec", [("solo12", SOLO), ("panda", PANDA), ("talos", TALOS)],
                         ids=["solo12", "panda", "talos"])
def test_contact_dynamics_derivatives_match_pinocchio_on_example_robots(pin, tmp_path_factory, label, spec):
    robot, oracle, pkg = _erd(pin, tmp_path_factory, label, spec)
    _check(robot, oracle, pkg, label, seed=3400 + len(label), states=1 if label == "talos" else 2)
