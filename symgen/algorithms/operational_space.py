"""Operational-space dynamics of a frame (Khatib, "A unified approach for motion and force control
of robot manipulators: the operational space formulation", IEEE J. Robotics and Automation 3(1),
1987): with x the frame's motion (J its Jacobian, LOCAL_WORLD_ALIGNED, rows [linear; angular]),
M qdd + b = tau (b = C v + g) seen at the frame is

    Lambda xdd + mu + p = F,        Lambda = (J M^-1 J^T)^-1          the operational-space inertia
                                    mu + p = Lambda (J M^-1 b - J_dot v)    its Coriolis and gravity
                                    Jbar   = M^-1 J^T Lambda          the dynamically consistent inverse

(xdd = J qdd + J_dot v; Khatib's mu and p are the C v and g parts of the bias). Jbar^T is the
generalized inverse of J^T that M^-1 weighs (J Jbar = 1): the force at the frame that joint forces
tau are worth is F = Jbar^T tau = Lambda J M^-1 tau (the Jacobian-transpose map tau = J^T F inverted
dynamically consistently, where a pseudo-inverse of J^T would weigh every joint alike; for the
gravity part, p = Jbar^T g). A point frame (``--frames name=LINK@x,y,z``) has a 3-row task, its
linear velocity: Lambda is 3x3.

Through the tree-sparse factors M = L^T D L (:mod:`.forward_dynamics`, Featherstone's Sec. 6.3),
never forming M^-1: Y = L^-T J^T (back substitution, leaves first; zero outside the frame's
ancestors) and W = D^-1 Y, so that

    J M^-1 J^T = Y^T D^-1 Y = W^T Y,     J M^-1 u = W^T (L^-T u),     M^-1 J^T Lambda = L^-1 (W Lambda)

(the contact terms' Schur complement, :mod:`.contact`). The d x d matrix Lambda^-1 (d = 3 or 6)
is factored by the same L^T D L on a chain and inverted from its factors, exactly symmetric.

Singular configurations. Generated code is straight-line and cannot raise, so Lambda is damped:

    Lambda = (J M^-1 J^T + eps 1)^-1          (eps: ``damping``, ``--opspace-damping``, 1e-8 by default)

in the units of J M^-1 J^T (1/kg on the linear rows, 1/(kg m^2) on the angular ones). Away from a
singularity this moves Lambda by about eps |Lambda| relative (J Jbar = 1 - eps Lambda exactly); at
one, Lambda grows like 1/eps along the direction the joints cannot move and every output stays
finite (a frame no joint moves: Lambda = 1/eps). With ``damping`` 0 the outputs are Khatib's exact
ones; at a singular configuration the pivot of Lambda^-1 is then round-off, and Lambda, Jbar and
the bias are huge, inf or NaN. A frame whose J M^-1 J^T is singular at every configuration (on the
fixed root, or a row no joint moves, e.g. a planar chain's out-of-plane rows) is refused without
damping.
"""
from __future__ import annotations

from ..errors import OptionError
from ..model import GRAVITY
from .contact import CRBA, ROWS, back_substitute
from .forward_dynamics import inverse_from_factors, ltdl
from .frame_motion import frame_motion
from .frames import frame_kinematics_ground
from .rnea import rnea, rnea_local

#: eps of Lambda = (J M^-1 J^T + eps 1)^-1 unless a build asks for another (``--opspace-damping``)
DAMPING = 1e-8
#: the block every frame's outputs fill: a point's 3x3 Lambda is its top-left corner (linear rows)
SIZE = 6


def task_rows(frame) -> tuple[int, ...]:
    """The rows of J that are a frame's task: a point's linear velocity, a frame's whole twist."""
    return ROWS["3d" if frame.kind == "point" else "6d"]


def _task_space(robot, q, frames, bk, mass, damping):
    """(L, Dinv of M = L^T D L, per frame (rows, W = D^-1 L^-T J_rows^T as d lists of n, Lambda (d, d)))."""
    n, parent = robot.n, robot.parent
    L, Dinv = ltdl(CRBA[mass](robot, q, bk), parent, bk)
    _, J = frame_kinematics_ground(robot, q, frames, bk)
    zero, eps = 0 * Dinv[0], bk.number(float(damping))
    tasks = []
    for k, f in enumerate(frames):
        rows = task_rows(f)
        d = len(rows)
        Y = [back_substitute(L, parent, J[k, r], bk, f"Y{k}_{r}_") for r in rows]    # L^-T J^T, row by row
        W = [[bk.bind(Y[a][i] * Dinv[i], f"W{k}_{a}_{i}", i) for i in range(n)] for a in range(d)]
        Linv = bk.zeros((d, d))                                        # Lambda^-1 = W^T Y + eps 1
        for a in range(d):
            for c in range(a, d):
                Linv[a, c] = Linv[c, a] = sum((W[a][i] * Y[c][i] for i in range(n)), start=zero)
            Linv[a, a] = Linv[a, a] + eps
        if not damping and any(Linv[a, a] == 0 for a in range(d)):
            raise OptionError(f"--opspace-damping 0: frame {f.name!r} has a task row no joint moves "
                              f"(J M^-1 J^T singular at every configuration); give it a damping > 0")
        chain = tuple(range(-1, d - 1))                                # a dense d x d: L^T D L on a chain
        at = max(f.body, 0)                                            # the comments name the frame's body
        Lf, Df = ltdl(Linv, chain, bk, body=at)
        tasks.append((rows, W, inverse_from_factors(Lf, Df, chain, bk, body=at)))
    return L, Dinv, tasks


def _forward_substitute(L, parent, y, bk, name):
    """x = L^-1 y (Table 6.4's last step: root first)."""
    x = list(y)
    for i in range(len(parent)):
        j = parent[i]
        while j >= 0:
            x[i] = x[i] - L[i, j] * x[j]
            j = parent[j]
        x[i] = bk.bind(x[i], f"{name}{i}", i)
    return x


def _at_frame(W, z, zero):
    """J M^-1 u = W^T z for z = L^-T u: one entry per task row."""
    return [sum((w[i] * z[i] for i in range(len(z))), start=zero) for w in W]


def operational_space_inertia(robot, q, frames, bk, mass="body", damping=DAMPING):
    """``{"Lambda": (F, 6, 6), "Jbar": (F, n, 6)}``: each frame's Lambda and Jbar = M^-1 J^T Lambda
    (a point's in Lambda[:3, :3] and Jbar[:, :3], the rest zero); M by the CRBA of ``mass``
    (ground, body or local coordinates)."""
    L, _, tasks = _task_space(robot, q, frames, bk, mass, damping)
    F, n = len(frames), robot.n
    Lam, Jbar = bk.zeros((F, SIZE, SIZE)), bk.zeros((F, n, SIZE))
    for k, (rows, W, Lk) in enumerate(tasks):
        d = len(rows)
        Lam[k, :d, :d] = Lk
        for c in range(d):                                             # column c of L^-1 (W Lambda)
            u = [sum((W[a][i] * Lk[a, c] for a in range(d)), start=0 * Lk[0, 0]) for i in range(n)]
            x = _forward_substitute(L, robot.parent, u, bk, f"Jbar{k}_{c}_")
            for i in range(n):
                Jbar[k, i, c] = x[i]
    return {"Lambda": Lam, "Jbar": Jbar}


def operational_space_bias(robot, q, qd, frames, bk, mass="body", damping=DAMPING, gravity=GRAVITY):
    """``{"mu_p": (F, 6)}``: mu + p = Lambda (J M^-1 b - J_dot v) of each frame (a point's in its
    first 3 entries), b = C v + g by the RNEA at zero acceleration in the CRBA's convention, J_dot v
    the classical drift of :mod:`.frame_motion`."""
    L, Dinv, tasks = _task_space(robot, q, frames, bk, mass, damping)
    bias = (rnea_local if mass == "local" else rnea)(robot, q, qd, bk.zeros(robot.n), bk, gravity=gravity)
    z = back_substitute(L, robot.parent, bias, bk, "zb")
    af = frame_motion(robot, q, qd, frames, bk)["af"]
    out = bk.zeros((len(frames), SIZE))
    for k, (rows, W, Lk) in enumerate(tasks):
        h = [bk.bind(e - af[k, r], f"h{k}_{r}", max(frames[k].body, 0)) for e, r in zip(_at_frame(W, z, 0 * Dinv[0]), rows)]
        out[k, :len(rows)] = _times(Lk, h)
    return {"mu_p": out}


def frame_force_from_torque(robot, q, tau, frames, bk, mass="body", damping=DAMPING):
    """``{"f_tau": (F, 6)}``: F = Jbar^T tau = Lambda J M^-1 tau of each frame (a point's in its first 3
    entries): the force at the frame that the joint forces tau are worth."""
    L, Dinv, tasks = _task_space(robot, q, frames, bk, mass, damping)
    z = back_substitute(L, robot.parent, tau, bk, "zt")
    out = bk.zeros((len(frames), SIZE))
    for k, (rows, W, Lk) in enumerate(tasks):
        out[k, :len(rows)] = _times(Lk, _at_frame(W, z, 0 * Dinv[0]))
    return {"f_tau": out}


def _times(A, x):
    """A x for a d x d array and a list of d entries."""
    d = len(x)
    return [sum((A[a, c] * x[c] for c in range(d)), start=0 * A[0, 0]) for a in range(d)]
