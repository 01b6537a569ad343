"""Pinocchio's own generated code (CppADCodeGen) as a rival in ``symgen bench --cppadcg``
(optional: ``pip install cmeel-cppadcodegen``, the ``cppadcg`` extra).

Pinocchio ships code generation for its algorithms (``pinocchio/codegen/cppadcg-algo.hpp``): a
``CodeGen*`` class tapes the algorithm on ``CppAD::AD<CppAD::cg::CG<double>>`` scalars, CppADCodeGen
prints the tape as straight-line C, compiles it into a shared library and loads it. That is the
"higher anchor" for symgen's generated C — generated code against generated code:

    tau  CodeGenRNEA             rnea(q, v, a)
    Minv CodeGenMinv             computeMinverse(q), its upper triangle (n(n+1)/2 outputs)
    qdd  CodeGenABA              aba(q, v, tau)
    dtau CodeGenRNEADerivatives  computeRNEADerivatives: dtau/dq, dtau/dv and dtau/da (= M, upper triangle)
    dqdd CodeGenABADerivatives   computeABADerivatives: dqdd/dq, dqdd/dv and dqdd/dtau (= M^-1)

and, for a package built with ``--contacts`` (``contact_terms``), ``CodeGenConstraintDynamics``:
``constraintDynamics`` with one ``RigidConstraintModel`` per contact (CONTACT_3D / CONTACT_6D,
LOCAL_WORLD_ALIGNED, every contact active), output [ddq, lambda_c], checked against Pinocchio's
double ``constraintDynamics`` and timed in the harness beside it and the package's
``contact_dynamics`` (:func:`constraint_dynamics`; ``m.info["cppadcg"]["constraint_dynamics"]``).

The C++ harness (``templates/bench_cppadcg.cpp.j2``) is built once per Pinocchio/CppADCodeGen
version against the ``pin`` wheel's headers (header-only, as the Pinocchio harness, plus
``cppad_lib``) and cached under ``~/.cache/symgen``. Per robot and function it builds the library
once with the C loop's compiler and flags (not ``CodeGenBase::compileLib``'s fixed ``-Ofast``),
cached by model, function, flags and versions. Before anything is timed, each library's outputs
are checked against Pinocchio's double-precision functions (the Python binding) on random states:
:func:`check` refuses above 1e-9 relative. The harness then times, over random states drawn as the
Pinocchio harness draws them, the library's forward function on the packed input (``cppadcg``: the
generated code and CppADCodeGen's thin call) and Pinocchio's ``evalFunction(q, v, a)``
(``cppadcg_eval``: what Pinocchio's own ``timings-cg`` times; it also copies in and out).
"""
from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

from ..quantities import ARGUMENTS
from .cloop import DEFAULT_FLAGS
from .harness import BenchError, cache_dir, cached_harness, compiler_version, find_cc, run_compiler, run_harness
from .pin import PIN_CXX_FLAGS, pin_cpp_command, pin_model, pin_prefix, pin_random_q, pin_version

TEMPLATE = "bench_cppadcg.cpp.j2"
METHOD = "cppadcg"                   # the library's forward function
EVAL_METHOD = "cppadcg_eval"         # through Pinocchio's CodeGen*::evalFunction
CHECK_RTOL = 1e-9
CD = "constraint_dynamics"           # CodeGenConstraintDynamics of a --contacts package
CDD = "constraint_dynamics_derivatives"   # CodeGenConstraintDynamicsDerivatives (contact_partials)

#: quantity -> the harness's name of Pinocchio's CodeGen class for it
CPPADCG_FUNCTIONS = {"tau": "rnea", "Minv": "minv", "qdd": "aba", "dtau": "rnea_derivatives",
                     "dqdd": "aba_derivatives"}
#: what the rival computes beyond (or short of) symgen's function, per quantity
CPPADCG_NOTES = {
    "Minv": "CppADCodeGen (CodeGenMinv): the upper triangle of M^-1, n(n+1)/2 outputs (symgen: all n^2)",
    "dtau": "CppADCodeGen (CodeGenRNEADerivatives): dtau/dq, dtau/dv and dtau/da = M (symgen: the first two)",
    "dqdd": "CppADCodeGen (CodeGenABADerivatives): dqdd/dq, dqdd/dv and dqdd/dtau = M^-1 (symgen: the first two)",
}


def _versions() -> dict:
    """The versions the harness and libraries depend on; BenchError if CppADCodeGen is missing."""
    from importlib import metadata

    try:
        cg = metadata.version("cmeel-cppadcodegen")
    except metadata.PackageNotFoundError:
        raise BenchError("CppADCodeGen is not installed (pip install cmeel-cppadcodegen, or the cppadcg extra)") from None
    try:
        cppad = metadata.version("cmeel-cppad")
    except metadata.PackageNotFoundError:
        cppad = "unknown"
    return {"pinocchio": pin_version(), "cppadcodegen": cg, "cppad": cppad}


def cppadcg_version() -> str | None:
    try:
        return _versions()["cppadcodegen"]
    except BenchError:
        return None


def cg_prefix(prefix: Path) -> Path:
    """The ``cmeel.prefix`` that holds CppADCodeGen's and CppAD's headers: the ``pin`` wheel's
    (``prefix``) when they were installed beside it, else that of the ``cmeel-cppadcodegen``
    distribution (a virtual environment with ``--system-site-packages`` over the system's ``pin``)."""
    from importlib import metadata

    if (prefix / "include" / "cppad" / "cg.hpp").exists():
        return prefix
    try:
        return Path(metadata.distribution("cmeel-cppadcodegen").locate_file("cmeel.prefix"))
    except metadata.PackageNotFoundError:
        return prefix


def harness_command(prefix: Path, flags: str, source: Path, exe: Path) -> list[str]:
    """The Pinocchio harness's command (header-only against the ``pin`` wheel), with CppAD's
    library and ``dl`` (the generated libraries are loaded at run time)."""
    inc, cg = prefix / "include", cg_prefix(prefix)
    missing = [what for what, path in (("CppADCodeGen (pip install cmeel-cppadcodegen)", cg / "include" / "cppad" / "cg.hpp"),
                                        ("CppAD (pip install cmeel-cppad)", cg / "include" / "cppad" / "cppad.hpp"),
                                        ("Pinocchio's codegen headers", inc / "pinocchio" / "codegen" / "cppadcg-algo.hpp"))
               if not path.exists()]
    if missing:
        raise BenchError(f"cannot build the CppADCodeGen harness: missing {', '.join(missing)} under {cg}")
    extra = [] if cg == prefix else [f"-I{cg / 'include'}", f"-L{cg / 'lib'}", f"-Wl,-rpath,{cg / 'lib'}"]
    return pin_cpp_command(prefix, flags, source, exe) + extra + ["-lcppad_lib", "-ldl"]


def harness_binary(flags: str = PIN_CXX_FLAGS, timeout: float | None = 1800, build: bool = True) -> Path:
    """The compiled CppADCodeGen harness, cached by versions, flags and source (minutes to build)."""
    versions = _versions()
    prefix = pin_prefix()
    return cached_harness(TEMPLATE, {}, f"{json.dumps(versions, sort_keys=True)}\0{flags}",
                          f"cppadcg-bench-{versions['pinocchio']}-{versions['cppadcodegen']}",
                          lambda src, out: harness_command(prefix, flags, src, out), timeout, build,
                          "CppADCodeGen harness", "a few minutes, a few GB of memory")


def _model(urdf, floating: bool, gravity=None):
    if not Path(urdf).is_file():
        raise BenchError(f"{urdf}: no such URDF file")
    try:
        model = pin_model(urdf, floating)
    except BenchError:
        raise
    except Exception as exc:                      # urdfdom's refusals (ValueError, RuntimeError)
        raise BenchError(f"{urdf}: Pinocchio cannot read it: {str(exc).strip().splitlines()[0] if str(exc).strip() else exc!r}") from None
    if gravity is not None:
        model.gravity.linear = np.asarray(gravity, dtype=float)
    return model


def libraries(exe: Path, model, archive: Path, functions, flags: str = DEFAULT_FLAGS, cc: str | None = None,
              timeout: float | None = None) -> dict:
    """``{function: folder}`` of CppADCodeGen's compiled library of each wanted function of
    ``model`` (saved as ``archive``), built with ``cc`` and ``flags`` if not cached yet (each in a
    temporary folder, then renamed: a cached folder is complete). The folder keeps the generated
    C in ``src/``."""
    cc = shutil.which(find_cc(cc)) or find_cc(cc)      # CppADCodeGen runs the compiler by its path
    identity = (flags.encode(), compiler_version(cc).encode(), json.dumps(_versions()).encode(), exe.name.encode())
    text = archive.read_bytes()
    out = {}
    for f in functions:
        h = hashlib.sha256()
        for part in (text, f.encode(), *identity):
            h.update(part)
            h.update(b"\0")
        kind = f.split("@")[0]                          # (a contact function's contacts follow its @)
        folder = cache_dir() / "cppadcg" / f"{model.name}-{kind}-{h.hexdigest()[:16]}"
        if not folder.exists():
            folder.parent.mkdir(parents=True, exist_ok=True)
            tmp = Path(tempfile.mkdtemp(prefix=f"{folder.name}.", dir=folder.parent))
            try:
                run_compiler([str(exe), str(archive), "build", f"{f}={tmp}", cc, flags], timeout,
                             f"CppADCodeGen's {kind} of {model.name} ({flags})")
                shutil.rmtree(tmp / "tmp", ignore_errors=True)
                os.replace(tmp, folder) if not folder.exists() else shutil.rmtree(tmp)
            except BaseException:
                shutil.rmtree(tmp, ignore_errors=True)
                raise
        out[f] = folder
    return out


def _spec(folders: dict) -> str:
    return ",".join(f"{f}={d}" for f, d in folders.items())


def reference(pin, model, data, f: str, q, v, a) -> np.ndarray:
    """What CppADCodeGen's ``f`` returns, by Pinocchio's double-precision function (flattened,
    row-major; Minv's upper triangle row by row)."""
    if f == "rnea":
        return np.asarray(pin.rnea(model, data, q, v, a)).copy()
    if f == "aba":
        return np.asarray(pin.aba(model, data, q, v, a)).copy()
    if f == "minv":
        Minv = np.asarray(pin.computeMinverse(model, data, q))
        return Minv[np.triu_indices(model.nv)].copy()
    if f == "rnea_derivatives":
        parts = pin.computeRNEADerivatives(model, data, q, v, a)
    elif f == "aba_derivatives":
        parts = pin.computeABADerivatives(model, data, q, v, a)
    else:
        raise BenchError(f"CppADCodeGen: no reference for {f!r}")
    return np.concatenate([np.asarray(p).reshape(-1) for p in parts])


def comparable(f: str, flat: np.ndarray, nv: int) -> np.ndarray:
    """``flat`` (an output of ``f``) with what is not compared zeroed: of the derivatives' third
    block (dtau/da = M, dqdd/dtau = M^-1) the strict lower triangle, which Pinocchio's C++ leaves
    unset in computeRNEADerivatives' M (the generated code writes 0 there; the Python binding
    returns it symmetric)."""
    if not f.endswith("_derivatives"):
        return flat
    out = np.array(flat, dtype=float).reshape(3, nv, nv)
    out[2] = np.triu(out[2])
    return out.reshape(-1)


def check(exe: Path, model, archive: Path, folders: dict, trials: int = 3, seed: int = 0,
          rtol: float = CHECK_RTOL) -> dict:
    """Each library against Pinocchio's double-precision function on ``trials`` random states:
    ``{function: max relative error}`` (to the largest entry, at least 1); BenchError above ``rtol``."""
    import pinocchio as pin

    rng = np.random.default_rng(seed)
    data = model.createData()
    states = []
    for _ in range(trials):
        q = pin_random_q(model, rng)
        v, a, t = (ARGUMENTS[x].draw(rng, model.nq, model.nv) for x in ("qd", "qdd", "tau"))
        states.append((q, v, a, t))
    with tempfile.TemporaryDirectory(prefix="symgen-cppadcg-") as tmp:
        outs = {}
        for which in ("a", "tau"):              # rnea & co take qdd, aba & co tau
            path = Path(tmp) / f"states-{which}.txt"
            rows = [np.concatenate([q, v, a if which == "a" else t]) for q, v, a, t in states]
            path.write_text(f"{len(rows)}\n" + "\n".join(" ".join(repr(float(x)) for x in r) for r in rows) + "\n")
            wanted = {f: d for f, d in folders.items() if (f.startswith("aba") == (which == "tau"))}
            if wanted:
                proc = subprocess.run([str(exe), str(archive), "check", _spec(wanted), str(path)], capture_output=True,
                                      text=True)
                if proc.returncode != 0:
                    raise BenchError(f"the CppADCodeGen harness failed (exit {proc.returncode}): "
                                     f"{proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else '(no output)'}")
                outs |= json.loads(proc.stdout)
    errors = {}
    for f, got in outs.items():
        worst = 0.0
        for (q, v, a, t), y in zip(states, got):
            ref = reference(pin, model, data, f, q, v, t if f.startswith("aba") else a)
            y = np.asarray(y, dtype=float)
            if y.shape != ref.shape:
                raise BenchError(f"CppADCodeGen's {f} gives {y.size} values, Pinocchio's {ref.size}: not timed")
            y, ref = comparable(f, y, model.nv), comparable(f, ref, model.nv)
            worst = max(worst, float(np.max(np.abs(y - ref))) / max(1.0, float(np.max(np.abs(ref)))))
        errors[f] = worst
        if not worst <= rtol:
            raise BenchError(f"CppADCodeGen's {f} disagrees with Pinocchio by {worst:.3g} (relative; limit {rtol:g}): "
                             f"not timed")
    return errors


def generated_size(folder: Path, f: str) -> int:
    """Bytes of CppADCodeGen's C of the function itself (``<f>_forward_zero.c``, and the
    ``<f>_forward_zero__<k>.c`` it splits a large function into)."""
    return sum(p.stat().st_size for p in (Path(folder) / "src").glob(f"{f}_forward_zero*.c"))


def pinocchio_cppadcg(urdf, quantities, floating: bool = False, gravity=None, flags: str = DEFAULT_FLAGS,
                      cc: str | None = None, repeats: int = 7, min_time: float = 0.05, count: int = 64,
                      build: bool = True, timeout: float | None = 1800, check_trials: int = 3) -> dict:
    """Pinocchio's generated code on ``urdf`` (free-flyer root if ``floating``): build (or reuse)
    the harness and the libraries, check them, time them. Returns ``{"timings": {quantity:
    {method: Timing}}, "check": {quantity: error}, "skipped": {quantity: why}, "versions",
    "flags", "build_s", "bytes": {quantity: size of the generated C}}``; BenchError saying why
    when CppADCodeGen is missing, a build fails or a check disagrees."""
    wanted = {qty: CPPADCG_FUNCTIONS[qty] for qty in quantities if qty in CPPADCG_FUNCTIONS}
    skipped = {qty: "no CodeGen class in Pinocchio for this quantity (it has rnea, minv, aba and their derivatives)"
               for qty in quantities if qty not in CPPADCG_FUNCTIONS}
    versions = _versions()
    if not wanted:
        return {"timings": {}, "check": {}, "skipped": skipped, "versions": versions, "flags": flags, "build_s": 0.0,
                "bytes": {}}
    model = _model(urdf, floating, gravity)
    t0 = time.perf_counter()
    exe = harness_binary(build=build, timeout=timeout)
    with tempfile.TemporaryDirectory(prefix="symgen-cppadcg-") as tmp:
        archive = Path(tmp) / "model.txt"
        model.saveToText(str(archive))
        folders = libraries(exe, model, archive, list(wanted.values()), flags, cc, timeout)
        build_s = time.perf_counter() - t0
        errors = check(exe, model, archive, folders, trials=check_trials)
        results = run_harness(exe, [archive, "time", _spec(folders), repeats, min_time, count],
                              f"the CppADCodeGen harness on {urdf}")
    timings = {qty: {METHOD: results[f], EVAL_METHOD: results[f"{f}:eval"]} for qty, f in wanted.items()}
    return {"timings": timings, "check": {qty: errors[f] for qty, f in wanted.items()}, "skipped": skipped,
            "versions": versions, "flags": flags, "build_s": round(build_s, 2),
            "bytes": {qty: generated_size(folders[f], f) for qty, f in wanted.items()}}


def measure(m, package_dir, urdf, manifest: dict, quantities, settings) -> None:
    """``symgen bench --cppadcg``: Pinocchio's generated code for the wanted quantities into the
    Measurement ``m`` (methods ``cppadcg`` and ``cppadcg_eval``; cells "n/a" with the reason when
    it cannot run); versions, flags and the check in ``m.info["cppadcg"]``."""
    from .cloop import dimensions
    from .pin import pin_needs_free_flyer

    wanted = [qty for qty in quantities if qty in CPPADCG_FUNCTIONS]
    if urdf is None:
        m.notes["cppadcg"] = "CppADCodeGen: needs --urdf (Pinocchio's model is built from it)"
        return
    if wanted:                          # (a bench of contact functions alone: only the rows below)
        try:
            if manifest.get("options", {}).get("parametric"):
                raise BenchError("a --parametric package: Pinocchio's generated code folds the URDF's inertias; "
                                 "not comparable")
            from ..verify import manifest_gravity

            floating = pin_needs_free_flyer(urdf, dimensions(manifest)[1])
            out = pinocchio_cppadcg(urdf, quantities, floating=floating, gravity=manifest_gravity(manifest, package_dir),
                                    flags=settings.flags, repeats=settings.repeats, min_time=settings.min_time,
                                    timeout=settings.pin_timeout)
        except BenchError as exc:
            m.notes["cppadcg"] = f"CppADCodeGen: not timed: {exc}"
            for qty in wanted:
                m.missing([METHOD, EVAL_METHOD], qty, "n/a", str(exc))
        else:
            for qty, by_method in out["timings"].items():
                for method, t in by_method.items():
                    m.put(method, qty, t)
                if qty in CPPADCG_NOTES:
                    m.notes[METHOD, qty] = CPPADCG_NOTES[qty]
            m.info.setdefault("cppadcg", {}).update({k: out[k] for k in ("versions", "flags", "check", "build_s", "bytes")})
    have = set(manifest.get("functions", ())) if manifest.get("contacts") else set()
    for f, need in ((CD, {"contact_terms"}), (CDD, {"contact_terms", "contact_partials"})):
        if not need <= have:
            continue
        try:                            # the package's contact_dynamics beside CodeGenConstraintDynamics
            cd = constraint_dynamics(package_dir, urdf, settings.flags, repeats=settings.repeats,
                                     min_time=settings.min_time, timeout=settings.pin_timeout, derivatives=f == CDD)
        except BenchError as exc:
            m.notes[f"cppadcg_{f}"] = f"CppADCodeGen's {f}: not timed: {exc}"
            continue
        m.notes[f"cppadcg_{f}"] = format_constraint(cd)
        m.info.setdefault("cppadcg", {})[f] = cd


def constraint_reference(pin, model, models, q, v, tau, derivatives: bool = False) -> np.ndarray:
    """[ddq, lambda_c] of Pinocchio's double constraintDynamics, every contact active (``models``:
    :func:`~symgen.oracle_contact_derivatives.constraint_models`); with ``derivatives``
    computeConstraintDynamicsDerivatives' six blocks as CodeGen lays them out (ddq_* row-major,
    dlambda_* column-major)."""
    from ..oracle_contact_derivatives import constraint_data

    data = constraint_data(pin, model, models, q, v, tau, derivatives)
    if not derivatives:
        return np.concatenate([np.asarray(data.ddq), np.asarray(data.lambda_c)])
    return np.concatenate([np.asarray(getattr(data, k)).reshape(-1, order=o) for k, o in
                           (("ddq_dq", "C"), ("ddq_dv", "C"), ("ddq_dtau", "C"), ("dlambda_dq", "F"),
                            ("dlambda_dv", "F"), ("dlambda_dtau", "F"))])


def check_constraint(exe: Path, model, archive: Path, folders: dict, models, trials: int = 3, seed: int = 0,
                     rtol: float = CHECK_RTOL, f: str = CD) -> float:
    """CodeGenConstraintDynamics' (``f``: or its derivatives') library against Pinocchio's double
    functions on ``trials`` random states: the max relative error; BenchError above ``rtol``."""
    import pinocchio as pin

    rng = np.random.default_rng(seed)
    states = [(pin_random_q(model, rng), *(ARGUMENTS[x].draw(rng, model.nq, model.nv) for x in ("qd", "tau")))
              for _ in range(trials)]
    with tempfile.TemporaryDirectory(prefix="symgen-cppadcg-") as tmp:
        path = Path(tmp) / "states.txt"
        path.write_text(f"{trials}\n" + "\n".join(" ".join(repr(float(x)) for x in np.concatenate(s)) for s in states))
        proc = subprocess.run([str(exe), str(archive), "check", _spec(folders), str(path)], capture_output=True, text=True)
    if proc.returncode != 0:
        raise BenchError(f"the CppADCodeGen harness failed (exit {proc.returncode}): "
                         f"{proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else '(no output)'}")
    worst = 0.0
    for (q, v, t), y in zip(states, json.loads(proc.stdout)[f]):
        ref, y = constraint_reference(pin, model, models, q, v, t, f == CDD), np.asarray(y, dtype=float)
        if y.shape != ref.shape:
            raise BenchError(f"CppADCodeGen's {f} gives {y.size} values, Pinocchio's {ref.size}: not timed")
        worst = max(worst, float(np.max(np.abs(y - ref))) / max(1.0, float(np.max(np.abs(ref)))))
    if not worst <= rtol:
        raise BenchError(f"CppADCodeGen's {f} disagrees with Pinocchio's constraintDynamics by {worst:.3g} "
                         f"(relative; limit {rtol:g}): not timed")
    return worst


def constraint_dynamics(package_dir, urdf, flags: str = DEFAULT_FLAGS, cc: str | None = None, repeats: int = 7,
                        min_time: float = 0.05, count: int = 64, build: bool = True, timeout: float | None = 1800,
                        check_trials: int = 3, derivatives: bool = False) -> dict:
    """Pinocchio's ``CodeGenConstraintDynamics`` of a package built with ``--contacts`` (every
    contact active), built with the C loop's flags, checked, and timed in one process beside
    Pinocchio's double ``constraintDynamics`` and the package's ``contact_dynamics`` (its C as a
    shared object, the same flags) on the same states; with ``derivatives``, the same for
    ``CodeGenConstraintDynamicsDerivatives``, computeConstraintDynamicsDerivatives and the package's
    ``contact_dynamics_derivatives`` (the package needs ``contact_partials``). ``{"us": {method: median µs}, "min_us",
    "ratio": {rival: rival / symgen}, "check", "build_s", "bytes", "contacts"}``."""
    import pinocchio as pin

    from ..oracle_contact_derivatives import constraint_models
    from .cloop import package_sources, read_manifest
    from .contact import _contact_frames
    from .pin import pin_needs_free_flyer

    manifest = read_manifest(package_dir)
    contacts = manifest.get("contacts")
    f, need = (CDD, ("contact_terms", "contact_partials")) if derivatives else (CD, ("contact_terms",))
    if not contacts or not set(need) <= set(manifest["functions"]):
        raise BenchError(f"{package_dir}: no contact_dynamics{'_derivatives' if derivatives else ''} "
                         f"(symgen build --contacts ... --quantities {','.join(need)})")
    model, ids = _contact_frames(urdf, pin_needs_free_flyer(urdf, int(manifest["nv"])), manifest)
    models = constraint_models(pin, model, ids, [k for _, k in contacts])
    spec = f + "@" + ";".join(f"{i}:{3 if k == '3d' else 6}" for i, (_, k) in zip(ids, contacts))
    t0 = time.perf_counter()
    exe = harness_binary(build=build, timeout=timeout)
    with tempfile.TemporaryDirectory(prefix="symgen-cppadcg-") as tmp:
        archive = Path(tmp) / "model.txt"
        model.saveToText(str(archive))
        folders = libraries(exe, model, archive, [spec], flags, cc, timeout)
        build_s = time.perf_counter() - t0
        error = check_constraint(exe, model, archive, folders, models, trials=check_trials, f=f)
        shared = Path(tmp) / f"lib{manifest['name']}.so"
        run_compiler([find_cc(cc), *shlex.split(flags), "-fPIC", "-shared", "-std=c99",
                      *map(str, package_sources(package_dir, manifest)), "-o", str(shared), "-lm"], timeout,
                     f"{package_dir}: the package as a shared object")
        res = run_harness(exe, [archive, "time", _spec(folders), repeats, min_time, count, shared, manifest["name"]],
                          f"the CppADCodeGen harness on {urdf}")
    names = {"symgen": f"{f}:symgen", METHOD: f, EVAL_METHOD: f"{f}:eval", "pinocchio": f"{f}:pinocchio"}
    us = {k: res[n].median_ns / 1e3 for k, n in names.items()}
    return {"us": us, "min_us": {k: res[n].min_ns / 1e3 for k, n in names.items()},
            "ratio": {k: t / us["symgen"] for k, t in us.items() if k != "symgen"}, "check": error,
            "build_s": round(build_s, 2), "bytes": generated_size(folders[spec], f),
            "contacts": [f"{n}:{k}" for n, k in contacts], "function": f}


def format_constraint(out: dict) -> str:
    us, r = out["us"], out["ratio"]
    d = "Derivatives" if out.get("function") == CDD else ""
    return (f"CodeGenConstraintDynamics{d} ({', '.join(out['contacts'])}, all active; one process, same states; "
            f"checked {out['check']:.1e}): symgen contact_dynamics{d and '_derivatives'} {us['symgen']:.3f} µs, "
            f"CppADCodeGen "
            f"{us[METHOD]:.3f} ({r[METHOD]:.2f}x), its evalFunction {us[EVAL_METHOD]:.3f} ({r[EVAL_METHOD]:.2f}x), "
            f"Pinocchio constraintDynamics{d and ' + its derivatives'} {us['pinocchio']:.3f} ({r['pinocchio']:.2f}x)")
