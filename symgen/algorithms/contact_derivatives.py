"""Contact dynamics derivatives, the part fixed at build time (Pinocchio's
computeConstraintDynamicsDerivatives with CONTACT_3D / CONTACT_6D constraints, LOCAL_WORLD_ALIGNED).

At the solution (qdd, lam) of the KKT system of :mod:`.contact`, with
tau_c(q, v, qdd, lam) = ID(q, v, qdd) - Jc(q)^T lam and a_c(q, v, qdd) = Jc(q) qdd + Jc_dot v (the
classical contact acceleration), differentiating [M Jc^T; Jc 0][qdd; -lam] = [tau - b; -gamma] gives,
for each direction u of q (the tangent space, q ⊕ dv), v or tau,

    [M   Jc_a^T] [ d qdd ]   [ r1 ]      r1 = -d tau_c/du (+ 1 for tau),  r2 = -d a_c/du
    [Jc_a  0   ] [-d lam ] = [ r2 ],     so  K_a d lam_a = r2_a - Jc_a M^-1 r1,
                                             d qdd = M^-1 (r1 + Jc_a^T d lam_a).

Only the K_a solve depends on the run-time active set; everything else is generated here over
*every* contact row, at the run-time (qdd, lam) the package's solve found (lam zero on inactive
rows). lam enters d tau_c/dq linearly, so it is not an input: the code gives, per contact row r,
dJ_r = d(Jc_r^T)/dq and the solve adds sum_r lam_r dJ_r to r1 of q. The outputs:

    Tq = dID/dq (q, v, qdd)     Tv = dID/dv   (n, n)        (D^-1 of M = L^T D L: contact_terms')
    dJ = d(Jc_r^T)/dq = d Jc[r, i] / d q_k, packed: per row r its support x support block (r, i, k)
         (:func:`~.contact.packed_rows`; :func:`unpack_dJ` gives the dense (m, n, n))
    Jc,  Aq = d a_c/dq,  Av = d a_c/dv = d(Jc_dot v)/dv                                (m, n)

M^-1 is never formed: with contact_terms' factors (Lc, L's packed entries, and Wc = D^-1 L^-T Jc^T
transposed, whose rows are zero off the joints that move the contact), each of the three blocks of
n columns is Z = L^-T r1 (tree-sparse, leaves first), d lam_a = K_a^-1 (r2_a - Wc_a Z) (Jc_a M^-1 =
Wc_a L^-T), d qdd = L^-1 (D^-1 Z + Wc_a^T d lam_a) (parents first); the C runs the three blocks side
by side, as rows of 3n. Against X = M^-1 r1 generated as
2n solves plus M^-1, Jc_a X and (M^-1 Jc_a^T) d lam_a dense in the solve, the dense n x n x a
products become products with Wc's support, and the generated code loses the solves (talos: 112,784
operations of its 193,726). dJ is sparse (a foot's rows: its leg's and the base's columns, 612 of
solo12's 3,888 entries): packed, the code writes 972 values on solo12, 1,728 on talos instead of 17,328
(whose zeroing alone was 4 % of the time).

dID/dq, dID/dv are the analytic derivatives of :mod:`.derivatives` (ground coordinates). The contact
kinematics' partials (d Jc/dq, d a_c/dq, d a_c/dv) are closed forms over the same sweep's v, Phid, a
(:mod:`.contact_acceleration_derivatives`, Pinocchio's getFrameAccelerationDerivatives with the classical
term: solo12 28,359 -> 15,462 operations, talos 60,601 -> 47,181, against the route below). With a joint
of several velocities inside the tree (spherical, planar below the root) they are still the chain rule
through the contact rows' own algorithm (:func:`.contact.contact_rows`: frame Jacobians and classical
drift): on symbols, forward mode through the recorded straight-line program (as
:mod:`.baseline_partials`), every temp carrying its nonzero partials only; on numbers, the complex step
through the same algorithm run on complex numbers (exact to rounding: no subtraction; the tests' second
reference). A q direction is a tangent
direction of Pinocchio's integrate: d q / d dv at dv = 0 (:func:`tangent_map`: the identity on
single-DoF joints; a free-flyer's position R(quat), its quaternion 1/2 quat ⊗ (dw, 0)).
"""
from __future__ import annotations

import cmath

import numpy as np

from ..backend import NUMERIC, NumericBackend
from ..model import GRAVITY
from ..kinematics import base_acceleration, ground_frames
from .contact import contact_rows, packed_rows, packed_size
from .contact_acceleration_derivatives import applies, contact_acceleration_partials
from .derivatives import composites, derivative_passes, forward_pass
from .external_forces import ground_forces

#: the complex step (the derivative is Im f(x + i h dx) / h, exact to rounding for any small h)
STEP = 1e-30


def _quaternion_block(x, y, z, w, half):
    """d (x, y, z, w) / d omega (4, 3) of quat ⊗ exp(omega / 2) at omega = 0 (local angular velocity)."""
    return [[half * w, -half * z, half * y],
            [half * z, half * w, -half * x],
            [-half * y, half * x, half * w],
            [-half * x, -half * y, -half * z]]


def tangent_map(robot, q, bk):
    """T (nq, nv) = d integrate(q, dv) / d dv at dv = 0, joint by joint (Pinocchio's q layout)."""
    from ..kinematics import quaternion_matrix

    T = bk.zeros((robot.nq, robot.nv))
    for _, kind, iq, _, iv, _ in robot.joint_layout:
        if kind == "freeflyer":
            T[iq:iq + 3, iv:iv + 3] = quaternion_matrix(*q[iq + 3:iq + 7], bk, "tR")  # position moves in the base axes
            T[iq + 3:iq + 7, iv + 3:iv + 6] = _quaternion_block(*q[iq + 3:iq + 7], bk.half)
        elif kind == "spherical":
            T[iq:iq + 4, iv:iv + 3] = _quaternion_block(*q[iq:iq + 4], bk.half)
        elif kind == "planar":                          # (x, y, cos, sin), v = (vx, vy, w) in the child frame
            c, s = q[iq + 2], q[iq + 3]
            T[iq, iv], T[iq, iv + 1], T[iq + 1, iv], T[iq + 1, iv + 1] = c, -s, s, c
            T[iq + 2, iv + 2], T[iq + 3, iv + 2] = -s, c
        else:
            T[iq, iv] = bk.number(1.0)
    return T


def contact_kinematics_partials(robot, q, qd, qdd, frames, kinds, bk):
    """(Jc (m, n), dJ (m, n, n) = d Jc[r, i] / d q_k, Aq (m, n) = d a_c / dq, Av (m, n) = d a_c / dv) with
    a_c = Jc qdd + Jc_dot v over every contact row; q derivatives along :func:`tangent_map`."""
    if bk.name == "numeric":
        return _complex_step(robot, q, qd, qdd, frames, kinds)
    return _forward_mode(robot, q, qd, qdd, frames, kinds, bk)


class _ComplexBackend(NumericBackend):
    """The numeric backend on complex numbers (for the complex step)."""

    name = "complex"

    def zeros(self, shape):
        return np.zeros(shape, dtype=complex)

    def const(self, value):
        return np.array(value, dtype=complex)

    def sin(self, x):
        return cmath.sin(x)

    def cos(self, x):
        return cmath.cos(x)


def _complex_step(robot, q, qd, qdd, frames, kinds):
    n, bk = robot.nv, _ComplexBackend()
    q, qd, qdd = (np.asarray(x, dtype=float) for x in (q, qd, qdd))
    T = tangent_map(robot, q, NUMERIC)
    J = contact_rows(robot, q, qd, frames, kinds, NUMERIC)[0]
    m = len(J)
    dJ, Aq, Av = np.zeros((m, n, n)), np.zeros((m, n)), np.zeros((m, n))
    for k in range(n):
        Jc, gamma = contact_rows(robot, q + 1j * STEP * T[:, k], qd.astype(complex), frames, kinds, bk)
        dJ[:, :, k] = Jc.imag / STEP
        Aq[:, k] = (Jc @ qdd + gamma).imag / STEP
        e = np.zeros(n, dtype=complex)
        e[k] = 1j * STEP
        Av[:, k] = contact_rows(robot, q.astype(complex), qd + e, frames, kinds, bk)[1].imag / STEP
    return J, dJ, Aq, Av


def _forward_mode(robot, q, qd, qdd, frames, kinds, bk):
    """Forward mode through the program recorded while the contact rows are traced: each temp's
    nonzero partials {direction: expression} (directions 0..n-1: the q tangent, n..2n-1: qd),
    each named (``bk.bind``), so the code stays straight-line and linear in size."""
    import sympy as sp

    n = robot.nv
    T = tangent_map(robot, q, bk)
    grad = {}                                             # symbol -> {direction: partial}
    for i in range(robot.nq):
        grad[q[i]] = {k: T[i, k] for k in range(n) if T[i, k] != 0}
    for k in range(n):
        grad[qd[k]] = {n + k: sp.S.One}
    Jc, gamma = contact_rows(robot, q, qd, frames, kinds, bk)
    trig = {"sin": lambda x: bk.cos(x), "cos": lambda x: -bk.sin(x)}

    def partials(expr, name, body, directions=None):
        """{direction: d expr / d direction} (named), from the partials of expr's free symbols."""
        expr = sp.sympify(expr)
        terms = {}
        for s in expr.free_symbols:
            g = grad.get(s)
            if not g:
                continue
            if expr.func in (sp.sin, sp.cos) and expr.args[0] == s:
                ds = trig[expr.func.__name__](s)
            else:
                ds = sp.diff(expr, s)
            for d, gd in g.items():
                if directions is None or d in directions:
                    terms.setdefault(d, []).append(ds * gd)
        out = {}
        for d, t in terms.items():
            value = bk.bind(sp.Add(*t), f"{name}_{d}", body)
            if value != 0:
                out[d] = value
        return out

    # the temps the rows read, wherever they were recorded (value numbering and the trig cache hand back
    # temps of earlier runs of the sweep: the CRBA's rotations, sin q), in the order of the record
    index = {sym: k for k, (sym, _, _) in enumerate(bk.assignments)}
    needed, stack = set(), [x for e in (*np.ravel(Jc), *gamma) for x in sp.sympify(e).free_symbols]
    while stack:
        x = stack.pop()
        if x in index and x not in needed:
            needed.add(x)
            stack.extend(bk.assignments[index[x]][1].free_symbols)
    record = [bk.assignments[k] for k in sorted(index[x] for x in needed)]
    for step, (sym, expr, body) in enumerate(record):
        grad[sym] = partials(expr, f"d{sym.name}", body)
        bk.tick(step + 1, len(record))
    m = len(gamma)
    dJ, Aq, Av = bk.zeros((m, n, n)), bk.zeros((m, n)), bk.zeros((m, n))
    qs = range(n)
    for r in range(m):
        for i in range(n):
            for d, value in partials(Jc[r, i], f"dJ{r}_{i}", None, qs).items():
                dJ[r, i, d] = value
        for d, value in partials(gamma[r], f"dgamma{r}", None).items():    # Jc does not depend on v
            if d < n:
                Aq[r, d] = value
            else:
                Av[r, d - n] = value
        for d in qs:                             # d(Jc qdd)/dq from dJ, not Jc differentiated again
            Aq[r, d] = bk.bind(Aq[r, d] + dJ[r, :, d] @ qdd, f"dac{r}_{d}", None)
    return Jc, dJ, Aq, Av


def contact_partials(robot, q, qd, qdd, frames, kinds, bk, gravity=GRAVITY, f_ext=None):
    """``{"Tq", "Tv", "dJ", "Jc", "Aq", "Av"}`` of the module docstring at (q, qd, qdd), over every contact row
    (``frames`` with their ``kinds``, "3d" or "6d"): the ID derivatives unsolved (the package's solve applies
    M^-1 through contact_terms' factors, after the contact terms are added). M's pivots D^-1 come from
    contact_terms, which has them: formed here again from the sweep's composite inertias they cost talos
    8,000 of 47,181 operations. ``f_ext``: external forces on the bodies, in the ID derivatives
    (:mod:`.external_forces`)."""
    Phi, I, R, p = ground_frames(robot, q, bk, placements=True)
    a0 = base_acceleration(robot, q, gravity, bk)
    v, Phid, a, h, f = forward_pass(robot, Phi, I, qd, qdd, bk, a0, ground_forces(robot, R, p, f_ext, bk))
    IC = composites(robot, I, bk, "IC")
    dtau_dq, dtau_dv = derivative_passes(robot, Phi, I, IC, qd, v, Phid, a, h, f, bk, a0)
    if applies(robot):                                  # from the sweep's own quantities
        Jc, dJ, Aq, Av = contact_acceleration_partials(robot, q, frames, kinds, (Phi, v, Phid, a, a0), bk)
    else:                                               # joints with several velocities inside the tree
        Jc, dJ, Aq, Av = contact_kinematics_partials(robot, q, qd, qdd, frames, kinds, bk)
    blocks = packed_rows(robot, frames, kinds)
    packed = bk.zeros(packed_size(blocks))
    for r, (offset, support) in enumerate(blocks):
        if support:
            packed[offset:offset + len(support) ** 2] = dJ[r][np.ix_(support, support)].ravel()
    return {"Tq": dtau_dq, "Tv": dtau_dv, "dJ": packed, "Jc": Jc, "Aq": Aq, "Av": Av}


def unpack_dJ(robot, frames, kinds, packed):
    """contact_partials' packed dJ as the dense (m, n, n) d Jc[r, i] / d q_k."""
    blocks = packed_rows(robot, frames, kinds)
    dJ = np.zeros((len(blocks), robot.nv, robot.nv))
    for r, (offset, support) in enumerate(blocks):
        k = len(support)
        dJ[r][np.ix_(support, support)] = np.reshape(packed[offset:offset + k * k], (k, k))
    return dJ
