"""The centroidal family (issue #25, items 1-3): frame velocity, the classical drift J_dot v, the
Jacobian's rate, points fixed in a link (``--frames name=LINK@x,y,z``), the centre of mass and
its Jacobian, A_G, h_G, A_G_dot v and I_G.

Each generated function (NumPy and C, one state and a batch) against Pinocchio 4.1 (its own
functions: centerOfMass, jacobianCenterOfMass, computeCentroidalMap, ccrba,
computeCentroidalMomentumTimeVariation, getFrameVelocity, getFrameClassicalAcceleration,
getFrameJacobianTimeVariation) on a fixed arm, a free-flyer (solo12), a random tree and a
``--mimic`` robot (Pinocchio's model without mimic, projected by the hand-written G of
test_mimic); the rates against central differences along the motion; momentum conservation
along a simulation with the generated forward dynamics. Every comparison names its seed.
"""
from __future__ import annotations

import json
import zlib

import numpy as np
import pytest
from click.testing import CliRunner

import symgen
from support import assert_close, erd_path, pin_model_from_robot
from symgen import quantities as Q
from symgen import robots
from symgen.cli import main
from symgen.codegen.build import BuildOptions, build, import_package
from symgen.errors import OptionError
from symgen.pinocchio_oracle import EmbeddedPinOracle, PinOracle

KEYS = ("com", "Jcom", "Ag", "Ig", "hg", "dhg", "vf", "af", "dJ")
ARM4 = symgen.__path__[0] + "/examples/arm4.urdf"
SOLO = "solo_description/robots/solo12.urdf"
#: solo12's soles: points 1.6 cm below each foot link's origin (the foot's sphere radius)
SOLES = tuple(f"{leg}_SOLE={leg}_FOOT@0,0,-0.016" for leg in ("FL", "FR", "HL", "HR"))


def _seed(label):
    return zlib.crc32(label.encode())


def _states(robot, label, count, scale=1.0):
    rng = np.random.default_rng(_seed(label))
    out = []
    for _ in range(count):
        s = Q.random_state(rng, robot.nq, robot.nv, ("q", "qd"))
        s["qd"] = s["qd"] * scale
        out.append(s)
    return out


def _package(robot, tmp_path_factory, name, frames, keys=KEYS, gravity=None):
    extra = {} if gravity is None else {"gravity": gravity}
    opts = BuildOptions(quantities=keys, frames=frames, copt="-O0", **extra)
    pkg = import_package(build(robot, tmp_path_factory.mktemp(name), name=name, opts=opts).path)
    pkg.test_frames = frames
    return pkg


@pytest.fixture(scope="module")
def cases(pin, tmp_path_factory):
    """{label: (robot, oracle, package)}: arm4 (a point, a point on the fixed root, a joint and a
    leaf link), panda (its leaf links and a tool point), solo12 on a free-flyer (its soles; built
    with gravity 0 and forward dynamics, for the conservation tests), a random tree, a random
    quadruped on a free-flyer (random joint axes) and the --mimic gripper of test_mimic."""
    from test_mimic import G, O, gripper

    out = {}
    arm = symgen.load_urdf(ARM4)
    frames = ("tool_link", "joint2", "tip=wrist_link@0.1,-0.05,0.2", "rest=base_link@0.3,0,0")
    out["arm4"] = (arm, PinOracle(arm, pin.buildModelFromUrdf(ARM4), pin, frames=frames),
                   _package(arm, tmp_path_factory, "arm4c", frames, KEYS + ("oMf", "J")))
    solo_path = str(erd_path(SOLO))
    solo = symgen.load_urdf(solo_path, floating_base=True)
    out["solo12"] = (solo, PinOracle(solo, pin.buildModelFromUrdf(solo_path, pin.JointModelFreeFlyer()), pin,
                                     frames=SOLES),
                     _package(solo, tmp_path_factory, "soloc", SOLES, KEYS + ("J", "qdd"), gravity=(0.0, 0.0, 0.0)))
    panda_path = str(erd_path("panda_description/urdf/panda.urdf"))
    panda = symgen.load_urdf(panda_path)
    frames = (*panda.leaf_links, "tcp=panda_hand@0,0,0.1034")
    out["panda"] = (panda, PinOracle(panda, pin.buildModelFromUrdf(panda_path), pin, frames=frames),
                    _package(panda, tmp_path_factory, "pandac", frames))
    tree = robots.make("tree", 7, 2)
    frames = (*tree.leaf_links, f"p={tree.link_names[2]}@0.3,0.1,-0.2")
    out["tree"] = (tree, PinOracle(tree, pin_model_from_robot(tree), pin, frames=frames),
                   _package(tree, tmp_path_factory, "treec", frames))
    legged = robots.make("quadruped", 8, 5)                  # a free-flyer with random joint axes
    frames = (*legged.leaf_links, f"sole={legged.leaf_links[0]}@0.05,-0.1,0.2")
    out["legged"] = (legged, PinOracle(legged, pin_model_from_robot(legged), pin, frames=frames),
                     _package(legged, tmp_path_factory, "leggedc", frames))
    urdf = tmp_path_factory.mktemp("mimic") / "gripper.urdf"
    urdf.write_text(gripper())
    grip = symgen.load_urdf(urdf, mimic=True)
    frames = ("thumb", "foot", "pad=finger_r@0.01,0.02,0.03")
    out["mimic"] = (grip, EmbeddedPinOracle(grip, pin.buildModelFromUrdf(str(urdf)), pin, frames=frames, G=G, offset=O),
                    _package(grip, tmp_path_factory, "gripc", frames))
    return out


@pytest.mark.pinocchio
@pytest.mark.parametrize("label", ["arm4", "panda", "solo12", "tree", "legged", "mimic"])
def test_every_function_matches_pinocchio_numpy_and_c_one_state_and_batch(cases, label):
    robot, oracle, pkg = cases[label]
    states = _states(robot, label, 3)
    for x in (Q.QUANTITIES[k] for k in KEYS):
        expected = [x.pinocchio(oracle, s) for s in states]
        for t, s in enumerate(states):
            ctx = f"{label} seed={_seed(label)} state#{t}"
            reference = Q.evaluate(robot, x.key, s, Q.SweepOptions(frame="body", frames=pkg.test_frames))
            assert_close(reference, expected[t], f"{x.function} (reference)", ctx)
            for backend in ("numpy", "c"):
                got = Q.call(getattr(pkg, backend), x.key, s)
                assert np.shape(got) == np.shape(expected[t]), (x.function, backend)
                assert_close(got, expected[t], f"{x.function} ({backend})", ctx)
        batch = {a: np.array([s[a] for s in states]) for a in x.arguments}
        for backend in ("numpy", "c"):
            got = Q.call(getattr(pkg, backend), x.key, batch)
            assert_close(got, np.array(expected), f"{x.function} ({backend} batch)", f"{label} seed={_seed(label)}")


def _along(robot, oracle, q, v, t):
    """q(t) = integrate(q, t v): Pinocchio's integrate for a free-flyer (whose q and v layouts are
    symgen's), q + t v otherwise."""
    if not robot.floating_base:
        return q + t * v
    assert np.array_equal(oracle.map.P, np.eye(robot.nv)) and oracle.map.nq_pin == robot.nq
    return oracle.pin.integrate(oracle.model, q, t * v)


@pytest.mark.pinocchio
@pytest.mark.parametrize("label", ["arm4", "solo12", "legged", "mimic"])
def test_rates_are_central_differences_along_the_motion(cases, label):
    """J_dot v = d/dt (J v), J_dot = d/dt J, A_G_dot v = d/dt (A_G v) and the frame velocity's
    linear part d/dt of the frame's origin (the C package's J, A_G and placements), along
    q(t) = integrate(q, t v) at fixed v."""
    robot, oracle, pkg = cases[label]
    c, h = pkg.c, 1e-5
    for t, s in enumerate(_states(robot, f"fd-{label}", 2)):
        q, v = s["q"], s["qd"]
        ctx = f"{label} seed={_seed('fd-' + label)} state#{t}"
        qp, qm = _along(robot, oracle, q, v, h), _along(robot, oracle, q, v, -h)
        J = c.frame_jacobian if hasattr(c, "frame_jacobian") else (lambda q: oracle.frame_jacobian(q))
        dJ = (J(qp) - J(qm)) / (2 * h)
        assert_close(c.frame_jacobian_dot(q, v), dJ, "frame_jacobian_dot vs d/dt J", ctx, rtol=1e-6)
        assert_close(c.frame_acceleration_bias(q, v), dJ @ v, "frame_acceleration_bias vs d/dt (J v)", ctx, rtol=1e-6)
        dAg = (c.centroidal_map(qp) - c.centroidal_map(qm)) / (2 * h)
        assert_close(c.centroidal_bias(q, v), dAg @ v, "centroidal_bias vs d/dt (A_G v)", ctx, rtol=1e-6)
        dcom = (c.center_of_mass(qp) - c.center_of_mass(qm)) / (2 * h)
        assert_close(c.com_jacobian(q) @ v, dcom, "com_jacobian v vs d/dt com", ctx, rtol=1e-6)
        if hasattr(c, "frame_placement"):
            dp = (c.frame_placement(qp)[:, :3, 3] - c.frame_placement(qm)[:, :3, 3]) / (2 * h)
            assert_close(c.frame_velocity(q, v)[:, :3], dp, "frame_velocity vs d/dt origin", ctx, rtol=1e-6)


def _rk4(pkg, robot, oracle, q, v, dt, steps):
    """RK4 of qdd = forward_dynamics(q, v, 0), the configuration moved by integrate (Pinocchio's
    for the free-flyer): the states along the way."""
    f = lambda q, v: pkg.c.forward_dynamics(q, v, np.zeros(robot.nv))
    out = [(q, v)]
    for _ in range(steps):
        k1v, k1a = v, f(q, v)
        q2, v2 = _along(robot, oracle, q, k1v, dt / 2), v + dt / 2 * k1a
        k2v, k2a = v2, f(q2, v2)
        q3, v3 = _along(robot, oracle, q, k2v, dt / 2), v + dt / 2 * k2a
        k3v, k3a = v3, f(q3, v3)
        q4, v4 = _along(robot, oracle, q, k3v, dt), v + dt * k3a
        k4v, k4a = v4, f(q4, v4)
        q = _along(robot, oracle, q, (k1v + 2 * k2v + 2 * k3v + k4v) / 6, dt)
        v = v + dt / 6 * (k1a + 2 * k2a + 2 * k3a + k4a)
        out.append((q, v))
    return out


@pytest.mark.pinocchio
def test_centroidal_momentum_is_conserved_in_free_flight_without_gravity(cases):
    """solo12 built with gravity 0, tau = 0: h_G stays what it was along 40 ms of RK4 on the
    generated forward dynamics, while the joint velocities change (so the check can fail). RK4 with
    the configuration moved by integrate at each stage is second order on the free-flyer's group:
    the drift is below 1e-7 relative at 1 ms steps and shrinks 4x with the step (measured 2.8e-7,
    7.1e-8, 1.8e-8 absolute at 2, 1, 0.5 ms), so it is the integrator's, not h_G's."""
    robot, oracle, pkg = cases["solo12"]
    (s,) = _states(robot, "conservation", 1, scale=0.3)
    drift = []
    for dt, steps in ((1e-3, 40), (5e-4, 80)):
        path = _rk4(pkg, robot, oracle, s["q"], s["qd"], dt, steps)
        h = np.array([pkg.c.centroidal_momentum(q, v) for q, v in path])
        drift.append(np.max(np.abs(h - h[0])) / np.max(np.abs(h[0])))
    moved = np.max(np.abs(path[-1][1] - path[0][1]))
    ctx = f"seed={_seed('conservation')}: drift {drift[0]:.1e} at 1 ms, {drift[1]:.1e} at 0.5 ms"
    assert moved > 1e-2, f"the joints barely moved ({moved:.1e}): nothing was checked ({ctx})"
    assert drift[0] < 1e-7 and drift[1] < drift[0] / 3, ctx


@pytest.mark.pinocchio
def test_with_gravity_the_momentum_rate_is_the_weight(cases):
    """tau = 0 under gravity (Pinocchio's aba): h_G_dot = A_G qdd + A_G_dot v = [m g; 0], m from
    the generated I_G."""
    robot, oracle, pkg = cases["solo12"]
    g = np.array(oracle.model.gravity.linear)
    for t, s in enumerate(_states(robot, "weight", 3)):
        q, v = s["q"], s["qd"]
        qdd = oracle.forward_dynamics(q, v, np.zeros(robot.nv))          # Pinocchio, with gravity
        hdot = pkg.c.centroidal_map(q) @ qdd + pkg.c.centroidal_bias(q, v)
        m = pkg.c.centroidal_inertia(q)[0, 0]
        assert_close(hdot, np.r_[m * g, 0, 0, 0], "A_G qdd + A_G_dot v", f"seed={_seed('weight')} state#{t}",
                     rtol=1e-8)


@pytest.mark.pinocchio
def test_classical_acceleration_is_the_spatial_one_plus_w_cross_v(cases):
    """pinocchio issue #1395: frame_acceleration_bias is the classical acceleration, which differs
    from the spatial one (getFrameAcceleration) by w x v in its linear part."""
    robot, oracle, pkg = cases["arm4"]
    pin = oracle.pin
    (s,) = _states(robot, "classical", 1)
    q, v = oracle.map.q(s["q"]), oracle.map.v(s["qd"])
    pin.forwardKinematics(oracle.model, oracle.data, q, v, np.zeros(robot.nv))
    pin.updateFramePlacements(oracle.model, oracle.data)
    spatial = np.array([pin.getFrameAcceleration(oracle.model, oracle.data, f, pin.LOCAL_WORLD_ALIGNED).vector
                        for f in oracle.frame_ids])
    vf, af = pkg.c.frame_velocity(s["q"], s["qd"]), pkg.c.frame_acceleration_bias(s["q"], s["qd"])
    wxv = np.cross(vf[:, 3:], vf[:, :3])
    assert np.max(np.abs(wxv)) > 1e-1
    assert_close(af[:, :3], spatial[:, :3] + wxv, "classical = spatial + w x v", f"seed={_seed('classical')}")
    assert_close(af[:, 3:], spatial[:, 3:], "angular parts", f"seed={_seed('classical')}")


def test_points_are_placed_in_their_link_and_recorded_in_the_manifest(cases):
    robot, _, pkg = cases["arm4"]
    assert pkg.frames == ("tool_link", "joint2", "tip", "rest")
    with open(pkg.__path__[0] + "/manifest.json") as f:
        manifest = json.load(f)
    assert manifest["frames"] == ["tool_link", "joint2", "tip=wrist_link@0.1,-0.05,0.2", "rest=base_link@0.3,0,0"]
    (s,) = _states(robot, "point", 1)
    link, tip = Q.evaluate(robot, "oMf", s, Q.SweepOptions(frames=("wrist_link", "tip=wrist_link@0.1,-0.05,0.2")))
    assert_close(tip[:3, 3], link[:3, :3] @ [0.1, -0.05, 0.2] + link[:3, 3], "tip origin", "point")
    assert_close(tip[:3, :3], link[:3, :3], "tip orientation = its link's", "point")


@pytest.mark.parametrize("spec,reason", [
    ("foot=nowhere@0,0,1", "no link or joint 'nowhere'"),
    ("foot=wrist_link@0,0", "'0,0' is not three numbers"),
    ("foot=wrist_link@0,x,1", "is not three numbers"),
    ("foot=wrist_link@0,0,inf", "is not three numbers"),
    ("=wrist_link@0,0,1", "nor a point"),
    ("tool_link=wrist_link@0,0,1,tool_link", "two frames are named 'tool_link'"),
])
def test_a_bad_point_is_a_one_line_option_error_with_exit_code_2(spec, reason, tmp_path):
    robot = symgen.load_urdf(ARM4)
    with pytest.raises(OptionError, match=reason):
        Q.frames_of(robot, Q.split_frames(spec))
    result = CliRunner().invoke(main, ["build", ARM4, "--out", str(tmp_path), "--frames", spec, "--quantities", "vf"])
    assert result.exit_code == 2, result.output
    message = result.output.strip()
    assert "\n" not in message and "--frames" in message and reason.split("'")[0] in message, message


def test_cli_builds_points_and_verify_checks_every_function_against_pinocchio_and_the_identities(pin, tmp_path):
    spec = "tool_link,tip=wrist_link@0.1,-0.05,0.2"
    runner = CliRunner()
    result = runner.invoke(main, ["build", ARM4, "--out", str(tmp_path), "--frames", spec, "--copt=-O0", "--quiet",
                                  "--quantities", ",".join(KEYS)])
    assert result.exit_code == 0, result.output
    result = runner.invoke(main, ["verify", str(tmp_path / "arm4"), "--urdf", ARM4, "--trials", "2"])
    assert result.exit_code == 0, result.output
    for x in (Q.QUANTITIES[k] for k in KEYS):
        assert f"c vs Pinocchio: {x.function}" in result.output, (x.function, result.output)
    for identity in ("J_dot qd = frame acceleration bias", "h_G = A_G qd", "m J_com = linear rows of A_G"):
        assert f"c: {identity}" in result.output, (identity, result.output)
