"""The operational-space family (issue #39, item 3): operational_space_inertia (Lambda),
dynamically_consistent_inverse (Jbar), operational_space_bias (mu + p) and frame_force_from_torque
(Jbar^T tau), generated (NumPy and C, one state and a batch) and as the numeric reference, against
Pinocchio's route (computeMinverse, getFrameJacobian(LOCAL_WORLD_ALIGNED),
getFrameClassicalAcceleration, nonLinearEffects: symgen/oracle_operational_space.py) on panda (its
flange and a tool point), solo12 on a free-flyer (its soles as points) and a chain with general
axes; the identities J Jbar = 1 - eps Lambda, Jbar^T J^T F = (1 - eps Lambda) F, mu + p at rest =
Jbar^T g, Lambda symmetric positive definite; and the singular-configuration policy of the damping
(every output finite at a stretched arm, Lambda = 1/eps along the lost direction, a structurally
singular task refused without damping). Every comparison names its seed.
"""
from __future__ import annotations

import json
import zlib

import numpy as np
import pytest
from click.testing import CliRunner

import symgen
from support import assert_close, erd_path, pin_model_from_robot, task_inertia
from symgen import quantities as Q
from symgen import robots
from symgen.algorithms.operational_space import DAMPING
from symgen.cli import main
from symgen.codegen.build import BuildOptions, build, import_package
from symgen.errors import OptionError
from symgen.pinocchio_oracle import PinOracle

KEYS = Q.operational_space.KEYS
#: built beside them for the identities
EXTRA = ("J", "g")
ARM4 = symgen.__path__[0] + "/examples/arm4.urdf"
SOLES = tuple(f"{leg}_SOLE={leg}_FOOT@0,0,-0.016" for leg in ("FL", "FR", "HL", "HR"))


def _seed(label):
    return zlib.crc32(label.encode())


def _states(robot, label, count=3):
    rng = np.random.default_rng(_seed(label))
    return [Q.random_state(rng, robot.nq, robot.nv) for _ in range(count)]


def _package(robot, tmp_path_factory, name, frames, keys=KEYS + EXTRA, **options):
    opts = BuildOptions(quantities=keys, frames=frames, copt="-O0", **options)
    pkg = import_package(build(robot, tmp_path_factory.mktemp(name), name=name, opts=opts).path)
    pkg.test_frames = frames
    return pkg


@pytest.fixture(scope="module")
def cases(pin, tmp_path_factory):
    """{label: (robot, oracle, package)}: panda (the flange panda_link8, a 6-row task, and a tool
    point, 3 rows), solo12 on a free-flyer (its four soles as points) and a 7-joint chain with
    general axes (its last link and a point on its third)."""
    out = {}
    panda_path = str(erd_path("panda_description/urdf/panda.urdf"))
    panda = symgen.load_urdf(panda_path)
    frames = ("panda_link8", "tcp=panda_hand@0,0,0.1034")
    out["panda"] = (panda, PinOracle(panda, pin.buildModelFromUrdf(panda_path), pin, frames=frames),
                    _package(panda, tmp_path_factory, "pandaos", frames))
    solo_path = str(erd_path("solo_description/robots/solo12.urdf"))
    solo = symgen.load_urdf(solo_path, floating_base=True)
    out["solo12"] = (solo, PinOracle(solo, pin.buildModelFromUrdf(solo_path, pin.JointModelFreeFlyer()), pin,
                                     frames=SOLES),
                     _package(solo, tmp_path_factory, "soloos", SOLES))
    chain = robots.make("serial", 7, 4)
    frames = (*chain.leaf_links, f"p={chain.link_names[2]}@0.1,-0.2,0.05")
    out["chain"] = (chain, PinOracle(chain, pin_model_from_robot(chain), pin, frames=frames),
                    _package(chain, tmp_path_factory, "chainos", frames))
    return out


def _tolerance(x, oracle, state):
    """1e-9, or 100 eps cond(M) cond(Lambda) where larger (Q.tolerance)."""
    return Q.tolerance(x, oracle.mass_matrix(state["q"]), 1e-9, task_inertia(oracle, state))


@pytest.mark.pinocchio
@pytest.mark.parametrize("label", ["panda", "solo12", "chain"])
def test_every_function_matches_pinocchios_route_numpy_and_c_one_state_and_batch(cases, label):
    robot, oracle, pkg = cases[label]
    states = _states(robot, label)
    for x in (Q.QUANTITIES[k] for k in KEYS):
        expected = [x.pinocchio(oracle, s) for s in states]
        tols = [_tolerance(x, oracle, s) for s in states]
        for t, s in enumerate(states):
            ctx = f"{label} seed={_seed(label)} state#{t}"
            for frame in Q.FRAMES:
                reference = Q.evaluate(robot, x.key, s, Q.SweepOptions(frame=frame, frames=pkg.test_frames))
                assert_close(reference, expected[t], f"{x.function} (reference, {frame})", ctx, rtol=tols[t])
            for backend in ("numpy", "c"):
                got = Q.call(getattr(pkg, backend), x.key, s)
                assert np.shape(got) == np.shape(expected[t]), (x.function, backend)
                assert_close(got, expected[t], f"{x.function} ({backend})", ctx, rtol=tols[t])
        batch = {a: np.array([s[a] for s in states]) for a in x.arguments}
        for backend in ("numpy", "c"):
            got = Q.call(getattr(pkg, backend), x.key, batch)
            assert_close(got, np.array(expected), f"{x.function} ({backend} batch)", f"{label} seed={_seed(label)}",
                         rtol=max(tols))


def _task(pkg, k):
    """The rows of frame k's task: 3 for a point, 6 otherwise."""
    return 3 if "=" in pkg.test_frames[k] else 6


@pytest.mark.parametrize("label", ["panda", "solo12", "chain"])
def test_jbar_is_a_generalized_inverse_and_lambda_is_symmetric_positive_definite(cases, label):
    """J Jbar = 1 - eps Lambda (exactly, for the damped Lambda: J Jbar = A (A + eps)^-1), so that
    Jbar^T J^T F = (1 - eps Lambda) F: frame_force_from_torque inverts the Jacobian-transpose map;
    Lambda exactly symmetric with positive eigenvalues; the padding of a point's block zero."""
    robot, _, pkg = cases[label]
    c = pkg.c
    rng = np.random.default_rng(_seed(label) + 1)
    for t, s in enumerate(_states(robot, label + "/identities")):
        ctx = f"{label} seed={_seed(label + '/identities')} state#{t}"
        J, Lam, Jbar = c.frame_jacobian(s["q"]), c.operational_space_inertia(s["q"]), c.dynamically_consistent_inverse(s["q"])
        for k in range(len(pkg.frames)):
            d = _task(pkg, k)
            L = Lam[k, :d, :d]
            assert np.array_equal(L, L.T), ctx
            assert np.linalg.eigvalsh(L).min() > 0, ctx
            assert not Lam[k, d:].any() and not Lam[k, :, d:].any() and not Jbar[k, :, d:].any(), ctx
            assert_close(J[k, :d] @ Jbar[k, :, :d] + DAMPING * L, np.eye(d), f"J Jbar + eps Lambda, frame {k}", ctx,
                         rtol=1e-9, summary=None)
        F = rng.uniform(-10, 10, (len(pkg.frames), 6))
        for k in range(len(pkg.frames)):
            d = _task(pkg, k)
            got = c.frame_force_from_torque(s["q"], J[k, :d].T @ F[k, :d])[k, :d]
            assert_close(got, F[k, :d] - DAMPING * Lam[k, :d, :d] @ F[k, :d], f"Jbar^T J^T F, frame {k}", ctx,
                         rtol=1e-9, summary=None)


@pytest.mark.parametrize("label", ["panda", "solo12"])
def test_the_bias_at_rest_is_the_force_of_gravity_at_the_frame(cases, label):
    """mu + p at qd = 0 is p = Lambda J M^-1 g = Jbar^T g (no velocity, no mu, no drift)."""
    robot, _, pkg = cases[label]
    for t, s in enumerate(_states(robot, label + "/rest", 2)):
        got = pkg.c.operational_space_bias(s["q"], np.zeros(robot.nv))
        assert_close(got, pkg.c.frame_force_from_torque(s["q"], pkg.c.gravity(s["q"])), "mu + p at rest",
                     f"{label} seed={_seed(label + '/rest')} state#{t}", rtol=1e-9, summary=None)


@pytest.fixture(scope="module")
def planar(tmp_path_factory):
    """A planar chain of two joints (axes z) with a point at its tip: a 3-row task whose z row no
    joint moves (structurally singular), and singular in the plane too when the arm is stretched."""
    robot = robots.make("planar", 2, 0)
    frames = ("tip=link2@0.3,0,0",)
    return robot, _package(robot, tmp_path_factory, "planaros", frames, KEYS)


def test_at_a_stretched_arm_every_output_is_finite_and_lambda_is_one_over_eps_where_motion_is_lost(planar):
    """The policy of the docs: Lambda = (J M^-1 J^T + eps 1)^-1. With the arm stretched (q2 = 0)
    the tip cannot move along the arm nor out of the plane: Lambda is 1/eps along both (to rounding
    of J M^-1 J^T's entries there, about 1e-16 of its others), finite and symmetric positive
    definite; Jbar, mu + p and Jbar^T tau are finite."""
    robot, pkg = planar
    seed = _seed("planar/stretched")
    rng = np.random.default_rng(seed)
    for t in range(3):
        q1 = rng.uniform(0, 2 * np.pi)
        q, qd, tau = np.array([q1, 0.0]), rng.uniform(-3, 3, 2), rng.uniform(-5, 5, 2)
        ctx = f"seed={seed} state#{t}"
        for c in (pkg.numpy, pkg.c):
            Lam = c.operational_space_inertia(q)[0, :3, :3]
            outputs = (Lam, c.dynamically_consistent_inverse(q), c.operational_space_bias(q, qd),
                       c.frame_force_from_torque(q, tau))
            assert all(np.isfinite(x).all() for x in outputs), ctx
            assert np.array_equal(Lam, Lam.T) and np.linalg.eigvalsh(Lam).min() > 0, ctx
            along = np.array([np.cos(q1), np.sin(q1), 0.0])
            assert abs(along @ Lam @ along * DAMPING - 1) < 1e-6, (ctx, along @ Lam @ along)
            assert Lam[2, 2] == pytest.approx(1 / DAMPING, rel=1e-12), ctx
            # across the arm, in the plane: the tip's ordinary inertia, nothing of 1/eps
            across = np.array([-np.sin(q1), np.cos(q1), 0.0])
            assert 0 < across @ Lam @ across < 1e3, (ctx, across @ Lam @ across)


def test_without_damping_a_task_row_no_joint_moves_is_refused_and_a_damping_is_settable(planar):
    """--opspace-damping 0 refuses the planar tip's z row (J M^-1 J^T singular at every
    configuration) naming the frame; a damping of 1e-3 gives Lambda_zz = 1000 there."""
    robot, _ = planar
    q, frames = np.array([0.3, 0.7]), ("tip=link2@0.3,0,0",)
    with pytest.raises(OptionError, match="tip.*damping > 0"):
        Q.evaluate(robot, "Lambda", {"q": q}, Q.SweepOptions(frames=frames, opspace_damping=0.0))
    Lam = Q.evaluate(robot, "Lambda", {"q": q}, Q.SweepOptions(frames=frames, opspace_damping=1e-3))
    assert Lam[0, 2, 2] == pytest.approx(1e3, rel=1e-12)
    with pytest.raises(OptionError, match="--opspace-damping"):
        Q.check_options(Q.SweepOptions(opspace_damping=-1.0))


@pytest.mark.pinocchio
def test_the_cli_records_the_damping_and_verify_checks_against_it(tmp_path):
    """symgen build --opspace-damping 1e-3 on arm4 (a tool point): the manifest and the header's
    command record it, and symgen verify (reading it from the manifest) passes against Pinocchio's
    route with that damping; without the option the manifest is as before (no entry)."""
    frames = "tip=wrist_link@0.1,-0.05,0.2"
    res = CliRunner().invoke(main, ["build", ARM4, "--out", str(tmp_path), "--name", "armd", "--quantities",
                                    "M,Lambda,mu_p", "--frames", frames, "--opspace-damping", "0.001", "--no-cache",
                                    "--copt", "-O0", "--quiet", "--jobs", "1"])
    assert res.exit_code == 0, res.output
    manifest = json.loads((tmp_path / "armd" / "manifest.json").read_text())
    assert manifest["options"]["opspace_damping"] == 1e-3
    assert "--opspace-damping 0.001" in (tmp_path / "armd" / "armd.h").read_text()
    res = CliRunner().invoke(main, ["verify", str(tmp_path / "armd"), "--urdf", ARM4, "--trials", "3"])
    assert res.exit_code == 0 and "Pinocchio: operational_space_inertia" in res.output, res.output
    pkg = import_package(tmp_path / "armd")
    robot = symgen.load_urdf(ARM4)
    q = np.array([0.1, 0.2, 0.3, 0.4])
    undamped = Q.evaluate(robot, "Lambda", {"q": q}, Q.SweepOptions(frames=(frames,), opspace_damping=0.0))[0, :3, :3]
    expected = np.linalg.inv(np.linalg.inv(undamped) + 1e-3 * np.eye(3))
    assert_close(pkg.c.operational_space_inertia(q)[0, :3, :3], expected, "Lambda with eps 1e-3", "arm4 q fixed",
                 rtol=1e-9, summary=None)
