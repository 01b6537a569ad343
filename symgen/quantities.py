"""The one registry of what a generated package computes.

Each :class:`Quantity` is declared once, here: its key (``symgen build --quantities``), the
generated function's name, its arguments, its outputs and their shapes (from the robot and the
build's options), its doc,
the :class:`Sweep` (one run of one algorithm) that yields it, and how ``symgen verify`` checks it
against Pinocchio. Build, verify, bench, tables, the CLI and the templates read this table; no
other module spells a generated function's name.

A sweep is one algorithm run over a backend (numbers or SymPy symbols, the same code): several
quantities that come out of one sweep (Mdot and C of Algorithm 1) are traced from one symbolic
run, and a quantity with several outputs (a fused call) is printed as one function that returns
them all from that run.

Adding a quantity = one :class:`Quantity` here (and a :class:`Sweep` if its algorithm is new) +
the algorithm in ``symgen/algorithms/`` + its tests.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

import numpy as np

from .errors import OptionError
from .model import GRAVITY


@dataclass(frozen=True)
class Argument:
    """An input of generated functions: its size (``"nq"``, ``"nv"``, or ``"params"``: 10 per
    body) and the range that ``symgen verify`` and ``symgen bench`` draw it from (the paper's
    Section 5; for ``params``, see :meth:`draw`)."""
    name: str
    size: str
    doc: str
    low: float
    high: float

    def length(self, nq: int, nv: int, links: int | None = None) -> int:
        """Its number of entries; ``links`` (for params; pass it: a --mimic robot's links move
        with fewer velocities) defaults to one link per velocity, or nv - 5 with a free-flyer
        (nq = nv + 1: six velocities move one link)."""
        if links is None:
            links = nv - 5 if nq == nv + 1 else nv
        return {"nq": nq, "nv": nv, "params": 10 * links}[self.size]

    def draw(self, rng, nq: int, nv: int, count: int | None = None, nominal=None,
             links: int | None = None) -> np.ndarray:
        """Random values, one state (``count`` None) or ``count`` states. ``params`` with its
        ``nominal`` value: each body's theta scaled by 1 + U(low, high) plus a point mass of
        U(0, 1) kg at a point of U(-0.1, 0.1)^3 m (physically consistent, every entry moved).
        A free-flyer's configuration (q with nq = nv + 1): base position in U(-1, 1)^3 and a
        uniformly random unit quaternion (x, y, z, w), far from the identity as often as not."""
        n = self.length(nq, nv, links if nominal is None else len(nominal) // 10)
        if nominal is None or self.size != "params":
            x = rng.uniform(self.low, self.high, n if count is None else (count, n))
            if self.size == "nq" and nq == nv + 1:
                x[..., :3] = rng.uniform(-1.0, 1.0, x[..., :3].shape)
                quat = rng.normal(size=x[..., 3:7].shape)
                x[..., 3:7] = quat / np.linalg.norm(quat, axis=-1, keepdims=True)
            return x
        states = [_perturbed(rng, np.asarray(nominal, dtype=float), self.low, self.high)
                  for _ in range(1 if count is None else count)]
        return states[0] if count is None else np.array(states)


def _perturbed(rng, theta, low, high):
    out = theta.reshape(-1, 10) * rng.uniform(1 + low, 1 + high, (len(theta) // 10, 1))
    for body in out:
        m, r = rng.uniform(0.0, 1.0), rng.uniform(-0.1, 0.1, 3)
        J = m * (r @ r * np.eye(3) - np.outer(r, r))
        body += [m, *(m * r), J[0, 0], J[0, 1], J[1, 1], J[0, 2], J[1, 2], J[2, 2]]
    return out.reshape(-1)


ARGUMENTS = {a.name: a for a in (
    Argument("q", "nq", "joint positions", 0.0, 2 * np.pi),
    Argument("qd", "nv", "joint velocities", 0.0, 10.0),
    Argument("qdd", "nv", "joint accelerations", -10.0, 10.0),
    Argument("qd_r", "nv", "reference velocities (Slotine-Li)", 0.0, 10.0),
    Argument("qdd_r", "nv", "reference accelerations (Slotine-Li)", -10.0, 10.0),
    Argument("tau", "nv", "joint forces", -50.0, 50.0),
    Argument("params", "params", "inertial parameters theta, 10 per body in link_names order (the layout of "
             "parameters); --parametric builds only", 0.0, 0.5),
)}

#: the arguments that are a state (one entry per joint); ``params`` is the model's
STATE_ARGUMENTS = tuple(a for a, x in ARGUMENTS.items() if x.size != "params")


@dataclass(frozen=True)
class Output:
    """One output array of a generated function: its name (also the C parameter) and shape.
    ``embed``: how the full model's value becomes the reduced one of a robot with mimic joints
    (``--mimic``, :mod:`symgen.mimic`): ``"matrix"`` G^T X G, ``"vector"`` G^T x,
    ``"christoffel"`` sum G_ai G_bj G_ck X_abc, ``"rows"`` G^T X, ``"columns"`` X G, ``"none"``
    unchanged, ``"solve"`` the sweep has a reduced-system computation (``mimic.REDUCED``)."""
    name: str
    shape: Callable                           # (robot, SweepOptions) -> shape
    embed: str | None = None


@dataclass(frozen=True)
class Sweep:
    """One run of one algorithm, on numbers or symbols; ``run(robot, args, bk, options)``
    returns ``{output name: array}`` for every output it yields. ``args`` maps each of
    ``arguments`` to a vector (floats or symbols); ``options`` is a :class:`SweepOptions`.
    ``inertial``: its values depend on the inertias (in a parametric build, the sweep takes
    ``params`` too; see :func:`run_sweep`)."""
    name: str
    arguments: tuple[str, ...]
    run: Callable
    inertial: bool = True
    #: other runs yielding the same outputs (another coordinate choice): a ground-coordinate build
    #: prints whichever of ``run`` and these has the fewest operations for the robot at hand
    variants: tuple[Callable, ...] = ()


@dataclass(frozen=True)
class SweepOptions:
    """How a sweep runs: ``frame`` (ground: the generated code's coordinates, body: the paper's
    pseudo-code), ``gamma_method`` (algo2: Algorithm 2, partials: eq. (4), symbols only) and
    ``frames``, the link and joint frames of frame kinematics (None: the leaf links),
    ``gravity``, the linear gravity acceleration in root coordinates, and ``parametric``: the
    inertial parameters are an argument (``params``) of every sweep that depends on them,
    instead of the URDF's constants folded into the code."""
    frame: str = "ground"
    gamma_method: str = "algo2"
    frames: tuple[str, ...] | None = None
    gravity: tuple[float, float, float] = GRAVITY
    parametric: bool = False


FRAMES = ("ground", "body")
GAMMA_METHODS = ("algo2", "partials")


@dataclass(frozen=True)
class Quantity:
    """A generated function. ``pinocchio(oracle, state)`` gives Pinocchio's value of its output
    at a state (``{argument: vector}``), through a :class:`~symgen.pinocchio_oracle.PinOracle`;
    ``oracle_state(state)``, when given, is the state that comparison uses (Pinocchio's
    counterpart may cover only part of the arguments' space)."""
    key: str
    function: str
    arguments: tuple[str, ...]
    outputs: tuple[Output, ...]
    doc: str
    sweep: str
    pinocchio: Callable | None = None
    oracle_state: Callable | None = None
    #: the result inherits cond(M) (qdd, M^-1: a solve with M): two correct codes then differ by
    #: about cond(M) eps relative, and a floating base at random Euler angles makes cond(M) 1e6 and
    #: more, so comparisons allow tolerance(cond(M)) instead of a fixed 1e-9
    conditioned: bool = False
    #: gcc's SLP vectorizer on its parts (big robots). It packs scattered temps with shuffles:
    #: without it, the 20-DoF chain (C loop, -O3 -march=native, one run) C 2.40 -> 2.18 us,
    #: all_terms 2.92 -> 2.68, dtau 4.77 -> 3.88, dqdd 10.3 -> 9.9, M^-1 2.82 -> 2.72; but its
    #: regressor, whose per-pair dot products read consecutive temps, 3.21 -> 4.94, and Gamma
    #: 8.80 -> 8.94: those keep it
    slp: bool = False

    @property
    def output_names(self) -> tuple[str, ...]:
        return tuple(o.name for o in self.outputs)

    def arguments_for(self, opts: "SweepOptions") -> tuple[str, ...]:
        """The generated function's arguments under ``opts``: ``params`` last in a parametric
        build when the quantity depends on the inertias."""
        return self.arguments + (("params",) if opts.parametric and SWEEPS[self.sweep].inertial else ())


# ------------------------------------------------------------------------------------ sweeps

def in_body_frames(run, why: str):
    """The variant of a sweep's ``run`` that runs in body frames (the paper's pseudo-code as
    printed): ``why`` says where it wins. Body frames never move the root's quantities to the
    base, so the first joint's sin and cos, which M and C do not depend on, are not computed."""
    def variant(robot, args, bk, opts):
        return run(robot, args, bk, replace(opts, frame="body"))

    variant.__name__, variant.__doc__ = f"{run.__name__}_body", why
    return variant


def _crba(robot, args, bk, opts):
    from . import algorithms as alg

    return {"M": (alg.crba_ground if opts.frame == "ground" else alg.crba)(robot, args["q"], bk)}


def _algorithm1(robot, args, bk, opts):
    from . import algorithms as alg

    run = alg.coriolis_ground if opts.frame == "ground" else alg.coriolis
    M, Mdot, C = run(robot, args["q"], args["qd"], bk)
    return {"M": M, "Mdot": Mdot, "C": C}


def _algorithm2(robot, args, bk, opts):
    from . import algorithms as alg

    if opts.gamma_method == "partials":
        return {"Gamma": alg.christoffel_partials(robot, args["q"], bk, opts.frame)}
    return {"Gamma": (alg.christoffel_ground if opts.frame == "ground" else alg.christoffel)(robot, args["q"], bk)}


def _rnea(robot, args, bk, opts):
    from . import algorithms as alg

    return {"tau": alg.rnea(robot, args["q"], args["qd"], args["qdd"], bk, gravity=opts.gravity)}


def _gravity(robot, args, bk, opts):
    from . import algorithms as alg

    return {"g": (alg.gravity_ground if opts.frame == "ground" else alg.gravity)(robot, args["q"], bk, gravity=opts.gravity)}


def _regressor_sweep(robot, args, bk, opts):
    from . import algorithms as alg

    return {"Y": alg.regressor(robot, args["q"], args["qd"], args["qd_r"], args["qdd_r"], bk, gravity=opts.gravity)}


def _regressor_ground_sweep(robot, args, bk, opts):
    from . import algorithms as alg

    return {"Y": alg.regressor_ground(robot, args["q"], args["qd"], args["qd_r"], args["qdd_r"], bk,
                                      gravity=opts.gravity)}


def _forward_dynamics(robot, args, bk, opts):
    from . import algorithms as alg

    return {"qdd": alg.forward_dynamics(robot, args["q"], args["qd"], args["tau"], bk, opts.frame, gravity=opts.gravity)}


def _aba_ground(robot, args, bk, opts):
    """The articulated-body algorithm in ground coordinates (Pinocchio's aba): O(N) where the
    L^T D L route is O(N d^2); wins on long chains (20-DoF chain 12,405 against 22,952)."""
    from . import algorithms as alg

    return {"qdd": alg.aba_ground(robot, args["q"], args["qd"], args["tau"], bk, gravity=opts.gravity)}


def _aba_body(robot, args, bk, opts):
    """The articulated-body algorithm in body frames (Featherstone's Table 7.1 as printed): wins
    on panda and solo12 (2,651 against 4,106; 2,048 against 3,088)."""
    from . import algorithms as alg

    return {"qdd": alg.aba(robot, args["q"], args["qd"], args["tau"], bk, gravity=opts.gravity)}


def _frames(robot, args, bk, opts):
    from . import algorithms as alg

    run = alg.frame_kinematics_ground if opts.frame == "ground" else alg.frame_kinematics
    oMf, J = run(robot, args["q"], frames_of(robot, opts.frames), bk)
    return {"oMf": oMf, "J": J}


def _mass_matrix_inverse(robot, args, bk, opts):
    from . import algorithms as alg

    return {"Minv": alg.mass_matrix_inverse(robot, args["q"], bk, opts.frame)}


def _minverse_ground(robot, args, bk, opts):
    """The M^-1 dedicated algorithm (ABA without the affine terms; Pinocchio's computeMinverse),
    O(N^2) against O(N d^2) on a chain: 20-DoF chain 15,883 against 19,065."""
    from . import algorithms as alg

    return {"Minv": alg.minverse_ground(robot, args["q"], bk)}


def _minverse_dense(robot, args, bk, opts):
    """M^-1 as the identity's columns solved with the L^T D L factors of the ground CRBA's M in
    column loops, which the compiler vectorizes across the columns (see program.loop_cost)."""
    from .algorithms.forward_dynamics import mass_matrix_inverse_dense

    return {"Minv": mass_matrix_inverse_dense(robot, args["q"], bk)}


def _minverse_aba_dense(robot, args, bk, opts):
    """M^-1 by the dedicated algorithm's passes, the articulated inertias straight-line and
    the passes over the identity's columns in column loops (see program.loop_cost)."""
    from .algorithms.aba import minverse_dense

    return {"Minv": minverse_dense(robot, args["q"], bk)}


def _all_terms(robot, args, bk, opts):
    """Algorithm 1 and the gravity sweep on one backend: value numbering gives the kinematics and
    composite inertias both read one name each, so the fused call pays for them once."""
    values = _algorithm1(robot, args, bk, opts)
    return {"M": values["M"], "C": values["C"], "g": _gravity(robot, args, bk, opts)["g"]}


def _id_derivatives(robot, args, bk, opts):
    from . import algorithms as alg

    dq, dqd = alg.inverse_dynamics_derivatives(robot, args["q"], args["qd"], args["qdd"], bk, opts.frame, gravity=opts.gravity)
    return {"dtau_dq": dq, "dtau_dqd": dqd}


def _fd_derivatives(robot, args, bk, opts):
    from . import algorithms as alg

    dq, dqd = alg.forward_dynamics_derivatives(robot, args["q"], args["qd"], args["tau"], bk, opts.frame, gravity=opts.gravity)
    return {"dqdd_dq": dq, "dqdd_dqd": dqd}


def _fd_derivatives_dense(robot, args, bk, opts):
    """The ground sweep with the 2n solves -M^-1 dtau/du as one column loop over the 2n columns,
    vectorized by the compiler across columns (see program.loop_cost)."""
    from . import algorithms as alg

    dq, dqd = alg.forward_dynamics_derivatives(robot, args["q"], args["qd"], args["tau"], bk, "ground",
                                               gravity=opts.gravity, dense=True)
    return {"dqdd_dq": dq, "dqdd_dqd": dqd}


def _slotine_li(robot, args, bk, opts):
    from . import algorithms as alg

    return {"tau_sl": alg.slotine_li(robot, args["q"], args["qd"], args["qd_r"], args["qdd_r"], bk,
                                     gravity=opts.gravity)}


def _slotine_li_ground(robot, args, bk, opts):
    """A variant that loses on every robot measured (an O(N) sweep pays for the world inertias and
    their rates: ops, ground vs body, arm4 1172 vs 339, panda 3528 vs 1496, serial 10 5306 vs
    4130), traced so that a robot where it wins gets it."""
    from . import algorithms as alg

    return {"tau_sl": alg.slotine_li_ground(robot, args["q"], args["qd"], args["qd_r"], args["qdd_r"], bk,
                                            gravity=opts.gravity)}


SWEEPS = {s.name: s for s in (
    Sweep("crba", ("q",), _crba, variants=(in_body_frames(_crba, "ur5 818 operations against 901, panda 1,574 "
                                                                 "against 1,851; ground wins on chains (7,645 against 22,842)"),)),
    Sweep("algorithm1", ("q", "qd"), _algorithm1,
          variants=(in_body_frames(_algorithm1, "C: ur5 1,842 against 2,430, panda 3,798 against 4,407; ground "
                                                "wins on chains (16,533 against 46,342) and solo12"),)),
    Sweep("algorithm2", ("q",), _algorithm2),
    Sweep("rnea", ("q", "qd", "qdd"), _rnea),
    Sweep("gravity", ("q",), _gravity,
          variants=(in_body_frames(_gravity, "RNEA at rest never turns gravity about the first joint's axis when it is "
                                             "gravity's: panda 12 sin/cos against 14 (291 operations against 287)"),)),
    Sweep("slotine_li", ("q", "qd", "qd_r", "qdd_r"), _slotine_li, variants=(_slotine_li_ground,)),
    Sweep("regressor", ("q", "qd", "qd_r", "qdd_r"), _regressor_sweep, inertial=False,
          variants=(_regressor_ground_sweep,)),
    Sweep("forward_dynamics", ("q", "qd", "tau"), _forward_dynamics,
          variants=(in_body_frames(_forward_dynamics, "M and the bias in body frames, then L^T D L: fewer "
                                   "operations than the ground-coordinate CRBA on small robots (arm4 460 against 892), "
                                   "and leaf pivots D_i constant (fewer divisions)"), _aba_ground, _aba_body)),
    Sweep("mass_matrix_inverse", ("q",), _mass_matrix_inverse,
          variants=(in_body_frames(_mass_matrix_inverse, "L^T D L of the body-frame CRBA's M: fewest operations "
                                   "on small robots (panda 2,395, solo12 680, against 3,162 and 1,712)"), _minverse_ground,
                    _minverse_dense, _minverse_aba_dense)),
    Sweep("all_terms", ("q", "qd"), _all_terms,
          variants=(in_body_frames(_all_terms, "ur5 2,161 against 2,642, panda 4,240 against 4,882"),)),
    Sweep("id_derivatives", ("q", "qd", "qdd"), _id_derivatives),
    Sweep("fd_derivatives", ("q", "qd", "tau"), _fd_derivatives, variants=(_fd_derivatives_dense,)),
    Sweep("frames", ("q",), _frames, inertial=False),
)}


def run_sweep(sweep: Sweep, robot, args: dict, bk, opts: SweepOptions) -> dict:
    """``sweep.run`` with the robot's inertias those of ``args["params"]`` when it is given and
    the sweep depends on them (numbers: a reference with other parameters; symbols: a parametric
    build), else the URDF's."""
    from .kinematics import with_parameters

    if getattr(robot, "embedding", None) is not None:       # --mimic: reduced coordinates
        from .mimic import run_embedded

        return run_embedded(sweep, robot, args, bk, opts)
    theta = args.get("params") if sweep.inertial else None
    return sweep.run(with_parameters(robot, theta), args, bk, opts)


def frames_of(robot, names=None) -> tuple:
    """The :class:`~symgen.model.Frame` of each of ``names`` (links or joints, a link winning a
    shared name; repeats dropped), by default the leaf links (:attr:`Robot.leaf_links`, in tree
    order); an unknown or empty list is an OptionError."""
    names = robot.leaf_links if names is None else tuple(dict.fromkeys(names))
    unknown = [n for n in names if n not in robot.frame_names]
    if unknown or not names:
        valid = robot.frame_names
        raise OptionError(f"--frames: {f'unknown frame {unknown[0]!r}' if unknown else 'no frame given'} "
                          f"(robot {robot.name!r} has {len(valid)} link and joint frames, e.g. "
                          f"{', '.join(valid[:3] + robot.leaf_links[:2])})")
    return tuple(robot.frame(n) for n in names)


# -------------------------------------------------------------------------------- quantities

def _qd_r_is_qd(state):
    """qd_r = qd"""
    return {**state, "qd_r": state["qd"]}


def _square(robot, opts):
    return (robot.nv, robot.nv)


def _cube(robot, opts):
    return (robot.nv, robot.nv, robot.nv)


def _vector(robot, opts):
    return (robot.nv,)


def _regressor(robot, opts):
    return (robot.nv, 10 * len(robot.link_names))


def _placements(robot, opts):
    return (len(frames_of(robot, opts.frames)), 4, 4)


def _jacobians(robot, opts):
    return (len(frames_of(robot, opts.frames)), 6, robot.nv)


QUANTITIES = {x.key: x for x in (
    Quantity("M", "mass_matrix", ("q",), (Output("M", _square, embed="matrix"),),
             "Mass matrix M(q), (n, n), by CRBA.", "crba",
             pinocchio=lambda o, s: o.mass_matrix(s["q"])),
    Quantity("Mdot", "mass_matrix_dot", ("q", "qd"), (Output("Mdot", _square, embed="matrix"),),
             "dM/dt at (q, qd), (n, n), by Algorithm 1.", "algorithm1",
             pinocchio=lambda o, s: (lambda C: C + C.T)(o.coriolis(s["q"], s["qd"]))),       # eq. (2)
    Quantity("C", "coriolis_matrix", ("q", "qd"), (Output("C", _square, embed="matrix"),),
             "Christoffel-consistent Coriolis matrix C(q, qd), (n, n), by Algorithm 1.", "algorithm1",
             pinocchio=lambda o, s: o.coriolis(s["q"], s["qd"])),
    Quantity("Gamma", "christoffel", ("q",), (Output("Gamma", _cube, embed="christoffel"),),
             "Christoffel symbols Gamma[i, j, k], (n, n, n): C = sum_k Gamma[:, :, k] qd[k].", "algorithm2",
             pinocchio=lambda o, s: o.christoffel(s["q"]), slp=True),
    Quantity("tau", "inverse_dynamics", ("q", "qd", "qdd"), (Output("tau", _vector, embed="vector"),),
             "Inverse dynamics tau = M qdd + C qd + g, (n,), by RNEA.", "rnea",
             pinocchio=lambda o, s: o.inverse_dynamics(s["q"], s["qd"], s["qdd"])),
    Quantity("g", "gravity", ("q",), (Output("g", _vector, embed="vector"),),
             "Generalized gravity g(q) = tau(q, 0, 0), (n,), from composite gravity forces.", "gravity",
             pinocchio=lambda o, s: o.gravity(s["q"])),
    Quantity("tau_sl", "slotine_li", ("q", "qd", "qd_r", "qdd_r"), (Output("tau_sl", _vector, embed="vector"),),
             "Slotine-Li torque M(q) qdd_r + C(q, qd) qd_r + g(q), (n,), by the O(N) recursion "
             "(Wensing & Slotine, Algorithm 3), without forming M or C.", "slotine_li",
             pinocchio=lambda o, s: (o.mass_matrix(s["q"]) @ s["qdd_r"] + o.coriolis(s["q"], s["qd"]) @ s["qd_r"]
                                     + o.gravity(s["q"]))),
    Quantity("Y", "regressor", ("q", "qd", "qd_r", "qdd_r"), (Output("Y", _regressor, embed="rows"),),
             "Slotine-Li regressor Y, (n, 10 bodies): Y @ parameters = slotine_li(q, qd, qd_r, qdd_r); "
             "10 columns per body in link_names order, Pinocchio's toDynamicParameters order.", "regressor",
             pinocchio=lambda o, s: o.regressor(s["q"], s["qd"], s["qdd_r"]),
             oracle_state=_qd_r_is_qd, slp=True),       # computeJointTorqueRegressor has qd_r = qd
    Quantity("qdd", "forward_dynamics", ("q", "qd", "tau"), (Output("qdd", _vector, embed="solve"),),
             "Forward dynamics qdd = M^-1 (tau - C qd - g), (n,), by the articulated-body algorithm or "
             "the tree-sparse L^T D L factorization of M, whichever costs less for the robot.", "forward_dynamics",
             pinocchio=lambda o, s: o.forward_dynamics(s["q"], s["qd"], s["tau"]), conditioned=True),
    Quantity("Minv", "mass_matrix_inverse", ("q",), (Output("Minv", _square, embed="solve"),),
             "Inverse mass matrix M(q)^-1, (n, n), exactly symmetric, by the tree-sparse L^T D L "
             "factorization of M or the ABA-like dedicated algorithm, whichever costs less for the robot.",
             "mass_matrix_inverse",
             pinocchio=lambda o, s: o.mass_matrix_inverse(s["q"]), conditioned=True),
    Quantity("MCg", "all_terms", ("q", "qd"), (Output("M", _square, embed="matrix"), Output("C", _square, embed="matrix"), Output("g", _vector, embed="vector")),
             "(M, C, g) from one sweep: Algorithm 1's M and Christoffel-consistent C and the gravity "
             "vector, sharing the kinematics and composite inertias.", "all_terms",
             pinocchio=lambda o, s: (o.mass_matrix(s["q"]), o.coriolis(s["q"], s["qd"]), o.gravity(s["q"]))),
    Quantity("dtau", "inverse_dynamics_derivatives", ("q", "qd", "qdd"),
             (Output("dtau_dq", _square, embed="matrix"), Output("dtau_dqd", _square, embed="matrix")),
             "(dtau/dq, dtau/dqd) of inverse dynamics, each (n, n), by the analytical RNEA derivatives "
             "(Carpentier & Mansard) in ground coordinates.", "id_derivatives",
             pinocchio=lambda o, s: o.inverse_dynamics_derivatives(s["q"], s["qd"], s["qdd"])),
    Quantity("dqdd", "forward_dynamics_derivatives", ("q", "qd", "tau"),
             (Output("dqdd_dq", _square, embed="solve"), Output("dqdd_dqd", _square, embed="solve")),
             "(dqdd/dq, dqdd/dqd) of forward dynamics, each (n, n): -M^-1 (dtau/dq, dtau/dqd) at "
             "qdd = FD(q, qd, tau), through the tree-sparse L^T D L factors.", "fd_derivatives",
             pinocchio=lambda o, s: o.forward_dynamics_derivatives(s["q"], s["qd"], s["tau"]), conditioned=True),
    Quantity("oMf", "frame_placement", ("q",), (Output("oMf", _placements, embed="none"),),
             "Placement of each frame (see frames), (frames, 4, 4): world <- frame homogeneous "
             "transform.", "frames",
             pinocchio=lambda o, s: o.frame_placement(s["q"])),
    Quantity("J", "frame_jacobian", ("q",), (Output("J", _jacobians, embed="columns"),),
             "Jacobian of each frame (see frames), (frames, 6, n): rows [linear; angular], "
             "LOCAL_WORLD_ALIGNED (origin at the frame, world axes).", "frames",
             pinocchio=lambda o, s: o.frame_jacobian(s["q"])),
)}

#: the quantities a build makes by default, in the order of the generated files
DEFAULT = tuple(QUANTITIES)

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


def check_options(opts: SweepOptions) -> SweepOptions:
    if opts.frame not in FRAMES:
        raise OptionError(f"--frame: unknown {opts.frame!r}; expected one of {', '.join(FRAMES)}")
    if opts.gamma_method not in GAMMA_METHODS:
        raise OptionError(f"--gamma-method: unknown {opts.gamma_method!r}; expected one of {', '.join(GAMMA_METHODS)}")
    g = opts.gravity
    if (not isinstance(g, tuple) or len(g) != 3
            or not all(isinstance(x, float) and np.isfinite(x) for x in g)):
        raise OptionError(f"--gravity: {g!r} is not three finite floats")
    return opts


def parse_gravity(text: str) -> tuple[float, float, float]:
    """``--gravity``: three comma-separated finite numbers (the linear gravity acceleration in the
    root frame, m/s^2), e.g. ``0,0,-9.81``; anything else is an OptionError."""
    words = [w.strip() for w in str(text).split(",")]
    try:
        values = tuple(float(w) for w in words)
    except ValueError:
        values = ()
    if len(values) != 3 or not all(np.isfinite(x) for x in values):
        raise OptionError(f"--gravity: expected three comma-separated numbers such as 0,0,-9.81, got {text!r}")
    return tuple(x + 0.0 for x in values)                # -0.0 -> 0.0: one text per gravity


def gravity_text(gravity) -> str:
    """``0,0,-9.81``: a gravity as ``--gravity`` takes it (shortest round-trip reprs)."""
    return ",".join(repr(float(x)).removesuffix(".0") if float(x).is_integer() else repr(float(x)) for x in gravity)


def evaluate(robot, key: str, state: dict, opts: SweepOptions = SweepOptions(frame="body")):
    """The numeric value of quantity ``key`` at ``state`` (``{argument: vector}``): its sweep run on
    numbers (the same algorithm code the symbolic run uses; body frame by default, so that it is
    an independent reference for the ground-frame generated code); a ``params`` entry of ``state``
    (theta, 10 per body) replaces the URDF's inertias. One output: the array; several: a tuple."""
    from .backend import NUMERIC

    x = QUANTITIES[key]
    sweep = SWEEPS[x.sweep]
    args = {a: robot.check_state(a, state[a]) for a in sweep.arguments}
    if state.get("params") is not None and sweep.inertial:
        args["params"] = np.asarray(state["params"], dtype=float)
    values = run_sweep(sweep, robot, args, NUMERIC, check_options(opts))
    out = tuple(values[o.name] for o in x.outputs)
    return out[0] if len(out) == 1 else out


def tolerance(x: Quantity, M=None, base: float = 1e-9) -> float:
    """The relative tolerance of comparisons of ``x`` at a state with mass matrix ``M``:
    ``base``, or for a quantity that inherits cond(M), 100 eps cond(M) if that is larger."""
    if not x.conditioned or M is None:
        return base
    return max(base, 100 * np.finfo(float).eps * float(np.linalg.cond(M)))


def random_state(rng, nq: int, nv: int, names=STATE_ARGUMENTS, parameters=None) -> dict:
    """One random state ``{argument: vector}`` drawn as verify and bench draw them; with the
    nominal ``parameters``, also ``params`` (drawn around them)."""
    state = {a: ARGUMENTS[a].draw(rng, nq, nv) for a in names}
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
