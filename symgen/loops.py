"""Nonlinear loop closures (URDF+ ``<loop>``) by constraint embedding with a configuration-
dependent G(q): the constrained dynamics of a four-bar, a six-bar, a leg linkage (Wensing &
Slotine, seed 002, Sec. VI-C; GRBDA's ``GenericImplicit`` loop constraint).

The coordinates are the spanning tree's q (consistent with the loops: phi(q) = 0) and the
independent speeds v (the joints not marked ``independent="false"``), as in GRBDA. A loop pins a
point fixed in its predecessor link to a point fixed in its successor link; in the frame of their
nearest common ancestor (A) the residual is

    phi(q) = P R_A^T (p_pred(q) - p_succ(q))

with P the rows kept: the loop's translation rows that depend on q (GRBDA keeps those; a planar
loop gives 2), chosen once numerically from the row space of the Jacobian, coordinate rows when
the loop's plane is a coordinate plane of A, else an orthonormal basis of that plane. A weld (MJCF
``<equality weld>``: two frames coincide) adds three rotation rows, the vee of the skew part of
their relative turn in A's axes, whose Jacobian rows are the relative angular velocity's
(:mod:`symgen.loop_kinematics`); its rows kept are picked from all six (a planar weld keeps 3). With
K = dphi/dq split into its dependent and independent columns, K_D (square) and K_I,

    qdot = G(q) v,   G = [1; -K_D^-1 K_I]  (rows in v order; K_D^-1 per cluster of loops that share
                                             joints: its adjugate up to 3x3, else an LU with a row
                                             order fixed at a nominal closed configuration),
    Gdot(q, v) = [0; -K_D^-1 Kdot G],        Kdot = d/dt K along qdot = G v,

and the constrained system is (Ġ ≠ 0 now)

    M̄ = GᵀMG,  C̄ = GᵀC(q, Gv)G + GᵀMĠ  (Christoffel-consistent: Ṁ̄ = C̄ + C̄ᵀ),
    Γ̄[:, :, k] = C̄(q, e_k)  (C̄ is linear in v),   τ̄ = Gᵀτ(q, Gv, Ga + Ġv),   ḡ = Gᵀg,
    Y = GᵀY_full(q, Gv, Gv_r, Ga_r + Ġv_r)  (Y θ = M̄ a_r + C̄ v_r + ḡ),   J̄ = J G,
    FD: M̄ a = τ̄ - GᵀRNEA(q, Gv, Ġv).

Columns of K and Kdot come from the ground-coordinate frame kinematics (:mod:`symgen.loop_kinematics`),
written over the backend (numbers here; the same code traces on symbols). A free-flyer's speeds
are independent (G's lead block is 1). Not yet: other multi-DoF joints and couplings in the same
file (docs/LOOPS.md).
"""
from __future__ import annotations

from dataclasses import dataclass
import numpy as np

from .errors import ModelError
from .model import Frame, as_mat3

_RANK_TOL = 1e-9


@dataclass(frozen=True)
class Closure:
    """One loop of the spanning tree: its two points (``Frame``s of kind point), the body of
    their nearest common ancestor (-1: the root), the joints (bodies) of both paths, and the
    rows kept (P, r x 3 in the ancestor's turned axes)."""
    name: str
    pred: Frame
    succ: Frame
    ancestor: int
    pred_path: tuple[int, ...]
    succ_path: tuple[int, ...]
    P: np.ndarray


class LoopSystem:
    """A spanning tree ``tree`` (a :class:`~symgen.model.Robot`, fixed or free-flying) closed by
    ``closures``; ``dependent``: the bodies whose coordinates the loops fix (v order). A
    free-flyer's six speeds are independent (G's lead block is the identity): the loops' rows, in
    the axes of an ancestor below the base, do not see the base's motion."""

    def __init__(self, tree, closures, dependent, nominal=()):
        self.tree, self.closures = tree, tuple(closures)
        #: closed configurations known from the file (an MJCF model's qpos0), tried first for the pivots
        self.nominal = tuple(np.asarray(q, dtype=float) for q in nominal)
        self.dependent = tuple(sorted(dependent))
        self.independent = tuple(i for i in range(tree.n) if i not in set(self.dependent))
        self.rows = sum(len(c.P) for c in self.closures)
        #: per cluster (loops sharing joints): (its rows of phi, its dependent joints), solved apart
        self.clusters = []
        for rows, joints in _clusters(self.closures):
            deps = [i for i in self.dependent if i in joints]
            names = ", ".join(repr(self.closures[k].name) for k in {r[0] for r in rows})
            if len(rows) != len(deps):
                raise ModelError(f"robot {tree.name!r}: loop(s) {names} close {len(rows)} rows but {len(deps)} of "
                                 f"their joints are marked independent=\"false\"; they must match")
            self.clusters.append(([r[1] for r in rows], deps))
        stray = set(self.dependent) - {i for _, deps in self.clusters for i in deps}
        if stray:
            raise ModelError(f"robot {tree.name!r}: joint(s) {', '.join(repr(tree.bodies[i].joint_name) for i in sorted(stray))} "
                             f"marked independent=\"false\" but on no loop's path")
        #: per cluster, K_D's row order for its LU (more than 3 dependent joints), else None (adjugate)
        self.pivots = self._pivots()

    @property
    def nq(self) -> int:
        return self.tree.nq

    @property
    def nv(self) -> int:
        return len(self.independent)

    @property
    def dependent_q(self) -> tuple[int, ...]:
        """The entries of q holding the dependent joints' coordinates (= ``dependent`` on a fixed base)."""
        return tuple(self.tree.q_index[i] for i in self.dependent)

    @property
    def joint_names(self) -> tuple[str, ...]:
        return self.tree.joint_names

    @property
    def velocity_joint_names(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(self.tree.bodies[i].joint_name for i in self.independent))

    def _pivots(self):
        """Per cluster with more than 3 dependent joints, the row order of partial pivoting on its
        K_D at a nominal consistent configuration (the best conditioned of ``nominal`` and a few
        drawn from seed 0), fixed for the generated code; None for the smaller ones (inverted by
        their adjugate)."""
        from .algorithms.block_inverse import pivot_order

        big = [c for c, (_, deps) in enumerate(self.clusters) if len(deps) > 3]
        if not big:
            return [None] * len(self.clusters)
        rng, best = np.random.default_rng(0), None
        for k in range(len(self.nominal) + 8):
            try:
                q = self.nominal[k] if k < len(self.nominal) else _draw(self.tree, rng)
                K = self.constraint_jacobian(self.solve_loops(q))
            except ModelError:
                continue
            cond = max(np.linalg.cond(K[rows][:, deps]) for rows, deps in (self.clusters[c] for c in big))
            if best is None or cond < best[0]:
                best = (cond, K)
        if best is None or not best[0] < 1e8:
            raise ModelError(f"robot {self.tree.name!r}: no well-conditioned closed configuration found for the "
                             f"loops' clusters of more than 3 dependent joints (to fix the pivots of K_D)")
        return [pivot_order(best[1][rows][:, deps]) if c in big else None
                for c, (rows, deps) in enumerate(self.clusters)]

    # ------------------------------------------------------------------ kinematics of the loops

    def _kinematics(self, q, qd, bk):
        """Per closure (phi, K, Kdot) in its rows (Kdot None without qd): :mod:`symgen.loop_kinematics`."""
        from .loop_kinematics import closure_kinematics

        return closure_kinematics(self.tree, self.closures, q, qd, bk)

    def _stack(self, q, qd, bk):
        parts = self._kinematics(q, qd, bk)
        phi = np.concatenate([x[0] for x in parts])
        K = np.concatenate([x[1] for x in parts])
        Kd = None if qd is None else np.concatenate([x[2] for x in parts])
        return phi, K, Kd

    def loop_residual(self, q, bk=None):
        """phi(q), (rows,): 0 on a consistent configuration."""
        bk = _numeric(bk)
        return self._stack(bk_array(q, bk), None, bk)[0]

    def constraint_jacobian(self, q, bk=None):
        """K = d phi / d(spanning speeds), (rows, tree.n)."""
        return self._stack(bk_array(q, _numeric(bk)), None, _numeric(bk))[1]

    def configuration_jacobian(self, K, bk=None):
        """K over the entries of q (rows, nq): a free-flyer's seven, which phi does not depend on,
        get zero columns; on a fixed base K itself."""
        tree = self.tree
        if not tree.floating_base:
            return K
        out = _numeric(bk).zeros((K.shape[0], tree.nq))
        for i in range(tree.free, tree.n):
            out[:, tree.q_index[i]] = K[:, i]
        return out

    def embedding(self, q, v=None, bk=None):
        """(G, Ġ) at q (Ġ at the independent speeds v; None without v)."""
        from .algorithms.block_inverse import adjugate_inverse, lu_inverse

        bk = _numeric(bk)
        n, own = self.tree.n, self.independent
        _, K, _ = self._stack(q, None, bk)
        K = bk.bind(K, "lK")                        # named once: every projection reads G's entries
        Kinv = [bk.bind(adjugate_inverse(K[rows][:, deps], bk) if order is None          # K_D block by block
                        else lu_inverse(K[rows][:, deps], order, bk, f"lKlu{c}"), f"lKinv{c}")
                for c, ((rows, deps), order) in enumerate(zip(self.clusters, self.pivots))]
        G = bk.zeros((n, len(own)))
        for s, i in enumerate(own):
            G[i, s] = bk.number(1.0)
        for (rows, deps), inv in zip(self.clusters, Kinv):
            G[deps, :] = bk.bind(-(inv @ K[rows][:, list(own)]), "lG")
        if v is None:
            return G, None
        _, _, Kd = self._stack(q, bk.bind(G @ v, "lGv"), bk)
        Gd = bk.zeros((n, len(own)))
        for (rows, deps), inv in zip(self.clusters, Kinv):
            Gd[deps, :] = bk.bind(-(inv @ bk.bind(Kd[rows] @ G, "lKdG")), "lGd")
        return G, Gd

    def solve_loops(self, q, iterations: int = 50, tol: float = 1e-12):
        """q with its dependent coordinates solved by Newton on phi (the independent ones kept),
        each step halved until |phi| decreases (plain Newton can cycle far from a solution)."""
        q = np.array(q, dtype=float)
        dep, at = list(self.dependent), list(self.dependent_q)
        phi = self.loop_residual(q)
        for _ in range(iterations):
            if np.max(np.abs(phi)) <= tol:
                return q
            K = self.constraint_jacobian(q)
            try:
                step = np.linalg.solve(K[:, dep], phi)
            except np.linalg.LinAlgError:
                break
            for _ in range(30):
                trial = q.copy()
                trial[at] -= step
                new = self.loop_residual(trial)
                if np.linalg.norm(new) < np.linalg.norm(phi):
                    break
                step = step / 2
            q, phi = trial, new
        if np.max(np.abs(phi)) > 1e3 * tol:
            raise ModelError(f"solve_loops: Newton did not converge for robot {self.tree.name!r} (residual "
                             f"{np.max(np.abs(phi)):.2e} after {iterations} steps): the independent coordinates may "
                             f"admit no closed configuration")
        return q

    def spanning_velocity(self, q, v):
        return self.embedding(q)[0] @ np.asarray(v, dtype=float)

    # -------------------------------------------------------------------- constrained dynamics

    def mass_matrix(self, q, bk=None):
        from .algorithms.crba import crba

        bk = _numeric(bk)
        G, _ = self.embedding(q, None, bk)
        return G.T @ crba(self.tree, q, bk) @ G

    def coriolis_matrix(self, q, v, bk=None):
        """C̄ = GᵀC(q, Gv)G + GᵀMĠ (Algorithm 1 on the spanning tree, then the embedding)."""
        from .algorithms.coriolis import coriolis

        bk = _numeric(bk)
        G, Gd = self.embedding(q, v, bk)
        M, _, C = coriolis(self.tree, q, G @ v, bk)
        return G.T @ C @ G + G.T @ M @ Gd

    def christoffel(self, q, bk=None):
        """Γ̄[:, :, k] = C̄(q, e_k): C̄ is linear in v (C(q, Gv) and Ġ(q, v) both are)."""
        bk = _numeric(bk)
        n = self.nv
        Gamma = bk.zeros((n, n, n))
        for k in range(n):
            Gamma[:, :, k] = self.coriolis_matrix(q, np.eye(n)[k], bk)
        return Gamma

    def inverse_dynamics(self, q, v, a, bk=None, gravity=None):
        from .algorithms.rnea import rnea

        bk = _numeric(bk)
        G, Gd = self.embedding(q, v, bk)
        return G.T @ rnea(self.tree, q, G @ v, G @ a + Gd @ v, bk, **_gravity(gravity))

    def gravity(self, q, bk=None, gravity=None):
        n = self.nv
        return self.inverse_dynamics(q, np.zeros(n), np.zeros(n), bk, gravity)

    def regressor(self, q, v, v_r, a_r, bk=None, gravity=None):
        from .algorithms.regressor import regressor

        bk = _numeric(bk)
        G, Gd = self.embedding(q, v, bk)
        return G.T @ regressor(self.tree, q, G @ v, G @ v_r, G @ a_r + Gd @ v_r, bk, **_gravity(gravity))

    def forward_dynamics(self, q, v, tau, gravity=None):
        """ā solving M̄ ā = τ̄ - GᵀRNEA(q, Gv, Ġv) (dense: the loops couple the cluster)."""
        bias = self.inverse_dynamics(q, v, np.zeros(self.nv), None, gravity)
        return np.linalg.solve(self.mass_matrix(q), np.asarray(tau, dtype=float) - bias)


def _gravity(gravity):
    return {} if gravity is None else {"gravity": tuple(float(x) for x in gravity)}


def _numeric(bk):
    if bk is None:
        from .backend import NUMERIC

        return NUMERIC
    return bk


def bk_array(x, bk):
    return np.asarray(x, dtype=float) if getattr(bk, "name", "") != "symbolic" else x


def _clusters(closures):
    """Groups of closures that share joints: per group ([(closure index, row of phi)], joints)."""
    groups, first = [], 0
    for k, c in enumerate(closures):
        rows = [(k, first + r) for r in range(len(c.P))]
        first += len(c.P)
        joints = set(c.pred_path) | set(c.succ_path)
        for g in [g for g in groups if g[1] & joints]:
            rows, joints = g[0] + rows, g[1] | joints
            groups.remove(g)
        groups.append((rows, joints))
    return groups


def _draw(tree, rng):
    """A random configuration of the spanning tree: its joints' angles uniform in [0, 2 pi), a
    free-flyer at the origin (the loops do not depend on its pose)."""
    q = rng.uniform(0, 2 * np.pi, tree.nq)
    if tree.floating_base:
        q[:7] = (0, 0, 0, 0, 0, 0, 1)
    return q


# ------------------------------------------------------------------------------------ reading

def closure_jacobian(tree, closures, q, bk=None):
    """K = d phi / d(spanning speeds) of ``closures`` on ``tree`` at q, before any joint is chosen
    dependent (what the rows and the dependent joints are picked from)."""
    probe = LoopSystem.__new__(LoopSystem)              # phi and K need the tree and the closures only
    probe.tree, probe.closures = tree, tuple(closures)
    return probe.constraint_jacobian(q, bk)


def closed_system(tree, loops, dependent, error, closures=None, nominal=()) -> LoopSystem:
    """The :class:`LoopSystem` of the spanning tree ``tree`` closed by the URDF+ ``loops``
    (:class:`symgen.urdf.plus.Loop`), ``dependent`` the joint names marked independent="false";
    ``error(element, reason)`` the exception for what cannot be embedded; ``closures``: those of
    :func:`closures_of`, when the caller has them already; ``nominal``: closed configurations the
    file gives (:class:`LoopSystem`)."""
    closures = closures_of(tree, loops, error) if closures is None else closures
    index = {b.joint_name: i for i, b in enumerate(tree.bodies) if not tree.in_group(i)}
    try:
        return LoopSystem(tree, closures, {index[name] for name in dependent if name in index}, nominal)
    except ModelError as exc:
        raise error(f"<loop name={loops[0].name!r}>", str(exc).split(": ", 1)[-1]) from None


def closures_of(tree, loops, error) -> list:
    """The :class:`Closure` of each loop (its points, paths and rows), as :func:`closed_system` reads
    them (a hook for readers that choose the dependent joints themselves: :mod:`symgen.mjcf_loops`)."""
    for b in tree.bodies[tree.free:]:
        if b.group or b.joint_type not in ("revolute", "continuous", "prismatic"):
            raise error(f"<joint name={b.joint_name!r}>", "loops embed single-DoF joints only")
    links = {f.name: f for f in tree.frames if f.kind == "link"}
    closures = []
    for loop in loops:
        ends = []
        weld = loop.type == "weld"                  # the two frames coincide: translation and rotation rows
        for link, (turn, t) in ((loop.predecessor, loop.predecessor_origin), (loop.successor, loop.successor_origin)):
            f = links[link]
            if f.body < 0 and tree.free:                # (a free-flyer's world is not the tree's root)
                raise error(f"<loop name={loop.name!r}>", f"link {link!r} is fixed to the world: with a free-flyer, "
                            f"pin the loop to a moving link")
            point = np.asarray(f.rotation) @ np.asarray(t) + np.asarray(f.translation)
            rotation = as_mat3(np.asarray(f.rotation) @ np.asarray(turn, dtype=float)) if weld else f.rotation
            ends.append(Frame(f"{loop.name}:{link}", "point", f.body, rotation, tuple(float(x) for x in point)))
        if ends[0].body < 0 and ends[1].body < 0:
            raise error(f"<loop name={loop.name!r}>", f"links {loop.predecessor!r} and {loop.successor!r} are both "
                        f"fixed to the root: pin the loop to a moving link")
        up_p, up_s = _path(tree, ends[0].body), _path(tree, ends[1].body)
        ancestor = next((b for b in up_p if b in set(up_s)), -1)
        closure = Closure(loop.name, ends[0], ends[1], ancestor, _below(up_p, ancestor), _below(up_s, ancestor),
                          np.eye(6 if weld else 3))
        closures.append(_with_rows(tree, closure, error))
    return closures


def _path(tree, b):
    return list(tree.ancestors(b)) if b >= 0 else []


def _below(path, ancestor) -> tuple[int, ...]:
    """The bodies of ``path`` (nearest first) below ``ancestor``: the joints of that side of the loop."""
    return tuple(path[:path.index(ancestor)] if ancestor in path else path)


def _with_rows(tree, closure: Closure, error) -> Closure:
    """The closure with P: its rows (translation; of a weld, translation and rotation) that depend on
    q (rank of K over a few configurations), coordinate rows when they span them, else an
    orthonormal basis."""
    from dataclasses import replace

    rng = np.random.default_rng(0)
    stack = np.hstack([closure_jacobian(tree, (closure,), _draw(tree, rng)) for _ in range(4)])
    U, s, _ = np.linalg.svd(stack)
    rank = int(np.sum(s > _RANK_TOL * max(1.0, s[0])))
    if rank == 0:
        raise error(f"<loop name={closure.name!r}>", "no joint moves its two points apart: nothing to close")
    live = [i for i in range(len(stack)) if np.max(np.abs(stack[i])) > _RANK_TOL * max(1.0, s[0])]
    P = np.eye(len(stack))[live] if len(live) == rank else U[:, :rank].T
    return replace(closure, P=P)
