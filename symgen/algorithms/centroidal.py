"""Centre of mass and centroidal momentum: Orin, Goswami & Lee (2013), "Centroidal dynamics of a
humanoid robot", and Wensing & Orin (2016), "Improved computation of the humanoid centroidal
dynamics and application for whole-body control" — the centroidal momentum matrix A_G from the
CRBA's composite inertias, never as a product with M.

In ground coordinates (:func:`~symgen.kinematics.ground_frames`: every Phi_j and I_i about the
ground origin O, in ground axes) the spatial momentum of the whole robot about O is

    h_O = sum_i I_i v_i = sum_i I_i sum_{j <= i} Phi_j qd_j = sum_j IC_j Phi_j qd_j,

so column j of the momentum map about O is F_j = IC_j Phi_j, the CRBA's F (Algorithm 1,
line 10) — the same composites, no M. The total inertia IC_tot (the sum of the roots'
composites) gives the mass m, the first moment h = m c and so the CoM c. A force [n; f] (moment
about O, then force) moves to the CoM as [n - c x f; f]; hence

    A_G = [f_j ; n_j - c x f_j] per column (Pinocchio's order: linear, then angular),
    J_com = f_j / m,    I_G = [[m 1, 0], [0, I_O - m (|c|^2 1 - c c^T)]]   (about the CoM).

The momentum's rate at qdd = 0 (Pinocchio's dhg of computeCentroidalMomentumTimeVariation(q, v,
0), which is A_G_dot v) is the sum of RNEA's net body forces without gravity, f_i = I_i a_i +
v_i x* I_i v_i with a_i the accelerations of qdd = 0 (Algorithm 1, lines 1-11): their sum is the
rate of h_O about the fixed point O; about the moving CoM, d/dt (n_O - c x p) = ndot_O - c x pdot,
since cdot x p = cdot x m cdot = 0.

A floating base: ground coordinates are the base frame (the free-flyer's convention, see
:mod:`symgen.kinematics`), so the results are turned to world axes by the base orientation R and
the CoM placed at p_b + R c. The fixed root link's own inertia is not part of the robot (as in
Pinocchio: the universe's inertia does not count in centerOfMass or ccrba).
"""
from __future__ import annotations

from ..kinematics import base_placement, ground_frames
from ..spatial import cross, inertia_times, rotate_symmetric
from .derivatives import composites, forward_pass


def centroidal_map(robot, q, bk):
    """``{"com": (3,), "Jcom": (3, n), "Ag": (6, n), "Ig": (6, 6)}`` at q: the CoM, its
    Jacobian, the centroidal momentum matrix and the composite centroidal inertia, at the CoM
    in world axes, [linear; angular]."""
    n = robot.n
    Phi, I = ground_frames(robot, q, bk)
    IC = composites(robot, I, bk, "IC")
    total = _sum([IC[i] for i in range(n) if robot.parent[i] < 0])      # IC_tot, about O
    m, c, minv = _mass_and_com(total, bk)
    R, pb = base_placement(robot, q, bk) if robot.floating_base else (None, None)
    A = total[:3, :3]                                                   # rotational, about O
    h = bk.bind(c * m, "mc")
    d = bk.bind(h @ c, "mcc")
    Ic = bk.zeros((3, 3))
    for a in range(3):
        for b in range(3):
            Ic[a, b] = A[a, b] + h[a] * c[b] - (d if a == b else 0)    # I_O - m (|c|^2 1 - c c^T)
    Ic = bk.bind(Ic, "IcG")
    Ag, Jcom = bk.zeros((6, n)), bk.zeros((3, n))
    for j in range(n):
        if robot.is_free(j):                                            # IC_j = IC_tot: at the CoM,
            column = _base_column(robot.bodies[j], m, h, Ic, R, bk, j)   # [m e; 0] or [e x h; I_c e]
        else:
            F = bk.bind(inertia_times(IC[j], Phi[j], bk), f"F{j}", j)      # IC_j Phi_j, about O
            column = _at_com(F, c, R, bk, f"Ag{j}", j)
        Ag[:, j] = column
        Jcom[:, j] = column[:3] * minv
    Ig = bk.zeros((6, 6))
    for a in range(3):
        Ig[a, a] = m
    Ig[3:, 3:] = Ic if R is None else rotate_symmetric(R, Ic, bk, "IgR")
    com = c if R is None else bk.bind(pb + R @ c, "com")
    return {"com": com, "Jcom": Jcom, "Ag": Ag, "Ig": Ig}


def centroidal_momentum(robot, q, qd, bk):
    """``{"hg": (6,), "dhg": (6,)}``: h_G = A_G qd and its rate at qdd = 0, A_G_dot qd, at the CoM
    in world axes, [linear; angular]."""
    Phi, I = ground_frames(robot, q, bk)
    zero = bk.zeros(robot.n)
    v, _, _, h, f = forward_pass(robot, Phi, I, qd, zero, bk, bk.zeros(6))   # no gravity, qdd = 0
    hO = bk.bind(_sum(h), "hO")                                         # sum_i I_i v_i
    dhO = bk.bind(_sum(f), "dhO")                                       # sum_i f_i
    _, c, _ = _mass_and_com(_sum(I), bk)
    R = base_placement(robot, q, bk)[0] if robot.floating_base else None
    return {"hg": _at_com(hO, c, R, bk, "hg"), "dhg": _at_com(dhO, c, R, bk, "dhg")}


def _base_column(body, m, h, Ic, R, bk, j):
    """A free-flyer's column of A_G (its composite is the whole robot's): along a base axis e,
    linear [m e; 0] (the momentum of the whole robot translated), angular [e x h; I_c e] (h = m c;
    the moment about the CoM is the centroidal inertia's), turned by R: no shift to the CoM to
    compute, and the exact zeros stay zeros (as in Pinocchio's)."""
    e = bk.const(body.axis)
    out = bk.zeros(6)
    if body.joint_type == "prismatic":
        out[:3] = R @ e * m
    else:
        out[:3], out[3:] = R @ cross(e, h, bk), R @ (Ic @ e)
    return bk.bind(out, f"Ag{j}", j)


def _sum(xs):
    total = xs[0]
    for x in xs[1:]:
        total = total + x
    return total


def _mass_and_com(I, bk):
    """(m, c, 1/m) of a spatial inertia about O: its mass and its centre of mass h / m."""
    m = I[3, 3]
    minv = bk.bind(1 / m, "minv")
    h = bk.zeros(3)
    h[:] = (I[2, 4], I[0, 5], I[1, 3])                                  # I[:3, 3:] = S(m c)
    return m, bk.bind(h * minv, "c"), minv


def _at_com(F, c, R, bk, name, body=None):
    """A force [n; f] about O, moved to the CoM c and laid out [f; n - c x f], turned by R to
    world axes (a floating base; None: ground is the world)."""
    f, nO = F[3:], F[:3]
    out = bk.zeros(6)
    out[:3], out[3:] = f, nO - cross(c, f, bk)
    if R is not None:
        out[:3], out[3:] = R @ out[:3], R @ out[3:]
    return bk.bind(out, name, body)
