"""Mimic joints by embedding (``symgen build --mimic``): reduced coordinates of a tree whose
URDF ties some joints to others (``<mimic joint="j" multiplier="m" offset="o"/>``: q = m q_j + o).

The constrained system is the full tree (every joint its own coordinate, as without ``--mimic``)
seen through the constant embedding

    q_full = G q + o,     v_full = G v,     a_full = G a

where ``q`` holds the independent joints only (the full q order with the mimicking joints left
out) and G (nv_full x nv) has one entry per full joint: 1 in the column of an independent joint,
the composed multiplier in the column of the joint a mimic follows (a mimic of a mimic composes:
q_a = m_a (m_b q_c + o_b) + o_a). Every quantity is then that of the full model projected by G
(Wensing & Slotine's constraint embedding with a constant G):

    M = G^T M_full G,   C = G^T C_full(q_full, G v) G,   Mdot = G^T Mdot_full G,
    Gamma_ijk = sum G_ai G_bj G_ck Gamma_full_abc,   tau = G^T tau_full(q_full, G v, G a),
    g = G^T g_full,   Y = G^T Y_full (columns: every body of the full model),
    J = J_full G,   frame placements = the full model's at q_full,
    derivatives of inverse dynamics G^T (.) G,

and forward dynamics, M^-1 and the forward-dynamics derivatives solve the reduced system
(M qdd = tau - G^T RNEA_full(q_full, G v, 0), by the L^T D L of M over the independent joints'
tree when M keeps its sparsity, a dense one when a mimic or belt across branches couples them:
:mod:`symgen.reduced_tree`). :func:`run_embedded` does this for every sweep,
on numbers and symbols alike (value numbering shares what the projections repeat), by the
``embed`` rule each :class:`~symgen.quantities.Output` declares.

A robot read with ``mimic=True`` is an :class:`Embedded` system of the full model (see there).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from .constrained import ConstrainedSystem
from .errors import ModelError, OptionError
from .reduced_tree import factor_parent, named_matrix as _named_matrix

if TYPE_CHECKING:
    from .model import Robot

#: the projection rules an :class:`~symgen.quantities.Output` may declare (``embed``)
RULES = ("matrix", "vector", "christoffel", "rows", "columns", "none", "solve")


@dataclass(frozen=True)
class Relation:
    """One ``<mimic>`` of the URDF: ``joint`` = multiplier * ``target`` + offset."""
    joint: str
    target: str
    multiplier: float
    offset: float


class Sizes:
    """What a constant embedding derives from independent, names, lead_q, lead_v and columns() (and G)."""

    @property
    def n(self) -> int:
        return len(self.independent)

    @property
    def nq(self) -> int:
        return self.lead_q + self.n

    @property
    def nv(self) -> int:
        return self.lead_v + self.n

    @property
    def nv_full(self) -> int:
        return self.lead_v + len(self.names)

    def matrix(self) -> np.ndarray:
        """G, dense (nv_full x nv)."""
        G = np.zeros((self.nv_full, self.nv))
        for s, col in enumerate(self.columns()):
            for a, m in col:
                G[a, s] = m
        return G


@dataclass(frozen=True)
class Embedding(Sizes):
    """q_full = G q + offset over the full model's joints ``names`` (q order).

    ``source[j]`` = (r, m, o): full joint j moves as m q[r] + o, r the index of an independent
    joint among the reduced joints (an independent joint: (its own index, 1, 0)). ``lead_q`` /
    ``lead_v``: entries of q / v before the joints, passed through (a free-flyer's 7 and 6)."""
    names: tuple[str, ...]
    source: tuple[tuple[int, float, float], ...]
    relations: tuple[Relation, ...] = ()
    lead_q: int = 0
    lead_v: int = 0

    @property
    def independent(self) -> tuple[int, ...]:
        """The full index of each reduced joint, in order."""
        return tuple(j for j, (r, m, o) in enumerate(self.source) if self._is_own(j))

    def _is_own(self, j) -> bool:
        return self.names[j] not in {rel.joint for rel in self.relations}

    @property
    def joint_names(self) -> tuple[str, ...]:
        return tuple(self.names[j] for j in self.independent)

    def columns(self) -> tuple[tuple[tuple[int, float], ...], ...]:
        """Per reduced velocity index, the nonzero entries of its column of G: (full index, m)."""
        cols = [[(i, 1.0)] for i in range(self.lead_v)] + [[] for _ in range(self.n)]
        for j, (r, m, _) in enumerate(self.source):
            if m != 0.0:
                cols[self.lead_v + r].append((self.lead_v + j, m))
        return tuple(tuple(c) for c in cols)

    def label(self, j: int) -> str:
        """Full joint j's coordinate: ``q[3]``, or for a mimicking one ``= -1 q[3] + 0.01``
        (``symgen info``; :meth:`symgen.couplings.LinearEmbedding.label` likewise)."""
        r, m, o = self.source[j]
        if self._is_own(j):
            return f"q[{self.lead_q + r}]"
        return f"= {m:g} q[{self.lead_q + r}] {'-' if o < 0 else '+'} {abs(o):g}"

    def offsets(self) -> np.ndarray:
        """o of q_full = G q + o over the joint entries (zeros before them)."""
        return np.array([0.0] * self.lead_q + [o for _, _, o in self.source])

    def expand_q(self, q, bk=None):
        """q_full from reduced q (numbers or symbols); a mimicking joint's entry m q_r + o is
        named once on a symbolic backend (its sin and cos are then taken of a plain symbol)."""
        out = list(q[:self.lead_q])
        for j, (r, m, o) in enumerate(self.source):
            x = q[self.lead_q + r]
            if self._is_own(j) or (m == 1.0 and o == 0.0):
                out.append(x)
            else:
                out.append(_named(bk, _times(m, x) + _number(bk, o), f"qm{j}"))
        return _array(out, bk)

    def expand_v(self, v, bk=None):
        """G v (velocities, accelerations)."""
        out = list(v[:self.lead_v])
        for r, m, _ in self.source:
            out.append(_times(m, v[self.lead_v + r]))
        return _array(out, bk)


def _number(bk, x):
    return bk.number(x) if bk is not None else x


def _times(m, x):
    """m x, with 1 and -1 exact (no product in the code) and an integer multiplier an integer."""
    if m == 1.0:
        return x
    if m == -1.0:
        return -x
    return (int(m) if float(m).is_integer() else m) * x


def _named(bk, expr, name):
    """On a symbolic backend, ``expr`` bound to a fresh temp (even when bind would keep a number
    times a symbol inline: trig values are named after their argument, which must be a symbol)."""
    if bk is None or getattr(bk, "name", "") != "symbolic":
        return expr
    return bk.bind_always(expr, name)


def _array(values, bk):
    if bk is None or getattr(bk, "name", "") != "symbolic":
        return np.array(values, dtype=float)
    out = bk.zeros(len(values))
    for i, x in enumerate(values):
        out[i] = x
    return out


def _sum(terms, bk):
    terms = list(terms)
    if not terms:
        return bk.sp.S.Zero if bk.name == "symbolic" else 0.0
    total = terms[0]
    for t in terms[1:]:
        total = total + t
    return total


# ------------------------------------------------------------------------------------ building

def build(joint_names, relations, defined, fixed, error, lead_q: int = 0, lead_v: int = 0) -> Embedding:
    """The embedding of the movable joints ``joint_names`` (q order) under ``relations`` (the
    URDF's ``<mimic>`` of movable joints). ``defined``: every joint name of the file; ``fixed``:
    the fixed ones; ``error(joint, reason)``: the exception to raise for an invalid relation (a
    mimic of a missing or fixed joint, a cycle of mimics). ``lead_q``/``lead_v``: the entries of
    q and v before the joints (a free-flyer's 7 and 6), passed through."""
    index = {name: j for j, name in enumerate(joint_names)}
    by_joint = {rel.joint: rel for rel in relations}
    for rel in relations:
        if rel.target not in defined:
            raise error(rel.joint, f"--mimic: mimics joint {rel.target!r}, which the file does not define")
        if rel.target in fixed:
            raise error(rel.joint, f"--mimic: mimics joint {rel.target!r}, which is fixed (it has no coordinate to follow)")
        if rel.target not in index:
            raise error(rel.joint, f"--mimic: mimics joint {rel.target!r}, which is not a movable joint of the tree")
    independent = [name for name in joint_names if name not in by_joint]
    reduced = {name: r for r, name in enumerate(independent)}
    source = []
    for name in joint_names:
        m, o, path = 1.0, 0.0, [name]
        while path[-1] in by_joint:                 # q = m q_t + o, q_t = m' q_t' + o' ...
            rel = by_joint[path[-1]]
            if rel.target in path:
                cycle = path[path.index(rel.target):] + [rel.target]
                raise error(rel.joint if rel.joint == name else name,
                            f"--mimic: a cycle of mimic joints ({' -> '.join(cycle)}); one of them must be independent")
            m, o = m * rel.multiplier, m * rel.offset + o
            path.append(rel.target)
        source.append((reduced[path[-1]], m, o))
    if not independent:
        raise error(joint_names[0], "--mimic: every movable joint mimics another; none is independent")
    return Embedding(tuple(joint_names), tuple(source), tuple(relations), lead_q, lead_v)


@dataclass(frozen=True)
class Embedded(ConstrainedSystem):
    """A robot with mimic joints, seen in reduced coordinates: ``n``, ``nq``, ``nv``,
    ``joint_names`` and ``check_state`` are those of the independent joints; the tree's attributes
    (``bodies``, ``link_names``, ``frames``, ...: :class:`~symgen.constrained.ConstrainedSystem`) are
    the full model's (``full``), which the algorithms run on (:func:`run_embedded`)."""

    full: Robot
    embedding: Embedding

    @property
    def system(self):
        """The loop system: none (the embedding is constant)."""
        return None

    def __repr__(self):
        return f"Embedded({self.full.name!r}, {self.nv} of {self.embedding.nv_full} joints independent)"

    @property
    def n(self) -> int:
        return self.embedding.nv

    @property
    def nq(self) -> int:
        return self.embedding.nq

    @property
    def nv(self) -> int:
        return self.embedding.nv

    @property
    def joint_names(self) -> tuple[str, ...]:
        return self.full.joint_names[:1] * bool(self.embedding.lead_v) + self.embedding.joint_names

    def check_state(self, name: str, x) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        size = self.nq if name == "q" else self.nv
        if x.shape != (size,):
            raise ModelError(f"{name} must have shape ({size},) for robot {self.full.name!r} "
                             f"(--mimic: {size} independent joints), got {x.shape}")
        return x


def full_model(robot):
    """``robot`` itself, or for an :class:`Embedded` one its full model."""
    return robot.full


# -------------------------------------------------------------------------------- projections

def project(rule: str, value, cols, bk):
    """An output of the full model's sweep projected by G (``cols``: :meth:`Embedding.columns`)."""
    if rule == "none":
        return value
    value = np.asarray(value) if bk.name != "symbolic" else value
    n = len(cols)
    if rule == "vector":
        out = bk.zeros(n)
        for r in range(n):
            out[r] = _sum((_times(m, value[a]) for a, m in cols[r]), bk)
        return out
    if rule == "matrix":
        out = bk.zeros((n, n))
        for r in range(n):
            for s in range(n):
                out[r, s] = _sum((_times(ma * mb, value[a, b]) for a, ma in cols[r] for b, mb in cols[s]), bk)
        return out
    if rule == "rows":
        out = bk.zeros((n, value.shape[1]))
        for r in range(n):
            for c in range(value.shape[1]):
                out[r, c] = _sum((_times(m, value[a, c]) for a, m in cols[r]), bk)
        return out
    if rule == "columns":                               # (..., nv_full) -> (..., nv)
        out = bk.zeros(value.shape[:-1] + (n,))
        for idx in np.ndindex(*value.shape[:-1]):
            for s in range(n):
                out[idx + (s,)] = _sum((_times(m, value[idx + (b,)]) for b, m in cols[s]), bk)
        return out
    if rule == "christoffel":
        out = bk.zeros((n, n, n))
        for i in range(n):
            for j in range(n):
                for k in range(n):
                    out[i, j, k] = _sum((_times(ma * mb * mc, value[a, b, c]) for a, ma in cols[i]
                                         for b, mb in cols[j] for c, mc in cols[k]), bk)
        return out
    raise OptionError(f"--mimic: unknown projection rule {rule!r}; expected one of {', '.join(RULES)}")


# ----------------------------------------------------------------------------- sweeps embedded

def run_embedded(sweep, robot: Embedded, args: dict, bk, opts, rules: dict, run_full) -> dict:
    """``sweep`` for the constrained system of ``robot``: the reduced arguments expanded
    (q_full = G q + o, G v, G a), the full model's sweep run (``run_full(sweep, robot, args, bk,
    opts)``, the registry's runner), each output projected by its rule in ``rules`` (``{output
    name: rule}``, what the registry's Outputs declare); a sweep with a ``"solve"`` output (forward
    dynamics, M^-1, their derivatives) runs its reduced-system computation instead."""
    missing = [name for name, rule in rules.items() if rule not in RULES]
    if missing:
        raise OptionError(f"--mimic: output {missing[0]!r} of sweep {sweep.name!r} declares no embedding rule")
    if getattr(sweep.run, "reduced", False):           # a variant that embeds itself (cluster CRBA, ...)
        return sweep.run(robot, args, bk, opts)
    emb = robot.embedding
    full_args = expand(emb, args, bk)
    if "solve" in rules.values():                      # a body-frame variant: M̄ and b̄ in body frames
        return REDUCED[sweep.name](robot, args, full_args, bk, replace(opts, frame=getattr(sweep.run, "frame", opts.frame)))
    values = run_full(sweep, robot.full, full_args, bk, opts)
    cols = emb.columns()
    return {name: project(rules.get(name, "none"), value, cols, bk) for name, value in values.items()}


def expand(emb: Embedding, args: dict, bk) -> dict:
    """The full model's arguments from reduced ones (``params`` unchanged: every body's)."""
    out = {}
    for name, value in args.items():
        out[name] = (emb.expand_q(value, bk) if name == "q" else value if name == "params"
                     else emb.expand_v(value, bk))
    return out


def _full(robot, args):
    from .kinematics import with_parameters

    return with_parameters(robot.full, args.get("params"))


def _reduced_mass_and_bias(robot, full_args, bk, opts, with_bias=True):
    """(M, factors of M, G^T RNEA_full(q_full, G v, 0)) of the reduced system; M by the cluster
    CRBA (:mod:`symgen.algorithms.cluster_crba`) in the sweep's frame (``"local"``: Pinocchio's
    local convention, the bias by the body-frame RNEA with rotation-and-offset transforms)."""
    from .algorithms.cluster_crba import cluster_crba, cluster_crba_ground, cluster_crba_local
    from .algorithms.forward_dynamics import ltdl
    from .algorithms.rnea import rnea

    full, cols = _full(robot, full_args), robot.embedding.columns()
    mass = {"ground": cluster_crba_ground, "local": cluster_crba_local}.get(opts.frame, cluster_crba)
    M = _named_matrix(mass(full, full_args["q"], cols, bk), bk)
    chain = factor_parent(robot)                       # the independent tree, or dense (a chain)
    L, Dinv = ltdl(M, chain, bk)
    bias = None
    if with_bias:
        b = rnea(full, full_args["q"], full_args["qd"], bk.zeros(full.n), bk, gravity=opts.gravity,
                 offsets=opts.frame == "local")
        bias = project("vector", b, cols, bk)
    return M, (L, Dinv, chain), bias


def _mass_matrix_inverse(robot, args, full_args, bk, opts):
    from .algorithms.forward_dynamics import inverse_from_factors

    _, (L, Dinv, chain), _ = _reduced_mass_and_bias(robot, full_args, bk, opts, with_bias=False)
    return {"Minv": inverse_from_factors(L, Dinv, chain, bk)}


def _forward_dynamics(robot, args, full_args, bk, opts):
    from .algorithms.forward_dynamics import ltdl_solve

    _, (L, Dinv, chain), bias = _reduced_mass_and_bias(robot, full_args, bk, opts)
    return {"qdd": ltdl_solve(L, Dinv, chain, bk.bind(args["tau"] - bias, "rhs"), bk)}


def _fd_derivatives(robot, args, full_args, bk, opts):
    """dqdd/du = -M^-1 G^T (dtau_full/du) G at qdd = FD(q, v, tau) (u = q, v)."""
    from .algorithms.derivatives import inverse_dynamics_derivatives
    from .algorithms.forward_dynamics import ltdl_solve

    if opts.frame == "ground":
        return _fd_derivatives_ground(robot, args, full_args, bk, opts)
    emb, cols = robot.embedding, robot.embedding.columns()
    _, (L, Dinv, chain), bias = _reduced_mass_and_bias(robot, full_args, bk, opts)
    qdd = ltdl_solve(L, Dinv, chain, args["tau"] - bias, bk)
    full = _full(robot, full_args)
    dq, dv = inverse_dynamics_derivatives(full, full_args["q"], full_args["qd"], emb.expand_v(qdd, bk), bk,
                                          opts.frame, gravity=opts.gravity)
    out = {}
    for name, d in (("dqdd_dq", dq), ("dqdd_dqd", dv)):
        D = project("matrix", d, cols, bk)
        X = bk.zeros(D.shape)
        for c in range(D.shape[1]):
            X[:, c] = ltdl_solve(L, Dinv, chain, -D[:, c], bk)
        out[name] = X
    return out


def _fd_derivatives_ground(robot, args, full_args, bk, opts):
    """The full model's one-sweep ground form (``derivatives._fd_derivatives_ground``) with the
    projections in between: M and the bias from the sweep's composites, projected and solved in
    reduced coordinates, then the accelerations of qdd_full = G qdd and the derivative passes
    (panda: 11,041 operations, against 15,656 composed from CRBA, RNEA and the derivatives, and
    11,738 for the full model without --mimic; see docs/MIMIC.md)."""
    from .algorithms.derivatives import base_acceleration, composites, derivative_passes, forward_pass
    from .algorithms.forward_dynamics import ltdl, ltdl_solve
    from .kinematics import ground_frames
    from .spatial import inertia_times

    emb, cols = robot.embedding, robot.embedding.columns()
    full = _full(robot, full_args)
    n, q, qd = full.n, full_args["q"], full_args["qd"]
    Phi, I = ground_frames(full, q, bk)
    a0 = base_acceleration(full, q, opts.gravity, bk)
    v, Phid, a, h, f = forward_pass(full, Phi, I, qd, bk.zeros(n), bk, a0)
    IC = composites(full, I, bk, "IC")
    F0 = composites(full, f, bk, "f")
    Mf, bf = bk.zeros((n, n)), bk.zeros(n)
    for i in range(n):
        F2 = bk.bind(inertia_times(IC[i], Phi[i], bk), f"F2_{i}", i)
        for j in full.ancestors(i):
            Mf[i, j] = Mf[j, i] = Phi[j] @ F2
        bf[i] = Phi[i] @ F0[i]
    M, bias = _named_matrix(project("matrix", Mf, cols, bk), bk), project("vector", bf, cols, bk)
    chain = factor_parent(robot)
    L, Dinv = ltdl(M, chain, bk)
    qdd = emb.expand_v(ltdl_solve(L, Dinv, chain, args["tau"] - bias, bk), bk)
    alpha = [None] * n
    for i in range(n):
        p = full.parent[i]
        alpha[i] = bk.bind(Phi[i] * qdd[i] + (alpha[p] if p >= 0 else 0), f"alpha{i}", i)
        a[i] = bk.bind(a[i] + alpha[i], f"a{i}", i)
        f[i] = bk.bind(f[i] + inertia_times(I[i], alpha[i], bk), f"f{i}", i)
    dq, dv = derivative_passes(full, Phi, I, IC, qd, v, Phid, a, h, f, bk, a0)
    out = {}
    for name, d in (("dqdd_dq", dq), ("dqdd_dqd", dv)):
        D = bk.bind(-project("matrix", d, cols, bk), name)
        X = bk.zeros(D.shape)
        for c in range(D.shape[1]):
            X[:, c] = ltdl_solve(L, Dinv, chain, D[:, c], bk)
        out[name] = X
    return out


#: per sweep with a ``"solve"`` output, its reduced-system computation
REDUCED = {
    "forward_dynamics": _forward_dynamics,
    "mass_matrix_inverse": _mass_matrix_inverse,
    "fd_derivatives": _fd_derivatives,
}
