"""The one registry of what a generated package computes.

Each :class:`Quantity` is declared once: its key (``symgen build --quantities``), the generated
function's name, its arguments, its outputs and their shapes (from the robot and the build's
options), its doc, the :class:`Sweep` (one run of one algorithm) that yields it, how ``symgen
verify`` checks it against Pinocchio and how ``symgen bench`` times Pinocchio's counterpart.
Build, verify, bench, tables, the CLI and the templates read this table; no other module spells
a generated function's name or a Pinocchio call.

A sweep is one algorithm run over a backend (numbers or SymPy symbols, the same code): several
quantities that come out of one sweep (Mdot and C of Algorithm 1) are traced from one symbolic
run, and a quantity with several outputs (a fused call) is printed as one function that returns
them all from that run.

The registry is split by what it declares: :mod:`.base` (arguments, outputs, the dataclasses,
option parsing), :mod:`.sweeps` (the algorithm runs), one module per family of quantities
(:mod:`.core`, ...) and this module, which assembles the tables and holds what is done with them.
Adding a quantity = one :class:`Quantity` in its family's module (and a :class:`Sweep` if its
algorithm is new) + the algorithm in ``symgen/algorithms/`` + its tests; a new family is one
module and one entry of ``_MODULES`` below.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..algorithms.external_forces import forces_array as robot_forces
from ..axisymmetric import inertial_view
from ..errors import OptionError
from . import appendix_b, centroidal, contact, core, loops, operational_space, references, sweeps
from .base import (ARGUMENTS, FRAMES, GAMMA_METHODS, STATE_ARGUMENTS, Argument, Output, PinCall, Quantity,  # noqa: F401
                   Sweep, SweepOptions, check_options, gravity_text, parse_gravity)
from .sweeps import frames_of, in_body_frames, point_frame, split_frames  # noqa: F401
from ..passive import PASSIVE_SWEEPS, constrained, has_passive, resolve

#: the modules that declare sweeps (a ``SWEEPS`` tuple) and quantities (a ``QUANTITIES`` tuple), in
#: the order of the generated files
_MODULES = (sweeps, core, centroidal, appendix_b, contact, loops, references, operational_space)

SWEEPS = {s.name: s for module in _MODULES for s in getattr(module, "SWEEPS", ())}
QUANTITIES = {x.key: replace(x, inertial=SWEEPS[x.sweep].inertial, external=SWEEPS[x.sweep].external)
              for module in _MODULES for x in getattr(module, "QUANTITIES", ())}


def embed_rules(sweep_name: str) -> dict:
    """``{output name: embedding rule}`` of the outputs of the quantities ``sweep_name`` yields
    (how ``--mimic`` projects each, :mod:`symgen.mimic`)."""
    return {o.name: o.embed for x in QUANTITIES.values() if x.sweep == sweep_name for o in x.outputs}


def run_sweep(sweep: Sweep, robot, args: dict, bk, opts: SweepOptions) -> dict:
    """``sweep.run`` with the robot's inertias those of ``args["params"]`` when it is given and
    the sweep depends on them (numbers: a reference with other parameters; symbols: a parametric
    build), else the URDF's. A ``--mimic`` robot runs it embedded (:func:`symgen.mimic.run_embedded`,
    handed the sweep's projection rules and this function for the full model). A sweep on the
    URDF's inertias sees the robot's axisymmetric rotors turn-free (:mod:`symgen.axisymmetric`)."""
    from ..kinematics import with_parameters

    if opts.passive and sweep.name in PASSIVE_SWEEPS:       # not on a constrained robot yet: refused there
        resolve(robot, True)
    if sweep.name in loops.OWN_SWEEPS:                      # phi, K, G v: the closed mechanism's own
        return sweep.run(robot, args, bk, opts)
    # the model's inertias: rotors need not turn, unless a force on them turns with them
    if sweep.inertial and args.get("params") is None and args.get("f_ext") is None:
        robot = inertial_view(robot)
    if opts.base_velocity != "body" and robot.floating_base:     # MIXED/INERTIAL speeds: v = G(q) nu
        from ..base_velocity import run_rebased

        return run_rebased(sweep, robot, args, bk, opts, embed_rules(sweep.name),
                           lambda s, *rest: run_sweep(SWEEPS[s] if isinstance(s, str) else s, *rest),
                           {k: x.output_names for k, x in QUANTITIES.items() if x.sweep == sweep.name})
    if robot.system is not None:          # loops: G(q) (symgen.closed)
        from ..closed import run_closed

        return run_closed(sweep, robot, args, bk, opts, embed_rules(sweep.name), run_sweep,
                          {k: x.output_names for k, x in QUANTITIES.items() if x.sweep == sweep.name})
    if robot.embedding is not None:       # --mimic: reduced coordinates
        from ..mimic import run_embedded

        return run_embedded(sweep, robot, args, bk, opts, embed_rules(sweep.name), run_sweep)
    theta = args.get("params") if sweep.inertial else None
    return sweep.run(with_parameters(robot, theta), args, bk, opts)


def available(robot) -> tuple[str, ...]:
    """The keys of the quantities symgen computes for ``robot``: all but the loop functions on a
    robot without URDF+ couplings or loops (:func:`.loops.loop_keys`), the contact terms on an
    embedded one (``--mimic``, couplings: no reduced contact system yet), and
    :data:`symgen.closed.UNSUPPORTED` on a mechanism with loops; the passive forces only on a tree
    with dampers or springs (:func:`passive_generated`); the operational-space functions on a tree
    only (not --mimic, couplings or loops)."""
    embedded = robot.embedding is not None
    own = loops.loop_keys(robot)
    out = []
    for key in QUANTITIES:
        if key in loops.LOOP_KEYS and key not in own or key in robot.unsupported:
            continue
        if key in PASSIVE_KEYS and not passive_generated(robot):
            continue
        if embedded and key in set(contact.CONTACT_KEYS) - {"whole_body_terms"}:
            continue
        if key in operational_space.KEYS and constrained(robot):       # a tree's M and J only, yet
            continue
        out.append(key)
    return tuple(out)


#: the passive forces' quantity: in a default build of a robot with joint dampers or springs
PASSIVE_KEYS = ("tau_p",)


def passive_generated(robot) -> bool:
    """Whether ``passive_force`` is part of ``robot``'s default build: a tree (not --mimic, couplings
    or loops, not supported there yet) with joint dampers or springs."""
    return has_passive(robot) and not constrained(robot)


#: the quantities of a build without ``--quantities``: all but those built on request only
DEFAULT = tuple(k for k, x in QUANTITIES.items() if x.default)

#: generated function name -> its Quantity
BY_FUNCTION = {x.function: x for x in QUANTITIES.values()}


def parse(text: str | None, option: str = "--quantities") -> tuple[str, ...]:
    """The quantity keys of a comma list of keys or function names (all by default); unknown
    ones are an OptionError."""
    if not text:
        return DEFAULT
    words = (s.strip() for s in text.split(",") if s.strip())
    wanted = tuple(dict.fromkeys(BY_FUNCTION[w].key if w in BY_FUNCTION else w for w in words))
    unknown = [s for s in wanted if s not in QUANTITIES]
    if unknown or not wanted:
        raise OptionError(f"{option}: unknown {', '.join(unknown) or '(empty)'}; expected a comma list of "
                          f"{','.join(QUANTITIES)}")
    return wanted


def help_text() -> str:
    """The keys with the functions they generate, for the CLI's help."""
    return "; ".join(f"{x.key} = {x.function}" for x in QUANTITIES.values())


def evaluate(robot, key: str, state: dict, opts: SweepOptions = SweepOptions(frame="body")):
    """The numeric value of quantity ``key`` at ``state`` (``{argument: vector}``): its sweep run on
    numbers (the same algorithm code the symbolic run uses; body frame by default, so that it is
    an independent reference for the ground-frame generated code); a ``params`` entry of ``state``
    (theta, 10 per body) replaces the URDF's inertias. One output: the array; several: a tuple."""
    (value,) = evaluate_all(robot, (key,), state, opts)
    return value


def evaluate_all(robot, keys, state: dict, opts: SweepOptions = SweepOptions(frame="body")) -> tuple:
    """:func:`evaluate` of each of ``keys`` at one ``state``, each sweep run once (Algorithm 1's
    Mdot and C from one run): the values in ``keys`` order. Every robot kind (a tree, a free-flyer,
    ``--mimic``, couplings, loops) goes through :func:`run_sweep`, as the generated code's trace."""
    from ..backend import NUMERIC

    opts, runs, out = check_options(opts), {}, []
    names = dict.fromkeys(a for key in keys for a in SWEEPS[QUANTITIES[key].sweep].arguments)
    checked = {a: robot.check_state(a, state[a]) for a in names}        # every size before any run
    for key in keys:
        x = QUANTITIES[key]
        if x.sweep not in runs:
            sweep = SWEEPS[x.sweep]
            args = {a: checked[a] for a in sweep.arguments}
            if opts.external_forces and sweep.external:
                args["f_ext"] = robot_forces(robot, state.get("f_ext"))
            if state.get("params") is not None and sweep.inertial:
                args["params"] = np.asarray(state["params"], dtype=float)
            runs[x.sweep] = run_sweep(sweep, robot, args, NUMERIC, opts)
        values = tuple(runs[x.sweep][o.name] for o in x.outputs)
        out.append(values[0] if len(values) == 1 else values)
    return tuple(out)


def tolerance(x: Quantity, M=None, base: float = 1e-9, Lambda=None,
              damping: float = SweepOptions.opspace_damping) -> float:
    """The relative tolerance of comparisons of ``x`` at a state with mass matrix ``M``:
    ``base``, or for a quantity that inherits cond(M), 100 eps cond(M) if that is larger; for one
    that inherits its tasks' cond(Lambda) too (``x.task``), times the largest of them, ``Lambda``
    being operational_space_inertia at that state with ``damping`` (inf where the damping holds a
    task: :func:`.operational_space.task_condition`)."""
    if not x.conditioned or M is None:
        return base
    task = operational_space.task_condition(Lambda, damping) if x.task and Lambda is not None else 1.0
    return max(base, 100 * np.finfo(float).eps * float(np.linalg.cond(M)) * task)


def random_state(rng, nq: int, nv: int, names=STATE_ARGUMENTS, parameters=None, layout=None) -> dict:
    """One random state ``{argument: vector}`` drawn as verify and bench draw them; with the
    nominal ``parameters``, also ``params`` (drawn around them); ``layout``: the package's
    ``joint_models`` (:meth:`Argument.draw`)."""
    state = {a: ARGUMENTS[a].draw(rng, nq, nv, layout=layout) for a in names}
    if parameters is not None:
        state["params"] = ARGUMENTS["params"].draw(rng, nq, nv, nominal=parameters)
    return state


def call(module, key: str, state: dict, opts: SweepOptions = SweepOptions()):
    """Quantity ``key`` computed by ``module`` (a generated package or one of its backends) at
    ``state``, given the arguments the registry says it takes under ``opts`` (``params`` too in a
    parametric build)."""
    x = QUANTITIES[key]
    return getattr(module, x.function)(*(state[a] for a in x.arguments_for(opts)))


def flat(value, lead: int = 0) -> np.ndarray:
    """A quantity's value as one array: several outputs (a tuple) are raveled and laid end to end
    after the first ``lead`` (batch) axes; one output is returned as an array."""
    if not isinstance(value, tuple):
        return np.asarray(value)
    head = np.shape(value[0])[:lead]
    return np.concatenate([np.reshape(v, head + (-1,)) for v in value], axis=-1)
