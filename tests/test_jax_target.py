"""The JAX target (``symgen build --target numpy,c,jax``, ``pkg.jax``) on arm4, a free-flyer and a
``--mimic`` robot: every function equals the NumPy module (float64 to 1e-12, one state, a leading
batch axis and ``jax.vmap``; float32 to 1e-5 relative), ``jax.jacfwd`` of inverse dynamics equals the generated analytical derivatives, a
batch sharded over two (forced) CPU devices equals the one-device result, and a bad ``--target``
is a one-line error. One package per robot per module; the compiles dominate the time."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

jax = pytest.importorskip("jax")

from symgen import load_urdf, robots  # noqa: E402
from symgen.codegen.build import BuildOptions, build  # noqa: E402
from symgen.codegen.package import import_package  # noqa: E402
from symgen.urdf import write_urdf  # noqa: E402

try:
    from jax import enable_x64                  # jax >= 0.7
except ImportError:
    from jax.experimental import enable_x64     # before (adam-robotics pins jax <= 0.6)
ROOT = Path(__file__).resolve().parents[1]
ARM4 = ROOT / "symgen" / "examples" / "arm4.urdf"
SEED = 2026
#: the free-flyer's and the mimic robot's functions (a few: each is one more XLA compile)
FLOATING = ("M", "C", "tau", "g", "J")


def _build(robot, out, name, quantities=None, compile=True):
    """compile: the C too, and with it the XLA FFI library, which the JAX functions then call on
    this CPU for float64 (their own jax code for derivatives and float32); else their own code only."""
    opts = BuildOptions(targets=("numpy", "c", "jax"), compile=compile,
                        **({"quantities": quantities} if quantities else {}))
    pkg = import_package(build(robot, out, name=name, opts=opts).path)
    assert (pkg.jax._XLA is not None) == compile and len(pkg.jax.XLA_FUNCTIONS) == len(_functions(pkg)), name
    return pkg


@pytest.fixture(scope="module")
def arm4(tmp_path_factory):
    return _build(load_urdf(ARM4), tmp_path_factory.mktemp("jax"), "arm4")


@pytest.fixture(scope="module")
def arm4_own(tmp_path_factory):
    """arm4 without the C: the JAX functions' own code on the CPU too (what a GPU runs)."""
    return _build(load_urdf(ARM4), tmp_path_factory.mktemp("jaxown"), "arm4", compile=False)


@pytest.fixture(scope="module")
def mimic(tmp_path_factory):
    """tests/test_mimic.py's gripper with --mimic: reduced coordinates (7 joints, nv = 4)."""
    from test_mimic import gripper

    folder = tmp_path_factory.mktemp("jaxmimic")
    (folder / "gripper.urdf").write_text(gripper())
    return _build(load_urdf(folder / "gripper.urdf", mimic=True), folder, "gripper", FLOATING)


@pytest.fixture(scope="module")
def floating(tmp_path_factory):
    """A 2-joint serial chain on a free-flyer (nq = 9, nv = 8), from `symgen model`."""
    folder = tmp_path_factory.mktemp("jaxff")
    write_urdf(robots.make("serial", 2, 0), folder / "serial2.urdf")
    return _build(load_urdf(folder / "serial2.urdf", floating_base=True), folder, "serial2ff", FLOATING)


def _arguments(pkg, inputs, rng, lead=()):
    """Random arguments of a function (q with a unit quaternion on a free-flyer)."""
    out = []
    for name in inputs:
        x = rng.uniform(-2.0, 2.0, lead + ((pkg.nq if name == "q" else pkg.nv),))
        if name == "q" and pkg.nq != pkg.nv:
            x[..., 3:7] /= np.linalg.norm(x[..., 3:7], axis=-1, keepdims=True)
        out.append(x)
    return out


def _functions(pkg):
    manifest = json.loads((Path(pkg.__file__).parent / "manifest.json").read_text())
    return {f: info["inputs"] for f, info in manifest["functions"].items()}


def _flat(value):
    return np.concatenate([np.ravel(np.asarray(v)) for v in (value if isinstance(value, tuple) else (value,))])


def _assert_equal(got, want, tol, what):
    got, want = _flat(got), _flat(want)
    err = np.max(np.abs(got - want)) / max(1.0, np.max(np.abs(want)))
    assert err <= tol, f"{what}: relative error {err:.2e} > {tol:.0e} (seed {SEED})"


#: the functions also checked one state at a time in the quick run (each state shape is one more
#: XLA compile; the batch already checks every function's arithmetic state by state)
ONE_STATE = ("mass_matrix", "inverse_dynamics", "all_terms", "frame_placement", "frame_jacobian")


def _check_functions(pkg, robot, leads, names=None):
    rng = np.random.default_rng(SEED)
    with enable_x64(True):
        for f, inputs in _functions(pkg).items():
            for lead in leads:
                if lead == () and names is not None and f not in names:
                    continue
                args = _arguments(pkg, inputs, rng, lead)
                got, want = getattr(pkg.jax, f)(*args), getattr(pkg.numpy, f)(*args)
                got, want = (x if isinstance(x, tuple) else (x,) for x in (got, want))
                assert [np.asarray(g).dtype for g in got] == [np.dtype(np.float64)] * len(want), f
                assert [np.shape(g) for g in got] == [np.shape(w) for w in want], f
                _assert_equal(got, want, 1e-12, f"{robot} {f} batch shape {lead}")


#: arm4 through XLA's FFI (44 s) with -m slow: floating and mimic take that path in CI, arm4_own the vmap one
@pytest.mark.parametrize("robot", [pytest.param("arm4", marks=pytest.mark.slow), "arm4_own", "floating", "mimic"])
def test_every_function_equals_numpy_batch_and_one_state(robot, request):
    """float64: every function on a batch of shape (2, 3) as leading axes (the batch path: the
    package's C through XLA's FFI, or without it, arm4_own, a jax.vmap), and the ONE_STATE ones on
    one state."""
    _check_functions(request.getfixturevalue(robot), robot, ((2, 3), ()), ONE_STATE)


@pytest.mark.slow
def test_every_function_equals_numpy_one_state(arm4):
    _check_functions(arm4, "arm4", ((),))


def test_vmap_jit_and_float32(arm4):
    """jax.jit(jax.vmap(f)) equals the NumPy batch; float32 in gives float32 out, within 1e-5."""
    rng = np.random.default_rng(SEED)
    with enable_x64(True):
        for f in ("mass_matrix", "inverse_dynamics_derivatives"):
            args = _arguments(arm4, _functions(arm4)[f], rng, (5,))
            got = jax.jit(jax.vmap(getattr(arm4.jax, f)))(*args)
            _assert_equal(got, getattr(arm4.numpy, f)(*args), 1e-12, f"vmap {f}")
    for f in ("mass_matrix", "coriolis_matrix", "inverse_dynamics", "frame_jacobian"):
        args = _arguments(arm4, _functions(arm4)[f], rng, (4,))
        got = getattr(arm4.jax, f)(*(a.astype(np.float32) for a in args))
        assert got.dtype == np.float32, f
        # float32 inputs, so the reference sees the same rounded state
        _assert_equal(got, getattr(arm4.numpy, f)(*(a.astype(np.float32) for a in args)), 1e-5, f"float32 {f}")


def test_jacfwd_of_inverse_dynamics_is_the_generated_derivatives(arm4):
    """Fixed base: jax.jacfwd(tau) w.r.t. q and qd equals inverse_dynamics_derivatives."""
    rng = np.random.default_rng(SEED)
    with enable_x64(True):
        q, qd, qdd = _arguments(arm4, ("q", "qd", "qdd"), rng)
        dq, dqd = jax.jacfwd(arm4.jax.inverse_dynamics, argnums=(0, 1))(q, qd, qdd)
        want_dq, want_dqd = arm4.numpy.inverse_dynamics_derivatives(q, qd, qdd)
        _assert_equal(dq, want_dq, 1e-12, "jacfwd dtau/dq")
        _assert_equal(dqd, want_dqd, 1e-12, "jacfwd dtau/dqd")
        # and through the batch path: the Jacobian of each state of a vmap
        batch = _arguments(arm4, ("q", "qd", "qdd"), rng, (3,))
        got = jax.vmap(jax.jacfwd(arm4.jax.inverse_dynamics))(*batch)
        _assert_equal(got, arm4.numpy.inverse_dynamics_derivatives(*batch)[0], 1e-12, "vmap jacfwd")


SHARDED = textwrap.dedent("""
    import sys
    import numpy as np
    import jax
    from jax.sharding import Mesh, NamedSharding, PartitionSpec
    jax.config.update("jax_enable_x64", True)
    sys.path.insert(0, sys.argv[1])
    import arm4
    assert jax.device_count() == 2, jax.devices()
    rng = np.random.default_rng(int(sys.argv[2]))
    sharding = NamedSharding(Mesh(np.array(jax.devices()), ("batch",)), PartitionSpec("batch"))
    # 8 states: one vmap; 2 CHUNK + 88: inverse_dynamics' loop over chunks and the rest
    for count in (8, 2 * arm4.jax.CHUNK + 88):
        q, qd, qdd = (rng.uniform(-2, 2, (count, 4)) for _ in range(3))
        qs, qds, qdds = (jax.device_put(x, sharding) for x in (q, qd, qdd))
        for f, args, sharded in (("mass_matrix", (q,), (qs,)), ("inverse_dynamics", (q, qd, qdd), (qs, qds, qdds))):
            one = getattr(arm4.jax, f)(*(jax.device_put(a, jax.devices()[0]) for a in args))
            two = getattr(arm4.jax, f)(*sharded)
            assert len(two.sharding.device_set) == 2, two.sharding
            assert np.allclose(np.asarray(one), np.asarray(two), rtol=1e-13, atol=1e-13), (f, count)
            assert np.max(np.abs(np.asarray(two) - getattr(arm4.numpy, f)(*args))) < 1e-12, (f, count)
    print("ok")
""")


def test_configuration_space_functions_equal_numpy_and_differentiate_at_zero(floating):
    """integrate, difference, normalize, neutral of a free-flyer in JAX: NumPy's values (one state
    and a batch), and jax.jacfwd of integrate at v = 0 finite (Pinocchio's dIntegrate dv there)."""
    pkg, rng = floating, np.random.default_rng(SEED)
    with enable_x64(True):
        q0 = pkg.numpy.normalize(rng.normal(size=(4, pkg.nq)))
        v = rng.normal(size=(4, pkg.nv))
        for lead in (slice(None), 0):
            args = (q0[lead], v[lead])
            _assert_equal((pkg.jax.integrate(*args),), (pkg.numpy.integrate(*args),), 1e-12, f"integrate {lead} (seed {SEED})")
            q1 = pkg.numpy.integrate(*args)
            _assert_equal((pkg.jax.difference(q0[lead], q1),), (pkg.numpy.difference(q0[lead], q1),), 1e-12,
                          f"difference {lead} (seed {SEED})")
            x = 3.0 * q0[lead]
            _assert_equal((pkg.jax.normalize(x),), (pkg.numpy.normalize(x),), 1e-12, f"normalize {lead}")
        assert np.array_equal(np.asarray(pkg.jax.neutral()), pkg.numpy.neutral())
        jac = np.asarray(jax.jacfwd(lambda x: pkg.jax.integrate(q0[0], x))(np.zeros(pkg.nv)))
        step = 1e-6
        fd = np.stack([(pkg.numpy.integrate(q0[0], step * e) - pkg.numpy.integrate(q0[0], -step * e)) / (2 * step)
                       for e in np.eye(pkg.nv)], -1)
        assert np.all(np.isfinite(jac)) and np.abs(jac - fd).max() < 1e-8, f"d integrate / dv at 0 (seed {SEED})"


def test_warm_compiles_what_the_first_calls_then_reuse(floating):
    """warm(batch) compiles each function for that batch shape (2 threads); the calls after it, on
    NumPy or JAX arrays of that shape, compile nothing more (no XLA compile event) and equal the
    NumPy module; an unknown name is a one-line error."""
    names = ("mass_matrix", "inverse_dynamics", "gravity")
    rng = np.random.default_rng(SEED)
    compiles = []

    def listen(event, seconds, **kwargs):
        if event == "/jax/core/compile/backend_compile_duration":
            compiles.append(seconds)

    jax.monitoring.register_event_duration_secs_listener(listen)
    try:
        with enable_x64(True):
            states = {f: _arguments(floating, _functions(floating)[f], rng, (5,)) for f in names}
            devices = {f: [jax.numpy.asarray(a) for a in args] for f, args in states.items()}
            before = len(compiles)
            assert floating.jax.warm(5, functions=names) == list(names)
            warmed = len(compiles)
            for f, args in states.items():
                for given in (args, devices[f]):
                    got = getattr(floating.jax, f)(*given)
                    _assert_equal(got, getattr(floating.numpy, f)(*args), 1e-12, f"warm {f}")
    finally:
        jax.monitoring.unregister_event_duration_listener(listen)
    assert warmed - before >= len(names) and len(compiles) == warmed, (before, warmed, len(compiles))
    with pytest.raises(ValueError, match="no function 'nope'"):
        floating.jax.warm(functions=["nope"])


def test_batch_sharded_over_two_devices_equals_one_device(arm4):
    """XLA_FLAGS must be set before jax is imported: a subprocess with 2 forced CPU devices."""
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=2", JAX_PLATFORMS="cpu")
    run = subprocess.run([sys.executable, "-c", SHARDED, str(Path(arm4.__file__).parents[1]), str(SEED)],
                         env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0 and run.stdout.strip().endswith("ok"), run.stderr[-2000:]


def test_bad_target_is_a_one_line_error(tmp_path):
    run = subprocess.run([sys.executable, str(ROOT / "cli.py"), "build", str(ARM4), "--out", str(tmp_path),
                          "--target", "numpy,jaxx", "--no-compile", "--quiet"], capture_output=True, text=True)
    assert run.returncode == 2, run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "--target" in lines[0] and "'jaxx'" in lines[0], run.stderr
    assert not any(tmp_path.iterdir())


def test_targets_recorded_and_jax_only_when_asked(arm4, tmp_path):
    manifest = json.loads((Path(arm4.__file__).parent / "manifest.json").read_text())
    assert manifest["options"]["targets"] == ["numpy", "c", "jax"] and "arm4_jax.py" in manifest["files"]
    default = json.loads((ROOT / "generated" / "arm4" / "manifest.json").read_text())
    assert default["options"]["targets"] == ["numpy", "c"] and "arm4_jax.py" not in default["files"]
