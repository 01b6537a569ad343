"""A robot with nonlinear loops seen by the registry: q the spanning tree's coordinates, v the
independent speeds, every sweep run on the spanning tree at (q, G(q) v, G a + Ġ v) and its outputs
projected by G(q) (:mod:`symgen.loops` holds G, Ġ and the equations; this module the wiring).

Projections (the rule each :class:`~symgen.quantities.Output` declares, as for ``--mimic``, plus
the terms Ġ ≠ 0 adds): ``matrix`` GᵀXG, except C̄ = GᵀCG + GᵀMĠ and Ṁ̄ = GᵀṀG + ĠᵀMG + GᵀMĠ;
``christoffel`` Γ contracted with G on its three indices plus GᵀMĠ(e_k) in slice k; ``vector``
Gᵀx; ``rows`` GᵀY; ``columns`` XG; ``none`` the spanning tree's value at the expanded state;
``solve`` (forward dynamics, M⁻¹) a dense L^T D L of M̄ with the bias GᵀRNEA(q, Gv, Ġv).
Quantities whose embedding needs more (the derivatives, Cᵀv and its regressor, the centroidal
bias, J̇, the contact derivatives' terms) are not generated for loops yet: :data:`UNSUPPORTED`.
"""
from __future__ import annotations

import numpy as np

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .backend import is_zero
from .constrained import ConstrainedSystem
from .errors import ModelError, OptionError

if TYPE_CHECKING:
    from .loops import LoopSystem
    from .model import Robot

#: quantity keys not generated for mechanisms with loops yet (their embedding needs Ġ terms or
#: derivatives of G that are not written)
UNSUPPORTED = frozenset({"dtau", "dqdd", "CTv", "Y_c", "dhg", "af", "dJ", "contact_partials"})
#: likewise the drift and J_dot in the other references and the frame derivatives (d/dq needs dG/dq)
UNSUPPORTED |= {"af_local", "af_world", "dJ_local", "dJ_world",
                *(k + s for k in ("dvf", "daf") for s in ("", "_local", "_world"))}


@dataclass(frozen=True)
class Closed(ConstrainedSystem):
    """The registry's view of a :class:`~symgen.loops.LoopSystem`: ``nq`` (spanning), ``nv`` =
    ``n`` (independent), ``joint_names`` (q), ``velocity_joint_names`` (v), ``loops``; the tree's
    attributes (:class:`~symgen.constrained.ConstrainedSystem`) are the spanning tree's (``full``:
    the system's tree, or that tree as a sweep sees it, :func:`symgen.axisymmetric.inertial_view`)."""

    system: LoopSystem
    full: Robot = None

    def __post_init__(self):
        if self.full is None:
            object.__setattr__(self, "full", self.system.tree)

    @property
    def embedding(self):
        """The constant embedding: none (G depends on q: :attr:`system`)."""
        return None

    def __repr__(self):
        return f"Closed({self.full.name!r}, {self.nq} coordinates, {self.nv} independent speeds)"

    @property
    def n(self) -> int:
        return self.system.nv

    nv = n

    @property
    def nq(self) -> int:
        return self.system.nq

    @property
    def joint_names(self) -> tuple[str, ...]:
        return self.full.joint_names

    @property
    def velocity_joint_names(self) -> tuple[str, ...]:
        return self.system.velocity_joint_names

    @property
    def loops(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.system.closures)

    @property
    def unsupported(self) -> frozenset:
        """The quantity keys a build leaves out for this robot (:data:`UNSUPPORTED`)."""
        return UNSUPPORTED

    def check_state(self, name: str, x) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        size = self.nq if name == "q" else self.nv
        if x.shape != (size,):
            raise ModelError(f"{name} must have shape ({size},) for robot {self.full.name!r} (loops: {self.nq} "
                             f"spanning coordinates, {self.nv} independent speeds), got {x.shape}")
        return x

    # -- the loop functions (shared/API.md; :class:`~symgen.couplings.Coupled` has the same, with no rows)

    @property
    def loop_rows(self) -> int:
        """The loops' closure rows (phi's length)."""
        return self.system.rows

    @property
    def loop_dependent_q(self) -> tuple[int, ...]:
        """The entries of q that solve_loops fixes (the dependent joints')."""
        return self.system.dependent_q

    def loop_residual(self, q, bk=None):
        """phi(q), (rows,): 0 on a consistent configuration (numbers or symbols)."""
        from .loops import _numeric

        return self.system._stack(q, None, _numeric(bk))[0]

    def loop_jacobian(self, q, bk=None):
        """K = d phi / dq over q's entries (rows, nq; a free-flyer's seven columns 0)."""
        from .loops import _numeric

        bk = _numeric(bk)
        return self.system.configuration_jacobian(self.system._stack(q, None, bk)[1], bk)

    def solve_loops(self, q, iterations: int = 50, tol: float = 1e-12):
        return self.system.solve_loops(q, iterations, tol)

    def spanning_velocity(self, q, v, bk=None):
        """G(q) v: the spanning tree's speeds."""
        from .loops import _numeric

        bk = _numeric(bk)
        return self.system.embedding(q, None, bk)[0] @ v


def run_closed(sweep, robot: Closed, args: dict, bk, opts, rules: dict, run_full, outputs: dict) -> dict:
    """``sweep`` for the closed mechanism ``robot`` (see the module docstring); ``outputs``: per
    quantity key of the sweep, its output names (the registry's)."""
    mine = list(outputs)
    left_out = {name for k in mine if k in UNSUPPORTED for name in outputs[k]}
    if all(k in UNSUPPORTED for k in mine):
        raise OptionError(f"--quantities: {', '.join(mine)} not generated for mechanisms with loops yet "
                          f"(robot {robot.full.name!r}; docs/LOOPS.md)")
    system, full = robot.system, robot.full
    q, v = args["q"], args.get("qd")
    G, Gd = system.embedding(q, v, bk)
    fa = {"q": q, **({"params": args["params"]} if "params" in args else {})}
    for name in ("qd", "qd_r"):
        if name in args:
            fa[name] = bk.bind(G @ args[name], f"G{name}")
    if "qdd" in args:
        fa["qdd"] = bk.bind(G @ args["qdd"] + (Gd @ v if Gd is not None else 0), "Gqdd")
    if "qdd_r" in args:
        fa["qdd_r"] = bk.bind(G @ args["qdd_r"] + Gd @ args["qd_r"], "Gqdd_r")
    if "solve" in rules.values():
        return _solve(sweep, robot, args, fa, G, Gd, bk, opts)
    values = run_full(sweep, full, fa, bk, opts)
    out = {}
    for name, value in values.items():
        if name in left_out:                             # a quantity of the sweep not generated for loops
            continue
        rule = rules.get(name, "none")
        if rule == "none":
            out[name] = value
        elif rule == "vector":
            out[name] = G.T @ value
        elif rule == "rows":
            out[name] = G.T @ value
        elif rule == "columns":
            out[name] = np.matmul(value, G)
        elif rule == "matrix":
            out[name] = G.T @ value @ G
            if name in ("C", "Mdot"):
                MGd = G.T @ _mass(values, robot, fa, bk, opts) @ Gd
                out[name] = out[name] + (MGd if name == "C" else MGd + MGd.T)
        elif rule == "christoffel":
            out[name] = _christoffel(value, G, robot, fa, bk, opts)
        else:
            raise OptionError(f"loops: output {name!r} of sweep {sweep.name!r} has no embedding rule")
    return out


def _mass(values, robot, fa, bk, opts):
    """The spanning tree's M: the sweep's own when it yields one, else CRBA's."""
    if "M" in values:
        return values["M"]
    from .algorithms.crba import crba, crba_ground
    from .kinematics import with_parameters

    tree = with_parameters(robot.full, fa.get("params"))
    return (crba_ground if opts.frame == "ground" else crba)(tree, fa["q"], bk)


def _christoffel(Gamma, G, robot, fa, bk, opts):
    """Γ̄[i, j, k] = Σ G_ai G_bj G_ck Γ_abc + (GᵀMĠ(e_k))_ij."""
    n, m = G.shape
    M = _mass({}, robot, fa, bk, opts)
    out = bk.zeros((m, m, m))
    for k in range(m):
        Gamma_k = bk.zeros((n, n))
        for c in range(n):
            if G[c, k] is not None and not is_zero(G[c, k]):
                Gamma_k = Gamma_k + Gamma[:, :, c] * G[c, k]
        _, Gd = robot.system.embedding(fa["q"], np.eye(m)[k], bk)
        out[:, :, k] = G.T @ Gamma_k @ G + G.T @ M @ Gd
    return out


def _solve(sweep, robot, args, fa, G, Gd, bk, opts):
    """Forward dynamics and M⁻¹ of the closed mechanism (dense: the loops couple the cluster)."""
    from .algorithms.crba import crba, crba_ground
    from .algorithms.forward_dynamics import inverse_from_factors, ltdl, ltdl_solve
    from .algorithms.rnea import rnea
    from .kinematics import with_parameters
    from .reduced_tree import named_matrix

    tree = with_parameters(robot.full, fa.get("params"))
    q = fa["q"]
    M = named_matrix(G.T @ (crba_ground if opts.frame == "ground" else crba)(tree, q, bk) @ G, bk)   # read often
    m = M.shape[0]
    chain = tuple(range(-1, m - 1))
    L, Dinv = ltdl(M, chain, bk)
    if sweep.name == "forward_dynamics":
        v = args["qd"]
        bias = G.T @ rnea(tree, q, G @ v, Gd @ v, bk, gravity=opts.gravity)
        return {"qdd": ltdl_solve(L, Dinv, chain, bk.bind(args["tau"] - bias, "rhs"), bk)}
    if sweep.name != "mass_matrix_inverse":
        raise OptionError(f"loops: sweep {sweep.name!r} is not generated for mechanisms with loops yet")
    return {"Minv": inverse_from_factors(L, Dinv, chain, bk)}
