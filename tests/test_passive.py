"""Passive joint forces (symgen/passive.py): MJCF's joint dampers and springs (``damping``,
``stiffness``, ``springref``, a joint actuator's ``damping``) and URDF's ``<dynamics damping>``.

- A generated package's ``passive_force`` (NumPy and C) against MuJoCo's ``qfrc_passive`` after
  ``mj_forward``, its M, C v + g against ``mj_fullM`` and ``qfrc_bias``, and ``forward_dynamics``
  (built with the passive forces, MJCF's default) against ``qacc``, to 1e-9, on a fixed chain (three
  hinges and a slide, springs with springref and a nonzero ref) and a free-floating model (damping on
  the free joint, a ball joint and hinges); its FD derivatives against central differences of its FD.
- URDF: ``passive_force`` against -Pinocchio's ``model.damping`` * v, forward dynamics with
  ``--passive`` against ``pin.aba(q, v, tau - model.damping * v)`` and its derivatives against
  ``computeABADerivatives``; without it, ``aba(q, v, tau)``.
- Every forward-dynamics route of the registry solves for tau + tau_p.
- What is not modelled is refused in one line naming the file and element; what is left out is said.
"""
from __future__ import annotations

import warnings
import zlib

import numpy as np
import pytest
from click.testing import CliRunner

import symgen
from symgen import quantities as Q
from symgen.cli import main
from symgen.codegen.build import BuildOptions, build, import_package
from symgen.errors import OptionError, SymgenWarning, URDFError
from symgen.mjcf_convert import quaternion_matrix

from support import require, require_pinocchio

try:
    import mujoco
except ImportError:
    mujoco = None

#: three hinges and a slide, each with a damper or a spring (springref and ref both set), armature, and
#: a joint actuator's damping (d gear² on its joint)
CHAIN = """<mujoco model="spring_chain"><compiler angle="degree"/><worldbody>
<body name="b1" pos="0.1 0.2 0.3" euler="10 20 30">
  <joint name="h1" type="hinge" axis="0 0 1" pos="0.05 -0.02 0.1" ref="15" damping="0.4" stiffness="3" springref="40"/>
  <geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.04"/>
  <body name="b2" pos="0.4 0 0" quat="0.9 0.1 0.3 0.2">
    <joint name="s2" type="slide" axis="1 1 0" ref="0.1" damping="1.2" stiffness="20" springref="0.3"/>
    <geom type="box" size="0.05 0.1 0.15" pos="0.02 0.03 0"/>
    <body name="b3" pos="0 0.3 0">
      <joint name="h3" type="hinge" axis="1 0 0" pos="0.01 0 0" damping="0.25" armature="0.02"/>
      <geom type="sphere" size="0.07" pos="0.1 0.05 0.02"/>
      <body name="b4" pos="0.2 0 0"><joint name="h4" type="hinge" axis="0 1 1" stiffness="1.5" ref="-20"/>
        <geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.03"/></body>
    </body>
  </body>
</body></worldbody>
<actuator><motor joint="h3" gear="3" damping="0.1"/></actuator></mujoco>"""

#: a free root with damping, a hinge with a spring below it, a ball joint with damping, another hinge
FLOATING = """<mujoco model="spring_float"><worldbody>
<body name="base" pos="0 0 1" euler="0.1 0.2 0.3"><joint name="root" type="free" damping="0.05"/>
  <geom type="box" size="0.2 0.1 0.05" pos="0.01 0.02 0"/>
  <body name="leg" pos="0.2 0 -0.05">
    <joint name="ha" axis="0 1 0" pos="0 0 0.03" damping="0.3" stiffness="4" springref="0.2" ref="0.1"/>
    <geom type="capsule" fromto="0 0 0 0 0 -0.3" size="0.03"/>
    <body name="foot" pos="0 0 -0.3"><joint name="ankle" type="ball" damping="0.2"/>
      <geom type="box" size="0.05 0.03 0.02" pos="0.02 0 -0.01"/></body></body>
  <body name="arm" pos="-0.2 0 0" quat="0.7 0 0.7 0"><joint name="hc" axis="0 0 1" damping="0.1" armature="0.05"/>
    <geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.02"/></body>
</body></worldbody></mujoco>"""

#: revolute, prismatic and continuous joints with <dynamics damping> (and friction, left out)
URDF = """<robot name="damped">
  <link name="base"/>
  <link name="l1"><inertial><origin xyz="0.1 0 0.02"/><mass value="1.2"/>
    <inertia ixx="0.02" ixy="0.001" ixz="0" iyy="0.03" iyz="0" izz="0.025"/></inertial></link>
  <link name="l2"><inertial><origin xyz="0 0.05 0"/><mass value="0.8"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.012" iyz="0.001" izz="0.011"/></inertial></link>
  <link name="l3"><inertial><origin xyz="0.03 0 0.04"/><mass value="0.5"/>
    <inertia ixx="0.004" ixy="0" ixz="0" iyy="0.005" iyz="0" izz="0.006"/></inertial></link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><origin xyz="0 0 0.1" rpy="0.1 0 0.2"/>
    <axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="10" velocity="5"/><dynamics damping="0.5" friction="0.2"/></joint>
  <joint name="j2" type="prismatic"><parent link="l1"/><child link="l2"/><origin xyz="0.3 0 0" rpy="0 0.3 0"/>
    <axis xyz="1 0 0"/><limit lower="-1" upper="1" effort="10" velocity="5"/><dynamics damping="2.0"/></joint>
  <joint name="j3" type="continuous"><parent link="l2"/><child link="l3"/><origin xyz="0 0.2 0" rpy="0 0 0.4"/>
    <axis xyz="0 1 0"/><dynamics damping="0.7"/></joint>
</robot>"""

FD_KEYS = ("M", "tau", "qdd", "dqdd", "tau_p")


@pytest.fixture(autouse=True)
def _needs_mujoco(request):
    if "urdf" not in request.node.name:
        require("mujoco (the mjcf extra)", mujoco is not None)


def _write(folder, name, text, suffix="xml"):
    path = folder / f"{name}.{suffix}"
    path.write_text(text)
    return path


def _package(folder, path, quantities=FD_KEYS, **options):
    robot = symgen.load_robot(path)
    result = build(robot, folder, opts=BuildOptions(quantities=quantities, copt="-O0", gravity=robot.gravity or
                                                    (0.0, 0.0, -9.81), **options))
    return robot, import_package(result.path), result.path


@pytest.fixture(scope="module", params=["chain", "floating"])
def mjcf_package(request, tmp_path_factory):
    if mujoco is None:
        pytest.skip("mujoco is not installed")
    folder = tmp_path_factory.mktemp(f"passive_{request.param}")
    path = _write(folder, request.param, {"chain": CHAIN, "floating": FLOATING}[request.param])
    robot, pkg, where = _package(folder, path)
    return path, robot, pkg, where


def _velocity_map(robot, q, v):
    """T with v = T qvel and Tdot qvel (MuJoCo's free joint: world-frame linear velocity)."""
    T, Tdot_qvel = np.eye(robot.n), np.zeros(robot.n)
    if robot.floating_base:
        T[:3, :3] = quaternion_matrix(q[3:7]).T
        Tdot_qvel[:3] = -np.cross(v[3:6], v[:3])
    return T, Tdot_qvel


def _random_mujoco_state(m, d, rng):
    d.qpos[:] = m.qpos0 + rng.uniform(-1.0, 1.0, m.nq)
    for j in range(m.njnt):
        if m.jnt_type[j] in (mujoco.mjtJoint.mjJNT_FREE, mujoco.mjtJoint.mjJNT_BALL):
            a = m.jnt_qposadr[j] + (3 if m.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE else 0)
            d.qpos[a:a + 4] /= np.linalg.norm(d.qpos[a:a + 4])
    d.qvel[:] = rng.uniform(-2.0, 2.0, m.nv)
    d.qfrc_applied[:] = rng.uniform(-5.0, 5.0, m.nv)


def _rel(a, b):
    return float(np.abs(np.asarray(a) - np.asarray(b)).max() / max(1.0, np.abs(b).max()))


def test_mjcf_package_matches_mujocos_passive_forces_and_qacc(mjcf_package):
    """passive_force = qfrc_passive, M = mj_fullM, C v + g = qfrc_bias, qacc = forward_dynamics
    (MJCF: with the passive forces by default) and tau = inverse_dynamics at qacc, NumPy and C, at
    random states (contacts and constraints off; the free joint's speeds through v = T qvel,
    forces through Tᵀ)."""
    path, robot, pkg, _ = mjcf_package
    m = mujoco.MjModel.from_xml_path(str(path))
    m.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONTACT | mujoco.mjtDisableBit.mjDSBL_CONSTRAINT
    d = mujoco.MjData(m)
    assert pkg.passive is True and pkg.c is not None
    assert np.array_equal(pkg.damping, robot.damping_vector) and np.any(pkg.stiffness)
    seed = zlib.crc32(path.name.encode())
    rng = np.random.default_rng(seed)
    worst = {}
    for t in range(4):
        where = f"{path.name} seed={seed} state#{t}"
        _random_mujoco_state(m, d, rng)
        mujoco.mj_forward(m, d)
        M_mj = np.zeros((m.nv, m.nv))
        mujoco.mj_fullM(m, d, M_mj)
        q, v = pkg.from_mujoco(d.qpos, d.qvel)
        T, Tdot_qvel = _velocity_map(robot, q, v)
        tau = np.linalg.solve(T.T, d.qfrc_applied)              # T^T tau = MuJoCo's generalized force
        assert np.abs(d.qfrc_passive).max() > 0.1, where        # (the springs and dampers act)
        for mod in (pkg.numpy, pkg.c):
            M = mod.mass_matrix(q)
            errors = {"M": _rel(T.T @ M @ T, M_mj),
                      "C v + g": _rel(T.T @ (mod.inverse_dynamics(q, v, np.zeros(m.nv)) + M @ Tdot_qvel), d.qfrc_bias),
                      "passive_force": _rel(T.T @ mod.passive_force(q, v), d.qfrc_passive),
                      "qacc": _rel(np.linalg.solve(T, mod.forward_dynamics(q, v, tau) - Tdot_qvel), d.qacc),
                      # M qacc + qfrc_bias = qfrc_applied + qfrc_passive: tau at MuJoCo's qacc
                      "tau": _rel(T.T @ mod.inverse_dynamics(q, v, T @ d.qacc + Tdot_qvel),
                                  d.qfrc_applied + d.qfrc_passive)}
            for name, e in errors.items():
                assert e <= 1e-9, f"{name}: {e:.1e} ({where}, {mod.__name__})"
                worst[name] = max(worst.get(name, 0.0), e)
    print(f"{path.name}: max relative error vs MuJoCo", {k: f"{e:.1e}" for k, e in worst.items()})


def test_mjcf_fd_derivatives_match_central_differences_of_the_fd(mjcf_package):
    """forward_dynamics_derivatives (passive forces in: -M^-1 (dtau/du + K, D)) against central
    differences of the generated forward_dynamics, along the tangent space (pkg.integrate)."""
    path, robot, pkg, _ = mjcf_package
    seed = zlib.crc32(b"fd derivatives " + path.name.encode())
    rng = np.random.default_rng(seed)
    for t in range(2):
        state = Q.random_state(rng, pkg.nq, pkg.nv, layout=pkg.joint_models)
        q, v, tau = state["q"], state["qd"], state["tau"]
        for mod in (pkg.numpy, pkg.c):
            dq, dv = mod.forward_dynamics_derivatives(q, v, tau)
            Nq, Nv = _columns(mod, pkg, q, v, tau)
            where = f"{path.name} seed={seed} state#{t} ({mod.__name__})"
            assert _rel(dq, Nq) <= 1e-6, (where, "dqdd/dq", _rel(dq, Nq))
            assert _rel(dv, Nv) <= 1e-6, (where, "dqdd/dv", _rel(dv, Nv))


def _richardson(diff):
    """A central difference made O(h^4): (4 D(h/2) - D(h)) / 3."""
    return (4 * diff(5e-5) - diff(1e-4)) / 3


def _columns(mod, pkg, q, v, tau):
    """Central differences of mod's forward_dynamics along q's tangent space (pkg.integrate) and v."""
    def along_q(k, h):
        e = np.eye(pkg.nv)[k] * h
        return (mod.forward_dynamics(pkg.integrate(q, e), v, tau) - mod.forward_dynamics(pkg.integrate(q, -e), v, tau)) / (2 * h)

    def along_v(k, h):
        e = np.eye(pkg.nv)[k] * h
        return (mod.forward_dynamics(q, v + e, tau) - mod.forward_dynamics(q, v - e, tau)) / (2 * h)

    return (np.column_stack([_richardson(lambda h: along_q(k, h)) for k in range(pkg.nv)]),
            np.column_stack([_richardson(lambda h: along_v(k, h)) for k in range(pkg.nv)]))


def test_verify_checks_passive_force_and_the_passive_fd_against_pinocchio(mjcf_package):
    """`symgen verify --model` of a package built with the passive forces: the reference and Pinocchio
    (aba at tau + tau_p; -model.damping v minus the springs) agree, the identity RNEA(FD) = tau +
    tau_p holds."""
    from symgen.verify import verify_package

    path, robot, pkg, where = mjcf_package
    report, ok = verify_package(where, trials=2, seed=3, urdf=str(path))
    assert ok, report
    for line in ("c vs Pinocchio: passive_force", "c vs Pinocchio: forward_dynamics ",
                 "c vs Pinocchio: forward_dynamics_derivatives", "c vs reference: passive_force",
                 "RNEA(q, qd, FD(q, qd, tau)) = tau (+ tau_p with --passive)", "passive=True"):
        assert line in report, (line, report)


def test_every_forward_dynamics_route_solves_for_tau_plus_the_passive_force():
    """Each variant of the FD and FD-derivative sweeps (ABA, L^T D L in each frame, the dense
    solves) with the passive forces on gives the plain run's value at tau + tau_p, and its
    derivatives gain -M^-1 diag(stiffness), -M^-1 diag(damping)."""
    from symgen.backend import NUMERIC

    seed, routes = 38, set()
    for text in (CHAIN, FLOATING):
        robot = symgen.load_robot(_tmp_model(text))
        state = Q.random_state(np.random.default_rng(seed), robot.nq, robot.nv, layout=robot.joint_layout)
        args = {a: robot.check_state(a, state[a]) for a in ("q", "qd", "tau")}
        plain, passive = Q.SweepOptions(), Q.SweepOptions(passive=True)
        shifted = {**args, "tau": args["tau"] + Q.evaluate(robot, "tau_p", state)}
        Minv = Q.evaluate(robot, "Minv", state)
        for name in ("forward_dynamics", "fd_derivatives"):
            sweep = Q.SWEEPS[name]
            for run in (sweep.run,) + sweep.variants:
                if _constrained_only(run) or text is FLOATING and not getattr(run, "applies", lambda r: True)(robot):
                    continue                # (the local convention runs on single-DoF trees, the chain)
                got, want = run(robot, args, NUMERIC, passive), run(robot, shifted, NUMERIC, plain)
                if name == "fd_derivatives":
                    want = {"dqdd_dq": want["dqdd_dq"] - Minv * robot.stiffness_vector,
                            "dqdd_dqd": want["dqdd_dqd"] - Minv * robot.damping_vector}
                for key, value in want.items():
                    assert _rel(got[key], value) <= 1e-9, (robot.name, name, run.__name__, key, f"seed {seed}")
                routes.add(run.__name__)
    every = {run.__name__ for name in ("forward_dynamics", "fd_derivatives")
             for run in (Q.SWEEPS[name].run,) + Q.SWEEPS[name].variants if not _constrained_only(run)}
    assert routes == every, every - routes


def _constrained_only(run) -> bool:
    """A route for robots with --mimic or couplings (their reduced system), refused with --passive."""
    return getattr(run, "reduced", False) or "cluster" in run.__name__


def _tmp_model(text, suffix="xml"):
    import tempfile
    from pathlib import Path

    folder = Path(tempfile.mkdtemp(prefix="symgen_passive_"))
    return _write(folder, "model", text, suffix)


# ------------------------------------------------------------------------------------------ URDF

@pytest.fixture(scope="module")
def urdf_packages(tmp_path_factory):
    """The damped URDF built by default (forward dynamics without the passive forces, Pinocchio's
    aba) and with --passive, and Pinocchio's own reading of the file."""
    pin = require_pinocchio()
    folder = tmp_path_factory.mktemp("passive_urdf")
    path = _write(folder, "damped", URDF, "urdf")
    robot = symgen.load_urdf(path)
    keys = ("M", "tau", "qdd", "dqdd", "tau_p")
    default = import_package(build(robot, folder / "default", opts=BuildOptions(quantities=keys, copt="-O0")).path)
    on = import_package(build(robot, folder / "on", opts=BuildOptions(quantities=keys, copt="-O0", passive=True)).path)
    return pin, robot, pin.buildModelFromUrdf(str(path)), default, on


def test_urdf_passive_force_is_minus_pinocchios_damping_times_v(urdf_packages):
    pin, robot, model, default, on = urdf_packages
    from symgen.pinocchio_oracle import JointMap

    jm = JointMap.build(robot, model)
    assert np.array_equal(model.damping, [0.5, 2.0, 0.7]) and np.array_equal(default.damping, jm.vec(model.damping))
    assert default.passive is False and on.passive is True and not np.any(on.stiffness)
    seed = 7
    rng = np.random.default_rng(seed)
    for t in range(3):
        s = Q.random_state(rng, robot.nq, robot.nv)
        expected = jm.vec(-model.damping * jm.v(s["qd"]))
        for mod in (default.numpy, default.c, on.c):
            assert _rel(mod.passive_force(s["q"], s["qd"]), expected) <= 1e-12, (f"seed {seed} #{t}", mod.__name__)


def test_urdf_fd_with_passive_is_pinocchios_aba_at_tau_minus_damping_v(urdf_packages):
    """--passive: aba(q, v, tau - model.damping v) and its derivatives (computeABADerivatives there,
    minus M^-1 diag(damping)); the default build: aba(q, v, tau), as Pinocchio's; M and tau (crba,
    rnea) in both."""
    pin, robot, model, default, on = urdf_packages
    from symgen.pinocchio_oracle import JointMap

    jm, data = JointMap.build(robot, model), model.createData()
    seed = 11
    rng = np.random.default_rng(seed)
    for t in range(3):
        where = f"seed {seed} #{t}"
        s = Q.random_state(rng, robot.nq, robot.nv)
        qp, vp, taup = jm.q(s["q"]), jm.v(s["qd"]), jm.v(s["tau"])
        damped = taup - model.damping * vp
        for mod in (on.numpy, on.c):
            assert _rel(mod.forward_dynamics(s["q"], s["qd"], s["tau"]), jm.vec(pin.aba(model, data, qp, vp, damped))) \
                <= 1e-9, where
            dq, dv, Minv = (x.copy() for x in pin.computeABADerivatives(model, data, qp, vp, damped))
            Minv = np.triu(Minv) + np.triu(Minv, 1).T
            ours = mod.forward_dynamics_derivatives(s["q"], s["qd"], s["tau"])
            assert _rel(ours[0], jm.mat(dq)) <= 1e-9, where
            assert _rel(ours[1], jm.mat(dv - Minv * model.damping)) <= 1e-9, where
        for mod in (default.numpy, default.c):
            assert _rel(mod.forward_dynamics(s["q"], s["qd"], s["tau"]), jm.vec(pin.aba(model, data, qp, vp, taup))) \
                <= 1e-9, where
        for mod in (default.c, on.c):               # M and tau: the rigid body's, with or without --passive
            M = pin.crba(model, data, qp)
            assert _rel(mod.mass_matrix(s["q"]), jm.mat(np.triu(M) + np.triu(M, 1).T)) <= 1e-9, where
            assert _rel(mod.inverse_dynamics(s["q"], s["qd"], s["qdd"]),
                        jm.vec(pin.rnea(model, data, qp, vp, jm.v(s["qdd"])))) <= 1e-9, where


def test_urdf_dynamics_are_read_and_what_is_left_out_said(tmp_path):
    robot = symgen.load_urdf(_write(tmp_path, "damped", URDF, "urdf"))
    assert robot.damping == (0.5, 2.0, 0.7) and not robot.stiffness
    assert any("<dynamics friction> of joint(s) 'j1' left out" in n for n in robot.notes), robot.notes
    res = CliRunner().invoke(main, ["info", str(tmp_path / "damped.urdf")])
    assert res.exit_code == 0 and "j2: damping 2" in res.output and "with --passive" in res.output, res.output
    bad = _write(tmp_path, "bad", URDF.replace('damping="2.0"', 'damping="-0.1"'), "urdf")
    with pytest.raises(URDFError, match=r"bad\.urdf.*<joint name='j2'>/<dynamics>.*damping=-0\.1: must be >= 0"):
        symgen.load_urdf(bad)


def test_passive_with_mimic_is_refused_in_one_line(tmp_path):
    """Constrained robots (--mimic, couplings, loops): no passive_force and no --passive yet."""
    text = URDF.replace('<dynamics damping="0.7"/>', '<dynamics damping="0.7"/><mimic joint="j1" multiplier="2"/>')
    path = _write(tmp_path, "mimic", text, "urdf")
    for extra, said in ((["--passive"], "--passive: not supported with --mimic"),
                        (["--quantities", "M,tau_p"], "--quantities: passive_force not generated")):
        res = CliRunner().invoke(main, ["build", str(path), "--mimic", "--name", "damped", "--out", str(tmp_path), "--quiet",
                                        "--no-compile", "--jobs", "1", *extra])
        assert res.exit_code == 2 and said in res.output and len(res.output.strip().splitlines()) == 1, res.output
    robot = symgen.load_urdf(path, mimic=True)
    assert "tau_p" not in Q.available(robot) and Q.resolve(robot, None) is False
    with pytest.raises(OptionError, match="--passive: not supported"):
        Q.evaluate(robot, "qdd", {"q": np.zeros(2), "qd": np.ones(2), "tau": np.zeros(2)}, Q.SweepOptions(passive=True))


# ------------------------------------------------------------------------------- MJCF: the rest

def test_mjcf_defaults_and_info(tmp_path):
    """MJCF: the passive forces in forward dynamics by default (as MuJoCo), --no-passive leaves them
    out; `symgen info` lists each joint's damper and spring."""
    path = _write(tmp_path, "chain", CHAIN)
    robot = symgen.load_robot(path)
    m = mujoco.MjModel.from_xml_path(str(path))
    assert np.allclose(robot.damping_vector, m.dof_damping + [0, 0, 0.1 * 3 ** 2, 0])      # d gear² of the actuator
    assert np.array_equal(robot.stiffness_vector, m.jnt_stiffness)
    assert np.allclose(robot.springref_vector, m.qpos_spring - m.qpos0, atol=1e-15)
    assert Q.resolve(robot, None) is True and Q.resolve(robot, False) is False and "tau_p" in Q.available(robot)
    res = CliRunner().invoke(main, ["info", str(path)])
    assert res.exit_code == 0, res.output
    for text in ("in forward_dynamics by default (MJCF; --no-passive)", "h1: damping 0.4  stiffness 3, springref 0.436332",
                 "h4: stiffness 1.5, springref 0.349066", "actuator 'actuator0': damping 0.1 enters the damping"):
        assert text in res.output, (text, res.output)
    res = CliRunner().invoke(main, ["build", str(path), "--out", str(tmp_path), "--no-compile", "--quiet", "--jobs", "1",
                                    "--quantities", "qdd", "--no-passive"])
    assert res.exit_code == 0, res.output
    pkg = import_package(tmp_path / "spring_chain")
    assert pkg.passive is False and "--no-passive" in (tmp_path / "spring_chain" / "spring_chain.h").read_text()
    s = {"q": np.full(4, 0.3), "qd": np.ones(4), "tau": np.zeros(4)}
    assert _rel(pkg.forward_dynamics(s["q"], s["qd"], s["tau"]), Q.evaluate(robot, "qdd", s, Q.SweepOptions())) <= 1e-12


REFUSED = [
    ('<joint name="j" type="ball" stiffness="1"/>', "<joint name='j'>", "stiffness 1 on a ball joint"),
    ('<joint name="j" type="hinge" damping="0.3 0.1"/>', "<joint name='j'>", "a nonlinear damper"),
    ('<joint name="j" type="hinge" stiffness="1 0.2"/>', "<joint name='j'>", "a nonlinear spring"),
    ('<joint name="j" type="slide" stiffness="1" springyield="0.5"/>', "<joint name='j'>", "a nonlinear spring"),
    ('<joint name="j" type="ball"/>', "<actuator>/<m>", "damping 0.2 of an actuator on the ball or free joint 'j'"),
]


@pytest.mark.parametrize("joint, element, reason", REFUSED, ids=["ball spring", "damping poly", "stiffness poly",
                                                                  "spring yield", "ball actuator damping"])
def test_unmodelled_passive_elements_are_refused_in_one_line(tmp_path, joint, element, reason):
    actuator = '<actuator><motor name="m" joint="j" gear="1 0 0 0 0 0" damping="0.2"/></actuator>' * ("ball" in joint and
                                                                                                   "stiffness" not in joint)
    path = _write(tmp_path, "refused", f'<mujoco><worldbody><body name="b">{joint}<geom type="sphere" size="0.1"/>'
                                       f'</body></worldbody>{actuator}</mujoco>')
    with pytest.raises(URDFError) as info:
        symgen.load_robot(path)
    text = str(info.value)
    assert str(path) in text and element in text and reason in text and "\n" not in text, text


def test_tendon_and_fluid_passive_forces_are_left_out_with_a_warning(tmp_path):
    """MuJoCo adds a tendon's spring and damper and the fluid forces to qfrc_passive; symgen leaves
    them out and says so (a SymgenWarning for the fluid forces and for a tendon with armature; every
    one in the notes), and frictionloss (a constraint) in a note."""
    text = CHAIN.replace("<worldbody>", '<option density="1.2" viscosity="0.001"/><worldbody>').replace(
        'damping="0.25"', 'damping="0.25" frictionloss="0.1"').replace(
        "<actuator>", '<tendon><fixed name="t" armature="0.1" damping="0.3"><joint joint="h1" coef="1"/></fixed>'
                      '<fixed name="u" stiffness="2"><joint joint="h1" coef="1"/><joint joint="h4" coef="-1"/></fixed>'
                      '</tendon><actuator>')
    path = _write(tmp_path, "leaky", text)
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        robot = symgen.load_robot(path)
    lines = [str(w.message) for w in said if issubclass(w.category, SymgenWarning) and "passive_force" in str(w.message)]
    assert len(lines) == 1 and "fluid forces (<option density=1.2 viscosity=0.001>)" in lines[0], lines
    assert "tendon 't': damping 0.3" in lines[0] and "\n" not in lines[0], lines
    notes = " | ".join(robot.notes)
    assert "tendon 'u': stiffness 2" in notes and "frictionloss of joint(s) 'h3' left out" in notes, notes


def test_an_mjcf_model_with_couplings_builds_without_its_passive_forces_and_says_so(tmp_path):
    """manipulator.xml (a tendon equality: a coupling) has joint dampers: the build leaves them out
    of forward dynamics (not supported with couplings yet) with a note, and has no passive_force."""
    from pathlib import Path

    path = Path(__file__).resolve().parent / "data" / "mjcf" / "manipulator.xml"
    res = CliRunner().invoke(main, ["build", str(path), "--name", "manip", "--out", str(tmp_path), "--no-compile",
                                    "--quiet", "--jobs", "1", "--quantities", "M"])
    assert res.exit_code == 0, res.output
    assert "symgen: note: the joints' dampers and springs are left out" in res.output, res.output
    pkg = import_package(tmp_path / "manip")
    assert pkg.passive is False and not np.any(pkg.damping) and not hasattr(pkg, "passive_force")
