"""The Slotine-Li regressor Y(q, qd, qd_r, qdd_r), with Y theta = M qdd_r + C(q, qd) qd_r + g:
Wensing & Slotine, Appendix B-A (the body-level regressor and the blocks Y_ij).

The spatial inertia is linear in the body's ten inertial parameters, I(theta) = sum_k theta_k E_k,
in Pinocchio's ``Inertia.toDynamicParameters`` order

    theta = [m, m c_x, m c_y, m c_z, I_xx, I_xy, I_yy, I_xz, I_yz, I_zz]

(I about the body frame's origin, in its axes; the body frame is the URDF joint frame). So the
body-level regressor, whose columns are d f / d theta_k for f = I a + B(v, I) w (Algorithm 3,
line 8), is

    Y_body[:, k] = E_k a + B(v, E_k) w                    (B of eq. (10) is linear in I)

and the block relating joint i to body j is Y_ij = Phi_i^T jX_i^T Y_body_j for i an ancestor of j
(i = j included), zero otherwise: Y is block upper-triangular by the tree, and its structural
zeros are exact zeros.
"""
from __future__ import annotations

import numpy as np

from ..axisymmetric import turns
from ..model import GRAVITY
from ..spatial import cross, factor_B, skew
from .rnea import _motion_down
from .slotine_li import reference_sweep

PARAMETER_NAMES = ("m", "mc_x", "mc_y", "mc_z", "I_xx", "I_xy", "I_yy", "I_xz", "I_yz", "I_zz")
_ROTATIONAL = ((0, 0), (0, 1), (1, 1), (0, 2), (1, 2), (2, 2))        # I_xx, I_xy, I_yy, I_xz, I_yz, I_zz


def inertia_basis() -> tuple[np.ndarray, ...]:
    """E_0..E_9, constant 6x6 arrays with I(theta) = sum_k theta_k E_k."""
    basis = []
    E = np.zeros((6, 6))
    E[3:, 3:] = np.eye(3)
    basis.append(E)                                                   # m
    for axis in range(3):                                             # m c: [[0, S(h)], [S(h)^T, 0]]
        E = np.zeros((6, 6))
        S = skew(np.eye(3)[axis])
        E[:3, 3:], E[3:, :3] = S, S.T
        basis.append(E)
    for r, c in _ROTATIONAL:                                          # rotational inertia about the origin
        E = np.zeros((6, 6))
        E[r, c] = E[c, r] = 1.0
        basis.append(E)
    return tuple(basis)


def parameters(inertia) -> np.ndarray:
    """theta of one body (:class:`~symgen.model.Inertia`: mass, CoM, inertia about the CoM)."""
    m, c = float(inertia.mass), np.array(inertia.com, dtype=float)
    I_origin = np.array(inertia.I_com, dtype=float) + m * (c @ c * np.eye(3) - np.outer(c, c))
    return np.array([m, *(m * c), *(I_origin[r, k] for r, k in _ROTATIONAL)])


def robot_parameters(robot) -> np.ndarray:
    """theta of every body, 10 per body in ``robot.link_names`` order: Y @ theta = slotine_li."""
    return (np.concatenate([parameters(robot.bodies[i].inertia) for i in robot.inertial_bodies])
            if robot.bodies else np.zeros(0))


def body_regressor(a, v, w, bk, name=None, body=None) -> np.ndarray:
    """6x10: column k = E_k a + B(v, E_k) w, in closed form. With r the angular part of w, o that
    of v and p_ij = r_i o_j, its 60 entries take 22 distinct values up to sign: c = a_lin + r x
    v_lin, al +- p_ij, the halves (p_ij + p_ji) / 2 and al + (p_ij - p_ji) / 2, and sums and
    differences of the p_ii (the velocity part of v and the linear part of w do not enter).
    ``name``: on symbols, the nine products and each distinct value are named once
    (``{name}p{i}{j}``, ...), about 48 operations a body where the sum over the E_k took 105."""
    def bind(x, tag):
        return bk.bind(x, f"{name}{tag}", body) if name else x

    al, r, o = a[:3], w[:3], v[:3]
    p = [[bind(r[i] * o[j], f"p{i}{j}") for j in range(3)] for i in range(3)]
    c = bind(a[3:] + cross(r, v[3:], bk), "c")
    h = {(i, j): bind(bk.half * p[i][j] + bk.half * p[j][i], f"h{i}{j}")       # a sum: named (half x a temp is not)
         for i, j in ((0, 1), (0, 2), (1, 2))}
    skew = [bind(al[k] + bk.half * bind(p[i][j] - p[j][i], f"d{i}{j}"), f"k{k}")
            for k, (i, j) in enumerate(((1, 2), (2, 0), (0, 1)))]      # al + (r x o) / 2
    e = {key: bind(al[k] + sign * p[i][j], f"e{i}{j}")                  # al_k +- p_ij
         for key, k, sign, i, j in (("a2p01", 2, 1, 0, 1), ("a0p12", 0, 1, 1, 2), ("a1p20", 1, 1, 2, 0),
                                    ("a2m10", 2, -1, 1, 0), ("a0m21", 0, -1, 2, 1), ("a1m02", 1, -1, 0, 2))}
    Y = bk.zeros((6, 10))
    Y[3:, 0] = c                                                        # m
    Y[1, 1], Y[2, 1], Y[3, 1] = -c[2], c[1], -bind(p[1][1] + p[2][2], "n0")  # m c_x
    Y[4, 1], Y[5, 1] = e["a2p01"], -e["a1m02"]
    Y[0, 2], Y[2, 2], Y[3, 2] = c[2], -c[0], -e["a2m10"]                # m c_y
    Y[4, 2], Y[5, 2] = -bind(p[0][0] + p[2][2], "n1"), e["a0p12"]
    Y[0, 3], Y[1, 3], Y[3, 3] = -c[1], c[0], e["a1p20"]                 # m c_z
    Y[4, 3], Y[5, 3] = -e["a0m21"], -bind(p[0][0] + p[1][1], "n2")
    Y[:3, 4] = skew[0], h[0, 2], -h[0, 1]                               # I_xx
    Y[:3, 5] = e["a1m02"], e["a0p12"], bind(p[0][0] - p[1][1], "t2")     # I_xy
    Y[:3, 6] = -h[1, 2], skew[1], h[0, 1]                               # I_yy
    Y[:3, 7] = e["a2p01"], bind(p[2][2] - p[0][0], "t1"), e["a0m21"]     # I_xz
    Y[:3, 8] = bind(p[1][1] - p[2][2], "t0"), e["a2m10"], e["a1p20"]     # I_yz
    Y[:3, 9] = h[1, 2], -h[0, 2], skew[2]                               # I_zz
    return Y


def body_regressor_from_basis(a, v, w, bk) -> np.ndarray:
    """The same 6x10 as :func:`body_regressor`, from its definition: column k = E_k a + B(v, E_k) w
    (the reference the closed form is tested against)."""
    Y = bk.zeros((6, 10))
    for k, E in enumerate(inertia_basis()):
        E = bk.const(E)
        Y[:, k] = E @ a + factor_B(v, E, bk) @ w
    return Y


def inertia_regressor(x, bk) -> np.ndarray:
    """6x10: the body-level regressor with no velocity, Y_i(x, 0, 0) of Algorithm 4 (lines 10-11):
    column k = E_k x, so that I(theta) x = Y_i(x, 0, 0) theta (x: a body's velocity gives its
    momentum's regressor H_i, the gravity acceleration gives G_i)."""
    Y = bk.zeros((6, 10))
    for k, E in enumerate(inertia_basis()):
        Y[:, k] = bk.const(E) @ x
    return Y


def regressor(robot, q, qd, qd_r, qdd_r, bk, gravity=GRAVITY):
    """Y, (n, 10 links): columns 10 k .. 10 k + 9 belong to the k-th link of ``robot.link_names``
    (body j = ``robot.inertial_bodies[k]``; a free-flyer's massless intermediate bodies have no columns)."""
    n, bodies = robot.n, robot.inertial_bodies
    Xup, Phi, v, w, a = reference_sweep(robot, q, qd, qd_r, qdd_r, bk, gravity)
    Y = bk.zeros((n, 10 * len(bodies)))
    for k, j in enumerate(bodies):
        U = bk.bind(body_regressor(a[j], v[j], w[j], bk, f"Yb{j}", j), f"Yb{j}", j)  # line 8, d f_j / d theta_j
        for i, Ui in ancestor_blocks(robot, Xup, j, U, bk, "Yb"):
            Y[i, 10 * k:10 * k + 10] = Phi[i] @ Ui                     # Y_ij = Phi_i^T jX_i^T Y_body_j
    return Y


def regressor_local(robot, q, qd, qd_r, qdd_r, bk, gravity=GRAVITY):
    """The same Y with every block taken in body j's own frame: Y_ij = (jX_i Phi_i) . U_j, each
    ancestor's subspace carried down the tree one joint at a time (:func:`subspace_in`) where
    :func:`regressor` carries the 6 x 10 block up and :func:`regressor_ground` turns it to ground
    coordinates. A carried subspace costs one motion transform a (ancestor, body) pair, and no
    ground kinematics, force transform or turn of U to the world is needed: on shallow trees with
    general axes the cheapest (tree20: 11,887 operations against the ground walk's 16,790)."""
    Xup, Phi, v, w, a = reference_sweep(robot, q, qd, qd_r, qdd_r, bk, gravity,     # lines 1-6, each motion
                                        carry=lambda X, i, m, name: carry_motion(robot, X, i, m, bk, name))
    carried = {}
    Y = bk.zeros((robot.n, 10 * len(robot.inertial_bodies)))
    for c, j in enumerate(robot.inertial_bodies):
        U = bk.bind(body_regressor(a[j], v[j], w[j], bk, f"Yb{j}", j), f"Yb{j}", j)  # line 8, body j's frame
        N = rotational_moments(U, bk, f"Yn{j}", j)        # the six rotational columns: a row run each
        for i in robot.ancestors(j):
            S = subspace_in(robot, Xup, Phi, i, j, carried, bk)
            Y[i, 10 * c:10 * c + 4] = S @ U[:, :4]
            Y[i, 10 * c + 4:10 * c + 10] = S[:3] @ N
    return Y


#: :func:`regressor_local` is built for fixed-base robots with no body deeper than this many
#: joints, where it wins in time too (CPU time a call, -O3 -march=native:
#: tree20 1.73 -> 1.35 us, panda 0.49 -> 0.40, serial10 1.16 -> 0.98, ur5 0.188 -> 0.110); deeper,
#: the ground walk's rows, one loop each along the whole row (Phi_i shared by every descendant),
#: pay more than the operations it saves (serial20: 24,861 operations against 27,373, but 3.08 us
#: against 2.16)
LOCAL_WALK_DEPTH = 10


def local_walk_pays(robot) -> bool:
    """Whether a build may take :func:`regressor_local`: no body deeper than :data:`LOCAL_WALK_DEPTH`
    and no free-flyer (whose six columns, coordinate axes in ground coordinates, the local walk
    carries to every body: solo12 4,518 operations against 4,546 but 0.80 us against 0.79)."""
    return (not any(robot.is_free(i) for i in range(robot.n))
            and all(len(robot.ancestors(j)) <= LOCAL_WALK_DEPTH for j in robot.inertial_bodies))


def carry_motion(robot, Xup, i, m, bk, name):
    """iX_p(i) m for a motion vector m of body i's parent: for a revolute joint, whose transform is
    [E 0; -E (r x) E] with r its constant origin in the parent, as [E w; E (l - r x w)] (27
    operations for the lower half where the 6 x 6 product takes 33, and -E (r x) never formed);
    else the product with Xup[i] (the RNEA's :func:`~.rnea._motion_down`, a joint that does not turn
    its body kept whole). ``l - r x w`` is named ``{name}``."""
    if not turns(robot, i):
        return Xup[i] @ m
    return _motion_down(robot, Xup, i, m, bk, name)


def subspace_in(robot, Xup, Phi, i, j, carried, bk):
    """Phi_i expressed in body j's frame (i an ancestor of j or j itself): jX_k ... Phi_i, one
    motion transform a step from i down to j, each pair named once in ``carried`` (``YS{i}_{j}``)."""
    if (i, j) not in carried:
        carried[i, j] = (Phi[i] if i == j else bk.bind(
            carry_motion(robot, Xup, j, subspace_in(robot, Xup, Phi, i, robot.parent[j], carried, bk), bk, f"YSt{i}_{j}"),
            f"YS{i}_{j}", j))
    return carried[i, j]


def ancestor_blocks(robot, Xup, j, U, bk, name):
    """(i, jX_i^T U) for i = j and then each ancestor of j, U (6 x 10) given in body j's frame:
    the inner loop of Algorithm 4 (lines 16-23; Algorithm 3, line 13, for Y), carrying a body's
    block to its parent's frame one joint at a time (named ``{name}{j}_{i}``)."""
    i = j
    while True:
        yield i, U
        p = robot.parent[i]
        if p < 0:
            return
        U = bk.bind(Xup[i].T @ U, f"{name}{j}_{p}", j)                  # to the parent's frame
        i = p


def regressor_ground(robot, q, qd, qd_r, qdd_r, bk, gravity=GRAVITY):
    """The same Y with each body's block carried to ground coordinates once, about the base
    origin (F_j = X_0j^* Y_body_j: forces f' = oR f, moments n' = oR n + op x f'), after which
    Y_ij = Phi_i^T F_j is one dot product per ancestor i (Phi_i in ground coordinates): one force
    transform per body instead of one per (body, ancestor) pair. Fewer operations on deep trees
    (serial 20: 27,655 against 67,509), more on shallow ones (panda: 4,551 against 3,729), so a
    build prints whichever is cheaper (``Sweep.variants``)."""
    from .frames import ground_bodies

    n = robot.n
    Xup, Phib, v, w, a = reference_sweep(robot, q, qd, qd_r, qdd_r, bk, gravity)
    R, p = ground_bodies(robot, q, bk)                      # turned frames: z is the joint axis
    Phi = ground_subspaces(robot, R, p, bk)
    axes = {}
    Y = bk.zeros((n, 10 * len(robot.inertial_bodies)))
    for c, j in enumerate(robot.inertial_bodies):
        U = bk.bind(body_regressor(a[j], v[j], w[j], bk, f"Yb{j}", j), f"Yb{j}", j)  # line 8, body j's frame
        chain = robot.ancestors(j)
        local = len(chain) <= LOCAL_DEPTH and not any(robot.is_free(i) for i in chain)
        F = to_ground(robot, U, R, p, j, bk, "Y", 4 if local else 10)
        if local:                                          # no force: Y_ij = (jX_i Phi_i)_angular . n_j
            N = rotational_moments(U, bk, f"Yn{j}", j)
        for i in chain:
            if local:
                Y[i, 10 * c:10 * c + 4] = Phi[i] @ F[:, :4]
                Y[i, 10 * c + 4:10 * c + 10] = axis_in(robot, Xup, Phib, i, j, axes, bk) @ N
            else:
                Y[i, 10 * c:10 * c + 10] = Phi[i] @ F                           # Y_ij = Phi_i^T F_j
    return Y


#: the regressor's ground walk takes the six rotational-inertia columns of a body with at most this
#: many joints on its path to the root (itself included) in the body's own frame: the angular part
#: of Phi_i carried down to body j costs 15 operations a pair, against 90 a body for turning the six
#: moments to ground coordinates (the dot products cost the same either way)
LOCAL_DEPTH = 6


def axis_in(robot, Xup, Phib, i, j, axes, bk):
    """The angular part of Phi_i expressed in body j's frame (i an ancestor of j or j itself):
    E_j ... E_k (angular Phi_i), one rotation a step from i down to j, each pair named once in
    ``axes`` (``Yx{i}_{j}``)."""
    if (i, j) not in axes:
        axes[i, j] = (Phib[i][:3] if i == j else
                      bk.bind(Xup[j][:3, :3] @ axis_in(robot, Xup, Phib, i, robot.parent[j], axes, bk), f"Yx{i}_{j}", j))
    return axes[i, j]


def rotational_moments(U, bk, name, body):
    """The moments of a body regressor's six rotational columns (U[:3, 4:]), each entry a temp of
    its own (a negated one named too: a row of Y is then one dot product over six named temps,
    which the printer makes a vectorized loop)."""
    N = bk.zeros((3, 6))
    for r in range(3):
        for k in range(6):
            N[r, k] = bk.bind_always(U[r, 4 + k], f"{name}_{r}_{k}", body)     # on numbers: the identity
    return N


def ground_subspaces(robot, R, p, bk) -> list:
    """Phi_i in ground coordinates from the turned frames' placements (R, p) of
    :func:`~symgen.algorithms.frames.ground_bodies`: [a; p x a] (revolute), [0; a] (prismatic)."""
    from .frames import joint_axis

    Phi = []
    for i, body in enumerate(robot.bodies):
        axis, S = joint_axis(robot, R, i), bk.zeros(6)
        if body.joint_type == "prismatic":
            S[3:] = axis
        else:
            S[:3], S[3:] = axis, bk.bind(cross(p[i], axis, bk), f"Phi{i}", i)
        Phi.append(S)
    return Phi


def to_ground(robot, U, R, p, j, bk, name, columns=10):
    """A 6 x 10 block of forces in body j's (URDF) frame carried to ground coordinates about the
    base origin, X_0j^* U: forces f' = oR f, moments n' = oR n + op x f' (named ``{name}f``,
    ``{name}g``); only its first ``columns`` columns (the others zero)."""
    oR = bk.bind(R[j] @ bk.const(robot.z_turns[j].T), f"oRb{j}", j)              # its URDF axes in the world
    F = bk.zeros((6, 10))
    F[3:, :columns] = bk.bind(oR @ U[3:, :columns], f"{name}f{j}", j)
    for k in range(columns):
        F[:3, k] = oR @ U[:3, k] + cross(p[j], F[3:, k], bk)
    return bk.bind(F, f"{name}g{j}", j)
