"""The registry's vocabulary: what a generated function takes (:class:`Argument`), what it
returns (:class:`Output`), the algorithm run that yields it (:class:`Sweep`, run under
:class:`SweepOptions`), the function itself (:class:`Quantity`) and Pinocchio's way to the same
value (:class:`PinCall`, for ``symgen bench``). The tables themselves are in :mod:`.sweeps`
(sweeps), :mod:`.core` (quantities) and the package (assembled, with the operations on them).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..algorithms.operational_space import DAMPING
from ..errors import OptionError
from ..model import GRAVITY


@dataclass(frozen=True)
class PinCall:
    """Pinocchio's way to a quantity: the Python binding's function (the first of ``python`` it
    has), its arguments after (model, data) (``zero``: a zero vector), and the C++ harness's
    timings of it: ``{harness name: (method, C++ statement)}`` — the statement runs on state
    ``i`` of the vectors ``qs, vs, as, ts`` (q, qd, qdd, tau) and adds an entry of its result to
    ``sink`` so that the compiler keeps it. The rival is Pinocchio's function for the same
    quantity; where it has none (Slotine-Li), the nearest one, named in ``note``."""
    python: tuple[str, ...]
    arguments: tuple[str, ...]
    cpp: dict
    note: str = ""
    #: the C++ statement with Pinocchio's external forces (``fext``, one random pin::Force per
    #: joint), timed instead of ``cpp``'s for a package built with --external-forces
    fext: str = ""


@dataclass(frozen=True)
class Argument:
    """An input of generated functions: its size (``"nq"``, ``"nv"``, ``"params"``: 10 per
    body, or ``"forces"``: 6 per body) and the range that ``symgen verify`` and ``symgen bench`` draw it from (the paper's
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
        return {"nq": nq, "nv": nv, "params": 10 * links, "forces": 6 * links}[self.size]

    def draw(self, rng, nq: int, nv: int, count: int | None = None, nominal=None,
             links: int | None = None, layout=None) -> np.ndarray:
        """Random values, one state (``count`` None) or ``count`` states. ``params`` with its
        ``nominal`` value: each body's theta scaled by 1 + U(low, high) plus a point mass of
        U(0, 1) kg at a point of U(-0.1, 0.1)^3 m (physically consistent, every entry moved).
        A free-flyer's configuration (q with nq = nv + 1): base position in U(-1, 1)^3 and a
        uniformly random unit quaternion (x, y, z, w), far from the identity as often as not.
        ``layout``: a package's ``joint_models`` (name, kind, idx_q, nq, idx_v, nv per joint), which
        places every free-flyer's, spherical joint's (a unit quaternion) and planar joint's (x, y in
        U(-1, 1), cos and sin of an angle) coordinates; without it, nq = nv + 1 means a root
        free-flyer."""
        n = self.length(nq, nv, links if nominal is None else len(nominal) // 10)
        if nominal is None or self.size != "params":
            x = rng.uniform(self.low, self.high, n if count is None else (count, n))
            if self.size == "nq" and layout is not None:
                for _, kind, k, _, _, _ in layout:
                    if kind == "planar":
                        x[..., k:k + 2] = rng.uniform(-1.0, 1.0, x[..., k:k + 2].shape)
                        t = rng.uniform(-np.pi, np.pi, x[..., k].shape)
                        x[..., k + 2], x[..., k + 3] = np.cos(t), np.sin(t)
                    elif kind in ("freeflyer", "spherical"):
                        if kind == "freeflyer":
                            x[..., k:k + 3] = rng.uniform(-1.0, 1.0, x[..., k:k + 3].shape)
                            k += 3
                        quat = rng.normal(size=x[..., k:k + 4].shape)
                        x[..., k:k + 4] = quat / np.linalg.norm(quat, axis=-1, keepdims=True)
            elif self.size == "nq" and nq == nv + 1:
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
    Argument("f_ext", "forces", "external spatial forces, one per body in link_names order, each [force; torque] "
             "in the body's frame (Pinocchio's joint frame and pin.Force layout); --external-forces builds only",
             -10.0, 10.0),
    Argument("params", "params", "inertial parameters theta, 10 per body in link_names order (the layout of "
             "parameters); --parametric builds only", 0.0, 0.5),
)}

#: the arguments that are a state (one entry per joint); ``params`` is the model's, ``f_ext`` the
#: world's on the bodies (entries per body, both)
STATE_ARGUMENTS = tuple(a for a, x in ARGUMENTS.items() if x.size not in ("params", "forces"))


@dataclass(frozen=True)
class Output:
    """One output array of a generated function: its name (also the C parameter) and shape.
    ``embed``: how the full model's value becomes the reduced one of a robot with mimic joints
    (``--mimic``, :mod:`symgen.mimic`): ``"matrix"`` G^T X G, ``"vector"`` G^T x,
    ``"christoffel"`` sum G_ai G_bj G_ck X_abc, ``"rows"`` G^T X, ``"columns"`` X G, ``"none"``
    unchanged, ``"solve"`` the sweep has a reduced-system computation (``mimic.REDUCED``)."""
    name: str
    shape: Callable                           # (robot, SweepOptions) -> shape; its ``dims``, when set, the
                                              # same symbolically (ints and "n", "F", "p", "m", "C", ...)
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
    #: it takes ``f_ext`` in a build with external forces (``SweepOptions.external_forces``)
    external: bool = False

    def arguments_for(self, opts: "SweepOptions") -> tuple[str, ...]:
        """What its run reads under ``opts`` (as :meth:`Quantity.arguments_for`)."""
        return (self.arguments + (("f_ext",) if opts.external_forces and self.external else ())
                + (("params",) if opts.parametric and self.inertial else ()))


@dataclass(frozen=True)
class SweepOptions:
    """How a sweep runs: ``frame`` (ground: the generated code's coordinates, body: the paper's
    pseudo-code), ``gamma_method`` (algo2: Algorithm 2, partials: eq. (4), symbols only, vid:
    seed 002's Sec. VI-D, C* = 1/2 (dtau/dv + M K) column by column) and
    ``frames``, the link and joint frames of frame kinematics (None: the leaf links),
    ``gravity``, the linear gravity acceleration in root coordinates, and ``parametric``: the
    inertial parameters are an argument (``params``) of every sweep that depends on them,
    instead of the URDF's constants folded into the code; ``contacts``: see
    :mod:`.contact`."""
    frame: str = "ground"
    gamma_method: str = "algo2"
    frames: tuple[str, ...] | None = None
    gravity: tuple[float, float, float] = GRAVITY
    parametric: bool = False
    #: the contact frames of the contact functions (``--contacts``): ((frame name, "3d" or "6d"),
    #: ...), each a frame of ``frames``; empty: every frame of ``frames`` as a point contact
    contacts: tuple = ()
    #: forward dynamics and its derivatives include the passive forces tau_p(q, qd) (``--passive``,
    #: :mod:`symgen.passive`): qdd = M^-1 (tau + tau_p - C qd - g)
    passive: bool = False
    #: inverse and forward dynamics, their derivatives and the contact solve take the external
    #: forces ``f_ext`` (``--external-forces``, :mod:`symgen.algorithms.external_forces`)
    external_forces: bool = False
    #: eps of the operational-space inertia Lambda = (J M^-1 J^T + eps 1)^-1 (``--opspace-damping``,
    #: :mod:`symgen.algorithms.operational_space`: the singular-configuration policy)
    opspace_damping: float = DAMPING
    #: the floating base's generalized speeds (``--base-velocity``, :mod:`symgen.base_velocity`):
    #: body (Pinocchio's), mixed or inertial (iDynTree's); every sweep's inputs and outputs in them
    base_velocity: str = "body"


FRAMES = ("ground", "body")
GAMMA_METHODS = ("algo2", "partials", "vid")


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
    #: how ``symgen bench`` times Pinocchio's counterpart (None: it has none)
    pin_call: PinCall | None = None
    #: its sweep's ``inertial`` and ``external`` (set by the registry when it assembles the tables)
    inertial: bool = True
    external: bool = False
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
    #: the JAX module compiles it fused (symgen/codegen/jax_target.py: XLA's fusion on, each shared
    #: temp computed once), up to jax_target.FUSE_MAX_OPS operations: what batches call most (M,
    #: ID, the frame Jacobians), 2-4x faster in a batch for 2-2.5x their batch compile
    jax_fused: bool = False
    #: part of a default build (``symgen build`` without ``--quantities``); False for functions
    #: built on request only, whose code would slow every default build more than they serve it
    default: bool = True
    #: the result inherits cond(Lambda) of its frames' tasks too (the operational-space functions:
    #: a solve with J M^-1 J^T, whose damped inverse is 1/eps large at a singular configuration):
    #: comparisons allow tolerance(cond(M) cond(Lambda)), given Lambda at the state
    task: bool = False

    @property
    def output_names(self) -> tuple[str, ...]:
        return tuple(o.name for o in self.outputs)

    def arguments_for(self, opts: "SweepOptions") -> tuple[str, ...]:
        """The generated function's arguments under ``opts``: ``f_ext`` after the state in a build
        with external forces when the quantity takes them, ``params`` last in a parametric build
        when the quantity depends on the inertias."""
        return (self.arguments + (("f_ext",) if opts.external_forces and self.external else ())
                + (("params",) if opts.parametric and self.inertial else ()))


def check_options(opts: SweepOptions) -> SweepOptions:
    if opts.frame not in FRAMES:
        raise OptionError(f"--frame: unknown {opts.frame!r}; expected one of {', '.join(FRAMES)}")
    if opts.gamma_method not in GAMMA_METHODS:
        raise OptionError(f"--gamma-method: unknown {opts.gamma_method!r}; expected one of {', '.join(GAMMA_METHODS)}")
    eps = opts.opspace_damping
    if not isinstance(eps, float) or not np.isfinite(eps) or eps < 0:
        raise OptionError(f"--opspace-damping: {eps!r} is not a finite number >= 0")
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

