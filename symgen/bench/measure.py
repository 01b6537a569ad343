"""One measurement of a built package beside Pinocchio: what ``symgen bench`` reports and what
each system of ``symgen tables``' Table 1 is made of.

A :class:`Measurement` holds, per (method, quantity), a :class:`Timing` or a cell with a note
saying why there is no timing. Methods: ``c_loop`` (generated C in a compiled C loop),
``c_loop_update`` (its ``_update`` variant), ``c_loop_batch`` (per state of its C batch, one thread), ``c_py_single`` / ``c_py_batch`` (the compiled
binding from Python, one state / per state of a batch), ``numpy_single`` / ``numpy_batch`` (the
generated NumPy), ``pin_py`` (Pinocchio from Python), ``pin_cpp`` and ``pin_cpp_n_c``
(Pinocchio in C++; Gamma as n calls of C).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..quantities import ARGUMENTS, QUANTITIES
from .cloop import DEFAULT_FLAGS, c_loop, dimensions, package_functions, read_manifest
from .harness import BenchError, CompileTimeout
from .report import bench_result
from .pin import CPP_TIMINGS, PIN_CALLS, cpp_names, pin_needs_free_flyer, pinocchio_cpp, pinocchio_python
from .timing import Timing, time_callable

NO_BINDING = ("n/a", "the package has no compiled binding")
CASADI_METHOD = "casadi_c"
CASADI_PIN_METHOD = "casadi_pin_c"
MUJOCO_METHOD = "mujoco_c"
RIVAL_METHODS = {"casadi": CASADI_METHOD, "casadi_pin": CASADI_PIN_METHOD, "mujoco": MUJOCO_METHOD}    # row suffix -> method
FLOATING_NOTE = "floating base: the free-flyer on both sides (Pinocchio's JointModelFreeFlyer, the same q and v)"


def over(seconds: float) -> str:
    """The cell of a step that passed its timeout."""
    return f"> {seconds:g} s"


@dataclass(frozen=True)
class Settings:
    """How a package is timed."""
    flags: str = DEFAULT_FLAGS                 # C loop (the package's C and the driver)
    repeats: int = 7                           # the median is reported
    min_time: float = 0.05                     # seconds per repeat at least
    compile_timeout: float | None = None       # per compile of the package's C
    batch: int = 10_000                        # states per batch call of the compiled binding
    numpy_batch: int = 0                       # ... of the generated NumPy (0: NumPy not timed)
    update: bool = False                       # also the C loop's ``_update`` variants
    pin_cpp: str = "build"                     # the Pinocchio C++ harness: build | cached | off
    pin_timeout: float | None = 1800           # building that harness
    casadi: bool = False                       # also CasADi's generated C in the C loop (needs the URDF)
    processes: int = 1                         # C loop: median over this many fresh processes
    c_batch: int = 0                           # C loop: also the C batch of this many states (0: not)


@dataclass
class Measurement:
    """What was measured on one package (and its robot): per (method, quantity) a Timing, or a
    cell (a number, ``"> S s"``, ``"n/a"``) with a note saying why."""
    values: dict = field(default_factory=dict)     # (method, quantity) -> Timing or cell
    notes: dict = field(default_factory=dict)      # (method, quantity) or topic -> why
    info: dict = field(default_factory=dict)

    def put(self, method, qty, value):
        self.values[method, qty] = value

    def missing(self, methods, qty, value, note):
        for m in methods:
            self.values[m, qty] = value
            self.notes[m, qty] = note

    def grid(self, by_quantity: bool = False, timings_only: bool = False) -> tuple[dict, dict]:
        """``({outer: {inner: µs or cell}}, {outer: {inner: [min µs, max µs]}})``, outer the method
        (the quantity if ``by_quantity``), medians and spreads rounded to 4 decimals."""
        cells, spread = {}, {}
        for (method, qty), value in self.values.items():
            outer, inner = (qty, method) if by_quantity else (method, qty)
            if isinstance(value, Timing):
                cells.setdefault(outer, {})[inner] = round(value.us, 4)
                spread.setdefault(outer, {})[inner] = [round(value.min_ns / 1e3, 4), round(value.max_ns / 1e3, 4)]
            elif not timings_only:
                cells.setdefault(outer, {})[inner] = value
        return cells, spread

    def note_dict(self, by_quantity: bool = False) -> dict:
        """Notes keyed ``method/quantity`` (``quantity/method`` if ``by_quantity``) or by topic."""
        return {("/".join(key[::-1] if by_quantity else key) if isinstance(key, tuple) else key): note
                for key, note in self.notes.items()}


def draw_states(nq: int, nv: int, count: int, seed: int = 1, links: int | None = None) -> dict:
    """``count`` random states, ``{argument: (count, n) array}``, in the registry's ranges
    (``links``: the robot's moving links, which size params)."""
    rng = np.random.default_rng(seed)
    return {a: x.draw(rng, nq, nv, count, links=links) for a, x in ARGUMENTS.items()}


def time_package(m: Measurement, package_dir, quantities, settings: Settings, no_binding=NO_BINDING,
                 rival=None):
    """Time a built package's C in a C loop and its Python calls (compiled binding; generated NumPy
    if ``settings.numpy_batch``) into ``m``. ``no_binding``: the cell and note when the package has
    no compiled binding. ``rival``: rivals' C timed in the same C loop (a list, :func:`prepare_casadi`)."""
    from ..codegen.build import import_package

    s, package_dir = settings, Path(package_dir)
    manifest = read_manifest(package_dir)
    package_functions(manifest, quantities)          # a function it lacks is an error, not a note
    try:
        t0 = time.perf_counter()
        loop = c_loop(package_dir, quantities, s.flags, repeats=s.repeats, min_time=s.min_time,
                      timeout=s.compile_timeout, update=s.update, rival=rival, processes=s.processes,
                      batch=s.c_batch)
        m.info["c_loop_compile_s"] = round(time.perf_counter() - t0, 2)
        for key, t in loop.items():
            qty, _, variant = key.partition(":")
            m.put(RIVAL_METHODS.get(variant, f"c_loop_{variant}" if variant else "c_loop"), qty, t)
    except BenchError as exc:
        cell = over(s.compile_timeout) if isinstance(exc, CompileTimeout) else "n/a"
        for qty in quantities:
            m.missing(["c_loop"], qty, cell, str(exc))
        for one in rival or []:
            for qty in one["functions"]:
                m.missing([RIVAL_METHODS[one.get("label", one["name"])]], qty, cell, str(exc))

    pkg = import_package(package_dir)
    states = draw_states(*dimensions(manifest), max(s.batch, s.numpy_batch), links=len(manifest["link_names"]))
    backends = [("c_py", pkg.c, s.batch)] + ([("numpy", pkg.numpy, s.numpy_batch)] if s.numpy_batch else [])
    for qty in quantities:
        x = QUANTITIES[qty]
        for prefix, module, batch in backends:
            if module is None:
                m.missing([f"{prefix}_single", f"{prefix}_batch"], qty, *no_binding)
                continue
            fn = getattr(module, x.function)
            inputs = [a for a in manifest["functions"][x.function]["inputs"] if a != "params"]   # f_ext too
            one = [states[a][0].copy() for a in inputs]
            many = [states[a][:batch].copy() for a in inputs]
            m.put(f"{prefix}_single", qty, time_callable(lambda: fn(*one), s.repeats, s.min_time))
            m.put(f"{prefix}_batch", qty, time_callable(lambda: fn(*many), s.repeats, s.min_time).scaled(1 / batch))


def time_pinocchio(m: Measurement, urdf, quantities, nv: int, settings: Settings, external: bool = False):
    """Time Pinocchio on ``urdf`` (the robot of a package with ``nv`` DoF) from Python and, unless
    ``settings.pin_cpp`` is off, in C++, for the wanted quantities it computes, into ``m``
    (``external``: a package built with --external-forces, Pinocchio's calls given fext)."""
    s = settings
    wanted = [qty for qty in quantities if qty in PIN_CALLS]

    def fail(qty, note, python=True, cpp=s.pin_cpp != "off"):
        m.missing((["pin_py"] if python else []) + ([method for method, _ in PIN_CALLS[qty].cpp.values()] if cpp else []),
                  qty, "n/a", note)

    try:
        floating = pin_needs_free_flyer(urdf, nv)
    except BenchError as exc:
        for qty in wanted:
            fail(qty, str(exc))
        return
    try:
        py = pinocchio_python(urdf, wanted, s.repeats, s.min_time, floating=floating, external=external)
    except BenchError as exc:
        py = dict.fromkeys(wanted, str(exc))
    for qty, value in py.items():
        if isinstance(value, Timing):
            m.put("pin_py", qty, value)
        else:
            fail(qty, value, cpp=False)
    if s.pin_cpp != "off":
        try:
            for name, t in pinocchio_cpp(urdf, [name for qty in wanted for name in cpp_names(qty, external)],
                                         repeats=s.repeats, min_time=s.min_time, build=s.pin_cpp == "build",
                                         timeout=s.pin_timeout, floating=floating).items():
                qty, method = CPP_TIMINGS[name]
                m.put(method, qty, t)
        except BenchError as exc:
            for qty in wanted:
                fail(qty, str(exc), python=False)
    if floating:
        m.notes["pinocchio"] = FLOATING_NOTE
    for qty in wanted:
        if m.values.get(("pin_cpp", qty)) == "n/a":          # its note says why (the harness did not build)
            continue
        if PIN_CALLS[qty].note:
            m.notes["pin_cpp", qty] = PIN_CALLS[qty].note
        if external and PIN_CALLS[qty].fext:
            m.notes["pin_cpp", qty] = "Pinocchio: with fext, one random pin.Force per joint (as the package's f_ext)"


def prepare_casadi(m: Measurement, urdf, manifest: dict, quantities) -> list:
    """CasADi's sides for the C loop: the tape of symgen's algorithms and that of Pinocchio's
    (:mod:`.casadi_pinocchio`), each checked against the reference and Pinocchio; a side that
    cannot be made leaves notes saying why. Op counts and checks in ``m.info["casadi"]`` and
    ``m.info["casadi_pin"]``."""
    from . import casadi as cas

    if urdf is None:
        m.notes["casadi"] = "CasADi: needs --urdf (the tape is made from the robot)"
        return []
    from .cloop import STATE_ARGUMENTS

    row_of = {a: f"inputs[{i}][s]" for i, a in enumerate(STATE_ARGUMENTS)}
    rivals = []
    for source, (label, _) in cas.SOURCES.items():
        method = RIVAL_METHODS[label]
        try:
            prepared = cas.prepare(urdf, manifest, quantities, source=source)
        except BenchError as exc:
            m.notes[label] = f"CasADi ({source}'s algorithms taped): not timed: {exc}"
            for qty in quantities:
                if qty in cas.CASADI_QUANTITIES:
                    m.missing([method], qty, "n/a", str(exc))
            continue
        prepared["extra"] = cas.driver_extra(prepared, row_of)
        m.info[label] = {"version": prepared["version"], "ops": prepared["ops"], "check": prepared["check"],
                         "tape_s": prepared["tape_s"], "c": str(prepared["dir"] / f"{prepared['name']}.c"),
                         "source": source}
        for qty, why in prepared["skipped"].items():
            m.notes[method, qty] = why
        rivals.append(prepared)
    return rivals


def prepare_mujoco(m: Measurement, package_dir, model, manifest: dict, quantities):
    """MuJoCo's C library for the C loop (checked against the package first), or None with notes."""
    from . import mujoco as mj

    try:
        prepared = mj.prepare(package_dir, manifest, model, quantities)
    except BenchError as exc:
        m.notes["mujoco"] = f"MuJoCo: not timed: {exc}"
        return None
    m.info["mujoco"] = {"version": prepared["version"], "check": prepared["check"]}
    m.notes[MUJOCO_METHOD, "tau"] = "MuJoCo: the bias C v + g (mj_rne, zero acceleration); ours: RNEA at the loop's qdd"
    return prepared


def bench_package(package_dir, urdf=None, quantities=("C", "Gamma"), flags: str = DEFAULT_FLAGS,
                  repeats: int = 7, min_time: float = 0.05, compile_timeout: float | None = None,
                  pin_cpp: str = "build", batch: int = 10_000, casadi: bool = False, processes: int = 1,
                  cppadcg: bool = False, mujoco: bool = False, c_batch: int = 256, drake: bool = False,
                  idyntree: bool = False) -> dict:
    """Everything ``symgen bench`` reports for one package, as a JSON-ready dict: per quantity,
    µs per call of the C loop, the Python call (one state; per state in a batch), and Pinocchio
    from Python and C++ on ``urdf`` when given; with ``casadi``, CasADi's generated C of the same
    robot in the same C loop (op counts beside ours); with ``cppadcg``, Pinocchio's own generated
    code (CppADCodeGen, :mod:`symgen.bench.cppadcg`); with ``drake``, Drake's MultibodyPlant from
    Python beside our binding's Python call (:mod:`symgen.bench.drake`); with ``idyntree``, iDynTree's
    KinDynComputations from Python in the package's base-velocity representation
    (:mod:`symgen.bench.idyntree`). ``c_batch``: also the C batch of that many
    states in the C loop, per state, one thread (0: not), and the machine's FMA rate
    (:mod:`symgen.bench.fma`) to read it against."""
    settings = Settings(flags=flags, repeats=repeats, min_time=min_time, compile_timeout=compile_timeout,
                        batch=batch, update=True, pin_cpp=pin_cpp, casadi=casadi, processes=processes,
                        c_batch=c_batch)
    manifest = read_manifest(package_dir)
    m = Measurement()
    rival = prepare_casadi(m, urdf, manifest, quantities) if casadi else []
    if mujoco:
        if casadi:
            raise BenchError("--mujoco and --casadi: one kind of rival per run")
        one = prepare_mujoco(m, package_dir, urdf, manifest, quantities)
        rival = [one] if one is not None else []
    time_package(m, package_dir, quantities, settings, rival=rival)
    if c_batch:
        from .fma import fma_rate
        try:
            m.info["fma"] = fma_rate(timeout=compile_timeout)
        except BenchError as exc:
            m.notes["fma"] = f"FMA rate: not measured: {exc}"
    from ..mjcf import is_mjcf

    if urdf is not None and is_mjcf(urdf):
        m.notes["pinocchio"] = f"Pinocchio: not timed, {Path(urdf).name} is MJCF (symgen's reading of it is MuJoCo's)"
    elif urdf is not None:
        time_pinocchio(m, urdf, quantities, dimensions(manifest)[1], settings,
                       bool(manifest["options"].get("external_forces")))
    if cppadcg:
        from . import cppadcg as cg
        cg.measure(m, package_dir, urdf, manifest, quantities, settings)
    if drake:                                   # Drake's MultibodyPlant from Python (symgen.bench.drake)
        from . import drake as dk
        dk.measure(m, package_dir, urdf, manifest, quantities, settings)
    if idyntree:                                # iDynTree's KinDynComputations from Python (symgen.bench.idyntree)
        from . import idyntree as idt
        idt.measure(m, package_dir, urdf, manifest, quantities, settings)
    result = bench_result(m, package_dir, manifest, quantities, flags)
    if "fma" in m.info:
        result["fma"] = m.info["fma"]
    if c_batch:
        result["c_batch"] = c_batch
    return result
