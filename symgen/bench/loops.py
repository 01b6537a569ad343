"""``symgen bench`` of a mechanism with loops or couplings (issue #24's speed check): the package's
M̄, C̄, τ̄ and forward dynamics beside Pinocchio on the same robot's spanning tree, all in one
C++ process (``templates/bench_pinocchio_loops.cpp.j2``; the package's C loaded as a shared object
built with the C loop's flags), on the same states, in interleaved rounds (each row timed once per
round, the median of its rounds reported: a burst of load hits every row alike):

    route   Pinocchio's algorithms on the spanning tree, then the dense products with G:
            crba → GᵀMG; computeCoriolisMatrix(q, Gv) → GᵀCG (+ GᵀMĠ after a crba for loops);
            rnea(q, Gv, Ga + Ġv) → Gᵀτ; the reduced FD: crba, rnea(q, Gv, Ġv), GᵀMG, Eigen's LLT
    tree    crba, computeCoriolisMatrix, rnea, aba on the spanning tree alone (the bound a
            sparsity-aware projection approaches)
    loops   constraintDynamics (a CONTACT_3D RigidConstraintModel between each loop's points) and
            forwardDynamics(q, v, τ, J, γ) with J, γ from the points' frame Jacobians and classical
            accelerations

G and Ġ (and the loops' row bases U) are computed here, per state, by Pinocchio in Python
(:mod:`symgen.oracle_loops`) and handed to the harness: the route's time leaves out forming them
(for a coupling G is constant anyway), so it is a lower bound of that route. States: random
configurations made consistent by the package's robot (``solve_loops``), the registry's ranges.
The harness checks every state before timing (ours against the route, the loop solvers' q̈ against
G ā + Ġ v) and refuses to time when they differ: a :class:`BenchError` naming the worst.
"""
from __future__ import annotations

import json
import shlex
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from ..errors import ModelError
from .cloop import DEFAULT_FLAGS, package_sources, read_manifest
from .harness import BenchError, cached_harness, find_cc, run_compiler
from .pin import PIN_CXX_FLAGS, _pin, pin_cpp_command, pin_model, pin_prefix, pin_version
from .timing import Timing

#: the package functions timed (they must all be in the package)
FUNCTIONS = {"M": "mass_matrix", "C": "coriolis_matrix", "tau": "inverse_dynamics", "qdd": "forward_dynamics"}
#: relative agreement asked of every check before timing
TOLERANCE = 1e-8


def _robot_and_oracle(urdf, manifest):
    """symgen's robot of ``urdf`` as the package was built, and Pinocchio's oracle on its own
    reading of the file (the spanning tree; a free-flyer root when the package has one the URDF lacks)."""
    import symgen
    from ..oracle_loops import oracle_for

    pin = _pin()
    robot = symgen.load_urdf(urdf, floating_base=bool(manifest.get("floating_base")))   # as verify reads it
    full = robot.full
    model = pin_model(urdf)
    if model.nv + 6 == full.n:
        model = pin_model(urdf, floating=True)
    return robot, oracle_for(robot, model, pin)


def loop_states(robot, oracle, manifest, count: int, seed: int = 0) -> dict:
    """``count`` consistent states, the package's inputs (q, v, a, τ) and the harness's (Pinocchio's
    q, G, Ġ in its v order, a τ on the spanning tree with Gᵀτ_full = τ, the loops' rows U)."""
    from .. import quantities as Q

    nq, nv = int(manifest["nq"]), int(manifest["nv"])
    rng = np.random.default_rng(seed)
    P = oracle.full.map.P
    loops = getattr(oracle, "ids", [])
    out = {k: [] for k in ("q", "qd", "qdd", "tau", "q_pin", "G", "Gd", "tau_full", "U")}
    for _ in range(count):
        for attempt in range(100):          # a draw of the independent coordinates may admit no closure
            state = Q.random_state(rng, nq, nv, names=("q", "qd", "qdd", "tau"), layout=manifest.get("joint_models"))
            try:
                if robot.loops:
                    state["q"] = robot.solve_loops(state["q"])
                break
            except ModelError:
                if attempt == 99:
                    raise BenchError(f"{robot.name}: 100 random configurations in a row admit no closed one") from None
        q = state["q"]
        qfull = oracle.q(q)                         # loops: also computes G (and U) at q
        G = P @ oracle.G
        Gd = P @ oracle.gdot(q, state["qd"]) if loops else np.zeros_like(G)
        for k in ("q", "qd", "qdd", "tau"):
            out[k].append(state[k])
        out["q_pin"].append(oracle.full.map.q(qfull))
        out["G"].append(G)
        out["Gd"].append(Gd)
        out["tau_full"].append(G @ np.linalg.solve(G.T @ G, state["tau"]))
        out["U"].append(np.hstack(oracle.U) if loops else np.zeros((3, 0)))
    return {k: np.asarray(v) for k, v in out.items()}


def _write_states(path: Path, states: dict):
    parts = []
    for s in range(len(states["q"])):
        parts += [states[k][s].ravel() for k in ("q", "qd", "qdd", "tau", "q_pin", "G", "Gd", "tau_full", "U")]
    np.concatenate(parts).astype(np.float64).tofile(path)


def missing_functions(manifest) -> list:
    """The functions of :data:`FUNCTIONS` the package lacks (the loop benchmark times all four)."""
    return [f for f in FUNCTIONS.values() if f not in manifest["functions"]]


def bench_loops(package_dir, urdf, flags: str = DEFAULT_FLAGS, repeats: int = 7, min_time: float = 0.05,
                build: bool = True, timeout: float | None = 1800, count: int = 64, seed: int = 0) -> dict:
    """``{"check": {...}, "rows": {quantity: {"symgen_us", "pinocchio_us": {rival: µs}, "ratio": {rival: x}}},
    "nv", "spanning_nv", "loops"}`` for a package of a robot with loops or couplings."""
    package_dir = Path(package_dir)
    manifest = read_manifest(package_dir)
    if not manifest.get("loops"):
        raise BenchError(f"{package_dir}: the package has no loops or couplings (manifest 'loops')")
    missing = missing_functions(manifest)
    if missing:
        raise BenchError(f"{package_dir}: the loop benchmark needs {', '.join(missing)} in the package "
                         f"(symgen build --quantities M,C,tau,qdd)")
    robot, oracle = _robot_and_oracle(urdf, manifest)
    states = loop_states(robot, oracle, manifest, count, seed)
    ids = getattr(oracle, "ids", [])
    model = oracle.loop_model if ids else oracle.full.model
    loops = ";".join(f"{p}:{s}:{U.shape[1]}" for (p, s), U in zip(ids, oracle.U)) if ids else ""
    prefix = pin_prefix()
    exe = cached_harness("bench_pinocchio_loops.cpp.j2", {}, f"{pin_version()}\0{PIN_CXX_FLAGS}",
                         f"pin-loops-bench-{pin_version()}",
                         lambda src, out: pin_cpp_command(prefix, PIN_CXX_FLAGS, src, out) + ["-ldl"], timeout,
                         build, "Pinocchio loops harness", "a few minutes")
    with tempfile.TemporaryDirectory(prefix="symgen-loops-") as tmp:
        archive, data = Path(tmp) / "model.txt", Path(tmp) / "states.bin"
        model.saveToText(str(archive))
        _write_states(data, states)
        shared = Path(tmp) / f"lib{manifest['name']}.so"
        run_compiler([find_cc(None), *shlex.split(flags), "-fPIC", "-shared", "-std=c99",
                      *map(str, package_sources(package_dir, manifest)), "-o", str(shared), "-lm"], timeout,
                     f"{package_dir}: the package as a shared object")
        args = [archive, data, count, manifest["nq"], manifest["nv"], shared, manifest["name"], loops, repeats,
                min_time, TOLERANCE]
        proc = subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True)
    if proc.returncode not in (0, 3):
        raise BenchError(f"the Pinocchio loops harness on {urdf} failed (exit {proc.returncode}): "
                         f"{proc.stderr.strip()[:600]}")
    out = json.loads(proc.stdout)
    if proc.returncode == 3:
        worst = max(out["check"], key=out["check"].get)
        raise BenchError(f"{package_dir}: not timed, the package and Pinocchio disagree on {urdf}: {worst} differs "
                         f"by {out['check'][worst]:.2e} (relative; tolerance {TOLERANCE:g}); all: {out['check']}")
    t = {k: Timing(**v).median_ns / 1e3 for k, v in out["results"].items()}
    rows = {}
    for qty in FUNCTIONS:
        rivals = {"route": t[f"route_{qty}"], "tree": t[f"tree_{qty}"]}
        if qty == "qdd" and ids:
            rivals |= {r: t[r] for r in ("constraintDynamics", "forwardDynamics_J_gamma")}
        us = t[f"symgen_{qty}"]
        rows[qty] = {"symgen_us": us, "pinocchio_us": rivals, "ratio": {r: x / us for r, x in rivals.items()}}
    return {"check": out["check"], "rows": rows, "nv": out["nv"], "spanning_nv": out["spanning_nv"],
            "loops": list(manifest["loops"]), "count": count, "pinocchio": out["pinocchio"]}


RIVAL_TEXT = {"route": "spanning tree + dense G products", "tree": "spanning tree alone (bound)",
              "constraintDynamics": "constraintDynamics (CONTACT_3D)", "forwardDynamics_J_gamma": "forwardDynamics(J, gamma)"}


def format_loops(result: dict) -> str:
    lines = [f"loops/couplings {', '.join(result['loops'])}: {result['spanning_nv']} spanning -> {result['nv']} "
             f"independent speeds; median µs per call in one process (checked first, worst relative difference "
             f"{max(result['check'].values()):.1e})"]
    names = {"M": "M̄ (mass_matrix)", "C": "C̄ (coriolis_matrix)", "tau": "τ̄ (inverse_dynamics)",
             "qdd": "FD (forward_dynamics)"}
    for qty, row in result["rows"].items():
        lines.append(f"  {names[qty]:24s} symgen {row['symgen_us']:9.3f}")
        for rival, us in row["pinocchio_us"].items():
            lines.append(f"    Pinocchio {RIVAL_TEXT[rival]:36s} {us:9.3f}   ratio {row['ratio'][rival]:6.2f}x")
    return "\n".join(lines)
