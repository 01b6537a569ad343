"""Timing harnesses: Python callables, a generated package's C in a compiled C loop, and Pinocchio.

Every harness reports the same record, :class:`Timing`: the median, min and max time per call
over ``repeats`` repeats, each repeat a loop of ``inner`` calls, with ``inner`` calibrated so that
one repeat lasts at least ``min_time`` seconds (as ``timeit.Timer.autorange`` does). Medians over
repeats are what a shared, noisy machine can report honestly; min-max shows the noise.

- :func:`time_callable` times a Python callable (``timeit``-style, garbage collection off).
- :func:`c_loop` writes a small C driver against a generated package's ``NAME.h``, compiles it with
  the package's C sources under given flags (default ``-O3 -march=native``), and times each
  function in a loop over pre-generated random inputs inside C. The package is a black box: its
  ``manifest.json`` names the functions and their arguments, its header must declare them.
- :func:`pinocchio_cpp` times Pinocchio in C++ (``computeCoriolisMatrix``,
  ``ComputeRNEASecondOrderDerivatives``) on a URDF loaded at run time (through the Python
  binding, handed over as a text archive), with a harness compiled header-only against the
  ``pin`` wheel (cached under ``~/.cache/symgen``).
- :func:`pinocchio_python` times the same calls through Pinocchio's Python binding.

Random states follow the paper's Section 5: q in [0, 2 pi], qd in [0, 10].
"""
from __future__ import annotations

import gc
import hashlib
import json
import os
import platform
import shlex
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from .codegen.render import render
from .quantities import ARGUMENTS, QUANTITIES
from .errors import SymgenError

DEFAULT_FLAGS = "-O3 -march=native"
PIN_CXX_FLAGS = "-std=c++17 -O3 -march=native -DNDEBUG"
#: quantity -> generated function name (the package's manifest says which it has)
FUNCTIONS = {k: x.function for k, x in QUANTITIES.items()}


class BenchError(SymgenError):
    """A harness could not be built or run (compiler missing, compile failed or timed out)."""


@dataclass
class Timing:
    median_ns: float
    min_ns: float
    max_ns: float
    inner: int
    repeats: int

    @property
    def us(self) -> float:
        return self.median_ns / 1e3

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_samples(cls, ns_per_call, inner) -> "Timing":
        s = sorted(ns_per_call)
        return cls(float(np.median(s)), float(s[0]), float(s[-1]), int(inner), len(s))

    def scaled(self, factor: float) -> "Timing":
        """Per-item time of a call that handles ``1/factor`` items (a batch)."""
        return Timing(self.median_ns * factor, self.min_ns * factor, self.max_ns * factor, self.inner, self.repeats)


def cache_dir() -> Path:
    root = Path(os.environ.get("SYMGEN_CACHE") or Path.home() / ".cache" / "symgen")
    root.mkdir(parents=True, exist_ok=True)
    return root


# ---------------------------------------------------------------------------- Python callables

def time_callable(fn, repeats: int = 7, min_time: float = 0.05, max_inner: int = 10**7) -> Timing:
    """Median/min/max ns per call of ``fn()`` over ``repeats`` repeats of an auto-calibrated loop."""
    gc_was = gc.isenabled()
    gc.disable()
    try:
        inner = 1
        while True:                       # calibrate: 1, 2, 5, 10, 20, 50, ... calls per repeat
            dt = _loop(fn, inner)
            if dt >= min_time or inner >= max_inner:
                break
            inner = _next_inner(inner, dt, min_time)
        samples = [_loop(fn, inner) * 1e9 / inner for _ in range(repeats)]
    finally:
        if gc_was:
            gc.enable()
    return Timing.from_samples(samples, inner)


def _loop(fn, inner: int) -> float:
    it = range(inner)
    t0 = time.perf_counter()
    for _ in it:
        fn()
    return time.perf_counter() - t0


def _next_inner(inner: int, dt: float, min_time: float) -> int:
    if dt <= 0:
        return inner * 10
    return max(inner + 1, min(inner * 10, int(inner * 1.2 * min_time / dt) + 1))


def random_states(n: int, count: int, seed: int = 0):
    """``count`` states as in the paper's Section 5: q in [0, 2 pi], qd in [0, 10]."""
    rng = np.random.default_rng(seed)
    return rng.uniform(0.0, 2 * np.pi, (count, n)), rng.uniform(0.0, 10.0, (count, n))


# ------------------------------------------------------------------------------ compiling

def _run(cmd, timeout, what):
    """Run a compiler; on timeout end its whole process group (gcc's cc1 outlives a killed driver)."""
    try:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
    except FileNotFoundError as exc:
        raise BenchError(f"{what}: {exc}") from None
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except BaseException as exc:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.communicate()
        if isinstance(exc, subprocess.TimeoutExpired):
            raise BenchError(f"{what}: compilation took more than {timeout:g} s (timeout)") from None
        raise
    proc = subprocess.CompletedProcess(cmd, proc.returncode, stdout, stderr)
    if proc.returncode != 0:
        lines = [ln for ln in proc.stderr.splitlines() if "error" in ln] or proc.stderr.strip().splitlines() or ["(no output)"]
        raise BenchError(f"{what}: compilation failed: {lines[0]}")
    return proc


def compiler_version(cc: str) -> str:
    try:
        out = subprocess.run([cc, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return (out.splitlines() or ["unknown"])[0]


def _find_cc(cc: str | None, env: str = "CC", default: str = "cc") -> str:
    cc = cc or os.environ.get(env) or default
    if shutil.which(cc) is None:
        raise BenchError(f"C compiler {cc!r} not found (set {env})")
    return cc


# ---------------------------------------------------------------------- generated C in a C loop

def read_manifest(package_dir) -> dict:
    path = Path(package_dir) / "manifest.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BenchError(f"{path}: not found; is {package_dir} a package written by symgen build?") from None
    except json.JSONDecodeError as exc:
        raise BenchError(f"{path}: not valid JSON: {exc}") from None


def package_functions(manifest: dict, quantities) -> list[tuple[str, str, dict]]:
    """(quantity, function name, manifest entry) for each wanted quantity the package has."""
    have = manifest.get("functions", {})
    wanted = []
    for qty in quantities:
        fname = FUNCTIONS.get(qty)
        if fname is None:
            raise BenchError(f"--functions: unknown {qty!r}; expected a comma list of {','.join(FUNCTIONS)}")
        if fname not in have:
            raise BenchError(f"{manifest.get('name')}: the package has no {fname} ({qty}); it has "
                             f"{', '.join(sorted(have)) or 'nothing'}")
        wanted.append((qty, fname, have[fname]))
    return wanted


def c_driver_source(manifest: dict, quantities, count: int = 64, update: bool = False) -> str:
    """The C driver (``templates/bench_driver.c.j2``) timing ``quantities`` of a generated package
    over ``count`` random states drawn in C from the registry's argument ranges; with ``update``,
    also each function's ``_update`` variant (reported as ``"<quantity>:update"``), which leaves
    the structurally zero entries of the output alone."""
    name, nv = manifest["name"], int(manifest["nv"])
    nq = int(manifest.get("nq", nv))
    row = {a: i for i, a in enumerate(ARGUMENTS)}          # inputs[row][state][k]
    runners, out_size = [], 1
    for qty, fname, entry in package_functions(manifest, quantities):
        size = int(np.prod(entry["shape"]))                  # the manifest: the output the package writes
        out_size = max(out_size, size)
        args = [f"inputs[{row[a]}][s]" for a in QUANTITIES[qty].arguments] + ["out"]
        variants = [("", qty)] + ([("_update", f"{qty}:update")] if update else [])
        runners += [{"runner": fname + suffix, "function": fname + suffix, "arguments": args, "label": label,
                     "last": size - 1} for suffix, label in variants]
    arguments = [{"name": a.name, "low": repr(a.low), "high": repr(a.high), "span": repr(a.high - a.low)}
                 for a in ARGUMENTS.values()]
    return render("bench_driver.c.j2", {"name": name, "header": f"{name}.h", "n": max(nq, nv), "count": count,
                                        "out_size": out_size, "arguments": arguments, "runners": runners})


def package_sources(package_dir, manifest: dict) -> list[Path]:
    """The package's C sources (every ``*.c`` but the CPython binding), sorted."""
    ext = manifest.get("c_extension", f"_{manifest['name']}_ext")
    sources = sorted(p for p in Path(package_dir).glob("*.c") if p.stem != ext)
    if not sources:
        raise BenchError(f"{package_dir}: no C sources")
    return sources


_FAILED: dict = {}        # object path -> (timeout, message) of compiles that failed in this process


def compile_package_objects(package_dir, manifest, flags: str = DEFAULT_FLAGS, cc: str | None = None,
                            timeout: float | None = None) -> list[Path]:
    """Object files of the package's C sources under ``flags``, cached by content, flags and
    compiler (so a big generated file compiles once per flag set)."""
    cc = _find_cc(cc)
    version = compiler_version(cc)
    header = Path(package_dir) / f"{manifest['name']}.h"
    objs = []
    for src in package_sources(package_dir, manifest):
        h = hashlib.sha256()
        for part in (src.read_bytes(), header.read_bytes() if header.exists() else b"", flags.encode(), version.encode()):
            h.update(part)
            h.update(b"\0")
        obj = cache_dir() / "c-objects" / f"{src.stem}-{h.hexdigest()[:20]}.o"
        if str(obj) in _FAILED and (timeout is None or _FAILED[str(obj)][0] >= timeout):
            raise BenchError(_FAILED[str(obj)][1])       # the same compile failed in this process
        if not obj.exists():
            obj.parent.mkdir(parents=True, exist_ok=True)
            tmp = obj.with_suffix(f".{os.getpid()}.tmp.o")
            try:
                _run([cc, *shlex.split(flags), "-std=c99", "-c", str(src), "-o", str(tmp)], timeout,
                     f"{src.name} ({flags})")
            except BenchError as exc:
                _FAILED[str(obj)] = (timeout or float("inf"), str(exc))
                tmp.unlink(missing_ok=True)
                raise
            os.replace(tmp, obj)
        objs.append(obj)
    return objs


def c_loop(package_dir, quantities=("C", "Gamma"), flags: str = DEFAULT_FLAGS, cc: str | None = None,
           repeats: int = 7, min_time: float = 0.05, count: int = 64, timeout: float | None = None,
           update: bool = False) -> dict:
    """Time the package's C functions in a compiled C loop over ``count`` random states:
    ``{quantity: Timing}``. ``flags`` compile both the package and the driver."""
    package_dir = Path(package_dir)
    manifest = read_manifest(package_dir)
    if not (package_dir / f"{manifest['name']}.h").exists():
        raise BenchError(f"{package_dir}: no {manifest['name']}.h")
    cc = _find_cc(cc)
    objs = compile_package_objects(package_dir, manifest, flags, cc, timeout)
    with tempfile.TemporaryDirectory(prefix="symgen-bench-") as tmp:
        driver = Path(tmp) / "driver.c"
        driver.write_text(c_driver_source(manifest, quantities, count, update), encoding="utf-8")
        exe = Path(tmp) / "driver"
        _run([cc, *shlex.split(flags), "-std=c99", f"-I{package_dir}", str(driver), *map(str, objs),
              "-o", str(exe), "-lm"], timeout, f"{driver}")
        proc = subprocess.run([str(exe), str(repeats), str(min_time)], capture_output=True, text=True)
    if proc.returncode != 0:
        raise BenchError(f"{package_dir}: the C driver failed (exit {proc.returncode}): {proc.stderr.strip()[:200]}")
    return {k: Timing(**v) for k, v in json.loads(proc.stdout)["results"].items()}


# ------------------------------------------------------------------------ Pinocchio, Python

def _pin():
    try:
        import pinocchio
    except ImportError as exc:
        raise BenchError(f"Pinocchio is not installed (pip install pin): {exc}") from None
    return pinocchio


def pin_version() -> str | None:
    try:
        return _pin().__version__
    except BenchError:
        return None


def pin_random_q(model, rng) -> np.ndarray:
    """A valid random configuration: each 1-DoF joint angle in [0, 2 pi] ((cos, sin) for an
    unbounded one), anything else random then normalized."""
    pin = _pin()
    q = pin.neutral(model)
    for j in range(1, model.njoints):
        jm = model.joints[j]
        if jm.nq == jm.nv:
            q[jm.idx_q:jm.idx_q + jm.nq] = rng.uniform(0, 2 * np.pi, jm.nq)
        elif jm.nq == 2 and jm.nv == 1:
            a = rng.uniform(0, 2 * np.pi)
            q[jm.idx_q:jm.idx_q + 2] = np.cos(a), np.sin(a)
        else:
            q[jm.idx_q:jm.idx_q + jm.nq] = rng.uniform(-np.pi, np.pi, jm.nq)
    return pin.normalize(model, q)


def pin_needs_free_flyer(urdf, nv: int) -> bool:
    """Whether Pinocchio needs a free-flyer root on ``urdf`` to have ``nv`` DoF (a package built
    with --floating-base from a URDF that has no virtual joints)."""
    pin = _pin()
    model_nv = pin.buildModelFromUrdf(str(urdf)).nv
    if model_nv == nv:
        return False
    if model_nv + 6 == nv:
        return True
    raise BenchError(f"{urdf}: Pinocchio has {model_nv} DoF, the package {nv}; not the same robot")


def pinocchio_python(urdf, quantities=("C", "Gamma"), repeats: int = 7, min_time: float = 0.05,
                     seed: int = 0, floating: bool = False) -> dict:
    """Pinocchio through its Python binding on ``urdf`` (with a free-flyer root if ``floating``):
    ``{quantity: Timing or reason}``. Gamma is ``computeRNEASecondOrderDerivatives`` when the
    binding has it."""
    pin = _pin()
    model = (pin.buildModelFromUrdf(str(urdf), pin.JointModelFreeFlyer()) if floating
             else pin.buildModelFromUrdf(str(urdf)))
    data = model.createData()
    rng = np.random.default_rng(seed)
    q, v, zero = pin_random_q(model, rng), rng.uniform(0, 10, model.nv), np.zeros(model.nv)
    out = {}
    for qty in quantities:
        if qty == "C":
            out[qty] = time_callable(lambda: pin.computeCoriolisMatrix(model, data, q, v), repeats, min_time)
        elif qty == "Gamma":
            fn = getattr(pin, "computeRNEASecondOrderDerivatives", None) or getattr(pin, "ComputeRNEASecondOrderDerivatives", None)
            if fn is None:
                out[qty] = f"not in the Python binding of pin {pin.__version__}"
            else:
                out[qty] = time_callable(lambda: fn(model, data, q, v, zero), repeats, min_time)
    return out


# -------------------------------------------------------------------------- Pinocchio, C++

#: the Pinocchio C++ harness; its text is part of the cache key of the compiled harness
_PIN_CPP = render("bench_pinocchio.cpp.j2", {})


def pin_prefix() -> Path:
    """The ``cmeel.prefix`` folder of the installed ``pin`` wheel (headers and libraries)."""
    pin = _pin()
    for parent in Path(pin.__file__).resolve().parents:
        if parent.name == "cmeel.prefix":
            return parent
    raise BenchError(f"pinocchio at {pin.__file__} is not a cmeel wheel (no cmeel.prefix)")


def pin_cpp_command(prefix: Path, flags: str, source: Path, exe: Path) -> list[str]:
    inc = prefix / "include"
    missing = [what for what, path in (("Eigen (pip install cmeel-eigen)", inc / "eigen3" / "Eigen"),
                                        ("Pinocchio headers", inc / "pinocchio" / "algorithm"))
               if not path.exists()]
    if missing:
        raise BenchError(f"cannot build the Pinocchio C++ harness: missing {', '.join(missing)} under {prefix}")
    defines = ["BOOST_MPL_LIMIT_LIST_SIZE=30", "BOOST_MPL_LIMIT_VECTOR_SIZE=30", "BOOST_MPL_CFG_NO_PREPROCESSED_HEADERS",
               "BOOST_FUSION_INVOKE_MAX_ARITY=12"]
    # header-only on purpose: Pinocchio's libraries are built without -march=native, and mixing
    # their Eigen alignment with ours crashes; the model comes in as a text archive instead
    return ["c++" if shutil.which("c++") else "g++", *shlex.split(flags),
            f"-I{inc}", f"-I{inc / 'eigen3'}", f"-I{inc / 'pinocchio' / 'deprecated'}",
            *(f"-D{d}" for d in defines), str(source), "-o", str(exe), f"-L{prefix / 'lib'}",
            f"-Wl,-rpath,{prefix / 'lib'}", "-lboost_serialization"]


def pin_cpp_binary(flags: str = PIN_CXX_FLAGS, timeout: float | None = 1800, build: bool = True) -> Path:
    """The compiled Pinocchio harness for ``flags``, cached under ``~/.cache/symgen`` by pin
    version, flags and harness source (the header-only build takes minutes and GBs of memory)."""
    prefix = pin_prefix()
    key = hashlib.sha256(f"{pin_version()}\0{flags}\0{_PIN_CPP}".encode()).hexdigest()[:16]
    exe = cache_dir() / f"pin-bench-{pin_version()}-{key}"
    if exe.exists():
        return exe
    if not build:
        raise BenchError(f"the Pinocchio C++ harness is not built yet ({exe})")
    with tempfile.TemporaryDirectory(prefix="symgen-pin-") as tmp:
        src = Path(tmp) / "pin_bench.cpp"
        src.write_text(_PIN_CPP, encoding="utf-8")
        out = Path(tmp) / "pin_bench"
        _run(pin_cpp_command(prefix, flags, src, out), timeout, "Pinocchio C++ harness")
        shutil.move(str(out), exe)
    return exe


def pinocchio_cpp(urdf, quantities=("C", "Gamma"), flags: str = PIN_CXX_FLAGS, repeats: int = 7,
                  min_time: float = 0.05, build: bool = True, timeout: float | None = 1800,
                  floating: bool = False, count: int = 64) -> dict:
    """Pinocchio in C++ on ``urdf`` (free-flyer root if ``floating``): ``{"C": Timing, "Gamma":
    Timing, "Gamma_by_n_C": Timing}`` for the wanted ones; raises BenchError saying why when the
    harness cannot be built or run."""
    unknown = set(quantities) - {"C", "Gamma", "Gamma_by_n_C"}
    if unknown:
        raise BenchError(f"the Pinocchio harness times C, Gamma and Gamma_by_n_C, not {', '.join(sorted(unknown))}")
    exe = pin_cpp_binary(flags, timeout, build)
    pin = _pin()
    model = (pin.buildModelFromUrdf(str(urdf), pin.JointModelFreeFlyer()) if floating
             else pin.buildModelFromUrdf(str(urdf)))
    with tempfile.TemporaryDirectory(prefix="symgen-pin-") as tmp:
        archive = Path(tmp) / "model.txt"
        model.saveToText(str(archive))
        proc = subprocess.run([str(exe), str(archive), str(repeats), str(min_time), ",".join(quantities), str(count)],
                              capture_output=True, text=True)
    if proc.returncode != 0:
        raise BenchError(f"Pinocchio C++ harness failed on {urdf}: {proc.stderr.strip()[:300]}")
    return {k: Timing(**v) for k, v in json.loads(proc.stdout)["results"].items()}


# ------------------------------------------------------------------------- symgen bench

def _call_args(entry: dict, states) -> list:
    return [states[p] for p in entry["inputs"]]


def bench_package(package_dir, urdf=None, quantities=("C", "Gamma"), flags: str = DEFAULT_FLAGS,
                  repeats: int = 7, min_time: float = 0.05, compile_timeout: float | None = None,
                  pin_cpp: str = "build", batch: int = 10_000) -> dict:
    """Everything ``symgen bench`` reports for one package, as a JSON-ready dict: per quantity,
    µs per call of the C loop, the Python call (one state; per state in a batch), and Pinocchio
    from Python and C++ on ``urdf`` when given."""
    from .codegen.build import import_package

    package_dir = Path(package_dir)
    manifest = read_manifest(package_dir)
    funcs = package_functions(manifest, quantities)
    n, floating = int(manifest["nv"]), bool(manifest.get("floating_base"))
    result = {"package": str(package_dir), "robot": manifest.get("robot"), "nv": n, "flags": flags,
              "machine": machine_info(), "us": {q: {} for q, _, _ in funcs}, "spread_us": {q: {} for q, _, _ in funcs},
              "notes": {}}

    def put(qty, method, value):
        if isinstance(value, Timing):
            result["us"][qty][method] = round(value.us, 4)
            result["spread_us"][qty][method] = [round(value.min_ns / 1e3, 4), round(value.max_ns / 1e3, 4)]
        else:
            result["notes"][f"{qty}/{method}"] = value

    try:
        for key, t in c_loop(package_dir, quantities, flags, repeats=repeats, min_time=min_time,
                             timeout=compile_timeout, update=True).items():
            qty, _, variant = key.partition(":")
            put(qty, "c_loop_update" if variant else "c_loop", t)
    except BenchError as exc:
        for qty, _, _ in funcs:
            put(qty, "c_loop", str(exc))
    pkg = import_package(package_dir)
    Q, QD = random_states(n, batch, seed=1)
    QDD = np.random.default_rng(2).uniform(-10, 10, (batch, n))
    single = {"q": Q[0].copy(), "qd": QD[0].copy(), "qdd": QDD[0].copy()}
    many = {"q": Q, "qd": QD, "qdd": QDD}
    for qty, fname, entry in funcs:
        if pkg.c is None:
            put(qty, "c_py_single", "the package has no compiled binding")
            continue
        fn = getattr(pkg.c, fname)
        args1, argsb = _call_args(entry, single), _call_args(entry, many)
        put(qty, "c_py_single", time_callable(lambda: fn(*args1), repeats, min_time))
        put(qty, "c_py_batch", time_callable(lambda: fn(*argsb), repeats, min_time).scaled(1 / batch))
    if urdf is not None:
        pin_q = [q for q, _, _ in funcs if q in ("C", "Gamma")]
        try:
            floating = pin_needs_free_flyer(urdf, n)
        except BenchError as exc:
            result["notes"]["pinocchio"] = str(exc)
            pin_q, pin_cpp = [], "off"
        try:
            for qty, t in pinocchio_python(urdf, pin_q, repeats, min_time, floating=floating).items():
                put(qty, "pin_py", t)
        except BenchError as exc:
            result["notes"]["pin_py"] = str(exc)
        if pin_cpp != "off":
            try:
                names = pin_q + (["Gamma_by_n_C"] if "Gamma" in pin_q else [])
                for qty, t in pinocchio_cpp(urdf, names, repeats=repeats, min_time=min_time,
                                            build=pin_cpp == "build", floating=floating).items():
                    put("Gamma" if qty == "Gamma_by_n_C" else qty, "pin_cpp_n_c" if qty == "Gamma_by_n_C" else "pin_cpp", t)
            except BenchError as exc:
                result["notes"]["pin_cpp"] = str(exc)
        if floating:
            result["notes"]["pinocchio"] = "floating base: Pinocchio has a free-flyer root joint, symgen six 1-DoF joints"
    result["ratios"] = {qty: ratios(result["us"][qty], result["spread_us"][qty]) for qty, _, _ in funcs}
    return result


RATIO_PAIRS = (("pin_cpp", "c_loop"), ("pin_cpp_n_c", "c_loop"), ("pin_py", "c_py_single"))


def ratios(us: dict, spread: dict) -> dict:
    """How many times faster symgen is (Pinocchio C++ / C loop, Pinocchio Python / Python call),
    of the medians and of the minima: on a shared machine the two are timed minutes apart, and
    the minima (least disturbed repeats) compare the two codes more steadily than the medians."""
    out = {}
    for theirs, ours in RATIO_PAIRS:
        if theirs in us and ours in us and us[ours] > 0:
            out[f"{theirs}/{ours}"] = round(us[theirs] / us[ours], 2)
            out[f"{theirs}/{ours} (min)"] = round(spread[theirs][0] / spread[ours][0], 2)
    return out


BENCH_LABELS = {"c_loop": "generated C, C loop",
                "c_loop_update": "generated C, C loop, _update (no zeroing)", "c_py_single": "generated C from Python, one state",
                "c_py_batch": "generated C from Python, per state in a batch",
                "pin_cpp": "Pinocchio C++", "pin_cpp_n_c": "Pinocchio C++, n x computeCoriolisMatrix",
                "pin_py": "Pinocchio from Python"}


def format_report(result: dict) -> str:
    lines = [f"{result['robot']} ({result['nv']} DoF), {result['package']}; C loop flags {result['flags']}; "
             f"{result['machine']['cpu']}"]
    for qty, us in result["us"].items():
        lines.append(f"{qty}: median µs per call (min-max)")
        for method, value in us.items():
            lo, hi = result["spread_us"][qty][method]
            lines.append(f"  {BENCH_LABELS.get(method, method):45s} {value:12.3f}   ({lo:.3f}-{hi:.3f})")
        for k, v in result["ratios"][qty].items():
            lines.append(f"  ratio {k:39s} {v:12.2f}x")
    for k, v in result["notes"].items():
        lines.append(f"note {k}: {v}")
    return "\n".join(lines)


# ------------------------------------------------------------------------------- machine

def machine_info(cc: str | None = None) -> dict:
    """What a reader needs to place the numbers: CPU, cores, Python, SymPy, compiler, Pinocchio."""
    import sympy

    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    cc = cc or os.environ.get("CC") or "cc"
    try:                                      # which symgen made the numbers, in a checkout
        here = Path(__file__).resolve().parent
        commit = subprocess.run(["git", "-C", str(here), "describe", "--always", "--dirty"], capture_output=True,
                                text=True, timeout=10).stdout.strip() or None
    except (OSError, subprocess.TimeoutExpired):
        commit = None
    return {"cpu": cpu, "symgen_commit": commit, "cores": os.cpu_count(), "platform": platform.platform(),
            "python": sys.version.split()[0], "numpy": np.__version__, "sympy": sympy.__version__,
            "cc": compiler_version(cc) if shutil.which(cc) else "none", "pinocchio": pin_version(),
            "python_ext_suffix": sysconfig.get_config_var("EXT_SUFFIX")}
