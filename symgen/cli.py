"""The ``symgen`` command line. Argument parsing only: every command calls library functions.

A user error (a :class:`~symgen.errors.SymgenError`) ends the command with one line on stderr,
``symgen: <file>: <element>: <reason>``, and exit code 2 — never a traceback.
"""
from __future__ import annotations

import sys

import click

from . import __version__
from . import quantities as Q
from .codegen import Progress
from .errors import OptionError, SymgenError, SymgenWarning


class _Group(click.Group):
    """Turns SymgenError from any command into one line on stderr and exit code 2, and prints a
    SymgenWarning (a tolerated URDF defect) as one line ``symgen: warning: ...``."""

    def parse_args(self, ctx, args):
        ctx.meta["symgen.argv"] = list(args)          # the command line as given, for bench --json's record
        return super().parse_args(ctx, args)

    def invoke(self, ctx):
        import warnings

        def show(message, category, filename, lineno, file=None, line=None):
            if issubclass(category, SymgenWarning):         # one line, like the errors
                click.echo(f"symgen: warning: {message}", err=True)
            else:
                click.echo(warnings.formatwarning(message, category, filename, lineno, line).rstrip(), err=True)

        previous, warnings.showwarning = warnings.showwarning, show
        try:
            return super().invoke(ctx)
        except SymgenError as exc:
            click.echo(f"symgen: {exc}", err=True)
            sys.exit(2)
        finally:
            warnings.showwarning = previous


@click.group(cls=_Group)
@click.version_option(__version__, prog_name="symgen")
def main():
    """Unrolled NumPy, C, CasADi and JAX code for a robot's dynamics (M, the Christoffel-consistent
    Coriolis matrix C, the Christoffel symbols Gamma, inverse and forward dynamics and their
    derivatives, Slotine-Li and its regressors, frames, centroidal and contact terms), from a URDF,
    a URDF+ (couplings, loops) or an MJCF file, checked against Pinocchio and MuJoCo."""


#: --tree of build and info (symgen.scenes)
_tree_option = click.option("--tree", "tree_names", default=None, metavar="BODY[,BODY]",
                            help="A scene of several moving trees (a robot beside free objects): keep only the trees "
                            "rooted at these bodies, children of the world (MJCF) or of the root link (URDF) "
                            "[default: every tree].")


@main.command()
@click.argument("urdf", metavar="ROBOT", type=click.Path(dir_okay=False))
@click.option("--floating-base", is_flag=True, help="Attach the root link by a free-flyer (Pinocchio's JointModelFreeFlyer: q = [x y z qx qy qz qw ...], "
                   "v = [base linear, angular velocity in the base frame ...]).")
@_tree_option
@click.option("--mimic", is_flag=True, help="Embed the URDF's mimic joints (q = multiplier * q_joint + offset): "
              "reduced coordinates, the mimicking joints have none [default: each an independent joint, as Pinocchio's].")
@click.option("--open-loops", is_flag=True, help="URDF+ with <loop> elements: build the open spanning tree on purpose "
              "(the loops' joints move freely; recorded in the manifest) [default: a loop symgen cannot embed is refused].")
@click.option("--xacro-arg", "xacro_args", multiple=True, metavar="NAME:=VALUE", help="A xacro argument (repeatable).")
@click.option("--package-path", "package_paths", multiple=True, type=click.Path(file_okay=False),
              help="A folder where a xacro file's packages are looked up (repeatable).")
def info(urdf, floating_base, tree_names, mimic, open_loops, xacro_args, package_paths):
    """Summarize a robot (a URDF, URDF+, MJCF or xacro file): bodies, joints in q order, DoF, depth,
    its moving trees, dampers and springs, tendons, what was lumped and snapped."""
    from .mjcf import load_robot
    from .report import describe
    from .scenes import parse_trees
    from .urdf.xacro import parse_args

    click.echo(describe(load_robot(urdf, floating_base=floating_base, mimic=mimic, open_loops=open_loops,
                                   xacro_args=parse_args(xacro_args), package_paths=package_paths,
                                   trees=parse_trees(tree_names))))


@main.command()
@click.argument("kind")
@click.argument("n", type=int)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the random parameters.")
@click.option("-o", "--output", type=click.Path(dir_okay=False), required=True, help="URDF file to write.")
def model(kind, n, seed, output):
    """Write one of the paper's synthetic systems as URDF: KIND is serial, planar, tree, biped or
    quadruped; N is the number of bodies (actuated joints for biped and quadruped)."""
    from . import robots
    from .urdf import write_urdf

    robot = robots.make(kind, n, seed)
    write_urdf(robot, output)
    click.echo(f"wrote {output}: {robot.name}, {robot.n} joints, depth {robot.depth}")


class _Progress(Progress):
    """Stage messages, and a bar per symbolic run (ticks from the algorithms' outer loops: per k
    of Algorithm 2, per j of Algorithm 1), on stderr when it is a terminal."""

    WIDTH = 30

    def __init__(self):
        self._open = False
        self._last = None

    def message(self, text):
        self.end()
        click.echo(f"  {text}", err=True)

    def tick(self, label, done, total):
        step = (label, 100 * done // max(total, 1))
        if step == self._last and done < total:
            return                                  # eq. (4) ticks once per temp: redraw per percent
        self._last = step
        filled = self.WIDTH * done // max(total, 1)
        click.echo(f"\r  {label:14s} [{'#' * filled}{'.' * (self.WIDTH - filled)}] {done}/{total}", err=True, nl=False)
        self._open = done < total
        if not self._open:
            click.echo("", err=True)

    def end(self):
        if self._open:
            click.echo("", err=True)
            self._open = False


def _progress(quiet):
    if quiet or not sys.stderr.isatty():
        return None
    return _Progress()


@main.command()
@click.argument("urdf", metavar="ROBOT", type=click.Path(dir_okay=False))
@click.option("--out", "out_dir", default="generated", show_default=True, type=click.Path(file_okay=False),
              help="Folder that receives the package folder NAME/.")
@click.option("--name", default=None, help="Package name: lowercase letters, digits and single underscores, kept as "
              "given (default: the robot's name, made a safe identifier).")
@click.option("--floating-base", is_flag=True, help="Attach the root link by a free-flyer (Pinocchio's JointModelFreeFlyer: q = [x y z qx qy qz qw ...], "
                   "v = [base linear, angular velocity in the base frame ...]).")
@_tree_option
@click.option("--quantities", default=",".join(Q.DEFAULT), show_default=True,
              help=f"Comma list of what to generate: {Q.help_text()}.")
@click.option("--gamma-method", type=click.Choice(Q.GAMMA_METHODS), default="algo2", show_default=True,
              help="Gamma by Algorithm 2, or by symbolic partials of M (eq. 4, the baseline).")
@click.option("--cse", is_flag=True, help="Also run sympy.cse over the named intermediates (slow for big robots; "
              "they are already value-numbered during the run).")
@click.option("--no-compile", is_flag=True, help="Write the C but do not compile the Python binding.")
@click.option("--frame", type=click.Choice(Q.FRAMES), default="ground", show_default=True,
              help="Coordinates of Algorithms 1 and 2 in the code: ground (no 6x6 transforms, fewer operations) "
              "or body (the paper's pseudo-code as printed).")
@click.option("--frames", "frame_names", default=None,
              help="Comma list of the frames of the frame functions: link or joint names, or points fixed in a link, "
              "name=LINK@x,y,z (metres, in LINK's frame; e.g. a foot's sole) [default: every leaf link].")
@click.option("--contacts", "contact_names", default=None,
              help="Comma list of contact frames, each FRAME (a point contact, or FRAME:3d) or FRAME:6d (a flat one); "
              "adds contact_terms, impulse_terms, whole_body_terms, contact_partials and the package's "
              "contact_dynamics, impulse_dynamics and contact_dynamics_derivatives (the active contacts chosen "
              "per call) to the default quantities.")
@click.option("--reference", "reference_names", default=None, help="Comma list of the reference frames of the frame "
              "functions (Pinocchio's ReferenceFrame): local (frame_jacobian_local ...), world (frame_jacobian_world "
              "...), local_world_aligned (frame_jacobian ...) [default: local_world_aligned].")
@click.option("--max-dof", type=int, default=None, help="Refuse robots with more joints [default: no cap; the "
              "budget decides].")
@click.option("--budget", type=click.FloatRange(0), default=None, help="Refuse a build whose estimated time (printed "
              "before it starts, from the tree's shape) exceeds this many seconds on one idle core; 0: no limit "
              "[default: 7200].")
@click.option("--gravity", "gravity_text", default="0,0,-9.81", show_default=True,
              help="Linear gravity acceleration in the root frame, m/s^2: three comma-separated numbers.")
@click.option("--parametric", is_flag=True, help="The dynamics functions take the inertial parameters as a last "
              "argument params (10 per body, the layout of the package's parameters) instead of folding the URDF's.")
@click.option("--copt", default="-O2", show_default=True,
              help="C optimization level of the binding (-O0 compiles big robots in a fraction of the time).")
@click.option("--jobs", type=click.IntRange(0, 256), default=0, show_default=True,
              help="Processes of the symbolic runs (0: $SYMGEN_JOBS, else one per core).")
@click.option("--timeout", type=click.FloatRange(0), default=3600, show_default=True,
              help="Seconds the symbolic runs on worker processes may take before the build stops with an error "
              "naming the sweeps still running, and again the C compile and link steps (0: no limit).")
@click.option("--portable", is_flag=True, help="Compile the binding for the compiler's default target "
              "[default: -march=native, this machine's instruction set (FMA, AVX); a binding built so "
              "may not run on an older CPU].")
@click.option("--force", is_flag=True, help="Replace an existing package folder.")
@click.option("--target", "targets", default="numpy,c", show_default=True,
              help="Comma list of what to build: numpy, c, casadi (CasADi external functions of the C, "
              "NAME_casadi.so; needs c), jax (NAME_jax.py: jax.numpy functions, pkg.jax; needs the jax extra to run; "
              "with the C compiled and jax installed also _NAME_xla_HASH.so, through which its float64 calls "
              "on a CPU run the C).")
@click.option("--scalar", default="double", show_default=True, help="The C's scalar: double, or float (the whole C in "
              "single precision: NAME_real is float, float literals and sinf/cosf/sqrtf, one state at a time; the "
              "binding converts to float32 and back; docs/guide/c.md).")
@click.option("--quiet", is_flag=True, help="No progress messages.")
@click.option("--mimic", is_flag=True, help="Embed the URDF's mimic joints (q = multiplier * q_joint + offset): "
              "reduced coordinates, the mimicking joints have none [default: each an independent joint, as Pinocchio's].")
@click.option("--open-loops", is_flag=True, help="URDF+ with <loop> elements: build the open spanning tree on purpose "
              "(the loops' joints move freely; recorded in the manifest) [default: a loop symgen cannot embed is refused].")
@click.option("--armature", "armature_text", default=None, help="Reflected rotor inertia added to M's diagonal "
              "(Pinocchio's model.armature): one number for every joint but a free-flyer, or joint=value,... "
              "[default: none; MJCF: its dof_armature].")
@click.option("--passive/--no-passive", "passive", default=None, help="forward_dynamics and its derivatives with the "
              "joints' passive forces, tau + passive_force(q, v) (dampers, springs) [default: on for MJCF with dampers or "
              "springs, as MuJoCo simulates; off for URDF, as Pinocchio's aba].")
@click.option("--external-forces", is_flag=True, help="inverse_dynamics, forward_dynamics and their derivatives "
              "take f_ext last: one [force; torque] per link in its frame, as Pinocchio's fext [default: none].")
@click.option("--base-velocity", "base_velocity", type=click.Choice(("body", "mixed", "inertial")), default="body",
              show_default=True, help="A floating base's speeds: body (Pinocchio's free-flyer: base linear and angular "
              "velocity in the base frame), mixed (iDynTree's and adam's default: the base origin's velocity and the "
              "angular velocity in world axes) or inertial (the base's spatial velocity in the world frame); every "
              "function in those speeds.")
@click.option("--opspace-damping", "opspace_damping", type=click.FloatRange(0), default=Q.SweepOptions.opspace_damping,
              show_default=True, help="eps of the operational-space functions' Lambda = (J M^-1 J^T + eps 1)^-1: "
              "every output finite at a singular configuration (0: Khatib's exact Lambda, inf or NaN there).")
@click.option("--timings", is_flag=True, help="Print where the build's time went (model, each symbolic run, "
              "files, each compile unit and link) and write it to NAME/timings.json.")
@click.option("--no-cache", is_flag=True, help="Neither read nor write the build cache (printed sweeps and "
              "compiled objects, kept by content in $SYMGEN_BUILD_CACHE, else $SYMGEN_CACHE/build, else "
              "~/.cache/symgen/build; symgen cache clear).")
@click.option("--xacro-arg", "xacro_args", multiple=True, metavar="NAME:=VALUE",
              help="A xacro argument of a *.xacro file (repeatable); needs the xacro extra.")
@click.option("--package-path", "package_paths", multiple=True, type=click.Path(file_okay=False),
              help="A folder where $(find PKG) and package://PKG of a xacro file are looked up: a package, or a "
              "folder of packages (repeatable).")
def build(urdf, out_dir, name, floating_base, tree_names, quantities, gamma_method, cse, frame, frame_names, contact_names,
          reference_names, max_dof,
          budget, gravity_text, parametric, no_compile, copt, jobs, timeout, portable, force, targets, quiet, mimic, open_loops,
          armature_text, passive, external_forces, base_velocity, opspace_damping, timings, no_cache, xacro_args, package_paths, scalar):
    """Generate the package of a robot (a URDF, URDF+, MJCF or xacro file): unrolled NumPy and C (and
    the --target extras) in OUT/NAME/."""
    import hashlib
    import shlex
    import signal
    import time
    from pathlib import Path

    from .codegen.build import DEFAULT_TARGETS, BuildOptions, build as run_build, check_targets, parse_targets
    from .codegen.names import check_package_name, identifier
    from .codegen.scalar import check_scalar
    from .codegen.timings import Timings, process_start
    from .mjcf import load_robot
    from .model import GRAVITY
    from .scenes import parse_trees

    clock = Timings(start=process_start())
    clock.add("startup", time.perf_counter() - clock.start)     # the interpreter and its imports

    # a killed build (SIGTERM, or SIGHUP: its terminal closed) unwinds like Ctrl-C, so the
    # temporary folder is removed and the compiler's process group and the worker processes killed
    for signum in (signal.SIGTERM, getattr(signal, "SIGHUP", None)):
        if signum is not None:
            signal.signal(signum, lambda signum, frame: sys.exit(128 + signum))
    t0 = time.perf_counter()
    check_package_name(name)
    gravity = Q.parse_gravity(gravity_text)         # a bad option stops the build before the URDF is read
    references = Q.references.parse_references(reference_names)
    targets = parse_targets(targets)
    check_targets(BuildOptions(targets=targets, compile=not no_compile))
    check_scalar(scalar, targets)
    from .urdf.xacro import parse_args

    xacro = parse_args(xacro_args)
    trees = parse_trees(tree_names)
    with clock.phase("load"):
        robot = load_robot(urdf, floating_base=floating_base, mimic=mimic, open_loops=open_loops, xacro_args=xacro,
                           package_paths=package_paths, trees=trees)
        if robot.gravity is not None and click.get_current_context().get_parameter_source("gravity_text").name == "DEFAULT":
            gravity = robot.gravity             # the model file's own (MJCF <option gravity>)
        if armature_text is not None:
            from .armature import with_armature

            robot = with_armature(robot, armature_text)
    from .passive import left_out_note

    if left_out_note(robot, passive):
        click.echo(left_out_note(robot, passive), err=True)
    if name is None and identifier(robot.name) != identifier(Path(urdf).stem):
        click.echo(f"symgen: note: package name {identifier(robot.name)!r} from the robot's name in "
                   f"{Path(urdf).name!r}; --name to choose another", err=True)
    words = ["symgen", "build", Path(urdf).name]
    words += ["--name", name] if name else []
    words += ["--floating-base"] if floating_base else []
    words += ["--tree", ",".join(trees)] if trees else []
    words += ["--mimic"] if mimic else []
    words += ["--open-loops"] if open_loops else []
    words += [w for key, value in xacro.items() for w in ("--xacro-arg", f"{key}:={value}")]   # (the header's record)
    words += [w for folder in package_paths for w in ("--package-path", folder)]
    contacts = Q.contact.parse_contacts(contact_names)
    wanted = Q.parse(quantities)
    if contacts and click.get_current_context().get_parameter_source("quantities").name == "DEFAULT":
        wanted += Q.contact.CONTACT_KEYS           # --contacts alone: the default functions and the contact ones
        quantities = ",".join(wanted)
    words += ["--quantities", quantities, "--gamma-method", gamma_method]
    words += ["--cse"] if cse else []
    words += ["--frame", frame] if frame != "ground" else []
    frames = Q.split_frames(frame_names)
    words += ["--frames", ",".join(frames)] if frames is not None else []
    words += ["--contacts", ",".join(f"{n}:{k}" for n, k in contacts)] if contacts else []
    words += ["--reference", ",".join(references)] if references != Q.references.DEFAULT_REFERENCES else []
    words += ["--gravity", Q.gravity_text(gravity)] if gravity != GRAVITY else []
    words += ["--parametric"] if parametric else []
    words += ["--target", ",".join(targets)] if targets != DEFAULT_TARGETS else []
    words += ["--armature", armature_text] if armature_text is not None else []
    words += [] if passive is None else ["--passive" if passive else "--no-passive"]
    words += ["--external-forces"] if external_forces else []
    words += ["--base-velocity", base_velocity] if base_velocity != "body" else []
    words += ["--scalar", scalar] if scalar != "double" else []
    words += ["--opspace-damping", repr(opspace_damping)] if opspace_damping != Q.SweepOptions.opspace_damping else []
    limit = {k: v for k, v in (("max_dof", max_dof), ("budget", budget)) if v is not None}
    opts = BuildOptions(quantities=wanted, gamma_method=gamma_method, cse=cse, frame=frame, frames=frames, contacts=contacts,
                        references=references, external_forces=external_forces,
                        gravity=gravity, parametric=parametric, passive=passive, opspace_damping=opspace_damping, **limit,
                        targets=targets, compile=not no_compile, copt=copt, jobs=jobs, timeout=timeout, portable=portable,
                        force=force, command=shlex.join(words), open_loops=open_loops, trees=trees,
                        source_sha256=hashlib.sha256(Path(urdf).read_bytes()).hexdigest(), timings=timings,
                        cache=not no_cache, scalar=scalar, base_velocity=base_velocity)
    if base_velocity != "body":                  # a fixed base refused; what a default build leaves out, said
        from .base_velocity import build_notes

        for note in build_notes(urdf, robot, base_velocity, Q.references.with_references(wanted, references),
                                set(Q.DEFAULT) <= set(wanted), lambda k: Q.QUANTITIES[k].function):
            click.echo(note, err=True)
    progress = _progress(quiet)
    if not quiet and progress is None:           # (a terminal's progress prints it in the build)
        from .codegen.build import estimate_of
        from .codegen.cost import NOTE_SECONDS

        estimate = estimate_of(robot, opts)
        if estimate.seconds >= NOTE_SECONDS:        # off a terminal, only a build worth waiting for
            click.echo(f"symgen: note: {estimate.summary()}", err=True)
    try:
        result = run_build(robot, out_dir, name=name, opts=opts, progress=progress, clock=clock)
    finally:
        if progress is not None:
            progress.end()                      # an error message starts on a line of its own
    binding = "compiled C binding" if result.compiled else "no compiled binding"
    binding += f", CasADi library {result.name}_casadi.so" if "casadi" in targets else ""
    xla = sorted(Path(result.path).glob(f"_{result.name}_xla_*.so")) if "jax" in targets else []
    binding += f", XLA FFI library {xla[0].name}" if xla else ""
    click.echo(f"wrote {result.path}/ ({robot.n} joints, {binding}) in {time.perf_counter() - t0:.1f} s")
    if timings:
        click.echo(f"timings (also in {result.path}/timings.json):\n{clock.table()}")


@main.group()
def cache():
    """The build cache: printed sweeps and compiled objects kept by content, so that a rebuild
    redoes only what its changes touch. Its folder: $SYMGEN_BUILD_CACHE (off: none), else
    $SYMGEN_CACHE/build, else ~/.cache/symgen/build."""


@cache.command("info")
def cache_info():
    """Where the build cache is, its entries and their size."""
    from .codegen.cache import info_text

    click.echo(info_text())


@cache.command("clear")
def cache_clear():
    """Remove every entry of the build cache (the benchmarks' harnesses in $SYMGEN_CACHE are kept)."""
    from .codegen.cache import clear_text

    click.echo(clear_text())


@main.command()
@click.argument("package", type=click.Path())
@click.option("--trials", default=20, show_default=True, help="Random states to check.")
@click.option("--seed", default=0, show_default=True)
@click.option("--model", "--urdf", "urdf", type=click.Path(dir_okay=False), default=None,
              help="URDF or MJCF for the numeric reference (default: none, identities and backends only).")
@click.option("--floating-base", is_flag=True, help="Expect a package built with --floating-base (default: as "
              "its manifest says).")
def verify(package, trials, seed, urdf, floating_base):
    """Check a generated package: its files against the sha256 its manifest records, the manifest
    against the package (and the URDF), then on random states the paper's identities, NumPy vs C,
    and with --urdf the numeric reference and Pinocchio. Exit code 1 when a check fails, 2 when
    the folder is not an intact symgen package (or not the URDF's)."""
    from .verify import verify_package

    report, ok = verify_package(package, trials=trials, seed=seed, urdf=urdf, floating_base=floating_base or None)
    click.echo(report)
    sys.exit(0 if ok else 1)


@main.command()
@click.argument("package", type=click.Path(file_okay=False))
@click.option("--cc", default="gcc", show_default=True, help="The C compiler (GCC 10 or newer), e.g. arm-none-eabi-gcc.")
@click.option("--cflags", default="-O2", show_default=True, help='Its flags, e.g. "-mcpu=cortex-m7 -mfpu=fpv5-d16 -O2".')
@click.option("--json", "json_path", type=click.Path(dir_okay=False), default=None, help="Also write the figures as JSON.")
@click.option("--no-record", is_flag=True, help="Do not record the figures in the package's manifest.json (under stack).")
def stack(package, cc, cflags, json_path, no_record):
    """The stack in bytes of each C function of a package (one state, _work, batch, _batch_work)."""
    from .codegen.stack import stack_report

    click.echo(stack_report(package, cc, cflags, json_path, keep=not no_record))


@main.command()
@click.option("--table", "which", type=click.Choice(["1", "2", "3", "all"]), default="all", show_default=True,
              help="Table 1 (numeric), Table 2 (symbolic), Table 3 (forward dynamics, M^-1 and derivatives beside "
                   "seed 003's Table I and Pinocchio) or all three.")
@click.option("--figures", is_flag=True, help="Also measure and plot Figures 2-4 (needs the plots extra).")
@click.option("--out", "out_dir", default="results", show_default=True, type=click.Path(file_okay=False),
              help="Folder that receives tables.json, tables.md and the figures.")
@click.option("--timeout", type=float, default=None, help="Seconds per Table 2 cell [default: 600; 20 with --quick].")
@click.option("--build-timeout", type=float, default=None, help="Seconds per package build of Tables 1 and 3 and the figures.")
@click.option("--compile-timeout", type=float, default=None, help="Seconds per compile of generated C.")
@click.option("--flags", default=None, help="C compiler flags of the C loop [default: -O3 -march=native "
              "-ffp-contract=fast; -O1 with --quick].")
@click.option("--copt", default=None, help="Optimization flag of the Python binding [default: -O2; -O1 with --quick].")
@click.option("--pin-cpp", type=click.Choice(["build", "cached", "off"]), default=None,
              help="Pinocchio C++ harness: build it if needed (minutes, ~5 GB), use it only if cached, or off "
                   "[default: build; cached with --quick].")
@click.option("--repeats", type=int, default=None, help="Repeats per timing (the median is reported) [default: 7; 3 with --quick].")
@click.option("--min-time", type=float, default=None, help="Seconds per repeat at least [default: 0.05].")
@click.option("--quick", is_flag=True, help="Tiny sizes and short timeouts (a CI smoke run, under 2 minutes).")
def tables(which, figures, out_dir, timeout, build_timeout, compile_timeout, flags, copt, pin_cpp, repeats, min_time,
           quick):
    """Reproduce the paper's Tables 1 and 2 (and Figures 2-4), and seed 003's Table I as Table 3, beside
    the papers and Pinocchio."""
    from .bench import tables as T

    given = {"timeout": timeout, "build_timeout": build_timeout, "compile_timeout": compile_timeout,
             "flags": flags, "copt": copt, "pin_cpp": pin_cpp, "repeats": repeats, "min_time": min_time}
    plan = (T.quick_plan if quick else T.full_plan)(**{k: v for k, v in given.items() if v is not None})
    command = "symgen " + " ".join(sys.argv[1:]) if sys.argv[1:2] == ["tables"] else "symgen tables"
    T.run(plan, out_dir, tables=("1", "2", "3") if which == "all" else (which,), figures=figures, command=command,
          log=lambda msg: click.echo(msg, err=True))
    click.echo(f"wrote {out_dir}/tables.json and {out_dir}/tables.md")


@main.command("bench")
@click.argument("package", type=click.Path(file_okay=False, exists=True))
@click.option("--model", "--urdf", "urdf", type=click.Path(dir_okay=False, exists=True), default=None,
              help="The robot's URDF, to time Pinocchio on the same robot, or MJCF file, for --mujoco (default: none).")
@click.option("--functions", default="C,Gamma", show_default=True,
              help=f"Comma list of the package's quantities to time: {Q.help_text()}.")
@click.option("--flags", default=None, help="C compiler flags of the C loop (and CasADi's C) "
              "[default: -O3 -march=native -ffp-contract=fast: FMA on, as g++ has it for Pinocchio's harness].")
@click.option("--repeats", default=7, show_default=True, help="Repeats (the median is reported).")
@click.option("--min-time", default=0.05, show_default=True, help="Seconds per repeat at least (sets the loop count).")
@click.option("--compile-timeout", type=float, default=None, help="Give up compiling after this many seconds.")
@click.option("--pin-cpp", type=click.Choice(["build", "cached", "off"]), default="build", show_default=True,
              help="Pinocchio C++ harness: build it if needed (minutes, ~5 GB), use it only if cached, or off.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False), default=None, help="Also write the results as JSON.")
@click.option("--casadi", is_flag=True, help="Also time CasADi's generated C of the same robot (M, C, tau, g; "
              "CRBA/RNEA taped on SX, C by CasADi's AD) in the same C loop, with the same flags: symgen's algorithms "
              "taped, and Pinocchio's (casadi_kin_dyn, in an environment made once under ~/.cache/symgen; fixed "
              "bases). Needs --urdf and casadi: the bench extra.")
@click.option("--processes", default=1, show_default=True, type=click.IntRange(1, 99),
              help="Run the C loop in this many fresh processes, each with the package's code at another "
                   "16-byte offset (up to 4); report the median of their medians.")
@click.option("--cppadcg", is_flag=True, help="Also time Pinocchio's own generated code (CppADCodeGen: tau, Minv, "
              "qdd, dtau, dqdd), compiled with the same flags, checked against Pinocchio first (needs --urdf and "
              "cmeel-cppadcodegen: the cppadcg extra; builds its harness once, minutes).")
@click.option("--mujoco", is_flag=True, help="Also time MuJoCo's C library from the wheel (M, the bias C v + g, "
              "contact-free forward dynamics) in the same C loop, checked against the package first (a package "
              "built from MJCF, --model that file; the mjcf extra).")
@click.option("--c-batch", default=256, show_default=True, type=click.IntRange(0, 1 << 20),
              help="Also time the C batch (NAME_<function>_batch_threads, one thread) on this many packed states, "
              "per state beside one state, and the machine's FMA rate (0: neither).")
@click.option("--drake", is_flag=True, help="Also time Drake's MultibodyPlant from Python (M, g, tau, contact-free "
              "forward dynamics) beside the package's binding called from Python, checked against it first (a "
              "fixed-base package, --model its URDF; the drake package).")
@click.option("--idyntree", is_flag=True, help="Also time iDynTree's KinDynComputations from Python (M, C, g, tau) in "
              "the package's --base-velocity representation beside the package's binding called from Python, checked "
              "against it first (a floating-base package, --model its URDF; the idyntree package).")
def bench_command(package, urdf, functions, flags, repeats, min_time, compile_timeout, pin_cpp, json_path, casadi,
                  processes, cppadcg, mujoco, c_batch, drake, idyntree):
    """Time a generated package: its C in a C loop and from Python, beside Pinocchio."""
    from .bench import bench_package, format_report
    from .bench.cloop import DEFAULT_FLAGS, read_manifest

    result = bench_package(package, urdf=urdf, quantities=Q.parse(functions, "--functions"),
                           flags=flags or DEFAULT_FLAGS, repeats=repeats, min_time=min_time, compile_timeout=compile_timeout,
                           pin_cpp=pin_cpp, casadi=casadi, processes=processes, cppadcg=cppadcg,
                           mujoco=mujoco, c_batch=c_batch, drake=drake, idyntree=idyntree)
    click.echo(format_report(result))
    contacts = read_manifest(package).get("contacts")
    if contacts and urdf and pin_cpp != "off":      # the contact functions beside Pinocchio's contact algorithms
        from .bench.contact import bench_contacts, format_contacts

        result["contacts"] = bench_contacts(package, urdf, flags or DEFAULT_FLAGS, repeats, min_time,
                                            build=pin_cpp == "build", timeout=compile_timeout or 1800)
        click.echo(format_contacts(result["contacts"], contacts))
    if read_manifest(package).get("loops") and urdf and pin_cpp != "off":   # loops/couplings beside Pinocchio's routes
        from .bench.loops import bench_loops, format_loops, missing_functions

        missing = missing_functions(read_manifest(package))
        if missing:
            click.echo(f"loops: not timed beside Pinocchio's routes: the package lacks {', '.join(missing)} "
                       f"(symgen build --quantities M,C,tau,qdd)")
        else:
            result["loops"] = bench_loops(package, urdf, flags or DEFAULT_FLAGS, repeats, min_time,
                                          build=pin_cpp == "build", timeout=compile_timeout or 1800)
            click.echo(format_loops(result["loops"]))
    if json_path:
        import json
        import shlex
        from datetime import datetime, timezone
        from pathlib import Path

        # what the results pages name for each figure (docs/results/): the command, its date, the machine
        argv = click.get_current_context().meta.get("symgen.argv", sys.argv[1:])
        record = {"command": shlex.join(["symgen", *argv]),
                  "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), **result}
        Path(json_path).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":  # pragma: no cover
    main()
