"""symgen: rigid-body dynamics as specialized, unrolled code — and as numbers.

The numeric API evaluates the algorithms directly (the reference the generated code is checked
against)::

    robot = symgen.load_urdf("panda.urdf")
    M, Mdot, C = symgen.coriolis(robot, q, qd)         # Algorithm 1
    Gamma = symgen.christoffel(robot, q)               # Algorithm 2, Gamma[i, j, k]
    tau = symgen.inverse_dynamics(robot, q, qd, qdd)   # RNEA, gravity 9.81 along -z
"""
from __future__ import annotations

from . import algorithms as _alg
from .backend import NUMERIC
from .errors import BuildError, ModelError, OptionError, SymgenError, SymgenWarning, URDFError
from .model import GRAVITY, Body, Inertia, Robot

__version__ = "0.1.0"


def load_urdf(path, floating_base: bool = False, snap_tol: float | None = None,
              strict_inertia: bool = False, mimic: bool = False, open_loops: bool = False) -> Robot:
    """Read a URDF file into a :class:`Robot` (see :mod:`symgen.urdf`); ``mimic``: its mimic
    joints embedded, reduced coordinates (:mod:`symgen.mimic`); URDF+ couplings are embedded
    (:mod:`symgen.couplings`), loops refused unless ``open_loops``."""
    from .urdf import load_urdf as _load

    kwargs = {} if snap_tol is None else {"snap_tol": snap_tol}
    return _load(path, floating_base=floating_base, strict_inertia=strict_inertia, mimic=mimic,
                 open_loops=open_loops, **kwargs)


def load_robot(path, floating_base: bool = False, mimic: bool = False, **kwargs) -> Robot:
    """Read a URDF or an MJCF file (told apart by its root element; MJCF through MuJoCo's own
    compiler, the mjcf extra: see :mod:`symgen.mjcf`) into a :class:`Robot`."""
    from .mjcf import load_robot as _load

    return _load(path, floating_base=floating_base, mimic=mimic, **kwargs)


def _embedded(robot, key, state, gravity=GRAVITY):
    """A quantity of a robot with mimic joints embedded (through the registry's embedding)."""
    from . import quantities as Q

    return Q.evaluate(robot, key, state, Q.SweepOptions(frame="body", gravity=tuple(float(x) for x in gravity)))


def mass_matrix(robot: Robot, q):
    """M(q) by the composite-rigid-body algorithm."""
    if getattr(robot, "embedding", None) is not None:
        return _embedded(robot, "M", {"q": q})
    return _alg.crba(robot, robot.check_state("q", q), NUMERIC)


def coriolis(robot: Robot, q, qd):
    """(M, Mdot, C) at (q, qd) by Algorithm 1; C is Christoffel-consistent."""
    if getattr(robot, "embedding", None) is not None:
        return tuple(_embedded(robot, k, {"q": q, "qd": qd}) for k in ("M", "Mdot", "C"))
    return _alg.coriolis(robot, robot.check_state("q", q), robot.check_state("qd", qd), NUMERIC)


def coriolis_matrix(robot: Robot, q, qd):
    """The Christoffel-consistent Coriolis matrix C(q, qd) (Algorithm 1)."""
    return coriolis(robot, q, qd)[2]


def mass_matrix_dot(robot: Robot, q, qd):
    """dM/dt along qd (Algorithm 1)."""
    return coriolis(robot, q, qd)[1]


def christoffel(robot: Robot, q):
    """All Christoffel symbols, Gamma[i, j, k] (Algorithm 2): C = sum_k Gamma[:, :, k] qd_k."""
    if getattr(robot, "embedding", None) is not None:
        return _embedded(robot, "Gamma", {"q": q})
    return _alg.christoffel(robot, robot.check_state("q", q), NUMERIC)


def inverse_dynamics(robot: Robot, q, qd, qdd, gravity=GRAVITY):
    """tau = M qdd + C qd + g by RNEA; ``gravity`` is the linear acceleration in root coordinates."""
    if getattr(robot, "embedding", None) is not None:
        return _embedded(robot, "tau", {"q": q, "qd": qd, "qdd": qdd}, gravity)
    return _alg.rnea(robot, robot.check_state("q", q), robot.check_state("qd", qd),
                     robot.check_state("qdd", qdd), NUMERIC, gravity=gravity)


def __getattr__(name):
    """``symgen.robots`` (the synthetic systems) without ``import symgen.robots`` first; imported
    on first use, so ``import symgen`` stays light."""
    if name == "robots":
        import importlib

        return importlib.import_module(f"{__name__}.robots")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "BuildError", "Body", "GRAVITY", "Inertia", "ModelError", "OptionError", "Robot", "SymgenError",
    "URDFError", "christoffel", "coriolis", "coriolis_matrix", "inverse_dynamics", "load_robot", "load_urdf",
    "mass_matrix", "mass_matrix_dot", "robots", "__version__",
]
