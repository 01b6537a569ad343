"""``symgen verify``: check a generated package, then run it on random states (paper, Section 5).

First that the folder is the package symgen built, before anything of it is imported: every
generated file against the sha256 its manifest records, the manifest against the digest that
``__init__.py`` records and against the package (sizes, joint order, functions), and with a URDF,
the package's joints and their order against the URDF's. The manifest, not the caller, says
whether the base floats. Any difference is a one-line SymgenError.

Then what is checked comes from the registry (:mod:`symgen.quantities`): every function the
package has, on every backend, against NumPy's; with a URDF, against the numeric reference (the
same algorithms run on numbers, body frame), Pinocchio on symgen's reading of the URDF (each
quantity's ``pinocchio`` counterpart) and, for M and tau, Pinocchio on its own reading of the
file (which a misreading by symgen's reader cannot fool); and the identities of :mod:`symgen.identities`,
each run when the package has the functions it needs.
"""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np

from . import oracle_contact, oracle_operational_space, quantities as Q, verify_contact
from .errors import OptionError, SymgenError
from .identities import IDENTITIES
from .codegen.scalar import FLOAT_COND, FLOAT_TOL, tolerance as float_tolerance
from .mjcf import is_mjcf, load_robot

TOL = 1e-9
#: the JAX module against NumPy's (the same printed lines, float64): 1e-12, times cond(M) where solved
JAX_TOL = 1e-12


def _rel(a, b):
    a, b = Q.flat(a), Q.flat(b)                     # several outputs: compared as one vector
    scale = max(1.0, float(np.max(np.abs(b))) if np.size(b) else 1.0)
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b)))) / scale if np.size(b) else 0.0


def _pinocchio(robot, frames=None, gravity=None):
    """(PinOracle or None, a note for the report). Pinocchio reads the robot symgen read, as
    symgen writes it back (after lumping and snapping; a floating base loaded with Pinocchio's
    free-flyer), not the raw file: snapping moves values by up to 1e-9, this check's tolerance."""
    try:
        import pinocchio
    except ImportError:
        return None, "Pinocchio: not installed (pip install pin), skipped"
    from .mimic import full_model
    from .oracle_loops import oracle_for
    from .pinocchio_oracle import pin_model_of
    from .urdf import urdf_string

    try:
        # --mimic: Pinocchio's model of the full robot (no mimic joints), projected by the embedding
        full = full_model(robot)
        if any(j.kind == "spherical" for j in full.joint_models):     # no URDF form: joint by joint
            return (oracle_for(robot, pin_model_of(full, pinocchio), pinocchio, frames=frames, gravity=gravity),
                    f"Pinocchio {pinocchio.__version__}, on symgen's model built joint by joint")
        model = (pinocchio.buildModelFromXML(urdf_string(full), pinocchio.JointModelFreeFlyer())
                 if full.floating_base else pinocchio.buildModelFromXML(urdf_string(full)))
        if full.floating_base and full.has_passive:   # (the free-flyer's damping has no URDF form)
            damping = np.array(model.damping, dtype=float)
            damping[:6] = full.damping_vector[:6]
            model.damping = damping
        return (oracle_for(robot, model, pinocchio, frames=frames, gravity=gravity),
                f"Pinocchio {pinocchio.__version__}, on symgen's rewrite of the URDF")
    except Exception as exc:                    # urdfdom's and the joint matching's refusals alike
        return None, f"Pinocchio: skipped, {exc}".splitlines()[0]


def _pinocchio_own_parse(robot, urdf, gravity=None):
    """(PinOracle or None, a note): Pinocchio on its own reading of the URDF file, so that a
    misreading by symgen's reader (which the check above shares) shows; a floating base is
    Pinocchio's free-flyer there too."""
    try:
        import pinocchio
    except ImportError:
        return None, None
    from .oracle_loops import oracle_for

    if robot.mujoco_qpos0 is not None:
        return None, "Pinocchio's own reading of the file: skipped for MJCF (buildModelFromMJCF merges a body's joints)"
    try:
        model = (pinocchio.buildModelFromUrdf(str(urdf), pinocchio.JointModelFreeFlyer()) if robot.floating_base
                 else pinocchio.buildModelFromUrdf(str(urdf)))
        return oracle_for(robot, model, pinocchio, gravity=gravity), (f"Pinocchio's own parse of the URDF: {', '.join(OWN_PARSE)} to "
                                                    f"{OWN_PARSE_TOL:g} (symgen snaps values within 1e-9)")
    except Exception as exc:                    # urdfdom's refusals, joints that cannot be matched
        return None, f"Pinocchio's own parse of the URDF: skipped, {exc}".splitlines()[0]


#: what is compared with Pinocchio's own parse of the URDF, and how closely
OWN_PARSE = tuple(Q.QUANTITIES[k].function for k in ("M", "tau"))
OWN_PARSE_TOL = 1e-7
MANIFEST_KEYS = {"name": str, "nq": int, "nv": int, "floating_base": bool, "joint_names": list, "link_names": list,
                 "source_sha256": str, "options": dict, "functions": dict, "c_extension": str, "files": dict}


def read_manifest(path) -> dict:
    """The manifest of the package folder ``path``, its form checked; a SymgenError otherwise."""
    path = Path(path)
    if not path.is_dir():
        raise SymgenError(f"{path}: {'not a folder' if os.path.lexists(path) else 'does not exist'}")
    mpath = path / "manifest.json"
    if not mpath.is_file():
        what = "an empty folder" if not any(path.iterdir()) else "no manifest.json"
        raise SymgenError(f"{path}: not a symgen package ({what}); make one with symgen build ROBOT.urdf")
    try:
        manifest = json.loads(mpath.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise SymgenError(f"{mpath}: not readable as JSON ({exc})".splitlines()[0]) from exc
    if not isinstance(manifest, dict):
        raise SymgenError(f"{mpath}: not a symgen manifest (not a JSON object)")
    if "files" not in manifest and "c_extension" in manifest:
        raise SymgenError(f"{mpath}: written by a symgen that recorded no file hashes; rebuild the package")
    wrong = [k for k, kind in MANIFEST_KEYS.items() if not isinstance(manifest.get(k), kind)
             or (kind is int and isinstance(manifest[k], bool))]
    if wrong:
        raise SymgenError(f"{mpath}: not a symgen manifest (missing or malformed: {', '.join(wrong)})")
    return manifest


def check_files(path, manifest: dict) -> None:
    """Every file symgen generated is there with the sha256 the manifest records (checked before
    anything of the package is imported, so foreign code is never run)."""
    path = Path(path)
    name, ext = manifest["name"], manifest["c_extension"]
    needed = {"__init__.py", f"{name}_numpy.py", f"{name}_c.py", f"{name}.h", f"{name}.c", f"{ext}.c"}
    needed |= {f"{name}_jax.py"} if "jax" in _targets(manifest) else set()
    files = manifest["files"]
    if not needed <= set(files) or not all(isinstance(d, str) for d in files.values()):
        raise SymgenError(f"{path / 'manifest.json'}: edited after the build (its file list is not a package's); "
                          f"rebuild the package")
    for fname, digest in sorted(files.items()):
        if Path(fname).name != fname or fname.startswith("."):
            raise SymgenError(f"{path / 'manifest.json'}: lists {fname!r}, which is not a file of the package")
        try:
            data = (path / fname).read_bytes()
        except OSError as exc:
            raise SymgenError(f"{path / fname}: {exc.strerror or exc} (manifest.json lists it); rebuild the package") from exc
        if hashlib.sha256(data).hexdigest() != digest:
            raise SymgenError(f"{path / fname}: differs from the file symgen built (sha256 recorded in manifest.json): "
                              f"edited after the build? rebuild the package")


def _targets(manifest: dict) -> list:
    """The targets the manifest lists (a package of before --target: NumPy and C)."""
    targets = manifest["options"].get("targets", ["numpy", "c"])
    return targets if isinstance(targets, list) else []


class _JaxAsNumpy:
    """The package's JAX module with NumPy results, so every check treats it as one more backend;
    its functions run in float64 (``jax.enable_x64``, only while verify runs: see ``_x64``)."""

    def __init__(self, module):
        self.module = module

    def __getattr__(self, name):
        import jax

        fn = getattr(self.module, name)
        if not callable(fn):
            return fn

        def call(*args):
            out = jax.device_get(fn(*args))
            return tuple(np.asarray(o) for o in out) if isinstance(out, tuple) else np.asarray(out)
        return call


def _x64(manifest: dict, path):
    """The context verify runs in: float64 JAX when the package has the jax target (a
    SymgenError when jax is not installed), else nothing."""
    import contextlib

    if "jax" not in _targets(manifest):
        return contextlib.nullcontext()
    try:
        import jax
    except ImportError as exc:
        raise SymgenError(f"{path}: built with --target jax, but jax is not installed "
                          f"(pip install 'symgen[jax]')") from exc
    enable_x64 = getattr(jax, "enable_x64", None)   # jax >= 0.7; before, jax.experimental's
    if enable_x64 is None:
        from jax.experimental import enable_x64
    return enable_x64(True)


def check_module(pkg, manifest: dict, path) -> None:
    """The manifest says what the imported package has: the same manifest it was built with
    (its digest), sizes, joint and link order, functions."""
    from .codegen.files import manifest_digest

    where = Path(path) / "manifest.json"
    if getattr(pkg, "manifest_sha256", None) != manifest_digest(manifest):
        raise SymgenError(f"{where}: edited after the build (it differs from the manifest __init__.py records); "
                          f"rebuild the package")
    for key in ("nq", "nv", "floating_base", "joint_names", "link_names"):
        theirs = getattr(pkg, key, None)
        if (tuple(theirs) if isinstance(theirs, (list, tuple)) else theirs) != (
                tuple(manifest[key]) if isinstance(manifest[key], list) else manifest[key]):
            raise SymgenError(f"{where}: {key} differs from the package's")
    if tuple(getattr(pkg, "reference_frames", ())) != tuple(manifest.get("reference_frames", ())):
        raise SymgenError(f"{where}: reference_frames differs from the package's")
    missing = [f for f in manifest["functions"] if not callable(getattr(pkg.numpy, f, None))]
    if missing or sorted(manifest["options"].get("quantities", [])) != sorted(
            Q.BY_FUNCTION[f].key for f in manifest["functions"] if f in Q.BY_FUNCTION):
        raise SymgenError(f"{where}: functions differ from the package's ({', '.join(missing) or 'quantities'})")


def check_robot(robot, manifest: dict, path, urdf) -> str:
    """The package is the URDF's robot (same joints in the same order); a note on the source
    file (another file describing the same robot is accepted, with the note)."""
    ours, theirs = list(manifest["joint_names"]), list(robot.joint_names)
    if len(ours) != len(theirs):
        raise SymgenError(f"{path}: {len(ours)} joints, but {urdf} has {len(theirs)}: not this robot's package")
    for i, (a, b) in enumerate(zip(ours, theirs)):
        if a != b:
            raise SymgenError(f"{path}: joint {i} of q is {a!r} in the package but {b!r} in {urdf} "
                              f"(joint names or order differ): not this robot's package")
    digest = hashlib.sha256(Path(urdf).read_bytes()).hexdigest()
    if digest == manifest["source_sha256"]:
        return f"source: {Path(urdf).name} is the file the package was built from (sha256)"
    return (f"source: {Path(urdf).name} is not the file the package was built from (sha256 {digest[:12]}..., "
            f"built from {manifest['source_sha256'][:12]}...); compared as the same robot")


def with_manifest_armature(robot, manifest: dict):
    """The robot with the armature the package was built with (``symgen build --armature``, or the
    MJCF's ``dof_armature``): the reference and Pinocchio (``model.armature``) then include it."""
    import dataclasses

    armature = tuple(float(a) for a in manifest.get("armature") or ())
    if not any(armature) or robot.full is not robot or tuple(robot.armature_vector) == armature:
        return robot
    return dataclasses.replace(robot, armature=armature)


def manifest_gravity(manifest: dict, path) -> tuple[float, float, float]:
    """The gravity a package was built with (``options.gravity``; a package from before the
    option has the default)."""
    from .model import GRAVITY

    g = manifest["options"].get("gravity", list(GRAVITY))
    if (not isinstance(g, list) or len(g) != 3
            or not all(isinstance(x, (int, float)) and not isinstance(x, bool) and np.isfinite(x) for x in g)):
        raise SymgenError(f"{Path(path) / 'manifest.json'}: not a symgen manifest (malformed options.gravity)")
    return tuple(float(x) for x in g)


def _passive_force(pkg, state):
    """tau_p = -damping qd - stiffness (q - springref) from the package's own attributes (the
    identity RNEA(q, qd, FD) = tau + tau_p of a package built with --passive)."""
    q, qd = np.asarray(state["q"]), np.asarray(state["qd"])
    tau = -pkg.damping * qd
    for _, kind, iq, nq, iv, nv in pkg.joint_models:
        if nq == nv == 1:
            tau[iv] -= pkg.stiffness[iv] * (q[iq] - pkg.springref[iv])
    return tau


class _Memo:
    """The oracle's methods, each computed once per state (Mdot and C both read Pinocchio's C);
    its other attributes (model, data, map: what the oracle functions of a family read) as they are."""

    def __init__(self, oracle):
        self.oracle, self._cache = oracle, {}         # the oracle itself: for calls that change its model

    def __getattr__(self, method):
        value = getattr(self.oracle, method)
        if not callable(value) or not hasattr(value, "__self__"):
            return value

        def call(*args):
            key = (method,) + tuple(np.asarray(a).tobytes() for a in args)
            if key not in self._cache:
                self._cache[key] = getattr(self.oracle, method)(*args)
            return self._cache[key]
        return call


#: the CasADi externals against the C binding they call (only the transposition is between them)
CASADI_TOL = 1e-12


def _casadi_externals(path, manifest, notes):
    """The package's CasADi externals when its manifest lists the casadi target, else None."""
    if "casadi" not in manifest["options"].get("targets", ()):
        return None
    from .codegen.casadi_target import library_name, load_externals

    if not (Path(path) / library_name(manifest["name"])).is_file():
        raise SymgenError(f"{path}: manifest.json lists the casadi target but {library_name(manifest['name'])} "
                          f"is missing")
    try:
        externals = load_externals(path, manifest)
    except ImportError as exc:
        raise SymgenError(f"{path}: the casadi target needs the casadi module: {exc}") from exc
    notes.append(f"casadi target: {len(manifest['functions'])} external functions in "
                 f"{library_name(manifest['name'])}")
    return externals


def _tasked(check: str) -> bool:
    """Whether a check's function inherits its tasks' cond(Lambda) (the operational-space ones)."""
    return any(x.task and f": {x.function}" in check for x in Q.QUANTITIES.values())


def _idyntree(urdf, robot, kind, gravity):
    """(iDynTree's oracle in representation ``kind``, or None, and a note saying which)."""
    if is_mjcf(urdf):
        return None, "iDynTree not used (it reads URDF)"
    try:
        from .oracle_idyntree import IDynTreeOracle

        oracle = IDynTreeOracle(urdf, robot.joint_names[1:], kind, gravity)
    except ImportError:
        return None, "iDynTree not installed (pip install idyntree)"
    except SymgenError as exc:
        return None, f"iDynTree not used ({exc})"
    return oracle, f"M, C qd + g, g, tau and the frame Jacobians against iDynTree's {kind} representation"


def verify_package(path, trials=20, seed=0, urdf=None, floating_base=None):
    """Return (report text, ok). First, before anything is imported: the files against the sha256
    the manifest records, the manifest against the package, and with a URDF, its joints against
    the manifest's (a SymgenError when any differs). Then per random state (the registry's draws:
    q in [0, 2pi], qd in [0, 10], qdd in [-10, 10]): the identities, every backend equal to
    NumPy, and with a URDF the numeric reference and, if it is installed, Pinocchio on symgen's
    reading of the URDF and on its own. The floating base is the manifest's (``floating_base``,
    when given, must agree)."""
    import symgen
    from .codegen.package import import_package, jax_module_of

    if not isinstance(trials, int) or trials < 1:
        raise OptionError(f"{path}: --trials must be at least 1, got {trials}")
    if not isinstance(seed, int) or seed < 0:
        raise OptionError(f"{path}: --seed must be a non-negative integer, got {seed}")
    manifest = read_manifest(path)
    check_files(path, manifest)
    try:
        pkg = import_package(path)
    except Exception as exc:
        raise SymgenError(f"{path}: cannot import the package: {exc!r}".splitlines()[0]) from exc
    check_module(pkg, manifest, path)
    built_floating = manifest["floating_base"]
    if floating_base is not None and bool(floating_base) != built_floating:
        raise OptionError(f"{path}: built {'with' if built_floating else 'without'} --floating-base "
                          f"(manifest.json); verify reads it from there")
    notes = [f"built with {', '.join(f'{k}={v}' for k, v in sorted(manifest['options'].items()) if k != 'quantities')}, "
             f"floating_base={built_floating}; {len(manifest['files'])} files match their sha256 in manifest.json"]
    if manifest.get("reference_frames"):           # each reference's frame functions are listed and checked below
        notes.append(f"frame functions in reference frames {', '.join(manifest['reference_frames'])}")
    frames = tuple(manifest.get("frames") or ()) or None          # the rows of the frame kinematics
    gravity = manifest_gravity(manifest, path)
    contacts = tuple(tuple(c) for c in manifest.get("contacts", ()))   # the contact functions' (frame, type)
    passive = bool(manifest["options"].get("passive", False))    # FD with the passive forces (--passive)
    external = bool(manifest["options"].get("external_forces", False))     # f_ext (--external-forces)
    damping = float(manifest["options"].get("opspace_damping", Q.SweepOptions.opspace_damping))
    base_velocity = manifest["options"].get("base_velocity", "body")      # the free-flyer's speeds (--base-velocity)
    reference_opts = Q.SweepOptions(frame="body", frames=frames, gravity=gravity, contacts=contacts, passive=passive,
                                    external_forces=external, opspace_damping=damping, base_velocity=base_velocity)
    robot = oracle = own = idyntree = None
    if urdf:
        read = load_robot if is_mjcf(urdf) else symgen.load_urdf                  # MJCF through MuJoCo
        robot = read(urdf, floating_base=built_floating,
                     mimic=bool(manifest["options"].get("mimic", False)),        # --mimic: reduced
                     **({"open_loops": True} if manifest["options"].get("open_loops") else {}),
                     **({"trees": tuple(manifest["options"]["trees"])} if manifest["options"].get("trees") else {}))
        notes.append(check_robot(robot, manifest, path, urdf))
        robot = with_manifest_armature(robot, manifest)
        oracle, pin_note = _pinocchio(robot, frames, gravity)
        oracle = oracle if oracle is None else oracle_contact.with_contacts(oracle, contacts)
        if oracle is not None:
            oracle.passive = passive                    # aba at tau + tau_p (symgen.pinocchio_oracle)
            oracle_operational_space.with_damping(oracle, damping)
        own, own_note = _pinocchio_own_parse(robot, urdf, gravity)
        notes += [n for n in (pin_note, own_note) if n]
        if base_velocity != "body":               # Pinocchio's free-flyer has body speeds: iDynTree's instead
            oracle = own = None
            idyntree, idyntree_note = _idyntree(urdf, robot, base_velocity, gravity)
            notes.append(f"base velocity {base_velocity}: checked against the reference and the identities; "
                         f"Pinocchio (body speeds) left out; {idyntree_note}")
    rng = np.random.default_rng(seed)
    worst: dict[str, float] = {}                    # check -> worst relative error
    ratio: dict[str, float] = {}                    # check -> worst error / its tolerance
    allowed: dict[str, float] = {}                  # check -> the tolerance at that worst ratio

    def record(name, value, tol=TOL):
        worst[name] = max(worst.get(name, 0.0), value)
        if value / tol >= ratio.get(name, 0.0):
            ratio[name], allowed[name] = value / tol, tol

    backends = {"numpy": pkg.numpy} | ({"c": pkg.c} if pkg.c is not None else {})
    x64 = _x64(manifest, path)
    if "jax" in _targets(manifest):
        backends["jax"] = _JaxAsNumpy(pkg.jax)
        if pkg.jax._XLA:                        # on this CPU "jax" runs the C (XLA FFI): its own code too
            backends["jax (own code)"] = _JaxAsNumpy(jax_module_of(path, own=True))
    present = [Q.BY_FUNCTION[f] for f in manifest["functions"] if f in Q.BY_FUNCTION]
    several = manifest.get("floating_base") or any(j[5] > 1 for j in manifest.get("joint_models", ()))
    identities = [i for i in IDENTITIES if all(Q.QUANTITIES[k].function in manifest["functions"] for k in i.needs)
                  and not (i.fixed_base and several)
                  and (i.forces or not external or not any(Q.QUANTITIES[k].external for k in i.needs))]
    parametric = bool(manifest["options"].get("parametric", False))
    opts = Q.SweepOptions(parametric=parametric, contacts=contacts, external_forces=external)
    contact_rng = np.random.default_rng([seed, 25])        # the active sets, apart from the states' stream
    externals = _casadi_externals(path, manifest, notes) if pkg.c is not None else None
    single = manifest.get("scalar") == "float" and pkg.c is not None
    if single:
        notes.append(f"scalar float: the C computes in float32, checked at {FLOAT_TOL:g} relative "
                     f"({FLOAT_COND} eps32 cond(M) where solved)")
    with x64:                                       # float64 JAX, if the package has it
        for trial in range(trials):
            # a parametric package runs at parameters drawn around the nominal ones, every check alike
            state = Q.random_state(rng, pkg.nq, pkg.nv, parameters=pkg.parameters if parametric else None,
                                   layout=getattr(pkg, "joint_models", None))
            if external:                                # one force per link, as the state's other entries
                state["f_ext"] = Q.ARGUMENTS["f_ext"].draw(rng, pkg.nq, pkg.nv, links=len(pkg.link_names))
            if robot is not None and robot.loops:       # loops: a consistent configuration (symgen.closed)
                state["q"] = robot.solve_loops(state["q"])
                for o in (oracle, own):
                    getattr(o, "at", lambda q: None)(state["q"])

            def caller(mod):
                """call(key, *args): the package's function at other arguments (and this state's params)."""
                def call(key, *args):
                    x = Q.QUANTITIES[key]
                    extra = tuple(state[a] for a in ("f_ext", "params") if a in x.arguments_for(opts))
                    return getattr(mod, x.function)(*args, *extra)
                return call

            M = (Q.call(pkg.numpy, "M", state, opts) if hasattr(pkg.numpy, Q.QUANTITIES["M"].function)
                 else Q.evaluate(robot, "M", state) if robot is not None else None)
            Lam = None                                  # the operational-space tasks' conditioning
            if any(x.task for x in present):
                Lam = (Q.call(pkg.numpy, "Lambda", state, opts) if hasattr(pkg.numpy, Q.QUANTITIES["Lambda"].function)
                       else Q.evaluate(robot, "Lambda", state, reference_opts) if robot is not None else None)
            tol = {x.function: Q.tolerance(x, M, TOL, Lam, damping) for x in present}
            # a float package's C (--scalar float) at the float tolerance, every other backend at the double one
            tols = {b: {x.function: float_tolerance(x, M, tol[x.function]) for x in present}
                    if single and b == "c" else tol for b in backends}
            values = {b: {x.function: Q.call(mod, x.key, state, opts) for x in present} for b, mod in backends.items()}
            for oracle_ in (oracle, own):
                if oracle_ is not None and parametric:
                    oracle_.set_parameters(state["params"])
            outside = {}                                # name -> {function: value}, each computed once
            if robot is not None:
                outside["reference"] = {x.function: Q.evaluate(robot, x.key, state, reference_opts) for x in present}
            if oracle is not None:
                memo = _Memo(oracle)
                outside["Pinocchio"] = {x.function: x.pinocchio(memo, state) for x in present
                                        if x.pinocchio and not x.oracle_state}
                for x in present:                       # compared at a state of their own
                    if x.pinocchio and x.oracle_state:
                        at = x.oracle_state(state)
                        for bname, mod in backends.items():
                            record(f"{bname} vs Pinocchio: {x.function} ({x.oracle_state.__doc__})",
                                   _rel(Q.call(mod, x.key, at, opts), x.pinocchio(memo, at)),
                                   tols[bname][x.function])
            active = verify_contact.active_set(contact_rng, len(getattr(pkg, "contacts", ())), trial)
            verify_contact.check(pkg, backends, oracle, state, active, record)
            verify_contact.check_derivatives(pkg, backends, oracle, state, active, record)
            if idyntree is not None:
                from .oracle_idyntree import package_values

                outside["iDynTree"] = package_values(idyntree, present, state, manifest)
            if own is not None:
                memo = _Memo(own)
                outside["Pinocchio (own parse)"] = {x.function: x.pinocchio(memo, state) for x in present
                                                    if x.function in OWN_PARSE}
            if externals is not None:               # the CasADi library: the C binding's values
                from .codegen.casadi_target import jacobian_errors

                for x in present:
                    record(f"casadi vs c: {x.function}",
                           _rel(Q.call(externals, x.key, state, opts), values["c"][x.function]), CASADI_TOL)
                for jac, error in jacobian_errors(externals, manifest, pkg.c, state).items():
                    record(f"casadi vs c: {jac} (CasADi's Jacobian)", error, CASADI_TOL)
            for bname, mod in backends.items():
                got = values[bname]
                for identity in identities:
                    record(f"{bname}: {identity.name}",
                           _rel(*identity.sides({x.key: got[x.function] for x in present},
                                                {**state, "parameters": state.get("params", pkg.parameters),
                                                 "armature": getattr(pkg, "armature", np.zeros(pkg.nv)),
                                                 "tau_p": _passive_force(pkg, state) if passive else 0.0},
                                                caller(mod))),
                           (max(tols[bname].values(), default=TOL) if identity.conditioned
                            else FLOAT_TOL if tols[bname] is not tol else TOL))
                theirs = ({"numpy": values["numpy"]} if bname != "numpy" else {}) | outside
                for other, their in theirs.items():
                    for f, value in their.items():
                        record(f"{bname} vs {other}: {f}", _rel(got[f], value),
                               max(OWN_PARSE_TOL, tols[bname][f]) if other == "Pinocchio (own parse)"
                               else tol[f] * JAX_TOL / TOL if bname.startswith("jax") and other == "numpy" else tols[bname][f])
    ok = all(r <= 1.0 for r in ratio.values())
    width = max((len(k) for k in worst), default=0)
    lines = [f"{pkg.__name__}: {pkg.nv} joints, backends {', '.join(backends)}, {trials} random states (seed {seed})"]
    lines += [f"  {note}" for note in notes]
    for k, v in sorted(worst.items()):
        note = ("" if allowed[k] in (TOL, OWN_PARSE_TOL, CASADI_TOL, JAX_TOL, FLOAT_TOL)
                else f" (<= {allowed[k]:.1e}: {f'{FLOAT_COND} eps32' if single and k.startswith('c') else '100 eps'} "
                     f"cond(M){' cond(Lambda)' * _tasked(k)})")
        lines.append(f"  {k:<{width}}  max rel. error {v:.2e}  {'ok' if ratio[k] <= 1.0 else 'FAIL'}{note}")
    lines.append("all checks passed" if ok else "FAILED: some errors exceed their tolerance")
    return "\n".join(lines), ok
