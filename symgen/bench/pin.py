"""Pinocchio beside symgen: the same quantities timed through its Python binding and in C++.

- :func:`pinocchio_python` times Pinocchio's calls through its Python binding.
- :func:`pinocchio_cpp` times them in C++ (``templates/bench_pinocchio.cpp.j2``) on a URDF loaded
  at run time (through the Python binding, handed over as a text archive), with a harness compiled
  header-only against the ``pin`` wheel and cached under ``~/.cache/symgen``.

Random states follow the paper's Section 5 (the registry's argument ranges).
"""
from __future__ import annotations

import shlex
import shutil
import tempfile
from pathlib import Path

import numpy as np

from ..quantities import ARGUMENTS, QUANTITIES
from .harness import BenchError, cached_harness, run_harness
from .timing import time_callable

PIN_CXX_FLAGS = "-std=c++17 -O3 -march=native -DNDEBUG"
PIN_CPP_TEMPLATE = "bench_pinocchio.cpp.j2"


#: quantity key -> how Pinocchio computes it (the registry's ``Quantity.pin_call``)
PIN_CALLS = {key: x.pin_call for key, x in QUANTITIES.items() if x.pin_call is not None}
#: C++ harness name -> (quantity, method)
CPP_TIMINGS = {name: (qty, method) for qty, call in PIN_CALLS.items() for name, (method, _) in call.cpp.items()}
#: the timings with external forces, "<quantity>+fext", in place of the quantity's for a package
#: built with --external-forces (the same method: Pinocchio's call, given fext)
FEXT_TIMINGS = {f"{qty}+fext": (qty, next(iter(call.cpp.values()))[0]) for qty, call in PIN_CALLS.items() if call.fext}
CPP_TIMINGS |= FEXT_TIMINGS
#: what the C++ harness times, in order: [{"name", "statement"}]
CPP_STATEMENTS = [{"name": name, "statement": statement}
                  for call in PIN_CALLS.values() for name, (_, statement) in call.cpp.items()] + [
                  {"name": f"{qty}+fext", "statement": call.fext} for qty, call in PIN_CALLS.items() if call.fext]


def cpp_names(qty: str, external: bool = False) -> list:
    """The C++ harness's timings of quantity ``qty`` (with fext where it has them, ``external``)."""
    if external and f"{qty}+fext" in FEXT_TIMINGS:
        return [f"{qty}+fext"]
    return list(PIN_CALLS[qty].cpp)


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


def pin_model(urdf, floating: bool = False):
    """Pinocchio's model of ``urdf``, with a free-flyer root if ``floating``."""
    pin = _pin()
    return (pin.buildModelFromUrdf(str(urdf), pin.JointModelFreeFlyer()) if floating
            else pin.buildModelFromUrdf(str(urdf)))


def pin_random_q(model, rng) -> np.ndarray:
    """A valid random configuration: each 1-DoF joint angle in the range of q ((cos, sin) for an
    unbounded one), anything else random then normalized."""
    pin, q_range = _pin(), (ARGUMENTS["q"].low, ARGUMENTS["q"].high)
    q = pin.neutral(model)
    for j in range(1, model.njoints):
        jm = model.joints[j]
        if jm.nq == jm.nv:
            q[jm.idx_q:jm.idx_q + jm.nq] = rng.uniform(*q_range, jm.nq)
        elif jm.nq == 2 and jm.nv == 1:
            a = rng.uniform(*q_range)
            q[jm.idx_q:jm.idx_q + 2] = np.cos(a), np.sin(a)
        else:
            q[jm.idx_q:jm.idx_q + jm.nq] = rng.uniform(-np.pi, np.pi, jm.nq)
    return pin.normalize(model, q)


def pin_needs_free_flyer(urdf, nv: int) -> bool:
    """Whether Pinocchio needs a free-flyer root on ``urdf`` to have ``nv`` DoF (a package built
    with --floating-base from a URDF that has no virtual joints)."""
    model_nv = pin_model(urdf).nv
    if model_nv == nv:
        return False
    if model_nv + 6 == nv:
        return True
    raise BenchError(f"{urdf}: Pinocchio has {model_nv} DoF, the package {nv}; not the same robot")


def pinocchio_python(urdf, quantities=("C", "Gamma"), repeats: int = 7, min_time: float = 0.05,
                     seed: int = 0, floating: bool = False, external: bool = False) -> dict:
    """Pinocchio through its Python binding on ``urdf`` (with a free-flyer root if ``floating``):
    ``{quantity: Timing or reason}`` for the wanted quantities in :data:`PIN_CALLS` (``external``:
    those with a ``fext`` form given one random force per joint, as the package's f_ext)."""
    pin = _pin()
    model = pin_model(urdf, floating)
    data = model.createData()
    rng = np.random.default_rng(seed)
    q = pin_random_q(model, rng)
    state = {"q": q, "zero": np.zeros(model.nv)}
    state |= {a: ARGUMENTS[a].draw(rng, model.nq, model.nv) for a in ("qd", "qdd", "tau")}
    out = {}
    for qty in quantities:
        call = PIN_CALLS.get(qty)
        if call is None:
            continue
        fn = next((getattr(pin, name) for name in call.python if hasattr(pin, name)), None)
        if fn is None:
            out[qty] = f"not in the Python binding of pin {pin.__version__}"
            continue
        args = [state[a] for a in call.arguments]
        if external and call.fext:
            args.append([pin.Force.Zero()] + [pin.Force(rng.uniform(-10, 10, 6)) for _ in range(model.njoints - 1)])
        out[qty] = time_callable(lambda: fn(model, data, *args), repeats, min_time)
    return out


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
    return cached_harness(PIN_CPP_TEMPLATE, {"timings": CPP_STATEMENTS}, f"{pin_version()}\0{flags}",
                          f"pin-bench-{pin_version()}", lambda src, out: pin_cpp_command(prefix, flags, src, out),
                          timeout, build, "Pinocchio C++ harness", "a few minutes, several GB of memory")


def pinocchio_cpp(urdf, names=("C", "Gamma"), flags: str = PIN_CXX_FLAGS, repeats: int = 7,
                  min_time: float = 0.05, build: bool = True, timeout: float | None = 1800,
                  floating: bool = False, count: int = 64) -> dict:
    """Pinocchio in C++ on ``urdf`` (free-flyer root if ``floating``): ``{name: Timing}`` for the
    wanted harness timings (:data:`CPP_TIMINGS`); raises BenchError saying why when the harness
    cannot be built or run."""
    unknown = set(names) - set(CPP_TIMINGS)
    if unknown:
        raise BenchError(f"the Pinocchio harness times {', '.join(CPP_TIMINGS)}, not {', '.join(sorted(unknown))}")
    exe = pin_cpp_binary(flags, timeout, build)
    model = pin_model(urdf, floating)
    with tempfile.TemporaryDirectory(prefix="symgen-pin-") as tmp:
        archive = Path(tmp) / "model.txt"
        model.saveToText(str(archive))
        return run_harness(exe, [archive, repeats, min_time, ",".join(names), count],
                           f"the Pinocchio C++ harness on {urdf}")
