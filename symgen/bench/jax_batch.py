"""Timing of the JAX target (a benchmark, not a test): ``python -m symgen.bench.jax_batch PACKAGE``.

PACKAGE is a folder built with ``symgen build ... --target numpy,c,jax``. Two measurements:

- ``--compile``: the first call (trace + XLA compile) of every function of the package, one state
  and a batch (issue #26's budget: all of panda's functions <= 30 s together); ``--warm THREADS``
  instead: the same first calls through the module's ``warm``, THREADS compiles at a time;
- per-state time of M, ID and the frame Jacobians (``--functions``) in a batch of ``--batch``
  states (4,096): the package's JAX function (jitted, ``vmap`` over the batch), the NumPy module's
  batch, the C batch (one thread, and the binding's default threads), and with ``--adam URDF``
  adam-robotics' JAX backend (``KinDynComputations``, ``jax.jit(jax.vmap(...))``; adam's dynamics
  are floating-base: on a fixed-base package it computes the (6 + n) mass matrix and bias forces
  at an identity base, on a free-flyer at the state's base), and with ``--jaxsim URDF`` jaxsim's
  (M, ID and FD, in its body-fixed velocities, float64); with ``--compare FOLDER`` also the JAX
  module of another build of the robot (before/after a change, in one process).

Each time is the median of ``--repeats`` runs of the whole batch, divided by its size; the
methods' runs interleaved, so that the ratios of one function hold under a changing load.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import shlex
import statistics
import sys
import time
from pathlib import Path

import numpy as np

#: what the issue asks to compare: M, ID and the frame Jacobians
FUNCTIONS = ("mass_matrix", "inverse_dynamics", "frame_jacobian")


def _median_seconds(fn, repeats: int) -> float:
    return _medians({"": fn}, repeats)[""][0]


def _medians(fns: dict, repeats: int) -> dict:
    """{method: (median, min) seconds of a call}, the methods' runs interleaved (round-robin), so a
    change of the machine's load falls on all of them alike (the ratios are what is compared)."""
    for fn in fns.values():
        fn()                                   # warm (compiled, caches filled)
    runs = {k: [] for k in fns}
    for _ in range(repeats):
        for k, fn in fns.items():
            t = time.perf_counter()
            fn()
            runs[k].append(time.perf_counter() - t)
    return {k: (statistics.median(v), min(v)) for k, v in runs.items()}


def _states(pkg, inputs, count, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for name in inputs:
        x = rng.uniform(-2.0, 2.0, (count, pkg.nq if name == "q" else pkg.nv))
        if name == "q" and pkg.nq != pkg.nv:
            x[:, 3:7] /= np.linalg.norm(x[:, 3:7], axis=1, keepdims=True)
        out.append(x)
    return out


def first_calls(pkg, manifest: dict, batch: int, functions=None) -> dict:
    """{function: (wall seconds of the first call on one state, on a batch, process CPU seconds
    of each)}: trace and compile. The CPU time is the steadier figure on a shared machine (XLA
    compiles on one thread but for its LLVM modules)."""
    import jax

    out = {}
    for f, info in manifest["functions"].items():
        if functions and f not in functions:
            continue
        fn = getattr(pkg.jax, f)
        times, cpus = [], []
        for count in (1, batch):
            args = [a[0] if count == 1 else a for a in _states(pkg, info["inputs"], count)]
            t, cpu = time.perf_counter(), time.process_time()
            jax.block_until_ready(fn(*args))
            times.append(time.perf_counter() - t)
            cpus.append(time.process_time() - cpu)
        out[f] = (*times, *cpus)
    return out


def warm_calls(pkg, batch: int, threads: int, functions=None) -> tuple:
    """(wall seconds of ``pkg.jax.warm`` for one state, for a batch, process CPU seconds of each):
    every function's first call, ``threads`` compiles at a time."""
    out = []
    for count in (None, batch):
        t, cpu = time.perf_counter(), time.process_time()
        pkg.jax.warm(count, functions=functions, threads=threads)
        out.append((time.perf_counter() - t, time.process_time() - cpu))
    return (out[0][0], out[1][0], out[0][1], out[1][1])


def per_state(pkg, manifest: dict, functions, batch: int, repeats: int, adam_urdf=None, compare=None,
              jaxsim_urdf=None) -> dict:
    """{function: {method: microseconds per state}} in a batch of ``batch`` states; ``compare``: the
    JAX module of another build of the robot (``jax_module_of``), timed as "jax (compare)". When the
    package's JAX functions run its C through XLA's FFI ("jax"), the same module's own jax code is
    timed beside them as "jax (own code)" (what a GPU, float32 and the derivatives run)."""
    import jax
    import jax.numpy as jnp

    from ..codegen.package import jax_module_of

    results = {}
    own = jax_module_of(Path(pkg.__file__).parent, own=True) if pkg.jax._XLA else None
    adam = None
    if adam_urdf:
        try:
            adam = _adam(adam_urdf, pkg)
        except ImportError as error:
            print(f"adam-robotics skipped: {error} (pip install --no-deps adam-robotics, see docs/results/jax.md)",
                  file=sys.stderr)
    rival = _jaxsim(jaxsim_urdf, pkg, functions) if jaxsim_urdf else {}
    for f in functions:
        args = _states(pkg, manifest["functions"][f]["inputs"], batch)
        jargs = [jnp.asarray(a) for a in args]
        fns = {"jax": lambda: jax.block_until_ready(getattr(pkg.jax, f)(*jargs)),
               "numpy": lambda: getattr(pkg.numpy, f)(*args)}
        if own is not None:
            fns["jax (own code)"] = lambda: jax.block_until_ready(getattr(own, f)(*jargs))
        if compare is not None:
            fns["jax (compare)"] = lambda: jax.block_until_ready(getattr(compare, f)(*jargs))
        if pkg.c is not None:
            fns["c (1 thread)"] = lambda: getattr(pkg.c, f)(*args, threads=1)
            fns["c (default threads)"] = lambda: getattr(pkg.c, f)(*args)
        if adam is not None and f in adam:
            fns["adam-robotics jax"] = lambda: jax.block_until_ready(adam[f](*jargs))
        if f in rival:
            fns["jaxsim"] = lambda: jax.block_until_ready(rival[f](*jargs))
        times = _medians(fns, repeats)
        results[f] = {k: v[0] / batch * 1e6 for k, v in times.items()}
        # the fastest run: under load the noise only adds, so the steadier figure of the code's speed
        results[f].update({f"{k}, min": v[1] / batch * 1e6 for k, v in times.items()})
    return results


def _jaxsim(urdf, pkg, timed) -> dict:
    """jaxsim's functions of the package's robot (read from ``urdf`` as the package was), checked
    against symgen's numeric reference before they are timed."""
    from .. import load_robot
    from . import jaxsim

    robot = load_robot(urdf, floating_base=pkg.nq != pkg.nv)
    fns = {f: fn for f, fn in jaxsim.functions(robot).items() if f in timed}
    print("jaxsim against symgen (relative): " + ", ".join(f"{k} {v:.1e}" for k, v in jaxsim.check(fns, robot).items()))
    return fns


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
    floating = pkg.nq != pkg.nv
    joints = list(pkg.joint_names[1:] if floating else pkg.joint_names)
    kd = adam_jax.KinDynComputations(str(urdf), joints)

    def base(q):
        """adam's base transform H and joint positions s of our q (free-flyer: x y z, quaternion
        x y z w; adam's base velocity is taken as our v[:6], which only its value depends on)."""
        if not floating:
            return jnp.eye(4, dtype=q.dtype), q
        x, y, z, w = q[3], q[4], q[5], q[6]
        R = jnp.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                       [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                       [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])
        H = jnp.eye(4, dtype=q.dtype).at[:3, :3].set(R).at[:3, 3].set(q[:3])
        return H, q[7:]

    def bias(q, qd, qdd):
        H, s = base(q)
        return kd.bias_force(H, s, qd[:6] if floating else jnp.zeros(6, q.dtype), qd[6:] if floating else qd)

    return {
        "mass_matrix": jax.jit(jax.vmap(lambda q: kd.mass_matrix(*base(q)))),
        # adam's bias force (C v + g, the RNEA at zero acceleration): its ID without the M qdd product
        "inverse_dynamics": jax.jit(jax.vmap(bias)),
        # every frame of ours (frame_jacobian computes them all), one adam call each
        "frame_jacobian": jax.jit(jax.vmap(lambda q: jnp.stack([kd.jacobian(f, *base(q)) for f in pkg.frames]))),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m symgen.bench.jax_batch", description=__doc__.splitlines()[0])
    parser.add_argument("package", help="a package folder built with --target ...,jax")
    parser.add_argument("--batch", type=int, default=4096)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--functions", default=",".join(FUNCTIONS), help="per-state times of these ('' for none)")
    parser.add_argument("--compile", action="store_true", help="also time every function's first call")
    parser.add_argument("--compile-functions", default=None, help="only these functions' first calls")
    parser.add_argument("--warm", type=int, default=0, metavar="THREADS",
                        help="instead of first calls one by one, time pkg.jax.warm (one state, then the batch) "
                             "with THREADS compiles at a time")
    parser.add_argument("--cache", default=None, metavar="DIR",
                        help="JAX's persistent compilation cache in DIR (a second process reads it)")
    parser.add_argument("--adam", metavar="URDF", default=None, help="also time adam-robotics' JAX backend")
    parser.add_argument("--jaxsim", metavar="URDF", default=None,
                        help="also time jaxsim (M, ID, FD; float64: needs --x64, jaxsim turns jax_enable_x64 on)")
    parser.add_argument("--compare", metavar="FOLDER", default=None,
                        help="also time the JAX module of another build of the robot (before/after, one process)")
    parser.add_argument("--x64", action="store_true", help="float64 (jax_enable_x64) [default: float32 for jax]")
    parser.add_argument("--json", default=None, help="write the results as JSON")
    a = parser.parse_args(argv)
    import jax

    from ..codegen.package import import_package, jax_module_of

    if a.jaxsim and not a.x64:
        print("--jaxsim: jaxsim computes in float64 (importing it turns on jax_enable_x64): pass --x64 so that "
              "every row is float64", file=sys.stderr)
        return 2
    if a.x64:
        jax.config.update("jax_enable_x64", True)
    pkg = import_package(a.package)
    manifest = json.loads((Path(a.package) / "manifest.json").read_text())
    if "jax" not in manifest["options"].get("targets", []):
        print(f"{a.package}: built without --target jax", file=sys.stderr)
        return 2
    from datetime import datetime, timezone

    from .report import machine_info

    # the command, its date and the machine: what the results pages (docs/results/) name for each figure
    report = {"command": shlex.join(["python", "-m", "symgen.bench.jax_batch", *(sys.argv[1:] if argv is None else argv)]),
              "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "machine": machine_info(),
              "jax": jax.__version__, "devices": [str(d) for d in jax.devices()], "batch": a.batch,
              "x64": a.x64, "xla_ffi": pkg.jax._XLA is not None}
    print("jax: " + ("the package's C through XLA's FFI on the CPU (float64), its own jax code as 'jax (own code)'"
                     if report["xla_ffi"] else "the module's own jax code"))
    if a.cache:
        jax.config.update("jax_compilation_cache_dir", a.cache)
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
        jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
        with contextlib.suppress(AttributeError):   # sharded FFI calls: no pointer in the cache key
            jax.config.update("jax_remove_custom_partitioning_ptr_from_cache_key", True)
        report["cache"] = a.cache
    if a.warm:
        report["warm_s"] = warm_calls(pkg, a.batch, a.warm, a.compile_functions and a.compile_functions.split(","))
        (one, many, cpu_one, cpu_many) = report["warm_s"]
        print(f"warm, {a.warm} threads: one state {one:.1f} s (CPU {cpu_one:.1f} s), "
              f"batch of {a.batch} {many:.1f} s (CPU {cpu_many:.1f} s)")
    elif a.compile:
        calls = first_calls(pkg, manifest, a.batch, a.compile_functions and a.compile_functions.split(","))
        report["first_call_s"] = calls
        for f, (one, many, cpu_one, cpu_many) in calls.items():
            print(f"first call {f:32s} one state {one:6.2f} s (CPU {cpu_one:6.2f} s)   "
                  f"batch of {a.batch} {many:6.2f} s (CPU {cpu_many:6.2f} s)")
        total = [sum(c[k] for c in calls.values()) for k in range(4)]
        print(f"first calls, all functions: one state {total[0]:.1f} s (CPU {total[2]:.1f} s), "
              f"batch {total[1]:.1f} s (CPU {total[3]:.1f} s)")
    if not a.functions:
        return _write(a.json, report)
    compare = jax_module_of(a.compare) if a.compare else None
    if compare is not None:
        report["compare"] = str(a.compare)
    report["load_before"] = os.getloadavg()
    timings = per_state(pkg, manifest, a.functions.split(","), a.batch, a.repeats, a.adam, compare, a.jaxsim)
    report["load_after"] = os.getloadavg()
    report["us_per_state"] = timings
    for f, row in timings.items():
        print(f"{f:20s} " + "  ".join(f"{k} {v:8.3f}" for k, v in row.items()) + "  (us per state)")
    return _write(a.json, report)


def _write(path, report) -> int:
    if path:
        Path(path).write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
