"""The JAX module's fused functions (symgen/codegen/jax_target.py): M, ID and the frame Jacobians
compiled with XLA's fusion on, each shared temp divided by a runtime 1.0 so XLA computes it once,
and their sin and cos the module's polynomials, each kept temp and output entry chained to the one
before it (``+ 0.0*previous``) and a batch of more than two CHUNKs run as a loop over chunks in
ID. Checked against Pinocchio (a batch, float64, one state and the batch path, the chunked path
with its rest, its forward derivative) and numpy's sin and cos (2 ulp); the runtime 1.0 must survive XLA's
passes (else fusion copies every shared temp into its consumers again)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

jax = pytest.importorskip("jax")

import support  # noqa: E402
from symgen import load_urdf  # noqa: E402
from symgen.codegen.build import BuildOptions, build  # noqa: E402
from symgen.codegen.package import import_package, jax_module_of  # noqa: E402

try:
    from jax import enable_x64                  # jax >= 0.7
except ImportError:
    from jax.experimental import enable_x64
SEED = 2611
FUSED = ("mass_matrix", "inverse_dynamics", "frame_jacobian")


@pytest.fixture(scope="module")
def panda(tmp_path_factory, erd):
    """panda's M, ID, J (fused) and g (not), JAX target only."""
    robot = load_urdf(erd("panda_description/urdf/panda.urdf"))
    opts = BuildOptions(targets=("numpy", "jax"), compile=False, quantities=("M", "tau", "J", "g"))
    return robot, import_package(build(robot, tmp_path_factory.mktemp("jaxfused"), name="panda", opts=opts).path)


def test_the_hot_functions_are_fused(panda):
    _, pkg = panda
    assert pkg.jax.FUSED == FUSED, pkg.jax.FUSED
    assert "_one" not in pkg.jax._gravity.__code__.co_varnames


def test_fused_functions_equal_pinocchio(panda):
    """A batch of 16 states through the batch path (jit, fusion, vmap) and one state."""
    robot, pkg = panda
    oracle = support.PinOracle(robot, support.pin_model_from_robot(robot))
    rng = np.random.default_rng(SEED)
    q, qd, qdd = (rng.uniform(-2.0, 2.0, (16, pkg.nv)) for _ in range(3))
    with enable_x64(True):
        M, tau, J = (np.asarray(x) for x in (pkg.jax.mass_matrix(q), pkg.jax.inverse_dynamics(q, qd, qdd),
                                              pkg.jax.frame_jacobian(q)))
        one = np.asarray(pkg.jax.inverse_dynamics(q[0], qd[0], qdd[0]))
    for i in range(len(q)):
        for name, got, want in (("M", M[i], oracle.mass_matrix(q[i])),
                                ("tau", tau[i], oracle.inverse_dynamics(q[i], qd[i], qdd[i])),
                                ("J", J[i], oracle.frame_jacobian(q[i]))):
            err = np.max(np.abs(got - want)) / max(1.0, np.max(np.abs(want)))
            assert err < 1e-12, f"{name} state {i}: {err:.1e} (seed {SEED})"
    assert np.max(np.abs(one - tau[0])) < 1e-12, f"one state against the batch (seed {SEED})"


def test_sincos_within_two_ulp_and_its_derivative(panda):
    """|x| <= 1e6 rad: the polynomial sin and cos against libm's (numpy), and jax.jacfwd."""
    _, pkg = panda
    rng = np.random.default_rng(SEED)
    x = np.concatenate([rng.uniform(-4, 4, 50_000), rng.uniform(-1e6, 1e6, 50_000),
                        np.pi / 4 * np.arange(-16, 17), [0.0, 5e-324, -1e-300, 1e6, -1e6]])
    with enable_x64(True):
        s, c = (np.asarray(v) for v in jax.jit(pkg.jax._sincos)(x))
        ds = np.asarray(jax.vmap(jax.grad(pkg.jax._sin))(x[:1000]))
        dc = np.asarray(jax.vmap(jax.grad(pkg.jax._cos))(x[:1000]))
    two_ulp = 2 * np.spacing(1.0) / 2          # 2 ulp of a value in [0.5, 1); finer below
    for name, got, want in (("sin", s, np.sin(x)), ("cos", c, np.cos(x)),
                            ("d sin", ds, np.cos(x[:1000])), ("d cos", dc, -np.sin(x[:1000]))):
        err = np.abs(got - want)
        worst = int(np.argmax(err))
        assert err[worst] <= two_ulp, f"{name}({x[worst]!r}): error {err[worst]:.2e} (seed {SEED})"


def test_the_runtime_one_survives_xla(panda):
    """The batch's optimized HLO still divides (by the runtime 1.0): had XLA folded it, fusion
    would copy every shared temp into its consumers (compile superlinear, batch slower)."""
    _, pkg = panda
    kept = Path(pkg.jax.__file__).read_text().split("def _mass_matrix(")[1].split("\ndef ")[0].count(") / _one")
    with enable_x64(True):
        q = np.zeros((8, pkg.nq))
        hlo = jax.jit(pkg.jax.mass_matrix.__wrapped__, compiler_options=pkg.jax.FUSED_OPTIONS) \
            .lower(q, _one=1.0).compile().as_text()
    assert kept > 50 and hlo.count(" divide(") >= kept // 2, (kept, hlo.count(" divide("))


def test_a_jaxlib_without_a_fused_option_falls_back_to_a_plain_jit(panda, monkeypatch):
    """FUSED_OPTIONS names XLA flags of today's jaxlib; one that does not know a flag refuses it
    ("No such compile option", a RuntimeError at the first call): the function still runs."""
    _, pkg = panda
    mod = pkg.jax
    monkeypatch.setattr(mod, "FUSED_OPTIONS", {"xla_symgen_made_up_option": True})

    def fused(q, _one):
        return q / _one

    fused.__name__ = mod.FUSED[0]
    call = mod._jit(fused)
    assert np.array_equal(np.asarray(call(jax.numpy.arange(3.0))), [0.0, 1.0, 2.0])


def _fused_body(pkg, name):
    return Path(pkg.jax.__file__).read_text().split(f"def _{name}(")[1].split("\ndef ")[0]


def test_each_kept_temp_and_output_entry_reads_the_one_before(panda):
    """The chain that lets XLA's runtime run the kernels one after another: in a fused function of
    few outputs (ID; not M, J), every temp divided by the runtime 1.0 but the first, and every
    output entry, adds 0.0 times the one before it."""
    _, pkg = panda
    import re
    assert pkg.jax.CHAINED == ("inverse_dynamics",), pkg.jax.CHAINED
    assert " + 0.0*" not in _fused_body(pkg, "mass_matrix")
    for name in pkg.jax.CHAINED:
        kept = re.findall(r"^    (\w+) = \((.*)\) / _one$", _fused_body(pkg, name), re.M)
        assert len(kept) > 20 and kept[-1][0].startswith("_o"), (name, len(kept))
        assert "0.0*" not in kept[0][1], (name, kept[0])
        for (before, _), (temp, text) in zip(kept, kept[1:]):
            assert text.endswith(f" + 0.0*{before}"), (name, temp, text)


def test_chunked_batch_equals_pinocchio_and_its_forward_derivative(panda, monkeypatch):
    """CHUNK 8 (read when a shape is first traced; 256 in the module) and 2 CHUNK + 5 states: a
    loop over 2 chunks and 5 more by one vmap, and the same states as a (3, 7) batch, against
    Pinocchio; jax.jvp through the chunked batch along qdd is M's column; CHUNK = 0 (one vmap)
    gives the same values."""
    robot, pkg = panda
    mod = pkg.jax
    assert mod.CHUNK == 256
    monkeypatch.setattr(mod, "CHUNK", 8)
    oracle = support.PinOracle(robot, support.pin_model_from_robot(robot))
    rng = np.random.default_rng(SEED + 1)
    count = 2 * mod.CHUNK + 5
    q, qd, qdd = (rng.uniform(-2.0, 2.0, (count, pkg.nv)) for _ in range(3))
    k = int(rng.integers(pkg.nv))
    direction = np.zeros_like(qdd)
    direction[:, k] = 1.0
    with enable_x64(True):
        tau = np.asarray(mod.inverse_dynamics(q, qd, qdd))
        tau3 = np.asarray(mod.inverse_dynamics(*(x.reshape(3, count // 3, -1) for x in (q, qd, qdd))))
        _, dtau = jax.jvp(lambda a: mod.inverse_dynamics(q, qd, a), (qdd,), (direction,))
        monkeypatch.setattr(mod, "CHUNK", 0)
        plain = np.asarray(jax.jit(mod.inverse_dynamics.__wrapped__, compiler_options=mod.FUSED_OPTIONS)
                           (q, qd, qdd, _one=1.0))
    assert np.array_equal(tau3.reshape(tau.shape), tau), f"(3, 7) batch against (21,) (seed {SEED + 1})"
    assert np.max(np.abs(plain - tau)) < 1e-12, f"CHUNK 0 against chunked (seed {SEED + 1})"
    for i in range(count):
        M = oracle.mass_matrix(q[i])
        for name, got, want in (("tau", tau[i], oracle.inverse_dynamics(q[i], qd[i], qdd[i])),
                                ("dtau/dqdd", np.asarray(dtau)[i], M[:, k])):
            err = np.max(np.abs(got - want)) / max(1.0, np.max(np.abs(want)))
            assert err < 1e-12, f"{name} state {i}: {err:.1e} (seed {SEED + 1})"


def test_bench_compare_times_another_build_beside_the_package(panda):
    """``jax_batch --compare FOLDER``: the other build's JAX module loaded under a name of its own
    (not the package's), timed in the same process; its values equal the package's (here the
    same build). No time is asserted, only that every method ran."""
    import json

    from symgen.bench import jax_batch
    _, pkg = panda
    folder = Path(pkg.__file__).parent
    other = jax_module_of(folder)
    assert other is not pkg.jax and other.__name__ != pkg.jax.__name__
    manifest = json.loads((folder / "manifest.json").read_text())
    with enable_x64(True):
        times = jax_batch.per_state(pkg, manifest, ["inverse_dynamics"], 8, 1, compare=other)
        q, qd, qdd = jax_batch._states(pkg, ("q", "qd", "qdd"), 8)
        same = np.array_equal(np.asarray(other.inverse_dynamics(q, qd, qdd)),
                              np.asarray(pkg.jax.inverse_dynamics(q, qd, qdd)))
    row = times["inverse_dynamics"]
    assert {"jax", "jax (compare)", "numpy", "jax, min", "jax (compare), min"} <= set(row), row
    assert all(v > 0 for v in row.values()) and same, row


def test_a_caller_may_pass_the_runtime_one_itself(panda):
    """``_one``, the runtime 1.0 a fused function divides its kept temps by, passed by the caller
    is taken (it was a duplicate keyword of the jit's own) and gives the same values."""
    _, pkg = panda
    rng = np.random.default_rng(SEED + 2)
    q, qd, qdd = (rng.uniform(-2.0, 2.0, pkg.nv) for _ in range(3))
    with enable_x64(True):
        plain = np.asarray(pkg.jax.inverse_dynamics(q, qd, qdd))
        given = np.asarray(pkg.jax.inverse_dynamics(q, qd, qdd, _one=1.0))
    assert np.array_equal(plain, given), f"seed {SEED + 2}"
