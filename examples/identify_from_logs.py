"""Inertial parameter identification from a log larger than memory, with the generated regressor
and Dask.

The log: ``--samples`` states (q, qd, qdd, tau) of the robot, written chunk by chunk to ``.npy``
files on disk (plain writes and reads, never whole in memory). Each state draws q, qd and a torque tau at
random and takes qdd = forward_dynamics(q, qd, tau) from the generated package, so the log obeys
the URDF's model exactly; ``--noise`` then adds Gaussian noise to the recorded torques (a fraction
of their standard deviation), as a torque sensor would.

The identification: inverse dynamics is linear in the inertial parameters theta (10 per body,
Pinocchio's order, the package's ``parameters``),

    tau = Y(q, qd, qd, qdd) theta,

with Y the generated ``regressor`` (the Slotine-Li regressor at qd_r = qd, qdd_r = qdd). Stacked
over every sample, [Y | tau] is a tall-skinny matrix of (samples * n) rows and 10 bodies + 1
columns. ``dask.array`` builds it lazily, one block of rows per chunk of the log
(``map_blocks``: each worker reads its chunk's rows from the files and calls the compiled
regressor on them), and reduces it with a tall-skinny QR (``dask.array.linalg.tsqr``) to its R factor,
(p + 1) x (p + 1): R = [[R_Y, z], [0, r]] with Y theta ~ tau solved by R_Y theta = z and r the
residual norm. Y is rank-deficient (a robot's dynamics do not see every parameter: the base
parameters are combinations of them), so the solution is the minimum-norm one on the range of
R_Y^T (an SVD of R_Y), and what is identified is the projection P theta of theta onto that
subspace: the identifiable combinations. The script prints their relative error against the
URDF's theta (without noise, at rounding level), the numerical rank, and the time and memory of
each phase.

It runs on a ``distributed.LocalCluster`` (``--workers`` processes, one thread each) unless
``--scheduler ADDRESS`` names a running cluster (then the log folder and the package folder must
be on a file system every worker sees, at the same paths).

    python examples/identify_from_logs.py --samples 100000 --workers 2
    python examples/identify_from_logs.py --urdf panda.urdf --samples 10000000 --log /data/log --noise 0.01
    python examples/identify_from_logs.py --scheduler tcp://10.0.0.5:8786 --log /shared/log --out /shared/build
"""
from __future__ import annotations

import argparse
import hashlib
import json
import resource
import sys
import tempfile
import time
from importlib.resources import files
from pathlib import Path

import numpy as np

#: the log's arrays, each (samples, nv), in this order in a row of the state block
LOG_ARRAYS = ("q", "qd", "qdd", "tau")


def default_urdf() -> Path:
    return Path(str(files("symgen.examples") / "arm4.urdf"))


def build_package(urdf, out: Path, compile: bool = True):
    """Build (or reuse, when it has what the example calls) the package of ``urdf`` with the
    regressor and forward dynamics, in ``out``; returns its folder."""
    import symgen
    from symgen.codegen.build import BuildOptions, build
    from symgen.codegen.names import identifier
    from symgen.codegen.package import import_package

    robot = symgen.load_urdf(str(urdf))
    path = Path(out) / identifier(robot.name)
    if path.exists():
        pkg = import_package(path)
        if all(hasattr(pkg, f) for f in ("regressor", "forward_dynamics")) and tuple(pkg.joint_names) == robot.joint_names:
            return path
    build(robot, out, opts=BuildOptions(quantities=("Y", "qdd"), compile=compile, force=True))
    return path


def _package(path):
    """The generated package at ``path``, imported once per process (workers call this too; the
    module is kept in sys.modules, not in this script's globals, which dask ships to workers)."""
    from symgen.codegen.package import import_package

    key = "_symgen_identify_" + hashlib.sha256(str(path).encode()).hexdigest()[:16]
    if key not in sys.modules:
        sys.modules[key] = import_package(Path(path))
    return sys.modules[key]


def write_log(pkg, folder: Path, samples: int, chunk: int, noise: float, seed: int) -> dict:
    """Simulate ``samples`` states into ``folder`` (one .npy per array of LOG_ARRAYS, appended
    ``chunk`` rows at a time with plain writes, so neither the writer nor a reader holds more
    than a chunk: a memory map would count the whole file in their resident memory); returns the
    log's description (also written as log.json)."""
    folder.mkdir(parents=True, exist_ok=True)
    n = pkg.nv
    rng = np.random.default_rng(seed)
    files_ = {name: open(folder / f"{name}.npy", "wb") for name in LOG_ARRAYS}
    try:
        for f in files_.values():
            np.lib.format.write_array_header_1_0(f, {"descr": "<f8", "fortran_order": False, "shape": (samples, n)})
        for start in range(0, samples, chunk):
            stop = min(start + chunk, samples)
            q = rng.uniform(-np.pi, np.pi, (stop - start, n))
            qd = rng.uniform(-3.0, 3.0, (stop - start, n))
            tau = rng.uniform(-10.0, 10.0, (stop - start, n))
            qdd = pkg.forward_dynamics(q, qd, tau)
            recorded = tau + noise * tau.std() * rng.standard_normal(tau.shape) if noise else tau
            for name, value in zip(LOG_ARRAYS, (q, qd, qdd, recorded)):
                files_[name].write(np.ascontiguousarray(value, dtype="<f8").tobytes())
    finally:
        for f in files_.values():
            f.close()
    info = {"samples": samples, "nv": n, "chunk": chunk, "noise": noise, "seed": seed,
            "joint_names": list(pkg.joint_names)}
    (folder / "log.json").write_text(json.dumps(info, indent=1))
    return info


def _read_rows(path: Path, start: int, stop: int) -> np.ndarray:
    """Rows [start, stop) of a 2-D float64 .npy, read from the file (no memory map)."""
    with open(path, "rb") as f:
        np.lib.format.read_magic(f)
        shape, _, _ = np.lib.format.read_array_header_1_0(f)
        f.seek(f.tell() + start * shape[1] * 8)
        return np.fromfile(f, dtype="<f8", count=(stop - start) * shape[1]).reshape(stop - start, shape[1])


def _load_block(folder, start, stop):
    """Rows [start, stop) of the log as one (stop - start, 4 nv) block [q | qd | qdd | tau]."""
    return np.hstack([_read_rows(Path(folder) / f"{name}.npy", start, stop) for name in LOG_ARRAYS])


def _regressor_rows(block, package, nv):
    """A block of states -> its rows of [Y | tau]: ((rows * nv), p + 1)."""
    pkg = _package(package)
    q, qd, qdd, tau = (block[:, k * nv:(k + 1) * nv] for k in range(4))
    q, qd, qdd = (np.ascontiguousarray(x) for x in (q, qd, qdd))
    Y = pkg.regressor(q, qd, qd, qdd)                       # (rows, nv, p), the C batch
    return np.concatenate([Y.reshape(-1, Y.shape[-1]), tau.reshape(-1, 1)], axis=1)


def tall_skinny_R(log: Path, package: Path, info: dict, client) -> np.ndarray:
    """The R factor of the stacked [Y | tau] over the whole log, by dask's tall-skinny QR."""
    import dask
    import dask.array as da

    n, chunk, samples = info["nv"], info["chunk"], info["samples"]
    blocks = [da.from_delayed(dask.delayed(_load_block)(str(log), s, min(s + chunk, samples)),
                              shape=(min(s + chunk, samples) - s, 4 * n), dtype=np.float64)
              for s in range(0, samples, chunk)]
    states = da.concatenate(blocks, axis=0)
    p = 10 * len(_package(str(package)).link_names)
    rows = states.map_blocks(_regressor_rows, package=str(package), nv=n, dtype=np.float64,
                             chunks=(tuple(c * n for c in states.chunks[0]), (p + 1,)))
    _, R = da.linalg.tsqr(rows)
    return client.compute(R).result()


def solve(R: np.ndarray, rtol: float = 1e-10):
    """(theta_hat, P, rank, residual) from R = [[R_Y, z], [0, r]]: the minimum-norm solution of
    R_Y theta = z on the numerical range of R_Y^T, the projector P onto it, its rank."""
    p = R.shape[1] - 1
    RY, z = R[:p, :p], R[:p, p]
    U, s, Vt = np.linalg.svd(RY)
    rank = int((s > rtol * s[0]).sum())
    V = Vt[:rank].T
    theta = V @ ((U[:, :rank].T @ z) / s[:rank])
    return theta, V @ V.T, rank, abs(R[p, p]) if R.shape[0] > p else 0.0


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--urdf", type=Path, default=None, help="robot [default: symgen's bundled arm4]")
    ap.add_argument("--samples", type=int, default=100_000, help="states in the log [default: 100,000]")
    ap.add_argument("--chunk", type=int, default=20_000, help="states per chunk of the log and per dask block")
    ap.add_argument("--noise", type=float, default=0.0, help="torque noise, a fraction of the torques' std [default: 0]")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--log", type=Path, default=None, help="log folder, written unless it holds this log already "
                    "[default: a temporary folder]")
    ap.add_argument("--out", type=Path, default=None, help="package folder [default: a temporary folder]")
    ap.add_argument("--workers", type=int, default=2, help="LocalCluster worker processes [default: 2]")
    ap.add_argument("--scheduler", default=None, help="address of a running dask scheduler instead of a LocalCluster")
    ap.add_argument("--json", type=Path, default=None, help="write the results here")
    args = ap.parse_args(argv)
    if args.samples < 1 or args.chunk < 1:
        ap.error("--samples and --chunk must be positive")

    from distributed import Client, LocalCluster

    with tempfile.TemporaryDirectory(prefix="symgen-identify-") as tmp:
        out = args.out or Path(tmp) / "build"
        log = args.log or Path(tmp) / "log"
        times = {}
        t0 = time.perf_counter()
        package = build_package(args.urdf or default_urdf(), out)
        pkg = _package(str(package))
        times["build"] = time.perf_counter() - t0
        wanted = {"samples": args.samples, "nv": pkg.nv, "chunk": args.chunk, "noise": args.noise, "seed": args.seed,
                  "joint_names": list(pkg.joint_names)}
        t0 = time.perf_counter()
        known = json.loads((log / "log.json").read_text()) if (log / "log.json").exists() else None
        info = known if known == wanted else write_log(pkg, log, args.samples, args.chunk, args.noise, args.seed)
        times["log"] = time.perf_counter() - t0
        cluster = None if args.scheduler else LocalCluster(n_workers=args.workers, threads_per_worker=1,
                                                           processes=True, dashboard_address=None)
        try:
            with Client(args.scheduler or cluster) as client:
                t0 = time.perf_counter()
                R = tall_skinny_R(log, package, info, client)
                times["identify"] = time.perf_counter() - t0
                worker_rss = client.run(_peak_rss_mb)
        finally:
            if cluster is not None:
                cluster.close()
        theta_hat, P, rank, residual = solve(R)
        theta = np.asarray(pkg.parameters)
        error = float(np.linalg.norm(P @ (theta_hat - theta)) / np.linalg.norm(P @ theta))
        result = {"robot": package.name, "nv": pkg.nv, "samples": info["samples"], "rows": info["samples"] * pkg.nv,
                  "parameters": len(theta), "rank": rank, "noise": info["noise"], "relative_error": error,
                  "residual": float(residual), "seconds": {k: round(v, 3) for k, v in times.items()},
                  "peak_rss_mb": {"client": round(_peak_rss_mb(), 1),
                                  **{f"worker {i}": round(v, 1) for i, v in enumerate(worker_rss.values())}},
                  "log_bytes": sum((log / f"{name}.npy").stat().st_size for name in LOG_ARRAYS)}
    print(f"{result['robot']}: {result['samples']:,} samples ({result['rows']:,} rows of [Y | tau], "
          f"{result['log_bytes'] / 1e9:.2f} GB on disk), {result['parameters']} parameters, rank {rank}")
    print(f"identifiable combinations P theta: relative error {error:.2e} (noise {info['noise']})")
    print("seconds: " + ", ".join(f"{k} {v:.1f}" for k, v in result["seconds"].items())
          + "; peak RSS (MB): " + ", ".join(f"{k} {v:.0f}" for k, v in result["peak_rss_mb"].items()))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
    return result


if __name__ == "__main__":
    main()
    sys.exit(0)
