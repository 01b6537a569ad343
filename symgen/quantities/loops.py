"""The loop family (issue #24, item 2): what a simulator of a mechanism with nonlinear loops needs
beside its dynamics, generated for every model with URDF+ couplings or loops (:mod:`symgen.closed`,
:mod:`symgen.couplings`: the robot's ``loop_residual``, ``loop_jacobian``, ``spanning_velocity``;
a build of one adds them to its default functions; with couplings only phi has no rows, q is
unchanged by solve_loops, and there is no loop_jacobian):

    loop_residual(q)          phi(q), the loops' closure rows: 0 on a consistent configuration
    loop_jacobian(q)          K = d phi / dq (rows, spanning nq; a free-flyer's 7 columns are 0),
                              for a Newton step or a projection
    spanning_velocity(q, v)   G(q) v: the spanning tree's speeds (nv of the tree) of the
                              independent speeds v

and, from the first two, the package's ``solve_loops(q)`` (NumPy, hand-written in
``templates/loops_solve_py.j2``: Newton on the dependent coordinates with step halving, a clear
error when it does not converge). q holds the spanning tree's coordinates, v the independent
speeds (GRBDA's convention). No registry oracle (the loop functions exist for models with
couplings or loops only, where the registry-wide comparisons with Pinocchio do not reach them, and
phi and K have no Pinocchio counterpart in symgen's row basis, the loop rows being picked
numerically): tests/test_loops.py checks them by definition (K against a difference of phi,
phi(solve_loops(q)) = 0, K G v = 0), G v against Pinocchio's G from its frame Jacobians
(``spanning_velocity`` of :class:`symgen.oracle_loops.LoopPinOracle`; of
:class:`symgen.pinocchio_oracle.EmbeddedPinOracle` for couplings, tests/test_couplings.py).
"""
from __future__ import annotations

from ..errors import OptionError
from .base import Output, Quantity, Sweep


def _constrained(robot):
    """``robot`` itself when it has the loop functions (a URDF+ or MJCF model with couplings or
    loops: ``robot.loops``), else an OptionError."""
    if not robot.loops:
        raise OptionError(f"--quantities: loop_residual, loop_jacobian and spanning_velocity are for models with "
                          f"URDF+ couplings or loops; robot {robot.name!r} has none")
    return robot


def _residual(robot, args, bk, opts):
    robot = _constrained(robot)
    return {"phi": robot.loop_residual(args["q"], bk), "K": robot.loop_jacobian(args["q"], bk)}


def _spanning(robot, args, bk, opts):
    return {"qs": _constrained(robot).spanning_velocity(args["q"], args["qd"], bk)}


SWEEPS = (
    Sweep("loop_closure", ("q",), _residual, inertial=False),
    Sweep("spanning_velocity", ("q", "qd"), _spanning, inertial=False),
)

#: the sweeps that run on the closed mechanism itself (not on its spanning tree, projected)
OWN_SWEEPS = frozenset(s.name for s in SWEEPS)

QUANTITIES = (
    Quantity("phi", "loop_residual", ("q",), (Output("phi", lambda robot, opts: (robot.loop_rows,), embed="none"),),
             "the loops' closure rows phi(q): 0 on a consistent configuration", "loop_closure", default=False),
    Quantity("Kl", "loop_jacobian", ("q",), (Output("K", lambda robot, opts: (robot.loop_rows, robot.nq), embed="none"),),
             "K = d phi / dq over the spanning coordinates", "loop_closure", default=False),
    Quantity("qs", "spanning_velocity", ("q", "qd"), (Output("qs", lambda robot, opts: (robot.full.n,), embed="none"),),
             "G(q) v: the spanning tree's joint speeds", "spanning_velocity", default=False),
)

#: what a build of a mechanism with loops adds to its functions
LOOP_KEYS = tuple(x.key for x in QUANTITIES)


def loop_keys(robot) -> tuple[str, ...]:
    """The loop functions ``robot`` has (what its default build adds): all three with loops,
    loop_residual (no rows) and spanning_velocity with couplings only (solve_loops, hand-written,
    comes with loop_residual), none on a tree (``robot.loops`` empty)."""
    if not robot.loops:
        return ()
    return LOOP_KEYS if robot.loop_rows else tuple(k for k in LOOP_KEYS if k != "Kl")
