"""The CasADi target (``--target numpy,c,casadi``): every function of the package as a CasADi
external function (NAME_casadi.so) equal to the C binding it calls, jac_inverse_dynamics and
jac_forward_dynamics equal to the analytical derivatives and to CasADi's finite differences
(fixed base and free-flyer, whose q has nq = nv + 1 coordinates), and the externals inside an MX
graph, an integrator and Opti."""
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ca = pytest.importorskip("casadi")

import symgen  # noqa: E402
from symgen.codegen.build import BuildOptions, build  # noqa: E402
from symgen.codegen.casadi_target import load_externals  # noqa: E402
from symgen.codegen.package import import_package  # noqa: E402
from symgen.verify import read_manifest  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
ARM4 = ROOT / "symgen" / "examples" / "arm4.urdf"
#: the free-flyer package: the functions jac_ needs, and some of every output kind
FLOATING = ("M", "tau", "g", "qdd", "Minv", "dtau", "dqdd", "oMf", "MCg")
CASADI = ("numpy", "c", "casadi")
#: CasADi's central differences instead of jac_ (a step of 1e-5: the default's round-off reached
#: 2e-6 of solo12's d qdd/dv, the truncation at this step is below 1e-7)
FD = {"enable_jacobian": False, "enable_fd": True, "fd_method": "central", "fd_options": {"h": 1e-5, "h_iter": 0}}


def _build(tmp_path_factory, name, floating_base, quantities=None):
    robot = symgen.load_urdf(ARM4, floating_base=floating_base)
    out = tmp_path_factory.mktemp(name)
    opts = BuildOptions(targets=CASADI, copt="-O0", **({"quantities": quantities} if quantities else {}))
    return build(robot, out, name=name, opts=opts).path


@pytest.fixture(scope="module")
def fixed(tmp_path_factory):
    """arm4 with every default function."""
    return _build(tmp_path_factory, "arm4_cas", False)


@pytest.fixture(scope="module")
def floating(tmp_path_factory):
    """arm4 on a free-flyer (nq 11, nv 10)."""
    return _build(tmp_path_factory, "arm4_ff_cas", True, FLOATING)


def _state(pkg, seed, quaternion_scale=1.0):
    rng = np.random.default_rng(seed)
    q = rng.uniform(-1.5, 1.5, pkg.nq)
    if pkg.nq != pkg.nv:
        q[3:7] *= quaternion_scale / np.linalg.norm(q[3:7])
    return q, rng.uniform(-2, 2, pkg.nv), rng.uniform(-3, 3, pkg.nv)


def _args(pkg, inputs, q, v, a, seed):
    rng = np.random.default_rng(seed + 100)
    given = {"q": q, "qd": v}
    return [given.get(name, a if k == 2 else rng.uniform(-2, 2, pkg.nv)) for k, name in enumerate(inputs)]


@pytest.mark.parametrize("which", ["fixed", "floating"])
def test_every_external_equals_the_c_binding(which, request):
    """Through casadi.external, each function's outputs (column-major, transposed back) are the C
    binding's bits: the external calls the same compiled C."""
    path = request.getfixturevalue(which)
    pkg, manifest = import_package(path), read_manifest(path)
    ext = load_externals(path, manifest)
    assert manifest["options"]["targets"] == list(CASADI)
    for seed in range(3):
        q, v, a = _state(pkg, seed)
        for fname, info in manifest["functions"].items():
            args = _args(pkg, info["inputs"], q, v, a, seed)
            ours, theirs = getattr(ext, fname)(*args), getattr(pkg.c, fname)(*args)
            for mine, ref in zip(*(x if isinstance(x, tuple) else (x,) for x in (ours, theirs))):
                assert mine.shape == ref.shape and np.array_equal(mine, ref), f"{which} {fname} (seed {seed})"


@pytest.mark.slow
@pytest.mark.parametrize("robot, floating_base, mimic", [("solo_description/robots/solo12.urdf", True, False),
                                                         ("panda_description/urdf/panda.urdf", False, True)],
                         ids=["solo12", "panda-mimic"])
def test_externals_and_jac_of_real_robots(robot, floating_base, mimic, tmp_path, erd):
    """solo12 on a free-flyer and panda with --mimic: every external equals the C binding, and
    jac_ equals CasADi's central differences (the issue's robots)."""
    loaded = symgen.load_urdf(erd(robot), floating_base=floating_base, mimic=mimic)
    path = build(loaded, tmp_path, name="real", opts=BuildOptions(targets=CASADI, quantities=FLOATING,
                                                                   copt="-O0")).path
    pkg, manifest = import_package(path), read_manifest(path)
    ext = load_externals(path, manifest)
    q, v, a = _state(pkg, 0)
    for fname, info in manifest["functions"].items():
        args = _args(pkg, info["inputs"], q, v, a, 0)
        ours, theirs = getattr(ext, fname)(*args), getattr(pkg.c, fname)(*args)
        for mine, ref in zip(*(x if isinstance(x, tuple) else (x,) for x in (ours, theirs))):
            assert np.array_equal(mine, ref), f"{robot} {fname} (seed 0)"
    lib = str(path / "real_casadi.so")
    for function in ("inverse_dynamics", "forward_dynamics"):
        exact = _jacobians(ca.external(function, lib, {"enable_fd": False}), pkg.nq, pkg.nv)
        fd = _jacobians(ca.external(function, lib, FD), pkg.nq, pkg.nv)
        for k, (mine, theirs) in enumerate(zip(*([np.array(x) for x in J(q, v, a)] for J in (exact, fd)))):
            assert np.abs(mine - theirs).max() < 1e-6 * max(1.0, np.abs(theirs).max()), f"{robot} {function} {k}"


def test_a_matrix_output_is_casadis_matrix_not_its_transpose(fixed):
    """M's rows in CasADi are M's rows (the transposition on the way out), checked on the
    non-symmetric frame Jacobian (6 x n) and C."""
    pkg = import_package(fixed)
    q, v, _ = _state(pkg, 7)
    J = np.array(ca.external("frame_jacobian", str(fixed / "arm4_cas_casadi.so"))(q))
    C = np.array(ca.external("coriolis_matrix", str(fixed / "arm4_cas_casadi.so"))(q, v))
    np.testing.assert_array_equal(J, pkg.c.frame_jacobian(q)[0])
    np.testing.assert_array_equal(C, pkg.c.coriolis_matrix(q, v))


def _jacobians(f, n_q, n):
    Q, V, A = ca.MX.sym("q", n_q), ca.MX.sym("v", n), ca.MX.sym("a", n)
    y = f(Q, V, A)
    return ca.Function("J", [Q, V, A], [ca.jacobian(y, Q), ca.jacobian(y, V), ca.jacobian(y, A)])


@pytest.mark.parametrize("which", ["fixed", "floating"])
@pytest.mark.parametrize("function", ["inverse_dynamics", "forward_dynamics"])
def test_jac_is_the_analytical_derivative_and_agrees_with_finite_differences(which, function, request):
    """CasADi's Jacobian through the external comes from jac_f (finite differences disabled, so
    nothing else could give it): d/dq, d/dv equal the package's derivatives (fixed base) and the
    third block M (tau) or M^-1 (qdd); all three agree with CasADi's central differences of the
    external without jac_ (the free-flyer's nq columns included, also off the unit quaternion)."""
    path = request.getfixturevalue(which)
    pkg, lib = import_package(path), str(path / f"{path.name}_casadi.so")
    exact = _jacobians(ca.external(function, lib, {"enable_fd": False}), pkg.nq, pkg.nv)
    fd = _jacobians(ca.external(function, lib, FD), pkg.nq, pkg.nv)
    derivatives = getattr(pkg.c, function + "_derivatives")
    third = pkg.c.mass_matrix if function == "inverse_dynamics" else pkg.c.mass_matrix_inverse
    for seed, scale in ((0, 1.0), (1, 1.0), (2, 1.7)):
        q, v, a = _state(pkg, seed, scale)
        got = [np.array(x) for x in exact(q, v, a)]
        d_q, d_v = derivatives(q, v, a)
        if pkg.nq == pkg.nv:
            np.testing.assert_allclose(got[0], d_q, rtol=1e-13, atol=1e-12, err_msg=f"d/dq (seed {seed})")
        else:                                   # the joints' columns are the tangent's as they are
            np.testing.assert_allclose(got[0][:, 7:], d_q[:, 6:], rtol=1e-13, atol=1e-12, err_msg=f"seed {seed}")
        np.testing.assert_allclose(got[1], d_v, rtol=1e-13, atol=1e-12, err_msg=f"d/dv (seed {seed})")
        np.testing.assert_allclose(got[2], third(q), rtol=1e-13, atol=1e-12, err_msg=f"third (seed {seed})")
        for k, (mine, theirs) in enumerate(zip(got, (np.array(x) for x in fd(q, v, a)))):
            scale_ = max(1.0, np.abs(theirs).max())
            assert np.abs(mine - theirs).max() < 1e-6 * scale_, f"{which} {function} block {k} (seed {seed})"


@pytest.mark.parametrize("kind", ["mixed", "inertial"])
def test_externals_in_mixed_and_inertial_speeds(kind, tmp_path):
    """--base-velocity mixed|inertial with --target casadi: every external equals the binding, and
    jac_ of inverse and forward dynamics (d/dq through those speeds' tangent map: p moves by dv_lin,
    with INERTIAL plus omega x p, R by exp([omega]) R on the left) agrees with CasADi's central
    differences of the external, off the unit quaternion too."""
    robot = symgen.load_urdf(ARM4, floating_base=True)
    path = build(robot, tmp_path, name=f"arm4_{kind}_cas", opts=BuildOptions(
        targets=CASADI, copt="-O0", quantities=FLOATING, base_velocity=kind)).path
    pkg, manifest = import_package(path), read_manifest(path)
    assert pkg.base_velocity == kind
    ext, lib = load_externals(path, manifest), str(path / f"{path.name}_casadi.so")
    for seed, scale in ((0, 1.0), (1, 1.7)):
        q, v, a = _state(pkg, seed, scale)
        for fname, info in manifest["functions"].items():
            args = _args(pkg, info["inputs"], q, v, a, seed)
            ours, theirs = getattr(ext, fname)(*args), getattr(pkg.c, fname)(*args)
            for mine, ref in zip(*(x if isinstance(x, tuple) else (x,) for x in (ours, theirs))):
                assert np.array_equal(mine, ref), f"{kind} {fname} (seed {seed})"
        for function in ("inverse_dynamics", "forward_dynamics"):
            exact = _jacobians(ca.external(function, lib, {"enable_fd": False}), pkg.nq, pkg.nv)
            fd = _jacobians(ca.external(function, lib, FD), pkg.nq, pkg.nv)
            for k, (mine, theirs) in enumerate(zip(*([np.array(x) for x in J(q, v, a)] for J in (exact, fd)))):
                assert np.abs(mine - theirs).max() < 1e-6 * max(1.0, np.abs(theirs).max()), \
                    f"{kind} {function} block {k} (seed {seed}, |quat| {scale})"


def test_free_flyer_quaternion_columns_move_q_as_the_tangent_does(floating):
    """The free-flyer's d f/d quat (nq columns) times quat's first-order move E w / 2 is d f/d omega
    (nv columns) times w: the chain rule the C applies, checked on the tangent derivative."""
    pkg = import_package(floating)
    lib = str(floating / f"{floating.name}_casadi.so")
    exact = _jacobians(ca.external("inverse_dynamics", lib, {"enable_fd": False}), pkg.nq, pkg.nv)
    q, v, a = _state(pkg, 4)
    x, y, z, w = q[3:7]
    E = np.array([[w, -z, y], [z, w, -x], [-y, x, w], [-x, -y, -z]])
    d_q = np.array(exact(q, v, a)[0])
    d_tangent, _ = pkg.c.inverse_dynamics_derivatives(q, v, a)
    np.testing.assert_allclose(d_q[:, 3:7] @ E / 2, d_tangent[:, 3:6], rtol=1e-12, atol=1e-10)
    np.testing.assert_allclose(d_q[:, :3], 0 * d_q[:, :3], atol=1e-12)   # tau ignores the base position


def test_configuration_space_externals_equal_the_binding(floating, fixed):
    """integrate, difference, normalize and neutral in the CasADi library of a free-flyer package
    equal the C binding's; a fixed-base package has them too (plain coordinates)."""
    for path in (floating, fixed):
        pkg = import_package(path)
        ext = load_externals(path, read_manifest(path))
        rng = np.random.default_rng(7)
        q0 = pkg.normalize(rng.normal(size=pkg.nq))
        v = rng.normal(size=pkg.nv)
        q1 = pkg.c.integrate(q0, v)
        np.testing.assert_allclose(ext.integrate(q0, v), q1, rtol=1e-14, atol=1e-14, err_msg=f"{path.name} (seed 7)")
        np.testing.assert_allclose(ext.difference(q0, q1), pkg.c.difference(q0, q1), rtol=1e-14, atol=1e-14)
        np.testing.assert_allclose(ext.normalize(2.5 * q0), pkg.c.normalize(2.5 * q0), rtol=1e-14, atol=1e-14)
        np.testing.assert_array_equal(ext.neutral(), pkg.neutral())
        f = ca.external("integrate", str(path / f"{path.name}_casadi.so"))
        assert f.name_in() == ["q", "v"] and f.size1_out(0) == pkg.nq


def test_externals_in_an_integrator_and_opti(fixed):
    """An MX graph of forward_dynamics in CasADi's integrator (cvodes) equals a fine RK4 of the C
    binding; Opti with IPOPT finds the acceleration a with inverse_dynamics(q, v, a) = tau, which
    is forward_dynamics(q, v, tau), with exact gradients from jac_inverse_dynamics."""
    pkg = import_package(fixed)
    lib = str(fixed / "arm4_cas_casadi.so")
    fd = ca.external("forward_dynamics", lib, {"enable_fd": False})
    rnea = ca.external("inverse_dynamics", lib, {"enable_fd": False})
    n = pkg.nv
    q0, v0, tau = _state(pkg, 5)
    x = ca.MX.sym("x", 2 * n)
    ode = {"x": x, "ode": ca.vertcat(x[n:], fd(x[:n], x[n:], tau))}
    sim = ca.integrator("sim", "cvodes", ode, 0.0, 0.05, {"abstol": 1e-12, "reltol": 1e-12})
    end = np.array(sim(x0=np.r_[q0, v0])["xf"]).ravel()

    def f(s):
        return np.r_[s[n:], pkg.c.forward_dynamics(s[:n], s[n:], tau)]
    s, h = np.r_[q0, v0], 0.05 / 200
    for _ in range(200):
        k1 = f(s); k2 = f(s + h / 2 * k1); k3 = f(s + h / 2 * k2); k4 = f(s + h * k3)
        s = s + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    np.testing.assert_allclose(end, s, rtol=1e-8, atol=1e-9)

    opti = ca.Opti()
    a = opti.variable(n)
    opti.minimize(ca.sumsqr(rnea(q0, v0, a) - tau))
    opti.solver("ipopt", {"print_time": False}, {"print_level": 0, "tol": 1e-12,
                                                  "hessian_approximation": "limited-memory"})
    solution = opti.solve()
    np.testing.assert_allclose(np.array(solution.value(a)).ravel(), pkg.c.forward_dynamics(q0, v0, tau),
                               rtol=1e-7, atol=1e-7)


def test_verify_checks_the_externals_and_their_jacobians(fixed, tmp_path):
    """`symgen verify` of a package listing the casadi target compares every external and each
    jac_ with the C binding; without its library it is no intact package (one line)."""
    from symgen.errors import SymgenError
    from symgen.verify import verify_package

    report, ok = verify_package(fixed, trials=1)
    assert ok, report
    for line in ("casadi vs c: christoffel", "casadi vs c: frame_placement",
                 "casadi vs c: jac_inverse_dynamics (CasADi's Jacobian)", "casadi vs c: jac_forward_dynamics"):
        assert line in report, line
    broken = tmp_path / fixed.name
    shutil.copytree(fixed, broken)
    (broken / f"{fixed.name}_casadi.so").unlink()
    with pytest.raises(SymgenError, match="lists the casadi target but arm4_cas_casadi.so is missing"):
        verify_package(broken, trials=1)


def test_default_build_has_no_casadi_library_and_records_its_targets(tmp_path):
    robot = symgen.load_urdf(ARM4)
    path = build(robot, tmp_path, name="plain", opts=BuildOptions(quantities=("M",), copt="-O0")).path
    assert read_manifest(path)["options"]["targets"] == ["numpy", "c"]
    assert not list(path.glob("*casadi*"))


@pytest.mark.parametrize("target, says", [("numpy,c,cassadi", "--target: unknown 'cassadi'"),
                                          ("numpy,casadi", "--target: casadi is compiled from the C source")])
def test_a_bad_target_is_a_one_line_error(tmp_path, target, says):
    done = subprocess.run([sys.executable, str(ROOT / "cli.py"), "build", str(ARM4), "--out", str(tmp_path),
                           "--target", target], capture_output=True, text=True)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert says in done.stderr and not list(tmp_path.iterdir())


@pytest.mark.timeout(1200)
def test_trajectory_example_finds_the_sx_tapes_optimum(tmp_path, capsys, erd):
    """examples/casadi_trajectory.py --quick (panda, 10 shooting nodes): IPOPT through the externals,
    through the SX tape of ABA and through Pinocchio's aba taped in CasADi converges to the same
    optimum (1e-6), at rest at both ends."""
    from test_examples import load_example

    erd("panda_description/urdf/panda.urdf")            # skips (fails under CI) without example-robot-data

    example = load_example(ROOT / "examples" / "casadi_trajectory.py")
    result = example.main(["--quick", "--out", str(tmp_path)])
    assert "time per iteration" in capsys.readouterr().out
    external, taped = result["runs"]["external"], result["runs"]["sx_tape"]
    assert external["success"] and taped["success"], (external["status"], taped["status"])
    assert result["difference"] < 1e-6 and abs(external["f"] - taped["f"]) < 1e-6 * taped["f"], result["difference"]
    assert external["max_gap"] < 1e-8 and taped["max_gap"] < 1e-8
    # and through Pinocchio's own aba taped in CasADi (casadi_kin_dyn, its environment made once)
    pinocchio = result["runs"]["pinocchio"]
    assert pinocchio["success"] and result["difference_pinocchio"] < 1e-6, result["difference_pinocchio"]
