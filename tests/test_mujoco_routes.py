"""The routes `symgen bench --mujoco` compares with MuJoCo (issue #23 item 6): forward dynamics by
the local-convention CRBA and RNEA then L^T D L (``sweeps._forward_dynamics_local``), against
MuJoCo's own ``qacc`` (``mj_forward``, contacts and constraints off) on MJCF models and against
Pinocchio's ``aba`` on panda; and the exact joint turns of :attr:`Robot.z_aligned` (entries within
1e-12 of 0 or ±1 snapped), against MuJoCo's ``mj_fullM``."""
from __future__ import annotations

import zlib

import numpy as np
import pytest

import symgen
from symgen import quantities as Q
from symgen.backend import NUMERIC
from symgen.mjcf_convert import ball_slots, from_mujoco
from symgen.quantities import sweeps

from support import PinOracle, erd_path

from test_mjcf import (DATA, _compile_erd_to_mjcf, _mujoco_terms, _needs_mujoco, _random_mujoco_state,  # noqa: F401
                       _velocity_map, mujoco)


def _solo12_mjcf(tmp_path):
    """solo12 as MJCF as the README's benchmark makes it: example-robot-data's URDF compiled by
    MuJoCo (mj_saveLastXML, static bodies kept), a free joint opening its base body."""
    _, path = _compile_erd_to_mjcf(tmp_path, "solo_description/robots/solo12.urdf", floating_base=True)
    mjcf = path.read_text()
    body = mjcf.index(">", mjcf.index("<body", mjcf.index("<worldbody"))) + 1
    path.write_text(mjcf[:body] + "<freejoint/>" + mjcf[body:])
    return path


def _mujoco_qacc(m, qpos, qvel, qfrc):
    """MuJoCo's contact-free forward dynamics (what the bench times)."""
    from symgen.bench.mujoco import _disabled

    m.opt.disableflags |= _disabled(mujoco)              # contacts, constraints, springs, dampers, actuators
    d = mujoco.MjData(m)
    d.qpos[:], d.qvel[:], d.qfrc_applied[:] = qpos, qvel, qfrc
    mujoco.mj_forward(m, d)
    return d.qacc.copy()


def _model(name, tmp_path):
    return _solo12_mjcf(tmp_path) if name == "solo12" else DATA / f"{name}.xml"


@pytest.mark.parametrize("name", ["solo12", "humanoid", "cheetah"])
def test_local_forward_dynamics_matches_mujocos_qacc(name, tmp_path):
    path = _model(name, tmp_path)
    robot = symgen.load_robot(path)
    m = mujoco.MjModel.from_xml_path(str(path))
    seed = zlib.crc32(name.encode())
    rng = np.random.default_rng(seed)
    opts = Q.SweepOptions(gravity=robot.gravity)
    for t in range(2):
        qpos, qvel = _random_mujoco_state(m, rng)
        qfrc = rng.uniform(-5.0, 5.0, m.nv)
        q, v = from_mujoco(qpos, qvel, robot.mujoco_qpos0, robot.floating_base, ball_slots(robot))
        T, Tdot_qvel = _velocity_map(robot, q, v)
        tau = T @ qfrc                                   # T^T tau = qfrc, T orthogonal
        qdd = sweeps._forward_dynamics_local(robot, {"q": q, "qd": v, "tau": tau}, NUMERIC, opts)["qdd"]
        qacc = _mujoco_qacc(m, qpos, qvel, qfrc)
        ours = T.T @ (np.asarray(qdd, dtype=float) - Tdot_qvel)
        assert np.abs(ours - qacc).max() <= 1e-9 * max(1.0, np.abs(qacc).max()), f"{name} seed={seed} state#{t}"


@pytest.mark.pinocchio
def test_local_forward_dynamics_matches_pinocchios_aba_on_panda(pin):
    from symgen.urdf import load_urdf

    path = erd_path("panda_description/urdf/panda.urdf")
    robot = load_urdf(path)
    oracle = PinOracle(robot, pin.buildModelFromUrdf(str(path)))
    rng = np.random.default_rng(23)
    for t in range(3):
        q, v, tau = rng.uniform(-1, 1, robot.nq), rng.uniform(-2, 2, robot.n), rng.uniform(-5, 5, robot.n)
        qdd = sweeps._forward_dynamics_local(robot, {"q": q, "qd": v, "tau": tau}, NUMERIC, Q.SweepOptions())["qdd"]
        expected = oracle.forward_dynamics(q, v, tau)
        assert np.abs(np.asarray(qdd, dtype=float) - expected).max() <= 1e-9 * max(1.0, np.abs(expected).max()), \
            f"panda seed=23 state#{t}"


def test_turns_between_agreeing_axes_are_exact_and_m_still_matches_mujoco():
    """The humanoid's elbow turns about the shoulder's second axis, (0, -1, 1)/sqrt 2: the turn
    between the two z-aligned frames is exactly the identity (a product of three rotations left
    1 + 2e-16 and 4e-17), so the generated code does not multiply by it."""
    path = DATA / "humanoid.xml"
    robot = symgen.load_robot(path)
    k = [b.name for b in robot.bodies].index("right_lower_arm")
    assert np.array_equal(robot.z_aligned[k][0], np.eye(3))
    for Rt, *_ in robot.z_aligned:
        assert np.allclose(Rt @ Rt.T, np.eye(3), atol=1e-12)
    m = mujoco.MjModel.from_xml_path(str(path))
    rng = np.random.default_rng(7)
    qpos, qvel = _random_mujoco_state(m, rng)
    q, v = from_mujoco(qpos, qvel, robot.mujoco_qpos0, robot.floating_base, ball_slots(robot))
    M_mj, _ = _mujoco_terms(m, qpos, qvel)
    T, _ = _velocity_map(robot, q, v)
    M = symgen.mass_matrix(robot, q)
    assert np.abs(T.T @ M @ T - M_mj).max() <= 1e-9 * np.abs(M_mj).max(), "humanoid seed=7"


def test_ground_crba_and_aba_with_named_first_moments_match_mujoco():
    """crba_ground and aba_ground read the ground inertias with h = m c named
    (``ground_frames(first_moments=True)``): the humanoid's M and qacc against MuJoCo's."""
    from symgen.algorithms.aba import aba_ground
    from symgen.algorithms.crba import crba_ground

    path = DATA / "humanoid.xml"
    robot = symgen.load_robot(path)
    m = mujoco.MjModel.from_xml_path(str(path))
    rng = np.random.default_rng(11)
    for t in range(2):
        qpos, qvel = _random_mujoco_state(m, rng)
        qfrc = rng.uniform(-5.0, 5.0, m.nv)
        q, v = from_mujoco(qpos, qvel, robot.mujoco_qpos0, robot.floating_base, ball_slots(robot))
        T, Tdot_qvel = _velocity_map(robot, q, v)
        M_mj, _ = _mujoco_terms(m, qpos, qvel)
        M = np.asarray(crba_ground(robot, q, NUMERIC), dtype=float)
        assert np.abs(T.T @ M @ T - M_mj).max() <= 1e-9 * np.abs(M_mj).max(), f"humanoid seed=11 state#{t}"
        qdd = np.asarray(aba_ground(robot, q, v, T @ qfrc, NUMERIC, gravity=robot.gravity), dtype=float)
        qacc = _mujoco_qacc(m, qpos, qvel, qfrc)
        assert np.abs(T.T @ (qdd - Tdot_qvel) - qacc).max() <= 1e-9 * max(1.0, np.abs(qacc).max()), \
            f"humanoid seed=11 state#{t}"


@pytest.mark.parametrize("name", ["solo12", "humanoid"])
def test_rnea_and_gravity_by_rotation_and_offset_match_mujocos_bias(name, tmp_path):
    """The variants that move motions and forces across revolute joints by rotation and offset
    (``rnea(offsets=True)``): C v + g at the state and g at rest against MuJoCo's qfrc_bias."""
    path = _model(name, tmp_path)
    robot = symgen.load_robot(path)
    m = mujoco.MjModel.from_xml_path(str(path))
    seed = zlib.crc32(name.encode()) + 1
    rng = np.random.default_rng(seed)
    opts = Q.SweepOptions(gravity=robot.gravity)
    for t in range(2):
        qpos, qvel = _random_mujoco_state(m, rng)
        q, v = from_mujoco(qpos, qvel, robot.mujoco_qpos0, robot.floating_base, ball_slots(robot))
        T, Tdot_qvel = _velocity_map(robot, q, v)
        M_mj, bias_mj = _mujoco_terms(m, qpos, qvel)
        _, g_mj = _mujoco_terms(m, qpos, 0 * qvel)
        b = np.asarray(sweeps._rnea_offsets(robot, {"q": q, "qd": v, "qdd": np.zeros(robot.n)}, NUMERIC, opts)["tau"],
                       dtype=float)
        g = np.asarray(sweeps._gravity_offsets(robot, {"q": q}, NUMERIC, opts)["g"], dtype=float)
        ctx = f"{name} seed={seed} state#{t}"
        assert np.abs(T.T @ b + M_mj @ (T.T @ Tdot_qvel) - bias_mj).max() <= 1e-9 * max(1.0, np.abs(bias_mj).max()), ctx
        assert np.abs(T.T @ g - g_mj).max() <= 1e-9 * max(1.0, np.abs(g_mj).max()), ctx


def test_one_state_c_takes_sin_and_cos_from_lanes_as_libm_gives_them(tmp_path):
    """A one-state C function reads its joints' sin and cos from ``lanes_sincos_n`` (LANES
    angles a call); its values equal the NumPy module's (libm) to a few ulp, at small angles,
    at multiples of pi/2 and past lanes_sincos's reduction range (|x| > 2^17: libm lane by lane)."""
    from symgen.codegen.build import BuildOptions, build, import_package

    robot = symgen.load_robot(DATA / "cheetah.xml")
    pkg = import_package(build(robot, tmp_path, opts=BuildOptions(quantities=("M", "tau"))).path)
    assert "lanes_sincos_n(ta_" in (tmp_path / "cheetah" / "cheetah.c").read_text()
    rng = np.random.default_rng(5)
    for t, scale in enumerate((1.0, 100.0, 3e5)):
        q = rng.uniform(-scale, scale, robot.nq)
        q[:3] = (np.pi / 2, -np.pi, 3 * np.pi / 2)[:min(3, robot.nq)]
        v, a = rng.uniform(-1, 1, robot.n), rng.uniform(-1, 1, robot.n)
        for f, args in (("mass_matrix", (q,)), ("inverse_dynamics", (q, v, a))):
            c, ref = getattr(pkg.c, f)(*args), getattr(pkg.numpy, f)(*args)
            assert np.abs(c - ref).max() <= 1e-12 * max(1.0, np.abs(ref).max()), f"{f} seed=5 scale={scale}"


def test_offsets_rnea_takes_continuous_joints_too():
    """rnea(offsets=True) moves across continuous joints as across revolute ones (they are the same
    joint), and equals the plain RNEA (the rotor chain: three continuous rotors)."""
    from symgen.algorithms.rnea import _offset, rnea

    robot = symgen.load_urdf(DATA.parent / "urdfplus" / "rotor_chain.urdf").full
    kinds = [b.joint_type for b in robot.bodies]
    assert "continuous" in kinds
    assert all(_offset(robot, i) is not None for i, k in enumerate(kinds) if k in ("revolute", "continuous"))
    rng = np.random.default_rng(7)
    for t in range(3):
        q, v, a = (rng.uniform(-2.0, 2.0, robot.n) for _ in range(3))
        ref = rnea(robot, q, v, a, NUMERIC)
        assert np.abs(rnea(robot, q, v, a, NUMERIC, offsets=True) - ref).max() <= 1e-12 * max(1.0, np.abs(ref).max()), \
            f"seed 7 #{t}"
