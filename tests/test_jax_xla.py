"""The JAX module's CPU path (``NAME_xla.so``, ``symgen/codegen/xla_target.py``): float64 calls run
the package's compiled C batch as an XLA FFI custom call. Its results are the C binding's, bit for
bit, serial or split over XLA's thread pool (whole lane groups a chunk); its derivatives are the
module's own jax code's; the handler refuses buffers that do not hold whole states; and without
the library (SYMGEN_JAX_XLA=0, or a damaged file) the module runs its own code, with a warning
for the damaged file."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

jax = pytest.importorskip("jax")

from symgen import load_urdf  # noqa: E402
from symgen.codegen.build import BuildOptions, build  # noqa: E402
from symgen.codegen.package import import_package  # noqa: E402
from test_jax_target import ARM4, enable_x64  # noqa: E402  (the JAX tests' robot and x64 switch)

SEED = 2611


@pytest.fixture(scope="module")
def arm4(tmp_path_factory):
    opts = BuildOptions(targets=("numpy", "c", "jax"), quantities=("M", "tau", "dtau", "J"))
    pkg = import_package(build(load_urdf(ARM4), tmp_path_factory.mktemp("xla"), name="arm4", opts=opts).path)
    assert pkg.jax._XLA is not None, "the XLA library was not built or not registered"
    return pkg


def _states(rng, count, shape=(4,)):
    return [rng.uniform(-2.0, 2.0, (count,) + shape) for _ in range(3)]


@pytest.mark.parametrize("count", [0, 1, 5, 2 * 256 + 88, 3000])
def test_the_custom_call_is_the_c_batch_bit_for_bit(arm4, count):
    """Serial (under 512 states) and in chunks on XLA's pool (512 and more): the C binding's
    serial batch, exactly, and the NumPy module to 1e-12."""
    rng = np.random.default_rng(SEED + count)
    q, qd, qdd = _states(rng, count)
    with enable_x64(True):
        for f, args in (("mass_matrix", (q,)), ("inverse_dynamics", (q, qd, qdd)),
                        ("inverse_dynamics_derivatives", (q, qd, qdd)), ("frame_jacobian", (q,))):
            got = getattr(arm4.jax, f)(*args)
            want = getattr(arm4.c, f)(*args, threads=1)
            got, want = (x if isinstance(x, tuple) else (x,) for x in (got, want))
            for g, w in zip(got, want):
                assert np.asarray(g).shape == w.shape and np.array_equal(np.asarray(g), w), \
                    f"{f}, {count} states: differs from the C batch (seed {SEED + count})"
            if count:
                ref = getattr(arm4.numpy, f)(*args)
                ref = ref if isinstance(ref, tuple) else (ref,)
                err = max(np.max(np.abs(np.asarray(g) - r)) for g, r in zip(got, ref))
                assert err < 1e-12, f"{f}: {err:.1e} from NumPy (seed {SEED + count})"


def test_nested_vmap_and_jit_and_reverse_mode(arm4):
    """jit(vmap(vmap(f))) on a (3, 4) batch; jacrev and grad through the custom call are the
    generated analytical derivatives (its jvp is the module's own code)."""
    rng = np.random.default_rng(SEED)
    q, qd, qdd = (rng.uniform(-2.0, 2.0, (3, 4, 4)) for _ in range(3))
    with enable_x64(True):
        nested = jax.jit(jax.vmap(jax.vmap(arm4.jax.inverse_dynamics)))
        text = nested.lower(q, qd, qdd).compile().as_text()
        calls = [line for line in text.splitlines() if "custom-call(" in line]
        assert len(calls) == 1 and "f64[3,4,4]" in calls[0], calls      # one call on all 12 states
        got = nested(q, qd, qdd)
        assert np.max(np.abs(np.asarray(got) - arm4.numpy.inverse_dynamics(q, qd, qdd))) < 1e-12
        dq, dqd = jax.jacrev(arm4.jax.inverse_dynamics, argnums=(0, 1))(q[0, 0], qd[0, 0], qdd[0, 0])
        want = arm4.numpy.inverse_dynamics_derivatives(q[0, 0], qd[0, 0], qdd[0, 0])
        assert max(np.max(np.abs(np.asarray(a) - b)) for a, b in zip((dq, dqd), want)) < 1e-12, f"seed {SEED}"
        w = rng.uniform(-1, 1, 4)
        g = jax.grad(lambda x: w @ arm4.jax.mass_matrix(x) @ w)(q[0, 0])
        assert np.asarray(g).shape == (4,) and np.all(np.isfinite(np.asarray(g)))
        # d(w' M w)/dq_k = w' dM/dq_k w, and dM/dq . e_k = Mdot(q, e_k): central difference of the C
        for k in range(4):
            e = np.eye(4)[k] * 1e-6
            fd = (w @ arm4.c.mass_matrix(q[0, 0] + e) @ w - w @ arm4.c.mass_matrix(q[0, 0] - e) @ w) / 2e-6
            assert abs(float(g[k]) - fd) < 1e-7 * max(1.0, abs(fd)), (k, float(g[k]), fd, SEED)


def test_the_handler_refuses_buffers_that_are_not_whole_states(arm4):
    with enable_x64(True):
        target = arm4.jax._XLA + "mass_matrix"
        call = jax.ffi.ffi_call(target, jax.ShapeDtypeStruct((2, 4, 4), np.float64))
        with pytest.raises(Exception, match="every input and output must be float64 and hold the same number"):
            jax.block_until_ready(call(np.zeros((3, 4))))            # 3 states in, 2 out
        call = jax.ffi.ffi_call(target, jax.ShapeDtypeStruct((4, 4), np.float64))
        with pytest.raises(Exception, match="takes 1 inputs and gives 1 outputs"):
            jax.block_until_ready(call(np.zeros(4), np.zeros(4)))


def test_float32_takes_the_module_code(arm4):
    q = np.random.default_rng(SEED).uniform(-2, 2, (6, 4)).astype(np.float32)
    got = arm4.jax.mass_matrix(q)
    assert got.dtype == np.float32
    assert np.max(np.abs(np.asarray(got) - arm4.numpy.mass_matrix(q))) < 1e-5


CHECK = textwrap.dedent("""
    import sys, warnings
    import numpy as np
    import jax
    jax.config.update("jax_enable_x64", True)
    sys.path.insert(0, sys.argv[1])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        import arm4
        module = arm4.jax                       # imported on first use
    q = np.random.default_rng(1).uniform(-2, 2, (7, 4))
    assert np.max(np.abs(np.asarray(arm4.jax.mass_matrix(q)) - arm4.numpy.mass_matrix(q))) < 1e-12
    print(arm4.jax._XLA is not None, [str(w.message) for w in caught if "not usable" in str(w.message)])
""")


def _run(folder, **env):
    run = subprocess.run([sys.executable, "-c", CHECK, str(folder)], env=dict(os.environ, JAX_PLATFORMS="cpu", **env),
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    return run.stdout.strip().splitlines()[-1]


def test_without_the_library_the_module_runs_its_own_code(arm4, tmp_path):
    """SYMGEN_JAX_XLA=0: the module's own code, silently; a damaged library: its own code and a
    RuntimeWarning naming the file."""
    assert _run(Path(arm4.__file__).parents[1], SYMGEN_JAX_XLA="0") == "False []"
    copy = tmp_path / "arm4"
    shutil.copytree(Path(arm4.__file__).parent, copy)
    library = next(copy.glob("_arm4_xla_*.so"))
    library.write_bytes(b"not a shared library")
    line = _run(tmp_path)
    assert line.startswith("False [") and library.name in line and "not usable" in line, line


SHARDED = textwrap.dedent("""
    import sys
    import numpy as np
    import jax
    from jax.sharding import Mesh, NamedSharding, PartitionSpec
    jax.config.update("jax_enable_x64", True)
    sys.path.insert(0, sys.argv[1])
    import arm4
    assert jax.device_count() == 2 and arm4.jax._XLA, jax.devices()
    sharding = NamedSharding(Mesh(np.array(jax.devices()), ("batch",)), PartitionSpec("batch"))
    q, qd, qdd = (np.random.default_rng(int(sys.argv[2])).uniform(-2, 2, (1200, 4)) for _ in range(3))
    args = [jax.device_put(x, sharding) for x in (q, qd, qdd)]
    f = jax.jit(arm4.jax.inverse_dynamics_derivatives)
    text = f.lower(*args).compile().as_text()
    calls = [line for line in text.splitlines() if "custom-call(" in line]
    assert "all-gather" not in text and len(calls) == 1 and "f64[600,4,4]" in calls[0], calls
    dq, dqd = f(*args)
    assert len(dq.sharding.device_set) == 2 and dq.sharding.spec == PartitionSpec("batch"), dq.sharding
    want = arm4.c.inverse_dynamics_derivatives(q, qd, qdd, threads=1)
    assert np.array_equal(np.asarray(dq), want[0]) and np.array_equal(np.asarray(dqd), want[1])
    # q replicated, qd and qdd sharded: still each device's own states (split as the first split input)
    mixed = [jax.device_put(q, NamedSharding(sharding.mesh, PartitionSpec()))] + args[1:]
    text = f.lower(*mixed).compile().as_text()
    calls = [line for line in text.splitlines() if "custom-call(" in line]
    assert "all-gather" not in text and len(calls) == 1 and "f64[600,4,4]" in calls[0], calls
    assert np.array_equal(np.asarray(f(*mixed)[0]), want[0])
    # inside jax.shard_map: the call's results vary over the mesh axis as the module's own code's do
    try:
        from jax import shard_map
    except ImportError:
        from jax.experimental.shard_map import shard_map
    mapped = jax.jit(shard_map(arm4.jax.mass_matrix, mesh=sharding.mesh, in_specs=PartitionSpec("batch"),
                               out_specs=PartitionSpec("batch")))
    assert np.array_equal(np.asarray(mapped(args[0])), arm4.c.mass_matrix(q, threads=1))
    print("ok")
""")


def test_a_sharded_batch_is_one_call_per_device_on_its_own_states(arm4):
    """Two forced CPU devices: the compiled program gathers nothing, each device's custom call
    takes its 600 of the 1,200 states (also with q replicated and qd, qdd sharded), the output
    stays sharded and equals the C batch exactly; inside jax.shard_map too."""
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=2", JAX_PLATFORMS="cpu")
    run = subprocess.run([sys.executable, "-c", SHARDED, str(Path(arm4.__file__).parents[1]), str(SEED)],
                         env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0 and run.stdout.strip().endswith("ok"), run.stderr[-3000:]


def test_verify_checks_the_custom_calls_and_the_module_code(arm4):
    """`symgen verify` of a package whose JAX functions run the C on this CPU checks them and,
    as a backend of its own, the module's jax code (what derivatives, float32 and GPUs run)."""
    from symgen.verify import verify_package

    report, ok = verify_package(Path(arm4.__file__).parent, trials=1)
    assert ok, report
    assert "backends numpy, c, jax, jax (own code)," in report, report.splitlines()[0]
    for line in ("jax vs numpy: inverse_dynamics_derivatives", "jax (own code) vs numpy: frame_jacobian"):
        assert line in report, line
    # the own-code module: an attribute set before it runs, the process environment left alone
    from symgen.codegen.package import jax_module_of

    before = os.environ.get("SYMGEN_JAX_XLA")
    assert jax_module_of(Path(arm4.__file__).parent, own=True)._XLA is None
    assert arm4.jax._XLA
    assert os.environ.get("SYMGEN_JAX_XLA") == before


def test_parametric_functions_take_their_parameters_through_the_call(tmp_path):
    """--parametric: params (one set for all states, or one per state) reach the C as one more
    input buffer."""
    opts = BuildOptions(targets=("numpy", "c", "jax"), quantities=("M", "tau"), parametric=True)
    pkg = import_package(build(load_urdf(ARM4), tmp_path, name="arm4p", opts=opts).path)
    assert pkg.jax._XLA is not None
    rng = np.random.default_rng(SEED)
    q, qd, qdd = _states(rng, 700)
    params = pkg.parameters * rng.uniform(0.5, 1.5, (700, pkg.parameters.size))
    with enable_x64(True):
        for p in (None, pkg.parameters * 1.3, params):
            got = np.asarray(pkg.jax.inverse_dynamics(q, qd, qdd, p))
            want = pkg.c.inverse_dynamics(q, qd, qdd, pkg.parameters if p is None else np.broadcast_to(p, params.shape))
            assert np.array_equal(got, want), f"seed {SEED}"
        got = jax.vmap(pkg.jax.mass_matrix, in_axes=(0, None))(q[:5], pkg.parameters * 2.0)
        assert np.max(np.abs(np.asarray(got) - pkg.numpy.mass_matrix(q[:5], pkg.parameters * 2.0))) < 1e-12


TWO_COPIES = textwrap.dedent("""
    import sys, warnings
    import numpy as np
    import jax
    jax.config.update("jax_enable_x64", True)
    warnings.simplefilter("error")               # a registration refused would warn
    from symgen.codegen.package import jax_module_of
    one, two = jax_module_of(sys.argv[1]), jax_module_of(sys.argv[2])   # before the CPU backend starts
    assert one._XLA and two._XLA and one._XLA != two._XLA, (one._XLA, two._XLA)
    q = np.random.default_rng(3).uniform(-2, 2, (5, 4))
    assert np.array_equal(np.asarray(one.mass_matrix(q)), np.asarray(two.mass_matrix(q)))
    print(float(jax.numpy.ones(3).sum()))
""")


def test_two_copies_of_a_package_register_targets_of_their_own(arm4, tmp_path):
    """Two folders holding the same NAME.c in one process: each library its own target names
    (XLA refuses a second handler under one name, and its CPU backend then fails to start)."""
    copy = tmp_path / "arm4"
    shutil.copytree(Path(arm4.__file__).parent, copy)
    run = subprocess.run([sys.executable, "-c", TWO_COPIES, str(Path(arm4.__file__).parent), str(copy)],
                         env=dict(os.environ, JAX_PLATFORMS="cpu"), capture_output=True, text=True, timeout=300)
    assert run.returncode == 0 and run.stdout.strip().endswith("3.0"), run.stderr[-3000:]


def test_a_library_of_another_xla_ffi_version_is_not_registered(arm4, tmp_path):
    """A library built against another jaxlib's FFI API (here: one reporting 7.7) is refused
    before XLA sees it, with a RuntimeWarning; the module runs its own code and JAX keeps working."""
    copy = tmp_path / "arm4"
    shutil.copytree(Path(arm4.__file__).parent, copy)
    library = next(copy.glob("_arm4_xla_*.so"))
    stub = tmp_path / "stub.c"
    stub.write_text("int arm4_xla_api_version(void) { return 7007; }\n")
    subprocess.run(["cc", "-shared", "-fPIC", str(stub), "-o", str(library)], check=True, timeout=60)
    line = _run(tmp_path)
    assert line.startswith("False [") and "XLA FFI API 7.7" in line and "rebuild the package" in line, line


def test_a_build_whose_xla_library_fails_to_compile_keeps_the_rest(tmp_path):
    """A compiler that fails on NAME_xla.c only: the build succeeds with a RuntimeWarning naming
    that file, the C binding works, and the JAX module runs its own code."""
    wrapper = tmp_path / "cc.sh"
    wrapper.write_text('#!/bin/sh\ncase "$*" in *_xla.c*) echo "no FFI here" >&2; exit 1;; esac\nexec cc "$@"\n')
    wrapper.chmod(0o755)
    opts = BuildOptions(targets=("numpy", "c", "jax"), quantities=("M",))
    old = os.environ.get("CC")
    os.environ["CC"] = str(wrapper)
    try:
        with pytest.warns(RuntimeWarning, match=r"arm4_xla\.c: compilation failed, so _arm4_xla_\w+\.so is not built: no FFI here"):
            result = build(load_urdf(ARM4), tmp_path / "out", name="arm4", opts=opts)
    finally:
        if old is None:
            del os.environ["CC"]
        else:
            os.environ["CC"] = old
    pkg = import_package(result.path)
    assert pkg.c is not None and pkg.jax._XLA is None and not list(Path(result.path).glob("_arm4_xla_*.so"))
    q = np.random.default_rng(SEED).uniform(-2, 2, (3, 4))
    with enable_x64(True):
        assert np.max(np.abs(np.asarray(pkg.jax.mass_matrix(q)) - pkg.c.mass_matrix(q))) < 1e-12
