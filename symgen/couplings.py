"""Explicit linear constraints by embedding: geared rotors, belts and mimic joints together.

GRBDA's URDF+ ``<coupling>`` (read by :mod:`symgen.urdf.plus`) ties joints by a constant linear
equation, ``ratio * (the predecessor path's coordinates) = (the successor path's)``; a mimic joint
is the equation ``q_a - m q_t = o``. Stacked, they read K q_full = k over the full tree's joints;
the joints marked ``independent="false"`` (the mimicking joints) are the dependent ones, D, and the
rest, I, are the coordinates q kept. With K_D square and invertible

    q_full = G q + o,    G = [1; -K_D^-1 K_I] (rows in q_full order),   o = [0; K_D^-1 k],

a constant embedding, so Ġ = 0 and every quantity is that of :mod:`symgen.mimic`: M = GᵀM_full G,
C = Gᵀ C_full(q_full, G v) G, τ = Gᵀ τ_full, g = Gᵀ g_full, Y = Gᵀ Y_full, J = J_full G (Wensing &
Slotine, Sec. VI-C, with a constant G: its GᵀMĠ term vanishes). :class:`LinearEmbedding` is
:class:`symgen.mimic.Embedding` with a column of G that may hold several joints in one row (a
belt's rotor turns with the sum of two joints); the registry's embedded runs, the projections,
the reduced solves and the Pinocchio oracle use it through the same methods.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .errors import ModelError
from .mimic import Embedded, Sizes, _array, _named, _number, _sum, _times

_ZERO = 1e-14        # entries of G and o this small (relative to 1) are round-off of the solve


@dataclass(frozen=True)
class Constraint:
    """One linear equation sum(coeffs[j] q_j) = constant over the full joints (by name);
    ``name`` names the ``<coupling>`` (or the mimic joint) it comes from, ``kind`` which."""
    name: str
    kind: str
    coeffs: tuple[tuple[str, float], ...]
    constant: float = 0.0


@dataclass(frozen=True)
class LinearEmbedding(Sizes):
    """q_full = G q + offset over the full model's joints ``names`` (q order, after ``lead_q``
    / ``lead_v`` entries of a free-flyer passed through). ``rows[j]``: full joint j as
    ((reduced index r, coefficient), ...) over the independent joints; ``offset[j]`` its constant.
    ``constraints``: the equations embedded; ``relations``: the ``<mimic>`` ones among them
    (:class:`symgen.mimic.Relation`, for the manifest)."""
    names: tuple[str, ...]
    rows: tuple[tuple[tuple[int, float], ...], ...]
    offset: tuple[float, ...]
    own: tuple[int, ...]
    constraints: tuple[Constraint, ...] = ()
    relations: tuple = ()
    lead_q: int = 0
    lead_v: int = 0

    @property
    def independent(self) -> tuple[int, ...]:
        return self.own

    @property
    def joint_names(self) -> tuple[str, ...]:
        return tuple(self.names[j] for j in self.own)

    @property
    def loops(self) -> tuple[str, ...]:
        """The names of the couplings embedded (mimic relations are listed under ``relations``)."""
        return tuple(c.name for c in self.constraints if c.kind == "coupling")

    def columns(self) -> tuple[tuple[tuple[int, float], ...], ...]:
        """Per reduced velocity index, the nonzero entries of its column of G: (full index, G)."""
        cols = [[(i, 1.0)] for i in range(self.lead_v)] + [[] for _ in range(self.n)]
        for j, row in enumerate(self.rows):
            for r, m in row:
                cols[self.lead_v + r].append((self.lead_v + j, m))
        return tuple(tuple(c) for c in cols)

    def offsets(self) -> np.ndarray:
        return np.array([0.0] * self.lead_q + list(self.offset))

    def expand_q(self, q, bk=None):
        """q_full from the reduced q; a dependent joint's combination is named once on a
        symbolic backend (its sin and cos are then taken of a plain symbol)."""
        out = list(q[:self.lead_q])
        own = set(self.own)
        for j, row in enumerate(self.rows):
            terms = [_times(m, q[self.lead_q + r]) for r, m in row]
            if j in own or (len(row) == 1 and row[0][1] == 1.0 and self.offset[j] == 0.0):
                out.append(terms[0])
                continue
            expr = _sum(terms, bk) if bk is not None else sum(terms)
            if self.offset[j] != 0.0:
                expr = expr + _number(bk, self.offset[j])
            out.append(_named(bk, expr, f"qm{j}"))
        return _array(out, bk)

    def expand_v(self, v, bk=None):
        """G v (velocities, accelerations)."""
        out = list(v[:self.lead_v])
        for row in self.rows:
            terms = [_times(m, v[self.lead_v + r]) for r, m in row]
            out.append((_sum(terms, bk) if bk is not None else sum(terms)) if terms else _number(bk, 0.0))
        return _array(out, bk)

    def label(self, j: int) -> str:
        """Full joint j's coordinate: ``q[3]``, or for a dependent one ``= 6 q[3]`` /
        ``= 12 q[3] + 12 q[4]`` (``symgen info``)."""
        row = self.rows[j]
        if j in self.own:
            return f"q[{self.lead_q + row[0][0]}]"
        text = " + ".join(f"{m:g} q[{self.lead_q + r}]" for r, m in row) or "0"
        o = self.offset[j]
        return f"= {text}" + (f" {'-' if o < 0 else '+'} {abs(o):g}" if o else "")


def solve(names, constraints, dependent, lead_q=0, lead_v=0, relations=(), error=None) -> LinearEmbedding:
    """The embedding of ``constraints`` over the full joints ``names`` (q order), with the joints
    ``dependent`` solved for. ``error(reason)``: the exception when K_D is not square and
    invertible (more or fewer equations than dependent joints, or equations that do not fix them)."""
    index = {name: j for j, name in enumerate(names)}
    dep = [index[d] for d in names if d in set(dependent)]
    own = [j for j in range(len(names)) if j not in set(dep)]
    K = np.zeros((len(constraints), len(names)))
    k = np.array([c.constant for c in constraints], dtype=float)
    for row, c in enumerate(constraints):
        for name, coeff in c.coeffs:
            K[row, index[name]] += coeff
    KD, KI = K[:, dep], K[:, own]
    which = ", ".join(repr(c.name) for c in constraints)
    if KD.shape[0] != KD.shape[1]:
        raise error(f"{len(constraints)} equations ({which}) for {len(dep)} dependent joints "
                    f"({', '.join(repr(names[j]) for j in dep) or 'none'}); each coupling needs one joint "
                    f"marked independent=\"false\"")
    if len(dep) and np.linalg.matrix_rank(KD) < len(dep):
        raise error(f"the equations ({which}) do not determine the dependent joints "
                    f"({', '.join(repr(names[j]) for j in dep)}): K_D is singular")
    Gd = -np.linalg.solve(KD, KI) if dep else np.zeros((0, len(own)))
    od = np.linalg.solve(KD, k) if dep else np.zeros(0)
    Gd[np.abs(Gd) < _ZERO] = 0.0
    od[np.abs(od) < _ZERO] = 0.0
    rows, offset = [None] * len(names), [0.0] * len(names)
    for r, j in enumerate(own):
        rows[j] = ((r, 1.0),)
    for i, j in enumerate(dep):
        rows[j] = tuple((r, float(Gd[i, r])) for r in range(len(own)) if Gd[i, r] != 0.0)
        offset[j] = float(od[i])
    if not own:
        raise error("every movable joint is dependent; none is left as a coordinate")
    return LinearEmbedding(tuple(names), tuple(rows), tuple(offset), tuple(own), tuple(constraints),
                           tuple(relations), lead_q, lead_v)


@dataclass(frozen=True)
class Coupled(Embedded):
    """A robot with couplings (and possibly mimic joints) in reduced coordinates: an
    :class:`~symgen.mimic.Embedded` system whose embedding is a :class:`LinearEmbedding`."""

    def __repr__(self):
        return f"Coupled({self.full.name!r}, {self.nv} of {self.embedding.nv_full} joint speeds independent)"

    @property
    def loops(self) -> tuple[str, ...]:
        return self.embedding.loops

    # -- the loop functions of every URDF+ model (shared/API.md), as a mechanism with loops has them
    #    (symgen.closed.Closed): a constant embedding closes no rows, q holds the independent
    #    coordinates only, and the spanning tree's speeds are G v

    @property
    def loop_rows(self) -> int:
        """The closure rows: none (the couplings are solved once, in G)."""
        return 0

    @property
    def loop_dependent_q(self) -> tuple[int, ...]:
        """The entries of q that solve_loops fixes: none (q holds no dependent joint)."""
        return ()

    def loop_residual(self, q, bk=None):
        """phi(q), shape (0,): no rows."""
        from .loops import _numeric

        return _numeric(bk).zeros(0)

    def loop_jacobian(self, q, bk=None):
        """d phi / dq, shape (0, nq)."""
        from .loops import _numeric

        return _numeric(bk).zeros((0, self.nq))

    def solve_loops(self, q, iterations: int = 50, tol: float = 1e-12):
        """q itself (checked, copied): every configuration of the independent joints is consistent."""
        return np.array(self.check_state("q", q))

    def spanning_velocity(self, q, v, bk=None):
        """G v: the spanning tree's speeds (the rotors' included), a free-flyer's six passed through."""
        return self.embedding.expand_v(v if bk is not None else self.check_state("qd", v), bk)

    def check_state(self, name: str, x) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        size = self.nq if name == "q" else self.nv
        if x.shape != (size,):
            raise ModelError(f"{name} must have shape ({size},) for robot {self.full.name!r} "
                             f"(couplings embedded: {size} independent coordinates), got {x.shape}")
        return x
