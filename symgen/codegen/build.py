"""``symgen build``: robot -> symbolic runs and passes (:mod:`.symbolic`) -> printed files
(:mod:`.files`) -> written and compiled package (:mod:`.package`).

Same robot, options and versions give the same bytes.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import pickle
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from .. import quantities as Q
from ..errors import BuildError, OptionError
from ..model import GRAVITY
from . import Progress
from . import cost, xla_target
from .casadi_target import library_name, source_name
from .files import generate
from .names import comment_text, identifier
from .scalar import check_scalar
from .compile import compile_extension, extension_name
from .package import import_package, prepare_output, write_package  # noqa: F401  (import_package: public)
from .timings import Timings
from .worker import print_sweep, run_sweeps

#: the file of a package built with ``opts.timings`` (``symgen build --timings``): where the time went
TIMINGS_FILE = "timings.json"

#: no cap on the joints by default: a build is refused when its estimated cost exceeds the budget
#: (:mod:`.cost`, --budget); --max-dof N still sets a cap of its own
MAX_DOF_DEFAULT = 0
COPT_LEVELS = ("-O0", "-O1", "-O2", "-O3", "-Os")
#: what a build can print (--target): the NumPy module and the C (always written: the package
#: imports them), and what is built on top of the C: casadi, CasADi external functions
#: (NAME_casadi.c, compiled with NAME.c into NAME_casadi.so; :mod:`.casadi_target`), and jax, the
#: jax.numpy module NAME_jax.py (``pkg.jax``, imported on first use; :mod:`.jax_target`)
TARGETS = ("numpy", "c", "casadi", "jax")
DEFAULT_TARGETS = ("numpy", "c")


@dataclass(frozen=True)
class BuildOptions:
    quantities: tuple = Q.DEFAULT
    gamma_method: str = "algo2"
    frame: str = "ground"                 # coordinates of the algorithms: ground or body
    frames: tuple | None = None           # frames of frame kinematics (None: the leaf links)
    gravity: tuple = GRAVITY              # linear gravity acceleration in the root frame (--gravity)
    parametric: bool = False              # inertial parameters as an argument, params (--parametric)
    contacts: tuple = ()                  # ((frame, "3d"/"6d"), ...) of the contact functions (--contacts)
    #: forward dynamics and its derivatives with the passive forces (--passive; None: the model's
    #: default, on for MJCF with dampers or springs, off for URDF: symgen.passive.resolve)
    passive: bool | None = None
    external_forces: bool = False         # f_ext on inverse/forward dynamics and derivatives (--external-forces)
    #: the references the frame functions are generated in (--reference; :mod:`..quantities.references`)
    references: tuple = Q.references.DEFAULT_REFERENCES
    #: eps of the operational-space functions' Lambda = (J M^-1 J^T + eps 1)^-1 (--opspace-damping)
    opspace_damping: float = Q.SweepOptions.opspace_damping
    cse: bool = False                     # sympy.cse on top of value numbering (slow, ~3% fewer ops)
    compile: bool = True
    force: bool = False
    copt: str = "-O2"                     # optimization flag for the compiled binding
    targets: tuple = DEFAULT_TARGETS      # what to print and compile (--target; TARGETS)
    portable: bool = False                # binding for the compiler's default target, not -march=native
    #: processes of the symbolic runs (0: SYMGEN_JOBS, else one per core; 1: in this process).
    #: Workers are fresh interpreters (codegen/worker.py), safe from any caller, threads or not;
    #: the library keeps 1 because each costs its start (Python, NumPy, SymPy, symgen: 0.4 s on an
    #: idle core, ~2 s at a load of 8 on 2), more than small builds gain; `symgen build` takes 0
    jobs: int = 1
    #: seconds the symbolic runs on worker processes may take, and again the C compile and link
    #: steps (--timeout); 0: no limit
    timeout: float = 3600
    max_dof: int = MAX_DOF_DEFAULT        # refuse bigger robots (see check_size; 0: no cap)
    budget: float = cost.BUDGET_SECONDS   # refuse a build estimated to take longer (seconds; 0: no limit)
    command: str = ""                     # how to regenerate, for the header
    source_sha256: str = ""
    targets: tuple = DEFAULT_TARGETS      # what the package carries besides NumPy and C (--target): jax
    open_loops: bool = False              # URDF+ loops opened on purpose (--open-loops; the manifest says so)
    trees: tuple = ()                     # the moving trees kept of a scene (--tree; the manifest says so)
    timings: bool = False                 # write timings.json into the package (--timings)
    #: read and write the build cache (:mod:`.cache`: printed sweeps, compiled objects) in
    #: :func:`.cache.folder`; `symgen build` does unless --no-cache
    cache: bool = False
    #: the C's scalar, "double" or "float" (--scalar; :mod:`.scalar`)
    scalar: str = "double"
    #: the floating base's speeds: body (Pinocchio's), mixed or inertial (--base-velocity;
    #: :mod:`symgen.base_velocity`)
    base_velocity: str = "body"

    @property
    def sweep(self) -> Q.SweepOptions:
        return Q.SweepOptions(frame=self.frame, gamma_method=self.gamma_method, frames=self.frames,
                              gravity=tuple(float(x) for x in self.gravity), parametric=self.parametric,
                              contacts=tuple(self.contacts), passive=bool(self.passive),
                              external_forces=bool(self.external_forces),
                              opspace_damping=float(self.opspace_damping), base_velocity=self.base_velocity)

    @property
    def reference_frames(self) -> tuple:
        """The package's ``reference_frames``: those its frame functions are in."""
        return Q.references.references_built(self.quantities, self.references)


@dataclass
class BuildResult:
    path: Path
    name: str
    compiled: bool
    timings: dict = field(default_factory=dict)
    ops: dict = field(default_factory=dict)


def check_size(robot, opts: BuildOptions) -> None:
    if robot.n == 0:
        raise BuildError(f"robot {comment_text(robot.name)!r} has no degree of freedom (every joint is fixed); "
                         f"nothing to generate (--floating-base gives the root six)")
    if opts.max_dof and robot.n > opts.max_dof:
        raise BuildError(f"robot {comment_text(robot.name)!r} has {robot.n} joints, more than --max-dof "
                         f"{opts.max_dof}: the code grows as N^2 (M, C) and N^3 (Gamma) on a chain; pass "
                         f"--max-dof {robot.n} to build anyway, limit --quantities, or use the numeric API")
    check_budget(robot, opts)


def estimate_of(robot, opts: BuildOptions) -> cost.Estimate:
    """The estimated cost of the build (:mod:`.cost`)."""
    return cost.estimate(robot, opts.quantities, compile=opts.compile)


def check_budget(robot, opts: BuildOptions) -> None:
    """A BuildError when the build's estimate exceeds ``opts.budget`` (:func:`.cost.check_budget`)."""
    cost.check_budget(robot, estimate_of(robot, opts), opts.budget, comment_text(robot.name))


def parse_targets(text: str | None) -> tuple:
    """The targets of a comma list (``--target``; None or empty: the default pair)."""
    words = tuple(dict.fromkeys(w.strip() for w in (text or "").split(",") if w.strip()))
    return words or DEFAULT_TARGETS


def check_targets(opts: BuildOptions) -> None:
    unknown = [t for t in opts.targets if t not in TARGETS]
    if unknown or not opts.targets:
        raise OptionError(f"--target: unknown {', '.join(map(repr, unknown)) or '(empty)'}; expected a comma list "
                          f"of {','.join(TARGETS)}")
    if "casadi" in opts.targets and ("c" not in opts.targets or not opts.compile):
        raise OptionError("--target: casadi is compiled from the C source: it needs the c target and "
                          "compiling (no --no-compile)")


def check_options(opts: BuildOptions) -> None:
    if opts.copt not in COPT_LEVELS:
        raise BuildError(f"--copt: unknown {opts.copt!r}; expected -O0, -O1, -O2, -O3 or -Os")
    check_targets(opts)
    check_scalar(opts.scalar, opts.targets, opts.contacts)
    unknown = [k for k in opts.quantities if k not in Q.QUANTITIES]
    if unknown or not opts.quantities:
        raise BuildError(f"quantities: unknown {', '.join(unknown) or '(none)'}; expected some of {','.join(Q.QUANTITIES)}")
    Q.check_options(opts.sweep)
    Q.references.check_references(opts.references)


def functions_for(robot, opts: BuildOptions, progress: Progress = Progress(), cache=None) -> tuple[list, dict, dict]:
    """The printed Functions of a build (:func:`~.files.function_context` of each, in build
    order), their op counts (``{function name: counts}``) and the timings: ``symbolic`` (s, all
    runs), per key its seconds, and ``sweeps``, each sweep's (:func:`~.worker.print_sweep`).

    The sweeps are traced, optimized and printed on ``opts.jobs`` processes (0: ``SYMGEN_JOBS``,
    else one per core; ``symgen build``'s default): fresh worker processes (:mod:`.worker`), each
    taking the costliest sweep left, that send back printed text only (sending SymPy expressions back costs about what tracing them does). Each
    sweep runs on its own backend, so the bytes do not depend on ``jobs``. Measured, the 20-DoF
    chain's 16 functions: 71 s of tracing and printing in one process on a loaded machine.

    ``cache``: a :class:`~.cache.Cache`; a sweep whose key (:func:`~.cache.sweep_key`: the code,
    the versions, the options and the robot as that sweep sees it) has an entry there is read
    from it instead of run, and every sweep run is stored."""
    wanted = tuple(dict.fromkeys(opts.quantities))     # a key asked twice is built once
    groups: dict = {}
    for key in wanted:
        groups.setdefault(Q.QUANTITIES[key].sweep, []).append(key)
    groups = sorted(groups.values(), key=lambda keys: -_SWEEP_WEIGHT.get(Q.QUANTITIES[keys[0]].sweep, 1))
    t0 = time.perf_counter()
    sweeps: list = []
    done, stored = {}, {}
    if cache is not None:
        groups, stored = _cached_sweeps(robot, opts, groups, cache, done, sweeps)
        if stored is None:                      # the robot's content cannot be read off: not cached
            cache, stored = None, {}
    jobs = min(len(groups), opts.jobs or int(os.environ.get("SYMGEN_JOBS", 0)) or os.cpu_count() or 1)
    if groups:
        left = {k for keys in groups for k in keys}
        progress.message(f"symbolic runs of {', '.join(k for k in wanted if k in left)}"
                         + (f" on {jobs} processes" if jobs > 1 else ""))
    if jobs > 1 and sys.executable:             # (an embedded interpreter may have no executable to start)
        done.update(run_sweeps(robot, opts, groups, jobs, progress, opts.timeout, sweeps))
    else:
        for keys in groups:
            out, timing = print_sweep(robot, opts, keys, progress)
            done.update(out)
            sweeps.append({**timing, "worker": 0})
    for timing in sweeps:
        timing.setdefault("cache", "off" if cache is None else "miss")
    if cache is not None:
        for timing in [t for t in sweeps if t["cache"] == "miss"]:
            keys = tuple(timing["quantities"])
            cache.put("sweeps", stored[keys], pickle.dumps(({k: done[k] for k in keys}, timing),
                                                           protocol=pickle.HIGHEST_PROTOCOL))
    # tracing, passes and printing; "sweeps": each sweep's (print_sweep), on worker 1.. or 0: this process
    timings = {"symbolic": round(time.perf_counter() - t0, 3), "sweeps": sweeps}
    contexts, ops = [], {}
    for key in wanted:
        context, counts, seconds = done[key]
        contexts.append(context)
        ops[context["name"]] = counts
        timings[key] = seconds
    return contexts, ops, timings


def _cached_sweeps(robot, opts, groups, cache, done: dict, sweeps: list):
    """The groups not in ``cache`` and ``{group: key}`` of those, the results of the others
    added to ``done`` and their timings to ``sweeps``; (groups, None) when the robot's content
    cannot be read off (:class:`~.cache.Uncacheable`)."""
    from .cache import Uncacheable, sweep_key

    left, keys_of = [], {}
    for keys in groups:
        t = time.perf_counter()
        try:
            key = sweep_key(robot, opts, keys)
        except Uncacheable:
            return groups, None
        entry = cache.get("sweeps", key)
        try:
            out, timing = pickle.loads(entry[1]) if entry is not None else (None, None)
        except Exception:                       # an entry of another symgen's classes: run it again
            out = None
        if out is None or set(out) != set(keys):
            left.append(keys)
            keys_of[tuple(keys)] = key
            continue
        done.update(out)
        sweeps.append({**timing, "seconds": round(time.perf_counter() - t, 3), "cache": "hit", "worker": 0,
                       "first_seconds": timing["seconds"]})
    return left, keys_of


#: a rough cost of each sweep (seconds on the 20-DoF chain), so the costliest start first
_SWEEP_WEIGHT = {"forward_dynamics": 10, "regressor": 9, "algorithm1": 9, "fd_derivatives": 8, "all_terms": 7,
                 "contact_terms": 8, "whole_body": 7, "impulse_terms": 6,
                 "algorithm2": 6, "mass_matrix_inverse": 6, "crba": 4, "slotine_li": 3, "id_derivatives": 3}


def _supported(robot, opts: BuildOptions) -> BuildOptions:
    """The options with the quantities ``robot`` does not generate left out of a default build
    (a mechanism with loops: :data:`symgen.closed.UNSUPPORTED`); asked for by name, an OptionError."""
    unsupported = robot.unsupported
    asked = [k for k in opts.quantities if k in unsupported]
    stray = [Q.QUANTITIES[k].function for k in opts.quantities
             if k in Q.loops.LOOP_KEYS and k not in Q.loops.loop_keys(robot)]
    if stray:
        raise OptionError(f"--quantities: {', '.join(stray)} not generated for robot {robot.name!r} "
                          f"({'couplings only: no loop rows' if robot.loops else 'no URDF+ couplings or loops'}); "
                          f"docs/LOOPS.md")
    if any(k in Q.PASSIVE_KEYS for k in opts.quantities) and Q.constrained(robot):
        raise OptionError(f"--quantities: passive_force not generated for robot {robot.name!r} with --mimic, URDF+ "
                          f"couplings or loops yet")
    if Q.passive_generated(robot) and set(Q.DEFAULT) <= set(opts.quantities):
        # joint dampers or springs: the default build has passive_force
        opts = dataclasses.replace(opts, quantities=tuple(dict.fromkeys(tuple(opts.quantities) + Q.PASSIVE_KEYS)))
    if Q.loops.loop_keys(robot) and tuple(opts.quantities) == Q.DEFAULT:
        # URDF+ couplings or loops: loop_residual, spanning_velocity (and solve_loops), loop_jacobian with loops
        opts = dataclasses.replace(opts, quantities=tuple(opts.quantities) + Q.loops.loop_keys(robot))
    if not asked:
        return opts
    if tuple(k for k in opts.quantities if k not in Q.loops.LOOP_KEYS) != Q.DEFAULT:
        raise OptionError(f"--quantities: {', '.join(asked)} not generated for robot {robot.name!r} (a mechanism "
                          f"with loops) yet; docs/LOOPS.md")
    return dataclasses.replace(opts, quantities=tuple(k for k in opts.quantities if k not in unsupported))


def _base_velocity_supported(robot, opts: BuildOptions) -> BuildOptions:
    """The options of a build in MIXED or INERTIAL speeds (:mod:`symgen.base_velocity`): a
    free-flyer tree only; the quantities not generated in those speeds yet left out of a default
    build, and asked for by name an OptionError."""
    from .. import base_velocity as B

    kind = B.check_choice(opts.base_velocity)
    if kind == "body":
        return opts
    if not robot.floating_base:
        raise OptionError(f"--base-velocity {kind}: robot {robot.name!r} has no floating base (build it with "
                          f"--floating-base, or an MJCF free joint)")
    if Q.constrained(robot) or robot.has_inner_groups:
        raise OptionError(f"--base-velocity {kind}: not supported for robot {robot.name!r} with --mimic, URDF+ "
                          f"couplings, loops or inner joints of several velocities yet")
    left = B.unsupported(opts.quantities) | ({"dqdd"} & set(opts.quantities) if B.passive_base(robot, opts.passive)
                                             else set())
    wanted = tuple(k for k in opts.quantities if k not in left)
    if left and not set(Q.DEFAULT) <= set(opts.quantities):       # asked for by name (a default build drops them)
        functions = [Q.QUANTITIES[k].function for k in opts.quantities if k in left]
        damped = " (with --passive and a damped free-flyer)" if B.passive_base(robot, opts.passive) else ""
        raise OptionError(f"--base-velocity {kind}: {', '.join(functions)} not generated in these speeds yet"
                          f"{damped} (build them with --base-velocity body)")
    return dataclasses.replace(opts, quantities=wanted)


def build(robot, out_dir, name: str | None = None, opts: BuildOptions | None = None,
          progress: Progress | None = None, clock: Timings | None = None) -> BuildResult:
    """Generate, write and (unless ``opts.compile`` is false) compile the package of ``robot`` as
    ``out_dir/name``. ``clock``: the :class:`~.timings.Timings` to record the phases in (the
    CLI's, started before it read the model; default: one started here); the result's
    ``timings`` is its :meth:`~.timings.Timings.as_dict`, and with ``opts.timings`` the package
    also holds it as ``timings.json``."""
    from .. import __version__                  # at call time: symgen/__init__ imports the library

    clock = clock or Timings()
    t_prepare = time.perf_counter()
    opts = opts or BuildOptions()
    progress = progress or Progress()
    name = identifier(name or robot.name)
    opts = dataclasses.replace(opts, passive=Q.resolve(robot, opts.passive))    # --passive, or the model's default
    check_options(opts)
    check_size(robot, opts)
    if "casadi" in opts.targets and robot.has_inner_groups:
        raise OptionError("--target: casadi's jac_ functions know the root free-flyer's tangent map only; a "
                          "spherical, planar or inner free-flyer joint is not supported there yet")
    opts = _supported(robot, opts)
    # each frame function in each reference asked (--reference)
    opts = dataclasses.replace(opts, quantities=Q.references.with_references(opts.quantities, opts.references))
    opts = _base_velocity_supported(robot, opts)
    if opts.external_forces and Q.constrained(robot):
        raise OptionError(f"--external-forces: not supported for robot {robot.name!r} with --mimic, URDF+ couplings "
                          f"or loops yet (the forces act on the spanning tree's bodies)")
    if opts.external_forces and not any(Q.QUANTITIES[k].external for k in opts.quantities):
        raise OptionError("--external-forces: none of --quantities takes f_ext (inverse_dynamics, forward_dynamics "
                          "and their derivatives do)")
    check_scalar(opts.scalar, loops=bool(robot.loops) and "loop_residual" in opts.quantities)   # (the loop solve's C)
    if opts.contacts:                            # contact frames join the frames; a bad one stops the build here
        opts = dataclasses.replace(opts, frames=Q.contact.frames_with_contacts(robot, opts.frames, opts.contacts))
    Q.frames_of(robot, opts.frames)              # an unknown frame stops the build before the symbolic run
    Q.contact.check_build(robot, opts.sweep, opts.quantities)
    expected = prepare_output(out_dir, name, opts.force)    # a name clash stops the build before the symbolic work
    progress.message(estimate_of(robot, opts).summary())     # every check passed: the work's first message
    if not opts.source_sha256:
        from ..urdf import urdf_string
        spherical = any(j.kind == "spherical" for j in robot.full.joint_models)
        text = repr(robot.full.bodies) if spherical else urdf_string(robot)   # (no URDF form)
        opts = dataclasses.replace(opts, source_sha256=hashlib.sha256(text.encode()).hexdigest())
    clock.add("prepare", time.perf_counter() - t_prepare)
    from . import cache as build_cache

    root = build_cache.folder() if opts.cache else None
    store = build_cache.Cache(root) if root is not None else None
    with clock.phase("symbolic"):
        contexts, ops, stages = functions_for(robot, opts, progress, store)
    clock.sweeps.extend(stages["sweeps"])
    with clock.phase("generate"):
        files = generate(robot, name, opts, contexts, ops, __version__)
    compiled = False
    t_write = time.perf_counter()

    def compile_hook(folder):
        nonlocal compiled
        clock.add("write", time.perf_counter() - t_write)
        if opts.compile:
            progress.message("compiling the C binding")
            libraries = ((library_name(name), source_name(name)),) if "casadi" in opts.targets else ()
            xla = xla_target.include_dir() if "jax" in opts.targets else None
            optional = (xla_target.library_name(extension_name(folder, name)),) if xla else ()
            if xla:                             # the JAX module's CPU path (else it runs its own jax code)
                libraries += ((optional[0], xla_target.source_name(name)),)
            compile_extension(folder, name, opt=opts.copt, native=not opts.portable, libraries=libraries,
                              timeout=opts.timeout, includes=(xla,) if xla else (), optional=optional,
                              clock=clock, cache=store)
            compiled = True
        if store is not None:
            clock.cache.update(store.summary())
        clock.stop()
        if opts.timings:                        # not in the manifest: identical builds give identical manifests
            (folder / TIMINGS_FILE).write_text(json.dumps(clock.as_dict(), indent=1) + "\n", encoding="utf-8")

    path = write_package(files, Path(out_dir), name, opts.force, compile_hook, expected)
    clock.stop()
    if store is not None and store.wrote:
        store.evict()                           # the entries used least recently, past the cap
    return BuildResult(path, name, compiled, clock.as_dict(), ops)
