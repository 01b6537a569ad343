"""The loop family (issue #24, item 2): what a simulator of a mechanism with nonlinear loops needs
beside its dynamics, generated for such robots only (:mod:`symgen.closed`; a build of one adds
them to its default functions):

    loop_residual(q)          phi(q), the loops' closure rows: 0 on a consistent configuration
    loop_jacobian(q)          K = d phi / dq (rows, spanning nq; a free-flyer's 7 columns are 0),
                              for a Newton step or a projection
    spanning_velocity(q, v)   G(q) v: the spanning tree's speeds (nv of the tree) of the
                              independent speeds v

and, from the first two, the package's ``solve_loops(q)`` (NumPy, hand-written in
``templates/loops_solve_py.j2``: Newton on the dependent coordinates with step halving, a clear
error when it does not converge). q holds the spanning tree's coordinates, v the independent
speeds (GRBDA's convention). No registry oracle (the loop functions exist for loop robots only,
and phi and K have no Pinocchio counterpart in symgen's row basis, the loop rows being picked
numerically): tests/test_loops.py checks them by definition (K against a difference of phi,
phi(solve_loops(q)) = 0, K G v = 0) and G v against Pinocchio's G from its frame Jacobians
(:class:`symgen.oracle_loops.LoopPinOracle`).
"""
from __future__ import annotations

from ..errors import OptionError
from .base import Output, Quantity, Sweep


def _system(robot):
    system = getattr(robot, "system", None)
    if system is None:
        raise OptionError(f"--quantities: loop_residual, loop_jacobian and spanning_velocity are for mechanisms "
                          f"with loops (URDF+ <loop>); robot {robot.name!r} has none")
    return system


def _residual(robot, args, bk, opts):
    system = _system(robot)
    phi, K, _ = system._stack(args["q"], None, bk)
    return {"phi": phi, "K": system.configuration_jacobian(K, bk)}


def _spanning(robot, args, bk, opts):
    G, _ = _system(robot).embedding(args["q"], None, bk)
    return {"qs": G @ args["qd"]}


SWEEPS = (
    Sweep("loop_closure", ("q",), _residual, inertial=False),
    Sweep("spanning_velocity", ("q", "qd"), _spanning, inertial=False),
)

#: the sweeps that run on the closed mechanism itself (not on its spanning tree, projected)
OWN_SWEEPS = frozenset(s.name for s in SWEEPS)

QUANTITIES = (
    Quantity("phi", "loop_residual", ("q",), (Output("phi", lambda robot, opts: (robot.system.rows,), embed="none"),),
             "the loops' closure rows phi(q): 0 on a consistent configuration", "loop_closure", default=False),
    Quantity("Kl", "loop_jacobian", ("q",), (Output("K", lambda robot, opts: (robot.system.rows, robot.nq), embed="none"),),
             "K = d phi / dq over the spanning coordinates", "loop_closure", default=False),
    Quantity("qs", "spanning_velocity", ("q", "qd"), (Output("qs", lambda robot, opts: (robot.full.n,), embed="none"),),
             "G(q) v: the spanning tree's joint speeds", "spanning_velocity", default=False),
)

#: what a build of a mechanism with loops adds to its functions
LOOP_KEYS = tuple(x.key for x in QUANTITIES)
