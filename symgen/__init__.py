"""symgen: rigid-body dynamics as specialized, unrolled code — and as numbers.

The numeric API evaluates the algorithms on numbers through the registry (``symgen.quantities``:
the sweeps a generated package is traced from, so for every robot kind, a tree, a free-flyer,
``--mimic``, couplings, loops or MJCF, it gives what the package of that robot gives)::

    robot = symgen.load_urdf("panda.urdf")
    M, Mdot, C = symgen.coriolis(robot, q, qd)         # Algorithm 1
    Gamma = symgen.christoffel(robot, q)               # Algorithm 2, Gamma[i, j, k]
    tau = symgen.inverse_dynamics(robot, q, qd, qdd)   # RNEA, gravity 9.81 along -z
"""
from __future__ import annotations

from .errors import BuildError, ModelError, OptionError, SymgenError, SymgenWarning, URDFError
from .model import GRAVITY, Body, Inertia, Robot

__version__ = "0.1.0"


def load_urdf(path, floating_base: bool = False, snap_tol: float | None = None,
              strict_inertia: bool = False, mimic: bool = False, open_loops: bool = False, trees=()) -> Robot:
    """Read a URDF file into a :class:`Robot` (see :mod:`symgen.urdf`); ``mimic``: its mimic
    joints embedded, reduced coordinates (:mod:`symgen.mimic`); URDF+ couplings are embedded
    (:mod:`symgen.couplings`), loops refused unless ``open_loops``; ``trees``: the child links of
    the root link whose moving trees are kept (:mod:`symgen.scenes`)."""
    from .urdf import load_urdf as _load

    kwargs = {} if snap_tol is None else {"snap_tol": snap_tol}
    return _load(path, floating_base=floating_base, strict_inertia=strict_inertia, mimic=mimic,
                 open_loops=open_loops, trees=tuple(trees), **kwargs)


def load_robot(path, floating_base: bool = False, mimic: bool = False, **kwargs) -> Robot:
    """Read a URDF or an MJCF file (told apart by its root element; MJCF through MuJoCo's own
    compiler, the mjcf extra: see :mod:`symgen.mjcf`) into a :class:`Robot`."""
    from .mjcf import load_robot as _load

    return _load(path, floating_base=floating_base, mimic=mimic, **kwargs)


def _evaluate(robot, keys, state, gravity=GRAVITY, f_ext=None):
    """Quantities ``keys`` of ``robot`` at ``state`` through the registry (:func:`symgen.quantities.
    evaluate_all`, body frames): the sweeps the generated package is traced from, with the same
    embedding for every robot kind (a tree, a free-flyer, ``--mimic``, couplings, loops, MJCF), so
    the numeric API and a package of the same robot agree."""
    from . import quantities as Q

    opts = Q.SweepOptions(frame="body", gravity=tuple(float(x) for x in gravity), external_forces=f_ext is not None)
    if f_ext is not None:
        from .passive import constrained

        if constrained(robot):
            raise OptionError(f"f_ext: not supported for robot {robot.name!r} with --mimic, URDF+ couplings or loops yet")
        state = {**state, "f_ext": f_ext}
    return Q.evaluate_all(robot, keys, state, opts)


def mass_matrix(robot: Robot, q):
    """M(q) by the composite-rigid-body algorithm (a constrained robot's M̄ = GᵀMG)."""
    return _evaluate(robot, ("M",), {"q": q})[0]


def coriolis(robot: Robot, q, qd):
    """(M, Mdot, C) at (q, qd); Mdot and C by Algorithm 1, C Christoffel-consistent."""
    return _evaluate(robot, ("M", "Mdot", "C"), {"q": q, "qd": qd})


def coriolis_matrix(robot: Robot, q, qd):
    """The Christoffel-consistent Coriolis matrix C(q, qd) (Algorithm 1)."""
    return _evaluate(robot, ("C",), {"q": q, "qd": qd})[0]


def mass_matrix_dot(robot: Robot, q, qd):
    """dM/dt along qd (Algorithm 1)."""
    return _evaluate(robot, ("Mdot",), {"q": q, "qd": qd})[0]


def christoffel(robot: Robot, q):
    """All Christoffel symbols, Gamma[i, j, k] (Algorithm 2): C = sum_k Gamma[:, :, k] qd_k."""
    return _evaluate(robot, ("Gamma",), {"q": q})[0]


def inverse_dynamics(robot: Robot, q, qd, qdd, gravity=GRAVITY, f_ext=None):
    """tau = M qdd + C qd + g by RNEA; ``gravity`` is the linear acceleration in root coordinates;
    ``f_ext``: the forces the world applies to the links, (len(robot.link_names), 6), each
    [force; torque] in the link's frame (Pinocchio's fext), which add -sum_k J_k^T f_k."""
    return _evaluate(robot, ("tau",), {"q": q, "qd": qd, "qdd": qdd}, gravity, f_ext)[0]


def forward_dynamics(robot: Robot, q, qd, tau, gravity=GRAVITY, f_ext=None):
    """qdd = M^-1 (tau - C qd - g (+ sum_k J_k^T f_k with ``f_ext``, as :func:`inverse_dynamics`))."""
    return _evaluate(robot, ("qdd",), {"q": q, "qd": qd, "tau": tau}, gravity, f_ext)[0]


def __getattr__(name):
    """``symgen.robots`` (the synthetic systems) without ``import symgen.robots`` first; imported
    on first use, so ``import symgen`` stays light."""
    if name == "robots":
        import importlib

        return importlib.import_module(f"{__name__}.robots")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "BuildError", "Body", "GRAVITY", "Inertia", "ModelError", "OptionError", "Robot", "SymgenError",
    "URDFError", "christoffel", "coriolis", "coriolis_matrix", "forward_dynamics", "inverse_dynamics", "load_robot", "load_urdf",
    "mass_matrix", "mass_matrix_dot", "robots", "__version__",
]
