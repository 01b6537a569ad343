"""External forces ``f_ext`` (symgen/algorithms/external_forces.py, ``--external-forces``): one
[force; torque] per link in its frame, Pinocchio's ``fext``.

- The numeric reference (every route, body and ground frames) against Pinocchio's rnea, aba,
  computeRNEADerivatives and computeABADerivatives with fext, to 1e-9, on ur5, solo12 (free-flyer),
  a tree with an inner free-flyer, a planar joint and an axisymmetric rotor, random trees with every
  joint kind and general axes, and a general-axis chain.
- A generated package (NumPy, C and its batches) against the same, f_ext given as (links, 6) or
  flat; ``symgen verify`` passes on it; without the option nothing takes f_ext.
- The identities that hold with external forces: RNEA(q, qd, FD(q, qd, tau, f), f) = tau, and
  tau(f) - tau(0) = -sum_k J_k^T f_k with each link's own-frame Jacobian from Pinocchio.
- What is not supported is refused in one line.
"""
from __future__ import annotations

import zlib

import numpy as np
import pytest
from click.testing import CliRunner

import symgen
from symgen import quantities as Q
from symgen.cli import main
from symgen.codegen.build import BuildOptions, build, import_package
from symgen.errors import ModelError, OptionError
from symgen.pinocchio_oracle import PinOracle, pin_model_of
from symgen import robots

import support

pytestmark = pytest.mark.timeout(600)

#: the quantities that take f_ext, and the oracle call of each
KEYS = ("tau", "qdd", "dtau", "dqdd")


def _forces(rng, robot):
    return rng.uniform(-10.0, 10.0, (len(robot.link_names), 6))


def _expected(oracle, key, s, f):
    if key == "tau":
        return oracle.inverse_dynamics(s["q"], s["qd"], s["qdd"], f)
    if key == "qdd":
        return oracle.forward_dynamics(s["q"], s["qd"], s["tau"], f)
    if key == "dtau":
        return oracle.inverse_dynamics_derivatives(s["q"], s["qd"], s["qdd"], f)
    return oracle.forward_dynamics_derivatives(s["q"], s["qd"], s["tau"], f)


def _cases(pin, robot, label, states):
    """(context, quantity, state, f_ext, Pinocchio's value (flat), tolerance) of each quantity taking f_ext at
    ``states`` seeded random states, each with its random forces."""
    oracle = PinOracle(robot, pin_model_of(robot, pin), pin)
    seed, drawn = support.seeded_states(label, robot, states, layout=robot.joint_layout)
    rng = np.random.default_rng(seed)
    for t, s in enumerate(drawn):
        f = _forces(rng, robot)
        for key in KEYS:
            x, want = Q.QUANTITIES[key], _expected(oracle, key, s, f)
            yield (f"{label} seed={seed} state#{t}", x, s, f, Q.flat(tuple(want) if isinstance(want, tuple) else want),
                   Q.tolerance(x, oracle.mass_matrix(s["q"])))


def _check_reference(pin, robot, label, states=2):
    for ctx, x, s, f, want, rtol in _cases(pin, robot, label, states):
        for frame in Q.FRAMES:
            got = Q.flat(Q.evaluate(robot, x.key, {**s, "f_ext": f}, Q.SweepOptions(frame=frame, external_forces=True)))
            support.assert_close(got, want, f"{x.function} with f_ext ({frame} frame)", ctx, rtol=rtol)


@pytest.mark.parametrize("path,floating", [("ur_description/urdf/ur5_robot.urdf", False),
                                           ("solo_description/robots/solo12.urdf", True)])
def test_reference_matches_pinocchio_fext(pin, erd, path, floating):
    robot = symgen.load_robot(erd(path), floating_base=floating)
    _check_reference(pin, robot, f"fext {path}")


def test_reference_with_inner_joint_models_and_a_rotor(pin):
    """An inner free-flyer, a planar joint and an axisymmetric rotor (which turns when a force rides
    on it: the inertial view that keeps it still is not taken)."""
    _check_reference(pin, symgen.load_robot("tests/data/joints/mixed_joints.urdf"), "fext mixed_joints", states=3)


@pytest.mark.parametrize("seed", [11, 12])
def test_reference_on_random_trees_of_every_joint_kind(pin, seed):
    _check_reference(pin, support.mixed_tree(seed, size=6), f"fext mixed_tree{seed}")


def test_reference_on_a_general_axis_chain(pin):
    _check_reference(pin, robots.make("serial", 7, 3), "fext serial7")


def test_forces_are_the_transposed_link_jacobians(pin, erd):
    """tau(f) - tau(0) = -sum_k J_k^T f_k, J_k link k's Jacobian in its own frame (pin.LOCAL)."""
    robot = symgen.load_robot(erd("solo_description/robots/solo12.urdf"), floating_base=True)
    model = pin_model_of(robot, pin)
    oracle = PinOracle(robot, model, pin)
    seed, (s,) = support.seeded_states("fext jacobians", robot, 1, layout=robot.joint_layout)
    f = _forces(np.random.default_rng(seed), robot)
    opts = Q.SweepOptions(external_forces=True)
    delta = Q.evaluate(robot, "tau", {**s, "f_ext": f}, opts) - Q.evaluate(robot, "tau", {**s, "f_ext": None}, opts)
    data = model.createData()
    qp = oracle.map.q(s["q"])
    pin.computeJointJacobians(model, data, qp)
    want = np.zeros(model.nv)
    for k, i in enumerate(robot.inertial_bodies):
        J = pin.getJointJacobian(model, data, model.getJointId(robot.bodies[i].joint_name), pin.LOCAL)
        want -= J.T @ f[k]
    support.assert_close(delta, oracle.map.vec(want), "tau(f) - tau(0)", f"seed={seed}", rtol=1e-10)


@pytest.fixture(scope="module")
def ur5_package(tmp_path_factory, erd):
    robot = symgen.load_robot(erd("ur_description/urdf/ur5_robot.urdf"))
    folder = tmp_path_factory.mktemp("fext")
    keys = ("M", "C", "tau", "qdd", "dtau", "dqdd", "contact_terms", "contact_partials")
    result = build(robot, folder, opts=BuildOptions(quantities=keys, copt="-O0", external_forces=True,
                                                    contacts=(("ee_link", "3d"),)))
    return robot, import_package(result.path), result.path


def test_package_numpy_and_c_match_pinocchio(pin, ur5_package):
    robot, pkg, _ = ur5_package
    assert pkg.external_forces is True
    _check_package(pin, robot, pkg, "fext package")


@pytest.mark.slow
@pytest.mark.timeout(3000)
@pytest.mark.parametrize("label", ["panda", "solo12", "talos", "serial20"])
def test_big_packages_match_pinocchio(pin, erd, tmp_path, label):
    """panda, solo12 and talos (free-flyers) and a 20-DoF general-axis chain, NumPy and C, every
    function taking f_ext."""
    robot = {"panda": lambda: symgen.load_robot(erd("panda_description/urdf/panda.urdf")),
             "solo12": lambda: symgen.load_robot(erd("solo_description/robots/solo12.urdf"), floating_base=True),
             "talos": lambda: symgen.load_robot(erd("talos_data/robots/talos_reduced.urdf"), floating_base=True),
             "serial20": lambda: robots.make("serial", 20, 7)}[label]()
    result = build(robot, tmp_path, opts=BuildOptions(quantities=KEYS, copt="-O0", external_forces=True, max_dof=0,
                                                      budget=0, jobs=0))
    _check_package(pin, robot, import_package(result.path), f"fext {label}", states=2)


def _check_package(pin, robot, pkg, label, states=3):
    for ctx, x, s, f, want, rtol in _cases(pin, robot, label, states):
        for backend in (pkg.numpy, pkg.c):
            for given in (f, f.ravel()):
                got = getattr(backend, x.function)(*(s[a] for a in x.arguments), given)
                support.assert_close(Q.flat(got), want, f"{backend.__name__}.{x.function}", ctx, rtol=rtol)


def test_package_batches_take_one_force_set_per_state(ur5_package):
    robot, pkg, _ = ur5_package
    rng = np.random.default_rng(zlib.crc32(b"fext batch"))
    q, v, a = (rng.uniform(-2, 2, (4, robot.nv)) for _ in range(3))
    f = rng.uniform(-10, 10, (4, len(robot.link_names), 6))
    for backend in (pkg.numpy, pkg.c):
        batch = backend.inverse_dynamics(q, v, a, f)
        one = np.array([backend.inverse_dynamics(q[k], v[k], a[k], f[k]) for k in range(4)])
        assert batch.shape == (4, robot.nv)
        np.testing.assert_allclose(batch, one, rtol=1e-13, atol=1e-12)
    with pytest.raises(ValueError, match="f_ext must have shape"):
        pkg.numpy.inverse_dynamics(q[0], v[0], a[0], np.zeros((2, 6)))


def test_identity_rnea_of_fd_with_forces(ur5_package):
    robot, pkg, _ = ur5_package
    seed, (s,) = support.seeded_states("fext identity", robot, 1)
    f = _forces(np.random.default_rng(seed), robot)
    qdd = pkg.c.forward_dynamics(s["q"], s["qd"], s["tau"], f)
    support.assert_close(pkg.c.inverse_dynamics(s["q"], s["qd"], qdd, f), s["tau"], "RNEA(FD(tau, f), f)",
                         f"seed={seed}", rtol=1e-9)


def test_contact_dynamics_and_derivatives_take_f_ext(pin, ur5_package):
    """contact_dynamics(q, v, tau, active, f) = Pinocchio's forwardDynamics at tau + sum_k J_k^T f_k;
    its q-derivatives gain d/dtau d(sum_k J_k^T f_k)/dq (computeConstraintDynamicsDerivatives)."""
    robot, pkg, _ = ur5_package
    _check_contact_fext(pin, robot, pkg, "fext contact")


@pytest.mark.slow
@pytest.mark.timeout(3000)
@pytest.mark.parametrize("label", ["panda", "solo12", "talos", "serial20"])
def test_contact_functions_with_f_ext_on_big_robots(pin, erd, tmp_path, label):
    """The same on panda (a flat contact at the hand), solo12 (four 3d feet) and talos (two 6d
    soles), free-flyers, and the 20-DoF general-axis chain (a point contact at its tip), every
    contact active (a flat one against differences of Pinocchio's forwardDynamics, 1e-6)."""
    if label == "serial20":
        robot = robots.make("serial", 20, 7)
        contacts = ((robot.leaf_links[0], "3d"),)
    else:
        path, contacts = {"panda": ("panda_description/urdf/panda.urdf", (("panda_hand", "6d"),)),
                          "solo12": ("solo_description/robots/solo12.urdf",
                                     tuple((f"{leg}_FOOT", "3d") for leg in ("FL", "FR", "HL", "HR"))),
                          "talos": ("talos_data/robots/talos_reduced.urdf",
                                    (("left_sole_link", "6d"), ("right_sole_link", "6d")))}[label]
        robot = symgen.load_robot(erd(path), floating_base=label != "panda")
    result = build(robot, tmp_path, opts=BuildOptions(quantities=("contact_terms", "contact_partials"), copt="-O0",
                                                      external_forces=True, contacts=contacts, jobs=0, max_dof=0,
                                                      budget=0))
    _check_contact_fext(pin, robot, import_package(result.path), f"fext contact {label}")


def _check_contact_fext(pin, robot, pkg, label):
    from symgen import oracle_contact as ocn
    from symgen import oracle_contact_derivatives as ocd

    oracle = PinOracle(robot, pin_model_of(robot, pin), pin, frames=pkg.frames)
    oracle = ocn.with_contacts(oracle, tuple(pkg.contacts))
    seed, (s,) = support.seeded_states(label, robot, 1, unit_base=robot.floating_base)
    f = _forces(np.random.default_rng(seed), robot)
    on = np.ones(len(pkg.contacts), dtype=bool)
    tau_f = s["tau"] + ocn.external_torque(oracle, s["q"], f)
    want_qdd, want_lam = ocn.contact_dynamics(oracle, s["q"], s["qd"], tau_f, on)
    flat = any(kind == "6d" for _, kind in pkg.contacts)
    # Pinocchio's CONTACT_6D constrains another acceleration: differences of its forwardDynamics then
    # (oracle_contact_derivatives; tests/test_contact_derivatives.py)
    d = (ocd.contact_dynamics_derivatives_fd if flat else ocd.contact_dynamics_derivatives)(oracle, s["q"], s["qd"],
                                                                                           tau_f, on)
    tol = 1e-6 if flat else 1e-8
    dext = ocn.external_torque_dq(oracle, s["q"], f)
    want_d = (d[0] + d[2] @ dext, d[1], d[2], d[3] + d[5] @ dext, d[4], d[5])
    for backend in (pkg.numpy, pkg.c):
        qdd, lam = backend.contact_dynamics(s["q"], s["qd"], s["tau"], on, f)
        support.assert_close(qdd, want_qdd, f"{backend.__name__}.contact_dynamics qdd", f"{label} seed={seed}", rtol=1e-8)
        support.assert_close(np.ravel(lam), want_lam, f"{backend.__name__}.contact_dynamics lam", f"{label} seed={seed}",
                             rtol=1e-8)
        assert np.max(np.abs(qdd - backend.contact_dynamics(s["q"], s["qd"], s["tau"], on, 0 * f)[0])) > 1e-3
        got = backend.contact_dynamics_derivatives(s["q"], s["qd"], s["tau"], on, f)
        support.assert_close(Q.flat(got), Q.flat(want_d), f"{backend.__name__}.contact_dynamics_derivatives",
                             f"{label} seed={seed}", rtol=tol)


def test_verify_passes_on_an_external_forces_package(ur5_package, erd):
    _, _, path = ur5_package
    out = CliRunner().invoke(main, ["verify", str(path), "--urdf", str(erd("ur_description/urdf/ur5_robot.urdf")),
                                    "--trials", "3"])
    assert out.exit_code == 0, out.output
    assert "c vs Pinocchio: inverse_dynamics " in out.output and "external_forces=True" in out.output


def test_without_the_option_nothing_takes_f_ext():
    opts = Q.SweepOptions()
    assert all("f_ext" not in x.arguments_for(opts) for x in Q.QUANTITIES.values())
    with_forces = Q.SweepOptions(external_forces=True)
    taking = sorted(x.function for x in Q.QUANTITIES.values() if "f_ext" in x.arguments_for(with_forces))
    assert taking == ["contact_partials", "contact_terms", "forward_dynamics", "forward_dynamics_derivatives",
                      "inverse_dynamics", "inverse_dynamics_derivatives"]


def test_refusals(tmp_path):
    arm = symgen.load_robot("symgen/examples/arm4.urdf")
    with pytest.raises(OptionError, match="--external-forces: none of --quantities"):
        build(arm, tmp_path, opts=BuildOptions(quantities=("M",), external_forces=True, compile=False))
    with pytest.raises(ModelError, match=r"f_ext must have shape \(4, 6\)"):
        Q.evaluate(arm, "tau", {"q": np.zeros(4), "qd": np.zeros(4), "qdd": np.zeros(4), "f_ext": np.zeros(5)},
                   Q.SweepOptions(external_forces=True))
    four_bar = symgen.load_urdf("tests/data/urdfplus/four_bar.urdf")
    with pytest.raises(OptionError, match="--external-forces: not supported for robot"):
        build(four_bar, tmp_path, opts=BuildOptions(quantities=("tau",), external_forces=True, compile=False))


def test_cli_records_the_option(tmp_path):
    out = CliRunner().invoke(main, ["build", "symgen/examples/arm4.urdf", "--out", str(tmp_path), "--quantities", "tau",
                                    "--external-forces", "--no-compile", "--quiet"])
    assert out.exit_code == 0, out.output
    header = (tmp_path / "arm4" / "arm4.h").read_text()
    assert "--external-forces" in header and "const double *f_ext" in header and "#define ARM4_EXTERNAL_FORCES 1" in header


def test_numeric_api_takes_f_ext(pin, erd):
    robot = symgen.load_robot(erd("ur_description/urdf/ur5_robot.urdf"))
    oracle = PinOracle(robot, pin_model_of(robot, pin), pin)
    seed, (s,) = support.seeded_states("fext numeric api", robot, 1)
    f = _forces(np.random.default_rng(seed), robot)
    support.assert_close(symgen.inverse_dynamics(robot, s["q"], s["qd"], s["qdd"], f_ext=f),
                         oracle.inverse_dynamics(s["q"], s["qd"], s["qdd"], f), "inverse_dynamics", f"seed={seed}")
    support.assert_close(symgen.forward_dynamics(robot, s["q"], s["qd"], s["tau"], f_ext=f),
                         oracle.forward_dynamics(s["q"], s["qd"], s["tau"], f), "forward_dynamics", f"seed={seed}",
                         rtol=Q.tolerance(Q.QUANTITIES["qdd"], oracle.mass_matrix(s["q"])))
    four_bar = symgen.load_urdf("tests/data/urdfplus/four_bar.urdf")
    with pytest.raises(OptionError, match="f_ext: not supported"):
        symgen.inverse_dynamics(four_bar, np.zeros(four_bar.nq), np.zeros(four_bar.nv), np.zeros(four_bar.nv),
                                f_ext=np.zeros((3, 6)))


def test_bench_times_the_package_and_pinocchio_with_forces(ur5_package, erd):
    """symgen bench on an --external-forces package: the C loop and the binding are given f_ext, Pinocchio's
    Python rival fext; its C++ rival is the "+fext" timing of the harness."""
    from symgen.bench import bench_package
    from symgen.bench.pin import cpp_names

    _, _, path = ur5_package
    result = bench_package(path, urdf=erd("ur_description/urdf/ur5_robot.urdf"), quantities=KEYS, pin_cpp="off",
                           repeats=1, min_time=0.001, c_batch=4, batch=4)
    for qty in KEYS:
        us = result["us"][qty]
        assert us["c_loop"] > 0 and us["c_py_single"] > 0 and us["pin_py"] > 0, (qty, us)
        assert cpp_names(qty, True) == [f"{qty}+fext"] and cpp_names(qty) == [qty]


def test_bench_says_why_pinocchios_cpp_rows_are_missing_with_f_ext(monkeypatch, erd):
    """When the Pinocchio C++ harness cannot be built, the bench's note for its rows is the reason
    (the f_ext note used to replace it, so the rows vanished without a word)."""
    from symgen.bench import measure
    from symgen.bench.harness import BenchError

    def no_harness(*args, **kwargs):
        raise BenchError("cannot build the Pinocchio C++ harness: missing Eigen (pip install cmeel-eigen)")
    monkeypatch.setattr(measure, "pinocchio_cpp", no_harness)
    monkeypatch.setattr(measure, "pinocchio_python", lambda *a, **k: {})
    m = measure.Measurement()
    measure.time_pinocchio(m, erd("ur_description/urdf/ur5_robot.urdf"), ("tau", "qdd"), 6, measure.Settings(),
                           external=True)
    for qty in ("tau", "qdd"):
        assert m.values["pin_cpp", qty] == "n/a"
        assert "missing Eigen" in m.notes["pin_cpp", qty], m.notes
