"""From Python: the cost of one call and of batches of a generated package against Pinocchio.

    python -m symgen.bench.callpath PACKAGE_DIR URDF [--function coriolis_matrix] [--batch 10000]

PACKAGE_DIR is a package built by ``symgen build`` (compiled), URDF the robot it was built from
(Pinocchio loads it); ``--baseline DIR`` times another build of it alongside (an older symgen's). Every candidate is timed in interleaved rounds (one round of each, then
again), so that a machine shared with other work slows all of them alike; the medians of the
rounds are printed, in ns per call and per state.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

from ..codegen.package import import_package
from ..quantities import QUANTITIES

#: our function -> (Pinocchio's algorithm, how many state vectors it takes): the registry's
#: counterparts that take the same state vectors and compute the same single output
PIN = {x.function: (x.pin_call.python[0], len(x.pin_call.arguments)) for x in QUANTITIES.values()
       if x.pin_call is not None and not x.pin_call.note and x.pin_call.arguments == x.arguments
       and len(x.outputs) == 1}


def _per_call(fn, calls: int) -> float:
    t0 = time.perf_counter()
    fn(calls)
    return (time.perf_counter() - t0) / calls * 1e9


def interleaved(candidates: dict, rounds: int) -> dict:
    """{label: (run(k) doing k calls, calls per round)} -> {label: median ns per call}."""
    times = {label: [] for label in candidates}
    for _ in range(rounds):
        for label, (run, calls) in candidates.items():
            times[label].append(_per_call(run, calls))
    return {label: statistics.median(t) for label, t in times.items()}


def _loop(f, *args, **kw):
    def run(k):
        for _ in range(k):
            f(*args, **kw)
    return run


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("package")
    ap.add_argument("urdf")
    ap.add_argument("--function", default="coriolis_matrix", choices=sorted(PIN))
    ap.add_argument("--batch", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=31)
    ap.add_argument("--calls", type=int, default=2000, help="calls per round for one state")
    ap.add_argument("--baseline", help="another build of the robot (e.g. by an older symgen), timed alongside")
    args = ap.parse_args(argv)

    import pinocchio as pin

    pkg = import_package(args.package)
    model = pin.buildModelFromUrdf(args.urdf)
    data = model.createData()
    pin_fn = getattr(pin, PIN[args.function][0])
    arity = PIN[args.function][1]
    ours = getattr(pkg, args.function)
    raw = getattr(pkg.c._ext, args.function)
    n = pkg.nv
    rng = np.random.default_rng(0)
    state = [rng.uniform(-1, 1, n) for _ in range(arity)]
    batch = [rng.uniform(-1, 1, (args.batch, n)) for _ in range(arity)]
    one = ours(*state)
    out = np.empty_like(one)
    outs = np.empty((args.batch,) + one.shape)
    B = args.batch

    def pin_loop(k):
        for _ in range(k):
            for i in range(B):
                pin_fn(model, data, *(x[i] for x in batch))

    def raw_batch(threads):
        def run(k):
            for _ in range(k):
                raw(B, *batch, outs, threads)
        return run

    candidates = {
        "pin": (_loop(pin_fn, model, data, *state), args.calls),
        "ours": (_loop(ours, *state), args.calls),
        "ours out=": (_loop(ours, *state, out=out), args.calls),
        "numpy.empty": (_loop(np.empty, one.shape), args.calls),
    }
    if args.baseline:
        base = getattr(import_package(args.baseline), args.function)
        np.testing.assert_array_equal(base(*state), one)
        candidates["baseline"] = (_loop(base, *state), args.calls)
    single = interleaved(candidates, args.rounds)
    few = max(3, args.rounds // 5)
    batches = interleaved({
        "pin loop": (pin_loop, 1),
        "batch threads=1": (_loop(ours, *batch, threads=1), 1),
        "batch default": (_loop(ours, *batch), 1),
        "batch out= threads=1": (_loop(ours, *batch, out=outs, threads=1), 1),
        "batch out= default": (_loop(ours, *batch, out=outs), 1),
        "raw C batch threads=1": (raw_batch(1), 1),
    }, few)
    print(f"{os.path.basename(os.path.normpath(args.package))} {args.function}, nv={n}, "
          f"OpenMP={pkg.c.openmp}, cores={os.cpu_count()}, Python {sys.version.split()[0]}, "
          f"Pinocchio {pin.__version__}")
    print(f"one call, median of {args.rounds} interleaved rounds of {args.calls} calls (ns per call):")
    for label, ns in single.items():
        print(f"  {label:<24} {ns:9.0f}   {ns / single['pin']:.2f}x pin")
    print(f"batch of {B} states, median of {few} interleaved rounds (ns per state):")
    for label, ns in batches.items():
        ns = ns / B
        print(f"  {label:<24} {ns:9.0f}   {ns / (batches['pin loop'] / B):.3f}x pin loop, "
              f"{ns / single['ours']:.2f}x one call")
    return 0


if __name__ == "__main__":
    sys.exit(main())
