"""Timing of the JAX target (a benchmark, not a test): ``python -m symgen.bench.jax_batch PACKAGE``.

PACKAGE is a folder built with ``symgen build ... --target numpy,c,jax``. Two measurements:

- ``--compile``: the first call (trace + XLA compile) of every function of the package, one state
  and a batch (issue #26's budget: all of panda's functions <= 30 s together);
- per-state time of M, ID and the frame Jacobians (``--functions``) in a batch of ``--batch``
  states (4,096): the package's JAX function (jitted, ``vmap`` over the batch), the NumPy module's
  batch, the C batch (one thread, and the binding's default threads), and with ``--adam URDF``
  adam-robotics' JAX backend (``KinDynComputations``, ``jax.jit(jax.vmap(...))``; adam's dynamics
  are floating-base: it computes the (6 + n) mass matrix and bias forces at an identity base).

Each time is the median of ``--repeats`` runs of the whole batch, divided by its size.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

#: what the issue asks to compare: M, ID and the frame Jacobians
FUNCTIONS = ("mass_matrix", "inverse_dynamics", "frame_jacobian")


def _median_seconds(fn, repeats: int) -> float:
    fn()                                       # warm (compiled, caches filled)
    runs = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - t)
    return statistics.median(runs)


def _states(pkg, inputs, count, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for name in inputs:
        x = rng.uniform(-2.0, 2.0, (count, pkg.nq if name == "q" else pkg.nv))
        if name == "q" and pkg.nq != pkg.nv:
            x[:, 3:7] /= np.linalg.norm(x[:, 3:7], axis=1, keepdims=True)
        out.append(x)
    return out


def first_calls(pkg, manifest: dict, batch: int) -> dict:
    """{function: (seconds of the first call on one state, on a batch)}: trace and compile."""
    import jax

    out = {}
    for f, info in manifest["functions"].items():
        fn = getattr(pkg.jax, f)
        times = []
        for count in (1, batch):
            args = [a[0] if count == 1 else a for a in _states(pkg, info["inputs"], count)]
            t = time.perf_counter()
            jax.block_until_ready(fn(*args))
            times.append(time.perf_counter() - t)
        out[f] = tuple(times)
    return out


def per_state(pkg, manifest: dict, functions, batch: int, repeats: int, adam_urdf=None) -> dict:
    """{function: {method: microseconds per state}} in a batch of ``batch`` states."""
    import jax
    import jax.numpy as jnp

    results = {}
    adam = _adam(adam_urdf, pkg) if adam_urdf else None
    for f in functions:
        args = _states(pkg, manifest["functions"][f]["inputs"], batch)
        jargs = [jnp.asarray(a) for a in args]
        row = {"jax": _median_seconds(lambda: jax.block_until_ready(getattr(pkg.jax, f)(*jargs)), repeats),
               "numpy": _median_seconds(lambda: getattr(pkg.numpy, f)(*args), repeats)}
        if pkg.c is not None:
            row["c (1 thread)"] = _median_seconds(lambda: getattr(pkg.c, f)(*args, threads=1), repeats)
            row["c (default threads)"] = _median_seconds(lambda: getattr(pkg.c, f)(*args), repeats)
        if adam is not None and f in adam:
            row["adam-robotics jax"] = _median_seconds(lambda: jax.block_until_ready(adam[f](*jargs)), repeats)
        results[f] = {k: v / batch * 1e6 for k, v in row.items()}
    return results


def _adam(urdf, pkg) -> dict:
    """adam-robotics' JAX functions of the same robot, batched the way its users batch them."""
    import jax
    import jax.numpy as jnp
    import adam.jax.computations as adam_jax
    from adam.core.array_api_math import ArraySpec
    from adam.model.std_factories.std_joint import StdJoint

    motion_subspace = StdJoint.motion_subspace

    def prismatic_fixed(self):
        """adam-robotics 0.5.0 stacks a prismatic joint's axis with zeros of shape (3,) and fails
        (panda's fingers); the same (6, 1) subspace with zeros of shape (1,)."""
        if self.type != "prismatic":
            return motion_subspace(self)
        z = self.math.zeros(1)
        return self.math.vertcat(self.axis[0], self.axis[1], self.axis[2], z, z, z)

    StdJoint.motion_subspace = prismatic_fixed
    # adam 0.5.0 pins jax <= 0.6; under jax >= 0.7 the device it reads off a reference array is a
    # Sharding, which jnp.asarray(device=...) rejects inside a trace: let arrays follow the trace
    spec_from_reference = adam_jax.spec_from_reference
    adam_jax.spec_from_reference = lambda ref: ArraySpec(**{**vars(spec_from_reference(ref)), "device": None})
    kd = adam_jax.KinDynComputations(str(urdf), list(pkg.joint_names))
    H = jnp.eye(4)
    zero6 = jnp.zeros(6)
    frame = pkg.frames[0]
    return {
        "mass_matrix": jax.jit(jax.vmap(lambda q: kd.mass_matrix(H, q))),
        # adam's bias force (C v + g) at the base at rest: its ID without the M qdd product
        "inverse_dynamics": jax.jit(jax.vmap(lambda q, qd, qdd: kd.bias_force(H, q, zero6, qd))),
        "frame_jacobian": jax.jit(jax.vmap(lambda q: kd.jacobian(frame, H, q))),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m symgen.bench.jax_batch", description=__doc__.splitlines()[0])
    parser.add_argument("package", help="a package folder built with --target ...,jax")
    parser.add_argument("--batch", type=int, default=4096)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--functions", default=",".join(FUNCTIONS))
    parser.add_argument("--compile", action="store_true", help="also time every function's first call")
    parser.add_argument("--adam", metavar="URDF", default=None, help="also time adam-robotics' JAX backend")
    parser.add_argument("--x64", action="store_true", help="float64 (jax_enable_x64) [default: float32 for jax]")
    parser.add_argument("--json", default=None, help="write the results as JSON")
    a = parser.parse_args(argv)
    import jax

    from ..codegen.package import import_package

    if a.x64:
        jax.config.update("jax_enable_x64", True)
    pkg = import_package(a.package)
    manifest = json.loads((Path(a.package) / "manifest.json").read_text())
    if "jax" not in manifest["options"].get("targets", []):
        print(f"{a.package}: built without --target jax", file=sys.stderr)
        return 2
    report = {"jax": jax.__version__, "devices": [str(d) for d in jax.devices()], "batch": a.batch,
              "x64": a.x64}
    if a.compile:
        calls = first_calls(pkg, manifest, a.batch)
        report["first_call_s"] = calls
        for f, (one, many) in calls.items():
            print(f"first call {f:32s} one state {one:6.2f} s   batch of {a.batch} {many:6.2f} s")
        print(f"first calls, all functions: one state {sum(c[0] for c in calls.values()):.1f} s, "
              f"batch {sum(c[1] for c in calls.values()):.1f} s")
    timings = per_state(pkg, manifest, a.functions.split(","), a.batch, a.repeats, a.adam)
    report["us_per_state"] = timings
    for f, row in timings.items():
        print(f"{f:20s} " + "  ".join(f"{k} {v:8.3f}" for k, v in row.items()) + "  (us per state)")
    if a.json:
        Path(a.json).write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
