"""Pinocchio's CppADCodeGen ``CodeGenConstraintDynamics`` as the rival of a --contacts package's
contact_dynamics in ``symgen bench --cppadcg`` (issue #25; optional: cmeel-cppadcodegen, the
cppadcg extra). The reference it is checked against is Pinocchio's double constraintDynamics, which
for point contacts (LOCAL_WORLD_ALIGNED) is forwardDynamics with the stacked frame Jacobians and
classical drift; the library agrees with it; a disagreement and a package without contacts are one
line of BenchError. The tests that need the C++ harness are slow (built once, minutes, cached)."""
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pinocchio")

from symgen.bench import cppadcg as cg  # noqa: E402
from symgen.bench.harness import BenchError  # noqa: E402
from symgen.oracle_contact_derivatives import constraint_models  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
ARM4 = ROOT / "generated" / "arm4"
ARM4_URDF = ROOT / "symgen" / "examples" / "arm4.urdf"
CONTACTS = (("wrist_link", "3d"),)

from test_cppadcg import _one_line, needs_cppadcg  # noqa: E402  (the cppadcg tests' skip and one-line check)


def test_a_package_without_contacts_is_one_line():
    with pytest.raises(BenchError) as exc:
        cg.constraint_dynamics(ARM4, ARM4_URDF)
    assert "--contacts" in _one_line(exc)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_reference_is_forward_dynamics_with_the_classical_drift(seed):
    """constraint_reference (what the library is checked against) against Pinocchio's
    forwardDynamics(q, v, tau, J, gamma) with J and gamma formed by hand (point contact, world axes)."""
    import pinocchio as pin

    model = pin.buildModelFromUrdf(str(ARM4_URDF))
    fid = model.getFrameId("wrist_link")
    rng = np.random.default_rng(seed)
    q, v, tau = rng.uniform(-1, 1, model.nq), rng.uniform(-2, 2, model.nv), rng.uniform(-5, 5, model.nv)
    got = cg.constraint_reference(pin, model, constraint_models(pin, model, [fid], ["3d"]), q, v, tau)
    data = model.createData()
    pin.computeJointJacobians(model, data, q)
    pin.forwardKinematics(model, data, q, v, np.zeros(model.nv))
    pin.updateFramePlacements(model, data)
    J = pin.getFrameJacobian(model, data, fid, pin.LOCAL_WORLD_ALIGNED)[:3]
    gamma = pin.getFrameClassicalAcceleration(model, data, fid, pin.LOCAL_WORLD_ALIGNED).linear
    ddq = pin.forwardDynamics(model, data, q, v, tau, J, gamma, 0.0)
    want = np.concatenate([ddq, data.lambda_c])
    assert np.allclose(got, want, rtol=1e-9, atol=1e-9 * max(1.0, np.max(np.abs(want)))), f"seed={seed}"


@pytest.mark.parametrize("seed", [0, 1])
def test_derivative_reference_layout_is_the_tapes(seed):
    """constraint_reference(derivatives=True), laid out as CodeGenConstraintDynamicsDerivatives
    writes (ddq_* row-major, dlambda_* column-major), against central differences of
    [ddq, lambda] in v and tau (a 3 x 4 dlambda block: a transposed layout would not fit)."""
    import pinocchio as pin

    model = pin.buildModelFromUrdf(str(ARM4_URDF))
    models = constraint_models(pin, model, [model.getFrameId("wrist_link")], ["3d"])
    rng = np.random.default_rng(seed)
    q, v, tau = rng.uniform(-1, 1, model.nq), rng.uniform(-2, 2, model.nv), rng.uniform(-5, 5, model.nv)
    n, m = model.nv, 3
    flat = cg.constraint_reference(pin, model, models, q, v, tau, derivatives=True)
    assert flat.size == 3 * n * n + 3 * m * n
    blocks = np.split(flat, np.cumsum([n * n] * 3 + [m * n] * 2))
    ddq_dv, ddq_dtau = blocks[1].reshape(n, n), blocks[2].reshape(n, n)
    dlam_dv, dlam_dtau = blocks[4].reshape(m, n, order="F"), blocks[5].reshape(m, n, order="F")
    h = 1e-6
    for k in range(n):
        e = np.eye(n)[k] * h
        for arg, ddq_d, dlam_d in ((1, ddq_dv, dlam_dv), (2, ddq_dtau, dlam_dtau)):
            plus, minus = [list((q, v, tau)) for _ in range(2)]
            plus[arg], minus[arg] = plus[arg] + e, minus[arg] - e
            fd = (cg.constraint_reference(pin, model, models, *plus) - cg.constraint_reference(pin, model, models, *minus)) / (2 * h)
            scale = max(1.0, np.max(np.abs(fd)))
            assert np.allclose(fd[:n], ddq_d[:, k], atol=1e-5 * scale), f"seed={seed} arg={arg} column {k}"
            assert np.allclose(fd[n:], dlam_d[:, k], atol=1e-5 * scale), f"seed={seed} arg={arg} column {k}"


@pytest.fixture(scope="module")
def package(tmp_path_factory):
    """arm4 with a point contact at its wrist, contact_terms and contact_partials (seconds)."""
    import symgen
    from symgen.codegen.build import BuildOptions, build

    robot = symgen.load_urdf(str(ARM4_URDF))
    opts = BuildOptions(quantities=("contact_terms", "contact_partials"), contacts=CONTACTS, copt="-O1", jobs=2)
    return build(robot, tmp_path_factory.mktemp("cgcd"), name="armc", opts=opts).path


def test_a_bench_of_contact_functions_alone_builds_no_other_library(package, monkeypatch):
    """``symgen bench --cppadcg --functions contact_terms``: none of the quantities has a
    CppADCodeGen counterpart, so no library of them is built (before: an empty one, and an empty
    "max relative error" line in the report); the contact rows are kept in the JSON."""
    from types import SimpleNamespace

    from symgen.bench.cloop import read_manifest
    from symgen.bench.measure import Measurement
    from symgen.bench.report import format_report

    def no_library(*args, **kwargs):
        raise AssertionError("pinocchio_cppadcg called for contact functions alone")

    fake = {"us": {"symgen": 1.0, cg.METHOD: 2.0, cg.EVAL_METHOD: 2.1, "pinocchio": 4.0},
            "ratio": {cg.METHOD: 2.0, cg.EVAL_METHOD: 2.1, "pinocchio": 4.0}, "check": 1e-14,
            "contacts": ["wrist_link:3d"], "function": cg.CD}
    monkeypatch.setattr(cg, "pinocchio_cppadcg", no_library)
    monkeypatch.setattr(cg, "constraint_dynamics", lambda *a, derivatives=False, **k: {
        **fake, "function": cg.CDD if derivatives else cg.CD})
    m = Measurement()
    settings = SimpleNamespace(flags="-O1", repeats=1, min_time=0.001, pin_timeout=60)
    cg.measure(m, package, ARM4_URDF, read_manifest(package), ["contact_terms"], settings)
    assert set(m.info["cppadcg"]) == {cg.CD, cg.CDD}
    assert "CodeGenConstraintDynamics (wrist_link:3d" in m.notes[f"cppadcg_{cg.CD}"]
    text = format_report({"package": "armc", "robot": "arm4", "nv": 4, "flags": "-O1", "us": {}, "spread_us": {},
                        "ratios": {}, "notes": {}, "machine": {"cpu": "x"}, "cppadcg": m.info["cppadcg"]})
    assert "max relative error" not in text


@needs_cppadcg
@pytest.mark.slow
def test_library_agrees_and_is_timed_beside_ours(package):
    out = cg.constraint_dynamics(package, ARM4_URDF, flags="-O1", repeats=1, min_time=0.001, count=4)
    assert out["check"] < 1e-9, out["check"]
    assert set(out["us"]) == {"symgen", cg.METHOD, cg.EVAL_METHOD, "pinocchio"}
    assert all(t > 0 for t in out["us"].values()) and out["bytes"] > 0
    assert "CodeGenConstraintDynamics (wrist_link:3d" in cg.format_constraint(out)


@needs_cppadcg
@pytest.mark.slow
def test_check_refuses_a_library_that_disagrees(package, monkeypatch):
    real = cg.constraint_reference
    monkeypatch.setattr(cg, "constraint_reference", lambda *a: real(*a) * (1 + 1e-6))
    with pytest.raises(BenchError, match="disagrees with Pinocchio") as exc:
        cg.constraint_dynamics(package, ARM4_URDF, flags="-O1", repeats=1, min_time=0.001, count=4)
    _one_line(exc)


@needs_cppadcg
@pytest.mark.slow
def test_derivatives_library_agrees_and_is_timed_beside_ours(package):
    out = cg.constraint_dynamics(package, ARM4_URDF, flags="-O1", repeats=1, min_time=0.001, count=4,
                                 derivatives=True)
    assert out["check"] < 1e-9, out["check"]
    assert out["function"] == cg.CDD and all(t > 0 for t in out["us"].values())
    assert "CodeGenConstraintDynamicsDerivatives (wrist_link:3d" in cg.format_constraint(out)
