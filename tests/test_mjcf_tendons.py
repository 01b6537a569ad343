"""MJCF tendons (symgen.mjcf_tendons, issue #38 item 1) against MuJoCo.

- tests/data/mjcf/tendons.xml: a fixed tendon of two joints and a spatial one without armature
  (left out, named in one SymgenWarning), a one-joint fixed tendon with armature: M = MuJoCo's
  mj_fullM (which holds Jᵀ a J), the bias qfrc_bias, M q̈ + bias and forward dynamics (MuJoCo's
  qacc with passive forces, constraints and actuators off) to 1e-9; and the generated package
  (NumPy and C) of the same.
- tests/data/mjcf/tendon_equality.xml: ``<equality><tendon>`` of two fixed tendons embedded as a
  linear coupling: at q_full = G q + o MuJoCo's equality residual (efc_pos) is 0, M̄ = Gᵀ M G and
  the bias Gᵀ qfrc_bias(q_full, G v) with MuJoCo's M and bias of the full tree.
  The same on dm_control's manipulator and stacker (a fixed-base arm with an <equality><tendon>
  between its fingers, beside objects on slide and hinge joints).
- dm_control's ball_in_cup, fish and point_mass (tendons without armature) are in
  tests/test_mjcf.py's suite test.
- Refusals, one line each: a spatial tendon with armature, a fixed tendon of several joints with
  armature, an equality on a spatial tendon, a nonlinear polycoef.
Every comparison names its seed.
"""
from __future__ import annotations

import warnings
import zlib
from pathlib import Path

import numpy as np
import pytest

import symgen
from symgen.errors import SymgenWarning, URDFError

mujoco = pytest.importorskip("mujoco")

DATA = Path(__file__).resolve().parent / "data" / "mjcf"
TENDONS = DATA / "tendons.xml"
EQUALITY = DATA / "tendon_equality.xml"
OFF = ("mjDSBL_CONTACT", "mjDSBL_CONSTRAINT", "mjDSBL_SPRING", "mjDSBL_DAMPER", "mjDSBL_ACTUATION",
       "mjDSBL_PASSIVE")


def _terms(m, qpos, qvel):
    """MuJoCo's M (mj_fullM, tendon armature included) and bias (qfrc_bias)."""
    d = mujoco.MjData(m)
    d.qpos[:], d.qvel[:] = qpos, qvel
    mujoco.mj_forward(m, d)
    M = np.zeros((m.nv, m.nv))
    mujoco.mj_fullM(m, d, M)
    return M, d.qfrc_bias.copy(), d


def _rigid(m):
    """The model with passive forces, constraints and actuation off (its qacc: M⁻¹ (τ - bias))."""
    for flag in OFF:
        if hasattr(mujoco.mjtDisableBit, flag):
            m.opt.disableflags |= int(getattr(mujoco.mjtDisableBit, flag))
    return m


def _fd(robot, q, v, tau):
    from symgen import quantities as Q

    return Q.evaluate(robot, "qdd", {"q": q, "qd": v, "tau": tau}, Q.SweepOptions(frame="body", gravity=robot.gravity))


def _rel(a, b):
    return np.abs(np.asarray(a) - np.asarray(b)).max() / max(1.0, np.abs(b).max())


def test_tendons_without_armature_are_left_out_in_one_warning_and_armature_enters_m():
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        robot = symgen.load_robot(TENDONS)
    lines = [str(w.message) for w in said if issubclass(w.category, SymgenWarning)]
    assert len(lines) == 1 and "'coupled', 'string' left out" in lines[0] and "\n" not in lines[0], lines
    assert str(TENDONS) in lines[0] and "armature" in lines[0]
    m = _rigid(mujoco.MjModel.from_xml_path(str(TENDONS)))
    twist = robot.joint_names.index("twist")
    assert robot.armature_vector[twist] == pytest.approx(0.3 * 2 ** 2)     # a c²
    seed = zlib.crc32(b"tendons")
    rng = np.random.default_rng(seed)
    for t in range(4):
        where = f"seed {seed} #{t}"
        q, v, a, tau = (rng.uniform(-1, 1, robot.n) for _ in range(4))
        M_mj, bias_mj, d = _terms(m, q + m.qpos0, v)
        assert _rel(symgen.mass_matrix(robot, q), M_mj) < 1e-9, where
        tau_sym = symgen.inverse_dynamics(robot, q, v, a, gravity=robot.gravity)
        assert _rel(symgen.inverse_dynamics(robot, q, v, np.zeros(robot.n), gravity=robot.gravity), bias_mj) < 1e-9, where
        assert _rel(tau_sym, M_mj @ a + bias_mj) < 1e-9, where
        d.qfrc_applied[:] = tau
        mujoco.mj_forward(m, d)
        qdd = _fd(robot, q, v, tau)
        assert _rel(qdd, d.qacc) < 1e-9, where


def test_the_tendon_models_package_matches_mujoco(tmp_path):
    from symgen.codegen.build import BuildOptions, build, import_package

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SymgenWarning)
        robot = symgen.load_robot(TENDONS)
    # the rigid dynamics (MJCF's default, --passive, would add the joints' springs and dampers to FD)
    opts = BuildOptions(quantities=("M", "tau", "qdd", "Minv"), gravity=robot.gravity, copt="-O0", passive=False)
    pkg = import_package(build(robot, tmp_path, opts=opts).path)
    roles = (("coupled", "fixed", "left out"), ("geared", "fixed", "armature"), ("string", "spatial", "left out"))
    assert robot.tendons == pkg.tendons == pkg.numpy.tendons == pkg.c.tendons == roles
    import json
    assert json.loads((Path(pkg.__file__).parent / "manifest.json").read_text())["tendons"] == [list(r) for r in roles]
    m = _rigid(mujoco.MjModel.from_xml_path(str(TENDONS)))
    seed = zlib.crc32(b"tendons-package")
    rng = np.random.default_rng(seed)
    for backend in ("numpy", "c"):
        mod = getattr(pkg, backend)
        for t in range(2):
            where = f"{backend} seed {seed} #{t}"
            q, v, a, tau = (rng.uniform(-1, 1, robot.n) for _ in range(4))
            M_mj, bias_mj, d = _terms(m, q + m.qpos0, v)
            d.qfrc_applied[:] = tau
            mujoco.mj_forward(m, d)
            assert _rel(mod.mass_matrix(q), M_mj) < 1e-9, where
            assert _rel(mod.mass_matrix_inverse(q), np.linalg.inv(M_mj)) < 1e-9, where
            assert _rel(mod.inverse_dynamics(q, v, a), M_mj @ a + bias_mj) < 1e-9, where
            assert _rel(mod.forward_dynamics(q, v, tau), d.qacc) < 1e-9, where


def test_info_lists_the_tendons_and_what_each_does(tmp_path):
    """``symgen info`` (and the model's ``tendons``): each tendon's name, kind and role: in M by its
    armature, an embedded coupling (held by an <equality tendon>) or left out."""
    from click.testing import CliRunner

    from symgen.cli import main

    out = CliRunner().invoke(main, ["info", str(EQUALITY)])
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    at = lines.index("  tendons: 3")
    assert [" ".join(x.split()) for x in lines[at + 1:at + 4]] == ["flexor fixed coupling", "extensor fixed coupling",
                                                                   "lone fixed left out"], out.output
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SymgenWarning)
        assert symgen.load_robot(EQUALITY).tendons[0] == ("flexor", "fixed", "coupling")
        assert symgen.load_robot(DATA / "manipulator.xml").tendons       # dm_control's: every tendon listed


@pytest.mark.parametrize("path", [EQUALITY, DATA / "manipulator.xml", DATA / "stacker.xml"], ids=lambda p: p.stem)
def test_a_tendon_equality_is_embedded_as_a_linear_coupling(path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SymgenWarning)
        robot = symgen.load_robot(path)
    if path == EQUALITY:
        assert robot.joint_names == ("mcp", "pip", "dip") and robot.full.n == 4
    emb = robot.embedding
    G, o = emb.matrix(), emb.offsets()
    m = mujoco.MjModel.from_xml_path(str(path))
    assert robot.nv == m.nv - 1
    seed = zlib.crc32(path.name.encode())
    rng = np.random.default_rng(seed)
    for t in range(4):
        where = f"seed {seed} #{t}"
        q, v = rng.uniform(-1, 1, robot.nq), rng.uniform(-1, 1, robot.nv)
        qpos = G @ q + o + m.qpos0
        M_mj, bias_mj, d = _terms(m, qpos, G @ v)
        eq_rows = [i for i in range(d.nefc) if d.efc_type[i] == mujoco.mjtConstraint.mjCNSTR_EQUALITY]
        assert len(eq_rows) == 1 and abs(d.efc_pos[eq_rows[0]]) < 1e-12, where      # the tendons held
        assert _rel(symgen.mass_matrix(robot, q), G.T @ M_mj @ G) < 1e-9, where
        bias = symgen.inverse_dynamics(robot, q, v, np.zeros(robot.nv), gravity=robot.gravity)
        assert _rel(bias, G.T @ bias_mj) < 1e-9, where
        tau = rng.uniform(-1, 1, robot.nv)
        qdd = _fd(robot, q, v, tau)
        assert _rel(qdd, np.linalg.solve(G.T @ M_mj @ G, tau - G.T @ bias_mj)) < 1e-9, where


ARM = """<mujoco><worldbody><site name="s0"/><body name="a"><joint name="h1" axis="0 0 1"/>
<geom size=".1" pos=".2 0 0"/><site name="s1" pos=".2 0 0"/><body name="b" pos=".3 0 0"><joint name="h2" axis="0 1 0"/>
<geom size=".1" pos=".2 0 0"/></body></body></worldbody><tendon>{tendons}</tendon>{equality}</mujoco>"""
TWO = '<fixed name="pair"{extra}><joint joint="h1" coef="1"/><joint joint="h2" coef="2"/></fixed>'
ONE = '<fixed name="one"><joint joint="h2" coef="1"/></fixed>'
CORD = '<spatial name="cord"{extra}><site site="s0"/><site site="s1"/></spatial>'


@pytest.mark.parametrize("tendons, equality, element, reason", [
    (CORD.format(extra=' armature="0.1"'), "", "<tendon>/<spatial name='cord'>", "spatial tendon with armature"),
    (TWO.format(extra=' armature="0.2"'), "", "<tendon>/<fixed name='pair'>", "several joints with armature"),
    (CORD.format(extra="") + ONE, '<equality><tendon tendon1="cord" tendon2="one"/></equality>',
     "<equality>/<tendon tendon1='cord'>", "is spatial"),
    (TWO.format(extra="") + ONE, '<equality><tendon tendon1="pair" tendon2="one" polycoef="0 1 0.5 0 0"/></equality>',
     "<equality>/<tendon tendon1='pair'>", "linear polycoef"),
])
def test_tendon_refusals_are_one_line(tmp_path, tendons, equality, element, reason):
    from click.testing import CliRunner

    from symgen.cli import main

    path = tmp_path / "bad.xml"
    path.write_text(ARM.format(tendons=tendons, equality=equality))
    with pytest.raises(URDFError) as info:
        symgen.load_robot(path)
    message = str(info.value)
    assert element in message and reason in message and str(path) in message and "\n" not in message, message
    result = CliRunner().invoke(main, ["info", str(path)])
    assert result.exit_code == 2 and element in result.output, result.output
