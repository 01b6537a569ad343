"""The floating base's velocity representations (``symgen build --base-velocity``,
symgen/base_velocity.py): body (Pinocchio's), mixed and inertial (iDynTree's).

- The numeric reference in each representation against iDynTree's KinDynComputations
  (symgen/oracle_idyntree.py): M, the bias C nu + g, g, inverse dynamics and the frame Jacobians
  (MIXED = LOCAL_WORLD_ALIGNED, INERTIAL = WORLD, BODY_FIXED = LOCAL), to 1e-9, on a free-flying
  arm4, a general-axis serial chain with a free-flyer and solo12 (talos: slow), and in MIXED J̇ ν
  against getFrameBiasAcc. BODY_FIXED equal to symgen's body speeds checks the harness itself.
- The identities in the new speeds: Mdot (central differences of M along q moved by those speeds)
  = C + C^T, C = Gamma nu, ID(FD(tau)) = tau, M Minv = 1, J_dot and the centroidal bias against
  differences of J and h_G, the ID and FD derivatives against differences along the new speeds, and the body values mapped by G equal the new ones (M = G^T M_b G,
  tau = G^T tau_b(q, G nu, G nudot + Gdot nu), J = J_b G).
- A generated package (NumPy and C) in mixed and inertial speeds against the reference and
  iDynTree (arm4 with every function, solo12's M, C, g, tau and feet Jacobians); its integrate/difference against finite differences of the configuration and against
  the velocity map; base_velocity in the package, the manifest and the header; symgen verify.
- The default body build is unchanged; what is not supported is refused in one line.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import symgen
from symgen import quantities as Q
from symgen import robots
from symgen.algorithms.regressor import robot_parameters
from symgen.backend import NUMERIC
from symgen.base_velocity import embedding, embedding_rate
from symgen.cli import main
from symgen.codegen.build import BuildOptions, build, import_package
from symgen.errors import OptionError

import support

pytestmark = pytest.mark.timeout(900)

ARM4 = Path(symgen.__file__).parent / "examples" / "arm4.urdf"
KINDS = ("mixed", "inertial")


def _idyntree():
    try:
        import idyntree.bindings  # noqa: F401
    except ImportError:
        support.require("idyntree", False)
    from symgen.oracle_idyntree import IDynTreeOracle
    return IDynTreeOracle


def _chain_urdf(tmp_path, n=6, seed=7) -> Path:
    """An n-joint spatial serial chain with general axes (symgen.robots' serial) as URDF, its root
    link given a body (a free-flyer on a massless root has a singular M): chain6 (seed 7), and
    chain20, the 20-DoF chain of ``symgen model serial 20 --seed 1``."""
    from symgen.urdf import urdf_string

    path = tmp_path / f"chain{n}.urdf"
    root = ('<link name="base"><inertial><origin xyz="0.02 -0.01 0.03"/><mass value="3.0"/>'
            '<inertia ixx="0.03" ixy="0.001" ixz="0" iyy="0.04" iyz="0.002" izz="0.05"/></inertial></link>')
    text = urdf_string(robots.make("serial", n, seed=seed))
    assert '<link name="base"/>' in text
    path.write_text(text.replace('<link name="base"/>', root))
    return path


def _robot_path(name, tmp_path):
    if name == "arm4":
        return ARM4
    if name == "chain6":
        return _chain_urdf(tmp_path)
    if name == "chain20":
        return _chain_urdf(tmp_path, 20, 1)
    return support.erd_path({"solo12": "solo_description/robots/solo12.urdf",
                             "talos": "talos_data/robots/talos_reduced.urdf",
                             "panda": "panda_description/urdf/panda.urdf"}[name])


def _G(robot, q, kind):
    """The full G and G^-1 at q (n x n), from the base blocks."""
    Gb, Gi = embedding(robot, q, kind, NUMERIC)
    G, Ginv = np.eye(robot.nv), np.eye(robot.nv)
    G[:6, :6], Ginv[:6, :6] = Gb, Gi
    return G, Ginv


def _Gdot(robot, q, nu, kind):
    Gd = np.zeros((robot.nv, robot.nv))
    Gd[:6, :6] = embedding_rate(robot, q, nu, kind, NUMERIC)
    return Gd


def _opts(kind, frames=None):
    return Q.SweepOptions(frame="body", base_velocity=kind, frames=frames)


# ---------------------------------------------------------------- the reference against iDynTree

#: the bigger robots, with -m slow: talos and panda on a free-flyer, the general-axis 20-DoF chain
BIGGER = [pytest.param(name, marks=pytest.mark.slow) for name in ("talos", "panda", "chain20")]


@pytest.mark.parametrize("kind", ("body",) + KINDS)
@pytest.mark.parametrize("name", ["arm4", "chain6", "solo12", *BIGGER])
def test_reference_against_idyntree(name, kind, tmp_path):
    oracle_class = _idyntree()
    path = _robot_path(name, tmp_path)
    robot = symgen.load_urdf(path, floating_base=True)
    frames = robot.leaf_links
    oracle = oracle_class(path, robot.joint_names[1:], kind)
    reference = {"body": "J_local", "mixed": "J", "inertial": "J_world"}[kind]
    seed, states = support.seeded_states(f"idyntree {name} {kind}", robot, 2, unit_base=True)
    for t, s in enumerate(states):
        ctx = f"{name} {kind} seed {seed} state {t}"
        o = _opts(kind, frames)
        M, C, g, tau, J = (Q.evaluate(robot, k, s, o) for k in ("M", "C", "g", "tau", reference))
        support.assert_close(M, oracle.mass_matrix(s["q"]), "M", ctx, against="iDynTree")
        support.assert_close(C @ s["qd"] + g, oracle.bias(s["q"], s["qd"]), "C nu + g", ctx, against="iDynTree")
        support.assert_close(g, oracle.gravity_forces(s["q"]), "g", ctx, against="iDynTree")
        support.assert_close(tau, oracle.inverse_dynamics(s["q"], s["qd"], s["qdd"]), "tau", ctx, against="iDynTree")
        for k, f in enumerate(frames):
            support.assert_close(J[k], oracle.frame_jacobian(s["q"], f), f"J {f}", ctx, against="iDynTree")
        if kind == "mixed":                 # J_dot nu in MIXED: the classical acceleration, world axes
            af = Q.evaluate(robot, "af", s, o)
            for k, f in enumerate(frames):
                support.assert_close(af[k], oracle.frame_bias_acceleration(s["q"], s["qd"], f), f"J_dot nu {f}", ctx,
                                     against="iDynTree")


# ---------------------------------------------------------------- identities in the new speeds

@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", ["arm4", "chain6"])
def test_identities(name, kind, tmp_path):
    robot = symgen.load_urdf(_robot_path(name, tmp_path), floating_base=True)
    seed, states = support.seeded_states(f"identities {name} {kind}", robot, 3, unit_base=True)
    o, body = _opts(kind), _opts("body")
    for t, s in enumerate(states):
        ctx = f"{name} {kind} seed {seed} state {t}"
        q, nu, nud = s["q"], s["qd"], s["qdd"]
        G, Ginv = _G(robot, q, kind)
        Gd = _Gdot(robot, q, nu, kind)
        M, Mdot, C, Gamma = (Q.evaluate(robot, k, s, o) for k in ("M", "Mdot", "C", "Gamma"))
        h = 1e-6                                    # q moved with body speeds G nu: the tangent of the new speeds
        Mfd = (Q.evaluate(robot, "M", {**s, "q": support.move(robot, q, G @ nu, h)}, o)
               - Q.evaluate(robot, "M", {**s, "q": support.move(robot, q, G @ nu, -h)}, o)) / (2 * h)
        support.assert_close(Mdot, Mfd, "Mdot vs central differences", ctx, rtol=1e-6, against="differences")
        support.assert_close(C + C.T, Mdot, "C + C^T", ctx, against="Mdot")
        support.assert_close(np.einsum("ijk,k->ij", Gamma, nu), C, "Gamma nu", ctx, against="C")
        support.assert_close(Q.evaluate(robot, "Y_c", s, o) @ robot_parameters(robot), C.T @ nu, "Y_c theta", ctx,
                             against="C^T nu")
        tau = Q.evaluate(robot, "tau", s, o)
        support.assert_close(Q.evaluate(robot, "qdd", {**s, "tau": tau}, o), nud, "FD(ID)", ctx,
                             rtol=Q.tolerance(Q.QUANTITIES["qdd"], M), against="nudot")
        support.assert_close(M @ Q.evaluate(robot, "Minv", s, o), np.eye(robot.nv), "M Minv", ctx,
                             rtol=Q.tolerance(Q.QUANTITIES["Minv"], M), against="1")
        # the body values mapped by G
        b = {**s, "qd": G @ nu, "qdd": G @ nud + Gd @ nu}
        Mb, Cb = Q.evaluate(robot, "M", b, body), Q.evaluate(robot, "C", b, body)
        support.assert_close(M, G.T @ Mb @ G, "G^T M G", ctx, against="M")
        support.assert_close(C, G.T @ Cb @ G + G.T @ Mb @ Gd, "G^T C G + G^T M Gdot", ctx, against="C")
        support.assert_close(tau, G.T @ Q.evaluate(robot, "tau", b, body), "G^T tau", ctx, against="tau")
        support.assert_close(Q.evaluate(robot, "J", s, o), Q.evaluate(robot, "J", s, body) @ G, "J G", ctx, against="J")
        qdd_b = Q.evaluate(robot, "qdd", {**b, "tau": Ginv.T @ s["tau"]}, body)
        support.assert_close(Q.evaluate(robot, "qdd", s, o), Ginv @ (qdd_b - Gd @ nu), "G^-1 (FD_b - Gdot nu)", ctx,
                             rtol=Q.tolerance(Q.QUANTITIES["qdd"], M), against="FD")
        # J_dot and the centroidal bias: the rates of J and h_G = A_G nu along the same motion
        def along(key, t):
            return Q.evaluate(robot, key, {**s, "q": support.move(robot, q, G @ nu, t)}, o)
        dJ = Q.evaluate(robot, "dJ", s, o)
        support.assert_close(dJ, (along("J", h) - along("J", -h)) / (2 * h), "J_dot", ctx, rtol=1e-6,
                             against="differences")
        support.assert_close(np.einsum("fij,j->fi", dJ, nu), Q.evaluate(robot, "af", s, o), "J_dot nu", ctx,
                             against="frame_acceleration_bias")
        support.assert_close(Q.evaluate(robot, "dhg", s, o), (along("hg", h) - along("hg", -h)) / (2 * h),
                             "centroidal bias", ctx, rtol=1e-6, against="differences")
        # in LOCAL and WORLD: J_dot the rate of J; the drift minus J_dot nu (the classical correction, a
        # function of the frame's velocity only) is the body speeds' at v = G nu
        for r in ("local", "world"):
            dJr, afr = Q.evaluate(robot, f"dJ_{r}", s, o), Q.evaluate(robot, f"af_{r}", s, o)
            support.assert_close(dJr, (along(f"J_{r}", h) - along(f"J_{r}", -h)) / (2 * h), f"J_dot {r}", ctx,
                                 rtol=1e-6, against="differences")
            vb = {**s, "qd": G @ nu}
            support.assert_close(afr - np.einsum("fij,j->fi", dJr, nu),
                                 Q.evaluate(robot, f"af_{r}", vb, body) - np.einsum("fij,j->fi", Q.evaluate(robot, f"dJ_{r}", vb, body), G @ nu),
                                 f"drift - J_dot nu {r}", ctx, against="body speeds")
        # the ID and FD derivatives: q moved along the new speeds' tangent (body tangent G dnu), nu itself
        def column(key, dq, dnu):
            def at(t):
                return Q.evaluate(robot, key, {**s, "q": support.move(robot, q, G @ dq, t), "qd": nu + t * dnu}, o)
            return (at(1e-5) - at(-1e-5)) / 2e-5
        eye = np.eye(robot.nv)
        for key, outputs in (("tau", Q.evaluate(robot, "dtau", s, o)), ("qdd", Q.evaluate(robot, "dqdd", s, o))):
            numeric = (np.column_stack([column(key, e, 0 * e) for e in eye]),
                       np.column_stack([column(key, 0 * e, e) for e in eye]))
            for wrt, mine, theirs in zip(("d/dq", "d/dnu"), outputs, numeric):   # (FD: a solve, looser)
                support.assert_close(mine, theirs, f"{key} {wrt}", ctx, rtol=1e-7 if key == "tau" else 1e-6,
                                     against="differences")
        # Gdot against central differences of G along the same motion
        Gfd = (_G(robot, support.move(robot, q, G @ nu, h), kind)[0]
               - _G(robot, support.move(robot, q, G @ nu, -h), kind)[0]) / (2 * h)
        support.assert_close(Gd, Gfd, "Gdot", ctx, rtol=1e-6, against="differences")


@pytest.mark.parametrize("name", ["arm4", "chain6", "solo12"])
def test_mixed_against_adam(name, tmp_path):
    """adam-robotics' KinDynComputations (its NumPy backend, MIXED_REPRESENTATION, symgen's
    gravity): M, the bias C nu + g and the frame Jacobians in MIXED speeds, to 1e-9."""
    try:
        from adam import Representations
        from adam.numpy import KinDynComputations
    except ImportError:
        support.require("adam-robotics", False)
    path = _robot_path(name, tmp_path)
    robot = symgen.load_urdf(path, floating_base=True)
    frames = robot.leaf_links
    kd = KinDynComputations(str(path), list(robot.joint_names[1:]), gravity=np.array([0.0, 0.0, -9.81, 0.0, 0.0, 0.0]))
    kd.set_frame_velocity_representation(Representations.MIXED_REPRESENTATION)
    o = _opts("mixed", frames)
    seed, states = support.seeded_states(f"adam {name}", robot, 2, unit_base=True)
    for t, s in enumerate(states):
        ctx = f"{name} mixed seed {seed} state {t}"
        q, nu = s["q"], s["qd"]
        R, _ = _placement_of(robot, q)
        H = np.eye(4)
        H[:3, :3], H[:3, 3] = R, q[:3]
        M, C, g, J = (Q.evaluate(robot, k, s, o) for k in ("M", "C", "g", "J"))
        support.assert_close(M, kd.mass_matrix(H, q[7:]), "M", ctx, against="adam")
        support.assert_close(C @ nu + g, kd.bias_force(H, q[7:], nu[:6], nu[6:]), "C nu + g", ctx, against="adam")
        for k, f in enumerate(frames):
            support.assert_close(J[k], kd.jacobian(f, H, q[7:]), f"J {f}", ctx, against="adam")


def _placement_of(robot, q):
    """The base's rotation (world <- base) and origin from q's free-flyer part."""
    from symgen.kinematics import base_placement

    R, p = base_placement(robot, q, NUMERIC)
    return np.asarray(R, dtype=float), np.asarray(p, dtype=float)


# ---------------------------------------------------------------- generated packages

@pytest.fixture(scope="module")
def packages(tmp_path_factory):
    """{kind: (robot, package, folder)}: arm4 with a free-flyer in mixed and inertial speeds, every
    default function plus LOCAL and WORLD Jacobians; the inertial one with a JAX module too."""
    out = {}
    robot = symgen.load_urdf(ARM4, floating_base=True)
    for kind in KINDS:
        folder = tmp_path_factory.mktemp(f"bv-{kind}")
        opts = BuildOptions(copt="-O0", base_velocity=kind, references=("local_world_aligned", "local", "world"),
                            targets=("numpy", "c", "jax") if kind == "inertial" else ("numpy", "c"))
        result = build(robot, folder, name=f"arm4_{kind}", opts=opts)
        out[kind] = (robot, import_package(result.path), result.path)
    return out


@pytest.mark.parametrize("kind", KINDS)
def test_package_against_reference_and_idyntree(packages, kind):
    robot, pkg, path = packages[kind]
    oracle = _idyntree()(ARM4, robot.joint_names[1:], kind)
    assert pkg.base_velocity == pkg.numpy.base_velocity == pkg.c.base_velocity == kind
    import json
    manifest = json.loads((path / "manifest.json").read_text())
    assert manifest["options"]["base_velocity"] == kind
    assert f"#define {pkg.__name__.upper()}_BASE_VELOCITY {KINDS.index(kind) + 1}" in (path / f"{pkg.__name__}.h").read_text()
    opts = _opts(kind, tuple(manifest["frames"]))
    present = [Q.BY_FUNCTION[f] for f in manifest["functions"] if f in Q.BY_FUNCTION]
    assert {"mass_matrix", "coriolis_matrix", "christoffel", "inverse_dynamics", "forward_dynamics",
            "frame_jacobian"} <= {x.function for x in present}
    assert {"frame_acceleration_bias_local", "frame_jacobian_dot_world"} <= set(manifest["functions"])
    seed, states = support.seeded_states(f"package {kind}", robot, 2, unit_base=True)
    reference = {"mixed": "J", "inertial": "J_world"}[kind]
    for t, s in enumerate(states):
        ctx = f"arm4 {kind} seed {seed} state {t}"
        M = Q.evaluate(robot, "M", s, opts)
        for x in present:
            expected = Q.evaluate(robot, x.key, s, opts)
            for backend in ("numpy", "c"):
                support.assert_close(Q.call(getattr(pkg, backend), x.key, s), expected, f"{backend} {x.function}", ctx,
                                     rtol=Q.tolerance(x, M), against="reference")
        for backend in ("numpy", "c"):
            mod = getattr(pkg, backend)
            support.assert_close(mod.mass_matrix(s["q"]), oracle.mass_matrix(s["q"]), f"{backend} M", ctx, against="iDynTree")
            C, g = mod.coriolis_matrix(s["q"], s["qd"]), mod.gravity(s["q"])
            support.assert_close(C @ s["qd"] + g, oracle.bias(s["q"], s["qd"]), f"{backend} C nu + g", ctx,
                                 against="iDynTree")
            J = Q.call(mod, reference, s)
            for k, f in enumerate(manifest["frames"]):
                support.assert_close(J[k], oracle.frame_jacobian(s["q"], f), f"{backend} J {f}", ctx, against="iDynTree")


@pytest.mark.parametrize("kind", KINDS)
def test_package_integrate_difference(packages, kind):
    robot, pkg, _ = packages[kind]
    seed, states = support.seeded_states(f"lie {kind}", robot, 3, unit_base=True)
    for t, s in enumerate(states):
        ctx = f"arm4 {kind} seed {seed} state {t}"
        q, nu = s["q"], s["qd"] / 10
        G, _ = _G(robot, q, kind)
        for backend in ("numpy", "c"):
            mod = getattr(pkg, backend)
            q1 = mod.integrate(q, nu)
            support.assert_close(mod.difference(q, q1), nu, f"{backend} difference(q, integrate(q, nu))", ctx,
                                 against="nu")
            if kind == "mixed":                       # p + nu_lin exactly
                support.assert_close(q1[:3], q[:3] + nu[:3], f"{backend} mixed position", ctx, against="p + nu_lin")
            h = 1e-6                                  # the velocity map: d/dt integrate(q, t nu) = the motion of G nu
            for a, b in ((mod.integrate(q, h * nu), support.move(robot, q, G @ nu, h)),
                         (mod.integrate(q, -h * nu), support.move(robot, q, G @ nu, -h))):
                support.assert_close(a, b, f"{backend} integrate(q, h nu) vs q moved by G nu", ctx, rtol=1e-10,
                                     against="body motion")
            rate = (mod.difference(q, support.move(robot, q, G @ nu, h))
                    - mod.difference(q, support.move(robot, q, G @ nu, -h))) / (2 * h)
            support.assert_close(rate, nu, f"{backend} d difference / dt", ctx, rtol=1e-7, against="nu")
        support.assert_close(pkg.c.integrate(q, nu), pkg.numpy.integrate(q, nu), "C vs NumPy integrate", ctx,
                             against="NumPy")


def test_jax_module(packages):
    """The --target jax module of an inertial package: the same functions and integrate/difference."""
    try:
        from jax import enable_x64                  # jax >= 0.7
    except ImportError:
        from jax.experimental import enable_x64

    robot, pkg, _ = packages["inertial"]
    assert pkg.jax.base_velocity == "inertial"
    seed, states = support.seeded_states("jax inertial", robot, 2, unit_base=True)
    with enable_x64():
        for t, s in enumerate(states):
            ctx = f"arm4 inertial seed {seed} state {t}"
            for key in ("M", "C", "tau", "qdd", "J", "af"):
                support.assert_close(np.asarray(Q.call(pkg.jax, key, s)), Q.call(pkg.c, key, s), f"jax {key}", ctx,
                                     against="C")
            support.assert_close(np.asarray(pkg.jax.integrate(s["q"], s["qd"])), pkg.c.integrate(s["q"], s["qd"]),
                                 "jax integrate", ctx, against="C")


def test_external_forces_in_new_speeds():
    """With f_ext the new speeds' tau and FD are the body ones mapped by G (the forces are the links')."""
    robot = symgen.load_urdf(ARM4, floating_base=True)
    seed, states = support.seeded_states("fext mixed", robot, 2, unit_base=True)
    rng = np.random.default_rng(seed)
    for kind in KINDS:
        o = Q.SweepOptions(frame="body", base_velocity=kind, external_forces=True)
        body = Q.SweepOptions(frame="body", external_forces=True)
        for t, s in enumerate(states):
            ctx = f"arm4 {kind} seed {seed} state {t}"
            f = rng.uniform(-10, 10, (len(robot.link_names), 6))
            G, Ginv = _G(robot, s["q"], kind)
            Gd = _Gdot(robot, s["q"], s["qd"], kind)
            b = {**s, "qd": G @ s["qd"], "qdd": G @ s["qdd"] + Gd @ s["qd"], "f_ext": f}
            tau = Q.evaluate(robot, "tau", {**s, "f_ext": f}, o)
            support.assert_close(tau, G.T @ Q.evaluate(robot, "tau", b, body), "G^T tau(f)", ctx, against="tau")
            support.assert_close(Q.evaluate(robot, "qdd", {**s, "tau": tau, "f_ext": f}, o), s["qdd"], "FD(ID) with f",
                                 ctx, rtol=1e-8, against="nudot")


@pytest.mark.parametrize("kind", KINDS)
def test_frame_derivatives_in_new_speeds(kind):
    """The frame velocity and spatial acceleration derivatives in LOCAL and WORLD against central
    differences of the frame's velocity and of J nudot + J_dot nu, q moved along the new speeds;
    LOCAL_WORLD_ALIGNED's are Pinocchio's WORLD partials moved to the frame's origin there too."""
    from symgen.spatial import skew

    robot = symgen.load_urdf(ARM4, floating_base=True)
    o = _opts(kind, robot.leaf_links)
    seed, states = support.seeded_states(f"frame derivatives {kind}", robot, 2, unit_base=True)
    eye, h = np.eye(robot.nv), 1e-6
    for t, s in enumerate(states):
        ctx = f"arm4 {kind} seed {seed} state {t}"
        G, _ = _G(robot, s["q"], kind)

        def motion(key, ref, d, sign):
            x = {**s, "q": support.move(robot, s["q"], G @ d[0], sign * h), "qd": s["qd"] + sign * h * d[1],
                 "qdd": s["qdd"] + sign * h * d[2]}
            if key == "v":
                return Q.evaluate(robot, f"vf{ref}", x, o)
            return (np.einsum("fij,j->fi", Q.evaluate(robot, f"J{ref}", x, o), x["qdd"])
                    + np.einsum("fij,j->fi", Q.evaluate(robot, f"dJ{ref}", x, o), x["qd"]))

        def differences(key, ref, slot):
            cols = []
            for e in eye:
                d = [0 * e, 0 * e, 0 * e]
                d[slot] = e
                cols.append((motion(key, ref, d, 1) - motion(key, ref, d, -1)) / (2 * h))
            return np.stack(cols, axis=-1)
        for ref in ("_local", "_world"):
            dv_dq, dv_dnu = Q.evaluate(robot, f"dvf{ref}", s, o)
            _, da_dq, da_dnu, da_dnud = Q.evaluate(robot, f"daf{ref}", s, o)
            for what, mine, key, slot in (("dv/dq", dv_dq, "v", 0), ("dv/dnu", dv_dnu, "v", 1), ("da/dq", da_dq, "a", 0),
                                          ("da/dnu", da_dnu, "a", 1), ("da/dnudot", da_dnud, "a", 2)):
                support.assert_close(mine, differences(key, ref, slot), f"{what}{ref}", ctx, rtol=1e-6,
                                     against="differences")
        oMf = Q.evaluate(robot, "oMf", s, o)
        for key in ("dvf", "daf"):
            for lwa, world in zip(Q.evaluate(robot, key, s, o), Q.evaluate(robot, f"{key}_world", s, o)):
                for f in range(len(oMf)):
                    T = np.eye(6)
                    T[:3, 3:] = -skew(oMf[f, :3, 3], NUMERIC)
                    support.assert_close(lwa[f], T @ world[f], f"{key} LOCAL_WORLD_ALIGNED", ctx, against="WORLD moved")


@pytest.mark.parametrize("kind", KINDS)
def test_whole_body_terms_in_new_speeds(kind, tmp_path):
    """whole_body_terms in the new speeds are that representation's M, C nu + g, g, the contact
    frames' J and drift, A_G, its drift and the CoM (each checked above: iDynTree, the identities);
    the package's NumPy and C equal the reference."""
    robot = symgen.load_urdf(ARM4, floating_base=True)
    contacts = (("tool_link", "6d"), ("wrist_link", "3d"))
    o = Q.SweepOptions(frame="body", base_velocity=kind, contacts=contacts, frames=("tool_link", "wrist_link"))
    pkg = import_package(build(robot, tmp_path, name=f"arm4_wb_{kind}", opts=BuildOptions(
        copt="-O0", base_velocity=kind, quantities=("whole_body_terms",), contacts=contacts)).path)
    seed, states = support.seeded_states(f"whole body {kind}", robot, 2, unit_base=True)
    for t, s in enumerate(states):
        ctx = f"arm4 {kind} seed {seed} state {t}"
        terms = Q.evaluate(robot, "whole_body_terms", s, o)
        M, C, g, J, af, Ag, dhg, com = (Q.evaluate(robot, k, s, o) for k in ("M", "C", "g", "J", "af", "Ag", "dhg", "com"))
        for what, mine, theirs in zip(("M", "nle", "g", "Jc", "dJv", "Ag", "dhg", "com"), terms,
                                      (M, C @ s["qd"] + g, g, J, af, Ag, dhg, com)):
            support.assert_close(mine, theirs, f"whole_body_terms {what}", ctx, against=f"{kind} {what}")
        for backend in ("numpy", "c"):
            support.assert_close(Q.call(getattr(pkg, backend), "whole_body_terms", s), terms,
                                 f"{backend} whole_body_terms", ctx, against="reference")


def test_contact_and_impulse_dynamics_in_new_speeds(tmp_path):
    """contact_dynamics and impulse_dynamics of a package in mixed or inertial speeds are the body
    package's (itself checked against Pinocchio's constraintDynamics and impulseDynamics) seen through
    G: at v = G nu and tau = G^-T tau_bar, nu_dot = G^-1 (v_dot - Gdot nu), nu+ = G^-1 v+, the same
    forces and impulses; NumPy and C, a flat and a point contact each active alone."""
    robot = symgen.load_urdf(ARM4, floating_base=True)
    contacts = (("tool_link", "6d"), ("wrist_link", "3d"))
    pkg = {kind: import_package(build(robot, tmp_path / kind, name=f"arm4_ct_{kind}", opts=BuildOptions(
        copt="-O0", base_velocity=kind, quantities=("contact_terms", "impulse_terms"), contacts=contacts)).path)
           for kind in ("body",) + KINDS}
    seed, states = support.seeded_states("contact in new speeds", robot, 2, unit_base=True)
    for kind in KINDS:
        for t, s in enumerate(states):
            q, nu, tau = s["q"], s["qd"], s["tau"]
            G, Ginv = _G(robot, q, kind)
            Gd = _Gdot(robot, q, nu, kind)
            for active in (np.array([1, 0]), np.array([0, 1])):
                ctx = f"arm4 {kind} seed {seed} state {t} active {active}"
                for backend in ("numpy", "c"):
                    mine, body = getattr(pkg[kind], backend), getattr(pkg["body"], backend)
                    nud, lam = mine.contact_dynamics(q, nu, tau, active)
                    vd, lam_b = body.contact_dynamics(q, G @ nu, Ginv.T @ tau, active)
                    support.assert_close(nud, Ginv @ (vd - Gd @ nu), f"{backend} contact_dynamics nudot", ctx,
                                         against="body speeds")
                    support.assert_close(np.ravel(lam), np.ravel(lam_b), f"{backend} contact forces", ctx,
                                         against="body speeds")
                    vp, imp = mine.impulse_dynamics(q, nu, active, 0.3)
                    vp_b, imp_b = body.impulse_dynamics(q, G @ nu, active, 0.3)
                    support.assert_close(vp, Ginv @ vp_b, f"{backend} impulse_dynamics nu+", ctx, against="body speeds")
                    support.assert_close(np.ravel(imp), np.ravel(imp_b), f"{backend} impulses", ctx, against="body speeds")


#: a free root without a damper of its own, a damped hinge with a spring and a damped slide (MJCF)
DAMPED = """<mujoco><worldbody><body name="base" pos="0 0 1"><freejoint name="root"/>
  <geom type="box" size="0.1 0.08 0.05" mass="2"/>
  <body name="thigh" pos="0.1 0 0"><joint name="hip" axis="0 1 0" damping="0.4" stiffness="3" springref="20"/>
    <geom type="capsule" fromto="0 0 0 0 0 -0.3" size="0.03" mass="0.6"/>
    <body name="shin" pos="0 0 -0.3"><joint name="knee" type="slide" axis="0.3 0 1" damping="1.5"/>
      <geom type="sphere" size="0.04" mass="0.3"/></body></body></body></worldbody></mujoco>"""


@pytest.mark.parametrize("kind", KINDS)
def test_forward_dynamics_derivatives_with_passive_forces_in_new_speeds(kind, tmp_path):
    """--passive: forward dynamics and its derivatives in the new speeds include the joints' dampers
    and springs (Jacobians -diag(stiffness), -diag(damping) as in body speeds: the base has none):
    against central differences of forward dynamics with them, q moved along the new speeds; a
    damped free-flyer's FD derivatives are refused in one line."""
    path = tmp_path / "damped.xml"
    path.write_text(DAMPED)
    robot = symgen.load_robot(path)
    assert robot.floating_base and robot.has_passive
    o = Q.SweepOptions(frame="body", base_velocity=kind, passive=True, gravity=robot.gravity)
    seed, states = support.seeded_states(f"passive {kind}", robot, 2, unit_base=True)
    eye, h = np.eye(robot.nv), 1e-6
    for t, s in enumerate(states):
        ctx = f"damped {kind} seed {seed} state {t}"
        G, _ = _G(robot, s["q"], kind)
        dq, dnu = Q.evaluate(robot, "dqdd", s, o)

        def fd(e, f, sign):
            x = {**s, "q": support.move(robot, s["q"], G @ e, sign * h), "qd": s["qd"] + sign * h * f}
            return Q.evaluate(robot, "qdd", x, o)
        num_q = np.column_stack([(fd(e, 0 * e, 1) - fd(e, 0 * e, -1)) / (2 * h) for e in eye])
        num_v = np.column_stack([(fd(0 * e, e, 1) - fd(0 * e, e, -1)) / (2 * h) for e in eye])
        support.assert_close(dq, num_q, "dqdd/dq with passive forces", ctx, rtol=1e-6, against="differences")
        support.assert_close(dnu, num_v, "dqdd/dnu with passive forces", ctx, rtol=1e-6, against="differences")
    damped = path.read_text().replace('<freejoint name="root"/>', '<joint name="root" type="free" damping="0.05"/>')
    path.write_text(damped)
    with pytest.raises(OptionError, match="forward_dynamics_derivatives not generated .* damped free-flyer"):
        build(symgen.load_robot(path), tmp_path / "out", opts=BuildOptions(quantities=("dqdd",), base_velocity=kind,
                                                                          passive=True, compile=False))


OPSPACE = ("Lambda", "Jbar", "mu_p", "f_tau")


@pytest.mark.parametrize("kind", KINDS)
def test_operational_space_in_new_speeds_from_the_definitions(kind, tmp_path):
    """Khatib's quantities in the new speeds from that representation's M, C nu + g, J and J_dot
    (Lambda = (J M^-1 J^T + eps)^-1, Jbar = M^-1 J^T Lambda, mu + p = Lambda (J M^-1 (C nu + g) -
    J_dot nu), F = Jbar^T tau), those checked against iDynTree above; a package's NumPy and C equal
    the reference, the frame derivatives in every reference and Cᵀν's regressor too."""
    from symgen.algorithms.operational_space import DAMPING

    robot = symgen.load_urdf(ARM4, floating_base=True)
    frames = robot.leaf_links
    o = _opts(kind, frames)
    seed, states = support.seeded_states(f"opspace {kind}", robot, 2, unit_base=True)
    pkg = import_package(build(robot, tmp_path, name=f"arm4_os_{kind}", opts=BuildOptions(
        copt="-O0", base_velocity=kind, quantities=OPSPACE + ("dvf", "daf", "Y_c"), frames=tuple(frames),
        references=("local_world_aligned", "local", "world"))).path)
    for t, s in enumerate(states):
        ctx = f"arm4 {kind} seed {seed} state {t}"
        M, C, g, J, dJ = (Q.evaluate(robot, k, s, o) for k in ("M", "C", "g", "J", "dJ"))
        Lam, Jbar, mu, F = (Q.evaluate(robot, k, s, o) for k in OPSPACE)
        for k, f in enumerate(frames):
            L = np.linalg.inv(J[k] @ np.linalg.solve(M, J[k].T) + DAMPING * np.eye(6))
            MiJt = np.linalg.solve(M, J[k].T)
            support.assert_close(Lam[k], L, f"Lambda {f}", ctx, against="definition")
            support.assert_close(Jbar[k], MiJt @ L, f"Jbar {f}", ctx, rtol=1e-8, against="definition")
            support.assert_close(mu[k], L @ (J[k] @ np.linalg.solve(M, C @ s["qd"] + g) - dJ[k] @ s["qd"]), f"mu + p {f}",
                                 ctx, rtol=1e-8, against="definition")
            support.assert_close(F[k], (MiJt @ L).T @ s["tau"], f"F {f}", ctx, rtol=1e-8, against="definition")
        for key in OPSPACE + ("dvf", "daf", "dvf_local", "daf_local", "dvf_world", "daf_world", "Y_c"):
            for backend in ("numpy", "c"):
                support.assert_close(Q.call(getattr(pkg, backend), key, s), Q.evaluate(robot, key, s, o),
                                     f"{backend} {key}", ctx, rtol=1e-8, against="reference")


@pytest.mark.parametrize("kind", ["mixed"])      # (the inertial package's JAX module makes verify jit every function)
def test_verify_passes(packages, kind):
    _idyntree()
    from symgen.verify import verify_package

    _, _, path = packages[kind]
    report, ok = verify_package(path, trials=2, urdf=str(ARM4))
    assert ok, report
    assert "iDynTree" in report and f"base velocity {kind}" in report


# ---------------------------------------------------------------- the default build and refusals

def test_body_build_unchanged(tmp_path):
    """A body (default) build of a fixed-base robot prints what it printed before: the bundled arm4
    byte for byte as committed in generated/arm4."""
    result = CliRunner().invoke(main, ["build", str(ARM4), "--out", str(tmp_path), "--force", "--no-compile"])
    assert result.exit_code == 0, result.output
    committed = Path(__file__).parent.parent / "generated" / "arm4"
    for f in ("arm4.c", "arm4.h", "arm4_numpy.py", "__init__.py", "arm4_c.py"):
        assert (tmp_path / "arm4" / f).read_bytes() == (committed / f).read_bytes(), f


def test_refusals(tmp_path):
    runner = CliRunner()
    result = runner.invoke(main, ["build", str(ARM4), "--base-velocity", "mixed", "--out", str(tmp_path), "--no-compile"])
    assert result.exit_code == 2 and "arm4.urdf" in result.output and "floating base" in result.output, result.output
    assert len(result.output.strip().splitlines()) == 1, result.output
    robot = symgen.load_urdf(ARM4, floating_base=True)
    with pytest.raises(OptionError, match="--base-velocity mixed: contact_partials not generated"):
        build(robot, tmp_path, opts=BuildOptions(quantities=("contact_partials",), contacts=(("tool_link", "3d"),),
                                                 base_velocity="mixed", compile=False))
    with pytest.raises(OptionError, match="--base-velocity"):
        build(symgen.load_urdf(ARM4), tmp_path, opts=BuildOptions(quantities=("M",), base_velocity="mixed", compile=False))



def test_bench_beside_idyntree(packages):
    """symgen bench --idyntree times iDynTree's M, C and tau in the package's representation beside
    the binding's Python call, after checking them (M, tau; C nu) against the package."""
    _idyntree()
    from symgen.bench import bench_package

    _, _, path = packages["mixed"]
    result = bench_package(path, urdf=str(ARM4), quantities=("M", "C", "tau"), pin_cpp="off", c_batch=0,
                           repeats=1, min_time=0.001, idyntree=True)
    assert result["idyntree"]["representation"] == "mixed"
    assert all(error <= 1e-9 for error in result["idyntree"]["check"].values()), result["idyntree"]
    for qty in ("M", "C", "tau"):
        assert result["us"][qty]["idyntree_py"] > 0 and "idyntree_py/c_py_single" in result["ratios"][qty]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", ["solo12", *BIGGER])
def test_package_against_idyntree(name, kind, tmp_path):
    """M, C nu + g, g, tau and the leaf links' Jacobians, generated NumPy and C, against iDynTree:
    solo12 in CI, talos, panda (free-flyers) and the 20-DoF chain with -m slow."""
    oracle_class = _idyntree()
    path = _robot_path(name, tmp_path)
    robot = symgen.load_urdf(path, floating_base=True)
    reference = {"mixed": "J", "inertial": "J_world"}[kind]
    result = build(robot, tmp_path, name=f"{name}_{kind}",
                   opts=BuildOptions(quantities=("M", "C", "g", "tau", reference), copt="-O0", base_velocity=kind,
                                     references=("local_world_aligned", "world"), jobs=2, max_dof=0, budget=0))
    pkg, oracle = import_package(result.path), oracle_class(path, robot.joint_names[1:], kind)
    seed, states = support.seeded_states(f"{name} package {kind}", robot, 2, unit_base=True)
    for t, s in enumerate(states):
        ctx = f"{name} {kind} seed {seed} state {t}"
        for backend in ("numpy", "c"):
            mod = getattr(pkg, backend)
            support.assert_close(mod.mass_matrix(s["q"]), oracle.mass_matrix(s["q"]), f"{backend} M", ctx, against="iDynTree")
            support.assert_close(mod.coriolis_matrix(s["q"], s["qd"]) @ s["qd"] + mod.gravity(s["q"]),
                                 oracle.bias(s["q"], s["qd"]), f"{backend} C nu + g", ctx, against="iDynTree")
            support.assert_close(mod.inverse_dynamics(s["q"], s["qd"], s["qdd"]),
                                 oracle.inverse_dynamics(s["q"], s["qd"], s["qdd"]), f"{backend} tau", ctx, against="iDynTree")
            J = Q.call(mod, reference, s)
            for k, f in enumerate(pkg.frames):
                support.assert_close(J[k], oracle.frame_jacobian(s["q"], f), f"{backend} J {f}", ctx, against="iDynTree")
