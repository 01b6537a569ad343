"""Free-floating robots: Pinocchio's free-flyer (``--floating-base``), checked against Pinocchio.

q = [x, y, z, qx, qy, qz, qw, joints...] (nq = nv + 1), v = [base linear, base angular velocity in
the base frame, joint speeds...]: Pinocchio's ``JointModelFreeFlyer``, so Pinocchio's own model of
the original URDF (``buildModelFromUrdf(path, JointModelFreeFlyer())``) is the oracle, with no
re-indexing of q or v. Every registered quantity (both coordinate choices of its sweep) on real
quadrupeds and a humanoid; the generated NumPy and C on one of them; what the generated code reads
(M, C, Gamma never read the base pose; gravity terms read the quaternion only); inputs that are
not a unit quaternion (used as the rotation of quat/|quat|); large base velocities and
orientations far from the identity. The identities (C v = RNEA(q, v, 0) - g, Mdot = C + C^T,
C = Gamma v, the torsion of Gamma) run on floating robots in tests/test_identities.py. States come
from ``numpy.random.default_rng(seed)``; every failure names the seed.
"""
from __future__ import annotations

import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest
import sympy as sp

import symgen
from support import PinOracle, assert_agree, assert_close, compare_with_pinocchio, erd_path, task_inertia
from symgen import quantities as Q
from symgen.codegen.build import BuildOptions, build, import_package
from symgen.codegen.symbolic import program_for

ROOT = Path(__file__).resolve().parents[1]
#: the legged robots of the issue: quadrupeds and a humanoid, loaded with a free-flyer
LEGGED = ["solo_description/robots/solo12.urdf", "go1_description/urdf/go1.urdf",
          "anymal_b_simple_description/robots/anymal.urdf", "a1_description/urdf/a1.urdf",
          "b1_description/urdf/b1.urdf", "talos_data/robots/talos_full_v2.urdf"]
#: the quantities that do not depend on where the base is or how it is turned
POSE_FREE = ("M", "Mdot", "C", "Gamma", "Minv")
#: the package built once for the generated-code tests: every registered function
BUILT = tuple(k for k in Q.QUANTITIES if k not in Q.loops.LOOP_KEYS)      # (those are for loops only)


def _pin_free_flyer(pin, path):
    return pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())


@pytest.mark.pinocchio
@pytest.mark.parametrize("relative", LEGGED, ids=lambda r: r.split("/")[-1][:-5])
def test_every_quantity_matches_pinocchio_free_flyer(pin, relative):
    """Pinocchio's own parse of the URDF with its free-flyer: crba, computeCoriolisMatrix (and
    Gamma through C(q, e_k)), rnea, gravity, the regressor, aba, computeMinverse, both
    derivatives (tangent space), frame placements and Jacobians, to 1e-9 (1e-8 for the
    derivatives of the humanoid's 38 velocities)."""
    path = erd_path(relative)
    robot = symgen.load_urdf(path, floating_base=True)
    assert (robot.nq, robot.nv) == (robot.n + 1, robot.n)
    big = robot.n > 30
    compare_with_pinocchio(robot, _pin_free_flyer(pin, path), path.stem, states=1 if big else 2)


def _states(robot, seed, count):
    rng = np.random.default_rng(seed)
    return [Q.random_state(rng, robot.nq, robot.nv) for _ in range(count)]


@pytest.fixture(scope="module", params=["solo", pytest.param("solo12", marks=pytest.mark.slow)])
def solo(tmp_path_factory, request):
    """solo (8 joints) with a free-flyer, every function (NumPy and C); solo12 (80 s to build
    on 2 cores) with -m slow. (robot, package, its URDF, its name)."""
    path = erd_path(f"solo_description/robots/{request.param}.urdf")
    robot = symgen.load_urdf(path, floating_base=True)
    out = tmp_path_factory.mktemp("floating")
    # -O0: the values are the same at every level, and gcc -O1 of every function took most of the fixture
    result = build(robot, out, name=f"{request.param}ff", opts=BuildOptions(quantities=BUILT, copt="-O0"))
    return robot, import_package(result.path), path, request.param


@pytest.mark.pinocchio
def test_generated_numpy_and_c_match_the_reference_and_pinocchio(solo, pin):
    robot, pkg, path, name = solo
    assert (pkg.nq, pkg.nv, pkg.joint_names[0], pkg.link_names[0]) == (robot.nq, robot.nv, "root_joint", "base_link")
    oracle = PinOracle(robot, _pin_free_flyer(pin, path))
    seed = 1207
    for t, state in enumerate(_states(robot, seed, 3)):
        for key in BUILT:
            x = Q.QUANTITIES[key]
            expected = Q.evaluate(robot, key, state)
            tol = Q.tolerance(x, Q.evaluate(robot, "M", state), Lambda=Q.evaluate(robot, "Lambda", state) if x.task else None)
            for backend in ("numpy", "c"):
                got = Q.call(getattr(pkg, backend), key, state)
                assert_agree(got, expected, f"{x.function} ({backend}), seed {seed} state {t}", tol)
        for x in Q.QUANTITIES.values():                    # and the C straight against Pinocchio
            if x.pinocchio is None or (x.key == "Gamma" and t > 0):
                continue
            at = x.oracle_state(state) if x.oracle_state else state
            rtol = Q.tolerance(x, oracle.mass_matrix(at["q"]), Lambda=task_inertia(oracle, at) if x.task else None)
            assert_close(Q.call(pkg.c, x.key, at), x.pinocchio(oracle, at), f"{x.function} (C)",
                         f"{name} seed={seed} state#{t}", rtol=rtol)


def test_pose_free_quantities_do_not_read_the_base_pose_and_gravity_reads_only_the_quaternion():
    """M, Mdot, C, Gamma, M^-1 read no q entry of the base (position or quaternion): in body-twist
    speeds they do not depend on it. Gravity and inverse dynamics read the quaternion (gravity
    is turned into the base frame), never the base position."""
    robot = symgen.robots.make("quadruped", 4, 3)
    base_pose = {sp.Symbol(f"q{k}") for k in range(7)}
    position = {sp.Symbol(f"q{k}") for k in range(3)}
    for key in POSE_FREE + ("g", "tau", "dtau"):
        fn = program_for(robot, key)
        read = set().union(*(a.expr.free_symbols for a in fn.assignments),
                           *(e.free_symbols for out in fn.outputs for _, e in out.nonzero()))
        forbidden = base_pose if key in POSE_FREE else position
        assert not read & forbidden, f"{key} reads {sorted(map(str, read & forbidden))}"
        if key not in POSE_FREE:
            assert read & (base_pose - position), f"{key} should read the quaternion (gravity)"


@pytest.mark.parametrize("scale", [2.5, 0.3, -1.0])
def test_a_quaternion_off_the_unit_sphere_is_used_as_its_direction(solo, scale):
    """Documented: q[3:7] is used as the rotation of quat/|quat| (s = 2/|quat|^2 in the rotation
    matrix), so a drifted or sign-flipped quaternion gives the results of the unit one, in the
    reference and in the generated code alike."""
    robot, pkg, _, _ = solo
    seed = 31
    for state in _states(robot, seed, 2):
        scaled = {**state, "q": state["q"].copy()}
        scaled["q"][3:7] *= scale
        for key in BUILT:
            expected = Q.evaluate(robot, key, state)
            what = f"{key} at {scale} x the unit quaternion, seed {seed}"
            assert_agree(Q.evaluate(robot, key, scaled), expected, what + " (reference)")
            assert_agree(Q.call(pkg.c, key, scaled), expected, what + " (C)")


@pytest.mark.pinocchio
def test_large_base_velocities_and_half_turns_match_pinocchio(pin):
    """Base speeds of 100 m/s and rad/s and orientations at half turns about each axis (the
    quaternion's real part 0), for the quantities with velocity terms."""
    path = erd_path("solo_description/robots/solo12.urdf")
    robot = symgen.load_urdf(path, floating_base=True)
    oracle = PinOracle(robot, _pin_free_flyer(pin, path))
    seed = zlib.crc32(b"half turns")
    rng = np.random.default_rng(seed)
    for t, quat in enumerate([(1, 0, 0, 0), (0, 1, 0, 0), (0, 0, 1, 0), (0.5, -0.5, 0.5, -0.5)]):
        state = Q.random_state(rng, robot.nq, robot.nv)
        state["q"][3:7] = quat
        for name in ("qd", "qd_r"):
            state[name][:6] = rng.uniform(-100.0, 100.0, 6)
        ctx = f"solo12 seed={seed} state#{t} quat={quat}"
        for key in ("C", "tau", "tau_sl", "Y", "qdd", "dtau", "dqdd", "J"):
            x = Q.QUANTITIES[key]
            at = x.oracle_state(state) if x.oracle_state else state
            rtol = Q.tolerance(x, oracle.mass_matrix(at["q"]), 1e-9)
            assert_close(Q.evaluate(robot, key, at), x.pinocchio(oracle, at), x.function, ctx, rtol=rtol)


def test_christoffel_symbols_carry_the_torsion_of_the_body_twist():
    """Gamma[:, j, k] - Gamma[:, k, j] = -M (e_j x e_k) on the base block: e.g. angular x, y of
    the base (v indices 3, 4) give -M[:, 5] (angular z), linear x with angular y (0, 4) give
    -M[:, 2] (linear z), two linear speeds nothing; and zero where j or k is a joint."""
    robot = symgen.robots.make("biped", 4, 7)
    state = _states(robot, 7, 1)[0]
    G, M = Q.evaluate(robot, "Gamma", state), Q.evaluate(robot, "M", state)
    T = G - G.transpose(0, 2, 1)
    assert_agree(T[:, 3, 4], -M[:, 5], "angular x, y (seed 7)")
    assert_agree(T[:, 0, 4], -M[:, 2], "linear x, angular y (seed 7)")
    assert_agree(T[:, 0, 1], 0 * M[:, 0], "linear x, y (seed 7)")
    assert not np.any(T[:, 6:, :]) and not np.any(T[:, :, 6:]), "torsion outside the base block (seed 7)"


def test_cli_builds_verifies_and_describes_a_floating_robot(tmp_path):
    """`symgen info/build/verify --floating-base` on a quadruped: the free-flyer in the summary,
    nq = nv + 1 in the package, verify (Pinocchio's free-flyer on symgen's rewrite and on its own
    parse of the URDF) passes."""
    urdf = erd_path("solo_description/robots/solo12.urdf")
    run = lambda *args: subprocess.run([sys.executable, str(ROOT / "cli.py"), *args], capture_output=True,
                                       text=True, cwd=tmp_path)
    info = run("info", str(urdf), "--floating-base")
    assert info.returncode == 0 and "free-flyer 'root_joint'" in info.stdout and "nq 19, nv 18" in info.stdout
    built = run("build", str(urdf), "--floating-base", "--out", str(tmp_path), "--name", "solo_ff",
                "--quantities", "M,C,g")
    assert built.returncode == 0, built.stderr
    checked = run("verify", str(tmp_path / "solo_ff"), "--urdf", str(urdf), "--trials", "3")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "free-flyer (nq = 19)" in (tmp_path / "solo_ff" / "solo_ff.h").read_text()
    assert '"nq": 19' in (tmp_path / "solo_ff" / "manifest.json").read_text()


def test_verify_runs_every_function_and_identity_on_a_floating_package(tmp_path):
    """`symgen verify` on a free-flyer package with every quantity: every function against
    Pinocchio and the reference, every identity that holds with a free-flyer (M Minv = 1 is nv x
    nv, not nq x nq), and not dtau/dqd = 2 C, which the free-flyer's torsion breaks."""
    urdf = ROOT / "symgen" / "examples" / "arm4.urdf"
    run = lambda *args: subprocess.run([sys.executable, str(ROOT / "cli.py"), *args], capture_output=True,
                                       text=True, cwd=tmp_path)
    built = run("build", str(urdf), "--floating-base", "--out", str(tmp_path), "--name", "arm4_ff", "--copt", "-O0")
    assert built.returncode == 0, built.stderr
    checked = run("verify", str(tmp_path / "arm4_ff"), "--urdf", str(urdf), "--floating-base", "--trials", "2")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    for line in ("c: M Minv = 1", "c: Y @ parameters = Slotine-Li", "c vs Pinocchio: forward_dynamics_derivatives",
                 "numpy vs Pinocchio: regressor", "c vs Pinocchio: frame_jacobian"):
        assert line in checked.stdout, line
    assert "2 C" not in checked.stdout


def test_one_state_of_a_floating_package_takes_the_bindings_fast_path(tmp_path):
    """q (nq = nv + 1 entries) and the speeds (nv) of one state go through the C binding's fast
    path, not the Python general path (its shape check once took every argument for q's size)."""
    robot = symgen.load_urdf(ROOT / "symgen" / "examples" / "arm4.urdf", floating_base=True)
    pkg = import_package(build(robot, tmp_path, opts=BuildOptions(quantities=("C", "tau"), copt="-O0")).path)
    assert pkg.backend == "c"
    ext = pkg.c._ext
    rng = np.random.default_rng(17)
    q = np.concatenate([rng.uniform(-1, 1, 3), [0.0, 0.0, 0.0, 1.0], rng.uniform(-1, 1, robot.nv - 6)])
    qd, qdd = rng.uniform(-1, 1, robot.nv), rng.uniform(-1, 1, robot.nv)
    want = (pkg.coriolis_matrix(q, qd), pkg.inverse_dynamics(q, qd, qdd))

    def general(*args, **kwargs):
        raise AssertionError("the general path was taken")

    # this package's binding only (a build of its own): its general paths now raise
    fast = ext._bind((general, general), ("coriolis_matrix(q, qd)\n--\n\nC", "inverse_dynamics(q, qd, qdd)\n--\n\ntau"))
    np.testing.assert_array_equal(fast[0](q, qd), want[0], err_msg="seed 17")
    np.testing.assert_array_equal(fast[1](q, qd, qdd), want[1], err_msg="seed 17")
    with pytest.raises(AssertionError, match="general path"):
        fast[0](q[:-1], qd)                               # a wrong shape still goes there
    # a batch of 5 (one group of lanes and one state alone) in the C API: q of nq, speeds of nv
    import ctypes
    lib = ctypes.CDLL(str(next(Path(pkg.__file__).parent.glob("_*_ext*.so"))))
    P = ctypes.POINTER(ctypes.c_double)
    Q, QD = np.tile(q, (5, 1)), rng.uniform(-1, 1, (5, robot.nv))
    Q[:, 7:] += rng.uniform(-1, 1, (5, robot.nv - 6))
    got = np.empty((5, robot.nv, robot.nv))
    getattr(lib, f"{Path(pkg.__file__).parent.name}_coriolis_matrix_batch")(
        ctypes.c_size_t(5), Q.ctypes.data_as(P), QD.ctypes.data_as(P), got.ctypes.data_as(P))
    for i in range(5):
        assert_agree(got[i], pkg.numpy.coriolis_matrix(Q[i], QD[i]), f"batch state {i} (seed 17)")
