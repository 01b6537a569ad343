"""Seed 002's Appendix B (issue #22, the ``appendix_b`` family): the adaptation term Y^T (v - v_r)
of Algorithm 3 (line 9), p = M v and C^T v (eq. (38)), the energies, and Algorithm 4's regressors,
against Pinocchio 4.1 (computeKineticEnergy, computePotentialEnergy, crba v, computeCoriolisMatrix^T v,
computeJointTorqueRegressor, computeKineticEnergyRegressor, computePotentialEnergyRegressor; Y_c and
the adaptation term column by column, :mod:`symgen.oracle_appendix_b`), to 1e-9 relative.

- the numeric reference on panda, solo12 (free-flyer), the mimic gripper of tests/test_mimic.py,
  a random tree and a random biped (free-flyer);
- the generated NumPy and C, one state and a batch, on arm4, the gripper (--mimic), a random tree
  and a quadruped; the C API through the header, from a C program;
- the identities: every regressor @ parameters == its quantity, adaptation_term == Y^T (v - v_r)
  with the package's own regressor, p = M v, C^T v == C^T v of the package's C, and the momentum
  equation p-dot = tau + C^T v - g along an RK4 motion of the generated forward dynamics;
- a --parametric build takes params (against Pinocchio with those parameters).

States come from ``numpy.random.default_rng(seed)``; every failure names the seed.
"""
from __future__ import annotations

import subprocess
import zlib
from pathlib import Path

import numpy as np
import pytest

import symgen
from support import assert_close, erd_path, pin_model_from_robot
from symgen import quantities as Q
from symgen import robots
from symgen.algorithms.regressor import robot_parameters
from symgen.codegen.build import BuildOptions, build, import_package
from symgen.pinocchio_oracle import EmbeddedPinOracle, PinOracle

ROOT = Path(__file__).resolve().parents[1]
ARM4 = ROOT / "symgen" / "examples" / "arm4.urdf"

#: the family's quantities, and the regressor of each of them: (regressor, quantity)
FAMILY = ("Yts", "p", "CTv", "T", "V", "Y_p", "Y_c", "Y_g", "Y_T", "Y_V", "Y_Vdot")
REGRESSORS = (("Y_p", "p"), ("Y_c", "CTv"), ("Y_g", "g"), ("Y_T", "T"), ("Y_V", "V"))


def _seed(label):
    return zlib.crc32(label.encode())


def _states(robot, seed, count):
    rng = np.random.default_rng(seed)
    return [Q.random_state(rng, robot.nq, robot.nv) for _ in range(count)]


def _build(robot, tmp, keys, **kw):
    """-O0: the values do not depend on it and gcc -O2 spends seconds on straight-line code."""
    return import_package(build(robot, tmp, opts=BuildOptions(quantities=keys, copt="-O0", **kw)).path)


def _gripper(tmp, pin):
    """The mimic gripper of tests/test_mimic.py (a mimic of a mimic, one across branches) and its
    oracle: Pinocchio's full model (mimic ignored) composed with the embedding."""
    from test_mimic import gripper

    path = tmp / "gripper.urdf"
    path.write_text(gripper())
    robot = symgen.load_urdf(path, mimic=True)
    return robot, EmbeddedPinOracle(robot, pin.buildModelFromUrdf(str(path)), pin)


def _check_against_pinocchio(robot, oracle, value, label, states=2, keys=FAMILY):
    """``value(key, state)`` against Pinocchio's, for every key, at ``states`` random states."""
    seed = _seed(label)
    for t, state in enumerate(_states(robot, seed, states)):
        for key in keys:
            x = Q.QUANTITIES[key]
            assert_close(value(key, state), x.pinocchio(oracle, state), x.function, f"{label} seed={seed} state#{t}")


# -------------------------------------------------------------------- the numeric reference

@pytest.mark.pinocchio
@pytest.mark.parametrize("name", ["panda", "solo12", "gripper", "tree7", "biped3"])
def test_numeric_reference_matches_pinocchio(pin, tmp_path, name):
    """Both coordinate choices of every sweep (the family runs in body frames in both)."""
    if name == "panda":
        path = erd_path("panda_description/urdf/panda.urdf")
        robot = symgen.load_urdf(path)
        oracle = PinOracle(robot, pin.buildModelFromUrdf(str(path)), pin)
    elif name == "solo12":
        path = erd_path("solo_description/robots/solo12.urdf")
        robot = symgen.load_urdf(path, floating_base=True)
        oracle = PinOracle(robot, pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer()), pin)
    elif name == "gripper":
        robot, oracle = _gripper(tmp_path, pin)
    else:
        robot = robots.make("tree", 7, 11) if name == "tree7" else robots.make("biped", 3, 12)
        oracle = PinOracle(robot, pin_model_from_robot(robot), pin)
    for frame in Q.FRAMES:
        _check_against_pinocchio(robot, oracle, lambda k, s: Q.evaluate(robot, k, s, Q.SweepOptions(frame=frame)),
                                 f"{name} {frame}")


# ------------------------------------------------------------------------ generated packages

@pytest.fixture(scope="module")
def packages(tmp_path_factory, pin):
    """{name: (robot, oracle, package)}: arm4 (with the functions the identities use), the mimic
    gripper, a random tree and a random biped (free-flyer), the family's functions each."""
    tmp = tmp_path_factory.mktemp("appendix_b")
    out = {}
    arm4 = symgen.load_urdf(ARM4)
    out["arm4"] = (arm4, PinOracle(arm4, pin.buildModelFromUrdf(str(ARM4)), pin),
                   _build(arm4, tmp, FAMILY + ("Y", "qdd", "g", "M", "C")))
    gripper, oracle = _gripper(tmp, pin)
    out["gripper"] = (gripper, oracle, _build(gripper, tmp, FAMILY))
    for name, robot in (("tree6", robots.make("tree", 6, 5)), ("biped2", robots.make("biped", 2, 6))):
        out[name] = (robot, PinOracle(robot, pin_model_from_robot(robot), pin), _build(robot, tmp, FAMILY))
    return out


@pytest.mark.pinocchio
@pytest.mark.parametrize("name", ["arm4", "gripper", "tree6", "biped2"])
@pytest.mark.parametrize("backend", ["numpy", "c"])
def test_generated_code_matches_pinocchio_one_state_and_batch(packages, name, backend):
    robot, oracle, pkg = packages[name]
    module = getattr(pkg, backend)
    _check_against_pinocchio(robot, oracle, lambda k, s: Q.call(module, k, s), f"{name} {backend}")
    seed = _seed(f"{name} {backend} batch")
    states = _states(robot, seed, 5)
    batch = {a: np.array([s[a] for s in states]) for a in states[0]}
    for key in FAMILY:
        x = Q.QUANTITIES[key]
        got = Q.call(module, key, batch)
        assert got.shape == (5,) + Q.call(module, key, states[0]).shape, f"{x.function} batch shape"
        for t, state in enumerate(states):
            assert_close(got[t], x.pinocchio(oracle, state), f"{x.function} (batch)", f"{name} seed={seed} state#{t}")


def test_regressors_times_parameters_are_their_quantities(packages):
    """Y_p theta = p, Y_c theta = C^T v, Y_g theta = g, Y_T theta = T, Y_V theta = V, and
    v^T Y_g theta = v^T g, with the package's ``parameters``; and p = M v, C^T v = C^T v of the
    package's own C (another algorithm: Algorithm 1)."""
    robot, _, pkg = packages["arm4"]
    theta = pkg.parameters
    assert np.allclose(theta, robot_parameters(robot), rtol=0, atol=0)
    seed = _seed("regressors")
    for t, s in enumerate(_states(robot, seed, 3)):
        ctx = f"arm4 seed={seed} state#{t}"
        for reg, qty in REGRESSORS:
            assert_close(Q.call(pkg.c, reg, s) @ theta, Q.call(pkg.c, qty, s), f"{reg} @ parameters", ctx)
        assert_close(Q.call(pkg.c, "Y_Vdot", s) @ theta, s["qd"] @ Q.call(pkg.c, "g", s), "Y_Vdot @ parameters", ctx)
        assert_close(pkg.c.momentum(s["q"], s["qd"]), pkg.c.mass_matrix(s["q"]) @ s["qd"], "p = M v", ctx)
        assert_close(pkg.c.coriolis_transpose_product(s["q"], s["qd"]),
                     pkg.c.coriolis_matrix(s["q"], s["qd"]).T @ s["qd"], "C^T v", ctx)
        assert_close(pkg.c.kinetic_energy(s["q"], s["qd"]), 0.5 * s["qd"] @ Q.call(pkg.c, "p", s), "T = v.p/2", ctx)


def test_adaptation_term_is_the_regressor_transposed_times_s(packages):
    """adaptation_term(q, v, v_r, a_r) == regressor(q, v, v_r, a_r)^T (v - v_r), the regressor
    formed by the package's own ``regressor`` (Algorithm 3's blocks, walked up the tree)."""
    for name in ("arm4",):
        robot, _, pkg = packages[name]
        seed = _seed(f"adaptation {name}")
        for t, s in enumerate(_states(robot, seed, 3)):
            Y = pkg.c.regressor(s["q"], s["qd"], s["qd_r"], s["qdd_r"])
            assert_close(pkg.c.adaptation_term(s["q"], s["qd"], s["qd_r"], s["qdd_r"]), Y.T @ (s["qd"] - s["qd_r"]),
                         "adaptation_term", f"{name} seed={seed} state#{t}")
        s = _states(robot, seed, 1)[0]                         # s = 0 at v_r = v: no adaptation
        assert np.all(pkg.c.adaptation_term(s["q"], s["qd"], s["qd"], s["qdd_r"]) == 0)


def test_momentum_equation_along_a_simulated_motion(packages):
    """p-dot = tau + C^T v - g (the momentum observer's equation) along an RK4 motion of the
    generated forward dynamics under a constant torque: p-dot by five-point differences of the
    generated momentum (h = 0.5 ms, 20 ms: arm4 spins up fast; the error, RK4's and the
    difference's, falls as h^4, 2e-9 measured), to 1e-7 of the right-hand side's size, while C^T v
    alone is far larger than that (a wrong sign or a missing term would show)."""
    robot, _, pkg = packages["arm4"]
    c = pkg.c
    seed = _seed("momentum equation")
    rng = np.random.default_rng(seed)
    q, v, tau = rng.uniform(-1, 1, 4), rng.uniform(-2, 2, 4), rng.uniform(-5, 5, 4)
    h = 5e-4

    def f(x):
        return np.r_[x[4:], c.forward_dynamics(x[:4], x[4:], tau)]

    xs = [np.r_[q, v]]
    for _ in range(40):
        x = xs[-1]
        k1 = f(x)
        k2 = f(x + h / 2 * k1)
        k3 = f(x + h / 2 * k2)
        k4 = f(x + h * k3)
        xs.append(x + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4))
    p = [c.momentum(x[:4], x[4:]) for x in xs]
    for k in range(2, len(xs) - 2, 6):
        qk, vk = xs[k][:4], xs[k][4:]
        CTv = c.coriolis_transpose_product(qk, vk)
        rhs = tau + CTv - c.gravity(qk)
        scale = float(np.max(np.abs(rhs)))
        assert np.max(np.abs(CTv)) > 1e-3 * scale, "C^T v too small to be checked here"
        p_dot = (p[k - 2] - 8 * p[k - 1] + 8 * p[k + 1] - p[k + 2]) / (12 * h)      # O(h^4)
        assert_close(p_dot, rhs, "p-dot = tau + C^T v - g", f"arm4 seed={seed} step {k}", rtol=1e-7)


def test_the_c_api_from_a_c_program(packages, tmp_path):
    """The header's functions called from C (one state and a batch of two), printed with %.17g,
    against the binding: the scalar and (10 bodies,) outputs have the layout the header says."""
    robot, _, pkg = packages["arm4"]
    folder = Path(pkg.__file__).parent
    main = tmp_path / "main.c"
    main.write_text("""#include <stdio.h>
#include "arm4.h"
int main(void) {
    double q[8] = {0.1, -0.2, 0.3, 0.4, 0.5, 0.6, -0.7, 0.8}, v[8] = {1, 2, -1, 0.5, -1, 0.25, 2, 1};
    double T[2], V, p[4], Yt[40], Yv[40];
    arm4_kinetic_energy_batch(2, q, v, T);
    arm4_potential_energy(q, &V);
    arm4_momentum(q, v, p);
    arm4_kinetic_energy_regressor(q, v, Yt);
    arm4_potential_energy_regressor(q, Yv);
    printf("%.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g\\n", T[0], T[1], V, p[0], p[3], Yt[0], Yt[39],
           Yv[0], Yv[3]);
    return 0;
}
""")
    exe = tmp_path / "main"
    subprocess.run(["cc", "-O0", "-std=c99", "-I", str(folder), str(main), str(folder / "arm4.c"), "-o", str(exe), "-lm"],
                   check=True, capture_output=True, timeout=120)
    got = np.array([float(w) for w in subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.split()])
    q = np.array([[0.1, -0.2, 0.3, 0.4], [0.5, 0.6, -0.7, 0.8]])
    v = np.array([[1, 2, -1, 0.5], [-1, 0.25, 2, 1]])
    T = pkg.c.kinetic_energy(q, v)
    p, Yt, Yv = pkg.c.momentum(q[0], v[0]), pkg.c.kinetic_energy_regressor(q[0], v[0]), pkg.c.potential_energy_regressor(q[0])
    expected = [T[0], T[1], pkg.c.potential_energy(q[0]), p[0], p[3], Yt[0], Yt[39], Yv[0], Yv[3]]
    assert_close(got, np.array(expected), "the C API", "arm4")


@pytest.mark.pinocchio
def test_a_parametric_build_takes_params(pin, tmp_path):
    """--parametric: p, C^T v, T and V take params (Pinocchio with those parameters); the
    regressors do not, and times params give the quantities."""
    robot = symgen.load_urdf(ARM4)
    keys = ("p", "CTv", "T", "V", "Y_T", "Y_V")
    pkg = _build(robot, tmp_path, keys, parametric=True)
    oracle = PinOracle(robot, pin.buildModelFromUrdf(str(ARM4)), pin)
    opts = Q.SweepOptions(parametric=True)
    seed = _seed("parametric")
    rng = np.random.default_rng(seed)
    for t in range(2):
        s = Q.random_state(rng, robot.nq, robot.nv, parameters=robot_parameters(robot))
        oracle.set_parameters(s["params"])
        ctx = f"arm4 --parametric seed={seed} state#{t}"
        for key in keys:
            x = Q.QUANTITIES[key]
            assert x.arguments_for(opts)[-1:] == (("params",) if key in ("p", "CTv", "T", "V") else (x.arguments[-1],))
            assert_close(Q.call(pkg.c, key, s, opts), x.pinocchio(oracle, s), f"{x.function} (C)", ctx)
        assert_close(Q.call(pkg.c, "Y_T", s, opts) @ s["params"], Q.call(pkg.c, "T", s, opts), "Y_T @ params", ctx)


@pytest.mark.pinocchio
def test_symgen_verify_checks_the_family(packages):
    """``symgen verify`` reaches the family through the registry: each function against the
    reference and Pinocchio, and the identities of ``verify.IDENTITIES`` (regressor @ parameters,
    p = M v, C^T v, Y^T s)."""
    from symgen.verify import verify_package

    _, _, pkg = packages["arm4"]
    report, ok = verify_package(Path(pkg.__file__).parent, trials=2, urdf=ARM4)
    assert ok, report
    for line in ("c: p = M qd", "c: C^T qd = C(q, qd)^T qd", "c: adaptation_term = Y^T (qd - qd_r)",
                 "c: Y_c @ parameters = C^T qd", "c: Y_V @ parameters = V", "c vs Pinocchio: coriolis_transpose_regressor",
                 "c vs Pinocchio: adaptation_term", "c vs Pinocchio: potential_energy"):
        assert line in report, f"{line!r} missing from the report"


@pytest.mark.parametrize("name", ["serial8", "biped3", "tree7"])
def test_ground_variants_of_algorithm4_equal_the_body_frame_walk(name):
    """Y_p, Y_c, Y_g with lines 15-25 in ground coordinates (what a build prints on deep chains,
    where it costs less: serial 20, Y_p 24,192 operations against 63,123) equal the body-frame
    walk that the tests above check against Pinocchio."""
    from symgen.algorithms import algorithm4
    from symgen.backend import NUMERIC

    kind, n = {"serial8": ("serial", 8), "biped3": ("biped", 3), "tree7": ("tree", 7)}[name]
    robot = robots.make(kind, n, 21)
    seed = _seed(f"ground {name}")
    for t, s in enumerate(_states(robot, seed, 2)):
        ctx = f"{name} seed={seed} state#{t}"
        for f in ("momentum_regressor", "coriolis_transpose_regressor"):
            assert_close(getattr(algorithm4, f + "_ground")(robot, s["q"], s["qd"], NUMERIC),
                         getattr(algorithm4, f)(robot, s["q"], s["qd"], NUMERIC), f + "_ground", ctx)
        assert_close(algorithm4.gravity_regressor_ground(robot, s["q"], NUMERIC),
                     algorithm4.gravity_regressor(robot, s["q"], NUMERIC), "gravity_regressor_ground", ctx)


@pytest.mark.pinocchio
def test_gravity_option_reaches_the_gravity_terms(pin):
    """--gravity (here the Moon's, slanted) reaches V, Y_V, Y_g, v^T Y_g and Y^T s: the reference
    against Pinocchio with that gravity, on a fixed tree and a free-flyer biped (whose gravity
    terms turn it into the base frame, while V reads it in the world)."""
    from test_gravity_option import MOON

    keys = ("V", "Y_V", "Y_g", "Y_Vdot", "Yts")
    for robot in (robots.make("tree", 5, 8), robots.make("biped", 2, 9)):
        oracle = PinOracle(robot, pin_model_from_robot(robot), pin, gravity=MOON)
        _check_against_pinocchio(robot, oracle, lambda k, s: Q.evaluate(robot, k, s, Q.SweepOptions(gravity=MOON)),
                                 f"{robot.name} Moon", keys=keys)
        s = _states(robot, 0, 1)[0]                             # and the option did something
        assert not np.isclose(Q.evaluate(robot, "V", s), Q.evaluate(robot, "V", s, Q.SweepOptions(gravity=MOON)))


def test_adaptation_term_momentum_and_energy_are_O_N():
    """Algorithm 3's line 9 and eq. (38) never form Y, M or C: doubling a chain (6 -> 12 bodies)
    about doubles the operations of adaptation_term, momentum, coriolis_transpose_product and
    kinetic_energy (2.1-2.3x measured), where the regressor Y, O(N^2) entries, nearly quadruples
    (3.8x)."""
    from symgen.codegen import program as P
    from symgen.codegen.symbolic import program_for

    def ratio(key):
        a, b = (P.cost(program_for(robots.make("serial", n, 2), key, Q.SweepOptions(frame="body"))) for n in (6, 12))
        return b / a

    for key in ("Yts", "p", "CTv", "T"):
        assert ratio(key) < 2.5, (key, ratio(key))
    assert ratio("Y") > 3.3


@pytest.mark.slow
@pytest.mark.pinocchio
@pytest.mark.parametrize("name", ["panda", "solo12"])
def test_generated_code_on_real_robots(pin, tmp_path, name):
    """The family generated for panda and solo12 (free-flyer), NumPy and C, one state and a
    batch, against Pinocchio (slow: two builds of about 10 s)."""
    if name == "panda":
        path = erd_path("panda_description/urdf/panda.urdf")
        robot, model = symgen.load_urdf(path), pin.buildModelFromUrdf(str(path))
    else:
        path = erd_path("solo_description/robots/solo12.urdf")
        robot = symgen.load_urdf(path, floating_base=True)
        model = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
    oracle, pkg = PinOracle(robot, model, pin), _build(robot, tmp_path, FAMILY)
    for backend in ("numpy", "c"):
        module = getattr(pkg, backend)
        _check_against_pinocchio(robot, oracle, lambda k, s: Q.call(module, k, s), f"{name} {backend}")
        seed = _seed(f"{name} {backend} batch")
        states = _states(robot, seed, 3)
        batch = {a: np.array([s[a] for s in states]) for a in states[0]}
        for key in FAMILY:
            x = Q.QUANTITIES[key]
            got = Q.call(module, key, batch)
            for t, state in enumerate(states):
                assert_close(got[t], x.pinocchio(oracle, state), f"{x.function} (batch)", f"{name} seed={seed} state#{t}")
